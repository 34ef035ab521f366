//! Property tests of the level merge on random levels and random pairs of edits:
//! every edit a side made that is not in conflict is in the result; the merge is
//! symmetric up to entity order (ours and theirs swap in the conflicts); merging a
//! side with itself or with the base changes nothing; and what comes out reads as a
//! level once its conflicts are taken out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use kiln_core::conflict::{Conflict, Side, take_level_conflicts};
use kiln_merge::level::merge_level;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A random level: entities `e0..eN`, each under an earlier one or at the root.
fn level_strategy() -> impl Strategy<Value = Vec<Value>> {
    (1usize..12).prop_flat_map(|n| {
        proptest::collection::vec((any::<Option<u8>>(), 0i32..5, proptest::bool::ANY), n).prop_map(
            |items| {
                items
                    .into_iter()
                    .enumerate()
                    .map(|(k, (parent, x, mesh))| {
                        let mut e = json!({
                            "id": format!("e{k}"),
                            "name": format!("E{k}"),
                            "components": {"transform": {"position": [x, 0, 0]}}
                        });
                        if let Some(p) = parent
                            && k > 0
                        {
                            e["parent"] = json!(format!("e{}", p as usize % k));
                        }
                        if mesh {
                            e["components"]["mesh"] = json!({"mesh": "meshes/cube"});
                        }
                        e
                    })
                    .collect()
            },
        )
    })
}

/// An edit one side makes.
#[derive(Debug, Clone)]
enum Edit {
    Add {
        after: usize,
        parent: Option<usize>,
        same_id: bool,
    },
    Delete(usize),
    Rename(usize, u8),
    Move(usize, i32),
    Reparent(usize, Option<usize>),
    AddComponent(usize),
    /// Moves an entity to another place in the list.
    Reorder(usize, usize),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (
            any::<usize>(),
            any::<Option<usize>>(),
            proptest::bool::weighted(0.2)
        )
            .prop_map(|(after, parent, same_id)| Edit::Add {
                after,
                parent,
                same_id
            }),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), 0u8..3).prop_map(|(e, n)| Edit::Rename(e, n)),
        (any::<usize>(), -3i32..3).prop_map(|(e, x)| Edit::Move(e, x)),
        (any::<usize>(), any::<Option<usize>>()).prop_map(|(e, p)| Edit::Reparent(e, p)),
        any::<usize>().prop_map(Edit::AddComponent),
        (any::<usize>(), any::<usize>()).prop_map(|(e, to)| Edit::Reorder(e, to)),
    ]
}

/// Applies `edits` as `side` makes them (ids of added entities name the side,
/// unless they are meant to clash).
fn apply(base: &[Value], edits: &[Edit], side: &str) -> Vec<Value> {
    let mut doc = base.to_vec();
    for (k, edit) in edits.iter().enumerate() {
        let n = doc.len();
        let id_at = |doc: &[Value], i: usize| doc[i]["id"].as_str().unwrap().to_owned();
        match edit {
            Edit::Add {
                after,
                parent,
                same_id,
            } => {
                let id = if *same_id {
                    format!("new{k}")
                } else {
                    format!("{side}{k}")
                };
                if doc.iter().any(|e| e["id"] == id.as_str()) {
                    continue;
                }
                let mut e = json!({"id": id, "name": format!("{side} {k}")});
                if let (Some(p), true) = (parent, n > 0) {
                    e["parent"] = json!(id_at(&doc, p % n));
                }
                let at = if n == 0 { 0 } else { after % (n + 1) };
                doc.insert(at, e);
            }
            Edit::Delete(i) if n > 0 => {
                let id = id_at(&doc, i % n);
                // A leaf only, as the editor deletes with children.
                if !doc.iter().any(|e| e["parent"] == id.as_str()) {
                    doc.remove(i % n);
                }
            }
            Edit::Rename(i, name) if n > 0 => {
                doc[i % n]["name"] = json!(format!("{side} name {name}"));
            }
            Edit::Move(i, x) if n > 0 => {
                doc[i % n]["components"]["transform"]["position"] = json!([x, 1, 0]);
            }
            Edit::Reparent(i, p) if n > 0 => {
                let i = i % n;
                match p {
                    // Under an entity that is not below it (no cycle on one side).
                    Some(p) => {
                        let target = id_at(&doc, p % n);
                        let me = id_at(&doc, i);
                        let mut at = Some(target.clone());
                        let mut below_me = false;
                        for _ in 0..n + 1 {
                            let Some(a) = at else { break };
                            if a == me {
                                below_me = true;
                                break;
                            }
                            at = doc
                                .iter()
                                .find(|e| e["id"] == a.as_str())
                                .and_then(|e| e["parent"].as_str().map(str::to_owned));
                        }
                        if !below_me {
                            doc[i]["parent"] = json!(target);
                        }
                    }
                    None => {
                        if let Some(m) = doc[i].as_object_mut() {
                            m.remove("parent");
                        }
                    }
                }
            }
            Edit::AddComponent(i) if n > 0 => {
                doc[i % n]["components"]["rotator"] = json!({"speed": 10 + k});
            }
            Edit::Reorder(i, to) if n > 0 => {
                let e = doc.remove(i % n);
                doc.insert(to % n, e);
            }
            _ => {}
        }
    }
    doc
}

