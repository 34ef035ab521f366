//! A project's plugin folders: built when their sources change, loaded from a private
//! copy, and every way a folder can be wrong named with the folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;

use kiln_core::Registry;
use kiln_plugin_host::PluginError;
use kiln_plugin_host::project::{Build, PluginFolder, PluginSource, ProjectPlugins, load_project};

const BLINK: &str = include_str!("../../../projects/demo/plugins/blink/blink.c");

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("kiln.project"), "{}").unwrap();
    fs::create_dir_all(dir.path().join("plugins/blink")).unwrap();
    fs::write(dir.path().join("plugins/blink/blink.c"), BLINK).unwrap();
    dir
}

fn root(dir: &tempfile::TempDir) -> std::path::PathBuf {
    fs::canonicalize(dir.path()).unwrap()
}

/// Loads the plugin folders `list` of the project at `root`, building as needed.
fn load(root: &Path, list: &[&str], registry: &mut Registry) -> ProjectPlugins {
    load_with(root, list, registry, Build::IfNeeded)
}

fn load_with(root: &Path, list: &[&str], registry: &mut Registry, build: Build) -> ProjectPlugins {
    let entries: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    load_project(root, &entries, registry, build)
}

#[test]
fn a_c_plugin_folder_is_built_once_and_loaded_in_place_or_from_a_private_copy() {
    let dir = project();
    let root = root(&dir);
    let mut registry = Registry::with_builtins();
    let plugins = load(&root, &["plugins/blink"], &mut registry);
    assert!(plugins.errors.is_empty(), "{:?}", plugins.errors);
    assert_eq!(plugins.built.len(), 1);
    assert_eq!(plugins.loaded[0].name, "blink");
    let ty = registry.component("blink").unwrap();
    let glow = ty.fields.iter().find(|f| f.name == "glow").unwrap();
    assert!(
        matches!(&glow.kind, kiln_core::FieldKind::ResourceRef { resource_type } if resource_type == "material"),
        "{glow:?}"
    );

    let folder = PluginFolder::find(&root, "plugins/blink").unwrap();
    assert!(matches!(folder.source, PluginSource::C(_)));
    assert!(folder.built.is_file());
    assert!(!folder.needs_build());
    // Only the built library, what it was built from and the types it registered
    // are kept.
    let mut private: Vec<String> = fs::read_dir(folder.built.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    private.sort();
    assert_eq!(
        private,
        [
            format!("plugin{}", std::env::consts::DLL_SUFFIX),
            "plugin.sources".into(),
            "plugin.types".into()
        ]
    );
    assert_eq!(folder.recorded_types(), ["blink", "door"]);

    // A command loads the library in place, once: a second load while the first is
    // alive is refused (the loader would hand back the first). The editor loads a
    // private copy, which is new code, and leaves no copy behind.
    let mut second = Registry::with_builtins();
    let again = load(&root, &["plugins/blink"], &mut second);
    assert!(again.built.is_empty());
    assert!(
        matches!(again.errors[..], [PluginError::AlreadyLoaded { .. }]),
        "{:?}",
        again.errors
    );
    let copy = folder.load(&mut second).unwrap();
    assert_eq!(copy.path, folder.built);
    assert_eq!(
        fs::read_dir(folder.built.parent().unwrap())
            .unwrap()
            .count(),
        3,
        "no private copy is left"
    );
    drop((plugins, registry, copy, second));

    // An edited source, saved right after the build (within the file system's clock
    // tick): built again, or refused without.
    fs::write(
        root.join("plugins/blink/blink.c"),
        BLINK.replace("\"1\"", "\"2\""),
    )
    .unwrap();
    assert!(folder.needs_build());
    let mut third = Registry::with_builtins();
    let stale = load_with(&root, &["plugins/blink"], &mut third, Build::Never);
    assert!(
        matches!(stale.errors[..], [PluginError::NotBuilt { .. }]),
        "{:?}",
        stale.errors
    );
    let rebuilt = load(&root, &["plugins/blink"], &mut third);
    assert!(rebuilt.errors.is_empty(), "{:?}", rebuilt.errors);
    let period = third.component("blink").unwrap().fields[0].clone();
    assert_eq!(period.default, serde_json::json!(2));
}

#[test]
fn a_build_error_carries_the_compilers_words_and_others_still_load() {
    let dir = project();
    let root = root(&dir);
    fs::create_dir_all(root.join("plugins/broken")).unwrap();
    fs::write(root.join("plugins/broken/broken.c"), "int main( {\n").unwrap();
    let mut registry = Registry::with_builtins();
    let plugins = load(&root, &["plugins/broken", "plugins/blink"], &mut registry);
    assert_eq!(plugins.loaded.len(), 1, "blink still loads");
    let [PluginError::BuildFailed { entry, output }] = &plugins.errors[..] else {
        panic!("{:?}", plugins.errors)
    };
    assert_eq!(entry, "plugins/broken");
    assert!(output.contains("broken.c:1:"), "{output}");
}

#[test]
fn folders_that_cannot_be_plugins_are_named_with_the_reason() {
    let dir = project();
    let root = root(&dir);
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("x.c"), "int x;").unwrap();
    kiln_core::os::symlink(outside.path(), root.join("plugins/away")).unwrap();
    fs::create_dir_all(root.join("plugins/empty")).unwrap();
    fs::create_dir_all(root.join("plugins/two")).unwrap();
    let dll = std::env::consts::DLL_SUFFIX;
    fs::write(root.join(format!("plugins/two/liba{dll}")), "x").unwrap();
    fs::write(root.join(format!("plugins/two/libb{dll}")), "x").unwrap();
    for (entry, says) in [
        ("plugins/missing", "the folder does not exist"),
        ("plugins/away", "symbolic link"),
        (
            "plugins/empty",
            "it holds no Cargo.toml, no .c file and no built library",
        ),
        ("plugins/two", "several libraries"),
        ("plugins/blink/blink.c", "it is not a folder"),
    ] {
        let e = PluginFolder::find(&root, entry).unwrap_err().to_string();
        assert!(e.contains(entry) && e.contains(says), "{entry}: {e}");
    }
    // Nothing was built outside.
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
}

