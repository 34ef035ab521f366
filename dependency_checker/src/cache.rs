//! The index cache: `.kiln/index.bin` in the project.
//!
//! A warm start loads it and then stats every file: entries whose size and time match
//! are reused as they are, the others are re-read (and re-parsed only if their content
//! hash changed). The cache is never trusted blindly: a different format version, a
//! different set of schemas (the classification of references depends on them), a
//! checksum mismatch from corruption or truncation, or anything unparsable makes
//! [`load`] return `None` and the index is rebuilt from scratch.
//!
//! The cache is small and loaded without decoding it. Issue 13 asked for `.kiln/` at
//! most 15% of the project's contents: each file's references are stored in the
//! scan codec's records (`index/codec.rs`: one string table for the whole project,
//! varints, differences from the reference before) and stay in the loaded bytes
//! until something asks for them, so `kiln check` with nothing changed, or `kiln
//! refs` of one file, decodes only what it reads. `kiln check`'s findings are
//! stored with the index they were computed from, so a check with nothing changed
//! prints them without resolving a reference. Writing the cache again copies the
//! still-encoded records of unchanged files as they are.
//!
//! Format (little-endian; `v` is a varint):
//! - magic `KIDX`, version `u32`, schema fingerprint `u64`, check time `u64` (ns);
//! - the string table: `v` count, then each string as `v` bytes shared with the
//!   string before and `v` length and UTF-8 bytes of the rest;
//! - `v` file count, then per file: `v` bytes shared with the previous path, `v`
//!   length and bytes of the rest, `v` size, `v` zigzag time after the previous
//!   file's, hash `u64`, `v` length and bytes of its references (one record of the scan codec);
//! - `v` length and bytes of the findings as JSON (0: none stored), and an xxh3-64
//!   of what the walk met besides files when they were made;
//! - an xxh3-64 of everything before it, keyed with this user's key (see [`key`]).
//!
//! A file's references are one record of the scan codec (`index/codec.rs`).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kiln_core::os::Folder;

use kiln_core::Registry;
use kiln_core::fs::{Durability, Replacement};

use crate::check::Finding;
use crate::error::{CheckerError, io_err};
use crate::index::codec::{
    self, EncodedScan, Reader, ScanBody, put_table, put_varint, shared_prefix, unzigzag, zigzag,
};
use crate::index::{FileEntry, Index, ScanCell};
use crate::scan::DeclaredRules;

const MAGIC: &[u8; 4] = b"KIDX";

/// The size of the key the cache's checksum is made with (xxh3's secret).
const KEY_SIZE: usize = 192;

/// The key of this user's caches: random bytes kept in Kiln's folder of the
/// user's settings (`cache.key`, see [`kiln_core::user_config`]), made on first
/// use. A cache is only ever Kiln's own record of what it read, so its checksum is
/// made with a key no project holds: a cache that came with a downloaded project,
/// or that someone edited and gave a fresh checksum, fails it and the index is
/// built from the files, never from what the cache claims they hold (a cache can
/// say a file holds no reference to what a move moves). Without a settings folder
/// (no `HOME`) there is no key, and no cache is trusted: [`decode`] refuses every
/// one, and the index is built from the files (a public default key would let
/// anyone make a cache that passes).
fn key() -> Option<&'static [u8; KEY_SIZE]> {
    static KEY: std::sync::OnceLock<Option<[u8; KEY_SIZE]>> = std::sync::OnceLock::new();
    KEY.get_or_init(user_key).as_ref()
}

/// A hasher keyed with [`key`].
fn keyed_hasher() -> xxhash_rust::xxh3::Xxh3 {
    match key() {
        Some(key) => xxhash_rust::xxh3::Xxh3::with_secret(*key),
        None => xxhash_rust::xxh3::Xxh3::new(),
    }
}

/// The user's key, made if there is none yet (created new, readable by the user
/// alone); `None` if it can be neither read nor made.
fn user_key() -> Option<[u8; KEY_SIZE]> {
    use std::io::{Read, Write};
    let dir = kiln_core::user_config::user_config_dir()?;
    let path = dir.join("cache.key");
    let read = || -> Option<[u8; KEY_SIZE]> {
        let bytes = kiln_core::read_regular(&path, KEY_SIZE as u64).ok()?;
        bytes.try_into().ok()
    };
    if let Some(key) = read() {
        return Some(key);
    }
    let mut key = [0u8; KEY_SIZE];
    fs::File::open("/dev/urandom")
        .ok()?
        .read_exact(&mut key)
        .ok()?;
    fs::create_dir_all(&dir).ok()?;
    let made = kiln_core::os::create_new_private(&path);
    match made {
        Ok(mut file) => {
            file.write_all(&key).ok()?;
            Some(key)
        }
        // Another process made it first: its key is the one.
        Err(_) => read(),
    }
}

/// The checksum a cache's `body` ends with: xxh3-64 keyed with [`key`].
pub(crate) fn keyed_checksum(body: &[u8]) -> u64 {
    let mut hasher = keyed_hasher();
    hasher.update(body);
    hasher.digest()
}

/// [`keyed_checksum`], or `None` without a key: then no record Kiln keeps of what
/// it read or worked out is trusted (see [`key`]).
pub(crate) fn trusted_checksum(body: &[u8]) -> Option<u64> {
    key()?;
    Some(keyed_checksum(body))
}
/// 6: one string table, varints, references decoded on use, findings stored.
const VERSION: u32 = 6;
/// The cache file, relative to the project root.
pub const CACHE_FILE: &str = kiln_core::own_folder::INDEX_CACHE;
/// Its name in `.kiln/`.
const CACHE_NAME: &str = "index.bin";

