//! The type registry: every component type and resource type the engine knows.
//!
//! A component type registers (seed part 4) its name, hashed into the 32-bit
//! `component_identifier`; a `spawn_order`; a compile function (validated JSON fields ->
//! instance bytes); a spawn function (one bulk call per level); and its field schema.
//! Registration is open: a plugin registers its own types the same way the built-ins
//! below do, and adds its manager to each [`World`] with [`World::add_extension`].
//!
//! ```
//! use kiln_core::{Registry, ComponentType, FieldSchema, FieldValues, ComponentBatch, SpawnContext};
//!
//! fn compile(fields: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
//!     out.extend_from_slice(&fields.f32("volume").to_le_bytes());
//!     Ok(())
//! }
//! fn spawn(_ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
//!     batch.fixed_records(4)?; // validates the size before anything is created
//!     Ok(())
//! }
//!
//! let mut registry = Registry::with_builtins();
//! registry.register_component(ComponentType::new("sound_emitter", 50, compile, spawn)
//!     .with_fields(vec![FieldSchema::float("volume", 1.0, 0.0, 1.0)]))
//!     .unwrap();
//! assert!(registry.component("sound_emitter").is_some());
//! ```

use std::collections::HashMap;

use glam::{Affine3A, Vec3};

use crate::components::{Mesh, Oscillator, PointMass, Rotator};
use crate::path::fnv1a32;
use crate::schema::{FieldSchema, FieldValues};
use crate::{Entity, EntityManager, Instance, ResourceId, World};

/// Turns one component instance's validated fields into its instance bytes,
/// appended to `out`. Returns a sentence on a semantic error.
///
/// Shared, so that a component type defined by a loaded plugin can carry what it
/// needs to reach the plugin (a built-in passes a plain function).
pub type CompileFn =
    std::sync::Arc<dyn Fn(&FieldValues, &mut Vec<u8>) -> Result<(), String> + Send + Sync>;

/// Creates every instance of one component type of a level in one call.
/// Must validate `batch.data` before creating anything and return a sentence on error.
pub type SpawnFn =
    std::sync::Arc<dyn Fn(&mut SpawnContext, &ComponentBatch) -> Result<(), String> + Send + Sync>;

/// What a spawn function may touch.
#[derive(Debug)]
pub struct SpawnContext<'a> {
    /// The entity manager the level's entities were created in.
    pub entities: &'a mut EntityManager,
    /// The world being spawned into.
    pub world: &'a mut World,
}

/// The instances of one component type in a level blob (the seed's spawn arguments).
#[derive(Debug, Clone, Copy)]
pub struct ComponentBatch<'a> {
    /// Runtime entity of each of the level's entities (`entity_lookup` in the seed).
    pub entity_lookup: &'a [Entity],
    /// For instance `i`, its owner is `entity_lookup[entity_index[i]]`.
    pub entity_index: &'a [u32],
    /// The level's parent array (`u32::MAX` for roots); parents precede children.
    pub parent_index: &'a [u32],
    /// The instance data of all instances.
    pub data: &'a [u8],
}

impl<'a> ComponentBatch<'a> {
    /// Number of instances.
    pub fn len(&self) -> usize {
        self.entity_index.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entity_index.is_empty()
    }
    /// The owner of instance `i`.
    pub fn owner(&self, i: usize) -> Entity {
        self.entity_lookup[self.entity_index[i] as usize]
    }
    /// Checks that the data is `len()` records of `size` bytes, or explains the
    /// mismatch. Record `k` is then `data[size * k..size * (k + 1)]`.
    pub fn check_records(&self, size: usize) -> Result<(), String> {
        if self.data.len() != size * self.len() {
            return Err(format!(
                "instance data is {} bytes, expected {} instances x {size} bytes",
                self.data.len(),
                self.len()
            ));
        }
        Ok(())
    }
    /// Splits the data into `len()` records of `size` bytes, or explains the mismatch.
    pub fn fixed_records(&self, size: usize) -> Result<std::slice::ChunksExact<'a, u8>, String> {
        self.check_records(size)?;
        Ok(self.data.chunks_exact(size.max(1)))
    }
}

