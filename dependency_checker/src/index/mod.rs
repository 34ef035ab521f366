//! The reference index: every file of a project with the references it contains,
//! built by a parallel walk and kept current file by file.
//!
//! Each entry is keyed by size, modification time and content hash. Rebuilding with a
//! previous index (or the one its cache holds, `cache.rs`) re-reads only files whose size
//! or time changed, and re-parses only files whose content hash changed.

pub(crate) mod codec;
mod redirects;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kiln_core::{Project, Registry, ResourcePath};

use crate::error::CheckerError;
use crate::fs::FileStat;
use crate::fs::{is_excluded, is_within, split_extension};
use crate::scan::DeclaredRules;
use crate::scan::{FileScan, ScanScratch, scan_file, scan_file_in, scan_file_with};
use codec::WalkEncoder;
pub(crate) use codec::{EncodedScan, Mentions, ScanCell, SpellingKey};
pub use redirects::{REDIRECT_FILE, Redirects};

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
    scan: ScanCell,
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

/// A file Kiln has just written: see [`Index::take_written`].
#[derive(Debug, Clone)]
pub struct Written<'a> {
    /// Project-relative path.
    pub path: &'a str,
    /// How many bytes were written.
    pub size: u64,
    /// The modification time of the file holding exactly these bytes, taken from
    /// the open file before it was renamed into place.
    pub mtime_ns: u64,
    /// The bytes written, hashed and scanned ([`Index::scan_for_write`]).
    pub scanned: Scanned,
}

/// A file's new content hashed and scanned before it is written
/// ([`Index::scan_for_write`]), so that [`Index::take_written`] does no more than
/// a stat.
#[derive(Debug, Clone)]
pub struct Scanned {
    hash: u64,
    scan: ScanCell,
}

/// What one thread writing files keeps to scan them for the index in the cache's
/// encoding ([`Index::encode_for_write`]): a folder move that patched 43,000 files
/// held their scans decoded (107 MB at 100,000 files), more than the rest of the
/// move together.
#[derive(Default)]
pub(crate) struct WriteScans {
    encoder: WalkEncoder,
    scratch: ScanScratch,
}

/// Something the walk found that is not an ordinary file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkIssue {
    /// A symbolic link that leads outside the project; never followed.
    LinkOutside(String),
    /// A file or folder whose name is not UTF-8.
    NotUtf8(PathBuf),
    /// A file that could not be read.
    Unreadable(String, String),
}

/// The index whose entries a build reuses.
#[derive(Clone, Copy)]
enum Previous<'a> {
    /// There, or none at all.
    Given(Option<&'a Index>),
    /// Being loaded from the cache by another thread (`None` in it: no usable cache).
    Loading(&'a OnceLock<Option<Index>>),
}

/// How much work a build did, for progress output and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Files found.
    pub files: usize,
    /// Files whose content was read (size or time changed, or no previous entry).
    pub read: usize,
    /// Files that were parsed (content hash changed, or no previous entry).
    pub parsed: usize,
    /// Of the files read, those modified so shortly before the walk began that a
    /// cache written now would not spare the next walk reading them again (see
    /// `RACY_WINDOW`).
    pub read_recent: usize,
}

/// The index of a project.
#[derive(Debug, Clone)]
pub struct Index {
    root: PathBuf,
    registry: Arc<Registry>,
    /// The project's declared reference rules (from `kiln.project`).
    rules: Arc<DeclaredRules>,
    files: BTreeMap<Arc<str>, FileEntry>,
    issues: Vec<WalkIssue>,
    /// Every symbolic link met (never followed), sorted: whether one leads
    /// outside the project changes when the file it names is created or deleted,
    /// which [`Index::update`] then looks at again.
    links: Vec<String>,
    stats: BuildStats,
    /// When the entries were last checked against the disk (for racy-time detection).
    checked_at_ns: u64,
}

/// Whether the symbolic link at `rel` leads outside the project at `root`, or to
/// nothing (it is reported, and never followed either way).
fn leads_outside(root: &Path, rel: &str) -> bool {
    fs::canonicalize(root.join(rel)).map_or(true, |real| !real.starts_with(root))
}

