//! The project's plugins in the editor: loaded when the project opens, built off the
//! UI thread when their sources change, and swapped while the editor runs (hot
//! reload): the level is despawned, the old plugins shut down and unloaded, fresh
//! copies loaded and registered, and the level recompiled and respawned, keeping
//! camera, selection, tree state and play state.

use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use kiln_core::Registry;
use kiln_plugin_host::project::{Choice, PluginFolder};
use kiln_plugin_host::{LoadedPlugin, PluginError};

use kiln_core::Project;

use super::outbox::{Outbox, Severity};

/// What the editor knows of the project's plugins.
#[derive(Default)]
pub struct EditorPlugins {
    pub(super) loaded: Vec<LoadedPlugin>,
    /// Why listed plugins are not loaded, for Problems.
    pub(super) errors: Vec<String>,
    /// Plugins loaded with a caveat (a prebuilt library from other sources).
    pub(super) warnings: Vec<String>,
    /// The build running in the background, if any: its folders and its result.
    pub(super) building: Option<(Vec<String>, Receiver<BuildOutcome>)>,
    /// Folders whose sources changed while a build was running: built next.
    pub(super) queued: Vec<String>,
    /// Called when a build finishes, so an idle window applies it.
    waker: Option<dependency_checker::watch::Waker>,
    pub(super) last_swap: Option<PluginSwapTiming>,
    /// Whether the project may build and load its plugins (see [`crate::trust`]).
    pub(super) trust: PluginTrust,
}

/// What the trust question says of a project's plugins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustQuestion {
    /// Each plugin, and what of it would run.
    pub plugins: Vec<(String, String)>,
    /// Whether a plugin would load a library shipped with the project where this
    /// machine could build its sources instead: the question then offers to.
    pub can_build_shipped: bool,
}

/// Whether the open project's plugins may be built and run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PluginTrust {
    /// Trusted (or it has no plugins).
    #[default]
    Trusted,
    /// Not yet: the editor asks, and loads none until it is answered.
    Asking,
    /// The user said no: the plugins stay out, and Problems says how to trust it.
    Declined,
}

impl PluginTrust {
    /// Where a project opening stands: trusted by `--trust`, `KILN_TRUST=1` or an
    /// earlier answer, declined by an earlier answer, or to be asked.
    pub(super) fn at_open(project: &kiln_core::Project) -> Self {
        let root = project.root();
        crate::trust::apply_source_preference(root);
        if project.config().plugins.is_empty() || crate::trust::is_trusted(root) {
            return PluginTrust::Trusted;
        }
        match crate::trust::remembered(root) {
            Some(crate::trust::Answer::Declined) => PluginTrust::Declined,
            _ => PluginTrust::Asking,
        }
    }
}

type BuildOutcome = Vec<(String, Result<Duration, PluginError>)>;

/// How long the last plugin swap took, build excluded.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PluginSwapTiming {
    /// Despawning the level, shutting the old plugins down and loading the new ones.
    pub swap_ms: f64,
    /// Recompiling and respawning the open level.
    pub respawn_ms: f64,
}

impl std::fmt::Debug for EditorPlugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorPlugins")
            .field("errors", &self.errors)
            .field("trust", &self.trust)
            .finish_non_exhaustive()
    }
}

impl EditorPlugins {
    pub(super) fn new(waker: Option<dependency_checker::watch::Waker>) -> Self {
        EditorPlugins {
            waker,
            ..Default::default()
        }
    }
}

impl EditorPlugins {
    /// The plugins that are loaded.
    pub fn loaded(&self) -> &[LoadedPlugin] {
        &self.loaded
    }

    /// Why plugins the project lists are not loaded (shown in Problems).
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Plugins loaded with a caveat: a prebuilt library built from other sources
    /// than the folder holds, where nothing can build them (shown in Problems).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Whether a plugin the project lists is not loaded (it failed, or the project
    /// is not trusted, or it is being built).
    pub fn some_not_loaded(&self, config: &kiln_core::ProjectConfig) -> bool {
        !self.errors.is_empty() || self.loaded.len() < config.plugins.len()
    }

    /// The plugin folders being built in the background.
    pub fn building(&self) -> &[String] {
        self.building.as_ref().map_or(&[], |(f, _)| f)
    }

