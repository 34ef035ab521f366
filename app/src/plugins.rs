//! A project's plugins for the headless commands: built if their sources changed,
//! loaded, and their component types added to the registry every command uses.
//! The editor loads them itself (it also reloads them); see `editor::model`.

use std::io::Write;
use std::path::Path;

use kiln_core::{Project, Registry};
use kiln_plugin_host::prebuilt::platform;
use kiln_plugin_host::project::{
    Build, Choice, PluginFolder, PluginSource, ProjectPlugins, leave_out_project, load_project,
};

use crate::outcome::Outcome;

/// The built-in component types plus those of the project's plugins. Keep the
/// [`ProjectPlugins`] while the registry is in use: dropping it shuts them down.
/// In a project that is not trusted (see [`crate::trust`]), the plugins are left
/// out: nothing of theirs is built or run.
pub fn registry_with_plugins(project: &Project) -> (Registry, ProjectPlugins) {
    let mut registry = Registry::with_builtins();
    let entries = &project.config().plugins;
    let plugins = if entries.is_empty() || crate::trust::is_trusted(project.root()) {
        crate::trust::apply_source_preference(project.root());
        load_project(project.root(), entries, &mut registry, Build::IfNeeded)
    } else {
        leave_out_project(project.root(), entries, &mut registry, NOT_TRUSTED)
    };
    (registry, plugins)
}

/// Why a plugin of a project that is not trusted is not loaded, as a component of
/// its type reports it ("its type comes from plugin X, which ...").
pub const NOT_TRUSTED: &str =
    "is not loaded: the project is not trusted (run with --trust, or KILN_TRUST=1)";

/// A hash of the libraries `loaded` came from (each path, size and time): their
/// code compiles their components, so what `kiln check` recorded of a level's
/// compile holds only while they are the same.
pub fn libraries_fingerprint(loaded: &[kiln_plugin_host::LoadedPlugin]) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for plugin in loaded {
        hasher.update(plugin.path.as_os_str().as_encoded_bytes());
        if let Ok(meta) = std::fs::metadata(&plugin.path) {
            let time = (meta.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            hasher.update(&meta.len().to_le_bytes());
            hasher.update(&time.to_le_bytes());
        }
    }
    hasher.digest()
}

/// Says on `err` (stderr: stdout stays the command's result) which plugins were
/// built, what they logged, and, unless the command reports them itself
/// (`with_errors` false), why some did not load and which loaded with a caveat.
pub fn report(plugins: &ProjectPlugins, with_errors: bool, err: &mut dyn Write) {
    if !plugins.left_out.is_empty() {
        let _ = writeln!(
            err,
            "note: {}",
            crate::trust::left_out_note(&plugins.left_out)
        );
    }
    for (entry, took) in &plugins.built {
        let _ = writeln!(err, "built plugin {entry} in {:.1} s", took.as_secs_f64());
    }
    if with_errors {
        for w in &plugins.warnings {
            let _ = writeln!(err, "warning: {w}");
        }
        for e in &plugins.errors {
            let _ = writeln!(err, "error: {e}");
        }
    }
    for m in kiln_plugin_host::take_messages() {
        let level = match m.level {
            0 => "info",
            1 => "warning",
            _ => "error",
        };
        let _ = writeln!(err, "{level}: {}", m.text);
    }
}

