//! A world: one set of component managers (seed part 3: several worlds can exist, each
//! with its own managers, and one entity may have components in more than one).

use std::any::Any;

use crate::components::{
    DebugNameManager, MeshManager, OscillatorManager, PointMassManager, RotatorManager,
};
use crate::entity::{Entity, EntityManager};
use crate::manager::{ComponentManager, DestroyPolicy};
use crate::transform::TransformManager;

/// The component managers of one world.
///
/// Built-in managers are plain fields, so systems borrow exactly what they touch.
/// Component types defined outside `kiln_core` (plugins) add their managers with
/// [`World::add_extension`] and find them again with [`World::extension`].
#[derive(Default)]
pub struct World {
    /// The scene graph.
    pub transforms: TransformManager,
    /// Readable names.
    pub debug_names: DebugNameManager,
    /// What entities look like.
    pub meshes: MeshManager,
    /// Simulated point masses.
    pub point_masses: PointMassManager,
    /// Bobbing motion.
    pub oscillators: OscillatorManager,
    /// Spinning motion.
    pub rotators: RotatorManager,
    extensions: Vec<Box<dyn ComponentManager>>,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("transforms", &self.transforms.len())
            .field("debug_names", &self.debug_names.len())
            .field("meshes", &self.meshes.len())
            .field("point_masses", &self.point_masses.len())
            .field("oscillators", &self.oscillators.len())
            .field("rotators", &self.rotators.len())
            .field(
                "extensions",
                &self
                    .extensions
                    .iter()
                    .map(|m| m.type_name())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl World {
    /// An empty world.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the manager of a component type defined outside this crate. Its
    /// `simulate` runs after the built-in behaviours, in the order added.
    pub fn add_extension<M: ComponentManager>(&mut self, manager: M) {
        self.extensions.push(Box::new(manager));
    }

    /// The extension manager of type `M`, if added.
    pub fn extension<M: ComponentManager>(&self) -> Option<&M> {
        self.extensions
            .iter()
            .find_map(|m| (m.as_ref() as &dyn Any).downcast_ref::<M>())
    }

    /// The extension manager of type `M`, mutably.
    pub fn extension_mut<M: ComponentManager>(&mut self) -> Option<&mut M> {
        self.extensions
            .iter_mut()
            .find_map(|m| (m.as_mut() as &mut dyn Any).downcast_mut::<M>())
    }

    /// The extension manager whose [`ComponentManager::type_name`] is `name` (how a
    /// plugin's component types, all served by one manager type, find theirs).
    pub fn extension_named_mut(&mut self, name: &str) -> Option<&mut dyn ComponentManager> {
        self.extensions
            .iter_mut()
            .find(|m| m.type_name() == name)
            .map(|m| m.as_mut())
    }

    /// The manager of component type `name`, built in or added.
    pub fn manager_named_mut(&mut self, name: &str) -> Option<&mut dyn ComponentManager> {
        Some(match name {
            "transform" => &mut self.transforms,
            "debug_name" => &mut self.debug_names,
            "mesh" => &mut self.meshes,
            "point_mass" => &mut self.point_masses,
            "oscillator" => &mut self.oscillators,
            "rotator" => &mut self.rotators,
            _ => return self.extension_named_mut(name),
        })
    }

    fn for_each_manager(&mut self, mut f: impl FnMut(&mut dyn ComponentManager)) {
        f(&mut self.transforms);
        f(&mut self.debug_names);
        f(&mut self.meshes);
        f(&mut self.point_masses);
        f(&mut self.oscillators);
        f(&mut self.rotators);
        for m in &mut self.extensions {
            f(m.as_mut());
        }
    }

    /// Destroys `entity` and tells this world's managers that registered for
    /// immediate destruction; the others collect it in [`World::gc`]. For an entity
    /// that also lives in other worlds, call [`World::entity_destroyed`] on them.
    pub fn destroy(&mut self, entities: &mut EntityManager, entity: Entity) -> bool {
        if !entities.destroy(entity) {
            return false;
        }
        self.entity_destroyed(entity);
        true
    }

    /// Runs the destruction callbacks of this world's immediate managers.
    pub fn entity_destroyed(&mut self, entity: Entity) {
        self.for_each_manager(|m| {
            if m.destroy_policy() == DestroyPolicy::Immediate {
                m.destroy_entity(entity);
            }
        });
    }

    /// Destroys many entities and then removes all their components in one linear
    /// pass per manager (what despawning a level does).
    pub fn destroy_many(&mut self, entities: &mut EntityManager, batch: &[Entity]) {
        entities.destroy_many(batch);
        self.sweep(entities);
    }

    /// Lazy collection: a few random probes per manager; nearly free when nothing died.
    pub fn gc(&mut self, entities: &EntityManager) {
        self.for_each_manager(|m| m.gc(entities));
    }

    /// Removes every component of a dead entity from every manager.
    pub fn sweep(&mut self, entities: &EntityManager) {
        self.for_each_manager(|m| m.sweep(entities));
    }

    /// Steps every behaviour by `dt` seconds, one manager at a time over its whole
    /// array: point masses, then oscillators, then rotators, then extensions.
    /// `entities` answers which entities are alive (a plugin may ask).
    pub fn simulate(&mut self, dt: f32, entities: &EntityManager) {
        let transforms = &mut self.transforms;
        self.point_masses.simulate(dt, transforms, entities);
        self.oscillators.simulate(dt, transforms, entities);
        self.rotators.simulate(dt, transforms, entities);
        for m in &mut self.extensions {
            m.simulate(dt, transforms, entities);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in component type finds its manager by name (a patch of a
    /// running world destroys instances there), and no other name finds one.
    #[test]
    fn every_built_in_type_finds_its_manager_by_name() {
        let mut world = World::new();
        for ty in crate::registry::Registry::with_builtins().components() {
            let manager = world.manager_named_mut(&ty.name);
            assert_eq!(
                manager.map(|m| m.type_name().to_owned()),
                Some(ty.name.clone())
            );
        }
        assert!(world.manager_named_mut("no_such_type").is_none());
    }
}
