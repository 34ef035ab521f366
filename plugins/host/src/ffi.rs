//! The one module of Kiln that uses `unsafe`: it loads plugin libraries and calls
//! across the C ABI of `kiln_plugin::abi`, in both directions. Everything it hands
//! out is safe to use: owned copies of what the plugin declared, and wrappers whose
//! methods make the calls.
//!
//! The contract a plugin accepts (stated in `kiln_plugin.h`): the tables and strings
//! it returns stay valid until `shutdown`; its callbacks are called from one thread at
//! a time (not always the same one); nothing unwinds across the boundary.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ffi::c_void;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use kiln_core::components::TransformManager;
use kiln_core::{Entity, EntityManager};
use kiln_plugin::abi::*;

/// A plugin library, open, with its plugin API table.
pub(crate) struct Library {
    api: KilnPluginApiV0,
    /// Whether it still runs, and its one-call-at-a-time lock.
    standing: Arc<Standing>,
    /// Dropped before the library is closed: the caller's record that the file is open.
    _open: Box<dyn Send + Sync>,
    // Dropped last (fields drop in order): the code the table points into stays
    // loaded while the table exists. Taken and leaked instead when the plugin was
    // stopped: a thread may still be running its code.
    library: Option<libloading::Library>,
}

impl Drop for Library {
    fn drop(&mut self) {
        if self.standing.stopped.load(Ordering::SeqCst) {
            std::mem::forget(self.library.take());
        }
    }
}

/// A library's standing, shared by everything that calls into it: whether it was
/// stopped (a call ran past a watchdog's budget and never came back), and the lock
/// that makes its calls one at a time, whatever the thread, as the contract says.
#[derive(Debug, Default)]
pub(crate) struct Standing {
    /// The plugin's name, for what a watchdog reports.
    name: String,
    stopped: AtomicBool,
    calls: Mutex<()>,
}

/// Threads a watchdog gave up on: what they still do after their hung call returns
/// calls no plugin (the world they were simulating was given up with them).
static ABANDONED: Mutex<Vec<std::thread::ThreadId>> = Mutex::new(Vec::new());
/// How many threads are in [`ABANDONED`] (read on every call; almost always 0).
static ABANDONED_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Whether the current thread was given up on by a watchdog.
pub(crate) fn this_thread_abandoned() -> bool {
    ABANDONED_COUNT.load(Ordering::SeqCst) > 0
        && ABANDONED
            .lock()
            .is_ok_and(|a| a.contains(&std::thread::current().id()))
}

/// Gives up on `thread`: from now on it calls no plugin.
pub(crate) fn abandon_thread(thread: std::thread::ThreadId) {
    let mut abandoned = ABANDONED.lock().unwrap_or_else(|e| e.into_inner());
    if !abandoned.contains(&thread) {
        abandoned.push(thread);
        ABANDONED_COUNT.store(abandoned.len(), Ordering::SeqCst);
    }
}

impl Standing {
    /// The right to call into the library now: `None` when it was stopped, or this
    /// thread was given up on. The stopped flag is read before the lock, which the
    /// hung thread holds for ever, and again under it.
    fn enter(&self) -> Option<MutexGuard<'_, ()>> {
        if self.stopped.load(Ordering::SeqCst) {
            return None;
        }
        let guard = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        if self.stopped.load(Ordering::SeqCst) || this_thread_abandoned() {
            return None;
        }
        Some(guard)
    }

    /// Whether a watchdog stopped the library.
    pub(crate) fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

// SAFETY: the plugin contract allows calls from any thread, one at a time; every call
// is made holding the library's `Standing::calls` lock (the editor's frame, its
// simulation thread, the compiler and the watcher may each reach one library). The
// table is plain data.
unsafe impl Send for Library {}
// SAFETY: as above; shared references only read the table.
unsafe impl Sync for Library {}

/// Why a library could not be opened as a plugin.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The dynamic loader refused it (not a library, wrong architecture...).
    NotALibrary(String),
    /// It does not export `kiln_get_plugin_api`.
    NoEntryPoint,
    /// It returned null for plugin API v0.
    NoPluginApi,
    /// Its table's `init`, which is required, is null.
    NullInit,
}