/// Serialises `index`, with the findings of a check of exactly this index if there
/// are any.
pub fn encode(index: &Index, findings: Option<&[Finding]>) -> Vec<u8> {
    // Writing to memory cannot fail.
    encode_index_to(index, Vec::new())
        .and_then(|encoded| encoded.finish(findings))
        .unwrap_or_default()
}

/// What a cache is written to: everything passes through the hash that the
/// checksum at the end is.
pub(crate) struct Hashed<W: std::io::Write> {
    out: W,
    hasher: xxhash_rust::xxh3::Xxh3,
}

impl<W: std::io::Write> std::io::Write for Hashed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(buf.get(..n).unwrap_or_default());
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The cache written up to its findings: everything that depends on the index alone,
/// so that a check can write it while it works out the findings.
pub(crate) struct EncodedIndex<W: std::io::Write> {
    out: Hashed<W>,
    walked: u64,
}

impl<W: std::io::Write> EncodedIndex<W> {
    /// Writes the rest of the cache: the findings and the checksum. Returns what it
    /// was written to.
    pub(crate) fn finish(mut self, findings: Option<&[Finding]>) -> std::io::Result<W> {
        use std::io::Write;
        let findings_json = findings
            .and_then(|f| serde_json::to_vec(f).ok())
            .unwrap_or_default();
        let mut tail = Vec::with_capacity(findings_json.len() + 32);
        put_varint(&mut tail, findings_json.len() as u64);
        tail.extend_from_slice(&findings_json);
        tail.extend_from_slice(&self.walked.to_le_bytes());
        self.out.write_all(&tail)?;
        let checksum = self.out.hasher.digest();
        let mut out = self.out.out;
        out.write_all(&checksum.to_le_bytes())?;
        Ok(out)
    }
}

/// A cache being written straight to a temporary file beside `.kiln/index.bin`,
/// renamed over it once finished: a first check at 100,000 files held the 20 MB it
/// writes in a buffer, beside the body it copies them from.
pub(crate) struct CacheFile {
    replacement: Replacement<Folder>,
    path: PathBuf,
    encoded: EncodedIndex<std::io::BufWriter<fs::File>>,
}

impl CacheFile {
    /// Starts writing the cache of `index`, up to its findings.
    pub(crate) fn start(index: &Index) -> Result<Self, CheckerError> {
        let (folder, path) = cache_folder(index.root())?;
        let (replacement, file) =
            Replacement::start(folder, std::ffi::OsStr::new(CACHE_NAME)).map_err(io_err(&path))?;
        // Dropped on an error, the replacement removes its temporary file.
        let encoded =
            encode_index_to(index, std::io::BufWriter::new(file)).map_err(io_err(&path))?;
        Ok(CacheFile {
            replacement,
            path,
            encoded,
        })
    }

    /// Writes the findings and the checksum and puts the cache in place.
    pub(crate) fn finish(self, findings: Option<&[Finding]>) -> Result<(), CheckerError> {
        let CacheFile {
            replacement,
            path,
            encoded,
        } = self;
        // A torn cache fails its checksum and is rebuilt; a stale one is checked file
        // by file against the disk. Nothing is lost, so the disk is not waited for.
        let file = encoded
            .finish(findings)
            .and_then(|out| out.into_inner().map_err(|e| e.into_error()))
            .map_err(io_err(&path))?;
        replacement
            .place(file, Durability::Unflushed)
            .map_err(io_err(&path))
    }
}

/// Writes the cache of `index` up to its findings to `out` (see [`EncodedIndex`]).
pub(crate) fn encode_index_to<W: std::io::Write>(
    index: &Index,
    out: W,
) -> std::io::Result<EncodedIndex<W>> {
    let files: Vec<(&Arc<str>, &ScanCell)> =
        (index.files()).map(|f| (&f.path, f.scan_cell())).collect();
    codec::encode_scans(&files, |table, records| {
        let mut out = Hashed {
            out,
            hasher: keyed_hasher(),
        };
        let table_bytes: usize = table.iter().map(|s| s.len() + 2).sum();
        let mut head = Vec::with_capacity(48 + table_bytes);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(
            &crate::scan::fingerprint(index.registry(), index.rules()).to_le_bytes(),
        );
        head.extend_from_slice(&index.checked_at_ns().to_le_bytes());
        put_varint(&mut head, table.len() as u64);
        put_table(&mut head, table);
        put_varint(&mut head, index.len() as u64);
        std::io::Write::write_all(&mut out, &head)?;
        drop(head);
        let mut previous: &str = "";
        let mut mtime = 0u64;
        let mut entry = Vec::with_capacity(256);
        for (f, &bytes) in index.files().zip(records) {
            entry.clear();
            let shared = shared_prefix(&f.path, previous);
            put_varint(&mut entry, shared as u64);
            put_varint(&mut entry, (f.path.len() - shared) as u64);
            entry.extend_from_slice(&f.path.as_bytes()[shared..]);
            previous = &f.path;
            put_varint(&mut entry, f.size);
            // Files are written in bursts (a checkout, an export): times close together.
            put_varint(&mut entry, zigzag(f.mtime_ns.wrapping_sub(mtime) as i64));
            mtime = f.mtime_ns;
            entry.extend_from_slice(&f.hash.to_le_bytes());
            put_varint(&mut entry, bytes.len() as u64);
            std::io::Write::write_all(&mut out, &entry)?;
            std::io::Write::write_all(&mut out, bytes)?;
        }
        Ok(EncodedIndex {
            out,
            walked: walk_issues_hash(index),
        })
    })
}

