//! One thumbnail: what the asset browser shows for a texture (the image, scaled
//! down), a material (a lit sphere wearing it), a mesh (its shape or model) or a
//! glTF model. Textures are decoded on the CPU; the others are drawn by the scene
//! renderer into a small offscreen target and read back. Caching, and when to make
//! one again, is the editor's business (`editor::thumbnails`).

use std::collections::HashMap;

use glam::{Mat4, Vec3};
use kiln_core::registry::MESH_SHAPES;
use kiln_core::{Entity, ResourceId, ResourcePath};

use super::assets::{AssetCache, AssetVersions};
use super::gpu::{SceneRenderer, View};
use super::model::Image;
use super::resources::{MeshLook, Resources};
use super::scene::{Batch, DrawList, InstanceData};

/// Width and height of a thumbnail, in pixels.
pub const THUMBNAIL_SIZE: u32 = 128;

/// What kind of thumbnail a file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThumbnailKind {
    /// A PNG or JPEG image.
    Texture,
    /// A `.material`: a sphere wearing it.
    Material,
    /// A `.mesh`: its shape or model.
    Mesh,
    /// A `.gltf` or `.glb` file.
    Model,
}

impl ThumbnailKind {
    /// The kind of thumbnail `file` gets, by its extension; `None` for files shown
    /// by their icon (levels, units, anything else).
    pub fn of(file: &str) -> Option<Self> {
        let ext = file.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext.to_ascii_lowercase().as_str() {
            "png" | "jpg" | "jpeg" => ThumbnailKind::Texture,
            "material" => ThumbnailKind::Material,
            "mesh" => ThumbnailKind::Mesh,
            "gltf" | "glb" => ThumbnailKind::Model,
            _ => return None,
        })
    }

    /// Whether the GPU draws it (the rest are decoded).
    pub fn is_drawn(self) -> bool {
        self != ThumbnailKind::Texture
    }
}

/// A texture file's bytes as a thumbnail: scaled to fit the square with its aspect
/// kept, centred on transparency.
pub fn texture_thumbnail(bytes: &[u8]) -> Result<Image, String> {
    let image = image::load_from_memory(bytes)
        .map_err(|e| format!("not an image Kiln can read ({e})"))?
        .to_rgba8();
    let (w, h) = image.dimensions();
    let scale = THUMBNAIL_SIZE as f32 / w.max(h).max(1) as f32;
    let (tw, th) = (
        ((w as f32 * scale).round() as u32).clamp(1, THUMBNAIL_SIZE),
        ((h as f32 * scale).round() as u32).clamp(1, THUMBNAIL_SIZE),
    );
    // Nearest for pixel art scaled up, smooth when shrinking.
    let filter = if scale >= 1.0 {
        image::imageops::FilterType::Nearest
    } else {
        image::imageops::FilterType::Triangle
    };
    let scaled = image::imageops::resize(&image, tw, th, filter);
    let mut out = Image::new(THUMBNAIL_SIZE, THUMBNAIL_SIZE);
    image::imageops::overlay(
        &mut out,
        &scaled,
        i64::from((THUMBNAIL_SIZE - tw) / 2),
        i64::from((THUMBNAIL_SIZE - th) / 2),
    );
    Ok(out)
}

/// A scene of one object, drawn for a thumbnail.
#[derive(Debug, Clone)]
pub struct ThumbnailScene {
    /// Only what the one object needs, under a load number of its own (the
    /// renderer's material cache must not mistake it for another scene's).
    resources: Resources,
    mesh: ResourceId,
    material: ResourceId,
    /// The object is a sphere (a material's swatch): framed as one.
    round: bool,
}

/// The mesh id a thumbnail scene draws with: its resources hold nothing else.
const SCENE_MESH: ResourceId = ResourceId(1);

