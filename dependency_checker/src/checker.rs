//! [`Checker`]: an open project's index, lookup and redirect log, kept consistent.

use std::path::Path;
use std::sync::Arc;

use kiln_core::{Project, Registry};

use crate::cache::StoredFindings;
use crate::check::{Finding, Place, check};
use crate::error::{CheckerError, io_err};
use crate::fs::split_extension;
use crate::hash::FastSet;
use crate::index::Redirects;
use crate::index::{BuildOptions, Index};
use crate::resolve::Resolution;
use crate::resolve::{Lookup, keys_naming};
use crate::resolve::{ResolvedRef, Target};
use crate::scan::DeclaredRules;

/// One reference as shown to a user: where it is written and what it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceView {
    /// Where it is written.
    pub place: Place,
    /// Its text.
    pub text: String,
    /// The resource type its field declares; `None` for a generic reference.
    pub expected_type: Option<String>,
    /// What it points at.
    pub target: Target,
}

/// What [`Checker::apply_changes`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangeReport {
    /// Files whose index entry changed (created, modified or removed).
    pub changed: Vec<String>,
    /// Renames done outside Kiln, old -> new: the references to the old path are
    /// broken, and `ops::plan_repoint` makes the patch that fixes them.
    pub renamed: Vec<(String, String)>,
}

/// An open project's references.
#[derive(Debug)]
pub struct Checker {
    project: Project,
    index: Index,
    /// What the index and redirect log give `kiln check`, kept until one of them
    /// changes: a server answers `check` again and again between changes.
    check_findings: std::cell::OnceCell<Vec<Finding>>,
    /// References by the key they resolve through: built on first use, then kept
    /// current change by change (a check resolves every reference afresh).
    lookup: std::cell::OnceCell<Lookup>,
    /// Without the whole lookup: one complete for the files a command asks about
    /// (see [`Checker::expect_questions_about`]); dropped when the index changes.
    partial_lookup: std::cell::RefCell<Option<Lookup>>,
    /// Paths whose entries changed since [`Checker::take_changed`] was last called.
    changed: Vec<String>,
    redirects: Redirects,
    /// How the checker was opened (kept for the lock's waiting notice).
    options: BuildOptions,
    /// The cache on disk is to be written again: it differs from the index by
    /// enough to be worth it (see [`Checker::open`]), or there was none. It is
    /// written when `kiln check`'s findings are known, to store them with it, or
    /// else when the checker is dropped: a check with no cache writes it once, not
    /// twice.
    cache_unsaved: std::cell::Cell<bool>,
    /// The cache holds no findings for the index: it describes it (a `refs`, `deps`
    /// or `mv` that found files changed wrote it when it was dropped), or is behind
    /// it by too few files to be worth rewriting for a command that stores none.
    /// The next check stores its findings, or every check after would resolve every
    /// reference again.
    findings_unstored: std::cell::Cell<bool>,
    /// Findings stored with the cache for the index as it was, and the entries as
    /// they were of the files whose contents changed since (see
    /// [`crate::cache::StoredFindings::Behind`]): a check works out again only
    /// what those files' contents decide, if it can.
    findings_behind: std::cell::RefCell<Option<FindingsBehind>>,
    /// The project's generation (see [`crate::fs::ProjectLock`]) the index was
    /// read at: an operation planned on it applies only if the project is still
    /// at that generation under the exclusive lock.
    generation: u64,
}

/// Findings worked out for the index as it was, and the entries as they were of
/// the files whose contents changed since (see [`Checker::check_what_changed`]).
#[derive(Debug)]
struct FindingsBehind {
    findings: Vec<Finding>,
    before: Vec<crate::index::FileEntry>,
    /// They are the findings stored with the cache on disk: a check that cannot
    /// work from them stores its own, or every check after would resolve every
    /// reference again. A running checker's own are not.
    in_the_cache: bool,
}

/// What [`Checker::refresh`] carries over a change of files' contents.
struct CarriedFindings {
    behind: FindingsBehind,
    walk_issues: Vec<crate::index::WalkIssue>,
}

impl Drop for Checker {
    fn drop(&mut self) {
        if self.cache_unsaved.get() {
            // A cache that cannot be written only costs the next start some time.
            let _ = crate::cache::save(&self.index, self.check_findings.get().map(Vec::as_slice));
        }
    }
}

impl Checker {
    /// Opens the project at `dir` and indexes it, reusing the cache under `.kiln/`
    /// when it is valid (and refreshing it).
    pub fn open(
        dir: &Path,
        registry: Arc<Registry>,
        options: &BuildOptions,
    ) -> Result<Self, CheckerError> {
        let (project, _reading, rules) = Self::open_committed(dir, options)?;
        let (index, cached) = Self::index_with_cache(&project, registry, &rules, options)?;
        // Rewrite the cache only if a save spares the next command more than it
        // costs this one: at 100,000 files, rewriting it cost a `kiln refs` 75 ms,
        // and reading and scanning again the 1,001 files a move of the hub patched
        // 55 ms. Files changed within the racy window are read again whatever the
        // cache says (a save would spare only their scan), and do not count. A
        // check that resolves every reference again stores its findings with the
        // cache whatever changed. (A move's own writes follow another rule, see
        // `Checker::changed_by_kiln`.)
        let settles = cached.as_ref().map(|c| c.changes_a_save_settles(&index));
        let checker = Self::from_index(project, index)?.with_options(options);
        let few = settles.is_some_and(|n| n.saturating_mul(64) < checker.index.len());
        let stored = cached.map_or(StoredFindings::None, |c| c.findings_for(&checker.index));
        match stored {
            StoredFindings::Stand(findings) => {
                let _ = checker.check_findings.set(findings);
            }
            // Worked out again from the changed files alone, and stored only if
            // the cache is rewritten anyway: until then the next check does it
            // again from the findings stored for the index as it was.
            StoredFindings::Behind { findings, before } => {
                *checker.findings_behind.borrow_mut() = Some(FindingsBehind {
                    findings,
                    before,
                    in_the_cache: true,
                });
            }
            StoredFindings::None if few => checker.findings_unstored.set(true),
            StoredFindings::None => {}
        }
        if !few {
            checker.cache_unsaved.set(true);
        }
        Ok(checker)
    }

    /// The first steps of every open: the project, held in a committed state for
    /// reading until the returned lock is dropped (see [`Checker::committed_state`]),
    /// and its declared reference rules.
    fn open_committed(
        dir: &Path,
        options: &BuildOptions,
    ) -> Result<(Project, crate::fs::ProjectLock, Arc<DeclaredRules>), CheckerError> {
        let project = Project::open(dir)?;
        let waiting = || {
            if let Some(w) = &options.waiting {
                w()
            }
        };
        let reading = Self::committed_state(project.root(), &waiting)?;
        let rules = Arc::new(DeclaredRules::new(&project.config().references));
        Ok((project, reading, rules))
    }

