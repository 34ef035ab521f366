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
                out.push_str(&v.to_string());
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
        scalar => out.push_str(&scalar.to_string()),
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
