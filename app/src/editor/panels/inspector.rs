//! The inspector: the selected entity's components, with a widget per field built from
//! the component schemas. A drag is one undo step; resource references are pickers of
//! the field's resource type, with a warning when the file is missing.

use std::borrow::Cow;

use egui::{Color32, DragValue, RichText};
use kiln_core::{EntityDocument, FieldKind, FieldSchema, ResourcePath};
use serde_json::Value;

use super::assets::AssetState;
use crate::editor::actions::{Action, UiCommand};
use crate::editor::model::Editor;
use crate::editor::model::prefab_parts::{self, PartView};

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

/// What the inspector edits: an entity of the open file, or a prefab part (whose
/// edits become overrides on its instance).
struct Target<'a> {
    entity: Cow<'a, EntityDocument>,
    /// For a part: its unit, its instance, and the fields the open file overrides.
    part: Option<PartView>,
}

impl Target<'_> {
    fn overrides(&self, component: &str, field: &str) -> bool {
        self.part.as_ref().is_some_and(|p| {
            p.overridden
                .contains(&(component.to_owned(), field.to_owned()))
        })
    }
}

fn targets<'a>(editor: &'a Editor) -> Vec<Target<'a>> {
    editor
        .selection()
        .iter()
        .filter_map(|id| {
            if prefab_parts::is_part(id) {
                let part = editor.level()?.part(id)?;
                Some(Target {
                    entity: Cow::Owned(part.entity.clone()),
                    part: Some(part),
                })
            } else {
                Some(Target {
                    entity: Cow::Borrowed(editor.entity(id)?),
                    part: None,
                })
            }
        })
        .collect()
}

/// Shows the inspector for the selection: one entity or part with all its
/// components, or several with the components they share (a field whose values
/// differ shows as mixed; an edit sets it on all of them as one undo step).
pub fn show(ui: &mut egui::Ui, editor: &Editor, assets: &AssetState, actions: &mut Vec<Action>) {
    // A file to show in the asset browser (↗ beside a reference), asked for by any
    // field this frame.
    let mut reveal = None;
    show_selection(ui, editor, assets, &mut reveal, actions);
    if let Some(file) = reveal {
        actions.push(Action::RevealFile(file));
    }
}

fn show_selection(
    ui: &mut egui::Ui,
    editor: &Editor,
    assets: &AssetState,
    reveal: &mut Option<String>,
    actions: &mut Vec<Action>,
) {
    ui.strong("Inspector");
    ui.separator();
    // A resource picked in the asset browser (used last) is shown instead.
    if assets.focused
        && let Some(file) = assets.selected.clone()
        && let Ok((_, ext)) = ResourcePath::split_file(&file)
        && let Some(kiln_core::registry::ResourceFormat::Json(fields)) = editor
            .files()
            .registry()
            .resource_type(&ext)
            .map(|t| &t.format)
    {
        asset(ui, editor, &file, fields, reveal, actions);
        return;
    }
    let targets = targets(editor);
    let Some(first) = targets.first() else {
        ui.label("Select an entity in the scene or the viewport.");
        return;
    };
    if targets.len() > 1 {
        ui.label(format!(
            "{} entities selected: editing the components they share.",
            targets.len()
        ));
    } else {
        header(ui, first);
        let overrides = first.entity.overrides.len();
        if first.part.is_none() && overrides > 0 {
            ui.horizontal(|ui| {
                let parts = if overrides == 1 { "part" } else { "parts" };
                ui.label(format!("{overrides} {parts} overridden"));
                if ui
                    .button("Apply overrides to prefab")
                    .on_hover_text(
                        "Write them into the .unit (every instance gets them) and remove them here",
                    )
                    .clicked()
                {
                    actions.push(Action::ApplyOverrides {
                        instance: first.entity.id.clone(),
                    });
                }
            });
        }
    }
    ui.separator();
    let view = SelectionView::build(editor.files().registry(), &targets);
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for component in &view.components {
                egui::CollapsingHeader::new(RichText::new(component.name).strong())
                    .id_salt(("component", component.name))
                    .default_open(true)
                    .show(ui, |ui| {
                        draw_component(ui, editor, &targets, &view, component, reveal, actions)
                    });
            }
            ui.separator();
            if view.can_add_and_remove() {
                add_component_menu(ui, editor, &first.entity, actions);
            }
        });
    if ui.input(|i| i.pointer.any_released()) {
        actions.push(Action::EndGesture);
    }
}

