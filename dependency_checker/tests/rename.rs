//! Moves and renames through the checker, checked on disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod project_fixture;

use std::fs;

use dependency_checker::CheckerError;
use dependency_checker::check::Finding;
use dependency_checker::ops::{MoveRequest, apply, plan, plan_redirect_fixes};
use project_fixture::*;
use proptest::prelude::*;

fn read(dir: &std::path::Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn plan_lists_every_change_and_apply_patches_only_those_bytes() {
    let dir = project();
    let mut checker = open(dir.path());
    let before = snapshot(dir.path());
    let p = plan(
        &checker,
        &MoveRequest::new("materials/bark.material", "materials/wood/bark.material"),
    )
    .unwrap();
    assert_eq!(
        p.moves,
        vec![(
            "materials/bark.material".to_owned(),
            "materials/wood/bark.material".to_owned()
        )]
    );
    let changes = changes_outside(&p, "");
    assert_eq!(
        changes,
        vec![
            (
                "levels/forest.level".into(),
                8,
                "materials/bark".into(),
                "materials/wood/bark".into()
            ),
            (
                "tools/export.json".into(),
                1,
                "materials/bark.material".into(),
                "materials/wood/bark.material".into()
            ),
            (
                "units/tree.unit".into(),
                1,
                "materials/bark".into(),
                "materials/wood/bark".into()
            ),
        ]
    );
    // Planning changes nothing.
    assert_eq!(snapshot(dir.path()), before);

    let inverse = apply(&mut checker, &p).unwrap();
    // Only the reference text changed: the name that mentions the path did not.
    assert_eq!(
        read(dir.path(), "levels/forest.level"),
        LEVEL.replace(
            "\"material\": \"materials/bark\"",
            "\"material\": \"materials/wood/bark\""
        )
    );
    assert!(dir.path().join("materials/wood/bark.material").is_file());
    assert!(!dir.path().join("materials/bark.material").exists());
    assert_eq!(
        read(dir.path(), "kiln.redirects").lines().last(),
        Some("materials/bark.material -> materials/wood/bark.material")
    );
    assert_eq!(
        checker.references_to("materials/wood/bark.material").len(),
        3
    );
    assert!(
        checker
            .findings()
            .iter()
            .all(|f| matches!(f, Finding::Unused { .. })),
        "{:?}",
        checker.findings()
    );

    // The inverse undoes it: every file as before (the redirect log keeps both moves).
    let undo = inverse.plan(&checker).unwrap();
    apply(&mut checker, &undo).unwrap();
    let after: Vec<_> = snapshot(dir.path())
        .into_iter()
        .filter(|(f, _)| f != "kiln.redirects")
        .collect();
    assert_eq!(after, before);
    assert!(
        checker
            .redirects()
            .follow("materials/bark.material")
            .is_none(),
        "moved back"
    );
}

#[test]
fn a_plans_changes_share_the_strings_they_repeat() {
    let dir = project();
    let checker = open(dir.path());
    let p = plan(
        &checker,
        &MoveRequest::new("materials/bark.material", "materials/wood/bark.material"),
    )
    .unwrap();
    let changes: Vec<_> = p.edits.iter().flat_map(|e| &e.changes).collect();
    // The level and the unit both write "materials/bark": one copy of each text.
    let mut shared_texts = 0;
    for (i, a) in changes.iter().enumerate() {
        for b in &changes[i + 1..] {
            if a.old_text == b.old_text {
                assert!(std::sync::Arc::ptr_eq(&a.old_text, &b.old_text));
                assert!(std::sync::Arc::ptr_eq(&a.new_text, &b.new_text));
                shared_texts += 1;
            }
        }
    }
    assert_eq!(shared_texts, 1, "{changes:?}");
    // Each place names its file with the index entry's own path.
    for c in &changes {
        let entry = checker.index().file(&c.place.file).unwrap();
        assert!(std::sync::Arc::ptr_eq(&c.place.file, &entry.path));
    }
}

#[test]
fn folders_move_with_everything_under_them() {
    let dir = project();
    let mut checker = open(dir.path());
    let p = plan(&checker, &MoveRequest::new("materials", "art/materials")).unwrap();
    assert_eq!(p.moves.len(), 2);
    apply(&mut checker, &p).unwrap();
    assert!(
        !dir.path().join("materials").exists(),
        "the empty folder is removed"
    );
    assert!(read(dir.path(), "units/tree.unit").contains("\"art/materials/bark\""));
    assert!(read(dir.path(), "levels/forest.level").contains("\"art/materials/stone\""));
    assert_eq!(checker.references_to("art/materials").len(), 4);
}

#[test]
fn moves_that_would_break_something_are_refused_and_change_nothing() {
    let dir = project();
    let checker = open(dir.path());
    let refused = |old: &str, new: &str| match plan(&checker, &MoveRequest::new(old, new)) {
        Err(e @ (CheckerError::Refused { .. } | CheckerError::MoveRefused { .. })) => e.to_string(),
        other => panic!("{old} -> {new} was not refused: {other:?}"),
    };
    assert!(
        refused("materials/bark.material", "materials/stone.material").contains("already exists")
    );
    assert!(refused("materials/bark.material", "Materials/Bark.material").contains("uppercase"));
    assert!(refused("materials/bark.material", "../bark.material").contains("'..' segment"));
    assert!(refused("materials/bark.material", "/tmp/bark.material").contains("absolute"));
    assert!(refused("materials/bark.material", "materials/bark.json").contains("changes its type"));
    assert!(
        refused("materials/nothing.material", "materials/x.material").contains("nothing to move")
    );
}

#[test]
fn a_file_changed_since_indexing_refuses_the_apply() {
    let dir = project();
    let mut checker = open(dir.path());
    let p = plan(
        &checker,
        &MoveRequest::new("materials/bark.material", "materials/b.material"),
    )
    .unwrap();
    fs::write(dir.path().join("units/tree.unit"), r#"{"entities": []}"#).unwrap();
    let before = snapshot(dir.path());
    match apply(&mut checker, &p) {
        Err(CheckerError::Changed { file }) => assert_eq!(file, "units/tree.unit"),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_case_only_rename_moves_the_file_and_patches_its_references() {
    let dir = project();
    write_project(
        dir.path(),
        &[
            ("textures/Rose.png", "png".into()),
            (
                "materials/petal.material",
                r#"{"texture": "textures/Rose"}"#.into(),
            ),
        ],
    );
    let mut checker = open(dir.path());
    let p = plan(
        &checker,
        &MoveRequest::new("textures/Rose.png", "textures/rose.png"),
    )
    .unwrap();
    assert_eq!(p.change_count(), 1, "the material's reference is planned");
    apply(&mut checker, &p).unwrap();
    let names: Vec<String> = fs::read_dir(dir.path().join("textures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    assert!(
        names.contains(&"rose.png".to_owned()) && !names.contains(&"Rose.png".to_owned()),
        "one file, under its new name: {names:?}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("textures/rose.png")).unwrap(),
        "png",
        "its bytes moved with it"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("materials/petal.material")).unwrap(),
        r#"{"texture": "textures/rose"}"#,
        "the reference names the new spelling, and nothing else changed"
    );
    let about_rose: Vec<String> = (checker.findings().iter())
        .filter(|f| f.is_error())
        .map(|f| format!("{f:?}"))
        .filter(|f| f.to_lowercase().contains("rose"))
        .collect();
    assert!(about_rose.is_empty(), "nothing left broken: {about_rose:?}");
}

/// On a case-sensitive file system `Rose.png` and `rose.png` can be two files: a
/// case-only rename must not overwrite the other one.
#[test]
fn a_case_only_rename_never_overwrites_a_different_file() {
    let dir = project();
    write_project(
        dir.path(),
        &[
            ("textures/Rose.png", "one".into()),
            ("textures/rose.png", "two".into()),
        ],
    );
    let checker = open(dir.path());
    let err = plan(
        &checker,
        &MoveRequest::new("textures/Rose.png", "textures/rose.png"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(read(dir.path(), "textures/rose.png"), "two");
}

#[test]
fn check_fix_patches_references_that_arrive_with_old_paths() {
    let dir = project();
    let mut checker = open(dir.path());
    let rename = plan(
        &checker,
        &MoveRequest::new("materials/bark.material", "materials/oak.material"),
    )
    .unwrap();
    apply(&mut checker, &rename).unwrap();
    // A merge brings a new file that still uses the old path.
    write_project(dir.path(), &[("units/bush.unit", r#"{"entities": [{"id": "b", "components": {"mesh": {"mesh": "meshes/trunk", "material": "materials/bark"}}}]}"#.into())]);
    checker.rescan().unwrap();
    let fixes = plan_redirect_fixes(&checker);
    assert_eq!(fixes.change_count(), 1);
    apply(&mut checker, &fixes).unwrap();
    assert!(read(dir.path(), "units/bush.unit").contains("\"materials/oak\""));
    assert!(
        !checker
            .findings()
            .iter()
            .any(|f| matches!(f, Finding::StaleRedirect { .. } | Finding::Missing { .. }))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the formatting, a rename changes exactly the reference strings: the
    /// patched file equals the original with only those substrings replaced, and text
    /// that merely contains the path is left alone.
    #[test]
    fn patching_leaves_every_other_byte_identical(
        indent in "[ \t]{0,4}",
        gap in "[ \n]{0,3}",
        extra in prop::collection::vec(("[a-z]{1,6}", "[a-z/ ]{0,20}"), 0..4),
        count in 1usize..5,
    ) {
        let dir = project();
        let mut text = String::from("{");
        text.push_str(&gap);
        text.push_str("\"entities\": [");
        for i in 0..count {
            if i > 0 { text.push(','); }
            text.push_str(&format!("{gap}{indent}{{\"id\": \"e{i}\",{gap}\"name\": \"uses materials/bark\", \"components\": {{\"mesh\": {{{indent}\"material\":{gap}\"materials/bark\", \"mesh\": \"meshes/trunk\"}}"));
            for (n, (k, v)) in extra.iter().enumerate() {
                // Mentions the path without being one (a note that is exactly the path
                // would be a generic reference, and rightly patched). Keys are made
                // distinct: a duplicate key is invalid JSON, which is never patched.
                text.push_str(&format!(", \"x{n}{k}\": {{\"note\": \"see: {v}materials/bark\"}}"));
            }
            text.push_str("}}");
        }
        text.push_str(&format!("]{gap}}}"));
        write_project(dir.path(), &[("levels/forest.level", text.clone())]);
        let mut checker = open(dir.path());
        let p = plan(&checker, &MoveRequest::new("materials/bark.material", "materials/renamed_bark.material")).unwrap();
        apply(&mut checker, &p).unwrap();
        let expected = text.replace(&format!("\"material\":{gap}\"materials/bark\""), &format!("\"material\":{gap}\"materials/renamed_bark\""));
        prop_assert_eq!(read(dir.path(), "levels/forest.level"), expected);
    }
}

/// A journal is a file in the project that anyone can write: one naming paths
/// outside the project (by `..` or an absolute path) is refused whole; an entry
/// through a symbolic link is passed by; nothing outside is touched.
#[test]
fn a_crafted_journal_cannot_reach_outside_the_project() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("victim.txt"), "precious").unwrap();
    let victim = outside.path().join("victim.txt");
    let cases = [
        format!(
            r#"{{"renames": [], "patched": [["../{}/victim.txt", [0, 4]]]}}"#,
            outside.path().file_name().unwrap().to_string_lossy()
        ),
        format!(
            r#"{{"renames": [], "patched": [["{}", [0, 4]]]}}"#,
            victim.display()
        ),
        r#"{"renames": [], "patched": [["link/victim.txt", [0, 4]]]}"#.to_owned(),
        r#"{"renames": [["link/victim.txt", "moved.txt"]], "patched": []}"#.to_owned(),
        r#"{"renames": [], "patched": [], "created_dirs": ["link"]}"#.to_owned(),
    ];
    for manifest in cases {
        let dir = project();
        kiln_core::os::symlink(outside.path(), dir.path().join("link")).unwrap();
        let journal = dir.path().join(".kiln/journal");
        fs::create_dir_all(&journal).unwrap();
        fs::write(journal.join("backups.bin"), "EVIL").unwrap();
        fs::write(journal.join("journal.json"), &manifest).unwrap();
        let result = dependency_checker::Checker::open(
            dir.path(),
            std::sync::Arc::new(kiln_core::Registry::with_builtins()),
            &dependency_checker::BuildOptions::default(),
        );
        // The journal is set aside, untouched, and reported; the project opens.
        let checker = result.unwrap_or_else(|e| panic!("{manifest}: {e}"));
        let set_aside: Vec<_> = checker
            .findings()
            .into_iter()
            .filter_map(|f| match f {
                Finding::JournalSetAside { file, reason } => Some((file, reason)),
                _ => None,
            })
            .collect();
        // A path that climbs out is the journal's own fault: refused whole. A
        // plain path through a link is passed by (a folder another program
        // swapped), the rest restored, and the journal kept for what was passed.
        let through_link = manifest.contains("\"link");
        let why = if through_link {
            "symbolic link"
        } else {
            "not a path inside the project"
        };
        let kept_for = usize::from(!manifest.contains("created_dirs"));
        assert_eq!(set_aside.len(), kept_for, "{manifest}");
        for (file, reason) in &set_aside {
            assert!(file.starts_with(".kiln/journal.rejected-"));
            assert!(reason.contains(why), "{set_aside:?}");
        }
        assert!(!journal.exists());
        assert_eq!(
            fs::read_to_string(&victim).unwrap(),
            "precious",
            "{manifest}"
        );
        assert!(outside.path().join("victim.txt").is_file());
    }
}

/// A damaged committed journal (its manifest torn after the commit, a backup cut
/// short) or a file where the journal folder should be is set aside with a
/// finding; every command keeps working.
#[test]
fn an_unusable_journal_is_set_aside_and_the_project_stays_usable() {
    let cases: [(&str, Option<&str>, &str); 3] = [
        ("{\"renames\": [[\"a", Some("x"), "manifest is damaged"),
        (
            r#"{"renames": [], "patched": [["units/tree.unit", [0, 999]]]}"#,
            Some("short"),
            "truncated",
        ),
        ("", None, "not a folder"),
    ];
    for (manifest, backups, needle) in cases {
        let dir = project();
        let before = snapshot(dir.path());
        let journal = dir.path().join(".kiln/journal");
        fs::create_dir_all(dir.path().join(".kiln")).unwrap();
        match backups {
            Some(b) => {
                fs::create_dir_all(&journal).unwrap();
                fs::write(journal.join("journal.json"), manifest).unwrap();
                fs::write(journal.join("backups.bin"), b).unwrap();
            }
            None => fs::write(&journal, "a file, not a folder").unwrap(),
        }
        let mut checker = open(dir.path());
        let findings = checker.findings();
        assert!(
            findings.iter().any(
                |f| matches!(f, Finding::JournalSetAside { reason, .. } if reason.contains(needle))
            ),
            "{needle}: {findings:?}"
        );
        assert_eq!(snapshot(dir.path()), before, "{needle}");
        // Still usable: a move works.
        let p = plan(
            &checker,
            &MoveRequest::new("textures/bark.png", "textures/oak.png"),
        )
        .unwrap();
        apply(&mut checker, &p).unwrap();
    }
}

/// Kiln's own files are read only if they are regular files: a FIFO or a link to a
/// device in `.kiln/` or as the redirect log neither hangs nor exhausts memory.
#[test]
fn special_files_in_place_of_kilns_own_do_not_hang() {
    let dir = project();
    open(dir.path());
    let cache = dir.path().join(".kiln/index.bin");
    fs::remove_file(&cache).unwrap();
    kiln_core::os::make_fifo(&cache).unwrap();
    let started = std::time::Instant::now();
    let checker = open(dir.path());
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(checker.references_to("materials/bark.material").len(), 3);
    fs::remove_file(&cache).unwrap();
    kiln_core::os::symlink("/dev/zero", &cache).unwrap();
    open(dir.path());
    kiln_core::os::symlink("/dev/zero", dir.path().join("kiln.redirects")).unwrap();
    let err = dependency_checker::Checker::open(
        dir.path(),
        std::sync::Arc::new(kiln_core::Registry::with_builtins()),
        &dependency_checker::BuildOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
}

/// A reference written without extension keeps naming its file after a move that
/// brings beside it another file with the same path without extension, or a file
/// whose whole path is that text (both among the moves): it is then written with
/// its extension. Moved alone, it stays without.
#[test]
fn a_move_writes_the_extension_where_the_arrivals_would_make_a_reference_mean_another_file() {
    for (second, written) in [
        (None, "new/rock"),
        (Some(("other/rock.json", "new/rock.json")), "new/rock.mesh"),
        (Some(("other/rock", "new/rock")), "new/rock.mesh"),
        (Some(("other/rock.json", "elsewhere/rock.json")), "new/rock"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut files = vec![
            ("kiln.project", "{}".to_owned()),
            ("meshes/rock.mesh", "{}".to_owned()),
            ("data.json", r#"{"m": "meshes/rock"}"#.to_owned()),
        ];
        let mut pairs = vec![("meshes/rock.mesh".to_owned(), "new/rock.mesh".to_owned())];
        if let Some((old, new)) = second {
            files.push((old, "{}".to_owned()));
            pairs.push((old.to_owned(), new.to_owned()));
        }
        write_project(dir.path(), &files);
        let mut checker = open(dir.path());
        let request = MoveRequest {
            pairs,
            undoes: None,
        };
        let p = plan(&checker, &request).unwrap();
        apply(&mut checker, &p).unwrap();
        assert_eq!(
            read(dir.path(), "data.json"),
            format!(r#"{{"m": "{written}"}}"#),
            "moved beside {second:?}"
        );
        assert_eq!(
            checker.references_to("new/rock.mesh").len(),
            1,
            "moved beside {second:?}"
        );
    }
}

/// (file, line, old text, new text) of every change a plan makes outside the file
/// `except`, in order of file and line.
fn changes_outside(
    p: &dependency_checker::ops::MovePlan,
    except: &str,
) -> Vec<(String, u32, String, String)> {
    let mut out: Vec<_> = p
        .edits
        .iter()
        .filter(|e| e.file != except)
        .flat_map(|e| {
            e.changes.iter().map(|c| {
                (
                    c.place.file.to_string(),
                    c.place.line,
                    c.old_text.to_string(),
                    c.new_text.to_string(),
                )
            })
        })
        .collect();
    out.sort();
    out
}

#[test]
fn pointing_the_references_of_a_file_at_another_patches_them_as_a_move_would() {
    // The oracle: moving `old` to `new` patches each reference to it; pointing them
    // at an existing `new` (before deleting `old`) must patch the same places the
    // same way: typed, generic with and without extension, and glTF URIs.
    let mut files = files();
    files.push((
        "art/tree.gltf",
        r#"{"asset": {"version": "2.0"}, "images": [{"uri": "../textures/bark.png"}]}"#.into(),
    ));
    for (old, new) in [
        ("materials/bark.material", "materials/oak/heart.material"),
        ("textures/bark.png", "textures/pine/needle.png"),
        ("meshes/rock.mesh", "props/boulder.mesh"),
    ] {
        let moved = tempfile::tempdir().unwrap();
        write_project(moved.path(), &files);
        let oracle = plan(&open(moved.path()), &MoveRequest::new(old, new)).unwrap();
        assert!(!oracle.edits.is_empty(), "{old} is referenced");

        let dir = tempfile::tempdir().unwrap();
        write_project(dir.path(), &files);
        let copy = fs::read(dir.path().join(old)).unwrap();
        fs::create_dir_all(dir.path().join(new).parent().unwrap()).unwrap();
        fs::write(dir.path().join(new), copy).unwrap();
        let mut checker = open(dir.path());
        let retarget =
            dependency_checker::ops::plan_retarget(&checker, old, new, &[old.to_owned()]);
        assert!(retarget.moves.is_empty());
        assert_eq!(
            changes_outside(&retarget, old),
            changes_outside(&oracle, old),
            "{old} -> {new}"
        );

        // Applied, nothing outside `old` names it any more.
        apply(&mut checker, &retarget).unwrap();
        let left: Vec<String> = checker
            .references_to(old)
            .iter()
            .map(|r| r.place.file.to_string())
            .filter(|f| f != old)
            .collect();
        assert!(left.is_empty(), "{old}: {left:?}");
    }
}

/// A move takes away the folders it empties, so that moving back (a move of its
/// own, not an undo) gives the same folder tree as well as the same files.
#[test]
fn a_move_removes_the_folders_it_empties_and_the_inverse_move_is_exact() {
    let dir = project();
    // A folder of its own, two deep, holding only the moved file.
    fs::create_dir_all(dir.path().join("props/old/deep")).unwrap();
    fs::write(dir.path().join("props/old/deep/crate.json"), "{}\n").unwrap();
    // A folder that was empty before is nobody's to remove.
    fs::create_dir_all(dir.path().join("props/empty_on_purpose")).unwrap();
    let mut checker = open(dir.path());
    let (before_files, before_folders) = (snapshot(dir.path()), folders(dir.path()));

    let there = plan(
        &checker,
        &MoveRequest::new("props/old/deep/crate.json", "boxes/crate.json"),
    );
    apply(&mut checker, &there.unwrap()).unwrap();
    let after = folders(dir.path());
    assert!(after.contains(&"boxes".to_owned()), "{after:?}");
    assert!(
        after.contains(&"props".to_owned()),
        "props still holds a folder: {after:?}"
    );
    assert!(
        !after.iter().any(|f| f.starts_with("props/old")),
        "{after:?}"
    );
    assert!(after.contains(&"props/empty_on_purpose".to_owned()));

    let back = plan(
        &checker,
        &MoveRequest::new("boxes/crate.json", "props/old/deep/crate.json"),
    );
    apply(&mut checker, &back.unwrap()).unwrap();
    assert_eq!(folders(dir.path()), before_folders);
    let restored: Vec<_> = snapshot(dir.path())
        .into_iter()
        .filter(|(p, _)| p != "kiln.redirects")
        .collect();
    let expected: Vec<_> = before_files
        .into_iter()
        .filter(|(p, _)| p != "kiln.redirects")
        .collect();
    assert_eq!(restored, expected);

    // A folder move leaves no empty folder where the folder was.
    let folder = plan(&checker, &MoveRequest::new("props/old", "archive/old"));
    apply(&mut checker, &folder.unwrap()).unwrap();
    assert!(!dir.path().join("props/old").exists());
    assert!(dir.path().join("archive/old/deep/crate.json").is_file());
}