/// Reads little-endian values from an instance record.
#[derive(Debug, Clone, Copy)]
pub struct RecordReader<'a>(&'a [u8]);

impl<'a> RecordReader<'a> {
    /// Reads from `bytes`; reads past the end yield zero (callers check sizes first).
    pub fn new(bytes: &'a [u8]) -> Self {
        RecordReader(bytes)
    }
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        if self.0.len() >= N {
            out.copy_from_slice(&self.0[..N]);
            self.0 = &self.0[N..];
        }
        out
    }
    /// Next `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    /// Next `u64`.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    /// Next `f32`.
    pub fn f32(&mut self) -> f32 {
        f32::from_le_bytes(self.take())
    }
    /// Next three `f32`.
    pub fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.f32(), self.f32(), self.f32())
    }
}

/// Appends little-endian values to an instance record.
pub trait RecordWriter {
    /// Appends a `u32`.
    fn put_u32(&mut self, v: u32);
    /// Appends a `u64`.
    fn put_u64(&mut self, v: u64);
    /// Appends an `f32`.
    fn put_f32(&mut self, v: f32);
    /// Appends three `f32`.
    fn put_vec3(&mut self, v: Vec3) {
        self.put_f32(v.x);
        self.put_f32(v.y);
        self.put_f32(v.z);
    }
}

impl RecordWriter for Vec<u8> {
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f32(&mut self, v: f32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
}

/// A registered component type.
#[derive(Clone)]
pub struct ComponentType {
    /// The key in a level's `components` object, e.g. `"mesh"`.
    pub name: String,
    /// FNV-1a 32 of `name`: the `component_identifier` in compiled blobs.
    pub id: u32,
    /// Lower spawns first; a component that reads another (a point mass reads the
    /// transform) must come after it.
    pub spawn_order: i32,
    /// Fields, in display order.
    pub fields: Vec<FieldSchema>,
    /// Whether an entity may have several instances (authored as a JSON array).
    pub multiple: bool,
    /// Made by the compiler from entity data, never authored (the debug name comes
    /// from the entity's `name`); hidden from "add component".
    pub implicit: bool,
    /// One line describing the component.
    pub doc: String,
    /// JSON -> bytes.
    pub compile: CompileFn,
    /// Bytes -> instances.
    pub spawn: SpawnFn,
}

impl std::fmt::Debug for ComponentType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentType")
            .field("name", &self.name)
            .field("id", &self.id)
            .field("spawn_order", &self.spawn_order)
            .field("fields", &self.fields)
            .finish_non_exhaustive()
    }
}

impl ComponentType {
    /// A component type with no fields yet.
    pub fn new(
        name: &str,
        spawn_order: i32,
        compile: impl Fn(&FieldValues, &mut Vec<u8>) -> Result<(), String> + Send + Sync + 'static,
        spawn: impl Fn(&mut SpawnContext, &ComponentBatch) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        let compile: CompileFn = std::sync::Arc::new(compile);
        let spawn: SpawnFn = std::sync::Arc::new(spawn);
        ComponentType {
            name: name.into(),
            id: fnv1a32(name.as_bytes()),
            spawn_order,
            fields: Vec::new(),
            multiple: false,
            implicit: false,
            doc: String::new(),
            compile,
            spawn,
        }
    }
    /// Sets the fields.
    pub fn with_fields(mut self, fields: Vec<FieldSchema>) -> Self {
        self.fields = fields;
        self
    }
    /// Sets the description.
    pub fn with_doc(mut self, doc: &str) -> Self {
        self.doc = doc.into();
        self
    }
    /// Allows several instances per entity.
    pub fn multiple(mut self) -> Self {
        self.multiple = true;
        self
    }
    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&FieldSchema> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// How the content of a resource type is stored.
#[derive(Debug, Clone)]
pub enum ResourceFormat {
    /// Entities with components (`.level`, `.unit`): references come from the
    /// component schemas.
    Entities,
    /// A JSON object with these top-level fields.
    Json(Vec<FieldSchema>),
    /// Opaque bytes (images, sounds): no references inside.
    Binary,
    /// A glTF 2.0 asset, JSON (`.gltf`) or binary (`.glb`): the `uri` of each of its
    /// `buffers` and `images` is a file path relative to the glTF file's folder
    /// (percent-encoded; `data:` URIs embed their bytes and reference nothing).
    Gltf,
}

/// A registered resource type, named by its file extension.
#[derive(Debug, Clone)]
pub struct ResourceType {
    /// The extension, e.g. `"material"`.
    pub extension: String,
    /// How its files are read.
    pub format: ResourceFormat,
    /// One line describing it.
    pub doc: String,
}

/// Why a registration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The name is taken.
    #[error("a component type named \"{0}\" is already registered")]
    DuplicateName(String),
    /// Two names hash to the same identifier.
    #[error(
        "component types \"{0}\" and \"{1}\" hash to the same identifier {2:#010x}; rename one"
    )]
    IdCollision(String, String, u32),
    /// The extension is taken.
    #[error("resource type .{0} is already registered")]
    DuplicateResourceType(String),
}