/// The inspector's content for a selection, worked out before anything is drawn:
/// the components the selected entities share and, for each field, its values
/// across the selection, the value shown, whether they disagree and which parts
/// override it. Plain data, tested without a window (as the scene tree's rows).
struct SelectionView<'t> {
    /// The selected entities' (and parts') ids.
    ids: Vec<String>,
    /// A prefab part is selected: its components come from its unit.
    any_part: bool,
    components: Vec<ComponentView<'t>>,
}

/// One component every selected entity has.
struct ComponentView<'t> {
    name: &'t str,
    /// As the first entity writes it (shown raw when its type is unknown).
    value: &'t Value,
    /// `None`: no such component type is registered.
    ty: Option<&'t kiln_core::registry::ComponentType>,
    /// Each instance's fields: one for a component written as an object, one per
    /// item for an array (edited one entity at a time).
    instances: Vec<InstanceView<'t>>,
}

/// The fields of one instance of a component.
struct InstanceView<'t> {
    /// Which item of an array (`None`: the component is an object).
    index: Option<usize>,
    fields: Vec<FieldView<'t>>,
}

/// One field across the selection.
struct FieldView<'t> {
    field: &'t FieldSchema,
    /// Each selected entity's value, where written.
    values: Vec<Option<&'t Value>>,
    /// What the widget shows: the first entity's value, or the default.
    current: &'t Value,
    /// Written in the first entity's file (not the schema's default).
    authored: bool,
    /// The selected entities disagree.
    mixed: bool,
    /// Which targets (by position) override it in this level.
    overriding: Vec<usize>,
}

impl<'t> SelectionView<'t> {
    fn build(registry: &'t kiln_core::Registry, targets: &'t [Target<'_>]) -> Self {
        let ids = targets.iter().map(|t| t.entity.id.clone()).collect();
        let any_part = targets.iter().any(|t| t.part.is_some());
        let Some(first) = targets.first() else {
            return SelectionView {
                ids,
                any_part,
                components: Vec::new(),
            };
        };
        let components = (first.entity.components.iter())
            .filter(|(c, _)| targets.iter().all(|t| t.entity.components.contains_key(*c)))
            .map(|(name, value)| {
                let ty = registry.component(name);
                let indices: Vec<Option<usize>> = match value {
                    Value::Array(items) if targets.len() == 1 => {
                        (0..items.len()).map(Some).collect()
                    }
                    Value::Object(_) => vec![None],
                    _ => Vec::new(),
                };
                let instances = match ty {
                    Some(ty) => (indices.into_iter())
                        .map(|index| InstanceView {
                            index,
                            fields: (ty.fields.iter())
                                .map(|field| FieldView::of(targets, name, index, field))
                                .collect(),
                        })
                        .collect(),
                    None => Vec::new(),
                };
                ComponentView {
                    name,
                    value,
                    ty,
                    instances,
                }
            })
            .collect();
        SelectionView {
            ids,
            any_part,
            components,
        }
    }

    /// Components can be added and removed: one entity of the open file.
    fn can_add_and_remove(&self) -> bool {
        !self.any_part && self.ids.len() == 1
    }
}

impl<'t> FieldView<'t> {
    fn of(
        targets: &'t [Target<'_>],
        component: &str,
        index: Option<usize>,
        field: &'t FieldSchema,
    ) -> Self {
        let values: Vec<Option<&Value>> = (targets.iter())
            .map(|t| {
                let c = t.entity.components.get(component)?;
                match index {
                    Some(i) => c.get(i)?.get(&field.name),
                    None => c.get(&field.name),
                }
            })
            .collect();
        let authored = values.first().copied().flatten();
        let current = authored.unwrap_or(&field.default);
        let mixed = (values.iter()).any(|v| !same_value(v.unwrap_or(&field.default), current));
        let overriding = (targets.iter().enumerate())
            .filter(|(_, t)| t.overrides(component, &field.name))
            .map(|(k, _)| k)
            .collect();
        FieldView {
            field,
            values,
            current,
            authored: authored.is_some(),
            mixed,
            overriding,
        }
    }
}

