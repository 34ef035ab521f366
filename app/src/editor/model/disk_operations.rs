//! Changes of project files: asset moves and reference fixes through the dependency
//! checker (journaled, undoable, mirrored into the open document), and saving.

use anyhow::Context as _;
use dependency_checker::ops::{Change, MovePlan, MoveRequest, Operation};
use kiln_core::LevelDocument;
use serde_json::Value;

use super::Editor;
use crate::editor::document::DocEdit;
use crate::editor::history::{Entry, FileWrite, FolderWrite};

/// The most a file the editor rewrites whole (a unit, a material) or deletes may
/// hold: its bytes before are kept for undo.
pub(super) const MAX_REWRITTEN_FILE: u64 = 256 << 20;

impl Editor {
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
    ) -> anyhow::Result<()> {
        // Under the project's lock, as a save (see `save`).
        let write = dependency_checker::ProjectWrite::begin(self.project.root(), &|| {})?;
        self.step_files_locked(writes, folders, forward)?;
        let generations = write.end()?;
        if let Some(checker) = &mut self.checker {
            checker.wrote(generations);
        }
        Ok(())
    }

    /// [`Editor::step_files`], the project's lock held.
    fn step_files_locked(
        &mut self,
        writes: &[FileWrite],
        folders: &[FolderWrite],
        forward: bool,
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
                Err(e) => self.note(
                    super::Severity::Warning,
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

    /// What follows a write of whole files: the index, problems, units and
    /// resources read them again, and the preview is rebuilt.
    pub(super) fn after_files_written(&mut self, writes: &[FileWrite], document_edited: bool) {
        let files: Vec<String> = writes.iter().map(|w| w.file.clone()).collect();
        if let Some(checker) = &mut self.checker
            && let Err(e) = checker.refresh(&files)
        {
            self.log.push(super::LogLine {
                severity: super::Severity::Warning,
                text: format!("re-indexing {}: {e}", files.join(", ")),
            });
        }
        self.follow_files(
            &files,
            super::live_reload::ChangedBy::Editor { document_edited },
        );
    }

    /// Writes the selected entities to a new unit (`units/<first id>.unit`, the
    /// first free name) and replaces them with an instance of it: one undo step.
    pub(super) fn create_prefab(&mut self) {
        let Some(level) = &self.level else { return };
        let Some(first) = self.selection.first() else {
            return self.error("select the entities to make a prefab of");
        };
        let stem: String = first
            .to_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let exists = |p: &str| {
            kiln_core::fs::kind_below(self.project.root(), &format!("{p}.unit")).is_some()
        };
        let Some(prefab) = std::iter::once(format!("units/{stem}"))
            .chain((2..1000).map(|n| format!("units/{stem}_{n}")))
            .find(|p| !exists(p))
        else {
            return self.error(format!("no free name for units/{stem}.unit"));
        };
        let made = match super::prefab_parts::create_prefab(
            &level.doc,
            &self.tree,
            &self.selection,
            &prefab,
        ) {
            Ok(m) => m,
            Err(e) => return self.error(e),
        };
        let bytes = made.unit.to_canonical_json(&self.registry).into_bytes();
        let file = format!("{prefab}.unit");
        self.write_files(
            vec![(file.clone(), Some(bytes))],
            Some(made.edit),
            format!("create prefab {file}"),
            false,
        );
        if self.entity(&made.instance).is_some() {
            self.selection = vec![made.instance];
        }
    }

    /// Writes an instance's overrides into its unit and removes them from the
    /// instance: one undo step.
    pub(super) fn apply_overrides(&mut self, instance: &str) {
        let Some(entity) = self.entity(instance).cloned() else {
            return;
        };
        let Some(file) = entity
            .prefab
            .as_deref()
            .and_then(super::prefab_parts::unit_file)
        else {
            return;
        };
        if entity.overrides.is_empty() {
            return;
        }
        // The unit as it is on disk now, not as last loaded.
        let unit = match self.read_for_history(&file) {
            Ok(Some(bytes)) => String::from_utf8(bytes)
                .map_err(|_| format!("{file} is not UTF-8"))
                .and_then(|t| LevelDocument::parse(&t, &file).map_err(|e| e.to_string())),
            Ok(None) => Err(format!("{file} does not exist")),
            Err(e) => Err(format!("{e:#}")),
        };
        let unit = match unit {
            Ok(u) => u,
            Err(e) => return self.error(format!("cannot apply the overrides: {e}")),
        };
        let (unit, cleaned) = super::prefab_parts::apply_overrides(&entity, &unit);
        let bytes = unit.to_canonical_json(&self.registry).into_bytes();
        self.write_files(
            vec![(file.clone(), Some(bytes))],
            Some(DocEdit::ReplaceEntity {
                old: Box::new(entity),
                new: Box::new(cleaned),
            }),
            format!("apply overrides to {file}"),
            false,
        );
    }

    /// Sets one field of a resource file and writes it (canonical JSON, atomically):
    /// one undo step per gesture; the preview picks the change up at once.
    pub(super) fn set_asset_field(
        &mut self,
        file: &str,
        field: &str,
        value: Value,
        continuing: bool,
    ) {
        let mut fields = match self.asset_fields(file) {
            Ok(f) => f,
            Err(e) => return self.error(format!("cannot edit {e}")),
        };
        if fields.get(field) == Some(&value) {
            return;
        }
        fields.insert(field.to_owned(), value);
        let mut text = kiln_core::json_format::to_canonical_string(&Value::Object(fields));
        if !text.ends_with('\n') {
            text.push('\n');
        }
        self.write_files(
            vec![(file.to_owned(), Some(text.into_bytes()))],
            None,
            format!("set {file} {field}"),
            continuing,
        );
    }

    /// Writes whole files (and edits the document alongside) as one undoable step.
    pub(super) fn write_files(
        &mut self,
        files: Vec<(String, Option<Vec<u8>>)>,
        edit: Option<DocEdit>,
        label: String,
        continuing: bool,
    ) {
        if let Some(entry) = self.files_entry(files, Vec::new(), edit, label) {
            let _ = self.do_files_entry(entry, continuing);
        }
    }

    /// The history entry that writes `files` (bytes after; `None` removes) and makes
    /// or removes `folders`, with the files' bytes before read now.
    pub(super) fn files_entry(
        &mut self,
        files: Vec<(String, Option<Vec<u8>>)>,
        folders: Vec<FolderWrite>,
        edit: Option<DocEdit>,
        label: String,
    ) -> Option<Entry> {
        let mut writes = Vec::new();
        for (file, after) in files {
            match self.read_for_history(&file) {
                Ok(before) => writes.push(FileWrite {
                    file,
                    before,
                    after,
                }),
                Err(e) => {
                    self.error(format!("{e:#}"));
                    return None;
                }
            }
        }
        Some(Entry::Files {
            writes,
            folders,
            edit,
            label,
        })
    }

    /// Does a files entry and records it as one undo step; says why if it fails.
    pub(super) fn do_files_entry(&mut self, mut entry: Entry, continuing: bool) -> bool {
        match entry.run(self, true) {
            Ok(()) => {
                self.info(entry.describe());
                self.history.push_files(entry, continuing);
                true
            }
            Err(e) => {
                self.error(format!("{e:#}"));
                false
            }
        }
    }
    /// Applies a planned move as one undoable step: the rename dialog's, a drag
    /// in the asset browser, and a `kiln mv` typed in a terminal while the editor
    /// is open (`served.rs`).
    pub(super) fn apply_move(&mut self, plan: &MovePlan) -> anyhow::Result<()> {
        let forward = Operation::Move(MoveRequest {
            pairs: plan.renames.clone(),
            undoes: None,
        });
        let inverse = self.apply_plan(plan)?;
        self.info(format!(
            "moved {} files, patched {} references",
            plan.moves.len(),
            plan.change_count()
        ));
        self.history.push_done(Entry::Asset { forward, inverse });
        Ok(())
    }

    pub(super) fn execute(&mut self, operation: &Operation) -> anyhow::Result<Operation> {
        // Planned again, as `kiln mv` does, when another Kiln command changed the
        // project between the plan and the apply.
        let mut attempts = 0;
        loop {
            let checker = self
                .checker
                .as_ref()
                .context("the project is not indexed")?;
            let plan = operation.plan(checker)?;
            match self.apply_plan(&plan) {
                Err(e) if plans_again(&e) && attempts < 3 => attempts += 1,
                done => return done,
            }
        }
    }

    /// Applies a plan of patches (a fix) as one undoable step.
    fn apply_fix(&mut self, plan: MovePlan, done: String) {
        match self.apply_plan(&plan) {
            Ok(inverse) => {
                self.info(done);
                self.history.push_done(Entry::Asset {
                    forward: Operation::Patch(Box::new(plan)),
                    inverse,
                });
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    /// Applies `plan` on disk, mirrors its patches into the open document (so that
    /// unsaved edits and the file agree), follows the open level if it moved, and
    /// refreshes everything that depends on files.
    pub(super) fn apply_plan(&mut self, plan: &MovePlan) -> anyhow::Result<Operation> {
        let checker = self
            .checker
            .as_mut()
            .context("the project is not indexed")?;
        let inverse = match dependency_checker::ops::apply(checker, plan) {
            Ok(inverse) => inverse,
            Err(e) if e.asks_to_plan_again() => {
                // The index is behind another command's change: read the project
                // again so that the next plan (a retry, a new preview) stands.
                checker.rescan()?;
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        if !plan.moves.is_empty() {
            self.effects
                .push(super::Effect::FilesMoved(plan.moves.clone()));
        }
        if let Some(level) = &mut self.level {
            for edit in plan.edits.iter().filter(|e| e.file == level.file) {
                for c in &edit.changes {
                    patch_reference(&mut level.doc, c);
                }
            }
            if let Some((_, new)) = plan.moves.iter().find(|(old, _)| *old == level.file) {
                level.file = new.clone();
            }
        }
        let changed: Vec<String> = (plan.edits.iter().map(|e| e.file.clone()))
            .chain(
                plan.moves
                    .iter()
                    .flat_map(|(old, new)| [old.clone(), new.clone()]),
            )
            .collect();
        self.follow_files(
            &changed,
            super::live_reload::ChangedBy::Editor {
                document_edited: false,
            },
        );
        Ok(inverse)
    }

    /// Rewrites one reference (found by its place) from `old` to `new`, through the
    /// dependency checker's journaled patching.
    pub(super) fn fix_reference(
        &mut self,
        place: &dependency_checker::check::Place,
        old: &str,
        new: &str,
    ) {
        let Some(checker) = &self.checker else { return };
        let Some(entry) = checker.index().file(&place.file) else {
            return;
        };
        let Some(raw) = entry
            .scan()
            .iter()
            .find(|r| r.pointer == place.pointer && r.line == place.line && r.text == old)
        else {
            return self.error(format!(
                "{}: the reference changed; refresh the problems",
                place.file
            ));
        };
        let change = Change {
            place: place.clone(),
            span: raw.span,
            old_text: old.into(),
            new_text: new.into(),
        };
        let edit = dependency_checker::ops::FileEdit {
            file: place.file.to_string(),
            expected_hash: entry.hash,
            changes: vec![change],
        };
        let done = format!("{}: \"{old}\" -> \"{new}\"", place.file);
        self.apply_fix(MovePlan::patches(vec![edit]), done);
    }

    /// Patches every reference that still uses a path the redirect log moved.
    pub(super) fn fix_stale_paths(&mut self) {
        let Some(checker) = &self.checker else { return };
        let plan = dependency_checker::ops::plan_redirect_fixes(checker);
        let done = format!("fixed {} stale references", plan.change_count());
        self.apply_fix(plan, done);
    }

    /// Writes the level as canonical JSON through a temporary file and a rename.
    pub(super) fn save(&mut self) -> anyhow::Result<()> {
        let Some(level) = &self.level else {
            return Ok(());
        };
        let text = level.doc.to_canonical_json(&self.registry);
        // Under the project's lock, so that a `kiln mv` or `check --fix` running now
        // either sees the save or is planned again after it.
        let generations = dependency_checker::save_file(
            self.project.root(),
            &level.file,
            text.as_bytes(),
            &|| {},
        )
        .with_context(|| format!("saving {}", level.file))?;
        if let Some(checker) = &mut self.checker {
            checker.wrote(generations);
        }
        self.history.mark_saved();
        let file = level.file.clone();
        // A saved unit is what instances of it show from now on (their part
        // inspectors read the unit as loaded).
        self.prefabs.forget(std::slice::from_ref(&file));
        self.tree_changed();
        self.remove_recovery(&file);
        self.info(format!("saved {file}"));
        if let Some(checker) = &mut self.checker {
            let _ = checker.refresh(&[file]);
            self.findings = checker.findings();
        }
        Ok(())
    }
}

/// Applies one planned reference change to the in-memory document: the value at the
/// change's pointer, found within its entity by authoring id (positions may differ
/// from the file when there are unsaved edits), if it still has the old text.
fn patch_reference(doc: &mut LevelDocument, change: &Change) {
    let Some(entity_id) = &change.place.entity else {
        return;
    };
    let Some(entity) = doc.entity_mut(entity_id) else {
        return;
    };
    // "/entities/N/components/mesh/material" -> "/components/mesh/material"
    let mut parts = change.place.pointer.splitn(4, '/');
    let (_, _, _) = (parts.next(), parts.next(), parts.next());
    let Some(rest) = parts.next() else { return };
    let Ok(mut value) = serde_json::to_value(&*entity) else {
        return;
    };
    if let Some(slot) = value.pointer_mut(&format!("/{rest}"))
        && slot.as_str() == Some(&*change.old_text)
    {
        *slot = Value::String(change.new_text.to_string());
        if let Ok(patched) = serde_json::from_value(value) {
            *entity = patched;
        }
    }
}

/// Whether `e` refused an operation because what it was planned on changed
/// (see [`dependency_checker::CheckerError::asks_to_plan_again`]).
fn plans_again(e: &anyhow::Error) -> bool {
    e.downcast_ref::<dependency_checker::CheckerError>()
        .is_some_and(dependency_checker::CheckerError::asks_to_plan_again)
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
        let mut editor = Editor::open(dir.path()).unwrap();
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
        let e = editor.step_files(&writes, &folders, true).unwrap_err();
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
        editor.step_files(&writes, &folders, true).unwrap();
        FAILS.with(|f| *f.borrow_mut() = Some("old.txt".into()));
        assert!(editor.step_files(&writes, &folders, false).is_err());
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
        editor.step_files(&writes, &folders, false).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("old.txt")).unwrap(),
            "before"
        );
        assert!(!dir.path().join("new").exists());
    }
}
