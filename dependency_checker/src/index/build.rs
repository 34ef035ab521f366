//! Building the index: the parallel walk reads and scans every file, reusing the
//! entries of a previous index (or of the one a loading cache holds) whose size and
//! time, or content hash, show them unchanged.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kiln_core::{Project, Registry};

use super::codec::{self, ScanCell, WalkEncoder};
use super::entry::FileEntry;
use super::files::{BuildStats, Index, WalkIssue};
use super::levels::KeptLayouts;
use super::scratch::ReadScratch;
use crate::error::CheckerError;
use crate::fs::{FileStat, split_extension};
use crate::scan::{DeclaredRules, scan_file_in, scan_file_with};

/// The index whose entries a build reuses.
#[derive(Clone, Copy)]
enum Previous<'a> {
    /// There, or none at all.
    Given(Option<&'a Index>),
    /// Being loaded from the cache by another thread (`None` in it: no usable cache).
    Loading(&'a OnceLock<Option<Index>>),
}

/// Whether the symbolic link at `rel` leads outside the project at `root`, or to
/// nothing (it is reported, and never followed either way).
pub(super) fn leads_outside(root: &Path, rel: &str) -> bool {
    fs::canonicalize(root.join(rel)).map_or(true, |real| !real.starts_with(root))
}

/// Sorts walk issues as a walk lists them.
pub(super) fn sort_issues(issues: &mut [WalkIssue]) {
    issues.sort_by_cached_key(|issue| format!("{issue:?}"));
}

pub(super) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Files modified this close to the previous check are re-hashed even if size and
/// time match, since a second write within the clock's granularity would not show.
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Where `index_file` reads a file from.
pub(super) enum Source<'a> {
    /// Found by the walk: stat and open relative to its folder.
    Walk(&'a crate::fs::walk::Found<'a>),
    /// Stat-ed already (by the walk, or by an update without following a link),
    /// read later (if at all) below the root, never through a link, by a cursor
    /// that keeps its folder open for the next path: the cursor, the project root,
    /// the path and that stat.
    Stated(&'a crate::fs::FolderCursor, &'a Path, &'a str, FileStat),
}

impl Source<'_> {
    fn stat(&self) -> std::io::Result<FileStat> {
        match self {
            Source::Walk(f) => f.stat(),
            Source::Stated(_, _, _, stat) => Ok(*stat),
        }
    }
    fn open(&self) -> std::io::Result<(fs::File, FileStat)> {
        match self {
            Source::Walk(f) => f.open(),
            Source::Stated(folders, root, rel, _) => folders.open_file(root, rel),
        }
    }
}

/// Reads and scans one file, reusing `previous` where size and time, or the content
/// hash, show it is unchanged. A file without a previous entry is opened at once,
/// its time taken from the open file (one lookup, not a stat and then an open).
pub(super) fn index_file(
    (registry, rules): (&Registry, &DeclaredRules),
    rel: &str,
    source: Source,
    previous: Option<&FileEntry>,
    previous_check_ns: u64,
    stats: &Counters,
    (scratch, levels): (&mut ReadScratch, Option<&mut KeptLayouts>),
) -> Result<FileEntry, CheckerError> {
    let err = |e: std::io::Error| CheckerError::Io {
        path: rel.into(),
        source: e,
    };
    if let Some(prev) = previous {
        let st = source.stat().map_err(err)?;
        // Saturating: a file dated centuries ahead has its time saturated.
        let racy = st.mtime_ns.saturating_add(RACY_WINDOW.as_nanos() as u64) >= previous_check_ns;
        if prev.size == st.size && prev.mtime_ns == st.mtime_ns && !racy {
            return Ok(prev.clone());
        }
    }
    let (mut file, st) = source.open().map_err(err)?;
    let ReadScratch {
        bytes,
        scan,
        encoder,
    } = scratch;
    bytes.clear();
    std::io::Read::read_to_end(&mut file, bytes).map_err(err)?;
    let bytes = &bytes[..];
    stats.read.fetch_add(1, Ordering::Relaxed);
    if st.mtime_ns.saturating_add(RACY_WINDOW.as_nanos() as u64) >= stats.started_ns {
        stats.read_recent.fetch_add(1, Ordering::Relaxed);
    }
    let hash = xxhash_rust::xxh3::xxh3_64(bytes);
    let path: Arc<str> = rel.into();
    let scan = match previous {
        Some(prev) if prev.hash == hash => prev.scan.clone(),
        _ => {
            stats.parsed.fetch_add(1, Ordering::Relaxed);
            let ext = split_extension(rel).map_or("", |(_, e)| e);
            match (encoder, levels) {
                // Kept encoded, straight from the scratch's scan (no copy is kept):
                // the entry holds no scan until the walk is sealed
                // (`Index::build_with`), then its record.
                (Some(encoder), _) => {
                    encoder.encode(&path, scan_file_in(scan, (registry, rules), ext, bytes));
                    ScanCell::unsealed()
                }
                (None, Some(levels)) if KeptLayouts::takes(registry, ext, bytes.len()) => {
                    ScanCell::new(Arc::new(levels.scan(
                        scan,
                        (registry, rules),
                        (&path, ext),
                        (bytes, hash),
                        previous,
                    )))
                }
                (None, _) => ScanCell::new(Arc::new(scan_file_with(
                    scan,
                    (registry, rules),
                    ext,
                    bytes,
                ))),
            }
        }
    };
    Ok(FileEntry::with_cell(
        path,
        bytes.len() as u64,
        st.mtime_ns,
        hash,
        scan,
    ))
}

