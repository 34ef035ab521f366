//! Levels and units merged by authoring id.
//!
//! Each side is read lean: the entity list as slices of the file's text, and of
//! each entity only its `id` and `parent` (an entity is parsed whole only where both
//! sides changed it). An entity the other side did not change keeps its text byte
//! for byte; one merged field by field is written canonically. So a merge of a
//! 100,000-entity level with a few thousand edits holds little more than the three
//! texts.
//!
//! - Added, removed or edited on one side: taken.
//! - Edited on both: merged field by field ([`crate::json`]), conflicts where both
//!   changed one value differently.
//! - Edited on one side and deleted on the other, added on both with one id but not
//!   alike, or deleted on one side while the other put a child under it: the entity
//!   is in conflict as a whole.
//! - Parents the two sides set into a cycle: each parent in it that a side changed
//!   is in conflict.
//! - Order: ours', with theirs' additions and the entities theirs moved (and ours
//!   did not) after the entity they follow in theirs; an entity both moved to
//!   different places is in conflict as a whole.

use std::borrow::Cow;

use kiln_core::conflict::Conflict;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::json::{Place, merge, same};

type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

// A level or unit is read with core's lean reader: the entity texts, and each
// one's id and parent.
use kiln_core::raw_level::{EntityHead as Head, EntityTexts};

/// One side: its entities in order, and where each id is.
struct SideDoc<'a> {
    entities: Vec<(&'a RawValue, Head<'a>)>,
    by_id: FastMap<&'a str, usize>,
}

impl<'a> SideDoc<'a> {
    /// Reads `text` (empty: a side where the file did not exist).
    fn read(text: &'a str) -> Result<Self, String> {
        let mut side = SideDoc {
            entities: Vec::new(),
            by_id: FastMap::default(),
        };
        if text.trim().is_empty() {
            return Ok(side);
        }
        let doc = EntityTexts::read(text)
            .map_err(|e| format!("line {}, column {}: {e}", e.line(), e.column()))?;
        side.entities.reserve(doc.entities.len());
        for raw in doc.entities {
            let head = Head::read(raw).map_err(|e| format!("an entity without an id: {e}"))?;
            side.entities.push((raw, head));
        }
        for (k, (_, head)) in side.entities.iter().enumerate() {
            // Borrowed ids only: an id with escapes is not a valid authoring id.
            let Cow::Borrowed(id) = head.id else {
                return Err(format!("the id {:?} is not a valid authoring id", head.id));
            };
            if side.by_id.insert(id, k).is_some() {
                return Err(format!("the id \"{id}\" comes twice"));
            }
        }
        Ok(side)
    }

    fn get(&self, id: &str) -> Option<(&'a RawValue, &Head<'a>)> {
        self.by_id.get(id).map(|&k| {
            let (raw, head) = &self.entities[k];
            (*raw, head)
        })
    }
}

/// A merged entity: a side's text kept as it is, or a value written anew.
enum Entity<'a> {
    Text(&'a RawValue),
    Value(Value),
}

struct Merged<'a> {
    id: String,
    /// Its parent as merged (`None` at the root, or where the parent is in conflict).
    parent: Option<String>,
    entity: Entity<'a>,
}

