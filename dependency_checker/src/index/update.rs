//! Keeping the index current file by file: the paths a watcher reports, the
//! files Kiln itself wrote (taken from the bytes it wrote), and the entries a move
//! carries to their new paths.

use std::sync::Arc;

use super::build::{Counters, Source, index_file, leads_outside, now_ns, sort_issues};
use super::codec::{self, ScanCell};
use super::entry::FileEntry;
use super::entry::{Scanned, WriteScans, Written};
use super::files::{Index, WalkIssue};
use super::levels::{KeptLayouts, KeptLevelLayout, LevelLayoutJob};
use crate::fs::{is_excluded, is_within, split_extension};
use crate::scan::{scan_file, scan_file_in};

impl Index {
    /// Re-indexes the given project-relative files (changed, created or deleted).
    /// Returns the paths whose entries changed.
    ///
    /// A path that is now a folder is walked (a folder moved or created in one go
    /// reports only itself, and files written into a new folder before the watcher
    /// saw it report nothing); a path that no longer exists removes every entry
    /// under it too.
    pub fn update(&mut self, paths: &[String]) -> Vec<String> {
        let started = now_ns();
        let counters = Counters::since(started);
        let mut changed = Vec::new();
        let mut work: Vec<String> = Vec::with_capacity(paths.len());
        // Reached without following a link, as the walk reaches it: a folder
        // swapped for a link to elsewhere is never looked through.
        let folders = crate::fs::FolderCursor::default();
        for rel in paths {
            match folders.stat(&self.root, rel) {
                Ok((kiln_core::fs::Kind::Folder, _)) => {
                    // What is in it now, what the index had in it (gone since, if
                    // not found again), and a file of its name that it replaced.
                    self.collect_files(rel, &mut work);
                    work.extend(self.files_in_folder(rel).map(|f| f.path.to_string()));
                    work.push(rel.clone());
                }
                _ => {
                    // A file, nothing, or a link where a folder may have been:
                    // what the index had under it is looked at again too.
                    work.extend(self.files_in_folder(rel).map(|f| f.path.to_string()));
                    work.push(rel.clone());
                }
            }
        }
        work.sort();
        work.dedup();
        let mut buf = std::mem::take(&mut self.scratch.0);
        // What a walk reports of these paths is worked out again too: a file
        // unreadable before may read now, a file may have become a link, and a
        // file created or deleted may be what a link names.
        let (mut issues_changed, mut links_changed, mut came_or_went) = (false, false, false);
        for rel in &work {
            if is_excluded(rel) {
                continue;
            }
            let now = folders.stat(&self.root, rel);
            if !matches!(now, Ok((kiln_core::fs::Kind::Folder, _))) {
                let before = self.issues.len();
                (self.issues).retain(|i| !matches!(i, WalkIssue::Unreadable(p, _) if p == rel));
                issues_changed |= self.issues.len() != before;
                // The link itself, or links in a folder that is gone (the links
                // starting with `rel` are together).
                let from = self.links.partition_point(|l| l.as_str() < rel.as_str());
                if self
                    .links
                    .get(from)
                    .is_some_and(|l| l.starts_with(rel.as_str()))
                {
                    let before = self.links.len();
                    self.links.retain(|link| !is_within(link, rel));
                    links_changed |= self.links.len() != before;
                }
            }
            match now {
                Ok((kiln_core::fs::Kind::File, stat)) => {
                    let prev = self.files.get(rel.as_str());
                    match index_file(
                        (&self.registry, &self.rules),
                        rel,
                        Source::Stated(&folders, &self.root, rel, stat),
                        prev,
                        self.checked_at_ns,
                        &counters,
                        (&mut buf, Some(&mut self.levels)),
                    ) {
                        Ok(entry) => {
                            if prev != Some(&entry) {
                                came_or_went |= prev.is_none();
                                changed.push(rel.clone());
                                self.files.insert(entry.path.clone(), entry);
                            }
                        }
                        Err(e) => {
                            self.issues
                                .push(WalkIssue::Unreadable(rel.clone(), e.to_string()));
                            issues_changed = true;
                        }
                    }
                }
                now => {
                    self.levels.forget(rel);
                    if self.files.remove(rel.as_str()).is_some() {
                        came_or_went = true;
                        changed.push(rel.clone());
                    }
                    if let Ok((kiln_core::fs::Kind::Link, _)) = now
                        && let Err(at) = self.links.binary_search(rel)
                    {
                        self.links.insert(at, rel.clone());
                        links_changed = true;
                    }
                }
            }
        }
        if links_changed || (came_or_went && !self.links.is_empty()) {
            self.issues
                .retain(|i| !matches!(i, WalkIssue::LinkOutside(_)));
            for link in &self.links {
                if leads_outside(&self.root, link) {
                    self.issues.push(WalkIssue::LinkOutside(link.clone()));
                }
            }
            issues_changed = true;
        }
        if issues_changed {
            sort_issues(&mut self.issues);
        }
        self.checked_at_ns = started;
        self.scratch.0 = buf;
        changed
    }

