//! One reversible edit of the open level's document ([`DocEdit`]): everything it
//! needs to be done and undone, so that deleting an entity and undoing brings back
//! the same authoring id, subtree, place in the list and components. The history
//! (`history.rs`) keeps them; it does not know what they change.

use kiln_core::{EntityDocument, LevelDocument};
use serde_json::{Map, Value};

use super::overrides::set_override;

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
    /// Sets (or, with `None`, removes) one overridden field of a prefab part, on the
    /// instance entity of the open file.
    SetOverride {
        /// The instance entity.
        instance: String,
        /// The part's path below the instance (the override key).
        key: String,
        /// Component type.
        component: String,
        /// Field name.
        field: String,
        /// Override before (`None`: not overridden).
        old: Option<Value>,
        /// Override after.
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
    /// Replaces one entity (its overrides moved into its prefab).
    ReplaceEntity {
        /// Before.
        old: Box<EntityDocument>,
        /// After.
        new: Box<EntityDocument>,
    },
    /// Several commands as one undo step; reverted in reverse order.
    Group(Vec<DocEdit>),
    /// Resolves a merge conflict of the document: takes it out of the document's
    /// list (at `index`) and makes `change`, the side chosen.
    Resolve {
        /// Where the conflict was in the list.
        index: usize,
        /// The conflict.
        conflict: Box<kiln_core::conflict::Conflict>,
        /// What choosing a side changes in the document.
        change: Box<DocEdit>,
    },
}

impl DocEdit {
    /// The entities the edit is about (for an insert or removal, those at its top),
    /// in order: what undo and redo select, so that the user sees what came back.
    pub fn touched(&self) -> Vec<String> {
        let tops = |entities: &[(usize, EntityDocument)]| -> Vec<String> {
            let ids: std::collections::HashSet<&str> =
                entities.iter().map(|(_, e)| e.id.as_str()).collect();
            entities
                .iter()
                .filter(|(_, e)| e.parent.as_deref().is_none_or(|p| !ids.contains(p)))
                .map(|(_, e)| e.id.clone())
                .collect()
        };
        match self {
            DocEdit::SetField { entity, .. }
            | DocEdit::Rename { entity, .. }
            | DocEdit::SetComponent { entity, .. } => vec![entity.clone()],
            DocEdit::SetOverride { instance, key, .. } => vec![format!("{instance}/{key}")],
            DocEdit::Insert { entities } | DocEdit::Remove { entities } => tops(entities),
            DocEdit::ReplaceEntity { new, .. } => vec![new.id.clone()],
            DocEdit::ReplaceAll { .. } => Vec::new(),
            DocEdit::Resolve {
                conflict, change, ..
            } => {
                let mut ids = change.touched();
                if ids.is_empty()
                    && let Some(e) = &conflict.entity
                {
                    ids.push(e.clone());
                }
                ids
            }
            DocEdit::Group(edits) => {
                let mut out: Vec<String> = Vec::new();
                for id in edits.iter().flat_map(DocEdit::touched) {
                    if !out.contains(&id) {
                        out.push(id);
                    }
                }
                out
            }
        }
    }
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

impl DocEdit {
    /// Performs the edit.
    pub fn apply(&mut self, doc: &mut LevelDocument) {
        self.run(doc, true);
    }

    /// Undoes the edit.
    pub fn revert(&mut self, doc: &mut LevelDocument) {
        self.run(doc, false);
    }

