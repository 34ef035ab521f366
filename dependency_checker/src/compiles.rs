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
//! compiled. The rest is a line of JSON ([`Header`]: what the record was written
//! for, and the errors), which is all a check with nothing changed reads, then the
//! JSON of what each level read and gave: a few kilobytes per level, read and
//! written again only when a level or a unit changed.

use std::collections::BTreeMap;
use std::path::Path;

use std::sync::{Arc, Mutex};

use kiln_core::compiler::ResourceSource;
use kiln_core::fs::Durability;
use kiln_core::project::ProjectSource;
use kiln_core::{CompileError, CompileOptions, LevelDocument, ProjectError, ResourcePath};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::hash::FastMap;
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

/// What every level's compile read and gave, by level.
type Record = BTreeMap<String, LevelOutcome>;

/// The start of the record: enough to answer a check with nothing changed
/// without reading what each level read (2 MB for 700 levels, which made a warm
/// check of 20,000 files a quarter slower).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Header {
    /// [`digest`] of the index the record was written for.
    digest: u64,
    /// [`fingerprint`] the levels' outcomes were worked out with.
    fingerprint: u64,
    /// The levels that do not compile, with their errors.
    errors: Vec<(String, CompileError)>,
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

/// Of every level and unit of `index` (path and content hash) and `fingerprint`:
/// while it is the same, so is every outcome.
fn digest(index: &Index, fingerprint: u64) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&fingerprint.to_le_bytes());
    for f in index.files() {
        if f.path.ends_with(".level") || f.path.ends_with(".unit") {
            hasher.update(f.path.as_bytes());
            hasher.update(&[0]);
            hasher.update(&f.hash.to_le_bytes());
        }
    }
    hasher.digest()
}

/// The levels of `index` that do not compile (in path order): as recorded when no
/// level or unit changed since; otherwise compiling only the levels whose recorded
/// outcome no longer holds, and writing the record again. The levels are the `.level` files `kiln compile` compiles:
/// every one with a canonical name.
pub(crate) fn compile_errors(
    project: &kiln_core::Project,
    index: &Index,
    options: CompileOptions,
    plugins: u64,
) -> Vec<LevelCompileError> {
    let fingerprint = fingerprint(index, options, plugins);
    let digest = digest(index, fingerprint);
    let loaded = load(index.root());
    let mut record = match loaded {
        Some((header, _)) if header.digest == digest => {
            return (header.errors.into_iter())
                .map(|(level, error)| LevelCompileError { level, error })
                .collect();
        }
        Some((header, levels)) if header.fingerprint == fingerprint => {
            serde_json::from_slice(&levels).unwrap_or_default()
        }
        _ => Record::default(),
    };
    let levels: Vec<(&str, u64)> = (index.files())
        .filter(|f| f.path.ends_with(".level") && ResourcePath::split_file(&f.path).is_ok())
        .map(|f| (&*f.path, f.hash))
        .collect();
    let stale: Vec<(&str, u64)> = (levels.iter())
        .filter(|(level, hash)| {
            !(record.get(*level)).is_some_and(|outcome| outcome.holds(*hash, index))
        })
        .copied()
        .collect();
    let units = SharedUnits::default();
    let compiled: Vec<(&str, Option<LevelOutcome>)> = stale
        .par_iter()
        .map(|&(level, hash)| {
            let outcome = compile(project, (index, &units), level, hash, options);
            (level, outcome)
        })
        .collect();
    drop(units);
    for (level, outcome) in compiled {
        match outcome {
            Some(outcome) => record.insert(level.to_owned(), outcome),
            None => record.remove(level),
        };
    }
    let out: Vec<LevelCompileError> = (levels.iter())
        .filter_map(|(level, _)| {
            let error = record.get(*level)?.error.clone()?;
            Some(LevelCompileError {
                level: (*level).to_owned(),
                error,
            })
        })
        .collect();
    let header = Header {
        digest,
        fingerprint,
        errors: (out.iter())
            .map(|e| (e.level.clone(), e.error.clone()))
            .collect(),
    };
    // The index is not the one the record was written for: it is written again
    // (levels no longer there left out), so that the next check with nothing
    // changed reads only the header. One that cannot be written is made again
    // next time: nothing is lost.
    let mut now: BTreeMap<String, LevelOutcome> = BTreeMap::new();
    for (level, _) in &levels {
        if let Some((path, outcome)) = record.remove_entry(*level) {
            now.insert(path, outcome);
        }
    }
    let _ = save(index.root(), &header, &now);
    out
}

