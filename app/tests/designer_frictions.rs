//! The frictions a designer hit in the editor, each fixed and held here: broken
//! files keep their last good version on screen and say where they broke; copy and
//! paste, Tab and keyboard reparenting reach the scene tree; undo keeps what it
//! touched selected; prefabs made from a selection sit where it was; part
//! inspectors follow an edited unit; mixed fields show no value; duplicates get
//! unique names; the inspector follows a renamed asset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::{atomic_write, until};

use std::fs;

use kiln::editor::{Action, Editor, Effect, Severity, UiCommand};

use kiln_core::{ResourceId, ResourcePath};

fn material(editor: &Editor, path: &str) -> Option<kiln::render::resources::MaterialLook> {
    let id = ResourceId::of(&ResourcePath::parse(path).unwrap(), "material");
    editor
        .preview_state()
        .resources()
        .materials
        .get(&id)
        .cloned()
}

#[test]
fn a_broken_material_keeps_its_last_good_look_and_says_where_it_broke() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    let good = material(&editor, "materials/bark").expect("bark is loaded");
    let file = dir.path().join("materials/bark.material");
    let text = fs::read_to_string(&file).unwrap();

    // Broken JSON: the look stays, and the error names line and column, as a toast.
    editor.take_effects();
    atomic_write(&file, &text.replacen(',', "", 1));
    until(&mut editor, "the material to be reported", |e| {
        e.preview_state()
            .resources()
            .errors
            .contains_key("materials/bark.material")
    });
    assert_eq!(material(&editor, "materials/bark"), Some(good.clone()));
    let error = &editor.preview_state().resources().errors["materials/bark.material"];
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
        e.preview_state()
            .resources()
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
        e.preview_state().resources().errors.is_empty()
    });
    assert_eq!(material(&editor, "materials/bark").unwrap().roughness, 0.25);
}

#[test]
fn a_broken_unit_keeps_the_last_good_world_and_says_where_it_broke() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    let entities = editor.preview().level.as_ref().unwrap().entities.len();
    let unit = dir.path().join("units/tree.unit");
    let text = fs::read_to_string(&unit).unwrap();
    atomic_write(&unit, &text.replacen("\"id\"", "\"id\" \"", 1));
    until(&mut editor, "the compile error", |e| {
        e.preview_state().compile_error().is_some()
    });
    let error = editor.preview_state().compile_error().unwrap().to_string();
    assert!(error.starts_with("units/tree.unit:4:12: "), "{error}");
    assert_eq!(
        editor.preview().level.as_ref().unwrap().entities.len(),
        entities
    );
    atomic_write(&unit, &text);
    until(&mut editor, "the fix", |e| {
        e.preview_state().compile_error().is_none()
    });
}

mod in_the_window {
    //! The same, through the real editor driven headless.
    use super::support;
    use egui::{Key, Modifiers};
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use kiln::editor::KilnApp;
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
        // then up before it, each keeping its world pose. Ground is moved and
        // turned first: under an identity parent a reparent that kept the local
        // pose as it was would keep the world pose too.
        for (field, value) in [
            ("position", serde_json::json!([3, 1, 2])),
            ("rotation", serde_json::json!([0, 30, 0])),
        ] {
            h.state_mut()
                .apply_actions(vec![kiln::editor::Action::SetField {
                    entities: vec!["ground".into()],
                    component: "transform".into(),
                    instance: None,
                    field: field.into(),
                    value,
                    continuing: false,
                }]);
        }
        h.run_steps(3);
        select(&mut h, "Grove");
        let local = |h: &Harness<'_, KilnApp>| {
            editor(h).entity("grove").unwrap().components["transform"]["position"].clone()
        };
        let (before, local_before) = (editor(&h).world_pose("tree_02").unwrap(), local(&h));
        h.key_press_modifiers(Modifiers::ALT, Key::ArrowRight);
        h.run_steps(3);
        let e = editor(&h);
        assert_eq!(e.entity("grove").unwrap().parent.as_deref(), Some("ground"));
        assert_ne!(
            local(&h),
            local_before,
            "the local pose was worked out again"
        );
        let after = e.world_pose("tree_02").unwrap();
        assert!(after.abs_diff_eq(before, 1e-3), "{after:?} != {before:?}");
        h.key_press_modifiers(Modifiers::ALT, Key::ArrowLeft);
        h.run_steps(3);
        assert_eq!(editor(&h).entity("grove").unwrap().parent, None);
        let back = editor(&h).world_pose("tree_02").unwrap();
        assert!(back.abs_diff_eq(before, 1e-3), "{back:?} != {before:?}");
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

