//! The editor's preview follows the disk: levels and what they depend on change the
//! ways tools and version control change them, and the preview respawns by itself.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::{atomic_write, until};

use std::fs;
use std::time::Duration;

use glam::Vec3;
use kiln::editor::{Action, Editor, UiCommand};

fn position(editor: &Editor, id: &str) -> Vec3 {
    editor
        .world_pose(id)
        .map(|p| Vec3::from(p.translation))
        .unwrap_or(Vec3::NAN)
}

#[test]
fn a_prefab_changed_on_disk_respawns_the_level_keeping_selection_and_play_state() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    editor.apply(Action::OpenLevel("levels/workshop.level".into()));
    editor.apply(Action::Select(vec!["crate_1".into()]));
    editor.apply(Action::Run(UiCommand::PlayPause));
    let before = position(&editor, "crate_1/box");
    let unit = dir.path().join("units/crate.unit");
    atomic_write(
        &unit,
        &fs::read_to_string(&unit)
            .unwrap()
            .replace("\"position\": [0, 0.5, 0]", "\"position\": [0, 2.5, 0]"),
    );
    until(&mut editor, "the crate box to rise", |e| {
        (position(e, "crate_1/box") - before).y > 1.9
    });
    assert_eq!(editor.selection(), vec!["crate_1".to_owned()]);
    assert!(editor.preview().playing);
    let reload = editor.disk().last_reload().expect("the reload is timed");
    assert!(
        reload.detect_ms > 0.0 && reload.compile_ms > 0.0,
        "{reload:?}"
    );
    assert!(
        !editor.is_dirty(),
        "a dependency changing does not dirty the level"
    );
}

#[test]
fn the_open_level_changed_on_disk_is_reloaded_and_a_broken_one_keeps_the_last_good_world() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    let level = dir.path().join("levels/forest.level");
    let text = fs::read_to_string(&level).unwrap();
    let entities = editor.preview().entities.len();

    // In-place write, as some editors save.
    fs::write(
        &level,
        text.replace("\"name\": \"Boulder\"", "\"name\": \"Big boulder\""),
    )
    .unwrap();
    until(&mut editor, "the rename to arrive", |e| {
        e.entity("boulder").is_some_and(|b| b.name == "Big boulder")
    });
    assert!(!editor.is_dirty());

    // Broken: the last good world stays, the problem says where.
    atomic_write(
        &level,
        "{\n  \"entities\": [\n    {\"id\": \"a\",}\n  ]\n}\n",
    );
    until(&mut editor, "the error", |e| {
        e.preview_state().compile_error().is_some()
    });
    assert!(
        editor
            .preview_state()
            .compile_error()
            .unwrap()
            .to_string()
            .contains("levels/forest.level:3:16"),
        "{:?}",
        editor.preview_state().compile_error()
    );
    assert_eq!(
        editor.preview().entities.len(),
        entities,
        "the last good world stays"
    );
    assert!(
        editor
            .log()
            .iter()
            .any(|t| t.text.contains("levels/forest.level:3:16"))
    );

    // Fixed: the preview resumes by itself.
    atomic_write(
        &level,
        &text.replace("\"position\": [-2, 0.6, 6]", "\"position\": [-2, 0.6, 9]"),
    );
    until(&mut editor, "the fix", |e| {
        e.preview_state().compile_error().is_none() && (position(e, "boulder").z - 9.0).abs() < 1e-4
    });
}

#[test]
fn unsaved_edits_and_a_change_on_disk_ask_which_to_keep() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    editor.apply(Action::Rename {
        entity: "firefly".into(),
        name: "Glow worm".into(),
    });
    let level = dir.path().join("levels/forest.level");
    let text = fs::read_to_string(&level).unwrap();
    atomic_write(
        &level,
        &text.replace("\"name\": \"Boulder\"", "\"name\": \"Rock\""),
    );
    until(&mut editor, "the conflict", |e| {
        e.disk().disk_conflict().is_some()
    });
    // Nothing changed yet: the user decides.
    assert_eq!(editor.entity("firefly").unwrap().name, "Glow worm");
    assert_eq!(editor.entity("boulder").unwrap().name, "Boulder");

    editor.apply(Action::ResolveDiskConflict { take_disk: true });
    assert_eq!(editor.entity("boulder").unwrap().name, "Rock");
    assert_eq!(editor.entity("firefly").unwrap().name, "Firefly");
    // The edits are not lost: undo brings them back.
    editor.apply(Action::Run(UiCommand::Undo));
    assert_eq!(editor.entity("firefly").unwrap().name, "Glow worm");
}

#[test]
fn a_change_no_level_uses_reloads_nothing() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    fs::write(dir.path().join("materials/spare.material"), "{}").unwrap();
    until(&mut editor, "the problems list to see the new file", |e| {
        !e.files().findings().is_empty()
    });
    assert!(
        editor.disk().last_reload().is_none(),
        "nothing the open level uses changed"
    );
}