/// Reads a string a plugin passed; invalid UTF-8 is replaced, a null pointer is "".
fn read_str(s: KilnStr) -> String {
    if s.ptr.is_null() || s.len == 0 {
        return String::new();
    }
    // SAFETY: the plugin contract: `ptr` points to `len` readable bytes for the
    // duration of the call (or until shutdown, for its name).
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
    String::from_utf8_lossy(bytes).into_owned()
}

impl Library {
    /// Opens `path` and asks it for plugin API v0. `open` is kept until the library
    /// is closed.
    pub(crate) fn open(path: &Path, open: Box<dyn Send + Sync>) -> Result<Library, OpenError> {
        // SAFETY: loading a library runs its initialisers. Kiln loads only the
        // libraries a project lists, and the user chose to trust them by listing them.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| OpenError::NotALibrary(e.to_string()))?;
        // SAFETY: the symbol's type is the ABI's `KilnGetPluginApi`; a library that
        // exports the name with another type breaks the contract it claims.
        let get: libloading::Symbol<KilnGetPluginApi> =
            unsafe { library.get(GET_PLUGIN_API_SYMBOL.as_bytes()) }
                .map_err(|_| OpenError::NoEntryPoint)?;
        // SAFETY: calling the plugin's entry point as the ABI defines it.
        let table = unsafe { get(PLUGIN_API_ID, 0) };
        if table.is_null() {
            return Err(OpenError::NoPluginApi);
        }
        // SAFETY: for (PLUGIN_API_ID, 0) the plugin returns a `KilnPluginApiV0` that
        // stays valid until shutdown; it is copied here.
        let api = unsafe { *(table as *const KilnPluginApiV0) };
        if api.init.is_none() {
            return Err(OpenError::NullInit);
        }
        let standing = Arc::new(Standing {
            name: read_str(api.name),
            ..Standing::default()
        });
        Ok(Library {
            api,
            standing,
            _open: open,
            library: Some(library),
        })
    }

    /// Its standing (stopped or not), shared with its component types' callbacks.
    pub(crate) fn standing(&self) -> &Arc<Standing> {
        &self.standing
    }

    /// The plugin's name, as it gives it.
    pub(crate) fn name(&self) -> String {
        read_str(self.api.name)
    }

    /// Calls `init` with Kiln's API lookup, collecting what the plugin registers and
    /// which APIs it asked for and did not get.
    pub(crate) fn init(&self) -> InitOutcome {
        INIT.with(|s| *s.borrow_mut() = Some(InitOutcome::default()));
        let Some(init) = self.api.init else {
            // Refused when opened; never reached.
            return InitOutcome {
                code: -1,
                ..InitOutcome::default()
            };
        };
        // SAFETY: `init` is the plugin's, called once, as the ABI defines it.
        let code = unsafe { init(get_engine_api) };
        let mut outcome = INIT.with(|s| s.borrow_mut().take()).unwrap_or_default();
        outcome.code = code;
        for component in &mut outcome.components {
            component.callbacks.standing = Arc::clone(&self.standing);
        }
        outcome
    }

    /// Calls `shutdown` (not when the library was stopped).
    pub(crate) fn shutdown(&self) {
        let Some(_call) = self.standing.enter() else {
            return;
        };
        if let Some(shutdown) = self.api.shutdown {
            // SAFETY: the plugin's own function, called once, after its instances
            // went.
            unsafe { shutdown() }
        }
    }

    /// Calls `update`, if the plugin has one (not when it was stopped).
    pub(crate) fn update(&self, dt: f32) {
        let Some(update) = self.api.update else {
            return;
        };
        let Some(_call) = self.standing.enter() else {
            return;
        };
        set_call_in_progress(Some(CallInProgress {
            component: None,
            callback: "update",
            standing: Arc::clone(&self.standing),
        }));
        // SAFETY: the plugin's own function, as the ABI defines it.
        unsafe { update(dt) }
        set_call_in_progress(None);
    }
}

/// What a plugin's `init` did.
#[derive(Debug, Default)]
pub(crate) struct InitOutcome {
    /// What it returned.
    pub code: KilnResult,
    /// Component types it registered, copied.
    pub components: Vec<DeclaredComponent>,
    /// APIs it asked for that Kiln does not provide.
    pub missing: Vec<(u32, u32)>,
}

