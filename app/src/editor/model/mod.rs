//! The editor's state and the one place where actions change it. No egui here: tests
//! drive [`Editor::apply`] directly, and the GUI is a view that reads the state and
//! emits actions.
//!
//! The state is held in parts, each in its own file with its own methods, taking
//! the other parts they need as parameters (no part knows [`Editor`]):
//! - [`ProjectFiles`] (`project_files`): the project, its types, its index and
//!   what it finds, and what is asked of files before a write.
//! - [`OpenLevel`] (`open_level`): the level being edited, its tree, selection,
//!   units and crash recovery (`recovery`); its edits are planned from actions
//!   in `level_edits` (on the pure functions of `entity_edits`), which says how
//!   the preview follows each.
//! - [`PreviewState`] (`preview_state`): the runtime world and what the viewport
//!   draws; field edits are written into it in place (`field_edits`).
//! - [`DiskFollow`] (`disk_follow`): what follows changes made outside the
//!   editor (`live_reload`).
//! - [`Opening`] (`opening`): a level opening, on a worker when it is large
//!   (`level_loading`).
//! - [`Outbox`] (`outbox`): the log, toasts and effects for the view.
//! - the [`History`], and [`EditorPlugins`] (`plugins`).
//!
//! What reaches nearly every part (a step of the history, a change of files in
//! `file_changes`, a plugin reload) is a method of `Parts`, the parts borrowed
//! apart (`parts`). Here: [`Editor::apply`] (dispatch), [`Editor::tick`], what
//! panels read; `served` answers commands typed in a terminal.

mod clipboard;
pub mod conflicts;
mod disk_follow;
pub mod entity_edits;
pub mod entity_links;
mod field_edits;
mod file_changes;
pub mod import;
pub mod level_edits;
pub mod level_loading;
mod live_reload;
mod open_level;
mod opening;
mod outbox;
mod parts;
mod plugin_reload;
mod plugins;
pub mod prefab_parts;
mod preview_state;
pub mod project_files;
mod recovery;
mod served;

use std::path::Path;
use std::time::Duration;

use kiln_core::{EntityDocument, Project};

use super::actions::{Action, UiCommand};
use super::history::History;
use super::preview::Preview;
use super::tree::SceneTree;
pub use disk_follow::{DiskFollow, ReloadPath, ReloadTiming};
use level_edits::{Follow, LevelEdit, Planned};
pub use open_level::OpenLevel;
pub use opening::Opening;
pub use outbox::{Effect, LogLine, Outbox, Severity};
use parts::Parts;
pub use plugins::{EditorPlugins, PluginSwapTiming, TrustQuestion};
pub use preview_state::PreviewState;
pub use project_files::ProjectFiles;

/// The editor's whole state, in parts. Fields are private: panels read them
/// through the accessors and change them only by returning [`Action`]s.
pub struct Editor {
    files: ProjectFiles,
    /// The level being edited, with its tree, selection and recovery.
    level: Option<OpenLevel>,
    disk: DiskFollow,
    opening: Opening,
    preview: PreviewState,
    outbox: Outbox,
    history: History,
    plugins: EditorPlugins,
    /// Entities copied with Copy. Not the open level's: they are pasted into the
    /// next level opened as well.
    clipboard: Vec<EntityDocument>,
}

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Editor")
            .field("project", &self.files.project.root())
            .field("level", &self.level.as_ref().map(|l| &l.file))
            .finish_non_exhaustive()
    }
}

/// An empty tree, for views of an editor with no level open.
static NO_TREE: std::sync::LazyLock<SceneTree> = std::sync::LazyLock::new(SceneTree::default);

