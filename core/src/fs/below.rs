//! Reaching a file or folder below the project root the one way Kiln does: folder
//! by folder from the root's descriptor, each opened relative to the one before
//! (`openat`) and never through a symbolic link (`O_NOFOLLOW`), so that a link
//! planted in the project, or a folder swapped for one while Kiln works, can never
//! carry a read outside the root; and only regular files are read (a FIFO or a
//! device put in a file's place would hang the open or never end).
//!
//! Hand-written on `rustix`'s safe wrappers: the standard library opens only whole
//! paths, which the kernel resolves through links, and `cap-std` would wrap every
//! call in its own sandbox object for what is a dozen lines of `openat`.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use super::paths::is_excluded;

/// Size and modification time of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    pub size: u64,
    pub mtime_ns: u64,
}

// The stat fields' integer types differ between targets; the conversions are only
// no-ops on some of them.
#[allow(clippy::useless_conversion)]
pub(crate) fn stat_of(st: &rustix::fs::Stat) -> FileStat {
    let secs = u64::try_from(st.st_mtime).unwrap_or(0);
    let nanos = u64::try_from(st.st_mtime_nsec).unwrap_or(0);
    FileStat {
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime_ns: secs.saturating_mul(1_000_000_000) + nanos,
    }
}

pub(crate) fn open_at<Name: rustix::path::Arg>(
    dir: &OwnedFd,
    name: Name,
) -> std::io::Result<(File, FileStat)> {
    let (file, st) = open_regular_at(dir, name)?;
    Ok((file, stat_of(&st)))
}

/// Opens `name` in `dir` for reading, without following a link, with its whole
/// stat from the open file. A FIFO or device put in a file's place since it was
/// listed must neither hang the open nor be read: only a regular file is.
pub(crate) fn open_regular_at<Name: rustix::path::Arg>(
    dir: &OwnedFd,
    name: Name,
) -> std::io::Result<(File, rustix::fs::Stat)> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty())?;
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    Ok((File::from(fd), st))
}

/// One name of a path from the walk: not empty, not `.` or `..`.
fn plain_name(part: &str) -> bool {
    !part.is_empty() && part != "." && part != ".."
}

fn not_plain(rel: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{rel} is not a plain relative path"),
    )
}

/// Opens the folder at `rel` below `root` (`""`: the root itself), folder by
/// folder without following a symbolic link, as the walk reaches it.
pub(crate) fn open_dir_below(root: &Path, rel: &str) -> std::io::Result<OwnedFd> {
    let folder = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let mut dir = rustix::fs::open(root, folder, Mode::empty())?;
    if rel.is_empty() {
        return Ok(dir);
    }
    for part in rel.split('/') {
        if !plain_name(part) {
            return Err(not_plain(rel));
        }
        dir = rustix::fs::openat(&dir, part, folder, Mode::empty())?;
    }
    Ok(dir)
}

/// Splits a path from the walk into its folder (`""` at the root) and name.
pub(crate) fn folder_and_name(rel: &str) -> std::io::Result<(&str, &str)> {
    let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    if plain_name(name) {
        Ok((folder, name))
    } else {
        Err(not_plain(rel))
    }
}

/// The folder of the last path asked for, opened as [`open_dir_below`] opens it and
/// kept while the next paths are in it too: paths taken in sorted order open each
/// of their folders once, where [`stat_below`] and [`open_below`] descend from the
/// root for every path.
#[derive(Default)]
pub(crate) struct FolderCursor {
    open: std::cell::RefCell<Option<(String, std::rc::Rc<OwnedFd>)>>,
}

impl FolderCursor {
    /// The folder `folder` below `root` (`""`: the root).
    pub(crate) fn folder(
        &self,
        root: &Path,
        folder: &str,
    ) -> std::io::Result<std::rc::Rc<OwnedFd>> {
        let mut open = self.open.borrow_mut();
        if let Some((at, fd)) = &*open
            && at == folder
        {
            return Ok(fd.clone());
        }
        *open = None;
        let fd = std::rc::Rc::new(open_dir_below(root, folder)?);
        *open = Some((folder.to_owned(), fd.clone()));
        Ok(fd)
    }

