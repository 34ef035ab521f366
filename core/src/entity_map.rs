//! The hash index from [`Entity`] to component [`Instance`]: the layout
//! [`crate::adaptive_entity_map::AdaptiveEntityMap`] uses while few entities have the component.
//!
//! A purpose-built open-addressing table instead of `std::collections::HashMap`: keys
//! are unique 64-bit ids whose index part is dense, so the hash keeps neighbouring
//! indices in neighbouring slots (see `home`), and probing is linear over two flat
//! arrays. Bulk spawns insert tens of thousands of entities at a time; this table
//! does each insert in a few nanoseconds (see BENCHMARKS.md), where the
//! general-purpose map pays for SIMD group probing and control bytes it does not
//! need here.
//!
//! Neighbouring slots make a level's entities one long run of occupied slots. Plain
//! linear probing would scan such a run to its end on every miss and every removal.
//! The table therefore keeps the Robin Hood order (along a run, no entry is further
//! from its home slot than the one after it plus one), so a miss stops at the first
//! entry closer to its home than the probe is, and a removal shifts back only the
//! displaced entries after the hole, with no tombstones.

use crate::component::Instance;
use crate::entity::Entity;

/// Marks an empty slot. Entity index `u32::MAX` is never handed out, so no live
/// entity has these bits.
const EMPTY: u64 = u64::MAX;

/// Entity -> instance hash index.
#[derive(Clone, Debug)]
pub struct EntityMap {
    keys: Vec<u64>,
    values: Vec<u32>,
    len: usize,
    /// 64 minus log2 of the capacity: the shift that keeps the hash's top bits.
    shift: u32,
}

impl Default for EntityMap {
    fn default() -> Self {
        EntityMap {
            keys: Vec::new(),
            values: Vec::new(),
            len: 0,
            shift: 64,
        }
    }
}

impl EntityMap {
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

    /// The home slot: the entity index with its bits above the table size folded
    /// down onto the low bits. A dense range of indices (what a bulk spawn creates)
    /// lands on consecutive slots, so bulk inserts and lookups walk memory in order;
    /// the folding breaks up power-of-two strides that would otherwise share a slot.
    /// The generation is left out: a key's full 64 bits are compared on lookup.
    #[inline]
    fn home(&self, key: u64) -> usize {
        let index = key & 0xFFFF_FFFF;
        let bits = 64 - self.shift;
        let folded = index ^ (index >> bits) ^ (index >> (2 * bits).min(63));
        (folded as usize) & self.mask()
    }

    #[inline]
    fn mask(&self) -> usize {
        self.keys.len() - 1
    }