fn parse(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// Merges the texts of a level or unit. `Err` when a side is not one (git's line
/// merge takes it then); the merged text holds its conflicts as markers.
pub fn merge_level(
    base: &str,
    ours: &str,
    theirs: &str,
) -> Result<(String, Vec<Conflict>), String> {
    let read = |text, side| SideDoc::read(text).map_err(|e| format!("{side}: {e}"));
    let (b, o, t) = (
        read(base, "base")?,
        read(ours, "ours")?,
        read(theirs, "theirs")?,
    );
    let mut conflicts = Vec::new();
    // Entity order: each side's moves (relative to the base) are carried into the
    // merge. Ours' order is the frame; an entity theirs moved and ours did not goes
    // where theirs put it, as theirs' additions do; one both moved to different
    // places is in conflict (it stays where ours put it).
    let base_index = |id: &str| b.by_id.get(id).copied();
    let moved_ours: FastSet<&str> =
        crate::order::moved(base_index, o.entities.iter().map(|(_, h)| &*h.id))
            .into_iter()
            .collect();
    let moved_theirs: Vec<&str> =
        crate::order::moved(base_index, t.entities.iter().map(|(_, h)| &*h.id));
    let moved_both: FastSet<&str> = moved_theirs
        .iter()
        .copied()
        .filter(|id| moved_ours.contains(id))
        .collect();
    let follow_theirs: FastSet<&str> = moved_theirs
        .iter()
        .copied()
        .filter(|id| !moved_ours.contains(id))
        .collect();
    let (after_in_ours, after_in_theirs) = (
        predecessors(&o, &b, &t, &moved_both),
        predecessors(&t, &b, &o, &moved_both),
    );
    let mut from_ours: Vec<Merged> = Vec::with_capacity(o.entities.len());
    let mut to_place: FastMap<&str, Merged> = FastMap::default();
    // Ours' entities, in ours' order.
    for (raw, head) in &o.entities {
        let id: &str = &head.id;
        let m = if moved_both.contains(id) && after_in_ours.get(id) != after_in_theirs.get(id) {
            let shown = |p: Option<&Option<&str>>| match p.copied().flatten() {
                Some(p) => format!("after \"{p}\""),
                None => "first".to_owned(),
            };
            let why = format!(
                "both sides moved it in the entity list, to different places (ours {}, theirs {}); it stands where ours put it",
                shown(after_in_ours.get(id)),
                shown(after_in_theirs.get(id))
            );
            Some(whole_conflict(
                id,
                b.get(id),
                Some((*raw, head)),
                t.get(id),
                &why,
                &mut conflicts,
            ))
        } else {
            merge_entity(id, b.get(id), Some((*raw, head)), t.get(id), &mut conflicts)
        };
        let Some(m) = m else { continue };
        if follow_theirs.contains(id) {
            to_place.insert(id, m);
        } else {
            from_ours.push(m);
        }
    }
    // Theirs' additions, the entities theirs moved, and what ours deleted but
    // theirs changed, each to go after the entity it follows in theirs (itself
    // perhaps one of these).
    let mut present: FastSet<String> = from_ours.iter().map(|m| m.id.clone()).collect();
    let mut first: Vec<Merged> = Vec::new();
    let mut after: FastMap<String, Vec<Merged>> = FastMap::default();
    // The last entity of theirs seen so far that is in the merge: present only
    // grows, so it is the anchor of the next one placed.
    let mut anchor: Option<&str> = None;
    for (raw, head) in &t.entities {
        let id: &str = &head.id;
        let m = if let Some(m) = to_place.remove(id) {
            Some(m)
        } else if o.by_id.contains_key(id) {
            None
        } else {
            merge_entity(id, b.get(id), None, Some((*raw, head)), &mut conflicts)
        };
        if let Some(m) = m {
            present.insert(m.id.clone());
            match anchor {
                Some(a) => after.entry(a.to_owned()).or_default().push(m),
                None => first.push(m),
            }
        }
        if present.contains(id) {
            anchor = Some(id);
        }
    }
    let mut merged: Vec<Merged> = Vec::with_capacity(present.len());
    for m in first.into_iter().chain(from_ours) {
        emit_with_followers(m, &mut merged, &mut after);
    }
    check_structure(&mut merged, &b, &o, &t, &mut conflicts);
    Ok((write(&merged), conflicts))
}

/// The entity each of `ids` follows in `side`, among the entities all three
/// versions have (`None`: first of them).
fn predecessors<'a>(
    side: &SideDoc<'a>,
    one: &SideDoc,
    other: &SideDoc,
    ids: &FastSet<&str>,
) -> FastMap<&'a str, Option<&'a str>> {
    let mut out = FastMap::default();
    if ids.is_empty() {
        return out;
    }
    let mut last: Option<&'a str> = None;
    for (_, head) in &side.entities {
        let Cow::Borrowed(id) = head.id else { continue };
        if ids.contains(id) {
            out.insert(id, last);
        } else if one.by_id.contains_key(id) && other.by_id.contains_key(id) {
            last = Some(id);
        }
    }
    out
}

