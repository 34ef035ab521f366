//! The asset browser in the real editor, driven headless through egui_kittest as a
//! designer uses it: context menus, the name, delete and import dialogs, files
//! dropped on the window, and Ctrl+Z; the effects checked on disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use kiln::editor::KilnApp;
use support::ui::{editor, open};
use support::{demo_copy, snapshot};

fn right_click(h: &mut Harness<'_, KilnApp>, label: &str) {
    h.get_by_label(label).click_secondary();
    h.run_steps(3);
}

fn click(h: &mut Harness<'_, KilnApp>, label: &str) {
    h.get_by_label(label).click();
    h.run_steps(3);
}

fn undo(h: &mut Harness<'_, KilnApp>) {
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(4);
}

fn type_name(h: &mut Harness<'_, KilnApp>, text: &str) {
    h.get_by_label("Name").focus();
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.get_by_label("Name").type_text(text);
    h.run_steps(2);
}

#[test]
fn a_new_material_gets_a_canonical_name_opens_in_the_inspector_and_undoes() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let before = snapshot(dir.path());
    right_click(&mut h, "📁 materials");
    click(&mut h, "New material…");
    type_name(&mut h, "Oak Bark");
    // Refused as typed, with the canonical name offered.
    h.get_by_label_contains("not a canonical name");
    assert!(h.get_by_label("Create").accesskit_node().is_disabled());
    click(&mut h, "Use \"oak_bark\"");
    click(&mut h, "Create");
    assert!(dir.path().join("materials/oak_bark.material").is_file());
    assert!(h.query_by_label("Create").is_none(), "the dialog closed");
    // Selected, and shown in the inspector with its fields.
    h.get_by_label("materials/oak_bark.material");
    h.get_by_label_contains("roughness");
    undo(&mut h);
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_new_level_is_made_and_opened_and_a_new_folder_shows_empty() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    right_click(&mut h, "📁 levels");
    click(&mut h, "New level…");
    type_name(&mut h, "cave");
    click(&mut h, "Create");
    h.run_steps(3);
    assert_eq!(editor(&h).level().unwrap().file, "levels/cave.level");
    assert!(dir.path().join("levels/cave.level").is_file());

    right_click(&mut h, "📁 art");
    click(&mut h, "New folder…");
    type_name(&mut h, "props");
    click(&mut h, "Create");
    assert!(dir.path().join("art/props").is_dir());
    h.get_by_label("📁 props");
    undo(&mut h);
    assert!(!dir.path().join("art/props").exists());
    assert!(h.query_by_label("📁 props").is_none());
}

#[test]
fn duplicate_and_delete_from_the_context_menu_with_the_references_pointed_elsewhere() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let before = snapshot(dir.path());
    click(&mut h, "📁 materials");
    right_click(&mut h, "🎨 bark.material");
    click(&mut h, "Duplicate…");
    click(&mut h, "Duplicate");
    assert_eq!(
        fs::read(dir.path().join("materials/bark_copy.material")).unwrap(),
        fs::read(dir.path().join("materials/bark.material")).unwrap()
    );
    undo(&mut h);
    assert_eq!(snapshot(dir.path()), before);

    // Delete: the dialog lists the reference in the tree prefab and offers to
    // point it at another material.
    right_click(&mut h, "🎨 bark.material");
    click(&mut h, "Delete…");
    h.get_by_label_contains("1 reference names it");
    h.get_by_label_contains("units/tree.unit:9:");
    click(&mut h, "Point to");
    click(&mut h, "materials/wood.material");
    click(&mut h, "Point there and delete");
    assert!(!dir.path().join("materials/bark.material").exists());
    let tree = fs::read_to_string(dir.path().join("units/tree.unit")).unwrap();
    assert!(tree.contains("\"materials/wood\""), "{tree}");
    undo(&mut h);
    assert_eq!(snapshot(dir.path()), before);

    // The Delete key in the browser opens the same dialog; Cancel keeps the file.
    click(&mut h, "🎨 bark.material");
    h.key_press(Key::Delete);
    h.run_steps(3);
    click(&mut h, "Cancel");
    assert_eq!(snapshot(dir.path()), before);
    assert!(
        editor(&h).level().unwrap().doc.entity("windmill").is_some(),
        "no entity went"
    );
}

/// A file dropped on the window, as the windowing layer hands it over.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        fs::read(&self.0).map_err(|e| e.to_string())
    }
}

fn drop_files(h: &mut Harness<'_, KilnApp>, files: &[PathBuf], at: egui::Pos2) {
    h.hover_at(at);
    h.run_steps(1);
    for f in files {
        h.input_mut()
            .dropped_files
            .push(Arc::new(Dropped(f.clone())));
    }
    h.run_steps(4);
}

