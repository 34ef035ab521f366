//! Loads Kiln plugins: dynamic libraries that speak the C ABI of [`kiln_plugin`], in
//! Rust through its SDK or in C through `kiln_plugin.h`.
//!
//! [`load`] opens a library, asks it for plugin API v0, calls its `init` with Kiln's
//! API lookup, and turns each component type it registers into a
//! [`kiln_core::ComponentType`]: the schema for the inspector, the compiler and the
//! dependency checker (a resource field is a typed reference), a compile function that
//! packs the fields into fixed records (the layout `kiln_plugin::abi::KilnFieldKind`
//! documents), and a spawn function that hands a level's records to the plugin in one
//! call. The instances live in the plugin; a [`PluginManager`] in the world forwards
//! destroy, garbage collection and simulation to it.
//!
//! Every way a library can be wrong is a [`PluginError`] naming the plugin and the
//! reason; Kiln goes on without it.
//!
//! `unsafe` lives in one private module, `ffi`, and nowhere else.

#![warn(missing_docs)]

pub mod carried_sdk;
mod ffi;
pub mod prebuilt;
pub mod project;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kiln_core::components::TransformManager;
use kiln_core::{
    ComponentBatch, ComponentManager, ComponentType, Entity, EntityManager, FieldSchema,
    FieldValues, Registry, SpawnContext,
};
use kiln_plugin::abi::{KilnFieldKind, LOG_API_ID, REGISTRY_API_ID, WORLD_API_ID};

pub use ffi::PluginMessage;

/// Why a plugin was not loaded. Each names the plugin (its library, or its name once
/// known) and what is wrong.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum PluginError {
    /// The library file does not exist.
    #[error("plugin {path}: the library does not exist")]
    NotFound {
        /// The library.
        path: PathBuf,
    },
    /// The dynamic loader refused the file.
    #[error("plugin {path}: not a loadable library: {reason}")]
    NotALibrary {
        /// The library.
        path: PathBuf,
        /// What the loader said.
        reason: String,
    },
    /// The library does not export `kiln_get_plugin_api`.
    #[error("plugin {path}: not a Kiln plugin: it does not export kiln_get_plugin_api")]
    NoEntryPoint {
        /// The library.
        path: PathBuf,
    },
    /// The library has no plugin API v0.
    #[error("plugin {path}: it provides no plugin API v0 (kiln_get_plugin_api returned null)")]
    NoPluginApi {
        /// The library.
        path: PathBuf,
    },
    /// A function the ABI requires is null in the plugin's table.
    #[error(
        "plugin {path}: its KilnPluginApiV0 has no `{function}` (null); the function is required"
    )]
    NullFunction {
        /// The library.
        path: PathBuf,
        /// Which function.
        function: &'static str,
    },
    /// `init` failed after asking for an API Kiln does not provide.
    #[error("plugin {name} needs {api} v{version}; Kiln provides {provided}")]
    MissingEngineApi {
        /// The plugin.
        name: String,
        /// Which API, e.g. `world API`.
        api: String,
        /// The version it asked for.
        version: u32,
        /// What Kiln has, e.g. `v0` or `no such API`.
        provided: String,
    },
    /// `init` panicked.
    #[error("{message}")]
    InitPanicked {
        /// The plugin.
        name: String,
        /// What the SDK logged: the plugin, `init` and the panic's message.
        message: String,
    },
    /// `init` returned an error code.
    #[error("plugin {name}: init failed with code {code}")]
    InitFailed {
        /// The plugin.
        name: String,
        /// What it returned.
        code: i32,
    },
    /// The library is loaded already (the dynamic loader would hand back the same
    /// copy, sharing its state with the first).
    #[error(
        "plugin {path}: this library is loaded already; a library is loaded once (hot reload loads a fresh copy)"
    )]
    AlreadyLoaded {
        /// The library.
        path: PathBuf,
    },
    /// A plugin folder `kiln.project` lists cannot be used.
    #[error("plugin folder {entry}: {reason}")]
    BadFolder {
        /// The folder, as listed.
        entry: String,
        /// What is wrong.
        reason: String,
    },
    /// Building the plugin failed.
    #[error("plugin folder {entry}: the build failed: {output}")]
    BuildFailed {
        /// The folder, as listed.
        entry: String,
        /// What the compiler said (its last lines).
        output: String,
    },
    /// The plugin's sources changed since its library was built and building was not allowed.
    #[error(
        "plugin folder {entry}: its sources changed since it was built; build it (Kiln builds plugins when it opens the project)"
    )]
    NotBuilt {
        /// The folder, as listed.
        entry: String,
    },
    /// The plugin's sources need building, nothing on this machine can build them,
    /// and there is no prebuilt library for this platform.
    #[error(
        "plugin folder {entry}: its sources need building and there is no {program} on this machine, nor a prebuilt library for {platform} in {entry}/prebuilt/{platform}/; whoever writes the plugin can make one with `kiln plugins prebuild` (and commit it)"
    )]
    NoToolchain {
        /// The folder, as listed.
        entry: String,
        /// The program that would build it (`cargo`, `cc`).
        program: String,
        /// This machine's platform (`x86_64-linux`).
        platform: String,
    },
    /// A component type it registered is not acceptable.
    #[error("plugin {name}: component type \"{component}\": {reason}")]
    BadComponent {
        /// The plugin.
        name: String,
        /// The component type.
        component: String,
        /// What is wrong.
        reason: String,
    },
}

