//! The eframe application: lays out the panels, turns shortcuts into actions, applies
//! the frame's actions, and shows dialogs and toasts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::ViewportCommand;

use super::actions::{Action, UiCommand, UnsavedAnswer};
use super::model::{Editor, Effect, Severity};
use super::panels::{self, PanelState};
use super::settings::Settings;
use super::view_commands;

/// The digit keys 1 to 9, for camera bookmarks.
const DIGITS: [egui::Key; 9] = [
    egui::Key::Num1,
    egui::Key::Num2,
    egui::Key::Num3,
    egui::Key::Num4,
    egui::Key::Num5,
    egui::Key::Num6,
    egui::Key::Num7,
    egui::Key::Num8,
    egui::Key::Num9,
];

/// What to do once the user answered "save changes?".
#[derive(Debug, Clone, PartialEq)]
enum Pending {
    OpenLevel(String),
    OpenProject(PathBuf),
    CreateProject(PathBuf, crate::new_project::Template),
    Quit,
}

/// The editor window.
pub struct KilnApp {
    /// The editor state; `None` when no project could be opened.
    pub editor: Option<Editor>,
    /// Answers `kiln` commands typed in a terminal for the open project.
    commands: Option<super::command_server::CommandServer>,
    /// Persisted preferences.
    pub settings: Settings,
    /// Per-panel UI state (camera, filters, dialogs).
    pub panels: PanelState,
    /// Why the last project failed to open.
    open_error: Option<String>,
    /// Wakes the window when the watcher has changes (a repaint request).
    waker: Option<dependency_checker::watch::Waker>,
    pending: Option<Pending>,
    /// The user chose to close (and answered about unsaved edits).
    allowed_to_close: bool,
    /// The close was sent to the window.
    closing: bool,
    /// Messages on screen, with the UI time they appeared (set when first shown).
    toasts: super::toasts::Toasts,
    last_title: String,
    last_frame: Option<Instant>,
    /// `KILN_SCREENSHOT=path.png`: save a screenshot of the window after a few
    /// frames, then quit (how the README's screenshots are made, with
    /// `KILN_SCREENSHOT_SCENE` naming what to show; see `screenshots/make.sh`).
    screenshot: Option<(PathBuf, u32)>,
    /// eframe's wgpu device, when it runs on wgpu: the viewport renders with it.
    render_state: Option<egui_wgpu::RenderState>,
    /// File > New project…, while open.
    new_project: Option<super::new_project_dialog::NewProjectDialog>,
    /// Text to put on the system clipboard at the end of the frame.
    clipboard_out: Option<String>,
    /// Frames built so far (for `KILN_FRAME_LOG`).
    frames_built: u64,
    /// The window's own file dialog, while open.
    file_picker: Option<super::file_picker::FilePicker>,
    /// Which file dialog to use (`KILN_FILE_DIALOG`).
    pub file_dialogs: super::file_picker::FileDialogs,
}

impl std::fmt::Debug for KilnApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KilnApp")
            .field("editor", &self.editor)
            .finish_non_exhaustive()
    }
}

impl KilnApp {
    /// Opens the editor on `project` (or the last project, or nothing).
    pub fn new(cc: &eframe::CreationContext<'_>, project: Option<PathBuf>) -> Self {
        let settings: Settings = cc
            .storage
            .and_then(|s| eframe::get_value(s, Settings::KEY))
            .unwrap_or_default();
        let project = project.or_else(|| settings.recent_projects.first().cloned());
        let mut app = Self::with_settings(settings);
        app.render_state = cc.wgpu_render_state.clone();
        let ctx = cc.egui_ctx.clone();
        app.waker = Some(std::sync::Arc::new(move || ctx.request_repaint()));
        if let Some(dir) = project {
            app.open_project(&dir);
        }
        app.screenshot = std::env::var_os("KILN_SCREENSHOT").map(|p| (PathBuf::from(p), 0));
        app
    }

    /// An editor with no project, for tests and `new`.
    pub fn with_settings(settings: Settings) -> Self {
        KilnApp {
            editor: None,
            commands: None,
            settings,
            panels: PanelState::default(),
            open_error: None,
            waker: None,
            pending: None,
            allowed_to_close: false,
            closing: false,
            toasts: super::toasts::Toasts::default(),
            last_title: String::new(),
            last_frame: None,
            screenshot: None,
            render_state: None,
            new_project: None,
            clipboard_out: None,
            frames_built: 0,
            file_picker: None,
            file_dialogs: super::file_picker::FileDialogs::from_env(),
        }
    }

