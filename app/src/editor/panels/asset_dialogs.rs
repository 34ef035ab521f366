//! The asset browser's dialogs: a name for a new file, folder or copy (refusing a
//! name that is not canonical and proposing the canonical one); what deleting would
//! break, with a file to point the references at instead; files an import would
//! write over; and renaming or moving with the preview of every reference it
//! patches.

use dependency_checker::ops::{MovePlan, MoveRequest};

use crate::editor::actions::Action;
use crate::editor::model::Editor;
use crate::editor::model::import::OnConflict;
use crate::editor::model::project_files::{DeletePlan, NameProblem};

const RED: egui::Color32 = egui::Color32::from_rgb(220, 80, 70);
const YELLOW: egui::Color32 = egui::Color32::from_rgb(220, 170, 60);

/// What a name dialog makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameKind {
    /// A new file of this type (extension).
    NewFile(String),
    /// A new folder.
    NewFolder,
    /// A copy of this file.
    Duplicate(String),
    /// A prefab (`.unit`) made from the selected entities, which an instance of it
    /// then replaces.
    Prefab,
}

/// The name dialog: where, what, and the name being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameDialog {
    /// What it makes.
    pub kind: NameKind,
    /// The folder it goes in (`""`: the root).
    pub folder: String,
    /// The name typed, without the extension.
    pub name: String,
}

impl NameDialog {
    /// A dialog for `kind` in `folder`, with a free name filled in.
    pub fn new(editor: &Editor, kind: NameKind, folder: &str) -> Self {
        let base = match &kind {
            NameKind::NewFile(ext) => format!("new_{}", if ext == "unit" { "prefab" } else { ext }),
            NameKind::NewFolder => "new_folder".to_owned(),
            NameKind::Duplicate(file) => {
                let name = file.rsplit('/').next().unwrap_or(file);
                let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
                format!("{stem}_copy")
            }
            // After what is selected, as the designer named it ("Rock pile" ->
            // "rock_pile"), not its generated id.
            NameKind::Prefab => {
                let first = editor.selection().first().and_then(|id| editor.entity(id));
                let named = first.map(|e| if e.name.is_empty() { &e.id } else { &e.name });
                let stem = named.map(|n| kiln_core::path::canonical_segment(n));
                stem.filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "new_prefab".to_owned())
            }
        };
        let mut dialog = NameDialog {
            kind,
            folder: folder.to_owned(),
            name: base.clone(),
        };
        for n in 2..1000 {
            if editor.files().check_new_path(&dialog.path()) != Err(NameProblem::Taken) {
                break;
            }
            dialog.name = format!("{base}_{n}");
        }
        dialog
    }

    /// The project path it makes.
    pub fn path(&self) -> String {
        let ext = match &self.kind {
            NameKind::NewFile(ext) => Some(ext.as_str()),
            NameKind::NewFolder => None,
            NameKind::Duplicate(file) => file.rsplit_once('.').map(|(_, e)| e),
            NameKind::Prefab => Some("unit"),
        };
        let name = self.name.trim();
        let file = match ext {
            Some(ext) => format!("{name}.{ext}"),
            None => name.to_owned(),
        };
        if self.folder.is_empty() {
            file
        } else {
            format!("{}/{file}", self.folder)
        }
    }

    fn title(&self) -> String {
        match &self.kind {
            NameKind::NewFile(ext) => format!("New {}", type_name(ext)),
            NameKind::NewFolder => "New folder".to_owned(),
            NameKind::Duplicate(file) => format!("Duplicate {file}"),
            NameKind::Prefab => "Create prefab from selection".to_owned(),
        }
    }

    fn action(&self) -> Action {
        match &self.kind {
            NameKind::NewFile(_) => Action::CreateAsset { file: self.path() },
            NameKind::NewFolder => Action::CreateFolder {
                folder: self.path(),
            },
            NameKind::Duplicate(file) => Action::DuplicateAsset {
                file: file.clone(),
                copy: self.path(),
            },
            NameKind::Prefab => Action::CreatePrefab { file: self.path() },
        }
    }
}