/// A loaded plugin.
#[derive(Debug)]
pub struct LoadedPlugin {
    /// Its name, as it gives it.
    pub name: String,
    /// The library it was loaded from.
    pub path: PathBuf,
    /// The component types it registered.
    pub component_types: Vec<String>,
    library: Arc<ffi::Library>,
    shut_down: bool,
}

impl LoadedPlugin {
    /// Calls the plugin's `update`, if it has one.
    pub fn update(&self, dt: f32) {
        self.library.update(dt);
    }

    /// A handle that calls the plugin's `update` from another thread (the one a
    /// watchdog runs the simulation on).
    pub fn updater(&self) -> PluginUpdater {
        PluginUpdater(Arc::clone(&self.library))
    }

    /// Whether a watchdog stopped the plugin ([`stop_call_in_progress`]): it is not
    /// called again, and its library stays loaded until Kiln exits.
    pub fn stopped(&self) -> bool {
        self.library.standing().stopped()
    }

    /// Calls `shutdown`. The library stays loaded while anything it registered (a
    /// component type in a registry, a manager in a world) is alive.
    pub fn shutdown(mut self) {
        self.shut_down = true;
        self.library.shutdown();
    }
}

impl Drop for LoadedPlugin {
    fn drop(&mut self) {
        if !self.shut_down {
            self.shut_down = true;
            self.library.shutdown();
        }
    }
}

/// Messages plugins logged since the last call (shown in Kiln's log and problems).
pub fn take_messages() -> Vec<PluginMessage> {
    ffi::take_messages()
}

/// A plugin's `update`, callable from any thread (one call at a time per plugin,
/// as every call).
#[derive(Debug, Clone)]
pub struct PluginUpdater(Arc<ffi::Library>);

impl PluginUpdater {
    /// Calls the plugin's `update`, if it has one and was not stopped.
    pub fn update(&self, dt: f32) {
        self.0.update(dt);
    }
}

/// The plugin callback running now, on any thread: what a watchdog names when a
/// frame takes too long.
pub fn call_in_progress() -> Option<PluginCall> {
    ffi::call_in_progress().map(|call| PluginCall {
        plugin: call.plugin().to_owned(),
        component: call.component.clone(),
        callback: call.callback,
    })
}

/// A plugin call, as a watchdog names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCall {
    /// The plugin's name.
    pub plugin: String,
    /// The component type whose callback it was (none for `update`).
    pub component: Option<String>,
    /// Which callback: `simulate` or `update`.
    pub callback: &'static str,
}

impl std::fmt::Display for PluginCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.component {
            Some(component) => write!(
                f,
                "component \"{component}\" (plugin {}) did not return from {}",
                self.plugin, self.callback
            ),
            None => write!(
                f,
                "plugin {} did not return from {}",
                self.plugin, self.callback
            ),
        }
    }
}

