//! The viewport: draws the preview's runtime world. With a GPU (eframe's wgpu
//! renderer) the scene is rendered with depth, lighting and textures by
//! [`crate::render`]; without one, the [`flat`] view paints an approximation and
//! says so. Drag with the left or right button to orbit, the middle button (or
//! Shift + drag) to pan, scroll to zoom; click to select what is under the pointer;
//! drag an axis of the handle to move, rotate or scale the selection (W, E, R; hold
//! Ctrl to snap); click an axis of the corner gizmo to look along it.

mod camera;
mod flat;
mod gizmo;
mod gpu_view;
pub mod handle_math;
mod handles;
pub mod placing;
mod toolbar;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{Color32, Pos2, Rect, Sense, pos2};
use glam::{Mat4, Vec3, Vec4};
use kiln_core::{Entity, ResourceId};

pub use camera::{Camera, StandardView, frame_bounds};
pub use handles::{Tool, click_target};
pub use placing::{Settle, placement_point, pointer_over};

use super::PanelState;
use crate::editor::actions::Action;
use crate::editor::model::Editor;
use crate::editor::settings::Settings;
use crate::render::assets::AssetCache;
use crate::render::gpu::View;
use crate::render::model::Model;
use crate::render::picking::{Ray, inside_area, pick_except};
use crate::render::scene::{DrawList, SceneKey};

/// Gesture state of the viewport, the draw list and the renderer, kept between
/// frames.
#[derive(Debug, Default)]
pub struct ViewportState {
    /// The handle drag under way.
    drag: Option<handles::HandleDrag>,
    /// The handle's grip under the pointer (or dragged).
    pub hovered_grip: Option<handle_math::Grip>,
    /// What dragging the handle does (W, E, R).
    pub tool: Tool,
    /// The last frame's view (world -> clip) and where it was on screen.
    view: Option<(Mat4, Rect)>,
    /// Where the pointer was over the viewport in the last frame.
    hover: Option<Pos2>,
    /// Entities just placed, to rest on their surface once drawn.
    pub settle: Option<Settle>,
    /// Drop the selection to the floor on the next frame (End).
    pub drop_request: bool,
    /// Where a box being drawn to select started.
    box_from: Option<Pos2>,
    /// The runtime entities hidden and locked, and what they were found for.
    view_sets: Option<(ViewSetsKey, HashSet<Entity>, HashSet<Entity>)>,
    /// Frame the selection on the next frame (asked by F or by opening a level).
    pub frame_request: bool,
    /// What is drawn, and what it was built from.
    draw_list: DrawList,
    scene_key: Option<SceneKey>,
    /// Models and textures, loaded in the background.
    assets: Option<AssetCache>,
    /// The GPU renderer, when eframe runs on wgpu.
    gpu: Option<gpu_view::GpuView>,
    flat: flat::FlatBuffers,
    /// Where the viewport was on screen in the last frame.
    pub rect: Option<Rect>,
    /// CPU time the last frame's viewport took (building and submitting; the GPU's
    /// own work is not included).
    pub last_cpu_time: Duration,
    /// The entities drawn selected, and the (world, selection) they were found for.
    tinted: Option<(TintKey, HashSet<Entity>)>,
}

/// What the hidden and locked entities were found for: the world's entities'
/// revision and the sets' ([`crate::editor::settings::LevelView::revision`]).
type ViewSetsKey = (u64, u64);

/// What the entities drawn selected were found for: the world's entities'
/// revision and the selection.
type TintKey = (u64, Vec<String>);

/// The entities drawn as selected: the selected ones and everything below them, so
/// that a selected prefab instance (whose own entity draws nothing) or group shows
/// its parts tinted. Walked again only when the world or the selection changes.
fn tinted(viewport: &mut ViewportState, editor: &Editor) -> HashSet<Entity> {
    let key = (
        editor.preview().entities_revision(),
        editor.selection().to_vec(),
    );
    if let Some((k, set)) = &viewport.tinted
        && *k == key
    {
        return set.clone();
    }
    let set = editor.preview_state().drawn_selected(editor.selection());
    viewport.tinted = Some((key, set.clone()));
    set
}

