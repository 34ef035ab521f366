//! The project's plugins in the editor: loaded when the project opens, built off the
//! UI thread when their sources change, and swapped while the editor runs (hot
//! reload): the level is despawned, the old plugins shut down and unloaded, fresh
//! copies loaded and registered, and the level recompiled and respawned, keeping
//! camera, selection, tree state and play state.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use kiln_core::Registry;
use kiln_plugin_host::project::{Choice, PluginFolder};
use kiln_plugin_host::{LoadedPlugin, PluginError};

use kiln_core::Project;

use super::outbox::{Outbox, Severity};
use super::parts::Parts;

/// What the editor knows of the project's plugins.
#[derive(Default)]
pub struct EditorPlugins {
    pub(super) loaded: Vec<LoadedPlugin>,
    /// Why listed plugins are not loaded, for Problems.
    pub(super) errors: Vec<String>,
    /// Plugins loaded with a caveat (a prebuilt library from other sources).
    pub(super) warnings: Vec<String>,
    /// The build running in the background, if any: its folders and its result.
    building: Option<(Vec<String>, Receiver<BuildOutcome>)>,
    /// Folders whose sources changed while a build was running: built next.
    queued: Vec<String>,
    /// Called when a build finishes, so an idle window applies it.
    waker: Option<dependency_checker::watch::Waker>,
    last_swap: Option<PluginSwapTiming>,
    /// Whether the project may build and load its plugins (see [`crate::trust`]).
    pub(super) trust: PluginTrust,
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
    pub fn trust_question(&self, project: &Project) -> Option<Vec<(String, &'static str)>> {
        if self.trust != PluginTrust::Asking {
            return None;
        }
        let root = project.root();
        let described = (project.config().plugins.iter())
            .map(|entry| {
                let what = match PluginFolder::find(root, entry).map(|f| f.source) {
                    Ok(kiln_plugin_host::project::PluginSource::Cargo(_)) => {
                        "a Rust crate, built with cargo (its build script runs too) and loaded"
                    }
                    Ok(kiln_plugin_host::project::PluginSource::C(_)) => {
                        "C sources, compiled and loaded"
                    }
                    Ok(kiln_plugin_host::project::PluginSource::Library(_)) => {
                        "a built library, loaded"
                    }
                    Err(_) => "cannot be loaded as it is",
                };
                (entry.clone(), what)
            })
            .collect();
        Some(described)
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
                Ok(choice) => folder.load_chosen(&choice, &mut registry),
                Err(e) => Err(e),
            };
            match loaded {
                Ok((plugin, warning)) => {
                    folder.record_types(&plugin.component_types);
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
fn take_messages(outbox: &mut Outbox) {
    for m in kiln_plugin_host::take_messages() {
        let severity = match m.level {
            0 => Severity::Info,
            1 => Severity::Warning,
            _ => Severity::Error,
        };
        outbox.note(severity, m.text, m.level > 0);
    }
}

impl Parts<'_> {
    /// Waits for the background build, if any, at most `timeout`, and applies it.
    pub(super) fn wait_for_plugin_builds(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.plugins.building().is_empty() {
            self.poll_plugins();
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Applies a finished background build: swaps in what built, reports what did
    /// not, and starts the next queued build. Called every frame; cheap otherwise.
    pub(super) fn poll_plugins(&mut self) {
        take_messages(self.outbox);
        let Some((_, receive)) = &self.plugins.building else {
            return;
        };
        let outcome = match receive.try_recv() {
            Ok(outcome) => outcome,
            Err(std::sync::mpsc::TryRecvError::Empty) => return,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => Vec::new(),
        };
        self.plugins.building = None;
        let mut failed = Vec::new();
        let mut built = 0;
        for (entry, result) in outcome {
            match result {
                Ok(took) => {
                    built += 1;
                    self.outbox.info(format!(
                        "built plugin {entry} in {:.1} s",
                        took.as_secs_f64()
                    ));
                }
                Err(e) => failed.push((entry, e.to_string())),
            }
        }
        if built > 0 {
            self.reload_plugins();
        }
        let any_failed = !failed.is_empty();
        for (entry, e) in failed {
            self.outbox.error(e.clone());
            // The latest failure of a folder replaces its earlier one.
            let prefix = format!("plugin folder {entry}:");
            self.plugins.errors.retain(|old| !old.starts_with(&prefix));
            self.plugins.errors.push(e);
            // Its types were noted as being built; now they did not load.
            if let Ok(folder) = PluginFolder::find(self.files.project.root(), &entry) {
                folder.note_absent(Arc::make_mut(&mut self.files.registry), "failed to build");
            }
        }
        if any_failed && built == 0 {
            // What the preview left out now says why.
            self.after_edit();
        }
        let queued = std::mem::take(&mut self.plugins.queued);
        self.plugins.build(&self.files.project, queued, self.outbox);
    }

    /// Hot reload: despawns the level, shuts every plugin down and unloads it, loads
    /// them again from fresh copies, and recompiles and respawns the open level.
    pub(super) fn reload_plugins(&mut self) {
        let start = Instant::now();
        // The instances live in the plugins: the world goes before they do.
        self.preview.runtime.clear();
        for plugin in self.plugins.loaded.drain(..) {
            plugin.shutdown();
        }
        // Nothing may keep a function pointer into the old code: the registry's
        // types and the checker's copy of the registry go too.
        self.files.registry = Arc::new(Registry::with_builtins());
        // Built with the old plugins' code.
        self.disk.forget_disk_build();
        self.files.checker = None;
        let (registry, to_build) = self.plugins.load(&self.files.project, self.outbox);
        self.files.registry = Arc::new(registry);
        let swap_ms = start.elapsed().as_secs_f64() * 1000.0;
        let start = Instant::now();
        self.after_edit();
        let respawn_ms = start.elapsed().as_secs_f64() * 1000.0;
        self.plugins.last_swap = Some(PluginSwapTiming {
            swap_ms,
            respawn_ms,
        });
        let names: Vec<&str> = self
            .plugins
            .loaded
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        self.outbox.info(format!(
            "plugins reloaded ({}) in {:.1} ms",
            names.join(", "),
            swap_ms + respawn_ms
        ));
        // New schemas: the index's typed references follow them.
        self.refresh_problems();
        self.plugins
            .build(&self.files.project, to_build, self.outbox);
    }

    /// Builds every plugin the project lists and swaps them in (the menu's
    /// "Rebuild and reload plugins").
    pub(super) fn rebuild_plugins(&mut self) {
        if self.plugins.trust != PluginTrust::Trusted {
            return self.plugins.ask_trust(&self.files.project, self.outbox);
        }
        let all = self.files.project.config().plugins.clone();
        if all.is_empty() {
            self.outbox
                .info("this project lists no plugins (\"plugins\" in kiln.project)".to_owned());
        }
        self.plugins.build(&self.files.project, all, self.outbox);
    }

    /// Plugin folders holding any of the `changed` files: rebuilt (when their
    /// sources need it) and reloaded.
    pub(super) fn plugin_folders_changed(&mut self, changed: &[String]) {
        if self.plugins.trust != PluginTrust::Trusted {
            return;
        }
        let touched: Vec<String> = self
            .files
            .project
            .config()
            .plugins
            .iter()
            .filter(|entry| {
                changed
                    .iter()
                    .any(|c| dependency_checker::fs::is_within(c, entry))
            })
            .cloned()
            .collect();
        // A new prebuilt library (pulled with the sources it came from) needs no
        // build: the plugins are swapped at once.
        let root = self.files.project.root().to_owned();
        let (build, swap): (Vec<String>, Vec<String>) = touched.into_iter().partition(|entry| {
            PluginFolder::find(&root, entry).is_ok_and(|f| f.choose() == Ok(Choice::Build))
        });
        if !swap.is_empty() && build.is_empty() && self.plugins.building.is_none() {
            self.reload_plugins();
            return;
        }
        self.plugins.build(
            &self.files.project,
            build.into_iter().chain(swap).collect(),
            self.outbox,
        );
    }

    /// The user's answer to [`EditorPlugins::trust_question`]: remembered for the
    /// project; trusted, the plugins are built and loaded now.
    pub(super) fn answer_trust(&mut self, trust: bool) {
        let answer = if trust {
            crate::trust::Answer::Trusted
        } else {
            crate::trust::Answer::Declined
        };
        if let Err(e) = crate::trust::remember(self.files.project.root(), answer) {
            // Answered for this session all the same.
            self.outbox.note(Severity::Warning, format!("{e:#}"), true);
        }
        if trust {
            self.plugins.trust = PluginTrust::Trusted;
            self.outbox
                .info("this project is trusted: its plugins are built and loaded".to_owned());
            self.reload_plugins();
        } else {
            self.plugins.trust = PluginTrust::Declined;
            self.refresh_problems();
        }
    }
}
