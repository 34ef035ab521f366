//! The project's files as the editor knows them: the project, its types, its
//! reference index and what the index finds, and the questions asked of files
//! before anything is written (is this name free, what would a delete or an
//! import take, what does a move patch). Writing goes through the history
//! (`file_changes.rs`); the one write here, [`ProjectFiles::step_files`], is what
//! a history step of whole files does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use dependency_checker::check::Finding;
use dependency_checker::ops::{MovePlan, MoveRequest};
use dependency_checker::{Checker, ReferenceView};
use kiln_core::fs::Kind;
use kiln_core::registry::ResourceFormat;
use kiln_core::{Project, Registry, ResourcePath};

use super::import::{ImportPlan, OnConflict};
use super::outbox::{Outbox, Severity};
use crate::editor::history::{FileWrite, FolderWrite};

/// The most a file the editor rewrites whole (a unit, a material) or deletes may
/// hold: its bytes before are kept for undo.
pub(super) const MAX_REWRITTEN_FILE: u64 = 256 << 20;

/// The project, its registry and its index.
pub struct ProjectFiles {
    pub(super) project: Project,
    pub(super) registry: Arc<Registry>,
    /// The project's reference index (None if indexing failed; see the log).
    pub(super) checker: Option<Checker>,
    pub(super) findings: Vec<Finding>,
    /// How many of `findings` are files no boot level reaches: counted once per
    /// check, not on every frame that shows the Problems tab's count.
    unused_files: usize,
    pub(super) levels: Vec<String>,
    /// Folders holding no project file (see [`ProjectFiles::empty_folders`]).
    pub(super) empty_folders: BTreeSet<String>,
    /// An import that would write over files, waiting for the user's answer.
    pub(super) import_question: Option<ImportQuestion>,
    /// What the last merge broke across files (see `merge_check.rs`), as far as
    /// the index still finds it; and the record's ours and theirs commits.
    pub(super) across: Vec<crate::merge_check::CrossFileConflict>,
    pub(super) across_sides: (Option<String>, Option<String>),
}

/// Why a path cannot be the name of a new file or folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameProblem {
    /// It is empty.
    Empty,
    /// Not a canonical path; the canonical spelling, if there is one.
    NotCanonical(Option<String>),
    /// Something is there already.
    Taken,
    /// Inside a folder Kiln keeps for itself (`.kiln/`, `build/`, `.git/`), or
    /// through a link leading out of the project.
    NotAResource,
}

impl std::fmt::Display for NameProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameProblem::Empty => write!(f, "give it a name"),
            NameProblem::NotCanonical(Some(s)) => {
                write!(
                    f,
                    "not a canonical name (lowercase a-z, 0-9, _, - and .): use \"{s}\""
                )
            }
            NameProblem::NotCanonical(None) => {
                write!(f, "not a canonical name (lowercase a-z, 0-9, _, - and .)")
            }
            NameProblem::Taken => write!(f, "there is a file or folder of that name already"),
            NameProblem::NotAResource => write!(
                f,
                "that place is not part of the project (Kiln's own .kiln, build or .git, or a link out of it)"
            ),
        }
    }
}

/// What deleting some files or folders takes away, and what names them.
#[derive(Debug, Clone, Default)]
pub struct DeletePlan {
    /// Every file that goes (project files, and hidden files in deleted folders).
    pub files: Vec<String>,
    /// Every folder that goes.
    pub folders: Vec<String>,
    /// The references to them from files that stay: each becomes missing unless
    /// pointed at another file.
    pub references: Vec<ReferenceView>,
}

impl std::fmt::Debug for ProjectFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectFiles")
            .field("project", &self.project.root())
            .field("levels", &self.levels)
            .finish_non_exhaustive()
    }
}

impl ProjectFiles {
    /// The files of the project at `project`, not indexed yet.
    pub(super) fn new(project: Project) -> anyhow::Result<Self> {
        let levels = project.levels()?;
        Ok(ProjectFiles {
            project,
            registry: Arc::new(Registry::with_builtins()),
            checker: None,
            findings: Vec::new(),
            unused_files: 0,
            levels,
            empty_folders: BTreeSet::new(),
            import_question: None,
            across: Vec::new(),
            across_sides: (None, None),
        })
    }

