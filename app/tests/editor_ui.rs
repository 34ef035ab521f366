//! The real editor, driven headless through egui_kittest: widgets are found by their
//! labels, as a person would find them, and the effects are checked in the editor
//! state and on disk.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kiln::editor::KilnApp;
use support::demo_copy;
use support::ui::{editor, open};

/// Opens the rename dialog on `materials/bark.material` from the asset browser's
/// context menu, as a user does, and types `new` as its new path.
fn rename_bark_to(h: &mut Harness<'_, KilnApp>, new: &str) {
    h.get_by_label("📁 materials").click();
    h.run_steps(3);
    h.get_by_label_contains("bark.material").click_secondary();
    h.run_steps(2);
    h.get_by_label("Rename / move…").click();
    h.run_steps(3);
    h.get_by_label("New path").focus();
    h.run_steps(1);
    // Select all and type the new path.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.get_by_label("New path").type_text(new);
    h.run_steps(2);
}

/// Narrows the asset browser to files matching `text`, as a user does when the file
/// is below the fold.
fn filter_files(h: &mut Harness<'_, KilnApp>, text: &str) {
    h.get_by_label("Filter files").click();
    h.run_steps(1);
    h.get_by_label("Filter files").type_text(text);
    h.run_steps(3);
}

/// Asks the editor to open a folder that is not a project (the current one stays
/// open); returns the message the user is shown.
fn open_a_folder_that_is_not_a_project(h: &mut Harness<'_, KilnApp>) -> &'static str {
    let not_a_project = tempfile::tempdir().unwrap();
    h.state_mut().open_project(not_a_project.path());
    h.run_steps(2);
    "is not a Kiln project: it has no kiln.project file"
}

/// Selects the entity labelled `entity` in the scene tree and adds a component of
/// type `component` from the inspector, as a user does.
fn add_component(h: &mut Harness<'_, KilnApp>, entity: &str, component: &str) {
    h.get_by_label(entity).click();
    h.run_steps(3);
    h.get_by_label("Add component").click();
    h.run_steps(2);
    h.get_by_label(component).click();
    h.run_steps(4);
}

/// Selects the entity labelled `entity`, presses F2, types `text` at the end of its
/// name (or over it, with `replace`) and presses Enter.
fn f2_rename(h: &mut Harness<'_, KilnApp>, entity: &str, text: &str, replace: bool) {
    h.get_by_label(entity).click();
    h.run_steps(3);
    h.key_press(Key::F2);
    h.run_steps(3);
    if replace {
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    }
    h.get_by_label("Rename:").type_text(text);
    h.run_steps(1);
    h.key_press(Key::Enter);
    h.run_steps(3);
}

#[test]
fn opens_the_demo_and_selects_an_entity_in_the_tree() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    assert_eq!(
        editor(&h).level().as_ref().unwrap().file,
        "levels/forest.level"
    );
    h.get_by_label("Boulder").click();
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), vec!["boulder".to_owned()]);
    // The inspector shows its components and their fields.
    h.get_by_label("transform");
    assert_eq!(
        h.get_all_by_label("position").count(),
        3,
        "x, y and z of the position"
    );
}

#[test]
fn add_a_component_edit_a_field_undo_and_redo() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    add_component(&mut h, "Boulder", "rotator");
    let rotator = |h: &Harness<'_, KilnApp>| {
        editor(h)
            .entity("boulder")
            .unwrap()
            .components
            .get("rotator")
            .cloned()
    };
    assert!(rotator(&h).is_some(), "rotator was not added");

    // Type a new speed into the field labelled "speed".
    h.get_by_label("speed").click();
    h.run_steps(2);
    h.get_by_label("speed").type_text("90");
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert_eq!(
        rotator(&h).unwrap()["speed"],
        serde_json::json!(90),
        "{:?}",
        rotator(&h)
    );
    // The preview world was respawned with it.
    let e = editor(&h)
        .preview()
        .level
        .as_ref()
        .unwrap()
        .entity("boulder")
        .unwrap();
    let r = editor(&h).preview().world.rotators.lookup(e).unwrap();
    assert_eq!(editor(&h).preview().world.rotators.get(r).speed, 90.0);

    h.get_by_label("Edit").click();
    h.run_steps(2);
    h.get_by_label_contains("Undo").click();
    h.run_steps(3);
    assert_eq!(
        rotator(&h).unwrap().get("speed"),
        None,
        "undo did not restore the default speed"
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert!(
        rotator(&h).is_none(),
        "second undo did not remove the component"
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, Key::Z);
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, Key::Z);
    h.run_steps(3);
    assert_eq!(rotator(&h).unwrap()["speed"], serde_json::json!(90));
    assert!(editor(&h).is_dirty());

    // Ctrl+S writes canonical JSON that compiles.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
    h.run_steps(2);
    assert!(!editor(&h).is_dirty());
    let text = std::fs::read_to_string(dir.path().join("levels/forest.level")).unwrap();
    assert!(
        text.contains("\"rotator\": {\n          \"speed\": 90\n        }"),
        "{text}"
    );
    assert_eq!(support::kiln(&["compile"], dir.path()).0, 0);
}

#[test]
fn reparent_by_drag_and_drop_keeps_the_world_pose() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let before = editor(&h).world_pose("boulder").unwrap();
    let from = h.get_by_label("Boulder").rect().center();
    let to = h.get_by_label("Grove").rect().center();
    support::ui::drag(&mut h, from, to);
    let boulder = editor(&h).entity("boulder").unwrap();
    assert_eq!(boulder.parent.as_deref(), Some("grove"));
    let after = editor(&h).world_pose("boulder").unwrap();
    assert!(after.abs_diff_eq(before, 1e-3), "{before:?} -> {after:?}");
    // Saved as canonical JSON with no negative zeros (a reparent recomputes the local
    // pose, and rotations decomposed from it come out as -0.0).
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    let saved = std::fs::read_to_string(dir.path().join("levels/forest.level")).unwrap();
    assert!(saved.contains("\"parent\": \"grove\""), "not saved");
    assert!(!saved.contains("-0.0") && !saved.contains("-0,"), "{saved}");
}