impl ViewportState {
    /// The entities the viewport draws now (one per drawn mesh instance).
    pub fn drawn_entities(&self) -> &[kiln_core::Entity] {
        &self.draw_list.owners
    }

    /// How many scene pictures the GPU renderer has drawn (none before it
    /// exists, or without one).
    pub fn pictures_drawn(&self) -> u64 {
        self.gpu
            .as_ref()
            .map_or(0, gpu_view::GpuView::pictures_drawn)
    }

    /// Models and textures of the open project (started on first use).
    pub fn assets(&mut self, editor: &Editor, ctx: &egui::Context) -> &mut AssetCache {
        self.assets.get_or_insert_with(|| {
            let ctx = ctx.clone();
            AssetCache::new(
                editor.files().project().clone(),
                Some(Arc::new(move || ctx.request_repaint())),
            )
        })
    }

    /// Textures and models that could not be loaded for drawing: (file, message).
    pub fn asset_problems(&self) -> Vec<(String, String)> {
        self.assets
            .as_ref()
            .map(AssetCache::problems)
            .unwrap_or_default()
    }

    /// Whether the GPU renderer draws (false: the flat view).
    pub fn uses_gpu(&self) -> bool {
        self.gpu.is_some()
    }
}

/// Projects a world point to the screen; `None` behind the camera.
pub(super) fn project(vp: &Mat4, rect: Rect, p: Vec3) -> Option<(Pos2, f32)> {
    let c = *vp * p.extend(1.0);
    if c.w <= 1e-3 {
        return None;
    }
    Some((to_screen(rect, c), c.z / c.w))
}

/// A clip-space point (in front of the camera) on the screen.
pub(super) fn to_screen(rect: Rect, c: Vec4) -> Pos2 {
    pos2(
        rect.center().x + c.x / c.w * rect.width() * 0.5,
        rect.center().y - c.y / c.w * rect.height() * 0.5,
    )
}

/// Where the pointer at `p` is in `rect`, in normalized device coordinates.
fn pointer_ndc(rect: Rect, p: Pos2) -> [f32; 2] {
    [
        (p.x - rect.center().x) / (rect.width() * 0.5),
        -(p.y - rect.center().y) / (rect.height() * 0.5),
    ]
}

/// The selection after a click that hit `hit` (or nothing): the hit alone, or,
/// with Ctrl or Shift (`additive`), the selection with the hit toggled and put
/// first.
fn selection_after_click(current: &[String], hit: Option<String>, additive: bool) -> Vec<String> {
    let mut selection = if additive {
        current.to_vec()
    } else {
        Vec::new()
    };
    if let Some(id) = hit {
        if let Some(k) = selection.iter().position(|s| *s == id) {
            selection.remove(k);
        } else {
            selection.insert(0, id);
        }
    }
    selection
}

/// How a box drawn over the viewport changes the selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BoxMode {
    /// What is inside, alone.
    Replace,
    /// What is inside, added (Shift).
    Add,
    /// The selection without what is inside (Ctrl).
    Remove,
}

/// The selection after a box found `inside`.
fn selection_after_box(current: &[String], inside: Vec<String>, mode: BoxMode) -> Vec<String> {
    match mode {
        BoxMode::Replace => inside,
        BoxMode::Add => {
            let mut out = current.to_vec();
            out.extend(inside.into_iter().filter(|id| !current.contains(id)));
            out
        }
        BoxMode::Remove => current
            .iter()
            .filter(|id| !inside.contains(id))
            .cloned()
            .collect(),
    }
}

