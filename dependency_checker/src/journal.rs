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

use kiln_core::write_atomic;
use serde::{Deserialize, Serialize};

use crate::error::{CheckerError, io_err};

const JOURNAL_DIR: &str = ".kiln/journal";
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
    /// The process that wrote it: its temporary files are named after it
    /// ([`temp_name`]), so recovery can remove those a kill left behind.
    #[serde(default)]
    pub(crate) pid: u32,
}

/// The temporary file a patch of `path` is written to before it is renamed over it.
pub(crate) fn temp_name(path: &Path, pid: u32) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    dir.join(format!(".{name}.{pid}.kiln-tmp"))
}

fn journal_dir(root: &Path) -> PathBuf {
    root.join(JOURNAL_DIR)
}

/// Whether anything of an operation is in `.kiln/journal/`: a committed journal to
/// recover, or the beginnings of one a kill interrupted, to discard.
pub(crate) fn exists(root: &Path) -> bool {
    fs::symlink_metadata(journal_dir(root)).is_ok()
}

/// Whether an operation's journal is waiting to be recovered.
pub(crate) fn is_pending(root: &Path) -> bool {
    journal_dir(root).join(JOURNAL_FILE).exists()
}

/// Writes `bytes` to `path` and flushes it to disk.
fn write_durable(path: &Path, bytes: &[u8]) -> Result<(), CheckerError> {
    let mut f = fs::File::create(path).map_err(io_err(path))?;
    std::io::Write::write_all(&mut f, bytes).map_err(io_err(path))?;
    f.sync_all().map_err(io_err(path))
}

/// Commits to an operation: the backups and the manifest, both flushed to disk
/// before any project file changes. Project files are then replaced by rename
/// without a flush of their own (ext4 and most journaling file systems write a
/// renamed-over file's data before committing the rename), so a thousand-file
/// rename costs two flushes, not a thousand.
pub(crate) fn begin(root: &Path, journal: &Journal, backups: &[u8]) -> Result<(), CheckerError> {
    let dir = journal_dir(root);
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    write_durable(&dir.join(BACKUP_FILE), backups)?;
    let manifest = serde_json::to_vec(journal).map_err(|e| CheckerError::Journal {
        path: dir.join(JOURNAL_FILE),
        message: e.to_string(),
    })?;
    // The rename is the commit point: a kill while the manifest is being written
    // leaves only the temporary name, an operation that never started.
    let pending = dir.join(format!("{JOURNAL_FILE}.tmp"));
    write_durable(&pending, &manifest)?;
    fs::rename(&pending, dir.join(JOURNAL_FILE)).map_err(io_err(&pending))?;
    fs::File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(&dir))
}

/// Ends an operation that completed: its journal is no longer needed.
pub(crate) fn finish(root: &Path) -> Result<(), CheckerError> {
    let dir = journal_dir(root);
    fs::remove_dir_all(&dir).map_err(io_err(&dir))
}

