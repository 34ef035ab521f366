//! The scene tree, driven as a designer drives it: clicks, Shift and Ctrl clicks, the
//! triangles, the arrow keys, and drag and drop; on a level too large to lay out
//! every row, only the rows in view are widgets.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use egui::Key;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kiln::editor::KilnApp;
use support::ui::{drag, editor, open};
use support::{big_project, demo_copy};

fn rows_laid_out(h: &Harness<'_, KilnApp>) -> usize {
    h.query_all_by_role(Role::TreeItem).count()
}

#[test]
fn a_large_level_lays_out_only_the_rows_in_view_and_the_keyboard_scrolls_to_the_selection() {
    let dir = big_project(2_000);
    let mut h = open(dir.path());
    assert_eq!(editor(&h).level().unwrap().doc.entities.len(), 20_000);
    let laid_out = rows_laid_out(&h);
    assert!(
        (10..200).contains(&laid_out),
        "{laid_out} rows are widgets; the view holds a few dozen"
    );
    assert!(
        h.query_by_role_and_label(Role::TreeItem, "Item 1999.8")
            .is_none(),
        "the last row is far below"
    );

    h.get_by_role_and_label(Role::TreeItem, "Group 0").click();
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["g0"]);
    h.key_press(Key::End);
    h.run_steps(4);
    assert_eq!(editor(&h).selection(), ["g1999_8"]);
    h.get_by_role_and_label(Role::TreeItem, "Item 1999.8");
    assert!(
        h.query_by_role_and_label(Role::TreeItem, "Group 0")
            .is_none(),
        "scrolled away from the top"
    );

    // Up twice with Shift: a range of three, the anchor kept.
    h.key_press_modifiers(egui::Modifiers::SHIFT, Key::ArrowUp);
    h.key_press_modifiers(egui::Modifiers::SHIFT, Key::ArrowUp);
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["g1999_6", "g1999_7", "g1999_8"]);
    // Left goes to the parent; left again closes it; its children leave the tree.
    h.key_press(Key::ArrowLeft);
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["g1999"]);
    h.key_press(Key::ArrowLeft);
    h.run_steps(3);
    assert!(
        h.query_by_role_and_label(Role::TreeItem, "Item 1999.0")
            .is_none(),
        "closed"
    );
    // Right opens it again, and right again goes to its first child.
    h.key_press(Key::ArrowRight);
    h.run_steps(3);
    h.key_press(Key::ArrowRight);
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["g1999_0"]);
    // Enter frames the selection and keeps it.
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["g1999_0"]);
    // Home goes back to the top.
    h.key_press(Key::Home);
    h.run_steps(4);
    assert_eq!(editor(&h).selection(), ["g0"]);
    h.get_by_role_and_label(Role::TreeItem, "Group 0");
    assert!(rows_laid_out(&h) < 200);
    // Shift+End selects every row at once (the folder of 1999 is open again).
    h.key_press_modifiers(egui::Modifiers::SHIFT, Key::End);
    h.run_steps(4);
    assert_eq!(editor(&h).selection().len(), 20_000);
}

#[test]
fn after_an_f2_rename_ended_with_enter_the_arrows_move_in_the_tree_again() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_role_and_label(Role::TreeItem, "Firefly").click();
    h.run_steps(3);
    let camera_before = h.state().panels.camera;
    h.key_press(Key::F2);
    h.run_steps(3);
    h.get_by_label("Rename:").type_text(" 2");
    h.run_steps(1);
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert_eq!(editor(&h).entity("firefly").unwrap().name, "Firefly 2");
    assert_eq!(
        h.state().panels.camera.distance,
        camera_before.distance,
        "the Enter that ended the rename does not frame the selection"
    );
    assert_eq!(
        editor(&h).selection(),
        ["firefly"],
        "the rename keeps the selection"
    );
    h.key_press(Key::ArrowUp);
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["blade_b"]);
}

