//! The incremental compile against a fresh compile: after any sequence of random
//! edits of a random level, the kept blob is the one a fresh compile of the final
//! text writes, and a text that does not compile gives the fresh compile's error
//! and leaves the last good blob.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use kiln_core::compiler::compile_level_with;
use kiln_core::incremental::{IncrementalLevel, Update};
use kiln_core::{CompileOptions, Registry};
use proptest::prelude::*;
use serde_json::{Value, json};

const FILE: &str = "levels/l.level";

fn units() -> HashMap<String, String> {
    HashMap::from([(
        "units/lamp.unit".to_owned(),
        r#"{"entities": [{"id": "base", "components": {"transform": {}}},
            {"id": "bulb", "parent": "base", "name": "Bulb", "components": {"transform": {"position": [0, 1, 0]}, "mesh": {"mesh": "meshes/bulb"}}}]}"#
            .to_owned(),
    )])
}

/// SplitMix64, seeded by proptest.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn number(&mut self) -> Value {
        json!(self.below(2000) as f64 / 8.0 - 100.0)
    }
}

fn random_entity(rng: &mut Rng, id: &str, earlier: &[String]) -> Value {
    let mut e = serde_json::Map::new();
    e.insert("id".into(), json!(id));
    if rng.chance(50) {
        e.insert("name".into(), json!(format!("Entity {id}")));
    }
    if !earlier.is_empty() && rng.chance(50) {
        e.insert("parent".into(), json!(earlier[rng.below(earlier.len())]));
    }
    let mut components = serde_json::Map::new();
    if rng.chance(80) {
        components.insert(
            "transform".into(),
            json!({"position": [rng.number(), rng.number(), rng.number()]}),
        );
    }
    if rng.chance(50) {
        components.insert(
            "mesh".into(),
            json!({"mesh": "meshes/cube", "material": format!("materials/m{}", rng.below(4))}),
        );
    }
    if rng.chance(15) {
        e.insert("prefab".into(), json!("units/lamp"));
        if rng.chance(50) {
            e.insert(
                "overrides".into(),
                json!({"bulb": {"transform": {"position": [0, rng.number(), 0]}}}),
            );
        }
    }
    e.insert("components".into(), Value::Object(components));
    Value::Object(e)
}

fn write(doc: &Value, canonical: bool) -> String {
    if canonical {
        kiln_core::json_format::to_canonical_string(doc)
    } else {
        let entities = doc["entities"].as_array().unwrap();
        let lines: Vec<String> = entities.iter().map(Value::to_string).collect();
        format!("{{\"entities\": [\n{}\n]}}\n", lines.join(",\n"))
    }
}

/// One random edit of `doc`, or of its text (returned when the edit is textual).
fn edit(rng: &mut Rng, doc: &mut Value, next_id: &mut usize) -> Option<String> {
    let entities = doc["entities"].as_array_mut().unwrap();
    let n = entities.len();
    let k = rng.below(n);
    match rng.below(13) {
        // Fields: what the fast path is for (most edits).
        0..=4 if n > 0 => {
            let c = &mut entities[k]["components"];
            if c.get("transform").is_some_and(|t| t["position"].is_array()) {
                c["transform"]["position"][rng.below(3)] = rng.number();
            } else {
                c["transform"] = json!({"scale": [1, rng.number(), 1]});
            }
        }
        5 if n > 0 => {
            let c = &mut entities[k]["components"];
            if c.get("mesh").is_some() {
                c["mesh"]["material"] = json!(format!("materials/m{}", rng.below(4)));
            } else {
                c["mesh"] = json!({"mesh": "meshes/cube"});
            }
        }
        6 if n > 0 => entities[k]["name"] = json!(format!("Renamed {}", rng.below(9))),
        7 => {
            let earlier: Vec<String> = entities
                .iter()
                .map(|e| e["id"].as_str().unwrap().to_owned())
                .collect();
            let id = format!("n{next_id}");
            *next_id += 1;
            let at = rng.below(n + 1);
            let e = random_entity(rng, &id, &earlier);
            entities.insert(at, e);
        }
        8 if n > 0 => {
            entities.remove(k);
        }
        9 if n > 0 => {
            // A bad value: the compile's error.
            entities[k]["components"]["transform"] = json!({"position": "up"});
        }
        10 if n > 0 => {
            entities[k]["components"]["no_such_type"] = json!({});
        }
        11 if n > 0 => {
            let e = &mut entities[k];
            if e.get("prefab").is_some() {
                e["overrides"] = json!({"bulb": {"transform": {"position": [rng.number(), 0, 0]}}});
            } else if let Some(t) = e["components"].get_mut("transform") {
                // Several fields at once, one of them new.
                t["rotation"] = json!([0, rng.number(), 0]);
                t["scale"] = json!([2, 2, 2]);
            }
        }
        12 => return Some("{\"entities\": [".to_owned()),
        _ => {}
    }
    None
}

