//! `kiln compile` as a user runs it: the real binary on a copy of the demo project.
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::fs;
use std::path::Path;

use kiln_core::blob::LevelBlob;
use kiln_core::{EntityManager, LevelDocument, World, spawn_level};

#[test]
fn compiles_every_demo_level_into_spawnable_blobs() {
    let tmp = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    let (code, stdout, stderr) = kiln(&["compile"], tmp.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("2 compiled, 0 failed"), "{stdout}");
    // The demo uses its plugins' component types: spawning needs them too.
    let (registry, plugins) =
        kiln::plugins::registry_with_plugins(&kiln_core::Project::open(tmp.path()).unwrap());
    assert_eq!(plugins.loaded.len(), 2, "{:?}", plugins.errors);
    let project = kiln_core::Project::open(tmp.path()).unwrap();
    for (level, min_entities) in [("forest", 20), ("workshop", 12)] {
        let blob = fs::read(tmp.path().join(format!("build/levels/{level}.level.bin"))).unwrap();
        // `kiln compile` streams the level (prefabs placed after it is read); the
        // blob is the one a compile of the whole text makes.
        let whole = project
            .compile(&registry, &format!("levels/{level}.level"))
            .unwrap();
        assert_eq!(blob, whole.blob, "{level}");
        let parsed = LevelBlob::parse(&blob).unwrap();
        assert!(
            parsed.num_entities() >= min_entities,
            "{level}: {}",
            parsed.num_entities()
        );
        let (mut em, mut world) = (EntityManager::new(), World::new());
        let spawned = spawn_level(&blob, &registry, &mut em, &mut world).unwrap();
        assert!(spawned.warnings.is_empty());
        assert_eq!(em.len(), parsed.num_entities());
    }
}

#[test]
fn named_levels_and_out_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    let project = tmp.path().to_str().unwrap();
    let (code, stdout, _) = kiln(
        &[
            "compile",
            "--project",
            project,
            "--out",
            out.path().to_str().unwrap(),
            "levels/forest",
        ],
        Path::new("/"),
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(out.path().join("build/levels/forest.level.bin").is_file());
    assert!(!out.path().join("build/levels/workshop.level.bin").exists());
    assert!(!tmp.path().join("build").exists());
}

/// `--out` names a folder that does not exist yet: it is made, and the levels in
/// nested folders land in nested folders below its `build/`.
#[test]
fn an_out_dir_that_does_not_exist_yet_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    fs::create_dir_all(tmp.path().join("levels/campaign/act_1")).unwrap();
    fs::copy(
        tmp.path().join("levels/workshop.level"),
        tmp.path().join("levels/campaign/act_1/workshop.level"),
    )
    .unwrap();
    let target = out.path().join("not/yet");
    let (code, stdout, stderr) = kiln(
        &[
            "compile",
            "--project",
            tmp.path().to_str().unwrap(),
            "--out",
            target.to_str().unwrap(),
        ],
        Path::new("/"),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        target
            .join("build/levels/campaign/act_1/workshop.level.bin")
            .is_file()
    );
}

#[test]
fn a_broken_level_reports_file_line_column_and_keeps_the_last_good_blob() {
    let tmp = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    assert_eq!(kiln(&["compile"], tmp.path()).0, 0);
    let blob_file = tmp.path().join("build/levels/workshop.level.bin");
    let good = fs::read(&blob_file).unwrap();
    fs::write(
        tmp.path().join("levels/workshop.level"),
        "{\"entities\": [\n  {\"id\": 12}\n]}",
    )
    .unwrap();
    let (code, stdout, _) = kiln(&["compile"], tmp.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout
            .contains("levels/workshop.level:2:11: invalid type: integer `12`, expected a string"),
        "{stdout}"
    );
    assert!(stdout.contains("1 compiled, 1 failed"), "{stdout}");
    assert_eq!(fs::read(&blob_file).unwrap(), good);
}

#[test]
fn not_a_project_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = kiln(&["compile"], tmp.path());
    assert_eq!(code, 2);
    assert!(
        stderr.contains("is not a Kiln project: it has no kiln.project file"),
        "{stderr}"
    );
}

#[test]
fn levels_outside_the_project_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    let (code, stdout, _) = kiln(&["compile", "../escape"], tmp.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("../escape.level is outside the project"),
        "{stdout}"
    );
}

/// The demo's levels and units are stored exactly as the editor would save them, so
/// saving an untouched file changes nothing.
#[test]
fn demo_entity_files_are_canonical() {
    demo_plugins();
    let (registry, _plugins) =
        kiln::plugins::registry_with_plugins(&kiln_core::Project::open(&demo()).unwrap());
    for dir in ["levels", "units"] {
        for entry in fs::read_dir(demo().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let text = fs::read_to_string(&path).unwrap();
            let doc = LevelDocument::parse(&text, &path.display().to_string()).unwrap();
            assert_eq!(
                doc.to_canonical_json(&registry),
                text,
                "{} is not canonical",
                path.display()
            );
        }
    }
}

/// `kiln compile` reads the project as one committed state: while another Kiln
/// operation holds the project's lock (a move in another process), it waits and
/// says so, then compiles.
#[test]
fn compile_waits_for_an_operation_holding_the_project_lock() {
    use std::process::Stdio;
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    // A positive control: alone, it compiles without waiting.
    let (code, out, err) = kiln(&["compile"], tmp.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("waiting"), "{err}");
    // Held as a move holds it.
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(tmp.path().join(".kiln/lock"))
        .unwrap();
    lock.lock().unwrap();
    let child = support::kiln_command()
        .arg("compile")
        .current_dir(tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = child;
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        child.try_wait().unwrap().is_none(),
        "compile went on while a move held the project"
    );
    lock.unlock().unwrap();
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{err}");
    assert!(err.contains("waiting for another Kiln operation"), "{err}");
    assert!(String::from_utf8_lossy(&done.stdout).contains("2 compiled, 0 failed"));
}

/// A compile killed while writing a blob leaves its temporary file; the next
/// compile removes it (a running process's is left alone).
#[test]
fn compile_removes_the_temporary_blobs_of_killed_compiles() {
    let tmp = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    let folder = tmp.path().join("build/levels");
    fs::create_dir_all(&folder).unwrap();
    let dead = folder.join(".forest.level.bin.999999999.kiln-tmp");
    let alive = folder.join(format!(".forest.level.bin.{}.kiln-tmp", std::process::id()));
    fs::write(&dead, "half a blob").unwrap();
    fs::write(&alive, "being written").unwrap();
    let (code, out, err) = kiln(&["compile"], tmp.path());
    assert_eq!(code, 0, "{out}{err}");
    // A positive control: the compile wrote in that folder.
    assert!(folder.join("forest.level.bin").is_file());
    assert!(!dead.exists(), "the killed compile's leftover stayed");
    assert!(
        alive.exists(),
        "a running process's temporary file was removed"
    );
}
