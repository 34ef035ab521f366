//! [`Resolution`]: every reference of an index resolved once and kept as a number,
//! for `kiln check`.
//!
//! The whole graph (`graph.rs`) answers any question about references and
//! pays for it: a `petgraph` node per file, an edge per reference, and a 56-byte
//! resolved reference holding handles of two paths. A check asks three things only:
//! each reference's target, which files the boot levels reach, and which prefabs
//! include themselves. At 100,000 files the graph took about 0.4 s of a 1.3 s check
//! with no cache, and 105 MB. A resolution keeps 8 bytes per reference: the number
//! of the file it names, or where a target that is not a file (missing, ambiguous,
//! invalid) is kept. It resolves through [`resolve`], as the graph and the lookup
//! do, and a property test requires the graph's findings from it.
//!
//! A scan still encoded in the cache is read in place, its strings from the cache's
//! table, and nothing of it is kept: a check after a few files changed no longer
//! turns the whole cache into scans (344 MB at 100,000 files, more than a check
//! with no cache).
//!
//! Most references repeat a spelling other references use (a shared material, the
//! same mesh in many units). A spelling that names a project path resolves alike
//! wherever it is written, so each thread resolves each spelling it reads from a
//! cache once, by the numbers the cache's table gives its text and type; a relative
//! URI, which names a file from its own file's folder, is resolved every time.

use rayon::prelude::*;
use std::cell::Cell;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use super::target::{
    BaseMatch, FileSet, Resolved, ResolvedReferences, Target, includes_prefab, prefab_cycles_among,
    resolve_in,
};
use crate::fs::split_extension;
use crate::hash::{FastMap, FastSet};
use crate::index::{FileEntry, Index};
use crate::scan::{FileScan, Naming, RefView, ScanError};

/// What one reference resolved to.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A string that names no file: no reference.
    NotReference,
    /// The file of this number, named as [`crate::scan::RefView::is_spelled_right`]
    /// wants: nothing to report.
    File(u32),
    /// The file of this number, named some other way.
    FileMisspelled(u32),
    /// The target of this number in [`Resolution::others`].
    Other(u32),
}

/// Every reference of an index, resolved (see the module's documentation).
#[derive(Debug)]
pub struct Resolution<'i> {
    /// The index's files in path order; a file's number is its place here.
    files: Vec<&'i FileEntry>,
    /// Where each file's slots start in `slots`, and the end of the last.
    starts: Vec<u32>,
    /// One per reference of the scans, file by file.
    slots: Vec<Slot>,
    /// The targets that are not a file.
    others: Vec<Target>,
    /// Each file as a target, made once rather than once per reference (each is
    /// a count of the path's handle, on a cache line of its own).
    as_targets: Vec<Target>,
    /// Prefab inclusions, from -> to.
    prefab_edges: Vec<(u32, u32)>,
    /// The files whose scan has an error, by number, with it.
    scan_errors: Vec<(u32, ScanError)>,
}

/// A file's number with this bit set is a place in [`NumberedFiles::many`].
const MANY: u32 = 1 << 31;

/// The files by path and by path without extension, answering with numbers.
struct NumberedFiles<'i> {
    files: &'i [&'i FileEntry],
    numbers: FastMap<&'i str, u32>,
    /// A path without extension -> its one file's number, or [`MANY`] and the
    /// place of its files' numbers in `many`.
    bases: FastMap<&'i str, u32>,
    many: Vec<Vec<u32>>,
}

/// One thread's questions to [`NumberedFiles`].
struct Asking<'n, 'i> {
    files: &'n NumberedFiles<'i>,
    /// The number of the one file the last answer named: [`resolve`] answers with
    /// the file's path, and the resolution keeps its number.
    found: Cell<u32>,
}

