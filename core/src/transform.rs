//! The transform component: the entity scene graph of one world (seed part 3).
//!
//! Each instance stores a local and a world transform and four links (parent, first
//! child, next and previous sibling) as instance indices. World transforms are updated
//! immediately: [`TransformManager::set_local`] recomputes the node and its whole
//! subtree before it returns, so a world pose read anywhere is always current. The
//! subtree walk is iterative (it follows the links, no stack, no recursion).
//!
//! Instances are kept packed: destroying one moves the last instance into the hole and
//! patches every link that pointed at it.

use std::collections::HashMap;

use glam::{Affine3A, Quat, Vec3};

use crate::component::{Compaction, GcRng, Instance, NONE, OwnedInstances, sweep_dead};
use crate::dense_entity_map::DenseEntityMap;
use crate::entity::{Entity, EntityManager};

/// Owns the transforms of one world and the parent/child links between them.
#[derive(Debug, Default, Clone)]
pub struct TransformManager {
    entity: Vec<Entity>,
    local: Vec<Affine3A>,
    world: Vec<Affine3A>,
    parent: Vec<u32>,
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    prev_sibling: Vec<u32>,
    /// Nearly every entity of a level has one: indexed by entity index.
    map: DenseEntityMap,
    rng: GcRng,
    /// Bumped by every change to a pose or to the set of instances, so that a reader
    /// (the viewport) can tell that nothing moved without comparing poses.
    changes: u64,
}

/// One transform to create in a batch: see [`TransformManager::create_many`].
#[derive(Debug, Clone, Copy)]
pub struct NewTransform {
    /// Owner.
    pub entity: Entity,
    /// Pose relative to the parent (or the world, for roots).
    pub local: Affine3A,
    /// An existing instance, or one created earlier in the same batch.
    pub parent: Option<Instance>,
}

fn unlink_value(v: u32) -> Option<Instance> {
    (v != NONE).then_some(Instance(v))
}

