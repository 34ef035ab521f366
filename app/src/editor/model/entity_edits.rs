//! Entity edits as pure functions: the document, tree and selection as they are ->
//! the history entry that makes the change and the selection after it. Nothing here
//! touches the editor, so each can be tested on a document alone.

use std::collections::{HashMap, HashSet};

use glam::{Affine3A, EulerRot, Vec3};
use kiln_core::schema::json_f32s;
use kiln_core::{EntityDocument, LevelDocument};
use serde_json::{Map, Value};

use crate::editor::document::DocEdit;
use crate::editor::document::{override_of, split_part, unique_id};
use crate::editor::tree::SceneTree;

/// An edit and the selection once it is done.
pub type EditAndSelection = (DocEdit, Vec<String>);

fn ids(doc: &LevelDocument) -> HashSet<String> {
    doc.entities.iter().map(|e| e.id.clone()).collect()
}

/// Rounds away float noise (0.30000001) so that saved files stay readable.
fn round(v: Vec3) -> Vec3 {
    (v * 10_000.0).round() / 10_000.0
}

/// A new entity with a transform, under `parent`, at `local_position` in the
/// parent's space.
pub fn new_entity(
    doc: &LevelDocument,
    parent: Option<String>,
    local_position: Vec3,
) -> EditAndSelection {
    let id = unique_id("entity", &ids(doc));
    let names: HashSet<String> = doc.entities.iter().map(|e| e.name.clone()).collect();
    let mut transform = Map::new();
    if local_position != Vec3::ZERO {
        transform.insert(
            "position".into(),
            json_f32s(&round(local_position).to_array()),
        );
    }
    let mut components = Map::new();
    components.insert("transform".into(), Value::Object(transform));
    let entity = EntityDocument {
        id: id.clone(),
        name: unique_name("Entity", &names),
        parent,
        components,
        ..Default::default()
    };
    let edit = DocEdit::Insert {
        entities: vec![(doc.entities.len(), entity)],
    };
    (edit, vec![id])
}

/// A new root entity at `position` drawing the mesh `file` (`meshes/rock.mesh`), or
/// an instance of the prefab `file` (`units/lamp.unit`), named after the file and
/// selected. `None` for other files.
pub fn place_asset(doc: &LevelDocument, file: &str, position: Vec3) -> Option<EditAndSelection> {
    let (path, ext) = file.rsplit_once('.')?;
    let stem = path.rsplit('/').next().unwrap_or(path);
    let id = unique_id(stem, &ids(doc));
    let mut transform = Map::new();
    if position != Vec3::ZERO {
        transform.insert("position".into(), json_f32s(&round(position).to_array()));
    }
    let mut components = Map::new();
    components.insert("transform".into(), Value::Object(transform));
    let mut prefab = None;
    match ext {
        "mesh" => {
            let mut mesh = Map::new();
            mesh.insert("mesh".into(), Value::String(path.to_owned()));
            components.insert("mesh".into(), Value::Object(mesh));
        }
        "unit" => prefab = Some(path.to_owned()),
        _ => return None,
    }
    let mut name: String = stem.replace(['_', '-'], " ");
    if let Some(first) = name.get(..1) {
        name = first.to_uppercase() + &name[1..];
    }
    let entity = EntityDocument {
        id: id.clone(),
        name,
        prefab,
        components,
        ..Default::default()
    };
    let edit = DocEdit::Insert {
        entities: vec![(doc.entities.len(), entity)],
    };
    Some((edit, vec![id]))
}

/// The selected entities with all their descendants, in file order, without
/// repeating an entity whose ancestor is also selected.
pub fn selected_subtrees(
    doc: &LevelDocument,
    tree: &SceneTree,
    selection: &[String],
) -> Vec<EntityDocument> {
    let mut picked = HashSet::new();
    for id in selection {
        if let Some(i) = doc.entities.iter().position(|e| &e.id == id) {
            picked.extend(tree.subtree(i));
        }
    }
    doc.entities
        .iter()
        .enumerate()
        .filter(|(i, _)| picked.contains(i))
        .map(|(_, e)| e.clone())
        .collect()
}

