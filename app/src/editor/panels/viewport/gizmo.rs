//! The view-orientation gizmo in the viewport's corner: the world axes as the camera
//! sees them; clicking an axis looks along it (as in Godot and Blender).

use egui::{Color32, Pos2, Rect, Sense, Stroke, pos2, vec2};
use glam::{Mat4, Vec3};

/// The gizmo's radius in points.
const RADIUS: f32 = 38.0;

/// Draws the gizmo in the bottom-right corner of `rect` for a camera whose view
/// matrix is `view`; returns the direction to look along when an axis was clicked.
pub fn show(ui: &mut egui::Ui, rect: Rect, view: &Mat4) -> Option<Vec3> {
    let center = pos2(rect.right() - RADIUS - 14.0, rect.bottom() - RADIUS - 14.0);
    let painter = ui.painter_at(rect);
    painter.circle_filled(center, RADIUS + 8.0, Color32::from_black_alpha(70));
    let axes = [
        (Vec3::X, "X", Color32::from_rgb(230, 80, 80)),
        (Vec3::Y, "Y", Color32::from_rgb(110, 200, 90)),
        (Vec3::Z, "Z", Color32::from_rgb(80, 140, 240)),
    ];
    // Each axis end, positive and negative, with its depth towards the viewer.
    let mut ends: Vec<(Pos2, f32, Vec3, &str, Color32, bool)> = Vec::new();
    for (axis, name, color) in axes {
        for positive in [true, false] {
            let dir = if positive { axis } else { -axis };
            let v = view.transform_vector3(dir);
            let at = center + vec2(v.x, -v.y) * RADIUS;
            ends.push((at, v.z, dir, name, color, positive));
        }
    }
    // Far ends first, so the near ones are on top.
    ends.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut clicked = None;
    for (at, _, dir, name, color, positive) in ends {
        let label = format!("View along {}{name}", if positive { "-" } else { "+" });
        let response = ui
            .interact(
                Rect::from_center_size(at, vec2(18.0, 18.0)),
                ui.scope_id().with(("view gizmo", name, positive)),
                Sense::click(),
            )
            .on_hover_text(&label);
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
        let hovered = response.hovered();
        if positive {
            painter.line_segment([center, at], Stroke::new(2.0, color));
            painter.circle_filled(at, if hovered { 10.0 } else { 8.5 }, color);
            painter.text(
                at,
                egui::Align2::CENTER_CENTER,
                name,
                egui::FontId::proportional(11.0),
                Color32::BLACK,
            );
        } else {
            painter.circle_stroke(at, if hovered { 8.0 } else { 6.5 }, Stroke::new(1.5, color));
        }
        if response.clicked() {
            // The +X circle is the view from +X: looking along -X.
            clicked = Some(-dir);
        }
    }
    clicked
}
