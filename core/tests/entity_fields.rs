//! Entity fields: a component names another entity of its level by authoring id
//! (in a prefab, a part of the same instance), compiled to the entity's index in
//! the level and made the spawned entity's handle; a name that is no entity is a
//! compile error naming the file, entity, component and field; a handle whose
//! entity is destroyed is dead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kiln_core::{
    ComponentBatch, ComponentType, Entity, EntityManager, FieldSchema, FieldValues,
    NO_ENTITY_INDEX, Registry, SpawnContext, World, compile_level, spawn_level,
};
use proptest::prelude::*;

/// What the `door` type's spawn saw: each owner, and the entity its `switch` names.
type Seen = Arc<Mutex<Vec<(Entity, Option<Entity>)>>>;

/// The built-ins and a `door` type whose `switch` field names an entity.
fn registry() -> (Registry, Seen) {
    let seen: Seen = Arc::default();
    let compile = |f: &FieldValues, out: &mut Vec<u8>| {
        out.extend_from_slice(&f.entity_index("switch").to_le_bytes());
        Ok(())
    };
    let record = Arc::clone(&seen);
    let spawn = move |_: &mut SpawnContext, batch: &ComponentBatch| {
        for (i, r) in batch.fixed_records(4)?.enumerate() {
            let index = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
            let target = batch.entity(index);
            assert_eq!(index == NO_ENTITY_INDEX, target.is_none());
            record.lock().unwrap().push((batch.owner(i), target));
        }
        Ok(())
    };
    let mut registry = Registry::with_builtins();
    registry
        .register_component(
            ComponentType::new("door", 50, compile, spawn)
                .with_fields(vec![FieldSchema::entity("switch")]),
        )
        .unwrap();
    (registry, seen)
}

/// Compiles and spawns `level` with `units`; the spawned level and what `door` saw,
/// as (owner id, target id or None).
fn spawn(level: &str, units: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
    let (registry, seen) = registry();
    let mut source: HashMap<String, String> = units
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let compiled = compile_level(&registry, &mut source, "levels/l.level", level).unwrap();
    let mut entities = EntityManager::new();
    let mut world = World::new();
    let spawned = spawn_level(&compiled.blob, &registry, &mut entities, &mut world).unwrap();
    let id_of = |e: Entity| {
        let k = spawned.entities.iter().position(|x| *x == e).unwrap();
        spawned.ids().nth(k).unwrap().to_owned()
    };
    let seen = seen.lock().unwrap().clone();
    let mut out: Vec<_> = seen
        .into_iter()
        .map(|(owner, target)| (id_of(owner), target.map(id_of)))
        .collect();
    out.sort();
    out
}

#[test]
fn an_entity_field_becomes_the_handle_of_the_entity_it_names() {
    let level = r#"{"entities": [
        {"id": "door", "components": {"door": {"switch": "plate"}}},
        {"id": "plate", "parent": "base"},
        {"id": "base"},
        {"id": "lone", "components": {"door": {}}}
    ]}"#;
    assert_eq!(
        spawn(level, &[]),
        vec![
            ("door".to_owned(), Some("plate".to_owned())),
            ("lone".to_owned(), None),
        ]
    );
}

#[test]
fn inside_a_prefab_an_entity_field_names_a_part_of_the_same_instance() {
    let unit = r#"{"entities": [
        {"id": "switch"},
        {"id": "door", "components": {"door": {"switch": "switch"}}},
        {"id": "gate", "components": {"door": {"switch": "guard"}}}
    ]}"#;
    // `guard` is no part of the prefab: it names the level's entity.
    let level = r#"{"entities": [
        {"id": "a", "prefab": "units/room"},
        {"id": "b", "prefab": "units/room"},
        {"id": "switch"},
        {"id": "guard"},
        {"id": "outside", "components": {"door": {"switch": "b/switch"}}}
    ]}"#;
    let seen = spawn(level, &[("units/room.unit", unit)]);
    let s = |x: &str| Some(x.to_owned());
    assert_eq!(
        seen,
        vec![
            ("a/door".to_owned(), s("a/switch")),
            ("a/gate".to_owned(), s("guard")),
            ("b/door".to_owned(), s("b/switch")),
            ("b/gate".to_owned(), s("guard")),
            ("outside".to_owned(), s("b/switch")),
        ]
    );
}

