//! Image tests of the GPU renderer: known scenes rendered headless (on Mesa's
//! software Vulkan where there is no GPU) and read back, and picking against the
//! same scenes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use glam::{EulerRot, Quat, Vec3, Vec4};
use kiln::editor::Camera;
use kiln::render::assets::{AssetCache, AssetVersions};
use kiln::render::gpu::{SceneRenderer, View};
use kiln::render::headless::HeadlessGpu;
use kiln::render::picking::{Ray, pick};
use kiln::render::resources::{MaterialLook, MeshLook, Resources};
use kiln::render::scene::DrawList;
use kiln_core::components::{Mesh, trs};
use kiln_core::{Entity, EntityManager, Project, ResourceId, ResourcePath, World};

const SIZE: [u32; 2] = [160, 120];

/// One device for the whole test binary (creating one per test is slow on a CPU).
fn gpu() -> &'static HeadlessGpu {
    static GPU: OnceLock<HeadlessGpu> = OnceLock::new();
    GPU.get_or_init(|| match HeadlessGpu::new() {
        Ok(g) => g,
        Err(e) => panic!("the image tests need a GPU adapter, software is fine: {e}"),
    })
}

/// The renderer is not shared between threads: tests take turns.
fn turn() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn id(path: &str, ext: &str) -> ResourceId {
    ResourceId::of(&ResourcePath::parse(path).unwrap(), ext)
}

/// A scene built straight in a runtime world.
struct Scene {
    entities: EntityManager,
    world: World,
    resources: Resources,
    project: tempfile::TempDir,
    /// Samples per pixel: 4 as on a GPU, 1 as on a software renderer.
    samples: u32,
    /// The sun casts shadows.
    shadows: bool,
}

impl Scene {
    fn new() -> Self {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("kiln.project"), "{}").unwrap();
        Scene {
            entities: EntityManager::new(),
            world: World::new(),
            resources: Resources {
                generation: 1,
                ..Resources::default()
            },
            project,
            samples: kiln::render::gpu::SAMPLES,
            shadows: false,
        }
    }

    fn material(&mut self, name: &str, color: [f32; 3], texture: Option<&str>) -> ResourceId {
        let material = id(name, "material");
        self.resources.materials.insert(
            material,
            MaterialLook {
                color: Vec4::new(color[0], color[1], color[2], 1.0),
                texture: texture.map(str::to_owned),
                roughness: 1.0,
            },
        );
        material
    }

    /// An entity drawing `shape` scaled to `size` at `position` (rotated by Euler
    /// degrees), in `material`.
    fn add(
        &mut self,
        shape: &str,
        size: Vec3,
        position: Vec3,
        rotation: Vec3,
        material: ResourceId,
    ) -> Entity {
        let mesh = id(
            &format!("meshes/{shape}_{}_{}_{}", size.x, size.y, size.z),
            "mesh",
        );
        let shape_index = kiln_core::registry::MESH_SHAPES
            .iter()
            .position(|s| *s == shape)
            .unwrap();
        self.resources.meshes.insert(
            mesh,
            MeshLook {
                shape: shape_index,
                size,
                model: None,
            },
        );
        let e = self.entities.create();
        let r = rotation * std::f32::consts::PI / 180.0;
        self.world.transforms.create(
            e,
            trs(
                position,
                Quat::from_euler(EulerRot::XYZ, r.x, r.y, r.z),
                Vec3::ONE,
            ),
            None,
        );
        self.world.meshes.create(
            e,
            Mesh {
                mesh,
                material,
                visible: true,
            },
        );
        e
    }

    fn list(&self) -> DrawList {
        DrawList::build(&self.world, &HashSet::new(), |m| {
            self.resources.meshes.get(&m).map(|l| l.size)
        })
    }

    fn view(&self, camera: &Camera) -> View {
        View {
            view_projection: camera.view_projection(SIZE[0] as f32 / SIZE[1] as f32),
            eye: camera.eye(),
            grid: false,
            grid_fade: 100.0,
            shadows: self.shadows,
        }
    }

    /// Renders `list` (twice when textures must load first) and reads it back.
    fn render(&self, camera: &Camera, list: &DrawList) -> image::RgbaImage {
        let gpu = gpu();
        let mut renderer = SceneRenderer::with_samples(&gpu.device, &gpu.queue, self.samples);
        let project = Project::open(self.project.path()).unwrap();
        let mut assets = AssetCache::new(project, None);
        let versions = AssetVersions::default();
        let view = self.view(camera);
        renderer.render(
            SIZE,
            &view,
            list,
            true,
            &self.resources,
            &mut assets,
            &versions,
        );
        assert!(assets.wait(std::time::Duration::from_secs(20)));
        renderer.render(
            SIZE,
            &view,
            list,
            false,
            &self.resources,
            &mut assets,
            &versions,
        );
        let image = renderer.read_output().unwrap();
        // KILN_TEST_IMAGES=dir keeps what the tests saw, to look at.
        if let Some(dir) = std::env::var_os("KILN_TEST_IMAGES") {
            let name = format!(
                "{}.png",
                std::thread::current()
                    .name()
                    .unwrap_or("render")
                    .replace("::", "-")
            );
            let _ = image.save(std::path::Path::new(&dir).join(name));
        }
        image
    }
}

