//! The entity spawner (seed part 4): creates all of a level's entities in one batch,
//! then each component type in spawn order, each as one bulk call.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::blob::{BlobError, LevelBlob};
use crate::entity::{Entity, EntityManager};
use crate::registry::Registry;
use crate::registry::{ComponentBatch, ReadsTransform, SpawnContext};
use crate::world::World;

mod respawn;
pub use respawn::Respawned;

/// Why a level could not be spawned. Nothing of it is left in the world.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    /// The blob failed validation.
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// A component type's spawn function refused its instances (a plugin's
    /// `create` that failed or panicked, or data a built-in type cannot read).
    #[error("component type \"{component}\" could not spawn its instances: {message}")]
    Component {
        /// The component type.
        component: String,
        /// What its spawn function reported.
        message: String,
    },
}

/// A level living in a world: its runtime entities and their authoring ids.
#[derive(Debug, Clone, Default)]
pub struct SpawnedLevel {
    /// Runtime entity of each level entity, in blob order (parents first).
    pub entities: Vec<Entity>,
    /// Authoring ids, concatenated (one buffer instead of one allocation per id).
    id_text: String,
    /// End of each id in `id_text`; empty if the blob had no id table.
    id_ends: Vec<u32>,
    /// Things skipped while spawning, such as component types this runtime does
    /// not know.
    pub warnings: Vec<String>,
    /// Authoring id -> position, built on the first lookup by id: a spawn that is
    /// never asked pays nothing, an editor asking every frame pays once.
    index: std::sync::OnceLock<crate::id_index::IdIndex>,
}

impl SpawnedLevel {
    /// The runtime entity of the level entity with authoring id `id`.
    pub fn entity(&self, id: &str) -> Option<Entity> {
        self.entities.get(self.index_of(id)?).copied()
    }

    /// Authoring id of the `k`-th level entity.
    pub fn id(&self, k: usize) -> Option<&str> {
        let end = *self.id_ends.get(k)? as usize;
        let start = if k == 0 {
            0
        } else {
            self.id_ends[k - 1] as usize
        };
        self.id_text.get(start..end)
    }

    /// Authoring ids in blob order (parents first).
    pub fn ids(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.id_ends.len()).filter_map(|k| self.id(k))
    }

    /// The authoring id of runtime entity `entity`, if it belongs to this level.
    pub fn authoring_id(&self, entity: Entity) -> Option<&str> {
        self.entities
            .iter()
            .position(|&e| e == entity)
            .and_then(|k| self.id(k))
    }

    /// Authoring id -> runtime entity, for every entity.
    pub fn id_map(&self) -> std::collections::HashMap<&str, Entity> {
        self.ids().zip(self.entities.iter().copied()).collect()
    }
}

/// One level entity's instances of one component type, compiled again into a
/// blob laid out as the one spawned (see [`crate::incremental`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchedInstances {
    /// The entity's index in the blob (parents first).
    pub entity: u32,
    /// The component type's identifier.
    pub component_identifier: u32,
    /// Where each of its instances is in the blob, in order.
    pub ranges: Vec<std::ops::Range<usize>>,
}

impl SpawnedLevel {
    /// What this level's entities hold in `world`, one line per entity, sorted by
    /// authoring id: the built-in components' values, the scene graph's parent
    /// and the world pose (a plugin's instances live in the plugin and are not
    /// seen). Two worlds with the same lines show and simulate the same level:
    /// how a world patched in place is checked against a fresh spawn.
    pub fn state_in(&self, world: &World) -> Vec<String> {
        let tm = &world.transforms;
        let id_of = |e| self.authoring_id(e).unwrap_or("?").to_owned();
        let mut out: Vec<String> = self
            .ids()
            .zip(&self.entities)
            .map(|(id, &e)| {
                let transform = tm.lookup(e).map(|i| {
                    let parent = tm.parent(i).map(|p| id_of(tm.entity(p)));
                    (tm.local(i), tm.world(i), parent)
                });
                let meshes: Vec<_> = (world.meshes.instances_of(e))
                    .map(|i| world.meshes.get(i))
                    .collect();
                let rotator = world.rotators.lookup(e).map(|i| world.rotators.get(i));
                let oscillator = (world.oscillators.lookup(e)).map(|i| world.oscillators.get(i));
                let mass = world.point_masses.lookup(e).map(|i| {
                    let p = &world.point_masses;
                    (p.mass(i), p.position(i), p.velocity(i), p.acceleration(i))
                });
                format!(
                    "{id}: {transform:?} {meshes:?} {:?} {rotator:?} {oscillator:?} {mass:?}",
                    world.debug_names.debug_name(e)
                )
            })
            .collect();
        out.sort();
        out
    }

