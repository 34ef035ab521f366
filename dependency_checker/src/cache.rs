//! The index cache: `.kiln/index.bin` in the project.
//!
//! A warm start loads it and then stats every file: entries whose size and time match
//! are reused as they are, the others are re-read (and re-parsed only if their content
//! hash changed). The cache is never trusted blindly: a different format version, a
//! different set of schemas (the classification of references depends on them), a
//! checksum mismatch from corruption or truncation, or anything unparsable makes
//! [`load`] return `None` and the index is rebuilt from scratch.
//!
//! Format (little-endian): magic `KIDX`, format version, schema fingerprint (u64),
//! check time (u64 ns), file count, then per file its path, size, time, hash, parse
//! error, its references' shared text and their fixed-size records (15 u32: text,
//! span, line, column, pointer, type, entity, component, naming); strings are a u32
//! length and UTF-8 bytes; finally an xxh3-64 of everything before it.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use kiln_core::{Registry, write_atomic};

use crate::error::{CheckerError, io_err};
use crate::index::{FileEntry, Index};
use crate::rules::DeclaredRules;
use crate::scan::{FileScan, RefRecord, ScanError};

const MAGIC: &[u8; 4] = b"KIDX";
/// 5: references carry their column and how they name their file (glTF URIs).
const VERSION: u32 = 5;
/// Bytes of one reference record.
const RECORD_BYTES: usize = 15 * 4;
/// The cache file, relative to the project root.
pub const CACHE_FILE: &str = ".kiln/index.bin";

/// A fingerprint of everything that decides how files are scanned: the component
/// and resource schemas (names, fields, kinds), the project's declared reference
/// rules, and this format's version.
pub fn schema_fingerprint(registry: &Registry, rules: &DeclaredRules) -> u64 {
    let mut text = format!("v{VERSION}|{}", rules.fingerprint());
    for c in registry.components() {
        text.push_str(&format!("|{}:{}:{:?}", c.name, c.multiple, c.fields));
    }
    for r in registry.resource_types() {
        text.push_str(&format!("|{}:{:?}", r.extension, r.format));
    }
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn str(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        Some(std::str::from_utf8(self.take(n)?).ok()?.to_owned())
    }
}

/// Serialises `index`.
pub fn encode(index: &Index) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(1 << 20));
    w.0.extend_from_slice(MAGIC);
    w.u32(VERSION);
    w.u64(schema_fingerprint(index.registry(), index.rules()));
    w.u64(index.checked_at_ns());
    let files: Vec<&FileEntry> = index.files().collect();
    w.u32(files.len() as u32);
    for f in files {
        w.str(&f.path);
        w.u64(f.size);
        w.u64(f.mtime_ns);
        w.u64(f.hash);
        match &f.scan.error {
            Some(e) => {
                w.u32(1);
                w.u32(e.line);
                w.u32(e.column);
                w.str(&e.message);
            }
            None => w.u32(0),
        }
        w.str(&f.scan.strings);
        w.u32(f.scan.records.len() as u32);
        for r in &f.scan.records {
            for v in r.to_words() {
                w.u32(v);
            }
        }
    }
    let checksum = xxhash_rust::xxh3::xxh3_64(&w.0);
    w.u64(checksum);
    w.0
}

/// Reads an encoded index; `None` if it is not a valid cache for `registry` and
/// `rules`.
pub fn decode(
    bytes: &[u8],
    root: &Path,
    registry: &Arc<Registry>,
    rules: &Arc<DeclaredRules>,
) -> Option<Index> {
    let (body, tail) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if xxhash_rust::xxh3::xxh3_64(body) != u64::from_le_bytes(tail.try_into().ok()?) {
        return None;
    }
    let mut r = Reader(body);
    if r.take(4)? != MAGIC || r.u32()? != VERSION || r.u64()? != schema_fingerprint(registry, rules)
    {
        return None;
    }
    let checked_at = r.u64()?;
    let count = r.u32()? as usize;
    let mut files = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let path = r.str()?;
        // The cache is a file anyone can write: a path that cannot be a project
        // file makes the whole cache untrusted (it is rebuilt).
        if !crate::journal::is_plain_relative(&path) {
            return None;
        }
        let (size, mtime_ns, hash) = (r.u64()?, r.u64()?, r.u64()?);
        let error = match r.u32()? {
            0 => None,
            _ => Some(ScanError {
                line: r.u32()?,
                column: r.u32()?,
                message: r.str()?,
            }),
        };
        let strings = r.str()?;
        let n = r.u32()? as usize;
        // Each record is 15 u32; ranges are checked when read (`FileScan::get`).
        let raw = r.take(n.checked_mul(RECORD_BYTES)?)?;
        let records = raw
            .chunks_exact(RECORD_BYTES)
            .map(|c| {
                let words = std::array::from_fn(|k| {
                    u32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]])
                });
                RefRecord::from_words(words)
            })
            .collect::<Option<Vec<RefRecord>>>()?;
        files.push(FileEntry {
            path: path.into(),
            size,
            mtime_ns,
            hash,
            scan: Arc::new(FileScan {
                strings,
                records,
                error,
            }),
        });
    }
    if !r.0.is_empty() {
        return None;
    }
    Some(Index::from_parts(
        root.to_owned(),
        Arc::clone(registry),
        Arc::clone(rules),
        files,
        checked_at,
    ))
}

