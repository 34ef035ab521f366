//! Plugins written in C against `kiln_plugin.h`, compiled here with the system C
//! compiler: one that works end to end (registered, compiled, spawned, simulated,
//! destroyed), and every way a library can be wrong, each a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kiln_core::{EntityManager, Registry, World, compile_level, spawn_level};
use kiln_plugin_host::{PluginError, load};

/// Compiles `source` into a shared library called `name` in `dir`.
fn build(dir: &Path, name: &str, source: &str) -> PathBuf {
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk/include");
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let lib = dir.join(format!("lib{name}.so"));
    let out = Command::new("cc")
        .args([
            "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-I", include, "-o",
        ])
        .arg(&lib)
        .arg(&c)
        .output()
        .expect("a C compiler (cc) is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

/// A plugin that registers `decl_body` (a KilnComponentDeclV0 initialiser using the
/// callbacks below) from an `init` that returns `init_result`.
fn plugin_source(name: &str, fields: &str, decl_name: &str, init_body: &str) -> String {
    format!(
        r#"
#include <string.h>
#include "kiln_plugin.h"
#define S(s) {{ (const uint8_t *)(s), sizeof(s) - 1 }}
static KilnEntity ents[64]; static float rates[64]; static size_t count;
static KilnResult create(void *u, const KilnEntity *e, size_t n, const uint8_t *data, size_t size) {{
    (void)u;
    for (size_t i = 0; i < n && count < 64; i++) {{
        ents[count] = e[i]; memcpy(&rates[count], data + i * size, 4); count++;
    }}
    return KILN_OK;
}}
static void destroy(void *u, KilnEntity e) {{
    (void)u;
    for (size_t i = 0; i < count; i++) if (ents[i] == e) {{ ents[i] = ents[--count]; rates[i] = rates[count]; return; }}
}}
static void gc(void *u, KilnAliveFn alive, void *ctx) {{
    for (size_t i = 0; i < count;) if (!alive(ctx, ents[i])) destroy(u, ents[i]); else i++;
}}
static void simulate(void *u, float dt, const KilnWorldApiV0 *w) {{
    (void)u;
    for (size_t i = 0; i < count; i++) {{
        float m[12];
        if (w->is_alive(w->ctx, ents[i]) && w->world_pose(w->ctx, ents[i], m)) {{
            float up[3] = {{ 0.0f, rates[i] * dt, 0.0f }};
            w->set_local_translation(w->ctx, ents[i], up);
        }}
    }}
}}
static const KilnFieldDecl fields[] = {{ {fields} }};
static KilnGetApi engine;
static KilnResult init(KilnGetApi get) {{
    engine = get;
    const KilnRegistryApiV0 *reg = get(KILN_REGISTRY_API_ID, 0);
    if (!reg) return 1;
    KilnComponentDeclV0 decl = {{ S("{decl_name}"), 40, S("Raises its entity."),
        fields, sizeof(fields) / sizeof(fields[0]), 0, create, destroy, gc, simulate }};
    {init_body}
    return reg->register_component(reg->ctx, &decl);
}}
static void shutdown(void) {{ count = 0; }}
static const KilnPluginApiV0 api = {{ S("{name}"), init, shutdown, 0 }};
const void *kiln_get_plugin_api(uint32_t id, uint32_t version) {{
    return id == KILN_PLUGIN_API_ID && version == 0 ? &api : 0;
}}
"#
    )
}

/// Compiles `level` and spawns it in a world of its own: the entity manager, the
/// world and the spawned level.
fn spawned(registry: &Registry, level: &str) -> (EntityManager, World, kiln_core::SpawnedLevel) {
    let blob = compile_level(registry, &mut HashMap::new(), "levels/l.level", level)
        .unwrap()
        .blob;
    let (mut em, mut world) = (EntityManager::new(), World::new());
    let level = spawn_level(&blob, registry, &mut em, &mut world).unwrap();
    (em, world, level)
}

const RATE: &str =
    r#"{ S("rate"), KILN_FIELD_FLOAT, -100, 100, S(""), S("1"), S("Metres per second.") }"#;

#[test]
fn a_c_plugin_component_is_compiled_spawned_simulated_and_destroyed() {
    let dir = tempfile::tempdir().unwrap();
    let lib = build(dir.path(), "lift", &plugin_source("lift", RATE, "lift", ""));
    let mut registry = Registry::with_builtins();
    let plugin = load(&lib, &mut registry).unwrap();
    assert_eq!(plugin.name, "lift");
    assert_eq!(plugin.component_types, ["lift"]);
    let ty = registry.component("lift").unwrap();
    assert_eq!(ty.fields[0].name, "rate");
    assert_eq!(ty.fields[0].doc, "Metres per second.");

    let level = r#"{"entities": [
        {"id": "a", "components": {"transform": {"position": [0, 1, 0]}, "lift": {"rate": 2}}},
        {"id": "b", "components": {"transform": {}, "lift": {}}}
    ]}"#;
    let (mut em, mut world, spawned) = spawned(&registry, level);
    assert_eq!(world.extension_named_mut("lift").unwrap().len(), 2);
    world.simulate(0.5, &em);
    let y = |world: &World, id: &str| {
        let t = world
            .transforms
            .lookup(spawned.entity(id).unwrap())
            .unwrap();
        world.transforms.world(t).translation.y
    };
    // The plugin set each local translation to rate * dt up: 1.0 and 0.5 (default 1).
    assert_eq!(y(&world, "a"), 1.0);
    assert_eq!(y(&world, "b"), 0.5);
    // The world API's is_alive asks the entity manager: a dead entity whose
    // transform has not been collected yet is left alone.
    assert!(em.destroy(spawned.entity("b").unwrap()));
    world.simulate(0.25, &em);
    assert_eq!(y(&world, "a"), 0.5);
    assert_eq!(y(&world, "b"), 0.5);
    world.despawn(&mut em, &spawned);
    assert_eq!(world.extension_named_mut("lift").unwrap().len(), 0);
}

