//! Changes of project files: asset moves and reference fixes through the dependency
//! checker (journaled, undoable, mirrored into the open document), and saving.

use anyhow::Context as _;
use dependency_checker::rename::{Change, MovePlan, MoveRequest, Operation};
use kiln_core::{LevelDocument, write_atomic};
use serde_json::Value;

use super::Editor;
use crate::editor::history::Entry;

impl Editor {
    /// Applies a planned move as one undoable step.
    pub(super) fn apply_move(&mut self, plan: MovePlan) {
        let forward = Operation::Move(MoveRequest {
            pairs: plan.renames.clone(),
            undoes: None,
        });
        match self.apply_plan(&plan) {
            Ok(inverse) => {
                self.info(format!(
                    "moved {} files, patched {} references",
                    plan.moves.len(),
                    plan.change_count()
                ));
                self.history.push_done(Entry::Asset { forward, inverse });
            }
            Err(e) => self.error(format!("{e:#}")),
        }
    }

    pub(super) fn execute(&mut self, operation: &Operation) -> anyhow::Result<Operation> {
        let checker = self
            .checker
            .as_ref()
            .context("the project is not indexed")?;
        let plan = operation.plan(checker)?;
        self.apply_plan(&plan)
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
    fn apply_plan(&mut self, plan: &MovePlan) -> anyhow::Result<Operation> {
        let checker = self
            .checker
            .as_mut()
            .context("the project is not indexed")?;
        let inverse = dependency_checker::rename::apply(checker, plan)?;
        // Units may have moved or been patched: read them again.
        self.prefabs = super::prefab_parts::PrefabLibrary::default();
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
        self.levels = self.project.levels().unwrap_or_default();
        if let Some(checker) = &self.checker {
            self.findings = checker.findings();
        }
        self.reload_resources();
        self.after_edit();
        Ok(inverse)
    }

    /// Rewrites one reference (found by its place) from `old` to `new`, through the
    /// dependency checker's journaled patching.
    pub(super) fn fix_reference(
        &mut self,
        place: &dependency_checker::findings::Place,
        old: &str,
        new: &str,
    ) {
        let Some(checker) = &self.checker else { return };
        let Some(entry) = checker.index().file(&place.file) else {
            return;
        };
        let Some(raw) = entry
            .scan
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
            old_text: old.to_owned(),
            new_text: new.to_owned(),
        };
        let edit = dependency_checker::rename::FileEdit {
            file: place.file.clone(),
            expected_hash: entry.hash,
            changes: vec![change],
        };
        let done = format!("{}: \"{old}\" -> \"{new}\"", place.file);
        self.apply_fix(MovePlan::patches(vec![edit]), done);
    }

    /// Patches every reference that still uses a path the redirect log moved.
    pub(super) fn fix_stale_paths(&mut self) {
        let Some(checker) = &self.checker else { return };
        let plan = dependency_checker::rename::plan_redirect_fixes(checker);
        let done = format!("fixed {} stale references", plan.change_count());
        self.apply_fix(plan, done);
    }

    /// Writes the level as canonical JSON through a temporary file and a rename.
    pub(super) fn save(&mut self) -> anyhow::Result<()> {
        let Some(level) = &self.level else {
            return Ok(());
        };
        let path = self.project.resolve(&level.file)?;
        let text = level.doc.to_canonical_json(&self.registry);
        write_atomic(&path, text.as_bytes()).with_context(|| format!("saving {}", level.file))?;
        self.history.mark_saved();
        let file = level.file.clone();
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
        && slot.as_str() == Some(change.old_text.as_str())
    {
        *slot = Value::String(change.new_text.clone());
        if let Ok(patched) = serde_json::from_value(value) {
            *entity = patched;
        }
    }
}
