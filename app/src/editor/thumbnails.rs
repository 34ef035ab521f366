//! The asset browser's thumbnails, made for the rows in view and kept on disk.
//!
//! A row asks with [`Thumbnails::get`]. What can leave the UI thread does:
//! - a worker thread hashes the file and everything it draws from;
//! - it looks the hash up in `.kiln/thumbnails/<hash>.png`;
//! - it decodes images.
//!
//! Meshes, materials and models are drawn on the GPU by the scene renderer, a few
//! per frame, and handed back to the worker to be written. Because the hash covers
//! the file's bytes and those of its dependencies, a changed texture gives every
//! material wearing it a new thumbnail. An unchanged project opens with its
//! thumbnails at once.
//!
//! When the editor notes a change (its resources reload, or a file drawn from disk
//! moves on a version), the thumbnails in view are hashed again. Only those whose
//! hash moved are made again; until the new one is in, the old one stays.
//!
//! Without a GPU (the glow renderer), textures still get thumbnails, and meshes and
//! materials keep their icons.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant, SystemTime};

use dependency_checker::Checker;
use dependency_checker::resolve::Target;
use kiln_core::Project;

use crate::render::assets::AssetCache;
use crate::render::gpu::SceneRenderer;
use crate::render::model::{Image, read_asset};
use crate::render::thumbnail::{self, Drawn, ThumbnailKind, ThumbnailScene};

use super::model::Editor;

/// Where thumbnails are kept, relative to the project root.
pub const THUMBNAIL_DIR: &str = kiln_core::own_folder::THUMBNAILS;

/// Bumped when thumbnails are drawn differently, so that old ones are not shown.
const DRAWING_VERSION: u64 = 1;

/// A drawn thumbnail is only kept on disk when every file it was drawn from is at
/// least this old. A newer file may have changed after the editor loaded it and
/// before the watcher said so: the picture could show the old content under the
/// new content's hash.
const SETTLED: Duration = Duration::from_secs(2);

/// How long drawing may take per frame (after the first thumbnail).
const DRAW_BUDGET: Duration = Duration::from_millis(12);

/// What the editor's drawing data was loaded at: when it moves, files may have
/// changed.
type Stamp = (u64, u64);

/// A file's thumbnail as the browser knows it.
#[derive(Default)]
struct Entry {
    /// The stamp the last hash was asked at.
    stamp: Option<Stamp>,
    /// The hash of what `texture` shows.
    key: Option<u64>,
    texture: Option<egui::TextureHandle>,
    /// Why there is no thumbnail.
    error: Option<String>,
    /// A hash or a drawing is under way.
    busy: bool,
}

enum Job {
    /// Hash `files` (the first is the thumbnail's own), then find or decode it.
    Prepare {
        file: String,
        kind: ThumbnailKind,
        files: Vec<String>,
        shown: Option<u64>,
    },
    /// Write a drawn thumbnail to the disk cache (`None`: it may not be kept), in
    /// place of `replaces`.
    Store {
        key: u64,
        image: Option<Image>,
        replaces: Option<u64>,
    },
}

enum Done {
    /// The hash is what is shown already.
    Unchanged {
        file: String,
    },
    /// The picture, from the disk cache or decoded.
    Ready {
        file: String,
        key: u64,
        image: Image,
        from_cache: bool,
        /// Why it could not be kept on disk.
        not_kept: Option<String>,
    },
    /// It must be drawn; `settled` says whether it may be kept on disk.
    Draw {
        file: String,
        key: u64,
        settled: bool,
    },
    Failed {
        file: String,
        error: String,
    },
    /// The disk cache could not be written.
    NotCached(String),
}

/// The thumbnails of one project.
pub struct Thumbnails {
    jobs: Sender<Job>,
    done: Receiver<Done>,
    entries: HashMap<String, Entry>,
    /// Files whose rows were shown this frame.
    wanted: HashSet<String>,
    /// Thumbnails to draw on the GPU: (file, hash, keep on disk).
    to_draw: VecDeque<(String, u64, bool)>,
    renderer: Option<SceneRenderer>,
    /// Why thumbnails are not kept on disk, when they are not.
    cache_error: Option<String>,
    stats: ThumbnailStats,
}

