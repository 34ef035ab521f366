//! Opening a large level without freezing the window: the file is read, parsed and
//! compiled on a worker thread while the editor shows which stage it is at, and the
//! result is spawned on the frame after the stage reads "Spawning". Small levels
//! open in place, as before, so that opening the demo shows no flicker.

use crate::editor::preview::PreviewError;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use kiln_core::incremental::IncrementalLevel;
use kiln_core::{LevelDocument, Project, Registry};

/// Where an opening level is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadStage {
    /// Reading the file.
    Reading,
    /// Parsing its JSON.
    Parsing,
    /// Compiling it to the runtime's blob.
    Compiling,
    /// Spawning it into the preview world (on the editor's thread).
    Spawning,
}

impl LoadStage {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => LoadStage::Reading,
            1 => LoadStage::Parsing,
            2 => LoadStage::Compiling,
            _ => LoadStage::Spawning,
        }
    }

    /// What the progress bar says.
    pub fn describe(self) -> &'static str {
        match self {
            LoadStage::Reading => "Reading",
            LoadStage::Parsing => "Parsing",
            LoadStage::Compiling => "Compiling",
            LoadStage::Spawning => "Spawning",
        }
    }

    /// How far along the whole opening this stage starts, for the progress bar (the
    /// parse and the compile take most of it, in about equal parts).
    pub fn fraction(self) -> f32 {
        match self {
            LoadStage::Reading => 0.0,
            LoadStage::Parsing => 0.1,
            LoadStage::Compiling => 0.5,
            LoadStage::Spawning => 0.9,
        }
    }
}

/// What the view shows while a level opens.
#[derive(Debug, Clone, PartialEq)]
pub struct OpeningStatus {
    /// The level file.
    pub file: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// The stage it is at.
    pub stage: LoadStage,
    /// Seconds since it started.
    pub seconds: f32,
}

/// A level read, parsed and compiled on the worker: the document (or why it could not
/// be opened) and the compiled blob with its compile time in milliseconds (or the
/// compile error, which leaves the level open and editable).
pub struct Loaded {
    /// The document, or why the file could not be read or parsed.
    pub doc: Result<LevelDocument, String>,
    /// The level compiled for the preview, or the compile error.
    pub compiled:
        Result<crate::editor::preview::PreviewBuild, crate::editor::preview::PreviewError>,
    /// The text the document was read from, for the build that takes the
    /// level's next save from another program by the entities it changed (see
    /// [`start_disk_build`]).
    pub text: Option<String>,
}

/// A level being opened on a worker thread.
pub struct LevelLoad {
    file: String,
    bytes: u64,
    started: Instant,
    stage: Arc<AtomicU8>,
    result: mpsc::Receiver<Loaded>,
    /// Received and waiting for its spawn on the next frame.
    ready: Option<Loaded>,
}

impl std::fmt::Debug for LevelLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevelLoad")
            .field("file", &self.file)
            .field("stage", &self.stage())
            .finish_non_exhaustive()
    }
}

impl LevelLoad {
    /// Starts reading `file` (`bytes` long) of `project`; `wake` is called at each
    /// stage, so an idle window repaints its progress.
    pub fn start(
        project: Project,
        registry: Arc<Registry>,
        file: &str,
        bytes: u64,
        wake: Option<dependency_checker::watch::Waker>,
    ) -> Self {
        let stage = Arc::new(AtomicU8::new(LoadStage::Reading as u8));
        let (send, result) = mpsc::channel();
        let worker_stage = Arc::clone(&stage);
        let worker_file = file.to_owned();
        let set = move |s: LoadStage| {
            worker_stage.store(s as u8, Ordering::Relaxed);
            if let Some(wake) = &wake {
                wake();
            }
        };
        std::thread::spawn(move || {
            let loaded = load(&project, &registry, &worker_file, &set);
            // The editor may have moved on (another level, the window closed).
            let _ = send.send(loaded);
            set(LoadStage::Spawning);
        });
        LevelLoad {
            file: file.to_owned(),
            bytes,
            started: Instant::now(),
            stage,
            result,
            ready: None,
        }
    }

    /// The level file.
    pub fn file(&self) -> &str {
        &self.file
    }

    fn stage(&self) -> LoadStage {
        LoadStage::from_u8(self.stage.load(Ordering::Relaxed))
    }

    /// What to show.
    pub fn status(&self) -> OpeningStatus {
        OpeningStatus {
            file: self.file.clone(),
            bytes: self.bytes,
            stage: if self.ready.is_some() {
                LoadStage::Spawning
            } else {
                self.stage()
            },
            seconds: self.started.elapsed().as_secs_f32(),
        }
    }

    /// The loaded level once it is time to spawn it: one call after the worker is
    /// done, so that the frame before the spawn shows "Spawning".
    pub fn poll(&mut self) -> Option<Loaded> {
        if let Some(loaded) = self.ready.take() {
            return Some(loaded);
        }
        match self.result.try_recv() {
            Ok(loaded) => {
                self.ready = Some(loaded);
                None
            }
            Err(mpsc::TryRecvError::Empty) => None,
            // The worker died (it panicked): said as an unreadable level.
            Err(mpsc::TryRecvError::Disconnected) => Some(Loaded {
                doc: Err(format!("{}: the worker reading it stopped", self.file)),
                compiled: Err(PreviewError::Spawn(String::new())),
                text: None,
            }),
        }
    }
}

fn load(project: &Project, registry: &Registry, file: &str, set: &dyn Fn(LoadStage)) -> Loaded {
    let failed = |e: String| Loaded {
        doc: Err(e),
        compiled: Err(PreviewError::Spawn(String::new())),
        text: None,
    };
    let text = match read(project, file) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    set(LoadStage::Parsing);
    let doc =
        match LevelDocument::parse_with_conflicts(&text, file, kiln_core::conflict::Side::Ours) {
            Ok(d) => d,
            Err(e) => return failed(e.to_string()),
        };
    set(LoadStage::Compiling);
    let compiled = crate::editor::preview::compile_for_preview(registry, project, file, &doc);
    Loaded {
        doc: Ok(doc),
        compiled,
        text: Some(text),
    }
}

/// Compiles `text`, the level `file` as just read (the text its document was
/// parsed from), on a thread of its own, into the build that takes the level's
/// next save from another program by the entities it changed: the first save is
/// then as quick as every later one, and opening does not wait for it (a second
/// parse of the text, 250 ms at 100,000 entities). Nothing comes back where the
/// text holds merge conflicts or does not compile.
pub fn start_disk_build(
    project: &Project,
    registry: &Arc<Registry>,
    file: &str,
    text: String,
) -> Option<mpsc::Receiver<IncrementalLevel>> {
    if kiln_core::conflict::may_have_conflicts(&text) {
        return None;
    }
    let (project, registry, file) = (project.clone(), Arc::clone(registry), file.to_owned());
    let (send, built) = mpsc::channel();
    let started = std::thread::Builder::new()
        .name("level build".into())
        .spawn(move || {
            let mut source = project.resource_source();
            let options = crate::editor::preview::PREVIEW_COMPILE;
            if let Ok((mut build, _)) =
                IncrementalLevel::compile(&registry, &mut source, &file, &text, options)
            {
                if text.len() >= kiln_core::incremental::PREPARED_FROM {
                    build.prepare_updates();
                }
                let _ = send.send(build);
            }
        });
    started.ok().map(|_| built)
}

/// The text of `file`, read only inside the project.
pub fn read(project: &Project, file: &str) -> Result<String, String> {
    project.read_text(file).map_err(|e| format!("{file}: {e}"))
}
