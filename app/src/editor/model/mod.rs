//! The editor's state and the one place where actions change it. No egui here: tests
//! drive [`Editor::apply`] directly, and the GUI is a view that reads the state and
//! emits actions.
//!
//! - `mod.rs`: the state, its read-only accessors, and [`Editor::apply`].
//! - `entity_edits`: entity edits as pure functions (document -> history entry).
//! - `disk_operations`: asset moves, reference fixes and saving.
//! - `prefab_parts`: the parts of prefab instances and their overrides.
//! - `live_reload`: changes made outside the editor.
//! - `recovery`: unsaved edits kept across a crash.
//! - `level_loading`: large levels read, parsed and compiled on a worker thread.

pub mod asset_operations;
pub mod conflicts;
mod disk_operations;
pub mod entity_edits;
mod field_edits;
pub mod import;
pub mod level_loading;
mod live_reload;
mod plugins;
pub mod prefab_parts;
mod recovery;
mod served;

use std::path::Path;
use std::sync::Arc;

use dependency_checker::Checker;
use dependency_checker::check::Finding;
use dependency_checker::ops::{MovePlan, MoveRequest};
use glam::{Affine3A, Vec3};
use kiln_core::{EntityDocument, LevelDocument, Project, Registry};

use super::actions::{Action, UiCommand};
use super::document::DocEdit;
use super::history::{FileWrite, FolderWrite, History, StepContext};
use super::preview::{Preview, Resources};
use super::tree::SceneTree;
use dependency_checker::ops::Operation;
pub use plugins::PluginSwapTiming;

/// How bad a log line or toast is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Information.
    Info,
    /// Something to look at.
    Warning,
    /// Something failed.
    Error,
}

/// One line of the log panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// How bad.
    pub severity: Severity,
    /// What happened.
    pub text: String,
}

/// The level being edited.
#[derive(Debug, Clone)]
pub struct OpenLevel {
    /// Project path, e.g. `levels/forest.level`.
    pub file: String,
    /// The document as edited.
    pub doc: LevelDocument,
}

/// Something applying an action asks of the view, once: the view takes these after
/// applying the frame's actions ([`Editor::take_effects`]). One-shot requests live
/// here rather than as flags in the state.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Point the camera at the selection (or the whole level when nothing is
    /// selected).
    FrameSelection,
    /// Open the name field of this entity in the scene tree.
    BeginRename(String),
    /// Show a message for a few seconds (it is in the log too).
    Toast(LogLine),
    /// Select a file (or a folder: `path/`) in the asset browser and show it (a file
    /// just made, copied or imported).
    ShowFile(String),
    /// Open a level or unit, asking about unsaved edits first (one just made).
    OpenLevel(String),
    /// Put this text on the system clipboard (copied entities).
    CopyText(String),
    /// Files moved (old, new): what shows them (the asset browser's selection, the
    /// inspector) follows them.
    FilesMoved(Vec<(String, String)>),
    /// The open level has merge conflicts: show them.
    ShowConflicts,
}

/// The key that marks entities copied to the system clipboard.
const CLIPBOARD_KEY: &str = "kiln_entities";

/// Levels from this size up open on a worker thread (about 25,000 entities of the
/// demo's kind; such a level takes a few tenths of a second to open).
pub const DEFAULT_BACKGROUND_OPEN_BYTES: u64 = 4 << 20;