    /// Keeps `options` for later re-walks, without the first walk's progress.
    fn with_options(mut self, options: &BuildOptions) -> Self {
        self.options = BuildOptions {
            progress: None,
            ..options.clone()
        };
        self
    }

    /// Whether `project` has a cache file to load (a regular file, never a link).
    fn has_cache_file(project: &Project) -> bool {
        matches!(
            crate::fs::stat_below(project.root(), crate::cache::CACHE_FILE),
            Ok((kiln_core::fs::Kind::File, _))
        )
    }

    /// Opens the project to ask what `path` (a file, or the files under a folder)
    /// references, as `kiln deps` working alone asks it: the cache is trusted for
    /// every file but `path` and the files of the folders its references point into,
    /// which are looked at on disk ([`Index::update_dependencies_of`]), so the
    /// answer is the one a full index gives without a stat of every file. Without a
    /// usable cache it opens as [`Checker::open`] does. The cache is not rewritten:
    /// the rest of the index was not checked against the disk.
    pub fn open_for_dependencies_of(
        dir: &Path,
        registry: Arc<Registry>,
        options: &BuildOptions,
        path: &str,
    ) -> Result<Self, CheckerError> {
        let (project, reading, rules) = Self::open_committed(dir, options)?;
        let loaded = Self::has_cache_file(&project)
            .then(|| crate::cache::load(project.root(), &registry, &rules))
            .flatten();
        let Some(loaded) = loaded else {
            drop(reading);
            return Self::open(dir, registry, options);
        };
        let mut index = loaded.index;
        index.update_dependencies_of(path);
        let checker = Self::from_index(project, index)?.with_options(options);
        drop(reading);
        Ok(checker)
    }