/// Draws one component of [`SelectionView`]: its fields' rows, each emitting its
/// edit as an action.
fn draw_component(
    ui: &mut egui::Ui,
    editor: &Editor,
    targets: &[Target<'_>],
    view: &SelectionView<'_>,
    component: &ComponentView<'_>,
    reveal: &mut Option<String>,
    actions: &mut Vec<Action>,
) {
    if view.can_add_and_remove() && ui.small_button("Remove component").clicked() {
        actions.push(Action::RemoveComponent {
            entity: view.ids[0].clone(),
            component: component.name.to_owned(),
        });
    }
    if component.ty.is_none() {
        ui.colored_label(
            Color32::from_rgb(220, 170, 60),
            "Unknown component type: the level will not compile.",
        );
        ui.monospace(component.value.to_string());
        return;
    }
    for instance in &component.instances {
        if let Some(i) = instance.index {
            ui.label(RichText::new(format!("#{}", i + 1)).weak());
        }
        egui::Grid::new(("fields", component.name, instance.index))
            .num_columns(2)
            .striped(true)
            .show(ui, |ui| {
                for f in &instance.fields {
                    let overriding: Vec<&Target> =
                        f.overriding.iter().map(|&k| &targets[k]).collect();
                    let row = FieldRow {
                        field: f.field,
                        authored: f.authored,
                        mixed: f.mixed,
                        overriding: &overriding,
                        component: component.name,
                    };
                    field_row(ui, &row, actions, |ui, label, actions| {
                        let mut emit = |value: Value, continuing: bool| {
                            actions.push(edit_action(
                                &view.ids,
                                &f.values,
                                f.current,
                                &f.field.default,
                                (component.name, instance.index, &f.field.name),
                                value,
                                continuing,
                            ));
                        };
                        let shown = Shown::of(&f.values, f.field, f.mixed);
                        field_widget(
                            ui, editor, f.field, f.current, &shown, label, &mut emit, reveal,
                        );
                    });
                    ui.end_row();
                }
            });
    }
}

/// A resource file's fields (a material, a mesh), built from its type's schema like
/// a component's, edited in place: each change is written to the file at once (one
/// undo step per gesture) and the viewport shows it.
fn asset(
    ui: &mut egui::Ui,
    editor: &Editor,
    file: &str,
    schema: &[FieldSchema],
    reveal: &mut Option<String>,
    actions: &mut Vec<Action>,
) {
    egui::Grid::new("asset header")
        .num_columns(2)
        .show(ui, |ui| {
            ui.label("File");
            ui.monospace(file);
            ui.end_row();
        });
    ui.separator();
    let fields = match editor.files().asset_fields(file) {
        Ok(f) => f,
        Err(e) => {
            ui.colored_label(Color32::from_rgb(220, 80, 70), e);
            return;
        }
    };
    egui::Grid::new(("asset fields", file))
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for f in schema {
                let authored = fields.get(&f.name);
                let current = authored.unwrap_or(&f.default);
                let mut label = ui.label(if authored.is_some() {
                    RichText::new(&f.name)
                } else {
                    RichText::new(&f.name).weak()
                });
                if !f.doc.is_empty() {
                    label = label.on_hover_text(&f.doc);
                }
                let mut emit = |value: Value, continuing: bool| {
                    actions.push(Action::SetAssetField {
                        file: file.to_owned(),
                        field: f.name.clone(),
                        value,
                        continuing,
                    });
                };
                field_widget(
                    ui,
                    editor,
                    f,
                    current,
                    &Shown::default(),
                    label.id,
                    &mut emit,
                    reveal,
                );
                ui.end_row();
            }
        });
    if ui.input(|i| i.pointer.any_released()) {
        actions.push(Action::EndGesture);
    }
}

/// The action for an edit of one field on the selection. On several entities, a
/// vector whose x alone was dragged changes x alone on each (their y and z stay
/// their own, as in Unity and Godot); anything else is set on all.
fn edit_action(
    ids: &[String],
    values: &[Option<&Value>],
    shown: &Value,
    default: &Value,
    (component, instance, field): (&str, Option<usize>, &str),
    value: Value,
    continuing: bool,
) -> Action {
    if let (true, Some(new), Some(old)) = (ids.len() > 1, value.as_array(), shown.as_array())
        && new.len() == old.len()
    {
        // Compared as numbers: 6 and 6.0 are the same, and f32 round trips blur 0.6.
        let same = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0),
            _ => a == b,
        };
        let changed: Vec<usize> = (0..new.len())
            .filter(|&k| !same(&new[k], &old[k]))
            .collect();
        let per_entity = ids
            .iter()
            .zip(values)
            .map(|(id, v)| {
                let mut mine = v.unwrap_or(default).as_array().cloned().unwrap_or_default();
                mine.resize(new.len(), Value::from(0));
                for &k in &changed {
                    mine[k] = new[k].clone();
                }
                (id.clone(), Value::Array(mine))
            })
            .collect();
        return Action::SetFieldEach {
            component: component.to_owned(),
            field: field.to_owned(),
            values: per_entity,
            continuing,
        };
    }
    Action::SetField {
        entities: ids.to_vec(),
        component: component.to_owned(),
        instance,
        field: field.to_owned(),
        value,
        continuing,
    }
}

