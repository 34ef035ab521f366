//! Kiln's one rule for touching a project's files, used by every crate:
//!
//! - which paths are the project's ([`is_excluded`], `project_files.rs`);
//! - a file or folder below the root is reached folder by folder from the root
//!   ([`crate::os::Folder`]), each relative to the one before and never through a
//!   symbolic link,
//!   and only regular files are read ([`FolderCursor`], [`read_below`],
//!   [`write_below`], `below.rs`): a link planted in a project, or a folder swapped
//!   for one while Kiln works, never carries a read or a write outside it;
//! - one serial walk of a tree below a root ([`walk_below`], `walk.rs`);
//! - a file is written whole or not at all, through one temporary-name scheme, and
//!   one sweep removes what a killed process left ([`replace_at`],
//!   [`sweep_leftovers`], `atomic.rs`).
//!
//! None of it calls the operating system itself: that is [`crate::os`]'s.

mod atomic;
mod below;
mod project_files;
mod walk;

pub use atomic::{
    Durability, Replacement, create_new_at, leftover_of, remove_if_leftover, replace_at,
    replace_at_with, sweep_leftovers, temp_name, write_atomic, write_atomic_unsynced,
};
pub use below::{
    FileIdentity, FileStat, FolderCursor, Kind, append_below, create_dir_below, folder_and_name,
    goes_through_link, kind_below, list_below, open_at, open_below, open_dir_at, open_dir_below,
    open_folder_below, open_own_file_at, open_regular_at, read_argument, read_below,
    read_folder_below, read_regular, remove_below, remove_file_at, rename_below, stat_below,
    stat_of, stat_of_file, sync_folder, write_below, write_below_with,
};
pub use project_files::{
    BUILD_DIR, NON_RESOURCE_DIRS, is_excluded, is_plain_relative, is_scratch_name, is_within,
    split_extension,
};
pub use walk::{Entries, Step, Unreadable, walk_below};