/// Stops the plugin whose callback is running now, on whichever thread: it is never
/// called again (its component types spawn with no instance in it, its `simulate`
/// and `update` are skipped) and its library stays loaded until Kiln exits, since
/// the hung call may still be running its code. What was stopped, or `None` when no
/// plugin call is running.
pub fn stop_call_in_progress() -> Option<PluginCall> {
    let call = ffi::call_in_progress()?;
    call.stop();
    Some(PluginCall {
        plugin: call.plugin().to_owned(),
        component: call.component.clone(),
        callback: call.callback,
    })
}

/// Gives up on `thread` (one a watchdog ran a simulation on, and stopped waiting
/// for): whatever it does after its hung call returns calls no plugin.
pub fn abandon_thread(thread: std::thread::ThreadId) {
    ffi::abandon_thread(thread);
}

/// Whether the current thread was given up on ([`abandon_thread`]): what it holds
/// of a world must then be leaked, not dropped (dropping would call plugins).
pub fn this_thread_abandoned() -> bool {
    ffi::this_thread_abandoned()
}

fn api_name(id: u32) -> String {
    match id {
        REGISTRY_API_ID => "registry API".into(),
        WORLD_API_ID => "world API".into(),
        LOG_API_ID => "log API".into(),
        other => format!("API {:?}", String::from_utf8_lossy(&other.to_be_bytes())),
    }
}

/// The libraries open in this process, by canonical path.
static OPEN_LIBRARIES: std::sync::Mutex<std::collections::BTreeSet<PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// A library's place in [`OPEN_LIBRARIES`], given up when the library is closed.
struct OpenGuard(PathBuf);

impl OpenGuard {
    /// Records `path` as open; `None` if it is open already.
    fn take(path: &Path) -> Option<OpenGuard> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let mut open = OPEN_LIBRARIES.lock().unwrap_or_else(|e| e.into_inner());
        // Not `then_some`: a guard built and dropped here would remove the entry
        // of the library that is open (and lock the mutex twice).
        if open.insert(key.clone()) {
            Some(OpenGuard(key))
        } else {
            None
        }
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        let mut open = OPEN_LIBRARIES.lock().unwrap_or_else(|e| e.into_inner());
        open.remove(&self.0);
    }
}

/// Loads the plugin at `path` and adds its component types to `registry`. On any
/// error nothing is added and the library is unloaded.
pub fn load(path: &Path, registry: &mut Registry) -> Result<LoadedPlugin, PluginError> {
    if !path.is_file() {
        return Err(PluginError::NotFound {
            path: path.to_owned(),
        });
    }
    let guard = OpenGuard::take(path).ok_or_else(|| PluginError::AlreadyLoaded {
        path: path.to_owned(),
    })?;
    let library = ffi::Library::open(path, Box::new(guard)).map_err(|e| match e {
        ffi::OpenError::NotALibrary(reason) => PluginError::NotALibrary {
            path: path.to_owned(),
            reason,
        },
        ffi::OpenError::NoEntryPoint => PluginError::NoEntryPoint {
            path: path.to_owned(),
        },
        ffi::OpenError::NoPluginApi => PluginError::NoPluginApi {
            path: path.to_owned(),
        },
        ffi::OpenError::NullInit => PluginError::NullFunction {
            path: path.to_owned(),
            function: "init",
        },
    })?;
    let name = library.name();
    let name = if name.is_empty() {
        path.display().to_string()
    } else {
        name
    };
    let outcome = library.init();
    let library = Arc::new(library);
    let fail = |error: PluginError, library: &Arc<ffi::Library>| {
        library.shutdown();
        Err(error)
    };
    if outcome.code != 0 {
        let error = match outcome.missing.first() {
            Some(&(api, version)) => PluginError::MissingEngineApi {
                name: name.clone(),
                api: api_name(api),
                version,
                provided: ffi::provided_versions(api).map_or_else(
                    || "no such API".into(),
                    |v| format!("v0-v{v}").replace("v0-v0", "v0"),
                ),
            },
            None => match ffi::last_message_with("panicked in init")
                .filter(|_| outcome.code == kiln_plugin::abi::KILN_PANICKED)
            {
                Some(message) => PluginError::InitPanicked {
                    name: name.clone(),
                    message,
                },
                None => PluginError::InitFailed {
                    name: name.clone(),
                    code: outcome.code,
                },
            },
        };
        return fail(error, &library);
    }
    // Everything is checked before anything is registered.
    let mut types = Vec::new();
    for declared in &outcome.components {
        let bad = |reason: String| PluginError::BadComponent {
            name: name.clone(),
            component: declared.name.clone(),
            reason,
        };
        let ty = match component_type(declared, &library) {
            Ok(t) => t,
            Err(reason) => return fail(bad(reason), &library),
        };
        if registry.component(&ty.name).is_some()
            || types.iter().any(|t: &ComponentType| t.name == ty.name)
        {
            return fail(
                bad("a component type of that name already exists".into()),
                &library,
            );
        }
        types.push(ty);
    }
    let component_types: Vec<String> = types.iter().map(|t| t.name.clone()).collect();
    for ty in types {
        let component = ty.name.clone();
        if let Err(e) = registry.register_component(ty) {
            return fail(
                PluginError::BadComponent {
                    name: name.clone(),
                    component,
                    reason: e.to_string(),
                },
                &library,
            );
        }
    }
    Ok(LoadedPlugin {
        name,
        path: path.to_owned(),
        component_types,
        library,
        shut_down: false,
    })
}

