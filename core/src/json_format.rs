//! The canonical JSON text of Kiln's files: two-space indentation, keys in the order
//! the writer put them, and arrays of plain values (vectors, colours, path lists) on
//! one line, so that a save changes only the lines whose values changed and merges
//! stay clean.

use serde_json::Value;

/// Formats `value` canonically, ending with a newline.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out.push('\n');
    out
}

/// Appends `value` to `out` as it stands canonically at nesting `depth` (an entity
/// of a level is at depth 2): its first line not indented (the caller puts it after
/// its own indentation), no newline after it.
pub fn write_canonical_at(out: &mut String, value: &Value, depth: usize) {
    write_value(out, value, depth);
}

fn is_flat(items: &[Value]) -> bool {
    items.iter().all(|v| !v.is_array() && !v.is_object())
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            out.push_str("{\n");
            for (i, (key, v)) in map.iter().enumerate() {
                indent(out, depth + 1);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_value(out, v, depth + 1);
                if i + 1 < map.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) if is_flat(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_scalar(out, v);
            }
            out.push(']');
        }
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                indent(out, depth + 1);
                write_value(out, v, depth + 1);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, depth);
            out.push(']');
        }
        scalar => write_scalar(out, scalar),
    }
}

/// A number, string, boolean or null. A number with no fraction is written as a
/// whole number (`0`, `2`, `-3`, whether it was read as `2.0` or `2`), and a
/// negative zero as `0`, so that one value has one spelling in every file Kiln
/// writes and a value dragged back through zero saves as it was.
fn write_scalar(out: &mut String, value: &Value) {
    match value.as_f64().and_then(whole_number) {
        Some(whole) if value.is_f64() => out.push_str(&whole.to_string()),
        _ => out.push_str(&value.to_string()),
    }
}

/// `f` as a whole number, when it is one that a JSON reader takes back exactly
/// (within 2^53); `None` for a fraction, a huge value or not a number.
pub fn whole_number(f: f64) -> Option<i64> {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    (f.fract() == 0.0 && f.abs() < EXACT).then_some(f as i64)
}

/// The UTF-8 byte-order mark. Editors on Windows write one at the start of a file;
/// a file with it is the same JSON to every command and every crate (the compile,
/// the checker's scanner, the merge), and Kiln never writes one back.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `text` without a leading byte-order mark ([`BOM`]).
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// `bytes` without a leading byte-order mark ([`BOM`]).
pub fn bytes_without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

#[cfg(test)]
mod canonical_tests {
    use super::*;

    #[test]
    fn a_whole_number_and_negative_zero_have_one_spelling() {
        // Positive control: fractions and huge values keep theirs.
        let v = serde_json::json!([2.5, -0.125, 1e300, 2.0, 2, -3.0]);
        assert_eq!(to_canonical_string(&v), "[2.5, -0.125, 1e+300, 2, 2, -3]\n");
        assert_eq!(crate::schema::json_f32(2.0), serde_json::json!(2));
        assert_eq!(crate::schema::json_f32(0.1), serde_json::json!(0.1));
        let v = serde_json::json!({"rotation": [-0.0, 0.0, -0.0], "speed": -0.0, "n": 0});
        assert_eq!(
            to_canonical_string(&v),
            "{\n  \"rotation\": [0, 0, 0],\n  \"speed\": 0,\n  \"n\": 0\n}\n"
        );
        assert_eq!(crate::schema::json_f32(-0.0), crate::schema::json_f32(0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vectors_stay_on_one_line_and_output_parses_back() {
        let v = json!({"entities": [{"id": "a", "components": {"transform": {"position": [1, 2.5, -3]}}}], "empty": {}});
        let text = to_canonical_string(&v);
        assert!(text.contains("\"position\": [1, 2.5, -3]"), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(to_canonical_string(&back), text);
    }
}

/// Fails on the first object that has the same key twice (`serde_json`, like most
/// readers, keeps the last silently; in a level that is usually a merge gone wrong).
/// The error carries serde_json's line and column of the second key's value.
///
/// One pass, allocating almost nothing: the keys of the objects being read live on
/// one stack, and each new key is compared with its own object's keys only (objects
/// in Kiln's files have a handful).
pub fn reject_duplicate_keys(text: &str) -> Result<(), serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    let mut keys = Vec::new();
    NoDuplicates { keys: &mut keys }.deserialize(&mut de)?;
    de.end()
}

/// Walks any JSON value, failing on a repeated key.
struct NoDuplicates<'k, 'de> {
    keys: &'k mut Vec<std::borrow::Cow<'de, str>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for NoDuplicates<'_, 'de> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for NoDuplicates<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(NoDuplicates {
                keys: &mut *self.keys,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let start = self.keys.len();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if self.keys[start..].contains(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate key \"{key}\" in one object (the first is ignored; often a merge gone wrong)"
                )));
            }
            self.keys.push(key);
            map.next_value_seed(NoDuplicates {
                keys: &mut *self.keys,
            })?;
        }
        self.keys.truncate(start);
        Ok(())
    }
}

#[cfg(test)]
mod duplicate_tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_found_with_their_place() {
        assert!(
            reject_duplicate_keys(r#"{"a": 1, "b": {"a": 2}, "c": [{"a": 1}, {"a": 2}]}"#).is_ok()
        );
        let e = reject_duplicate_keys("{\n  \"a\": {\"x\": 1,\n   \"x\": 2}\n}").unwrap_err();
        assert_eq!(e.line(), 3);
        assert!(e.to_string().contains("duplicate key \"x\""), "{e}");
        assert!(reject_duplicate_keys(r#"{"a\u0062": 1, "ab": 2}"#).is_err());
    }
}