fn fresh(
    registry: &Registry,
    text: &str,
    options: CompileOptions,
) -> Result<Vec<u8>, kiln_core::compiler::CompileError> {
    compile_level_with(registry, &mut units(), FILE, text, options).map(|c| c.blob)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn incremental_updates_equal_a_fresh_compile(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let registry = Registry::with_builtins();
        let canonical = rng.chance(50);
        let options = CompileOptions { skip_unknown_components: rng.chance(50) };
        let mut ids = Vec::new();
        let mut entities = Vec::new();
        for i in 0..1 + rng.below(12) {
            let id = format!("e{i}");
            entities.push(random_entity(&mut rng, &id, &ids));
            ids.push(id);
        }
        let mut doc = json!({"entities": entities});
        let mut next_id = 100;
        // The level starts from a text that compiles (the first may not: then
        // the whole level is compiled again until one does).
        let text = write(&doc, canonical);
        let mut level = match IncrementalLevel::compile(&registry, &mut units(), FILE, &text, options) {
            Ok((level, _)) => Some(level),
            Err(e) => {
                prop_assert_eq!(Err(e), fresh(&registry, &text, options));
                None
            }
        };
        for step in 0..1 + rng.below(10) {
            let textual = edit(&mut rng, &mut doc, &mut next_id);
            let text = textual.unwrap_or_else(|| write(&doc, canonical));
            let expected = fresh(&registry, &text, options);
            match &mut level {
                None => {
                    if let Ok((l, _)) = IncrementalLevel::compile(&registry, &mut units(), FILE, &text, options) {
                        level = Some(l);
                    }
                }
                Some(l) => {
                    let before = l.blob().to_vec();
                    let got = l.update(&registry, &mut units(), &text);
                    match (&got, &expected) {
                        (Ok(_), Ok(blob)) => prop_assert!(
                            l.blob() == &blob[..],
                            "step {}: {:?} wrote another blob than a fresh compile", step, got
                        ),
                        (Err(e), Err(f)) => {
                            prop_assert_eq!(e, f, "step {}", step);
                            prop_assert!(l.blob() == &before[..], "step {}: an error changed the blob", step);
                        }
                        _ => prop_assert!(false, "step {}: {:?}, fresh {:?}", step, got.map(|u| u.path()), expected.map(|b| b.len())),
                    }
                }
            }
        }
    }
}

/// The fast path is taken where it should be, and says which path ran.
#[test]
fn a_field_edit_is_patched_and_a_structural_one_compiled_in_full() {
    let registry = Registry::with_builtins();
    let text = r#"{"entities": [
  {"id": "a", "name": "A", "components": {"transform": {"position": [1, 0, 0]}, "mesh": {"mesh": "meshes/cube"}}},
  {"id": "b", "parent": "a", "components": {"transform": {"position": [0, 1, 0]}}},
  {"id": "lamp", "prefab": "units/lamp", "components": {"transform": {}}}
]}"#;
    let options = CompileOptions::default();
    let (mut level, first) =
        IncrementalLevel::compile(&registry, &mut units(), FILE, text, options).unwrap();
    assert_eq!(first.path(), "full");
    let moved = text.replace("[0, 1, 0]", "[0, 2, 0]");
    let update = level.update(&registry, &mut units(), &moved).unwrap();
    assert_eq!(
        update,
        Update::Patched {
            entities: vec!["b".into()],
            positions: vec![1],
        }
    );
    assert_eq!(
        level.entity_text(1),
        Some(r#"{"id": "b", "parent": "a", "components": {"transform": {"position": [0, 2, 0]}}}"#)
    );
    assert_eq!(
        level.blob(),
        &fresh(&registry, &moved, options).unwrap()[..]
    );
    assert_eq!(
        level.update(&registry, &mut units(), &moved).unwrap(),
        Update::Unchanged
    );
    // Two entities at once, far apart.
    let both = moved.replace("[1, 0, 0]", "[5, 0, 0]").replace(
        "\"transform\": {}}",
        "\"transform\": {\"scale\": [2, 2, 2]}}",
    );
    let update = level.update(&registry, &mut units(), &both).unwrap();
    assert!(
        matches!(update, Update::Full { .. }),
        "a prefab instance changed: {update:?}"
    );
    let two = both
        .replace("[5, 0, 0]", "[6, 0, 0]")
        .replace("[0, 2, 0]", "[0, 3, 0]");
    let update = level.update(&registry, &mut units(), &two).unwrap();
    assert_eq!(
        update,
        Update::Patched {
            entities: vec!["a".into(), "b".into()],
            positions: vec![0, 1],
        }
    );
    assert_eq!(level.blob(), &fresh(&registry, &two, options).unwrap()[..]);
    // A renamed entity is structural.
    let renamed = two.replace("\"name\": \"A\"", "\"name\": \"Big A\"");
    let update = level.update(&registry, &mut units(), &renamed).unwrap();
    assert!(matches!(update, Update::Full { .. }), "{update:?}");
    assert_eq!(
        level.blob(),
        &fresh(&registry, &renamed, options).unwrap()[..]
    );
}
