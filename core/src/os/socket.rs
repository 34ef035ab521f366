//! The local socket a running editor or `kiln watch` answers on, and its
//! clients (`kiln check`, `refs`, `deps`, `mv` asking instead of reading the
//! project again).
//!
//! Two implementations with one face, chosen as [`super::Folder`]'s is:
//!
//! - posix: the standard library's Unix socket; the file made for its user
//!   alone (`0o600`), the peer's user checked with the kernel's credentials
//!   (`SO_PEERCRED`), a question ended by shutting the writing half;
//! - portable: the `interprocess` crate's local socket (a Unix socket at the
//!   path on Unix, a named pipe on Windows), made with mode `0o600` from the
//!   start, the peer's user from `interprocess`'s credentials. Its streams cannot
//!   shut one half, so a question ends at its line break (the server reads one
//!   line), which is all the protocol needs.
//!
//! Both are tested by `app/tests/query_service.rs`, which `.ci/run` runs with
//! each.

use std::io::{self, Read, Write};
use std::path::Path;
use std::time::Duration;

#[cfg(all(unix, not(feature = "portable-os")))]
mod imp {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::net::{UnixListener, UnixStream};

    pub type Stream = UnixStream;

    pub fn connect(path: &Path) -> io::Result<Stream> {
        UnixStream::connect(path)
    }

    pub fn finish_writing(stream: &Stream) -> io::Result<()> {
        stream.shutdown(std::net::Shutdown::Write)
    }

    pub fn set_timeouts(
        stream: &Stream,
        read: Option<Option<Duration>>,
        write: Option<Option<Duration>>,
    ) -> io::Result<()> {
        if let Some(read) = read {
            stream.set_read_timeout(read)?;
        }
        if let Some(write) = write {
            stream.set_write_timeout(write)?;
        }
        Ok(())
    }

    pub fn peer_is_me(stream: &Stream) -> bool {
        rustix::net::sockopt::socket_peercred(stream)
            .is_ok_and(|cred| cred.uid == rustix::process::getuid())
    }

    pub struct Listener(UnixListener);

    pub fn listen(path: &Path) -> io::Result<(Listener, u64)> {
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        let inode = std::fs::symlink_metadata(path)?.ino();
        Ok((Listener(listener), inode))
    }

    impl Listener {
        pub fn accept(&self) -> io::Result<Stream> {
            self.0.accept().map(|(stream, _)| stream)
        }
    }
}

#[cfg(any(not(unix), feature = "portable-os"))]
mod imp {
    use super::*;
    use interprocess::local_socket::traits::{Listener as _, Stream as _, StreamCommon as _};
    use interprocess::local_socket::{GenericFilePath, ListenerOptions, ToFsName};

    pub type Stream = interprocess::local_socket::Stream;

    pub fn connect(path: &Path) -> io::Result<Stream> {
        Stream::connect(path.to_fs_name::<GenericFilePath>()?)
    }

    pub fn finish_writing(_: &Stream) -> io::Result<()> {
        // A named pipe has no half to shut; the question ends at its line break.
        Ok(())
    }

    pub fn set_timeouts(
        stream: &Stream,
        read: Option<Option<Duration>>,
        write: Option<Option<Duration>>,
    ) -> io::Result<()> {
        if let Some(read) = read {
            stream.set_recv_timeout(read)?;
        }
        if let Some(write) = write {
            stream.set_send_timeout(write)?;
        }
        Ok(())
    }

    pub fn peer_is_me(stream: &Stream) -> bool {
        #[cfg(unix)]
        {
            let me = rustix::process::getuid().as_raw();
            stream.peer_creds().is_ok_and(|c| c.euid() == Some(me))
        }
        #[cfg(not(unix))]
        {
            // Never built: a named pipe would need its access list checked.
            let _ = stream;
            false
        }
    }

    pub struct Listener(interprocess::local_socket::Listener);

    pub fn listen(path: &Path) -> io::Result<(Listener, u64)> {
        let options = ListenerOptions::new()
            .name(path.to_fs_name::<GenericFilePath>()?)
            // The server removes its own socket (and only its own) when it stops.
            .reclaim_name(false);
        #[cfg(unix)]
        let options = {
            use interprocess::os::unix::local_socket::ListenerOptionsExt;
            options.mode(0o600)
        };
        let listener = options.create_sync()?;
        let inode = super::super::identity_of_entry(path).unwrap_or(0);
        Ok((Listener(listener), inode))
    }

    impl Listener {
        pub fn accept(&self) -> io::Result<Stream> {
            self.0.accept()
        }
    }
}

/// A connection to a running editor or `kiln watch` on this machine.
#[derive(Debug)]
pub struct LocalStream(imp::Stream);

impl LocalStream {
    /// Connects to the server listening at `path`.
    pub fn connect(path: impl AsRef<Path>) -> io::Result<LocalStream> {
        imp::connect(path.as_ref()).map(LocalStream)
    }

    /// How long a read may wait (`None`: for ever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        imp::set_timeouts(&self.0, Some(timeout), None)
    }

    /// How long a write may wait (`None`: for ever).
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        imp::set_timeouts(&self.0, None, Some(timeout))
    }

    /// Says that nothing more will be written (the server may read to the end);
    /// where a half cannot be shut, the question must end at a line break.
    pub fn finish_writing(&self) -> io::Result<()> {
        imp::finish_writing(&self.0)
    }

    /// Whether the process at the other end runs as the user running Kiln (the
    /// kernel's peer credentials, which the peer cannot forge).
    pub fn peer_is_me(&self) -> bool {
        imp::peer_is_me(&self.0)
    }
}

impl Read for LocalStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Read for &LocalStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&self.0).read(buf)
    }
}

impl Write for LocalStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Write for &LocalStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&self.0).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&self.0).flush()
    }
}

/// A running editor's or `kiln watch`'s end of [`LocalStream`]s.
#[derive(Debug)]
pub struct LocalListener(imp::Listener);

impl std::fmt::Debug for imp::Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

impl LocalListener {
    /// Each connection as it comes (one that failed to be accepted is passed
    /// by), for as long as the listener lives.
    pub fn incoming(&self) -> impl Iterator<Item = LocalStream> + '_ {
        std::iter::repeat_with(|| self.0.accept())
            .filter_map(Result::ok)
            .map(LocalStream)
    }
}

/// Listens on a new socket at `path`, which only the user running Kiln may
/// connect to (`0o600` on Unix); with what identifies the socket's own entry (its
/// inode), to tell later whether the name is still this socket's
/// ([`super::is_entry`]).
pub fn listen_private(path: &Path) -> io::Result<(LocalListener, u64)> {
    let (listener, inode) = imp::listen(path)?;
    Ok((LocalListener(listener), inode))
}
