//! Shared fixture: a small project written to a temporary folder.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use dependency_checker::BuildOptions;
use dependency_checker::Checker;
use kiln_core::Registry;

pub const LEVEL: &str = r#"{
  "entities": [
    {
      "id": "tree",
      "name": "Tree with materials/bark in its name",
      "prefab": "units/tree",
      "components": {
        "mesh": {"mesh": "meshes/trunk", "material": "materials/bark"},
        "transform": {"position": [0, 0, 0]}
      }
    },
    {"id": "rock", "components": {"mesh": [{"mesh": "meshes/rock", "material": "materials/stone"}]}}
  ]
}
"#;

pub fn files() -> Vec<(&'static str, String)> {
    vec![
        ("kiln.project", r#"{"boot_levels": ["levels/forest"]}"#.into()),
        ("levels/forest.level", LEVEL.into()),
        ("units/tree.unit", r#"{"entities": [{"id": "t", "components": {"mesh": {"mesh": "meshes/trunk", "material": "materials/bark"}}}]}"#.into()),
        ("materials/bark.material", r#"{"texture": "textures/bark"}"#.into()),
        ("materials/stone.material", r#"{"color": [0.5, 0.5, 0.5, 1]}"#.into()),
        ("meshes/trunk.mesh", r#"{"shape": "cylinder"}"#.into()),
        ("meshes/rock.mesh", r#"{"shape": "sphere"}"#.into()),
        ("textures/bark.png", "\u{89}PNG fake".into()),
        ("tools/export.json", r#"{"inputs": ["materials/bark.material", "meshes/rock"]}"#.into()),
    ]
}

pub fn write_project(dir: &Path, files: &[(&str, String)]) {
    for (path, content) in files {
        let full = dir.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, content).unwrap();
    }
}

pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_project(dir.path(), &files());
    dir
}

pub fn open(dir: &Path) -> Checker {
    Checker::open(
        dir,
        Arc::new(Registry::with_builtins()),
        &BuildOptions::default(),
    )
    .unwrap()
}

#[allow(unused_imports)]
pub use dependency_checker::test_files::snapshot;

/// Every folder below `dir` (outside `.kiln`), from the root, sorted.
pub fn folders(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir)
        .into_iter()
        .filter(|(_, is_dir)| *is_dir)
        .map(|(rel, _)| rel)
        .collect();
    out.sort();
    out
}

/// Every file and folder below `dir` outside `.kiln`, as (path from the root,
/// whether it is a folder).
fn walk(dir: &Path) -> Vec<(String, bool)> {
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
                .replace('\\', "/");
            if rel.starts_with(".kiln") {
                continue;
            }
            let is_dir = e.file_type().unwrap().is_dir();
            if is_dir {
                stack.push(e.path());
            }
            out.push((rel, is_dir));
        }
    }
    out
}

/// `index` as a later command loads it from the cache: every file's references
/// still encoded in the cache's bytes.
pub fn loaded_from_cache(index: &dependency_checker::Index) -> dependency_checker::Index {
    let cached = dependency_checker::decode_cache(
        dependency_checker::encode_cache(index, None),
        index.root(),
        index.registry(),
        index.rules(),
    )
    .expect("the cache just written reads back")
    .index;
    assert!(
        cached.files().all(|f| !f.scan_is_decoded()),
        "loaded encoded"
    );
    cached
}

/// The findings of a check of `checker`'s index as a later command loads it from the
/// cache ([`loaded_from_cache`]).
pub fn check_as_loaded_from_cache(checker: &Checker) -> Vec<dependency_checker::check::Finding> {
    let cached = loaded_from_cache(checker.index());
    let config = checker.project().config();
    dependency_checker::check::check(
        &cached,
        &dependency_checker::resolve::Resolution::build(&cached),
        checker.redirects(),
        &config.boot_levels,
        &config.plugins,
    )
}
