//! The project lock: one writer at a time, and no reader of a half-applied operation.
//!
//! An advisory `flock` on `.kiln/lock`, which the kernel releases when the process
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

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, flock};

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
    if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Err(CheckerError::Refused(format!(
            "{} is not a regular file; remove it",
            path.display()
        )));
    }
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err(&path))
}

fn acquire(file: &fs::File, exclusive: bool, waiting: &dyn Fn()) -> Result<(), std::io::Error> {
    let (try_op, wait_op) = if exclusive {
        (
            FlockOperation::NonBlockingLockExclusive,
            FlockOperation::LockExclusive,
        )
    } else {
        (
            FlockOperation::NonBlockingLockShared,
            FlockOperation::LockShared,
        )
    };
    let started = Instant::now();
    loop {
        match flock(file, try_op) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {
                if started.elapsed() >= PATIENCE {
                    waiting();
                    return flock(file, wait_op).map_err(std::io::Error::from);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e.into()),
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