    /// The open project.
    pub fn project(&self) -> &Project {
        &self.project
    }
    /// Component and resource types.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
    /// The project's reference index (None if indexing failed; see the log).
    pub fn checker(&self) -> Option<&Checker> {
        self.checker.as_ref()
    }
    /// What the checker reports.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }
    /// How many of [`Self::findings`] are files no boot level reaches.
    pub fn unused_files(&self) -> usize {
        self.unused_files
    }
    /// Takes what the index finds now.
    pub(super) fn take_findings(&mut self) {
        if let Some(checker) = &self.checker {
            self.findings = checker.findings();
            self.unused_files = (self.findings.iter())
                .filter(|f| matches!(f, Finding::Unused { .. }))
                .count();
        }
        self.read_across();
    }
    /// Reads the last merge's conflicts across files again: those of the checker
    /// that it no longer finds are left out (a compile's are kept until
    /// `kiln check`, a merge, or the user says they are done).
    pub(super) fn read_across(&mut self) {
        let Some(record) = crate::merge_check::read_record(self.project.root()) else {
            self.across.clear();
            return;
        };
        let errors: BTreeSet<String> = (self.findings.iter())
            .filter(|f| f.is_error())
            .map(crate::merge_check::finding_key)
            .collect();
        self.across = (record.conflicts.into_iter())
            .filter(|c| !c.key.starts_with('{') || errors.contains(&c.key))
            .collect();
        self.across_sides = (record.ours, record.theirs);
    }
    /// What the last merge broke across files, still to fix.
    pub fn cross_file_conflicts(&self) -> &[crate::merge_check::CrossFileConflict] {
        &self.across
    }
    /// The commit a side of the last merge's record is: `ours` or `theirs`.
    pub fn merge_side_commit(&self, theirs: bool) -> Option<&str> {
        if theirs {
            self.across_sides.1.as_deref()
        } else {
            self.across_sides.0.as_deref()
        }
    }
    /// Every level of the project.
    pub fn levels(&self) -> &[String] {
        &self.levels
    }
    /// Indexes the project again (its files, and the types of the registry as it
    /// is now), and takes what the new index finds.
    pub(super) fn reindex(&mut self) -> Result<(), dependency_checker::CheckerError> {
        let checker = Checker::open(
            self.project.root(),
            self.registry.clone(),
            &dependency_checker::BuildOptions::default(),
        )?;
        self.checker = Some(checker);
        self.take_findings();
        Ok(())
    }

