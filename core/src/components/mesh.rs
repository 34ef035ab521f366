//! Meshes: what an entity looks like. A mesh component references a mesh resource
//! and a material resource by id (the hash of their canonical paths); the resource
//! data itself lives elsewhere and is shared by every instance (seed part 4).
//!
//! An entity may have several meshes. They form a linked list through
//! `next_instance`, starting from the instance the hash index points at (the seed's
//! "exercise for the reader").

use crate::component::{Compaction, GcRng, Instance, NONE, OwnedInstances, sweep_dead};
use crate::dense_entity_map::DenseEntityMap;
use crate::entity::{Entity, EntityManager};
use crate::manager::Simulates;
use crate::path::ResourceId;

/// The data of one mesh instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mesh {
    /// The `.mesh` resource.
    pub mesh: ResourceId,
    /// The `.material` resource.
    pub material: ResourceId,
    /// Hidden meshes stay in the world but are not drawn.
    pub visible: bool,
}

/// Owns meshes; allows several per entity.
#[derive(Debug, Default, Clone)]
pub struct MeshManager {
    entity: Vec<Entity>,
    mesh: Vec<ResourceId>,
    material: Vec<ResourceId>,
    visible: Vec<bool>,
    next_instance: Vec<u32>,
    /// Nearly every entity of a level has one: indexed by entity index.
    map: DenseEntityMap,
    rng: GcRng,
    /// Bumped by every change (see [`MeshManager::change_count`]).
    changes: u64,
}

impl MeshManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// The first mesh of `entity`.
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.map.get(entity)
    }

    /// Every mesh of `entity`, in creation order.
    pub fn instances_of(&self, entity: Entity) -> impl Iterator<Item = Instance> + '_ {
        let mut next = self.lookup(entity).map_or(NONE, |i| i.0);
        std::iter::from_fn(move || {
            (next != NONE).then(|| {
                let i = Instance(next);
                next = self.next_instance[i.index()];
                i
            })
        })
    }

    /// A number that changes whenever a mesh is created, destroyed, moved or shown
    /// or hidden, so that a reader can tell that nothing changed without comparing.
    pub fn change_count(&self) -> u64 {
        self.changes
    }

    /// Adds a mesh to `entity` (after any it already has).
    pub fn create(&mut self, entity: Entity, data: Mesh) -> Instance {
        self.changes = self.changes.wrapping_add(1);
        let i = Instance(self.entity.len() as u32);
        self.entity.push(entity);
        self.mesh.push(data.mesh);
        self.material.push(data.material);
        self.visible.push(data.visible);
        self.next_instance.push(NONE);
        self.link(i);
        i
    }

    /// Makes the new instance `i` its owner's first mesh, or appends it to the
    /// owner's list (one lookup when the owner has no mesh yet, the common case).
    fn link(&mut self, i: Instance) {
        let head = self.map.get_or_insert(self.entity[i.index()], i);
        if head != i {
            let mut tail = head.0;
            while self.next_instance[tail as usize] != NONE {
                tail = self.next_instance[tail as usize];
            }
            self.next_instance[tail as usize] = i.0;
        }
    }

    /// Adds `count` meshes at once: the k-th belongs to `owner(k)` and holds
    /// `data(k)`, and goes after any mesh its owner already has. Each array is filled
    /// in its own pass, and the index in one call for owners without a mesh yet (a
    /// spawned level's).
    pub fn create_columns(
        &mut self,
        count: usize,
        owner: impl Fn(usize) -> Entity,
        data: impl Fn(usize) -> Mesh,
    ) {
        self.changes = self.changes.wrapping_add(1);
        let first = self.entity.len();
        let len = first + count;
        // One pass per array; `data` is cheap and pure, so the compiler keeps only
        // the field each pass needs.
        self.entity.extend((0..count).map(owner));
        self.mesh.extend((0..count).map(|k| data(k).mesh));
        self.material.extend((0..count).map(|k| data(k).material));
        self.visible.extend((0..count).map(|k| data(k).visible));
        self.next_instance.resize(len, NONE);
        if let Err(k) = self.map.insert_new(&self.entity[first..], first as u32) {
            // An owner with a mesh already, or a second mesh in this batch.
            for i in first + k..len {
                self.link(Instance(i as u32));
            }
        }
    }

    /// Number of mesh instances.
    pub fn len(&self) -> usize {
        self.entity.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entity.is_empty()
    }

    /// The owner of `i`.
    pub fn entity(&self, i: Instance) -> Entity {
        self.entity[i.index()]
    }
    /// The data of `i`.
    pub fn get(&self, i: Instance) -> Mesh {
        Mesh {
            mesh: self.mesh[i.index()],
            material: self.material[i.index()],
            visible: self.visible[i.index()],
        }
    }
    /// Shows or hides `i`.
    pub fn set_visible(&mut self, i: Instance, visible: bool) {
        self.changes = self.changes.wrapping_add(1);
        self.visible[i.index()] = visible;
    }

    /// Removes the mesh at `i`: unlinks it from its entity's list, then swap-erases
    /// and redirects whatever pointed at the moved last instance.
    pub fn destroy(&mut self, i: Instance) {
        self.changes = self.changes.wrapping_add(1);
        let idx = i.index();
        let owner = self.entity[idx];
        self.unlink(owner, i.0, self.next_instance[idx]);
        let last = (self.entity.len() - 1) as u32;
        if i.0 != last {
            let moved = self.entity[last as usize];
            // Whoever pointed at `last` now points at `i`.
            self.unlink(moved, last, i.0);
            self.entity.swap_remove(idx);
            self.mesh.swap_remove(idx);
            self.material.swap_remove(idx);
            self.visible.swap_remove(idx);
            self.next_instance.swap_remove(idx);
        } else {
            self.entity.pop();
            self.mesh.pop();
            self.material.pop();
            self.visible.pop();
            self.next_instance.pop();
        }
    }

    /// Replaces the link to `target` in `owner`'s list with `replacement`.
    fn unlink(&mut self, owner: Entity, target: u32, replacement: u32) {
        match self.map.get(owner) {
            Some(head) if head.0 == target => {
                if replacement == NONE {
                    self.map.remove(owner);
                } else {
                    self.map.insert(owner, Instance(replacement));
                }
            }
            Some(head) => {
                let mut node = head.0;
                while node != NONE {
                    let next = self.next_instance[node as usize];
                    if next == target {
                        self.next_instance[node as usize] = replacement;
                        return;
                    }
                    node = next;
                }
            }
            None => {}
        }
    }
}