    /// Reads and scans the big level `path` (one the index takes by the entities
    /// that changed, see `levels.rs`) to keep its layout, if none is kept for
    /// the content it has: the first save of a level a designer just opened is
    /// then scanned by what it changed, as every later one is. Nothing is done
    /// if the file is not as the index has it (the next update takes it). See
    /// [`Index::level_layout_job`] to do the work on another thread.
    pub fn keep_level_layout(&mut self, path: &str) {
        if let Some(layout) = self.level_layout_job(path).and_then(LevelLayoutJob::run) {
            self.take_level_layout(layout);
        }
    }

    /// What [`Index::keep_level_layout`] does apart from the index, for a thread
    /// of its own (a 28 MB level takes 240 ms to scan): `None` if `path` is not
    /// a big level or its layout is kept already.
    pub fn level_layout_job(&self, path: &str) -> Option<LevelLayoutJob> {
        let entry = self.files.get(path)?;
        let ext = split_extension(path).map_or("", |(_, e)| e);
        if !KeptLayouts::takes(&self.registry, ext, entry.size as usize)
            || self.levels.describes(path, entry.hash)
        {
            return None;
        }
        Some(LevelLayoutJob {
            root: self.root.clone(),
            path: entry.path.clone(),
            ext: ext.to_owned(),
            size: entry.size,
            hash: entry.hash,
            registry: self.registry.clone(),
            rules: self.rules.clone(),
        })
    }

    /// Keeps a layout a [`LevelLayoutJob`] made, if the file is still as the
    /// index has it.
    pub fn take_level_layout(&mut self, made: KeptLevelLayout) {
        let KeptLevelLayout { path, layout } = made;
        if self
            .files
            .get(&path)
            .is_some_and(|e| layout.describes(e.hash))
        {
            self.levels.keep(path, layout);
        }
    }

    /// Brings up to date with the disk what the references of `path` (a file, or
    /// every file under a folder) resolve against: `path` itself, then which files
    /// are directly in each folder those references point into (a reference names a
    /// file of one folder, with or without its extension). Every other entry is left
    /// as it was, and the entries of files that stayed in those folders are not
    /// checked against their content: `kiln deps` working alone asks about one
    /// file, and need not stat the whole project to answer.
    pub fn update_dependencies_of(&mut self, path: &str) {
        let path = path.trim_end_matches('/');
        self.update(&[path.to_owned()]);
        let files: Vec<Arc<str>> = match self.path_key(path) {
            Some(file) => vec![file.clone()],
            None => self.files_in_folder(path).map(|f| f.path.clone()).collect(),
        };
        // The folder of each path the references can resolve through.
        let mut folders = std::collections::BTreeSet::new();
        let mut buf = String::new();
        for file in files.iter().filter_map(|file| self.file(file)) {
            file.with_scan(|scan| {
                for r in scan.iter() {
                    if let Some(key) = r.key(&file.path, &mut buf) {
                        let folder = key.rsplit_once('/').map_or("", |(folder, _)| folder);
                        folders.insert(folder.to_owned());
                    }
                }
            });
        }
        // Only which files exist there matters to a reference, not what they hold: a
        // folder's listing settles it, and only the names that differ from the
        // index's are looked at further (a file gone, a file new).
        let mut paths = Vec::new();
        for folder in &folders {
            let prefix = if folder.is_empty() {
                String::new()
            } else {
                format!("{folder}/")
            };
            let known: std::collections::BTreeSet<&str> = self
                .files_from(&prefix)
                .take_while(|f| f.path.starts_with(prefix.as_str()))
                .filter(|f| !f.path[prefix.len()..].contains('/'))
                .map(|f| &*f.path)
                .collect();
            let there: std::collections::BTreeSet<String> =
                crate::fs::list_below(&self.root, folder)
                    .map(|entries| {
                        entries
                            .into_iter()
                            .filter(|(_, kind)| *kind == kiln_core::fs::Kind::File)
                            .map(|(p, _)| p)
                            .collect()
                    })
                    .unwrap_or_default();
            paths.extend(
                known
                    .iter()
                    .filter(|p| !there.contains(**p))
                    .map(|p| p.to_string()),
            );
            paths.extend(there.into_iter().filter(|p| !known.contains(p.as_str())));
        }
        self.update(&paths);
    }