/// How the thumbnails shown so far were made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThumbnailStats {
    /// Read from `.kiln/thumbnails/`.
    pub from_cache: usize,
    /// Images decoded and scaled.
    pub decoded: usize,
    /// Drawn on the GPU.
    pub drawn: usize,
}

impl std::fmt::Debug for Thumbnails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thumbnails")
            .field("entries", &self.entries.len())
            .field("to_draw", &self.to_draw.len())
            .finish_non_exhaustive()
    }
}

impl Thumbnails {
    /// Starts the worker for `project`; `wake` asks for a frame when a result is in.
    pub fn new(project: Project, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let (jobs, incoming) = channel::<Job>();
        let (reply, done) = channel::<Done>();
        let spawned = std::thread::Builder::new()
            .name("kiln-thumbnails".into())
            .spawn(move || {
                while let Ok(job) = incoming.recv() {
                    let Some(done) = work(&project, job) else {
                        continue;
                    };
                    if reply.send(done).is_err() {
                        return;
                    }
                    wake();
                }
            });
        // Without the worker, `get` sees its jobs refused and shows icons.
        drop(spawned);
        Thumbnails {
            jobs,
            done,
            entries: HashMap::new(),
            wanted: HashSet::new(),
            to_draw: VecDeque::new(),
            renderer: None,
            cache_error: None,
            stats: ThumbnailStats::default(),
        }
    }

    /// `file`'s thumbnail when there is one (the last one made while a new one is
    /// on its way); asks for it otherwise. Files of other kinds have none.
    pub fn get(&mut self, file: &str) -> Option<&egui::TextureHandle> {
        ThumbnailKind::of(file)?;
        self.wanted.insert(file.to_owned());
        self.entries.get(file)?.texture.as_ref()
    }

    /// Why `file` has no thumbnail, if making one failed.
    pub fn error(&self, file: &str) -> Option<&str> {
        self.entries.get(file)?.error.as_deref()
    }

    /// Why thumbnails are not kept on disk, if they are not.
    pub fn cache_error(&self) -> Option<&str> {
        self.cache_error.as_deref()
    }

    /// How the thumbnails shown so far were made.
    pub fn stats(&self) -> ThumbnailStats {
        self.stats
    }

    /// The thumbnail `file` shows now, without asking for one.
    pub fn shown(&self, file: &str) -> Option<&egui::TextureHandle> {
        self.entries.get(file)?.texture.as_ref()
    }

    /// Whether any thumbnail asked for is still being made.
    pub fn busy(&self) -> bool {
        self.entries.values().any(|e| e.busy)
    }

