//! The thread that hands the statistics memfd to readers.
//!
//! [`start`] binds the abstract UNIX stream socket `"\0AISSTATS%08x"` (this pid in eight
//! lowercase hex digits, address length the full `sizeof(sockaddr_un)`, so the name is
//! zero-padded to 108 bytes and clients must use the same length) and calls `listen(64)`
//! before it returns, so a client that connects afterwards is served and every descriptor
//! of the server (socket, eventfd; the memfd is the block's own) exists from then on. The
//! thread `hipfile-stats` then polls {socket, eventfd}. Each accepted connection whose peer
//! may read this process's statistics ([`may_read`], from the peer's `SO_PEERCRED`: this
//! process, root, or the same user and group while this process is dumpable) receives the
//! memfd through `SCM_RIGHTS` with a 4-byte `int` payload of 1, then is closed; any other is
//! closed without a descriptor (one line at info level, later ones at debug level). Writing
//! the eventfd ([`shutdown`]) stops the thread. Any socket failure is logged once and ends the
//! server; statistics are still recorded. A name already bound by another process (anyone can
//! bind an abstract name first) is a warning naming that process. Process exit never waits for
//! the thread (it is killed with the process).
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
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::sys::secure::{self, Credentials};
use crate::sys::socket::{self, PeerCredentials};

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
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
            tracing::warn!(
                target: "hipfile",
                "statistics are recorded but not served to other processes: the socket name AISSTATS{owner:08x} is taken by {}",
                holder(owner)
            );
            return;
        }
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

/// Who holds our socket name (anyone can bind an abstract name first): a process, named by
/// the credentials it listened with.
fn holder(owner: u32) -> String {
    match socket::listener_credentials(&socket_address(owner)) {
        Ok(c) if c.pid == 0 => format!(
            "a process outside this process's PID namespace (user {})",
            c.uid
        ),
        Ok(c) => format!("process {} (user {})", c.pid, c.uid),
        Err(e) => format!("a socket that does not accept connections ({e})"),
    }
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
        let peer = match socket::peer_credentials(conn.as_raw_fd()) {
            Ok(peer) => peer,
            Err(e) => {
                tracing::debug!(target: "hipfile", "statistics server: {e}; connection closed");
                continue;
            }
        };
        if let Err(why) = may_read(&peer, std::process::id(), &secure::own_credentials()) {
            // Closed without a descriptor. Said once at info level (a user trying), then at
            // debug level only: connections are free to make, log lines must not be.
            let first = !REFUSAL_LOGGED.swap(true, Ordering::Relaxed);
            if first {
                tracing::info!(target: "hipfile", "statistics refused to process {} (user {}): {why}", peer.pid, peer.uid);
            } else {
                tracing::debug!(target: "hipfile", "statistics refused to process {} (user {}): {why}", peer.pid, peer.uid);
            }
            continue;
        }
        if let Err(e) = socket::send_fd(conn.as_raw_fd(), memfd.as_raw_fd(), PAYLOAD) {
            tracing::debug!(target: "hipfile", "statistics server: sending the memfd failed: {e}");
        }
    }
}

/// Whether a refused reader was logged at info level already.
static REFUSAL_LOGGED: AtomicBool = AtomicBool::new(false);

/// Whether the process `peer` may read the statistics of this process (`own_pid`, `own`);
/// otherwise why not.
///
/// The rule is the kernel's for another process's `/proc/PID/io` (a ptrace "read" check),
/// with root standing for `CAP_SYS_PTRACE` (a peer's capabilities cannot be learnt from its
/// socket): this process itself; any process of user 0; or, while this process is dumpable,
/// a process whose effective user and group equal every user id and group id of this one
/// (real, effective, saved). A set-user-ID or set-group-ID program, or one that changed its
/// credentials, is not dumpable: only root reads it. The peer's ids are the effective ones it
/// had when it connected.
pub(crate) fn may_read(
    peer: &PeerCredentials,
    own_pid: u32,
    own: &Credentials,
) -> Result<(), &'static str> {
    if u32::try_from(peer.pid).is_ok_and(|p| p == own_pid) || peer.uid == 0 {
        return Ok(());
    }
    if !own.dumpable {
        return Err("this process is not dumpable (set-user-ID, set-group-ID, or its credentials changed): only root may read its statistics");
    }
    if own.uids.iter().all(|&u| u == peer.uid) && own.gids.iter().all(|&g| g == peer.gid) {
        return Ok(());
    }
    Err("only root and processes of this process's own user and group may read its statistics")
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

    fn creds(uid: u32, gid: u32, dumpable: bool) -> Credentials {
        Credentials {
            uids: [uid; 3],
            gids: [gid; 3],
            dumpable,
        }
    }

    fn peer(pid: i32, uid: u32, gid: u32) -> PeerCredentials {
        PeerCredentials { pid, uid, gid }
    }

    #[test]
    fn who_may_read_the_statistics() {
        let alice = creds(1000, 100, true);
        // The same user and group; root; the process itself.
        assert_eq!(may_read(&peer(7, 1000, 100), 42, &alice), Ok(()));
        assert_eq!(may_read(&peer(7, 0, 0), 42, &alice), Ok(()));
        assert_eq!(may_read(&peer(42, 1000, 100), 42, &alice), Ok(()));
        // Another user, or the same user in another group.
        let other =
            "only root and processes of this process's own user and group may read its statistics";
        assert_eq!(may_read(&peer(7, 1001, 100), 42, &alice), Err(other));
        assert_eq!(may_read(&peer(7, 1000, 101), 42, &alice), Err(other));
        assert_eq!(may_read(&peer(0, 1001, 100), 42, &alice), Err(other));
        // A set-user-ID root program run by alice: real 1000, effective and saved 0.
        let setuid = Credentials {
            uids: [1000, 0, 0],
            gids: [100; 3],
            dumpable: false,
        };
        let not_dumpable = "this process is not dumpable (set-user-ID, set-group-ID, or its credentials changed): only root may read its statistics";
        assert_eq!(
            may_read(&peer(7, 1000, 100), 42, &setuid),
            Err(not_dumpable)
        );
        assert_eq!(may_read(&peer(7, 0, 0), 42, &setuid), Ok(()));
        assert_eq!(may_read(&peer(42, 1000, 100), 42, &setuid), Ok(()));
        // Ids that differ among real, effective and saved, even while dumpable.
        let mixed = Credentials {
            uids: [1000, 1000, 1002],
            gids: [100; 3],
            dumpable: true,
        };
        assert_eq!(may_read(&peer(7, 1000, 100), 42, &mixed), Err(other));
        // Not dumpable for another reason (PR_SET_DUMPABLE 0): root only.
        assert_eq!(
            may_read(&peer(7, 1000, 100), 42, &creds(1000, 100, false)),
            Err(not_dumpable)
        );
    }
}
