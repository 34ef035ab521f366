//! The one atomic replace: a file's new bytes go to a temporary file beside it,
//! which is then renamed over it, so a reader sees the old content or the new,
//! never a mix, and a crash leaves the old file and at most a stray temporary.
//!
//! Every temporary Kiln makes is named `.{name}.{pid}.kiln-tmp`: hidden (the walk
//! and the watcher pass it by), tied to the file it replaces and to the process
//! that made it. That one scheme is what lets one sweep ([`sweep_leftovers`])
//! remove what a killed process left, and never what a running one is writing.
//!
//! Hand-written on [`crate::os::Folder`] rather than with `tempfile`'s `persist`:
//! the temporary is made relative to the open folder (reached without following a
//! link, see `below.rs`), and its name must say which process made it for the
//! sweep; `tempfile` opens by path and names its files at random.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::below::{FileStat, stat_of_file};
use crate::os::{Folder, Kind, OpenFor};

/// Makes the file `name` in the folder `dir` new, open for writing
/// ([`OpenFor::CreateNew`], so never opened through a link): whatever is at the name
/// already (a leftover of an earlier process with this number, or a link, hard
/// link or file someone planted there to have Kiln write through it) is removed
/// first; an unlink removes a link, never what it points at.
pub fn create_new_at(dir: &Folder, name: &OsStr) -> io::Result<File> {
    match dir.open_file(name, OpenFor::CreateNew) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            dir.remove_file(name)?;
            dir.open_file(name, OpenFor::CreateNew)
        }
        made => made,
    }
}

/// Whether a replace waits for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The new bytes are flushed to disk before the rename: for a user's data.
    Flushed,
    /// Not waited for: for caches whose reader checks them (a checksum) and
    /// rebuilds what a crash left torn or empty, and for files whose rename a
    /// journal already orders after a flush of its own. A cold `kiln check` of
    /// 100,000 files waited about a tenth of its time for the cache's flush.
    Unflushed,
}

/// The suffix of every temporary file Kiln makes.
const SUFFIX: &str = ".kiln-tmp";

/// The temporary name a replace of `name` by process `pid` writes first.
pub fn temp_name(name: &OsStr, pid: u32) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(".{pid}{SUFFIX}"));
    temp
}

/// The process that made the temporary file `name`, if `name` is one of Kiln's.
pub fn leftover_of(name: &[u8]) -> Option<u32> {
    let rest = name.strip_prefix(b".")?.strip_suffix(SUFFIX.as_bytes())?;
    let dot = rest.iter().rposition(|&b| b == b'.')?;
    let (file, pid) = (&rest[..dot], &rest[dot + 1..]);
    if file.is_empty() {
        return None;
    }
    std::str::from_utf8(pid).ok()?.parse().ok()
}

/// A replace in progress: the temporary file is made; [`Replacement::place`]
/// renames it over the target. Dropped before that, it removes the temporary.
#[derive(Debug)]
pub struct Replacement<D: AsRef<Folder>> {
    dir: D,
    name: OsString,
    temp: OsString,
    placed: bool,
}

impl<D: AsRef<Folder>> Replacement<D> {
    /// Starts replacing `name` in the folder `dir`: makes the temporary file (never
    /// through a link) and returns it, open for writing.
    pub fn start(dir: D, name: &OsStr) -> io::Result<(Self, File)> {
        let temp = temp_name(name, std::process::id());
        let file = create_new_at(dir.as_ref(), &temp)?;
        let replacement = Replacement {
            dir,
            name: name.to_owned(),
            temp,
            placed: false,
        };
        Ok((replacement, file))
    }

    /// Puts the written temporary file in the target's place; with
    /// [`Durability::Flushed`], its bytes reach the disk first.
    pub fn place(mut self, file: File, durability: Durability) -> io::Result<()> {
        if durability == Durability::Flushed {
            file.sync_all()?;
        }
        drop(file);
        let dir = self.dir.as_ref();
        dir.rename(&self.temp, dir, &self.name)?;
        self.placed = true;
        Ok(())
    }

    /// Leaves the temporary file where it is, as a process killed now would: for
    /// tests that stop an operation halfway.
    pub fn leave_behind(mut self) {
        self.placed = true;
    }
}

impl<D: AsRef<Folder>> Drop for Replacement<D> {
    fn drop(&mut self) {
        if !self.placed {
            let _ = self.dir.as_ref().remove_file(&self.temp);
        }
    }
}

