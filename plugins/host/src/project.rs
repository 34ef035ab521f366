//! A project's plugins: the folders `kiln.project` lists, built when their sources
//! changed since the last build, and loaded from a private copy.
//!
//! A plugin folder holds one of:
//! - a Rust crate (`Cargo.toml`, `crate-type = ["cdylib"]`): built with
//!   `cargo build --release` into `.kiln/plugins/target`;
//! - C sources (`*.c` at its top): compiled with the system C compiler (`$CC`, else
//!   `cc`) against the `kiln_plugin.h` Kiln writes to `.kiln/plugins/include`;
//! - one built library (`libNAME.so`, `NAME.dll`, `libNAME.dylib`) and no sources.
//!
//! The built library is kept at `.kiln/plugins/p-<folder>/plugin.<suffix>` (see
//! [`private_folder_name`]). Each load copies it to a name of its own first, because the dynamic loader hands back the
//! copy it has open for a path it has seen, with that copy's state: a fresh name is
//! what makes a rebuilt plugin load as new code (hot reload), and lets the build
//! replace the library while the old one is still open.

use kiln_core::fs::Kind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kiln_core::Registry;

use crate::{LoadedPlugin, PluginError};

/// Where Kiln keeps what it builds and loads, below the project root.
const PLUGINS_DIR: &str = kiln_core::own_folder::PLUGINS;

/// The most files looked at for a folder's newest source (a plugin folder holding a
/// whole tree by mistake must not stall every command).
const MAX_SOURCE_FILES: usize = 20_000;

/// Files up to this size are compared by content; bigger ones by size.
const MAX_HASHED_BYTES: u64 = 16 << 20;

/// The most bytes a stamp reads in all; files past it are compared by size (a
/// plugin's sources are a few megabytes; a folder holding a tree by mistake must
/// not stall every command, `kiln plugins` included, which runs without trust).
const MAX_HASHED_TOTAL: u64 = 256 << 20;

/// The file in a C plugin's folder that gives its compiler and linker flags.
pub const C_FLAGS_FILE: &str = "kiln_plugin.json";

/// What [`C_FLAGS_FILE`] holds.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct CFlags {
    /// Given to the compiler before the sources (`-DNAME`, `-O3`).
    cflags: Vec<String>,
    /// Given after the sources (`-lm`, `-L...`).
    ldflags: Vec<String>,
}

/// The largest built library a prebuild copies into the project (a plugin is a
/// few hundred kilobytes; this only bounds what a file planted there can cost).
const MAX_LIBRARY_BYTES: u64 = 256 << 20;

pub use crate::prebuilt::PREBUILT_DIR;

/// What a plugin folder holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A Rust crate: its `Cargo.toml`.
    Cargo(PathBuf),
    /// C sources, compiled together.
    C(Vec<PathBuf>),
    /// A library built elsewhere.
    Library(PathBuf),
}

/// One plugin folder of a project.
#[derive(Debug, Clone)]
pub struct PluginFolder {
    /// As `kiln.project` lists it (`plugins/wind`).
    pub entry: String,
    /// Its path.
    pub folder: PathBuf,
    /// What it holds.
    pub source: PluginSource,
    /// Where its built library is kept.
    pub built: PathBuf,
    root: PathBuf,
}

/// The projects (by root, canonical) whose plugins are built here from their
/// sources wherever this machine can build them, rather than loaded from a library
/// shipped with the project: the user's choice, made once per project (`kiln`'s
/// trust question), told here by [`build_from_sources`].
static FROM_SOURCES: std::sync::RwLock<std::collections::BTreeSet<PathBuf>> =
    std::sync::RwLock::new(std::collections::BTreeSet::new());

/// Says whether the plugins of the project at `root` (canonical) are built here
/// from their sources wherever this machine can build them, rather than loaded
/// from a library shipped with the project ([`PluginFolder::choose`]).
pub fn build_from_sources(root: &Path, yes: bool) {
    let mut set = FROM_SOURCES.write().unwrap_or_else(|e| e.into_inner());
    if yes {
        set.insert(root.to_owned());
    } else {
        set.remove(root);
    }
}

fn builds_from_sources(root: &Path) -> bool {
    (FROM_SOURCES.read().unwrap_or_else(|e| e.into_inner())).contains(root)
}

fn bad(entry: &str, reason: impl Into<String>) -> PluginError {
    PluginError::BadFolder {
        entry: entry.to_owned(),
        reason: reason.into(),
    }
}

fn is_library(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(std::env::consts::DLL_SUFFIX))
}