#[test]
fn renaming_an_asset_patches_the_files_on_disk_and_undo_reverts_it() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    rename_bark_to(&mut h, "materials/oak_bark.material");
    h.get_by_label("Preview").click();
    h.run_steps(3);
    h.get_by_label_contains("1 references change in 1 files");
    h.get_by_label("Apply").click();
    h.run_steps(4);
    assert!(dir.path().join("materials/oak_bark.material").is_file());
    assert!(!dir.path().join("materials/bark.material").exists());
    let tree = std::fs::read_to_string(dir.path().join("units/tree.unit")).unwrap();
    assert!(tree.contains("\"materials/oak_bark\""), "{tree}");

    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(4);
    assert!(dir.path().join("materials/bark.material").is_file());
    let tree = std::fs::read_to_string(dir.path().join("units/tree.unit")).unwrap();
    assert!(tree.contains("\"materials/bark\""), "{tree}");
}

#[test]
fn unsaved_edits_survive_a_crash_and_can_be_restored() {
    let dir = demo_copy();
    {
        let mut editor = support::open_editor(dir.path()).unwrap();
        editor.apply(kiln::editor::Action::Rename {
            entity: "boulder".into(),
            name: "Big boulder".into(),
        });
        editor.write_recovery(std::time::Duration::ZERO);
        // The process dies here: nothing saved.
    }
    let on_disk = std::fs::read_to_string(dir.path().join("levels/forest.level")).unwrap();
    assert!(!on_disk.contains("Big boulder"));

    let mut h = open(dir.path());
    assert!(
        editor(&h).level().unwrap().recovery().is_some(),
        "the recovered edits are offered"
    );
    h.get_by_label("Restore").click();
    h.run_steps(3);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Big boulder");
    assert!(editor(&h).is_dirty());
    // Undo goes back to what was on disk.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Boulder");
}

#[test]
fn a_broken_level_keeps_the_editor_usable_and_overwrites_nothing() {
    let dir = demo_copy();
    let broken = "{\n  \"entities\": [\n    {\"id\": \"a\",\n  ]\n}\n";
    std::fs::write(dir.path().join("levels/workshop.level"), broken).unwrap();
    let mut h = open(dir.path());
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open level").click();
    h.run_steps(2);
    h.get_by_label("levels/workshop.level").click();
    h.run_steps(3);
    // Still on the forest, with the error said plainly.
    assert_eq!(
        editor(&h).level().as_ref().unwrap().file,
        "levels/forest.level"
    );
    assert!(
        editor(&h)
            .log()
            .iter()
            .any(|l| l.text.contains("levels/workshop.level:4:3")),
        "{:?}",
        editor(&h).log()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("levels/workshop.level")).unwrap(),
        broken
    );
}

#[test]
fn dragging_a_file_onto_a_folder_previews_the_move_and_f2_renames_in_the_browser() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    // The demo's folders do not all fit: narrow the list to the file and its target.
    filter_files(&mut h, "bark");
    let from = h.get_by_label_contains("bark.png").rect().center();
    let to = h.get_by_label_contains("materials").rect().center();
    support::ui::drag(&mut h, from, to);
    // The move is previewed, not done.
    let dialog = h
        .state()
        .panels
        .assets
        .rename
        .clone()
        .expect("the rename dialog opens");
    assert_eq!(
        (dialog.0.as_str(), dialog.1.as_str()),
        ("textures/bark.png", "materials/bark.png")
    );
    assert!(dir.path().join("textures/bark.png").is_file());
    h.get_by_label("Apply").click();
    h.run_steps(4);
    assert!(dir.path().join("materials/bark.png").is_file());
    let bark = std::fs::read_to_string(dir.path().join("materials/bark.material")).unwrap();
    assert!(bark.contains("\"materials/bark\""), "{bark}");

    // F2 with a file selected in the browser opens the rename dialog for that file.
    h.state_mut().panels.assets.filter.clear();
    filter_files(&mut h, "grass.png");
    h.get_by_label_contains("grass.png").click();
    h.run_steps(2);
    h.key_press(Key::F2);
    h.run_steps(2);
    assert_eq!(
        h.state().panels.assets.rename.as_ref().map(|d| d.0.clone()),
        Some("textures/grass.png".into())
    );
    // ... and the rename goes through: type the new path, apply.
    h.get_by_label("New path").focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.get_by_label("New path").type_text("textures/meadow.png");
    h.run_steps(3);
    h.get_by_label("Preview").click();
    h.run_steps(3);
    h.get_by_label("Apply").click();
    h.run_steps(4);
    assert!(dir.path().join("textures/meadow.png").is_file());
    assert!(!dir.path().join("textures/grass.png").exists());
    let grass = std::fs::read_to_string(dir.path().join("materials/grass.material")).unwrap();
    assert!(grass.contains("\"textures/meadow\""), "{grass}");
}

#[test]
fn the_problems_list_fixes_a_non_canonical_reference() {
    let dir = demo_copy();
    let unit = dir.path().join("units/crate.unit");
    let text = std::fs::read_to_string(&unit)
        .unwrap()
        .replace("\"materials/wood\"", "\"Materials/Wood\"");
    std::fs::write(&unit, &text).unwrap();
    let mut h = open(dir.path());
    h.get_by_label_contains("Problems").click();
    h.run_steps(2);
    h.get_by_label("Fix: use \"materials/wood\"").click();
    h.run_steps(3);
    let fixed = std::fs::read_to_string(&unit).unwrap();
    assert_eq!(
        fixed,
        text.replace("\"Materials/Wood\"", "\"materials/wood\"")
    );
    assert!(
        editor(&h).files().findings().is_empty(),
        "{:?}",
        editor(&h).files().findings()
    );
    // A fix is one step of the history, like a move.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(4);
    assert_eq!(std::fs::read_to_string(&unit).unwrap(), text);
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, Key::Z);
    h.run_steps(4);
    assert_eq!(std::fs::read_to_string(&unit).unwrap(), fixed);
}

