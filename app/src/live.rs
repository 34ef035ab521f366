//! Live recompilation, shared by `kiln watch` and the editor: which levels a batch of
//! file changes affects, decided by the dependency checker's graph.

use std::collections::{BTreeSet, HashSet};

use dependency_checker::Checker;

/// The levels to rebuild after `changed` files changed: each changed level, and every
/// level that reaches a changed file through references (a level including a prefab
/// that uses a material that changed). Levels that no longer exist are left out.
pub fn affected_levels(checker: &Checker, changed: &[String]) -> BTreeSet<String> {
    levels_among(checker, &referrers(checker, changed))
}

/// The levels among `files` that still exist.
pub fn levels_among(checker: &Checker, files: &HashSet<String>) -> BTreeSet<String> {
    files
        .iter()
        .filter(|f| f.ends_with(".level") && checker.index().contains(f))
        .cloned()
        .collect()
}

/// `changed` and every file that references one of them, directly or through
/// others.
pub fn referrers(checker: &Checker, changed: &[String]) -> HashSet<String> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut queue: Vec<String> = changed.to_vec();
    while let Some(file) = queue.pop() {
        if !seen.insert(file.clone()) {
            continue;
        }
        for r in checker.refs_to(&file) {
            if !seen.contains(&*r.file) {
                queue.push(r.file.to_string());
            }
        }
    }
    seen
}

/// A short list of changed files for a log line: the first three and a count.
pub fn summarize(changed: &[String]) -> String {
    match changed.len() {
        0 => "nothing".into(),
        1..=3 => changed.join(", "),
        n => format!("{} and {} more", changed[..3].join(", "), n - 3),
    }
}

/// The levels that use any of the component `types`: a level or unit with an
/// entity holding (or overriding) a component of one of them, and every level that
/// includes such a unit. What a plugin's new schema or defaults change.
pub fn levels_using_types(checker: &Checker, types: &HashSet<String>) -> BTreeSet<String> {
    if types.is_empty() {
        return BTreeSet::new();
    }
    let root = checker.project().root();
    let users: Vec<String> = checker
        .index()
        .files()
        .filter(|f| f.path.ends_with(".level") || f.path.ends_with(".unit"))
        .filter(|f| {
            kiln_core::fs::read_below(
                root,
                std::path::Path::new(&*f.path),
                kiln_core::project::MAX_FILE,
            )
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .is_some_and(|level| component_types_in(&level).any(|t| types.contains(t)))
        })
        .map(|f| f.path.to_string())
        .collect();
    levels_among(checker, &referrers(checker, &users))
}

/// The component types a level's or unit's entities hold or override.
fn component_types_in(level: &serde_json::Value) -> impl Iterator<Item = &str> {
    let entities = level.get("entities").and_then(|e| e.as_array());
    entities.into_iter().flatten().flat_map(|entity| {
        let held = entity.get("components").and_then(|c| c.as_object());
        let overridden = entity.get("overrides").and_then(|o| o.as_object());
        held.into_iter()
            .flat_map(|c| c.keys())
            .chain(
                overridden
                    .into_iter()
                    .flat_map(|o| o.values())
                    .filter_map(|child| child.as_object())
                    .flat_map(|c| c.keys()),
            )
            .map(String::as_str)
    })
}
