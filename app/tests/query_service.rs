//! Queries answered by a running `kiln watch` (the real binaries): the same output
//! as a command working alone, changes made just before a question seen in its
//! answer, moves done by the server, and sockets that are not to be trusted.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::{Duration, Instant};

use kiln::editor::command_server::CommandServer;
use kiln::editor::{Action, UiCommand};
use support::watch::Watch;

/// `kiln watch --out TEMP` in `dir`, with the lines it printed until it watched.
fn start_watch(dir: &Path) -> (Watch, Vec<String>) {
    let out = tempfile::tempdir().unwrap().keep();
    Watch::start_with(dir, &["--out".as_ref(), out.as_os_str()])
}

/// Runs `kiln ARGS` in `dir` with `KILN_SERVER=mode`: exit code, stdout, stderr.
fn kiln(mode: &str, args: &[&str], dir: &Path) -> (i32, String, String) {
    support::kiln_with_env(args, dir, &[("KILN_SERVER", mode)])
}

/// A small project: a level using a unit, materials and textures, one broken
/// reference and one ambiguous one.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("kiln.project", r#"{"boot_levels": ["levels/a"]}"#),
        (
            "levels/a.level",
            r#"{"entities": [
  {"id": "tree", "prefab": "units/tree", "components": {"transform": {}}},
  {"id": "rock", "components": {"transform": {}, "mesh": {"mesh": "meshes/rock", "material": "materials/stone"}}},
  {"id": "lost", "components": {"mesh": {"mesh": "meshes/gone", "material": "materials/bark"}}}
]}"#,
        ),
        (
            "units/tree.unit",
            r#"{"entities": [{"id": "trunk", "components": {"mesh": {"mesh": "meshes/rock", "material": "materials/bark"}}}]}"#,
        ),
        ("meshes/rock.mesh", r#"{"shape": "sphere"}"#),
        ("materials/bark.material", r#"{"texture": "textures/bark"}"#),
        (
            "materials/stone.material",
            r#"{"texture": "textures/stone"}"#,
        ),
        ("textures/bark.png", "png"),
        ("textures/stone.png", "png"),
        ("textures/stone.jpg", "jpg"),
        ("notes/readme.json", r#"{"see": "textures/stone"}"#),
    ];
    for (path, text) in files {
        let full = dir.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    dir
}

/// The questions compared between a served answer and one worked alone.
const QUESTIONS: &[&[&str]] = &[
    &["check"],
    &["check", "--json"],
    &["check", "--deny-warnings"],
    &["refs", "materials/bark.material"],
    &["refs", "--json", "textures/stone.png"],
    &["refs", "textures"],
    &["deps", "levels/a.level"],
    &["deps", "--json", "units/tree.unit"],
    &["refs", "nothing/here.png"],
    &[
        "mv",
        "--dry-run",
        "materials/bark.material",
        "materials/wood.material",
    ],
];

fn assert_served_matches_alone(dir: &Path, when: &str) {
    for args in QUESTIONS {
        let served = kiln("require", args, dir);
        let alone = kiln("off", args, dir);
        assert_eq!(served, alone, "{when}: kiln {args:?}");
    }
}

#[test]
fn served_answers_are_the_answers_worked_alone_and_see_changes_made_just_before() {
    let dir = project();
    let root = dir.path();
    let (mut watch, started) = start_watch(root);
    assert!(
        started
            .iter()
            .any(|l| l.starts_with("answering kiln check")),
        "{started:?}"
    );
    assert_served_matches_alone(root, "at start");

    // Each question is asked right after a change: the answer must include it
    // (the sync cookie), however quickly it was asked.
    for i in 0..8 {
        let name = format!("materials/new{i}.material");
        fs::write(root.join(&name), r#"{"texture": "textures/bark"}"#).unwrap();
        let asked = Instant::now();
        let (code, out, err) = kiln("require", &["refs", "textures/bark.png"], root);
        // Well under the 2 s after which a server stops waiting for its cookie
        // and re-walks the project instead.
        assert!(
            asked.elapsed() < Duration::from_millis(1500),
            "round {i}: slow"
        );
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&format!("{name}:")), "round {i}: {out}");
        assert!(
            out.contains(&format!("{} references to textures/bark.png", i + 2)),
            "round {i}: {out}"
        );
    }
    fs::remove_file(root.join("materials/new3.material")).unwrap();
    let (_, out, _) = kiln("require", &["refs", "textures/bark.png"], root);
    assert!(!out.contains("new3"), "{out}");
    assert_served_matches_alone(root, "after changes");

    // A move done by the server: files move and references are patched, as alone.
    let (code, out, err) = kiln(
        "require",
        &["mv", "materials/bark.material", "materials/wood.material"],
        root,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("moved 1 files and patched 2 references in 2 files"),
        "{out}"
    );
    assert!(root.join("materials/wood.material").is_file());
    assert!(
        fs::read_to_string(root.join("units/tree.unit"))
            .unwrap()
            .contains("\"materials/wood\"")
    );
    // The move's own writes reach the watcher as nothing new (its index already
    // holds them): the level they reach is rebuilt all the same.
    watch.until(|l| l.starts_with("built levels/a.level") && l.contains("materials/wood"));
    assert_served_matches_alone(root, "after a served move");

    // An error is reported as alone, with the same status.
    let served = kiln(
        "require",
        &["mv", "materials/none.material", "x.material"],
        root,
    );
    assert_eq!(
        served,
        kiln(
            "off",
            &["mv", "materials/none.material", "x.material"],
            root
        )
    );
    assert_eq!(served.0, 2, "{served:?}");

    // Killed without a chance to clean up: its socket stays, nobody listens. Commands
    // work alone; `require` says no server answered; a new watch takes over.
    watch.child.kill().unwrap();
    watch.child.wait().unwrap();
    assert!(root.join(".kiln/query.sock").exists());
    let (code, out, _) = kiln("auto", &["refs", "materials/wood.material"], root);
    assert_eq!(code, 0);
    assert!(out.contains("2 references"), "{out}");
    let (code, _, err) = kiln("require", &["refs", "materials/wood.material"], root);
    assert_eq!(code, 2);
    assert!(err.contains("no running kiln watch answered"), "{err}");
    drop(watch);
    let (_watch, started) = start_watch(root);
    assert!(
        started
            .iter()
            .any(|l| l.starts_with("answering kiln check")),
        "{started:?}"
    );
    assert_served_matches_alone(root, "after a new watch took over");
}

#[test]
fn a_second_watch_does_not_take_the_first_ones_socket() {
    let dir = project();
    let (_first, _) = start_watch(dir.path());
    let (_second, started) = start_watch(dir.path());
    assert!(
        started
            .iter()
            .any(|l| l.contains("another kiln watch already answers")),
        "{started:?}"
    );
    let (code, out, err) = kiln("require", &["refs", "textures/stone.png"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 references to textures/stone.png"), "{out}");
}

#[test]
fn a_planted_link_or_file_in_place_of_the_socket_is_never_asked() {
    let dir = project();
    let root = dir.path();
    fs::create_dir_all(root.join(".kiln")).unwrap();
    // Someone else's server, reached through a link planted in .kiln.
    let elsewhere = tempfile::tempdir().unwrap();
    let hostile = UnixListener::bind(elsewhere.path().join("evil.sock")).unwrap();
    hostile.set_nonblocking(true).unwrap();
    kiln_core::os::symlink(
        elsewhere.path().join("evil.sock"),
        root.join(".kiln/query.sock"),
    )
    .unwrap();
    let (code, out, err) = kiln("auto", &["refs", "materials/bark.material"], root);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 references"), "{out}");
    assert!(hostile.accept().is_err(), "the planted link was followed");
    // A watch started there refuses to replace it, and still watches.
    let (_watch, started) = start_watch(root);
    assert!(
        started.iter().any(|l| l.contains("not answering queries")),
        "{started:?}"
    );
    assert!(
        fs::symlink_metadata(root.join(".kiln/query.sock"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(hostile.accept().is_err(), "the planted link was followed");

    // A plain file there: same, and the file is left alone.
    let other = project();
    fs::create_dir_all(other.path().join(".kiln")).unwrap();
    fs::write(other.path().join(".kiln/query.sock"), "mine").unwrap();
    let (code, out, _) = kiln("auto", &["refs", "materials/bark.material"], other.path());
    assert_eq!(code, 0);
    assert!(out.contains("2 references"), "{out}");
    let (_watch, started) = start_watch(other.path());
    assert!(
        started.iter().any(|l| l.contains("is not a socket")),
        "{started:?}"
    );
    assert_eq!(
        fs::read_to_string(other.path().join(".kiln/query.sock")).unwrap(),
        "mine"
    );
}

#[test]
fn an_open_editor_answers_too_and_sees_its_own_watchers_changes() {
    let dir = project();
    let root = dir.path();
    let mut editor = support::open_editor(root).unwrap();
    // The server is held beside the editor, as the window holds it.
    let mut server = CommandServer::start(&editor).unwrap();
    // The editor answers from its frame loop: run frames while a command waits.
    let mut ask = |args: &[&str]| support::ask_open_editor(&mut editor, &mut server, root, args);
    for args in QUESTIONS {
        assert_eq!(ask(args), kiln("off", args, root), "kiln {args:?}");
    }
    fs::write(
        root.join("materials/late.material"),
        r#"{"texture": "textures/stone"}"#,
    )
    .unwrap();
    let (code, out, err) = ask(&["refs", "textures/stone.png"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("materials/late.material:"), "{out}");
    // A move the editor makes for a command: its problems follow, though the
    // move's writes reach its watcher as nothing new.
    let fresh = || {
        let registry = std::sync::Arc::new(kiln_core::Registry::with_builtins());
        let checker = dependency_checker::Checker::open(root, registry, &Default::default());
        checker.unwrap().findings()
    };
    let before = fresh();
    let files_before = support::snapshot(root);
    let (code, _, err) = ask(&["mv", "textures/stone.jpg", "textures/other.jpg"]);
    assert_eq!(code, 0, "{err}");
    for _ in 0..5 {
        editor.tick(0.0, Duration::from_secs(3));
        server.serve(&mut editor).unwrap();
    }
    let after = fresh();
    assert_ne!(after, before, "the move changed no finding");
    assert_eq!(editor.files().findings(), &after[..]);
    // The served move is a step of the editor's history, as its own moves are:
    // undoing it puts every file back.
    assert_eq!(
        editor.history().undo_label().as_deref(),
        Some("move textures/stone.jpg to textures/other.jpg")
    );
    editor.apply(Action::Run(UiCommand::Undo));
    assert_eq!(support::snapshot(root), files_before);
    assert_eq!(editor.files().findings(), &before[..]);
    drop(server);
    assert!(
        !root.join(".kiln/query.sock").exists(),
        "a closed editor leaves no socket"
    );
}

#[test]
fn a_question_an_editor_does_not_take_up_is_declined_and_worked_alone_once() {
    let dir = project();
    let root = dir.path();
    // An editor whose frame loop is held: never ticked while the commands run.
    let mut editor = support::open_editor(root).unwrap();
    let mut server = CommandServer::start(&editor).unwrap();
    let asked = Instant::now();
    let (code, _, err) = kiln("require", &["refs", "textures/bark.png"], root);
    assert_eq!(code, 2);
    assert!(err.contains("too busy to answer"), "{err}");
    assert!(asked.elapsed() < Duration::from_secs(10));
    let (code, out, err) = kiln(
        "auto",
        &["mv", "materials/bark.material", "materials/wood.material"],
        root,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("patched 2 references"), "{out}");
    let after = support::snapshot(root);
    // Frames resume: the given-up questions are not answered after all (the move
    // is not done a second time, nothing else changes).
    for _ in 0..40 {
        editor.tick(0.0, Duration::from_secs(3));
        server.serve(&mut editor).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(support::snapshot(root), after);
    assert!(root.join("materials/wood.material").is_file());
    assert!(!root.join("materials/bark.material").exists());
}

#[test]
fn watch_no_build_answers_and_writes_no_build_output() {
    let dir = project();
    let root = dir.path();
    let (_watch, started) = Watch::start_with(root, &["--no-build".as_ref()]);
    assert!(
        started.iter().all(|l| !l.starts_with("built")),
        "{started:?}"
    );
    assert_served_matches_alone(root, "kiln watch --no-build");
    fs::write(
        root.join("levels/b.level"),
        r#"{"entities": [{"id": "x", "components": {"mesh": {"material": "materials/bark"}}}]}"#,
    )
    .unwrap();
    let (code, out, err) = kiln("require", &["refs", "materials/bark.material"], root);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("levels/b.level:"), "{out}");
    assert!(!root.join("build").exists());
}

#[test]
fn a_garbled_question_is_refused_and_the_server_keeps_answering() {
    use std::io::{Read, Write};
    let dir = project();
    let root = dir.path();
    let (_watch, _) = start_watch(root);
    for garbage in [
        &b"garbage\n"[..],
        &[0xff; 3000][..],
        &b"{\"kiln_query\": 99}\n"[..],
    ] {
        let mut s = kiln_core::os::LocalStream::connect(root.join(".kiln/query.sock")).unwrap();
        s.write_all(garbage).unwrap();
        s.finish_writing().unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        assert!(reply.contains("\"status\":2"), "{reply}");
    }
    // A client that connects and says nothing holds nothing up.
    let _silent = kiln_core::os::LocalStream::connect(root.join(".kiln/query.sock")).unwrap();
    assert_served_matches_alone(root, "after garbled questions");
}

#[test]
fn a_server_that_goes_away_without_replying_leaves_the_command_to_work_alone() {
    use std::io::Read;
    let dir = project();
    let root = dir.path();
    fs::create_dir_all(root.join(".kiln")).unwrap();
    // Reads the question, then closes without a word (as a killed server would).
    let listener = UnixListener::bind(root.join(".kiln/query.sock")).unwrap();
    let server = std::thread::spawn(move || {
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            let mut question = Vec::new();
            let _ = s.read_to_end(&mut question);
            assert!(!question.is_empty());
        }
    });
    let (code, out, err) = kiln("auto", &["refs", "materials/bark.material"], root);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("2 references to materials/bark.material"),
        "{out}"
    );
    assert!(err.contains("did not reply; working alone"), "{err}");
    let (code, _, err) = kiln("require", &["refs", "materials/bark.material"], root);
    assert_eq!(code, 2);
    assert!(err.contains("did not reply"), "{err}");
    server.join().unwrap();
}

/// An editor that shows a save of the open level before its index takes the file
/// in (as it does for big levels) answers a question asked right after the save
/// as a command working alone does: the question waits for the index.
#[test]
fn an_editor_showing_a_save_before_indexing_answers_after_the_index_took_it() {
    let dir = support::demo_copy();
    let root = dir.path();
    let mut editor = support::open_editor(root).unwrap();
    editor.disk_mut().show_saves_before_indexing_from(0);
    let mut server = CommandServer::start(&editor).unwrap();
    let alone = |args: &[&str]| kiln("off", args, root);
    let level = root.join("levels/forest.level");
    let text = fs::read_to_string(&level).unwrap();
    // A first save, so that the editor keeps a build of the file.
    let moved = text.replacen(
        "\"position\": [-2, 0.6, 6]",
        "\"position\": [-2, 0.6, 7]",
        1,
    );
    assert_ne!(moved, text, "the fixture's boulder moved");
    support::atomic_write(&level, &moved);
    support::until(&mut editor, "the first save", |e| {
        e.log()
            .iter()
            .any(|l| l.text.contains("forest.level reloaded"))
    });
    for _ in 0..3 {
        editor.tick(0.0, Duration::from_millis(20));
    }
    // A field-only save naming a material that does not exist, then a question.
    let broken = moved.replacen(
        "\"material\": \"\"",
        "\"material\": \"materials/missing\"",
        1,
    );
    assert_ne!(broken, moved, "the fixture's boulder has no material");
    support::atomic_write(&level, &broken);
    let served = support::ask_open_editor(&mut editor, &mut server, root, &["check"]);
    assert!(served.1.contains("materials/missing"), "{served:?}");
    assert_eq!(served, alone(&["check"]));
    assert!(
        editor
            .log()
            .iter()
            .any(|l| l.text.contains("reloaded (incremental, in place)")),
        "the save took the fast path"
    );
}