/// The header of a single entity or part: id, name, parent, prefab, and for a part
/// where it comes from.
fn header(ui: &mut egui::Ui, target: &Target) {
    let entity = &target.entity;
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
            .on_hover_text(UiCommand::BeginRename.hover_text(ui.ctx(), "Rename"));
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
            if let Some(part) = &target.part {
                ui.label("Part of");
                ui.monospace(format!("{} ({})", part.unit_file, part.instance))
                    .on_hover_text(
                        "Edits here are overrides stored in this level, on the instance",
                    );
                ui.end_row();
            }
        });
}

/// How one field row is labelled.
struct FieldRow<'a> {
    field: &'a FieldSchema,
    /// Written in the file (not the schema's default).
    authored: bool,
    /// The selected entities disagree.
    mixed: bool,
    /// Parts that override this field.
    overriding: &'a [&'a Target<'a>],
    component: &'a str,
}

/// A field's label (marked when overridden or mixed, with "revert to prefab") and
/// its widget.
fn field_row(
    ui: &mut egui::Ui,
    row: &FieldRow,
    actions: &mut Vec<Action>,
    widget: impl FnOnce(&mut egui::Ui, egui::Id, &mut Vec<Action>),
) {
    let f = row.field;
    let overridden = !row.overriding.is_empty();
    let label_id = ui
        .horizontal(|ui| {
            let mut text = RichText::new(&f.name);
            if overridden {
                text = text.strong().color(Color32::from_rgb(90, 170, 255));
            } else if !row.authored {
                text = text.weak();
            }
            if row.mixed {
                text = RichText::new(format!("{} (mixed)", f.name)).italics();
            }
            let mut label = ui.label(text);
            if !f.doc.is_empty() {
                label = label.on_hover_text(&f.doc);
            }
            if overridden {
                label = label.on_hover_text("Overridden in this level");
                let revert = ui.small_button("⟲").on_hover_text("Revert to prefab");
                // The glyph is not a name: screen readers and tests find it by this.
                revert.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::Button, true, "Revert to prefab")
                });
                if revert.clicked() {
                    for t in row.overriding {
                        actions.push(Action::RevertOverride {
                            part: t.entity.id.clone(),
                            component: row.component.to_owned(),
                            field: f.name.clone(),
                        });
                    }
                }
            }
            label.id
        })
        .inner;
    widget(ui, label_id, actions);
}

fn add_component_menu(
    ui: &mut egui::Ui,
    editor: &Editor,
    entity: &EntityDocument,
    actions: &mut Vec<Action>,
) {
    ui.menu_button("Add component", |ui| {
        for ty in editor
            .files()
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
                    entity: entity.id.clone(),
                    component: ty.name.clone(),
                });
                ui.close();
            }
        }
    });
}

/// What of a field's value the selected entities share: a mixed part shows no value
/// ("—") until it is edited, rather than the first entity's.
#[derive(Debug, Default, Clone, Copy)]
struct Shown {
    /// The values differ.
    mixed: bool,
    /// Which components of a vector or colour differ.
    axes: [bool; 4],
}

impl Shown {
    fn of<'a>(values: &[Option<&'a Value>], f: &'a FieldSchema, mixed: bool) -> Self {
        let mut axes = [false; 4];
        if mixed {
            for (k, axis) in axes.iter_mut().enumerate() {
                let at = |v: Option<&'a Value>| v.unwrap_or(&f.default).get(k);
                let first = values.first().and_then(|v| at(*v));
                *axis = values.iter().map(|v| at(*v)).any(|v| match (v, first) {
                    (Some(a), Some(b)) => !same_value(a, b),
                    (a, b) => a.is_some() != b.is_some(),
                });
            }
        }
        Shown { mixed, axes }
    }
}