fn looking_at(target: Vec3, yaw_degrees: f32, pitch_degrees: f32, distance: f32) -> Camera {
    Camera {
        target,
        yaw: yaw_degrees.to_radians(),
        pitch: pitch_degrees.to_radians(),
        distance,
        ortho: false,
    }
}

fn pixel(image: &image::RgbaImage, x: u32, y: u32) -> [u8; 3] {
    let p = image.get_pixel(x, y).0;
    [p[0], p[1], p[2]]
}

/// Which of the primary colours a pixel is (lit surfaces keep their hue).
fn dominant(p: [u8; 3]) -> char {
    let [r, g, b] = p.map(i32::from);
    if r > g + 30 && r > b + 30 {
        'r'
    } else if g > r + 30 && g > b + 30 {
        'g'
    } else if b > r + 30 && b > g + 30 {
        'b'
    } else {
        '?'
    }
}

/// A green cube on a red ground, and a camera looking at it from above at an angle.
fn cube_on_ground() -> (Scene, Camera) {
    let mut scene = Scene::new();
    let red = scene.material("materials/red", [0.9, 0.1, 0.1], None);
    let green = scene.material("materials/green", [0.1, 0.9, 0.1], None);
    let ground = Vec3::new(20.0, 0.0, 20.0);
    scene.add("plane", ground, Vec3::ZERO, Vec3::ZERO, red);
    let cube = (Vec3::splat(2.0), Vec3::new(0.0, 1.05, 0.0));
    scene.add("cube", cube.0, cube.1, Vec3::ZERO, green);
    let camera = looking_at(Vec3::new(0.0, 1.0, 0.0), 30.0, 35.0, 8.0);
    (scene, camera)
}

/// A green cube standing on a red ground, seen from above at an angle: the cube's
/// pixels are the cube's, whichever order the batches are drawn in (the old
/// painter's algorithm painted the ground over it from some angles).
#[test]
fn a_cube_in_front_of_a_plane_occludes_it_in_any_draw_order() {
    let _turn = turn();
    let (mut scene, camera) = cube_on_ground();
    let list = scene.list();
    let mut reversed = list.clone();
    reversed.batches.reverse();
    // With 4 samples, as on a GPU, and 1, as on a software renderer.
    for (samples, list) in [(4, &list), (4, &reversed), (1, &list), (1, &reversed)] {
        scene.samples = samples;
        let image = scene.render(&camera, list);
        let (cx, cy) = (SIZE[0] / 2, SIZE[1] / 2);
        assert_eq!(
            dominant(pixel(&image, cx, cy)),
            'g',
            "centre: {:?}",
            pixel(&image, cx, cy)
        );
        // The ground shows around it.
        assert_eq!(dominant(pixel(&image, cx, SIZE[1] - 8)), 'r');
    }
    // And the cube is hidden when the camera looks from below the ground: the
    // plane is drawn from both sides and is in front.
    let below = looking_at(Vec3::new(0.0, 1.0, 0.0), 30.0, -35.0, 8.0);
    let image = scene.render(&below, &scene.list());
    assert_eq!(dominant(pixel(&image, SIZE[0] / 2, SIZE[1] / 2)), 'r');
}

