//! The entity -> instance index of managers whose component nearly every entity has
//! (transforms, meshes, debug names): a plain array indexed by the entity's index.
//!
//! Seed part 2 allows this "if almost every entity has this component and lookups
//! are performance critical". A lookup is one load and one compare, with no hashing
//! and no probing, and a bulk spawn of consecutive entities fills consecutive slots.
//! The cost is memory for every index up to the largest one seen, 12 bytes each, also
//! for entities without the component. That is why sparse components keep the hash
//! index ([`crate::EntityMap`]).
//!
//! A slot holds one generation of its index. That is enough because the entity
//! manager hands an index out again only after its previous entity was destroyed. A
//! manager may still hold the dead entity's component until its lazy collection
//! runs. The new entity then takes the slot, and removing or redirecting the dead one
//! (its full id no longer matches) leaves the slot alone.

use crate::{Entity, Instance};

/// Marks an empty slot (no live entity has these bits: index `u32::MAX` is never
/// handed out).
const EMPTY: u64 = u64::MAX;

/// Entity -> instance, by entity index.
#[derive(Clone, Debug, Default)]
pub struct DenseEntityMap {
    /// The full id of the entity in each slot, or [`EMPTY`].
    keys: Vec<u64>,
    values: Vec<u32>,
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
        let wanted = self.keys.len().max(self.len + additional);
        self.keys.reserve(wanted - self.keys.len());
        self.values.reserve(wanted - self.values.len());
    }

    #[inline]
    fn slot(&self, entity: Entity) -> Option<usize> {
        let slot = entity.index() as usize;
        (self.keys.get(slot) == Some(&entity.to_bits())).then_some(slot)
    }

    /// The instance of `entity`.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<Instance> {
        self.slot(entity).map(|s| Instance(self.values[s]))
    }

    /// Whether `entity` has an entry.
    pub fn contains(&self, entity: Entity) -> bool {
        self.slot(entity).is_some()
    }

    /// Sets the instance of `entity`; returns the previous one. An entry of an
    /// older generation of the same index (a dead entity) is replaced, and not
    /// returned.
    #[inline]
    pub fn insert(&mut self, entity: Entity, instance: Instance) -> Option<Instance> {
        let slot = entity.index() as usize;
        if slot >= self.keys.len() {
            self.keys.resize(slot + 1, EMPTY);
            self.values.resize(slot + 1, 0);
        }
        let key = entity.to_bits();
        let old_key = std::mem::replace(&mut self.keys[slot], key);
        let old_value = std::mem::replace(&mut self.values[slot], instance.0);
        if old_key == key {
            Some(Instance(old_value))
        } else {
            if old_key == EMPTY {
                self.len += 1;
            }
            None
        }
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
        let slot = self.slot(entity)?;
        self.keys[slot] = EMPTY;
        self.len -= 1;
        Some(Instance(self.values[slot]))
    }

    /// Changes the instance stored for `entity` if it is `from` (after a swap-erase
    /// moved that instance to `to`).
    #[inline]
    pub fn redirect(&mut self, entity: Entity, from: Instance, to: Instance) {
        if let Some(slot) = self.slot(entity)
            && self.values[slot] == from.0
        {
            self.values[slot] = to.0;
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
        fn matches_a_model(ops in prop::collection::vec((0u32..300, 0u32..3, any::<bool>(), any::<u32>()), 1..2000)) {
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