#[test]
fn a_burst_of_changes_reloads_once() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    editor.apply(Action::OpenLevel("levels/workshop.level".into()));
    // A checkout touching every prefab, every material and the level itself at once.
    for entry in ["units", "materials", "levels"]
        .iter()
        .flat_map(|d| fs::read_dir(dir.path().join(d)).unwrap())
    {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, format!("{text}\n")).unwrap();
    }
    // The burst's last write: seen, it shows the poll took the whole burst.
    fs::write(dir.path().join("notes.txt"), "the burst is over").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    editor.poll_changes();
    let seen = |e: &Editor| {
        e.files()
            .checker()
            .unwrap()
            .index()
            .file("notes.txt")
            .is_some()
    };
    assert!(
        seen(&editor),
        "one poll 1.5 s after the burst did not see all of it"
    );
    // Nothing of it comes later as a second reload.
    std::thread::sleep(Duration::from_millis(300));
    editor.poll_changes();
    let reloads = editor
        .log()
        .iter()
        .filter(|l| l.text.contains("reloaded after"))
        .count();
    // The editor folds every batch that is ready into one reload, so a burst seen
    // by one poll is exactly one reload, however the watcher split it.
    assert_eq!(reloads, 1, "{:#?}", editor.log());
}

#[test]
fn saving_in_the_editor_does_not_respawn_the_world() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    editor.apply(Action::Rename {
        entity: "boulder".into(),
        name: "Rock".into(),
    });
    editor.apply(Action::Run(UiCommand::PlayPause));
    editor.tick(0.5, Duration::from_secs(3600));
    editor.apply(Action::Run(UiCommand::Save));
    // A positive control first: a file written after the save is seen, so the
    // save's own event (which came before it) has been followed too.
    fs::write(dir.path().join("notes.txt"), "after the save").unwrap();
    let seen = |e: &Editor| {
        e.files()
            .checker()
            .unwrap()
            .index()
            .file("notes.txt")
            .is_some()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !seen(&editor) {
        assert!(
            std::time::Instant::now() < deadline,
            "the watcher saw nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
        editor.poll_changes();
    }
    assert!(
        editor.preview().time > 0.4,
        "the simulation was reset by our own save"
    );
    assert!(editor.disk().last_reload().is_none());
}

/// The project folder renamed away while the editor has it open: the next change
/// inside it says so, instead of being silently ignored.
#[test]
fn a_project_folder_renamed_away_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("project");
    support::copy_demo(&dir);
    let mut editor = support::open_editor(&dir).unwrap();
    let moved = tmp.path().join("renamed");
    fs::rename(&dir, &moved).unwrap();
    atomic_write(
        &moved.join("materials/bark.material"),
        "{\"color\": [1, 0, 0, 1]}",
    );
    until(
        &mut editor,
        "the editor to notice the folder is gone",
        |e| {
            e.log()
                .iter()
                .any(|t| t.text.contains("was moved, renamed or deleted"))
        },
    );
}

/// A `kiln mv` run in a terminal while the editor has the project open: the editor
/// picks the result up through its watcher, with no stale finding left.
#[test]
fn a_move_from_the_command_line_reaches_the_open_editor() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    assert!(
        editor.files().findings().is_empty(),
        "{:?}",
        editor.files().findings()
    );
    let (code, out, err) = support::kiln(
        &["mv", "materials/bark.material", "materials/oak.material"],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    until(&mut editor, "the editor to see the move", |e| {
        e.files().checker().as_ref().is_some_and(|c| {
            c.index().contains("materials/oak.material")
                && !c.index().contains("materials/bark.material")
                && c.references_to("materials/oak.material").len() == 1
        })
    });
    assert!(
        editor.files().findings().is_empty(),
        "{:?}",
        editor.files().findings()
    );
}

/// Dragging the move handle with several entities selected: every frame of the drag
/// moves each one from where it started, and the whole drag is one undo step.
#[test]
fn dragging_a_selection_is_one_undo_step() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    let before = (position(&editor, "boulder"), position(&editor, "firefly"));
    for x in 1..=4 {
        let dx = x as f32 * 0.5;
        let values = [("boulder", before.0), ("firefly", before.1)]
            .iter()
            .map(|(id, p)| {
                let moved = [p.x + dx, p.y, p.z];
                ((*id).to_owned(), serde_json::json!(moved))
            })
            .collect();
        editor.apply(Action::SetFieldEach {
            component: "transform".into(),
            field: "position".into(),
            values,
            continuing: true,
        });
    }
    editor.apply(Action::EndGesture);
    assert!((position(&editor, "boulder").x - before.0.x - 2.0).abs() < 1e-4);
    assert!((position(&editor, "firefly").x - before.1.x - 2.0).abs() < 1e-4);
    editor.apply(Action::Run(UiCommand::Undo));
    assert_eq!(
        (position(&editor, "boulder"), position(&editor, "firefly")),
        before
    );
}

