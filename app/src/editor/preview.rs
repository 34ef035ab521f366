//! The live preview: the runtime world spawned from the compiled level. The editor
//! keeps no second scene model: what the viewport shows is this world.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln_core::{
    CompileError, CompileOptions, EntityManager, LevelDocument, PatchedInstances, Project,
    Registry, ResourcePath, ResourceSource, SpawnedLevel, World, compile_document_with,
    spawn_level,
};

pub use crate::render::resources::Resources;

/// Why the level is not previewed as it stands. Kept structured to the Problems
/// list, which says where (file, line and column; entity, component and field) and
/// jumps there on a double-click.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreviewError {
    /// The level (or a prefab it places) did not parse or compile.
    Compile(CompileError),
    /// The compiled level could not be spawned (a plugin refused it).
    Spawn(String),
}

impl std::fmt::Display for PreviewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PreviewError::Compile(e) => e.fmt(f),
            PreviewError::Spawn(e) => f.write_str(e),
        }
    }
}

impl From<CompileError> for PreviewError {
    fn from(e: CompileError) -> Self {
        PreviewError::Compile(e)
    }
}

impl From<kiln_core::level::SyntaxError> for PreviewError {
    fn from(e: kiln_core::level::SyntaxError) -> Self {
        PreviewError::Compile(CompileError::Syntax(e))
    }
}

/// Where a [`PreviewError`] is, as far as it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorPlace<'a> {
    /// An entity (a prefab's part as `instance/part`), with the component and the
    /// field when the error names them.
    Entity {
        /// Its authoring id.
        entity: &'a str,
        /// The component, if named.
        component: Option<&'a str>,
        /// The field, if named.
        field: Option<&'a str>,
    },
    /// A place in a file's text (1-based line and column).
    Text {
        /// The project file.
        file: &'a str,
        /// Its line.
        line: usize,
        /// Its column.
        column: usize,
    },
    /// A file as a whole.
    File(&'a str),
}

impl PreviewError {
    /// Where the error is: an entity to select, a place in a file, or a file.
    pub fn place(&self) -> Option<ErrorPlace<'_>> {
        let PreviewError::Compile(e) = self else {
            return None;
        };
        Some(match e {
            CompileError::Syntax(s) => ErrorPlace::Text {
                file: &s.file,
                line: s.line,
                column: s.column,
            },
            CompileError::Field {
                entity,
                component,
                field,
                ..
            } => ErrorPlace::Entity {
                entity,
                component: Some(component),
                field: Some(field),
            },
            CompileError::Component {
                entity, component, ..
            } => ErrorPlace::Entity {
                entity,
                component: Some(component),
                field: None,
            },
            CompileError::Entity { entity, .. }
            | CompileError::UnknownOverride { entity, .. }
            | CompileError::MissingPrefab { entity, .. } => ErrorPlace::Entity {
                entity,
                component: None,
                field: None,
            },
            CompileError::PrefabCycle { .. } | CompileError::Limit { .. } => {
                ErrorPlace::File(e.file())
            }
        })
    }
}

/// Reads prefabs for the compiler from the open project.
#[derive(Debug)]
pub struct ProjectUnits<'a>(pub &'a Project);

impl ResourceSource for ProjectUnits<'_> {
    fn read_text(&mut self, path: &ResourcePath, ext: &str) -> Result<String, String> {
        self.0.read_resource(path, ext).map_err(|e| e.to_string())
    }
}

/// Timings of the last rebuild, for the status bar.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RebuildTiming {
    /// Milliseconds compiling the document.
    pub compile_ms: f64,
    /// Milliseconds despawning the old world and spawning the new one, or
    /// writing the changed instances into it.
    pub spawn_ms: f64,
    /// The changed instances were written into the running world (no spawn).
    pub in_place: bool,
    /// Only the entities a structural change touched were spawned again (and
    /// the old ones destroyed): the others kept their ids and state (see
    /// [`SpawnedLevel::respawn_changed`]). `None`: the level was spawned whole,
    /// or patched in place.
    pub respawned: Option<PartialSpawn>,
}

/// How many entities a build spawned again, and how many it destroyed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartialSpawn {
    /// Entities spawned (added ones, and changed ones spawned again).
    pub spawned: usize,
    /// Entities of the old level destroyed (removed ones, and changed ones).
    pub destroyed: usize,
}

