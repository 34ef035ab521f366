//! Compile -> blob -> spawn, end to end: poses, hierarchy, prefabs, errors.
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use glam::{Affine3A, EulerRot, Quat, Vec3};
use kiln_core::blob::LevelBlob;
use kiln_core::{
    CompileError, EntityManager, Registry, SpawnError, World, compile_level, spawn_level,
};
use proptest::prelude::*;

mod common;
use serde_json::json;

fn compile(
    level: &serde_json::Value,
    units: &[(&str, serde_json::Value)],
) -> Result<Vec<u8>, CompileError> {
    let mut source: HashMap<String, String> = units
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    compile_level(
        &Registry::with_builtins(),
        &mut source,
        "levels/test.level",
        &level.to_string(),
    )
    .map(|c| c.blob)
}

fn spawn(blob: &[u8]) -> (EntityManager, World, kiln_core::SpawnedLevel) {
    let (mut em, mut world) = (EntityManager::new(), World::new());
    let level = spawn_level(blob, &Registry::with_builtins(), &mut em, &mut world).expect("spawns");
    (em, world, level)
}

fn world_pos(world: &World, level: &kiln_core::SpawnedLevel, id: &str) -> Vec3 {
    let e = level.entity(id).unwrap_or_else(|| panic!("no entity {id}"));
    let t = world.transforms.lookup(e).expect("has a transform");
    world.transforms.world(t).translation.into()
}

#[test]
fn hierarchy_names_and_meshes_spawn() {
    let level = json!({"entities": [
        {"id": "lamp", "parent": "table", "name": "Lamp", "components": {
            "transform": {"position": [0, 1, 0]},
            "mesh": [{"mesh": "meshes/cylinder"}, {"mesh": "meshes/sphere", "material": "materials/glow"}]}},
        {"id": "table", "name": "Table", "components": {"transform": {"position": [2, 0, 0], "scale": [2, 2, 2]}}},
        {"id": "empty"}
    ]});
    let blob = compile(&level, &[]).unwrap();
    let parsed = LevelBlob::parse(&blob).unwrap();
    // Parents first: table, then lamp, then the second root.
    assert_eq!(
        parsed.ids().collect::<Vec<_>>(),
        vec!["table", "lamp", "empty"]
    );
    let (_, world, spawned) = spawn(&blob);
    assert_eq!(
        world_pos(&world, &spawned, "lamp"),
        Vec3::new(2.0, 2.0, 0.0)
    );
    let lamp = spawned.entity("lamp").unwrap();
    assert_eq!(world.debug_names.debug_name(lamp), Some("Lamp"));
    assert_eq!(world.meshes.instances_of(lamp).count(), 2);
    assert_eq!(
        world
            .debug_names
            .debug_name(spawned.entity("empty").unwrap()),
        None
    );
    assert_eq!(spawned.authoring_id(lamp), Some("lamp"));
}

