//! The asset browser: the project's files as a tree with type icons and a filter.
//! Right-click a file for its references and dependencies, or to rename or move it
//! through the dependency checker: a preview lists every file, line and field that
//! will change, and Apply does it.

use std::collections::BTreeMap;

use dependency_checker::ReferenceView;
use dependency_checker::rename::{MovePlan, MoveRequest};

use crate::editor::actions::Action;
use crate::editor::model::Editor;
use crate::editor::thumbnails::Thumbnails;

/// How large a thumbnail shows in a row, and when hovered or selected (points).
const ROW_THUMBNAIL: f32 = 16.0;
const LARGE_THUMBNAIL: f32 = 128.0;

/// Asset browser state.
#[derive(Debug, Default)]
pub struct AssetState {
    /// Filter text.
    pub filter: String,
    /// A file to scroll to and highlight (set by the inspector's "show" button).
    pub reveal: Option<String>,
    /// The selected file.
    pub selected: Option<String>,
    /// The last "find references" or "show dependencies" question; its answer is
    /// looked up each frame, so it never goes stale after a rename or an edit.
    pub results: Option<ResultsQuery>,
    /// The rename dialog, while open.
    pub rename: Option<RenameDialog>,
    /// The asset browser was used last, so F2 renames the selected file rather than
    /// the selected entity.
    pub focused: bool,
}

/// What the results list answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultsQuery {
    /// Every place that references the file.
    ReferencesTo(String),
    /// Everything the file references.
    DependenciesOf(String),
}

impl ResultsQuery {
    fn title(&self) -> String {
        match self {
            ResultsQuery::ReferencesTo(f) => format!("References to {f}"),
            ResultsQuery::DependenciesOf(f) => format!("{f} references"),
        }
    }

    fn answer(&self, checker: &dependency_checker::Checker) -> Vec<ReferenceView> {
        match self {
            ResultsQuery::ReferencesTo(f) => checker.references_to(f),
            ResultsQuery::DependenciesOf(f) => checker.dependencies_of(f),
        }
    }

    /// The same question after `moves` (old -> new) were applied: it follows its file.
    fn after_moves(&self, moves: &[(String, String)]) -> Self {
        let follow = |f: &String| {
            moves
                .iter()
                .find(|(old, _)| old == f)
                .map_or_else(|| f.clone(), |(_, new)| new.clone())
        };
        match self {
            ResultsQuery::ReferencesTo(f) => ResultsQuery::ReferencesTo(follow(f)),
            ResultsQuery::DependenciesOf(f) => ResultsQuery::DependenciesOf(follow(f)),
        }
    }
}

/// The payload of a file dragged in the asset browser.
#[derive(Debug, Clone)]
struct DraggedFile(String);

impl AssetState {
    /// Opens the rename dialog for `file` with `new` filled in, previewed at once.
    pub fn open_rename(&mut self, editor: &Editor, file: &str, new: &str) {
        let plan = if file == new {
            None
        } else {
            Some(
                editor
                    .plan_move(&MoveRequest::new(file, new))
                    .map_err(|e| e.to_string()),
            )
        };
        self.rename = Some((file.to_owned(), new.to_owned(), plan));
    }
}

/// The rename dialog: the file, the new path being typed, and the plan once previewed.
pub type RenameDialog = (String, String, Option<Result<MovePlan, String>>);

fn icon(file: &str) -> &'static str {
    match file.rsplit('.').next().unwrap_or("") {
        "level" => "🗺",
        "unit" => "📦",
        "material" => "🎨",
        // A glyph the editor's fonts have (⬢ showed as an empty box).
        "mesh" => "🔷",
        "png" => "🖼",
        "project" => "⚙",
        _ => "📄",
    }
}

