//! The fields an instance overrides for the parts of its prefab.

use kiln_core::LevelDocument;
use serde_json::{Map, Value};

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
