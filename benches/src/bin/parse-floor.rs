//! The floor a first `kiln check` is measured against besides `rg` (issue 13): walk
//! the project on every core, read every file, and parse the ones that are JSON
//! with `serde_json` into nothing (`IgnoredAny`: it validates, builds no value).
//! Nothing else: no references picked out, no index, no cache. Whatever checks
//! references inside JSON has to do at least this; `rg -l -F PATH` does not parse.
//! A whole process, so that hyperfine times it beside `kiln check` in one run.
//!
//! ```text
//! parse-floor PROJECT
//! ```
//!
//! Like Kiln's walk, it skips folders whose names start with `.` (`.git`, `.kiln`)
//! and follows no links. A file is taken for JSON when its first byte that is not
//! white space is `{` or `[`. Prints how many files it parsed and how many of them
//! did not parse.

use std::fs;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default)]
struct Counts {
    files: AtomicUsize,
    parsed: AtomicUsize,
    broken: AtomicUsize,
    unreadable: AtomicUsize,
}

fn parse(path: &Path, counts: &Counts) {
    counts.files.fetch_add(1, Ordering::Relaxed);
    let Ok(bytes) = fs::read(path) else {
        counts.unreadable.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if !matches!(first, Some(b'{' | b'[')) {
        return;
    }
    counts.parsed.fetch_add(1, Ordering::Relaxed);
    if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() {
        counts.broken.fetch_add(1, Ordering::Relaxed);
    }
}

/// Reads `dir`, hands each folder to the pool and parses each file here.
fn visit<'s>(scope: &rayon::Scope<'s>, dir: std::path::PathBuf, counts: &'s Counts) {
    let Ok(entries) = fs::read_dir(&dir) else {
        counts.unreadable.fetch_add(1, Ordering::Relaxed);
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            if !entry.file_name().to_string_lossy().starts_with('.') {
                scope.spawn(move |s| visit(s, path, counts));
            }
        } else if kind.is_file() {
            parse(&path, counts);
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root] = args.as_slice() else {
        eprintln!("usage: parse-floor PROJECT");
        return ExitCode::from(2);
    };
    let counts = Counts::default();
    let root = Path::new(root).to_owned();
    rayon::scope(|s| visit(s, root, &counts));
    println!(
        "{} files, {} parsed as JSON, {} of them broken, {} unreadable",
        counts.files.load(Ordering::Relaxed),
        counts.parsed.load(Ordering::Relaxed),
        counts.broken.load(Ordering::Relaxed),
        counts.unreadable.load(Ordering::Relaxed),
    );
    ExitCode::SUCCESS
}
