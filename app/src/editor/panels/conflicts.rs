//! The Conflicts tab: the merge conflicts of the open level, each with base, ours
//! and theirs side by side (for an entity in conflict as a whole, what each side
//! held), a side to take per conflict or for all, or the value as edited in the
//! inspector. Double-click a conflict to select its entity.

use kiln_core::conflict::{Conflict, Side};
use serde_json::Value;

use crate::editor::actions::Action;
use crate::editor::actions::Resolution;
use crate::editor::model::Editor;

/// What the rows of the tab show for one conflict: plain data, built first.
#[derive(Debug, Clone, PartialEq)]
pub struct ConflictRow {
    /// Where it is.
    pub place: String,
    /// Why, when it is not two values.
    pub why: Option<String>,
    /// Base, ours and theirs, as they read.
    pub sides: [String; 3],
    /// The entity to select.
    pub entity: Option<String>,
}

/// A side's value as a person reads it: an entity by name and components.
fn side_text(c: &Conflict, side: Side) -> String {
    let Some(v) = c.side(side) else {
        return if c.path.is_empty() {
            "(deleted)".into()
        } else {
            "(none)".into()
        };
    };
    if c.path.is_empty() {
        let name = v.get("name").and_then(Value::as_str).unwrap_or("");
        let components: Vec<&str> = v
            .get("components")
            .and_then(Value::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        return format!("\"{name}\" [{}]", components.join(", "));
    }
    v.to_string()
}

/// The rows for `conflicts`.
pub fn rows(conflicts: &[Conflict]) -> Vec<ConflictRow> {
    conflicts
        .iter()
        .map(|c| {
            let mut place = c.describe();
            if let Some(at) = place.find(": ") {
                place.truncate(at);
            }
            ConflictRow {
                place,
                why: c.why.clone(),
                sides: Side::ALL.map(|s| side_text(c, s)),
                entity: c.entity.clone(),
            }
        })
        .collect()
}

/// A way to resolve a conflict across files: a button's label, its hover text,
/// and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct AcrossFix {
    /// The button.
    pub label: String,
    /// What it does, in a sentence.
    pub hover: String,
    /// The action.
    pub action: Action,
}

/// The fixes offered for each of the last merge's conflicts across files: keep a
/// file one side deleted (from the side that has it), and say it is fixed.
pub fn across_fixes(editor: &Editor) -> Vec<Vec<AcrossFix>> {
    let files = editor.files();
    editor
        .cross_file_conflicts()
        .iter()
        .map(|c| {
            let mut fixes = Vec::new();
            for f in &c.files {
                let from = match (f.ours.as_str(), f.theirs.as_str()) {
                    ("deleted", "unchanged" | "changed") => Some(true),
                    ("unchanged" | "changed", "deleted") => Some(false),
                    _ => None,
                };
                let gone = kiln_core::fs::kind_below(files.project().root(), &f.path).is_none();
                if let (Some(theirs), true) = (from, gone)
                    && let Some(commit) = files.merge_side_commit(theirs)
                {
                    let side = if theirs { "theirs" } else { "ours" };
                    fixes.push(AcrossFix {
                        label: format!("Keep {}", f.path),
                        hover: format!(
                            "Put {} back as {side} has it (the other side deleted it); undo with Ctrl+Z",
                            f.path
                        ),
                        action: Action::KeepFileFromCommit {
                            file: f.path.clone(),
                            commit: commit.to_owned(),
                        },
                    });
                }
            }
            if let Some(at) = &c.drop_override {
                fixes.push(AcrossFix {
                    label: format!("Drop the override of {}", at.key),
                    hover: format!(
                        "Remove \"{}\"'s override of {} from {} (the prefab no longer has that part); undo with Ctrl+Z",
                        at.entity, at.key, at.level
                    ),
                    action: Action::DropOverride(at.clone()),
                });
            }
            // A file one side changed, taken as the other side has it: keeps what
            // that side's change removed (a prefab's part, say).
            for f in &c.files {
                let theirs = match (f.ours.as_str(), f.theirs.as_str()) {
                    ("changed", "unchanged") => true,
                    ("unchanged", "changed") => false,
                    _ => continue,
                };
                if c.drop_override.as_ref().is_some_and(|at| at.level == f.path) {
                    continue;
                }
                let Some(commit) = files.merge_side_commit(theirs) else {
                    continue;
                };
                let (side, other) = if theirs { ("theirs", "ours") } else { ("ours", "theirs") };
                fixes.push(AcrossFix {
                    label: format!("Take {} from {side}", f.path),
                    hover: format!(
                        "Write {} as {side} has it, undoing {other}'s change to it (what it removed comes back); undo with Ctrl+Z",
                        f.path
                    ),
                    action: Action::KeepFileFromCommit {
                        file: f.path.clone(),
                        commit: commit.to_owned(),
                    },
                });
            }
            fixes.push(AcrossFix {
                label: "Fixed".to_owned(),
                hover: "I fixed this another way (dropped the override or the reference, or pointed it elsewhere in the inspector or the Problems tab): take it off the list".to_owned(),
                action: Action::ForgetCrossFileConflict(c.key.clone()),
            });
            fixes
        })
        .collect()
}