/// Whether `rel` is a plain path inside the project: relative, `/`-separated, no
/// empty, `.` or `..` segment, and not inside `.kiln/` or `.git/`.
pub(crate) fn is_plain_relative(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.contains('\\')
        && !rel.contains('\0')
        && !matches!(rel.split('/').next(), Some(".kiln" | ".git"))
        && rel
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

/// Whether `rel`, with symbolic links followed as far as it exists, is inside `root`
/// (a canonical path): a link in the project must not carry recovery outside it.
pub(crate) fn stays_inside(root: &Path, rel: &str) -> bool {
    let mut probe = root.join(rel);
    loop {
        match fs::canonicalize(&probe) {
            Ok(real) => return real.starts_with(root),
            Err(_) => {
                if !probe.pop() {
                    return false;
                }
            }
        }
    }
}

/// The temporary name a case-only rename passes through (so that case-insensitive
/// file systems rename too).
pub(crate) fn case_rename_temp(old: &str) -> String {
    format!("{old}.kiln-case-rename")
}

/// Renames `old` to `new` (a file or a folder), creating `new`'s parent folders,
/// through a temporary name when only the case changes.
pub(crate) fn rename(root: &Path, old: &str, new: &str) -> Result<(), CheckerError> {
    let (from, to) = (root.join(old), root.join(new));
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    if old.to_lowercase() == new.to_lowercase() {
        let temp = root.join(case_rename_temp(old));
        fs::rename(&from, &temp).map_err(io_err(&from))?;
        fs::rename(&temp, &to).map_err(io_err(&to))
    } else {
        fs::rename(&from, &to).map_err(io_err(&from))
    }
}

/// Removes the folders `dirs` (project-relative), innermost first, each only if it
/// is empty.
pub(crate) fn remove_empty_dirs(root: &Path, dirs: &[String]) {
    let mut dirs: Vec<&String> = dirs.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
    for dir in dirs {
        let _ = fs::remove_dir(root.join(dir));
    }
}

/// Rolls back an operation that a crash interrupted, if its journal exists: renamed
/// files and folders go back, patched files get their backed-up content, created
/// folders are removed. Returns whether there was anything to recover.
pub fn recover(root: &Path) -> Result<bool, CheckerError> {
    let dir = journal_dir(root);
    let manifest = dir.join(JOURNAL_FILE);
    let bytes = match fs::read(&manifest) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Backups without a manifest: the crash came before the commit point and
            // no project file was touched.
            if dir.exists() {
                fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
            }
            return Ok(false);
        }
        Err(e) => return Err(io_err(&manifest)(e)),
    };
    let bad = |message: String| CheckerError::Journal {
        path: manifest.clone(),
        message,
    };
    let journal: Journal =
        serde_json::from_slice(&bytes).map_err(|e| bad(format!("unreadable: {e}")))?;
    let named = journal
        .renames
        .iter()
        .flat_map(|(a, b)| [a, b])
        .chain(journal.patched.iter().map(|(f, _)| f))
        .chain(&journal.created_dirs);
    for path in named {
        if !is_plain_relative(path) || !stays_inside(root, path) {
            return Err(bad(format!(
                "names {path:?}, which is not a path inside the project; nothing was recovered"
            )));
        }
    }
    for (old, new) in journal.renames.iter().rev() {
        let (from, to) = (root.join(new), root.join(old));
        let case_only = old.to_lowercase() == new.to_lowercase();
        if fs::symlink_metadata(&from).is_ok() && (fs::symlink_metadata(&to).is_err() || case_only)
        {
            rename(root, new, old)?;
        }
        let temp = root.join(case_rename_temp(old));
        if fs::symlink_metadata(&temp).is_ok() {
            fs::rename(&temp, &to).map_err(io_err(&temp))?;
        }
    }
    let backups = fs::read(dir.join(BACKUP_FILE)).map_err(io_err(dir.join(BACKUP_FILE)))?;
    for (k, (file, range)) in journal.patched.iter().enumerate() {
        let path = root.join(file);
        if let Some(Some(written)) = journal.written.get(k) {
            // Restore only what Kiln wrote; a file it never got to, or that another
            // program saved since, is left as it is.
            match fs::read(&path) {
                Ok(now) if xxhash_rust::xxh3::xxh3_64(&now) == *written => {}
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && range.is_some() => {}
                Err(_) => continue,
            }
        }
        match range {
            Some((start, len)) => {
                let original = usize::try_from(*start)
                    .ok()
                    .zip(usize::try_from(*len).ok())
                    .and_then(|(s, l)| backups.get(s..s.checked_add(l)?))
                    .ok_or_else(|| bad(format!("the backup of {file} is truncated")))?;
                write_atomic(&path, original).map_err(io_err(&path))?;
            }
            None => {
                let _ = fs::remove_file(&path);
            }
        }
    }
    for (file, _) in &journal.patched {
        let _ = fs::remove_file(temp_name(&root.join(file), journal.pid));
    }
    remove_empty_dirs(root, &journal.created_dirs);
    fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
    Ok(true)
}
