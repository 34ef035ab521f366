//! A large level being opened on a worker thread (see `level_loading.rs`), and
//! what decides which levels open there.

use super::level_loading::{LevelLoad, OpeningStatus};

/// Levels from this size up open on a worker thread (about 25,000 entities of the
/// demo's kind; such a level takes a few tenths of a second to open).
pub const DEFAULT_BACKGROUND_OPEN_BYTES: u64 = 4 << 20;

/// The level opening on a worker, if any.
pub struct Opening {
    /// A large level being read, parsed and compiled on a worker thread.
    pub(super) load: Option<LevelLoad>,
    /// Levels at least this large open on a worker thread, with progress shown.
    pub(super) background_open_bytes: u64,
    /// Wakes the window (the GUI's repaint request) when the worker is done.
    pub(super) waker: Option<dependency_checker::watch::Waker>,
}

impl Opening {
    pub(super) fn new(waker: Option<dependency_checker::watch::Waker>) -> Self {
        Opening {
            load: None,
            background_open_bytes: DEFAULT_BACKGROUND_OPEN_BYTES,
            waker,
        }
    }

    /// The level being opened on a worker thread, if any.
    pub fn status(&self) -> Option<OpeningStatus> {
        self.load.as_ref().map(|o| o.status())
    }
}