impl TransformManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        self.entity.len()
    }

    /// Whether there are no instances.
    pub fn is_empty(&self) -> bool {
        self.entity.is_empty()
    }

    /// Reserves room for `additional` more instances in every array.
    pub fn reserve(&mut self, additional: usize) {
        self.entity.reserve(additional);
        self.local.reserve(additional);
        self.world.reserve(additional);
        self.parent.reserve(additional);
        self.first_child.reserve(additional);
        self.next_sibling.reserve(additional);
        self.prev_sibling.reserve(additional);
        self.map.reserve(additional);
    }

    /// The transform of `entity`, if it has one.
    #[inline]
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.map.get(entity)
    }

    /// The owner of `i`.
    pub fn entity(&self, i: Instance) -> Entity {
        self.entity[i.index()]
    }

    /// All owners, in instance order.
    pub fn entities(&self) -> &[Entity] {
        &self.entity
    }

    /// Pose relative to the parent.
    pub fn local(&self, i: Instance) -> Affine3A {
        self.local[i.index()]
    }

    /// Pose in the world; always current (updates are immediate).
    pub fn world(&self, i: Instance) -> Affine3A {
        self.world[i.index()]
    }

    /// All world poses, in instance order.
    pub fn world_poses(&self) -> &[Affine3A] {
        &self.world
    }

    /// The parent, if linked.
    pub fn parent(&self, i: Instance) -> Option<Instance> {
        unlink_value(self.parent[i.index()])
    }

    /// The children of `i`, in link order.
    pub fn children(&self, i: Instance) -> impl Iterator<Item = Instance> + '_ {
        let mut next = self.first_child[i.index()];
        std::iter::from_fn(move || {
            let current = unlink_value(next)?;
            next = self.next_sibling[current.index()];
            Some(current)
        })
    }

    /// Creates a transform for `entity`, linked under `parent` (its local pose is
    /// relative to the parent's world pose).
    ///
    /// # Panics
    /// If `entity` already has a transform in this world: that is a programming error.
    pub fn create(
        &mut self,
        entity: Entity,
        local: Affine3A,
        parent: Option<Instance>,
    ) -> Instance {
        let i = self.push(entity, local, local);
        if let Some(p) = parent {
            self.append_child(p.0, i.0);
        }
        self.update_subtree(i.0);
        i
    }

    /// Creates many transforms at once, in order. A parent must exist already or come
    /// earlier in `batch`. Children are appended after existing siblings, in batch
    /// order, and every world pose is computed in one forward pass.
    pub fn create_many(&mut self, batch: &[NewTransform]) -> Vec<Instance> {
        let first = self.entity.len() as u32;
        // Poses that are not finite are the caller's to refuse.
        let _finite = self.create_columns(
            batch.len(),
            |k| batch[k].entity,
            |k| batch[k].local,
            |k| batch[k].parent,
        );
        (first..self.entity.len() as u32).map(Instance).collect()
    }

    /// [`TransformManager::create_many`] without a batch to build first: the k-th new
    /// transform (`k` in `0..count`) belongs to `owner(k)`, has pose `local(k)` and
    /// parent `parent(k)`, an existing instance or one made earlier in this call
    /// (`len()` before the call, plus `j < k`). The spawner decodes blob records
    /// through these straight into the arrays.
    ///
    /// Each array is filled in its own pass (each function is called once per `k`,
    /// in order): one tight loop per array, where a push per array per transform
    /// would re-check every array's capacity and reload its length each time.
    ///
    /// Returns whether every new world pose is finite. A pose that is not makes
    /// its world pose, and its descendants', not finite either (IEEE arithmetic
    /// carries an infinity or NaN through every product), so a spawner that must
    /// reject such poses checks the result instead of each local pose: the world
    /// poses are in registers as they are computed.
    ///
    /// # Panics
    /// If an owner already has a transform, or a parent is neither an existing
    /// instance nor an earlier one of the batch: both are programming errors.
    pub fn create_columns(
        &mut self,
        count: usize,
        owner: impl Fn(usize) -> Entity,
        local: impl Fn(usize) -> Affine3A,
        parent: impl Fn(usize) -> Option<Instance>,
    ) -> bool {
        self.changes = self.changes.wrapping_add(1);
        let first = self.entity.len();
        self.entity.extend((0..count).map(&owner));
        if let Err(k) = self.map.insert_new(&self.entity[first..], first as u32) {
            panic!("{:?} already has a transform", self.entity[first + k]);
        }
        self.local.extend((0..count).map(&local));
        self.parent.extend((0..count).map(|k| {
            let p = parent(k).map_or(NONE, |p| p.0);
            assert!(
                p == NONE || (p as usize) < first + k,
                "parent {p} of new transform {k} is not an existing or earlier instance"
            );
            p
        }));
        let len = first + count;
        self.first_child.resize(len, NONE);
        self.next_sibling.resize(len, NONE);
        self.prev_sibling.resize(len, NONE);
        // Children of parents made in this batch are linked walking the batch
        // backwards, each put first in its parent's list: the lists come out in
        // batch order with no tail to look for. Children of parents that existed
        // before go after their existing siblings, found once per parent.
        let mut under_old_parents = Vec::new();
        // The arrays as plain slices: through `self`, each store could alias the
        // vectors' own pointers, which the loop would then reload every time.
        let (parents, first_child, next_sibling, prev_sibling) = (
            &self.parent[..],
            &mut self.first_child[..],
            &mut self.next_sibling[..],
            &mut self.prev_sibling[..],
        );
        for i in (first..len).rev() {
            let p = parents[i];
            if p == NONE {
                continue;
            }
            if (p as usize) < first {
                under_old_parents.push(i as u32);
                continue;
            }
            let head = first_child[p as usize];
            next_sibling[i] = head;
            if head != NONE {
                prev_sibling[head as usize] = i as u32;
            }
            first_child[p as usize] = i as u32;
        }
        let mut old_tail: HashMap<u32, u32> = HashMap::new();
        for &i in under_old_parents.iter().rev() {
            let p = self.parent[i as usize];
            let tail = old_tail.entry(p).or_insert(NONE);
            self.link_last_child(p, i, *tail);
            *tail = i;
        }
        // Parents come first, so each parent's world pose is final when its
        // children's are computed.
        self.world.reserve(count);
        // x * 0 is exactly ±0 for a finite x and NaN otherwise, and a NaN stays in
        // a sum: a multiply and an add per column, no compare and no branch per
        // pose.
        let (zero, mut poison) = (glam::Vec3A::ZERO, glam::Vec3A::ZERO);
        for i in first..len {
            let p = self.parent[i];
            let world = if p == NONE {
                self.local[i]
            } else {
                self.world[p as usize] * self.local[i]
            };
            let m = world.matrix3;
            poison +=
                (m.x_axis * zero + m.y_axis * zero) + (m.z_axis * zero + world.translation * zero);
            self.world.push(world);
        }
        poison == glam::Vec3A::ZERO
    }

    fn push(&mut self, entity: Entity, local: Affine3A, world: Affine3A) -> Instance {
        self.changes = self.changes.wrapping_add(1);
        let i = Instance(self.entity.len() as u32);
        let previous = self.map.insert(entity, i);
        assert!(previous.is_none(), "{entity:?} already has a transform");
        self.entity.push(entity);
        self.local.push(local);
        self.world.push(world);
        self.parent.push(NONE);
        self.first_child.push(NONE);
        self.next_sibling.push(NONE);
        self.prev_sibling.push(NONE);
        i
    }

    /// Appends `child` (currently unlinked) to `parent`'s children.
    fn append_child(&mut self, parent: u32, child: u32) {
        self.parent[child as usize] = parent;
        self.link_last_child(parent, child, NONE);
    }

    /// Links `child`, whose parent field already says `parent`, after `tail`, the
    /// known last child, or NONE to find the last child by walking.
    fn link_last_child(&mut self, parent: u32, child: u32, mut tail: u32) {
        if tail == NONE {
            tail = self.first_child[parent as usize];
            if tail != NONE {
                while self.next_sibling[tail as usize] != NONE {
                    tail = self.next_sibling[tail as usize];
                }
            }
        }
        if tail == NONE {
            self.first_child[parent as usize] = child;
        } else {
            self.next_sibling[tail as usize] = child;
            self.prev_sibling[child as usize] = tail;
        }
    }

    /// Takes `child` out of its parent's child list (its own subtree stays attached).
    fn detach(&mut self, child: u32) {
        let c = child as usize;
        let p = self.parent[c];
        if p == NONE {
            return;
        }
        let (prev, next) = (self.prev_sibling[c], self.next_sibling[c]);
        if prev == NONE {
            self.first_child[p as usize] = next;
        } else {
            self.next_sibling[prev as usize] = next;
        }
        if next != NONE {
            self.prev_sibling[next as usize] = prev;
        }
        self.parent[c] = NONE;
        self.prev_sibling[c] = NONE;
        self.next_sibling[c] = NONE;
    }

    /// Sets the pose relative to the parent and updates the world poses of `i` and
    /// its whole subtree at once.
    pub fn set_local(&mut self, i: Instance, local: Affine3A) {
        self.local[i.index()] = local;
        self.update_subtree(i.0);
    }

    /// Sets only the translation part of the local pose.
    pub fn set_local_translation(&mut self, i: Instance, translation: Vec3) {
        self.local[i.index()].translation = translation.into();
        self.update_subtree(i.0);
    }

    /// Sets the world pose of `i` (computing the local pose from the parent's).
    pub fn set_world(&mut self, i: Instance, world: Affine3A) {
        let local = match self.parent(i) {
            Some(p) => self.world[p.index()].inverse() * world,
            None => world,
        };
        self.set_local(i, local);
    }

    /// A number that changes whenever a world pose changes or an instance is created,
    /// destroyed or moved (it may change when nothing visible did, never the reverse).
    pub fn change_count(&self) -> u64 {
        self.changes
    }

    /// Recomputes the world pose of `root` and every node below it, iteratively.
    fn update_subtree(&mut self, root: u32) {
        self.changes = self.changes.wrapping_add(1);
        let r = root as usize;
        let p = self.parent[r];
        self.world[r] = if p == NONE {
            self.local[r]
        } else {
            self.world[p as usize] * self.local[r]
        };
        let mut node = self.first_child[r];
        while node != NONE {
            let n = node as usize;
            self.world[n] = self.world[self.parent[n] as usize] * self.local[n];
            if self.first_child[n] != NONE {
                node = self.first_child[n];
                continue;
            }
            // No children: go to the next sibling, climbing until one exists, and
            // stop when the climb is back at the root.
            let mut up = node;
            loop {
                let next = self.next_sibling[up as usize];
                if next != NONE {
                    node = next;
                    break;
                }
                up = self.parent[up as usize];
                if up == root {
                    return;
                }
            }
        }
    }

    /// Links `child` under `parent` (or makes it a root with `None`). With
    /// `keep_world_pose` the child stays where it is in the world and its local pose
    /// is recomputed; otherwise its local pose is kept and it moves with the new
    /// parent. Returns `false` and changes nothing if `parent` is `child` or one of its
    /// descendants (that would make a cycle).
    pub fn set_parent(
        &mut self,
        child: Instance,
        parent: Option<Instance>,
        keep_world_pose: bool,
    ) -> bool {
        if let Some(p) = parent {
            let mut up = p.0;
            while up != NONE {
                if up == child.0 {
                    return false;
                }
                up = self.parent[up as usize];
            }
        }
        let world = self.world[child.index()];
        self.detach(child.0);
        if let Some(p) = parent {
            self.append_child(p.0, child.0);
        }
        if keep_world_pose {
            self.set_world(child, world);
        } else {
            self.update_subtree(child.0);
        }
        true
    }

    /// Destroys the transform of `i`. Its children become roots and keep their world
    /// pose. The last instance moves into the hole, with all links to it patched.
    pub fn destroy(&mut self, i: Instance) {
        self.changes = self.changes.wrapping_add(1);
        let children: Vec<Instance> = self.children(i).collect();
        for c in children {
            self.set_parent(c, None, true);
        }
        self.detach(i.0);
        self.map.remove(self.entity[i.index()]);
        let last = self.entity.len() as u32 - 1;
        if i.0 != last {
            self.move_instance(last, i.0);
        }
        self.pop_slot();
    }

    /// Drops the last slot of every array (after its instance was moved away).
    fn pop_slot(&mut self) {
        self.entity.pop();
        self.local.pop();
        self.world.pop();
        self.parent.pop();
        self.first_child.pop();
        self.next_sibling.pop();
        self.prev_sibling.pop();
    }

    /// Swaps two instances, keeping every link intact. Uses the seed's three steps
    /// with a temporary slot at the end of the arrays: A -> temp, B -> A, temp -> B.
    pub fn swap(&mut self, a: Instance, b: Instance) {
        if a == b {
            return;
        }
        self.changes = self.changes.wrapping_add(1);
        let temp = self.entity.len() as u32;
        self.entity.push(self.entity[a.index()]);
        self.local.push(Affine3A::IDENTITY);
        self.world.push(Affine3A::IDENTITY);
        self.parent.push(NONE);
        self.first_child.push(NONE);
        self.next_sibling.push(NONE);
        self.prev_sibling.push(NONE);
        self.move_instance(a.0, temp);
        self.move_instance(b.0, a.0);
        self.move_instance(temp, b.0);
        self.pop_slot();
    }

    /// Moves the instance at `from` to slot `to` (whose old content is dropped) and
    /// redirects every link that pointed at `from`.
    fn move_instance(&mut self, from: u32, to: u32) {
        let (f, t) = (from as usize, to as usize);
        let parent = self.parent[f];
        if parent != NONE && self.first_child[parent as usize] == from {
            self.first_child[parent as usize] = to;
        }
        let prev = self.prev_sibling[f];
        if prev != NONE {
            self.next_sibling[prev as usize] = to;
        }
        let next = self.next_sibling[f];
        if next != NONE {
            self.prev_sibling[next as usize] = to;
        }
        let mut child = self.first_child[f];
        while child != NONE {
            self.parent[child as usize] = to;
            child = self.next_sibling[child as usize];
        }
        self.entity[t] = self.entity[f];
        self.local[t] = self.local[f];
        self.world[t] = self.world[f];
        self.parent[t] = parent;
        self.first_child[t] = self.first_child[f];
        self.next_sibling[t] = next;
        self.prev_sibling[t] = prev;
        self.map
            .redirect(self.entity[t], Instance(from), Instance(to));
    }
}

