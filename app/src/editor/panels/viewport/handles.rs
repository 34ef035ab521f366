//! The transform handle of the selection, drawn and dragged: arrows, plane squares
//! and a middle square to move (W); a ring per axis and a view ring to rotate (E);
//! boxes per axis and a middle box for uniform scale (R). In world or local space
//! (X), about each pivot or the selection's centre, snapping as the viewport's
//! toolbar says (Ctrl inverts it during a drag). One undo step per drag. The
//! arithmetic is in [`super::handle_math`].

use egui::{Color32, Pos2, Rect, Shape, Stroke};
use glam::{Affine3A, Mat4, Vec3};
use serde_json::Value;

use super::handle_math::{
    DragStart, Grip, HandleFrame, Motion, Snap, along_axis, drag_values, on_plane, ring_angle,
    ring_degrees, screen_angle, turned,
};
use super::{ViewportState, placing, pointer_ndc, project};
use crate::editor::actions::Action;
use crate::editor::model::Editor;
use crate::editor::settings::Settings;
use crate::render::picking::Ray;

/// A drag of the handle under way.
#[derive(Debug, Clone)]
pub struct HandleDrag {
    grip: Grip,
    frame: HandleFrame,
    starts: Vec<DragStart>,
    start_pointer: Pos2,
    anchor: Anchor,
    /// From the bottom of the selection's box to the pivot, for sliding along
    /// surfaces (Shift and the middle square).
    rest_to_pivot: Vec3,
}

/// Where the drag started, as the grip measures it.
#[derive(Debug, Clone, Copy)]
enum Anchor {
    Along(f32),
    On(Vec3),
    /// Round a ring: the angle last measured and the turn so far; measured in the
    /// ring's plane (`in_plane`), or on screen for the view ring and a ring seen
    /// edge-on.
    Angle {
        last: f32,
        total: f32,
        in_plane: bool,
    },
    Screen,
}

/// What the view needs of the camera for the handle.
pub(super) struct HandleView {
    pub vp: Mat4,
    pub rect: Rect,
    pub eye: Vec3,
    /// The handle's length in metres (a fixed size on screen).
    pub length: f32,
}

impl HandleView {
    fn ray(&self, p: Pos2) -> Option<Ray> {
        Ray::through(self.vp, pointer_ndc(self.rect, p))
    }
}

const AXIS_COLOURS: [Color32; 3] = [
    Color32::from_rgb(230, 70, 70),
    Color32::from_rgb(90, 200, 90),
    Color32::from_rgb(80, 130, 240),
];
const HOVERED: Color32 = Color32::from_rgb(255, 220, 60);

/// The handle's place and axes for the selection now.
fn frame_of(editor: &Editor, settings: &Settings, tool: Tool) -> Option<HandleFrame> {
    let primary = editor.world_pose(editor.selection().first()?)?;
    let (_, rotation, position) = primary.to_scale_rotation_translation();
    let movable: Vec<Vec3> = movable(editor)
        .iter()
        .filter_map(|id| editor.world_pose(id))
        .map(|p| p.translation.into())
        .collect();
    let origin = if settings.about_centre && movable.len() > 1 {
        movable.iter().sum::<Vec3>() / movable.len() as f32
    } else {
        position
    };
    // Scaling is along the entity's own axes whatever the space.
    let local = settings.local_space || tool == Tool::Scale;
    let axes = if local {
        [Vec3::X, Vec3::Y, Vec3::Z].map(|a| (rotation * a).normalize_or(a))
    } else {
        [Vec3::X, Vec3::Y, Vec3::Z]
    };
    Some(HandleFrame {
        origin,
        axes,
        local,
    })
}

/// The selected entities a drag changes: not those whose ancestor is selected too
/// (they move with it and must not move twice).
fn movable(editor: &Editor) -> Vec<String> {
    editor
        .selection()
        .iter()
        .filter(|id| editor.world_pose(id).is_some() && !below_selection(editor, id))
        .cloned()
        .collect()
}

