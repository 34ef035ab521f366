//! The scene graph: the open level's hierarchy, with selection, multi-selection,
//! keyboard navigation, a filter, prefab instances marked, rename (F2) and drag and
//! drop to reparent or reorder.
//!
//! The rows are plain data ([`rows`]), rebuilt only when the hierarchy, the openness or
//! the filter changes; a frame lays out and draws only the rows in view, so a level of
//! a million entities costs what forty rows cost.

pub mod rows;

use egui::{Key, Pos2, Rect, Role, Sense, Stroke, WidgetInfo};

use self::rows::{Openness, Row, RowItem, Rows};
use super::PanelState;
use crate::editor::actions::{Action, UiCommand};
use crate::editor::model::Editor;
use crate::editor::model::prefab_parts;

/// The scene tree's own UI state.
#[derive(Debug, Default)]
pub struct SceneTreeState {
    /// Which folders are open.
    pub openness: Openness,
    rows: Rows,
    /// The row the keyboard moves from.
    cursor: Option<String>,
    /// The row a Shift range starts at.
    anchor: Option<String>,
    /// The entities being dragged, while a drag is on.
    dragging: Option<Vec<String>>,
    /// The selection as last seen, to notice a selection made elsewhere.
    seen_selection: Vec<String>,
    /// A row to bring into view on this frame.
    scroll_to: Option<usize>,
    /// Last frame's scroll offset and the height of the view.
    view: (f32, f32),
    /// Whether the keys were the tree's in the last frame (Home and End move in
    /// it then, rather than dropping the selection to the floor).
    pub has_keys: bool,
}

/// The payload of an entity (or part) dragged from the tree: an entity field in
/// the inspector takes it.
#[derive(Debug, Clone)]
pub struct DraggedEntity(pub String);

/// Where a drag would drop.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Drop {
    /// Just before this row, under the same parent.
    Before(usize),
    /// Just after this row, under the same parent.
    After(usize),
    /// Into this row, as its last child.
    Into(usize),
    /// Below every row: roots, at the end.
    Roots,
}

