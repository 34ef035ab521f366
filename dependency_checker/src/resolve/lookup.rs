//! [`Lookup`]: what references a file and what a file references, answered from the
//! index without the whole graph (`graph.rs`), and kept current file by
//! file.
//!
//! The graph resolves every reference of the project; a change drops it and the next
//! question rebuilds it, which costs what the project costs. A move of a file with
//! 1,000 referrers, a running `kiln watch` working out which levels a change reaches,
//! and a server answering `kiln refs` need a few files' references, not all of them.
//! So each reference is filed under the one key it can resolve through (the path it
//! names with its type's extension, its text for a reference written without type,
//! or a glTF URI's resolved path) and resolved only when asked about, against the
//! index as it is then. A changed file takes its keys back and files its new ones;
//! the rest stays. The answers are the graph's, reference for reference (a property
//! test compares them on random projects and random changes).

use std::sync::Arc;

use super::target::{BaseMatch, FileSet, ResolvedRef, Target, resolve};
use crate::fs::split_extension;
use crate::hash::{FastMap, FastSet};
use crate::index::{FileEntry, Index};
use crate::scan::RefView;

/// References filed by the key they resolve through.
#[derive(Debug, Default)]
pub struct Lookup {
    /// Key -> the references (file, position) written with it.
    by_key: FastMap<Arc<str>, Vec<(Arc<str>, u32)>>,
    /// What each file filed, (key, position) in position order, to take back what
    /// changes.
    /// Each key is the one string `by_key` holds: a running editor or `kiln watch`
    /// files all 874,000 references of 100,000 files, and a copy of the key for each
    /// took a third of its memory.
    keys_of: FastMap<Arc<str>, Filed<Arc<str>>>,
    /// The keys whose references all were filed; `None`: every key
    /// (see [`Lookup::for_files`]).
    covered: Option<FastSet<Box<str>>>,
}

/// The most referring files whose decoded scans a question keeps (see
/// [`Lookup::each_resolved_under`]).
pub(crate) const KEEP_DECODED_UP_TO: usize = 4096;

/// What one file files: (key, position) of each of its references, in position
/// order.
type Filed<K> = Vec<(K, u32)>;

/// A lookup's maps as plain values, for a test to compare.
#[cfg(test)]
type Filing = Vec<(String, Vec<(String, u32)>)>;

/// Whether `target` is `file`, existing or missing.
fn points_at(target: &Target, file: &str) -> bool {
    matches!(target, Target::Resolved(p) | Target::Missing(p) if **p == *file)
}

/// Whether `target` is ambiguous with `file` among its candidates.
fn may_mean(target: &Target, file: &str) -> bool {
    matches!(target, Target::Ambiguous(c) if c.iter().any(|p| **p == *file))
}

/// The keys the references that can name `file` are filed under: its path, and its
/// path without extension (a reference written without type or extension).
pub(crate) fn keys_naming(file: &str) -> impl Iterator<Item = &str> {
    std::iter::once(file).chain(split_extension(file).map(|(base, _)| base))
}

/// What `entry` files: the key of each of its references, with its position,
/// in position order.
pub(crate) fn filed_by(entry: &FileEntry) -> Filed<Box<str>> {
    let mut filed = Vec::new();
    let mut buf = String::new();
    entry.with_scan(|scan| {
        for (i, r) in scan.iter().enumerate() {
            if let Some(key) = r.key(&entry.path, &mut buf) {
                filed.push((Box::from(key), i as u32));
            }
        }
    });
    filed
}

impl FileSet for Index {
    fn file(&self, path: &str) -> Option<&Arc<str>> {
        self.path_key(path)
    }
    /// A range of the index: the files named `base.` and an extension.
    fn with_base(&self, base: &str) -> BaseMatch<'_> {
        let from = format!("{base}.");
        let mut found = self
            .files_from(&from)
            .take_while(|f| f.path.starts_with(from.as_str()))
            .filter(|f| split_extension(&f.path).is_some_and(|(b, _)| b == base))
            .map(|f| &f.path);
        match (found.next(), found.next()) {
            (None, _) => BaseMatch::None,
            (Some(one), None) => BaseMatch::One(one),
            (Some(a), Some(b)) => {
                let mut many = vec![a.clone(), b.clone()];
                many.extend(found.cloned());
                BaseMatch::Many(many)
            }
        }
    }
}

