//! The editor's state and the one place where actions change it. No egui here: tests
//! drive [`Editor::apply`] directly, and the GUI is a view that reads the state and
//! emits actions.
//!
//! The state is held in parts, each with its own file and methods, which take the
//! other parts they need as parameters (no part knows [`Editor`]):
//! - [`ProjectFiles`] (`project_files`): the project, its types, its index and
//!   what it finds; every change of project files is in `file_changes`.
//! - [`OpenLevel`] (`open_level`): the level being edited, its tree, selection,
//!   units and crash recovery (`recovery`); its edits are planned in
//!   `level_edits` from the pure functions of `entity_edits`.
//! - `DiskFollow` (`disk_follow`): what follows changes made outside the editor
//!   (`live_reload`).
//! - `Opening` (`opening`): a large level opening on a worker (`level_loading`).
//! - `PreviewState` (`preview_state`): the runtime world and what the viewport
//!   draws; field edits are written into it in place (`field_edits`).
//! - [`Outbox`] (`outbox`): the log, toasts and effects for the view.
//! - the [`History`] and the plugins (`plugins`).
//!
//! This file keeps [`Editor::apply`] (dispatch), [`Editor::tick`] and the
//! accessors the panels read; `served` answers commands typed in a terminal.

pub mod conflicts;
mod disk_follow;
pub mod entity_edits;
mod field_edits;
mod file_changes;
pub mod import;
pub mod level_edits;
pub mod level_loading;
mod live_reload;
mod open_level;
mod opening;
mod outbox;
mod plugins;
pub mod prefab_parts;
mod preview_state;
pub mod project_files;
mod recovery;
mod served;

use std::path::Path;

use dependency_checker::ops::Operation;
use kiln_core::{EntityDocument, LevelDocument, Project};

use super::actions::{Action, UiCommand};
use super::history::{FileWrite, FolderWrite, History, StepContext};
use super::preview::{Preview, PreviewBuild, PreviewError};
use super::tree::SceneTree;
pub use disk_follow::{DiskFollow, ReloadPath, ReloadTiming};
use level_edits::{Follow, LevelEdit, Planned};
pub use open_level::OpenLevel;
pub use opening::Opening;
pub use outbox::{Effect, LogLine, Outbox, Severity};
pub use plugins::PluginSwapTiming;
pub use preview_state::PreviewState;
pub use project_files::ProjectFiles;

/// The key that marks entities copied to the system clipboard.
const CLIPBOARD_KEY: &str = "kiln_entities";

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
    plugins: plugins::EditorPlugins,
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

