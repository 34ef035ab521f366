//! The viewport: draws the preview's runtime world with glam on egui's painter.
//!
//! Each mesh component is drawn as its primitive shape (from its `.mesh` resource) in
//! its material's colour, faces shaded by a fixed light and sorted back to front. Drag
//! with the left or right button to orbit, the middle button (or Shift + drag) to pan,
//! scroll to zoom; click to select; drag an axis of the handle to move, rotate or
//! scale the selection (W, E, R; hold Ctrl to snap).

use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, pos2};
use glam::{Affine3A, Mat4, Vec3, Vec4};
use kiln_core::schema::json_f32s;
use serde_json::Value;

use super::PanelState;
use crate::editor::actions::{Action, UiCommand};
use crate::editor::model::Editor;
use crate::editor::model::prefab_parts;
use crate::editor::settings::Settings;

/// An orbiting camera.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// The point orbited.
    pub target: Vec3,
    /// Angle around the vertical axis, radians.
    pub yaw: f32,
    /// Angle above the ground, radians.
    pub pitch: f32,
    /// Distance from the target.
    pub distance: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Camera {
            target: Vec3::ZERO,
            yaw: 0.7,
            pitch: 0.5,
            distance: 22.0,
        }
    }
}

impl Camera {
    fn eye(&self, top: bool) -> Vec3 {
        let pitch = if top { 1.5697 } else { self.pitch };
        self.target
            + self.distance
                * Vec3::new(
                    pitch.cos() * self.yaw.sin(),
                    pitch.sin(),
                    pitch.cos() * self.yaw.cos(),
                )
    }

    /// World -> clip space for a viewport of the given aspect ratio.
    pub fn view_projection(&self, aspect: f32, top: bool) -> Mat4 {
        use glam::camera::rh::{proj::opengl, view};
        let view = view::look_at_mat4(
            self.eye(top),
            self.target,
            if top { Vec3::NEG_Z } else { Vec3::Y },
        );
        let proj = if top {
            let h = self.distance * 0.5;
            opengl::orthographic(-h * aspect, h * aspect, -h, h, 0.1, 1000.0)
        } else {
            opengl::perspective(50f32.to_radians(), aspect, 0.1, 1000.0)
        };
        proj * view
    }
}

/// Gesture state of the viewport, and buffers kept between frames so that a frame
/// with a hundred thousand entities does not regrow them.
#[derive(Debug, Default)]
pub struct ViewportState {
    points: Vec<Pos2>,
    faces: Vec<Face>,
    owners: Vec<kiln_core::Entity>,
    /// The handle axis being dragged.
    dragging_axis: Option<usize>,
    /// Each dragged entity's position, rotation and scale fields when the drag
    /// started, and its parent's world pose.
    drag_starts: Vec<(String, [Vec3; 3], Affine3A)>,
    /// What dragging the handle does (W, E, R).
    pub tool: Tool,
    /// Accumulated drag along the axis, in metres.
    drag_amount: f32,
    /// Frame the selection on the next frame (asked by F or by opening a level).
    pub frame_request: bool,
}

/// A projected face: its points are `points[start..start + len]` of the frame's
/// shared buffer (one allocation per frame, not one per face).
#[derive(Debug)]
struct Face {
    start: u32,
    len: u32,
    depth: f32,
    color: Color32,
    entity: u32,
}

/// Entities smaller than this on screen (radius in points) are drawn as one dot.
const DOT_RADIUS: f32 = 2.5;

