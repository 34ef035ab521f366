//! Crash recovery: the open level's unsaved edits are written to
//! `.kiln/recovery/<level>` every few seconds, offered back when the level is opened
//! after a crash, and deleted on save or on a deliberate discard.

use kiln_core::LevelDocument;

use super::{Editor, Severity};
use crate::editor::document::DocEdit;

impl Editor {
    /// Where the unsaved edits of level `file` are kept in case of a crash.
    pub(super) fn recovery_path(&self, file: &str) -> std::path::PathBuf {
        self.project.root().join(".kiln/recovery").join(file)
    }

    pub(super) fn read_recovery(&self, file: &str) -> Option<LevelDocument> {
        // Never through a link in `.kiln/`, never a FIFO or a device.
        let rel = std::path::Path::new(".kiln/recovery").join(file);
        let bytes = kiln_core::read_below(self.project.root(), &rel, 1 << 30).ok()?;
        LevelDocument::parse_with_conflicts(
            std::str::from_utf8(&bytes).ok()?,
            file,
            kiln_core::conflict::Side::Ours,
        )
        .ok()
    }

    /// Forgets the open level's unsaved edits on purpose (Discard): its recovery file
    /// goes, and none is written again for them.
    pub(super) fn discard_unsaved_edits(&mut self) {
        let Some(level) = &self.level else { return };
        let file = level.file.clone();
        self.history.mark_saved();
        self.remove_recovery(&file);
    }

    pub(super) fn remove_recovery(&mut self, file: &str) {
        let rel = std::path::Path::new(".kiln/recovery").join(file);
        let _ = kiln_core::fs::remove_below(self.project.root(), &rel, false);
        self.recovery_written = None;
    }

    /// Writes the open level's unsaved edits to its recovery file, at most every
    /// `interval`, so that a crash loses at most that much work. Called every frame.
    pub fn write_recovery(&mut self, interval: std::time::Duration) {
        let Some(level) = &self.level else { return };
        if !self.history.is_dirty()
            || self
                .recovery_written
                .is_some_and(|t| t.elapsed() < interval)
        {
            return;
        }
        let path = self.recovery_path(&level.file);
        let text = level.doc.to_canonical_json(&self.registry);
        self.recovery_written = Some(std::time::Instant::now());
        let rel = std::path::Path::new(".kiln/recovery").join(&level.file);
        if let Err(e) = kiln_core::write_below(self.project.root(), &rel, text.as_bytes()) {
            self.note(
                Severity::Warning,
                format!("cannot write the recovery file {}: {e}", path.display()),
                false,
            );
        }
    }

    /// Replaces the open level with the recovered edits (one undoable step), or
    /// discards them.
    pub(super) fn resolve_recovery(&mut self, restore: bool) {
        let Some(recovered) = self.recovery.take() else {
            return;
        };
        let Some(level) = &self.level else { return };
        let file = level.file.clone();
        if restore {
            self.edit(
                DocEdit::ReplaceAll {
                    other: Box::new(recovered),
                },
                false,
            );
            self.info(format!("restored the unsaved edits of {file}"));
        } else {
            self.remove_recovery(&file);
        }
    }
}