    /// Writes `patches` into the running world: each entity's instances of each
    /// type are written over (see [`crate::registry::ComponentType::rewrite`]), in spawn
    /// order, and so are the instances that read a transform that changed (see
    /// [`crate::registry::ReadsTransform`]); every other entity and instance, and
    /// the state the simulation gave them, stays. `blob` is the level's new blob, with the same entities and
    /// layout as the one this level was spawned from.
    ///
    /// On an error the world may be partly patched: respawn it from `blob`.
    pub fn patch(
        &self,
        blob: &[u8],
        patches: &[PatchedInstances],
        registry: &Registry,
        entities: &mut EntityManager,
        world: &mut World,
    ) -> Result<(), SpawnError> {
        let parsed = LevelBlob::parse(blob)?;
        if parsed.num_entities() != self.entities.len() {
            return Err(BlobError::Corrupt("not the spawned level's layout".into()).into());
        }
        // (type's place in spawn order, entity) -> its instances in the blob.
        let mut writes: BTreeMap<(usize, u32), Vec<Range<usize>>> = BTreeMap::new();
        for patch in patches {
            let Some(ty) = registry.component_by_id(patch.component_identifier) else {
                continue;
            };
            if let Some(t) = registry.component_index(&ty.name) {
                writes.insert((t, patch.entity), patch.ranges.clone());
            }
        }
        // What read a transform that changed is spawned again from the blob.
        let transform = registry.component("transform").map(|t| t.id);
        for patch in patches {
            if Some(patch.component_identifier) != transform {
                continue;
            }
            for section in &parsed.components {
                let Some(ty) = registry.component_by_id(section.component_identifier) else {
                    continue;
                };
                let reached = match ty.reads_transform {
                    ReadsTransform::Nothing => continue,
                    ReadsTransform::Local => patch.entity..patch.entity + 1,
                    ReadsTransform::World => subtree(&parsed.parent_index, patch.entity),
                };
                let t = registry.component_index(&ty.name).unwrap_or(usize::MAX);
                for entity in reached {
                    let ranges = instances_of(blob, section, entity).ok_or_else(|| {
                        SpawnError::Component {
                            component: ty.name.clone(),
                            message: "its instances cannot be told apart".into(),
                        }
                    })?;
                    if !ranges.is_empty() {
                        writes.entry((t, entity)).or_insert(ranges);
                    }
                }
            }
        }
        let mut ctx = SpawnContext { entities, world };
        for ((t, entity), ranges) in writes {
            let ty = registry
                .components()
                .get(t)
                .ok_or_else(|| BlobError::Corrupt("unknown type".into()))?;
            let fail = |message: String| SpawnError::Component {
                component: ty.name.clone(),
                message,
            };
            let owner = *self
                .entities
                .get(entity as usize)
                .ok_or_else(|| fail("no such entity".into()))?;
            let mut data = Vec::new();
            for range in &ranges {
                data.extend_from_slice(
                    blob.get(range.clone())
                        .ok_or_else(|| fail("an instance is outside the blob".into()))?,
                );
            }
            let entity_index = vec![entity; ranges.len()];
            let batch = ComponentBatch {
                entity_lookup: &self.entities,
                entity_index: &entity_index,
                parent_index: &parsed.parent_index,
                data: &data,
            };
            match &ty.rewrite {
                Some(rewrite) => rewrite(&mut ctx, &batch).map_err(fail)?,
                None => {
                    let manager = ctx
                        .world
                        .manager_named_mut(&ty.name)
                        .ok_or_else(|| fail("no manager in this world".into()))?;
                    manager.destroy_entity(owner);
                    (ty.spawn)(&mut ctx, &batch).map_err(fail)?;
                }
            }
        }
        Ok(())
    }
}

