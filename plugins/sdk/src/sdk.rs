//! The safe Rust side of a plugin: implement [`Plugin`] (and [`Component`] for each
//! component type), then `kiln_plugin::export_plugin!(MyPlugin);`.
//!
//! Every callback Kiln makes goes through a trampoline here that catches panics and
//! logs each with the plugin's name, the callback and the panic's message: a
//! panicking `create` returns [`KILN_PANICKED`] (the level fails to spawn, and Kiln
//! says the plugin panicked), a panicking `simulate`, `destroy` or `gc` stops the
//! component type being called, and a panicking `init` fails the load. Nothing
//! unwinds into Kiln.
//!
//! This module holds the SDK's `unsafe`: reading what Kiln passes, and the plugin's
//! state behind the `user` pointers. Each block says why it is sound.
#![allow(unsafe_code)]

use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use crate::abi::*;

/// Text for the ABI from a `&'static str`.
pub const fn static_str(s: &'static str) -> KilnStr {
    KilnStr {
        ptr: s.as_ptr(),
        len: s.len(),
    }
}

/// A field of a component type, as a plugin declares it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The JSON key.
    pub name: &'static str,
    /// What it holds, and so how it is packed.
    pub kind: KilnFieldKind,
    /// Range for `Int` and `Float`.
    pub min: f64,
    /// Range for `Int` and `Float`.
    pub max: f64,
    /// For `Resource`: the resource type (file extension).
    pub resource_type: &'static str,
    /// The default as JSON text, or "" for the kind's zero.
    pub default_json: &'static str,
    /// One line for the inspector.
    pub doc: &'static str,
}

impl Field {
    /// A number in `min..=max`.
    pub const fn float(name: &'static str, default_json: &'static str, min: f64, max: f64) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Float,
            min,
            max,
            resource_type: "",
            default_json,
            doc: "",
        }
    }
    /// A whole number in `min..=max`.
    pub const fn int(name: &'static str, default_json: &'static str, min: i64, max: i64) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Int,
            min: min as f64,
            max: max as f64,
            resource_type: "",
            default_json,
            doc: "",
        }
    }
    /// Euler angles `[x, y, z]` in degrees (no range unless [`Field::range`]).
    pub const fn angles(name: &'static str, default_json: &'static str) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Angles,
            min: 0.0,
            max: 0.0,
            resource_type: "",
            default_json,
            doc: "",
        }
    }
    /// A vector `[x, y, z]` (no range unless [`Field::range`]).
    pub const fn vec3(name: &'static str, default_json: &'static str) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Vec3,
            min: 0.0,
            max: 0.0,
            resource_type: "",
            default_json,
            doc: "",
        }
    }
    /// A colour `[r, g, b, a]` (each within 0..=1; narrower with [`Field::range`]).
    pub const fn color(name: &'static str, default_json: &'static str) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Color,
            min: 0.0,
            max: 0.0,
            resource_type: "",
            default_json,
            doc: "",
        }
    }
    /// `true` / `false`.
    pub const fn bool(name: &'static str, default_json: &'static str) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Bool,
            min: 0.0,
            max: 0.0,
            resource_type: "",
            default_json,
            doc: "",
        }
    }
    /// A reference to a resource of `resource_type` (tracked and patched by Kiln's
    /// dependency checker like any typed reference).
    pub const fn resource(name: &'static str, resource_type: &'static str) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Resource,
            min: 0.0,
            max: 0.0,
            resource_type,
            default_json: "",
            doc: "",
        }
    }
    /// Another entity of the same level, authored as its id (in a prefab, a part of
    /// the same instance): read with [`Record::entity`], as the entity's handle, or
    /// [`crate::abi::KILN_NO_ENTITY`] for none. Check it with
    /// [`World::is_alive`] before use.
    pub const fn entity(name: &'static str) -> Self {
        Field {
            name,
            kind: KilnFieldKind::Entity,
            min: 0.0,
            max: 0.0,
            resource_type: "",
            default_json: "",
            doc: "",
        }
    }
    /// Sets the range of the value (`int`, `float`) or of each of its numbers
    /// (`vec3`, `angles`, `color`).
    pub const fn range(mut self, min: f64, max: f64) -> Self {
        self.min = min;
        self.max = max;
        self
    }
    /// Sets the default, as JSON text (for a `resource`: a path without extension,
    /// `"\"materials/glow\""`).
    pub const fn with_default(mut self, default_json: &'static str) -> Self {
        self.default_json = default_json;
        self
    }
    /// Sets the description.
    pub const fn doc(mut self, doc: &'static str) -> Self {
        self.doc = doc;
        self
    }

    fn decl(&self) -> KilnFieldDecl {
        KilnFieldDecl {
            name: static_str(self.name),
            kind: self.kind as u32,
            min: self.min,
            max: self.max,
            resource_type: static_str(self.resource_type),
            default_json: static_str(self.default_json),
            doc: static_str(self.doc),
        }
    }
}

