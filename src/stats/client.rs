//! Reading another process's statistics (behaviour §F.4): watch it with a pidfd, connect to
//! its abstract socket, receive its memfd, map it read-only and decode a [`Snapshot`].
//!
//! Works against this library and against AMD's (both layouts of §F.2, told apart by the
//! memfd's size). The peer is not trusted: the received descriptor must be a regular file
//! sealed against shrinking (so our mapping cannot fault) and every word is bounds-checked.
//! Requires Linux 5.3 (`pidfd_open`).

use std::ffi::c_int;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use super::report;
use super::server::{socket_address, SOCKET_ADDRESS_LEN};
use super::snapshot::{SharedWords, Snapshot};

/// Longest wait between two connection attempts (upstream grows it without bound by 1 ms per
/// attempt; the cap keeps a late server from being noticed late).
const MAX_RETRY_WAIT_MS: c_int = 100;

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

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
        // SAFETY: pidfd_open(pid, 0) takes two integers and returns a descriptor or -1.
        let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0 as c_int) };
        if rc < 0 {
            let e = last_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOSYS) => OpenError::Unsupported(e),
                Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM) => OpenError::NoResources(e),
                _ => OpenError::NotFound(e),
            });
        }
        // SAFETY: a fresh descriptor (close-on-exec, as every pidfd) that nothing else owns.
        let pidfd = unsafe { OwnedFd::from_raw_fd(rc as RawFd) };
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
            let mut p = libc::pollfd {
                fd: self.pidfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let rc = unsafe { libc::poll(&mut p, 1, timeout_ms) };
            if rc >= 0 {
                return Ok(
                    rc > 0 && p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
                );
            }
            let e = last_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Connect to the target's statistics server and receive its block, retrying (waiting
    /// 0, 1, 2, ... ms on the pidfd between attempts) until it answers or exits. Waits as
    /// long as the target lives, like upstream; see [`Target::connect_timeout`].
    pub fn connect(&self) -> io::Result<Connection> {
        self.connect_timeout(None)
    }

    /// [`Target::connect`] giving up after `timeout` (`None`: never).
    pub fn connect_timeout(&self, timeout: Option<Duration>) -> io::Result<Connection> {
        let deadline = timeout.map(|t| Instant::now() + t);
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
        // SAFETY: plain syscall.
        let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(last_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        let sock = unsafe { OwnedFd::from_raw_fd(raw) };
        let addr = socket_address(self.pid as u32);
        loop {
            // SAFETY: a valid sockaddr_un and its full length (the server binds the same).
            let rc = unsafe {
                libc::connect(
                    sock.as_raw_fd(),
                    (&raw const addr).cast(),
                    SOCKET_ADDRESS_LEN,
                )
            };
            if rc == 0 {
                break;
            }
            if last_error().kind() != io::ErrorKind::Interrupted {
                // Not listening (yet), backlog full, ...: retry while the target lives.
                return Ok(None);
            }
        }
        // Wait for the answer, or for the target to die (a stale listener that never
        // answers, e.g. a copy of the socket inherited by a child, must not hang us).
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: sock.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.pidfd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let timeout = deadline.map_or(-1, |d| {
                let left = d.saturating_duration_since(Instant::now());
                c_int::try_from(left.as_millis()).unwrap_or(c_int::MAX)
            });
            // SAFETY: a valid array of two pollfds.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
            if rc < 0 {
                let e = last_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if rc == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the target's statistics server did not answer",
                ));
            }
            if fds[0].revents != 0 {
                return Ok(receive_fd(sock.as_raw_fd(), false)?.map(Connection::from_fd));
            }
            // The target exited: take an answer that is already queued, else give up.
            return Ok(receive_fd(sock.as_raw_fd(), true)?.map(Connection::from_fd));
        }
    }
}

/// Receive one descriptor sent with `SCM_RIGHTS`; `None` if the peer sent none (or, with
/// `nonblocking`, nothing is queued). Extra descriptors are closed.
fn receive_fd(sock: RawFd, nonblocking: bool) -> io::Result<Option<OwnedFd>> {
    const MAX_FDS: usize = 4;
    let mut payload: c_int = 0;
    let mut iov = libc::iovec {
        iov_base: (&raw mut payload).cast(),
        iov_len: size_of::<c_int>(),
    };
    // SAFETY: CMSG_SPACE is a pure computation.
    let space = unsafe { libc::CMSG_SPACE((MAX_FDS * size_of::<c_int>()) as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    // SAFETY: msghdr is plain old data; all-zero is valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    let flags = libc::MSG_CMSG_CLOEXEC | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
    let n = loop {
        // SAFETY: `msg` and the buffers it points to are live and writable for the call.
        let n = unsafe { libc::recvmsg(sock, &mut msg, flags) };
        if n >= 0 {
            break n;
        }
        let e = last_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(None),
            _ => return Err(e),
        }
    };
    let mut received: Vec<OwnedFd> = Vec::new();
    // SAFETY: the kernel filled `msg_controllen` bytes of `control` with well-formed headers;
    // CMSG_FIRSTHDR/NXTHDR stay within them, and each SCM_RIGHTS header carries
    // (cmsg_len - CMSG_LEN(0)) / 4 descriptors, now owned by us.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data_len = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let data = libc::CMSG_DATA(cmsg).cast::<c_int>();
                for i in 0..data_len / size_of::<c_int>() {
                    received.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if n == 0 && received.is_empty() {
        return Ok(None);
    }
    // The payload (1 upstream) carries no information we need.
    Ok(received.into_iter().next())
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
        // SAFETY: fstat into a zeroed struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(last_error());
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the statistics descriptor is not a memory file",
            ));
        }
        // SAFETY: plain fcntl.
        let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
        if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the statistics block is not sealed against shrinking; refusing to map it",
            ));
        }
        let len =
            usize::try_from(st.st_size).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "empty statistics block",
            ));
        }
        let map = Mapping::new(fd, len)?;
        // SAFETY: the mapping is page-aligned, `len` bytes long, readable, and cannot shrink
        // (sealed), and it outlives `words`.
        let words = unsafe { SharedWords::new(map.ptr, map.len) };
        Snapshot::decode(&words).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Write the text report of the block to `fd` (behaviour §F.3).
    pub fn write_report(&self, fd: RawFd) -> io::Result<()> {
        let text = report::text(&self.snapshot()?);
        // A pipe whose reader is gone gives EPIPE, never SIGPIPE in the caller's process.
        crate::sys::io::write_all_no_sigpipe(fd, text.as_bytes())
            .map_err(io::Error::from_raw_os_error)
    }
}

/// A read-only shared mapping, unmapped on drop.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn new(fd: RawFd, len: usize) -> io::Result<Mapping> {
        // SAFETY: a new read-only mapping of `len` bytes of `fd` at an address of the
        // kernel's choosing.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(last_error());
        }
        let ptr =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Mapping { ptr, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping; nothing borrows it any more.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
