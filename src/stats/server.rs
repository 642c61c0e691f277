//! The thread that hands the statistics memfd to readers.
//!
//! [`start`] binds the abstract UNIX stream socket `"\0AISSTATS%08x"` (this pid in eight
//! lowercase hex digits, address length the full `sizeof(sockaddr_un)`, so the name is
//! zero-padded to 108 bytes and clients must use the same length) and calls `listen(64)`
//! before it returns, so a client that connects afterwards is served and every descriptor
//! of the server (socket, eventfd; the memfd is the block's own) exists from then on. The
//! thread `hipfile-stats` then polls {socket, eventfd}. Each accepted connection receives the
//! memfd through `SCM_RIGHTS` with a 4-byte `int` payload of 1, then is closed. Writing the
//! eventfd ([`shutdown`]) stops the thread. Any socket failure is logged once and ends the
//! server; statistics are still recorded. Process exit never waits for the thread (it is
//! killed with the process).
//!
//! `fork()` is unsupported: a child inherits the listening socket but not the thread, so the
//! `atfork` child handler closes the child's copy (the name must go away when the parent
//! exits), and [`shutdown`] in a child does nothing (the eventfd is the parent's).
//!
//! Lock order: `SERVER` is taken only by [`start`] and [`shutdown`], never with another lock
//! and never on the recording path.

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::sys::socket;

/// Name of the server thread.
pub const THREAD_NAME: &str = "hipfile-stats";
/// `listen` backlog.
const BACKLOG: c_int = 64;
/// The payload sent with the descriptor.
const PAYLOAD: c_int = 1;

struct Server {
    /// The process that started the server.
    owner: u32,
    /// Written to stop the thread (shared with it).
    wake: Arc<OwnedFd>,
    thread: Option<JoinHandle<()>>,
}

static SERVER: Mutex<Option<Server>> = Mutex::new(None);

/// The listening socket, for the `fork()` child handler (`-1` when none).
static LISTEN_FD: AtomicI32 = AtomicI32::new(-1);

/// The socket address of process `pid`'s server; its length is always
/// `size_of::<sockaddr_un>()`.
pub fn socket_address(pid: u32) -> libc::sockaddr_un {
    socket::abstract_address(&format!("AISSTATS{pid:08x}"))
}

/// Length to pass to `bind`/`connect` with [`socket_address`].
#[cfg(any(test, feature = "test-internals"))]
pub const SOCKET_ADDRESS_LEN: libc::socklen_t = socket::ADDRESS_LEN;

/// Start serving `memfd` (called once, when the block is created). The socket is bound and
/// listening when this returns, so every descriptor the server uses exists by then (the
/// memfd is shared with the block, not duplicated: three descriptors in all).
pub(crate) fn start(memfd: Arc<OwnedFd>) {
    let mut guard = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_some() {
        return;
    }
    let owner = std::process::id();
    let (sock, wake) = match listen(owner).and_then(|sock| Ok((sock, socket::eventfd()?))) {
        Ok(fds) => fds,
        Err(e) => {
            tracing::warn!(
                target: "hipfile",
                "statistics are recorded but not served to other processes: {e}"
            );
            return;
        }
    };
    let wake = Arc::new(wake);
    let wake_for_thread = Arc::clone(&wake);
    LISTEN_FD.store(sock.as_raw_fd(), Ordering::Relaxed);
    let spawned = std::thread::Builder::new()
        .name(THREAD_NAME.into())
        .spawn(move || serve(sock, memfd, wake_for_thread));
    match spawned {
        Ok(thread) => {
            *guard = Some(Server {
                owner,
                wake,
                thread: Some(thread),
            })
        }
        Err(e) => {
            // The closure, and the socket with it, is gone.
            LISTEN_FD.store(-1, Ordering::Relaxed);
            tracing::warn!(
                target: "hipfile",
                "statistics are recorded but not served to other processes (thread: {e})"
            )
        }
    }
}

/// The listening socket of process `owner`.
fn listen(owner: u32) -> io::Result<OwnedFd> {
    socket::listen(
        &socket_address(owner),
        &format!("AISSTATS{owner:08x}"),
        BACKLOG,
    )
}

