//! A project works wherever it lives: a copy of the demo in a folder outside Kiln's
//! repository, with nothing built, compiles, checks clean, watches and opens in the
//! editor with both plugins, its Rust plugin built against the SDK this `kiln`
//! carries, never against a path into the repository.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::kiln;
use support::watch::Watch;

use std::fs;
use std::path::Path;
use std::time::Duration;

fn repository() -> std::path::PathBuf {
    fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap()
}

#[test]
fn a_copy_of_the_demo_outside_the_repository_works_in_every_command_and_the_editor() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("my game");
    assert!(!root.starts_with(repository()), "the copy must be outside");
    support::copy_dir(&support::demo(), &root);
    assert!(!root.join(".kiln").exists(), "nothing built comes along");
    // Without the demo's prebuilt libraries, so that the plugins are built here.
    for plugin in ["wind", "blink"] {
        fs::remove_dir_all(root.join(format!("plugins/{plugin}/prebuilt"))).unwrap();
    }

    // compile builds both plugins, then every level.
    let (code, out, err) = kiln(&["compile"], &root);
    assert_eq!(code, 0, "{out}\n{err}");
    for plugin in ["plugins/wind", "plugins/blink"] {
        assert!(err.contains(&format!("built plugin {plugin}")), "{err}");
    }
    for level in ["forest", "workshop"] {
        assert!(
            root.join(format!("build/levels/{level}.level.bin"))
                .is_file()
        );
    }
    // The SDK is this kiln's, unpacked in the project; nothing names the repository.
    assert!(root.join(".kiln/sdk/kiln_plugin/src/lib.rs").is_file());
    let repo = repository().to_string_lossy().into_owned();
    for file in ["plugins/wind/Cargo.toml", "plugins/wind/Cargo.lock"] {
        let text = fs::read_to_string(root.join(file)).unwrap();
        assert!(
            !text.contains(&repo),
            "{file} names the repository:\n{text}"
        );
    }

    // check is clean, and nothing is built again.
    let (code, out, err) = kiln(&["check"], &root);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!err.contains("built plugin"), "{err}");
    assert!(
        out.starts_with("0 findings (0 errors, 0 warnings)"),
        "{out}"
    );

    // A live reload: a saved level is compiled again by `kiln watch`.
    let blob = root.join("build/levels/forest.level.bin");
    let before = fs::read(&blob).unwrap();
    let mut watch = Watch::start(&root);
    let forest = root.join("levels/forest.level");
    let text = fs::read_to_string(&forest).unwrap();
    let edited = text.replacen("\"name\": \"", "\"name\": \"Moved ", 1);
    assert_ne!(edited, text);
    support::atomic_write(&forest, &edited);
    watch.until(|l| l.starts_with("built levels/forest.level"));
    drop(watch);
    assert_ne!(
        fs::read(&blob).unwrap(),
        before,
        "the blob was written again"
    );

    // The editor opens it with both plugins loaded and the level on screen.
    let mut editor = support::open_editor(&root).unwrap();
    assert!(editor.wait_for_plugin_builds(Duration::from_secs(120)));
    let mut names: Vec<&str> = editor
        .plugins()
        .loaded()
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    names.sort();
    assert_eq!(names, ["blink", "wind"], "{:?}", editor.log());
    assert!(
        editor.plugins().errors().is_empty(),
        "{:?}",
        editor.plugins().errors()
    );
    assert_eq!(editor.preview_state().compile_error(), None);
    let level = editor
        .preview()
        .level
        .as_ref()
        .expect("the level is spawned");
    assert!(level.entity("windmill").is_some());
}
