//! Prefab instances opened up: the parts a `.unit` brings into a level, addressed the
//! way the compiler names them (`tree_01/trunk`, `house/door/handle`), with the
//! values they end up with once the level's overrides are applied.
//!
//! An override lives in the level, on the instance entity:
//! `"overrides": {"trunk": {"mesh": {"material": "materials/oak"}}}`. Editing a part
//! in the editor records exactly that and nothing else; reverting the last override
//! of a part removes its key, so the file keeps no trace of it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use kiln_core::{EntityDocument, LevelDocument, Project, ResourcePath};
use serde_json::{Map, Value};

use crate::editor::document::split_part;
use crate::editor::tree::SceneTree;

/// The unit files the open level's instances use, parsed, with their trees.
#[derive(Debug, Clone, Default)]
pub struct PrefabLibrary {
    /// Unit file -> the unit, or why it did not load.
    units: HashMap<String, Result<Arc<LoadedUnit>, String>>,
    /// `prefab` text as written (`units/tree`) -> unit file, so that the scene tree's
    /// per-frame lookups neither parse nor allocate.
    files: HashMap<String, String>,
}

/// A parsed `.unit` and its hierarchy.
#[derive(Debug, Clone)]
pub struct LoadedUnit {
    /// The document.
    pub doc: LevelDocument,
    /// Its entities' hierarchy.
    pub tree: SceneTree,
}

/// `units/tree` (as written in `prefab`) -> `units/tree.unit`.
pub fn unit_file(prefab: &str) -> Option<String> {
    Some(ResourcePath::parse(prefab).ok()?.with_extension("unit"))
}

impl PrefabLibrary {
    /// Loads every unit `doc` instances, and the units those instance, keeping the
    /// ones already loaded. Bounded by the compiler's nesting limit, so a cycle
    /// ends (the compile error says what is wrong).
    pub fn load_for(&mut self, project: &Project, doc: &LevelDocument) {
        let mut wanted: Vec<(String, usize)> = doc
            .entities
            .iter()
            .filter_map(|e| self.file_of(e.prefab.as_deref()?))
            .map(|f| (f, 0))
            .collect();
        while let Some((file, depth)) = wanted.pop() {
            if depth > kiln_core::compiler::MAX_PREFAB_DEPTH {
                continue;
            }
            let loaded = match self.units.get(&file) {
                Some(l) => l.clone(),
                None => {
                    let l = read_unit(project, &file).map(Arc::new);
                    self.units.insert(file.clone(), l.clone());
                    l
                }
            };
            if let Ok(unit) = loaded {
                for e in &unit.doc.entities {
                    if let Some(f) = e.prefab.as_deref().and_then(|p| self.file_of(p))
                        && !self.units.contains_key(&f)
                    {
                        wanted.push((f, depth + 1));
                    }
                }
            }
        }
    }

    /// Forgets units that changed on disk (they load again on next use).
    pub fn forget(&mut self, changed: &[String]) {
        for f in changed {
            self.units.remove(f);
        }
    }

    /// The unit file a `prefab` text names, remembered for [`Self::unit`].
    fn file_of(&mut self, prefab: &str) -> Option<String> {
        if let Some(f) = self.files.get(prefab) {
            return Some(f.clone());
        }
        let f = unit_file(prefab)?;
        self.files.insert(prefab.to_owned(), f.clone());
        Some(f)
    }

    /// The unit an entity's `prefab` names, if it loaded.
    pub fn unit(&self, prefab: &str) -> Option<&LoadedUnit> {
        self.units
            .get(self.files.get(prefab)?)?
            .as_ref()
            .ok()
            .map(|u| &**u)
    }
}

fn read_unit(project: &Project, file: &str) -> Result<LoadedUnit, String> {
    let bytes = kiln_core::read_below(project.root(), std::path::Path::new(file), 64 << 20)
        .map_err(|e| format!("{file}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{file}: not UTF-8"))?;
    let doc = LevelDocument::parse(&text, file).map_err(|e| e.to_string())?;
    let tree = SceneTree::build(&doc);
    Ok(LoadedUnit { doc, tree })
}

/// Whether an id names a part inside an instance rather than an entity of the file.
pub fn is_part(id: &str) -> bool {
    id.contains('/')
}

