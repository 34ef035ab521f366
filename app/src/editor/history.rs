//! Edits to the open level as commands with `apply` and `revert`, kept on one undo
//! stack (the Fyrox pattern). Each command stores everything needed to undo it, so
//! deleting an entity and undoing brings back the same authoring id, subtree, place in
//! the list and components.
//!
//! The history runs its own steps: [`History::undo`] and [`History::redo`] do or
//! undo a step through a [`StepContext`] (the editor, or a bare document in tests),
//! which offers only what steps need: the document, the dependency checker's
//! operations, and whole-file writes. A group is done in order and undone in
//! reverse order, and taken back whole when one of its steps fails.

use anyhow::Context as _;
use dependency_checker::ops::{MovePlan, Operation};
use kiln_core::LevelDocument;

use super::document::DocEdit;

/// What a history step acts on. The editor implements it over its project; a step
/// does and undoes itself through it (see [`Entry::run`]).
pub trait StepContext {
    /// The open level's document, if a level is open.
    fn document(&mut self) -> Option<&mut LevelDocument>;
    /// The document was changed by a step: refresh what is derived from it.
    fn document_changed(&mut self);
    /// Runs an operation of the dependency checker on the project (a move with
    /// every reference to it, or a fix of references): `planned`, the plan the user
    /// previewed, the first time; planned again when redone. Returns the operation
    /// that undoes it.
    fn run_operation(
        &mut self,
        operation: &Operation,
        planned: Option<&MovePlan>,
    ) -> anyhow::Result<Operation>;
    /// Puts project files and folders as they were after (`forward`) or before a
    /// step, all or none: a file changed on disk since the editor wrote it is
    /// refused, and what was written before a failure is put back.
    fn put_files(
        &mut self,
        writes: &[FileWrite],
        folders: &[FolderWrite],
        forward: bool,
    ) -> anyhow::Result<()>;
    /// A step's files and its document edit (`document_edited`: it had one) are
    /// done: refresh what reads them.
    fn files_written(&mut self, writes: &[FileWrite], document_edited: bool);
    /// Something that went wrong without stopping the step (taking back part of a
    /// group that failed).
    fn warn(&mut self, message: String);
}

/// A bare document as a context: level edits only (tests of the history alone).
impl StepContext for LevelDocument {
    fn document(&mut self) -> Option<&mut LevelDocument> {
        Some(self)
    }
    fn document_changed(&mut self) {}
    fn run_operation(&mut self, _: &Operation, _: Option<&MovePlan>) -> anyhow::Result<Operation> {
        anyhow::bail!("no project to run an operation on")
    }
    fn put_files(&mut self, _: &[FileWrite], _: &[FolderWrite], _: bool) -> anyhow::Result<()> {
        anyhow::bail!("no project to write files in")
    }
    fn files_written(&mut self, _: &[FileWrite], _: bool) {}
    fn warn(&mut self, _: String) {}
}

/// One project file as the editor wrote it: its bytes before and after (`None`: the
/// file did not exist / was removed).
#[derive(Debug, Clone, PartialEq)]
pub struct FileWrite {
    /// Project path.
    pub file: String,
    /// Bytes before.
    pub before: Option<Vec<u8>>,
    /// Bytes after.
    pub after: Option<Vec<u8>>,
}

/// A folder the editor made or removed: `made` when doing the step makes it (and
/// undoing removes it, if it is empty then), otherwise doing removes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderWrite {
    /// Project path of the folder.
    pub folder: String,
    /// Whether the step makes it (rather than removes it).
    pub made: bool,
}

