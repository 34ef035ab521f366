//! `kiln watch` as a game's data compiler: the real binary, files changed on disk the
//! ways editors, tools and version control change them, and the rebuilds it reports.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::atomic_write;
use support::watch::Watch;

use std::fs;
use std::time::{Duration, Instant};

#[test]
fn rebuilds_exactly_the_levels_each_change_affects() {
    let dir = support::demo_copy();
    let root = dir.path();
    let mut w = Watch::start(root);

    // An atomic save of a prefab only the workshop uses.
    let crate_unit = root.join("units/crate.unit");
    atomic_write(
        &crate_unit,
        &fs::read_to_string(&crate_unit)
            .unwrap()
            .replace("\"Box\"", "\"Crate box\""),
    );
    let lines = w.settle(Duration::from_millis(700));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("built levels/workshop.level")
                && l.contains("after units/crate.unit changed")),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("levels/forest.level")),
        "forest does not use crates: {lines:#?}"
    );

    // An in-place write of a material both levels reach (forest through the lamp prefab).
    let metal = root.join("materials/metal.material");
    fs::write(
        &metal,
        fs::read_to_string(&metal).unwrap().replace("0.3", "0.35"),
    )
    .unwrap();
    // Both rebuilds, however busy the machine is (a quiet wait alone failed when
    // the first rebuild took longer than it under a loaded test run).
    let mut lines = w.until_within(Duration::from_secs(20), |l| l.starts_with("built levels/"));
    if !lines
        .iter()
        .any(|l| l.starts_with("built levels/forest.level"))
        || !lines
            .iter()
            .any(|l| l.starts_with("built levels/workshop.level"))
    {
        lines.extend(w.until_within(Duration::from_secs(20), |l| l.starts_with("built levels/")));
    }
    lines.extend(w.settle(Duration::from_millis(300)));
    for level in ["levels/forest.level", "levels/workshop.level"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("built {level}"))),
            "{level} not rebuilt: {lines:#?}"
        );
    }

    // Delete and re-create a level.
    let workshop = root.join("levels/workshop.level");
    let text = fs::read_to_string(&workshop).unwrap();
    fs::remove_file(&workshop).unwrap();
    w.settle(Duration::from_millis(500));
    fs::write(&workshop, &text).unwrap();
    w.until(|l| l.starts_with("built levels/workshop.level"));

    // A folder moved in a file manager, and moved back.
    fs::rename(root.join("units"), root.join("prefabs")).unwrap();
    let lines = w.settle(Duration::from_millis(700));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("error:") && l.contains("levels/forest.level")),
        "the forest's prefabs are gone: {lines:#?}"
    );
    fs::rename(root.join("prefabs"), root.join("units")).unwrap();
    let lines = w.settle(Duration::from_millis(700));
    for level in ["levels/forest.level", "levels/workshop.level"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("built {level}"))),
            "{level} not rebuilt: {lines:#?}"
        );
    }

    // A burst of two hundred files that no level uses: a few batches, no rebuild.
    fs::create_dir_all(root.join("materials/generated")).unwrap();
    for i in 0..200 {
        fs::write(
            root.join(format!("materials/generated/m{i}.material")),
            "{}",
        )
        .unwrap();
    }
    let lines = w.settle(Duration::from_millis(800));
    // Positive control: the burst was seen (silence would pass the checks below).
    assert!(!lines.is_empty(), "the burst was not reported at all");
    assert!(
        lines.len() <= 10,
        "{} lines for one burst: {lines:#?}",
        lines.len()
    );
    assert!(
        lines.iter().all(|l| l.contains("no level affected")),
        "{lines:#?}"
    );
}

#[test]
fn a_broken_level_keeps_its_last_good_blob_until_fixed() {
    let dir = support::demo_copy();
    let root = dir.path();
    let mut w = Watch::start(root);
    let blob = root.join("build/levels/forest.level.bin");
    let good = fs::read(&blob).unwrap();
    let level = root.join("levels/forest.level");
    let text = fs::read_to_string(&level).unwrap();

    atomic_write(
        &level,
        "{\n  \"entities\": [\n    {\"id\": \"a\",}\n  ]\n}\n",
    );
    let lines = w.until(|l| l.starts_with("error:"));
    assert!(
        lines.last().unwrap().contains("levels/forest.level:3:16"),
        "{lines:#?}"
    );
    assert_eq!(fs::read(&blob).unwrap(), good, "the last good blob stays");

    atomic_write(&level, &text.replace("\"Boulder\"", "\"Big boulder\""));
    w.until(|l| l.starts_with("built levels/forest.level"));
    assert_ne!(fs::read(&blob).unwrap(), good, "fixed: rebuilt");
}

/// When the watched project folder is renamed away, `kiln watch` says so and stops
/// (edits inside the moved folder can no longer be mapped to the project).
#[test]
fn a_renamed_project_folder_stops_the_watch_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("project");
    support::copy_demo(&dir);
    let mut watch = Watch::start(&dir);
    fs::rename(&dir, tmp.path().join("renamed")).unwrap();
    let lines = watch.until(|l| l.contains("was moved, renamed or deleted"));
    assert!(lines.last().unwrap().contains("stopping"), "{lines:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = watch.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "kiln watch did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(2));
}
