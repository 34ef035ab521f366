//! Triangle meshes on the CPU: the vertex layout the GPU draws, the primitive shapes
//! of `.mesh` resources, normals for meshes that come without them, and bounds.

use glam::{Vec2, Vec3};

/// One vertex as the GPU reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Vertex {
    /// Position in the mesh's space.
    pub position: [f32; 3],
    /// Unit normal.
    pub normal: [f32; 3],
    /// Texture coordinate (glTF convention: v down).
    pub uv: [f32; 2],
}

/// An indexed triangle list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Geometry {
    /// Vertices.
    pub vertices: Vec<Vertex>,
    /// Three indices per triangle.
    pub indices: Vec<u32>,
    /// Whether the surface is closed (its back faces can never be seen, so they are
    /// culled); a plane or an open glTF surface is drawn from both sides.
    pub closed: bool,
}

impl Geometry {
    /// The smallest box around every vertex; `None` when there are none.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut it = self.vertices.iter().map(|v| Vec3::from(v.position));
        let first = it.next()?;
        Some(it.fold((first, first), |(lo, hi), p| (lo.min(p), hi.max(p))))
    }

    /// The triangles as corner positions (for picking).
    pub fn triangles(&self) -> impl Iterator<Item = [Vec3; 3]> + '_ {
        self.indices.chunks_exact(3).filter_map(|t| {
            let at = |k: u32| {
                self.vertices
                    .get(k as usize)
                    .map(|v| Vec3::from(v.position))
            };
            Some([at(t[0])?, at(t[1])?, at(t[2])?])
        })
    }

    /// Sets every vertex normal to the area-weighted average of its triangles'
    /// normals (glTF: "when normals are not specified, client implementations
    /// MUST calculate flat normals"; shared vertices make that smooth, so a mesh
    /// whose triangles share no vertices comes out flat as the spec asks).
    pub fn compute_normals(&mut self) {
        let mut sums = vec![Vec3::ZERO; self.vertices.len()];
        for t in self.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|k| k as usize);
            if a >= sums.len() || b >= sums.len() || c >= sums.len() {
                continue;
            }
            let p = |k: usize| Vec3::from(self.vertices[k].position);
            // The cross product's length is twice the area: larger faces weigh more.
            let n = (p(b) - p(a)).cross(p(c) - p(a));
            for k in [a, b, c] {
                sums[k] += n;
            }
        }
        for (v, n) in self.vertices.iter_mut().zip(sums) {
            v.normal = n.normalize_or(Vec3::Y).to_array();
        }
    }

    fn push(&mut self, position: Vec3, normal: Vec3, uv: Vec2) -> u32 {
        self.vertices.push(Vertex {
            position: position.to_array(),
            normal: normal.to_array(),
            uv: uv.to_array(),
        });
        (self.vertices.len() - 1) as u32
    }

    /// A quad `a b c d` (counter-clockwise seen from the front) with a flat normal.
    fn quad(&mut self, corners: [Vec3; 4], uvs: [Vec2; 4]) {
        let normal = (corners[1] - corners[0])
            .cross(corners[2] - corners[0])
            .normalize_or(Vec3::Y);
        let base = self.vertices.len() as u32;
        for (p, uv) in corners.into_iter().zip(uvs) {
            self.push(p, normal, uv);
        }
        self.indices
            .extend([base, base + 1, base + 2, base, base + 2, base + 3]);
    }
}

const UNIT_UVS: [Vec2; 4] = [
    Vec2::new(0.0, 1.0),
    Vec2::new(1.0, 1.0),
    Vec2::new(1.0, 0.0),
    Vec2::new(0.0, 0.0),
];

