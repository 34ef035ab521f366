//! The transform handle's arithmetic as plain data, apart from drawing: where the
//! pointer is along an axis, on a plane or around a ring, and what a drag does to
//! each dragged entity's position, rotation and scale, with snapping applied along
//! the dragged axes only. Tested without a window.

use glam::{Affine3A, EulerRot, Quat, Vec3};
use kiln_core::schema::json_f32s;
use serde_json::Value;

use crate::render::picking::Ray;

/// The part of the handle grabbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grip {
    /// Along an axis (0, 1, 2: x, y, z): move or scale.
    Axis(usize),
    /// In the plane across an axis (the square between the other two): move.
    Plane(usize),
    /// The middle: move in the view's plane (with Shift, along surfaces), or scale
    /// uniformly.
    Centre,
    /// The ring around an axis: rotate about it.
    Ring(usize),
    /// The outer ring: rotate about the direction the camera looks along.
    ViewRing,
}

impl Grip {
    /// Which of the handle's three axes a move along this grip changes.
    pub fn moved_axes(self) -> [bool; 3] {
        match self {
            Grip::Axis(k) => std::array::from_fn(|i| i == k),
            Grip::Plane(k) => std::array::from_fn(|i| i != k),
            Grip::Centre | Grip::ViewRing | Grip::Ring(_) => [true; 3],
        }
    }
}

/// Where the handle is and which way its axes point (unit, orthogonal).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HandleFrame {
    /// The pivot, in the world.
    pub origin: Vec3,
    /// The axes: the world's, or the primary selection's own (local space).
    pub axes: [Vec3; 3],
    /// Whether the axes are the entity's own.
    pub local: bool,
}

/// One dragged entity or part as the drag found it.
#[derive(Debug, Clone, PartialEq)]
pub struct DragStart {
    /// Authoring id or part path.
    pub id: String,
    /// Its position, rotation (degrees, XYZ) and scale fields, in its parent's space.
    pub fields: [Vec3; 3],
    /// Its parent's world pose.
    pub parent: Affine3A,
}

impl DragStart {
    /// Its world pose at the start.
    pub fn world(&self) -> Affine3A {
        self.parent * local_pose(self.fields)
    }
}

/// The pose a transform's fields describe (rotation in degrees, XYZ order, as the
/// runtime reads it).
pub fn local_pose([position, rotation, scale]: [Vec3; 3]) -> Affine3A {
    let r = rotation * (std::f32::consts::PI / 180.0);
    Affine3A::from_scale_rotation_translation(
        scale,
        Quat::from_euler(EulerRot::XYZ, r.x, r.y, r.z),
        position,
    )
}

/// What a drag does, as the pointer has gone so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Motion {
    /// Move every dragged entity by this much, in the world.
    Translate(Vec3),
    /// Rotate by `degrees` about the handle's axis `axis` (`None`: the view axis
    /// `view`), right-handed.
    Rotate {
        /// Which axis.
        axis: Option<usize>,
        /// The direction towards the viewer, for the view ring.
        view: Vec3,
        /// How far.
        degrees: f32,
    },
    /// Scale by `factor` along `axis` (`None`: uniformly).
    Scale {
        /// Which axis.
        axis: Option<usize>,
        /// How much.
        factor: f32,
    },
}

/// Snapping steps in force for this drag (`None`: off).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Snap {
    /// Metres.
    pub translate: Option<f32>,
    /// Degrees.
    pub rotate: Option<f32>,
    /// Scale units.
    pub scale: Option<f32>,
}

fn snapped(v: f32, step: Option<f32>) -> f32 {
    match step {
        Some(step) if step > 0.0 => (v / step).round() * step,
        _ => v,
    }
}

/// How far along the line `origin + axis * s` the point nearest the pointer's ray
/// is; `None` when the axis points along the ray (nothing to measure).
pub fn along_axis(origin: Vec3, axis: Vec3, ray: Ray) -> Option<f32> {
    let w0 = origin - ray.origin;
    let b = axis.dot(ray.direction);
    let denom = 1.0 - b * b;
    if denom < 1e-4 {
        return None;
    }
    let d = axis.dot(w0);
    let e = ray.direction.dot(w0);
    Some((b * e - d) / denom)
}