/// The rows of the scene tree above the part `path` (`lamp_2/head/glass`), from the
/// top: its instance, the parts above it in its unit (a canopy sits under its
/// trunk), and each nested instance on the way with the parts above it in its own
/// unit. What must be open for the part's row to show.
pub fn rows_above(doc: &LevelDocument, prefabs: &PrefabLibrary, path: &str) -> Vec<String> {
    let mut rows = Vec::new();
    let mut segments = path.split('/');
    let Some(instance) = segments.next() else {
        return rows;
    };
    let Some(mut prefab) = doc.entity(instance).and_then(|e| e.prefab.clone()) else {
        return rows;
    };
    let mut prefix = instance.to_owned();
    rows.push(prefix.clone());
    let rest: Vec<&str> = segments.collect();
    for (k, segment) in rest.iter().enumerate() {
        let Some(unit) = prefabs.unit(&prefab) else {
            break;
        };
        let Some(at) = unit.doc.entities.iter().position(|e| e.id == *segment) else {
            break;
        };
        // The parts above it in this unit, outermost first.
        let mut above = Vec::new();
        let mut up = unit.tree.parent[at];
        while let Some(p) = up {
            above.push(format!("{prefix}/{}", unit.doc.entities[p].id));
            up = unit.tree.parent[p];
        }
        rows.extend(above.into_iter().rev());
        prefix = format!("{prefix}/{segment}");
        if k + 1 < rest.len() {
            rows.push(prefix.clone());
            match &unit.doc.entities[at].prefab {
                Some(inner) => prefab = inner.clone(),
                None => break,
            }
        }
    }
    rows
}

/// A part as the inspector shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartView {
    /// The instance entity in the open file.
    pub instance: String,
    /// The override key (the part's path below the instance).
    pub key: String,
    /// The unit the part comes from.
    pub unit_file: String,
    /// The part with its effective components (id = the full path).
    pub entity: EntityDocument,
    /// (component, field) pairs the open file overrides.
    pub overridden: BTreeSet<(String, String)>,
}

/// The effective part at `path` (`instance/part[/part...]`), overrides applied the way
/// the compiler applies them: the inner units' own overrides first, the open file's
/// last.
pub fn part_view(doc: &LevelDocument, library: &PrefabLibrary, path: &str) -> Option<PartView> {
    let (instance_id, key) = split_part(path)?;
    let instance = doc.entity(instance_id)?;
    let mut unit_ref = instance.prefab.as_deref()?;
    let segments: Vec<&str> = key.split('/').collect();
    // Overrides met on the way down, each with the key it uses for the part.
    let mut patches: Vec<(Value, String)> = Vec::new();
    let mut part: Option<&EntityDocument> = None;
    for (depth, segment) in segments.iter().enumerate() {
        let unit = library.unit(unit_ref)?;
        let e = unit.doc.entity(segment)?;
        if depth + 1 < segments.len() {
            // `e` is an instance inside the unit: its own overrides of the rest apply.
            let rest = segments[depth + 1..].join("/");
            if let Some(p) = e.overrides.get(&rest) {
                patches.push((p.clone(), rest));
            }
            unit_ref = e.prefab.as_deref()?;
        }
        part = Some(e);
    }
    let part = part?;
    let mut components = part.components.clone();
    // Innermost first: an outer file's override wins.
    for (patch, _) in patches.iter().rev() {
        apply_patch(&mut components, patch);
    }
    let own = instance.overrides.get(key);
    let mut overridden = BTreeSet::new();
    if let Some(patch) = own {
        apply_patch(&mut components, patch);
        if let Some(patch) = patch.as_object() {
            for (component, fields) in patch {
                match fields {
                    Value::Object(fields) => {
                        overridden.extend(fields.keys().map(|f| (component.clone(), f.clone())))
                    }
                    _ => {
                        overridden.insert((component.clone(), String::new()));
                    }
                }
            }
        }
    }
    Some(PartView {
        instance: instance_id.to_owned(),
        key: key.to_owned(),
        unit_file: unit_file(unit_ref)?,
        entity: EntityDocument {
            id: path.to_owned(),
            name: part.name.clone(),
            parent: None,
            prefab: part.prefab.clone(),
            components,
            overrides: Map::new(),
        },
        overridden,
    })
}