/// Shows the scene tree.
pub fn show(ui: &mut egui::Ui, editor: &Editor, state: &mut PanelState, actions: &mut Vec<Action>) {
    let Some(level) = &editor.level() else {
        ui.label("No level open.");
        // Keep the panel's width for the level to come (one opening on the worker):
        // a panel holding only this label would shrink to it.
        ui.allocate_space(ui.available_size());
        return;
    };
    header(ui, editor, state, actions);
    ui.separator();

    let doc = &level.doc;
    let tree_state = &mut state.tree;
    // A selection made elsewhere first opens the folders above it.
    let selection_changed = tree_state.seen_selection != editor.selection();
    if selection_changed {
        reveal_selection(editor, tree_state);
    }
    tree_state.rows.update(
        doc,
        editor.tree(),
        level.tree_revision(),
        level.prefabs(),
        &tree_state.openness,
        &state.tree_filter,
    );
    if selection_changed {
        tree_state.scroll_to = editor
            .selection()
            .first()
            .and_then(|id| tree_state.rows.position(doc, id));
        tree_state.seen_selection = editor.selection().to_vec();
    }

    let tree_id = ui.make_persistent_id("scene tree");
    // Arrow keys move in the tree while it has focus, not egui's focus.
    ui.memory_mut(|m| {
        m.set_focus_lock_filter(
            tree_id,
            egui::EventFilter {
                horizontal_arrows: true,
                vertical_arrows: true,
                ..Default::default()
            },
        )
    });
    // Any selection made in the tree (a click, the keys) hands F2 back to the tree.
    let actions_before = actions.len();
    // Registered first, so the rows drawn over it take their own clicks: it takes
    // clicks on empty space (deselect), keyboard focus, and drops below the rows.
    let view_rect = ui.available_rect_before_wrap();
    let background = ui.interact(view_rect, tree_id, Sense::click());
    background.widget_info(|| WidgetInfo::labeled(Role::Tree, true, "Scene tree"));
    // By the pointer only: egui also reports Enter on the focused tree as a click.
    if background.clicked_by(egui::PointerButton::Primary) {
        ui.memory_mut(|m| m.request_focus(tree_id));
        actions.push(Action::Select(Vec::new()));
    }
    if ui.memory(|m| m.has_focus(tree_id)) {
        keyboard(ui, editor, tree_state, actions);
    }

    let row_height = ui.spacing().interact_size.y;
    let pitch = row_height + ui.spacing().item_spacing.y;
    let mut scroll = egui::ScrollArea::both()
        .id_salt("scene tree rows")
        .auto_shrink([false, false]);
    // Dragging near the top or bottom edge scrolls, so a drop can reach any row.
    let dragged_at = (tree_state.dragging.is_some())
        .then(|| ui.input(|i| i.pointer.latest_pos()))
        .flatten()
        .map(|p| (p.y, view_rect.top(), view_rect.bottom()));
    // Before the first frame has measured the view, the row waits a frame.
    let bring_into_view = tree_state.scroll_to.take_if(|_| tree_state.view.1 > 0.0);
    let to = scroll_offset(tree_state.view, pitch, dragged_at, bring_into_view);
    if let Some(offset) = to.edge {
        scroll = scroll.vertical_scroll_offset(offset);
        ui.ctx().request_repaint();
    }
    if let Some(offset) = to.row {
        scroll = scroll.vertical_scroll_offset(offset);
    }
    let selected: std::collections::HashSet<&str> =
        editor.selection().iter().map(String::as_str).collect();
    let focused = ui.memory(|m| m.has_focus(tree_id));
    tree_state.has_keys = focused;
    let view = &state.level_view;
    let output = scroll.show_rows(ui, row_height, tree_state.rows.rows().len(), |ui, range| {
        let mut drawn = Vec::with_capacity(range.len());
        for k in range {
            let row = &tree_state.rows.rows()[k];
            let id = row.id(doc);
            let (rect, response) = draw_row(ui, tree_id, doc, row, selected.contains(id), focused);
            drawn.push((k, rect));
            let flags = (view.hidden.contains(id), view.locked.contains(id));
            row_toggles(ui, tree_id, rect, (id, &response), flags, actions);
            row_input(ui, tree_id, editor, tree_state, k, rect, &response, actions);
        }
        drawn
    });
    tree_state.view = (output.state.clamped_offset().y, output.inner_rect.height());
    // A visible focus ring while the keys are the tree's (Tab reached it, or a
    // click): the arrows move in it, F2 renames in it.
    if focused {
        let stroke = ui.visuals().selection.stroke;
        let ring = egui::Stroke::new(2.0, stroke.color);
        ui.painter()
            .rect_stroke(view_rect.shrink(1.0), 3.0, ring, egui::StrokeKind::Inside);
    }
    drag_and_drop(
        ui,
        editor,
        tree_state,
        output.inner_rect,
        &output.inner,
        actions,
    );
    if actions[actions_before..]
        .iter()
        .any(|a| matches!(a, Action::Select(_)))
    {
        state.assets.focused = false;
    }
}

/// The panel's title, its filter field, and the rename field while a rename is on.
fn header(ui: &mut egui::Ui, editor: &Editor, state: &mut PanelState, actions: &mut Vec<Action>) {
    ui.horizontal(|ui| {
        ui.strong("Scene");
        if ui
            .small_button("+")
            .on_hover_text(UiCommand::NewEntity.hover_text(ui.ctx(), "New entity"))
            .clicked()
        {
            actions.push(Action::Run(UiCommand::NewEntity));
        }
    });
    let filter_field = ui
        .add(
            egui::TextEdit::singleline(&mut state.tree_filter)
                .hint_text("Filter entities")
                .desired_width(f32::INFINITY),
        )
        .on_hover_text("Show entities whose name or id contains this text");
    // The hint is not a name: screen readers and tests find the field by this.
    filter_field
        .widget_info(|| egui::WidgetInfo::labeled(egui::Role::TextInput, true, "Filter entities"));
    // Focus the field once, when the rename starts: asking for focus every frame
    // kept it from ever losing focus, so Enter, Tab, Esc and clicking away did
    // nothing and the shortcuts stayed off.
    let starting = state.begin_rename.take();
    if let Some(id) = &starting {
        state.rename_text = editor
            .entity(id)
            .map(|e| e.name.clone())
            .unwrap_or_default();
        state.renaming = Some(id.clone());
    }
    if let Some(id) = state.renaming.clone() {
        let id = &id;
        let starting = starting.is_some();
        let label = ui.label("Rename:");
        let r = ui
            .add(egui::TextEdit::singleline(&mut state.rename_text).desired_width(f32::INFINITY))
            .labelled_by(label.id);
        if starting {
            r.request_focus();
        }
        if r.lost_focus() {
            state.renaming = None;
            let name = std::mem::take(&mut state.rename_text);
            // Esc cancels; Enter, Tab and clicking away commit.
            let (escape, enter) =
                ui.input(|i| (i.key_pressed(Key::Escape), i.key_pressed(Key::Enter)));
            if !escape {
                actions.push(Action::Rename {
                    entity: id.clone(),
                    name,
                });
            }
            // Ended from the keyboard: the keys go back to the tree (a click
            // elsewhere keeps the focus where it went).
            if escape || enter {
                let tree_id = ui.make_persistent_id("scene tree");
                ui.memory_mut(|m| m.request_focus(tree_id));
                // The key ended the rename; the tree must not act on it too (Enter
                // would frame the selection).
                ui.input_mut(|i| {
                    i.consume_key(egui::Modifiers::NONE, Key::Enter);
                    i.consume_key(egui::Modifiers::NONE, Key::Escape);
                });
            }
        }
    }
}

