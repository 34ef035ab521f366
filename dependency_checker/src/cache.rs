//! The index cache under `.kiln/` (filled in below).

use kiln_core::Registry;
use std::path::Path;

use crate::error::CheckerError;
use crate::index::Index;

/// Loads the cached index of the project at `root`, if there is a valid one.
pub fn load(_root: &Path, _registry: &std::sync::Arc<Registry>) -> Option<Index> {
    None
}

/// Saves `index` as the project's cache.
pub fn save(_index: &Index) -> Result<(), CheckerError> {
    Ok(())
}
