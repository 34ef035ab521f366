//! Point masses (seed part 2's example): mass, position, velocity and acceleration,
//! integrated for every instance in one pass by [`PointMassManager::simulate`].
//!
//! The simulated position drives the owner's transform, so a point mass is visible in
//! the preview: its position starts at the transform's world translation when spawned.

use glam::Vec3;

use crate::adaptive_entity_map::AdaptiveEntityMap;
use crate::component::{Compaction, GcRng, Instance, OwnedInstances, sweep_dead};
use crate::entity::{Entity, EntityManager};
use crate::manager::Simulates;
use crate::transform::TransformManager;

/// The data of one point mass, for creating instances.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointMass {
    /// Mass in kilograms.
    pub mass: f32,
    /// Position in world space.
    pub position: Vec3,
    /// Velocity in metres per second.
    pub velocity: Vec3,
    /// Constant acceleration (gravity, thrust) in metres per second squared.
    pub acceleration: Vec3,
}

/// Owns point masses as a structure of arrays.
#[derive(Debug, Default, Clone)]
pub struct PointMassManager {
    entity: Vec<Entity>,
    mass: Vec<f32>,
    position: Vec<Vec3>,
    velocity: Vec<Vec3>,
    acceleration: Vec<Vec3>,
    /// Hashed while few entities have one, by entity index while most do.
    map: AdaptiveEntityMap,
    rng: GcRng,
}

impl PointMassManager {
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

    /// The instance of `entity`, if it has one.
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.map.get(entity)
    }

    /// Adds a point mass to `entity`.
    pub fn create(&mut self, entity: Entity, data: PointMass) -> Instance {
        let i = Instance(self.entity.len() as u32);
        self.map.insert(entity, i);
        self.entity.push(entity);
        self.mass.push(data.mass);
        self.position.push(data.position);
        self.velocity.push(data.velocity);
        self.acceleration.push(data.acceleration);
        i
    }

    /// Adds `count` point masses at once: the k-th belongs to `owner(k)` and holds
    /// `data(k)`. Each array is filled in its own pass and the index in one call.
    /// An owner that has a point mass already is pointed at its new one, as
    /// [`PointMassManager::create`] does.
    pub fn create_columns(
        &mut self,
        count: usize,
        owner: impl Fn(usize) -> Entity,
        data: impl Fn(usize) -> PointMass,
    ) {
        let first = self.entity.len();
        // One pass per array; `data` is cheap and pure, so the compiler keeps only
        // the field each pass needs.
        self.entity.extend((0..count).map(owner));
        self.mass.extend((0..count).map(|k| data(k).mass));
        self.position.extend((0..count).map(|k| data(k).position));
        self.velocity.extend((0..count).map(|k| data(k).velocity));
        self.acceleration
            .extend((0..count).map(|k| data(k).acceleration));
        self.map.insert_all(&self.entity[first..], first as u32);
    }

    /// Mass of `i`.
    pub fn mass(&self, i: Instance) -> f32 {
        self.mass[i.index()]
    }
    /// Sets the mass of `i`.
    pub fn set_mass(&mut self, i: Instance, mass: f32) {
        self.mass[i.index()] = mass;
    }
    /// Position of `i`.
    pub fn position(&self, i: Instance) -> Vec3 {
        self.position[i.index()]
    }
    /// Velocity of `i`.
    pub fn velocity(&self, i: Instance) -> Vec3 {
        self.velocity[i.index()]
    }
    /// Sets the velocity of `i`.
    pub fn set_velocity(&mut self, i: Instance, v: Vec3) {
        self.velocity[i.index()] = v;
    }
    /// Acceleration of `i`.
    pub fn acceleration(&self, i: Instance) -> Vec3 {
        self.acceleration[i.index()]
    }

    /// Integrates every point mass by `dt` seconds (semi-implicit Euler).
    pub fn integrate(&mut self, dt: f32) {
        for ((v, a), p) in self
            .velocity
            .iter_mut()
            .zip(&self.acceleration)
            .zip(&mut self.position)
        {
            *v += *a * dt;
            *p += *v * dt;
        }
    }

    /// Removes the point mass at `i` (swap-erase).
    pub fn destroy(&mut self, i: Instance) {
        let (idx, last) = (i.index(), self.entity.len() - 1);
        self.map.remove(self.entity[idx]);
        self.entity.swap_remove(idx);
        self.mass.swap_remove(idx);
        self.position.swap_remove(idx);
        self.velocity.swap_remove(idx);
        self.acceleration.swap_remove(idx);
        if idx != last {
            self.map.insert(self.entity[idx], i);
        }
    }
}

impl PointMassManager {
    /// Removes what `plan` removes. The index is rebuilt from the kept instances in
    /// one bulk insert: removing entries one by one costs more, and with most of
    /// them gone the index changes layout midway (measured: a respawn +65%).
    fn remove_in_one_pass(&mut self, plan: &Compaction) {
        plan.apply(&mut self.entity);
        self.map = AdaptiveEntityMap::new();
        self.map.insert_all(&self.entity, 0);
        plan.apply(&mut self.mass);
        plan.apply(&mut self.position);
        plan.apply(&mut self.velocity);
        plan.apply(&mut self.acceleration);
    }
}

impl OwnedInstances for PointMassManager {
    const TYPE_NAME: &'static str = "point_mass";
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

impl Simulates for PointMassManager {
    /// Integrates all masses, then writes each position to its owner's transform.
    fn simulate_all(
        &mut self,
        dt: f32,
        transforms: &mut TransformManager,
        _entities: &EntityManager,
    ) {
        self.integrate(dt);
        for (&e, &p) in self.entity.iter().zip(&self.position) {
            if let Some(t) = transforms.lookup(e) {
                let mut world = transforms.world(t);
                world.translation = p.into();
                transforms.set_world(t, world);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::ComponentManager;

    #[test]
    fn simulate_integrates_and_moves_the_transform() {
        let mut em = EntityManager::new();
        let e = em.create();
        let mut tm = TransformManager::new();
        tm.create(e, glam::Affine3A::IDENTITY, None);
        let mut pm = PointMassManager::new();
        pm.create(
            e,
            PointMass {
                mass: 1.0,
                position: Vec3::ZERO,
                velocity: Vec3::X,
                acceleration: Vec3::new(0.0, -10.0, 0.0),
            },
        );
        pm.simulate(0.5, &mut tm, &EntityManager::new());
        let i = pm.lookup(e).unwrap();
        assert_eq!(pm.velocity(i), Vec3::new(1.0, -5.0, 0.0));
        assert_eq!(pm.position(i), Vec3::new(0.5, -2.5, 0.0));
        let t = tm.lookup(e).unwrap();
        assert_eq!(
            Vec3::from(tm.world(t).translation),
            Vec3::new(0.5, -2.5, 0.0)
        );
    }
}