/// Fix on a non-canonical reference renames the file it names; the preview opens
/// over the Problems list, where the user clicked.
#[test]
fn fixing_a_non_canonical_reference_renames_its_file_from_the_problems_list() {
    let dir = demo_copy();
    std::fs::create_dir_all(dir.path().join("Textures")).unwrap();
    std::fs::write(dir.path().join("Textures/Leaf.png"), "PNG").unwrap();
    std::fs::write(dir.path().join("bake.json"), r#"["Textures/Leaf.png"]"#).unwrap();
    let mut h = open(dir.path());
    h.get_by_label_contains("Problems").click();
    h.run_steps(2);
    let fixes: Vec<_> = h
        .get_all_by_label("Fix: rename to textures/leaf.png")
        .collect();
    assert_eq!(fixes.len(), 2, "the file's name and the reference");
    fixes[1].click();
    h.run_steps(3);
    h.get_by_label_contains("references change in 1 files");
    h.get_by_label("Apply").click();
    h.run_steps(4);
    assert!(dir.path().join("textures/leaf.png").is_file());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("bake.json")).unwrap(),
        r#"["textures/leaf.png"]"#
    );
}

#[test]
fn the_rename_preview_lists_ambiguous_references_it_leaves_alone() {
    let dir = demo_copy();
    std::fs::create_dir_all(dir.path().join("tools")).unwrap();
    std::fs::write(dir.path().join("tools/list.json"), r#"["materials/bark"]"#).unwrap();
    std::fs::write(dir.path().join("materials/bark.json"), "{}").unwrap();
    let mut h = open(dir.path());
    rename_bark_to(&mut h, "materials/wood/bark.material");
    h.get_by_label("Preview").click();
    h.run_steps(3);
    h.get_by_label_contains(
        "not patched, ambiguous: tools/list.json:1:2 (/0): \"materials/bark\" could be materials/bark.json or materials/bark.material",
    );
    h.get_by_label("1 ambiguous references will be left as they are.");
    h.get_by_label("Apply").click();
    h.run_steps(4);
    // The rename went through (a positive control: an Apply that did nothing
    // would leave the list alone too), the unambiguous references with it.
    assert!(dir.path().join("materials/wood/bark.material").is_file());
    assert!(!dir.path().join("materials/bark.material").exists());
    let unit = std::fs::read_to_string(dir.path().join("units/tree.unit")).unwrap();
    assert!(unit.contains("\"materials/wood/bark\""), "{unit}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tools/list.json")).unwrap(),
        r#"["materials/bark"]"#
    );
}

#[test]
fn problems_follow_changes_made_outside_the_editor() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    assert!(editor(&h).files().findings().is_empty());
    std::fs::remove_file(dir.path().join("materials/metal.material")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while editor(&h).files().findings().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        h.run_steps(1);
    }
    let text: Vec<String> = editor(&h)
        .files()
        .findings()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        text.iter()
            .any(|t| t.contains("missing: materials/metal.material does not exist")),
        "{text:?}"
    );
}

#[test]
fn a_folder_that_is_not_a_project_is_explained_and_the_current_project_stays() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let message = open_a_folder_that_is_not_a_project(&mut h);
    assert_eq!(
        editor(&h).files().project().root(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
    h.get_by_label_contains(message);
}

#[test]
fn a_missing_prefab_is_reported_and_the_level_stays_editable() {
    let dir = demo_copy();
    std::fs::remove_file(dir.path().join("units/lamp.unit")).unwrap();
    let mut h = open(dir.path());
    let error = editor(&h)
        .preview_state()
        .compile_error()
        .expect("the level does not compile")
        .to_string();
    assert!(
        error.contains("prefab \"units/lamp\" cannot be read"),
        "{error}"
    );
    // Still editable: rename an entity, and the edit is in the document.
    f2_rename(&mut h, "Boulder", "Rock", true);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Rock");
    assert!(editor(&h).is_dirty());
}

/// F2 renames the selected entity: type, Enter, and the name is committed, saved,
/// and the shortcuts work again (they stayed off until restart).
#[test]
fn f2_renames_an_entity_and_shortcuts_work_afterwards() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    f2_rename(&mut h, "Boulder", "Big Rock", true);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Big Rock");
    assert!(h.state().panels.renaming.is_none(), "the name field closed");
    assert!(
        h.get_all_by_label("Big Rock").count() >= 1,
        "the tree shows it"
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    let saved = std::fs::read_to_string(dir.path().join("levels/forest.level")).unwrap();
    assert!(saved.contains("\"name\": \"Big Rock\""), "{saved}");
    // Shortcuts work again: Delete removes the selected entity.
    h.key_press(Key::Delete);
    h.run_steps(3);
    assert!(editor(&h).entity("boulder").is_none(), "Delete did nothing");

    // Esc cancels, clicking away commits.
    h.get_by_label("Firefly").click();
    h.run_steps(3);
    h.key_press(Key::F2);
    h.run_steps(3);
    h.get_by_label("Rename:").type_text(" Two");
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert_eq!(editor(&h).entity("firefly").unwrap().name, "Firefly");
    h.key_press(Key::F2);
    h.run_steps(3);
    h.get_by_label("Rename:").type_text(" Two");
    h.run_steps(1);
    h.get_by_label("Ground").click();
    h.run_steps(3);
    assert_eq!(editor(&h).entity("firefly").unwrap().name, "Firefly Two");
}

/// Asks the window to close, as the window manager's close button does.
fn request_close(h: &mut Harness<'_, KilnApp>) {
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
}

/// Discard on close means discarded: the recovery file goes and stays gone, and the
/// next start offers nothing back.
#[test]
fn discarded_edits_do_not_come_back_as_a_recovery_offer() {
    let dir = demo_copy();
    let recovery = dir.path().join(".kiln/recovery/levels/forest.level");
    {
        let mut h = open(dir.path());
        f2_rename(&mut h, "Boulder", " gone", false);
        assert!(editor(&h).is_dirty());
        assert!(recovery.is_file(), "unsaved edits are kept for a crash");
        request_close(&mut h);
        h.run_steps(3);
        h.get_by_label("Discard").click();
        h.run_steps(6);
        assert!(!recovery.exists(), "the recovery file came back");
    }
    let h = open(dir.path());
    assert!(
        editor(&h).level().unwrap().recovery().is_none(),
        "discarded edits offered back"
    );
    let on_disk = std::fs::read_to_string(dir.path().join("levels/forest.level")).unwrap();
    assert!(!on_disk.contains("gone"));
}

/// Double-clicking a reference inside the level already open, with unsaved edits,
/// selects its entity: no "save changes?" question, nothing reloaded, nothing lost.
#[test]
fn jumping_within_the_open_level_only_selects() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    if let Some(e) = h.state_mut().editor.as_mut() {
        e.apply(kiln::editor::Action::Rename {
            entity: "boulder".into(),
            name: "Boulder edited".into(),
        });
    }
    h.run_steps(3);
    assert!(editor(&h).is_dirty());
    // What double-clicking a reference of the open level in the results list (or
    // a finding in Problems) asks for: open its level and select the entity.
    h.state_mut().apply_actions(vec![
        kiln::editor::Action::OpenLevel("levels/forest.level".into()),
        kiln::editor::Action::Select(vec!["windmill".into()]),
    ]);
    h.run_steps(4);
    assert!(
        h.query_by_label("Discard").is_none(),
        "asked to save before jumping within the open level"
    );
    assert_eq!(editor(&h).selection(), vec!["windmill".to_owned()]);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Boulder edited");
    assert!(editor(&h).is_dirty());
}