/// What a designer calls a file of type `ext`.
pub fn type_name(ext: &str) -> String {
    match ext {
        "level" => "level".to_owned(),
        "unit" => "prefab (unit)".to_owned(),
        "material" => "material".to_owned(),
        "mesh" => "mesh".to_owned(),
        other => format!(".{other} file"),
    }
}

/// The name dialog, while open.
pub fn name_dialog(
    ctx: &egui::Context,
    editor: &Editor,
    open: &mut Option<NameDialog>,
    actions: &mut Vec<Action>,
) {
    let Some(dialog) = open else {
        return;
    };
    let mut close = false;
    egui::Modal::new(egui::Id::unique("kiln name dialog")).show(ctx, |ui| {
        ui.set_width(460.0);
        ui.heading(dialog.title());
        let label = ui.label("Name");
        let field = ui
            .add(egui::TextEdit::singleline(&mut dialog.name).desired_width(f32::INFINITY))
            .labelled_by(label.id);
        // Read before the field is given its focus back: asking for it again
        // undoes the focus Enter took away, and the Enter with it.
        let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if !enter && (field.gained_focus() || ui.memory(|m| m.focused().is_none())) {
            field.request_focus();
        }
        let path = dialog.path();
        let check = editor.files().check_new_path(&path);
        ui.weak(format!("Makes {path}"));
        if let Err(problem) = &check {
            ui.colored_label(RED, problem.to_string());
            if let NameProblem::NotCanonical(Some(fix)) = problem {
                let fixed_name = strip_place(fix, &dialog.folder, &dialog.kind);
                if ui.button(format!("Use \"{fixed_name}\"")).clicked() {
                    dialog.name = fixed_name;
                }
            }
        }
        ui.horizontal(|ui| {
            let ok = check.is_ok();
            let label = match dialog.kind {
                NameKind::Duplicate(_) => "Duplicate",
                _ => "Create",
            };
            if ui.add_enabled(ok, egui::Button::new(label)).clicked() || (ok && enter) {
                actions.push(dialog.action());
                close = true;
            }
            if ui.button("Cancel").clicked() || ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                close = true;
            }
        });
    });
    if close {
        *open = None;
    }
}

/// The name part of a proposed canonical path: what goes in the name field.
fn strip_place(path: &str, folder: &str, kind: &NameKind) -> String {
    let rest = if folder.is_empty() {
        path
    } else {
        path.strip_prefix(&format!("{folder}/")).unwrap_or(path)
    };
    match kind {
        NameKind::NewFolder => rest.to_owned(),
        _ => rest
            .rsplit_once('.')
            .map_or(rest, |(stem, _)| stem)
            .to_owned(),
    }
}

/// The delete dialog: what goes, every reference it breaks, and a file to point
/// them at instead.
#[derive(Debug)]
pub struct DeleteDialog {
    /// What is deleted (files or folders).
    pub paths: Vec<String>,
    /// What that takes away and breaks, or why it cannot be deleted.
    pub plan: Result<DeletePlan, String>,
    /// The file chosen to take its place in the references.
    pub replace_with: Option<String>,
}

impl DeleteDialog {
    /// Plans deleting `paths` and opens the dialog.
    pub fn new(editor: &Editor, paths: Vec<String>) -> Self {
        let plan = editor.files().plan_delete(&paths);
        DeleteDialog {
            paths,
            plan,
            replace_with: None,
        }
    }
}

