//! Writes the demo project's art: low-poly glTF 2.0 models (a tree's trunk and
//! canopy, a rock, a windmill tower) with their buffers, and the textures they and
//! the materials use, all drawn procedurally here (no downloaded assets).
//!
//! ```text
//! cargo run -p kiln --example demo_art -- projects/demo
//! ```
//!
//! The glTF files name their images relative to themselves (`../textures/bark.png`,
//! `rock.png`), so renaming a texture in Kiln patches them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::f32::consts::TAU;
use std::path::Path;

use glam::{Vec2, Vec3};
use serde_json::{Value, json};

/// A deterministic pseudo-random number in 0..1 (the same art on every run).
fn hash(seed: u32) -> f32 {
    let mut x = seed.wrapping_mul(0x9E37_79B9) ^ 0x85EB_CA6B;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2C1B_3C6D);
    x ^= x >> 12;
    x = x.wrapping_mul(0x297A_2D39);
    x ^= x >> 15;
    (x & 0xFF_FFFF) as f32 / 16_777_216.0
}

/// Flat-shaded triangles with texture coordinates.
#[derive(Default)]
struct Mesh {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    uvs: Vec<Vec2>,
}

impl Mesh {
    fn triangle(&mut self, p: [Vec3; 3], uv: [Vec2; 3]) {
        let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or(Vec3::Y);
        for k in 0..3 {
            self.positions.push(p[k]);
            self.normals.push(n);
            self.uvs.push(uv[k]);
        }
    }

    /// A ring-to-ring band of quads (counter-clockwise seen from outside).
    fn band(&mut self, a: &[Vec3], b: &[Vec3], v0: f32, v1: f32) {
        let n = a.len();
        for k in 0..n {
            let j = (k + 1) % n;
            let (u0, u1) = (k as f32 / n as f32, (k + 1) as f32 / n as f32);
            self.triangle(
                [a[k], a[j], b[j]],
                [Vec2::new(u0, v0), Vec2::new(u1, v0), Vec2::new(u1, v1)],
            );
            self.triangle(
                [a[k], b[j], b[k]],
                [Vec2::new(u0, v0), Vec2::new(u1, v1), Vec2::new(u0, v1)],
            );
        }
    }

    /// A fan closing a ring at `center` (facing +Y when `up`).
    fn cap(&mut self, ring: &[Vec3], center: Vec3, up: bool) {
        let n = ring.len();
        for k in 0..n {
            let j = (k + 1) % n;
            let uv = |p: Vec3| Vec2::new(0.5 + p.x - center.x, 0.5 + p.z - center.z);
            if up {
                self.triangle(
                    [center, ring[j], ring[k]],
                    [uv(center), uv(ring[j]), uv(ring[k])],
                );
            } else {
                self.triangle(
                    [center, ring[k], ring[j]],
                    [uv(center), uv(ring[k]), uv(ring[j])],
                );
            }
        }
    }
}

fn ring(n: usize, y: f32, r: f32, twist: f32, jitter: f32, seed: u32) -> Vec<Vec3> {
    (0..n)
        .map(|k| {
            let a = (k as f32 + twist) / n as f32 * TAU;
            let rr = r * (1.0 + jitter * (hash(seed + k as u32) - 0.5));
            // Counter-clockwise seen from above: +X then -Z.
            Vec3::new(a.cos() * rr, y, -a.sin() * rr)
        })
        .collect()
}