/// The grips of `tool`, most specific first (a click on the middle is the
/// middle's, not an axis's that passes through it).
fn grips(tool: Tool) -> Vec<Grip> {
    match tool {
        Tool::Move => vec![
            Grip::Centre,
            Grip::Plane(0),
            Grip::Plane(1),
            Grip::Plane(2),
            Grip::Axis(0),
            Grip::Axis(1),
            Grip::Axis(2),
        ],
        Tool::Rotate => vec![Grip::Ring(0), Grip::Ring(1), Grip::Ring(2), Grip::ViewRing],
        Tool::Scale => vec![Grip::Centre, Grip::Axis(0), Grip::Axis(1), Grip::Axis(2)],
    }
}

/// What a grip looks like on screen.
enum Drawn {
    Segment(Pos2, Pos2),
    Polygon(Vec<Pos2>),
    Ring(Vec<Pos2>),
    Circle(Pos2, f32),
    Dot(Pos2),
}

/// A grip's shape on screen; `None` when it is behind the camera.
fn drawn(grip: Grip, frame: &HandleFrame, view: &HandleView) -> Option<Drawn> {
    let at = |p: Vec3| project(&view.vp, view.rect, p).map(|(s, _)| s);
    let o = frame.origin;
    let len = view.length;
    Some(match grip {
        Grip::Axis(k) => Drawn::Segment(at(o)?, at(o + frame.axes[k] * len)?),
        Grip::Plane(k) => {
            let (a, b) = (frame.axes[(k + 1) % 3], frame.axes[(k + 2) % 3]);
            let (near, far) = (0.2 * len, 0.4 * len);
            Drawn::Polygon(vec![
                at(o + a * near + b * near)?,
                at(o + a * far + b * near)?,
                at(o + a * far + b * far)?,
                at(o + a * near + b * far)?,
            ])
        }
        Grip::Centre => Drawn::Dot(at(o)?),
        Grip::Ring(k) => {
            let (a, b) = (frame.axes[(k + 1) % 3], frame.axes[(k + 2) % 3]);
            let points: Option<Vec<Pos2>> = (0..=64)
                .map(|i| {
                    let t = i as f32 / 64.0 * std::f32::consts::TAU;
                    at(o + (a * t.cos() + b * t.sin()) * len)
                })
                .collect();
            Drawn::Ring(points?)
        }
        Grip::ViewRing => {
            let centre = at(o)?;
            let toward = (view.eye - o).normalize_or(Vec3::Z);
            let side = toward.cross(Vec3::Y).try_normalize().unwrap_or(Vec3::X);
            let edge = at(o + side * len)?;
            Drawn::Circle(centre, centre.distance(edge) * 1.2)
        }
    })
}

/// How far `p` is from a grip's shape, in screen points (0 inside a polygon).
fn distance(p: Pos2, shape: &Drawn) -> f32 {
    match shape {
        Drawn::Segment(a, b) => distance_to_segment(p, *a, *b),
        Drawn::Polygon(points) => {
            if inside(p, points) {
                0.0
            } else {
                f32::INFINITY
            }
        }
        Drawn::Ring(points) => points
            .windows(2)
            .map(|w| distance_to_segment(p, w[0], w[1]))
            .fold(f32::INFINITY, f32::min),
        Drawn::Circle(c, r) => (p.distance(*c) - r).abs(),
        Drawn::Dot(c) => p.distance(*c) - 4.0,
    }
}

/// The grip under the pointer at `p`: the first within reach in `grips` order, or
/// for rings, the nearest.
pub(super) fn grip_at(p: Pos2, tool: Tool, frame: &HandleFrame, view: &HandleView) -> Option<Grip> {
    let reach = 8.0;
    let mut best: Option<(Grip, f32)> = None;
    for grip in grips(tool) {
        let Some(shape) = drawn(grip, frame, view) else {
            continue;
        };
        let d = distance(p, &shape);
        if d > reach {
            continue;
        }
        if tool != Tool::Rotate {
            return Some(grip);
        }
        if best.is_none_or(|(_, b)| d < b) {
            best = Some((grip, d));
        }
    }
    best.map(|(g, _)| g)
}