impl ThumbnailScene {
    /// The scene for `file`'s thumbnail, from the project's loaded `resources`;
    /// `None` for a texture, or for a mesh or material that did not load (it is
    /// broken; Problems says why).
    pub fn of(kind: ThumbnailKind, file: &str, resources: &Resources) -> Option<Self> {
        let id = |ext: &str| {
            let (path, e) = ResourcePath::split_file(file).ok()?;
            (e == ext).then(|| ResourceId::of(&path, &e))
        };
        let shape = |name: &str| MESH_SHAPES.iter().position(|s| *s == name).unwrap_or(0);
        let mut materials = HashMap::new();
        let (look, material) = match kind {
            ThumbnailKind::Texture => return None,
            ThumbnailKind::Material => {
                let material = id("material")?;
                materials.insert(material, resources.materials.get(&material)?.clone());
                let sphere = MeshLook {
                    shape: shape("sphere"),
                    size: Vec3::ONE,
                    model: None,
                };
                (sphere, material)
            }
            ThumbnailKind::Mesh => (
                resources.meshes.get(&id("mesh")?)?.clone(),
                ResourceId::NONE,
            ),
            ThumbnailKind::Model => {
                let model = MeshLook {
                    shape: shape("cube"),
                    size: Vec3::ONE,
                    model: Some(file.to_owned()),
                };
                (model, ResourceId::NONE)
            }
        };
        Some(ThumbnailScene {
            resources: Resources {
                meshes: [(SCENE_MESH, look)].into(),
                materials,
                generation: Resources::next_generation(),
                errors: Default::default(),
            },
            mesh: SCENE_MESH,
            material,
            round: kind == ThumbnailKind::Material,
        })
    }

    /// The model files the scene draws from (to wait for, or to blame).
    pub fn model_file(&self) -> Option<&str> {
        self.resources
            .meshes
            .get(&self.mesh)
            .and_then(|m| m.model.as_deref())
    }
}

/// What became of drawing a thumbnail.
#[derive(Debug)]
pub enum Drawn {
    /// The picture.
    Image(Image),
    /// Its model is still loading: ask again later.
    Loading,
    /// It cannot be drawn, and why.
    Failed(String),
}

/// Draws `scene` from a three-quarter view above, framed to fill the square.
pub fn draw(
    renderer: &mut SceneRenderer,
    scene: &ThumbnailScene,
    assets: &mut AssetCache,
    versions: &AssetVersions,
) -> Drawn {
    assets.poll();
    let Some((_, model)) = assets.mesh_model(&scene.resources, scene.mesh, versions) else {
        return match scene.model_file().and_then(|f| assets.error(f)) {
            Some(e) => Drawn::Failed(e.to_owned()),
            None => Drawn::Loading,
        };
    };
    // A thumbnail is kept: it waits for the files' current content rather than
    // show the old one that the viewport draws until the new one is in.
    if let Some(file) = scene.model_file()
        && !assets.is_current(file, versions.of(file))
    {
        return Drawn::Loading;
    }
    if let Some(texture) = scene
        .resources
        .materials
        .get(&scene.material)
        .and_then(|m| m.texture.as_deref())
    {
        let version = versions.of(texture);
        assets.image(texture, version);
        if !assets.is_current(texture, version) {
            return Drawn::Loading;
        }
    }
    let size = scene
        .resources
        .meshes
        .get(&scene.mesh)
        .map_or(Vec3::ONE, |m| m.size);
    let (lo, hi) = model.bounds();
    let (lo, hi) = (lo * size, hi * size);
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let list = DrawList {
        instances: vec![InstanceData {
            model: Mat4::from_scale(size).to_cols_array_2d(),
            params: [0.0; 4],
        }],
        owners: vec![Entity::from_bits(0)],
        batches: vec![Batch {
            mesh: scene.mesh,
            material: scene.material,
            first: 0,
            count: 1,
        }],
    };
    let view = framing(lo, hi, scene.round);
    renderer.render(
        [THUMBNAIL_SIZE, THUMBNAIL_SIZE],
        &view,
        &list,
        true,
        &scene.resources,
        assets,
        versions,
    );
    match renderer.read_output() {
        Ok(image) => Drawn::Image(image),
        Err(e) => Drawn::Failed(e),
    }
}

/// Vertical field of view of a thumbnail's camera.
const FOV_Y: f32 = 30.0;

/// Where a thumbnail's camera looks from, seen from the object: above, front right.
fn eye_direction() -> Vec3 {
    Vec3::new(0.9, 0.65, 1.2).normalize()
}

