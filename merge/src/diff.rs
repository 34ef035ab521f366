//! What changed between two versions of a Kiln file, said as a person would: for a
//! level or unit, the entities added, removed, moved in the tree or reordered, and
//! per entity the components and fields changed, old -> new; for any other JSON
//! file, the keys changed. Formatting and key order are not changes.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::json::same;

/// The lines saying what changed from `old` to `new` (the file's type is its
/// extension); empty when nothing did. `Err` when a version does not read as the
/// file Kiln expects.
pub fn diff_file(path: &str, old: &[u8], new: &[u8]) -> Result<Vec<String>, String> {
    let read = |bytes: &[u8], which: &str| -> Result<Option<Value>, String> {
        let bytes = kiln_core::json_format::bytes_without_bom(bytes);
        let text =
            std::str::from_utf8(bytes).map_err(|_| format!("the {which} version is not UTF-8"))?;
        if text.trim().is_empty() {
            return Ok(None);
        }
        serde_json::from_str(text).map(Some).map_err(|e| {
            format!(
                "the {which} version is not JSON: line {}, column {}: {e}",
                e.line(),
                e.column()
            )
        })
    };
    let (old, new) = (read(old, "old")?, read(new, "new")?);
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    let entities = |v: &Option<Value>| -> Option<Vec<Value>> {
        match v {
            None => Some(Vec::new()),
            Some(v) => v.get("entities")?.as_array().cloned(),
        }
    };
    if matches!(ext, "level" | "unit")
        && let (Some(a), Some(b)) = (entities(&old), entities(&new))
    {
        return Ok(diff_entities(&a, &b));
    }
    let mut lines = Vec::new();
    diff_values(&mut lines, "", old.as_ref(), new.as_ref(), "");
    Ok(lines)
}

/// A value on one line.
fn show(v: Option<&Value>) -> String {
    match v {
        None => "(none)".to_owned(),
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() > 80 {
                format!("{}...", text.chars().take(77).collect::<String>())
            } else {
                text
            }
        }
    }
}

/// The changed leaves below `path`, as `indent path: old -> new` lines (`+`/`-` for
/// keys added or removed).
fn diff_values(
    lines: &mut Vec<String>,
    path: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    indent: &str,
) {
    match (old, new) {
        (Some(a), Some(b)) if same(a, b) => {}
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys = a.keys().chain(b.keys().filter(|k| !a.contains_key(*k)));
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                diff_values(lines, &p, a.get(k), b.get(k), indent);
            }
        }
        (None, Some(b)) => lines.push(format!("{indent}+ {path}: {}", show(Some(b)))),
        (Some(a), None) => lines.push(format!("{indent}- {path}: {}", show(Some(a)))),
        (a, b) => lines.push(format!("{indent}{path}: {} -> {}", show(a), show(b))),
    }
}

fn id_of(e: &Value) -> String {
    e.get("id").and_then(Value::as_str).unwrap_or("").to_owned()
}

fn parent_of(e: &Value) -> Option<String> {
    e.get("parent").and_then(Value::as_str).map(str::to_owned)
}

/// An entity as people know it: `"tree_01" (Tree 1)`.
fn named(e: &Value) -> String {
    match e.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => format!("\"{}\" ({n})", id_of(e)),
        _ => format!("\"{}\"", id_of(e)),
    }
}

fn place(parent: &Option<String>) -> String {
    match parent {
        Some(p) => format!("under \"{p}\""),
        None => "at the root".to_owned(),
    }
}

