//! The `references` section of `kiln.project`: which strings of file types Kiln
//! has no schema for are references, and how each names its file.
//!
//! A rule maps a field pattern to what the strings it matches are:
//!
//! - `"mesh"`: a typed reference, written without extension, to `text.mesh`;
//! - `"*"`: a reference written as the full path with its extension
//!   (`"textures/bark.png"`);
//! - `null`: not a reference, whatever it looks like;
//! - `{"type": "material", "when": {"_type": "mesh_renderer"}}`: one of the above,
//!   only where the object holding the field has those sibling values; a key
//!   `../_type` tests a field of the object enclosing that one (`../../_type`, the
//!   one around it; lists in between are passed through), so a component written
//!   `{"_type": "actor", "data": {"material": ...}}` is told by its type;
//! - a list of such cases, the first that holds deciding; a case without `when`
//!   holds always (a catch-all, last);
//! - `"optional": true` beside `"type"` in a case: a rule shared between projects
//!   that may type nothing in this one, never reported as unused.
//!
//! The patterns themselves are matched by the dependency checker (`scan/rules.rs`).

use std::collections::BTreeMap;

use serde::Deserialize;

/// Declared reference rules, by file extension (`*` for every file), then by
/// pattern: see the module documentation.
pub type ReferenceRules = BTreeMap<String, BTreeMap<String, RuleSpec>>;

/// What the strings a rule's pattern matches are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOutcome {
    /// A reference written without extension to a file of this type.
    Typed(String),
    /// A reference written as the full path, with its extension.
    FullPath,
    /// Not a reference.
    NotReference,
}

/// One case of a rule: its outcome where every condition holds.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleCase {
    /// What the string is.
    pub outcome: RuleOutcome,
    /// Sibling fields of the object that holds the string's field (or, with one
    /// `../` per level, of an object enclosing it), each with the values it may
    /// have (`null`: absent or null). Empty: always.
    pub when: Vec<(String, Vec<serde_json::Value>)>,
    /// A rule that may type nothing in a project, and is not reported when it
    /// does not.
    pub optional: bool,
}

/// A rule's cases, in order: the first whose conditions hold decides.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSpec {
    /// The cases, at least one.
    pub cases: Vec<RuleCase>,
}

impl Eq for RuleCase {}
impl Eq for RuleSpec {}

/// Compares with the plain-type form `"mesh"`, for tests and callers that only
/// declare types.
impl PartialEq<&str> for RuleSpec {
    fn eq(&self, other: &&str) -> bool {
        matches!(self.cases.as_slice(), [RuleCase { outcome: RuleOutcome::Typed(t), when, .. }] if t == other && when.is_empty())
    }
}

impl RuleSpec {
    /// Reads one rule's value (see the module documentation).
    pub fn from_value(value: &serde_json::Value) -> Result<Self, String> {
        let cases = match value {
            serde_json::Value::Array(cases) if cases.is_empty() => {
                return Err("a list of cases is empty".to_owned());
            }
            serde_json::Value::Array(cases) => cases
                .iter()
                .map(case_from_value)
                .collect::<Result<Vec<_>, _>>()?,
            one => vec![case_from_value(one)?],
        };
        Ok(RuleSpec { cases })
    }

    /// The types this rule's cases name (for validation).
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.cases.iter().filter_map(|c| match &c.outcome {
            RuleOutcome::Typed(t) => Some(t.as_str()),
            _ => None,
        })
    }
}

fn outcome_from_value(value: &serde_json::Value) -> Result<RuleOutcome, String> {
    match value {
        serde_json::Value::Null => Ok(RuleOutcome::NotReference),
        serde_json::Value::String(s) if s == "*" => Ok(RuleOutcome::FullPath),
        serde_json::Value::String(s) => Ok(RuleOutcome::Typed(s.clone())),
        other => Err(format!(
            "expected a resource type (\"mesh\"), \"*\" for a full path, or null for no reference; found {other}"
        )),
    }
}

