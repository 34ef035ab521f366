//! The Linux (and Unix) implementation of [`super::Folder`]: `rustix`'s safe
//! wrappers over `openat`, `fstatat`, `renameat2` and friends, each name opened
//! relative to its folder's descriptor with `O_NOFOLLOW`.
//!
//! Hand-written rather than on `cap-std` (which `portable.rs` uses) because each
//! guarantee here is one system call: `RENAME_NOREPLACE` is the kernel's, not a
//! check before a rename. Both run a project's walk and check at the same speed
//! (`BENCHMARKS.md`, "Issue 49: the two implementations of the OS layer").

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::{Kind, Metadata, OpenFor, one_name};

/// An open folder: what every name below a project root is opened relative to.
#[derive(Debug)]
pub struct Folder(OwnedFd);

const FOLDER: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

fn kind_of(kind: FileType) -> Kind {
    match kind {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Folder,
        FileType::Symlink => Kind::Link,
        _ => Kind::Other,
    }
}

// The stat fields' integer types differ between targets; the conversions are only
// no-ops on some of them.
#[allow(clippy::useless_conversion)]
fn metadata_of(st: &rustix::fs::Stat) -> Metadata {
    Metadata {
        kind: kind_of(FileType::from_raw_mode(st.st_mode)),
        size: u64::try_from(st.st_size).unwrap_or(0),
        modified: (
            i64::try_from(st.st_mtime).unwrap_or(0),
            i64::try_from(st.st_mtime_nsec).unwrap_or(0),
        ),
        device: u64::try_from(st.st_dev).unwrap_or(0),
        inode: u64::try_from(st.st_ino).unwrap_or(0),
        links: u64::try_from(st.st_nlink).unwrap_or(0),
    }
}

impl Folder {
    /// Opens the folder at `path`, a path given whole (the project root as the user
    /// named it, a folder outside any project): links in it are followed.
    pub fn open_path(path: &Path) -> io::Result<Folder> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Folder(rustix::fs::open(path, flags, Mode::empty())?))
    }

    /// Opens the folder at `path` as a project root: links before its last name are
    /// followed, a link as its last name is refused.
    pub fn open_root(path: &Path) -> io::Result<Folder> {
        Ok(Folder(rustix::fs::open(path, FOLDER, Mode::empty())?))
    }

    /// Opens the folder `name` in this one; a link at the name is refused, never
    /// followed.
    pub fn open_folder(&self, name: &OsStr) -> io::Result<Folder> {
        one_name(name)?;
        Ok(Folder(rustix::fs::openat(
            &self.0,
            name,
            FOLDER,
            Mode::empty(),
        )?))
    }

    /// Makes the folder `name` in this one (`AlreadyExists` if anything is there).
    pub fn make_folder(&self, name: &OsStr) -> io::Result<()> {
        one_name(name)?;
        Ok(rustix::fs::mkdirat(
            &self.0,
            name,
            Mode::from_raw_mode(0o777),
        )?)
    }

    /// Opens the file `name` in this one as `how` says, never through a link at the
    /// name, never waiting on a FIFO.
    pub fn open_file(&self, name: &OsStr, how: OpenFor) -> io::Result<File> {
        one_name(name)?;
        let never = OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        let flags = match how {
            OpenFor::Read => OFlags::RDONLY,
            OpenFor::ReadWriteCreate => OFlags::RDWR | OFlags::CREATE,
            OpenFor::Append => OFlags::WRONLY | OFlags::APPEND,
            OpenFor::CreateNew => OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
        };
        let fd = rustix::fs::openat(&self.0, name, flags | never, Mode::from_raw_mode(0o666))?;
        Ok(File::from(fd))
    }

    /// What is at `name` in this one; a link is described as the link.
    pub fn metadata(&self, name: &OsStr) -> io::Result<Metadata> {
        one_name(name)?;
        Ok(metadata_of(&rustix::fs::statat(
            &self.0,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
        )?))
    }

    /// What this folder itself is (its identity tells whether a path still leads to
    /// it).
    pub fn own_metadata(&self) -> io::Result<Metadata> {
        Ok(metadata_of(&rustix::fs::fstat(&self.0)?))
    }

    /// Every name in this folder but `.` and `..`, with its kind (a link as a link), in
    /// no particular order.
    pub fn entries(&self) -> io::Result<Vec<(OsString, Kind)>> {
        let mut out = Vec::new();
        for entry in Dir::read_from(&self.0)?.flatten() {
            let name = entry.file_name();
            if name.to_bytes() == b"." || name.to_bytes() == b".." {
                continue;
            }
            let mut kind = entry.file_type();
            if kind == FileType::Unknown {
                kind = rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode));
            }
            out.push((OsString::from_vec(name.to_bytes().to_vec()), kind_of(kind)));
        }
        Ok(out)
    }

    /// Renames `old` in this folder to `new` in `to`, replacing what is there
    /// atomically; a link moves as the link.
    pub fn rename(&self, old: &OsStr, to: &Folder, new: &OsStr) -> io::Result<()> {
        one_name(old)?;
        one_name(new)?;
        Ok(rustix::fs::renameat(&self.0, old, &to.0, new)?)
    }

    /// Renames `old` in this folder to `new` in `to`, never replacing what is there
    /// (`AlreadyExists`).
    ///
    /// `renameat2(RENAME_NOREPLACE)`, or a check just before a plain rename where the
    /// file system lacks the flag (some network and FUSE ones).
    pub fn rename_no_replace(&self, old: &OsStr, to: &Folder, new: &OsStr) -> io::Result<()> {
        one_name(old)?;
        one_name(new)?;
        match rustix::fs::renameat_with(&self.0, old, &to.0, new, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(()),
            Err(Errno::INVAL | Errno::NOSYS) => {
                match rustix::fs::statat(&to.0, new, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(_) => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
                    Err(Errno::NOENT) => Ok(rustix::fs::renameat(&self.0, old, &to.0, new)?),
                    Err(e) => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Removes the file `name` (a link as the link, never what it points at); a folder
    /// is refused.
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        one_name(name)?;
        Ok(rustix::fs::unlinkat(&self.0, name, AtFlags::empty())?)
    }

    /// Removes the empty folder `name`.
    pub fn remove_folder(&self, name: &OsStr) -> io::Result<()> {
        one_name(name)?;
        Ok(rustix::fs::unlinkat(&self.0, name, AtFlags::REMOVEDIR)?)
    }

    /// Makes this folder's entries durable: a name made, renamed or removed in it
    /// survives a power cut once this returns.
    ///
    /// `fsync` on the folder.
    pub fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.0)?)
    }
}

/// What the open `file` is (its kind, size, time and identity), from the file
/// itself.
pub fn metadata_of_file(file: &File) -> io::Result<Metadata> {
    Ok(metadata_of(&rustix::fs::fstat(file)?))
}

/// Opens the file at `path` (a path given whole, outside any project) for
/// reading without waiting on a FIFO; a link as its last name is refused unless
/// `follow`.
pub fn open_path_for_reading(path: &Path, follow: bool) -> io::Result<File> {
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
}
