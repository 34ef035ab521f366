//! The C header and the Rust ABI are the same thing written twice: compile the header
//! with the system C compiler and compare every struct's size and field offsets, and
//! the API ids, with the Rust definitions.

use std::mem::{offset_of, size_of};
use std::process::Command;

use kiln_plugin::abi::*;

#[test]
fn the_c_header_has_the_rust_layout() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let program = r#"
#include <stdio.h>
#include <stddef.h>
#include "kiln_plugin.h"
#define S(t) printf(#t " %zu\n", sizeof(t));
#define O(t, f) printf(#t "." #f " %zu\n", offsetof(t, f));
int main(void) {
    S(KilnStr) O(KilnStr, len)
    S(KilnPluginApiV0) O(KilnPluginApiV0, init) O(KilnPluginApiV0, shutdown) O(KilnPluginApiV0, update)
    S(KilnFieldDecl) O(KilnFieldDecl, kind) O(KilnFieldDecl, min) O(KilnFieldDecl, max)
    O(KilnFieldDecl, resource_type) O(KilnFieldDecl, default_json) O(KilnFieldDecl, doc)
    S(KilnComponentDeclV0) O(KilnComponentDeclV0, spawn_order) O(KilnComponentDeclV0, doc)
    O(KilnComponentDeclV0, fields) O(KilnComponentDeclV0, field_count) O(KilnComponentDeclV0, user)
    O(KilnComponentDeclV0, create) O(KilnComponentDeclV0, destroy) O(KilnComponentDeclV0, gc)
    O(KilnComponentDeclV0, simulate)
    S(KilnRegistryApiV0) O(KilnRegistryApiV0, ctx)
    S(KilnWorldApiV0) O(KilnWorldApiV0, world_pose) O(KilnWorldApiV0, set_local_translation) O(KilnWorldApiV0, local_pose) O(KilnWorldApiV0, set_local_pose) O(KilnWorldApiV0, ctx)
    S(KilnLogApiV0) O(KilnLogApiV0, ctx)
    printf("ids %u %u %u %u\n", KILN_PLUGIN_API_ID, KILN_REGISTRY_API_ID, KILN_WORLD_API_ID, KILN_LOG_API_ID);
    printf("results %d %d\n", KILN_OK, KILN_PANICKED);
    printf("kinds %d %d %d %d %d %d %d %d\n", KILN_FIELD_BOOL, KILN_FIELD_INT, KILN_FIELD_FLOAT,
        KILN_FIELD_VEC3, KILN_FIELD_ANGLES, KILN_FIELD_COLOR, KILN_FIELD_RESOURCE,
        KILN_FIELD_ENTITY);
    printf("no entity %llu\n", (unsigned long long)KILN_NO_ENTITY);
    return 0;
}
"#;
    let source = dir.path().join("layout.c");
    let exe = dir.path().join("layout");
    std::fs::write(&source, program).expect("writing the C program");
    let built = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-I", include, "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .expect("a C compiler (cc) is installed");
    assert!(
        built.status.success(),
        "the header does not compile: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe)
        .output()
        .expect("the layout program runs");
    let c = String::from_utf8_lossy(&out.stdout).into_owned();

    let rust = [
        ("KilnStr", size_of::<KilnStr>()),
        ("KilnStr.len", offset_of!(KilnStr, len)),
        ("KilnPluginApiV0", size_of::<KilnPluginApiV0>()),
        ("KilnPluginApiV0.init", offset_of!(KilnPluginApiV0, init)),
        (
            "KilnPluginApiV0.shutdown",
            offset_of!(KilnPluginApiV0, shutdown),
        ),
        (
            "KilnPluginApiV0.update",
            offset_of!(KilnPluginApiV0, update),
        ),
        ("KilnFieldDecl", size_of::<KilnFieldDecl>()),
        ("KilnFieldDecl.kind", offset_of!(KilnFieldDecl, kind)),
        ("KilnFieldDecl.min", offset_of!(KilnFieldDecl, min)),
        ("KilnFieldDecl.max", offset_of!(KilnFieldDecl, max)),
        (
            "KilnFieldDecl.resource_type",
            offset_of!(KilnFieldDecl, resource_type),
        ),
        (
            "KilnFieldDecl.default_json",
            offset_of!(KilnFieldDecl, default_json),
        ),
        ("KilnFieldDecl.doc", offset_of!(KilnFieldDecl, doc)),
        ("KilnComponentDeclV0", size_of::<KilnComponentDeclV0>()),
        (
            "KilnComponentDeclV0.spawn_order",
            offset_of!(KilnComponentDeclV0, spawn_order),
        ),
        (
            "KilnComponentDeclV0.doc",
            offset_of!(KilnComponentDeclV0, doc),
        ),
        (
            "KilnComponentDeclV0.fields",
            offset_of!(KilnComponentDeclV0, fields),
        ),
        (
            "KilnComponentDeclV0.field_count",
            offset_of!(KilnComponentDeclV0, field_count),
        ),
        (
            "KilnComponentDeclV0.user",
            offset_of!(KilnComponentDeclV0, user),
        ),
        (
            "KilnComponentDeclV0.create",
            offset_of!(KilnComponentDeclV0, create),
        ),
        (
            "KilnComponentDeclV0.destroy",
            offset_of!(KilnComponentDeclV0, destroy),
        ),
        (
            "KilnComponentDeclV0.gc",
            offset_of!(KilnComponentDeclV0, gc),
        ),
        (
            "KilnComponentDeclV0.simulate",
            offset_of!(KilnComponentDeclV0, simulate),
        ),
        ("KilnRegistryApiV0", size_of::<KilnRegistryApiV0>()),
        ("KilnRegistryApiV0.ctx", offset_of!(KilnRegistryApiV0, ctx)),
        ("KilnWorldApiV0", size_of::<KilnWorldApiV0>()),
        (
            "KilnWorldApiV0.world_pose",
            offset_of!(KilnWorldApiV0, world_pose),
        ),
        (
            "KilnWorldApiV0.set_local_translation",
            offset_of!(KilnWorldApiV0, set_local_translation),
        ),
        (
            "KilnWorldApiV0.local_pose",
            offset_of!(KilnWorldApiV0, local_pose),
        ),
        (
            "KilnWorldApiV0.set_local_pose",
            offset_of!(KilnWorldApiV0, set_local_pose),
        ),
        ("KilnWorldApiV0.ctx", offset_of!(KilnWorldApiV0, ctx)),
        ("KilnLogApiV0", size_of::<KilnLogApiV0>()),
        ("KilnLogApiV0.ctx", offset_of!(KilnLogApiV0, ctx)),
    ];
    for (name, value) in rust {
        let line = format!("{name} {value}");
        assert!(
            c.lines().any(|l| l == line),
            "{name}: Rust says {value}, C says {:?}",
            c.lines().find(|l| l.starts_with(&format!("{name} ")))
        );
    }
    assert!(
        c.contains(&format!(
            "ids {PLUGIN_API_ID} {REGISTRY_API_ID} {WORLD_API_ID} {LOG_API_ID}"
        )),
        "{c}"
    );
    assert!(
        c.contains(&format!("results {KILN_OK} {KILN_PANICKED}")),
        "{c}"
    );
    let kinds = [
        KilnFieldKind::Bool,
        KilnFieldKind::Int,
        KilnFieldKind::Float,
        KilnFieldKind::Vec3,
        KilnFieldKind::Angles,
        KilnFieldKind::Color,
        KilnFieldKind::Resource,
        KilnFieldKind::Entity,
    ]
    .map(|k| (k as u32).to_string())
    .join(" ");
    assert!(c.contains(&format!("kinds {kinds}")), "{c}");
    assert!(
        c.contains(&format!("no entity {}", kiln_plugin::abi::KILN_NO_ENTITY)),
        "{c}"
    );
}