/// Saves made by another program, one after another, some changing fields only
/// (taken incrementally: the entities read into the document, their instances
/// patched into the blob) and some structural (the whole file read): after each,
/// the editor's document is the file's and its world is spawned from the blob a
/// fresh compile of the file writes. Undo takes an incremental reload back.
#[test]
fn outside_saves_reload_incrementally_and_agree_with_a_fresh_read() {
    let dir = support::demo_copy();
    let root = dir.path();
    let mut editor = support::open_editor(root).unwrap();
    // Saves are shown before the index takes them in (as the editor does for
    // big levels; the demo's is small), and the index follows on the next frame.
    editor.disk_mut().show_saves_before_indexing_from(0);
    let file = "levels/forest.level";
    let path = root.join(file);
    let original = fs::read_to_string(&path).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&original).unwrap();
    let project = kiln_core::Project::open(root).unwrap();
    let mut incremental = 0;
    for step in 0..8 {
        let entities = doc["entities"].as_array_mut().unwrap();
        let boulder = entities.iter().position(|e| e["id"] == "boulder").unwrap();
        match step % 4 {
            // Fields of one entity, then of two.
            0 | 1 => {
                entities[boulder]["components"]["transform"]["position"][2] =
                    serde_json::json!(6.0 + step as f64);
                if step % 4 == 1 {
                    entities[0]["name"] = serde_json::json!("Ground");
                    let firefly = entities.iter().position(|e| e["id"] == "firefly").unwrap();
                    entities[firefly]["components"]["transform"]["position"][1] =
                        serde_json::json!(1.0 + step as f64);
                }
            }
            // A rename: structural.
            2 => entities[boulder]["name"] = serde_json::json!(format!("Boulder {step}")),
            // An entity added: structural.
            _ => entities.push(
                serde_json::json!({"id": format!("extra_{step}"), "components": {"transform": {}}}),
            ),
        }
        let text = kiln_core::json_format::to_canonical_string(&doc);
        atomic_write(&path, &text);
        let expected_doc = kiln_core::LevelDocument::parse(&text, file).unwrap();
        until(&mut editor, "the save to be taken", |e| {
            e.level().is_some_and(|l| l.doc == expected_doc)
        });
        let fresh = kiln_core::compiler::compile_level_with(
            editor.files().registry(),
            &mut project.resource_source(),
            file,
            &text,
            kiln::editor::preview::PREVIEW_COMPILE,
        )
        .unwrap();
        assert!(
            editor.preview().blob.as_deref() == Some(&fresh.blob[..]),
            "step {step}: the blob is not a fresh compile's"
        );
        // Patched in place or spawned, the world holds what a fresh spawn does.
        let (mut entities, mut world) = (kiln_core::EntityManager::new(), kiln_core::World::new());
        let spawned = kiln_core::spawn_level(
            &fresh.blob,
            editor.files().registry(),
            &mut entities,
            &mut world,
        )
        .unwrap();
        let preview = editor.preview();
        assert_eq!(
            preview.level.as_ref().unwrap().state_in(&preview.world),
            spawned.state_in(&world),
            "step {step}"
        );
        assert!(!editor.is_dirty(), "step {step}");
        incremental = editor
            .log()
            .iter()
            .filter(|t| t.text.contains("reloaded (incremental, in place)"))
            .count();
    }
    // The first save reads the whole file (nothing was kept yet); of the field
    // edits after it, every one is incremental, written into the running world.
    assert!(incremental >= 3, "{incremental} incremental reloads");
    assert_eq!(editor.preview().patches, incremental as u64);
    // A field edit that names a missing material, taken incrementally: the index
    // takes it in after the frame, and Problems says it is missing.
    let entities = doc["entities"].as_array_mut().unwrap();
    let boulder = entities.iter().position(|e| e["id"] == "boulder").unwrap();
    entities[boulder]["components"]["mesh"]["material"] = serde_json::json!("materials/missing");
    let text = kiln_core::json_format::to_canonical_string(&doc);
    atomic_write(&path, &text);
    let expected_doc = kiln_core::LevelDocument::parse(&text, file).unwrap();
    until(&mut editor, "the last save to be taken", |e| {
        e.level().is_some_and(|l| l.doc == expected_doc)
    });
    // Shown before the index took the file in: that is the next frame's work.
    assert!(
        editor.disk().index_pending(),
        "the save waited for the index"
    );
    // The index took every save in after the frame that showed it: the problems
    // are a fresh check's.
    for _ in 0..3 {
        editor.tick(0.0, Duration::from_millis(50));
    }
    let fresh = dependency_checker::Checker::open(
        root,
        editor.files().registry().clone(),
        &Default::default(),
    )
    .unwrap()
    .findings();
    assert_eq!(editor.files().findings(), &fresh[..]);
    assert!(
        fresh
            .iter()
            .any(|f| f.to_string().contains("materials/missing")),
        "{fresh:?}"
    );
    // Undo takes the last reload back as one step.
    let before_undo = editor.level().unwrap().doc.clone();
    editor.apply(Action::Run(UiCommand::Undo));
    assert_ne!(editor.level().unwrap().doc, before_undo);
}