    /// Takes the worker's results, asks for the thumbnails wanted this frame, and
    /// draws a few. Called once per frame, after the asset browser.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        editor: &Editor,
        render_state: Option<&egui_wgpu::RenderState>,
        assets: &mut AssetCache,
    ) {
        while let Ok(done) = self.done.try_recv() {
            self.take(ctx, done);
        }
        let stamp = (
            editor.preview_state().resources().generation,
            editor.preview_state().asset_versions().changes(),
        );
        let wanted = std::mem::take(&mut self.wanted);
        for file in wanted {
            let Some(kind) = ThumbnailKind::of(&file) else {
                continue;
            };
            let entry = self.entries.entry(file.clone()).or_default();
            if entry.busy || entry.stamp == Some(stamp) {
                continue;
            }
            entry.stamp = Some(stamp);
            let mut files = vec![file.clone()];
            if let Some(checker) = editor.files().checker() {
                files.extend(dependencies(checker, &file));
            }
            let job = Job::Prepare {
                file: file.clone(),
                kind,
                files,
                shown: entry.key,
            };
            entry.busy = self.jobs.send(job).is_ok();
        }
        self.draw_some(ctx, editor, render_state, assets);
    }

    fn take(&mut self, ctx: &egui::Context, done: Done) {
        match done {
            Done::Unchanged { file } => {
                if let Some(e) = self.entries.get_mut(&file) {
                    e.busy = false;
                }
            }
            Done::Ready {
                file,
                key,
                image,
                from_cache,
                not_kept,
            } => {
                if not_kept.is_some() {
                    self.cache_error = not_kept;
                }
                if from_cache {
                    self.stats.from_cache += 1;
                } else {
                    self.stats.decoded += 1;
                }
                self.show(ctx, &file, key, &image);
            }
            Done::Draw { file, key, settled } => self.to_draw.push_back((file, key, settled)),
            Done::Failed { file, error } => self.fail(&file, error),
            Done::NotCached(why) => self.cache_error = Some(why),
        }
    }

    /// No thumbnail for `file` (its icon shows), and why.
    fn fail(&mut self, file: &str, error: String) {
        let e = self.entries.entry(file.to_owned()).or_default();
        e.busy = false;
        e.texture = None;
        e.key = None;
        e.error = Some(error);
    }

    fn show(&mut self, ctx: &egui::Context, file: &str, key: u64, image: &Image) {
        let size = [image.width() as usize, image.height() as usize];
        let color = egui::ColorImage::from_rgba_unmultiplied(size, image.as_raw());
        let e = self.entries.entry(file.to_owned()).or_default();
        match &mut e.texture {
            Some(t) => t.set(color, egui::TextureOptions::LINEAR),
            None => {
                e.texture = Some(ctx.load_texture(
                    format!("thumbnail {file}"),
                    color,
                    egui::TextureOptions::LINEAR,
                ));
            }
        }
        e.key = Some(key);
        e.error = None;
        e.busy = false;
    }

    /// Draws queued thumbnails until the frame's budget is spent.
    fn draw_some(
        &mut self,
        ctx: &egui::Context,
        editor: &Editor,
        render_state: Option<&egui_wgpu::RenderState>,
        assets: &mut AssetCache,
    ) {
        if self.to_draw.is_empty() {
            return;
        }
        let Some(render_state) = render_state else {
            // No GPU: these rows keep their icons.
            for (file, _, _) in std::mem::take(&mut self.to_draw) {
                self.fail(&file, "no GPU to draw thumbnails with".into());
            }
            return;
        };
        let mut renderer = self.renderer.take().unwrap_or_else(|| {
            SceneRenderer::with_samples(
                &render_state.device,
                &render_state.queue,
                crate::render::gpu::samples_for(&render_state.adapter.get_info()),
            )
        });
        let start = Instant::now();
        let mut waiting = VecDeque::new();
        while start.elapsed() < DRAW_BUDGET
            && let Some((file, key, settled)) = self.to_draw.pop_front()
        {
            let Some(kind) = ThumbnailKind::of(&file) else {
                continue;
            };
            let Some(scene) = ThumbnailScene::of(kind, &file, editor.preview_state().resources())
            else {
                self.fail(&file, "it did not load; see Problems".into());
                continue;
            };
            match thumbnail::draw(
                &mut renderer,
                &scene,
                assets,
                editor.preview_state().asset_versions(),
            ) {
                Drawn::Image(image) => {
                    self.stats.drawn += 1;
                    let replaces = self.entries.get(&file).and_then(|e| e.key);
                    self.show(ctx, &file, key, &image);
                    let _ = self.jobs.send(Job::Store {
                        key,
                        image: settled.then_some(image),
                        replaces,
                    });
                }
                Drawn::Loading => waiting.push_back((file, key, settled)),
                Drawn::Failed(error) => self.fail(&file, error),
            }
        }
        // Models still loading are tried again when the loader wakes the UI.
        self.to_draw.extend(waiting);
        self.renderer = Some(renderer);
    }
}

/// Every file `file` draws from, through references (a material's texture; a
/// mesh's glTF, and the glTF's buffers and images), sorted.
fn dependencies(checker: &Checker, file: &str) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::from([file.to_owned()]);
    let mut queue = vec![file.to_owned()];
    while let Some(f) = queue.pop() {
        for r in checker.dependencies_of(&f) {
            if let Target::Resolved(t) = r.target
                && seen.insert(t.to_string())
            {
                queue.push(t.to_string());
            }
        }
    }
    seen.remove(file);
    let mut out: Vec<String> = seen.into_iter().collect();
    out.sort();
    out
}