/// The docs list each engine API's functions as the header declares them, in the
/// same order (a plugin author reads one beside the other).
#[test]
fn the_docs_list_the_world_api_as_the_header_declares_it() {
    let header = include_str!("../include/kiln_plugin.h");
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/plugins.md"
    ))
    .expect("docs/plugins.md");
    let start = header
        .find("typedef struct KilnWorldApiV0 {")
        .expect("the world API");
    let body = &header[start..header[start..].find("} KilnWorldApiV0;").expect("its end") + start];
    let declared: Vec<&str> = body
        .lines()
        .filter_map(|l| l.split("(*").nth(1)?.split(')').next())
        .collect();
    assert_eq!(declared.len(), 5, "{declared:?}");
    let at = docs
        .find("world API v0 (`WRLD`)")
        .expect("the docs' world API");
    let rest = &docs[at..];
    let listed: Vec<&str> = rest[..rest.find("Poses are").expect("its end")]
        .split('`')
        .skip(5)
        .step_by(2)
        .collect();
    assert_eq!(listed, declared);
}

/// Every field kind the docs' table lists has its constructor in the SDK, and what
/// the docs say a kind takes (a range for each number, a default) can be given.
#[test]
fn the_sdk_offers_a_constructor_for_every_field_kind_the_docs_list() {
    use kiln_plugin::Field;
    use kiln_plugin::abi::KilnFieldKind;
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/plugins.md"
    ))
    .expect("docs/plugins.md");
    let sdk = include_str!("../src/sdk.rs");
    let kinds: Vec<String> = docs
        .lines()
        .filter_map(|l| l.strip_prefix("| `KILN_FIELD_")?.split('`').next())
        .map(str::to_lowercase)
        .collect();
    assert_eq!(
        kinds,
        [
            "bool", "int", "float", "vec3", "angles", "color", "resource", "entity"
        ]
    );
    for kind in &kinds {
        assert!(
            sdk.contains(&format!("pub const fn {kind}(")),
            "docs/plugins.md lists KILN_FIELD_{} but the SDK has no Field::{kind}",
            kind.to_uppercase()
        );
    }
    // What the docs' second table says each kind takes.
    let int = Field::int("count", "3", 0, 5);
    assert!(matches!(int.kind, KilnFieldKind::Int) && int.min == 0.0 && int.max == 5.0);
    let angles = Field::angles("turn", "[0, 90, 0]").range(-180.0, 180.0);
    assert!(matches!(angles.kind, KilnFieldKind::Angles) && angles.max == 180.0);
    let tint = Field::color("tint", "[1, 1, 1, 1]").range(0.5, 1.0);
    assert_eq!((tint.min, tint.max), (0.5, 1.0));
    let glow = Field::resource("glow", "material").with_default("\"materials/glow\"");
    assert_eq!(glow.default_json, "\"materials/glow\"");
    let switch = Field::entity("switch");
    assert!(matches!(switch.kind, KilnFieldKind::Entity) && switch.default_json.is_empty());
}