fn load_error(name: &str, source: &str) -> (PluginError, Registry) {
    let dir = tempfile::tempdir().unwrap();
    let lib = build(dir.path(), name, source);
    let mut registry = Registry::with_builtins();
    let error = load(&lib, &mut registry).unwrap_err();
    (error, registry)
}

#[test]
fn a_library_that_does_not_exist_or_is_not_one_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::with_builtins();
    let missing = dir.path().join("libnothing.so");
    let e = load(&missing, &mut registry).unwrap_err();
    assert!(e.to_string().contains("the library does not exist"), "{e}");
    assert!(e.to_string().contains("libnothing.so"), "{e}");
    let text = dir.path().join("libtext.so");
    std::fs::write(&text, "not a library").unwrap();
    let e = load(&text, &mut registry).unwrap_err();
    assert!(matches!(e, PluginError::NotALibrary { .. }), "{e}");
    assert!(e.to_string().contains("not a loadable library"), "{e}");
}

#[test]
fn a_library_without_the_entry_point_or_the_plugin_api_is_an_error() {
    let (e, _) = load_error("plain", "int answer(void) { return 42; }\n");
    assert!(
        e.to_string()
            .contains("does not export kiln_get_plugin_api"),
        "{e}"
    );
    let (e, _) = load_error(
        "nullapi",
        "#include \"kiln_plugin.h\"\nconst void *kiln_get_plugin_api(uint32_t i, uint32_t v) { (void)i; (void)v; return 0; }\n",
    );
    assert!(e.to_string().contains("provides no plugin API v0"), "{e}");
}

#[test]
fn an_init_that_fails_is_an_error_and_registers_nothing() {
    let (e, registry) = load_error(
        "failing",
        &plugin_source("failing", RATE, "lift", "return 7;"),
    );
    assert_eq!(
        e,
        PluginError::InitFailed {
            name: "failing".into(),
            code: 7
        }
    );
    assert!(registry.component("lift").is_none());
}

#[test]
fn a_plugin_asking_for_an_api_version_kiln_lacks_says_which() {
    let (e, _) = load_error(
        "wind",
        &plugin_source(
            "wind",
            RATE,
            "wind",
            "if (!get(KILN_WORLD_API_ID, 3)) return 2;",
        ),
    );
    assert_eq!(
        e.to_string(),
        "plugin wind needs world API v3; Kiln provides v0"
    );
}

#[test]
fn a_component_name_that_exists_is_refused() {
    let (e, registry) = load_error("dup", &plugin_source("dup", RATE, "transform", ""));
    assert!(
        e.to_string().contains(
            "plugin dup: component type \"transform\": a component type of that name already exists"
        ),
        "{e}"
    );
    assert_eq!(
        registry.component("transform").unwrap().spawn_order,
        0,
        "the built-in stays"
    );
}

