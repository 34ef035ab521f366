//! The project lock: one writer at a time, and no reader of a half-applied operation.
//!
//! An advisory lock (`std::fs::File::lock`, `flock` on Linux) on `.kiln/lock`,
//! which the kernel releases when the process
//! holding it dies (so a `kill -9` never leaves the project locked). An operation
//! that changes project files (a move, a fix, crash recovery) holds it exclusively
//! from before its journal is written until the journal is deleted; a full index
//! build holds it shared, so it waits for such an operation to finish (or be
//! recovered) and never indexes files half patched. Nothing holds it between
//! operations: an editor and `kiln watch` running for hours do not block a `kiln mv`
//! in a terminal, and see its result through their watchers.
//!
//! A lock is taken on a file descriptor of its own, so two locks in one process
//! conflict like two processes': nothing here takes a lock while holding another.
//!
//! The lock file also holds the project's *generation*: a counter that every
//! operation which changed project files advances before it lets go of the lock.
//! A reader notes the generation while it holds the lock shared (so the files it
//! indexed are exactly that generation's); a writer that planned on what it read
//! compares, under the exclusive lock, the generation it noted with the one there
//! now, and plans again when another operation has changed the project in between.
//! That is what makes two commands at once (`kiln mv` beside `kiln check --fix`,
//! two moves onto one name) end as one ran after the other: a plan never applies
//! to a project it was not made on. A counter rather than a walk of the project
//! under the lock: it costs one 8-byte read, where a stat of every file cost a
//! warm check's time (tens of milliseconds at 20,000 files) on every move.

use std::fs::{self, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use super::kiln_dir::kiln_dir;
use crate::error::{CheckerError, io_err};

/// The lock file, relative to the project root.
pub const LOCK_FILE: &str = kiln_core::own_folder::LOCK;

/// How long a lock is waited for before the caller is told that it waits.
const PATIENCE: Duration = Duration::from_millis(300);

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct ProjectLock {
    file: Option<fs::File>,
}

impl ProjectLock {
    /// The project's generation now (see the module); 0 where the project has no
    /// lock file (a read-only folder, which nothing can be changing).
    pub fn generation(&self) -> u64 {
        self.file.as_ref().map_or(0, generation_in)
    }

    /// Advances the generation: the holder of the exclusive lock changed project
    /// files. Returns the new generation.
    pub(crate) fn advance(&self) -> Result<u64, CheckerError> {
        let Some(file) = self.file.as_ref() else {
            return Ok(0);
        };
        let next = self.generation().wrapping_add(1);
        let written =
            kiln_core::os::write_at(file, &next.to_le_bytes(), 0).map_err(io_err(LOCK_FILE))?;
        if written != 8 {
            return Err(crate::error::refused(
                LOCK_FILE,
                "the project's generation could not be written whole",
            ));
        }
        Ok(next)
    }
}

/// The generation written in the lock file `file`. A lock file made before
/// generations existed (or emptied) is generation 0; a crafted one is just some
/// number.
fn generation_in(file: &fs::File) -> u64 {
    let mut bytes = [0u8; 8];
    match kiln_core::os::read_at(file, &mut bytes, 0) {
        Ok(8) => u64::from_le_bytes(bytes),
        _ => 0,
    }
}

/// The generation of the project at `root` as its lock file says now, read without
/// taking the lock (see the module): for a checker built from an index, whose
/// builder held the lock, and for a long-running checker asking whether another
/// process changed the project.
pub(crate) fn generation_now(root: &Path) -> u64 {
    let Ok(folder) =
        kiln_core::fs::open_folder_below(root, Path::new(kiln_core::own_folder::DIR), false)
    else {
        return 0;
    };
    // Never through a link, never waiting on a FIFO, only a regular file.
    match kiln_core::fs::open_regular_at(&folder, "lock") {
        Ok((file, _)) => generation_in(&file),
        Err(_) => 0,
    }
}

fn open_lock_file(root: &Path) -> Result<fs::File, CheckerError> {
    let path = kiln_dir(root)?.join("lock");
    let folder =
        kiln_core::fs::open_folder_below(root, Path::new(kiln_core::own_folder::DIR), false)
            .map_err(io_err(&path))?;
    // Never through a link, never a FIFO (the open does not wait on one); Kiln
    // writes the generation into it, so never a file that is also somewhere else
    // (a hard link planted there).
    match kiln_core::fs::open_own_file_at(&folder, "lock") {
        Ok(file) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(crate::error::refused(
            &path,
            "is not a regular file of its own (a link, or a folder); remove it",
        )),
        Err(e) => Err(io_err(&path)(e)),
    }
}

fn acquire(file: &fs::File, exclusive: bool, waiting: &dyn Fn()) -> Result<(), std::io::Error> {
    let try_lock = || {
        if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        }
    };
    let started = Instant::now();
    loop {
        match try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {
                if started.elapsed() >= PATIENCE {
                    waiting();
                    return if exclusive {
                        file.lock()
                    } else {
                        file.lock_shared()
                    };
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// Takes the lock for an operation that changes project files, waiting for any
/// other holder; `waiting` is called once if that takes a moment.
pub(crate) fn exclusive(root: &Path, waiting: &dyn Fn()) -> Result<ProjectLock, CheckerError> {
    let file = open_lock_file(root)?;
    acquire(&file, true, waiting).map_err(io_err(root.join(LOCK_FILE)))?;
    Ok(ProjectLock { file: Some(file) })
}

/// Takes the lock for reading the whole project, waiting for an operation in
/// progress to end. A project where the lock cannot be made (a read-only folder) is
/// read without it: nothing can be writing there either.
pub(crate) fn shared(root: &Path, waiting: &dyn Fn()) -> Result<ProjectLock, CheckerError> {
    let Ok(file) = open_lock_file(root) else {
        return Ok(ProjectLock { file: None });
    };
    acquire(&file, false, waiting).map_err(io_err(root.join(LOCK_FILE)))?;
    Ok(ProjectLock { file: Some(file) })
}
