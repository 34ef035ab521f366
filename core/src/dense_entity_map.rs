//! The entity -> instance index of managers whose component nearly every entity has
//! (transforms, meshes, debug names): a plain array indexed by the entity's index.
//!
//! Seed part 2 allows this "if almost every entity has this component and lookups
//! are performance critical". A lookup is one load and one compare, with no hashing
//! and no probing, and a bulk spawn of consecutive entities fills consecutive slots.
//! The cost is memory for every index up to the largest one seen, 8 bytes each, also
//! for entities without the component. That is why sparse components keep the hash
//! index ([`crate::entity_map::EntityMap`]).
//!
//! A slot holds one generation of its index. That is enough because the entity
//! manager hands an index out again only after its previous entity was destroyed. A
//! manager may still hold the dead entity's component until its lazy collection
//! runs. The new entity then takes the slot, and removing or redirecting the dead one
//! (its full id no longer matches) leaves the slot alone.

use crate::component::Instance;
use crate::entity::Entity;

/// Marks an empty slot: the instance no manager hands out (instances are array
/// positions, and an array of 2^32 - 1 components would not fit in memory first).
const EMPTY: u32 = u32::MAX;

/// One index's entry: the generation of the entity it belongs to and that entity's
/// instance, or [`EMPTY`]. Eight bytes, so a lookup touches one cache line.
#[derive(Clone, Copy, Debug)]
struct Slot {
    generation: u32,
    instance: u32,
}

const EMPTY_SLOT: Slot = Slot {
    generation: 0,
    instance: EMPTY,
};

/// Entity -> instance, by entity index.
#[derive(Clone, Debug, Default)]
pub struct DenseEntityMap {
    slots: Vec<Slot>,
    len: usize,
}

impl DenseEntityMap {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes room for entity indices up to `len + additional` without growing
    /// again (a bulk spawn's new entities usually come next).
    pub fn reserve(&mut self, additional: usize) {
        let wanted = self.slots.len().max(self.len + additional);
        self.slots.reserve(wanted - self.slots.len());
    }

    /// The slot of `entity` if it holds `entity` (this generation of its index).
    #[inline]
    fn slot(&self, entity: Entity) -> Option<usize> {
        let index = entity.index() as usize;
        let slot = self.slots.get(index)?;
        (slot.instance != EMPTY && slot.generation == entity.generation()).then_some(index)
    }

