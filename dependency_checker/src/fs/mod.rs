//! The project's files as Kiln touches them: which paths are the project's
//! ([`is_excluded`]), reaching them below the root without following a link
//! (`below`), the parallel walk, Kiln's own folder and the project lock.

mod below;
pub(crate) mod journal;
mod kiln_dir;
mod lock;
mod paths;
pub(crate) mod walk;

pub(crate) use below::{
    FileStat, FolderCursor, folder_and_name, list_below, open_below, stat_below, stat_of,
};
pub use kiln_dir::existing_kiln_dir;
pub(crate) use kiln_dir::kiln_dir;
pub use lock::{LOCK_FILE, ProjectLock};
pub(crate) use lock::{exclusive, shared};
pub(crate) use paths::is_plain_relative;
pub use paths::{is_excluded, is_within, split_extension};
