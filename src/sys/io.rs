//! Positional file I/O, descriptor flags and re-opening through `/proc/self/fd`.
//!
//! Every call retries `EINTR` itself, so callers only see real failures.

use std::ffi::CString;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Test-only (cargo feature `io-fault-seam`): makes the engine's `pread`/`pwrite` system calls
/// fail with a chosen errno, for the storage errors (`EIO`) a test machine cannot produce.
#[cfg(feature = "io-fault-seam")]
pub mod fault_seam {
    use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

    static ERRNO: [AtomicI32; 2] = [AtomicI32::new(0), AtomicI32::new(0)];
    static AFTER: AtomicI64 = AtomicI64::new(0);

    /// From now on, reads fail with `read_errno` and writes with `write_errno` (0: no fault),
    /// after `after_calls` system calls of a faulted direction have succeeded.
    pub fn set(read_errno: i32, write_errno: i32, after_calls: i64) {
        AFTER.store(after_calls, Ordering::SeqCst);
        ERRNO[0].store(read_errno, Ordering::SeqCst);
        ERRNO[1].store(write_errno, Ordering::SeqCst);
    }

    pub(super) fn hit(write: bool) -> Option<i32> {
        let e = ERRNO[usize::from(write)].load(Ordering::SeqCst);
        if e == 0 || AFTER.fetch_sub(1, Ordering::SeqCst) > 0 {
            return None;
        }
        Some(e)
    }
}

/// `fcntl(fd, F_GETFL)`.
pub(crate) fn get_flags(fd: RawFd) -> Result<i32, i32> {
    // SAFETY: F_GETFL takes no pointer argument.
    let r = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if r < 0 {
        Err(super::errno())
    } else {
        Ok(r)
    }
}

/// The open flags [`reopen`] passes on: the access mode and the status flags that change what
/// I/O through the new descriptor does (appending, synchronous writes, access times, direct
/// I/O), and `O_PATH`, so that a descriptor which can do no I/O never yields one that can.
/// Everything else `F_GETFL` may report only said how the first descriptor was opened and must
/// not be replayed on `/proc/self/fd/<fd>`: `O_NOFOLLOW` would refuse the link itself
/// (`ELOOP`), `O_TMPFILE` and `O_DIRECTORY` ask for a directory (`ENOTDIR`), `O_CREAT`,
/// `O_EXCL` and `O_TRUNC` would create or truncate, and `O_NONBLOCK` or `O_ASYNC` change
/// nothing for a file's positional I/O.
const REOPEN_FLAGS: i32 = libc::O_ACCMODE
    | libc::O_APPEND
    | libc::O_DSYNC
    | libc::O_SYNC
    | libc::O_NOATIME
    | libc::O_DIRECT
    | libc::O_PATH;

/// Open `/proc/self/fd/<fd>` (a second, independent open file description of the same file)
/// with the flags of `flags` — typically what `F_GETFL` reported for `fd`, with `O_DIRECT` set
/// or cleared — that [`REOPEN_FLAGS`] keeps, plus `O_CLOEXEC`.
pub(crate) fn reopen(fd: RawFd, flags: i32) -> Result<OwnedFd, i32> {
    let path = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL in a formatted path");
    let flags = (flags & REOPEN_FLAGS) | libc::O_CLOEXEC;
    loop {
        // SAFETY: path is NUL-terminated; no mode is needed without O_CREAT.
        let r = unsafe { libc::open(path.as_ptr(), flags) };
        if r >= 0 {
            // SAFETY: `r` is a fresh descriptor we own.
            return Ok(unsafe { OwnedFd::from_raw_fd(r) });
        }
        let e = super::errno();
        if e != libc::EINTR {
            return Err(e);
        }
    }
}

