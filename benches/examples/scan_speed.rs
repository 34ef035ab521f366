//! Throughput of the reference scanner alone, on one thread, over every file of a
//! project held in memory: `scan_speed DIR [ROUNDS]`. No walk, no reads, no index.
// A measuring tool: a broken project is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::time::Instant;

use dependency_checker::DeclaredRules;
use dependency_checker::scan_file;
use kiln_core::{Project, Registry};

fn files(dir: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() && !name.starts_with('.') {
            files(&entry.path(), out);
        } else if kind.is_file() {
            let ext = name.rsplit_once('.').map_or("", |(_, e)| e).to_owned();
            out.push((ext, std::fs::read(entry.path()).unwrap()));
        }
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/kiln-scale-20000".into());
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let dir = std::path::Path::new(&dir);
    let project = Project::open(dir).expect("project");
    let rules = DeclaredRules::new(&project.config().references);
    let registry = Registry::with_builtins();
    let mut all = Vec::new();
    files(dir, &mut all);
    let bytes: usize = all.iter().map(|(_, b)| b.len()).sum();
    for _ in 0..rounds {
        let t = Instant::now();
        let mut references = 0;
        for (ext, b) in &all {
            references += scan_file(&registry, &rules, ext, b).len();
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "scan {:>7.1} ms  {:>6.0} MB/s  ({} files, {} references)",
            s * 1e3,
            bytes as f64 / s / 1e6,
            all.len(),
            references
        );
        // What validating the same bytes as JSON costs, for scale.
        let t = Instant::now();
        let mut parsed = 0;
        for (_, b) in &all {
            parsed += usize::from(serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok());
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "serde_json IgnoredAny {:>7.1} ms  {:>6.0} MB/s  ({parsed} files parsed)",
            s * 1e3,
            bytes as f64 / s / 1e6
        );
    }
}