/// Applies an override patch `{component: fields | null | value}` as the compiler
/// does: fields merge into an object component, `null` removes the component, and
/// anything else replaces it.
fn apply_patch(components: &mut Map<String, Value>, patch: &Value) {
    let Some(patch) = patch.as_object() else {
        return;
    };
    for (name, value) in patch {
        match (components.get_mut(name), value) {
            (Some(_), Value::Null) => {
                components.shift_remove(name);
            }
            (None, Value::Null) => {}
            (Some(Value::Object(base)), Value::Object(fields)) => {
                for (k, v) in fields {
                    base.insert(k.clone(), v.clone());
                }
            }
            _ => {
                components.insert(name.clone(), value.clone());
            }
        }
    }
}

/// The unit with an instance's overrides written into it (a part's own fields
/// directly; a nested part's into the nested instance's overrides), and the instance
/// without them: what "Apply overrides to prefab" writes.
pub fn apply_overrides(
    instance: &EntityDocument,
    unit: &LevelDocument,
) -> (LevelDocument, EntityDocument) {
    let mut unit = unit.clone();
    for (key, patch) in &instance.overrides {
        match key.split_once('/') {
            None => {
                if let Some(part) = unit.entity_mut(key) {
                    apply_patch(&mut part.components, patch);
                    part.components.sort_keys();
                }
            }
            Some((inner, rest)) => {
                if let Some(nested) = unit.entity_mut(inner) {
                    let into = nested
                        .overrides
                        .entry(rest.to_owned())
                        .or_insert_with(|| Value::Object(Map::new()));
                    merge_patch(into, patch);
                }
            }
        }
    }
    let mut cleaned = instance.clone();
    cleaned.overrides.clear();
    (unit, cleaned)
}

/// Merges override `patch` into override `into`: fields of the same component
/// merge; anything else replaces.
fn merge_patch(into: &mut Value, patch: &Value) {
    let (Some(into), Some(patch)) = (into.as_object_mut(), patch.as_object()) else {
        return;
    };
    for (component, fields) in patch {
        match (into.get_mut(component), fields) {
            (Some(Value::Object(a)), Value::Object(b)) => {
                a.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => {
                into.insert(component.clone(), fields.clone());
            }
        }
    }
}

/// What "Create prefab from selection" makes: the unit holding the selected
/// entities and everything below them (the selection's roots become the unit's
/// roots, keeping their local transforms), and the edit that replaces them in the
/// open file with one instance of it, under the same parent and at the same place,
/// so that nothing moves in the world.
pub struct NewPrefab {
    /// The unit's document.
    pub unit: LevelDocument,
    /// Removes the entities and inserts the instance.
    pub edit: crate::editor::document::DocEdit,
    /// The instance's id.
    pub instance: String,
}

/// A file's stem as a name to show: `rock_pile` -> `Rock pile`.
pub fn display_name(stem: &str) -> String {
    let spaced = stem.replace(['_', '-'], " ");
    let mut chars = spaced.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => stem.to_owned(),
    }
}

