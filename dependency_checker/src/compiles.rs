//! Whether each level of the project compiles, for `kiln check`: whatever `kiln
//! compile` refuses, a check reports. Each level is compiled by the compiler
//! itself (one validation, not a second one kept in step with it by hand), and
//! what each compile read is kept with its outcome in `.kiln/compiles.bin`: a level
//! is compiled again only when its contents, a unit it read, `kiln.project`, the
//! component types or the plugins' libraries changed, so a check with nothing
//! changed compiles nothing.
//!
//! The record is the compiler's own outcome, so it is only ever trusted as the
//! index cache is (see `cache.rs`): its first 8 bytes are a checksum of the rest
//! keyed with this user's key; a record that fails it is dropped and every level
//! compiled. The rest is JSON ([`Record`]): a few hundred bytes per level, read and
//! written once per check that compiled something.

use std::collections::BTreeMap;
use std::path::Path;

use kiln_core::fs::Durability;
use kiln_core::{CompileError, CompileOptions, ProjectError, ResourcePath};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::index::Index;

/// The record, relative to the project root.
pub const RECORD_FILE: &str = ".kiln/compiles.bin";
/// Its name in `.kiln/`.
const RECORD_NAME: &str = "compiles.bin";
/// Bumped whenever what a record means changes.
const VERSION: u32 = 1;
/// A record bigger than this is not read (a crafted one must not eat memory).
const MAX_RECORD: u64 = 256 << 20;

/// A level that does not compile, with the compiler's error (which names the file
/// it is in: the level, or one of its units).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelCompileError {
    /// The level (`levels/forest.level`).
    pub level: String,
    /// Why `kiln compile` refuses it.
    pub error: CompileError,
}

/// What every level's compile read and gave.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    /// Of the things every compile depends on (see [`fingerprint`]).
    fingerprint: u64,
    levels: BTreeMap<String, LevelOutcome>,
}

/// What one level's compile read, and gave.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LevelOutcome {
    /// The level's content hash (the index's xxh3-64) when it was compiled.
    hash: u64,
    /// Each unit the compile read, with its content hash, or `None` where it
    /// could not be read (a unit made since may change the outcome).
    read: Vec<(String, Option<u64>)>,
    /// The error, if it did not compile.
    error: Option<CompileError>,
}

impl LevelOutcome {
    /// Whether the outcome still holds for the files as `index` has them.
    fn holds(&self, hash: u64, index: &Index) -> bool {
        self.hash == hash
            && (self.read.iter()).all(|(path, was)| index.file(path).map(|f| f.hash) == *was)
    }
}

/// Of what every level's compile depends on besides the files it reads: the
/// record's format, this Kiln (its compiler), the component types and file types,
/// `kiln.project` (its limits), the options, and the plugins' libraries (`plugins`,
/// a hash the caller makes of them: their code compiles their components).
fn fingerprint(index: &Index, options: CompileOptions, plugins: u64) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&VERSION.to_le_bytes());
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    hasher.update(&crate::scan::fingerprint(index.registry(), index.rules()).to_le_bytes());
    let project_file = index.file(kiln_core::project::PROJECT_FILE).map(|f| f.hash);
    hasher.update(&project_file.unwrap_or(0).to_le_bytes());
    hasher.update(&[u8::from(options.skip_unknown_components)]);
    hasher.update(&plugins.to_le_bytes());
    hasher.digest()
}

/// The levels of `index` that do not compile (in path order), compiling only
/// those whose recorded outcome no longer holds, and writing the record again if
/// any was compiled. The levels are the `.level` files `kiln compile` compiles:
/// every one with a canonical name.
pub(crate) fn compile_errors(
    project: &kiln_core::Project,
    index: &Index,
    options: CompileOptions,
    plugins: u64,
) -> Vec<LevelCompileError> {
    let fingerprint = fingerprint(index, options, plugins);
    let mut record = load(index.root())
        .filter(|r| r.fingerprint == fingerprint)
        .unwrap_or_default();
    let levels: Vec<(&str, u64)> = (index.files())
        .filter(|f| f.path.ends_with(".level") && ResourcePath::split_file(&f.path).is_ok())
        .map(|f| (&*f.path, f.hash))
        .collect();
    let stale: Vec<(&str, u64)> = (levels.iter())
        .filter(|(level, hash)| {
            !(record.levels.get(*level)).is_some_and(|outcome| outcome.holds(*hash, index))
        })
        .copied()
        .collect();
    let gone = record.levels.len() + stale.len() != levels.len();
    let compiled: Vec<(&str, Option<LevelOutcome>)> = stale
        .par_iter()
        .map(|&(level, hash)| (level, compile(project, index, level, hash, options)))
        .collect();
    let changed = !compiled.is_empty() || gone;
    for (level, outcome) in compiled {
        match outcome {
            Some(outcome) => record.levels.insert(level.to_owned(), outcome),
            None => record.levels.remove(level),
        };
    }
    let out = (levels.iter())
        .filter_map(|(level, _)| {
            let error = record.levels.get(*level)?.error.clone()?;
            Some(LevelCompileError {
                level: (*level).to_owned(),
                error,
            })
        })
        .collect();
    if changed {
        record.fingerprint = fingerprint;
        let mut now: BTreeMap<String, LevelOutcome> = BTreeMap::new();
        for (level, _) in &levels {
            if let Some((path, outcome)) = record.levels.remove_entry(*level) {
                now.insert(path, outcome);
            }
        }
        record.levels = now;
        // A record that cannot be written is made again next time: nothing is lost.
        let _ = save(index.root(), &record);
    }
    out
}

/// Compiles `level` (whose content hash the index has as `hash`), saying what it
/// read and gave; `None` when the level itself could not be read (the walk reports
/// that), which is not recorded.
fn compile(
    project: &kiln_core::Project,
    index: &Index,
    level: &str,
    hash: u64,
    options: CompileOptions,
) -> Option<LevelOutcome> {
    let mut read: Vec<(String, Option<u64>)> = Vec::new();
    let result = project.compile_reading(index.registry(), level, options, &mut |path, bytes| {
        if !read.iter().any(|(p, _)| p == path) {
            read.push((path.to_owned(), bytes.map(xxhash_rust::xxh3::xxh3_64)));
        }
    });
    let error = match result {
        Ok(_) => None,
        Err(ProjectError::Compile(e)) => Some(e),
        Err(_) => return None,
    };
    Some(LevelOutcome { hash, read, error })
}

/// The record of the project at `root`, if there is one that passes its checksum.
fn load(root: &Path) -> Option<Record> {
    crate::fs::existing_kiln_dir(root)?;
    let bytes = kiln_core::fs::read_below(root, Path::new(RECORD_FILE), MAX_RECORD).ok()?;
    let (sum, body) = bytes.split_first_chunk::<8>()?;
    if crate::cache::trusted_checksum(body)? != u64::from_le_bytes(*sum) {
        return None;
    }
    serde_json::from_slice(body).ok()
}

/// Writes `record` as the project's (atomically; not waited for: a torn record
/// fails its checksum and every level is compiled again).
fn save(root: &Path, record: &Record) -> Option<()> {
    let body = serde_json::to_vec(record).ok()?;
    let sum = crate::cache::trusted_checksum(&body)?;
    let mut bytes = sum.to_le_bytes().to_vec();
    bytes.extend_from_slice(&body);
    let (folder, _) = crate::cache::cache_folder(root).ok()?;
    kiln_core::fs::replace_at(
        &folder,
        std::ffi::OsStr::new(RECORD_NAME),
        &bytes,
        Durability::Unflushed,
    )
    .ok()?;
    Some(())
}
