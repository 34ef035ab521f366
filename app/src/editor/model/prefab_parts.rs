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

use crate::editor::tree::SceneTree;

/// The unit files the open level's instances use, parsed, with their trees.
#[derive(Debug, Clone, Default)]
pub struct PrefabLibrary {
    units: HashMap<String, Result<Arc<LoadedUnit>, String>>,
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
            .filter_map(|e| unit_file(e.prefab.as_deref()?))
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
                wanted.extend(
                    unit.doc
                        .entities
                        .iter()
                        .filter_map(|e| unit_file(e.prefab.as_deref()?))
                        .filter(|f| !self.units.contains_key(f))
                        .map(|f| (f, depth + 1)),
                );
            }
        }
    }

    /// Forgets units that changed on disk (they load again on next use).
    pub fn forget(&mut self, changed: &[String]) {
        for f in changed {
            self.units.remove(f);
        }
    }

    /// The unit an entity's `prefab` names, if it loaded.
    pub fn unit(&self, prefab: &str) -> Option<&LoadedUnit> {
        self.units
            .get(&unit_file(prefab)?)?
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

/// `tree_01/trunk` -> (`tree_01`, `trunk`): the instance in the open file and the
/// override key of the part below it.
pub fn split_part(id: &str) -> Option<(&str, &str)> {
    id.split_once('/')
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

/// The value the open file overrides a part's field with, if any.
pub fn override_of(
    doc: &LevelDocument,
    instance: &str,
    key: &str,
    component: &str,
    field: &str,
) -> Option<Value> {
    doc.entity(instance)?
        .overrides
        .get(key)?
        .get(component)?
        .get(field)
        .cloned()
}

/// Sets (or, with `None`, removes) one overridden field of a part, creating the
/// objects on the way and removing the ones that become empty, so that reverting
/// the last override of a part leaves the instance as if it never had one.
pub fn set_override(
    doc: &mut LevelDocument,
    instance: &str,
    key: &str,
    component: &str,
    field: &str,
    value: &Option<Value>,
) {
    let Some(e) = doc.entity_mut(instance) else {
        return;
    };
    match value {
        Some(v) => {
            let part = e
                .overrides
                .entry(key.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if !part.is_object() {
                *part = Value::Object(Map::new());
            }
            let Some(part) = part.as_object_mut() else {
                return;
            };
            let fields = part
                .entry(component.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if !fields.is_object() {
                *fields = Value::Object(Map::new());
            }
            if let Some(fields) = fields.as_object_mut() {
                fields.insert(field.to_owned(), v.clone());
            }
        }
        None => {
            let Some(Value::Object(part)) = e.overrides.get_mut(key) else {
                return;
            };
            if let Some(Value::Object(fields)) = part.get_mut(component) {
                fields.shift_remove(field);
                if fields.is_empty() {
                    part.shift_remove(component);
                }
            }
            if part.is_empty() {
                e.overrides.shift_remove(key);
            }
        }
    }
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
    fn reverting_the_last_override_leaves_no_trace() {
        let text = r#"{"entities": [{"id": "t", "prefab": "units/tree"}]}"#;
        let before = LevelDocument::parse(text, "a.level").unwrap();
        let mut doc = before.clone();
        let v = Some(Value::from("materials/oak"));
        set_override(&mut doc, "t", "trunk", "mesh", "material", &v);
        assert_eq!(
            override_of(&doc, "t", "trunk", "mesh", "material"),
            v.clone()
        );
        set_override(&mut doc, "t", "trunk", "mesh", "material", &None);
        assert_eq!(doc, before);
    }
}
