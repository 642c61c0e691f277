//! Shared set-up of the synchronous `hipFileRead` / `hipFileWrite` suites (`tests/sync_io_*.rs`,
//! one file per family) against the simulated GPU runtime (`libhipsim.so`).
//!
//! Every test runs in its own child process (see `child_test!`), so each one gets a fresh
//! driver and its own `HIPFILE_*` environment. Results are compared exactly: byte counts,
//! error codes, `errno`, file and device-memory contents, and hipsim's call counters, which
//! say which backend served a request:
//! - fastpath: `hipAmdFileRead` / `hipAmdFileWrite` called, no host↔device copy;
//! - fallback: host↔device copies (`h2d_bytes`/`d2h_bytes`: `hipMemcpy`, or `hipMemcpyAsync`
//!   when the engine pipelines chunks), no fastpath call;
//! - host: neither.
//!
//! Two tests guard fixed library bugs: the fastpath's 4 KiB device-address alignment, and a
//! panic on the calling thread's share of a request waiting for the helpers.
//!
//! Tests that need the fastpath set `HIPFILE_UNSUPPORTED_FILE_SYSTEMS=true` so that they do
//! not depend on the file system CI runs on (one test checks the real ext4/xfs detection), and
//! return early (saying so) when the scratch directory has no `O_DIRECT` at all.
//!
//! What cannot be tested here, and why:
//! - `HIPFILE_UNSUPPORTED_FILE_SYSTEMS` is exercised on tmpfs (`/dev/shm`), which accepts
//!   `O_DIRECT` since Linux 6.6; on older kernels that test reports that it could not run.
//! - A refusal because of ext4 `data=journal`/`writeback` needs such a mount; the mount-option
//!   parsing is covered by the library's unit tests.
//! - Durability is checked by counting `fdatasync` calls with `strace` when it can trace the
//!   child; otherwise that test says so and only the data is checked.
//! - A clamped (`0x7ffff000`-byte) request is tested on the fastpath (sparse 3 GiB file, cheap
//!   on hipsim) and on the fallback as a write into `/dev/null` (moving 2 GiB through the
//!   bounce buffers, but never committing 2 GiB of memory); a clamped fallback *read* would
//!   commit 2 GiB of simulated device memory and is left out.

use std::ffi::{c_int, c_void};
use std::time::Duration;

use super::*;

pub const K4: usize = 4096;
pub const MIB: usize = 1 << 20;
/// `INT_MAX & ~(page_size - 1)`: the largest transfer of one call.
pub const MAX_RW: usize = 0x7fff_f000;
/// `hipErrorUnknown`.
pub const HIP_ERROR_UNKNOWN: i64 = 999;
/// `hipErrorInvalidValue`.
pub const HIP_ERROR_INVALID_VALUE: i64 = 1;

// ---- small helpers ------------------------------------------------------------------------

pub fn rd(fh: hipFileHandle_t, buf: *mut c_void, size: usize, foff: i64, boff: i64) -> isize {
    // SAFETY: host buffers passed by the tests are valid for `size` bytes at `boff`; device
    // and bogus pointers are never dereferenced by the library.
    unsafe { hipFileRead(fh, buf, size, foff, boff) }
}

pub fn wr(fh: hipFileHandle_t, buf: *const c_void, size: usize, foff: i64, boff: i64) -> isize {
    // SAFETY: as for `rd`.
    unsafe { hipFileWrite(fh, buf, size, foff, boff) }
}

/// `hipFileRead` with `errno` cleared first; returns the result and `errno` right after.
pub fn rd_e(
    fh: hipFileHandle_t,
    buf: *mut c_void,
    size: usize,
    foff: i64,
    boff: i64,
) -> (isize, c_int) {
    set_errno(0);
    let r = rd(fh, buf, size, foff, boff);
    (r, errno())
}

/// `hipFileWrite` with `errno` cleared first; returns the result and `errno` right after.
pub fn wr_e(
    fh: hipFileHandle_t,
    buf: *const c_void,
    size: usize,
    foff: i64,
    boff: i64,
) -> (isize, c_int) {
    set_errno(0);
    let r = wr(fh, buf, size, foff, boff);
    (r, errno())
}

/// hipMemset on device memory.
pub fn fill(p: *mut c_void, v: u8, len: usize) {
    // SAFETY: hipsim validates the device range.
    assert_eq!(
        unsafe { (sim().memset)(p, c_int::from(v), len) },
        0,
        "hipMemset"
    );
}

/// A device allocation whose bytes are all `v`.
pub fn device_filled(len: usize, v: u8) -> DeviceBuf {
    let d = sim().device_alloc(len);
    fill(d.ptr, v, len);
    d
}

/// Abort the child if it has not finished after `secs` (a hang would otherwise block the
/// parent test forever).
pub fn watchdog(secs: u64) {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(secs));
        eprintln!("watchdog: the test did not finish within {secs} s (a request hangs?)");
        std::process::abort();
    });
}

/// Whether the fastpath can work at all in the scratch directory (it needs `O_DIRECT`).
pub fn fastpath_possible(test: &str) -> bool {
    let ok = odirect_works();
    if !ok {
        eprintln!(
            "{test}: O_DIRECT does not work in {}; fastpath assertions skipped",
            scratch_dir().display()
        );
    }
    ok
}

/// The hipsim counters that say which backend served a request: calls of the fastpath entry
/// points, and bytes copied between host and device memory by any copy function (the engine
/// uses `hipMemcpy` for single chunks and `hipMemcpyAsync` on its own streams when it
/// pipelines several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Paths {
    pub fast_read: u64,
    pub fast_write: u64,
    pub copied: u64,
}

pub fn paths() -> Paths {
    let s = sim();
    Paths {
        fast_read: s.counter("hipAmdFileRead"),
        fast_write: s.counter("hipAmdFileWrite"),
        copied: s.counter("h2d_bytes") + s.counter("d2h_bytes"),
    }
}

pub fn paths_since(before: Paths) -> Paths {
    let now = paths();
    Paths {
        fast_read: now.fast_read - before.fast_read,
        fast_write: now.fast_write - before.fast_write,
        copied: now.copied - before.copied,
    }
}

pub fn assert_fastpath(d: Paths, what: &str) {
    assert_eq!(
        d.fast_read + d.fast_write,
        1,
        "{what}: one fastpath call expected, got {d:?}"
    );
    assert_eq!(
        d.copied, 0,
        "{what}: no bounce copy expected on the fastpath, got {d:?}"
    );
}

/// The fallback served a request of `bytes`: no fastpath call, and its bounce copies moved
/// exactly the request's bytes (a copy of more would move bytes the request does not own,
/// of fewer would lose some).
pub fn assert_fallback(d: Paths, what: &str, bytes: usize) {
    assert_eq!(
        d.fast_read + d.fast_write,
        0,
        "{what}: the fastpath must not be called, got {d:?}"
    );
    assert_eq!(
        d.copied, bytes as u64,
        "{what}: the fallback copies exactly the request's bytes through pinned bounce \
         buffers, got {d:?}"
    );
}

pub fn assert_host(d: Paths, what: &str) {
    assert_eq!(
        d,
        Paths {
            fast_read: 0,
            fast_write: 0,
            copied: 0
        },
        "{what}: host I/O calls no GPU copy"
    );
}

/// Whether a request at `addr` (absolute memory address), `foff`, `size` is aligned for the
/// fastpath (4 KiB everything).
pub fn aligned(addr: usize, foff: usize, size: usize) -> bool {
    addr % K4 == 0 && foff % K4 == 0 && size % K4 == 0
}