/// What the walk met besides files (links leading out, unreadable folders), which
/// `kiln check` reports but the entries do not show: stored findings stand only if
/// these are the same too.
fn walk_issues_hash(index: &Index) -> u64 {
    xxhash_rust::xxh3::xxh3_64(format!("{:?}", index.walk_issues()).as_bytes())
}

/// What the findings stored with a cache say of an index built from it.
#[derive(Debug)]
pub enum StoredFindings {
    /// None are stored, or they say nothing of the index: a check works them out.
    None,
    /// A check of the index gives exactly these.
    Stand(Vec<Finding>),
    /// A check of the index gives these once the findings about the contents of
    /// the files in `before` (their entries as the cache has them) are worked out
    /// again: the index holds the same files, these with other contents.
    Behind {
        /// The stored findings.
        findings: Vec<Finding>,
        /// The entries, as stored, of the files whose contents changed.
        before: Vec<FileEntry>,
    },
}

/// A cache read back: the index, and the findings stored with it.
#[derive(Debug)]
pub struct Loaded {
    /// The index as it was saved; its entries' references are decoded on use.
    pub index: Index,
    stored: StoredCheck,
}

/// What a cache stores beside its index: the findings of a check of it, if any,
/// and what its walk met besides files.
#[derive(Debug)]
pub struct StoredCheck {
    findings: Option<Vec<Finding>>,
    walked: u64,
}

impl Loaded {
    /// The index, and what the cache stores beside it: the index can go to a walk
    /// (`Index::build_while_loading`) while the rest waits.
    pub fn into_parts(self) -> (Index, StoredCheck) {
        (self.index, self.stored)
    }

    /// A cache of `index` storing `stored`.
    pub fn from_parts(index: Index, stored: StoredCheck) -> Self {
        Loaded { index, stored }
    }

    /// What the findings stored with the index say of `now`, built from this cache
    /// (see [`StoredFindings`]).
    ///
    /// They stand if `now` holds the same files with the same contents (a file read
    /// again because it was touched, as a `git checkout` leaves it, hashes the
    /// same), so `kiln.project` and `kiln.redirects`, the findings' other inputs,
    /// are unchanged too, and its walk met the same links and unreadable folders.
    /// They are behind if some files hold other contents, those two aside: the
    /// findings about those files' contents are then worked out again, and the
    /// rest stand if the references between files are the same (see
    /// `Checker::findings`).
    pub fn findings_for(self, now: &Index) -> StoredFindings {
        let Some(findings) = self.stored.findings else {
            return StoredFindings::None;
        };
        if now.len() != self.index.len() || walk_issues_hash(now) != self.stored.walked {
            return StoredFindings::None;
        }
        let mut before = Vec::new();
        for (was, is) in self.index.files().zip(now.files()) {
            if was.path != is.path {
                return StoredFindings::None;
            }
            if was.hash != is.hash {
                before.push(was.clone());
            }
        }
        if before.is_empty() {
            StoredFindings::Stand(findings)
        } else if crate::check::can_follow_contents_change(&before, now.len()) {
            StoredFindings::Behind { findings, before }
        } else {
            StoredFindings::None
        }
    }

    /// How many files `now`, built from this cache, found changed, new or gone (at
    /// least: a file gone and another new count once) that a cache written now
    /// would spare the next command reading: not those changed so recently that
    /// it reads them again anyway.
    pub fn changes_a_save_settles(&self, now: &Index) -> usize {
        let stats = now.stats();
        stats.read.saturating_sub(stats.read_recent) + now.len().abs_diff(self.index.len())
    }
}

/// Reads an encoded index; `None` if it is not a valid cache for `registry` and
/// `rules`.
pub fn decode(
    bytes: Vec<u8>,
    root: &Path,
    registry: &Arc<Registry>,
    rules: &Arc<DeclaredRules>,
) -> Option<Loaded> {
    // No key, no trust (see [`key`]).
    key()?;
    let body_len = bytes.len().checked_sub(8)?;
    let (body, tail) = bytes.split_at(body_len);
    if keyed_checksum(body) != u64::from_le_bytes(tail.try_into().ok()?) {
        return None;
    }
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(4)? != MAGIC
        || r.u32()? != VERSION
        || r.u64()? != crate::scan::fingerprint(registry, rules)
    {
        return None;
    }
    let checked_at = r.u64()?;
    let count = r.varint()? as usize;
    // Stepped over here, decoded when a string is first asked for.
    let table_start = r.at;
    for _ in 0..count {
        r.varint()?;
        let n = r.varint()? as usize;
        r.take(n)?;
    }
    let table_at = (table_start, r.at, count);
    let file_count = r.varint()? as usize;
    // Where each file's fields are, read before the body is shared.
    let mut files = Vec::with_capacity(file_count.min(body.len()));
    let mut path = String::new();
    let mut mtime = 0u64;
    for _ in 0..file_count {
        let shared = r.varint()? as usize;
        let rest = r.varint()? as usize;
        if shared > path.len() || !path.is_char_boundary(shared) {
            return None;
        }
        path.truncate(shared);
        path.push_str(std::str::from_utf8(r.take(rest)?).ok()?);
        // The cache is a file anyone can write: a path that cannot be a project
        // file makes the whole cache untrusted (it is rebuilt).
        if !crate::fs::is_plain_relative(&path) {
            return None;
        }
        let size = r.varint()?;
        mtime = mtime.wrapping_add(unzigzag(r.varint()?) as u64);
        let (mtime_ns, hash) = (mtime, r.u64()?);
        let n = r.varint()? as usize;
        let start = r.at;
        r.take(n)?;
        files.push((
            Arc::<str>::from(path.as_str()),
            size,
            mtime_ns,
            hash,
            u32::try_from(start).ok()?,
            u32::try_from(r.at).ok()?,
        ));
    }
    let n = r.varint()? as usize;
    let findings = match r.take(n)? {
        [] => None,
        json => Some(serde_json::from_slice::<Vec<Finding>>(json).ok()?),
    };
    let walked = r.u64()?;
    if !r.done() {
        return None;
    }
    let mut bytes = bytes;
    bytes.truncate(body_len);
    let shared = ScanBody::new(bytes, table_at, files.len(), (root, registry, rules));
    let files = files
        .into_iter()
        .map(|(path, size, mtime_ns, hash, start, end)| {
            let scan = ScanCell::encoded(EncodedScan::new(&shared, start, end));
            FileEntry::with_cell(path, size, mtime_ns, hash, scan)
        })
        .collect();
    Some(Loaded {
        index: Index::from_parts(
            root.to_owned(),
            Arc::clone(registry),
            Arc::clone(rules),
            files,
            checked_at,
        ),
        stored: StoredCheck { findings, walked },
    })
}

