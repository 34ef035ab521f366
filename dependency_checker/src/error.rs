//! Errors of the dependency checker. Each names the file or path it concerns.

use std::io;
use std::path::PathBuf;

/// What can go wrong while indexing, renaming or watching.
#[derive(Debug, thiserror::Error)]
pub enum CheckerError {
    /// The folder is not a project, or its project file is malformed.
    #[error(transparent)]
    Project(#[from] kiln_core::ProjectError),
    /// An operating-system error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// An operation that cannot be done on `path` (a move, a lock, Kiln's own
    /// folder); nothing was changed.
    #[error("{}: {reason}", path.display())]
    Refused {
        /// What the refusal concerns, from the project root where it is inside.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// One move of a request that cannot be done; nothing was changed.
    #[error("cannot move {from} to {to}: {reason}")]
    MoveRefused {
        /// The file or folder to move.
        from: String,
        /// Where it was to go.
        to: String,
        /// Why not.
        reason: String,
    },
    /// A file to patch changed on disk after the plan was made; nothing was changed.
    #[error("{file} changed on disk since it was indexed; nothing was changed (plan again)")]
    Changed {
        /// The file, from the project root.
        file: String,
    },
    /// Another Kiln operation (a move, a fix, in another process) changed the
    /// project's files after the plan was made on them; nothing was changed.
    #[error(
        "another Kiln operation changed the project since it was read; nothing was changed (plan again)"
    )]
    ProjectChanged,
    /// A file to patch does not have the layout its type requires (a `.glb` whose
    /// chunks are broken); nothing was changed.
    #[error("{file}: {message}; nothing was changed")]
    Malformed {
        /// The file, from the project root.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The journal of an interrupted operation cannot be used.
    #[error("{path}: {message}")]
    Journal {
        /// The journal's manifest.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The file watcher could not start.
    #[error("cannot watch {path}: {message}")]
    Watch {
        /// The folder.
        path: PathBuf,
        /// What the watcher said.
        message: String,
    },
}

impl CheckerError {
    /// Whether the operation refused because what it was planned on changed
    /// ([`CheckerError::Changed`], [`CheckerError::ProjectChanged`]): reading the
    /// project again and planning again is the answer.
    pub fn asks_to_plan_again(&self) -> bool {
        matches!(
            self,
            CheckerError::Changed { .. } | CheckerError::ProjectChanged
        )
    }
}

/// A [`CheckerError::Refused`] about `path`.
pub(crate) fn refused(path: impl Into<PathBuf>, reason: impl Into<String>) -> CheckerError {
    CheckerError::Refused {
        path: path.into(),
        reason: reason.into(),
    }
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> CheckerError {
    let path = path.into();
    move |source| CheckerError::Io { path, source }
}