/// A left drag that starts on nothing (not on the handle, not with Alt, which
/// orbits) draws a box; letting go selects what is drawn inside it (not what is
/// locked): alone, added with Shift, taken away with Ctrl.
#[allow(clippy::too_many_arguments)]
fn box_select(
    ui: &egui::Ui,
    response: &egui::Response,
    painter: &egui::Painter,
    editor: &Editor,
    viewport: &mut ViewportState,
    (vp, rect): (Mat4, Rect),
    locked: &HashSet<Entity>,
    actions: &mut Vec<Action>,
) {
    let modifiers = ui.input(|i| i.modifiers);
    if response.drag_started_by(egui::PointerButton::Primary)
        && viewport.drag.is_none()
        && !modifiers.alt
    {
        // Where the button went down, not where the drag was noticed.
        viewport.box_from = ui
            .input(|i| i.pointer.press_origin())
            .or(response.interact_pointer_pos());
    }
    let (Some(from), Some(to)) = (viewport.box_from, response.interact_pointer_pos()) else {
        return;
    };
    let area = Rect::from_two_pos(from, to);
    painter.rect(
        area,
        0.0,
        Color32::from_rgba_unmultiplied(120, 170, 255, 30),
        egui::Stroke::new(1.0, Color32::from_rgb(120, 170, 255)),
        egui::StrokeKind::Inside,
    );
    if !response.drag_stopped() {
        return;
    }
    viewport.box_from = None;
    let (Some(assets), Some(level)) = (viewport.assets.as_mut(), editor.preview().level.as_ref())
    else {
        return;
    };
    let resources = editor.preview_state().resources();
    let versions = editor.preview_state().asset_versions();
    let model = |id| assets.mesh_model(resources, id, versions).map(|(_, m)| m);
    let ndc = [pointer_ndc(rect, from), pointer_ndc(rect, to)];
    let found = inside_area(&viewport.draw_list, vp, ndc, model, |e| locked.contains(&e));
    // A big box: one map rather than a search of the level per entity found.
    let by_entity: std::collections::HashMap<Entity, &str> = if found.len() > 32 {
        level.id_map().into_iter().map(|(id, e)| (e, id)).collect()
    } else {
        Default::default()
    };
    let id_of = |e: Entity| by_entity.get(&e).copied().or_else(|| level.authoring_id(e));
    let mut inside: Vec<String> = Vec::new();
    for id in found.into_iter().filter_map(id_of) {
        let id = click_target(&[], id, false);
        if !inside.contains(&id) {
            inside.push(id);
        }
    }
    let mode = if modifiers.command {
        BoxMode::Remove
    } else if modifiers.shift {
        BoxMode::Add
    } else {
        BoxMode::Replace
    };
    actions.push(Action::Select(selection_after_box(
        editor.selection(),
        inside,
        mode,
    )));
}

/// The viewport's overlay: the view's name (and whether it is the flat view) and
/// the models still loading.
fn overlay(
    ui: &mut egui::Ui,
    painter: &egui::Painter,
    rect: Rect,
    (view_name, flat): (&str, bool),
    loading: usize,
) {
    let mut label = view_name.to_owned();
    if flat {
        label.push_str(" · flat view (no GPU renderer: depth is approximate)");
    }
    painter.text(
        rect.left_bottom() + egui::vec2(8.0, -8.0),
        egui::Align2::LEFT_BOTTOM,
        label,
        egui::FontId::proportional(13.0),
        Color32::from_gray(200),
    );
    if loading > 0 {
        let at = Rect::from_min_size(
            rect.left_bottom() + egui::vec2(8.0, -46.0),
            egui::vec2(220.0, 18.0),
        );
        ui.scope_builder(egui::UiBuilder::new().max_rect(at), |ui| {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!(
                    "Loading {loading} model{}…",
                    if loading == 1 { "" } else { "s" }
                ));
            });
        });
    }
}

