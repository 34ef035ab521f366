//! The viewport's toolbar along its top: the handle's tool, its axes (world or
//! local) and pivot, snapping for move, rotate and scale with their steps (as
//! Unity's Grid and Snap overlay and Godot's toolbar show them), the view, and the
//! simulation's buttons. It wraps onto a second line in a narrow viewport.
//! Snapping is kept in the settings; Ctrl inverts it during a drag.

use egui::{Color32, Rect};

use super::{Camera, Tool};
use crate::editor::actions::{Action, UiCommand};
use crate::editor::settings::Settings;

/// Draws the toolbar in the strip `bar` of the viewport.
pub(super) fn show(
    ui: &mut egui::Ui,
    bar: Rect,
    (tool, playing): (Tool, bool),
    camera: &Camera,
    settings: &mut Settings,
    actions: &mut Vec<Action>,
) {
    ui.scope_builder(egui::UiBuilder::new().max_rect(bar), |ui| {
        egui::Frame::new()
            .fill(Color32::from_black_alpha(110))
            .corner_radius(4.0)
            .inner_margin(egui::Margin::symmetric(6, 2))
            .show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    for (t, name, command, what) in [
                        (Tool::Move, "Move", UiCommand::MoveTool, "Move the selection"),
                        (Tool::Rotate, "Rotate", UiCommand::RotateTool, "Rotate the selection"),
                        (Tool::Scale, "Scale", UiCommand::ScaleTool, "Scale the selection"),
                    ] {
                        if ui
                            .selectable_label(tool == t, name)
                            .on_hover_text(command.hover_text(ui.ctx(), what))
                            .clicked()
                        {
                            actions.push(Action::Run(command));
                        }
                    }
                    ui.separator();
                    let axes = if settings.local_space { "Local" } else { "World" };
                    if ui
                        .button(axes)
                        .on_hover_text(UiCommand::ToggleSpace.hover_text(
                            ui.ctx(),
                            "Move and rotate along the world's axes or the entity's own",
                        ))
                        .clicked()
                    {
                        actions.push(Action::Run(UiCommand::ToggleSpace));
                    }
                    let pivot = if settings.about_centre { "Centre" } else { "Pivot" };
                    if ui
                        .button(pivot)
                        .on_hover_text(
                            "Several entities rotate and scale about each one's pivot, or about the centre of the selection",
                        )
                        .clicked()
                    {
                        settings.about_centre = !settings.about_centre;
                    }
                    ui.separator();
                    snap(ui, "Snap move", &mut settings.snap_move_on, &mut settings.snap_move, 0.01..=100.0, " m");
                    snap(ui, "Snap rotate", &mut settings.snap_rotate_on, &mut settings.snap_rotate, 0.1..=180.0, "°");
                    snap(ui, "Snap scale", &mut settings.snap_scale_on, &mut settings.snap_scale, 0.001..=10.0, "");
                    ui.separator();
                    ui.menu_button(camera.view_name(), |ui| {
                        for c in [
                            UiCommand::PerspectiveView,
                            UiCommand::TopView,
                            UiCommand::FrontView,
                            UiCommand::SideView,
                        ] {
                            let label = match c.shortcut() {
                                Some(sc) => format!("{}  ({})", c.label(), ui.ctx().format_shortcut(&sc)),
                                None => c.label().to_owned(),
                            };
                            if ui.button(label).clicked() {
                                actions.push(Action::Run(c));
                                ui.close();
                            }
                        }
                        ui.separator();
                        ui.label("Ctrl+Shift+1…9 keeps a camera bookmark, Ctrl+1…9 goes back to it");
                    });
                    ui.separator();
                    simulation(ui, playing, actions);
                });
            });
    });
}

/// A snapping toggle with its step beside it.
fn snap(
    ui: &mut egui::Ui,
    name: &str,
    on: &mut bool,
    step: &mut f32,
    range: std::ops::RangeInclusive<f32>,
    unit: &str,
) {
    ui.toggle_value(on, name).on_hover_text(format!(
        "{name} to steps of the size beside it (hold Ctrl while dragging to do the opposite)"
    ));
    ui.add(
        egui::DragValue::new(step)
            .range(range)
            .speed(0.05)
            .suffix(unit)
            .max_decimals(3),
    )
    .on_hover_text(format!("{name}: step"));
}

/// Play or pause, step, restart.
fn simulation(ui: &mut egui::Ui, playing: bool, actions: &mut Vec<Action>) {
    for (label, command, what) in [
        (
            if playing { "⏸ Pause" } else { "▶ Play" },
            UiCommand::PlayPause,
            "Run or pause the simulation",
        ),
        ("⏭ Step", UiCommand::Step, "Advance one frame"),
        (
            "⟲ Restart",
            UiCommand::Restart,
            "Respawn the level from its compiled blob",
        ),
    ] {
        if ui
            .button(label)
            .on_hover_text(command.hover_text(ui.ctx(), what))
            .clicked()
        {
            actions.push(Action::Run(command));
        }
    }
}
