//! Everything a user can do, as data. Panels emit actions; [`crate::editor::Editor::apply`]
//! performs them after the frame. Menus, shortcuts and tests name the same actions.

use egui::{Key, KeyboardShortcut, Modifiers};
use serde_json::Value;

/// A user action.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A command without arguments (menus and shortcuts).
    Run(UiCommand),
    /// Open a level file (`levels/forest.level`).
    OpenLevel(String),
    /// Replace the selection.
    Select(Vec<String>),
    /// Create an entity at a point in the world (in front of the camera), under the
    /// selected entity.
    CreateEntity {
        /// World position.
        position: [f32; 3],
    },
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
    /// Set one field of one component on each of several entities or prefab parts
    /// (a part records an override), as one undo step; a drag sends many with
    /// `continuing`.
    SetField {
        /// Authoring ids, or part paths (`tree_01/trunk`).
        entities: Vec<String>,
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
    /// Set one field to a different value on each of several entities or parts (the
    /// move handle dragging a selection), as one undo step.
    SetFieldEach {
        /// Component type.
        component: String,
        /// Field.
        field: String,
        /// (authoring id or part path, new value).
        values: Vec<(String, Value)>,
        /// Part of the same gesture as the previous edit (one undo step).
        continuing: bool,
    },
    /// Set several fields of one component on each of several entities or parts
    /// (a rotation about the selection's centre sets rotations and positions), as
    /// one undo step; a drag sends many with `continuing`.
    SetFieldsEach {
        /// Component type.
        component: String,
        /// (authoring id or part path, field, new value).
        values: Vec<(String, String, Value)>,
        /// Part of the same gesture as the previous edit (one undo step).
        continuing: bool,
    },
    /// Settle entities just placed onto the surface they were put on (their
    /// bounds known only once their models loaded): new positions, joined to the
    /// placing step `step` when it is still the last one (one undo takes both back).
    Settle {
        /// (authoring id or part path, new `transform.position`).
        values: Vec<(String, Value)>,
        /// The placing step.
        step: u64,
    },
    /// Write a prefab instance's overrides into its `.unit` and remove them from the
    /// instance (one undo step; every other instance of the unit gets them too).
    ApplyOverrides {
        /// The instance entity.
        instance: String,
    },
    /// Set one field of a resource file (a material's colour, a mesh's size), written
    /// atomically; a drag sends many with `continuing` (one undo step).
    SetAssetField {
        /// Project path, e.g. `materials/bark.material`.
        file: String,
        /// Field.
        field: String,
        /// New value.
        value: Value,
        /// Part of the same gesture as the previous edit.
        continuing: bool,
    },
    /// Remove a prefab part's override of one field (revert to the prefab).
    RevertOverride {
        /// The part path (`tree_01/trunk`).
        part: String,
        /// Component type.
        component: String,
        /// Field.
        field: String,
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
    /// Rename or move project files as planned (the preview the user accepted),
    /// patching every reference; one undo step.
    MoveAssets(Box<dependency_checker::ops::MovePlan>),
    /// Rewrite one reference from `old` to `new` (a fix from the problems list).
    FixReference {
        /// Where the reference is.
        place: dependency_checker::check::Place,
        /// Its text now.
        old: String,
        /// Its text after the fix.
        new: String,
    },
    /// Patch every reference that still uses a path the redirect log moved.
    FixStalePaths,
    /// Restore (or discard) the unsaved edits recovered from a crash.
    ResolveRecovery {
        /// Restore them (one undo step) rather than discard them.
        restore: bool,
    },
    /// Answer whether the project is trusted to build and load its plugins (code):
    /// remembered for the project.
    AnswerTrust {
        /// Trust it (build and load the plugins) rather than keep them out.
        trust: bool,
        /// Trusted: build each plugin here from its sources wherever this machine
        /// can, rather than load a library shipped with the project.
        from_sources: bool,
    },
    /// Choose between the edits in the editor and the level as changed on disk.
    ResolveDiskConflict {
        /// Take the version on disk (the edits stay undoable).
        take_disk: bool,
    },
    /// Make a new file of its extension's type with the schema's defaults (a level, a
    /// unit, a material, a mesh, ...); one undo step.
    CreateAsset {
        /// Project path with extension, e.g. `materials/oak.material`.
        file: String,
    },
    /// Make a folder; one undo step.
    CreateFolder {
        /// Project path, e.g. `art/trees`.
        folder: String,
    },
    /// Copy a file to a new name; one undo step.
    DuplicateAsset {
        /// The file.
        file: String,
        /// Its copy's project path.
        copy: String,
    },
    /// Delete files or folders (with what is in them); one undo step. With
    /// `replace_with`, the references to the one deleted file are first pointed at
    /// that file.
    DeleteAssets {
        /// Project paths of files or folders.
        paths: Vec<String>,
        /// The file that takes the deleted one's place in every reference.
        replace_with: Option<String>,
    },
    /// Copy files or folders from outside the project into a project folder; one
    /// undo step. Without `on_conflict`, files in the way are asked about first.
    ImportFiles {
        /// Files or folders anywhere on the machine.
        sources: Vec<std::path::PathBuf>,
        /// The project folder they go in (`""`: the root).
        folder: String,
        /// What to do with files in the way.
        on_conflict: Option<OnConflict>,
    },
    /// Forget an import that waited for an answer about files in its way.
    CancelImport,
    /// Put a mesh (an entity drawing it) or a unit (a prefab instance) in the open
    /// level, at the root.
    PlaceAsset {
        /// `meshes/rock.mesh` or `units/lamp.unit`.
        file: String,
        /// Where, in the world; `None`: where the camera looks.
        position: Option<[f32; 3]>,
    },
    /// Hide an entity (or part) and what is below it in the viewport, or show it
    /// again: the designer's view, not the level.
    SetHidden {
        /// Authoring id or part path.
        id: String,
        /// Hidden rather than shown.
        hidden: bool,
    },
    /// Lock an entity (or part) and what is below it against picking in the
    /// viewport, or unlock it.
    SetLocked {
        /// Authoring id or part path.
        id: String,
        /// Locked rather than not.
        locked: bool,
    },
    /// Write the selected entities to the new prefab `file` (`units/rock_pile.unit`)
    /// and replace them with an instance of it named after it; one undo step.
    CreatePrefab {
        /// Project path with its `.unit` extension.
        file: String,
    },
    /// Add a level (`levels/cave.level`) to the project's boot levels in
    /// `kiln.project`; one undo step.
    MakeBootLevel(String),
    /// Write `file` as commit `commit` has it (a file one side of a merge deleted
    /// while the other still uses it); one undo step.
    KeepFileFromCommit {
        /// The project path.
        file: String,
        /// The commit, as git names it.
        commit: String,
    },
    /// Remove one override from a level file (an override of a part its prefab no
    /// longer has); one undo step.
    DropOverride(crate::merge_check::OverrideAt),
    /// Take a conflict across files (by its key) off the last merge's record: the
    /// user fixed it another way.
    ForgetCrossFileConflict(String),
    /// Ask for files or a folder (the desktop's dialog, or the window's own where
    /// there is none), for what `Purpose` says.
    ChooseFiles(crate::editor::file_picker::Purpose),
    /// The folder New project makes the project's folder in (Browse…'s answer).
    SetProjectLocation(std::path::PathBuf),
    /// Keep the camera as bookmark 1-9 of the open level (Ctrl+Shift+digit).
    KeepBookmark(u8),
    /// Move the camera to bookmark 1-9 of the open level (Ctrl+digit).
    GoToBookmark(u8),
    /// Forget the open level's unsaved edits on purpose (and their recovery file).
    DiscardUnsavedEdits,
    /// Show a file in the asset browser (switches to its tab, opens its folder).
    RevealFile(String),
    /// Open another project (asks about unsaved edits first).
    OpenProject(std::path::PathBuf),
    /// Make a new project from a template in `dir` (new or empty) and open it (asks
    /// about unsaved edits first).
    CreateProject {
        /// Its folder.
        dir: std::path::PathBuf,
        /// What it starts as.
        template: crate::new_project::Template,
    },
    /// Answer the "save changes?" question: save, discard, or (`None`) cancel.
    AnswerUnsaved(Option<UnsavedAnswer>),
    /// Close the window (asks about unsaved edits first).
    Quit,
    /// Paste text from the system clipboard: entities copied in Kiln (this window or
    /// another), or, if it is not that, the entities copied here last.
    PasteText(String),
    /// Resolve one merge conflict of the open level (one undo step).
    ResolveConflict {
        /// Its place in the list of the level's conflicts.
        index: usize,
        /// Which side, or the value as it is.
        how: Resolution,
    },
    /// Resolve every merge conflict of the open level taking one side.
    ResolveAllConflicts(kiln_core::conflict::Side),
}

/// How the user answered "save changes?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsavedAnswer {
    /// Save, then go on.
    Save,
    /// Throw the edits away, then go on.
    Discard,
}

