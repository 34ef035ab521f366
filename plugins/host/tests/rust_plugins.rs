//! Plugins written in Rust with the SDK, built here with cargo as a user would build
//! theirs: the example wind plugin end to end, and a plugin whose callbacks panic
//! (the panic stays on its side of the boundary).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use kiln_core::{EntityManager, Registry, World, compile_level, spawn_level};
use kiln_plugin_host::{load, take_messages};

/// Plugins log into one process-wide queue: tests that read it run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Builds workspace package `package` (a cdylib) and returns its library. A target
/// folder of its own keeps this clear of the cargo that runs the tests.
fn build(package: &str) -> PathBuf {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let target = root.join("target/plugin-tests");
    let out = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["build", "--offline", "-p", package, "--target-dir"])
        .arg(&target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join(format!("debug/lib{package}.so"))
}

/// The demo's wind plugin, built as Kiln builds it in any project (against the SDK
/// it carries), in the demo's own `.kiln/` so that the tests share one build.
fn build_wind() -> PathBuf {
    let root =
        std::fs::canonicalize(concat!(env!("CARGO_MANIFEST_DIR"), "/../../projects/demo")).unwrap();
    let folder = kiln_plugin_host::project::PluginFolder::find(&root, "plugins/wind").unwrap();
    if folder.needs_build() {
        folder.build().unwrap();
    }
    folder.built
}

#[test]
fn the_wind_plugin_registers_compiles_spawns_and_sways() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lib = build_wind();
    let mut registry = Registry::with_builtins();
    let plugin = load(&lib, &mut registry).unwrap();
    assert_eq!(
        (plugin.name.as_str(), plugin.component_types.as_slice()),
        ("wind", &["wind".to_owned()][..])
    );
    let wind = registry.component("wind").unwrap();
    let leaves = wind.field("leaves").unwrap();
    assert_eq!(
        leaves.referenced_type(),
        Some("material"),
        "a typed reference"
    );

    let level = r#"{"entities": [
        {"id": "flag", "components": {"transform": {"position": [0, 2, 0]},
            "wind": {"direction": [1, 0, 0], "strength": 0.5, "gusts": 1, "leaves": "materials/cloth"}}},
        {"id": "trunk", "components": {"transform": {"position": [10, 1, 0]}}},
        {"id": "canopy", "parent": "trunk", "components": {"transform": {"position": [0, 2, 0]},
            "wind": {"direction": [0, 0, 1], "strength": 0.25, "gusts": 1}}}
    ]}"#;
    let blob = compile_level(&registry, &mut HashMap::new(), "levels/l.level", level)
        .unwrap()
        .blob;
    let (mut em, mut world) = (EntityManager::new(), World::new());
    let spawned = spawn_level(&blob, &registry, &mut em, &mut world).unwrap();
    // A quarter of a gust: the full strength along the direction.
    world.simulate(0.25, &em);
    let t = world
        .transforms
        .lookup(spawned.entity("flag").unwrap())
        .unwrap();
    let at = world.transforms.world(t).translation;
    assert!(
        (at.x - 0.5).abs() < 1e-4 && (at.y - 2.0).abs() < 1e-4,
        "{at:?}"
    );
    // A child sways about where it sits on its parent, not about its world position
    // taken as a local one (which flung canopies off their trunks).
    let t = world
        .transforms
        .lookup(spawned.entity("canopy").unwrap())
        .unwrap();
    let at = world.transforms.world(t).translation;
    assert!(
        (at - glam::Vec3A::new(10.0, 3.0, 0.25)).length() < 1e-4,
        "{at:?}"
    );
    world.despawn(&mut em, &spawned);
    assert_eq!(world.extension_named_mut("wind").unwrap().len(), 0);
}

#[test]
fn a_panicking_plugin_callback_does_not_take_kiln_down() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lib = build("kiln_test_panicky");
    let mut registry = Registry::with_builtins();
    let plugin = load(&lib, &mut registry).unwrap();
    take_messages();

    // A panic in create fails the spawn with the SDK's code, and nothing else.
    let failing = r#"{"entities": [{"id": "a", "components": {"transform": {}, "panicky": {"fail": true}}}]}"#;
    let blob = compile_level(&registry, &mut HashMap::new(), "levels/f.level", failing)
        .unwrap()
        .blob;
    let (mut em, mut world) = (EntityManager::new(), World::new());
    let e = spawn_level(&blob, &registry, &mut em, &mut world).unwrap_err();
    assert!(
        e.to_string().contains("create failed with code -1000"),
        "{e}"
    );
    let logged = take_messages();
    assert!(
        logged
            .iter()
            .any(|m| m.level == 2 && m.text.contains("panicked in create: asked to fail")),
        "{logged:?}"
    );

    // A panic in simulate is reported once; the type is not called again. A fresh
    // load, once everything of the first is gone (a library is loaded once).
    drop((world, registry, plugin));
    let mut registry = Registry::with_builtins();
    let _plugin = load(&lib, &mut registry).unwrap();
    let fine = r#"{"entities": [{"id": "a", "components": {"transform": {}, "panicky": {}}}]}"#;
    let blob = compile_level(&registry, &mut HashMap::new(), "levels/g.level", fine)
        .unwrap()
        .blob;
    let (mut em, mut world) = (EntityManager::new(), World::new());
    spawn_level(&blob, &registry, &mut em, &mut world).unwrap();
    world.simulate(0.1, &em);
    world.simulate(0.1, &em);
    let logged = take_messages();
    let panics = logged
        .iter()
        .filter(|m| {
            m.text
                .contains("panicked in simulate: simulate always panics")
        })
        .count();
    assert_eq!(panics, 1, "{logged:?}");
}