/// Shows the asset browser.
pub fn show(
    ui: &mut egui::Ui,
    editor: &Editor,
    state: &mut AssetState,
    thumbnails: &mut Thumbnails,
    actions: &mut Vec<Action>,
) {
    let Some(checker) = &editor.checker() else {
        ui.label("The project could not be indexed; see the log.");
        return;
    };
    let mut dropped: Option<(String, String)> = None;
    let files: Vec<String> = checker
        .index()
        .files()
        .map(|f| f.path.to_string())
        .collect();
    if let Some(r) = &state.reveal {
        state.selected = Some(r.clone());
        state.filter.clear();
    }
    ui.columns(2, |cols| {
        let ui = &mut cols[0];
        let filter_field = ui.add(egui::TextEdit::singleline(&mut state.filter).hint_text("Filter files").desired_width(f32::INFINITY));
        // The hint is not a name: screen readers and tests find the field by this.
        filter_field.widget_info(|| egui::WidgetInfo::labeled(egui::Role::TextInput, true, "Filter files"));
        let filter = state.filter.to_lowercase();
        let mut folders: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for f in files.iter().filter(|f| filter.is_empty() || f.to_lowercase().contains(&filter)) {
            let folder = f.rsplit_once('/').map_or("", |(d, _)| d);
            folders.entry(folder).or_default().push(f);
        }
        egui::ScrollArea::vertical().id_salt("asset files").auto_shrink([false, false]).show(ui, |ui| {
            for (folder, list) in folders {
                let name = if folder.is_empty() { "(project root)" } else { folder };
                let open = state.reveal.as_deref().is_some_and(|r| r.starts_with(folder)) || !filter.is_empty();
                let header = egui::CollapsingHeader::new(format!("📁 {name}")).id_salt(("folder", folder)).open(open.then_some(true)).show(ui, |ui| {
                    for file in list {
                        let short = file.rsplit('/').next().unwrap_or(file);
                        let selected = state.selected.as_deref() == Some(file);
                        let name = format!("{} {short}", icon(file));
                        // Asked for only by rows on screen: an open folder of
                        // thousands of files lays out every row, most scrolled away.
                        let row = egui::Rect::from_min_size(ui.cursor().min, egui::vec2(ui.available_width(), ui.spacing().interact_size.y));
                        let thumbnail = if ui.is_rect_visible(row) { thumbnails.get(file) } else { thumbnails.shown(file) };
                        let thumbnail = thumbnail.map(egui::TextureHandle::id);
                        let row = match thumbnail {
                            Some(t) => egui::Button::selectable(selected, (thumbnail_image(t, ROW_THUMBNAIL), short)),
                            None => egui::Button::selectable(selected, name.as_str()),
                        };
                        let mut r = ui.add(row);
                        // Named as without a thumbnail: the icon says the file's type.
                        r.widget_info(|| egui::WidgetInfo::selected(egui::Role::Button, true, selected, &name));
                        if let Some(t) = thumbnail {
                            r = r.on_hover_ui(|ui| {
                                ui.add(thumbnail_image(t, LARGE_THUMBNAIL));
                            });
                        }
                        if state.reveal.as_deref() == Some(file) {
                            r.scroll_to_me(Some(egui::Align::Center));
                        }
                        if r.clicked() {
                            state.selected = Some(file.to_owned());
                            state.focused = true;
                        }
                        // Drag a file onto a folder to move it there.
                        let drag = r.interact(egui::Sense::drag());
                        if drag.dragged() {
                            drag.dnd_set_drag_payload(DraggedFile(file.to_owned()));
                        }
                        // Levels and units (prefabs) open in the editor alike.
                        let editable = file.ends_with(".level") || file.ends_with(".unit");
                        if r.double_clicked() && editable {
                            actions.push(Action::OpenLevel(file.to_owned()));
                        }
                        r.context_menu(|ui| {
                            if editable && ui.button("Open").clicked() {
                                actions.push(Action::OpenLevel(file.to_owned()));
                                ui.close();
                            }
                            if ui.button("Find references").clicked() {
                                state.results = Some(ResultsQuery::ReferencesTo(file.to_owned()));
                                ui.close();
                            }
                            if ui.button("Show dependencies").clicked() {
                                state.results = Some(ResultsQuery::DependenciesOf(file.to_owned()));
                                ui.close();
                            }
                            if ui.button("Rename / move…").clicked() {
                                state.rename = Some((file.to_owned(), file.to_owned(), None));
                                ui.close();
                            }
                        });
                    }
                });
                if let Some(dragged) = header.header_response.dnd_release_payload::<DraggedFile>() {
                    let name = dragged.0.rsplit('/').next().unwrap_or(&dragged.0);
                    let target = if folder.is_empty() { name.to_owned() } else { format!("{folder}/{name}") };
                    dropped = Some((dragged.0.clone(), target));
                }
            }
        });
        state.reveal = None;

        let ui = &mut cols[1];
        if state.results.is_none()
            && let Some(file) = &state.selected
        {
            preview(ui, file, thumbnails);
        }
        match &state.results {
            Some(query) => {
                let refs = query.answer(checker);
                ui.strong(query.title());
                egui::ScrollArea::vertical().id_salt("asset results").auto_shrink([false, false]).show(ui, |ui| {
                    if refs.is_empty() {
                        ui.label("Nothing.");
                    }
                    for r in &refs {
                        let text = format!("{}", r.place);
                        let resp = ui.selectable_label(false, text).on_hover_text("Double-click to open the level and select the entity");
                        if resp.double_clicked() && r.place.file.ends_with(".level") {
                            actions.push(Action::OpenLevel(r.place.file.to_string()));
                            if let Some(e) = &r.place.entity {
                                let root = e.split('/').next().unwrap_or(e).to_owned();
                                actions.push(Action::Select(vec![root]));
                            }
                        }
                    }
                });
            }
            None => {
                ui.label("Right-click a file to find its references, show its dependencies, or rename it.");
            }
        }
    });
    if let Some((file, target)) = dropped
        && file != target
    {
        state.open_rename(editor, &file, &target);
    }
}

