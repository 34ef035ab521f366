//! File > New project…: where the project goes, its name and its template; Create
//! writes it (as `kiln new` does) and opens it.

use std::path::PathBuf;

use crate::editor::actions::Action;
use crate::new_project::Template;

/// The dialog's fields while it is open.
#[derive(Debug, Clone, PartialEq)]
pub struct NewProjectDialog {
    /// The folder the project's folder is made in.
    pub location: String,
    /// The project's name, which is also its folder's.
    pub name: String,
    /// What it starts as.
    pub template: Template,
    /// Why the last Create failed.
    pub error: Option<String>,
}

impl NewProjectDialog {
    /// The dialog with a free name in `location` (the folder the current project is
    /// in, or the home folder).
    pub fn new(location: PathBuf) -> Self {
        Self::named(location, "my_game")
    }

    /// The dialog proposing `base` (or `base_2`, ... the first free) in `location`.
    pub fn named(location: PathBuf, base: &str) -> Self {
        let name = std::iter::once(base.to_owned())
            .chain((2..100).map(|n| format!("{base}_{n}")))
            .find(|n| !location.join(n).exists())
            .unwrap_or_else(|| base.to_owned());
        NewProjectDialog {
            location: location.display().to_string(),
            name,
            template: Template::Empty,
            error: None,
        }
    }

    /// The folder the project will be made in.
    pub fn folder(&self) -> PathBuf {
        PathBuf::from(self.location.trim()).join(self.name.trim())
    }
}

/// Shows the dialog; Create pushes [`Action::CreateProject`], Cancel closes it.
pub fn show(ctx: &egui::Context, dialog: &mut Option<NewProjectDialog>, actions: &mut Vec<Action>) {
    let Some(state) = dialog else { return };
    let mut close = false;
    egui::Modal::new(egui::Id::unique("kiln new project")).show(ctx, |ui| {
        ui.set_width(520.0);
        ui.heading("New project");
        egui::Grid::new("new project fields")
            .num_columns(2)
            .spacing([8.0, 6.0])
            .show(ui, |ui| {
                let label = ui.label("Name");
                ui.add(egui::TextEdit::singleline(&mut state.name).desired_width(360.0))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Location");
                ui.horizontal(|ui| {
                    ui.add(egui::TextEdit::singleline(&mut state.location).desired_width(280.0))
                        .labelled_by(label.id);
                    if ui
                        .button("Browse…")
                        .on_hover_text("Choose the folder the project's folder is made in")
                        .clicked()
                    {
                        let purpose = crate::editor::file_picker::Purpose::ProjectLocation;
                        actions.push(Action::ChooseFiles(purpose));
                    }
                });
                ui.end_row();
            });
        ui.add_space(4.0);
        ui.label("Start from");
        for template in Template::ALL {
            ui.radio_value(&mut state.template, template, template.label())
                .on_hover_text(template.describe());
            ui.indent(template.label(), |ui| ui.weak(template.describe()));
        }
        ui.add_space(4.0);
        ui.weak(format!(
            "The project is made in {}",
            state.folder().display()
        ));
        if let Some(e) = &state.error {
            ui.colored_label(egui::Color32::from_rgb(220, 80, 70), e);
        }
        ui.horizontal(|ui| {
            let ready = !state.name.trim().is_empty() && !state.location.trim().is_empty();
            if ui.add_enabled(ready, egui::Button::new("Create")).clicked() {
                actions.push(Action::CreateProject {
                    dir: state.folder(),
                    template: state.template,
                });
            }
            if ui.button("Cancel").clicked() {
                close = true;
            }
        });
    });
    if close {
        *dialog = None;
    }
}