/// Where `p` is in a `SIZE` picture taken by `camera`.
fn on_screen(camera: &Camera, p: Vec3) -> (u32, u32) {
    let ndc = camera
        .view_projection(SIZE[0] as f32 / SIZE[1] as f32)
        .project_point3(p);
    (
        ((ndc.x * 0.5 + 0.5) * SIZE[0] as f32) as u32,
        ((0.5 - ndc.y * 0.5) * SIZE[1] as f32) as u32,
    )
}

fn brightness(p: [u8; 3]) -> i32 {
    p.iter().map(|&c| i32::from(c)).sum()
}

/// With shadows on, a cube held above the ground darkens the ground where the sun
/// is behind it, and nowhere else: the shadow's middle (straight away from the
/// sun) is much darker than with shadows off; ground towards the sun, and the
/// cube's own lit top, are as bright either way.
#[test]
fn a_raised_cube_casts_a_shadow_on_the_ground_when_shadows_are_on() {
    let _turn = turn();
    let mut scene = Scene::new();
    let grey = scene.material("materials/grey", [0.7, 0.7, 0.7], None);
    scene.add(
        "plane",
        Vec3::new(20.0, 0.0, 20.0),
        Vec3::ZERO,
        Vec3::ZERO,
        grey,
    );
    let cube = Vec3::new(0.0, 1.5, 0.0);
    scene.add("cube", Vec3::splat(1.2), cube, Vec3::ZERO, grey);
    let camera = looking_at(Vec3::ZERO, 200.0, 70.0, 11.0);
    let sun = kiln::render::gpu::SUN.normalize();
    // Where the sun's ray through the cube's middle meets the ground, and a point
    // as far off on the sun's side.
    let shadow = cube - sun * (cube.y / sun.y);
    let lit = Vec3::new(-shadow.x, 0.0, -shadow.z);
    let list = scene.list();
    let off = scene.render(&camera, &list);
    scene.shadows = true;
    let on = scene.render(&camera, &list);
    let at = |image: &image::RgbaImage, p: Vec3| {
        let (x, y) = on_screen(&camera, p);
        brightness(pixel(image, x, y))
    };
    // Positive control: shadows off, the two ground points are alike.
    assert!(
        (at(&off, shadow) - at(&off, lit)).abs() < 20,
        "{} vs {}",
        at(&off, shadow),
        at(&off, lit)
    );
    assert!(
        at(&on, shadow) < at(&off, shadow) * 7 / 10,
        "in shadow: {} with shadows, {} without",
        at(&on, shadow),
        at(&off, shadow)
    );
    assert!(
        (at(&on, lit) - at(&off, lit)).abs() < 12,
        "lit ground: {} vs {}",
        at(&on, lit),
        at(&off, lit)
    );
    let top = cube + Vec3::Y * 0.6;
    assert!(
        (at(&on, top) - at(&off, top)).abs() < 12,
        "the cube's top stays lit"
    );
}

/// One sample per pixel (a software renderer) draws the picture four samples do,
/// but for the pixels along edges, which four samples smooth.
#[test]
fn one_sample_draws_the_picture_four_do_but_for_the_edges() {
    let _turn = turn();
    let (mut scene, camera) = cube_on_ground();
    let four = scene.render(&camera, &scene.list());
    scene.samples = 1;
    let one = scene.render(&camera, &scene.list());
    let near = |a: &image::Rgba<u8>, b: &image::Rgba<u8>| {
        a.0.iter().zip(b.0).all(|(&x, y)| x.abs_diff(y) <= 3)
    };
    let differing = four
        .pixels()
        .zip(one.pixels())
        .filter(|(a, b)| !near(a, b))
        .count();
    let edges = |image: &image::RgbaImage| {
        let mut count = 0;
        for y in 0..image.height() - 1 {
            for x in 0..image.width() - 1 {
                let p = image.get_pixel(x, y);
                if !near(p, image.get_pixel(x + 1, y)) || !near(p, image.get_pixel(x, y + 1)) {
                    count += 1;
                }
            }
        }
        count
    };
    // Positive control: the picture has edges, and the two differ along them.
    assert!(differing > 0, "four samples smooth nothing?");
    assert!(
        differing <= 2 * edges(&one) + 16,
        "{differing} pixels differ; the one-sample picture has {} edge pixels",
        edges(&one)
    );
    assert_eq!(dominant(pixel(&one, SIZE[0] / 2, SIZE[1] / 2)), 'g');
}

