//! Every command's `--json` output validates against the documented schema
//! (`docs/json/kiln-output-1.schema.json`), on projects that produce every kind of
//! finding, reference status and skipped reference.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/json/kiln-output-1.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Runs `kiln ARGS --json` and validates what it printed.
fn run(validator: &jsonschema::Validator, dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut args = args.to_vec();
    args.push("--json");
    let (code, out, err) = kiln(&args, dir);
    assert!(code == 0 || code == 1, "{args:?}: {code} {err}");
    let value: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{args:?}:\n{}\n{out}", errors.join("\n"));
    value
}

/// A project with something of every kind.
fn messy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        (
            "kiln.project",
            r#"{"boot_levels": ["levels/a"], "references": {"sunit": {"mesh": "mesh"}}}"#,
        ),
        (
            "levels/a.level",
            r#"{"entities": [{"id": "e", "components": {"mesh": {"mesh": "meshes/gone", "material": "Materials\\Bad"}}}, {"id": "p", "prefab": "units/x"}]}"#,
        ),
        (
            "units/x.unit",
            r#"{"entities": [{"id": "x", "prefab": "units/y"}]}"#,
        ),
        (
            "units/y.unit",
            r#"{"entities": [{"id": "y", "prefab": "units/x"}]}"#,
        ),
        ("meshes/rock.mesh", "{}"),
        ("meshes/rock.json", "{}"),
        ("Textures/Big.png", "PNG"),
        (
            "data.json",
            r#"{"a": "meshes/rock", "b": "Textures/Big.png", "c": "meshes/old"}"#,
        ),
        ("broken.json", "{\"a\": }"),
        ("levels/broken.level", "{"),
        (
            "levels/cycle.level",
            r#"{"entities": [{"id": "a", "parent": "b"}, {"id": "b", "parent": "a"}]}"#,
        ),
        ("props/p.sunit", r#"{"mesh": "meshes/rock"}"#),
        (
            "kiln.redirects",
            "meshes/old.json -> meshes/rock.json\n../outside.json -> meshes/rock.json\n",
        ),
        (".kiln/journal", "not a folder"),
        // A binary glTF file cut short, and a glTF file's URI leading outside.
        ("models/cut.glb", "glTF\u{2}\0\0\0"),
        (
            "models/m.gltf",
            r#"{"images": [{"uri": "../../x.png"}, {"uri": "m.png"}]}"#,
        ),
        ("models/m.png", "PNG"),
    ];
    for (path, content) in files {
        let full = tmp.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, content).unwrap();
    }
    kiln_core::os::symlink("/tmp", tmp.path().join("outside")).unwrap();
    kiln_core::os::symlink("/tmp", tmp.path().join("build")).unwrap();
    fs::write(tmp.path().join(".kiln.not-a-folder"), "set aside").unwrap();
    tmp
}

#[test]
fn every_commands_json_output_matches_the_schema() {
    let v = validator();
    let tmp = messy();
    let dir = tmp.path();
    let check = run(&v, dir, &["check"]);
    let kinds: BTreeSet<&str> = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "missing",
        "stale_redirect",
        "ambiguous",
        "non_canonical_reference",
        "invalid_reference",
        "unused",
        "non_canonical_name",
        "invalid_json",
        "parse_error",
        "prefab_cycle",
        "link_outside",
        "journal_set_aside",
        "linked_own_folder",
        "invalid_redirect",
        "own_folder_set_aside",
        "malformed_binary",
        "invalid_uri",
    ] {
        assert!(kinds.contains(kind), "no {kind} in {kinds:?}");
    }
    // Only the level whose error no finding explains: a.level (a missing
    // reference) and broken.level (a parse error) are reported once.
    let refused = check["compile_errors"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["level"], "levels/cycle.level");
    assert!(
        refused[0]["error"]["Entity"]["message"]
            .as_str()
            .unwrap()
            .contains("parent cycle")
    );
    run(&v, dir, &["check", "--fix", "--dry-run"]);
    let refs = run(&v, dir, &["refs", "meshes/rock.json"]);
    assert_eq!(refs["ambiguous"].as_array().unwrap().len(), 1);
    let deps = run(&v, dir, &["deps", "levels/a.level"]);
    let statuses: BTreeSet<&str> = deps["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, BTreeSet::from(["invalid", "missing", "resolved"]));
    run(&v, dir, &["deps", "data.json"]);
    let gltf = run(&v, dir, &["deps", "models/m.gltf"]);
    assert_eq!(gltf["references"][0]["status"], "invalid");
    assert_eq!(gltf["references"][1]["status"], "resolved");
    run(&v, dir, &["mv", "--dry-run", "models/m.gltf", "m.gltf"]);
    let mv = run(
        &v,
        dir,
        &["mv", "--dry-run", "meshes/rock.json", "other/rock.json"],
    );
    assert_eq!(mv["skipped"][0]["reason"], "ambiguous");
    run(&v, dir, &["mv", "--dry-run", "data.json", "data.json"]);
    run(&v, dir, &["mv", "meshes", "art/meshes"]);
    run(&v, dir, &["check", "--fix"]);

    let demo = demo_copy();
    run(&v, demo.path(), &["check"]);
    run(&v, demo.path(), &["refs", "materials"]);
    run(
        &v,
        demo.path(),
        &["mv", "materials/bark.material", "materials/wood/"],
    );
}

#[test]
fn the_schema_rejects_what_it_should() {
    let v = validator();
    for bad in [
        r#"{"schema": "kiln-deps/1", "resource": "a", "references": [{"file": "a", "line": 1, "pointer": "", "entity": null, "component": null, "text": "x", "type": null, "status": "Resolved(\"x\")", "target": "x", "candidates": [], "reason": null}]}"#,
        r#"{"schema": "kiln-check/2", "files": 0, "errors": 0, "warnings": 0, "findings": []}"#,
        r#"{"schema": "kiln-check/1", "files": 0, "errors": 0, "warnings": 0, "findings": [{"kind": "missing", "severity": "error", "file": "a", "description": "x"}]}"#,
    ] {
        let value: serde_json::Value = serde_json::from_str(bad).unwrap();
        assert!(!v.is_valid(&value), "accepted {bad}");
    }
}