/// `fcntl(fd, F_DUPFD_CLOEXEC, 0)`: our own descriptor of the same open file description, so
/// that the application closing (and reusing the number of) its descriptor never changes the
/// file we read and write.
pub(crate) fn dup_cloexec(fd: RawFd) -> Result<OwnedFd, i32> {
    // SAFETY: F_DUPFD_CLOEXEC takes an integer argument; the result is a fresh descriptor.
    let r = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if r < 0 {
        return Err(super::errno());
    }
    // SAFETY: `r` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// Whether descriptors `a` and `b` of this process refer to the same open file description
/// (`kcmp(KCMP_FILE)`); `None` where the kernel or a sandbox does not allow the call.
pub(crate) fn same_open_file(a: RawFd, b: RawFd) -> Option<bool> {
    /// `KCMP_FILE` of `<linux/kcmp.h>`.
    const KCMP_FILE: libc::c_int = 0;
    // SAFETY: kcmp takes integers only.
    let pid = unsafe { libc::getpid() };
    // SAFETY: as above.
    let r = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            pid,
            pid,
            KCMP_FILE,
            a as libc::c_ulong,
            b as libc::c_ulong,
        )
    };
    match r {
        0 => Some(true),
        1..=3 => Some(false),
        _ => None,
    }
}

/// One `pread` into `buf`, retried on `EINTR`. A raw system call (rustix), not libc's
/// wrapper: no cancellation point inside the library and no `errno` round trip.
#[inline(always)]
pub(crate) fn pread(fd: RawFd, buf: &mut [u8], offset: u64) -> Result<usize, i32> {
    // SAFETY: the caller's descriptor is only borrowed for the call (a closed one is EBADF).
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    #[cfg(feature = "io-fault-seam")]
    if let Some(e) = fault_seam::hit(false) {
        return Err(e);
    }
    loop {
        match rustix::io::pread(fd, &mut *buf, offset) {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.raw_os_error()),
        }
    }
}

/// One `pwrite` of `buf`, retried on `EINTR` (a raw system call, as [`pread`]).
#[inline(always)]
pub(crate) fn pwrite(fd: RawFd, buf: &[u8], offset: u64) -> Result<usize, i32> {
    // SAFETY: the caller's descriptor is only borrowed for the call (a closed one is EBADF).
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    #[cfg(feature = "io-fault-seam")]
    if let Some(e) = fault_seam::hit(true) {
        return Err(e);
    }
    loop {
        match rustix::io::pwrite(fd, buf, offset) {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.raw_os_error()),
        }
    }
}

/// Read into `buf` from `offset` until it is full or end of file; returns the count read.
#[inline(always)]
pub(crate) fn pread_full(fd: RawFd, buf: &mut [u8], offset: u64) -> Result<usize, i32> {
    let mut done = 0;
    while done < buf.len() {
        let n = pread(fd, &mut buf[done..], offset + done as u64)?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

/// A write that failed: `errno`, after `done` bytes from the start of the buffer had reached
/// the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PartialWrite {
    /// Bytes written, contiguous from the start, before the failure.
    pub done: usize,
    /// The failure.
    pub errno: i32,
}

/// Write all of `buf` at `offset` (a zero-byte `pwrite` result stops early); returns the
/// count, or the failure with the count that reached the file before it.
#[inline(always)]
pub(crate) fn pwrite_full(fd: RawFd, buf: &[u8], offset: u64) -> Result<usize, PartialWrite> {
    let mut done = 0;
    while done < buf.len() {
        let n = pwrite(fd, &buf[done..], offset + done as u64)
            .map_err(|errno| PartialWrite { done, errno })?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

/// The size of the file behind `fd` (`fstat`).
pub(crate) fn file_size(fd: RawFd) -> Result<u64, i32> {
    // SAFETY: the caller's descriptor is only borrowed for the call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    rustix::fs::fstat(fd)
        .map(|st| st.st_size as u64)
        .map_err(|e| e.raw_os_error())
}

/// `ftruncate(fd, len)`, retried on `EINTR`.
pub(crate) fn truncate(fd: RawFd, len: u64) -> Result<(), i32> {
    // SAFETY: the caller's descriptor is only borrowed for the call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    loop {
        match rustix::fs::ftruncate(fd, len) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.raw_os_error()),
        }
    }
}

