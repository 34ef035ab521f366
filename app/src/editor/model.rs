//! The editor's state and the one place where actions change it. No egui here: tests
//! drive [`Editor::apply`] directly, and the GUI is a view that emits actions.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use dependency_checker::Checker;
use dependency_checker::findings::Finding;
use dependency_checker::index::BuildOptions;
use dependency_checker::rename::{Change, MovePlan, MoveRequest, Operation};
use glam::{Affine3A, EulerRot, Vec3};
use kiln_core::schema::json_f32s;
use kiln_core::{EntityDocument, LevelDocument, Project, Registry, write_atomic};
use serde_json::{Map, Value};

use super::actions::{Action, UiCommand};
use super::history::{DocEdit, Entry, History};
use super::preview::{Preview, Resources};
use super::tree::SceneTree;

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
    /// Edits since the last save (0 = clean).
    pub unsaved_edits: usize,
}

/// The editor's whole state.
pub struct Editor {
    /// The open project.
    pub project: Project,
    /// Component and resource types.
    pub registry: Arc<Registry>,
    /// The project's reference index (None if indexing failed; see the log).
    pub checker: Option<Checker>,
    /// What the checker reports.
    pub findings: Vec<Finding>,
    /// Every level of the project.
    pub levels: Vec<String>,
    /// The level being edited.
    pub level: Option<OpenLevel>,
    /// The hierarchy of the open level (rebuilt after each edit).
    pub tree: SceneTree,
    /// Selected authoring ids; the first is the primary one.
    pub selection: Vec<String>,
    /// Edits, for undo and redo.
    pub undo: History,
    /// The runtime world spawned from the level.
    pub preview: Preview,
    /// Meshes and materials for drawing.
    pub resources: Resources,
    /// Why the last compile failed (the preview shows the last good world).
    pub compile_error: Option<String>,
    /// The log panel's lines.
    pub log: Vec<LogLine>,
    /// Messages to show as toasts (taken by the GUI).
    pub toasts: Vec<LogLine>,
    /// Entities copied with Copy.
    pub clipboard: Vec<EntityDocument>,
    /// The entity whose name is being edited in the tree (F2).
    pub renaming: Option<String>,
    /// Camera wants to frame the selection (taken by the viewport).
    pub frame_request: bool,
    /// Top view instead of perspective.
    pub top_view: bool,
    /// Unsaved edits of the open level recovered from a crash, waiting for the user
    /// to restore or discard them.
    pub recovery: Option<LevelDocument>,
    /// When the recovery file was last written.
    recovery_written: Option<std::time::Instant>,
    /// Watches the project so that problems, resources and the preview follow
    /// changes made outside the editor.
    watcher: Option<dependency_checker::watch::ProjectWatcher>,
    /// The open level changed on disk while it had unsaved edits: the version on disk
    /// (or why it does not parse), waiting for the user to choose.
    pub disk_conflict: Option<LevelDocument>,
    /// Timing of the last reload caused by a change on disk.
    pub last_reload: Option<ReloadTiming>,
}

/// What taking a changed level file from disk did.
enum Reload {
    /// The document changed (or a parse error was fixed): rebuild.
    Taken,
    /// The same document as in the editor.
    Same,
    /// Unreadable, broken, or waiting for the user's choice: keep the last good world.
    Blocked,
}

