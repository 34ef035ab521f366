//! The authoring format of entity resources (`.level` and `.unit` files).
//!
//! A document is a JSON object with one key, `entities`: a flat array of entities, each
//! with a stable authoring `id` (never the runtime id), an optional `name`, an optional
//! `parent` (another entity's id in the same file), a `components` object keyed by
//! component type name, and optionally a `prefab` (a `.unit` path) with `overrides`.
//!
//! ```json
//! {
//!   "entities": [
//!     {
//!       "id": "tree_01",
//!       "name": "Old oak",
//!       "components": {
//!         "mesh": {"material": "materials/bark", "mesh": "meshes/trunk"},
//!         "transform": {"position": [4, 0, -2]}
//!       }
//!     },
//!     {
//!       "id": "lamp_01",
//!       "parent": "tree_01",
//!       "prefab": "units/lamp",
//!       "components": {"transform": {"position": [0, 3, 0]}},
//!       "overrides": {"bulb": {"mesh": {"material": "materials/red_glow"}}}
//!     }
//!   ]
//! }
//! ```
//!
//! A prefab instance is an entity of its own (placed by its own components); the unit's
//! entities are spawned beneath it, their ids prefixed with the instance id
//! (`lamp_01/bulb`). `overrides` patches the unit's entities field by field, keyed by
//! their id in the unit; `null` for a component removes it.
//!
//! Files are written by [`LevelDocument::to_canonical_json`]: fixed key order
//! (`id`, `name`, `parent`, `prefab`, `components`, `overrides`), components sorted
//! by name, fields in schema order, vectors on one line.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json_format::to_canonical_string;
use crate::registry::Registry;

/// One entity of a level or unit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityDocument {
    /// Stable authoring id, unique in the file: letters, digits, `_` and `-`.
    pub id: String,
    /// Display name (becomes the runtime debug name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Id of the parent entity in the same file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// A `.unit` resource path: makes this entity an instance of that prefab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefab: Option<String>,
    /// Component type name -> fields object (or an array of them for types that allow
    /// several instances).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub components: Map<String, Value>,
    /// Prefab entity id -> component patches. Only with `prefab`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub overrides: Map<String, Value>,
}

/// A `.level` or `.unit` file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelDocument {
    /// Every entity, parents and children alike, in display order.
    #[serde(default)]
    pub entities: Vec<EntityDocument>,
    /// Merge conflicts still to resolve (see [`crate::conflict`]): only a document
    /// opened with [`LevelDocument::parse_with_conflicts`] has them, holding one
    /// side's value in each one's place meanwhile; they are written back as markers.
    #[serde(skip)]
    pub conflicts: Vec<crate::conflict::Conflict>,
}

/// A file that is not valid JSON or not shaped like a level, with the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{file}:{line}:{column}: {message}")]
pub struct SyntaxError {
    /// Project path of the file, e.g. `levels/forest.level`.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl SyntaxError {
    /// The text of `bytes`, read from `file`; invalid UTF-8 is an error at its line
    /// and column, as a JSON reader would report it.
    pub fn text(bytes: Vec<u8>, file: &str) -> Result<String, SyntaxError> {
        String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            SyntaxError {
                file: file.to_owned(),
                line,
                column: valid.len() - line_start + 1,
                message: "invalid UTF-8".into(),
            }
        })
    }
}

