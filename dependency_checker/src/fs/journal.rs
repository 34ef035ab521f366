//! The write-ahead journal of an operation on project files (a move, a fix): what
//! will be renamed, the original bytes of every file that will be patched, and the
//! folders that will be created, flushed to disk under `.kiln/journal/` before any
//! project file changes. If the process dies before the operation deletes its
//! journal, [`recover`] (run whenever a project is opened) rolls everything back.
//!
//! The journal is a file in the project that anyone can edit, so recovery trusts
//! none of its paths: a path that is not a plain relative path inside the project
//! makes recovery refuse, touching nothing.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use kiln_core::fs::{
    Durability, Replacement, goes_through_link, is_plain_relative, open_folder_below, read_below,
    remove_below, rename_below, replace_at, stat_below, sweep_leftovers,
};

use super::kiln_dir::existing_kiln_dir;
use crate::error::{CheckerError, io_err};

const JOURNAL_DIR: &str = kiln_core::own_folder::JOURNAL;
const JOURNAL_FILE: &str = "journal.json";
const BACKUP_FILE: &str = "backups.bin";

/// The journal of an operation in progress.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Journal {
    /// Files or folders renamed (or about to be), old -> new, in order.
    pub(crate) renames: Vec<(String, String)>,
    /// Files patched (or about to be), by their path before any rename, with the byte
    /// range of their original content in the backup file; `None` for a file that
    /// did not exist before.
    pub(crate) patched: Vec<(String, Option<(u64, u64)>)>,
    /// Folders the renames create, outermost first.
    #[serde(default)]
    pub(crate) created_dirs: Vec<String>,
    /// For each entry of `patched`, the hash of the content Kiln writes there: only a
    /// file that still has that content is restored, so that a save by another
    /// program after Kiln stopped is never overwritten.
    #[serde(default)]
    pub(crate) written: Vec<Option<u64>>,
    /// The process that wrote it (its temporary files are named after it; recovery
    /// sweeps those of any process no longer running).
    #[serde(default)]
    pub(crate) pid: u32,
    /// The lines appended to the redirect log, when the operation appended: if
    /// another program appended too, the log no longer has the content written
    /// (see `written`), and recovery takes off only these lines.
    #[serde(default)]
    pub(crate) log_appended: Option<String>,
}

pub(crate) fn journal_dir(root: &Path) -> PathBuf {
    root.join(JOURNAL_DIR)
}

/// Whether anything of an operation is in `.kiln/journal/`: a committed journal to
/// recover, or the beginnings of one a kill interrupted, to discard.
pub(crate) fn exists(root: &Path) -> bool {
    existing_kiln_dir(root).is_some() && fs::symlink_metadata(journal_dir(root)).is_ok()
}

/// Whether an operation's journal is waiting to be recovered.
pub(crate) fn is_pending(root: &Path) -> bool {
    existing_kiln_dir(root).is_some()
        && fs::symlink_metadata(journal_dir(root).join(JOURNAL_FILE)).is_ok()
}

/// A simulated kill, in tests: the steps left before it, and whether it came. An
/// apply's worker threads share their caller's ([`CrashScope`]).
#[cfg(test)]
#[derive(Debug)]
struct CrashBudget {
    left: std::sync::Mutex<usize>,
    crashed: std::sync::atomic::AtomicBool,
}

#[cfg(test)]
thread_local! {
    static CRASH_BUDGET: std::cell::RefCell<Option<std::sync::Arc<CrashBudget>>> =
        const { std::cell::RefCell::new(None) };
}

/// In tests, makes this thread's operations die as a `kill -9` would after `steps`
/// more steps (`None`: never).
#[cfg(test)]
pub(crate) fn crash_after(steps: Option<usize>) {
    let budget = steps.map(|n| {
        std::sync::Arc::new(CrashBudget {
            left: std::sync::Mutex::new(n),
            crashed: std::sync::atomic::AtomicBool::new(false),
        })
    });
    CRASH_BUDGET.with(|b| *b.borrow_mut() = budget);
}

/// This thread's simulated kill (tests), carried to the threads it hands work to,
/// so that a kill stops them too and counts their steps. Nothing outside tests.
#[derive(Debug, Clone, Default)]
pub(crate) struct CrashScope {
    #[cfg(test)]
    budget: Option<std::sync::Arc<CrashBudget>>,
}