/// Whether a name can be a component type's or a field's: lowercase ASCII letters,
/// digits and `_`, starting with a letter, 1 to 64 long.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The field schema a declared field stands for, and its kind.
fn field_schema(f: &ffi::DeclaredField) -> Result<(FieldSchema, KilnFieldKind), String> {
    if !valid_name(&f.name) {
        return Err(format!(
            "field \"{}\": names are lowercase letters, digits and '_', starting with a letter",
            f.name
        ));
    }
    let kind = KilnFieldKind::from_raw(f.kind)
        .ok_or_else(|| format!("field \"{}\": unknown kind {}", f.name, f.kind))?;
    let ranged = matches!(kind, KilnFieldKind::Int | KilnFieldKind::Float);
    // Vectors, angles and colours have a range for each number when one is given
    // (min < max); 0 and 0 is none (what a declaration that leaves them out has).
    let per_number = matches!(
        kind,
        KilnFieldKind::Vec3 | KilnFieldKind::Angles | KilnFieldKind::Color
    ) && !(f.min == 0.0 && f.max == 0.0);
    if (ranged || per_number) && !(f.min.is_finite() && f.max.is_finite() && f.min <= f.max) {
        return Err(format!(
            "field \"{}\": the range {}..={} is not a range",
            f.name, f.min, f.max
        ));
    }
    let default: Option<serde_json::Value> = if f.default_json.trim().is_empty() {
        None
    } else {
        Some(serde_json::from_str(&f.default_json).map_err(|e| {
            format!(
                "field \"{}\": the default {:?} is not JSON: {e}",
                f.name, f.default_json
            )
        })?)
    };
    let n = |v: &serde_json::Value| v.as_f64();
    let arr = |v: &serde_json::Value, len: usize| -> Option<Vec<f32>> {
        let a = v.as_array()?;
        (a.len() == len)
            .then(|| a.iter().map(|x| x.as_f64().map(|x| x as f32)))
            .and_then(|x| x.collect())
    };
    let name = f.name.as_str();
    let mut schema = match kind {
        KilnFieldKind::Bool => FieldSchema::bool(
            name,
            default.as_ref().and_then(|d| d.as_bool()).unwrap_or(false),
        ),
        KilnFieldKind::Int => FieldSchema::int(
            name,
            default
                .as_ref()
                .and_then(|d| d.as_i64())
                .unwrap_or(f.min.max(0.0).min(f.max) as i64),
            f.min as i64,
            f.max as i64,
        ),
        KilnFieldKind::Float => FieldSchema::float(
            name,
            default
                .as_ref()
                .and_then(n)
                .unwrap_or(f.min.max(0.0).min(f.max)) as f32,
            f.min as f32,
            f.max as f32,
        ),
        KilnFieldKind::Vec3 | KilnFieldKind::Angles => {
            let d = default
                .as_ref()
                .and_then(|d| arr(d, 3))
                .unwrap_or(vec![0.0; 3]);
            let d = [d[0], d[1], d[2]];
            if kind == KilnFieldKind::Vec3 {
                FieldSchema::vec3(name, d)
            } else {
                FieldSchema::angles(name, d)
            }
        }
        KilnFieldKind::Color => {
            let d = default
                .as_ref()
                .and_then(|d| arr(d, 4))
                .unwrap_or(vec![1.0; 4]);
            FieldSchema::color(name, [d[0], d[1], d[2], d[3]])
        }
        KilnFieldKind::Resource => {
            if !kiln_core::path::is_extension(&f.resource_type) {
                return Err(format!(
                    "field \"{}\": a resource field needs its resource type (a file extension), not {:?}",
                    f.name, f.resource_type
                ));
            }
            FieldSchema::resource(name, &f.resource_type)
        }
        KilnFieldKind::Entity => FieldSchema::entity(name),
    };
    if per_number {
        schema = schema.each_in(f.min, f.max);
    }
    // The default the kind gives (zeros, white) must be in the range too.
    let default_value = default.clone().unwrap_or_else(|| schema.default.clone());
    schema
        .check(&default_value)
        .map_err(|e| format!("field \"{}\": the default: {e}", f.name))?;
    if !f.doc.is_empty() {
        schema = schema.doc(&f.doc);
    }
    Ok((schema, kind))
}

