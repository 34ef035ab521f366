//! Entities: index + generation ids and the [`EntityManager`] that hands them out.
//!
//! An [`Entity`] is a 64-bit id: the low 32 bits are an *index* into the manager's
//! generation array, the high 32 bits the *generation* of that slot when the id was
//! made. [`EntityManager::alive`] is then one array load and one compare.
//!
//! # Why 32 + 32 bits
//!
//! The Bitsquid design packs 22 index bits and 8 generation bits into 30 bits because
//! the id had to fit a Lua light userdata. Kiln has no such constraint and targets
//! 64-bit machines, so it takes the seed's advice and spends more bits:
//!
//! * 32 index bits: up to 4 billion simultaneous entities, far past anything a level
//!   holds, so [`EntityManager::create`] never runs out of slots in practice.
//! * 32 generation bits: together with the free-index queue (below), an id can only
//!   reappear after `2^32 * 1024` destroy cycles of the same slot, which is never
//!   within the life of a process.
//!
//! The cost is a `u32` generation per slot instead of a `u8` (4 MB instead of 1 MB
//! for a million slots). `alive` is still one load; the benchmark in `BENCHMARKS.md`
//! shows create / alive / destroy on par with `slotmap`, which uses the same 32 + 32
//! split.
//!
//! # Recycling
//!
//! Destroyed indices go to the back of a FIFO queue and are only taken from its front
//! once more than [`MINIMUM_FREE_INDICES`] are waiting. A slot therefore sits out at
//! least 1024 other destroys before it is used again, so its generation only wraps
//! after `2^32` laps of the queue.

use std::collections::VecDeque;
use std::fmt;

/// Number of bits of an [`Entity`] id that hold the index.
pub const ENTITY_INDEX_BITS: u32 = 32;
/// Number of bits of an [`Entity`] id that hold the generation.
pub const ENTITY_GENERATION_BITS: u32 = 32;
/// Recycled indices are only reused once more than this many are free.
pub const MINIMUM_FREE_INDICES: usize = 1024;

const INDEX_MASK: u64 = (1 << ENTITY_INDEX_BITS) - 1;

/// A weak reference to a game object: an index + generation id.
///
/// An entity owns nothing; component managers associate data with it.
/// Use [`EntityManager::alive`] to tell whether it still refers to a living entity.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity(u64);

impl Entity {
    /// Builds an id from its two parts.
    pub const fn new(index: u32, generation: u32) -> Self {
        Entity(((generation as u64) << ENTITY_INDEX_BITS) | index as u64)
    }

    /// The slot in the manager's arrays.
    pub const fn index(self) -> u32 {
        (self.0 & INDEX_MASK) as u32
    }

    /// Which use of the slot this id refers to.
    pub const fn generation(self) -> u32 {
        (self.0 >> ENTITY_INDEX_BITS) as u32
    }

    /// The raw 64-bit id, e.g. for hashing or storing outside Rust.
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// Rebuilds an entity from [`Entity::to_bits`].
    pub const fn from_bits(bits: u64) -> Self {
        Entity(bits)
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entity({}v{})", self.index(), self.generation())
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index(), self.generation())
    }
}

/// Keeps track of which entities are alive.
///
/// ```
/// use kiln_core::EntityManager;
///
/// let mut entities = EntityManager::new();
/// let e = entities.create();
/// assert!(entities.alive(e));
/// entities.destroy(e);
/// assert!(!entities.alive(e));
/// ```
#[derive(Debug, Default, Clone)]
pub struct EntityManager {
    generation: Vec<u32>,
    free_indices: VecDeque<u32>,
}

