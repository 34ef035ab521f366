//! Watching a project: file-system events from `notify`, debounced into batches of
//! project-relative paths that `Checker::apply_changes`
//! folds into the index.
//!
//! An atomic save (write a temporary file, rename it over) or a burst of thousands of
//! files (a `git checkout`) arrives as one batch: the debouncer waits until the events
//! stop for `quiet` (or `max_wait` passed since the first). When the operating system's
//! event queue overflows, the batch says `rescan` and the whole project is re-walked
//! (re-reading only what changed).
//!
//! [`SyncCookies`] answer "has the watcher seen everything written so far?" as git's
//! fsmonitor and watchman do: write a file under `.kiln/`, and once its event comes
//! through, every earlier change has come through too (the kernel's queue is in
//! order). The batch holding it is sent at once, without waiting for quiet, naming
//! the cookie in [`ChangeBatch::synced`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::error::CheckerError;
use crate::fs::is_excluded;

/// Changes seen together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangeBatch {
    /// Project-relative paths that were created, changed, removed or renamed.
    pub paths: Vec<String>,
    /// Events were lost (queue overflow or a watcher error): re-walk everything.
    pub rescan: bool,
    /// When the first event of the batch arrived (for latency measurements).
    pub first_event: Option<Instant>,
    /// The [`SyncCookies`] this batch completes: every change made before each of
    /// them was written is in this batch or an earlier one.
    pub synced: Vec<u64>,
}

/// The prefix of sync cookie files under `.kiln/`, followed by the process id, `-`,
/// and the cookie's number.
const COOKIE_PREFIX: &str = kiln_core::own_folder::SYNC_COOKIE_PREFIX;

/// Writes sync cookies for one [`ProjectWatcher`]; cheap to clone and to send to
/// another thread.
#[derive(Debug, Clone)]
pub struct SyncCookies {
    root: PathBuf,
    next: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl SyncCookies {
    fn cookie_path(&self, n: u64) -> PathBuf {
        self.root
            .join(format!("{COOKIE_PREFIX}{}-{n}", std::process::id()))
    }

    /// A new cookie's number, to be written with [`SyncCookies::write`] (the
    /// number is known first so that a waiter can be registered before the watcher
    /// can possibly report it).
    pub fn reserve(&self) -> u64 {
        self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The cookie's name in `.kiln`.
    fn cookie_name(n: u64) -> String {
        let prefix = COOKIE_PREFIX.rsplit('/').next().unwrap_or(COOKIE_PREFIX);
        format!("{prefix}{}-{n}", std::process::id())
    }

    /// Writes cookie `n`; the watcher's batches name it in [`ChangeBatch::synced`]
    /// once it has seen it. Call [`SyncCookies::remove`] after.
    pub fn write(&self, n: u64) -> Result<(), CheckerError> {
        // A real `.kiln` folder of the project: never through a link planted there.
        let dir = crate::fs::kiln_dir(&self.root)?;
        let folder = kiln_core::fs::open_folder_below(&self.root, Path::new(OWN_DIR), false)
            .map_err(crate::error::io_err(&dir))?;
        let name = Self::cookie_name(n);
        folder
            .open_file(name.as_ref(), kiln_core::os::OpenFor::CreateNew)
            .map_err(crate::error::io_err(&self.cookie_path(n)))?;
        Ok(())
    }

    /// Removes cookie `n` (a missing one is fine).
    pub fn remove(&self, n: u64) {
        if let Ok(folder) = kiln_core::fs::open_folder_below(&self.root, Path::new(OWN_DIR), false)
        {
            let _ = folder.remove_file(Self::cookie_name(n).as_ref());
        }
    }
}

/// Kiln's own folder in a project.
const OWN_DIR: &str = kiln_core::own_folder::DIR;

/// Removes the sync cookies that processes no longer running left in `.kiln`
/// (a `kiln watch` or editor killed between writing one and removing it); a
/// running one's are left alone. Returns how many it removed.
pub fn sweep_stale_cookies(root: &Path) -> usize {
    let Ok(folder) = kiln_core::fs::open_folder_below(root, Path::new(OWN_DIR), false) else {
        return 0;
    };
    let prefix = COOKIE_PREFIX.rsplit('/').next().unwrap_or(COOKIE_PREFIX);
    let stale = |name: &str| {
        let pid = name.strip_prefix(prefix)?.split_once('-')?.0;
        let pid: u32 = pid.parse().ok()?;
        (!kiln_core::os::process_is_running(pid)).then_some(())
    };
    let Ok(entries) = folder.entries() else {
        return 0;
    };
    entries
        .iter()
        .filter_map(|(name, kind)| {
            let name = name.to_str()?;
            (*kind == kiln_core::os::Kind::File).then_some(name)?;
            stale(name)?;
            folder.remove_file(name.as_ref()).ok()
        })
        .count()
}

/// The number of our own cookie named by the project-relative `rel`.
fn own_cookie(rel: &str) -> Option<u64> {
    let rest = rel.strip_prefix(COOKIE_PREFIX)?;
    let (pid, n) = rest.split_once('-')?;
    (pid.parse::<u32>().ok()? == std::process::id())
        .then(|| n.parse().ok())
        .flatten()
}

/// Timing of the debouncer.
#[derive(Debug, Clone, Copy)]
pub struct Debounce {
    /// A batch ends once no event came for this long.
    pub quiet: Duration,
    /// A batch ends at the latest this long after its first event, even in a storm.
    pub max_wait: Duration,
}

impl Default for Debounce {
    fn default() -> Self {
        // Short enough for a live preview, long enough to fold an atomic save's
        // create + write + rename into one batch.
        Debounce {
            quiet: Duration::from_millis(15),
            max_wait: Duration::from_millis(250),
        }
    }
}

/// A running watcher; dropping it stops watching.
pub struct ProjectWatcher {
    _watcher: notify::RecommendedWatcher,
    batches: Receiver<ChangeBatch>,
    root: PathBuf,
    /// The root folder's device and inode when watching began: a folder renamed away
    /// (or deleted and made again) is another folder.
    root_identity: Option<(u64, u64)>,
    cookies: SyncCookies,
}

fn identity(path: &Path) -> Option<(u64, u64)> {
    kiln_core::os::identity(path)
}

impl std::fmt::Debug for ProjectWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectWatcher").finish_non_exhaustive()
    }
}

