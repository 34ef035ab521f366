//! A project someone crafted to make Kiln write outside it or hang: links planted
//! where Kiln creates files, journals naming links, FIFOs and devices where Kiln
//! reads. A sentinel folder outside the project must come out of every command
//! byte for byte as it went in, and every command must end within a bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(unix)]

mod support;

use kiln_core::os::symlink;
use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A folder outside the project, with a file in it, and its content now.
struct Sentinel {
    dir: tempfile::TempDir,
    before: Vec<(String, Vec<u8>)>,
}

impl Sentinel {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("precious.txt"), "do not touch\n").unwrap();
        let before = support::snapshot(dir.path());
        Sentinel { dir, before }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn untouched(&self, what: &str) {
        assert_eq!(
            support::snapshot(self.dir.path()),
            self.before,
            "{what} wrote outside the project"
        );
    }
}

/// Runs `kiln ARGS` in `dir`, killing it if it takes longer than `limit`;
/// returns its exit code and output.
fn bounded(args: &[&str], dir: &Path, limit: Duration) -> (i32, String) {
    let mut child = support::kiln_command()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            return (status.code().unwrap_or(-1), text);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("kiln {args:?} took longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const LIMIT: Duration = Duration::from_secs(60);

/// A dangling link where Kiln writes `.kiln/.gitignore`: check never creates the
/// file it leads to.
#[test]
fn a_dangling_link_at_kilns_gitignore_is_not_followed() {
    let sentinel = Sentinel::new();
    let dir = support::demo_copy();
    fs::create_dir_all(dir.path().join(".kiln")).unwrap();
    symlink(
        sentinel.path("made.txt"),
        dir.path().join(".kiln/.gitignore"),
    )
    .unwrap();
    let (code, out) = bounded(&["check"], dir.path(), LIMIT);
    assert!(code <= 1, "{out}");
    sentinel.untouched("check");
}

/// Links planted at the record of which levels compile (`.kiln/compiles.bin`),
/// one to a file outside and one dangling, and at its temporary name: check
/// reads neither, writes through neither, and still reports what compile
/// refuses.
#[test]
fn links_at_the_compile_record_are_never_read_or_written_through() {
    let sentinel = Sentinel::new();
    let dir = support::demo_copy();
    fs::create_dir_all(dir.path().join(".kiln")).unwrap();
    fs::write(
        dir.path().join("levels/cycle.level"),
        r#"{"entities": [{"id": "a", "parent": "b"}, {"id": "b", "parent": "a"}]}"#,
    )
    .unwrap();
    for (link, target) in [
        ("compiles.bin", "precious.txt"),
        (".compiles.bin.1.kiln-tmp", "made.bin"),
    ] {
        symlink(sentinel.path(target), dir.path().join(".kiln").join(link)).unwrap();
    }
    let (code, out) = bounded(&["check"], dir.path(), LIMIT);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("parent cycle"), "{out}");
    sentinel.untouched("check");
    // The record is Kiln's own file now, and the next check reads it.
    let record = fs::symlink_metadata(dir.path().join(".kiln/compiles.bin")).unwrap();
    assert!(record.is_file());
    let (code, out) = bounded(&["check"], dir.path(), LIMIT);
    assert!(code == 1 && out.contains("parent cycle"), "{out}");
    sentinel.untouched("a second check");
}

/// A crafted journal whose process id names temporary files where links to the
/// sentinel were planted: recovery writes its own temporary files, never through
/// them, and the level stays a file.
#[test]
fn recovery_never_writes_through_a_link_at_the_journals_temporary_names() {
    let sentinel = Sentinel::new();
    let dir = support::demo_copy();
    let journal = dir.path().join(".kiln/journal");
    fs::create_dir_all(&journal).unwrap();
    fs::write(journal.join("backups.bin"), "{\"entities\": []}\n").unwrap();
    fs::write(
        journal.join("journal.json"),
        r#"{"renames": [], "patched": [["levels/forest.level", [0, 17]]], "pid": 4242}"#,
    )
    .unwrap();
    for pid in [4242, 1, 2] {
        symlink(
            sentinel.path("precious.txt"),
            dir.path()
                .join(format!("levels/.forest.level.{pid}.kiln-tmp")),
        )
        .unwrap();
    }
    let (code, out) = bounded(&["check"], dir.path(), LIMIT);
    assert!(code <= 1, "{out}");
    sentinel.untouched("recovery");
    let level = dir.path().join("levels/forest.level");
    assert!(fs::symlink_metadata(&level).unwrap().is_file());
    assert_eq!(fs::read_to_string(level).unwrap(), "{\"entities\": []}\n");
}

/// A journal naming a path through a dangling folder link is set aside, and the
/// project stays usable: the next command does not fail on it again.
#[test]
fn a_journal_through_a_dangling_folder_link_is_set_aside_once() {
    let sentinel = Sentinel::new();
    let dir = support::demo_copy();
    symlink(sentinel.path("not-there"), dir.path().join("gone")).unwrap();
    let journal = dir.path().join(".kiln/journal");
    fs::create_dir_all(&journal).unwrap();
    fs::write(journal.join("backups.bin"), "abc").unwrap();
    fs::write(
        journal.join("journal.json"),
        r#"{"renames": [["gone/a.level", "levels/a.level"]], "patched": [["gone/b.level", [0, 3]]], "pid": 1}"#,
    )
    .unwrap();
    let (first, out) = bounded(&["check"], dir.path(), LIMIT);
    assert!(first <= 1, "{out}");
    assert!(out.contains("set aside"), "{out}");
    let (code, out) = bounded(&["compile"], dir.path(), LIMIT);
    assert_eq!(code, 0, "{out}");
    sentinel.untouched("recovery");
}

/// FIFOs and links to devices where Kiln reads (the project file, the plugin
/// header it keeps): every command ends, with an error naming the file where it
/// cannot go on, and reads no device.
#[test]
fn fifos_and_devices_where_kiln_reads_never_hang_it() {
    let sentinel = Sentinel::new();
    // The project file a FIFO, then a link to /dev/zero.
    for plant in ["fifo", "zero"] {
        let dir = support::demo_copy();
        let project = dir.path().join("kiln.project");
        fs::remove_file(&project).unwrap();
        match plant {
            "fifo" => {
                kiln_core::os::make_fifo(&project).unwrap();
            }
            _ => symlink("/dev/zero", &project).unwrap(),
        }
        for args in [&["check"][..], &["compile"], &["mv", "a", "b"]] {
            let (code, out) = bounded(args, dir.path(), Duration::from_secs(20));
            assert_eq!(code, 2, "{plant} {args:?}: {out}");
            assert!(out.contains("kiln.project"), "{plant} {args:?}: {out}");
        }
    }
    // The C header Kiln writes for plugins a FIFO: replaced, never read.
    let dir = support::demo_copy();
    let include = dir.path().join(".kiln/plugins/include");
    fs::create_dir_all(&include).unwrap();
    kiln_core::os::make_fifo(&include.join("kiln_plugin.h")).unwrap();
    // A changed source: the C plugin is built again, against the header.
    let source = dir.path().join("plugins/blink/blink.c");
    let mut text = fs::read_to_string(&source).unwrap();
    text.push_str("\n/* changed */\n");
    fs::write(&source, text).unwrap();
    let (code, out) = bounded(&["check"], dir.path(), Duration::from_secs(300));
    assert!(code <= 1, "{out}");
    assert!(out.contains("built plugin plugins/blink"), "{out}");
    let header = fs::symlink_metadata(include.join("kiln_plugin.h")).unwrap();
    assert!(header.is_file());
    sentinel.untouched("commands");
}

/// A hard link planted at `.kiln/lock` (Kiln writes the project's generation
/// into the lock file): a move refuses, naming the file, and writes nothing into
/// the file it is linked to.
#[test]
fn a_hard_link_at_the_lock_file_is_never_written() {
    let sentinel = Sentinel::new();
    let dir = support::demo_copy();
    fs::create_dir_all(dir.path().join(".kiln")).unwrap();
    let _ = fs::remove_file(dir.path().join(".kiln/lock"));
    fs::hard_link(sentinel.path("precious.txt"), dir.path().join(".kiln/lock")).unwrap();
    let (code, out) = bounded(
        &[
            "mv",
            "materials/bark.material",
            "materials/oak_bark.material",
        ],
        dir.path(),
        LIMIT,
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(".kiln/lock"), "{out}");
    assert!(dir.path().join("materials/bark.material").exists());
    sentinel.untouched("mv");
}

/// Without a settings folder (no `HOME`, no `XDG_CONFIG_HOME`), there is no key
/// to sign caches with: a cache is never trusted, so a file changed behind the
/// cache's back (same size, same time) is read again, and its missing
/// reference found.
#[test]
fn without_a_settings_folder_no_cache_is_trusted() {
    let dir = support::demo_copy();
    let root = dir.path();
    let level = root.join("levels/forest.level");
    let before = fs::read_to_string(&level).unwrap();
    assert!(before.contains("\"materials/grass\""));
    // Long ago: a file changed within moments of its cache is read again anyway.
    let long_ago = std::time::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    let age = || {
        fs::File::options()
            .write(true)
            .open(&level)
            .unwrap()
            .set_modified(long_ago)
            .unwrap()
    };
    age();
    let check = || {
        support::kiln_command()
            .args(["check"])
            .current_dir(root)
            .env_remove("HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("KILN_CONFIG_DIR")
            .env("KILN_SERVER", "off")
            .output()
            .unwrap()
    };
    assert_eq!(check().status.code(), Some(0));
    // The same size and time: a cache trusted would say nothing changed (as the
    // public default key made any cache trusted).
    fs::write(
        &level,
        before.replace("\"materials/grass\"", "\"materials/grasz\""),
    )
    .unwrap();
    age();
    let out = check();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("materials/grasz"), "{said}");
}

/// `kiln merge` and `kiln diff` given a FIFO, a device or a folder (by mistake,
/// or by a script) end at once with an error naming it, instead of waiting for
/// ever; `/dev/null`, which git gives for a file one side lacks, is empty.
#[test]
fn merge_and_diff_refuse_what_is_not_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.level");
    fs::write(&file, "{\"entities\":[]}").unwrap();
    let fifo = dir.path().join("fifo.level");
    kiln_core::os::make_fifo(&fifo).unwrap();
    let (f, a) = (fifo.to_str().unwrap(), file.to_str().unwrap());
    let folder = dir.path().to_str().unwrap();
    for args in [
        ["merge", f, a, a],
        ["merge", a, a, f],
        ["merge", a, "/dev/zero", a],
        ["merge", a, folder, a],
    ]
    .iter()
    .map(|a| a.to_vec())
    .chain([vec!["diff", f, a], vec!["diff", a, "/dev/zero"]])
    {
        let (code, out) = bounded(&args, dir.path(), Duration::from_secs(20));
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(out.contains("not a regular file"), "{args:?}: {out}");
    }
    let (code, out) = bounded(&["diff", "/dev/null", a], dir.path(), LIMIT);
    assert!(code == 1 || code == 0, "{out}");
}

