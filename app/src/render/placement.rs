//! Where placed things land, as plain data over the [`DrawList`]: the surface under
//! the pointer (the nearest drawn mesh, then the ground plane), the box around what
//! an entity draws, and the floor below a box. The viewport uses them to put new,
//! placed, pasted and dropped entities on what is under the cursor, resting on it by
//! their bounds, and for Drop to Floor (End).
//!
//! The ground plane (y = 0) is what the grid shows; it counts only where no mesh is
//! hit, so that a pit in a terrain mesh is a floor and the grid under it is not.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use kiln_core::{Entity, ResourceId};

use super::model::Model;
use super::picking::{Ray, pick_except};
use super::scene::DrawList;

/// Looks up the model a `.mesh` resource draws (`None`: not loaded yet).
pub type ModelOf<'a> = dyn FnMut(ResourceId) -> Option<Arc<Model>> + 'a;

/// Further than this along a ray, the ground plane is not where anything is placed
/// (a ray nearly parallel to the ground).
const GROUND_REACH: f32 = 10_000.0;

/// Where `ray` first meets a drawn mesh (of an entity `skip` says no to) or, past
/// every mesh, the ground plane in front of the camera.
pub fn surface_under(
    list: &DrawList,
    ray: Ray,
    model: &mut ModelOf,
    skip: &dyn Fn(Entity) -> bool,
) -> Option<Vec3> {
    if let Some((_, t)) = pick_except(list, ray, &mut *model, skip) {
        return Some(ray.origin + ray.direction * t);
    }
    ground_hit(ray)
}

/// Where `ray` meets the ground plane, in front of its origin and not absurdly far.
pub fn ground_hit(ray: Ray) -> Option<Vec3> {
    if ray.direction.y.abs() < 1e-6 {
        return None;
    }
    let t = -ray.origin.y / ray.direction.y;
    (t > 0.0 && t < GROUND_REACH).then(|| ray.origin + ray.direction * t)
}

/// The world box around every instance drawn by an entity `of` says yes to; `None`
/// when none of them is drawn, or a model is still loading (the box would be wrong).
pub fn world_bounds(
    list: &DrawList,
    of: &dyn Fn(Entity) -> bool,
    model: &mut ModelOf,
) -> Option<(Vec3, Vec3)> {
    let mut out: Option<(Vec3, Vec3)> = None;
    for batch in &list.batches {
        let range = batch.first as usize..(batch.first + batch.count) as usize;
        let mut local: Option<(Vec3, Vec3)> = None;
        for (data, owner) in list.instances[range.clone()]
            .iter()
            .zip(&list.owners[range])
        {
            if !of(*owner) {
                continue;
            }
            let (lo, hi) = match local {
                Some(b) => b,
                None => {
                    let b = model(batch.mesh)?.bounds();
                    local = Some(b);
                    b
                }
            };
            out = Some(grow(out, &Mat4::from_cols_array_2d(&data.model), (lo, hi)));
        }
    }
    out
}

/// `so_far` grown by the box `(lo, hi)` as `to_world` places it (its eight
/// corners; `so_far` `None`: that box alone).
pub fn grow(so_far: Option<(Vec3, Vec3)>, to_world: &Mat4, (lo, hi): (Vec3, Vec3)) -> (Vec3, Vec3) {
    let mut out = so_far;
    for k in 0..8 {
        let corner = Vec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        );
        let p = to_world.transform_point3(corner);
        out = Some(out.map_or((p, p), |(a, b)| (a.min(p), b.max(p))));
    }
    out.unwrap_or((lo, hi))
}