/// Pushes `m`, then what theirs added after it (and after those), depth first.
fn emit_with_followers<'a>(
    m: Merged<'a>,
    merged: &mut Vec<Merged<'a>>,
    after: &mut FastMap<String, Vec<Merged<'a>>>,
) {
    let mut stack = vec![m];
    while let Some(m) = stack.pop() {
        if let Some(more) = after.remove(&m.id) {
            stack.extend(more.into_iter().rev());
        }
        merged.push(m);
    }
}

/// One side's entity: its text and what was read of it.
type SideEntity<'s, 'a> = Option<(&'a RawValue, &'s Head<'a>)>;

/// Merges one entity from its three sides; `None` where it is gone.
fn merge_entity<'a>(
    id: &str,
    base: SideEntity<'_, 'a>,
    ours: SideEntity<'_, 'a>,
    theirs: SideEntity<'_, 'a>,
    conflicts: &mut Vec<Conflict>,
) -> Option<Merged<'a>> {
    let text = |raw: &'a RawValue, head: &Head| Merged {
        id: id.to_owned(),
        parent: head.parent.as_deref().map(str::to_owned),
        entity: Entity::Text(raw),
    };
    let whole = |why: &str, conflicts: &mut Vec<Conflict>| {
        whole_conflict(id, base, ours, theirs, why, conflicts)
    };
    let unchanged = |a: &RawValue, b: &RawValue| a.get() == b.get() || same(&parse(a), &parse(b));
    match (base, ours, theirs) {
        (_, Some((o, oh)), Some((t, _))) if o.get() == t.get() => Some(text(o, oh)),
        (Some((b, _)), Some((o, oh)), Some((t, _))) if b.get() == t.get() => Some(text(o, oh)),
        (Some((b, _)), Some((o, _)), Some((t, th))) if b.get() == o.get() => Some(text(t, th)),
        (Some((b, _)), Some((o, _)), Some((t, _))) => {
            let (b, o, t) = (parse(b), parse(o), parse(t));
            let mut place = Place {
                entity: Some(id.to_owned()),
                path: Vec::new(),
            };
            let value = merge(&mut place, Some(&b), Some(&o), Some(&t), conflicts)?;
            let parent = match value.get("parent") {
                Some(Value::String(p)) => Some(p.clone()),
                _ => None,
            };
            Some(Merged {
                id: id.to_owned(),
                parent,
                entity: Entity::Value(value),
            })
        }
        (None, Some((o, oh)), Some((t, _))) => {
            if unchanged(o, t) {
                Some(text(o, oh))
            } else {
                Some(whole(
                    "both sides added an entity with this id, not alike",
                    conflicts,
                ))
            }
        }
        (Some((b, _)), Some((o, _)), None) => {
            if unchanged(b, o) {
                None
            } else {
                Some(whole("ours changed it; theirs deleted it", conflicts))
            }
        }
        (Some((b, _)), None, Some((t, _))) => {
            if unchanged(b, t) {
                None
            } else {
                Some(whole("ours deleted it; theirs changed it", conflicts))
            }
        }
        (None, Some((o, oh)), None) => Some(text(o, oh)),
        (None, None, Some((t, th))) => Some(text(t, th)),
        (_, None, None) => None,
    }
}

/// The entity `id` in conflict as a whole, for `why`.
fn whole_conflict<'a>(
    id: &str,
    base: SideEntity<'_, 'a>,
    ours: SideEntity<'_, 'a>,
    theirs: SideEntity<'_, 'a>,
    why: &str,
    conflicts: &mut Vec<Conflict>,
) -> Merged<'a> {
    let conflict = Conflict {
        entity: Some(id.to_owned()),
        path: Vec::new(),
        why: Some(why.to_owned()),
        base: base.map(|(r, _)| parse(r)),
        ours: ours.map(|(r, _)| parse(r)),
        theirs: theirs.map(|(r, _)| parse(r)),
    };
    let marker = conflict.marker();
    conflicts.push(conflict);
    // Its place in the tree: where ours has it, or theirs.
    let parent = ours
        .map(|(_, h)| h)
        .or(theirs.map(|(_, h)| h))
        .and_then(|h| h.parent.as_deref().map(str::to_owned));
    Merged {
        id: id.to_owned(),
        parent,
        entity: Entity::Value(marker),
    }
}

