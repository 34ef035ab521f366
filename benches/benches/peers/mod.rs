//! The peers' side of the spawn benchmarks: the same four components as Kiln's
//! benchmark level, as rows that hecs and bevy_ecs `spawn_batch`.

use glam::{Affine3A, Quat, Vec3};

/// Entities per spawn.
pub const N: usize = 10_000;

#[derive(Clone, Copy, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
pub struct Transform {
    local: Affine3A,
    world: Affine3A,
}
#[derive(Clone, Copy, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
pub struct Mesh {
    mesh: u64,
    material: u64,
    visible: bool,
}
#[derive(Clone, Copy, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
pub struct PointMass {
    mass: f32,
    position: Vec3,
    velocity: Vec3,
    acceleration: Vec3,
}
#[derive(Clone, bevy_ecs::component::Component)]
#[allow(dead_code)] // Payload: written by spawn, never read back.
pub struct DebugName(String);

/// One entity's components, as hecs and bevy take them.
pub type Row = (Transform, Mesh, PointMass, DebugName);

pub fn rows() -> Vec<Row> {
    (0..N)
        .map(|i| {
            let local = Affine3A::from_rotation_translation(
                Quat::from_rotation_y(i as f32),
                Vec3::new((i % 100) as f32, 0.0, (i / 100) as f32),
            );
            (
                Transform {
                    local,
                    world: local,
                },
                Mesh {
                    mesh: 1,
                    material: i as u64 % 8,
                    visible: true,
                },
                PointMass {
                    mass: 2.0,
                    position: Vec3::ZERO,
                    velocity: Vec3::X,
                    acceleration: Vec3::ZERO,
                },
                DebugName(format!("Entity {i}")),
            )
        })
        .collect()
}
