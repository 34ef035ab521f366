//! Moves planned and applied, with crashes injected.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use super::apply::*;
use super::plan::*;
use crate::Checker;
use crate::error::CheckerError;
use crate::fs::journal::crash_after;
use crate::index::REDIRECT_FILE;

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let full = dir.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, content).unwrap();
    }
}

use crate::test_files::snapshot;

/// A project of `files` in a temporary folder, its files as they are, a checker
/// on it, and the plan of moving `old` to `new`.
fn planned_move(
    files: &[(&str, &str)],
    old: &str,
    new: &str,
) -> (tempfile::TempDir, Vec<(String, Vec<u8>)>, Checker, MovePlan) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), files);
    let before = snapshot(dir.path());
    let checker = reopen(dir.path()).unwrap();
    let p = plan(&checker, &MoveRequest::new(old, new)).unwrap();
    (dir, before, checker, p)
}

fn reopen(dir: &Path) -> Result<Checker, CheckerError> {
    Checker::open(
        dir,
        Arc::new(kiln_core::Registry::with_builtins()),
        &crate::index::BuildOptions::default(),
    )
}

/// A project whose folder `materials/old` a level, a unit and a material refer
/// into: its move patches 3 files and renames the folder.
const MATERIALS_FOLDER: [(&str, &str); 7] = [
    ("kiln.project", "{}"),
    ("kiln.redirects", "# log\n"),
    (
        "levels/a.level",
        r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/old/m"}}}]}"#,
    ),
    (
        "units/u.unit",
        r#"{"entities": [{"id": "y", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/old/m"}}}]}"#,
    ),
    (
        "materials/old/m.material",
        r#"{"texture": "materials/old/t"}"#,
    ),
    ("materials/old/t.png", "png"),
    ("meshes/m.mesh", "{}"),
];

/// A kill after any step of an apply is rolled back when the project is next
/// opened: every file, its name and its bytes, as before.
#[test]
fn a_kill_at_any_step_is_rolled_back_on_the_next_open() {
    let files = MATERIALS_FOLDER;
    // The journal (its backups, its manifest under a temporary name), then 3
    // patched files (each a temporary file, then a rename) + 1 folder rename +
    // the redirect log = 10 steps.
    for steps in 0..10 {
        let (dir, before, mut checker, p) = planned_move(&files, "materials/old", "materials/new");
        crash_after(Some(steps));
        assert!(apply(&mut checker, &p).is_err());
        crash_after(None);
        if steps >= 2 {
            assert!(dir.path().join(".kiln/journal/journal.json").is_file());
            assert_ne!(snapshot(dir.path()), before, "step {steps} changed nothing");
        }

        let reopened = reopen(dir.path()).unwrap();
        assert_eq!(
            snapshot(dir.path()),
            before,
            "not rolled back after step {steps}"
        );
        assert!(!dir.path().join(".kiln/journal").exists());
        assert_eq!(reopened.references_to("materials/old/m.material").len(), 2);
    }
}

/// Applying a set-aside journal (`kiln recover --apply`) killed at any step, its
/// own or its recovery's: the next open recovers what was put back in place, a
/// second apply finishes what is still aside, and every file ends as before the
/// move, with nothing left set aside.
#[test]
fn applying_a_set_aside_journal_killed_at_any_step_restores_everything() {
    use crate::fs::journal::{apply_set_aside, set_aside_journals};
    let files = MATERIALS_FOLDER;
    let mut completed = false;
    for steps in 0..40 {
        let (dir, before, mut checker, p) = planned_move(&files, "materials/old", "materials/new");
        // Killed after the journal and two patched files...
        crash_after(Some(6));
        assert!(apply(&mut checker, &p).is_err());
        crash_after(None);
        drop(checker);
        // ...and its journal set aside, as a recovery that could not use it
        // whole does.
        let aside = dir.path().join(".kiln/journal.rejected-1-0");
        fs::create_dir(&aside).unwrap();
        fs::rename(dir.path().join(".kiln/journal"), aside.join("journal")).unwrap();
        fs::write(aside.join("reason.txt"), "a test\n").unwrap();
        assert_ne!(snapshot(dir.path()), before);

        crash_after(Some(steps));
        let first = apply_set_aside(dir.path(), ".kiln/journal.rejected-1-0");
        crash_after(None);
        reopen(dir.path()).unwrap();
        if !set_aside_journals(dir.path()).is_empty() {
            apply_set_aside(dir.path(), ".kiln/journal.rejected-1-0").unwrap();
        }
        assert_eq!(snapshot(dir.path()), before, "killed after step {steps}");
        assert!(set_aside_journals(dir.path()).is_empty(), "step {steps}");
        assert!(!dir.path().join(".kiln/journal").exists(), "step {steps}");
        if first.is_ok() {
            // A later apply sweeps what a killed one left aside.
            completed = true;
            break;
        }
    }
    assert!(completed, "no kill came after the last step");
}

/// A project whose move patches enough files to replace them on several
/// threads: `n` files naming `tex/t.png`, in two folders.
fn many_referrers(n: usize) -> Vec<(String, String)> {
    let mut files = vec![
        ("kiln.project".to_owned(), "{}".to_owned()),
        ("tex/t.png".to_owned(), "png".to_owned()),
    ];
    for i in 0..n {
        files.push((
            format!("d{}/f{i:03}.json", i % 2),
            r#"["tex/t.png"]"#.to_owned(),
        ));
    }
    files
}