fn paint(painter: &egui::Painter, grip: Grip, shape: &Drawn, tool: Tool, lit: bool) {
    let colour = match grip {
        Grip::Axis(k) | Grip::Plane(k) | Grip::Ring(k) => AXIS_COLOURS[k],
        Grip::Centre => Color32::WHITE,
        Grip::ViewRing => Color32::from_gray(200),
    };
    let colour = if lit { HOVERED } else { colour };
    match shape {
        Drawn::Segment(a, b) => match tool {
            Tool::Move => painter.arrow(*a, *b - *a, Stroke::new(3.0, colour)),
            _ => {
                painter.line_segment([*a, *b], Stroke::new(3.0, colour));
                painter.rect_filled(
                    Rect::from_center_size(*b, egui::vec2(11.0, 11.0)),
                    1.0,
                    colour,
                );
            }
        },
        Drawn::Polygon(points) => {
            painter.add(Shape::convex_polygon(
                points.clone(),
                colour.gamma_multiply(if lit { 0.7 } else { 0.35 }),
                Stroke::new(1.0, colour),
            ));
        }
        Drawn::Ring(points) => {
            painter.add(Shape::line(
                points.clone(),
                Stroke::new(if lit { 3.5 } else { 2.5 }, colour),
            ));
        }
        Drawn::Circle(c, r) => {
            painter.circle_stroke(*c, *r, Stroke::new(if lit { 3.0 } else { 1.5 }, colour));
        }
        Drawn::Dot(c) => {
            let size = if tool == Tool::Scale { 12.0 } else { 10.0 };
            painter.rect_stroke(
                Rect::from_center_size(*c, egui::vec2(size, size)),
                1.0,
                Stroke::new(2.0, colour),
                egui::StrokeKind::Middle,
            );
        }
    }
}

/// Draws the handle and turns drags of its grips into edits.
#[allow(clippy::too_many_arguments)]
pub(super) fn show(
    ui: &egui::Ui,
    response: &egui::Response,
    painter: &egui::Painter,
    editor: &Editor,
    state: &mut ViewportState,
    view: &HandleView,
    settings: &Settings,
    actions: &mut Vec<Action>,
) {
    let tool = state.tool;
    let frame = match &state.drag {
        Some(drag) => Some(drag.frame),
        None => frame_of(editor, settings, tool),
    };
    let Some(frame) = frame else {
        state.drag = None;
        return;
    };
    let pointer = response.interact_pointer_pos().or(response.hover_pos());
    let hovered = match &state.drag {
        Some(drag) => Some(drag.grip),
        None => pointer.and_then(|p| grip_at(p, tool, &frame, view)),
    };
    state.hovered_grip = hovered;
    // The rings last, so that the one grabbed is drawn over the others.
    for grip in grips(tool).into_iter().rev() {
        if let Some(shape) = drawn(grip, &frame, view) {
            paint(painter, grip, &shape, tool, hovered == Some(grip));
        }
    }

    // A drag is noticed once the pointer has moved a few points: what it grabbed
    // is what was under the button when it went down (a quick drag off a small
    // square still takes the square).
    if response.drag_started_by(egui::PointerButton::Primary)
        && let Some(p) = ui.input(|i| i.pointer.press_origin()).or(pointer)
        && let Some(grip) = grip_at(p, tool, &frame, view)
        && let Some(drag) = begin(editor, state, grip, frame, view, p)
    {
        state.drag = Some(drag);
    }
    let Some(drag) = state.drag.as_mut() else {
        return;
    };
    if response.dragged()
        && let Some(p) = pointer
    {
        let slide =
            ui.input(|i| i.modifiers.shift) && drag.grip == Grip::Centre && tool == Tool::Move;
        let motion = if slide {
            let skip = editor.preview_state().drawn_selected(editor.selection());
            let ray = view.ray(p);
            let rest = drag.rest_to_pivot;
            let found = ray.and_then(|ray| placing::surface(state, editor, ray, &skip));
            let grid = settings.snap_move_on != ui.input(|i| i.modifiers.command);
            found.map(|hit| {
                let hit = if grid {
                    crate::render::placement::on_grid(hit, settings.snap_move)
                } else {
                    hit
                };
                Motion::Translate(hit + rest - frame.origin)
            })
        } else {
            motion(drag, tool, view, p)
        };
        let Some(drag) = state.drag.as_ref() else {
            return;
        };
        if let Some(motion) = motion {
            let invert = ui.input(|i| i.modifiers.command);
            let on = |on: bool, step: f32| (on != invert).then_some(step);
            let snap = Snap {
                translate: if slide {
                    None
                } else {
                    on(settings.snap_move_on, settings.snap_move)
                },
                rotate: on(settings.snap_rotate_on, settings.snap_rotate),
                scale: on(settings.snap_scale_on, settings.snap_scale),
            };
            let values = drag_values(
                &frame,
                drag.grip,
                motion,
                &drag.starts,
                snap,
                settings.about_centre,
            );
            actions.push(Action::SetFieldsEach {
                component: "transform".into(),
                values: values
                    .into_iter()
                    .map(|(id, field, value)| (id, field.to_owned(), value))
                    .collect(),
                continuing: true,
            });
        }
    }
    if response.drag_stopped() {
        state.drag = None;
        actions.push(Action::EndGesture);
    }
}

