//! The layouts of the big levels the index re-read since it was built, so that
//! the next save of one is scanned by the entities that changed (see
//! `scan/resume.rs`): a running editor or `kiln watch` re-reads the level a
//! designer saves, again and again.

use std::sync::Arc;

use kiln_core::Registry;
use kiln_core::registry::ResourceFormat;

use super::entry::FileEntry;
use crate::hash::FastMap;
use crate::scan::{DeclaredRules, FileScan, LevelLayout, LevelScan, ScanScratch, scan_level};

/// Levels smaller than this are scanned whole: under 2 ms, and their layouts
/// would be kept for nothing.
pub(crate) const KEPT_FROM: usize = 256 * 1024;

/// The layouts kept, by path.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeptLayouts {
    layouts: FastMap<Arc<str>, Arc<LevelLayout>>,
    /// How many scans were resumed from a kept layout (tests and benchmarks).
    resumed: u64,
}

impl KeptLayouts {
    /// Whether a file of type `ext` and `len` bytes is scanned here.
    pub(crate) fn takes(registry: &Registry, ext: &str, len: usize) -> bool {
        len >= KEPT_FROM
            && matches!(
                registry.resource_type(ext).map(|t| &t.format),
                Some(ResourceFormat::Entities)
            )
    }

    /// Scans the new content of `path` (`bytes`, hashing to `hash`), resuming from
    /// the layout kept for `previous` if there is one, and keeps the new layout.
    pub(crate) fn scan(
        &mut self,
        scratch: &mut ScanScratch,
        rules: (&Registry, &DeclaredRules),
        (path, ext): (&Arc<str>, &str),
        (bytes, hash): (&[u8], u64),
        previous: Option<&FileEntry>,
    ) -> FileScan {
        let kept = previous.and_then(|prev| {
            let layout = self.layouts.get(path)?;
            layout.describes(prev.hash).then(|| (prev, layout.clone()))
        });
        let previous = kept.as_ref().map(|(prev, layout)| (prev.scan(), &**layout));
        let (scan, layout, how) = scan_level(scratch, rules, ext, (bytes, hash), previous);
        if how == LevelScan::Resumed {
            self.resumed += 1;
        }
        match layout {
            Some(layout) => {
                self.layouts.insert(path.clone(), Arc::new(layout));
            }
            None => self.forget(path),
        }
        scan
    }

    /// Whether a layout of `path`'s content hashing to `hash` is kept.
    pub(crate) fn describes(&self, path: &str, hash: u64) -> bool {
        self.layouts.get(path).is_some_and(|l| l.describes(hash))
    }

    /// Keeps `layout` for `path`.
    pub(crate) fn keep(&mut self, path: Arc<str>, layout: LevelLayout) {
        self.layouts.insert(path, Arc::new(layout));
    }

    /// Drops the layout of `path` (its file is gone, or moved).
    pub(crate) fn forget(&mut self, path: &str) {
        self.layouts.remove(path);
    }

    pub(crate) fn resumed(&self) -> u64 {
        self.resumed
    }

    pub(crate) fn layouts_kept(&self) -> usize {
        self.layouts.len()
    }
}

/// Reading and scanning a big level to keep its layout, apart from the index
/// (see `Index::level_layout_job`): it holds what it needs, and runs anywhere.
#[derive(Debug, Clone)]
pub struct LevelLayoutJob {
    pub(super) root: std::path::PathBuf,
    pub(super) path: Arc<str>,
    pub(super) ext: String,
    pub(super) size: u64,
    pub(super) hash: u64,
    pub(super) registry: Arc<Registry>,
    pub(super) rules: Arc<DeclaredRules>,
}

/// A level's layout made by a [`LevelLayoutJob`], for `Index::take_level_layout`.
#[derive(Debug, Clone)]
pub struct KeptLevelLayout {
    pub(super) path: Arc<str>,
    pub(super) layout: LevelLayout,
}

impl LevelLayoutJob {
    /// Reads the file below the root (never through a link) and scans it; `None`
    /// if it is no longer the content the index has.
    pub fn run(self) -> Option<KeptLevelLayout> {
        let folders = crate::fs::FolderCursor::default();
        let (file, stat) = folders.open_file(&self.root, &self.path).ok()?;
        // Grown since it was indexed: the next update takes it.
        if stat.size != self.size {
            return None;
        }
        let mut bytes = Vec::with_capacity(stat.size as usize + 1);
        std::io::Read::read_to_end(&mut std::io::Read::take(file, self.size + 1), &mut bytes)
            .ok()?;
        if xxhash_rust::xxh3::xxh3_64(&bytes) != self.hash {
            return None;
        }
        let rules = (&*self.registry, &*self.rules);
        let mut scratch = ScanScratch::default();
        let (_, layout, _) = scan_level(&mut scratch, rules, &self.ext, (&bytes, self.hash), None);
        Some(KeptLevelLayout {
            path: self.path,
            layout: layout?,
        })
    }
}
