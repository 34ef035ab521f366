//! A project's plugins for the headless commands: built if their sources changed,
//! loaded, and their component types added to the registry every command uses.
//! The editor loads them itself (it also reloads them); see `editor::model`.

use std::io::Write;

use kiln_core::{Project, Registry};
use kiln_plugin_host::project::{Build, ProjectPlugins, load_project};

/// The built-in component types plus those of the project's plugins. Keep the
/// [`ProjectPlugins`] while the registry is in use: dropping it shuts them down.
pub fn registry_with_plugins(project: &Project) -> (Registry, ProjectPlugins) {
    let mut registry = Registry::with_builtins();
    let plugins = load_project(
        project.root(),
        &project.config().plugins,
        &mut registry,
        Build::IfNeeded,
    );
    (registry, plugins)
}

/// Says on `err` (stderr: stdout stays the command's result) which plugins were
/// built, what they logged, and, unless the command reports them itself, why some
/// did not load.
pub fn report(plugins: &ProjectPlugins, with_errors: bool, err: &mut dyn Write) {
    for (entry, took) in &plugins.built {
        let _ = writeln!(err, "built plugin {entry} in {:.1} s", took.as_secs_f64());
    }
    if with_errors {
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
