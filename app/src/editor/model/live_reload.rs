//! Live reload: changes made outside the editor (another program, a text editor, a
//! version-control checkout) reach the index, the problems list and, when the graph
//! says the open level is affected, the preview, without losing unsaved edits.

use kiln_core::LevelDocument;
use kiln_core::incremental::{IncrementalLevel, Update};
use kiln_core::registry::ResourceFormat;

use super::disk_follow::{ReloadPath, ReloadTiming};
use super::outbox::{LogLine, Severity};
use super::parts::{ChangedBy, Parts};
use crate::editor::document::DocEdit;
use crate::editor::history::History;

/// Whether `file` is read from disk only when drawn, never compiled into a level:
/// a file of a binary type (a texture, a glTF buffer) or a glTF model, as the
/// registry's resource types say.
fn is_drawn_from_disk(registry: &kiln_core::Registry, file: &str) -> bool {
    let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
    registry
        .resource_type(ext)
        .is_some_and(|t| matches!(t.format, ResourceFormat::Binary | ResourceFormat::Gltf))
}

/// What taking a changed level file from disk did.
enum Reload {
    /// The document changed (or a parse error was fixed): rebuild.
    Taken,
    /// Only fields of some entities changed: the document and the world were
    /// updated already; `true` where the changed instances were written into the
    /// running world, `false` where it was spawned again.
    Patched(bool),
    /// The same document as in the editor.
    Same,
    /// Unreadable, broken, or waiting for the user's choice: keep the last good world.
    Blocked,
}

