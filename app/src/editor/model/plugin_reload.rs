//! Plugins swapped while the editor runs (hot reload): a finished build is
//! taken in, the level despawned, the old plugins shut down and unloaded, fresh
//! copies loaded and registered, and the level recompiled and respawned,
//! keeping camera, selection, tree state and play state. What the editor knows
//! of the plugins themselves is `plugins.rs`; this reaches every part, so it is
//! a method of `Parts`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln_core::Registry;
use kiln_plugin_host::project::{Choice, PluginFolder};

use super::outbox::Severity;
use super::parts::Parts;
use super::plugins::{PluginSwapTiming, PluginTrust, take_messages};

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
    pub(super) fn answer_trust(&mut self, trust: bool, from_sources: bool) {
        let answer = match (trust, from_sources) {
            (true, false) => crate::trust::Answer::Trusted,
            (true, true) => crate::trust::Answer::TrustedFromSources,
            (false, _) => crate::trust::Answer::Declined,
        };
        let root = self.files.project.root();
        if let Err(e) = crate::trust::remember(root, answer) {
            // Answered for this session all the same.
            self.outbox.note(Severity::Warning, format!("{e:#}"), true);
        }
        kiln_plugin_host::project::build_from_sources(
            root,
            trust && (from_sources || crate::trust::builds_from_sources(root)),
        );
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
