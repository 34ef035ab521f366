//! Picking on the CPU: a ray from the camera through the pointer, tested against
//! each drawn instance's box and then its triangles, so that a click selects what is
//! visible under the pointer (the nearest surface), not what is behind it or what
//! merely has its box there.

use std::sync::Arc;

use glam::{Mat4, Vec3, Vec4};
use kiln_core::{Entity, ResourceId};

use super::model::Model;
use super::scene::DrawList;

/// A ray: `origin + t * direction` for t >= 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ray {
    /// Where it starts (on the near plane).
    pub origin: Vec3,
    /// Unit direction.
    pub direction: Vec3,
}

impl Ray {
    /// The ray through normalized device coordinates `ndc` (x right, y up, -1..1) of
    /// a view with `view_projection` (depth 1 near, 0 far, as the viewport renders).
    pub fn through(view_projection: Mat4, ndc: [f32; 2]) -> Option<Ray> {
        let inverse = view_projection.inverse();
        let at = |z: f32| {
            let p = inverse * Vec4::new(ndc[0], ndc[1], z, 1.0);
            (p.w.abs() > 1e-12).then(|| p.truncate() / p.w)
        };
        let near = at(1.0)?;
        let further = at(0.5)?;
        let direction = (further - near).try_normalize()?;
        Some(Ray {
            origin: near,
            direction,
        })
    }
}

/// The nearest instance the ray hits and the distance to the hit; `model` gives the
/// model each batch's mesh draws (not loaded yet: not pickable).
pub fn pick(
    list: &DrawList,
    ray: Ray,
    model: impl FnMut(ResourceId) -> Option<Arc<Model>>,
) -> Option<(Entity, f32)> {
    pick_except(list, ray, model, |_| false)
}

/// [`pick`], looking through the instances of entities `skip` says yes to (what is
/// being placed must not be found under itself).
pub fn pick_except(
    list: &DrawList,
    ray: Ray,
    mut model: impl FnMut(ResourceId) -> Option<Arc<Model>>,
    skip: impl Fn(Entity) -> bool,
) -> Option<(Entity, f32)> {
    let mut best: Option<(Entity, f32)> = None;
    for batch in &list.batches {
        let Some(model) = model(batch.mesh) else {
            continue;
        };
        let (lo, hi) = model.bounds();
        let range = batch.first as usize..(batch.first + batch.count) as usize;
        for (data, owner) in list.instances[range.clone()]
            .iter()
            .zip(&list.owners[range])
        {
            if skip(*owner) {
                continue;
            }
            let to_local = Mat4::from_cols_array_2d(&data.model).inverse();
            let origin = to_local.transform_point3(ray.origin);
            // Not normalized: t along it is t along the world ray.
            let direction = to_local.transform_vector3(ray.direction);
            let limit = best.map_or(f32::INFINITY, |b| b.1);
            let Some(enter) = box_entry(origin, direction, lo, hi) else {
                continue;
            };
            if enter > limit {
                continue;
            }
            let nearest = model
                .parts
                .iter()
                .flat_map(|p| p.geometry.triangles())
                .filter_map(|t| triangle_hit(origin, direction, t))
                .fold(f32::INFINITY, f32::min);
            if nearest < limit {
                best = Some((*owner, nearest));
            }
        }
    }
    best
}

/// Where the ray enters the box (0 when it starts inside); `None` if it misses.
/// A box flat on one axis (a plane) still counts, with a small tolerance.
fn box_entry(origin: Vec3, direction: Vec3, lo: Vec3, hi: Vec3) -> Option<f32> {
    let pad = Vec3::splat(1e-4);
    let (lo, hi) = (lo - pad, hi + pad);
    let mut t0 = 0.0f32;
    let mut t1 = f32::INFINITY;
    for k in 0..3 {
        if direction[k].abs() < 1e-12 {
            if origin[k] < lo[k] || origin[k] > hi[k] {
                return None;
            }
            continue;
        }
        let a = (lo[k] - origin[k]) / direction[k];
        let b = (hi[k] - origin[k]) / direction[k];
        t0 = t0.max(a.min(b));
        t1 = t1.min(a.max(b));
        if t0 > t1 {
            return None;
        }
    }
    Some(t0)
}

