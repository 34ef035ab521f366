//! Preferences that survive restarts, in one `#[serde(default)]` struct (stored by
//! eframe's persistence with the window layout).

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
    /// How many steps Undo can go back.
    pub undo_steps: usize,
    /// Move handle step with Ctrl held, in metres.
    pub snap_move: f32,
    /// Rotate handle step with Ctrl held, in degrees.
    pub snap_rotate: f32,
    /// Scale handle step with Ctrl held.
    pub snap_scale: f32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            recent_projects: Vec::new(),
            show_grid: true,
            simulation_rate: 60.0,
            undo_steps: 1000,
            snap_move: 0.5,
            snap_rotate: 15.0,
            snap_scale: 0.1,
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