thread_local! {
    /// Collects registrations while a plugin's `init` runs on this thread.
    static INIT: RefCell<Option<InitOutcome>> = const { RefCell::new(None) };
    /// The transforms and entities of the world being simulated, while a plugin's
    /// `simulate` runs.
    static SIMULATING: RefCell<Option<(*mut TransformManager, *const EntityManager)>> =
        const { RefCell::new(None) };
    /// The component type whose `simulate` runs (for what the world API logs).
    static SIMULATING_TYPE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The component types that have written through a dead entity's handle, each
/// said once.
static WARNED_DEAD_WRITES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Whether `entity` is alive in the world being simulated (false outside a
/// `simulate`).
fn alive_now(entity: Entity) -> bool {
    SIMULATING.with(|s| {
        let Some((_, entities)) = *s.borrow() else {
            return false;
        };
        // SAFETY: set by `Callbacks::simulate` from a `&EntityManager` that outlives
        // the call, and cleared after it; only read here.
        unsafe { &*entities }.alive(entity)
    })
}

/// Logs a warning about the component type being simulated, once per type for
/// each `warned` set: `say` makes the text from the type's name.
fn warn_once(warned: &Mutex<BTreeSet<String>>, say: impl FnOnce(&str) -> String) {
    let component = SIMULATING_TYPE.with(|t| t.borrow().clone());
    let first = warned
        .lock()
        .is_ok_and(|mut warned| warned.insert(component.clone()));
    if first && let Ok(mut l) = LOG.lock() {
        l.push(PluginMessage {
            level: 1,
            text: say(&component),
        });
    }
}

/// A write through `entity`'s handle, refused if the entity is dead: an id, once
/// destroyed, never names a live entity again, and a plugin that kept one past
/// its `gc` is told once, by the log, what it did.
fn refuse_dead_write(entity: Entity) -> bool {
    if alive_now(entity) {
        return false;
    }
    warn_once(&WARNED_DEAD_WRITES, |component| {
        format!(
            "component \"{component}\" wrote through the handle of an entity that no longer exists (refused; a kept handle must be checked with is_alive, and dropped in gc)"
        )
    });
    true
}

/// Component types told once that they passed a number that is not finite.
static WARNED_NON_FINITE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// A write of `values`, refused if one is NaN or infinite: a pose Kiln keeps, the
/// play dump writes and the viewport draws must be numbers. The plugin's
/// component type is told once, by the log.
fn refuse_non_finite(values: &[f32], what: &str) -> bool {
    if values.iter().all(|v| v.is_finite()) {
        return false;
    }
    warn_once(&WARNED_NON_FINITE, |component| {
        format!(
            "component \"{component}\" passed {what} that is not a finite number ({values:?}); refused (said once)"
        )
    });
    true
}

/// One field as a plugin declared it, copied.
#[derive(Debug, Clone)]
pub(crate) struct DeclaredField {
    pub name: String,
    pub kind: u32,
    pub min: f64,
    pub max: f64,
    pub resource_type: String,
    pub default_json: String,
    pub doc: String,
}

/// A component type as a plugin declared it, copied, with its callbacks.
#[derive(Debug, Clone)]
pub(crate) struct DeclaredComponent {
    pub name: String,
    pub spawn_order: i32,
    pub doc: String,
    pub fields: Vec<DeclaredField>,
    pub callbacks: Callbacks,
    /// What the declaration lacks that the ABI requires (a null `create` or `gc`,
    /// null `fields` with a non-zero count), for the error that refuses it.
    pub missing: Vec<&'static str>,
}

/// A plugin component manager's callbacks and its `user` pointer.
#[derive(Debug, Clone)]
pub(crate) struct Callbacks {
    decl: KilnComponentDeclV0,
    /// The library's standing: no call is made once it was stopped.
    standing: Arc<Standing>,
}

// SAFETY: see `Library`: one call at a time, from any thread, by contract.
unsafe impl Send for Callbacks {}
// SAFETY: as above; `&Callbacks` only makes calls the contract allows.
unsafe impl Sync for Callbacks {}

impl Callbacks {
    /// Creates instances: `entities[i]` owns `data[i * record_size..][..record_size]`.
    pub(crate) fn create(
        &self,
        entities: &[Entity],
        data: &[u8],
        record_size: usize,
    ) -> KilnResult {
        let ids: Vec<KilnEntity> = entities.iter().map(|e| e.to_bits()).collect();
        if data.len() != ids.len() * record_size {
            return -1;
        }
        // Refused at registration without one; never reached.
        let Some(create) = self.decl.create else {
            return -1;
        };
        // A stopped plugin's components spawn with no instance in it: the rest of
        // the level still spawns.
        let Some(_call) = self.standing.enter() else {
            return KILN_OK;
        };
        // SAFETY: both slices outlive the call; lengths match what the ABI promises.
        unsafe {
            create(
                self.decl.user,
                ids.as_ptr(),
                ids.len(),
                data.as_ptr(),
                record_size,
            )
        }
    }

    /// Destroys `entity`'s instance (through `gc`, the one entity dead, when the
    /// plugin has no `destroy`).
    pub(crate) fn destroy(&self, entity: Entity) {
        let Some(call) = self.standing.enter() else {
            return;
        };
        match self.decl.destroy {
            // SAFETY: the plugin's callback with its own `user`, as declared.
            Some(destroy) => unsafe { destroy(self.decl.user, entity.to_bits()) },
            None => {
                drop(call);
                self.gc(&|e| e != entity)
            }
        }
    }

    /// Destroys the instances of entities `alive` says are dead.
    pub(crate) fn gc(&self, alive: &dyn Fn(Entity) -> bool) {
        unsafe extern "C" fn trampoline(ctx: *mut c_void, entity: KilnEntity) -> u32 {
            // SAFETY: `ctx` is the `&&dyn Fn` below, alive for the whole `gc` call.
            let alive = unsafe { &*(ctx as *const &dyn Fn(Entity) -> bool) };
            u32::from(alive(Entity::from_bits(entity)))
        }
        // Refused at registration without one; never reached.
        let Some(gc) = self.decl.gc else {
            return;
        };
        let Some(_call) = self.standing.enter() else {
            return;
        };
        let ctx: *const &dyn Fn(Entity) -> bool = &alive;
        // SAFETY: the plugin calls `trampoline` only during this call, with `ctx`.
        unsafe { gc(self.decl.user, trampoline, ctx as *mut c_void) }
    }

    /// Whether the type moves anything each step.
    pub(crate) fn simulates(&self) -> bool {
        self.decl.simulate.is_some()
    }

    /// Advances the instances of the component type `name`, with the world API
    /// reaching `transforms` and `entities`.
    pub(crate) fn simulate(
        &self,
        name: &str,
        dt: f32,
        transforms: &mut TransformManager,
        entities: &EntityManager,
    ) {
        let Some(simulate) = self.decl.simulate else {
            return;
        };
        let Some(_call) = self.standing.enter() else {
            return;
        };
        SIMULATING_TYPE.with(|t| name.clone_into(&mut t.borrow_mut()));
        set_call_in_progress(Some(CallInProgress {
            component: Some(name.to_owned()),
            callback: "simulate",
            standing: Arc::clone(&self.standing),
        }));
        SIMULATING.with(|s| {
            *s.borrow_mut() = Some((
                transforms as *mut TransformManager,
                entities as *const EntityManager,
            ))
        });
        // SAFETY: the plugin's callback; the world table is static and its functions
        // reach `transforms` and `entities` only through SIMULATING, set for this call
        // alone.
        unsafe { simulate(self.decl.user, dt, &WORLD_API_V0.0) };
        SIMULATING.with(|s| *s.borrow_mut() = None);
        set_call_in_progress(None);
    }
}

/// A plugin callback running now: what a watchdog on another thread names, and
/// stops, when a call takes too long.
#[derive(Debug, Clone)]
pub(crate) struct CallInProgress {
    /// The component type whose callback it is (none for the plugin's `update`).
    pub component: Option<String>,
    /// Which callback.
    pub callback: &'static str,
    standing: Arc<Standing>,
}

impl CallInProgress {
    /// The plugin's name.
    pub(crate) fn plugin(&self) -> &str {
        &self.standing.name
    }

    /// Stops the plugin: no call is made into it again, and its library is never
    /// unloaded (the hung call may still be running its code).
    pub(crate) fn stop(&self) {
        self.standing.stopped.store(true, Ordering::SeqCst);
    }
}

static CALL_IN_PROGRESS: Mutex<Option<CallInProgress>> = Mutex::new(None);

fn set_call_in_progress(call: Option<CallInProgress>) {
    if let Ok(mut now) = CALL_IN_PROGRESS.lock() {
        *now = call;
    }
}

/// The plugin callback running now, if any.
pub(crate) fn call_in_progress() -> Option<CallInProgress> {
    CALL_IN_PROGRESS.lock().ok().and_then(|now| now.clone())
}

/// Runs `f` on the transforms being simulated, if a plugin's `simulate` is running.
fn with_transforms<R>(f: impl FnOnce(&mut TransformManager) -> R) -> Option<R> {
    SIMULATING.with(|s| {
        let (ptr, _) = (*s.borrow())?;
        // SAFETY: set by `Callbacks::simulate` from a `&mut TransformManager` that
        // outlives the call, and cleared after it; one thread, no other borrow is
        // used while the plugin runs.
        Some(f(unsafe { &mut *ptr }))
    })
}

unsafe extern "C" fn world_is_alive(_ctx: *mut c_void, entity: KilnEntity) -> u32 {
    SIMULATING.with(|s| {
        let Some((_, entities)) = *s.borrow() else {
            return 0;
        };
        // SAFETY: set by `Callbacks::simulate` from a `&EntityManager` that outlives
        // the call, and cleared after it; only read here.
        let entities = unsafe { &*entities };
        u32::from(entities.alive(Entity::from_bits(entity)))
    })
}

unsafe extern "C" fn world_pose(_ctx: *mut c_void, entity: KilnEntity, out: *mut f32) -> u32 {
    if out.is_null() {
        return 0;
    }
    let pose = with_transforms(|t| {
        let i = t.lookup(Entity::from_bits(entity))?;
        Some(t.world(i))
    })
    .flatten();
    let Some(pose) = pose else { return 0 };
    let m = pose.to_cols_array();
    // SAFETY: the ABI: `out` points to 12 writable floats.
    unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), out, 12) };
    1
}

