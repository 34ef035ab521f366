//! The `mesh` component type as the registry knows it: its fields,
//! the compile function that writes its records into a level's blob, and the
//! spawn function that reads them into the world's manager. The manager itself
//! (the component's storage) is `components/mesh.rs`; this sits above the
//! registry and the world, as a plugin's component type does.

use crate::components::mesh::Mesh;
use crate::path::ResourceId;
use crate::record::{RecordWriter, record, u32_in, u64_in};

use crate::registry::{ComponentBatch, ComponentType, SpawnContext};
use crate::schema::{FieldSchema, FieldValues};

/// The `mesh` component type.
pub(super) fn component_type() -> ComponentType {
    ComponentType::new("mesh", 10, compile_mesh, spawn_mesh)
        .multiple()
        .with_doc("Draws a mesh resource with a material.")
        .with_fields(vec![
            FieldSchema::resource("mesh", "mesh").doc("The geometry."),
            FieldSchema::resource("material", "material").doc("The surface."),
            FieldSchema::bool("visible", true),
        ])
}

fn compile_mesh(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    // An empty mesh reference is "none": a component just added, not yet given a
    // mesh, draws nothing rather than breaking the level.
    out.put_u64(f.resource_id("mesh").0);
    out.put_u64(f.resource_id("material").0);
    out.put_u32(f.bool("visible") as u32);
    Ok(())
}

/// Bytes per mesh instance: mesh and material ids, then visibility as a `u32`.
const MESH_RECORD: usize = 20;

pub(crate) fn spawn_mesh(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    batch.check_records(MESH_RECORD)?;
    let data = batch.data;
    ctx.world.meshes.create_columns(
        batch.len(),
        |k| batch.owner(k),
        |k| {
            let r = record::<MESH_RECORD>(data, k);
            Mesh {
                mesh: ResourceId(u64_in(&r, 0)),
                material: ResourceId(u64_in(&r, 8)),
                visible: u32_in(&r, 16) != 0,
            }
        },
    );
    Ok(())
}