/// Where the rows scroll to this frame (see [`scroll_offset`]).
#[derive(Debug, Default, PartialEq)]
struct ScrollTo {
    /// A step toward the edge a drag is near.
    edge: Option<f32>,
    /// The offset that brings a row into view (wins over `edge`).
    row: Option<f32>,
}

/// Where the rows' scroll offset goes, given the view as last drawn (`offset`,
/// `height`), the distance from one row's top to the next's (`pitch`), a drag's
/// pointer with the view's top and bottom, and a row to bring into view. Plain
/// arithmetic, tested without a window.
fn scroll_offset(
    (offset, height): (f32, f32),
    pitch: f32,
    dragged_at: Option<(f32, f32, f32)>,
    bring_into_view: Option<usize>,
) -> ScrollTo {
    let edge = dragged_at.and_then(|(y, top, bottom)| {
        let near = pitch * 1.5;
        let step = if y < top + near {
            -pitch * 0.5
        } else if y > bottom - near {
            pitch * 0.5
        } else {
            return None;
        };
        Some((offset + step).max(0.0))
    });
    let row = bring_into_view.and_then(|k| {
        let top = k as f32 * pitch;
        if top < offset {
            Some(top)
        } else if top + pitch > offset + height {
            Some(top + pitch - height)
        } else {
            None
        }
    });
    ScrollTo { edge, row }
}

/// The ids of rows `a` to `b`, both included, in either order.
fn range_ids(doc: &kiln_core::LevelDocument, rows: &[Row], a: usize, b: usize) -> Vec<String> {
    let (lo, hi) = (a.min(b), a.max(b));
    rows[lo..=hi].iter().map(|r| r.id(doc).to_owned()).collect()
}

/// Arrow keys while the tree has focus: up and down move the selection (with Shift
/// they extend it), Home and End go to the ends, left closes a folder or goes to the
/// parent, right opens a folder or goes to its first child, Enter frames the
/// selection.
fn keyboard(ui: &egui::Ui, editor: &Editor, state: &mut SceneTreeState, actions: &mut Vec<Action>) {
    let Some(level) = editor.level() else { return };
    let doc = &level.doc;
    let pressed = |key| ui.input(|i| i.key_pressed(key));
    let (up, down, left, right) = (
        pressed(Key::ArrowUp),
        pressed(Key::ArrowDown),
        pressed(Key::ArrowLeft),
        pressed(Key::ArrowRight),
    );
    let (home, end, enter) = (pressed(Key::Home), pressed(Key::End), pressed(Key::Enter));
    if !(up || down || left || right || home || end || enter) {
        return;
    }
    let shift = ui.input(|i| i.modifiers.shift);
    let rows = state.rows.rows();
    let Some(last) = rows.len().checked_sub(1) else {
        return;
    };
    if enter {
        actions.push(Action::Run(UiCommand::FrameSelection));
        return;
    }
    let selection = editor.selection();
    let current = state
        .cursor
        .as_deref()
        .filter(|c| selection.iter().any(|s| s == c))
        .or(selection.last().map(String::as_str))
        .and_then(|id| state.rows.position(doc, id));
    let target = match current {
        None if up || end => last,
        None => 0,
        Some(_) if home => 0,
        Some(_) if end => last,
        Some(k) if up => k.saturating_sub(1),
        Some(k) if down => (k + 1).min(last),
        Some(k) if left => match (rows[k].folder, rows[k].parent) {
            (Some(true), _) => {
                state.openness.set(rows[k].id(doc), false);
                return;
            }
            (_, Some(parent)) => parent as usize,
            (_, None) => return,
        },
        Some(k) => match rows[k].folder {
            Some(false) => {
                state.openness.set(rows[k].id(doc), true);
                return;
            }
            Some(true) if k < last && rows[k + 1].parent == Some(k as u32) => k + 1,
            _ => return,
        },
    };
    let id = rows[target].id(doc).to_owned();
    let ids = match state
        .anchor
        .as_deref()
        .and_then(|a| state.rows.position(doc, a))
    {
        Some(anchor) if shift && !(left || right) => range_ids(doc, rows, anchor, target),
        _ => {
            state.anchor = Some(id.clone());
            vec![id.clone()]
        }
    };
    state.cursor = Some(id);
    state.scroll_to = Some(target);
    actions.push(Action::Select(ids));
}