/// Adding a mesh component gives it defaults that compile: the level keeps working,
/// the empty mesh draws nothing and the inspector says so; the saved level compiles.
#[test]
fn adding_a_mesh_component_keeps_the_level_compiling() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    add_component(&mut h, "Grove", "mesh");
    assert!(
        editor(&h)
            .entity("grove")
            .unwrap()
            .components
            .contains_key("mesh")
    );
    assert!(
        editor(&h).preview_state().compile_error().is_none(),
        "{:?}",
        editor(&h).preview_state().compile_error()
    );
    h.get_by_label("⚠ nothing drawn");
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    let (code, out, err) = support::kiln(&["compile", "levels/forest"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
}

/// The find-references list follows a rename: its file's new name, its references
/// as they are now (it went stale before).
#[test]
fn find_references_follows_a_rename() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("📁 materials").click();
    h.run_steps(3);
    h.get_by_label_contains("bark.material").click_secondary();
    h.run_steps(2);
    h.get_by_label("Find references").click();
    h.run_steps(3);
    h.get_by_label("References to materials/bark.material");
    h.get_by_label("🎨 bark.material").click_secondary();
    h.run_steps(2);
    h.get_by_label("Rename / move…").click();
    h.run_steps(3);
    h.get_by_label("New path").focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.get_by_label("New path")
        .type_text("materials/oak.material");
    h.run_steps(2);
    h.get_by_label("Preview").click();
    h.run_steps(3);
    h.get_by_label("Apply").click();
    h.run_steps(4);
    h.get_by_label("References to materials/oak.material");
    assert!(
        h.query_by_label("Nothing.").is_none(),
        "the list lost its references"
    );
    h.get_by_label_contains("units/tree.unit:9:23 (entity \"trunk\"");
}

/// Undoing back to the saved state makes the level clean again (the status bar says
/// "saved" and closing does not ask); undoing past it makes it unsaved again.
#[test]
fn undoing_back_to_the_saved_state_clears_the_unsaved_mark() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    f2_rename(&mut h, "Boulder", "Rock", true);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    h.get_by_label("saved");
    // Boulder is still selected: F2 again.
    h.key_press(Key::F2);
    h.run_steps(3);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.get_by_label("Rename:").type_text("Stone");
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Stone");
    h.get_by_label("unsaved");
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Rock");
    h.get_by_label("saved");
    assert!(!editor(&h).is_dirty());
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert_eq!(editor(&h).entity("boulder").unwrap().name, "Boulder");
    h.get_by_label("unsaved");
}

/// F on a group frames its children, not its origin: the camera looks at the middle
/// of the trees of the grove and backs off far enough to see all of them.
#[test]
fn f_frames_a_groups_children() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Grove").click();
    h.run_steps(3);
    h.key_press(Key::F);
    h.run_steps(3);
    let camera = &h.state().panels.camera;
    // Trees at x -10..-3 and z -7..-2 in the world; the grove's origin is (-6, 0, -4).
    assert!(
        (camera.target.x + 6.5).abs() < 1.0 && (camera.target.z + 4.5).abs() < 1.0,
        "{:?}",
        camera.target
    );
    assert!(
        camera.target.y > 0.5,
        "the trees' height counts: {:?}",
        camera.target
    );
    assert!(camera.distance > 8.0, "{}", camera.distance);
}

/// A new entity lands on what is under the middle of the view when the pointer is
/// elsewhere (here, in the tree): on the surface of the windmill the camera frames,
/// under its parent, not inside the windmill at the orbit target nor at the origin.
#[test]
fn a_new_entity_lands_on_the_surface_in_the_middle_of_the_view() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Windmill").click();
    h.run_steps(3);
    h.key_press(Key::F);
    h.run_steps(3);
    let camera = h.state().panels.camera;
    let target = camera.target;
    assert!(
        target.length() > 1.0,
        "the windmill is away from the origin"
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::N);
    h.run_steps(5);
    let id = editor(&h).selection()[0].clone();
    assert_eq!(
        editor(&h).entity(&id).unwrap().parent.as_deref(),
        Some("windmill")
    );
    let world = glam::Vec3::from(editor(&h).world_pose(&id).unwrap().translation);
    // On the line of sight through the middle of the view...
    let eye = camera.eye();
    let sight = (target - eye).normalize();
    let along = (world - eye).dot(sight);
    let off = (world - eye - sight * along).length();
    assert!(off < 0.02, "{world:?} is {off} m off the line of sight");
    // ...where it meets the windmill, in front of the point orbited inside it.
    let to_target = (target - eye).length();
    assert!(
        along < to_target - 0.2 && along > 1.0,
        "{along} m along the sight, the target at {to_target} m"
    );
}

