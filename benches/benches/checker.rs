//! The dependency checker on the generated 20,000-file project (see
//! `kiln_benches::project_gen`), side by side with ripgrep and sed:
//! 1. a cold index build vs one `rg -l -F` search for one path;
//! 2. a warm start from the cache with nothing changed;
//! 3. renaming a material referenced by 1,000 files vs `rg -l -F OLD | xargs sed -i`,
//!    in the full project and in one a quarter of its size.
//!
//! Needs `rg` on the PATH (Debian package `ripgrep`).
// Benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use dependency_checker::Checker;
use dependency_checker::ops::{MoveRequest, apply, plan};
use dependency_checker::resolve::Graph;
use dependency_checker::{BuildOptions, Index};
use kiln_benches::project_gen::{HERO, Shape, generate};
use kiln_core::{Project, Registry};

fn project(name: &str, shape: Shape) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-bench-{name}"));
    if !dir.join("kiln.project").exists() {
        let _ = std::fs::remove_dir_all(&dir);
        generate(&dir, shape).expect("generate the benchmark project");
    }
    dir
}

fn sh(script: &str) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .status()
        .expect("run sh");
    assert!(
        status.success() || status.code() == Some(1),
        "{script} failed: {status}"
    );
}

fn rename_pair(c: &mut Criterion, name: &str, dir: &Path) {
    let registry = Arc::new(Registry::with_builtins());
    let old = HERO;
    let new = "materials/shared/hero_renamed.material";
    let (old_text, new_text) = ("materials/shared/hero", "materials/shared/hero_renamed");
    let mut checker = Checker::open(dir, registry, &BuildOptions::default()).expect("open");
    let mut g = c.benchmark_group(format!("rename_1000_refs_{name}"));
    g.sample_size(10);
    g.bench_function("kiln plan + apply", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // The editor's checker is current when a rename starts: its
                // lookup is filed.
                checker.lookup();
                let start = Instant::now();
                let p = plan(&checker, &MoveRequest::new(old, new)).expect("plan");
                let inverse = apply(&mut checker, &p).expect("apply");
                total += start.elapsed();
                assert_eq!(p.edits.len(), 1000);
                let back = inverse.plan(&checker).expect("plan back");
                apply(&mut checker, &back).expect("apply back");
            }
            total
        })
    });
    let d = dir.display();
    g.bench_function("rg -l -F | xargs sed -i", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                sh(&format!("cd {d} && rg -l -F {old_text} . | xargs sed -i 's,{old_text},{new_text},g' && mv {old} {new}"));
                total += start.elapsed();
                sh(&format!("cd {d} && rg -l -F {new_text} . | xargs sed -i 's,{new_text},{old_text},g' && mv {new} {old}"));
            }
            total
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let full = project("full", Shape::FULL);
    let quarter = project("quarter", Shape::QUARTER);
    let registry = Arc::new(Registry::with_builtins());
    let proj = Project::open(&full).expect("project");

    let mut g = c.benchmark_group("index_20k_files");
    g.sample_size(10);
    g.bench_function("kiln cold index build (every reference extracted)", |b| {
        b.iter(|| Index::build(&proj, registry.clone(), &BuildOptions::default()).expect("index"))
    });
    g.bench_function("kiln cold index + graph (every reference resolved)", |b| {
        b.iter(|| {
            let index =
                Index::build(&proj, registry.clone(), &BuildOptions::default()).expect("index");
            Graph::build(&index)
        })
    });
    g.bench_function("rg -l -F one path", |b| {
        b.iter(|| {
            let out = Command::new("rg")
                .args(["-l", "-F", "materials/shared/hero"])
                .arg(&full)
                .output()
                .expect("rg");
            assert!(out.status.success());
        })
    });
    // Warm: the cache is valid and nothing changed.
    drop(Checker::open(&full, registry.clone(), &BuildOptions::default()).expect("open"));
    g.bench_function("kiln warm start from the cache (Checker::open)", |b| {
        b.iter(|| Checker::open(&full, registry.clone(), &BuildOptions::default()).expect("open"))
    });
    g.finish();

    rename_pair(c, "20k_files", &full);
    rename_pair(c, "5k_files", &quarter);
}

criterion_group!(benches, bench);
criterion_main!(benches);
