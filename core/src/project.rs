//! A project: a folder with a `kiln.project` file at its root. Everything Kiln reads or
//! writes is inside it; paths that would leave it (through `..`, absolute paths or
//! symbolic links) are refused.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::compiler::{
    CompileError, CompileOptions, CompiledLevel, ResourceSource, compile_level_with,
};
use crate::{Registry, ResourcePath};

/// The name of the file that marks a project root.
pub const PROJECT_FILE: &str = "kiln.project";
/// Folder of compiled output, relative to the output root.
pub const BUILD_DIR: &str = "build";
/// Top-level folders that hold no resources.
pub const NON_RESOURCE_DIRS: &[&str] = &[".git", ".kiln", BUILD_DIR];

/// The contents of `kiln.project`. `{}` is a valid project file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectConfig {
    /// Display name; the folder name when empty.
    pub name: String,
    /// Levels the game boots into (project paths without extension). Everything they
    /// reach is in use.
    pub boot_levels: Vec<String>,
    /// Reference rules for file types Kiln has no schema for (another engine's
    /// `.unit`, a tool's `.json`), keyed by extension (`*` for every file), each a map
    /// from a field pattern to the resource type its strings name. See
    /// [`ReferenceRules`].
    pub references: ReferenceRules,
    /// The most entities a level may flatten to (prefabs expanded); 0 means
    /// [`crate::compiler::DEFAULT_MAX_LEVEL_ENTITIES`].
    pub max_level_entities: usize,
    /// Plugin folders, project-relative (`plugins/wind`), loaded in this order: each
    /// holds a Rust crate (`Cargo.toml`), C sources (`*.c`) or a built library, which
    /// Kiln builds if needed and loads (`docs/plugins.md`).
    pub plugins: Vec<String>,
}

/// Declared reference rules: `{"unit": {"/components/*/data/mesh_resource": "mesh",
/// "material": "material"}, "*": {"unit": "unit"}}`.
///
/// A pattern that starts with `/` is a JSON pointer to the string, where `*` stands
/// for any one key or array index and `**` for any number of them. Any other pattern
/// is a field name: it matches a string stored under that key, or in an array under
/// it, anywhere in the file. A string a rule matches is a *typed* reference to
/// `text.TYPE`, resolved, checked and patched like the fields of Kiln's own schemas.
/// Rules apply wherever no built-in schema decides (never to an entity's `name`).
pub type ReferenceRules =
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

/// What is wrong with one rule of `references`, if anything.
fn check_reference_rule(ext: &str, pattern: &str, ty: &str) -> Option<String> {
    if ext != "*" && !crate::path::is_extension(ext) {
        return Some(format!(
            "references: \"{ext}\" is not a file extension (a-z, 0-9, _ and -, without the dot) or \"*\""
        ));
    }
    if pattern.is_empty() {
        return Some(format!("references.{ext}: a pattern is empty"));
    }
    let bare = ty.strip_prefix('.').unwrap_or(ty);
    if !crate::path::is_extension(bare) {
        return Some(format!(
            "references.{ext}.\"{pattern}\": \"{ty}\" is not a resource type (a file extension: a-z, 0-9, _ and -)"
        ));
    }
    if bare != ty {
        return Some(format!(
            "references.{ext}.\"{pattern}\": write the type without its dot: \"{bare}\""
        ));
    }
    None
}

/// 1-based line and column of the first `"needle"` in `text` after byte `from`.
fn locate(text: &str, from: usize, needle: &str) -> (usize, usize) {
    let quoted = format!("\"{needle}\"");
    let at = text
        .get(from..)
        .and_then(|rest| rest.find(&quoted))
        .map_or(from, |i| from + i);
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, column)
}

