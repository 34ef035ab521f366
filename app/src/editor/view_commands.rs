//! The commands that change the designer's view of the level rather than the
//! level: the handle's tool and space, the top, front and side views, camera
//! bookmarks, hiding, isolating and locking, and where new and placed entities
//! land. Applied by the window after the frame, as every action is; what they
//! change lives in the panels' state and the settings, never in the level's file.

use std::collections::BTreeSet;
use std::time::Instant;

use super::actions::{Action, UiCommand};
use super::model::Editor;
use super::panels::{
    Camera, PanelState, Settle, StandardView, Tool, placement_point, pointer_over,
};
use super::settings::Settings;

/// Runs `command` if it is one of the view's; `None` when it is not (the editor
/// takes it), else the actions it leads to (Select children selects).
pub fn run(
    command: UiCommand,
    editor: Option<&Editor>,
    panels: &mut PanelState,
    settings: &mut Settings,
) -> Option<Vec<Action>> {
    let view = &mut panels.level_view;
    let selection = editor.map_or(&[][..], Editor::selection);
    if matches!(
        command,
        UiCommand::Hide | UiCommand::ShowAll | UiCommand::Isolate | UiCommand::ToggleLock
    ) {
        view.changed();
    }
    match command {
        UiCommand::MoveTool => panels.viewport.tool = Tool::Move,
        UiCommand::RotateTool => panels.viewport.tool = Tool::Rotate,
        UiCommand::ScaleTool => panels.viewport.tool = Tool::Scale,
        UiCommand::ToggleSpace => settings.local_space = !settings.local_space,
        UiCommand::TopView => panels.camera.set_view(StandardView::Top),
        UiCommand::FrontView => panels.camera.set_view(StandardView::Front),
        UiCommand::SideView => panels.camera.set_view(StandardView::Side),
        UiCommand::PerspectiveView => panels.camera.set_view(StandardView::Perspective),
        UiCommand::DropToFloor => panels.viewport.drop_request = true,
        UiCommand::Hide => view.hidden.extend(selection.iter().cloned()),
        UiCommand::ShowAll => view.hidden.clear(),
        UiCommand::Isolate => {
            if let Some(editor) = editor
                && !selection.is_empty()
            {
                view.hidden = all_but(editor, selection);
            }
        }
        UiCommand::ToggleLock => {
            let all_locked = selection.iter().all(|id| view.locked.contains(id));
            for id in selection {
                if all_locked {
                    view.locked.remove(id);
                } else {
                    view.locked.insert(id.clone());
                }
            }
        }
        UiCommand::SelectChildren => {
            let children = editor
                .map(|e| descendants(e, selection))
                .unwrap_or_default();
            return Some(vec![Action::Select(children)]);
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// The level's entities below `of` (children, their children, ...), in file order.
pub fn descendants(editor: &Editor, of: &[String]) -> Vec<String> {
    let Some(level) = editor.level() else {
        return Vec::new();
    };
    let mut inside: BTreeSet<&str> = of.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    // Parents come before their children in a level file, but a hand-edited one
    // may not keep to that: go round until nothing more is found.
    loop {
        let before = out.len();
        for e in &level.doc.entities {
            if !inside.contains(e.id.as_str())
                && e.parent.as_deref().is_some_and(|p| inside.contains(p))
            {
                inside.insert(&e.id);
                out.push(e.id.clone());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Every entity of the level but the selection, what is above it and what is below
/// it: what Isolate hides.
fn all_but(editor: &Editor, selection: &[String]) -> BTreeSet<String> {
    let Some(level) = editor.level() else {
        return BTreeSet::new();
    };
    let mut keep: BTreeSet<String> = selection.iter().cloned().collect();
    keep.extend(descendants(editor, selection));
    for id in selection {
        // A part path keeps its instance; an entity keeps its ancestors.
        let mut at = crate::editor::document::split_part(id).map_or(id.as_str(), |(i, _)| i);
        keep.insert(at.to_owned());
        while let Some(parent) = level.doc.entity(at).and_then(|e| e.parent.as_deref()) {
            keep.insert(parent.to_owned());
            at = parent;
        }
    }
    level
        .doc
        .entities
        .iter()
        .filter(|e| !keep.contains(&e.id))
        .map(|e| e.id.clone())
        .collect()
}

/// Applies an action that puts entities in the level (a new entity, a placed
/// asset, a paste) at `point`, then asks the viewport to rest what it made on the
/// surface by its bounds once drawn (`centre`: centre a pasted group on the point).
pub fn place(
    editor: &mut Editor,
    panels: &mut PanelState,
    action: Action,
    point: glam::Vec3,
    centre: bool,
) {
    let before = editor.history().last_step();
    editor.apply(action);
    let after = editor.history().last_step();
    if let Some(step) = after.filter(|_| after != before) {
        panels.viewport.settle = Some(Settle {
            ids: editor.selection().to_vec(),
            point,
            centre,
            step,
            since: Instant::now(),
        });
    }
}

/// Where a new entity or a placed asset lands: on the surface under the pointer
/// or the view's middle, else (before the viewport was drawn) where the camera
/// looks.
pub fn landing(editor: &Editor, panels: &mut PanelState, settings: &Settings) -> glam::Vec3 {
    placement_point(&mut panels.viewport, editor, settings).unwrap_or(panels.camera.target)
}

/// Where a paste lands: under the pointer when it is over the viewport (`None`:
/// in place, where the copies were).
pub fn paste_landing(
    editor: &Editor,
    panels: &mut PanelState,
    settings: &Settings,
) -> Option<glam::Vec3> {
    if !pointer_over(&panels.viewport) {
        return None;
    }
    placement_point(&mut panels.viewport, editor, settings)
}

/// Keeps each level's camera and view (hidden, locked) across level switches and
/// restarts: when the open level changes, the last one's are stored and the new
/// one's brought back (a level seen for the first time is framed whole). Called
/// once the frame's level is known and before the viewport draws, so that the
/// camera stored is the one the last level was left with.
pub fn follow_level(editor: Option<&Editor>, panels: &mut PanelState, settings: &mut Settings) {
    let key = editor.and_then(|e| {
        let level = e.level()?;
        Some(Settings::level_key(e.files().project().root(), &level.file))
    });
    if key == panels.view_key {
        return;
    }
    if let Some(old) = panels.view_key.take() {
        settings.cameras.insert(old.clone(), panels.camera.into());
        let view = std::mem::take(&mut panels.level_view);
        if view.is_empty() {
            settings.level_views.remove(&old);
        } else {
            settings.level_views.insert(old, view);
        }
    }
    if let Some(new) = &key {
        match settings.cameras.get(new) {
            Some(saved) => panels.camera = Camera::from(*saved),
            None => panels.viewport.frame_request = true,
        }
        panels.level_view = settings.level_views.get(new).cloned().unwrap_or_default();
    }
    panels.view_key = key;
}

/// Stores the open level's camera and view in the settings (before they are
/// saved, so that a restart finds them).
pub fn remember_level(panels: &PanelState, settings: &mut Settings) {
    if let Some(key) = &panels.view_key {
        settings.cameras.insert(key.clone(), panels.camera.into());
        settings
            .level_views
            .insert(key.clone(), panels.level_view.clone());
    }
}

/// Keeps the camera as bookmark `slot` of the open level (Ctrl+Shift+digit).
pub fn keep_bookmark(slot: u8, panels: &PanelState, settings: &mut Settings) -> Option<String> {
    let key = panels.view_key.clone()?;
    (settings.bookmarks.entry(key).or_default()).insert(slot, panels.camera.into());
    Some(format!(
        "camera bookmark {slot} kept (Ctrl+{slot} comes back to it)"
    ))
}

/// Moves the camera to bookmark `slot` of the open level (Ctrl+digit); says so
/// when there is none.
pub fn go_to_bookmark(
    slot: u8,
    panels: &mut PanelState,
    settings: &Settings,
) -> Result<(), String> {
    let saved = (panels.view_key.as_ref())
        .and_then(|key| settings.bookmarks.get(key)?.get(&slot))
        .ok_or_else(|| {
            format!("no camera bookmark {slot} in this level (Ctrl+Shift+{slot} keeps one)")
        })?;
    panels.camera = Camera::from(*saved);
    Ok(())
}
