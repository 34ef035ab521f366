//! What reading files for the index keeps from one file to the next, by a
//! thread of a walk and by the index between updates.

use super::codec::WalkEncoder;
use crate::scan::ScanScratch;

/// What a thread reading many files keeps from one to the next: the file's bytes,
/// the scan's buffers, and for a first index kept encoded, its encoder.
#[derive(Default)]
pub(super) struct ReadScratch {
    pub(super) bytes: Vec<u8>,
    pub(super) scan: ScanScratch,
    pub(super) encoder: Option<WalkEncoder>,
}

/// The [`ReadScratch`] an index keeps from one update to the next: a running
/// editor or `kiln watch` re-reads the level a designer saves again and again,
/// and a fresh buffer for each read of a 28 MB level was a third of the save's
/// time in page faults. A copy of the index starts with none.
#[derive(Default)]
pub(super) struct KeptScratch(pub(super) ReadScratch);

impl Clone for KeptScratch {
    fn clone(&self) -> Self {
        KeptScratch::default()
    }
}

impl std::fmt::Debug for KeptScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptScratch")
    }
}