/// Where the pointer's ray meets the plane through `origin` across `normal`.
pub fn on_plane(origin: Vec3, normal: Vec3, ray: Ray) -> Option<Vec3> {
    let facing = ray.direction.dot(normal);
    if facing.abs() < 1e-4 {
        return None;
    }
    let t = (origin - ray.origin).dot(normal) / facing;
    (t > 0.0).then(|| ray.origin + ray.direction * t)
}

/// The angle of the pointer at `(dx, dy)` screen points from the handle's middle,
/// counter-clockwise as seen on screen (screen y grows downwards), in radians.
pub fn screen_angle(dx: f32, dy: f32) -> f32 {
    (-dy).atan2(dx)
}

/// The angle of `offset` (from the handle's middle, in the ring's plane) around the
/// ring about axis `k` of `axes`, right-handed about that axis: what a ring seen
/// at a slant measures, where the angle on screen would be squeezed.
pub fn ring_angle(offset: Vec3, k: usize, axes: &[Vec3; 3]) -> f32 {
    let (u, v) = (axes[(k + 1) % 3], axes[(k + 2) % 3]);
    offset.dot(v).atan2(offset.dot(u))
}

/// How far the pointer turned, from `previous` to `now` (screen angles), taking
/// the shorter way round: summed frame by frame, a drag can turn several times.
pub fn turned(previous: f32, now: f32) -> f32 {
    let mut d = now - previous;
    while d > std::f32::consts::PI {
        d -= std::f32::consts::TAU;
    }
    while d < -std::f32::consts::PI {
        d += std::f32::consts::TAU;
    }
    d
}

/// A ring turned `screen_radians` counter-clockwise on screen, as a rotation about
/// `axis`: the same way when the axis points at the viewer (`toward_viewer`), the
/// other way when it points away.
pub fn ring_degrees(screen_radians: f32, axis: Vec3, toward_viewer: Vec3) -> f32 {
    let sign = if axis.dot(toward_viewer) >= 0.0 {
        1.0
    } else {
        -1.0
    };
    screen_radians.to_degrees() * sign
}

/// The new fields of each dragged entity, as (id, field, value): only the fields
/// the motion changes (a rotation about the selection's centre moves positions
/// too). Snapping applies along the grabbed axes alone: in world space a move puts
/// the pivot on the grid along those axes; in local space it moves by whole steps.
pub fn drag_values(
    frame: &HandleFrame,
    grip: Grip,
    motion: Motion,
    starts: &[DragStart],
    snap: Snap,
    about_centre: bool,
) -> Vec<(String, &'static str, Value)> {
    let mut out = Vec::new();
    match motion {
        Motion::Translate(delta) => {
            let moved = grip.moved_axes();
            let pivot = frame.origin;
            let mut snapped_delta = Vec3::ZERO;
            for (k, axis) in frame.axes.iter().enumerate() {
                if !moved[k] {
                    continue;
                }
                let c = delta.dot(*axis);
                let c = if frame.local {
                    snapped(c, snap.translate)
                } else {
                    let at = pivot.dot(*axis);
                    snapped(at + c, snap.translate) - at
                };
                snapped_delta += *axis * c;
            }
            for s in starts {
                let local = s.parent.inverse().transform_vector3(snapped_delta);
                out.push((
                    s.id.clone(),
                    "position",
                    rounded(s.fields[0] + local, 1000.0),
                ));
            }
        }
        Motion::Rotate {
            axis,
            view,
            degrees,
        } => {
            let degrees = snapped(degrees, snap.rotate);
            let radians = degrees.to_radians();
            for s in starts {
                let world = s.world();
                let (_, world_rotation, world_position) = world.to_scale_rotation_translation();
                let axis_world = match axis {
                    // Each entity turns about its own axis in local space (unless
                    // they all turn about one centre).
                    Some(k) if frame.local && !about_centre => {
                        (world_rotation * unit(k)).normalize_or(frame.axes[k])
                    }
                    Some(k) => frame.axes[k],
                    None => view.normalize_or(Vec3::Y),
                };
                let turn = Quat::from_axis_angle(axis_world, radians);
                let (_, parent_rotation, _) = s.parent.to_scale_rotation_translation();
                let local_axis = parent_rotation.inverse() * axis_world;
                let rotation = euler_after(s.fields[1], local_axis, degrees, || {
                    parent_rotation.inverse() * turn * world_rotation
                });
                out.push((s.id.clone(), "rotation", rounded(rotation, 100.0)));
                if about_centre && starts.len() > 1 {
                    let moved = frame.origin + turn * (world_position - frame.origin);
                    let local = s.parent.inverse().transform_point3(moved);
                    out.push((s.id.clone(), "position", rounded(local, 1000.0)));
                }
            }
        }
        Motion::Scale { axis, factor } => {
            let factor = factor.max(0.01);
            for s in starts {
                let mut scale = s.fields[2];
                for k in 0..3 {
                    if axis.is_none_or(|a| a == k) {
                        scale[k] = snapped(scale[k] * factor, snap.scale);
                        if scale[k].abs() < 1e-3 {
                            scale[k] = snap.scale.unwrap_or(1e-3);
                        }
                    }
                }
                out.push((s.id.clone(), "scale", rounded(scale, 1000.0)));
                if about_centre && axis.is_none() && starts.len() > 1 {
                    let world_position = Vec3::from(s.world().translation);
                    let moved = frame.origin + (world_position - frame.origin) * factor;
                    let local = s.parent.inverse().transform_point3(moved);
                    out.push((s.id.clone(), "position", rounded(local, 1000.0)));
                }
            }
        }
    }
    out
}