/// The worker's side of a job, and what to tell the UI (nothing when a thumbnail
/// was stored).
fn work(project: &Project, job: Job) -> Option<Done> {
    match job {
        Job::Prepare {
            file,
            kind,
            files,
            shown,
        } => Some(prepare(project, file, kind, &files, shown)),
        Job::Store {
            key,
            image,
            replaces,
        } => match image {
            Some(image) => replace_cached(project.root(), key, &image, replaces)
                .err()
                .map(|e| Done::NotCached(format!("cannot write {THUMBNAIL_DIR}: {e}"))),
            None => {
                forget_cached(project.root(), replaces.filter(|r| *r != key));
                None
            }
        },
    }
}

fn prepare(
    project: &Project,
    file: String,
    kind: ThumbnailKind,
    files: &[String],
    shown: Option<u64>,
) -> Done {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&DRAWING_VERSION.to_le_bytes());
    hasher.update(format!("{kind:?}").as_bytes());
    let mut settled = true;
    let mut own = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let bytes = match read_asset(project, f) {
            Ok(b) => b,
            // The thumbnail's own file is needed; a missing dependency is drawn as
            // missing (a placeholder texture), like the viewport does.
            Err(error) if i == 0 => return Done::Failed { file, error },
            Err(_) => Vec::new(),
        };
        settled &= is_settled(project.root(), f);
        hasher.update(f.as_bytes());
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        if i == 0 {
            own = bytes;
        }
    }
    let key = hasher.digest();
    if shown == Some(key) {
        return Done::Unchanged { file };
    }
    if let Some(image) = load_cached(project.root(), key) {
        return Done::Ready {
            file,
            key,
            image,
            from_cache: true,
            not_kept: None,
        };
    }
    if kind.is_drawn() {
        return Done::Draw { file, key, settled };
    }
    match thumbnail::texture_thumbnail(&own) {
        Ok(image) => {
            // Decoded thumbnails are from the bytes hashed: always right to keep.
            let not_kept = replace_cached(project.root(), key, &image, shown)
                .err()
                .map(|e| format!("cannot write {THUMBNAIL_DIR}: {e}"));
            Done::Ready {
                file,
                key,
                image,
                from_cache: false,
                not_kept,
            }
        }
        Err(e) => Done::Failed {
            file: file.clone(),
            error: format!("{file}: {e}"),
        },
    }
}

/// Whether the project file `rel` was last changed long enough ago (a time in the
/// future is not).
fn is_settled(root: &Path, rel: &str) -> bool {
    kiln_core::fs::kind_below(root, rel)
        .map(|(_, st)| SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(st.mtime_ns))
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age >= SETTLED)
}

/// The cache file of a hash, relative to the project root.
fn cache_file(key: u64) -> PathBuf {
    Path::new(THUMBNAIL_DIR).join(format!("{key:016x}.png"))
}

fn load_cached(root: &Path, key: u64) -> Option<Image> {
    // Never through a link in `.kiln/`; at most a few hundred kilobytes.
    let bytes = kiln_core::read_below(root, &cache_file(key), 4 << 20).ok()?;
    let mut reader =
        image::ImageReader::with_format(std::io::Cursor::new(bytes), image::ImageFormat::Png);
    // A crafted file could declare a huge picture in a few bytes: only a
    // thumbnail's size is decoded, anything else is a miss and is made again.
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(thumbnail::THUMBNAIL_SIZE);
    limits.max_image_height = Some(thumbnail::THUMBNAIL_SIZE);
    reader.limits(limits);
    let image = reader.decode().ok()?.to_rgba8();
    (image.dimensions() == (thumbnail::THUMBNAIL_SIZE, thumbnail::THUMBNAIL_SIZE)).then_some(image)
}

/// Keeps `image` as the thumbnail of `key`, in place of the one of `old`: that one
/// is of content the file no longer has. (Another file with the old content would
/// make it again.)
fn replace_cached(root: &Path, key: u64, image: &Image, old: Option<u64>) -> std::io::Result<()> {
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(std::io::Error::other)?;
    kiln_core::write_below(root, &cache_file(key), &png)?;
    forget_cached(root, old.filter(|o| *o != key));
    Ok(())
}

/// Removes the kept picture of `key`, if any.
fn forget_cached(root: &Path, key: Option<u64>) {
    let Some(key) = key else { return };
    // Only through real folders (`.kiln` or its `thumbnails` could be links planted
    // to make Kiln delete files elsewhere); a file that is itself a link goes as
    // the link, not its target.
    let _ = kiln_core::fs::remove_below(root, &cache_file(key), false);
}