impl Lookup {
    /// Files every reference of `index`.
    pub fn build(index: &Index) -> Self {
        let mut lookup = Lookup::default();
        for entry in index.files() {
            lookup.add_file(entry);
        }
        lookup
    }

    /// Files only the references under the keys that can name one of `files` (the
    /// file's path, and its path without extension), in one pass that files
    /// nothing else: a command working alone asks one question and exits, and
    /// filing every reference first would cost more than the question.
    pub fn for_files(index: &Index, files: &[String]) -> Self {
        let keys: FastSet<&str> = files.iter().flat_map(|f| keys_naming(f)).collect();
        let mut lookup = Lookup {
            covered: Some(keys.iter().map(|k| Box::from(*k)).collect()),
            ..Lookup::default()
        };
        let mut buf = String::new();
        // A reference can name one of the files only if its text is one of the keys
        // (a typed one is written without its extension, a generic one with or
        // without) or it is a relative URI: files still encoded in the cache that
        // mention none of them are skipped without decoding them.
        let mut mentions = crate::index::Mentions::of(&keys);
        for entry in index.files() {
            if !mentions.may_mention(entry.scan_cell()) {
                continue;
            }
            entry.with_scan(|scan| {
                for (i, r) in scan.iter().enumerate() {
                    let Some(key) = r.key(&entry.path, &mut buf) else {
                        continue;
                    };
                    if keys.contains(key) {
                        lookup.file_under(key, entry.path.clone(), i as u32);
                    }
                }
            });
        }
        lookup
    }

    fn add_file(&mut self, entry: &FileEntry) {
        let filed: Vec<(Arc<str>, u32)> = filed_by(entry)
            .into_iter()
            .map(|(key, i)| (self.file_under(&key, entry.path.clone(), i), i))
            .collect();
        if !filed.is_empty() {
            self.keys_of.insert(entry.path.clone(), filed);
        }
    }

    /// Files reference `i` of `file` under `key`; returns the key as `by_key` holds
    /// it, for `keys_of` to share.
    fn file_under(&mut self, key: &str, file: Arc<str>, i: u32) -> Arc<str> {
        let held = self.by_key.get_key_value(key).map(|(held, _)| held.clone());
        match held {
            Some(held) => {
                if let Some(refs) = self.by_key.get_mut(key) {
                    refs.push((file, i));
                }
                held
            }
            None => {
                let held: Arc<str> = Arc::from(key);
                self.by_key.insert(held.clone(), vec![(file, i)]);
                held
            }
        }
    }

