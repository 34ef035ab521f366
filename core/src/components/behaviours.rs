//! Behaviours that make a preview visibly live: oscillators bob entities back and
//! forth, rotators spin them. Each steps all its instances in one pass and writes
//! through the world's transform manager.

use glam::{Quat, Vec3};

use crate::adaptive_entity_map::AdaptiveEntityMap;
use crate::component::{GcRng, Instance, OwnedInstances};
use crate::entity::{Entity, EntityManager};
use crate::manager::Simulates;
use crate::transform::TransformManager;

/// Moves an entity along `amplitude * sin(2π · frequency · t + phase)` around the
/// local position it had when spawned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Oscillator {
    /// Peak offset per axis, in metres.
    pub amplitude: Vec3,
    /// Cycles per second.
    pub frequency: f32,
    /// Phase offset in radians.
    pub phase: f32,
    /// The local translation the motion is centred on.
    pub center: Vec3,
}

/// Owns oscillators.
#[derive(Debug, Default, Clone)]
pub struct OscillatorManager {
    entity: Vec<Entity>,
    data: Vec<Oscillator>,
    time: f32,
    /// Hashed while few entities have one, by entity index while most do.
    map: AdaptiveEntityMap,
    rng: GcRng,
}

impl OscillatorManager {
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

    /// The instance of `entity`.
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.map.get(entity)
    }
    /// The data of `i`.
    pub fn get(&self, i: Instance) -> Oscillator {
        self.data[i.index()]
    }
    /// Adds an oscillator to `entity`.
    pub fn create(&mut self, entity: Entity, data: Oscillator) -> Instance {
        let i = Instance(self.entity.len() as u32);
        self.map.insert(entity, i);
        self.entity.push(entity);
        self.data.push(data);
        i
    }
    /// Removes the oscillator at `i` (swap-erase).
    pub fn destroy(&mut self, i: Instance) {
        let (idx, last) = (i.index(), self.entity.len() - 1);
        self.map.remove(self.entity[idx]);
        self.entity.swap_remove(idx);
        self.data.swap_remove(idx);
        if idx != last {
            self.map.insert(self.entity[idx], i);
        }
    }
}

impl OwnedInstances for OscillatorManager {
    const TYPE_NAME: &'static str = "oscillator";
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
}

impl Simulates for OscillatorManager {
    fn simulate_all(
        &mut self,
        dt: f32,
        transforms: &mut TransformManager,
        _entities: &EntityManager,
    ) {
        self.time += dt;
        let t = self.time;
        for (&e, o) in self.entity.iter().zip(&self.data) {
            if let Some(ti) = transforms.lookup(e) {
                let s = (std::f32::consts::TAU * o.frequency * t + o.phase).sin();
                transforms.set_local_translation(ti, o.center + o.amplitude * s);
            }
        }
    }
}

/// Spins an entity about a local axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rotator {
    /// Unit axis in the entity's local frame.
    pub axis: Vec3,
    /// Degrees per second.
    pub speed: f32,
}

/// Owns rotators.
#[derive(Debug, Default, Clone)]
pub struct RotatorManager {
    entity: Vec<Entity>,
    data: Vec<Rotator>,
    /// Hashed while few entities have one, by entity index while most do.
    map: AdaptiveEntityMap,
    rng: GcRng,
}

impl RotatorManager {
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

    /// The instance of `entity`.
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.map.get(entity)
    }
    /// The data of `i`.
    pub fn get(&self, i: Instance) -> Rotator {
        self.data[i.index()]
    }
    /// Adds a rotator to `entity`.
    pub fn create(&mut self, entity: Entity, data: Rotator) -> Instance {
        let i = Instance(self.entity.len() as u32);
        self.map.insert(entity, i);
        self.entity.push(entity);
        self.data.push(data);
        i
    }
    /// Removes the rotator at `i` (swap-erase).
    pub fn destroy(&mut self, i: Instance) {
        let (idx, last) = (i.index(), self.entity.len() - 1);
        self.map.remove(self.entity[idx]);
        self.entity.swap_remove(idx);
        self.data.swap_remove(idx);
        if idx != last {
            self.map.insert(self.entity[idx], i);
        }
    }
}

impl OwnedInstances for RotatorManager {
    const TYPE_NAME: &'static str = "rotator";
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
}

impl Simulates for RotatorManager {
    fn simulate_all(
        &mut self,
        dt: f32,
        transforms: &mut TransformManager,
        _entities: &EntityManager,
    ) {
        for (&e, r) in self.entity.iter().zip(&self.data) {
            if let Some(ti) = transforms.lookup(e) {
                let spin = Quat::from_axis_angle(r.axis, (r.speed * dt).to_radians());
                let local = transforms.local(ti) * glam::Affine3A::from_quat(spin);
                transforms.set_local(ti, local);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::ComponentManager;
    use glam::Affine3A;

    #[test]
    fn oscillator_and_rotator_move_their_transform() {
        let mut em = EntityManager::new();
        let e = em.create();
        let mut tm = TransformManager::new();
        tm.create(e, Affine3A::from_translation(Vec3::Y), None);
        let mut osc = OscillatorManager::new();
        osc.create(
            e,
            Oscillator {
                amplitude: Vec3::X * 2.0,
                frequency: 0.25,
                phase: 0.0,
                center: Vec3::Y,
            },
        );
        osc.simulate(1.0, &mut tm, &EntityManager::new()); // quarter period: sin = 1
        let t = tm.lookup(e).unwrap();
        assert!(Vec3::from(tm.world(t).translation).abs_diff_eq(Vec3::new(2.0, 1.0, 0.0), 1e-5));

        let mut rot = RotatorManager::new();
        rot.create(
            e,
            Rotator {
                axis: Vec3::Y,
                speed: 90.0,
            },
        );
        rot.simulate(1.0, &mut tm, &EntityManager::new());
        let x = tm.world(t).transform_vector3(Vec3::X);
        assert!(x.abs_diff_eq(Vec3::new(0.0, 0.0, -1.0), 1e-5), "{x}");
    }
}
