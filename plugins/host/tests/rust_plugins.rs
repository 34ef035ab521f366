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
    build_with(package, "plugin-tests", &[])
}

/// [`build`] with `features`, into a target folder `target_name` of its own.
fn build_with(package: &str, target_name: &str, features: &[&str]) -> PathBuf {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let target = root.join("target").join(target_name);
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(&root)
        .args(["build", "--offline", "-p", package, "--target-dir"])
        .arg(&target);
    if !features.is_empty() {
        cargo.args(["--features", &features.join(",")]);
    }
    let out = cargo.output().expect("cargo runs");
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
    // Said as what it is: the plugin, the callback and the panic's message (the
    // blob is fine).
    assert!(
        e.to_string()
            .contains("plugin panicky: component panicky panicked in create: asked to fail")
            && !e.to_string().contains("corrupt"),
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

#[test]
fn panics_in_init_destroy_and_gc_are_reported_with_the_plugin_and_the_message() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lib = build_with("kiln_test_panicky", "plugin-tests-init", &["panic_in_init"]);
    let mut registry = Registry::with_builtins();
    let e = load(&lib, &mut registry).unwrap_err();
    assert_eq!(
        e.to_string(),
        "plugin panicky panicked in init: asked to fail in init"
    );
    take_messages();

    let lib = build("kiln_test_panicky");
    for (fail_in, callback) in [(1, "destroy"), (2, "gc")] {
        let mut registry = Registry::with_builtins();
        let plugin = load(&lib, &mut registry).unwrap();
        let text = format!(
            r#"{{"entities": [{{"id": "a", "components": {{"transform": {{}}, "panicky": {{"nan": true, "fail_in": {fail_in}}}}}}}]}}"#
        );
        let blob = compile_level(&registry, &mut HashMap::new(), "levels/p.level", &text)
            .unwrap()
            .blob;
        let (mut em, mut world) = (EntityManager::new(), World::new());
        let spawned = spawn_level(&blob, &registry, &mut em, &mut world).unwrap();
        if fail_in == 1 {
            // Kiln collects plugin instances in gc; destroy is the manager's own
            // call, made here as a world with immediate destruction would.
            world
                .extension_named_mut("panicky")
                .unwrap()
                .destroy_entity(spawned.entities[0]);
        } else {
            for e in &spawned.entities {
                em.destroy(*e);
            }
            world.gc(&em);
        }
        let logged = take_messages();
        assert!(
            logged.iter().any(|m| m.level == 2
                && m.text.contains(&format!(
                    "plugin panicky: component panicky panicked in {callback}: asked to fail in {callback}"
                ))),
            "{logged:?}"
        );
        drop((world, registry, plugin));
    }
}

#[test]
fn the_world_api_refuses_numbers_that_are_not_finite_and_says_so_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lib = build("kiln_test_panicky");
    let mut registry = Registry::with_builtins();
    let _plugin = load(&lib, &mut registry).unwrap();
    take_messages();
    let text = r#"{"entities": [{"id": "a", "components": {"transform": {"position": [1, 2, 3]}, "panicky": {"nan": true}}}]}"#;
    let blob = compile_level(&registry, &mut HashMap::new(), "levels/n.level", text)
        .unwrap()
        .blob;
    let (mut em, mut world) = (EntityManager::new(), World::new());
    let spawned = spawn_level(&blob, &registry, &mut em, &mut world).unwrap();
    assert!(
        take_messages()
            .iter()
            .any(|m| m.level == 0 && m.text == "panicky created 1"),
        "the SDK's log works outside init"
    );
    for _ in 0..3 {
        world.simulate(0.1, &em);
    }
    let e = spawned.entities[0];
    let transforms = &world.transforms;
    let i = transforms.lookup(e).unwrap();
    let at = transforms.local(i).translation;
    assert_eq!(at.to_array(), [1.0, 2.0, 3.0], "the pose is left as it was");
    let logged = take_messages();
    let said = logged
        .iter()
        .filter(|m| m.text.contains("not a finite number"))
        .count();
    assert_eq!(said, 1, "{logged:?}");
}
