//! # dependency_checker
//!
//! The reference index, cache, rename/move patching and file watching of Kiln
//! ("What Is In a Name?"): resources refer to each other by canonical path, and this
//! crate keeps every such reference known, so renames can patch them all.
#![warn(missing_docs)]

pub mod scan;

pub use kiln_core::{PathError, ResourcePath};
