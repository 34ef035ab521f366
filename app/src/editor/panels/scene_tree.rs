//! The scene graph: the open level's hierarchy, with selection, multi-selection,
//! keyboard navigation, a filter, prefab instances marked, rename (F2) and drag and
//! drop to reparent or reorder (egui_ltreeview).

use egui_ltreeview::{Action as TreeAction, DirPosition, NodeBuilder, TreeView};

use super::PanelState;
use crate::editor::actions::{Action, UiCommand};
use crate::editor::model::Editor;
use crate::editor::model::prefab_parts::{self, LoadedUnit};

type Builder<'a, 'b> = egui_ltreeview::TreeViewBuilder<'a, String>;

/// The parts of a prefab instance, under it: ids are the compiler's paths
/// (`tree_01/trunk`), labels are in italics and blue (they come from the prefab),
/// and nested instances open up in turn. Closed until the user opens them.
fn emit_parts(
    builder: &mut Builder,
    editor: &Editor,
    prefix: &str,
    unit: &LoadedUnit,
    depth: usize,
) {
    if depth > kiln_core::compiler::MAX_PREFAB_DEPTH {
        return;
    }
    let mut stack: Vec<(usize, bool)> = unit.tree.roots.iter().rev().map(|&r| (r, false)).collect();
    // (node, closing): a node is visited once to open it and once to close it.
    while let Some((node, closing)) = stack.pop() {
        let e = &unit.doc.entities[node];
        // Parts are named by id alone below their instance, whatever their parent
        // inside the unit: the compiler's naming.
        let id = format!("{prefix}/{}", e.id);
        if closing {
            if let Some(nested) = e.prefab.as_deref().and_then(|p| editor.prefabs().unit(p)) {
                emit_parts(builder, editor, &id, nested, depth + 1);
            }
            builder.close_dir();
            continue;
        }
        let name = if e.name.is_empty() { &e.id } else { &e.name };
        let label = egui::RichText::new(name)
            .italics()
            .color(egui::Color32::from_rgb(120, 170, 230));
        let nested = e.prefab.as_deref().and_then(|p| editor.prefabs().unit(p));
        if unit.tree.children[node].is_empty() && nested.is_none() {
            builder.node(NodeBuilder::leaf(id).label(label).drop_allowed(false));
        } else {
            builder.node(
                NodeBuilder::dir(id)
                    .default_open(false)
                    .label(label)
                    .drop_allowed(false),
            );
            stack.push((node, true));
            stack.extend(unit.tree.children[node].iter().rev().map(|&c| (c, false)));
        }
    }
}