/// Unit geometry of each primitive, as faces of local points in a 1 m cube.
fn shape_faces(shape: usize) -> Vec<Vec<Vec3>> {
    let ring = |n: usize, y: f32, r: f32| -> Vec<Vec3> {
        (0..n)
            .map(|k| {
                let a = k as f32 / n as f32 * std::f32::consts::TAU;
                Vec3::new(a.cos() * r, y, a.sin() * r)
            })
            .collect()
    };
    match kiln_core::registry::MESH_SHAPES
        .get(shape)
        .copied()
        .unwrap_or("cube")
    {
        "plane" => {
            // Tiles rather than one big quad, so that sorting faces by depth puts the
            // ground behind what stands on it.
            let n = 10;
            let at = |i: usize| i as f32 / n as f32 - 0.5;
            let mut faces = Vec::new();
            for x in 0..n {
                for z in 0..n {
                    faces.push(vec![
                        Vec3::new(at(x), 0.0, at(z)),
                        Vec3::new(at(x + 1), 0.0, at(z)),
                        Vec3::new(at(x + 1), 0.0, at(z + 1)),
                        Vec3::new(at(x), 0.0, at(z + 1)),
                    ]);
                }
            }
            faces
        }
        "sphere" | "capsule" => {
            let (rings, segs) = (6, 10);
            let mut faces = Vec::new();
            for i in 0..rings {
                let (a0, a1) = (
                    std::f32::consts::PI * i as f32 / rings as f32,
                    std::f32::consts::PI * (i + 1) as f32 / rings as f32,
                );
                let r0 = ring(segs, 0.5 * a0.cos(), 0.5 * a0.sin());
                let r1 = ring(segs, 0.5 * a1.cos(), 0.5 * a1.sin());
                for k in 0..segs {
                    let n = (k + 1) % segs;
                    faces.push(vec![r0[k], r0[n], r1[n], r1[k]]);
                }
            }
            faces
        }
        "cylinder" | "cone" => {
            let segs = 12;
            let top_r = if shape_is(shape, "cone") { 0.0 } else { 0.5 };
            let bottom = ring(segs, -0.5, 0.5);
            let top = ring(segs, 0.5, top_r);
            let mut faces: Vec<Vec<Vec3>> = (0..segs)
                .map(|k| {
                    let n = (k + 1) % segs;
                    vec![bottom[k], bottom[n], top[n], top[k]]
                })
                .collect();
            faces.push(bottom.iter().rev().copied().collect());
            if top_r > 0.0 {
                faces.push(top);
            }
            faces
        }
        _ => {
            let c = |x: f32, y: f32, z: f32| Vec3::new(x, y, z) * 0.5;
            vec![
                vec![
                    c(-1., -1., 1.),
                    c(1., -1., 1.),
                    c(1., 1., 1.),
                    c(-1., 1., 1.),
                ],
                vec![
                    c(1., -1., -1.),
                    c(-1., -1., -1.),
                    c(-1., 1., -1.),
                    c(1., 1., -1.),
                ],
                vec![
                    c(1., -1., 1.),
                    c(1., -1., -1.),
                    c(1., 1., -1.),
                    c(1., 1., 1.),
                ],
                vec![
                    c(-1., -1., -1.),
                    c(-1., -1., 1.),
                    c(-1., 1., 1.),
                    c(-1., 1., -1.),
                ],
                vec![
                    c(-1., 1., 1.),
                    c(1., 1., 1.),
                    c(1., 1., -1.),
                    c(-1., 1., -1.),
                ],
                vec![
                    c(-1., -1., -1.),
                    c(1., -1., -1.),
                    c(1., -1., 1.),
                    c(-1., -1., 1.),
                ],
            ]
        }
    }
}

fn shape_is(shape: usize, name: &str) -> bool {
    kiln_core::registry::MESH_SHAPES.get(shape) == Some(&name)
}

/// Projects a world segment, clipped to what lies in front of the camera.
fn project_segment(vp: &Mat4, rect: Rect, a: Vec3, b: Vec3) -> Option<[Pos2; 2]> {
    const NEAR: f32 = 0.05;
    let (mut ca, mut cb) = (*vp * a.extend(1.0), *vp * b.extend(1.0));
    if ca.w < NEAR && cb.w < NEAR {
        return None;
    }
    // Move the endpoint behind the camera to where the segment crosses the near plane.
    if ca.w < NEAR {
        ca = cb + (ca - cb) * ((cb.w - NEAR) / (cb.w - ca.w));
    } else if cb.w < NEAR {
        cb = ca + (cb - ca) * ((ca.w - NEAR) / (ca.w - cb.w));
    }
    let to_screen = |c: Vec4| {
        pos2(
            rect.center().x + c.x / c.w * rect.width() * 0.5,
            rect.center().y - c.y / c.w * rect.height() * 0.5,
        )
    };
    Some([to_screen(ca), to_screen(cb)])
}

