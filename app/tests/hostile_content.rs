//! Content crafted to break Kiln, through the real binary: `check` and `compile`
//! report the same problem, with its place, and neither crashes.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::fs;

/// A level with `bytes` as `levels/bad.level` in a copy of the demo.
fn demo_with_level(bytes: &[u8]) -> tempfile::TempDir {
    let tmp = demo_copy();
    fs::write(tmp.path().join("levels/bad.level"), bytes).unwrap();
    tmp
}

/// `check` and `compile` name the same file, line and column for a broken level,
/// each once.
fn both_report(bytes: &[u8], place: &str, needle: &str) {
    let tmp = demo_with_level(bytes);
    let (code, out, _) = kiln(&["check"], tmp.path());
    assert_eq!(code, 1, "{out}");
    // Reported once (the demo's boot levels also find the new level unused).
    assert_eq!(out.matches("error: levels/bad.level").count(), 1, "{out}");
    assert!(out.contains(&format!("levels/bad.level:{place}")), "{out}");
    assert!(out.contains(needle), "{out}");
    let (code, out, _) = kiln(&["compile", "levels/bad"], tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("levels/bad.level:{place}")), "{out}");
    assert!(out.contains(needle), "{out}");
}

#[test]
fn duplicate_keys_are_errors_in_check_and_compile() {
    both_report(
        b"{\"entities\": [{\"id\": \"a\", \"components\": {\"transform\": {\n  \"position\": [0, 0, 0],\n  \"position\": [1, 1, 1]}}}]}",
        "3:",
        "duplicate key \"position\"",
    );
    both_report(
        b"{\"entities\": [{\"id\": \"a\",\n \"id\": \"b\"}]}",
        "2:",
        "duplicate key \"id\"",
    );
}

#[test]
fn control_characters_and_invalid_utf8_are_errors_in_check_and_compile() {
    both_report(
        b"{\"entities\": [{\"id\": \"a\",\n \"name\": \"nul\x00here\"}]}",
        "2:",
        "control character",
    );
    both_report(
        b"{\"entities\": [{\"id\": \"a\",\n \"name\": \"bad \xff byte\"}]}",
        "2:",
        "UTF-8",
    );
}

/// JSON nested a hundred thousand deep is an error for both commands, not a stack
/// overflow.
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let mut text = String::from("{\"entities\": [{\"id\": \"a\", \"components\": {\"x\": ");
    text.push_str(&"[".repeat(100_000));
    text.push_str(&"]".repeat(100_000));
    text.push_str("}}]}");
    let tmp = demo_with_level(text.as_bytes());
    let (code, out, err) = kiln(&["check"], tmp.path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("error: levels/bad.level:1:"), "{out}");
    let (code, out, err) = kiln(&["compile", "levels/bad"], tmp.path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("levels/bad.level:1:"), "{out}");
}
