//! The headless commands with the demo's plugins, through the real binary: a plugin
//! component's resource field is a typed reference that `refs` finds and `mv`
//! patches; a plugin that fails is an error in `check` (text and JSON) and `compile`,
//! and the other plugin still loads.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;

use support::{demo_copy, kiln};

#[test]
fn a_plugin_components_resource_field_is_found_and_patched() {
    let dir = demo_copy();
    let (code, out, err) = kiln(&["refs", "materials/red_glow.material"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("units/bulb.unit:11:19 (entity \"glass\", component \"blink\", /entities/0/components/blink/glow)"),
        "{out}"
    );
    assert!(
        kiln(&["refs", "materials/leaves.material"], dir.path())
            .1
            .contains("component \"wind\", /entities/1/components/wind/leaves"),
    );
    let (code, out, err) = kiln(
        &[
            "mv",
            "materials/red_glow.material",
            "materials/beacon.material",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    let bulb = fs::read_to_string(dir.path().join("units/bulb.unit")).unwrap();
    assert!(bulb.contains("\"glow\": \"materials/beacon\""), "{bulb}");
    let (code, out, err) = kiln(&["check"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 findings"), "{out}");
    let (code, out, err) = kiln(&["compile"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_broken_plugin_is_an_error_in_check_and_compile_and_the_other_loads() {
    let dir = demo_copy();
    let blink = dir.path().join("plugins/blink/blink.c");
    let source = fs::read_to_string(&blink).unwrap();
    fs::write(
        &blink,
        source.replace("static void shutdown", "static void shutdown("),
    )
    .unwrap();
    let (code, out, err) = kiln(&["check"], dir.path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error: plugin folder plugins/blink: the build failed")
            && out.contains("blink.c:"),
        "{out}"
    );
    let (code, out, _) = kiln(&["check", "--json"], dir.path());
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let plugins = report["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), 1);
    assert!(plugins[0].as_str().unwrap().contains("plugins/blink"));
    assert_eq!(report["errors"], 1);
    // The levels using blink fail, naming the component type; wind still loaded.
    let (code, out, err) = kiln(&["compile"], dir.path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "component \"blink\": its type comes from plugin plugins/blink, which did not load"
        ),
        "the prebuilt library's stamp says which types it has: {out}"
    );
    assert!(!out.contains("\"wind\": unknown"), "{out}");
}

#[test]
fn two_commands_building_the_same_plugin_at_once_both_load_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(
        root.join("kiln.project"),
        r#"{"plugins": ["plugins/blink"]}"#,
    )
    .unwrap();
    fs::create_dir_all(root.join("plugins/blink")).unwrap();
    fs::copy(
        support::demo().join("plugins/blink/blink.c"),
        root.join("plugins/blink/blink.c"),
    )
    .unwrap();
    fs::create_dir_all(root.join("levels")).unwrap();
    fs::write(
        root.join("levels/l.level"),
        r#"{"entities": [{"id": "a", "components": {"transform": {}, "blink": {}}}]}"#,
    )
    .unwrap();
    // Neither has built it: both build, each through its own temporary names.
    let start = || {
        support::kiln_command()
            .args(["compile"])
            .current_dir(root)
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(start);
        let b = s.spawn(start);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    for out in [a, b] {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("1 compiled, 0 failed"), "{text}");
    }
    let mut left: Vec<String> = fs::read_dir(root.join(".kiln/plugins/p-plugins__blink"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["plugin.so", "plugin.sources", "plugin.types"],
        "no temporary is left"
    );
}

#[test]
fn a_plugin_that_does_not_load_is_named_and_the_rest_of_the_level_is_previewed() {
    let dir = demo_copy();
    let root = dir.path();
    // Loaded once, the plugin's types are known to come from it.
    assert_eq!(kiln(&["check"], root).0, 0);
    let blink = root.join("plugins/blink/blink.c");
    let source = fs::read_to_string(&blink).unwrap();
    fs::write(
        &blink,
        source.replace("static void shutdown", "static void shutdown("),
    )
    .unwrap();

    // The shipping compile refuses the levels, naming entity, component and plugin.
    let (code, out, err) = kiln(&["compile"], root);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error: units/bulb.unit: entity \"lamp_1/head/glass\", component \"blink\": its type comes from plugin plugins/blink, which did not load"),
        "{out}"
    );
    assert!(
        !root.join("build/levels/forest.level.bin").exists(),
        "{out}"
    );

    // Asked to, it leaves the component out and says so for each.
    let (code, out, err) = kiln(&["compile", "--skip-unknown-components"], root);
    assert_eq!(code, 1, "the plugin is still an error: {out}{err}");
    assert!(out.contains("compiled levels/forest.level"), "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("warning: ")
            && l.contains("component \"blink\"")
            && l.ends_with("(left out)")),
        "{out}"
    );
    assert!(root.join("build/levels/forest.level.bin").is_file());

    // `kiln watch` previews the same way.
    let (watch, seen) = support::watch::Watch::start_with(root, &[]);
    drop(watch);
    assert!(
        seen.iter()
            .any(|l| l.starts_with("warning: ") && l.contains("plugins/blink")),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|l| l.starts_with("built levels/forest.level")),
        "{seen:#?}"
    );

    // The editor draws everything else and says what it left out, and why.
    let mut editor = support::open_editor(root).unwrap();
    assert!(editor.wait_for_plugin_builds(std::time::Duration::from_secs(120)));
    assert_eq!(editor.preview_state().compile_error(), None);
    let left_out: Vec<String> = editor
        .preview_state()
        .left_out()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(!left_out.is_empty());
    assert!(
        left_out
            .iter()
            .all(|e| e.contains("component \"blink\"") && e.contains("plugin plugins/blink")),
        "{left_out:#?}"
    );
    let level = editor
        .preview()
        .level
        .as_ref()
        .expect("the level is on screen");
    assert!(level.entity("windmill").is_some());
    assert!(
        editor.plugins().loaded().iter().any(|p| p.name == "wind"),
        "the other plugin loads"
    );
}
