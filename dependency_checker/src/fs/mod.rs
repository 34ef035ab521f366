//! The project's files as the checker touches them. The path policy itself is
//! Kiln's one rule, in `kiln_core::fs` (which paths are the project's, reaching
//! them below the root without following a link, the one atomic replace); here
//! are what only the checker needs on top of it: the parallel walk, Kiln's own
//! folder `.kiln/`, the project lock, and the write-ahead journal that makes a
//! change to many files one transaction.

pub(crate) mod journal;
mod kiln_dir;
mod lock;
pub(crate) mod walk;

pub use journal::{
    Recovery, Restoration, SetAside, apply_set_aside, discard_set_aside, preview_set_aside,
};
pub(crate) use kiln_core::fs::{
    FileStat, FolderCursor, folder_and_name, is_plain_relative, list_below, open_below, stat_below,
};
pub use kiln_core::fs::{is_excluded, is_within, split_extension};
pub use kiln_dir::existing_kiln_dir;
pub(crate) use kiln_dir::kiln_dir;
pub use lock::{LOCK_FILE, ProjectLock};
pub(crate) use lock::{exclusive, generation_now, shared};
