//! Merge conflicts as they are written into Kiln's files: a file stays valid JSON,
//! readable by the editor and by a person reading `git diff`, and every reader that
//! must not go on with it (the compiler, the dependency checker) refuses it naming
//! each conflict.
//!
//! A value two branches changed differently is replaced by one marker object:
//!
//! ```json
//! "position": {
//!   "kiln:conflict": {
//!     "base": [0, 0, 0],
//!     "ours": [1, 0, 0],
//!     "theirs": [2, 0, 0]
//!   }
//! }
//! ```
//!
//! A side where the value does not exist (a field or an entity deleted) has no key.
//! An entity in conflict as a whole (edited on one side, deleted on the other; two
//! entities of one id; a parent deleted under an added child) keeps its `id` beside
//! the marker, which holds the whole entity of each side and `why`:
//!
//! ```json
//! {"id": "grove", "kiln:conflict": {"why": "...", "base": {...}, "theirs": {...}}}
//! ```
//!
//! `kiln:` cannot begin a resource path or a schema field, so the key never clashes
//! with a file's own content.

use serde_json::{Map, Value};

/// The key of a conflict marker.
pub const CONFLICT_KEY: &str = "kiln:conflict";

/// Which version of a conflicting value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The common ancestor.
    Base,
    /// The branch merged into (`HEAD`).
    Ours,
    /// The branch merged in.
    Theirs,
}

impl Side {
    /// Every side, in the order they are written.
    pub const ALL: [Side; 3] = [Side::Base, Side::Ours, Side::Theirs];

    /// Its key in a marker.
    pub fn key(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Ours => "ours",
            Side::Theirs => "theirs",
        }
    }
}

/// One unresolved conflict.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// In a level or unit, the authoring id of the entity it is in.
    pub entity: Option<String>,
    /// The keys from the entity (or, outside levels, from the file's root) to the
    /// value; empty for an entity in conflict as a whole.
    pub path: Vec<String>,
    /// Why, when it is not two values (a deleted parent, a repeated id).
    pub why: Option<String>,
    /// The common ancestor's value (`None`: it did not exist).
    pub base: Option<Value>,
    /// Ours.
    pub ours: Option<Value>,
    /// Theirs.
    pub theirs: Option<Value>,
}

impl Conflict {
    /// The value of `side` (`None`: it does not exist there).
    pub fn side(&self, side: Side) -> Option<&Value> {
        match side {
            Side::Base => self.base.as_ref(),
            Side::Ours => self.ours.as_ref(),
            Side::Theirs => self.theirs.as_ref(),
        }
    }

    /// The marker that stands in the file for this conflict.
    pub fn marker(&self) -> Value {
        let mut inner = Map::new();
        if let Some(why) = &self.why {
            inner.insert("why".into(), Value::String(why.clone()));
        }
        for side in Side::ALL {
            if let Some(v) = self.side(side) {
                inner.insert(side.key().into(), v.clone());
            }
        }
        let mut outer = Map::new();
        if self.path.is_empty()
            && let Some(id) = &self.entity
        {
            outer.insert("id".into(), Value::String(id.clone()));
        }
        outer.insert(CONFLICT_KEY.into(), Value::Object(inner));
        Value::Object(outer)
    }

    /// Where it is, for people: `entity "tree_01", component "transform", field
    /// "position"`, or the keys for other files.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(e) = &self.entity {
            parts.push(format!("entity \"{e}\""));
        }
        match self.path.first().map(String::as_str) {
            Some("components") if self.path.len() >= 2 => {
                parts.push(format!("component \"{}\"", self.path[1]));
                if self.path.len() >= 3 {
                    parts.push(format!("field \"{}\"", self.path[2..].join("/")));
                }
            }
            Some("overrides") if self.path.len() >= 2 => {
                parts.push(format!("override of part \"{}\"", self.path[1]));
                if self.path.len() >= 3 {
                    parts.push(format!("component \"{}\"", self.path[2]));
                }
                if self.path.len() >= 4 {
                    parts.push(format!("field \"{}\"", self.path[3..].join("/")));
                }
            }
            Some(_) if self.entity.is_some() => {
                parts.push(format!("field \"{}\"", self.path.join("/")))
            }
            Some(_) => parts.push(format!("key \"{}\"", self.path.join("/"))),
            None => {}
        }
        let what = if parts.is_empty() {
            "the whole file".to_owned()
        } else {
            parts.join(", ")
        };
        let show = |v: Option<&Value>| match v {
            None => "(none)".to_owned(),
            Some(v) if self.path.is_empty() && self.entity.is_some() => match v.get("name") {
                Some(Value::String(n)) => format!("\"{n}\""),
                _ => "the entity".to_owned(),
            },
            Some(v) => short(v),
        };
        match &self.why {
            Some(why) => format!("{what}: {why}"),
            None => format!(
                "{what}: ours {}, theirs {} (base {})",
                show(self.ours.as_ref()),
                show(self.theirs.as_ref()),
                show(self.base.as_ref())
            ),
        }
    }
}