#[test]
fn clicks_select_ranges_and_toggle_and_the_triangle_closes_a_folder() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_role_and_label(Role::TreeItem, "Windmill").click();
    h.run_steps(3);
    h.get_by_role_and_label(Role::TreeItem, "Blade B")
        .click_modifiers(egui::Modifiers::SHIFT);
    h.run_steps(3);
    assert_eq!(
        editor(&h).selection(),
        ["windmill", "rotor", "blade_a", "blade_b"]
    );
    h.get_by_role_and_label(Role::TreeItem, "Rotor")
        .click_modifiers(egui::Modifiers::COMMAND);
    h.run_steps(3);
    assert_eq!(editor(&h).selection(), ["windmill", "blade_a", "blade_b"]);
    h.get_by_role_and_label(Role::TreeItem, "Boulder")
        .click_modifiers(egui::Modifiers::COMMAND);
    h.run_steps(3);
    assert_eq!(
        editor(&h).selection(),
        ["windmill", "blade_a", "blade_b", "boulder"]
    );

    // The triangle at the row's left closes the folder and leaves the selection.
    let rotor = h.get_by_role_and_label(Role::TreeItem, "Rotor").rect();
    click_at(
        &mut h,
        egui::pos2(rotor.left() + 4.0 + 18.0, rotor.center().y),
    );
    h.run_steps(3);
    assert!(
        h.query_by_role_and_label(Role::TreeItem, "Blade A")
            .is_none(),
        "Rotor's children are hidden"
    );
    assert_eq!(editor(&h).selection().len(), 4);
    // A click on empty space below the rows selects nothing.
    let boulder = h.get_by_role_and_label(Role::TreeItem, "Boulder").rect();
    click_at(&mut h, boulder.center() + egui::vec2(0.0, 120.0));
    h.run_steps(3);
    assert!(editor(&h).selection().is_empty());
    // Selecting a hidden entity elsewhere (the Edit menu's find, the viewport)
    // opens the folders above it.
    h.state_mut()
        .editor
        .as_mut()
        .unwrap()
        .apply(kiln::editor::Action::Select(vec!["blade_a".into()]));
    h.run_steps(3);
    h.get_by_role_and_label(Role::TreeItem, "Blade A");
}

/// A primary click at a point of the window.
fn click_at(h: &mut Harness<'_, KilnApp>, pos: egui::Pos2) {
    h.hover_at(pos);
    h.drag_at(pos);
    h.run_steps(1);
    h.drop_at(pos);
}

#[test]
fn dropping_on_a_row_edge_reorders_and_below_the_rows_makes_a_root() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let parent = |h: &Harness<'_, KilnApp>, id: &str| editor(h).entity(id).unwrap().parent.clone();
    let ids = |h: &Harness<'_, KilnApp>| -> Vec<String> {
        let doc = &editor(h).level().unwrap().doc;
        doc.entities.iter().map(|e| e.id.clone()).collect()
    };

    // Onto the top edge of Blade A: Boulder goes under Rotor, before Blade A.
    let boulder = h.get_by_role_and_label(Role::TreeItem, "Boulder").rect();
    let blade_a = h.get_by_role_and_label(Role::TreeItem, "Blade A").rect();
    drag(
        &mut h,
        boulder.center(),
        egui::pos2(blade_a.center().x, blade_a.top() + 2.0),
    );
    assert_eq!(parent(&h, "boulder").as_deref(), Some("rotor"));
    assert_eq!(
        editor(&h).selection(),
        ["boulder"],
        "what was dragged is selected"
    );
    let order = ids(&h);
    let at = |id: &str| order.iter().position(|e| e == id).unwrap();
    assert!(at("boulder") < at("blade_a"), "{order:?}");

    // Below every row: a root again.
    let boulder = h.get_by_role_and_label(Role::TreeItem, "Boulder").rect();
    let firefly = h.get_by_role_and_label(Role::TreeItem, "Firefly").rect();
    drag(
        &mut h,
        boulder.center(),
        firefly.center() + egui::vec2(0.0, 150.0),
    );
    assert_eq!(parent(&h, "boulder"), None);

    // Into one of its own children: refused, nothing changes.
    let windmill = h.get_by_role_and_label(Role::TreeItem, "Windmill").rect();
    let rotor = h.get_by_role_and_label(Role::TreeItem, "Rotor").rect();
    let before = ids(&h);
    drag(&mut h, windmill.center(), rotor.center());
    assert_eq!(parent(&h, "windmill"), None);
    assert_eq!(ids(&h), before);

    // A prefab part cannot be dragged out of its instance.
    let trunk = h
        .get_all_by_role_and_label(Role::TreeItem, "Trunk")
        .next()
        .unwrap()
        .rect();
    let ground = h.get_by_role_and_label(Role::TreeItem, "Ground").rect();
    drag(&mut h, trunk.center(), ground.center());
    assert_eq!(ids(&h), before);
    assert_eq!(parent(&h, "ground"), None);
}