/// Entity `k` and its descendants, in a blob's `parent_index` (parents first, so
/// depth first: they follow `k` in one run, and an entity is in the run when its
/// parent is).
fn subtree(parent_index: &[u32], k: u32) -> Range<u32> {
    let mut end = k as usize + 1;
    while let Some(&p) = parent_index.get(end) {
        if p == crate::blob::NO_PARENT || p < k {
            break;
        }
        end += 1;
    }
    k..end as u32
}

/// Where entity `entity`'s instances of `section` are in `blob`, for a type whose
/// records are all one size and whose owners are in order (what the compiler
/// writes); `None` if they cannot be told apart.
fn instances_of(
    blob: &[u8],
    section: &crate::blob::ComponentSection,
    entity: u32,
) -> Option<Vec<Range<usize>>> {
    let owners = &section.entity_index;
    let count = owners.len();
    if count == 0 || !section.data.len().is_multiple_of(count) || !owners.is_sorted() {
        return None;
    }
    let size = section.data.len() / count;
    let at = (section.data.as_ptr() as usize).checked_sub(blob.as_ptr() as usize)?;
    let first = owners.partition_point(|&o| o < entity);
    let last = owners.partition_point(|&o| o <= entity);
    Some(
        (first..last)
            .map(|i| at + i * size..at + (i + 1) * size)
            .collect(),
    )
}

/// Validates `bytes` and spawns the level into `world`.
///
/// Component types unknown to `registry` are skipped whole (one jump over their
/// section) and reported in [`SpawnedLevel::warnings`]. If any component's data is
/// rejected, everything spawned so far is destroyed again and the error returned.
pub fn spawn_level(
    bytes: &[u8],
    registry: &Registry,
    entities: &mut EntityManager,
    world: &mut World,
) -> Result<SpawnedLevel, SpawnError> {
    let blob = LevelBlob::parse(bytes)?;
    let mut warnings = Vec::new();
    // Sections in this runtime's spawn order, whatever order the blob has them in.
    let mut sections = Vec::with_capacity(blob.components.len());
    for section in &blob.components {
        match registry.component_by_id(section.component_identifier) {
            Some(ty) => sections.push((ty, section)),
            None => warnings.push(format!(
                "skipped {} instances of unknown component type {:#010x}",
                section.entity_index.len(),
                section.component_identifier
            )),
        }
    }
    sections.sort_by_key(|(ty, _)| ty.spawn_order);
    let num_entities = blob.num_entities();
    for (ty, section) in &sections {
        // Strictly increasing owners (what the compiler writes) cannot repeat.
        if !ty.multiple && !section.entity_index.windows(2).all(|w| w[0] < w[1]) {
            let mut seen = vec![false; num_entities];
            for &e in section.entity_index.iter() {
                if std::mem::replace(&mut seen[e as usize], true) {
                    return Err(SpawnError::Component {
                        component: ty.name.clone(),
                        message: format!("entity {e} has two instances, but the type allows one"),
                    });
                }
            }
        }
    }

    let mut created = Vec::new();
    entities.create_many(num_entities, &mut created);
    let mut ctx = SpawnContext { entities, world };
    for (ty, section) in &sections {
        let batch = ComponentBatch {
            entity_lookup: &created,
            entity_index: &section.entity_index,
            parent_index: &blob.parent_index,
            data: section.data,
        };
        if let Err(message) = (ty.spawn)(&mut ctx, &batch) {
            ctx.world.destroy_many(ctx.entities, &created);
            return Err(SpawnError::Component {
                component: ty.name.clone(),
                message,
            });
        }
    }
    Ok(SpawnedLevel {
        entities: created,
        id_text: blob.id_text.to_owned(),
        id_ends: blob.id_ends.into_owned(),
        warnings,
        index: std::sync::OnceLock::new(),
    })
}

impl World {
    /// Despawns a level: destroys all its entities and their components in one call.
    pub fn despawn(&mut self, entities: &mut EntityManager, level: &SpawnedLevel) {
        self.destroy_many(entities, &level.entities);
    }
}
