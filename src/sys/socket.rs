//! UNIX stream sockets in the abstract namespace, descriptors passed over them
//! (`SCM_RIGHTS`), and the eventfd and `poll` a server thread waits on.

use std::ffi::{c_int, c_void};
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The length of every abstract address made by [`abstract_address`]: the full
/// `sizeof(sockaddr_un)`, so the name is zero-padded to 108 bytes and both ends must use it.
pub(crate) const ADDRESS_LEN: libc::socklen_t = size_of::<libc::sockaddr_un>() as libc::socklen_t;

/// The abstract-namespace address `"\0" + name`, zero-padded.
pub(crate) fn abstract_address(name: &str) -> libc::sockaddr_un {
    // SAFETY: sockaddr_un is plain old data; all-zero is valid (and pads the name).
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    // sun_path[0] stays 0: the abstract namespace.
    for (dst, src) in addr.sun_path[1..].iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    addr
}

fn cvt(rc: c_int, what: &str) -> io::Result<c_int> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(rc)
    }
}

/// A non-blocking, close-on-exec stream socket bound to `addr` and listening with `backlog`.
/// Errors name the step (`socket`, `bind <what>`, `listen`).
pub(crate) fn listen(addr: &libc::sockaddr_un, what: &str, backlog: c_int) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall.
    let raw = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    let raw = cvt(raw, "socket")?;
    // SAFETY: a fresh descriptor that nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: a valid sockaddr_un and its full length.
    let rc = unsafe { libc::bind(sock.as_raw_fd(), (&raw const *addr).cast(), ADDRESS_LEN) };
    cvt(rc, &format!("bind {what}"))?;
    // SAFETY: plain syscall on our socket.
    let rc = unsafe { libc::listen(sock.as_raw_fd(), backlog) };
    cvt(rc, "listen")?;
    Ok(sock)
}

/// Accept one connection (close-on-exec); the error is the raw `accept4` errno.
pub(crate) fn accept(sock: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; we do not want the peer address.
    let rc = unsafe {
        libc::accept4(
            sock,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_CLOEXEC,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(rc) })
}