/// Reads one packed instance record, field by field in declaration order.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    bytes: &'a [u8],
}

impl Record<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        if self.bytes.len() >= N {
            out.copy_from_slice(&self.bytes[..N]);
            self.bytes = &self.bytes[N..];
        }
        out
    }
    /// A `Bool` field.
    pub fn bool(&mut self) -> bool {
        u32::from_le_bytes(self.take()) != 0
    }
    /// An `Int` field.
    pub fn int(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }
    /// A `Float` field.
    pub fn float(&mut self) -> f32 {
        f32::from_le_bytes(self.take())
    }
    /// A `Vec3` or `Angles` field.
    pub fn vec3(&mut self) -> [f32; 3] {
        [self.float(), self.float(), self.float()]
    }
    /// A `Color` field.
    pub fn color(&mut self) -> [f32; 4] {
        [self.float(), self.float(), self.float(), self.float()]
    }
    /// A `Resource` field: the resource id (0 for none).
    pub fn resource(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    /// An `Entity` field: the handle of the entity it names, `None` for none.
    pub fn entity(&mut self) -> Option<EntityId> {
        let bits = u64::from_le_bytes(self.take());
        (bits != crate::abi::KILN_NO_ENTITY).then_some(bits)
    }
}

/// An entity, as Kiln names it across the boundary.
pub type EntityId = KilnEntity;

/// What a component's `simulate` may do to the world.
#[derive(Debug)]
pub struct World<'a> {
    api: &'a KilnWorldApiV0,
}

impl World<'_> {
    /// Whether the entity is alive.
    pub fn is_alive(&self, entity: EntityId) -> bool {
        // SAFETY: Kiln's table, valid during `simulate`, called as the ABI defines.
        unsafe { (self.api.is_alive)(self.api.ctx, entity) != 0 }
    }
    /// The entity's world pose, column-major 3x4 (x, y, z axes, translation).
    pub fn world_pose(&self, entity: EntityId) -> Option<[f32; 12]> {
        let mut out = [0.0; 12];
        // SAFETY: as above; `out` has the 12 floats the ABI writes.
        let ok = unsafe { (self.api.world_pose)(self.api.ctx, entity, out.as_mut_ptr()) };
        (ok != 0).then_some(out)
    }
    /// Sets the entity's local translation; false if it has no transform.
    pub fn set_local_translation(&self, entity: EntityId, xyz: [f32; 3]) -> bool {
        // SAFETY: as above; `xyz` has the 3 floats the ABI reads.
        unsafe { (self.api.set_local_translation)(self.api.ctx, entity, xyz.as_ptr()) != 0 }
    }
    /// The entity's local pose (relative to its parent), laid out as `world_pose`.
    pub fn local_pose(&self, entity: EntityId) -> Option<[f32; 12]> {
        let mut out = [0.0; 12];
        // SAFETY: as above; `out` has the 12 floats the ABI writes.
        let ok = unsafe { (self.api.local_pose)(self.api.ctx, entity, out.as_mut_ptr()) };
        (ok != 0).then_some(out)
    }
    /// Sets the entity's local pose, laid out as `world_pose`; false if it has no
    /// transform or a value is not finite.
    pub fn set_local_pose(&self, entity: EntityId, pose: [f32; 12]) -> bool {
        // SAFETY: as above; `pose` has the 12 floats the ABI reads.
        unsafe { (self.api.set_local_pose)(self.api.ctx, entity, pose.as_ptr()) != 0 }
    }
}