    /// Reads the list of levels again.
    pub(super) fn reread_levels(&mut self) {
        self.levels = self.project.levels().unwrap_or_default();
    }
    /// A resource file's fields as written (a material, a mesh), for the inspector.
    pub fn asset_fields(
        &self,
        file: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, String> {
        let bytes = kiln_core::read_below(self.project.root(), Path::new(file), 1 << 20)
            .map_err(|e| format!("{file}: {e}"))?;
        match serde_json::from_slice(&bytes) {
            Ok(serde_json::Value::Object(m)) => Ok(m),
            Ok(_) => Err(format!("{file}: not a JSON object")),
            Err(e) => Err(format!("{file}:{}:{}: {e}", e.line(), e.column())),
        }
    }
    /// Plans a rename or move of project files (nothing changes yet): what the
    /// rename dialog previews before the user accepts it as an
    /// [`crate::editor::Action::MoveAssets`].
    pub fn plan_move(&self, request: &MoveRequest) -> anyhow::Result<MovePlan> {
        let checker = self
            .checker
            .as_ref()
            .context("the project is not indexed")?;
        Ok(dependency_checker::ops::plan(checker, request)?)
    }

    /// Folders of the project that hold no project file (made in the editor, or
    /// found empty when the project was opened or refreshed): the asset browser
    /// shows them with the folders of the files.
    pub fn empty_folders(&self) -> &BTreeSet<String> {
        &self.empty_folders
    }

    /// Finds the project's folders that hold no project file.
    pub(super) fn scan_folders(&mut self) {
        use kiln_core::fs::{Entries, Step, Unreadable, walk_below};
        let mut folders = BTreeSet::new();
        // Not through links, and not into Kiln's own folders.
        let _ = walk_below(
            self.project.root(),
            "",
            Entries::OfTheProject,
            Unreadable::IsSkipped,
            |path, kind| {
                if kind == Kind::Folder {
                    folders.insert(path.to_owned());
                }
                Step::Enter
            },
        );
        if let Some(checker) = &self.checker {
            for file in checker.index().files() {
                let mut at = file.path.as_ref();
                while let Some((parent, _)) = at.rsplit_once('/') {
                    if !folders.remove(parent) {
                        break;
                    }
                    at = parent;
                }
            }
            // A folder with a file anywhere below it is not empty either.
            let with_files: Vec<String> = folders
                .iter()
                .filter(|f| checker.index().files_in_folder(f).next().is_some())
                .cloned()
                .collect();
            for f in with_files {
                folders.remove(&f);
            }
        }
        self.empty_folders = folders;
    }

    /// The resource types a new file can be made of, by extension: levels, units
    /// (prefabs), and every type with a JSON schema (materials, meshes, and those of
    /// plugins).
    pub fn creatable_types(&self) -> Vec<String> {
        self.registry
            .resource_types()
            .iter()
            .filter(|t| matches!(t.format, ResourceFormat::Entities | ResourceFormat::Json(_)))
            // A project has one `kiln.project`, at its root.
            .filter(|t| t.extension != "project")
            .map(|t| t.extension.clone())
            .collect()
    }

    /// A new file of type `ext` as Kiln writes it: canonical JSON with the schema's
    /// defaults (an empty entity list for a level or unit). `None` for types that
    /// cannot be made empty (a texture, a model).
    pub fn new_file_bytes(&self, ext: &str) -> Option<Vec<u8>> {
        let text = match &self.registry.resource_type(ext)?.format {
            ResourceFormat::Entities => {
                kiln_core::LevelDocument::default().to_canonical_json(&self.registry)
            }
            ResourceFormat::Json(fields) => {
                let defaults: serde_json::Map<String, serde_json::Value> = fields
                    .iter()
                    // An empty reference means none: left out, as it is by default.
                    .filter(|f| !matches!(&f.default, serde_json::Value::String(s) if s.is_empty()))
                    .filter(|f| !f.default.is_null())
                    .map(|f| (f.name.clone(), f.default.clone()))
                    .collect();
                kiln_core::json_format::to_canonical_string(&serde_json::Value::Object(defaults))
            }
            ResourceFormat::Binary | ResourceFormat::Gltf => return None,
        };
        let mut text = text;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Some(text.into_bytes())
    }

    /// Whether `path` (a file with its extension, or a folder) can be made: a
    /// canonical project path where nothing is yet.
    pub fn check_new_path(&self, path: &str) -> Result<(), NameProblem> {
        if path.is_empty() || path.ends_with('/') && path.len() == 1 {
            return Err(NameProblem::Empty);
        }
        if dependency_checker::fs::is_excluded(path) {
            return Err(NameProblem::NotAResource);
        }
        let canonical = ResourcePath::parse(path).map_err(|e| {
            NameProblem::NotCanonical(e.suggestion.or_else(|| {
                let parts: Vec<String> = path
                    .split('/')
                    .map(kiln_core::path::canonical_segment)
                    .filter(|p| !p.is_empty())
                    .collect();
                let s = parts.join("/");
                (!s.is_empty() && s != path).then_some(s)
            }))
        });
        canonical?;
        self.project
            .resolve(path)
            .map_err(|_| NameProblem::NotAResource)?;
        if kiln_core::fs::kind_below(self.project.root(), path).is_some() {
            return Err(NameProblem::Taken);
        }
        Ok(())
    }

    /// The folders below the root that must be made for `path` to be written.
    pub(super) fn missing_folders(&self, path: &str) -> Vec<FolderWrite> {
        let mut missing = Vec::new();
        let mut at = path;
        while let Some((parent, _)) = at.rsplit_once('/') {
            let exists = self
                .project
                .resolve(parent)
                .is_ok_and(|_| kiln_core::fs::kind_below(self.project.root(), parent).is_some());
            if exists {
                break;
            }
            missing.push(FolderWrite {
                folder: parent.to_owned(),
                made: true,
            });
            at = parent;
        }
        missing
    }

    /// What deleting `paths` (files, or folders with everything in them) takes away,
    /// and the references to it from files that stay.
    pub fn plan_delete(&self, paths: &[String]) -> Result<DeletePlan, String> {
        let mut plan = DeletePlan::default();
        for path in paths {
            if path == kiln_core::project::PROJECT_FILE {
                return Err(format!(
                    "{path} makes this folder a project; without it, Kiln no longer opens it"
                ));
            }
            self.project.resolve(path).map_err(|e| e.to_string())?;
            let root = self.project.root();
            match kiln_core::fs::kind_below(root, path) {
                None => return Err(format!("{path}: no such file or folder")),
                Some((Kind::Link, _)) => {
                    return Err(format!("{path} is a symbolic link; remove it outside Kiln"));
                }
                Some((Kind::Folder, _)) => collect_folder(root, path, &mut plan)?,
                Some(_) => plan.files.push(path.clone()),
            }
        }
        plan.files.sort();
        plan.files.dedup();
        plan.folders
            .sort_by_key(|f| std::cmp::Reverse(f.matches('/').count()));
        plan.folders.dedup();
        if let Some(checker) = &self.checker {
            for path in paths {
                for r in checker.references_to(path) {
                    let from_inside = paths
                        .iter()
                        .any(|p| dependency_checker::fs::is_within(&r.place.file, p));
                    if !from_inside {
                        plan.references.push(r);
                    }
                }
            }
        }
        Ok(plan)
    }

    /// What importing `sources` into `folder` would write (see [`super::import`]).
    pub fn plan_import(
        &self,
        sources: &[PathBuf],
        folder: &str,
        on_conflict: Option<OnConflict>,
    ) -> ImportPlan {
        let root = self.project.root();
        let exists = |p: &str| kiln_core::fs::kind_below(root, p).is_some();
        super::import::plan(sources, folder, &exists, on_conflict)
    }

    /// Files an import would write over, waiting for the user to choose.
    pub fn import_question(&self) -> Option<&ImportQuestion> {
        self.import_question.as_ref()
    }

    /// Reads a project file as the history compares it (`None`: it does not exist).
    pub(super) fn read_for_history(&self, file: &str) -> anyhow::Result<Option<Vec<u8>>> {
        match kiln_core::read_below(
            self.project.root(),
            std::path::Path::new(file),
            MAX_REWRITTEN_FILE,
        ) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(anyhow::anyhow!("{file}: {e}")),
        }
    }

