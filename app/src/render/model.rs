//! Models: what a `.mesh` resource draws. A primitive shape is one part; a glTF 2.0
//! file (`.gltf` with its buffers and images, or `.glb`) is read into parts, one per
//! primitive, with the scene's node transforms baked in.
//!
//! Kiln reads the files a glTF names itself, and only inside the project: a URI that
//! leads outside the root, through a link out of it, or to something that is not a
//! regular file is an error naming the glTF file and the URI.

use std::sync::Arc;

use glam::{Mat3, Mat4, Vec3, Vec4};
use kiln_core::Project;

use super::geometry::{Geometry, Vertex};

/// Files larger than this are not read (a model or texture of a level editor's
/// project; a larger one is much more likely a mistake than art).
pub const MAX_ASSET_BYTES: u64 = 512 << 20;

/// A decoded image, RGBA with 8 bits per channel, sRGB.
pub type Image = image::RgbaImage;

/// A texture: a decoded image and its mip levels, each half the size of the one
/// before, down to 1 x 1 (made on the loader thread, so that a ground texture seen
/// at a grazing angle is filtered rather than sparkling).
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    /// Level 0 is the image itself.
    pub levels: Vec<Image>,
}

impl Texture {
    /// The texture of `image` with its mip levels.
    pub fn from_image(image: Image) -> Texture {
        let mut levels = vec![image];
        while let Some(last) = levels.last() {
            let (w, h) = last.dimensions();
            if w <= 1 && h <= 1 {
                break;
            }
            let next = image::imageops::resize(
                last,
                (w / 2).max(1),
                (h / 2).max(1),
                image::imageops::FilterType::Triangle,
            );
            levels.push(next);
        }
        Texture { levels }
    }

    /// One pixel of `rgba`.
    pub fn solid(rgba: [u8; 4]) -> Texture {
        Texture {
            levels: vec![Image::from_pixel(1, 1, image::Rgba(rgba))],
        }
    }

    /// What a missing or broken texture shows: a magenta and grey checker that no
    /// designer mistakes for art.
    pub fn placeholder() -> Texture {
        Texture::from_image(Image::from_fn(64, 64, |x, y| {
            if ((x / 8) + (y / 8)) % 2 == 0 {
                image::Rgba([230, 40, 200, 255])
            } else {
                image::Rgba([60, 60, 60, 255])
            }
        }))
    }
}

/// One drawable piece of a model: geometry and its own material.
#[derive(Debug, Clone)]
pub struct Part {
    /// Triangles, in the model's space.
    pub geometry: Geometry,
    /// Base colour factor (linear RGBA).
    pub base_color: Vec4,
    /// Index into [`Model::images`] of the base colour texture.
    pub texture: Option<usize>,
    /// Perceptual roughness, 0..=1.
    pub roughness: f32,
    /// Metalness, 0..=1.
    pub metallic: f32,
}

/// Parts and the images they use.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Drawable parts.
    pub parts: Vec<Part>,
    /// Decoded images; an image that failed holds why.
    pub images: Vec<Result<Arc<Texture>, String>>,
    /// Problems that did not stop the model from loading (an image that failed, a
    /// primitive that is not triangles), each naming what it concerns.
    pub warnings: Vec<String>,
    /// The box around every part, worked out on first use (framing and picking ask
    /// for it per instance; a model's parts do not change once loaded).
    bounds: std::sync::OnceLock<(Vec3, Vec3)>,
}

impl Model {
    /// One part: the primitive shape `name` in the default material.
    pub fn shape(name: &str) -> Model {
        Model {
            parts: vec![Part {
                geometry: super::geometry::shape(name),
                base_color: Vec4::ONE,
                texture: None,
                roughness: 0.5,
                metallic: 0.0,
            }],
            ..Model::default()
        }
    }

    /// The box around every part; a unit box around the origin when empty.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        *self.bounds.get_or_init(|| {
            self.parts
                .iter()
                .filter_map(|p| p.geometry.bounds())
                .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
                .unwrap_or((Vec3::splat(-0.5), Vec3::splat(0.5)))
        })
    }
}