#[test]
fn prefabs_flatten_with_overrides_and_nesting() {
    let bulb = json!({"entities": [
        {"id": "glass", "components": {"transform": {"position": [0, 0.5, 0]}, "mesh": {"mesh": "meshes/sphere", "material": "materials/glass"}}}
    ]});
    let lamp = json!({"entities": [
        {"id": "pole", "components": {"transform": {"position": [0, 1, 0]}, "mesh": {"mesh": "meshes/cylinder"}}},
        {"id": "head", "parent": "pole", "prefab": "units/bulb", "components": {"transform": {"position": [0, 1, 0]}}}
    ]});
    let level = json!({"entities": [
        {"id": "lamp_a", "prefab": "units/lamp", "components": {"transform": {"position": [10, 0, 0]}},
         "overrides": {
            "pole": {"mesh": null},
            "head/glass": {"mesh": {"material": "materials/red"}}
         }},
        {"id": "lamp_b", "prefab": "units/lamp", "components": {"transform": {"position": [-10, 0, 0]}}}
    ]});
    let blob = compile(
        &level,
        &[("units/lamp.unit", lamp), ("units/bulb.unit", bulb)],
    )
    .unwrap();
    let (_, world, spawned) = spawn(&blob);
    let expected = [
        "lamp_a",
        "lamp_a/pole",
        "lamp_a/head",
        "lamp_a/head/glass",
        "lamp_b",
        "lamp_b/pole",
        "lamp_b/head",
        "lamp_b/head/glass",
    ];
    assert_eq!(spawned.ids().collect::<Vec<_>>(), expected);
    assert_eq!(
        world_pos(&world, &spawned, "lamp_a/head/glass"),
        Vec3::new(10.0, 2.5, 0.0)
    );
    assert_eq!(
        world_pos(&world, &spawned, "lamp_b/head/glass"),
        Vec3::new(-10.0, 2.5, 0.0)
    );
    // The override removed lamp_a's pole mesh and recoloured its glass; lamp_b is untouched.
    assert_eq!(
        world
            .meshes
            .instances_of(spawned.entity("lamp_a/pole").unwrap())
            .count(),
        0
    );
    assert_eq!(
        world
            .meshes
            .instances_of(spawned.entity("lamp_b/pole").unwrap())
            .count(),
        1
    );
    let material = |id: &str| {
        let e = spawned.entity(id).unwrap();
        world.meshes.get(world.meshes.lookup(e).unwrap()).material
    };
    let red = kiln_core::ResourceId::of(
        &kiln_core::ResourcePath::parse("materials/red").unwrap(),
        "material",
    );
    assert_eq!(material("lamp_a/head/glass"), red);
    assert_ne!(material("lamp_b/head/glass"), red);
}

#[test]
fn errors_name_the_place() {
    // (level, units it may include, text the error must contain)
    type Case<'a> = (
        serde_json::Value,
        Vec<(&'a str, serde_json::Value)>,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            json!({"entities": [{"id": "a", "components": {"transform": {"position": "up"}}}]}),
            vec![],
            "levels/test.level: entity \"a\", component \"transform\", field \"position\": expected an array of 3 numbers",
        ),
        (
            json!({"entities": [{"id": "a", "components": {"transform": {"postion": [0, 0, 0]}}}]}),
            vec![],
            "field \"postion\": unknown field; known fields are: position, rotation, scale",
        ),
        (
            json!({"entities": [{"id": "a", "components": {"physics": {}}}]}),
            vec![],
            "entity \"a\", component \"physics\": unknown component type",
        ),
        (
            json!({"entities": [{"id": "a", "components": {"mesh": {"mesh": "Meshes\\Cube"}}}]}),
            vec![],
            "did you mean \"meshes/cube\"",
        ),
        (
            json!({"entities": [{"id": "a"}, {"id": "a"}]}),
            vec![],
            "entity \"a\": another entity in this file has the same id",
        ),
        (
            json!({"entities": [{"id": "a", "parent": "b"}, {"id": "b", "parent": "a"}]}),
            vec![],
            "parent cycle",
        ),
        (
            json!({"entities": [{"id": "a", "parent": "nobody"}]}),
            vec![],
            "parent \"nobody\" is not an entity of this file",
        ),
        (
            json!({"entities": [{"id": "a", "prefab": "units/missing"}]}),
            vec![],
            "entity \"a\": prefab \"units/missing\" cannot be read: no such file",
        ),
        (
            json!({"entities": [{"id": "a", "prefab": "units/x"}]}),
            vec![
                (
                    "units/x.unit",
                    json!({"entities": [{"id": "b", "prefab": "units/y"}]}),
                ),
                (
                    "units/y.unit",
                    json!({"entities": [{"id": "c", "prefab": "units/x"}]}),
                ),
            ],
            "prefab cycle: units/x.unit -> units/y.unit -> units/x.unit",
        ),
        (
            json!({"entities": [{"id": "a", "prefab": "units/x", "overrides": {"zz": {}}}]}),
            vec![("units/x.unit", json!({"entities": [{"id": "b"}]}))],
            "overrides \"zz\", which is not an entity of units/x.unit",
        ),
        (
            // A part of a nested prefab that is gone (one branch removed it while
            // another overrode it): an error, not an override dropped in silence.
            json!({"entities": [{"id": "a", "prefab": "units/x", "overrides": {"b/gone": {"transform": {"position": [0, 1, 0]}}}}]}),
            vec![
                (
                    "units/x.unit",
                    json!({"entities": [{"id": "b", "prefab": "units/y"}]}),
                ),
                ("units/y.unit", json!({"entities": [{"id": "c"}]})),
            ],
            "overrides \"gone\", which is not an entity of units/y.unit",
        ),
        (
            json!({"entities": [{"id": "a", "prefab": "units/bad"}]}),
            vec![(
                "units/bad.unit",
                json!({"entities": [{"id": "b", "components": {"rotator": {"speed": "fast"}}}]}),
            )],
            "units/bad.unit: entity \"a/b\", component \"rotator\", field \"speed\"",
        ),
    ];
    for (level, units, needle) in cases {
        let err = compile(&level, &units).expect_err(needle).to_string();
        assert!(err.contains(needle), "expected {needle:?} in {err:?}");
    }
}

