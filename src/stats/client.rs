//! Reading another process's statistics: watch it with a pidfd, connect to
//! its abstract socket, receive its memfd, map it read-only and decode a [`Snapshot`].
//!
//! Works against this library and against AMD's (both block layouts, told apart by the
//! memfd's size). The peer is not trusted: the server behind the name must be the target
//! itself (its `SO_PEERCRED` pid: anyone can bind an abstract name first), the received
//! descriptor must be a regular file sealed against shrinking (so our mapping cannot fault)
//! and every word is bounds-checked. A server that closes the connection without a descriptor
//! refused us (our server does that to other users): that is an error at once, not a retry.
//! Requires Linux 5.3 (`pidfd_open`).

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::report;
use super::server::socket_address;
use super::snapshot::Snapshot;
use crate::sys::socket::{self, receive_fd};
use crate::sys::{self, shm};

/// Longest wait between two connection attempts (upstream grows it without bound by 1 ms per
/// attempt; the cap keeps a late server from being noticed late).
const MAX_RETRY_WAIT_MS: c_int = 100;

/// Why [`Target::open`] failed.
#[derive(Debug)]
pub enum OpenError {
    /// `pid <= 0`.
    InvalidPid,
    /// `pidfd_open` failed: no such process.
    NotFound(io::Error),
    /// `pidfd_open` failed for lack of resources (`EMFILE`, `ENFILE`, `ENOMEM`): the process
    /// may well exist.
    NoResources(io::Error),
    /// The kernel has no `pidfd_open` (`ENOSYS`, Linux < 5.3).
    Unsupported(io::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::InvalidPid => write!(f, "invalid process id"),
            OpenError::NotFound(e) => write!(f, "no such process: {e}"),
            OpenError::NoResources(e) => write!(f, "cannot watch the process: {e}"),
            OpenError::Unsupported(e) => {
                write!(f, "the kernel cannot watch processes (pidfd_open): {e}")
            }
        }
    }
}

impl std::error::Error for OpenError {}

/// A process whose statistics we want, watched through a pidfd.
#[derive(Debug)]
pub struct Target {
    pid: i32,
    pidfd: OwnedFd,
}

