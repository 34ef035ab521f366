//! The orbiting camera, zooming and framing (F).

use glam::{Affine3A, Mat4, Vec3};

use crate::editor::model::Editor;
use crate::editor::settings::SavedCamera;

/// An orbiting camera, in perspective or looking straight along an axis without
/// perspective (the top, front and side views).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// The point orbited.
    pub target: Vec3,
    /// Angle around the vertical axis, radians.
    pub yaw: f32,
    /// Angle above the ground, radians.
    pub pitch: f32,
    /// Distance from the target (in an orthographic view, the height seen).
    pub distance: f32,
    /// Orthographic: parallel lines stay parallel (the top, front and side views).
    pub ortho: bool,
}

impl Default for Camera {
    fn default() -> Self {
        Camera {
            target: Vec3::ZERO,
            yaw: 0.7,
            pitch: 0.5,
            distance: 22.0,
            ortho: false,
        }
    }
}

/// The vertical field of view of the perspective view.
pub const FOV_Y_DEGREES: f32 = 50.0;
/// The near plane's distance: close enough to look into a small prop, far enough
/// for depth precision (depth is reversed and the far plane infinite, so precision
/// is ample either way).
pub const NEAR: f32 = 0.05;
/// Just short of straight down (straight down has no "up" to look at it with).
const STRAIGHT_DOWN: f32 = 1.5697;

/// The views a key brings (as in Blender: 1 front, 3 side, 7 top, 5 perspective).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandardView {
    /// From above, looking down, north (-z) up.
    Top,
    /// From the front (+z), looking along -z.
    Front,
    /// From the right (+x), looking along -x.
    Side,
    /// Back to perspective, from where the camera is.
    Perspective,
}

impl Camera {
    /// Where the camera is.
    pub fn eye(&self) -> Vec3 {
        self.target
            + self.distance
                * Vec3::new(
                    self.pitch.cos() * self.yaw.sin(),
                    self.pitch.sin(),
                    self.pitch.cos() * self.yaw.cos(),
                )
    }

    /// Which way is up on screen: the world's up, or looking straight down, the
    /// direction away from the camera across the ground.
    fn up(&self) -> Vec3 {
        if self.pitch.abs() > 1.5 {
            -Vec3::new(self.yaw.sin(), 0.0, self.yaw.cos()) * self.pitch.signum()
        } else {
            Vec3::Y
        }
    }

    /// World -> camera space.
    pub fn view(&self) -> Mat4 {
        glam::camera::rh::view::look_at_mat4(self.eye(), self.target, self.up())
    }

    /// World -> clip space for a viewport of the given aspect ratio, with depth
    /// reversed (1 at the near plane, 0 at infinity) as the GPU renderer draws.
    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        use glam::camera::rh::proj::directx;
        let proj = if self.ortho {
            let h = self.distance * 0.5;
            // Near and far swapped: reversed depth. The near plane is behind the
            // eye so that nothing between it and the target is cut away.
            directx::orthographic(-h * aspect, h * aspect, -h, h, 10_000.0, -10_000.0)
        } else {
            directx::perspective_infinite_reverse(FOV_Y_DEGREES.to_radians(), aspect, NEAR)
        };
        proj * self.view()
    }

    /// Switches to `view`, keeping the target and distance.
    pub fn set_view(&mut self, view: StandardView) {
        let (yaw, pitch) = match view {
            StandardView::Top => (0.0, STRAIGHT_DOWN),
            StandardView::Front => (0.0, 0.0),
            StandardView::Side => (std::f32::consts::FRAC_PI_2, 0.0),
            StandardView::Perspective => {
                self.ortho = false;
                return;
            }
        };
        self.yaw = yaw;
        self.pitch = pitch;
        self.ortho = true;
    }

    /// The name of the view as the viewport's corner shows it.
    pub fn view_name(&self) -> &'static str {
        let along = |yaw: f32, pitch: f32| {
            (self.yaw - yaw).abs() < 1e-3 && (self.pitch - pitch).abs() < 1e-3
        };
        match self.ortho {
            false => "Perspective",
            true if along(0.0, STRAIGHT_DOWN) => "Top",
            true if along(0.0, 0.0) => "Front",
            true if along(std::f32::consts::FRAC_PI_2, 0.0) => "Right",
            true => "Orthographic",
        }
    }

    /// Looks along `direction` (from the camera to the target), keeping the target
    /// and distance: what clicking an axis of the orientation gizmo does.
    pub fn look_along(&mut self, direction: Vec3) {
        let back = -direction.normalize_or(Vec3::NEG_Z);
        self.pitch = back
            .y
            .clamp(-1.0, 1.0)
            .asin()
            .clamp(-STRAIGHT_DOWN, STRAIGHT_DOWN);
        if back.x.abs() > 1e-4 || back.z.abs() > 1e-4 {
            self.yaw = back.x.atan2(back.z);
        }
    }
}

