//! Resolving references to files: the one rule for what a reference names
//! (`target.rs`), the lean resolution a check builds (`resolution.rs`), the lookup
//! kept current change by change (`lookup.rs`), and the whole `petgraph` graph the
//! other two are tested against (`graph.rs`, behind the `oracle` feature).

#[cfg(any(test, feature = "oracle"))]
mod graph;
mod lookup;
mod resolution;
mod target;

#[cfg(any(test, feature = "oracle"))]
pub use graph::Graph;
pub use lookup::Lookup;
pub(crate) use lookup::keys_naming;
pub use resolution::Resolution;
pub(crate) use target::resolve;
pub use target::{ResolvedRef, ResolvedReferences, Target};
