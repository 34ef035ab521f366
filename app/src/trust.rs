//! Workspace trust: a project's plugins are code (a Rust crate's `build.rs`, C
//! sources, a library) that Kiln builds and runs in its own process, so Kiln
//! builds and loads them only in a project its user trusts, as VS Code's
//! workspace trust does. Someone who downloads a project and runs `kiln check` on
//! it does not expect it to run anything.
//!
//! A project is trusted for this run when:
//! - the command was given `--trust`, or the environment has `KILN_TRUST=1` (for
//!   CI and scripts: every project is trusted);
//! - or it is the demo this `kiln` carries, by what it is, not where it is: its
//!   plugins list is the demo's, every plugin folder holds exactly the files the
//!   binary carries (prebuilt libraries included, byte for byte), and no `.cargo/`
//!   in the project configures a build (the source tree's `projects/demo`, and a
//!   `kiln new --template demo`, are; a copy with one changed source is not);
//! - or the user said so: the editor asks the first time a project with plugins
//!   opens, and the answer (trust, or not) is remembered per project, by its
//!   folder, in `trusted-projects.json` in Kiln's folder of the user's
//!   configuration (`$KILN_CONFIG_DIR`, else `$XDG_CONFIG_HOME/kiln`, else
//!   `~/.config/kiln`): outside every project, where no project's files can
//!   vouch for themselves.
//!
//! Without trust, commands do what they can without the plugins (references are
//! checked, levels that use none of their types compile) and say which plugins
//! were left out and how to trust the project.
//!
//! Hand-written: a list of folders in a JSON file; no crate is needed for it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

/// Every project is trusted in this process (`--trust`, tests).
static TRUST_ALL: AtomicBool = AtomicBool::new(false);

/// Where the remembered answers are kept, if not where the environment says (tests
/// keep theirs apart from the user's).
static STORE_DIR: RwLock<Option<PathBuf>> = RwLock::new(None);

/// The environment variable that trusts every project.
pub const TRUST_VARIABLE: &str = "KILN_TRUST";

/// The file of remembered answers, in Kiln's configuration folder.
const STORE_FILE: &str = "trusted-projects.json";

/// What the user answered for a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Build and load its plugins.
    Trusted,
    /// Build and load its plugins, building each here from its sources wherever
    /// this machine can, rather than loading a library shipped with the project.
    TrustedFromSources,
    /// Open it without them (and do not ask again).
    Declined,
}

/// The environment variable that makes every trusted project's plugins build here
/// from their sources wherever this machine can, rather than load a library
/// shipped with the project.
pub const FROM_SOURCES_VARIABLE: &str = "KILN_PLUGINS_FROM_SOURCES";

/// Whether the plugins of the project at `root` are built here from their sources
/// wherever this machine can (see [`Answer::TrustedFromSources`]).
/// Asked only of a trusted project, or to describe one: the answer is read without
/// checking again what was trusted ([`remembered`] hashes every plugin file).
pub fn builds_from_sources(root: &Path) -> bool {
    std::env::var_os(FROM_SOURCES_VARIABLE).is_some_and(|v| v == "1")
        || load().from_sources.contains(&key(root))
}

/// Tells the plugin loader whether the project at `root` builds its plugins from
/// their sources ([`builds_from_sources`]): before its plugins are chosen.
pub fn apply_source_preference(root: &Path) {
    kiln_plugin_host::project::build_from_sources(root, builds_from_sources(root));
}

/// The remembered answers, by project folder.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct Store {
    trusted: BTreeSet<PathBuf>,
    declined: BTreeSet<PathBuf>,
    /// What each trusted project's plugins were when it was trusted
    /// ([`fingerprint`]): trust holds only while they are the same.
    fingerprints: std::collections::BTreeMap<PathBuf, String>,
    /// The trusted projects whose plugins are built from their sources
    /// ([`Answer::TrustedFromSources`]).
    from_sources: BTreeSet<PathBuf>,
}

/// Trusts every project for the rest of this process: `--trust` on a command (and
/// tests of plugins).
pub fn trust_every_project_in_this_process() {
    TRUST_ALL.store(true, Ordering::Relaxed);
}

/// Keeps the remembered answers in `dir` instead of the user's configuration
/// folder, for the rest of this process (tests).
pub fn keep_answers_in(dir: PathBuf) {
    if let Ok(mut store) = STORE_DIR.write() {
        *store = Some(dir);
    }
}

/// Whether every project is trusted without asking: `--trust`, or `KILN_TRUST=1`.
pub fn trusted_by_flag() -> bool {
    TRUST_ALL.load(Ordering::Relaxed) || std::env::var_os(TRUST_VARIABLE).is_some_and(|v| v == "1")
}

