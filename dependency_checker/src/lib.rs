//! # dependency_checker
//!
//! The reference index, cache, rename/move patching and file watching of the Kiln
//! editor ("What Is In a Name?"). Built out in its own issue; for now it only
//! re-exports the canonical path rules it will enforce.
#![warn(missing_docs)]

pub use kiln_core::{PathError, ResourcePath};
