//! # dependency_checker
//!
//! Kiln's Dependency Checker ("What Is In a Name?"): resources refer to each other by
//! canonical path, and this crate keeps every such reference known, so that renames and
//! moves can patch them all and nothing breaks silently.
//!
//! * [`scan`] extracts references from a file, typed by the registry's schemas or by
//!   the project's declared [`rules`] (`kiln.project`'s `references`), or generic (any
//!   string that could name a file, whatever its spelling), each with its byte span,
//!   line, column and JSON pointer; [`gltf`] reads the relative URIs of glTF files
//!   (`.gltf`, and the JSON chunk of `.glb` files).
//! * [`index`] walks a project in parallel (see `walk.rs` for why not `ignore`) and
//!   keeps an entry per file keyed by size,
//!   time and content hash; [`cache`] persists it under `.kiln/`.
//! * [`graph`] resolves references into a `petgraph` graph and answers any query:
//!   the model that [`lookup`] (what references a file, kept current change by
//!   change) and [`resolution`] (every reference resolved once, lean, for a check)
//!   are tested against; [`findings`] is what `kiln check` reports.
//! * [`rename`] plans and applies moves of files and folders with `mv`'s semantics
//!   (never onto an existing path), patching references in place, crash-safely
//!   through a write-ahead journal (`journal.rs`), and returns the [`rename::Operation`]
//!   that undoes it byte for byte.
//! * [`redirects`] is the committed log of moves that repairs references arriving
//!   from other branches; [`watch`] keeps the index current as files change.
//!
//! ```no_run
//! use std::{path::Path, sync::Arc};
//! use dependency_checker::{Checker, index::BuildOptions};
//! use kiln_core::Registry;
//!
//! let checker = Checker::open(Path::new("projects/demo"), Arc::new(Registry::with_builtins()), &BuildOptions::default())?;
//! for place in checker.references_to("materials/bark.material") {
//!     println!("{}", place.place);
//! }
//! # Ok::<(), dependency_checker::CheckerError>(())
//! ```
#![warn(missing_docs)]

pub mod cache;
mod checker;
mod error;
pub mod findings;
pub mod gltf;
pub mod graph;
pub mod index;
mod journal;
pub mod lock;
pub mod lookup;
pub mod redirects;
pub mod rename;
pub mod resolution;
pub mod rules;
pub mod scan;
mod walk;
pub mod watch;

pub use checker::{ChangeReport, Checker, ReferenceView};
pub use error::CheckerError;
pub use kiln_core::{PathError, ResourcePath};

/// The hash map of the checker's hot paths (paths, reference texts): foldhash,
/// seeded per process, hashes a short string several times faster than the standard
/// SipHash, which was a tenth of building the graph of 100,000 files.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// The hash set of the same hot paths (see [`FastMap`]).
pub(crate) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// What each of `threads` returned, in order; a thread's panic goes on in the
/// caller as it was (the checker's work split over threads fails as it would on
/// one). Spawn them all before (into a `Vec`): a lazy iterator would start each
/// thread only once the one before had ended.
pub(crate) fn joined<'scope, T>(
    threads: impl IntoIterator<Item = std::thread::ScopedJoinHandle<'scope, T>>,
) -> Vec<T> {
    (threads.into_iter())
        .map(|thread| match thread.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        })
        .collect()
}