/// A journal whose entry goes through a link is rolled back but for that entry,
/// and kept aside; `kiln recover` shows what applying it would do, applies it once
/// the path is the project's again, and discards another.
#[test]
fn kiln_recover_shows_applies_and_discards_a_set_aside_journal() {
    let listed = |out: &str| {
        out.lines()
            .find_map(|l| {
                l.split(':')
                    .next()
                    .filter(|f| f.starts_with(".kiln/journal.rejected-"))
            })
            .unwrap()
            .to_owned()
    };
    let sentinel = Sentinel::new();
    let dir = support::demo_copy();
    let root = dir.path();
    let plant = |backup: &str| {
        symlink(sentinel.dir.path(), root.join("b")).unwrap();
        let journal = root.join(".kiln/journal");
        fs::create_dir_all(&journal).unwrap();
        fs::write(journal.join("backups.bin"), backup).unwrap();
        fs::write(
            journal.join("journal.json"),
            r#"{"renames": [], "patched": [["b/precious.txt", [0, 5]]], "pid": 1}"#,
        )
        .unwrap();
        let (code, out) = bounded(&["check"], root, LIMIT);
        assert!(code <= 1, "{out}");
        assert!(out.contains("kiln recover"), "{out}");
        sentinel.untouched("recovery");
        fs::remove_file(root.join("b")).unwrap();
    };
    plant("ORIGI");
    let (code, out) = bounded(&["recover"], root, LIMIT);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cannot reach    b/precious.txt"), "{out}");
    // The path is the project's again: a real folder with the file in it.
    fs::create_dir(root.join("b")).unwrap();
    fs::write(root.join("b/precious.txt"), "WRONG").unwrap();
    let (code, out) = bounded(&["recover"], root, LIMIT);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("would restore   b/precious.txt"), "{out}");
    let folder = listed(&out);
    let (code, out) = bounded(&["recover", "--apply", &folder], root, LIMIT);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("restored  b/precious.txt"), "{out}");
    assert_eq!(
        fs::read_to_string(root.join("b/precious.txt")).unwrap(),
        "ORIGI"
    );
    let (code, out) = bounded(&["recover"], root, LIMIT);
    assert_eq!(code, 0, "{out}");
    // Another, discarded: the files stay as they are.
    fs::remove_dir_all(root.join("b")).unwrap();
    plant("OTHER");
    let (_, out) = bounded(&["recover"], root, LIMIT);
    let folder = listed(&out);
    let (code, out) = bounded(&["recover", "--discard", &folder], root, LIMIT);
    assert_eq!(code, 0, "{out}");
    assert!(!root.join(&folder).exists());
    let (code, out) = bounded(&["recover", "--discard", "../../etc"], root, LIMIT);
    assert_eq!(code, 2, "{out}");
    sentinel.untouched("recover");
}