    /// Opens the project at `dir`; on failure the current one stays open and the
    /// error is shown.
    pub fn open_project(&mut self, dir: &Path) {
        match Editor::open_with_waker(dir, self.waker.clone()) {
            Ok(mut editor) => {
                editor.set_undo_capacity(self.settings.undo_steps);
                // The project's socket goes with the project.
                self.commands = None;
                match super::command_server::CommandServer::start(&editor) {
                    Ok(server) => self.commands = Some(server),
                    // Commands in a terminal then work alone: slower, as correct.
                    Err(e) => editor.info(format!("not answering kiln commands: {e:#}")),
                }
                self.settings
                    .remember(editor.files().project().root().to_owned());
                self.panels = PanelState::default();
                self.editor = Some(editor);
                self.open_error = None;
            }
            Err(e) => {
                let message = format!("cannot open {}: {e:#}", dir.display());
                self.toasts.push(Severity::Error, message.clone());
                self.open_error = Some(message);
            }
        }
    }

    /// Makes a project from `template` in `dir` and opens it; on failure the
    /// dialog stays open and says why.
    pub fn create_project(&mut self, dir: &Path, template: crate::new_project::Template) {
        match crate::new_project::create(dir, template, None) {
            Ok(made) => {
                self.new_project = None;
                self.open_project(&made.root);
                self.toasts.push(
                    Severity::Info,
                    format!("created {} in {}", made.name, made.root.display()),
                );
            }
            Err(e) => {
                let message = format!("{e:#}");
                match &mut self.new_project {
                    Some(dialog) => dialog.error = Some(message),
                    None => self.toasts.push(Severity::Error, message),
                }
            }
        }
    }

    fn title(&self) -> String {
        match &self.editor {
            Some(e) => {
                let level = e.level().as_ref().map_or("no level", |l| l.file.as_str());
                let dirty = if e.is_dirty() { " *" } else { "" };
                format!("Kiln - {} - {level}{dirty}", e.files().project().name())
            }
            None => "Kiln".into(),
        }
    }

