//! The menu bar: every command by its name from [`UiCommand::label`], with the
//! shortcut [`UiCommand::shortcut`] gives it, so menus, shortcuts and tests name
//! each command alike.

use super::actions::{Action, UiCommand};
use super::model::Editor;
use super::settings::Settings;

/// The menu bar of the window.
pub fn show(
    ui: &mut egui::Ui,
    editor: Option<&Editor>,
    settings: &mut Settings,
    actions: &mut Vec<Action>,
) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            command_button(ui, UiCommand::NewProject, actions);
            if ui.button("Open project…").clicked() {
                let purpose = crate::editor::file_picker::Purpose::OpenProject;
                actions.push(Action::ChooseFiles(purpose));
                ui.close();
            }
            ui.menu_button("Recent projects", |ui| {
                for p in settings.recent_projects.clone() {
                    if ui.button(p.display().to_string()).clicked() {
                        actions.push(Action::OpenProject(p));
                        ui.close();
                    }
                }
            });
            if let Some(editor) = editor {
                ui.menu_button("Open level", |ui| {
                    for l in editor.files().levels() {
                        if ui.button(l).clicked() {
                            actions.push(Action::OpenLevel(l.clone()));
                            ui.close();
                        }
                    }
                });
            }
            command_button(ui, UiCommand::Save, actions);
            command_button(ui, UiCommand::Import, actions);
            ui.separator();
            if ui.button("Quit").clicked() {
                actions.push(Action::Quit);
            }
        });
        ui.menu_button("Edit", |ui| {
            let history = editor.map(Editor::history);
            let labels = [
                (UiCommand::Undo, history.and_then(|h| h.undo_label())),
                (UiCommand::Redo, history.and_then(|h| h.redo_label())),
            ];
            for (c, what) in labels {
                // "Undo rename to "Rock"": the menu says what the step is.
                let text = what
                    .as_ref()
                    .map_or_else(|| c.label().to_owned(), |w| format!("{} {w}", c.label()));
                let mut button = egui::Button::new(text);
                if let Some(sc) = c.shortcut() {
                    button = button.shortcut_text(ui.ctx().format_shortcut(&sc));
                }
                if ui.add_enabled(what.is_some(), button).clicked() {
                    actions.push(Action::Run(c));
                    ui.close();
                }
            }
            ui.separator();
            for c in [
                UiCommand::NewEntity,
                UiCommand::Duplicate,
                UiCommand::Cut,
                UiCommand::Copy,
                UiCommand::Paste,
                UiCommand::BeginRename,
                UiCommand::Delete,
            ] {
                command_button(ui, c, actions);
            }
            ui.menu_button("Hierarchy", |ui| {
                for c in [
                    UiCommand::MoveUp,
                    UiCommand::MoveDown,
                    UiCommand::Indent,
                    UiCommand::Outdent,
                ] {
                    command_button(ui, c, actions);
                }
            });
            ui.separator();
            command_button(ui, UiCommand::CreatePrefab, actions);
        });
        ui.menu_button("View", |ui| {
            for c in [
                UiCommand::MoveTool,
                UiCommand::RotateTool,
                UiCommand::ScaleTool,
                UiCommand::ToggleSpace,
                UiCommand::DropToFloor,
            ] {
                command_button(ui, c, actions);
            }
            ui.separator();
            for c in [
                UiCommand::FrameSelection,
                UiCommand::PerspectiveView,
                UiCommand::TopView,
                UiCommand::FrontView,
                UiCommand::SideView,
            ] {
                command_button(ui, c, actions);
            }
            ui.separator();
            for c in [
                UiCommand::SelectChildren,
                UiCommand::Hide,
                UiCommand::Isolate,
                UiCommand::ShowAll,
                UiCommand::ToggleLock,
            ] {
                command_button(ui, c, actions);
            }
            ui.separator();
            command_button(ui, UiCommand::RefreshProblems, actions);
            ui.checkbox(&mut settings.show_grid, "Grid");
            ui.checkbox(&mut settings.shadows, "Shadows");
        });
        ui.menu_button("Simulation", |ui| {
            for c in [
                UiCommand::PlayPause,
                UiCommand::Step,
                UiCommand::Restart,
                UiCommand::ReloadPlugins,
                UiCommand::TrustProject,
            ] {
                command_button(ui, c, actions);
            }
            ui.separator();
            ui.horizontal(|ui| {
                ui.label("Frame budget");
                ui.add(
                    egui::DragValue::new(&mut settings.frame_budget)
                        .range(0.1..=600.0)
                        .speed(0.1)
                        .suffix(" s"),
                )
                .on_hover_text(
                    "The most one frame of Play may take: a plugin still running after it is stopped, and the level spawned again without it, paused",
                );
            });
        });
    });
}

/// A menu entry for a command, with its shortcut shown.
fn command_button(ui: &mut egui::Ui, c: UiCommand, actions: &mut Vec<Action>) {
    let mut button = egui::Button::new(c.label());
    if let Some(sc) = c.shortcut() {
        button = button.shortcut_text(ui.ctx().format_shortcut(&sc));
    }
    if ui.add(button).clicked() {
        actions.push(Action::Run(c));
        ui.close();
    }
}
