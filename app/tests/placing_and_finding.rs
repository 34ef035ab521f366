//! A designer's whole day, through the window's own input (keys, clicks, drags on
//! the viewport and the toolbar), on a copy of the demo: placing on surfaces, Drop
//! to floor, the rotation rings, snapping along one axis, the views and the camera
//! per level, box select, hide, isolate, lock, select children and finding prefab
//! parts. Each test asks a question whose answer was wrong before the feature.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use egui::{Key, Modifiers, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::Vec3;
use kiln::editor::KilnApp;
use support::demo_copy;
use support::ui::{editor, open};

/// Where a world point is on the screen, through the viewport's camera.
fn screen(h: &Harness<'_, KilnApp>, p: Vec3) -> Pos2 {
    let panels = &h.state().panels;
    let rect = panels.viewport.rect.expect("the viewport was drawn");
    let c = panels.camera.view_projection(rect.width() / rect.height()) * p.extend(1.0);
    egui::pos2(
        rect.center().x + c.x / c.w * rect.width() * 0.5,
        rect.center().y - c.y / c.w * rect.height() * 0.5,
    )
}

fn button(h: &mut Harness<'_, KilnApp>, at: Pos2, pressed: bool, modifiers: Modifiers) {
    h.event(egui::Event::PointerButton {
        pos: at,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers,
    });
    h.run_steps(1);
}

fn click_at(h: &mut Harness<'_, KilnApp>, at: Pos2) {
    h.hover_at(at);
    h.run_steps(1);
    button(h, at, true, Modifiers::NONE);
    button(h, at, false, Modifiers::NONE);
    h.run_steps(2);
}

/// A left drag through `path`, holding `modifiers` (as a hand does: small steps).
fn drag_through(h: &mut Harness<'_, KilnApp>, path: &[Pos2], modifiers: Modifiers) {
    h.event(egui::Event::ModifiersChanged(modifiers));
    h.hover_at(path[0]);
    h.run_steps(1);
    button(h, path[0], true, modifiers);
    for w in path.windows(2) {
        for k in 1..=4 {
            h.hover_at(w[0] + (w[1] - w[0]) * (k as f32 / 4.0));
            h.run_steps(1);
        }
    }
    button(h, *path.last().unwrap(), false, modifiers);
    h.event(egui::Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(2);
}

fn world_position(h: &Harness<'_, KilnApp>, id: &str) -> Vec3 {
    Vec3::from(
        editor(h)
            .world_pose(id)
            .expect("it is in the world")
            .translation,
    )
}

fn authored(h: &Harness<'_, KilnApp>, id: &str, field: &str) -> Vec<f64> {
    editor(h).entity(id).unwrap().components["transform"][field]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_f64().unwrap()).collect())
        .unwrap_or_default()
}

/// Runs frames until the viewport has rested what was placed (models load off the
/// UI thread).
fn until_settled(h: &mut Harness<'_, KilnApp>) {
    for _ in 0..400 {
        h.run_steps(1);
        if h.state().panels.viewport.settle.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    h.run_steps(2);
}

/// End drops the selection onto what is below it: the firefly (a small sphere two
/// metres up) comes to rest on the ground, its bottom at the ground's height.
#[test]
fn end_drops_the_selection_onto_the_floor() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let firefly = world_position(&h, "firefly");
    // Picked in the viewport, as a designer does (the keys stay the viewport's).
    let at = screen(&h, firefly);
    click_at(&mut h, at);
    assert_eq!(editor(&h).selection(), ["firefly".to_owned()]);
    let bounds = |h: &mut Harness<'_, KilnApp>| {
        let state = h.state_mut();
        (state.panels.viewport)
            .drawn_bounds(state.editor.as_ref().unwrap(), &["firefly".to_owned()])
            .expect("the firefly is drawn")
    };
    let (lo, _) = bounds(&mut h);
    assert!(lo.y > 1.0, "it starts in the air: {lo}");
    h.key_press(Key::End);
    h.run_steps(3);
    let (lo, _) = bounds(&mut h);
    assert!(lo.y.abs() < 0.01, "its bottom is on the ground: {lo}");
    let after = world_position(&h, "firefly");
    assert_eq!((after.x, after.z), (firefly.x, firefly.z), "straight down");
    // One undo puts it back in the air.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert_eq!(world_position(&h, "firefly"), firefly);
}