/// Read-only views of the state, for panels and tests: each part, and the
/// questions asked most often of them.
impl Editor {
    /// The project's files, types and index.
    pub fn files(&self) -> &ProjectFiles {
        &self.files
    }
    /// What follows changes made on disk.
    pub fn disk(&self) -> &DiskFollow {
        &self.disk
    }
    /// The preview world and what the viewport draws.
    pub fn preview_state(&self) -> &PreviewState {
        &self.preview
    }
    /// The open project.
    pub fn project(&self) -> &Project {
        &self.files.project
    }
    /// Component and resource types.
    pub fn registry(&self) -> &std::sync::Arc<kiln_core::Registry> {
        &self.files.registry
    }
    /// The project's reference index (None if indexing failed; see the log).
    pub fn checker(&self) -> Option<&dependency_checker::Checker> {
        self.files.checker()
    }
    /// What the checker reports.
    pub fn findings(&self) -> &[dependency_checker::check::Finding] {
        &self.files.findings
    }
    /// The level being edited.
    pub fn level(&self) -> Option<&OpenLevel> {
        self.level.as_ref()
    }
    /// The hierarchy of the open level.
    pub fn tree(&self) -> &SceneTree {
        self.level.as_ref().map_or(&NO_TREE, |l| &l.tree)
    }
    /// A number that changes whenever [`Self::tree`] or the prefab units it shows
    /// may have changed: views built from them are rebuilt when it moves on.
    pub fn tree_revision(&self) -> u64 {
        self.level.as_ref().map_or(0, OpenLevel::tree_revision)
    }
    /// Selected authoring ids; the first is the primary one.
    pub fn selection(&self) -> &[String] {
        self.level.as_ref().map_or(&[], |l| &l.selection)
    }
    /// The undo history.
    pub fn history(&self) -> &History {
        &self.history
    }
    /// The runtime world spawned from the level.
    pub fn preview(&self) -> &Preview {
        &self.preview.runtime
    }
    /// Why the last compile failed (the preview shows the last good world).
    pub fn compile_error(&self) -> Option<&PreviewError> {
        self.preview.compile_error.as_ref()
    }
    /// The log panel's lines.
    pub fn log(&self) -> &[LogLine] {
        self.outbox.log()
    }
    /// Whether the open level differs from its file.
    pub fn is_dirty(&self) -> bool {
        self.level.is_some() && self.history.is_dirty()
    }
    /// Whether `file` is the level open now.
    pub fn is_open(&self, file: &str) -> bool {
        self.level.as_ref().is_some_and(|l| l.file == file)
    }
    /// The entity with authoring id `id` in the open level.
    pub fn entity(&self, id: &str) -> Option<&EntityDocument> {
        self.level.as_ref()?.entity(id)
    }
    /// The world pose of an entity in the preview world, if it has a transform there.
    pub fn world_pose(&self, id: &str) -> Option<glam::Affine3A> {
        self.preview.world_pose(id)
    }
    /// The open document's merge conflicts still to resolve.
    pub fn conflicts(&self) -> &[kiln_core::conflict::Conflict] {
        self.level.as_ref().map_or(&[], |l| &l.doc.conflicts)
    }
    /// The level being opened on a worker thread, if any.
    pub fn opening(&self) -> Option<level_loading::OpeningStatus> {
        self.opening.status()
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
        let files = ProjectFiles::new(Project::open(dir)?)?;
        let mut editor = Editor {
            plugins: plugins::EditorPlugins::new(waker.clone()),
            files,
            level: None,
            disk: DiskFollow::default(),
            opening: Opening::new(waker.clone()),
            preview: PreviewState::default(),
            outbox: Outbox::default(),
            history: History::default(),
            clipboard: Vec::new(),
        };
        editor.plugins.trust = plugins::PluginTrust::at_open(&editor.files.project);
        let (registry, to_build) = editor.load_plugins();
        editor.files.registry = std::sync::Arc::new(registry);
        editor
            .disk
            .start_watching(&editor.files.project, waker, &mut editor.outbox);
        editor.refresh_problems();
        editor.files.scan_folders();
        let first = editor
            .files
            .project
            .config()
            .boot_levels
            .first()
            .map(|l| format!("{l}.level"))
            .filter(|l| editor.files.levels.contains(l))
            .or_else(|| editor.files.levels.first().cloned());
        // Plugins whose sources changed since their last build are built without
        // holding up the window, and swapped in when ready.
        editor.build_plugins(to_build);
        if let Some(level) = first {
            editor.open_level(&level);
        }
        Ok(editor)
    }

    /// Keeps at most `steps` undo steps.
    pub fn set_undo_capacity(&mut self, steps: usize) {
        self.history.set_capacity(steps);
    }

    /// The frame's own work, apart from the user's actions: folds in changes made
    /// outside the editor, advances the simulation by `dt` seconds while it plays,
    /// and keeps the recovery file at most `recovery_interval` behind.
    pub fn tick(&mut self, dt: f32, recovery_interval: std::time::Duration) {
        self.poll_opening();
        self.poll_changes();
        self.poll_plugins();
        if self.preview.runtime.playing {
            self.step_simulation(dt);
        }
        if let Some(level) = &mut self.level {
            let dirty = self.history.is_dirty();
            let (project, registry) = (&self.files.project, &self.files.registry);
            level.write_recovery(
                project,
                registry,
                dirty,
                recovery_interval,
                &mut self.outbox,
            );
        }
    }

