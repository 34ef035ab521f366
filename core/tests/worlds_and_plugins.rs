//! Several worlds side by side, and a component type defined outside kiln_core
//! (as a plugin would) going through registration, compile, spawn, simulate and gc.
// Test helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use glam::{Affine3A, Vec3};
use kiln_core::components::TransformManager;
use kiln_core::registry::RecordReader;
use kiln_core::{
    ComponentBatch, ComponentManager, ComponentType, Entity, EntityManager, FieldSchema,
    FieldValues, Registry, SpawnContext, World, compile_level, spawn_level,
};

#[test]
fn one_entity_can_live_in_two_worlds() {
    let mut em = EntityManager::new();
    let (mut game, mut inventory) = (World::new(), World::new());
    let pickaxe = em.create();
    game.transforms.create(
        pickaxe,
        Affine3A::from_translation(Vec3::new(10.0, 0.0, 0.0)),
        None,
    );
    inventory.transforms.create(
        pickaxe,
        Affine3A::from_translation(Vec3::new(0.0, 1.0, 0.0)),
        None,
    );
    let at = |w: &World| {
        Vec3::from(
            w.transforms
                .world(w.transforms.lookup(pickaxe).unwrap())
                .translation,
        )
    };
    assert_eq!(at(&game), Vec3::new(10.0, 0.0, 0.0));
    assert_eq!(at(&inventory), Vec3::new(0.0, 1.0, 0.0));

    // Destroyed through one world: the other is told with entity_destroyed.
    assert!(game.destroy(&mut em, pickaxe));
    inventory.entity_destroyed(pickaxe);
    assert!(game.transforms.lookup(pickaxe).is_none());
    assert!(inventory.transforms.lookup(pickaxe).is_none());
}

/// A plugin's component: lifts its entity by `rate` metres per second.
#[derive(Default)]
struct LiftManager {
    entity: Vec<Entity>,
    rate: Vec<f32>,
}

impl ComponentManager for LiftManager {
    fn type_name(&self) -> &str {
        "lift"
    }
    fn len(&self) -> usize {
        self.entity.len()
    }
    fn destroy_entity(&mut self, entity: Entity) {
        if let Some(i) = self.entity.iter().position(|&e| e == entity) {
            self.entity.swap_remove(i);
            self.rate.swap_remove(i);
        }
    }
    fn gc(&mut self, entities: &EntityManager) {
        self.sweep(entities);
    }
    fn sweep(&mut self, entities: &EntityManager) {
        let mut i = 0;
        while i < self.entity.len() {
            if entities.alive(self.entity[i]) {
                i += 1;
            } else {
                self.entity.swap_remove(i);
                self.rate.swap_remove(i);
            }
        }
    }
    fn simulate(&mut self, dt: f32, transforms: &mut TransformManager, _entities: &EntityManager) {
        for (&e, &rate) in self.entity.iter().zip(&self.rate) {
            if let Some(t) = transforms.lookup(e) {
                let mut local = transforms.local(t);
                local.translation.y += rate * dt;
                transforms.set_local(t, local);
            }
        }
    }
}

fn compile_lift(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    out.extend_from_slice(&f.f32("rate").to_le_bytes());
    Ok(())
}

fn spawn_lift(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    let records: Vec<&[u8]> = batch.fixed_records(4)?.collect();
    let lifts = ctx
        .world
        .extension_mut::<LiftManager>()
        .ok_or("the lift manager is not in this world")?;
    for (i, r) in records.into_iter().enumerate() {
        lifts.entity.push(batch.owner(i));
        lifts.rate.push(RecordReader::new(r).f32());
    }
    Ok(())
}

#[test]
fn plugin_component_types_compile_spawn_and_simulate() {
    let mut registry = Registry::with_builtins();
    registry
        .register_component(
            ComponentType::new("lift", 40, compile_lift, spawn_lift)
                .with_doc("Raises the entity at a constant rate.")
                .with_fields(vec![FieldSchema::float("rate", 1.0, -100.0, 100.0)]),
        )
        .unwrap();
    let level = r#"{"entities": [
        {"id": "platform", "components": {"transform": {"position": [0, 1, 0]}, "lift": {"rate": 2}}},
        {"id": "crate", "parent": "platform", "components": {"transform": {"position": [0, 0.5, 0]}}}
    ]}"#;
    let blob = compile_level(&registry, &mut HashMap::new(), "levels/lift.level", level)
        .unwrap()
        .blob;

    let (mut em, mut world) = (EntityManager::new(), World::new());
    world.add_extension(LiftManager::default());
    let spawned = spawn_level(&blob, &registry, &mut em, &mut world).unwrap();
    world.simulate(0.5, &em);
    let crate_t = world
        .transforms
        .lookup(spawned.entity("crate").unwrap())
        .unwrap();
    assert_eq!(world.transforms.world(crate_t).translation.y, 2.5);

    world.despawn(&mut em, &spawned);
    assert_eq!(world.extension::<LiftManager>().unwrap().len(), 0);

    // A world without the plugin's manager reports it instead of panicking.
    let mut bare = World::new();
    let err = spawn_level(&blob, &registry, &mut em, &mut bare).unwrap_err();
    assert!(
        err.to_string()
            .contains("the lift manager is not in this world"),
        "{err}"
    );
    assert_eq!(bare.transforms.len(), 0);
}

/// A component type defined at run time (as a loaded plugin's is) carries its own
/// state in its compile and spawn functions: here a unit conversion chosen when the
/// type is registered, and a count of the instances spawned.
#[test]
fn component_types_can_carry_state() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let scale = 100.0_f32; // metres -> centimetres, decided at registration
    let spawned = Arc::new(AtomicUsize::new(0));
    let counter = spawned.clone();
    let mut registry = Registry::with_builtins();
    registry
        .register_component(
            ComponentType::new(
                "lift",
                40,
                move |f: &FieldValues, out: &mut Vec<u8>| {
                    out.extend_from_slice(&(f.f32("rate") * scale).to_le_bytes());
                    Ok(())
                },
                move |ctx: &mut SpawnContext, batch: &ComponentBatch| {
                    counter.fetch_add(batch.fixed_records(4)?.count(), Ordering::SeqCst);
                    spawn_lift(ctx, batch)
                },
            )
            .with_fields(vec![FieldSchema::float("rate", 1.0, -100.0, 100.0)]),
        )
        .unwrap();
    let level = r#"{"entities": [
        {"id": "a", "components": {"transform": {}, "lift": {"rate": 2}}},
        {"id": "b", "components": {"transform": {}, "lift": {"rate": 3}}}
    ]}"#;
    let blob = compile_level(&registry, &mut HashMap::new(), "levels/l.level", level)
        .unwrap()
        .blob;
    let (mut em, mut world) = (EntityManager::new(), World::new());
    world.add_extension(LiftManager::default());
    spawn_level(&blob, &registry, &mut em, &mut world).unwrap();
    assert_eq!(spawned.load(Ordering::SeqCst), 2);
    let lifts = world.extension::<LiftManager>().unwrap();
    let mut rates = lifts.rate.clone();
    rates.sort_by(f32::total_cmp);
    assert_eq!(rates, [200.0, 300.0]);
}