/// Ctrl+N with the pointer over open ground puts the new entity there, on the
/// ground, not at the camera's orbit target.
#[test]
fn a_new_entity_lands_under_the_pointer() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let rect = h.state().panels.viewport.rect.unwrap();
    let at = rect.center() + egui::vec2(-rect.width() * 0.2, rect.height() * 0.25);
    h.hover_at(at);
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::N);
    until_settled(&mut h);
    let id = editor(&h).selection()[0].clone();
    let placed = world_position(&h, &id);
    assert!(placed.y.abs() < 1e-3, "on the ground: {placed}");
    assert!(
        screen(&h, placed).distance(at) < 2.0,
        "under the pointer: {placed} is seen at {:?}, the pointer at {at:?}",
        screen(&h, placed)
    );
    assert!(
        placed.distance(h.state().panels.camera.target) > 1.0,
        "not the orbit target"
    );
}

/// The rotate tool's ring about y turns the boulder about the world's y as the
/// pointer goes round it; with Snap rotate switched on in the toolbar the turn is
/// a whole number of 15 degree steps, and holding Ctrl turns it freely.
#[test]
fn a_ring_turns_the_selection_about_its_axis_in_steps_when_snapping() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let boulder = world_position(&h, "boulder");
    let at = screen(&h, boulder + Vec3::Y * 0.3);
    click_at(&mut h, at);
    assert_eq!(editor(&h).selection(), ["boulder".to_owned()]);
    h.get_by_label("Rotate").click();
    h.run_steps(2);
    let rotation = |h: &Harness<'_, KilnApp>| {
        let pose = editor(h).world_pose("boulder").unwrap();
        pose.to_scale_rotation_translation().1
    };
    let len = h.state().panels.camera.distance * 0.12;
    // Round the ring about y, from +x a little over a quarter turn towards -z.
    let ring = |h: &Harness<'_, KilnApp>, degrees: f32| {
        let t = degrees.to_radians();
        screen(h, boulder + (Vec3::X * t.cos() - Vec3::Z * t.sin()) * len)
    };
    let turn = |h: &mut Harness<'_, KilnApp>, modifiers| {
        let before = rotation(h);
        let path: Vec<Pos2> = (0..=10).map(|k| ring(h, k as f32 * 10.0)).collect();
        drag_through(h, &path, modifiers);
        let after = rotation(h);
        // How far it turned, and about what.
        let (axis, angle) = (after * before.inverse()).to_axis_angle();
        (axis, angle.to_degrees())
    };
    // Positive control: without snapping, about 100 degrees and not a step.
    let (axis, free) = turn(&mut h, Modifiers::NONE);
    assert!(axis.abs().dot(Vec3::Y) > 0.999, "about y: {axis}");
    assert!((80.0..120.0).contains(&free), "{free}");
    assert!((free / 15.0 - (free / 15.0).round()).abs() > 0.01, "{free}");
    h.get_by_label("Snap rotate").click();
    h.run_steps(2);
    assert!(h.state().settings.snap_rotate_on);
    let (_, snapped) = turn(&mut h, Modifiers::NONE);
    assert!(
        (snapped / 15.0 - (snapped / 15.0).round()).abs() < 0.01,
        "{snapped} is a whole number of 15 degree steps"
    );
    // Ctrl does the opposite of the toolbar.
    let (_, inverted) = turn(&mut h, Modifiers::COMMAND);
    assert!(
        (inverted / 15.0 - (inverted / 15.0).round()).abs() > 0.01,
        "{inverted}"
    );
}

