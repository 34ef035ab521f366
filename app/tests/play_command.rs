//! `kiln play`: a level simulated headless with its plugins, its world poses and
//! the plugins' log written as JSON, so that a plugin's behaviour can be asserted
//! in a test. The demo's two plugins are asserted here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;

/// `kiln play` of `level` for `frames` frames of `dt` seconds in `dir`: the JSON.
fn play(dir: &std::path::Path, level: &str, frames: u32, dt: f32) -> Value {
    let (code, out, err) = support::kiln(
        &[
            "play",
            level,
            "--frames",
            &frames.to_string(),
            "--dt",
            &dt.to_string(),
        ],
        dir,
    );
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str(&out).unwrap()
}

/// The pose of the entity `id` in a report.
fn pose<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {report}"))
}

/// The C plugin `blink` shrinks its entity to `off_scale` for the last 40% of every
/// period (1.2 s in the demo's bulb), and the Rust plugin `wind` sways the canopies.
#[test]
fn the_demo_plugins_move_what_they_say_they_move() {
    let dir = support::demo_copy();
    let glass = "desk_lamp/head/glass";
    let scale = |r: &Value| r["scale"][0].as_f64().unwrap();
    let at_start = play(dir.path(), "levels/workshop", 0, 0.05);
    assert_eq!(at_start["schema"], "kiln-play/1");
    assert_eq!(at_start["frames"], 0);
    let on = scale(pose(&at_start, glass));
    // 0.5 s: lit, its own size; 1.0 s: off, half of it (off_scale 0.5).
    let lit = play(dir.path(), "levels/workshop", 10, 0.05);
    assert_eq!(scale(pose(&lit, glass)), on);
    let off = play(dir.path(), "levels/workshop", 20, 0.05);
    assert!(
        (scale(pose(&off, glass)) - on * 0.5).abs() < 1e-6,
        "{}",
        pose(&off, glass)
    );
    assert!((off["seconds"].as_f64().unwrap() - 1.0).abs() < 1e-6);

    let canopy = "tree_01/canopy";
    let still = play(dir.path(), "levels/forest", 0, 0.1);
    let swayed = play(dir.path(), "levels/forest", 10, 0.1);
    assert_ne!(
        pose(&still, canopy)["position"],
        pose(&swayed, canopy)["position"]
    );
    // Entities no plugin moves stay put.
    assert_eq!(pose(&still, "boulder"), pose(&swayed, "boulder"));
}