    /// Writes (`forward`) or restores whole files, refusing if any of them changed
    /// on disk since the editor wrote it (another program's work is never
    /// overwritten by an undo). The history does the document's side of the
    /// change after it (`history.rs`, `Entry::run`).
    pub(super) fn step_files(
        &mut self,
        writes: &[FileWrite],
        folders: &[FolderWrite],
        forward: bool,
        outbox: &mut Outbox,
    ) -> anyhow::Result<()> {
        // Under the project's lock, as a save (see `save`).
        let write = dependency_checker::ProjectWrite::begin(self.project.root(), &|| {})?;
        self.step_files_locked(writes, folders, forward, outbox)?;
        let generations = write.end()?;
        if let Some(checker) = &mut self.checker {
            checker.wrote(generations);
        }
        // The project's settings changed (a boot level made, undone): read them
        // again, and index again, since what is in use follows the boot levels.
        if writes
            .iter()
            .any(|w| w.file == kiln_core::project::PROJECT_FILE)
        {
            match Project::open(self.project.root()) {
                Ok(project) => {
                    self.project = project;
                    if let Err(e) = self.reindex() {
                        outbox.error(format!("indexing the project again: {e}"));
                    }
                }
                Err(e) => outbox.error(format!("{e}")),
            }
        }
        Ok(())
    }