    /// Hashes and scans `bytes` as the content of `path`, for
    /// [`Index::take_written`]: it needs only the index's rules, so a move does it
    /// on a second thread while it waits for the disk.
    pub fn scan_for_write(&self, path: &str, bytes: &[u8]) -> Scanned {
        let ext = split_extension(path).map_or("", |(_, e)| e);
        Scanned {
            hash: xxhash_rust::xxh3::xxh3_64(bytes),
            scan: ScanCell::new(Arc::new(scan_file(&self.registry, &self.rules, ext, bytes))),
        }
    }

    /// [`Index::scan_for_write`] into `scans`, kept encoded: returns the hash; the
    /// scan is handed out by [`Index::sealed_for_write`] once every file is done.
    pub(crate) fn encode_for_write(&self, scans: &mut WriteScans, path: &str, bytes: &[u8]) -> u64 {
        let ext = split_extension(path).map_or("", |(_, e)| e);
        let rules = (&*self.registry, &*self.rules);
        let scan = scan_file_in(&mut scans.scratch, rules, ext, bytes);
        scans.encoder.encode(&Arc::from(path), scan);
        xxhash_rust::xxh3::xxh3_64(bytes)
    }

    /// Each file encoded by [`Index::encode_for_write`] into any of `scans`, as a
    /// [`Scanned`] of `hash(path)`; a file not among them is read from its file
    /// when its references are asked for.
    pub(crate) fn sealed_for_write(
        &self,
        scans: Vec<WriteScans>,
    ) -> impl FnMut(&str, u64) -> Scanned + use<> {
        let encoders = scans.into_iter().map(|s| s.encoder).collect();
        let (mut sealed, unread) = codec::seal(encoders, &self.root, &self.registry, &self.rules);
        move |path, hash| Scanned {
            hash,
            scan: ScanCell::encoded(sealed.remove(path).unwrap_or_else(|| unread.clone())),
        }
    }

    /// Takes files Kiln has just written itself, from the bytes it wrote, without
    /// reading them back. Each is checked by one stat: a file whose size or time is
    /// not that of the bytes (another program wrote it since) is read as usual.
    /// Returns the paths whose entry changed.
    pub fn take_written(&mut self, written: &[Written]) -> Vec<String> {
        let started = now_ns();
        let mut changed = Vec::new();
        let mut read_back = Vec::new();
        // Looked at as an update looks, never through a link.
        let folders = crate::fs::FolderCursor::default();
        for w in written {
            let same = folders.stat(&self.root, w.path).is_ok_and(|(kind, st)| {
                kind == kiln_core::fs::Kind::File && st.size == w.size && st.mtime_ns == w.mtime_ns
            });
            if !same || is_excluded(w.path) {
                read_back.push(w.path.to_owned());
                continue;
            }
            let prev = self.files.get(w.path);
            let hash = w.scanned.hash;
            // The entry's scan is kept if the content is the same.
            let scan = match prev {
                Some(p) if p.hash == hash => p.scan.clone(),
                _ => w.scanned.scan.clone(),
            };
            let entry = FileEntry::with_cell(
                prev.map_or_else(|| w.path.into(), |p| p.path.clone()),
                w.size,
                w.mtime_ns,
                hash,
                scan,
            );
            if prev != Some(&entry) {
                changed.push(w.path.to_owned());
                self.files.insert(entry.path.clone(), entry);
            }
        }
        changed.extend(self.update(&read_back));
        self.checked_at_ns = self.checked_at_ns.min(started);
        changed
    }

    /// Every file under the folder `rel`, recursively, skipping what is not a resource.
    fn collect_files(&self, rel: &str, out: &mut Vec<String>) {
        use kiln_core::fs::{Entries, Kind, Step, Unreadable, walk_below};
        let _ = walk_below(
            &self.root,
            rel,
            Entries::OfTheProject,
            Unreadable::IsSkipped,
            |path, kind| {
                if kind == Kind::File {
                    out.push(path.to_owned());
                }
                Step::Enter
            },
        );
    }