impl ProjectConfig {
    /// Parses `kiln.project`'s text; errors name `file`, line and column.
    pub fn parse(file: &Path, text: &str) -> Result<Self, ProjectError> {
        // A merge left conflicts in it: named, rather than "unknown field".
        let found = crate::conflict::find_conflicts(text, "project");
        if let Some((_, line, column)) = found.first() {
            return Err(ProjectError::BadProjectFile {
                file: file.to_owned(),
                line: *line,
                column: *column,
                message: crate::level::conflicts_message(&found),
            });
        }
        let config: ProjectConfig =
            serde_json::from_str(text).map_err(|e| ProjectError::BadProjectFile {
                file: file.to_owned(),
                line: e.line(),
                column: e.column(),
                message: e
                    .to_string()
                    .split(" at line ")
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            })?;
        let section = text.find("\"references\"").unwrap_or(0);
        for (ext, rules) in &config.references {
            for (pattern, ty) in rules {
                if let Some(message) = check_reference_rule(ext, pattern, ty) {
                    let key = if crate::path::is_extension(ext) || ext == "*" {
                        pattern
                    } else {
                        ext
                    };
                    let (line, column) = locate(text, section, key);
                    return Err(ProjectError::BadProjectFile {
                        file: file.to_owned(),
                        line,
                        column,
                        message,
                    });
                }
            }
        }
        let section = text.find("\"plugins\"").unwrap_or(0);
        for (k, entry) in config.plugins.iter().enumerate() {
            let message = if !is_plain_folder(entry) {
                format!(
                    "plugins: \"{entry}\" is not a folder inside the project (a relative path with '/', no '..', not in .kiln or build)"
                )
            } else if config.plugins[..k].contains(entry) {
                format!("plugins: \"{entry}\" is listed twice")
            } else {
                continue;
            };
            let (line, column) = locate(text, section, entry);
            return Err(ProjectError::BadProjectFile {
                file: file.to_owned(),
                line,
                column,
                message,
            });
        }
        Ok(config)
    }
}

/// Whether `entry` is a plain project-relative folder path outside Kiln's own folders.
fn is_plain_folder(entry: &str) -> bool {
    !entry.is_empty()
        && !entry.contains('\\')
        && !entry.starts_with('/')
        && !entry.contains(':')
        && entry
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
        && entry
            .split('/')
            .next()
            .is_none_or(|first| !NON_RESOURCE_DIRS.contains(&first))
}

/// A failure reading or writing project files, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// No `kiln.project` in the folder.
    #[error("{0} is not a Kiln project: it has no {PROJECT_FILE} file")]
    NotAProject(PathBuf),
    /// `kiln.project` is malformed.
    #[error("{file}:{line}:{column}: {message}")]
    BadProjectFile {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// An operating-system error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A path that leads outside the project.
    #[error("{0} is outside the project")]
    OutsideProject(PathBuf),
    /// A level failed to compile.
    #[error(transparent)]
    Compile(#[from] CompileError),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> ProjectError + '_ {
    move |source| ProjectError::Io {
        path: path.to_owned(),
        source,
    }
}

/// An open project.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    config: ProjectConfig,
}

