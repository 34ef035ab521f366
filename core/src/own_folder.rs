//! Kiln's own folder in a project, `.kiln/`, and everything Kiln keeps there: one
//! table, so that no crate spells a path of its own. Everything here is made again
//! from the project (a cache, a lock, a build, a note); `.kiln/` is ignored by git
//! (`new_project` writes the `.gitignore` line, the index cache a `.gitignore` of
//! its own inside the folder).
//!
//! | path | kept by | what it is |
//! |---|---|---|
//! | [`INDEX_CACHE`] | the dependency checker | the reference index between runs |
//! | [`LOCK`] | the dependency checker | one writer at a time |
//! | [`JOURNAL`] | the dependency checker | a move's backups until it is done |
//! | [`SYNC_COOKIE_PREFIX`] | the watcher | files written to know a batch is seen |
//! | [`QUERY_SOCKET`] | `kiln watch`, the editor | commands answered for a terminal |
//! | [`RECOVERY`] | the editor | unsaved edits kept for a crash |
//! | [`THUMBNAILS`] | the editor | the asset browser's pictures |
//! | [`PLUGINS`] | the plugin host | plugin builds and their private copies |
//! | [`SDK`] | the plugin host | the plugin SDK carried for builds |

/// The folder itself, at the project root.
pub const DIR: &str = ".kiln";
/// The `.gitignore` inside it, which keeps all of it out of version control.
pub const GITIGNORE: &str = ".kiln/.gitignore";
/// Where a file found at `.kiln` (not a folder) is set aside, numbered after the
/// first.
pub const NOT_A_FOLDER: &str = ".kiln.not-a-folder";
/// The reference index's cache.
pub const INDEX_CACHE: &str = ".kiln/index.bin";
/// The project's lock: one Kiln process writes at a time.
pub const LOCK: &str = ".kiln/lock";
/// The journal of a move or fix being applied (its backups and plan).
pub const JOURNAL: &str = ".kiln/journal";
/// The start of the names of the watcher's sync cookies.
pub const SYNC_COOKIE_PREFIX: &str = ".kiln/sync-";
/// The socket on which a running editor or `kiln watch` answers `kiln` commands.
pub const QUERY_SOCKET: &str = ".kiln/query.sock";
/// Unsaved edits of open levels, by level path.
pub const RECOVERY: &str = ".kiln/recovery";
/// The asset browser's thumbnails.
pub const THUMBNAILS: &str = ".kiln/thumbnails";
/// Plugin builds, and the private copies of their libraries that are loaded.
pub const PLUGINS: &str = ".kiln/plugins";
/// The plugin SDK carried into the project for plugin builds.
pub const SDK: &str = ".kiln/sdk/kiln_plugin";
