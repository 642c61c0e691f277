//! Raw operating-system calls, each behind a small safe function. Nothing else in the crate
//! calls `libc` for files; errors come back as plain errno values.

pub(crate) mod cancel;
pub(crate) mod huge;
pub(crate) mod io;
pub(crate) mod log_file;
pub(crate) mod mounts;
pub(crate) mod secure;
pub(crate) mod shm;
pub(crate) mod socket;
pub(crate) mod stats_block;
pub(crate) mod statx;

/// The processor's time-stamp counter (0 where there is none).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn tsc() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The processor's time-stamp counter (0 where there is none).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn tsc() -> u64 {
    0
}

/// The calling thread's `errno`.
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Set the calling thread's `errno` (the C API reports `-1` + `errno`).
pub(crate) fn set_errno(value: i32) {
    // SAFETY: __errno_location returns the calling thread's errno slot, always valid.
    unsafe { *libc::__errno_location() = value };
}

/// `CLOCK_MONOTONIC` in nanoseconds: the I/O path's clock for statistics (one vDSO call, no
/// normalisation arithmetic).
#[inline(always)]
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Let the calling thread's short sleeps end close to when they should (`PR_SET_TIMERSLACK`,
/// 1 µs instead of the default 50 µs): threads that wait for a GPU kernel in steps of a few
/// microseconds would otherwise oversleep by the slack each time. Best effort.
pub(crate) fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
}

/// `pidfd_open(pid, 0)`: a close-on-exec descriptor that polls readable once `pid` exits.
pub(crate) fn pidfd_open(pid: i32) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open(pid, 0) takes two integers and returns a descriptor or -1.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0 as std::ffi::c_int) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor (close-on-exec, as every pidfd) that nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(rc as std::os::fd::RawFd) })
}