impl RebuildTiming {
    /// A rebuild whose world step started at `start`, after `compile_ms`.
    fn since(
        start: Instant,
        compile_ms: f64,
        in_place: bool,
        respawned: Option<PartialSpawn>,
    ) -> Self {
        RebuildTiming {
            compile_ms,
            spawn_ms: start.elapsed().as_secs_f64() * 1000.0,
            in_place,
            respawned,
        }
    }
}

/// The runtime world of the open level.
#[derive(Debug, Default)]
pub struct Preview {
    /// Entity ids of the preview world (shared with the play thread during a step;
    /// the preview's own again between steps).
    pub entities: Arc<EntityManager>,
    /// The world the viewport draws.
    pub world: World,
    /// The spawned level (authoring id <-> runtime entity).
    pub level: Option<SpawnedLevel>,
    /// The last blob that compiled, for restarts.
    pub blob: Option<Vec<u8>>,
    /// Simulation running.
    pub playing: bool,
    /// Seconds simulated since the last spawn.
    pub time: f64,
    /// Last rebuild's timing.
    pub timing: RebuildTiming,
    /// How many worlds were spawned (each spawn's drawing starts afresh).
    pub spawns: u64,
    /// How many saves were written into the running world in place.
    pub patches: u64,
    /// How many builds spawned again only the entities they changed.
    pub partial_spawns: u64,
    /// The thread Play's steps run on, started by the first step.
    simulation: Option<crate::editor::simulation::SimulationThread>,
}

/// Whether `new` is `old` with only the instances `patches` name written over.
fn differs_only_in(old: &[u8], new: &[u8], patches: &[PatchedInstances]) -> bool {
    if old.len() != new.len() {
        return false;
    }
    let mut ranges: Vec<std::ops::Range<usize>> = patches
        .iter()
        .flat_map(|p| p.ranges.iter().cloned())
        .collect();
    ranges.sort_by_key(|r| r.start);
    let mut at = 0;
    for r in ranges {
        if r.start < at || r.end > old.len() || old[at..r.start] != new[at..r.start] {
            return false;
        }
        at = r.end;
    }
    old[at..] == new[at..]
}

/// How the preview compiles: a component whose type is not loaded (a plugin that
/// failed or is still building) is left out and reported, and the rest is drawn.
pub const PREVIEW_COMPILE: CompileOptions = CompileOptions {
    skip_unknown_components: true,
};

/// A level compiled for the preview.
#[derive(Debug, Clone)]
pub struct PreviewBuild {
    /// The blob.
    pub blob: Vec<u8>,
    /// How long the compile took, in milliseconds.
    pub compile_ms: f64,
    /// Components left out because their type is not loaded.
    pub left_out: Vec<CompileError>,
}

/// Compiles `doc` (the level `file`) for the preview.
pub fn compile_for_preview(
    registry: &Registry,
    project: &Project,
    file: &str,
    doc: &LevelDocument,
) -> Result<PreviewBuild, PreviewError> {
    let start = Instant::now();
    let compiled = compile_document_with(
        registry,
        &mut ProjectUnits(project),
        file,
        doc,
        PREVIEW_COMPILE,
    )?;
    Ok(PreviewBuild {
        blob: compiled.blob,
        compile_ms: start.elapsed().as_secs_f64() * 1000.0,
        left_out: compiled.left_out,
    })
}

impl Preview {
    /// Compiles `doc` and respawns it; returns the components it left out. On
    /// error the last good world stays.
    pub fn rebuild(
        &mut self,
        registry: &Registry,
        project: &Project,
        file: &str,
        doc: &LevelDocument,
    ) -> Result<Vec<CompileError>, PreviewError> {
        let build = compile_for_preview(registry, project, file, doc)?;
        (self.install(registry, build.blob, build.compile_ms)).map_err(PreviewError::Spawn)?;
        Ok(build.left_out)
    }

    /// Spawns a level compiled elsewhere (a large level opened on a worker thread),
    /// `compile_ms` being how long its compile took.
    ///
    /// Where a level is running, only the entities that differ from it are
    /// spawned again (an entity added, removed, moved under another parent):
    /// the rest keep their ids and what the simulation did to them.
    pub fn install(
        &mut self,
        registry: &Registry,
        blob: Vec<u8>,
        compile_ms: f64,
    ) -> Result<(), String> {
        let start = Instant::now();
        let respawned = self.spawn_changed(registry, &blob);
        if respawned.is_some() {
            self.blob = Some(blob);
            self.partial_spawns += 1;
        } else {
            self.respawn(registry, blob)?;
        }
        self.timing = RebuildTiming::since(start, compile_ms, false, respawned);
        Ok(())
    }

