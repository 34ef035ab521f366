//! The words of the open level's document that every edit of it uses: entity ids,
//! the paths of prefab parts (`instance/part`), and the overridden fields an
//! instance keeps for its parts. Below the history and the edits (`model/`), which
//! all use them.

use std::collections::HashSet;

use kiln_core::LevelDocument;
use serde_json::{Map, Value};

/// A new authoring id from `base`: `base_` and six random hex digits (`rock_3fa91c`;
/// a number or such a suffix at the end of `base` is dropped first). Random, so
/// that two designers adding entities on two branches do not both make `rock_1`,
/// which would be two entities of one id when the branches merge (as Unity's file
/// ids and Godot's scene uids are random for the same reason).
pub fn unique_id(base: &str, taken: &HashSet<String>) -> String {
    let base = id_stem(base);
    let base = if base.is_empty() { "entity" } else { base };
    // Room for the suffix within an id's 64 characters.
    let base = &base[..base.len().min(48)];
    let random =
        std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), (base, taken.len()));
    (0u64..)
        .map(|k| {
            format!(
                "{base}_{:06x}",
                (random.wrapping_add(k.wrapping_mul(0x9e37_79b9))) & 0xff_ffff
            )
        })
        .find(|id| !taken.contains(id))
        .unwrap_or_else(|| base.to_owned())
}

/// `base` without a number, or an id's random suffix, at its end: `rock_2` and
/// `rock_3fa91c` are both `rock`.
fn id_stem(base: &str) -> &str {
    match base.rsplit_once('_') {
        Some((stem, tail))
            if !stem.is_empty()
                && (tail.chars().all(|c| c.is_ascii_digit())
                    || (tail.len() == 6 && tail.chars().all(|c| c.is_ascii_hexdigit()))) =>
        {
            stem
        }
        _ => base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_'),
    }
}

/// `tree_01/trunk` -> (`tree_01`, `trunk`): the instance in the open file and the
/// override key of the part below it.
pub fn split_part(id: &str) -> Option<(&str, &str)> {
    id.split_once('/')
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
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn new_ids_are_random_so_that_two_branches_do_not_make_the_same_one() {
        let taken: HashSet<String> = HashSet::new();
        let a = unique_id("rock_2", &taken);
        let b = unique_id("rock_2", &taken);
        assert!(
            a.starts_with("rock_") && a.len() == "rock_".len() + 6,
            "{a}"
        );
        assert_ne!(a, b, "two processes (branches) make two ids");
        assert!(
            unique_id(&a, &taken).starts_with("rock_") && !unique_id(&a, &taken).starts_with(&a)
        );
        assert!(kiln_core::level::valid_authoring_id(&unique_id(
            &"x".repeat(64),
            &taken
        )));
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
