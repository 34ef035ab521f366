//! Creating, duplicating, deleting, importing and placing assets through the
//! editor's actions, checked on disk: each one undo step that puts the project back
//! byte for byte, and a delete that knows what references the file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;

use kiln::editor::import::OnConflict;
use kiln::editor::{Action, Editor, Effect, UiCommand};
use support::{demo_copy, snapshot};

fn undo(e: &mut Editor) {
    e.apply(Action::Run(UiCommand::Undo));
}

fn redo(e: &mut Editor) {
    e.apply(Action::Run(UiCommand::Redo));
}

fn errors(e: &Editor) -> Vec<String> {
    e.log()
        .iter()
        .filter(|l| l.severity == kiln::editor::Severity::Error)
        .map(|l| l.text.clone())
        .collect()
}

#[test]
fn every_type_with_a_schema_is_made_with_its_defaults_and_checks_clean() {
    let dir = demo_copy();
    let mut e = support::open_editor(dir.path()).unwrap();
    let before = snapshot(dir.path());
    let types = e.files().creatable_types();
    for ext in ["level", "unit", "material", "mesh"] {
        assert!(types.iter().any(|t| t == ext), "{types:?}");
    }
    assert!(
        !types.iter().any(|t| t == "project"),
        "one kiln.project per project"
    );
    for ext in &types {
        let file = format!("new_things/fresh.{ext}");
        e.apply(Action::CreateAsset { file: file.clone() });
        assert!(errors(&e).is_empty(), "{:?}", errors(&e));
        let text = fs::read_to_string(dir.path().join(&file)).unwrap();
        assert!(text.ends_with('\n'), "{text}");
        let effects = e.take_effects();
        assert!(
            effects.contains(&Effect::ShowFile(file.clone())),
            "{effects:?}"
        );
        assert_eq!(
            effects.contains(&Effect::OpenLevel(file.clone())),
            ext == "level" || ext == "unit"
        );
    }
    assert_eq!(
        fs::read_to_string(dir.path().join("new_things/fresh.material")).unwrap(),
        "{\n  \"color\": [0.8, 0.8, 0.8, 1],\n  \"roughness\": 0.5\n}\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("new_things/fresh.level")).unwrap(),
        "{\n  \"entities\": []\n}\n"
    );
    // The project still checks clean, new files and all (unused files aside).
    let (code, out, err) = support::kiln(&["check"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    // Each was one step: undoing them all leaves the project as it was, folder too.
    for _ in &types {
        undo(&mut e);
    }
    assert_eq!(snapshot(dir.path()), before);
    assert!(!dir.path().join("new_things").exists());
    redo(&mut e);
    assert!(
        dir.path()
            .join(format!("new_things/fresh.{}", types[0]))
            .is_file()
    );
}

#[test]
fn a_name_that_is_not_canonical_or_taken_is_refused_with_the_canonical_one() {
    use kiln::editor::project_files::NameProblem;
    let dir = demo_copy();
    let mut e = support::open_editor(dir.path()).unwrap();
    assert_eq!(
        e.files().check_new_path("materials/Oak Bark.material"),
        Err(NameProblem::NotCanonical(Some(
            "materials/oak_bark.material".into()
        )))
    );
    assert_eq!(
        e.files().check_new_path("Materials/oak.material"),
        Err(NameProblem::NotCanonical(Some(
            "materials/oak.material".into()
        )))
    );
    assert_eq!(
        e.files().check_new_path("materials/bark.material"),
        Err(NameProblem::Taken)
    );
    assert_eq!(
        e.files().check_new_path(".kiln/x.material"),
        Err(NameProblem::NotAResource)
    );
    assert_eq!(
        e.files().check_new_path("build/x.material"),
        Err(NameProblem::NotAResource)
    );
    assert_eq!(e.files().check_new_path("materials/oak.material"), Ok(()));
    let before = snapshot(dir.path());
    e.apply(Action::CreateAsset {
        file: "materials/Oak Bark.material".into(),
    });
    assert!(
        errors(&e)
            .iter()
            .any(|l| l.contains("use \"materials/oak_bark.material\""))
    );
    assert_eq!(snapshot(dir.path()), before, "nothing was written");
    assert_eq!(e.history().depth(), 0);
}

#[test]
fn folders_are_made_and_shown_empty_and_undo_takes_them_back() {
    let dir = demo_copy();
    let mut e = support::open_editor(dir.path()).unwrap();
    e.apply(Action::CreateFolder {
        folder: "art/trees/oak".into(),
    });
    assert!(dir.path().join("art/trees/oak").is_dir());
    assert!(
        e.files().empty_folders().contains("art/trees/oak"),
        "{:?}",
        e.files().empty_folders()
    );
    assert_eq!(
        e.history().undo_label().as_deref(),
        Some("new folder art/trees/oak")
    );
    undo(&mut e);
    assert!(!dir.path().join("art/trees").exists());
    assert!(dir.path().join("art").is_dir(), "only what it made goes");
    assert!(
        e.files().empty_folders().is_empty(),
        "{:?}",
        e.files().empty_folders()
    );
    redo(&mut e);
    assert!(dir.path().join("art/trees/oak").is_dir());
}

#[test]
fn a_duplicate_is_a_byte_for_byte_copy_under_its_new_name() {
    let dir = demo_copy();
    let mut e = support::open_editor(dir.path()).unwrap();
    e.apply(Action::DuplicateAsset {
        file: "units/lamp.unit".into(),
        copy: "units/lamp_copy.unit".into(),
    });
    assert_eq!(
        fs::read(dir.path().join("units/lamp_copy.unit")).unwrap(),
        fs::read(dir.path().join("units/lamp.unit")).unwrap()
    );
    undo(&mut e);
    assert!(!dir.path().join("units/lamp_copy.unit").exists());
    // Onto a taken name: refused.
    e.apply(Action::DuplicateAsset {
        file: "units/lamp.unit".into(),
        copy: "units/crate.unit".into(),
    });
    assert!(
        errors(&e).iter().any(|l| l.contains("already")),
        "{:?}",
        errors(&e)
    );
}

#[test]
fn deleting_a_used_material_lists_its_references_and_can_point_them_elsewhere() {
    let dir = demo_copy();
    let mut e = support::open_editor(dir.path()).unwrap();
    let before = snapshot(dir.path());
    let plan = e
        .files()
        .plan_delete(&["materials/bark.material".into()])
        .unwrap();
    assert_eq!(plan.files, ["materials/bark.material"]);
    let places: Vec<String> = plan
        .references
        .iter()
        .map(|r| r.place.to_string())
        .collect();
    assert!(
        places.iter().any(|p| p.starts_with("units/tree.unit:9:")),
        "{places:?}"
    );

    e.apply(Action::DeleteAssets {
        paths: vec!["materials/bark.material".into()],
        replace_with: Some("materials/wood.material".into()),
    });
    assert!(errors(&e).is_empty(), "{:?}", errors(&e));
    assert!(!dir.path().join("materials/bark.material").exists());
    let tree = fs::read_to_string(dir.path().join("units/tree.unit")).unwrap();
    assert!(tree.contains("\"material\": \"materials/wood\""), "{tree}");
    assert!(
        !e.files().findings().iter().any(|f| f.is_error()),
        "{:?}",
        e.files().findings()
    );
    assert_eq!(
        e.history().undo_label().as_deref(),
        Some("delete materials/bark.material (its references now name materials/wood.material)")
    );
    // One undo step: the file and the references, byte for byte.
    undo(&mut e);
    assert!(errors(&e).is_empty(), "{:?}", errors(&e));
    assert_eq!(snapshot(dir.path()), before);
    redo(&mut e);
    assert!(!dir.path().join("materials/bark.material").exists());
    undo(&mut e);
    assert_eq!(snapshot(dir.path()), before);

    // Deleted anyway: its references are missing in Problems, until undone.
    e.apply(Action::DeleteAssets {
        paths: vec!["materials/bark.material".into()],
        replace_with: None,
    });
    assert!(
        e.files()
            .findings()
            .iter()
            .any(|f| f.is_error() && f.to_string().contains("materials/bark")),
        "{:?}",
        e.files().findings()
    );
    undo(&mut e);
    assert_eq!(snapshot(dir.path()), before);
    assert!(!e.files().findings().iter().any(|f| f.is_error()));
}

#[test]
fn deleting_a_folder_takes_everything_in_it_and_undo_brings_it_all_back() {
    let dir = demo_copy();
    fs::write(dir.path().join("art/.gitkeep"), "").unwrap();
    let mut e = support::open_editor(dir.path()).unwrap();
    let before = snapshot(dir.path());
    let plan = e.files().plan_delete(&["art".into()]).unwrap();
    assert!(plan.files.contains(&"art/.gitkeep".to_owned()));
    assert!(plan.files.contains(&"art/canopy.bin".to_owned()));
    // References from meshes outside the folder; not the models' own URIs.
    assert!(
        plan.references
            .iter()
            .all(|r| !r.place.file.starts_with("art/"))
    );
    assert!(
        plan.references
            .iter()
            .any(|r| &*r.place.file == "meshes/canopy.mesh")
    );
    e.apply(Action::DeleteAssets {
        paths: vec!["art".into()],
        replace_with: None,
    });
    assert!(errors(&e).is_empty(), "{:?}", errors(&e));
    assert!(!dir.path().join("art").exists());
    undo(&mut e);
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn deleting_the_open_level_opens_another_and_undo_restores_it() {
    let dir = demo_copy();
    let mut e = support::open_editor(dir.path()).unwrap();
    assert_eq!(e.level().unwrap().file, "levels/forest.level");
    let text = fs::read(dir.path().join("levels/forest.level")).unwrap();
    e.apply(Action::DeleteAssets {
        paths: vec!["levels/forest.level".into()],
        replace_with: None,
    });
    assert_eq!(e.level().unwrap().file, "levels/workshop.level");
    assert!(
        !e.files()
            .levels()
            .contains(&"levels/forest.level".to_owned())
    );
    undo(&mut e);
    assert_eq!(
        fs::read(dir.path().join("levels/forest.level")).unwrap(),
        text
    );
    assert!(
        e.files()
            .levels()
            .contains(&"levels/forest.level".to_owned())
    );

    // With unsaved edits, deleting the open level is refused.
    e.apply(Action::OpenLevel("levels/forest.level".into()));
    e.apply(Action::Rename {
        entity: "windmill".into(),
        name: "Mill".into(),
    });
    e.apply(Action::DeleteAssets {
        paths: vec!["levels/forest.level".into()],
        replace_with: None,
    });
    assert!(dir.path().join("levels/forest.level").exists());
    assert!(errors(&e).iter().any(|l| l.contains("unsaved edits")));
}

/// A model from elsewhere: a glTF with its buffer, and an image, in a folder outside
/// the project.
fn art_outside() -> tempfile::TempDir {
    let outside = tempfile::tempdir().unwrap();
    let d = outside.path();
    let demo = support::demo();
    fs::copy(demo.join("art/rock.bin"), d.join("Big Rock.bin")).unwrap();
    fs::copy(demo.join("art/rock.png"), d.join("Big Rock.png")).unwrap();
    let gltf = fs::read_to_string(demo.join("art/rock.gltf"))
        .unwrap()
        .replace("\"rock.bin\"", "\"Big%20Rock.bin\"")
        .replace("\"rock.png\"", "\"Big%20Rock.png\"");
    fs::write(d.join("Big Rock.gltf"), gltf).unwrap();
    fs::copy(demo.join("textures/bark.png"), d.join("Moss.PNG")).unwrap();
    outside
}

#[test]
fn importing_a_model_and_an_image_copies_them_with_what_they_need_and_asks_before_replacing() {
    let dir = demo_copy();
    let outside = art_outside();
    let mut e = support::open_editor(dir.path()).unwrap();
    let before = snapshot(dir.path());
    let sources = vec![
        outside.path().join("Big Rock.gltf"),
        outside.path().join("Moss.PNG"),
    ];
    e.apply(Action::ImportFiles {
        sources: sources.clone(),
        folder: "art/imported".into(),
        on_conflict: None,
    });
    assert!(errors(&e).is_empty(), "{:?}", errors(&e));
    for file in [
        "art/imported/big_rock.gltf",
        "art/imported/big_rock.bin",
        "art/imported/big_rock.png",
        "art/imported/big_rock.mesh",
        "art/imported/moss.png",
        "art/imported/moss.material",
    ] {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    // What it made checks clean: the model's URIs, the mesh and material references.
    assert!(
        !e.files().findings().iter().any(|f| f.is_error()),
        "{:?}",
        e.files().findings()
    );
    let mesh = fs::read_to_string(dir.path().join("art/imported/big_rock.mesh")).unwrap();
    assert!(
        mesh.contains("\"gltf\": \"art/imported/big_rock\""),
        "{mesh}"
    );
    assert_eq!(
        e.history().undo_label().as_deref(),
        Some("import 4 files into art/imported")
    );

    // Again: the files are there, so it asks, and writes nothing until answered.
    let imported = snapshot(dir.path());
    e.apply(Action::ImportFiles {
        sources: sources.clone(),
        folder: "art/imported".into(),
        on_conflict: None,
    });
    let question = e.files().import_question().expect("asks").clone();
    assert!(
        question
            .conflicts
            .contains(&"art/imported/big_rock.gltf".to_owned())
    );
    assert_eq!(snapshot(dir.path()), imported);
    // Keep both: free names, and the new model's URIs name its own copies.
    e.apply(Action::ImportFiles {
        sources: question.sources.clone(),
        folder: question.folder.clone(),
        on_conflict: Some(OnConflict::KeepBoth),
    });
    assert!(e.files().import_question().is_none());
    let gltf = fs::read_to_string(dir.path().join("art/imported/big_rock_2.gltf")).unwrap();
    assert!(gltf.contains("\"uri\": \"big_rock_2.bin\""), "{gltf}");
    undo(&mut e);
    assert_eq!(snapshot(dir.path()), imported);
    // Replace: same paths, so every reference to them keeps working.
    fs::write(outside.path().join("Moss.PNG"), b"\x89PNG newer").unwrap();
    e.apply(Action::ImportFiles {
        sources: vec![outside.path().join("Moss.PNG")],
        folder: "art/imported".into(),
        on_conflict: Some(OnConflict::Replace),
    });
    assert_eq!(
        fs::read(dir.path().join("art/imported/moss.png")).unwrap(),
        b"\x89PNG newer"
    );
    undo(&mut e);
    assert_eq!(snapshot(dir.path()), imported);
    undo(&mut e);
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_mesh_or_a_prefab_is_placed_in_the_level_as_one_step() {
    let dir = demo_copy();
    let mut e = support::open_editor(dir.path()).unwrap();
    let count = e.level().unwrap().doc.entities.len();
    e.apply(Action::PlaceAsset {
        file: "meshes/rock.mesh".into(),
        position: Some([2.0, 0.0, 3.0]),
    });
    let id = e.selection()[0].clone();
    let rock = e.entity(&id).unwrap().clone();
    assert_eq!(rock.name, "Rock");
    assert_eq!(rock.components["mesh"]["mesh"], "meshes/rock");
    let at = e.world_pose(&id).unwrap().translation;
    assert!(
        (at - glam::Vec3A::new(2.0, 0.0, 3.0)).length() < 1e-4,
        "{at:?}"
    );
    e.apply(Action::PlaceAsset {
        file: "units/lamp.unit".into(),
        position: Some([0.0, 0.0, 0.0]),
    });
    let lamp = e.selection()[0].clone();
    assert_eq!(
        e.entity(&lamp).unwrap().prefab.as_deref(),
        Some("units/lamp")
    );
    assert!(
        e.preview()
            .level
            .as_ref()
            .unwrap()
            .entity(&format!("{lamp}/head"))
            .is_some()
    );
    undo(&mut e);
    undo(&mut e);
    assert_eq!(e.level().unwrap().doc.entities.len(), count);
    assert_eq!(e.preview_state().compile_error(), None);
}
