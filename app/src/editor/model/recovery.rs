//! Crash recovery: the open level's unsaved edits are written to
//! `.kiln/recovery/<level>` every few seconds, offered back when the level is opened
//! after a crash, and deleted on save or on a deliberate discard.

use kiln_core::{LevelDocument, Project, Registry};

use super::open_level::OpenLevel;
use super::outbox::{Outbox, Severity};
use crate::editor::document::DocEdit;

/// Where the unsaved edits of level `file` are kept, below the project root.
fn recovery_file(file: &str) -> std::path::PathBuf {
    std::path::Path::new(kiln_core::own_folder::RECOVERY).join(file)
}

/// The unsaved edits of level `file` kept from a session that ended without
/// saving, if any.
pub(super) fn read(project: &Project, file: &str) -> Option<LevelDocument> {
    // Never through a link in `.kiln/`, never a FIFO or a device.
    let bytes = kiln_core::read_below(project.root(), &recovery_file(file), 1 << 30).ok()?;
    LevelDocument::parse_with_conflicts(
        std::str::from_utf8(&bytes).ok()?,
        file,
        kiln_core::conflict::Side::Ours,
    )
    .ok()
}

impl OpenLevel {
    /// Removes the level's recovery file (saved, or its edits discarded on purpose).
    pub(super) fn remove_recovery(&mut self, project: &Project) {
        let _ = kiln_core::fs::remove_below(project.root(), &recovery_file(&self.file), false);
        self.recovery_written = None;
    }

    /// Writes the level's unsaved edits (`dirty`) to its recovery file, at most
    /// every `interval`, so that a crash loses at most that much work. Called
    /// every frame.
    pub(super) fn write_recovery(
        &mut self,
        project: &Project,
        registry: &Registry,
        dirty: bool,
        interval: std::time::Duration,
        outbox: &mut Outbox,
    ) {
        if !dirty
            || self
                .recovery_written
                .is_some_and(|t| t.elapsed() < interval)
        {
            return;
        }
        let text = self.doc.to_canonical_json(registry);
        self.recovery_written = Some(std::time::Instant::now());
        let rel = recovery_file(&self.file);
        if let Err(e) = kiln_core::write_below(project.root(), &rel, text.as_bytes()) {
            outbox.note(
                Severity::Warning,
                format!(
                    "cannot write the recovery file {}: {e}",
                    project.root().join(&rel).display()
                ),
                false,
            );
        }
    }

    /// The user's answer about recovered edits: restored, the edit that brings
    /// them back (one undoable step); discarded, their file goes.
    pub(super) fn resolve_recovery(&mut self, restore: bool, project: &Project) -> Option<DocEdit> {
        let recovered = self.recovery.take()?;
        if restore {
            Some(DocEdit::ReplaceAll {
                other: Box::new(recovered),
            })
        } else {
            self.remove_recovery(project);
            None
        }
    }
}