    /// Spawns again the entities of the running level that `blob` changes;
    /// `None` where the level is to be spawned whole (nothing runs, most of it
    /// changed, or spawning failed, which left none of it in the world).
    fn spawn_changed(&mut self, registry: &Registry, blob: &[u8]) -> Option<PartialSpawn> {
        let (Some(level), Some(old)) = (&self.level, &self.blob) else {
            return None;
        };
        match level.respawn_changed(
            (old, blob),
            registry,
            Arc::make_mut(&mut self.entities),
            &mut self.world,
        ) {
            Ok(Some(done)) => {
                self.level = Some(done.level);
                Some(PartialSpawn {
                    spawned: done.spawned,
                    destroyed: done.destroyed,
                })
            }
            Ok(None) => None,
            Err(_) => {
                // Its entities are destroyed already; the whole spawn says why.
                self.level = None;
                None
            }
        }
    }

    /// Writes the instances an outside save changed into the running world (see
    /// [`SpawnedLevel::patch`]): the simulation goes on, and every other entity
    /// keeps its state and its id. `blob` is the level's new blob; it is spawned
    /// whole where the world was not spawned from a blob that differs from it in
    /// those instances only. Returns whether the world was patched in place.
    pub fn install_patch(
        &mut self,
        registry: &Registry,
        blob: Vec<u8>,
        patches: &[PatchedInstances],
        compile_ms: f64,
    ) -> Result<bool, String> {
        let start = Instant::now();
        let in_place = match (&self.level, &self.blob) {
            (Some(level), Some(old)) if differs_only_in(old, &blob, patches) => level
                .patch(
                    &blob,
                    patches,
                    registry,
                    Arc::make_mut(&mut self.entities),
                    &mut self.world,
                )
                .is_ok(),
            _ => false,
        };
        if in_place {
            self.blob = Some(blob);
            self.patches += 1;
        } else {
            // Spawned whole: also where a patch stopped halfway.
            self.respawn(registry, blob)?;
        }
        self.timing = RebuildTiming::since(start, compile_ms, in_place, None);
        Ok(in_place)
    }

    /// Writes `rewrites` (instances and their new bytes, laid out as the blob
    /// spawned) over the blob in place and into the running world: the editor's
    /// own field edits, which change those instances and nothing else, so the
    /// blob is neither copied nor compared (a drag frame of a 100,000-entity level
    /// would copy and compare 11 MB). Respawns where the patch fails.
    pub fn rewrite(
        &mut self,
        registry: &Registry,
        rewrites: Vec<(PatchedInstances, Vec<Vec<u8>>)>,
        compile_ms: f64,
    ) -> Result<(), String> {
        let start = Instant::now();
        let (Some(level), Some(blob)) = (&self.level, &mut self.blob) else {
            return Err("nothing is spawned".into());
        };
        let mut patches = Vec::with_capacity(rewrites.len());
        for (patch, bytes) in rewrites {
            for (range, bytes) in patch.ranges.iter().zip(bytes) {
                match blob.get_mut(range.clone()) {
                    Some(at) if at.len() == bytes.len() => at.copy_from_slice(&bytes),
                    _ => return Err("an instance is not where the layout says".into()),
                }
            }
            patches.push(patch);
        }
        let patched = level.patch(
            blob,
            &patches,
            registry,
            Arc::make_mut(&mut self.entities),
            &mut self.world,
        );
        let in_place = patched.is_ok();
        if in_place {
            self.patches += 1;
        } else if let Some(blob) = self.blob.take() {
            self.respawn(registry, blob)?;
        }
        self.timing = RebuildTiming::since(start, compile_ms, in_place, None);
        Ok(())
    }

    /// Changes whenever entities of the world may have been replaced (spawned
    /// whole, or in part): what is keyed by runtime entities is found again.
    pub fn entities_revision(&self) -> u64 {
        self.spawns + self.partial_spawns
    }