/// Deletes the selected entities and everything below them; the entity fields of
/// the others that named them name none (in the same step).
pub fn delete(
    doc: &LevelDocument,
    tree: &SceneTree,
    selection: &[String],
    registry: &kiln_core::Registry,
) -> Option<EditAndSelection> {
    let doomed: HashSet<String> = selected_subtrees(doc, tree, selection)
        .into_iter()
        .map(|e| e.id)
        .collect();
    if doomed.is_empty() {
        return None;
    }
    let entities: Vec<(usize, EntityDocument)> = doc
        .entities
        .iter()
        .enumerate()
        .filter(|(_, e)| doomed.contains(&e.id))
        .map(|(i, e)| (i, e.clone()))
        .collect();
    let mut edits = super::entity_links::cleared_after_delete(doc, registry, &doomed);
    if edits.is_empty() {
        return Some((DocEdit::Remove { entities }, Vec::new()));
    }
    edits.push(DocEdit::Remove { entities });
    Some((DocEdit::Group(edits), Vec::new()))
}

/// Inserts copies of `entities` (subtrees) with fresh ids; roots of the copy go under
/// the parent the originals had (if it still exists). The copies' roots are selected.
/// The copies' entity fields name each other where the originals did.
pub fn paste(
    doc: &LevelDocument,
    entities: &[EntityDocument],
    registry: &kiln_core::Registry,
) -> Option<EditAndSelection> {
    if entities.is_empty() {
        return None;
    }
    let mut taken = ids(doc);
    let mut renamed = HashMap::new();
    for e in entities {
        let id = unique_id(&e.id, &taken);
        taken.insert(id.clone());
        renamed.insert(e.id.clone(), id);
    }
    let mut inserts = Vec::new();
    for (position, e) in (doc.entities.len()..).zip(entities) {
        let mut copy = e.clone();
        copy.id = renamed[&e.id].clone();
        copy.parent = match &e.parent {
            Some(p) if renamed.contains_key(p) => Some(renamed[p].clone()),
            other => other.clone().filter(|p| doc.entity(p).is_some()),
        };
        inserts.push((position, copy));
    }
    super::entity_links::relinked_copies(&mut inserts, doc, registry, &renamed);
    let copied: HashSet<&String> = renamed.values().collect();
    let roots: Vec<String> = inserts
        .iter()
        .filter(|(_, e)| e.parent.as_ref().is_none_or(|p| !copied.contains(p)))
        .map(|(_, e)| e.id.clone())
        .collect();
    // Each copy at the top gets a name of its own ("Lamp" -> "Lamp 2"), as Godot
    // and Unity name duplicates; what is below it keeps its names.
    let mut names: HashSet<String> = doc.entities.iter().map(|e| e.name.clone()).collect();
    for (_, e) in &mut inserts {
        if roots.contains(&e.id) && !e.name.is_empty() {
            e.name = unique_name(&e.name, &names);
            names.insert(e.name.clone());
        }
    }
    Some((DocEdit::Insert { entities: inserts }, roots))
}