    /// How long the last hot reload of plugins took.
    pub fn last_swap(&self) -> Option<PluginSwapTiming> {
        self.last_swap
    }

    /// The project's plugins and what of each would run, while the editor asks
    /// whether the project is trusted to build and load them.
    pub fn trust_question(&self, project: &Project) -> Option<TrustQuestion> {
        if self.trust != PluginTrust::Asking {
            return None;
        }
        let root = project.root();
        let mut can_build_shipped = false;
        let described = (project.config().plugins.iter())
            .map(|entry| {
                let folder = PluginFolder::find(root, entry);
                let kind = match folder.as_ref().map(|f| &f.source) {
                    Ok(kiln_plugin_host::project::PluginSource::Cargo(_)) => {
                        "a Rust crate, built here with cargo, then loaded"
                    }
                    Ok(kiln_plugin_host::project::PluginSource::C(_)) => {
                        "C sources, compiled here with the C compiler, then loaded"
                    }
                    Ok(kiln_plugin_host::project::PluginSource::Library(_)) => {
                        "a built library in its folder, loaded as it is"
                    }
                    Err(_) => "cannot be loaded as it is",
                };
                // What would run: a library shipped with the project loads as it
                // is, whatever its sources say (what a designer without a
                // compiler trusts is the team's prebuilt one).
                let chosen = folder.as_ref().ok().and_then(|f| Some((f, f.choose().ok()?)));
                let shipped = chosen.as_ref().and_then(|(_, choice)| match choice {
                    Choice::Prebuilt(library) | Choice::StalePrebuilt(library) => {
                        Some(library.clone())
                    }
                    _ => None,
                });
                if let (Some((f, _)), Some(_)) = (&chosen, &shipped) {
                    can_build_shipped |= f.can_build();
                }
                let mut what = match (chosen, shipped) {
                    (Some((f, choice)), Some(library)) => {
                        let size = std::fs::metadata(&library).map_or(0, |m| m.len());
                        let shown = library.strip_prefix(root).unwrap_or(&library);
                        format!(
                            "loads {} ({} KB), a library shipped with the project, not built here: {}",
                            shown.display(),
                            size.div_ceil(1024),
                            f.describe(&choice)
                        )
                    }
                    _ => kind.to_owned(),
                };
                // Files outside the sources' code that take part in a build: each
                // can run a program of its own (a build script, a rustc wrapper).
                let mut building = Vec::new();
                let cargo = matches!(
                    folder.as_ref().map(|f| &f.source),
                    Ok(kiln_plugin_host::project::PluginSource::Cargo(_))
                );
                let parts: &[&str] = if cargo {
                    &["build.rs", ".cargo/config.toml", ".cargo/config"]
                } else {
                    &["kiln_plugin.json"]
                };
                for part in parts {
                    if kiln_core::fs::kind_below(root, &format!("{entry}/{part}")).is_some() {
                        building.push(format!("{entry}/{part}"));
                    }
                }
                // Cargo reads the project's own configuration too.
                for part in [".cargo/config.toml", ".cargo/config"] {
                    if cargo && kiln_core::fs::kind_below(root, part).is_some() {
                        building.push(part.to_owned());
                    }
                }
                if !building.is_empty() {
                    what.push_str(&format!(
                        "; its build also follows {}",
                        building.join(", ")
                    ));
                }
                (entry.clone(), what)
            })
            .collect();
        Some(TrustQuestion {
            plugins: described,
            can_build_shipped,
        })
    }

    /// Asks (again) whether the project is trusted to build and load its plugins.
    pub(super) fn ask_trust(&mut self, project: &Project, outbox: &mut Outbox) {
        if project.config().plugins.is_empty() {
            outbox.info("this project lists no plugins (\"plugins\" in kiln.project)".to_owned());
            return;
        }
        if crate::trust::trusted_by_flag() {
            return outbox
                .info("every project is trusted in this run (--trust or KILN_TRUST=1)".to_owned());
        }
        self.trust = PluginTrust::Asking;
    }