/// Where a drop at `pointer` would go, among the rows drawn this frame.
fn drop_target(pointer: Pos2, drawn: &[(usize, Rect)]) -> Option<Drop> {
    for &(k, rect) in drawn {
        if rect.y_range().contains(pointer.y) {
            let t = (pointer.y - rect.top()) / rect.height().max(1.0);
            return Some(if t < 0.25 {
                Drop::Before(k)
            } else if t > 0.75 {
                Drop::After(k)
            } else {
                Drop::Into(k)
            });
        }
    }
    let below_all = drawn.last().is_none_or(|&(_, r)| pointer.y > r.bottom());
    below_all.then_some(Drop::Roots)
}

/// The reparent a drop makes, or `None` where it cannot go: onto a prefab part, or
/// into one of the dragged entities or below one.
fn drop_action(editor: &Editor, rows: &[Row], dragged: &[String], drop: &Drop) -> Option<Action> {
    let level = editor.level()?;
    let doc = &level.doc;
    let entity_of = |k: usize| match rows[k].item {
        RowItem::Entity(i) => Some(i),
        RowItem::Part { .. } => None,
    };
    let dragged_indices: Vec<usize> = dragged
        .iter()
        .filter_map(|id| level.entity_position(id))
        .collect();
    let inside_dragged = |i: usize| {
        dragged_indices
            .iter()
            .any(|&d| editor.tree().is_within(i, d))
    };
    let parent_of = |k: usize| {
        let p = rows[k].parent? as usize;
        entity_of(p)
    };
    let (parent, before) = match *drop {
        Drop::Roots => (None, None),
        Drop::Into(k) => (Some(entity_of(k)?), None),
        Drop::Before(k) => {
            entity_of(k)?;
            (parent_of(k), Some(rows[k].id(doc).to_owned()))
        }
        Drop::After(k) => {
            entity_of(k)?;
            (parent_of(k), next_sibling(editor, rows[k].id(doc)))
        }
    };
    if parent.is_some_and(inside_dragged) {
        return None;
    }
    Some(Action::Reparent {
        entities: dragged.to_vec(),
        parent: parent.map(|p| doc.entities[p].id.clone()),
        before,
    })
}