/// A prefab instance opens up in the tree; a part's field edited in the inspector is
/// recorded as an override on the instance, marked, and "revert to prefab" removes
/// it without a trace.
#[test]
fn editing_a_prefab_part_records_an_override_and_revert_removes_it() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let before = editor(&h).entity("tree_01").unwrap().clone();
    h.get_by_label("📦 Tree 1").click();
    h.run_steps(3);
    h.key_press(Key::ArrowRight);
    h.run_steps(3);
    h.get_all_by_label("Trunk").next().unwrap().click();
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["tree_01/trunk".to_owned()]);
    h.get_by_label_contains("units/tree.unit (tree_01)");
    // Move this tree's trunk only: type a new x into its position.
    let x = || h.get_all_by_label("position").next().unwrap();
    x().click();
    h.run_steps(2);
    h.get_all_by_label("position")
        .next()
        .unwrap()
        .type_text("5");
    h.key_press(Key::Enter);
    h.run_steps(4);
    let instance = editor(&h).entity("tree_01").unwrap();
    assert_eq!(
        instance.overrides["trunk"]["transform"]["position"],
        serde_json::json!([5, 1.5, 0]),
        "{instance:?}"
    );
    let part = editor(&h).level().unwrap().part("tree_01/trunk").unwrap();
    assert!(
        part.overridden
            .contains(&("transform".into(), "position".into()))
    );
    assert!(
        editor(&h).entity("tree_02").unwrap().overrides.is_empty(),
        "the other trees keep the prefab's trunk"
    );
    // The preview uses the override.
    assert_eq!(editor(&h).preview_state().compile_error(), None);
    h.get_by_label("Revert to prefab").click();
    h.run_steps(4);
    assert_eq!(editor(&h).entity("tree_01").unwrap(), &before);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    let saved = std::fs::read_to_string(dir.path().join("levels/forest.level")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let tree_01 = saved["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "tree_01")
        .unwrap();
    assert!(tree_01.get("overrides").is_none(), "no trace: {tree_01}");
}

/// A `.unit` opens from the asset browser and is edited like a level; saved, the
/// levels that use it show the change.
#[test]
fn a_unit_opens_from_the_asset_browser_and_levels_using_it_follow() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let trunk_x =
        |h: &Harness<'_, KilnApp>| editor(h).world_pose("tree_01/trunk").unwrap().translation.x;
    let before = trunk_x(&h);
    // The browser is short: filter it down to the file, as a user would.
    filter_files(&mut h, "tree.unit");
    h.get_by_label("📦 tree.unit").click_secondary();
    h.run_steps(2);
    h.get_by_label("Open").click();
    h.run_steps(4);
    assert!(editor(&h).is_open("units/tree.unit"));
    h.get_by_label("Trunk").click();
    h.run_steps(3);
    h.get_all_by_label("position").next().unwrap().click();
    h.run_steps(2);
    h.get_all_by_label("position")
        .next()
        .unwrap()
        .type_text("2");
    h.key_press(Key::Enter);
    h.run_steps(3);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    let unit = std::fs::read_to_string(dir.path().join("units/tree.unit")).unwrap();
    let unit: serde_json::Value = serde_json::from_str(&unit).unwrap();
    assert_eq!(
        unit["entities"][0]["components"]["transform"]["position"],
        serde_json::json!([2, 1.5, 0])
    );
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::OpenLevel(
            "levels/forest.level".into(),
        )]);
    h.run_steps(3);
    assert!(
        (trunk_x(&h) - before - 2.0).abs() < 1e-4,
        "{} vs {before}",
        trunk_x(&h)
    );
}

/// Several entities selected: the inspector edits what they share; a vector field
/// whose values differ shows as mixed, typing x changes x alone on each, and one
/// undo reverts all of them.
#[test]
fn editing_several_entities_at_once_is_one_undo_step() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Boulder").click();
    h.run_steps(3);
    h.get_by_label("Firefly")
        .click_modifiers(egui::Modifiers::COMMAND);
    h.run_steps(3);
    assert_eq!(
        editor(&h).selection().len(),
        2,
        "{:?}",
        editor(&h).selection()
    );
    h.get_by_label_contains("2 entities selected");
    assert_eq!(
        h.get_all_by_label("position (mixed)").count(),
        3,
        "x, y and z"
    );
    let position = |h: &Harness<'_, KilnApp>, id: &str| -> Vec<f64> {
        editor(h).entity(id).unwrap().components["transform"]["position"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let (boulder, firefly) = (position(&h, "boulder"), position(&h, "firefly"));
    h.get_all_by_label("position (mixed)")
        .next()
        .unwrap()
        .click();
    h.run_steps(2);
    h.get_all_by_label("position (mixed)")
        .next()
        .unwrap()
        .type_text("1");
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert_eq!(position(&h, "boulder"), [1.0, 0.6, 6.0]);
    assert_eq!(position(&h, "firefly"), [1.0, 2.0, 3.0]);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert_eq!(position(&h, "boulder"), boulder);
    assert_eq!(position(&h, "firefly"), firefly);
}

