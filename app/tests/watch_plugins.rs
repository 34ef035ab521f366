//! `kiln watch` and the project's plugins (the real binaries, a C plugin compiled
//! by the machine's C compiler): a plugin whose sources change is rebuilt and
//! reloaded, the levels using its types are rebuilt, and the answers the watch
//! serves follow the plugin as a command started alone would.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;
use std::path::Path;
use std::time::Duration;

use support::atomic_write;
use support::watch::Watch;

const BLINK: &str = "plugins/blink/blink.c";

/// A project with the demo's `blink` C plugin, one level using its type, one
/// that does not, a unit holding it through a prefab, and a few references.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let files = [
        (
            "kiln.project",
            r#"{"boot_levels": ["levels/lit", "levels/plain"], "plugins": ["plugins/blink"]}"#,
        ),
        (
            "levels/lit.level",
            r#"{"entities": [
  {"id": "a", "components": {"transform": {}, "blink": {"period": 0.5}}},
  {"id": "b", "prefab": "units/lamp", "components": {"transform": {}}}
]}"#,
        ),
        (
            "levels/plain.level",
            r#"{"entities": [{"id": "rock", "components": {"transform": {}, "mesh": {"mesh": "meshes/rock", "material": "materials/stone"}}}]}"#,
        ),
        (
            "units/lamp.unit",
            r#"{"entities": [{"id": "bulb", "components": {"transform": {}, "blink": {}}}]}"#,
        ),
        ("meshes/rock.mesh", r#"{"shape": "sphere"}"#),
        (
            "materials/stone.material",
            r#"{"color": [0.5, 0.5, 0.5, 1]}"#,
        ),
    ];
    for (path, text) in files {
        let full = root.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    fs::create_dir_all(root.join("plugins/blink")).unwrap();
    fs::copy(support::demo().join(BLINK), root.join(BLINK)).unwrap();
    dir
}

/// Every blob under `out`, by path.
fn blobs(out: &Path) -> Vec<(String, Vec<u8>)> {
    support::snapshot(out)
}

/// blink.c with `period`'s default (seconds, as the schema's text) set to `value`.
fn with_default_period(source: &str, value: &str) -> String {
    let old = r#"KILN_FIELD_FLOAT, 0.05, 60, STR(""), STR("1"),"#;
    assert!(
        source.contains(old),
        "the demo's blink.c changed its field table"
    );
    source.replace(
        old,
        &format!(r#"KILN_FIELD_FLOAT, 0.05, 60, STR(""), STR("{value}"),"#),
    )
}

/// blink.c that does not compile.
fn broken(source: &str) -> String {
    source.replace("static void shutdown", "static void shutdown(")
}

#[test]
fn a_changed_plugin_is_rebuilt_and_reloaded_and_the_levels_using_its_types_rebuilt() {
    let dir = project();
    let root = dir.path();
    let out = tempfile::tempdir().unwrap();
    let (mut w, started) = Watch::start_with(root, &["--out".as_ref(), out.path().as_os_str()]);
    assert!(
        started
            .iter()
            .any(|l| l.starts_with("built levels/lit.level")),
        "{started:#?}"
    );
    let before = blobs(out.path());
    let source = fs::read_to_string(root.join(BLINK)).unwrap();

    // A new default: the plugin is rebuilt, and the level using the type (also
    // through the lamp prefab) is rebuilt with it; the other level is not.
    atomic_write(&root.join(BLINK), &with_default_period(&source, "2"));
    let lines = w.until_within(Duration::from_secs(60), |l| {
        l.starts_with("built levels/lit.level")
    });
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("reloaded plugins (blink)")),
        "{lines:#?}"
    );
    let lines = [lines, w.settle(Duration::from_millis(700))].concat();
    assert!(
        !lines.iter().any(|l| l.contains("levels/plain.level")),
        "plain does not use blink: {lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("no level affected")),
        "{lines:#?}"
    );
    let after = blobs(out.path());
    let lit = |b: &[(String, Vec<u8>)]| {
        b.iter()
            .find(|(p, _)| p.ends_with("lit.level.bin"))
            .map(|(_, bytes)| bytes.clone())
            .unwrap()
    };
    assert_ne!(lit(&before), lit(&after), "the new default is in the blob");
    assert_eq!(
        fs::read(out.path().join("build/levels/lit.level.bin")).unwrap(),
        {
            // The blob a compile started now writes.
            let fresh = tempfile::tempdir().unwrap();
            let (code, o, e) = support::kiln(
                &[
                    "compile",
                    "--out",
                    fresh.path().to_str().unwrap(),
                    "levels/lit",
                ],
                root,
            );
            assert_eq!(code, 0, "{o}{e}");
            fs::read(fresh.path().join("build/levels/lit.level.bin")).unwrap()
        },
        "the watch's blob is the one a fresh compile writes"
    );

    // A plugin that no longer builds: said, and the level keeps building without
    // its components (as a preview does); fixed, it comes back.
    atomic_write(&root.join(BLINK), &broken(&source));
    let lines = w.until_within(Duration::from_secs(60), |l| {
        l.starts_with("reloaded plugins")
    });
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error: plugin folder plugins/blink: the build failed")),
        "{lines:#?}"
    );
    atomic_write(&root.join(BLINK), &source);
    let lines = w.until_within(Duration::from_secs(60), |l| {
        l.starts_with("reloaded plugins (blink)")
    });
    assert!(!lines.iter().any(|l| l.starts_with("error:")), "{lines:#?}");
    w.until_within(Duration::from_secs(20), |l| {
        l.starts_with("built levels/lit.level")
    });
    assert_eq!(
        lit(&blobs(out.path())),
        lit(&before),
        "back to the first blob"
    );
}