/// One step of the undo history.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// An edit of the open level.
    Doc(DocEdit),
    /// A change of project files through the dependency checker (an asset rename or
    /// move with every reference to it, or a fix of references), with the operation
    /// that undoes it.
    Asset {
        /// The operation as done.
        forward: Operation,
        /// The operation that undoes it, as the last run forward made it (`None`
        /// until the step is first run).
        inverse: Option<Operation>,
        /// The plan the user previewed, for the first run (a step run again is
        /// planned again).
        planned: Option<Box<MovePlan>>,
    },
    /// Project files the editor wrote whole (a unit written by "apply overrides" or
    /// "create prefab", an asset edited in the inspector), with the edit of the open
    /// document that goes with them, if any.
    Files {
        /// What was written.
        writes: Vec<FileWrite>,
        /// Folders made or removed with them.
        folders: Vec<FolderWrite>,
        /// The document's side of the change.
        edit: Option<DocEdit>,
        /// What it was, for the Edit menu.
        label: String,
    },
    /// Several steps as one (deleting an asset after pointing its references at
    /// another): done in order, undone in reverse order.
    Group {
        /// The steps.
        entries: Vec<Entry>,
        /// What it was, for the Edit menu.
        label: String,
    },
}

impl Entry {
    /// A short description for the Edit menu.
    pub fn describe(&self) -> String {
        match self {
            Entry::Doc(c) => c.describe(),
            Entry::Asset { forward, .. } => match forward {
                dependency_checker::ops::Operation::Move(request) => {
                    match request.pairs.as_slice() {
                        [(old, new)] => format!("move {old} to {new}"),
                        pairs => format!("move {} files", pairs.len()),
                    }
                }
                dependency_checker::ops::Operation::Patch(plan) => {
                    format!("fix {} references", plan.change_count())
                }
            },
            Entry::Files { label, .. } | Entry::Group { label, .. } => label.clone(),
        }
    }

    /// Does (`forward`) or undoes the step through `ctx`. A group is done in order
    /// and undone in reverse order; if one of its steps fails, the ones already run
    /// are run back, so that the group stays where it was.
    pub fn run(&mut self, ctx: &mut dyn StepContext, forward: bool) -> anyhow::Result<()> {
        match self {
            Entry::Doc(edit) => {
                if let Some(doc) = ctx.document() {
                    edit.run(doc, forward);
                }
                ctx.document_changed();
                Ok(())
            }
            Entry::Asset {
                forward: ahead,
                inverse,
                planned,
            } => {
                if forward {
                    *inverse = Some(ctx.run_operation(ahead, planned.take().as_deref())?);
                } else {
                    let back = inverse.as_ref().context("the step was never done")?;
                    ctx.run_operation(back, None)?;
                }
                Ok(())
            }
            Entry::Files {
                writes,
                folders,
                edit,
                ..
            } => {
                ctx.put_files(writes, folders, forward)?;
                let document_edited = edit.is_some();
                if let (Some(edit), Some(doc)) = (edit, ctx.document()) {
                    edit.run(doc, forward);
                }
                ctx.files_written(writes, document_edited);
                Ok(())
            }
            Entry::Group { entries, .. } => {
                let order: Vec<usize> = if forward {
                    (0..entries.len()).collect()
                } else {
                    (0..entries.len()).rev().collect()
                };
                for (done, &k) in order.iter().enumerate() {
                    if let Err(e) = entries[k].run(ctx, forward) {
                        for &back in order[..done].iter().rev() {
                            if let Err(again) = entries[back].run(ctx, !forward) {
                                ctx.warn(format!(
                                    "taking back {} failed too: {again:#}",
                                    entries[back].describe()
                                ));
                            }
                        }
                        return Err(e);
                    }
                }
                Ok(())
            }
        }
    }

    /// The entities (and prefab parts) the step's document edit touched.
    pub fn touched(&self) -> Vec<String> {
        match self {
            Entry::Doc(edit)
            | Entry::Files {
                edit: Some(edit), ..
            } => edit.touched(),
            Entry::Asset { .. } | Entry::Files { edit: None, .. } => Vec::new(),
            Entry::Group { entries, .. } => entries.iter().flat_map(Entry::touched).collect(),
        }
    }

