//! The watcher on real file-system events: atomic saves, bursts, renames done outside
//! Kiln, and a lost-events rescan.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod project_fixture;

use std::fs;
use std::time::{Duration, Instant};

use dependency_checker::ops::{apply, plan_repoint};
use dependency_checker::watch::{ChangeBatch, Debounce, ProjectWatcher};
use project_fixture::*;

/// Collects batches until `done` holds or 10 s pass.
fn collect(w: &ProjectWatcher, mut done: impl FnMut(&[ChangeBatch]) -> bool) -> Vec<ChangeBatch> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut batches = Vec::new();
    while Instant::now() < deadline && !done(&batches) {
        if let Some(b) = w.next_batch(Duration::from_millis(100)) {
            batches.push(b);
        }
    }
    batches
}

fn seen(batches: &[ChangeBatch], path: &str) -> bool {
    batches.iter().any(|b| b.paths.iter().any(|p| p == path))
}

#[test]
fn an_atomic_save_is_one_batch_and_updates_the_index() {
    let dir = project();
    let mut checker = open(dir.path());
    let w = ProjectWatcher::start(dir.path(), Debounce::default()).unwrap();
    let temp = dir.path().join("materials/.stone.material.swp");
    fs::write(&temp, r#"{"texture": "textures/bark"}"#).unwrap();
    fs::rename(&temp, dir.path().join("materials/stone.material")).unwrap();
    let batches = collect(&w, |b| seen(b, "materials/stone.material"));
    assert_eq!(batches.len(), 1, "{batches:?}");
    assert!(
        batches[0].paths.iter().all(|p| !p.contains(".swp")),
        "hidden temporaries are not resources"
    );
    let report = checker.apply_changes(&batches[0]).unwrap();
    assert_eq!(report.changed, vec!["materials/stone.material".to_owned()]);
    assert_eq!(checker.references_to("textures/bark.png").len(), 2);
}

/// The rename that ends an atomic save ends the batch at once, without the quiet
/// wait (here made two seconds long, to tell the two apart), and the visible
/// temporary and backup names of editors and atomic saves are never project files.
#[test]
fn a_rename_into_place_ends_the_batch_and_scratch_files_are_not_the_projects() {
    let dir = project();
    let slow = Debounce {
        quiet: Duration::from_secs(2),
        max_wait: Duration::from_secs(5),
    };
    let w = ProjectWatcher::start(dir.path(), slow).unwrap();
    let materials = dir.path().join("materials");
    // Vim's write test and backup, and Emacs's auto-save, beside the save.
    fs::write(materials.join("4913"), "").unwrap();
    fs::remove_file(materials.join("4913")).unwrap();
    fs::write(materials.join("stone.material~"), "{}").unwrap();
    fs::write(materials.join("#stone.material#"), "{}").unwrap();
    let temp = materials.join("stone.material.tmp~");
    fs::write(&temp, r#"{"texture": "textures/bark"}"#).unwrap();
    let renamed = Instant::now();
    fs::rename(&temp, materials.join("stone.material")).unwrap();
    let batches = collect(&w, |b| seen(b, "materials/stone.material"));
    let waited = renamed.elapsed();
    assert!(
        waited < Duration::from_millis(1500),
        "the batch waited {waited:?} for quiet after the rename"
    );
    let paths: Vec<&String> = batches.iter().flat_map(|b| &b.paths).collect();
    assert_eq!(paths, ["materials/stone.material"], "{batches:?}");
}

#[test]
fn a_burst_of_thousands_of_files_arrives_in_few_batches() {
    let dir = project();
    let mut checker = open(dir.path());
    let w = ProjectWatcher::start(dir.path(), Debounce::default()).unwrap();
    fs::create_dir_all(dir.path().join("generated")).unwrap();
    for i in 0..2000 {
        fs::write(
            dir.path().join(format!("generated/m{i}.material")),
            r#"{"texture": "textures/bark"}"#,
        )
        .unwrap();
    }
    // Apply batches until the watcher has been quiet for a second, as the editor does.
    let mut batches = 0;
    while let Some(b) = w.next_batch(Duration::from_secs(1)) {
        batches += 1;
        checker.apply_changes(&b).unwrap();
    }
    assert!(batches <= 12, "{batches} batches for one burst");
    assert_eq!(checker.references_to("textures/bark.png").len(), 2001);
}

#[test]
fn a_rename_outside_kiln_is_recognised_with_its_fix() {
    let dir = project();
    let mut checker = open(dir.path());
    let w = ProjectWatcher::start(dir.path(), Debounce::default()).unwrap();
    fs::rename(
        dir.path().join("materials/bark.material"),
        dir.path().join("materials/oak.material"),
    )
    .unwrap();
    let batches = collect(&w, |b| {
        seen(b, "materials/oak.material") && seen(b, "materials/bark.material")
    });
    let mut renamed = Vec::new();
    for b in &batches {
        renamed.extend(checker.apply_changes(b).unwrap().renamed);
    }
    assert_eq!(
        renamed,
        vec![(
            "materials/bark.material".to_owned(),
            "materials/oak.material".to_owned()
        )]
    );
    let fix = plan_repoint(
        &checker,
        "materials/bark.material",
        "materials/oak.material",
    );
    let files: Vec<&str> = fix.edits.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(
        files,
        vec![
            "levels/forest.level",
            "tools/export.json",
            "units/tree.unit"
        ]
    );
    apply(&mut checker, &fix).unwrap();
    assert_eq!(checker.references_to("materials/oak.material").len(), 3);
    assert!(
        fs::read_to_string(dir.path().join("tools/export.json"))
            .unwrap()
            .contains("\"materials/oak.material\"")
    );
}

#[test]
fn a_rescan_batch_catches_changes_whose_events_were_lost() {
    let dir = project();
    let mut checker = open(dir.path());
    fs::write(dir.path().join("materials/new.material"), "{}").unwrap();
    fs::remove_file(dir.path().join("meshes/rock.mesh")).unwrap();
    let report = checker
        .apply_changes(&ChangeBatch {
            paths: Vec::new(),
            rescan: true,
            first_event: None,
            synced: Vec::new(),
        })
        .unwrap();
    assert_eq!(
        report.changed,
        vec![
            "materials/new.material".to_owned(),
            "meshes/rock.mesh".to_owned()
        ]
    );
}

#[test]
fn a_folder_moved_in_a_file_manager_is_seen_whole() {
    let dir = project();
    let mut checker = open(dir.path());
    let w = ProjectWatcher::start(dir.path(), Debounce::default()).unwrap();
    fs::rename(dir.path().join("materials"), dir.path().join("surfaces")).unwrap();
    let mut renamed = Vec::new();
    while let Some(b) = w.next_batch(Duration::from_millis(500)) {
        renamed.extend(checker.apply_changes(&b).unwrap().renamed);
    }
    renamed.sort();
    assert_eq!(
        renamed,
        vec![
            (
                "materials/bark.material".to_owned(),
                "surfaces/bark.material".to_owned()
            ),
            (
                "materials/stone.material".to_owned(),
                "surfaces/stone.material".to_owned()
            ),
        ]
    );
    assert!(checker.index().file("materials/bark.material").is_none());
    assert!(checker.index().file("surfaces/stone.material").is_some());
}

#[test]
fn a_sync_cookie_arrives_after_every_change_made_before_it_and_without_the_quiet_wait() {
    let dir = project();
    // A long quiet time: without the cookie ending the batch, it would take 5 s.
    let slow = Debounce {
        quiet: Duration::from_secs(5),
        max_wait: Duration::from_secs(20),
    };
    let w = ProjectWatcher::start(dir.path(), slow).unwrap();
    let cookies = w.sync_cookies();
    for round in 0..5 {
        let name = format!("materials/m{round}.material");
        fs::write(dir.path().join(&name), "{}").unwrap();
        let start = Instant::now();
        let n = cookies.reserve();
        cookies.write(n).unwrap();
        let batches = collect(&w, |b| b.iter().any(|b| b.synced.contains(&n)));
        cookies.remove(n);
        assert!(
            batches.iter().any(|b| b.synced.contains(&n)),
            "round {round}: cookie {n} never came through: {batches:?}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the cookie waited for quiet"
        );
        assert!(seen(&batches, &name), "round {round}: {batches:?}");
        assert!(
            batches
                .iter()
                .all(|b| b.paths.iter().all(|p| !p.contains("sync-"))),
            "cookies are not project files"
        );
    }
    let left: Vec<_> = fs::read_dir(dir.path().join(".kiln"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("sync-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_sync_cookie_is_never_written_through_a_planted_link() {
    let dir = project();
    let outside = tempfile::tempdir().unwrap();
    let w = ProjectWatcher::start(dir.path(), Debounce::default()).unwrap();
    let _ = fs::remove_dir_all(dir.path().join(".kiln"));
    kiln_core::os::symlink(outside.path(), dir.path().join(".kiln")).unwrap();
    let cookies = w.sync_cookies();
    assert!(cookies.write(cookies.reserve()).is_err());
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
}

/// A watcher killed between writing a cookie and removing it leaves the cookie:
/// the next watcher on the project removes it, and never a running process's.
#[test]
fn cookies_a_killed_watcher_left_are_removed_by_the_next() {
    let dir = project();
    fs::create_dir_all(dir.path().join(".kiln")).unwrap();
    // A process that no longer runs (a child, waited for) and this one.
    let dead = std::process::Command::new("true")
        .spawn()
        .and_then(|mut c| c.wait().map(|_| c.id()))
        .unwrap();
    let mine = std::process::id();
    for name in [
        format!("sync-{dead}-7"),
        format!("sync-{mine}-3"),
        "sync-notes.txt".to_owned(),
    ] {
        fs::write(dir.path().join(".kiln").join(name), "").unwrap();
    }
    let _w = ProjectWatcher::start(dir.path(), Debounce::default()).unwrap();
    let mut left: Vec<String> = fs::read_dir(dir.path().join(".kiln"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sync-"))
        .collect();
    left.sort();
    assert_eq!(
        left,
        [format!("sync-{mine}-3"), "sync-notes.txt".to_owned()]
    );
}