/// A thumbnail shown `size` points square.
fn thumbnail_image(id: egui::TextureId, size: f32) -> egui::Image<'static> {
    let size = egui::Vec2::splat(size);
    egui::Image::from_texture(egui::load::SizedTexture::new(id, size)).fit_to_exact_size(size)
}

/// The selected file's large thumbnail, or why it has none.
fn preview(ui: &mut egui::Ui, file: &str, thumbnails: &mut Thumbnails) {
    // No title: the row is highlighted, and the inspector names the file.
    if let Some(t) = thumbnails.get(file) {
        let image =
            thumbnail_image(t.id(), LARGE_THUMBNAIL).alt_text(format!("Thumbnail of {file}"));
        ui.add(image);
    } else if let Some(why) = thumbnails.error(file) {
        ui.weak(format!("No thumbnail: {why}"));
    }
    if let Some(why) = thumbnails.cache_error() {
        ui.weak(format!("Thumbnails are not kept: {why}"));
    }
}

/// The rename/move dialog, whichever tab is showing: it is opened from the asset
/// browser, the inspector and the Problems list alike.
pub(crate) fn rename_dialog(
    ctx: &egui::Context,
    editor: &Editor,
    state: &mut AssetState,
    actions: &mut Vec<Action>,
) {
    let Some((old, new, plan)) = &mut state.rename else {
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
                                ui.colored_label(
                                    egui::Color32::from_rgb(220, 170, 60),
                                    format!("⚠ {skipped}"),
                                );
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
                    ui.colored_label(egui::Color32::from_rgb(220, 80, 70), e.as_str());
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
        if let Some(query) = &state.results {
            state.results = Some(query.after_moves(&p.moves));
        }
        actions.push(Action::MoveAssets(Box::new(p)));
        close = true;
    }
    if close {
        state.rename = None;
    }
}
