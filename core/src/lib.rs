//! # kiln_core
//!
//! The runtime Kiln embeds, after the Bitsquid "Building a Data-Oriented Entity System"
//! series:
//!
//! * [`Entity`] ids are an index + generation, handed out by the [`EntityManager`]
//!   (part 1); see [`entity`] for the bit split.
//! * Each component type is owned by a manager that stores it as a structure of arrays
//!   and updates all instances in one pass (part 2): [`components`].
//! * The [`TransformManager`] is a world's scene graph with immediate world-pose
//!   updates (part 3); several [`World`]s can exist side by side.
//! * Levels are authored as JSON ([`level`]), compiled into binary blobs in which each
//!   component type's instances are stored together ([`compiler`], [`blob`],
//!   `core/FORMAT.md`), and spawned in bulk ([`spawn_level`], part 4).
//! * Component types register a name, spawn order, compile and spawn functions and a
//!   field schema in the [`Registry`], which is open to types defined elsewhere.
//! * Resources refer to each other by canonical path ([`ResourcePath`]).
//!
//! ```
//! use kiln_core::{compile_level, spawn_level, EntityManager, Registry, World};
//! use std::collections::HashMap;
//!
//! let level = r#"{"entities": [
//!     {"id": "crate", "name": "Crate", "components": {"transform": {"position": [0, 2, 0]}}},
//!     {"id": "lid", "parent": "crate", "components": {"transform": {"position": [0, 1, 0]}}}
//! ]}"#;
//! let registry = Registry::with_builtins();
//! let compiled = compile_level(&registry, &mut HashMap::new(), "levels/demo.level", level).unwrap();
//!
//! let (mut entities, mut world) = (EntityManager::new(), World::new());
//! let spawned = spawn_level(&compiled.blob, &registry, &mut entities, &mut world).unwrap();
//! let lid = world.transforms.lookup(spawned.entity("lid").unwrap()).unwrap();
//! assert_eq!(world.transforms.world(lid).translation.y, 3.0);
//! ```
#![warn(missing_docs)]

mod adaptive_entity_map;
pub mod blob;
mod builtins;
pub mod compiler;
mod component;
pub mod components;
pub mod conflict;
mod dense_entity_map;
pub mod entity;
mod entity_map;
mod flat_component;
pub mod fs;
pub mod gltf;
mod id_index;
pub mod incremental;
pub mod json_format;
pub mod level;
mod manager;
pub mod os;
pub mod own_folder;
pub mod path;
pub mod project;
pub mod raw_level;
mod record;
pub mod reference_rules;
pub mod registry;
pub mod schema;
mod spawn;
mod transform;
pub mod user_config;
mod world;

pub use adaptive_entity_map::AdaptiveEntityMap;
pub use compiler::{
    CompileError, CompileOptions, CompiledLevel, ResourceSource, compile_document,
    compile_document_with, compile_level, compile_level_with, compile_streamed,
};
pub use component::Instance;
pub use components::TransformManager;
pub use dense_entity_map::DenseEntityMap;
pub use entity::{Entity, EntityManager, MINIMUM_FREE_INDICES};
pub use entity_map::EntityMap;
pub use fs::{
    create_dir_below, read_below, read_regular, write_atomic, write_atomic_unsynced, write_below,
};
pub use id_index::IdIndex;
pub use level::{EntityDocument, LevelDocument};
pub use manager::{ComponentManager, DestroyPolicy};
pub use path::{PathError, ResourceId, ResourcePath};
pub use project::{Project, ProjectConfig, ProjectError, ReferenceRules};
pub use registry::{ComponentBatch, ComponentType, Registry, SpawnContext};
pub use schema::{FieldKind, FieldSchema, FieldValues, NO_ENTITY_INDEX};
pub use spawn::{PatchedInstances, Respawned, SpawnError, SpawnedLevel, spawn_level};
pub use world::World;