impl PluginFolder {
    /// Finds what the folder `entry` of the project at `root` (canonical) holds.
    pub fn find(root: &Path, entry: &str) -> Result<PluginFolder, PluginError> {
        let folder = root.join(entry);
        // As Kiln reaches every project file: folder by folder, never through a link.
        if kiln_core::fs::goes_through_link(root, Path::new(entry)) {
            return Err(bad(
                entry,
                "it goes through a symbolic link, which Kiln does not follow",
            ));
        }
        match kiln_core::fs::kind_below(root, entry) {
            Some((Kind::Folder, _)) => {}
            Some(_) => return Err(bad(entry, "it is not a folder")),
            None => return Err(bad(entry, "the folder does not exist")),
        }
        let mut sources = Vec::new();
        let mut libraries = Vec::new();
        let listing =
            kiln_core::fs::read_folder_below(root, entry).map_err(|e| bad(entry, e.to_string()))?;
        for (name, kind) in listing {
            let path = folder.join(name);
            if kind != Kind::File {
                continue;
            }
            if path.extension().is_some_and(|e| e == "c") {
                sources.push(path);
            } else if is_library(&path) {
                libraries.push(path);
            }
        }
        sources.sort();
        libraries.sort();
        let manifest = folder.join("Cargo.toml");
        let has_manifest = matches!(
            kiln_core::fs::kind_below(root, &format!("{entry}/Cargo.toml")),
            Some((Kind::File, _))
        );
        let source = if has_manifest {
            PluginSource::Cargo(manifest)
        } else if !sources.is_empty() {
            PluginSource::C(sources)
        } else {
            match libraries.len() {
                1 => PluginSource::Library(libraries.remove(0)),
                0 => {
                    return Err(bad(
                        entry,
                        format!(
                            "it holds no Cargo.toml, no .c file and no built library (*{})",
                            std::env::consts::DLL_SUFFIX
                        ),
                    ));
                }
                _ => {
                    return Err(bad(
                        entry,
                        "it holds several libraries and no sources: keep one",
                    ));
                }
            }
        };
        let built = root
            .join(PLUGINS_DIR)
            .join(private_folder_name(entry))
            .join(format!("plugin{}", std::env::consts::DLL_SUFFIX));
        Ok(PluginFolder {
            entry: entry.to_owned(),
            folder,
            source,
            built,
            root: root.to_owned(),
        })
    }

    /// The library to load: the one built from the sources, or the folder's own.
    pub fn library(&self) -> &Path {
        match &self.source {
            PluginSource::Library(lib) => lib,
            _ => &self.built,
        }
    }

    /// Whether the sources changed since the library was built (or it never was).
    ///
    /// By content, not modification times: the kernel stamps files with a coarse
    /// clock, so a source saved within a few milliseconds of the last build can carry
    /// the library's own time, and a copied project carries new times throughout.
    pub fn needs_build(&self) -> bool {
        if matches!(self.source, PluginSource::Library(_)) {
            return false;
        }
        if !self.is_own_file(&self.built) {
            return true;
        }
        // Read as Kiln reads its own files: a regular file, small, not through a link
        // (a FIFO planted there would block every command).
        let recorded = kiln_core::read_regular(&self.stamp_path(), 64).unwrap_or_default();
        String::from_utf8_lossy(&recorded).trim() != format!("{:016x}", build_stamp(&self.folder))
    }

