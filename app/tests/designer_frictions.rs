//! The frictions a designer hit in the editor, each fixed and held here: broken
//! files keep their last good version on screen and say where they broke; copy and
//! paste, Tab and keyboard reparenting reach the scene tree; undo keeps what it
//! touched selected; prefabs made from a selection sit where it was; part
//! inspectors follow an edited unit; mixed fields show no value; duplicates get
//! unique names; the inspector follows a renamed asset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::atomic_write;

use std::fs;
use std::time::{Duration, Instant};

use kiln::editor::{Action, Editor, Effect, Severity, UiCommand};
use kiln_core::{ResourceId, ResourcePath};

/// Polls the editor as its frame loop does until `done` holds (panics after 10 s).
fn until(editor: &mut Editor, what: &str, done: impl Fn(&Editor) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(editor) {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for: {what}; log: {:#?}",
            editor.log()
        );
        std::thread::sleep(Duration::from_millis(20));
        editor.poll_changes();
    }
}

fn material(editor: &Editor, path: &str) -> Option<kiln::render::resources::MaterialLook> {
    let id = ResourceId::of(&ResourcePath::parse(path).unwrap(), "material");
    editor.resources().materials.get(&id).cloned()
}

#[test]
fn a_broken_material_keeps_its_last_good_look_and_says_where_it_broke() {
    let dir = support::demo_copy();
    let mut editor = Editor::open(dir.path()).unwrap();
    let good = material(&editor, "materials/bark").expect("bark is loaded");
    let file = dir.path().join("materials/bark.material");
    let text = fs::read_to_string(&file).unwrap();

    // Broken JSON: the look stays, and the error names line and column, as a toast.
    editor.take_effects();
    atomic_write(&file, &text.replacen(',', "", 1));
    until(&mut editor, "the material to be reported", |e| {
        e.resources().errors.contains_key("materials/bark.material")
    });
    assert_eq!(material(&editor, "materials/bark"), Some(good.clone()));
    let error = &editor.resources().errors["materials/bark.material"];
    assert!(
        error.starts_with("materials/bark.material:2:18: expected"),
        "{error}"
    );
    let toasts: Vec<String> = editor
        .take_effects()
        .into_iter()
        .filter_map(|e| match e {
            Effect::Toast(t) if t.severity == Severity::Error => Some(t.text),
            _ => None,
        })
        .collect();
    assert!(toasts.iter().any(|t| t.contains("materials/bark.material:2:18:") && t.contains("last good version")), "{toasts:?}");

    // A value of the wrong type: the field is named.
    atomic_write(
        &file,
        &text.replace("\"roughness\": 0.9", "\"roughness\": \"high\""),
    );
    until(&mut editor, "the field to be named", |e| {
        e.resources()
            .errors
            .get("materials/bark.material")
            .is_some_and(|m| m.contains("field \"roughness\""))
    });
    assert_eq!(material(&editor, "materials/bark"), Some(good.clone()));

    // Fixed: the new look, and no error.
    atomic_write(
        &file,
        &text.replace("\"roughness\": 0.9", "\"roughness\": 0.25"),
    );
    until(&mut editor, "the fix to be taken", |e| {
        e.resources().errors.is_empty()
    });
    assert_eq!(material(&editor, "materials/bark").unwrap().roughness, 0.25);
}

#[test]
fn a_broken_unit_keeps_the_last_good_world_and_says_where_it_broke() {
    let dir = support::demo_copy();
    let mut editor = Editor::open(dir.path()).unwrap();
    let entities = editor.preview().level.as_ref().unwrap().entities.len();
    let unit = dir.path().join("units/tree.unit");
    let text = fs::read_to_string(&unit).unwrap();
    atomic_write(&unit, &text.replacen("\"id\"", "\"id\" \"", 1));
    until(&mut editor, "the compile error", |e| {
        e.compile_error().is_some()
    });
    let error = editor.compile_error().unwrap().to_owned();
    assert!(error.starts_with("units/tree.unit:4:12: "), "{error}");
    assert_eq!(
        editor.preview().level.as_ref().unwrap().entities.len(),
        entities
    );
    atomic_write(&unit, &text);
    until(&mut editor, "the fix", |e| e.compile_error().is_none());
}
