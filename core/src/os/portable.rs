//! The portable implementation of [`super::Folder`], selected by the
//! `portable-os` feature: `cap-std`'s `Dir`, whose every operation stays beneath
//! the folder it starts from, with `cap-fs-ext` for what the standard library's
//! shape leaves out (opening a folder or file without following a link in its
//! last name; device and inode numbers on every platform; opening without
//! waiting on a FIFO).
//!
//! `cap-std` builds for Windows, macOS and Linux. It is run here on Linux only
//! (`.ci/run` runs the whole suite once with it); `docs/development.md` says what
//! a Windows or macOS build still lacks. Where it cannot give a guarantee the
//! Linux implementation gives, the contract in `mod.rs` says what it gives
//! instead: a rename that must not replace checks the target just before renaming.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::Path;

use cap_fs_ext::{
    DirExt, FollowSymlinks, MetadataExt, OpenOptionsFollowExt, OpenOptionsMaybeDirExt,
    OpenOptionsSyncExt,
};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use super::{Kind, Metadata, OpenFor, one_name};

/// An open folder: what every name below a project root is opened relative to.
#[derive(Debug)]
pub struct Folder(Dir);

fn kind_of(kind: cap_std::fs::FileType) -> Kind {
    if kind.is_symlink() {
        Kind::Link
    } else if kind.is_dir() {
        Kind::Folder
    } else if kind.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

fn metadata_of(meta: &cap_std::fs::Metadata) -> Metadata {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.into_std().duration_since(std::time::UNIX_EPOCH).ok())
        .map_or((0, 0), |d| {
            (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                i64::from(d.subsec_nanos()),
            )
        });
    Metadata {
        kind: kind_of(meta.file_type()),
        size: meta.len(),
        modified,
        device: meta.dev(),
        inode: meta.ino(),
        links: meta.nlink(),
    }
}

impl Folder {
    /// Opens the folder at `path`, a path given whole (the project root as the user
    /// named it, a folder outside any project): links in it are followed.
    pub fn open_path(path: &Path) -> io::Result<Folder> {
        Ok(Folder(Dir::open_ambient_dir(path, ambient_authority())?))
    }

