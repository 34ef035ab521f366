//! Every change of project files the editor makes: files created, duplicated,
//! deleted and imported; whole files written (a prefab made from the selection,
//! overrides applied to a unit, a field of a material); assets moved and
//! references fixed through the dependency checker (journaled); and the open
//! level saved. Each is one step of the history (undo puts the files back byte
//! for byte), written below the project root without following links; a delete
//! first shows, and can repoint, every reference to what it deletes. What is
//! asked of files before they are written is in `project_files.rs`.

use std::path::PathBuf;

use anyhow::Context as _;
use dependency_checker::ops::{Change, MovePlan, MoveRequest, Operation};
use kiln_core::LevelDocument;
use serde_json::Value;

use super::import::OnConflict;
use super::outbox::{Effect, Severity};
use super::parts::Parts;
use super::project_files::{ImportQuestion, MAX_REWRITTEN_FILE as MAX_DELETED_FILE};
use crate::editor::actions::{Action, UiCommand};
use crate::editor::document::DocEdit;
use crate::editor::history::{Entry, FileWrite, FolderWrite, History};

/// The most one delete may take away in all: undo keeps it in memory.
const MAX_DELETED_TOTAL: u64 = 1 << 30;

impl Parts<'_> {
    /// Does `action` where it changes project files (as one step of `history`);
    /// other actions are handed back. `Ok(true)` where the open level was
    /// deleted: the editor opens another.
    pub(super) fn apply_file_action(
        &mut self,
        action: Action,
        history: &mut History,
    ) -> Result<bool, Box<Action>> {
        match action {
            Action::MoveAssets(plan) => {
                if let Err(e) = self.apply_move(&plan, history) {
                    self.outbox.error(format!("{e:#}"));
                }
            }
            Action::FixReference { place, old, new } => {
                self.fix_reference(&place, &old, &new, history);
            }
            Action::FixStalePaths => self.fix_stale_paths(history),
            Action::SetAssetField {
                file,
                field,
                value,
                continuing,
            } => self.set_asset_field(&file, &field, value, continuing, history),
            Action::CreateAsset { file } => self.create_asset(&file, history),
            Action::CreateFolder { folder } => self.create_folder(&folder, history),
            Action::DuplicateAsset { file, copy } => self.duplicate_asset(&file, &copy, history),
            Action::DeleteAssets {
                paths,
                replace_with,
            } => return Ok(self.delete_assets(&paths, replace_with.as_deref(), history)),
            Action::ImportFiles {
                sources,
                folder,
                on_conflict,
            } => {
                self.files.import_question = None;
                self.import_files(sources, &folder, on_conflict, history);
            }
            Action::CancelImport => self.files.import_question = None,
            Action::ApplyOverrides { instance } => self.apply_overrides(&instance, history),
            Action::Run(UiCommand::Save) => {
                if let Err(e) = self.save(history) {
                    self.outbox.error(format!("{e:#}"));
                }
            }
            Action::Run(UiCommand::CreatePrefab) => self.create_prefab(None, history),
            Action::CreatePrefab { file } => self.create_prefab(Some(file), history),
            Action::MakeBootLevel(level) => self.make_boot_level(&level, history),
            Action::KeepFileFromCommit { file, commit } => {
                let before = self.files.cross_file_conflicts().len();
                self.keep_file_from_commit(&file, &commit, history);
                self.say_if_across_resolved(before);
            }
            Action::DropOverride(at) => {
                let before = self.files.cross_file_conflicts().len();
                self.drop_override(&at, history);
                self.say_if_across_resolved(before);
            }
            Action::ForgetCrossFileConflict(key) => {
                let before = self.files.cross_file_conflicts().len();
                if let Err(e) = crate::merge_check::forget(self.files.project.root(), &key) {
                    self.outbox.error(format!("{e:#}"));
                }
                self.files.read_across();
                self.say_if_across_resolved(before);
            }
            other => return Err(Box::new(other)),
        }
        Ok(false)
    }

    /// Says how to finish the merge once its last conflict across files is gone.
    fn say_if_across_resolved(&mut self, before: usize) {
        if before > 0 && self.files.cross_file_conflicts().is_empty() {
            self.outbox.info(
                "the last merge's conflicts across files are resolved: git add the files and git commit to finish the merge",
            );
        }
    }

    /// Writes `file` as `commit` has it, through the undoable file step: what
    /// "Keep" does for a file one side of a merge deleted while the other uses it.
    pub(super) fn keep_file_from_commit(
        &mut self,
        file: &str,
        commit: &str,
        history: &mut History,
    ) {
        if !kiln_core::fs::is_plain_relative(file) || commit.starts_with('-') {
            return self.outbox.error(format!("{file}: not a project file"));
        }
        let shown = std::process::Command::new("git")
            .current_dir(self.files.project.root())
            .args(["show", &format!("{commit}:./{file}")])
            .output();
        let bytes = match shown {
            Ok(out) if out.status.success() => out.stdout,
            Ok(out) => {
                return self.outbox.error(format!(
                    "{file} from {commit}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            Err(e) => return self.outbox.error(format!("running git: {e}")),
        };
        let label = format!("keep {file}");
        self.write_files(
            vec![(file.to_owned(), Some(bytes))],
            None,
            label,
            false,
            history,
        );
    }

    /// Removes `at`'s override from its level file, through the undoable file
    /// step. The open level is edited in the editor instead, where an unsaved
    /// change would otherwise be lost.
    pub(super) fn drop_override(
        &mut self,
        at: &crate::merge_check::OverrideAt,
        history: &mut History,
    ) {
        if self.level.as_ref().is_some_and(|l| l.file == at.level) {
            return self.outbox.error(format!(
                "{} is open: select \"{}\" and revert the override of {} in the inspector",
                at.level, at.entity, at.key
            ));
        }
        let bytes = match self.files.read_for_history(&at.level) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return self.outbox.error(format!("{} is missing", at.level)),
            Err(e) => return self.outbox.error(format!("{e:#}")),
        };
        let parsed = serde_json::from_slice::<serde_json::Value>(
            kiln_core::json_format::bytes_without_bom(&bytes),
        );
        let mut doc = match parsed {
            Ok(doc) => doc,
            Err(e) => return self.outbox.error(format!("{}: {e}", at.level)),
        };
        let entity = (doc.get_mut("entities").and_then(|e| e.as_array_mut()))
            .and_then(|list| list.iter_mut().find(|e| e["id"] == at.entity.as_str()));
        let Some(serde_json::Value::Object(entity)) = entity else {
            return self
                .outbox
                .error(format!("{}: no entity \"{}\"", at.level, at.entity));
        };
        let removed = (entity.get_mut("overrides").and_then(|o| o.as_object_mut()))
            .and_then(|o| o.shift_remove(&at.key));
        if removed.is_none() {
            return self.outbox.error(format!(
                "{}: entity \"{}\" has no override of {} (it comes from a prefab in between: edit that prefab)",
                at.level, at.entity, at.key
            ));
        }
        if entity
            .get("overrides")
            .and_then(|o| o.as_object())
            .is_some_and(|o| o.is_empty())
        {
            entity.shift_remove("overrides");
        }
        let bytes = kiln_core::json_format::to_canonical_string(&doc).into_bytes();
        let label = format!("drop the override of {} on {}", at.key, at.entity);
        self.write_files(
            vec![(at.level.clone(), Some(bytes))],
            None,
            label,
            false,
            history,
        );
        // The conflict it came from is resolved: off the record (a compile's
        // conflict is not found again by the index).
        let root = self.files.project.root().to_owned();
        for c in self.files.cross_file_conflicts().to_vec() {
            if c.drop_override.as_ref() == Some(at)
                && let Err(e) = crate::merge_check::forget(&root, &c.key)
            {
                self.outbox.error(format!("{e:#}"));
            }
        }
        self.files.read_across();
    }

    /// Adds `level` (`levels/cave.level`) to the project's boot levels in
    /// `kiln.project`, keeping everything else in the file: one undo step. What it
    /// reaches is in use from then on (no longer "unused").
    pub(super) fn make_boot_level(&mut self, level: &str, history: &mut History) {
        use kiln_core::project::PROJECT_FILE;
        let Some(entry) = level.strip_suffix(".level") else {
            return self.outbox.error(format!("{level} is not a level"));
        };
        let text = match self.files.read_for_history(PROJECT_FILE) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return self.outbox.error(format!("{PROJECT_FILE} is missing")),
            Err(e) => return self.outbox.error(format!("{e:#}")),
        };
        let parsed = serde_json::from_slice::<serde_json::Value>(
            kiln_core::json_format::bytes_without_bom(&text),
        );
        let mut config = match parsed {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(_) => {
                return self
                    .outbox
                    .error(format!("{PROJECT_FILE} is not a JSON object"));
            }
            Err(e) => return self.outbox.error(format!("{PROJECT_FILE}: {e}")),
        };
        let boot = config
            .entry("boot_levels")
            .or_insert_with(|| serde_json::Value::Array(Vec::new()));
        let Some(list) = boot.as_array_mut() else {
            return (self.outbox).error(format!("{PROJECT_FILE}: boot_levels is not a list"));
        };
        if list.iter().any(|l| l.as_str() == Some(entry)) {
            return self.outbox.info(format!("{level} is a boot level already"));
        }
        list.push(serde_json::Value::String(entry.to_owned()));
        let value = serde_json::Value::Object(config);
        let bytes = kiln_core::json_format::to_canonical_string(&value).into_bytes();
        let files = vec![(PROJECT_FILE.to_owned(), Some(bytes))];
        let label = format!("make {level} a boot level");
        self.write_files(files, None, label, false, history);
    }

    /// Writes the selected entities to a new unit (`units/<first id>.unit`, the
    /// first free name) and replaces them with an instance of it: one undo step.
    pub(super) fn create_prefab(&mut self, file: Option<String>, history: &mut History) {
        let Some(level) = self.level.as_ref() else {
            return;
        };
        let Some(first) = level.selection.first() else {
            return self.outbox.error("select the entities to make a prefab of");
        };
        // A name the designer chose (the window asks), checked as every new file.
        if let Some(file) = file {
            let Some(prefab) = file.strip_suffix(".unit") else {
                return self
                    .outbox
                    .error(format!("{file}: a prefab's file ends in .unit"));
            };
            if let Err(problem) = self.files.check_new_path(&file) {
                return self.outbox.error(format!("{file}: {problem}"));
            }
            return self.write_prefab(prefab.to_owned(), history);
        }
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
            kiln_core::fs::kind_below(self.files.project.root(), &format!("{p}.unit")).is_some()
        };
        let Some(prefab) = std::iter::once(format!("units/{stem}"))
            .chain((2..1000).map(|n| format!("units/{stem}_{n}")))
            .find(|p| !exists(p))
        else {
            return self
                .outbox
                .error(format!("no free name for units/{stem}.unit"));
        };
        self.write_prefab(prefab, history);
    }

    /// Writes the selection to the prefab `prefab` (without `.unit`) and puts an
    /// instance of it in its place: one undo step.
    fn write_prefab(&mut self, prefab: String, history: &mut History) {
        let Some(level) = self.level.as_ref() else {
            return;
        };
        let made = match super::prefab_parts::create_prefab(
            (&level.doc, &self.files.registry),
            &level.tree,
            &level.selection,
            &prefab,
        ) {
            Ok(m) => m,
            Err(e) => return self.outbox.error(e),
        };
        let bytes = made
            .unit
            .to_canonical_json(&self.files.registry)
            .into_bytes();
        let file = format!("{prefab}.unit");
        self.write_files(
            vec![(file.clone(), Some(bytes))],
            Some(made.edit),
            format!("create prefab {file}"),
            false,
            history,
        );
        if let Some(level) = self.level.as_mut()
            && level.entity(&made.instance).is_some()
        {
            level.selection = vec![made.instance];
        }
    }

    /// Writes an instance's overrides into its unit and removes them from the
    /// instance: one undo step.
    pub(super) fn apply_overrides(&mut self, instance: &str, history: &mut History) {
        let Some(entity) = self
            .level
            .as_ref()
            .and_then(|l| l.entity(instance))
            .cloned()
        else {
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
        let unit = match self.files.read_for_history(&file) {
            Ok(Some(bytes)) => String::from_utf8(bytes)
                .map_err(|_| format!("{file} is not UTF-8"))
                .and_then(|t| LevelDocument::parse(&t, &file).map_err(|e| e.to_string())),
            Ok(None) => Err(format!("{file} does not exist")),
            Err(e) => Err(format!("{e:#}")),
        };
        let unit = match unit {
            Ok(u) => u,
            Err(e) => {
                return self
                    .outbox
                    .error(format!("cannot apply the overrides: {e}"));
            }
        };
        let (unit, cleaned) = super::prefab_parts::apply_overrides(&entity, &unit);
        let bytes = unit.to_canonical_json(&self.files.registry).into_bytes();
        self.write_files(
            vec![(file.clone(), Some(bytes))],
            Some(DocEdit::ReplaceEntity {
                old: Box::new(entity),
                new: Box::new(cleaned),
            }),
            format!("apply overrides to {file}"),
            false,
            history,
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
        history: &mut History,
    ) {
        let mut fields = match self.files.asset_fields(file) {
            Ok(f) => f,
            Err(e) => return self.outbox.error(format!("cannot edit {e}")),
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
            history,
        );
    }

    /// Writes whole files (and edits the document alongside) as one undoable step.
    pub(super) fn write_files(
        &mut self,
        files: Vec<(String, Option<Vec<u8>>)>,
        edit: Option<DocEdit>,
        label: String,
        continuing: bool,
        history: &mut History,
    ) {
        if let Some(entry) = self.files_entry(files, Vec::new(), edit, label) {
            let _ = self.run_entry(entry, continuing, history);
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
            match self.files.read_for_history(&file) {
                Ok(before) => writes.push(FileWrite {
                    file,
                    before,
                    after,
                }),
                Err(e) => {
                    self.outbox.error(format!("{e:#}"));
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

    /// Does `entry` through the history, as one undo step; says what it did, or
    /// why it failed (then nothing of it is left done).
    fn run_entry(&mut self, entry: Entry, continuing: bool, history: &mut History) -> bool {
        let label = entry.describe();
        match history.run(entry, self, continuing) {
            Ok(()) => {
                self.outbox.info(label);
                true
            }
            Err(e) => {
                self.outbox.error(format!("{e:#}"));
                false
            }
        }
    }
    /// Applies a planned move as one undoable step: the rename dialog's, a drag
    /// in the asset browser, and a `kiln mv` typed in a terminal while the editor
    /// is open (`served.rs`).
    pub(super) fn apply_move(
        &mut self,
        plan: &MovePlan,
        history: &mut History,
    ) -> anyhow::Result<()> {
        let entry = Entry::Asset {
            forward: Operation::Move(MoveRequest {
                pairs: plan.renames.clone(),
                undoes: None,
            }),
            inverse: None,
            planned: Some(Box::new(plan.clone())),
        };
        history.run(entry, self, false)?;
        self.outbox.info(format!(
            "moved {} files, patched {} references",
            plan.moves.len(),
            plan.change_count()
        ));
        Ok(())
    }

    /// Plans `operation` and applies it (an undone or redone step), planned
    /// again, as `kiln mv` is, where another Kiln command changed the project
    /// between the plan and the apply (`apply_plan` reads it again then).
    pub(super) fn execute(&mut self, operation: &Operation) -> anyhow::Result<Operation> {
        let plan_on = |parts: &mut Self| -> anyhow::Result<MovePlan> {
            let checker = (parts.files.checker.as_ref()).context("the project is not indexed")?;
            Ok(operation.plan(checker)?)
        };
        let mut plan = plan_on(self)?;
        dependency_checker::ops::apply_planning_again(
            self,
            &mut plan,
            |parts, plan| parts.apply_plan(plan),
            |parts, _| plan_on(parts),
            |e: &anyhow::Error| e.downcast_ref::<dependency_checker::CheckerError>(),
        )
    }

    /// Applies a plan of patches (a fix) as one undoable step.
    fn apply_fix(&mut self, plan: MovePlan, done: String, history: &mut History) {
        let entry = Entry::Asset {
            forward: Operation::Patch(Box::new(plan.clone())),
            inverse: None,
            planned: Some(Box::new(plan)),
        };
        match history.run(entry, self, false) {
            Ok(()) => self.outbox.info(done),
            Err(e) => self.outbox.error(format!("{e:#}")),
        }
    }

    /// Applies `plan` on disk, mirrors its patches into the open document (so that
    /// unsaved edits and the file agree), follows the open level if it moved, and
    /// refreshes everything that depends on files.
    pub(super) fn apply_plan(&mut self, plan: &MovePlan) -> anyhow::Result<Operation> {
        let checker = self
            .files
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
            self.outbox.push(Effect::FilesMoved(plan.moves.clone()));
        }
        if let Some(level) = self.level.as_mut() {
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
            super::parts::ChangedBy::Editor {
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
        history: &mut History,
    ) {
        let Some(checker) = &self.files.checker else {
            return;
        };
        let Some(entry) = checker.index().file(&place.file) else {
            return;
        };
        let Some(raw) = entry
            .scan()
            .iter()
            .find(|r| r.pointer == place.pointer && r.line == place.line && r.text == old)
        else {
            return self.outbox.error(format!(
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
        self.apply_fix(MovePlan::patches(vec![edit]), done, history);
    }

    /// Patches every reference that still uses a path the redirect log moved.
    pub(super) fn fix_stale_paths(&mut self, history: &mut History) {
        let Some(checker) = &self.files.checker else {
            return;
        };
        let plan = dependency_checker::ops::plan_redirect_fixes(checker);
        let done = format!("fixed {} stale references", plan.change_count());
        self.apply_fix(plan, done, history);
    }

    /// Writes the level as canonical JSON through a temporary file and a rename.
    pub(super) fn save(&mut self, history: &mut History) -> anyhow::Result<()> {
        let Some(level) = self.level.as_ref() else {
            return Ok(());
        };
        let text = level.doc.to_canonical_json(&self.files.registry);
        // Under the project's lock, so that a `kiln mv` or `check --fix` running now
        // either sees the save or is planned again after it.
        let generations = dependency_checker::save_file(
            self.files.project.root(),
            &level.file,
            text.as_bytes(),
            &|| {},
        )
        .with_context(|| format!("saving {}", level.file))?;
        if let Some(checker) = &mut self.files.checker {
            checker.wrote(generations);
        }
        history.mark_saved();
        let file = level.file.clone();
        // A saved unit is what instances of it show from now on (their part
        // inspectors read the unit as loaded).
        if let Some(level) = self.level.as_mut() {
            level.prefabs.forget(std::slice::from_ref(&file));
            level.tree_changed();
            level.remove_recovery(&self.files.project);
        }
        self.outbox.info(format!("saved {file}"));
        if let Some(checker) = &mut self.files.checker {
            let _ = checker.refresh(&[file]);
            self.files.take_findings();
        }
        Ok(())
    }

    /// Makes a new file at `file` of its extension's type (see
    /// [`ProjectFiles::new_file_bytes`]), and shows it: one undo step.
    pub(super) fn create_asset(&mut self, file: &str, history: &mut History) {
        if let Err(e) = self.files.check_new_path(file) {
            return self.outbox.error(format!("cannot make {file}: {e}"));
        }
        let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
        let Some(bytes) = self.files.new_file_bytes(ext) else {
            return self.outbox.error(format!(
                "cannot make {file}: Kiln makes levels, prefabs and files with a schema, not .{ext} files (import one instead)"
            ));
        };
        let folders = self.files.missing_folders(file);
        if let Some(entry) = self.files_entry(
            vec![(file.to_owned(), Some(bytes))],
            folders,
            None,
            format!("new {file}"),
        ) && self.run_entry(entry, false, history)
        {
            self.outbox.push(Effect::ShowFile(file.to_owned()));
            // A new level or prefab is opened to be filled.
            if matches!(ext, "level" | "unit") {
                self.outbox.push(Effect::OpenLevel(file.to_owned()));
            }
        }
    }

    /// Makes the folder `folder` (and those above it): one undo step.
    pub(super) fn create_folder(&mut self, folder: &str, history: &mut History) {
        if let Err(e) = self.files.check_new_path(folder) {
            return self
                .outbox
                .error(format!("cannot make the folder {folder}: {e}"));
        }
        let mut folders = self.files.missing_folders(folder);
        folders.push(FolderWrite {
            folder: folder.to_owned(),
            made: true,
        });
        if let Some(entry) =
            self.files_entry(Vec::new(), folders, None, format!("new folder {folder}"))
            && self.run_entry(entry, false, history)
        {
            self.outbox.push(Effect::ShowFile(format!("{folder}/")));
        }
    }

    /// Copies the file `file` to `copy` (a new canonical name): one undo step.
    pub(super) fn duplicate_asset(&mut self, file: &str, copy: &str, history: &mut History) {
        if let Err(e) = self.files.check_new_path(copy) {
            return self
                .outbox
                .error(format!("cannot copy {file} to {copy}: {e}"));
        }
        let bytes = match self.files.read_for_history(file) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return self
                    .outbox
                    .error(format!("cannot copy {file}: it does not exist"));
            }
            Err(e) => return self.outbox.error(format!("cannot copy {e:#}")),
        };
        let folders = self.files.missing_folders(copy);
        if let Some(entry) = self.files_entry(
            vec![(copy.to_owned(), Some(bytes))],
            folders,
            None,
            format!("duplicate {file} as {copy}"),
        ) && self.run_entry(entry, false, history)
        {
            self.outbox.push(Effect::ShowFile(copy.to_owned()));
        }
    }

    /// Deletes `paths` (files or folders): one undo step that puts them back byte
    /// for byte. With `replace_with` (one file deleted), every reference to it from
    /// the files that stay is first pointed at that file instead, patched as a move
    /// patches them; otherwise they become missing references in Problems.
    pub(super) fn delete_assets(
        &mut self,
        paths: &[String],
        replace_with: Option<&str>,
        history: &mut History,
    ) -> bool {
        let plan = match self.files.plan_delete(paths) {
            Ok(p) => p,
            Err(e) => {
                self.outbox.error(format!("cannot delete: {e}"));
                return false;
            }
        };
        let open = self.level.as_ref().map(|l| l.file.clone());
        let closes_open_level = open
            .as_deref()
            .is_some_and(|f| plan.files.iter().any(|d| d == f));
        if closes_open_level && history.is_dirty() {
            self.outbox
                .error("the open level has unsaved edits: save or discard them before deleting it");
            return false;
        }
        let what = match paths {
            [one] => one.clone(),
            many => format!("{} files", many.len()),
        };
        // Undo keeps what a delete took: a file, or a whole delete, too big for that
        // is refused rather than kept in memory.
        let mut total = 0u64;
        for f in &plan.files {
            let len = kiln_core::fs::kind_below(self.files.project.root(), f)
                .map_or(0, |(_, st)| st.size);
            total += len;
            if len > MAX_DELETED_FILE || total > MAX_DELETED_TOTAL {
                self.outbox.error(format!(
                    "cannot delete {what} in Kiln: {} is more than undo keeps ({} MB); delete it outside Kiln",
                    if len > MAX_DELETED_FILE { f.as_str() } else { "all of it together" },
                    if len > MAX_DELETED_FILE { MAX_DELETED_FILE } else { MAX_DELETED_TOTAL } >> 20
                ));
                return false;
            }
        }
        let mut entries = Vec::new();
        let mut label = format!("delete {what}");
        if let (Some(new), [old]) = (replace_with, paths) {
            let Some(checker) = &self.files.checker else {
                self.outbox.error("the project is not indexed");
                return false;
            };
            let patches = dependency_checker::ops::plan_retarget(checker, old, new, paths);
            if !patches.is_empty() {
                entries.push(Entry::Asset {
                    forward: Operation::Patch(Box::new(patches.clone())),
                    inverse: None,
                    planned: Some(Box::new(patches)),
                });
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
        // The files' bytes are read now: the patches above change only files
        // that stay.
        let Some(deletion) = self.files_entry(files, folders, None, label.clone()) else {
            return false;
        };
        entries.push(deletion);
        let entry = match entries.len() {
            1 => entries.remove(0),
            _ => Entry::Group {
                entries,
                label: label.clone(),
            },
        };
        // Run whole or not at all: a repointing done before a delete that fails
        // is taken back by the group itself.
        if let Err(e) = history.run(entry, self, false) {
            self.outbox.error(format!("cannot delete {what}: {e:#}"));
            return false;
        }
        self.outbox.info(label);
        self.outbox.push(Effect::FilesDeleted(paths.to_vec()));
        closes_open_level
    }

    /// Imports `sources` into `folder`: one undo step. Where a file exists already
    /// and `on_conflict` is `None`, nothing is written and the editor asks
    /// ([`Editor::import_question`]).
    pub(super) fn import_files(
        &mut self,
        sources: Vec<PathBuf>,
        folder: &str,
        on_conflict: Option<OnConflict>,
        history: &mut History,
    ) {
        let plan = self.files.plan_import(&sources, folder, on_conflict);
        for p in &plan.problems {
            self.outbox
                .note(Severity::Warning, format!("not imported: {p}"), true);
        }
        if plan.files.is_empty() {
            return;
        }
        if on_conflict.is_none() && !plan.conflicts().is_empty() {
            self.files.import_question = Some(ImportQuestion {
                sources,
                folder: folder.to_owned(),
                conflicts: plan.conflicts().iter().map(|c| (*c).to_owned()).collect(),
            });
            return;
        }
        let shown = plan.files.first().map(|f| f.target.clone());
        let mut folders = Vec::new();
        for f in &plan.files {
            for missing in self.files.missing_folders(&f.target) {
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
            && self.run_entry(entry, false, history)
            && let Some(file) = shown
        {
            self.outbox.push(Effect::ShowFile(file));
        }
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