/// A tree revision no editor has used, so that a view built for another project's
/// editor is never taken for current.
fn next_tree_revision() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The editor's whole state. Fields are private: panels read them through the
/// accessors and change them only by returning [`Action`]s.
pub struct Editor {
    project: Project,
    registry: Arc<Registry>,
    /// The project's reference index (None if indexing failed; see the log).
    checker: Option<Checker>,
    findings: Vec<Finding>,
    levels: Vec<String>,
    level: Option<OpenLevel>,
    /// The hierarchy of the open level (rebuilt after each edit).
    tree: SceneTree,
    /// Bumped whenever the hierarchy or the prefabs it shows may have changed.
    tree_revision: u64,
    /// Authoring id -> position in the open level's entities, rebuilt with the tree,
    /// so that looking an entity up (the inspector, the handles, every frame) does
    /// not search a million entities.
    entity_index: kiln_core::IdIndex,
    /// A large level being read, parsed and compiled on a worker thread.
    opening: Option<level_loading::LevelLoad>,
    /// Levels at least this large open on a worker thread, with progress shown.
    background_open_bytes: u64,
    /// Wakes the window (the GUI's repaint request).
    waker: Option<dependency_checker::watch::Waker>,
    /// Selected authoring ids; the first is the primary one.
    selection: Vec<String>,
    history: History,
    preview: Preview,
    resources: Resources,
    /// How often each drawn file (texture, model) changed on disk while open.
    asset_versions: crate::render::assets::AssetVersions,
    /// Why the last compile failed (the preview shows the last good world).
    compile_error: Option<crate::editor::preview::PreviewError>,
    /// Components the preview left out: their type is not loaded (a plugin that
    /// failed or is being built).
    left_out: Vec<kiln_core::CompileError>,
    /// Folders holding no project file (see [`Editor::empty_folders`]).
    empty_folders: std::collections::BTreeSet<String>,
    /// An import that would write over files, waiting for the user's answer.
    import_question: Option<asset_operations::ImportQuestion>,
    log: Vec<LogLine>,
    effects: Vec<Effect>,
    /// Entities copied with Copy.
    clipboard: Vec<EntityDocument>,
    /// The units the open level instances, for showing and editing their parts.
    prefabs: prefab_parts::PrefabLibrary,
    top_view: bool,
    /// Unsaved edits of the open level recovered from a crash, waiting for the user
    /// to restore or discard them.
    recovery: Option<LevelDocument>,
    /// When the recovery file was last written.
    recovery_written: Option<std::time::Instant>,
    /// Watches the project so that problems, resources and the preview follow
    /// changes made outside the editor.
    watcher: Option<dependency_checker::watch::ProjectWatcher>,
    /// Sync cookies the watcher reported since the command server last asked
    /// (see `editor/command_server.rs`).
    synced_cookies: Vec<u64>,
    /// The open level changed on disk while it had unsaved edits: the version on
    /// disk, waiting for the user to choose.
    disk_conflict: Option<LevelDocument>,
    last_reload: Option<ReloadTiming>,
    plugins: plugins::EditorPlugins,
    /// The open level's file as last read from disk, compiled and kept to be
    /// updated incrementally when another program saves it (see
    /// `live_reload.rs`): the file it is of, and the build.
    disk_build: Option<(String, kiln_core::incremental::IncrementalLevel)>,
    /// That build being made on a thread from the text the open level was read
    /// from (see `level_loading::start_disk_build`): the file, and where it
    /// comes.
    disk_build_coming: Option<(
        String,
        std::sync::mpsc::Receiver<kiln_core::incremental::IncrementalLevel>,
    )>,
    /// The open level's layout is to be kept by the index (see
    /// `Checker::keep_level_layout`), so that its first save is scanned by the
    /// entities it changed: made on a thread of its own from the next frame on
    /// (240 ms for a 28 MB level), and taken in when it is done.
    keep_level_layout: bool,
    level_layout: Option<std::sync::mpsc::Receiver<dependency_checker::index::KeptLevelLayout>>,
    /// A build of the document just taken from disk, for the rebuild that follows
    /// to install instead of compiling the document again.
    pending_build: Option<crate::editor::preview::PreviewBuild>,
    /// Where the preview blob's instances of the document's entities are, while
    /// only fields change (see `field_edits.rs`); dropped whenever the document is
    /// compiled whole.
    doc_layout: Option<kiln_core::incremental::DocumentLayout>,
    /// A save of the open level already shown, for the index to take in on the
    /// next frame (see `live_reload.rs`).
    index_next_frame: Vec<dependency_checker::watch::ChangeBatch>,
    /// See [`Editor::show_saves_before_indexing_from`].
    shown_before_indexing: usize,
}

/// How long the last reload from disk took, split by stage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReloadTiming {
    /// From the first file-system event to the change being applied (debounce,
    /// indexing the changed files).
    pub detect_ms: f64,
    /// Compiling the level.
    pub compile_ms: f64,
    /// Despawning the old world and spawning the new one, or writing the
    /// changed instances into it.
    pub spawn_ms: f64,
    /// Which way it went.
    pub path: ReloadPath,
}

