//! Edits to the open level as commands with `apply` and `revert`, kept on one undo
//! stack (the Fyrox pattern). Each command stores everything needed to undo it, so
//! deleting an entity and undoing brings back the same authoring id, subtree, place in
//! the list and components.

use kiln_core::{EntityDocument, LevelDocument};
use serde_json::{Map, Value};

/// One reversible edit of a level document.
#[derive(Debug, Clone, PartialEq)]
pub enum DocEdit {
    /// Sets (or, with `None`, removes) one field of one component instance.
    SetField {
        /// Authoring id.
        entity: String,
        /// Component type.
        component: String,
        /// Instance index for components written as an array.
        instance: Option<usize>,
        /// Field name.
        field: String,
        /// Value before.
        old: Option<Value>,
        /// Value after.
        new: Option<Value>,
    },
    /// Changes an entity's display name.
    Rename {
        /// Authoring id.
        entity: String,
        /// Name before.
        old: String,
        /// Name after.
        new: String,
    },
    /// Inserts entities at positions in the list (ascending).
    Insert {
        /// (position, entity) pairs.
        entities: Vec<(usize, EntityDocument)>,
    },
    /// Removes entities (ascending positions); reverting puts them back as they were.
    Remove {
        /// (position, entity) pairs, as they were before removal.
        entities: Vec<(usize, EntityDocument)>,
    },
    /// Replaces whole entities (reparenting changes parent and transform together).
    Replace {
        /// (old, new) versions; matched by authoring id.
        entities: Vec<(EntityDocument, EntityDocument)>,
    },
    /// Adds or removes a whole component (`None` = absent).
    SetComponent {
        /// Authoring id.
        entity: String,
        /// Component type.
        component: String,
        /// Before.
        old: Option<Value>,
        /// After.
        new: Option<Value>,
    },
    /// Replaces the whole document (a reload from disk, restored recovered edits). It
    /// holds the other version and swaps it with the document both ways, so that a
    /// reload of a hundred-thousand-entity level copies nothing.
    ReplaceAll {
        /// The version not currently in the document.
        other: Box<LevelDocument>,
    },
    /// Several commands as one undo step; reverted in reverse order.
    Group(Vec<DocEdit>),
}

fn component_fields<'a>(
    doc: &'a mut LevelDocument,
    entity: &str,
    component: &str,
    instance: Option<usize>,
) -> Option<&'a mut Map<String, Value>> {
    let e = doc.entity_mut(entity)?;
    let value = e
        .components
        .entry(component.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    match (value, instance) {
        (Value::Object(m), None) => Some(m),
        (Value::Array(items), Some(i)) => items.get_mut(i)?.as_object_mut(),
        _ => None,
    }
}

fn set_field(
    doc: &mut LevelDocument,
    entity: &str,
    component: &str,
    instance: Option<usize>,
    field: &str,
    value: &Option<Value>,
) {
    if let Some(fields) = component_fields(doc, entity, component, instance) {
        match value {
            Some(v) => {
                fields.insert(field.to_owned(), v.clone());
            }
            None => {
                fields.shift_remove(field);
            }
        }
    }
}

fn set_component(doc: &mut LevelDocument, entity: &str, component: &str, value: &Option<Value>) {
    if let Some(e) = doc.entity_mut(entity) {
        match value {
            Some(v) => {
                e.components.insert(component.to_owned(), v.clone());
                e.components.sort_keys();
            }
            None => {
                e.components.shift_remove(component);
            }
        }
    }
}

fn replace(doc: &mut LevelDocument, with: &EntityDocument) {
    if let Some(e) = doc.entity_mut(&with.id) {
        *e = with.clone();
    }
}

impl DocEdit {
    /// Performs the edit.
    pub fn apply(&mut self, doc: &mut LevelDocument) {
        match self {
            DocEdit::SetField {
                entity,
                component,
                instance,
                field,
                new,
                ..
            } => set_field(doc, entity, component, *instance, field, new),
            DocEdit::Rename { entity, new, .. } => {
                if let Some(e) = doc.entity_mut(entity) {
                    e.name = new.clone();
                }
            }
            DocEdit::Insert { entities } => insert(doc, entities),
            DocEdit::Remove { entities } => remove(doc, entities),
            DocEdit::Replace { entities } => {
                for (_, new) in entities {
                    replace(doc, new);
                }
            }
            DocEdit::SetComponent {
                entity,
                component,
                new,
                ..
            } => set_component(doc, entity, component, new),
            DocEdit::ReplaceAll { other } => std::mem::swap(doc, &mut **other),
            DocEdit::Group(commands) => {
                for c in commands.iter_mut() {
                    c.apply(doc);
                }
            }
        }
    }