/// Stop the server thread and wait for it. Idempotent; the server is not restarted (the
/// statistics keep being recorded). Does nothing in a `fork()`ed child.
pub fn shutdown() {
    let server = {
        let mut guard = SERVER.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(s) if s.owner == std::process::id() => guard.take(),
            _ => None,
        }
    };
    let Some(mut server) = server else { return };
    socket::eventfd_signal(server.wake.as_raw_fd());
    if let Some(t) = server.thread.take() {
        if t.thread().id() != std::thread::current().id() {
            let _ = t.join();
        }
    }
}

/// Whether the server thread was started and not shut down.
#[cfg(any(test, feature = "test-internals"))]
pub fn is_running() -> bool {
    SERVER
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .is_some_and(|s| s.owner == std::process::id())
}

/// The `fork()` child handler's part: close the child's copy of the listening socket. Only
/// an atomic swap and `close` (async-signal-safe); cannot panic.
pub(crate) fn after_fork_in_child() {
    let fd = LISTEN_FD.swap(-1, Ordering::Relaxed);
    if fd >= 0 {
        // The child's copy of the listening socket; the thread that owns it in the parent does
        // not exist in the child, so nothing else will close or use it here.
        socket::close_raw(fd);
    }
}

fn serve(sock: OwnedFd, memfd: Arc<OwnedFd>, wake: Arc<OwnedFd>) {
    // Locals drop before parameters: the number is unpublished before `sock` closes.
    let _published = Published;
    match serve_until_shutdown(&sock, &memfd, &wake) {
        Ok(()) => tracing::debug!(target: "hipfile", "statistics server stopped"),
        Err(e) => tracing::warn!(
            target: "hipfile",
            "statistics server stopped: {e}; statistics are still recorded but other processes cannot read them"
        ),
    }
}

/// Clears [`LISTEN_FD`] when the thread ends.
struct Published;

impl Drop for Published {
    fn drop(&mut self) {
        LISTEN_FD.store(-1, Ordering::Relaxed);
    }
}

fn serve_until_shutdown(sock: &OwnedFd, memfd: &OwnedFd, wake: &OwnedFd) -> io::Result<()> {
    loop {
        let revents = match socket::poll(
            [
                (sock.as_raw_fd(), libc::POLLIN),
                (wake.as_raw_fd(), libc::POLLIN),
            ],
            -1,
        ) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io::Error::new(e.kind(), format!("poll: {e}"))),
        };
        if revents[1] != 0 {
            return Ok(());
        }
        if revents[0] & (libc::POLLERR | libc::POLLNVAL | libc::POLLHUP) != 0 {
            return Err(io::Error::other("the listening socket failed"));
        }
        if revents[0] & libc::POLLIN != 0 {
            accept_all(sock, memfd);
        }
    }
}

/// Serve every pending connection.
fn accept_all(sock: &OwnedFd, memfd: &OwnedFd) {
    loop {
        let conn = match socket::accept(sock.as_raw_fd()) {
            Ok(conn) => conn,
            Err(e) => match e.raw_os_error() {
                Some(libc::EINTR) | Some(libc::ECONNABORTED) => continue,
                Some(libc::EAGAIN) => return,
                _ => {
                    // Out of descriptors or memory: back off instead of spinning on POLLIN.
                    tracing::debug!(target: "hipfile", "statistics server: accept: {e}");
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    return;
                }
            },
        };
        if let Err(e) = socket::send_fd(conn.as_raw_fd(), memfd.as_raw_fd(), PAYLOAD) {
            tracing::debug!(target: "hipfile", "statistics server: sending the memfd failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abstract_name_is_zero_padded() {
        let a = socket_address(0x1234);
        assert_eq!(a.sun_family, libc::AF_UNIX as libc::sa_family_t);
        assert_eq!(a.sun_path[0], 0);
        let name: Vec<u8> = a.sun_path[1..17].iter().map(|&c| c as u8).collect();
        assert_eq!(&name, b"AISSTATS00001234");
        assert!(a.sun_path[17..].iter().all(|&c| c == 0));
        assert_eq!(SOCKET_ADDRESS_LEN, 110);
        let b = socket_address(0xdeadbeef);
        let name: Vec<u8> = b.sun_path[1..17].iter().map(|&c| c as u8).collect();
        assert_eq!(&name, b"AISSTATSdeadbeef");
    }
}