    /// Applies actions: what every panel, menu, dialog and shortcut produces, and
    /// what tests drive. The window's own actions (open a project, quit, answer the
    /// "save changes?" question) are handled here, and the ones that would lose
    /// edits wait for that answer; everything else goes to [`Editor::apply`]. The
    /// editor's one-shot requests (frame, rename, toasts) are routed to the panels.
    pub fn apply_actions(&mut self, actions: Vec<Action>) {
        let mut queue: std::collections::VecDeque<Action> = actions.into();
        while let Some(action) = queue.pop_front() {
            match action {
                Action::OpenProject(dir) => {
                    if self.editor.as_ref().is_some_and(Editor::is_dirty) {
                        self.pending = Some(Pending::OpenProject(dir));
                    } else {
                        self.open_project(&dir);
                    }
                }
                Action::Run(command @ (UiCommand::NewProject | UiCommand::TryDemo)) => {
                    // Beside the open project, or in the home folder.
                    let location = self
                        .editor
                        .as_ref()
                        .and_then(|e| e.files().project().root().parent().map(Path::to_owned))
                        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
                        .unwrap_or_else(|| PathBuf::from("."));
                    use super::new_project_dialog::NewProjectDialog;
                    let dialog = match command {
                        UiCommand::TryDemo => NewProjectDialog {
                            template: crate::new_project::Template::Demo,
                            ..NewProjectDialog::named(location, "kiln_demo")
                        },
                        _ => NewProjectDialog::new(location),
                    };
                    self.new_project = Some(dialog);
                }
                Action::CreateProject { dir, template } => {
                    if self.editor.as_ref().is_some_and(Editor::is_dirty) {
                        self.pending = Some(Pending::CreateProject(dir, template));
                    } else {
                        self.create_project(&dir, template);
                    }
                }
                Action::Quit => {
                    if self.editor.as_ref().is_some_and(Editor::is_dirty) {
                        self.pending = Some(Pending::Quit);
                    } else {
                        self.allowed_to_close = true;
                    }
                }
                Action::AnswerUnsaved(answer) => self.answer_unsaved(answer),
                Action::RevealFile(file) => {
                    self.panels.bottom = panels::BottomTab::Assets;
                    self.panels.assets.selected = Some(file.clone());
                    self.panels.assets.reveal = Some(file);
                }
                Action::Run(UiCommand::Import) => {
                    let folder = self.panels.assets.target_folder();
                    let purpose = super::file_picker::Purpose::Import { folder };
                    queue.push_back(Action::ChooseFiles(purpose));
                }
                Action::ChooseFiles(purpose) => {
                    use super::file_picker::{Chosen, Purpose, choose};
                    let home = std::env::var_os("HOME").map(PathBuf::from);
                    let beside_project = self
                        .editor
                        .as_ref()
                        .and_then(|e| e.files().project().root().parent().map(Path::to_owned));
                    let start = match &purpose {
                        Purpose::ProjectLocation => self
                            .new_project
                            .as_ref()
                            .map(|d| PathBuf::from(d.location.trim())),
                        Purpose::OpenProject => beside_project,
                        Purpose::Import { .. } => None,
                    }
                    .or(home)
                    .unwrap_or_else(|| PathBuf::from("/"));
                    match choose(purpose, &start, self.file_dialogs) {
                        Chosen::Done(next) => queue.extend(next),
                        Chosen::InWindow(picker) => self.file_picker = Some(picker),
                    }
                }
                Action::SetProjectLocation(dir) => {
                    if let Some(dialog) = &mut self.new_project {
                        dialog.location = dir.display().to_string();
                    }
                }
                // The handle's tool, the views, hiding and locking are the
                // designer's view of the level, not the level.
                Action::Run(c)
                    if let Some(follow) = view_commands::run(
                        c,
                        self.editor.as_ref(),
                        &mut self.panels,
                        &mut self.settings,
                    ) =>
                {
                    queue.extend(follow);
                }
                // A prefab is named by the designer before it is made.
                Action::Run(UiCommand::CreatePrefab) => {
                    if let Some(editor) = &self.editor {
                        if editor.selection().is_empty() {
                            let why = "select the entities to make a prefab of";
                            self.toasts.push(Severity::Warning, why.to_owned());
                        } else {
                            let kind = super::panels::assets::NameKind::Prefab;
                            self.panels.assets.open_name_dialog(editor, kind, "units");
                        }
                    }
                }
                Action::SetHidden { id, hidden } => {
                    self.panels.level_view.changed();
                    let view = &mut self.panels.level_view.hidden;
                    if hidden {
                        view.insert(id)
                    } else {
                        view.remove(&id)
                    };
                }
                Action::SetLocked { id, locked } => {
                    self.panels.level_view.changed();
                    let view = &mut self.panels.level_view.locked;
                    if locked {
                        view.insert(id)
                    } else {
                        view.remove(&id)
                    };
                }
                Action::KeepBookmark(slot) => {
                    if let Some(said) =
                        view_commands::keep_bookmark(slot, &self.panels, &mut self.settings)
                    {
                        self.toasts.push(Severity::Info, said);
                    }
                }
                Action::GoToBookmark(slot) => {
                    if let Err(why) =
                        view_commands::go_to_bookmark(slot, &mut self.panels, &self.settings)
                    {
                        self.toasts.push(Severity::Warning, why);
                    }
                }
                // New and placed entities land on the surface under the pointer (or
                // the view's middle) and rest on it; what was placed is selected:
                // the inspector shows it, not the file.
                Action::PlaceAsset { file, position } => {
                    self.panels.assets.focused = false;
                    if let Some(editor) = &mut self.editor {
                        let point = position.map(glam::Vec3::from_array).unwrap_or_else(|| {
                            view_commands::landing(editor, &mut self.panels, &self.settings)
                        });
                        let position = Some(point.to_array());
                        let place = Action::PlaceAsset { file, position };
                        view_commands::place(editor, &mut self.panels, place, point, false);
                    }
                }
                Action::Run(UiCommand::NewEntity) => {
                    if let Some(editor) = &mut self.editor {
                        let point =
                            view_commands::landing(editor, &mut self.panels, &self.settings);
                        let position = point.to_array();
                        let create = Action::CreateEntity { position };
                        view_commands::place(editor, &mut self.panels, create, point, false);
                    }
                }
                // A paste with the pointer over the viewport lands under it.
                paste @ (Action::PasteText(_) | Action::Run(UiCommand::Paste)) => {
                    if let Some(editor) = &mut self.editor {
                        match view_commands::paste_landing(editor, &mut self.panels, &self.settings)
                        {
                            Some(point) => {
                                view_commands::place(editor, &mut self.panels, paste, point, true)
                            }
                            None => editor.apply(paste),
                        }
                    }
                }
                // Jumping within the open level only selects: nothing to save.
                Action::OpenLevel(file)
                    if self
                        .editor
                        .as_ref()
                        .is_some_and(|e| e.is_dirty() && !e.is_open(&file)) =>
                {
                    self.pending = Some(Pending::OpenLevel(file))
                }
                other => {
                    if let Some(editor) = &mut self.editor {
                        editor.apply(other);
                    }
                }
            }
            queue.extend(self.route_effects());
        }
        // Effects also come from outside actions (opening a project frames it, the
        // watcher's toasts): route them every frame, not only after an action.
        let more = self.route_effects();
        if !more.is_empty() {
            self.apply_actions(more);
        }
    }

