//! Workspace trust: a project's plugins are code, built and run only in a project
//! its user trusts. A plugin here leaves a canary file when its library is loaded;
//! without trust no command and no editor leaves it, with trust they do (which
//! shows the canary works). This test process never trusts every project (it does
//! not use the support helpers that do), and keeps its answers in a folder of its
//! own.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(unix)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kiln::editor::{Action, Editor};

/// The demo, without a built or prebuilt library, whose C plugin writes the file
/// `canary` in the project when its library is loaded.
fn demo_with_canary() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    support::copy_dir(&support::demo(), dir.path());
    for plugin in ["plugins/wind", "plugins/blink"] {
        let _ = fs::remove_dir_all(dir.path().join(plugin).join("prebuilt"));
    }
    let canary = dir.path().join("canary");
    let source = dir.path().join("plugins/blink/blink.c");
    let mut text = fs::read_to_string(&source).unwrap();
    text.push_str(&format!(
        "\n#include <stdio.h>\n__attribute__((constructor)) static void canary(void) {{\n    FILE *f = fopen(\"{}\", \"w\");\n    if (f) fclose(f);\n}}\n",
        canary.display()
    ));
    fs::write(&source, text).unwrap();
    // Only the C plugin: a Rust one would be built by cargo, minutes on a cold
    // machine, for nothing more.
    list_only_blink(dir.path());
    dir
}

/// Makes the demo at `dir` list its C plugin only.
fn list_only_blink(dir: &Path) {
    let project = dir.join("kiln.project");
    let config = fs::read_to_string(&project).unwrap();
    fs::write(
        &project,
        config.replace("\"plugins/wind\", \"plugins/blink\"", "\"plugins/blink\""),
    )
    .unwrap();
}

/// Runs `kiln ARGS` in `dir` as a user whose settings are in `config`, with the
/// environment's trust variable removed: exit code, stdout and stderr.
fn kiln_untrusted(args: &[&str], dir: &Path, config: &Path) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .env_remove("KILN_TRUST")
        .env("KILN_CONFIG_DIR", config)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The folder of remembered answers of this test process: one for all its tests,
/// which run at once (the setting is the process's).
fn answers() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap()).path();
    kiln::trust::keep_answers_in(dir.to_owned());
    dir
}

/// The editor in a 1600x900 window on the project at `dir`, after its first
/// frames; trusting nothing (unlike `support::ui::open`).
fn window(dir: &Path) -> egui_kittest::Harness<'static, kiln::editor::KilnApp> {
    let path = dir.to_owned();
    let mut harness = egui_kittest::Harness::builder()
        .with_size([1600.0, 900.0])
        .build_eframe(move |cc| kiln::editor::KilnApp::new(cc, Some(path)));
    harness.run_steps(4);
    harness
}

fn canary(dir: &Path) -> PathBuf {
    dir.join("canary")
}

/// Headless commands on a project nobody trusted: nothing of the plugins is
/// built or run; they say which plugins were left out and how to trust the
/// project; what can be done without them is done. With `--trust`, or
/// `KILN_TRUST=1`, the plugin is built and loaded.
#[test]
fn commands_run_no_plugin_of_a_project_that_is_not_trusted() {
    let config = tempfile::tempdir().unwrap();
    let dir = demo_with_canary();
    let (code, out, err) = kiln_untrusted(&["check"], dir.path(), config.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("plugins not loaded (plugins/blink)") && err.contains("--trust"),
        "{err}"
    );
    let (code, out, err) =
        kiln_untrusted(&["compile", "levels/workshop"], dir.path(), config.path());
    assert_eq!(code, 1, "the workshop uses blink: {out}{err}");
    assert!(err.contains("plugins not loaded (plugins/blink)"), "{err}");
    let (code, _, err) = kiln_untrusted(&["plugins", "prebuild"], dir.path(), config.path());
    assert_eq!(code, 2, "{err}");
    assert!(!canary(dir.path()).exists(), "a plugin ran");
    assert!(!dir.path().join(".kiln/plugins/p-plugins__blink").exists());

    let (code, out, err) = kiln_untrusted(
        &["compile", "--trust", "levels/workshop"],
        dir.path(),
        config.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        canary(dir.path()).exists(),
        "--trust did not load the plugin"
    );
    fs::remove_file(canary(dir.path())).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["check"])
        .env("KILN_TRUST", "1")
        .env("KILN_CONFIG_DIR", config.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    // The forest uses wind, which this project no longer lists: `compile` refuses
    // it, and so does `check`.
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("component \"wind\": unknown component type")
            && said.contains("(compiling levels/forest.level)"),
        "{said}"
    );
    assert!(
        canary(dir.path()).exists(),
        "KILN_TRUST=1 did not load the plugin"
    );
}