/// Which way a reload from disk went (the status bar and the log say it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReloadPath {
    /// The whole file was read, compiled and spawned.
    #[default]
    Whole,
    /// Only the changed entities were read and compiled; the world was spawned.
    Incremental,
    /// Only the changed entities were read and compiled, and their instances
    /// written into the running world.
    InPlace,
}

impl ReloadPath {
    /// How the log and the status bar name it.
    pub fn name(self) -> &'static str {
        match self {
            ReloadPath::Whole => "whole file",
            ReloadPath::Incremental => "incremental",
            ReloadPath::InPlace => "incremental, in place",
        }
    }

    /// What the world's step was: a spawn, or a patch of the running world.
    pub fn world_step(self) -> &'static str {
        match self {
            ReloadPath::InPlace => "patch",
            _ => "spawn",
        }
    }
}

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Editor")
            .field("project", &self.project.root())
            .field("level", &self.level.as_ref().map(|l| &l.file))
            .finish_non_exhaustive()
    }
}

/// Read-only views of the state, for panels and tests.
impl Editor {
    /// The open project.
    pub fn project(&self) -> &Project {
        &self.project
    }
    /// Component and resource types.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
    /// The project's reference index (None if indexing failed; see the log).
    pub fn checker(&self) -> Option<&Checker> {
        self.checker.as_ref()
    }
    /// What the checker reports.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }
    /// Every level of the project.
    pub fn levels(&self) -> &[String] {
        &self.levels
    }
    /// The level being edited.
    pub fn level(&self) -> Option<&OpenLevel> {
        self.level.as_ref()
    }
    /// The hierarchy of the open level.
    pub fn tree(&self) -> &SceneTree {
        &self.tree
    }

    /// A number that changes whenever [`Self::tree`] or the prefab units it shows
    /// may have changed: views built from them are rebuilt when it moves on.
    pub fn tree_revision(&self) -> u64 {
        self.tree_revision
    }

    /// Says the tree (or the prefabs it shows) may have changed.
    fn tree_changed(&mut self) {
        self.tree_revision = next_tree_revision();
    }
    /// Selected authoring ids; the first is the primary one.
    pub fn selection(&self) -> &[String] {
        &self.selection
    }
    /// The undo history.
    pub fn history(&self) -> &History {
        &self.history
    }
    /// The runtime world spawned from the level.
    pub fn preview(&self) -> &Preview {
        &self.preview
    }
    /// How often each texture and model file changed on disk while open (the
    /// viewport reads a file again when its version moves on).
    pub fn asset_versions(&self) -> &crate::render::assets::AssetVersions {
        &self.asset_versions
    }