    /// Hands the editor's one-shot requests to the panels and the toasts; returns
    /// the actions they lead to (opening a level just made goes through the "save
    /// changes?" question like any other).
    fn route_effects(&mut self) -> Vec<Action> {
        let Some(editor) = &mut self.editor else {
            return Vec::new();
        };
        let mut follow = Vec::new();
        for effect in editor.take_effects() {
            match effect {
                Effect::FrameSelection => self.panels.viewport.frame_request = true,
                Effect::BeginRename(id) => self.panels.begin_rename = Some(id),
                Effect::Toast(t) => self.toasts.push(t.severity, t.text),
                Effect::ShowFile(file) => {
                    self.panels.bottom = panels::BottomTab::Assets;
                    self.panels.assets.show(&file);
                }
                Effect::OpenLevel(file) => follow.push(Action::OpenLevel(file)),
                Effect::CopyText(text) => self.clipboard_out = Some(text),
                Effect::FilesMoved(moves) => self.panels.assets.follow_moves(&moves),
                Effect::FilesDeleted(paths) => self.panels.assets.forget_deleted(&paths),
                Effect::ShowConflicts => self.panels.bottom = panels::BottomTab::Conflicts,
            }
        }
        follow
    }

    /// Goes on with what waited for "save changes?" (or, on Cancel, forgets it).
    fn answer_unsaved(&mut self, answer: Option<UnsavedAnswer>) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        let Some(answer) = answer else { return };
        let Some(editor) = &mut self.editor else {
            return;
        };
        match answer {
            UnsavedAnswer::Save => {
                editor.apply(Action::Run(UiCommand::Save));
                // The save failed (and said why): nothing is lost, stay here.
                if editor.is_dirty() {
                    return;
                }
            }
            // Discarding on purpose: the edits are gone, and neither the recovery
            // file nor the frames before the window closes may bring them back.
            UnsavedAnswer::Discard => editor.apply(Action::DiscardUnsavedEdits),
        }
        match pending {
            Pending::OpenLevel(file) => editor.apply(Action::OpenLevel(file)),
            Pending::OpenProject(dir) => self.open_project(&dir),
            Pending::CreateProject(dir, template) => self.create_project(&dir, template),
            Pending::Quit => self.allowed_to_close = true,
        }
    }

    /// Whether a dialog waits for an answer: the keys are its, not the scene's.
    fn dialog_open(&self) -> bool {
        let assets = &self.panels.assets;
        self.new_project.is_some()
            || self.file_picker.is_some()
            || self.pending.is_some()
            || assets.name_dialog.is_some()
            || assets.delete_dialog.is_some()
            || self.editor.as_ref().is_some_and(super::dialogs::asked)
    }

    fn shortcuts(&mut self, ctx: &egui::Context, actions: &mut Vec<Action>) {
        if self.dialog_open() {
            return;
        }
        // Only a focused text field swallows plain keys (F2, Delete, F); the scene tree
        // also takes focus, for arrow keys, and must still let them through.
        let typing = ctx.text_edit_focused();
        // Copy, cut and paste are the scene's, not the asset browser's.
        let browsing = self.panels.assets.focused;
        let on_entities = |c: UiCommand| {
            !matches!(c, UiCommand::Copy | UiCommand::Cut | UiCommand::Paste) || !browsing
        };
        // Camera bookmarks: Ctrl+Shift+digit keeps one, Ctrl+digit goes back to it
        // (before the plain digits, which are the views).
        if !typing {
            for (slot, key) in (1u8..).zip(DIGITS) {
                let keep = egui::KeyboardShortcut::new(
                    egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
                    key,
                );
                let go = egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, key);
                if ctx.input_mut(|i| i.consume_shortcut(&keep)) {
                    actions.push(Action::KeepBookmark(slot));
                } else if ctx.input_mut(|i| i.consume_shortcut(&go)) {
                    actions.push(Action::GoToBookmark(slot));
                }
            }
        }
        // egui matches modifiers logically (Ctrl+Z also matches Ctrl+Shift+Z), so the
        // shortcuts with more modifiers must get their turn first.
        let mut commands = UiCommand::ALL;
        commands.sort_by_key(|c| {
            std::cmp::Reverse(c.shortcut().map_or(0, |s| {
                let m = s.modifiers;
                u8::from(m.command) + u8::from(m.ctrl) + u8::from(m.shift) + u8::from(m.alt)
            }))
        });
        let tree_keys = self.panels.tree.has_keys;
        for c in commands {
            if (typing && !c.works_while_typing()) || !on_entities(c) {
                continue;
            }
            // End moves to the last row while the tree has the keys.
            if tree_keys && c == UiCommand::DropToFloor {
                continue;
            }
            if let Some(sc) = c.shortcut()
                && ctx.input_mut(|i| i.consume_shortcut(&sc))
            {
                // F2, Delete and Ctrl+D act on the selected file when the asset
                // browser was used last.
                if self.panels.assets.focused
                    && let (Some(file), Some(editor)) =
                        (self.panels.assets.selected.clone(), &self.editor)
                {
                    let assets = &mut self.panels.assets;
                    let folder = super::panels::assets::folder_of(&file).to_owned();
                    match c {
                        UiCommand::BeginRename => {
                            assets.open_rename(editor, &file, &file);
                            continue;
                        }
                        UiCommand::Delete => {
                            assets.open_delete(editor, vec![file]);
                            continue;
                        }
                        UiCommand::Duplicate => {
                            assets.open_name_dialog(
                                editor,
                                super::panels::assets::NameKind::Duplicate(file),
                                &folder,
                            );
                            continue;
                        }
                        _ => {}
                    }
                }
                actions.push(Action::Run(c));
            }
        }
        // The window turns Ctrl+C, Ctrl+X and Ctrl+V into clipboard events, not
        // keys (a paste carries the system clipboard's text); outside a text field
        // they copy, cut and paste entities.
        if !typing && !self.panels.assets.focused {
            for event in ctx.input(|i| i.events.clone()) {
                match event {
                    egui::Event::Copy => actions.push(Action::Run(UiCommand::Copy)),
                    egui::Event::Cut => actions.push(Action::Run(UiCommand::Cut)),
                    egui::Event::Paste(text) => actions.push(Action::PasteText(text)),
                    _ => {}
                }
            }
        }
        if !typing
            && ctx.input_mut(|i| {
                i.consume_shortcut(&egui::KeyboardShortcut::new(
                    egui::Modifiers::COMMAND,
                    egui::Key::Y,
                ))
            })
        {
            actions.push(Action::Run(UiCommand::Redo));
        }
    }

    /// Files dropped on the window from a file manager are imported: into the
    /// folder under the pointer in the asset browser, or the selected one. While they
    /// are dragged over the window, it says where they will go.
    fn dropped_files(&mut self, ctx: &egui::Context, actions: &mut Vec<Action>) {
        if self.editor.is_none() {
            return;
        }
        let folder = self
            .panels
            .assets
            .hovered_folder
            .clone()
            .unwrap_or_else(|| self.panels.assets.target_folder());
        let shown = if folder.is_empty() {
            "the project's root".to_owned()
        } else {
            format!("{folder}/")
        };
        let hovering = ctx.input(|i| !i.raw.hovered_files.is_empty());
        if hovering {
            egui::Area::new(egui::Id::unique("kiln drop hint"))
                .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
                .show(ctx, |ui| {
                    egui::Frame::popup(ui.style()).show(ui, |ui| {
                        ui.heading(format!("Drop to import into {shown}"));
                        ui.label("Over a folder in the asset browser, into that folder");
                    });
                });
        }
        let sources: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_owned())
                .collect()
        });
        if !sources.is_empty() {
            actions.push(Action::ImportFiles {
                sources,
                folder,
                on_conflict: None,
            });
        }
    }

    /// Sets up what a README screenshot shows, as a user would have: a selection, the
    /// rename preview, a find-references result, or the problems tab.
    fn screenshot_scene(&mut self) {
        let Some(editor) = &mut self.editor else {
            return;
        };
        match std::env::var("KILN_SCREENSHOT_SCENE").as_deref() {
            Ok("rename") => {
                let (old, new) = (
                    "materials/bark.material",
                    "materials/trees/oak_bark.material",
                );
                let plan = editor
                    .files()
                    .plan_move(&dependency_checker::ops::MoveRequest::new(old, new))
                    .map_err(|e| e.to_string());
                self.panels.assets.rename = Some((old.into(), new.into(), Some(plan)));
            }
            Ok("references") => {
                let file = "materials/wood.material";
                self.panels.assets.results = Some(
                    super::panels::assets::ResultsQuery::ReferencesTo(file.into()),
                );
                self.panels.assets.reveal = Some(file.into());
            }
            Ok("problems") => self.panels.bottom = super::panels::BottomTab::Problems,
            // Deleting a material that a level uses, as a designer meets it.
            Ok("delete") => {
                let file = "materials/metal.material";
                self.panels.assets.show(file);
                self.panels
                    .assets
                    .open_delete(editor, vec![file.to_owned()]);
            }
            Ok("new-project") => {
                self.new_project = Some(super::new_project_dialog::NewProjectDialog::new(
                    PathBuf::from("/home/you/games"),
                ));
            }
            // A prefab part with an override, as a designer finds it.
            Ok("prefab") => {
                self.apply_actions(vec![Action::Select(vec!["lamp_2/head/glass".into()])])
            }
            Ok("asset") => {
                let file = "materials/bark.material";
                self.panels.assets.selected = Some(file.into());
                self.panels.assets.reveal = Some(file.into());
                self.panels.assets.focused = true;
            }
            _ => self.apply_actions(vec![Action::Select(vec!["windmill".into()])]),
        }
    }

    fn take_screenshot(&mut self, ctx: &egui::Context) {
        let Some((_, frames)) = &mut self.screenshot else {
            return;
        };
        // A level opening on the worker is waited for: the picture is of it.
        if self.editor.as_ref().is_some_and(|e| e.opening().is_some()) {
            ctx.request_repaint_after(Duration::from_millis(20));
            return;
        }
        *frames += 1;
        if *frames == 3 {
            self.screenshot_scene();
        }
        // After the scene settles and the thumbnails in view are in (at most a few
        // hundred frames); once.
        let thumbnails_busy = self
            .panels
            .thumbnails
            .as_ref()
            .is_some_and(super::thumbnails::Thumbnails::busy);
        let Some((path, frames)) = &mut self.screenshot else {
            return;
        };
        const LAST_FRAME: u32 = 400;
        if *frames == LAST_FRAME || (*frames >= 20 && *frames < LAST_FRAME && !thumbnails_busy) {
            *frames = LAST_FRAME + 1;
            let path = path.clone();
            let ctx2 = ctx.clone();
            ctx.request_screenshot(move |image| {
                let [w, h] = image.size;
                let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
                if let Err(e) = image::save_buffer(
                    &path,
                    &bytes,
                    w as u32,
                    h as u32,
                    image::ExtendedColorType::Rgba8,
                ) {
                    eprintln!("error: saving screenshot {}: {e}", path.display());
                }
                ctx2.send_viewport_cmd(ViewportCommand::Close);
            });
        }
        ctx.request_repaint();
    }
}