impl OwnedInstances for MeshManager {
    const TYPE_NAME: &'static str = "mesh";
    /// Meshes stand for render resources (GPU buffers in a full engine), which
    /// must be released when the entity dies, so they use the destruction callback.
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
        // A few dead: destroyed one by one. Many (a level despawned): one pass.
        match Compaction::of_dead(&self.entity, entities) {
            Some(plan) => self.remove_in_one_pass(&plan),
            None => sweep_dead(self, entities),
        }
    }
}

impl Simulates for MeshManager {}

impl MeshManager {
    /// Removes what `plan` removes. An entity's meshes die together, so a kept
    /// mesh's list holds only kept meshes, renumbered.
    fn remove_in_one_pass(&mut self, plan: &Compaction) {
        self.changes = self.changes.wrapping_add(1);
        for (old, new) in plan.moves() {
            let owner = self.entity[old as usize];
            if new == NONE {
                self.map.remove(owner);
            } else {
                if new != old {
                    self.map.redirect(owner, Instance(old), Instance(new));
                }
                let next = &mut self.next_instance[old as usize];
                if *next != NONE {
                    *next = plan.new_index(*next);
                }
            }
        }
        plan.apply(&mut self.entity);
        plan.apply(&mut self.mesh);
        plan.apply(&mut self.material);
        plan.apply(&mut self.visible);
        plan.apply(&mut self.next_instance);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mesh(n: u64) -> Mesh {
        Mesh {
            mesh: ResourceId(n),
            material: ResourceId(n + 1000),
            visible: true,
        }
    }

    proptest! {
        /// Any mix of creates and destroys keeps each entity's list exactly the model's.
        #[test]
        fn lists_match_a_model(ops in prop::collection::vec((0usize..6, any::<bool>(), any::<usize>()), 1..120)) {
            let mut em = EntityManager::new();
            let owners: Vec<Entity> = (0..6).map(|_| em.create()).collect();
            let mut mm = MeshManager::new();
            let mut model: Vec<Vec<u64>> = vec![Vec::new(); 6];
            let mut next = 0u64;
            for (owner, create, k) in ops {
                if create || model[owner].is_empty() {
                    mm.create(owners[owner], mesh(next));
                    model[owner].push(next);
                    next += 1;
                } else {
                    let pos = k % model[owner].len();
                    let victim = mm.instances_of(owners[owner]).nth(pos).unwrap();
                    mm.destroy(victim);
                    model[owner].remove(pos);
                }
                for (o, expected) in model.iter().enumerate() {
                    let got: Vec<u64> = mm.instances_of(owners[o]).map(|i| mm.get(i).mesh.0).collect();
                    prop_assert_eq!(&got, expected);
                }
            }
        }
    }
}
