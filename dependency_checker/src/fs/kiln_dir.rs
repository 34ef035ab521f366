//! Kiln's own folder in a project, `.kiln/` (what lives there is one table:
//! `kiln_core::own_folder`): found, or made as a real folder.

use kiln_core::own_folder::{DIR, NOT_A_FOLDER};

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{CheckerError, io_err};

/// Kiln's own folder in the project if it exists as a real folder (not a link):
/// only then is anything read from it.
pub fn existing_kiln_dir(root: &Path) -> Option<PathBuf> {
    let dir = root.join(DIR);
    fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir())
        .then_some(dir)
}

/// Kiln's own folder in the project, created if missing. It must be a real folder:
/// a symbolic link there would carry Kiln's writes outside the project.
pub(crate) fn kiln_dir(root: &Path) -> Result<PathBuf, CheckerError> {
    let dir = root.join(DIR);
    match fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => Err(crate::error::refused(
            &dir,
            "is a symbolic link; Kiln keeps its own files in a real folder inside the project (remove the link)",
        )),
        Ok(m) if m.is_dir() => Ok(dir),
        Ok(_) => {
            // A file where the folder should be: move it aside (never over an
            // earlier one), keep going.
            let aside = (0..)
                .map(|n| match n {
                    0 => root.join(NOT_A_FOLDER),
                    n => root.join(format!("{NOT_A_FOLDER}.{n}")),
                })
                .find(|p| fs::symlink_metadata(p).is_err())
                .unwrap_or_else(|| root.join(NOT_A_FOLDER));
            fs::rename(&dir, &aside).map_err(io_err(&dir))?;
            fs::create_dir(&dir).map_err(io_err(&dir))?;
            Ok(dir)
        }
        Err(_) => {
            fs::create_dir(&dir).map_err(io_err(&dir))?;
            Ok(dir)
        }
    }
}