fn unit(k: usize) -> Vec3 {
    [Vec3::X, Vec3::Y, Vec3::Z][k]
}

/// The rotation field after turning `degrees` about `local_axis` (in the parent's
/// space): when the entity is turned about that one axis only (`[0, 40, 0]` turned
/// about y), the number of that axis changes and no other, so the file says what
/// the designer did; otherwise the turned rotation `turned()` as XYZ angles.
fn euler_after(start: Vec3, local_axis: Vec3, degrees: f32, turned: impl Fn() -> Quat) -> Vec3 {
    for k in 0..3 {
        let others_zero = (0..3).all(|i| i == k || start[i].abs() < 1e-4);
        let along = local_axis.dot(unit(k));
        if others_zero && along.abs() > 0.9999 {
            let mut out = start;
            out[k] += degrees * along.signum();
            return out;
        }
    }
    let (x, y, z) = turned().to_euler(EulerRot::XYZ);
    Vec3::new(x, y, z) * (180.0 / std::f32::consts::PI)
}

/// A vector as JSON, rounded to `1 / scale` (no float noise in saved files).
pub fn rounded(v: Vec3, scale: f32) -> Value {
    json_f32s(&((v * scale).round() / scale).to_array())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world_frame(origin: Vec3) -> HandleFrame {
        HandleFrame {
            origin,
            axes: [Vec3::X, Vec3::Y, Vec3::Z],
            local: false,
        }
    }

    fn start(id: &str, position: Vec3, rotation: Vec3) -> DragStart {
        DragStart {
            id: id.into(),
            fields: [position, rotation, Vec3::ONE],
            parent: Affine3A::IDENTITY,
        }
    }

    fn numbers(v: &Value) -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_f64().unwrap())
            .collect()
    }

    #[test]
    fn the_pointer_is_measured_along_an_axis_and_on_a_plane() {
        // Looking straight down at the x axis from above, the pointer over x = 3.
        let ray = Ray {
            origin: Vec3::new(3.0, 10.0, 0.0),
            direction: Vec3::NEG_Y,
        };
        let s = along_axis(Vec3::ZERO, Vec3::X, ray).unwrap();
        assert!((s - 3.0).abs() < 1e-5, "{s}");
        // The y axis points along the ray: nothing to measure.
        assert_eq!(along_axis(Vec3::ZERO, Vec3::Y, ray), None);
        let hit = on_plane(Vec3::new(0.0, 2.0, 0.0), Vec3::Y, ray).unwrap();
        assert!(hit.abs_diff_eq(Vec3::new(3.0, 2.0, 0.0), 1e-5));
        assert_eq!(on_plane(Vec3::ZERO, Vec3::X, ray), None);
    }

    #[test]
    fn a_ring_turns_with_the_pointer_around_the_handle() {
        // A quarter turn counter-clockwise on screen: from right of the middle to
        // above it (screen y grows down).
        let from = screen_angle(50.0, 0.0);
        let to = screen_angle(0.0, -50.0);
        let d = turned(from, to);
        assert!((d - std::f32::consts::FRAC_PI_2).abs() < 1e-5, "{d}");
        // Across the back of the circle the short way round, not almost a full turn.
        let d = turned(screen_angle(-50.0, 1.0), screen_angle(-50.0, -1.0));
        assert!(d.abs() < 0.1, "{d}");
        // Seen from above (+y toward the viewer), counter-clockwise is +90 about y;
        // seen from below, -90.
        assert!((ring_degrees(std::f32::consts::FRAC_PI_2, Vec3::Y, Vec3::Y) - 90.0).abs() < 1e-3);
        assert!(
            (ring_degrees(std::f32::consts::FRAC_PI_2, Vec3::Y, Vec3::NEG_Y) + 90.0).abs() < 1e-3
        );
    }

    #[test]
    fn the_angle_around_a_ring_is_the_turn_about_its_axis() {
        let axes = [Vec3::X, Vec3::Y, Vec3::Z];
        for degrees in [30.0f32, 120.0, -75.0] {
            let turn = Quat::from_axis_angle(Vec3::Y, degrees.to_radians());
            // The ring about y starts at z (u) and goes towards x (v).
            let start = ring_angle(Vec3::Z * 2.0, 1, &axes);
            let now = ring_angle(turn * (Vec3::Z * 2.0), 1, &axes);
            let measured = turned(start, now).to_degrees();
            assert!((measured - degrees).abs() < 1e-3, "{degrees}: {measured}");
        }
    }

    #[test]
    fn a_snapped_move_along_one_axis_leaves_the_others_alone() {
        let rock = start("rock", Vec3::new(0.2331, 0.0, -3.4837), Vec3::ZERO);
        let frame = world_frame(rock.fields[0]);
        let drag = |snap| {
            let motion = Motion::Translate(Vec3::new(1.1, 0.0, 0.0));
            let values = drag_values(
                &frame,
                Grip::Axis(0),
                motion,
                std::slice::from_ref(&rock),
                snap,
                false,
            );
            numbers(&values[0].2)
        };
        // Positive control: without snapping, the drag itself.
        assert_eq!(drag(Snap::default()), [1.333, 0.0, -3.484]);
        let snap = Snap {
            translate: Some(0.5),
            ..Snap::default()
        };
        // x onto the grid; z keeps its -3.4837 (rounded to millimetres as saved).
        assert_eq!(drag(snap), [1.5, 0.0, -3.484]);
        // In local space the move goes by whole steps from where it was.
        let local = HandleFrame {
            local: true,
            ..frame
        };
        let motion = Motion::Translate(Vec3::new(1.1, 0.0, 0.0));
        let values = drag_values(
            &local,
            Grip::Axis(0),
            motion,
            std::slice::from_ref(&rock),
            snap,
            false,
        );
        assert_eq!(numbers(&values[0].2), [1.233, 0.0, -3.484]);
        // A plane handle moves across its axis only.
        let motion = Motion::Translate(Vec3::new(1.0, 5.0, 1.0));
        let values = drag_values(
            &frame,
            Grip::Plane(1),
            motion,
            &[rock],
            Snap::default(),
            false,
        );
        assert_eq!(numbers(&values[0].2), [1.233, 0.0, -2.484]);
    }

    #[test]
    fn rotating_changes_the_angle_of_the_axis_turned_about() {
        let rock = start("rock", Vec3::ZERO, Vec3::new(0.0, 40.0, 0.0));
        let frame = world_frame(Vec3::ZERO);
        let turn = |degrees, snap| {
            let motion = Motion::Rotate {
                axis: Some(1),
                view: Vec3::Z,
                degrees,
            };
            let values = drag_values(
                &frame,
                Grip::Ring(1),
                motion,
                std::slice::from_ref(&rock),
                snap,
                false,
            );
            assert_eq!(values.len(), 1, "a rotation about its pivot moves nothing");
            assert_eq!(values[0].1, "rotation");
            numbers(&values[0].2)
        };
        assert_eq!(turn(100.0, Snap::default()), [0.0, 140.0, 0.0]);
        let snap = Snap {
            rotate: Some(15.0),
            ..Snap::default()
        };
        // 37 degrees turns two 15-degree steps from where it was.
        assert_eq!(turn(37.0, snap), [0.0, 70.0, 0.0]);
    }

    #[test]
    fn in_local_space_an_entity_turns_about_its_own_axis() {
        // Tipped 90 degrees about z: its own y axis points along world -x.
        let tipped = start("log", Vec3::ZERO, Vec3::new(0.0, 0.0, 90.0));
        let frame = HandleFrame {
            origin: Vec3::ZERO,
            axes: [Vec3::Y, Vec3::NEG_X, Vec3::Z],
            local: true,
        };
        let motion = Motion::Rotate {
            axis: Some(1),
            view: Vec3::Z,
            degrees: 90.0,
        };
        let values = drag_values(
            &frame,
            Grip::Ring(1),
            motion,
            std::slice::from_ref(&tipped),
            Snap::default(),
            false,
        );
        let after = local_pose([
            Vec3::ZERO,
            Vec3::from_slice(
                &numbers(&values[0].2)
                    .iter()
                    .map(|v| *v as f32)
                    .collect::<Vec<_>>(),
            ),
            Vec3::ONE,
        ]);
        // Its own y axis stays where it was (it turned about it); its x moved.
        let own_y = after.transform_vector3(Vec3::Y);
        assert!(own_y.abs_diff_eq(Vec3::NEG_X, 1e-3), "{own_y}");
        let own_x = after.transform_vector3(Vec3::X);
        assert!(!own_x.abs_diff_eq(tipped.world().transform_vector3(Vec3::X), 1e-3));
    }

    #[test]
    fn about_the_centre_a_selection_turns_and_scales_as_one() {
        let a = start("a", Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO);
        let b = start("b", Vec3::new(-1.0, 0.0, 0.0), Vec3::ZERO);
        let frame = world_frame(Vec3::ZERO);
        let motion = Motion::Rotate {
            axis: Some(1),
            view: Vec3::Z,
            degrees: 90.0,
        };
        let values = drag_values(
            &frame,
            Grip::Ring(1),
            motion,
            &[a.clone(), b.clone()],
            Snap::default(),
            true,
        );
        let position_of_a = values
            .iter()
            .find(|(id, f, _)| id == "a" && *f == "position")
            .unwrap();
        assert_eq!(numbers(&position_of_a.2), [0.0, 0.0, -1.0]);
        let motion = Motion::Scale {
            axis: None,
            factor: 2.0,
        };
        let values = drag_values(&frame, Grip::Centre, motion, &[a, b], Snap::default(), true);
        let fields: Vec<_> = values
            .iter()
            .map(|(id, f, v)| (id.as_str(), *f, numbers(v)))
            .collect();
        assert!(fields.contains(&("a", "scale", vec![2.0, 2.0, 2.0])));
        assert!(fields.contains(&("b", "position", vec![-2.0, 0.0, 0.0])));
    }

    #[test]
    fn scaling_one_axis_snaps_that_axis_only_and_never_collapses() {
        let mut box_ = start("box", Vec3::ZERO, Vec3::ZERO);
        box_.fields[2] = Vec3::new(1.0, 1.23, 1.0);
        let frame = world_frame(Vec3::ZERO);
        let scale = |factor, snap| {
            let motion = Motion::Scale {
                axis: Some(0),
                factor,
            };
            numbers(&drag_values(&frame, Grip::Axis(0), motion, &[box_.clone()], snap, false)[0].2)
        };
        assert_eq!(scale(1.5, Snap::default()), [1.5, 1.23, 1.0]);
        let snap = Snap {
            scale: Some(0.25),
            ..Snap::default()
        };
        assert_eq!(scale(1.4, snap), [1.5, 1.23, 1.0]);
        assert!(scale(0.0, snap)[0] > 0.0);
    }
}
