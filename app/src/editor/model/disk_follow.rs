//! What follows files changed on disk by other programs: the project's watcher,
//! the open level's file as last read (kept to be compiled by what a save
//! changes), the index's layout of it, and a save shown before the index takes
//! it in. See `live_reload.rs` for how a change is followed.

use dependency_checker::KeptLevelLayout;
use dependency_checker::watch::{ChangeBatch, ProjectWatcher, SyncCookies};
use kiln_core::LevelDocument;
use kiln_core::incremental::IncrementalLevel;
use std::sync::mpsc::Receiver;

use super::open_level::OpenLevel;
use super::outbox::{Outbox, Severity};
use super::project_files::ProjectFiles;
use crate::editor::preview::PreviewBuild;

/// The size from which a saved level is shown before the index takes it in.
/// Measured on Xvfb + llvmpipe when the index re-scanned a saved level whole
/// (236 ms for 100,000 entities, 28 MB): at 100,000 entities, save to frame
/// 377 -> 220 ms p50; at 10,000 (3.7 MB), 37 -> 57 ms, so smaller levels keep
/// one frame. The index now scans such a save by the entities it changed; whether
/// the extra frame still pays at this size is not measured again yet.
pub const SHOWN_BEFORE_INDEXING: usize = 8 << 20;

/// The state of following the disk.
pub struct DiskFollow {
    /// Watches the project so that problems, resources and the preview follow
    /// changes made outside the editor.
    pub(super) watcher: Option<ProjectWatcher>,
    /// Sync cookies the watcher reported since the command server last asked
    /// (see `editor/command_server.rs`).
    pub(super) synced_cookies: Vec<u64>,
    /// The open level changed on disk while it had unsaved edits: the version on
    /// disk, waiting for the user to choose.
    pub(super) disk_conflict: Option<LevelDocument>,
    pub(super) last_reload: Option<ReloadTiming>,
    /// The open level's file as last read from disk, compiled and kept to be
    /// updated incrementally when another program saves it (see
    /// `live_reload.rs`): the file it is of, and the build.
    pub(super) disk_build: Option<(String, IncrementalLevel)>,
    /// That build being made on a thread from the text the open level was read
    /// from (see `level_loading::start_disk_build`): the file, and where it
    /// comes.
    pub(super) disk_build_coming: Option<(String, Receiver<IncrementalLevel>)>,
    /// The open level's layout is to be kept by the index (see
    /// `Checker::keep_level_layout`), so that its first save is scanned by the
    /// entities it changed: made on a thread of its own from the next frame on
    /// (240 ms for a 28 MB level), and taken in when it is done.
    pub(super) keep_level_layout: bool,
    pub(super) level_layout: Option<Receiver<KeptLevelLayout>>,
    /// A build of the document just taken from disk, for the rebuild that follows
    /// to install instead of compiling the document again.
    pub(super) pending_build: Option<PreviewBuild>,
    /// A save of the open level already shown, for the index to take in on the
    /// next frame (see `live_reload.rs`).
    pub(super) index_next_frame: Vec<ChangeBatch>,
    /// See [`super::Editor::show_saves_before_indexing_from`].
    pub(super) shown_before_indexing: usize,
}

impl Default for DiskFollow {
    fn default() -> Self {
        DiskFollow {
            watcher: None,
            synced_cookies: Vec::new(),
            disk_conflict: None,
            last_reload: None,
            disk_build: None,
            disk_build_coming: None,
            keep_level_layout: false,
            level_layout: None,
            pending_build: None,
            index_next_frame: Vec::new(),
            shown_before_indexing: SHOWN_BEFORE_INDEXING,
        }
    }
}

impl std::fmt::Debug for DiskFollow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskFollow").finish_non_exhaustive()
    }
}

impl DiskFollow {
    /// Starts building `text` (the open level `file` as just read) for its next
    /// outside save, on a thread (see `level_loading::start_disk_build`).
    pub(super) fn build_disk_text(&mut self, files: &ProjectFiles, file: &str, text: String) {
        self.disk_build_coming =
            super::level_loading::start_disk_build(&files.project, &files.registry, file, text)
                .map(|built| (file.to_owned(), built));
    }

