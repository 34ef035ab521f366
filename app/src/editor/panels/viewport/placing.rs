//! Putting things on surfaces: where a new, placed or pasted entity lands (on what
//! is under the pointer, or under the middle of the view when the command came
//! from a menu), settling it there by its bounds once its models are loaded, and
//! Drop to Floor (End). The geometry is [`crate::render::placement`]'s.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use glam::{Affine3A, Vec3};
use kiln_core::Entity;

use super::handle_math::rounded;
use super::handles::{authored_vec3, below_selection};
use super::{ViewportState, pointer_ndc};
use crate::editor::actions::Action;
use crate::editor::model::Editor;
use crate::editor::settings::Settings;
use crate::render::picking::Ray;
use crate::render::placement::{
    ModelOf, floor_below, on_grid, rest_offset, surface_under, world_bounds,
};

/// How long a placed entity waits for its models before it stays where its origin
/// was put (a model that cannot be read never loads).
const SETTLE_WAIT: Duration = Duration::from_secs(5);

/// Entities just placed at `point`, to rest on it by their bounds once drawn.
#[derive(Debug, Clone)]
pub struct Settle {
    /// Authoring ids (the new selection).
    pub ids: Vec<String>,
    /// The surface point they were put on.
    pub point: Vec3,
    /// Centre them over the point (a pasted group); otherwise only lift or lower.
    pub centre: bool,
    /// The history step that placed them (the settling joins it).
    pub step: u64,
    /// When they were placed.
    pub since: Instant,
}

/// The surface under `ray`: a drawn mesh of an entity not in `skip`, then the
/// ground plane.
pub(super) fn surface(
    state: &mut ViewportState,
    editor: &Editor,
    ray: Ray,
    skip: &HashSet<Entity>,
) -> Option<Vec3> {
    with_models(state, editor, |list, model| {
        surface_under(list, ray, model, &|e| skip.contains(&e))
    })
}

/// Runs `f` with the draw list and the models its meshes draw (`None` before the
/// viewport has loaded any).
fn with_models<T>(
    state: &mut ViewportState,
    editor: &Editor,
    f: impl FnOnce(&crate::render::scene::DrawList, &mut ModelOf) -> Option<T>,
) -> Option<T> {
    let ViewportState {
        draw_list, assets, ..
    } = state;
    let assets = assets.as_mut()?;
    let (resources, versions) = (
        editor.preview_state().resources(),
        editor.preview_state().asset_versions(),
    );
    let mut model = |id| assets.mesh_model(resources, id, versions).map(|(_, m)| m);
    f(draw_list, &mut model)
}

/// The world box around what the entities in `of` draw (with everything below
/// them); `None` when nothing is drawn or a model is loading.
fn bounds_of(
    state: &mut ViewportState,
    editor: &Editor,
    of: &HashSet<Entity>,
) -> Option<(Vec3, Vec3)> {
    with_models(state, editor, |list, model| {
        world_bounds(list, &|e| of.contains(&e), model)
    })
}

impl ViewportState {
    /// The world box around what the entities `ids` draw, with what is below them,
    /// as the viewport draws it now; `None` when nothing of them is drawn or a model
    /// is still loading.
    pub fn drawn_bounds(&mut self, editor: &Editor, ids: &[String]) -> Option<(Vec3, Vec3)> {
        let drawn = editor.preview_state().drawn_selected(ids);
        bounds_of(self, editor, &drawn)
    }
}

/// The box around what the selection draws.
pub(super) fn selection_bounds(state: &mut ViewportState, editor: &Editor) -> Option<(Vec3, Vec3)> {
    let drawn = editor.preview_state().drawn_selected(editor.selection());
    bounds_of(state, editor, &drawn)
}