/// Whether the project at `root` may build and load its plugins now.
pub fn is_trusted(root: &Path) -> bool {
    trusted_by_flag()
        || is_carried_demo(root)
        || matches!(
            remembered(root),
            Some(Answer::Trusted | Answer::TrustedFromSources)
        )
}

/// Whether the project at `root` is, in everything that would run, the demo this
/// `kiln` carries (see the module): its plugins are then code that came with Kiln,
/// whoever made the folder and wherever it is. Trust by a path baked in at build
/// time trusted whatever sat at that path on another machine.
pub fn is_carried_demo(root: &Path) -> bool {
    let carried = crate::new_project::Template::Demo.files();
    let config = |bytes: &[u8]| {
        let text = std::str::from_utf8(bytes).ok()?;
        kiln_core::project::ProjectConfig::parse(Path::new("kiln.project"), text).ok()
    };
    let Some(demo) = (carried.iter())
        .find(|(path, _)| *path == kiln_core::project::PROJECT_FILE)
        .and_then(|(_, bytes)| config(bytes))
    else {
        return false;
    };
    let Ok(project) = kiln_core::Project::open(root) else {
        return false;
    };
    let root = project.root();
    if project.config().plugins != demo.plugins
        || kiln_core::fs::kind_below(root, ".cargo").is_some()
    {
        return false;
    }
    demo.plugins.iter().all(|folder| {
        let prefix = format!("{folder}/");
        let want: Vec<(&str, &[u8])> = (carried.iter())
            .filter_map(|(path, bytes)| Some((path.strip_prefix(&prefix)?, *bytes)))
            .collect();
        let Ok(found) = files_that_run(&root.join(folder)) else {
            return false;
        };
        found.len() == want.len()
            && (found.iter()).all(|(rel, kind)| {
                *kind == kiln_core::fs::Kind::File
                    && want.iter().any(|(path, bytes)| {
                        *path == rel
                            && kiln_core::fs::read_below(
                                &root.join(folder),
                                Path::new(rel),
                                bytes.len() as u64,
                            )
                            .is_ok_and(|now| now == *bytes)
                    })
            })
    })
}

/// What the user answered for the project at `root`, if they did.
pub fn remembered(root: &Path) -> Option<Answer> {
    let store = load();
    let key = key(root);
    if store.trusted.contains(&key) {
        // Trusted as its plugins were then: other code since (a pull, a copy
        // over it) is asked about again.
        let same = store.fingerprints.get(&key) == Some(&fingerprint(root));
        let answer = if store.from_sources.contains(&key) {
            Answer::TrustedFromSources
        } else {
            Answer::Trusted
        };
        same.then_some(answer)
    } else if store.declined.contains(&key) {
        Some(Answer::Declined)
    } else {
        None
    }
}

/// Remembers `answer` for the project at `root` (written through a temporary file
/// and a rename).
pub fn remember(root: &Path, answer: Answer) -> anyhow::Result<()> {
    let path = store_path().context("no folder for Kiln's settings (HOME is not set)")?;
    let mut store = load();
    let key = key(root);
    store.trusted.remove(&key);
    store.declined.remove(&key);
    store.fingerprints.remove(&key);
    store.from_sources.remove(&key);
    match answer {
        Answer::Trusted | Answer::TrustedFromSources => {
            if answer == Answer::TrustedFromSources {
                store.from_sources.insert(key.clone());
            }
            store.fingerprints.insert(key.clone(), fingerprint(root));
            store.trusted.insert(key)
        }
        Answer::Declined => store.declined.insert(key),
    };
    let text = serde_json::to_string_pretty(&store)?;
    kiln_core::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("remembering the answer in {}", path.display()))
}