    /// How many times the world changed from a build: spawned, patched in
    /// place, or spawned again in part.
    pub fn world_revision(&self) -> u64 {
        self.spawns + self.patches + self.partial_spawns
    }

    fn respawn(&mut self, registry: &Registry, blob: Vec<u8>) -> Result<(), String> {
        // The old world is gone before the new one spawns: its entities die in the
        // entity manager first, so that no id of theirs names a new entity.
        let last_good = self.blob.take();
        let result = self.spawn(registry, blob);
        if result.is_ok() {
            self.time = 0.0;
        } else if let Some(old) = last_good {
            // The last good world stays on screen.
            let _ = self.spawn(registry, old);
        }
        result
    }

    /// Replaces the world with `blob`'s; an empty world if it does not spawn.
    fn spawn(&mut self, registry: &Registry, blob: Vec<u8>) -> Result<(), String> {
        self.clear();
        match spawn_level(
            &blob,
            registry,
            Arc::make_mut(&mut self.entities),
            &mut self.world,
        ) {
            Ok(level) => {
                self.level = Some(level);
                self.blob = Some(blob);
                Ok(())
            }
            Err(e) => {
                self.clear();
                Err(e.to_string())
            }
        }
    }

    /// Despawns everything (the world is dropped); the last blob is kept.
    ///
    /// The entity manager lives as long as the preview: the level's entities are
    /// destroyed in it (their generations move on), so that every handle to them,
    /// one a plugin kept past its `gc` included, reads as dead from now on and no
    /// later entity answers to it (seed part 1, and ECR's notes on ids). A fresh
    /// manager per spawn started every generation at 0 again: after a respawn, a
    /// kept handle named whichever new entity had its index.
    pub fn clear(&mut self) {
        self.spawns += 1;
        if let Some(level) = self.level.take() {
            self.world
                .despawn(Arc::make_mut(&mut self.entities), &level);
        }
        self.world = World::new();
    }

    /// Forgets the level (another is opened, or none): the world is emptied and the
    /// simulation stopped. The entity manager and the revision counts go on: a
    /// handle kept from this level stays dead, and what was drawn of it is never
    /// taken for the next level's (a fresh preview counted from zero again, and the
    /// viewport kept drawing the level before).
    pub fn reset(&mut self) {
        self.clear();
        *self = Preview {
            entities: std::mem::take(&mut self.entities),
            spawns: self.spawns,
            patches: self.patches,
            partial_spawns: self.partial_spawns,
            simulation: self.simulation.take(),
            ..Preview::default()
        };
    }

    /// Respawns the last good blob (the simulation starts over).
    pub fn restart(&mut self, registry: &Registry) -> Result<(), String> {
        let Some(blob) = self.blob.take() else {
            return Ok(());
        };
        let start = Instant::now();
        let result = self.respawn(registry, blob.clone());
        if result.is_err() {
            self.blob = Some(blob);
        }
        self.timing.spawn_ms = start.elapsed().as_secs_f64() * 1000.0;
        self.timing.in_place = false;
        self.timing.respawned = None;
        result
    }

