//! `kiln check` reports, as an error, whatever `kiln compile` refuses: the shapes a
//! hostile try found (a `null` level, a parent cycle, a float past 32 bits, prefabs
//! nested past the limit), a unit that breaks its levels, a record of outcomes that
//! cannot be forged, and a differential property over mutated projects against the
//! compiler itself as the oracle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kiln::checker_reports::CheckOptions;
use kiln_core::{CompileOptions, Project, ProjectError, Registry};
use proptest::prelude::*;
use serde_json::{Value, json};

mod support;

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `kiln check` in process: whether it failed, and what it printed.
fn check(dir: &Path) -> (bool, String) {
    let mut out = Vec::new();
    let outcome = kiln::checker_commands::check(dir, CheckOptions::default(), &mut out).unwrap();
    (outcome.exit_status() != 0, String::from_utf8(out).unwrap())
}

/// The levels `kiln compile` refuses, with the error: the oracle.
fn refused(dir: &Path) -> Vec<(String, String)> {
    let project = Project::open(dir).unwrap();
    let registry = Registry::with_builtins();
    (project.levels().unwrap().into_iter())
        .filter_map(|level| {
            match project.compile_streamed(&registry, &level, CompileOptions::default()) {
                Err(ProjectError::Compile(e)) => Some((level, e.to_string())),
                _ => None,
            }
        })
        .collect()
}

/// A project with one level of a crate (a prefab instance) and a table.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "kiln.project",
        r#"{"boot_levels": ["levels/room"]}"#,
    );
    write(
        dir.path(),
        "units/crate.unit",
        &json!({"entities": [{"id": "box", "components": {"transform": {"position": [0, 0.5, 0]}}}]})
            .to_string(),
    );
    write(dir.path(), "levels/room.level", &room().to_string());
    dir
}

fn room() -> Value {
    json!({"entities": [
        {"id": "table", "components": {"transform": {"position": [0, 1, 0]}}},
        {"id": "top", "parent": "table", "components": {"transform": {"scale": [2, 1, 2]}}},
        {"id": "crate_1", "prefab": "units/crate", "components": {"transform": {"position": [3, 0, 0]}}}
    ]})
}

