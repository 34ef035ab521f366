//! Times parsing and compiling a generated 10,000-entity level: `compile_phases`.
// A measuring tool: a broken fixture is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::Instant;

use kiln_core::{LevelDocument, Registry, compile_document};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let dir = std::env::temp_dir().join("kiln-compile-phases");
    let _ = std::fs::remove_dir_all(&dir);
    let level = kiln_benches::write_editor_project(&dir, 10_000).unwrap();
    let text = std::fs::read_to_string(dir.join(&level)).unwrap();
    let registry = Registry::with_builtins();
    for _ in 0..5 {
        let t = Instant::now();
        kiln_core::json_format::reject_duplicate_keys(&text).unwrap();
        println!(
            "duplicate-key pass {:>6.2} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        let t = Instant::now();
        let doc = LevelDocument::parse(&text, &level).unwrap();
        let parse = t.elapsed();
        let t = Instant::now();
        let compiled = compile_document(&registry, &mut HashMap::new(), &level, &doc).unwrap();
        let compile = t.elapsed();
        let t = Instant::now();
        let copy = doc.clone();
        let clone = t.elapsed();
        let t = Instant::now();
        let same = copy == doc;
        let compare = t.elapsed();
        println!(
            "parse {:.1} ms, compile {:.1} ms ({} bytes), clone {:.1} ms, compare {:.1} ms ({same})",
            parse.as_secs_f64() * 1e3,
            compile.as_secs_f64() * 1e3,
            compiled.blob.len(),
            clone.as_secs_f64() * 1e3,
            compare.as_secs_f64() * 1e3
        );
    }
}