/// SplitMix64, seeded: the same sequence on every run of a seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// Random edits of the project and its plugin, each followed by a random
/// question: asked of the running watch (`KILN_SERVER=require`) and worked alone
/// (`off`), the output and exit status must be the same.
#[test]
fn served_answers_follow_plugin_changes_as_commands_alone_do() {
    let dir = project();
    let root = dir.path();
    let out = tempfile::tempdir().unwrap();
    let (_w, _) = Watch::start_with(root, &["--out".as_ref(), out.path().as_os_str()]);
    let source = fs::read_to_string(root.join(BLINK)).unwrap();
    let questions: &[&[&str]] = &[
        &["check"],
        &["check", "--json"],
        &["deps", "levels/lit.level"],
        &["refs", "materials/stone.material"],
        &["refs", "--json", "units/lamp.unit"],
        &[
            "mv",
            "--dry-run",
            "materials/stone.material",
            "materials/rock.material",
        ],
    ];
    let seed = std::env::var("KILN_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026_u64);
    let mut rng = Rng(seed);
    let mut history: Vec<String> = Vec::new();
    for step in 0..14 {
        let edit = match rng.below(6) {
            0 => {
                atomic_write(&root.join(BLINK), &broken(&source));
                "break the plugin".to_owned()
            }
            1 => {
                atomic_write(&root.join(BLINK), &source);
                "restore the plugin".to_owned()
            }
            2 => {
                let value = ["0.5", "2", "3.5"][rng.below(3) as usize];
                atomic_write(&root.join(BLINK), &with_default_period(&source, value));
                format!("default period {value}")
            }
            3 => {
                // A field the plugin's schema may or may not have: checked only
                // where the plugin loads.
                let field = ["period", "speed"][rng.below(2) as usize];
                fs::write(
                    root.join("units/lamp.unit"),
                    format!(
                        r#"{{"entities": [{{"id": "bulb", "components": {{"transform": {{}}, "blink": {{"{field}": 1.5}}}}}}]}}"#
                    ),
                )
                .unwrap();
                format!("lamp sets {field}")
            }
            4 => {
                let material = ["materials/stone", "materials/gone"][rng.below(2) as usize];
                fs::write(
                    root.join("levels/plain.level"),
                    format!(
                        r#"{{"entities": [{{"id": "rock", "components": {{"transform": {{}}, "mesh": {{"mesh": "meshes/rock", "material": "{material}"}}}}}}]}}"#
                    ),
                )
                .unwrap();
                format!("plain uses {material}")
            }
            _ => "nothing".to_owned(),
        };
        history.push(edit);
        let question = questions[rng.below(questions.len() as u64) as usize];
        let served = support::kiln_with_env(question, root, &[("KILN_SERVER", "require")]);
        let alone = support::kiln_with_env(question, root, &[("KILN_SERVER", "off")]);
        assert_eq!(
            served, alone,
            "seed {seed}, step {step}: kiln {question:?} after {history:?}"
        );
    }
    // The sequence went through a broken plugin and a working one at least once
    // (the seed is fixed; another one is tried with KILN_TEST_SEED).
    assert!(
        history.iter().any(|e| e == "break the plugin")
            && history
                .iter()
                .any(|e| e == "restore the plugin" || e.starts_with("default")),
        "{history:?}"
    );
}

/// The editor serves too: while it builds a changed plugin it holds the answer
/// back, and then answers as a command alone does (with the build failing, and
/// once it builds again).
#[test]
fn an_open_editor_answers_with_its_plugins_as_their_sources_are() {
    use kiln::editor::command_server::CommandServer;

    let dir = project();
    let root = dir.path();
    let mut editor = support::open_editor(root).unwrap();
    let mut server = CommandServer::start(&editor).unwrap();
    let mut ask = |args: &[&str]| support::ask_open_editor(&mut editor, &mut server, root, args);
    let alone = |args: &[&str]| support::kiln_with_env(args, root, &[("KILN_SERVER", "off")]);
    let source = fs::read_to_string(root.join(BLINK)).unwrap();
    assert_eq!(ask(&["check"]), alone(&["check"]), "at start");

    atomic_write(&root.join(BLINK), &broken(&source));
    let served = ask(&["check"]);
    assert_eq!(served.0, 1, "{served:?}");
    assert_eq!(served, alone(&["check"]), "with the plugin broken");

    atomic_write(&root.join(BLINK), &with_default_period(&source, "2"));
    let served = ask(&["check", "--json"]);
    assert_eq!(served.0, 0, "{served:?}");
    assert_eq!(served, alone(&["check", "--json"]), "with the plugin fixed");
}