    /// Makes room for `additional` more entries without growing again.
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len + additional;
        // Load factor at most 3/4: dense indices rarely collide (see `home`), so the
        // probes stay short, and the table stays small enough to sit in cache.
        if needed * 4 > self.keys.len() * 3 {
            self.rehash((needed * 4 / 3 + 1).next_power_of_two().max(16));
        }
    }

    fn rehash(&mut self, capacity: usize) {
        let old_keys = std::mem::replace(&mut self.keys, vec![EMPTY; capacity]);
        let old_values = std::mem::replace(&mut self.values, vec![0; capacity]);
        self.shift = 64 - capacity.trailing_zeros();
        for (k, v) in old_keys.into_iter().zip(old_values) {
            if k != EMPTY {
                self.place(k, v);
            }
        }
    }

    /// How far the entry at `slot` is from its home slot.
    #[inline]
    fn distance(&self, slot: usize) -> usize {
        slot.wrapping_sub(self.home(self.keys[slot])) & self.mask()
    }

    /// Puts a key known to be absent, displacing entries closer to their home
    /// (Robin Hood insertion).
    #[inline]
    fn place(&mut self, key: u64, value: u32) {
        let mask = self.mask();
        let (mut key, mut value) = (key, value);
        let mut slot = self.home(key);
        let mut distance = 0;
        while self.keys[slot] != EMPTY {
            let theirs = self.distance(slot);
            if theirs < distance {
                std::mem::swap(&mut key, &mut self.keys[slot]);
                std::mem::swap(&mut value, &mut self.values[slot]);
                distance = theirs;
            }
            slot = (slot + 1) & mask;
            distance += 1;
        }
        self.keys[slot] = key;
        self.values[slot] = value;
    }

    #[inline]
    fn find(&self, key: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.mask();
        let mut slot = self.home(key);
        let mut distance = 0;
        loop {
            match self.keys[slot] {
                k if k == key => return Some(slot),
                EMPTY => return None,
                // Robin Hood order: the key would have displaced this entry.
                _ if self.distance(slot) < distance => return None,
                _ => {
                    slot = (slot + 1) & mask;
                    distance += 1;
                }
            }
        }
    }

    /// The instance of `entity`.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<Instance> {
        self.find(entity.to_bits())
            .map(|slot| Instance(self.values[slot]))
    }

    /// Whether `entity` has an entry.
    pub fn contains(&self, entity: Entity) -> bool {
        self.find(entity.to_bits()).is_some()
    }

    /// Sets the instance of `entity`; returns the previous one.
    #[inline]
    pub fn insert(&mut self, entity: Entity, instance: Instance) -> Option<Instance> {
        let key = entity.to_bits();
        if let Some(slot) = self.find(key) {
            return Some(Instance(std::mem::replace(
                &mut self.values[slot],
                instance.0,
            )));
        }
        self.reserve(1);
        self.place(key, instance.0);
        self.len += 1;
        None
    }

    /// Every entry, in table order.
    pub fn entries(&self) -> impl Iterator<Item = (Entity, Instance)> + '_ {
        self.keys
            .iter()
            .zip(&self.values)
            .filter(|(k, _)| **k != EMPTY)
            .map(|(&k, &v)| (Entity::from_bits(k), Instance(v)))
    }

    /// Maps `entities[k]` to instance `first + k`, in order, growing the table once.
    /// Stops at the first entity that already has an entry and returns its position
    /// in `entities`: the entries before it are made, it and those after it are not.
    pub fn insert_new(&mut self, entities: &[Entity], first: u32) -> Result<(), usize> {
        self.reserve(entities.len());
        for (k, (instance, &entity)) in (first..).zip(entities).enumerate() {
            let key = entity.to_bits();
            if self.find(key).is_some() {
                return Err(k);
            }
            self.place(key, instance);
            self.len += 1;
        }
        Ok(())
    }

    /// The instance of `entity`, inserting `instance` first if there is none.
    #[inline]
    pub fn get_or_insert(&mut self, entity: Entity, instance: Instance) -> Instance {
        match self.get(entity) {
            Some(existing) => existing,
            None => {
                self.reserve(1);
                self.place(entity.to_bits(), instance.0);
                self.len += 1;
                instance
            }
        }
    }

    /// Removes `entity`; returns its instance.
    pub fn remove(&mut self, entity: Entity) -> Option<Instance> {
        let mut hole = self.find(entity.to_bits())?;
        let removed = Instance(self.values[hole]);
        self.len -= 1;
        // Backward-shift deletion: the displaced entries after the hole move one
        // slot closer to home; the first empty slot or entry at its home ends it.
        let mask = self.mask();
        let mut next = (hole + 1) & mask;
        while self.keys[next] != EMPTY && self.distance(next) > 0 {
            self.keys[hole] = self.keys[next];
            self.values[hole] = self.values[next];
            hole = next;
            next = (next + 1) & mask;
        }
        self.keys[hole] = EMPTY;
        Some(removed)
    }

    /// Changes the instance stored for `entity` if it is `from` (after a swap-erase
    /// moved that instance to `to`).
    #[inline]
    pub fn redirect(&mut self, entity: Entity, from: Instance, to: Instance) {
        if let Some(slot) = self.find(entity.to_bits())
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

    #[test]
    fn strided_keys_do_not_pile_up() {
        // Every 1024th index: an identity hash would put them all in one probe run.
        let mut m = EntityMap::new();
        for i in 0..4096u32 {
            m.insert(Entity::new(i * 1024, 0), Instance(i));
        }
        let longest = (0..4096u32)
            .map(|i| {
                let key = Entity::new(i * 1024, 0).to_bits();
                let slot = m.find(key).unwrap();
                (slot.wrapping_sub(m.home(key))) & m.mask()
            })
            .max()
            .unwrap();
        assert!(longest < 32, "a probe run of {longest}");
    }

    proptest! {
        /// Any mix of inserts and removes agrees with std's HashMap.
        #[test]
        fn matches_a_model(ops in prop::collection::vec((0u32..300, 0u32..3, any::<bool>(), any::<u32>()), 1..2000)) {
            let mut m = EntityMap::new();
            let mut model: HashMap<Entity, u32> = HashMap::new();
            for (index, generation, insert, value) in ops {
                let e = Entity::new(index, generation);
                if insert {
                    prop_assert_eq!(m.insert(e, Instance(value)).map(|i| i.0), model.insert(e, value));
                } else {
                    prop_assert_eq!(m.remove(e).map(|i| i.0), model.remove(&e));
                }
                prop_assert_eq!(m.len(), model.len());
            }
            for index in 0..300 {
                for generation in 0..3 {
                    let e = Entity::new(index, generation);
                    prop_assert_eq!(m.get(e).map(|i| i.0), model.get(&e).copied());
                }
            }
            // Robin Hood order, which lets misses and removals stop early.
            for slot in 0..m.keys.len() {
                let next = (slot + 1) & m.mask();
                if m.keys[slot] != EMPTY && m.keys[next] != EMPTY {
                    prop_assert!(m.distance(next) <= m.distance(slot) + 1, "slot {}", slot);
                }
                if m.keys[slot] == EMPTY && m.keys[next] != EMPTY {
                    prop_assert_eq!(m.distance(next), 0, "slot {} after a hole", next);
                }
            }
        }

        /// A bulk insert gives what inserting one by one gives, up to the first
        /// entity that already has an entry, which it reports and does not touch.
        #[test]
        fn bulk_insert_matches_one_by_one(
            before in prop::collection::vec((0u32..60, 0u32..3), 0..40),
            batch in prop::collection::vec((0u32..80, 0u32..3), 0..40),
            first in 0u32..1000,
        ) {
            let mut bulk = EntityMap::new();
            for (k, &(index, generation)) in before.iter().enumerate() {
                bulk.insert(Entity::new(index, generation), Instance(k as u32));
            }
            let mut single = bulk.clone();
            let batch: Vec<Entity> = batch.iter().map(|&(i, g)| Entity::new(i, g)).collect();
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
            for index in 0..80 {
                for generation in 0..3 {
                    let e = Entity::new(index, generation);
                    prop_assert_eq!(bulk.get(e), single.get(e));
                }
            }
        }
    }
}