/// A plugin component type and its manager: the instances live here, in whatever
/// layout suits (structure of arrays, as Kiln's own managers).
pub trait Component: Send + 'static {
    /// The key in a level's `components` object.
    const NAME: &'static str;
    /// Lower spawns first (Kiln's transform is 0).
    const SPAWN_ORDER: i32 = 40;
    /// One line describing it.
    const DOC: &'static str = "";
    /// The fields, in record order.
    const FIELDS: &'static [Field];
    /// An empty manager.
    fn new() -> Self;
    /// Creates the instances of one level: `entities[i]` owns `records[i]`.
    fn create(&mut self, entities: &[EntityId], records: Vec<Record<'_>>);
    /// Destroys `entity`'s instance, if any.
    fn destroy(&mut self, entity: EntityId);
    /// Destroys the instances of entities `alive` says are dead.
    fn gc(&mut self, alive: &dyn Fn(EntityId) -> bool);
    /// Advances the instances by `dt` seconds.
    fn simulate(&mut self, _dt: f32, _world: &World<'_>) {}
    /// Whether `simulate` does anything (Kiln skips the call otherwise).
    const SIMULATES: bool = true;
}

/// What a plugin's `init` may do: register component types, log.
#[derive(Debug)]
pub struct Engine {
    get: KilnGetApi,
}

impl Engine {
    /// Registers component type `C`; its manager lives until the plugin shuts down.
    pub fn register<C: Component>(&self) -> Result<(), String> {
        // SAFETY: Kiln's lookup, called as the ABI defines.
        let table = unsafe { (self.get)(REGISTRY_API_ID, 0) } as *const KilnRegistryApiV0;
        if table.is_null() {
            return Err("Kiln provides no registry API v0".into());
        }
        // SAFETY: for (REGISTRY_API_ID, 0) Kiln returns a `KilnRegistryApiV0`.
        let registry = unsafe { *table };
        let manager: Box<Mutex<Manager<C>>> = Box::new(Mutex::new(Manager {
            component: C::new(),
            broken: false,
        }));
        let user = Box::into_raw(manager) as *mut c_void;
        let fields: Vec<KilnFieldDecl> = C::FIELDS.iter().map(Field::decl).collect();
        let decl = KilnComponentDeclV0 {
            name: static_str(C::NAME),
            spawn_order: C::SPAWN_ORDER,
            doc: static_str(C::DOC),
            fields: fields.as_ptr(),
            field_count: fields.len(),
            user,
            create: Some(create::<C>),
            destroy: Some(destroy::<C>),
            gc: Some(gc::<C>),
            simulate: if C::SIMULATES {
                Some(simulate::<C>)
            } else {
                None
            },
        };
        // SAFETY: Kiln's function; `decl` and `fields` live through the call (Kiln
        // copies what it keeps).
        let code = unsafe { (registry.register_component)(registry.ctx, &decl) };
        if code != KILN_OK {
            // SAFETY: `user` came from `Box::into_raw` above and Kiln refused it, so
            // nothing else holds it.
            drop(unsafe { Box::from_raw(user as *mut Mutex<Manager<C>>) });
            return Err(format!(
                "Kiln refused component type {} (code {code})",
                C::NAME
            ));
        }
        owned_managers().push((user as usize, free_manager::<C>));
        Ok(())
    }

    /// Shows a message in Kiln's log (warnings and errors also in its problems).
    pub fn log(&self, level: KilnLogLevel, message: &str) {
        log_with(self.get, level, message);
    }
}

/// Writes `message` to Kiln's log from any callback (`create`, `simulate`, `gc`,
/// ...), not only from `init`: a warning or an error shows as a toast in the
/// editor and on stderr in commands, and in `kiln play`'s report. Before `init`
/// and after `shutdown` it does nothing.
pub fn log(level: KilnLogLevel, message: &str) {
    if let Some(get) = *ENGINE.lock().unwrap_or_else(|e| e.into_inner()) {
        log_with(get, level, message);
    }
}

fn log_with(get: KilnGetApi, level: KilnLogLevel, message: &str) {
    // SAFETY: Kiln's lookup, called as the ABI defines.
    let table = unsafe { get(LOG_API_ID, 0) } as *const KilnLogApiV0;
    if table.is_null() {
        return;
    }
    // SAFETY: for (LOG_API_ID, 0) Kiln returns a `KilnLogApiV0`; the message lives
    // through the call.
    unsafe {
        let api = *table;
        (api.log)(
            api.ctx,
            level as u32,
            KilnStr {
                ptr: message.as_ptr(),
                len: message.len(),
            },
        )
    }
}

/// A plugin: its name and what `init` does.
pub trait Plugin: Send + 'static {
    /// Shown in Kiln's messages.
    const NAME: &'static str;
    /// Registers the plugin's component types. An error fails the load, with the
    /// message logged.
    fn init(engine: &Engine) -> Result<Self, String>
    where
        Self: Sized;
    /// Called every simulation step while the game runs.
    fn update(&mut self, _dt: f32) {}
}