/// Shows the scene tree.
pub fn show(ui: &mut egui::Ui, editor: &Editor, state: &mut PanelState, actions: &mut Vec<Action>) {
    let Some(level) = &editor.level() else {
        ui.label("No level open.");
        return;
    };
    ui.horizontal(|ui| {
        ui.strong("Scene");
        if ui
            .small_button("+")
            .on_hover_text("New entity (Ctrl+N)")
            .clicked()
        {
            actions.push(Action::Run(UiCommand::NewEntity));
        }
    });
    let filter_field = ui
        .add(
            egui::TextEdit::singleline(&mut state.tree_filter)
                .hint_text("Filter entities")
                .desired_width(f32::INFINITY),
        )
        .on_hover_text("Show entities whose name or id contains this text");
    // The hint is not a name: screen readers and tests find the field by this.
    filter_field
        .widget_info(|| egui::WidgetInfo::labeled(egui::Role::TextInput, true, "Filter entities"));
    // Focus the field once, when the rename starts: asking for focus every frame
    // kept it from ever losing focus, so Enter, Tab, Esc and clicking away did
    // nothing and the shortcuts stayed off.
    let starting = state.begin_rename.take();
    if let Some(id) = &starting {
        state.rename_text = editor
            .entity(id)
            .map(|e| e.name.clone())
            .unwrap_or_default();
        state.renaming = Some(id.clone());
    }
    if let Some(id) = state.renaming.clone() {
        let id = &id;
        let starting = starting.is_some();
        let label = ui.label("Rename:");
        let r = ui
            .add(egui::TextEdit::singleline(&mut state.rename_text).desired_width(f32::INFINITY))
            .labelled_by(label.id);
        if starting {
            r.request_focus();
        }
        if r.lost_focus() {
            state.renaming = None;
            let name = std::mem::take(&mut state.rename_text);
            // Esc cancels; Enter, Tab and clicking away commit.
            if !ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                actions.push(Action::Rename {
                    entity: id.clone(),
                    name,
                });
            }
        }
    }
    ui.separator();

    let doc = &level.doc;
    let tree = &editor.tree();
    let visible = tree.visible(doc, &state.tree_filter);
    if state.tree.selected() != editor.selection() {
        state.tree.set_selected(editor.selection().to_vec());
        // A part selected elsewhere (a click in the viewport) is shown: its
        // instance and the nested instances above it open.
        for id in editor.selection() {
            let mut ancestor = String::new();
            let segments: Vec<&str> = id.split('/').collect();
            for segment in &segments[..segments.len().saturating_sub(1)] {
                if !ancestor.is_empty() {
                    ancestor.push('/');
                }
                ancestor.push_str(segment);
                state.tree.set_openness(ancestor.clone(), true);
            }
        }
    }
    let id = ui.make_persistent_id("scene tree");
    egui::ScrollArea::both()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let (_, tree_actions) = TreeView::new(id).allow_multi_selection(true).show_state(
                ui,
                &mut state.tree,
                |builder| {
                    let shown = |i: usize| visible.as_ref().is_none_or(|v| v.contains(&i));
                    let label = |i: usize| {
                        let e = &doc.entities[i];
                        let name = if e.name.is_empty() {
                            e.id.clone()
                        } else {
                            e.name.clone()
                        };
                        if e.prefab.is_some() {
                            format!("📦 {name}")
                        } else {
                            name
                        }
                    };
                    // Depth first with an explicit stack of (entity, next child
                    // position, is a folder); no per-node allocation, since a level
                    // may have a hundred thousand entities.
                    let mut stack: Vec<(usize, usize, bool)> = Vec::new();
                    // Parts are shown under their instance unless a filter is on.
                    let unit_of = |node: usize| {
                        let prefab = doc.entities[node].prefab.as_deref()?;
                        visible.is_none().then(|| editor.prefabs().unit(prefab))?
                    };
                    for &root in tree.roots.iter().filter(|&&r| shown(r)) {
                        let emit = |node: usize,
                                        builder: &mut egui_ltreeview::TreeViewBuilder<
                                '_,
                                String,
                            >| {
                                let is_dir = tree.children[node].iter().any(|&c| shown(c))
                                    || unit_of(node).is_some();
                                let id = doc.entities[node].id.clone();
                                if is_dir {
                                    builder.node(
                                        NodeBuilder::dir(id).default_open(true).label(label(node)),
                                    );
                                } else {
                                    builder.node(NodeBuilder::leaf(id).label(label(node)));
                                }
                                is_dir
                            };
                        let is_dir = emit(root, builder);
                        stack.push((root, 0, is_dir));
                        while let Some(top) = stack.last_mut() {
                            let (node, pos, is_dir) = *top;
                            let children = &tree.children[node];
                            let next = (pos..children.len()).find(|&k| shown(children[k]));
                            match next {
                                Some(k) => {
                                    top.1 = k + 1;
                                    let child = children[k];
                                    let child_is_dir = emit(child, builder);
                                    stack.push((child, 0, child_is_dir));
                                }
                                None => {
                                    if let Some(unit) = unit_of(node) {
                                        let prefix = &doc.entities[node].id;
                                        emit_parts(builder, editor, prefix, unit, 0);
                                    }
                                    if is_dir {
                                        builder.close_dir();
                                    }
                                    stack.pop();
                                }
                            }
                        }
                    }
                },
            );
            for a in tree_actions {
                match a {
                    TreeAction::SetSelected(ids) => {
                        state.assets.focused = false;
                        actions.push(Action::Select(ids));
                    }
                    // A part belongs to its unit: it is not moved from the level.
                    TreeAction::Move(dnd)
                        if prefab_parts::is_part(&dnd.target)
                            || dnd.source.iter().any(|s| prefab_parts::is_part(s)) => {}
                    TreeAction::Move(dnd) => {
                        let (parent, before) = match dnd.position {
                            DirPosition::First => (
                                Some(dnd.target.clone()),
                                tree_first_child(editor, &dnd.target),
                            ),
                            DirPosition::Last => (Some(dnd.target.clone()), None),
                            DirPosition::Before(sibling) => {
                                (Some(dnd.target.clone()), Some(sibling))
                            }
                            DirPosition::After(sibling) => {
                                (Some(dnd.target.clone()), next_sibling(editor, &sibling))
                            }
                        };
                        actions.push(Action::Reparent {
                            entities: dnd.source,
                            parent,
                            before,
                        });
                    }
                    TreeAction::Activate(_) => actions.push(Action::Run(UiCommand::FrameSelection)),
                    _ => {}
                }
            }
            // Dropping below the tree makes entities roots.
            let rest = ui.allocate_response(
                ui.available_size().max(egui::vec2(0.0, 24.0)),
                egui::Sense::click(),
            );
            if rest.clicked() {
                actions.push(Action::Select(Vec::new()));
            }
        });
}

fn tree_first_child(editor: &Editor, parent: &str) -> Option<String> {
    let doc = &editor.level().as_ref()?.doc;
    let p = doc.entities.iter().position(|e| e.id == parent)?;
    editor.tree().children[p]
        .first()
        .map(|&c| doc.entities[c].id.clone())
}

fn next_sibling(editor: &Editor, sibling: &str) -> Option<String> {
    let doc = &editor.level().as_ref()?.doc;
    let s = doc.entities.iter().position(|e| e.id == sibling)?;
    let siblings = match editor.tree().parent[s] {
        Some(p) => &editor.tree().children[p],
        None => &editor.tree().roots,
    };
    let k = siblings.iter().position(|&c| c == s)?;
    siblings.get(k + 1).map(|&c| doc.entities[c].id.clone())
}