/// The last merge's conflicts across files, with their fixes.
fn show_across(ui: &mut egui::Ui, editor: &Editor, actions: &mut Vec<Action>) {
    let across = editor.cross_file_conflicts();
    if across.is_empty() {
        return;
    }
    ui.strong(format!(
        "{} conflict{} across files from the last merge: each file merged clean, but together they break the project. Fix each, then git add and git commit.",
        across.len(),
        if across.len() == 1 { "" } else { "s" }
    ));
    for (c, fixes) in across.iter().zip(across_fixes(editor)) {
        ui.group(|ui| {
            ui.label(&c.problem);
            for f in &c.files {
                ui.weak(format!("{}: ours {}, theirs {}", f.path, f.ours, f.theirs));
            }
            ui.horizontal(|ui| {
                for fix in fixes {
                    if ui.button(&fix.label).on_hover_text(&fix.hover).clicked() {
                        actions.push(fix.action);
                    }
                }
            });
        });
    }
    ui.separator();
}

/// Shows the tab.
pub fn show(ui: &mut egui::Ui, editor: &Editor, actions: &mut Vec<Action>) {
    show_across(ui, editor, actions);
    let rows = rows(editor.conflicts());
    if rows.is_empty() {
        ui.label("No merge conflicts in this level.")
            .on_hover_text("After resolving a merge here: save, then `git add` the level to tell git it is resolved.");
        return;
    }
    ui.horizontal(|ui| {
        ui.label(format!(
            "{} merge conflict{} in {}: the viewport shows each one's current choice (ours until you pick).",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" },
            editor.level().map_or("", |l| l.file.as_str())
        ));
        if ui.button("All ours").on_hover_text("Take ours in every conflict").clicked() {
            actions.push(Action::ResolveAllConflicts(Side::Ours));
        }
        if ui.button("All theirs").on_hover_text("Take theirs in every conflict").clicked() {
            actions.push(Action::ResolveAllConflicts(Side::Theirs));
        }
    });
    ui.separator();
    egui::ScrollArea::both()
        .id_salt("conflicts")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::Grid::new("conflict rows")
                .num_columns(5)
                .striped(true)
                .spacing([12.0, 6.0])
                .show(ui, |ui| {
                    ui.strong("Where");
                    ui.strong("Take");
                    ui.strong("Base");
                    ui.strong("Ours");
                    ui.strong("Theirs");
                    ui.end_row();
                    for (index, row) in rows.iter().enumerate() {
                        let place = ui
                            .add(egui::Label::new(&row.place).sense(egui::Sense::click()))
                            .on_hover_text(row.why.as_deref().unwrap_or("Double-click to select the entity"));
                        if place.double_clicked()
                            && let Some(e) = &row.entity
                        {
                            actions.push(Action::Select(vec![e.clone()]));
                        }
                        ui.horizontal(|ui| {
                            for (label, how) in [
                                ("Ours", Resolution::Take(Side::Ours)),
                                ("Theirs", Resolution::Take(Side::Theirs)),
                                ("Base", Resolution::Take(Side::Base)),
                            ] {
                                let b = ui.small_button(label).on_hover_text(format!(
                                    "Take {}: {}",
                                    label.to_lowercase(),
                                    row.sides[match how {
                                        Resolution::Take(Side::Base) => 0,
                                        Resolution::Take(Side::Ours) => 1,
                                        _ => 2,
                                    }]
                                ));
                                // Each row's buttons are told apart by the place.
                                b.widget_info(|| {
                                    egui::WidgetInfo::labeled(
                                        egui::Role::Button,
                                        true,
                                        format!("{label}: {}", row.place),
                                    )
                                });
                                if b.clicked() {
                                    actions.push(Action::ResolveConflict { index, how });
                                }
                            }
                            let keep = ui
                                .small_button("As edited")
                                .on_hover_text("Keep the value as it is in the editor now (edit it in the inspector first)");
                            keep.widget_info(|| {
                                egui::WidgetInfo::labeled(
                                    egui::Role::Button,
                                    true,
                                    format!("As edited: {}", row.place),
                                )
                            });
                            if keep.clicked() {
                                actions.push(Action::ResolveConflict {
                                    index,
                                    how: Resolution::AsItIs,
                                });
                            }
                        });
                        for text in &row.sides {
                            // Wide enough for a vector or a path; longer ones end in
                            // "…", whole on hover.
                            ui.scope(|ui| {
                                ui.set_min_width(130.0);
                                ui.set_max_width(240.0);
                                ui.add(egui::Label::new(egui::RichText::new(text).monospace()).truncate())
                                    .on_hover_text(text);
                            });
                        }
                        ui.end_row();
                        if let Some(why) = &row.why {
                            ui.weak(format!("  {why}"));
                            ui.end_row();
                        }
                    }
                });
        });
}