#[test]
fn malformed_json_names_line_and_column() {
    let text = "{\"entities\": [\n  {\"id\": \"a\"\n  {\"id\": \"b\"}\n]}";
    let err = compile_level(
        &Registry::with_builtins(),
        &mut HashMap::new(),
        "levels/bad.level",
        text,
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("levels/bad.level:3:3: "),
        "{err}"
    );
}

#[test]
fn unknown_component_types_are_skipped_with_a_warning() {
    // A plugin type known to the compiler but not to the runtime that loads the blob.
    fn compile_volume(f: &kiln_core::FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
        out.extend_from_slice(&f.f32("volume").to_le_bytes());
        Ok(())
    }
    fn spawn_nothing(
        _: &mut kiln_core::SpawnContext,
        b: &kiln_core::ComponentBatch,
    ) -> Result<(), String> {
        b.fixed_records(4).map(|_| ())
    }
    let mut with_plugin = Registry::with_builtins();
    with_plugin
        .register_component(
            kiln_core::ComponentType::new("sound", 5, compile_volume, spawn_nothing)
                .with_fields(vec![kiln_core::FieldSchema::float("volume", 1.0, 0.0, 1.0)]),
        )
        .unwrap();
    let level = json!({"entities": [{"id": "a", "components": {"sound": {"volume": 0.5}, "transform": {"position": [1, 2, 3]}}}]});
    let blob = compile_level(
        &with_plugin,
        &mut HashMap::new(),
        "l.level",
        &level.to_string(),
    )
    .unwrap()
    .blob;
    let (_, world, spawned) = spawn(&blob);
    assert_eq!(spawned.warnings.len(), 1, "{:?}", spawned.warnings);
    assert!(spawned.warnings[0].contains("unknown component type"));
    assert_eq!(world_pos(&world, &spawned, "a"), Vec3::new(1.0, 2.0, 3.0));
}

