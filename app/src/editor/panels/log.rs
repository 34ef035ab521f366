//! The log: everything the editor reported, newest last.

use crate::editor::model::{Editor, Severity};

/// Shows the log.
pub fn show(ui: &mut egui::Ui, editor: &Editor) {
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .stick_to_bottom(true)
        .show(ui, |ui| {
            for line in editor.log() {
                let color = match line.severity {
                    Severity::Error => egui::Color32::from_rgb(220, 80, 70),
                    Severity::Warning => egui::Color32::from_rgb(220, 170, 60),
                    Severity::Info => ui.visuals().text_color(),
                };
                ui.colored_label(color, &line.text);
            }
        });
}