    /// The whole stat of what is at `rel`, not following a link.
    pub(crate) fn lstat(&self, root: &Path, rel: &str) -> std::io::Result<rustix::fs::Stat> {
        let (folder, name) = folder_and_name(rel)?;
        Ok(rustix::fs::statat(
            &*self.folder(root, folder)?,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    /// As [`stat_below`].
    pub(crate) fn stat(&self, root: &Path, rel: &str) -> std::io::Result<(FileType, FileStat)> {
        let st = self.lstat(root, rel)?;
        Ok((FileType::from_raw_mode(st.st_mode), stat_of(&st)))
    }

    /// The regular file at `rel`, opened for reading with its whole stat.
    pub(crate) fn open_regular(
        &self,
        root: &Path,
        rel: &str,
    ) -> std::io::Result<(File, rustix::fs::Stat)> {
        let (folder, name) = folder_and_name(rel)?;
        open_regular_at(&*self.folder(root, folder)?, name)
    }

    /// As [`open_below`].
    pub(crate) fn open_file(&self, root: &Path, rel: &str) -> std::io::Result<(File, FileStat)> {
        let (file, st) = self.open_regular(root, rel)?;
        Ok((file, stat_of(&st)))
    }
}

/// Opens the file at `rel` (a path from the walk) below `root` for reading, folder
/// by folder without following a symbolic link, as the walk itself would: for a file
/// found earlier whose folder is no longer open. Returns it with its size and time.
pub(crate) fn open_below(root: &Path, rel: &str) -> std::io::Result<(File, FileStat)> {
    FolderCursor::default().open_file(root, rel)
}

/// What is at `rel` below `root`, reached folder by folder without following a
/// symbolic link (a link is reported as one, never followed): its kind, size and
/// time. A folder swapped for a link since the walk is not looked through.
pub(crate) fn stat_below(root: &Path, rel: &str) -> std::io::Result<(FileType, FileStat)> {
    FolderCursor::default().stat(root, rel)
}

/// The entries of the folder at `rel` below `root` (reached as in [`stat_below`]),
/// by path from the root and kind, without what the walk leaves out: names that
/// are not UTF-8 and excluded ones.
pub(crate) fn list_below(root: &Path, rel: &str) -> std::io::Result<Vec<(String, FileType)>> {
    let fd = open_dir_below(root, rel)?;
    let mut out = Vec::new();
    for entry in Dir::read_from(&fd)?.flatten() {
        let Ok(name) = std::str::from_utf8(entry.file_name().to_bytes()) else {
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        let path = if rel.is_empty() {
            name.to_owned()
        } else {
            format!("{rel}/{name}")
        };
        if is_excluded(&path) {
            continue;
        }
        let mut kind = entry.file_type();
        if kind == FileType::Unknown {
            kind = rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode));
        }
        out.push((path, kind));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_below_reads_plain_paths_and_refuses_links_and_climbing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("levels/deep")).unwrap();
        std::fs::write(root.join("levels/deep/a.level"), "inside").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("s.level")).unwrap();
        // A FIFO where a file was: refused at once, not waited on.
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("levels/fifo.level"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        let read = |rel: &str| {
            let (mut f, stat) = open_below(&root, rel)?;
            let mut text = String::new();
            std::io::Read::read_to_string(&mut f, &mut text)?;
            assert_eq!(stat.size, text.len() as u64);
            Ok::<_, std::io::Error>(text)
        };
        assert_eq!(read("levels/deep/a.level").unwrap(), "inside");
        for refused in [
            "out/secret",
            "s.level",
            "../secret",
            "levels/../../secret",
            "",
            "levels//deep/a.level",
            "levels/fifo.level",
            "levels/deep",
        ] {
            assert!(read(refused).is_err(), "{refused}");
        }
    }
}