/// The world poses of `ids` (as they are now), for before/after comparisons.
fn poses(editor: &Editor, ids: &[&str]) -> Vec<glam::Affine3A> {
    ids.iter()
        .map(|id| editor.world_pose(id).unwrap())
        .collect()
}

#[test]
fn a_prefab_made_from_a_selection_sits_where_it_was() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    // One root: the instance takes its transform, the unit's root sits at its origin.
    let before = poses(&editor, &["grove", "tree_01", "tree_03"]);
    editor.apply(Action::Select(vec!["grove".into()]));
    editor.apply(Action::Run(UiCommand::CreatePrefab));
    assert_eq!(editor.preview_state().compile_error(), None);
    let instance = editor.entity("grove").unwrap().clone();
    assert_eq!(instance.prefab.as_deref(), Some("units/grove"));
    assert_eq!(
        instance.components["transform"]["position"],
        serde_json::json!([-6, 0, -4])
    );
    let unit = fs::read_to_string(dir.path().join("units/grove.unit")).unwrap();
    let unit: serde_json::Value = serde_json::from_str(&unit).unwrap();
    assert_eq!(unit["entities"][0]["id"], "grove");
    assert_eq!(
        unit["entities"][0]["components"]["transform"],
        serde_json::json!({})
    );
    let after = poses(&editor, &["grove", "grove/tree_01", "grove/tree_03"]);
    for (a, b) in before.iter().zip(&after) {
        assert!(a.abs_diff_eq(*b, 1e-4), "{a:?} vs {b:?}");
    }
    editor.apply(Action::Run(UiCommand::Undo));

    // Several roots: the instance sits at their centre, each placed relative to it.
    editor.apply(Action::OpenLevel("levels/workshop.level".into()));
    let roots: Vec<String> = editor
        .level()
        .unwrap()
        .doc
        .entities
        .iter()
        .filter(|e| e.parent.is_none() && e.prefab.is_none() && e.id != "floor")
        .take(2)
        .map(|e| e.id.clone())
        .collect();
    assert_eq!(roots.len(), 2, "two plain roots to choose");
    let ids: Vec<&str> = roots.iter().map(String::as_str).collect();
    let before = poses(&editor, &ids);
    let centre = (before[0].translation + before[1].translation) / 2.0;
    editor.apply(Action::Select(roots.clone()));
    editor.apply(Action::Run(UiCommand::CreatePrefab));
    assert_eq!(editor.preview_state().compile_error(), None);
    let instance = editor.selection()[0].clone();
    let at = editor.world_pose(&instance).unwrap().translation;
    assert!((at - centre).length() < 1e-3, "{at:?} vs {centre:?}");
    let placed: Vec<String> = roots.iter().map(|r| format!("{instance}/{r}")).collect();
    let placed: Vec<&str> = placed.iter().map(String::as_str).collect();
    for (a, b) in before.iter().zip(poses(&editor, &placed)) {
        assert!(a.abs_diff_eq(b, 1e-3), "{a:?} vs {b:?}");
    }
}

fn part_material(editor: &Editor, part: &str) -> serde_json::Value {
    editor
        .level()
        .and_then(|l| l.part(part))
        .expect("the part is shown")
        .entity
        .components["mesh"]["material"]
        .clone()
}

#[test]
fn part_inspectors_follow_a_unit_edited_on_disk_or_in_the_editor() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    editor.apply(Action::Select(vec!["tree_01/trunk".into()]));
    assert_eq!(part_material(&editor, "tree_01/trunk"), "materials/bark");

    // Edited in another program.
    let unit = dir.path().join("units/tree.unit");
    let text = fs::read_to_string(&unit).unwrap();
    atomic_write(
        &unit,
        &text.replacen("materials/bark", "materials/stone", 1),
    );
    until(&mut editor, "the part to follow", |e| {
        part_material(e, "tree_01/trunk") == "materials/stone"
    });

    // Edited in the editor: opened, changed, saved; back in the level.
    editor.apply(Action::OpenLevel("units/tree.unit".into()));
    editor.apply(Action::SetField {
        entities: vec!["trunk".into()],
        component: "mesh".into(),
        instance: None,
        field: "material".into(),
        value: serde_json::json!("materials/wood"),
        continuing: false,
    });
    editor.apply(Action::Run(UiCommand::Save));
    editor.apply(Action::OpenLevel("levels/forest.level".into()));
    editor.apply(Action::Select(vec!["tree_01/trunk".into()]));
    assert_eq!(part_material(&editor, "tree_01/trunk"), "materials/wood");
}

mod mixed_in_the_window {
    use super::support;
    use egui::Key;
    use egui_kittest::kittest::Queryable;
    use kiln::editor::Action;
    use support::ui::{editor, open};