    /// Moves the entries of `old` (a file, or every file under a folder) to `new`,
    /// as a rename Kiln made leaves them: the same contents and times under new
    /// paths. Their scans come along as they are (still in the cache's bytes, if
    /// they were), so the update that follows the rename finds them current and
    /// reads none again: a move of a folder of 22,000 files read and scanned every
    /// one of them anew. Returns the paths whose entries moved, old and new.
    pub(crate) fn carry_renamed(&mut self, old: &str, new: &str) -> Vec<String> {
        let old = old.trim_end_matches('/');
        let new = new.trim_end_matches('/');
        let mut moving: Vec<Arc<str>> = self.path_key(old).into_iter().cloned().collect();
        moving.extend(self.files_in_folder(old).map(|f| f.path.clone()));
        let mut moved = Vec::with_capacity(moving.len() * 2);
        for path in moving {
            let Some(entry) = self.files.remove(&path) else {
                continue;
            };
            self.levels.forget(&path);
            let to: Arc<str> = format!("{new}{}", &path[old.len()..]).into();
            let carried = FileEntry::with_cell(
                to.clone(),
                entry.size,
                entry.mtime_ns,
                entry.hash,
                entry.scan,
            );
            moved.push(path.to_string());
            moved.push(to.to_string());
            self.files.insert(to, carried);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::super::BuildOptions;
    use super::*;
    use kiln_core::{Project, Registry};
    use std::fs;

    use crate::scan::DeclaredRules;
    use crate::test_files::{level, write};

    /// A big level saved again and again is scanned by the entities that changed
    /// from the second save on (the first keeps its layout), and the index holds
    /// what a whole scan of each version finds.
    #[test]
    fn saves_of_a_big_level_are_scanned_by_the_entities_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kiln.project", "{}");
        let text = |materials: &[(usize, String)]| {
            let entities: Vec<String> = (materials.iter())
                .map(|(i, m)| {
                    format!(
                        "    {{\n      \"id\": \"e{i}\",\n      \"components\": {{\"mesh\": {{\"mesh\": \"meshes/cube\", \"material\": \"{m}\"}}}}\n    }}"
                    )
                })
                .collect();
            format!("{{\n  \"entities\": [\n{}\n  ]\n}}\n", entities.join(",\n"))
        };
        let mut materials: Vec<(usize, String)> =
            (0..4000).map(|i| (i, format!("materials/m{i}"))).collect();
        write(root, "levels/big.level", &text(&materials));
        assert!(
            fs::metadata(root.join("levels/big.level")).unwrap().len() as usize
                > super::super::levels::KEPT_FROM
        );
        let project = Project::open(root).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let mut index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let path = "levels/big.level".to_owned();
        type Edit = dyn Fn(&mut Vec<(usize, String)>);
        let edits: [&Edit; 4] = [
            &|m| m[1000].1 = "materials/first".into(),
            &|m| m[2000].1 = "materials/second".into(),
            &|m| {
                m.remove(500);
            },
            &|m| m.insert(3000, (9999, "materials/inserted".into())),
        ];
        for (n, edit) in edits.iter().enumerate() {
            edit(&mut materials);
            let now = text(&materials);
            // A new time, as a save gives (the index trusts an unchanged one).
            std::thread::sleep(std::time::Duration::from_millis(5));
            write(root, &path, &now);
            assert_eq!(
                index.update(std::slice::from_ref(&path)),
                std::slice::from_ref(&path)
            );
            assert_eq!(index.levels_scanned_by_change(), n as u64);
            let whole = scan_file(
                &registry,
                &DeclaredRules::default(),
                "level",
                now.as_bytes(),
            );
            assert_eq!(index.file(&path).unwrap().scan(), &whole, "after edit {n}");
        }
        let inserted = index.file(&path).unwrap().scan().references();
        let inserted = inserted
            .iter()
            .find(|r| r.text == "materials/inserted")
            .unwrap();
        assert_eq!(inserted.entity.as_deref(), Some("e9999"));
        assert_eq!(inserted.pointer, "/entities/3000/components/mesh/material");
        // A layout kept ahead (an editor that opened the level) takes even the
        // first save by what it changed.
        let mut index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        index.keep_level_layout(&path);
        materials[2500].1 = "materials/primed".into();
        std::thread::sleep(std::time::Duration::from_millis(5));
        write(root, &path, &text(&materials));
        index.update(std::slice::from_ref(&path));
        assert_eq!(index.levels_scanned_by_change(), 1);
        let whole = scan_file(
            &registry,
            &DeclaredRules::default(),
            "level",
            text(&materials).as_bytes(),
        );
        assert_eq!(index.file(&path).unwrap().scan(), &whole);
        // Gone, the file's layout goes too.
        fs::remove_file(root.join(&path)).unwrap();
        index.update(std::slice::from_ref(&path));
        assert!(index.levels.layouts_kept() == 0);
    }

    /// An update of a folder drops what is no longer in it, and a file that a
    /// folder of the same name replaced.
    #[test]
    fn an_update_of_a_folder_drops_what_left_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kiln.project", "{}");
        write(root, "props/a.level", &level("meshes/m"));
        write(root, "props/b.level", &level("meshes/m"));
        write(root, "props/c", "a file, for now");
        let project = Project::open(root).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let mut index = Index::build(&project, registry, &BuildOptions::default()).unwrap();
        fs::remove_file(root.join("props/b.level")).unwrap();
        fs::remove_file(root.join("props/c")).unwrap();
        write(root, "props/c/d.level", &level("meshes/m"));
        let mut changed = index.update(&["props".to_owned()]);
        changed.sort();
        assert_eq!(changed, ["props/b.level", "props/c", "props/c/d.level"]);
        assert!(index.contains("props/a.level") && index.contains("props/c/d.level"));
        assert!(!index.contains("props/b.level") && !index.contains("props/c"));
        index.update(&["props/c".to_owned()]);
        assert!(!index.contains("props/c"));
    }