/// Every known component type and resource type.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    components: Vec<ComponentType>,
    by_name: HashMap<String, usize>,
    by_id: HashMap<u32, usize>,
    resources: Vec<ResourceType>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in component and resource types.
    pub fn with_builtins() -> Self {
        let mut r = Registry::new();
        for ty in builtin_components() {
            // Built-in names are distinct and their hashes checked by a test.
            let _ = r.register_component(ty);
        }
        for ty in builtin_resource_types() {
            let _ = r.register_resource_type(ty);
        }
        r
    }

    /// Adds a component type.
    pub fn register_component(&mut self, ty: ComponentType) -> Result<(), RegistryError> {
        if self.by_name.contains_key(&ty.name) {
            return Err(RegistryError::DuplicateName(ty.name));
        }
        if let Some(&other) = self.by_id.get(&ty.id) {
            return Err(RegistryError::IdCollision(
                self.components[other].name.clone(),
                ty.name,
                ty.id,
            ));
        }
        self.components.push(ty);
        self.components
            .sort_by(|a, b| (a.spawn_order, &a.name).cmp(&(b.spawn_order, &b.name)));
        self.by_name.clear();
        self.by_id.clear();
        for (i, c) in self.components.iter().enumerate() {
            self.by_name.insert(c.name.clone(), i);
            self.by_id.insert(c.id, i);
        }
        Ok(())
    }

    /// Adds a resource type.
    pub fn register_resource_type(&mut self, ty: ResourceType) -> Result<(), RegistryError> {
        if self.resource_type(&ty.extension).is_some() {
            return Err(RegistryError::DuplicateResourceType(ty.extension));
        }
        self.resources.push(ty);
        Ok(())
    }

    /// Every component type, in spawn order.
    pub fn components(&self) -> &[ComponentType] {
        &self.components
    }
    /// The component type called `name`.
    pub fn component(&self, name: &str) -> Option<&ComponentType> {
        self.by_name.get(name).map(|&i| &self.components[i])
    }
    /// The component type with identifier `id`.
    pub fn component_by_id(&self, id: u32) -> Option<&ComponentType> {
        self.by_id.get(&id).map(|&i| &self.components[i])
    }
    /// Every resource type.
    pub fn resource_types(&self) -> &[ResourceType] {
        &self.resources
    }
    /// The resource type with extension `ext`.
    pub fn resource_type(&self, ext: &str) -> Option<&ResourceType> {
        self.resources.iter().find(|r| r.extension == ext)
    }
}