/// Compiles `level` (whose content hash the index has as `hash`), saying what it
/// read and gave; `None` when the level itself could not be read (the walk reports
/// that), which is not recorded.
fn compile(
    project: &kiln_core::Project,
    (index, units): (&Index, &SharedUnits),
    level: &str,
    hash: u64,
    options: CompileOptions,
) -> Option<LevelOutcome> {
    let mut source = CheckSource {
        files: ProjectSource(project),
        units,
        read: Vec::new(),
    };
    let result = project.compile_streamed_from(index.registry(), level, options, &mut source);
    let error = match result {
        Ok(_) => None,
        Err(ProjectError::Compile(e)) => Some(e),
        Err(_) => return None,
    };
    Some(LevelOutcome {
        hash,
        read: source.read,
        error,
    })
}

/// The units the compiles of one check parsed, with their content hashes, shared
/// between them: a unit placed in 300 levels is read and parsed once, not 300
/// times (reading and parsing units was two fifths of compiling every level).
type SharedUnits = Mutex<FastMap<String, (Arc<LevelDocument>, u64)>>;

/// The project's files as one level's compile reads them, recording each unit it
/// read with its content hash (a unit another compile parsed counts as read).
struct CheckSource<'a> {
    files: ProjectSource<'a>,
    units: &'a SharedUnits,
    read: Vec<(String, Option<u64>)>,
}

impl CheckSource<'_> {
    fn record(&mut self, path: &str, hash: Option<u64>) {
        if !self.read.iter().any(|(p, _)| p == path) {
            self.read.push((path.to_owned(), hash));
        }
    }
}

impl ResourceSource for CheckSource<'_> {
    fn max_level_entities(&self) -> usize {
        self.files.max_level_entities()
    }

    fn read_text(&mut self, path: &ResourcePath, ext: &str) -> Result<String, String> {
        let text = self.files.read_text(path, ext);
        let hash = (text.as_ref().ok()).map(|t| xxhash_rust::xxh3::xxh3_64(t.as_bytes()));
        self.record(&path.with_extension(ext), hash);
        text
    }

    fn parsed_unit(&mut self, unit_file: &str) -> Option<Arc<LevelDocument>> {
        let (unit, hash) = {
            let units = self.units.lock().ok()?;
            let (unit, hash) = units.get(unit_file)?;
            (Arc::clone(unit), *hash)
        };
        self.record(unit_file, Some(hash));
        Some(unit)
    }

    fn keep_parsed_unit(&mut self, unit_file: &str, unit: &Arc<LevelDocument>) {
        let Some(&(_, Some(hash))) = self.read.iter().find(|(p, _)| p == unit_file) else {
            return;
        };
        if let Ok(mut units) = self.units.lock() {
            units
                .entry(unit_file.to_owned())
                .or_insert_with(|| (Arc::clone(unit), hash));
        }
    }
}

/// The record of the project at `root`, if there is one that passes its checksum:
/// its header, and the bytes of what each level read (JSON, read only when
/// needed).
fn load(root: &Path) -> Option<(Header, Vec<u8>)> {
    crate::fs::existing_kiln_dir(root)?;
    let mut bytes = kiln_core::fs::read_below(root, Path::new(RECORD_FILE), MAX_RECORD).ok()?;
    let (sum, body) = bytes.split_first_chunk::<8>()?;
    if crate::cache::trusted_checksum(body)? != u64::from_le_bytes(*sum) {
        return None;
    }
    let end = 8 + memchr::memchr(b'\n', body)?;
    let header: Header = serde_json::from_slice(&bytes[8..end]).ok()?;
    bytes.drain(..=end);
    Some((header, bytes))
}

/// Writes the record (atomically; not waited for: a torn record fails its
/// checksum and every level is compiled again): a checksum keyed with the user's
/// key, the header as one line of JSON, then what each level read and gave.
fn save(root: &Path, header: &Header, record: &Record) -> Option<()> {
    let mut body = serde_json::to_vec(header).ok()?;
    body.push(b'\n');
    serde_json::to_writer(&mut body, record).ok()?;
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
