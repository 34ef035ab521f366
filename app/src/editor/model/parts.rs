//! The editor's parts borrowed apart from it: what a history step, a change of
//! project files or a reload of plugins reaches. Such a step can touch nearly
//! every part (a move patches files and the open document, re-indexes, redraws
//! and respawns), so it is a method of this view rather than of one part; the
//! history and the opening are not in it (the history runs the step; the
//! opening is the frame's own). A method that needs the history takes it as a
//! parameter, so its signature says so.

use dependency_checker::ops::{MovePlan, Operation};
use kiln_core::LevelDocument;

use super::disk_follow::DiskFollow;
use super::open_level::OpenLevel;
use super::outbox::{Outbox, Severity};
use super::plugins::EditorPlugins;
use super::preview_state::PreviewState;
use super::project_files::ProjectFiles;
use crate::editor::history::{FileWrite, FolderWrite, History, StepContext};

/// Who changed the files [`Parts::follow_files`] catches up with.
#[derive(Debug)]
pub(super) enum ChangedBy<'h> {
    /// Another program (the watcher saw it, or a command it served), first seen at
    /// this instant: the open level is read again from disk if its file changed,
    /// one step of `history` (it is undoable).
    Outside {
        /// When the first event of the batch arrived (for the reload's timing).
        first_event: Option<std::time::Instant>,
        /// The history the reload is a step of.
        history: &'h mut History,
    },
    /// The editor itself (a move, a fix, a file it wrote, an undo of one): the open
    /// document already holds what it wrote.
    Editor {
        /// The same step edited the open document too.
        document_edited: bool,
    },
}

/// Every part of the editor but its history and the level opening on a worker.
pub(super) struct Parts<'a> {
    pub files: &'a mut ProjectFiles,
    pub level: &'a mut Option<OpenLevel>,
    pub preview: &'a mut PreviewState,
    pub disk: &'a mut DiskFollow,
    pub plugins: &'a mut EditorPlugins,
    pub outbox: &'a mut Outbox,
}

impl Parts<'_> {
    /// Starts on the project as it opens: its plugins loaded (or built off the
    /// UI thread, and swapped in when ready), its files watched and indexed.
    /// Returns the level to open first.
    pub(super) fn start(
        &mut self,
        waker: Option<dependency_checker::watch::Waker>,
    ) -> Option<String> {
        self.plugins.trust = super::plugins::PluginTrust::at_open(&self.files.project);
        let (registry, to_build) = self.plugins.load(&self.files.project, self.outbox);
        self.files.registry = std::sync::Arc::new(registry);
        self.disk
            .start_watching(&self.files.project, waker, self.outbox);
        self.refresh_problems();
        self.files.scan_folders();
        self.plugins
            .build(&self.files.project, to_build, self.outbox);
        let config = self.files.project.config();
        (config.boot_levels.first())
            .map(|l| format!("{l}.level"))
            .filter(|l| self.files.levels.contains(l))
            .or_else(|| self.files.levels.first().cloned())
    }

    /// Rebuilds what follows from the open document: the tree, the selection
    /// (entities that are gone leave it), and the preview world.
    pub(super) fn after_edit(&mut self) {
        self.preview.doc_layout = None;
        if let Some(level) = self.level.as_mut() {
            (self.preview).follow_document(level, self.files, self.outbox, None);
        }
    }

    /// Re-indexes the project and reloads meshes and materials.
    pub(super) fn refresh_problems(&mut self) {
        match self.files.reindex() {
            Ok(()) => {
                // The new index keeps the open level's layout too.
                self.disk.keep_level_layout = true;
                self.preview.reload_resources(self.files, self.outbox);
            }
            Err(e) => self
                .outbox
                .error(format!("indexing the project failed: {e}")),
        }
    }
}

/// The parts as the history's steps see them: the open document, the checker's
/// operations and writes of whole files (see `history.rs`).
impl StepContext for Parts<'_> {
    fn document(&mut self) -> Option<&mut LevelDocument> {
        self.level.as_mut().map(|level| &mut level.doc)
    }

    fn document_changed(&mut self) {
        self.after_edit();
    }

    fn run_operation(
        &mut self,
        operation: &Operation,
        planned: Option<&MovePlan>,
    ) -> anyhow::Result<Operation> {
        match planned {
            Some(plan) => self.apply_plan(plan),
            None => self.execute(operation),
        }
    }

    fn put_files(
        &mut self,
        writes: &[FileWrite],
        folders: &[FolderWrite],
        forward: bool,
    ) -> anyhow::Result<()> {
        self.files.step_files(writes, folders, forward, self.outbox)
    }

    fn files_written(&mut self, writes: &[FileWrite], document_edited: bool) {
        let files: Vec<String> = writes.iter().map(|w| w.file.clone()).collect();
        if let Some(checker) = &mut self.files.checker
            && let Err(e) = checker.refresh(&files)
        {
            (self.outbox).note(
                Severity::Warning,
                format!("re-indexing {}: {e}", files.join(", ")),
                false,
            );
        }
        self.follow_files(&files, ChangedBy::Editor { document_edited });
    }

    fn warn(&mut self, message: String) {
        self.outbox.error(message);
    }
}
