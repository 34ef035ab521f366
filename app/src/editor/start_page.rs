//! The start page: what the window shows with no project open (Kiln started from
//! the menu for the first time, or the last project gone). The projects opened
//! before, and the ways to a project: a new one from a template, an existing folder,
//! or a copy of the demo. Kiln never opens a project the user did not choose.

use egui::{Color32, RichText};

use super::actions::{Action, UiCommand};
use super::settings::Settings;

/// Draws the start page into `ui`, pushing what is chosen onto `actions`;
/// `open_error` is why the last project did not open, if it did not.
pub fn show(
    ui: &mut egui::Ui,
    settings: &Settings,
    open_error: Option<&str>,
    actions: &mut Vec<Action>,
) {
    ui.vertical_centered(|ui| {
        ui.add_space(60.0);
        ui.heading(RichText::new("Kiln").size(32.0));
        ui.weak(concat!("version ", env!("CARGO_PKG_VERSION")));
        ui.add_space(12.0);
        if let Some(e) = open_error {
            ui.colored_label(Color32::from_rgb(220, 80, 70), e);
            ui.add_space(8.0);
        }
        ui.horizontal(|ui| {
            // Centred: the three buttons' width is not known before they are drawn.
            ui.add_space((ui.available_width() - 390.0).max(0.0) / 2.0);
            for (command, what) in [
                (UiCommand::NewProject, "Make a project from a template"),
                (
                    UiCommand::TryDemo,
                    "Make a copy of the demo project to look around in",
                ),
            ] {
                if ui
                    .add_sized([125.0, 28.0], egui::Button::new(command.label()))
                    .on_hover_text(command.hover_text(ui.ctx(), what))
                    .clicked()
                {
                    actions.push(Action::Run(command));
                }
            }
            if ui
                .add_sized([125.0, 28.0], egui::Button::new("Open project…"))
                .on_hover_text("Open a folder holding a kiln.project")
                .clicked()
            {
                let purpose = super::file_picker::Purpose::OpenProject;
                actions.push(Action::ChooseFiles(purpose));
            }
        });
        ui.add_space(20.0);
        if settings.recent_projects.is_empty() {
            ui.weak("Projects you open are listed here.");
            return;
        }
        ui.label(RichText::new("Recent projects").strong());
        ui.add_space(4.0);
        for project in &settings.recent_projects {
            let shown = project.display().to_string();
            if project.join(kiln_core::project::PROJECT_FILE).is_file() {
                if ui.link(&shown).on_hover_text("Open this project").clicked() {
                    actions.push(Action::OpenProject(project.clone()));
                }
            } else {
                ui.weak(format!("{shown} (not found)"));
            }
        }
    });
}