#[test]
fn invalid_schemas_are_refused_with_the_field_named() {
    let cases = [
        (
            r#"{ S("rate"), 99, 0, 1, S(""), S(""), S("") }"#,
            "field \"rate\": unknown kind 99",
        ),
        (
            r#"{ S("target"), KILN_FIELD_RESOURCE, 0, 0, S(""), S(""), S("") }"#,
            "field \"target\": a resource field needs its resource type",
        ),
        (
            r#"{ S("Rate"), KILN_FIELD_FLOAT, 0, 1, S(""), S(""), S("") }"#,
            "field \"Rate\": names are lowercase",
        ),
        (
            r#"{ S("rate"), KILN_FIELD_FLOAT, 5, 1, S(""), S(""), S("") }"#,
            "field \"rate\": the range 5..=1 is not a range",
        ),
        (
            r#"{ S("rate"), KILN_FIELD_FLOAT, 0, 1, S(""), S("[1, 2"), S("") }"#,
            "field \"rate\": the default \"[1, 2\" is not JSON",
        ),
        (
            r#"{ S("rate"), KILN_FIELD_FLOAT, 0, 1, S(""), S("7"), S("") }"#,
            "field \"rate\": the default:",
        ),
    ];
    for (k, (field, expected)) in cases.iter().enumerate() {
        let name = format!("bad{k}");
        let (e, registry) = load_error(&name, &plugin_source(&name, field, "lift", ""));
        assert!(
            e.to_string().contains(expected),
            "{e} (expected {expected})"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("plugin {name}: component type \"lift\"")),
            "{e}"
        );
        assert!(registry.component("lift").is_none());
    }
}

#[test]
fn a_library_is_loaded_once_until_everything_it_registered_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let lib = build(dir.path(), "lift", &plugin_source("lift", RATE, "lift", ""));
    let mut first = Registry::with_builtins();
    let plugin = load(&lib, &mut first).unwrap();
    let mut second = Registry::with_builtins();
    let e = load(&lib, &mut second).unwrap_err();
    assert!(matches!(e, PluginError::AlreadyLoaded { .. }), "{e}");
    assert!(e.to_string().contains("loaded already"), "{e}");
    assert!(second.component("lift").is_none());
    // The registry's component type keeps the library open after shutdown.
    plugin.shutdown();
    assert!(matches!(
        load(&lib, &mut second),
        Err(PluginError::AlreadyLoaded { .. })
    ));
    drop(first);
    let again = load(&lib, &mut second).unwrap();
    assert_eq!(again.component_types, ["lift"]);
}

/// Every function pointer a C plugin may leave null: a required one (`init`,
/// `create`, `gc`, and `fields` with a non-zero count) refuses the plugin with an
/// error naming it, the component and the field, and registers nothing; an
/// optional one (`shutdown`, `update`, `destroy`, `simulate`) is done without, and
/// the plugin works. Before, a null `init` crashed every command, and a null
/// `create` crashed the editor at the first spawn.
#[test]
fn null_function_pointers_are_refused_by_name_or_done_without() {
    // `init` and `shutdown` stay defined (not static) so that -Wall has nothing to
    // say when the table leaves them out.
    let source = |decl_body: &str, table: &str| {
        plugin_source("nulls", RATE, "lift", decl_body)
            .replace("static KilnResult init(", "KilnResult init(")
            .replace("static void shutdown(", "void shutdown(")
            .replace("static void destroy(", "void destroy(")
            .replace("{ S(\"nulls\"), init, shutdown, 0 }", table)
    };
    let table = "{ S(\"nulls\"), init, shutdown, 0 }";

    let (e, registry) = load_error("noinit", &source("", "{ S(\"nulls\"), 0, shutdown, 0 }"));
    assert!(
        matches!(
            e,
            PluginError::NullFunction {
                function: "init",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("`init`") && e.to_string().contains("libnoinit.so"),
        "{e}"
    );
    assert!(registry.component("lift").is_none());

    for (body, what) in [
        ("decl.create = 0;", "`create`"),
        ("decl.gc = 0;", "`gc`"),
        ("decl.fields = 0; decl.field_count = 7;", "`fields`"),
    ] {
        let (e, registry) = load_error("nullcb", &source(body, table));
        let said = e.to_string();
        assert!(
            matches!(&e, PluginError::BadComponent { name, component, .. } if name == "nulls" && component == "lift"),
            "{body}: {e:?}"
        );
        assert!(said.contains(what), "{body}: {said}");
        assert!(registry.component("lift").is_none(), "{body}");
    }

    // Without shutdown and destroy: loads, spawns, and an entity deleted alone
    // leaves the plugin through `gc`.
    let dir = tempfile::tempdir().unwrap();
    let lib = build(
        dir.path(),
        "optional",
        &source("decl.destroy = 0;", "{ S(\"nulls\"), init, 0, 0 }"),
    );
    let mut registry = Registry::with_builtins();
    let plugin = load(&lib, &mut registry).unwrap();
    let level = r#"{"entities": [
        {"id": "a", "components": {"transform": {}, "lift": {"rate": 2}}},
        {"id": "b", "components": {"transform": {}, "lift": {}}}
    ]}"#;
    let (mut em, mut world, spawned) = spawned(&registry, level);
    let b = spawned.entity("b").unwrap();
    let lift = world.extension_named_mut("lift").unwrap();
    lift.destroy_entity(b);
    assert_eq!(lift.len(), 1);
    world.simulate(0.5, &em);
    world.despawn(&mut em, &spawned);
    assert_eq!(world.extension_named_mut("lift").unwrap().len(), 0);
    drop(world);
    plugin.shutdown();
}

