//! The crate's modules are floors that only import downward: a module takes names
//! from its own floor's module or from floors below it, never from above and
//! never from a sibling on its floor. Read from the sources as text (`crate::`
//! paths, `use crate::{...}` groups included), so anyone can run it:
//! `cargo test -p dependency_checker --test floors`.

use std::collections::BTreeSet;
use std::path::Path;

/// The floors, from the ground up.
const FLOORS: &[&[&str]] = &[
    // What every floor may use.
    &["error", "hash", "parallel", "test_files"],
    &["fs"],
    &["scan", "watch"],
    &["index"],
    &["resolve"],
    &["check"],
    &["cache"],
    // Whether each level compiles, recorded as the cache is.
    &["compiles"],
    &["checker"],
    // Operations on an open checker: above it (see the crate's documentation).
    &["ops"],
    &["lib"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

/// The top-level modules `text` names through `crate::`.
fn crate_imports(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d}`: each item's first segment.
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let first: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !first.is_empty() {
                    names.insert(first);
                }
            }
        } else {
            let first: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !first.is_empty() {
                names.insert(first);
            }
        }
    }
    names
}

/// The names `lib.rs` re-exports (`pub use module::{A, B as C};`), each with the
/// module that defines it: `crate::Checker` is an arrow to `checker`.
fn reexports(lib: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for statement in lib.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let exported = name.split(" as ").last().unwrap_or("").trim();
            if !exported.is_empty() {
                out.push((exported.to_owned(), module.trim().to_owned()));
            }
        }
    }
    out
}

/// Every `.rs` file below `dir`, with the top-level module it belongs to.
fn sources(src: &Path, dir: &Path, out: &mut Vec<(String, String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(src).unwrap_or(&path);
            let first = rel
                .components()
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            let module = first.unwrap_or_default().trim_end_matches(".rs").to_owned();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            // A module's unit tests may use the whole crate; they are not the
            // module's imports.
            let text = match text.find("#[cfg(test)]\nmod tests") {
                Some(at) => text[..at].to_owned(),
                None => text,
            };
            out.push((rel.display().to_string(), module, text));
        }
    }
}

#[test]
fn the_crates_floors_only_import_downward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    assert!(files.len() > 20, "the sources were found: {}", files.len());
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let reexported = reexports(&lib);
    assert!(
        reexported
            .iter()
            .any(|(name, module)| name == "Checker" && module == "checker"),
        "the re-exports were read: {reexported:?}"
    );
    let mut wrong = Vec::new();
    let mut seen_arrows = 0;
    for (file, module, text) in &files {
        let Some(own) = floor_of(module) else {
            wrong.push(format!(
                "{file}: the module {module} is on no floor (add it to FLOORS)"
            ));
            continue;
        };
        for imported in crate_imports(text) {
            // A name lib.rs re-exports is an arrow to the module that defines it.
            let imported = (reexported.iter())
                .find(|(name, _)| *name == imported)
                .map_or(imported, |(_, defining)| defining.clone());
            if imported == *module {
                continue;
            }
            let Some(floor) = floor_of(&imported) else {
                // Another crate's name re-exported (`crate::ResourcePath`).
                continue;
            };
            seen_arrows += 1;
            if floor >= own {
                wrong.push(format!(
                    "{file} ({module}, floor {own}) imports {imported} (floor {floor})"
                ));
            }
        }
    }
    // A positive control: the reading finds the arrows that are there.
    assert!(seen_arrows > 50, "only {seen_arrows} imports read");
    assert!(
        wrong.is_empty(),
        "imports that do not go down:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reading_finds_grouped_and_plain_imports() {
    let found = crate_imports("use crate::{fs::stat, index};\nlet x = crate::scan::scan(b);");
    let expected: BTreeSet<String> = ["fs", "index", "scan"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, expected);
}
