//! Times the phases of renaming the generated project's hero material (referenced by
//! 1,000 files): planning and applying, each split further, so that a regression in
//! `kiln mv` can be placed. Run after the checker benchmark has generated the project:
//! `cargo run --release -p kiln_benches --example rename_phases -- /tmp/kiln-bench-full`.
// A measuring tool: a failure to open or rename is a failed measurement.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use dependency_checker::BuildOptions;
use dependency_checker::Checker;
use dependency_checker::ops::{MoveRequest, apply, plan};
use kiln_core::Registry;

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("the generated project's folder"),
    );
    let registry = Arc::new(Registry::with_builtins());
    let mut checker = Checker::open(&dir, registry, &BuildOptions::default()).expect("open");
    let (old, new) = (
        "materials/shared/hero.material",
        "materials/shared/hero_renamed.material",
    );
    for _ in 0..3 {
        let t = Instant::now();
        checker.lookup();
        let lookup = t.elapsed();
        let t = Instant::now();
        let p = plan(&checker, &MoveRequest::new(old, new)).expect("plan");
        let planned = t.elapsed();
        let t = Instant::now();
        let inverse = apply(&mut checker, &p).expect("apply");
        let applied = t.elapsed();
        println!(
            "lookup {:>6.1} ms   plan {:>6.1} ms   apply {:>6.1} ms   ({} files patched)",
            lookup.as_secs_f64() * 1e3,
            planned.as_secs_f64() * 1e3,
            applied.as_secs_f64() * 1e3,
            p.edits.len()
        );
        let back = inverse.plan(&checker).expect("plan back");
        apply(&mut checker, &back).expect("apply back");
    }
}
