//! The `oscillator` and `rotator` component type as the registry knows it: its fields,
//! the compile function that writes its records into a level's blob, and the
//! spawn function that reads them into the world's manager. The manager itself
//! (the component's storage) is `components/behaviours.rs`; this sits above the
//! registry and the world, as a plugin's component type does.

use glam::Vec3;

use crate::components::behaviours::{Oscillator, Rotator};
use crate::record::{RecordReader, RecordWriter};
use crate::world::World;

use crate::registry::{ComponentBatch, ComponentType, SpawnContext};
use crate::schema::{FieldSchema, FieldValues};

/// The `oscillator` component type.
pub(super) fn oscillator_type() -> ComponentType {
    ComponentType::new("oscillator", 30, compile_oscillator, spawn_oscillator)
        .reading_transform(crate::registry::ReadsTransform::Local)
        .with_doc("Bobs the entity back and forth around where it was placed.")
        .with_fields(vec![
            FieldSchema::vec3("amplitude", [0.0, 0.5, 0.0]).doc("Peak offset per axis, in metres."),
            FieldSchema::float("frequency", 0.5, 0.0, 100.0).doc("Cycles per second."),
            FieldSchema::float("phase", 0.0, -360.0, 360.0).doc("Degrees."),
        ])
}

/// The `rotator` component type.
pub(super) fn rotator_type() -> ComponentType {
    ComponentType::new("rotator", 30, compile_rotator, spawn_rotator)
        .with_doc("Spins the entity about an axis.")
        .with_fields(vec![
            FieldSchema::vec3("axis", [0.0, 1.0, 0.0]).doc("Local axis; need not be unit length."),
            FieldSchema::float("speed", 45.0, -3600.0, 3600.0).doc("Degrees per second."),
        ])
}

fn compile_oscillator(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    out.put_vec3(f.vec3("amplitude"));
    out.put_f32(f.f32("frequency"));
    out.put_f32(f.f32("phase").to_radians());
    Ok(())
}

pub(crate) fn spawn_oscillator(
    ctx: &mut SpawnContext,
    batch: &ComponentBatch,
) -> Result<(), String> {
    let records: Vec<&[u8]> = batch.fixed_records(20)?.collect();
    let World {
        transforms,
        oscillators,
        ..
    } = &mut *ctx.world;
    for (i, r) in records.into_iter().enumerate() {
        let owner = batch.owner(i);
        let center = transforms
            .lookup(owner)
            .map_or(Vec3::ZERO, |t| transforms.local(t).translation.into());
        let mut r = RecordReader::new(r);
        let data = Oscillator {
            amplitude: r.vec3(),
            frequency: r.f32(),
            phase: r.f32(),
            center,
        };
        oscillators.create(owner, data);
    }
    Ok(())
}

fn compile_rotator(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    let axis = f.vec3("axis");
    if axis.length_squared() < 1e-12 {
        return Err("the rotation axis must not be zero".into());
    }
    out.put_vec3(axis.normalize());
    out.put_f32(f.f32("speed"));
    Ok(())
}

pub(crate) fn spawn_rotator(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    let records = batch.fixed_records(16)?;
    for (i, r) in records.enumerate() {
        let mut r = RecordReader::new(r);
        let axis = r.vec3().normalize_or(Vec3::Y);
        ctx.world.rotators.create(
            batch.owner(i),
            Rotator {
                axis,
                speed: r.f32(),
            },
        );
    }
    Ok(())
}
