//! Preferences that survive restarts, in one `#[serde(default)]` struct (stored by
//! eframe's persistence with the window layout).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Persisted preferences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Most recently opened projects, newest first.
    pub recent_projects: Vec<PathBuf>,
    /// Draw the ground grid in the viewport.
    pub show_grid: bool,
    /// Simulation steps per second while playing.
    pub simulation_rate: f32,
    /// The most seconds one step of Play may take: a plugin still running after it
    /// is stopped, and the level spawned again without it, paused.
    pub frame_budget: f32,
    /// How many steps Undo can go back.
    pub undo_steps: usize,
    /// Move step, in metres (also the grid new entities land on).
    pub snap_move: f32,
    /// Rotate step, in degrees.
    pub snap_rotate: f32,
    /// Scale step.
    pub snap_scale: f32,
    /// Whether moves snap to `snap_move` (holding Ctrl during a drag does the
    /// opposite), and placed entities land on its grid.
    pub snap_move_on: bool,
    /// Whether rotations snap to `snap_rotate` (Ctrl inverts).
    pub snap_rotate_on: bool,
    /// Whether scaling snaps to `snap_scale` (Ctrl inverts).
    pub snap_scale_on: bool,
    /// The handle moves and rotates along the entity's own axes (X switches);
    /// otherwise along the world's. Scaling is always along the entity's own.
    pub local_space: bool,
    /// Several selected entities rotate and scale about the centre of the
    /// selection; otherwise each about its own pivot.
    pub about_centre: bool,
    /// Directional light casts shadows in the viewport.
    pub shadows: bool,
    /// Where the camera was in each level, by [`Settings::level_key`]: a level
    /// opens as it was left.
    pub cameras: BTreeMap<String, SavedCamera>,
    /// Camera bookmarks of each level (Ctrl+Shift+1..9 keeps one, Ctrl+1..9 goes
    /// back to it), by [`Settings::level_key`].
    pub bookmarks: BTreeMap<String, BTreeMap<u8, SavedCamera>>,
    /// What is hidden and locked in each level, by [`Settings::level_key`].
    pub level_views: BTreeMap<String, LevelView>,
}

/// The designer's view of a level, kept in the settings and never in the level's
/// file: entities hidden in the viewport and entities locked against picking
/// (each with what is below it).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LevelView {
    /// Authoring ids (or part paths) not drawn, with what is below them.
    pub hidden: std::collections::BTreeSet<String>,
    /// Authoring ids (or part paths) not picked in the viewport, with what is below.
    pub locked: std::collections::BTreeSet<String>,
    /// Which change of the two sets this is (none: 0), unique in the process: the
    /// viewport finds the entities below them again only when it moves on.
    #[serde(skip)]
    pub revision: u64,
}

/// Two views are the same when they hide and lock the same (whichever change
/// made them so).
impl PartialEq for LevelView {
    fn eq(&self, other: &Self) -> bool {
        self.hidden == other.hidden && self.locked == other.locked
    }
}

impl LevelView {
    /// Says that `hidden` or `locked` changed.
    pub fn changed(&mut self) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        self.revision = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether nothing is hidden or locked.
    pub fn is_empty(&self) -> bool {
        self.hidden.is_empty() && self.locked.is_empty()
    }
}

/// A viewport camera as the settings keep it (the designer's view, never in the
/// level's file).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SavedCamera {
    /// The point orbited.
    pub target: [f32; 3],
    /// Radians around the vertical.
    pub yaw: f32,
    /// Radians above the ground.
    pub pitch: f32,
    /// From the target.
    pub distance: f32,
    /// Without perspective.
    pub ortho: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            recent_projects: Vec::new(),
            show_grid: true,
            simulation_rate: 60.0,
            frame_budget: crate::editor::simulation::DEFAULT_FRAME_BUDGET.as_secs_f32(),
            undo_steps: 1000,
            snap_move: 0.5,
            snap_rotate: 15.0,
            snap_scale: 0.1,
            snap_move_on: false,
            snap_rotate_on: false,
            snap_scale_on: false,
            local_space: false,
            about_centre: false,
            shadows: true,
            cameras: BTreeMap::new(),
            bookmarks: BTreeMap::new(),
            level_views: BTreeMap::new(),
        }
    }
}

/// The file the editor keeps its preferences and window layout in: beside the
/// user's other Kiln settings (the trusted projects, the cache key), in the one
/// folder `kiln_core::user_config` names (`$KILN_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/kiln`, else `~/.config/kiln`). `None` where there is no such
/// folder: eframe's own place then.
pub fn settings_file(config_dir: Option<PathBuf>) -> Option<PathBuf> {
    config_dir.map(|dir| dir.join("editor.ron"))
}

impl Settings {
    /// The key under which eframe stores them.
    pub const KEY: &'static str = "kiln-settings";

    /// The key of a level's camera and bookmarks: its project's folder and its
    /// path in the project.
    pub fn level_key(project: &std::path::Path, level: &str) -> String {
        format!("{}#{level}", project.display())
    }

    /// Records `project` as the most recent one.
    pub fn remember(&mut self, project: PathBuf) {
        self.recent_projects.retain(|p| p != &project);
        self.recent_projects.insert(0, project);
        self.recent_projects.truncate(10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_file_is_in_kilns_settings_folder() {
        let dir = PathBuf::from("/home/ana/.config/kiln");
        assert_eq!(
            settings_file(Some(dir.clone())),
            Some(dir.join("editor.ron"))
        );
        assert_eq!(settings_file(None), None);
    }
}