impl<'i> NumberedFiles<'i> {
    fn new(files: &'i [&'i FileEntry]) -> Self {
        let hasher = Default::default;
        let mut numbers = FastMap::with_capacity_and_hasher(files.len(), hasher());
        let mut bases: FastMap<&str, u32> =
            FastMap::with_capacity_and_hasher(files.len(), hasher());
        let mut many: Vec<Vec<u32>> = Vec::new();
        for (n, f) in (0u32..).zip(files) {
            numbers.insert(&*f.path, n);
            let Some((base, _)) = split_extension(&f.path) else {
                continue;
            };
            match bases.entry(base) {
                Entry::Vacant(e) => {
                    e.insert(n);
                }
                Entry::Occupied(mut e) if *e.get() & MANY == 0 => {
                    many.push(vec![*e.get(), n]);
                    *e.get_mut() = (many.len() - 1) as u32 | MANY;
                }
                Entry::Occupied(e) => {
                    if let Some(all) = many.get_mut((*e.get() & !MANY) as usize) {
                        all.push(n);
                    }
                }
            }
        }
        NumberedFiles {
            files,
            numbers,
            bases,
            many,
        }
    }

    fn path(&self, n: u32) -> Option<&'i Arc<str>> {
        self.files.get(n as usize).map(|f| &f.path)
    }
}

impl FileSet for Asking<'_, '_> {
    fn file(&self, path: &str) -> Option<&Arc<str>> {
        let n = *self.files.numbers.get(path)?;
        self.found.set(n);
        self.files.path(n)
    }
    fn with_base(&self, base: &str) -> BaseMatch<'_> {
        let files = self.files;
        match files.bases.get(base) {
            None => BaseMatch::None,
            Some(&n) if n & MANY == 0 => {
                self.found.set(n);
                files.path(n).map_or(BaseMatch::None, BaseMatch::One)
            }
            Some(&n) => BaseMatch::Many(
                (files.many.get((n & !MANY) as usize).into_iter().flatten())
                    .filter_map(|&m| files.path(m).cloned())
                    .collect(),
            ),
        }
    }
}

/// What [`Resolution::build`] fills, reference by reference: one per thread, each
/// for a run of the files.
#[derive(Default)]
struct Resolving {
    /// Where each file's slots start in `slots`.
    starts: Vec<u32>,
    slots: Vec<Slot>,
    others: Vec<Target>,
    prefab_edges: Vec<(u32, u32)>,
    scan_errors: Vec<(u32, ScanError)>,
    /// Scratch space for [`resolve`].
    buf: String,
    /// What each spelling met so far resolved to, by its cache and its key there:
    /// most references repeat a spelling (a shared material, the same mesh in many
    /// units), and a spelling that names a project path resolves alike wherever it
    /// is written. Resolving is hashing the path and comparing it with a file's;
    /// looking the spelling up is hashing two numbers.
    resolved_spellings: FastMap<(usize, crate::index::SpellingKey), Slot>,
}

impl Resolving {
    /// Resolves `r`, written in the file `from` (number and path).
    fn push(&mut self, index: &Index, files: &Asking, from: (u32, &str), r: &RefView) {
        let slot = self.resolve(files, from.1, r);
        self.fill(index, from, r, slot);
    }

    /// What `r`, written in the file at `path`, resolves to (a target that is not a
    /// file is kept in `others`).
    fn resolve(&mut self, files: &Asking, path: &str, r: &RefView) -> Slot {
        match resolve_in(files, (path, r), &mut self.buf) {
            None => Slot::NotReference,
            Some(Resolved::File(_)) => {
                let to = files.found.get();
                // Told apart now, while the text is at hand: the check then skips
                // most references without reading them.
                if r.is_spelled_right() {
                    Slot::File(to)
                } else {
                    Slot::FileMisspelled(to)
                }
            }
            Some(Resolved::Other(other)) => {
                self.others.push(other);
                Slot::Other((self.others.len() - 1) as u32)
            }
        }
    }

    /// Fills `r`'s slot, and the prefab it includes if it does.
    fn fill(&mut self, index: &Index, (n, path): (u32, &str), r: &RefView, slot: Slot) {
        if let Slot::File(to) | Slot::FileMisspelled(to) = slot
            && includes_prefab(index, path, r.expected_type, r.pointer)
        {
            self.prefab_edges.push((n, to));
        }
        self.slots.push(slot);
    }