/// Where a new or placed entity lands now: on the surface under the pointer when
/// it is over the viewport, else under the middle of the view; across the ground
/// on the move grid when move snapping is on. `None` before the viewport was
/// drawn, or when the view meets nothing (looking at the sky).
pub fn placement_point(
    state: &mut ViewportState,
    editor: &Editor,
    settings: &Settings,
) -> Option<Vec3> {
    let (vp, rect) = state.view?;
    let ndc = state.hover.map_or([0.0, 0.0], |p| pointer_ndc(rect, p));
    let ray = Ray::through(vp, ndc)?;
    let point = surface(state, editor, ray, &HashSet::new())?;
    Some(if settings.snap_move_on {
        on_grid(point, settings.snap_move)
    } else {
        point
    })
}

/// Whether the pointer is over the viewport (a paste then lands under it).
pub fn pointer_over(state: &ViewportState) -> bool {
    state.hover.is_some()
}

/// The position field each entity in `ids` (not below another of them) gets when
/// moved by `offset` in the world.
fn moved_by(editor: &Editor, ids: &[String], offset: Vec3) -> Vec<(String, serde_json::Value)> {
    ids.iter()
        .filter(|id| !below_selection(editor, id))
        .map(|id| {
            let parent = editor
                .preview_state()
                .parent_world_pose(id)
                .unwrap_or(Affine3A::IDENTITY);
            let start = authored_vec3(editor, id, "position", Vec3::ZERO);
            let local = parent.inverse().transform_vector3(offset);
            (id.clone(), rounded(start + local, 1000.0))
        })
        .collect()
}

/// Rests entities just placed on their surface once their models are drawn: one
/// frame after the placement at best, up to [`SETTLE_WAIT`] for a slow model.
pub(super) fn settle(state: &mut ViewportState, editor: &Editor, actions: &mut Vec<Action>) {
    let Some(settle) = state.settle.clone() else {
        return;
    };
    if editor.history().last_step() != Some(settle.step) {
        // Something else happened since: the placement stays as it is.
        state.settle = None;
        return;
    }
    let drawn = editor.preview_state().drawn_selected(&settle.ids);
    let bounds = if state.draw_list.owners.iter().any(|o| drawn.contains(o)) {
        match bounds_of(state, editor, &drawn) {
            Some(b) => b,
            None if settle.since.elapsed() < SETTLE_WAIT => return,
            None => {
                state.settle = None;
                return;
            }
        }
    } else {
        // Nothing drawn (an empty entity): its origin is its box.
        let origins: Vec<Vec3> = (settle.ids.iter())
            .filter_map(|id| editor.world_pose(id))
            .map(|p| p.translation.into())
            .collect();
        let Some(first) = origins.first().copied() else {
            state.settle = None;
            return;
        };
        origins
            .iter()
            .fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p)))
    };
    state.settle = None;
    let offset = rest_offset(bounds, settle.point, settle.centre);
    if offset.length() < 1e-4 {
        return;
    }
    actions.push(Action::Settle {
        values: moved_by(editor, &settle.ids, offset),
        step: settle.step,
    });
}

/// Drops each selected entity (with what is below it) onto the floor under it: the
/// highest surface below its box, or the ground. One undo step.
pub(super) fn drop_to_floor(state: &mut ViewportState, editor: &Editor, actions: &mut Vec<Action>) {
    let selected = editor.preview_state().drawn_selected(editor.selection());
    let mut values = Vec::new();
    for id in editor.selection() {
        if below_selection(editor, id) {
            continue;
        }
        let mine = editor
            .preview_state()
            .drawn_selected(std::slice::from_ref(id));
        let bounds = bounds_of(state, editor, &mine).or_else(|| {
            let p: Vec3 = editor.world_pose(id)?.translation.into();
            Some((p, p))
        });
        let Some(bounds) = bounds else { continue };
        let floor = with_models(state, editor, |list, model| {
            Some(floor_below(list, bounds, model, &|e| selected.contains(&e)))
        });
        let Some(floor) = floor else { return };
        let offset = Vec3::new(0.0, floor - bounds.0.y, 0.0);
        values.extend(moved_by(editor, std::slice::from_ref(id), offset));
    }
    if !values.is_empty() {
        actions.push(Action::SetFieldEach {
            component: "transform".into(),
            field: "position".into(),
            values,
            continuing: false,
        });
        actions.push(Action::EndGesture);
    }
}