/// Shows the viewport.
pub fn show(
    ui: &mut egui::Ui,
    editor: &Editor,
    state: &mut PanelState,
    settings: &mut Settings,
    render_state: Option<&egui_wgpu::RenderState>,
    actions: &mut Vec<Action>,
) {
    let started = Instant::now();
    let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
    let painter = ui.painter_at(rect);
    // What the designer hid or locked, with everything below it: walked again only
    // when the world or the sets change (an isolated entity on a large level hides
    // the rest, and a walk of it every frame would cost every frame).
    let sets_key = (
        editor.preview().entities_revision(),
        state.level_view.revision,
    );
    if (state.viewport.view_sets.as_ref()).is_none_or(|(k, _, _)| *k != sets_key) {
        let below = |ids: &std::collections::BTreeSet<String>| {
            let ids: Vec<String> = ids.iter().cloned().collect();
            editor.preview_state().drawn_selected(&ids)
        };
        let sets = (
            below(&state.level_view.hidden),
            below(&state.level_view.locked),
        );
        state.viewport.view_sets = Some((sets_key, sets.0, sets.1));
    }
    // Taken for the frame and put back at its end (a frame that returns early
    // walks them again on the next).
    let (hidden, locked) = match state.viewport.view_sets.take() {
        Some((_, hidden, locked)) => (hidden, locked),
        None => Default::default(),
    };
    let camera = &mut state.camera;
    let viewport = &mut state.viewport;
    viewport.rect = Some(rect);
    // The scene renderer is made from the second frame on: the window appears
    // once its first frame is painted, and making the scene's pipelines is most of
    // that first paint on a software renderer (their shaders are compiled on the
    // CPU). The first frame shows the panels and an empty viewport.
    if viewport.gpu.is_none()
        && let Some(rs) = render_state
    {
        if ui.ctx().cumulative_frame_nr() == 0 {
            painter.rect_filled(rect, 0.0, Color32::from_rgb(38, 40, 46));
            ui.ctx().request_repaint();
            return;
        }
        viewport.gpu = Some(gpu_view::GpuView::new(rs));
    }
    let ctx = ui.ctx().clone();
    viewport.assets(editor, &ctx).poll();

    // The draw list, rebuilt only when the world, selection or resources changed.
    let level = editor.preview().level.as_ref();
    let selected = tinted(viewport, editor);
    let world = &editor.preview().world;
    let resources = editor.preview_state().resources();
    let key = SceneKey::of(
        world,
        editor.preview().entities_revision(),
        &selected,
        resources.generation,
    );
    let key = key.hiding(&hidden);
    let list_changed = viewport.scene_key != Some(key);
    if list_changed {
        viewport.draw_list = DrawList::build(world, &selected, |id| {
            resources.meshes.get(&id).map(|m| m.size)
        });
        viewport.draw_list.hide(&hidden);
        viewport.scene_key = Some(key);
    }

    let versions = editor.preview_state().asset_versions();
    if std::mem::take(&mut viewport.frame_request)
        && let Some(assets) = viewport.assets.as_mut()
    {
        let mut mesh_box = |id: ResourceId| {
            let look = resources.meshes.get(&id)?;
            // A model not loaded yet frames as a unit box.
            let (lo, hi) = assets
                .mesh_model(resources, id, versions)
                .map_or((Vec3::splat(-0.5), Vec3::splat(0.5)), |(_, m)| m.bounds());
            Some((lo * look.size, hi * look.size))
        };
        if let Some(b) = frame_bounds(editor, &mut mesh_box) {
            camera::frame_box(camera, b);
        }
    }

    // Camera gestures (not while dragging the handle). Not on the frame a drag
    // starts either: whether it grabbed a handle is only known once the handle is
    // drawn below, and orbiting first made every handle drag turn the view a little.
    let alt = ui.input(|i| i.modifiers.alt);
    if viewport.drag.is_none() && viewport.box_from.is_none() && !response.drag_started() {
        let shift = ui.input(|i| i.modifiers.shift);
        if response.dragged_by(egui::PointerButton::Middle)
            || (shift && response.dragged_by(egui::PointerButton::Secondary))
        {
            // Pan across the screen, in every view.
            let d = response.drag_delta();
            let to_world = camera.view().inverse();
            let (right, up) = (to_world.x_axis.truncate(), to_world.y_axis.truncate());
            let scale = camera.distance * 0.0015;
            camera.target += (-right * d.x + up * d.y) * scale;
        } else if response.dragged_by(egui::PointerButton::Secondary)
            || (alt && response.dragged_by(egui::PointerButton::Primary))
        {
            // Orbiting leaves a top, front or side view for perspective, as in
            // Blender.
            let d = response.drag_delta();
            camera.ortho = false;
            camera.yaw -= d.x * 0.008;
            camera.pitch = (camera.pitch + d.y * 0.008).clamp(-1.5, 1.5);
        }
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            camera.distance = camera::zoomed(camera.distance, scroll);
        }
    }

    let aspect = rect.width() / rect.height().max(1.0);
    let vp = camera.view_projection(aspect);
    let eye = camera.eye();
    viewport.view = Some((vp, rect));
    viewport.hover = response.hover_pos();

    // The scene.
    let Some(assets) = viewport.assets.as_mut() else {
        return;
    };
    match &mut viewport.gpu {
        Some(gpu) => {
            let view = View {
                view_projection: vp,
                eye,
                grid: settings.show_grid,
                grid_fade: (camera.distance * 2.5).max(40.0),
                shadows: settings.shadows,
            };
            gpu.paint(
                &painter,
                rect,
                &view,
                &viewport.draw_list,
                list_changed,
                resources,
                assets,
                versions,
            );
        }
        None => {
            painter.rect_filled(rect, 0.0, Color32::from_rgb(38, 40, 46));
            if settings.show_grid {
                flat::grid(&painter, rect, &vp);
            }
            let mut model =
                |id: ResourceId| assets.mesh_model(resources, id, versions).map(|(_, m)| m);
            let color = |material: ResourceId, m: &Model, part: usize| match resources
                .materials
                .get(&material)
            {
                Some(look) => look.color,
                None => m.parts.get(part).map_or(Vec4::splat(0.7), |p| p.base_color),
            };
            flat::paint(
                &painter,
                rect,
                &vp,
                &viewport.draw_list,
                &mut model,
                &color,
                &mut viewport.flat,
            );
        }
    }

    let handle_view = handles::HandleView {
        vp,
        rect,
        eye,
        length: camera.distance * 0.12,
    };
    handles::show(
        ui,
        &response,
        &painter,
        editor,
        viewport,
        &handle_view,
        settings,
        actions,
    );
    box_select(
        ui,
        &response,
        &painter,
        editor,
        viewport,
        (vp, rect),
        &locked,
        actions,
    );
    placing::settle(viewport, editor, actions);
    if std::mem::take(&mut viewport.drop_request) {
        placing::drop_to_floor(viewport, editor, actions);
    }

    // A mesh or prefab dragged from the asset browser is placed where it is
    // dropped: on the surface under the pointer (then rests on it by its bounds).
    if let Some(dragged) = response.dnd_release_payload::<super::assets::DraggedFile>()
        && super::assets::placeable(&dragged.0)
    {
        if let Some(p) = ui.input(|i| i.pointer.interact_pos()) {
            viewport.hover = Some(p);
        }
        let position = placement_point(viewport, editor, settings).unwrap_or(camera.target);
        actions.push(Action::PlaceAsset {
            file: dragged.0.clone(),
            position: Some(position.to_array()),
        });
    }
    let Some(assets) = viewport.assets.as_mut() else {
        return;
    };
    if response.clicked() {
        state.assets.focused = false;
    }
    // Click to select what is under the pointer.
    if response.clicked()
        && let Some(p) = response.interact_pointer_pos()
    {
        let hit = Ray::through(vp, pointer_ndc(rect, p)).and_then(|ray| {
            let model = |id| assets.mesh_model(resources, id, versions).map(|(_, m)| m);
            pick_except(&viewport.draw_list, ray, model, |e| locked.contains(&e))
        });
        let hit_id = hit.and_then(|(e, _)| level?.authoring_id(e));
        let alt = ui.input(|i| i.modifiers.alt);
        let id = hit_id.map(|hit| click_target(editor.selection(), hit, alt));
        let additive = ui.input(|i| i.modifiers.command || i.modifiers.shift);
        actions.push(Action::Select(selection_after_click(
            editor.selection(),
            id,
            additive,
        )));
    }

    // Overlay: view name, what is loading, simulation controls, orientation gizmo.
    overlay(
        ui,
        &painter,
        rect,
        (camera.view_name(), viewport.gpu.is_none()),
        assets.loading(),
    );
    let bar = Rect::from_min_size(
        rect.left_top() + egui::vec2(4.0, 4.0),
        egui::vec2(rect.width() - 8.0, 60.0),
    );
    let playing = editor.preview().playing;
    toolbar::show(ui, bar, (viewport.tool, playing), camera, settings, actions);
    if let Some(direction) = gizmo::show(ui, rect, &camera.view()) {
        camera.look_along(direction);
    }
    viewport.view_sets = Some((sets_key, hidden, locked));
    viewport.last_cpu_time = started.elapsed();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_click_selects_the_hit_alone_and_ctrl_or_shift_toggles_it() {
        let current = ids(&["a", "b"]);
        assert_eq!(
            selection_after_click(&current, Some("c".into()), false),
            ["c"]
        );
        assert!(
            selection_after_click(&current, None, false).is_empty(),
            "a click on nothing clears"
        );
        assert_eq!(
            selection_after_click(&current, Some("c".into()), true),
            ["c", "a", "b"]
        );
        assert_eq!(
            selection_after_click(&current, Some("a".into()), true),
            ["b"]
        );
        assert_eq!(selection_after_click(&current, None, true), ["a", "b"]);
    }

    fn ground_under(vp: Mat4, ndc: [f32; 2]) -> Option<Vec3> {
        Ray::through(vp, ndc).and_then(crate::render::placement::ground_hit)
    }

    #[test]
    fn a_box_replaces_adds_to_or_takes_from_the_selection() {
        let current = ids(&["a", "b"]);
        let inside = ids(&["b", "c"]);
        assert_eq!(
            selection_after_box(&current, inside.clone(), BoxMode::Replace),
            ["b", "c"]
        );
        assert_eq!(
            selection_after_box(&current, inside.clone(), BoxMode::Add),
            ["a", "b", "c"]
        );
        assert_eq!(
            selection_after_box(&current, inside, BoxMode::Remove),
            ["a"]
        );
    }

    #[test]
    fn the_pointer_at_the_centre_meets_the_ground_where_the_camera_looks() {
        let rect = Rect::from_min_size(pos2(10.0, 20.0), egui::vec2(400.0, 300.0));
        assert_eq!(pointer_ndc(rect, rect.center()), [0.0, 0.0]);
        assert_eq!(pointer_ndc(rect, rect.right_top()), [1.0, 1.0]);
        let camera = Camera {
            target: Vec3::new(3.0, 0.0, -2.0),
            ..Camera::default()
        };
        let vp = camera.view_projection(4.0 / 3.0);
        let hit = ground_under(vp, [0.0, 0.0]).unwrap();
        assert!(hit.distance(camera.target) < 1e-2, "{hit}");
        // Looking nearly level, the top of the view is above the horizon: no ground.
        let level = Camera {
            pitch: 0.2,
            ..camera
        };
        let vp = level.view_projection(4.0 / 3.0);
        assert!(ground_under(vp, [0.0, 0.0]).is_some());
        assert!(ground_under(vp, [0.0, 1.0]).is_none());
    }
}