/// How long the last reload from disk took, split by stage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReloadTiming {
    /// From the first file-system event to the change being applied (debounce,
    /// indexing the changed files).
    pub detect_ms: f64,
    /// Compiling the level.
    pub compile_ms: f64,
    /// Despawning the old world and spawning the new one.
    pub spawn_ms: f64,
}

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Editor")
            .field("project", &self.project.root())
            .field("level", &self.level.as_ref().map(|l| &l.file))
            .finish_non_exhaustive()
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
        let mut editor = Editor {
            project,
            registry,
            checker: None,
            findings: Vec::new(),
            levels,
            level: None,
            tree: SceneTree::default(),
            selection: Vec::new(),
            undo: History::default(),
            preview: Preview::default(),
            resources: Resources::default(),
            compile_error: None,
            log: Vec::new(),
            toasts: Vec::new(),
            clipboard: Vec::new(),
            renaming: None,
            frame_request: false,
            top_view: false,
            recovery: None,
            recovery_written: None,
            watcher: None,
            disk_conflict: None,
            last_reload: None,
        };
        editor.start_watching(waker);
        editor.refresh_problems();
        let first = editor
            .project
            .config()
            .boot_levels
            .first()
            .map(|l| format!("{l}.level"))
            .filter(|l| editor.levels.contains(l))
            .or_else(|| editor.levels.first().cloned());
        if let Some(level) = first {
            editor.open_level(&level);
        }
        Ok(editor)
    }

    fn note(&mut self, severity: Severity, text: String, toast: bool) {
        if toast {
            self.toasts.push(LogLine {
                severity,
                text: text.clone(),
            });
        }
        self.log.push(LogLine { severity, text });
    }

    /// Logs an error and shows it as a toast.
    pub fn error(&mut self, text: impl Into<String>) {
        self.note(Severity::Error, text.into(), true);
    }

    /// Logs information.
    pub fn info(&mut self, text: impl Into<String>) {
        self.note(Severity::Info, text.into(), false);
    }

    fn start_watching(&mut self, waker: Option<dependency_checker::watch::Waker>) {
        let debounce = dependency_checker::watch::Debounce::default();
        match dependency_checker::watch::ProjectWatcher::start_with_waker(
            self.project.root(),
            debounce,
            waker,
        ) {
            Ok(w) => self.watcher = Some(w),
            Err(e) => self.note(
                Severity::Warning,
                format!("{e}; changes made outside Kiln show after Refresh"),
                false,
            ),
        }
    }

    /// Folds changes made outside the editor into the index, and recompiles and
    /// respawns the open level if the change reaches it (the graph decides). Camera,
    /// selection, tree state and play state are kept. Called every frame; cheap when
    /// nothing changed.
    pub fn poll_changes(&mut self) {
        let Some(watcher) = &self.watcher else { return };
        let mut batches = Vec::new();
        while let Some(b) = watcher.try_next_batch() {
            batches.push(b);
        }
        if !batches.is_empty() && watcher.root_is_gone() {
            // Changes inside a folder renamed away no longer map to the project.
            self.watcher = None;
            self.error(format!(
                "the project folder {} was moved, renamed or deleted: changes to its files are no longer seen; open it again where it is now (File > Open project)",
                self.project.root().display()
            ));
            return;
        }
        if !batches.is_empty() {
            let first_event = batches.iter().filter_map(|b| b.first_event).min();
            self.fold_batches(&batches, first_event);
        }
    }

    fn fold_batches(
        &mut self,
        batches: &[dependency_checker::watch::ChangeBatch],
        first_event: Option<std::time::Instant>,
    ) {
        let Some(checker) = &mut self.checker else {
            return;
        };
        let mut changed = Vec::new();
        let mut notes = Vec::new();
        for b in batches {
            match checker.apply_changes(b) {
                Ok(report) => {
                    changed.extend(report.changed);
                    for (old, new) in report.renamed {
                        notes.push(LogLine { severity: Severity::Warning, text: format!("{old} was renamed to {new} outside Kiln; its references are reported in Problems") });
                    }
                }
                Err(e) => notes.push(LogLine {
                    severity: Severity::Error,
                    text: e.to_string(),
                }),
            }
        }
        self.log.extend(notes);
        if changed.is_empty() {
            return;
        }
        let Some(checker) = &self.checker else { return };
        self.findings = checker.findings();
        let affected = crate::live::affected_levels(checker, &changed);
        if changed
            .iter()
            .any(|f| f.ends_with(".mesh") || f.ends_with(".material"))
        {
            let files: Vec<String> = checker
                .index()
                .files()
                .map(|f| f.path.to_string())
                .collect();
            self.resources = Resources::load(&self.project, &self.registry, files.into_iter());
        }
        if changed.iter().any(|f| f.ends_with(".level")) {
            self.levels = self.project.levels().unwrap_or_default();
        }
        let Some(level) = &self.level else { return };
        let file = level.file.clone();
        if !affected.contains(&file) && !changed.contains(&file) {
            return;
        }
        let detect_ms = first_event.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
        if changed.contains(&file) {
            match self.reload_from_disk(&file) {
                Reload::Blocked => return,
                // The same document (our own save, whitespace): rebuild only if
                // something else it includes changed too.
                Reload::Same => {
                    let others: Vec<String> =
                        changed.iter().filter(|c| **c != file).cloned().collect();
                    let Some(checker) = &self.checker else { return };
                    if !crate::live::affected_levels(checker, &others).contains(&file) {
                        return;
                    }
                }
                Reload::Taken => {}
            }
        }
        self.after_edit();
        let t = self.preview.timing;
        self.last_reload = Some(ReloadTiming {
            detect_ms,
            compile_ms: t.compile_ms,
            spawn_ms: t.spawn_ms,
        });
        self.info(format!(
            "{file} reloaded after {} changed",
            crate::live::summarize(&changed)
        ));
    }

    /// Takes the open level's file from disk after it changed there.
    fn reload_from_disk(&mut self, file: &str) -> Reload {
        let text = match self.project.resolve(file).and_then(|p| {
            std::fs::read_to_string(&p)
                .map_err(|e| kiln_core::ProjectError::Io { path: p, source: e })
        }) {
            Ok(t) => t,
            Err(e) => {
                self.error(format!("{file} changed on disk and cannot be read: {e}"));
                return Reload::Blocked;
            }
        };
        let on_disk = match LevelDocument::parse(&text, file) {
            Ok(d) => d,
            Err(e) => {
                // Keep the last good document and world; say where the file broke.
                let message = e.to_string();
                if self.compile_error.as_ref() != Some(&message) {
                    self.note(Severity::Error, message.clone(), true);
                }
                self.compile_error = Some(message);
                return Reload::Blocked;
            }
        };
        let Some(level) = &self.level else {
            return Reload::Blocked;
        };
        if on_disk == level.doc {
            // A previous parse error is fixed, even if the document is the same.
            return if self.compile_error.take().is_some() {
                Reload::Taken
            } else {
                Reload::Same
            };
        }
        if level.unsaved_edits > 0 {
            self.note(
                Severity::Warning,
                format!("{file} changed on disk while it has unsaved edits: choose which to keep"),
                true,
            );
            self.disk_conflict = Some(on_disk);
            return Reload::Blocked;
        }
        self.replace_document(on_disk);
        if let Some(level) = &mut self.level {
            level.unsaved_edits = 0;
        }
        Reload::Taken
    }

    /// Replaces the whole open document as one undoable step.
    fn replace_document(&mut self, new: LevelDocument) {
        let Some(level) = &mut self.level else { return };
        let command = DocEdit::ReplaceAll {
            other: Box::new(new),
        };
        self.undo.push(&mut level.doc, command, false);
    }

    /// Resolves a disk conflict: keep the edits in the editor (they overwrite the file
    /// on the next save) or take the version on disk (the edits stay undoable).
    pub fn resolve_disk_conflict(&mut self, take_disk: bool) {
        let Some(on_disk) = self.disk_conflict.take() else {
            return;
        };
        if take_disk {
            self.replace_document(on_disk);
            if let Some(level) = &mut self.level {
                level.unsaved_edits = 0;
            }
            self.after_edit();
        }
    }

    /// Re-indexes the project and reloads meshes and materials.
    pub fn refresh_problems(&mut self) {
        match Checker::open(
            self.project.root(),
            self.registry.clone(),
            &BuildOptions::default(),
        ) {
            Ok(checker) => {
                self.findings = checker.findings();
                let files: Vec<String> = checker
                    .index()
                    .files()
                    .map(|f| f.path.to_string())
                    .collect();
                self.resources = Resources::load(&self.project, &self.registry, files.into_iter());
                self.checker = Some(checker);
            }
            Err(e) => self.error(format!("indexing the project failed: {e}")),
        }
    }

    /// Opens a level, replacing the current one (the GUI asks about unsaved edits first).
    pub fn open_level(&mut self, file: &str) {
        let text = match self.project.resolve(file).and_then(|p| {
            std::fs::read_to_string(&p)
                .map_err(|e| kiln_core::ProjectError::Io { path: p, source: e })
        }) {
            Ok(t) => t,
            Err(e) => return self.error(format!("cannot open {file}: {e}")),
        };
        let doc = match LevelDocument::parse(&text, file) {
            Ok(d) => d,
            Err(e) => return self.error(format!("cannot open {e}")),
        };
        self.recovery = self.read_recovery(file).filter(|r| *r != doc);
        if self.recovery.is_some() {
            self.note(
                Severity::Warning,
                format!("{file} has unsaved edits from a session that ended without saving; restore them?"),
                true,
            );
        }
        self.level = Some(OpenLevel {
            file: file.to_owned(),
            doc,
            unsaved_edits: 0,
        });
        self.selection.clear();
        self.undo.clear();
        self.preview = Preview::default();
        self.after_edit();
        self.frame_request = true;
        self.info(format!("opened {file}"));
    }

    /// Whether the open level has unsaved edits.
    pub fn is_dirty(&self) -> bool {
        self.level.as_ref().is_some_and(|l| l.unsaved_edits > 0)
    }

    fn after_edit(&mut self) {
        let Some(level) = &self.level else { return };
        self.tree = SceneTree::build(&level.doc);
        let ids: HashSet<&str> = level.doc.entities.iter().map(|e| e.id.as_str()).collect();
        self.selection.retain(|s| ids.contains(s.as_str()));
        let playing = self.preview.playing;
        // Fields borrowed apart, so the document is compiled in place, not cloned.
        let result = self
            .preview
            .rebuild(&self.registry, &self.project, &level.file, &level.doc);
        match result {
            Ok(()) => self.compile_error = None,
            Err(e) => {
                if self.compile_error.as_ref() != Some(&e) {
                    self.note(Severity::Error, e.clone(), true);
                }
                self.compile_error = Some(e);
            }
        }
        self.preview.playing = playing;
    }

    fn edit(&mut self, command: DocEdit, continuing: bool) {
        let Some(level) = &mut self.level else { return };
        self.undo.push(&mut level.doc, command, continuing);
        level.unsaved_edits += 1;
        self.after_edit();
    }

    /// Whether `file` is the level open now.
    pub fn is_open(&self, file: &str) -> bool {
        self.level.as_ref().is_some_and(|l| l.file == file)
    }

    /// The entity with authoring id `id` in the open level.
    pub fn entity(&self, id: &str) -> Option<&EntityDocument> {
        self.level.as_ref()?.doc.entity(id)
    }

    /// Performs an action.
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::Run(c) => self.command(c),
            // Opening the open level again would reload it from disk: a jump to a
            // place in it only selects (the Select that follows).
            Action::OpenLevel(file) if self.is_open(&file) => {}
            Action::OpenLevel(file) => self.open_level(&file),
            Action::Select(ids) => self.selection = ids,
            Action::Rename { entity, name } => {
                self.renaming = None;
                let Some(old) = self.entity(&entity).map(|e| e.name.clone()) else {
                    return;
                };
                if old != name {
                    self.edit(
                        DocEdit::Rename {
                            entity,
                            old,
                            new: name,
                        },
                        false,
                    );
                }
            }
            Action::Reparent {
                entities,
                parent,
                before,
            } => self.reparent(&entities, parent, before),
            Action::SetField {
                entity,
                component,
                instance,
                field,
                value,
                continuing,
            } => {
                let Some(e) = self.entity(&entity) else {
                    return;
                };
                let old = match (e.components.get(&component), instance) {
                    (Some(Value::Object(m)), None) => m.get(&field).cloned(),
                    (Some(Value::Array(items)), Some(i)) => {
                        items.get(i).and_then(|m| m.get(&field)).cloned()
                    }
                    _ => None,
                };
                if old.as_ref() == Some(&value) {
                    return;
                }
                self.edit(
                    DocEdit::SetField {
                        entity,
                        component,
                        instance,
                        field,
                        old,
                        new: Some(value),
                    },
                    continuing,
                );
            }
            Action::AddComponent { entity, component } => {
                let Some(e) = self.entity(&entity) else {
                    return;
                };
                if e.components.contains_key(&component) {
                    return;
                }
                self.edit(
                    DocEdit::SetComponent {
                        entity,
                        component,
                        old: None,
                        new: Some(Value::Object(Map::new())),
                    },
                    false,
                );
            }
            Action::RemoveComponent { entity, component } => {
                let Some(old) = self
                    .entity(&entity)
                    .and_then(|e| e.components.get(&component))
                    .cloned()
                else {
                    return;
                };
                self.edit(
                    DocEdit::SetComponent {
                        entity,
                        component,
                        old: Some(old),
                        new: None,
                    },
                    false,
                );
            }
            Action::EndGesture => self.undo.end_merge(),
        }
    }

    fn command(&mut self, c: UiCommand) {
        match c {
            UiCommand::Save => {
                if let Err(e) = self.save() {
                    self.error(format!("{e:#}"));
                }
            }
            UiCommand::Undo => self.undo(),
            UiCommand::Redo => self.redo(),
            UiCommand::NewEntity => self.new_entity(),
            UiCommand::Delete => self.delete_selected(),
            UiCommand::Duplicate => {
                let copies = self.selected_subtrees();
                self.paste(copies);
            }
            UiCommand::Copy => self.clipboard = self.selected_subtrees(),
            UiCommand::Paste => {
                let copies = self.clipboard.clone();
                self.paste(copies);
            }
            UiCommand::BeginRename => self.renaming = self.selection.first().cloned(),
            UiCommand::PlayPause => self.preview.playing = !self.preview.playing,
            UiCommand::Step => self.preview.step(1.0 / 60.0),
            UiCommand::Restart => {
                if let Err(e) = self.preview.restart(&self.registry) {
                    self.error(e);
                }
            }
            UiCommand::FrameSelection => self.frame_request = true,
            UiCommand::ToggleTopView => self.top_view = !self.top_view,
            UiCommand::RefreshProblems => self.refresh_problems(),
        }
    }

    fn undo(&mut self) {
        if let Some(entry) = self.undo.take_undo() {
            self.step(entry, false);
        }
    }

    fn redo(&mut self) {
        if let Some(entry) = self.undo.take_redo() {
            self.step(entry, true);
        }
    }

    /// Redoes (`forward`) or undoes one history entry and files it on the other stack;
    /// an asset move that fails goes back where it was.
    fn step(&mut self, entry: Entry, forward: bool) {
        let done = match entry {
            Entry::Doc(mut c) => {
                if let Some(level) = &mut self.level {
                    if forward {
                        c.apply(&mut level.doc)
                    } else {
                        c.revert(&mut level.doc)
                    }
                    level.unsaved_edits += 1;
                }
                self.after_edit();
                Ok(Entry::Doc(c))
            }
            Entry::Asset {
                forward: ahead,
                inverse,
            } => {
                let result = self.execute(if forward { &ahead } else { &inverse });
                let entry = Entry::Asset {
                    forward: ahead,
                    inverse,
                };
                match result {
                    Ok(_) => Ok(entry),
                    Err(e) => Err((entry, e)),
                }
            }
        };
        match (done, forward) {
            (Ok(entry), true) => self.undo.redone(entry),
            (Ok(entry), false) => self.undo.undone(entry),
            (Err((entry, e)), true) => {
                self.error(format!("cannot redo the move: {e}"));
                self.undo.restore_undone(entry);
            }
            (Err((entry, e)), false) => {
                self.error(format!("cannot undo the move: {e}"));
                self.undo.redone(entry);
            }
        }
    }

    /// Where the unsaved edits of level `file` are kept in case of a crash.
    fn recovery_path(&self, file: &str) -> std::path::PathBuf {
        self.project.root().join(".kiln/recovery").join(file)
    }

    fn read_recovery(&self, file: &str) -> Option<LevelDocument> {
        // Never through a link in `.kiln/`, never a FIFO or a device.
        let rel = std::path::Path::new(".kiln/recovery").join(file);
        let bytes = kiln_core::read_below(self.project.root(), &rel, 1 << 30).ok()?;
        LevelDocument::parse(std::str::from_utf8(&bytes).ok()?, file).ok()
    }

    /// Forgets the open level's unsaved edits on purpose (Discard): its recovery file
    /// goes, and none is written again for them.
    pub fn discard_unsaved_edits(&mut self) {
        let Some(level) = &mut self.level else { return };
        level.unsaved_edits = 0;
        let file = level.file.clone();
        self.remove_recovery(&file);
    }

    fn remove_recovery(&mut self, file: &str) {
        let _ = std::fs::remove_file(self.recovery_path(file));
        self.recovery_written = None;
    }

    /// Writes the open level's unsaved edits to its recovery file, at most every
    /// `interval`, so that a crash loses at most that much work. Called every frame.
    pub fn write_recovery(&mut self, interval: std::time::Duration) {
        let Some(level) = &self.level else { return };
        if level.unsaved_edits == 0
            || self
                .recovery_written
                .is_some_and(|t| t.elapsed() < interval)
        {
            return;
        }
        let path = self.recovery_path(&level.file);
        let text = level.doc.to_canonical_json(&self.registry);
        self.recovery_written = Some(std::time::Instant::now());
        let rel = std::path::Path::new(".kiln/recovery").join(&level.file);
        if let Err(e) = kiln_core::write_below(self.project.root(), &rel, text.as_bytes()) {
            self.note(
                Severity::Warning,
                format!("cannot write the recovery file {}: {e}", path.display()),
                false,
            );
        }
    }

    /// Replaces the open level with the recovered edits (one undoable step), or
    /// discards them.
    pub fn resolve_recovery(&mut self, restore: bool) {
        let Some(recovered) = self.recovery.take() else {
            return;
        };
        let Some(level) = &self.level else { return };
        let file = level.file.clone();
        if restore {
            self.edit(
                DocEdit::ReplaceAll {
                    other: Box::new(recovered),
                },
                false,
            );
            self.info(format!("restored the unsaved edits of {file}"));
        } else {
            self.remove_recovery(&file);
        }
    }

    /// Plans a rename or move of project files (nothing changes yet).
    pub fn plan_move(&self, request: &MoveRequest) -> anyhow::Result<MovePlan> {
        let checker = self
            .checker
            .as_ref()
            .context("the project is not indexed")?;
        Ok(dependency_checker::rename::plan(checker, request)?)
    }

    /// Applies a planned move as one undoable step.
    pub fn apply_move(&mut self, plan: MovePlan) {
        let forward = Operation::Move(MoveRequest {
            pairs: plan.renames.clone(),
            undoes: None,
        });
        match self.apply_plan(&plan) {
            Ok(inverse) => {
                self.info(format!(
                    "moved {} files, patched {} references",
                    plan.moves.len(),
                    plan.change_count()
                ));
                self.undo.push_done(Entry::Asset { forward, inverse });
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    fn execute(&mut self, operation: &Operation) -> anyhow::Result<Operation> {
        let checker = self
            .checker
            .as_ref()
            .context("the project is not indexed")?;
        let plan = operation.plan(checker)?;
        self.apply_plan(&plan)
    }

    /// Applies a plan of patches (a fix) as one undoable step.
    fn apply_fix(&mut self, plan: MovePlan, done: String) {
        match self.apply_plan(&plan) {
            Ok(inverse) => {
                self.info(done);
                self.undo.push_done(Entry::Asset {
                    forward: Operation::Patch(Box::new(plan)),
                    inverse,
                });
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    /// Applies `plan` on disk, mirrors its patches into the open document (so that
    /// unsaved edits and the file agree), follows the open level if it moved, and
    /// refreshes everything that depends on files.
    fn apply_plan(&mut self, plan: &MovePlan) -> anyhow::Result<Operation> {
        let checker = self
            .checker
            .as_mut()
            .context("the project is not indexed")?;
        let inverse = dependency_checker::rename::apply(checker, plan)?;
        if let Some(level) = &mut self.level {
            for edit in plan.edits.iter().filter(|e| e.file == level.file) {
                for c in &edit.changes {
                    patch_reference(&mut level.doc, c);
                }
            }
            if let Some((_, new)) = plan.moves.iter().find(|(old, _)| *old == level.file) {
                level.file = new.clone();
            }
        }
        self.levels = self.project.levels().unwrap_or_default();
        if let Some(checker) = &self.checker {
            self.findings = checker.findings();
            let files: Vec<String> = checker
                .index()
                .files()
                .map(|f| f.path.to_string())
                .collect();
            self.resources = Resources::load(&self.project, &self.registry, files.into_iter());
        }
        self.after_edit();
        Ok(inverse)
    }

    /// Rewrites one reference (found by its place) from `old` to `new`, through the
    /// dependency checker's journaled patching.
    pub fn fix_reference(
        &mut self,
        place: &dependency_checker::findings::Place,
        old: &str,
        new: &str,
    ) {
        let Some(checker) = &self.checker else { return };
        let Some(entry) = checker.index().file(&place.file) else {
            return;
        };
        let Some(raw) = entry
            .scan
            .iter()
            .find(|r| r.pointer == place.pointer && r.line == place.line && r.text == old)
        else {
            return self.error(format!(
                "{}: the reference changed; refresh the problems",
                place.file
            ));
        };
        let change = Change {
            place: place.clone(),
            span: raw.span,
            old_text: old.to_owned(),
            new_text: new.to_owned(),
        };
        let edit = dependency_checker::rename::FileEdit {
            file: place.file.clone(),
            expected_hash: entry.hash,
            changes: vec![change],
        };
        let done = format!("{}: \"{old}\" -> \"{new}\"", place.file);
        self.apply_fix(MovePlan::patches(vec![edit]), done);
    }

    /// Patches every reference that still uses a path the redirect log moved.
    pub fn fix_stale_paths(&mut self) {
        let Some(checker) = &self.checker else { return };
        let plan = dependency_checker::rename::plan_redirect_fixes(checker);
        let done = format!("fixed {} stale references", plan.change_count());
        self.apply_fix(plan, done);
    }

    /// Writes the level as canonical JSON through a temporary file and a rename.
    pub fn save(&mut self) -> anyhow::Result<()> {
        let Some(level) = &mut self.level else {
            return Ok(());
        };
        let path = self.project.resolve(&level.file)?;
        let text = level.doc.to_canonical_json(&self.registry);
        write_atomic(&path, text.as_bytes()).with_context(|| format!("saving {}", level.file))?;
        level.unsaved_edits = 0;
        let file = level.file.clone();
        self.remove_recovery(&file);
        self.info(format!("saved {file}"));
        if let Some(checker) = &mut self.checker {
            let _ = checker.refresh(&[file]);
            self.findings = checker.findings();
        }
        Ok(())
    }

    fn unique_id(&self, base: &str, taken: &HashSet<String>) -> String {
        let base = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_');
        let base = if base.is_empty() { "entity" } else { base };
        (1..)
            .map(|n| format!("{base}_{n}"))
            .find(|id| !taken.contains(id))
            .unwrap_or_else(|| base.to_owned())
    }

    fn ids(&self) -> HashSet<String> {
        self.level
            .as_ref()
            .map(|l| l.doc.entities.iter().map(|e| e.id.clone()).collect())
            .unwrap_or_default()
    }

    fn new_entity(&mut self) {
        let Some(level) = &self.level else { return };
        let id = self.unique_id("entity", &self.ids());
        let parent = self.selection.first().cloned();
        let n = id.rsplit('_').next().unwrap_or("1").to_owned();
        let mut components = Map::new();
        components.insert("transform".into(), Value::Object(Map::new()));
        let entity = EntityDocument {
            id: id.clone(),
            name: format!("Entity {n}"),
            parent,
            components,
            ..Default::default()
        };
        let position = level.doc.entities.len();
        self.edit(
            DocEdit::Insert {
                entities: vec![(position, entity)],
            },
            false,
        );
        self.selection = vec![id];
    }

    /// The selected entities with all their descendants, in file order, without
    /// repeating an entity whose ancestor is also selected.
    fn selected_subtrees(&self) -> Vec<EntityDocument> {
        let Some(level) = &self.level else {
            return Vec::new();
        };
        let mut picked = HashSet::new();
        for id in &self.selection {
            if let Some(i) = level.doc.entities.iter().position(|e| &e.id == id) {
                picked.extend(self.tree.subtree(i));
            }
        }
        level
            .doc
            .entities
            .iter()
            .enumerate()
            .filter(|(i, _)| picked.contains(i))
            .map(|(_, e)| e.clone())
            .collect()
    }

    fn delete_selected(&mut self) {
        let Some(level) = &self.level else { return };
        let doomed: HashSet<String> = self.selected_subtrees().into_iter().map(|e| e.id).collect();
        if doomed.is_empty() {
            return;
        }
        let entities: Vec<(usize, EntityDocument)> = level
            .doc
            .entities
            .iter()
            .enumerate()
            .filter(|(_, e)| doomed.contains(&e.id))
            .map(|(i, e)| (i, e.clone()))
            .collect();
        self.edit(DocEdit::Remove { entities }, false);
        self.selection.clear();
    }

    /// Inserts copies of `entities` (subtrees) with fresh ids; roots of the copy go
    /// under the selected entity's parent, or where the originals were.
    fn paste(&mut self, entities: Vec<EntityDocument>) {
        let Some(level) = &self.level else { return };
        if entities.is_empty() {
            return;
        }
        let mut taken = self.ids();
        let mut renamed = std::collections::HashMap::new();
        for e in &entities {
            let id = self.unique_id(&e.id, &taken);
            taken.insert(id.clone());
            renamed.insert(e.id.clone(), id);
        }
        let mut inserts = Vec::new();
        for (position, e) in (level.doc.entities.len()..).zip(entities) {
            let mut copy = e.clone();
            copy.id = renamed[&e.id].clone();
            copy.parent = match &e.parent {
                Some(p) if renamed.contains_key(p) => Some(renamed[p].clone()),
                other => other.clone().filter(|p| level.doc.entity(p).is_some()),
            };
            inserts.push((position, copy));
        }
        let roots: Vec<String> = inserts
            .iter()
            .filter(|(_, e)| {
                e.parent
                    .as_ref()
                    .is_none_or(|p| !renamed.values().any(|r| r == p))
            })
            .map(|(_, e)| e.id.clone())
            .collect();
        self.edit(DocEdit::Insert { entities: inserts }, false);
        self.selection = roots;
    }

    /// The world pose of an entity in the preview world, if it has a transform there.
    pub fn world_pose(&self, id: &str) -> Option<Affine3A> {
        let e = self.preview.level.as_ref()?.entity(id)?;
        let t = self.preview.world.transforms.lookup(e)?;
        Some(self.preview.world.transforms.world(t))
    }

    fn reparent(&mut self, entities: &[String], parent: Option<String>, before: Option<String>) {
        let Some(level) = &self.level else { return };
        let index = |id: &str| level.doc.entities.iter().position(|e| e.id == id);
        // Refuse cycles: the new parent must not be one of the moved entities or below them.
        if let Some(p) = parent.as_deref().and_then(index)
            && entities
                .iter()
                .filter_map(|e| index(e))
                .any(|m| self.tree.is_within(p, m))
        {
            return self.error("cannot move an entity under itself or one of its children");
        }
        let parent_world = parent
            .as_deref()
            .and_then(|p| self.world_pose(p))
            .unwrap_or(Affine3A::IDENTITY);
        let mut replace = Vec::new();
        for id in entities {
            let Some(old) = level.doc.entity(id).cloned() else {
                continue;
            };
            let mut new = old.clone();
            new.parent = parent.clone();
            // Keep the world pose: local = parent_world^-1 * world.
            if let (Some(world), Some(Value::Object(t))) =
                (self.world_pose(id), new.components.get_mut("transform"))
            {
                let local = parent_world.inverse() * world;
                let (scale, rotation, translation) = local.to_scale_rotation_translation();
                let (x, y, z) = rotation.to_euler(EulerRot::XYZ);
                let round = |v: Vec3| (v * 10_000.0).round() / 10_000.0;
                t.insert("position".into(), json_f32s(&round(translation).to_array()));
                t.insert(
                    "rotation".into(),
                    json_f32s(
                        &round(Vec3::new(x, y, z) * (180.0 / std::f32::consts::PI)).to_array(),
                    ),
                );
                t.insert("scale".into(), json_f32s(&round(scale).to_array()));
            }
            replace.push((old, new));
        }
        // Order among siblings is the order in the file: move the entities' entries
        // before `before` (or to the end).
        let moved: HashSet<&String> = entities.iter().collect();
        let removed: Vec<(usize, EntityDocument)> = level
            .doc
            .entities
            .iter()
            .enumerate()
            .filter(|(_, e)| moved.contains(&e.id))
            .map(|(i, e)| (i, e.clone()))
            .collect();
        let remaining: Vec<&EntityDocument> = level
            .doc
            .entities
            .iter()
            .filter(|e| !moved.contains(&e.id))
            .collect();
        let at = before
            .as_deref()
            .and_then(|b| remaining.iter().position(|e| e.id == b))
            .unwrap_or(remaining.len());
        let inserted: Vec<(usize, EntityDocument)> = replace
            .iter()
            .enumerate()
            .map(|(k, (_, new))| (at + k, new.clone()))
            .collect();
        let group = DocEdit::Group(vec![
            DocEdit::Remove { entities: removed },
            DocEdit::Insert { entities: inserted },
        ]);
        self.edit(group, false);
    }
}

/// Applies one planned reference change to the in-memory document: the value at the
/// change's pointer, found within its entity by authoring id (positions may differ
/// from the file when there are unsaved edits), if it still has the old text.
fn patch_reference(doc: &mut LevelDocument, change: &Change) {
    let Some(entity_id) = &change.place.entity else {
        return;
    };
    let Some(entity) = doc.entity_mut(entity_id) else {
        return;
    };
    // "/entities/N/components/mesh/material" -> "/components/mesh/material"
    let mut parts = change.place.pointer.splitn(4, '/');
    let (_, _, _) = (parts.next(), parts.next(), parts.next());
    let Some(rest) = parts.next() else { return };
    let Ok(mut value) = serde_json::to_value(&*entity) else {
        return;
    };
    if let Some(slot) = value.pointer_mut(&format!("/{rest}"))
        && slot.as_str() == Some(change.old_text.as_str())
    {
        *slot = Value::String(change.new_text.clone());
        if let Ok(patched) = serde_json::from_value(value) {
            *entity = patched;
        }
    }
}