/// "Apply overrides to prefab" writes an instance's overrides into its unit (here a
/// nested one: the lamp's head is a bulb) so that every instance gets them, clears
/// them on the instance, and one undo puts the unit back byte for byte.
#[test]
fn applying_overrides_writes_the_unit_and_undo_restores_it() {
    let dir = demo_copy();
    let unit_path = dir.path().join("units/lamp.unit");
    let unit_before = std::fs::read(&unit_path).unwrap();
    let mut h = open(dir.path());
    let glass = |h: &Harness<'_, KilnApp>, lamp: &str| {
        editor(h)
            .level()
            .and_then(|l| l.part(&format!("{lamp}/head/glass")))
            .unwrap()
            .entity
            .components["mesh"]["material"]
            .clone()
    };
    assert_eq!(glass(&h, "lamp_2"), "materials/red_glow");
    assert_ne!(glass(&h, "lamp_1"), "materials/red_glow");
    h.get_by_label("📦 Lamp 2").click();
    h.run_steps(3);
    h.get_by_label("Apply overrides to prefab").click();
    h.run_steps(4);
    assert!(editor(&h).entity("lamp_2").unwrap().overrides.is_empty());
    assert_eq!(
        glass(&h, "lamp_1"),
        "materials/red_glow",
        "every lamp has it now"
    );
    assert_eq!(glass(&h, "lamp_2"), "materials/red_glow");
    let unit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&unit_path).unwrap()).unwrap();
    let head = unit["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "head")
        .unwrap();
    assert_eq!(
        head["overrides"]["glass"]["mesh"]["material"],
        "materials/red_glow"
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(4);
    assert_eq!(std::fs::read(&unit_path).unwrap(), unit_before);
    assert!(!editor(&h).entity("lamp_2").unwrap().overrides.is_empty());
    assert_ne!(glass(&h, "lamp_1"), "materials/red_glow");
}

/// "Create prefab from selection" asks for a name, writes the selected entities to
/// a new unit and replaces them with one instance of it, where they were; one undo
/// removes the unit and brings them back.
#[test]
fn creating_a_prefab_from_a_selection_and_undoing_it() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let rotor_before = editor(&h).world_pose("rotor").unwrap();
    h.get_by_label("Windmill").click();
    h.run_steps(3);
    h.get_by_label("Edit").click();
    h.run_steps(2);
    h.get_by_label("Create prefab from selection").click();
    h.run_steps(3);
    // Named after the selection, confirmed with Enter.
    h.get_by_label("Makes units/windmill.unit");
    h.key_press(Key::Enter);
    h.run_steps(4);
    let unit_path = dir.path().join("units/windmill.unit");
    assert!(unit_path.is_file(), "{:?}", editor(&h).log());
    let instance = editor(&h).entity("windmill").unwrap();
    assert_eq!(instance.prefab.as_deref(), Some("units/windmill"));
    assert!(
        editor(&h).entity("rotor").is_none(),
        "the parts live in the unit now"
    );
    let rotor_after = editor(&h).world_pose("windmill/rotor").unwrap();
    assert!(
        rotor_after.abs_diff_eq(rotor_before, 1e-4),
        "nothing moved: {rotor_before:?} vs {rotor_after:?}"
    );
    assert_eq!(editor(&h).preview_state().compile_error(), None);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(4);
    assert!(!unit_path.exists());
    assert!(editor(&h).entity("rotor").is_some());
    assert_eq!(editor(&h).entity("windmill").unwrap().prefab, None);
}

/// A mesh picked in the asset browser shows in the inspector from its schema; an
/// edit is written to the file at once, the viewport's shapes follow, and one undo
/// puts the file back byte for byte.
#[test]
fn a_mesh_is_edited_in_the_inspector_and_undo_restores_the_file() {
    let dir = demo_copy();
    let path = dir.path().join("meshes/plank.mesh");
    let before = std::fs::read(&path).unwrap();
    let mut h = open(dir.path());
    filter_files(&mut h, "plank");
    h.get_by_label("🔷 plank.mesh").click();
    h.run_steps(3);
    h.get_by_label_contains("meshes/plank.mesh");
    h.get_all_by_label("size").next().unwrap().click();
    h.run_steps(2);
    h.get_all_by_label("size").next().unwrap().type_text("3");
    h.key_press(Key::Enter);
    h.run_steps(4);
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written["size"][0].as_f64(), Some(3.0), "{written}");
    assert_eq!(written["size"][1].as_f64(), Some(0.1));
    let id = kiln_core::ResourceId::of(
        &kiln_core::ResourcePath::parse("meshes/plank").unwrap(),
        "mesh",
    );
    assert_eq!(
        editor(&h).preview_state().resources().meshes[&id].size.x,
        3.0,
        "the viewport follows"
    );
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(4);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(
        editor(&h).preview_state().resources().meshes[&id].size.x,
        2.0
    );
}

/// Opening a project frames the level at once; selecting an entity afterwards does
/// not move the camera (the framing used to wait for the first action, so the first
/// click in the viewport zoomed onto what it selected).
#[test]
fn selecting_after_opening_does_not_move_the_camera() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let (target, distance) = {
        let c = &h.state().panels.camera;
        (c.target, c.distance)
    };
    h.get_by_label("Boulder").click();
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["boulder".to_owned()]);
    let c = &h.state().panels.camera;
    assert_eq!((c.target, c.distance), (target, distance));
}

/// W, E and R switch the handle between move, rotate and scale, as in Godot and
/// Unity; the View menu names them.
#[test]
fn w_e_r_switch_the_handle_tool() {
    use kiln::editor::Tool;
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Boulder").click();
    h.run_steps(2);
    for (key, tool) in [
        (Key::E, Tool::Rotate),
        (Key::R, Tool::Scale),
        (Key::W, Tool::Move),
    ] {
        h.key_press(key);
        h.run_steps(2);
        assert_eq!(h.state().panels.viewport.tool, tool);
    }
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label_contains("Rotate tool").click();
    h.run_steps(2);
    assert_eq!(h.state().panels.viewport.tool, Tool::Rotate);
}

