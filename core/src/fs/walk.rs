//! The one serial walk of a folder tree below a root: depth first, folder by
//! folder through [`read_folder_below`] (never through a link), each entry seen
//! once with its path from the root. The dependency checker's index walks a whole
//! project in parallel (its `fs/walk.rs`); this is for the small walks every crate
//! makes (the project's levels, a folder's files, the editor's empty folders, a
//! plugin's sources), which had each kept a stack of their own.

use std::io;
use std::path::Path;

use std::rc::Rc;

use super::below::{Kind, entries_of, open_dir_at, open_dir_below};
use super::project_files::is_excluded;
use crate::os::Folder;

/// What a walk does after an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Go on; a folder is walked into.
    Enter,
    /// Go on, without walking into this folder.
    Skip,
    /// End the walk here.
    Stop,
}

/// Which entries a walk shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entries {
    /// The project's own: what [`is_excluded`] leaves out (Kiln's folders,
    /// `.git/`, hidden and scratch files) is not shown or walked into.
    OfTheProject,
    /// Every entry (a walk below a root that is not a project's, such as a
    /// plugin's folder).
    All,
}

/// What a walk does where a folder cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// The walk fails with the error.
    Fails,
    /// The folder is passed by (a folder that went while the walk ran).
    IsSkipped,
}

/// Walks the tree below `root` from the folder `from` (`""`: the root), showing
/// `visit` each entry's path from `root` (`/`-separated) and kind; `visit` says
/// whether to walk into a folder or to stop. Returns the first error of a folder
/// that cannot be read where `unreadable` says so.
pub fn walk_below(
    root: &Path,
    from: &str,
    entries: Entries,
    unreadable: Unreadable,
    mut visit: impl FnMut(&str, Kind) -> Step,
) -> io::Result<()> {
    // Each folder is opened inside its parent, which stays open while folders
    // below it wait: opening each from the root again made a walk quadratic in
    // the tree's depth (a project 4,000 folders deep took 23 s to compile).
    let mut folders: Vec<(String, Option<Rc<Folder>>)> = vec![(from.to_owned(), None)];
    while let Some((folder, parent)) = folders.pop() {
        let name = folder.rsplit('/').next().unwrap_or(&folder);
        let opened = match &parent {
            Some(parent) => open_dir_at(parent, name).or_else(|_| {
                // Past the limit of open files (a tree deep and wide at once),
                // the waiting folders let go of their parents, and this one is
                // opened from the root.
                for (_, waiting) in &mut folders {
                    *waiting = None;
                }
                open_dir_below(root, &folder)
            }),
            None => open_dir_below(root, &folder),
        };
        drop(parent);
        let listing = opened.and_then(|dir| {
            let entries = entries_of(&dir)?;
            Ok((Rc::new(dir), entries))
        });
        let (dir, listing) = match listing {
            Ok(listing) => listing,
            Err(e) if unreadable == Unreadable::Fails => {
                return Err(io::Error::new(e.kind(), format!("{folder}: {e}")));
            }
            Err(_) => continue,
        };
        for (name, kind) in listing {
            let path = if folder.is_empty() {
                name
            } else {
                format!("{folder}/{name}")
            };
            if entries == Entries::OfTheProject && is_excluded(&path) {
                continue;
            }
            match visit(&path, kind) {
                Step::Enter if kind == Kind::Folder => folders.push((path, Some(Rc::clone(&dir)))),
                Step::Stop => return Ok(()),
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A tree 3,000 folders deep is walked in linear time: each folder was
    /// opened from the root, 4.5 million opens here.
    #[test]
    fn a_deep_tree_is_walked_in_linear_time() {
        let dir = tempfile::tempdir().unwrap();
        let deep: std::path::PathBuf = std::iter::repeat_n("d", 3000).collect();
        crate::fs::create_dir_below(dir.path(), &deep).unwrap();
        crate::fs::write_below(dir.path(), &deep.join("a.level"), b"{}").unwrap();
        let started = std::time::Instant::now();
        let mut files = Vec::new();
        walk_below(
            dir.path(),
            "",
            Entries::All,
            Unreadable::Fails,
            |path, kind| {
                if kind == Kind::File {
                    files.push(path.len());
                }
                Step::Enter
            },
        )
        .unwrap();
        assert_eq!(files, [3000 * 2 + "a.level".len()]);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn the_walk_sees_each_entry_once_and_never_goes_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
        for (file, text) in [
            ("a/b/c.level", "{}"),
            ("a/d.txt", ""),
            (".kiln/x", ""),
            ("e.level", ""),
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        crate::os::symlink(outside.path(), dir.path().join("a/link")).unwrap();
        let mut seen = Vec::new();
        walk_below(
            dir.path(),
            "",
            Entries::OfTheProject,
            Unreadable::Fails,
            |path, kind| {
                seen.push((path.to_owned(), kind));
                Step::Enter
            },
        )
        .unwrap();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        let paths: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["a", "a/b", "a/b/c.level", "a/d.txt", "a/link", "e.level"]
        );
        assert!(
            seen.contains(&("a/link".to_owned(), Kind::Link)),
            "a link is a link"
        );

        // Every entry, Kiln's own folder too; a folder skipped is not walked into.
        let mut all = Vec::new();
        walk_below(
            dir.path(),
            "",
            Entries::All,
            Unreadable::Fails,
            |path, _| {
                all.push(path.to_owned());
                if path == "a" { Step::Skip } else { Step::Enter }
            },
        )
        .unwrap();
        all.sort();
        assert_eq!(all, [".kiln", ".kiln/x", "a", "e.level"]);

        // Stopped at the first entry, the walk sees one.
        let mut count = 0;
        walk_below(dir.path(), "", Entries::All, Unreadable::Fails, |_, _| {
            count += 1;
            Step::Stop
        })
        .unwrap();
        assert_eq!(count, 1);

        // A folder that is not there: an error, or nothing, as asked.
        let gone = |unreadable| {
            walk_below(dir.path(), "gone", Entries::All, unreadable, |_, _| {
                Step::Enter
            })
        };
        assert!(gone(Unreadable::Fails).is_err());
        assert!(gone(Unreadable::IsSkipped).is_ok());
    }
}
