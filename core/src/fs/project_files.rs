//! What a path of the project is: the one rule for which files are the project's
//! ([`is_excluded`]: what the checker indexes, the watcher reports, the editor
//! lists and `Project::levels` finds), and the plain relative paths Kiln accepts
//! from its own files.

/// The folder of compiled output, relative to the output root.
pub const BUILD_DIR: &str = "build";
/// Top-level folders that hold no resources: version control, Kiln's own folder,
/// compiled output.
pub const NON_RESOURCE_DIRS: &[&str] = &[".git", crate::own_folder::DIR, BUILD_DIR];

/// Splits a file path into the path without extension and the extension: the text
/// after the last `.` of the file's name, when the name has something before it
/// (`a.b/readme` and `.png` have no extension; `rock.` has none either).
pub fn split_extension(path: &str) -> Option<(&str, &str)> {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    let dot = path[name_start..].rfind('.')? + name_start;
    (dot > name_start && dot + 1 < path.len()).then(|| (&path[..dot], &path[dot + 1..]))
}

/// Whether the project path `path` is `folder` or inside it (`a/b` is within `a`,
/// `ab` is not).
pub fn is_within(path: &str, folder: &str) -> bool {
    path == folder
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether `rel` (a project-relative path with `/`) is not a resource: inside a tool
/// folder (`.git`, `.kiln`, `build`), hidden (a segment starting with `.`), or a
/// temporary or backup file an editor or an atomic save makes beside the real one
/// (see [`is_scratch_name`]).
pub fn is_excluded(rel: &str) -> bool {
    let top = rel.split('/').next().unwrap_or("");
    NON_RESOURCE_DIRS.contains(&top)
        || rel
            .split('/')
            .any(|segment| segment.starts_with('.') || is_scratch_name(segment))
}

/// Whether a file name is one that text editors and atomic saves use for a moment
/// or keep as a backup, never a resource: `big.level.tmp~` and `notes~` (an atomic
/// save's temporary, Emacs's and many tools' backups), `#notes#` (Emacs's
/// auto-save), `*.swp`, `*.swo`, `*.swx` (Vim's swap files, when kept beside the
/// file) and `4913` (the file Vim creates to test that it may write the folder).
/// Indexing them made a save report "changed big.level.tmp~: no level affected"
/// and a vanished temporary a missing file.
pub fn is_scratch_name(name: &str) -> bool {
    name.ends_with('~')
        || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'))
        || name == "4913"
        || [".swp", ".swo", ".swx"]
            .iter()
            .any(|ext| name.len() > ext.len() && name.ends_with(ext))
}

/// Whether `rel` is a plain path inside the project: relative, `/`-separated, no
/// empty, `.` or `..` segment, and not inside `.kiln/` or `.git/`.
pub fn is_plain_relative(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.contains('\\')
        && !rel.contains('\0')
        && !rel
            .split('/')
            .next()
            .is_some_and(|first| first == crate::own_folder::DIR || first == ".git")
        && rel
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editors_scratch_and_backup_files_are_not_the_projects() {
        for scratch in [
            "levels/big.level.tmp~",
            "levels/big.level~",
            "notes~",
            "levels/#big.level#",
            "levels/big.level.swp",
            "levels/big.level.swx",
            "levels/4913",
            "levels/.#big.level",
            ".kiln/cache",
        ] {
            assert!(is_excluded(scratch), "{scratch}");
        }
        for real in [
            "levels/big.level",
            "levels/4913.level",
            "textures/tilde~x.png",
            "a/#b",
            "swp",
            "data/x.swp.json",
        ] {
            assert!(!is_excluded(real), "{real}");
        }
    }
}
