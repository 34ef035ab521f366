//! 1,000,000 entity create / alive / destroy / recreate: kiln's EntityManager vs slotmap.
// Test and benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kiln_core::EntityManager;
use slotmap::{DefaultKey, SlotMap};

const N: usize = 1_000_000;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("entities_1m");
    g.sample_size(20);
    g.bench_function("kiln EntityManager", |b| {
        b.iter(|| {
            let mut em = EntityManager::new();
            let ids: Vec<_> = (0..N).map(|_| em.create()).collect();
            let alive = ids.iter().filter(|&&e| em.alive(e)).count();
            for &e in &ids {
                em.destroy(e);
            }
            let again: Vec<_> = (0..N).map(|_| em.create()).collect();
            black_box((alive, again.len(), em.alive(ids[0])))
        })
    });
    g.bench_function("kiln EntityManager (create_many)", |b| {
        b.iter(|| {
            let mut em = EntityManager::new();
            let mut ids = Vec::new();
            em.create_many(N, &mut ids);
            let alive = ids.iter().filter(|&&e| em.alive(e)).count();
            em.destroy_many(&ids);
            let mut again = Vec::new();
            em.create_many(N, &mut again);
            black_box((alive, again.len(), em.alive(ids[0])))
        })
    });
    g.bench_function("slotmap SlotMap", |b| {
        b.iter(|| {
            let mut sm: SlotMap<DefaultKey, ()> = SlotMap::new();
            let ids: Vec<_> = (0..N).map(|_| sm.insert(())).collect();
            let alive = ids.iter().filter(|&&k| sm.contains_key(k)).count();
            for &k in &ids {
                sm.remove(k);
            }
            let again: Vec<_> = (0..N).map(|_| sm.insert(())).collect();
            black_box((alive, again.len(), sm.contains_key(ids[0])))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