    /// [`Resolving::push`] for a reference read from a cache, whose text, type and
    /// naming are `spelling` there: resolved once per spelling and thread.
    fn push_spelled(
        &mut self,
        index: &Index,
        files: &Asking,
        from: (u32, &str),
        (r, spelling): (&RefView, (usize, crate::index::SpellingKey)),
    ) {
        // A relative URI names a file from the folder it is written in.
        if r.naming == Naming::RelativeUri {
            return self.push(index, files, from, r);
        }
        let slot = match self.resolved_spellings.get(&spelling) {
            Some(&slot) => slot,
            None => {
                let slot = self.resolve(files, from.1, r);
                self.resolved_spellings.insert(spelling, slot);
                slot
            }
        };
        self.fill(index, from, r, slot);
    }

    /// Pushes the references of a scan still `encoded` in a cache's bytes, read
    /// there, and returns its error; `None` (and nothing pushed) if the record
    /// does not read as a whole.
    fn push_encoded(
        &mut self,
        index: &Index,
        files: &Asking,
        from: (u32, &str),
        encoded: &crate::index::EncodedScan,
    ) -> Option<Option<ScanError>> {
        let before = self.mark();
        let cache = encoded.cache_id();
        let read = encoded
            .visit(|r, spelling| self.push_spelled(index, files, from, (r, (cache, spelling))));
        if read.is_none() {
            self.undo(before);
        }
        read
    }

    /// Pushes the references of `scan` and returns its error.
    fn push_scan(
        &mut self,
        index: &Index,
        files: &Asking,
        from: (u32, &str),
        scan: &FileScan,
    ) -> Option<ScanError> {
        for i in 0..scan.len() {
            match scan.get(i) {
                Some(r) => self.push(index, files, from, &r),
                None => self.slots.push(Slot::NotReference),
            }
        }
        scan.error.clone()
    }

    /// How much is filled, to go back to (see [`Resolving::undo`]).
    fn mark(&self) -> (usize, usize, usize) {
        (self.slots.len(), self.others.len(), self.prefab_edges.len())
    }

    /// Drops what was filled since `mark`: a record that stopped reading halfway.
    fn undo(&mut self, (slots, others, edges): (usize, usize, usize)) {
        self.slots.truncate(slots);
        self.others.truncate(others);
        self.prefab_edges.truncate(edges);
        // Some may name targets just dropped.
        self.resolved_spellings.clear();
    }
}

impl<'i> Resolution<'i> {
    /// Resolves every reference of `index`.
    pub fn build(index: &'i Index) -> Self {
        let files: Vec<&FileEntry> = index.files().collect();
        let resolution = Self::build_among(index, &NumberedFiles::new(&files), |_| true);
        Resolution {
            files,
            ..resolution
        }
    }

    /// Resolves the references of the files of `index` whose contents differ from
    /// those of `before` (their entries as they were, under the same paths), if
    /// the references between files are the same as before: every file each of
    /// them names, and the prefabs each includes in the same order. Then what a
    /// check works out over every reference (which files the boot levels reach,
    /// which prefabs include themselves) is what it was, and the resolution holds
    /// the references of these files only. `None` if they differ, or if an entry
    /// of `before` holds no scan that can be read without reading its file again.
    pub fn build_changed(index: &'i Index, before: &[FileEntry]) -> Option<Self> {
        let files: Vec<&FileEntry> = index.files().collect();
        let numbered = NumberedFiles::new(&files);
        let changed: FastSet<&str> = before.iter().map(|f| &*f.path).collect();
        let resolution = Self::build_among(index, &numbered, |f| changed.contains(&*f.path));
        let asking = Asking {
            files: &numbered,
            found: Cell::new(0),
        };
        for was in before {
            let n = numbered.numbers.get(&*was.path).copied()?;
            let now = resolution.outgoing(n);
            let then = Self::outgoing_as_it_was(index, &asking, n, was)?;
            if now != then {
                return None;
            }
        }
        drop(numbered);
        Some(Resolution {
            files,
            ..resolution
        })
    }

    /// [`outgoing`] of the file numbered `n`.
    fn outgoing(&self, n: u32) -> (Vec<u32>, Vec<u32>) {
        // The edges are in the order of their files: a file's are together.
        let start = self.prefab_edges.partition_point(|&(from, _)| from < n);
        let end = self.prefab_edges.partition_point(|&(from, _)| from <= n);
        let edges = self.prefab_edges.get(start..end).unwrap_or(&[]);
        outgoing(self.slots_of(n as usize), edges)
    }

