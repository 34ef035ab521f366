//! The ABI itself: `#[repr(C)]` tables of `extern "C"` function pointers and plain
//! data, mirrored one to one by `include/kiln_plugin.h` (a test compiles the header
//! and compares every size and offset with these).
//!
//! # Versioning rules
//! - Every API has an id and a version. A plugin asks for `(id, version)` through
//!   [`KilnGetApi`]; Kiln answers with a table or null. Kiln keeps serving every
//!   version it ever shipped, so a plugin built against an old header keeps loading.
//! - A table, once released, never changes: not a field added, removed, reordered or
//!   retyped. Any such change is a new version of that API, with its own struct
//!   (`KilnWorldApiV1`). Adding a whole new API is a new id.
//! - The same rules hold the other way for the plugin API a plugin exports.
//! - Data structs passed inside a call (a component declaration) are versioned with
//!   the API whose call takes them.

use std::ffi::c_void;

/// UTF-8 text passed across the boundary: a pointer and a length, not NUL-terminated.
/// Valid only for the duration of the call it is passed to, unless stated otherwise.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnStr {
    /// First byte (may be null when `len` is 0).
    pub ptr: *const u8,
    /// Length in bytes.
    pub len: usize,
}

/// An entity: its index in the low 32 bits and its generation in the high 32 bits.
pub type KilnEntity = u64;

/// Kiln's API lookup, passed to the plugin's `init`: returns the table for
/// `(api_id, version)`, or null if this Kiln does not provide it.
pub type KilnGetApi = unsafe extern "C" fn(api_id: u32, version: u32) -> *const c_void;

/// The one symbol a plugin exports, `kiln_get_plugin_api`: returns the plugin's
/// table for `(api_id, version)`, or null.
pub type KilnGetPluginApi = unsafe extern "C" fn(api_id: u32, version: u32) -> *const c_void;

/// The name of the symbol a plugin library exports.
pub const GET_PLUGIN_API_SYMBOL: &str = "kiln_get_plugin_api";

/// The plugin API (exported by the plugin): `'PLUG'`.
pub const PLUGIN_API_ID: u32 = u32::from_be_bytes(*b"PLUG");
/// Kiln's registry API: register component types. `'REGI'`.
pub const REGISTRY_API_ID: u32 = u32::from_be_bytes(*b"REGI");
/// Kiln's world API: transforms and entity liveness. `'WRLD'`.
pub const WORLD_API_ID: u32 = u32::from_be_bytes(*b"WRLD");
/// Kiln's log API: messages in Kiln's log and problems. `'LOG_'`.
pub const LOG_API_ID: u32 = u32::from_be_bytes(*b"LOG_");

/// What a plugin returns from its callbacks: 0 for success, anything else an error
/// (the SDK returns [`KILN_PANICKED`] when a Rust callback panicked).
pub type KilnResult = i32;
/// Success.
pub const KILN_OK: KilnResult = 0;
/// A Rust callback panicked; the SDK caught it at the boundary.
pub const KILN_PANICKED: KilnResult = -1000;

/// The plugin API, version 0: what every plugin provides.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnPluginApiV0 {
    /// The plugin's name, as shown in messages (static for the library's lifetime).
    pub name: KilnStr,
    /// Called once after loading, with Kiln's API lookup. Registers the plugin's
    /// component types through the registry API. Non-zero: the plugin failed and is
    /// unloaded. Required: a plugin whose `init` is null is refused, by name.
    /// (Every function pointer here is an `Option`: a null from C is `None`, never
    /// undefined behaviour.)
    pub init: Option<unsafe extern "C" fn(get_engine_api: KilnGetApi) -> KilnResult>,
    /// Called once before unloading (after everything it spawned was destroyed).
    /// May be absent (null): nothing to do.
    pub shutdown: Option<unsafe extern "C" fn()>,
    /// Called every simulation step while the game (or the editor's Play) runs, for
    /// work that is not per component. May be absent (null).
    pub update: Option<unsafe extern "C" fn(dt: f32)>,
}

/// The kind of one field of a plugin component type, and how it is packed in the
/// instance bytes Kiln hands the plugin (little endian, fields in declaration order,
/// no padding).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KilnFieldKind {
    /// `true`/`false`: a `u32`, 0 or 1.
    Bool = 0,
    /// A whole number in `min..=max`: an `i64`.
    Int = 1,
    /// A number in `min..=max`: an `f32`.
    Float = 2,
    /// `[x, y, z]`: three `f32`.
    Vec3 = 3,
    /// Euler angles in degrees `[x, y, z]`: three `f32` (degrees).
    Angles = 4,
    /// `[r, g, b, a]`: four `f32`.
    Color = 5,
    /// A reference to a resource of `resource_type`: the `u64` resource id (FNV-1a
    /// 64 of `path.type`, 0 for none). The dependency checker tracks it like any
    /// typed reference.
    Resource = 6,
    /// Another entity of the same level, authored as its id (in a prefab, a part of
    /// the same instance): the `u64` [`KilnEntity`] of that entity, made when the
    /// level spawns, or [`KILN_NO_ENTITY`] for none. Check it with the world API's
    /// `is_alive` before use: the entity may have been destroyed since.
    Entity = 7,
}

/// The value of an entity field that names no entity (never a live entity).
pub const KILN_NO_ENTITY: KilnEntity = u64::MAX;

impl KilnFieldKind {
    /// Bytes the field takes in an instance record.
    pub const fn size(self) -> usize {
        match self {
            KilnFieldKind::Bool => 4,
            KilnFieldKind::Int | KilnFieldKind::Resource | KilnFieldKind::Entity => 8,
            KilnFieldKind::Float => 4,
            KilnFieldKind::Vec3 | KilnFieldKind::Angles => 12,
            KilnFieldKind::Color => 16,
        }
    }