    /// The instance of `entity`.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<Instance> {
        let slot = self.slots.get(entity.index() as usize)?;
        (slot.instance != EMPTY && slot.generation == entity.generation())
            .then_some(Instance(slot.instance))
    }

    /// Whether `entity` has an entry.
    pub fn contains(&self, entity: Entity) -> bool {
        self.slot(entity).is_some()
    }

    /// Sets the instance of `entity`; returns the previous one. An entry of an
    /// older generation of the same index (a dead entity) is replaced, and not
    /// returned.
    ///
    /// # Panics
    /// If `instance` is `u32::MAX`, which marks empty slots.
    #[inline]
    pub fn insert(&mut self, entity: Entity, instance: Instance) -> Option<Instance> {
        assert!(instance.0 != EMPTY, "instance u32::MAX cannot be indexed");
        let index = entity.index() as usize;
        if index >= self.slots.len() {
            self.slots.resize(index + 1, EMPTY_SLOT);
        }
        let new = Slot {
            generation: entity.generation(),
            instance: instance.0,
        };
        let old = std::mem::replace(&mut self.slots[index], new);
        if old.instance == EMPTY {
            self.len += 1;
            None
        } else {
            (old.generation == new.generation).then_some(Instance(old.instance))
        }
    }

    /// Maps `entities[k]` to instance `first + k`, in order, growing the array once
    /// for the largest index. Stops at the first entity that already has an entry
    /// and returns its position in `entities`: the entries before it are made, it
    /// and those after it are not.
    ///
    /// # Panics
    /// If an instance would reach `u32::MAX`, which marks empty slots.
    pub fn insert_new(&mut self, entities: &[Entity], first: u32) -> Result<(), usize> {
        assert!(
            (first as usize).saturating_add(entities.len()) < EMPTY as usize,
            "instance u32::MAX cannot be indexed"
        );
        // A fresh world's spawn: the entities take the next indices in order, so the
        // slots are appended as they are made, with no empty fill first.
        let next = self.slots.len();
        // One pass without an early exit, which the compiler vectorizes.
        if (next..)
            .zip(entities)
            .fold(true, |ok, (want, e)| ok & (e.index() as usize == want))
        {
            self.slots
                .extend(entities.iter().zip(first..).map(|(e, instance)| Slot {
                    generation: e.generation(),
                    instance,
                }));
            self.len += entities.len();
            return Ok(());
        }
        let Some(top) = entities.iter().map(|e| e.index() as usize).max() else {
            return Ok(());
        };
        if top >= self.slots.len() {
            self.slots.resize(top + 1, EMPTY_SLOT);
        }
        for (k, (instance, &entity)) in (first..).zip(entities).enumerate() {
            let slot = &mut self.slots[entity.index() as usize];
            if slot.instance != EMPTY && slot.generation == entity.generation() {
                return Err(k);
            }
            self.len += usize::from(slot.instance == EMPTY);
            *slot = Slot {
                generation: entity.generation(),
                instance,
            };
        }
        Ok(())
    }

    /// Maps `entities[k]` to instance `first + k` for every `k`, as [`Self::insert`]
    /// one by one would (a later entry for the same entity wins), in one call.
    pub fn insert_all(&mut self, entities: &[Entity], first: u32) {
        if let Err(k) = self.insert_new(entities, first) {
            for (instance, &entity) in (first + k as u32..).zip(&entities[k..]) {
                self.insert(entity, Instance(instance));
            }
        }
    }

    /// Every entry, by entity index.
    pub fn entries(&self) -> impl Iterator<Item = (Entity, Instance)> + '_ {
        (0u32..)
            .zip(&self.slots)
            .filter(|(_, slot)| slot.instance != EMPTY)
            .map(|(index, slot)| (Entity::new(index, slot.generation), Instance(slot.instance)))
    }

    /// The instance of `entity`, inserting `instance` first if there is none.
    #[inline]
    pub fn get_or_insert(&mut self, entity: Entity, instance: Instance) -> Instance {
        match self.get(entity) {
            Some(existing) => existing,
            None => {
                self.insert(entity, instance);
                instance
            }
        }
    }

    /// Removes `entity`; returns its instance.
    pub fn remove(&mut self, entity: Entity) -> Option<Instance> {
        let index = self.slot(entity)?;
        let removed = std::mem::replace(&mut self.slots[index], EMPTY_SLOT);
        self.len -= 1;
        Some(Instance(removed.instance))
    }

    /// Changes the instance stored for `entity` if it is `from` (after a swap-erase
    /// moved that instance to `to`).
    #[inline]
    pub fn redirect(&mut self, entity: Entity, from: Instance, to: Instance) {
        if let Some(index) = self.slot(entity)
            && self.slots[index].instance == from.0
        {
            self.slots[index].instance = to.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Any mix of inserts and removes agrees with a model that keeps, per index,
        /// the latest generation inserted (the one live entity an index can have).
        #[test]
        fn matches_a_model(ops in prop::collection::vec((0u32..300, 0u32..3, any::<bool>(), 0..u32::MAX), 1..2000)) {
            let mut m = DenseEntityMap::new();
            let mut model: HashMap<u32, (u32, u32)> = HashMap::new();
            for (index, generation, insert, value) in ops {
                let e = Entity::new(index, generation);
                if insert {
                    let previous = match model.insert(index, (generation, value)) {
                        Some((g, v)) if g == generation => Some(v),
                        _ => None,
                    };
                    prop_assert_eq!(m.insert(e, Instance(value)).map(|i| i.0), previous);
                } else {
                    let removed = match model.get(&index) {
                        Some(&(g, v)) if g == generation => {
                            model.remove(&index);
                            Some(v)
                        }
                        _ => None,
                    };
                    prop_assert_eq!(m.remove(e).map(|i| i.0), removed);
                }
                prop_assert_eq!(m.len(), model.len());
            }
            for index in 0..300 {
                for generation in 0..3 {
                    let e = Entity::new(index, generation);
                    let expected = model.get(&index).filter(|(g, _)| *g == generation).map(|(_, v)| *v);
                    prop_assert_eq!(m.get(e).map(|i| i.0), expected);
                }
            }
        }
    }

    /// Entity `k` of a batch, with indices either continuing the map's array
    /// (`fresh`, a new world's spawn) or picked from `picks`.
    fn batch_entities(fresh: bool, start: u32, picks: &[(u32, u32)]) -> Vec<Entity> {
        picks
            .iter()
            .enumerate()
            .map(|(k, &(index, generation))| {
                if fresh {
                    Entity::new(start + k as u32, generation)
                } else {
                    Entity::new(index, generation)
                }
            })
            .collect()
    }

    proptest! {
        /// A bulk insert gives what inserting one by one gives, up to the first
        /// entity that already has an entry, which it reports and does not touch.
        #[test]
        fn bulk_insert_matches_one_by_one(
            before in prop::collection::vec((0u32..60, 0u32..3), 0..40),
            picks in prop::collection::vec((0u32..80, 0u32..3), 0..40),
            fresh in any::<bool>(),
            first in 0u32..1000,
        ) {
            let mut bulk = DenseEntityMap::new();
            for (k, &(index, generation)) in before.iter().enumerate() {
                bulk.insert(Entity::new(index, generation), Instance(k as u32));
            }
            let mut single = bulk.clone();
            let batch = batch_entities(fresh, bulk.slots.len() as u32, &picks);
            let result = bulk.insert_new(&batch, first);
            let mut expected = Ok(());
            for (k, &e) in batch.iter().enumerate() {
                if single.contains(e) {
                    expected = Err(k);
                    break;
                }
                single.insert(e, Instance(first + k as u32));
            }
            prop_assert_eq!(result, expected);
            prop_assert_eq!(bulk.len(), single.len());
            for index in 0..140 {
                for generation in 0..3 {
                    let e = Entity::new(index, generation);
                    prop_assert_eq!(bulk.get(e), single.get(e));
                }
            }
        }
    }

    #[test]
    fn a_dead_entity_leaves_its_successor_alone() {
        let mut m = DenseEntityMap::new();
        let (old, new) = (Entity::new(7, 0), Entity::new(7, 1));
        m.insert(old, Instance(1));
        m.insert(new, Instance(2));
        m.redirect(old, Instance(1), Instance(0));
        assert_eq!(m.remove(old), None);
        assert_eq!(m.get(new), Some(Instance(2)));
        assert_eq!(m.len(), 1);
    }
}