#[test]
fn a_folder_with_a_built_library_loads_it_and_a_bad_one_is_named() {
    let dir = project();
    let root = root(&dir);
    let mut registry = Registry::with_builtins();
    let built = load(&root, &["plugins/blink"], &mut registry);
    assert!(built.errors.is_empty());
    let library = PluginFolder::find(&root, "plugins/blink").unwrap().built;
    drop(built);
    drop(registry);
    let dll = std::env::consts::DLL_SUFFIX;
    fs::create_dir_all(root.join("plugins/prebuilt")).unwrap();
    fs::copy(
        &library,
        root.join(format!("plugins/prebuilt/libblink{dll}")),
    )
    .unwrap();
    fs::create_dir_all(root.join("plugins/junk")).unwrap();
    fs::write(
        root.join(format!("plugins/junk/libjunk{dll}")),
        "not a library",
    )
    .unwrap();
    let mut registry = Registry::with_builtins();
    let plugins = load(&root, &["plugins/prebuilt", "plugins/junk"], &mut registry);
    assert_eq!(plugins.loaded.len(), 1);
    assert_eq!(
        plugins.loaded[0].path,
        root.join(format!("plugins/prebuilt/libblink{dll}"))
    );
    let e = plugins.errors[0].to_string();
    assert!(e.contains(&format!("plugins/junk/libjunk{dll}")), "{e}");
    assert!(e.contains("not a loadable library"), "{e}");
    assert!(
        !e.contains("loaded-"),
        "the private copy is not what the user knows: {e}"
    );
}

#[test]
fn kilns_plugin_folder_as_a_link_is_not_written_through() {
    let dir = project();
    let root = root(&dir);
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.join(".kiln")).unwrap();
    kiln_core::os::symlink(outside.path(), root.join(".kiln/plugins")).unwrap();
    let mut registry = Registry::with_builtins();
    let plugins = load(&root, &["plugins/blink"], &mut registry);
    assert!(plugins.loaded.is_empty());
    let e = plugins.errors[0].to_string();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(!Path::new(&outside.path().join("include")).exists());
}

#[test]
fn what_a_killed_build_left_is_removed_and_a_running_build_is_left_alone() {
    let dir = project();
    let root = root(&dir);
    let mut registry = Registry::with_builtins();
    assert!(
        load(&root, &["plugins/blink"], &mut registry)
            .errors
            .is_empty()
    );
    let private = PluginFolder::find(&root, "plugins/blink").unwrap().built;
    let private = private.parent().unwrap();
    // Named as Kiln names them: the file, then the process that wrote it.
    let named = |what: &str, pid: u32| {
        kiln_core::fs::temp_name(std::ffi::OsStr::new(what), pid)
            .into_string()
            .unwrap()
    };
    let dll = std::env::consts::DLL_SUFFIX;
    // Past any pid the kernel hands out: killed processes' files.
    let old = [
        named(&format!("building-0{dll}"), 999_999_999),
        named(&format!("cc-output-1{dll}"), 999_999_999),
        named(&format!("loaded-2{dll}"), 999_999_999),
    ];
    for name in &old {
        fs::write(private.join(name), "half a library").unwrap();
    }
    // Another process's build in progress (pid 1 always runs): kept.
    let fresh = named(&format!("building-0{dll}"), 1);
    fs::write(private.join(&fresh), "half a library").unwrap();
    kiln_plugin_host::project::remove_stale_copies(&root);
    for name in &old {
        assert!(!private.join(name).exists(), "{name} is left");
    }
    assert!(private.join(&fresh).exists());
    assert!(private.join(format!("plugin{dll}")).exists());
}

