//! The one place where Kiln meets the operating system. Nothing else in Kiln
//! uses `rustix`, `libc` or `std::os::unix`: every call Kiln makes for a
//! project's files, and for talking to a running editor or `kiln watch`, goes
//! through what is here (the project-file rules on top of it are in
//! [`crate::fs`]).
//!
//! # Two implementations
//!
//! - `posix.rs` (the default): `rustix` on Linux and other Unix systems. Each
//!   guarantee below is one system call.
//! - `portable.rs` (cargo feature `portable-os`): `cap-std` and `cap-fs-ext`,
//!   kept crates that build for Windows, macOS and Linux. `.ci/run` runs the whole
//!   test suite a second time with it, here on Linux, the planted-link, FIFO and
//!   concurrency tests included. Nothing claims a Windows or macOS build that was
//!   not made; `docs/development.md` says what such builds still lack.
//!
//! # The contract
//!
//! A [`Folder`] is an open folder. Each of its methods takes one *name* in it:
//! not empty, not `.` or `..`, without a separator (anything else is refused with
//! [`io::ErrorKind::InvalidInput`] before the system is asked). So a path below a
//! root is reached name by name, each opened relative to the one before, and
//!
//! | guarantee | posix | portable |
//! |---|---|---|
//! | a name is never resolved through a symbolic link: a link is opened, stat-ed, renamed or removed as the link, and a folder or file open through one fails | `O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW` on `*at` calls | `cap-std` resolves beneath the folder; `FollowSymlinks::No`, `open_dir_nofollow`, `symlink_metadata` |
//! | opening never waits: a FIFO or device put where a file was opens at once, and [`Metadata::kind`] of the open file tells it is not a [`Kind::File`] | `O_NONBLOCK` | `nonblock(true)` (a no-op on Windows, which has no FIFOs in folders) |
//! | [`OpenFor::CreateNew`] makes a new file or fails: never opens what is there, a link included | `O_CREAT \| O_EXCL` | `create_new` |
//! | [`Folder::rename`] replaces the target atomically: a reader sees the old file or the new | `renameat` | `Dir::rename` (`MoveFileEx` with replace on Windows) |
//! | [`Folder::rename_no_replace`] never replaces: whatever is at the target makes it fail with `AlreadyExists` | `renameat2(RENAME_NOREPLACE)`; a check just before the rename on file systems without it | **a check just before the rename**: a name another program makes between the two is replaced |
//! | [`Folder::sync`] makes the folder's entries durable | `fsync` on the folder | the same on Unix; nothing on Windows, where renames are journaled |
//! | [`Metadata`] gives kind, size, time, and (device, inode, links) to tell one file from another | `fstatat` | `cap-fs-ext`'s `MetadataExt` (volume serial and file index on Windows) |
//!
//! Locking is `std::fs::File::lock` (`flock` on Linux, `LockFileEx` on Windows)
//! in both, and watching is `notify`'s. The local socket ([`LocalStream`],
//! [`listen_private`]) has two implementations too (`socket.rs`): the standard
//! library's Unix socket, and `interprocess`'s local socket in the portable
//! build; its contract is there. The rest (permissions, identity of a path,
//! positioned reads, links planted by tests, whether a process runs) is chosen by
//! platform, not by feature: each function says what it does where.
//!
//! # How it is tested
//!
//! Each guarantee has a test in this crate (`os::tests`, `fs::below`'s tests) and
//! is relied on by the suites of the crates above: planted links
//! (`app/tests/planted_links.rs`), FIFOs in a project, two commands at once, a
//! folder swapped mid-move. All of them run against both implementations.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::Path;

#[cfg(all(unix, not(feature = "portable-os")))]
mod posix;
#[cfg(all(unix, not(feature = "portable-os")))]
pub use posix::{Folder, metadata_of_file, open_path_for_reading};

#[cfg(any(not(unix), feature = "portable-os"))]
mod portable;
#[cfg(any(not(unix), feature = "portable-os"))]
pub use portable::{Folder, metadata_of_file, open_path_for_reading};

mod socket;
pub use socket::{LocalListener, LocalStream, listen_private};

impl AsRef<Folder> for Folder {
    fn as_ref(&self) -> &Folder {
        self
    }
}

/// What a name in a folder is (a link is a link, never what it points at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link.
    Link,
    /// Anything else (a FIFO, a device, a socket).
    Other,
}

/// What the system says of a name or an open file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metadata {
    /// What it is.
    pub kind: Kind,
    /// Size in bytes.
    pub size: u64,
    /// Modification time: seconds and nanoseconds since the Unix epoch.
    pub modified: (i64, i64),
    /// The device it is on.
    pub device: u64,
    /// Its number on that device: (device, inode) tells one file from another
    /// whatever its name.
    pub inode: u64,
    /// How many names it has (hard links).
    pub links: u64,
}

