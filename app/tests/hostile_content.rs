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

/// One parser policy: what one command refuses, the other refuses at the same
/// place, and what one accepts, the other accepts.
#[test]
fn check_and_compile_agree_on_numbers_byte_order_marks_and_depth() {
    // A number too large for a float is an error in both (check passed it by).
    both_report(
        b"{\"entities\": [{\"id\": \"a\", \"components\": {\"transform\": {\n  \"position\": [1e999, 0, 0]}}}]}",
        "2:",
        "number out of range",
    );
    // A byte-order mark is accepted by both (compile refused it).
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend_from_slice(b"{\"entities\": [{\"id\": \"a\", \"components\": {\"transform\": {\"position\": [1, 2, 3]}}}]}");
    let tmp = demo_with_level(&bytes);
    let (_, out, _) = kiln(&["check"], tmp.path());
    assert!(!out.contains("error: levels/bad.level"), "{out}");
    let (code, out, err) = kiln(&["compile", "levels/bad"], tmp.path());
    assert_eq!(code, 0, "{out}{err}");
    // Nesting: the deepest both accept, and one more, which both refuse (check
    // allowed twice as deep).
    let nested = |depth: usize| {
        format!(
            "{{\"entities\": [{{\"id\": \"a\", \"components\": {{\"transform\": {{\"position\": {}{}}}}}}}]}}",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let refused = |depth: usize| {
        let tmp = demo_with_level(nested(depth).as_bytes());
        let (_, check, _) = kiln(&["check"], tmp.path());
        let (_, compile, _) = kiln(&["compile", "levels/bad"], tmp.path());
        (
            check.contains("nested too deeply"),
            compile.contains("recursion limit"),
        )
    };
    assert_eq!(refused(122), (false, false));
    assert_eq!(refused(123), (true, true));
}
