//! The entity -> instance index of managers whose component only some entities
//! have (point masses, behaviours): a hash index while the component is sparse, a
//! plain array by entity index while most entities up to the largest index have it.
//!
//! Seed part 2 leaves the choice to each manager: a plain array "if almost every
//! entity has this component", a hash otherwise. Whether almost every entity has a
//! point mass depends on the level, not on the type, so this index measures it and
//! switches. The array costs 8 bytes per entity index up to the largest one it holds
//! ([`DenseEntityMap`]); the hash about 16 bytes per entry ([`EntityMap`]) plus a hash
//! and a probe per operation. The switch points leave a gap (dense from half full,
//! hashed again below an eighth), so that a level spawned and despawned over and over
//! does not convert back and forth.

use crate::component::Instance;
use crate::dense_entity_map::DenseEntityMap;
use crate::entity::Entity;
use crate::entity_map::EntityMap;

/// Below this many entries the index stays hashed: a small table is cheap either way.
const MIN_DENSE: usize = 64;

#[derive(Clone, Debug)]
enum Layout {
    Hash(EntityMap),
    Dense(DenseEntityMap),
}

/// Entity -> instance, by hash or by entity index, whichever suits the entries.
#[derive(Clone, Debug)]
pub struct AdaptiveEntityMap {
    layout: Layout,
    /// One past the largest entity index inserted since the layout last changed (an
    /// upper bound: removals do not lower it).
    span: usize,
}

impl Default for AdaptiveEntityMap {
    fn default() -> Self {
        AdaptiveEntityMap {
            layout: Layout::Hash(EntityMap::new()),
            span: 0,
        }
    }
}

impl AdaptiveEntityMap {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        match &self.layout {
            Layout::Hash(m) => m.len(),
            Layout::Dense(m) => m.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether entries are found by entity index (true) or by hash.
    pub fn is_dense(&self) -> bool {
        matches!(self.layout, Layout::Dense(_))
    }

    /// The instance of `entity`.
    #[inline]
    pub fn get(&self, entity: Entity) -> Option<Instance> {
        match &self.layout {
            Layout::Hash(m) => m.get(entity),
            Layout::Dense(m) => m.get(entity),
        }
    }

    /// Whether `entity` has an entry.
    pub fn contains(&self, entity: Entity) -> bool {
        self.get(entity).is_some()
    }

    /// Sets the instance of `entity`; returns the previous one.
    pub fn insert(&mut self, entity: Entity, instance: Instance) -> Option<Instance> {
        self.span = self.span.max(entity.index() as usize + 1);
        let previous = match &mut self.layout {
            Layout::Hash(m) => m.insert(entity, instance),
            Layout::Dense(m) => m.insert(entity, instance),
        };
        self.settle(0);
        previous
    }