/// Conflicts of the merged tree as a whole: an entity under a parent that one side
/// deleted (the parent is in conflict: keep it, or delete it with what is under
/// it), and parents set into a cycle (each parent a side changed is in conflict).
fn check_structure(
    merged: &mut Vec<Merged>,
    base: &SideDoc,
    ours: &SideDoc,
    theirs: &SideDoc,
    conflicts: &mut Vec<Conflict>,
) {
    let present: std::collections::HashSet<String> = merged.iter().map(|m| m.id.clone()).collect();
    // Parents that are gone while something is under them.
    let mut orphaned: Vec<(String, String)> = merged
        .iter()
        .filter_map(|m| {
            let p = m.parent.as_ref()?;
            (!present.contains(p)).then(|| (p.clone(), m.id.clone()))
        })
        .collect();
    orphaned.sort();
    orphaned.dedup_by(|a, b| a.0 == b.0);
    // Each parent put back goes where the side that kept it has it: after the
    // entity it follows there. Placed in one pass at the end (one insert per parent
    // was quadratic when a side deleted many parents the other added under).
    let mut restored: FastMap<String, Merged> = FastMap::default();
    for (parent, child) in orphaned {
        let side = |s: &SideDoc| s.get(&parent).map(|(r, _)| parse(r));
        let (b, o, t) = (side(base), side(ours), side(theirs));
        if b.is_none() && o.is_none() && t.is_none() {
            continue; // Never there: the file was broken before the merge.
        }
        let (deleted_on, kept_on) = if o.is_none() {
            ("ours", "theirs")
        } else {
            ("theirs", "ours")
        };
        let conflict = Conflict {
            entity: Some(parent.clone()),
            path: Vec::new(),
            why: Some(format!(
                "{deleted_on} deleted it; {kept_on} put \"{child}\" under it (keeping the deletion deletes what is under it)"
            )),
            base: b,
            ours: o,
            theirs: t,
        };
        let grand = conflict
            .ours
            .as_ref()
            .or(conflict.theirs.as_ref())
            .and_then(|v| v.get("parent"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let marker = conflict.marker();
        conflicts.push(conflict);
        restored.insert(
            parent.clone(),
            Merged {
                id: parent,
                parent: grand,
                entity: Entity::Value(marker),
            },
        );
    }
    if !restored.is_empty() {
        let mut first = Vec::new();
        let mut after: FastMap<String, Vec<Merged>> = FastMap::default();
        for side in [ours, theirs] {
            let mut last: Option<&str> = None;
            for (_, head) in &side.entities {
                let id: &str = &head.id;
                if let Some(m) = restored.remove(id) {
                    match last {
                        Some(a) => after.entry(a.to_owned()).or_default().push(m),
                        None => first.push(m),
                    }
                } else if present.contains(id) {
                    last = Some(id);
                }
            }
        }
        let old = std::mem::take(merged);
        merged.reserve(old.len() + first.len() + after.len());
        merged.extend(first);
        for m in old {
            let followers = after.remove(&m.id);
            merged.push(m);
            merged.extend(followers.into_iter().flatten());
        }
        // Anchored nowhere merged (cannot happen: kept for safety).
        merged.extend(after.into_values().flatten());
        merged.extend(restored.into_values());
    }
    // Cycles: follow each entity's parents; one that comes back to itself is in a
    // cycle that no side had.
    let index: FastMap<String, usize> = merged
        .iter()
        .enumerate()
        .map(|(k, m)| (m.id.clone(), k))
        .collect();
    let parent_at = |k: usize| {
        merged[k]
            .parent
            .as_ref()
            .and_then(|p| index.get(p))
            .copied()
    };
    let mut in_cycle = vec![false; merged.len()];
    // Each entity walked once: 0 not yet, 1 on the walk now, 2 done.
    let mut state = vec![0u8; merged.len()];
    for start in 0..merged.len() {
        let mut walk = Vec::new();
        let mut at = Some(start);
        while let Some(k) = at {
            match state[k] {
                2 => break,
                1 => {
                    let from = walk.iter().position(|&w| w == k).unwrap_or(walk.len());
                    for &w in &walk[from..] {
                        in_cycle[w] = true;
                    }
                    break;
                }
                _ => {
                    state[k] = 1;
                    walk.push(k);
                    at = parent_at(k);
                }
            }
        }
        for w in walk {
            state[w] = 2;
        }
    }
    for (k, cycled) in in_cycle.into_iter().enumerate() {
        if !cycled {
            continue;
        }
        let id = merged[k].id.clone();
        let parent_of = |s: &SideDoc| {
            s.get(&id)
                .map(|(_, h)| h.parent.as_deref().map(str::to_owned))
        };
        // Each parent in the cycle that a side changed is in conflict (both, when
        // each side moved one entity under the other: the same whichever way the
        // merge runs).
        if parent_of(base).flatten() == merged[k].parent {
            continue;
        }
        let value = match &merged[k].entity {
            Entity::Text(raw) => parse(raw),
            Entity::Value(v) => v.clone(),
        };
        let Value::Object(mut map) = value else {
            continue;
        };
        let to_value = |p: Option<Option<String>>| p.flatten().map(Value::String);
        let conflict = Conflict {
            entity: Some(id.clone()),
            path: vec!["parent".into()],
            why: Some("the two sides' parents put it in a cycle".into()),
            base: to_value(parent_of(base)),
            ours: to_value(parent_of(ours)),
            theirs: to_value(parent_of(theirs)),
        };
        map.insert("parent".into(), conflict.marker());
        conflicts.push(conflict);
        merged[k].parent = None;
        merged[k].entity = Entity::Value(Value::Object(map));
    }
}

/// The entity's keys in the order Kiln writes them; components and overrides by
/// name, fields in the order merged (the writer's schema order).
fn canonical_entity(value: Value) -> Value {
    let Value::Object(mut map) = value else {
        return value;
    };
    let mut out = Map::new();
    for key in ["id", "name", "parent", "prefab", "components", "overrides"] {
        if let Some(mut v) = map.shift_remove(key) {
            if key == "components" || key == "overrides" {
                v = sorted(v);
            }
            if key == "overrides"
                && let Value::Object(parts) = &mut v
            {
                for patch in parts.values_mut() {
                    *patch = sorted(std::mem::take(patch));
                }
            }
            out.insert(key.to_owned(), v);
        }
    }
    out.extend(map);
    Value::Object(out)
}

/// An object with its keys sorted (a conflict marker is left as it is).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) if !map.contains_key(kiln_core::conflict::CONFLICT_KEY) => {
            let mut items: Vec<(String, Value)> = map.into_iter().collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(items.into_iter().collect())
        }
        other => other,
    }
}