impl From<Camera> for SavedCamera {
    fn from(c: Camera) -> Self {
        SavedCamera {
            target: c.target.to_array(),
            yaw: c.yaw,
            pitch: c.pitch,
            distance: c.distance,
            ortho: c.ortho,
        }
    }
}

impl From<SavedCamera> for Camera {
    /// A saved camera, with any number a hand-edited file got wrong back in range.
    fn from(c: SavedCamera) -> Self {
        let default = Camera::default();
        let finite = |v: f32, or: f32| if v.is_finite() { v } else { or };
        let target = Vec3::from_array(c.target);
        Camera {
            target: if target.is_finite() {
                target
            } else {
                default.target
            },
            yaw: finite(c.yaw, default.yaw),
            pitch: finite(c.pitch, default.pitch).clamp(-STRAIGHT_DOWN, STRAIGHT_DOWN),
            distance: finite(c.distance, default.distance).clamp(0.5, 500.0),
            ortho: c.ortho,
        }
    }
}

/// The camera distance after scrolling by `scroll` points: proportional to the
/// distance, and the same for one big scroll event as for many small ones (a
/// linear factor overshot on fast wheels and could go negative).
pub fn zoomed(distance: f32, scroll: f32) -> f32 {
    (distance * (-scroll * 0.0015).exp()).clamp(0.5, 500.0)
}

/// The world-space box around what F frames: the selected entities with everything
/// below them (a group's children, a prefab instance's parts), meshes whole (their
/// model's box as drawn, not just their origin); the whole world when nothing is
/// selected. `mesh_box` gives a `.mesh` resource's box in its entity's space.
pub fn frame_bounds(
    editor: &Editor,
    mesh_box: &mut dyn FnMut(kiln_core::ResourceId) -> Option<(Vec3, Vec3)>,
) -> Option<(Vec3, Vec3)> {
    let transforms = &editor.preview().world.transforms;
    let mut stack: Vec<kiln_core::Instance> = if editor.selection().is_empty() {
        (0..transforms.len())
            .map(|i| kiln_core::Instance(i as u32))
            .filter(|i| transforms.parent(*i).is_none())
            .collect()
    } else {
        let level = editor.preview().level.as_ref()?;
        editor
            .selection()
            .iter()
            .filter_map(|id| transforms.lookup(level.entity(id)?))
            .collect()
    };
    let world = &editor.preview().world;
    let mut bounds: Option<(Vec3, Vec3)> = None;
    let mut grow = |p: Vec3| {
        bounds = Some(bounds.map_or((p, p), |(a, b)| (a.min(p), b.max(p))));
    };
    while let Some(i) = stack.pop() {
        let pose: Affine3A = transforms.world(i);
        let boxes: Vec<(Vec3, Vec3)> = world
            .meshes
            .instances_of(transforms.entity(i))
            .filter_map(|m| mesh_box(world.meshes.get(m).mesh))
            .collect();
        if boxes.is_empty() {
            grow(Vec3::from(pose.translation));
        }
        for b in boxes {
            let (lo, hi) = crate::render::placement::grow(None, &Mat4::from(pose), b);
            grow(lo);
            grow(hi);
        }
        stack.extend(transforms.children(i));
    }
    bounds
}