/// The primitive shape `name` (one of `kiln_core::registry::MESH_SHAPES`) fitting the
/// box from -0.5 to 0.5 on each axis; the `.mesh` resource's size scales it. An
/// unknown name is a cube.
pub fn shape(name: &str) -> Geometry {
    match name {
        "plane" => plane(),
        "sphere" => lathe(32, 16, |t| {
            let a = std::f32::consts::PI * t;
            (0.5 * a.sin(), -0.5 * a.cos())
        }),
        // A cylinder with rounded ends: each end is a quarter of the height.
        "capsule" => lathe(32, 16, |t| {
            let a = std::f32::consts::PI * t;
            let y = -a.cos();
            let r = 0.5 * a.sin();
            // Stretch the middle of the profile into a straight side.
            let y = if t < 0.5 {
                -0.25 + 0.25 * y
            } else {
                0.25 + 0.25 * y
            };
            (r, y)
        }),
        "cylinder" => cylinder(32, 0.5),
        "cone" => cylinder(32, 0.0),
        _ => cube(),
    }
}

fn cube() -> Geometry {
    let mut g = Geometry {
        closed: true,
        ..Geometry::default()
    };
    let h = 0.5;
    // Each face: its normal, and two axes spanning it (right-handed with the normal).
    for (n, u, v) in [
        (Vec3::X, Vec3::NEG_Z, Vec3::Y),
        (Vec3::NEG_X, Vec3::Z, Vec3::Y),
        (Vec3::Y, Vec3::X, Vec3::NEG_Z),
        (Vec3::NEG_Y, Vec3::X, Vec3::Z),
        (Vec3::Z, Vec3::X, Vec3::Y),
        (Vec3::NEG_Z, Vec3::NEG_X, Vec3::Y),
    ] {
        let c = n * h;
        g.quad(
            [
                c - u * h - v * h,
                c + u * h - v * h,
                c + u * h + v * h,
                c - u * h + v * h,
            ],
            UNIT_UVS,
        );
    }
    g
}

/// A 1 x 1 square in the XZ plane facing up, in tiles so that a large ground's
/// texture repeats once per tile.
fn plane() -> Geometry {
    let mut g = Geometry::default();
    g.quad(
        [
            Vec3::new(-0.5, 0.0, 0.5),
            Vec3::new(0.5, 0.0, 0.5),
            Vec3::new(0.5, 0.0, -0.5),
            Vec3::new(-0.5, 0.0, -0.5),
        ],
        UNIT_UVS,
    );
    g
}

/// A surface of revolution about Y: `profile(t)` for t in 0..=1 gives (radius, y)
/// from the bottom pole to the top one.
fn lathe(segments: u32, rings: u32, profile: impl Fn(f32) -> (f32, f32)) -> Geometry {
    let mut g = Geometry {
        closed: true,
        ..Geometry::default()
    };
    for ring in 0..=rings {
        let t = ring as f32 / rings as f32;
        let (r, y) = profile(t);
        // The profile's normal, from its slope (numerically, so any profile works).
        let dt = 1e-3;
        let (r0, y0) = profile((t - dt).max(0.0));
        let (r1, y1) = profile((t + dt).min(1.0));
        let (dr, dy) = (r1 - r0, y1 - y0);
        // Rotate the tangent (dr, dy) a quarter turn outwards.
        let (nr, ny) = if ring == 0 {
            (0.0, -1.0)
        } else if ring == rings {
            (0.0, 1.0)
        } else {
            let len = (dr * dr + dy * dy).sqrt().max(1e-9);
            (dy / len, -dr / len)
        };
        for s in 0..=segments {
            let a = s as f32 / segments as f32 * std::f32::consts::TAU;
            let (sin, cos) = a.sin_cos();
            g.push(
                Vec3::new(r * cos, y, -r * sin),
                Vec3::new(nr * cos, ny, -nr * sin),
                Vec2::new(s as f32 / segments as f32, 1.0 - t),
            );
        }
    }
    let row = segments + 1;
    for ring in 0..rings {
        for s in 0..segments {
            let a = ring * row + s;
            let b = a + row;
            g.indices.extend([a, a + 1, b + 1, a, b + 1, b]);
        }
    }
    g
}

