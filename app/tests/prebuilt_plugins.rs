//! Plugins for people without a toolchain: an engineer prebuilds the project's
//! plugins (`kiln plugins prebuild`), the team commits them, and a designer whose
//! machine has no cargo and no C compiler opens, compiles and checks the project with
//! both plugins, through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::{kiln, kiln_without_toolchain};

use std::fs;

#[test]
fn a_designer_without_a_compiler_loads_the_prebuilt_plugins_while_they_match() {
    // The engineer's machine: builds and prebuilds.
    let engineer = support::demo_copy();
    let (code, out, err) = kiln(&["plugins", "prebuild"], engineer.path());
    assert_eq!(code, 0, "{out}{err}");
    let platform = kiln_plugin_host::prebuilt::platform();
    for (plugin, types) in [("wind", &["wind"][..]), ("blink", &["blink", "door"][..])] {
        let dir = engineer
            .path()
            .join(format!("plugins/{plugin}/prebuilt/{platform}"));
        assert!(
            out.contains(&format!("prebuilt plugins/{plugin} for {platform}")),
            "{out}"
        );
        assert!(
            dir.join(kiln_plugin_host::prebuilt::library_name())
                .is_file()
        );
        let stamp =
            kiln_plugin_host::prebuilt::Stamp::parse(&fs::read(dir.join("stamp.json")).unwrap())
                .unwrap();
        assert_eq!(stamp.types, types);
    }
    // Prebuilding again changes nothing that git would see.
    let before = support::snapshot(engineer.path());
    assert_eq!(kiln(&["plugins", "prebuild"], engineer.path()).0, 0);
    assert_eq!(support::snapshot(engineer.path()), before);

    // The designer's checkout: what the team committed, nothing built.
    let tmp = tempfile::tempdir().unwrap();
    let designer = tmp.path().join("checkout");
    support::copy_dir(engineer.path(), &designer);
    assert!(!designer.join(".kiln").exists());
    let (code, out, err) = kiln_without_toolchain(&["plugins"], &designer);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("plugins/wind: a Rust crate, no cargo here"),
        "{out}"
    );
    assert!(
        out.contains(&format!("  loads: the prebuilt library for {platform}")),
        "{out}"
    );
    let (code, out, err) = kiln_without_toolchain(&["compile"], &designer);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        !err.contains("built plugin") && !err.contains("warning"),
        "{err}"
    );
    assert!(out.contains("2 compiled, 0 failed"), "{out}");
    let (code, out, err) = kiln_without_toolchain(&["check"], &designer);
    assert_eq!(code, 0, "{out}{err}");

    // The C source changes (a comment will do) and nothing here can build it:
    // the prebuilt library still loads, but a machine check can tell. `check` says
    // so as a warning (in --json too, and failing --deny-warnings), and `compile`
    // writes nothing unless told to.
    let blink = designer.join("plugins/blink/blink.c");
    let source = fs::read_to_string(&blink).unwrap();
    fs::write(&blink, format!("{source}/* tuned */\n")).unwrap();
    let stale =
        "plugin folder plugins/blink: loaded its prebuilt library, built from other sources";
    let (code, out, err) = kiln_without_toolchain(&["check"], &designer);
    assert_eq!(code, 0, "a warning: {out}{err}");
    assert!(out.contains(&format!("warning: {stale}")), "{out}");
    assert_eq!(
        format!("{out}{err}").matches(stale).count(),
        1,
        "said once: {out}{err}"
    );
    let (code, out, err) = kiln_without_toolchain(&["check", "--deny-warnings"], &designer);
    assert_eq!(code, 1, "{out}{err}");
    let (_, out, _) = kiln_without_toolchain(&["check", "--json"], &designer);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        report["plugin_warnings"][0]
            .as_str()
            .unwrap()
            .contains(stale),
        "{report}"
    );
    let blob = designer.join("build/levels/forest.level.bin");
    let before = fs::read(&blob).unwrap();
    fs::remove_file(&blob).unwrap();
    let (code, out, err) = kiln_without_toolchain(&["compile"], &designer);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!("error: {stale}")) && out.contains("--allow-stale-plugins"),
        "{out}"
    );
    assert!(!blob.exists(), "nothing written");
    let (code, out, err) = kiln_without_toolchain(&["compile", "--allow-stale-plugins"], &designer);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("warning: {stale}")), "{out}");
    assert_eq!(
        format!("{out}{err}").matches(stale).count(),
        1,
        "said once: {out}{err}"
    );
    assert_eq!(fs::read(&blob).unwrap(), before);
    // With a compiler, the changed sources are built instead.
    let (code, out, err) = kiln(&["compile"], &designer);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("built plugin plugins/blink"), "{err}");

    // No prebuilt library and no compiler: an error that says what to do; the
    // level is refused by the shipping compile, naming the plugin.
    fs::remove_dir_all(designer.join("plugins/wind/prebuilt")).unwrap();
    let (code, out, err) = kiln_without_toolchain(&["compile"], &designer);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("error: plugin folder plugins/wind: its sources need building and there is no cargo on this machine, nor a prebuilt library")
            && out.contains("kiln plugins prebuild"),
        "{out}"
    );
    assert!(
        out.contains(
            "component \"wind\": its type comes from plugin plugins/wind, which did not load"
        ),
        "wind loaded here before, so its types are known: {out}"
    );
}

#[test]
fn a_fresh_checkout_with_prebuilt_plugins_opens_in_the_editor_without_building() {
    let engineer = support::demo_copy();
    assert_eq!(kiln(&["plugins", "prebuild"], engineer.path()).0, 0);
    let tmp = tempfile::tempdir().unwrap();
    let checkout = tmp.path().join("checkout");
    support::copy_dir(engineer.path(), &checkout);
    let editor = support::open_editor(&checkout).unwrap();
    assert!(editor.plugins().building().is_empty(), "nothing is built");
    assert_eq!(editor.plugins().loaded().len(), 2, "{:?}", editor.log());
    assert!(editor.plugins().warnings().is_empty());
    // The Log says which library each plugin loaded, with the prebuilt one's stamp.
    let platform = kiln_plugin_host::prebuilt::platform();
    assert!(
        editor.log().iter().any(|l| l.text.starts_with(&format!(
            "plugin plugins/blink from the team's prebuilt library for {platform} (sources "
        )) && l.text.contains("built by kiln")
            && l.text.ends_with("built from these sources")),
        "{:?}",
        editor.log()
    );
    assert!(
        editor.preview_state().left_out().is_empty(),
        "{:?}",
        editor.preview_state().left_out()
    );
    assert!(!checkout.join(".kiln/plugins/target").exists());
}

#[test]
fn the_demo_ships_prebuilt_plugins_that_match_its_sources() {
    let demo = fs::canonicalize(support::demo()).unwrap();
    for plugin in ["plugins/wind", "plugins/blink"] {
        let folder = kiln_plugin_host::project::PluginFolder::find(&demo, plugin).unwrap();
        let (_, stamp) = folder
            .prebuilt()
            .expect("the demo carries a prebuilt library");
        assert_eq!(
            stamp.sources,
            kiln_plugin_host::project::source_stamp(&folder.folder),
            "{plugin} changed: run `kiln plugins prebuild --project projects/demo` and commit its prebuilt/ folder"
        );
    }
    // So a copy of it works on a machine without a compiler.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("demo");
    support::copy_dir(&demo, &copy);
    let (code, out, err) = kiln_without_toolchain(&["compile"], &copy);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("warning"), "{err}");
}