/// Every entry below `folder` but folders, by path from it and kind, sorted,
/// hidden ones included; a `target/` of build output is left out.
fn files_that_run(folder: &Path) -> std::io::Result<Vec<(String, kiln_core::fs::Kind)>> {
    use kiln_core::fs::{Entries, Kind, Step, Unreadable};
    let mut files = Vec::new();
    kiln_core::fs::walk_below(folder, "", Entries::All, Unreadable::Fails, |rel, kind| {
        match kind {
            // Build output, made here by a build of the plugin in place.
            Kind::Folder if rel.rsplit('/').next() == Some("target") => Step::Skip,
            Kind::Folder => Step::Enter,
            _ => {
                files.push((rel.to_owned(), kind));
                Step::Skip
            }
        }
    })?;
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// The most bytes a [`fingerprint`] reads; files past it count by their size.
const FINGERPRINT_BUDGET: u64 = 512 << 20;

/// What would run of the project at `root`, as one SHA-256: its plugins list, and
/// every file (name and bytes) of each plugin folder, prebuilt libraries and
/// hidden files included, and of a `.cargo/` folder at its root, which configures
/// cargo's builds. A build's `target/` output is left out. Remembered with a
/// "trust", so that trust holds for this code and is asked again for other code.
pub fn fingerprint(root: &Path) -> String {
    use sha2::Digest as _;
    let mut hash = sha2::Sha256::new();
    let Ok(project) = kiln_core::Project::open(root) else {
        return String::new();
    };
    let root = project.root();
    let mut budget = FINGERPRINT_BUDGET;
    let mut folders: Vec<&str> = project
        .config()
        .plugins
        .iter()
        .map(String::as_str)
        .collect();
    folders.push(".cargo");
    for folder in folders {
        hash.update(folder.as_bytes());
        hash.update([0]);
        let base = root.join(folder);
        // A folder that is not there (no `.cargo/`) counts as empty.
        let files = files_that_run(&base).unwrap_or_default();
        for (rel, kind) in files {
            hash.update(rel.as_bytes());
            hash.update([0, kind as u8]);
            let size = kiln_core::fs::kind_below(&base, &rel).map_or(0, |(_, st)| st.size);
            if kind == kiln_core::fs::Kind::File && size <= budget {
                budget -= size;
                let bytes =
                    kiln_core::fs::read_below(&base, Path::new(&rel), size).unwrap_or_default();
                hash.update(&bytes);
            } else {
                hash.update(size.to_le_bytes());
            }
            hash.update([0]);
        }
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The note a command prints when it left the plugins `entries` out.
pub fn left_out_note(entries: &[String]) -> String {
    format!(
        "plugins not loaded ({}): this project is not trusted, and plugins are code Kiln would build and run. Trust it with --trust, with {TRUST_VARIABLE}=1, or by opening it in the editor and answering its question",
        entries.join(", ")
    )
}

/// A project is known by its folder, links resolved.
fn key(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned())
}

fn store_path() -> Option<PathBuf> {
    let dir = match STORE_DIR.read().ok().and_then(|d| d.clone()) {
        Some(dir) => dir,
        None => kiln_core::user_config::user_config_dir()?,
    };
    Some(dir.join(STORE_FILE))
}

/// The remembered answers; none if the file is missing or unreadable (a damaged
/// file trusts nothing).
fn load() -> Store {
    store_path()
        .and_then(|path| kiln_core::read_regular(&path, 16 << 20).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Answers are remembered per project folder, the last one standing, and a
    /// damaged store trusts nothing.
    /// The store's folder is the process's: these tests take turns.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn answers_are_remembered_per_project() {
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let config = tempfile::tempdir().unwrap();
        keep_answers_in(config.path().to_owned());
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_eq!(remembered(a.path()), None);
        remember(a.path(), Answer::Trusted).unwrap();
        remember(b.path(), Answer::Declined).unwrap();
        assert_eq!(remembered(a.path()), Some(Answer::Trusted));
        assert_eq!(remembered(b.path()), Some(Answer::Declined));
        remember(a.path(), Answer::Declined).unwrap();
        assert_eq!(remembered(a.path()), Some(Answer::Declined));
        std::fs::write(config.path().join(STORE_FILE), "{damaged").unwrap();
        assert_eq!(remembered(b.path()), None);
    }

    /// Trust holds for the plugins as they were when trusted: a changed source, a
    /// prebuilt library added, or a `.cargo/` beside them, and it is asked again.
    #[test]
    fn trust_is_asked_again_when_the_plugins_change() {
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let config = tempfile::tempdir().unwrap();
        keep_answers_in(config.path().to_owned());
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("kiln.project"), r#"{"plugins": ["plugins/p"]}"#).unwrap();
        std::fs::create_dir_all(root.join("plugins/p")).unwrap();
        std::fs::write(root.join("plugins/p/p.c"), "int a;").unwrap();
        remember(root, Answer::Trusted).unwrap();
        assert_eq!(remembered(root), Some(Answer::Trusted));
        std::fs::write(root.join("plugins/p/p.c"), "int b;").unwrap();
        assert_eq!(remembered(root), None, "a changed source");
        std::fs::write(root.join("plugins/p/p.c"), "int a;").unwrap();
        assert_eq!(remembered(root), Some(Answer::Trusted));
        std::fs::create_dir_all(root.join("plugins/p/prebuilt/linux")).unwrap();
        std::fs::write(root.join("plugins/p/prebuilt/linux/libp.so"), "ELF").unwrap();
        assert_eq!(remembered(root), None, "a prebuilt library added");
        std::fs::remove_dir_all(root.join("plugins/p/prebuilt")).unwrap();
        std::fs::create_dir_all(root.join(".cargo")).unwrap();
        std::fs::write(root.join(".cargo/config.toml"), "[build]\n").unwrap();
        assert_eq!(remembered(root), None, "a .cargo/ configuring builds");
    }
}