/// The delete dialog, while open.
pub fn delete_dialog(
    ctx: &egui::Context,
    editor: &Editor,
    open: &mut Option<DeleteDialog>,
    actions: &mut Vec<Action>,
) {
    let Some(dialog) = open else {
        return;
    };
    let mut close = false;
    let what = match dialog.paths.as_slice() {
        [one] => one.clone(),
        many => format!("{} files", many.len()),
    };
    egui::Modal::new(egui::Id::unique("kiln delete dialog")).show(ctx, |ui| {
        ui.set_width(560.0);
        ui.heading(format!("Delete {what}?"));
        match &dialog.plan {
            Err(e) => {
                ui.colored_label(RED, e);
                if ui.button("Cancel").clicked() {
                    close = true;
                }
            }
            Ok(plan) => {
                if plan.files.len() > 1 || !plan.folders.is_empty() {
                    ui.label(format!(
                        "{} files and {} folders go (Ctrl+Z brings them back).",
                        plan.files.len(),
                        plan.folders.len()
                    ));
                }
                if plan.references.is_empty() {
                    ui.label("Nothing in the project references it.");
                } else {
                    let n = plan.references.len();
                    let (refs, name, they) = if n == 1 {
                        ("reference", "names", "it becomes a missing reference")
                    } else {
                        ("references", "name", "they become missing references")
                    };
                    ui.colored_label(
                        YELLOW,
                        format!(
                            "⚠ {n} {refs} {name} it. Deleted, {they} (in Problems) unless you point {} at another file:",
                            if n == 1 { "it" } else { "them" }
                        ),
                    );
                    egui::ScrollArea::vertical()
                        .max_height(220.0)
                        .show(ui, |ui| {
                            for r in &plan.references {
                                ui.monospace(format!("{}: \"{}\"", r.place, r.text));
                            }
                        });
                }
                // One file of a type: its references can name another of that type.
                let single = match (dialog.paths.as_slice(), plan.folders.is_empty()) {
                    ([file], true) => Some(file.clone()),
                    _ => None,
                };
                if let Some(file) = &single
                    && !plan.references.is_empty()
                {
                    let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
                    let candidates: Vec<String> = editor
                        .files()
                        .checker()
                        .map(|c| {
                            c.index()
                                .files()
                                .map(|f| f.path.to_string())
                                .filter(|f| f != file && f.ends_with(&format!(".{ext}")))
                                .collect()
                        })
                        .unwrap_or_default();
                    ui.horizontal(|ui| {
                        let label = ui.label("Point to");
                        egui::ComboBox::from_id_salt("delete replacement")
                            .selected_text(dialog.replace_with.as_deref().unwrap_or("(choose a file)"))
                            .width(320.0)
                            .show_ui(ui, |ui| {
                                for c in &candidates {
                                    ui.selectable_value(&mut dialog.replace_with, Some(c.clone()), c);
                                }
                            })
                            .response
                            .labelled_by(label.id);
                    });
                }
                ui.horizontal(|ui| {
                    if let Some(new) = &dialog.replace_with
                        && ui
                            .button("Point there and delete")
                            .on_hover_text("Every reference is patched as a move patches it; one undo step")
                            .clicked()
                    {
                        actions.push(Action::DeleteAssets {
                            paths: dialog.paths.clone(),
                            replace_with: Some(new.clone()),
                        });
                        close = true;
                    }
                    let delete = if plan.references.is_empty() { "Delete" } else { "Delete anyway" };
                    if ui.button(delete).clicked() {
                        actions.push(Action::DeleteAssets {
                            paths: dialog.paths.clone(),
                            replace_with: None,
                        });
                        close = true;
                    }
                    if ui.button("Cancel").clicked() {
                        close = true;
                    }
                });
            }
        }
    });
    if close {
        *open = None;
    }
}