    /// Advances the simulation by `dt` seconds: the plugins' `update` through
    /// `updaters`, then every component's `simulate`, on the play thread, waiting
    /// at most `budget`. A step over it stops the plugin that did not return, gives
    /// up the world with the thread, and spawns the level again, paused: the error
    /// says which plugin and what happened.
    pub fn step(
        &mut self,
        dt: f32,
        updaters: Vec<kiln_plugin_host::PluginUpdater>,
        budget: Duration,
        registry: &Registry,
    ) -> Result<(), String> {
        use crate::editor::simulation::{SimulationThread, StepEnd};
        if self.simulation.is_none() {
            // Without a thread of its own, the step runs here, unwatched.
            self.simulation = SimulationThread::start().ok();
        }
        let Some(thread) = &self.simulation else {
            for updater in &updaters {
                updater.update(dt);
            }
            self.world.simulate(dt, &self.entities);
            self.time += dt as f64;
            return Ok(());
        };
        let world = std::mem::take(&mut self.world);
        match thread.step(world, Arc::clone(&self.entities), updaters, dt, budget) {
            StepEnd::Done(world) => {
                self.world = world;
                self.time += dt as f64;
                Ok(())
            }
            StepEnd::NotRun(world, why) => {
                self.world = world;
                self.simulation = None;
                Err(format!("Play paused: {why}"))
            }
            StepEnd::Hung(stopped) => {
                self.simulation = None;
                self.playing = false;
                // The world is gone with the thread: its entities die here, so that
                // none of their ids names an entity of the world spawned next.
                if let Some(level) = self.level.take() {
                    Arc::make_mut(&mut self.entities).destroy_many(&level.entities);
                }
                self.world = World::new();
                let what = match &stopped {
                    Some(call) => format!(
                        "{call}; the plugin is stopped (not called again until Simulation > Rebuild and reload plugins loads a fresh copy)"
                    ),
                    None => "the step did not finish".to_owned(),
                };
                let respawned = match self.restart(registry) {
                    Ok(()) if stopped.is_some() => {
                        "the level was spawned again without it".to_owned()
                    }
                    Ok(()) => "the level was spawned again".to_owned(),
                    Err(e) => format!("the level could not be spawned again: {e}"),
                };
                Err(format!(
                    "Play paused: a frame ran past the frame budget of {:.1} s: {what}; {respawned}",
                    budget.as_secs_f32()
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    /// A level of `count` entities with transforms, compiled.
    fn blob(registry: &Registry, count: usize) -> Vec<u8> {
        let entities: Vec<String> = (0..count)
            .map(|k| format!(r#"{{"id": "e{k}", "components": {{"transform": {{"position": [{k}, 0, 0]}}}}}}"#))
            .collect();
        let text = format!(r#"{{"entities": [{}]}}"#, entities.join(", "));
        kiln_core::compile_level(
            registry,
            &mut std::collections::HashMap::new(),
            "levels/l.level",
            &text,
        )
        .unwrap()
        .blob
    }

    /// What happens to the preview.
    #[derive(Debug, Clone)]
    enum Step {
        /// A level of this many entities is installed (an edit, a reload from
        /// disk): the entities it shares with the running one stay.
        Spawn(usize),
        /// The simulation starts over from the last blob.
        Restart,
        /// One entity of the level dies (a delete, before the respawn it leads to).
        Delete(usize),
        /// Everything is despawned (a plugin reload clears the preview first).
        Clear,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0usize..40).prop_map(Step::Spawn),
            Just(Step::Restart),
            (0usize..40).prop_map(Step::Delete),
            Just(Step::Clear),
        ]
    }

    proptest! {
        /// After any sequence of spawns, restarts, deletes and clears, no entity
        /// id destroyed earlier is alive again: a handle a plugin kept never
        /// names a new entity. Before, each spawn started a new entity manager,
        /// and the first entity of every respawn had the id of the last one's.
        #[test]
        fn no_destroyed_entity_comes_back_to_life(steps in proptest::collection::vec(step(), 1..30)) {
            let registry = Registry::with_builtins();
            let mut preview = Preview::default();
            // Every id the steps so far destroyed.
            let mut dead: Vec<kiln_core::Entity> = Vec::new();
            for step in steps {
                let level: Vec<kiln_core::Entity> = preview
                    .level
                    .as_ref()
                    .map(|l| l.entities.clone())
                    .unwrap_or_default();
                match step {
                    Step::Spawn(n) => {
                        preview.install(&registry, blob(&registry, n), 0.0).unwrap();
                        // The entities a change did not touch live on.
                        let now = &preview.level.as_ref().unwrap().entities;
                        dead.extend(level.iter().filter(|e| !now.contains(e)));
                    }
                    Step::Restart => {
                        if preview.blob.is_some() {
                            dead.extend(&level);
                        }
                        preview.restart(&registry).unwrap();
                    }
                    Step::Delete(k) => {
                        if let Some(&e) = level.get(k)
                            && preview.world.destroy(std::sync::Arc::make_mut(&mut preview.entities), e)
                        {
                            dead.push(e);
                        }
                    }
                    Step::Clear => {
                        dead.extend(&level);
                        preview.clear();
                    }
                }
                for old in &dead {
                    prop_assert!(!preview.entities.alive(*old), "{old:?} came back after {step:?}");
                }
                // And the level installed holds only living entities, one
                // destroyed under it included (spawned again).
                if let (Step::Spawn(_), Some(level)) = (&step, &preview.level) {
                    for e in &level.entities {
                        prop_assert!(preview.entities.alive(*e), "{e:?} is dead after {step:?}");
                    }
                }
            }
        }
    }
}