/// What [`Folder::open_file`] opens a file for. Every mode opens without
/// following a link in the name and without waiting on a FIFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenFor {
    /// Reading.
    Read,
    /// Reading and writing, made empty (readable and writable by all, less the
    /// umask) if it is not there.
    ReadWriteCreate,
    /// Appending to an existing file: each write lands at its end, after what
    /// another process appended.
    Append,
    /// Writing a new file (as [`OpenFor::ReadWriteCreate`] makes it); anything at
    /// the name, a link included, makes it fail with `AlreadyExists`.
    CreateNew,
}

/// `name` is one name in a folder: not empty, not `.` or `..`, no separator.
fn one_name(name: &OsStr) -> io::Result<()> {
    let bytes = name.as_encoded_bytes();
    let plain = !bytes.is_empty()
        && bytes != b"."
        && bytes != b".."
        && !bytes.contains(&b'/')
        && !(cfg!(windows) && bytes.contains(&b'\\'));
    if plain {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not one name in a folder", name.display()),
        ))
    }
}

/// The folder (`.` for a bare name) and the last name of `path`, a path given
/// whole; an error if it names no file (it ends in `..`, or is a root).
pub fn folder_and_name_of(path: &Path) -> io::Result<(&Path, &OsStr)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((parent, name))
}

/// Whether process `pid` is running (a process of another user counts: it may not
/// be signalled, but it is there): `kill(pid, 0)` on Unix. Elsewhere a process is
/// taken to be running, so a temporary file it may be writing is never removed
/// (a leftover stays until its name is written again).
pub fn process_is_running(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Makes `path` runnable by everyone and writable by its owner (`0o755`): what a
/// git hook and a plugin's library need. Elsewhere than Unix a file's being
/// runnable is not a permission: nothing to do.
pub fn set_executable(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Whether `path` is a regular file anyone may run (any execute bit on Unix; any
/// regular file elsewhere).
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// Creates `path`, which must not exist (an existing file, or a link planted at
/// the name, is an error: nothing is followed or overwritten), readable and
/// writable by the user alone (`0o600` on Unix, from the moment it exists: a key
/// is never readable by others even briefly). Elsewhere the file gets the
/// folder's default access, which on Windows is the user's profile.
pub fn create_new_private(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// What tells one file or folder from another whatever its name: (device, inode)
/// on Unix, so that a folder renamed away, or deleted and made again, is seen to
/// be another. `None` where it cannot be read, or elsewhere than Unix.
pub fn identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Reads into `buf` from `offset` of `file`, without moving its cursor where the
/// platform allows (`pread` on Unix); how many bytes were read.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
}

/// Writes `buf` at `offset` of `file` (`pwrite` on Unix); how many bytes were
/// written.
pub fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_write(file, buf, offset)
    }
}

/// Whether `path` is itself a local socket (a link to one is not).
#[cfg(unix)]
pub fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// Whether `path` itself (not what a link there points at) belongs to the user
/// running Kiln: a socket anyone else made is never asked.
#[cfg(unix)]
pub fn owned_by_me(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.uid() == rustix::process::getuid().as_raw())
}

/// Whether the entry at `path` (not what a link there points at) is the one
/// [`listen_private`] made, by its inode.
pub fn is_entry(path: &Path, inode: u64) -> bool {
    identity_of_entry(path) == Some(inode)
}

/// The inode of the entry at `path` itself (a link's own): Unix only.
fn identity_of_entry(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).ok().map(|m| m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Makes `link` a symbolic link to `target`: what the tests plant to check that
/// Kiln never follows one. On Windows, a link to a file (links to folders need
/// other rights there).
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::symlink_file(target, link)
    }
}