/// The height of the floor under the box `bounds`: the highest surface of a drawn
/// mesh (of an entity `skip` says no to) met by rays cast straight down from the
/// box's top at its centre and four points inside its corners; the ground plane
/// where none is met.
pub fn floor_below(
    list: &DrawList,
    (lo, hi): (Vec3, Vec3),
    model: &mut ModelOf,
    skip: &dyn Fn(Entity) -> bool,
) -> f32 {
    let centre = (lo + hi) * 0.5;
    let inset = (hi - lo) * 0.35;
    let top = hi.y + 1e-3;
    let samples = [
        (0.0, 0.0),
        (-1.0, -1.0),
        (1.0, -1.0),
        (-1.0, 1.0),
        (1.0, 1.0),
    ];
    samples
        .iter()
        .filter_map(|&(sx, sz)| {
            let ray = Ray {
                origin: Vec3::new(centre.x + sx * inset.x, top, centre.z + sz * inset.z),
                direction: Vec3::NEG_Y,
            };
            pick_except(list, ray, &mut *model, skip).map(|(_, t)| top - t)
        })
        .reduce(f32::max)
        .unwrap_or(0.0)
}

/// How far to move something whose box is `bounds` so that it rests on `point`:
/// its bottom at the point's height and, with `centre_on_point`, its middle over
/// the point (a pasted group); otherwise it keeps its place across the ground
/// (an entity whose origin was already put at the point).
pub fn rest_offset((lo, hi): (Vec3, Vec3), point: Vec3, centre_on_point: bool) -> Vec3 {
    let mut offset = Vec3::new(0.0, point.y - lo.y, 0.0);
    if centre_on_point {
        let centre = (lo + hi) * 0.5;
        offset.x = point.x - centre.x;
        offset.z = point.z - centre.z;
    }
    offset
}

/// `point` with its place across the ground (x and z) on the grid of `step`
/// metres; its height is the surface's and stays.
pub fn on_grid(point: Vec3, step: f32) -> Vec3 {
    if step.is_nan() || step <= 0.0 {
        return point;
    }
    let snap = |v: f32| (v / step).round() * step;
    Vec3::new(snap(point.x), point.y, snap(point.z))
}

#[cfg(test)]
mod tests {
    use glam::Affine3A;

    use super::*;
    use crate::render::scene::{Batch, InstanceData};

    /// A list of unit cubes (`Model::shape("cube")`, -0.5..0.5) at the given world
    /// transforms, owned by entities 1, 2, ...
    fn cubes(at: &[Affine3A]) -> DrawList {
        DrawList {
            instances: at
                .iter()
                .map(|a| InstanceData {
                    model: Mat4::from(*a).to_cols_array_2d(),
                    params: [0.0; 4],
                })
                .collect(),
            owners: (1..=at.len() as u64).map(Entity::from_bits).collect(),
            batches: vec![Batch {
                mesh: ResourceId(1),
                material: ResourceId::NONE,
                first: 0,
                count: at.len() as u32,
            }],
        }
    }

    fn cube_model() -> impl FnMut(ResourceId) -> Option<Arc<Model>> {
        let cube = Arc::new(Model::shape("cube"));
        move |_| Some(cube.clone())
    }

    fn nothing(_: Entity) -> bool {
        false
    }

    #[test]
    fn the_surface_under_a_ray_is_the_nearest_mesh_then_the_ground() {
        // A 4 x 1 x 4 slab whose top is at y = 2.
        let slab = Affine3A::from_scale_rotation_translation(
            Vec3::new(4.0, 1.0, 4.0),
            glam::Quat::IDENTITY,
            Vec3::new(0.0, 1.5, 0.0),
        );
        let list = cubes(&[slab]);
        let mut model = cube_model();
        let down = |x: f32| Ray {
            origin: Vec3::new(x, 10.0, 0.0),
            direction: Vec3::NEG_Y,
        };
        // Positive control: beside the slab, the ground.
        let beside = surface_under(&list, down(5.0), &mut model, &nothing).unwrap();
        assert!(
            beside.abs_diff_eq(Vec3::new(5.0, 0.0, 0.0), 1e-4),
            "{beside}"
        );
        let on = surface_under(&list, down(1.0), &mut model, &nothing).unwrap();
        assert!(on.abs_diff_eq(Vec3::new(1.0, 2.0, 0.0), 1e-4), "{on}");
        // What is being placed is looked through.
        let through = surface_under(&list, down(1.0), &mut model, &|_| true).unwrap();
        assert_eq!(through.y, 0.0);
        // Looking up from below the ground meets nothing.
        let up = Ray {
            origin: Vec3::new(9.0, 1.0, 0.0),
            direction: Vec3::Y,
        };
        assert_eq!(surface_under(&list, up, &mut model, &nothing), None);
    }