    /// A registry of the built-in types plus the plugins of `project` whose
    /// libraries are up to date; the others are returned to be built in the
    /// background.
    pub(super) fn load(
        &mut self,
        project: &Project,
        outbox: &mut Outbox,
    ) -> (Registry, Vec<String>) {
        let mut registry = Registry::with_builtins();
        let root = project.root().to_owned();
        if self.trust != PluginTrust::Trusted {
            // Nothing of theirs is built or run; their types say where they come
            // from.
            let entries = project.config().plugins.clone();
            let left = kiln_plugin_host::project::leave_out_project(
                &root,
                &entries,
                &mut registry,
                "is not loaded: the project is not trusted (Simulation > Trust this project…)",
            );
            let note = format!(
                "plugins not loaded ({}): this project is not trusted, and plugins are code Kiln builds and runs (Simulation > Trust this project… to load them)",
                entries.join(", ")
            );
            self.errors = left.errors.iter().map(ToString::to_string).collect();
            self.warnings = vec![note];
            return (registry, Vec::new());
        }
        kiln_plugin_host::project::remove_stale_copies(&root);
        let mut to_build = Vec::new();
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let mut origins = Vec::new();
        for entry in &project.config().plugins {
            let folder = match PluginFolder::find(&root, entry) {
                Ok(folder) => folder,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            let loaded = match folder.choose() {
                Ok(Choice::Build) => {
                    folder.note_absent(&mut registry, "is being built");
                    to_build.push(entry.clone());
                    continue;
                }
                Ok(choice) => folder
                    .load_chosen(&choice, &mut registry)
                    .map(|loaded| (loaded, folder.describe(&choice))),
                Err(e) => Err(e),
            };
            match loaded {
                Ok(((plugin, warning), from)) => {
                    folder.record_types(&plugin.component_types);
                    origins.push(format!("{entry} from {from}"));
                    self.loaded.push(plugin);
                    warnings.extend(warning);
                }
                Err(e) => {
                    folder.note_absent(&mut registry, "did not load");
                    errors.push(e.to_string());
                }
            }
        }
        for e in &errors {
            outbox.note(Severity::Error, e.clone(), false);
        }
        for w in &warnings {
            outbox.note(Severity::Warning, w.clone(), true);
        }
        self.warnings = warnings;
        if !self.loaded.is_empty() {
            let names: Vec<String> = self
                .loaded
                .iter()
                .map(|p| format!("{} ({})", p.name, p.component_types.join(", ")))
                .collect();
            outbox.info(format!("plugins loaded: {}", names.join("; ")));
            for o in &origins {
                outbox.info(format!("plugin {o}"));
            }
        }
        self.errors = errors;
        take_messages(outbox);
        (registry, to_build)
    }

    /// Builds `folders` on another thread; `Parts::poll_plugins` swaps them in
    /// when done. A build already running finishes first.
    pub(super) fn build(&mut self, project: &Project, folders: Vec<String>, outbox: &mut Outbox) {
        if folders.is_empty() || self.trust != PluginTrust::Trusted {
            return;
        }
        if self.building.is_some() {
            for f in folders {
                if !self.queued.contains(&f) {
                    self.queued.push(f);
                }
            }
            return;
        }
        outbox.info(format!("building plugin {}", folders.join(", ")));
        let root = project.root().to_owned();
        let (send, receive) = channel();
        let waker = self.waker.clone();
        let list = folders.clone();
        let spawned = std::thread::Builder::new()
            .name("kiln plugin build".into())
            .spawn(move || {
                let outcome: BuildOutcome = list
                    .into_iter()
                    .map(|entry| {
                        // What cannot be built here is only reloaded: loading then
                        // takes a prebuilt library or says why there is none.
                        let built = PluginFolder::find(&root, &entry).and_then(|f| {
                            if f.can_build() {
                                f.build()
                            } else {
                                Ok(Duration::ZERO)
                            }
                        });
                        (entry, built)
                    })
                    .collect();
                let _ = send.send(outcome);
                if let Some(wake) = waker {
                    wake();
                }
            });
        match spawned {
            Ok(_) => self.building = Some((folders, receive)),
            Err(e) => outbox.error(format!("could not start building plugins: {e}")),
        }
    }
}

/// Moves what plugins logged into the editor's log (warnings and errors are
/// toasts too).
pub(super) fn take_messages(outbox: &mut Outbox) {
    for m in kiln_plugin_host::take_messages() {
        let severity = match m.level {
            0 => Severity::Info,
            1 => Severity::Warning,
            _ => Severity::Error,
        };
        outbox.note(severity, m.text, m.level > 0);
    }
}
