//! Reaching a file or folder below the project root the one way Kiln does: folder
//! by folder from the root, each opened relative to the one before and never
//! through a symbolic link ([`crate::os::Folder`]), so that a link planted in the
//! project, or a folder swapped for one while Kiln works, can never carry a read
//! outside the root; and only regular files are read (a FIFO or a device put in a
//! file's place would hang the open or never end).
//!
//! Written on [`crate::os`], the one layer that meets the operating system; this
//! file holds the project's rules (plain relative paths, errors that name the
//! link at fault, bounded reads), not system calls.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::project_files::is_excluded;
pub use crate::os::Kind;
use crate::os::{Folder, Metadata, OpenFor};

/// Size and modification time of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u64,
}

/// What identifies one version of a file cheaply: a save by another program (in
/// place, or by renaming a new file over it) changes at least one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    /// The device the file is on.
    pub dev: u64,
    /// Its inode on that device.
    pub ino: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time: seconds and nanoseconds.
    pub mtime: (i64, i64),
}

/// The identity of what `meta` describes.
fn identity_of(meta: &Metadata) -> FileIdentity {
    FileIdentity {
        dev: meta.device,
        ino: meta.inode,
        size: meta.size,
        mtime: meta.modified,
    }
}

/// The size and time of the open file `file` (of a file written through it, say).
pub fn stat_of_file(file: &File) -> io::Result<FileStat> {
    Ok(stat_of(&crate::os::metadata_of_file(file)?))
}

/// The size and time `meta` gives.
pub fn stat_of(meta: &Metadata) -> FileStat {
    let secs = u64::try_from(meta.modified.0).unwrap_or(0);
    let nanos = u64::try_from(meta.modified.1).unwrap_or(0);
    FileStat {
        size: meta.size,
        mtime_ns: secs.saturating_mul(1_000_000_000).saturating_add(nanos),
    }
}

/// Opens the regular file `name` in `dir` for reading (see [`open_regular_at`]),
/// with its size and time.
pub fn open_at(dir: &Folder, name: impl AsRef<OsStr>) -> io::Result<(File, FileStat)> {
    let (file, meta) = open_regular_at(dir, name)?;
    Ok((file, stat_of(&meta)))
}

/// Opens `name` in `dir` for reading, without following a link, with what the
/// open file says of itself. A FIFO or device put in a file's place since it was
/// listed must neither hang the open nor be read: only a regular file is.
pub fn open_regular_at(dir: &Folder, name: impl AsRef<OsStr>) -> io::Result<(File, Metadata)> {
    let file = dir.open_file(name.as_ref(), OpenFor::Read)?;
    let meta = crate::os::metadata_of_file(&file)?;
    if meta.kind != Kind::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    Ok((file, meta))
}

/// Opens `name` in `folder` for reading and writing, making it (empty) if it is
/// not there: never through a link, never waiting on a FIFO, and refused
/// (`InvalidData`) unless it is a regular file with no other name, so that what is
/// written into it (the project lock's generation) lands nowhere else, whatever a
/// hard link planted in its place points at.
pub fn open_own_file_at(folder: &Folder, name: &str) -> io::Result<File> {
    let file = folder.open_file(OsStr::new(name), OpenFor::ReadWriteCreate)?;
    let meta = crate::os::metadata_of_file(&file)?;
    if meta.kind != Kind::File || meta.links != 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file of its own",
        ));
    }
    Ok(file)
}

/// Makes the entries of `folder` durable (a name made, renamed or removed in it
/// survives a power cut once this returns; see [`Folder::sync`]).
pub fn sync_folder(folder: &Folder) -> io::Result<()> {
    folder.sync()
}

/// Removes the name `name` from `folder`: a file, or a link as the link (never
/// what it points at); a folder is refused.
pub fn remove_file_at(folder: &Folder, name: &OsStr) -> io::Result<()> {
    folder.remove_file(name)
}

/// One name of a path from the walk: not empty, not `.` or `..`.
fn plain_name(part: &str) -> bool {
    !part.is_empty() && part != "." && part != ".."
}

fn not_plain(rel: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{rel} is not a plain relative path"),
    )
}