/// A value on one line, cut short when long.
fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// Whether `text` may hold a conflict marker: the one check every reader of a file
/// makes first, so that files without conflicts cost a scan of their bytes.
pub fn may_have_conflicts(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), CONFLICT_KEY.as_bytes()).is_some()
}

/// The marker's sides, if `value` is a marker object (with an `id` beside it for an
/// entity): (why, base, ours, theirs).
fn read_marker(value: &Value) -> Option<(Option<String>, [Option<Value>; 3])> {
    let object = value.as_object()?;
    let inner = object.get(CONFLICT_KEY)?.as_object()?;
    let extra = object.keys().any(|k| k != CONFLICT_KEY && k != "id");
    if extra {
        return None;
    }
    let why = inner.get("why").and_then(Value::as_str).map(str::to_owned);
    let sides = Side::ALL.map(|s| inner.get(s.key()).cloned());
    Some((why, sides))
}

/// Takes the conflicts out of a level or unit's JSON `value`, leaving `choice`'s
/// value in each one's place. An entity in conflict as a whole stays in while
/// either side has it (deleted on `choice`'s side, the other side's), so that what
/// another entity has under it stays in its place until the conflict is resolved.
/// The conflicts come in document order.
pub fn take_level_conflicts(value: &mut Value, choice: Side) -> Vec<Conflict> {
    let mut out = Vec::new();
    let Some(entities) = value.get_mut("entities").and_then(Value::as_array_mut) else {
        return take_conflicts(value, choice);
    };
    let mut kept = Vec::with_capacity(entities.len());
    for mut entity in std::mem::take(entities) {
        if let Some((why, [base, ours, theirs])) = read_marker(&entity) {
            let id = entity.get("id").and_then(Value::as_str).map(str::to_owned);
            let conflict = Conflict {
                entity: id,
                path: Vec::new(),
                why,
                base,
                ours,
                theirs,
            };
            let other = match choice {
                Side::Theirs => Side::Ours,
                _ => Side::Theirs,
            };
            if let Some(chosen) = conflict.side(choice).or(conflict.side(other)) {
                kept.push(chosen.clone());
            }
            out.push(conflict);
            continue;
        }
        let id = entity.get("id").and_then(Value::as_str).map(str::to_owned);
        let mut path = Vec::new();
        take_below(&mut entity, &mut path, choice, &id, &mut out);
        kept.push(entity);
    }
    *entities = kept;
    out
}

/// Takes the conflicts out of any JSON `value` (a material, `kiln.project`),
/// leaving `choice`'s value in each one's place (a key whose chosen side has none
/// goes).
pub fn take_conflicts(value: &mut Value, choice: Side) -> Vec<Conflict> {
    let mut out = Vec::new();
    if let Some((why, [base, ours, theirs])) = read_marker(value) {
        let conflict = Conflict {
            entity: None,
            path: Vec::new(),
            why,
            base,
            ours,
            theirs,
        };
        *value = conflict.side(choice).cloned().unwrap_or(Value::Null);
        out.push(conflict);
        return out;
    }
    take_below(value, &mut Vec::new(), choice, &None, &mut out);
    out
}

fn take_below(
    value: &mut Value,
    path: &mut Vec<String>,
    choice: Side,
    entity: &Option<String>,
    out: &mut Vec<Conflict>,
) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        path.push(key.clone());
        let marker = map.get(&key).and_then(read_marker);
        match marker {
            Some((why, [base, ours, theirs])) => {
                let conflict = Conflict {
                    entity: entity.clone(),
                    path: path.clone(),
                    why,
                    base,
                    ours,
                    theirs,
                };
                match conflict.side(choice) {
                    Some(v) => {
                        map.insert(key.clone(), v.clone());
                    }
                    None => {
                        map.shift_remove(&key);
                    }
                }
                out.push(conflict);
            }
            None => {
                if let Some(child) = map.get_mut(&key) {
                    take_below(child, path, choice, entity, out);
                }
            }
        }
        path.pop();
    }
}

/// Puts `conflicts` back into a level or unit's JSON `value` as markers (the
/// inverse of [`take_level_conflicts`], whatever was chosen meanwhile): an entity's
/// conflict replaces the entity of that id, or is added at the end where there is
/// none; a value's replaces the value at its path (made if missing).
pub fn put_level_conflicts(value: &mut Value, conflicts: &[Conflict]) {
    let Some(entities) = value.get_mut("entities").and_then(Value::as_array_mut) else {
        return put_conflicts(value, conflicts);
    };
    for c in conflicts {
        let at = c.entity.as_deref().and_then(|id| {
            entities
                .iter()
                .position(|e| e.get("id").and_then(Value::as_str) == Some(id))
        });
        if c.path.is_empty() {
            match at {
                Some(k) => entities[k] = c.marker(),
                None => entities.push(c.marker()),
            }
        } else if let Some(k) = at {
            put_at(&mut entities[k], &c.path, c.marker());
        }
    }
}

