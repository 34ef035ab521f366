//! Helpers shared by the app's integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod ui;
pub mod watch;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The bundled demo project.
pub fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/demo")
}

/// Copies a folder recursively, leaving out build output and caches.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "build" && entry.file_name() != ".kiln" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The demo's plugin libraries, built once per test process in the demo itself
/// (`projects/demo/.kiln/plugins`), as project-relative paths.
pub fn demo_plugins() -> &'static [PathBuf] {
    static BUILT: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let project = kiln_core::Project::open(&demo()).unwrap();
        let root = project.root().to_owned();
        project
            .config()
            .plugins
            .iter()
            .flat_map(|entry| {
                let folder = kiln_plugin_host::project::PluginFolder::find(&root, entry).unwrap();
                if folder.needs_build() {
                    folder.build().unwrap();
                }
                [&folder.built, &folder.stamp_path()]
                    .map(|f| f.strip_prefix(&root).unwrap().to_owned())
            })
            .collect()
    })
}

/// A throwaway copy of the demo project, with its plugins built (copied from the
/// demo's own build, so that each test does not build them again).
pub fn demo_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_demo(tmp.path());
    tmp
}

/// Copies the demo project to `to`, with its plugins built. The copy's plugins are
/// built and run in-process too: every project is trusted in this test process
/// (see `kiln::trust`).
pub fn copy_demo(to: &Path) {
    kiln::trust::trust_every_project_in_this_process();
    copy_dir(&demo(), to);
    for library in demo_plugins() {
        let target = to.join(library);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::copy(demo().join(library), target).unwrap();
    }
}

/// The real `kiln` binary, every project trusted (`KILN_TRUST=1`): the tests of
/// plugins build and run them. The tests of trust itself set up their own.
pub fn kiln_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kiln"));
    command.env("KILN_TRUST", "1");
    command
}

/// The editor on `dir`, every project trusted in this test process (see
/// [`kiln_command`]).
pub fn open_editor(dir: &Path) -> anyhow::Result<kiln::editor::Editor> {
    kiln::trust::trust_every_project_in_this_process();
    kiln::editor::Editor::open(dir)
}

/// Runs the real `kiln` binary in `dir`; returns exit code, stdout and stderr.
pub fn kiln(args: &[&str], dir: &Path) -> (i32, String, String) {
    kiln_with_env(args, dir, &[])
}

/// [`kiln`] with environment variables set.
pub fn kiln_with_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = kiln_command();
    command
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir);
    finished(&mut command)
}

/// [`kiln`] on a machine with no toolchain, as a designer's: no `cargo` and no C
/// compiler anywhere on `PATH`, and neither `CARGO` nor `CC` set.
pub fn kiln_without_toolchain(args: &[&str], dir: &Path) -> (i32, String, String) {
    static EMPTY: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let empty = EMPTY.get_or_init(|| tempfile::tempdir().unwrap());
    let mut command = kiln_command();
    command
        .args(args)
        .env_remove("CARGO")
        .env_remove("CC")
        .env("PATH", empty.path())
        .current_dir(dir);
    finished(&mut command)
}

/// Runs `command` to its end: exit code, stdout and stderr.
fn finished(command: &mut Command) -> (i32, String, String) {
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Polls the editor as its frame loop does until `done` holds (panics after 10 s,
/// with the log).
pub fn until(
    editor: &mut kiln::editor::Editor,
    what: &str,
    done: impl Fn(&kiln::editor::Editor) -> bool,
) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done(editor) {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for: {what}; log: {:#?}",
            editor.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        editor.poll_changes();
    }
}

/// Writes `text` the way editors save: to a hidden temporary file, renamed over.
pub fn atomic_write(path: &Path, text: &str) {
    let temp = path.with_file_name(format!(
        ".{}.swp",
        path.file_name().unwrap().to_string_lossy()
    ));
    fs::write(&temp, text).unwrap();
    fs::rename(&temp, path).unwrap();
}

#[allow(unused_imports)]
pub use dependency_checker::test_files::snapshot;

/// A project whose one level has `groups` roots named `Group k`, each with nine
/// children named `Item k.j`.
pub fn big_project(groups: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("levels")).unwrap();
    std::fs::write(
        dir.path().join("kiln.project"),
        r#"{"name": "Big", "boot_levels": ["levels/big"]}"#,
    )
    .unwrap();
    let mut entities = Vec::new();
    for k in 0..groups {
        entities.push(serde_json::json!({"id": format!("g{k}"), "name": format!("Group {k}")}));
        for j in 0..9 {
            entities.push(serde_json::json!({
                "id": format!("g{k}_{j}"),
                "name": format!("Item {k}.{j}"),
                "parent": format!("g{k}"),
            }));
        }
    }
    let level = serde_json::json!({ "entities": entities });
    std::fs::write(
        dir.path().join("levels/big.level"),
        serde_json::to_string_pretty(&level).unwrap(),
    )
    .unwrap();
    dir
}

/// Runs `kiln ARGS` in `root` with `KILN_SERVER=require`, running the editor's
/// frames (its tick, then the server's answers) while the command waits, as the
/// window does: exit code, stdout and stderr.
pub fn ask_open_editor(
    editor: &mut kiln::editor::Editor,
    server: &mut kiln::editor::command_server::CommandServer,
    root: &Path,
    args: &[&str],
) -> (i32, String, String) {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = kiln_command()
        .args(args)
        .env("KILN_SERVER", "require")
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "no answer from the editor");
        editor.tick(0.0, Duration::from_secs(3));
        server.serve(editor).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The blob a fresh compile of the editor's document writes, and the lines a
/// fresh spawn of it holds (`SpawnedLevel::state_in`): what the editor's own
/// preview must equal, however it got there.
pub fn fresh_build(editor: &kiln::editor::Editor) -> (Vec<u8>, Vec<String>) {
    let level = editor.level().unwrap();
    let project = kiln_core::Project::open(editor.files().project().root()).unwrap();
    let blob = kiln_core::compile_document_with(
        editor.files().registry(),
        &mut project.resource_source(),
        &level.file,
        &level.doc,
        kiln::editor::preview::PREVIEW_COMPILE,
    )
    .unwrap()
    .blob;
    let (mut entities, mut world) = (kiln_core::EntityManager::new(), kiln_core::World::new());
    let spawned =
        kiln_core::spawn_level(&blob, editor.files().registry(), &mut entities, &mut world)
            .unwrap();
    let state = spawned.state_in(&world);
    (blob, state)
}