    /// Indexes `project`, reusing the entries of its cache; returns the cache too.
    /// The cache is loaded on a second thread while the walk begins.
    fn index_with_cache(
        project: &Project,
        registry: Arc<Registry>,
        rules: &Arc<DeclaredRules>,
        options: &BuildOptions,
    ) -> Result<(Index, Option<crate::cache::Loaded>), CheckerError> {
        let root = project.root();
        if !Self::has_cache_file(project) {
            return Ok((Index::build(project, registry, options)?, None));
        }
        // The index the cache holds goes to the walk as soon as it is loaded; what
        // the cache stores beside it comes back when the loading thread ends. A
        // thread of its own, not a pool task: the walk's tasks wait for it (see
        // `crate::parallel`).
        let loading = std::sync::OnceLock::new();
        let (index, stored) = std::thread::scope(|threads| {
            let loader = threads.spawn(|| {
                let load = || crate::cache::load(root, &registry, rules);
                let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load));
                // Set whatever happens, or the walk would wait for it for ever.
                match loaded.ok().flatten().map(crate::cache::Loaded::into_parts) {
                    Some((index, stored)) => {
                        let _ = loading.set(Some(index));
                        Some(stored)
                    }
                    None => {
                        let _ = loading.set(None);
                        None
                    }
                }
            });
            let index =
                Index::build_while_loading(project, Arc::clone(&registry), &loading, options);
            (index, loader.join().ok().flatten())
        });
        let cached = (loading.into_inner().flatten())
            .zip(stored)
            .map(|(index, stored)| crate::cache::Loaded::from_parts(index, stored));
        Ok((index?, cached))
    }

    /// Waits until the project at `root` is in a committed state and holds it there
    /// for reading until the returned lock is dropped: an operation in progress (a
    /// move in another process) is waited for, and one that a crash interrupted is
    /// rolled back (under the lock, so never another process's live operation).
    /// `waiting` is called once if that takes a moment.
    pub fn committed_state(
        root: &Path,
        waiting: &dyn Fn(),
    ) -> Result<crate::fs::ProjectLock, CheckerError> {
        loop {
            if crate::fs::journal::exists(root) {
                drop(Self::committed_state_for_writing(root, waiting)?);
            }
            let reading = crate::fs::shared(root, waiting)?;
            if !crate::fs::journal::is_pending(root) {
                return Ok(reading);
            }
        }
    }

    /// The project's exclusive lock, taken once it is in a committed state: an
    /// operation a crash interrupted is rolled back first.
    fn committed_state_for_writing(
        root: &Path,
        waiting: &dyn Fn(),
    ) -> Result<crate::fs::ProjectLock, CheckerError> {
        let writing = crate::fs::exclusive(root, waiting)?;
        if matches!(
            crate::fs::journal::recover(root)?,
            crate::fs::journal::Recovery::RolledBack { .. }
                | crate::fs::journal::Recovery::Partial { .. }
        ) {
            // Recovery wrote files: a plan made on what was read before is made
            // again.
            writing.advance()?;
        }
        Ok(writing)
    }

    /// Whether an operation that changes files (a move) is under way in the project
    /// at `root`, or was cut short by a crash and awaits its roll-back.
    pub fn operation_in_progress(root: &Path) -> bool {
        crate::fs::journal::exists(root)
    }

    /// Tells whoever opened the checker that the project lock is busy.
    pub(crate) fn notify_waiting(&self) {
        if let Some(w) = &self.options.waiting {
            w();
        }
    }

    /// Wraps an already built index.
    pub fn from_index(project: Project, index: Index) -> Result<Self, CheckerError> {
        let redirects = Redirects::load(project.root())?;
        // Whoever built the index held the lock shared, which they still do: the
        // generation cannot have moved since.
        let generation = crate::fs::generation_now(project.root());
        Ok(Checker {
            project,
            index,
            check_findings: std::cell::OnceCell::new(),
            lookup: std::cell::OnceCell::new(),
            partial_lookup: std::cell::RefCell::new(None),
            changed: Vec::new(),
            redirects,
            options: BuildOptions::default(),
            cache_unsaved: std::cell::Cell::new(false),
            findings_unstored: std::cell::Cell::new(false),
            findings_behind: std::cell::RefCell::new(None),
            generation,
        })
    }

    /// The project.
    pub fn project(&self) -> &Project {
        &self.project
    }
    /// The index.
    pub fn index(&self) -> &Index {
        &self.index
    }
    /// The references by key, for [`Checker::references_to`] and the like.
    pub fn lookup(&self) -> &Lookup {
        self.lookup.get_or_init(|| Lookup::build(&self.index))
    }

    /// Everything that references `file` (which may be missing): the graph's
    /// incoming edges, without the graph.
    pub fn refs_to(&self, file: &str) -> Vec<ResolvedRef> {
        self.with_lookup(keys_naming(file), |l| l.references_to(&self.index, file))
    }

    /// The ambiguous references that have `file` among their candidates.
    pub fn ambiguous_refs_to(&self, file: &str) -> Vec<ResolvedRef> {
        self.with_lookup(keys_naming(file), |l| {
            l.ambiguous_references_to(&self.index, file)
        })
    }

    /// The references written with exactly `key` (a path, or a path without its
    /// extension), unresolved: see [`Lookup::filed_under`].
    pub fn filed_under(&self, key: &str) -> Vec<(Arc<str>, u32)> {
        self.with_lookup(std::iter::once(key), |l| l.filed_under(key).to_vec())
    }

    /// Files only the references that can name `files`, unless the whole lookup is
    /// kept already: questions about those files are then answered from that, and
    /// any other question from the whole lookup, built then. A command working
    /// alone asks about a few files (`kiln refs`, the files a `kiln mv` moves):
    /// filing every reference of 100,000 files first took most of its time.
    pub fn expect_questions_about(&self, files: &[String]) {
        if self.lookup.get().is_none() {
            *self.partial_lookup.borrow_mut() = Some(Lookup::for_files(&self.index, files));
        }
    }

    /// `question` asked of the lookup that has every reference filed under `keys`.
    fn with_lookup<'k, T>(
        &self,
        mut keys: impl Iterator<Item = &'k str>,
        question: impl FnOnce(&Lookup) -> T,
    ) -> T {
        if self.lookup.get().is_none()
            && let Some(partial) = &*self.partial_lookup.borrow()
            && keys.all(|k| partial.covers(k))
        {
            return question(partial);
        }
        question(self.lookup())
    }

    /// What `file` references, in file order.
    pub fn refs_from(&self, file: &str) -> Vec<ResolvedRef> {
        Lookup::references_from(&self.index, file)
    }

    /// Brings what was worked out from the index up to date with the entries of
    /// `changed`: the lookup file by file, the rest rebuilt on next use.
    fn follow_index(&mut self, changed: &[String]) {
        if let Some(lookup) = self.lookup.get_mut() {
            lookup.update(&self.index, changed);
        }
        self.changed.extend_from_slice(changed);
        self.forget_derived();
    }

    /// The paths whose entries changed since the last call, by any means: a watcher
    /// batch, or a move this checker made for a command in a terminal. A running
    /// editor or `kiln watch` asks after answering such a command: the move's own
    /// writes then reach its watcher as nothing new, since the index already holds
    /// them.
    pub fn take_changed(&mut self) -> Vec<String> {
        std::mem::take(&mut self.changed)
    }

    /// Drops the lookup made for a command's questions (see
    /// [`Checker::expect_questions_about`]): a move that is about to write the files
    /// it answered for gives its room back before the writes, when a big move peaks.
    pub(crate) fn forget_question_lookup(&mut self) {
        *self.partial_lookup.get_mut() = None;
    }

    /// Drops what was worked out from the index (rebuilt on next use).
    fn forget_derived(&mut self) {
        *self.partial_lookup.get_mut() = None;
        self.check_findings = std::cell::OnceCell::new();
        *self.findings_behind.get_mut() = None;
    }

    /// The redirect log.
    pub fn redirects(&self) -> &Redirects {
        &self.redirects
    }

    /// Re-indexes the given files (changed, created or deleted, project-relative) and
    /// drops the findings if any entry changed (worked out again on next use).
    /// Returns the changed paths.
    pub fn refresh(&mut self, paths: &[String]) -> Result<Vec<String>, CheckerError> {
        if paths.iter().any(|p| p == kiln_core::project::PROJECT_FILE) {
            // The project file declares boot levels and reference rules: new rules
            // change how every file is read, so the whole index is rebuilt.
            let project = Project::open(self.project.root())?;
            if project.config().references != self.project.config().references {
                self.project = project;
                let before: Vec<(String, u64)> = self
                    .index
                    .files()
                    .map(|f| (f.path.to_string(), f.hash))
                    .collect();
                self.rescan()?;
                let mut changed: Vec<String> = before.into_iter().map(|(p, _)| p).collect();
                changed.extend(self.index.files().map(|f| f.path.to_string()));
                changed.sort();
                changed.dedup();
                return Ok(changed);
            }
            self.project = project;
            self.forget_derived();
        }
        let carried = self.take_findings_to_carry(paths);
        let changed = self.index.update(paths);
        if !changed.is_empty() {
            self.follow_index(&changed);
        }
        if let Some(carried) = carried {
            self.carry_findings(carried, &changed);
        }
        self.reload_redirects_if_changed(&changed)?;
        Ok(changed)
    }

    /// Takes the findings known for the index, with the entries as they were when
    /// they were worked out of the files among `paths` (about to be refreshed) and
    /// of the files changed since: what [`Checker::carry_findings`] puts back.
    fn take_findings_to_carry(&mut self, paths: &[String]) -> Option<CarriedFindings> {
        let mut behind = match (
            self.check_findings.take(),
            self.findings_behind.get_mut().take(),
        ) {
            (Some(findings), _) => FindingsBehind {
                findings,
                before: Vec::new(),
                in_the_cache: false,
            },
            (None, Some(behind)) => behind,
            (None, None) => return None,
        };
        let known: crate::hash::FastSet<&str> = behind.before.iter().map(|f| &*f.path).collect();
        let now: Vec<crate::index::FileEntry> = (paths.iter())
            .filter(|p| !known.contains(p.as_str()))
            .filter_map(|p| self.index.file(p).cloned())
            .collect();
        behind.before.extend(now);
        Some(CarriedFindings {
            behind,
            walk_issues: self.index.walk_issues().to_vec(),
        })
    }

    /// Puts back the findings taken before a refresh that changed the entries
    /// `changed`, if it changed only what files hold (no file new or gone, the
    /// same links met; see [`crate::check::can_follow_contents_change`]): they
    /// stand but for what those files decide, which the next check works out from
    /// them (see [`Checker::check_what_changed`]). A running editor checks after
    /// every save.
    fn carry_findings(&mut self, carried: CarriedFindings, changed: &[String]) {
        let CarriedFindings {
            mut behind,
            walk_issues,
        } = carried;
        let known: crate::hash::FastSet<&str> = behind.before.iter().map(|f| &*f.path).collect();
        let contents_only = walk_issues == self.index.walk_issues()
            && (changed.iter()).all(|p| self.index.contains(p) && known.contains(p.as_str()));
        drop(known);
        if !contents_only {
            return;
        }
        // Files changed back hold what the findings were worked out from.
        let index = &self.index;
        (behind.before).retain(|was| index.file(&was.path).is_some_and(|is| is.hash != was.hash));
        if behind.before.is_empty() {
            let _ = self.check_findings.set(behind.findings);
        } else if crate::check::can_follow_contents_change(&behind.before, self.index.len()) {
            *self.findings_behind.get_mut() = Some(behind);
        }
    }

    /// Reads the redirect log again if it is among `changed`: only then, since it
    /// grows with the project's history and a running editor refreshes on every save.
    fn reload_redirects_if_changed(&mut self, changed: &[String]) -> Result<(), CheckerError> {
        if changed.iter().any(|p| p == crate::index::REDIRECT_FILE) {
            self.redirects = Redirects::load(self.project.root())?;
        }
        Ok(())
    }

    /// [`Checker::refresh`] for `paths`, and takes the files Kiln itself has just
    /// written from the bytes it wrote (see [`Index::take_written`]): a move that
    /// patched a thousand files does not read them back.
    pub fn refresh_written(
        &mut self,
        paths: &[String],
        written: &[crate::index::Written],
    ) -> Result<Vec<String>, CheckerError> {
        // The written files first: a folder among `paths` holding some of them is
        // then found current, not read and scanned again.
        let mut changed = self.index.take_written(written);
        if !changed.is_empty() {
            self.follow_index(&changed);
        }
        self.reload_redirects_if_changed(&changed)?;
        changed.extend(self.refresh(paths)?);
        Ok(changed)
    }

    /// Kiln itself changed `files` files (moved or written): files the cache does
    /// not know, which the next command reads and scans again (after moving a
    /// folder at 100,000 files: 65,000 files, 1.8 s). Past a tenth of the project,
    /// writing the cache when the checker is dropped costs less than that; below
    /// it, more than the move itself. Unlike the files an open finds changed (see
    /// [`Checker::open`]), the files a move wrote just now count: a cache written
    /// with their scans spares the next command scanning them, if not reading
    /// them.
    pub(crate) fn changed_by_kiln(&self, files: usize) {
        if files.saturating_mul(10) >= self.index.len() {
            self.cache_unsaved.set(true);
        }
    }

    /// Takes the renames Kiln has just made (old, new) into the index: each moved
    /// file's entry goes to its new path as it is ([`Index::carry_renamed`]).
    pub(crate) fn carry_renamed(&mut self, renames: &[(String, String)]) {
        let mut moved = Vec::new();
        for (old, new) in renames {
            moved.extend(self.index.carry_renamed(old, new));
        }
        if !moved.is_empty() {
            self.follow_index(&moved);
        }
    }

    /// Folds a watcher batch into the index: re-indexes its paths (or re-walks the
    /// project after an overflow), and recognises renames done outside Kiln: a file
    /// that disappeared and one that appeared with the same content.
    pub fn apply_changes(
        &mut self,
        batch: &crate::watch::ChangeBatch,
    ) -> Result<ChangeReport, CheckerError> {
        let before: std::collections::HashMap<String, u64> = if batch.rescan {
            self.index
                .files()
                .map(|f| (f.path.to_string(), f.hash))
                .collect()
        } else {
            // The reported paths, and everything under those that were folders:
            // looked up, so that a batch costs what it holds, not the project.
            let mut before = std::collections::HashMap::new();
            for p in &batch.paths {
                if let Some(f) = self.index.file(p) {
                    before.insert(f.path.to_string(), f.hash);
                }
                for f in self.index.files_in_folder(p) {
                    before.insert(f.path.to_string(), f.hash);
                }
            }
            before
        };
        let changed = if batch.rescan {
            self.rescan()?;
            let mut changed: Vec<String> = before
                .iter()
                .filter(|(p, h)| self.index.file(p).map(|f| f.hash) != Some(**h))
                .map(|(p, _)| p.clone())
                .collect();
            changed.extend(
                self.index
                    .files()
                    .filter(|f| !before.contains_key(&*f.path))
                    .map(|f| f.path.to_string()),
            );
            changed.sort();
            changed
        } else {
            self.refresh(&batch.paths)?
        };
        let removed: Vec<(&String, &u64)> = before
            .iter()
            .filter(|(p, _)| !self.index.contains(p))
            .collect();
        let mut renamed = Vec::new();
        for path in &changed {
            let Some(f) = self.index.file(path) else {
                continue;
            };
            if before.contains_key(path) {
                continue;
            }
            if let Some((old, _)) = removed.iter().find(|(_, h)| **h == f.hash) {
                renamed.push(((*old).clone(), path.clone()));
            }
        }
        Ok(ChangeReport { changed, renamed })
    }

    /// Re-walks the whole project, re-reading only files that changed.
    pub fn rescan(&mut self) -> Result<(), CheckerError> {
        let reading = crate::fs::shared(self.project.root(), &|| self.notify_waiting())?;
        let generation = reading.generation();
        let index = Index::build_from(
            &self.project,
            self.index.registry().clone(),
            Some(&self.index),
            &BuildOptions::default(),
        )?;
        let mut index = index;
        index.take_levels_of(&mut self.index);
        self.index = index;
        self.generation = generation;
        self.forget_derived();
        self.lookup = std::cell::OnceCell::new();
        *self.partial_lookup.get_mut() = None;
        self.redirects = Redirects::load(self.project.root())?;
        self.cache_unsaved.set(false);
        let _ = crate::cache::save(&self.index, None);
        drop(reading);
        Ok(())
    }

    /// Prepares the index to take the next save of the level `path` by the
    /// entities it changes (see [`Index::keep_level_layout`]): for an editor that
    /// just opened it.
    pub fn keep_level_layout(&mut self, path: &str) {
        self.index.keep_level_layout(path);
    }

    /// [`Checker::keep_level_layout`]'s work, for another thread (see
    /// [`Index::level_layout_job`]); its result goes to
    /// [`Checker::take_level_layout`].
    pub fn level_layout_job(&self, path: &str) -> Option<crate::index::LevelLayoutJob> {
        self.index.level_layout_job(path)
    }

    /// Keeps a layout made by a [`crate::index::LevelLayoutJob`].
    pub fn take_level_layout(&mut self, made: crate::index::KeptLevelLayout) {
        self.index.take_level_layout(made);
    }

    /// Reads `file` again whatever its size and time say, and writes the cache
    /// again with it (see [`Index::distrust`]).
    pub(crate) fn read_again(&mut self, file: &str) -> Result<(), CheckerError> {
        self.index.distrust(file);
        self.refresh(&[file.to_owned()])?;
        self.cache_unsaved.set(true);
        Ok(())
    }

    /// The project's generation the index was read at (see
    /// [`crate::fs::ProjectLock`]).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Notes that this checker's own operation, applied under the exclusive lock
    /// on an index of generation [`Checker::generation`], took the project to
    /// `generation` (and the index followed it).
    pub(crate) fn advanced_to(&mut self, generation: u64) {
        self.generation = generation;
    }

    /// Whether another process changed the project's files (a move, a fix) since
    /// the index was read: a long-running checker (the editor's, `kiln watch`'s)
    /// sees those changes through its watcher, some time later; an operation
    /// planned on it before then would be refused and planned again.
    pub fn behind_other_operations(&self) -> bool {
        crate::fs::generation_now(self.project.root()) != self.generation
    }

    /// Takes into account the project write `generations` (before, after; see
    /// [`ProjectWrite::end`]) this checker's owner made: if the index was current
    /// before it, it stays current (the owner refreshes what it wrote, as after
    /// any change), so that the editor's own saves do not make its next move plan
    /// twice.
    pub fn wrote(&mut self, (before, after): (u64, u64)) {
        if before == self.generation {
            self.generation = after;
        }
    }

    /// Reads the project again ([`Checker::rescan`]) if another process changed
    /// it since the index was read ([`Checker::behind_other_operations`]).
    pub fn catch_up(&mut self) -> Result<(), CheckerError> {
        if self.behind_other_operations() {
            self.rescan()?;
        }
        Ok(())
    }

    /// The levels `kiln compile` refuses, each with the compiler's error, as a
    /// check reports them (see [`crate::compiles`]): each level is compiled only
    /// when it, a unit it read, `kiln.project`, the component types or `plugins`
    /// (a hash the caller makes of the plugins' libraries) changed since the
    /// outcome recorded in `.kiln/compiles.bin` (see [`crate::compiles`]).
    pub fn compile_errors(
        &self,
        options: kiln_core::CompileOptions,
        plugins: u64,
    ) -> Vec<crate::compiles::LevelCompileError> {
        crate::compiles::compile_errors(&self.project, &self.index, options, plugins)
    }

    /// Everything `kiln check` reports.
    pub fn findings(&self) -> Vec<Finding> {
        let mut findings = self
            .check_findings
            .get_or_init(|| {
                if let Some(findings) = self.check_what_changed() {
                    return findings;
                }
                // Stored with the index, a check with nothing changed prints them as
                // they are. The index's part of the cache is encoded on a second
                // thread while the references are resolved and checked: each took
                // about a third of a check with no cache, one after the other.
                let save =
                    self.cache_unsaved.replace(false) | self.findings_unstored.replace(false);
                let index = &self.index;
                let (redirects, config) = (&self.redirects, self.project.config());
                let (cache, findings) = rayon::join(
                    || save.then(|| crate::cache::CacheFile::start(index)),
                    || {
                        let resolution = Resolution::build(index);
                        check(
                            index,
                            &resolution,
                            redirects,
                            &config.boot_levels,
                            &config.plugins,
                        )
                    },
                );
                // The cache only saves time: a check it cannot be written for
                // is still a whole check.
                if let Some(Ok(cache)) = cache {
                    let _ = cache.finish(Some(&findings));
                }
                findings
            })
            .clone();
        for (file, reason) in crate::fs::journal::set_aside_journals(self.project.root()) {
            findings.push(Finding::JournalSetAside { file, reason });
        }
        if let Ok(entries) = std::fs::read_dir(self.project.root()) {
            let mut aside: Vec<String> = entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|name| name.starts_with(kiln_core::own_folder::NOT_A_FOLDER))
                .collect();
            aside.sort();
            findings.extend(
                aside
                    .into_iter()
                    .map(|file| Finding::OwnFolderSetAside { file }),
            );
        }
        for (line, text) in self.redirects.rejected() {
            findings.push(Finding::InvalidRedirect {
                file: crate::index::REDIRECT_FILE.into(),
                line: *line,
                text: text.clone(),
            });
        }
        let unlisted = self.redirects.rejected_unlisted();
        if unlisted > 0
            && let Some((line, _)) = self.redirects.rejected().last()
        {
            findings.push(Finding::InvalidRedirect {
                file: crate::index::REDIRECT_FILE.into(),
                line: *line,
                text: format!("... and {unlisted} more lines after this one like it"),
            });
        }
        for own in [kiln_core::own_folder::DIR, kiln_core::project::BUILD_DIR] {
            let link = matches!(
                crate::fs::stat_below(self.project.root(), own),
                Ok((kiln_core::fs::Kind::Link, _))
            );
            if link {
                findings.push(Finding::LinkedOwnFolder { file: own.into() });
            }
        }
        findings
    }

    /// The findings of a check, worked out from those stored for the index as it
    /// was ([`Checker::findings_behind`]) and the files whose contents changed
    /// since, if the references between files are as they were. A check after a
    /// `git pull` or a save of a few files then resolves the references of those
    /// files, twice (as they were and are), not of every file. `None` if there is
    /// nothing to start from or the references between files changed: the check
    /// then works out everything, and stores it.
    fn check_what_changed(&self) -> Option<Vec<Finding>> {
        let FindingsBehind {
            findings: stored,
            before,
            in_the_cache,
        } = self.findings_behind.borrow_mut().take()?;
        let Some(references) = Resolution::build_changed(&self.index, &before) else {
            if in_the_cache {
                self.findings_unstored.set(true);
            }
            return None;
        };
        let changed: crate::hash::FastSet<&str> = before.iter().map(|f| &*f.path).collect();
        let findings = crate::check::check_changed(
            &self.index,
            &references,
            &self.redirects,
            &self.project.config().plugins,
            stored,
            &changed,
        );
        if self.cache_unsaved.replace(false) {
            // The cache only saves time.
            let _ = crate::cache::save(&self.index, Some(&findings));
        }
        Some(findings)
    }

    /// The files a user's argument names: the file itself, or every file under a folder.
    pub fn files_under(&self, path: &str) -> Vec<String> {
        let path = path.trim_end_matches('/');
        if self.index.contains(path) {
            return vec![path.to_owned()];
        }
        self.index
            .files_in_folder(path)
            .map(|f| f.path.to_string())
            .collect()
    }

    /// Every place that references `path` (a file, or any file under a folder), in
    /// order of file, line and column.
    pub fn references_to(&self, path: &str) -> Vec<ReferenceView> {
        collected(|each| self.try_each_reference_to(path, each))
    }

    /// The ambiguous references that may mean `path` (a file, or any file under a
    /// folder): written without extension where it is one of several matches.
    pub fn ambiguous_references_to(&self, path: &str) -> Vec<ReferenceView> {
        collected(|each| self.try_each_ambiguous_reference_to(path, each))
    }

    /// [`Checker::references_to`], given to `each` one at a time: a command printing
    /// the 250,000 references to a big folder holds one referring file's at a time.
    /// Stops at the first error `each` returns, and returns it.
    pub fn try_each_reference_to<E>(
        &self,
        path: &str,
        each: impl FnMut(ReferenceView) -> Result<(), E>,
    ) -> Result<(), E> {
        self.each_view_into(path, false, each)
    }

    /// [`Checker::ambiguous_references_to`], given to `each` one at a time.
    pub fn try_each_ambiguous_reference_to<E>(
        &self,
        path: &str,
        each: impl FnMut(ReferenceView) -> Result<(), E>,
    ) -> Result<(), E> {
        self.each_view_into(path, true, each)
    }

    /// The references to the files under `path` (`ambiguous`: the ambiguous ones
    /// that may mean one of them), as views in order of file, line and column, found
    /// in one pass over the references filed under those files' keys.
    fn each_view_into<E>(
        &self,
        path: &str,
        ambiguous: bool,
        each: impl FnMut(ReferenceView) -> Result<(), E>,
    ) -> Result<(), E> {
        let files = self.files_under(path);
        self.expect_questions_about(&files);
        let wanted: FastSet<&str> = files.iter().map(String::as_str).collect();
        let keys: Vec<&str> = if ambiguous {
            // Only a reference written without extension can be ambiguous.
            (files.iter())
                .filter_map(|f| split_extension(f).map(|(base, _)| base))
                .collect()
        } else {
            files.iter().flat_map(|f| keys_naming(f)).collect()
        };
        let want = |t: &Target| match t {
            Target::Resolved(p) | Target::Missing(p) => !ambiguous && wanted.contains(&**p),
            Target::Ambiguous(c) => ambiguous && c.iter().any(|p| wanted.contains(&**p)),
            Target::Invalid(_) => false,
        };
        self.each_view_under(&keys, want, each)
    }

    /// Each reference filed under one of `keys` (see [`keys_naming`]), resolved, in
    /// order of file and position: `each` gets the referring file's entry, the
    /// reference's position, the reference and its target. Each referring file's
    /// scan is decoded once, and kept only by a checker that keeps the whole lookup
    /// (see [`Lookup::each_resolved_under`]).
    pub(crate) fn each_reference_under(
        &self,
        keys: &[&str],
        each: impl FnMut(&crate::index::FileEntry, usize, &crate::scan::RefView, Target),
    ) {
        // Kept by a checker that keeps the whole lookup: see `each_resolved_under`.
        let keep = self.lookup.get().is_some();
        self.with_lookup(keys.iter().copied(), |lookup| {
            lookup.each_resolved_under(&self.index, keys.iter().copied(), keep, each)
        });
    }

    /// The references filed under `keys` whose target `want` accepts, as views, in
    /// order of file, line and column.
    fn each_view_under<E>(
        &self,
        keys: &[&str],
        want: impl Fn(&Target) -> bool,
        mut each: impl FnMut(ReferenceView) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut result = Ok(());
        // One file's views, sorted by place before they are given (a file's
        // references are in file order, unless a crafted cache says otherwise).
        let mut file_views: Vec<ReferenceView> = Vec::new();
        let mut give = |views: &mut Vec<ReferenceView>, result: &mut Result<(), E>| {
            views.sort_by_key(|v| (v.place.line, v.place.column));
            for v in views.drain(..) {
                if result.is_ok() {
                    *result = each(v);
                }
            }
        };
        self.each_reference_under(keys, |from, _, r, target| {
            if result.is_err() || !want(&target) {
                return;
            }
            if file_views
                .last()
                .is_some_and(|v| *v.place.file != *from.path)
            {
                give(&mut file_views, &mut result);
            }
            file_views.push(ReferenceView::of(&from.path, r, target));
        });
        give(&mut file_views, &mut result);
        result
    }

    /// Everything `path` (a file, or the files under a folder) references.
    pub fn dependencies_of(&self, path: &str) -> Vec<ReferenceView> {
        collected(|each| self.try_each_dependency_of(path, each))
    }

    /// [`Checker::dependencies_of`], given to `each` one at a time, each file's scan
    /// decoded once and for the call only.
    pub fn try_each_dependency_of<E>(
        &self,
        path: &str,
        mut each: impl FnMut(ReferenceView) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut buf = String::new();
        for file in self.files_under(path) {
            let Some(entry) = self.index.file(&file) else {
                continue;
            };
            entry.with_scan(|scan| {
                for r in scan.iter() {
                    if let Some(target) =
                        crate::resolve::resolve(&self.index, (&file, &r), &mut buf)
                    {
                        each(ReferenceView::of(&entry.path, &r, target))?;
                    }
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// Everything a `try_each_*` method gives, collected.
fn collected(
    give: impl FnOnce(
        &mut dyn FnMut(ReferenceView) -> Result<(), std::convert::Infallible>,
    ) -> Result<(), std::convert::Infallible>,
) -> Vec<ReferenceView> {
    let mut out = Vec::new();
    let Ok(()) = give(&mut |v| {
        out.push(v);
        Ok(())
    });
    out
}

impl ReferenceView {
    fn of(file: &Arc<str>, r: &crate::scan::RefView, target: Target) -> Self {
        ReferenceView {
            place: Place::of(file, r),
            text: r.text.to_owned(),
            expected_type: r.expected_type.map(str::to_owned),
            target,
        }
    }
}

/// The project's exclusive lock, held by a program that writes project files
/// itself (the editor saving a level or writing an asset): a save never lands in
/// the middle of a move or a fix, and an operation planned on the files as they
/// were before it plans again (see [`crate::fs::ProjectLock`]). Dropped without
/// [`ProjectWrite::end`] (a write that failed halfway) it still advances the
/// project's generation: something may have been written.
#[derive(Debug)]
pub struct ProjectWrite {
    lock: Option<crate::fs::ProjectLock>,
    before: u64,
}

impl ProjectWrite {
    /// Takes the lock of the project at `root` once it is in a committed state
    /// (an operation a crash interrupted is rolled back first); `waiting` is
    /// called if another operation holds it for a moment.
    pub fn begin(root: &Path, waiting: &dyn Fn()) -> Result<Self, CheckerError> {
        let lock = Checker::committed_state_for_writing(root, waiting)?;
        let before = lock.generation();
        Ok(ProjectWrite {
            lock: Some(lock),
            before,
        })
    }

    /// The writes are done: advances the project's generation and lets go of the
    /// lock. Returns the generations before and after, for [`Checker::wrote`].
    pub fn end(mut self) -> Result<(u64, u64), CheckerError> {
        let after = match &self.lock {
            Some(lock) => lock.advance()?,
            None => self.before,
        };
        self.lock = None;
        Ok((self.before, after))
    }
}

impl Drop for ProjectWrite {
    fn drop(&mut self) {
        if let Some(lock) = &self.lock {
            // Nothing more can be done about a lock file that cannot be written.
            let _ = lock.advance();
        }
    }
}

/// Writes `bytes` to the project file `rel` of the project at `root` as a user's
/// save is written: through a new temporary file and a rename, reached below the
/// root without following a link, in a [`ProjectWrite`]. Returns the generations
/// before and after, for [`Checker::wrote`].
pub fn save_file(
    root: &Path,
    rel: &str,
    bytes: &[u8],
    waiting: &dyn Fn(),
) -> Result<(u64, u64), CheckerError> {
    let write = ProjectWrite::begin(root, waiting)?;
    kiln_core::fs::write_below(root, Path::new(rel), bytes).map_err(io_err(root.join(rel)))?;
    write.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in [
            ("kiln.project", "{}"),
            (
                "levels/a.level",
                r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/gone"}}}]}"#,
            ),
            ("meshes/m.mesh", "{}"),
        ] {
            let full = dir.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, c).unwrap();
        }
        dir
    }

    /// `dir` with its files a minute old: files written now are read again by the
    /// next open (their time is too close to the cache's to trust).
    fn aged(dir: tempfile::TempDir) -> tempfile::TempDir {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for f in ["kiln.project", "levels/a.level", "meshes/m.mesh"] {
            let file = std::fs::File::options()
                .write(true)
                .open(dir.path().join(f))
                .unwrap();
            file.set_modified(old).unwrap();
        }
        dir
    }

    fn open(dir: &Path) -> Checker {
        Checker::open(
            dir,
            Arc::new(Registry::with_builtins()),
            &BuildOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_check_with_nothing_changed_prints_the_stored_findings_without_resolving() {
        let dir = aged(project());
        let first = open(dir.path()).findings();
        assert!(first.iter().any(|f| matches!(f, Finding::Missing { .. })));
        let second = open(dir.path());
        assert!(second.check_findings.get().is_some(), "read from the cache");
        assert_eq!(second.findings(), first);
        assert!(
            second
                .index()
                .files()
                .all(|f| f.scan_cell().still_encoded().is_some()),
            "no reference was resolved (none was decoded)"
        );
        drop(second);

        // A link leading out changes no file of the index, yet is a finding.
        kiln_core::os::symlink("/etc", dir.path().join("outside")).unwrap();
        let third = open(dir.path());
        assert!(
            third.check_findings.get().is_none(),
            "stored findings are stale"
        );
        let findings = third.findings();
        assert!(
            findings
                .iter()
                .any(|f| matches!(f, Finding::LinkOutside { .. }))
        );
        drop(third);
        // A changed file, too.
        std::fs::write(dir.path().join("meshes/gone.mesh"), "{}").unwrap();
        let fourth = open(dir.path());
        let findings = fourth.findings();
        assert!(
            !findings
                .iter()
                .any(|f| matches!(f, Finding::Missing { .. }))
        );
        // Checked again, every reference resolved, yet the unchanged files' scans
        // were decoded only for the pass: they stay in the cache's bytes.
        assert!(
            (fourth.index().files())
                .filter(|f| f.path.starts_with("levels/"))
                .all(|f| f.scan_cell().still_encoded().is_some()),
            "the level was decoded and kept"
        );
    }

    /// A command that finds a few files changed behind the cache reads them again
    /// and leaves the cache as it was; one that finds a 64th of the project changed
    /// long enough ago rewrites it. Files changed within the racy window are read
    /// again whatever the cache holds, and never count. A check that works out every
    /// finding again stores them (and the cache with them) whatever changed; one
    /// that works out only what a few changed files decide leaves the cache alone.
    #[test]
    fn the_cache_is_rewritten_when_a_save_spares_more_than_it_costs() {
        let dir = aged(project());
        let root = dir.path().to_owned();
        let meshes: Vec<String> = (0..100).map(|i| format!("meshes/n{i}.mesh")).collect();
        let write = |paths: &[String], content: &str, age_secs: u64| {
            let at = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
            for p in paths {
                std::fs::write(root.join(p), content).unwrap();
                let file = std::fs::File::options()
                    .write(true)
                    .open(root.join(p))
                    .unwrap();
                file.set_modified(at).unwrap();
            }
        };
        write(&meshes, "{}", 60);
        drop(open(dir.path()).findings());
        let cache = dir.path().join(crate::cache::CACHE_FILE);
        let saved = || std::fs::read(&cache).unwrap();
        let before = saved();

        // One of 103 files changed a minute ago: read again, not worth a save.
        write(&meshes[..1], "{ }", 60);
        let opened = open(dir.path());
        assert_eq!(opened.index().stats().read, 1);
        drop(opened);
        assert!(saved() == before, "rewritten for one file");
        // Still behind, so read again. A check works out what the changed file
        // decides from the findings stored for the project as it was, and leaves
        // the cache as it was...
        let opened = open(dir.path());
        assert_eq!(opened.index().stats().read, 1);
        opened.findings();
        drop(opened);
        assert!(
            saved() == before,
            "rewritten by a check of one changed file"
        );
        // ...unless the file now names another: the check works out every finding
        // again, and stores them.
        write(&meshes[..1], r#"{"x": "meshes/m.mesh"}"#, 60);
        let opened = open(dir.path());
        assert_eq!(opened.index().stats().read, 1);
        opened.findings();
        drop(opened);
        assert!(saved() != before, "the check stored nothing");
        assert_eq!(open(dir.path()).index().stats().read, 0);

        // Two files changed a minute ago: worth it, and the next open reads none.
        let before = saved();
        write(&meshes[1..3], "{ }", 60);
        drop(open(dir.path()));
        assert!(saved() != before, "not rewritten for two files");
        assert_eq!(open(dir.path()).index().stats().read, 0);

        // Ten files changed just now: read again by the next open whatever the
        // cache says, so not rewritten for them.
        let before = saved();
        write(&meshes[3..13], "{ }", 0);
        let opened = open(dir.path());
        assert_eq!(opened.index().stats().read, 10);
        assert_eq!(opened.index().stats().read_recent, 10);
        drop(opened);
        assert!(saved() == before, "rewritten for files changed just now");
    }

    /// A check after a file's contents changed takes what it reports of the other
    /// files from the findings stored with the cache, and works out again what the
    /// changed file's contents decide; if the file now names other files, it works
    /// out everything.
    #[test]
    fn a_check_after_a_few_files_changed_works_out_only_what_they_decide() {
        let dir = aged(project());
        let root = dir.path();
        let checker = open(root);
        let mut stored = checker.findings();
        // Findings no check of these files makes, stored as if one had: one about
        // the level, which does not change, and one about the mesh's contents.
        let of_the_level = Finding::Unused {
            file: "levels/a.level".into(),
        };
        let of_the_mesh = Finding::InvalidJson {
            file: "meshes/m.mesh".into(),
            line: 1,
            column: 1,
            message: "stored".into(),
        };
        stored.extend([of_the_level.clone(), of_the_mesh.clone()]);
        crate::cache::save(checker.index(), Some(&stored)).unwrap();
        drop(checker);
        let edit_mesh = |content: &str| {
            let mesh = root.join("meshes/m.mesh");
            std::fs::write(&mesh, content).unwrap();
            let file = std::fs::File::options().write(true).open(&mesh).unwrap();
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(30);
            file.set_modified(then).unwrap();
        };

        edit_mesh("{ }");
        let findings = open(root).findings();
        assert!(findings.contains(&of_the_level), "{findings:?}");
        assert!(!findings.contains(&of_the_mesh), "{findings:?}");
        assert!(
            (findings.iter()).any(
                |f| matches!(f, Finding::Missing { place, .. } if &*place.file == "levels/a.level")
            ),
            "{findings:?}"
        );

        // The mesh names the level now: everything is worked out again.
        edit_mesh(r#"{"x": "levels/a.level"}"#);
        let findings = open(root).findings();
        assert!(!findings.contains(&of_the_level), "{findings:?}");
        assert!(!findings.contains(&of_the_mesh), "{findings:?}");
    }

    /// A running checker (an editor's) whose findings cannot be carried over a save
    /// (the file now names another) works them out again without rewriting the
    /// cache: it wrote the cache once, at its first check, and the findings it
    /// carried were its own, not the cache's.
    #[test]
    fn a_running_checker_that_cannot_carry_its_findings_leaves_the_cache_alone() {
        let dir = aged(project());
        let root = dir.path();
        let mut checker = open(root);
        checker.findings();
        let cache = root.join(crate::cache::CACHE_FILE);
        let saved = std::fs::read(&cache).unwrap();
        std::fs::write(root.join("meshes/m.mesh"), r#"{"x": "levels/a.level"}"#).unwrap();
        assert_eq!(checker.refresh(&["meshes/m.mesh".into()]).unwrap().len(), 1);
        let findings = checker.findings();
        assert!(
            (findings.iter()).any(|f| matches!(f, Finding::Missing { .. })),
            "{findings:?}"
        );
        assert!(
            std::fs::read(&cache).unwrap() == saved,
            "the cache was rewritten"
        );
    }

    /// A cache written without findings (a `kiln refs` that found files changed
    /// writes one: it checks nothing) gets them from the next check, so that the
    /// check after that one prints them without resolving every reference again.
    #[test]
    fn a_check_stores_its_findings_in_a_cache_written_without_them() {
        let dir = aged(project());
        // Opened and dropped without a check: the cache is written, findings-less.
        drop(open(dir.path()));
        let first = open(dir.path());
        assert!(
            first.check_findings.get().is_none(),
            "no findings were stored"
        );
        let findings = first.findings();
        drop(first);
        let second = open(dir.path());
        assert!(
            second.check_findings.get().is_some(),
            "the check before stored them"
        );
        assert_eq!(second.findings(), findings);
    }

    /// The cache a check writes straight to its file, while it works out the
    /// findings, is the bytes `cache::encode` makes of the same index and findings;
    /// no temporary file is left beside it.
    #[test]
    fn the_cache_a_check_writes_is_the_index_and_findings_encoded() {
        let dir = aged(project());
        let checker = open(dir.path());
        checker.findings();
        let stored = checker.check_findings.get().map(Vec::as_slice);
        assert!(stored.is_some_and(|f| !f.is_empty()));
        let written = std::fs::read(dir.path().join(crate::cache::CACHE_FILE)).unwrap();
        assert_eq!(written, crate::cache::encode(checker.index(), stored));
        let temporary: Vec<String> = std::fs::read_dir(dir.path().join(".kiln"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".kiln-tmp"))
            .collect();
        assert!(temporary.is_empty(), "{temporary:?}");
        drop(checker);
        // And it reads back: the next open takes the findings from it.
        assert!(open(dir.path()).check_findings.get().is_some());
    }

    /// A check killed while it wrote its cache leaves a temporary file in `.kiln/`;
    /// the next check that writes the cache removes it, and leaves a running
    /// process's and anything else alone.
    #[test]
    fn a_cache_left_half_written_by_a_killed_process_is_removed() {
        let dir = aged(project());
        let kiln = dir.path().join(".kiln");
        std::fs::create_dir_all(&kiln).unwrap();
        // Past any pid the kernel hands out; pid 1 always runs.
        let (dead, running, other) = (
            kiln.join(".index.bin.999999999.kiln-tmp"),
            kiln.join(".index.bin.1.kiln-tmp"),
            kiln.join(".index.bin.notes.kiln-tmp"),
        );
        for f in [&dead, &running, &other] {
            std::fs::write(f, "half a cache").unwrap();
        }
        open(dir.path()).findings();
        assert!(!dead.exists(), "a killed writer's cache was left");
        assert!(running.exists() && other.exists());
        assert!(dir.path().join(crate::cache::CACHE_FILE).is_file());
    }

    /// A lookup kept current through edits files exactly what one built afresh
    /// files: each file's keys taken back and filed again, none left behind (a
    /// question's answer would not show a stale filing, since every reference is
    /// resolved again when asked about).
    #[test]
    fn a_lookup_kept_current_files_what_one_built_afresh_files() {
        let dir = project();
        let mut checker = open(dir.path());
        checker.lookup();
        let level = dir.path().join("levels/a.level");
        for (k, text) in [
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/a"}}}]}"#,
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/other"}}}]}"#,
            r#"{"entities": []}"#,
            r#"{"entities": [{"id": "y", "components": {"mesh": {"mesh": "meshes/m"}}}]}"#,
        ]
        .into_iter()
        .enumerate()
        {
            std::fs::write(&level, text).unwrap();
            std::fs::write(dir.path().join(format!("data{k}.json")), r#"{"a": "meshes/m.mesh"}"#)
                .unwrap();
            checker
                .refresh(&["levels/a.level".to_owned(), format!("data{k}.json")])
                .unwrap();
            let kept = checker.lookup.get().unwrap().filing();
            assert_eq!(kept, Lookup::build(checker.index()).filing(), "after edit {k}");
            assert!(!kept.0.is_empty(), "after edit {k}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// The same, over random edits of two levels: references added,
        /// removed, renamed and moved to other positions, files emptied.
        #[test]
        fn a_lookup_kept_current_through_random_edits_files_what_one_built_afresh_files(
            edits in proptest::collection::vec(
                (proptest::bool::ANY, proptest::collection::vec((0..4u8, 0..3u8), 0..8)),
                1..10,
            ),
        ) {
            let dir = project();
            let mut checker = open(dir.path());
            checker.lookup();
            for (k, (second, entities)) in edits.into_iter().enumerate() {
                let file = if second { "levels/b.level" } else { "levels/a.level" };
                let entities: Vec<String> = (entities.iter().enumerate())
                    .map(|(n, (mesh, material))| {
                        let material = match material {
                            0 => String::new(),
                            m => format!(r#", "material": "materials/m{m}""#),
                        };
                        format!(r#"{{"id": "e{n}", "components": {{"mesh": {{"mesh": "meshes/m{mesh}"{material}}}}}}}"#)
                    })
                    .collect();
                std::fs::write(
                    dir.path().join(file),
                    format!(r#"{{"entities": [{}]}}"#, entities.join(", ")),
                )
                .unwrap();
                checker.refresh(&[file.to_owned()]).unwrap();
                let kept = checker.lookup.get().unwrap().filing();
                proptest::prop_assert_eq!(kept, Lookup::build(checker.index()).filing(), "after edit {}", k);
            }
        }
    }
}
