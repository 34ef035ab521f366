//! Three-way merge of JSON values, key by key: what every Kiln file is made of.
//!
//! A value changed on one side only takes that side's; changed alike on both, it is
//! that; changed differently, it is a conflict (a marker, see
//! [`kiln_core::conflict`]), unless both are objects, which merge key by key.
//! Vectors and colours are values: two different changes to one are a conflict.
//! Other lists (of records, of paths) merge item by item while neither side changed
//! their length; the same item changed differently puts the whole list in
//! conflict. Numbers compare by value (`1` is `1.0`).

use kiln_core::conflict::Conflict;
use serde_json::{Map, Value};

/// Whether two values are the same: numbers by value, objects whatever their keys'
/// order, arrays item by item.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn same_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// Where in a file a merge is, for the conflicts it finds.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// The entity (levels and units).
    pub entity: Option<String>,
    /// The keys from the entity or the root.
    pub path: Vec<String>,
}

/// Merges one value (`None`: absent on that side); conflicts go to `conflicts` and
/// stand in the result as markers. `None`: absent in the result.
pub fn merge(
    place: &mut Place,
    base: Option<&Value>,
    ours: Option<&Value>,
    theirs: Option<&Value>,
    conflicts: &mut Vec<Conflict>,
) -> Option<Value> {
    if same_opt(ours, theirs) || same_opt(theirs, base) {
        return ours.cloned();
    }
    if same_opt(ours, base) {
        return theirs.cloned();
    }
    match (base, ours, theirs) {
        (None | Some(Value::Object(_)), Some(Value::Object(o)), Some(Value::Object(t))) => {
            let empty = Map::new();
            let b = base.and_then(Value::as_object).unwrap_or(&empty);
            Some(Value::Object(merge_maps(place, b, o, t, conflicts)))
        }
        (Some(Value::Array(b)), Some(Value::Array(o)), Some(Value::Array(t)))
            if b.len() == o.len() && o.len() == t.len() && !is_vector(b) =>
        {
            // A list of records (or of paths) whose length neither side changed:
            // item by item, so two designers editing different items both keep
            // their edit. Where the same item changed differently, the list is in
            // conflict as one value (as a vector or colour always is).
            let mut inner = Vec::new();
            let items: Vec<Value> = b
                .iter()
                .zip(o)
                .zip(t)
                .enumerate()
                .map(|(k, ((b, o), t))| {
                    place.path.push(k.to_string());
                    let item = merge(place, Some(b), Some(o), Some(t), &mut inner);
                    place.path.pop();
                    item.unwrap_or(Value::Null)
                })
                .collect();
            if inner.is_empty() {
                return Some(Value::Array(items));
            }
            Some(conflict_at(place, base, ours, theirs, conflicts))
        }
        _ => Some(conflict_at(place, base, ours, theirs, conflicts)),
    }
}

/// A vector, colour or quaternion: numbers, one value as a whole.
fn is_vector(items: &[Value]) -> bool {
    items.iter().all(Value::is_number)
}

/// The three sides at `place` as one conflict; its marker.
fn conflict_at(
    place: &Place,
    base: Option<&Value>,
    ours: Option<&Value>,
    theirs: Option<&Value>,
    conflicts: &mut Vec<Conflict>,
) -> Value {
    let conflict = Conflict {
        entity: place.entity.clone(),
        path: place.path.clone(),
        why: None,
        base: base.cloned(),
        ours: ours.cloned(),
        theirs: theirs.cloned(),
    };
    let marker = conflict.marker();
    conflicts.push(conflict);
    marker
}