    /// The meshes and materials the viewport draws.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }
    /// Why the last compile failed (the preview shows the last good world).
    pub fn compile_error(&self) -> Option<&crate::editor::preview::PreviewError> {
        self.compile_error.as_ref()
    }
    /// Components the preview left out because their type is not loaded (each
    /// names the file, entity, component and the plugin it comes from, if known).
    pub fn left_out(&self) -> &[kiln_core::CompileError] {
        &self.left_out
    }
    /// The log panel's lines.
    pub fn log(&self) -> &[LogLine] {
        &self.log
    }
    /// Top view instead of perspective.
    pub fn top_view(&self) -> bool {
        self.top_view
    }
    /// Unsaved edits recovered from a crash, waiting for the user's choice.
    pub fn recovery(&self) -> Option<&LevelDocument> {
        self.recovery.as_ref()
    }
    /// The open level as changed on disk while it had unsaved edits.
    pub fn disk_conflict(&self) -> Option<&LevelDocument> {
        self.disk_conflict.as_ref()
    }
    /// Timing of the last reload caused by a change on disk.
    pub fn last_reload(&self) -> Option<ReloadTiming> {
        self.last_reload
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
        let k = self.entity_position(id)?;
        self.level.as_ref()?.doc.entities.get(k)
    }
    /// The position of the entity `id` in the open level's entity list.
    pub fn entity_position(&self, id: &str) -> Option<usize> {
        let entities = &self.level.as_ref()?.doc.entities;
        let at = |k: usize| entities.get(k).map(|e| e.id.as_str());
        match self.entity_index.find(id, at) {
            Some(k) => Some(k),
            // Every edit rebuilds the index; should one have slipped past (the
            // count tells), a search still finds the entity.
            None if self.entity_index.len() != entities.len() => {
                entities.iter().position(|e| e.id == id)
            }
            None => None,
        }
    }
    /// The units the open level's instances use.
    pub fn prefabs(&self) -> &prefab_parts::PrefabLibrary {
        &self.prefabs
    }
    /// A prefab part (`tree_01/trunk`) as it ends up with the open file's overrides.
    pub fn part(&self, path: &str) -> Option<prefab_parts::PartView> {
        prefab_parts::part_view(&self.level.as_ref()?.doc, &self.prefabs, path)
    }
    /// The world pose of an entity in the preview world, if it has a transform there.
    pub fn world_pose(&self, id: &str) -> Option<Affine3A> {
        let e = self.preview.level.as_ref()?.entity(id)?;
        let t = self.preview.world.transforms.lookup(e)?;
        Some(self.preview.world.transforms.world(t))
    }
    /// The preview's entities drawn as selected: the selected ones and everything
    /// below them in the scene graph (a prefab instance's parts, a group's children).
    pub fn drawn_selected(&self) -> std::collections::HashSet<kiln_core::Entity> {
        let level = self.preview.level.as_ref();
        let transforms = &self.preview.world.transforms;
        let mut set: std::collections::HashSet<kiln_core::Entity> = self
            .selection
            .iter()
            .filter_map(|id| level?.entity(id))
            .collect();
        let mut stack: Vec<_> = set.iter().filter_map(|e| transforms.lookup(*e)).collect();
        while let Some(t) = stack.pop() {
            for child in transforms.children(t) {
                if set.insert(transforms.entity(child)) {
                    stack.push(child);
                }
            }
        }
        set
    }
    /// The world pose of an entity's parent in the preview world (for a part, the
    /// part's parent inside its instance).
    pub fn parent_world_pose(&self, id: &str) -> Option<Affine3A> {
        let e = self.preview.level.as_ref()?.entity(id)?;
        let transforms = &self.preview.world.transforms;
        let parent = transforms.parent(transforms.lookup(e)?)?;
        Some(transforms.world(parent))
    }
    /// A resource file's fields as written (a material, a mesh), for the inspector.
    pub fn asset_fields(
        &self,
        file: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, String> {
        let bytes = kiln_core::read_below(self.project.root(), Path::new(file), 1 << 20)
            .map_err(|e| format!("{file}: {e}"))?;
        match serde_json::from_slice(&bytes) {
            Ok(serde_json::Value::Object(m)) => Ok(m),
            Ok(_) => Err(format!("{file}: not a JSON object")),
            Err(e) => Err(format!("{file}:{}:{}: {e}", e.line(), e.column())),
        }
    }
    /// Plans a rename or move of project files (nothing changes yet): what the
    /// rename dialog previews before the user accepts it as [`Action::MoveAssets`].
    pub fn plan_move(&self, request: &MoveRequest) -> anyhow::Result<MovePlan> {
        use anyhow::Context as _;
        let checker = self
            .checker
            .as_ref()
            .context("the project is not indexed")?;
        Ok(dependency_checker::ops::plan(checker, request)?)
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
        let project = Project::open(dir)?;
        let registry = Arc::new(Registry::with_builtins());
        let levels = project.levels()?;
        let plugins = plugins::EditorPlugins::new(waker.clone());
        let mut editor = Editor {
            project,
            registry,
            checker: None,
            findings: Vec::new(),
            levels,
            level: None,
            tree: SceneTree::default(),
            tree_revision: 0,
            entity_index: kiln_core::IdIndex::default(),
            opening: None,
            background_open_bytes: DEFAULT_BACKGROUND_OPEN_BYTES,
            waker: waker.clone(),
            selection: Vec::new(),
            history: History::default(),
            preview: Preview::default(),
            resources: Resources::default(),
            asset_versions: Default::default(),
            compile_error: None,
            left_out: Vec::new(),
            empty_folders: Default::default(),
            import_question: None,
            log: Vec::new(),
            effects: Vec::new(),
            clipboard: Vec::new(),
            prefabs: prefab_parts::PrefabLibrary::default(),
            top_view: false,
            recovery: None,
            recovery_written: None,
            watcher: None,
            synced_cookies: Vec::new(),
            disk_conflict: None,
            last_reload: None,
            plugins,
            disk_build: None,
            disk_build_coming: None,
            keep_level_layout: false,
            level_layout: None,
            pending_build: None,
            doc_layout: None,
            index_next_frame: Vec::new(),
            shown_before_indexing: live_reload::SHOWN_BEFORE_INDEXING,
        };
        editor.plugins.trust = plugins::PluginTrust::at_open(&editor.project);
        let (registry, to_build) = editor.load_plugins();
        editor.registry = Arc::new(registry);
        editor.start_watching(waker);
        editor.refresh_problems();
        editor.scan_folders();
        let first = editor
            .project
            .config()
            .boot_levels
            .first()
            .map(|l| format!("{l}.level"))
            .filter(|l| editor.levels.contains(l))
            .or_else(|| editor.levels.first().cloned());
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
        if self.preview.playing {
            self.step_simulation(dt);
        }
        self.write_recovery(recovery_interval);
    }

    /// One step of the simulation, as `kiln play` runs it: each plugin's `update`,
    /// then every component's `simulate`.
    fn step_simulation(&mut self, dt: f32) {
        for plugin in self.plugins() {
            plugin.update(dt);
        }
        self.preview.step(dt);
    }

    /// The sync cookies of the project's watcher: what a command server writes to
    /// know that the editor has seen every change made before a question.
    pub fn sync_cookies(&self) -> Option<dependency_checker::watch::SyncCookies> {
        self.watcher.as_ref().map(|w| w.sync_cookies())
    }

    /// The sync cookies the watcher reported since the last call.
    pub fn take_synced_cookies(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.synced_cookies)
    }

