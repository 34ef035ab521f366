#![allow(clippy::unwrap_used)]
//! Helpers for tests of projects on disk (the `testing` feature, and this crate's
//! own tests): files written into temporary projects, and one snapshot of a
//! project's files to compare before and after an operation.

use std::fs;
use std::path::Path;

/// Every file under `dir` (except Kiln's own folder) and its bytes (a link: where
/// it leads), sorted: a project before and after an operation, compared.
pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with(kiln_core::own_folder::DIR) {
                continue;
            }
            let kind = e.file_type().unwrap();
            if kind.is_symlink() {
                let target = fs::read_link(e.path()).unwrap();
                out.push((rel, format!("link to {}", target.display()).into_bytes()));
            } else if kind.is_dir() {
                stack.push(e.path());
            } else {
                out.push((rel, fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Writes `text` to `rel` below `root`, making its folders.
#[cfg(test)]
pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, text).unwrap();
}

/// A level of one entity whose mesh is `mesh`.
#[cfg(test)]
pub(crate) fn level(mesh: &str) -> String {
    format!(r#"{{"entities": [{{"id": "a", "components": {{"mesh": {{"mesh": "{mesh}"}}}}}}]}}"#)
}