unsafe extern "C" fn world_set_local_translation(
    _ctx: *mut c_void,
    entity: KilnEntity,
    xyz: *const f32,
) -> u32 {
    if xyz.is_null() {
        return 0;
    }
    // SAFETY: the ABI: `xyz` points to 3 readable floats.
    let v = unsafe { std::slice::from_raw_parts(xyz, 3) };
    if refuse_non_finite(v, "set_local_translation a translation") {
        return 0;
    }
    let v = glam::Vec3::new(v[0], v[1], v[2]);
    if refuse_dead_write(Entity::from_bits(entity)) {
        return 0;
    }
    with_transforms(|t| match t.lookup(Entity::from_bits(entity)) {
        Some(i) => {
            t.set_local_translation(i, v);
            1
        }
        None => 0,
    })
    .unwrap_or(0)
}

unsafe extern "C" fn world_local_pose(_ctx: *mut c_void, entity: KilnEntity, out: *mut f32) -> u32 {
    if out.is_null() {
        return 0;
    }
    let pose = with_transforms(|t| {
        let i = t.lookup(Entity::from_bits(entity))?;
        Some(t.local(i))
    })
    .flatten();
    let Some(pose) = pose else { return 0 };
    let m = pose.to_cols_array();
    // SAFETY: the ABI: `out` points to 12 writable floats.
    unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), out, 12) };
    1
}