/// Loads the cache of the project at `root`, if there is a valid one.
pub fn load(root: &Path, registry: &Arc<Registry>, rules: &Arc<DeclaredRules>) -> Option<Index> {
    // Only a regular file, bounded: a FIFO or a link to /dev/zero put there must not
    // hang the open or eat memory.
    crate::lock::existing_kiln_dir(root)?;
    let bytes = crate::journal::read_regular(&root.join(CACHE_FILE), 4 << 30).ok()?;
    decode(&bytes, root, registry, rules)
}

/// Saves `index` as its project's cache (atomically), with a `.gitignore` that keeps
/// `.kiln/` out of version control.
pub fn save(index: &Index) -> Result<(), CheckerError> {
    // A real folder inside the project, never a link to somewhere else.
    let dir = crate::lock::kiln_dir(index.root())?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        fs::write(
            &ignore,
            "# Kiln's caches and journals: local to this machine.\n*\n",
        )
        .map_err(io_err(&ignore))?;
    }
    let file = index.root().join(CACHE_FILE);
    write_atomic(&file, &encode(index)).map_err(io_err(&file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::BuildOptions;
    use kiln_core::Project;

    fn project() -> (tempfile::TempDir, Project, Arc<Registry>) {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("kiln.project", "{}"),
            (
                "levels/a.level",
                r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m"}}}]}"#,
            ),
            ("meshes/m.mesh", "{}"),
            ("materials/bad.material", "{ nope"),
        ];
        for (p, c) in files {
            let full = dir.path().join(p);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, c).unwrap();
        }
        let project = Project::open(dir.path()).unwrap();
        (dir, project, Arc::new(Registry::with_builtins()))
    }

    #[test]
    fn round_trips_and_warm_start_reads_nothing() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let decoded = decode(&encode(&index), project.root(), &registry, index.rules()).unwrap();
        assert_eq!(
            decoded.files().collect::<Vec<_>>(),
            index.files().collect::<Vec<_>>()
        );
        // Pretend the cache was written long after the files (no racy entries).
        let mut bytes = encode(&index);
        let at = 4 + 4 + 8;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let body = bytes.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]).to_le_bytes();
        bytes[body..].copy_from_slice(&sum);
        let cached = decode(&bytes, project.root(), &registry, index.rules()).unwrap();
        let warm =
            Index::build_from(&project, registry, Some(&cached), &BuildOptions::default()).unwrap();
        assert_eq!(warm.stats().read, 0);
        assert_eq!(
            warm.files().collect::<Vec<_>>(),
            index.files().collect::<Vec<_>>()
        );
    }

    #[test]
    fn corrupt_truncated_or_foreign_caches_are_rejected() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let bytes = encode(&index);
        for len in 0..bytes.len() {
            assert!(
                decode(&bytes[..len], project.root(), &registry, index.rules()).is_none(),
                "truncated to {len}"
            );
        }
        for pos in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[pos] ^= 0x40;
            assert!(
                decode(&b, project.root(), &registry, index.rules()).is_none(),
                "flipped byte {pos}"
            );
        }
        let mut other = Registry::with_builtins();
        other
            .register_resource_type(kiln_core::registry::ResourceType {
                extension: "sound".into(),
                format: kiln_core::registry::ResourceFormat::Binary,
                doc: String::new(),
            })
            .unwrap();
        assert!(
            decode(&bytes, project.root(), &Arc::new(other), index.rules()).is_none(),
            "schemas changed"
        );
        let rules =
            DeclaredRules::new(&serde_json::from_str(r#"{"json": {"mesh": "mesh"}}"#).unwrap());
        assert!(
            decode(&bytes, project.root(), &registry, &Arc::new(rules)).is_none(),
            "the project's declared rules changed"
        );
    }

    #[test]
    fn files_changed_behind_the_cache_are_re_read() {
        let (dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        save(&index).unwrap();
        fs::write(dir.path().join("meshes/m.mesh"), r#"{"shape": "sphere"}"#).unwrap();
        fs::write(dir.path().join("meshes/n.mesh"), "{}").unwrap();
        fs::remove_file(dir.path().join("materials/bad.material")).unwrap();
        let cached = load(dir.path(), &registry, index.rules()).unwrap();
        let warm =
            Index::build_from(&project, registry, Some(&cached), &BuildOptions::default()).unwrap();
        assert!(warm.file("meshes/n.mesh").is_some());
        assert!(warm.file("materials/bad.material").is_none());
        assert_eq!(warm.file("meshes/m.mesh").unwrap().size, 19);
    }
}