    /// What applying actions asked of the view since the last call.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    fn note(&mut self, severity: Severity, text: String, toast: bool) {
        if toast {
            self.effects.push(Effect::Toast(LogLine {
                severity,
                text: text.clone(),
            }));
        }
        self.log.push(LogLine { severity, text });
    }

    /// Logs an error and shows it as a toast.
    fn error(&mut self, text: impl Into<String>) {
        self.note(Severity::Error, text.into(), true);
    }

    /// Logs information.
    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.note(Severity::Info, text.into(), false);
    }

    /// Opens a level, replacing the current one (the GUI asks about unsaved edits first).
    /// A large one opens on a worker thread: see [`Editor::opening`].
    fn open_level(&mut self, file: &str) {
        let bytes =
            kiln_core::fs::kind_below(self.project.root(), file).map_or(0, |(_, st)| st.size);
        if bytes >= self.background_open_bytes {
            self.opening = Some(level_loading::LevelLoad::start(
                self.project.clone(),
                Arc::clone(&self.registry),
                file,
                bytes,
                self.waker.clone(),
            ));
            self.info(format!("opening {file} ({:.0} MB)", bytes as f64 / 1e6));
            return;
        }
        self.opening = None;
        let text = match level_loading::read(&self.project, file) {
            Ok(t) => t,
            Err(e) => return self.error(format!("cannot open {e}")),
        };
        match LevelDocument::parse_with_conflicts(&text, file, kiln_core::conflict::Side::Ours) {
            Ok(doc) => {
                self.install_level(file, doc, None);
                self.build_disk_text(file, text);
            }
            Err(e) => self.error(format!("cannot open {e}")),
        }
    }

    /// The level being opened on a worker thread, if any.
    pub fn opening(&self) -> Option<level_loading::OpeningStatus> {
        self.opening.as_ref().map(|o| o.status())
    }

    /// Opens levels of at least `bytes` on a worker thread (tests use 0 to take that
    /// path with a small level).
    pub fn set_background_open_threshold(&mut self, bytes: u64) {
        self.background_open_bytes = bytes;
    }

    /// Waits until a level opening on the worker is open (benchmarks and tools that
    /// drive the editor without a window).
    pub fn finish_opening(&mut self) {
        while self.opening.is_some() {
            self.poll_opening();
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Installs a level the worker finished.
    fn poll_opening(&mut self) {
        let Some(loaded) = self.opening.as_mut().and_then(|o| o.poll()) else {
            return;
        };
        let Some(load) = self.opening.take() else {
            return;
        };
        match loaded.doc {
            Ok(doc) => {
                self.install_level(load.file(), doc, Some(loaded.compiled));
                if let Some(text) = loaded.text {
                    self.build_disk_text(load.file(), text);
                }
            }
            Err(e) => self.error(format!("cannot open {e}")),
        }
    }

    /// Makes `doc` the open level; `compiled` is its blob when it was compiled
    /// already (on the worker), so it is not compiled twice.
    fn install_level(
        &mut self,
        file: &str,
        doc: LevelDocument,
        compiled: Option<
            Result<crate::editor::preview::PreviewBuild, crate::editor::preview::PreviewError>,
        >,
    ) {
        self.recovery = self.read_recovery(file).filter(|r| *r != doc);
        if self.recovery.is_some() {
            self.note(
                Severity::Warning,
                format!("{file} has unsaved edits from a session that ended without saving; restore them?"),
                true,
            );
        }
        let conflicts = doc.conflicts.len();
        self.level = Some(OpenLevel {
            file: file.to_owned(),
            doc,
        });
        self.forget_disk_build();
        self.keep_level_layout = true;
        self.selection.clear();
        self.history.clear();
        if conflicts > 0 {
            self.note(
                Severity::Warning,
                format!(
                    "{file} has {conflicts} merge conflict{} to resolve (Conflicts tab); until then ours is shown, and kiln check and kiln compile refuse the file",
                    if conflicts == 1 { "" } else { "s" }
                ),
                true,
            );
            self.effects.push(Effect::ShowConflicts);
        }
        self.preview = Preview::default();
        self.follow_document(compiled);
        self.effects.push(Effect::FrameSelection);
        self.info(format!("opened {file}"));
    }

    /// Rebuilds what follows from the document: the tree, the selection (entities
    /// that are gone leave it), and the preview world.
    fn after_edit(&mut self) {
        self.follow_document(None);
    }

    /// [`Editor::after_edit`], spawning `compiled` (a blob and its compile time in
    /// milliseconds, or the compile error) when the document was compiled already
    /// (on the worker that opened it) instead of compiling it again.
    fn follow_document(
        &mut self,
        compiled: Option<
            Result<crate::editor::preview::PreviewBuild, crate::editor::preview::PreviewError>,
        >,
    ) {
        self.doc_layout = None;
        let Some(level) = &self.level else { return };
        // One id index per edit, for the tree, the selection and every lookup after.
        self.entity_index = kiln_core::IdIndex::build(
            level.doc.entities.iter().map(|e| e.id.as_str()),
            level.doc.entities.len(),
        );
        self.tree = SceneTree::build_indexed(&level.doc, &self.entity_index);
        self.tree_revision = next_tree_revision();
        self.prefabs.load_for(&self.project, &level.doc);
        let id_at = |k: usize| level.doc.entities.get(k).map(|e| e.id.as_str());
        let index = &self.entity_index;
        // A part stays selected while its instance exists.
        self.selection.retain(|s| {
            let entity =
                crate::editor::document::split_part(s).map_or(s.as_str(), |(instance, _)| instance);
            index.find(entity, id_at).is_some()
        });
        let playing = self.preview.playing;
        // Fields borrowed apart, so the document is compiled in place, not cloned.
        let result = match compiled {
            Some(Ok(build)) => self
                .preview
                .install(&self.registry, build.blob, build.compile_ms)
                .map(|()| build.left_out)
                .map_err(crate::editor::preview::PreviewError::Spawn),
            Some(Err(e)) => Err(e),
            None => self
                .preview
                .rebuild(&self.registry, &self.project, &level.file, &level.doc),
        };
        match result {
            Ok(left_out) => {
                self.compile_error = None;
                self.left_out = left_out;
            }
            Err(e) => {
                if self.compile_error.as_ref() != Some(&e) {
                    self.note(Severity::Error, e.to_string(), true);
                }
                self.compile_error = Some(e);
            }
        }
        self.preview.playing = playing;
    }

    /// Applies a document edit through the history.
    fn edit(&mut self, edit: DocEdit, continuing: bool) {
        let Some(level) = &mut self.level else { return };
        let fields = field_edits::fields_set(&edit);
        self.history.push(&mut level.doc, edit, continuing);
        if fields.is_some_and(|fields| self.follow_fields(&fields)) {
            return;
        }
        self.after_edit();
    }

    /// Applies an edit and selects what it says.
    fn edit_and_select(&mut self, (edit, selection): entity_edits::EditAndSelection) {
        self.edit(edit, false);
        self.selection = selection;
    }

    /// Performs an action: the one place where the state changes.
    pub fn apply(&mut self, action: Action) {
        let Some(doc) = self.level.as_ref().map(|l| &l.doc) else {
            return self.apply_without_level(action);
        };
        match action {
            Action::Rename { entity, name } => {
                if let Some(edit) = entity_edits::rename(doc, &entity, name) {
                    self.edit(edit, false);
                }
            }
            Action::Reparent {
                entities,
                parent,
                before,
            } => {
                let pose = |id: &str| self.world_pose(id);
                match entity_edits::reparent(doc, &self.tree, &pose, &entities, parent, before) {
                    Ok(edit) => self.edit(edit, false),
                    Err(entity_edits::Cycle) => {
                        self.error("cannot move an entity under itself or one of its children")
                    }
                }
            }
            Action::SetField {
                entities,
                component,
                instance,
                field,
                value,
                continuing,
            } => {
                let mut edits: Vec<DocEdit> = entities
                    .iter()
                    .filter_map(|entity| {
                        entity_edits::set_field(
                            doc,
                            entity,
                            &component,
                            instance,
                            &field,
                            value.clone(),
                        )
                    })
                    .filter(DocEdit::changes)
                    .collect();
                let edit = match edits.len() {
                    0 => return,
                    // Several entities: one step, and a drag merges step by step.
                    1 if entities.len() == 1 => edits.remove(0),
                    _ => DocEdit::Group(edits),
                };
                self.edit(edit, continuing);
            }
            Action::SetFieldEach {
                component,
                field,
                values,
                continuing,
            } => {
                // Unchanged entities stay in the group, so that every frame of a drag
                // has the same shape and merges into one step.
                let edits: Vec<DocEdit> = values
                    .into_iter()
                    .filter_map(|(entity, value)| {
                        entity_edits::set_field(doc, &entity, &component, None, &field, value)
                    })
                    .collect();
                if !edits.is_empty() {
                    self.edit(DocEdit::Group(edits), continuing);
                }
            }
            Action::ApplyOverrides { instance } => self.apply_overrides(&instance),
            Action::RevertOverride {
                part,
                component,
                field,
            } => {
                let Some((instance_id, key)) = crate::editor::document::split_part(&part) else {
                    return;
                };
                let old =
                    crate::editor::document::override_of(doc, instance_id, key, &component, &field);
                if old.is_some() {
                    let edit = DocEdit::SetOverride {
                        instance: instance_id.to_owned(),
                        key: key.to_owned(),
                        component,
                        field,
                        old,
                        new: None,
                    };
                    self.edit(edit, false);
                }
            }
            Action::AddComponent { entity, component } => {
                if let Some(edit) = entity_edits::add_component(doc, &entity, &component) {
                    self.edit(edit, false);
                }
            }
            Action::RemoveComponent { entity, component } => {
                if let Some(edit) = entity_edits::remove_component(doc, &entity, &component) {
                    self.edit(edit, false);
                }
            }
            Action::PlaceAsset { file, position } => {
                let position = Vec3::from_array(position.unwrap_or([0.0; 3]));
                match entity_edits::place_asset(doc, &file, position) {
                    Some(made) => self.edit_and_select(made),
                    None => self.error(format!(
                        "{file} is not a mesh or a prefab: it cannot be placed"
                    )),
                }
            }
            Action::CreateEntity { position } => {
                let parent = self.selection.first().cloned();
                // The position is in the world; the new entity lives in its parent's space.
                let parent_world = parent
                    .as_deref()
                    .and_then(|p| self.world_pose(p))
                    .unwrap_or(Affine3A::IDENTITY);
                let local = parent_world
                    .inverse()
                    .transform_point3(Vec3::from_array(position));
                let made = entity_edits::new_entity(doc, parent, local);
                self.edit_and_select(made);
            }
            other => self.apply_without_level(other),
        }
    }

    /// The actions that do not need an open level (or do nothing without one).
    fn apply_without_level(&mut self, action: Action) {
        match action {
            Action::Run(c) => self.run(c),
            // Opening the open level again would reload it from disk: a jump to a
            // place in it only selects (the Select that follows).
            Action::OpenLevel(file) if self.is_open(&file) => {}
            Action::OpenLevel(file) => self.open_level(&file),
            Action::Select(ids) => self.selection = ids,
            Action::EndGesture => self.history.end_merge(),
            Action::MoveAssets(plan) => {
                if let Err(e) = self.apply_move(&plan) {
                    self.error(format!("{e:#}"));
                }
            }
            Action::FixReference { place, old, new } => self.fix_reference(&place, &old, &new),
            Action::FixStalePaths => self.fix_stale_paths(),
            Action::ResolveRecovery { restore } => self.resolve_recovery(restore),
            Action::ResolveDiskConflict { take_disk } => self.resolve_disk_conflict(take_disk),
            Action::AnswerTrust { trust } => self.answer_trust(trust),
            Action::DiscardUnsavedEdits => self.discard_unsaved_edits(),
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
                self.import_question = None;
                self.import_files(sources, &folder, on_conflict);
            }
            Action::CancelImport => self.cancel_import(),
            Action::PasteText(text) => self.paste_text(&text),
            Action::ResolveConflict { index, how } => self.resolve_conflict(index, how),
            Action::ResolveAllConflicts(side) => self.resolve_all(side),
            // Entity edits without a level, and the window's own actions (handled by
            // the app before they reach the editor).
            Action::Rename { .. }
            | Action::Reparent { .. }
            | Action::SetField { .. }
            | Action::SetFieldEach { .. }
            | Action::RevertOverride { .. }
            | Action::ApplyOverrides { .. }
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
        let selected = |e: &Editor| {
            e.level.as_ref().map_or_else(Vec::new, |l| {
                entity_edits::selected_subtrees(&l.doc, &e.tree, &e.selection)
            })
        };
        match c {
            UiCommand::Save => {
                if let Err(e) = self.save() {
                    self.error(format!("{e:#}"));
                }
            }
            UiCommand::Undo => self.undo(),
            UiCommand::Redo => self.redo(),
            // Without a camera to put it in front of (tests, scripts): at the origin.
            UiCommand::NewEntity => self.apply(Action::CreateEntity { position: [0.0; 3] }),
            UiCommand::Delete => {
                if let Some(level) = &self.level
                    && let Some(made) =
                        entity_edits::delete(&level.doc, &self.tree, &self.selection)
                {
                    self.edit_and_select(made);
                }
            }
            UiCommand::Duplicate => {
                let copies = selected(self);
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
                        entity_edits::nudge(&level.doc, &self.tree, &self.selection, way)
                {
                    self.apply(Action::Reparent {
                        entities,
                        parent,
                        before,
                    });
                }
            }
            UiCommand::BeginRename => {
                if let Some(id) = self.selection.first() {
                    self.effects.push(Effect::BeginRename(id.clone()));
                }
            }
            UiCommand::PlayPause => self.preview.playing = !self.preview.playing,
            UiCommand::Step => self.step_simulation(1.0 / 60.0),
            UiCommand::Restart => {
                if let Err(e) = self.preview.restart(&self.registry) {
                    self.error(e);
                }
            }
            UiCommand::FrameSelection => self.effects.push(Effect::FrameSelection),
            UiCommand::ToggleTopView => self.top_view = !self.top_view,
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
        self.clipboard = entity_edits::selected_subtrees(&level.doc, &self.tree, &self.selection);
        if self.clipboard.is_empty() {
            return;
        }
        let wrapped = serde_json::json!({ CLIPBOARD_KEY: self.clipboard });
        if let Ok(text) = serde_json::to_string_pretty(&wrapped) {
            self.effects.push(Effect::CopyText(text));
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
                    return self.error(format!(
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
            self.edit_and_select(made);
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
                let existing: Vec<String> = touched
                    .into_iter()
                    .filter(|id| {
                        let entity =
                            crate::editor::document::split_part(id).map_or(id.as_str(), |(i, _)| i);
                        self.entity(entity).is_some()
                    })
                    .collect();
                if !existing.is_empty() {
                    self.selection = existing;
                }
            }
            Some(Err(e)) => self.error(format!("cannot {what}: {e:#}")),
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
        self.step_files(writes, folders, forward)
    }

    fn files_written(&mut self, writes: &[FileWrite], document_edited: bool) {
        self.after_files_written(writes, document_edited);
    }

    fn warn(&mut self, message: String) {
        self.error(message);
    }
}
