//! The transform handle of the primary selection: arrows to move, rings to rotate,
//! boxes to scale (W, E, R); dragging an axis changes the whole selection, one undo
//! step per drag, snapping with Ctrl.

use egui::{Color32, Pos2, Rect, Stroke};
use glam::{Affine3A, Mat4, Vec3};
use kiln_core::schema::json_f32s;
use serde_json::Value;

use super::{ViewportState, project};
use crate::editor::actions::Action;
use crate::editor::model::Editor;
use crate::editor::settings::Settings;

/// Draws the handle and turns drags of its axes into edits.
#[allow(clippy::too_many_arguments)]
pub(super) fn show(
    ui: &egui::Ui,
    response: &egui::Response,
    painter: &egui::Painter,
    editor: &Editor,
    state: &mut ViewportState,
    camera_distance: f32,
    vp: &Mat4,
    rect: Rect,
    settings: &Settings,
    actions: &mut Vec<Action>,
) {
    // The handle of the primary selection: arrows to move, rings to rotate, boxes to
    // scale (W, E, R).
    let tool = state.tool;
    let handle = editor
        .selection()
        .first()
        .and_then(|id| Some((id.clone(), editor.world_pose(id)?)));
    let mut handle_hit = None;
    if let Some((_, pose)) = &handle {
        let origin = Vec3::from(pose.translation);
        let len = camera_distance * 0.12;
        if let Some((o, _)) = project(vp, rect, origin) {
            for (axis, (dir, color)) in [
                (Vec3::X, Color32::from_rgb(230, 70, 70)),
                (Vec3::Y, Color32::from_rgb(90, 200, 90)),
                (Vec3::Z, Color32::from_rgb(80, 130, 240)),
            ]
            .into_iter()
            .enumerate()
            {
                if let Some((tip, _)) = project(vp, rect, origin + dir * len) {
                    match tool {
                        Tool::Move => painter.arrow(o, tip - o, Stroke::new(3.0, color)),
                        Tool::Rotate => {
                            painter.line_segment([o, tip], Stroke::new(2.0, color));
                            painter.circle_stroke(tip, 7.0, Stroke::new(3.0, color));
                        }
                        Tool::Scale => {
                            painter.line_segment([o, tip], Stroke::new(3.0, color));
                            painter.rect_filled(
                                Rect::from_center_size(tip, egui::vec2(11.0, 11.0)),
                                1.0,
                                color,
                            );
                        }
                    }
                    if let Some(p) = response.interact_pointer_pos().or(response.hover_pos())
                        && distance_to_segment(p, o, tip) < 8.0
                    {
                        handle_hit = Some((axis, (tip - o) / len));
                    }
                }
            }
        }
    }

    // Dragging a handle axis changes the whole selection (one undo step per drag).
    if response.drag_started_by(egui::PointerButton::Primary)
        && let (Some((axis, _)), Some(_)) = (handle_hit, &handle)
    {
        state.dragging_axis = Some(axis);
        state.drag_amount = 0.0;
        // Where each selected entity or part started (its position, rotation and
        // scale fields, in its parent's space) and that space.
        state.drag_starts = editor
            .selection()
            .iter()
            .filter(|id| editor.world_pose(id).is_some() && !below_selection(editor, id))
            .map(|id| {
                let parent = editor
                    .preview_state()
                    .parent_world_pose(id)
                    .unwrap_or(Affine3A::IDENTITY);
                let start = [
                    authored_vec3(editor, id, "position", Vec3::ZERO),
                    authored_vec3(editor, id, "rotation", Vec3::ZERO),
                    authored_vec3(editor, id, "scale", Vec3::ONE),
                ];
                (id.clone(), start, parent)
            })
            .collect();
    }
    if let (Some(axis), Some((_, pose))) = (state.dragging_axis, &handle) {
        if response.dragged() {
            let len = camera_distance * 0.12;
            let origin = Vec3::from(pose.translation);
            let dir = [Vec3::X, Vec3::Y, Vec3::Z][axis];
            if let (Some((o, _)), Some((tip, _))) = (
                project(vp, rect, origin),
                project(vp, rect, origin + dir * len),
            ) {
                let screen = tip - o;
                let per_metre = screen.length() / len;
                if per_metre > 1e-3 {
                    state.drag_amount += response.drag_delta().dot(screen.normalized()) / per_metre;
                }
            }
            // Hold Ctrl to snap to the steps in the settings.
            let snap = ui.input(|i| i.modifiers.command);
            let (field, values) = handle_values(
                &HandleDrag {
                    tool,
                    axis,
                    amount: state.drag_amount,
                    handle_length: len,
                    snap: snap.then_some(settings),
                },
                &state.drag_starts,
            );
            actions.push(Action::SetFieldEach {
                component: "transform".into(),
                field: field.into(),
                values,
                continuing: true,
            });
        }
        if response.drag_stopped() {
            state.dragging_axis = None;
            state.drag_starts.clear();
            actions.push(Action::EndGesture);
        }
    }
}

