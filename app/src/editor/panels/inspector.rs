//! The inspector: the selected entity's components, with a widget per field built from
//! the component schemas. A drag is one undo step; resource references are pickers of
//! the field's resource type, with a warning when the file is missing.

use egui::{Color32, DragValue, RichText};
use kiln_core::{FieldKind, FieldSchema, ResourcePath};
use serde_json::Value;

use super::BottomTab;
use super::assets::AssetState;
use crate::editor::actions::Action;
use crate::editor::model::Editor;

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn numbers<const N: usize>(v: &Value, default: [f64; N]) -> [f64; N] {
    let mut out = default;
    if let Some(items) = v.as_array() {
        for (o, i) in out.iter_mut().zip(items) {
            *o = i.as_f64().unwrap_or(*o);
        }
    }
    out
}

fn json_numbers(values: &[f64]) -> Value {
    Value::Array(
        values
            .iter()
            .map(|&v| kiln_core::schema::json_f32(v as f32))
            .collect(),
    )
}

/// Shows the inspector for the primary selection.
pub fn show(
    ui: &mut egui::Ui,
    editor: &Editor,
    assets: &mut AssetState,
    bottom: &mut BottomTab,
    actions: &mut Vec<Action>,
) {
    ui.strong("Inspector");
    ui.separator();
    let Some(id) = editor.selection().first() else {
        ui.label("Select an entity in the scene or the viewport.");
        return;
    };
    let Some(entity) = editor.entity(id) else {
        return;
    };
    if editor.selection().len() > 1 {
        ui.label(format!(
            "{} entities selected; showing the first.",
            editor.selection().len()
        ));
    }
    egui::Grid::new("entity header")
        .num_columns(2)
        .show(ui, |ui| {
            ui.label("Id");
            ui.monospace(&entity.id);
            ui.end_row();
            ui.label("Name");
            ui.label(if entity.name.is_empty() {
                "(none)"
            } else {
                &entity.name
            })
            .on_hover_text("F2 renames");
            ui.end_row();
            if let Some(p) = &entity.parent {
                ui.label("Parent");
                ui.monospace(p);
                ui.end_row();
            }
            if let Some(prefab) = &entity.prefab {
                ui.label("Prefab");
                ui.monospace(prefab);
                ui.end_row();
            }
        });
    ui.separator();
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for (component, value) in &entity.components {
                let ty = editor.registry().component(component);
                egui::CollapsingHeader::new(RichText::new(component).strong())
                    .id_salt(("component", component))
                    .default_open(true)
                    .show(ui, |ui| {
                        if ui.small_button("Remove component").clicked() {
                            actions.push(Action::RemoveComponent {
                                entity: id.clone(),
                                component: component.clone(),
                            });
                        }
                        let Some(ty) = ty else {
                            ui.colored_label(
                                Color32::from_rgb(220, 170, 60),
                                "Unknown component type: the level will not compile.",
                            );
                            ui.monospace(value.to_string());
                            return;
                        };
                        let instances: Vec<(Option<usize>, &serde_json::Map<String, Value>)> =
                            match value {
                                Value::Object(m) => vec![(None, m)],
                                Value::Array(items) => items
                                    .iter()
                                    .enumerate()
                                    .filter_map(|(i, v)| Some((Some(i), v.as_object()?)))
                                    .collect(),
                                _ => Vec::new(),
                            };
                        for (instance, fields) in instances {
                            if let Some(i) = instance {
                                ui.label(RichText::new(format!("#{}", i + 1)).weak());
                            }
                            egui::Grid::new(("fields", component, instance))
                                .num_columns(2)
                                .striped(true)
                                .show(ui, |ui| {
                                    for f in &ty.fields {
                                        let authored = fields.get(&f.name);
                                        let current = authored.unwrap_or(&f.default);
                                        let label = ui.label(if authored.is_some() {
                                            RichText::new(&f.name)
                                        } else {
                                            RichText::new(&f.name).weak()
                                        });
                                        let label = if f.doc.is_empty() {
                                            label
                                        } else {
                                            label.on_hover_text(&f.doc)
                                        };
                                        let mut emit = |value: Value, continuing: bool| {
                                            actions.push(Action::SetField {
                                                entity: id.clone(),
                                                component: component.clone(),
                                                instance,
                                                field: f.name.clone(),
                                                value,
                                                continuing,
                                            });
                                        };
                                        field_widget(
                                            ui, editor, f, current, label.id, &mut emit, assets,
                                            bottom,
                                        );
                                        ui.end_row();
                                    }
                                });
                        }
                    });
            }
            ui.separator();
            ui.menu_button("Add component", |ui| {
                for ty in editor
                    .registry()
                    .components()
                    .iter()
                    .filter(|t| !t.implicit)
                {
                    let present = entity.components.contains_key(&ty.name);
                    if ui
                        .add_enabled(!present, egui::Button::new(&ty.name))
                        .on_hover_text(&ty.doc)
                        .clicked()
                    {
                        actions.push(Action::AddComponent {
                            entity: id.clone(),
                            component: ty.name.clone(),
                        });
                        ui.close();
                    }
                }
            });
        });
    if ui.input(|i| i.pointer.any_released()) {
        actions.push(Action::EndGesture);
    }
}

