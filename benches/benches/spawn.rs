//! Spawning a compiled 10,000-entity level (transform + mesh + point mass + debug
//! name) vs hecs and bevy_ecs `spawn_batch` of the same components, and vs a plain
//! memcpy of the level's instance bytes.
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use glam::{Affine3A, Quat, Vec3};
use kiln_core::blob::LevelBlob;
use kiln_core::{EntityManager, Registry, World, compile_level, spawn_level};

const N: usize = 10_000;

#[derive(Clone, Copy, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
struct Transform {
    local: Affine3A,
    world: Affine3A,
}
#[derive(Clone, Copy, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
struct Mesh {
    mesh: u64,
    material: u64,
    visible: bool,
}
#[derive(Clone, Copy, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
struct PointMass {
    mass: f32,
    position: Vec3,
    velocity: Vec3,
    acceleration: Vec3,
}
#[derive(Clone, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
struct DebugName(String);

/// One entity's components, as hecs and bevy take them.
type Row = (Transform, Mesh, PointMass, DebugName);

fn rows() -> Vec<Row> {
    (0..N)
        .map(|i| {
            let local = Affine3A::from_rotation_translation(
                Quat::from_rotation_y(i as f32),
                Vec3::new((i % 100) as f32, 0.0, (i / 100) as f32),
            );
            (
                Transform {
                    local,
                    world: local,
                },
                Mesh {
                    mesh: 1,
                    material: i as u64 % 8,
                    visible: true,
                },
                PointMass {
                    mass: 2.0,
                    position: Vec3::ZERO,
                    velocity: Vec3::X,
                    acceleration: Vec3::ZERO,
                },
                DebugName(format!("Entity {i}")),
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let registry = Registry::with_builtins();
    let level = kiln_benches::level_json(N);
    let compiled = compile_level(&registry, &mut HashMap::new(), "levels/bench.level", &level)
        .expect("benchmark level compiles");
    let blob = compiled.blob;
    let instance_bytes: Vec<u8> = LevelBlob::parse(&blob)
        .expect("benchmark blob parses")
        .components
        .iter()
        .flat_map(|c| c.data.iter().copied())
        .collect();

    let mut g = c.benchmark_group("spawn_10k");
    g.bench_function("kiln spawn_level", |b| {
        b.iter_batched_ref(
            || (EntityManager::new(), World::new()),
            |(em, world)| spawn_level(black_box(&blob), &registry, em, world).expect("spawns"),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("kiln respawn (despawn + spawn into a warm world)", |b| {
        let (mut em, mut world) = (EntityManager::new(), World::new());
        let mut level = spawn_level(&blob, &registry, &mut em, &mut world).expect("spawns");
        b.iter(|| {
            world.despawn(&mut em, &level);
            level = spawn_level(black_box(&blob), &registry, &mut em, &mut world).expect("spawns");
        })
    });
    g.bench_function("hecs spawn_batch", |b| {
        b.iter_batched_ref(
            || (hecs::World::new(), rows()),
            |(world, rows)| {
                world.spawn_batch(std::mem::take(rows)).for_each(drop);
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("bevy_ecs spawn_batch", |b| {
        b.iter_batched_ref(
            || (bevy_ecs::world::World::new(), rows()),
            |(world, rows)| {
                world.spawn_batch(std::mem::take(rows)).for_each(drop);
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("memcpy of the instance bytes", |b| {
        let mut dst = vec![0u8; instance_bytes.len()];
        b.iter(|| {
            dst.copy_from_slice(black_box(&instance_bytes));
            black_box(&dst);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
