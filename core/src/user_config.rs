//! Kiln's folder of the user's own settings, outside every project: what no
//! project's files may vouch for (which projects are trusted to run their plugins,
//! the key that signs the caches Kiln writes). `$KILN_CONFIG_DIR` if set, else
//! `$XDG_CONFIG_HOME/kiln`, else `~/.config/kiln`.

use std::path::PathBuf;

/// The folder, or `None` where the environment names none (no `HOME`).
pub fn user_config_dir() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = set("KILN_CONFIG_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = set("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("kiln"));
    }
    Some(PathBuf::from(set("HOME")?).join(".config/kiln"))
}