/// The batch's records with each entity field's level index made the handle of
/// the entity spawned for it ([`kiln_plugin::abi::KILN_NO_ENTITY`] for none):
/// borrowed as they are when the type has no entity field.
fn with_entity_handles<'b>(
    batch: &ComponentBatch<'b>,
    record_size: usize,
    entity_offsets: &[usize],
) -> std::borrow::Cow<'b, [u8]> {
    if entity_offsets.is_empty() || record_size == 0 {
        return std::borrow::Cow::Borrowed(batch.data);
    }
    let mut data = batch.data.to_vec();
    for record in data.chunks_exact_mut(record_size) {
        for &at in entity_offsets {
            let Some(field) = record.get_mut(at..at + 8) else {
                continue;
            };
            let mut index = [0u8; 8];
            index.copy_from_slice(field);
            let handle = u32::try_from(u64::from_le_bytes(index))
                .ok()
                .and_then(|index| batch.entity(index))
                .map_or(kiln_plugin::abi::KILN_NO_ENTITY, Entity::to_bits);
            field.copy_from_slice(&handle.to_le_bytes());
        }
    }
    std::borrow::Cow::Owned(data)
}

/// The registry entry for a declared component type.
fn component_type(
    declared: &ffi::DeclaredComponent,
    library: &Arc<ffi::Library>,
) -> Result<ComponentType, String> {
    if !valid_name(&declared.name) {
        return Err(
            "names are lowercase letters, digits and '_', starting with a letter, at most 64"
                .into(),
        );
    }
    if let Some(first) = declared.missing.first() {
        return Err(match *first {
            "fields" => "its `fields` is null with a `field_count` above 0".to_owned(),
            function => format!("its `{function}` is null; the function is required"),
        });
    }
    let mut fields = Vec::new();
    let mut kinds = Vec::new();
    for f in &declared.fields {
        let (schema, kind) = field_schema(f)?;
        if fields.iter().any(|s: &FieldSchema| s.name == schema.name) {
            return Err(format!("field \"{}\" is declared twice", schema.name));
        }
        fields.push(schema);
        kinds.push(kind);
    }
    let record_size: usize = kinds.iter().map(|k| k.size()).sum();
    let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
    let packed = kinds.clone();
    let compile = move |values: &FieldValues, out: &mut Vec<u8>| {
        for (name, kind) in names.iter().zip(&packed) {
            match kind {
                KilnFieldKind::Bool => {
                    out.extend_from_slice(&u32::from(values.bool(name)).to_le_bytes())
                }
                KilnFieldKind::Int => out.extend_from_slice(&values.i64(name).to_le_bytes()),
                KilnFieldKind::Float => out.extend_from_slice(&values.f32(name).to_le_bytes()),
                KilnFieldKind::Vec3 | KilnFieldKind::Angles => {
                    for c in values.vec3(name).to_array() {
                        out.extend_from_slice(&c.to_le_bytes());
                    }
                }
                KilnFieldKind::Color => {
                    for c in values.color(name).to_array() {
                        out.extend_from_slice(&c.to_le_bytes());
                    }
                }
                KilnFieldKind::Resource => {
                    out.extend_from_slice(&values.resource_id(name).0.to_le_bytes())
                }
                // The entity's index in the level; made its handle at spawn.
                KilnFieldKind::Entity => {
                    out.extend_from_slice(&u64::from(values.entity_index(name)).to_le_bytes())
                }
            }
        }
        Ok(())
    };
    // Where each entity field is in a record, to make its index a handle at spawn.
    let entity_offsets: Vec<usize> = (kinds.iter())
        .scan(0, |at, kind| {
            let here = *at;
            *at += kind.size();
            Some((here, *kind))
        })
        .filter(|(_, kind)| *kind == KilnFieldKind::Entity)
        .map(|(at, _)| at)
        .collect();
    let callbacks = declared.callbacks.clone();
    let type_name = declared.name.clone();
    let keep_loaded = library.clone();
    let spawn = move |ctx: &mut SpawnContext, batch: &ComponentBatch| {
        let count = if record_size == 0 {
            batch.entity_index.len()
        } else {
            batch.fixed_records(record_size)?.count()
        };
        let owners: Vec<Entity> = (0..count).map(|i| batch.owner(i)).collect();
        let data = with_entity_handles(batch, record_size, &entity_offsets);
        let code = callbacks.create(&owners, &data, record_size);
        if code == kiln_plugin::abi::KILN_PANICKED
            && let Some(said) = ffi::last_message_with("panicked in create")
        {
            return Err(said);
        }
        if code != 0 {
            return Err(format!("the plugin's create failed with code {code}"));
        }
        let manager = match ctx.world.extension_named_mut(&type_name) {
            Some(m) => m,
            None => {
                ctx.world.add_extension(PluginManager {
                    name: type_name.clone(),
                    callbacks: callbacks.clone(),
                    entities: Vec::new(),
                    _library: keep_loaded.clone(),
                });
                ctx.world
                    .extension_named_mut(&type_name)
                    .ok_or("the plugin's manager could not be added")?
            }
        };
        let manager = (manager as &mut dyn std::any::Any)
            .downcast_mut::<PluginManager>()
            .ok_or_else(|| format!("another manager is called {type_name}"))?;
        manager.entities.extend(owners);
        Ok(())
    };
    Ok(
        ComponentType::new(&declared.name, declared.spawn_order, compile, spawn)
            .with_fields(fields)
            .with_doc(&declared.doc),
    )
}

