//! The interface between Kiln and its plugins, after Bitsquid's "Building an Engine
//! Plugin System": two APIs, each queried by id and version from the other side.
//!
//! - The plugin exports one C function, `kiln_get_plugin_api(api_id, version)`, which
//!   returns its [`abi::KilnPluginApiV0`] table (or null for what it does not know).
//! - Kiln passes the plugin's `init` its own lookup, `get_engine_api(api_id,
//!   version)`, which returns Kiln's tables: the registry API (register component
//!   types), the world API (transforms, liveness) and the log API.
//!
//! Everything that crosses is `#[repr(C)]`: tables of `extern "C"` function pointers
//! and plain data. No Rust type, trait object, `String` or panic crosses, so a plugin
//! built with another Rust compiler, or written in C against `include/kiln_plugin.h`,
//! loads. The header and [`abi`] are the same ABI written twice; a test compiles the
//! header and checks every size and offset against the Rust definitions.
//!
//! # Versioning
//! See [`abi`]: a released table never changes; a change is a new version, and Kiln
//! keeps serving the old ones.
//!
//! # Instance data
//! A plugin component's instances live in the plugin, in whatever layout it likes
//! (structure of arrays, as in Bitsquid's component managers). Kiln's compiler packs
//! the fields the plugin's schema declares into fixed-size records (see
//! [`abi::KilnFieldKind`] for each kind's bytes) and calls `create` once per level
//! and type with all of them, as Bitsquid spawns entity resources in bulk.

//! # Writing a plugin in Rust
//! ```no_run
//! use kiln_plugin::{Component, Engine, EntityId, Field, Plugin, Record, World};
//!
//! struct Lift { entities: Vec<EntityId>, rates: Vec<f32>, stops_at: Vec<Option<EntityId>> }
//! impl Component for Lift {
//!     const NAME: &'static str = "lift";
//!     const FIELDS: &'static [Field] = &[
//!         Field::float("rate", "1", -10.0, 10.0),
//!         // Another entity of the level, by its id; a handle in `create`.
//!         Field::entity("stops_at"),
//!     ];
//!     fn new() -> Self { Lift { entities: Vec::new(), rates: Vec::new(), stops_at: Vec::new() } }
//!     fn create(&mut self, entities: &[EntityId], records: Vec<Record<'_>>) {
//!         for (e, mut r) in entities.iter().zip(records) {
//!             self.entities.push(*e);
//!             self.rates.push(r.float());
//!             self.stops_at.push(r.entity());
//!         }
//!     }
//!     fn destroy(&mut self, entity: EntityId) { /* swap-remove it */ }
//!     fn gc(&mut self, alive: &dyn Fn(EntityId) -> bool) { /* retain the alive */ }
//!     fn simulate(&mut self, dt: f32, world: &World<'_>) { /* move things */ }
//! }
//!
//! struct MyPlugin;
//! impl Plugin for MyPlugin {
//!     const NAME: &'static str = "my_plugin";
//!     fn init(engine: &Engine) -> Result<Self, String> {
//!         engine.register::<Lift>()?;
//!         Ok(MyPlugin)
//!     }
//! }
//! kiln_plugin::export_plugin!(MyPlugin);
//! ```
//! Build it as a `cdylib`. Panics in any callback are caught at the boundary.

#![warn(missing_docs)]

/// `kiln_plugin.h`, the ABI for C plugins (Kiln writes it where it builds them).
pub const C_HEADER: &str = include_str!("../include/kiln_plugin.h");

/// This SDK's version: a plugin depends on `kiln_plugin = "0.1"`, and the `kiln`
/// that builds it supplies its own copy of the SDK (see Kiln's `docs/plugins.md`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod abi;
pub mod sdk;

pub use sdk::{Component, Engine, EntityId, Field, Plugin, Record, World, log};