/// The editor asks before it builds or loads anything, naming each plugin; the
/// answer is remembered for the project and reaches the headless commands too.
#[test]
fn the_editor_asks_and_remembers_the_answer() {
    let config = answers();

    // Declined: nothing runs, Problems says how to trust it, and the next open
    // does not ask again.
    let dir = demo_with_canary();
    let mut editor = Editor::open(dir.path()).unwrap();
    let asked = editor.trust_question().expect("the editor asks");
    assert_eq!(asked.plugins.len(), 1);
    assert!(asked.plugins[0].0 == "plugins/blink" && asked.plugins[0].1.contains("C sources"));
    assert!(!asked.can_build_shipped, "nothing is shipped built");
    assert!(editor.plugins().loaded().is_empty());
    editor.apply(Action::AnswerTrust {
        trust: false,
        from_sources: false,
    });
    assert!(editor.trust_question().is_none());
    assert!(
        editor
            .plugins()
            .warnings()
            .iter()
            .any(|w| w.contains("not trusted")),
        "{:?}",
        editor.plugins().warnings()
    );
    drop(editor);
    let editor = Editor::open(dir.path()).unwrap();
    assert!(editor.trust_question().is_none());
    assert!(editor.plugins().loaded().is_empty());
    drop(editor);
    assert!(!canary(dir.path()).exists(), "a plugin ran");

    // Trusted: built and loaded at once, and remembered.
    let dir = demo_with_canary();
    let mut editor = Editor::open(dir.path()).unwrap();
    assert!(editor.trust_question().is_some());
    editor.apply(Action::AnswerTrust {
        trust: true,
        from_sources: false,
    });
    assert!(editor.wait_for_plugin_builds(Duration::from_secs(120)));
    editor.poll_plugins();
    assert!(
        editor.plugins().loaded().iter().any(|p| p.name == "blink"),
        "{:?}",
        editor.log()
    );
    assert!(canary(dir.path()).exists());
    drop(editor);
    let editor = Editor::open(dir.path()).unwrap();
    assert!(editor.trust_question().is_none());
    assert_eq!(editor.plugins().loaded().len(), 1);
    drop(editor);
    // The headless commands see the same answer.
    fs::remove_file(canary(dir.path())).unwrap();
    let (code, out, err) = kiln_untrusted(&["compile", "levels/workshop"], dir.path(), config);
    assert_eq!(code, 0, "{out}{err}");
    assert!(canary(dir.path()).exists());
}

/// The question in the real window: a modal naming the plugin, and its button
/// loads it.
#[test]
fn the_trust_question_is_a_dialog_with_a_button_that_loads_the_plugins() {
    use egui_kittest::kittest::Queryable;
    answers();
    let dir = demo_with_canary();
    let mut harness = window(dir.path());
    harness.get_by_label("Trust this project's plugins?");
    harness.get_by_label_contains("plugins/blink: C sources");
    harness.get_by_label("Trust and load plugins").click();
    harness.run_steps(2);
    let editor = harness.state_mut().editor.as_mut().unwrap();
    assert!(editor.trust_question().is_none());
    assert!(editor.wait_for_plugin_builds(Duration::from_secs(120)));
    editor.poll_plugins();
    assert!(editor.plugins().loaded().iter().any(|p| p.name == "blink"));
}

/// The demo Kiln carries is trusted by what it holds, wherever it is and
/// whatever was in the folder before (a `.git`): a fresh `kiln new --template
/// demo` loads its plugins without a question, and remembers nothing by folder;
/// the same project with one byte of a plugin changed, a file added to a plugin
/// folder, or a `.cargo/` beside it, is not trusted.
#[test]
fn the_carried_demo_is_trusted_by_what_it_holds_not_by_its_folder() {
    let config = tempfile::tempdir().unwrap();
    let outer = tempfile::tempdir().unwrap();
    let dir = outer.path().join("demo");
    fs::create_dir_all(dir.join(".git")).unwrap();
    let (code, out, err) = kiln_untrusted(
        &["new", "--template", "demo", dir.to_str().unwrap()],
        outer.path(),
        config.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        !config.path().join("trusted-projects.json").exists(),
        "nothing remembered by folder"
    );
    let untrusted = |dir: &Path| {
        let (code, out, err) = kiln_untrusted(&["check"], dir, config.path());
        assert!(code <= 1, "{out}{err}");
        err.contains("plugins not loaded")
    };
    assert!(!untrusted(&dir), "the fresh demo is trusted");
    assert!(kiln::trust::is_carried_demo(&dir));
    let source = dir.join("plugins/blink/blink.c");
    let original = fs::read(&source).unwrap();
    fs::write(&source, [&original[..], b"/* one more line */\n"].concat()).unwrap();
    assert!(untrusted(&dir), "a changed plugin source");
    fs::write(&source, &original).unwrap();
    assert!(!untrusted(&dir));
    fs::write(dir.join("plugins/wind/.extra.rs"), "").unwrap();
    assert!(untrusted(&dir), "a file added to a plugin folder");
    fs::remove_file(dir.join("plugins/wind/.extra.rs")).unwrap();
    fs::create_dir(dir.join(".cargo")).unwrap();
    fs::write(
        dir.join(".cargo/config.toml"),
        "[build]\nrustc-wrapper = \"/bin/sh\"\n",
    )
    .unwrap();
    assert!(untrusted(&dir), "a .cargo/ configuring the build");
}