impl eframe::App for KilnApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        FRAME_BUILT.store(true, std::sync::atomic::Ordering::Relaxed);
        self.show(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        view_commands::remember_level(&self.panels, &mut self.settings);
        eframe::set_value(storage, Settings::KEY, &self.settings);
    }
}

impl KilnApp {
    /// One frame of the whole editor in `ui` (the root). Separate from
    /// [`eframe::App::ui`] so that benchmarks can run frames headless.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        let mut actions = Vec::new();

        // Closing with unsaved edits asks first.
        if ctx.input(|i| i.viewport().close_requested())
            && !self.allowed_to_close
            && self.editor.as_ref().is_some_and(Editor::is_dirty)
        {
            ctx.send_viewport_cmd(ViewportCommand::CancelClose);
            actions.push(Action::Quit);
        }

        let title = self.title();
        if title != self.last_title {
            ctx.send_viewport_cmd(ViewportCommand::Title(title.clone()));
            self.last_title = title;
        }
        self.shortcuts(&ctx, &mut actions);
        self.dropped_files(&ctx, &mut actions);

        let (editor, settings) = (self.editor.as_ref(), &mut self.settings);
        egui::Panel::top("menu").show(ui, |ui| {
            super::menu_bar::show(ui, editor, settings, &mut actions);
        });