impl CrashScope {
    /// The calling thread's.
    pub(crate) fn current() -> Self {
        CrashScope {
            #[cfg(test)]
            budget: CRASH_BUDGET.with(|b| b.borrow().clone()),
        }
    }

    /// Makes it the calling (worker) thread's.
    pub(crate) fn enter(&self) {
        #[cfg(test)]
        CRASH_BUDGET.with(|b| *b.borrow_mut() = self.budget.clone());
    }
}

/// In tests, stops an operation (an apply, a journal's writing, a recovery) dead
/// after the configured number of steps, as a `kill -9` would.
pub(crate) fn crash_point() -> Result<(), CheckerError> {
    #[cfg(test)]
    {
        let budget = CRASH_BUDGET.with(|b| b.borrow().clone());
        if let Some(budget) = budget {
            let mut left = budget.left.lock().unwrap_or_else(|e| e.into_inner());
            if *left == 0 {
                budget
                    .crashed
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                return Err(crate::error::refused(JOURNAL_DIR, "simulated crash"));
            }
            *left -= 1;
        }
    }
    Ok(())
}

/// Whether a simulated kill (tests) stopped this thread's operation.
pub(crate) fn crashed() -> bool {
    #[cfg(test)]
    {
        CRASH_BUDGET.with(|b| {
            b.borrow()
                .as_ref()
                .is_some_and(|b| b.crashed.load(std::sync::atomic::Ordering::SeqCst))
        })
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// The originals of the files an operation patches, written to the journal's
/// backup file as they are read, before the manifest that commits the operation
/// ([`begin`]): a move that patches 43,000 files read 120 MB of them, and held
/// them all to write them in one go. Dropped before [`begin`] (the operation was
/// refused), it removes what it wrote.
pub(crate) struct Backups {
    dir: PathBuf,
    path: PathBuf,
    file: Option<std::io::BufWriter<fs::File>>,
    written: u64,
}

impl Backups {
    /// Starts an empty backup file in the journal's folder, which must be a real
    /// folder (a link put there would carry the backups elsewhere).
    pub(crate) fn start(root: &Path) -> Result<Self, CheckerError> {
        let dir = journal_dir(root);
        let folder = open_folder_below(root, Path::new(JOURNAL_DIR), true).map_err(|e| {
            crate::error::refused(&dir, format!("{e}; reopen the project to set it aside"))
        })?;
        let path = dir.join(BACKUP_FILE);
        let file = create_at(&folder, BACKUP_FILE).map_err(io_err(&path))?;
        Ok(Backups {
            dir,
            path,
            // Large writes: a move of 1,000 files appends 1,000 originals.
            file: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
            written: 0,
        })
    }

    /// Appends `original`; returns where it is in the backup file (start, length),
    /// as the journal records it.
    pub(crate) fn append(&mut self, original: &[u8]) -> Result<(u64, u64), CheckerError> {
        if let Some(file) = &mut self.file {
            std::io::Write::write_all(file, original).map_err(io_err(&self.path))?;
        }
        let range = (self.written, original.len() as u64);
        self.written += original.len() as u64;
        Ok(range)
    }
}

impl Drop for Backups {
    fn drop(&mut self) {
        // Still open: the operation never began; nothing is to be recovered.
        if self.file.take().is_some() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Commits to an operation: the backups (see [`Backups`]) and the manifest, both
/// flushed to disk before any project file changes. Project files are then
/// replaced by rename without a flush of their own (ext4 and most journaling file
/// systems write a renamed-over file's data before committing the rename), so a
/// thousand-file rename costs two flushes, not a thousand.
pub(crate) fn begin(
    root: &Path,
    journal: &Journal,
    mut backups: Backups,
) -> Result<(), CheckerError> {
    let dir = journal_dir(root);
    // From here on a failure leaves the journal as it is: without its manifest it
    // is an operation that never started, which the next open discards.
    let file = backups.file.take().map(std::io::BufWriter::into_inner);
    match file {
        Some(Ok(file)) => file.sync_all().map_err(io_err(&backups.path))?,
        Some(Err(e)) => return Err(io_err(&backups.path)(e.into_error())),
        None => {}
    }
    crash_point()?;
    let manifest = serde_json::to_vec(journal).map_err(|e| CheckerError::Journal {
        path: dir.join(JOURNAL_FILE),
        message: e.to_string(),
    })?;
    // The replace's rename is the commit point: a kill while the manifest is being
    // written leaves only a temporary name, an operation that never started.
    let folder = open_folder_below(root, Path::new(JOURNAL_DIR), false).map_err(io_err(&dir))?;
    crash_point()?;
    replace_at(
        &folder,
        std::ffi::OsStr::new(JOURNAL_FILE),
        &manifest,
        Durability::Flushed,
    )
    .map_err(io_err(dir.join(JOURNAL_FILE)))?;
    kiln_core::fs::sync_folder(&folder).map_err(io_err(&dir))
}

/// Ends an operation that completed: its journal is no longer needed.
pub(crate) fn finish(root: &Path) -> Result<(), CheckerError> {
    let dir = journal_dir(root);
    fs::remove_dir_all(&dir).map_err(io_err(&dir))
}

/// The temporary name a case-only rename passes through (so that case-insensitive
/// file systems rename too).
pub(crate) fn case_rename_temp(old: &str) -> String {
    format!("{old}.kiln-case-rename")
}

/// Renames `old` to `new` (a file or a folder), creating `new`'s parent folders,
/// through a temporary name when only the case changes.
pub(crate) fn rename(root: &Path, old: &str, new: &str) -> Result<(), CheckerError> {
    let move_one = |from: &str, to: &str| {
        rename_below(root, Path::new(from), Path::new(to)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                // Free when the move was planned: another process took the name.
                CheckerError::MoveRefused {
                    from: old.to_owned(),
                    to: new.to_owned(),
                    reason: "something is there now (put there since the move was planned); nothing was changed".into(),
                }
            } else {
                io_err(root.join(from))(e)
            }
        })
    };
    if old.to_lowercase() == new.to_lowercase() {
        let temp = case_rename_temp(old);
        move_one(old, &temp)?;
        move_one(&temp, new)
    } else {
        move_one(old, new)
    }
}

/// Makes the file `name` in the folder `dir` new, for writing (see
/// [`kiln_core::fs::create_new_at`]).
fn create_at(dir: &kiln_core::os::Folder, name: &str) -> std::io::Result<fs::File> {
    kiln_core::fs::create_new_at(dir, std::ffi::OsStr::new(name))
}

/// Removes the folders `dirs` (project-relative), innermost first, each only if it
/// is empty.
pub(crate) fn remove_empty_dirs(root: &Path, dirs: &[String]) {
    let mut dirs: Vec<&String> = dirs.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
    for dir in dirs {
        let _ = remove_below(root, Path::new(dir), true);
    }
}

/// What [`recover`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// There was no operation to recover.
    Nothing,
    /// An interrupted operation was rolled back.
    RolledBack,
    /// The journal could not be used (damaged, or naming paths outside the project)
    /// and was moved aside, untouched, so that the project stays usable; the files
    /// it names may be half changed. [`set_aside_journals`] lists such folders.
    SetAside {
        /// Where it is now, from the project root.
        folder: String,
        /// Why it could not be used.
        reason: String,
    },
}

/// The most a manifest or a backup file of Kiln's may hold: a bound on what a
/// crafted `.kiln/` can make Kiln read.
const MAX_MANIFEST: u64 = 256 << 20;
const MAX_BACKUPS: u64 = 8 << 30;

/// Reads Kiln's own file `rel` (below the root, never through a link).
fn read_own(root: &Path, rel: &str, max: u64) -> std::io::Result<Vec<u8>> {
    read_below(root, Path::new(rel), max)
}

/// Prefix of the folders unusable journals are moved to, under `.kiln/`.
const SET_ASIDE_PREFIX: &str = "journal.rejected-";

/// Moves the journal folder (or whatever is in its place) aside, untouched, with a
/// note of why.
fn set_aside(root: &Path, reason: String) -> Result<Recovery, CheckerError> {
    let dir = journal_dir(root);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut n = 0;
    let aside = loop {
        let name = format!("{SET_ASIDE_PREFIX}{stamp}-{n}");
        let candidate = root.join(kiln_core::own_folder::DIR).join(&name);
        if fs::symlink_metadata(&candidate).is_err() {
            break candidate;
        }
        n += 1;
    };
    // The journal (a folder, or whatever is in its place) goes inside, as it was,
    // beside a note of why.
    fs::create_dir(&aside).map_err(io_err(&aside))?;
    fs::rename(&dir, aside.join("journal")).map_err(io_err(&dir))?;
    let _ = fs::write(aside.join("reason.txt"), format!("{reason}\n"));
    let folder = aside
        .strip_prefix(root)
        .map_or_else(|_| aside.display().to_string(), |p| p.display().to_string());
    Ok(Recovery::SetAside { folder, reason })
}

/// The journals set aside so far, with why, oldest first: each is an operation that
/// may have left files half changed, until the user looks and deletes the folder.
pub fn set_aside_journals(root: &Path) -> Vec<(String, String)> {
    let Some(Ok(entries)) = existing_kiln_dir(root).map(fs::read_dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            name.starts_with(SET_ASIDE_PREFIX).then(|| {
                let reason = read_own(
                    root,
                    &format!("{}/{name}/reason.txt", kiln_core::own_folder::DIR),
                    64 << 10,
                )
                .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
                .unwrap_or_else(|_| "it could not be used".to_owned());
                (format!("{}/{name}", kiln_core::own_folder::DIR), reason)
            })
        })
        .collect();
    out.sort();
    out
}

