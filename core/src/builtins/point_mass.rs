//! The `point_mass` component type as the registry knows it: its fields,
//! the compile function that writes its records into a level's blob, and the
//! spawn function that reads them into the world's manager. The manager itself
//! (the component's storage) is `components/point_mass.rs`; this sits above the
//! registry and the world, as a plugin's component type does.

use glam::Vec3;

use crate::components::point_mass::PointMass;
use crate::record::{RecordWriter, f32_in, record, vec3_in};
use crate::world::World;

use crate::registry::{ComponentBatch, ComponentType, SpawnContext};
use crate::schema::{FieldSchema, FieldValues};

/// The `point_mass` component type.
pub(super) fn component_type() -> ComponentType {
    ComponentType::new("point_mass", 20, compile_point_mass, spawn_point_mass)
        .reading_transform(crate::registry::ReadsTransform::World)
        .with_doc("Simulated mass; moves the transform each step.")
        .with_fields(vec![
            FieldSchema::float("mass", 1.0, 0.0, 1.0e9).doc("Kilograms."),
            FieldSchema::vec3("velocity", [0.0; 3]).doc("Metres per second."),
            FieldSchema::vec3("acceleration", [0.0, -9.81, 0.0]).doc("Metres per second squared."),
        ])
}

fn compile_point_mass(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    out.put_f32(f.f32("mass"));
    out.put_vec3(f.vec3("velocity"));
    out.put_vec3(f.vec3("acceleration"));
    Ok(())
}

/// Bytes per point mass instance: mass, velocity, acceleration.
const POINT_MASS_RECORD: usize = 28;

pub(crate) fn spawn_point_mass(
    ctx: &mut SpawnContext,
    batch: &ComponentBatch,
) -> Result<(), String> {
    batch.check_records(POINT_MASS_RECORD)?;
    let data = batch.data;
    let World {
        transforms,
        point_masses,
        ..
    } = &mut *ctx.world;
    point_masses.create_columns(
        batch.len(),
        |k| batch.owner(k),
        |k| {
            let r = record::<POINT_MASS_RECORD>(data, k);
            // A point mass starts where its transform puts it in the world. Written
            // without a panicking index, so that the passes that need only the
            // other fields leave the lookup out.
            let position = batch
                .entity_index
                .get(k)
                .and_then(|&e| batch.entity_lookup.get(e as usize))
                .and_then(|&owner| transforms.lookup(owner))
                .and_then(|t| transforms.world_poses().get(t.index()))
                .map_or(Vec3::ZERO, |world| world.translation.into());
            PointMass {
                mass: f32_in(&r, 0),
                position,
                velocity: vec3_in(&r, 4),
                acceleration: vec3_in(&r, 16),
            }
        },
    );
    Ok(())
}