impl OwnedInstances for TransformManager {
    const TYPE_NAME: &'static str = "transform";
    /// Transforms are destroyed at once: children of a dead entity must be
    /// unlinked before anyone reads their world pose.
    const IMMEDIATE: bool = true;
    fn instance_count(&self) -> usize {
        self.entity.len()
    }
    fn owner(&self, index: usize) -> Entity {
        self.entity[index]
    }
    fn destroy_index(&mut self, index: usize) {
        self.destroy(Instance(index as u32));
    }
    fn gc_rng(&mut self) -> &mut GcRng {
        &mut self.rng
    }
    fn instance_of(&self, entity: Entity) -> Option<Instance> {
        self.lookup(entity)
    }
    fn sweep_dead_owners(&mut self, entities: &EntityManager) {
        self.sweep_dead(entities);
    }
}

impl TransformManager {
    /// Destroys every transform of a dead entity: a few one by one, many (a level
    /// despawned) in one pass.
    pub(crate) fn sweep_dead(&mut self, entities: &EntityManager) {
        match Compaction::of_dead(&self.entity, entities) {
            Some(plan) => self.remove_in_one_pass(&plan),
            None => sweep_dead(self, entities),
        }
    }

    /// Removes what `plan` removes, in one pass: what destroying them one by one
    /// would give (children of a destroyed parent become roots at the same world
    /// pose; siblings keep their order), without re-rooting children that are going
    /// too. Instances keep their relative order.
    fn remove_in_one_pass(&mut self, plan: &Compaction) {
        self.changes = self.changes.wrapping_add(1);
        let n = self.entity.len();
        let new_index = |i: u32| plan.new_index(i);
        let kept = plan.kept();
        // Child lists, rebuilt in each kept parent's old link order.
        let mut first_child = vec![NONE; kept];
        let mut next_sibling = vec![NONE; kept];
        let mut prev_sibling = vec![NONE; kept];
        for p in 0..n {
            let np = new_index(p as u32);
            if np == NONE {
                continue;
            }
            let mut tail = NONE;
            let mut c = self.first_child[p];
            while c != NONE {
                let nc = new_index(c);
                if nc != NONE {
                    if tail == NONE {
                        first_child[np as usize] = nc;
                    } else {
                        next_sibling[tail as usize] = nc;
                        prev_sibling[nc as usize] = tail;
                    }
                    tail = nc;
                }
                c = self.next_sibling[c as usize];
            }
        }
        // Kept instances move down (a new index is never above the old one).
        for i in 0..n {
            let ni = new_index(i as u32);
            if ni == NONE {
                self.map.remove(self.entity[i]);
                continue;
            }
            let ni = ni as usize;
            let p = self.parent[i];
            let (parent, local) = match p {
                NONE => (NONE, self.local[i]),
                // A destroyed parent: a root where it stands.
                p if new_index(p) == NONE => (NONE, self.world[i]),
                p => (new_index(p), self.local[i]),
            };
            self.entity[ni] = self.entity[i];
            self.local[ni] = local;
            self.world[ni] = self.world[i];
            self.parent[ni] = parent;
            if ni != i {
                self.map
                    .redirect(self.entity[ni], Instance(i as u32), Instance(ni as u32));
            }
        }
        self.entity.truncate(kept);
        self.local.truncate(kept);
        self.world.truncate(kept);
        self.parent.truncate(kept);
        self.first_child = first_child;
        self.next_sibling = next_sibling;
        self.prev_sibling = prev_sibling;
    }
}