/// Opens the folder at `rel` below `root` (`""`: the root itself), folder by
/// folder without following a symbolic link, as the walk reaches it.
pub fn open_dir_below(root: &Path, rel: &str) -> io::Result<Folder> {
    let mut dir = Folder::open_root(root)?;
    if rel.is_empty() {
        return Ok(dir);
    }
    for part in rel.split('/') {
        if !plain_name(part) {
            return Err(not_plain(rel));
        }
        dir = dir.open_folder(OsStr::new(part))?;
    }
    Ok(dir)
}

/// Opens the folder `name` inside the folder `parent` (itself reached without a
/// link), as [`open_dir_below`] opens each step: one open for a walk that holds
/// the parent open, where descending from the root again costs one per level.
pub fn open_dir_at(parent: &Folder, name: &str) -> io::Result<Folder> {
    if !plain_name(name) {
        return Err(not_plain(name));
    }
    parent.open_folder(OsStr::new(name))
}

/// Splits a path from the walk into its folder (`""` at the root) and name.
pub fn folder_and_name(rel: &str) -> io::Result<(&str, &str)> {
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
#[derive(Debug, Default)]
pub struct FolderCursor {
    open: std::cell::RefCell<Option<(String, std::rc::Rc<Folder>)>>,
}

impl FolderCursor {
    /// The folder `folder` below `root` (`""`: the root).
    pub fn folder(&self, root: &Path, folder: &str) -> io::Result<std::rc::Rc<Folder>> {
        let mut open = self.open.borrow_mut();
        if let Some((at, dir)) = &*open
            && at == folder
        {
            return Ok(dir.clone());
        }
        *open = None;
        let dir = std::rc::Rc::new(open_dir_below(root, folder)?);
        *open = Some((folder.to_owned(), dir.clone()));
        Ok(dir)
    }

    /// Whether the open folder `folder` (as [`FolderCursor::folder`] gave it) is
    /// still the one its path below `root` leads to: another program may have
    /// moved it out of the project, or put a link or another folder in its
    /// place, since it was opened. A write through the open folder would then
    /// land outside.
    pub fn still_at(&self, root: &Path, folder: &str, open: &Folder) -> bool {
        let now = open_dir_below(root, folder).and_then(|d| d.own_metadata());
        let was = open.own_metadata();
        matches!((now, was), (Ok(a), Ok(b)) if a.device == b.device && a.inode == b.inode)
    }

    /// What the system says of what is at `rel`, not following a link.
    pub fn metadata(&self, root: &Path, rel: &str) -> io::Result<Metadata> {
        let (folder, name) = folder_and_name(rel)?;
        self.folder(root, folder)?.metadata(OsStr::new(name))
    }

    /// The identity of what is at `rel` (a link's own, never what it points at).
    pub fn identity(&self, root: &Path, rel: &str) -> io::Result<FileIdentity> {
        Ok(identity_of(&self.metadata(root, rel)?))
    }

    /// The regular file at `rel`, opened for reading, with its identity from the
    /// open file (so both describe the same version).
    pub fn open_identified(&self, root: &Path, rel: &str) -> io::Result<(File, FileIdentity)> {
        let (file, meta) = self.open_regular(root, rel)?;
        Ok((file, identity_of(&meta)))
    }

    /// As [`stat_below`].
    pub fn stat(&self, root: &Path, rel: &str) -> io::Result<(Kind, FileStat)> {
        let meta = self.metadata(root, rel)?;
        Ok((meta.kind, stat_of(&meta)))
    }

    /// The regular file at `rel`, opened for reading with what it says of itself.
    pub fn open_regular(&self, root: &Path, rel: &str) -> io::Result<(File, Metadata)> {
        let (folder, name) = folder_and_name(rel)?;
        open_regular_at(&*self.folder(root, folder)?, name)
    }

    /// As [`open_below`].
    pub fn open_file(&self, root: &Path, rel: &str) -> io::Result<(File, FileStat)> {
        let (file, meta) = self.open_regular(root, rel)?;
        Ok((file, stat_of(&meta)))
    }
}

/// Opens the file at `rel` (a path from the walk) below `root` for reading, folder
/// by folder without following a symbolic link, as the walk itself would: for a file
/// found earlier whose folder is no longer open. Returns it with its size and time.
pub fn open_below(root: &Path, rel: &str) -> io::Result<(File, FileStat)> {
    FolderCursor::default().open_file(root, rel)
}

/// What is at `rel` below `root`, reached folder by folder without following a
/// symbolic link (a link is reported as one, never followed): its kind, size and
/// time. A folder swapped for a link since the walk is not looked through.
pub fn stat_below(root: &Path, rel: &str) -> io::Result<(Kind, FileStat)> {
    FolderCursor::default().stat(root, rel)
}

/// The entries of the folder at `rel` below `root` (reached as in [`stat_below`]),
/// by path from the root and kind, without what the walk leaves out: names that
/// are not UTF-8 and excluded ones.
pub fn list_below(root: &Path, rel: &str) -> io::Result<Vec<(String, Kind)>> {
    let entries = entries_of(&open_dir_below(root, rel)?)?;
    Ok((entries.into_iter())
        .map(|(name, kind)| match rel {
            "" => (name, kind),
            _ => (format!("{rel}/{name}"), kind),
        })
        .filter(|(path, _)| !is_excluded(path))
        .collect())
}

/// Every entry of the open folder `dir` by name and kind (a link as a link), but
/// names that are not UTF-8.
pub(crate) fn entries_of(dir: &Folder) -> io::Result<Vec<(String, Kind)>> {
    Ok((dir.entries()?.into_iter())
        .filter_map(|(name, kind)| Some((name.into_string().ok()?, kind)))
        .collect())
}

/// Opens the folder `rel` below `base` (empty: `base` itself) folder by folder,
/// each relative to the one before and never through a symbolic link; with
/// `create`, folders that do not exist are made on the way. A link on the way is
/// refused with an error that names it: it could carry the read or write outside
/// the project.
pub fn open_folder_below(base: &Path, rel: &Path, create: bool) -> io::Result<Folder> {
    let mut dir = Folder::open_root(base)?;
    // The path so far, from `base`: errors name the folder at fault within it (the
    // caller names the whole path).
    let mut at = PathBuf::new();
    for part in rel.components() {
        let Component::Normal(name) = part else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", rel.display()),
            ));
        };
        at.push(name);
        let opened = match dir.open_folder(name) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                match dir.make_folder(name) {
                    // Another process (two commands at once) made it first: fine if
                    // what it made is a real folder, which the open below checks.
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(e),
                }
                dir.open_folder(name)
            }
            other => other,
        };
        dir = opened.map_err(|e| refused_at(&dir, name, &at, e))?;
    }
    Ok(dir)
}