/// Whether an ancestor of `id` is selected too (it moves with that ancestor, and
/// must not move twice).
fn below_selection(editor: &Editor, id: &str) -> bool {
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
fn authored_vec3(editor: &Editor, id: &str, field: &str, default: Vec3) -> Vec3 {
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

/// One frame of a handle drag.
pub struct HandleDrag<'a> {
    /// What the handle does.
    pub tool: Tool,
    /// 0, 1, 2 for x, y, z.
    pub axis: usize,
    /// How far the pointer went along the axis, in metres.
    pub amount: f32,
    /// The handle's length on screen, in metres (scaling by one length doubles).
    pub handle_length: f32,
    /// The snapping steps, when Ctrl is held.
    pub snap: Option<&'a Settings>,
}

/// The transform field a handle drag sets and each dragged entity's new value, from
/// where each one started (position, rotation, scale) and its parent's world pose.
/// Moving is along the world axis; rotating (90 degrees per metre) and scaling are
/// about the entity's own axis.
pub fn handle_values(
    drag: &HandleDrag,
    starts: &[(String, [Vec3; 3], Affine3A)],
) -> (&'static str, Vec<(String, Value)>) {
    let snapped = |v: f32, step: Option<f32>| match step {
        Some(step) if step > 0.0 => (v / step).round() * step,
        _ => v,
    };
    let (axis, amount) = (drag.axis, drag.amount);
    let dir = [Vec3::X, Vec3::Y, Vec3::Z][axis];
    let field = match drag.tool {
        Tool::Move => "position",
        Tool::Rotate => "rotation",
        Tool::Scale => "scale",
    };
    let values = starts
        .iter()
        .map(|(id, start, parent)| {
            let value = match drag.tool {
                Tool::Move => {
                    // The world axis, expressed in the parent's frame.
                    let local_delta = parent.inverse().transform_vector3(dir * amount);
                    let step = drag.snap.map(|s| s.snap_move);
                    rounded((start[0] + local_delta).map(|v| snapped(v, step)), 1000.0)
                }
                Tool::Rotate => {
                    let mut r = start[1];
                    r[axis] = snapped(r[axis] + amount * 90.0, drag.snap.map(|s| s.snap_rotate));
                    rounded(r, 100.0)
                }
                Tool::Scale => {
                    let mut sc = start[2];
                    let factor = (1.0 + amount / drag.handle_length.max(1e-3)).max(0.01);
                    sc[axis] = snapped(sc[axis] * factor, drag.snap.map(|s| s.snap_scale));
                    rounded(sc, 1000.0)
                }
            };
            (id.clone(), value)
        })
        .collect();
    (field, values)
}

/// A vector as JSON, rounded to `1 / scale` (no float noise in saved files).
fn rounded(v: Vec3, scale: f32) -> Value {
    json_f32s(&((v * scale).round() / scale).to_array())
}

/// What dragging the handle does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tool {
    /// Move along an axis (W).
    #[default]
    Move,
    /// Rotate about an axis (E).
    Rotate,
    /// Scale along an axis (R).
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

#[cfg(test)]
mod click_tests {
    use super::*;

    fn starts() -> Vec<(String, [Vec3; 3], Affine3A)> {
        vec![(
            "a".into(),
            [
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 10.0, 0.0),
                Vec3::ONE,
            ],
            Affine3A::from_translation(Vec3::new(5.0, 0.0, 0.0)),
        )]
    }

    fn drag(tool: Tool, amount: f32, snap: Option<&Settings>) -> Vec<f64> {
        let (_, values) = handle_values(
            &HandleDrag {
                tool,
                axis: 1,
                amount,
                handle_length: 2.0,
                snap,
            },
            &starts(),
        );
        values[0]
            .1
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    }

    #[test]
    fn the_handles_move_rotate_and_scale_along_their_axis_and_snap_to_the_steps_set() {
        let settings = Settings::default();
        assert_eq!(drag(Tool::Move, 0.3, None), [1.0, 0.3, 0.0]);
        assert_eq!(drag(Tool::Move, 0.3, Some(&settings)), [1.0, 0.5, 0.0]);
        // 0.1 m is 9 degrees; with a 15 degree step, 10 + 9 snaps to 15.
        assert_eq!(drag(Tool::Rotate, 0.1, None), [0.0, 19.0, 0.0]);
        assert_eq!(drag(Tool::Rotate, 0.1, Some(&settings)), [0.0, 15.0, 0.0]);
        // A handle's length doubles; half of it is 1.5 times.
        assert_eq!(drag(Tool::Scale, 1.0, None), [1.0, 1.5, 1.0]);
        assert_eq!(drag(Tool::Scale, 0.27, Some(&settings)), [1.0, 1.1, 1.0]);
        // Scaling never flips or collapses to zero.
        assert!(drag(Tool::Scale, -10.0, None)[1] > 0.0);
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