fn builtin_resource_types() -> Vec<ResourceType> {
    let rt = |ext: &str, format, doc: &str| ResourceType {
        extension: ext.into(),
        format,
        doc: doc.into(),
    };
    vec![
        rt(
            "level",
            ResourceFormat::Entities,
            "A level: entities, their hierarchy and components.",
        ),
        rt(
            "unit",
            ResourceFormat::Entities,
            "A prefab: entities placed in levels as one instance.",
        ),
        rt(
            "material",
            ResourceFormat::Json(vec![
                FieldSchema::color("color", [0.8, 0.8, 0.8, 1.0]).doc("Base colour."),
                FieldSchema::resource("texture", "png").doc("Optional texture."),
                FieldSchema::float("roughness", 0.5, 0.0, 1.0),
            ]),
            "Surface appearance of meshes.",
        ),
        rt(
            "mesh",
            ResourceFormat::Json(vec![
                FieldSchema::enumeration("shape", MESH_SHAPES, "cube").doc("Primitive shape."),
                FieldSchema::vec3("size", [1.0, 1.0, 1.0]).doc("Extent along x, y, z in metres."),
                FieldSchema::resource("gltf", "gltf")
                    .doc("A glTF 2.0 file to draw instead of the shape (scaled by size)."),
                FieldSchema::resource("glb", "glb")
                    .doc("A binary glTF 2.0 file to draw instead of the shape (scaled by size)."),
            ]),
            "Geometry: a primitive shape, or a glTF 2.0 model.",
        ),
        rt("png", ResourceFormat::Binary, "A PNG image."),
        rt("jpg", ResourceFormat::Binary, "A JPEG image."),
        rt("jpeg", ResourceFormat::Binary, "A JPEG image."),
        rt(
            "bin",
            ResourceFormat::Binary,
            "Binary data, such as a glTF buffer.",
        ),
        rt(
            "gltf",
            ResourceFormat::Gltf,
            "A glTF 2.0 model (JSON); its buffer and image URIs are references.",
        ),
        rt(
            "glb",
            ResourceFormat::Gltf,
            "A binary glTF 2.0 model; external buffer and image URIs are references.",
        ),
        rt(
            "project",
            ResourceFormat::Json(vec![
                FieldSchema::text("name", ""),
                FieldSchema::resource_list("boot_levels", "level")
                    .doc("Levels the game starts from; what they reach is in use."),
                // Patterns and type names, not references.
                FieldSchema::text("references", "")
                    .doc("Reference rules for file types Kiln has no schema for."),
            ]),
            "The project file kiln.project.",
        ),
    ]
}

/// The primitive shapes a `.mesh` resource may have.
pub const MESH_SHAPES: &[&str] = &["cube", "sphere", "cylinder", "cone", "plane", "capsule"];

fn builtin_components() -> Vec<ComponentType> {
    vec![
        ComponentType::new("transform", 0, compile_transform, spawn_transform)
            .with_doc("Position in the world and place in the scene graph.")
            .with_fields(vec![
                FieldSchema::vec3("position", [0.0; 3]).doc("Relative to the parent, in metres."),
                FieldSchema::angles("rotation", [0.0; 3])
                    .doc("Euler angles in degrees (X, then Y, then Z)."),
                FieldSchema::vec3("scale", [1.0; 3]),
            ]),
        ComponentType {
            implicit: true,
            ..ComponentType::new("debug_name", 1, compile_debug_name, spawn_debug_name)
                .with_doc("The entity's name, for debugging.")
                .with_fields(vec![FieldSchema::text("name", "")])
        },
        ComponentType::new("mesh", 10, compile_mesh, spawn_mesh)
            .multiple()
            .with_doc("Draws a mesh resource with a material.")
            .with_fields(vec![
                FieldSchema::resource("mesh", "mesh").doc("The geometry."),
                FieldSchema::resource("material", "material").doc("The surface."),
                FieldSchema::bool("visible", true),
            ]),
        ComponentType::new("point_mass", 20, compile_point_mass, spawn_point_mass)
            .with_doc("Simulated mass; moves the transform each step.")
            .with_fields(vec![
                FieldSchema::float("mass", 1.0, 0.0, 1.0e9).doc("Kilograms."),
                FieldSchema::vec3("velocity", [0.0; 3]).doc("Metres per second."),
                FieldSchema::vec3("acceleration", [0.0, -9.81, 0.0])
                    .doc("Metres per second squared."),
            ]),
        ComponentType::new("oscillator", 30, compile_oscillator, spawn_oscillator)
            .with_doc("Bobs the entity back and forth around where it was placed.")
            .with_fields(vec![
                FieldSchema::vec3("amplitude", [0.0, 0.5, 0.0])
                    .doc("Peak offset per axis, in metres."),
                FieldSchema::float("frequency", 0.5, 0.0, 100.0).doc("Cycles per second."),
                FieldSchema::float("phase", 0.0, -360.0, 360.0).doc("Degrees."),
            ]),
        ComponentType::new("rotator", 30, compile_rotator, spawn_rotator)
            .with_doc("Spins the entity about an axis.")
            .with_fields(vec![
                FieldSchema::vec3("axis", [0.0, 1.0, 0.0])
                    .doc("Local axis; need not be unit length."),
                FieldSchema::float("speed", 45.0, -3600.0, 3600.0).doc("Degrees per second."),
            ]),
    ]
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
fn read_affine(record: &[u8]) -> Affine3A {
    let Ok(b) = <&[u8; TRANSFORM_RECORD]>::try_from(record) else {
        return Affine3A::NAN;
    };
    let f = |k: usize| f32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]]);
    let col = |c: usize| glam::Vec3A::new(f(3 * c), f(3 * c + 1), f(3 * c + 2));
    Affine3A::from_cols(col(0), col(1), col(2), col(3))
}