        // Advance the simulation in real time while playing.
        let now = Instant::now();
        let dt = self
            .last_frame
            .map_or(0.0, |t| now.duration_since(t).as_secs_f32())
            .min(0.1);
        self.last_frame = Some(now);

        match &mut self.editor {
            Some(editor) => {
                let budget = self.settings.frame_budget.clamp(0.1, 600.0);
                editor.set_frame_budget(Duration::from_secs_f32(budget));
                editor.tick(dt, Duration::from_secs(3));
                view_commands::follow_level(Some(editor), &mut self.panels, &mut self.settings);
                if let Some(commands) = &mut self.commands
                    && let Err(e) = commands.serve(editor)
                {
                    self.toasts
                        .push(Severity::Error, format!("answering a kiln command: {e:#}"));
                }
                if editor.preview().playing || editor.disk().index_pending() {
                    ctx.request_repaint();
                } else if self.commands.as_ref().is_some_and(|c| c.busy()) {
                    // The cookie's batch wakes the window when the question can be
                    // answered; this only catches a cookie that never comes (frames
                    // are not spent polling: each would delay the answer).
                    ctx.request_repaint_after(Duration::from_millis(1100));
                }
                panels::show(
                    ui,
                    editor,
                    &mut self.panels,
                    &mut self.settings,
                    self.render_state.as_ref(),
                    &mut actions,
                );
            }
            None => {
                egui::CentralPanel::default().show(ui, |ui| {
                    let error = self.open_error.as_deref();
                    super::start_page::show(ui, &self.settings, error, &mut actions);
                });
            }
        }

