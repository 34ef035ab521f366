#![allow(clippy::unwrap_used)]
//! Files the unit tests write into temporary projects (tests only).

use std::fs;
use std::path::Path;

/// Writes `text` to `rel` below `root`, making its folders.
pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, text).unwrap();
}

/// A level of one entity whose mesh is `mesh`.
pub(crate) fn level(mesh: &str) -> String {
    format!(r#"{{"entities": [{{"id": "a", "components": {{"mesh": {{"mesh": "{mesh}"}}}}}}]}}"#)
}
