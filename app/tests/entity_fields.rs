//! Entity fields in the editor, on the demo's sliding door whose `switch` names the
//! pressure plate: chosen in the inspector's picker or by dropping a scene tree row
//! on it; cleared by deleting what it names (undo brings both back); duplicated
//! with what it names, the copy names the copy; made into a prefab, it names the
//! instance's part.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kiln::editor::{Action, Editor, KilnApp, UiCommand};
use serde_json::Value;
use support::ui::{editor, open};

/// The demo with its workshop open, its plugins loaded.
fn workshop() -> (tempfile::TempDir, Harness<'static, KilnApp>) {
    let dir = support::demo_copy();
    let mut h = open(dir.path());
    act(&mut h, Action::OpenLevel("levels/workshop.level".into()));
    let deadline = Instant::now() + Duration::from_secs(120);
    while editor(&h).entity("sliding_door").is_none()
        || editor(&h).preview_state().compile_error().is_some()
        || editor(&h).plugins().loaded().len() < 2
    {
        assert!(Instant::now() < deadline, "{:#?}", editor(&h).log());
        std::thread::sleep(Duration::from_millis(50));
        h.run_steps(1);
    }
    (dir, h)
}

fn act(h: &mut Harness<'_, KilnApp>, action: Action) {
    h.state_mut().editor.as_mut().unwrap().apply(action);
    h.run_steps(2);
}

