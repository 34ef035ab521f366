//! What a path of the project is: the one rule for which files are the project's
//! (and so indexed, watched and checked), and the plain relative paths Kiln accepts
//! from its own files.

use std::fs;
use std::path::Path;

use kiln_core::project::NON_RESOURCE_DIRS;

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
/// folder (`.git`, `.kiln`, `build`) or hidden (a segment starting with `.`).
pub fn is_excluded(rel: &str) -> bool {
    let top = rel.split('/').next().unwrap_or("");
    NON_RESOURCE_DIRS.contains(&top) || rel.split('/').any(|segment| segment.starts_with('.'))
}

/// Whether `rel` is a plain path inside the project: relative, `/`-separated, no
/// empty, `.` or `..` segment, and not inside `.kiln/` or `.git/`.
pub(crate) fn is_plain_relative(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.contains('\\')
        && !rel.contains('\0')
        && !matches!(rel.split('/').next(), Some(".kiln" | ".git"))
        && rel
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

/// Whether `rel`, with symbolic links followed as far as it exists, is inside `root`
/// (a canonical path): a link in the project must not carry recovery outside it.
pub(crate) fn stays_inside(root: &Path, rel: &str) -> bool {
    let mut probe = root.join(rel);
    loop {
        match fs::canonicalize(&probe) {
            Ok(real) => return real.starts_with(root),
            Err(_) => {
                if !probe.pop() {
                    return false;
                }
            }
        }
    }
}