fn as_pairs(files: &[(String, String)]) -> Vec<(&str, &str)> {
    files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect()
}

/// Replaced on several threads, a kill at any step still leaves a journal that
/// the next open rolls back completely, however far each thread got.
#[test]
fn a_kill_while_threads_replace_files_is_rolled_back_on_the_next_open() {
    let files = many_referrers(PARALLEL_REPLACE_FROM + 6);
    let files = as_pairs(&files);
    // The journal (2 steps), 2 per patched file, the rename and the log.
    let steps = 2 + 2 * (files.len() - 2) + 2;
    let mut completed = false;
    for kill_after in (2..steps + 1).step_by(11).chain([3, steps - 1, steps]) {
        let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
        assert!(p.edits.len() >= PARALLEL_REPLACE_FROM);
        crash_after(Some(kill_after));
        let result = apply(&mut checker, &p);
        crash_after(None);
        if result.is_ok() {
            completed = true;
            continue;
        }
        assert!(dir.path().join(".kiln/journal/journal.json").is_file());
        // The kill stopped every thread: no more files replaced than steps
        // taken (a temporary file and a rename each, after the journal's 2),
        // but for one renamed by each of up to four threads just before.
        let replaced = snapshot(dir.path())
            .iter()
            .filter(|(f, bytes)| f.ends_with(".json") && bytes == br#"["tex/u.png"]"#)
            .count();
        assert!(
            replaced <= (kill_after - 2) / 2 + 4,
            "{replaced} replaced in {kill_after} steps"
        );
        reopen(dir.path()).unwrap();
        assert_eq!(
            snapshot(dir.path()),
            before,
            "not rolled back after step {kill_after}"
        );
        assert!(!dir.path().join(".kiln/journal").exists());
    }
    assert!(completed, "no kill came after the last step");
}

/// A save by another program to a file a helper thread is about to replace
/// stops every thread; the move names that file and rolls back the rest.
#[test]
fn a_save_while_threads_replace_files_is_never_overwritten() {
    let files = many_referrers(PARALLEL_REPLACE_FROM + 6);
    let files = as_pairs(&files);
    // Every fifth file: some are replaced by the caller's thread, others by a
    // helper, whichever takes their run.
    let victims: Vec<String> = (0..PARALLEL_REPLACE_FROM + 6)
        .step_by(5)
        .map(|i| format!("d{}/f{i:03}.json", i % 2))
        .collect();
    for victim in &victims {
        let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
        let target = dir.path().join(victim);
        BEFORE_REPLACE.with(|h| {
            *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                if path == target {
                    let temp = path.with_extension("swp");
                    fs::write(&temp, r#"["saved by someone else"]"#).unwrap();
                    fs::rename(&temp, path).unwrap();
                }
            }))
        });
        let result = apply(&mut checker, &p);
        BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
        match result {
            Err(CheckerError::Changed { file }) => assert_eq!(&file, victim),
            other => panic!("{victim}: not refused: {other:?}"),
        }
        let after = snapshot(dir.path());
        for (file, bytes) in &before {
            let now = after.iter().find(|(f, _)| f == file).map(|(_, b)| b);
            if file == victim {
                assert_eq!(
                    now.map(Vec::as_slice),
                    Some(&br#"["saved by someone else"]"#[..])
                );
            } else {
                assert_eq!(now, Some(bytes), "{file} not rolled back");
            }
        }
        assert_eq!(after.len(), before.len(), "files left behind");
        assert!(!dir.path().join(".kiln/journal").exists());
    }
}

/// A folder swapped for a link to an exact copy of it outside the project,
/// before the move or while it replaces other files: nothing outside is
/// written. Before, the move is refused untouched; during, the half-done move's
/// journal names a path that now leads outside, and is set aside and reported.
#[test]
fn a_folder_swapped_for_a_link_never_carries_a_move_outside() {
    let files = [
        ("kiln.project", "{}"),
        ("a/x.json", r#"["tex/t.png"]"#),
        ("b/y.json", r#"["tex/t.png"]"#),
        ("tex/t.png", "png"),
    ];
    for during in [false, true] {
        let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
        let outside = tempfile::tempdir().unwrap();
        let copy = outside.path().join("b");
        fs::create_dir(&copy).unwrap();
        fs::write(copy.join("y.json"), r#"["tex/t.png"]"#).unwrap();
        let (root, link_to) = (dir.path().to_owned(), copy.clone());
        let swap = move || {
            fs::remove_dir_all(root.join("b")).unwrap();
            kiln_core::os::symlink(&link_to, root.join("b")).unwrap();
        };
        if during {
            let first = dir.path().join("a/x.json");
            let swap = std::sync::Mutex::new(Some(swap));
            BEFORE_REPLACE.with(|h| {
                *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                    if path == first
                        && let Some(swap) = swap.lock().unwrap().take()
                    {
                        swap();
                    }
                }))
            });
        } else {
            swap();
        }
        let result = apply(&mut checker, &p);
        BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
        assert!(
            result.is_err(),
            "during: {during}: the move went through the link"
        );
        assert_eq!(
            fs::read_to_string(copy.join("y.json")).unwrap(),
            r#"["tex/t.png"]"#,
            "during: {during}: written outside the project"
        );
        assert_eq!(
            fs::read_dir(&copy).unwrap().count(),
            1,
            "left a file outside"
        );
        let reopened = reopen(dir.path()).unwrap();
        assert!(!dir.path().join(".kiln/journal").exists());
        if during {
            // The journal names a path that now leads outside: recovery sets
            // it aside whole (as for a crafted one) and says so, backups kept.
            let set_aside = reopened
                .findings()
                .into_iter()
                .any(|f| matches!(f, crate::check::Finding::JournalSetAside { .. }));
            assert!(set_aside, "the half-done move is not reported");
            continue;
        }
        fs::remove_file(dir.path().join("b")).unwrap();
        let now: Vec<_> = snapshot(dir.path())
            .into_iter()
            .filter(|(f, _)| !f.starts_with('b'))
            .collect();
        let was: Vec<_> = before
            .into_iter()
            .filter(|(f, _)| !f.starts_with('b'))
            .collect();
        assert_eq!(now, was, "the project changed");
    }
}