        let editor = self.editor.as_ref();
        super::dialogs::opening(&ctx, editor);
        super::new_project_dialog::show(&ctx, &mut self.new_project, &mut actions);
        super::dialogs::recovery(&ctx, editor, &mut actions);
        super::dialogs::disk_conflict(&ctx, editor, &mut actions);
        super::dialogs::trust(&ctx, editor, &mut actions);
        super::dialogs::unsaved(&ctx, editor, self.pending.is_some(), &mut actions);
        super::file_picker::show(&ctx, &mut self.file_picker, &mut actions);
        self.apply_actions(actions);
        view_commands::follow_level(self.editor.as_ref(), &mut self.panels, &mut self.settings);
        if self.allowed_to_close && !self.closing {
            self.closing = true;
            ctx.send_viewport_cmd(ViewportCommand::Close);
        }
        if let Some(text) = self.clipboard_out.take() {
            ctx.copy_text(text);
        }
        self.toasts.show(&ctx);
        self.take_screenshot(&ctx);
        self.log_frame();
    }

    /// `KILN_FRAME_LOG=file`: appends a line per frame built, `frame N world W
    /// pictures P at T` (W counts the times the preview's world changed from a
    /// build, spawned or patched in place; P the scene pictures the viewport drew,
    /// this frame's included; T is microseconds since the Unix epoch), for measurements taken from
    /// outside the process by the user's clock: launch to first frame, and a save
    /// to the frame that shows it (`benches/src/bin/editor-latency.rs`).
    fn log_frame(&mut self) {
        use std::io::Write as _;
        static LOG: std::sync::OnceLock<Option<std::sync::Mutex<std::fs::File>>> =
            std::sync::OnceLock::new();
        let log = LOG.get_or_init(|| {
            let path = std::env::var_os("KILN_FRAME_LOG")?;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .ok()?;
            Some(std::sync::Mutex::new(file))
        });
        let Some(file) = log else { return };
        self.frames_built += 1;
        let world = self
            .editor
            .as_ref()
            .map_or(0, |e| e.preview().world_revision());
        if let Ok(mut file) = file.lock() {
            let at = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros());
            let pictures = self.panels.viewport.pictures_drawn();
            let _ = writeln!(
                file,
                "frame {} world {world} pictures {pictures} at {at}",
                self.frames_built
            );
        }
    }
}