/// Starts a drag of `grip`: where each dragged entity is, and where the pointer is
/// as the grip measures it.
fn begin(
    editor: &Editor,
    state: &mut ViewportState,
    grip: Grip,
    frame: HandleFrame,
    view: &HandleView,
    p: Pos2,
) -> Option<HandleDrag> {
    let ray = view.ray(p)?;
    let toward = (view.eye - frame.origin).normalize_or(Vec3::Z);
    let anchor = match (state.tool, grip) {
        (Tool::Move | Tool::Scale, Grip::Axis(k)) => {
            Anchor::Along(along_axis(frame.origin, frame.axes[k], ray)?)
        }
        (Tool::Move, Grip::Plane(k)) => Anchor::On(on_plane(frame.origin, frame.axes[k], ray)?),
        (Tool::Move, Grip::Centre) => Anchor::On(on_plane(frame.origin, toward, ray)?),
        (_, Grip::Ring(_) | Grip::ViewRing) => {
            let in_plane = match grip {
                Grip::Ring(k) => frame.axes[k].dot(toward).abs() > 0.2,
                _ => false,
            };
            Anchor::Angle {
                last: pointer_angle(grip, &frame, view, p, in_plane)?,
                total: 0.0,
                in_plane,
            }
        }
        _ => Anchor::Screen,
    };
    let starts: Vec<DragStart> = movable(editor)
        .into_iter()
        .map(|id| {
            let parent = editor
                .preview_state()
                .parent_world_pose(&id)
                .unwrap_or(Affine3A::IDENTITY);
            let fields = [
                authored_vec3(editor, &id, "position", Vec3::ZERO),
                authored_vec3(editor, &id, "rotation", Vec3::ZERO),
                authored_vec3(editor, &id, "scale", Vec3::ONE),
            ];
            DragStart { id, fields, parent }
        })
        .collect();
    let rest_to_pivot = placing::selection_bounds(state, editor).map_or(Vec3::ZERO, |(lo, hi)| {
        let bottom = Vec3::new((lo.x + hi.x) * 0.5, lo.y, (lo.z + hi.z) * 0.5);
        frame.origin - bottom
    });
    Some(HandleDrag {
        grip,
        frame,
        starts,
        start_pointer: p,
        anchor,
        rest_to_pivot,
    })
}