#[derive(Default)]
pub(super) struct Counters {
    read: AtomicU64,
    parsed: AtomicU64,
    files: AtomicU64,
    read_recent: AtomicU64,
    /// When the walk or update began.
    started_ns: u64,
}

impl Counters {
    pub(super) fn since(started_ns: u64) -> Self {
        Counters {
            started_ns,
            ..Counters::default()
        }
    }
}

/// Options for building an index.
#[derive(Default, Clone)]
pub struct BuildOptions {
    /// Called with the number of files indexed so far, from the walker threads.
    pub progress: Option<Arc<dyn Fn(u64) + Send + Sync>>,
    /// Worker threads; 0 picks the number of cores.
    pub threads: usize,
    /// Called once when the project lock is held by another operation (a move in
    /// another process) for a moment, before waiting for it.
    pub waiting: Option<Arc<dyn Fn() + Send + Sync>>,
    /// Keep the references of each file read in the cache's encoding, encoded as
    /// the file is scanned, rather than as scans (see `WalkEncoder` in
    /// `index/codec.rs`); they are decoded when asked for. What a
    /// command wants: it reads each reference once, if at all, and writes the
    /// cache. Entries reused from a previous index stay as they were.
    pub keep_encoded: bool,
}

impl std::fmt::Debug for BuildOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildOptions")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Index {
    /// Builds the index of `project` from scratch.
    pub fn build(
        project: &Project,
        registry: Arc<Registry>,
        options: &BuildOptions,
    ) -> Result<Self, CheckerError> {
        Self::build_from(project, registry, None, options)
    }

    /// Builds the index, reusing the entries of `previous` (e.g. loaded from the cache)
    /// for files that did not change.
    pub fn build_from(
        project: &Project,
        registry: Arc<Registry>,
        previous: Option<&Index>,
        options: &BuildOptions,
    ) -> Result<Self, CheckerError> {
        Self::build_with(project, registry, Previous::Given(previous), options)
    }

    /// Builds the index while another thread loads the cache into `loading`: the walk
    /// stats files meanwhile and compares them once the cache is there, so that a
    /// warm start pays for the cache's load and the walk at once, not one after the
    /// other (about a sixth of `kiln check` with nothing changed, at 100,000 files).
    pub(crate) fn build_while_loading(
        project: &Project,
        registry: Arc<Registry>,
        loading: &OnceLock<Option<Index>>,
        options: &BuildOptions,
    ) -> Result<Self, CheckerError> {
        Self::build_with(project, registry, Previous::Loading(loading), options)
    }

    fn build_with(
        project: &Project,
        registry: Arc<Registry>,
        previous: Previous,
        options: &BuildOptions,
    ) -> Result<Self, CheckerError> {
        let root = project.root().to_owned();
        let started = now_ns();
        let rules = Arc::new(DeclaredRules::new(&project.config().references));
        let fingerprint = crate::scan::fingerprint(&registry, &rules);
        // The previous index once known: `None` while the cache is still loading
        // (unless `wait`), then the index, if any and if its entries were scanned
        // under these rules and schemas (others classify references differently:
        // reuse nothing of them).
        let known: OnceLock<Option<&Index>> = OnceLock::new();
        let previous_index = |wait: bool| -> Option<Option<&Index>> {
            if let Some(known) = known.get() {
                return Some(*known);
            }
            let index = match previous {
                Previous::Given(index) => index,
                Previous::Loading(cell) => {
                    let loaded = if wait { Some(cell.wait()) } else { cell.get() }?;
                    loaded.as_ref()
                }
            };
            Some(*known.get_or_init(|| {
                index.filter(|p| crate::scan::fingerprint(&p.registry, &p.rules) == fingerprint)
            }))
        };
        let found: Mutex<Vec<FileEntry>> = Mutex::new(Vec::new());
        let encoders: Mutex<Vec<WalkEncoder>> = Mutex::new(Vec::new());
        let issues: Mutex<Vec<WalkIssue>> = Mutex::new(Vec::new());
        let links: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let counters = Counters::since(started);
        let push_issue = |issue: WalkIssue| {
            if let Ok(mut i) = issues.lock() {
                i.push(issue);
            }
        };
        let index_one =
            |previous: Option<&Index>,
             rel: &str,
             source: Source,
             (entries, buf): (&mut Vec<FileEntry>, &mut ReadScratch)| {
                match index_file(
                    (&registry, &rules),
                    rel,
                    source,
                    previous.and_then(|p| p.files.get(rel)),
                    previous.map_or(0, |p| p.checked_at_ns),
                    &counters,
                    (buf, None),
                ) {
                    Ok(e) => entries.push(e),
                    Err(e) => push_issue(WalkIssue::Unreadable(rel.to_owned(), e.to_string())),
                }
            };
        // Files stat-ed before the previous index was there, compared once it is.
        let index_waiting =
            |waiting: &mut Vec<(String, std::io::Result<FileStat>)>,
             state: (&mut Vec<FileEntry>, &mut ReadScratch)| {
                let previous = previous_index(true).flatten();
                let (entries, buf) = state;
                let folders = crate::fs::FolderCursor::default();
                for (rel, stat) in waiting.drain(..) {
                    match stat {
                        Ok(stat) => {
                            let source = Source::Stated(&folders, &root, &rel, stat);
                            index_one(previous, &rel, source, (&mut *entries, &mut *buf));
                        }
                        Err(e) => push_issue(WalkIssue::Unreadable(rel, e.to_string())),
                    }
                }
            };
        crate::parallel::on_threads(options.threads, || {
            crate::fs::walk::walk(
                &root,
                || {
                    let encoder = options.keep_encoded.then(WalkEncoder::default);
                    let scratch = ReadScratch {
                        encoder,
                        ..ReadScratch::default()
                    };
                    (Vec::<FileEntry>::new(), scratch, Vec::new())
                },
                |(entries, buf, waiting), found| {
                    match previous_index(false) {
                        Some(previous) => {
                            if !waiting.is_empty() {
                                index_waiting(waiting, (&mut *entries, &mut *buf));
                            }
                            index_one(previous, &found.rel, Source::Walk(found), (entries, buf));
                        }
                        None => waiting.push((found.rel.clone(), found.stat())),
                    }
                    let n = counters.files.fetch_add(1, Ordering::Relaxed) + 1;
                    if let Some(p) = &options.progress {
                        p(n);
                    }
                },
                |other| match other {
                    crate::fs::walk::Other::Link(rel) => {
                        if leads_outside(&root, &rel) {
                            push_issue(WalkIssue::LinkOutside(rel.clone()));
                        }
                        if let Ok(mut links) = links.lock() {
                            links.push(rel);
                        }
                    }
                    crate::fs::walk::Other::NotUtf8(path) => push_issue(WalkIssue::NotUtf8(path)),
                    crate::fs::walk::Other::Unreadable(rel, message) => {
                        push_issue(WalkIssue::Unreadable(rel, message))
                    }
                },
                |(mut entries, mut buf, mut waiting)| {
                    if !waiting.is_empty() {
                        index_waiting(&mut waiting, (&mut entries, &mut buf));
                    }
                    // In path order, each worker on its own: the index's map is then
                    // built by merging one sorted run per worker.
                    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
                    if let Ok(mut f) = found.lock() {
                        f.append(&mut entries);
                    }
                    if let (Some(encoder), Ok(mut e)) = (buf.encoder.take(), encoders.lock()) {
                        e.push(encoder);
                    }
                },
            )
        });
        let mut files: BTreeMap<Arc<str>, FileEntry> = found
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.path.clone(), e))
            .collect();
        let encoders = encoders.into_inner().unwrap_or_default();
        // Sealed even without an encoder (none could be handed over): then every
        // entry read is given a scan that reads its file, never the empty
        // placeholder. The entries kept from a previous index keep theirs: a warm
        // walk that reads many files again (after a big move) holds those it read
        // in their encoding too, not decoded (65,000 scans: 109 MB).
        if files.values().any(|f| f.scan.is_unsealed()) {
            let (mut sealed, unread) = codec::seal(encoders, &root, &registry, &rules);
            for (path, entry) in files.iter_mut() {
                if entry.scan.is_unsealed() {
                    // One that a thread could not hand over is read again from its
                    // file when asked for.
                    let encoded = sealed.remove(path).unwrap_or_else(|| unread.clone());
                    entry.scan = ScanCell::encoded(encoded);
                }
            }
        }
        let mut issues = issues.into_inner().unwrap_or_default();
        sort_issues(&mut issues);
        let mut links = links.into_inner().unwrap_or_default();
        links.sort();
        let stats = BuildStats {
            files: files.len(),
            read: counters.read.load(Ordering::Relaxed) as usize,
            parsed: counters.parsed.load(Ordering::Relaxed) as usize,
            read_recent: counters.read_recent.load(Ordering::Relaxed) as usize,
        };
        Ok(Index {
            root,
            registry,
            rules,
            files,
            issues,
            links,
            stats,
            checked_at_ns: started,
            levels: Default::default(),
            scratch: Default::default(),
        })
    }
}
