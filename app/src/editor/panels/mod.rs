//! The panels: each reads the editor state and pushes actions; none changes state.

mod asset_dialogs;
pub(crate) mod assets;
pub mod conflicts;
mod inspector;
mod log;
mod problems;
pub(crate) mod scene_tree;
mod status_bar;
mod viewport;

pub use viewport::{Camera, Settle, StandardView, Tool, placement_point, pointer_over};

use super::actions::Action;
use super::model::Editor;
use super::settings::{LevelView, Settings};
use super::thumbnails::Thumbnails;

/// Which tab the bottom panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BottomTab {
    /// The project's files.
    #[default]
    Assets,
    /// Findings and compile errors.
    Problems,
    /// Everything logged.
    Log,
    /// The open level's merge conflicts.
    Conflicts,
}

/// UI state of the panels (not part of the document, not undoable).
#[derive(Debug, Default)]
pub struct PanelState {
    /// Scene tree filter text.
    pub tree_filter: String,
    /// Text of the rename field.
    pub rename_text: String,
    /// The entity whose name field is open in the tree.
    pub renaming: Option<String>,
    /// A rename asked for (F2, the menu), started on the next frame (focus once).
    pub begin_rename: Option<String>,
    /// Scene tree state (openness, keyboard cursor, drag).
    pub tree: scene_tree::SceneTreeState,
    /// Viewport camera.
    pub camera: Camera,
    /// Viewport gesture state.
    pub viewport: viewport::ViewportState,
    /// Bottom panel tab.
    pub bottom: BottomTab,
    /// Asset browser state.
    pub assets: assets::AssetState,
    /// The asset browser's thumbnails (started on first use).
    pub thumbnails: Option<Thumbnails>,
    /// Problems lists the files no boot level reaches ("unused"; `kiln check`
    /// reports them either way).
    pub show_unused: bool,
    /// Which problems the Problems tab shows.
    pub problems_filter: problems::ProblemsFilter,
    /// What the designer hid and locked in the open level (never in its file).
    pub level_view: LevelView,
    /// The level the camera and the level view belong to ([`Settings::level_key`]).
    pub view_key: Option<String>,
}

/// The thumbnails of the open project, started on first use.
fn started<'a>(
    thumbnails: &'a mut Option<Thumbnails>,
    editor: &Editor,
    ctx: &egui::Context,
) -> &'a mut Thumbnails {
    thumbnails.get_or_insert_with(|| {
        let ctx = ctx.clone();
        Thumbnails::new(
            editor.files().project().clone(),
            std::sync::Arc::new(move || ctx.request_repaint()),
        )
    })
}

/// Lays out and shows every panel.
pub fn show(
    ui: &mut egui::Ui,
    editor: &Editor,
    state: &mut PanelState,
    settings: &mut Settings,
    render_state: Option<&egui_wgpu::RenderState>,
    actions: &mut Vec<Action>,
) {
    egui::Panel::bottom("status").show(ui, |ui| status_bar::show(ui, editor));
    egui::Panel::left("scene")
        .resizable(true)
        .default_size(260.0)
        .show(ui, |ui| {
            scene_tree::show(ui, editor, state, actions);
        });
    egui::Panel::right("inspector")
        .resizable(true)
        .default_size(330.0)
        .show(ui, |ui| {
            inspector::show(ui, editor, &state.assets, actions);
        });
    let drawing = state.viewport.asset_problems();
    egui::Panel::bottom("bottom")
        .resizable(true)
        .default_size(210.0)
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                let files = editor.files();
                let hidden = if state.show_unused {
                    0
                } else {
                    files.unused_files()
                };
                let problems = files.findings().len() - hidden
                    + usize::from(editor.preview_state().compile_error().is_some())
                    + editor.preview_state().left_out().len()
                    + editor.plugins().errors().len()
                    + editor.plugins().warnings().len()
                    + editor.preview_state().resources().errors.len()
                    + drawing.len();
                ui.selectable_value(&mut state.bottom, BottomTab::Assets, "Assets");
                ui.selectable_value(
                    &mut state.bottom,
                    BottomTab::Problems,
                    format!("Problems ({problems})"),
                );
                ui.selectable_value(&mut state.bottom, BottomTab::Log, "Log");
                let conflicts = editor.conflicts().len() + editor.cross_file_conflicts().len();
                if conflicts > 0 || state.bottom == BottomTab::Conflicts {
                    let text = egui::RichText::new(format!("Conflicts ({conflicts})"));
                    let text = if conflicts > 0 {
                        text.color(egui::Color32::from_rgb(220, 170, 60))
                    } else {
                        text
                    };
                    ui.selectable_value(&mut state.bottom, BottomTab::Conflicts, text);
                }
            });
            ui.separator();
            match state.bottom {
                BottomTab::Assets => {
                    let thumbnails = started(&mut state.thumbnails, editor, ui.ctx());
                    assets::show(ui, editor, &mut state.assets, thumbnails, actions);
                }
                BottomTab::Problems => problems::show(ui, editor, state, &drawing, actions),
                BottomTab::Log => log::show(ui, editor),
                BottomTab::Conflicts => conflicts::show(ui, editor, actions),
            }
        });
    if let Some(thumbnails) = &mut state.thumbnails {
        let assets = state.viewport.assets(editor, ui.ctx());
        thumbnails.update(ui.ctx(), editor, render_state, assets);
    }
    asset_dialogs::rename_dialog(ui.ctx(), editor, &mut state.assets.rename, actions);
    asset_dialogs::name_dialog(ui.ctx(), editor, &mut state.assets.name_dialog, actions);
    asset_dialogs::delete_dialog(ui.ctx(), editor, &mut state.assets.delete_dialog, actions);
    asset_dialogs::import_question(ui.ctx(), editor, actions);
    egui::CentralPanel::default().show(ui, |ui| {
        viewport::show(ui, editor, state, settings, render_state, actions)
    });
}