/// Whether `id` is a valid authoring id.
pub fn valid_authoring_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl LevelDocument {
    /// Parses the text of `file` (used in error messages). A file with merge
    /// conflicts is refused, each conflict named.
    pub fn parse(text: &str, file: &str) -> Result<Self, SyntaxError> {
        let text = crate::json_format::without_bom(text);
        if crate::conflict::may_have_conflicts(text) {
            let found = crate::conflict::find_conflicts(text, "level");
            if let Some((_, line, column)) = found.first() {
                return Err(SyntaxError {
                    file: file.to_owned(),
                    line: *line,
                    column: *column,
                    message: conflicts_message(&found),
                });
            }
        }
        Self::parse_plain(text, file)
    }

    /// Parses a file that may hold merge conflicts (see [`crate::conflict`]): the
    /// document holds `choice`'s side in each one's place, and lists them in
    /// [`LevelDocument::conflicts`].
    pub fn parse_with_conflicts(
        text: &str,
        file: &str,
        choice: crate::conflict::Side,
    ) -> Result<Self, SyntaxError> {
        let text = crate::json_format::without_bom(text);
        if !crate::conflict::may_have_conflicts(text) {
            return Self::parse_plain(text, file);
        }
        let plain = Self::parse_plain(text, file);
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            // Not JSON: the plain parse says where.
            Err(_) => return plain,
        };
        let mut value = value;
        let conflicts = crate::conflict::take_level_conflicts(&mut value, choice);
        let mut doc: LevelDocument = serde_json::from_value(value).map_err(|e| SyntaxError {
            file: file.to_owned(),
            line: 1,
            column: 1,
            message: format!("with its conflicts' {} side: {e}", choice.key()),
        })?;
        doc.conflicts = conflicts;
        Ok(doc)
    }

    fn parse_plain(text: &str, file: &str) -> Result<Self, SyntaxError> {
        crate::json_format::reject_duplicate_keys(text)
            .and_then(|()| serde_json::from_str(text))
            .map_err(|e| {
                let message = e.to_string();
                // serde_json appends " at line L column C"; the location is ours to print.
                let message = match message.rfind(" at line ") {
                    Some(at) => message[..at].to_string(),
                    None => message,
                };
                SyntaxError {
                    file: file.to_owned(),
                    line: e.line().max(1),
                    column: e.column().max(1),
                    message,
                }
            })
    }

    /// The entity with authoring id `id`.
    pub fn entity(&self, id: &str) -> Option<&EntityDocument> {
        self.entities.iter().find(|e| e.id == id)
    }

    /// The entity with authoring id `id`, mutably.
    pub fn entity_mut(&mut self, id: &str) -> Option<&mut EntityDocument> {
        self.entities.iter_mut().find(|e| e.id == id)
    }

    /// The canonical text of this document (see the module docs).
    pub fn to_canonical_json(&self, registry: &Registry) -> String {
        let mut doc = self.clone();
        for e in &mut doc.entities {
            e.components = canonical_components(&e.components, registry);
            e.overrides = e
                .overrides
                .iter()
                .map(|(id, patch)| {
                    let patch = match patch {
                        Value::Object(m) => Value::Object(canonical_components(m, registry)),
                        other => other.clone(),
                    };
                    (id.clone(), patch)
                })
                .collect();
            e.overrides.sort_keys();
        }
        let mut value = serde_json::to_value(&doc).unwrap_or(Value::Null);
        if !self.conflicts.is_empty() {
            crate::conflict::put_level_conflicts(&mut value, &self.conflicts);
        }
        to_canonical_string(&value)
    }
}

/// What a file with merge conflicts is refused with: each one, where and what.
pub fn conflicts_message(found: &[(crate::conflict::Conflict, usize, usize)]) -> String {
    let each: Vec<String> = found
        .iter()
        .map(|(c, line, column)| format!("\n  {line}:{column}: {}", c.describe()))
        .collect();
    format!(
        "{} unresolved merge conflict{} (open the file in the editor to resolve them, or edit it):{}",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        each.concat()
    )
}

/// Components sorted by name; each component's fields in schema order, unknown
/// fields after them sorted by name.
fn canonical_components(
    components: &Map<String, Value>,
    registry: &Registry,
) -> Map<String, Value> {
    let mut names: Vec<&String> = components.keys().collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let value = &components[name];
            let order = |fields: &Map<String, Value>| -> Value {
                let mut out = Map::new();
                if let Some(ty) = registry.component(name) {
                    for f in &ty.fields {
                        if let Some(v) = fields.get(&f.name) {
                            out.insert(f.name.clone(), v.clone());
                        }
                    }
                }
                let mut rest: Vec<(&String, &Value)> = fields
                    .iter()
                    .filter(|(k, _)| !out.contains_key(*k))
                    .collect();
                rest.sort_by(|a, b| a.0.cmp(b.0));
                for (k, v) in rest {
                    out.insert(k.clone(), v.clone());
                }
                Value::Object(out)
            };
            let value = match value {
                Value::Object(fields) => order(fields),
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|item| item.as_object().map_or_else(|| item.clone(), order))
                        .collect(),
                ),
                other => other.clone(),
            };
            (name.clone(), value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let text = "{\n  \"entities\": [\n    {\"id\": \"a\",}\n  ]\n}";
        let err = LevelDocument::parse(text, "levels/broken.level").unwrap_err();
        assert_eq!((err.line, err.column), (3, 16));
        assert!(
            err.to_string().starts_with("levels/broken.level:3:16: "),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = LevelDocument::parse(r#"{"entities": [{"id": "a", "colour": 1}]}"#, "x.level")
            .unwrap_err();
        assert!(err.message.contains("unknown field `colour`"), "{err}");
    }

    #[test]
    fn canonical_output_orders_keys_and_round_trips() {
        let text = r#"{"entities": [{"components": {"transform": {"scale": [1,1,1], "position": [0, 1, 0]}, "mesh": {"mesh": "meshes/cube"}}, "name": "Box", "id": "box"}]}"#;
        let registry = Registry::with_builtins();
        let doc = LevelDocument::parse(text, "x.level").unwrap();
        let canonical = doc.to_canonical_json(&registry);
        let expected = r#"{
  "entities": [
    {
      "id": "box",
      "name": "Box",
      "components": {
        "mesh": {
          "mesh": "meshes/cube"
        },
        "transform": {
          "position": [0, 1, 0],
          "scale": [1, 1, 1]
        }
      }
    }
  ]
}
"#;
        assert_eq!(canonical, expected);
        let again = LevelDocument::parse(&canonical, "x.level").unwrap();
        assert_eq!(again.to_canonical_json(&registry), canonical);
    }
}
