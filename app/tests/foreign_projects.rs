//! The dependency checker on projects Kiln did not write, through the real binary:
//! each bug a new user hit on third-party data (issue 8), as they ran it.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::fs;
use std::path::Path;

/// Writes `files` (path, content) under `dir`.
fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let full = dir.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, content).unwrap();
    }
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &[("kiln.project", "{}")]);
    write(tmp.path(), files);
    tmp
}

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// Bug 1: after a move, a generic reference that equals the old path without its
/// extension but still names another existing file is not stale, and `--fix` leaves
/// it alone.
#[test]
fn check_fix_never_retargets_a_reference_that_resolves() {
    let tmp = project(&[("props/rock.png", "PNG")]);
    let dir = tmp.path();
    let (code, out, err) = kiln(&["mv", "props/rock.png", "props/rock_tex.png"], dir);
    assert_eq!(code, 0, "{out}{err}");
    write(
        dir,
        &[
            ("props/rock.json", r#"{"a": 1}"#),
            ("data.json", r#"{"rock": "props/rock"}"#),
        ],
    );
    let (_, out, _) = kiln(&["deps", "--json", "data.json"], dir);
    let deps = json(&out);
    assert_eq!(deps["references"][0]["target"], "props/rock.json");
    assert_eq!(deps["references"][0]["status"], "resolved");

    // A positive control in the same project: a reference that names the old
    // path itself, and resolves to nothing, is stale and fixed.
    write(dir, &[("stale.json", r#"{"tex": "props/rock.png"}"#)]);

    let (code, out, _) = kiln(&["check", "--fix"], dir);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fixed 1 references"), "{out}");
    assert_eq!(
        read(dir, "stale.json"),
        r#"{"tex": "props/rock_tex.png"}"#,
        "the stale one is fixed"
    );
    assert_eq!(
        read(dir, "data.json"),
        r#"{"rock": "props/rock"}"#,
        "the one that resolves is left alone"
    );
}

/// Bug 1, the other half: text that resolves to nothing is stale only when the
/// redirect's target is of a type the field accepts, or the unique candidate.
#[test]
fn stale_paths_need_the_right_type_or_a_unique_candidate() {
    let tmp = project(&[
        ("a/tex.png", "PNG"),
        ("b/rock.mesh", "{}"),
        ("b/rock.json", "{}"),
    ]);
    let dir = tmp.path();
    for (old, new) in [
        ("a/tex.png", "a/tex2.png"),
        ("b/rock.mesh", "c/rock.mesh"),
        ("b/rock.json", "d/rock.json"),
    ] {
        assert_eq!(kiln(&["mv", old, new], dir).0, 0);
    }
    write(
        dir,
        &[
            // Typed: a material's texture names a png; the redirect leads to one.
            ("m.material", r#"{"texture": "a/tex"}"#),
            // Typed, wrong type: a mesh field naming what was a png.
            (
                "n.unit",
                r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "a/tex"}}}]}"#,
            ),
            // Generic: "b/rock" could have meant either moved file: not repaired.
            ("notes.json", r#"{"see": "b/rock", "tex": "a/tex.png"}"#),
        ],
    );
    let (_, out, _) = kiln(&["check", "--fix", "--dry-run"], dir);
    assert!(out.contains("patch m.material:1"), "{out}");
    assert!(out.contains("\"a/tex\" -> \"a/tex2\""), "{out}");
    assert!(
        out.contains("patch notes.json:1:26 (/tex): \"a/tex.png\" -> \"a/tex2.png\""),
        "{out}"
    );
    assert!(!out.contains("patch n.unit"), "{out}");
    assert!(!out.contains("\"b/rock\" ->"), "{out}");
    assert!(out.contains("would fix 2 references"), "{out}");
    assert_eq!(
        read(dir, "m.material"),
        r#"{"texture": "a/tex"}"#,
        "dry run"
    );
}

/// `--fix` shows what it changes in the same format as `mv --dry-run`, and the
/// editor can undo it (the inverse is a patch of the same places).
#[test]
fn check_fix_previews_like_mv() {
    let tmp = project(&[("a.png", "PNG")]);
    let dir = tmp.path();
    assert_eq!(kiln(&["mv", "a.png", "b.png"], dir).0, 0);
    write(dir, &[("m.material", r#"{"texture": "a"}"#)]);
    let (code, out, _) = kiln(&["check", "--fix"], dir);
    assert_eq!(code, 0, "{out}");
    let first = out.lines().next().unwrap();
    assert_eq!(
        first, "patch m.material:1:13 (/texture): \"a\" -> \"b\"",
        "{out}"
    );
    assert_eq!(read(dir, "m.material"), r#"{"texture": "b"}"#);
}

/// Bug 2: a string naming an existing file with a non-canonical name is a
/// reference: listed, reported with its canonical form, and patched when the file
/// is renamed to its canonical name.
#[test]
fn non_canonical_references_are_indexed_reported_and_patched() {
    let tmp = project(&[
        ("textures/Bark.png", "PNG"),
        (
            "data.json",
            r#"{"bark": "textures/Bark.png", "base": "textures/Bark"}"#,
        ),
    ]);
    let dir = tmp.path();
    let (_, out, _) = kiln(&["refs", "textures/Bark.png"], dir);
    assert!(out.contains("2 references to textures/Bark.png"), "{out}");
    let (_, out, _) = kiln(&["check"], dir);
    assert!(
        out.contains("non-canonical reference: \"textures/Bark.png\" names textures/Bark.png, whose name is not canonical (rename the file and it becomes \"textures/bark.png\")"),
        "{out}"
    );
    let (code, out, err) = kiln(&["mv", "textures/Bark.png", "textures/bark.png"], dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("patched 2 references"), "{out}");
    assert_eq!(
        read(dir, "data.json"),
        r#"{"bark": "textures/bark.png", "base": "textures/bark"}"#
    );
    let (code, out, _) = kiln(&["check"], dir);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("0 findings"), "{out}");
}

/// Bug 3: `_`, `-` and digits in an extension are canonical, and such files and the
/// folders holding them move.
#[test]
fn extensions_with_underscores_are_canonical_and_move() {
    let tmp = project(&[
        ("global.physics_config", "{}"),
        ("anims/walk.sprite_animation", "{}"),
        (
            "refs.json",
            r#"["anims/walk.sprite_animation", "global.physics_config"]"#,
        ),
    ]);
    let dir = tmp.path();
    let (code, out, _) = kiln(&["check"], dir);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("non-canonical"), "{out}");
    let (code, out, err) = kiln(&["mv", "anims", "animations"], dir);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = kiln(
        &[
            "mv",
            "global.physics_config",
            "config/global.physics_config",
        ],
        dir,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        read(dir, "refs.json"),
        r#"["animations/walk.sprite_animation", "config/global.physics_config"]"#
    );
}

/// Bug 4: a folder never merges into another; `mv A B` with B an existing folder,
/// or `mv A B/`, moves A inside B; and every move's inverse restores the project.
#[test]
fn moves_follow_mv_and_never_merge() {
    let tmp = project(&[
        ("sfx/boom.wav", "RIFF"),
        ("sfx/.gitkeep", ""),
        ("levels/sfx/old.wav", "RIFF"),
        ("levels/a.json", r#"["sfx/boom.wav"]"#),
    ]);
    let dir = tmp.path();
    let before = snapshot(dir);

    // levels/ exists: sfx goes inside it, where levels/sfx is already taken.
    let (code, _, err) = kiln(&["mv", "sfx", "levels"], dir);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot move sfx to levels/sfx: levels/sfx already exists (a folder)"),
        "{err}"
    );
    let (code, _, err) = kiln(&["mv", "sfx/boom.wav", "levels/a.json"], dir);
    assert_eq!(code, 2);
    assert!(
        err.contains("levels/a.json already exists (a file)"),
        "{err}"
    );
    assert_eq!(snapshot(dir), before, "refusals change nothing");

    // Into a folder, with a trailing slash, for one source.
    let (code, out, err) = kiln(&["mv", "sfx", "audio/"], dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(dir.join("audio/sfx/boom.wav").is_file());
    assert!(
        dir.join("audio/sfx/.gitkeep").is_file(),
        "hidden files move with their folder"
    );
    assert!(!dir.join("sfx").exists());
    assert_eq!(read(dir, "levels/a.json"), r#"["audio/sfx/boom.wav"]"#);

    // Into an existing folder, without the slash.
    let (code, out, err) = kiln(&["mv", "levels/a.json", "audio"], dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(dir.join("audio/a.json").is_file());

    // Onto itself: a no-op that says so.
    let (code, out, _) = kiln(&["mv", "audio/a.json", "audio/a.json"], dir);
    assert_eq!(code, 0);
    assert!(
        out.contains("audio/a.json is already there: nothing to move"),
        "{out}"
    );
    let (code, _, err) = kiln(&["mv", "audio", "audio/inner"], dir);
    assert_eq!(code, 2);
    assert!(err.contains("cannot move inside itself"), "{err}");
}

/// Bug 5: only an entity's `prefab` field includes a unit; a unit naming itself in a
/// generic field is no cycle.
#[test]
fn only_prefab_fields_make_prefab_cycles() {
    let tmp = project(&[
        (
            "units/spawner.unit",
            r#"{"entities": [{"id": "s", "components": {"third_party": {"spawns": "units/spawner.unit"}}}]}"#,
        ),
        (
            "units/a.unit",
            r#"{"entities": [{"id": "x", "prefab": "units/b"}]}"#,
        ),
        (
            "units/b.unit",
            r#"{"entities": [{"id": "y", "prefab": "units/a"}]}"#,
        ),
    ]);
    let (_, out, _) = kiln(&["check"], tmp.path());
    assert!(
        out.contains("prefab cycle: units/a.unit -> units/b.unit -> units/a.unit"),
        "{out}"
    );
    assert!(!out.contains("spawner.unit -> "), "{out}");
    assert_eq!(out.matches("prefab cycle").count(), 1, "{out}");
}

/// Bug 6: JSON output is plain values, never Rust debug strings.
#[test]
fn json_output_has_plain_values() {
    let tmp = project(&[
        ("x.json", "{}"),
        ("meshes/rock.mesh", "{}"),
        ("meshes/rock.json", "{}"),
        ("data.json", r#"{"a": "x", "b": "meshes/rock"}"#),
    ]);
    let (_, out, _) = kiln(&["deps", "--json", "data.json"], tmp.path());
    assert!(!out.contains("Resolved("), "{out}");
    let deps = json(&out);
    assert_eq!(deps["schema"], "kiln-deps/1");
    let refs = deps["references"].as_array().unwrap();
    assert_eq!(refs[0]["target"], "x.json");
    assert_eq!(refs[0]["status"], "resolved");
    assert_eq!(refs[1]["status"], "ambiguous");
    assert_eq!(refs[1]["target"], serde_json::Value::Null);
    assert_eq!(
        refs[1]["candidates"],
        serde_json::json!(["meshes/rock.json", "meshes/rock.mesh"])
    );
}

/// A project declares the fields of a foreign type; its references become typed:
/// resolved by the field's type, checked, and patched like Kiln's own.
#[test]
fn declared_rules_make_foreign_references_typed() {
    let tmp = project(&[
        (
            "kiln.project",
            r#"{"references": {"sunit": {"/components/*/data/mesh_resource": "mesh"}, "*": {"material": "material"}}}"#,
        ),
        ("units/props/barrel.mesh", "{}"),
        ("units/props/barrel.material", "{}"),
        ("units/props/barrel.lua", "return {}"),
        (
            "units/props/barrel.sunit",
            r#"{"components": {"c1": {"data": {"mesh_resource": "units/props/barrel", "material": "units/props/barrel"}}}}"#,
        ),
        (
            "units/props/crate.sunit",
            r#"{"components": {"c1": {"data": {"mesh_resource": "units/props/gone"}}}}"#,
        ),
    ]);
    let dir = tmp.path();
    let (code, out, _) = kiln(&["check"], dir);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("ambiguous"), "{out}");
    assert!(
        out.contains("units/props/crate.sunit:1:50 (/components/c1/data/mesh_resource): missing: units/props/gone.mesh does not exist"),
        "{out}"
    );
    let (_, out, _) = kiln(&["refs", "units/props/barrel.mesh"], dir);
    assert!(
        out.contains("1 references to units/props/barrel.mesh"),
        "{out}"
    );
    let (code, out, err) = kiln(
        &["mv", "units/props/barrel.mesh", "meshes/barrel.mesh"],
        dir,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        read(dir, "units/props/barrel.sunit"),
        r#"{"components": {"c1": {"data": {"mesh_resource": "meshes/barrel", "material": "units/props/barrel"}}}}"#
    );
    // A typed reference's type may not change under it.
    let (code, _, err) = kiln(&["mv", "meshes/barrel.mesh", "meshes/barrel.json"], dir);
    assert_eq!(code, 2);
    assert!(err.contains("changes its type"), "{err}");
}

/// Ambiguous references: patched when every candidate moves together, listed as
/// "not patched, ambiguous" otherwise, and mentioned by `refs`.
#[test]
fn ambiguous_references_in_moves_and_refs() {
    let tmp = project(&[
        ("props/barrel.unit", r#"{"entities": []}"#),
        ("props/barrel.material", "{}"),
        ("props/barrel.lua", "return {}"),
        ("list.json", r#"["props/barrel"]"#),
    ]);
    let dir = tmp.path();
    let (_, out, _) = kiln(&["refs", "props/barrel.lua"], dir);
    assert!(out.contains("0 references to props/barrel.lua"), "{out}");
    assert!(
        out.contains("1 ambiguous references may mean props/barrel.lua"),
        "{out}"
    );

    let (code, out, _) = kiln(
        &["mv", "--dry-run", "props/barrel.lua", "scripts/barrel.lua"],
        dir,
    );
    assert_eq!(code, 0);
    assert!(
        out.contains("not patched, ambiguous: list.json:1:2 (/0): \"props/barrel\" could be props/barrel.lua or props/barrel.material or props/barrel.unit"),
        "{out}"
    );
    let (_, out, _) = kiln(
        &[
            "mv",
            "--dry-run",
            "--json",
            "props/barrel.lua",
            "scripts/barrel.lua",
        ],
        dir,
    );
    assert_eq!(json(&out)["skipped"][0]["reason"], "ambiguous");

    // Every candidate moves with the folder: nothing is left to be ambiguous about.
    let (code, out, err) = kiln(&["mv", "props", "art/props"], dir);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(read(dir, "list.json"), r#"["art/props/barrel"]"#);

    // A move that makes a unique reference ambiguous says so.
    write(
        dir,
        &[
            ("one/rock.json", "{}"),
            ("uses.json", r#"["one/rock"]"#),
            ("two/rock.mesh", "{}"),
        ],
    );
    let (_, out, _) = kiln(&["mv", "--dry-run", "two/rock.mesh", "one/rock.mesh"], dir);
    assert!(
        out.contains("not patched, becomes ambiguous: uses.json:1:2 (/0): \"one/rock\" could then be one/rock.json or one/rock.mesh"),
        "{out}"
    );
}

/// A third-party JSON file that does not parse is a warning with its place; other
/// files that are not JSON (scripts, sounds) are not.
#[test]
fn broken_third_party_json_is_a_warning() {
    let tmp = project(&[
        ("tools/settings.json", "{\n  \"a\": [1,]\n}"),
        ("scripts/main.lua", "print('hi')"),
        ("sounds/boom.wav", "RIFF\u{0}\u{1}"),
    ]);
    let (code, out, _) = kiln(&["check"], tmp.path());
    assert_eq!(code, 0, "a warning alone passes: {out}");
    assert!(
        out.contains(
            "warning: tools/settings.json:2:11: not valid JSON, so its references cannot be seen"
        ),
        "{out}"
    );
    assert!(
        !out.contains("main.lua") && !out.contains("boom.wav"),
        "{out}"
    );
    let (code, _, _) = kiln(&["check", "--deny-warnings"], tmp.path());
    assert_eq!(code, 1);
}

/// "Unused" needs roots: a bare `{}` project has no notion of it.
#[test]
fn unused_is_reported_only_when_the_project_declares_boot_levels() {
    let tmp = project(&[
        ("levels/a.level", r#"{"entities": []}"#),
        ("materials/m.material", "{}"),
    ]);
    let (code, out, _) = kiln(&["check"], tmp.path());
    assert_eq!(
        (code, out.as_str()),
        (0, "0 findings (0 errors, 0 warnings) in 3 files\n")
    );
    write(
        tmp.path(),
        &[("kiln.project", r#"{"boot_levels": ["levels/a"]}"#)],
    );
    let (code, out, _) = kiln(&["check"], tmp.path());
    assert_eq!(code, 0, "unused is a warning: {out}");
    assert!(
        out.contains("warning: materials/m.material: unused"),
        "{out}"
    );
}

/// Exit codes CI can use: 0 without errors, 1 with errors, 2 when the check could
/// not run.
#[test]
fn check_exit_codes() {
    let tmp = project(&[("m.material", r#"{"texture": "missing"}"#)]);
    assert_eq!(kiln(&["check"], tmp.path()).0, 1);
    let (code, _, err) = kiln(&["check", "--project", "does/not/exist"], tmp.path());
    assert_eq!(code, 2, "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = kiln(&["check"], empty.path());
    assert_eq!(code, 2);
    assert!(err.contains("is not a Kiln project"), "{err}");
}

/// `kiln refs X | head` ends quietly when head stops reading.
#[test]
fn a_closed_pipe_ends_quietly() {
    let lines: String = (0..20_000)
        .map(|i| format!("\"t.png\", \"pad{i}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let tmp = project(&[("t.png", "PNG"), ("big.json", &format!("[{lines}]"))]);
    let mut child = support::kiln_command()
        .args(["refs", "t.png"])
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then hang up, as `head -1` does.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(out.status.code(), Some(0));
}

/// `kiln mv FILE .` moves it to the project root, as `mv` does.
#[test]
fn a_dot_is_the_project_root() {
    let tmp = project(&[("deep/a.json", "{}"), ("b.json", r#"["deep/a.json"]"#)]);
    let (code, out, err) = kiln(&["mv", "deep/a.json", "."], tmp.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(tmp.path().join("a.json").is_file());
    assert_eq!(read(tmp.path(), "b.json"), r#"["a.json"]"#);
}

/// Holds the project lock exclusively, as a `kiln mv` applying in another process.
fn hold_lock(dir: &Path) -> fs::File {
    fs::create_dir_all(dir.join(".kiln")).unwrap();
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".kiln/lock"))
        .unwrap();
    // What Kiln's project lock takes (`flock` on Linux).
    lock.lock().unwrap();
    lock
}

/// A command started while a move is applying waits for it, and never rolls back
/// the other process's live journal.
#[test]
fn commands_wait_for_a_move_in_progress_and_leave_its_journal_alone() {
    let tmp = project(&[("a.png", "PNG"), ("uses.json", r#"["b.png"]"#)]);
    let dir = tmp.path();
    let lock = hold_lock(dir);
    // The other process has renamed a.png to b.png and patched uses.json.
    fs::rename(dir.join("a.png"), dir.join("b.png")).unwrap();
    fs::create_dir_all(dir.join(".kiln/journal")).unwrap();
    fs::write(dir.join(".kiln/journal/backups.bin"), r#"["a.png"]"#).unwrap();
    fs::write(
        dir.join(".kiln/journal/journal.json"),
        r#"{"renames": [["a.png", "b.png"]], "patched": [["uses.json", [0, 9]]]}"#,
    )
    .unwrap();
    let child = support::kiln_command()
        .args(["check"])
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(dir.join("b.png").is_file(), "the live move was rolled back");
    // The other process finishes: its journal goes, then its lock.
    fs::remove_dir_all(dir.join(".kiln/journal")).unwrap();
    drop(lock);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("waiting for another Kiln operation"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(dir.join("b.png").is_file() && !dir.join("a.png").exists());
    assert_eq!(read(dir, "uses.json"), r#"["b.png"]"#);
}

/// Two `kiln mv` at once, both patching one file: one waits for the other, plans
/// again if the other changed what it planned from, and both moves land.
#[test]
fn two_moves_at_once_both_land() {
    for _ in 0..3 {
        let tmp = demo_copy();
        let dir = tmp.path();
        assert_eq!(kiln(&["check"], dir).0, 0);
        let spawn = |old: &str, new: &str| {
            support::kiln_command()
                .args(["mv", old, new])
                .current_dir(dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let a = spawn("materials/bark.material", "materials/oak.material");
        let b = spawn("materials/leaves.material", "materials/foliage.material");
        for child in [a, b] {
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let tree = read(dir, "units/tree.unit");
        assert!(tree.contains("\"materials/oak\""), "{tree}");
        assert!(tree.contains("\"materials/foliage\""), "{tree}");
        let (code, out, _) = kiln(&["check"], dir);
        assert_eq!(code, 0, "{out}");
    }
}

/// Links planted at Kiln's own folders cannot carry its writes outside the project:
/// `build/` for compiled blobs, `.kiln/` for the cache; moving onto a dangling link
/// is refused like any existing target.
#[test]
fn links_at_kilns_own_folders_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let tmp = demo_copy();
    let dir = tmp.path();
    kiln_core::os::symlink(outside.path(), dir.join("build")).unwrap();
    let (code, out, err) = kiln(&["compile"], dir);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    fs::remove_file(dir.join("build")).unwrap();

    fs::remove_dir_all(dir.join(".kiln")).ok();
    kiln_core::os::symlink(outside.path(), dir.join(".kiln")).unwrap();
    // A cache planted outside is never read, nor is anything written there.
    fs::write(outside.path().join("index.bin"), "planted").unwrap();
    let (code, out, _) = kiln(&["check"], dir);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(".kiln: is a symbolic link; Kiln never reads or writes through links"),
        "{out}"
    );
    let (code, _, err) = kiln(&["mv", "textures/bark.png", "textures/oak.png"], dir);
    assert_eq!(code, 2);
    assert!(err.contains(".kiln: is a symbolic link"), "{err}");
    assert!(dir.join("textures/bark.png").is_file());
    let names: Vec<_> = fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["index.bin"]);
    assert_eq!(
        fs::read_to_string(outside.path().join("index.bin")).unwrap(),
        "planted"
    );
    fs::remove_file(dir.join(".kiln")).unwrap();

    kiln_core::os::symlink(dir.join("nowhere.png"), dir.join("textures/new.png")).unwrap();
    let (code, _, err) = kiln(&["mv", "textures/bark.png", "textures/new.png"], dir);
    assert_eq!(code, 2);
    assert!(err.contains("already exists"), "{err}");
    assert!(dir.join("textures/bark.png").is_file());
}

/// A file where Kiln's own folder should be is set aside, not an error for every
/// command.
#[test]
fn a_file_in_place_of_dot_kiln_is_set_aside() {
    let tmp = demo_copy();
    let dir = tmp.path();
    // Without its plugins, whose builds live in the .kiln this test replaces.
    fs::remove_dir_all(dir.join(".kiln")).unwrap();
    fs::write(dir.join("kiln.project"), r#"{"name": "Demo"}"#).unwrap();
    fs::write(dir.join(".kiln"), "someone's notes").unwrap();
    let (code, out, err) = kiln(
        &["mv", "materials/bark.material", "materials/oak.material"],
        dir,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(dir.join(".kiln").is_dir());
    assert_eq!(
        fs::read_to_string(dir.join(".kiln.not-a-folder")).unwrap(),
        "someone's notes"
    );
    let (code, out, _) = kiln(&["check"], dir);
    // The levels use the plugins' types, which the project no longer lists:
    // `compile` refuses them, and `check` says so.
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("unknown component type"), "{out}");
    assert!(
        out.contains(
            "warning: .kiln.not-a-folder: a file named .kiln stood where Kiln keeps its folder"
        ),
        "{out}"
    );
}

/// A glTF file's buffer and image URIs are references: `refs` and `deps` list them
/// (text and JSON), `mv` patches them as relative, percent-encoded URIs, and
/// `check` reports one that names nothing, with its line and column.
#[test]
fn gltf_uris_show_in_refs_deps_mv_and_check() {
    let gltf = concat!(
        "{\n",
        "  \"buffers\": [{\"uri\": \"tree.bin\"}],\n",
        "  \"images\": [{\"uri\": \"../textures/bark%20wood.png\"}, {\"uri\": \"data:image/png;base64,AAAA\"}]\n",
        "}\n"
    );
    let tmp = project(&[
        ("models/tree.gltf", gltf),
        ("models/tree.bin", "bin"),
        ("textures/bark wood.png", "PNG"),
    ]);
    let dir = tmp.path();
    let (code, out, _) = kiln(&["refs", "textures/bark wood.png"], dir);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("models/tree.gltf:3:22 (/images/0/uri): \"../textures/bark%20wood.png\"\n1 references to textures/bark wood.png"),
        "{out}"
    );
    let (_, out, _) = kiln(&["refs", "--json", "textures/bark wood.png"], dir);
    let r = &json(&out)["references"][0];
    assert_eq!(
        (&r["file"], &r["line"], &r["column"], &r["pointer"]),
        (
            &serde_json::json!("models/tree.gltf"),
            &serde_json::json!(3),
            &serde_json::json!(22),
            &serde_json::json!("/images/0/uri")
        )
    );
    assert_eq!(
        (&r["text"], &r["type"], &r["status"], &r["target"]),
        (
            &serde_json::json!("../textures/bark%20wood.png"),
            &serde_json::json!(null),
            &serde_json::json!("resolved"),
            &serde_json::json!("textures/bark wood.png")
        )
    );
    let (code, out, _) = kiln(&["deps", "models/tree.gltf"], dir);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "models/tree.gltf:2:23 (/buffers/0/uri) -> models/tree.bin\n\
         models/tree.gltf:3:22 (/images/0/uri) -> textures/bark wood.png\n\
         models/tree.gltf references 2 resources\n"
    );
    let (code, out, _) = kiln(&["mv", "textures/bark wood.png", "art/bark.png"], dir);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("patch models/tree.gltf:3:22 (/images/0/uri): \"../textures/bark%20wood.png\" -> \"../art/bark.png\""),
        "{out}"
    );
    assert_eq!(
        read(dir, "models/tree.gltf"),
        gltf.replace("../textures/bark%20wood.png", "../art/bark.png")
    );
    fs::remove_file(dir.join("models/tree.bin")).unwrap();
    let (code, out, _) = kiln(&["check"], dir);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "error: models/tree.gltf:2:23 (/buffers/0/uri): missing: models/tree.bin does not exist"
        ),
        "{out}"
    );
}