/// Reads the file `rel` of `project` (a path relative to the root) for drawing, as
/// Kiln reads every project file: reached folder by folder without following a
/// link, a regular file, at most [`MAX_ASSET_BYTES`].
pub fn read_asset(project: &Project, rel: &str) -> Result<Vec<u8>, String> {
    project.resolve(rel).map_err(|e| e.to_string())?;
    kiln_core::fs::read_below(project.root(), std::path::Path::new(rel), MAX_ASSET_BYTES)
        .map_err(|e| format!("{rel}: {e}"))
}

/// Decodes a PNG or JPEG image file of the project into a texture.
pub fn load_texture(project: &Project, rel: &str) -> Result<Texture, String> {
    let bytes = read_asset(project, rel)?;
    decode_image(&bytes)
        .map(Texture::from_image)
        .map_err(|e| format!("{rel}: {e}"))
}

fn decode_image(bytes: &[u8]) -> Result<Image, String> {
    image::load_from_memory(bytes)
        .map(|i| i.to_rgba8())
        .map_err(|e| format!("not an image Kiln can read ({e})"))
}

/// Reads a `data:` URI's bytes (base64 or percent-encoded).
fn data_uri(uri: &str) -> Option<Result<Vec<u8>, String>> {
    use base64::Engine;
    let rest = uri.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    Some(if header.ends_with(";base64") {
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("a data: URI that is not base64 ({e})"))
    } else {
        kiln_core::gltf::percent_decode(data).map(String::into_bytes)
    })
}

/// Loads the glTF 2.0 file `rel` (JSON or binary) of `project`.
pub fn load_gltf(project: &Project, rel: &str) -> Result<Model, String> {
    let bytes = read_asset(project, rel)?;
    let fetch = |uri: &str| -> Result<Vec<u8>, String> {
        match data_uri(uri) {
            Some(r) => r,
            None if kiln_core::gltf::has_scheme(uri) => Err(format!(
                "{uri}: only relative paths and data: URIs are read"
            )),
            None => read_asset(project, &kiln_core::gltf::resolve_uri(rel, uri)?),
        }
    };
    parse_gltf(&bytes, &fetch).map_err(|e| format!("{rel}: {e}"))
}

/// Builds a model from a glTF file's bytes; `fetch` reads what a URI names.
pub fn parse_gltf(
    bytes: &[u8],
    fetch: &dyn Fn(&str) -> Result<Vec<u8>, String>,
) -> Result<Model, String> {
    let gltf = gltf::Gltf::from_slice(bytes).map_err(|e| format!("not valid glTF 2.0: {e}"))?;
    let mut model = Model::default();
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for buffer in gltf.buffers() {
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => gltf
                .blob
                .clone()
                .ok_or("a buffer names the GLB's binary chunk, which is missing")?,
            gltf::buffer::Source::Uri(uri) => {
                fetch(uri).map_err(|e| format!("buffer {}: {e}", buffer.index()))?
            }
        };
        if data.len() < buffer.length() {
            return Err(format!(
                "buffer {} holds {} bytes, {} expected",
                buffer.index(),
                data.len(),
                buffer.length()
            ));
        }
        buffers.push(data);
    }
    for image in gltf.images() {
        let bytes = match image.source() {
            gltf::image::Source::Uri { uri, .. } => fetch(uri),
            gltf::image::Source::View { view, .. } => buffers
                .get(view.buffer().index())
                .and_then(|b| b.get(view.offset()..view.offset() + view.length()))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| "its buffer view is out of range".to_owned()),
        };
        let decoded = bytes
            .and_then(|b| decode_image(&b))
            .map(|i| Arc::new(Texture::from_image(i)));
        if let Err(e) = &decoded {
            model.warnings.push(format!("image {}: {e}", image.index()));
        }
        model
            .images
            .push(decoded.map_err(|e| format!("image {}: {e}", image.index())));
    }
    let scene = gltf.default_scene().or_else(|| gltf.scenes().next());
    let mut stack: Vec<(gltf::Node, Mat4)> = match &scene {
        Some(s) => s.nodes().map(|n| (n, Mat4::IDENTITY)).collect(),
        None => Vec::new(),
    };
    let mut visited = 0usize;
    while let Some((node, parent)) = stack.pop() {
        // A cycle in a hostile file's node tree must not run forever.
        visited += 1;
        if visited > gltf.nodes().len() {
            return Err("its node hierarchy has a cycle".into());
        }
        let world = parent * Mat4::from_cols_array_2d(&node.transform().matrix());
        if let Some(mesh) = node.mesh() {
            for primitive in mesh.primitives() {
                match read_primitive(&primitive, &buffers, world) {
                    Ok(part) => model.parts.push(part),
                    Err(e) => model.warnings.push(format!(
                        "mesh {} primitive {}: {e}",
                        mesh.name().unwrap_or(&mesh.index().to_string()),
                        primitive.index()
                    )),
                }
            }
        }
        stack.extend(node.children().map(|c| (c, world)));
    }
    if model.parts.is_empty() {
        return Err(match model.warnings.first() {
            Some(w) => format!("nothing to draw ({w})"),
            None => "nothing to draw: no mesh in its scene".into(),
        });
    }
    Ok(model)
}