    /// [`outgoing`] of `was`, an entry of the file numbered `n` as it was: `None`
    /// if its scan is neither at hand nor read in its cache's bytes (a record that
    /// does not read would have the file read as it is now).
    fn outgoing_as_it_was(
        index: &Index,
        asking: &Asking,
        n: u32,
        was: &FileEntry,
    ) -> Option<(Vec<u32>, Vec<u32>)> {
        let mut out = Resolving::default();
        let from = (n, &*was.path);
        match (was.scan_cell().still_encoded(), was.scan_cell().decoded()) {
            (Some(encoded), _) => {
                out.push_encoded(index, asking, from, encoded)?;
            }
            (None, Some(scan)) => {
                out.push_scan(index, asking, from, scan);
            }
            (None, None) => return None,
        }
        Some(outgoing(&out.slots, &out.prefab_edges))
    }

    /// Resolves the references of the files of `numbered` that `selected` takes;
    /// the others are left with none. The resolution's files are left for the
    /// caller to set.
    fn build_among(
        index: &Index,
        numbered: &NumberedFiles<'_>,
        selected: impl Fn(&FileEntry) -> bool,
    ) -> Self {
        let files = numbered.files;
        let chosen: Vec<bool> = files.iter().map(|f| selected(f)).collect();
        let hints: Vec<usize> = (files.iter().zip(&chosen))
            .map(|(f, &chosen)| if chosen { f.references_hint() } else { 0 })
            .collect();
        // Cut in runs of about as many references, one per core: resolving is a
        // hash lookup per reference, and at 100,000 files it was most of a check.
        let threads = rayon::current_num_threads();
        let per_thread = hints.iter().sum::<usize>().div_ceil(threads).max(1);
        let mut runs = Vec::new();
        let (mut start, mut held) = (0, 0);
        for (n, hint) in hints.iter().enumerate() {
            held += hint;
            if held >= per_thread {
                runs.push(start..n + 1);
                (start, held) = (n + 1, 0);
            }
        }
        runs.push(start..files.len());
        let parts: Vec<Resolving> = (runs.into_par_iter())
            .map(|run| Self::resolve_run(index, numbered, run, &hints, &chosen))
            .collect();
        // Joined: each run's slots and targets after the ones before.
        let mut all = Resolving::default();
        for part in parts {
            let (slots, others) = (all.slots.len() as u32, all.others.len() as u32);
            all.starts.extend(part.starts.iter().map(|s| s + slots));
            all.slots
                .extend(part.slots.into_iter().map(|slot| match slot {
                    Slot::Other(k) => Slot::Other(k + others),
                    slot => slot,
                }));
            all.others.extend(part.others);
            all.prefab_edges.extend(part.prefab_edges);
            all.scan_errors.extend(part.scan_errors);
        }
        all.starts.push(all.slots.len() as u32);
        let as_targets = (files.iter())
            .map(|f| Target::Resolved(f.path.clone()))
            .collect();
        Resolution {
            as_targets,
            scan_errors: all.scan_errors,
            // Set by the caller, once `numbered` no longer borrows them.
            files: Vec::new(),
            starts: all.starts,
            slots: all.slots,
            others: all.others,
            prefab_edges: all.prefab_edges,
        }
    }

    /// Resolves the references of the files numbered `run`.
    fn resolve_run(
        index: &Index,
        numbered: &NumberedFiles,
        run: std::ops::Range<usize>,
        hints: &[usize],
        chosen: &[bool],
    ) -> Resolving {
        let files = numbered.files;
        let references = hints.get(run.clone()).map_or(0, |h| h.iter().sum());
        let mut out = Resolving {
            slots: Vec::with_capacity(references),
            ..Resolving::default()
        };
        let asking = Asking {
            files: numbered,
            found: Cell::new(0),
        };
        for n in run {
            let Some(f) = files.get(n) else { continue };
            out.starts.push(out.slots.len() as u32);
            if chosen.get(n) != Some(&true) {
                continue;
            }
            let n = n as u32;
            let from = (n, &*f.path);
            // A scan still in the cache's bytes is read there, its strings in
            // place: nothing is decoded or kept.
            let read = (f.scan_cell().still_encoded())
                .and_then(|encoded| out.push_encoded(index, &asking, from, encoded));
            // Otherwise the scan at hand; or, for a record that does not read, the
            // file's, read and kept, so that the check reads the same scan again
            // (the file may change in between).
            let error = read.unwrap_or_else(|| out.push_scan(index, &asking, from, f.scan()));
            if let Some(e) = error {
                out.scan_errors.push((n, e));
            }
        }
        out
    }