/// Asks what to do about files an import would write over.
pub fn import_question(ctx: &egui::Context, editor: &Editor, actions: &mut Vec<Action>) {
    let Some(question) = editor.files().import_question() else {
        return;
    };
    egui::Modal::new(egui::Id::unique("kiln import question")).show(ctx, |ui| {
        ui.set_width(520.0);
        ui.heading("Replace files?");
        ui.label(format!(
            "Importing would write over {} file(s) of the project:",
            question.conflicts.len()
        ));
        egui::ScrollArea::vertical()
            .max_height(160.0)
            .show(ui, |ui| {
                for c in &question.conflicts {
                    ui.monospace(c);
                }
            });
        let again = |on_conflict| Action::ImportFiles {
            sources: question.sources.clone(),
            folder: question.folder.clone(),
            on_conflict: Some(on_conflict),
        };
        ui.horizontal(|ui| {
            if ui
                .button("Replace")
                .on_hover_text("Their paths stay, so every reference to them keeps working")
                .clicked()
            {
                actions.push(again(OnConflict::Replace));
            }
            if ui
                .button("Keep both")
                .on_hover_text("The imported files get free names (rock_2.png)")
                .clicked()
            {
                actions.push(again(OnConflict::KeepBoth));
            }
            if ui.button("Cancel").clicked() {
                actions.push(Action::CancelImport);
            }
        });
    });
}

/// The rename dialog: the file, the new path being typed, and the plan once previewed.
pub type RenameDialog = (String, String, Option<Result<MovePlan, String>>);

/// The rename/move dialog, whichever tab is showing: it is opened from the asset
/// browser, the inspector and the Problems list alike.
pub(crate) fn rename_dialog(
    ctx: &egui::Context,
    editor: &Editor,
    open: &mut Option<RenameDialog>,
    actions: &mut Vec<Action>,
) {
    let Some((old, new, plan)) = open else {
        return;
    };
    let mut close = false;
    let mut apply = false;
    egui::Window::new("Rename or move")
        .collapsible(false)
        .resizable(true)
        .default_width(560.0)
        .show(ctx, |ui| {
            ui.label(format!("Move {old} to:"));
            let label = ui.label("New path");
            let r = ui
                .add(egui::TextEdit::singleline(new).desired_width(f32::INFINITY))
                .labelled_by(label.id);
            if r.changed() {
                *plan = None;
            }
            if ui.button("Preview").clicked() || (plan.is_none() && r.lost_focus()) {
                *plan = Some(
                    editor
                        .files()
                        .plan_move(&MoveRequest::new(old, new))
                        .map_err(|e| e.to_string()),
                );
            }
            match plan {
                Some(Ok(p)) => {
                    ui.label(format!(
                        "{} files move; {} references change in {} files:",
                        p.moves.len(),
                        p.change_count(),
                        p.edits.len()
                    ));
                    egui::ScrollArea::vertical()
                        .max_height(260.0)
                        .show(ui, |ui| {
                            for (o, n) in &p.moves {
                                ui.monospace(format!("move {o} -> {n}"));
                            }
                            for e in &p.edits {
                                for c in &e.changes {
                                    ui.monospace(format!(
                                        "{}: \"{}\" -> \"{}\"",
                                        c.place, c.old_text, c.new_text
                                    ));
                                }
                            }
                            // References the move touches but cannot patch safely:
                            // shown before applying, so nothing breaks unseen.
                            for skipped in &p.skipped {
                                ui.colored_label(YELLOW, format!("⚠ {skipped}"));
                            }
                        });
                    if p.is_empty() {
                        ui.label("Nothing to move: that is where it is already.");
                    } else if !p.skipped.is_empty() {
                        ui.label(format!(
                            "{} ambiguous references will be left as they are.",
                            p.skipped.len()
                        ));
                    }
                }
                Some(Err(e)) => {
                    ui.colored_label(RED, e.as_str());
                }
                None => {}
            }
            ui.horizontal(|ui| {
                if ui
                    .add_enabled(
                        matches!(plan, Some(Ok(p)) if !p.is_empty()),
                        egui::Button::new("Apply"),
                    )
                    .clicked()
                {
                    apply = true;
                }
                if ui.button("Cancel").clicked() {
                    close = true;
                }
            });
        });
    if apply && let Some(Ok(p)) = plan.take() {
        actions.push(Action::MoveAssets(Box::new(p)));
        close = true;
    }
    if close {
        *open = None;
    }
}
