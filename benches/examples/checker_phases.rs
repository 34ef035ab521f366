//! Times the phases of opening a project's checker: `checker_phases DIR`.
// A measuring tool: a broken project is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::sync::Arc;
use std::time::Instant;

use dependency_checker::resolve::Graph;
use dependency_checker::{BuildOptions, Index};
use kiln_core::{Project, Registry};

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/gen".into());
    let project = Project::open(std::path::Path::new(&dir)).expect("project");
    let registry = Arc::new(Registry::with_builtins());
    if std::env::args().nth(2).as_deref() == Some("cold") {
        // Only cold builds, for profiling.
        for _ in 0..10 {
            let t = Instant::now();
            let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
            println!(
                "cold build      {:>7.1} ms ({} files)",
                t.elapsed().as_secs_f64() * 1e3,
                index.stats().files
            );
        }
        return;
    }
    let t = Instant::now();
    let cold = Index::build(&project, registry.clone(), &BuildOptions::default()).expect("index");
    println!(
        "cold build      {:>7.1} ms ({} files)",
        t.elapsed().as_secs_f64() * 1e3,
        cold.stats().files
    );
    let t = Instant::now();
    let bytes = dependency_checker::encode_cache(&cold, None);
    println!(
        "cache encode    {:>7.1} ms ({} bytes)",
        t.elapsed().as_secs_f64() * 1e3,
        bytes.len()
    );
    let t = Instant::now();
    let cached = dependency_checker::decode_cache(bytes, project.root(), &registry, cold.rules())
        .expect("decodes")
        .index;
    println!(
        "cache decode    {:>7.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let warm = Index::build_from(
        &project,
        registry.clone(),
        Some(&cached),
        &BuildOptions::default(),
    )
    .expect("index");
    println!(
        "warm walk       {:>7.1} ms (read {})",
        t.elapsed().as_secs_f64() * 1e3,
        warm.stats().read
    );
    let t = Instant::now();
    let graph = Graph::build(&warm);
    println!(
        "graph build     {:>7.1} ms ({} refs)",
        t.elapsed().as_secs_f64() * 1e3,
        graph.references().len()
    );
}