/// The world's face of a plugin component type: the instances live in the plugin;
/// this forwards destroy, garbage collection and simulation to it, and keeps its
/// library loaded while the world has any.
pub struct PluginManager {
    name: String,
    callbacks: ffi::Callbacks,
    entities: Vec<Entity>,
    _library: Arc<ffi::Library>,
}

impl std::fmt::Debug for PluginManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginManager")
            .field("name", &self.name)
            .field("instances", &self.entities.len())
            .finish_non_exhaustive()
    }
}

impl Drop for PluginManager {
    /// A world dropped (a level despawned, the preview respawned) takes its instances
    /// in the plugin with it: one collection pass in which exactly this world's
    /// entities are dead, rather than one `destroy` call per entity.
    fn drop(&mut self) {
        if self.entities.is_empty() {
            return;
        }
        let mine: std::collections::HashSet<Entity> = self.entities.drain(..).collect();
        self.callbacks.gc(&|e| !mine.contains(&e));
    }
}

impl ComponentManager for PluginManager {
    fn type_name(&self) -> &str {
        &self.name
    }

    fn len(&self) -> usize {
        self.entities.len()
    }

    fn destroy_entity(&mut self, entity: Entity) {
        if self.entities.contains(&entity) {
            self.callbacks.destroy(entity);
            self.entities.retain(|e| *e != entity);
        }
    }

    fn gc(&mut self, entities: &EntityManager) {
        self.sweep(entities);
    }

    fn sweep(&mut self, entities: &EntityManager) {
        self.callbacks.gc(&|e| entities.alive(e));
        self.entities.retain(|e| entities.alive(*e));
    }

    fn simulate(&mut self, dt: f32, transforms: &mut TransformManager, entities: &EntityManager) {
        if self.callbacks.simulates() {
            self.callbacks
                .simulate(&self.name, dt, transforms, entities);
        }
    }
}