enum Raw {
    /// Paths an event names, when it came, and whether it completes a write: the
    /// rename that puts an atomic save's file in place.
    Paths(Vec<PathBuf>, Instant, bool),
    Rescan(Instant),
}

/// Whether `kind` is the end of a write the watcher can recognise: a file renamed
/// into place, as every atomic save (temporary file, then rename) ends. Nothing
/// more of that save is coming, so its batch need not wait for quiet.
fn completes_a_write(kind: &EventKind) -> bool {
    use notify::event::{ModifyKind, RenameMode};
    matches!(
        kind,
        EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Both))
    )
}

impl ProjectWatcher {
    /// Starts watching the project at `root` (recursively).
    pub fn start(root: &Path, debounce: Debounce) -> Result<Self, CheckerError> {
        Self::start_with_waker(root, debounce, None)
    }

    /// Like [`Self::start`], calling `waker` whenever a batch is ready (a GUI passes
    /// its repaint request, so that an idle window wakes up to apply the change).
    pub fn start_with_waker(
        root: &Path,
        debounce: Debounce,
        waker: Option<Waker>,
    ) -> Result<Self, CheckerError> {
        let root = root.to_owned();
        let root_identity = identity(&root);
        // Kiln's folder exists before the watch starts, so that the first sync
        // cookie's event is not lost while a watch on a new folder is being added.
        // Best effort: without it, cookies fail to write and callers fall back.
        let _ = crate::fs::kiln_dir(&root);
        sweep_stale_cookies(&root);
        let watched_root = root.clone();
        let (raw_tx, raw_rx) = mpsc::channel::<Raw>();
        // Changes only: with access events, every file any program opens in the
        // project (a search, a build, our own walk) would wake this process.
        let config = notify::Config::default().with_event_kinds(notify::EventKindMask::CORE);
        let handler = move |res: notify::Result<notify::Event>| {
            let now = Instant::now();
            let msg = match res {
                Ok(event) if event.need_rescan() => Raw::Rescan(now),
                Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
                Ok(event) => {
                    let completes = completes_a_write(&event.kind);
                    Raw::Paths(event.paths, now, completes)
                }
                Err(_) => Raw::Rescan(now),
            };
            let _ = raw_tx.send(msg);
        };
        let mut watcher =
            notify::RecommendedWatcher::new(handler, config).map_err(|e| CheckerError::Watch {
                path: root.clone(),
                message: e.to_string(),
            })?;
        watcher
            .watch(&root, RecursiveMode::Recursive)
            .map_err(|e| CheckerError::Watch {
                path: root.clone(),
                message: e.to_string(),
            })?;
        let (tx, batches) = mpsc::channel();
        let folder = root.clone();
        std::thread::Builder::new()
            .name("kiln-watch-debounce".into())
            .spawn(move || debounce_loop(&root, &raw_rx, &tx, debounce, waker))
            .map_err(|e| CheckerError::Watch {
                path: folder,
                message: format!("cannot start its thread: {e}"),
            })?;
        Ok(ProjectWatcher {
            _watcher: watcher,
            batches,
            cookies: SyncCookies {
                root: watched_root.clone(),
                next: Default::default(),
            },
            root: watched_root,
            root_identity,
        })
    }