/// While entities are dragged: shows where they would go and, on release over the
/// tree, moves them there.
fn drag_and_drop(
    ui: &egui::Ui,
    editor: &Editor,
    state: &mut SceneTreeState,
    view: Rect,
    drawn: &[(usize, Rect)],
    actions: &mut Vec<Action>,
) {
    let Some(dragged) = &state.dragging else {
        return;
    };
    let (pointer, down) = ui.input(|i| (i.pointer.latest_pos(), i.pointer.primary_down()));
    let drop = pointer
        .filter(|p| view.contains(*p))
        .and_then(|p| drop_target(p, drawn));
    let action = drop
        .as_ref()
        .and_then(|d| drop_action(editor, state.rows.rows(), dragged, d));
    if !down {
        if let Some(action) = action {
            actions.push(action);
            if !dragged.iter().all(|d| editor.selection().contains(d)) {
                if let [one] = dragged.as_slice() {
                    state.anchor = Some(one.clone());
                    state.cursor = Some(one.clone());
                }
                actions.push(Action::Select(dragged.clone()));
            }
        }
        state.dragging = None;
        return;
    }
    let stroke = Stroke::new(2.0, ui.visuals().selection.stroke.color);
    let rect_of = |k: usize| drawn.iter().find(|(d, _)| *d == k).map(|(_, r)| *r);
    let line = |y: f32| {
        ui.painter().hline(view.x_range(), y, stroke);
    };
    match (&drop, &action) {
        (Some(Drop::Before(k)), Some(_)) => rect_of(*k).into_iter().for_each(|r| line(r.top())),
        (Some(Drop::After(k)), Some(_)) => rect_of(*k).into_iter().for_each(|r| line(r.bottom())),
        (Some(Drop::Into(k)), Some(_)) => rect_of(*k).into_iter().for_each(|r| {
            ui.painter()
                .rect_stroke(r, 2.0, stroke, egui::StrokeKind::Inside);
        }),
        (Some(Drop::Roots), Some(_)) => line(drawn.last().map_or(view.top(), |(_, r)| r.bottom())),
        _ => {}
    }
    ui.ctx().set_cursor_icon(if action.is_some() {
        egui::CursorIcon::Grabbing
    } else {
        egui::CursorIcon::NoDrop
    });
    if let Some(p) = pointer {
        let text = match dragged.as_slice() {
            [one] => editor.entity(one).map_or(one.clone(), |e| {
                if e.name.is_empty() {
                    e.id.clone()
                } else {
                    e.name.clone()
                }
            }),
            many => format!("{} entities", many.len()),
        };
        let painter = ui.ctx().layer_painter(egui::LayerId::new(
            egui::Order::Tooltip,
            ui.scope_id().with("scene tree drag"),
        ));
        painter.text(
            p + egui::vec2(14.0, 4.0),
            egui::Align2::LEFT_TOP,
            text,
            egui::TextStyle::Button.resolve(ui.style()),
            ui.visuals().strong_text_color(),
        );
    }
}

/// Opens the folders above each selected entity or part, so that a selection made
/// elsewhere (a click in the viewport) is shown.
fn reveal_selection(editor: &Editor, state: &mut SceneTreeState) {
    let Some(level) = editor.level() else { return };
    let doc = &level.doc;
    let selection = editor.selection();
    let entities = selection
        .iter()
        .map(|id| crate::editor::document::split_part(id).map_or(id.as_str(), |(e, _)| e));
    for index in entities.filter_map(|id| level.entity_position(id)) {
        let mut up = editor.tree().parent[index];
        while let Some(p) = up {
            state
                .openness
                .reveal(&doc.entities[p].id, rows::open_by_default(false));
            up = editor.tree().parent[p];
        }
    }
    // A part: its instance, the parts above it in its unit, and the nested
    // instances on the way.
    for id in selection.iter().filter(|id| prefab_parts::is_part(id)) {
        for row in prefab_parts::rows_above(doc, level.prefabs(), id) {
            let is_part = prefab_parts::is_part(&row);
            state.openness.reveal(&row, rows::open_by_default(is_part));
        }
    }
}