/// The actions that menus and shortcuts trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UiCommand {
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
    /// Look straight down without perspective (7, as in Blender).
    TopView,
    /// Look from the front without perspective (1).
    FrontView,
    /// Look from the right without perspective (3).
    SideView,
    /// Back to the perspective view (5).
    PerspectiveView,
    /// Re-index the project and refresh the problems list.
    RefreshProblems,
    /// Write the selected entities to a new `.unit` and replace them with an
    /// instance of it.
    CreatePrefab,
    /// The handle moves (W).
    MoveTool,
    /// The handle rotates (E).
    RotateTool,
    /// The handle scales (R).
    ScaleTool,
    /// Build the project's plugins and swap them in (hot reload).
    ReloadPlugins,
    /// Ask again whether the project is trusted to build and load its plugins.
    TrustProject,
    /// Ask where to make a new project, and from which template.
    NewProject,
    /// Ask where to make a copy of the demo project (New project, the demo chosen).
    TryDemo,
    /// Choose files to copy into the project (into the selected folder).
    Import,
    /// Copy the selected entities, then delete them.
    Cut,
    /// Move the selected entities before the sibling above.
    MoveUp,
    /// Move the selected entities after the sibling below.
    MoveDown,
    /// Make the selected entities children of the sibling above.
    Indent,
    /// Move the selected entities out of their parent, just after it.
    Outdent,
    /// Put each selected entity on the surface below it (End, as in Unreal).
    DropToFloor,
    /// Switch the handle between the world's axes and the entity's own (X).
    ToggleSpace,
    /// Select the children of the selected entities.
    SelectChildren,
    /// Hide the selected entities and what is below them in the viewport (H).
    Hide,
    /// Hide everything but the selection (Shift+H).
    Isolate,
    /// Show everything hidden (Alt+H).
    ShowAll,
    /// Lock the selected entities, or unlock them: a locked entity is not picked
    /// in the viewport (Ctrl+L).
    ToggleLock,
}