    /// Maps `entities[k]` to instance `first + k`, in order, choosing the layout for
    /// the entries there will be first. Stops at the first entity that already has an
    /// entry and returns its position in `entities`: the entries before it are made,
    /// it and those after it are not.
    pub fn insert_new(&mut self, entities: &[Entity], first: u32) -> Result<(), usize> {
        let top = entities.iter().map(|e| e.index() as usize + 1).max();
        self.span = self.span.max(top.unwrap_or(0));
        self.settle(entities.len());
        let result = match &mut self.layout {
            Layout::Hash(m) => m.insert_new(entities, first),
            Layout::Dense(m) => m.insert_new(entities, first),
        };
        self.settle(0);
        result
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

    /// Removes `entity`; returns its instance.
    pub fn remove(&mut self, entity: Entity) -> Option<Instance> {
        let removed = match &mut self.layout {
            Layout::Hash(m) => m.remove(entity),
            Layout::Dense(m) => m.remove(entity),
        };
        self.settle(0);
        removed
    }

    /// Changes the instance stored for `entity` if it is `from`.
    pub fn redirect(&mut self, entity: Entity, from: Instance, to: Instance) {
        match &mut self.layout {
            Layout::Hash(m) => m.redirect(entity, from, to),
            Layout::Dense(m) => m.redirect(entity, from, to),
        }
    }

    /// Switches the layout if the entries, with `coming` more on the way, suit the
    /// other one better.
    fn settle(&mut self, coming: usize) {
        let entries = self.len() + coming;
        let to_dense = match &self.layout {
            Layout::Hash(_) => entries >= MIN_DENSE && entries * 2 >= self.span,
            Layout::Dense(_) => !(entries * 8 < self.span && self.span > 8 * MIN_DENSE),
        };
        if to_dense == self.is_dense() {
            return;
        }
        let entries: Vec<(Entity, Instance)> = match &self.layout {
            Layout::Hash(m) => m.entries().collect(),
            Layout::Dense(m) => m.entries().collect(),
        };
        if !to_dense {
            // What is left may sit far below the old largest index; if it is still
            // dense there, it stays an array (else the next insert would switch back).
            self.span = entries
                .iter()
                .map(|(e, _)| e.index() as usize + 1)
                .max()
                .unwrap_or(0);
            if entries.len() >= MIN_DENSE && entries.len() * 2 >= self.span {
                return;
            }
        }
        self.layout = if to_dense {
            let mut m = DenseEntityMap::new();
            for (e, i) in entries {
                m.insert(e, i);
            }
            Layout::Dense(m)
        } else {
            let mut m = EntityMap::new();
            m.reserve(entries.len());
            for (e, i) in entries {
                m.insert(e, i);
            }
            Layout::Hash(m)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u32, u32, u32),
        Remove(u32, u32),
        Bulk(u32, u32, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Indices in a small range make it dense; in a wide one, sparse.
        let index = prop_oneof![0u32..200, 0u32..20_000];
        prop_oneof![
            (index.clone(), 0u32..2, 0u32..1000).prop_map(|(i, g, v)| Op::Insert(i, g, v)),
            (index.clone(), 0u32..2).prop_map(|(i, g)| Op::Remove(i, g)),
            (index, 1u32..300, 0u32..2).prop_map(|(i, n, g)| Op::Bulk(i, n, g)),
        ]
    }

    proptest! {
        // Each case may switch layouts several times over 20,000 indices.
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any mix of inserts, bulk inserts and removes agrees with std's HashMap,
        /// whichever layout the index is in and however often it switched.
        ///
        /// As in a world, an index holds one generation at a time: a new generation
        /// is inserted only once the old one's entry is gone. (A dense layout lets
        /// the new generation take the slot of a dead one still indexed, a hashed one
        /// keeps both; managers only ever remove the dead one, so either serves.)
        #[test]
        fn matches_a_model(ops in prop::collection::vec(op(), 1..120)) {
            let mut m = AdaptiveEntityMap::new();
            let mut model: HashMap<Entity, u32> = HashMap::new();
            let mut seen = Vec::new();
            let other_generation_present = |model: &HashMap<Entity, u32>, e: Entity| {
                [0, 1].into_iter().any(|g| g != e.generation() && model.contains_key(&Entity::new(e.index(), g)))
            };
            for op in ops {
                match op {
                    Op::Insert(i, g, _) if other_generation_present(&model, Entity::new(i, g)) => {}
                    Op::Bulk(start, n, g)
                        if (start..start + n).any(|i| other_generation_present(&model, Entity::new(i, g))) => {}
                    Op::Insert(i, g, v) => {
                        let e = Entity::new(i, g);
                        seen.push(e);
                        prop_assert_eq!(m.insert(e, Instance(v)).map(|x| x.0), model.insert(e, v));
                    }
                    Op::Remove(i, g) => {
                        let e = Entity::new(i, g);
                        prop_assert_eq!(m.remove(e).map(|x| x.0), model.remove(&e));
                    }
                    Op::Bulk(start, n, g) => {
                        let batch: Vec<Entity> = (start..start + n).map(|i| Entity::new(i, g)).collect();
                        let mut expected = Ok(());
                        for (k, &e) in batch.iter().enumerate() {
                            if model.contains_key(&e) {
                                expected = Err(k);
                                break;
                            }
                            model.insert(e, 7 + k as u32);
                        }
                        seen.extend(&batch);
                        prop_assert_eq!(m.insert_new(&batch, 7), expected);
                    }
                }
                prop_assert_eq!(m.len(), model.len());
            }
            for e in seen {
                prop_assert_eq!(m.get(e).map(|x| x.0), model.get(&e).copied());
            }
        }
    }

    #[test]
    fn a_full_level_is_dense_and_a_few_left_are_hashed() {
        let mut m = AdaptiveEntityMap::new();
        let level: Vec<Entity> = (0..10_000).map(|i| Entity::new(i, 0)).collect();
        m.insert_new(&level, 0).unwrap();
        assert!(m.is_dense());
        for &e in &level[..9_990] {
            m.remove(e);
        }
        assert!(!m.is_dense(), "10 entries over 10,000 indices stayed dense");
        assert_eq!(m.get(level[9_995]), Some(Instance(9_995)));
        // What is left at the bottom of a wide range is still dense there.
        let mut m = AdaptiveEntityMap::new();
        m.insert_new(&level, 0).unwrap();
        for &e in level[1_000..].iter().rev() {
            m.remove(e);
        }
        assert!(
            m.is_dense(),
            "1,000 entries over indices 0..1,000 went hashed"
        );
        assert_eq!(m.get(level[999]), Some(Instance(999)));
        let sparse: Vec<Entity> = (0..100).map(|i| Entity::new(i * 1000, 1)).collect();
        let mut m = AdaptiveEntityMap::new();
        m.insert_new(&sparse, 0).unwrap();
        assert!(!m.is_dense(), "100 entries over 100,000 indices went dense");
    }
}