    /// The cookie writer that syncs with this watcher.
    pub fn sync_cookies(&self) -> SyncCookies {
        self.cookies.clone()
    }

    /// Whether the watched project folder is gone: renamed, moved or deleted (its
    /// path now leads nowhere or to another folder, or its project file went).
    /// Changes inside it can no longer be mapped to the project's paths.
    pub fn root_is_gone(&self) -> bool {
        identity(&self.root) != self.root_identity
            || !self.root.join(kiln_core::project::PROJECT_FILE).is_file()
    }

    /// The next batch, waiting at most `timeout`.
    pub fn next_batch(&self, timeout: Duration) -> Option<ChangeBatch> {
        self.batches.recv_timeout(timeout).ok()
    }

    /// A batch if one is ready, without waiting.
    pub fn try_next_batch(&self) -> Option<ChangeBatch> {
        self.batches.try_recv().ok()
    }
}

/// Called from the watcher's thread when a batch is ready.
pub type Waker = std::sync::Arc<dyn Fn() + Send + Sync>;

/// How long a batch waits after a file was renamed into place: enough for the
/// events that arrive with the rename (its other half) to join it.
const AFTER_RENAME: Duration = Duration::from_millis(1);

fn debounce_loop(
    root: &Path,
    raw: &Receiver<Raw>,
    out: &mpsc::Sender<ChangeBatch>,
    timing: Debounce,
    waker: Option<Waker>,
) {
    // Canonical root, so that event paths (which the OS reports resolved) strip cleanly.
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
    loop {
        let Ok(first) = raw.recv() else { return };
        let started = Instant::now();
        let mut paths = BTreeSet::new();
        let mut rescan = false;
        let mut first_event = None;
        let mut synced = Vec::new();
        let mut completed = false;
        let mut take = |msg: Raw,
                        paths: &mut BTreeSet<String>,
                        rescan: &mut bool,
                        synced: &mut Vec<u64>,
                        completed: &mut bool| match msg {
            Raw::Paths(ps, at, completes) => {
                first_event.get_or_insert(at);
                // A rename names its destination last.
                let last = ps.len().saturating_sub(1);
                for (k, p) in ps.into_iter().enumerate() {
                    let rel = p.strip_prefix(&canonical).or_else(|_| p.strip_prefix(root));
                    if let Ok(rel) = rel
                        && let Some(rel) = rel.to_str()
                    {
                        let rel = rel.replace('\\', "/");
                        if let Some(n) = own_cookie(&rel) {
                            if !synced.contains(&n) {
                                synced.push(n);
                            }
                        } else if !rel.is_empty() && !is_excluded(&rel) {
                            *completed |= completes && k == last;
                            paths.insert(rel);
                        }
                    }
                }
            }
            Raw::Rescan(at) => {
                first_event.get_or_insert(at);
                *rescan = true;
            }
        };
        take(first, &mut paths, &mut rescan, &mut synced, &mut completed);
        // A cookie ends the batch at once: someone is waiting for it. So does a
        // file renamed into place: the save is complete, and waiting for quiet
        // would only delay its preview.
        while synced.is_empty() {
            let left = timing.max_wait.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            // After a rename into place, only the events the kernel reports with
            // it (the rename's other half) are waited for.
            let quiet = if completed {
                AFTER_RENAME
            } else {
                timing.quiet
            };
            match raw.recv_timeout(quiet.min(left)) {
                Ok(msg) => take(msg, &mut paths, &mut rescan, &mut synced, &mut completed),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if paths.is_empty() && !rescan && synced.is_empty() {
            continue;
        }
        let batch = ChangeBatch {
            paths: paths.into_iter().collect(),
            rescan,
            first_event,
            synced,
        };
        if out.send(batch).is_err() {
            return;
        }
        if let Some(wake) = &waker {
            wake();
        }
    }
}
