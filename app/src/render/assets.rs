//! Models and textures for drawing, read and decoded on a background thread so that
//! a large file never stalls a frame. The viewport asks for what it needs each frame;
//! what is not loaded yet is requested and drawn once it arrives (a placeholder
//! until then). A file whose version changes (the editor saw it change on disk) is
//! read again, and the old copy is drawn until the new one is ready.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use kiln_core::Project;

use kiln_core::ResourceId;

use super::model::{self, Model, Texture};
use super::resources::Resources;

/// What a loaded file became.
#[derive(Debug, Clone)]
pub enum Loaded {
    /// A glTF model.
    Model(Arc<Model>),
    /// A texture.
    Image(Arc<Texture>),
}

/// Names a model: a glTF file's path, or `shape:<name>` for a primitive shape.
pub type ModelKey = String;

/// How many times the editor saw each file change on disk: a cached copy read at an
/// older version is read again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssetVersions {
    versions: HashMap<String, u64>,
    changes: u64,
}

impl AssetVersions {
    /// The version of `path` (0 until it changes).
    pub fn of(&self, path: &str) -> u64 {
        self.versions.get(path).copied().unwrap_or(0)
    }

    /// Notes that `path` changed on disk.
    pub fn bump(&mut self, path: &str) {
        *self.versions.entry(path.to_owned()).or_default() += 1;
        self.changes += 1;
    }

    /// How many changes were noted, of all files: when it has not moved, no file
    /// drawn from disk changed.
    pub fn changes(&self) -> u64 {
        self.changes
    }
}

/// One file's state in the cache.
#[derive(Debug, Default)]
struct Entry {
    /// The last successful load.
    value: Option<Loaded>,
    /// Why the last load failed (the previous value, if any, is still drawn).
    error: Option<String>,
    /// The version the value (or error) was read at.
    version: Option<u64>,
    /// A load is under way for this version.
    loading: Option<u64>,
}

struct Request {
    path: String,
    version: u64,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Model,
    Image,
}

type Reply = (String, u64, Result<Loaded, String>);

/// Cache of loaded models and images, with the loader thread behind it.
pub struct AssetCache {
    entries: HashMap<String, Entry>,
    requests: Sender<Request>,
    replies: Receiver<Reply>,
    /// Bumped whenever an entry gets a new value, so that GPU copies know to update.
    generation: u64,
    /// The primitive shapes' models and their keys, made once (not per frame).
    shapes: HashMap<&'static str, (ModelKey, Arc<Model>)>,
}

