//! The type-erased face of a component manager ([`ComponentManager`]), through
//! which a [`World`](crate::world::World) keeps its managers' books, and how a
//! manager learns that its entities died ([`DestroyPolicy`]). It sits above the
//! transform manager (`transform.rs`, the scene graph), whose instances every
//! behaviour's `simulate` writes through; so the transform manager's own face is
//! here too, and the transform manager itself imports only the shared machinery
//! of `component.rs`. The other managers (`components/`) sit above both.

use std::any::Any;

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

impl ComponentManager for TransformManager {
    fn type_name(&self) -> &str {
        "transform"
    }
    fn len(&self) -> usize {
        TransformManager::len(self)
    }
    /// Transforms are destroyed at once: children of a dead entity must be unlinked
    /// before anyone reads their world pose.
    fn destroy_policy(&self) -> DestroyPolicy {
        DestroyPolicy::Immediate
    }
    fn destroy_entity(&mut self, entity: Entity) {
        if let Some(i) = self.lookup(entity) {
            self.destroy(i);
        }
    }
    fn gc(&mut self, entities: &EntityManager) {
        crate::component::random_gc(self, entities);
    }
    fn sweep(&mut self, entities: &EntityManager) {
        self.sweep_dead(entities);
    }
}
