//! The spawner's bulk paths against a simple oracle: any level blob, spawned into a
//! fresh or a used world, gives what creating each instance one by one through the
//! managers' single-instance calls gives.
//!
//! The bulk paths fill each array in its own pass, take fast paths when a section
//! covers every entity in order or the entities are the next indices, and copy
//! debug-name text in one piece; the oracle does none of that.
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use glam::{Affine3A, Quat, Vec3};
use kiln_core::blob::{ComponentBlock, LevelBlob, NO_PARENT, write_blob};
use kiln_core::components::{Mesh, PointMass};
use kiln_core::{
    ComponentManager, EntityManager, Instance, Registry, ResourceId, World, spawn_level,
};
use proptest::prelude::*;

mod common;

/// One random level: parents, and which entities have which components.
#[derive(Debug, Clone)]
struct Level {
    parents: Vec<Option<usize>>,
    /// Entities with a transform, in blob order, with translation and angle.
    transforms: Vec<(usize, f32, f32)>,
    /// Mesh owners in blob order (an entity may have several), mesh and material.
    meshes: Vec<(usize, u64, u64, bool)>,
    /// Point mass owners in blob order, with mass and velocity x.
    point_masses: Vec<(usize, f32, f32)>,
    /// Named entities in blob order, with the name.
    names: Vec<(usize, String)>,
}

/// Up to `n` distinct entities in a random order, or every entity in entity order
/// (what the compiler writes, and the spawner's fast path).
fn owners(n: usize) -> BoxedStrategy<Vec<usize>> {
    prop_oneof![
        Just((0..n).collect::<Vec<_>>()),
        prop::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=n).prop_shuffle(),
    ]
    .boxed()
}

fn level() -> impl Strategy<Value = Level> {
    (1usize..30).prop_flat_map(|n| {
        let parents = common::parents_first(n);
        let transforms = owners(n).prop_flat_map(|o| {
            let len = o.len();
            (
                Just(o),
                prop::collection::vec((-5.0f32..5.0, -3.0f32..3.0), len),
            )
                .prop_map(|(o, v)| o.into_iter().zip(v).map(|(e, (x, a))| (e, x, a)).collect())
        });
        let meshes = prop::collection::vec((0..n, 0u64..5, 0u64..5, any::<bool>()), 0..2 * n);
        let point_masses = owners(n).prop_flat_map(|o| {
            let len = o.len();
            (
                Just(o),
                prop::collection::vec((0.1f32..9.0, -2.0f32..2.0), len),
            )
                .prop_map(|(o, v)| o.into_iter().zip(v).map(|(e, (m, x))| (e, m, x)).collect())
        });
        let names = owners(n).prop_flat_map(|o| {
            let len = o.len();
            (Just(o), prop::collection::vec("[a-zé ]{0,9}", len))
                .prop_map(|(o, v)| o.into_iter().zip(v).collect())
        });
        (parents, transforms, meshes, point_masses, names).prop_map(
            |(parents, transforms, meshes, point_masses, names)| Level {
                parents,
                transforms,
                meshes,
                point_masses,
                names,
            },
        )
    })
}

fn local(x: f32, angle: f32) -> Affine3A {
    Affine3A::from_rotation_translation(Quat::from_rotation_y(angle), Vec3::new(x, 1.0, -x))
}