/// Builds a [`NewPrefab`] for `selection`, with the instance naming `prefab`
/// (`units/crates`).
pub fn create_prefab(
    (doc, registry): (&LevelDocument, &kiln_core::Registry),
    tree: &SceneTree,
    selection: &[String],
    prefab: &str,
) -> Result<NewPrefab, String> {
    use crate::editor::document::DocEdit;
    use std::collections::HashSet;
    let index = |id: &str| doc.entities.iter().position(|e| e.id == id);
    let selected: Vec<usize> = selection.iter().filter_map(|id| index(id)).collect();
    if selected.is_empty() {
        return Err("select entities of the open file to make a prefab of".into());
    }
    // The selection's roots: selected entities with no selected ancestor.
    let roots: Vec<usize> = selected
        .iter()
        .copied()
        .filter(|&i| !selected.iter().any(|&a| a != i && tree.is_within(i, a)))
        .collect();
    let parent = doc.entities[roots[0]].parent.clone();
    if roots.iter().any(|&r| doc.entities[r].parent != parent) {
        return Err(
            "the selected entities have different parents: select entities under one parent".into(),
        );
    }
    let mut members: Vec<usize> = roots.iter().flat_map(|&r| tree.subtree(r)).collect();
    members.sort_unstable();
    members.dedup();
    let root_ids: HashSet<&str> = roots.iter().map(|&r| doc.entities[r].id.as_str()).collect();
    let unit = LevelDocument {
        conflicts: Vec::new(),
        entities: members
            .iter()
            .map(|&i| {
                let mut e = doc.entities[i].clone();
                if root_ids.contains(e.id.as_str()) {
                    e.parent = None;
                }
                e
            })
            .collect(),
    };
    // The instance sits where the selection was: one root gives it its transform
    // (the unit's root is then at the unit's origin); several give it their centre,
    // each placed relative to it.
    let mut unit = unit;
    let mut instance_transform = Map::new();
    let vector = |t: &Map<String, Value>, key: &str| -> Option<[f64; 3]> {
        let a = t.get(key)?.as_array()?;
        Some([
            a.first()?.as_f64()?,
            a.get(1)?.as_f64()?,
            a.get(2)?.as_f64()?,
        ])
    };
    let transform_of = |e: &EntityDocument| -> Map<String, Value> {
        e.components
            .get("transform")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let clean = |v: f64| (v * 10_000.0).round() / 10_000.0;
    let json3 = |v: [f64; 3]| kiln_core::schema::json_f32s(&v.map(|x| clean(x) as f32));
    let unit_roots: Vec<usize> = unit
        .entities
        .iter()
        .enumerate()
        .filter(|(_, e)| root_ids.contains(e.id.as_str()))
        .map(|(k, _)| k)
        .collect();
    if let [only] = unit_roots.as_slice() {
        let root = &mut unit.entities[*only];
        if let Some(t) = root
            .components
            .get_mut("transform")
            .and_then(Value::as_object_mut)
        {
            instance_transform = std::mem::take(t);
        }
    } else {
        let positions: Vec<[f64; 3]> = unit_roots
            .iter()
            .map(|&k| vector(&transform_of(&unit.entities[k]), "position").unwrap_or([0.0; 3]))
            .collect();
        let n = positions.len().max(1) as f64;
        // Rounded as it is written, so that the parts sit exactly where they were.
        let centre = positions
            .iter()
            .fold([0.0; 3], |acc, p| {
                [acc[0] + p[0] / n, acc[1] + p[1] / n, acc[2] + p[2] / n]
            })
            .map(clean);
        if centre != [0.0; 3] {
            instance_transform.insert("position".into(), json3(centre));
            for (&k, p) in unit_roots.iter().zip(&positions) {
                let relative = [p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]];
                let t = unit.entities[k]
                    .components
                    .entry("transform".to_owned())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(t) = t.as_object_mut() {
                    if relative == [0.0; 3] {
                        t.remove("position");
                    } else {
                        t.insert("position".into(), json3(relative));
                    }
                }
            }
        }
    }
    let member_ids: HashSet<&str> = members
        .iter()
        .map(|&i| doc.entities[i].id.as_str())
        .collect();
    let taken: HashSet<String> = doc
        .entities
        .iter()
        .filter(|e| !member_ids.contains(e.id.as_str()))
        .map(|e| e.id.clone())
        .collect();
    let stem = prefab.rsplit('/').next().unwrap_or(prefab);
    let instance_id = if taken.contains(stem) {
        crate::editor::document::unique_id(stem, &taken)
    } else {
        stem.to_owned()
    };
    // Named after the prefab, as the designer named it: "rock_pile" -> "Rock pile".
    let name = display_name(stem);
    // A transform even where it is the identity, so that the instance can be moved
    // with the handle and shows a transform in the inspector.
    let mut components = Map::new();
    components.insert("transform".into(), Value::Object(instance_transform));
    let instance = EntityDocument {
        id: instance_id.clone(),
        name,
        parent,
        prefab: Some(prefab.to_owned()),
        components,
        ..Default::default()
    };
    // The instance takes the place of the first root once the members are gone.
    let position = roots[0] - members.iter().filter(|&&m| m < roots[0]).count();
    let removed = members
        .iter()
        .map(|&i| (i, doc.entities[i].clone()))
        .collect();
    // What named a member names its part now (`instance/member`).
    let mut edits = super::entity_links::into_instance(doc, registry, &member_ids, &instance_id);
    edits.push(DocEdit::Remove { entities: removed });
    edits.push(DocEdit::Insert {
        entities: vec![(position, instance)],
    });
    let edit = DocEdit::Group(edits);
    Ok(NewPrefab {
        unit,
        edit,
        instance: instance_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library_with(unit: &str) -> PrefabLibrary {
        let doc = LevelDocument::parse(unit, "units/tree.unit").unwrap();
        let tree = SceneTree::build(&doc);
        let mut l = PrefabLibrary::default();
        l.units.insert(
            "units/tree.unit".into(),
            Ok(Arc::new(LoadedUnit { doc, tree })),
        );
        l.files
            .insert("units/tree".into(), "units/tree.unit".into());
        l
    }

    const TREE: &str = r#"{"entities": [{"id": "trunk", "name": "Trunk", "components": {"mesh": {"mesh": "meshes/trunk", "material": "materials/bark"}}}]}"#;

    #[test]
    fn a_part_shows_its_overrides_applied_and_marked() {
        let lib = library_with(TREE);
        let doc = LevelDocument::parse(
            r#"{"entities": [{"id": "t", "prefab": "units/tree", "overrides": {"trunk": {"mesh": {"material": "materials/oak"}}}}]}"#,
            "a.level",
        )
        .unwrap();
        let v = part_view(&doc, &lib, "t/trunk").unwrap();
        assert_eq!(v.entity.components["mesh"]["material"], "materials/oak");
        assert_eq!(v.entity.components["mesh"]["mesh"], "meshes/trunk");
        assert_eq!(
            v.overridden,
            BTreeSet::from([("mesh".to_owned(), "material".to_owned())])
        );
        assert_eq!(v.unit_file, "units/tree.unit");
    }

    #[test]
    fn applying_overrides_moves_them_into_the_unit() {
        let unit = LevelDocument::parse(TREE, "units/tree.unit").unwrap();
        let doc = LevelDocument::parse(
            r#"{"entities": [{"id": "t", "prefab": "units/tree", "overrides": {"trunk": {"mesh": {"material": "materials/oak"}}}}]}"#,
            "a.level",
        )
        .unwrap();
        let (unit, instance) = apply_overrides(&doc.entities[0], &unit);
        assert!(instance.overrides.is_empty());
        let trunk = unit.entity("trunk").unwrap();
        assert_eq!(trunk.components["mesh"]["material"], "materials/oak");
        assert_eq!(trunk.components["mesh"]["mesh"], "meshes/trunk");
    }

    #[test]
    fn a_prefab_made_from_a_selection_takes_its_place() {
        let doc = LevelDocument::parse(
            r#"{"entities": [
                {"id": "yard"},
                {"id": "a", "parent": "yard", "name": "Crate A"},
                {"id": "b", "parent": "a"},
                {"id": "c", "parent": "yard"},
                {"id": "d"}
            ]}"#,
            "a.level",
        )
        .unwrap();
        let tree = SceneTree::build(&doc);
        let made = create_prefab(
            (&doc, &kiln_core::Registry::with_builtins()),
            &tree,
            &["a".into(), "c".into()],
            "units/crates",
        )
        .unwrap();
        let ids: Vec<&str> = made.unit.entities.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(made.unit.entity("a").unwrap().parent, None);
        assert_eq!(made.unit.entity("b").unwrap().parent.as_deref(), Some("a"));
        let mut after = doc.clone();
        let mut edit = made.edit;
        edit.apply(&mut after);
        let ids: Vec<&str> = after.entities.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["yard", "crates", "d"]);
        assert_eq!(
            after.entity("crates").unwrap().parent.as_deref(),
            Some("yard")
        );
        edit.revert(&mut after);
        assert_eq!(after, doc);
        // Different parents cannot share one instance.
        assert!(
            create_prefab(
                (&doc, &kiln_core::Registry::with_builtins()),
                &tree,
                &["b".into(), "d".into()],
                "units/x"
            )
            .is_err()
        );
    }
}