/// `kiln plugins status`: how each plugin of the project loads on this machine.
pub fn status(project_dir: &Path, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let project = Project::open(project_dir)?;
    let root = project.root();
    let entries = &project.config().plugins;
    if entries.is_empty() {
        writeln!(
            out,
            "this project lists no plugins (\"plugins\" in kiln.project)"
        )?;
        return Ok(Outcome::Done);
    }
    crate::trust::apply_source_preference(root);
    let from_sources = crate::trust::builds_from_sources(root);
    let mut unloadable = 0;
    for entry in entries {
        let folder = match PluginFolder::find(root, entry) {
            Ok(f) => f,
            Err(e) => {
                unloadable += 1;
                writeln!(out, "{entry}: cannot load: {e}")?;
                continue;
            }
        };
        let builder = folder.builder().map(|p| p.to_string_lossy().into_owned());
        let kind = match &folder.source {
            PluginSource::Cargo(_) => "a Rust crate",
            PluginSource::C(_) => "C sources",
            PluginSource::Library(_) => "a built library",
        };
        let tool = match &builder {
            Some(b) if folder.can_build() => format!(", {b} is here"),
            Some(b) => format!(", no {b} here"),
            None => String::new(),
        };
        writeln!(out, "{entry}: {kind}{tool}")?;
        let here = platform();
        match folder.prebuilt() {
            Some((_, stamp)) => {
                let matches =
                    stamp.sources == kiln_plugin_host::project::source_stamp(&folder.folder);
                writeln!(
                    out,
                    "  prebuilt for {here}: {} (types: {})",
                    if matches {
                        "built from these sources"
                    } else {
                        "built from other sources"
                    },
                    stamp.types.join(", ")
                )?;
            }
            None if builder.is_some() => writeln!(out, "  prebuilt for {here}: none")?,
            None => {}
        }
        let loads = match folder.choose() {
            Ok(Choice::Built) if builder.is_none() => {
                format!("its own library {}", folder.library().display())
            }
            Ok(Choice::Built) => "the library built here, up to date".to_owned(),
            Ok(Choice::Prebuilt(_)) => format!("the prebuilt library for {here}"),
            Ok(Choice::Build) if from_sources && folder.prebuilt().is_some() => {
                "built here from its sources first (this project's plugins are built from \
                 sources: a prebuilt library is never loaded where they can be)"
                    .to_owned()
            }
            Ok(Choice::Build) => "built first: its sources changed since the last build".to_owned(),
            Ok(Choice::StalePrebuilt(_)) => format!(
                "the prebuilt library for {here}, with a warning: it was built from other sources"
            ),
            Err(e) => {
                unloadable += 1;
                format!("nothing: {e}")
            }
        };
        writeln!(out, "  loads: {loads}")?;
    }
    Ok(if unloadable == 0 {
        Outcome::Done
    } else {
        Outcome::Findings
    })
}

/// `kiln plugins prebuild`: builds each plugin and keeps its library with a stamp of
/// its sources in `<plugin>/prebuilt/<platform>/`.
pub fn prebuild(project_dir: &Path, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let project = Project::open(project_dir)?;
    let root = project.root();
    if !project.config().plugins.is_empty() && !crate::trust::is_trusted(root) {
        anyhow::bail!("{}", crate::trust::left_out_note(&project.config().plugins));
    }
    let mut failed = 0;
    let mut made = 0;
    for entry in &project.config().plugins {
        let start = std::time::Instant::now();
        let result = PluginFolder::find(root, entry).and_then(|folder| match folder.source {
            PluginSource::Library(_) => Ok(None),
            _ => folder.prebuild().map(Some),
        });
        match result {
            Ok(Some(library)) => {
                made += 1;
                let shown = library.strip_prefix(root).unwrap_or(&library);
                writeln!(
                    out,
                    "prebuilt {entry} for {} in {:.1} s: {}",
                    platform(),
                    start.elapsed().as_secs_f64(),
                    shown.display()
                )?;
            }
            Ok(None) => writeln!(out, "{entry}: a built library already; nothing to prebuild")?,
            Err(e) => {
                failed += 1;
                writeln!(out, "error: {e}")?;
            }
        }
    }
    for m in kiln_plugin_host::take_messages() {
        if m.level > 0 {
            writeln!(out, "plugin said: {}", m.text)?;
        }
    }
    if made > 0 {
        writeln!(
            out,
            "commit the prebuilt/ folders: teammates without a compiler load them while they match the sources"
        )?;
    }
    Ok(Outcome::findings_if(failed != 0))
}
