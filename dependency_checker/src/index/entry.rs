//! One file of the index: its path, size, time and content hash, and its scan
//! (made now, or still in the codec's encoding); and the files Kiln itself writes,
//! scanned from the bytes it wrote.

use std::sync::Arc;

use kiln_core::ResourcePath;

use super::codec::{ScanCell, WalkEncoder};
use crate::scan::{FileScan, ScanScratch};

/// One file of the project and what it references.
///
/// Two entries are equal when their path, size, time and content hash are: a scan is
/// a function of the content (under one registry and set of rules, which an index
/// never mixes), so comparing it too would only decode cached scans for nothing.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// Path from the project root with `/` separators, as on disk.
    pub path: Arc<str>,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u64,
    /// xxh3-64 of the content.
    pub hash: u64,
    /// References found in it (shared: an unchanged file's entry is reused as is).
    pub(super) scan: ScanCell,
}

impl PartialEq for FileEntry {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
            && self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.hash == other.hash
    }
}

impl Eq for FileEntry {}

impl FileEntry {
    /// An entry of a file scanned now.
    pub fn new(path: Arc<str>, size: u64, mtime_ns: u64, hash: u64, scan: Arc<FileScan>) -> Self {
        Self::with_cell(path, size, mtime_ns, hash, ScanCell::new(scan))
    }

    pub(crate) fn with_cell(
        path: Arc<str>,
        size: u64,
        mtime_ns: u64,
        hash: u64,
        scan: ScanCell,
    ) -> Self {
        FileEntry {
            path,
            size,
            mtime_ns,
            hash,
            scan,
        }
    }

    /// The references found in it (decoded from the cache on first use).
    pub fn scan(&self) -> &FileScan {
        self.scan.get(&self.path)
    }

    /// Calls `f` with the scan, decoding it from the cache for the call only if
    /// it was not decoded yet: a pass over every file (a check) then holds one
    /// decoded scan at a time, not the whole cache turned into scans.
    pub(crate) fn with_scan<T>(&self, f: impl FnOnce(&FileScan) -> T) -> T {
        self.scan.with(&self.path, f)
    }

    /// About how many references the scan holds, without decoding it.
    pub(crate) fn references_hint(&self) -> usize {
        self.scan.len_hint()
    }

    /// Whether the scan is at hand: made now, or decoded from the cache and kept
    /// (it stays in the cache's bytes until something keeps it).
    pub fn scan_is_decoded(&self) -> bool {
        self.scan.still_encoded().is_none()
    }

    pub(crate) fn scan_cell(&self) -> &ScanCell {
        &self.scan
    }

    /// The file's canonical resource path and type, if its name is canonical.
    pub fn resource(&self) -> Option<(ResourcePath, String)> {
        ResourcePath::split_file(&self.path).ok()
    }
}

/// A file Kiln has just written: see `Index::take_written`.
#[derive(Debug, Clone)]
pub struct Written<'a> {
    /// Project-relative path.
    pub path: &'a str,
    /// How many bytes were written.
    pub size: u64,
    /// The modification time of the file holding exactly these bytes, taken from
    /// the open file before it was renamed into place.
    pub mtime_ns: u64,
    /// The bytes written, hashed and scanned (`Index::scan_for_write`).
    pub scanned: Scanned,
}

/// A file's new content hashed and scanned before it is written
/// (`Index::scan_for_write`), so that `Index::take_written` does no more than
/// a stat.
#[derive(Debug, Clone)]
pub struct Scanned {
    pub(super) hash: u64,
    pub(super) scan: ScanCell,
}

/// What one thread writing files keeps to scan them for the index in the cache's
/// encoding (`Index::encode_for_write`): a folder move that patched 43,000 files
/// held their scans decoded (107 MB at 100,000 files), more than the rest of the
/// move together.
#[derive(Default)]
pub(crate) struct WriteScans {
    pub(super) encoder: WalkEncoder,
    pub(super) scratch: ScanScratch,
}