/// The parts, and the questions asked most often of them, for panels and tests.
impl Editor {
    /// The project's files, types and index.
    pub fn files(&self) -> &ProjectFiles {
        &self.files
    }
    /// What follows changes made on disk.
    pub fn disk(&self) -> &DiskFollow {
        &self.disk
    }
    /// What follows changes made on disk, to take its sync cookies or tune it.
    pub fn disk_mut(&mut self) -> &mut DiskFollow {
        &mut self.disk
    }
    /// The preview world and what the viewport draws.
    pub fn preview_state(&self) -> &PreviewState {
        &self.preview
    }
    /// The project's plugins.
    pub fn plugins(&self) -> &EditorPlugins {
        &self.plugins
    }
    /// The level being edited.
    pub fn level(&self) -> Option<&OpenLevel> {
        self.level.as_ref()
    }
    /// The undo history.
    pub fn history(&self) -> &History {
        &self.history
    }
    /// The log panel's lines.
    pub fn log(&self) -> &[LogLine] {
        self.outbox.log()
    }
    /// The hierarchy of the open level.
    pub fn tree(&self) -> &SceneTree {
        self.level.as_ref().map_or(&NO_TREE, |l| &l.tree)
    }
    /// Selected authoring ids; the first is the primary one.
    pub fn selection(&self) -> &[String] {
        self.level.as_ref().map_or(&[], |l| &l.selection)
    }
    /// The entity with authoring id `id` in the open level.
    pub fn entity(&self, id: &str) -> Option<&EntityDocument> {
        self.level.as_ref()?.entity(id)
    }
    /// The open document's merge conflicts still to resolve.
    pub fn conflicts(&self) -> &[kiln_core::conflict::Conflict] {
        self.level.as_ref().map_or(&[], |l| &l.doc.conflicts)
    }
    /// What the last merge broke across files, still to fix (see
    /// `merge_check.rs`).
    pub fn cross_file_conflicts(&self) -> &[crate::merge_check::CrossFileConflict] {
        self.files.cross_file_conflicts()
    }
    /// The runtime world spawned from the level.
    pub fn preview(&self) -> &Preview {
        &self.preview.runtime
    }
    /// The world pose of an entity in the preview world, if it has a transform there.
    pub fn world_pose(&self, id: &str) -> Option<glam::Affine3A> {
        self.preview.world_pose(id)
    }
    /// Whether the open level differs from its file.
    pub fn is_dirty(&self) -> bool {
        self.level.is_some() && self.history.is_dirty()
    }
    /// Whether `file` is the level open now.
    pub fn is_open(&self, file: &str) -> bool {
        self.level.as_ref().is_some_and(|l| l.file == file)
    }
    /// The level being opened on a worker thread, if any.
    pub fn opening(&self) -> Option<level_loading::OpeningStatus> {
        self.opening.status()
    }
    /// The project's plugins and what of each would run, while the editor asks
    /// whether the project is trusted to build and load them.
    pub fn trust_question(&self) -> Option<TrustQuestion> {
        self.plugins.trust_question(&self.files.project)
    }
}

