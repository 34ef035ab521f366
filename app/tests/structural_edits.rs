//! An entity added, deleted or moved under another parent, in the editor or by
//! another tool's save, spawns again only what it touched: every other entity
//! keeps its runtime id and what the simulation did to it, and the world holds
//! what a fresh spawn of the document does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kiln::editor::preview::PartialSpawn;
use kiln::editor::{Action, Editor, UiCommand};

/// The lines a fresh spawn of the document holds.
fn fresh_state(editor: &Editor) -> Vec<String> {
    support::fresh_build(editor).1
}

fn state(editor: &Editor) -> Vec<String> {
    let preview = editor.preview();
    preview.level.as_ref().unwrap().state_in(&preview.world)
}

/// Runtime entity of each authoring id but `except`.
fn runtime_ids(editor: &Editor, except: &[&str]) -> Vec<(String, kiln_core::Entity)> {
    let level = editor.preview().level.as_ref().unwrap();
    let mut ids: Vec<(String, kiln_core::Entity)> = level
        .ids()
        .filter(|id| !except.contains(id))
        .map(|id| (id.to_owned(), level.entity(id).unwrap()))
        .collect();
    ids.sort();
    ids
}

#[test]
fn duplicating_and_deleting_spawn_again_only_those_entities() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    let spawns = editor.preview().spawns;
    let before = runtime_ids(&editor, &[]);
    assert!(before.len() > 10, "the demo has a level of many entities");

    editor.apply(Action::Select(vec!["boulder".into()]));
    editor.apply(Action::Run(UiCommand::Duplicate));
    let copy = editor.selection().to_vec();
    assert_eq!(copy.len(), 1);
    assert_ne!(copy[0], "boulder");
    assert_eq!(
        editor.preview().timing.respawned,
        Some(PartialSpawn {
            spawned: 1,
            destroyed: 0
        })
    );
    assert_eq!(state(&editor), fresh_state(&editor), "after duplicate");
    assert_eq!(
        runtime_ids(&editor, &[&copy[0]]),
        before,
        "the others kept their ids"
    );

    editor.apply(Action::Run(UiCommand::Delete));
    assert_eq!(
        editor.preview().timing.respawned,
        Some(PartialSpawn {
            spawned: 0,
            destroyed: 1
        })
    );
    assert_eq!(state(&editor), fresh_state(&editor), "after delete");
    assert_eq!(runtime_ids(&editor, &[]), before);

    // Undo and redo are structural edits too.
    editor.apply(Action::Run(UiCommand::Undo));
    assert_eq!(state(&editor), fresh_state(&editor), "after undo");
    assert!(
        editor
            .preview()
            .level
            .as_ref()
            .unwrap()
            .entity(&copy[0])
            .is_some()
    );
    assert_eq!(
        editor.preview().spawns,
        spawns,
        "the level was never spawned whole"
    );
}

#[test]
fn the_simulation_goes_on_for_the_entities_a_structural_edit_left() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    // Positive control: playing moves something.
    let picture = state(&editor);
    editor.apply(Action::Run(UiCommand::PlayPause));
    for _ in 0..30 {
        editor.tick(1.0 / 60.0, std::time::Duration::from_secs(3600));
    }
    let played = state(&editor);
    assert_ne!(played, picture, "the simulation moved nothing");
    let time = editor.preview().time;

    editor.apply(Action::Select(vec!["boulder".into()]));
    editor.apply(Action::Run(UiCommand::Delete));
    assert!(editor.preview().timing.respawned.is_some());
    // Everything but the boulder is where the simulation left it, and the
    // simulation's clock did not start over.
    let boulder = |l: &String| l.starts_with("boulder:");
    let left: Vec<String> = played.into_iter().filter(|l| !boulder(l)).collect();
    let now: Vec<String> = state(&editor).into_iter().filter(|l| !boulder(l)).collect();
    assert_eq!(now, left);
    assert_eq!(editor.preview().time, time);
}

/// A big level's first save by another program is taken as every later one is:
/// the open level's build is kept from its opening and its layout made for the
/// index on a thread, so the save is compiled and indexed by what it changed.
#[test]
fn the_first_outside_save_of_a_big_level_is_taken_by_what_it_changed() {
    let dir = support::demo_copy();
    let root = dir.path();
    let file = "levels/big.level";
    let entity = |i: usize, x: f64| {
        serde_json::json!({"id": format!("e{i}"), "name": format!("Entity {i}"), "components": {
            "transform": {"position": [x, 0.0, i as f64]},
            "mesh": {"mesh": "meshes/rock", "material": "materials/bark"}
        }})
    };
    let mut doc =
        serde_json::json!({"entities": (0..2500).map(|i| entity(i, 0.0)).collect::<Vec<_>>()});
    let text = kiln_core::json_format::to_canonical_string(&doc);
    assert!(text.len() > 256 * 1024, "{} bytes", text.len());
    std::fs::write(root.join(file), &text).unwrap();
    let mut editor = support::open_editor(root).unwrap();
    editor.apply(Action::OpenLevel(file.into()));
    editor.finish_opening();
    support::until(
        &mut editor,
        "the level's build and layout to be made",
        |e| {
            e.disk().outside_saves_prepared()
                && e.files()
                    .checker()
                    .is_some_and(|c| c.index().level_layouts_kept() == 1)
        },
    );
    // Positive control: no save was scanned by change yet.
    let scanned = |e: &Editor| {
        e.files()
            .checker()
            .unwrap()
            .index()
            .levels_scanned_by_change()
    };
    assert_eq!(scanned(&editor), 0);

    doc["entities"][1200] = entity(1200, 5.0);
    let saved = kiln_core::json_format::to_canonical_string(&doc);
    support::atomic_write(&root.join(file), &saved);
    support::until(&mut editor, "the save to be indexed", |e| scanned(e) == 1);
    assert!(
        editor.log().iter().any(|l| l
            .text
            .contains("big.level reloaded (incremental, in place)")),
        "the first save took the incremental path"
    );
    assert_eq!(state(&editor), fresh_state(&editor));
}
