//! Embeds the project templates `kiln new` writes (the demo project and the empty
//! one) into the `kiln` binary, so that a `kiln` installed anywhere makes them.
//!
//! Also names the commit `kiln --version` reports.
//!
//! Hand-written rather than the `include_dir` crate: a template folder in the
//! repository also holds what Kiln generates there while it is used and tested
//! (`.kiln/`, `build/`, a plugin's `target/`), which must not ship, and `include_dir`
//! embeds a folder whole. This walks each template, leaves those out (and hidden
//! files), and writes one `include_bytes!` per file.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let mut code = String::new();
    for (name, folder, watch_root) in [
        // The demo's root also holds its `.kiln/` and `build/`, which change at every
        // test run: a file added at its top is seen by a clean build only.
        ("DEMO", manifest.join("../projects/demo"), false),
        ("EMPTY", manifest.join("templates/empty"), true),
    ] {
        if watch_root {
            println!("cargo:rerun-if-changed={}", folder.display());
        }
        let mut files = Vec::new();
        walk(&folder, &folder, &mut files);
        files.sort();
        code.push_str(&format!(
            "/// The files of the `{}` template.\n",
            name.to_lowercase()
        ));
        code.push_str(&format!(
            "pub(crate) static {name}: &[(&str, &[u8])] = &[\n"
        ));
        for (rel, path) in files {
            code.push_str(&format!(
                "    ({rel:?}, include_bytes!({:?})),\n",
                path.display().to_string()
            ));
        }
        code.push_str("];\n");
    }
    if let Err(e) = std::fs::write(out.join("templates.rs"), code) {
        panic!("writing the embedded templates: {e}");
    }
    version(&manifest);
}

/// Sets `KILN_VERSION_LONG`, what `kiln --version` says: the version and the commit
/// it was built from (`$KILN_COMMIT` where the sources are not a git checkout, as
/// in a source archive), and asks cargo to run this again when the commit changes.
fn version(manifest: &Path) {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(manifest)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
        (out.status.success() && !text.is_empty()).then_some(text)
    };
    println!("cargo:rerun-if-env-changed=KILN_COMMIT");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let commit = std::env::var("KILN_COMMIT").ok().filter(|c| !c.is_empty());
    let (commit, date) = match commit {
        Some(c) => (Some(c), None),
        None => (
            git(&["rev-parse", "--short=10", "HEAD"]),
            git(&["log", "-1", "--format=%cs"]),
        ),
    };
    let long = match (commit, date) {
        (Some(c), Some(d)) => format!("{version} (commit {c} {d})"),
        (Some(c), None) => format!("{version} (commit {c})"),
        (None, _) => format!("{version} (commit unknown)"),
    };
    println!("cargo:rustc-env=KILN_VERSION_LONG={long}");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/packed-refs");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{branch}");
        }
    }
}

/// Collects the template files below `dir` as (path from `root` with `/`, absolute
/// path), and asks cargo to run this again when any of them, or a folder's listing,
/// changes. Folders are watched one by one, not `root`: its `.kiln/` changes at
/// every test run, and would rebuild `kiln` each time.
fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        panic!("reading the template folder {}", dir.display());
    };
    for entry in listing.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let generated =
            name.starts_with('.') || name == "target" || (dir == root && name == "build");
        if generated {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(root, &path, files);
        } else if kind.is_file() {
            println!("cargo:rerun-if-changed={}", path.display());
            let rel: Vec<String> = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let absolute = std::fs::canonicalize(&path).unwrap_or(path);
            files.push((rel.join("/"), absolute));
        }
    }
}