/// Whether two field values are the same: numbers by value (`0` and `0.0`, as a
/// default and a file may write them), arrays item by item.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        _ => a == b,
    }
}

/// A number field that shows "—" while the selection disagrees on it.
fn number_field<'a>(value: &'a mut f64, mixed: bool) -> DragValue<'a> {
    let drag = DragValue::new(value);
    if mixed {
        drag.custom_formatter(|_, _| "—".to_owned())
    } else {
        drag
    }
}

/// Tells screen readers (and tests) that a field shows no value: the selected
/// entities disagree on it.
fn say_mixed(r: &egui::Response, mixed: bool) {
    if mixed {
        r.widget_info(|| {
            let mut info = egui::WidgetInfo::new(egui::Role::SpinButton);
            info.current_text_value = Some("—".to_owned());
            info
        });
    }
}

#[allow(clippy::too_many_arguments)] // The field's context, passed through once.
fn field_widget(
    ui: &mut egui::Ui,
    editor: &Editor,
    f: &FieldSchema,
    current: &Value,
    shown: &Shown,
    label: egui::Id,
    emit: &mut impl FnMut(Value, bool),
    reveal: &mut Option<String>,
) {
    match &f.kind {
        FieldKind::Bool => {
            let mut b = current.as_bool().unwrap_or(false);
            let check = egui::Checkbox::new(&mut b, "").indeterminate(shown.mixed);
            if ui.add(check).labelled_by(label).changed() {
                emit(Value::Bool(b), false);
            }
        }
        FieldKind::Int { min, max } => {
            let mut v = current.as_i64().unwrap_or(0) as f64;
            let r = ui
                .add(
                    number_field(&mut v, shown.mixed)
                        .range(*min as f64..=*max as f64)
                        .speed(0.2),
                )
                .labelled_by(label);
            say_mixed(&r, shown.mixed);
            if r.changed() {
                emit(Value::from(v.round() as i64), r.dragged());
            }
        }
        FieldKind::Float { min, max } => {
            let mut v = number(current);
            let r = ui
                .add(
                    number_field(&mut v, shown.mixed)
                        .range(*min as f64..=*max as f64)
                        .speed(0.05),
                )
                .labelled_by(label);
            say_mixed(&r, shown.mixed);
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
                for ((axis, c), mixed) in ["x", "y", "z"].iter().zip(v.iter_mut()).zip(shown.axes) {
                    let r = ui
                        .add(
                            number_field(c, mixed)
                                .speed(speed)
                                .prefix(format!("{axis} ")),
                        )
                        .labelled_by(label);
                    say_mixed(&r, mixed);
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
            // The viewport draws colour values as sRGB bytes: the swatch shows them
            // the same way (a linear swatch looked lighter than the shape).
            let c = numbers(current, [0.0, 0.0, 0.0, 1.0]);
            let mut srgba = c.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8);
            let r = ui
                .color_edit_button_srgba_unmultiplied(&mut srgba)
                .labelled_by(label);
            if shown.mixed {
                ui.weak("—")
                    .on_hover_text("The selected entities have different colours");
            }
            if r.changed() {
                // Two decimals: 1/255 steps, without float noise in the file.
                let values = srgba.map(|b| (f64::from(b) / 255.0 * 100.0).round() / 100.0);
                emit(json_numbers(&values), true);
            }
        }
        FieldKind::Text => {
            let mut s = if shown.mixed {
                String::new()
            } else {
                current.as_str().unwrap_or("").to_owned()
            };
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut s).hint_text(if shown.mixed {
                        "—"
                    } else {
                        ""
                    }),
                )
                .labelled_by(label);
            if r.changed() {
                emit(Value::String(s), true);
            }
        }
        FieldKind::Enum(options) => {
            let mut s = current.as_str().unwrap_or("").to_owned();
            let text = if shown.mixed {
                "—".to_owned()
            } else {
                s.clone()
            };
            egui::ComboBox::from_id_salt(label)
                .selected_text(text)
                .show_ui(ui, |ui| {
                    for o in options {
                        if ui.selectable_value(&mut s, o.clone(), o).clicked() {
                            emit(Value::String(s.clone()), false);
                        }
                    }
                })
                .response
                .labelled_by(label);
        }
        FieldKind::ResourceRef { resource_type } => {
            resource_picker(
                ui,
                editor,
                resource_type,
                current.as_str().unwrap_or(""),
                shown.mixed,
                label,
                emit,
                reveal,
            );
        }
        FieldKind::ResourceList { .. } => {
            ui.monospace(current.to_string());
        }
        FieldKind::Entity => {
            entity_picker(
                ui,
                editor,
                current.as_str().unwrap_or(""),
                shown.mixed,
                label,
                emit,
            );
        }
    }
}