/// Möller-Trumbore, both sides.
fn triangle_hit(origin: Vec3, direction: Vec3, [a, b, c]: [Vec3; 3]) -> Option<f32> {
    let (e1, e2) = (b - a, c - a);
    let p = direction.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = direction.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (t >= 0.0).then_some(t)
}

/// The entities with an instance whose box's middle is inside `area` of the screen
/// (in normalized device coordinates, x right and y up, corners in any order) and
/// in front of the camera: what a box drawn over the viewport selects. An entity
/// `skip` says yes to (locked) is left out.
pub fn inside_area(
    list: &DrawList,
    view_projection: Mat4,
    area: [[f32; 2]; 2],
    mut model: impl FnMut(ResourceId) -> Option<Arc<Model>>,
    skip: impl Fn(Entity) -> bool,
) -> Vec<Entity> {
    let (x0, x1) = (area[0][0].min(area[1][0]), area[0][0].max(area[1][0]));
    let (y0, y1) = (area[0][1].min(area[1][1]), area[0][1].max(area[1][1]));
    let mut out = Vec::new();
    for batch in &list.batches {
        let centre = model(batch.mesh).map_or(Vec3::ZERO, |m| {
            let (lo, hi) = m.bounds();
            (lo + hi) * 0.5
        });
        let range = batch.first as usize..(batch.first + batch.count) as usize;
        for (data, owner) in list.instances[range.clone()]
            .iter()
            .zip(&list.owners[range])
        {
            if skip(*owner) {
                continue;
            }
            let world = Mat4::from_cols_array_2d(&data.model).transform_point3(centre);
            let clip = view_projection * world.extend(1.0);
            if clip.w <= 1e-6 {
                continue;
            }
            let (x, y) = (clip.x / clip.w, clip.y / clip.w);
            if (x0..=x1).contains(&x) && (y0..=y1).contains(&y) && !out.contains(owner) {
                out.push(*owner);
            }
        }
    }
    out
}

#[cfg(test)]
mod area_tests {
    use glam::Affine3A;

    use super::*;
    use crate::render::scene::{Batch, InstanceData};

    #[test]
    fn a_box_on_screen_finds_what_is_drawn_inside_it() {
        // Three cubes along x, seen from above without perspective: x maps to
        // screen x, -z to screen y.
        let at = [-4.0f32, 0.0, 4.0];
        let list = DrawList {
            instances: at
                .iter()
                .map(|x| InstanceData {
                    model: Mat4::from(Affine3A::from_translation(Vec3::new(*x, 0.0, 0.0)))
                        .to_cols_array_2d(),
                    params: [0.0; 4],
                })
                .collect(),
            owners: (1..=3).map(Entity::from_bits).collect(),
            batches: vec![Batch {
                mesh: ResourceId(1),
                material: ResourceId::NONE,
                first: 0,
                count: 3,
            }],
        };
        let view = glam::camera::rh::view::look_at_mat4(Vec3::Y * 10.0, Vec3::ZERO, Vec3::NEG_Z);
        let proj =
            glam::camera::rh::proj::directx::orthographic(-10.0, 10.0, -10.0, 10.0, 100.0, 0.0);
        let vp = proj * view;
        let cube = Arc::new(Model::shape("cube"));
        let model = |_| Some(cube.clone());
        let found = |area, skip: &dyn Fn(Entity) -> bool| inside_area(&list, vp, area, model, skip);
        // Positive control: the whole screen finds all three.
        assert_eq!(found([[-1.0, -1.0], [1.0, 1.0]], &|_| false).len(), 3);
        // The right half, drawn from either corner: the one at x = 4 (screen 0.4).
        let right = Entity::from_bits(3);
        assert_eq!(found([[0.2, -0.5], [0.9, 0.5]], &|_| false), [right]);
        assert_eq!(found([[0.9, 0.5], [0.2, -0.5]], &|_| false), [right]);
        // A locked entity is not found.
        assert!(found([[0.2, -0.5], [0.9, 0.5]], &|e| e == right).is_empty());
    }
}