    /// Performs (`forward`) or undoes the edit: one description of each edit, read
    /// in either direction, so that the two cannot drift apart.
    pub fn run(&mut self, doc: &mut LevelDocument, forward: bool) {
        match self {
            DocEdit::SetField {
                entity,
                component,
                instance,
                field,
                old,
                new,
            } => set_field(
                doc,
                entity,
                component,
                *instance,
                field,
                pick(forward, old, new),
            ),
            DocEdit::SetOverride {
                instance,
                key,
                component,
                field,
                old,
                new,
            } => set_override(
                doc,
                instance,
                key,
                component,
                field,
                pick(forward, old, new),
            ),
            DocEdit::Rename { entity, old, new } => {
                if let Some(e) = doc.entity_mut(entity) {
                    e.name = pick(forward, old, new).clone();
                }
            }
            DocEdit::Insert { entities } if forward => insert(doc, entities),
            DocEdit::Insert { entities } => remove(doc, entities),
            DocEdit::Remove { entities } if forward => remove(doc, entities),
            DocEdit::Remove { entities } => insert(doc, entities),
            DocEdit::SetComponent {
                entity,
                component,
                old,
                new,
            } => set_component(doc, entity, component, pick(forward, old, new)),
            DocEdit::ReplaceAll { other } => std::mem::swap(doc, &mut **other),
            DocEdit::ReplaceEntity { old, new } => replace_entity(doc, pick(forward, old, new)),
            DocEdit::Resolve {
                index,
                conflict,
                change,
            } => {
                if forward {
                    if doc.conflicts.get(*index) == Some(&**conflict) {
                        doc.conflicts.remove(*index);
                    }
                    change.run(doc, true);
                } else {
                    change.run(doc, false);
                    let at = (*index).min(doc.conflicts.len());
                    doc.conflicts.insert(at, (**conflict).clone());
                }
            }
            // Groups revert in reverse order.
            DocEdit::Group(edits) if forward => {
                for e in edits.iter_mut() {
                    e.run(doc, true);
                }
            }
            DocEdit::Group(edits) => {
                for e in edits.iter_mut().rev() {
                    e.run(doc, false);
                }
            }
        }
    }

    /// Whether the edit changes anything (setting a field to the value it has does
    /// not).
    pub fn changes(&self) -> bool {
        match self {
            DocEdit::SetField { old, new, .. } | DocEdit::SetOverride { old, new, .. } => {
                old != new
            }
            _ => true,
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
            (
                DocEdit::SetOverride {
                    instance,
                    key,
                    component,
                    field,
                    new,
                    ..
                },
                DocEdit::SetOverride {
                    instance: i2,
                    key: k2,
                    component: c2,
                    field: f2,
                    new: n2,
                    ..
                },
            ) if instance == i2 && key == k2 && component == c2 && field == f2 => {
                *new = n2.clone();
                true
            }
            // The same field of several entities dragged together.
            (DocEdit::Group(mine), DocEdit::Group(next)) if mine.len() == next.len() => {
                let mut trial = mine.clone();
                if trial.iter_mut().zip(next).all(|(a, b)| a.merge(b)) {
                    *mine = trial;
                    true
                } else {
                    false
                }
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
            DocEdit::SetOverride {
                component,
                field,
                new: Some(_),
                ..
            } => format!("override {component}.{field}"),
            DocEdit::SetOverride {
                component, field, ..
            } => format!("revert {component}.{field} to the prefab"),
            DocEdit::Rename { new, .. } => format!("rename to \"{new}\""),
            DocEdit::Insert { entities } => format!("create {} entities", entities.len()),
            DocEdit::Remove { entities } => format!("delete {} entities", entities.len()),
            DocEdit::SetComponent {
                component,
                new: Some(_),
                ..
            } => format!("add {component}"),
            DocEdit::SetComponent { component, .. } => format!("remove {component}"),
            DocEdit::ReplaceAll { .. } => "reload".into(),
            DocEdit::ReplaceEntity { new, .. } => format!("change {}", new.id),
            DocEdit::Group(c) => c.first().map_or_else(|| "edit".into(), DocEdit::describe),
            DocEdit::Resolve { conflict, .. } => match &conflict.entity {
                Some(e) => format!("resolve the conflict in {e}"),
                None => "resolve a conflict".into(),
            },
        }
    }
}

/// The value an edit sets going `forward` (its new one) or back (its old one).
fn pick<T>(forward: bool, old: T, new: T) -> T {
    if forward { new } else { old }
}

fn replace_entity(doc: &mut LevelDocument, with: &EntityDocument) {
    if let Some(e) = doc.entity_mut(&with.id) {
        *e = with.clone();
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