    /// Opens the folder at `path` as a project root: links before its last name are
    /// followed, a link as its last name is refused.
    ///
    /// The parent opened as given, the last name in it without following a link.
    pub fn open_root(path: &Path) -> io::Result<Folder> {
        match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => {
                let parent = match parent.as_os_str().is_empty() {
                    true => Path::new("."),
                    false => parent,
                };
                Folder::open_path(parent)?.open_folder(name)
            }
            _ => Folder::open_path(path),
        }
    }

    /// Opens the folder `name` in this one; a link at the name is refused, never
    /// followed.
    pub fn open_folder(&self, name: &OsStr) -> io::Result<Folder> {
        one_name(name)?;
        Ok(Folder(self.0.open_dir_nofollow(name)?))
    }

    /// Makes the folder `name` in this one (`AlreadyExists` if anything is there).
    pub fn make_folder(&self, name: &OsStr) -> io::Result<()> {
        one_name(name)?;
        self.0.create_dir(name)
    }

    /// Opens the file `name` in this one as `how` says, never through a link at the
    /// name, never waiting on a FIFO.
    pub fn open_file(&self, name: &OsStr, how: OpenFor) -> io::Result<File> {
        one_name(name)?;
        let mut options = OpenOptions::new();
        match how {
            OpenFor::Read => options.read(true),
            OpenFor::ReadWriteCreate => options.read(true).write(true).create(true),
            OpenFor::Append => options.append(true),
            OpenFor::CreateNew => options.write(true).create_new(true),
        };
        options.follow(FollowSymlinks::No).nonblock(true);
        Ok(self.0.open_with(name, &options)?.into_std())
    }

    /// What is at `name` in this one; a link is described as the link.
    pub fn metadata(&self, name: &OsStr) -> io::Result<Metadata> {
        one_name(name)?;
        Ok(metadata_of(&self.0.symlink_metadata(name)?))
    }

    /// What this folder itself is (its identity tells whether a path still leads to
    /// it).
    pub fn own_metadata(&self) -> io::Result<Metadata> {
        Ok(metadata_of(&self.0.dir_metadata()?))
    }

    /// Every name in this folder but `.` and `..`, with its kind (a link as a link), in
    /// no particular order.
    pub fn entries(&self) -> io::Result<Vec<(OsString, Kind)>> {
        let mut out = Vec::new();
        for entry in self.0.entries()?.flatten() {
            let kind = entry.file_type().map_or(Kind::Other, kind_of);
            out.push((entry.file_name(), kind));
        }
        Ok(out)
    }

    /// Renames `old` in this folder to `new` in `to`, replacing what is there
    /// atomically; a link moves as the link.
    pub fn rename(&self, old: &OsStr, to: &Folder, new: &OsStr) -> io::Result<()> {
        one_name(old)?;
        one_name(new)?;
        self.0.rename(old, &to.0, new)
    }

    /// Renames `old` in this folder to `new` in `to`, never replacing what is there
    /// (`AlreadyExists`).
    ///
    /// `cap-std` has no rename that refuses to replace, so the target is checked
    /// (without following a link) just before a plain rename; a name another program
    /// makes between the two is replaced.
    pub fn rename_no_replace(&self, old: &OsStr, to: &Folder, new: &OsStr) -> io::Result<()> {
        one_name(old)?;
        one_name(new)?;
        match to.0.symlink_metadata(new) {
            Ok(_) => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.0.rename(old, &to.0, new),
            Err(e) => Err(e),
        }
    }

    /// Removes the file `name` (a link as the link, never what it points at); a folder
    /// is refused.
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        one_name(name)?;
        self.0.remove_file_or_symlink(name)
    }

    /// Removes the empty folder `name`.
    pub fn remove_folder(&self, name: &OsStr) -> io::Result<()> {
        one_name(name)?;
        self.0.remove_dir(name)
    }

    /// Makes this folder's entries durable: a name made, renamed or removed in it
    /// survives a power cut once this returns.
    ///
    /// The folder's own handle flushed, where the platform can flush a folder (not on
    /// Windows, whose renames are durable by the file system's journal: there this does
    /// nothing).
    pub fn sync(&self) -> io::Result<()> {
        if cfg!(windows) {
            return Ok(());
        }
        // `cap-std` holds a folder by an `O_PATH` descriptor on Linux, which cannot
        // be flushed: the folder is opened again for reading.
        let mut options = OpenOptions::new();
        options.read(true).maybe_dir(true);
        self.0.open_with(".", &options)?.sync_all()
    }
}

/// What the open `file` is (its kind, size, time and identity), from the file
/// itself.
pub fn metadata_of_file(file: &File) -> io::Result<Metadata> {
    Ok(metadata_of(&cap_std::fs::Metadata::from_file(file)?))
}

/// Opens the file at `path` (a path given whole, outside any project) for
/// reading without waiting on a FIFO; a link as its last name is refused unless
/// `follow`. The path's folder is opened as given, the file in it as
/// [`Folder::open_file`] opens one.
pub fn open_path_for_reading(path: &Path, follow: bool) -> io::Result<File> {
    let (parent, name) = super::folder_and_name_of(path)?;
    let folder = Folder::open_path(parent)?;
    if !follow {
        return folder.open_file(name, OpenFor::Read);
    }
    let mut options = OpenOptions::new();
    options
        .read(true)
        .follow(FollowSymlinks::Yes)
        .nonblock(true);
    // A link may lead anywhere: the user named it; it is followed outside the
    // folder as the system would.
    match folder.0.open_with(name, &options) {
        Ok(file) => Ok(file.into_std()),
        Err(_) => {
            let target = std::fs::canonicalize(path)?;
            open_path_for_reading(&target, false)
        }
    }
}