    /// The program that builds the plugin's sources (`$CARGO` or `cargo`, `$CC` or
    /// `cc`); `None` for a built library.
    pub fn builder(&self) -> Option<std::ffi::OsString> {
        match self.source {
            PluginSource::Cargo(_) => {
                Some(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            }
            PluginSource::C(_) => Some(std::env::var_os("CC").unwrap_or_else(|| "cc".into())),
            PluginSource::Library(_) => None,
        }
    }

    /// Whether this machine can build the plugin's sources.
    pub fn can_build(&self) -> bool {
        self.builder()
            .is_some_and(|program| crate::prebuilt::program_exists(&program))
    }

    /// The team's prebuilt library for this platform, and its stamp, if there is
    /// one (reached through no link, with a stamp that reads).
    pub fn prebuilt(&self) -> Option<(PathBuf, crate::prebuilt::Stamp)> {
        let dir = self.folder.join(crate::prebuilt::relative_dir());
        let library = dir.join(crate::prebuilt::library_name());
        let stamp = dir.join(crate::prebuilt::STAMP_FILE);
        if !self.is_own_file(&library) || !self.is_own_file(&stamp) {
            return None;
        }
        let bytes = kiln_core::read_regular(&stamp, 1 << 16).ok()?;
        Some((library, crate::prebuilt::Stamp::parse(&bytes)?))
    }

    /// Which library to load, and whether it must be built first. In a project
    /// whose user prefers building from sources ([`build_from_sources`]), a
    /// library shipped with the project is never chosen where this machine can
    /// build the sources.
    pub fn choose(&self) -> Result<Choice, PluginError> {
        if matches!(self.source, PluginSource::Library(_)) || !self.needs_build() {
            return Ok(Choice::Built);
        }
        if builds_from_sources(&self.root) && self.can_build() {
            return Ok(Choice::Build);
        }
        let prebuilt = self.prebuilt();
        if let Some((library, stamp)) = &prebuilt
            && stamp.sources == source_stamp(&self.folder)
        {
            return Ok(Choice::Prebuilt(library.clone()));
        }
        if self.can_build() {
            return Ok(Choice::Build);
        }
        match prebuilt {
            Some((library, _)) => Ok(Choice::StalePrebuilt(library)),
            None => Err(self.no_toolchain()),
        }
    }

    fn no_toolchain(&self) -> PluginError {
        PluginError::NoToolchain {
            entry: self.entry.clone(),
            program: self
                .builder()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
            platform: crate::prebuilt::platform(),
        }
    }

    /// Which library `choice` loads, as a person reads it: built here, the folder's
    /// own, or the team's prebuilt one with its stamp (the sources it was built
    /// from and the `kiln` that built it).
    pub fn describe(&self, choice: &Choice) -> String {
        let here = crate::prebuilt::platform();
        let stamp = |library: &Path| {
            let stamp = self
                .prebuilt()
                .filter(|(l, _)| l == library)
                .map(|(_, s)| s);
            match stamp {
                Some(s) => format!("sources {:016x}, built by kiln {}", s.sources, s.kiln),
                None => "no stamp".to_owned(),
            }
        };
        match choice {
            Choice::Built if matches!(self.source, PluginSource::Library(_)) => {
                format!("its own library {}", self.library().display())
            }
            Choice::Built => "the library built here from its sources".to_owned(),
            Choice::Build => {
                "built here first: its sources changed since the last build".to_owned()
            }
            Choice::Prebuilt(library) => format!(
                "the team's prebuilt library for {here} ({}), built from these sources",
                stamp(library)
            ),
            Choice::StalePrebuilt(library) => format!(
                "the team's prebuilt library for {here} ({}), built from OTHER sources than the folder holds",
                stamp(library)
            ),
        }
    }

    /// Loads the library `choice` names (see [`PluginFolder::load`]); `Build`
    /// builds first. Returns the plugin and, for a prebuilt library built from other
    /// sources, a warning saying so.
    pub fn load_chosen(
        &self,
        choice: &Choice,
        registry: &mut Registry,
    ) -> Result<(LoadedPlugin, Option<String>), PluginError> {
        match choice {
            Choice::Built => Ok((self.load(registry)?, None)),
            Choice::Build => {
                self.build()?;
                Ok((self.load(registry)?, None))
            }
            Choice::Prebuilt(library) => Ok((self.load_copy_of(library, registry)?, None)),
            Choice::StalePrebuilt(library) => {
                let plugin = self.load_copy_of(library, registry)?;
                let warning = format!(
                    "plugin folder {}: loaded its prebuilt library, built from other sources than the folder holds now; nothing on this machine can build them ({} not found): ask for the plugins to be prebuilt again (kiln plugins prebuild)",
                    self.entry,
                    self.builder()
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default()
                );
                Ok((plugin, Some(warning)))
            }
        }
    }

    /// Whether `path`, below the project root, is a regular file reached through no
    /// symbolic link: a library linked from `.kiln/` to elsewhere is not loaded,
    /// whatever `.kiln/` says.
    fn is_own_file(&self, path: &Path) -> bool {
        let Some(rel) = path.strip_prefix(&self.root).ok().and_then(Path::to_str) else {
            return false;
        };
        !kiln_core::fs::goes_through_link(&self.root, Path::new(rel))
            && matches!(
                kiln_core::fs::kind_below(&self.root, rel),
                Some((Kind::File, _))
            )
    }

    /// Where the stamp of the sources the library was built from is kept.
    pub fn stamp_path(&self) -> PathBuf {
        self.built.with_extension("sources")
    }

    /// Where the component types the plugin registered when it last loaded are
    /// kept: when it does not load, a level using one of them is told which plugin
    /// its type comes from.
    fn types_path(&self) -> PathBuf {
        self.built.with_extension("types")
    }

    /// Records the component types the plugin registered (written only when they
    /// changed; a failure to write is harmless: the note is only for messages).
    pub fn record_types(&self, types: &[String]) {
        let text = types.join("\n") + "\n";
        if kiln_core::read_regular(&self.types_path(), 1 << 16)
            .ok()
            .as_deref()
            == Some(text.as_bytes())
        {
            return;
        }
        if let (Ok(rel), Ok(_)) = (
            self.types_path().strip_prefix(&self.root),
            self.private_dir(),
        ) {
            let _ = kiln_core::write_below(&self.root, rel, text.as_bytes());
        }
    }

    /// The component types the plugin registered when it last loaded here, if that
    /// was recorded.
    pub fn recorded_types(&self) -> Vec<String> {
        if !self.is_own_file(&self.types_path()) {
            return self
                .prebuilt()
                .map(|(_, stamp)| stamp.types)
                .unwrap_or_default();
        }
        let bytes = kiln_core::read_regular(&self.types_path(), 1 << 16).unwrap_or_default();
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// Tells `registry` that the plugin's recorded component types are not loaded,
    /// and `why` ("did not load", "is being built").
    pub fn note_absent(&self, registry: &mut Registry, why: &str) {
        for ty in self.recorded_types() {
            registry.note_absent_component(&ty, format!("plugin {}, which {why}", self.entry));
        }
    }

    /// Builds the library from the sources (nothing to do for a built library).
    /// Errors carry the compiler's own words.
    pub fn build(&self) -> Result<Duration, PluginError> {
        let start = Instant::now();
        if matches!(self.source, PluginSource::Library(_)) {
            return Ok(Duration::ZERO);
        }
        if !self.can_build() {
            return Err(self.no_toolchain());
        }
        let private = self.private_dir()?;
        // Taken before building: a source saved during the build is built next time.
        let mut stamp = build_stamp(&self.folder);
        let before_lock = stamp_of(&self.folder, &["Cargo.lock"], &[]);
        let output = match &self.source {
            PluginSource::Library(_) => return Ok(Duration::ZERO),
            PluginSource::C(sources) => self.build_c(sources, &private)?,
            PluginSource::Cargo(manifest) => self.build_cargo(manifest)?,
        };
        self.keep_built(&output)
            .map_err(|e| self.failed(format!("keeping the library it built: {e}")))?;
        if matches!(self.source, PluginSource::C(_)) {
            // The compiler wrote `output` in the private folder: only one copy is kept.
            let _ = std::fs::remove_file(&output);
        }
        // cargo writes a crate's Cargo.lock on its first build: when nothing else
        // changed meanwhile, the stamp with it is the one the next command computes.
        if stamp_of(&self.folder, &["Cargo.lock"], &[]) == before_lock {
            stamp = build_stamp(&self.folder);
        }
        kiln_core::write_atomic(&self.stamp_path(), format!("{stamp:016x}\n").as_bytes())
            .map_err(|e| self.failed(format!("recording what it built from: {e}")))?;
        Ok(start.elapsed())
    }

    fn failed(&self, output: impl Into<String>) -> PluginError {
        PluginError::BuildFailed {
            entry: self.entry.clone(),
            output: output.into(),
        }
    }

    /// Puts the library at `output` in the place of the built one, as one atomic
    /// replace (a loaded copy of the old one stays intact).
    fn keep_built(&self, output: &Path) -> std::io::Result<()> {
        let rel = self.built.strip_prefix(&self.root).unwrap_or(&self.built);
        let (folder, name) = match (rel.parent(), rel.file_name()) {
            (Some(folder), Some(name)) => (folder, name),
            _ => return Err(std::io::Error::other("no place for the built library")),
        };
        let dir = kiln_core::fs::open_folder_below(&self.root, folder, true)?;
        let (replacement, mut file) = kiln_core::fs::Replacement::start(&dir, name)?;
        std::io::copy(&mut std::fs::File::open(output)?, &mut file)?;
        replacement.place(file, kiln_core::fs::Durability::Flushed)
    }

    /// `.kiln/plugins/<folder>`, made without following links.
    fn private_dir(&self) -> Result<PathBuf, PluginError> {
        let rel = self
            .built
            .parent()
            .and_then(|p| p.strip_prefix(&self.root).ok())
            .map(Path::to_owned)
            .unwrap_or_default();
        kiln_core::create_dir_below(&self.root, &rel)
            .map_err(|e| self.failed(format!("making {}: {e}", rel.display())))
    }

    fn build_c(&self, sources: &[PathBuf], private: &Path) -> Result<PathBuf, PluginError> {
        let include =
            kiln_core::create_dir_below(&self.root, &Path::new(PLUGINS_DIR).join("include"))
                .map_err(|e| self.failed(e.to_string()))?;
        // Read and written below the root, never through a link, and only as a
        // regular file of bounded size (a FIFO or `/dev/zero` planted there is
        // replaced, never read).
        let header = Path::new(PLUGINS_DIR).join("include/kiln_plugin.h");
        let header_now = kiln_core::read_below(&self.root, &header, 1 << 20);
        if header_now.ok().as_deref() != Some(kiln_plugin::C_HEADER.as_bytes()) {
            kiln_core::write_below(&self.root, &header, kiln_plugin::C_HEADER.as_bytes())
                .map_err(|e| self.failed(format!("writing {}: {e}", header.display())))?;
        }
        let flags = self.c_flags()?;
        let output = private.join(unique_name("cc-output"));
        let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
        let mut command = Command::new(&compiler);
        command
            .args(["-shared", "-fPIC", "-O2", "-std=c11", "-Wall"])
            .args(&flags.cflags)
            .arg("-I")
            .arg(&include)
            .arg("-o")
            .arg(&output)
            .args(sources)
            // Libraries after the sources that use them, as linkers want.
            .args(&flags.ldflags)
            .current_dir(&self.folder);
        run(&mut command, &compiler.to_string_lossy(), |e| {
            self.failed(e)
        })?;
        Ok(output)
    }

    /// The compiler and linker flags of a C plugin: `kiln_plugin.json` in its
    /// folder, `{"cflags": ["-DFAST"], "ldflags": ["-lm"]}` (each optional), read as
    /// a bounded regular file below the root; none without the file. Passed to
    /// the compiler as arguments, never through a shell.
    fn c_flags(&self) -> Result<CFlags, PluginError> {
        let rel = self
            .folder
            .strip_prefix(&self.root)
            .map_err(|_| bad(&self.entry, "it is not below the project"))?
            .join(C_FLAGS_FILE);
        match kiln_core::read_below(&self.root, &rel, 1 << 16) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                self.failed(format!(
                    "{}:{}:{}: {e} (expected {{\"cflags\": [...], \"ldflags\": [...]}}, lists of strings)",
                    rel.display(),
                    e.line(),
                    e.column()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CFlags::default()),
            Err(e) => Err(self.failed(format!("reading {}: {e}", rel.display()))),
        }
    }

    fn build_cargo(&self, manifest: &Path) -> Result<PathBuf, PluginError> {
        let target =
            kiln_core::create_dir_below(&self.root, &Path::new(PLUGINS_DIR).join("target"))
                .map_err(|e| self.failed(e.to_string()))?;
        // The SDK this kiln carries, whatever `kiln_plugin` the manifest names
        // (see carried_sdk.rs).
        let sdk = crate::carried_sdk::unpack(&self.root)
            .map_err(|e| self.failed(format!("unpacking the plugin SDK: {e}")))?;
        let patch = crate::carried_sdk::patch_argument(&sdk).map_err(|e| self.failed(e))?;
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(&cargo);
        command
            .args([
                "build",
                "--release",
                "--message-format=json-render-diagnostics",
            ])
            .arg("--config")
            .arg(patch)
            .arg("--manifest-path")
            .arg(manifest)
            .arg("--target-dir")
            .arg(&target)
            // A build started from Kiln's own tests or `cargo run` must not inherit
            // where that build writes or what it targets.
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET")
            .current_dir(&self.folder);
        let stdout = run(&mut command, &cargo.to_string_lossy(), |e| self.failed(e))?;
        // cargo names what it built in its JSON messages; the crate's library name is
        // not always its package name.
        stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact")
            .filter(|m| {
                m["target"]["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "cdylib"))
            })
            .filter(|m| m["manifest_path"].as_str().map(Path::new) == Some(manifest))
            .flat_map(|m| {
                m["filenames"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|f| f.as_str().map(PathBuf::from))
            })
            .find(|f| is_library(f))
            .ok_or_else(|| {
                self.failed(
                    "cargo built no dynamic library: the crate needs `[lib] crate-type = [\"cdylib\"]`",
                )
            })
    }

    /// Builds the plugin if its sources changed, and writes its library with a stamp
    /// of its sources to `<folder>/prebuilt/<platform>/`, for teammates who have no
    /// toolchain (see [`crate::prebuilt`]). Returns the library's path.
    pub fn prebuild(&self) -> Result<PathBuf, PluginError> {
        if matches!(self.source, PluginSource::Library(_)) {
            return Err(bad(
                &self.entry,
                "it holds a built library and no sources: there is nothing to prebuild",
            ));
        }
        if self.needs_build() {
            self.build()?;
        }
        let sources = source_stamp(&self.folder);
        // Its types go in the stamp: loaded once, in a registry of its own.
        let mut registry = Registry::with_builtins();
        let plugin = self.load(&mut registry)?;
        let types = plugin.component_types.clone();
        drop(registry);
        plugin.shutdown();
        if self.needs_build() {
            return Err(
                self.failed("its sources changed while it was being prebuilt; run it again")
            );
        }
        let bytes = kiln_core::read_regular(&self.built, MAX_LIBRARY_BYTES)
            .map_err(|e| self.failed(format!("reading {}: {e}", self.built.display())))?;
        let folder = self
            .folder
            .strip_prefix(&self.root)
            .map_err(|_| bad(&self.entry, "it is not below the project"))?;
        let dir = folder.join(crate::prebuilt::relative_dir());
        let stamp = crate::prebuilt::Stamp {
            sources,
            types,
            kiln: env!("CARGO_PKG_VERSION").to_owned(),
        };
        // The library first: a stamp never vouches for a library not yet there.
        let library = dir.join(crate::prebuilt::library_name());
        let write = |rel: &Path, bytes: &[u8]| {
            kiln_core::write_below(&self.root, rel, bytes)
                .map_err(|e| self.failed(format!("writing {}: {e}", rel.display())))
        };
        write(&library, &bytes)?;
        write(
            &dir.join(crate::prebuilt::STAMP_FILE),
            stamp.to_json().as_bytes(),
        )?;
        Ok(self.root.join(library))
    }

    /// Loads the library from a copy of its own (see the module's notes) and adds its
    /// component types to `registry`: what the editor does, as it loads again after
    /// every build.
    pub fn load(&self, registry: &mut Registry) -> Result<LoadedPlugin, PluginError> {
        self.load_copy_of(self.library(), registry)
    }

    /// Loads `library` (the folder's own, the one Kiln built, or a prebuilt one)
    /// from a copy of its own.
    fn load_copy_of(
        &self,
        library: &Path,
        registry: &mut Registry,
    ) -> Result<LoadedPlugin, PluginError> {
        // Inside the project, reached without following a link, as every file is.
        let loadable = self.is_own_file(library);
        if !loadable {
            return Err(PluginError::NotFound {
                path: library.to_owned(),
            });
        }
        let private = self.private_dir()?;
        let copy = private.join(unique_name("loaded"));
        std::fs::copy(library, &copy).map_err(|e| {
            self.failed(format!(
                "copying {} to {}: {e}",
                library.display(),
                copy.display()
            ))
        })?;
        let loaded = crate::load(&copy, registry);
        // Once open, the file is not needed (the loader maps it); where the system
        // keeps open files from being removed, the next start removes it.
        let _ = std::fs::remove_file(&copy);
        let mut loaded = loaded
            .map_err(|e| rename_library(e, &copy, library))
            .map_err(|e| self.named_as_listed(e, library))?;
        loaded.path = library.to_owned();
        Ok(loaded)
    }

    /// Loads the library for a process that loads it once (the commands): a library
    /// Kiln built is opened where it is, since Kiln replaces it only by renaming a
    /// new file over it, which leaves the open one intact; a library someone else
    /// put in the folder, which may be overwritten in place while open, is copied as
    /// [`PluginFolder::load`] does. Copying a 4 MB Rust plugin cost every command
    /// about a millisecond and a half.
    pub fn load_once(&self, registry: &mut Registry) -> Result<LoadedPlugin, PluginError> {
        if matches!(self.source, PluginSource::Library(_)) {
            return self.load(registry);
        }
        if !self.is_own_file(&self.built) {
            return Err(PluginError::NotBuilt {
                entry: self.entry.clone(),
            });
        }
        crate::load(&self.built, registry).map_err(|e| self.named_as_listed(e, &self.built))
    }

    /// `error` naming the plugin as `kiln.project` lists it (`plugins/wind`) where
    /// it named the library Kiln built or unpacked under `.kiln/` (a private copy
    /// the user never chose, with its folder name escaped).
    fn named_as_listed(&self, error: PluginError, library: &Path) -> PluginError {
        let private = library.starts_with(self.root.join(kiln_core::own_folder::DIR));
        if !private {
            return error;
        }
        let entry = PathBuf::from(&self.entry);
        let shown = library.display().to_string();
        let path = |p: PathBuf| if p == library { entry.clone() } else { p };
        let name = |n: String| if n == shown { self.entry.clone() } else { n };
        match error {
            PluginError::NotFound { path: p } => PluginError::NotFound { path: path(p) },
            PluginError::NotALibrary { path: p, reason } => PluginError::NotALibrary {
                path: path(p),
                reason: reason.replace(&shown, &self.entry),
            },
            PluginError::NoEntryPoint { path: p } => PluginError::NoEntryPoint { path: path(p) },
            PluginError::NoPluginApi { path: p } => PluginError::NoPluginApi { path: path(p) },
            PluginError::NullFunction { path: p, function } => PluginError::NullFunction {
                path: path(p),
                function,
            },
            PluginError::AlreadyLoaded { path: p } => PluginError::AlreadyLoaded { path: path(p) },
            PluginError::MissingEngineApi {
                name: n,
                api,
                version,
                provided,
            } => PluginError::MissingEngineApi {
                name: name(n),
                api,
                version,
                provided,
            },
            PluginError::InitFailed { name: n, code } => PluginError::InitFailed {
                name: name(n),
                code,
            },
            PluginError::InitPanicked { name: n, message } => PluginError::InitPanicked {
                name: name(n),
                message,
            },
            PluginError::BadComponent {
                name: n,
                component,
                reason,
            } => PluginError::BadComponent {
                name: name(n),
                component,
                reason,
            },
            other => other,
        }
    }
}

/// A name no other build or load, in this process or another, uses at the same
/// time, in Kiln's one temporary-name scheme (`.PREFIX-N.so.PID.kiln-tmp`), so that
/// the one sweep removes what a killed process left ([`remove_stale_copies`]).
fn unique_name(prefix: &str) -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "{prefix}-{}{}",
        COUNT.fetch_add(1, Ordering::Relaxed),
        std::env::consts::DLL_SUFFIX
    );
    kiln_core::fs::temp_name(std::ffi::OsStr::new(&name), std::process::id())
        .to_string_lossy()
        .into_owned()
}

/// Errors about the private copy name the library the user knows.
fn rename_library(error: PluginError, copy: &Path, library: &Path) -> PluginError {
    let fix = |p: PathBuf| if p == copy { library.to_owned() } else { p };
    match error {
        PluginError::NotFound { path } => PluginError::NotFound { path: fix(path) },
        PluginError::NotALibrary { path, reason } => PluginError::NotALibrary {
            path: fix(path),
            reason: reason.replace(&copy.display().to_string(), &library.display().to_string()),
        },
        PluginError::NoEntryPoint { path } => PluginError::NoEntryPoint { path: fix(path) },
        PluginError::NoPluginApi { path } => PluginError::NoPluginApi { path: fix(path) },
        other => other,
    }
}

/// Runs a build command; its output on failure.
fn run(
    command: &mut Command,
    program: &str,
    failed: impl Fn(String) -> PluginError,
) -> Result<String, PluginError> {
    let output = command
        .output()
        .map_err(|e| failed(format!("could not run {program}: {e}")))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The compiler's last words are where its errors are; a page of them is enough.
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    Err(failed(format!(
        "{program} failed ({}):\n{tail}",
        output.status
    )))
}

/// The files a plugin is built from: every file below `folder`, not following
/// links, leaving out build output (`target`), the team's prebuilt libraries
/// (`prebuilt/`), hidden files and folders, and built libraries; as paths from
/// `folder` with `/`. Sorted.
fn source_files(folder: &Path) -> Vec<String> {
    use kiln_core::fs::{Entries, Step, Unreadable, walk_below};
    let mut files = Vec::new();
    let _ = walk_below(
        folder,
        "",
        Entries::All,
        Unreadable::IsSkipped,
        |rel, kind| {
            if files.len() > MAX_SOURCE_FILES {
                return Step::Stop;
            }
            let name = rel.rsplit('/').next().unwrap_or(rel);
            let hidden = name.starts_with('.');
            let output = name == "target" || rel == PREBUILT_DIR;
            match kind {
                Kind::Folder if !hidden && !output => Step::Enter,
                Kind::File if !hidden && !is_library(Path::new(rel)) => {
                    files.push(rel.to_owned());
                    Step::Skip
                }
                _ => Step::Skip,
            }
        },
    );
    // In the order of their paths' parts, as the stamps recorded beside prebuilt
    // libraries were made (`a/b` before `a.c`).
    files.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    files
}

/// A hash of the names and contents of the plugin's [`source_files`] (FNV-1a 64),
/// leaving out those named `except`. The same sources give the same stamp on every
/// machine (no times, no absolute paths), so a stamp recorded beside a prebuilt
/// library says on a teammate's machine whether it was built from the sources there.
fn stamp_of(folder: &Path, except: &[&str], extra: &[(String, Vec<u8>)]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (name, bytes) in extra {
        feed(name.as_bytes());
        feed(&[0]);
        feed(bytes);
        feed(&[0]);
    }
    let cursor = kiln_core::fs::FolderCursor::default();
    let mut budget = MAX_HASHED_TOTAL;
    for rel in source_files(folder) {
        if except.contains(&rel.as_str()) {
            continue;
        }
        feed(rel.as_bytes());
        feed(&[0]);
        let meta = cursor.metadata(folder, &rel).ok();
        let (len, links) = meta.map_or((0, 1), |m| (m.size, m.links));
        // A file with other names (hard links: 2,000 names of one 16 MB file took
        // 92 s to hash), and what passes the total, are judged by their size.
        if len <= MAX_HASHED_BYTES && links <= 1 && len <= budget {
            budget -= len;
            feed(
                &kiln_core::fs::read_below(folder, Path::new(&rel), MAX_HASHED_BYTES)
                    .unwrap_or_default(),
            );
        } else {
            // A big file (an asset kept beside the code) is judged by its size.
            feed(&len.to_le_bytes());
        }
        feed(&[0]);
    }
    hash
}

/// The stamp of the sources of the plugin in `folder` as a team shares them: what a
/// prebuilt library's stamp records. `Cargo.lock` is left out: a team that does
/// not commit it would otherwise never match on a teammate's machine.
pub fn source_stamp(folder: &Path) -> u64 {
    stamp_of(folder, &["Cargo.lock"], &[])
}

/// The stamp of what a library Kiln builds here comes from: the plugin's sources
/// (its `Cargo.lock` too) and the SDK this `kiln` carries, so that a newer `kiln`
/// builds its plugins again.
fn build_stamp(folder: &Path) -> u64 {
    stamp_of(folder, &[], &crate::carried_sdk::files())
}

/// The folder under `.kiln/plugins/` that Kiln builds the plugin `entry` (a
/// project-relative folder, `plugins/wind`) into: one name per entry, never the
/// same for two (`plugins/a` and `plugins__a` once shared one, and a plugin folder
/// named `include` or `target` took Kiln's own): `p-`, then the entry with `_`
/// written `_u` and `/` written `__`, which reads back one way only.
pub fn private_folder_name(entry: &str) -> String {
    let mut name = String::from("p-");
    for c in entry.chars() {
        match c {
            '_' => name.push_str("_u"),
            '/' => name.push_str("__"),
            c => name.push(c),
        }
    }
    name
}

/// Removes the private copies and half-built libraries that processes no longer
/// running left (one killed before it could): the one sweep of Kiln's temporary
/// files, in each plugin's folder under `.kiln/plugins/`. Another running process's
/// build or load is left alone.
pub fn remove_stale_copies(root: &Path) {
    let Ok(folders) = kiln_core::fs::read_folder_below(root, PLUGINS_DIR) else {
        return;
    };
    for (name, kind) in folders {
        if kind != kiln_core::fs::Kind::Folder {
            continue;
        }
        let rel = Path::new(PLUGINS_DIR).join(name);
        if let Ok(dir) = kiln_core::fs::open_folder_below(root, &rel, false) {
            kiln_core::fs::sweep_leftovers(&dir);
        }
    }
}

/// A project's plugins, loaded.
#[derive(Debug, Default)]
pub struct ProjectPlugins {
    /// The plugins that loaded, in `kiln.project`'s order.
    pub loaded: Vec<LoadedPlugin>,
    /// Why the others did not, one error each.
    pub errors: Vec<PluginError>,
    /// What was loaded with a caveat (a prebuilt library from other sources).
    pub warnings: Vec<String>,
    /// The plugins built on the way, and how long each took.
    pub built: Vec<(String, Duration)>,
    /// The plugins left out without being built or loaded ([`leave_out_project`]):
    /// the project is not trusted to run code.
    pub left_out: Vec<String>,
}

/// Which library of a plugin folder to load ([`PluginFolder::choose`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The library Kiln built here from the sources as they are, or the folder's
    /// own library.
    Built,
    /// The team's prebuilt library, built from the sources as they are.
    Prebuilt(PathBuf),
    /// The sources need building, and this machine can build them.
    Build,
    /// The team's prebuilt library, built from other sources: nothing on this
    /// machine can build the ones there are (loaded with a warning).
    StalePrebuilt(PathBuf),
}