    #[test]
    fn bounds_cover_every_instance_of_the_entities_asked_for() {
        let list = cubes(&[
            Affine3A::from_translation(Vec3::new(0.0, 3.0, 0.0)),
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(2.0),
                glam::Quat::from_rotation_y(0.5),
                Vec3::new(5.0, 0.0, 0.0),
            ),
        ]);
        let mut model = cube_model();
        let first = Entity::from_bits(1);
        let (lo, hi) = world_bounds(&list, &|e| e == first, &mut model).unwrap();
        assert!(lo.abs_diff_eq(Vec3::new(-0.5, 2.5, -0.5), 1e-5), "{lo}");
        assert!(hi.abs_diff_eq(Vec3::new(0.5, 3.5, 0.5), 1e-5), "{hi}");
        let (lo, hi) = world_bounds(&list, &|_| true, &mut model).unwrap();
        assert_eq!(lo.y, -1.0);
        assert!(
            hi.x > 6.0,
            "the rotated, scaled cube reaches past x = 6: {hi}"
        );
        assert_eq!(world_bounds(&list, &nothing, &mut model), None);
        // A model still loading gives no box rather than a wrong one.
        let mut loading = |_| None;
        assert_eq!(world_bounds(&list, &|_| true, &mut loading), None);
    }

    #[test]
    fn the_floor_is_the_highest_surface_under_a_box_then_the_ground() {
        // A 2 x 1 x 2 step (top at y = 1) at x = 0, and a falling cube above it
        // reaching half over its edge.
        let step = Affine3A::from_scale_rotation_translation(
            Vec3::new(2.0, 1.0, 2.0),
            glam::Quat::IDENTITY,
            Vec3::new(0.0, 0.5, 0.0),
        );
        let falling = Affine3A::from_translation(Vec3::new(1.0, 6.0, 0.0));
        let list = cubes(&[step, falling]);
        let mut model = cube_model();
        let me = Entity::from_bits(2);
        let mine = move |e: Entity| e == me;
        let bounds = world_bounds(&list, &mine, &mut model).unwrap();
        assert_eq!(floor_below(&list, bounds, &mut model, &mine), 1.0);
        // Positive control: moved off the step, the ground.
        let away = (bounds.0 + Vec3::X * 5.0, bounds.1 + Vec3::X * 5.0);
        assert_eq!(floor_below(&list, away, &mut model, &mine), 0.0);
        // Sunk halfway into the step, the step is still the floor (it lifts out).
        let sunk = (Vec3::new(-0.5, 0.5, -0.5), Vec3::new(0.5, 1.5, 0.5));
        assert_eq!(floor_below(&list, sunk, &mut model, &mine), 1.0);
        // Dropping: the offset that puts the box's bottom on the floor.
        let offset = rest_offset(bounds, Vec3::new(1.0, 1.0, 0.0), false);
        assert_eq!(offset, Vec3::new(0.0, -4.5, 0.0));
    }

    #[test]
    fn resting_centres_a_group_on_the_point_only_when_asked() {
        let bounds = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(3.0, 4.0, 7.0));
        let point = Vec3::new(10.0, 1.0, -1.0);
        assert_eq!(rest_offset(bounds, point, true), Vec3::new(8.0, -1.0, -6.0));
        assert_eq!(rest_offset(bounds, point, false), Vec3::new(0.0, -1.0, 0.0));
    }

    #[test]
    fn the_grid_snaps_across_the_ground_and_keeps_the_surface_height() {
        let p = Vec3::new(0.2331, 1.37, -3.4837);
        assert_eq!(on_grid(p, 0.5), Vec3::new(0.0, 1.37, -3.5));
        assert_eq!(on_grid(p, 0.0), p);
    }
}