#[test]
fn each_shape_compile_refuses_is_an_error_of_check() {
    let mut deep = room();
    deep["entities"][2]["prefab"] = json!("units/d0");
    // Each shape: its name, the level's text, and the units it needs.
    type Shape = (&'static str, String, Vec<(String, String)>);
    let shapes: Vec<Shape> = vec![
        ("a null level", "null".into(), vec![]),
        (
            "a parent cycle",
            {
                let mut v = room();
                v["entities"][0]["parent"] = json!("top");
                v.to_string()
            },
            vec![],
        ),
        (
            "a float past 32 bits",
            room().to_string().replace("[0,1,0]", "[0,1e39,0]"),
            vec![],
        ),
        (
            "prefabs nested past 64",
            deep.to_string(),
            (0..70)
                .map(|i| {
                    let next = if i < 69 {
                        json!({"entities": [{"id": "e", "prefab": format!("units/d{}", i + 1)}]})
                    } else {
                        json!({"entities": [{"id": "e"}]})
                    };
                    (format!("units/d{i}.unit"), next.to_string())
                })
                .collect(),
        ),
    ];
    for (shape, level, units) in shapes {
        let dir = project();
        assert!(!check(dir.path()).0, "{shape}: the project starts clean");
        write(dir.path(), "levels/room.level", &level);
        for (path, text) in &units {
            write(dir.path(), path, text);
        }
        let refused = refused(dir.path());
        assert_eq!(refused.len(), 1, "{shape}: compile refuses it");
        let (failed, out) = check(dir.path());
        assert!(failed, "{shape}: check passed what compile refuses:\n{out}");
        assert!(
            out.contains(&format!("error: {}", refused[0].1)),
            "{shape}: check names the compiler's error {:?}:\n{out}",
            refused[0].1
        );
    }
}

#[test]
fn a_unit_that_breaks_compiles_its_levels_again_and_names_them() {
    let dir = project();
    assert!(!check(dir.path()).0);
    let record = dir.path().join(dependency_checker::compiles::RECORD_FILE);
    let written = std::fs::metadata(&record).unwrap().modified().unwrap();
    // Nothing changed: nothing compiled, the record is not written again.
    assert!(!check(dir.path()).0);
    assert_eq!(
        std::fs::metadata(&record).unwrap().modified().unwrap(),
        written
    );
    let good = std::fs::read_to_string(dir.path().join("units/crate.unit")).unwrap();
    support::atomic_write(
        &dir.path().join("units/crate.unit"),
        &good.replace("0.5", "1e39"),
    );
    let (failed, out) = check(dir.path());
    assert!(failed, "{out}");
    assert!(
        out.contains("units/crate.unit: entity \"crate_1/box\"")
            && out.contains("(compiling levels/room.level)"),
        "{out}"
    );
    support::atomic_write(&dir.path().join("units/crate.unit"), &good);
    let (failed, out) = check(dir.path());
    assert!(!failed, "{out}");
}

#[test]
fn a_forged_record_of_outcomes_is_not_believed() {
    let dir = project();
    write(
        dir.path(),
        "levels/room.level",
        &room().to_string().replace("[0,1,0]", "[0,1e39,0]"),
    );
    assert!(check(dir.path()).0);
    // Say no level fails (the header a check with nothing changed answers
    // from), keeping the checksum: the record is dropped and the level compiled
    // again.
    let record = dir.path().join(dependency_checker::compiles::RECORD_FILE);
    let bytes = std::fs::read(&record).unwrap();
    let end = 8 + bytes[8..].iter().position(|&b| b == b'\n').unwrap();
    let mut header: Value = serde_json::from_slice(&bytes[8..end]).unwrap();
    assert_eq!(header["errors"].as_array().unwrap().len(), 1, "{header}");
    header["errors"] = json!([]);
    let mut forged = bytes[..8].to_vec();
    forged.extend(header.to_string().into_bytes());
    forged.extend(&bytes[end..]);
    std::fs::write(&record, forged).unwrap();
    let (failed, out) = check(dir.path());
    assert!(failed, "a forged record hid the error:\n{out}");
}

/// One change a hostile or careless edit makes to a level.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replaces the value at entity `entity`'s key with one of a few odd values.
    SetEntityKey(usize, &'static str, usize),
    /// Sets a transform field to an odd value.
    SetTransformField(usize, &'static str, usize),
    /// Adds a component of a name and value.
    AddComponent(usize, &'static str, usize),
    /// Overrides a part of the crate.
    Override(usize, &'static str),
    /// Replaces the whole document.
    Document(usize),
    /// Cuts the text at a fraction of its length.
    Truncate(u8),
    /// Makes the crate prefab a chain of this many units.
    Chain(u8),
    /// Makes the crate include itself through another unit.
    UnitCycle,
}

const ODD_VALUES: &[&str] = &[
    "null",
    "1e39",
    "-1e39",
    "\"\"",
    "\"top\"",
    "\"table\"",
    "\"units/crate\"",
    "\"units/nothing\"",
    "\"a/b\"",
    "[]",
    "[1,2]",
    "[1,2,3]",
    "[1,\"x\",3]",
    "{}",
    "{\"box\": {}}",
    "3",
    "true",
    "\"crate_1\"",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let entity = 0usize..4;
    let odd = 0..ODD_VALUES.len();
    prop_oneof![
        (
            entity.clone(),
            prop::sample::select(vec![
                "id",
                "parent",
                "prefab",
                "components",
                "overrides",
                "name"
            ]),
            odd.clone()
        )
            .prop_map(|(e, k, v)| Mutation::SetEntityKey(e, k, v)),
        (
            entity.clone(),
            prop::sample::select(vec!["position", "rotation", "scale", "nonsense"]),
            odd.clone()
        )
            .prop_map(|(e, k, v)| Mutation::SetTransformField(e, k, v)),
        (
            entity.clone(),
            prop::sample::select(vec!["transform", "mesh", "no_such_type", "debug_name"]),
            odd.clone()
        )
            .prop_map(|(e, k, v)| Mutation::AddComponent(e, k, v)),
        (entity, prop::sample::select(vec!["box", "lid", ""]))
            .prop_map(|(e, k)| Mutation::Override(e, k)),
        (0usize..4).prop_map(Mutation::Document),
        any::<u8>().prop_map(Mutation::Truncate),
        (60u8..70).prop_map(Mutation::Chain),
        Just(Mutation::UnitCycle),
    ]
}

/// Applies `mutations` to the project at `dir`.
fn mutate(dir: &Path, mutations: &[Mutation]) {
    let mut doc = room();
    let mut cut = None;
    for m in mutations {
        let odd =
            |v: usize| -> Value { serde_json::from_str(ODD_VALUES[v]).unwrap_or(Value::Null) };
        match m {
            Mutation::SetEntityKey(e, key, v) => {
                if let Some(map) = entity_mut(&mut doc, *e) {
                    map.insert((*key).to_owned(), odd(*v));
                }
            }
            Mutation::SetTransformField(e, field, v) => {
                if let Some(map) = entity_mut(&mut doc, *e) {
                    let components = map.entry("components").or_insert(json!({}));
                    if let Some(c) = components.as_object_mut() {
                        let t = c.entry("transform").or_insert(json!({}));
                        if let Some(t) = t.as_object_mut() {
                            t.insert((*field).to_owned(), odd(*v));
                        }
                    }
                }
            }
            Mutation::AddComponent(e, name, v) => {
                if let Some(map) = entity_mut(&mut doc, *e) {
                    let components = map.entry("components").or_insert(json!({}));
                    if let Some(c) = components.as_object_mut() {
                        c.insert((*name).to_owned(), odd(*v));
                    }
                }
            }
            Mutation::Override(e, part) => {
                if let Some(map) = entity_mut(&mut doc, *e) {
                    map.insert(
                        "overrides".into(),
                        json!({*part: {"transform": {"position": [1, 2, 3]}}}),
                    );
                }
            }
            Mutation::Document(which) => {
                doc = [json!(null), json!([]), json!({}), json!({"entities": {}})][*which].clone();
            }
            Mutation::Truncate(at) => cut = Some(*at),
            Mutation::Chain(n) => {
                let n = usize::from(*n);
                for i in 0..n {
                    let next = if i + 1 < n {
                        json!({"entities": [{"id": "e", "prefab": format!("units/c{}", i + 1)}]})
                    } else {
                        json!({"entities": [{"id": "box"}]})
                    };
                    write(dir, &format!("units/c{i}.unit"), &next.to_string());
                }
                write(
                    dir,
                    "units/crate.unit",
                    &json!({"entities": [{"id": "box", "prefab": "units/c0"}]}).to_string(),
                );
            }
            Mutation::UnitCycle => {
                write(
                    dir,
                    "units/other.unit",
                    &json!({"entities": [{"id": "o", "prefab": "units/crate"}]}).to_string(),
                );
                write(
                    dir,
                    "units/crate.unit",
                    &json!({"entities": [{"id": "box", "prefab": "units/other"}]}).to_string(),
                );
            }
        }
    }
    let mut text = serde_json::to_string_pretty(&doc).unwrap();
    if let Some(at) = cut {
        let at = text.len() * usize::from(at) / 256;
        let at = (0..=at)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(at);
    }
    write(dir, "levels/room.level", &text);
}

/// The object of the level's entity `e` (modulo their count), if the document
/// still has entities that are objects.
fn entity_mut(doc: &mut Value, e: usize) -> Option<&mut serde_json::Map<String, Value>> {
    let entities = doc.get_mut("entities")?.as_array_mut()?;
    let n = entities.len();
    entities.get_mut(e % n.max(1))?.as_object_mut()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the compiler refuses of a mutated project, `kiln check` reports
    /// as an error (exit status 1).
    #[test]
    fn check_reports_whatever_compile_refuses(
        mutations in prop::collection::vec(mutation(), 1..4)
    ) {
        let dir = project();
        mutate(dir.path(), &mutations);
        let refused = refused(dir.path());
        let (failed, out) = check(dir.path());
        if !refused.is_empty() {
            prop_assert!(failed, "compile refuses {refused:?}; check passed:\n{out}");
        }
    }
}