/// Sorts walk issues as a walk lists them.
fn sort_issues(issues: &mut [WalkIssue]) {
    issues.sort_by_cached_key(|issue| format!("{issue:?}"));
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Files modified this close to the previous check are re-hashed even if size and
/// time match, since a second write within the clock's granularity would not show.
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Where `index_file` reads a file from.
enum Source<'a> {
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
fn index_file(
    (registry, rules): (&Registry, &DeclaredRules),
    rel: &str,
    source: Source,
    previous: Option<&FileEntry>,
    previous_check_ns: u64,
    stats: &Counters,
    scratch: &mut ReadScratch,
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
            match encoder {
                // Kept encoded, straight from the scratch's scan (no copy is kept):
                // the entry holds no scan until the walk is sealed
                // (`Index::build_with`), then its record.
                Some(encoder) => {
                    encoder.encode(&path, scan_file_in(scan, (registry, rules), ext, bytes));
                    ScanCell::unsealed()
                }
                None => ScanCell::new(Arc::new(scan_file_with(
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

/// What a thread reading many files keeps from one to the next: the file's bytes,
/// the scan's buffers, and for a first index kept encoded, its encoder.
#[derive(Default)]
struct ReadScratch {
    bytes: Vec<u8>,
    scan: ScanScratch,
    encoder: Option<WalkEncoder>,
}

#[derive(Default)]
struct Counters {
    read: AtomicU64,
    parsed: AtomicU64,
    files: AtomicU64,
    read_recent: AtomicU64,
    /// When the walk or update began.
    started_ns: u64,
}

impl Counters {
    fn since(started_ns: u64) -> Self {
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
        let threads = if options.threads == 0 {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        } else {
            options.threads
        };
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
                    buf,
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
        crate::fs::walk::walk(
            &root,
            threads,
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
        );
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
        })
    }

    /// Re-indexes the given project-relative files (changed, created or deleted).
    /// Returns the paths whose entries changed.
    ///
    /// A path that is now a folder is walked (a folder moved or created in one go
    /// reports only itself, and files written into a new folder before the watcher
    /// saw it report nothing); a path that no longer exists removes every entry
    /// under it too.
    pub fn update(&mut self, paths: &[String]) -> Vec<String> {
        let started = now_ns();
        let counters = Counters::since(started);
        let mut changed = Vec::new();
        let mut work: Vec<String> = Vec::with_capacity(paths.len());
        // Reached without following a link, as the walk reaches it: a folder
        // swapped for a link to elsewhere is never looked through.
        let folders = crate::fs::FolderCursor::default();
        for rel in paths {
            match folders.stat(&self.root, rel) {
                Ok((rustix::fs::FileType::Directory, _)) => {
                    // What is in it now, what the index had in it (gone since, if
                    // not found again), and a file of its name that it replaced.
                    self.collect_files(rel, &mut work);
                    work.extend(self.files_in_folder(rel).map(|f| f.path.to_string()));
                    work.push(rel.clone());
                }
                _ => {
                    // A file, nothing, or a link where a folder may have been:
                    // what the index had under it is looked at again too.
                    work.extend(self.files_in_folder(rel).map(|f| f.path.to_string()));
                    work.push(rel.clone());
                }
            }
        }
        work.sort();
        work.dedup();
        let mut buf = ReadScratch::default();
        // What a walk reports of these paths is worked out again too: a file
        // unreadable before may read now, a file may have become a link, and a
        // file created or deleted may be what a link names.
        let (mut issues_changed, mut links_changed, mut came_or_went) = (false, false, false);
        for rel in &work {
            if is_excluded(rel) {
                continue;
            }
            let now = folders.stat(&self.root, rel);
            if !matches!(now, Ok((rustix::fs::FileType::Directory, _))) {
                let before = self.issues.len();
                (self.issues).retain(|i| !matches!(i, WalkIssue::Unreadable(p, _) if p == rel));
                issues_changed |= self.issues.len() != before;
                // The link itself, or links in a folder that is gone (the links
                // starting with `rel` are together).
                let from = self.links.partition_point(|l| l.as_str() < rel.as_str());
                if self
                    .links
                    .get(from)
                    .is_some_and(|l| l.starts_with(rel.as_str()))
                {
                    let before = self.links.len();
                    self.links.retain(|link| !is_within(link, rel));
                    links_changed |= self.links.len() != before;
                }
            }
            match now {
                Ok((rustix::fs::FileType::RegularFile, stat)) => {
                    let prev = self.files.get(rel.as_str());
                    match index_file(
                        (&self.registry, &self.rules),
                        rel,
                        Source::Stated(&folders, &self.root, rel, stat),
                        prev,
                        self.checked_at_ns,
                        &counters,
                        &mut buf,
                    ) {
                        Ok(entry) => {
                            if prev != Some(&entry) {
                                came_or_went |= prev.is_none();
                                changed.push(rel.clone());
                                self.files.insert(entry.path.clone(), entry);
                            }
                        }
                        Err(e) => {
                            self.issues
                                .push(WalkIssue::Unreadable(rel.clone(), e.to_string()));
                            issues_changed = true;
                        }
                    }
                }
                now => {
                    if self.files.remove(rel.as_str()).is_some() {
                        came_or_went = true;
                        changed.push(rel.clone());
                    }
                    if let Ok((rustix::fs::FileType::Symlink, _)) = now
                        && let Err(at) = self.links.binary_search(rel)
                    {
                        self.links.insert(at, rel.clone());
                        links_changed = true;
                    }
                }
            }
        }
        if links_changed || (came_or_went && !self.links.is_empty()) {
            self.issues
                .retain(|i| !matches!(i, WalkIssue::LinkOutside(_)));
            for link in &self.links {
                if leads_outside(&self.root, link) {
                    self.issues.push(WalkIssue::LinkOutside(link.clone()));
                }
            }
            issues_changed = true;
        }
        if issues_changed {
            sort_issues(&mut self.issues);
        }
        self.checked_at_ns = started;
        changed
    }

    /// Brings up to date with the disk what the references of `path` (a file, or
    /// every file under a folder) resolve against: `path` itself, then which files
    /// are directly in each folder those references point into (a reference names a
    /// file of one folder, with or without its extension). Every other entry is left
    /// as it was, and the entries of files that stayed in those folders are not
    /// checked against their content: `kiln deps` working alone asks about one
    /// file, and need not stat the whole project to answer.
    pub fn update_dependencies_of(&mut self, path: &str) {
        let path = path.trim_end_matches('/');
        self.update(&[path.to_owned()]);
        let files: Vec<Arc<str>> = match self.path_key(path) {
            Some(file) => vec![file.clone()],
            None => self.files_in_folder(path).map(|f| f.path.clone()).collect(),
        };
        // The folder of each path the references can resolve through.
        let mut folders = std::collections::BTreeSet::new();
        let mut buf = String::new();
        for file in files.iter().filter_map(|file| self.file(file)) {
            file.with_scan(|scan| {
                for r in scan.iter() {
                    if let Some(key) = r.key(&file.path, &mut buf) {
                        let folder = key.rsplit_once('/').map_or("", |(folder, _)| folder);
                        folders.insert(folder.to_owned());
                    }
                }
            });
        }
        // Only which files exist there matters to a reference, not what they hold: a
        // folder's listing settles it, and only the names that differ from the
        // index's are looked at further (a file gone, a file new).
        let mut paths = Vec::new();
        for folder in &folders {
            let prefix = if folder.is_empty() {
                String::new()
            } else {
                format!("{folder}/")
            };
            let known: std::collections::BTreeSet<&str> = self
                .files_from(&prefix)
                .take_while(|f| f.path.starts_with(prefix.as_str()))
                .filter(|f| !f.path[prefix.len()..].contains('/'))
                .map(|f| &*f.path)
                .collect();
            let there: std::collections::BTreeSet<String> =
                crate::fs::list_below(&self.root, folder)
                    .map(|entries| {
                        entries
                            .into_iter()
                            .filter(|(_, kind)| *kind == rustix::fs::FileType::RegularFile)
                            .map(|(p, _)| p)
                            .collect()
                    })
                    .unwrap_or_default();
            paths.extend(
                known
                    .iter()
                    .filter(|p| !there.contains(**p))
                    .map(|p| p.to_string()),
            );
            paths.extend(there.into_iter().filter(|p| !known.contains(p.as_str())));
        }
        self.update(&paths);
    }

    /// Hashes and scans `bytes` as the content of `path`, for
    /// [`Index::take_written`]: it needs only the index's rules, so a move does it
    /// on a second thread while it waits for the disk.
    pub fn scan_for_write(&self, path: &str, bytes: &[u8]) -> Scanned {
        let ext = split_extension(path).map_or("", |(_, e)| e);
        Scanned {
            hash: xxhash_rust::xxh3::xxh3_64(bytes),
            scan: ScanCell::new(Arc::new(scan_file(&self.registry, &self.rules, ext, bytes))),
        }
    }

    /// [`Index::scan_for_write`] into `scans`, kept encoded: returns the hash; the
    /// scan is handed out by [`Index::sealed_for_write`] once every file is done.
    pub(crate) fn encode_for_write(&self, scans: &mut WriteScans, path: &str, bytes: &[u8]) -> u64 {
        let ext = split_extension(path).map_or("", |(_, e)| e);
        let rules = (&*self.registry, &*self.rules);
        let scan = scan_file_in(&mut scans.scratch, rules, ext, bytes);
        scans.encoder.encode(&Arc::from(path), scan);
        xxhash_rust::xxh3::xxh3_64(bytes)
    }

    /// Each file encoded by [`Index::encode_for_write`] into any of `scans`, as a
    /// [`Scanned`] of `hash(path)`; a file not among them is read from its file
    /// when its references are asked for.
    pub(crate) fn sealed_for_write(
        &self,
        scans: Vec<WriteScans>,
    ) -> impl FnMut(&str, u64) -> Scanned + use<> {
        let encoders = scans.into_iter().map(|s| s.encoder).collect();
        let (mut sealed, unread) = codec::seal(encoders, &self.root, &self.registry, &self.rules);
        move |path, hash| Scanned {
            hash,
            scan: ScanCell::encoded(sealed.remove(path).unwrap_or_else(|| unread.clone())),
        }
    }

    /// Takes files Kiln has just written itself, from the bytes it wrote, without
    /// reading them back. Each is checked by one stat: a file whose size or time is
    /// not that of the bytes (another program wrote it since) is read as usual.
    /// Returns the paths whose entry changed.
    pub fn take_written(&mut self, written: &[Written]) -> Vec<String> {
        let started = now_ns();
        let mut changed = Vec::new();
        let mut read_back = Vec::new();
        // Looked at as an update looks, never through a link.
        let folders = crate::fs::FolderCursor::default();
        for w in written {
            let same = folders.stat(&self.root, w.path).is_ok_and(|(kind, st)| {
                kind == rustix::fs::FileType::RegularFile
                    && st.size == w.size
                    && st.mtime_ns == w.mtime_ns
            });
            if !same || is_excluded(w.path) {
                read_back.push(w.path.to_owned());
                continue;
            }
            let prev = self.files.get(w.path);
            let hash = w.scanned.hash;
            // The entry's scan is kept if the content is the same.
            let scan = match prev {
                Some(p) if p.hash == hash => p.scan.clone(),
                _ => w.scanned.scan.clone(),
            };
            let entry = FileEntry::with_cell(
                prev.map_or_else(|| w.path.into(), |p| p.path.clone()),
                w.size,
                w.mtime_ns,
                hash,
                scan,
            );
            if prev != Some(&entry) {
                changed.push(w.path.to_owned());
                self.files.insert(entry.path.clone(), entry);
            }
        }
        changed.extend(self.update(&read_back));
        self.checked_at_ns = self.checked_at_ns.min(started);
        changed
    }

    /// Every file under the folder `rel`, recursively, skipping what is not a resource.
    fn collect_files(&self, rel: &str, out: &mut Vec<String>) {
        let mut stack = vec![rel.to_owned()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = crate::fs::list_below(&self.root, &dir) else {
                continue;
            };
            for (child, kind) in entries {
                match kind {
                    rustix::fs::FileType::Directory => stack.push(child),
                    rustix::fs::FileType::RegularFile => out.push(child),
                    _ => {}
                }
            }
        }
    }

    /// Moves the entries of `old` (a file, or every file under a folder) to `new`,
    /// as a rename Kiln made leaves them: the same contents and times under new
    /// paths. Their scans come along as they are (still in the cache's bytes, if
    /// they were), so the update that follows the rename finds them current and
    /// reads none again: a move of a folder of 22,000 files read and scanned every
    /// one of them anew. Returns the paths whose entries moved, old and new.
    pub(crate) fn carry_renamed(&mut self, old: &str, new: &str) -> Vec<String> {
        let old = old.trim_end_matches('/');
        let new = new.trim_end_matches('/');
        let mut moving: Vec<Arc<str>> = self.path_key(old).into_iter().cloned().collect();
        moving.extend(self.files_in_folder(old).map(|f| f.path.clone()));
        let mut moved = Vec::with_capacity(moving.len() * 2);
        for path in moving {
            let Some(entry) = self.files.remove(&path) else {
                continue;
            };
            let to: Arc<str> = format!("{new}{}", &path[old.len()..]).into();
            let carried = FileEntry::with_cell(
                to.clone(),
                entry.size,
                entry.mtime_ns,
                entry.hash,
                entry.scan,
            );
            moved.push(path.to_string());
            moved.push(to.to_string());
            self.files.insert(to, carried);
        }
        moved
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The registry whose schemas the index was built with.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
    /// The project's declared reference rules the index was built with.
    pub fn rules(&self) -> &Arc<DeclaredRules> {
        &self.rules
    }
    /// Every file, sorted by path.
    pub fn files(&self) -> impl Iterator<Item = &FileEntry> {
        self.files.values()
    }
    /// The files from `path` on, in path order (those starting with a prefix are
    /// together).
    pub fn files_from<'a>(&'a self, path: &str) -> impl Iterator<Item = &'a FileEntry> + use<'a> {
        self.files
            .range::<str, _>((std::ops::Bound::Included(path), std::ops::Bound::Unbounded))
            .map(|(_, e)| e)
    }
    /// The files inside the folder `folder` (at any depth), in path order: a range
    /// of the index, not a scan of every file.
    pub fn files_in_folder<'a>(&'a self, folder: &str) -> impl Iterator<Item = &'a FileEntry> + 'a {
        let prefix = format!("{}/", folder.trim_end_matches('/'));
        self.files_from(&prefix)
            .take_while(move |e| e.path.starts_with(prefix.as_str()))
    }
    /// The file at `path`.
    pub fn file(&self, path: &str) -> Option<&FileEntry> {
        self.files.get(path)
    }
    /// The shared path of the file at `path`.
    pub fn path_key(&self, path: &str) -> Option<&Arc<str>> {
        self.files.get_key_value(path).map(|(k, _)| k)
    }
    /// Whether a file exists at `path` in the index.
    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
    /// Problems met while walking.
    pub fn walk_issues(&self) -> &[WalkIssue] {
        &self.issues
    }
    /// The number of files indexed now (the last build's [`BuildStats::files`] does
    /// not follow later updates).
    pub fn len(&self) -> usize {
        self.files.len()
    }
    /// Whether no file is indexed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
    /// What the last build did.
    pub fn stats(&self) -> BuildStats {
        self.stats
    }

    pub(crate) fn checked_at_ns(&self) -> u64 {
        self.checked_at_ns
    }

    pub(crate) fn from_parts(
        root: PathBuf,
        registry: Arc<Registry>,
        rules: Arc<DeclaredRules>,
        files: Vec<FileEntry>,
        checked_at_ns: u64,
    ) -> Self {
        Index {
            root,
            registry,
            rules,
            files: files.into_iter().map(|e| (e.path.clone(), e)).collect(),
            issues: Vec::new(),
            links: Vec::new(),
            stats: BuildStats::default(),
            checked_at_ns,
        }
    }

    /// Files grouped by canonical base path (`textures/rose` -> `textures/rose.png`, ...),
    /// for resolving generic references written without extension.
    pub(crate) fn by_base_path(&self) -> crate::hash::FastMap<&str, Vec<&Arc<str>>> {
        let mut map: crate::hash::FastMap<&str, Vec<&Arc<str>>> = crate::hash::FastMap::default();
        for path in self.files.keys() {
            if let Some((base, _)) = split_extension(path) {
                map.entry(base).or_default().push(path);
            }
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
    }

    fn level(mesh: &str) -> String {
        format!(
            r#"{{"entities": [{{"id": "a", "components": {{"mesh": {{"mesh": "{mesh}"}}}}}}]}}"#
        )
    }

    /// An update of a folder drops what is no longer in it, and a file that a
    /// folder of the same name replaced.
    #[test]
    fn an_update_of_a_folder_drops_what_left_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kiln.project", "{}");
        write(root, "props/a.level", &level("meshes/m"));
        write(root, "props/b.level", &level("meshes/m"));
        write(root, "props/c", "a file, for now");
        let project = Project::open(root).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let mut index = Index::build(&project, registry, &BuildOptions::default()).unwrap();
        fs::remove_file(root.join("props/b.level")).unwrap();
        fs::remove_file(root.join("props/c")).unwrap();
        write(root, "props/c/d.level", &level("meshes/m"));
        let mut changed = index.update(&["props".to_owned()]);
        changed.sort();
        assert_eq!(changed, ["props/b.level", "props/c", "props/c/d.level"]);
        assert!(index.contains("props/a.level") && index.contains("props/c/d.level"));
        assert!(!index.contains("props/b.level") && !index.contains("props/c"));
        index.update(&["props/c".to_owned()]);
        assert!(!index.contains("props/c"));
    }

    /// A folder swapped for a link to somewhere outside the project, with a path
    /// below it reported by the watcher in the same batch: the update reads nothing
    /// through the link (the walk never follows one either) and drops what was there.
    #[test]
    fn an_update_never_reads_through_a_folder_swapped_for_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kiln.project", "{}");
        write(root, "props/a.level", &level("meshes/m"));
        write(outside.path(), "a.level", &level("meshes/outside"));
        write(outside.path(), "b.level", &level("meshes/outside"));
        let project = Project::open(root).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let mut index = Index::build(&project, registry, &BuildOptions::default()).unwrap();
        assert!(index.contains("props/a.level"));
        fs::remove_dir_all(root.join("props")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("props")).unwrap();
        index.update(&[
            "props/a.level".to_owned(),
            "props/b.level".to_owned(),
            "props".to_owned(),
        ]);
        for rel in ["props/a.level", "props/b.level"] {
            assert!(!index.contains(rel), "{rel} read through the link");
        }
        // Updated one at a time, as a later batch would.
        index.update(&["props/b.level".to_owned()]);
        assert!(!index.contains("props/b.level"), "read through the link");
    }

    /// What a walk reports of links stays current over updates: a link to a file
    /// of the project leads to nothing once the file is deleted, and back when it
    /// is written again; a file replaced by a link is a link; a folder deleted
    /// with a link in it takes the link with it. After each update the index
    /// reports what a walk from scratch reports.
    #[test]
    fn an_update_keeps_what_the_walk_reports_of_links_current() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kiln.project", "{}");
        write(root, "props/a.level", &level("meshes/m"));
        write(root, "props/b.level", &level("meshes/m"));
        write(root, "far/x.level", &level("meshes/m"));
        std::os::unix::fs::symlink(root.join("props/a.level"), root.join("link.level")).unwrap();
        std::os::unix::fs::symlink(root.join("props/b.level"), root.join("far/y.level")).unwrap();
        let project = Project::open(root).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let build = || Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut index = build();
        assert_eq!(index.walk_issues(), []);
        let outside = |rel: &str| WalkIssue::LinkOutside(rel.into());

        fs::remove_file(root.join("props/a.level")).unwrap();
        index.update(&["props/a.level".to_owned()]);
        assert_eq!(index.walk_issues(), [outside("link.level")]);
        assert_eq!(index.walk_issues(), build().walk_issues());

        write(root, "props/a.level", &level("meshes/n"));
        index.update(&["props/a.level".to_owned()]);
        assert_eq!(index.walk_issues(), []);

        fs::remove_file(root.join("props/b.level")).unwrap();
        std::os::unix::fs::symlink("/", root.join("props/b.level")).unwrap();
        index.update(&["props/b.level".to_owned()]);
        assert!(!index.contains("props/b.level"));
        assert_eq!(index.walk_issues(), build().walk_issues());
        assert!(index.walk_issues().contains(&outside("props/b.level")));

        fs::remove_dir_all(root.join("far")).unwrap();
        index.update(&["far".to_owned()]);
        assert_eq!(index.walk_issues(), build().walk_issues());
        assert_eq!(index.walk_issues(), [outside("props/b.level")]);
    }
}
