//! The level editor: an egui view over [`Editor`], the state that actions change.
//!
//! Layout: the scene tree on the left, the viewport in the middle, the inspector on
//! the right, and the asset browser, problems and log at the bottom. Panels read the
//! state and emit [`Action`]s; [`KilnApp`] applies them after each frame.

pub mod actions;
mod app;
pub mod command_server;
mod dialogs;
pub mod document;
pub mod file_picker;
pub mod history;
mod menu_bar;
mod model;
mod new_project_dialog;
mod panels;
pub mod preview;
mod settings;
pub mod simulation;
pub mod start_page;
pub mod thumbnails;
mod toasts;
pub mod tree;
mod view_commands;

pub use actions::{Action, UiCommand, UnsavedAnswer};
pub use app::{KilnApp, run_editor};
pub use model::{
    DiskFollow, Editor, Effect, LogLine, OpenLevel, PluginSwapTiming, PreviewState, ProjectFiles,
    ReloadPath, ReloadTiming, Severity, import, project_files,
};
pub use panels::{BottomTab, Camera, StandardView, Tool};
pub use settings::Settings;
pub use settings::{LevelView, SavedCamera};