/// Merges two objects key by key: ours' keys in ours' order, then the keys theirs
/// added, in theirs' order.
pub fn merge_maps(
    place: &mut Place,
    base: &Map<String, Value>,
    ours: &Map<String, Value>,
    theirs: &Map<String, Value>,
    conflicts: &mut Vec<Conflict>,
) -> Map<String, Value> {
    let mut out = Map::new();
    let keys = ours
        .keys()
        .chain(theirs.keys().filter(|k| !ours.contains_key(*k)))
        .chain(
            base.keys()
                .filter(|k| !ours.contains_key(*k) && !theirs.contains_key(*k)),
        );
    for key in keys {
        place.path.push(key.clone());
        if let Some(v) = merge(
            place,
            base.get(key),
            ours.get(key),
            theirs.get(key),
            conflicts,
        ) {
            out.insert(key.clone(), v);
        }
        place.path.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn merged(b: Value, o: Value, t: Value) -> (Value, Vec<Conflict>) {
        let mut conflicts = Vec::new();
        let v = merge(
            &mut Place::default(),
            Some(&b),
            Some(&o),
            Some(&t),
            &mut conflicts,
        );
        (v.unwrap(), conflicts)
    }

    #[test]
    fn objects_merge_key_by_key_and_values_conflict_when_both_change_them() {
        let base = json!({"color": [1, 1, 1, 1], "roughness": 0.5, "texture": "textures/a"});
        let ours = json!({"color": [1, 0, 0, 1], "roughness": 0.5, "texture": "textures/a"});
        let theirs = json!({"color": [1, 1, 1, 1], "roughness": 0.9});
        let (v, c) = merged(base.clone(), ours.clone(), theirs);
        assert!(c.is_empty());
        assert_eq!(v, json!({"color": [1, 0, 0, 1], "roughness": 0.9}));

        let theirs = json!({"color": [0, 0, 1, 1], "roughness": 0.5, "texture": "textures/a"});
        let (v, c) = merged(base, ours, theirs);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].path, ["color"]);
        assert_eq!(v["color"], c[0].marker());
        assert_eq!(v["roughness"], json!(0.5));
    }

    #[test]
    fn numbers_compare_by_value_and_the_same_change_is_no_conflict() {
        let (v, c) = merged(json!({"a": 1}), json!({"a": 2.0}), json!({"a": 2}));
        assert!(c.is_empty());
        assert_eq!(v, json!({"a": 2.0}));
        assert!(same(
            &json!({"x": 1, "y": [1, 2]}),
            &json!({"y": [1.0, 2.0], "x": 1.0})
        ));
    }

    #[test]
    fn lists_of_records_merge_item_by_item_and_vectors_stay_values() {
        let base = json!({"meshes": [{"mesh": "meshes/a", "material": "materials/a"}, {"mesh": "meshes/b"}]});
        let ours = json!({"meshes": [{"mesh": "meshes/a2", "material": "materials/a"}, {"mesh": "meshes/b"}]});
        let theirs = json!({"meshes": [{"mesh": "meshes/a", "material": "materials/a"}, {"mesh": "meshes/b2"}]});
        let (v, c) = merged(base.clone(), ours.clone(), theirs);
        assert!(c.is_empty(), "{c:?}");
        assert_eq!(
            v["meshes"],
            json!([{"mesh": "meshes/a2", "material": "materials/a"}, {"mesh": "meshes/b2"}])
        );
        // The same item changed differently: the list is one conflict.
        let theirs = json!({"meshes": [{"mesh": "meshes/a3", "material": "materials/a"}, {"mesh": "meshes/b"}]});
        let (v, c) = merged(base.clone(), ours.clone(), theirs);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].path, ["meshes"]);
        assert_eq!(v["meshes"], c[0].marker());
        // A side that changed the length: the list is a value.
        let theirs = json!({"meshes": [{"mesh": "meshes/a", "material": "materials/a"}]});
        let (_, c) = merged(base, ours, theirs);
        assert_eq!(c.len(), 1);
        // A vector's different components are still one value.
        let (_, c) = merged(
            json!({"p": [0, 0, 0]}),
            json!({"p": [1, 0, 0]}),
            json!({"p": [0, 1, 0]}),
        );
        assert_eq!(c.len(), 1);
    }
}