/// `name`, or the first free name after it: a number at its end counts up
/// ("Tree 1" -> "Tree 2"), and one is added where there is none ("Lamp" ->
/// "Lamp 2").
pub fn unique_name(name: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(name) {
        return name.to_owned();
    }
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let (base, first) = match name[base.len()..].parse::<u64>() {
        Ok(n) if base.len() < name.len() && n < u64::MAX => (base.to_owned(), n + 1),
        _ => (format!("{name} "), 2),
    };
    (first..=u64::MAX)
        .map(|n| format!("{base}{n}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| name.to_owned())
}

/// Which way the keyboard moves the selection in the hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nudge {
    /// Before the sibling above.
    Up,
    /// After the sibling below.
    Down,
    /// Into the sibling above, as its last child.
    Indent,
    /// Out of its parent, just after it.
    Outdent,
}

/// The reparent (entities, new parent, before) that moves the selected siblings one
/// step `nudge`, or `None` where they cannot go (the first, the last, a root
/// outdented, or a selection under several parents).
pub fn nudge(
    doc: &LevelDocument,
    tree: &SceneTree,
    selection: &[String],
    nudge: Nudge,
) -> Option<(Vec<String>, Option<String>, Option<String>)> {
    let index = |id: &str| doc.entities.iter().position(|e| e.id == id);
    let picked: Vec<usize> = selection.iter().filter_map(|id| index(id)).collect();
    let first = *picked.first()?;
    let parent = tree.parent[first];
    if picked.iter().any(|&k| tree.parent[k] != parent) {
        return None;
    }
    let siblings = match parent {
        Some(p) => &tree.children[p],
        None => &tree.roots,
    };
    let moving: Vec<usize> = siblings
        .iter()
        .copied()
        .filter(|k| picked.contains(k))
        .collect();
    let id = |k: usize| doc.entities[k].id.clone();
    let ids: Vec<String> = moving.iter().map(|&k| id(k)).collect();
    let at = |k: usize| siblings.iter().position(|&s| s == k);
    let first_at = at(*moving.first()?)?;
    let last_at = at(*moving.last()?)?;
    let before_first = siblings[..first_at]
        .iter()
        .rev()
        .find(|k| !moving.contains(k))
        .copied();
    match nudge {
        Nudge::Up => {
            let above = before_first?;
            Some((ids, parent.map(id), Some(id(above))))
        }
        Nudge::Down => {
            let below = siblings[last_at + 1..]
                .iter()
                .position(|k| !moving.contains(k))?;
            let below = last_at + 1 + below;
            let after = siblings.get(below + 1).map(|&k| id(k));
            Some((ids, parent.map(id), after))
        }
        Nudge::Indent => {
            let into = before_first?;
            // A prefab instance's children come from its unit: not into one.
            if doc.entities[into].prefab.is_some() {
                return None;
            }
            Some((ids, Some(id(into)), None))
        }
        Nudge::Outdent => {
            let p = parent?;
            let grand = tree.parent[p];
            let around = match grand {
                Some(g) => &tree.children[g],
                None => &tree.roots,
            };
            let after = around
                .iter()
                .position(|&s| s == p)
                .and_then(|k| around.get(k + 1))
                .map(|&k| id(k));
            Some((ids, grand.map(id), after))
        }
    }
}

/// Why a reparent was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle;

/// Moves `entities` under `parent` (or to the root) before the sibling `before` (or
/// last), keeping each one's world pose (`world_pose` from the preview world).
pub fn reparent(
    doc: &LevelDocument,
    tree: &SceneTree,
    world_pose: &dyn Fn(&str) -> Option<Affine3A>,
    entities: &[String],
    parent: Option<String>,
    before: Option<String>,
) -> Result<DocEdit, Cycle> {
    let index = |id: &str| doc.entities.iter().position(|e| e.id == id);
    // The new parent must not be one of the moved entities or below them.
    if let Some(p) = parent.as_deref().and_then(index)
        && entities
            .iter()
            .filter_map(|e| index(e))
            .any(|m| tree.is_within(p, m))
    {
        return Err(Cycle);
    }
    let parent_world = parent
        .as_deref()
        .and_then(world_pose)
        .unwrap_or(Affine3A::IDENTITY);
    let mut moved_versions = Vec::new();
    for id in entities {
        let Some(old) = doc.entity(id) else {
            continue;
        };
        let mut new = old.clone();
        new.parent = parent.clone();
        // Keep the world pose: local = parent_world^-1 * world.
        if let (Some(world), Some(Value::Object(t))) =
            (world_pose(id), new.components.get_mut("transform"))
        {
            let local = parent_world.inverse() * world;
            let (scale, rotation, translation) = local.to_scale_rotation_translation();
            let (x, y, z) = rotation.to_euler(EulerRot::XYZ);
            t.insert("position".into(), json_f32s(&round(translation).to_array()));
            t.insert(
                "rotation".into(),
                json_f32s(&round(Vec3::new(x, y, z) * (180.0 / std::f32::consts::PI)).to_array()),
            );
            t.insert("scale".into(), json_f32s(&round(scale).to_array()));
        }
        moved_versions.push(new);
    }
    // Order among siblings is the order in the file: move the entities' entries
    // before `before` (or to the end).
    let moved: HashSet<&String> = entities.iter().collect();
    let removed: Vec<(usize, EntityDocument)> = doc
        .entities
        .iter()
        .enumerate()
        .filter(|(_, e)| moved.contains(&e.id))
        .map(|(i, e)| (i, e.clone()))
        .collect();
    let remaining: Vec<&EntityDocument> = doc
        .entities
        .iter()
        .filter(|e| !moved.contains(&e.id))
        .collect();
    let at = before
        .as_deref()
        .and_then(|b| remaining.iter().position(|e| e.id == b))
        .unwrap_or(remaining.len());
    let inserted: Vec<(usize, EntityDocument)> = (at..).zip(moved_versions).collect();
    Ok(DocEdit::Group(vec![
        DocEdit::Remove { entities: removed },
        DocEdit::Insert { entities: inserted },
    ]))
}

/// Sets one field of one component instance of an entity, or records an override
/// of a prefab part's field (`tree_01/trunk`). `None` when there is no such entity;
/// the edit may leave the value as it is (see [`DocEdit::changes`]).
pub fn set_field(
    doc: &LevelDocument,
    entity: &str,
    component: &str,
    instance: Option<usize>,
    field: &str,
    value: Value,
) -> Option<DocEdit> {
    if let Some((instance_id, key)) = split_part(entity) {
        doc.entity(instance_id)?;
        return Some(DocEdit::SetOverride {
            instance: instance_id.to_owned(),
            key: key.to_owned(),
            component: component.to_owned(),
            field: field.to_owned(),
            old: override_of(doc, instance_id, key, component, field),
            new: Some(value),
        });
    }
    let e = doc.entity(entity)?;
    let old = match (e.components.get(component), instance) {
        (Some(Value::Object(m)), None) => m.get(field).cloned(),
        (Some(Value::Array(items)), Some(i)) => items.get(i).and_then(|m| m.get(field)).cloned(),
        _ => None,
    };
    Some(DocEdit::SetField {
        entity: entity.to_owned(),
        component: component.to_owned(),
        instance,
        field: field.to_owned(),
        old,
        new: Some(value),
    })
}

/// Adds a component with its defaults (every field left out: the schema's defaults
/// compile, and an empty reference means "none").
pub fn add_component(doc: &LevelDocument, entity: &str, component: &str) -> Option<DocEdit> {
    let e = doc.entity(entity)?;
    if e.components.contains_key(component) {
        return None;
    }
    Some(DocEdit::SetComponent {
        entity: entity.to_owned(),
        component: component.to_owned(),
        old: None,
        new: Some(Value::Object(Map::new())),
    })
}

/// Removes a component.
pub fn remove_component(doc: &LevelDocument, entity: &str, component: &str) -> Option<DocEdit> {
    let old = doc.entity(entity)?.components.get(component)?.clone();
    Some(DocEdit::SetComponent {
        entity: entity.to_owned(),
        component: component.to_owned(),
        old: Some(old),
        new: None,
    })
}

/// Renames an entity; `None` when the name is the same.
pub fn rename(doc: &LevelDocument, entity: &str, name: String) -> Option<DocEdit> {
    let old = doc.entity(entity)?.name.clone();
    (old != name).then(|| DocEdit::Rename {
        entity: entity.to_owned(),
        old,
        new: name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> LevelDocument {
        LevelDocument::parse(
            r#"{"entities": [
                {"id": "a", "name": "A", "components": {"transform": {"position": [1, 0, 0]}}},
                {"id": "b", "parent": "a", "name": "B", "components": {"transform": {}}},
                {"id": "c", "name": "C"}
            ]}"#,
            "t.level",
        )
        .unwrap()
    }

    #[test]
    fn paste_gives_fresh_ids_and_keeps_the_copied_hierarchy() {
        let d = doc();
        let tree = SceneTree::build(&d);
        let copies = selected_subtrees(&d, &tree, &["a".into()]);
        let (edit, selection) = paste(&d, &copies, &kiln_core::Registry::with_builtins()).unwrap();
        let mut after = d.clone();
        let mut edit = edit;
        edit.apply(&mut after);
        let (a, b) = (&after.entities[3], &after.entities[4]);
        assert_eq!(selection, vec![a.id.clone()]);
        assert!(
            a.id.starts_with("a_") && b.id.starts_with("b_"),
            "{a:?} {b:?}"
        );
        assert_eq!(b.parent.as_deref(), Some(a.id.as_str()));
        assert_eq!(after.entities.len(), 5);
    }

    #[test]
    fn a_copy_at_the_top_gets_a_free_name_and_what_is_below_keeps_its_own() {
        let taken: HashSet<String> = ["Lamp", "Lamp 2", "Tree 1", "Tree 2", "Tree 3"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(unique_name("Lamp", &taken), "Lamp 3");
        assert_eq!(unique_name("Tree 1", &taken), "Tree 4");
        assert_eq!(unique_name("Rock", &taken), "Rock");
        assert_eq!(unique_name("Box9", &["Box9".to_owned()].into()), "Box10");
        let huge = format!("Crate {}", u64::MAX);
        assert_eq!(
            unique_name(&huge, &[huge.clone()].into()),
            format!("{huge} 2")
        );
        let d = doc();
        let tree = SceneTree::build(&d);
        let copies = selected_subtrees(&d, &tree, &["a".into()]);
        let (mut edit, _) = paste(&d, &copies, &kiln_core::Registry::with_builtins()).unwrap();
        let mut after = d.clone();
        edit.apply(&mut after);
        assert_eq!(after.entities[3].name, "A 2");
        assert_eq!(after.entities[4].name, "B");
    }

    #[test]
    fn nudges_move_siblings_together_and_stop_at_the_ends() {
        let d = LevelDocument::parse(
            r#"{"entities": [
                {"id": "p"}, {"id": "x", "parent": "p"}, {"id": "y", "parent": "p"},
                {"id": "z", "parent": "p"}, {"id": "q"}
            ]}"#,
            "t.level",
        )
        .unwrap();
        let tree = SceneTree::build(&d);
        let sel = |ids: &[&str]| ids.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let p = || Some("p".to_owned());
        assert_eq!(
            nudge(&d, &tree, &sel(&["y", "z"]), Nudge::Up),
            Some((sel(&["y", "z"]), p(), Some("x".into())))
        );
        assert_eq!(nudge(&d, &tree, &sel(&["x"]), Nudge::Up), None);
        assert_eq!(
            nudge(&d, &tree, &sel(&["x", "y"]), Nudge::Down),
            Some((sel(&["x", "y"]), p(), None))
        );
        assert_eq!(
            nudge(&d, &tree, &sel(&["x"]), Nudge::Down),
            Some((sel(&["x"]), p(), Some("z".into())))
        );
        assert_eq!(nudge(&d, &tree, &sel(&["z"]), Nudge::Down), None);
        assert_eq!(
            nudge(&d, &tree, &sel(&["y"]), Nudge::Indent),
            Some((sel(&["y"]), Some("x".into()), None))
        );
        assert_eq!(nudge(&d, &tree, &sel(&["x"]), Nudge::Indent), None);
        assert_eq!(
            nudge(&d, &tree, &sel(&["y"]), Nudge::Outdent),
            Some((sel(&["y"]), None, Some("q".into())))
        );
        assert_eq!(nudge(&d, &tree, &sel(&["q"]), Nudge::Outdent), None);
        assert_eq!(
            nudge(&d, &tree, &sel(&["x", "q"]), Nudge::Up),
            None,
            "two parents"
        );
    }

    #[test]
    fn reparenting_under_a_descendant_is_refused() {
        let d = doc();
        let tree = SceneTree::build(&d);
        let none = |_: &str| None;
        assert_eq!(
            reparent(&d, &tree, &none, &["a".into()], Some("b".into()), None),
            Err(Cycle)
        );
    }

    #[test]
    fn a_new_entity_goes_where_it_is_asked_under_the_given_parent() {
        let d = doc();
        let (mut edit, selection) = new_entity(&d, Some("c".into()), Vec3::new(1.0, 2.0, 3.0));
        let mut after = d.clone();
        edit.apply(&mut after);
        let e = after.entity(&selection[0]).unwrap();
        assert_eq!(e.parent.as_deref(), Some("c"));
        assert_eq!(
            e.components["transform"]["position"],
            serde_json::json!([1, 2, 3])
        );
    }
}