/// The entities added, removed, moved and changed, in the new version's order
/// (removed ones where they were).
fn diff_entities(old: &[Value], new: &[Value]) -> Vec<String> {
    let old_by: HashMap<String, &Value> = old.iter().map(|e| (id_of(e), e)).collect();
    let new_by: HashMap<String, &Value> = new.iter().map(|e| (id_of(e), e)).collect();
    // Each entity's rank among its siblings, to tell a reorder.
    let ranks = |list: &[Value]| -> HashMap<String, (Option<String>, usize)> {
        let mut count: BTreeMap<Option<String>, usize> = BTreeMap::new();
        list.iter()
            .map(|e| {
                let p = parent_of(e);
                let n = count.entry(p.clone()).or_default();
                *n += 1;
                (id_of(e), (p, *n))
            })
            .collect()
    };
    let (old_rank, new_rank) = (ranks(old), ranks(new));
    let mut lines = Vec::new();
    for e in old.iter().filter(|e| !new_by.contains_key(&id_of(e))) {
        lines.push(format!("- entity {}", named(e)));
    }
    for e in new {
        let id = id_of(e);
        let Some(before) = old_by.get(&id) else {
            lines.push(format!("+ entity {}, {}", named(e), place(&parent_of(e))));
            continue;
        };
        if same(before, e) && old_rank.get(&id) == new_rank.get(&id) {
            continue;
        }
        let mut inner = Vec::new();
        let (was, is) = (parent_of(before), parent_of(e));
        if was != is {
            inner.push(format!("    moved: {} -> {}", place(&was), place(&is)));
        } else if old_rank.get(&id) != new_rank.get(&id) {
            inner.push("    reordered among its siblings".to_owned());
        }
        let rest = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.shift_remove("parent");
                m.shift_remove("id");
            }
            v
        };
        let (a, b) = (rest(before), rest(e));
        let (ca, cb) = (a.get("components"), b.get("components"));
        if let (Some(Value::Object(ca)), Some(Value::Object(cb))) = (ca, cb) {
            for name in ca.keys().filter(|k| !cb.contains_key(*k)) {
                inner.push(format!("    - component \"{name}\""));
            }
            for name in cb.keys().filter(|k| !ca.contains_key(*k)) {
                inner.push(format!("    + component \"{name}\""));
            }
            for (name, v) in cb {
                if let Some(w) = ca.get(name) {
                    diff_values(&mut inner, name, Some(w), Some(v), "    ");
                }
            }
        } else {
            diff_values(&mut inner, "components", ca, cb, "    ");
        }
        let others = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.shift_remove("components");
            }
            v
        };
        diff_values(&mut inner, "", Some(&others(&a)), Some(&others(&b)), "    ");
        if !inner.is_empty() {
            lines.push(format!("~ entity {}", named(e)));
            lines.extend(inner);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_level_diff_says_what_happened_to_each_entity() {
        let old = br#"{"entities": [
            {"id": "g", "name": "Grove"},
            {"id": "t", "name": "Tree", "parent": "g", "components": {"transform": {"position": [1, 0, 0]}, "rotator": {"speed": 1}}},
            {"id": "l", "name": "Lamp"}
        ]}"#;
        let new = br#"{"entities": [
            {"id": "g", "name": "Grove"},
            {"id": "t", "name": "Old tree", "components": {"transform": {"position": [2, 0, 0]}, "wind": {}}},
            {"id": "r", "name": "Rock", "parent": "g"}
        ]}"#;
        let lines = diff_file("levels/a.level", old, new).unwrap();
        assert_eq!(
            lines,
            [
                "- entity \"l\" (Lamp)",
                "~ entity \"t\" (Old tree)",
                "    moved: under \"g\" -> at the root",
                "    - component \"rotator\"",
                "    + component \"wind\"",
                "    transform.position: [1,0,0] -> [2,0,0]",
                "    name: \"Tree\" -> \"Old tree\"",
                "+ entity \"r\" (Rock), under \"g\""
            ]
        );
    }

    #[test]
    fn formatting_and_key_order_are_not_changes() {
        let old = br#"{"roughness": 0.5, "color": [1, 1, 1, 1]}"#;
        let new = b"{\n  \"color\": [1.0, 1, 1, 1],\n  \"roughness\": 0.50\n}\n";
        assert!(
            diff_file("materials/a.material", old, new)
                .unwrap()
                .is_empty()
        );
        let newer = br#"{"color": [1, 0, 0, 1], "texture": "textures/a"}"#;
        assert_eq!(
            diff_file("materials/a.material", old, newer).unwrap(),
            [
                "- roughness: 0.5",
                "color: [1,1,1,1] -> [1,0,0,1]",
                "+ texture: \"textures/a\""
            ]
        );
    }
}
