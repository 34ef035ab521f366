//! The `.mesh` and `.material` resources as the viewport draws them, by runtime id:
//! small JSON files, all read when the project opens and again when one changes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use glam::{Vec3, Vec4};
use kiln_core::registry::{MESH_SHAPES, ResourceFormat};
use kiln_core::{FieldValues, Project, Registry, ResourceId, ResourcePath};

/// A `.mesh` resource.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshLook {
    /// Index into [`MESH_SHAPES`] (drawn when there is no model).
    pub shape: usize,
    /// Extent in metres of a shape; the scale of a model.
    pub size: Vec3,
    /// The glTF or glb file drawn instead of the shape, relative to the project root.
    pub model: Option<String>,
}

impl MeshLook {
    /// The shape's name (`cube` for an index out of range).
    pub fn shape_name(&self) -> &'static str {
        MESH_SHAPES.get(self.shape).copied().unwrap_or("cube")
    }
}

/// A `.material` resource.
#[derive(Debug, Clone, PartialEq)]
pub struct MaterialLook {
    /// Base colour (linear RGBA).
    pub color: Vec4,
    /// The base colour texture file, relative to the project root.
    pub texture: Option<String>,
    /// Perceptual roughness, 0..=1.
    pub roughness: f32,
}

/// The loaded `.mesh` and `.material` resources.
#[derive(Debug, Default, Clone)]
pub struct Resources {
    /// Meshes.
    pub meshes: HashMap<ResourceId, MeshLook>,
    /// Materials.
    pub materials: HashMap<ResourceId, MaterialLook>,
    /// Which load this is (each [`Resources::load`] gets a new number).
    pub generation: u64,
}

static LOADS: AtomicU64 = AtomicU64::new(1);

impl Resources {
    /// A load number no other set of resources has had.
    pub fn next_generation() -> u64 {
        LOADS.fetch_add(1, Ordering::Relaxed)
    }

    /// Reads every mesh and material of the project among `files`. Unreadable or
    /// broken ones are skipped here; the problems list reports them.
    pub fn load(
        project: &Project,
        registry: &Registry,
        files: impl Iterator<Item = String>,
    ) -> Self {
        let mut out = Resources {
            generation: Resources::next_generation(),
            ..Resources::default()
        };
        for file in files {
            let Ok((path, ext)) = ResourcePath::split_file(&file) else {
                continue;
            };
            if ext != "mesh" && ext != "material" {
                continue;
            }
            let Some(ResourceFormat::Json(fields)) =
                registry.resource_type(&ext).map(|t| &t.format)
            else {
                continue;
            };
            let Ok(text) = project.read_resource(&path, &ext) else {
                continue;
            };
            let Ok(serde_json::Value::Object(obj)) =
                serde_json::from_str::<serde_json::Value>(&text)
            else {
                continue;
            };
            let Ok(values) = FieldValues::validate(fields, &obj) else {
                continue;
            };
            let id = ResourceId::of(&path, &ext);
            let file_of =
                |field: &str, ext: &str| values.resource(field).map(|p| p.with_extension(ext));
            if ext == "mesh" {
                out.meshes.insert(
                    id,
                    MeshLook {
                        shape: values.enum_index("shape") as usize,
                        size: values.vec3("size"),
                        model: file_of("gltf", "gltf").or_else(|| file_of("glb", "glb")),
                    },
                );
            } else {
                out.materials.insert(
                    id,
                    MaterialLook {
                        color: values.color("color"),
                        texture: file_of("texture", "png"),
                        roughness: values.f32("roughness"),
                    },
                );
            }
        }
        out
    }
}