/// F frames a mesh whole, by the size of its shape, not its unit box: the camera
/// ends up outside the boulder (a sphere 2.4 across, scaled 1.2), not inside it.
#[test]
fn f_frames_a_mesh_by_its_size() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let framed = |h: &mut Harness<'_, KilnApp>, entity: &str| {
        h.get_by_label(entity).click();
        h.run_steps(3);
        h.key_press(Key::F);
        h.run_steps(3);
        h.state().panels.camera.distance
    };
    let at_start = h.state().panels.camera.distance;
    let boulder = framed(&mut h, "Boulder");
    // F did something: the camera moved in or out from where it started.
    assert_ne!(boulder, at_start, "F left the camera where it was");
    let radius = 2.4 * 1.2 / 2.0;
    assert!(boulder > 2.0 * radius, "{boulder}");
    // By its size: the firefly, a small sphere, is framed from closer.
    let firefly = framed(&mut h, "Firefly");
    assert!(firefly < boulder, "firefly {firefly}, boulder {boulder}");
}

/// A material's colour set from the inspector's action is written to the file and
/// the viewport's colours follow at once.
#[test]
fn a_material_edit_reaches_the_resources_the_viewport_draws() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::SetAssetField {
            file: "materials/bark.material".into(),
            field: "color".into(),
            value: serde_json::json!([1.0, 0.0, 0.0, 1.0]),
            continuing: false,
        }]);
    h.run_steps(2);
    let id = kiln_core::ResourceId::of(
        &kiln_core::ResourcePath::parse("materials/bark").unwrap(),
        "material",
    );
    assert_eq!(
        editor(&h).preview_state().resources().materials[&id].color,
        glam::Vec4::new(1.0, 0.0, 0.0, 1.0)
    );
    let text = std::fs::read_to_string(dir.path().join("materials/bark.material")).unwrap();
    assert!(
        text.contains("\"texture\": \"textures/bark\""),
        "other fields kept: {text}"
    );
}

/// A toast goes away by itself after a few seconds.
#[test]
fn toasts_leave_the_screen() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let message = open_a_folder_that_is_not_a_project(&mut h);
    assert!(h.query_by_label_contains(message).is_some());
    // Seven seconds of frames at 60 per second.
    h.run_steps(420);
    assert!(
        h.query_by_label_contains(message).is_none(),
        "the toast stayed"
    );
}

/// ↗ beside a reference shows its file in the asset browser (an action like any
/// other): the Assets tab, the file selected.
#[test]
fn show_in_asset_browser_reveals_the_file() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Ground").click();
    h.run_steps(3);
    h.get_by_label("Problems (0)").click();
    h.run_steps(2);
    // The mesh's, then the material's.
    h.get_all_by_label("Show in asset browser")
        .nth(1)
        .unwrap()
        .click();
    h.run_steps(3);
    assert_eq!(
        h.state().panels.assets.selected.as_deref(),
        Some("materials/grass.material")
    );
    assert_eq!(h.state().panels.bottom, kiln::editor::BottomTab::Assets);
    h.get_by_label("🎨 grass.material");
}

/// Without a GPU (the glow renderer), textures still get thumbnails, decoded, and
/// materials keep their icons and say why. A `.kiln/thumbnails` planted as a link to
/// a folder outside the project gets nothing written through it, and the browser
/// says that thumbnails are not kept.
#[test]
fn without_a_gpu_textures_get_thumbnails_and_a_planted_link_is_not_written_through() {
    let dir = demo_copy();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".kiln")).unwrap();
    kiln_core::os::symlink(outside.path(), dir.path().join(".kiln/thumbnails")).unwrap();
    let mut h = open(dir.path());
    filter_files(&mut h, "grass");
    let mut shown = false;
    for _ in 0..300 {
        h.run_steps(1);
        let thumbnails = h.state().panels.thumbnails.as_ref().unwrap();
        if thumbnails.shown("textures/grass.png").is_some()
            && thumbnails.error("materials/grass.material").is_some()
        {
            shown = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        shown,
        "the texture's thumbnail, and the material's reason for none"
    );
    let thumbnails = h.state().panels.thumbnails.as_ref().unwrap();
    assert!(thumbnails.shown("materials/grass.material").is_none());
    assert_eq!(
        thumbnails.error("materials/grass.material"),
        Some("no GPU to draw thumbnails with")
    );
    h.get_by_label("🖼 grass.png").click();
    h.run_steps(3);
    h.get_by_label("Thumbnail of textures/grass.png");
    h.get_by_label_contains("Thumbnails are not kept: cannot write .kiln/thumbnails");
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written through the link"
    );
}