/// Whether a frame was built in this process: a renderer that failed before
/// that never started.
static FRAME_BUILT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The renderer `KILN_RENDERER` names (`glow` or `wgpu`), if it names one.
fn named_renderer() -> Option<eframe::Renderer> {
    match std::env::var("KILN_RENDERER").as_deref() {
        Ok("glow") => Some(eframe::Renderer::Glow),
        Ok("wgpu") => Some(eframe::Renderer::Wgpu),
        _ => None,
    }
}

/// Opens the editor window on `project` (or the last project opened).
///
/// It starts on wgpu (the viewport renders with depth, lighting and textures) on
/// any Vulkan, Metal or DirectX 12 adapter, software ones (Mesa's lavapipe)
/// included. Where wgpu finds none and the window never starts, the editor runs
/// again on OpenGL through glow, where the viewport shows its flat view and says
/// so. (Asking wgpu for adapters before
/// starting cost every launch 130 ms on Mesa's drivers, as eframe then asks again.)
/// `KILN_RENDERER=glow` or `wgpu` chooses.
pub fn run_editor(project: Option<PathBuf>) -> anyhow::Result<()> {
    let mut options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size([1600.0, 900.0])
            .with_title("Kiln")
            // The desktop entry's StartupWMClass: the menu and the task bar know
            // the window as Kiln's.
            .with_app_id("kiln"),
        ..Default::default()
    };
    let named = named_renderer();
    options.renderer = named.unwrap_or(eframe::Renderer::Wgpu);
    // wgpu's primary backends only (Vulkan, Metal, DirectX 12), not its OpenGL:
    // the viewport needs texture view formats, which wgpu on OpenGL lacks (it
    // panicked making the viewport's target), and on a machine without a GPU
    // merely probing OpenGL loaded Mesa's OpenGL driver and its rasterizer threads
    // for the same software rasterizer Vulkan finds: 12 MB of the editor's 150
    // (BENCHMARKS.md). Where no primary adapter exists the editor starts on glow
    // (below). WGPU_BACKEND overrides, as wgpu documents.
    if std::env::var_os("WGPU_BACKEND").is_none()
        && let egui_wgpu::WgpuSetup::CreateNew(setup) = &mut options.wgpu_options.wgpu_setup
    {
        setup.instance_descriptor.backends = egui_wgpu::wgpu::Backends::PRIMARY;
    }
    // The editor's preferences and window layout live with the user's other Kiln
    // settings (see `settings_file`); screenshots start from a clean state, not
    // from whatever the last session left.
    options.persistence_path = if std::env::var_os("KILN_SCREENSHOT").is_some() {
        Some(std::env::temp_dir().join(format!("kiln-screenshot-{}", std::process::id())))
    } else {
        super::settings::settings_file(kiln_core::user_config::user_config_dir())
    };
    let ran = eframe::run_native(
        "Kiln",
        options,
        Box::new(move |cc| Ok(Box::new(KilnApp::new(cc, project)))),
    );
    match ran {
        // Only wgpu's own failure: a window system that cannot be reached fails
        // on glow as well, and says so better as it is.
        Err(eframe::Error::Wgpu(e))
            if named.is_none() && !FRAME_BUILT.load(std::sync::atomic::Ordering::Relaxed) =>
        {
            // A window's event loop runs once per process: the next try is a new
            // process, with the same arguments.
            eprintln!(
                "kiln: no GPU adapter found (Vulkan, Metal or DirectX 12: {e}); starting on OpenGL, where the viewport shows its flat view"
            );
            let exe = std::env::current_exe()?;
            let status = std::process::Command::new(exe)
                .args(std::env::args_os().skip(1))
                .env("KILN_RENDERER", "glow")
                .status()?;
            if status.success() {
                Ok(())
            } else {
                Err(anyhow::anyhow!("the editor window failed ({status})"))
            }
        }
        ran => ran.map_err(|e| anyhow::anyhow!("the editor window failed: {e}")),
    }
}