#[test]
fn corrupt_instance_data_rolls_back_the_spawn() {
    let level = json!({"entities": [
        {"id": "a", "name": "A", "components": {"transform": {}, "mesh": {"mesh": "meshes/cube"}}},
        {"id": "b", "components": {"transform": {}, "point_mass": {}}}
    ]});
    let mut blob = compile(&level, &[]).unwrap();
    // Shrink the point mass section's declared size so it no longer fits its instances.
    let parsed = LevelBlob::parse(&blob).unwrap();
    let pm_id = Registry::with_builtins()
        .component("point_mass")
        .unwrap()
        .id;
    assert!(
        parsed
            .components
            .iter()
            .any(|c| c.component_identifier == pm_id)
    );
    let pos = blob
        .windows(4)
        .position(|w| w == pm_id.to_le_bytes())
        .unwrap();
    let size_at = pos + 8;
    blob[size_at..size_at + 4].copy_from_slice(&0u32.to_le_bytes());
    // Keep the section sizes consistent: drop the now-unaccounted bytes (28 + padding).
    blob.drain(size_at + 8..size_at + 8 + 28);
    let entities_size = u32::from_le_bytes(blob[12..16].try_into().unwrap()) - 28;
    blob[12..16].copy_from_slice(&entities_size.to_le_bytes());
    let ids_offset = u32::from_le_bytes(blob[16..20].try_into().unwrap()) - 28;
    blob[16..20].copy_from_slice(&ids_offset.to_le_bytes());

    let (mut em, mut world) = (EntityManager::new(), World::new());
    let err = spawn_level(&blob, &Registry::with_builtins(), &mut em, &mut world).unwrap_err();
    assert!(
        matches!(&err, SpawnError::Component { component, .. } if component == "point_mass"),
        "{err}"
    );
    assert_eq!(em.len(), 0);
    assert_eq!(
        (
            world.transforms.len(),
            world.meshes.len(),
            world.debug_names.len()
        ),
        (0, 0, 0)
    );
}

/// A pose that is not finite, crafted into a blob for a root or a child, in its
/// translation or its matrix, is refused and the spawn rolled back (the spawner
/// checks the world poses it computes: such a local pose poisons them).
#[test]
fn a_pose_that_is_not_finite_rolls_back_the_spawn() {
    let level = json!({"entities": [
        {"id": "a", "components": {"transform": {"position": [1.25, 0, 0]}}},
        {"id": "b", "parent": "a", "components": {"transform": {"position": [0, 0, 7.75], "scale": [3.5, 1, 1]}}}
    ]});
    let blob = compile(&level, &[]).unwrap();
    let (mut em, mut world) = (EntityManager::new(), World::new());
    spawn_level(&blob, &Registry::with_builtins(), &mut em, &mut world).unwrap();
    for marker in [1.25f32, 7.75, 3.5] {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut crafted = blob.clone();
            let at = crafted
                .windows(4)
                .position(|w| w == marker.to_le_bytes())
                .unwrap();
            crafted[at..at + 4].copy_from_slice(&bad.to_le_bytes());
            let (mut em, mut world) = (EntityManager::new(), World::new());
            let err =
                spawn_level(&crafted, &Registry::with_builtins(), &mut em, &mut world).unwrap_err();
            assert!(
                matches!(&err, SpawnError::Component { component, .. } if component == "transform"),
                "{marker} -> {bad}: {err}"
            );
            assert_eq!(
                (em.len(), world.transforms.len()),
                (0, 0),
                "{marker} -> {bad}"
            );
        }
    }
}

#[test]
fn despawn_removes_everything() {
    let blob = compile(&json!({"entities": [
        {"id": "a", "name": "A", "components": {"transform": {}, "mesh": {"mesh": "meshes/cube"}, "rotator": {}, "oscillator": {}, "point_mass": {}}},
        {"id": "b", "parent": "a", "components": {"transform": {}}}
    ]}), &[]).unwrap();
    let (mut em, mut world, spawned) = spawn(&blob);
    let other = spawn_level(&blob, &Registry::with_builtins(), &mut em, &mut world).unwrap();
    world.despawn(&mut em, &spawned);
    assert_eq!(em.len(), 2);
    assert_eq!(world.transforms.len(), 2);
    assert_eq!(
        (
            world.meshes.len(),
            world.rotators.len(),
            world.oscillators.len(),
            world.point_masses.len()
        ),
        (1, 1, 1, 1)
    );
    world.despawn(&mut em, &other);
    assert_eq!(
        world.transforms.len()
            + world.meshes.len()
            + world.debug_names.len()
            + world.point_masses.len(),
        0
    );
}

