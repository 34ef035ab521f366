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
    /// Files that could not be read as their type, and why (naming the line and
    /// column, or the field): their last good version, if any, is still drawn.
    pub errors: std::collections::BTreeMap<String, String>,
}

static LOADS: AtomicU64 = AtomicU64::new(1);

impl Resources {
    /// A load number no other set of resources has had.
    pub fn next_generation() -> u64 {
        LOADS.fetch_add(1, Ordering::Relaxed)
    }

    /// Reads every mesh and material of the project among `files`. A file that
    /// cannot be read as its type keeps the look it had in `previous` (the last good
    /// version stays on screen) and is listed in [`Resources::errors`].
    pub fn load(
        project: &Project,
        registry: &Registry,
        files: impl Iterator<Item = String>,
        previous: &Resources,
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
            let id = ResourceId::of(&path, &ext);
            let values = match read_fields(project, &path, &ext) {
                // Moved or deleted since the index listed it (by another program,
                // a `kiln mv` in a terminal): the watcher brings its new place.
                Ok(None) => continue,
                Ok(Some(obj)) => FieldValues::validate(fields, &obj)
                    .map(|_| obj)
                    .map_err(|(field, message)| format!("{file}: field \"{field}\": {message}")),
                Err(e) => Err(format!("{file}{e}")),
            };
            let obj = match values {
                Ok(obj) => obj,
                Err(e) => {
                    out.errors.insert(file.clone(), e);
                    if let Some(look) = previous.meshes.get(&id) {
                        out.meshes.insert(id, look.clone());
                    }
                    if let Some(look) = previous.materials.get(&id) {
                        out.materials.insert(id, look.clone());
                    }
                    continue;
                }
            };
            let Ok(values) = FieldValues::validate(fields, &obj) else {
                continue;
            };
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

/// The fields of the JSON object in resource `path` of type `ext`, or `None` if
/// the file is no longer there; an error (after the file's name) says where it
/// broke: `:3:14: expected ...`, or what it is.
fn read_fields(
    project: &Project,
    path: &ResourcePath,
    ext: &str,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, String> {
    let text = match project.read_resource(path, ext) {
        Ok(text) => text,
        Err(kiln_core::ProjectError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None);
        }
        Err(e) => return Err(format!(": cannot be read: {e}")),
    };
    let found = kiln_core::conflict::find_conflicts(&text, ext);
    if let Some((_, line, column)) = found.first() {
        return Err(format!(
            ":{line}:{column}: {}",
            kiln_core::level::conflicts_message(&found)
        ));
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(obj)) => Ok(Some(obj)),
        Ok(_) => Err(": not a JSON object".into()),
        Err(e) => {
            // serde_json says "... at line 3 column 5": the place goes first here.
            let text = e.to_string();
            let what = text
                .rsplit_once(" at line ")
                .map_or(text.as_str(), |(w, _)| w);
            Err(format!(":{}:{}: {what}", e.line(), e.column()))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A material the index still lists but another program moved away is not an
    /// error (the watcher brings its new place); a broken one is.
    #[test]
    fn a_material_gone_since_it_was_listed_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("kiln.project"), "{}").unwrap();
        std::fs::create_dir(dir.path().join("materials")).unwrap();
        std::fs::write(dir.path().join("materials/broken.material"), "{").unwrap();
        let project = Project::open(dir.path()).unwrap();
        let registry = Registry::with_builtins();
        let files = ["materials/gone.material", "materials/broken.material"];
        let loaded = Resources::load(
            &project,
            &registry,
            files.iter().map(|f| f.to_string()),
            &Resources::default(),
        );
        assert!(!loaded.errors.contains_key("materials/gone.material"));
        assert!(loaded.errors.contains_key("materials/broken.material"));
    }
}