struct Manager<C> {
    component: C,
    /// A callback panicked: the type is no longer called.
    broken: bool,
}

type FreeFn = fn(usize);

fn free_manager<C: Component>(user: usize) {
    // SAFETY: `user` is a pointer from `Box::into_raw` in `register`, freed once, at
    // shutdown, after Kiln destroyed every instance and stopped calling.
    drop(unsafe { Box::from_raw(user as *mut Mutex<Manager<C>>) });
}

/// What a panic said (its `&str` or `String` payload).
fn panic_text(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The plugin's name ([`Plugin::NAME`]), for what the SDK logs on its behalf.
static PLUGIN_NAME: Mutex<&'static str> = Mutex::new("");
static MANAGERS: Mutex<Vec<(usize, FreeFn)>> = Mutex::new(Vec::new());
static PLUGIN: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
static ENGINE: Mutex<Option<KilnGetApi>> = Mutex::new(None);

fn owned_managers() -> std::sync::MutexGuard<'static, Vec<(usize, FreeFn)>> {
    MANAGERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs a callback on the manager behind `user`, unless a previous one panicked;
/// a panic marks it broken and is logged.
fn with_manager<C: Component, R>(
    user: *mut c_void,
    what: &str,
    f: impl FnOnce(&mut C) -> R,
) -> Option<R> {
    // SAFETY: `user` is the `Box<Mutex<Manager<C>>>` registered for this callback
    // table, alive until shutdown.
    let manager = unsafe { &*(user as *const Mutex<Manager<C>>) };
    let mut m = manager.lock().unwrap_or_else(|e| e.into_inner());
    if m.broken {
        return None;
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut m.component))) {
        Ok(r) => Some(r),
        Err(panic) => {
            m.broken = true;
            let why = panic_text(&*panic);
            let plugin = *PLUGIN_NAME.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(get) = *ENGINE.lock().unwrap_or_else(|e| e.into_inner()) {
                log_with(
                    get,
                    KilnLogLevel::Error,
                    &format!(
                        "plugin {plugin}: component {} panicked in {what}: {why}; it is no longer run",
                        C::NAME
                    ),
                );
            }
            None
        }
    }
}

unsafe extern "C" fn create<C: Component>(
    user: *mut c_void,
    entities: *const KilnEntity,
    count: usize,
    data: *const u8,
    record_size: usize,
) -> KilnResult {
    let (entities, data) = if count == 0 {
        (&[][..], &[][..])
    } else {
        // SAFETY: the ABI: `entities` has `count` ids and `data` `count *
        // record_size` bytes, valid for this call.
        unsafe {
            (
                std::slice::from_raw_parts(entities, count),
                std::slice::from_raw_parts(data, count * record_size),
            )
        }
    };
    let records: Vec<Record<'_>> = (0..count)
        .map(|i| Record {
            bytes: &data[i * record_size..(i + 1) * record_size],
        })
        .collect();
    match with_manager::<C, ()>(user, "create", |c| c.create(entities, records)) {
        Some(()) => KILN_OK,
        None => KILN_PANICKED,
    }
}

