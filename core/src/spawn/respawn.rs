//! Spawning again only what a structural change touched: an entity added,
//! removed, moved under another parent or otherwise changed is destroyed and
//! spawned again with its descendants; every other entity of the running level
//! keeps its runtime id, its instances and the state the simulation gave them.
//!
//! Entities are matched by authoring id between the blob the level was spawned
//! from and the new one. An entity is spawned again when it is new, when its
//! parent is another entity, when any of its instances' bytes differ, or when
//! its parent is spawned again (a child's transform and what reads its world
//! pose hang off its parent's). The rest is compared, not spawned: at 100,000
//! entities the comparison costs a few milliseconds, a spawn of the level tens.

use crate::blob::{LevelBlob, NO_PARENT};
use crate::entity::{Entity, EntityManager};
use crate::registry::Registry;
use crate::registry::{ComponentBatch, RecordLayout};
use crate::spawn::{SpawnError, SpawnedLevel};
use crate::world::World;

/// One component type's instances in a blob, owners in order (what the compiler
/// writes), each one's bytes told apart by the type's [`RecordLayout`].
struct Instances<'b> {
    owners: &'b [u32],
    data: &'b [u8],
    bounds: Bounds,
}

enum Bounds {
    /// Every record is this size.
    Fixed(usize),
    /// Where each record starts, and the end of the last.
    Starts(Vec<usize>),
}

impl<'b> Instances<'b> {
    fn of_section(
        section: &'b crate::blob::ComponentSection<'b>,
        layout: RecordLayout,
    ) -> Option<Self> {
        let owners: &[u32] = &section.entity_index;
        let data = section.data;
        let count = owners.len();
        if !owners.is_sorted() {
            return None;
        }
        let bounds = match layout {
            _ if count == 0 => Bounds::Fixed(0),
            RecordLayout::Fixed if data.len().is_multiple_of(count) => {
                Bounds::Fixed(data.len() / count)
            }
            RecordLayout::Fixed => return None,
            RecordLayout::LengthPrefixed => {
                let mut starts = Vec::with_capacity(count + 1);
                let mut at = 0usize;
                for _ in 0..count {
                    starts.push(at);
                    let len = data.get(at..at + 4)?;
                    let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
                    at = at.checked_add(4 + len.checked_add(3)? / 4 * 4)?;
                }
                if at != data.len() {
                    return None;
                }
                starts.push(at);
                Bounds::Starts(starts)
            }
        };
        Some(Instances {
            owners,
            data,
            bounds,
        })
    }

    /// Where the bytes of the instances at positions `at` are.
    fn span(&self, at: std::ops::Range<usize>) -> std::ops::Range<usize> {
        match &self.bounds {
            Bounds::Fixed(size) => at.start * size..at.end * size,
            Bounds::Starts(starts) => starts[at.start]..starts[at.end],
        }
    }

    /// The instances of `entity`: their positions among the section's
    /// instances, looked for from `hint` (where the last entity asked about
    /// ended, moved to where this one ends). Entities are asked about in order
    /// but for a change's few: a few steps forward find them, where a binary
    /// search for each made the comparison of a 10,000-entity level cost seven
    /// times a whole spawn.
    fn positions_from(&self, entity: u32, hint: &mut usize) -> std::ops::Range<usize> {
        let owners = self.owners;
        let mut first = (*hint).min(owners.len());
        if first > 0 && owners[first - 1] >= entity {
            first = owners[..first].partition_point(|&o| o < entity);
        } else {
            let mut steps = 0;
            while first < owners.len() && owners[first] < entity {
                first += 1;
                steps += 1;
                if steps == 8 {
                    first += owners[first..].partition_point(|&o| o < entity);
                    break;
                }
            }
        }
        let mut last = first;
        while last < owners.len() && owners[last] == entity {
            last += 1;
        }
        *hint = last;
        first..last
    }
}

/// How many instances of a type `entity` has, and their bytes (see
/// [`Instances::positions_from`] for `hint`); none if the blob has no such type.
/// The count too: a type without fields has instances of no bytes.
fn instances_of<'b>(
    instances: &Option<Instances<'b>>,
    entity: u32,
    hint: &mut usize,
) -> (usize, &'b [u8]) {
    instances.as_ref().map_or((0, &[][..]), |i| {
        let at = i.positions_from(entity, hint);
        (at.len(), &i.data[i.span(at)])
    })
}