/// `error` from opening `name` in `dir`, said plainly when a symbolic link or a
/// file stands where a folder or file was expected.
fn refused_at(dir: &Folder, name: &OsStr, path: &Path, error: io::Error) -> io::Error {
    match dir.metadata(name) {
        Ok(meta) if meta.kind == Kind::Link => planted_link(path),
        _ => io::Error::new(error.kind(), format!("{}: {error}", path.display())),
    }
}

/// The error for a symbolic link Kiln will not go through.
pub(crate) fn planted_link(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link; Kiln does not read or write through links inside a project (remove it)",
            path.display()
        ),
    )
}

/// The folder and file name of `rel`, a plain relative path to a file.
fn parent_and_name(rel: &Path) -> io::Result<(&Path, &OsStr)> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name))
            if matches!(rel.components().next_back(), Some(Component::Normal(_))) =>
        {
            Ok((parent, name))
        }
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a plain relative path", rel.display()),
        )),
    }
}

/// Reads the regular file `base/rel`, at most `max` bytes, reached as
/// [`open_folder_below`] reaches its folder: never through a link, never a FIFO or
/// a device.
pub fn read_below(base: &Path, rel: &Path, max: u64) -> io::Result<Vec<u8>> {
    let (parent, name) = parent_and_name(rel)?;
    let dir = open_folder_below(base, parent, false)?;
    let (file, meta) = open_regular_at(&dir, name).map_err(|e| refused_at(&dir, name, rel, e))?;
    read_bounded(file, meta.size, max)
}

/// Appends `bytes` to the existing regular file at `rel` below `base` (reached
/// without following a link; never a link, FIFO or device itself), in one write
/// in append mode: what another process appended meanwhile stays, before or
/// after it. A file that is not there is an error ([`io::ErrorKind::NotFound`]).
pub fn append_below(base: &Path, rel: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let (parent, name) = parent_and_name(rel)?;
    let dir = open_folder_below(base, parent, false)?;
    let mut file =
        (dir.open_file(name, OpenFor::Append)).map_err(|e| refused_at(&dir, name, rel, e))?;
    if crate::os::metadata_of_file(&file)?.kind != Kind::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a regular file", rel.display()),
        ));
    }
    file.write_all(bytes)
}

