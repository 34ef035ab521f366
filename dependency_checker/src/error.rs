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
    /// An operation stopped after it had changed files, and put them back as they
    /// were: `cause` says why it stopped. Files it could not reach to put back
    /// are listed, with the set-aside journal that keeps their backups (`kiln
    /// recover` shows and applies it).
    #[error("{cause}; {}", rolled_back(restored, not_restored, folder.as_deref()))]
    RolledBack {
        /// Why the operation stopped.
        cause: Box<CheckerError>,
        /// The files it had changed and put back, from the project root.
        restored: Vec<String>,
        /// The files it could not put back, with why.
        not_restored: Vec<(String, String)>,
        /// The journal set aside with their backups, if any.
        folder: Option<String>,
    },
    /// A folder holding a file to patch was moved or replaced by another program
    /// while the files were being replaced; the operation stopped and was rolled
    /// back.
    #[error(
        "{folder} was moved or replaced by another program while files in it were being patched; nothing more was written and the operation was rolled back"
    )]
    FolderMoved {
        /// The folder, from the project root.
        folder: String,
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
        ) || matches!(self, CheckerError::RolledBack { cause, not_restored, .. }
            if not_restored.is_empty() && cause.asks_to_plan_again())
    }
}

/// What [`CheckerError::RolledBack`] says of the files put back and not.
fn rolled_back(
    restored: &[String],
    not_restored: &[(String, String)],
    folder: Option<&str>,
) -> String {
    let list = |files: &mut dyn Iterator<Item = &str>| {
        let files: Vec<&str> = files.collect();
        let shown = files
            .iter()
            .take(10)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        match files.len() {
            0..=10 => shown,
            n => format!("{shown} and {} more", n - 10),
        }
    };
    let mut said = format!(
        "the {} file(s) it had changed were restored ({})",
        restored.len(),
        list(&mut restored.iter().map(String::as_str))
    );
    if !not_restored.is_empty() {
        said.push_str(&format!(
            "; {} could not be reached to check or restore ({}); their backups are kept in {}: `kiln recover` shows and applies them",
            not_restored.len(),
            list(&mut not_restored.iter().map(|(f, _)| f.as_str())),
            folder.unwrap_or(".kiln")
        ));
    }
    said
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