    /// Undoes the edit.
    pub fn revert(&mut self, doc: &mut LevelDocument) {
        match self {
            DocEdit::SetField {
                entity,
                component,
                instance,
                field,
                old,
                ..
            } => set_field(doc, entity, component, *instance, field, old),
            DocEdit::Rename { entity, old, .. } => {
                if let Some(e) = doc.entity_mut(entity) {
                    e.name = old.clone();
                }
            }
            DocEdit::Insert { entities } => remove(doc, entities),
            DocEdit::Remove { entities } => insert(doc, entities),
            DocEdit::Replace { entities } => {
                for (old, _) in entities {
                    replace(doc, old);
                }
            }
            DocEdit::SetComponent {
                entity,
                component,
                old,
                ..
            } => set_component(doc, entity, component, old),
            DocEdit::ReplaceAll { other } => std::mem::swap(doc, &mut **other),
            DocEdit::Group(commands) => {
                for c in commands.iter_mut().rev() {
                    c.revert(doc);
                }
            }
        }
    }

    /// Whether `next` continues this edit (the same field dragged further), so that
    /// a whole drag is one undo step.
    pub fn merge(&mut self, next: &DocEdit) -> bool {
        match (self, next) {
            (
                DocEdit::SetField {
                    entity,
                    component,
                    instance,
                    field,
                    new,
                    ..
                },
                DocEdit::SetField {
                    entity: e2,
                    component: c2,
                    instance: i2,
                    field: f2,
                    new: n2,
                    ..
                },
            ) if entity == e2 && component == c2 && instance == i2 && field == f2 => {
                *new = n2.clone();
                true
            }
            _ => false,
        }
    }

    /// A short description for the Edit menu ("Undo set transform.position").
    pub fn describe(&self) -> String {
        match self {
            DocEdit::SetField {
                component, field, ..
            } => format!("set {component}.{field}"),
            DocEdit::Rename { new, .. } => format!("rename to \"{new}\""),
            DocEdit::Insert { entities } => format!("create {} entities", entities.len()),
            DocEdit::Remove { entities } => format!("delete {} entities", entities.len()),
            DocEdit::Replace { .. } => "reparent".into(),
            DocEdit::SetComponent {
                component,
                new: Some(_),
                ..
            } => format!("add {component}"),
            DocEdit::SetComponent { component, .. } => format!("remove {component}"),
            DocEdit::ReplaceAll { .. } => "reload".into(),
            DocEdit::Group(c) => c.first().map_or_else(|| "edit".into(), DocEdit::describe),
        }
    }
}

/// Inserts entities at their (ascending) final positions in one pass over the list.
fn insert(doc: &mut LevelDocument, entities: &[(usize, EntityDocument)]) {
    let old = std::mem::take(&mut doc.entities);
    let mut rest = old.into_iter();
    let mut out = Vec::with_capacity(rest.len() + entities.len());
    for (pos, e) in entities {
        while out.len() < *pos {
            match rest.next() {
                Some(x) => out.push(x),
                None => break,
            }
        }
        out.push(e.clone());
    }
    out.extend(rest);
    doc.entities = out;
}

/// Removes entities by id in one pass over the list.
fn remove(doc: &mut LevelDocument, entities: &[(usize, EntityDocument)]) {
    let doomed: std::collections::HashSet<&str> =
        entities.iter().map(|(_, e)| e.id.as_str()).collect();
    doc.entities.retain(|e| !doomed.contains(e.id.as_str()));
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
        forward: dependency_checker::rename::Operation,
        /// The operation that undoes it.
        inverse: dependency_checker::rename::Operation,
    },
}

impl Entry {
    /// A short description for the Edit menu.
    pub fn describe(&self) -> String {
        match self {
            Entry::Doc(c) => c.describe(),
            Entry::Asset { forward, .. } => match forward {
                dependency_checker::rename::Operation::Move(request) => {
                    match request.pairs.as_slice() {
                        [(old, new)] => format!("move {old} to {new}"),
                        pairs => format!("move {} files", pairs.len()),
                    }
                }
                dependency_checker::rename::Operation::Patch(plan) => {
                    format!("fix {} references", plan.change_count())
                }
            },
        }
    }
}

