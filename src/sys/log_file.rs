//! Opening a log file to append to, safely even in a directory other users can write.
//!
//! A process that appends to a path another user can prepare must not be turned into a tool
//! that writes where that user cannot: the final component is never followed if it is a
//! symbolic link (`O_NOFOLLOW`), a new file is created readable by its owner only (0600), the
//! descriptor is close-on-exec, and opening never blocks (`O_NONBLOCK`: a FIFO without a reader
//! fails instead of hanging the process; cleared again once the file is accepted). What was
//! opened must be a regular file owned by our effective user with one link (a hard link
//! planted to another file has two), or a character device (`/dev/null`, a terminal).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Open `path` for appending, creating it (mode 0600) if it does not exist. The error says
/// why the file was refused.
pub(crate) fn open_append(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                io::Error::new(e.kind(), "it is a symbolic link, which is never followed")
            }
            Some(libc::ENXIO) => {
                io::Error::new(e.kind(), "it is a FIFO without a reader, or a socket")
            }
            _ => e,
        })?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if kind.is_file() {
        let euid = super::secure::effective_uid();
        if meta.uid() != euid {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "it belongs to user {} (this process runs as user {euid})",
                    meta.uid()
                ),
            ));
        }
        if meta.nlink() != 1 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("it has {} hard links", meta.nlink()),
            ));
        }
    } else if !kind.is_char_device() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is neither a regular file nor a character device",
        ));
    }
    clear_nonblocking(&file)?;
    Ok(file)
}

/// Writes to the accepted file block again (a terminal may apply flow control).
fn clear_nonblocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL and F_SETFL take integer arguments on our own descriptor.
    let rc = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            flags
        } else {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK)
        }
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("hipfile-logfile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }

    #[test]
    fn creates_private_and_appends() {
        let d = dir("new");
        let p = d.join("log");
        open_append(&p).unwrap().write_all(b"a\n").unwrap();
        open_append(&p).unwrap().write_all(b"b\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"a\nb\n");
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let fd = open_append(&p).unwrap();
        // SAFETY: F_GETFD/F_GETFL on our own descriptor.
        let (fdflags, flflags) = unsafe {
            (
                libc::fcntl(fd.as_raw_fd(), libc::F_GETFD),
                libc::fcntl(fd.as_raw_fd(), libc::F_GETFL),
            )
        };
        assert_eq!(fdflags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        assert_eq!(flflags & libc::O_NONBLOCK, 0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn refuses_links_fifos_and_directories() {
        let d = dir("refuse");
        let victim = d.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let sym = d.join("sym");
        std::os::unix::fs::symlink(&victim, &sym).unwrap();
        let e = open_append(&sym).unwrap_err();
        assert_eq!(e.raw_os_error(), None);
        assert_eq!(
            e.to_string(),
            "it is a symbolic link, which is never followed"
        );
        let hard = d.join("hard");
        std::fs::hard_link(&victim, &hard).unwrap();
        assert_eq!(
            open_append(&hard).unwrap_err().to_string(),
            "it has 2 hard links"
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            open_append(&fifo).unwrap_err().to_string(),
            "it is a FIFO without a reader, or a socket"
        );
        assert!(open_append(&d).is_err(), "a directory");
        // A character device is accepted.
        open_append(Path::new("/dev/null"))
            .unwrap()
            .write_all(b"x")
            .unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }
}
