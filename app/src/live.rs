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