/// Lays out and paints one row; returns its rect and its response.
fn draw_row(
    ui: &mut egui::Ui,
    tree_id: egui::Id,
    doc: &kiln_core::LevelDocument,
    row: &Row,
    selected: bool,
    focused: bool,
) -> (Rect, egui::Response) {
    let text: egui::WidgetText = match &row.item {
        RowItem::Entity(i) => {
            let e = &doc.entities[*i];
            let name = if e.name.is_empty() { &e.id } else { &e.name };
            if e.prefab.is_some() {
                format!("📦 {name}").into()
            } else {
                name.as_str().into()
            }
        }
        RowItem::Part { label, .. } => egui::RichText::new(label)
            .italics()
            .color(egui::Color32::from_rgb(120, 170, 230))
            .into(),
    };
    let indent = ui.spacing().indent;
    let icon_width = ui.spacing().icon_width;
    let text_left = indent * row.depth as f32 + icon_width + 4.0;
    let galley = text.into_galley(
        ui,
        Some(egui::TextWrapMode::Extend),
        f32::INFINITY,
        egui::TextStyle::Button,
    );
    let width = ui.available_width().max(text_left + galley.size().x + 8.0);
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(width, ui.spacing().interact_size.y),
        Sense::hover(),
    );
    let response = ui.interact(rect, tree_id.with(row.id(doc)), Sense::click_and_drag());
    let label = galley.text().to_owned();
    response.widget_info(|| WidgetInfo::selected(Role::TreeItem, true, selected, &label));
    if !ui.is_rect_visible(rect) {
        return (rect, response);
    }
    let visuals = ui.visuals();
    if selected {
        let fill = if focused {
            visuals.selection.bg_fill
        } else {
            visuals.widgets.inactive.weak_bg_fill
        };
        ui.painter().rect_filled(rect, 2.0, fill);
    } else if response.hovered() {
        ui.painter()
            .rect_filled(rect, 2.0, visuals.widgets.hovered.weak_bg_fill);
    }
    let text_color = if selected && focused {
        visuals.selection.stroke.color
    } else {
        visuals.text_color()
    };
    if let Some(open) = row.folder {
        let center = Pos2::new(
            rect.left() + indent * row.depth as f32 + icon_width * 0.5,
            rect.center().y,
        );
        let r = icon_width * 0.3;
        let points = if open {
            vec![
                center + egui::vec2(-r, -r * 0.6),
                center + egui::vec2(r, -r * 0.6),
                center + egui::vec2(0.0, r * 0.7),
            ]
        } else {
            vec![
                center + egui::vec2(-r * 0.6, -r),
                center + egui::vec2(r * 0.7, 0.0),
                center + egui::vec2(-r * 0.6, r),
            ]
        };
        ui.painter().add(egui::Shape::convex_polygon(
            points,
            visuals.widgets.inactive.fg_stroke.color,
            Stroke::NONE,
        ));
    }
    let text_pos = Pos2::new(
        rect.left() + text_left,
        rect.center().y - galley.size().y * 0.5,
    );
    ui.painter().galley(text_pos, galley, text_color);
    (rect, response)
}

/// The eye and the lock at the right end of a row: shown while the row is hovered
/// or while they are on (hidden, locked). A click hides or shows the entity with
/// what is below it in the viewport, or locks it against picking there.
fn row_toggles(
    ui: &egui::Ui,
    tree_id: egui::Id,
    rect: Rect,
    (id, row): (&str, &egui::Response),
    (hidden, locked): (bool, bool),
    actions: &mut Vec<Action>,
) {
    let right = rect.right().min(ui.clip_rect().right()) - 4.0;
    let size = egui::vec2(18.0, rect.height());
    let toggles = [
        (0, hidden, if hidden { "Show" } else { "Hide" }, "👁"),
        (1, locked, if locked { "Unlock" } else { "Lock" }, "🔒"),
    ];
    for (slot, on, verb, icon) in toggles {
        let at = Rect::from_min_size(
            Pos2::new(right - size.x * (2 - slot) as f32, rect.top()),
            size,
        );
        let response = ui.interact(at, tree_id.with((id, slot)), Sense::click());
        let label = format!("{verb} {id}");
        response.widget_info(|| WidgetInfo::labeled(Role::Button, true, &label));
        let response = response.on_hover_text(match slot {
            0 => "Hide or show it and what is below it in the viewport (H, Alt+H)",
            _ => "Lock it against picking in the viewport, or unlock it (Ctrl+L)",
        });
        if on || row.hovered() || response.hovered() {
            let colour = if on {
                ui.visuals().warn_fg_color
            } else {
                ui.visuals().weak_text_color()
            };
            ui.painter().text(
                at.center(),
                egui::Align2::CENTER_CENTER,
                icon,
                egui::FontId::proportional(12.0),
                colour,
            );
        }
        if response.clicked() {
            actions.push(match slot {
                0 => Action::SetHidden {
                    id: id.to_owned(),
                    hidden: !on,
                },
                _ => Action::SetLocked {
                    id: id.to_owned(),
                    locked: !on,
                },
            });
        }
    }
}