/// What [`SpawnedLevel::respawn_changed`] did.
#[derive(Debug, Clone)]
pub struct Respawned {
    /// The level as it now lives in the world.
    pub level: SpawnedLevel,
    /// How many of its entities were spawned again (new ones included).
    pub spawned: usize,
    /// How many entities of the old level were destroyed.
    pub destroyed: usize,
}

impl SpawnedLevel {
    /// Brings the running level from `old_blob` (the blob it was spawned from,
    /// patched since perhaps) to `new_blob` by spawning again only the entities
    /// that changed and their descendants (see the module's documentation).
    ///
    /// `Ok(None)` where it does not pay or cannot be told (no id tables, a type
    /// whose instances cannot be told apart, most of the level changed): the
    /// world is untouched, spawn the new blob whole (which reports a blob that
    /// is not valid). On an error from a type's spawn the level's entities are
    /// all destroyed: spawn the new blob whole.
    pub fn respawn_changed(
        &self,
        (old_blob, new_blob): (&[u8], &[u8]),
        registry: &Registry,
        entities: &mut EntityManager,
        world: &mut World,
    ) -> Result<Option<Respawned>, SpawnError> {
        // A blob that does not parse is for the whole spawn to report.
        let (Ok(old), Ok(new)) = (LevelBlob::parse(old_blob), LevelBlob::parse(new_blob)) else {
            return Ok(None);
        };
        // An entity field of an entity kept would name the old entity of one spawned
        // again: a level with entity fields is spawned whole.
        let refers = |blob: &LevelBlob| {
            (blob.components.iter()).any(|s| {
                (registry.component_by_id(s.component_identifier))
                    .is_some_and(|ty| ty.refers_to_entities())
            })
        };
        if refers(&old) || refers(&new) {
            return Ok(None);
        }
        let (n_old, n_new) = (old.num_entities(), new.num_entities());
        if n_old != self.entities.len() || old.id_ends.len() != n_old || new.id_ends.len() != n_new
        {
            return Ok(None);
        }
        // Each type's instances in both blobs, by identifier; a type this runtime
        // does not know is not spawned, and not compared. A type that allows one
        // instance an entity, given two, is for the whole spawn to report (as
        // `spawn_level` does), not for its spawn to meet.
        let layout = |id: u32| {
            registry
                .component_by_id(id)
                .map(|ty| (ty.records, ty.multiple))
        };
        let one_each = |section: &crate::blob::ComponentSection| {
            section.entity_index.windows(2).all(|w| w[0] < w[1])
        };
        let mut types: Vec<(u32, Option<Instances>, Option<Instances>)> = Vec::new();
        for (in_new, blob) in [(false, &old), (true, &new)] {
            for section in &blob.components {
                let id = section.component_identifier;
                let Some((records, multiple)) = layout(id) else {
                    continue;
                };
                if !multiple && !one_each(section) {
                    return Ok(None);
                }
                let Some(instances) = Instances::of_section(section, records) else {
                    return Ok(None);
                };
                let at = match types.iter().position(|(t, _, _)| *t == id) {
                    Some(at) => at,
                    None => {
                        types.push((id, None, None));
                        types.len() - 1
                    }
                };
                match in_new {
                    false => types[at].1 = Some(instances),
                    true => types[at].2 = Some(instances),
                }
            }
        }

        // The old index of each new entity, and which are spawned again.
        let new_id = |k: usize| {
            let end = new.id_ends[k] as usize;
            let start = if k == 0 {
                0
            } else {
                new.id_ends[k - 1] as usize
            };
            new.id_text.get(start..end)
        };
        let mut old_of = vec![u32::MAX; n_new];
        let mut again = vec![false; n_new];
        let mut kept_old = vec![false; n_old];
        let mut spawned = 0;
        // Where each type's comparison stands in the old and the new blob.
        let mut hints = vec![(0usize, 0usize); types.len()];
        let mut last_found: Option<usize> = None;
        for k in 0..n_new {
            // Most entities follow the one before them in both blobs.
            let id = new_id(k);
            let next = last_found.map_or(0, |j| j + 1);
            let found = if id.is_some() && self.id(next) == id {
                Some(next)
            } else {
                id.and_then(|id| self.index_of(id))
            };
            if found.is_some() {
                last_found = found;
            }
            let parent = new.parent_index[k];
            let changed = match found {
                None => true,
                // Destroyed since it was spawned (a plugin may destroy entities).
                Some(j) if kept_old[j] || !entities.alive(self.entities[j]) => true,
                Some(j) => {
                    kept_old[j] = true;
                    old_of[k] = j as u32;
                    let old_parent = old.parent_index[j];
                    let same_parent = if parent == NO_PARENT {
                        old_parent == NO_PARENT
                    } else {
                        old_parent != NO_PARENT && old_of[parent as usize] == old_parent
                    };
                    !same_parent
                        || (parent != NO_PARENT && again[parent as usize])
                        || (types.iter().zip(&mut hints)).any(|((_, o, n), (in_old, in_new))| {
                            instances_of(o, j as u32, in_old) != instances_of(n, k as u32, in_new)
                        })
                }
            };
            if changed {
                again[k] = true;
                spawned += 1;
                // Spawned with ids the old entity never had.
                if let Some(j) = found
                    && old_of[k] == j as u32
                {
                    kept_old[j] = false;
                }
            }
        }
        if spawned * 2 > n_new {
            return Ok(None);
        }

        // What goes: the old entities not kept as they were.
        let gone: Vec<Entity> = (0..n_old)
            .filter(|&j| !kept_old[j])
            .map(|j| self.entities[j])
            .collect();
        let destroyed = gone.len();
        world.destroy_many(entities, &gone);

        let mut fresh = Vec::new();
        entities.create_many(spawned, &mut fresh);
        let mut next = 0;
        let lookup: Vec<Entity> = (0..n_new)
            .map(|k| match again[k] {
                false => self.entities[old_of[k] as usize],
                true => {
                    // As many fresh entities as there are entities spawned again.
                    next += 1;
                    fresh[next - 1]
                }
            })
            .collect();

        // Each type's instances of the entities spawned again, in spawn order.
        let mut sections: Vec<_> = (new.components.iter())
            .filter_map(|s| Some((registry.component_by_id(s.component_identifier)?, s)))
            .collect();
        sections.sort_by_key(|(ty, _)| ty.spawn_order);
        let mut ctx = crate::registry::SpawnContext { entities, world };
        for (ty, section) in sections {
            let Some(instances) = Instances::of_section(section, ty.records) else {
                continue;
            };
            let mut owners = Vec::new();
            let mut data = Vec::new();
            for (i, &owner) in instances.owners.iter().enumerate() {
                if again[owner as usize] {
                    owners.push(owner);
                    data.extend_from_slice(&instances.data[instances.span(i..i + 1)]);
                }
            }
            if owners.is_empty() {
                continue;
            }
            let batch = ComponentBatch {
                entity_lookup: &lookup,
                entity_index: &owners,
                parent_index: &new.parent_index,
                data: &data,
            };
            if let Err(message) = (ty.spawn)(&mut ctx, &batch) {
                ctx.world.destroy_many(ctx.entities, &lookup);
                return Err(SpawnError::Component {
                    component: ty.name.clone(),
                    message,
                });
            }
        }
        let warnings = (new.components.iter())
            .filter(|s| registry.component_by_id(s.component_identifier).is_none())
            .map(|s| {
                format!(
                    "skipped {} instances of unknown component type {:#010x}",
                    s.entity_index.len(),
                    s.component_identifier
                )
            })
            .collect();
        Ok(Some(Respawned {
            level: SpawnedLevel {
                entities: lookup,
                id_text: new.id_text.to_owned(),
                id_ends: new.id_ends.into_owned(),
                warnings,
                index: std::sync::OnceLock::new(),
            },
            spawned,
            destroyed,
        }))
    }

    /// The position of the entity with authoring id `id`.
    pub(super) fn index_of(&self, id: &str) -> Option<usize> {
        let index = self
            .index
            .get_or_init(|| crate::id_index::IdIndex::build(self.ids(), self.id_ends.len()));
        index.find(id, |k| self.id(k))
    }
}