    /// Whether the step changes the open level's document (so that it makes the
    /// level differ from its file, and goes when another level is opened).
    fn edits_document(&self) -> bool {
        match self {
            Entry::Doc(_) | Entry::Files { edit: Some(_), .. } => true,
            Entry::Asset { .. } | Entry::Files { edit: None, .. } => false,
            Entry::Group { entries, .. } => entries.iter().any(Entry::edits_document),
        }
    }
}

/// Where the document was when it was last saved (or opened), relative to the
/// history: how Kiln knows that undoing back to the saved state makes the level clean
/// again, which a count of edits cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SavedAt {
    /// Before every step still held (the bottom of the history).
    Base,
    /// Just after the step with this id.
    After(u64),
    /// Not reachable by undo or redo any more (the steps leading to it were dropped).
    Unreachable,
}

/// One entry with the id the saved marker refers to.
#[derive(Debug, Clone)]
struct Step {
    id: u64,
    entry: Entry,
}

/// The undo and redo stacks: one history for level edits and for changes of project
/// files (asset moves, reference fixes). It is the only way the document and the
/// project's files change, so it also knows whether the level differs from its file.
#[derive(Debug, Clone)]
pub struct History {
    done: Vec<Step>,
    undone: Vec<Step>,
    /// While set, a continuing edit merges into the last one (a drag).
    merging: bool,
    next_id: u64,
    saved: SavedAt,
    capacity: usize,
}

impl Default for History {
    fn default() -> Self {
        History {
            done: Vec::new(),
            undone: Vec::new(),
            merging: false,
            next_id: 0,
            saved: SavedAt::Base,
            capacity: Self::DEFAULT_CAPACITY,
        }
    }
}

impl History {
    /// How many steps are kept unless the settings say otherwise.
    pub const DEFAULT_CAPACITY: usize = 1000;

    /// At most this many whole-document snapshots stay in the history (each reload
    /// from disk adds one); older steps are dropped from the bottom of the history so
    /// that a long session of reloads does not grow memory without bound.
    pub const MAX_SNAPSHOTS: usize = 4;

