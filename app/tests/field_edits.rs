//! The editor's own field edits (a drag of the move handle, a value typed in the
//! inspector) are written into the preview without compiling the level: after
//! each, the blob is a fresh compile's of the document and the world holds what a
//! fresh spawn of it does. A value the compile refuses goes the whole way and is
//! reported; undo goes back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kiln::editor::{Action, Editor, UiCommand};
use serde_json::json;

fn assert_fresh(editor: &Editor, what: &str) {
    let (blob, state) = support::fresh_build(editor);
    let preview = editor.preview();
    assert!(
        preview.blob.as_deref() == Some(&blob[..]),
        "{what}: not a fresh compile's blob"
    );
    assert_eq!(
        preview.level.as_ref().unwrap().state_in(&preview.world),
        state,
        "{what}"
    );
}

#[test]
fn field_edits_are_written_into_the_running_world_and_agree_with_a_fresh_build() {
    let dir = support::demo_copy();
    let mut editor = support::open_editor(dir.path()).unwrap();
    let (spawns, patches, partial) = (
        editor.preview().spawns,
        editor.preview().patches,
        editor.preview().partial_spawns,
    );
    // A drag of two entities, frame by frame.
    for step in 0..6 {
        editor.apply(Action::SetFieldEach {
            component: "transform".into(),
            field: "position".into(),
            values: vec![
                ("boulder".into(), json!([-2.0 + step as f64, 0.6, 6.0])),
                ("firefly".into(), json!([0.0, 2.0 + step as f64 / 2.0, 3.0])),
            ],
            continuing: step > 0,
        });
        assert_fresh(&editor, &format!("drag frame {step}"));
    }
    editor.apply(Action::EndGesture);
    // Values typed in the inspector: a rotor's speed (a child of the windmill), a
    // firefly's oscillation, the windmill's own pose (its rotor and blades follow).
    for (entity, component, field, value) in [
        ("rotor", "rotator", "speed", json!(120)),
        ("firefly", "oscillator", "frequency", json!(0.9)),
        ("windmill", "transform", "position", json!([4, 1.5, -6])),
        ("boulder", "mesh", "material", json!("materials/red_glow")),
    ] {
        editor.apply(Action::SetField {
            entities: vec![entity.into()],
            component: component.into(),
            instance: None,
            field: field.into(),
            value,
            continuing: false,
        });
        assert_fresh(&editor, &format!("{entity}.{component}.{field}"));
        // The status bar says the world was patched, not spawned.
        assert!(
            editor.preview().timing.in_place,
            "{entity}.{component}.{field}"
        );
    }
    let preview = editor.preview();
    // The first field edit compiled the document once, for the layout, and
    // spawned again the two entities it moved; every other one was written into
    // the running world.
    assert_eq!(preview.spawns, spawns, "the level was never spawned whole");
    assert_eq!(
        preview.partial_spawns,
        partial + 1,
        "only the first edit spawned"
    );
    assert_eq!(preview.patches, patches + 9);

    // A value the compile refuses: reported, and the last good world stays.
    let good = editor.preview().blob.clone();
    editor.apply(Action::SetField {
        entities: vec!["rotor".into()],
        component: "rotator".into(),
        instance: None,
        field: "speed".into(),
        value: json!("fast"),
        continuing: false,
    });
    let error = editor
        .preview_state()
        .compile_error()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        error.contains("rotor") && error.contains("speed"),
        "{error}"
    );
    assert_eq!(editor.preview().blob, good);
    // Undo brings the good value back, and the preview follows (spawned).
    editor.apply(Action::Run(UiCommand::Undo));
    assert!(editor.preview_state().compile_error().is_none());
    assert!(!editor.preview().timing.in_place);
    assert_fresh(&editor, "after undo");
    editor.apply(Action::Run(UiCommand::Undo));
    assert_fresh(&editor, "after the second undo");
}
