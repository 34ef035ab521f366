//! The preview as the editor keeps it: the runtime world spawned from the open
//! level, what the viewport draws (meshes, materials, the versions of files drawn
//! from disk), why the last compile failed, and where the blob's instances are
//! while only fields change (`field_edits.rs`).

use kiln_core::incremental::DocumentLayout;

use super::open_level::OpenLevel;
use super::outbox::Outbox;
use super::plugins::EditorPlugins;
use super::project_files::ProjectFiles;
use crate::editor::actions::UiCommand;
use crate::editor::preview::{Preview, PreviewBuild, PreviewError, Resources};
use crate::render::assets::AssetVersions;

/// The preview's state.
#[derive(Default)]
pub struct PreviewState {
    /// The runtime world spawned from the level.
    pub(super) runtime: Preview,
    pub(super) resources: Resources,
    /// How often each drawn file (texture, model) changed on disk while open.
    pub(super) asset_versions: AssetVersions,
    /// Why the last compile failed (the preview shows the last good world).
    pub(super) compile_error: Option<PreviewError>,
    /// Components the preview left out: their type is not loaded (a plugin that
    /// failed or is being built).
    pub(super) left_out: Vec<kiln_core::CompileError>,
    /// Where the preview blob's instances of the document's entities are, while
    /// only fields change (see `field_edits.rs`); dropped whenever the document is
    /// compiled whole.
    pub(super) doc_layout: Option<DocumentLayout>,
    /// The most one step of Play may take before the plugin running is stopped.
    pub(super) frame_budget: Option<std::time::Duration>,
}

impl std::fmt::Debug for PreviewState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviewState").finish_non_exhaustive()
    }
}

impl PreviewState {
    /// The runtime world spawned from the level.
    pub fn runtime(&self) -> &Preview {
        &self.runtime
    }
    /// How often each texture and model file changed on disk while open (the
    /// viewport reads a file again when its version moves on).
    pub fn asset_versions(&self) -> &AssetVersions {
        &self.asset_versions
    }
    /// The meshes and materials the viewport draws.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }
    /// Why the last compile failed (the preview shows the last good world).
    pub fn compile_error(&self) -> Option<&PreviewError> {
        self.compile_error.as_ref()
    }
    /// Components the preview left out because their type is not loaded (each
    /// names the file, entity, component and the plugin it comes from, if known).
    pub fn left_out(&self) -> &[kiln_core::CompileError] {
        &self.left_out
    }
    /// The world pose of an entity in the preview world, if it has a transform there.
    pub fn world_pose(&self, id: &str) -> Option<glam::Affine3A> {
        let e = self.runtime.level.as_ref()?.entity(id)?;
        let t = self.runtime.world.transforms.lookup(e)?;
        Some(self.runtime.world.transforms.world(t))
    }
    /// The world pose of an entity's parent in the preview world (for a part, the
    /// part's parent inside its instance).
    pub fn parent_world_pose(&self, id: &str) -> Option<glam::Affine3A> {
        let e = self.runtime.level.as_ref()?.entity(id)?;
        let transforms = &self.runtime.world.transforms;
        let parent = transforms.parent(transforms.lookup(e)?)?;
        Some(transforms.world(parent))
    }
    /// The preview's entities drawn as selected: the `selection` and everything
    /// below them in the scene graph (a prefab instance's parts, a group's children).
    pub fn drawn_selected(
        &self,
        selection: &[String],
    ) -> std::collections::HashSet<kiln_core::Entity> {
        let level = self.runtime.level.as_ref();
        let transforms = &self.runtime.world.transforms;
        let mut set: std::collections::HashSet<kiln_core::Entity> = selection
            .iter()
            .filter_map(|id| level?.entity(id))
            .collect();
        let mut stack: Vec<_> = set.iter().filter_map(|e| transforms.lookup(*e)).collect();
        while let Some(t) = stack.pop() {
            for child in transforms.children(t) {
                if set.insert(transforms.entity(child)) {
                    stack.push(child);
                }
            }
        }
        set
    }

    /// Brings the level and the preview to `level`'s document after an edit:
    /// the tree and what else is built from the document alone, then the world,
    /// compiled and spawned (or `compiled`, the blob made already on the worker
    /// that opened the level, and its compile time, or why it failed).
    pub(super) fn follow_document(
        &mut self,
        level: &mut OpenLevel,
        files: &ProjectFiles,
        outbox: &mut Outbox,
        compiled: Option<Result<PreviewBuild, PreviewError>>,
    ) {
        self.doc_layout = None;
        level.rebuild(&files.project);
        let playing = self.runtime.playing;
        let result = match compiled {
            Some(Ok(build)) => self
                .runtime
                .install(&files.registry, build.blob, build.compile_ms)
                .map(|()| build.left_out)
                .map_err(PreviewError::Spawn),
            Some(Err(e)) => Err(e),
            None => self
                .runtime
                .rebuild(&files.registry, &files.project, &level.file, &level.doc),
        };
        match result {
            Ok(left_out) => {
                self.compile_error = None;
                self.left_out = left_out;
            }
            Err(e) => {
                if self.compile_error.as_ref() != Some(&e) {
                    outbox.error(e.to_string());
                }
                self.compile_error = Some(e);
            }
        }
        self.runtime.playing = playing;
    }

    /// One step of the simulation, as `kiln play` runs it: each plugin's
    /// `update`, then every component's `simulate`.
    pub(super) fn step_simulation(
        &mut self,
        dt: f32,
        plugins: &EditorPlugins,
        registry: &kiln_core::Registry,
        outbox: &mut Outbox,
    ) {
        let updaters = plugins.loaded().iter().map(|p| p.updater()).collect();
        let budget = (self.frame_budget).unwrap_or(crate::editor::simulation::DEFAULT_FRAME_BUDGET);
        if let Err(e) = self.runtime.step(dt, updaters, budget, registry) {
            outbox.error(e);
        }
    }

    /// The simulation's and the view's commands: play or pause, one step,
    /// restart, the top view.
    pub(super) fn run(
        &mut self,
        command: UiCommand,
        registry: &kiln_core::Registry,
        plugins: &EditorPlugins,
        outbox: &mut Outbox,
    ) {
        match command {
            UiCommand::PlayPause => self.runtime.playing = !self.runtime.playing,
            UiCommand::Step => self.step_simulation(1.0 / 60.0, plugins, registry, outbox),
            UiCommand::Restart => {
                if let Err(e) = self.runtime.restart(registry) {
                    outbox.error(e);
                }
            }
            _ => {}
        }
    }

    /// Forgets the world and what was said of it (the level closed).
    pub(super) fn close(&mut self) {
        self.runtime.reset();
        self.compile_error = None;
        self.left_out.clear();
        self.doc_layout = None;
    }

    /// Reloads meshes and materials for drawing from the files the index knows;
    /// a file that just broke is said at once, and its last good look stays drawn.
    pub(super) fn reload_resources(&mut self, files: &ProjectFiles, outbox: &mut Outbox) {
        let Some(checker) = &files.checker else {
            return;
        };
        let paths: Vec<String> = checker
            .index()
            .files()
            .map(|f| f.path.to_string())
            .collect();
        let loaded = Resources::load(
            &files.project,
            &files.registry,
            paths.into_iter(),
            &self.resources,
        );
        let newly: Vec<String> = loaded
            .errors
            .iter()
            .filter(|(file, e)| self.resources.errors.get(*file) != Some(*e))
            .map(|(_, e)| e.clone())
            .collect();
        self.resources = loaded;
        for e in newly {
            outbox.error(format!("{e} (its last good version is still drawn)"));
        }
    }
}