/// Clicks on one row: the triangle opens and closes it; a click selects it, with
/// Ctrl adds or removes it, with Shift selects the range from the anchor; a double
/// click frames the selection; a drag of a level entity starts moving it (with the
/// rest of the selection, if it was selected).
#[allow(clippy::too_many_arguments)]
fn row_input(
    ui: &egui::Ui,
    tree_id: egui::Id,
    editor: &Editor,
    state: &mut SceneTreeState,
    k: usize,
    rect: Rect,
    response: &egui::Response,
    actions: &mut Vec<Action>,
) {
    let Some(level) = editor.level() else { return };
    let doc = &level.doc;
    let row = &state.rows.rows()[k];
    let id = row.id(doc).to_owned();
    if response.clicked() || response.drag_started() {
        ui.memory_mut(|m| m.request_focus(tree_id));
    }
    if response.drag_started() {
        // What an entity field in the inspector takes when the row is dropped on it.
        egui::DragAndDrop::set_payload(ui.ctx(), DraggedEntity(id.clone()));
    }
    if response.drag_started() && !row.is_part() {
        let selection = editor.selection();
        let dragged: Vec<String> = if selection.contains(&id) {
            selection
                .iter()
                .filter(|s| !prefab_parts::is_part(s))
                .cloned()
                .collect()
        } else {
            // A row that was not selected is selected when it is dropped in the
            // tree (what moved is then what the inspector and F2 act on), not
            // when the drag starts: the inspector keeps showing the entity whose
            // entity field the row may be dropped on, as in Unity.
            vec![id.clone()]
        };
        state.dragging = Some(dragged);
    }
    if response.double_clicked() {
        actions.push(Action::Run(UiCommand::FrameSelection));
        return;
    }
    if !response.clicked() {
        return;
    }
    let on_triangle = response.interact_pointer_pos().is_some_and(|p| {
        p.x < rect.left() + ui.spacing().indent * row.depth as f32 + ui.spacing().icon_width + 2.0
    });
    if let (Some(open), true) = (row.folder, on_triangle) {
        state.openness.set(&id, !open);
        return;
    }
    let modifiers = ui.input(|i| i.modifiers);
    let ids = if modifiers.shift {
        let from = state
            .anchor
            .as_deref()
            .and_then(|a| state.rows.position(doc, a))
            .unwrap_or(k);
        state.cursor = Some(id);
        range_ids(doc, state.rows.rows(), from, k)
    } else if modifiers.command {
        let mut ids = editor.selection().to_vec();
        match ids.iter().position(|s| *s == id) {
            Some(at) => {
                ids.remove(at);
            }
            None => ids.push(id.clone()),
        }
        state.anchor = Some(id.clone());
        state.cursor = Some(id);
        ids
    } else {
        state.anchor = Some(id.clone());
        state.cursor = Some(id.clone());
        vec![id]
    };
    actions.push(Action::Select(ids));
}

fn next_sibling(editor: &Editor, sibling: &str) -> Option<String> {
    let doc = &editor.level().as_ref()?.doc;
    let s = doc.entities.iter().position(|e| e.id == sibling)?;
    let siblings = match editor.tree().parent[s] {
        Some(p) => &editor.tree().children[p],
        None => &editor.tree().roots,
    };
    let k = siblings.iter().position(|&c| c == s)?;
    siblings.get(k + 1).map(|&c| doc.entities[c].id.clone())
}

#[cfg(test)]
mod scroll_tests {
    use super::*;

    /// Rows 20 apart in a view 100 high scrolled to 200 (rows 10 to 14 in view).
    const VIEW: (f32, f32) = (200.0, 100.0);

    #[test]
    fn a_row_in_view_stays_and_one_outside_is_brought_to_the_nearer_edge() {
        assert_eq!(
            scroll_offset(VIEW, 20.0, None, Some(12)),
            ScrollTo::default()
        );
        let above = scroll_offset(VIEW, 20.0, None, Some(3));
        assert_eq!(above.row, Some(60.0), "row 3 at the top");
        let below = scroll_offset(VIEW, 20.0, None, Some(20));
        assert_eq!(below.row, Some(320.0), "row 20 just in view at the bottom");
    }

    #[test]
    fn a_drag_near_an_edge_scrolls_half_a_row_and_never_above_the_top() {
        let (top, bottom) = (0.0, 100.0);
        assert_eq!(
            scroll_offset(VIEW, 20.0, Some((50.0, top, bottom)), None).edge,
            None
        );
        assert_eq!(
            scroll_offset(VIEW, 20.0, Some((5.0, top, bottom)), None).edge,
            Some(190.0)
        );
        assert_eq!(
            scroll_offset(VIEW, 20.0, Some((95.0, top, bottom)), None).edge,
            Some(210.0)
        );
        let at_start = scroll_offset((4.0, 100.0), 20.0, Some((5.0, top, bottom)), None);
        assert_eq!(at_start.edge, Some(0.0));
    }
}