    /// [`ProjectFiles::step_files`], the project's lock held.
    fn step_files_locked(
        &mut self,
        writes: &[FileWrite],
        folders: &[FolderWrite],
        forward: bool,
        outbox: &mut Outbox,
    ) -> anyhow::Result<()> {
        for w in writes {
            let expected = if forward { &w.before } else { &w.after };
            if self.read_for_history(&w.file)? != *expected {
                anyhow::bail!("{} changed on disk since; it was left as it is", w.file);
            }
        }
        // Folders this makes, the shallowest first; then the files; then the folders
        // this removes, the deepest first (the files in them are gone by then).
        let depth = |f: &&FolderWrite| f.folder.matches('/').count();
        let mut make: Vec<&FolderWrite> = folders.iter().filter(|f| f.made == forward).collect();
        make.sort_by_key(depth);
        let mut made = Vec::new();
        let mut written = 0;
        let done = (|| -> anyhow::Result<()> {
            for f in &make {
                let existed = kiln_core::fs::kind_below(self.project.root(), &f.folder).is_some();
                kiln_core::create_dir_below(self.project.root(), std::path::Path::new(&f.folder))
                    .with_context(|| format!("making the folder {}", f.folder))?;
                if !existed {
                    made.push(f.folder.as_str());
                }
            }
            for w in writes {
                let target = if forward { &w.after } else { &w.before };
                self.put_file(&w.file, target.as_deref())?;
                written += 1;
            }
            Ok(())
        })();
        if let Err(e) = done {
            // Stopped halfway (a file in use, a full disk): what was written goes
            // back to what it was, so that the step is wholly undone and stays
            // where it was in the history.
            let mut left = Vec::new();
            for w in writes[..written].iter().rev() {
                let back = if forward { &w.before } else { &w.after };
                if let Err(again) = self.put_file(&w.file, back.as_deref()) {
                    left.push(format!("{again:#}"));
                }
            }
            for folder in made.iter().rev() {
                let _ = kiln_core::fs::remove_below(
                    self.project.root(),
                    std::path::Path::new(folder),
                    true,
                );
            }
            if !left.is_empty() {
                return Err(e.context(format!(
                    "and putting back what was written failed too: {}",
                    left.join("; ")
                )));
            }
            return Err(e);
        }
        let mut remove: Vec<&FolderWrite> = folders.iter().filter(|f| f.made != forward).collect();
        remove.sort_by_key(|f| std::cmp::Reverse(depth(f)));
        for f in remove {
            self.project.resolve(&f.folder)?;
            match kiln_core::fs::remove_below(
                self.project.root(),
                std::path::Path::new(&f.folder),
                true,
            ) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // Something else was put in it since: it stays, with that. The files
                // are done; a folder left is said, not undone.
                Err(e) => outbox.note(
                    Severity::Warning,
                    format!("the folder {} was left: {e}", f.folder),
                    false,
                ),
            }
        }
        if !folders.is_empty() {
            self.scan_folders();
        }
        Ok(())
    }

    /// Writes one file atomically below the project root (never through a link), or
    /// removes it.
    fn put_file(&self, file: &str, bytes: Option<&[u8]>) -> anyhow::Result<()> {
        #[cfg(test)]
        tests::maybe_fail(file)?;
        let rel = std::path::Path::new(file);
        match bytes {
            Some(b) => kiln_core::write_below(self.project.root(), rel, b)
                .map(|_| ())
                .with_context(|| format!("writing {file}")),
            None => {
                self.project.resolve(file)?;
                kiln_core::fs::remove_below(self.project.root(), rel, false)
                    .with_context(|| format!("removing {file}"))
            }
        }
    }
}

/// An import that would write over files, waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportQuestion {
    /// What is imported.
    pub sources: Vec<PathBuf>,
    /// Where to.
    pub folder: String,
    /// The project files it would write over.
    pub conflicts: Vec<String>,
}

