//! The write-ahead journal of an operation on project files (a move, a fix): what
//! will be renamed, the original bytes of every file that will be patched, and the
//! folders that will be created, flushed to disk under `.kiln/journal/` before any
//! project file changes. If the process dies before the operation deletes its
//! journal, [`recover`] (run whenever a project is opened) rolls everything back.
//!
//! The journal is a file in the project that anyone can edit, so recovery trusts
//! none of its paths: a path that is not a plain relative path inside the project
//! makes recovery refuse, touching nothing. A plain path that goes through a
//! symbolic link (a folder swapped for one by another program while the
//! operation ran), or whose folder left the project, cannot be reached: recovery
//! restores every other entry, and sets the journal aside with its backups for
//! what it could not ([`Recovery::Partial`]).

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
    /// An interrupted operation was rolled back whole.
    RolledBack {
        /// The files it put back as they were (patched back, renamed back, or
        /// removed), from the project root.
        restored: Vec<String>,
    },
    /// An interrupted operation was rolled back but for the files it could not
    /// reach without a link (or whose folder left the project); its journal, with
    /// their backups, was set aside, and [`set_aside_journals`] lists it.
    Partial {
        /// The files it put back as they were.
        restored: Vec<String>,
        /// The files it could not restore, with why.
        not_restored: Vec<(String, String)>,
        /// Where the journal is now, from the project root.
        folder: String,
    },
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
    let folder = move_aside(root, &reason)?;
    Ok(Recovery::SetAside { folder, reason })
}