    /// Takes the files in `changed` (created, modified or removed) as they are in
    /// `index` now. Only what a file files differently moves: a thousand files
    /// patched by one move, each with one reference renamed, take back one key's
    /// references in one pass and file one new key's, and leave the rest alone.
    pub fn update(&mut self, index: &Index, changed: &[String]) {
        /// A reference of a changed file as it is filed now.
        enum Slot {
            /// Filed under this key before, and still.
            Kept(Arc<str>, u32),
            /// New, at this position: the `n`-th of `added`.
            Added(usize, u32),
        }
        let files: FastSet<&str> = changed.iter().map(String::as_str).collect();
        let mut gone: FastMap<Arc<str>, Vec<(Arc<str>, u32)>> = FastMap::default();
        let mut added: Vec<(Box<str>, Arc<str>, u32)> = Vec::new();
        let mut refiled: Vec<(Arc<str>, Vec<Slot>)> = Vec::new();
        let mut buf = String::new();
        for path in files {
            let (old_path, old) = self.keys_of.remove_entry(path).unwrap_or_default();
            let Some(entry) = index.file(path) else {
                for (key, i) in old {
                    gone.entry(key).or_default().push((old_path.clone(), i));
                }
                continue;
            };
            // Both in position order: each reference's key is compared with the
            // one filed for its position, without a copy of it (a save of a
            // 100,000-entity level moves one of its 200,000 references).
            let mut slots = Vec::with_capacity(old.len());
            let mut old = old.into_iter().peekable();
            let mut moved = false;
            entry.with_scan(|scan| {
                for (i, r) in scan.iter().enumerate() {
                    let Some(key) = r.key(&entry.path, &mut buf) else {
                        continue;
                    };
                    let i = i as u32;
                    while let Some((was, at)) = old.next_if(|(_, at)| *at < i) {
                        gone.entry(was).or_default().push((old_path.clone(), at));
                        moved = true;
                    }
                    match old.next_if(|(_, at)| *at == i) {
                        Some((was, at)) if *was == *key => slots.push(Slot::Kept(was, at)),
                        was => {
                            if let Some((was, at)) = was {
                                gone.entry(was).or_default().push((old_path.clone(), at));
                            }
                            slots.push(Slot::Added(added.len(), i));
                            added.push((key.into(), entry.path.clone(), i));
                            moved = true;
                        }
                    }
                }
            });
            for (was, at) in old {
                gone.entry(was).or_default().push((old_path.clone(), at));
                moved = true;
            }
            if !moved {
                // Filed as it was: the kept keys are the old list, in its order.
                let same: Filed<Arc<str>> = (slots.into_iter())
                    .filter_map(|s| match s {
                        Slot::Kept(key, at) => Some((key, at)),
                        Slot::Added(..) => None,
                    })
                    .collect();
                if !same.is_empty() {
                    self.keys_of.insert(entry.path.clone(), same);
                }
            } else if !slots.is_empty() {
                refiled.push((entry.path.clone(), slots));
            }
        }
        for (key, refs) in gone {
            if let Some(filed) = self.by_key.get_mut(&key) {
                let refs: FastSet<(&str, u32)> = refs.iter().map(|(f, i)| (&**f, *i)).collect();
                filed.retain(|(file, i)| !refs.contains(&(&**file, *i)));
                if filed.is_empty() {
                    self.by_key.remove(&key);
                }
            }
        }
        // Each new reference's key as `by_key` holds it, for `keys_of` to share.
        let held: Vec<Arc<str>> = (added.into_iter())
            .map(|(key, file, i)| self.file_under(&key, file, i))
            .collect();
        for (path, slots) in refiled {
            let filed: Filed<Arc<str>> = (slots.into_iter())
                .filter_map(|s| match s {
                    Slot::Kept(key, at) => Some((key, at)),
                    Slot::Added(n, at) => Some((held.get(n)?.clone(), at)),
                })
                .collect();
            self.keys_of.insert(path, filed);
        }
    }

    /// Everything filed, sorted, with each file's keys: what a lookup kept current
    /// must equal a lookup built afresh.
    #[cfg(test)]
    pub(crate) fn filing(&self) -> (Filing, Filing) {
        let sorted = |map: &FastMap<Arc<str>, Vec<(Arc<str>, u32)>>| {
            let mut out: Filing = map
                .iter()
                .map(|(k, v)| {
                    let mut v: Vec<(String, u32)> =
                        v.iter().map(|(f, i)| (f.to_string(), *i)).collect();
                    v.sort();
                    (k.to_string(), v)
                })
                .collect();
            out.sort();
            out
        };
        (sorted(&self.by_key), sorted(&self.keys_of))
    }

    /// Whether every reference filed under `key` was filed: always, but for a
    /// lookup made [`Lookup::for_files`] only under the keys naming those files.
    pub fn covers(&self, key: &str) -> bool {
        self.covered.as_ref().is_none_or(|keys| keys.contains(key))
    }