/// Puts `conflicts` back into any JSON `value` as markers (the inverse of
/// [`take_conflicts`]).
pub fn put_conflicts(value: &mut Value, conflicts: &[Conflict]) {
    for c in conflicts {
        if c.path.is_empty() {
            *value = c.marker();
        } else {
            put_at(value, &c.path, c.marker());
        }
    }
}

fn put_at(value: &mut Value, path: &[String], marker: Value) {
    let mut at = value;
    for key in &path[..path.len() - 1] {
        let Some(map) = at.as_object_mut() else {
            return;
        };
        at = map
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let (Some(map), Some(last)) = (at.as_object_mut(), path.last()) {
        map.insert(last.clone(), marker);
    }
}

/// Every conflict in the text of a file of type `ext` (a level or unit's by
/// entity), with the 1-based line and column of its marker; empty when the text has
/// none or is not JSON.
pub fn find_conflicts(text: &str, ext: &str) -> Vec<(Conflict, usize, usize)> {
    if !may_have_conflicts(text) {
        return Vec::new();
    }
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let conflicts = if matches!(ext, "level" | "unit") {
        take_level_conflicts(&mut value, Side::Ours)
    } else {
        take_conflicts(&mut value, Side::Ours)
    };
    // The markers in the text come in the order of the walk (document order).
    let key = format!("\"{CONFLICT_KEY}\"");
    let places = memchr::memmem::find_iter(text.as_bytes(), key.as_bytes()).map(|at| {
        let before = &text.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        (line, text[start..at].chars().count() + 1)
    });
    conflicts
        .into_iter()
        .zip(places.chain(std::iter::repeat((1, 1))))
        .map(|(c, (line, column))| (c, line, column))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn field_conflict() -> Conflict {
        Conflict {
            entity: Some("tree".into()),
            path: vec!["components".into(), "transform".into(), "position".into()],
            why: None,
            base: Some(json!([0, 0, 0])),
            ours: Some(json!([1, 0, 0])),
            theirs: Some(json!([2, 0, 0])),
        }
    }

    #[test]
    fn markers_are_taken_out_and_put_back_as_they_were() {
        let deleted = Conflict {
            entity: Some("grove".into()),
            path: Vec::new(),
            why: Some("edited on theirs, deleted on ours".into()),
            base: Some(json!({"id": "grove", "name": "Grove"})),
            ours: None,
            theirs: Some(json!({"id": "grove", "name": "Big grove"})),
        };
        let mut doc = json!({"entities": [
            {"id": "tree", "components": {"transform": {"position": [9, 9, 9]}}},
            {"id": "rock"}
        ]});
        put_level_conflicts(&mut doc, &[field_conflict(), deleted.clone()]);
        let text = crate::json_format::to_canonical_string(&doc);
        assert!(may_have_conflicts(&text));
        let found = find_conflicts(&text, "level");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].0, field_conflict());
        assert_eq!((found[0].1, found[0].2), (8, 13));
        assert_eq!(found[1].0, deleted);
        let mut back: Value = serde_json::from_str(&text).unwrap();
        let taken = take_level_conflicts(&mut back, Side::Theirs);
        assert_eq!(taken, vec![field_conflict(), deleted]);
        assert_eq!(
            back,
            json!({"entities": [
                {"id": "tree", "components": {"transform": {"position": [2, 0, 0]}}},
                {"id": "rock"},
                {"id": "grove", "name": "Big grove"}
            ]})
        );
        let mut ours: Value = serde_json::from_str(&text).unwrap();
        take_level_conflicts(&mut ours, Side::Ours);
        // Ours deleted grove: it stays in, theirs', until the conflict is resolved.
        assert_eq!(ours["entities"][2]["name"], "Big grove");
    }

    #[test]
    fn a_conflict_says_where_and_what_for_people() {
        assert_eq!(
            field_conflict().describe(),
            "entity \"tree\", component \"transform\", field \"position\": ours [1,0,0], theirs [2,0,0] (base [0,0,0])"
        );
        let key = Conflict {
            entity: None,
            path: vec!["color".into()],
            why: None,
            base: None,
            ours: Some(json!([1, 0, 0, 1])),
            theirs: None,
        };
        assert_eq!(
            key.describe(),
            "key \"color\": ours [1,0,0,1], theirs (none) (base (none))"
        );
        assert!(!may_have_conflicts("{\"color\": [1, 0, 0, 1]}"));
    }
}