/// Write all of `data` to `fd` (`EINTR` retried) without ever raising `SIGPIPE`: a pipe or
/// socket whose reader is gone gives `EPIPE`, never the signal that would kill the caller.
/// `SIGPIPE` is blocked on this thread for the write; one it raised is taken back out of the
/// pending set (unless one was already pending before), and the mask is restored.
pub(crate) fn write_all_no_sigpipe(fd: RawFd, mut data: &[u8]) -> Result<(), i32> {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset/sigaddset before use; the
    // calls only change this thread's signal mask and pending set.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::sigpending(&mut pending);
        let was_pending = libc::sigismember(&pending, libc::SIGPIPE) == 1;
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        let mut result = Ok(());
        while !data.is_empty() {
            match rustix::io::write(BorrowedFd::borrow_raw(fd), data) {
                Ok(0) => {
                    result = Err(libc::EIO);
                    break;
                }
                Ok(n) => data = &data[n..],
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    result = Err(e.raw_os_error());
                    break;
                }
            }
        }
        if result == Err(libc::EPIPE) && !was_pending {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            while libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero) < 0
                && super::errno() == libc::EINTR
            {}
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        result
    }
}

/// `fdatasync`, retried on `EINTR`: a raw system call (no cancellation point). `EINVAL` (a
/// character device, a pipe or a socket, which have nothing to synchronise) is success: such
/// files accepted the bytes and there is no I/O failure to report.
pub(crate) fn fdatasync(fd: RawFd) -> Result<(), i32> {
    // SAFETY: the caller's descriptor is only borrowed for the call; a stale number yields EBADF.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    loop {
        match rustix::fs::fdatasync(fd) {
            Ok(()) | Err(rustix::io::Errno::INVAL) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.raw_os_error()),
        }
    }
}

/// What `cachestat(2)` (Linux 6.5) says about a byte range of a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CacheStat {
    /// Pages of the range in the page cache.
    pub cached: u64,
    /// Of those, pages not yet written back.
    pub dirty: u64,
}

/// `cachestat(fd, [offset, offset+len))`: page-cache residency of a range, without reading
/// it or starting readahead. `ENOSYS` on kernels before 6.5.
pub(crate) fn cachestat(fd: RawFd, offset: u64, len: u64) -> Result<CacheStat, i32> {
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    /// The syscall number, the same on every architecture (added after the unification).
    const SYS_CACHESTAT: libc::c_long = 451;
    let mut range = Range { off: offset, len };
    let mut st = Stat::default();
    // SAFETY: valid pointers to structures of the kernel's layout; flags 0.
    let r = unsafe { libc::syscall(SYS_CACHESTAT, fd as libc::c_uint, &mut range, &mut st, 0u32) };
    if r != 0 {
        return Err(super::errno());
    }
    Ok(CacheStat {
        cached: st.nr_cache,
        dirty: st.nr_dirty + st.nr_writeback,
    })
}

/// Test-only: a new, empty, read-write file that no other process can have prepared or can
/// reach. It is created (`create_new`, which never follows a link) in a fresh owner-only
/// directory under the temporary directory, then both are removed: the descriptor is the only
/// way to the file, and nothing is left behind.
#[cfg(test)]
pub(crate) fn scratch_file() -> std::fs::File {
    use std::hash::BuildHasher;
    use std::os::unix::fs::DirBuilderExt;
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for _ in 0..100 {
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // RandomState is seeded per process from the system's randomness: a name another user
        // cannot guess in advance.
        let tag = std::collections::hash_map::RandomState::new().hash_one((std::process::id(), n));
        let dir = std::env::temp_dir().join(format!("hipfile-unit-{tag:016x}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => panic!("creating {}: {e}", dir.display()),
        }
        let path = dir.join("scratch");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        return file;
    }
    panic!("no free scratch directory name in 100 tries");
}