/// Reads at most `max` bytes of `file`, whose size was `size` when opened.
pub(crate) fn read_bounded(file: File, size: u64, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    if size > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {max} bytes"),
        ));
    }
    // One byte more than the file holds: the read that finds its end then needs
    // no room, where a full buffer was grown (and 28 MB copied) to make some.
    let mut bytes = Vec::with_capacity((size as usize).saturating_add(1));
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "grew while being read",
        ));
    }
    Ok(bytes)
}

/// Writes `bytes` to `base/rel` as one atomic replace ([`super::replace_at`],
/// flushed to disk), making the folders in between; never through a link (a link
/// on the way, or in the file's place, is refused).
pub fn write_below(base: &Path, rel: &Path, bytes: &[u8]) -> io::Result<FileStat> {
    use std::io::Write;
    write_below_with(base, rel, |file| file.write_all(bytes))
}

/// [`write_below`] with what `write` writes to the new file (see
/// [`super::replace_at_with`]).
pub fn write_below_with(
    base: &Path,
    rel: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<FileStat> {
    let (parent, name) = parent_and_name(rel)?;
    let dir = open_folder_below(base, parent, true)?;
    if dir.metadata(name).is_ok_and(|meta| meta.kind == Kind::Link) {
        return Err(planted_link(rel));
    }
    super::replace_at_with(&dir, name, super::Durability::Flushed, write)
}

/// What is at `rel` below `base` (reached without following a link), with its size
/// and time; `None` if nothing is, or it cannot be reached.
pub fn kind_below(base: &Path, rel: &str) -> Option<(Kind, FileStat)> {
    stat_below(base, rel).ok()
}

/// Every entry of the folder `rel` below `base` (reached without following a link),
/// hidden ones too, by name and kind, in no particular order; names that are not
/// UTF-8 are left out.
pub fn read_folder_below(base: &Path, rel: &str) -> io::Result<Vec<(String, Kind)>> {
    entries_of(&open_dir_below(base, rel)?)
}

/// Renames the file or folder `old` to `new` (both below `base`), making the
/// folders `new` goes into; both reached without following a link, and the rename
/// itself never follows one (a link moves as the link). It never replaces
/// anything: whatever is at `new` (a file another process put there since the move
/// was planned, a dangling link) makes it fail with `AlreadyExists`, both left as
/// they were. `renameat2(RENAME_NOREPLACE)` where the file system has it; a check
/// just before the rename otherwise.
pub fn rename_below(base: &Path, old: &Path, new: &Path) -> io::Result<()> {
    let (old_parent, old_name) = parent_and_name(old)?;
    let (new_parent, new_name) = parent_and_name(new)?;
    let from = open_folder_below(base, old_parent, false)?;
    let to = open_folder_below(base, new_parent, true)?;
    let said = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("{} -> {}: {e}", old.display(), new.display()),
        )
    };
    #[cfg(test)]
    tests::BEFORE_RENAME.with(|hook| {
        if let Some(hook) = hook.borrow_mut().take() {
            hook();
        }
    });
    rename_at_without_replacing(&from, old_name, &to, new_name).map_err(said)?;
    // The folders were reached without a link, but another process may have
    // moved one of them elsewhere (outside the project) since, putting a link or
    // another folder in its place: then the rename went with it. It is taken
    // back, and the move stops.
    let still_there = |dir: &Folder, rel: &Path| {
        let now = open_folder_below(base, rel, false).and_then(|d| d.own_metadata());
        let was = dir.own_metadata();
        matches!((now, was), (Ok(a), Ok(b)) if a.device == b.device && a.inode == b.inode)
    };
    if !still_there(&from, old_parent) || !still_there(&to, new_parent) {
        let undone = rename_at_without_replacing(&to, new_name, &from, old_name);
        let also = match undone {
            Ok(()) => "it was moved back".to_owned(),
            Err(e) => format!("moving it back failed too: {e}"),
        };
        return Err(said(io::Error::other(format!(
            "a folder on the way was moved or replaced by another program during the rename; {also}"
        ))));
    }
    Ok(())
}

