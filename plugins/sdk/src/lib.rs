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

#![warn(missing_docs)]

pub mod abi;
