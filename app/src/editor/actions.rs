//! Everything a user can do, as data. Panels emit actions; [`crate::editor::Editor::apply`]
//! performs them after the frame. Menus, shortcuts and tests name the same actions.

use egui::{Key, KeyboardShortcut, Modifiers};
use serde_json::Value;

/// A user action.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A command without arguments (menus and shortcuts).
    Command(Command),
    /// Open a level file (`levels/forest.level`).
    OpenLevel(String),
    /// Replace the selection.
    Select(Vec<String>),
    /// Change an entity's name.
    Rename {
        /// Authoring id.
        entity: String,
        /// New name.
        name: String,
    },
    /// Move entities under another (or to the root), keeping their world pose.
    Reparent {
        /// Authoring ids.
        entities: Vec<String>,
        /// New parent, `None` for the root.
        parent: Option<String>,
        /// Place among the new parent's children: before this sibling (`None`: last).
        before: Option<String>,
    },
    /// Set one field of one component (a drag sends many with `continuing`).
    SetField {
        /// Authoring id.
        entity: String,
        /// Component type.
        component: String,
        /// Instance, for components written as an array.
        instance: Option<usize>,
        /// Field.
        field: String,
        /// New value.
        value: Value,
        /// Part of the same gesture as the previous edit (one undo step).
        continuing: bool,
    },
    /// Add a component with its defaults.
    AddComponent {
        /// Authoring id.
        entity: String,
        /// Component type.
        component: String,
    },
    /// Remove a component.
    RemoveComponent {
        /// Authoring id.
        entity: String,
        /// Component type.
        component: String,
    },
    /// A gesture (drag) ended.
    EndGesture,
}

/// The actions that menus and shortcuts trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// Write the level (canonical JSON, atomically).
    Save,
    /// Undo the last edit.
    Undo,
    /// Redo the last undone edit.
    Redo,
    /// Create an entity under the selection.
    NewEntity,
    /// Delete the selected entities and their children.
    Delete,
    /// Duplicate the selected entities (with their children).
    Duplicate,
    /// Copy the selected entities.
    Copy,
    /// Paste copied entities under the selection.
    Paste,
    /// Start renaming the selected entity.
    BeginRename,
    /// Run or pause the simulation.
    PlayPause,
    /// Advance the simulation by one frame.
    Step,
    /// Respawn the level from its compiled blob.
    Restart,
    /// Point the camera at the selection.
    FrameSelection,
    /// Switch between perspective and top view.
    ToggleTopView,
    /// Re-index the project and refresh the problems list.
    RefreshProblems,
}

impl Command {
    /// Every command, in menu order.
    pub const ALL: [Command; 15] = [
        Command::Save,
        Command::Undo,
        Command::Redo,
        Command::NewEntity,
        Command::Delete,
        Command::Duplicate,
        Command::Copy,
        Command::Paste,
        Command::BeginRename,
        Command::PlayPause,
        Command::Step,
        Command::Restart,
        Command::FrameSelection,
        Command::ToggleTopView,
        Command::RefreshProblems,
    ];

    /// The menu label.
    pub fn label(self) -> &'static str {
        match self {
            Command::Save => "Save",
            Command::Undo => "Undo",
            Command::Redo => "Redo",
            Command::NewEntity => "New entity",
            Command::Delete => "Delete",
            Command::Duplicate => "Duplicate",
            Command::Copy => "Copy",
            Command::Paste => "Paste",
            Command::BeginRename => "Rename",
            Command::PlayPause => "Play / Pause",
            Command::Step => "Step",
            Command::Restart => "Restart",
            Command::FrameSelection => "Frame selection",
            Command::ToggleTopView => "Top view",
            Command::RefreshProblems => "Refresh problems",
        }
    }

    /// The keyboard shortcut, if any.
    pub fn shortcut(self) -> Option<KeyboardShortcut> {
        let k = |m, key| Some(KeyboardShortcut::new(m, key));
        match self {
            Command::Save => k(Modifiers::COMMAND, Key::S),
            Command::Undo => k(Modifiers::COMMAND, Key::Z),
            Command::Redo => k(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z),
            Command::NewEntity => k(Modifiers::COMMAND, Key::N),
            Command::Delete => k(Modifiers::NONE, Key::Delete),
            Command::Duplicate => k(Modifiers::COMMAND, Key::D),
            Command::Copy => k(Modifiers::COMMAND, Key::C),
            Command::Paste => k(Modifiers::COMMAND, Key::V),
            Command::BeginRename => k(Modifiers::NONE, Key::F2),
            Command::PlayPause => k(Modifiers::NONE, Key::F5),
            Command::Step => k(Modifiers::NONE, Key::F6),
            Command::Restart => k(Modifiers::SHIFT, Key::F5),
            Command::FrameSelection => k(Modifiers::NONE, Key::F),
            Command::ToggleTopView => k(Modifiers::NONE, Key::T),
            Command::RefreshProblems => None,
        }
    }

    /// Whether the shortcut should fire while a text field has focus (only the ones
    /// with Ctrl; plain keys like F or Delete belong to the text field then).
    pub fn works_while_typing(self) -> bool {
        matches!(self, Command::Save | Command::Undo | Command::Redo)
    }
}
