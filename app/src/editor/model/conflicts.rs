//! Merge conflicts of the open level or unit, resolved in the editor. A file a merge
//! left conflicts in opens with ours in each one's place (so the level draws), lists
//! them in the Conflicts tab, and takes a side (or the value as edited) per conflict
//! or for all: each one an edit on the history, so undo brings the conflict back.
//! Saving writes the conflicts still open back as markers.

use kiln_core::conflict::{Conflict, Side};
use kiln_core::{EntityDocument, LevelDocument};
use serde_json::Value;

use super::entity_edits;
use super::open_level::OpenLevel;
use crate::editor::document::DocEdit;
use crate::editor::tree::SceneTree;

pub use crate::editor::actions::Resolution;

/// The edit that resolves the conflict at `index` of `level`'s document (one undo
/// step), and what to say once it is made.
pub(super) fn resolve_one(
    level: &OpenLevel,
    index: usize,
    how: Resolution,
) -> Option<(DocEdit, String)> {
    let conflict = level.doc.conflicts.get(index)?;
    let edit = resolve(&level.doc, index, conflict, how);
    let left = level.doc.conflicts.len() - 1;
    let said = format!(
        "resolved {}{}",
        conflict_place(conflict),
        after(level, left)
    );
    Some((edit, said))
}

/// The edit that resolves every open conflict of `level` taking `side` (one undo
/// step), and what to say once it is made.
pub(super) fn resolve_all(level: &OpenLevel, side: Side) -> Option<(DocEdit, String)> {
    let n = level.doc.conflicts.len();
    if n == 0 {
        return None;
    }
    // From the last, so that each one's index stays where it is; on a copy, so
    // that each sees what the ones before it changed.
    let mut doc = level.doc.clone();
    let mut edits = Vec::with_capacity(n);
    for index in (0..n).rev() {
        let conflict = doc.conflicts[index].clone();
        let mut edit = resolve(&doc, index, &conflict, Resolution::Take(side));
        edit.apply(&mut doc);
        edits.push(edit);
    }
    let said = format!(
        "resolved {n} conflicts taking {}{}",
        side.key(),
        after(level, 0)
    );
    Some((DocEdit::Group(edits), said))
}

/// What to do once no conflict is `left`: git still counts the file as unmerged
/// until it is saved and added.
fn after(level: &OpenLevel, left: usize) -> String {
    match left {
        0 => format!(
            "; the last one: save, then `git add {}` to mark it resolved",
            level.file
        ),
        _ => String::new(),
    }
}

/// Where a conflict is, for the log.
fn conflict_place(c: &Conflict) -> String {
    let mut place = c.entity.clone().unwrap_or_default();
    for p in &c.path {
        place.push('/');
        place.push_str(p);
    }
    place
}

/// The edit that resolves `conflict` (at `index`) in `doc`.
fn resolve(doc: &LevelDocument, index: usize, conflict: &Conflict, how: Resolution) -> DocEdit {
    let change = match how {
        Resolution::AsItIs => DocEdit::Group(Vec::new()),
        Resolution::Take(side) => take(doc, conflict, side),
    };
    DocEdit::Resolve {
        index,
        conflict: Box::new(conflict.clone()),
        change: Box::new(change),
    }
}

/// What taking `side` of `conflict` changes in `doc`.
fn take(doc: &LevelDocument, conflict: &Conflict, side: Side) -> DocEdit {
    let none = DocEdit::Group(Vec::new());
    let Some(id) = &conflict.entity else {
        return none;
    };
    let chosen = conflict.side(side);
    let current = doc.entity(id);
    if conflict.path.is_empty() {
        let chosen: Option<EntityDocument> =
            chosen.and_then(|v| serde_json::from_value(v.clone()).ok());
        return match (current, chosen) {
            (Some(old), Some(new)) => DocEdit::ReplaceEntity {
                old: Box::new(old.clone()),
                new: Box::new(new),
            },
            // Deleted on that side: with what is under it (an entity the other
            // side put there goes too, as the conflict said).
            (Some(_), None) => {
                let tree = SceneTree::build(doc);
                // The side is taken as it is: entity fields naming what it deleted
                // are for `kiln check` to report, not for this to change.
                let no_types = kiln_core::Registry::new();
                entity_edits::delete(doc, &tree, std::slice::from_ref(id), &no_types)
                    .map_or(none, |(edit, _)| edit)
            }
            (None, Some(new)) => DocEdit::Insert {
                entities: vec![(doc.entities.len(), new)],
            },
            (None, None) => none,
        };
    }
    let Some(entity) = current else {
        return none;
    };
    let mut value = match serde_json::to_value(entity) {
        Ok(v) => v,
        Err(_) => return none,
    };
    set_path(&mut value, &conflict.path, chosen.cloned());
    match serde_json::from_value::<EntityDocument>(value) {
        Ok(new) => DocEdit::ReplaceEntity {
            old: Box::new(entity.clone()),
            new: Box::new(new),
        },
        Err(_) => none,
    }
}

/// Sets (or, with `None`, removes) the value at `path` in `value`, making the
/// objects on the way.
fn set_path(value: &mut Value, path: &[String], new: Option<Value>) {
    let Some((last, above)) = path.split_last() else {
        return;
    };
    let mut at = value;
    for key in above {
        let Some(map) = at.as_object_mut() else {
            return;
        };
        at = map
            .entry(key.clone())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    if let Some(map) = at.as_object_mut() {
        match new {
            Some(v) => {
                map.insert(last.clone(), v);
            }
            None => {
                map.shift_remove(last);
            }
        }
    }
}
