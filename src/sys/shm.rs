//! Shared memory: a sealed memfd mapped read-write (the statistics block), a read-only
//! mapping of another process's block, the facts about such a descriptor, and the `fork()`
//! child hook.

use std::ffi::{c_int, CStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

/// `F_SEAL_FUTURE_WRITE` (Linux 5.1), spelled out so older libc bindings do not matter.
pub(crate) const SEAL_FUTURE_WRITE: c_int = 0x0010;

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

/// A memfd named `name` (`MFD_ALLOW_SEALING | MFD_CLOEXEC`) of `len` zero bytes, mapped
/// read-write shared, then sealed with `seals` (our mapping, made before the seal, stays
/// writable). The mapping is never unmapped: it lives as long as the process. Any failing
/// step fails the whole (a mapping made is unmapped again).
pub(crate) fn create_sealed(
    name: &CStr,
    len: usize,
    seals: c_int,
) -> io::Result<(OwnedFd, NonNull<u8>)> {
    // SAFETY: a valid NUL-terminated name and plain flag bits.
    let raw =
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_ALLOW_SEALING | libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(last_error());
    }
    // SAFETY: `raw` is a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: plain syscall on our descriptor.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
        return Err(last_error());
    }
    // SAFETY: a new shared mapping of our memfd, which is exactly `len` bytes long; nothing
    // else is mapped at the address the kernel picks.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(last_error());
    }
    // SAFETY: plain fcntl on our descriptor.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        let e = last_error();
        // SAFETY: the mapping made above, not yet referenced by anything.
        unsafe { libc::munmap(ptr, len) };
        return Err(e);
    }
    let ptr =
        NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
    Ok((fd, ptr))
}

/// The seals of `fd` (`F_GET_SEALS`), or the error.
pub(crate) fn seals(fd: RawFd) -> io::Result<c_int> {
    // SAFETY: plain fcntl.
    let s = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
    if s < 0 {
        Err(last_error())
    } else {
        Ok(s)
    }
}

/// Whether `fd` is a regular (memory) file, and its size.
pub(crate) fn regular_size(fd: RawFd) -> io::Result<(bool, i64)> {
    // SAFETY: fstat into a zeroed struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(last_error());
    }
    Ok((st.st_mode & libc::S_IFMT == libc::S_IFREG, st.st_size))
}

/// A read-only shared mapping, unmapped on drop.
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// Map `len` bytes of `fd` read-only, shared.
    pub(crate) fn new(fd: RawFd, len: usize) -> io::Result<Mapping> {
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

    /// The mapping as 8-byte words (the bytes past the last whole word are not included).
    /// Another process may change them at any time: read them with atomic loads. A relaxed
    /// 8-byte atomic load is also defined on read-only memory, which this mapping is.
    pub(crate) fn words(&self) -> &[std::sync::atomic::AtomicU64] {
        // SAFETY: page-aligned (so 8-byte aligned), `len` readable bytes for as long as the
        // mapping (and so the borrow) lives; `AtomicU64` has the size and alignment of `u64`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast(), self.len / 8) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping; nothing borrows it any more (the borrow of `ptr` ends
        // with the mapping's users, per `ptr`'s callers).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Run `handler` in the child after every `fork()` (`pthread_atfork`); returns its result
/// code (0 on success). The handler must be async-signal-safe.
pub(crate) fn on_fork_child(handler: extern "C" fn()) -> c_int {
    // SAFETY: registers a handler that stays valid for the life of the process (a plain
    // function of this library, which is never unloaded while the process runs it).
    unsafe { libc::pthread_atfork(None, None, Some(handler as unsafe extern "C" fn())) }
}