unsafe extern "C" fn world_set_local_pose(
    _ctx: *mut c_void,
    entity: KilnEntity,
    m: *const f32,
) -> u32 {
    if m.is_null() {
        return 0;
    }
    // SAFETY: the ABI: `m` points to 12 readable floats.
    let m = unsafe { std::slice::from_raw_parts(m, 12) };
    if refuse_non_finite(m, "set_local_pose a pose") {
        return 0;
    }
    let mut cols = [0.0f32; 12];
    cols.copy_from_slice(m);
    let pose = glam::Affine3A::from_cols_array(&cols);
    if refuse_dead_write(Entity::from_bits(entity)) {
        return 0;
    }
    with_transforms(|t| match t.lookup(Entity::from_bits(entity)) {
        Some(i) => {
            t.set_local(i, pose);
            1
        }
        None => 0,
    })
    .unwrap_or(0)
}

static WORLD_API_V0: Table<KilnWorldApiV0> = Table(KilnWorldApiV0 {
    is_alive: world_is_alive,
    world_pose,
    set_local_translation: world_set_local_translation,
    local_pose: world_local_pose,
    set_local_pose: world_set_local_pose,
    ctx: std::ptr::null_mut(),
});

/// A message a plugin logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginMessage {
    /// 0 info, 1 warning, 2 error.
    pub level: u32,
    /// What it said.
    pub text: String,
}

