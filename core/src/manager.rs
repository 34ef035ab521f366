//! The type-erased face of a component manager ([`ComponentManager`]), through
//! which a [`World`](crate::world::World) keeps its managers' books, and how a
//! manager learns that its entities died ([`DestroyPolicy`]). It sits above the
//! transform manager (`transform.rs`, the scene graph), whose instances every
//! behaviour's `simulate` writes through; so the transform manager's own face is
//! here too, and the transform manager itself imports only the shared machinery
//! of `component.rs`. The other managers (`components/`) sit above both.

use std::any::Any;

use crate::component::{OwnedInstances, random_gc};
use crate::entity::{Entity, EntityManager};
use crate::transform::TransformManager;

/// How a manager learns that its entities died.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DestroyPolicy {
    /// The manager holds something external (a GPU buffer, a sound voice, a graph
    /// link others depend on) and is told at once by [`World::destroy`](crate::world::World::destroy).
    Immediate,
    /// The manager's components of dead entities are collected lazily by
    /// [`ComponentManager::gc`], which costs almost nothing when nothing died.
    Lazy,
}

/// The type-erased face of a component manager, used by [`World`](crate::world::World)
/// for bookkeeping that applies to all of them. Each manager's real API (lookup,
/// field access, creation) is on its concrete type.
///
/// Plugins implement this for their own managers and add them with
/// [`World::add_extension`](crate::world::World::add_extension).
pub trait ComponentManager: Any + Send {
    /// The registered component type name, e.g. `"point_mass"`.
    fn type_name(&self) -> &str;

    /// Number of component instances.
    fn len(&self) -> usize;

    /// Whether there are no instances.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// See [`DestroyPolicy`].
    fn destroy_policy(&self) -> DestroyPolicy {
        DestroyPolicy::Lazy
    }

    /// Destroys every instance owned by `entity`. Called right after the entity
    /// died for [`DestroyPolicy::Immediate`] managers.
    fn destroy_entity(&mut self, entity: Entity);

    /// The seed's randomized collection: pick random instances and destroy those
    /// whose entity is dead, until four living ones in a row are hit.
    fn gc(&mut self, entities: &EntityManager);

    /// Destroys every instance whose entity is dead, in one linear pass. Used after
    /// a bulk despawn, where random probing would be slow to converge.
    fn sweep(&mut self, entities: &EntityManager);

    /// Steps this manager's behaviour over all its instances at once. Behaviours
    /// that move things write through the transform manager of the same world.
    fn simulate(
        &mut self,
        _dt: f32,
        _transforms: &mut TransformManager,
        _entities: &EntityManager,
    ) {
    }
}

/// A manager's behaviour over all its instances at once, if it has one: what
/// [`ComponentManager::simulate`] runs for a built-in manager.
pub(crate) trait Simulates {
    fn simulate_all(
        &mut self,
        _dt: f32,
        _transforms: &mut TransformManager,
        _entities: &EntityManager,
    ) {
    }
}

/// The one face of every built-in manager, from what its storage gives
/// ([`OwnedInstances`]) and its behaviour ([`Simulates`]).
impl<T: OwnedInstances + Simulates + Any + Send> ComponentManager for T {
    fn type_name(&self) -> &str {
        T::TYPE_NAME
    }
    fn len(&self) -> usize {
        self.instance_count()
    }
    fn destroy_policy(&self) -> DestroyPolicy {
        if T::IMMEDIATE {
            DestroyPolicy::Immediate
        } else {
            DestroyPolicy::Lazy
        }
    }
    fn destroy_entity(&mut self, entity: Entity) {
        // Every instance: a mesh entity may own several.
        while let Some(i) = self.instance_of(entity) {
            self.destroy_index(i.index());
        }
    }
    fn gc(&mut self, entities: &EntityManager) {
        random_gc(self, entities);
    }
    fn sweep(&mut self, entities: &EntityManager) {
        self.sweep_dead_owners(entities);
    }
    fn simulate(&mut self, dt: f32, transforms: &mut TransformManager, entities: &EntityManager) {
        self.simulate_all(dt, transforms, entities);
    }
}

/// The scene graph has no behaviour of its own.
impl Simulates for TransformManager {}