fn case_from_value(value: &serde_json::Value) -> Result<RuleCase, String> {
    let serde_json::Value::Object(fields) = value else {
        return Ok(RuleCase {
            outcome: outcome_from_value(value)?,
            when: Vec::new(),
            optional: false,
        });
    };
    if let Some(unknown) =
        (fields.keys()).find(|k| !matches!(k.as_str(), "type" | "when" | "optional"))
    {
        return Err(format!(
            "unknown key \"{unknown}\" in a rule (expected \"type\", \"when\" and \"optional\")"
        ));
    }
    let optional = match fields.get("optional") {
        None => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(other) => return Err(format!("\"optional\" is true or false, not {other}")),
    };
    let outcome = match fields.get("type") {
        Some(t) => outcome_from_value(t)?,
        None => return Err("a rule written as an object needs a \"type\"".to_owned()),
    };
    let when = match fields.get("when") {
        None => Vec::new(),
        Some(serde_json::Value::Object(conditions)) => conditions
            .iter()
            .map(|(key, allowed)| {
                let values = match allowed {
                    serde_json::Value::Array(values) => values.clone(),
                    one => vec![one.clone()],
                };
                let (_, field) = enclosing_level(key);
                if field.is_empty() || field.contains('/') {
                    return Err(format!(
                        "when.{key}: a field name, with one \"../\" before it per enclosing object"
                    ));
                }
                match values.iter().find(|v| v.is_object() || v.is_array()) {
                    Some(v) => Err(format!(
                        "when.{key}: {v} is not a value a field can be compared with (a string, number, bool or null)"
                    )),
                    None => Ok((key.clone(), values)),
                }
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(format!(
                "\"when\" must be an object of sibling fields and values, not {other}"
            ));
        }
    };
    Ok(RuleCase {
        outcome,
        when,
        optional,
    })
}

/// A condition's key as (how many objects out, the field): `_type` is (0,
/// `_type`), `../_type` (1, `_type`).
pub fn enclosing_level(key: &str) -> (usize, &str) {
    let mut depth = 0;
    let mut rest = key;
    while let Some(r) = rest.strip_prefix("../") {
        depth += 1;
        rest = r;
    }
    (depth, rest)
}

impl<'de> Deserialize<'de> for RuleSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        RuleSpec::from_value(&value).map_err(serde::de::Error::custom)
    }
}

impl RuleCase {
    /// Whether every condition holds, `field(depth, key)` giving the value of the
    /// field `key` of the object that holds the string (depth 0) or of the one
    /// `depth` objects around it (`None`: absent).
    pub fn holds<'v>(&self, field: impl Fn(usize, &str) -> Option<&'v serde_json::Value>) -> bool {
        self.when.iter().all(|(key, allowed)| {
            let (depth, key) = enclosing_level(key);
            let value = field(depth, key).unwrap_or(&serde_json::Value::Null);
            allowed.contains(value)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> Result<RuleSpec, String> {
        RuleSpec::from_value(&serde_json::from_str(json).unwrap())
    }

    #[test]
    fn every_form_of_rule_reads() {
        assert_eq!(spec("\"mesh\"").unwrap(), "mesh");
        assert_eq!(
            spec("\"*\"").unwrap().cases[0].outcome,
            RuleOutcome::FullPath
        );
        assert_eq!(
            spec("null").unwrap().cases[0].outcome,
            RuleOutcome::NotReference
        );
        let cases = spec(
            r#"[{"type": "material", "when": {"_type": "mesh_renderer"}},
                {"type": "physics_material", "when": {"_type": ["collider", "rigid_body"]}},
                {"type": null}]"#,
        )
        .unwrap()
        .cases;
        assert_eq!(cases.len(), 3);
        let renderer = serde_json::json!("mesh_renderer");
        let collider = serde_json::json!("collider");
        assert!(cases[0].holds(|d, k| (d == 0 && k == "_type").then_some(&renderer)));
        assert!(!cases[0].holds(|_, _| None));
        assert!(cases[1].holds(|d, k| (d == 0 && k == "_type").then_some(&collider)));
        assert!(cases[2].holds(|_, _| None));
        // A field of the enclosing object.
        let outer =
            spec(r#"{"type": "material", "when": {"../_type": "actor"}, "optional": true}"#)
                .unwrap()
                .cases;
        let actor = serde_json::json!("actor");
        assert!(outer[0].optional);
        assert!(outer[0].holds(|d, k| (d == 1 && k == "_type").then_some(&actor)));
        assert!(!outer[0].holds(|d, k| (d == 0 && k == "_type").then_some(&actor)));
        assert!(spec(r#"{"type": "material", "when": {"../": "x"}}"#).is_err());
        // `null` in a condition: the field is absent.
        let absent = spec(r#"{"type": "unit", "when": {"_type": null}}"#)
            .unwrap()
            .cases;
        assert!(absent[0].holds(|_, _| None));
        assert!(!absent[0].holds(|_, _| Some(&renderer)));
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for (json, needle) in [
            ("3", "expected a resource type"),
            ("[]", "empty"),
            (r#"{"when": {"a": 1}}"#, "needs a \"type\""),
            (r#"{"type": "mesh", "if": {}}"#, "unknown key \"if\""),
            (r#"{"type": "mesh", "when": [1]}"#, "must be an object"),
            (r#"{"type": "mesh", "when": {"a": {"b": 1}}}"#, "when.a"),
        ] {
            let e = spec(json).unwrap_err();
            assert!(e.contains(needle), "{json}: {e}");
        }
    }
}