fn text(entities: &[Value]) -> String {
    kiln_core::json_format::to_canonical_string(&json!({ "entities": entities }))
}

/// Every leaf of every entity: (id, path) -> value.
fn leaves(entities: &[Value]) -> BTreeMap<(String, String), Value> {
    fn walk(v: &Value, path: String, id: &str, out: &mut BTreeMap<(String, String), Value>) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, v) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}/{k}")
                    };
                    walk(v, p, id, out);
                }
            }
            other => {
                out.insert((id.to_owned(), path), other.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    for e in entities {
        let id = e["id"].as_str().unwrap_or("").to_owned();
        walk(e, String::new(), &id, &mut out);
    }
    out
}

/// The ids in list order.
fn order(entities: &[Value]) -> Vec<String> {
    entities
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

fn ids(entities: &[Value]) -> BTreeSet<String> {
    entities
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The merged entities with `choice` taken in each conflict, and the conflicts.
fn resolved(text: &str, choice: Side) -> (Vec<Value>, Vec<Conflict>) {
    let mut v: Value = serde_json::from_str(text).unwrap();
    let conflicts = take_level_conflicts(&mut v, choice);
    (v["entities"].as_array().unwrap().clone(), conflicts)
}

/// Whether `(id, path)` is inside a conflict.
fn in_conflict(conflicts: &[Conflict], id: &str, path: &str) -> bool {
    conflicts.iter().any(|c| {
        c.entity.as_deref() == Some(id) && {
            let p = c.path.join("/");
            p.is_empty() || path == p || path.starts_with(&format!("{p}/"))
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn each_sides_edits_that_are_not_in_conflict_are_all_merged(
        base in level_strategy(),
        ours_edits in proptest::collection::vec(edit_strategy(), 0..6),
        theirs_edits in proptest::collection::vec(edit_strategy(), 0..6),
    ) {
        let ours = apply(&base, &ours_edits, "o");
        let theirs = apply(&base, &theirs_edits, "t");
        let (merged_text, conflicts) = merge_level(&text(&base), &text(&ours), &text(&theirs)).unwrap();
        let (merged, taken) = resolved(&merged_text, Side::Ours);
        prop_assert_eq!(taken.len(), conflicts.len());
        // It reads as a level once resolved.
        let doc = kiln_core::LevelDocument::parse(&text(&merged), "l.level");
        prop_assert!(doc.is_ok(), "{:?}", doc);

        // Every conflict is one: both sides changed the value, and differently; it
        // holds what each side had there.
        for c in conflicts.iter().filter(|c| c.why.is_none()) {
            let at = |entities: &[Value]| {
                let e = entities.iter().find(|e| Some(e["id"].as_str().unwrap()) == c.entity.as_deref())?;
                c.path.iter().try_fold(e, |v, k| v.get(k)).cloned()
            };
            prop_assert_eq!(&c.base, &at(&base));
            prop_assert_eq!(&c.ours, &at(&ours));
            prop_assert_eq!(&c.theirs, &at(&theirs));
            prop_assert!(c.ours != c.base && c.theirs != c.base && c.ours != c.theirs, "{:?}", c);
        }
        let (b, o, t, m) = (leaves(&base), leaves(&ours), leaves(&theirs), leaves(&merged));
        let (bi, oi, ti, mi) = (ids(&base), ids(&ours), ids(&theirs), ids(&merged));
        for (side, mine, other, my_ids, other_ids) in [("ours", &o, &t, &oi, &ti), ("theirs", &t, &o, &ti, &oi)] {
            // Changed or added leaves.
            for ((id, path), v) in mine {
                if b.get(&(id.clone(), path.clone())) == Some(v) {
                    continue;
                }
                let other_v = other.get(&(id.clone(), path.clone()));
                let other_changed = other_v != b.get(&(id.clone(), path.clone()));
                if (other_changed && other_v != Some(v)) || in_conflict(&conflicts, id, path) {
                    continue;
                }
                // The entity deleted by the other side with no conflict: only if
                // this side left it as it was, which this leaf says it did not.
                prop_assert_eq!(m.get(&(id.clone(), path.clone())), Some(v), "{} {}/{}", side, id, path);
            }
            // Deleted entities.
            for id in bi.iter().filter(|id| !my_ids.contains(*id)) {
                if in_conflict(&conflicts, id, "") || !other_ids.contains(id) {
                    prop_assert!(!mi.contains(id) || in_conflict(&conflicts, id, ""), "{} deleted {}", side, id);
                    continue;
                }
                let untouched = leaves(&base).iter().filter(|((e, _), _)| e == id).all(|(k, v)| other.get(k) == Some(v));
                if untouched {
                    prop_assert!(!mi.contains(id), "{} deleted {}", side, id);
                }
            }
        }
    }

    #[test]
    fn the_merge_is_symmetric_up_to_entity_order(
        base in level_strategy(),
        ours_edits in proptest::collection::vec(edit_strategy(), 0..6),
        theirs_edits in proptest::collection::vec(edit_strategy(), 0..6),
    ) {
        let ours = apply(&base, &ours_edits, "o");
        let theirs = apply(&base, &theirs_edits, "t");
        let (one, c1) = merge_level(&text(&base), &text(&ours), &text(&theirs)).unwrap();
        let (two, c2) = merge_level(&text(&base), &text(&theirs), &text(&ours)).unwrap();
        let places = |c: &[Conflict]| c.iter().map(|c| (c.entity.clone(), c.path.clone())).collect::<BTreeSet<_>>();
        prop_assert_eq!(places(&c1), places(&c2));
        for (a, b) in [(Side::Ours, Side::Theirs), (Side::Theirs, Side::Ours)] {
            let (x, _) = resolved(&one, a);
            let (y, _) = resolved(&two, b);
            prop_assert_eq!(leaves(&x), leaves(&y));
        }
    }

    #[test]
    fn merging_with_itself_or_with_the_base_changes_nothing(
        base in level_strategy(),
        edits in proptest::collection::vec(edit_strategy(), 0..6),
    ) {
        let side = text(&apply(&base, &edits, "o"));
        for (ours, theirs) in [(&side, &side), (&side, &text(&base)), (&text(&base), &side)] {
            let (merged, conflicts) = merge_level(&text(&base), ours, theirs).unwrap();
            prop_assert!(conflicts.is_empty());
            prop_assert_eq!(&merged, &side);
        }
    }

    #[test]
    fn one_sides_reorders_are_kept_whatever_the_other_side_did(
        base in level_strategy(),
        ours_edits in proptest::collection::vec(edit_strategy(), 0..6),
        theirs_edits in proptest::collection::vec(edit_strategy(), 0..6),
    ) {
        let ours_edits: Vec<Edit> = ours_edits.into_iter().filter(|e| !matches!(e, Edit::Reorder(..))).collect();
        let ours = apply(&base, &ours_edits, "o");
        let theirs = apply(&base, &theirs_edits, "t");
        for (o, t, mover) in [(&ours, &theirs, &theirs), (&theirs, &ours, &theirs)] {
            let (merged_text, conflicts) = merge_level(&text(&base), &text(o), &text(t)).unwrap();
            prop_assert!(conflicts.iter().all(|c| !c.why.as_deref().unwrap_or("").contains("moved it")));
            let (merged, _) = resolved(&merged_text, Side::Ours);
            // The entities the mover and the merge share, and the base had, are in
            // the mover's order.
            let (bi, mi) = (ids(&base), ids(&merged));
            let shared = |list: &[Value]| -> Vec<String> {
                order(list).into_iter().filter(|id| bi.contains(id) && mi.contains(id) && ids(mover).contains(id)).collect()
            };
            prop_assert_eq!(shared(&merged), shared(mover));
        }
    }
}

/// The length of a longest increasing subsequence, the plain O(n²) way: the
/// oracle for the diff's count of reordered entities.
fn lis_oracle(xs: &[usize]) -> usize {
    let mut best = vec![1usize; xs.len()];
    for i in 0..xs.len() {
        for j in 0..i {
            if xs[j] < xs[i] {
                best[i] = best[i].max(best[j] + 1);
            }
        }
    }
    best.into_iter().max().unwrap_or(0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Each entity gets at most one edit (renamed, moved in space, deleted, or
    /// moved in the list), and some are added: the diff says one line per edit
    /// (headers aside), and as many reorders as the fewest moves that explain the
    /// new order.
    #[test]
    fn the_diff_says_one_line_per_edit(
        n in 1usize..30,
        edits in proptest::collection::vec((0u8..5, any::<usize>()), 30),
        added in 0usize..4,
    ) {
        let base: Vec<Value> = (0..n)
            .map(|k| json!({"id": format!("e{k}"), "name": format!("E{k}"), "components": {"transform": {"position": [k, 0, 0]}}}))
            .collect();
        let mut new = base.clone();
        let mut expected = 0;
        let mut deleted = Vec::new();
        let mut moves = Vec::new();
        for (k, (kind, to)) in edits.iter().take(n).enumerate() {
            match kind {
                1 => {
                    new[k]["name"] = json!(format!("Renamed {k}"));
                    expected += 1;
                }
                2 => {
                    new[k]["components"]["transform"]["position"] = json!([k, 1, 0]);
                    expected += 1;
                }
                3 => {
                    deleted.push(format!("e{k}"));
                    expected += 1;
                }
                4 => moves.push((format!("e{k}"), *to)),
                _ => {}
            }
        }
        new.retain(|e| !deleted.iter().any(|d| e["id"] == d.as_str()));
        for (id, to) in moves {
            let at = new.iter().position(|e| e["id"] == id.as_str()).unwrap();
            let e = new.remove(at);
            let to = to % (new.len() + 1);
            new.insert(to, e);
        }
        for a in 0..added {
            new.insert(a % (new.len() + 1), json!({"id": format!("added{a}")}));
            expected += 1;
        }
        // The oracle: the old positions of the kept entities, in the new order.
        let old_at: Vec<usize> = new
            .iter()
            .filter_map(|e| e["id"].as_str()?.strip_prefix('e')?.parse().ok())
            .collect();
        expected += old_at.len() - lis_oracle(&old_at);

        let lines = kiln_merge::diff::diff_file("l.level", text(&base).as_bytes(), text(&new).as_bytes()).unwrap();
        let said: Vec<&String> = lines.iter().filter(|l| !l.starts_with("~ entity")).collect();
        prop_assert_eq!(said.len(), expected, "{:#?}", lines);
    }
}