impl Parts<'_> {
    /// Folds changes made outside the editor into the index, and recompiles and
    /// respawns the open level if the change reaches it (the graph decides). Camera,
    /// selection, tree state and play state are kept. Called every frame; cheap when
    /// nothing changed.
    pub(super) fn poll_changes(&mut self, history: &mut History) {
        (self.disk).keep_open_level_layout(self.files, self.level.as_ref());
        (self.disk).take_disk_build(self.level.as_ref().map(|l| l.file.as_str()));
        let Some(watcher) = &self.disk.watcher else {
            return;
        };
        let mut batches = Vec::new();
        while let Some(b) = watcher.try_next_batch() {
            batches.push(b);
        }
        if !batches.is_empty() && watcher.root_is_gone() {
            // Changes inside a folder renamed away no longer map to the project.
            self.disk.watcher = None;
            self.outbox.error(format!(
                "the project folder {} was moved, renamed or deleted: changes to its files are no longer seen; open it again where it is now (File > Open project)",
                self.files.project.root().display()
            ));
            return;
        }
        // A save of the open level shown last frame, before the index took it in,
        // goes into the index now, before anything newer.
        let mut folded = std::mem::take(&mut self.disk.index_next_frame);
        if !folded.is_empty() {
            let first_event = folded.iter().filter_map(|b| b.first_event).min();
            self.fold_batches(&folded, first_event, history);
        }
        if !batches.is_empty() {
            let first_event = batches.iter().filter_map(|b| b.first_event).min();
            if self.show_saved_level_first(&batches, first_event, history) {
                self.disk.index_next_frame = batches;
            } else {
                self.fold_batches(&batches, first_event, history);
                folded.extend(batches);
            }
        }
        // Questions of commands in a terminal whose sync cookies came through are
        // answered after this (see `editor/command_server.rs`): those of a batch the
        // index takes next frame wait for it.
        self.disk
            .synced_cookies
            .extend(folded.iter().flat_map(|b| b.synced.iter().copied()));
        // Everything changed is followed by now; the index's own record of it is
        // not needed.
        if let Some(checker) = &mut self.files.checker {
            checker.take_changed();
        }
    }

    /// Takes a save of the open level into the document and the preview before
    /// the index takes it in (on the next frame), where `batches` hold nothing
    /// else, the level was read from disk unedited since, and it is big enough
    /// (see `disk_follow::SHOWN_BEFORE_INDEXING`): the index re-scans the whole file, and the
    /// save is shown without waiting for that. Returns whether it did.
    fn show_saved_level_first(
        &mut self,
        batches: &[dependency_checker::watch::ChangeBatch],
        first_event: Option<std::time::Instant>,
        history: &mut History,
    ) -> bool {
        let Some(level) = self.level.as_ref() else {
            return false;
        };
        let file = level.file.clone();
        let alone = batches
            .iter()
            .all(|b| !b.rescan && b.paths.iter().all(|p| *p == file))
            && batches.iter().any(|b| !b.paths.is_empty());
        let kept = (self.disk.disk_build.as_ref()).is_some_and(|(f, kept)| {
            *f == file && kept.text_len() >= self.disk.shown_before_indexing
        });
        if !alone
            || !kept
            || history.is_dirty()
            || self.preview.compile_error.is_some()
            || self.disk.disk_conflict.is_some()
        {
            return false;
        }
        let detect_ms = first_event.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
        self.reload_open_level(&file, std::slice::from_ref(&file), detect_ms, history);
        true
    }

    /// Takes `batches` into the index and follows what they changed.
    fn fold_batches(
        &mut self,
        batches: &[dependency_checker::watch::ChangeBatch],
        first_event: Option<std::time::Instant>,
        history: &mut History,
    ) {
        let Some(checker) = &mut self.files.checker else {
            return;
        };
        let mut changed = Vec::new();
        let mut notes = Vec::new();
        for b in batches {
            match checker.apply_changes(b) {
                Ok(report) => {
                    changed.extend(report.changed);
                    for (old, new) in report.renamed {
                        notes.push(LogLine { severity: Severity::Warning, text: format!("{old} was renamed to {new} outside Kiln; its references are reported in Problems") });
                    }
                }
                Err(e) => notes.push(LogLine {
                    severity: Severity::Error,
                    text: e.to_string(),
                }),
            }
        }
        self.outbox.extend(notes);
        self.follow_files(
            &changed,
            ChangedBy::Outside {
                first_event,
                history,
            },
        );
    }

    /// Brings the editor up to date with files whose index entries changed, whoever
    /// changed them: the problems, the asset tree, plugins, what is drawn, and the
    /// open level, recompiled and respawned if the change reaches it. The one place
    /// that catches up with files: the watcher's batches, the commands it serves,
    /// and the editor's own moves, fixes and file writes all come here.
    pub(super) fn follow_files(&mut self, changed: &[String], by: ChangedBy<'_>) {
        // A step that wrote files and edited the document (a prefab made from the
        // selection) rebuilds the level even where the files alone would not.
        let document_edited = matches!(
            by,
            ChangedBy::Editor {
                document_edited: true
            }
        );
        let rebuilt = self.follow_changed_files(changed, by);
        if !rebuilt && document_edited {
            self.after_edit();
        }
    }

    /// [`Self::follow_files`]; returns whether the open level was rebuilt.
    fn follow_changed_files(&mut self, changed: &[String], by: ChangedBy<'_>) -> bool {
        if changed.is_empty() {
            return false;
        }
        if let Some(level) = self.level.as_mut() {
            level.prefabs.forget(changed);
            level.tree_changed();
        }
        self.plugin_folders_changed(changed);
        self.files.take_findings();
        let Some(checker) = &self.files.checker else {
            return false;
        };
        // Everything the change reaches through references, worked out once.
        let reached = crate::live::referrers(checker, changed);
        let affected = crate::live::levels_among(checker, &reached);
        // Textures and models are drawn from their files: the viewport reads a file
        // again, and a glTF whose buffer or image changed, when its version moves on.
        // They are not part of the compiled level, so they need no respawn.
        for file in &reached {
            if is_drawn_from_disk(&self.files.registry, file) {
                self.preview.asset_versions.bump(file);
            }
        }
        let outside = matches!(by, ChangedBy::Outside { .. });
        if changed
            .iter()
            .all(|f| is_drawn_from_disk(&self.files.registry, f))
        {
            if outside {
                self.outbox.info(format!(
                    "redrawn after {} changed",
                    crate::live::summarize(changed)
                ));
            }
            return false;
        }
        if changed
            .iter()
            .any(|f| f.ends_with(".mesh") || f.ends_with(".material"))
        {
            (self.preview).reload_resources(self.files, self.outbox);
        }
        if changed.iter().any(|f| f.ends_with(".level")) {
            self.files.reread_levels();
        }
        let Some(level) = self.level.as_ref() else {
            return false;
        };
        let file = level.file.clone();
        // The kept build of the file holds what its prefabs were: anything else
        // that changed may have been one of them.
        if changed.iter().any(|c| *c != file) {
            self.disk.forget_disk_build();
        }
        if !affected.contains(&file) && !changed.contains(&file) {
            return false;
        }
        let ChangedBy::Outside {
            first_event,
            history,
        } = by
        else {
            // The open document holds what the editor wrote already.
            self.after_edit();
            return true;
        };
        let detect_ms = first_event.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
        self.reload_open_level(&file, changed, detect_ms, history)
    }

    /// Brings the open level, the file `file`, up to `changed` (which reach it):
    /// taken from disk if it is among them, rebuilt otherwise; returns whether it
    /// was rebuilt.
    fn reload_open_level(
        &mut self,
        file: &str,
        changed: &[String],
        detect_ms: f64,
        history: &mut History,
    ) -> bool {
        let file = file.to_owned();
        if changed.contains(&file) {
            let reload = self.reload_from_disk(&file, history);
            if !matches!(reload, Reload::Taken) {
                // Only a document taken whole is rebuilt from the build made for it.
                self.disk.pending_build = None;
            }
            match reload {
                Reload::Blocked => return false,
                // The same document (our own save, whitespace): rebuild only if
                // something else it includes changed too.
                Reload::Same => {
                    let others: Vec<String> =
                        changed.iter().filter(|c| **c != file).cloned().collect();
                    let Some(checker) = &self.files.checker else {
                        return false;
                    };
                    if !crate::live::affected_levels(checker, &others).contains(&file) {
                        return false;
                    }
                }
                Reload::Taken => {}
                Reload::Patched(in_place) => {
                    let path = if in_place {
                        ReloadPath::InPlace
                    } else {
                        ReloadPath::Incremental
                    };
                    self.reloaded(&file, changed, detect_ms, path);
                    return true;
                }
            }
        }
        let build = self.disk.pending_build.take();
        if let Some(level) = self.level.as_mut() {
            (self.preview).follow_document(level, self.files, self.outbox, build.map(Ok));
        }
        self.reloaded(&file, changed, detect_ms, ReloadPath::Whole);
        true
    }

    /// Notes a reload of `file` after `changed`: its timing for the status bar,
    /// and a line in the log, which say which `path` it took.
    fn reloaded(&mut self, file: &str, changed: &[String], detect_ms: f64, path: ReloadPath) {
        let t = self.preview.runtime.timing;
        self.disk.last_reload = Some(ReloadTiming {
            detect_ms,
            compile_ms: t.compile_ms,
            spawn_ms: t.spawn_ms,
            path,
        });
        let how = match path {
            ReloadPath::Whole => String::new(),
            _ => format!(" ({})", path.name()),
        };
        self.outbox.info(format!(
            "{file} reloaded{how} after {} changed",
            crate::live::summarize(changed)
        ));
    }

    /// Takes the open level's file from disk after it changed there.
    fn reload_from_disk(&mut self, file: &str, history: &mut History) -> Reload {
        // A build of an older reading, still being made, is of no use now.
        self.disk.disk_build_coming = None;
        let text = match self.files.project.read_text(file) {
            Ok(t) => t,
            Err(e) => {
                self.outbox
                    .error(format!("{file} changed on disk and cannot be read: {e}"));
                return Reload::Blocked;
            }
        };
        if let Some(fast) = self.reload_incrementally(file, &text, history) {
            return fast;
        }
        let on_disk =
            match LevelDocument::parse_with_conflicts(&text, file, kiln_core::conflict::Side::Ours)
            {
                Ok(d) => d,
                Err(e) => {
                    // Keep the last good document and world; say where the file broke.
                    let error = crate::editor::preview::PreviewError::from(e);
                    if self.preview.compile_error.as_ref() != Some(&error) {
                        self.outbox.note(Severity::Error, error.to_string(), true);
                    }
                    self.preview.compile_error = Some(error);
                    return Reload::Blocked;
                }
            };
        let Some(level) = self.level.as_ref() else {
            return Reload::Blocked;
        };
        if on_disk == level.doc {
            // A previous parse error is fixed, even if the document is the same.
            return if self.preview.compile_error.take().is_some() {
                Reload::Taken
            } else {
                Reload::Same
            };
        }
        if history.is_dirty() {
            self.outbox.note(
                Severity::Warning,
                format!("{file} changed on disk while it has unsaved edits: choose which to keep"),
                true,
            );
            self.disk.disk_conflict = Some(on_disk);
            return Reload::Blocked;
        }
        self.replace_document(on_disk, history);
        history.mark_saved();
        // Compiled already when the incremental path found the change structural.
        if self.disk.pending_build.is_none() {
            self.keep_disk_build(file, &text);
        }
        Reload::Taken
    }

    /// Compiles the text just taken from disk and keeps it for the next reload to
    /// update incrementally; the rebuild that follows installs its blob.
    fn keep_disk_build(&mut self, file: &str, text: &str) {
        let started = std::time::Instant::now();
        let mut source = self.files.project.resource_source();
        let options = crate::editor::preview::PREVIEW_COMPILE;
        match IncrementalLevel::compile(&self.files.registry, &mut source, file, text, options) {
            Ok((build, _)) => {
                self.disk.pending_build = Some(crate::editor::preview::PreviewBuild {
                    blob: build.blob().to_vec(),
                    compile_ms: started.elapsed().as_secs_f64() * 1000.0,
                    left_out: build.compiled().left_out.clone(),
                });
                self.disk.disk_build = Some((file.to_owned(), build));
                self.disk.disk_build_coming = None;
            }
            // The rebuild compiles the document and reports the error.
            Err(_) => self.disk.disk_build = None,
        }
    }

    /// The fast reload: when the document has no unsaved edits and the text
    /// differs from what was last read only in fields of some entities, those
    /// entities are read into the document (one undoable step) and their
    /// instances patched into the blob and written into the running world;
    /// nothing else is parsed, compiled or spawned. `None` where it does not apply (then the whole file is read).
    fn reload_incrementally(
        &mut self,
        file: &str,
        text: &str,
        history: &mut History,
    ) -> Option<Reload> {
        if history.is_dirty() || self.preview.compile_error.is_some() {
            return None;
        }
        let started = std::time::Instant::now();
        let (kept_file, kept) = self.disk.disk_build.as_mut()?;
        if kept_file != file {
            return None;
        }
        let mut source = self.files.project.resource_source();
        let (entities, positions, instances) =
            match kept.update(&self.files.registry, &mut source, text) {
                Ok(Update::Unchanged) => return Some(Reload::Same),
                Ok(Update::Patched {
                    entities,
                    positions,
                    instances,
                }) => (entities, positions, instances),
                Ok(Update::Full { .. }) => {
                    // Compiled in full already: the rebuild installs it.
                    self.disk.pending_build = Some(crate::editor::preview::PreviewBuild {
                        blob: kept.blob().to_vec(),
                        compile_ms: started.elapsed().as_secs_f64() * 1000.0,
                        left_out: kept.compiled().left_out.clone(),
                    });
                    return None;
                }
                Err(_) => {
                    self.disk.disk_build = None;
                    return None;
                }
            };
        let level = self.level.as_ref()?;
        let mut edits = Vec::new();
        for (id, &k) in entities.iter().zip(&positions) {
            let read: Option<kiln_core::EntityDocument> = kept
                .entity_text(k)
                .and_then(|t| serde_json::from_str(t).ok());
            let (Some(new), Some(old)) = (read, level.doc.entities.get(k)) else {
                self.disk.disk_build = None;
                return None;
            };
            if old.id != *id || new.id != *id {
                self.disk.disk_build = None;
                return None;
            }
            if *old != new {
                edits.push(DocEdit::ReplaceEntity {
                    old: Box::new(old.clone()),
                    new: Box::new(new),
                });
            }
        }
        if edits.is_empty() {
            // The editor's own save: the document holds it already.
            return Some(Reload::Same);
        }
        let blob = kept.blob().to_vec();
        let compile_ms = started.elapsed().as_secs_f64() * 1000.0;
        self.preview.doc_layout = None;
        let level = self.level.as_mut()?;
        history.push(&mut level.doc, DocEdit::Group(edits), false);
        history.mark_saved();
        match (self.preview.runtime).install_patch(
            &self.files.registry,
            blob,
            &instances,
            compile_ms,
        ) {
            Ok(in_place) => Some(Reload::Patched(in_place)),
            Err(_) => {
                // Not spawned: the full rebuild says why.
                self.disk.disk_build = None;
                Some(Reload::Taken)
            }
        }
    }

    /// Replaces the whole open document as one undoable step.
    fn replace_document(&mut self, new: LevelDocument, history: &mut History) {
        let Some(level) = self.level.as_mut() else {
            return;
        };
        let edit = DocEdit::ReplaceAll {
            other: Box::new(new),
        };
        history.push(&mut level.doc, edit, false);
    }

    /// Resolves a disk conflict: keep the edits in the editor (they overwrite the file
    /// on the next save) or take the version on disk (the edits stay undoable).
    pub(super) fn resolve_disk_conflict(&mut self, take_disk: bool, history: &mut History) {
        let Some(on_disk) = self.disk.disk_conflict.take() else {
            return;
        };
        if take_disk {
            self.replace_document(on_disk, history);
            history.mark_saved();
            self.after_edit();
        }
    }
}