/// The merged document's text: canonical around entities kept byte for byte.
fn write(merged: &[Merged]) -> String {
    if merged.is_empty() {
        return "{\n  \"entities\": []\n}\n".to_owned();
    }
    let mut out = String::from("{\n  \"entities\": [\n");
    for (k, m) in merged.iter().enumerate() {
        out.push_str("    ");
        match &m.entity {
            Entity::Text(raw) => out.push_str(raw.get()),
            Entity::Value(v) => kiln_core::json_format::write_canonical_at(
                &mut out,
                &canonical_entity(v.clone()),
                2,
            ),
        }
        if k + 1 < merged.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str("  ]\n}\n");
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn level(entities: Value) -> String {
        kiln_core::json_format::to_canonical_string(&json!({ "entities": entities }))
    }

    fn ids(text: &str) -> Vec<String> {
        let v: Value = serde_json::from_str(text).unwrap();
        v["entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn additions_on_both_sides_merge_in_order() {
        let base = level(json!([{"id": "a"}, {"id": "b"}]));
        let ours = level(json!([{"id": "a"}, {"id": "b"}, {"id": "x"}]));
        let theirs = level(json!([{"id": "a"}, {"id": "y"}, {"id": "b"}, {"id": "z"}]));
        let (text, conflicts) = merge_level(&base, &ours, &theirs).unwrap();
        assert!(conflicts.is_empty());
        assert_eq!(ids(&text), ["a", "y", "b", "z", "x"]);
        // Canonical: as the editor writes it.
        let doc = kiln_core::LevelDocument::parse(&text, "l.level").unwrap();
        assert_eq!(
            doc.to_canonical_json(&kiln_core::Registry::with_builtins()),
            text
        );
    }

    #[test]
    fn one_entity_edited_on_both_sides_merges_field_by_field() {
        let base =
            level(json!([{"id": "a", "components": {"transform": {"position": [0, 0, 0]}}}]));
        let ours = level(
            json!([{"id": "a", "name": "A", "components": {"transform": {"position": [0, 0, 0]}}}]),
        );
        let theirs = level(
            json!([{"id": "a", "components": {"mesh": {"mesh": "meshes/cube"}, "transform": {"position": [0, 1, 0]}}}]),
        );
        let (text, conflicts) = merge_level(&base, &ours, &theirs).unwrap();
        assert!(conflicts.is_empty(), "{conflicts:?}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["entities"][0],
            json!({"id": "a", "name": "A", "components": {"mesh": {"mesh": "meshes/cube"}, "transform": {"position": [0, 1, 0]}}})
        );
    }

    #[test]
    fn a_child_put_under_a_parent_the_other_side_deleted_is_a_conflict() {
        let base = level(json!([{"id": "g", "name": "Group"}, {"id": "c", "parent": "g"}]));
        let ours = level(json!([]));
        let theirs = level(
            json!([{"id": "g", "name": "Group"}, {"id": "c", "parent": "g"}, {"id": "n", "parent": "g"}]),
        );
        let (text, conflicts) = merge_level(&base, &ours, &theirs).unwrap();
        assert_eq!(conflicts.len(), 1, "{conflicts:?}");
        assert_eq!(conflicts[0].entity.as_deref(), Some("g"));
        assert!(
            conflicts[0]
                .why
                .as_ref()
                .unwrap()
                .contains("put \"n\" under it")
        );
        assert!(text.contains("kiln:conflict"));
        assert!(kiln_core::LevelDocument::parse(&text, "l.level").is_err());
    }

    fn plain(ids: &[&str]) -> String {
        level(Value::Array(
            ids.iter().map(|id| json!({"id": id})).collect(),
        ))
    }

    #[test]
    fn a_reorder_on_one_side_survives_a_delete_or_insert_on_the_other() {
        let base = plain(&["a", "b", "c", "d", "e"]);
        let deleted = plain(&["a", "b", "d", "e"]);
        let moved = plain(&["a", "e", "b", "c", "d"]);
        for (ours, theirs) in [(&deleted, &moved), (&moved, &deleted)] {
            let (text, conflicts) = merge_level(&base, ours, theirs).unwrap();
            assert!(conflicts.is_empty(), "{conflicts:?}");
            assert_eq!(ids(&text), ["a", "e", "b", "d"]);
        }
        let inserted = plain(&["a", "b", "x", "c", "d", "e"]);
        for (ours, theirs) in [(&inserted, &moved), (&moved, &inserted)] {
            let (text, _) = merge_level(&base, ours, theirs).unwrap();
            assert_eq!(ids(&text), ["a", "e", "b", "x", "c", "d"]);
        }
    }

    #[test]
    fn one_entity_moved_to_two_places_is_a_conflict_and_to_one_place_is_not() {
        let base = plain(&["a", "b", "c", "d", "e"]);
        let ours = plain(&["e", "a", "b", "c", "d"]);
        let theirs = plain(&["a", "b", "e", "c", "d"]);
        let (text, conflicts) = merge_level(&base, &ours, &theirs).unwrap();
        assert_eq!(conflicts.len(), 1, "{conflicts:?}");
        assert_eq!(conflicts[0].entity.as_deref(), Some("e"));
        assert!(
            conflicts[0]
                .why
                .as_ref()
                .unwrap()
                .contains("ours first, theirs after \"b\"")
        );
        assert_eq!(ids(&text), ["e", "a", "b", "c", "d"]);
        let (text, conflicts) = merge_level(&base, &ours, &ours).unwrap();
        assert!(conflicts.is_empty());
        assert_eq!(ids(&text), ["e", "a", "b", "c", "d"]);
    }
}