static LOG: std::sync::Mutex<Vec<PluginMessage>> = std::sync::Mutex::new(Vec::new());

/// Takes the messages plugins logged since the last call.
pub(crate) fn take_messages() -> Vec<PluginMessage> {
    LOG.lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default()
}

/// The last message logged so far that holds `needle` (left in the log).
pub(crate) fn last_message_with(needle: &str) -> Option<String> {
    let log = LOG.lock().ok()?;
    log.iter()
        .rev()
        .find(|m| m.text.contains(needle))
        .map(|m| m.text.clone())
}

unsafe extern "C" fn log(_ctx: *mut c_void, level: u32, message: KilnStr) {
    let text = read_str(message);
    if let Ok(mut l) = LOG.lock() {
        l.push(PluginMessage { level, text });
    }
}

static LOG_API_V0: Table<KilnLogApiV0> = Table(KilnLogApiV0 {
    log,
    ctx: std::ptr::null_mut(),
});

unsafe extern "C" fn register_component(
    _ctx: *mut c_void,
    decl: *const KilnComponentDeclV0,
) -> KilnResult {
    if decl.is_null() {
        return -1;
    }
    // SAFETY: the ABI: `decl` points to a declaration valid for this call.
    let decl = unsafe { *decl };
    let mut missing = Vec::new();
    if decl.create.is_none() {
        missing.push("create");
    }
    if decl.gc.is_none() {
        missing.push("gc");
    }
    if decl.fields.is_null() && decl.field_count != 0 {
        missing.push("fields");
    }
    let fields = if decl.fields.is_null() || decl.field_count == 0 {
        Vec::new()
    } else {
        // SAFETY: the ABI: `fields` points to `field_count` declarations.
        unsafe { std::slice::from_raw_parts(decl.fields, decl.field_count) }
            .iter()
            .map(|f| DeclaredField {
                name: read_str(f.name),
                kind: f.kind,
                min: f.min,
                max: f.max,
                resource_type: read_str(f.resource_type),
                default_json: read_str(f.default_json),
                doc: read_str(f.doc),
            })
            .collect()
    };
    let declared = DeclaredComponent {
        name: read_str(decl.name),
        spawn_order: decl.spawn_order,
        doc: read_str(decl.doc),
        fields,
        // The library's own standing is put in by `Library::init`.
        callbacks: Callbacks {
            decl,
            standing: Arc::default(),
        },
        missing,
    };
    INIT.with(|s| match &mut *s.borrow_mut() {
        Some(outcome) => {
            outcome.components.push(declared);
            KILN_OK
        }
        // Registering is for `init`: outside it there is nothing to add to.
        None => -1,
    })
}

static REGISTRY_API_V0: Table<KilnRegistryApiV0> = Table(KilnRegistryApiV0 {
    register_component,
    ctx: std::ptr::null_mut(),
});

/// Kiln's side of "interface querying": the table for `(api_id, version)`, or null
/// (noted, so that a failing `init` can be explained).
unsafe extern "C" fn get_engine_api(api_id: u32, version: u32) -> *const c_void {
    let table: *const c_void = match (api_id, version) {
        (REGISTRY_API_ID, 0) => &REGISTRY_API_V0.0 as *const KilnRegistryApiV0 as *const c_void,
        (WORLD_API_ID, 0) => &WORLD_API_V0.0 as *const KilnWorldApiV0 as *const c_void,
        (LOG_API_ID, 0) => &LOG_API_V0.0 as *const KilnLogApiV0 as *const c_void,
        _ => std::ptr::null(),
    };
    if table.is_null() {
        INIT.with(|s| {
            if let Some(outcome) = &mut *s.borrow_mut() {
                outcome.missing.push((api_id, version));
            }
        });
    }
    table
}

/// The newest version of each engine API Kiln provides.
pub(crate) fn provided_versions(api_id: u32) -> Option<u32> {
    match api_id {
        REGISTRY_API_ID | WORLD_API_ID | LOG_API_ID => Some(0),
        _ => None,
    }
}

/// An engine API table in a static: function pointers and a null context, never
/// written.
struct Table<T>(T);
// SAFETY: the tables are immutable and hold only function pointers and null.
unsafe impl<T> Sync for Table<T> {}