/// A camera standing on a large ground (inside its bounding box, close to it)
/// still draws the ground all across the lower half of the view: nothing is
/// dropped when a corner of a face is behind the camera.
#[test]
fn a_camera_inside_a_large_grounds_box_still_draws_the_ground() {
    let _turn = turn();
    let mut scene = Scene::new();
    let red = scene.material("materials/red", [0.9, 0.1, 0.1], None);
    scene.add(
        "plane",
        Vec3::new(400.0, 0.0, 400.0),
        Vec3::ZERO,
        Vec3::ZERO,
        red,
    );
    // The eye 0.3 m above the ground, looking ahead and slightly down.
    let camera = looking_at(Vec3::new(0.0, 0.1, -3.0), 0.0, 4.0, 3.0);
    let image = scene.render(&camera, &scene.list());
    for x in (0..SIZE[0]).step_by(16) {
        for y in (SIZE[1] / 2 + 8..SIZE[1]).step_by(8) {
            assert_eq!(
                dominant(pixel(&image, x, y)),
                'r',
                "({x}, {y}): {:?}",
                pixel(&image, x, y)
            );
        }
    }
    // The sky is not ground.
    assert_ne!(dominant(pixel(&image, SIZE[0] / 2, 4)), 'r');
}

/// A 4 m quad standing up, facing the camera 5 m away, in a material whose texture
/// is the file `bytes` (`textures/quad.png`).
fn render_textured_quad(bytes: &[u8]) -> image::RgbaImage {
    let mut scene = Scene::new();
    std::fs::create_dir_all(scene.project.path().join("textures")).unwrap();
    std::fs::write(scene.project.path().join("textures/quad.png"), bytes).unwrap();
    let material = scene.material("materials/quad", [1.0, 1.0, 1.0], Some("textures/quad.png"));
    scene.add(
        "plane",
        Vec3::new(4.0, 0.0, 4.0),
        Vec3::ZERO,
        Vec3::new(90.0, 0.0, 0.0),
        material,
    );
    scene.render(&looking_at(Vec3::ZERO, 0.0, 0.0, 5.0), &scene.list())
}

/// A quad with a four-colour texture shows each quadrant in its place.
#[test]
fn a_textured_quad_shows_its_texture() {
    let _turn = turn();
    let texture = image::RgbaImage::from_fn(64, 64, |x, y| match (x < 32, y < 32) {
        (true, true) => image::Rgba([230, 20, 20, 255]),
        (false, true) => image::Rgba([20, 230, 20, 255]),
        (true, false) => image::Rgba([20, 20, 230, 255]),
        (false, false) => image::Rgba([240, 240, 240, 255]),
    });
    let mut png = Vec::new();
    texture
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let image = render_textured_quad(&png);
    let (cx, cy) = (SIZE[0] / 2, SIZE[1] / 2);
    let at = |dx: i32, dy: i32| pixel(&image, (cx as i32 + dx) as u32, (cy as i32 + dy) as u32);
    // Texture v runs down the image: its top row is the quad's top edge.
    assert_eq!(dominant(at(-12, -12)), 'r', "{:?}", at(-12, -12));
    assert_eq!(dominant(at(12, -12)), 'g', "{:?}", at(12, -12));
    assert_eq!(dominant(at(-12, 12)), 'b', "{:?}", at(-12, 12));
    let white = at(12, 12);
    assert!(white.iter().all(|c| *c > 120), "{white:?}");
}

