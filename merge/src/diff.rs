//! What changed between two versions of a Kiln file, said as a person would: for a
//! level or unit, the entities added, removed, moved in the tree or reordered, and
//! per entity the components and fields changed, old -> new; for any other JSON
//! file, the keys changed. Formatting and key order are not changes.

use kiln_core::raw_level::{EntityHead, EntityTexts};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::json::same;

type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// The lines saying what changed from `old` to `new` (the file's type is its
/// extension); empty when nothing did. `Err` when a version does not read as the
/// file Kiln expects.
pub fn diff_file(path: &str, old: &[u8], new: &[u8]) -> Result<Vec<String>, String> {
    let (old, new) = (
        crate::utf8_text(old, "the old version is")?,
        crate::utf8_text(new, "the new version is")?,
    );
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    if matches!(ext, "level" | "unit")
        && let (Ok(a), Ok(b)) = (LeanLevel::read(old), LeanLevel::read(new))
    {
        return Ok(diff_entities(&a, &b));
    }
    let read = |text: &str, which: &str| -> Result<Option<Value>, String> {
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
    let mut lines = Vec::new();
    diff_values(&mut lines, "", old.as_ref(), new.as_ref(), "");
    Ok(lines)
}

/// A level read lean: each entity's text, id and parent. An entity is parsed only
/// where its text differs between the versions, so a diff of a big level holds
/// little more than its two texts.
struct LeanLevel<'a> {
    entities: Vec<(&'a RawValue, EntityHead<'a>)>,
}

impl<'a> LeanLevel<'a> {
    fn read(text: &'a str) -> Result<Self, serde_json::Error> {
        if text.trim().is_empty() {
            return Ok(LeanLevel {
                entities: Vec::new(),
            });
        }
        let texts = EntityTexts::read(text)?;
        let entities = texts
            .entities
            .into_iter()
            .map(|raw| EntityHead::read(raw).map(|head| (raw, head)))
            .collect::<Result<_, _>>()?;
        Ok(LeanLevel { entities })
    }
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
        (None, None) => {}
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

/// An entity as people know it: `"tree_01" (Tree 1)`.
fn named(id: &str, e: &Value) -> String {
    match e.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => format!("\"{id}\" ({n})"),
        _ => format!("\"{id}\""),
    }
}

fn place(parent: Option<&str>) -> String {
    match parent {
        Some(p) => format!("under \"{p}\""),
        None => "at the root".to_owned(),
    }
}

fn parse(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The entities that changed place among their siblings: of those under the same
/// parent in both versions, the fewest whose moves explain the new order (the rest
/// form a longest run kept in the old order). So one insertion or one move is one
/// line, not a line for every later sibling.
fn reordered<'a>(old: &LeanLevel<'a>, new: &'a LeanLevel<'a>) -> FastSet<&'a str> {
    let old_at: FastMap<&str, (usize, Option<&str>)> = old
        .entities
        .iter()
        .enumerate()
        .map(|(k, (_, h))| (&*h.id, (k, h.parent.as_deref())))
        .collect();
    // Per parent, the old positions of the siblings that stayed under it, in the
    // new order.
    let mut groups: FastMap<Option<&str>, Vec<(usize, &str)>> = FastMap::default();
    for (_, head) in &new.entities {
        if let Some(&(k, was)) = old_at.get(&*head.id)
            && was == head.parent.as_deref()
        {
            groups.entry(was).or_default().push((k, &*head.id));
        }
    }
    let mut moved = FastSet::default();
    for siblings in groups.values() {
        let keep = crate::order::longest_increasing(siblings);
        for (k, (_, id)) in siblings.iter().enumerate() {
            if !keep[k] {
                moved.insert(*id);
            }
        }
    }
    moved
}

/// The entities added, removed, moved and changed, in the new version's order
/// (removed ones first).
fn diff_entities(old: &LeanLevel, new: &LeanLevel) -> Vec<String> {
    let old_by: FastMap<&str, &(&RawValue, EntityHead)> =
        old.entities.iter().map(|e| (&*e.1.id, e)).collect();
    let new_ids: FastSet<&str> = new.entities.iter().map(|(_, h)| &*h.id).collect();
    let moved = reordered(old, new);
    let mut lines = Vec::new();
    for (raw, head) in &old.entities {
        if !new_ids.contains(&*head.id) {
            lines.push(format!("- entity {}", named(&head.id, &parse(raw))));
        }
    }
    for (raw, head) in &new.entities {
        let id: &str = &head.id;
        let Some((before_raw, before_head)) = old_by.get(id) else {
            lines.push(format!(
                "+ entity {}, {}",
                named(id, &parse(raw)),
                place(head.parent.as_deref())
            ));
            continue;
        };
        let reorder = moved.contains(id);
        if raw.get() == before_raw.get() && !reorder {
            continue;
        }
        let (before, e) = (parse(before_raw), parse(raw));
        if same(&before, &e) && !reorder {
            continue;
        }
        let mut inner = Vec::new();
        let (was, is) = (before_head.parent.as_deref(), head.parent.as_deref());
        if was != is {
            inner.push(format!("    moved: {} -> {}", place(was), place(is)));
        } else if reorder {
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
        let (a, b) = (rest(&before), rest(&e));
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
            lines.push(format!("~ entity {}", named(id, &e)));
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

    fn level(ids: &[&str]) -> Vec<u8> {
        let entities: Vec<String> = ids
            .iter()
            .map(|id| format!(r#"{{"id": "{id}"}}"#))
            .collect();
        format!(r#"{{"entities": [{}]}}"#, entities.join(", ")).into_bytes()
    }

    #[test]
    fn one_insertion_or_one_move_is_one_line() {
        let old = level(&["a", "b", "c", "d", "e", "f"]);
        let inserted = level(&["a", "x", "b", "c", "d", "e", "f"]);
        assert_eq!(
            diff_file("l.level", &old, &inserted).unwrap(),
            ["+ entity \"x\", at the root"]
        );
        let moved = level(&["a", "e", "b", "c", "d", "f"]);
        assert_eq!(
            diff_file("l.level", &old, &moved).unwrap(),
            ["~ entity \"e\"", "    reordered among its siblings"]
        );
        // Positive control: a real swap of two runs still shows.
        let swapped = level(&["d", "e", "f", "a", "b", "c"]);
        assert_eq!(diff_file("l.level", &old, &swapped).unwrap().len(), 6);
    }
}
