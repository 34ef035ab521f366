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
//! for, and the errors), which is all a check with nothing changed reads, then
//! what each level read and gave (see [`encode_levels`]): about a hundred bytes
//! per level, read and written again only when a level or a unit changed.

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
use crate::index::codec::{Reader, put_table, put_varint};

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
#[derive(Debug, Clone)]
struct LevelOutcome {
    /// The level's content hash (the index's xxh3-64) when it was compiled.
    hash: u64,
    /// Each unit the compile read (one it could not read too: a unit made since
    /// may change the outcome).
    read: Vec<String>,
    /// [`inputs_hash`] of those units' contents when they were read.
    inputs: u64,
    /// The error, if it did not compile.
    error: Option<CompileError>,
}

/// Of the contents of a level's units, each the content hash or `None` where it
/// could not be read: one number per level in the record, not one per unit.
fn inputs_hash(hashes: impl Iterator<Item = Option<u64>>) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for hash in hashes {
        hasher.update(&[u8::from(hash.is_some())]);
        hasher.update(&hash.unwrap_or(0).to_le_bytes());
    }
    hasher.digest()
}

impl LevelOutcome {
    /// Whether the outcome still holds for the files as `index` has them.
    fn holds(&self, hash: u64, index: &Index) -> bool {
        self.hash == hash
            && inputs_hash(self.read.iter().map(|p| index.file(p).map(|f| f.hash))) == self.inputs
    }
}

/// Which build of Kiln runs: its version, and its executable's size and time (a
/// development build changes its compiler without a new version number).
fn this_build() -> u64 {
    static BUILD: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BUILD.get_or_init(|| {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        let exe = std::env::current_exe().and_then(std::fs::metadata);
        if let Ok(meta) = exe {
            let time = (meta.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            hasher.update(&meta.len().to_le_bytes());
            hasher.update(&time.to_le_bytes());
        }
        hasher.digest()
    })
}

/// Of what every level's compile depends on besides the files it reads: the
/// record's format, this Kiln (its compiler), the component types and file types,
/// `kiln.project` (its limits), the options, and the plugins' libraries (`plugins`,
/// a hash the caller makes of them: their code compiles their components).
fn fingerprint(index: &Index, options: CompileOptions, plugins: u64) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&VERSION.to_le_bytes());
    hasher.update(&this_build().to_le_bytes());
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
/// outcome no longer holds, and writing the record again. The levels are the
/// `.level` files `kiln compile` compiles: every one with a canonical name.
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
            decode_levels(&levels).unwrap_or_default()
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
        inputs: inputs_hash(source.read.iter().map(|(_, hash)| *hash)),
        read: source.read.into_iter().map(|(path, _)| path).collect(),
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
    encode_levels(&mut body, record);
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

/// Writes what each level read and gave, compactly (`.kiln/` stays within 15% of
/// the project's files; the same as JSON was 2 MB for 700 levels, 7% of their
/// project): every path once, sorted, each as the bytes it shares with the one
/// before and the rest; then per level its path's number, content hash, the
/// numbers of the units it read, [`inputs_hash`], and its error as JSON (or
/// nothing). Numbers are varints; hashes 8 bytes, little-endian.
fn encode_levels(out: &mut Vec<u8>, record: &Record) {
    let mut paths: Vec<&str> = (record.iter())
        .flat_map(|(level, o)| {
            std::iter::once(level.as_str()).chain(o.read.iter().map(String::as_str))
        })
        .collect();
    paths.sort_unstable();
    paths.dedup();
    let number = |path: &str| paths.binary_search(&path).unwrap_or(0) as u64;
    put_varint(out, paths.len() as u64);
    put_table(out, &paths);
    put_varint(out, record.len() as u64);
    for (level, outcome) in record {
        put_varint(out, number(level));
        out.extend_from_slice(&outcome.hash.to_le_bytes());
        put_varint(out, outcome.read.len() as u64);
        for path in &outcome.read {
            put_varint(out, number(path));
        }
        out.extend_from_slice(&outcome.inputs.to_le_bytes());
        let error = (outcome.error.as_ref()).and_then(|e| serde_json::to_vec(e).ok());
        let error = error.unwrap_or_default();
        put_varint(out, error.len() as u64);
        out.extend_from_slice(&error);
    }
}

/// Reads what [`encode_levels`] wrote; `None` if it does not read whole.
fn decode_levels(bytes: &[u8]) -> Option<Record> {
    let mut r = Reader { bytes, at: 0 };
    let count = r.varint()? as usize;
    // Each path takes two bytes at least: a count past that is a damaged record.
    let mut paths: Vec<String> = Vec::with_capacity(count.min(bytes.len() / 2));
    for _ in 0..count {
        let shared = r.varint()? as usize;
        let rest = r.varint()? as usize;
        let previous = paths.last().map_or("", String::as_str);
        let mut path = previous.get(..shared)?.to_owned();
        path.push_str(std::str::from_utf8(r.take(rest)?).ok()?);
        paths.push(path);
    }
    let path = |n: u64| paths.get(usize::try_from(n).ok()?).cloned();
    let mut record = Record::new();
    for _ in 0..r.varint()? {
        let level = path(r.varint()?)?;
        let hash = r.u64()?;
        let reads = r.varint()? as usize;
        let mut read = Vec::with_capacity(reads.min(bytes.len()));
        for _ in 0..reads {
            read.push(path(r.varint()?)?);
        }
        let inputs = r.u64()?;
        let error = match r.varint()? as usize {
            0 => None,
            n => Some(serde_json::from_slice(r.take(n)?).ok()?),
        };
        record.insert(
            level,
            LevelOutcome {
                hash,
                read,
                inputs,
                error,
            },
        );
    }
    r.done().then_some(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(read: &[&str], error: Option<CompileError>) -> LevelOutcome {
        LevelOutcome {
            hash: 7,
            read: read.iter().map(|p| (*p).to_owned()).collect(),
            inputs: inputs_hash(read.iter().map(|_| Some(3))),
            error,
        }
    }

    /// What each level read and gave reads back as it was written, and a damaged
    /// copy (cut anywhere) never reads as something else.
    #[test]
    fn levels_read_back_as_written_and_a_cut_record_does_not_read() {
        let mut record = Record::new();
        record.insert(
            "levels/a.level".into(),
            outcome(&["units/crate.unit", "units/crab.unit"], None),
        );
        let error = CompileError::Limit {
            file: "levels/é.level".into(),
            message: "too deep".into(),
        };
        record.insert(
            "levels/é.level".into(),
            outcome(&["units/crate.unit", "units/gone.unit"], Some(error)),
        );
        let mut bytes = Vec::new();
        encode_levels(&mut bytes, &record);
        let back = decode_levels(&bytes).unwrap();
        assert_eq!(back.len(), 2);
        for (level, was) in &record {
            let now = &back[level];
            assert_eq!(
                (now.hash, &now.read, now.inputs, &now.error),
                (was.hash, &was.read, was.inputs, &was.error)
            );
        }
        for cut in 0..bytes.len() {
            assert!(decode_levels(&bytes[..cut]).is_none(), "cut at {cut}");
        }
    }
}