    /// A folder swapped for a link to somewhere outside the project, with a path
    /// below it reported by the watcher in the same batch: the update reads nothing
    /// through the link (the walk never follows one either) and drops what was there.
    #[test]
    fn an_update_never_reads_through_a_folder_swapped_for_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kiln.project", "{}");
        write(root, "props/a.level", &level("meshes/m"));
        write(outside.path(), "a.level", &level("meshes/outside"));
        write(outside.path(), "b.level", &level("meshes/outside"));
        let project = Project::open(root).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let mut index = Index::build(&project, registry, &BuildOptions::default()).unwrap();
        assert!(index.contains("props/a.level"));
        fs::remove_dir_all(root.join("props")).unwrap();
        kiln_core::os::symlink(outside.path(), root.join("props")).unwrap();
        index.update(&[
            "props/a.level".to_owned(),
            "props/b.level".to_owned(),
            "props".to_owned(),
        ]);
        for rel in ["props/a.level", "props/b.level"] {
            assert!(!index.contains(rel), "{rel} read through the link");
        }
        // Updated one at a time, as a later batch would.
        index.update(&["props/b.level".to_owned()]);
        assert!(!index.contains("props/b.level"), "read through the link");
    }

    /// What a walk reports of links stays current over updates: a link to a file
    /// of the project leads to nothing once the file is deleted, and back when it
    /// is written again; a file replaced by a link is a link; a folder deleted
    /// with a link in it takes the link with it. After each update the index
    /// reports what a walk from scratch reports.
    #[test]
    fn an_update_keeps_what_the_walk_reports_of_links_current() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "kiln.project", "{}");
        write(root, "props/a.level", &level("meshes/m"));
        write(root, "props/b.level", &level("meshes/m"));
        write(root, "far/x.level", &level("meshes/m"));
        kiln_core::os::symlink(root.join("props/a.level"), root.join("link.level")).unwrap();
        kiln_core::os::symlink(root.join("props/b.level"), root.join("far/y.level")).unwrap();
        let project = Project::open(root).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let build = || Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut index = build();
        assert_eq!(index.walk_issues(), []);
        let outside = |rel: &str| WalkIssue::LinkOutside(rel.into());

        fs::remove_file(root.join("props/a.level")).unwrap();
        index.update(&["props/a.level".to_owned()]);
        assert_eq!(index.walk_issues(), [outside("link.level")]);
        assert_eq!(index.walk_issues(), build().walk_issues());

        write(root, "props/a.level", &level("meshes/n"));
        index.update(&["props/a.level".to_owned()]);
        assert_eq!(index.walk_issues(), []);

        fs::remove_file(root.join("props/b.level")).unwrap();
        kiln_core::os::symlink("/", root.join("props/b.level")).unwrap();
        index.update(&["props/b.level".to_owned()]);
        assert!(!index.contains("props/b.level"));
        assert_eq!(index.walk_issues(), build().walk_issues());
        assert!(index.walk_issues().contains(&outside("props/b.level")));

        fs::remove_dir_all(root.join("far")).unwrap();
        index.update(&["far".to_owned()]);
        assert_eq!(index.walk_issues(), build().walk_issues());
        assert_eq!(index.walk_issues(), [outside("props/b.level")]);
    }
}