/// A lumpy low-poly ball: an icosahedron subdivided once, each vertex pushed in or
/// out by a hash of its position.
fn lumpy_ball(radius: Vec3, lump: f32, seed: u32) -> Mesh {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    let mut v: Vec<Vec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| Vec3::new(x, y, z).normalize())
    .collect();
    let mut faces: Vec<[usize; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    let mut mid = std::collections::HashMap::new();
    let mut split = |a: usize, b: usize, v: &mut Vec<Vec3>| -> usize {
        *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
            v.push(((v[a] + v[b]) * 0.5).normalize());
            v.len() - 1
        })
    };
    let mut next = Vec::new();
    for [a, b, c] in faces {
        let (ab, bc, ca) = (
            split(a, b, &mut v),
            split(b, c, &mut v),
            split(c, a, &mut v),
        );
        next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
    }
    faces = next;
    let v: Vec<Vec3> = v
        .iter()
        .enumerate()
        .map(|(k, p)| *p * (1.0 + lump * (hash(seed * 977 + k as u32) - 0.5)) * radius)
        .collect();
    let mut m = Mesh::default();
    for [a, b, c] in faces {
        let uv = |p: Vec3| Vec2::new(0.5 + p.x.atan2(p.z) / TAU, 0.5 - p.y / (2.0 * radius.y));
        m.triangle([v[a], v[b], v[c]], [uv(v[a]), uv(v[b]), uv(v[c])]);
    }
    m
}

/// A part: a mesh and its material (base colour, optional texture URI, roughness).
struct Part {
    mesh: Mesh,
    color: [f32; 4],
    texture: Option<&'static str>,
    roughness: f32,
}