/// Whether [`load_project`] builds plugins whose sources changed since their last build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Build what is out of date, then load.
    IfNeeded,
    /// Load what was built last; report out-of-date plugins as errors.
    Never,
}

/// Leaves the plugin folders `entries` of the project at `root` out: nothing is
/// built, loaded or run. The component types they were last seen to add (recorded
/// at their last load here, or in a prebuilt library's stamp: files read, never
/// run) are noted in `registry` as coming from them, which `why` says are not
/// loaded, so that a level using one says where its type comes from.
pub fn leave_out_project(
    root: &Path,
    entries: &[String],
    registry: &mut Registry,
    why: &str,
) -> ProjectPlugins {
    let mut plugins = ProjectPlugins::default();
    for entry in entries {
        match PluginFolder::find(root, entry) {
            Ok(folder) => folder.note_absent(registry, why),
            Err(e) => plugins.errors.push(e),
        }
        plugins.left_out.push(entry.clone());
    }
    plugins
}

/// Builds (per `build`) and loads the plugin folders `entries` of the project at
/// `root` (canonical), adding their component types to `registry`. A plugin that
/// fails is reported and skipped; the others load.
pub fn load_project(
    root: &Path,
    entries: &[String],
    registry: &mut Registry,
    build: Build,
) -> ProjectPlugins {
    let mut plugins = ProjectPlugins::default();
    if entries.is_empty() {
        return plugins;
    }
    remove_stale_copies(root);
    for entry in entries {
        let folder = match PluginFolder::find(root, entry) {
            Ok(folder) => folder,
            Err(e) => {
                plugins.errors.push(e);
                continue;
            }
        };
        let result = (|| match folder.choose()? {
            Choice::Build => {
                if build == Build::Never {
                    return Err(PluginError::NotBuilt {
                        entry: entry.clone(),
                    });
                }
                let took = folder.build()?;
                plugins.built.push((entry.clone(), took));
                Ok((folder.load_once(registry)?, None))
            }
            Choice::Built => Ok((folder.load_once(registry)?, None)),
            prebuilt => folder.load_chosen(&prebuilt, registry),
        })();
        match result {
            Ok((plugin, warning)) => {
                folder.record_types(&plugin.component_types);
                plugins.warnings.extend(warning);
                plugins.loaded.push(plugin);
            }
            Err(e) => {
                folder.note_absent(registry, "did not load");
                plugins.errors.push(e);
            }
        }
    }
    plugins
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stamp reads each source once and never a file's other names: 1,000 hard
    /// links to one 4 MB file are judged by size (they were hashed 1,000 times),
    /// and a change to a plain source still changes the stamp.
    #[test]
    fn a_stamp_does_not_hash_hard_links_and_still_sees_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        std::fs::write(folder.join("plugin.c"), "int x;").unwrap();
        std::fs::write(folder.join("big.bin"), vec![7u8; 4 << 20]).unwrap();
        for k in 0..1000 {
            std::fs::hard_link(folder.join("big.bin"), folder.join(format!("l{k}.bin"))).unwrap();
        }
        let started = std::time::Instant::now();
        let before = source_stamp(folder);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        std::fs::write(folder.join("plugin.c"), "int y;").unwrap();
        assert_ne!(source_stamp(folder), before);
    }

    /// Two plugin folders never build into one folder, nor into Kiln's own.
    #[test]
    fn private_folder_names_are_one_per_entry() {
        let entries = [
            "plugins/a",
            "plugins__a",
            "plugins_/a",
            "plugins/_a",
            "plugins_u/a",
            "include",
            "target",
            "a/b/c",
            "a__b/c",
        ];
        let names: std::collections::BTreeSet<String> =
            entries.iter().map(|e| private_folder_name(e)).collect();
        assert_eq!(names.len(), entries.len(), "{names:?}");
        assert!(!names.contains("include") && !names.contains("target"));
        assert_eq!(private_folder_name("plugins/wind"), "p-plugins__wind");
    }
}