/// Loads the cache of the project at `root`, if there is a valid one.
pub fn load(root: &Path, registry: &Arc<Registry>, rules: &Arc<DeclaredRules>) -> Option<Loaded> {
    // Only a regular file, bounded: a FIFO or a link to /dev/zero put there must not
    // hang the open or eat memory.
    crate::fs::existing_kiln_dir(root)?;
    let bytes = kiln_core::fs::read_below(root, Path::new(CACHE_FILE), 4 << 30).ok()?;
    decode(bytes, root, registry, rules)
}

/// Saves `index` as its project's cache (atomically), with a `.gitignore` that keeps
/// `.kiln/` out of version control; `findings` are those of a check of exactly this
/// index, if there are any.
pub fn save(index: &Index, findings: Option<&[Finding]>) -> Result<(), CheckerError> {
    write(index.root(), &encode(index, findings))
}

/// The folder the cache of the project at `root` goes in, `.kiln/` (a real folder
/// inside the project, never a link to somewhere else, with its `.gitignore`), and
/// the cache's path. What processes killed while writing the cache left there is
/// swept first: a check writes its cache while it works out the findings, so a
/// `kill -9` during a check leaves a temporary file.
pub(crate) fn cache_folder(root: &Path) -> Result<(Folder, PathBuf), CheckerError> {
    let dir = crate::fs::kiln_dir(root)?;
    let folder =
        kiln_core::fs::open_folder_below(root, Path::new(kiln_core::own_folder::DIR), false)
            .map_err(io_err(&dir))?;
    if crate::fs::stat_below(root, kiln_core::own_folder::GITIGNORE).is_err() {
        kiln_core::fs::write_below(
            root,
            Path::new(kiln_core::own_folder::GITIGNORE),
            b"# Kiln's caches and journals: local to this machine.\n*\n",
        )
        .map_err(io_err(dir.join(".gitignore")))?;
    }
    kiln_core::fs::sweep_leftovers(&folder);
    Ok((folder, root.join(CACHE_FILE)))
}