#[test]
fn files_dropped_on_a_folder_are_imported_into_it_and_asked_about_when_taken() {
    let dir = demo_copy();
    let outside = tempfile::tempdir().unwrap();
    let png = outside.path().join("Moss Wall.png");
    fs::copy(support::demo().join("textures/bark.png"), &png).unwrap();
    let mut h = open(dir.path());
    let before = snapshot(dir.path());
    let textures = h.get_by_label("📁 textures").rect().center();
    drop_files(&mut h, std::slice::from_ref(&png), textures);
    assert!(dir.path().join("textures/moss_wall.png").is_file());
    assert!(dir.path().join("textures/moss_wall.material").is_file());
    // Shown selected in the browser, the material ready to use.
    h.get_by_label_contains("moss_wall.png");

    // Again: asked before anything is replaced.
    let textures = h.get_by_label("📁 textures").rect().center();
    drop_files(&mut h, std::slice::from_ref(&png), textures);
    h.get_by_label("Replace files?");
    click(&mut h, "Keep both");
    assert!(dir.path().join("textures/moss_wall_2.png").is_file());
    undo(&mut h);
    undo(&mut h);
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_mesh_dragged_onto_the_viewport_is_placed_there() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let count = editor(&h).level().unwrap().doc.entities.len();
    // Found by the filter, as a designer finds a file below the fold.
    h.get_by_label("Filter files").click();
    h.get_by_label("Filter files").type_text("rock.mesh");
    h.run_steps(3);
    let from = h.get_by_label("🔷 rock.mesh").rect().center();
    assert!(from.y < 900.0, "{from:?}");
    let to = egui::pos2(800.0, 400.0);
    support::ui::drag(&mut h, from, to);
    h.run_steps(3);
    let e = editor(&h);
    assert_eq!(e.level().unwrap().doc.entities.len(), count + 1);
    let id = e.selection()[0].clone();
    assert_eq!(
        e.entity(&id).unwrap().components["mesh"]["mesh"],
        "meshes/rock"
    );
    // It rests on what is under the pointer once its model is drawn.
    for _ in 0..500 {
        if h.state().panels.viewport.settle.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.run_steps(1);
    }
    assert!(h.state().panels.viewport.settle.is_none(), "never settled");
    h.run_steps(2);
    let e = editor(&h);
    let position = e.entity(&id).unwrap().components["transform"]["position"]
        .as_array()
        .expect("a position")
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect::<Vec<_>>();
    let world = glam::Vec3::new(position[0], position[1], position[2]);
    // The ray through the point the pointer let go of, from the viewport's camera.
    let panels = &h.state().panels;
    let rect = panels.viewport.rect.expect("the viewport was drawn");
    let vp = panels.camera.view_projection(rect.width() / rect.height());
    let ndc = [
        (to.x - rect.center().x) / (rect.width() * 0.5),
        -(to.y - rect.center().y) / (rect.height() * 0.5),
    ];
    let ray = kiln::render::picking::Ray::through(vp, ndc).unwrap();
    // Across the ground, the rock is where the ray comes down: the point of the ray
    // at its x has its z.
    let t = (world.x - ray.origin.x) / ray.direction.x;
    let surface = ray.origin + ray.direction * t;
    assert!(
        (surface.z - world.z).abs() < 0.02,
        "placed at {world:?}, the ray passes {surface:?}"
    );
    // And it stands on that point by its box: the bottom at the surface's height,
    // its origin above it (a drop that put the origin on the surface, as before,
    // sank half the rock).
    let state = h.state_mut();
    let (lo, _) = (state.panels.viewport)
        .drawn_bounds(state.editor.as_ref().unwrap(), std::slice::from_ref(&id))
        .expect("the rock is drawn");
    assert!((lo.y - surface.y).abs() < 0.02, "bottom {lo} on {surface}");
    assert!(world.y - surface.y > 0.05, "origin {world} above {surface}");
    // A drop elsewhere is placed elsewhere: the position follows the pointer.
    assert!(world.length() > 0.01, "{world:?} is not the default place");
    // One undo takes the placement back, resting and all.
    undo(&mut h);
    assert_eq!(editor(&h).level().unwrap().doc.entities.len(), count);
}

/// Enter confirms the name dialog and Escape cancels it, as in every dialog a
/// designer meets elsewhere.
#[test]
fn enter_confirms_the_name_dialog_and_escape_cancels_it() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    right_click(&mut h, "📁 materials");
    click(&mut h, "New material…");
    type_name(&mut h, "oak_bark");
    h.key_press(Key::Enter);
    h.run_steps(3);
    assert!(dir.path().join("materials/oak_bark.material").is_file());
    assert!(h.query_by_label("Create").is_none(), "the dialog closed");

    drop(h);

    let mut h = open(dir.path());
    right_click(&mut h, "📁 levels");
    click(&mut h, "New level…");
    type_name(&mut h, "cave");
    assert!(h.query_by_label("Create").is_some(), "the dialog is open");
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(h.query_by_label("Create").is_none(), "the dialog closed");
    assert!(!dir.path().join("levels/cave.level").exists());
}

