//! Toasts: short messages in the window's corner that leave by themselves.
//!
//! Hand-written (about thirty lines) rather than `egui-notify` 0.24, the crate for
//! egui 0.37, for two reasons found by trying it: it paints each toast's text with
//! a layer painter, so a toast is not a widget and neither a screen reader nor a
//! UI test (`egui_kittest` finds widgets by label) can see it; and it lays a
//! caption out on one line without wrapping, so an error naming a file, line and
//! column runs off the window. Here each toast is a label in a popup frame of
//! bounded width.

use std::time::Duration;

use egui::{Color32, RichText};

use super::model::Severity;

/// The toasts on screen, each with the UI time it first appeared.
#[derive(Default)]
pub(crate) struct Toasts {
    shown: Vec<(Severity, String, Option<f64>)>,
}

impl Toasts {
    /// How long a toast stays, in seconds.
    const SECONDS: f64 = 6.0;

    /// Shows `text` from the next frame on.
    pub(crate) fn push(&mut self, severity: Severity, text: String) {
        self.shown.push((severity, text, None));
    }

    /// Draws the toasts still due, bottom right, and drops the expired ones.
    pub(crate) fn show(&mut self, ctx: &egui::Context) {
        // The UI's clock, not the wall's: the same in the window and in tests.
        let now = ctx.input(|i| i.time);
        for (_, _, at) in &mut self.shown {
            at.get_or_insert(now);
        }
        self.shown
            .retain(|(_, _, at)| at.is_none_or(|t| now - t < Self::SECONDS));
        if self.shown.is_empty() {
            return;
        }
        egui::Area::new(egui::Id::unique("kiln toasts"))
            .anchor(egui::Align2::RIGHT_BOTTOM, [-12.0, -40.0])
            .show(ctx, |ui| {
                for (severity, text, _) in &self.shown {
                    let color = match severity {
                        Severity::Error => Color32::from_rgb(220, 80, 70),
                        Severity::Warning => Color32::from_rgb(220, 170, 60),
                        Severity::Info => ui.visuals().text_color(),
                    };
                    egui::Frame::popup(ui.style()).show(ui, |ui| {
                        ui.set_max_width(420.0);
                        ui.label(RichText::new(text).color(color));
                    });
                }
            });
        // Only while a toast is up: it must leave without the user moving.
        ctx.request_repaint_after(Duration::from_millis(500));
    }
}