impl UiCommand {
    /// Every command, in menu order.
    pub const ALL: [UiCommand; 39] = [
        UiCommand::Save,
        UiCommand::Undo,
        UiCommand::Redo,
        UiCommand::NewEntity,
        UiCommand::Delete,
        UiCommand::Duplicate,
        UiCommand::Copy,
        UiCommand::Paste,
        UiCommand::BeginRename,
        UiCommand::PlayPause,
        UiCommand::Step,
        UiCommand::Restart,
        UiCommand::FrameSelection,
        UiCommand::TopView,
        UiCommand::FrontView,
        UiCommand::SideView,
        UiCommand::PerspectiveView,
        UiCommand::RefreshProblems,
        UiCommand::CreatePrefab,
        UiCommand::MoveTool,
        UiCommand::RotateTool,
        UiCommand::ScaleTool,
        UiCommand::ReloadPlugins,
        UiCommand::TrustProject,
        UiCommand::NewProject,
        UiCommand::TryDemo,
        UiCommand::Import,
        UiCommand::Cut,
        UiCommand::MoveUp,
        UiCommand::MoveDown,
        UiCommand::Indent,
        UiCommand::Outdent,
        UiCommand::DropToFloor,
        UiCommand::ToggleSpace,
        UiCommand::SelectChildren,
        UiCommand::Hide,
        UiCommand::Isolate,
        UiCommand::ShowAll,
        UiCommand::ToggleLock,
    ];