unsafe extern "C" fn destroy<C: Component>(user: *mut c_void, entity: KilnEntity) {
    with_manager::<C, ()>(user, "destroy", |c| c.destroy(entity));
}

unsafe extern "C" fn gc<C: Component>(user: *mut c_void, alive: KilnAliveFn, ctx: *mut c_void) {
    // SAFETY: Kiln's callback with its own context, valid during this call.
    let alive = |e: KilnEntity| unsafe { alive(ctx, e) } != 0;
    with_manager::<C, ()>(user, "gc", |c| c.gc(&alive));
}

unsafe extern "C" fn simulate<C: Component>(
    user: *mut c_void,
    dt: f32,
    world: *const KilnWorldApiV0,
) {
    if world.is_null() {
        return;
    }
    // SAFETY: Kiln's world table, valid during this call.
    let api = unsafe { &*world };
    let world = World { api };
    with_manager::<C, ()>(user, "simulate", |c| c.simulate(dt, &world));
}

/// `init` for plugin type `P` (used by [`crate::export_plugin!`]).
unsafe extern "C" fn init<P: Plugin>(get: KilnGetApi) -> KilnResult {
    *ENGINE.lock().unwrap_or_else(|e| e.into_inner()) = Some(get);
    *PLUGIN_NAME.lock().unwrap_or_else(|e| e.into_inner()) = P::NAME;
    let engine = Engine { get };
    match catch_unwind(AssertUnwindSafe(|| P::init(&engine))) {
        Ok(Ok(plugin)) => {
            *PLUGIN.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(plugin));
            KILN_OK
        }
        Ok(Err(message)) => {
            engine.log(KilnLogLevel::Error, &message);
            1
        }
        Err(panic) => {
            let why = panic_text(&*panic);
            engine.log(
                KilnLogLevel::Error,
                &format!("plugin {} panicked in init: {why}", P::NAME),
            );
            KILN_PANICKED
        }
    }
}

/// `shutdown`: drops the plugin and every manager it registered.
unsafe extern "C" fn shutdown() {
    let _ = catch_unwind(|| {
        PLUGIN.lock().unwrap_or_else(|e| e.into_inner()).take();
        for (user, free) in owned_managers().drain(..) {
            free(user);
        }
        ENGINE.lock().unwrap_or_else(|e| e.into_inner()).take();
    });
}

/// `update` for plugin type `P`.
unsafe extern "C" fn update<P: Plugin>(dt: f32) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if let Some(plugin) = PLUGIN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .and_then(|p| p.downcast_mut::<P>())
        {
            plugin.update(dt);
        }
    }));
}

/// The plugin API table of a plugin type, in a static the export macro makes.
#[derive(Debug)]
pub struct PluginTable(KilnPluginApiV0);

// SAFETY: immutable after construction: a static name and function pointers.
unsafe impl Sync for PluginTable {}

impl PluginTable {
    /// The table for plugin type `P`.
    pub const fn new<P: Plugin>() -> Self {
        PluginTable(KilnPluginApiV0 {
            name: static_str(P::NAME),
            init: Some(init::<P>),
            shutdown: Some(shutdown),
            update: Some(update::<P>),
        })
    }

    /// The answer to `kiln_get_plugin_api(api_id, version)`.
    pub fn get(&'static self, api_id: u32, version: u32) -> *const c_void {
        if api_id == PLUGIN_API_ID && version == 0 {
            &self.0 as *const KilnPluginApiV0 as *const c_void
        } else {
            std::ptr::null()
        }
    }
}

/// Exports a [`Plugin`] type as this library's Kiln plugin: defines
/// `kiln_get_plugin_api`. Use once per library (a `cdylib`).
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        static KILN_PLUGIN_TABLE: $crate::sdk::PluginTable =
            $crate::sdk::PluginTable::new::<$plugin>();

        /// The plugin's entry point (see `kiln_plugin.h`).
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn kiln_get_plugin_api(
            api_id: u32,
            version: u32,
        ) -> *const ::std::ffi::c_void {
            KILN_PLUGIN_TABLE.get(api_id, version)
        }
    };
}
