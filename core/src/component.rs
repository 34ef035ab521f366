//! What every component manager shares: the [`Instance`] handle, the one-pass
//! removal, and the [`ComponentManager`] trait through which a [`World`](crate::world::World)
//! collects garbage and steps behaviours without knowing the concrete type.
//!
//! The trait names one concrete manager, [`TransformManager`], on purpose: a
//! behaviour's `simulate` writes world poses through it, as the seed's
//! behaviours write through the transform component's API, and the transform
//! manager is the one manager every world has. A trait over "something with
//! poses" instead would put a virtual call on every pose a behaviour writes,
//! to break an import the crate does not need broken (the transform manager
//! implements this trait, and the two are one concept in the seed: components
//! and the scene graph they hang from).

use crate::entity::{Entity, EntityManager};

/// A handle to one component instance: its position in the manager's arrays.
///
/// Handles are only valid until the next destroy in the same manager (destroys
/// swap the last instance into the hole); look the entity up again after one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instance(pub u32);

impl Instance {
    /// The index into the manager's arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Marks "no instance" in the link arrays of the transform graph.
pub(crate) const NONE: u32 = u32::MAX;

/// Small xorshift generator for the randomized gc; no external crate needed and
/// deterministic per manager, which keeps tests reproducible.
#[derive(Clone, Debug)]
pub(crate) struct GcRng(u64);

impl Default for GcRng {
    fn default() -> Self {
        GcRng(0x2545_F491_4F6C_DD1D)
    }
}

impl GcRng {
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }
}

/// The per-instance view the shared gc and sweep need of a manager.
/// Each built-in manager gives this of its storage, and nothing else for the
/// world's books: the one `ComponentManager` impl for all of them is in
/// `manager.rs`.
pub(crate) trait OwnedInstances {
    /// The registered component type name.
    const TYPE_NAME: &'static str;
    /// Destroyed at once when its entity dies (`DestroyPolicy::Immediate`), not
    /// collected lazily.
    const IMMEDIATE: bool = false;
    fn instance_count(&self) -> usize;
    fn owner(&self, index: usize) -> Entity;
    /// An instance `entity` owns, if any (one of them, where it can own several).
    fn instance_of(&self, entity: Entity) -> Option<Instance>;
    fn destroy_index(&mut self, index: usize);
    fn gc_rng(&mut self) -> &mut GcRng;
    /// Destroys every instance of a dead entity: one by one ([`sweep_dead`]),
    /// unless the manager removes many in one pass.
    fn sweep_dead_owners(&mut self, entities: &EntityManager)
    where
        Self: Sized,
    {
        sweep_dead(self, entities);
    }
}

/// The seed's randomized gc, shared by every lazy manager.
pub(crate) fn random_gc(manager: &mut impl OwnedInstances, entities: &EntityManager) {
    let mut alive_in_row = 0;
    loop {
        let n = manager.instance_count();
        if n == 0 || alive_in_row >= 4 {
            break;
        }
        let i = manager.gc_rng().below(n);
        if entities.alive(manager.owner(i)) {
            alive_in_row += 1;
        } else {
            alive_in_row = 0;
            manager.destroy_index(i);
        }
    }
}

/// Destroys every instance of a dead entity. Walks backwards so that the instance
/// swapped into a hole has already been checked.
pub(crate) fn sweep_dead(manager: &mut impl OwnedInstances, entities: &EntityManager) {
    let mut i = manager.instance_count();
    while i > 0 {
        i -= 1;
        if i < manager.instance_count() && !entities.alive(manager.owner(i)) {
            manager.destroy_index(i);
        }
    }
}

/// A one-pass removal of instances: which stay and where each moves. `sweep` uses it
/// when many died at once (a level despawned), where a swap-remove per dead instance
/// would patch the index and move the last instance once for each. Kept instances
/// keep their relative order.
pub(crate) struct Compaction {
    /// New position of each old instance, or [`NONE`] for a removed one.
    new_index: Vec<u32>,
    kept: usize,
}

impl Compaction {
    /// Keeps the instances whose owner `keep` accepts.
    pub(crate) fn keeping(owners: &[Entity], keep: impl Fn(Entity) -> bool) -> Self {
        let mut kept = 0u32;
        let new_index = owners
            .iter()
            .map(|&e| {
                if keep(e) {
                    kept += 1;
                    kept - 1
                } else {
                    NONE
                }
            })
            .collect();
        Compaction {
            new_index,
            kept: kept as usize,
        }
    }

    /// Removes the instances of dead owners, if at least a quarter of them are dead;
    /// fewer are cheaper to remove one by one.
    pub(crate) fn of_dead(owners: &[Entity], entities: &EntityManager) -> Option<Self> {
        let plan = Self::keeping(owners, |e| entities.alive(e));
        let dead = owners.len() - plan.kept;
        (dead > 0 && dead * 4 >= owners.len()).then_some(plan)
    }

    /// How many instances stay.
    pub(crate) fn kept(&self) -> usize {
        self.kept
    }

    /// The new position of old instance `old`, or [`NONE`] if it is removed.
    pub(crate) fn new_index(&self, old: u32) -> u32 {
        self.new_index.get(old as usize).copied().unwrap_or(NONE)
    }

    /// Each old instance with its new position ([`NONE`] if removed).
    pub(crate) fn moves(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0u32..).zip(self.new_index.iter().copied())
    }

    /// Drops the removed instances' entries of `column`, in one pass.
    pub(crate) fn apply<T>(&self, column: &mut Vec<T>) {
        // `retain` visits each element once, in order.
        let mut old = 0;
        column.retain(|_| {
            old += 1;
            self.new_index(old - 1) != NONE
        });
    }
}