/// What the drag does with the pointer at `p`; `None` for a frame where it cannot
/// be measured (an axis seen end-on).
fn motion(drag: &mut HandleDrag, tool: Tool, view: &HandleView, p: Pos2) -> Option<Motion> {
    let frame = drag.frame;
    let ray = view.ray(p)?;
    let toward = (view.eye - frame.origin).normalize_or(Vec3::Z);
    Some(match (&mut drag.anchor, drag.grip) {
        (Anchor::Along(s0), Grip::Axis(k)) => {
            let s = along_axis(frame.origin, frame.axes[k], ray)?;
            if tool == Tool::Scale {
                Motion::Scale {
                    axis: Some(k),
                    factor: 1.0 + (s - *s0) / view.length.max(1e-3),
                }
            } else {
                Motion::Translate(frame.axes[k] * (s - *s0))
            }
        }
        (Anchor::On(h0), Grip::Plane(k)) => {
            Motion::Translate(on_plane(frame.origin, frame.axes[k], ray)? - *h0)
        }
        (Anchor::On(h0), Grip::Centre) => {
            Motion::Translate(on_plane(frame.origin, toward, ray)? - *h0)
        }
        (
            Anchor::Angle {
                last,
                total,
                in_plane,
            },
            grip,
        ) => {
            let now = pointer_angle(grip, &frame, view, p, *in_plane)?;
            *total += turned(*last, now);
            *last = now;
            let axis = match grip {
                Grip::Ring(k) => Some(k),
                _ => None,
            };
            let degrees = if *in_plane {
                total.to_degrees()
            } else {
                ring_degrees(*total, axis.map_or(toward, |k| frame.axes[k]), toward)
            };
            Motion::Rotate {
                axis,
                view: toward,
                degrees,
            }
        }
        (Anchor::Screen, _) => {
            let d = p - drag.start_pointer;
            Motion::Scale {
                axis: None,
                factor: 1.0 + (d.x - d.y) / 150.0,
            }
        }
        _ => return None,
    })
}

/// The pointer's angle round a ring: in the ring's plane where it faces the
/// camera enough, else on screen around the handle's middle.
fn pointer_angle(
    grip: Grip,
    frame: &HandleFrame,
    view: &HandleView,
    p: Pos2,
    in_plane: bool,
) -> Option<f32> {
    if let (true, Grip::Ring(k)) = (in_plane, grip) {
        let hit = on_plane(frame.origin, frame.axes[k], view.ray(p)?)?;
        return Some(ring_angle(hit - frame.origin, k, &frame.axes));
    }
    let (o, _) = project(&view.vp, view.rect, frame.origin)?;
    Some(screen_angle(p.x - o.x, p.y - o.y))
}

/// Whether an ancestor of `id` is selected too (it moves with that ancestor, and
/// must not move twice).
pub(super) fn below_selection(editor: &Editor, id: &str) -> bool {
    let Some(level) = editor.preview().level.as_ref() else {
        return false;
    };
    let transforms = &editor.preview().world.transforms;
    let mut node = level.entity(id).and_then(|e| transforms.lookup(e));
    while let Some(parent) = node.and_then(|n| transforms.parent(n)) {
        let parent_id = level.authoring_id(transforms.entity(parent));
        if parent_id.is_some_and(|p| editor.selection().iter().any(|s| s == p)) {
            return true;
        }
        node = Some(parent);
    }
    false
}

/// A transform field (position, rotation, scale) as an entity or part has it in its
/// file (for a part, with the open file's overrides), in its parent's space.
pub(super) fn authored_vec3(editor: &Editor, id: &str, field: &str, default: Vec3) -> Vec3 {
    let part;
    let entity = match editor.entity(id) {
        Some(e) => e,
        None => match editor.level().and_then(|l| l.part(id)) {
            Some(p) => {
                part = p;
                &part.entity
            }
            None => return default,
        },
    };
    let p = entity
        .components
        .get("transform")
        .and_then(|t| t.get(field))
        .and_then(Value::as_array);
    let at = |k: usize| {
        p.and_then(|a| a.get(k))
            .and_then(Value::as_f64)
            .map_or(default[k], |v| v as f32)
    };
    Vec3::new(at(0), at(1), at(2))
}

/// What dragging the handle does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tool {
    /// Move along an axis, across a plane or in the view (W).
    #[default]
    Move,
    /// Rotate about an axis or the view (E).
    Rotate,
    /// Scale along an axis or uniformly (R).
    Scale,
}

