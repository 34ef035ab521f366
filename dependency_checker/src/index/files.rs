//! The index itself: every file of the project by path, in order (a folder's files
//! are together), with what the walk met besides files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kiln_core::Registry;

use super::entry::FileEntry;
use crate::fs::split_extension;
use crate::scan::DeclaredRules;

/// Something the walk found that is not an ordinary file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkIssue {
    /// A symbolic link that leads outside the project; never followed.
    LinkOutside(String),
    /// A file or folder whose name is not UTF-8.
    NotUtf8(PathBuf),
    /// A file that could not be read.
    Unreadable(String, String),
}

/// How much work a build did, for progress output and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Files found.
    pub files: usize,
    /// Files whose content was read (size or time changed, or no previous entry).
    pub read: usize,
    /// Files that were parsed (content hash changed, or no previous entry).
    pub parsed: usize,
    /// Of the files read, those modified so shortly before the walk began that a
    /// cache written now would not spare the next walk reading them again (see
    /// `RACY_WINDOW`).
    pub read_recent: usize,
}

/// The index of a project.
#[derive(Debug, Clone)]
pub struct Index {
    pub(super) root: PathBuf,
    pub(super) registry: Arc<Registry>,
    /// The project's declared reference rules (from `kiln.project`).
    pub(super) rules: Arc<DeclaredRules>,
    pub(super) files: BTreeMap<Arc<str>, FileEntry>,
    pub(super) issues: Vec<WalkIssue>,
    /// Every symbolic link met (never followed), sorted: whether one leads
    /// outside the project changes when the file it names is created or deleted,
    /// which [`Index::update`] then looks at again.
    pub(super) links: Vec<String>,
    pub(super) stats: BuildStats,
    /// When the entries were last checked against the disk (for racy-time detection).
    pub(super) checked_at_ns: u64,
    /// The layouts of the big levels re-read since the build.
    pub(super) levels: super::levels::KeptLayouts,
    /// What updates read files into.
    pub(super) scratch: super::scratch::KeptScratch,
}

impl Index {
    /// Makes the entry of `path` match no file on disk (its size and time) nor its
    /// content (its hash), so that the next update or walk reads the file and
    /// scans it again: for an entry found not to hold (a damaged cache can give a
    /// file's right size, time and hash with the wrong reference positions).
    pub(crate) fn distrust(&mut self, path: &str) {
        if let Some(entry) = self.files.get_mut(path) {
            entry.size = u64::MAX;
            entry.mtime_ns = 0;
            entry.hash = !entry.hash;
        }
    }
    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The registry whose schemas the index was built with.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
    /// The project's declared reference rules the index was built with.
    pub fn rules(&self) -> &Arc<DeclaredRules> {
        &self.rules
    }
    /// Every file, sorted by path.
    pub fn files(&self) -> impl Iterator<Item = &FileEntry> {
        self.files.values()
    }
    /// The files from `path` on, in path order (those starting with a prefix are
    /// together).
    pub fn files_from<'a>(&'a self, path: &str) -> impl Iterator<Item = &'a FileEntry> + use<'a> {
        self.files
            .range::<str, _>((std::ops::Bound::Included(path), std::ops::Bound::Unbounded))
            .map(|(_, e)| e)
    }
    /// The files inside the folder `folder` (at any depth), in path order: a range
    /// of the index, not a scan of every file.
    pub fn files_in_folder<'a>(&'a self, folder: &str) -> impl Iterator<Item = &'a FileEntry> + 'a {
        let prefix = format!("{}/", folder.trim_end_matches('/'));
        self.files_from(&prefix)
            .take_while(move |e| e.path.starts_with(prefix.as_str()))
    }
    /// The file at `path`.
    pub fn file(&self, path: &str) -> Option<&FileEntry> {
        self.files.get(path)
    }
    /// The shared path of the file at `path`.
    pub fn path_key(&self, path: &str) -> Option<&Arc<str>> {
        self.files.get_key_value(path).map(|(k, _)| k)
    }
    /// Whether a file exists at `path` in the index.
    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
    /// Problems met while walking.
    pub fn walk_issues(&self) -> &[WalkIssue] {
        &self.issues
    }
    /// The number of files indexed now (the last build's [`BuildStats::files`] does
    /// not follow later updates).
    pub fn len(&self) -> usize {
        self.files.len()
    }
    /// Whether no file is indexed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
    /// What the last build did.
    pub fn stats(&self) -> BuildStats {
        self.stats
    }

    pub(crate) fn checked_at_ns(&self) -> u64 {
        self.checked_at_ns
    }

    /// Takes the level layouts `other` kept (an index built again over the same
    /// files: a layout is used only for the content it describes).
    pub(crate) fn take_levels_of(&mut self, other: &mut Index) {
        self.levels = std::mem::take(&mut other.levels);
    }

    /// How many big levels' layouts are kept (tests and benchmarks; see
    /// [`Index::keep_level_layout`]).
    pub fn level_layouts_kept(&self) -> usize {
        self.levels.layouts_kept()
    }

    /// How many re-reads of a big level were scanned from the last version's
    /// layout, by the entities that changed (tests and benchmarks).
    pub fn levels_scanned_by_change(&self) -> u64 {
        self.levels.resumed()
    }

    pub(crate) fn from_parts(
        root: PathBuf,
        registry: Arc<Registry>,
        rules: Arc<DeclaredRules>,
        files: Vec<FileEntry>,
        checked_at_ns: u64,
    ) -> Self {
        Index {
            root,
            registry,
            rules,
            files: files.into_iter().map(|e| (e.path.clone(), e)).collect(),
            issues: Vec::new(),
            links: Vec::new(),
            stats: BuildStats::default(),
            checked_at_ns,
            levels: Default::default(),
            scratch: Default::default(),
        }
    }

    /// Files grouped by canonical base path (`textures/rose` -> `textures/rose.png`, ...),
    /// for resolving generic references written without extension.
    pub(crate) fn by_base_path(&self) -> crate::hash::FastMap<&str, Vec<&Arc<str>>> {
        let mut map: crate::hash::FastMap<&str, Vec<&Arc<str>>> = crate::hash::FastMap::default();
        for path in self.files.keys() {
            if let Some((base, _)) = split_extension(path) {
                map.entry(base).or_default().push(path);
            }
        }
        map
    }
}
