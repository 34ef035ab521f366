//! Kiln's `spawn_level` of a 10,000-entity level against hecs and bevy_ecs
//! `spawn_batch` of the same components, interleaved: each round times one spawn
//! of each, in a rotating order, so that a shared machine's load, which changes
//! from second to second, falls on all three alike. Prints each one's median and
//! the median of the per-round ratios (what BENCHMARKS.md records).
//!
//! ```sh
//! cargo bench -p kiln_benches --bench spawn_ratio            # 400 rounds
//! ROUNDS=1000 cargo bench -p kiln_benches --bench spawn_ratio
//! ONLY_KILN=1 ROUNDS=3000 perf record -g target/release/deps/spawn_ratio-*  # Kiln alone
//! ```
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use kiln_core::{EntityManager, Registry, World, compile_level, spawn_level};

#[path = "peers/mod.rs"]
mod peers;
use peers::{N, rows};

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; this harness takes no arguments.
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(400);
    let registry = Registry::with_builtins();
    let level = kiln_benches::level_json(N);
    let blob = compile_level(&registry, &mut HashMap::new(), "levels/bench.level", &level)
        .expect("benchmark level compiles")
        .blob;

    let kiln = || {
        let (mut em, mut world) = (EntityManager::new(), World::new());
        let start = Instant::now();
        let level = spawn_level(black_box(&blob), &registry, &mut em, &mut world).expect("spawns");
        let took = start.elapsed();
        drop((level, world, em));
        took
    };
    let hecs = || {
        let (mut world, rows) = (hecs::World::new(), rows());
        let start = Instant::now();
        world.spawn_batch(rows).for_each(drop);
        let took = start.elapsed();
        drop(world);
        took
    };
    let bevy = || {
        let (mut world, rows) = (bevy_ecs::world::World::new(), rows());
        let start = Instant::now();
        world.spawn_batch(rows).for_each(drop);
        let took = start.elapsed();
        drop(world);
        took
    };
    // Kiln's spawns alone, for a profiler or for timing two builds of Kiln.
    if std::env::var_os("ONLY_KILN").is_some() {
        for _ in 0..rounds {
            kiln();
        }
        return;
    }
    let runs: [&dyn Fn() -> Duration; 3] = [&kiln, &hecs, &bevy];
    // Warm-up: allocator pools, page tables, caches.
    for _ in 0..20 {
        for run in &runs {
            run();
        }
    }
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..rounds {
        for k in 0..3 {
            let which = (round + k) % 3;
            times[which].push(runs[which]().as_secs_f64() * 1e6);
        }
    }
    let ratio =
        |a: usize, b: usize| median((0..rounds).map(|r| times[a][r] / times[b][r]).collect());
    let [k, h, b] = times.clone().map(median);
    println!("spawn of {N} entities, {rounds} interleaved rounds, medians:");
    println!("  kiln spawn_level      {k:8.1} us");
    println!("  hecs spawn_batch      {h:8.1} us");
    println!("  bevy_ecs spawn_batch  {b:8.1} us");
    println!(
        "kiln / hecs: {:.2}x   kiln / bevy_ecs: {:.2}x   (median of per-round ratios)",
        ratio(0, 1),
        ratio(0, 2)
    );
}