/// A plugin that keeps an entity's handle past the entity's death and writes
/// through it: the write is refused (the entity it names is dead, whatever still
/// holds its index), the live entities move, and the plugin is told once, by the
/// log. Before, the write went to the dead entity's transform, or, after a
/// respawn, to whichever new entity had its index.
#[test]
fn a_write_through_a_dead_entitys_handle_is_refused_and_said_once() {
    let source = plugin_source("keeper", RATE, "keeper", "")
        // Writes without asking whether the entity is alive.
        .replace(
            "if (w->is_alive(w->ctx, ents[i]) && w->world_pose(w->ctx, ents[i], m))",
            "(void)m; if (1)",
        );
    let dir = tempfile::tempdir().unwrap();
    let lib = build(dir.path(), "keeper", &source);
    let mut registry = Registry::with_builtins();
    let _plugin = load(&lib, &mut registry).unwrap();
    let level = r#"{"entities": [
        {"id": "a", "components": {"transform": {}, "keeper": {"rate": 2}}},
        {"id": "b", "components": {"transform": {}, "keeper": {"rate": 2}}}
    ]}"#;
    let (mut em, mut world, spawned) = spawned(&registry, level);
    let _ = kiln_plugin_host::take_messages();
    let (a, b) = (spawned.entity("a").unwrap(), spawned.entity("b").unwrap());
    // b dies; its transform waits for the next collection, and the plugin keeps
    // its handle.
    assert!(em.destroy(b));
    let y = |world: &World, e| {
        let t = world.transforms.lookup(e).unwrap();
        world.transforms.local(t).translation.y
    };
    world.simulate(0.5, &em);
    assert_eq!(y(&world, a), 1.0);
    assert_eq!(
        y(&world, b),
        0.0,
        "the write through b's handle was refused"
    );
    world.simulate(0.5, &em);
    let said: Vec<String> = kiln_plugin_host::take_messages()
        .into_iter()
        .map(|m| m.text)
        .filter(|t| t.contains("no longer exists"))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("\"keeper\""), "{said:?}");
}

/// Ranges hold for every kind that has one: each number of a vector, angles or
/// colour field is checked against the declared range when a level compiles,
/// naming the entity, component and field (before, only int and float were), and a
/// default outside its range is refused when the plugin registers.
#[test]
fn ranges_hold_for_vectors_angles_and_colours() {
    let fields = format!(
        "{RATE}, {{ S(\"push\"), KILN_FIELD_VEC3, -1, 1, S(\"\"), S(\"\"), S(\"\") }}, \
         {{ S(\"tilt\"), KILN_FIELD_ANGLES, -45, 45, S(\"\"), S(\"\"), S(\"\") }}, \
         {{ S(\"tint\"), KILN_FIELD_COLOR, 0, 0.5, S(\"\"), S(\"[0.5, 0.5, 0.5, 0.5]\"), S(\"\") }}, \
         {{ S(\"free\"), KILN_FIELD_VEC3, 0, 0, S(\"\"), S(\"\"), S(\"\") }}"
    );
    let dir = tempfile::tempdir().unwrap();
    let lib = build(
        dir.path(),
        "ranged",
        &plugin_source("ranged", &fields, "lift", ""),
    );
    let mut registry = Registry::with_builtins();
    let _plugin = load(&lib, &mut registry).unwrap();
    let compile = |components: &str| {
        let level = format!(
            r#"{{"entities": [{{"id": "a", "components": {{"transform": {{}}, "lift": {components}}}}}]}}"#
        );
        compile_level(&registry, &mut HashMap::new(), "levels/l.level", &level).map(|_| ())
    };
    compile(r#"{"push": [1, -1, 0.5], "tilt": [45, 0, -45], "tint": [0.1, 0.2, 0.3, 0.5], "free": [100, 0, 0]}"#)
        .unwrap();
    for (bad, field) in [
        (r#"{"push": [2, 0, 0]}"#, "push"),
        (r#"{"tilt": [0, 90, 0]}"#, "tilt"),
        (r#"{"tint": [1, 1, 1, 1]}"#, "tint"),
    ] {
        let e = compile(bad).unwrap_err().to_string();
        assert!(
            e.contains(&format!("\"{field}\"")) && e.contains("each number in"),
            "{bad}: {e}"
        );
        assert!(e.contains("\"a\"") && e.contains("lift"), "{bad}: {e}");
    }
    // A range the kind's default (zeros) is outside of is refused at registration.
    let fields =
        format!("{RATE}, {{ S(\"push\"), KILN_FIELD_VEC3, 1, 2, S(\"\"), S(\"\"), S(\"\") }}");
    let (e, _) = load_error("offrange", &plugin_source("offrange", &fields, "lift", ""));
    assert!(e.to_string().contains("\"push\": the default"), "{e}");
}