impl Project {
    /// Opens the project whose root is `dir`.
    pub fn open(dir: &Path) -> Result<Self, ProjectError> {
        let root = fs::canonicalize(dir).map_err(io_error(dir))?;
        let file = root.join(PROJECT_FILE);
        let text = match fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ProjectError::NotAProject(root));
            }
            Err(e) => {
                return Err(ProjectError::Io {
                    path: file,
                    source: e,
                });
            }
        };
        let config = ProjectConfig::parse(&file, &text)?;
        Ok(Project { root, config })
    }

    /// The root folder (canonical, absolute).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The parsed `kiln.project`.
    pub fn config(&self) -> &ProjectConfig {
        &self.config
    }

    /// The display name.
    pub fn name(&self) -> String {
        if self.config.name.is_empty() {
            self.root
                .file_name()
                .map_or_else(|| "project".into(), |n| n.to_string_lossy().into_owned())
        } else {
            self.config.name.clone()
        }
    }

    /// The file of resource `path` of type `ext`.
    pub fn file_of(&self, path: &ResourcePath, ext: &str) -> PathBuf {
        self.root.join(path.with_extension(ext))
    }

    /// Resolves a project-relative file path (as written by a user), refusing
    /// anything that leaves the root, including through symbolic links.
    pub fn resolve(&self, relative: &str) -> Result<PathBuf, ProjectError> {
        let rel = Path::new(relative);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(ProjectError::OutsideProject(rel.to_owned()));
        }
        let full = self.root.join(rel);
        self.check_inside(&full)?;
        Ok(full)
    }

    /// Fails if `path`, with symbolic links followed, is not inside the root.
    /// A path that does not exist yet is judged by its nearest existing ancestor.
    pub fn check_inside(&self, path: &Path) -> Result<(), ProjectError> {
        let mut probe = path;
        loop {
            match fs::canonicalize(probe) {
                Ok(real) => {
                    return if real.starts_with(&self.root) {
                        Ok(())
                    } else {
                        Err(ProjectError::OutsideProject(path.to_owned()))
                    };
                }
                Err(_) => match probe.parent() {
                    Some(p) => probe = p,
                    None => return Err(ProjectError::OutsideProject(path.to_owned())),
                },
            }
        }
    }

    /// Reads a resource's text, refusing files outside the project.
    pub fn read_resource(&self, path: &ResourcePath, ext: &str) -> Result<String, ProjectError> {
        let file = self.file_of(path, ext);
        self.check_inside(&file)?;
        fs::read_to_string(&file).map_err(io_error(&file))
    }

    /// Every `.level` file, as project paths (`levels/forest.level`), sorted.
    /// Folders and files whose names are not canonical are skipped here; the
    /// dependency checker reports them.
    pub fn levels(&self) -> Result<Vec<String>, ProjectError> {
        let mut out = Vec::new();
        let mut dirs = vec![(self.root.clone(), String::new())];
        while let Some((dir, prefix)) = dirs.pop() {
            for entry in fs::read_dir(&dir).map_err(io_error(&dir))? {
                let entry = entry.map_err(io_error(&dir))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let rel = format!("{prefix}{name}");
                let kind = entry.file_type().map_err(io_error(&entry.path()))?;
                if kind.is_dir() {
                    if !(prefix.is_empty() && NON_RESOURCE_DIRS.contains(&name.as_str())) {
                        dirs.push((entry.path(), format!("{rel}/")));
                    }
                } else if kind.is_file()
                    && name.ends_with(".level")
                    && ResourcePath::split_file(&rel).is_ok()
                {
                    out.push(rel);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Compiles the level file `level` (a project path such as `levels/forest.level`).
    pub fn compile(&self, registry: &Registry, level: &str) -> Result<CompiledLevel, ProjectError> {
        self.compile_with(registry, level, CompileOptions::default())
    }

    /// [`Project::compile`] with `options`.
    pub fn compile_with(
        &self,
        registry: &Registry,
        level: &str,
        options: CompileOptions,
    ) -> Result<CompiledLevel, ProjectError> {
        let file = self.resolve(level)?;
        let bytes = fs::read(&file).map_err(io_error(&file))?;
        let text = crate::level::SyntaxError::text(bytes, level).map_err(CompileError::Syntax)?;
        let mut source = ProjectSource(self);
        Ok(compile_level_with(
            registry,
            &mut source,
            level,
            &text,
            options,
        )?)
    }
}

/// Reads units for the compiler from the project.
struct ProjectSource<'a>(&'a Project);

impl ResourceSource for ProjectSource<'_> {
    fn max_level_entities(&self) -> usize {
        match self.0.config.max_level_entities {
            0 => crate::compiler::DEFAULT_MAX_LEVEL_ENTITIES,
            n => n,
        }
    }

    fn read_text(&mut self, path: &ResourcePath, ext: &str) -> Result<String, String> {
        self.0.read_resource(path, ext).map_err(|e| match e {
            ProjectError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound => {
                "no such file".to_owned()
            }
            ProjectError::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        })
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed
/// to disk, then renamed over the target. Readers see the old or the new content,
/// never a mix, and a crash leaves at most a stray temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_through_temporary(path, bytes, true)
}

/// [`write_atomic`] without waiting for the disk: for caches whose reader checks them
/// (a checksum) and rebuilds what a crash left torn or empty. Never for user data.
/// A cold `kiln check` of 100,000 files waited about a tenth of its time for the
/// cache's flush.
pub fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_through_temporary(path, bytes, false)
}

fn write_through_temporary(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&temp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Reads a file only if it is a regular file (not a link, a FIFO or a device, which
/// could hang or never end) of at most `max` bytes: for Kiln's own files, and files
/// a project names that a hostile project could replace.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let meta = fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    if meta.len() > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {max} bytes"),
        ));
    }
    // Swapped for a link or a FIFO since the check: do not follow, do not wait.
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "grew while being read",
        ));
    }
    Ok(bytes)
}