/// After the file shown in the inspector is deleted, the inspector shows what is
/// selected now, not an error about a file that is gone.
#[test]
fn deleting_the_file_in_the_inspector_shows_the_selection_again() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    h.get_by_label("Select an entity in the scene or the viewport.");
    click(&mut h, "📁 materials");
    click(&mut h, "🎨 bark.material");
    h.get_by_label("materials/bark.material");
    assert!(
        h.query_by_label("Select an entity in the scene or the viewport.")
            .is_none(),
        "the inspector shows the file"
    );
    h.key_press(Key::Delete);
    h.run_steps(3);
    click(&mut h, "Delete anyway");
    h.run_steps(3);
    assert!(!dir.path().join("materials/bark.material").exists());
    assert!(
        h.query_by_label_contains("os error").is_none(),
        "no error about the file that is gone"
    );
    h.get_by_label("Select an entity in the scene or the viewport.");
}

/// A level just made is no boot level: Problems offers to make it one (with the
/// unused files shown), and so does its menu in the asset browser; the filters
/// by file and by severity hide its row; Ctrl+Z puts kiln.project back.
#[test]
fn a_new_level_is_made_a_boot_level_from_problems_or_its_menu() {
    let dir = demo_copy();
    let mut h = open(dir.path());
    let project_before = fs::read(dir.path().join("kiln.project")).unwrap();
    right_click(&mut h, "📁 levels");
    click(&mut h, "New level…");
    type_name(&mut h, "cave");
    click(&mut h, "Create");
    h.run_steps(3);
    for _ in 0..200 {
        if editor(&h).files().unused_files() > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.run_steps(1);
    }
    h.get_by_label_contains("Problems").click();
    h.run_steps(2);
    // Unused files are out of the list until asked for.
    assert!(h.query_by_label("Make it a boot level").is_none());
    h.get_by_label_contains("unused file").click();
    h.run_steps(2);
    h.get_by_label("Make it a boot level");
    // The filters: by file, then by severity.
    h.get_by_label("Filter problems by file").click();
    h.get_by_label("Filter problems by file")
        .type_text("materials/");
    h.run_steps(2);
    assert!(
        h.query_by_label("Make it a boot level").is_none(),
        "not in materials/"
    );
    h.get_by_label("Filter problems by file").focus();
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.key_press(Key::Backspace);
    h.run_steps(2);
    h.get_by_label("Make it a boot level");
    h.get_by_label_contains("⚠ Warnings").click();
    h.run_steps(2);
    assert!(
        h.query_by_label("Make it a boot level").is_none(),
        "warnings hidden"
    );
    h.get_by_label_contains("⚠ Warnings").click();
    h.run_steps(2);
    click(&mut h, "Make it a boot level");
    let project = fs::read_to_string(dir.path().join("kiln.project")).unwrap();
    assert!(project.contains("\"levels/cave\""), "{project}");
    assert!(
        project.contains("\"plugins\""),
        "the rest of the file is kept: {project}"
    );
    assert_eq!(editor(&h).files().unused_files(), 0);
    undo(&mut h);
    assert_eq!(
        fs::read(dir.path().join("kiln.project")).unwrap(),
        project_before
    );
    assert_eq!(editor(&h).files().unused_files(), 1, "unused again");
    // The same from the level's menu in the asset browser.
    h.get_by_label("Assets").click();
    h.run_steps(2);
    right_click(&mut h, "🗺 cave.level");
    click(&mut h, "Make a boot level");
    let project = fs::read_to_string(dir.path().join("kiln.project")).unwrap();
    assert!(project.contains("\"levels/cave\""), "{project}");
}

/// On a desktop without a file dialog service, File > Import… shows Kiln's own
/// dialog in the window (it used to do nothing at all): a folder typed in, a file
/// chosen, imported; Escape closes it; Open project… and New project's Browse…
/// use it too.
#[test]
fn without_a_desktop_file_dialog_import_uses_the_windows_own() {
    let dir = demo_copy();
    let outside = tempfile::tempdir().unwrap();
    image::RgbImage::from_pixel(2, 2, image::Rgb([200, 40, 40]))
        .save(outside.path().join("brick.png"))
        .unwrap();
    std::fs::create_dir(outside.path().join("more")).unwrap();
    let mut h = open(dir.path());
    h.state_mut().file_dialogs = kiln::editor::file_picker::FileDialogs::Builtin;
    h.get_by_label("📁 textures").click();
    h.run_steps(2);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::I);
    h.run_steps(3);
    h.get_by_label("Import files into the project");
    // Typed to the folder, as into any file dialog's path field.
    h.get_by_label("Folder path").focus();
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.get_by_label("Folder path")
        .type_text(&outside.path().display().to_string());
    h.key_press(Key::Enter);
    h.run_steps(3);
    h.get_by_label("📁 more");
    assert!(
        h.get_by_label("Import 0 files")
            .accesskit_node()
            .is_disabled()
    );
    click(&mut h, "brick.png");
    click(&mut h, "Import 1 file");
    assert!(dir.path().join("textures/brick.png").is_file());
    assert!(h.query_by_label("Import files into the project").is_none());
    // Escape closes it; Open project… asks the same way.
    h.get_by_label("File").click();
    h.run_steps(2);
    click(&mut h, "Open project…");
    h.get_by_label("Open a Kiln project");
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(h.query_by_label("Open a Kiln project").is_none());
}