/// The question names what would run: a prebuilt library shipped with the
/// project (its path and size), not "sources compiled", when that is what loads;
/// and a `.cargo/config.toml` that takes part in a build.
#[test]
fn the_trust_question_names_the_shipped_library_and_the_build_configuration() {
    use egui_kittest::kittest::Queryable;
    answers();
    let dir = tempfile::tempdir().unwrap();
    support::copy_dir(&support::demo(), dir.path());
    let _ = fs::remove_dir_all(dir.path().join(".kiln"));
    fs::create_dir_all(dir.path().join(".cargo")).unwrap();
    fs::write(dir.path().join(".cargo/config.toml"), "[build]\n").unwrap();
    let mut harness = window(dir.path());
    harness.get_by_label("Trust this project's plugins?");
    let blink = harness.get_by_label_contains("plugins/blink: loads plugins/blink/prebuilt/");
    let said = format!("{blink:?}");
    assert!(
        said.contains("a library shipped with the project, not built here"),
        "{said}"
    );
    assert!(!said.contains("compiled"), "{said}");
    let wind = format!("{:?}", harness.get_by_label_contains("plugins/wind: "));
    assert!(
        wind.contains("its build also follows .cargo/config.toml"),
        "{wind}"
    );
    harness.get_by_label("Open without plugins").click();
    harness.run_steps(2);
    assert!(!dir.path().join("canary").exists());
}

/// Where a plugin would load the library shipped with the project and this
/// machine can build its sources, the question offers to build them here
/// instead: answered so, the plugin is built from its sources (the shipped
/// library is not what loads), the answer is remembered, and `kiln plugins` says
/// so; answered the usual way, the shipped library loads and nothing is built.
#[test]
fn the_trust_question_offers_to_build_from_sources_instead_of_a_shipped_library() {
    use egui_kittest::kittest::Queryable;
    let config = answers();
    // The demo with its C plugin only (so not the demo Kiln carries: asked),
    // whose prebuilt library matches its sources.
    let project = || {
        let dir = tempfile::tempdir().unwrap();
        support::copy_dir(&support::demo(), dir.path());
        let _ = fs::remove_dir_all(dir.path().join(".kiln"));
        list_only_blink(dir.path());
        dir
    };
    let built = |dir: &Path| {
        let root = dir.canonicalize().unwrap();
        kiln_plugin_host::project::PluginFolder::find(&root, "plugins/blink")
            .unwrap()
            .built
    };

    let dir = project();
    let mut harness = window(dir.path());
    harness.get_by_label("Trust this project's plugins?");
    harness
        .get_by_label("Trust, but build from sources")
        .click();
    harness.run_steps(2);
    let editor = harness.state_mut().editor.as_mut().unwrap();
    assert!(editor.trust_question().is_none());
    assert!(editor.wait_for_plugin_builds(Duration::from_secs(120)));
    editor.poll_plugins();
    assert!(editor.plugins().loaded().iter().any(|p| p.name == "blink"));
    assert!(built(dir.path()).is_file(), "built here from its sources");
    assert_eq!(
        kiln::trust::remembered(&dir.path().canonicalize().unwrap()),
        Some(kiln::trust::Answer::TrustedFromSources)
    );
    // The commands load what was built here too.
    let (code, out, err) = kiln_untrusted(&["plugins"], dir.path(), config);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("  loads: the library built here, up to date"),
        "{out}"
    );

    // Answered the usual way: the shipped library loads, nothing is built.
    let dir = project();
    let mut harness = window(dir.path());
    harness.get_by_label("Trust and load plugins").click();
    harness.run_steps(2);
    let editor = harness.state_mut().editor.as_mut().unwrap();
    assert!(editor.wait_for_plugin_builds(Duration::from_secs(120)));
    editor.poll_plugins();
    assert!(editor.plugins().loaded().iter().any(|p| p.name == "blink"));
    assert!(!built(dir.path()).exists(), "the shipped library loaded");
    let (_, out, _) = kiln_untrusted(&["plugins"], dir.path(), config);
    assert!(out.contains("  loads: the prebuilt library for"), "{out}");
    // And with the environment's preference, the same project builds instead.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["plugins"])
        .env_remove("KILN_TRUST")
        .env("KILN_CONFIG_DIR", config)
        .env(kiln::trust::FROM_SOURCES_VARIABLE, "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains("  loads: built here from its sources first"),
        "{out}"
    );
}