    /// The references (file, position) filed under `key`: typed ones naming
    /// `key` with their extension, those written without type as `key`, and glTF
    /// URIs that resolve to `key`.
    pub fn filed_under(&self, key: &str) -> &[(Arc<str>, u32)] {
        self.by_key.get(key).map_or(&[], Vec::as_slice)
    }

    /// Each reference filed under one of `keys`, resolved, in order of file and
    /// position (one filed under two of the keys comes once): `each` gets the
    /// referring file's entry, the reference's position, the reference and its
    /// target. Each referring file's scan is decoded once and for the call only, so
    /// a question about a folder that 60,000 files reference holds one decoded scan
    /// at a time, not all of them.
    ///
    /// With `keep`, a question about at most [`KEEP_DECODED_UP_TO`] referring files
    /// keeps what it decodes: a process that keeps the whole lookup (an editor, a
    /// running `kiln watch`) is asked about the same files again (a move, then its
    /// undoing), and decoding a thousand files each time made a served move slower.
    pub(crate) fn each_resolved_under<'k>(
        &self,
        index: &Index,
        keys: impl IntoIterator<Item = &'k str>,
        keep: bool,
        mut each: impl FnMut(&FileEntry, usize, &RefView, Target),
    ) {
        let mut filed: Vec<&(Arc<str>, u32)> =
            keys.into_iter().flat_map(|k| self.filed_under(k)).collect();
        filed.sort_unstable_by(|a, b| (&*a.0, a.1).cmp(&(&*b.0, b.1)));
        filed.dedup();
        let keep = keep && filed.chunk_by(|a, b| a.0 == b.0).count() <= KEEP_DECODED_UP_TO;
        let mut buf = String::new();
        for group in filed.chunk_by(|a, b| a.0 == b.0) {
            let from = &group[0].0;
            let Some(entry) = index.file(from) else {
                continue;
            };
            let mut resolve_each = |scan: &crate::scan::FileScan| {
                for (_, i) in group {
                    let Some(r) = scan.get(*i as usize) else {
                        continue;
                    };
                    if let Some(target) = resolve(index, (from, &r), &mut buf) {
                        each(entry, *i as usize, &r, target);
                    }
                }
            };
            if keep {
                resolve_each(entry.scan());
            } else {
                entry.with_scan(resolve_each);
            }
        }
    }

    /// The references filed under `keys` whose target `want` accepts.
    fn resolved_under<'k>(
        &self,
        index: &Index,
        keys: impl IntoIterator<Item = &'k str>,
        want: impl Fn(&Target) -> bool,
    ) -> Vec<ResolvedRef> {
        let mut out = Vec::new();
        self.each_resolved_under(index, keys, false, |from, i, _, target| {
            if want(&target) {
                out.push(ResolvedRef {
                    file: from.path.clone(),
                    index: i,
                    target,
                });
            }
        });
        out
    }

    /// The references that point at `file` (which may be missing), by file and
    /// position.
    pub fn references_to(&self, index: &Index, file: &str) -> Vec<ResolvedRef> {
        // Written without extension, a unique match means this file.
        self.resolved_under(index, keys_naming(file), |t| points_at(t, file))
    }

    /// The ambiguous references that may mean `file` (it is one of their
    /// candidates), by file and position.
    pub fn ambiguous_references_to(&self, index: &Index, file: &str) -> Vec<ResolvedRef> {
        let Some((base, _)) = split_extension(file) else {
            return Vec::new();
        };
        self.resolved_under(index, [base], |t| may_mean(t, file))
    }

    /// The references `file` makes, in file order (needs no filing: the file's own
    /// entry lists them).
    pub fn references_from(index: &Index, file: &str) -> Vec<ResolvedRef> {
        let Some(entry) = index.file(file) else {
            return Vec::new();
        };
        let mut buf = String::new();
        entry.with_scan(|scan| {
            scan.iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    Some(ResolvedRef {
                        file: entry.path.clone(),
                        index: i,
                        target: resolve(index, (file, &r), &mut buf)?,
                    })
                })
                .collect()
        })
    }
}