#[test]
fn a_name_that_is_no_entity_of_the_level_is_a_compile_error_naming_the_field() {
    let (registry, _) = registry();
    let level = r#"{"entities": [{"id": "door", "components": {"door": {"switch": "gone"}}}]}"#;
    let err = compile_level(&registry, &mut HashMap::new(), "levels/l.level", level).unwrap_err();
    let text = err.to_string();
    for says in [
        "levels/l.level",
        "door",
        "switch",
        "names no entity \"gone\"",
    ] {
        assert!(text.contains(says), "{text}");
    }
    // Inside a prefab, the error says where it looked.
    let unit = r#"{"entities": [{"id": "d", "components": {"door": {"switch": "nope"}}}]}"#;
    let mut source = HashMap::from([("units/room.unit".to_owned(), unit.to_owned())]);
    let level = r#"{"entities": [{"id": "a", "prefab": "units/room"}]}"#;
    let err = compile_level(&registry, &mut source, "levels/l.level", level)
        .unwrap_err()
        .to_string();
    assert!(err.contains("a/nope"), "{err}");
    // A value of the wrong type is refused as any field's is.
    let level = r#"{"entities": [{"id": "door", "components": {"door": {"switch": 3}}}]}"#;
    let err = compile_level(&registry, &mut HashMap::new(), "levels/l.level", level)
        .unwrap_err()
        .to_string();
    assert!(err.contains("the id of an entity"), "{err}");
}

#[test]
fn a_handle_whose_entity_is_destroyed_is_dead() {
    let (registry, seen) = registry();
    let level = r#"{"entities": [
        {"id": "door", "components": {"door": {"switch": "plate"}}},
        {"id": "plate"}
    ]}"#;
    let compiled = compile_level(&registry, &mut HashMap::new(), "levels/l.level", level).unwrap();
    let mut entities = EntityManager::new();
    let mut world = World::new();
    let spawned = spawn_level(&compiled.blob, &registry, &mut entities, &mut world).unwrap();
    let target = seen.lock().unwrap()[0].1.unwrap();
    assert!(entities.alive(target));
    let plate = spawned.entity("plate").unwrap();
    assert_eq!(target, plate);
    world.destroy(&mut entities, plate);
    assert!(!entities.alive(target));
    // The index is not reused by the next entity under the same handle.
    let next = entities.create();
    assert_ne!(next, target);
    assert!(!entities.alive(target));
}

/// A random level: `n` entities, some under others (a parent may come later in the
/// file: the compiler puts parents first), some with a door naming an entity (maybe
/// none).
fn random_level() -> impl Strategy<Value = String> {
    (2usize..40)
        .prop_flat_map(|n| {
            (
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
                proptest::collection::vec(proptest::option::of(0usize..1000), n),
                proptest::collection::vec(proptest::option::of(0usize..1000), n),
            )
        })
        .prop_map(|(rank, parents, doors)| {
            let n = rank.len();
            // Entity `rank[i]` may be under any entity `rank[j]`, j < i: no cycle.
            let mut place = vec![0; n];
            for (i, &k) in rank.iter().enumerate() {
                place[k] = i;
            }
            let entities: Vec<String> = (0..n)
                .map(|k| {
                    let parent = match parents[k] {
                        Some(p) if place[k] > 0 => {
                            format!(r#", "parent": "e{}""#, rank[p % place[k]])
                        }
                        _ => String::new(),
                    };
                    let door = match doors[k] {
                        Some(t) if t % 7 == 0 => r#", "components": {"door": {}}"#.to_owned(),
                        Some(t) => {
                            format!(r#", "components": {{"door": {{"switch": "e{}"}}}}"#, t % n)
                        }
                        None => String::new(),
                    };
                    format!(r#"{{"id": "e{k}"{parent}{door}}}"#)
                })
                .collect();
            format!(r#"{{"entities": [{}]}}"#, entities.join(", "))
        })
}

proptest! {
    /// Whatever the order parents put the entities in, every entity field is the
    /// handle of exactly the entity it names, and none where it names none.
    #[test]
    fn no_entity_field_resolves_to_another_entity_than_the_one_it_names(level in random_level()) {
        let doc: serde_json::Value = serde_json::from_str(&level).unwrap();
        let mut expected: Vec<(String, Option<String>)> = doc["entities"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| {
                let door = e["components"].get("door")?;
                Some((
                    e["id"].as_str()?.to_owned(),
                    door.get("switch").and_then(|s| s.as_str()).map(str::to_owned),
                ))
            })
            .collect();
        expected.sort();
        prop_assert_eq!(spawn(&level, &[]), expected);
    }
}