/// Moves the journal folder aside with `reason` beside it; where it went, from
/// the project root.
fn move_aside(root: &Path, reason: &str) -> Result<String, CheckerError> {
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
    Ok(aside
        .strip_prefix(root)
        .map_or_else(|_| aside.display().to_string(), |p| p.display().to_string()))
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
            // One whose journal went back in place (an apply killed midway) is
            // no journal set aside any more.
            let applied = fs::symlink_metadata(e.path().join("journal")).is_err();
            (name.starts_with(SET_ASIDE_PREFIX) && !applied).then(|| {
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

/// The first `needed` bytes of the backups file: refused if it holds fewer (an
/// entry's backup would be truncated) or if `needed` is past what Kiln reads.
fn read_backups(root: &Path, journal: &str, needed: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    if needed > MAX_BACKUPS {
        return Err(format!(
            "its backups claim {needed} bytes, more than Kiln reads"
        ));
    }
    let rel = format!("{journal}/{BACKUP_FILE}");
    let (file, stat) = match kiln_core::fs::open_below(root, &rel) {
        Ok(opened) => opened,
        // No backups needed, none there: a journal of renames only.
        Err(e) if needed == 0 && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(format!("its backups cannot be read: {e}")),
    };
    if stat.size < needed {
        return Err("its backups are truncated".to_owned());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(needed).unwrap_or(0));
    file.take(needed)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("its backups cannot be read: {e}"))?;
    if (bytes.len() as u64) < needed {
        return Err("its backups are truncated".to_owned());
    }
    Ok(bytes)
}

/// Checks the manifest and the backups before anything is changed: readable, every
/// path a plain path inside the project, every backup range inside the backups.
fn check_journal(root: &Path, journal_rel: &str, manifest: &[u8]) -> Result<Checked, String> {
    let journal: Journal =
        serde_json::from_slice(manifest).map_err(|e| format!("its manifest is damaged: {e}"))?;
    let named = journal
        .renames
        .iter()
        .flat_map(|(a, b)| [a, b])
        .chain(journal.patched.iter().map(|(f, _)| f))
        .chain(&journal.created_dirs);
    // A link on a plain path is not the journal's fault (another program may have
    // swapped a folder for one while the operation ran): recovery passes that
    // entry by, and restores the others.
    for path in named {
        if !is_plain_relative(path) {
            return Err(format!(
                "it names {path:?}, which is not a path inside the project"
            ));
        }
    }
    // Only as much of the backups as the entries name is read, and only if the
    // file holds that much: a crafted range or a huge (or sparse) backups file
    // costs nothing before it is refused.
    let mut needed = 0u64;
    for (file, range) in &journal.patched {
        if let Some((start, len)) = range {
            let end = start
                .checked_add(*len)
                .ok_or_else(|| format!("its backup of {file} is truncated"))?;
            needed = needed.max(end);
        }
    }
    let backups = read_backups(root, journal_rel, needed)?;
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
    let Checked { journal, backups } = match check_journal(root, JOURNAL_DIR, &bytes) {
        Ok(checked) => checked,
        Err(reason) => return set_aside(root, reason),
    };
    let there = |rel: &str| stat_below(root, rel).is_ok();
    let through_link = |rel: &str| goes_through_link(root, Path::new(rel));
    let mut restored: Vec<String> = Vec::new();
    let mut not_restored: Vec<(String, String)> = Vec::new();
    const LINKED: &str = "a symbolic link is on its path now (a folder replaced by another program): Kiln does not write through it";
    for (old, new) in journal.renames.iter().rev() {
        if through_link(old) || through_link(new) {
            not_restored.push((new.clone(), format!("not moved back to {old}: {LINKED}")));
            continue;
        }
        let case_only = old.to_lowercase() == new.to_lowercase();
        let moved_back = (|| -> Result<bool, CheckerError> {
            let mut moved = false;
            if there(new) && (!there(old) || case_only) {
                rename(root, new, old)?;
                moved = true;
            }
            let temp = case_rename_temp(old);
            if there(&temp) {
                rename_below(root, Path::new(&temp), Path::new(old))
                    .map_err(io_err(root.join(&temp)))?;
                moved = true;
            }
            Ok(moved)
        })();
        match moved_back {
            Ok(true) => restored.push(old.clone()),
            Ok(false) => {}
            Err(e) => not_restored.push((new.clone(), format!("not moved back to {old}: {e}"))),
        }
        crash_point()?;
    }
    for (k, (file, range)) in journal.patched.iter().enumerate() {
        let path = root.join(file);
        if through_link(file) {
            not_restored.push((file.clone(), LINKED.to_owned()));
            continue;
        }
        if let Some(Some(written)) = journal.written.get(k) {
            // Restore only what Kiln wrote; a file it never got to, or that another
            // program saved since, is left as it is.
            match read_own(root, file, MAX_BACKUPS) {
                Ok(now) if xxhash_rust::xxh3::xxh3_64(&now) == *written => {}
                Ok(now) if file == kiln_core::project::REDIRECT_FILE => {
                    if let Some(kept) = without_appended(&now, journal.log_appended.as_deref()) {
                        match kiln_core::fs::write_below(root, Path::new(file), &kept) {
                            Ok(_) => restored.push(file.clone()),
                            Err(e) => not_restored.push((file.clone(), e.to_string())),
                        }
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
                let put_back = (|| -> Result<(), CheckerError> {
                    let (folder, name) =
                        kiln_core::fs::folder_and_name(file).map_err(io_err(&path))?;
                    let dir =
                        open_folder_below(root, Path::new(folder), false).map_err(io_err(&path))?;
                    // The temporary is named for this process, never for the pid the
                    // journal (a file anyone can edit) gives.
                    let (replacement, mut out) =
                        Replacement::start(&dir, std::ffi::OsStr::new(name))
                            .map_err(io_err(&path))?;
                    std::io::Write::write_all(&mut out, original).map_err(io_err(&path))?;
                    out.sync_all().map_err(io_err(&path))?;
                    if let Err(crash) = crash_point() {
                        replacement.leave_behind();
                        return Err(crash);
                    }
                    replacement
                        .place(out, Durability::Unflushed)
                        .map_err(io_err(&path))
                })();
                match put_back {
                    Ok(()) => restored.push(file.clone()),
                    Err(e) if crashed() => return Err(e),
                    Err(e) => not_restored.push((file.clone(), e.to_string())),
                }
            }
            None => {
                if remove_below(root, Path::new(file), false).is_ok() {
                    restored.push(file.clone());
                }
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
    restored.sort();
    restored.dedup();
    if not_restored.is_empty() {
        fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
        return Ok(Recovery::RolledBack { restored });
    }
    // What could not be reached keeps its backup, in the journal set aside: `kiln
    // recover` shows it and applies it once the path is the project's again.
    let listed: Vec<String> = (not_restored.iter())
        .map(|(file, why)| format!("{file}: {why}"))
        .collect();
    let reason = format!(
        "restored {} file(s); could not restore {}: {}",
        restored.len(),
        not_restored.len(),
        listed.join("; ")
    );
    let folder = move_aside(root, &reason)?;
    Ok(Recovery::Partial {
        restored,
        not_restored,
        folder,
    })
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

/// What `kiln recover --apply` would do with one entry of a set-aside journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restoration {
    /// Put the file's backed-up bytes back.
    Restore,
    /// Remove the file (the operation made it).
    Remove,
    /// Move the file or folder back to the path it had (`to`).
    MoveBack {
        /// Where it goes back to, from the project root.
        to: String,
    },
    /// Nothing: the file is not what Kiln wrote there (saved since), and is kept.
    ChangedSince,
    /// It cannot be reached without a link (or its folder is not there), so it
    /// would stay as it is: why.
    Unreachable(String),
}

/// One set-aside journal: where it is, why, and what applying it would do to
/// each file it names.
#[derive(Debug, Clone)]
pub struct SetAside {
    /// The folder, from the project root (`.kiln/journal.rejected-...`).
    pub folder: String,
    /// Why it was set aside.
    pub reason: String,
    /// Each file or folder it names, with what applying it would do; empty if the
    /// journal cannot be read at all (`reason` says why).
    pub entries: Vec<(String, Restoration)>,
    /// Why its manifest or backups cannot be used, if so (it can then only be
    /// discarded).
    pub unusable: Option<String>,
}

/// The name of a set-aside journal as given (`.kiln/journal.rejected-...`, or the
/// folder's own name), checked to be one: a plain name inside a real `.kiln`.
fn set_aside_name(root: &Path, given: &str) -> Result<String, CheckerError> {
    let name = given
        .trim_end_matches('/')
        .strip_prefix(&format!("{}/", kiln_core::own_folder::DIR))
        .unwrap_or(given.trim_end_matches('/'));
    let plain = name.starts_with(SET_ASIDE_PREFIX) && !name.contains('/') && !name.contains("..");
    let rel = format!("{}/{name}", kiln_core::own_folder::DIR);
    match stat_below(root, &rel) {
        Ok((kiln_core::fs::Kind::Folder, _)) if plain => Ok(name.to_owned()),
        _ => Err(crate::error::refused(
            root.join(given),
            "not a set-aside journal of this project (kiln recover lists them)",
        )),
    }
}

/// Every set-aside journal of the project at `root`, with what applying each
/// would do; nothing is changed.
pub fn preview_set_aside(root: &Path) -> Vec<SetAside> {
    set_aside_journals(root)
        .into_iter()
        .map(|(folder, reason)| {
            let journal_rel = format!("{folder}/journal");
            let checked = read_own(root, &format!("{journal_rel}/{JOURNAL_FILE}"), MAX_MANIFEST)
                .map_err(|e| format!("its manifest cannot be read: {e}"))
                .and_then(|bytes| check_journal(root, &journal_rel, &bytes));
            match checked {
                Ok(Checked { journal, .. }) => SetAside {
                    folder,
                    reason,
                    entries: preview(root, &journal),
                    unusable: None,
                },
                Err(why) => SetAside {
                    folder,
                    reason,
                    entries: Vec::new(),
                    unusable: Some(why),
                },
            }
        })
        .collect()
}

/// What [`recover`] would do with each entry of `journal`, in its order.
fn preview(root: &Path, journal: &Journal) -> Vec<(String, Restoration)> {
    let there = |rel: &str| stat_below(root, rel).is_ok();
    let through_link = |rel: &str| goes_through_link(root, Path::new(rel));
    let linked = || Restoration::Unreachable("a symbolic link is on its path".to_owned());
    let mut out = Vec::new();
    for (old, new) in journal.renames.iter().rev() {
        if through_link(old) || through_link(new) {
            out.push((new.clone(), linked()));
        } else if there(new) && !there(old) {
            out.push((new.clone(), Restoration::MoveBack { to: old.clone() }));
        }
    }
    for (k, (file, range)) in journal.patched.iter().enumerate() {
        if through_link(file) {
            out.push((file.clone(), linked()));
            continue;
        }
        if let Some(Some(written)) = journal.written.get(k) {
            match read_own(root, file, MAX_BACKUPS) {
                Ok(now) if xxhash_rust::xxh3::xxh3_64(&now) == *written => {}
                Ok(_) => {
                    out.push((file.clone(), Restoration::ChangedSince));
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && range.is_some() => {}
                Err(e) => {
                    out.push((file.clone(), Restoration::Unreachable(e.to_string())));
                    continue;
                }
            }
        }
        let folder = kiln_core::fs::folder_and_name(file).map(|(folder, _)| folder);
        let reachable =
            folder.and_then(|folder| open_folder_below(root, Path::new(folder), false).map(|_| ()));
        out.push(match (range, reachable) {
            (_, Err(e)) => (file.clone(), Restoration::Unreachable(e.to_string())),
            (Some(_), Ok(())) => (file.clone(), Restoration::Restore),
            (None, Ok(())) => (file.clone(), Restoration::Remove),
        });
    }
    out
}

/// Applies the set-aside journal `given` (as [`preview_set_aside`] names it): it
/// goes back in place of the journal and is recovered as after a crash, under
/// the project's exclusive lock; what still cannot be reached is set aside again.
/// Refused while another operation's journal is there.
pub fn apply_set_aside(root: &Path, given: &str) -> Result<Recovery, CheckerError> {
    let lock = super::lock::exclusive(root, &|| {})?;
    sweep_applied(root);
    let name = set_aside_name(root, given)?;
    let dir = journal_dir(root);
    if fs::symlink_metadata(&dir).is_ok() {
        // An interrupted operation of its own comes first.
        recover(root)?;
    }
    if fs::symlink_metadata(&dir).is_ok() {
        return Err(crate::error::refused(
            dir,
            "another operation's journal is there; run a command on the project first",
        ));
    }
    let aside = root.join(kiln_core::own_folder::DIR).join(&name);
    // Killed after this rename, the journal is where any command recovers it, and
    // what is left aside (its note) is listed no more and swept by the next apply
    // or discard.
    fs::rename(aside.join("journal"), &dir).map_err(io_err(aside.join("journal")))?;
    crash_point()?;
    let recovered = recover(root)?;
    crash_point()?;
    fs::remove_dir_all(&aside).map_err(io_err(&aside))?;
    lock.advance()?;
    Ok(recovered)
}

/// Removes what interrupted applies left set aside: folders whose journal went
/// back in place (see [`apply_set_aside`]). Under the exclusive lock.
fn sweep_applied(root: &Path) {
    let Some(Ok(entries)) = existing_kiln_dir(root).map(fs::read_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let is_aside =
            (entry.file_name().to_str()).is_some_and(|n| n.starts_with(SET_ASIDE_PREFIX));
        let path = entry.path();
        if is_aside
            && entry.file_type().is_ok_and(|t| t.is_dir())
            && fs::symlink_metadata(path.join("journal")).is_err()
        {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// Deletes the set-aside journal `given` (as [`preview_set_aside`] names it),
/// backups and all: the files it names stay as they are.
pub fn discard_set_aside(root: &Path, given: &str) -> Result<(), CheckerError> {
    let _lock = super::lock::exclusive(root, &|| {})?;
    sweep_applied(root);
    let name = set_aside_name(root, given)?;
    let aside = root.join(kiln_core::own_folder::DIR).join(&name);
    fs::remove_dir_all(&aside).map_err(io_err(&aside))
}
