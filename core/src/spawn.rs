//! The entity spawner (seed part 4): creates all of a level's entities in one batch,
//! then each component type in spawn order, each as one bulk call.

use crate::blob::{BlobError, LevelBlob};
use crate::registry::{ComponentBatch, SpawnContext};
use crate::{Entity, EntityManager, IdIndex, Registry, World};

/// Why a level could not be spawned. Nothing of it is left in the world.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    /// The blob failed validation.
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// A component type's instance data was rejected by its spawn function.
    #[error("level blob is corrupt: component type \"{component}\": {message}")]
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
    index: std::sync::OnceLock<IdIndex>,
}

impl SpawnedLevel {
    /// The runtime entity of the level entity with authoring id `id`.
    pub fn entity(&self, id: &str) -> Option<Entity> {
        let index = self
            .index
            .get_or_init(|| IdIndex::build(self.ids(), self.id_ends.len()));
        let k = index.find(id, |k| self.id(k))?;
        self.entities.get(k).copied()
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
