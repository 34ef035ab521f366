//! The reference index: every file of a project with the references it contains,
//! built by a parallel walk and kept current file by file.
//!
//! Each entry is keyed by size, modification time and content hash. Rebuilding with a
//! previous index (or the one its cache holds, `cache.rs`) re-reads only files whose size
//! or time changed, and re-parses only files whose content hash changed.

mod build;
pub(crate) mod codec;
mod entry;
mod files;
mod levels;
mod redirects;
mod scratch;
mod update;

pub use build::BuildOptions;
pub(crate) use codec::{EncodedScan, Mentions, ScanCell, SpellingKey};
pub(crate) use entry::WriteScans;
pub use entry::{FileEntry, Scanned, Written};
pub use files::{BuildStats, Index, WalkIssue};
pub use levels::{KeptLevelLayout, LevelLayoutJob};
pub use redirects::{REDIRECT_FILE, Redirects};