/// Adds the folder `rel` below `root` and everything in it to `plan`: hidden files
/// too (the folder could not go otherwise), never through a link.
fn collect_folder(root: &Path, rel: &str, plan: &mut DeletePlan) -> Result<(), String> {
    plan.folders.push(rel.to_owned());
    let listing = kiln_core::fs::read_folder_below(root, rel).map_err(|e| format!("{rel}: {e}"))?;
    for (name, kind) in listing {
        let path = format!("{rel}/{name}");
        match kind {
            Kind::Link => {
                return Err(format!(
                    "{path} is a symbolic link; remove it outside Kiln first"
                ));
            }
            Kind::Folder => collect_folder(root, &path, plan)?,
            Kind::File => plan.files.push(path),
            Kind::Other => {
                return Err(format!(
                    "{path} is not a regular file; remove it outside Kiln first"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A project of one empty level.
    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("kiln.project"), "{}").unwrap();
        std::fs::create_dir(dir.path().join("levels")).unwrap();
        std::fs::write(dir.path().join("levels/a.level"), "{\"entities\": []}").unwrap();
        dir
    }

    thread_local! {
        /// A file whose write fails, as a file in use or a full disk makes it fail
        /// (fault injection for the tests of this module).
        static FAILS: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    }

    pub(super) fn maybe_fail(file: &str) -> anyhow::Result<()> {
        FAILS.with(|f| match f.borrow().as_deref() {
            Some(failing) if failing == file => anyhow::bail!("writing {file}: injected failure"),
            _ => Ok(()),
        })
    }

    fn write(file: &str, before: Option<&str>, after: Option<&str>) -> FileWrite {
        FileWrite {
            file: file.into(),
            before: before.map(|b| b.as_bytes().to_vec()),
            after: after.map(|a| a.as_bytes().to_vec()),
        }
    }

    #[test]
    fn a_files_step_that_fails_halfway_puts_back_what_it_wrote() {
        let dir = project();
        std::fs::write(dir.path().join("old.txt"), "before").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "kept").unwrap();
        let mut files = ProjectFiles::new(Project::open(dir.path()).unwrap()).unwrap();
        let mut outbox = Outbox::default();
        // Three writes that work (a change, a removal, a new file in a new folder),
        // then one that fails.
        let writes = [
            write("old.txt", Some("before"), Some("after")),
            write("gone.txt", Some("kept"), None),
            write("new/made.txt", None, Some("new")),
            write("last.txt", None, Some("never")),
        ];
        let folders = [FolderWrite {
            folder: "new".into(),
            made: true,
        }];
        FAILS.with(|f| *f.borrow_mut() = Some("last.txt".into()));
        let e = files
            .step_files(&writes, &folders, true, &mut outbox)
            .unwrap_err();
        FAILS.with(|f| *f.borrow_mut() = None);
        assert!(format!("{e:#}").contains("injected failure"), "{e:#}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("old.txt")).unwrap(),
            "before"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("gone.txt")).unwrap(),
            "kept"
        );
        assert!(
            !dir.path().join("new").exists(),
            "the folder it made went too"
        );
        assert!(!dir.path().join("last.txt").exists());

        // Undone halfway the same: the step stays done, its files as it left them.
        files
            .step_files(&writes, &folders, true, &mut outbox)
            .unwrap();
        FAILS.with(|f| *f.borrow_mut() = Some("old.txt".into()));
        assert!(
            files
                .step_files(&writes, &folders, false, &mut outbox)
                .is_err()
        );
        FAILS.with(|f| *f.borrow_mut() = None);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("last.txt")).unwrap(),
            "never"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("new/made.txt")).unwrap(),
            "new"
        );
        assert!(!dir.path().join("gone.txt").exists());
        // And then undone for real.
        files
            .step_files(&writes, &folders, false, &mut outbox)
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("old.txt")).unwrap(),
            "before"
        );
        assert!(!dir.path().join("new").exists());
    }
}
