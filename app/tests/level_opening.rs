//! Large levels open on a worker thread, with their progress shown; the window keeps
//! drawing, and a level that cannot be opened leaves the open one in place. The
//! threshold is lowered to 0 so that the demo's small levels take that path.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kiln::editor::{Action, KilnApp};
use support::ui::{editor, open};
use support::{big_project, demo_copy};

/// Asks the editor to open `file` on its worker, as the Open level menu does.
fn open_in_background(h: &mut Harness<'_, KilnApp>, file: &str) {
    let e = h.state_mut().editor.as_mut().unwrap();
    e.set_background_open_threshold(0);
    e.apply(Action::OpenLevel(file.into()));
}

/// Frames until the worker is done and its level is installed (at most 30 s).
fn until_opened(h: &mut Harness<'_, KilnApp>) {
    let start = Instant::now();
    while editor(h).opening().is_some() {
        assert!(start.elapsed() < Duration::from_secs(30), "still opening");
        std::thread::sleep(Duration::from_millis(10));
        h.run_steps(1);
    }
    h.run_steps(2);
}

#[test]
fn a_large_level_opens_on_a_worker_with_its_progress_shown() {
    let dir = big_project(2_000);
    std::fs::copy(
        dir.path().join("levels/big.level"),
        dir.path().join("levels/copy.level"),
    )
    .unwrap();
    let mut h = open(dir.path());
    open_in_background(&mut h, "levels/copy.level");
    // The dialog shows (its first frame only measures it) while the worker reads.
    let mut seen = false;
    for _ in 0..6 {
        h.run_steps(1);
        let Some(status) = editor(&h).opening() else {
            break;
        };
        assert_eq!(status.file, "levels/copy.level");
        assert!(status.bytes > 1_000_000, "{status:?}");
        // The level before stays open until the new one is in.
        assert_eq!(editor(&h).level().unwrap().file, "levels/big.level");
        seen |= h.query_by_label("Opening levels/copy.level").is_some();
    }
    assert!(seen, "the progress dialog was shown");

    until_opened(&mut h);
    let e = editor(&h);
    assert_eq!(e.level().unwrap().file, "levels/copy.level");
    assert_eq!(
        e.preview().entities.len(),
        20_000,
        "spawned from the worker's compile: {:?}",
        e.preview_state().compile_error()
    );
    assert!(h.query_by_label("Opening levels/copy.level").is_none());
}

#[test]
fn a_level_that_does_not_parse_leaves_the_open_one_in_place() {
    let dir = demo_copy();
    std::fs::write(dir.path().join("levels/broken.level"), "{\"entities\": [").unwrap();
    let mut h = open(dir.path());
    // The editor lists levels at start; the broken one is asked for by name.
    open_in_background(&mut h, "levels/broken.level");
    until_opened(&mut h);
    let e = editor(&h);
    assert_eq!(e.level().unwrap().file, "levels/forest.level");
    assert!(
        e.log()
            .iter()
            .any(|l| l.text.starts_with("cannot open levels/broken.level:")),
        "{:?}",
        e.log()
    );
}

#[test]
fn a_compile_error_found_on_the_worker_opens_the_level_for_fixing() {
    let dir = demo_copy();
    let level = r#"{"entities": [{"id": "a", "components": {"transform": {"position": "up"}}}]}"#;
    std::fs::write(dir.path().join("levels/wrong.level"), level).unwrap();
    let mut h = open(dir.path());
    open_in_background(&mut h, "levels/wrong.level");
    until_opened(&mut h);
    let e = editor(&h);
    assert_eq!(e.level().unwrap().file, "levels/wrong.level");
    let error = e
        .preview_state()
        .compile_error()
        .expect("the compile error is shown")
        .to_string();
    assert!(
        error.contains("entity \"a\", component \"transform\", field \"position\""),
        "{error}"
    );
}

/// Opening another level draws that level: the viewport's list of what it draws was
/// kept when the new preview counted its spawns from zero again, as the old one
/// had, so the first level stayed on screen until the selection changed.
#[test]
fn the_viewport_draws_the_level_opened_not_the_one_before() {
    let dir = support::demo_copy();
    let mut h = support::ui::open(dir.path());
    h.run_steps(4);
    let drawn_of = |h: &egui_kittest::Harness<'_, kiln::editor::KilnApp>| {
        h.state().panels.viewport.drawn_entities().to_vec()
    };
    let forest = drawn_of(&h);
    assert!(!forest.is_empty(), "the forest is drawn");
    h.state_mut()
        .editor
        .as_mut()
        .unwrap()
        .apply(kiln::editor::Action::OpenLevel(
            "levels/workshop.level".into(),
        ));
    h.run_steps(4);
    let e = support::ui::editor(&h);
    assert_eq!(e.level().unwrap().file, "levels/workshop.level");
    let level = e.preview().level.as_ref().unwrap();
    let drawn = drawn_of(&h);
    assert!(!drawn.is_empty());
    for entity in &drawn {
        assert!(
            level.entities.contains(entity),
            "{entity:?} is not an entity of the workshop"
        );
    }
}