/// Writes `bytes` (from [`encode`]) as the cache of the project at `root`.
pub(crate) fn write(root: &Path, bytes: &[u8]) -> Result<(), CheckerError> {
    let (folder, path) = cache_folder(root)?;
    // A torn cache fails its checksum and is rebuilt; a stale one is checked file by
    // file against the disk. Nothing is lost, so the disk is not waited for.
    kiln_core::fs::replace_at(
        &folder,
        std::ffi::OsStr::new(CACHE_NAME),
        bytes,
        Durability::Unflushed,
    )
    .map(|_| ())
    .map_err(io_err(&path))
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

    fn load_bytes(
        bytes: Vec<u8>,
        project: &Project,
        registry: &Arc<Registry>,
        index: &Index,
    ) -> Index {
        decode(bytes, project.root(), registry, index.rules())
            .unwrap()
            .index
    }

    /// Every entry and every reference of both, decoded.
    fn assert_same(a: &Index, b: &Index) {
        assert_eq!(a.files().collect::<Vec<_>>(), b.files().collect::<Vec<_>>());
        for (x, y) in a.files().zip(b.files()) {
            assert_eq!(x.scan(), y.scan(), "{}", x.path);
        }
    }

    #[test]
    fn round_trips_and_warm_start_reads_nothing() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let decoded = load_bytes(encode(&index, None), &project, &registry, &index);
        assert!(
            decoded
                .files()
                .all(|f| f.scan_cell().still_encoded().is_some())
        );
        assert_same(&decoded, &index);
        // Pretend the cache was written long after the files (no racy entries).
        let mut bytes = encode(&index, None);
        let at = 4 + 4 + 8;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        reseal(&mut bytes);
        let cached = load_bytes(bytes, &project, &registry, &index);
        let warm =
            Index::build_from(&project, registry, Some(&cached), &BuildOptions::default()).unwrap();
        assert_eq!(warm.stats().read, 0);
        assert_same(&warm, &index);
    }

    #[test]
    fn writing_again_copies_encoded_entries_and_encodes_changed_ones() {
        let (dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let loaded = load_bytes(encode(&index, None), &project, &registry, &index);
        // Unchanged entries are copied as they are, with their strings' numbers.
        let again = encode(&loaded, None);
        assert!(
            loaded
                .files()
                .all(|f| f.scan_cell().still_encoded().is_some())
        );
        assert_same(&load_bytes(again, &project, &registry, &index), &index);
        // One file changed: it is encoded anew beside the copies, its new strings
        // added to the table.
        let mut changed = loaded.clone();
        fs::write(
            dir.path().join("levels/a.level"),
            r#"{"entities": [{"id": "y", "components": {"mesh": {"mesh": "meshes/other"}}}]}"#,
        )
        .unwrap();
        changed.update(&["levels/a.level".to_owned()]);
        let fresh = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        assert_same(&changed, &fresh);
        let round = load_bytes(encode(&changed, None), &project, &registry, &index);
        assert_same(&round, &fresh);
        assert_eq!(
            round
                .file("levels/a.level")
                .unwrap()
                .scan()
                .get(0)
                .unwrap()
                .text,
            "meshes/other"
        );
    }

    /// A warm walk keeps the files it reads again in the cache's encoding (its own
    /// table), and the cache written after takes their records and the loaded
    /// cache's from both tables without decoding either: whether most files are
    /// still in the loaded cache (its table is the new one's start) or most were
    /// read again (then the walk's is).
    #[test]
    fn a_warm_walk_keeps_what_it_reads_encoded_and_the_cache_takes_both_tables() {
        for changed in [1, 5] {
            let (dir, project, registry) = project();
            let level = |i: usize, mesh: &str| {
                format!(
                    r#"{{"entities": [{{"id": "e{i}", "components": {{"mesh": {{"mesh": "{mesh}"}}}}}}]}}"#
                )
            };
            for i in 0..6 {
                fs::write(
                    dir.path().join(format!("levels/l{i}.level")),
                    level(i, "meshes/m"),
                )
                .unwrap();
            }
            let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
            // Written long after the files: none is read again for being too new.
            let mut bytes = encode(&index, None);
            let at = 4 + 4 + 8;
            bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
            reseal(&mut bytes);
            let loaded = load_bytes(bytes, &project, &registry, &index);
            for i in 0..changed {
                let mesh = format!("meshes/other{i}/with/a/longer/path");
                fs::write(
                    dir.path().join(format!("levels/l{i}.level")),
                    level(i, &mesh),
                )
                .unwrap();
            }
            let options = BuildOptions {
                keep_encoded: true,
                ..BuildOptions::default()
            };
            let warm =
                Index::build_from(&project, registry.clone(), Some(&loaded), &options).unwrap();
            assert_eq!(warm.stats().parsed, changed);
            let all_encoded = |index: &Index| {
                index
                    .files()
                    .all(|f| f.scan_cell().still_encoded().is_some())
            };
            assert!(
                all_encoded(&warm),
                "{changed} changed: a scan read again is held decoded"
            );
            let written = encode(&warm, None);
            assert!(
                all_encoded(&warm),
                "{changed} changed: writing the cache decoded a scan"
            );
            let fresh = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
            assert_same(&warm, &fresh);
            assert_same(&load_bytes(written, &project, &registry, &index), &fresh);
        }
    }

    #[test]
    fn a_record_that_does_not_decode_reads_the_file_instead() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        break_the_level_record(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        assert_same(&crafted, &index);
    }

    /// Makes a crafted cache's checksum right again, as a hand-made cache would.
    fn reseal(bytes: &mut [u8]) {
        let body = bytes.len() - 8;
        let sum = keyed_checksum(&bytes[..body]).to_le_bytes();
        bytes[body..].copy_from_slice(&sum);
    }

    /// Makes the level's one reference name a string past the end of the table; the
    /// checksum is made right, as a hand-made cache would.
    fn break_the_level_record(bytes: &mut [u8]) {
        let scan_at = level_record_at(bytes);
        bytes[scan_at + 2] = 0x7f;
        reseal(bytes);
    }

    /// Where the level's record starts in the cache `bytes`.
    fn level_record_at(bytes: &[u8]) -> usize {
        record_at(bytes, b"levels/a.level")
    }

    /// Where the record of the file stored with `stored` (the part of its path not
    /// shared with the path before) starts in the cache `bytes`; the record holds
    /// one reference.
    fn record_at(bytes: &[u8], stored: &[u8]) -> usize {
        let level = bytes
            .windows(stored.len())
            .position(|w| w == stored)
            .unwrap();
        // After the path: size, time, hash, then the scan's length and bytes (0 for
        // no error, 1 reference, then its text's number).
        let mut r = Reader {
            bytes,
            at: level + stored.len(),
        };
        r.varint().unwrap();
        r.varint().unwrap();
        r.u64().unwrap();
        r.varint().unwrap();
        let scan_at = r.at;
        assert_eq!(&bytes[scan_at..scan_at + 2], &[0, 1]);
        scan_at
    }

    #[test]
    fn a_check_resolves_a_record_that_stops_reading_halfway_as_its_file() {
        use crate::resolve::{Graph, ResolvedReferences, Target};
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        // It says it holds two references and holds one: read in place, the first
        // is resolved before the record fails, and the file is read instead.
        let scan_at = level_record_at(&bytes);
        bytes[scan_at + 1] = 2;
        reseal(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        let targets = |refs: &dyn ResolvedReferences, index: &Index| {
            let mut out: Vec<(String, usize, Target)> = Vec::new();
            refs.each_reference(index, &mut |f, i, t| {
                out.push((f.path.to_string(), i, t.clone()))
            });
            out
        };
        let resolution = crate::resolve::Resolution::build(&crafted);
        let expected = targets(&Graph::build(&index), &index);
        assert!(expected.iter().any(|(file, ..)| file == "levels/a.level"));
        assert_eq!(targets(&resolution, &crafted), expected);
    }

    /// A record that stops reading halfway gives back what it resolved, and the
    /// spellings it remembered with it: a later file of the same thread with the
    /// same spelling resolves it afresh, not to a target the file read instead put
    /// in its place.
    #[test]
    fn a_record_that_stops_halfway_leaves_no_resolved_spelling_behind() {
        use crate::resolve::{ResolvedReferences, Target};
        let dir = tempfile::tempdir().unwrap();
        let level = |texts: &[&str]| {
            let entities: Vec<String> = (texts.iter().enumerate())
                .map(|(i, t)| {
                    format!(r#"{{"id": "e{i}", "components": {{"mesh": {{"mesh": "{t}"}}}}}}"#)
                })
                .collect();
            format!(r#"{{"entities": [{}]}}"#, entities.join(", "))
        };
        // The big level first, alone in its thread's run: the two small ones after
        // it share one whatever the number of cores.
        let files = [
            ("kiln.project", "{}".to_owned()),
            ("levels/0big.level", level(&["meshes/m"; 100])),
            ("levels/a.level", level(&["meshes/gone"])),
            ("levels/b.level", level(&["meshes/gone"])),
            ("meshes/m.mesh", "{}".to_owned()),
        ];
        for (p, c) in &files {
            let full = dir.path().join(p);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, c).unwrap();
        }
        let project = Project::open(dir.path()).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        // a's record says it holds two references and holds one; the file, read
        // instead, names another mesh now.
        // Stored after "levels/0big.level", it shares "levels/" with it.
        let scan_at = record_at(&bytes, b"a.level");
        bytes[scan_at + 1] = 2;
        reseal(&mut bytes);
        fs::write(
            dir.path().join("levels/a.level"),
            level(&["meshes/elsewhere"]),
        )
        .unwrap();
        let crafted = load_bytes(bytes, &project, &registry, &index);
        let resolution = crate::resolve::Resolution::build(&crafted);
        let mut targets = Vec::new();
        resolution.each_reference(&crafted, &mut |f, _, t| {
            if f.path.starts_with("levels/a") || f.path.starts_with("levels/b") {
                targets.push((f.path.to_string(), t.clone()));
            }
        });
        assert_eq!(
            targets,
            vec![
                (
                    "levels/a.level".into(),
                    Target::Missing("meshes/elsewhere.mesh".into())
                ),
                (
                    "levels/b.level".into(),
                    Target::Missing("meshes/gone.mesh".into())
                ),
            ]
        );
    }

    /// A crafted cache whose record of a file changed since does not read: the
    /// check cannot tell what that file named before, so it takes nothing of the
    /// stored findings about what the boot levels reach (reading the file instead
    /// would make the file look as it was); it works out everything again.
    #[test]
    fn a_changed_file_whose_record_does_not_read_is_checked_from_scratch() {
        let (dir, _, registry) = project();
        let root = dir.path();
        fs::write(
            root.join("kiln.project"),
            r#"{"boot_levels": ["levels/a"]}"#,
        )
        .unwrap();
        fs::write(root.join("meshes/n.mesh"), "{}").unwrap();
        let set_back = |rel: &str, secs: u64| {
            let file = fs::File::options()
                .write(true)
                .open(root.join(rel))
                .unwrap();
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
            file.set_modified(then).unwrap();
        };
        for rel in [
            "kiln.project",
            "levels/a.level",
            "meshes/m.mesh",
            "meshes/n.mesh",
            "materials/bad.material",
        ] {
            set_back(rel, 60);
        }
        let options = crate::index::BuildOptions::default();
        let check = || {
            crate::Checker::open(root, registry.clone(), &options)
                .unwrap()
                .findings()
        };
        let unused = |rel: &str| Finding::Unused { file: rel.into() };
        assert!(check().contains(&unused("meshes/n.mesh")));
        let mut bytes = fs::read(root.join(CACHE_FILE)).unwrap();
        break_the_level_record(&mut bytes);
        fs::write(root.join(CACHE_FILE), bytes).unwrap();
        // The level names the other mesh now.
        fs::write(
            root.join("levels/a.level"),
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/n"}}}]}"#,
        )
        .unwrap();
        set_back("levels/a.level", 30);
        let findings = check();
        assert!(findings.contains(&unused("meshes/m.mesh")), "{findings:?}");
        assert!(!findings.contains(&unused("meshes/n.mesh")), "{findings:?}");
    }

    #[test]
    fn a_string_table_that_does_not_decode_reads_the_files_and_is_not_copied() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        // Magic, version, fingerprint and time, then the table's count (one byte
        // here) and its first string, which claims to share 5 bytes with none.
        let first = 4 + 4 + 8 + 8 + 1;
        assert_eq!(bytes[first], 0);
        bytes[first] = 5;
        reseal(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        assert!(
            crafted
                .files()
                .all(|f| f.scan_cell().still_encoded().is_some())
        );
        // Encoded again before anything was decoded: nothing may be copied from
        // the broken table. Its records, read back after the level changed on disk,
        // still say what the level said (a record that does not decode would read
        // the level again instead).
        let again = encode(&crafted, None);
        assert_same(&crafted, &index);
        fs::write(
            project.root().join("levels/a.level"),
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/other"}}}]}"#,
        )
        .unwrap();
        let again = load_bytes(again, &project, &registry, &index);
        assert_same(&again, &index);
    }

    #[test]
    fn a_record_read_from_its_file_is_not_read_through_a_link() {
        let (dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        break_the_level_record(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        // Since the walk, `levels` became a link to a folder outside with a level
        // of the same name.
        let outside = tempfile::tempdir().unwrap();
        fs::write(
            outside.path().join("a.level"),
            r#"{"entities": [{"id": "y", "components": {"mesh": {"mesh": "meshes/secret"}}}]}"#,
        )
        .unwrap();
        fs::rename(dir.path().join("levels"), dir.path().join("old")).unwrap();
        kiln_core::os::symlink(outside.path(), dir.path().join("levels")).unwrap();
        let scan = crafted.file("levels/a.level").unwrap().scan();
        assert!(scan.iter().all(|r| r.text != "meshes/secret"));
        assert!(scan.error.is_some(), "{scan:?}");
    }

    #[test]
    fn corrupt_truncated_or_foreign_caches_are_rejected() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let bytes = encode(&index, None);
        for len in 0..bytes.len() {
            assert!(
                decode(
                    bytes[..len].to_vec(),
                    project.root(),
                    &registry,
                    index.rules()
                )
                .is_none(),
                "truncated to {len}"
            );
        }
        for pos in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[pos] ^= 0x40;
            assert!(
                decode(b, project.root(), &registry, index.rules()).is_none(),
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
            decode(
                bytes.clone(),
                project.root(),
                &Arc::new(other),
                index.rules()
            )
            .is_none(),
            "schemas changed"
        );
        let rules =
            DeclaredRules::new(&serde_json::from_str(r#"{"json": {"mesh": "mesh"}}"#).unwrap());
        assert!(
            decode(bytes, project.root(), &registry, &Arc::new(rules)).is_none(),
            "the project's declared rules changed"
        );
    }

    #[test]
    fn files_changed_behind_the_cache_are_re_read() {
        let (dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        save(&index, None).unwrap();
        fs::write(dir.path().join("meshes/m.mesh"), r#"{"shape": "sphere"}"#).unwrap();
        fs::write(dir.path().join("meshes/n.mesh"), "{}").unwrap();
        fs::remove_file(dir.path().join("materials/bad.material")).unwrap();
        let cached = load(dir.path(), &registry, index.rules()).unwrap().index;
        let warm =
            Index::build_from(&project, registry, Some(&cached), &BuildOptions::default()).unwrap();
        assert!(warm.file("meshes/n.mesh").is_some());
        assert!(warm.file("materials/bad.material").is_none());
        assert_eq!(warm.file("meshes/m.mesh").unwrap().size, 19);
    }

    mod random {
        use super::*;
        use crate::scan::{FileScan, Naming, RawReference, ScanError};
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            prop::sample::select(vec![
                "",
                "a",
                "mesh",
                "meshes/m",
                "ö/é",
                "/entities/0/",
                "日本",
            ])
            .prop_map(str::to_owned)
        }

        fn reference() -> impl Strategy<Value = RawReference> {
            (
                (text(), text()),
                (0u32..5000, 0u32..300),
                (0u32..u32::MAX, 0u32..500),
                (text(), text()),
                (
                    prop::option::of(text()),
                    prop::option::of(text()),
                    prop::option::of(text()),
                    any::<bool>(),
                ),
            )
                .prop_map(
                    |(
                        (t1, t2),
                        (start, len),
                        (line, column),
                        (p1, p2),
                        (ty, entity, component, uri),
                    )| {
                        RawReference {
                            text: t1 + &t2,
                            span: (start, start + len),
                            line,
                            column,
                            pointer: p1 + &p2,
                            expected_type: ty,
                            naming: if uri {
                                Naming::RelativeUri
                            } else {
                                Naming::ProjectPath
                            },
                            entity,
                            component,
                        }
                    },
                )
        }

        fn scan() -> impl Strategy<Value = FileScan> {
            (
                prop::collection::vec(reference(), 0..12),
                prop::option::of((any::<u32>(), any::<u32>(), text())),
            )
                .prop_map(|(refs, error)| {
                    let error = error.map(|(line, column, message)| ScanError {
                        line,
                        column,
                        message,
                    });
                    FileScan::from_references(&refs, error)
                })
        }

        fn index_of(root: &Path, scans: &[FileScan], stamp: u64) -> Index {
            let files = scans
                .iter()
                .enumerate()
                .map(|(i, scan)| {
                    FileEntry::new(
                        format!("d/ö{i}.json").into(),
                        i as u64,
                        stamp.wrapping_mul(i as u64 + 1),
                        stamp ^ i as u64,
                        Arc::new(scan.clone()),
                    )
                })
                .collect();
            let registry = Arc::new(Registry::with_builtins());
            let rules = Arc::new(DeclaredRules::default());
            Index::from_parts(root.to_owned(), registry, rules, files, stamp)
        }

        proptest! {
            /// Any scans read back as they were written, whether the cache encodes
            /// them anew or copies them from the cache they were loaded from, with
            /// some files replaced by new ones in between.
            #[test]
            fn scans_round_trip_encoded_anew_or_copied(
                scans in prop::collection::vec(scan(), 0..8),
                replaced in prop::collection::vec(scan(), 0..8),
                stamp in any::<u64>(),
            ) {
                let root = Path::new("/nonexistent-kiln-root");
                let index = index_of(root, &scans, stamp);
                let read = |index: &Index| {
                    decode(encode(index, None), root, index.registry(), index.rules())
                        .expect("reads back")
                        .index
                };
                let loaded = read(&index);
                prop_assert_eq!(loaded.files().collect::<Vec<_>>(), index.files().collect::<Vec<_>>());
                for (a, b) in loaded.files().zip(index.files()) {
                    prop_assert_eq!(a.scan(), b.scan());
                }
                let with_entries = |entries: Vec<FileEntry>| {
                    Index::from_parts(
                        root.to_owned(),
                        index.registry().clone(),
                        index.rules().clone(),
                        entries,
                        stamp,
                    )
                };
                // Reload (nothing decoded), replace some files, write again.
                let reloaded = read(&index);
                let mut expected = scans.clone();
                let entries: Vec<FileEntry> = reloaded
                    .files()
                    .enumerate()
                    .map(|(i, old)| match replaced.get(i).filter(|_| i % 2 == 0) {
                        Some(scan) => {
                            expected[i] = scan.clone();
                            FileEntry::new(old.path.clone(), 1, 2, 3, Arc::new(scan.clone()))
                        }
                        None => old.clone(),
                    })
                    .collect();
                let mixed = with_entries(entries);
                let again = read(&mixed);
                for (i, f) in again.files().enumerate() {
                    prop_assert_eq!(f.scan(), &expected[i], "file {}", i);
                }
                // The same, the new files still encoded in a second cache (as a
                // warm walk keeps what it reads): written from both tables, either
                // one first or neither, without decoding an entry.
                let other = read(&index_of(root, &replaced, stamp));
                let reloaded = read(&index);
                let entries: Vec<FileEntry> = reloaded
                    .files()
                    .enumerate()
                    .map(|(i, old)| match other.file(&old.path).filter(|_| i % 2 == 0) {
                        Some(new) => new.clone(),
                        None => old.clone(),
                    })
                    .collect();
                let two_tables = with_entries(entries);
                let again = read(&two_tables);
                prop_assert!(two_tables.files().all(|f| !f.scan_is_decoded()));
                for (i, f) in again.files().enumerate() {
                    prop_assert_eq!(f.scan(), &expected[i], "file {}", i);
                }
            }
        }
    }

    /// A walk while the cache loads (see `Index::build_while_loading`).
    mod while_loading {
        use super::*;
        use std::sync::{Mutex, OnceLock};
        use std::time::{Duration, SystemTime};

        use crate::test_files::{level, write};

        fn assert_same(a: &Index, b: &Index) {
            super::assert_same(a, b);
            assert_eq!(a.walk_issues(), b.walk_issues());
        }

        /// The walk compares files with the cache whenever the cache arrives: before the
        /// first file, after some (those are stat-ed, kept, and compared later), after
        /// the last, or never (no usable cache). Each gives the index that a cache
        /// given from the start gives, reading the same files.
        #[test]
        fn a_walk_that_outruns_the_cache_load_gives_the_index_a_given_cache_gives() {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            write(root, "kiln.project", "{}");
            for folder in 0..6 {
                for file in 0..8 {
                    let mesh = format!("meshes/m{file}");
                    write(
                        root,
                        &format!("levels/f{folder}/l{file}.level"),
                        &level(&mesh),
                    );
                }
            }
            for file in 0..8 {
                write(root, &format!("meshes/m{file}.mesh"), "{}");
            }
            // Old enough that an unchanged size and time mean an unchanged file.
            let old = SystemTime::now() - Duration::from_secs(60);
            let age = |rel: &str| {
                let f = fs::File::options()
                    .write(true)
                    .open(root.join(rel))
                    .unwrap();
                f.set_modified(old).unwrap();
            };
            let all: Vec<String> = (0..6)
                .flat_map(|d| (0..8).map(move |f| format!("levels/f{d}/l{f}.level")))
                .chain((0..8).map(|f| format!("meshes/m{f}.mesh")))
                .chain(["kiln.project".to_owned()])
                .collect();
            all.iter().for_each(|rel| age(rel));
            let project = Project::open(root).unwrap();
            let registry = Arc::new(Registry::with_builtins());
            let first = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
            save(&first, None).unwrap();
            // Behind the cache: one level edited, one gone, one new, one rewritten
            // with the same bytes.
            write(root, "levels/f2/l3.level", &level("meshes/m7"));
            fs::remove_file(root.join("levels/f4/l0.level")).unwrap();
            write(root, "levels/f5/new.level", &level("meshes/gone"));
            write(root, "levels/f1/l1.level", &level("meshes/m1"));
            let rules = Arc::new(DeclaredRules::new(&project.config().references));
            let load = || load(root, &registry, &rules).map(|l| l.index);
            let given = load().unwrap();
            let options = |progress: Option<Arc<dyn Fn(u64) + Send + Sync>>| BuildOptions {
                progress,
                threads: 2,
                ..BuildOptions::default()
            };
            let expected =
                Index::build_from(&project, registry.clone(), Some(&given), &options(None))
                    .unwrap();
            assert_eq!(expected.stats().read, 3);
            let files = expected.len() as u64;
            // Builds while the cache "loads" until `arrives_after` files were walked.
            let build = |arrives_after: u64, cache: Option<Index>| {
                let loading = Arc::new(OnceLock::new());
                let cache = Mutex::new(Some(cache));
                let arrive = {
                    let loading = loading.clone();
                    move || {
                        if let Some(cache) = cache.lock().unwrap().take() {
                            let _ = loading.set(cache);
                        }
                    }
                };
                if arrives_after == 0 {
                    arrive();
                }
                let progress: Arc<dyn Fn(u64) + Send + Sync> = Arc::new(move |n| {
                    if n == arrives_after {
                        arrive();
                    }
                });
                let options = options(Some(progress));
                Index::build_while_loading(&project, registry.clone(), &loading, &options).unwrap()
            };
            for arrives_after in [0, 1, 9, 30, files] {
                let index = build(arrives_after, load());
                assert_same(&index, &expected);
                assert_eq!(
                    index.stats(),
                    expected.stats(),
                    "cache after {arrives_after}"
                );
            }
            // No usable cache: everything is read, as in a build without one.
            let index = build(5, None);
            let scratch = Index::build(&project, registry.clone(), &options(None)).unwrap();
            assert_same(&index, &scratch);
            assert_eq!(index.stats().read, files as usize);
        }
    }
}