impl Target {
    /// Watch process `pid`.
    pub fn open(pid: i32) -> Result<Target, OpenError> {
        if pid <= 0 {
            return Err(OpenError::InvalidPid);
        }
        let pidfd = sys::pidfd_open(pid).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOSYS) => OpenError::Unsupported(e),
            Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM) => OpenError::NoResources(e),
            _ => OpenError::NotFound(e),
        })?;
        Ok(Target { pid, pidfd })
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether the target has exited; with `block`, wait until it has.
    pub fn has_exited(&self, block: bool) -> io::Result<bool> {
        self.wait_exit(if block { -1 } else { 0 })
    }

    /// Poll the pidfd for up to `timeout_ms` (-1: forever); true once the target exited.
    fn wait_exit(&self, timeout_ms: c_int) -> io::Result<bool> {
        loop {
            match socket::poll([(self.pidfd.as_raw_fd(), libc::POLLIN)], timeout_ms) {
                Ok([revents]) => {
                    return Ok(revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Connect to the target's statistics server and receive its block, retrying (waiting
    /// 0, 1, 2, ... ms on the pidfd between attempts) until it answers or exits. Waits as
    /// long as the target lives, like upstream; see [`Target::connect_timeout`].
    pub fn connect(&self) -> io::Result<Connection> {
        self.connect_timeout(None)
    }

    /// [`Target::connect`] giving up after `timeout` (`None`: never). Errors: `TimedOut`
    /// (no answer in time), `NotFound` (the target exited without serving its statistics),
    /// `PermissionDenied` (the name is held by another process, or the target refused us;
    /// the message says which), or a system call's.
    pub fn connect_timeout(&self, timeout: Option<Duration>) -> io::Result<Connection> {
        // A timeout too long for the clock to reach is no limit.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut wait_ms: c_int = 0;
        loop {
            if let Some(conn) = self.attempt(deadline)? {
                return Ok(conn);
            }
            let mut wait = wait_ms;
            if let Some(d) = deadline {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the target's statistics server did not answer",
                    ));
                }
                wait = wait.min(c_int::try_from(left.as_millis()).unwrap_or(c_int::MAX));
            }
            if self.wait_exit(wait)? {
                // One last try: the block may have been served just before the exit.
                return self.attempt(deadline)?.ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        "the target exited without serving its statistics",
                    )
                });
            }
            wait_ms = (wait_ms + 1).min(MAX_RETRY_WAIT_MS);
        }
    }

    /// One connection attempt: `Ok(None)` when it should be retried.
    fn attempt(&self, deadline: Option<Instant>) -> io::Result<Option<Connection>> {
        let sock = socket::stream_socket()?;
        // The server binds the same full-length address.
        if socket::connect(sock.as_raw_fd(), &socket_address(self.pid as u32)).is_err() {
            // Not listening (yet), backlog full (`EAGAIN`: the socket does not block), ...:
            // retry while the target lives and the deadline allows.
            return Ok(None);
        }
        // Anyone can bind an abstract name first: take a block only from the process asked
        // for. The kernel recorded who called `listen` on the socket we reached.
        let server = socket::peer_credentials(sock.as_raw_fd())?;
        if server.pid != self.pid {
            let who = if server.pid == 0 {
                "a process outside this PID namespace".to_string()
            } else {
                format!("process {}", server.pid)
            };
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "its statistics socket name (AISSTATS{:08x}) is held by {who} (user {}), not by process {}: refusing it",
                    self.pid, server.uid, self.pid
                ),
            ));
        }
        // Wait for the answer, or for the target to die (a stale listener that never
        // answers, e.g. a copy of the socket inherited by a child, must not hang us).
        loop {
            let timeout = deadline.map_or(-1, |d| {
                let left = d.saturating_duration_since(Instant::now());
                c_int::try_from(left.as_millis()).unwrap_or(c_int::MAX)
            });
            let revents = match socket::poll(
                [
                    (sock.as_raw_fd(), libc::POLLIN),
                    (self.pidfd.as_raw_fd(), libc::POLLIN),
                ],
                timeout,
            ) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if revents == [0, 0] {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the target's statistics server did not answer",
                ));
            }
            if revents[0] != 0 {
                let received = match receive_fd(sock.as_raw_fd(), false) {
                    // Readable, yet nothing to read after all: wait again.
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    r => r?,
                };
                return match received {
                    Some(fd) => Ok(Some(Connection::from_fd(fd))),
                    // Closed without a descriptor: our server's answer to a reader it refuses.
                    None => Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        "it refused to hand over its statistics (only root and processes of its own user and group may read them)",
                    )),
                };
            }
            // The target exited: take an answer that is already queued, else give up.
            return Ok(receive_fd(sock.as_raw_fd(), true)?.map(Connection::from_fd));
        }
    }
}

/// A statistics block received from a target (the descriptor keeps it alive after the
/// target exits).
#[derive(Debug)]
pub struct Connection {
    memfd: OwnedFd,
}

impl Connection {
    /// Wrap a descriptor of a statistics block (e.g. one received by other means).
    pub fn from_fd(memfd: OwnedFd) -> Connection {
        Connection { memfd }
    }

    /// Map the block read-only and decode it.
    pub fn snapshot(&self) -> io::Result<Snapshot> {
        let fd = self.memfd.as_raw_fd();
        let (regular, size) = shm::regular_size(fd)?;
        if !regular {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the statistics descriptor is not a memory file",
            ));
        }
        if shm::seals(fd).map_or(true, |s| s & libc::F_SEAL_SHRINK == 0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the statistics block is not sealed against shrinking; refusing to map it",
            ));
        }
        let len = usize::try_from(size).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "empty statistics block",
            ));
        }
        let map = shm::Mapping::new(fd, len)?;
        // The memfd is sealed against shrinking, so the mapping stays readable while `map` lives.
        Snapshot::decode(map.words()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Write the text report of the block to `fd`.
    pub fn write_report(&self, fd: RawFd) -> io::Result<()> {
        let text = report::text(&self.snapshot()?);
        // A pipe whose reader is gone gives EPIPE, never SIGPIPE in the caller's process.
        crate::sys::io::write_all_no_sigpipe(fd, text.as_bytes())
            .map_err(io::Error::from_raw_os_error)
    }
}
