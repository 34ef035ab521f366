//! Spawning a compiled 10,000-entity level (transform + mesh + point mass + debug
//! name) vs hecs and bevy_ecs `spawn_batch` of the same components, and vs a plain
//! memcpy of the level's instance bytes.
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use kiln_core::blob::LevelBlob;
use kiln_core::{EntityManager, Registry, World, compile_level, spawn_level};

#[path = "peers/mod.rs"]
mod peers;
use peers::{N, rows};

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
