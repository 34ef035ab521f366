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

use std::fs::{self, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{FileType, Mode, OFlags};

use super::kiln_dir::kiln_dir;
use crate::error::{CheckerError, io_err};

/// The lock file, relative to the project root.
pub const LOCK_FILE: &str = ".kiln/lock";

/// How long a lock is waited for before the caller is told that it waits.
const PATIENCE: Duration = Duration::from_millis(300);

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct ProjectLock {
    _file: Option<fs::File>,
}

fn open_lock_file(root: &Path) -> Result<fs::File, CheckerError> {
    let path = kiln_dir(root)?.join("lock");
    let folder =
        kiln_core::fs::open_folder_below(root, Path::new(".kiln"), false).map_err(io_err(&path))?;
    // Never through a link, never a FIFO (the open does not wait on one).
    let flags =
        OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
    let fd = rustix::fs::openat(&folder, "lock", flags, Mode::from_raw_mode(0o666))
        .map_err(|e| io_err(&path)(e.into()))?;
    let regular = rustix::fs::fstat(&fd)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
    if !regular {
        return Err(crate::error::refused(
            &path,
            "is not a regular file; remove it",
        ));
    }
    Ok(fs::File::from(fd))
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
    Ok(ProjectLock { _file: Some(file) })
}

/// Takes the lock for reading the whole project, waiting for an operation in
/// progress to end. A project where the lock cannot be made (a read-only folder) is
/// read without it: nothing can be writing there either.
pub(crate) fn shared(root: &Path, waiting: &dyn Fn()) -> Result<ProjectLock, CheckerError> {
    let Ok(file) = open_lock_file(root) else {
        return Ok(ProjectLock { _file: None });
    };
    acquire(&file, false, waiting).map_err(io_err(root.join(LOCK_FILE)))?;
    Ok(ProjectLock { _file: Some(file) })
}