impl Editor {
    /// Opens the project at `dir` and its first level, watching its files.
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        Self::open_with_waker(dir, None)
    }

    /// Like [`Editor::open`], calling `waker` whenever the watcher has changes ready
    /// (the GUI passes its repaint request, so an idle window applies them).
    pub fn open_with_waker(
        dir: &Path,
        waker: Option<dependency_checker::watch::Waker>,
    ) -> anyhow::Result<Self> {
        let mut editor = Editor {
            files: ProjectFiles::new(Project::open(dir)?)?,
            level: None,
            disk: DiskFollow::default(),
            opening: Opening::new(waker.clone()),
            preview: PreviewState::default(),
            outbox: Outbox::default(),
            history: History::default(),
            plugins: EditorPlugins::new(waker.clone()),
            clipboard: Vec::new(),
        };
        if let Some(level) = editor.parts().start(waker) {
            editor.open_level(&level);
        }
        Ok(editor)
    }

    /// The parts a step reaches, and the history apart from them.
    fn split(&mut self) -> (Parts<'_>, &mut History) {
        let parts = Parts {
            files: &mut self.files,
            level: &mut self.level,
            preview: &mut self.preview,
            disk: &mut self.disk,
            plugins: &mut self.plugins,
            outbox: &mut self.outbox,
        };
        (parts, &mut self.history)
    }

    fn parts(&mut self) -> Parts<'_> {
        self.split().0
    }

    /// The most one step of Play may take: a plugin still running after it is
    /// stopped, and the level spawned again without it.
    pub fn set_frame_budget(&mut self, budget: std::time::Duration) {
        self.preview.frame_budget = Some(budget);
    }

    /// Keeps at most `steps` undo steps.
    pub fn set_undo_capacity(&mut self, steps: usize) {
        self.history.set_capacity(steps);
    }

    /// The frame's own work, apart from the user's actions: folds in changes made
    /// outside the editor, advances the simulation by `dt` seconds while it plays,
    /// and keeps the recovery file at most `recovery_interval` behind.
    pub fn tick(&mut self, dt: f32, recovery_interval: Duration) {
        self.poll_opening();
        self.poll_changes();
        self.poll_plugins();
        if self.preview.runtime.playing {
            let registry = &self.files.registry;
            (self.preview).step_simulation(dt, &self.plugins, registry, &mut self.outbox);
        }
        self.write_recovery(recovery_interval);
    }

    /// Folds changes made outside the editor into the index, and recompiles and
    /// respawns the open level if the change reaches it (the graph decides).
    /// Called every frame; cheap when nothing changed.
    pub fn poll_changes(&mut self) {
        let (mut parts, history) = self.split();
        parts.poll_changes(history);
    }

    /// Applies a finished background build of plugins (called every frame).
    pub fn poll_plugins(&mut self) {
        self.parts().poll_plugins();
    }

    /// Hot reload: despawns the level, shuts every plugin down and unloads it,
    /// loads them again from fresh copies, and recompiles and respawns the level.
    pub fn reload_plugins(&mut self) {
        self.parts().reload_plugins();
    }

    /// Waits for the background build of plugins, if any, at most `timeout`, and
    /// applies it (tests and the headless frame; the window does not wait).
    pub fn wait_for_plugin_builds(&mut self, timeout: Duration) -> bool {
        self.parts().wait_for_plugin_builds(timeout)
    }

    /// Writes the open level's unsaved edits to its recovery file if the last
    /// write is more than `interval` old.
    pub fn write_recovery(&mut self, interval: Duration) {
        if let Some(level) = &mut self.level {
            let dirty = self.history.is_dirty();
            let (project, registry) = (&self.files.project, &self.files.registry);
            level.write_recovery(project, registry, dirty, interval, &mut self.outbox);
        }
    }

    /// What applying actions asked of the view since the last call.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        self.outbox.take_effects()
    }

    /// Logs information.
    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.outbox.info(text);
    }

    /// Opens a level, replacing the current one (the GUI asks about unsaved edits
    /// first). A large one opens on a worker thread: see [`Editor::opening`].
    fn open_level(&mut self, file: &str) {
        if let Some(opened) = self.opening.open(&self.files, file, &mut self.outbox) {
            let (mut parts, history) = self.split();
            parts.install_level(opened, history);
        }
    }

    /// Opens levels of at least `bytes` on a worker thread (tests use 0 to take that
    /// path with a small level).
    pub fn set_background_open_threshold(&mut self, bytes: u64) {
        self.opening.background_open_bytes = bytes;
    }

    /// Waits until a level opening on the worker is open (benchmarks and tools that
    /// drive the editor without a window).
    pub fn finish_opening(&mut self) {
        while self.opening.load.is_some() {
            self.poll_opening();
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Installs a level the worker finished.
    fn poll_opening(&mut self) {
        if let Some(opened) = self.opening.poll(&mut self.outbox) {
            let (mut parts, history) = self.split();
            parts.install_level(opened, history);
        }
    }

    /// The open level was deleted: another one opens, if there is one.
    fn close_level(&mut self) {
        self.level = None;
        self.preview.close();
        self.files.reread_levels();
        if let Some(next) = self.files.levels.first().cloned() {
            self.open_level(&next);
        }
    }

    /// Applies an edit of the open document through the history, and follows it
    /// as it says.
    fn edit(&mut self, edit: LevelEdit) {
        let Some(level) = &mut self.level else { return };
        (self.history).push_into(&mut level.doc, edit.edit, edit.continuing, edit.amends);
        let in_place = match &edit.follow {
            Follow::Fields(fields) => self.preview.follow_fields(level, &self.files, fields),
            Follow::Rebuild => false,
        };
        if !in_place {
            (self.preview).follow_document(level, &self.files, &mut self.outbox, None);
        }
        if let Some(selection) = edit.select {
            level.selection = selection;
        }
        if let Some(said) = edit.said {
            self.outbox.info(said);
        }
    }

    /// Performs an action: the one place where the state changes.
    pub fn apply(&mut self, action: Action) {
        let action = match &self.level {
            Some(level) => {
                let (clipboard, preview) = (&self.clipboard, &self.preview);
                let at = (level, &*self.files.registry);
                match level_edits::plan(action, at, clipboard, &|id| preview.world_pose(id)) {
                    Ok(Planned::Edit(edit)) => return self.edit(*edit),
                    Ok(Planned::Nothing) => return,
                    Ok(Planned::Refused(why)) => return self.outbox.error(why),
                    Err(other) => *other,
                }
            }
            None => action,
        };
        let (mut parts, history) = self.split();
        match parts.apply_file_action(action, history) {
            Ok(true) => self.close_level(),
            Ok(false) => {}
            Err(other) => self.apply_other(*other),
        }
    }

    /// The actions that neither edit entities nor change project files.
    fn apply_other(&mut self, action: Action) {
        match action {
            Action::Run(c) => self.run(c),
            // Opening the open level again would reload it from disk: a jump to a
            // place in it only selects (the Select that follows).
            Action::OpenLevel(file) if self.is_open(&file) => {}
            Action::OpenLevel(file) => self.open_level(&file),
            Action::Select(ids) => {
                if let Some(level) = &mut self.level {
                    level.selection = ids;
                }
            }
            Action::EndGesture => self.history.end_merge(),
            Action::ResolveRecovery { restore } => {
                let Some(level) = &mut self.level else { return };
                if let Some(edit) = level.resolve_recovery(restore, &self.files.project) {
                    let said = format!("restored the unsaved edits of {}", level.file);
                    self.edit(LevelEdit::rebuild(edit).saying(said));
                }
            }
            Action::ResolveDiskConflict { take_disk } => {
                let (mut parts, history) = self.split();
                parts.resolve_disk_conflict(take_disk, history);
            }
            Action::AnswerTrust {
                trust,
                from_sources,
            } => self.parts().answer_trust(trust, from_sources),
            Action::DiscardUnsavedEdits => {
                // Forgotten on purpose: the recovery file goes, and none is
                // written again for them.
                if let Some(level) = &mut self.level {
                    self.history.mark_saved();
                    level.remove_recovery(&self.files.project);
                }
            }
            Action::PasteText(text) => match clipboard::pasted(&text) {
                Some(Ok(copied)) => {
                    self.clipboard = copied;
                    self.apply(Action::Run(UiCommand::Paste));
                }
                Some(Err(why)) => self.outbox.error(why),
                None => self.apply(Action::Run(UiCommand::Paste)),
            },
            // Entity edits and changes of files where they do nothing (no level
            // open, or the command is the window's), and the window's own actions
            // (handled by the app before they reach the editor).
            _ => {}
        }
    }

    fn run(&mut self, c: UiCommand) {
        match c {
            UiCommand::Undo => {
                let (mut parts, history) = self.split();
                let undone = history.undo(&mut parts);
                self.after_step(undone, "undo");
            }
            UiCommand::Redo => {
                let (mut parts, history) = self.split();
                let redone = history.redo(&mut parts);
                self.after_step(redone, "redo");
            }
            UiCommand::Copy => self.copy_selection(),
            UiCommand::Cut => {
                self.copy_selection();
                self.apply(Action::Run(UiCommand::Delete));
            }
            UiCommand::BeginRename => {
                if let Some(id) = self.selection().first().cloned() {
                    self.outbox.push(Effect::BeginRename(id));
                }
            }
            UiCommand::PlayPause | UiCommand::Step | UiCommand::Restart => {
                if matches!(c, UiCommand::PlayPause | UiCommand::Step) {
                    // Plugin code is about to run, and a plugin that aborts takes the
                    // process with it: the unsaved edits are kept first, whatever
                    // the recovery interval.
                    self.write_recovery(Duration::ZERO);
                }
                let (registry, plugins) = (&self.files.registry, &self.plugins);
                (self.preview).run(c, registry, plugins, &mut self.outbox);
            }
            UiCommand::FrameSelection => self.outbox.push(Effect::FrameSelection),
            UiCommand::RefreshProblems => self.parts().refresh_problems(),
            UiCommand::ReloadPlugins => self.parts().rebuild_plugins(),
            UiCommand::TrustProject => {
                (self.plugins).ask_trust(&self.files.project, &mut self.outbox)
            }
            // Entity edits (`level_edits`) where no level is open; saving and
            // making a prefab change files (`file_changes`); the handle's tool is
            // the viewport's state, and the new project dialog and the import
            // the window's (the app handles them).
            UiCommand::NewEntity
            | UiCommand::Delete
            | UiCommand::Duplicate
            | UiCommand::Paste
            | UiCommand::MoveUp
            | UiCommand::MoveDown
            | UiCommand::Indent
            | UiCommand::Outdent
            | UiCommand::Save
            | UiCommand::CreatePrefab
            | UiCommand::MoveTool
            | UiCommand::RotateTool
            | UiCommand::ScaleTool
            | UiCommand::NewProject
            | UiCommand::TryDemo
            | UiCommand::Import => {}
            // The viewport's and the scene tree's view of the level (the window's).
            _ => {}
        }
    }

    /// Copies the selected entities (with their children), here and to the system
    /// clipboard.
    fn copy_selection(&mut self) {
        let Some(level) = &self.level else { return };
        let (copied, text) = clipboard::copy(level);
        self.clipboard = copied;
        if let Some(text) = text {
            self.outbox.push(Effect::CopyText(text));
        }
    }

    /// Selects what an undone or redone step touched (what came back from a
    /// delete, the entity whose field went back), where it still exists; or says
    /// why the step could not be taken.
    fn after_step(&mut self, result: Option<anyhow::Result<Vec<String>>>, what: &str) {
        match result {
            None => {}
            Some(Ok(touched)) => {
                if let Some(level) = &mut self.level {
                    level.select_existing(touched);
                }
            }
            Some(Err(e)) => self.outbox.error(format!("cannot {what}: {e:#}")),
        }
    }
}