/// Projects a world point; `None` behind the camera.
fn project(vp: &Mat4, rect: Rect, p: Vec3) -> Option<(Pos2, f32)> {
    let c = *vp * Vec4::new(p.x, p.y, p.z, 1.0);
    // Points closer than the near distance project to huge, unstable coordinates; a
    // face with one is skipped rather than drawn as a sliver across the view.
    if c.w <= 0.1 {
        return None;
    }
    let ndc = c.truncate() / c.w;
    Some((
        pos2(
            rect.center().x + ndc.x * rect.width() * 0.5,
            rect.center().y - ndc.y * rect.height() * 0.5,
        ),
        ndc.z,
    ))
}

fn to_color(c: Vec4, shade: f32) -> Color32 {
    let f = |v: f32| ((v * shade).clamp(0.0, 1.0) * 255.0) as u8;
    Color32::from_rgba_unmultiplied(f(c.x), f(c.y), f(c.z), (c.w.clamp(0.0, 1.0) * 255.0) as u8)
}

/// Shows the viewport.
pub fn show(
    ui: &mut egui::Ui,
    editor: &Editor,
    state: &mut PanelState,
    settings: &Settings,
    actions: &mut Vec<Action>,
) {
    let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::from_rgb(38, 40, 46));
    let camera = &mut state.camera;
    let top = editor.top_view();

    if std::mem::take(&mut state.viewport.frame_request) {
        frame(editor, camera);
    }

    // Camera gestures (not while dragging the handle).
    if state.viewport.dragging_axis.is_none() {
        let shift = ui.input(|i| i.modifiers.shift);
        if response.dragged_by(egui::PointerButton::Middle)
            || (shift && response.dragged_by(egui::PointerButton::Primary))
        {
            let d = response.drag_delta();
            let right = Vec3::new(camera.yaw.cos(), 0.0, -camera.yaw.sin());
            let up = if top { Vec3::NEG_Z } else { Vec3::Y };
            let scale = camera.distance * 0.0015;
            camera.target += (-right * d.x + up * d.y) * scale;
        } else if response.dragged_by(egui::PointerButton::Secondary)
            || response.dragged_by(egui::PointerButton::Primary)
        {
            let d = response.drag_delta();
            camera.yaw -= d.x * 0.008;
            camera.pitch = (camera.pitch + d.y * 0.008).clamp(-1.5, 1.5);
        }
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            camera.distance = zoomed(camera.distance, scroll);
        }
    }

    let aspect = rect.width() / rect.height().max(1.0);
    let vp = camera.view_projection(aspect, top);

    if settings.show_grid {
        for i in -20..=20 {
            let f = i as f32;
            let color = if i == 0 {
                Color32::from_gray(95)
            } else {
                Color32::from_gray(60)
            };
            for (a, b) in [
                (Vec3::new(f, 0.0, -20.0), Vec3::new(f, 0.0, 20.0)),
                (Vec3::new(-20.0, 0.0, f), Vec3::new(20.0, 0.0, f)),
            ] {
                if let Some(segment) = project_segment(&vp, rect, a, b) {
                    painter.line_segment(segment, Stroke::new(1.0, color));
                }
            }
        }
    }

    // Faces of every mesh of the runtime world.
    let world = &editor.preview().world;
    let level = editor.preview().level.as_ref();
    let selected: std::collections::HashSet<kiln_core::Entity> = editor
        .selection()
        .iter()
        .filter_map(|id| level?.entity(id))
        .collect();
    let light = Vec3::new(0.4, 1.0, 0.6).normalize();
    let eye = camera.eye(top);
    let visible_area = rect.expand(40.0);
    let mut points = std::mem::take(&mut state.viewport.points);
    let mut faces = std::mem::take(&mut state.viewport.faces);
    let mut owners = std::mem::take(&mut state.viewport.owners);
    points.clear();
    faces.clear();
    owners.clear();
    let mut world_points: Vec<Vec3> = Vec::new();
    let mut shapes: std::collections::HashMap<usize, Vec<Vec<Vec3>>> =
        std::collections::HashMap::new();
    for i in 0..world.meshes.len() {
        let inst = kiln_core::Instance(i as u32);
        let mesh = world.meshes.get(inst);
        if !mesh.visible {
            continue;
        }
        let owner = world.meshes.entity(inst);
        let Some(t) = world.transforms.lookup(owner) else {
            continue;
        };
        let pose = world.transforms.world(t);
        let Some(shape) = editor.resources().meshes.get(&mesh.mesh) else {
            continue;
        };
        let color = editor
            .resources()
            .colors
            .get(&mesh.material)
            .copied()
            .unwrap_or(Vec4::new(0.7, 0.7, 0.7, 1.0));
        let model = pose * Affine3A::from_scale(shape.size.max(Vec3::splat(0.001)));
        // Cull what is off screen, and draw what is tiny as a dot, from the centre
        // and the size of the bounding sphere.
        let center = Vec3::from(model.translation);
        let radius = 0.5
            * model
                .matrix3
                .x_axis
                .length()
                .max(model.matrix3.y_axis.length())
                .max(model.matrix3.z_axis.length())
            * 1.74;
        let Some((c, depth)) = project(&vp, rect, center) else {
            continue;
        };
        let distance = (center - eye).length().max(0.001);
        let screen_radius = if top {
            radius / (camera.distance * 0.5) * rect.height() * 0.5
        } else {
            radius / distance * rect.height() * 1.07
        };
        if !visible_area.expand(screen_radius).contains(c) {
            continue;
        }
        owners.push(owner);
        let entity = (owners.len() - 1) as u32;
        if screen_radius < DOT_RADIUS {
            let r = screen_radius.max(1.0);
            let start = points.len() as u32;
            points.extend([
                c + egui::vec2(-r, -r),
                c + egui::vec2(r, -r),
                c + egui::vec2(r, r),
                c + egui::vec2(-r, r),
            ]);
            faces.push(Face {
                start,
                len: 4,
                depth,
                color: to_color(color, 0.85),
                entity,
            });
            continue;
        }
        for local in shapes
            .entry(shape.shape)
            .or_insert_with(|| shape_faces(shape.shape))
            .iter()
        {
            world_points.clear();
            world_points.extend(local.iter().map(|p| model.transform_point3(*p)));
            if world_points.len() < 3 {
                continue;
            }
            let normal = (world_points[1] - world_points[0])
                .cross(world_points[2] - world_points[0])
                .normalize_or_zero();
            let start = points.len();
            let mut depth_sum = 0.0;
            let mut ok = true;
            for p in &world_points {
                match project(&vp, rect, *p) {
                    Some((q, z)) => {
                        points.push(q);
                        depth_sum += z;
                    }
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                points.truncate(start);
                continue;
            }
            let len = points.len() - start;
            let shade = 0.45 + 0.55 * normal.dot(light).abs();
            faces.push(Face {
                start: start as u32,
                len: len as u32,
                depth: depth_sum / len as f32,
                color: to_color(color, shade),
                entity,
            });
        }
    }
    faces.sort_unstable_by(|a, b| b.depth.total_cmp(&a.depth));
    // Every face in one mesh: egui has nothing left to tessellate.
    let mut batch = egui::epaint::Mesh::default();
    batch.reserve_triangles(faces.len() * 2);
    batch.reserve_vertices(faces.len() * 4);
    for f in &faces {
        // The selection is tinted rather than outlined: outline strokes on the
        // degenerate faces at sphere and cone poles spike.
        let color = if selected.contains(&owners[f.entity as usize]) {
            f.color.lerp_to_gamma(Color32::from_rgb(255, 170, 40), 0.55)
        } else {
            f.color
        };
        let base = batch.vertices.len() as u32;
        let pts = &points[f.start as usize..(f.start + f.len) as usize];
        for p in pts {
            batch.colored_vertex(*p, color);
        }
        for k in 1..pts.len().saturating_sub(1) as u32 {
            batch.add_triangle(base, base + k, base + k + 1);
        }
    }
    painter.add(Shape::mesh(batch));

    // The handle of the primary selection: arrows to move, rings to rotate, boxes to
    // scale (W, E, R).
    let tool = state.viewport.tool;
    let handle = editor
        .selection()
        .first()
        .and_then(|id| Some((id.clone(), editor.world_pose(id)?)));
    let mut handle_hit = None;
    if let Some((_, pose)) = &handle {
        let origin = Vec3::from(pose.translation);
        let len = camera.distance * 0.12;
        if let Some((o, _)) = project(&vp, rect, origin) {
            for (axis, (dir, color)) in [
                (Vec3::X, Color32::from_rgb(230, 70, 70)),
                (Vec3::Y, Color32::from_rgb(90, 200, 90)),
                (Vec3::Z, Color32::from_rgb(80, 130, 240)),
            ]
            .into_iter()
            .enumerate()
            {
                if let Some((tip, _)) = project(&vp, rect, origin + dir * len) {
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
        state.viewport.dragging_axis = Some(axis);
        state.viewport.drag_amount = 0.0;
        // Where each selected entity or part started (its position, rotation and
        // scale fields, in its parent's space) and that space.
        state.viewport.drag_starts = editor
            .selection()
            .iter()
            .filter(|id| editor.world_pose(id).is_some() && !below_selection(editor, id))
            .map(|id| {
                let parent = editor.parent_world_pose(id).unwrap_or(Affine3A::IDENTITY);
                let start = [
                    authored_vec3(editor, id, "position", Vec3::ZERO),
                    authored_vec3(editor, id, "rotation", Vec3::ZERO),
                    authored_vec3(editor, id, "scale", Vec3::ONE),
                ];
                (id.clone(), start, parent)
            })
            .collect();
    }
    if let (Some(axis), Some((_, pose))) = (state.viewport.dragging_axis, &handle) {
        if response.dragged() {
            let len = camera.distance * 0.12;
            let origin = Vec3::from(pose.translation);
            let dir = [Vec3::X, Vec3::Y, Vec3::Z][axis];
            if let (Some((o, _)), Some((tip, _))) = (
                project(&vp, rect, origin),
                project(&vp, rect, origin + dir * len),
            ) {
                let screen = tip - o;
                let per_metre = screen.length() / len;
                if per_metre > 1e-3 {
                    state.viewport.drag_amount +=
                        response.drag_delta().dot(screen.normalized()) / per_metre;
                }
            }
            // Hold Ctrl to snap to the steps in the settings.
            let snap = ui.input(|i| i.modifiers.command);
            let (field, values) = handle_values(
                &HandleDrag {
                    tool,
                    axis,
                    amount: state.viewport.drag_amount,
                    handle_length: len,
                    snap: snap.then_some(settings),
                },
                &state.viewport.drag_starts,
            );
            actions.push(Action::SetFieldEach {
                component: "transform".into(),
                field: field.into(),
                values,
                continuing: true,
            });
        }
        if response.drag_stopped() {
            state.viewport.dragging_axis = None;
            state.viewport.drag_starts.clear();
            actions.push(Action::EndGesture);
        }
    }

    if response.clicked() {
        state.assets.focused = false;
    }
    // Click to select the front-most face under the pointer.
    if response.clicked()
        && let Some(p) = response.interact_pointer_pos()
    {
        let hit = faces
            .iter()
            .rev()
            .find(|f| point_in_polygon(p, &points[f.start as usize..(f.start + f.len) as usize]))
            .map(|f| owners[f.entity as usize]);
        let hit_id = hit.and_then(|e| level?.authoring_id(e));
        let alt = ui.input(|i| i.modifiers.alt);
        let id = hit_id.map(|hit| click_target(editor.selection(), hit, alt));
        let additive = ui.input(|i| i.modifiers.command || i.modifiers.shift);
        let mut selection = if additive {
            editor.selection().to_vec()
        } else {
            Vec::new()
        };
        if let Some(id) = id {
            if let Some(k) = selection.iter().position(|s| *s == id) {
                selection.remove(k);
            } else {
                selection.insert(0, id);
            }
        }
        actions.push(Action::Select(selection));
    }

    state.viewport.points = points;
    state.viewport.faces = faces;
    state.viewport.owners = owners;

    // Overlay: view name, simulation controls.
    let label = if top { "Top" } else { "Perspective" };
    painter.text(
        rect.left_top() + egui::vec2(8.0, 6.0),
        egui::Align2::LEFT_TOP,
        label,
        egui::FontId::proportional(13.0),
        Color32::from_gray(200),
    );
    let bar = Rect::from_min_size(
        rect.right_top() + egui::vec2(-250.0, 4.0),
        egui::vec2(246.0, 24.0),
    );
    ui.scope_builder(egui::UiBuilder::new().max_rect(bar), |ui| {
        ui.horizontal(|ui| {
            let playing = editor.preview().playing;
            if ui
                .button(if playing { "⏸ Pause" } else { "▶ Play" })
                .on_hover_text("Run or pause the simulation (F5)")
                .clicked()
            {
                actions.push(Action::Run(UiCommand::PlayPause));
            }
            if ui
                .button("⏭ Step")
                .on_hover_text("Advance one frame (F6)")
                .clicked()
            {
                actions.push(Action::Run(UiCommand::Step));
            }
            if ui
                .button("⟲ Restart")
                .on_hover_text("Respawn the level from its compiled blob (Shift+F5)")
                .clicked()
            {
                actions.push(Action::Run(UiCommand::Restart));
            }
        });
    });
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
        None => match editor.part(id) {
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

/// The camera distance after scrolling by `scroll` points: proportional to the
/// distance, and the same for one big scroll event as for many small ones (a
/// linear factor overshot on fast wheels and could go negative).
pub fn zoomed(distance: f32, scroll: f32) -> f32 {
    (distance * (-scroll * 0.0015).exp()).clamp(0.5, 500.0)
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
    let Some((instance, _)) = prefab_parts::split_part(hit) else {
        return hit.to_owned();
    };
    let inside = |s: &String| s == instance || s.starts_with(&format!("{instance}/"));
    if alt || selection.iter().any(inside) {
        hit.to_owned()
    } else {
        instance.to_owned()
    }
}

/// The world-space box around what F frames: the selected entities with everything
/// below them (a group's children, a prefab instance's parts), meshes whole (their
/// shape's box as drawn, not just their origin); the whole world when nothing is
/// selected.
pub fn frame_bounds(editor: &Editor) -> Option<(Vec3, Vec3)> {
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
        let pose = transforms.world(i);
        // A mesh counts whole: the corners of its shape's box, as drawn.
        let shape = world
            .meshes
            .lookup(transforms.entity(i))
            .and_then(|m| editor.resources().meshes.get(&world.meshes.get(m).mesh));
        match shape {
            Some(shape) => {
                let model = pose * Affine3A::from_scale(shape.size);
                for k in 0..8 {
                    let corner = Vec3::new(
                        if k & 1 == 0 { -0.5 } else { 0.5 },
                        if k & 2 == 0 { -0.5 } else { 0.5 },
                        if k & 4 == 0 { -0.5 } else { 0.5 },
                    );
                    grow(model.transform_point3(corner));
                }
            }
            None => grow(Vec3::from(pose.translation)),
        }
        stack.extend(transforms.children(i));
    }
    bounds
}

fn frame(editor: &Editor, camera: &mut Camera) {
    let Some((min, max)) = frame_bounds(editor) else {
        return;
    };
    camera.target = (min + max) * 0.5;
    // The distance at which a sphere around the box fills the 50 degree view.
    let radius = (max - min).length() * 0.5;
    // A little margin, so the framed object does not touch the edges.
    camera.distance = (1.15 * radius / 25f32.to_radians().sin()).clamp(1.0, 400.0);
}

fn distance_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_sq().max(1e-6)).clamp(0.0, 1.0);
    (a + ab * t).distance(p)
}

fn point_in_polygon(p: Pos2, poly: &[Pos2]) -> bool {
    let mut inside = false;
    let mut j = poly.len().wrapping_sub(1);
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[j]);
        if (a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x {
            inside = !inside;
        }
        j = i;
    }
    inside
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
    fn the_handles_move_rotate_and_scale_along_their_axis_and_snap_with_ctrl() {
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