/// Writes `name.gltf` and `name.bin` into `dir`: one node per part.
fn write_gltf(dir: &Path, name: &str, parts: Vec<Part>) {
    let mut bin: Vec<u8> = Vec::new();
    let (mut views, mut accessors, mut meshes, mut materials, mut nodes) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut images, mut textures): (Vec<Value>, Vec<Value>) = (vec![], vec![]);
    let push_view = |bytes: &[u8], bin: &mut Vec<u8>, views: &mut Vec<Value>| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len()}));
        bin.extend_from_slice(bytes);
        views.len() - 1
    };
    for (k, part) in parts.iter().enumerate() {
        let m = &part.mesh;
        let floats = |vs: &[f32]| vs.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
        let pos: Vec<f32> = m.positions.iter().flat_map(|p| p.to_array()).collect();
        let nor: Vec<f32> = m.normals.iter().flat_map(|p| p.to_array()).collect();
        let uv: Vec<f32> = m.uvs.iter().flat_map(|p| p.to_array()).collect();
        let (lo, hi) = m.positions.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(a, b), p| (a.min(*p), b.max(*p)),
        );
        let count = m.positions.len();
        let pv = push_view(&floats(&pos), &mut bin, &mut views);
        let nv = push_view(&floats(&nor), &mut bin, &mut views);
        let uvv = push_view(&floats(&uv), &mut bin, &mut views);
        let base = accessors.len();
        accessors.push(
            json!({"bufferView": pv, "componentType": 5126, "count": count, "type": "VEC3",
            "min": lo.to_array(), "max": hi.to_array()}),
        );
        accessors
            .push(json!({"bufferView": nv, "componentType": 5126, "count": count, "type": "VEC3"}));
        accessors.push(
            json!({"bufferView": uvv, "componentType": 5126, "count": count, "type": "VEC2"}),
        );
        let mut pbr = json!({"baseColorFactor": part.color, "metallicFactor": 0.0, "roughnessFactor": part.roughness});
        if let Some(uri) = part.texture {
            let image = match images.iter().position(|i| i["uri"] == uri) {
                Some(i) => i,
                None => {
                    images.push(json!({"uri": uri}));
                    textures.push(json!({"source": images.len() - 1, "sampler": 0}));
                    images.len() - 1
                }
            };
            pbr["baseColorTexture"] = json!({"index": image});
        }
        materials.push(json!({"name": format!("{name}_{k}"), "pbrMetallicRoughness": pbr}));
        meshes.push(json!({"name": format!("{name}_{k}"), "primitives": [{
            "attributes": {"POSITION": base, "NORMAL": base + 1, "TEXCOORD_0": base + 2},
            "material": k}]}));
        nodes.push(json!({"name": format!("{name}_{k}"), "mesh": k}));
    }
    let mut gltf = json!({
        "asset": {"version": "2.0", "generator": "Kiln demo_art example"},
        "scene": 0,
        "scenes": [{"nodes": (0..nodes.len()).collect::<Vec<_>>()}],
        "nodes": nodes,
        "meshes": meshes,
        "materials": materials,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"uri": format!("{name}.bin"), "byteLength": bin.len()}],
    });
    if !images.is_empty() {
        gltf["images"] = json!(images);
        gltf["textures"] = json!(textures);
        gltf["samplers"] =
            json!([{"magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497}]);
    }
    std::fs::write(dir.join(format!("{name}.bin")), &bin).unwrap();
    let text = serde_json::to_string_pretty(&gltf).unwrap() + "\n";
    std::fs::write(dir.join(format!("{name}.gltf")), text).unwrap();
}

/// A texture drawn by `f(x, y) -> rgb` for x, y in 0..1.
fn texture(path: &Path, size: u32, f: impl Fn(f32, f32) -> [f32; 3]) {
    let image = image::RgbImage::from_fn(size, size, |x, y| {
        let c = f(x as f32 / size as f32, y as f32 / size as f32);
        image::Rgb(c.map(|v| (v.clamp(0.0, 1.0) * 255.0) as u8))
    });
    image.save(path).unwrap();
}

/// Value noise, tiling with period 1.
fn noise(x: f32, y: f32, cells: u32, seed: u32) -> f32 {
    let (fx, fy) = (x * cells as f32, y * cells as f32);
    let (ix, iy) = (fx.floor() as u32, fy.floor() as u32);
    let (tx, ty) = (fx - fx.floor(), fy - fy.floor());
    let at = |i: u32, j: u32| hash(seed.wrapping_mul(7919) + (i % cells) * 131 + (j % cells) * 7);
    let s = |t: f32| t * t * (3.0 - 2.0 * t);
    let a = at(ix, iy) + (at(ix + 1, iy) - at(ix, iy)) * s(tx);
    let b = at(ix, iy + 1) + (at(ix + 1, iy + 1) - at(ix, iy + 1)) * s(tx);
    a + (b - a) * s(ty)
}

fn fbm(x: f32, y: f32, seed: u32) -> f32 {
    (noise(x, y, 4, seed) * 0.5 + noise(x, y, 8, seed + 1) * 0.3 + noise(x, y, 16, seed + 2) * 0.2)
        .clamp(0.0, 1.0)
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "projects/demo".into());
    let root = Path::new(&root);
    let art = root.join("art");
    let textures = root.join("textures");
    std::fs::create_dir_all(&art).unwrap();
    std::fs::create_dir_all(&textures).unwrap();

    // Textures: bark and planks in stripes, leaves and grass and rock in noise.
    texture(&textures.join("bark.png"), 128, |x, y| {
        let v = 0.55 + 0.45 * noise(x, y * 0.25, 16, 3)
            - 0.25 * (noise(x, y, 32, 4) > 0.7) as u8 as f32;
        [0.42 * v, 0.29 * v, 0.18 * v]
    });
    texture(&textures.join("leaves.png"), 128, |x, y| {
        let v = 0.6 + 0.5 * fbm(x, y, 10);
        [0.18 * v, 0.45 * v, 0.16 * v]
    });
    texture(&textures.join("grass.png"), 128, |x, y| {
        let v = 0.7 + 0.4 * fbm(x, y, 20);
        [0.24 * v, 0.5 * v, 0.17 * v]
    });
    texture(&textures.join("planks.png"), 128, |x, y| {
        let board = (y * 4.0).floor();
        let seam = if (y * 4.0).fract() < 0.04 { 0.45 } else { 1.0 };
        let v = (0.75 + 0.3 * noise(x * 0.2, y, 8, 30 + board as u32)) * seam;
        [0.62 * v, 0.45 * v, 0.28 * v]
    });
    texture(&art.join("rock.png"), 128, |x, y| {
        let v = 0.45 + 0.5 * fbm(x, y, 40);
        [0.55 * v, 0.54 * v, 0.52 * v]
    });

    // The trunk: 3 m tall around its middle, flaring at the roots.
    let mut trunk = Mesh::default();
    let heights = [-1.5, -1.3, -0.5, 0.6, 1.5];
    let radii = [0.32, 0.2, 0.17, 0.15, 0.11];
    let rings: Vec<Vec<Vec3>> = heights
        .iter()
        .zip(radii)
        .enumerate()
        .map(|(k, (y, r))| ring(7, *y, r, k as f32 * 0.15, 0.2, 100 + k as u32 * 10))
        .collect();
    for k in 0..rings.len() - 1 {
        trunk.band(
            &rings[k],
            &rings[k + 1],
            1.0 - k as f32 / 4.0,
            1.0 - (k + 1) as f32 / 4.0,
        );
    }
    trunk.cap(&rings[rings.len() - 1], Vec3::new(0.0, 1.5, 0.0), true);
    trunk.cap(&rings[0], Vec3::new(0.0, -1.5, 0.0), false);
    write_gltf(
        &art,
        "trunk",
        vec![Part {
            mesh: trunk,
            color: [1.0; 4],
            texture: Some("../textures/bark.png"),
            roughness: 0.9,
        }],
    );

    // The canopy: three lumpy balls, about 2.4 m across.
    let mut canopy = Mesh::default();
    for (k, (center, r)) in [
        (Vec3::new(0.0, 0.1, 0.0), 1.1),
        (Vec3::new(0.55, -0.35, 0.3), 0.75),
        (Vec3::new(-0.5, -0.3, -0.35), 0.8),
    ]
    .into_iter()
    .enumerate()
    {
        let ball = lumpy_ball(Vec3::splat(r), 0.35, 7 + k as u32);
        for p in ball.positions.chunks(3).zip(ball.uvs.chunks(3)) {
            canopy.triangle(
                [p.0[0] + center, p.0[1] + center, p.0[2] + center],
                [p.1[0], p.1[1], p.1[2]],
            );
        }
    }
    write_gltf(
        &art,
        "canopy",
        vec![Part {
            mesh: canopy,
            color: [1.0; 4],
            texture: Some("../textures/leaves.png"),
            roughness: 0.8,
        }],
    );

    // A rock about 1.2 m across, flattened.
    let rock = lumpy_ball(Vec3::new(0.6, 0.45, 0.55), 0.5, 42);
    write_gltf(
        &art,
        "rock",
        vec![Part {
            mesh: rock,
            color: [1.0; 4],
            texture: Some("rock.png"),
            roughness: 0.95,
        }],
    );

    // A windmill tower 1 m tall around its middle (the level scales it), with a
    // dark roof: two parts, two materials.
    let mut tower = Mesh::default();
    let low = ring(8, -0.5, 0.5, 0.5, 0.0, 0);
    let high = ring(8, 0.3, 0.32, 0.5, 0.0, 0);
    tower.band(&low, &high, 1.0, 0.0);
    tower.cap(&low, Vec3::new(0.0, -0.5, 0.0), false);
    let mut roof = Mesh::default();
    let eave = ring(8, 0.3, 0.4, 0.5, 0.0, 0);
    roof.band(&eave, &[Vec3::new(0.0, 0.5, 0.0); 8], 1.0, 0.0);
    roof.cap(&eave, Vec3::new(0.0, 0.3, 0.0), false);
    write_gltf(
        &art,
        "windmill",
        vec![
            Part {
                mesh: tower,
                color: [0.95, 0.9, 0.85, 1.0],
                texture: Some("../textures/planks.png"),
                roughness: 0.85,
            },
            Part {
                mesh: roof,
                color: [0.35, 0.12, 0.1, 1.0],
                texture: None,
                roughness: 0.6,
            },
        ],
    );
    println!("demo art written to {}", root.display());
}
