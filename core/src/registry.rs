//! The type registry: every component type and resource type the engine knows.
//!
//! A component type registers (seed part 4) its name, hashed into the 32-bit
//! `component_identifier`; a `spawn_order`; a compile function (validated JSON fields ->
//! instance bytes); a spawn function (one bulk call per level); and its field schema.
//! Registration is open: a plugin registers its own types the same way the built-ins
//! do (each beside its manager, in `components/<type>.rs`), and adds its manager to
//! each [`World`] with [`World::add_extension`].
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

pub use crate::record::{RecordReader, RecordWriter};
use std::collections::HashMap;

use crate::entity::{Entity, EntityManager};
use crate::path::fnv1a32;
use crate::schema::{FieldSchema, FieldValues};
use crate::world::World;

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

/// Replaces instances that exist with new data: [`ComponentType::rewrite`].
pub type RewriteFn = SpawnFn;

/// What of the scene graph a component type's spawn function reads (the built-in
/// types that read another type's instances read transforms; a plugin's spawn sees
/// only its own records). A running world patched in place spawns such instances
/// again when what they read changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReadsTransform {
    /// Nothing of any other type.
    #[default]
    Nothing,
    /// Its own entity's local pose (an oscillator bobs about where it was put).
    Local,
    /// Its own entity's world pose, which its ancestors' transforms decide too (a
    /// point mass starts where its entity is in the world).
    World,
}

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
    /// The runtime entity an entity field names, from the level index the
    /// compiler wrote ([`crate::FieldValues::entity_index`]); `None` for
    /// [`crate::NO_ENTITY_INDEX`] or an index outside the level.
    pub fn entity(&self, index: u32) -> Option<Entity> {
        self.entity_lookup.get(index as usize).copied()
    }
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
    /// Writes a batch's instances over those its owners have already (a live
    /// preview patching a running world when a save changed a field). `None`: the
    /// owners' instances are destroyed in the type's manager and the batch is
    /// spawned, which is right for any type whose instances do not link to each
    /// other. The scene graph's transforms do (children point at their parent's),
    /// so theirs writes the local pose in place.
    pub rewrite: Option<RewriteFn>,
    /// What of the transforms its spawn reads.
    pub reads_transform: ReadsTransform,
    /// How its instances' records are told apart in a blob.
    pub records: RecordLayout,
}

/// How the records of one component type's instances are laid out in a blob's
/// section, for what must tell one entity's instances from another's (a
/// structural change spawning again only the entities it touched).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecordLayout {
    /// Every record of the type is one size (a plugin's always are: its fields
    /// are packed into fixed-size records).
    #[default]
    Fixed,
    /// Each record is a little-endian `u32` length, that many bytes, and
    /// padding to 4 (a debug name).
    LengthPrefixed,
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
            rewrite: None,
            reads_transform: ReadsTransform::Nothing,
            records: RecordLayout::Fixed,
        }
    }
    /// Says what of the transforms the spawn function reads.
    pub fn reading_transform(mut self, reads: ReadsTransform) -> Self {
        self.reads_transform = reads;
        self
    }
    /// Sets how instances that exist are written over (see
    /// [`ComponentType::rewrite`]).
    pub fn with_rewrite(
        mut self,
        rewrite: impl Fn(&mut SpawnContext, &ComponentBatch) -> Result<(), String>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.rewrite = Some(std::sync::Arc::new(rewrite));
        self
    }
    /// Sets the fields.
    pub fn with_fields(mut self, fields: Vec<FieldSchema>) -> Self {
        self.fields = fields;
        self
    }
    /// Whether a field of the type names another entity ([`FieldKind::Entity`]):
    /// its instances then hold indices into the whole level, so they are compiled
    /// and spawned with the whole level, never patched or respawned alone.
    ///
    /// [`FieldKind::Entity`]: crate::FieldKind::Entity
    pub fn refers_to_entities(&self) -> bool {
        (self.fields.iter()).any(|f| f.kind == crate::schema::FieldKind::Entity)
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
    /// Component types the project uses that are not loaded, with where they come
    /// from ("plugin plugins/wind, which did not load"): see
    /// [`Registry::note_absent_component`].
    absent: HashMap<String, String>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
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

    /// Records that component type `name` belongs to something that is not loaded,
    /// said by `from` ("plugin plugins/wind, which did not load"), so that a level
    /// using it is told where the type comes from rather than only that it is
    /// unknown. Registering the type later makes the note moot.
    pub fn note_absent_component(&mut self, name: &str, from: String) {
        if self.component(name).is_none() {
            self.absent.insert(name.to_owned(), from);
        }
    }

    /// Where the unregistered component type `name` comes from, if known.
    pub fn absent_component(&self, name: &str) -> Option<&str> {
        if self.component(name).is_some() {
            return None;
        }
        self.absent.get(name).map(String::as_str)
    }

    /// Every component type, in spawn order.
    pub fn components(&self) -> &[ComponentType] {
        &self.components
    }
    /// The component type called `name`.
    pub fn component(&self, name: &str) -> Option<&ComponentType> {
        self.by_name.get(name).map(|&i| &self.components[i])
    }
    /// The position of component type `name` in [`Registry::components`].
    pub fn component_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
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

/// The resource types every project has (see [`Registry::with_builtins`]).
pub(crate) fn builtin_resource_types() -> Vec<ResourceType> {
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