/// Reads `base/rel` with [`read_regular`], refusing a symbolic link at any folder
/// between: what lies below Kiln's own folders is read only from inside the project.
pub fn read_below(base: &Path, rel: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut path = base.to_owned();
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", rel.display()),
            ));
        };
        path.push(name);
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is a symbolic link", path.display()),
            ));
        }
    }
    read_regular(&path, max)
}

/// Writes `bytes` to `base/rel` atomically (see [`write_atomic`]), creating the
/// folders in between without following a symbolic link: Kiln's own folders in a
/// project (`build/`, `.kiln/`) could be links planted to carry its writes outside,
/// so a link anywhere below `base` is refused, naming it.
pub fn write_below(base: &Path, rel: &Path, bytes: &[u8]) -> io::Result<()> {
    let (parent, name) = match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => (parent, name),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", rel.display()),
            ));
        }
    };
    let path = create_dir_below(base, parent)?.join(name);
    if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(planted_link(&path));
    }
    write_atomic(&path, bytes)
}

fn planted_link(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link; Kiln does not write through links in its own folders (remove it)",
            path.display()
        ),
    )
}

/// Creates the folder `base/rel` and those in between, without following a
/// symbolic link (see [`write_below`]); returns its path.
pub fn create_dir_below(base: &Path, rel: &Path) -> io::Result<PathBuf> {
    let mut dir = base.to_owned();
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", rel.display()),
            ));
        };
        dir.push(name);
        match fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() => return Err(planted_link(&dir)),
            Ok(m) if !m.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} is not a folder", dir.display()),
                ));
            }
            Ok(_) => {}
            Err(_) => match fs::create_dir(&dir) {
                Ok(()) => {}
                // Another process (two commands at once) made it between the
                // look and the make: fine if what it made is a real folder.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let made = fs::symlink_metadata(&dir)?;
                    if made.file_type().is_symlink() {
                        return Err(planted_link(&dir));
                    }
                    if !made.is_dir() {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            },
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_file_with_merge_conflicts_names_them() {
        let text = "{\n  \"name\": {\n    \"kiln:conflict\": {\"ours\": \"A\", \"theirs\": \"B\"}\n  }\n}\n";
        let e = ProjectConfig::parse(Path::new("kiln.project"), text).unwrap_err();
        let said = e.to_string();
        assert!(
            said.contains("1 unresolved merge conflict") && said.contains("key \"name\""),
            "{said}"
        );
    }

    #[test]
    fn two_makers_of_one_folder_at_once_both_succeed() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let base = dir.path();
            let results: Vec<io::Result<PathBuf>> = std::thread::scope(|s| {
                let makers: Vec<_> = (0..4)
                    .map(|_| s.spawn(|| create_dir_below(base, Path::new("a/b/c/d"))))
                    .collect();
                makers.into_iter().map(|m| m.join().unwrap()).collect()
            });
            for made in results {
                assert_eq!(made.unwrap(), base.join("a/b/c/d"));
            }
        }
    }

    #[test]
    fn writes_below_a_folder_never_follow_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write_below(dir.path(), Path::new("build/levels/a.bin"), b"blob").unwrap();
        assert_eq!(
            fs::read(dir.path().join("build/levels/a.bin")).unwrap(),
            b"blob"
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
            let err = write_below(dir.path(), Path::new("linked/x.bin"), b"no").unwrap_err();
            assert!(err.to_string().contains("is a symbolic link"), "{err}");
            assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
        }
        assert!(write_below(dir.path(), Path::new("../x.bin"), b"no").is_err());
    }

    #[test]
    fn write_atomic_replaces_whole_files_and_leaves_no_temporary() {
        for write in [write_atomic, write_atomic_unsynced] {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("levels/a.level");
            write(&target, b"first").unwrap();
            write(&target, b"second").unwrap();
            assert_eq!(fs::read(&target).unwrap(), b"second");
            let names: Vec<_> = fs::read_dir(target.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, vec!["a.level"]);
        }
    }

    #[test]
    fn paths_leaving_the_project_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(PROJECT_FILE), "{}").unwrap();
        let outside = tempfile::tempdir().unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
        let project = Project::open(dir.path()).unwrap();
        for bad in ["../x.level", "/etc/passwd", "a/../../x"] {
            assert!(
                matches!(project.resolve(bad), Err(ProjectError::OutsideProject(_))),
                "{bad}"
            );
        }
        #[cfg(unix)]
        assert!(matches!(
            project.resolve("escape/x.level"),
            Err(ProjectError::OutsideProject(_))
        ));
        assert!(project.resolve("levels/new.level").is_ok());
    }

    #[test]
    fn project_files_are_validated() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Project::open(dir.path()),
            Err(ProjectError::NotAProject(_))
        ));
        fs::write(dir.path().join(PROJECT_FILE), "{\n  \"boot_level\": []\n}").unwrap();
        let err = Project::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("kiln.project:2:"), "{err}");
        assert!(err.contains("unknown field `boot_level`"), "{err}");
    }

    #[test]
    fn plugin_folders_are_plain_paths_inside_the_project() {
        let file = Path::new("kiln.project");
        let ok = ProjectConfig::parse(file, r#"{"plugins": ["plugins/wind", "blink"]}"#).unwrap();
        assert_eq!(ok.plugins, ["plugins/wind", "blink"]);
        for bad in [
            "../x", "/usr/lib", "a/../b", ".kiln/p", "build", "a\\\\b", "", "a//b", "c:/x",
        ] {
            let text = format!("{{\n  \"plugins\": [\"ok\", \"{bad}\"]\n}}");
            let e = ProjectConfig::parse(file, &text).unwrap_err().to_string();
            assert!(
                e.contains("is not a folder inside the project"),
                "{bad}: {e}"
            );
            assert!(e.contains("kiln.project:2:"), "{bad}: {e}");
        }
        let e = ProjectConfig::parse(file, r#"{"plugins": ["a", "a"]}"#).unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
    }

    #[test]
    fn reference_rules_are_read_and_bad_ones_named_with_their_place() {
        let file = Path::new("kiln.project");
        let config = ProjectConfig::parse(
            file,
            r#"{"references": {"unit": {"/components/*/data/mesh_resource": "mesh", "material": "material"}, "*": {"unit": "unit"}}}"#,
        )
        .unwrap();
        assert_eq!(config.references["unit"]["material"], "material");
        assert_eq!(config.references["*"]["unit"], "unit");
        let cases = [
            (
                "{\n  \"references\": {\n    \"unit\": {\"mesh\": \".mesh\"}}}",
                3,
                "without its dot",
            ),
            (
                "{\"references\": {\"Unit\": {\"mesh\": \"mesh\"}}}",
                1,
                "not a file extension",
            ),
            (
                "{\"references\": {\"unit\": {\"mesh\": \"Mesh File\"}}}",
                1,
                "not a resource type",
            ),
            (
                "{\"references\": {\"unit\": [\"mesh\"]}}",
                1,
                "invalid type",
            ),
        ];
        for (text, line, needle) in cases {
            let err = ProjectConfig::parse(file, text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("kiln.project:{line}:")),
                "{text}: {err}"
            );
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