    #[test]
    fn a_field_the_selection_disagrees_on_shows_no_value_until_edited() {
        let dir = support::demo_copy();
        let mut h = open(dir.path());
        // Ground sits at the origin, the grove at (-6, 0, -4): x and z differ.
        h.state_mut()
            .apply_actions(vec![Action::Select(vec!["ground".into(), "grove".into()])]);
        h.run_steps(3);
        assert!(h.query_all_by_label_contains("position (mixed)").count() >= 1);
        assert_eq!(
            h.get_all_by_value("—").count(),
            2,
            "x and z of the position, not y"
        );
        // Typed into: both get the value, and it shows.
        h.get_all_by_value("—").next().unwrap().click();
        h.run_steps(2);
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
        if let Some(field) = h.get_all_by_value("—").next() {
            field.type_text("2.5");
        }
        h.run_steps(1);
        h.key_press(Key::Enter);
        h.run_steps(3);
        let e = editor(&h);
        for id in ["ground", "grove"] {
            let p = &e.entity(id).unwrap().components["transform"]["position"];
            assert_eq!(p[0], 2.5, "{id}: {p}");
        }
        assert_eq!(
            e.entity("grove").unwrap().components["transform"]["position"][2],
            -4.0
        );
        assert_eq!(h.get_all_by_value("—").count(), 1, "only z differs now");
    }
}

mod renamed_in_the_window {
    use super::support;
    use egui::Key;
    use egui_kittest::kittest::Queryable;
    use support::ui::open;

    #[test]
    fn the_inspector_follows_an_asset_renamed_or_moved_back() {
        let dir = support::demo_copy();
        let mut h = open(dir.path());
        h.get_by_label("📁 materials").click();
        h.run_steps(3);
        h.get_by_label("🎨 bark.material").click();
        h.run_steps(3);
        h.get_by_label("materials/bark.material");
        h.key_press(Key::F2);
        h.run_steps(3);
        h.get_by_label("New path").focus();
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
        h.get_by_label("New path")
            .type_text("materials/oak_bark.material");
        h.run_steps(2);
        h.get_by_label("Preview").click();
        h.run_steps(2);
        h.get_by_label("Apply").click();
        h.run_steps(4);
        assert!(h.query_by_label_contains("No such file").is_none());
        assert!(h.query_by_label_contains("does not exist").is_none());
        h.get_by_label("materials/oak_bark.material");
        h.get_by_label_contains("roughness");
        // Undone: it follows the file back.
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
        h.run_steps(4);
        h.get_by_label("materials/bark.material");
        h.get_by_label_contains("roughness");
    }
}

mod parts_in_the_window {
    use super::support;
    use egui_kittest::kittest::Queryable;
    use kiln::editor::Action;
    use support::ui::{editor, open};

    #[test]
    fn a_part_picked_in_the_viewport_is_revealed_in_the_tree() {
        let dir = support::demo_copy();
        let mut h = open(dir.path());
        assert!(h.query_by_label("Canopy").is_none(), "closed at first");
        // What a second click on a canopy in the viewport selects: a part below
        // another part of its unit.
        h.state_mut()
            .apply_actions(vec![Action::Select(vec!["tree_01/canopy".into()])]);
        h.run_steps(4);
        h.get_by_role_and_label(egui::accesskit::Role::TreeItem, "Canopy");
        // And a part of a prefab nested in a prefab, far down the level.
        h.state_mut()
            .apply_actions(vec![Action::Select(vec!["lamp_2/head/glass".into()])]);
        h.run_steps(4);
        h.get_by_role_and_label(egui::accesskit::Role::TreeItem, "Glass");
        assert_eq!(editor(&h).selection(), ["lamp_2/head/glass"]);
    }
}

#[test]
fn a_selected_prefab_instance_draws_its_parts_selected() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    let level = |e: &Editor, id: &str| e.preview().level.as_ref().unwrap().entity(id).unwrap();
    editor.apply(Action::Select(vec!["lamp_2".into()]));
    let drawn = editor.preview_state().drawn_selected(editor.selection());
    for part in ["lamp_2", "lamp_2/head", "lamp_2/head/glass"] {
        assert!(drawn.contains(&level(&editor, part)), "{part}");
    }
    assert!(!drawn.contains(&level(&editor, "windmill")));
    // A part alone: only it and what is below it.
    editor.apply(Action::Select(vec!["lamp_2/head".into()]));
    let drawn = editor.preview_state().drawn_selected(editor.selection());
    assert!(drawn.contains(&level(&editor, "lamp_2/head/glass")));
    assert!(!drawn.contains(&level(&editor, "lamp_2")));
}