impl std::fmt::Debug for AssetCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssetCache")
            .field("entries", &self.entries.len())
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl AssetCache {
    /// Starts the loader thread for `project`; `wake` is called after each load
    /// (a repaint request).
    pub fn new(project: Project, wake: Option<Arc<dyn Fn() + Send + Sync>>) -> Self {
        let (requests, incoming) = channel::<Request>();
        let (reply, replies) = channel::<Reply>();
        let spawned = std::thread::Builder::new()
            .name("kiln-asset-loader".into())
            .spawn(move || {
                while let Ok(r) = incoming.recv() {
                    let result = match r.kind {
                        Kind::Model => {
                            model::load_gltf(&project, &r.path).map(|m| Loaded::Model(Arc::new(m)))
                        }
                        Kind::Image => model::load_texture(&project, &r.path)
                            .map(|i| Loaded::Image(Arc::new(i))),
                    };
                    if reply.send((r.path, r.version, result)).is_err() {
                        return;
                    }
                    if let Some(wake) = &wake {
                        wake();
                    }
                }
            });
        // Without a thread, requests fail when sent and every asset reports it.
        drop(spawned);
        AssetCache {
            entries: HashMap::new(),
            requests,
            replies,
            generation: 0,
            shapes: HashMap::new(),
        }
    }

    /// Takes what the loader finished. Returns whether anything changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        while let Ok((path, version, result)) = self.replies.try_recv() {
            let entry = self.entries.entry(path).or_default();
            if entry.loading == Some(version) {
                entry.loading = None;
            }
            // An older load finishing after a newer one was asked for still shows
            // until the newer one is in.
            if entry.version.is_some_and(|v| v > version) {
                continue;
            }
            entry.version = Some(version);
            match result {
                Ok(value) => {
                    entry.value = Some(value);
                    entry.error = None;
                }
                Err(e) => entry.error = Some(e),
            }
            self.generation += 1;
            changed = true;
        }
        changed
    }

    /// A number that changes whenever a model or image was (re)loaded.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn get(&mut self, path: &str, version: u64, kind: Kind) -> Option<&Loaded> {
        let entry = self.entries.entry(path.to_owned()).or_default();
        if entry.version != Some(version) && entry.loading != Some(version) {
            let request = Request {
                path: path.to_owned(),
                version,
                kind,
            };
            if self.requests.send(request).is_ok() {
                entry.loading = Some(version);
            } else {
                entry.version = Some(version);
                entry.error = Some(format!("{path}: the loader thread is not running"));
            }
        }
        entry.value.as_ref()
    }

    /// The model of glTF file `path` at `version`, once loaded (requested if not).
    pub fn model(&mut self, path: &str, version: u64) -> Option<Arc<Model>> {
        match self.get(path, version, Kind::Model) {
            Some(Loaded::Model(m)) => Some(m.clone()),
            _ => None,
        }
    }

    /// The image file `path` at `version` as a texture, once loaded (requested if
    /// not).
    pub fn image(&mut self, path: &str, version: u64) -> Option<Arc<Texture>> {
        match self.get(path, version, Kind::Image) {
            Some(Loaded::Image(i)) => Some(i.clone()),
            _ => None,
        }
    }

    /// Whether `path` was read (or failed) at `version`: what is cached is the
    /// file's content now, not an older one shown while the new one loads.
    pub fn is_current(&self, path: &str, version: u64) -> bool {
        self.entries
            .get(path)
            .is_some_and(|e| e.version == Some(version) && e.loading.is_none())
    }

    /// Why `path` failed to load the last time it was read, if it did.
    pub fn error(&self, path: &str) -> Option<&str> {
        self.entries.get(path).and_then(|e| e.error.as_deref())
    }

    /// What the `.mesh` resource `mesh` draws: its glTF model (once loaded) or its
    /// primitive shape. `None` for a missing resource or a model not loaded yet.
    pub fn mesh_model(
        &mut self,
        resources: &Resources,
        mesh: ResourceId,
        versions: &AssetVersions,
    ) -> Option<(ModelKey, Arc<Model>)> {
        let look = resources.meshes.get(&mesh)?;
        match &look.model {
            Some(path) => {
                let model = self.model(path, versions.of(path))?;
                Some((path.clone(), model))
            }
            None => {
                let name = look.shape_name();
                let (key, model) = self
                    .shapes
                    .entry(name)
                    .or_insert_with(|| (format!("shape:{name}"), Arc::new(Model::shape(name))));
                Some((key.clone(), model.clone()))
            }
        }
    }

    /// How many files are being read.
    pub fn loading(&self) -> usize {
        self.entries
            .values()
            .filter(|e| e.loading.is_some())
            .count()
    }

    /// Every file that failed to load, and why, and every warning of a loaded model,
    /// sorted by path.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (path, e) in &self.entries {
            if let Some(error) = &e.error {
                out.push((path.clone(), error.clone()));
            }
            if let Some(Loaded::Model(m)) = &e.value {
                out.extend(
                    m.warnings
                        .iter()
                        .map(|w| (path.clone(), format!("{path}: {w}"))),
                );
            }
        }
        out.sort();
        out
    }

    /// Waits until nothing is loading (tests, screenshots, thumbnails).
    pub fn wait(&mut self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            self.poll();
            if self.loading() == 0 {
                return true;
            }
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}