/// Dragging the move handle's X arrow with the mouse moves the selection along X,
/// and the view does not turn: the drag belongs to the handle from its first frame.
#[test]
fn dragging_the_move_handle_moves_the_selection_and_leaves_the_camera_alone() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::Select(vec!["boulder".into()])]);
    h.key_press(Key::F);
    h.run_steps(4);
    let origin = glam::Vec3::from(editor(&h).world_pose("boulder").unwrap().translation);
    let (yaw, pitch) = {
        let c = &h.state().panels.camera;
        (c.yaw, c.pitch)
    };
    let screen = |h: &Harness<'_, KilnApp>, p: glam::Vec3| {
        let panels = &h.state().panels;
        let rect = panels.viewport.rect.unwrap();
        let c = panels.camera.view_projection(rect.width() / rect.height()) * p.extend(1.0);
        egui::pos2(
            rect.center().x + c.x / c.w * rect.width() * 0.5,
            rect.center().y - c.y / c.w * rect.height() * 0.5,
        )
    };
    // Midway along the X arrow (its length is 12% of the camera's distance).
    let len = h.state().panels.camera.distance * 0.12;
    let grab = screen(&h, origin + glam::Vec3::X * len * 0.6);
    let along = screen(&h, origin + glam::Vec3::X * len) - screen(&h, origin);
    let step = along.normalized() * 8.0;
    h.hover_at(grab);
    h.run_steps(1);
    h.event(egui::Event::PointerButton {
        pos: grab,
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    h.run_steps(1);
    let mut at = grab;
    for _ in 0..6 {
        at += step;
        h.hover_at(at);
        h.run_steps(1);
    }
    h.event(egui::Event::PointerButton {
        pos: at,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.run_steps(2);
    let moved = glam::Vec3::from(editor(&h).world_pose("boulder").unwrap().translation);
    assert!(moved.x > origin.x + 0.05, "{origin} -> {moved}");
    assert!((moved.y - origin.y).abs() < 1e-4 && (moved.z - origin.z).abs() < 1e-4);
    let c = &h.state().panels.camera;
    assert_eq!((c.yaw, c.pitch), (yaw, pitch), "the view did not turn");
}

/// Thumbnails are made for the rows on screen only: an open folder of 300 textures
/// lays out every row, but only the few in view are decoded.
#[test]
fn only_the_rows_in_view_get_thumbnails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kiln.project"), "{}").unwrap();
    std::fs::create_dir(dir.path().join("textures")).unwrap();
    let pixel = image::RgbImage::from_pixel(2, 2, image::Rgb([10, 200, 30]));
    for i in 0..300 {
        pixel
            .save(dir.path().join(format!("textures/t{i:03}.png")))
            .unwrap();
    }
    let mut h = open(dir.path());
    h.get_by_label("📁 textures").click();
    let mut decoded = 0;
    for _ in 0..300 {
        h.run_steps(1);
        let thumbnails = h.state().panels.thumbnails.as_ref().unwrap();
        decoded = thumbnails.stats().decoded;
        if decoded > 0 && !thumbnails.busy() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let thumbnails = h.state().panels.thumbnails.as_ref().unwrap();
    assert!(
        thumbnails.shown("textures/t000.png").is_some(),
        "the first row has one"
    );
    assert!(
        thumbnails.shown("textures/t299.png").is_none(),
        "the last row is out of view"
    );
    assert!(decoded > 0 && decoded < 40, "{decoded} decoded of 300");
}

/// Crafted files in `.kiln/thumbnails` (garbage, or a PNG declaring a huge picture)
/// are misses: the thumbnail is made again and replaces them.
#[test]
fn crafted_cached_thumbnails_are_made_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kiln.project"), "{}").unwrap();
    std::fs::create_dir(dir.path().join("textures")).unwrap();
    image::RgbImage::from_pixel(4, 4, image::Rgb([200, 30, 30]))
        .save(dir.path().join("textures/red.png"))
        .unwrap();
    let cache = dir.path().join(".kiln/thumbnails");
    let run = |crafted: Option<&[u8]>| {
        if let Some(bytes) = crafted {
            for f in std::fs::read_dir(&cache).unwrap() {
                std::fs::write(f.unwrap().path(), bytes).unwrap();
            }
        }
        let mut h = open(dir.path());
        h.get_by_label("📁 textures").click();
        for _ in 0..300 {
            h.run_steps(1);
            if h.state()
                .panels
                .thumbnails
                .as_ref()
                .unwrap()
                .shown("textures/red.png")
                .is_some()
            {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        h.state().panels.thumbnails.as_ref().unwrap().stats()
    };
    assert_eq!(run(None).decoded, 1);
    assert_eq!(run(None).from_cache, 1, "a good cached thumbnail is used");
    let mut huge = Vec::new();
    image::GrayImage::new(4_000, 4_000)
        .write_to(
            &mut std::io::Cursor::new(&mut huge),
            image::ImageFormat::Png,
        )
        .unwrap();
    for crafted in [&b"not a png"[..], &huge] {
        let stats = run(Some(crafted));
        assert_eq!((stats.from_cache, stats.decoded), (0, 1), "{stats:?}");
    }
    // The crafted file was replaced by a real thumbnail.
    assert_eq!(run(None).from_cache, 1);
}

/// A compile error stays structured to Problems: the error names the entity,
/// component and field, and its row is there to double-click (where a double-click
/// goes is tested as plain data beside the panel, `panels/problems.rs`: kittest
/// 0.37 delivers no double-click).
#[test]
fn a_compile_error_is_listed_with_its_entity_component_and_field() {
    let dir = demo_copy();
    let level = dir.path().join("levels/forest.level");
    let text = std::fs::read_to_string(&level).unwrap();
    // The boulder's position as text: a field error naming entity, component, field.
    let broken = text.replacen("\"position\": [-2, 0.6, 6]", "\"position\": \"left\"", 1);
    assert_ne!(broken, text, "the fixture moved");
    std::fs::write(&level, &broken).unwrap();
    let mut h = open(dir.path());
    let error = editor(&h)
        .preview_state()
        .compile_error()
        .expect("the level compiles")
        .to_string();
    assert!(
        error.contains("entity \"boulder\", component \"transform\", field \"position\""),
        "{error}"
    );
    h.get_by_label_contains("Problems (").click();
    h.run_steps(2);
    h.get_by_label_contains("⛔ levels/forest.level: entity \"boulder\"");
}

/// Problems puts the errors first and leaves the files no boot level reaches out
/// until asked: a missing mesh is what a designer sees, and one click shows the
/// unused file below it.
#[test]
fn problems_show_errors_first_and_unused_files_on_request() {
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in [
        ("kiln.project", r#"{"boot_levels": ["levels/a"]}"#),
        (
            "levels/a.level",
            r#"{"entities": [{"id": "rock", "components": {"mesh": {"mesh": "meshes/gone"}}}]}"#,
        ),
        ("materials/spare.material", "{}"),
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let mut h = open(dir.path());
    // What the checker found: the error and the unused file.
    let found: Vec<String> = (editor(&h).files().findings().iter())
        .map(ToString::to_string)
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    h.get_by_label("Problems (1)").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("meshes/gone").is_some());
    assert!(
        h.query_by_label_contains("spare.material").is_none(),
        "the unused file is left out"
    );
    h.get_by_label("Show 1 unused file").click();
    h.run_steps(2);
    let missing = h.get_by_label_contains("meshes/gone").rect();
    let unused = h.get_by_label_contains("spare.material").rect();
    assert!(
        missing.top() < unused.top(),
        "the error is above the warning"
    );
    assert!(h.query_by_label("Problems (2)").is_some());
}