/// A cylinder (or a cone when `top_radius` is 0) with caps.
fn cylinder(segments: u32, top_radius: f32) -> Geometry {
    let mut g = Geometry {
        closed: true,
        ..Geometry::default()
    };
    let slope = 0.5 - top_radius;
    let side_n = |cos: f32, sin: f32| Vec3::new(cos, slope, -sin).normalize();
    for s in 0..=segments {
        let a = s as f32 / segments as f32 * std::f32::consts::TAU;
        let (sin, cos) = a.sin_cos();
        let u = s as f32 / segments as f32;
        g.push(
            Vec3::new(0.5 * cos, -0.5, -0.5 * sin),
            side_n(cos, sin),
            Vec2::new(u, 1.0),
        );
        g.push(
            Vec3::new(top_radius * cos, 0.5, -top_radius * sin),
            side_n(cos, sin),
            Vec2::new(u, 0.0),
        );
    }
    for s in 0..segments {
        let (a, b) = (2 * s, 2 * s + 2);
        g.indices.extend([a, b, b + 1, a, b + 1, a + 1]);
    }
    let mut cap = |y: f32, r: f32, n: Vec3| {
        if r <= 0.0 {
            return;
        }
        let center = g.push(Vec3::new(0.0, y, 0.0), n, Vec2::splat(0.5));
        for s in 0..=segments {
            let a = s as f32 / segments as f32 * std::f32::consts::TAU;
            let (sin, cos) = a.sin_cos();
            g.push(
                Vec3::new(r * cos, y, -r * sin),
                n,
                Vec2::new(0.5 + 0.5 * cos, 0.5 - 0.5 * sin),
            );
        }
        for s in 0..segments {
            let (a, b) = (center + 1 + s, center + 2 + s);
            // Counter-clockwise seen from outside along the cap's normal.
            if n.y > 0.0 {
                g.indices.extend([center, a, b]);
            } else {
                g.indices.extend([center, b, a]);
            }
        }
    };
    cap(-0.5, 0.5, Vec3::NEG_Y);
    cap(0.5, top_radius, Vec3::Y);
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every triangle of a closed shape winds counter-clockwise seen from outside:
    /// its geometric normal points away from the centre, the same way as its
    /// vertices' normals (or back-face culling would hide the front).
    #[test]
    fn shapes_fit_the_unit_box_and_their_triangles_face_outwards() {
        for name in kiln_core::registry::MESH_SHAPES {
            let g = shape(name);
            let (lo, hi) = g.bounds().unwrap_or_default();
            assert!(
                lo.cmpge(Vec3::splat(-0.5 - 1e-4)).all() && hi.cmple(Vec3::splat(0.5 + 1e-4)).all(),
                "{name}: {lo} {hi}"
            );
            assert!(
                !g.indices.is_empty() && g.indices.len().is_multiple_of(3),
                "{name}"
            );
            for t in g.indices.chunks_exact(3) {
                let v = t
                    .iter()
                    .map(|k| g.vertices[*k as usize])
                    .collect::<Vec<_>>();
                let p = v.iter().map(|v| Vec3::from(v.position)).collect::<Vec<_>>();
                let n = (p[1] - p[0]).cross(p[2] - p[0]);
                if n.length() < 1e-7 {
                    continue; // degenerate at a pole
                }
                let vertex_normals: Vec3 = v.iter().map(|v| Vec3::from(v.normal)).sum();
                assert!(
                    n.dot(vertex_normals) > 0.0,
                    "{name}: triangle {t:?} winds against its normals"
                );
                if g.closed {
                    let centroid = (p[0] + p[1] + p[2]) / 3.0;
                    assert!(
                        n.dot(centroid) > -1e-6,
                        "{name}: triangle {t:?} faces inwards"
                    );
                }
            }
        }
    }

    #[test]
    fn computed_normals_are_flat_for_unshared_vertices_and_unit_length() {
        let mut g = shape("cube");
        let expected: Vec<[f32; 3]> = g.vertices.iter().map(|v| v.normal).collect();
        for v in &mut g.vertices {
            v.normal = [0.0; 3];
        }
        g.compute_normals();
        for (v, e) in g.vertices.iter().zip(expected) {
            assert!((Vec3::from(v.normal) - Vec3::from(e)).length() < 1e-5);
        }
    }
}
