//! The status bar: project, level, unsaved state, entity count, simulation state and
//! the last compile and spawn times.

use crate::editor::model::Editor;

/// Shows the status bar.
pub fn show(ui: &mut egui::Ui, editor: &Editor) {
    ui.horizontal(|ui| {
        ui.label(format!("Project: {}", editor.files().project().name()));
        ui.separator();
        match editor.level() {
            Some(l) => {
                ui.label(format!("Level: {}", l.file));
                if editor.is_dirty() {
                    ui.colored_label(egui::Color32::from_rgb(220, 170, 60), "unsaved");
                } else {
                    ui.label("saved");
                }
            }
            None => {
                ui.label("No level");
            }
        }
        ui.separator();
        ui.label(format!("{} entities", editor.preview().entities.len()));
        ui.separator();
        ui.label(if editor.preview().playing {
            "playing"
        } else {
            "paused"
        });
        ui.separator();
        let t = editor.preview().timing;
        let step = match (t.in_place, t.respawned) {
            (true, _) => "patch".to_owned(),
            (false, Some(p)) => format!("spawn {} + despawn {} entities", p.spawned, p.destroyed),
            (false, None) => "spawn".to_owned(),
        };
        ui.label(format!(
            "compile {:.1} ms, {step} {:.1} ms",
            t.compile_ms, t.spawn_ms
        ));
        if let Some(r) = editor.disk().last_reload() {
            ui.separator();
            ui.label(format!(
                "last reload from disk ({}): detect {:.1} + compile {:.1} + {} {:.1} = {:.1} ms",
                r.path.name(),
                r.detect_ms,
                r.compile_ms,
                r.path.world_step(),
                r.spawn_ms,
                r.detect_ms + r.compile_ms + r.spawn_ms
            ));
        }
        if editor.preview_state().compile_error().is_some() {
            ui.separator();
            let text = if editor.preview().level.is_some() {
                "compile error: showing the last good world"
            } else {
                "compile error: nothing to show yet (see Problems)"
            };
            ui.colored_label(egui::Color32::from_rgb(220, 80, 70), text);
        }
    });
}