/// The signal that ended a child process (`SIGABRT` is 6), if one did: Unix
/// only; elsewhere `None`.
pub fn ended_by_signal(status: &std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(status)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// Makes a FIFO at `path`: what the tests plant where a file was, to check that
/// Kiln neither waits on one nor reads it. Unix only (Windows has no FIFOs in
/// folders).
#[cfg(unix)]
pub fn make_fifo(path: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, FileType, Mode};
    Ok(rustix::fs::mknodat(
        CWD,
        path,
        FileType::Fifo,
        Mode::RUSR | Mode::WUSR,
        0,
    )?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_private_file_is_made_new_for_its_owner_alone_and_never_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key");
        create_new_private(&key).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&key).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(
            create_new_private(&key).is_err(),
            "an existing file is kept"
        );
        let outside = dir.path().join("outside");
        symlink(&outside, dir.path().join("planted")).unwrap();
        assert!(create_new_private(&dir.path().join("planted")).is_err());
        assert!(!outside.exists(), "nothing was made through the link");
    }

    /// The table of the module's contract, against whichever implementation this
    /// build has (`.ci/run` runs it with both).
    #[test]
    fn a_folder_keeps_the_contract() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "outside").unwrap();
        let root = Folder::open_path(dir.path()).unwrap();
        let name = |n: &str| std::ffi::OsString::from(n);
        // One name at a time.
        for bad in ["", ".", "..", "a/b", "../secret"] {
            let e = root.metadata(&name(bad)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        // Links are never gone through, and are seen as links.
        symlink(outside.path(), dir.path().join("out")).unwrap();
        symlink(outside.path().join("secret"), dir.path().join("s")).unwrap();
        assert!(root.open_folder(&name("out")).is_err());
        assert!(root.open_file(&name("s"), OpenFor::Read).is_err());
        assert!(root.open_file(&name("s"), OpenFor::Append).is_err());
        assert_eq!(root.metadata(&name("s")).unwrap().kind, Kind::Link);
        let made_new = root.open_file(&name("s"), OpenFor::CreateNew).unwrap_err();
        assert_eq!(made_new.kind(), io::ErrorKind::AlreadyExists);
        root.remove_file(&name("s")).unwrap();
        assert!(
            outside.path().join("secret").exists(),
            "the link went, not its target"
        );
        // A FIFO opens at once and says what it is.
        #[cfg(unix)]
        {
            make_fifo(&dir.path().join("fifo")).unwrap();
            let fifo = root.open_file(&name("fifo"), OpenFor::Read).unwrap();
            assert_eq!(metadata_of_file(&fifo).unwrap().kind, Kind::Other);
        }
        // Made, written, renamed without replacing, then with.
        root.make_folder(&name("levels")).unwrap();
        let levels = root.open_folder(&name("levels")).unwrap();
        let mut file = levels.open_file(&name("a"), OpenFor::CreateNew).unwrap();
        io::Write::write_all(&mut file, b"aaa").unwrap();
        let meta = metadata_of_file(&file).unwrap();
        assert_eq!((meta.kind, meta.size, meta.links), (Kind::File, 3, 1));
        assert_eq!(levels.metadata(&name("a")).unwrap().inode, meta.inode);
        std::fs::write(dir.path().join("b"), "b").unwrap();
        let e = levels
            .rename_no_replace(&name("a"), &root, &name("b"))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        levels.rename(&name("a"), &root, &name("b")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("b")).unwrap(), b"aaa");
        root.sync().unwrap();
        let mut entries = root.entries().unwrap();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let expected: Vec<(std::ffi::OsString, Kind)> = [
            ("b", Kind::File),
            ("fifo", Kind::Other),
            ("levels", Kind::Folder),
            ("out", Kind::Link),
        ]
        .into_iter()
        .filter(|(n, _)| cfg!(unix) || *n != "fifo")
        .map(|(n, k)| (name(n), k))
        .collect();
        assert_eq!(entries, expected);
        root.remove_folder(&name("levels")).unwrap();
        assert!(root.metadata(&name("levels")).is_err());
        // The folder's own identity is the one its path names.
        let own = root.own_metadata().unwrap();
        assert_eq!(identity(dir.path()), Some((own.device, own.inode)));
    }

    /// Nothing in the workspace but this module calls the operating system
    /// directly, benchmarks included; only this crate depends on a crate that
    /// does. Integration tests (`tests/` folders) may: they play the other
    /// programs on the machine (a hostile socket, say).
    #[test]
    fn nothing_else_meets_the_operating_system() {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let workspace = crate_dir.parent().unwrap().to_owned();
        let here = crate_dir.join("src/os");
        let direct = [
            "rustix::",
            "std::os::unix",
            "std::os::fd",
            "std::os::windows",
            "libc::",
        ];
        let mut found = Vec::new();
        let mut folders = vec![workspace.clone()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap().flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                let kind = entry.file_type().unwrap();
                if kind.is_dir() {
                    let skipped = ["target", "tests"].contains(&name.as_str());
                    if !name.starts_with('.') && !skipped && path != here {
                        folders.push(path);
                    }
                } else if name.ends_with(".rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for call in direct.iter().filter(|c| text.contains(*c)) {
                        found.push(format!("{} uses {call}", path.display()));
                    }
                } else if name == "Cargo.toml" && path != workspace.join("Cargo.toml") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let own = path == crate_dir.join("Cargo.toml");
                    for dep in ["rustix", "libc", "cap-std", "cap-fs-ext", "nix"] {
                        let line = text.lines().any(|l| l.trim_start().starts_with(dep));
                        if line && !own {
                            found.push(format!("{} depends on {dep}", path.display()));
                        }
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "outside kiln_core::os:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn executable_and_identity() {
        let dir = tempfile::tempdir().unwrap();
        let hook = dir.path().join("hook");
        std::fs::write(&hook, "#!/bin/sh\n").unwrap();
        assert!(!is_executable(&hook));
        set_executable(&hook).unwrap();
        assert!(is_executable(&hook));
        let before = identity(dir.path()).unwrap();
        let moved = dir.path().with_extension("moved");
        std::fs::rename(dir.path(), &moved).unwrap();
        std::fs::create_dir(dir.path()).unwrap();
        assert_ne!(identity(dir.path()), Some(before), "another folder now");
        assert_eq!(identity(&moved), Some(before));
        std::fs::remove_dir_all(&moved).unwrap();
    }
}