    /// Keeps at most `capacity` undo steps (at least one), dropping the oldest.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
        self.trim();
    }

    fn step(&mut self, entry: Entry) -> Step {
        self.next_id += 1;
        Step {
            id: self.next_id,
            entry,
        }
    }

    /// A new step makes the redo stack unreachable, and the saved state with it if it
    /// was there.
    fn clear_redo(&mut self) {
        if let SavedAt::After(id) = self.saved
            && self.undone.iter().any(|s| s.id == id)
        {
            self.saved = SavedAt::Unreachable;
        }
        self.undone.clear();
    }

    /// Applies `edit` and records it. With `continuing` (the same drag), it merges
    /// into the previous step instead of adding one.
    pub fn push(&mut self, doc: &mut LevelDocument, mut edit: DocEdit, continuing: bool) {
        edit.apply(doc);
        self.clear_redo();
        if continuing
            && self.merging
            && let Some(last) = self.done.last_mut()
            && let Entry::Doc(previous) = &mut last.entry
            && previous.merge(&edit)
        {
            // The merged step is a different state: a save in the middle of the drag
            // must not count as saving its end.
            self.next_id += 1;
            last.id = self.next_id;
            return;
        }
        let step = self.step(Entry::Doc(edit));
        self.done.push(step);
        self.merging = continuing;
        self.trim();
    }

    /// The id of the last step done (`None`: nothing is done): what a later
    /// [`History::push_into`] names to join that step.
    pub fn last_step(&self) -> Option<u64> {
        self.done.last().map(|s| s.id)
    }

    /// [`History::push`], or, with `amends` naming the last step done, applies
    /// `edit` and folds it into that step, undone with it in reverse order: what
    /// settles an entity just placed onto the surface once its model is loaded, so
    /// that one undo takes the placement back. When another step came in between,
    /// the edit is a step of its own.
    pub fn push_into(
        &mut self,
        doc: &mut LevelDocument,
        mut edit: DocEdit,
        continuing: bool,
        amends: Option<u64>,
    ) {
        let Some(last) = self.done.last_mut().filter(|s| Some(s.id) == amends) else {
            return self.push(doc, edit, continuing);
        };
        let Entry::Doc(previous) = &mut last.entry else {
            return self.push(doc, edit, continuing);
        };
        edit.apply(doc);
        let earlier = std::mem::replace(previous, DocEdit::Group(Vec::new()));
        *previous = DocEdit::Group(vec![earlier, edit]);
        // A different state from the one a save may have marked.
        self.next_id += 1;
        last.id = self.next_id;
        self.merging = false;
        self.undone.clear();
    }

    /// Drops the oldest steps beyond the capacity or the snapshot limit, moving the
    /// saved marker to the bottom if its step went.
    fn trim(&mut self) {
        let is_snapshot = |s: &Step| matches!(s.entry, Entry::Doc(DocEdit::ReplaceAll { .. }));
        let mut drop = self.done.len().saturating_sub(self.capacity);
        let mut snapshots = self.done.iter().filter(|s| is_snapshot(s)).count();
        for (i, s) in self.done.iter().enumerate() {
            if snapshots <= Self::MAX_SNAPSHOTS {
                break;
            }
            if is_snapshot(s) {
                snapshots -= 1;
                drop = drop.max(i + 1);
            }
        }
        for s in self.done.drain(..drop) {
            self.saved = match self.saved {
                SavedAt::After(id) if id == s.id => SavedAt::Base,
                SavedAt::Base => SavedAt::Unreachable,
                other => other,
            };
        }
    }

    /// Does `entry` for the first time through `ctx` and records it, as undo and
    /// redo run it again; with `continuing`, a write of whole files merges into
    /// the step before when that wrote the same files (a drag of an asset's
    /// field). A step that fails is not recorded (a group is taken back whole).
    pub fn run(
        &mut self,
        mut entry: Entry,
        ctx: &mut dyn StepContext,
        continuing: bool,
    ) -> anyhow::Result<()> {
        entry.run(ctx, true)?;
        match entry {
            Entry::Files { .. } => self.push_files(entry, continuing),
            _ => self.push_done(entry),
        }
        Ok(())
    }

    /// Records a step that was already done.
    fn push_done(&mut self, entry: Entry) {
        self.clear_redo();
        self.merging = false;
        let step = self.step(entry);
        self.done.push(step);
        self.trim();
    }

    /// Records a write of whole files that was already done. With `continuing` (a
    /// drag of an asset's field), it merges into the previous step when that wrote
    /// the same files: the first "before" and the last "after" are kept.
    fn push_files(&mut self, entry: Entry, continuing: bool) {
        self.clear_redo();
        self.next_id += 1;
        let id = self.next_id;
        if continuing
            && self.merging
            && let Some(last) = self.done.last_mut()
            && let (
                Entry::Files {
                    writes: previous,
                    edit: None,
                    folders: no_folders,
                    ..
                },
                Entry::Files {
                    writes: next,
                    edit: None,
                    ..
                },
            ) = (&mut last.entry, &entry)
            && no_folders.is_empty()
            && previous.len() == next.len()
            && previous.iter().zip(next).all(|(a, b)| a.file == b.file)
        {
            for (a, b) in previous.iter_mut().zip(next) {
                a.after = b.after.clone();
            }
            last.id = id;
            return;
        }
        self.done.push(Step { id, entry });
        self.trim();
        self.merging = continuing;
    }

    /// Ends a drag: the next edit starts a new step.
    pub fn end_merge(&mut self) {
        self.merging = false;
    }

    /// Undoes the last step through `ctx`. `None` when there is nothing to undo;
    /// otherwise what the step touched, or why it could not be undone (it then
    /// stays done).
    pub fn undo(&mut self, ctx: &mut dyn StepContext) -> Option<anyhow::Result<Vec<String>>> {
        self.merging = false;
        let mut step = self.done.pop()?;
        let result = step.entry.run(ctx, false);
        let touched = step.entry.touched();
        match result {
            Ok(()) => self.undone.push(step),
            Err(_) => self.done.push(step),
        }
        Some(result.map(|()| touched))
    }

    /// Redoes the last undone step through `ctx`; as [`Self::undo`] (a step that
    /// cannot be redone stays undone).
    pub fn redo(&mut self, ctx: &mut dyn StepContext) -> Option<anyhow::Result<Vec<String>>> {
        self.merging = false;
        let mut step = self.undone.pop()?;
        let result = step.entry.run(ctx, true);
        let touched = step.entry.touched();
        match result {
            Ok(()) => self.done.push(step),
            Err(_) => self.undone.push(step),
        }
        Some(result.map(|()| touched))
    }

    /// Records that the document now equals its file (saved, opened or reloaded).
    pub fn mark_saved(&mut self) {
        self.saved = self
            .done
            .last()
            .map_or(SavedAt::Base, |s| SavedAt::After(s.id));
    }

    /// Whether the document differs from its file: a level edit lies between the
    /// saved state and now. Changes of project files patch the file and the document
    /// alike, so they do not count.
    pub fn is_dirty(&self) -> bool {
        let any_edit = |steps: &[Step]| steps.iter().any(|s| s.entry.edits_document());
        match self.saved {
            SavedAt::Unreachable => true,
            SavedAt::Base => any_edit(&self.done),
            SavedAt::After(id) => {
                if let Some(i) = self.done.iter().position(|s| s.id == id) {
                    any_edit(&self.done[i + 1..])
                } else if let Some(j) = self.undone.iter().position(|s| s.id == id) {
                    any_edit(&self.undone[j..])
                } else {
                    true
                }
            }
        }
    }

    /// What undo would undo.
    pub fn undo_label(&self) -> Option<String> {
        self.done.last().map(|s| s.entry.describe())
    }
    /// What redo would redo.
    pub fn redo_label(&self) -> Option<String> {
        self.undone.last().map(|s| s.entry.describe())
    }
    /// Number of steps that can be undone.
    pub fn depth(&self) -> usize {
        self.done.len()
    }
    /// Forgets the level edits (another level was opened) and marks the new document
    /// as saved. Changes of project files that do not touch the document stay
    /// undoable.
    pub fn clear(&mut self) {
        let keep = |s: &Step| !s.entry.edits_document();
        self.done.retain(keep);
        self.undone.retain(keep);
        self.merging = false;
        self.mark_saved();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dependency_checker::ops::MoveRequest;

    fn doc() -> LevelDocument {
        LevelDocument::parse(
            r#"{"entities": [
                {"id": "a", "name": "A", "components": {"transform": {"position": [0, 0, 0]}}},
                {"id": "b", "parent": "a", "name": "B"},
                {"id": "c", "name": "C"}
            ]}"#,
            "t.level",
        )
        .unwrap()
    }

    #[test]
    fn a_drag_is_one_step_and_undo_restores_the_value() {
        let mut d = doc();
        let mut u = History::default();
        for x in 1..=5 {
            let set = DocEdit::SetField {
                entity: "a".into(),
                component: "transform".into(),
                instance: None,
                field: "position".into(),
                old: Some(serde_json::json!([0, 0, 0])),
                new: Some(serde_json::json!([x, 0, 0])),
            };
            u.push(&mut d, set, true);
        }
        u.end_merge();
        assert_eq!(u.depth(), 1);
        assert_eq!(
            d.entity("a").unwrap().components["transform"]["position"],
            serde_json::json!([5, 0, 0])
        );
        assert!(matches!(u.undo(&mut d), Some(Ok(_))));
        assert_eq!(
            d.entity("a").unwrap().components["transform"]["position"],
            serde_json::json!([0, 0, 0])
        );
        assert!(matches!(u.redo(&mut d), Some(Ok(_))));
        assert_eq!(
            d.entity("a").unwrap().components["transform"]["position"],
            serde_json::json!([5, 0, 0])
        );
    }

    #[test]
    fn removing_then_undoing_restores_the_same_entities_in_place() {
        let mut d = doc();
        let before = d.clone();
        let mut u = History::default();
        let removed = vec![(0, d.entities[0].clone()), (1, d.entities[1].clone())];
        u.push(&mut d, DocEdit::Remove { entities: removed }, false);
        assert_eq!(d.entities.len(), 1);
        assert!(matches!(u.undo(&mut d), Some(Ok(_))));
        assert_eq!(d, before);
    }

    #[test]
    fn whole_document_snapshots_are_bounded() {
        let mut d = doc();
        let mut u = History::default();
        for k in 0..10 {
            let mut next = d.clone();
            next.entities[0].name = format!("v{k}");
            u.push(
                &mut d,
                DocEdit::ReplaceAll {
                    other: Box::new(next),
                },
                false,
            );
        }
        assert_eq!(d.entities[0].name, "v9");
        assert_eq!(u.depth(), History::MAX_SNAPSHOTS);
        while let Some(Ok(_)) = u.undo(&mut d) {}
        assert_eq!(
            d.entities[0].name, "v5",
            "the oldest snapshots were dropped, the newest undo in order"
        );
    }

    #[test]
    fn groups_revert_in_reverse_order() {
        let mut d = doc();
        let before = d.clone();
        let mut u = History::default();
        let moved = d.entities[2].clone();
        let group = DocEdit::Group(vec![
            DocEdit::Remove {
                entities: vec![(2, moved.clone())],
            },
            DocEdit::Insert {
                entities: vec![(0, moved)],
            },
        ]);
        u.push(&mut d, group, false);
        assert_eq!(d.entities[0].id, "c");
        assert!(matches!(u.undo(&mut d), Some(Ok(_))));
        assert_eq!(d, before);
    }

    fn rename(to: &str) -> DocEdit {
        DocEdit::Rename {
            entity: "a".into(),
            old: "A".into(),
            new: to.into(),
        }
    }

    /// A project as the steps see it: it records what they asked of it, and
    /// refuses the operations and writes named in `refuse`.
    struct Project {
        doc: LevelDocument,
        calls: Vec<String>,
        refuse: Vec<String>,
    }

    impl Project {
        fn new(doc: LevelDocument) -> Self {
            Project {
                doc,
                calls: Vec::new(),
                refuse: Vec::new(),
            }
        }
    }

    impl StepContext for Project {
        fn document(&mut self) -> Option<&mut LevelDocument> {
            Some(&mut self.doc)
        }
        fn document_changed(&mut self) {}
        fn run_operation(
            &mut self,
            operation: &Operation,
            _: Option<&MovePlan>,
        ) -> anyhow::Result<Operation> {
            let call = match operation {
                Operation::Move(request) => (request.pairs.iter())
                    .map(|(old, new)| format!("move {old} -> {new}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                Operation::Patch(_) => "patch".to_owned(),
            };
            if self.refuse.contains(&call) {
                anyhow::bail!("refused: {call}");
            }
            self.calls.push(call);
            Ok(match operation {
                Operation::Move(request) => Operation::Move(MoveRequest {
                    pairs: (request.pairs.iter())
                        .map(|(old, new)| (new.clone(), old.clone()))
                        .collect(),
                    undoes: None,
                }),
                patch => patch.clone(),
            })
        }
        fn put_files(
            &mut self,
            writes: &[FileWrite],
            _: &[FolderWrite],
            forward: bool,
        ) -> anyhow::Result<()> {
            for w in writes {
                let call = format!("{} {}", if forward { "write" } else { "restore" }, w.file);
                if self.refuse.contains(&call) {
                    anyhow::bail!("refused: {call}");
                }
                self.calls.push(call);
            }
            Ok(())
        }
        fn files_written(&mut self, _: &[FileWrite], _: bool) {}
        fn warn(&mut self, message: String) {
            self.calls.push(format!("warned: {message}"));
        }
    }

    fn a_write(file: &str, edit: Option<DocEdit>) -> Entry {
        Entry::Files {
            writes: vec![FileWrite {
                file: file.into(),
                before: None,
                after: Some(b"{}".to_vec()),
            }],
            folders: Vec::new(),
            edit,
            label: format!("write {file}"),
        }
    }

    /// The history runs its own steps: a group of a file write (with its edit of
    /// the document) and a move is undone move first, then the write and its edit;
    /// redone in the order it was done.
    #[test]
    fn the_history_runs_a_group_through_its_context_in_reverse_order() {
        let mut h = History::default();
        h.push_done(Entry::Group {
            entries: vec![a_write("units/a.unit", Some(rename("B"))), a_move()],
            label: "make and move".into(),
        });
        let mut project = Project::new(doc());
        project.doc.entities[0].name = "B".into();
        let touched = h.undo(&mut project).map(|r| r.unwrap());
        assert_eq!(touched, Some(vec!["a".to_owned()]));
        assert_eq!(
            project.calls,
            ["move y.png -> x.png", "restore units/a.unit"]
        );
        assert_eq!(
            project.doc,
            doc(),
            "the write's edit of the document went back too"
        );
        project.calls.clear();
        assert!(matches!(h.redo(&mut project), Some(Ok(_))));
        assert_eq!(project.calls, ["write units/a.unit", "move x.png -> y.png"]);
        assert_eq!(project.doc.entities[0].name, "B");
    }

    /// A group whose second step fails is taken back whole, and stays where it was
    /// in the history: undo it again once the cause is gone.
    #[test]
    fn a_group_that_fails_halfway_is_taken_back_and_stays_done() {
        let mut h = History::default();
        h.push_done(Entry::Group {
            entries: vec![a_write("units/a.unit", None), a_move()],
            label: "make and move".into(),
        });
        let mut project = Project::new(doc());
        project.refuse.push("restore units/a.unit".into());
        let failed = h.undo(&mut project);
        assert!(matches!(failed, Some(Err(_))), "{failed:?}");
        // Undone first, the move was run forward again when the write refused.
        assert_eq!(
            project.calls,
            ["move y.png -> x.png", "move x.png -> y.png"]
        );
        assert_eq!(h.depth(), 1, "still done");
        project.refuse.clear();
        project.calls.clear();
        assert!(matches!(h.undo(&mut project), Some(Ok(_))));
        assert_eq!(
            project.calls,
            ["move y.png -> x.png", "restore units/a.unit"]
        );
        assert!(h.redo(&mut project).is_some());
        assert!(h.undo(&mut project).is_some());
        assert!(h.undo(&mut project).is_none(), "nothing left to undo");
    }

    /// The first run of a step goes through the history as undo and redo do: a
    /// step that fails is not recorded, and a group's done part is taken back.
    #[test]
    fn a_first_run_is_recorded_only_when_it_is_done_whole() {
        let mut h = History::default();
        let mut project = Project::new(doc());
        project.refuse.push("write units/b.unit".into());
        let group = Entry::Group {
            entries: vec![a_move(), a_write("units/b.unit", None)],
            label: "move and write".into(),
        };
        assert!(h.run(group, &mut project, false).is_err());
        assert_eq!(
            project.calls,
            ["move x.png -> y.png", "move y.png -> x.png"],
            "the move done first was taken back"
        );
        assert_eq!(h.depth(), 0, "nothing recorded");

        project.refuse.clear();
        project.calls.clear();
        let mut fresh = a_move();
        if let Entry::Asset { inverse, .. } = &mut fresh {
            *inverse = None;
        }
        h.run(fresh, &mut project, false).unwrap();
        assert_eq!(h.depth(), 1);
        // Undone with the inverse its first run made.
        assert!(matches!(h.undo(&mut project), Some(Ok(_))));
        assert_eq!(
            project.calls,
            ["move x.png -> y.png", "move y.png -> x.png"]
        );
    }

    fn a_move() -> Entry {
        use dependency_checker::ops::{MoveRequest, Operation};
        Entry::Asset {
            forward: Operation::Move(MoveRequest::new("x.png", "y.png")),
            inverse: Some(Operation::Move(MoveRequest::new("y.png", "x.png"))),
            planned: None,
        }
    }

    #[test]
    fn undoing_back_to_the_saved_state_is_clean_and_past_it_is_dirty() {
        let mut d = doc();
        let mut h = History::default();
        assert!(!h.is_dirty());
        h.push(&mut d, rename("B"), false);
        assert!(h.is_dirty());
        h.mark_saved();
        assert!(!h.is_dirty());
        h.push(&mut d, rename("C"), false);
        assert!(h.is_dirty());
        assert!(matches!(h.undo(&mut d), Some(Ok(_))));
        assert!(!h.is_dirty(), "back at the saved state");
        assert!(matches!(h.undo(&mut d), Some(Ok(_))));
        assert!(h.is_dirty(), "before the saved state");
        assert!(matches!(h.redo(&mut d), Some(Ok(_))));
        assert!(!h.is_dirty());
        // A new edit after undoing past the save makes the saved state unreachable.
        assert!(matches!(h.undo(&mut d), Some(Ok(_))));
        h.push(&mut d, rename("D"), false);
        assert!(h.is_dirty());
        assert!(matches!(h.undo(&mut d), Some(Ok(_))));
        assert!(h.is_dirty(), "the saved state is gone with the redo stack");
    }

    #[test]
    fn changes_of_files_do_not_make_the_level_dirty() {
        let mut d = doc();
        let mut h = History::default();
        h.push_done(a_move());
        assert!(!h.is_dirty());
        h.push(&mut d, rename("B"), false);
        h.mark_saved();
        h.push_done(a_move());
        assert!(!h.is_dirty());
        let mut project = Project::new(d);
        assert!(matches!(h.undo(&mut project), Some(Ok(_))));
        assert_eq!(project.calls, ["move y.png -> x.png"]);
        assert!(!h.is_dirty(), "undoing a move does not touch the document");
    }

    #[test]
    fn a_drag_continued_after_saving_is_dirty() {
        let mut d = doc();
        let mut h = History::default();
        let set = |x: i32| DocEdit::SetField {
            entity: "a".into(),
            component: "transform".into(),
            instance: None,
            field: "position".into(),
            old: Some(serde_json::json!([0, 0, 0])),
            new: Some(serde_json::json!([x, 0, 0])),
        };
        h.push(&mut d, set(1), true);
        h.mark_saved();
        h.push(&mut d, set(2), true);
        assert_eq!(h.depth(), 1, "still one step");
        assert!(h.is_dirty());
    }

    #[test]
    fn the_capacity_drops_the_oldest_steps_and_keeps_the_saved_marker_right() {
        let mut d = doc();
        let mut h = History::default();
        h.set_capacity(3);
        h.push(&mut d, rename("B"), false);
        h.mark_saved();
        for k in 0..5 {
            let edit = DocEdit::Rename {
                entity: "a".into(),
                old: d.entities[0].name.clone(),
                new: format!("n{k}"),
            };
            h.push(&mut d, edit, false);
        }
        assert_eq!(h.depth(), 3);
        while let Some(Ok(_)) = h.undo(&mut d) {}
        assert_eq!(d.entities[0].name, "n1", "the three newest steps undo");
        assert!(h.is_dirty(), "the saved state was dropped with its steps");
    }
}
