//! `kiln check`, `refs`, `deps` and `mv` as a user runs them: the real binary on a
//! copy of the demo project.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::fs;

#[test]
fn the_demo_is_clean_and_a_broken_reference_is_reported() {
    let tmp = demo_copy();
    let (code, stdout, _) = kiln(&["check"], tmp.path());
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("0 findings"), "{stdout}");

    fs::remove_file(tmp.path().join("materials/metal.material")).unwrap();
    let (code, stdout, _) = kiln(&["check"], tmp.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("units/lamp.unit:9:23 (entity \"pole\", component \"mesh\", /entities/0/components/mesh/material): missing: materials/metal.material does not exist"),
        "{stdout}"
    );
    let (_, json, _) = kiln(&["check", "--json"], tmp.path());
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["schema"], "kiln-check/1");
    let lamp = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["place"]["file"] == "units/lamp.unit")
        .unwrap();
    assert_eq!(lamp["kind"], "missing");
    assert_eq!(lamp["severity"], "error");
    assert_eq!(lamp["place"]["line"], 9);
    assert_eq!(lamp["target"], "materials/metal.material");
}

#[test]
fn refs_and_deps_list_places() {
    let tmp = demo_copy();
    let (code, stdout, _) = kiln(&["refs", "materials/bark.material"], tmp.path());
    assert_eq!(code, 0);
    assert!(stdout.contains("units/tree.unit:9:23 (entity \"trunk\", component \"mesh\", /entities/0/components/mesh/material): \"materials/bark\""), "{stdout}");
    assert!(
        stdout.ends_with("1 references to materials/bark.material\n"),
        "{stdout}"
    );
    let (code, stdout, _) = kiln(&["deps", "--json", "units/lamp.unit"], tmp.path());
    assert_eq!(code, 0);
    let deps: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(deps["references"].as_array().unwrap().len(), 3);
    assert_eq!(deps["references"][0]["status"], "resolved");
    let (code, _, stderr) = kiln(&["refs", "materials/nothing.material"], tmp.path());
    assert_eq!(code, 2);
    assert!(
        stderr.contains("is not a file or folder of the project"),
        "{stderr}"
    );
}

#[test]
fn mv_dry_run_changes_nothing_and_mv_patches_everything() {
    let tmp = demo_copy();
    let before = fs::read_to_string(tmp.path().join("units/crate.unit")).unwrap();
    let (code, stdout, _) = kiln(
        &[
            "mv",
            "--dry-run",
            "materials/wood.material",
            "materials/oak.material",
        ],
        tmp.path(),
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("patch units/crate.unit:9"), "{stdout}");
    assert!(
        stdout.contains("would move 1 files and patch 10 references in 3 files"),
        "{stdout}"
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("units/crate.unit")).unwrap(),
        before
    );

    let (code, stdout, _) = kiln(
        &["mv", "materials/wood.material", "materials/oak.material"],
        tmp.path(),
    );
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(
        fs::read_to_string(tmp.path().join("units/crate.unit")).unwrap(),
        before.replace("materials/wood", "materials/oak")
    );
    assert!(tmp.path().join("materials/oak.material").is_file());
    assert_eq!(kiln(&["check"], tmp.path()).0, 0);
    // And the levels still compile.
    assert_eq!(kiln(&["compile"], tmp.path()).0, 0);

    let (code, _, stderr) = kiln(
        &["mv", "materials/oak.material", "materials/stone.material"],
        tmp.path(),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("materials/stone.material already exists"),
        "{stderr}"
    );
}

#[test]
fn check_fix_repairs_paths_from_another_branch() {
    let tmp = demo_copy();
    assert_eq!(
        kiln(&["mv", "meshes/cube.mesh", "meshes/box.mesh"], tmp.path()).0,
        0
    );
    // A teammate's branch, merged after the move, still uses the old path.
    fs::write(tmp.path().join("units/block.unit"), "{\"entities\": [{\"id\": \"b\", \"components\": {\"mesh\": {\"mesh\": \"meshes/cube\"}}}]}").unwrap();
    let (code, stdout, _) = kiln(&["check"], tmp.path());
    assert_eq!(code, 1);
    assert!(
        stdout.contains("stale path: meshes/cube.mesh was moved to meshes/box.mesh"),
        "{stdout}"
    );
    let (_, stdout, _) = kiln(&["check", "--fix"], tmp.path());
    assert!(stdout.contains("fixed 1 references"), "{stdout}");
    assert!(
        fs::read_to_string(tmp.path().join("units/block.unit"))
            .unwrap()
            .contains("\"meshes/box\"")
    );
}

#[test]
fn mv_moves_several_sources_into_a_folder() {
    let tmp = demo_copy();
    let (code, stdout, _) = kiln(
        &[
            "mv",
            "materials/bark.material",
            "materials/leaves.material",
            "materials/trees/",
        ],
        tmp.path(),
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(tmp.path().join("materials/trees/bark.material").is_file());
    assert!(tmp.path().join("materials/trees/leaves.material").is_file());
    let tree = fs::read_to_string(tmp.path().join("units/tree.unit")).unwrap();
    assert!(
        tree.contains("\"materials/trees/bark\"") && tree.contains("\"materials/trees/leaves\""),
        "{tree}"
    );
    assert_eq!(kiln(&["check"], tmp.path()).0, 0);
}