/// With Snap move on, dragging the x arrow puts x on the grid and leaves z as it
/// was (it used to snap z too: -3.4837 became -3.5).
#[test]
fn a_snapped_move_along_x_leaves_z_alone() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    // An entity off the grid: placed by Ctrl+N under the pointer, snapping off.
    let rect = h.state().panels.viewport.rect.unwrap();
    let at = rect.center() + egui::vec2(37.0, 53.0);
    h.hover_at(at);
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::N);
    until_settled(&mut h);
    let id = editor(&h).selection()[0].clone();
    let start = authored(&h, &id, "position");
    assert!(
        (start[2] * 2.0 - (start[2] * 2.0).round()).abs() > 0.01,
        "z {} is off the half-metre grid",
        start[2]
    );
    h.get_by_label("Snap move").click();
    h.run_steps(2);
    let origin = world_position(&h, &id);
    let len = h.state().panels.camera.distance * 0.12;
    let grab = screen(&h, origin + Vec3::X * len * 0.6);
    let to = screen(&h, origin + Vec3::X * len * 1.9);
    drag_through(&mut h, &[grab, to], Modifiers::NONE);
    let end = authored(&h, &id, "position");
    assert!(
        end[0] > start[0] + 0.2,
        "it moved along x: {start:?} -> {end:?}"
    );
    assert!(
        (end[0] * 2.0 - (end[0] * 2.0).round()).abs() < 1e-6,
        "x on the grid: {end:?}"
    );
    assert_eq!(
        (end[1], end[2]),
        (start[1], start[2]),
        "y and z as they were"
    );
}

/// 7, 1, 3 and 5 bring the top, front, side and perspective views; the camera is
/// kept per level across a switch to another level and back; Ctrl+Shift+2 keeps a
/// bookmark that Ctrl+2 comes back to.
#[test]
fn the_views_bookmarks_and_each_levels_camera() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    for (key, name) in [
        (Key::Num7, "Top"),
        (Key::Num1, "Front"),
        (Key::Num3, "Right"),
        (Key::Num5, "Perspective"),
    ] {
        h.key_press(key);
        h.run_steps(2);
        assert_eq!(h.state().panels.camera.view_name(), name);
        h.get_by_label(name);
    }
    h.key_press(Key::Num7);
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Num2);
    h.run_steps(2);
    let kept = h.state().panels.camera;
    h.key_press(Key::Num1);
    h.run_steps(2);
    assert_ne!(h.state().panels.camera, kept);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Num2);
    h.run_steps(2);
    assert_eq!(h.state().panels.camera, kept, "back to the bookmark");
    // Another level, and back: the forest's camera as it was left.
    h.key_press(Key::Num3);
    h.run_steps(2);
    let forest = h.state().panels.camera;
    (h.state_mut()).apply_actions(vec![kiln::editor::Action::OpenLevel(
        "levels/workshop.level".into(),
    )]);
    h.state_mut().editor.as_mut().unwrap().finish_opening();
    h.run_steps(4);
    assert!(editor(&h).is_open("levels/workshop.level"));
    assert_ne!(h.state().panels.camera, forest, "the workshop is framed");
    (h.state_mut()).apply_actions(vec![kiln::editor::Action::OpenLevel(
        "levels/forest.level".into(),
    )]);
    h.state_mut().editor.as_mut().unwrap().finish_opening();
    h.run_steps(4);
    assert_eq!(h.state().panels.camera, forest);
}

/// A box dragged over the grove from above selects its five trees (the instances,
/// not their parts); Shift adds what another box finds, Ctrl takes it away.
#[test]
fn a_box_selects_what_is_inside_it() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    // The ground is locked first, so that boxes find what stands on it.
    h.get_by_label("Lock ground").click();
    h.run_steps(2);
    h.key_press(Key::Num7);
    h.run_steps(3);
    let trees: Vec<String> = (1..=5).map(|k| format!("tree_0{k}")).collect();
    let points: Vec<Pos2> = trees
        .iter()
        .map(|t| screen(&h, world_position(&h, t)))
        .collect();
    let lo = points.iter().fold(points[0], |a, p| a.min(*p)) - egui::vec2(25.0, 25.0);
    let hi = points.iter().fold(points[0], |a, p| a.max(*p)) + egui::vec2(25.0, 25.0);
    drag_through(&mut h, &[lo, hi], Modifiers::NONE);
    let mut selected = editor(&h).selection().to_vec();
    selected.sort();
    assert_eq!(selected, trees);
    // Shift adds the boulder's box; Ctrl takes the trees away again.
    let boulder = screen(&h, world_position(&h, "boulder"));
    let around = |p: Pos2| [p - egui::vec2(20.0, 20.0), p + egui::vec2(20.0, 20.0)];
    drag_through(&mut h, &around(boulder), Modifiers::SHIFT);
    assert_eq!(editor(&h).selection().len(), 6);
    drag_through(&mut h, &[lo, hi], Modifiers::COMMAND);
    assert_eq!(editor(&h).selection(), ["boulder".to_owned()]);
}