/// Renames `old_name` in `from` to `new_name` in `to`, never replacing what is
/// there (`AlreadyExists`; see [`Folder::rename_no_replace`]).
fn rename_at_without_replacing(
    from: &Folder,
    old_name: &OsStr,
    to: &Folder,
    new_name: &OsStr,
) -> io::Result<()> {
    from.rename_no_replace(old_name, to, new_name)
}

/// Removes the file `rel` below `base` (a link is removed as the link), or with
/// `folder` the empty folder `rel`.
pub fn remove_below(base: &Path, rel: &Path, folder: bool) -> io::Result<()> {
    let (parent, name) = parent_and_name(rel)?;
    let dir = open_folder_below(base, parent, false)?;
    if folder {
        dir.remove_folder(name)
    } else {
        dir.remove_file(name)
    }
}

/// Whether what exists of the path `rel` below `base` goes through a symbolic link
/// (the last name included): the one path policy never follows one, so such a
/// path is not the project's, wherever the link points.
pub fn goes_through_link(base: &Path, rel: &Path) -> bool {
    let Ok(mut dir) = Folder::open_root(base) else {
        return false;
    };
    let mut parts = rel.components().peekable();
    while let Some(Component::Normal(name)) = parts.next() {
        match dir.metadata(name) {
            Ok(meta) if meta.kind == Kind::Link => return true,
            Ok(_) if parts.peek().is_some() => match dir.open_folder(name) {
                Ok(next) => dir = next,
                Err(_) => return false,
            },
            _ => return false,
        }
    }
    false
}

/// Makes the folder `base/rel` and those in between (see [`open_folder_below`]);
/// returns its path.
pub fn create_dir_below(base: &Path, rel: &Path) -> io::Result<PathBuf> {
    open_folder_below(base, rel, true)?;
    Ok(base.join(rel))
}

/// Reads a file only if it is a regular file (not a link, a FIFO or a device, which
/// could hang or never end) of at most `max` bytes: for Kiln's own files outside a
/// project's tree (a path given whole), and files a project names that a hostile
/// project could replace.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = crate::os::open_path_for_reading(path, false)?;
    let meta = crate::os::metadata_of_file(&file)?;
    if meta.kind != Kind::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    read_bounded(file, meta.size, max)
}