/// `--dump FILE` writes the report there; a frame count or step out of bounds is a
/// usage error naming the option.
#[test]
fn play_writes_to_a_file_and_refuses_unbounded_runs() {
    let dir = support::demo_copy();
    let dump = dir.path().join("out/play.json");
    std::fs::create_dir_all(dump.parent().unwrap()).unwrap();
    let (code, out, err) = support::kiln(
        &[
            "play",
            "levels/workshop",
            "--frames",
            "3",
            "--dump",
            dump.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(report["frames"], 3);
    for (args, says) in [
        (["--frames", "1000000000"], "--frames"),
        (["--dt", "0"], "--dt"),
        (["--dt", "NaN"], "--dt"),
    ] {
        let mut all = vec!["play", "levels/workshop"];
        all.extend(args);
        let (code, _, err) = support::kiln(&all, dir.path());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A C plugin whose `simulate` never returns from its third call on.
const STUCK_C: &str = r#"
#include "kiln_plugin.h"
#define STR(s) { (const uint8_t *)(s), sizeof(s) - 1 }
static int calls;
static KilnResult create(void *u, const KilnEntity *e, size_t n, const uint8_t *d, size_t r) {
    (void)u; (void)e; (void)n; (void)d; (void)r; return 0;
}
static void destroy(void *u, KilnEntity e) { (void)u; (void)e; }
static void gc(void *u, KilnAliveFn a, void *c) { (void)u; (void)a; (void)c; }
static void simulate(void *u, float dt, const KilnWorldApiV0 *w) {
    (void)u; (void)dt; (void)w;
    if (++calls >= 3) { for (;;) { __asm__ volatile(""); } }
}
static KilnResult init(KilnGetApi get) {
    const KilnRegistryApiV0 *registry = get(KILN_REGISTRY_API_ID, 0);
    if (!registry) return 1;
    KilnComponentDeclV0 decl = {
        STR("stuck"), 50, STR("Hangs."), NULL, 0, NULL, create, destroy, gc, simulate,
    };
    return registry->register_component(registry->ctx, &decl);
}
static void shutdown(void) {}
static const KilnPluginApiV0 api = { STR("stuck"), init, shutdown, NULL };
const void *kiln_get_plugin_api(uint32_t api_id, uint32_t version) {
    return api_id == KILN_PLUGIN_API_ID && version == 0 ? &api : NULL;
}
"#;

#[test]
fn a_plugin_that_never_returns_is_stopped_named_and_the_frames_completed_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("kiln.project"),
        r#"{"plugins": ["plugins/stuck"]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("plugins/stuck")).unwrap();
    std::fs::write(root.join("plugins/stuck/stuck.c"), STUCK_C).unwrap();
    std::fs::create_dir_all(root.join("levels")).unwrap();
    std::fs::write(
        root.join("levels/a.level"),
        r#"{"entities": [{"id": "a", "components": {"transform": {"position": [1, 2, 3]}, "stuck": {}}}]}"#,
    )
    .unwrap();
    let dump = root.join("play.json");
    let started = std::time::Instant::now();
    let (code, out, err) = support::kiln(
        &[
            "play",
            "levels/a",
            "--trust",
            "--frames",
            "10",
            "--frame-budget",
            "0.5",
            "--dump",
            dump.to_str().unwrap(),
        ],
        root,
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(started.elapsed().as_secs() < 60, "stopped, not waited out");
    assert!(
        err.contains("frame 3 ran past the frame budget of 0.5 s: component \"stuck\" (plugin stuck) did not return from simulate"),
        "{err}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(report["frames"], 2, "{report}");
    assert_eq!(report["stopped"]["frame"], 3, "{report}");
    assert_eq!(
        pose(&report, "a")["position"],
        serde_json::json!([1.0, 2.0, 3.0])
    );
}

/// The demo's sliding door names its pressure plate in an entity field: it is open
/// while the plate is down, shut while it is up, and shut for good when the field
/// names no entity. A field naming an entity the level lacks fails `kiln check` and
/// `kiln compile`, naming the field.
#[test]
fn the_demo_door_opens_while_the_entity_its_field_names_is_pressed() {
    let dir = support::demo_copy();
    let door_x = |r: &Value| pose(r, "sliding_door")["position"][0].as_f64().unwrap();
    let plate_y = |r: &Value| pose(r, "pressure_plate")["position"][1].as_f64().unwrap();
    let start = play(dir.path(), "levels/workshop", 0, 0.05);
    // The plate goes down for the first 2 s of each 4, up for the next 2.
    let down = play(dir.path(), "levels/workshop", 20, 0.05);
    let up = play(dir.path(), "levels/workshop", 60, 0.05);
    assert!(plate_y(&down) < plate_y(&start) - 0.03);
    assert!(plate_y(&up) > plate_y(&start));
    assert!(
        (door_x(&down) - (door_x(&start) + 1.4)).abs() < 1e-4,
        "{down}"
    );
    assert!((door_x(&up) - door_x(&start)).abs() < 1e-4, "{up}");

    let level = dir.path().join("levels/workshop.level");
    let text = std::fs::read_to_string(&level).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let set_switch = |doc: &mut Value, to: &str| {
        let entities = doc["entities"].as_array_mut().unwrap();
        let door = entities
            .iter_mut()
            .find(|e| e["id"] == "sliding_door")
            .unwrap();
        door["components"]["door"]["switch"] = Value::from(to);
    };
    set_switch(&mut doc, "");
    std::fs::write(&level, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let alone = play(dir.path(), "levels/workshop", 20, 0.05);
    assert!((door_x(&alone) - door_x(&start)).abs() < 1e-4, "{alone}");

    set_switch(&mut doc, "trapdoor");
    std::fs::write(&level, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let (code, out, err) = support::kiln(&["check", "--trust"], dir.path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "levels/workshop.level: entity \"sliding_door\", component \"door\", field \"switch\": names no entity \"trapdoor\" of the level"
        ),
        "{out}"
    );
    let (code, out, _) = support::kiln(&["check", "--trust", "--json"], dir.path());
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["entity_fields"][0]["field"], "switch", "{report}");
    let (code, out, _) = support::kiln(&["compile", "levels/workshop", "--trust"], dir.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("names no entity \"trapdoor\""), "{out}");
}