/// What a click on `hit` (the runtime entity's path, `tree_01/trunk` for a prefab
/// part) selects: the instance in the open file first, as in Unity; the part when
/// its instance (or a part of it) is already selected, or with Alt.
pub fn click_target(selection: &[String], hit: &str, alt: bool) -> String {
    let Some((instance, _)) = crate::editor::document::split_part(hit) else {
        return hit.to_owned();
    };
    let inside = |s: &String| s == instance || s.starts_with(&format!("{instance}/"));
    if alt || selection.iter().any(inside) {
        hit.to_owned()
    } else {
        instance.to_owned()
    }
}

fn distance_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_sq().max(1e-6)).clamp(0.0, 1.0);
    (a + ab * t).distance(p)
}

/// Whether `p` is inside the convex polygon `points` (either winding).
fn inside(p: Pos2, points: &[Pos2]) -> bool {
    let mut sign = 0.0f32;
    for (i, a) in points.iter().enumerate() {
        let b = points[(i + 1) % points.len()];
        let cross = (b - *a).x * (p - *a).y - (b - *a).y * (p - *a).x;
        if cross.abs() < 1e-6 {
            continue;
        }
        if sign == 0.0 {
            sign = cross.signum();
        } else if cross.signum() != sign {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::panels::viewport::Camera;

    fn view() -> (HandleView, Camera) {
        let camera = Camera::default();
        let rect = Rect::from_min_size(Pos2::ZERO, egui::vec2(800.0, 600.0));
        let vp = camera.view_projection(800.0 / 600.0);
        let view = HandleView {
            vp,
            rect,
            eye: camera.eye(),
            length: camera.distance * 0.12,
        };
        (view, camera)
    }

    fn world_frame() -> HandleFrame {
        HandleFrame {
            origin: Vec3::ZERO,
            axes: [Vec3::X, Vec3::Y, Vec3::Z],
            local: false,
        }
    }

    #[test]
    fn each_grip_is_found_where_it_is_drawn() {
        let (view, _) = view();
        let frame = world_frame();
        let at = |p: Vec3| project(&view.vp, view.rect, p).unwrap().0;
        let len = view.length;
        // Positive control: far from the handle, nothing.
        assert_eq!(
            grip_at(Pos2::new(5.0, 5.0), Tool::Move, &frame, &view),
            None
        );
        assert_eq!(
            grip_at(at(Vec3::ZERO), Tool::Move, &frame, &view),
            Some(Grip::Centre)
        );
        assert_eq!(
            grip_at(at(Vec3::X * len * 0.9), Tool::Move, &frame, &view),
            Some(Grip::Axis(0))
        );
        // The square between x and z is the plane across y.
        assert_eq!(
            grip_at(
                at(Vec3::new(0.3, 0.0, 0.3) * len),
                Tool::Move,
                &frame,
                &view
            ),
            Some(Grip::Plane(1))
        );
        // The ring about y passes between +x and -z at the handle's length.
        let on_y_ring = at(Vec3::new(1.0, 0.0, -1.0).normalize() * len);
        assert_eq!(
            grip_at(on_y_ring, Tool::Rotate, &frame, &view),
            Some(Grip::Ring(1))
        );
        assert_eq!(
            grip_at(at(Vec3::ZERO), Tool::Scale, &frame, &view),
            Some(Grip::Centre)
        );
    }

    #[test]
    fn a_click_on_a_part_selects_the_instance_first_then_the_part() {
        let none: Vec<String> = Vec::new();
        assert_eq!(click_target(&none, "tree_01/trunk", false), "tree_01");
        assert_eq!(
            click_target(&["tree_01".into()], "tree_01/trunk", false),
            "tree_01/trunk"
        );
        assert_eq!(
            click_target(&["tree_02".into()], "tree_01/trunk", false),
            "tree_01"
        );
        assert_eq!(click_target(&none, "tree_01/trunk", true), "tree_01/trunk");
        assert_eq!(click_target(&none, "boulder", false), "boulder");
    }
}