/// A folder of referrers moved out of the project by another program while the
/// move replaces files in it (a real folder, no link left behind): nothing more
/// is written into it, the move stops with an error naming the folder, and what
/// it had patched in the project is rolled back.
#[test]
fn a_referrer_folder_moved_away_mid_replace_is_written_no_more() {
    let mut files = vec![
        ("kiln.project".to_owned(), "{}".to_owned()),
        ("a/x.json".to_owned(), r#"["tex/t.png"]"#.to_owned()),
        ("tex/t.png".to_owned(), "png".to_owned()),
    ];
    for n in 0..10 {
        files.push((format!("b/y{n}.json"), r#"["tex/t.png"]"#.to_owned()));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
    let outside = tempfile::tempdir().unwrap();
    let moved_to = outside.path().join("b");
    let (root, to) = (dir.path().to_owned(), moved_to.clone());
    let second = dir.path().join("b/y1.json");
    let moved = std::sync::atomic::AtomicBool::new(false);
    BEFORE_REPLACE.with(|h| {
        *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
            if path == second && !moved.swap(true, std::sync::atomic::Ordering::SeqCst) {
                fs::rename(root.join("b"), &to).unwrap();
            }
        }))
    });
    let result = apply(&mut checker, &p);
    BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
    let e = result.unwrap_err();
    // It says why it stopped, what it restored, and what it could not reach.
    let CheckerError::RolledBack {
        cause,
        restored,
        not_restored,
        folder: Some(kept),
    } = &e
    else {
        panic!("{e}");
    };
    assert!(
        matches!(&**cause, CheckerError::FolderMoved { folder } if folder == "b"),
        "{e}"
    );
    assert_eq!(restored, &["a/x.json".to_owned()], "{e}");
    // The folder's files cannot be reached to check whether they were written.
    let unreached: Vec<&str> = not_restored.iter().map(|(f, _)| f.as_str()).collect();
    let in_b: Vec<String> = (0..10).map(|n| format!("b/y{n}.json")).collect();
    assert_eq!(unreached, in_b, "{e}");
    assert!(e.to_string().contains("kiln recover"), "{e}");
    assert!(dir.path().join(kept).join("journal").is_dir(), "{kept}");
    // y0 was patched before the folder left (and left with it); none after.
    for n in 1..10 {
        assert_eq!(
            fs::read_to_string(moved_to.join(format!("y{n}.json"))).unwrap(),
            r#"["tex/t.png"]"#,
            "y{n} was written after its folder left the project"
        );
    }
    let names: Vec<_> = fs::read_dir(&moved_to).unwrap().collect();
    assert_eq!(names.len(), 10, "no temporary left in the folder outside");
    drop(reopen(dir.path()).unwrap());
    let now: Vec<_> = snapshot(dir.path())
        .into_iter()
        .filter(|(f, _)| !f.starts_with("b/"))
        .collect();
    let was: Vec<_> = before
        .into_iter()
        .filter(|(f, _)| !f.starts_with("b/"))
        .collect();
    assert_eq!(
        now, was,
        "the project is as before the move, but for the folder that left"
    );
}

/// The folder of a file being moved swapped for a link to a copy outside
/// after the plan: the rename is refused before anything changes.
#[test]
fn a_rename_never_goes_through_a_folder_swapped_for_a_link() {
    let files = [
        ("kiln.project", "{}"),
        ("a/x.json", r#"["tex/t.png"]"#),
        ("tex/t.png", "png"),
    ];
    let (dir, _, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir(outside.path().join("tex")).unwrap();
    fs::write(outside.path().join("tex/t.png"), "png").unwrap();
    fs::remove_dir_all(dir.path().join("tex")).unwrap();
    kiln_core::os::symlink(outside.path().join("tex"), dir.path().join("tex")).unwrap();
    let result = apply(&mut checker, &p);
    assert!(
        matches!(&result, Err(CheckerError::Refused { reason, .. }) if reason.contains("link")),
        "{result:?}"
    );
    assert!(
        outside.path().join("tex/t.png").is_file(),
        "renamed outside"
    );
    assert!(
        !outside.path().join("tex/u.png").exists(),
        "renamed outside"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("a/x.json")).unwrap(),
        r#"["tex/t.png"]"#
    );
    assert!(!dir.path().join(".kiln/journal").exists());
}

/// A kill during recovery itself: the next open recovers what is left.
#[test]
fn a_kill_during_recovery_is_recovered_on_the_next_open() {
    let files = [
        ("kiln.project", "{}"),
        ("a.json", r#"["tex/t.png"]"#),
        ("b.json", r#"["tex/t.png"]"#),
        ("tex/t.png", "png"),
    ];
    // Recovery steps: 1 rename back, then for the 2 patched files a temporary
    // file and a rename each, then the new log (removed).
    for kill_recovery_after in 0..6 {
        let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
        // Kill the apply at its last step, once the log is written and before the
        // journal's deletion: after the journal (2), two patched files (2 each)
        // and the rename, 7 steps have passed.
        crash_after(Some(2 + 2 * 2 + 1));
        assert!(apply(&mut checker, &p).is_err());
        assert!(
            dir.path().join("tex/u.png").is_file(),
            "the apply ran to its end"
        );
        // Kill the recovery part way.
        crash_after(Some(kill_recovery_after));
        let first = reopen(dir.path());
        crash_after(None);
        assert!(
            first.is_err(),
            "recovery step {kill_recovery_after} was not killed"
        );
        reopen(dir.path()).unwrap();
        assert_eq!(
            snapshot(dir.path()),
            before,
            "recovery killed after step {kill_recovery_after}"
        );
        assert!(!dir.path().join(".kiln/journal").exists());
    }
}

const RACE_FILES: [(&str, &str); 5] = [
    ("kiln.project", "{}"),
    ("a.json", r#"["tex/t.png"]"#),
    ("b.json", r#"["tex/t.png"]"#),
    ("c.json", r#"["tex/t.png"]"#),
    ("tex/t.png", "png"),
];

/// Another program saves a file while a move is being applied: the move stops
/// before overwriting it, names it, and rolls back; the save is kept.
#[test]
fn a_save_during_an_apply_is_never_overwritten() {
    for victim in ["a.json", "b.json", "c.json"] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &RACE_FILES);
        let registry = Arc::new(kiln_core::Registry::with_builtins());
        let mut checker =
            Checker::open(dir.path(), registry, &crate::index::BuildOptions::default()).unwrap();
        let p = plan(&checker, &MoveRequest::new("tex/t.png", "tex/u.png")).unwrap();
        assert_eq!(p.edits.len(), 3);
        let target = dir.path().join(victim);
        BEFORE_REPLACE.with(|h| {
            *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                if path == target {
                    // An editor's atomic save: a new file renamed over the old.
                    let temp = path.with_extension("swp");
                    fs::write(&temp, r#"["saved by someone else"]"#).unwrap();
                    fs::rename(&temp, path).unwrap();
                }
            }))
        });
        let result = apply(&mut checker, &p);
        BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
        match result {
            Err(CheckerError::Changed { file }) => assert_eq!(file, victim),
            other => panic!("{victim}: not refused: {other:?}"),
        }
        for (file, content) in RACE_FILES {
            let now = fs::read_to_string(dir.path().join(file)).unwrap();
            if file == victim {
                assert_eq!(now, r#"["saved by someone else"]"#);
            } else {
                assert_eq!(now, content, "{file} not rolled back");
            }
        }
        assert!(!dir.path().join(".kiln/journal").exists());
    }
}

/// A kill while the journal itself is being written leaves an operation that
/// never started: it is discarded, and nothing in the project changes.
#[test]
fn a_torn_journal_is_an_operation_that_never_started() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &RACE_FILES);
    let before = snapshot(dir.path());
    let journal = dir.path().join(".kiln/journal");
    fs::create_dir_all(&journal).unwrap();
    fs::write(journal.join("backups.bin"), "x").unwrap();
    fs::write(journal.join("journal.json.tmp"), r#"{"renames": [["a.js"#).unwrap();
    let registry = Arc::new(kiln_core::Registry::with_builtins());
    Checker::open(dir.path(), registry, &crate::index::BuildOptions::default()).unwrap();
    assert_eq!(snapshot(dir.path()), before);
    assert!(!journal.exists());
}

/// A file saved by another program after Kiln died mid-move is left as saved by
/// the recovery; the files Kiln had patched are rolled back.
#[test]
fn recovery_keeps_a_save_made_after_the_crash() {
    let (dir, _, mut checker, p) = planned_move(&RACE_FILES, "tex/t.png", "tex/u.png");
    // Killed once a.json and b.json are patched and c.json is not: after the
    // journal (2 steps) and two files (a temporary file and a rename each).
    crash_after(Some(2 + 2 * 2));
    assert!(apply(&mut checker, &p).is_err());
    crash_after(None);
    let read = |f: &str| fs::read_to_string(dir.path().join(f)).unwrap();
    assert_eq!(read("a.json"), r#"["tex/u.png"]"#, "a.json was patched");
    assert_eq!(read("b.json"), r#"["tex/u.png"]"#, "b.json was patched");
    assert_eq!(read("c.json"), r#"["tex/t.png"]"#, "c.json was not");
    // Someone saves a and c.
    fs::write(dir.path().join("a.json"), "[\"mine\"]").unwrap();
    fs::write(dir.path().join("c.json"), "[\"mine too\"]").unwrap();
    reopen(dir.path()).unwrap();
    assert_eq!(read("a.json"), "[\"mine\"]");
    assert_eq!(
        read("b.json"),
        r#"["tex/t.png"]"#,
        "Kiln's patch rolled back"
    );
    assert_eq!(read("c.json"), "[\"mine too\"]");
    assert!(dir.path().join("tex/t.png").is_file());
}

/// Past the bytes an apply keeps, a file is read again when it is written: a
/// save made since its first reading is never overwritten, whether the editor
/// renamed a new file over it or wrote it in place keeping its size and time
/// (then only its content tells). The files kept are rolled back too.
#[test]
fn a_file_read_again_before_it_is_written_must_be_the_version_read_first() {
    let files = many_referrers(40);
    let pairs = as_pairs(&files);
    let patched: usize = files.iter().skip(2).map(|(_, c)| c.len() + 4).sum();
    assert!(patched > 2 * HOLD_PATCHED_BYTES, "every file would be kept");
    for in_place in [false, true] {
        let (dir, before, mut checker, p) = planned_move(&pairs, "tex/t.png", "tex/u.png");
        // The last file written, far past what is kept.
        let victim = dir.path().join(&p.edits.last().unwrap().file);
        let saved = r#"["tex/t.pnG"]"#;
        let target = victim.clone();
        BEFORE_REPLACE.with(|h| {
            *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                if path != target {
                    return;
                }
                if in_place {
                    let mtime = fs::metadata(path).unwrap().modified().unwrap();
                    fs::write(path, saved).unwrap();
                    let file = fs::File::options().write(true).open(path).unwrap();
                    file.set_modified(mtime).unwrap();
                } else {
                    let temp = path.with_extension("swp");
                    fs::write(&temp, saved).unwrap();
                    fs::rename(&temp, path).unwrap();
                }
            }))
        });
        let result = apply(&mut checker, &p);
        BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
        assert!(
            matches!(result, Err(CheckerError::Changed { .. })),
            "in place {in_place}: {result:?}"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), saved);
        let now = snapshot(dir.path());
        for (file, bytes) in &before {
            if dir.path().join(file) != victim {
                assert!(
                    now.contains(&(file.clone(), bytes.clone())),
                    "{file} not rolled back"
                );
            }
        }
        assert!(!dir.path().join(".kiln/journal").exists());
    }
}

/// A file that changed since the plan refuses the apply before anything is
/// written: the project is as it was, and the backups already written for the
/// files read before it are removed with the journal's folder.
#[test]
fn an_apply_refused_while_reading_leaves_no_journal() {
    let files = many_referrers(10);
    let pairs = as_pairs(&files);
    let (dir, _, mut checker, p) = planned_move(&pairs, "tex/t.png", "tex/u.png");
    let last = p.edits.last().unwrap().file.clone();
    fs::write(dir.path().join(&last), r#"["tex/t.png", "other"]"#).unwrap();
    let before = snapshot(dir.path());
    match apply(&mut checker, &p) {
        Err(CheckerError::Changed { file }) => assert_eq!(file, last),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(snapshot(dir.path()), before);
    assert!(!dir.path().join(".kiln/journal").exists());
}

/// The journal's folder swapped for a link after the project was opened: the
/// apply refuses before writing a backup anywhere, and the project is as it was.
#[test]
fn a_journal_folder_swapped_for_a_link_is_never_written_through() {
    let files = many_referrers(4);
    let pairs = as_pairs(&files);
    let (dir, before, mut checker, p) = planned_move(&pairs, "tex/t.png", "tex/u.png");
    let elsewhere = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".kiln")).unwrap();
    kiln_core::os::symlink(elsewhere.path(), dir.path().join(".kiln/journal")).unwrap();
    let result = apply(&mut checker, &p);
    assert!(
        matches!(result, Err(CheckerError::Refused { .. })),
        "{result:?}"
    );
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    fs::remove_file(dir.path().join(".kiln/journal")).unwrap();
    assert_eq!(snapshot(dir.path()), before);
}

/// A move that changed at least a tenth of the project's files (patched or
/// moved) stores the cache when its checker is dropped: the next open scans
/// none of them again (it may read some, written too recently to trust their
/// times, and find them the same). A smaller move leaves the cache as it was.
#[test]
fn a_move_changing_a_tenth_of_the_files_stores_the_cache() {
    // Referrers, textures beside the one referred to, what moves, stored.
    let cases = [
        (40, 0, ("tex/t.png", "tex/u.png"), true),
        (2, 0, ("tex/t.png", "tex/u.png"), false),
        (1, 20, ("tex", "gfx/tex"), true),
    ];
    for (referrers, textures, (old, new), stored) in cases {
        let mut files = many_referrers(referrers);
        for i in 0..60 {
            files.push((format!("other/o{i:02}.json"), "[]".to_owned()));
        }
        for i in 0..textures {
            files.push((format!("tex/x{i:02}.png"), "png".to_owned()));
        }
        let (dir, _, checker, p) = planned_move(&as_pairs(&files), old, new);
        drop(checker);
        age(dir.path(), &files);
        // Stored with the files' new times: the open that moves writes nothing.
        drop(reopen(dir.path()).unwrap());
        let mut checker = reopen(dir.path()).unwrap();
        apply_without_undo(&mut checker, &p).unwrap();
        drop(checker);
        let parsed = reopen(dir.path()).unwrap().index().stats().parsed;
        if stored {
            assert_eq!(
                parsed, 0,
                "{referrers} referrers, {old}: files scanned again"
            );
        } else {
            // The patched files, the moved one and the redirect log.
            assert_eq!(parsed, referrers + 2, "{referrers} referrers, {old}");
        }
    }
}

/// Sets the files' times a minute back: no entry is then read again for being
/// too new to trust.
fn age(root: &Path, files: &[(String, String)]) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for (file, _) in files {
        let f = fs::File::options()
            .write(true)
            .open(root.join(file))
            .unwrap();
        f.set_modified(old).unwrap();
    }
}

/// The files a move carries along keep their index entries under their new
/// paths, scans still in the cache's bytes: none is read again. The index after
/// the move is the one a fresh open builds.
#[test]
fn moved_files_are_carried_in_the_index_not_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = vec![("kiln.project".to_owned(), "{}".to_owned())];
    for i in 0..6 {
        files.push((
            format!("art/m{i}.material"),
            format!(r#"{{"texture": "art/t{i}"}}"#),
        ));
        files.push((format!("art/t{i}.png"), "png".to_owned()));
    }
    files.push((
        "levels/a.level".to_owned(),
        r#"{"entities": [{"id": "e", "components": {"mesh": {"material": "art/m0"}}}]}"#.to_owned(),
    ));
    write(dir.path(), &as_pairs(&files));
    age(dir.path(), &files);
    drop(reopen(dir.path()).unwrap());
    let mut checker = reopen(dir.path()).unwrap();
    let p = plan(&checker, &MoveRequest::new("art", "gfx/art")).unwrap();
    apply(&mut checker, &p).unwrap();
    let patched: Vec<String> = p
        .edits
        .iter()
        .map(|e| renamed_path(&p.renames, &e.file))
        .collect();
    let moved: Vec<&crate::index::FileEntry> = checker
        .index()
        .files_in_folder("gfx/art")
        .filter(|f| !patched.contains(&f.path.to_string()))
        .collect();
    assert_eq!(
        moved.len(),
        6,
        "the materials' textures and the materials not patched"
    );
    for f in &moved {
        assert!(!f.scan_is_decoded(), "{} was read again", f.path);
    }
    // The patched files' new scans are kept in the cache's encoding too.
    for path in &patched {
        let f = checker.index().file(path).unwrap();
        assert!(!f.scan_is_decoded(), "{path} holds its scan decoded");
    }
    let fresh = reopen(dir.path()).unwrap();
    let entries = |c: &Checker| -> Vec<(String, u64, u64, u64, crate::scan::FileScan)> {
        c.index()
            .files()
            .filter(|f| f.path.as_ref() != REDIRECT_FILE)
            .map(|f| {
                (
                    f.path.to_string(),
                    f.size,
                    f.mtime_ns,
                    f.hash,
                    f.scan().clone(),
                )
            })
            .collect()
    };
    assert_eq!(entries(&checker), entries(&fresh));
}

/// Two moves planned onto one free name, as two `kiln mv` at once plan them: the
/// first lands; the second, planned on the project as it was before, is refused
/// whole (the project's generation moved on) and changes nothing; planned again,
/// it is refused at once, the name being taken. Before, the second rename
/// replaced the first file's bytes.
#[test]
fn a_plan_made_before_another_operation_is_refused_and_planned_again() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[("kiln.project", "{}"), ("a.txt", "a"), ("b.txt", "b")],
    );
    let mut first = reopen(dir.path()).unwrap();
    let mut second = reopen(dir.path()).unwrap();
    let a = plan(&first, &MoveRequest::new("a.txt", "t.txt")).unwrap();
    let b = plan(&second, &MoveRequest::new("b.txt", "t.txt")).unwrap();
    apply(&mut first, &a).unwrap();
    let before = snapshot(dir.path());
    let refused = apply(&mut second, &b);
    assert!(
        matches!(&refused, Err(e) if e.asks_to_plan_again()),
        "a plan made on a project another move changed since was applied: {refused:?}"
    );
    assert_eq!(snapshot(dir.path()), before);
    // Caught up, the same request is refused before anything is written.
    assert!(second.behind_other_operations());
    second.catch_up().unwrap();
    assert!(!second.behind_other_operations());
    let again = plan(&second, &MoveRequest::new("b.txt", "t.txt"));
    assert!(again.is_err(), "{again:?}");
    // The first checker followed its own move: its next plan applies.
    assert!(!first.behind_other_operations());
    let c = plan(&first, &MoveRequest::new("t.txt", "u.txt")).unwrap();
    apply(&mut first, &c).unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("u.txt")).unwrap(), "a");
    assert_eq!(fs::read_to_string(dir.path().join("b.txt")).unwrap(), "b");
}

