//! The process-statistics client functions (`hipFileStats*`) as a small owner type for tests.

use std::ffi::c_int;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::null_mut;

use hipfile::ffi::*;

/// A `hipFileStatsContext_t`, closed on drop.
pub struct Ctx(pub *mut hipFileStatsContext_t);

impl Ctx {
    pub fn create(pid: c_int) -> Ctx {
        let mut ctx = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { hipFileStatsCreateContext(&mut ctx, pid) },
            hipFileStatsSuccess
        );
        assert!(!ctx.is_null());
        Ctx(ctx)
    }

    pub fn connect(&self) -> hipFileStatsError_t {
        // SAFETY: a live context.
        unsafe { hipFileStatsConnectToTargetProcess(self.0) }
    }

    pub fn poll(&self, block: bool) -> hipFileStatsError_t {
        // SAFETY: a live context.
        unsafe { hipFileStatsPollTargetProcess(self.0, block) }
    }

    /// The report, written through a memfd (a pipe could fill up).
    pub fn report(&self) -> String {
        let (code, text) = self.try_report();
        assert_eq!(code, hipFileStatsSuccess);
        text
    }

    pub fn try_report(&self) -> (hipFileStatsError_t, String) {
        // SAFETY: valid name, plain flags.
        let fd = unsafe { libc::memfd_create(c"report".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: a fresh descriptor we own.
        let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        // SAFETY: a live context.
        let code = unsafe { hipFileStatsGenerateReport(self.0, file.as_raw_fd()) };
        file.seek(SeekFrom::Start(0)).unwrap();
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        (code, text)
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: created by hipFileStatsCreateContext, closed once.
        unsafe { hipFileStatsCloseContext(self.0) };
    }
}

/// Receive one `c_int` payload and exactly one descriptor (`SCM_RIGHTS`) on `sock`, as the
/// statistics server hands its block over; asserts the payload is 1.
pub fn recv_fd(sock: &impl std::os::fd::AsRawFd) -> std::os::fd::OwnedFd {
    use std::ffi::c_int;
    use std::os::fd::FromRawFd;
    let mut payload: c_int = 0;
    let mut iov = libc::iovec {
        iov_base: (&raw mut payload).cast(),
        iov_len: 4,
    };
    let mut control = [0u64; 8];
    // SAFETY: plain old data.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: valid message buffers.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    assert_eq!(n, 4);
    assert_eq!(payload, 1);
    // SAFETY: the kernel filled the control buffer; its one message holds one descriptor.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        assert!(!c.is_null());
        assert_eq!(
            ((*c).cmsg_level, (*c).cmsg_type),
            (libc::SOL_SOCKET, libc::SCM_RIGHTS)
        );
        assert_eq!(
            (*c).cmsg_len as usize,
            libc::CMSG_LEN(4) as usize,
            "exactly one descriptor"
        );
        std::os::fd::OwnedFd::from_raw_fd(libc::CMSG_DATA(c).cast::<c_int>().read_unaligned())
    }
}

/// Connect to `"\0AISSTATS%08x"` with the full `sizeof(sockaddr_un)` as AMD's client does.
pub fn raw_connect(pid: c_int) -> std::io::Result<OwnedFd> {
    raw_connect_with(pid, 0)
}

/// [`raw_connect`] with extra socket `flags` (`SOCK_NONBLOCK`: a full backlog is `EAGAIN`).
pub fn raw_connect_with(pid: c_int, flags: c_int) -> std::io::Result<OwnedFd> {
    let sock = unix_socket(flags);
    let (addr, len) = stats_address(pid);
    // SAFETY: a valid address of `len` bytes.
    if unsafe { libc::connect(sock.as_raw_fd(), (&raw const addr).cast(), len) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(sock)
}

/// A stream socket of this process bound to `pid`'s statistics name and listening with a
/// backlog of `backlog` (a squatter of that name).
pub fn raw_listen(pid: c_int, backlog: c_int) -> OwnedFd {
    let sock = unix_socket(0);
    let (addr, len) = stats_address(pid);
    // SAFETY: a valid address of `len` bytes.
    assert_eq!(
        unsafe { libc::bind(sock.as_raw_fd(), (&raw const addr).cast(), len) },
        0,
        "bind: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: a bound socket we own.
    assert_eq!(unsafe { libc::listen(sock.as_raw_fd(), backlog) }, 0);
    sock
}

fn unix_socket(flags: c_int) -> OwnedFd {
    // SAFETY: plain syscall.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | flags,
            0,
        )
    };
    assert!(fd >= 0);
    // SAFETY: a fresh descriptor we own.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// `"\0AISSTATS%08x"` as the library binds it: the full `sizeof(sockaddr_un)`.
fn stats_address(pid: c_int) -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: plain old data.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let name = format!("\0AISSTATS{pid:08x}");
    for (d, s) in addr.sun_path.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    (
        addr,
        std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
    )
}
