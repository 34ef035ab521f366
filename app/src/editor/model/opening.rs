//! Opening a level: read and parsed at once, or, from a size up, read, parsed
//! and compiled on a worker thread (`level_loading.rs`) with its progress shown;
//! then installed as the open level with what belongs to it.

use kiln_core::LevelDocument;

use super::level_loading::{self, LevelLoad, OpeningStatus};
use super::open_level::OpenLevel;
use super::outbox::{Effect, Outbox};
use super::parts::Parts;
use super::project_files::ProjectFiles;
use super::recovery;
use crate::editor::history::History;
use crate::editor::preview::{PreviewBuild, PreviewError};

/// Levels from this size up open on a worker thread (about 25,000 entities of the
/// demo's kind; such a level takes a few tenths of a second to open).
pub const DEFAULT_BACKGROUND_OPEN_BYTES: u64 = 4 << 20;

/// The level opening on a worker, if any.
pub struct Opening {
    /// A large level being read, parsed and compiled on a worker thread.
    pub(super) load: Option<LevelLoad>,
    /// Levels at least this large open on a worker thread, with progress shown.
    pub(super) background_open_bytes: u64,
    /// Wakes the window (the GUI's repaint request) when the worker is done.
    pub(super) waker: Option<dependency_checker::watch::Waker>,
}

/// A level read and parsed, to be installed as the open level.
pub(super) struct Opened {
    file: String,
    doc: LevelDocument,
    /// Its blob when the worker compiled it already (or why that failed).
    compiled: Option<Result<PreviewBuild, PreviewError>>,
    /// The text it was read from, for the build that follows outside saves.
    text: Option<String>,
}

impl Opening {
    pub(super) fn new(waker: Option<dependency_checker::watch::Waker>) -> Self {
        Opening {
            load: None,
            background_open_bytes: DEFAULT_BACKGROUND_OPEN_BYTES,
            waker,
        }
    }

    /// The level being opened on a worker thread, if any.
    pub fn status(&self) -> Option<OpeningStatus> {
        self.load.as_ref().map(|o| o.status())
    }

    /// Starts opening `file`: read and parsed now, or handed to a worker when it
    /// is large (then `None`, and [`Opening::poll`] gives it once it is done).
    pub(super) fn open(
        &mut self,
        files: &ProjectFiles,
        file: &str,
        outbox: &mut Outbox,
    ) -> Option<Opened> {
        let project = &files.project;
        let bytes = kiln_core::fs::kind_below(project.root(), file).map_or(0, |(_, st)| st.size);
        if bytes >= self.background_open_bytes {
            self.load = Some(LevelLoad::start(
                project.clone(),
                std::sync::Arc::clone(&files.registry),
                file,
                bytes,
                self.waker.clone(),
            ));
            outbox.info(format!("opening {file} ({:.0} MB)", bytes as f64 / 1e6));
            return None;
        }
        self.load = None;
        let parsed = level_loading::read(project, file).and_then(|text| {
            LevelDocument::parse_with_conflicts(&text, file, kiln_core::conflict::Side::Ours)
                .map(|doc| (doc, text))
                .map_err(|e| e.to_string())
        });
        match parsed {
            Ok((doc, text)) => Some(Opened {
                file: file.to_owned(),
                doc,
                compiled: None,
                text: Some(text),
            }),
            Err(e) => {
                outbox.error(format!("cannot open {e}"));
                None
            }
        }
    }

    /// The level the worker finished, if it did.
    pub(super) fn poll(&mut self, outbox: &mut Outbox) -> Option<Opened> {
        let loaded = self.load.as_mut()?.poll()?;
        let load = self.load.take()?;
        match loaded.doc {
            Ok(doc) => Some(Opened {
                file: load.file().to_owned(),
                doc,
                compiled: Some(loaded.compiled),
                text: loaded.text,
            }),
            Err(e) => {
                outbox.error(format!("cannot open {e}"));
                None
            }
        }
    }
}

impl Parts<'_> {
    /// Makes `opened` the open level: its recovered edits and merge conflicts
    /// said, the history's level edits forgotten, the preview spawned (from the
    /// worker's blob where it made one), and the build for outside saves started.
    pub(super) fn install_level(&mut self, opened: Opened, history: &mut History) {
        let Opened {
            file,
            doc,
            compiled,
            text,
        } = opened;
        let mut level = OpenLevel::new(&file, doc);
        level.recovery = recovery::read(&self.files.project, &file).filter(|r| *r != level.doc);
        if level.recovery.is_some() {
            self.outbox.warn(format!(
                "{file} has unsaved edits from a session that ended without saving; restore them?"
            ));
        }
        let conflicts = level.doc.conflicts.len();
        self.disk.forget_disk_build();
        self.disk.keep_level_layout = true;
        history.clear();
        if conflicts > 0 {
            self.outbox.warn(format!(
                "{file} has {conflicts} merge conflict{} to resolve (Conflicts tab); until then ours is shown, and kiln check and kiln compile refuse the file",
                if conflicts == 1 { "" } else { "s" }
            ));
            self.outbox.push(Effect::ShowConflicts);
        }
        let across = self.files.cross_file_conflicts().len();
        if across > 0 {
            self.outbox.warn(format!(
                "the last merge broke the project across files ({across} conflict{}: Conflicts tab); fix, then git add and git commit",
                if across == 1 { "" } else { "s" }
            ));
            self.outbox.push(Effect::ShowConflicts);
        }
        self.preview.runtime.reset();
        let level = self.level.insert(level);
        (self.preview).follow_document(level, self.files, self.outbox, compiled);
        // The window frames a level seen for the first time, or brings back the
        // camera it was left with (`view_commands::follow_level`).
        self.outbox.info(format!("opened {file}"));
        if let Some(text) = text {
            self.disk.build_disk_text(self.files, &file, text);
        }
    }
}
