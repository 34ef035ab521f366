//! # dependency_checker
//!
//! Kiln's Dependency Checker ("What Is In a Name?"): resources refer to each other by
//! canonical path, and this crate keeps every such reference known, so that renames and
//! moves can patch them all and nothing breaks silently.
//!
//! The crate is built in floors, each importing only the ones below it:
//!
//! 1. [`fs`]: the project's files as Kiln touches them: which paths are the
//!    project's, reaching them below the root without following a link, the
//!    parallel walk, Kiln's own folder `.kiln/`, the project lock, and the
//!    write-ahead journal that makes a change to many files one transaction.
//! 2. `scan/`: one file's bytes to its references, typed by the registry's
//!    schemas or by the project's declared rules ([`DeclaredRules`]), or generic
//!    (any string that could name a file), each with its byte span, line, column
//!    and JSON pointer; the relative URIs of glTF files are read with
//!    `kiln_core::gltf`. [`watch`] turns file-system events into the paths an
//!    update takes.
//! 3. `index/`: every file of the project with its references ([`Index`]), keyed
//!    by size, time and content hash, built by the walk and kept current file by
//!    file; the scans stay in a compact encoding until asked for
//!    (`index/codec.rs`); the redirect log of moves.
//! 4. [`resolve`]: what each reference names, by one rule: the lean
//!    [`resolve::Resolution`] of a check, the [`resolve::Lookup`] kept current
//!    change by change, and the whole graph they are tested against.
//! 5. [`check`]: what `kiln check` reports ([`check::Finding`]).
//! 6. `cache.rs`: the index and the last check's findings in `.kiln/index.bin`
//!    ([`encode_cache`], [`decode_cache`]).
//! 7. The [`Checker`]: an open project's index, lookup, redirect log and cache held
//!    together for a command or the editor.
//! 8. [`ops`]: moves and fixes with `mv`'s semantics, planned against a checker
//!    and applied as one transaction, leaving it current and returning the
//!    [`ops::Operation`] that undoes them byte for byte. They sit above the checker
//!    because they are operations on it; the journal they write is below it,
//!    because opening a project recovers an interrupted one.
//!
//! ```no_run
//! use std::{path::Path, sync::Arc};
//! use dependency_checker::{BuildOptions, Checker};
//! use kiln_core::Registry;
//!
//! let checker = Checker::open(Path::new("projects/demo"), Arc::new(Registry::with_builtins()), &BuildOptions::default())?;
//! for place in checker.references_to("materials/bark.material") {
//!     println!("{}", place.place);
//! }
//! # Ok::<(), dependency_checker::CheckerError>(())
//! ```
#![warn(missing_docs)]

mod cache;
pub mod check;
mod checker;
pub mod compiles;
mod error;
pub mod fs;
mod hash;
mod index;
pub mod ops;
mod parallel;
pub mod resolve;
mod scan;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod test_files;
pub mod watch;

pub use cache::{decode as decode_cache, encode as encode_cache};
pub use checker::{ChangeReport, Checker, ProjectWrite, ReferenceView, save_file};
pub use error::CheckerError;
pub use index::{
    BuildOptions, BuildStats, FileEntry, Index, KeptLevelLayout, LevelLayoutJob, Redirects,
    Scanned, WalkIssue, Written,
};
pub use kiln_core::{PathError, ResourcePath};
pub use scan::{
    DeclaredRules, FileScan, Naming, PathSegment, RawReference, RefView, ScanError, scan_file,
};