/// A texture that cannot be read shows the placeholder checker (magenta), not the
/// material's plain colour and not a crash.
#[test]
fn a_broken_texture_shows_the_placeholder_checker() {
    let _turn = turn();
    let image = render_textured_quad(b"not a png");
    let magenta = (40..120)
        .step_by(4)
        .flat_map(|x| (30..90).step_by(4).map(move |y| (x, y)))
        .filter(|(x, y)| {
            let [r, g, b] = pixel(&image, *x, *y);
            r > 150 && b > 120 && g < 90
        })
        .count();
    assert!(magenta > 20, "{magenta} magenta samples");
}

/// Picking returns the front object at a pixel where two overlap, whichever is
/// first in the draw list, and nothing where there is nothing.
#[test]
fn picking_returns_the_front_object_where_two_overlap() {
    let mut scene = Scene::new();
    let red = scene.material("materials/red", [0.9, 0.1, 0.1], None);
    let back = scene.add(
        "cube",
        Vec3::splat(2.0),
        Vec3::new(0.0, 0.0, -3.0),
        Vec3::ZERO,
        red,
    );
    let front = scene.add(
        "sphere",
        Vec3::splat(1.0),
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::ZERO,
        red,
    );
    let camera = looking_at(Vec3::ZERO, 0.0, 0.0, 6.0);
    let vp = camera.view_projection(1.0);
    let project = Project::open(scene.project.path()).unwrap();
    let mut assets = AssetCache::new(project, None);
    let versions = AssetVersions::default();
    let list = scene.list();
    let mut reversed = list.clone();
    reversed.batches.reverse();
    for list in [list, reversed] {
        let mut model = |m| {
            assets
                .mesh_model(&scene.resources, m, &versions)
                .map(|(_, m)| m)
        };
        let centre = Ray::through(vp, [0.0, 0.0]).unwrap();
        assert_eq!(pick(&list, centre, &mut model).map(|h| h.0), Some(front));
        // Beside the sphere but on the larger cube behind it.
        let beside = Ray::through(vp, [0.22, 0.0]).unwrap();
        assert_eq!(pick(&list, beside, &mut model).map(|h| h.0), Some(back));
        // Within the sphere's box but off the sphere (a corner of its box): the
        // cube behind, not the sphere's box.
        let corner = Ray::through(vp, [0.128, 0.128]).unwrap();
        assert_eq!(pick(&list, corner, &mut model).map(|h| h.0), Some(back));
        let outside = Ray::through(vp, [0.95, 0.95]).unwrap();
        assert_eq!(pick(&list, outside, &mut model), None);
    }
}

/// Instance data goes to the GPU only where it changed: all of it the first time,
/// none when nothing moved, and one run of 256 instances when one entity moved.
#[test]
fn only_the_instances_that_changed_are_uploaded() {
    let _turn = turn();
    let mut scene = Scene::new();
    let red = scene.material("materials/red", [0.9, 0.1, 0.1], None);
    for i in 0..1000 {
        let at = Vec3::new(i as f32 * 0.2 - 100.0, 0.0, 0.0);
        scene.add("cube", Vec3::splat(0.1), at, Vec3::ZERO, red);
    }
    let gpu = gpu();
    let mut renderer = SceneRenderer::new(&gpu.device, &gpu.queue);
    let mut assets = AssetCache::new(Project::open(scene.project.path()).unwrap(), None);
    let versions = AssetVersions::default();
    let view = scene.view(&looking_at(Vec3::ZERO, 0.0, 30.0, 50.0));
    let stride = std::mem::size_of::<kiln::render::scene::InstanceData>() as u64;
    let mut list = scene.list();
    let mut frame = |list: &DrawList, changed: bool| {
        renderer.render(
            SIZE,
            &view,
            list,
            changed,
            &scene.resources,
            &mut assets,
            &versions,
        );
        renderer.stats
    };
    let first = frame(&list, true);
    assert_eq!(first.uploaded, 1000 * stride);
    assert_eq!(
        first.draws, 1,
        "one instanced draw for one mesh and material"
    );
    assert_eq!(frame(&list, false).uploaded, 0);
    list.instances[700].model[3][1] += 1.0;
    assert_eq!(frame(&list, true).uploaded, 256 * stride);
}
