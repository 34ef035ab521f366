//! The files the editor writes whole (an asset edited in the inspector, a unit written
//! by "create prefab" or "apply overrides") against the hostile cases: another program
//! writing the same file, links planted to carry the write outside the project.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;

use kiln::editor::{Action, Editor, UiCommand};

fn set_roughness(editor: &mut Editor, value: f64) {
    editor.apply(Action::SetAssetField {
        file: "materials/bark.material".into(),
        field: "roughness".into(),
        value: serde_json::json!(value),
        continuing: false,
    });
}

/// Another program saves the file after the editor wrote it: undo refuses and says
/// so, and the other program's bytes stay.
#[test]
fn undo_never_overwrites_what_another_program_wrote_since() {
    let dir = support::demo_copy();
    let path = dir.path().join("materials/bark.material");
    let mut editor = support::open_editor(dir.path()).unwrap();
    set_roughness(&mut editor, 0.25);
    assert!(fs::read_to_string(&path).unwrap().contains("0.25"));
    let theirs = "{\"color\": [1, 0, 0, 1], \"roughness\": 0.5}\n";
    fs::write(&path, theirs).unwrap();
    editor.apply(Action::Run(UiCommand::Undo));
    assert_eq!(fs::read_to_string(&path).unwrap(), theirs);
    assert!(
        editor.log().iter().any(|l| l
            .text
            .contains("materials/bark.material changed on disk since")),
        "{:?}",
        editor.log()
    );
    // The step stays undoable once the file is back as the editor left it.
    assert_eq!(editor.history().depth(), 1);
}

/// A material that is a link to a file outside the project is not edited through it.
#[cfg(unix)]
#[test]
fn an_asset_edit_never_writes_through_a_link() {
    let dir = support::demo_copy();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.material");
    fs::write(&victim, "{\"roughness\": 0.9}\n").unwrap();
    let link = dir.path().join("materials/bark.material");
    fs::remove_file(&link).unwrap();
    kiln_core::os::symlink(&victim, &link).unwrap();
    let mut editor = support::open_editor(dir.path()).unwrap();
    set_roughness(&mut editor, 0.1);
    assert_eq!(
        fs::read_to_string(&victim).unwrap(),
        "{\"roughness\": 0.9}\n"
    );
    assert!(
        editor.log().iter().any(|l| l.text.contains("cannot edit")),
        "{:?}",
        editor.log()
    );
}

/// A `units` folder that is a link outside the project: "create prefab" refuses,
/// writes nothing there, and leaves the level as it was.
#[cfg(unix)]
#[test]
fn create_prefab_never_writes_through_a_linked_folder() {
    let dir = support::demo_copy();
    let outside = tempfile::tempdir().unwrap();
    let units = dir.path().join("units");
    support::copy_dir(&units, outside.path());
    fs::remove_dir_all(&units).unwrap();
    kiln_core::os::symlink(outside.path(), &units).unwrap();
    let before: Vec<_> = fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut editor = support::open_editor(dir.path()).unwrap();
    editor.apply(Action::Select(vec!["windmill".into()]));
    editor.apply(Action::Run(UiCommand::CreatePrefab));
    let after: Vec<_> = fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        before.len(),
        after.len(),
        "nothing was written outside: {after:?}"
    );
    assert!(editor.entity("rotor").is_some(), "the level is unchanged");
    assert!(!editor.is_dirty());
    assert!(
        editor
            .log()
            .iter()
            .any(|l| l.text.contains("symbolic link")),
        "{:?}",
        editor.log()
    );
}