/// Builds a local pose from translation, rotation and scale.
pub fn trs(translation: Vec3, rotation: Quat, scale: Vec3) -> Affine3A {
    Affine3A::from_scale_rotation_translation(scale, rotation, translation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::ComponentManager;
    use proptest::prelude::*;

    fn entities(n: usize) -> Vec<Entity> {
        let mut em = EntityManager::new();
        let mut out = Vec::new();
        em.create_many(n, &mut out);
        out
    }

    fn t(x: f32) -> Affine3A {
        Affine3A::from_translation(Vec3::new(x, 0.0, 0.0))
    }

    /// Checks every link is mutual and every world pose equals parent * local.
    fn assert_consistent(tm: &TransformManager) {
        for i in 0..tm.len() {
            let ii = Instance(i as u32);
            assert_eq!(tm.lookup(tm.entity(ii)), Some(ii));
            let expected = match tm.parent(ii) {
                Some(p) => {
                    assert!(
                        tm.children(p).any(|c| c == ii),
                        "{i} missing from its parent's children"
                    );
                    tm.world(p) * tm.local(ii)
                }
                None => tm.local(ii),
            };
            assert!(
                tm.world(ii).abs_diff_eq(expected, 1e-3),
                "world pose of {i} is stale"
            );
            for c in tm.children(ii) {
                assert_eq!(tm.parent(c), Some(ii));
            }
            if let Some(n) = unlink_value(tm.next_sibling[i]) {
                assert_eq!(tm.prev_sibling[n.index()], i as u32);
            }
        }
    }

    #[test]
    fn moving_a_parent_moves_the_subtree_immediately() {
        let e = entities(3);
        let mut tm = TransformManager::new();
        let a = tm.create(e[0], t(1.0), None);
        let b = tm.create(e[1], t(2.0), Some(a));
        let c = tm.create(e[2], t(3.0), Some(b));
        assert_eq!(tm.world(c).translation.x, 6.0);
        tm.set_local(a, t(10.0));
        assert_eq!(tm.world(b).translation.x, 12.0);
        assert_eq!(tm.world(c).translation.x, 15.0);
        assert_consistent(&tm);
    }

    #[test]
    fn destroy_keeps_links_and_children_keep_their_pose() {
        let e = entities(4);
        let mut tm = TransformManager::new();
        let a = tm.create(e[0], t(1.0), None);
        let b = tm.create(e[1], t(2.0), Some(a));
        let _c = tm.create(e[2], t(3.0), Some(b));
        let _d = tm.create(e[3], t(4.0), Some(a));
        tm.destroy(b);
        assert_consistent(&tm);
        let c = tm.lookup(e[2]).unwrap();
        assert_eq!(tm.parent(c), None);
        assert_eq!(tm.world(c).translation.x, 6.0);
        assert_eq!(tm.children(tm.lookup(e[0]).unwrap()).count(), 1);
    }

    #[test]
    fn parenting_under_a_descendant_is_refused() {
        let e = entities(2);
        let mut tm = TransformManager::new();
        let a = tm.create(e[0], t(1.0), None);
        let b = tm.create(e[1], t(2.0), Some(a));
        assert!(!tm.set_parent(a, Some(b), true));
        assert!(!tm.set_parent(a, Some(a), true));
        assert_consistent(&tm);
    }

    #[test]
    fn create_many_keeps_sibling_order() {
        let e = entities(4);
        let mut tm = TransformManager::new();
        let root = tm.create(e[0], t(1.0), None);
        let batch: Vec<_> = e[1..]
            .iter()
            .map(|&entity| NewTransform {
                entity,
                local: t(1.0),
                parent: Some(root),
            })
            .collect();
        let made = tm.create_many(&batch);
        assert_eq!(tm.children(root).collect::<Vec<_>>(), made);
        assert_consistent(&tm);
    }

    proptest! {
        /// A batch whose parents are earlier in the batch or existed before (with
        /// children of their own) links and poses exactly as creating one by one.
        #[test]
        fn create_many_matches_create_one_by_one(
            before in proptest::collection::vec((proptest::option::of(any::<prop::sample::Index>()), -3.0f32..3.0), 0..12),
            batch in proptest::collection::vec((proptest::option::of(any::<prop::sample::Index>()), -3.0f32..3.0), 1..24),
        ) {
            let e = entities(before.len() + batch.len());
            let mut bulk = TransformManager::new();
            for (k, &(parent, x)) in before.iter().enumerate() {
                let parent = parent.filter(|_| k > 0).map(|p| Instance(p.index(k) as u32));
                bulk.create(e[k], t(x), parent);
            }
            let mut single = bulk.clone();
            let first = before.len();
            let new: Vec<NewTransform> = batch
                .iter()
                .enumerate()
                .map(|(k, &(parent, x))| NewTransform {
                    entity: e[first + k],
                    local: t(x) * Affine3A::from_rotation_z(x),
                    parent: parent
                        .filter(|_| first + k > 0)
                        .map(|p| Instance(p.index(first + k) as u32)),
                })
                .collect();
            bulk.create_many(&new);
            for n in &new {
                single.create(n.entity, n.local, n.parent);
            }
            assert_consistent(&bulk);
            for i in 0..single.len() {
                let i = Instance(i as u32);
                prop_assert_eq!(bulk.entity(i), single.entity(i));
                prop_assert_eq!(bulk.parent(i), single.parent(i));
                prop_assert_eq!(bulk.children(i).collect::<Vec<_>>(), single.children(i).collect::<Vec<_>>());
                prop_assert_eq!(bulk.world(i), single.world(i));
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Create {
            parent: Option<usize>,
            x: f32,
            angle: f32,
        },
        Reparent {
            child: usize,
            parent: Option<usize>,
        },
        SetLocal {
            node: usize,
            x: f32,
        },
        Destroy(usize),
        Swap(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let f = -10.0f32..10.0;
        prop_oneof![
            4 => (proptest::option::of(any::<usize>()), f.clone(), -3.0f32..3.0)
                .prop_map(|(parent, x, angle)| Op::Create { parent, x, angle }),
            2 => (any::<usize>(), proptest::option::of(any::<usize>()))
                .prop_map(|(child, parent)| Op::Reparent { child, parent }),
            2 => (any::<usize>(), f).prop_map(|(node, x)| Op::SetLocal { node, x }),
            1 => any::<usize>().prop_map(Op::Destroy),
            1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Swap(a, b)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Differential: removing many transforms in one pass gives what destroying
        /// them one by one gives: for every survivor the same parent, the same
        /// children in the same order and the same world pose.
        #[test]
        fn one_pass_removal_matches_destroying_one_by_one(
            parents in proptest::collection::vec(proptest::option::of(0usize..1000), 1..60),
            dies in proptest::collection::vec(any::<bool>(), 60),
            xs in proptest::collection::vec(-10.0f32..10.0, 60),
        ) {
            let owners = entities(parents.len());
            let mut tm = TransformManager::new();
            for (i, p) in parents.iter().enumerate() {
                // A parent made earlier, or a root.
                let parent = p.filter(|_| i > 0).map(|p| Instance((p % i) as u32));
                tm.create(owners[i], t(xs[i]) * Affine3A::from_rotation_y(xs[i]), parent);
            }
            let dead: Vec<Entity> = owners.iter().zip(&dies).filter(|(_, d)| **d).map(|(e, _)| *e).collect();
            let mut one_by_one = tm.clone();
            for &e in &dead {
                one_by_one.destroy_entity(e);
            }
            let mut one_pass = tm.clone();
            one_pass.remove_in_one_pass(&Compaction::keeping(&tm.entity, |e| !dead.contains(&e)));
            assert_consistent(&one_pass);
            prop_assert_eq!(one_pass.len(), one_by_one.len());
            let describe = |tm: &TransformManager, e: Entity| {
                let i = tm.lookup(e).unwrap();
                let parent = tm.parent(i).map(|p| tm.entity(p));
                let children: Vec<Entity> = tm.children(i).map(|c| tm.entity(c)).collect();
                (parent, children, tm.world(i))
            };
            for &e in owners.iter().filter(|e| !dead.contains(e)) {
                let (p1, c1, w1) = describe(&one_pass, e);
                let (p2, c2, w2) = describe(&one_by_one, e);
                prop_assert_eq!(p1, p2);
                prop_assert_eq!(c1, c2);
                prop_assert!(w1.abs_diff_eq(w2, 1e-3), "{:?} vs {:?}", w1, w2);
            }
            for &e in &dead {
                prop_assert!(one_pass.lookup(e).is_none());
            }
        }

        /// Any sequence of operations keeps links mutual and world poses current, and
        /// reparenting with keep_world_pose never moves the child in the world.
        #[test]
        fn graph_stays_consistent_and_reparent_keeps_world_pose(ops in prop::collection::vec(op(), 1..80)) {
            let mut em = EntityManager::new();
            let mut tm = TransformManager::new();
            for op in ops {
                let n = tm.len();
                let pick = |k: usize| Instance((k % n.max(1)) as u32);
                match op {
                    Op::Create { parent, x, angle } => {
                        let local = Affine3A::from_rotation_translation(Quat::from_rotation_y(angle), Vec3::new(x, 1.0, -x));
                        let parent = if n == 0 { None } else { parent.map(pick) };
                        tm.create(em.create(), local, parent);
                    }
                    _ if n == 0 => {}
                    Op::Reparent { child, parent } => {
                        let (child, parent) = (pick(child), parent.map(pick));
                        let before = tm.world(child);
                        if tm.set_parent(child, parent, true) {
                            prop_assert!(tm.world(child).abs_diff_eq(before, 1e-3),
                                "reparent moved the child: {before:?} -> {:?}", tm.world(child));
                            prop_assert_eq!(tm.parent(child), parent);
                        }
                    }
                    Op::SetLocal { node, x } => tm.set_local(pick(node), t(x)),
                    Op::Destroy(k) => tm.destroy(pick(k)),
                    Op::Swap(a, b) => {
                        let (ea, eb) = (tm.entity(pick(a)), tm.entity(pick(b)));
                        let (wa, wb) = (tm.world(pick(a)), tm.world(pick(b)));
                        tm.swap(pick(a), pick(b));
                        prop_assert_eq!(tm.entity(pick(a)), eb);
                        prop_assert_eq!(tm.entity(pick(b)), ea);
                        prop_assert!(tm.world(pick(b)).abs_diff_eq(wa, 1e-6));
                        prop_assert!(tm.world(pick(a)).abs_diff_eq(wb, 1e-6));
                    }
                }
                assert_consistent(&tm);
            }
        }
    }
}