/// A camera looking at `points` (the corners of a box, or the poles of a sphere)
/// from [`eye_direction`], at the distance where they fill the square with a little
/// margin. `round` fits a sphere through the box instead of the box's corners, which
/// frames a sphere tighter than its box would.
fn framing(lo: Vec3, hi: Vec3, round: bool) -> View {
    use glam::camera::rh::{proj::directx, view};
    let center = (lo + hi) * 0.5;
    let toward_eye = eye_direction();
    let right = Vec3::Y.cross(toward_eye).normalize();
    let up = toward_eye.cross(right);
    // tan of half the field of view, less a margin so nothing touches the edges.
    let reach = (FOV_Y * 0.5).to_radians().tan() / 1.1;
    let extent = (hi - lo) * 0.5;
    let distance = if round {
        let radius = extent.max_element();
        radius / (reach.atan().sin())
    } else {
        // Each corner must be inside the view: its sideways and upward offset at
        // most `reach` times its depth in front of the eye.
        (0..8)
            .map(|k| {
                let q = Vec3::new(
                    if k & 1 == 0 { -extent.x } else { extent.x },
                    if k & 2 == 0 { -extent.y } else { extent.y },
                    if k & 4 == 0 { -extent.z } else { extent.z },
                );
                q.dot(toward_eye) + q.dot(right).abs().max(q.dot(up).abs()) / reach
            })
            .fold(0.0, f32::max)
    }
    .max(1e-3);
    let eye = center + toward_eye * distance;
    let near = (distance - extent.length()).max(distance * 1e-3);
    let projection = directx::perspective_infinite_reverse(FOV_Y.to_radians(), 1.0, near);
    View {
        view_projection: projection * view::look_at_mat4(eye, center, Vec3::Y),
        eye,
        grid: false,
        grid_fade: 1.0,
        shadows: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_extension() {
        assert_eq!(
            ThumbnailKind::of("textures/a.PNG"),
            Some(ThumbnailKind::Texture)
        );
        assert_eq!(
            ThumbnailKind::of("m/red.material"),
            Some(ThumbnailKind::Material)
        );
        assert_eq!(
            ThumbnailKind::of("art/tree.glb"),
            Some(ThumbnailKind::Model)
        );
        assert_eq!(ThumbnailKind::of("levels/a.level"), None);
        assert_eq!(ThumbnailKind::of("README"), None);
    }

    #[test]
    fn a_wide_texture_keeps_its_aspect_centred_on_transparency() {
        let wide = Image::from_pixel(64, 16, image::Rgba([200, 10, 10, 255]));
        let mut png = Vec::new();
        image::DynamicImage::ImageRgba8(wide)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap_or_else(|e| panic!("{e}"));
        let thumb = texture_thumbnail(&png).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(thumb.dimensions(), (THUMBNAIL_SIZE, THUMBNAIL_SIZE));
        let mid = THUMBNAIL_SIZE / 2;
        assert_eq!(thumb.get_pixel(mid, mid).0, [200, 10, 10, 255]);
        assert_eq!(thumb.get_pixel(mid, 2).0[3], 0, "above the image is clear");
        assert!(texture_thumbnail(b"not a png").is_err());
    }

    #[test]
    fn the_framed_box_fills_the_view_and_is_in_front_of_the_camera() {
        let (lo, hi) = (Vec3::new(-3.0, 0.0, -1.0), Vec3::new(3.0, 8.0, 1.0));
        let view = framing(lo, hi, false);
        let mut widest: f32 = 0.0;
        for k in 0..8 {
            let corner = Vec3::new(
                if k & 1 == 0 { lo.x } else { hi.x },
                if k & 2 == 0 { lo.y } else { hi.y },
                if k & 4 == 0 { lo.z } else { hi.z },
            );
            let c = view.view_projection * corner.extend(1.0);
            assert!(c.w > 0.0);
            let (x, y, z) = (c.x / c.w, c.y / c.w, c.z / c.w);
            assert!(x.abs() <= 1.0 && y.abs() <= 1.0, "{corner} at {x},{y}");
            assert!(z > 0.0 && z <= 1.0, "depth {z}");
            widest = widest.max(x.abs()).max(y.abs());
        }
        // Filled: some corner reaches the margin, not a small object in the middle.
        assert!(widest > 0.85, "the box reaches {widest} of the half-width");
    }
}
