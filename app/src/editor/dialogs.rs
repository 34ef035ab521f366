//! The editor's modal dialogs: each asks one question the editor's state holds
//! (unsaved edits before leaving the level, the level changed on disk, trusting
//! the project's plugins, edits recovered from a crash) or shows a level opening,
//! and answers with actions. Functions of the state, as the panels are.

use std::time::Duration;

use super::actions::{Action, UnsavedAnswer};
use super::model::Editor;
use super::model::level_loading::LoadStage;

/// Whether the editor waits on one of these questions: shortcuts stay off then.
pub fn asked(editor: &Editor) -> bool {
    editor.level().is_some_and(|l| l.recovery().is_some())
        || editor.disk().disk_conflict().is_some()
        || editor.trust_question().is_some()
        || editor.files().import_question().is_some()
        || editor.opening().is_some()
}

/// The "save changes?" dialog.
pub fn unsaved(
    ctx: &egui::Context,
    editor: Option<&Editor>,
    pending: bool,
    actions: &mut Vec<Action>,
) {
    let (true, Some(editor)) = (pending, editor) else {
        return;
    };
    let file = editor.level().map_or("", |l| l.file.as_str());
    egui::Modal::new(egui::Id::unique("kiln unsaved changes")).show(ctx, |ui| {
        ui.heading("Unsaved changes");
        ui.label(format!("{file} has changes that are not saved."));
        ui.horizontal(|ui| {
            if ui.button("Save").clicked() {
                actions.push(Action::AnswerUnsaved(Some(UnsavedAnswer::Save)));
            }
            if ui.button("Discard").clicked() {
                actions.push(Action::AnswerUnsaved(Some(UnsavedAnswer::Discard)));
            }
            if ui.button("Cancel").clicked() {
                actions.push(Action::AnswerUnsaved(None));
            }
        });
    });
}

/// Asks which version to keep when the open level changed on disk while it had
/// unsaved edits.
pub fn disk_conflict(ctx: &egui::Context, editor: Option<&Editor>, actions: &mut Vec<Action>) {
    let Some(editor) = editor else {
        return;
    };
    if editor.disk().disk_conflict().is_none() {
        return;
    }
    let file = editor.level().map_or("", |l| l.file.as_str());
    egui::Modal::new(egui::Id::unique("kiln disk conflict")).show(ctx, |ui| {
        ui.heading("The level changed on disk");
        ui.label(format!(
            "{file} was changed by another program while you have unsaved edits."
        ));
        ui.horizontal(|ui| {
            if ui.button("Keep my edits").clicked() {
                actions.push(Action::ResolveDiskConflict { take_disk: false });
            }
            if ui
                .button("Load the version on disk")
                .on_hover_text("Your edits stay undoable")
                .clicked()
            {
                actions.push(Action::ResolveDiskConflict { take_disk: true });
            }
        });
    });
}

/// Asks whether the project is trusted to build and load its plugins, naming
/// each and what of it would run.
pub fn trust(ctx: &egui::Context, editor: Option<&Editor>, actions: &mut Vec<Action>) {
    let Some(question) = editor.and_then(Editor::trust_question) else {
        return;
    };
    egui::Modal::new(egui::Id::unique("kiln trust")).show(ctx, |ui| {
        ui.set_max_width(520.0);
        ui.heading("Trust this project's plugins?");
        ui.label(
            "This project has plugins: code that Kiln builds and runs inside the editor, \
             with your rights on this machine. Trust the project only if you trust \
             where it comes from.",
        );
        ui.add_space(4.0);
        for (entry, what) in &question.plugins {
            ui.label(format!("• {entry}: {what}"));
        }
        ui.add_space(4.0);
        ui.label(
            "Without them the project opens all the same; components of their types \
             are shown but not run. Your answer is remembered for this project while \
             its plugins stay as they are (Simulation > Trust this project… asks again).",
        );
        ui.horizontal(|ui| {
            if ui.button("Trust and load plugins").clicked() {
                actions.push(Action::AnswerTrust {
                    trust: true,
                    from_sources: false,
                });
            }
            if question.can_build_shipped
                && ui
                    .button("Trust, but build from sources")
                    .on_hover_text(
                        "Build each plugin here from its sources (this machine can), \
                         never loading a library shipped with the project",
                    )
                    .clicked()
            {
                actions.push(Action::AnswerTrust {
                    trust: true,
                    from_sources: true,
                });
            }
            if ui.button("Open without plugins").clicked() {
                actions.push(Action::AnswerTrust {
                    trust: false,
                    from_sources: false,
                });
            }
        });
    });
}

/// While a large level opens on a worker thread: its stage, size and time, over a
/// window that takes no input until it is open.
pub fn opening(ctx: &egui::Context, editor: Option<&Editor>) {
    let Some(status) = editor.and_then(Editor::opening) else {
        return;
    };
    egui::Modal::new(egui::Id::unique("kiln opening level")).show(ctx, |ui| {
        ui.heading(format!("Opening {}", status.file));
        // The stage's share of the whole, crept through while it lasts (no stage
        // reports its own progress), so the bar is seen to move.
        let creep = 1.0 - (-status.seconds / 8.0).exp();
        let next = match status.stage {
            LoadStage::Reading => LoadStage::Parsing.fraction(),
            LoadStage::Parsing => LoadStage::Compiling.fraction(),
            LoadStage::Compiling => LoadStage::Spawning.fraction(),
            LoadStage::Spawning => 1.0,
        };
        let start = status.stage.fraction();
        let bar = egui::ProgressBar::new(start + (next - start) * creep * 0.9)
            .desired_width(360.0)
            .text(format!("{}…", status.stage.describe()))
            .animate(true);
        ui.add(bar);
        ui.label(format!(
            "{:.0} MB, {:.1} s",
            status.bytes as f64 / 1e6,
            status.seconds
        ));
    });
    // The worker wakes the window at each stage; this keeps the time moving.
    ctx.request_repaint_after(Duration::from_millis(250));
}

/// Offers to restore unsaved edits recovered from a crash.
pub fn recovery(ctx: &egui::Context, editor: Option<&Editor>, actions: &mut Vec<Action>) {
    let Some(editor) = editor else {
        return;
    };
    if editor.level().is_none_or(|l| l.recovery().is_none()) {
        return;
    }
    let file = editor.level().map_or("", |l| l.file.as_str());
    egui::Modal::new(egui::Id::unique("kiln recovery")).show(ctx, |ui| {
        ui.heading("Recover unsaved edits?");
        ui.label(format!(
            "Kiln closed without saving {file}. Its last unsaved edits were kept."
        ));
        ui.horizontal(|ui| {
            if ui.button("Restore").clicked() {
                actions.push(Action::ResolveRecovery { restore: true });
            }
            if ui.button("Discard").clicked() {
                actions.push(Action::ResolveRecovery { restore: false });
            }
        });
    });
}
