//! The asset browser: the project's files by folder, with type icons, thumbnails and
//! a filter. Right-click a folder to make a level, prefab, material, mesh, any file
//! with a schema, or a folder in it, or to import files into it; right-click a file
//! to open, place, duplicate, delete, rename or move it, or to see its references and
//! dependencies. The dialogs are in `asset_dialogs.rs`, below this file: they are
//! handed the one dialog they show, not the browser's state.

use std::collections::BTreeMap;

use dependency_checker::ReferenceView;
use dependency_checker::ops::MoveRequest;

use super::asset_dialogs::{DeleteDialog, NameDialog};
pub use super::asset_dialogs::{NameKind, RenameDialog};
use crate::editor::actions::{Action, UiCommand};
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
    /// The selected folder (clicked, or holding the selected file): where new files
    /// and imports go.
    pub folder: Option<String>,
    /// The name dialog (new file, new folder, duplicate), while open.
    pub name_dialog: Option<NameDialog>,
    /// The delete dialog, while open.
    pub delete_dialog: Option<DeleteDialog>,
    /// The folder under the pointer this frame, and where its row is: files dropped
    /// on the window there go into it.
    pub hovered_folder: Option<String>,
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
    pub(crate) fn after_moves(&self, moves: &[(String, String)]) -> Self {
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

/// The payload of a file dragged from the asset browser (onto a folder to move it,
/// onto the viewport to place it).
#[derive(Debug, Clone)]
pub struct DraggedFile(pub String);

/// The folder of project path `path` (`""` at the root).
pub fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Whether `file` can be placed in a level: a mesh (an entity drawing it) or a unit
/// (an instance of the prefab).
pub fn placeable(file: &str) -> bool {
    file.ends_with(".mesh") || file.ends_with(".unit")
}

impl AssetState {
    /// Selects `path` (a file, or a folder written `folder/`) and scrolls to it.
    pub fn show(&mut self, path: &str) {
        match path.strip_suffix('/') {
            Some(folder) => {
                self.folder = Some(folder.to_owned());
                self.reveal = Some(path.to_owned());
            }
            None => {
                self.folder = Some(folder_of(path).to_owned());
                self.selected = Some(path.to_owned());
                self.reveal = Some(path.to_owned());
            }
        }
        self.focused = true;
        self.results = None;
    }

    /// Follows files that moved (old, new), or the folders they were in: the
    /// selection, the selected folder and the results' question keep showing them.
    pub fn follow_moves(&mut self, moves: &[(String, String)]) {
        let follow = |path: &str| -> Option<String> {
            moves.iter().find_map(|(old, new)| {
                let rest = path.strip_prefix(old.as_str())?;
                (rest.is_empty() || rest.starts_with('/')).then(|| format!("{new}{rest}"))
            })
        };
        if let Some(new) = self.selected.as_deref().and_then(follow) {
            self.selected = Some(new);
        }
        if let Some(new) = self.folder.as_deref().and_then(follow) {
            self.folder = Some(new);
        }
        if let Some(query) = &self.results {
            self.results = Some(query.after_moves(moves));
        }
    }

    /// Lets go of what `paths` (files, or folders with what is in them) deleted:
    /// the inspector then shows what is selected now, not a file that is gone.
    pub fn forget_deleted(&mut self, paths: &[String]) {
        let gone = |path: &str| {
            paths.iter().any(|p| {
                path.strip_prefix(p.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
        };
        if self.selected.as_deref().is_some_and(gone) {
            self.selected = None;
        }
        if self.folder.as_deref().is_some_and(gone) {
            self.folder = None;
        }
    }

    /// Where new files and imports go: the selected folder (or the selected file's),
    /// or the project root.
    pub fn target_folder(&self) -> String {
        self.folder
            .clone()
            .or_else(|| self.selected.as_deref().map(|f| folder_of(f).to_owned()))
            .unwrap_or_default()
    }

    /// Opens the name dialog to make a `kind` in `folder`.
    pub fn open_name_dialog(&mut self, editor: &Editor, kind: NameKind, folder: &str) {
        self.name_dialog = Some(NameDialog::new(editor, kind, folder));
    }

    /// Opens the delete dialog for `paths`.
    pub fn open_delete(&mut self, editor: &Editor, paths: Vec<String>) {
        self.delete_dialog = Some(DeleteDialog::new(editor, paths));
    }

    /// Opens the rename dialog for `file` with `new` filled in, previewed at once.
    pub fn open_rename(&mut self, editor: &Editor, file: &str, new: &str) {
        let plan = if file == new {
            None
        } else {
            Some(
                editor
                    .files()
                    .plan_move(&MoveRequest::new(file, new))
                    .map_err(|e| e.to_string()),
            )
        };
        self.rename = Some((file.to_owned(), new.to_owned(), plan));
    }
}

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

/// The menu of things to make in `folder` (a folder's context menu, and the
/// browser's own).
fn folder_menu(
    ui: &mut egui::Ui,
    editor: &Editor,
    state: &mut AssetState,
    folder: &str,
    actions: &mut Vec<Action>,
) {
    let open = |state: &mut AssetState, kind| state.open_name_dialog(editor, kind, folder);
    for (ext, label) in [
        ("level", "New level…"),
        ("unit", "New prefab…"),
        ("material", "New material…"),
        ("mesh", "New mesh…"),
    ] {
        if ui.button(label).clicked() {
            open(state, NameKind::NewFile(ext.into()));
            ui.close();
        }
    }
    let others: Vec<String> = editor
        .files()
        .creatable_types()
        .into_iter()
        .filter(|t| !["level", "unit", "material", "mesh"].contains(&t.as_str()))
        .collect();
    if !others.is_empty() {
        ui.menu_button("New other…", |ui| {
            for ext in others {
                if ui.button(format!(".{ext} file…")).clicked() {
                    open(state, NameKind::NewFile(ext));
                    ui.close();
                }
            }
        });
    }
    if ui.button("New folder…").clicked() {
        open(state, NameKind::NewFolder);
        ui.close();
    }
    ui.separator();
    if ui.button("Import files…").clicked() {
        state.folder = Some(folder.to_owned());
        actions.push(Action::Run(UiCommand::Import));
        ui.close();
    }
    if !folder.is_empty() {
        ui.separator();
        if ui.button("Rename / move…").clicked() {
            state.rename = Some((folder.to_owned(), folder.to_owned(), None));
            ui.close();
        }
        if ui.button("Delete…").clicked() {
            state.open_delete(editor, vec![folder.to_owned()]);
            ui.close();
        }
    }
}

/// A folder of the browser's tree: its files and its folders, by name.
#[derive(Debug, Default)]
struct FolderNode<'a> {
    files: Vec<&'a str>,
    folders: BTreeMap<&'a str, FolderNode<'a>>,
}

impl<'a> FolderNode<'a> {
    /// The node of project folder `folder`, made with those above it.
    fn at(&mut self, folder: &'a str) -> &mut FolderNode<'a> {
        if folder.is_empty() {
            return self;
        }
        folder.split('/').fold(self, |node, segment| {
            node.folders.entry(segment).or_default()
        })
    }
}

/// What drawing the tree needs besides the node.
struct TreeView<'a, 'e> {
    editor: &'e Editor,
    state: &'a mut AssetState,
    thumbnails: &'a mut Thumbnails,
    actions: &'a mut Vec<Action>,
    /// Every folder shown open (a filter is typed).
    all_open: bool,
    /// A file dragged onto a folder: (file, new path).
    dropped: Option<(String, String)>,
}

impl TreeView<'_, '_> {
    /// The folders of `node` (at project folder `path`), then its files.
    fn contents(&mut self, ui: &mut egui::Ui, node: &FolderNode<'_>, path: &str) {
        for (name, child) in &node.folders {
            let folder = if path.is_empty() {
                (*name).to_owned()
            } else {
                format!("{path}/{name}")
            };
            self.folder(ui, child, &folder, name);
        }
        if node.folders.is_empty() && node.files.is_empty() && !path.is_empty() {
            ui.weak("(empty)");
        }
        for file in &node.files {
            self.file_row(ui, file, path);
        }
    }

    fn folder(&mut self, ui: &mut egui::Ui, node: &FolderNode<'_>, folder: &str, name: &str) {
        let below = format!("{folder}/");
        let revealed = self
            .state
            .reveal
            .as_deref()
            .is_some_and(|r| r.starts_with(&below));
        let open = revealed || self.all_open;
        let chosen = self.state.folder.as_deref() == Some(folder);
        let title = egui::RichText::new(format!("📁 {name}"));
        let title = if chosen { title.strong() } else { title };
        let header = egui::CollapsingHeader::new(title)
            .id_salt(("folder", folder))
            .open(open.then_some(true))
            .show(ui, |ui| self.contents(ui, node, folder));
        let row = &header.header_response;
        if row.contains_pointer() {
            self.state.hovered_folder = Some(folder.to_owned());
        }
        if row.clicked() || row.secondary_clicked() {
            self.state.folder = Some(folder.to_owned());
            self.state.focused = true;
        }
        if self.state.reveal.as_deref() == Some(below.as_str()) {
            row.scroll_to_me(Some(egui::Align::Center));
        }
        let (editor, state, actions) = (self.editor, &mut *self.state, &mut *self.actions);
        row.context_menu(|ui| folder_menu(ui, editor, state, folder, actions));
        if let Some(dragged) = row.dnd_release_payload::<DraggedFile>() {
            let name = dragged.0.rsplit('/').next().unwrap_or(&dragged.0);
            self.dropped = Some((dragged.0.clone(), format!("{folder}/{name}")));
        }
    }

    fn file_row(&mut self, ui: &mut egui::Ui, file: &str, folder: &str) {
        let (editor, state, actions) = (self.editor, &mut *self.state, &mut *self.actions);
        let short = file.rsplit('/').next().unwrap_or(file);
        let selected = state.selected.as_deref() == Some(file);
        let name = format!("{} {short}", icon(file));
        // Asked for only by rows on screen: an open folder of thousands of files
        // lays out every row, most scrolled away.
        let row = egui::Rect::from_min_size(
            ui.cursor().min,
            egui::vec2(ui.available_width(), ui.spacing().interact_size.y),
        );
        let thumbnail = if ui.is_rect_visible(row) {
            self.thumbnails.get(file)
        } else {
            self.thumbnails.shown(file)
        };
        let thumbnail = thumbnail.map(egui::TextureHandle::id);
        let row = match thumbnail {
            Some(t) => {
                egui::Button::selectable(selected, (thumbnail_image(t, ROW_THUMBNAIL), short))
            }
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
        if r.contains_pointer() {
            state.hovered_folder = Some(folder.to_owned());
        }
        if r.clicked() {
            state.selected = Some(file.to_owned());
            state.folder = Some(folder.to_owned());
            state.focused = true;
        }
        // Drag a file onto a folder to move it there, or onto the viewport to place it.
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
            state.selected = Some(file.to_owned());
            state.folder = Some(folder.to_owned());
            state.focused = true;
            if editable && ui.button("Open").clicked() {
                actions.push(Action::OpenLevel(file.to_owned()));
                ui.close();
            }
            if placeable(file)
                && editor.level().is_some()
                && ui
                    .button("Place in level")
                    .on_hover_text("On the surface under the middle of the view (or drag it onto the viewport to put it under the pointer)")
                    .clicked()
            {
                actions.push(Action::PlaceAsset {
                    file: file.to_owned(),
                    position: None,
                });
                ui.close();
            }
            if let Some(entry) = file.strip_suffix(".level")
                && !editor.files().project().config().boot_levels.iter().any(|b| b == entry)
                && ui
                    .button("Make a boot level")
                    .on_hover_text(
                        "Add it to boot_levels in kiln.project: the game can start in it, and what it uses is in use",
                    )
                    .clicked()
            {
                actions.push(Action::MakeBootLevel(file.to_owned()));
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
            ui.separator();
            if ui.button("Rename / move…").clicked() {
                state.rename = Some((file.to_owned(), file.to_owned(), None));
                ui.close();
            }
            if ui.button("Duplicate…").clicked() {
                state.open_name_dialog(editor, NameKind::Duplicate(file.to_owned()), folder);
                ui.close();
            }
            if ui.button("Delete…").clicked() {
                state.open_delete(editor, vec![file.to_owned()]);
                ui.close();
            }
        });
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
    let Some(checker) = &editor.files().checker() else {
        ui.label("The project could not be indexed; see the log.");
        return;
    };
    let files: Vec<String> = checker
        .index()
        .files()
        .map(|f| f.path.to_string())
        .collect();
    if let Some(r) = &state.reveal
        && !r.ends_with('/')
    {
        state.selected = Some(r.clone());
        state.filter.clear();
    }
    state.hovered_folder = None;
    let mut dropped = None;
    ui.columns(2, |cols| {
        let ui = &mut cols[0];
        ui.horizontal(|ui| {
            let filter_field = ui.add(egui::TextEdit::singleline(&mut state.filter).hint_text("Filter files").desired_width(ui.available_width() - 30.0));
            // The hint is not a name: screen readers and tests find the field by this.
            filter_field.widget_info(|| egui::WidgetInfo::labeled(egui::Role::TextInput, true, "Filter files"));
            ui.menu_button("➕", |ui| {
                let folder = state.target_folder();
                folder_menu(ui, editor, state, &folder, actions);
            })
            .response
            .on_hover_text("Make a level, prefab, material, mesh or folder, or import files, in the selected folder");
        });
        let filter = state.filter.to_lowercase();
        let mut tree = FolderNode::default();
        for f in files.iter().filter(|f| filter.is_empty() || f.to_lowercase().contains(&filter)) {
            tree.at(folder_of(f)).files.push(f);
        }
        if filter.is_empty() {
            for empty in editor.files().empty_folders() {
                tree.at(empty);
            }
        }
        egui::ScrollArea::vertical().id_salt("asset files").auto_shrink([false, false]).show(ui, |ui| {
            let mut view = TreeView {
                editor,
                state: &mut *state,
                thumbnails: &mut *thumbnails,
                actions: &mut *actions,
                all_open: !filter.is_empty(),
                dropped: None,
            };
            view.contents(ui, &tree, "");
            dropped = view.dropped;
            // Right-click below the folders: make things at the project root.
            let size = egui::vec2(ui.available_width(), ui.available_height().max(24.0));
            let below = ui.allocate_response(size, egui::Sense::click());
            below.context_menu(|ui| folder_menu(ui, editor, state, "", actions));
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
                ui.label("Right-click a file to open, place, duplicate, delete or rename it, or to find its references; right-click a folder to make files in it or import into it. Drop files from your file manager on the window to import them.");
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