/// A picker of the level's entities for an entity field, which also takes an
/// entity dragged from the scene tree, with a warning when the id names none.
fn entity_picker(
    ui: &mut egui::Ui,
    editor: &Editor,
    current: &str,
    mixed: bool,
    label: egui::Id,
    emit: &mut impl FnMut(Value, bool),
) {
    let Some(level) = editor.level() else {
        ui.monospace(current);
        return;
    };
    let shown_name = |id: &str| match level.entity(id) {
        Some(e) if !e.name.is_empty() => format!("{} ({id})", e.name),
        _ => id.to_owned(),
    };
    // A part of a prefab instance is named by its path, which the document does
    // not list: it is known when the preview spawned it.
    let known = |id: &str| level.entity(id).is_some() || editor.world_pose(id).is_some();
    let missing = !mixed && !current.is_empty() && !known(current);
    ui.horizontal(|ui| {
        let text = if mixed {
            "—".to_owned()
        } else if current.is_empty() {
            "(none)".to_owned()
        } else {
            shown_name(current)
        };
        let combo = egui::ComboBox::from_id_salt(label)
            .selected_text(text)
            .width(180.0)
            // A click in the filter field must not close the list.
            .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
            .show_ui(ui, |ui| {
                // A level may have thousands of entities: a filter, and at most
                // `SHOWN` of them listed.
                const SHOWN: usize = 200;
                let filter_id = label.with("entity filter");
                let mut filter: String = ui.data_mut(|d| d.get_temp(filter_id).unwrap_or_default());
                let typed = ui.add(
                    egui::TextEdit::singleline(&mut filter)
                        .hint_text("Filter by name or id")
                        .desired_width(f32::INFINITY),
                );
                // The hint is not a name: screen readers and tests find the field by this.
                typed.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::TextInput, true, "Filter by name or id")
                });
                // Typing goes to the filter as soon as the list opens (the list
                // was not shown the frame before).
                let frame = ui.ctx().cumulative_frame_nr();
                let shown_id = label.with("entity list shown");
                let last: Option<u64> = ui.data_mut(|d| d.get_temp(shown_id));
                ui.data_mut(|d| d.insert_temp(shown_id, frame));
                if last.is_none_or(|last| last + 1 < frame) {
                    typed.request_focus();
                }
                if typed.changed() {
                    ui.data_mut(|d| d.insert_temp(filter_id, filter.clone()));
                }
                let chosen = |ui: &mut egui::Ui| {
                    ui.data_mut(|d| d.remove::<String>(filter_id));
                    ui.close();
                };
                if ui.selectable_label(current.is_empty(), "(none)").clicked() {
                    emit(Value::String(String::new()), false);
                    chosen(ui);
                }
                let needle = filter.to_lowercase();
                let mut matching = (level.doc.entities.iter()).filter(|e| {
                    needle.is_empty()
                        || e.id.to_lowercase().contains(&needle)
                        || e.name.to_lowercase().contains(&needle)
                });
                for e in matching.by_ref().take(SHOWN) {
                    if ui
                        .selectable_label(e.id == current, shown_name(&e.id))
                        .clicked()
                    {
                        emit(Value::String(e.id.clone()), false);
                        chosen(ui);
                    }
                }
                let more = matching.count();
                if more > 0 {
                    ui.weak(format!("{more} more: type to narrow"));
                }
            })
            .response
            .labelled_by(label)
            .on_hover_text("Choose an entity, or drag one here from the scene tree");
        if let Some(dropped) = combo.dnd_release_payload::<super::scene_tree::DraggedEntity>() {
            emit(Value::String(dropped.0.clone()), false);
        } else if combo
            .dnd_hover_payload::<super::scene_tree::DraggedEntity>()
            .is_some()
        {
            ui.painter().rect_stroke(
                combo.rect,
                2.0,
                egui::Stroke::new(2.0, ui.visuals().selection.stroke.color),
                egui::StrokeKind::Outside,
            );
        }
        if missing {
            let says = format!("no entity of this level has the id \"{current}\"");
            let warning = ui.colored_label(Color32::from_rgb(220, 80, 70), "⚠");
            // The glyph is not a name: screen readers and tests find it by this.
            warning.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &says));
            warning.on_hover_text(says);
        }
    });
}

