//! The incremental compile against a fresh compile: after any sequence of random
//! edits of a random level, the kept blob is the one a fresh compile of the final
//! text writes, and a text that does not compile gives the fresh compile's error
//! and leaves the last good blob. A running world, patched in place where the
//! update was, respawned where it was compiled in full, holds what a fresh spawn
//! of the fresh blob holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use kiln_core::compiler::compile_level_with;
use kiln_core::incremental::{IncrementalLevel, Update};
use kiln_core::{CompileOptions, EntityManager, Registry, SpawnedLevel, World, spawn_level};
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
    if rng.chance(25) {
        components.insert("rotator".into(), json!({"speed": rng.number()}));
    }
    if rng.chance(20) {
        components.insert(
            "point_mass".into(),
            json!({"mass": rng.below(9), "velocity": [rng.number(), 0, 0]}),
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

/// 1 to 12 random entities, `e0` and on, each parented (or not) to an earlier one.
fn random_entities(rng: &mut Rng) -> Vec<Value> {
    let mut ids = Vec::new();
    let mut entities = Vec::new();
    for i in 0..1 + rng.below(12) {
        let id = format!("e{i}");
        entities.push(random_entity(rng, &id, &ids));
        ids.push(id);
    }
    entities
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
        6 if n > 0 => {
            let c = &mut entities[k]["components"];
            if c.get("rotator").is_some() {
                c["rotator"]["speed"] = rng.number();
            } else if c.get("point_mass").is_some() {
                c["point_mass"]["velocity"] = json!([0, rng.number(), 0]);
            } else {
                entities[k]["name"] = json!(format!("Renamed {}", rng.below(9)));
            }
        }
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

/// A world with one level spawned in it.
struct Running {
    entities: EntityManager,
    world: World,
    level: SpawnedLevel,
}

impl Running {
    fn spawn(registry: &Registry, blob: &[u8]) -> Running {
        let mut entities = EntityManager::new();
        let mut world = World::new();
        let level = spawn_level(blob, registry, &mut entities, &mut world).unwrap();
        Running {
            entities,
            world,
            level,
        }
    }

    fn state(&self) -> Vec<String> {
        self.level.state_in(&self.world)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn incremental_updates_equal_a_fresh_compile(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let registry = Registry::with_builtins();
        let canonical = rng.chance(50);
        let options = CompileOptions { skip_unknown_components: rng.chance(50) };
        let entities = random_entities(&mut rng);
        let mut doc = json!({"entities": entities});
        let mut next_id = 100;
        // The level starts from a text that compiles (the first may not: then
        // the whole level is compiled again until one does).
        let text = write(&doc, canonical);
        let mut running = None;
        let mut level = match IncrementalLevel::compile(&registry, &mut units(), FILE, &text, options) {
            Ok((mut level, _)) => {
                running = Some(Running::spawn(&registry, level.blob()));
                // Prepared for its first update, as a preview of a big level is.
                if rng.chance(50) {
                    level.prepare_updates();
                }
                Some(level)
            }
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
                        running = Some(Running::spawn(&registry, l.blob()));
                        level = Some(l);
                    }
                }
                Some(l) => {
                    let before = l.blob().to_vec();
                    let got = l.update(&registry, &mut units(), &text);
                    match (&got, &expected) {
                        (Ok(update), Ok(blob)) => {
                            prop_assert!(
                                l.blob() == &blob[..],
                                "step {}: {:?} wrote another blob than a fresh compile", step, got
                            );
                            let r = running.as_mut().unwrap();
                            match update {
                                Update::Patched { instances, .. } => {
                                    // Written into the running world: no respawn.
                                    let patched = r.level.patch(
                                        l.blob(), instances, &registry, &mut r.entities, &mut r.world,
                                    );
                                    prop_assert!(patched.is_ok(), "step {}: {:?}", step, patched);
                                }
                                // Only what changed is spawned again, where that pays.
                                Update::Full { .. } => match r.level.respawn_changed(
                                    (&before, l.blob()), &registry, &mut r.entities, &mut r.world,
                                ) {
                                    Ok(Some(respawned)) => r.level = respawned.level,
                                    Ok(None) => *r = Running::spawn(&registry, l.blob()),
                                    Err(e) => prop_assert!(false, "step {}: {}", step, e),
                                },
                                Update::Unchanged => {}
                            }
                            prop_assert_eq!(
                                r.state(),
                                Running::spawn(&registry, blob).state(),
                                "step {}: {:?}", step, update
                            );
                        }
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

type Patch<'a> = (Vec<&'a str>, Vec<usize>, Vec<(u32, u32, Vec<usize>)>);

/// What a patch says: the entities, their places in the file, and for each
/// patched type of each: its blob index, the type, each instance's size.
fn patched(update: &Update) -> Patch<'_> {
    let Update::Patched {
        entities,
        positions,
        instances,
    } = update
    else {
        panic!("not patched: {update:?}");
    };
    (
        entities.iter().map(String::as_str).collect(),
        positions.clone(),
        instances
            .iter()
            .map(|p| {
                let sizes = p.ranges.iter().map(|r| r.len()).collect();
                (p.entity, p.component_identifier, sizes)
            })
            .collect(),
    )
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
    let transform = registry.component("transform").unwrap().id;
    // b is the second entity in the blob (parents first); its one transform is
    // 48 bytes.
    assert_eq!(
        patched(&update),
        (vec!["b"], vec![1], vec![(1, transform, vec![48])])
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
        patched(&update),
        (
            vec!["a", "b"],
            vec![0, 1],
            vec![(0, transform, vec![48]), (1, transform, vec![48])]
        )
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

/// A patch is written into the running world: the changed entity takes the new
/// pose, the point mass of its child starts again where the child now is, and
/// every other entity keeps the state the simulation gave it, under the same ids.
#[test]
fn a_patch_keeps_what_the_simulation_did_to_other_entities() {
    let registry = Registry::with_builtins();
    let text = r#"{"entities": [
  {"id": "a", "components": {"transform": {"position": [1, 0, 0]}, "rotator": {"speed": 90}}},
  {"id": "b", "components": {"transform": {"position": [0, 0, 0]}, "rotator": {"speed": 90}}},
  {"id": "c", "parent": "a", "components": {"transform": {}, "point_mass": {"mass": 1}}}
]}"#;
    let options = CompileOptions::default();
    let (mut level, _) =
        IncrementalLevel::compile(&registry, &mut units(), FILE, text, options).unwrap();
    let mut r = Running::spawn(&registry, level.blob());
    let ids_before = r.level.entities.clone();
    r.world.simulate(0.5, &r.entities);
    let tm = &r.world.transforms;
    let b = tm.lookup(r.level.entity("b").unwrap()).unwrap();
    let b_turned = tm.local(b);
    // Positive control: the simulation turned b.
    assert_ne!(b_turned, glam::Affine3A::IDENTITY);

    let moved = text.replace("[1, 0, 0]", "[3, 0, 0]");
    let update = level.update(&registry, &mut units(), &moved).unwrap();
    let Update::Patched { instances, .. } = &update else {
        panic!("{update:?}");
    };
    r.level
        .patch(
            level.blob(),
            instances,
            &registry,
            &mut r.entities,
            &mut r.world,
        )
        .unwrap();
    let tm = &r.world.transforms;
    assert_eq!(r.level.entities, ids_before, "no entity was respawned");
    assert_eq!(tm.local(b), b_turned, "b kept what the simulation did");
    let a = tm.lookup(r.level.entity("a").unwrap()).unwrap();
    assert_eq!(
        tm.local(a),
        glam::Affine3A::from_translation(glam::Vec3::X * 3.0)
    );
    // c fell for half a second under a; its point mass starts again where c now
    // is in the world, under a's new place.
    let c = r.level.entity("c").unwrap();
    let mass = r.world.point_masses.lookup(c).unwrap();
    let c_world = tm.world(tm.lookup(c).unwrap()).translation;
    assert_eq!(
        r.world.point_masses.position(mass),
        glam::Vec3::from(c_world)
    );
    assert_eq!(c_world.x, 3.0);
    assert!(c_world.y < 0.0, "{c_world:?}");
}

/// An entity added, one removed and one moved under another parent: those are
/// spawned again (with what hangs below them), and every other entity keeps its
/// runtime id and what the simulation did to it.
#[test]
fn a_structural_change_spawns_again_only_what_it_touched() {
    let registry = Registry::with_builtins();
    let mut entities: Vec<String> = (0..40)
        .map(|i| {
            let parent = if i % 4 == 3 {
                format!(r#""parent": "e{}", "#, i - 1)
            } else {
                String::new()
            };
            format!(
                r#"{{"id": "e{i}", {parent}"components": {{"transform": {{"position": [{i}, 0, 0]}}, "rotator": {{"speed": 90}}}}}}"#
            )
        })
        .collect();
    let text = |entities: &[String]| format!("{{\"entities\": [\n{}\n]}}", entities.join(",\n"));
    let before = text(&entities);
    let options = CompileOptions::default();
    let (mut level, _) =
        IncrementalLevel::compile(&registry, &mut units(), FILE, &before, options).unwrap();
    let old_blob = level.blob().to_vec();
    let mut r = Running::spawn(&registry, &old_blob);
    r.world.simulate(0.5, &r.entities);
    let turned = |r: &Running, id: &str| {
        let tm = &r.world.transforms;
        tm.local(tm.lookup(r.level.entity(id).unwrap()).unwrap())
    };
    let e20_turned = turned(&r, "e20");
    assert_ne!(
        e20_turned,
        turned(&Running::spawn(&registry, &old_blob), "e20")
    );
    let e20 = r.level.entity("e20").unwrap();

    // e12 goes, e5 moves under e9, and a new entity comes under e2.
    entities.remove(12);
    entities[5] = entities[5].replace(r#"{"id": "e5", "#, r#"{"id": "e5", "parent": "e9", "#);
    entities.push(r#"{"id": "new", "parent": "e2", "components": {"transform": {}}}"#.into());
    let after = text(&entities);
    let update = level.update(&registry, &mut units(), &after).unwrap();
    assert!(matches!(update, Update::Full { .. }), "{update:?}");
    let done = r
        .level
        .respawn_changed(
            (&old_blob, level.blob()),
            &registry,
            &mut r.entities,
            &mut r.world,
        )
        .unwrap()
        .expect("three entities of forty changed");
    // e5 and the new one are spawned; e12 and e5 as it was are destroyed.
    assert_eq!((done.spawned, done.destroyed), (2, 2));
    r.level = done.level;
    assert_eq!(r.level.entity("e20"), Some(e20), "e20 kept its id");
    assert_eq!(
        turned(&r, "e20"),
        e20_turned,
        "e20 kept what the simulation did"
    );
    assert!(r.level.entity("e12").is_none() && r.level.entity("new").is_some());
    let fresh = Running::spawn(&registry, level.blob());
    assert_eq!(r.level.ids().count(), fresh.level.ids().count());
    let parent_of = |r: &Running, id: &str| {
        let tm = &r.world.transforms;
        let i = tm.lookup(r.level.entity(id).unwrap()).unwrap();
        tm.parent(i)
            .map(|p| r.level.authoring_id(tm.entity(p)).unwrap().to_owned())
    };
    assert_eq!(parent_of(&r, "e5").as_deref(), Some("e9"));
    assert_eq!(parent_of(&r, "new").as_deref(), Some("e2"));
    assert_eq!(parent_of(&r, "e11").as_deref(), Some("e10"));
    assert_eq!(turned(&r, "e5"), turned(&fresh, "e5"), "e5 starts again");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The editor's path: a field changed in the document is written over the
    /// instances its component compiles to (`DocumentLayout::rewrite`), or the
    /// whole document is compiled where that says no; the blob is always a fresh
    /// compile's of the document, and every field edit it takes (prefab
    /// instances' own components included) is written in place.
    #[test]
    fn a_rewritten_document_blob_equals_a_fresh_compile(seed in any::<u64>()) {
        use kiln_core::incremental::DocumentLayout;
        let mut rng = Rng(seed);
        let registry = Registry::with_builtins();
        let options = CompileOptions { skip_unknown_components: true };
        let entities = random_entities(&mut rng);
        let text = serde_json::to_string(&json!({"entities": entities})).unwrap();
        let mut doc = kiln_core::LevelDocument::parse(&text, FILE).unwrap();
        let compile = |doc: &kiln_core::LevelDocument| {
            DocumentLayout::compile(&registry, &mut units(), FILE, doc, options)
        };
        let Ok((compiled, mut layout)) = compile(&doc) else { return Ok(()) };
        let mut blob = compiled.blob;
        for _ in 0..1 + rng.below(12) {
            let k = rng.below(doc.entities.len());
            let e = &mut doc.entities[k];
            let component = match rng.below(4) {
                0 => "rotator",
                1 => "mesh",
                _ => "transform",
            };
            let Some(value) = e.components.get_mut(component) else { continue };
            match component {
                "transform" => value["position"] = json!([rng.number(), rng.number(), 0]),
                "mesh" => value["material"] = json!(format!("materials/m{}", rng.below(4))),
                // Now and then a value the compile refuses.
                _ => value["speed"] = if rng.chance(10) { json!("fast") } else { rng.number() },
            }
            let value = value.clone();
            let refused = value["speed"] == json!("fast");
            let fresh = kiln_core::compile_document_with(&registry, &mut units(), FILE, &doc, options);
            match layout.rewrite(&registry, k, component, &value) {
                Some((patch, bytes)) => {
                    prop_assert!(!refused, "a refused value was written in place");
                    for (range, bytes) in patch.ranges.iter().zip(bytes) {
                        blob[range.clone()].copy_from_slice(&bytes);
                    }
                    let fresh = fresh.map(|c| c.blob);
                    prop_assert!(fresh.as_ref() == Ok(&blob), "entity {} {}: {:?}", k, component, value);
                }
                None => match compile(&doc) {
                    // Every field these edits set keeps its instances' size.
                    Ok(_) if !refused => prop_assert!(false, "entity {} {}: not in place", k, component),
                    Ok((compiled, l)) => {
                        blob = compiled.blob;
                        layout = l;
                    }
                    // A refused value: the document is put back, as the editor
                    // keeps the last good world.
                    Err(e) => {
                        prop_assert!(fresh.is_err(), "{e}");
                        doc.entities[k].components[component]["speed"] = json!(1);
                        let (compiled, l) = compile(&doc).unwrap();
                        blob = compiled.blob;
                        layout = l;
                    }
                },
            }
        }
    }
}

/// A type without fields has instances of no bytes: one added to an entity, or
/// taken from it, still spawns that entity again (its plugin gets or loses the
/// instance).
#[test]
fn a_fieldless_instance_added_or_removed_spawns_its_entity_again() {
    let mut registry = Registry::with_builtins();
    registry
        .register_component(kiln_core::ComponentType::new(
            "tag",
            50,
            |_, _| Ok(()),
            |_, _| Ok(()),
        ))
        .unwrap();
    let level = |tagged: bool| {
        let tag = if tagged { r#", "tag": {}"# } else { "" };
        let entities: Vec<String> = (0..8)
            .map(|i| {
                let tag = if i == 3 { tag } else { "" };
                format!(r#"{{"id": "e{i}", "components": {{"transform": {{}}{tag}}}}}"#)
            })
            .collect();
        format!(r#"{{"entities": [{}]}}"#, entities.join(", "))
    };
    let options = CompileOptions::default();
    let plain = fresh(&registry, &level(false), options).unwrap();
    let tagged = fresh(&registry, &level(true), options).unwrap();
    for (from, to) in [(&plain, &tagged), (&tagged, &plain)] {
        let mut r = Running::spawn(&registry, from);
        let done = r
            .level
            .respawn_changed((from, to), &registry, &mut r.entities, &mut r.world)
            .unwrap()
            .expect("one entity of eight changed");
        assert_eq!((done.spawned, done.destroyed), (1, 1));
        assert_ne!(done.level.entity("e3"), r.level.entity("e3"));
        assert_eq!(done.level.entity("e4"), r.level.entity("e4"));
    }
}