/// Select children selects what is below the grove; H hides the grove (its trees
/// are not drawn), Alt+H shows it again; Shift+H hides everything but the
/// selection; a locked boulder is not picked by a click.
#[test]
fn hide_isolate_lock_and_select_children() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let drawn = |h: &mut Harness<'_, KilnApp>, id: &str| {
        let state = h.state_mut();
        (state.panels.viewport)
            .drawn_bounds(state.editor.as_ref().unwrap(), &[id.to_owned()])
            .is_some()
    };
    h.get_by_label("Grove").click();
    h.run_steps(2);
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Select children").click();
    h.run_steps(3);
    let mut selected = editor(&h).selection().to_vec();
    selected.sort();
    assert_eq!(
        selected,
        (1..=5).map(|k| format!("tree_0{k}")).collect::<Vec<_>>()
    );
    assert!(drawn(&mut h, "tree_01"), "positive control: drawn before");
    h.key_press(Key::H);
    h.run_steps(3);
    assert!(!drawn(&mut h, "tree_01"), "hidden");
    assert!(drawn(&mut h, "boulder"), "the rest is drawn");
    h.key_press_modifiers(Modifiers::ALT, Key::H);
    h.run_steps(3);
    assert!(drawn(&mut h, "tree_01"), "shown again");
    // Isolate the firefly: the trees and the boulder go, the firefly stays.
    h.get_by_label("Firefly").click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::SHIFT, Key::H);
    h.run_steps(3);
    assert!(drawn(&mut h, "firefly"));
    assert!(!drawn(&mut h, "boulder") && !drawn(&mut h, "tree_03"));
    h.key_press_modifiers(Modifiers::ALT, Key::H);
    h.run_steps(3);
    // Locked: a click on the boulder does not select it (positive control first).
    let boulder = screen(&h, world_position(&h, "boulder") + Vec3::Y * 0.3);
    click_at(&mut h, boulder);
    assert_eq!(editor(&h).selection(), ["boulder".to_owned()]);
    h.get_by_label("Lock boulder").click();
    h.run_steps(2);
    click_at(&mut h, boulder);
    assert!(
        !editor(&h).selection().contains(&"boulder".to_owned()),
        "{:?}",
        editor(&h).selection()
    );
    // Hidden and locked are the designer's view: the level's file does not change.
    assert!(!editor(&h).is_dirty());
}

/// The scene filter finds prefab parts by name: "trunk" shows the five trees' Trunk
/// rows under their instances (it used to find none).
#[test]
fn the_filter_finds_prefab_parts() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Filter entities").click();
    h.run_steps(1);
    h.get_by_label("Filter entities").type_text("trunk");
    h.run_steps(3);
    assert_eq!(h.get_all_by_label("Trunk").count(), 5);
    assert!(
        h.query_by_label("Boulder").is_none(),
        "what does not match is not shown"
    );
    // Selecting one shows it in the inspector as a part.
    h.get_all_by_label("Trunk").next().unwrap().click();
    h.run_steps(3);
    assert!(
        editor(&h).selection()[0].ends_with("/trunk"),
        "{:?}",
        editor(&h).selection()
    );
}

/// Create prefab from selection asks for a name, offers the canonical spelling of
/// what was typed, and names the file and the instance after it (it used to name
/// both after the first entity's generated id).
#[test]
fn a_prefab_is_named_by_the_designer() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Grove").click();
    h.run_steps(2);
    h.get_by_label("Edit").click();
    h.run_steps(2);
    h.get_by_label("Create prefab from selection").click();
    h.run_steps(3);
    // Offered after the selection's name.
    h.get_by_label("Makes units/grove.unit");
    // The name field has the keys (the inspector has a Name field too).
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.event(egui::Event::Text("Birch Grove".into()));
    h.run_steps(2);
    h.get_by_label("Use \"birch_grove\"").click();
    h.run_steps(2);
    h.key_press(Key::Enter);
    h.run_steps(4);
    assert!(dir.path().join("units/birch_grove.unit").is_file());
    assert!(!dir.path().join("units/grove.unit").exists());
    let e = editor(&h);
    let instance = e
        .entity("birch_grove")
        .expect("the instance is named after it");
    assert_eq!(instance.name, "Birch grove");
    assert_eq!(instance.prefab.as_deref(), Some("units/birch_grove"));
    assert_eq!(e.selection(), ["birch_grove".to_owned()]);
    // One undo takes it back, file and all.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert!(!dir.path().join("units/birch_grove.unit").exists());
    assert!(editor(&h).entity("grove").is_some());
}