/// A picker of every resource of `resource_type`, with a missing-file warning and a
/// button that shows the file in the asset browser.
#[allow(clippy::too_many_arguments)] // The field's context, passed through once.
fn resource_picker(
    ui: &mut egui::Ui,
    editor: &Editor,
    resource_type: &str,
    current: &str,
    mixed: bool,
    label: egui::Id,
    emit: &mut impl FnMut(Value, bool),
    reveal: &mut Option<String>,
) {
    let candidates: Vec<String> = editor
        .files()
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
    let missing = !mixed && !current.is_empty() && !candidates.iter().any(|c| c == current);
    ui.horizontal(|ui| {
        let shown = if mixed {
            "—"
        } else if current.is_empty() {
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
            })
            .response
            .labelled_by(label);
        if missing {
            ui.colored_label(Color32::from_rgb(220, 80, 70), "⚠")
                .on_hover_text(format!("{current}.{resource_type} does not exist"));
        }
        if !mixed && current.is_empty() && resource_type == "mesh" {
            ui.colored_label(Color32::from_rgb(220, 170, 60), "⚠ nothing drawn")
                .on_hover_text("Choose a mesh: without one, this component draws nothing");
        }
        if !mixed && !current.is_empty() && ResourcePath::parse(current).is_ok() && {
            let show = ui.small_button("↗").on_hover_text("Show in asset browser");
            // The glyph is not a name: screen readers and tests find it by this.
            show.widget_info(|| {
                egui::WidgetInfo::labeled(egui::Role::Button, true, "Show in asset browser")
            });
            show.clicked()
        } {
            *reveal = Some(format!("{current}.{resource_type}"));
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use kiln_core::{LevelDocument, Registry};

    use super::*;

    fn selected(text: &str, ids: &[&str]) -> Vec<Target<'static>> {
        let doc = LevelDocument::parse(text, "a.level").unwrap();
        (ids.iter())
            .map(|id| Target {
                entity: Cow::Owned(doc.entity(id).unwrap().clone()),
                part: None,
            })
            .collect()
    }

    /// Several entities: only the components they share, each field's value per
    /// entity, mixed where they disagree, and no adding or removing components.
    #[test]
    fn a_selection_shows_the_shared_components_and_where_they_disagree() {
        let registry = Registry::with_builtins();
        let targets = selected(
            r#"{"entities": [
                {"id": "a", "components": {"transform": {"position": [1, 2, 3]}, "mesh": {"mesh": "meshes/rock"}}},
                {"id": "b", "components": {"transform": {"position": [1, 2, 3], "scale": [2, 2, 2]}}}
            ]}"#,
            &["a", "b"],
        );
        let view = SelectionView::build(&registry, &targets);
        assert_eq!(view.ids, ["a", "b"]);
        assert!(!view.can_add_and_remove());
        let names: Vec<&str> = view.components.iter().map(|c| c.name).collect();
        assert_eq!(names, ["transform"], "mesh is a's alone");
        let fields = &view.components[0].instances[0].fields;
        let field = |name: &str| fields.iter().find(|f| f.field.name == name).unwrap();
        assert!(!field("position").mixed);
        assert!(field("position").authored);
        assert!(field("scale").mixed, "b's scale differs from a's default");
        assert!(!field("scale").authored, "a does not write it");
        assert_eq!(
            field("scale").values[1],
            Some(&serde_json::json!([2, 2, 2]))
        );
    }

    /// One entity: all its components, editable, removable; an unknown component
    /// type has no fields to show.
    #[test]
    fn one_entity_shows_every_component_and_an_unknown_one_raw() {
        let registry = Registry::with_builtins();
        let targets = selected(
            r#"{"entities": [{"id": "a", "components": {"transform": {}, "sparkle": {"rate": 3}}}]}"#,
            &["a"],
        );
        let view = SelectionView::build(&registry, &targets);
        assert!(view.can_add_and_remove());
        let sparkle = view
            .components
            .iter()
            .find(|c| c.name == "sparkle")
            .unwrap();
        assert!(sparkle.ty.is_none());
        assert!(sparkle.instances.is_empty());
        assert_eq!(sparkle.value, &serde_json::json!({"rate": 3}));
    }
}