    /// The kind for a raw value from a plugin, if it is one.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            0 => KilnFieldKind::Bool,
            1 => KilnFieldKind::Int,
            2 => KilnFieldKind::Float,
            3 => KilnFieldKind::Vec3,
            4 => KilnFieldKind::Angles,
            5 => KilnFieldKind::Color,
            6 => KilnFieldKind::Resource,
            7 => KilnFieldKind::Entity,
            _ => return None,
        })
    }
}

/// One field of a plugin component type.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnFieldDecl {
    /// The JSON key.
    pub name: KilnStr,
    /// A [`KilnFieldKind`] as `u32`.
    pub kind: u32,
    /// The range: of the value (`Int`, `Float`), or of each of its numbers
    /// (`Vec3`, `Angles`, `Color`; `min` = `max` = 0 is none). Ignored for `Bool`
    /// and `Resource`.
    pub min: f64,
    /// See `min`.
    pub max: f64,
    /// For `Resource`: the resource type (file extension), e.g. `material`.
    pub resource_type: KilnStr,
    /// The default value as JSON text (`"1.5"`, `"[0, 1, 0]"`), or empty for the
    /// kind's zero.
    pub default_json: KilnStr,
    /// One line for the inspector's tooltip.
    pub doc: KilnStr,
}

/// Asks Kiln whether an entity is alive (passed to `gc`).
pub type KilnAliveFn = unsafe extern "C" fn(ctx: *mut c_void, entity: KilnEntity) -> u32;

/// A component type a plugin registers, with the callbacks of its manager (the
/// instances live in the plugin, structure of arrays as it likes). `user` is passed
/// back to every callback.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnComponentDeclV0 {
    /// The key in a level's `components` object.
    pub name: KilnStr,
    /// Lower spawns first (the transform is 0; built-ins use 0..=40).
    pub spawn_order: i32,
    /// One line describing the component.
    pub doc: KilnStr,
    /// The fields, in record order; may be null only with a `field_count` of 0.
    pub fields: *const KilnFieldDecl,
    /// How many.
    pub field_count: usize,
    /// Passed back to the callbacks.
    pub user: *mut c_void,
    /// Creates `count` instances in one call (one call per level and type):
    /// `entities[i]` owns the record at `data + i * record_size`. Non-zero: the level
    /// fails to spawn with that code. Required: the type is refused without it.
    pub create: Option<
        unsafe extern "C" fn(
            user: *mut c_void,
            entities: *const KilnEntity,
            count: usize,
            data: *const u8,
            record_size: usize,
        ) -> KilnResult,
    >,
    /// Destroys the instance of `entity`, if it has one. May be absent (null):
    /// Kiln then calls `gc` with that one entity reported dead.
    pub destroy: Option<unsafe extern "C" fn(user: *mut c_void, entity: KilnEntity)>,
    /// Destroys every instance whose entity `alive(ctx, entity)` says is dead.
    /// Required: the type is refused without it.
    pub gc: Option<unsafe extern "C" fn(user: *mut c_void, alive: KilnAliveFn, ctx: *mut c_void)>,
    /// Advances the instances by `dt` seconds; `world` is valid during the call. May
    /// be absent (null) for components that do not move anything.
    pub simulate:
        Option<unsafe extern "C" fn(user: *mut c_void, dt: f32, world: *const KilnWorldApiV0)>,
}

/// Kiln's registry API, version 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnRegistryApiV0 {
    /// Registers a component type. Non-zero: refused (a name already taken, an
    /// invalid schema); the log API says why.
    pub register_component:
        unsafe extern "C" fn(ctx: *mut c_void, decl: *const KilnComponentDeclV0) -> KilnResult,
    /// Passed as `ctx`.
    pub ctx: *mut c_void,
}

/// Kiln's world API, version 0: valid during `simulate`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnWorldApiV0 {
    /// Whether the entity is alive (1) or not (0).
    pub is_alive: unsafe extern "C" fn(ctx: *mut c_void, entity: KilnEntity) -> u32,
    /// Writes the entity's world pose as a column-major 3x4 affine matrix (12 floats:
    /// x axis, y axis, z axis, translation). 0 if it has no transform.
    pub world_pose:
        unsafe extern "C" fn(ctx: *mut c_void, entity: KilnEntity, out: *mut f32) -> u32,
    /// Sets the entity's local translation. 0 if it has no transform.
    pub set_local_translation:
        unsafe extern "C" fn(ctx: *mut c_void, entity: KilnEntity, xyz: *const f32) -> u32,
    /// Writes the entity's local pose (relative to its parent), laid out as
    /// `world_pose`. 0 if it has no transform.
    pub local_pose:
        unsafe extern "C" fn(ctx: *mut c_void, entity: KilnEntity, out: *mut f32) -> u32,
    /// Sets the entity's local pose from 12 floats laid out as `world_pose` (axes may
    /// be scaled). 0 if it has no transform or a value is not finite.
    pub set_local_pose:
        unsafe extern "C" fn(ctx: *mut c_void, entity: KilnEntity, m: *const f32) -> u32,
    /// Passed as `ctx`.
    pub ctx: *mut c_void,
}

/// How bad a message is.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KilnLogLevel {
    /// Information.
    Info = 0,
    /// Something to look at.
    Warning = 1,
    /// Something failed.
    Error = 2,
}

/// Kiln's log API, version 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KilnLogApiV0 {
    /// Shows a message in Kiln's log (and, for warnings and errors, its problems).
    pub log: unsafe extern "C" fn(ctx: *mut c_void, level: u32, message: KilnStr),
    /// Passed as `ctx`.
    pub ctx: *mut c_void,
}