/// A move onto a name another program took after the move was planned (not a
/// Kiln operation, so the project's generation says nothing): the final rename,
/// which never replaces, refuses; the file stays where it was, the other
/// program's file keeps its bytes, and the redirect log records nothing.
#[test]
fn a_move_onto_a_name_taken_since_it_was_planned_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[("kiln.project", "{}"), ("a.txt", "a"), ("b.txt", "b")],
    );
    let mut checker = reopen(dir.path()).unwrap();
    let b = plan(&checker, &MoveRequest::new("b.txt", "t.txt")).unwrap();
    fs::write(dir.path().join("t.txt"), "theirs").unwrap();
    let refused = apply(&mut checker, &b);
    assert!(
        matches!(&refused, Err(CheckerError::MoveRefused { reason, .. })
            if reason.contains("something is there now")),
        "the move replaced another program's file: {refused:?}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("t.txt")).unwrap(),
        "theirs"
    );
    assert_eq!(fs::read_to_string(dir.path().join("b.txt")).unwrap(), "b");
    assert!(!dir.path().join(REDIRECT_FILE).exists());
}

/// Another program appends a line to the redirect log while a move runs: the
/// move appends its own after it and the line stays. Killed at any step and rolled
/// back, the move takes off only its own lines: the other program's line stays,
/// and every other file is as it was. Before, the move rewrote the log whole from
/// what it read, dropping the line.
#[test]
fn a_line_another_program_appends_to_the_redirect_log_is_kept() {
    let files = [
        ("kiln.project", "{}"),
        ("kiln.redirects", "# moves\nold.txt -> older.txt\n"),
        (
            "a.level",
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "m"}}}]}"#,
        ),
        ("m.mesh", "{}"),
    ];
    let theirs = "p.txt -> q.txt\n";
    let appending_hook = |dir: &Path, appended: Arc<std::sync::atomic::AtomicBool>| {
        let log = dir.join(REDIRECT_FILE);
        BEFORE_REPLACE.with(|h| {
            *h.borrow_mut() = Some(Arc::new(move |_: &Path| {
                use std::io::Write;
                let mut f = fs::OpenOptions::new().append(true).open(&log).unwrap();
                f.write_all(theirs.as_bytes()).unwrap();
                appended.store(true, std::sync::atomic::Ordering::SeqCst);
            }))
        });
    };
    // Whole: both lines are there, the other program's first.
    let (dir, _, mut checker, p) = planned_move(&files, "m.mesh", "n.mesh");
    assert_eq!(p.edits.len(), 1, "{p:?}");
    appending_hook(dir.path(), Arc::default());
    let applied = apply(&mut checker, &p);
    BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
    applied.unwrap();
    let log = fs::read_to_string(dir.path().join(REDIRECT_FILE)).unwrap();
    assert_eq!(
        log,
        format!("# moves\nold.txt -> older.txt\n{theirs}m.mesh -> n.mesh\n")
    );

    // Killed at each step, then recovered.
    for steps in 0..8 {
        let (dir, before, mut checker, p) = planned_move(&files, "m.mesh", "n.mesh");
        let appended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        appending_hook(dir.path(), appended.clone());
        crash_after(Some(steps));
        let result = apply(&mut checker, &p);
        crash_after(None);
        BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
        drop(reopen(dir.path()).unwrap());
        let mut expected = before.clone();
        if appended.load(std::sync::atomic::Ordering::SeqCst) {
            let log = expected
                .iter_mut()
                .find(|(f, _)| f == REDIRECT_FILE)
                .unwrap();
            log.1.extend_from_slice(theirs.as_bytes());
        }
        if result.is_ok() {
            continue;
        }
        assert_eq!(
            snapshot(dir.path()),
            expected,
            "after a kill at step {steps}"
        );
    }
}