/// Reads a file a user named as a command's argument (a link there is followed:
/// the user chose it), of at most `max` bytes: only a regular file, opened
/// without waiting, so a FIFO or a device named by mistake (or by a hostile
/// script) is an error instead of a command that never ends. `/dev/null`, what
/// git passes for a file one side lacks, reads as empty.
pub fn read_argument(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    if path == Path::new("/dev/null") {
        return Ok(Vec::new());
    }
    let not_a_file = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a folder): Kiln reads only files",
        )
    };
    let file = match crate::os::open_path_for_reading(path, true) {
        Ok(file) => file,
        // Some systems refuse to open a folder for reading at all.
        Err(_) if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) => return Err(not_a_file()),
        Err(e) => return Err(e),
    };
    let meta = crate::os::metadata_of_file(&file)?;
    if meta.kind != Kind::File {
        return Err(not_a_file());
    }
    read_bounded(file, meta.size, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{write_atomic, write_atomic_unsynced};

    #[test]
    fn open_below_reads_plain_paths_and_refuses_links_and_climbing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("levels/deep")).unwrap();
        std::fs::write(root.join("levels/deep/a.level"), "inside").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        crate::os::symlink(dir.path(), root.join("out")).unwrap();
        crate::os::symlink(dir.path().join("secret"), root.join("s.level")).unwrap();
        // A FIFO where a file was: refused at once, not waited on.
        crate::os::make_fifo(&root.join("levels/fifo.level")).unwrap();
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

    /// A rename never replaces: not a file, not a folder, not a dangling link;
    /// both sides stay as they were. Onto a free name it moves.
    #[test]
    fn a_rename_never_replaces_what_is_at_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::write(base.join("a.txt"), "a").unwrap();
        std::fs::write(base.join("taken.txt"), "taken").unwrap();
        std::fs::create_dir(base.join("folder")).unwrap();
        crate::os::symlink(base.join("nowhere"), base.join("dangling")).unwrap();
        for target in ["taken.txt", "folder", "dangling"] {
            let e = rename_below(base, Path::new("a.txt"), Path::new(target)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{target}: {e}");
            assert_eq!(std::fs::read_to_string(base.join("a.txt")).unwrap(), "a");
        }
        assert_eq!(
            std::fs::read_to_string(base.join("taken.txt")).unwrap(),
            "taken"
        );
        assert!(
            std::fs::symlink_metadata(base.join("dangling"))
                .unwrap()
                .is_symlink()
        );
        rename_below(base, Path::new("a.txt"), Path::new("new/b.txt")).unwrap();
        assert_eq!(
            std::fs::read_to_string(base.join("new/b.txt")).unwrap(),
            "a"
        );
        assert!(!base.join("a.txt").exists());
    }

    thread_local! {
        /// Run once between the folders' opening and the rename: another program.
        pub(super) static BEFORE_RENAME: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
            std::cell::RefCell::new(None);
    }

    /// Another program moves the target folder out of the project while a rename
    /// into it runs, leaving a link to it in its place: the rename is taken back,
    /// nothing is left in the folder outside, and the error says what happened.
    #[test]
    fn a_folder_moved_away_during_a_rename_takes_the_rename_back() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let base = dir.path().to_owned();
        std::fs::create_dir(base.join("levels")).unwrap();
        std::fs::write(base.join("a.txt"), "a").unwrap();
        let (b, o) = (base.clone(), outside.path().to_owned());
        BEFORE_RENAME.with(|h| {
            *h.borrow_mut() = Some(Box::new(move || {
                std::fs::rename(b.join("levels"), o.join("levels")).unwrap();
                crate::os::symlink(o.join("levels"), b.join("levels")).unwrap();
            }))
        });
        let e = rename_below(&base, Path::new("a.txt"), Path::new("levels/a.txt")).unwrap_err();
        assert!(e.to_string().contains("moved back"), "{e}");
        assert_eq!(std::fs::read_to_string(base.join("a.txt")).unwrap(), "a");
        assert_eq!(
            std::fs::read_dir(outside.path().join("levels"))
                .unwrap()
                .count(),
            0
        );
    }

    /// A command's argument: a link is followed, a FIFO, a device or a folder is
    /// refused at once (never waited on), `/dev/null` is empty.
    #[test]
    fn an_argument_is_read_only_if_it_is_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.level");
        std::fs::write(&file, "level").unwrap();
        crate::os::symlink(&file, dir.path().join("link.level")).unwrap();
        assert_eq!(read_argument(&file, 100).unwrap(), b"level");
        assert_eq!(
            read_argument(&dir.path().join("link.level"), 100).unwrap(),
            b"level"
        );
        assert!(
            read_argument(Path::new("/dev/null"), 100)
                .unwrap()
                .is_empty()
        );
        assert!(read_argument(&file, 3).is_err(), "larger than allowed");
        let fifo = dir.path().join("fifo.level");
        crate::os::make_fifo(&fifo).unwrap();
        let started = std::time::Instant::now();
        for refused in [fifo.as_path(), dir.path(), Path::new("/dev/zero")] {
            let e = read_argument(refused, 100).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn two_makers_of_one_folder_at_once_both_succeed() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let base = dir.path();
            let results: Vec<io::Result<PathBuf>> = std::thread::scope(|s| {
                let makers: Vec<_> = (0..4)
                    .map(|_| s.spawn(|| create_dir_below(base, Path::new("a/b/c/d"))))
                    .collect();
                makers.into_iter().map(|m| m.join().unwrap()).collect()
            });
            for made in results {
                assert_eq!(made.unwrap(), base.join("a/b/c/d"));
            }
        }
    }

    #[test]
    fn writes_below_a_folder_never_follow_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write_below(dir.path(), Path::new("build/levels/a.bin"), b"blob").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("build/levels/a.bin")).unwrap(),
            b"blob"
        );
        #[cfg(unix)]
        {
            crate::os::symlink(outside.path(), dir.path().join("linked")).unwrap();
            let err = write_below(dir.path(), Path::new("linked/x.bin"), b"no").unwrap_err();
            assert!(err.to_string().contains("is a symbolic link"), "{err}");
            assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        }
        assert!(write_below(dir.path(), Path::new("../x.bin"), b"no").is_err());
    }

    #[test]
    fn write_atomic_replaces_whole_files_and_leaves_no_temporary() {
        for write in [write_atomic, write_atomic_unsynced] {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("levels/a.level");
            write(&target, b"first").unwrap();
            write(&target, b"second").unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), b"second");
            let names: Vec<_> = std::fs::read_dir(target.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, vec!["a.level"]);
        }
    }
}