/// The undo and redo stacks: one history for level edits and asset moves.
#[derive(Debug, Default, Clone)]
pub struct History {
    done: Vec<Entry>,
    undone: Vec<Entry>,
    /// While set, a continuing edit merges into the last one (a drag).
    merging: bool,
}

impl History {
    /// Applies `command` and records it. With `continuing` (the same drag), it merges
    /// into the previous step instead of adding one.
    pub fn push(&mut self, doc: &mut LevelDocument, mut command: DocEdit, continuing: bool) {
        command.apply(doc);
        self.undone.clear();
        if continuing
            && self.merging
            && let Some(Entry::Doc(last)) = self.done.last_mut()
            && last.merge(&command)
        {
            return;
        }
        self.done.push(Entry::Doc(command));
        self.merging = continuing;
        self.trim_snapshots();
    }

    /// At most this many whole-document snapshots stay in the history (each reload
    /// from disk adds one); older steps are dropped from the bottom of the history so
    /// that a long session of reloads does not grow memory without bound.
    pub const MAX_SNAPSHOTS: usize = 4;

    fn trim_snapshots(&mut self) {
        let is_snapshot = |e: &Entry| matches!(e, Entry::Doc(DocEdit::ReplaceAll { .. }));
        while self.done.iter().filter(|e| is_snapshot(e)).count() > Self::MAX_SNAPSHOTS {
            match self.done.iter().position(is_snapshot) {
                Some(oldest) => {
                    self.done.drain(..=oldest);
                }
                None => break,
            }
        }
    }

    /// Records an asset move that was already applied.
    pub fn push_done(&mut self, entry: Entry) {
        self.undone.clear();
        self.merging = false;
        self.done.push(entry);
    }

    /// Ends a drag: the next edit starts a new step.
    pub fn end_merge(&mut self) {
        self.merging = false;
    }

    /// Takes the step to undo; the caller reverts it and hands it to [`Self::undone`].
    pub fn take_undo(&mut self) -> Option<Entry> {
        self.merging = false;
        self.done.pop()
    }

    /// Takes the step to redo; the caller applies it and hands it to [`Self::redone`].
    pub fn take_redo(&mut self) -> Option<Entry> {
        self.merging = false;
        self.undone.pop()
    }

    /// Records that `entry` was undone.
    pub fn undone(&mut self, entry: Entry) {
        self.undone.push(entry);
    }

    /// Records that `entry` was redone (or put back after a failed undo).
    pub fn redone(&mut self, entry: Entry) {
        self.done.push(entry);
    }

    /// Puts back a step whose redo failed.
    pub fn restore_undone(&mut self, entry: Entry) {
        self.undone.push(entry);
    }

    /// Undoes the last step if it is a level edit (tests of commands alone).
    pub fn undo(&mut self, doc: &mut LevelDocument) -> bool {
        match self.take_undo() {
            Some(Entry::Doc(mut c)) => {
                c.revert(doc);
                self.undone(Entry::Doc(c));
                true
            }
            Some(other) => {
                self.redone(other);
                false
            }
            None => false,
        }
    }

    /// Redoes the last undone step if it is a level edit.
    pub fn redo(&mut self, doc: &mut LevelDocument) -> bool {
        match self.take_redo() {
            Some(Entry::Doc(mut c)) => {
                c.apply(doc);
                self.redone(Entry::Doc(c));
                true
            }
            Some(other) => {
                self.restore_undone(other);
                false
            }
            None => false,
        }
    }

    /// What undo would undo.
    pub fn undo_label(&self) -> Option<String> {
        self.done.last().map(Entry::describe)
    }
    /// What redo would redo.
    pub fn redo_label(&self) -> Option<String> {
        self.undone.last().map(Entry::describe)
    }
    /// Number of steps that can be undone.
    pub fn depth(&self) -> usize {
        self.done.len()
    }
    /// Forgets the level edits (another level was opened). Asset moves stay undoable.
    pub fn clear(&mut self) {
        self.done.retain(|e| matches!(e, Entry::Asset { .. }));
        self.undone.retain(|e| matches!(e, Entry::Asset { .. }));
        self.merging = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(u.undo(&mut d));
        assert_eq!(
            d.entity("a").unwrap().components["transform"]["position"],
            serde_json::json!([0, 0, 0])
        );
        assert!(u.redo(&mut d));
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
        assert!(u.undo(&mut d));
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
        while u.undo(&mut d) {}
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
        assert!(u.undo(&mut d));
        assert_eq!(d, before);
    }
}