/// The `switch` of `door`'s `door` component, as the document has it.
fn switch_of(e: &Editor, door: &str) -> Value {
    e.entity(door).unwrap().components["door"]
        .get("switch")
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn the_inspector_picks_an_entity_from_a_list_or_a_row_dropped_on_it() {
    let (_dir, mut h) = workshop();
    act(&mut h, Action::Select(vec!["sliding_door".into()]));
    h.run_steps(2);
    // Pick another entity from the list.
    h.get_by_role_and_label(Role::ComboBox, "switch").click();
    h.run_steps(2);
    h.get_by_label("Floor (floor)").click();
    h.run_steps(3);
    assert_eq!(switch_of(editor(&h), "sliding_door"), "floor");
    // A long list is narrowed by typing (the rug is below what the list shows).
    h.get_by_role_and_label(Role::ComboBox, "switch").click();
    h.run_steps(2);
    h.get_by_label("Filter by name or id").click();
    h.get_by_label("Filter by name or id").type_text("ru");
    h.run_steps(2);
    assert!(h.query_by_label("Floor (floor)").is_none(), "filtered out");
    h.get_by_label("Rug (rug)").click();
    h.run_steps(3);
    assert_eq!(switch_of(editor(&h), "sliding_door"), "rug");
    assert!(editor(&h).preview_state().compile_error().is_none());

    // Drag the pressure plate's row from the scene tree onto the field.
    let row = h.get_by_label("Pressure plate").rect().center();
    let field = h
        .get_by_role_and_label(Role::ComboBox, "switch")
        .rect()
        .center();
    support::ui::drag(&mut h, row, field);
    assert_eq!(switch_of(editor(&h), "sliding_door"), "pressure_plate");
    // The drop chose; it did not move the plate in the tree.
    assert_eq!(editor(&h).entity("pressure_plate").unwrap().parent, None);

    // An id that names no entity (typed into the file, say) is in Problems, naming
    // the field, and the picker warns.
    act(
        &mut h,
        Action::SetField {
            entities: vec!["sliding_door".into()],
            component: "door".into(),
            instance: None,
            field: "switch".into(),
            value: Value::from("trapdoor"),
            continuing: false,
        },
    );
    h.run_steps(2);
    let error = editor(&h)
        .preview_state()
        .compile_error()
        .unwrap()
        .to_string();
    assert!(
        error.contains("field \"switch\": names no entity \"trapdoor\""),
        "{error}"
    );
    h.get_by_label("no entity of this level has the id \"trapdoor\"");
}

#[test]
fn deleting_what_a_field_names_clears_it_and_undo_brings_both_back() {
    let (_dir, mut h) = workshop();
    act(&mut h, Action::Select(vec!["pressure_plate".into()]));
    act(&mut h, Action::Run(UiCommand::Delete));
    let e = editor(&h);
    assert!(e.entity("pressure_plate").is_none());
    assert_eq!(switch_of(e, "sliding_door"), "");
    assert!(
        e.preview_state().compile_error().is_none(),
        "{:?}",
        e.preview_state().compile_error()
    );
    act(&mut h, Action::Run(UiCommand::Undo));
    let e = editor(&h);
    assert!(e.entity("pressure_plate").is_some());
    assert_eq!(switch_of(e, "sliding_door"), "pressure_plate");
}

#[test]
fn a_duplicate_of_a_door_and_its_plate_names_the_plate_copied_with_it() {
    let (_dir, mut h) = workshop();
    act(
        &mut h,
        Action::Select(vec!["sliding_door".into(), "pressure_plate".into()]),
    );
    act(&mut h, Action::Run(UiCommand::Duplicate));
    let e = editor(&h);
    let copies = e.selection().to_vec();
    assert_eq!(copies.len(), 2, "{copies:?}");
    let door = copies.iter().find(|id| id.contains("door")).unwrap();
    let plate = copies.iter().find(|id| id.contains("plate")).unwrap();
    assert_ne!(door, "sliding_door");
    assert_eq!(switch_of(e, door), plate.as_str());
    assert_eq!(switch_of(e, "sliding_door"), "pressure_plate");

    // The door alone: its copy names the plate the original names.
    act(&mut h, Action::Select(vec!["sliding_door".into()]));
    act(&mut h, Action::Run(UiCommand::Duplicate));
    let e = editor(&h);
    let copy = e.selection()[0].clone();
    assert_eq!(switch_of(e, &copy), "pressure_plate");
    assert!(e.preview_state().compile_error().is_none());
}

#[test]
fn a_prefab_made_of_the_plate_leaves_the_door_naming_the_instance_part() {
    let (dir, mut h) = workshop();
    act(&mut h, Action::Select(vec!["pressure_plate".into()]));
    act(
        &mut h,
        Action::CreatePrefab {
            file: "units/plate.unit".into(),
        },
    );
    let e = editor(&h);
    assert!(
        dir.path().join("units/plate.unit").is_file(),
        "{:#?}",
        e.log()
    );
    let instance = e.selection()[0].clone();
    assert_eq!(
        switch_of(e, "sliding_door"),
        format!("{instance}/pressure_plate").as_str()
    );
    assert!(
        e.preview_state().compile_error().is_none(),
        "{:?}",
        e.preview_state().compile_error()
    );
    // Undo: one step, the door names the plate again.
    act(&mut h, Action::Run(UiCommand::Undo));
    assert_eq!(switch_of(editor(&h), "sliding_door"), "pressure_plate");

    // Door and plate made into one prefab: inside it, the door names its own
    // instance's plate, and two instances each open their own door.
    act(
        &mut h,
        Action::Select(vec!["sliding_door".into(), "pressure_plate".into()]),
    );
    act(
        &mut h,
        Action::CreatePrefab {
            file: "units/gate.unit".into(),
        },
    );
    let unit = std::fs::read_to_string(dir.path().join("units/gate.unit")).unwrap();
    assert!(unit.contains("\"switch\": \"pressure_plate\""), "{unit}");
    let gate = editor(&h).selection()[0].clone();
    act(&mut h, Action::Run(UiCommand::Duplicate));
    let other = editor(&h).selection()[0].clone();
    assert_ne!(gate, other);
    act(&mut h, Action::Run(UiCommand::Save));
    let (code, out, err) = support::kiln(
        &["play", "levels/workshop", "--frames", "20", "--dt", "0.05"],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let x = |id: &str| {
        report["entities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .unwrap()["position"][0]
            .as_f64()
            .unwrap()
    };
    // Each door slid 1.4 m from where its instance put it: its own plate went down.
    for instance in [&gate, &other] {
        let door = x(&format!("{instance}/sliding_door"));
        let plate = x(&format!("{instance}/pressure_plate"));
        assert!(
            (door - plate - 1.4).abs() < 1e-3,
            "{instance}: {door} {plate}"
        );
    }
}

/// A component added to the plate spawns it again with a new id, at the same place
/// in the level: the door, whose bytes did not change, must be handed the new id (a
/// level with entity fields is spawned whole), or it would wait on a dead handle
/// and never open.
#[test]
fn after_a_structural_edit_respawns_the_plate_the_door_still_follows_it() {
    let (_dir, mut h) = workshop();
    let plate_before = editor(&h)
        .preview()
        .level
        .as_ref()
        .unwrap()
        .entity("pressure_plate");
    act(
        &mut h,
        Action::AddComponent {
            entity: "pressure_plate".into(),
            component: "rotator".into(),
        },
    );
    let e = editor(&h);
    assert!(
        e.entity("pressure_plate")
            .unwrap()
            .components
            .contains_key("rotator")
    );
    assert_ne!(
        e.preview().level.as_ref().unwrap().entity("pressure_plate"),
        plate_before,
        "the plate was spawned again"
    );
    let door_x = |e: &Editor| e.world_pose("sliding_door").unwrap().translation.x;
    let shut = door_x(e);
    // 0.5 s of Play: the plate is down, the door open.
    for _ in 0..30 {
        act(&mut h, Action::Run(UiCommand::Step));
    }
    assert!(
        (door_x(editor(&h)) - (shut + 1.4)).abs() < 1e-3,
        "{}",
        door_x(editor(&h))
    );
}