    /// The menu label.
    pub fn label(self) -> &'static str {
        match self {
            UiCommand::Save => "Save",
            UiCommand::Undo => "Undo",
            UiCommand::Redo => "Redo",
            UiCommand::NewEntity => "New entity",
            UiCommand::Delete => "Delete",
            UiCommand::Duplicate => "Duplicate",
            UiCommand::Copy => "Copy",
            UiCommand::Paste => "Paste",
            UiCommand::BeginRename => "Rename",
            UiCommand::PlayPause => "Play / Pause",
            UiCommand::Step => "Step",
            UiCommand::Restart => "Restart",
            UiCommand::FrameSelection => "Frame selection",
            UiCommand::TopView => "Top view",
            UiCommand::FrontView => "Front view",
            UiCommand::SideView => "Side view",
            UiCommand::PerspectiveView => "Perspective view",
            UiCommand::RefreshProblems => "Refresh problems",
            UiCommand::CreatePrefab => "Create prefab from selection",
            UiCommand::MoveTool => "Move tool",
            UiCommand::RotateTool => "Rotate tool",
            UiCommand::ScaleTool => "Scale tool",
            UiCommand::ReloadPlugins => "Rebuild and reload plugins",
            UiCommand::TrustProject => "Trust this project…",
            UiCommand::NewProject => "New project…",
            UiCommand::TryDemo => "Try the demo…",
            UiCommand::Import => "Import…",
            UiCommand::Cut => "Cut",
            UiCommand::MoveUp => "Move up",
            UiCommand::MoveDown => "Move down",
            UiCommand::Indent => "Into the entity above",
            UiCommand::Outdent => "Out of the parent",
            UiCommand::DropToFloor => "Drop to floor",
            UiCommand::ToggleSpace => "Local / world axes",
            UiCommand::SelectChildren => "Select children",
            UiCommand::Hide => "Hide",
            UiCommand::Isolate => "Isolate",
            UiCommand::ShowAll => "Show all",
            UiCommand::ToggleLock => "Lock / unlock",
        }
    }

    /// The keyboard shortcut, if any.
    pub fn shortcut(self) -> Option<KeyboardShortcut> {
        let k = |m, key| Some(KeyboardShortcut::new(m, key));
        match self {
            UiCommand::Save => k(Modifiers::COMMAND, Key::S),
            UiCommand::Undo => k(Modifiers::COMMAND, Key::Z),
            UiCommand::Redo => k(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z),
            UiCommand::NewEntity => k(Modifiers::COMMAND, Key::N),
            UiCommand::Delete => k(Modifiers::NONE, Key::Delete),
            UiCommand::Duplicate => k(Modifiers::COMMAND, Key::D),
            UiCommand::Copy => k(Modifiers::COMMAND, Key::C),
            UiCommand::Paste => k(Modifiers::COMMAND, Key::V),
            UiCommand::BeginRename => k(Modifiers::NONE, Key::F2),
            UiCommand::PlayPause => k(Modifiers::NONE, Key::F5),
            UiCommand::Step => k(Modifiers::NONE, Key::F6),
            UiCommand::Restart => k(Modifiers::SHIFT, Key::F5),
            UiCommand::FrameSelection => k(Modifiers::NONE, Key::F),
            UiCommand::TopView => k(Modifiers::NONE, Key::Num7),
            UiCommand::FrontView => k(Modifiers::NONE, Key::Num1),
            UiCommand::SideView => k(Modifiers::NONE, Key::Num3),
            UiCommand::PerspectiveView => k(Modifiers::NONE, Key::Num5),
            UiCommand::RefreshProblems
            | UiCommand::CreatePrefab
            | UiCommand::TrustProject
            | UiCommand::TryDemo
            | UiCommand::SelectChildren => None,
            UiCommand::MoveTool => k(Modifiers::NONE, Key::W),
            UiCommand::RotateTool => k(Modifiers::NONE, Key::E),
            UiCommand::ScaleTool => k(Modifiers::NONE, Key::R),
            UiCommand::ReloadPlugins => k(Modifiers::COMMAND, Key::R),
            UiCommand::NewProject => k(Modifiers::COMMAND | Modifiers::SHIFT, Key::N),
            UiCommand::Import => k(Modifiers::COMMAND, Key::I),
            UiCommand::Cut => k(Modifiers::COMMAND, Key::X),
            UiCommand::MoveUp => k(Modifiers::ALT, Key::ArrowUp),
            UiCommand::MoveDown => k(Modifiers::ALT, Key::ArrowDown),
            UiCommand::Indent => k(Modifiers::ALT, Key::ArrowRight),
            UiCommand::Outdent => k(Modifiers::ALT, Key::ArrowLeft),
            UiCommand::DropToFloor => k(Modifiers::NONE, Key::End),
            UiCommand::ToggleSpace => k(Modifiers::NONE, Key::X),
            UiCommand::Hide => k(Modifiers::NONE, Key::H),
            UiCommand::Isolate => k(Modifiers::SHIFT, Key::H),
            UiCommand::ShowAll => k(Modifiers::ALT, Key::H),
            UiCommand::ToggleLock => k(Modifiers::COMMAND, Key::L),
        }
    }

    /// A tooltip saying `what` the command does and its shortcut as this
    /// platform writes it ("New entity (Ctrl+N)"), read from [`Self::shortcut`]
    /// so that the two cannot drift.
    pub fn hover_text(self, ctx: &egui::Context, what: &str) -> String {
        match self.shortcut() {
            Some(sc) => format!("{what} ({})", ctx.format_shortcut(&sc)),
            None => what.to_owned(),
        }
    }

    /// Whether the shortcut should fire while a text field has focus (only the ones
    /// with Ctrl; plain keys like F or Delete belong to the text field then).
    pub fn works_while_typing(self) -> bool {
        matches!(self, UiCommand::Save | UiCommand::Undo | UiCommand::Redo)
    }
}

/// How a merge conflict is resolved (the Conflicts tab's answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// That side's value (or entity; for a side that deleted it, no entity).
    Take(kiln_core::conflict::Side),
    /// The value as it is in the editor now (ours, or what it was edited to).
    AsItIs,
}

/// What an import does where a file it writes exists already (the user's answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Write over it (references to it keep working: its path is the same).
    Replace,
    /// Give the imported file a free name (`rock_2.png`).
    KeepBoth,
}