fn read_primitive(
    primitive: &gltf::Primitive,
    buffers: &[Vec<u8>],
    world: Mat4,
) -> Result<Part, String> {
    if primitive.mode() != gltf::mesh::Mode::Triangles {
        return Err(format!(
            "{:?} is not drawn, only triangles",
            primitive.mode()
        ));
    }
    let reader = primitive.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
    let positions: Vec<[f32; 3]> = reader
        .read_positions()
        .ok_or("it has no positions")?
        .collect();
    let normals: Option<Vec<[f32; 3]>> = reader.read_normals().map(Iterator::collect);
    let uvs: Option<Vec<[f32; 2]>> = reader.read_tex_coords(0).map(|t| t.into_f32().collect());
    let indices: Vec<u32> = match reader.read_indices() {
        Some(i) => i.into_u32().collect(),
        None => (0..positions.len() as u32).collect(),
    };
    if let Some(bad) = indices.iter().find(|i| **i as usize >= positions.len()) {
        return Err(format!(
            "index {bad} is past its {} vertices",
            positions.len()
        ));
    }
    let normal_matrix = Mat3::from_mat4(world).inverse().transpose();
    let mirrored = Mat3::from_mat4(world).determinant() < 0.0;
    let mut geometry = Geometry {
        vertices: positions
            .iter()
            .enumerate()
            .map(|(k, p)| Vertex {
                position: world.transform_point3(Vec3::from(*p)).to_array(),
                normal: normals
                    .as_ref()
                    .and_then(|n| n.get(k))
                    .map_or([0.0; 3], |n| {
                        (normal_matrix * Vec3::from(*n))
                            .normalize_or(Vec3::Y)
                            .to_array()
                    }),
                uv: uvs
                    .as_ref()
                    .and_then(|u| u.get(k))
                    .copied()
                    .unwrap_or([0.0; 2]),
            })
            .collect(),
        indices,
        closed: !primitive.material().double_sided(),
    };
    // A mirroring node transform turns the winding around.
    if mirrored {
        for t in geometry.indices.chunks_exact_mut(3) {
            t.swap(1, 2);
        }
    }
    if normals.is_none() {
        geometry.compute_normals();
    }
    let material = primitive.material();
    let pbr = material.pbr_metallic_roughness();
    Ok(Part {
        geometry,
        base_color: Vec4::from(pbr.base_color_factor()),
        texture: pbr
            .base_color_texture()
            .map(|t| t.texture().source().index()),
        roughness: pbr.roughness_factor(),
        metallic: pbr.metallic_factor(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_or_hostile_file_is_an_error_never_a_panic() {
        let none = |_: &str| -> Result<Vec<u8>, String> { Err("no files".into()) };
        for bytes in [
            &b""[..],
            b"{",
            b"glTF\x02\x00\x00\x00\xff\xff\xff\xff",
            br#"{"asset":{"version":"2.0"}}"#,
            br#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":12,"uri":"x.bin"}]}"#,
        ] {
            assert!(
                parse_gltf(bytes, &none).is_err(),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