/// Send `fd` over `sock` with `SCM_RIGHTS` and the 4-byte payload `payload` (`MSG_NOSIGNAL`:
/// a peer that went away is `EPIPE`, never `SIGPIPE`). Retries on `EINTR`.
pub(crate) fn send_fd(sock: RawFd, fd: RawFd, payload: c_int) -> io::Result<()> {
    let mut iov = libc::iovec {
        iov_base: (&raw const payload).cast_mut().cast(),
        iov_len: size_of::<c_int>(),
    };
    // SAFETY: CMSG_SPACE is a pure computation.
    let space = unsafe { libc::CMSG_SPACE(size_of::<c_int>() as u32) } as usize;
    // u64 elements keep the control buffer aligned for cmsghdr.
    let mut control = vec![0u64; space.div_ceil(8)];
    // SAFETY: msghdr is plain old data; all-zero is valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: msg_control points at `space` aligned bytes, enough for one header holding one
    // int, so CMSG_FIRSTHDR is non-NULL and CMSG_DATA has room for the descriptor.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<c_int>() as u32) as _;
        libc::CMSG_DATA(cmsg).cast::<c_int>().write_unaligned(fd);
    }
    loop {
        // SAFETY: `msg` and everything it points to are live for the call.
        let n = unsafe { libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A non-blocking, close-on-exec stream socket: a connect to a full backlog is `EAGAIN`, never
/// a wait (a listener that never accepts, or a stopped one, cannot hold the caller).
pub(crate) fn stream_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall.
    let raw = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    let raw = cvt(raw, "socket")?;
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Connect `sock` to `addr` (retrying on `EINTR`); the error is `connect`'s.
pub(crate) fn connect(sock: RawFd, addr: &libc::sockaddr_un) -> io::Result<()> {
    loop {
        // SAFETY: a valid sockaddr_un and its full length.
        if unsafe { libc::connect(sock, (&raw const *addr).cast(), ADDRESS_LEN) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The process at the other end of a connected UNIX socket, as the kernel recorded it
/// (`SO_PEERCRED`): for the accepting side, the client when it called `connect`; for the
/// connecting side, the server when it called `listen`. Ids are as seen from this process's
/// namespaces: `pid` is 0 when the peer's process is not visible in ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PeerCredentials {
    /// Process id.
    pub pid: i32,
    /// Effective user id.
    pub uid: u32,
    /// Effective group id.
    pub gid: u32,
}

/// `getsockopt(SO_PEERCRED)` of a connected UNIX socket.
pub(crate) fn peer_credentials(sock: RawFd) -> io::Result<PeerCredentials> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a valid out-buffer of `len` bytes for SO_PEERCRED.
    let rc = unsafe {
        libc::getsockopt(
            sock,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    cvt(rc, "SO_PEERCRED")?;
    Ok(PeerCredentials {
        pid: cred.pid,
        uid: cred.uid,
        gid: cred.gid,
    })
}

/// Who listens on `addr`: connect without blocking, read the listener's credentials, and
/// close again without sending anything.
pub(crate) fn listener_credentials(addr: &libc::sockaddr_un) -> io::Result<PeerCredentials> {
    let sock = stream_socket()?;
    connect(sock.as_raw_fd(), addr)?;
    peer_credentials(sock.as_raw_fd())
}

/// Receive one descriptor sent with `SCM_RIGHTS`; `None` if the peer sent none (or, with
/// `nonblocking`, nothing is queued). Extra descriptors are closed.
pub(crate) fn receive_fd(sock: RawFd, nonblocking: bool) -> io::Result<Option<OwnedFd>> {
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
        let e = io::Error::last_os_error();
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

/// A close-on-exec eventfd (counter 0). The error names the call.
pub(crate) fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) }, "eventfd")?;
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Add 1 to the eventfd `fd` (waking its pollers); retries on `EINTR`, ignores other errors.
pub(crate) fn eventfd_signal(fd: RawFd) {
    let one: u64 = 1;
    loop {
        // SAFETY: writes 8 bytes from a live u64 to an eventfd.
        let n = unsafe { libc::write(fd, (&raw const one).cast::<c_void>(), 8) };
        if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// `poll` on `fds` (descriptor, events) until one is ready or `timeout_ms` passed (-1: no
/// limit); returns the `revents` of each, or the error (`EINTR` included, for the caller to
/// decide). 0 ready descriptors (a timeout) gives all-zero `revents`.
pub(crate) fn poll<const N: usize>(
    fds: [(RawFd, libc::c_short); N],
    timeout_ms: c_int,
) -> io::Result<[libc::c_short; N]> {
    let mut p = fds.map(|(fd, events)| libc::pollfd {
        fd,
        events,
        revents: 0,
    });
    // SAFETY: a valid array of N pollfds.
    if unsafe { libc::poll(p.as_mut_ptr(), N as libc::nfds_t, timeout_ms) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(p.map(|q| q.revents))
}

/// `close(fd)` of a raw descriptor nothing else owns or will close (async-signal-safe; for
/// a `fork()` child handler).
pub(crate) fn close_raw(fd: RawFd) {
    // SAFETY: per the caller's contract the descriptor has no other owner.
    unsafe { libc::close(fd) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abstract_names_are_zero_padded() {
        let a = abstract_address("AISSTATS00001234");
        assert_eq!(a.sun_family, libc::AF_UNIX as libc::sa_family_t);
        assert_eq!(a.sun_path[0], 0);
        let name: Vec<u8> = a.sun_path[1..17].iter().map(|&c| c as u8).collect();
        assert_eq!(&name, b"AISSTATS00001234");
        assert!(a.sun_path[17..].iter().all(|&c| c == 0));
        assert_eq!(ADDRESS_LEN, 110);
    }
}