/// A name with a line break cannot write lines of its own into the redirect log:
/// a folder holding one does not move, and no move goes to such a name.
#[test]
fn names_with_control_characters_never_reach_the_redirect_log() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("kiln.project", "{}"),
            ("art/ok.txt", "ok"),
            ("art/x.txt\nfake.png -> gone.png", "crafted"),
        ],
    );
    let checker = reopen(dir.path()).unwrap();
    // A positive control: the crafted file is a project file the move would carry.
    assert!(
        checker.files_under("art").len() == 2,
        "{:?}",
        checker.files_under("art")
    );
    let folder = plan(&checker, &MoveRequest::new("art", "pictures"));
    assert!(
        matches!(&folder, Err(CheckerError::MoveRefused { reason, .. }) if reason.contains("control character")),
        "{folder:?}"
    );
    let onto = plan(&checker, &MoveRequest::new("art/ok.txt", "art/a\nb.txt"));
    assert!(
        matches!(onto, Err(CheckerError::MoveRefused { .. })),
        "{onto:?}"
    );
    assert!(!dir.path().join(REDIRECT_FILE).exists());
}

/// A patch checks that each place it rewrites holds the reference the plan read
/// there. Positions that are off (a cache damaged with a valid checksum, or
/// crafted) are refused before anything is written, never turned into broken
/// JSON; the same plan with true positions applies.
#[test]
fn a_patch_whose_positions_do_not_hold_the_reference_writes_nothing() {
    let files = [
        ("kiln.project", "{}"),
        (
            "levels/a.level",
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/m"}}}]}"#,
        ),
        ("materials/m.material", "{}"),
        ("meshes/m.mesh", "{}"),
    ];
    let (dir, before, mut checker, p) =
        planned_move(&files, "materials/m.material", "materials/n.material");
    assert!(!p.edits.is_empty(), "{p:?}");
    for shift in [1i64, -1, 3] {
        let mut off = p.clone();
        let change = &mut off.edits[0].changes[0];
        change.span = (
            (i64::from(change.span.0) + shift) as u32,
            (i64::from(change.span.1) + shift) as u32,
        );
        let result = apply(&mut checker, &off);
        assert!(
            matches!(result, Err(CheckerError::Changed { .. })),
            "shift {shift}: {result:?}"
        );
        assert_eq!(snapshot(dir.path()), before, "shift {shift}");
    }
    // The positive control: the true positions patch.
    apply(&mut checker, &p).unwrap();
    let level = fs::read_to_string(dir.path().join("levels/a.level")).unwrap();
    assert!(level.contains(r#""material": "materials/n""#), "{level}");
    serde_json::from_str::<serde_json::Value>(&level).unwrap();
}

/// Every one-byte change to a cache whose checksum is then made valid again.
/// Made valid with xxh3's plain checksum (a cache someone crafted, or one that came
/// with a downloaded project): refused, since a cache's checksum is keyed with this
/// user's key, and the move, planned on the files themselves, lands whole. Made
/// valid with this user's key (Kiln's own cache, damaged): the move either lands
/// or changes nothing, never writes broken JSON, and a file whose entry does not
/// hold (the right size and time, the wrong hash or positions) is read again when
/// the apply refuses it, so the move planned again lands. Before, such a cache
/// made the move write broken JSON, or say nothing while leaving a reference
/// unpatched (a string of the cache's table changed).
#[test]
fn a_move_on_a_damaged_cache_with_a_valid_checksum_lands_whole_or_not_at_all() {
    let files = [
        ("kiln.project", "{}"),
        (
            "levels/a.level",
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/m"}}}, {"id": "y", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/m"}}}]}"#,
        ),
        ("materials/m.material", "{}"),
        ("meshes/m.mesh", "{}"),
    ];
    let dir = tempfile::tempdir().unwrap();
    // The files as they were, at a time long past: a cache's entries hold for them.
    let reset = || {
        let _ = fs::remove_file(dir.path().join("materials/n.material"));
        let _ = fs::remove_file(dir.path().join(REDIRECT_FILE));
        write(dir.path(), &files);
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
        for (path, _) in &files {
            let file = fs::File::options()
                .write(true)
                .open(dir.path().join(path))
                .unwrap();
            file.set_times(fs::FileTimes::new().set_accessed(old).set_modified(old))
                .unwrap();
        }
    };
    reset();
    drop(reopen(dir.path()).unwrap());
    let cache_path = dir.path().join(".kiln/index.bin");
    let cache = fs::read(&cache_path).unwrap();
    let body = cache.len() - 8;
    for keyed in [false, true] {
        let mut landed = 0;
        for k in 0..body {
            reset();
            let mut damaged = cache.clone();
            damaged[k] ^= 0x01;
            let sum = if keyed {
                crate::cache::keyed_checksum(&damaged[..body])
            } else {
                xxhash_rust::xxh3::xxh3_64(&damaged[..body])
            };
            damaged[body..].copy_from_slice(&sum.to_le_bytes());
            fs::write(&cache_path, &damaged).unwrap();
            let Ok(mut checker) = reopen(dir.path()) else {
                continue;
            };
            let request = MoveRequest::new("materials/m.material", "materials/n.material");
            let mut result = Err(CheckerError::ProjectChanged);
            for _ in 0..3 {
                result = plan(&checker, &request).and_then(|p| apply(&mut checker, &p).map(drop));
                match &result {
                    Err(e) if e.asks_to_plan_again() => checker.rescan().unwrap(),
                    _ => break,
                }
            }
            let level = fs::read_to_string(dir.path().join("levels/a.level")).unwrap();
            serde_json::from_str::<serde_json::Value>(&level)
                .unwrap_or_else(|e| panic!("byte {k}, keyed {keyed}: broken JSON: {e}\n{level}"));
            assert!(
                result.is_ok(),
                "byte {k}, keyed {keyed}: never landed: {result:?}"
            );
            assert!(!dir.path().join("materials/m.material").exists());
            // With this user's key, a string of the cache's table changed can still
            // leave a reference unpatched: only Kiln itself writes such a cache, and
            // its checksum catches what the disk damages.
            if !keyed {
                assert_eq!(level.matches("materials/n").count(), 2, "byte {k}: {level}");
            }
            landed += 1;
        }
        assert!(landed > body / 2, "keyed {keyed}: {landed} of {body}");
    }
}

/// The folders a move empties are removed after it ends; if one of them (or a
/// folder above) was swapped for a link by then, nothing is removed through it:
/// an empty folder outside the project, at the same path below the link, stays.
#[test]
fn emptied_folders_are_never_removed_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("kiln.project", "{}")]);
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(outside.path().join("deep")).unwrap();
    kiln_core::os::symlink(outside.path(), dir.path().join("src")).unwrap();
    let emptied =
        super::apply::emptied_folders(&[("src/deep/t.png".to_owned(), "dst/t.png".to_owned())]);
    assert_eq!(emptied, ["src", "src/deep"]);
    crate::fs::journal::remove_empty_dirs(dir.path(), &emptied);
    assert!(
        outside.path().join("deep").is_dir(),
        "removed through the link"
    );
    assert!(dir.path().join("src").is_symlink(), "the link itself went");
}
