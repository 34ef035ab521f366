//! Entity fields in the open document (a door's `switch`: another entity's id),
//! kept naming the right entity through the editor's structural edits: a delete
//! clears what named the deleted entities, a duplicate or paste makes the copies
//! name each other, making a prefab of entities makes what named them name the
//! instance's parts. Each is part of the same undo step as the edit.

use std::collections::{HashMap, HashSet};

use kiln_core::{EntityDocument, FieldKind, LevelDocument, Registry};
use serde_json::Value;

use crate::editor::document::DocEdit;

/// Calls `f` on every entity field value of `e`: those of its own components, and
/// those its overrides give its prefab's parts. Component types the registry does
/// not know are left alone.
pub fn each_entity_field_mut(
    e: &mut EntityDocument,
    registry: &Registry,
    f: &mut dyn FnMut(&mut String),
) {
    let mut in_components = |components: &mut serde_json::Map<String, Value>| {
        for (name, value) in components.iter_mut() {
            let fields = entity_fields(registry, name);
            if fields.is_empty() {
                continue;
            }
            let instances: Vec<&mut Value> = match value {
                Value::Array(items) => items.iter_mut().collect(),
                other => vec![other],
            };
            for instance in instances {
                for field in &fields {
                    if let Some(Value::String(id)) = instance.get_mut(*field) {
                        f(id);
                    }
                }
            }
        }
    };
    in_components(&mut e.components);
    for patch in e.overrides.values_mut() {
        if let Value::Object(components) = patch {
            in_components(components);
        }
    }
}

/// The names of the entity fields of component type `name` (none for a type the
/// registry does not know).
fn entity_fields<'r>(registry: &'r Registry, name: &str) -> Vec<&'r str> {
    registry.component(name).map_or_else(Vec::new, |ty| {
        (ty.fields.iter())
            .filter(|s| s.kind == FieldKind::Entity)
            .map(|s| s.name.as_str())
            .collect()
    })
}

/// Whether an entity field of `e` (its components', its overrides') holds an id
/// `hit` accepts.
fn any_entity_field(e: &EntityDocument, registry: &Registry, hit: &dyn Fn(&str) -> bool) -> bool {
    let in_components = |components: &serde_json::Map<String, Value>| {
        components.iter().any(|(name, value)| {
            let fields = entity_fields(registry, name);
            let instances: Vec<&Value> = match value {
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            };
            !fields.is_empty()
                && instances.iter().any(|instance| {
                    (fields.iter())
                        .any(|f| instance.get(*f).and_then(Value::as_str).is_some_and(hit))
                })
        })
    };
    in_components(&e.components)
        || (e.overrides.values()).any(|patch| patch.as_object().is_some_and(in_components))
}

/// `e` with its entity fields renamed by `rename`, if it changes any.
fn renamed(
    e: &EntityDocument,
    registry: &Registry,
    rename: &dyn Fn(&str) -> Option<String>,
) -> Option<EntityDocument> {
    // Most entities name nothing a rename touches: looked at in place, and copied
    // only when one does (a delete in a level of 100,000 entities copied them all).
    let touched = |id: &str| !id.is_empty() && rename(id).is_some();
    if !any_entity_field(e, registry, &touched) {
        return None;
    }
    let mut copy = e.clone();
    let mut changed = false;
    each_entity_field_mut(&mut copy, registry, &mut |id| {
        if id.is_empty() {
            return;
        }
        if let Some(new) = rename(id) {
            *id = new;
            changed = true;
        }
    });
    changed.then_some(copy)
}

/// The id `id` names, with what is below an entity (`instance/part`) following it.
fn top_of(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

/// The edits that clear the entity fields of the entities left in `doc` that name
/// one of `deleted` (or a part of a deleted prefab instance).
pub fn cleared_after_delete(
    doc: &LevelDocument,
    registry: &Registry,
    deleted: &HashSet<String>,
) -> Vec<DocEdit> {
    let rename = |id: &str| deleted.contains(top_of(id)).then(String::new);
    replacements(doc, registry, &|e| !deleted.contains(&e.id), &rename)
}

/// The edits that make `rename` of the entity fields of the entities of `doc`
/// that `keep` keeps, each entity one edit.
fn replacements(
    doc: &LevelDocument,
    registry: &Registry,
    keep: &dyn Fn(&EntityDocument) -> bool,
    rename: &dyn Fn(&str) -> Option<String>,
) -> Vec<DocEdit> {
    // A project with no entity fields: nothing to look at.
    if !(registry.components().iter()).any(|t| t.refers_to_entities()) {
        return Vec::new();
    }
    (doc.entities.iter())
        .filter(|e| keep(e))
        .filter_map(|e| {
            let new = renamed(e, registry, rename)?;
            Some(DocEdit::ReplaceEntity {
                old: Box::new(e.clone()),
                new: Box::new(new),
            })
        })
        .collect()
}

/// Copies of entities (`renames`: original id -> copy's id) made to name each
/// other: an entity field of a copy naming an entity copied with it names that
/// entity's copy; one naming an entity `doc` does not have (pasted from another
/// level) names none.
pub fn relinked_copies(
    copies: &mut [(usize, EntityDocument)],
    doc: &LevelDocument,
    registry: &Registry,
    renames: &HashMap<String, String>,
) {
    for (_, e) in copies.iter_mut() {
        each_entity_field_mut(e, registry, &mut |id| {
            if id.is_empty() {
                return;
            }
            let (top, below) = id.split_once('/').map_or((&**id, ""), |(t, b)| (t, b));
            *id = match renames.get(top) {
                Some(copy) if below.is_empty() => copy.clone(),
                Some(copy) => format!("{copy}/{below}"),
                None if doc.entity(top).is_some() => return,
                None => String::new(),
            };
        });
    }
}

/// The edits that make the entities left in `doc` that name one of `members`
/// (entities made into the parts of the prefab instance `instance`) name the part.
pub fn into_instance(
    doc: &LevelDocument,
    registry: &Registry,
    members: &HashSet<&str>,
    instance: &str,
) -> Vec<DocEdit> {
    let rename = |id: &str| {
        members
            .contains(top_of(id))
            .then(|| format!("{instance}/{id}"))
    };
    replacements(
        doc,
        registry,
        &|e| !members.contains(e.id.as_str()),
        &rename,
    )
}