/// View > Shadows switches the sun's shadows in the viewport: the setting follows
/// the checkbox, and the picture is drawn again (image tests of the shadow itself
/// are in `render_images.rs`).
#[test]
fn view_shadows_switches_the_viewports_shadows() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.run_steps(4);
    assert!(h.state().settings.shadows, "on by default");
    let before = h.state().panels.viewport.pictures_drawn();
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Shadows").click();
    h.run_steps(4);
    assert!(!h.state().settings.shadows);
    if h.state().panels.viewport.uses_gpu() {
        assert!(
            h.state().panels.viewport.pictures_drawn() > before,
            "drawn again"
        );
    }
}

/// X switches the handle between the world's axes and the entity's own, as the
/// toolbar shows; the middle box of the scale tool scales all three axes at once,
/// and a plane square of the move tool moves across its plane only.
#[test]
fn x_switches_the_axes_and_the_middle_box_scales_uniformly() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let boulder = world_position(&h, "boulder");
    let at = screen(&h, boulder + Vec3::Y * 0.3);
    click_at(&mut h, at);
    assert_eq!(editor(&h).selection(), ["boulder".to_owned()]);
    h.get_by_label("World");
    h.key_press(Key::X);
    h.run_steps(2);
    assert!(h.state().settings.local_space);
    h.get_by_label("Local").click();
    h.run_steps(2);
    assert!(!h.state().settings.local_space, "the toolbar switches back");
    // A plane square: the one across y moves x and z, never y.
    let before = authored(&h, "boulder", "position");
    let len = h.state().panels.camera.distance * 0.12;
    let square = screen(&h, boulder + Vec3::new(0.3, 0.0, 0.3) * len);
    let away = screen(&h, boulder + Vec3::new(1.2, 0.0, 0.9) * len);
    drag_through(&mut h, &[square, away], Modifiers::NONE);
    let after = authored(&h, "boulder", "position");
    assert!(
        after[0] != before[0] && after[2] != before[2],
        "{before:?} -> {after:?}"
    );
    assert_eq!(after[1], before[1], "across the plane only");
    // The scale tool's middle box: all three axes by one factor.
    h.key_press(Key::R);
    h.run_steps(2);
    let scale_before = authored(&h, "boulder", "scale");
    let middle = screen(&h, world_position(&h, "boulder"));
    drag_through(
        &mut h,
        &[middle, middle + egui::vec2(40.0, -20.0)],
        Modifiers::NONE,
    );
    let scale_after = authored(&h, "boulder", "scale");
    let factors: Vec<f64> = (0..3).map(|k| scale_after[k] / scale_before[k]).collect();
    assert!(factors[0] > 1.2, "{scale_before:?} -> {scale_after:?}");
    assert!(
        factors.iter().all(|f| (f - factors[0]).abs() < 0.01),
        "uniform: {factors:?}"
    );
}

/// Holding Shift while dragging the move tool's middle square slides the
/// selection along what is under the pointer: the firefly, dragged over open
/// ground, comes down to rest on it.
#[test]
fn shift_dragging_the_middle_square_slides_along_surfaces() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let firefly = world_position(&h, "firefly");
    let at = screen(&h, firefly);
    click_at(&mut h, at);
    assert_eq!(editor(&h).selection(), ["firefly".to_owned()]);
    let rect = h.state().panels.viewport.rect.unwrap();
    let to = rect.center() + egui::vec2(-rect.width() * 0.25, rect.height() * 0.3);
    drag_through(&mut h, &[at, to], Modifiers::SHIFT);
    let state = h.state_mut();
    let (lo, _) = (state.panels.viewport)
        .drawn_bounds(state.editor.as_ref().unwrap(), &["firefly".to_owned()])
        .unwrap();
    assert!(lo.y.abs() < 0.02, "resting on the ground: {lo}");
    let moved = world_position(&h, "firefly");
    assert!(moved.distance(firefly) > 1.0, "{firefly} -> {moved}");
}