/// A journal checked against everything a crafted one could do, and its backups.
struct Checked {
    journal: Journal,
    backups: Vec<u8>,
}

/// Checks the manifest and the backups before anything is changed: readable, every
/// path a plain path inside the project, every backup range inside the backups.
fn check_journal(root: &Path, manifest: &[u8]) -> Result<Checked, String> {
    let journal: Journal =
        serde_json::from_slice(manifest).map_err(|e| format!("its manifest is damaged: {e}"))?;
    let named = journal
        .renames
        .iter()
        .flat_map(|(a, b)| [a, b])
        .chain(journal.patched.iter().map(|(f, _)| f))
        .chain(&journal.created_dirs);
    for path in named {
        if !is_plain_relative(path) || goes_through_link(root, Path::new(path)) {
            return Err(format!(
                "it names {path:?}, which is not a path inside the project"
            ));
        }
    }
    let backups = read_own(root, &format!("{JOURNAL_DIR}/{BACKUP_FILE}"), MAX_BACKUPS)
        .map_err(|e| format!("its backups cannot be read: {e}"))?;
    for (file, range) in &journal.patched {
        if let Some((start, len)) = range {
            let fits = start
                .checked_add(*len)
                .is_some_and(|end| end <= backups.len() as u64);
            if !fits {
                return Err(format!("its backup of {file} is truncated"));
            }
        }
    }
    Ok(Checked { journal, backups })
}