    /// Starts making the open level's layout for the index on a thread of its
    /// own when asked to, and takes in one that is made (see the
    /// `keep_level_layout` field).
    pub(super) fn keep_open_level_layout(
        &mut self,
        files: &mut ProjectFiles,
        level: Option<&OpenLevel>,
    ) {
        if let (Some(made), Some(checker)) = (&self.level_layout, &mut files.checker) {
            match made.try_recv() {
                Ok(layout) => {
                    checker.take_level_layout(layout);
                    self.level_layout = None;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => self.level_layout = None,
            }
        }
        if std::mem::take(&mut self.keep_level_layout)
            && let (Some(checker), Some(level)) = (&files.checker, level)
            && let Some(job) = checker.level_layout_job(&level.file)
        {
            let (send, made) = std::sync::mpsc::channel();
            let started = std::thread::Builder::new()
                .name("level layout".into())
                .spawn(move || {
                    if let Some(layout) = job.run() {
                        let _ = send.send(layout);
                    }
                });
            // Without a thread, the first save scans the whole file, as before.
            self.level_layout = started.ok().map(|_| made);
        }
    }

    /// Starts watching the project; without a watcher, changes made outside
    /// show after Refresh (said in the log).
    pub(super) fn start_watching(
        &mut self,
        project: &kiln_core::Project,
        waker: Option<dependency_checker::watch::Waker>,
        outbox: &mut Outbox,
    ) {
        let debounce = dependency_checker::watch::Debounce::default();
        match ProjectWatcher::start_with_waker(project.root(), debounce, waker) {
            Ok(w) => self.watcher = Some(w),
            Err(e) => outbox.note(
                Severity::Warning,
                format!("{e}; changes made outside Kiln show after Refresh"),
                false,
            ),
        }
    }
    /// The open level as changed on disk while it had unsaved edits.
    pub fn disk_conflict(&self) -> Option<&LevelDocument> {
        self.disk_conflict.as_ref()
    }
    /// Timing of the last reload caused by a change on disk.
    pub fn last_reload(&self) -> Option<ReloadTiming> {
        self.last_reload
    }
    /// The sync cookies of the project's watcher: what a command server writes to
    /// know that the editor has seen every change made before a question.
    pub fn sync_cookies(&self) -> Option<SyncCookies> {
        self.watcher.as_ref().map(|w| w.sync_cookies())
    }
    /// Sets the size from which a saved level is shown before the index takes
    /// it in ([`SHOWN_BEFORE_INDEXING`] unless set): where frames
    /// are cheap (a GPU), or to see the path at work on a small level.
    pub fn show_saves_before_indexing_from(&mut self, bytes: usize) {
        self.shown_before_indexing = bytes;
    }
    /// The sync cookies the watcher reported since the last call.
    pub fn take_synced_cookies(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.synced_cookies)
    }
    /// Whether the open level's build for outside saves is made (see
    /// `level_loading::start_disk_build`): from then on a save by another
    /// program is compiled by the entities it changed (tests and tools).
    pub fn outside_saves_prepared(&self) -> bool {
        self.disk_build.is_some()
    }
    /// Whether the index has a save of the open level to take in on the next
    /// frame: the window must draw one.
    pub fn index_pending(&self) -> bool {
        !self.index_next_frame.is_empty()
    }
    /// Drops the build of the file as last read, and one being made.
    pub(super) fn forget_disk_build(&mut self) {
        self.disk_build = None;
        self.disk_build_coming = None;
    }
    /// Keeps the build made on a thread, if it is done, nothing newer was read
    /// from disk since (a reload drops the one coming), and `open_file` is still
    /// the file it is of.
    pub(super) fn take_disk_build(&mut self, open_file: Option<&str>) {
        let Some((file, built)) = &self.disk_build_coming else {
            return;
        };
        match built.try_recv() {
            Ok(build) => {
                if self.disk_build.is_none() && open_file == Some(file.as_str()) {
                    self.disk_build = Some((file.clone(), build));
                }
                self.disk_build_coming = None;
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
            Err(std::sync::mpsc::TryRecvError::Disconnected) => self.disk_build_coming = None,
        }
    }
}

/// How long the last reload from disk took, split by stage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReloadTiming {
    /// From the first file-system event to the change being applied (debounce,
    /// indexing the changed files).
    pub detect_ms: f64,
    /// Compiling the level.
    pub compile_ms: f64,
    /// Despawning the old world and spawning the new one, or writing the
    /// changed instances into it.
    pub spawn_ms: f64,
    /// Which way it went.
    pub path: ReloadPath,
}

/// Which way a reload from disk went (the status bar and the log say it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReloadPath {
    /// The whole file was read, compiled and spawned.
    #[default]
    Whole,
    /// Only the changed entities were read and compiled; the world was spawned.
    Incremental,
    /// Only the changed entities were read and compiled, and their instances
    /// written into the running world.
    InPlace,
}

impl ReloadPath {
    /// How the log and the status bar name it.
    pub fn name(self) -> &'static str {
        match self {
            ReloadPath::Whole => "whole file",
            ReloadPath::Incremental => "incremental",
            ReloadPath::InPlace => "incremental, in place",
        }
    }

    /// What the world's step was: a spawn, or a patch of the running world.
    pub fn world_step(self) -> &'static str {
        match self {
            ReloadPath::InPlace => "patch",
            _ => "spawn",
        }
    }
}
