//! The `transform` component type as the registry knows it: its fields,
//! the compile function that writes its records into a level's blob, and the
//! spawn function that reads them into the world's manager. The manager itself
//! (the component's storage) is `components/transform.rs`; this sits above the
//! registry and the world, as a plugin's component type does.

use glam::Affine3A;

use crate::component::Instance;
use crate::record::RecordWriter;

use crate::registry::{ComponentBatch, ComponentType, SpawnContext};
use crate::schema::{FieldSchema, FieldValues};

/// The `transform` component type.
pub(super) fn component_type() -> ComponentType {
    ComponentType::new("transform", 0, compile_transform, spawn_transform)
        .with_rewrite(rewrite_transform)
        .with_doc("Position in the world and place in the scene graph.")
        .with_fields(vec![
            FieldSchema::vec3("position", [0.0; 3]).doc("Relative to the parent, in metres."),
            FieldSchema::angles("rotation", [0.0; 3])
                .doc("Euler angles in degrees (X, then Y, then Z)."),
            FieldSchema::vec3("scale", [1.0; 3]),
        ])
}

/// Bytes per transform instance: the local pose as a 3x4 matrix, 12 `f32` in column
/// order (x axis, y axis, z axis, translation). Composed from position, rotation and
/// scale at compile time, so spawning copies it as is.
pub const TRANSFORM_RECORD: usize = 48;

fn compile_transform(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    let local = Affine3A::from_scale_rotation_translation(
        f.vec3("scale"),
        f.rotation("rotation"),
        f.vec3("position"),
    );
    for c in local.to_cols_array() {
        out.put_f32(c);
    }
    Ok(())
}

/// Decodes a 48-byte transform record. Reads each column straight into a register:
/// assembling the floats in a stack array and reloading them as vectors stalls on
/// store forwarding and cost a third of spawn time.
#[inline]
fn read_affine(b: &[u8; TRANSFORM_RECORD]) -> Affine3A {
    let f = |k: usize| f32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]]);
    let col = |c: usize| glam::Vec3A::new(f(3 * c), f(3 * c + 1), f(3 * c + 2));
    Affine3A::from_cols(col(0), col(1), col(2), col(3))
}

/// Writes each record's local pose over its owner's transform: the instance, its
/// place in the scene graph and its children stay; their world poses follow.
fn rewrite_transform(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    batch.check_records(TRANSFORM_RECORD)?;
    let (records, _) = batch.data.as_chunks::<TRANSFORM_RECORD>();
    let tm = &mut ctx.world.transforms;
    for (i, record) in records.iter().enumerate() {
        let owner = batch.owner(i);
        let instance = tm
            .lookup(owner)
            .ok_or("an entity to rewrite has no transform")?;
        tm.set_local(instance, read_affine(record));
    }
    Ok(())
}

pub(crate) fn spawn_transform(
    ctx: &mut SpawnContext,
    batch: &ComponentBatch,
) -> Result<(), String> {
    batch.check_records(TRANSFORM_RECORD)?;
    let (records, _) = batch.data.as_chunks::<TRANSFORM_RECORD>();
    let local = |i: usize| read_affine(&records[i]);
    let tm = &mut ctx.world.transforms;
    let first = tm.len() as u32;
    let n = batch.len();
    let finite = if batch.entity_index.len() == batch.entity_lookup.len()
        && batch
            .entity_index
            .iter()
            .enumerate()
            .all(|(k, &e)| e as usize == k)
    {
        // Every entity has a transform, in entity order (what the compiler writes
        // for a level whose entities all have one): entity k's parent entity is its
        // scene-graph parent, and its transform is instance `first + parent`.
        tm.create_columns(
            n,
            |k| batch.entity_lookup[k],
            local,
            |k| match batch.parent_index[k] {
                crate::blob::NO_PARENT => None,
                p => Some(Instance(first + p)),
            },
        )
    } else {
        // Instances in entity order, so that a parent's transform precedes its
        // children's. The compiler writes them in that order, so the sort is for
        // other writers.
        let mut order: Vec<usize> = (0..n).collect();
        if !batch.entity_index.is_sorted() {
            order.sort_by_key(|&i| batch.entity_index[i]);
        }
        // The nearest ancestor that has a transform is the parent in the scene
        // graph: `made` holds the transform instance of each level entity made so
        // far in this batch. An ancestor spawned before (a batch of the entities
        // a change spawned again, under entities kept in the world) has its
        // transform in the manager already.
        let mut made = vec![u32::MAX; batch.entity_lookup.len()];
        let parents: Vec<Option<Instance>> = order
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let entity_index = batch.entity_index[i] as usize;
                let mut up = batch.parent_index[entity_index];
                let mut parent = None;
                while up != u32::MAX {
                    if made[up as usize] != u32::MAX {
                        parent = Some(Instance(made[up as usize]));
                        break;
                    }
                    if let Some(existing) = tm.lookup(batch.entity_lookup[up as usize]) {
                        parent = Some(existing);
                        break;
                    }
                    up = batch.parent_index[up as usize];
                }
                made[entity_index] = first + k as u32;
                parent
            })
            .collect();
        tm.create_columns(
            n,
            |k| batch.owner(order[k]),
            |k| local(order[k]),
            |k| parents[k],
        )
    };
    // Checked on the world poses (see `create_columns`); the spawner destroys the
    // whole level on this error.
    if !finite {
        return Err("a transform is not finite".into());
    }
    Ok(())
}