/// Rolls back an operation that a crash interrupted, if its journal exists: renamed
/// files and folders go back, patched files get their backed-up content (unless
/// another program saved them since), created folders and temporary files are
/// removed. A journal that cannot be used is set aside, and the project stays
/// usable. The caller holds the project lock exclusively.
pub fn recover(root: &Path) -> Result<Recovery, CheckerError> {
    if existing_kiln_dir(root).is_none() {
        // No journal, or `.kiln` is a link: nothing is ever read through it.
        return Ok(Recovery::Nothing);
    }
    let dir = journal_dir(root);
    match fs::symlink_metadata(&dir) {
        Err(_) => return Ok(Recovery::Nothing),
        Ok(m) if !m.is_dir() => return set_aside(root, "it is not a folder".into()),
        Ok(_) => {}
    }
    let bytes = match read_own(root, &format!("{JOURNAL_DIR}/{JOURNAL_FILE}"), MAX_MANIFEST) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Backups without a manifest: the kill came before the commit point and
            // no project file was touched.
            fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
            return Ok(Recovery::Nothing);
        }
        Err(e) => return set_aside(root, format!("its manifest cannot be read: {e}")),
    };
    let Checked { journal, backups } = match check_journal(root, &bytes) {
        Ok(checked) => checked,
        Err(reason) => return set_aside(root, reason),
    };
    let there = |rel: &str| stat_below(root, rel).is_ok();
    for (old, new) in journal.renames.iter().rev() {
        let case_only = old.to_lowercase() == new.to_lowercase();
        if there(new) && (!there(old) || case_only) {
            rename(root, new, old)?;
        }
        let temp = case_rename_temp(old);
        if there(&temp) {
            rename_below(root, Path::new(&temp), Path::new(old))
                .map_err(io_err(root.join(&temp)))?;
        }
        crash_point()?;
    }
    for (k, (file, range)) in journal.patched.iter().enumerate() {
        let path = root.join(file);
        if let Some(Some(written)) = journal.written.get(k) {
            // Restore only what Kiln wrote; a file it never got to, or that another
            // program saved since, is left as it is.
            match read_own(root, file, MAX_BACKUPS) {
                Ok(now) if xxhash_rust::xxh3::xxh3_64(&now) == *written => {}
                Ok(now) if file == kiln_core::project::REDIRECT_FILE => {
                    if let Some(kept) = without_appended(&now, journal.log_appended.as_deref()) {
                        kiln_core::fs::write_below(root, Path::new(file), &kept)
                            .map_err(io_err(&path))?;
                    }
                    continue;
                }
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && range.is_some() => {}
                Err(_) => continue,
            }
        }
        match range {
            Some((start, len)) => {
                // Checked to fit by `check_journal`. A kill here leaves a temporary
                // file of a process that no longer runs: the sweep below, on this
                // try or the next, removes it.
                let original = &backups[*start as usize..(*start + *len) as usize];
                let (folder, name) = kiln_core::fs::folder_and_name(file).map_err(io_err(&path))?;
                let dir =
                    open_folder_below(root, Path::new(folder), false).map_err(io_err(&path))?;
                // The temporary is named for this process, never for the pid the
                // journal (a file anyone can edit) gives.
                let (replacement, mut out) =
                    Replacement::start(&dir, std::ffi::OsStr::new(name)).map_err(io_err(&path))?;
                std::io::Write::write_all(&mut out, original).map_err(io_err(&path))?;
                out.sync_all().map_err(io_err(&path))?;
                if let Err(crash) = crash_point() {
                    replacement.leave_behind();
                    return Err(crash);
                }
                replacement
                    .place(out, Durability::Unflushed)
                    .map_err(io_err(&path))?;
            }
            None => {
                let _ = remove_below(root, Path::new(file), false);
            }
        }
        crash_point()?;
    }
    // What the interrupted operation (or an earlier try at this recovery) was
    // writing when it was killed: named for the operation's process or for this
    // one (this one holds the lock, so neither is writing them now, whatever runs
    // under the operation's number), and anything else a process no longer
    // running left there.
    let mut folders = std::collections::BTreeSet::new();
    for (file, _) in &journal.patched {
        let Ok((folder, name)) = kiln_core::fs::folder_and_name(file) else {
            continue;
        };
        if let Ok(dir) = open_folder_below(root, Path::new(folder), false) {
            for pid in [journal.pid, std::process::id()] {
                let temp = kiln_core::fs::temp_name(std::ffi::OsStr::new(name), pid);
                let _ = kiln_core::fs::remove_file_at(&dir, &temp);
            }
            if folders.insert(folder) {
                sweep_leftovers(&dir);
            }
        }
    }
    remove_empty_dirs(root, &journal.created_dirs);
    fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
    Ok(Recovery::RolledBack)
}

/// The redirect log `now` without the last occurrence of the lines the interrupted
/// operation appended (`appended`), which another program's appends may have
/// followed; `None` if they are not there (nothing of the operation's to remove).
fn without_appended(now: &[u8], appended: Option<&str>) -> Option<Vec<u8>> {
    let appended = appended?.as_bytes();
    if appended.is_empty() {
        return None;
    }
    let at = now.windows(appended.len()).rposition(|w| w == appended)?;
    let mut kept = now[..at].to_vec();
    kept.extend_from_slice(&now[at + appended.len()..]);
    Some(kept)
}