fn point_mass(mass: f32, vx: f32) -> PointMass {
    PointMass {
        mass,
        position: Vec3::ZERO,
        velocity: Vec3::new(vx, 0.0, 1.0),
        acceleration: Vec3::new(0.0, -9.8, 0.0),
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The level as a blob in the compiler's record formats (see `registry.rs`).
fn blob(level: &Level, registry: &Registry) -> Vec<u8> {
    let id = |name: &str| registry.component(name).unwrap().id;
    let mut transform = ComponentBlock {
        component_identifier: id("transform"),
        ..Default::default()
    };
    for &(e, x, a) in &level.transforms {
        transform.entity_index.push(e as u32);
        for c in local(x, a).to_cols_array() {
            transform.data.extend_from_slice(&c.to_le_bytes());
        }
    }
    let mut mesh = ComponentBlock {
        component_identifier: id("mesh"),
        ..Default::default()
    };
    for &(e, m, mat, visible) in &level.meshes {
        mesh.entity_index.push(e as u32);
        mesh.data.extend_from_slice(&m.to_le_bytes());
        mesh.data.extend_from_slice(&mat.to_le_bytes());
        put_u32(&mut mesh.data, visible as u32);
    }
    let mut point_masses = ComponentBlock {
        component_identifier: id("point_mass"),
        ..Default::default()
    };
    for &(e, m, vx) in &level.point_masses {
        let p = point_mass(m, vx);
        point_masses.entity_index.push(e as u32);
        for f in [p.mass, p.velocity.x, p.velocity.y, p.velocity.z]
            .into_iter()
            .chain(p.acceleration.to_array())
        {
            point_masses.data.extend_from_slice(&f.to_le_bytes());
        }
    }
    let mut names = ComponentBlock {
        component_identifier: id("debug_name"),
        ..Default::default()
    };
    for (e, name) in &level.names {
        names.entity_index.push(*e as u32);
        put_u32(&mut names.data, name.len() as u32);
        names.data.extend_from_slice(name.as_bytes());
        names.data.resize(names.data.len().next_multiple_of(4), 0);
    }
    let parents: Vec<u32> = level
        .parents
        .iter()
        .map(|p| p.map_or(NO_PARENT, |p| p as u32))
        .collect();
    let ids: Vec<String> = (0..parents.len()).map(|k| format!("e{k}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    // Sections in an order other than the spawn order: the spawner sorts them.
    write_blob(&parents, &[names, point_masses, mesh, transform], &ids)
}

/// The oracle: the same level through single-instance calls.
fn spawn_one_by_one(
    level: &Level,
    em: &mut EntityManager,
    world: &mut World,
) -> Vec<kiln_core::Entity> {
    let entities: Vec<_> = (0..level.parents.len()).map(|_| em.create()).collect();
    let mut by_entity: Vec<_> = level.transforms.clone();
    by_entity.sort_by_key(|t| t.0);
    let mut made: Vec<Option<Instance>> = vec![None; entities.len()];
    for &(e, x, a) in &by_entity {
        let mut up = level.parents[e];
        let parent = loop {
            match up {
                None => break None,
                Some(p) if made[p].is_some() => break made[p],
                Some(p) => up = level.parents[p],
            }
        };
        made[e] = Some(world.transforms.create(entities[e], local(x, a), parent));
    }
    for (e, name) in &level.names {
        world.debug_names.set_debug_name(entities[*e], name);
    }
    for &(e, m, mat, visible) in &level.meshes {
        world.meshes.create(
            entities[e],
            Mesh {
                mesh: ResourceId(m),
                material: ResourceId(mat),
                visible,
            },
        );
    }
    for &(e, m, vx) in &level.point_masses {
        let t = world.transforms.lookup(entities[e]);
        let position = t.map_or(Vec3::ZERO, |t| world.transforms.world(t).translation.into());
        world.point_masses.create(
            entities[e],
            PointMass {
                position,
                ..point_mass(m, vx)
            },
        );
    }
    entities
}

/// Everything observable about level entity `k` in `world`, with other entities
/// named by their level position.
fn observe(world: &World, entities: &[kiln_core::Entity], k: usize) -> String {
    let position = |e| entities.iter().position(|&x| x == e);
    let e = entities[k];
    let tm = &world.transforms;
    let transform = tm.lookup(e).map(|t| {
        (
            tm.local(t),
            tm.world(t),
            tm.parent(t).map(|p| position(tm.entity(p))),
            tm.children(t)
                .map(|c| position(tm.entity(c)))
                .collect::<Vec<_>>(),
        )
    });
    let meshes: Vec<Mesh> = world
        .meshes
        .instances_of(e)
        .map(|i| world.meshes.get(i))
        .collect();
    let point_mass = world.point_masses.lookup(e).map(|i| {
        let pm = &world.point_masses;
        (
            pm.mass(i),
            pm.position(i),
            pm.velocity(i),
            pm.acceleration(i),
        )
    });
    format!(
        "transform {transform:?}\nmeshes {meshes:?}\npoint mass {point_mass:?}\nname {:?}",
        world.debug_names.debug_name(e)
    )
}

/// A world that has spawned and despawned a level bigger than the free-index
/// queue's minimum, so that new entities reuse indices (not the next ones).
fn used_world(registry: &Registry) -> (EntityManager, World) {
    let (mut em, mut world) = (EntityManager::new(), World::new());
    let big = Level {
        parents: (0..1500).map(|k| (k % 10 != 0).then(|| k - 1)).collect(),
        transforms: (0..1500).map(|k| (k, k as f32 / 100.0, 0.5)).collect(),
        meshes: (0..1500).map(|k| (k, 1, 2, true)).collect(),
        point_masses: (0..1500).step_by(3).map(|k| (k, 1.0, 0.0)).collect(),
        names: (0..1500).map(|k| (k, format!("old {k}"))).collect(),
    };
    let spawned = spawn_level(&blob(&big, registry), registry, &mut em, &mut world).unwrap();
    // A few survivors keep components in every manager while their neighbours die.
    let dying: Vec<_> = spawned
        .entities
        .iter()
        .enumerate()
        .filter(|(k, _)| k % 100 != 7)
        .map(|(_, &e)| e)
        .collect();
    world.destroy_many(&mut em, &dying);
    (em, world)
}

/// The oracle's removal: each dead entity's components destroyed one at a time.
fn destroy_one_by_one(em: &mut EntityManager, world: &mut World, dying: &[kiln_core::Entity]) {
    for &e in dying {
        if em.destroy(e) {
            world.transforms.destroy_entity(e);
            world.meshes.destroy_entity(e);
            world.point_masses.destroy_entity(e);
            world.debug_names.destroy_entity(e);
        }
    }
}

/// Both worlds hold the same components for the same entities.
fn assert_same(
    world: &World,
    entities: &[kiln_core::Entity],
    oracle: &World,
    expected: &[kiln_core::Entity],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(entities, expected);
    for k in 0..expected.len() {
        prop_assert_eq!(
            observe(world, entities, k),
            observe(oracle, expected, k),
            "entity {}",
            k
        );
    }
    prop_assert_eq!(world.transforms.len(), oracle.transforms.len());
    prop_assert_eq!(world.meshes.len(), oracle.meshes.len());
    prop_assert_eq!(world.point_masses.len(), oracle.point_masses.len());
    prop_assert_eq!(world.debug_names.len(), oracle.debug_names.len());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Spawn, despawn some of the level (few: removed one by one; many: in one
    /// pass), then spawn it again into the used world: at every step the same as
    /// single-instance calls.
    #[test]
    fn bulk_spawn_and_despawn_match_one_by_one(
        level in level(),
        used in any::<bool>(),
        dies in prop::collection::vec(any::<bool>(), 30),
        few in any::<bool>(),
    ) {
        let registry = Registry::with_builtins();
        let bytes = blob(&level, &registry);
        prop_assert!(LevelBlob::parse(&bytes).is_ok());
        let ((mut em, mut world), (mut oracle_em, mut oracle)) = if used {
            (used_world(&registry), used_world(&registry))
        } else {
            ((EntityManager::new(), World::new()), (EntityManager::new(), World::new()))
        };
        let spawned = spawn_level(&bytes, &registry, &mut em, &mut world).unwrap();
        let expected = spawn_one_by_one(&level, &mut oracle_em, &mut oracle);
        assert_same(&world, &spawned.entities, &oracle, &expected)?;

        let dying: Vec<_> = expected
            .iter()
            .zip(&dies)
            .enumerate()
            .filter(|&(k, (_, &d))| d && (!few || k % 7 == 0))
            .map(|(_, (&e, _))| e)
            .collect();
        world.destroy_many(&mut em, &dying);
        destroy_one_by_one(&mut oracle_em, &mut oracle, &dying);
        let survivors: Vec<_> = expected.iter().copied().filter(|e| !dying.contains(e)).collect();
        assert_same(&world, &survivors, &oracle, &survivors)?;

        let again = spawn_level(&bytes, &registry, &mut em, &mut world).unwrap();
        let expected_again = spawn_one_by_one(&level, &mut oracle_em, &mut oracle);
        assert_same(&world, &again.entities, &oracle, &expected_again)?;
        assert_same(&world, &survivors, &oracle, &survivors)?;
    }
}
