//! Transform propagation on a 111,111-node hierarchy (fanout 10, depth 5): the root
//! moved, and 1% of nodes moved, with immediate updates, vs a flat parents-first
//! pass over an array of Affine3A that recomputes every world pose.
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{Affine3A, Quat, Vec3};
use kiln_core::components::NewTransform;
use kiln_core::{EntityManager, Instance, TransformManager};

fn local(i: usize) -> Affine3A {
    Affine3A::from_rotation_translation(
        Quat::from_rotation_y(i as f32 * 0.01),
        Vec3::new(1.0, 0.5, 0.0),
    )
}

fn bench(c: &mut Criterion) {
    let parents = kiln_benches::tree_parents(10, 5);
    let n = parents.len();
    let mut em = EntityManager::new();
    let mut entities = Vec::new();
    em.create_many(n, &mut entities);
    let mut tm = TransformManager::new();
    let batch: Vec<NewTransform> = (0..n)
        .map(|i| NewTransform {
            entity: entities[i],
            local: local(i),
            parent: (parents[i] != u32::MAX).then_some(Instance(parents[i])),
        })
        .collect();
    tm.create_many(&batch);
    let moved = kiln_benches::picks(n / 100, n, 0x9E37_79B9);

    let flat_local: Vec<Affine3A> = (0..n).map(local).collect();
    let mut flat_world = vec![Affine3A::IDENTITY; n];

    let mut g = c.benchmark_group(format!("transforms_{n}"));
    let nudge = Affine3A::from_translation(Vec3::new(0.0, 0.001, 0.0));
    g.bench_function("kiln root moved (immediate)", |b| {
        b.iter(|| {
            let root = Instance(0);
            let l = tm.local(root) * nudge;
            tm.set_local(root, l);
        })
    });
    g.bench_function("kiln 1% of nodes moved (immediate)", |b| {
        b.iter(|| {
            for &i in &moved {
                let i = Instance(i as u32);
                let l = tm.local(i) * nudge;
                tm.set_local(i, l);
            }
        })
    });
    g.bench_function("kiln frame with nothing moved", |b| {
        // Immediate updates leave no per-frame pass: world poses are already current.
        b.iter(|| black_box(tm.world(Instance(black_box(n as u32 - 1)))))
    });
    g.bench_function("flat parents-first pass over Affine3A", |b| {
        b.iter(|| {
            for i in 0..n {
                let p = parents[i];
                flat_world[i] = if p == u32::MAX {
                    flat_local[i]
                } else {
                    flat_world[p as usize] * flat_local[i]
                };
            }
            black_box(&flat_world);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