/// Points `camera` at the box, from a distance at which it fills the view.
pub fn frame_box(camera: &mut Camera, (min, max): (Vec3, Vec3)) {
    camera.target = (min + max) * 0.5;
    // The distance at which a sphere around the box fills the view.
    let radius = (max - min).length() * 0.5;
    // A little margin, so the framed object does not touch the edges.
    camera.distance = (1.15 * radius / (FOV_Y_DEGREES * 0.5).to_radians().sin()).clamp(1.0, 400.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_is_proportional_to_distance_and_the_same_however_the_wheel_reports_it() {
        let one_big = zoomed(10.0, 400.0);
        let many_small = (0..40).fold(10.0, |d, _| zoomed(d, 10.0));
        assert!(
            (one_big - many_small).abs() < 1e-3,
            "{one_big} vs {many_small}"
        );
        // The same scroll changes a far camera by the same ratio as a near one.
        assert!((zoomed(100.0, 50.0) / 100.0 - zoomed(2.0, 50.0) / 2.0).abs() < 1e-5);
        // Scrolling back returns; a huge scroll stays in range.
        assert!((zoomed(zoomed(10.0, 120.0), -120.0) - 10.0).abs() < 1e-4);
        assert!(zoomed(10.0, 1e6) >= 0.5);
    }

    #[test]
    fn looking_along_an_axis_puts_the_eye_on_the_other_side() {
        let mut camera = Camera::default();
        for dir in [Vec3::NEG_X, Vec3::X, Vec3::Z, Vec3::NEG_Z, Vec3::NEG_Y] {
            camera.look_along(dir);
            let seen = (camera.target - camera.eye()).normalize();
            assert!(seen.dot(dir) > 0.999, "{dir}: looks along {seen}");
        }
    }

    #[test]
    fn the_top_front_and_side_views_look_along_their_axis_without_perspective() {
        let mut camera = Camera {
            target: Vec3::new(2.0, 1.0, -3.0),
            ..Camera::default()
        };
        for (view, looking, name) in [
            (StandardView::Top, Vec3::NEG_Y, "Top"),
            (StandardView::Front, Vec3::NEG_Z, "Front"),
            (StandardView::Side, Vec3::NEG_X, "Right"),
        ] {
            camera.set_view(view);
            let seen = (camera.target - camera.eye()).normalize();
            assert!(seen.dot(looking) > 0.999, "{name}: looks along {seen}");
            assert_eq!(camera.view_name(), name);
            // Without perspective, two points one behind the other are one point.
            let vp = camera.view_projection(1.5);
            let a = vp.project_point3(camera.target);
            let b = vp.project_point3(camera.target + looking * 5.0);
            assert!(
                (a.x - b.x).abs() < 1e-3 && (a.y - b.y).abs() < 1e-3,
                "{name}"
            );
            // Something between the eye and the target is still drawn (depth in 0..1).
            let near = vp.project_point3(camera.eye() + looking * 0.01);
            assert!((0.0..=1.0).contains(&near.z), "{name}: {near}");
        }
        // From above, north (-z) is up on screen.
        camera.set_view(StandardView::Top);
        let vp = camera.view_projection(1.5);
        let north = vp.project_point3(camera.target + Vec3::NEG_Z);
        assert!(north.y > 0.05 && north.x.abs() < 1e-3, "{north}");
        // Positive control: perspective makes the farther point closer to the middle.
        camera.set_view(StandardView::Perspective);
        assert_eq!(camera.view_name(), "Perspective");
        let vp = camera.view_projection(1.5);
        let side = Vec3::X * 3.0;
        let near = vp.project_point3(camera.target + side);
        let far = vp.project_point3(camera.target + side - (camera.eye() - camera.target));
        assert!(far.x.abs() < near.x.abs());
    }

    #[test]
    fn depth_is_reversed_nearer_is_larger() {
        let camera = Camera::default();
        let vp = camera.view_projection(1.5);
        let depth = |p: Vec3| {
            let c = vp * p.extend(1.0);
            c.z / c.w
        };
        let toward = (camera.eye() - camera.target).normalize();
        assert!(depth(camera.target + toward) > depth(camera.target));
        assert!(depth(camera.target) > depth(camera.target - toward * 100.0));
        assert!(depth(camera.target) > 0.0 && depth(camera.target) < 1.0);
    }
}
