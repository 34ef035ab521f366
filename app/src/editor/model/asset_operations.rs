//! Creating, duplicating, deleting and importing project files from the editor.
//! Each is one step of the history (undo puts the files back byte for byte), written
//! below the project root without following links; a delete first shows, and can
//! repoint, every reference to what it deletes, through the dependency checker.

use kiln_core::fs::Kind;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use dependency_checker::ReferenceView;
use dependency_checker::ops::Operation;
use kiln_core::ResourcePath;
use kiln_core::registry::ResourceFormat;

use super::import::{ImportPlan, OnConflict};
use super::{Editor, Effect};
use crate::editor::history::{Entry, FolderWrite};

use super::disk_operations::MAX_REWRITTEN_FILE as MAX_DELETED_FILE;

/// The most one delete may take away in all: undo keeps it in memory.
const MAX_DELETED_TOTAL: u64 = 1 << 30;

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

impl Editor {
    /// Folders of the project that hold no project file (made in the editor, or
    /// found empty when the project was opened or refreshed): the asset browser
    /// shows them with the folders of the files.
    pub fn empty_folders(&self) -> &BTreeSet<String> {
        &self.empty_folders
    }

    /// Finds the project's folders that hold no project file.
    pub(super) fn scan_folders(&mut self) {
        let mut folders = BTreeSet::new();
        let root = self.project.root();
        let mut stack = vec![String::new()];
        while let Some(rel) = stack.pop() {
            let Ok(listing) = kiln_core::fs::read_folder_below(root, &rel) else {
                continue;
            };
            for (name, kind) in listing {
                let path = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                // Not through links, and not into Kiln's own folders.
                if kind == Kind::Folder && !kiln_core::fs::is_excluded(&path) {
                    stack.push(path.clone());
                    folders.insert(path);
                }
            }
        }
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
    fn missing_folders(&self, path: &str) -> Vec<FolderWrite> {
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

    /// Makes a new file at `file` of its extension's type (see
    /// [`Editor::new_file_bytes`]), and shows it: one undo step.
    pub(super) fn create_asset(&mut self, file: &str) {
        if let Err(e) = self.check_new_path(file) {
            return self.error(format!("cannot make {file}: {e}"));
        }
        let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
        let Some(bytes) = self.new_file_bytes(ext) else {
            return self.error(format!(
                "cannot make {file}: Kiln makes levels, prefabs and files with a schema, not .{ext} files (import one instead)"
            ));
        };
        let folders = self.missing_folders(file);
        if let Some(entry) = self.files_entry(
            vec![(file.to_owned(), Some(bytes))],
            folders,
            None,
            format!("new {file}"),
        ) && self.do_files_entry(entry, false)
        {
            self.effects.push(Effect::ShowFile(file.to_owned()));
            // A new level or prefab is opened to be filled.
            if matches!(ext, "level" | "unit") {
                self.effects.push(Effect::OpenLevel(file.to_owned()));
            }
        }
    }

    /// Makes the folder `folder` (and those above it): one undo step.
    pub(super) fn create_folder(&mut self, folder: &str) {
        if let Err(e) = self.check_new_path(folder) {
            return self.error(format!("cannot make the folder {folder}: {e}"));
        }
        let mut folders = self.missing_folders(folder);
        folders.push(FolderWrite {
            folder: folder.to_owned(),
            made: true,
        });
        if let Some(entry) =
            self.files_entry(Vec::new(), folders, None, format!("new folder {folder}"))
            && self.do_files_entry(entry, false)
        {
            self.effects.push(Effect::ShowFile(format!("{folder}/")));
        }
    }

    /// Copies the file `file` to `copy` (a new canonical name): one undo step.
    pub(super) fn duplicate_asset(&mut self, file: &str, copy: &str) {
        if let Err(e) = self.check_new_path(copy) {
            return self.error(format!("cannot copy {file} to {copy}: {e}"));
        }
        let bytes = match self.read_for_history(file) {
            Ok(Some(b)) => b,
            Ok(None) => return self.error(format!("cannot copy {file}: it does not exist")),
            Err(e) => return self.error(format!("cannot copy {e:#}")),
        };
        let folders = self.missing_folders(copy);
        if let Some(entry) = self.files_entry(
            vec![(copy.to_owned(), Some(bytes))],
            folders,
            None,
            format!("duplicate {file} as {copy}"),
        ) && self.do_files_entry(entry, false)
        {
            self.effects.push(Effect::ShowFile(copy.to_owned()));
        }
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

    /// Deletes `paths` (files or folders): one undo step that puts them back byte
    /// for byte. With `replace_with` (one file deleted), every reference to it from
    /// the files that stay is first pointed at that file instead, patched as a move
    /// patches them; otherwise they become missing references in Problems.
    pub(super) fn delete_assets(&mut self, paths: &[String], replace_with: Option<&str>) {
        let plan = match self.plan_delete(paths) {
            Ok(p) => p,
            Err(e) => return self.error(format!("cannot delete: {e}")),
        };
        let open = self.level.as_ref().map(|l| l.file.clone());
        let closes_open_level = open
            .as_deref()
            .is_some_and(|f| plan.files.iter().any(|d| d == f));
        if closes_open_level && self.is_dirty() {
            return self.error(
                "the open level has unsaved edits: save or discard them before deleting it",
            );
        }
        let what = match paths {
            [one] => one.clone(),
            many => format!("{} files", many.len()),
        };
        // Undo keeps what a delete took: a file, or a whole delete, too big for that
        // is refused rather than kept in memory.
        let mut total = 0u64;
        for f in &plan.files {
            let len =
                kiln_core::fs::kind_below(self.project.root(), f).map_or(0, |(_, st)| st.size);
            total += len;
            if len > MAX_DELETED_FILE || total > MAX_DELETED_TOTAL {
                return self.error(format!(
                    "cannot delete {what} in Kiln: {} is more than undo keeps ({} MB); delete it outside Kiln",
                    if len > MAX_DELETED_FILE { f.as_str() } else { "all of it together" },
                    if len > MAX_DELETED_FILE { MAX_DELETED_FILE } else { MAX_DELETED_TOTAL } >> 20
                ));
            }
        }
        let mut entries = Vec::new();
        let mut label = format!("delete {what}");
        if let (Some(new), [old]) = (replace_with, paths) {
            let Some(checker) = &self.checker else {
                return self.error("the project is not indexed");
            };
            let patches = dependency_checker::ops::plan_retarget(checker, old, new, paths);
            if !patches.is_empty() {
                match self.apply_plan(&patches) {
                    Ok(inverse) => entries.push(Entry::Asset {
                        forward: Operation::Patch(Box::new(patches)),
                        inverse,
                    }),
                    Err(e) => {
                        return self.error(format!("cannot point the references at {new}: {e:#}"));
                    }
                }
                label = format!("delete {what} (its references now name {new})");
            }
        }
        let folders = plan
            .folders
            .iter()
            .map(|f| FolderWrite {
                folder: f.clone(),
                made: false,
            })
            .collect();
        let files = plan.files.iter().map(|f| (f.clone(), None)).collect();
        let Some(mut deletion) = self.files_entry(files, folders, None, label.clone()) else {
            self.undo_entries(entries);
            return;
        };
        if let Err(e) = deletion.run(self, true) {
            self.undo_entries(entries);
            return self.error(format!("cannot delete {what}: {e:#}"));
        }
        entries.push(deletion);
        self.info(label.clone());
        let entry = match entries.len() {
            1 => entries.remove(0),
            _ => Entry::Group { entries, label },
        };
        self.history.push_done(entry);
        if closes_open_level {
            self.close_level();
        }
    }

    /// Runs back entries done as part of a step that then failed.
    fn undo_entries(&mut self, entries: Vec<Entry>) {
        for mut e in entries.into_iter().rev() {
            if let Err(err) = e.run(self, false) {
                self.error(format!("could not take back {}: {err:#}", e.describe()));
            }
        }
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

    /// Imports `sources` into `folder`: one undo step. Where a file exists already
    /// and `on_conflict` is `None`, nothing is written and the editor asks
    /// ([`Editor::import_question`]).
    pub(super) fn import_files(
        &mut self,
        sources: Vec<PathBuf>,
        folder: &str,
        on_conflict: Option<OnConflict>,
    ) {
        let plan = self.plan_import(&sources, folder, on_conflict);
        for p in &plan.problems {
            self.note(super::Severity::Warning, format!("not imported: {p}"), true);
        }
        if plan.files.is_empty() {
            return;
        }
        if on_conflict.is_none() && !plan.conflicts().is_empty() {
            self.import_question = Some(ImportQuestion {
                sources,
                folder: folder.to_owned(),
                conflicts: plan.conflicts().iter().map(|c| (*c).to_owned()).collect(),
            });
            return;
        }
        let shown = plan.files.first().map(|f| f.target.clone());
        let mut folders = Vec::new();
        for f in &plan.files {
            for missing in self.missing_folders(&f.target) {
                if !folders.contains(&missing) {
                    folders.push(missing);
                }
            }
        }
        let count = plan.files.iter().filter(|f| f.from.is_some()).count();
        let label = match plan.files.as_slice() {
            [one, ..] if count == 1 => format!("import {}", one.target),
            _ => format!(
                "import {count} files into {}",
                if folder.is_empty() {
                    "the project"
                } else {
                    folder
                }
            ),
        };
        let files = plan
            .files
            .into_iter()
            .map(|f| (f.target, Some(f.bytes)))
            .collect();
        if let Some(entry) = self.files_entry(files, folders, None, label)
            && self.do_files_entry(entry, false)
            && let Some(file) = shown
        {
            self.effects.push(Effect::ShowFile(file));
        }
    }

    /// Files an import would write over, waiting for the user to choose.
    pub fn import_question(&self) -> Option<&ImportQuestion> {
        self.import_question.as_ref()
    }

    /// Forgets the import that waited for an answer (Cancel).
    pub(super) fn cancel_import(&mut self) {
        self.import_question = None;
    }

    /// Closes the open level (it was deleted): another one opens, if there is one.
    fn close_level(&mut self) {
        self.level = None;
        self.selection.clear();
        self.preview = super::Preview::default();
        self.tree = super::SceneTree::default();
        self.tree_changed();
        self.compile_error = None;
        self.left_out.clear();
        self.levels = self.project.levels().unwrap_or_default();
        if let Some(next) = self.levels.first().cloned() {
            self.open_level(&next);
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