    /// Calls `f` with every reference's file, position and target, leaving out
    /// the files named as they should be unless `all`.
    fn each_slot<'a>(&'a self, all: bool, f: &mut dyn FnMut(&'a FileEntry, usize, &Target)) {
        for (n, file) in self.files.iter().enumerate() {
            for (i, slot) in self.slots_of(n).iter().enumerate() {
                let target = match *slot {
                    Slot::NotReference => None,
                    Slot::File(_) if !all => None,
                    Slot::File(to) | Slot::FileMisspelled(to) => self.as_targets.get(to as usize),
                    Slot::Other(k) => self.others.get(k as usize),
                };
                if let Some(target) = target {
                    f(file, i, target);
                }
            }
        }
    }

    /// The slots of the file numbered `n`.
    fn slots_of(&self, n: usize) -> &[Slot] {
        let start = self.starts.get(n).map_or(0, |&s| s as usize);
        let end = self.starts.get(n + 1).map_or(start, |&e| e as usize);
        self.slots.get(start..end).unwrap_or(&[])
    }
}

/// What a file whose slots are `slots` names (sorted, without repeats), and the
/// prefabs it includes, in the order of its `prefab_edges`: all a check asks of a
/// file's references besides what it reports of each.
fn outgoing(slots: &[Slot], prefab_edges: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut names: Vec<u32> = (slots.iter())
        .filter_map(|slot| match *slot {
            Slot::File(to) | Slot::FileMisspelled(to) => Some(to),
            _ => None,
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    let prefabs = prefab_edges.iter().map(|&(_, to)| to).collect();
    (names, prefabs)
}

impl ResolvedReferences for Resolution<'_> {
    fn each_reference<'a>(
        &'a self,
        _index: &'a Index,
        f: &mut dyn FnMut(&'a FileEntry, usize, &Target),
    ) {
        self.each_slot(true, f);
    }

    fn each_reportable<'a>(
        &'a self,
        _index: &'a Index,
        f: &mut dyn FnMut(&'a FileEntry, usize, &Target),
    ) {
        self.each_slot(false, f);
    }

    fn each_scan_error<'a>(
        &'a self,
        _index: &'a Index,
        f: &mut dyn FnMut(&'a FileEntry, &ScanError),
    ) {
        for (n, error) in &self.scan_errors {
            if let Some(file) = self.files.get(*n as usize) {
                f(file, error);
            }
        }
    }

    fn reachable(&self, roots: &[String]) -> FastSet<&str> {
        let mut seen = vec![false; self.files.len()];
        let mut to_visit: Vec<usize> = roots
            .iter()
            .filter_map(|root| {
                let n = self
                    .files
                    .binary_search_by(|f| (*f.path).cmp(root.as_str()))
                    .ok()?;
                Some(n)
            })
            .collect();
        while let Some(n) = to_visit.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            for slot in self.slots_of(n) {
                if let Slot::File(to) | Slot::FileMisspelled(to) = *slot
                    && !seen[to as usize]
                {
                    to_visit.push(to as usize);
                }
            }
        }
        (self.files.iter().zip(&seen))
            .filter(|(_, seen)| **seen)
            .map(|(f, _)| &*f.path)
            .collect()
    }

    fn prefab_cycles(&self) -> Vec<Vec<String>> {
        prefab_cycles_among(self.prefab_edges.iter().copied(), |n| {
            self.files
                .get(n as usize)
                .map_or_else(String::new, |f| f.path.to_string())
        })
    }
}