#[test]
fn a_library_or_stamp_planted_in_kilns_folder_is_not_trusted() {
    let dir = project();
    let root = root(&dir);
    let mut registry = Registry::with_builtins();
    assert!(
        load(&root, &["plugins/blink"], &mut registry)
            .errors
            .is_empty()
    );
    drop(registry);
    let folder = PluginFolder::find(&root, "plugins/blink").unwrap();
    // plugin.so linked to a library outside, with the right stamp beside it.
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("libother.so");
    fs::rename(&folder.built, &elsewhere).unwrap();
    kiln_core::os::symlink(&elsewhere, &folder.built).unwrap();
    assert!(folder.needs_build(), "a link is not what Kiln built");
    let mut registry = Registry::with_builtins();
    let plugins = load(&root, &["plugins/blink"], &mut registry);
    assert!(plugins.errors.is_empty(), "{:?}", plugins.errors);
    assert_eq!(plugins.built.len(), 1, "built again");
    assert!(
        !fs::symlink_metadata(&folder.built)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(elsewhere.is_file(), "the file outside is untouched");
    drop((plugins, registry));
    // A FIFO where the stamp is: read as nothing (a rebuild), never waited on.
    fs::remove_file(folder.stamp_path()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(folder.stamp_path())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(folder.needs_build());
}

/// A C plugin gives its compiler and linker flags in `kiln_plugin.json`: a
/// definition the source needs and a library it links (`-lm` for `sinf`) reach the
/// build; a file that is not the flags it should be is an error naming its line and
/// column, and the plugin is not built.
#[test]
fn a_c_plugin_gives_its_compiler_and_linker_flags_in_its_folder() {
    let dir = project();
    let root = root(&dir);
    // Compiles only with BLINK_SCALE defined; calls sinf from libm.
    let source = BLINK.replacen(
        "#include <stdlib.h>",
        "#include <stdlib.h>\n#include <math.h>\n#ifndef BLINK_SCALE\n#error BLINK_SCALE is not defined\n#endif\nfloat blink_wave(float t) { return BLINK_SCALE * sinf(t); }",
        1,
    );
    fs::write(root.join("plugins/blink/blink.c"), source).unwrap();
    let flags = root.join("plugins/blink/kiln_plugin.json");
    fs::write(
        &flags,
        "{\"cflags\": [\"-DBLINK_SCALE=2\"], \"ldflags\": [\"-lm\"]}",
    )
    .unwrap();
    let mut registry = Registry::with_builtins();
    let plugins = load(&root, &["plugins/blink"], &mut registry);
    assert!(plugins.errors.is_empty(), "{:?}", plugins.errors);
    assert_eq!(plugins.loaded.len(), 1);
    drop(plugins);

    // Without the definition, the compiler's own words say what is missing.
    let errors_with = |text: &str| {
        fs::write(&flags, text).unwrap();
        let plugins = load(&root, &["plugins/blink"], &mut Registry::with_builtins());
        let said: String = plugins.errors.iter().map(ToString::to_string).collect();
        (said, plugins.loaded.len())
    };
    let (said, _) = errors_with("{\"ldflags\": [\"-lm\"]}");
    assert!(said.contains("BLINK_SCALE is not defined"), "{said}");

    // A malformed file: its place.
    let (said, loaded) = errors_with("{\"cflags\": \"-O3\"}");
    assert!(said.contains("kiln_plugin.json:1:"), "{said}");
    assert_eq!(loaded, 0);
}

#[test]
fn a_load_error_names_the_folder_as_kiln_project_lists_it_not_kilns_build() {
    let dir = project();
    let root = root(&dir);
    fs::create_dir_all(root.join("plugins/sway_noplug")).unwrap();
    // Builds, but is no plugin: no entry point.
    fs::write(
        root.join("plugins/sway_noplug/sway.c"),
        "int sway_speed(void) { return 3; }\n",
    )
    .unwrap();
    let mut registry = Registry::with_builtins();
    let plugins = load(&root, &["plugins/sway_noplug"], &mut registry);
    let [e] = &plugins.errors[..] else {
        panic!("{:?}", plugins.errors)
    };
    let said = e.to_string();
    assert!(said.contains("plugins/sway_noplug"), "{said}");
    assert!(!said.contains(".kiln"), "{said}");
    // Positive control: the folder's library was built under .kiln/ (what the
    // message used to name).
    let folder = PluginFolder::find(&root, "plugins/sway_noplug").unwrap();
    assert!(
        folder.built.starts_with(root.join(".kiln")),
        "{:?}",
        folder.built
    );
}