fn spawn_transform(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    batch.check_records(TRANSFORM_RECORD)?;
    let record = |i: usize| &batch.data[i * TRANSFORM_RECORD..(i + 1) * TRANSFORM_RECORD];
    let tm = &mut ctx.world.transforms;
    let first = tm.len() as u32;
    let all_finite = std::cell::Cell::new(true);
    let local = |i: usize| {
        let local = read_affine(record(i));
        if !local.is_finite() {
            all_finite.set(false);
        }
        local
    };
    let n = batch.len();
    if batch.entity_index.len() == batch.entity_lookup.len()
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
        );
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
        // far in this batch.
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
        );
    }
    // Checked while decoding; the spawner destroys the whole level on this error.
    if !all_finite.get() {
        return Err("a transform is not finite".into());
    }
    Ok(())
}

fn compile_debug_name(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    let name = f.text("name").as_bytes();
    out.put_u32(name.len() as u32);
    out.extend_from_slice(name);
    out.resize(out.len().next_multiple_of(4), 0);
    Ok(())
}

fn spawn_debug_name(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    // Each record is a length, the bytes, and padding to 4; the names are cut from
    // the instance data as it is, in one copy.
    let mut spans = Vec::with_capacity(batch.len());
    let mut at = 0usize;
    for i in 0..batch.len() {
        let rest = &batch.data[at..];
        let len = RecordReader::new(rest).u32() as usize;
        let padded = 4 + len.next_multiple_of(4);
        if rest.len() < padded {
            return Err(format!(
                "debug name {i} runs past the end of the instance data"
            ));
        }
        spans.push(((at + 4) as u32, len as u32));
        at += padded;
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

/// Record `k` of `data`, whose records are `N` bytes each; zeros past the end
/// (callers check record sizes first). One range check per record: the fields are
/// then read at fixed offsets of an array, with none.
#[inline]
fn record<const N: usize>(data: &[u8], k: usize) -> [u8; N] {
    data.get(k * N..(k + 1) * N)
        .and_then(|bytes| bytes.try_into().ok())
        .unwrap_or([0; N])
}

/// The little-endian `u32` at byte `at` of `record`.
#[inline]
fn u32_in<const N: usize>(record: &[u8; N], at: usize) -> u32 {
    u32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
}

/// The little-endian `u64` at byte `at` of `record`.
#[inline]
fn u64_in<const N: usize>(record: &[u8; N], at: usize) -> u64 {
    u64::from(u32_in(record, at)) | (u64::from(u32_in(record, at + 4)) << 32)
}

/// The `f32` at byte `at` of `record`.
#[inline]
fn f32_in<const N: usize>(record: &[u8; N], at: usize) -> f32 {
    f32::from_bits(u32_in(record, at))
}

/// The three `f32` at byte `at` of `record`.
#[inline]
fn vec3_in<const N: usize>(record: &[u8; N], at: usize) -> Vec3 {
    Vec3::new(
        f32_in(record, at),
        f32_in(record, at + 4),
        f32_in(record, at + 8),
    )
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

fn spawn_mesh(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
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

fn compile_point_mass(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    out.put_f32(f.f32("mass"));
    out.put_vec3(f.vec3("velocity"));
    out.put_vec3(f.vec3("acceleration"));
    Ok(())
}

/// Bytes per point mass instance: mass, velocity, acceleration.
const POINT_MASS_RECORD: usize = 28;

fn spawn_point_mass(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    batch.check_records(POINT_MASS_RECORD)?;
    let data = batch.data;
    let World {
        transforms,
        point_masses,
        ..
    } = &mut *ctx.world;
    point_masses.create_columns(
        batch.len(),
        |k| batch.owner(k),
        |k| {
            let r = record::<POINT_MASS_RECORD>(data, k);
            // A point mass starts where its transform puts it in the world. Written
            // without a panicking index, so that the passes that need only the
            // other fields leave the lookup out.
            let position = batch
                .entity_index
                .get(k)
                .and_then(|&e| batch.entity_lookup.get(e as usize))
                .and_then(|&owner| transforms.lookup(owner))
                .and_then(|t| transforms.world_poses().get(t.index()))
                .map_or(Vec3::ZERO, |world| world.translation.into());
            PointMass {
                mass: f32_in(&r, 0),
                position,
                velocity: vec3_in(&r, 4),
                acceleration: vec3_in(&r, 16),
            }
        },
    );
    Ok(())
}

fn compile_oscillator(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    out.put_vec3(f.vec3("amplitude"));
    out.put_f32(f.f32("frequency"));
    out.put_f32(f.f32("phase").to_radians());
    Ok(())
}

fn spawn_oscillator(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    let records: Vec<&[u8]> = batch.fixed_records(20)?.collect();
    let World {
        transforms,
        oscillators,
        ..
    } = &mut *ctx.world;
    for (i, r) in records.into_iter().enumerate() {
        let owner = batch.owner(i);
        let center = transforms
            .lookup(owner)
            .map_or(Vec3::ZERO, |t| transforms.local(t).translation.into());
        let mut r = RecordReader::new(r);
        let data = Oscillator {
            amplitude: r.vec3(),
            frequency: r.f32(),
            phase: r.f32(),
            center,
        };
        oscillators.create(owner, data);
    }
    Ok(())
}

fn compile_rotator(f: &FieldValues, out: &mut Vec<u8>) -> Result<(), String> {
    let axis = f.vec3("axis");
    if axis.length_squared() < 1e-12 {
        return Err("the rotation axis must not be zero".into());
    }
    out.put_vec3(axis.normalize());
    out.put_f32(f.f32("speed"));
    Ok(())
}

fn spawn_rotator(ctx: &mut SpawnContext, batch: &ComponentBatch) -> Result<(), String> {
    let records = batch.fixed_records(16)?;
    for (i, r) in records.enumerate() {
        let mut r = RecordReader::new(r);
        let axis = r.vec3().normalize_or(Vec3::Y);
        ctx.world.rotators.create(
            batch.owner(i),
            Rotator {
                axis,
                speed: r.f32(),
            },
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_register_without_collisions() {
        let r = Registry::with_builtins();
        assert_eq!(r.components().len(), builtin_components().len());
        assert!(
            r.components()
                .windows(2)
                .all(|w| w[0].spawn_order <= w[1].spawn_order)
        );
        assert_eq!(r.component("transform").map(|c| c.spawn_order), Some(0));
        assert_eq!(r.resource_types().len(), builtin_resource_types().len());
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut r = Registry::with_builtins();
        let again = ComponentType::new("mesh", 1, compile_mesh, spawn_mesh);
        assert_eq!(
            r.register_component(again),
            Err(RegistryError::DuplicateName("mesh".into()))
        );
    }
}