#[allow(clippy::too_many_arguments)] // The field's context, passed through once.
fn field_widget(
    ui: &mut egui::Ui,
    editor: &Editor,
    f: &FieldSchema,
    current: &Value,
    label: egui::Id,
    emit: &mut impl FnMut(Value, bool),
    assets: &mut AssetState,
    bottom: &mut BottomTab,
) {
    match &f.kind {
        FieldKind::Bool => {
            let mut b = current.as_bool().unwrap_or(false);
            if ui.checkbox(&mut b, "").labelled_by(label).changed() {
                emit(Value::Bool(b), false);
            }
        }
        FieldKind::Int { min, max } => {
            let mut v = current.as_i64().unwrap_or(0);
            let r = ui
                .add(DragValue::new(&mut v).range(*min..=*max))
                .labelled_by(label);
            if r.changed() {
                emit(Value::from(v), r.dragged());
            }
        }
        FieldKind::Float { min, max } => {
            let mut v = number(current);
            let r = ui
                .add(
                    DragValue::new(&mut v)
                        .range(*min as f64..=*max as f64)
                        .speed(0.05),
                )
                .labelled_by(label);
            if r.changed() {
                emit(kiln_core::schema::json_f32(v as f32), r.dragged());
            }
        }
        FieldKind::Vec3 | FieldKind::Angles => {
            let mut v = numbers(current, [0.0; 3]);
            let speed = if f.kind == FieldKind::Angles {
                1.0
            } else {
                0.05
            };
            let mut changed = None;
            ui.horizontal(|ui| {
                for (axis, c) in ["x", "y", "z"].iter().zip(v.iter_mut()) {
                    let r = ui
                        .add(DragValue::new(c).speed(speed).prefix(format!("{axis} ")))
                        .labelled_by(label);
                    if r.changed() {
                        changed = Some(r.dragged());
                    }
                }
            });
            if let Some(dragging) = changed {
                emit(json_numbers(&v), dragging);
            }
        }
        FieldKind::Color => {
            let c = numbers(current, [0.0, 0.0, 0.0, 1.0]);
            let mut rgba = [c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32];
            let r = ui
                .color_edit_button_rgba_unmultiplied(&mut rgba)
                .labelled_by(label);
            if r.changed() {
                emit(json_numbers(&rgba.map(f64::from)), true);
            }
        }
        FieldKind::Text => {
            let mut s = current.as_str().unwrap_or("").to_owned();
            let r = ui
                .add(egui::TextEdit::singleline(&mut s))
                .labelled_by(label);
            if r.changed() {
                emit(Value::String(s), true);
            }
        }
        FieldKind::Enum(options) => {
            let mut s = current.as_str().unwrap_or("").to_owned();
            egui::ComboBox::from_id_salt(label)
                .selected_text(&s)
                .show_ui(ui, |ui| {
                    for o in options {
                        if ui.selectable_value(&mut s, o.clone(), o).clicked() {
                            emit(Value::String(s.clone()), false);
                        }
                    }
                });
        }
        FieldKind::ResourceRef { resource_type } => {
            resource_picker(
                ui,
                editor,
                resource_type,
                current.as_str().unwrap_or(""),
                label,
                emit,
                assets,
                bottom,
            );
        }
        FieldKind::ResourceList { .. } => {
            ui.monospace(current.to_string());
        }
    }
}

/// A picker of every resource of `resource_type`, with a missing-file warning and a
/// button that shows the file in the asset browser.
#[allow(clippy::too_many_arguments)] // The field's context, passed through once.
fn resource_picker(
    ui: &mut egui::Ui,
    editor: &Editor,
    resource_type: &str,
    current: &str,
    label: egui::Id,
    emit: &mut impl FnMut(Value, bool),
    assets: &mut AssetState,
    bottom: &mut BottomTab,
) {
    let candidates: Vec<String> = editor
        .checker()
        .as_ref()
        .map(|c| {
            c.index()
                .files()
                .filter_map(|f| f.resource())
                .filter(|(_, ext)| ext == resource_type)
                .map(|(p, _)| p.as_str().to_owned())
                .collect()
        })
        .unwrap_or_default();
    let missing = !current.is_empty() && !candidates.iter().any(|c| c == current);
    ui.horizontal(|ui| {
        let shown = if current.is_empty() {
            "(none)"
        } else {
            current
        };
        egui::ComboBox::from_id_salt(label)
            .selected_text(shown)
            .width(180.0)
            .show_ui(ui, |ui| {
                if ui.selectable_label(current.is_empty(), "(none)").clicked() {
                    emit(Value::String(String::new()), false);
                }
                for c in &candidates {
                    if ui.selectable_label(c == current, c).clicked() {
                        emit(Value::String(c.clone()), false);
                    }
                }
            });
        if missing {
            ui.colored_label(Color32::from_rgb(220, 80, 70), "⚠")
                .on_hover_text(format!("{current}.{resource_type} does not exist"));
        }
        if current.is_empty() && resource_type == "mesh" {
            ui.colored_label(Color32::from_rgb(220, 170, 60), "⚠ nothing drawn")
                .on_hover_text("Choose a mesh: without one, this component draws nothing");
        }
        if !current.is_empty()
            && ResourcePath::parse(current).is_ok()
            && ui
                .small_button("↗")
                .on_hover_text("Show in asset browser")
                .clicked()
        {
            assets.reveal = Some(format!("{current}.{resource_type}"));
            *bottom = BottomTab::Assets;
        }
    });
}
