//! Where Kiln meets the operating system for what is not a project file below a
//! root (that is [`crate::fs`]): file permissions, a file's identity, positioned
//! reads and writes, links made on purpose, and the local socket a running editor
//! or `kiln watch` answers on. Each function says what it guarantees, where that guarantee comes
//! from on Unix, and what it does elsewhere; the callers never reach for
//! `std::os::unix` themselves.
//!
//! This is the first part of the one layer issue 49 asks for (see
//! `docs/development.md`): the calls below a project root (`crate::fs::below`),
//! and the dependency checker's parallel walk (`dependency_checker::fs::walk`)
//! still use `rustix` directly, and there is no portable implementation yet (the
//! socket's would be a named pipe, through a crate such as `interprocess`).

use std::fs::File;
use std::io;
use std::path::Path;

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

/// A connection to a running editor or `kiln watch` on this machine (a Unix
/// socket).
#[cfg(unix)]
pub type LocalStream = std::os::unix::net::UnixStream;
/// A running editor's or `kiln watch`'s end of [`LocalStream`]s.
#[cfg(unix)]
pub type LocalListener = std::os::unix::net::UnixListener;

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

/// Listens on a new socket at `path`, which only the user running Kiln may
/// connect to (`0o600`); with what identifies the socket's own entry (its inode),
/// to tell later whether the name is still this socket's ([`is_entry`]).
#[cfg(unix)]
pub fn listen_private(path: &Path) -> io::Result<(LocalListener, u64)> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let listener = LocalListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    let inode = std::fs::symlink_metadata(path)?.ino();
    Ok((listener, inode))
}

/// Whether the entry at `path` (not what a link there points at) is the one
/// [`listen_private`] made, by its inode.
#[cfg(unix)]
pub fn is_entry(path: &Path, inode: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.ino() == inode)
}

/// Whether the process at the other end of `stream` runs as the user running
/// Kiln (the kernel's peer credentials, which the peer cannot forge).
#[cfg(unix)]
pub fn peer_is_me(stream: &LocalStream) -> bool {
    rustix::net::sockopt::socket_peercred(stream)
        .is_ok_and(|cred| cred.uid == rustix::process::getuid())
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