    /// Writes the open level's unsaved edits to its recovery file now if they
    /// are more than `interval` old (tests).
    pub fn write_recovery(&mut self, interval: std::time::Duration) {
        if let Some(level) = &mut self.level {
            let dirty = self.history.is_dirty();
            let (project, registry) = (&self.files.project, &self.files.registry);
            level.write_recovery(project, registry, dirty, interval, &mut self.outbox);
        }
    }

    /// One step of the simulation, as `kiln play` runs it: each plugin's `update`,
    /// then every component's `simulate`.
    fn step_simulation(&mut self, dt: f32) {
        for plugin in &self.plugins.loaded {
            plugin.update(dt);
        }
        self.preview.runtime.step(dt);
    }

    /// The sync cookies of the project's watcher: what a command server writes to
    /// know that the editor has seen every change made before a question.
    pub fn sync_cookies(&self) -> Option<dependency_checker::watch::SyncCookies> {
        self.disk.sync_cookies()
    }

    /// The sync cookies the watcher reported since the last call.
    pub fn take_synced_cookies(&mut self) -> Vec<u64> {
        self.disk.take_synced_cookies()
    }

    /// What applying actions asked of the view since the last call.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        self.outbox.take_effects()
    }

    /// Logs information.
    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.outbox.info(text);
    }

    /// Opens a level, replacing the current one (the GUI asks about unsaved edits first).
    /// A large one opens on a worker thread: see [`Editor::opening`].
    fn open_level(&mut self, file: &str) {
        let project = &self.files.project;
        let bytes = kiln_core::fs::kind_below(project.root(), file).map_or(0, |(_, st)| st.size);
        if bytes >= self.opening.background_open_bytes {
            self.opening.load = Some(level_loading::LevelLoad::start(
                project.clone(),
                std::sync::Arc::clone(&self.files.registry),
                file,
                bytes,
                self.opening.waker.clone(),
            ));
            self.outbox
                .info(format!("opening {file} ({:.0} MB)", bytes as f64 / 1e6));
            return;
        }
        self.opening.load = None;
        let text = match level_loading::read(project, file) {
            Ok(t) => t,
            Err(e) => return self.outbox.error(format!("cannot open {e}")),
        };
        match LevelDocument::parse_with_conflicts(&text, file, kiln_core::conflict::Side::Ours) {
            Ok(doc) => {
                self.install_level(file, doc, None);
                (self.disk).build_disk_text(&self.files, file, text);
            }
            Err(e) => self.outbox.error(format!("cannot open {e}")),
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
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Installs a level the worker finished.
    fn poll_opening(&mut self) {
        let Some(loaded) = self.opening.load.as_mut().and_then(|o| o.poll()) else {
            return;
        };
        let Some(load) = self.opening.load.take() else {
            return;
        };
        match loaded.doc {
            Ok(doc) => {
                self.install_level(load.file(), doc, Some(loaded.compiled));
                if let Some(text) = loaded.text {
                    (self.disk).build_disk_text(&self.files, load.file(), text);
                }
            }
            Err(e) => self.outbox.error(format!("cannot open {e}")),
        }
    }

    /// Makes `doc` the open level; `compiled` is its blob when it was compiled
    /// already (on the worker), so it is not compiled twice.
    fn install_level(
        &mut self,
        file: &str,
        doc: LevelDocument,
        compiled: Option<Result<PreviewBuild, PreviewError>>,
    ) {
        let mut level = OpenLevel::new(file, doc);
        level.recovery = recovery::read(&self.files.project, file).filter(|r| *r != level.doc);
        if level.recovery.is_some() {
            self.outbox.warn(format!(
                "{file} has unsaved edits from a session that ended without saving; restore them?"
            ));
        }
        let conflicts = level.doc.conflicts.len();
        self.disk.forget_disk_build();
        self.disk.keep_level_layout = true;
        self.history.clear();
        if conflicts > 0 {
            self.outbox.warn(format!(
                "{file} has {conflicts} merge conflict{} to resolve (Conflicts tab); until then ours is shown, and kiln check and kiln compile refuse the file",
                if conflicts == 1 { "" } else { "s" }
            ));
            self.outbox.push(Effect::ShowConflicts);
        }
        self.preview.runtime = Preview::default();
        let level = self.level.insert(level);
        (self.preview).follow_document(level, &self.files, &mut self.outbox, compiled);
        self.outbox.push(Effect::FrameSelection);
        self.outbox.info(format!("opened {file}"));
    }

    /// Rebuilds what follows from the document: the tree, the selection (entities
    /// that are gone leave it), and the preview world.
    fn after_edit(&mut self) {
        self.preview.doc_layout = None;
        if let Some(level) = &mut self.level {
            (self.preview).follow_document(level, &self.files, &mut self.outbox, None);
        }
    }

    /// Applies an edit of the open document through the history, and follows it
    /// as it says.
    fn edit(&mut self, edit: LevelEdit) {
        let Some(level) = &mut self.level else { return };
        self.history
            .push(&mut level.doc, edit.edit, edit.continuing);
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
    }

    /// Makes a conflict resolution's edit and says what it resolved.
    fn resolve_conflicts(&mut self, resolved: Option<(LevelEdit, String)>) {
        if let Some((edit, said)) = resolved {
            self.edit(edit);
            let next = conflicts::after_last_conflict(self.level.as_ref());
            self.outbox.info(format!("{said}{next}"));
        }
    }

    /// Performs an action: the one place where the state changes.
    pub fn apply(&mut self, action: Action) {
        let Some(level) = &self.level else {
            return self.apply_without_level(action);
        };
        let preview = &self.preview;
        match level_edits::plan(action, level, &|id| preview.world_pose(id)) {
            Ok(Planned::Edit(edit)) => self.edit(*edit),
            Ok(Planned::Nothing) => {}
            Ok(Planned::Refused(why)) => self.outbox.error(why),
            Err(other) => self.apply_without_level(*other),
        }
    }

    /// The actions that do not edit entities of the open level.
    fn apply_without_level(&mut self, action: Action) {
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
            Action::MoveAssets(plan) => {
                if let Err(e) = self.apply_move(&plan) {
                    self.outbox.error(format!("{e:#}"));
                }
            }
            Action::FixReference { place, old, new } => self.fix_reference(&place, &old, &new),
            Action::FixStalePaths => self.fix_stale_paths(),
            Action::ResolveRecovery { restore } => {
                let Some(level) = &mut self.level else { return };
                if let Some(edit) = level.resolve_recovery(restore, &self.files.project) {
                    let file = level.file.clone();
                    self.edit(LevelEdit::rebuild(edit));
                    self.outbox
                        .info(format!("restored the unsaved edits of {file}"));
                }
            }
            Action::ResolveDiskConflict { take_disk } => self.resolve_disk_conflict(take_disk),
            Action::AnswerTrust { trust } => self.answer_trust(trust),
            Action::DiscardUnsavedEdits => {
                // Forgotten on purpose: the recovery file goes, and none is
                // written again for them.
                if let Some(level) = &mut self.level {
                    self.history.mark_saved();
                    level.remove_recovery(&self.files.project);
                }
            }
            Action::SetAssetField {
                file,
                field,
                value,
                continuing,
            } => self.set_asset_field(&file, &field, value, continuing),
            Action::CreateAsset { file } => self.create_asset(&file),
            Action::CreateFolder { folder } => self.create_folder(&folder),
            Action::DuplicateAsset { file, copy } => self.duplicate_asset(&file, &copy),
            Action::DeleteAssets {
                paths,
                replace_with,
            } => self.delete_assets(&paths, replace_with.as_deref()),
            Action::ImportFiles {
                sources,
                folder,
                on_conflict,
            } => {
                self.files.import_question = None;
                self.import_files(sources, &folder, on_conflict);
            }
            Action::CancelImport => self.files.import_question = None,
            Action::PasteText(text) => self.paste_text(&text),
            Action::ResolveConflict { index, how } => {
                let resolved =
                    (self.level.as_ref()).and_then(|l| conflicts::resolve_one(l, index, how));
                self.resolve_conflicts(resolved);
            }
            Action::ResolveAllConflicts(side) => {
                let resolved = (self.level.as_ref()).and_then(|l| conflicts::resolve_all(l, side));
                self.resolve_conflicts(resolved);
            }
            Action::ApplyOverrides { instance } => self.apply_overrides(&instance),
            // Entity edits without a level, and the window's own actions (handled by
            // the app before they reach the editor).
            Action::Rename { .. }
            | Action::Reparent { .. }
            | Action::SetField { .. }
            | Action::SetFieldEach { .. }
            | Action::RevertOverride { .. }
            | Action::AddComponent { .. }
            | Action::RemoveComponent { .. }
            | Action::CreateEntity { .. }
            | Action::PlaceAsset { .. }
            | Action::OpenProject(_)
            | Action::CreateProject { .. }
            | Action::RevealFile(_)
            | Action::AnswerUnsaved(_)
            | Action::Quit => {}
        }
    }

    fn run(&mut self, c: UiCommand) {
        match c {
            UiCommand::Save => {
                if let Err(e) = self.save() {
                    self.outbox.error(format!("{e:#}"));
                }
            }
            UiCommand::Undo => self.undo(),
            UiCommand::Redo => self.redo(),
            // Without a camera to put it in front of (tests, scripts): at the origin.
            UiCommand::NewEntity => self.apply(Action::CreateEntity { position: [0.0; 3] }),
            UiCommand::Delete => {
                if let Some(level) = &self.level
                    && let Some(made) =
                        entity_edits::delete(&level.doc, &level.tree, &level.selection)
                {
                    self.edit(LevelEdit::select(made));
                }
            }
            UiCommand::Duplicate => {
                let copies = self
                    .level
                    .as_ref()
                    .map_or_else(Vec::new, OpenLevel::selected_subtrees);
                self.paste(&copies);
            }
            UiCommand::Copy => self.copy_selection(),
            UiCommand::Cut => {
                self.copy_selection();
                self.run(UiCommand::Delete);
            }
            UiCommand::Paste => {
                let copies = std::mem::take(&mut self.clipboard);
                self.paste(&copies);
                self.clipboard = copies;
            }
            UiCommand::MoveUp | UiCommand::MoveDown | UiCommand::Indent | UiCommand::Outdent => {
                let way = match c {
                    UiCommand::MoveUp => entity_edits::Nudge::Up,
                    UiCommand::MoveDown => entity_edits::Nudge::Down,
                    UiCommand::Indent => entity_edits::Nudge::Indent,
                    _ => entity_edits::Nudge::Outdent,
                };
                if let Some(level) = &self.level
                    && let Some((entities, parent, before)) =
                        entity_edits::nudge(&level.doc, &level.tree, &level.selection, way)
                {
                    self.apply(Action::Reparent {
                        entities,
                        parent,
                        before,
                    });
                }
            }
            UiCommand::BeginRename => {
                if let Some(id) = self.selection().first() {
                    self.outbox.push(Effect::BeginRename(id.clone()));
                }
            }
            UiCommand::PlayPause => self.preview.runtime.playing = !self.preview.runtime.playing,
            UiCommand::Step => self.step_simulation(1.0 / 60.0),
            UiCommand::Restart => {
                if let Err(e) = self.preview.runtime.restart(&self.files.registry) {
                    self.outbox.error(e);
                }
            }
            UiCommand::FrameSelection => self.outbox.push(Effect::FrameSelection),
            UiCommand::ToggleTopView => self.preview.top_view = !self.preview.top_view,
            UiCommand::RefreshProblems => self.refresh_problems(),
            UiCommand::ReloadPlugins => self.rebuild_plugins(),
            UiCommand::TrustProject => self.ask_trust(),
            UiCommand::CreatePrefab => self.create_prefab(),
            // The handle's tool is the viewport's state, and the new project dialog
            // the window's (the app handles them).
            UiCommand::MoveTool
            | UiCommand::RotateTool
            | UiCommand::ScaleTool
            | UiCommand::NewProject
            | UiCommand::Import => {}
        }
    }

    /// Copies the selected entities (with their children), here and to the system
    /// clipboard as JSON, so that another Kiln window can paste them too.
    fn copy_selection(&mut self) {
        let Some(level) = &self.level else { return };
        self.clipboard = level.selected_subtrees();
        if self.clipboard.is_empty() {
            return;
        }
        let wrapped = serde_json::json!({ CLIPBOARD_KEY: self.clipboard });
        if let Ok(text) = serde_json::to_string_pretty(&wrapped) {
            self.outbox.push(Effect::CopyText(text));
        }
    }

    /// Pastes entities copied in Kiln from `text` (the system clipboard), or the
    /// ones copied here last.
    fn paste_text(&mut self, text: &str) {
        #[derive(serde::Deserialize)]
        struct Copied {
            kiln_entities: Vec<EntityDocument>,
        }
        match serde_json::from_str::<Copied>(text) {
            Ok(copied) if !copied.kiln_entities.is_empty() => {
                // Text anyone could have put there: ids as a level has them, once each.
                let mut seen = std::collections::HashSet::new();
                let bad = copied.kiln_entities.iter().find(|e| {
                    !kiln_core::level::valid_authoring_id(&e.id) || !seen.insert(e.id.as_str())
                });
                if let Some(bad) = bad {
                    return self.outbox.error(format!(
                        "cannot paste: the copied entity id \"{}\" is not a valid authoring id or comes twice",
                        bad.id
                    ));
                }
                self.paste(&copied.kiln_entities);
                self.clipboard = copied.kiln_entities;
            }
            _ => self.run(UiCommand::Paste),
        }
    }

    fn paste(&mut self, entities: &[EntityDocument]) {
        if let Some(level) = &self.level
            && let Some(made) = entity_edits::paste(&level.doc, entities)
        {
            self.edit(LevelEdit::select(made));
        }
    }

    // The history is out of the editor while its step runs through the editor
    // (`StepContext`): a step changes the document and the files, never the
    // history.
    fn undo(&mut self) {
        let mut history = std::mem::take(&mut self.history);
        let undone = history.undo(self);
        self.history = history;
        self.after_step(undone, "undo");
    }

    fn redo(&mut self) {
        let mut history = std::mem::take(&mut self.history);
        let redone = history.redo(self);
        self.history = history;
        self.after_step(redone, "redo");
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

/// The editor as the history's steps see it: its open document, its checker's
/// operations and its writes of whole files (see `history.rs`).
impl StepContext for Editor {
    fn document(&mut self) -> Option<&mut LevelDocument> {
        self.level.as_mut().map(|level| &mut level.doc)
    }

    fn document_changed(&mut self) {
        self.after_edit();
    }

    fn run_operation(&mut self, operation: &Operation) -> anyhow::Result<()> {
        self.execute(operation).map(drop)
    }

    fn put_files(
        &mut self,
        writes: &[FileWrite],
        folders: &[FolderWrite],
        forward: bool,
    ) -> anyhow::Result<()> {
        self.files
            .step_files(writes, folders, forward, &mut self.outbox)
    }

    fn files_written(&mut self, writes: &[FileWrite], document_edited: bool) {
        self.after_files_written(writes, document_edited);
    }

    fn warn(&mut self, message: String) {
        self.outbox.error(message);
    }
}
