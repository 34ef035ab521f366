//! The `debug_name` component type as the registry knows it: its fields,
//! the compile function that writes its records into a level's blob, and the
//! spawn function that reads them into the world's manager. The manager itself
//! (the component's storage) is `components/debug_name.rs`; this sits above the
//! registry and the world, as a plugin's component type does.

use crate::record::RecordWriter;

use crate::registry::{ComponentBatch, ComponentType, SpawnContext};
use crate::schema::{FieldSchema, FieldValues};

/// The `debug_name` component type (made from an entity's `name`).
pub(super) fn component_type() -> ComponentType {
    ComponentType {
        implicit: true,
        records: crate::registry::RecordLayout::LengthPrefixed,
        ..ComponentType::new("debug_name", 1, compile_debug_name, spawn_debug_name)
            .with_doc("The entity's name, for debugging.")
            .with_fields(vec![FieldSchema::text("name", "")])
    }
}

fn compile_debug_name(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    let name = f.text("name").as_bytes();
    out.put_u32(name.len() as u32);
    out.extend_from_slice(name);
    out.resize(out.len().next_multiple_of(4), 0);
    Ok(())
}

pub(crate) fn spawn_debug_name(
    ctx: &mut SpawnContext,
    batch: &ComponentBatch,
) -> Result<(), String> {
    // Each record is a length, the bytes, and padding to 4; the names are cut from
    // the instance data as it is, in one copy.
    let mut spans = Vec::with_capacity(batch.len());
    let mut at = 0usize;
    for i in 0..batch.len() {
        let past_the_end = || format!("debug name {i} runs past the end of the instance data");
        let Some(len) = batch
            .data
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(|b| u32::from_le_bytes(b) as usize)
        else {
            return Err(past_the_end());
        };
        let padded = len.saturating_add(3) & !3;
        if batch.data.len() - at - 4 < padded {
            return Err(past_the_end());
        }
        spans.push(((at + 4) as u32, len as u32));
        at += 4 + padded;
    }
    if at != batch.data.len() {
        return Err(format!(
            "{} bytes left after the last debug name",
            batch.data.len() - at
        ));
    }
    ctx.world
        .debug_names
        .create_in_text(|k| batch.owner(k), batch.data, &spans);
    Ok(())
}