#[test]
fn simulation_moves_spawned_entities() {
    let blob = compile(&json!({"entities": [
        {"id": "ball", "components": {"transform": {"position": [0, 10, 0]}, "point_mass": {"velocity": [1, 0, 0], "acceleration": [0, 0, 0]}}},
        {"id": "bob", "components": {"transform": {"position": [0, 1, 0]}, "oscillator": {"amplitude": [0, 2, 0], "frequency": 0.25}}}
    ]}), &[]).unwrap();
    let (em, mut world, spawned) = spawn(&blob);
    world.simulate(1.0, &em);
    assert!(world_pos(&world, &spawned, "ball").abs_diff_eq(Vec3::new(1.0, 10.0, 0.0), 1e-5));
    assert!(world_pos(&world, &spawned, "bob").abs_diff_eq(Vec3::new(0.0, 3.0, 0.0), 1e-5));
}

/// A random level: entity k's parent is one of the entities before it (or none),
/// entities are listed in a shuffled order, each has a random transform.
fn random_level() -> impl Strategy<Value = (Vec<Option<usize>>, Vec<[f32; 9]>, Vec<usize>)> {
    (1usize..40).prop_flat_map(|n| {
        let parents = common::parents_first(n);
        let trs = prop::collection::vec(prop::array::uniform9(-5.0f32..5.0), n);
        let order = Just((0..n).collect::<Vec<_>>()).prop_shuffle();
        (parents, trs, order)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Compile then spawn gives every entity exactly the world pose its authored local
    /// poses imply, whatever order the file lists entities in.
    #[test]
    fn compile_then_spawn_round_trips((parents, trs, order) in random_level()) {
        let n = parents.len();
        let entities: Vec<serde_json::Value> = order.iter().map(|&k| {
            let t = trs[k];
            let mut e = json!({"id": format!("e{k}"), "name": format!("Entity {k}"), "components": {"transform": {
                "position": [t[0], t[1], t[2]], "rotation": [t[3] * 30.0, t[4] * 30.0, t[5] * 30.0],
                "scale": [1.0 + t[6].abs() / 5.0, 1.0 + t[7].abs() / 5.0, 1.0 + t[8].abs() / 5.0]}}});
            if let Some(p) = parents[k] { e["parent"] = json!(format!("e{p}")); }
            e
        }).collect();
        let blob = compile(&json!({"entities": entities}), &[]).unwrap();
        let (em, world, spawned) = spawn(&blob);
        prop_assert_eq!(em.len(), n);
        let mut expected: Vec<Affine3A> = Vec::with_capacity(n);
        for k in 0..n {
            let t = trs[k];
            let local = Affine3A::from_scale_rotation_translation(
                Vec3::new(1.0 + t[6].abs() / 5.0, 1.0 + t[7].abs() / 5.0, 1.0 + t[8].abs() / 5.0),
                Quat::from_euler(EulerRot::XYZ, (t[3] * 30.0).to_radians(), (t[4] * 30.0).to_radians(), (t[5] * 30.0).to_radians()),
                Vec3::new(t[0], t[1], t[2]));
            let world_pose = match parents[k] { Some(p) => expected[p] * local, None => local };
            expected.push(world_pose);
            let e = spawned.entity(&format!("e{k}")).unwrap();
            let ti = world.transforms.lookup(e).unwrap();
            prop_assert!(world.transforms.world(ti).abs_diff_eq(world_pose, 1e-3));
            let name = format!("Entity {k}");
            prop_assert_eq!(world.debug_names.debug_name(e), Some(name.as_str()));
            let parent_entity = world.transforms.parent(ti).map(|p| world.transforms.entity(p));
            prop_assert_eq!(parent_entity, parents[k].and_then(|p| spawned.entity(&format!("e{p}"))));
        }
    }
}

/// The error of compiling `level` (JSON text) as `file` with `source`, as text.
fn compile_error(source: &mut dyn kiln_core::ResourceSource, file: &str, level: &str) -> String {
    compile_level(&Registry::with_builtins(), source, file, level)
        .unwrap_err()
        .to_string()
}

/// Units `units/u0` .. `units/u{n-1}`, each instancing the next `fan` times.
fn prefab_chain(n: usize, fan: usize) -> HashMap<String, String> {
    (0..n)
        .map(|i| {
            let entities: Vec<serde_json::Value> = if i + 1 < n {
                (0..fan)
                    .map(|k| json!({"id": format!("e{k}"), "prefab": format!("units/u{}", i + 1)}))
                    .collect()
            } else {
                vec![json!({"id": "leaf"})]
            };
            (
                format!("units/u{i}.unit"),
                json!({ "entities": entities }).to_string(),
            )
        })
        .collect()
}

/// A prefab chain thousands deep ends in an error naming the limit and where the
/// chain starts, not in a stack overflow.
#[test]
fn prefab_nesting_is_bounded() {
    let mut source = prefab_chain(8000, 1);
    let level = json!({"entities": [{"id": "root", "prefab": "units/u0"}]}).to_string();
    let text = compile_error(&mut source, "levels/deep.level", &level);
    assert!(
        text.starts_with(
            "levels/deep.level: prefabs nest more than 64 deep: levels/deep.level -> units/u0.unit"
        ),
        "{text}"
    );
    // Within the bound, nesting works.
    let mut source = prefab_chain(30, 1);
    let compiled = compile_level(
        &Registry::with_builtins(),
        &mut source,
        "levels/ok.level",
        &level,
    )
    .unwrap();
    assert_eq!(compiled.entity_count, 31);
}

/// A source whose project allows few entities per level.
struct Limited(HashMap<String, String>, usize);

impl kiln_core::ResourceSource for Limited {
    fn read_text(&mut self, path: &kiln_core::ResourcePath, ext: &str) -> Result<String, String> {
        self.0.read_text(path, ext)
    }
    fn max_level_entities(&self) -> usize {
        self.1
    }
}

/// Prefabs instancing each other twice over, 40 deep, would flatten to 2^40
/// entities: the compile stops at the level's entity limit, before allocating it.
#[test]
fn prefab_fan_out_is_bounded() {
    let level = json!({"entities": [{"id": "root", "prefab": "units/u0"}]}).to_string();
    let mut source = Limited(prefab_chain(40, 2), 20_000);
    let text = compile_error(&mut source, "levels/wide.level", &level);
    assert!(
        text.starts_with("levels/wide.level: flattening prefabs makes more than 20000 entities"),
        "{text}"
    );
    assert!(text.contains("counted before placing any"), "{text}");
    assert!(text.contains("max_level_entities"), "{text}");
    // At the highest limit a project may set, refused as fast and as small: the
    // count comes before any entity is placed (it took 3.4 GB and 16 s).
    let started = std::time::Instant::now();
    let mut source = Limited(
        prefab_chain(24, 2),
        kiln_core::compiler::MAX_LEVEL_ENTITIES_CEILING,
    );
    let text = compile_error(&mut source, "levels/wide.level", &level);
    assert!(text.contains("more than 4000000 entities"), "{text}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let mut source = Limited(prefab_chain(10, 2), 20_000);
    let compiled = compile_level(
        &Registry::with_builtins(),
        &mut source,
        "levels/ok.level",
        &level,
    )
    .unwrap();
    // The root, 2^d instance entities at each depth d of u0..u8, and 2^9 leaves.
    assert_eq!(
        compiled.entity_count,
        1 + (1..=9).map(|d| 1usize << d).sum::<usize>() + (1 << 9)
    );
}

/// A level using every built-in component type, with a hierarchy.
fn every_component_blob() -> Vec<u8> {
    compile(
        &json!({"entities": [
            {"id": "a", "name": "A", "components": {
                "transform": {"position": [1, 2, 3]},
                "mesh": [{"mesh": "meshes/m"}, {"mesh": "meshes/n"}],
                "point_mass": {"mass": 2, "velocity": [1, 0, 0]}
            }},
            {"id": "b", "parent": "a", "components": {
                "transform": {"position": [0, 1, 0]},
                "oscillator": {"amplitude": [0, 1, 0], "frequency": 1},
                "rotator": {"axis": [0, 1, 0], "speed": 90}
            }},
            {"id": "c", "parent": "b", "components": {"mesh": {"mesh": "meshes/m"}}},
            // Enough others that a change of the first three is spawned again in
            // part, not whole.
            {"id": "d", "components": {"transform": {}}},
            {"id": "e", "components": {"transform": {}}},
            {"id": "f", "components": {"transform": {}}},
            {"id": "g", "components": {"transform": {}}},
            {"id": "h", "components": {"transform": {}}}
        ]}),
        &[],
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Structured corruption of a valid blob (a section duplicated, sections
    /// reordered or dropped, instance lists swapped between sections, an
    /// instance given twice) is loaded or refused, never a panic; a duplicated
    /// section is always refused. The same holds for a running level brought to
    /// it by spawning again what changed: nothing is spawned where a whole spawn
    /// refuses the blob.
    #[test]
    fn restructured_blobs_never_panic(
        op in 0usize..5,
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let bytes = every_component_blob();
        let blob = LevelBlob::parse(&bytes).unwrap();
        let mut blocks: Vec<kiln_core::blob::ComponentBlock> = blob
            .components
            .iter()
            .map(|s| kiln_core::blob::ComponentBlock {
                component_identifier: s.component_identifier,
                entity_index: s.entity_index.to_vec(),
                data: s.data.to_vec(),
            })
            .collect();
        let (i, j) = (a.index(blocks.len()), b.index(blocks.len()));
        match op {
            0 => {
                let copy = blocks[i].clone();
                blocks.insert(j, copy);
            }
            1 => blocks.swap(i, j),
            2 => {
                blocks.remove(i);
            }
            3 => {
                let ei = blocks[i].entity_index.clone();
                blocks[i].entity_index = blocks[j].entity_index.clone();
                blocks[j].entity_index = ei;
            }
            _ => {
                // The first instance of a section given twice, to its owner.
                let block = &mut blocks[i];
                let size = block.data.len() / block.entity_index.len().max(1);
                if let Some(&owner) = block.entity_index.first() {
                    block.entity_index.insert(0, owner);
                    let first = block.data[..size].to_vec();
                    block.data.splice(0..0, first);
                }
            }
        }
        let ids: Vec<&str> = blob.ids().collect();
        let mutated = kiln_core::blob::write_blob(&blob.parent_index, &blocks, &ids);
        let registry = Registry::with_builtins();
        let mut entities = EntityManager::new();
        let mut world = World::new();
        let result = spawn_level(&mutated, &registry, &mut entities, &mut world);
        if op == 0 {
            prop_assert!(matches!(result, Err(SpawnError::Blob(_))), "{result:?}");
        }
        let (mut entities, mut world) = (EntityManager::new(), World::new());
        let running = spawn_level(&bytes, &registry, &mut entities, &mut world).unwrap();
        let respawned = running.respawn_changed((&bytes, &mutated), &registry, &mut entities, &mut world);
        if result.is_err() {
            prop_assert!(!matches!(respawned, Ok(Some(_))), "{respawned:?} where a spawn refused it");
        }
    }
}

/// Numbers beyond a 32-bit float's range are refused at compile, naming the entity,
/// component and field and the range, instead of becoming infinity at spawn.
#[test]
fn numbers_beyond_f32_are_refused_at_compile() {
    for bad in [
        "1e39",
        "-1e300",
        "123456789012345678901234567890123456789012345678901234567890",
    ] {
        let level = format!(
            r#"{{"entities": [{{"id": "x", "components": {{"transform": {{"position": [0, {bad}, 0]}}}}}}]}}"#
        );
        let mut source: HashMap<String, String> = HashMap::new();
        let err = compile_error(&mut source, "levels/big.level", &level);
        assert!(err.contains("entity \"x\""), "{err}");
        assert!(err.contains("transform"), "{err}");
        assert!(err.contains("position"), "{err}");
        assert!(err.contains("outside the range of a 32-bit float"), "{err}");
    }
    let level = r#"{"entities": [{"id": "x", "components": {"point_mass": {"mass": 1e39}}}]}"#;
    let mut source: HashMap<String, String> = HashMap::new();
    let err = compile_error(&mut source, "levels/big.level", level);
    assert!(
        err.contains("mass") && err.contains("32-bit float"),
        "{err}"
    );
}

/// Removes every component named `name` from the entities of `doc` (a level or unit).
fn without_component(doc: &serde_json::Value, name: &str) -> serde_json::Value {
    let mut doc = doc.clone();
    for e in doc["entities"].as_array_mut().unwrap() {
        if let Some(c) = e.get_mut("components").and_then(|c| c.as_object_mut()) {
            c.remove(name);
        }
    }
    doc
}

#[test]
fn a_preview_leaves_out_components_of_unknown_types_and_says_which() {
    let level = json!({"entities": [
        {"id": "mill", "name": "Mill", "components": {
            "transform": {"position": [1, 2, 3]},
            "wind": {"strength": 2},
            "mesh": {"mesh": "meshes/cube"}}},
        {"id": "lamp_1", "prefab": "units/lamp", "components": {"transform": {"position": [4, 0, 0]}}}
    ]});
    let lamp = json!({"entities": [
        {"id": "bulb", "components": {"transform": {}, "blink": {"period": 1}}}
    ]});
    let mut registry = Registry::with_builtins();
    registry.note_absent_component("wind", "plugin plugins/wind, which did not load".into());
    let units = |unit: &serde_json::Value| {
        HashMap::from([("units/lamp.unit".to_owned(), unit.to_string())])
    };

    // The shipping compile refuses, naming the entity, the component and the plugin.
    let refused = compile_level(
        &registry,
        &mut units(&lamp),
        "levels/l.level",
        &level.to_string(),
    )
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "levels/l.level: entity \"mill\", component \"wind\": its type comes from plugin plugins/wind, which did not load"
    );

    // A preview compiles the rest: the same blob as the level without them.
    let options = kiln_core::CompileOptions {
        skip_unknown_components: true,
    };
    let previewed = kiln_core::compile_level_with(
        &registry,
        &mut units(&lamp),
        "levels/l.level",
        &level.to_string(),
        options,
    )
    .unwrap();
    let plain = compile_level(
        &registry,
        &mut units(&without_component(&lamp, "blink")),
        "levels/l.level",
        &without_component(&level, "wind").to_string(),
    )
    .unwrap();
    assert_eq!(previewed.blob, plain.blob);
    let said: Vec<String> = previewed.left_out.iter().map(ToString::to_string).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].contains(
            "entity \"mill\", component \"wind\": its type comes from plugin plugins/wind"
        ),
        "{said:?}"
    );
    assert!(
        said[1].starts_with(
            "units/lamp.unit: entity \"lamp_1/bulb\", component \"blink\": unknown component type"
        ),
        "{said:?}"
    );
    assert!(plain.left_out.is_empty());

    // Other mistakes are still errors in a preview.
    let broken = json!({"entities": [{"id": "a", "components": {"transform": {"position": "up"}, "wind": {}}}]});
    assert!(
        kiln_core::compile_level_with(
            &registry,
            &mut HashMap::new(),
            "levels/b.level",
            &broken.to_string(),
            options
        )
        .is_err()
    );
}