impl EntityManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Creates one entity.
    #[inline]
    pub fn create(&mut self) -> Entity {
        let index = if self.free_indices.len() > MINIMUM_FREE_INDICES {
            // Checked just above: the queue is not empty.
            let index = self.free_indices.pop_front().unwrap_or_default();
            // Odd while free; even again, and new, for the next use.
            let g = &mut self.generation[index as usize];
            *g = g.wrapping_add(1);
            index
        } else {
            let index = self.generation.len();
            // Index u32::MAX is never handed out: the entity hash index uses it to
            // mark empty slots.
            assert!(
                index < u32::MAX as usize,
                "more than 2^32 - 1 simultaneous entities"
            );
            self.generation.push(0);
            index as u32
        };
        Entity::new(index, self.generation[index as usize])
    }

    /// Creates `count` entities at once and appends them to `out`.
    ///
    /// Takes recycled indices while more than [`MINIMUM_FREE_INDICES`] are free,
    /// then grows the generation array in one step for the rest.
    pub fn create_many(&mut self, count: usize, out: &mut Vec<Entity>) {
        out.reserve(count);
        let recycled = self
            .free_indices
            .len()
            .saturating_sub(MINIMUM_FREE_INDICES)
            .min(count);
        for index in self.free_indices.drain(..recycled) {
            let g = &mut self.generation[index as usize];
            *g = g.wrapping_add(1);
            out.push(Entity::new(index, *g));
        }
        let fresh = count - recycled;
        let first = self.generation.len();
        assert!(
            first + fresh <= u32::MAX as usize,
            "more than 2^32 - 1 simultaneous entities"
        );
        self.generation.resize(first + fresh, 0);
        out.extend((first..first + fresh).map(|index| Entity::new(index as u32, 0)));
    }

    /// Whether `entity` refers to a living entity: one this manager issued and has
    /// not destroyed.
    ///
    /// A slot's generation is even while it is in use and odd while it is free
    /// (destroying and reusing each add one), so a handle never issued (the
    /// generation after a freed slot's, say) is not alive, at no cost in memory;
    /// a slot is reused 2^31 times before its handles repeat.
    #[inline]
    pub fn alive(&self, entity: Entity) -> bool {
        entity.generation() & 1 == 0
            && self.generation.get(entity.index() as usize) == Some(&entity.generation())
    }

    /// Destroys `entity`. Returns `false` (and does nothing) if it was not alive.
    ///
    /// Component managers learn of it either through
    /// [`World::destroy`](crate::world::World::destroy) (managers that must react at once) or
    /// lazily through their `gc`.
    #[inline]
    pub fn destroy(&mut self, entity: Entity) -> bool {
        // One lookup: a live slot's generation is even, so a handle matching an
        // odd (free) one was never issued.
        let Some(generation) = self.generation.get_mut(entity.index() as usize) else {
            return false;
        };
        if *generation != entity.generation() || entity.generation() & 1 != 0 {
            return false;
        }
        *generation = generation.wrapping_add(1);
        self.free_indices.push_back(entity.index());
        true
    }

    /// Destroys every entity of `entities` that is alive; returns how many were.
    pub fn destroy_many(&mut self, entities: &[Entity]) -> usize {
        entities.iter().filter(|&&e| self.destroy(e)).count()
    }

    /// Number of living entities.
    pub fn len(&self) -> usize {
        self.generation.len() - self.free_indices.len()
    }

    /// Whether no entity is alive.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn bits_round_trip() {
        let e = Entity::new(0xDEAD_BEEF, 0x1234_5678);
        assert_eq!(e.index(), 0xDEAD_BEEF);
        assert_eq!(e.generation(), 0x1234_5678);
        assert_eq!(Entity::from_bits(e.to_bits()), e);
    }

    #[test]
    fn destroy_twice_is_a_no_op() {
        let mut em = EntityManager::new();
        let e = em.create();
        assert!(em.destroy(e));
        assert!(!em.destroy(e));
        assert_eq!(em.len(), 0);
    }

    #[test]
    fn indices_are_not_recycled_until_the_queue_is_long() {
        let mut em = EntityManager::new();
        let first = em.create();
        em.destroy(first);
        // Fewer than MINIMUM_FREE_INDICES free: new slots are made.
        for _ in 0..MINIMUM_FREE_INDICES {
            let e = em.create();
            assert_ne!(e.index(), first.index());
            em.destroy(e);
        }
        // Now the queue holds more than the minimum and the oldest index comes back
        // with a new generation (two on: odd was the free slot's).
        let again = em.create();
        assert_eq!(again.index(), first.index());
        assert_eq!(again.generation(), first.generation() + 2);
        assert!(!em.alive(first));
        assert!(em.alive(again));
    }

    #[test]
    fn create_many_matches_create() {
        let mut bulk = EntityManager::new();
        let mut single = EntityManager::new();
        let mut out = Vec::new();
        bulk.create_many(3000, &mut out);
        let singles: Vec<_> = (0..3000).map(|_| single.create()).collect();
        assert_eq!(out, singles);
        for (&a, &b) in out.iter().zip(&singles).take(2000) {
            bulk.destroy(a);
            single.destroy(b);
        }
        let mut out2 = Vec::new();
        bulk.create_many(1500, &mut out2);
        let singles2: Vec<_> = (0..1500).map(|_| single.create()).collect();
        assert_eq!(out2, singles2);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Create(usize),
        /// Destroy up to `.0` living entities, picked from `.1`.
        Destroy(usize, usize),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![
                3 => (1usize..40).prop_map(Op::Create),
                2 => (1usize..60, any::<usize>()).prop_map(|(n, k)| Op::Destroy(n, k)),
            ],
            1..600,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// No id is ever handed out twice, an index is never reused before at least
        /// MINIMUM_FREE_INDICES other destroys happened after its own, and `alive`
        /// agrees with a model set.
        #[test]
        fn ids_are_never_reused_early(ops in ops()) {
            let mut em = EntityManager::new();
            let mut issued = HashSet::new();
            let mut living: Vec<Entity> = Vec::new();
            // Destroy counter value when each index was last freed.
            let mut freed_at: HashMap<u32, usize> = HashMap::new();
            let mut destroys = 0usize;
            for op in ops {
                match op {
                    Op::Create(n) => {
                        let mut out = Vec::new();
                        if n % 2 == 0 { em.create_many(n, &mut out) } else { out.extend((0..n).map(|_| em.create())) }
                        for e in out {
                            prop_assert!(issued.insert(e), "id {e:?} issued twice");
                            if let Some(at) = freed_at.remove(&e.index()) {
                                prop_assert!(destroys - at >= MINIMUM_FREE_INDICES,
                                    "index {} reused after only {} destroys", e.index(), destroys - at);
                            }
                            living.push(e);
                        }
                    }
                    Op::Destroy(n, k) => {
                        for _ in 0..n {
                            if living.is_empty() { break; }
                            let e = living.swap_remove(k % living.len());
                            prop_assert!(em.destroy(e));
                            freed_at.insert(e.index(), destroys);
                            destroys += 1;
                        }
                    }
                }
                prop_assert_eq!(em.len(), living.len());
            }
            for e in &issued {
                prop_assert_eq!(em.alive(*e), living.contains(e));
            }
        }
    }

    #[test]
    fn a_handle_never_issued_is_not_alive() {
        let mut entities = EntityManager::new();
        let e = entities.create();
        assert!(entities.destroy(e));
        // The generation after the freed slot's: never issued.
        let forged = Entity::new(e.index(), e.generation() + 1);
        assert!(!entities.alive(forged));
        assert!(!entities.destroy(forged));
        // Positive control: the slot's next use is alive, with a new generation.
        let mut made = Vec::new();
        for _ in 0..=MINIMUM_FREE_INDICES {
            made.push(entities.create());
        }
        let mut reused = Vec::new();
        for m in &made {
            entities.destroy(*m);
        }
        entities.create_many(2, &mut reused);
        let again = reused.iter().find(|r| r.index() == e.index()).copied();
        if let Some(again) = again {
            assert!(entities.alive(again));
            assert_ne!(again.generation(), e.generation());
            assert!(!entities.alive(e));
        }
    }
}