/// Replaces `name` in the folder `dir` with `bytes`, atomically; returns the size
/// and time of the file that now holds exactly these bytes (taken from the open
/// file: the rename keeps them).
pub fn replace_at(
    dir: &Folder,
    name: &OsStr,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<FileStat> {
    replace_at_with(dir, name, durability, |file| file.write_all(bytes))
}

/// [`replace_at`] with what `write` writes to the new file (through a buffer of
/// its own if it writes in small pieces): a file too big to hold whole in memory.
/// If `write` fails, the old file stays as it was.
pub fn replace_at_with(
    dir: &Folder,
    name: &OsStr,
    durability: Durability,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<FileStat> {
    let (replacement, mut file) = Replacement::start(dir, name)?;
    write(&mut file)?;
    let stat = stat_of_file(&file)?;
    replacement.place(file, durability)?;
    Ok(stat)
}

/// Opens the folder of `path` (a path given whole, as a command's argument is).
fn folder_of(path: &Path) -> io::Result<(Folder, &OsStr)> {
    let (parent, name) = crate::os::folder_and_name_of(path)?;
    std::fs::create_dir_all(parent)?;
    Ok((Folder::open_path(parent)?, name))
}

/// Writes `bytes` to `path` atomically and flushed to disk (see the module): for a
/// file named by a whole path, outside a project's tree or given by its user
/// (inside a project, `write_below` reaches the folder without following links).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = folder_of(path)?;
    replace_at(&dir, name, bytes, Durability::Flushed).map(|_| ())
}

/// [`write_atomic`] without waiting for the disk (see [`Durability::Unflushed`]).
/// Never for user data.
pub fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = folder_of(path)?;
    replace_at(&dir, name, bytes, Durability::Unflushed).map(|_| ())
}

/// Removes the temporary file `name` in `dir` if a process that is no longer
/// running left it there; returns whether it did.
pub fn remove_if_leftover(dir: &Folder, name: &OsStr) -> bool {
    match leftover_of(name.as_encoded_bytes()) {
        Some(pid) if !crate::os::process_is_running(pid) => dir.remove_file(name).is_ok(),
        _ => false,
    }
}

/// Removes from the folder `dir` every temporary file that processes no longer
/// running left there (a `kill -9` while writing); another running process's is
/// left alone. Returns how many it removed.
pub fn sweep_leftovers(dir: &Folder) -> usize {
    let Ok(entries) = dir.entries() else {
        return 0;
    };
    entries
        .into_iter()
        .filter(|(name, kind)| {
            *kind == Kind::File && leftover_of(name.as_encoded_bytes()).is_some()
        })
        .filter(|(name, _)| remove_if_leftover(dir, name))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_name_says_its_file_and_process_and_nothing_else_is_taken_for_one() {
        let temp = temp_name(OsStr::new("forest.level"), 4242);
        assert_eq!(temp, ".forest.level.4242.kiln-tmp");
        assert_eq!(leftover_of(temp.as_encoded_bytes()), Some(4242));
        for not in [
            "forest.level",
            ".forest.level.kiln-tmp",
            "..4242.kiln-tmp",
            ".a.b.kiln-tmp",
            ".a.4242.tmp",
            "a.4242.kiln-tmp",
        ] {
            assert_eq!(leftover_of(not.as_bytes()), None, "{not}");
        }
    }

    #[test]
    fn replace_writes_whole_files_and_a_sweep_takes_only_dead_processes_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let fd = Folder::open_path(dir.path()).unwrap();
        let name = OsStr::new("a.level");
        replace_at(&fd, name, b"first", Durability::Flushed).unwrap();
        let stat = replace_at(&fd, name, b"second!", Durability::Unflushed).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("a.level")).unwrap(),
            b"second!"
        );
        assert_eq!(stat.size, 7);
        // Dropped before it is placed: nothing is left, the file is as it was.
        let (replacement, mut file) = Replacement::start(&fd, name).unwrap();
        file.write_all(b"half").unwrap();
        drop(replacement);
        assert_eq!(
            std::fs::read(dir.path().join("a.level")).unwrap(),
            b"second!"
        );
        // A process that no longer runs (this one's child, waited for) and this one.
        let dead = std::process::Command::new("true")
            .spawn()
            .and_then(|mut c| c.wait().map(|_| c.id()))
            .unwrap();
        let mine = std::process::id();
        for pid in [dead, mine] {
            std::fs::write(dir.path().join(temp_name(name, pid)), b"x").unwrap();
        }
        std::fs::write(dir.path().join(".notes.txt"), b"not ours").unwrap();
        assert_eq!(sweep_leftovers(&fd), 1);
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mine_temp = temp_name(name, mine).into_string().unwrap();
        assert_eq!(left, [mine_temp.as_str(), ".notes.txt", "a.level"]);
    }
}
