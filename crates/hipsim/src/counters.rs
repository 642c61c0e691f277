//! Named counters and gauges that tests read through `hipsimCounter`.
//!
//! * Call counters: every exported HIP/CUDA function bumps a counter named exactly like the
//!   function (`"hipMemcpy"`, `"cuMemcpyHtoDAsync_v2"`, ...), whether the call succeeds or not.
//! * Byte counters: `"h2d_bytes"`, `"d2h_bytes"`, `"d2d_bytes"`, `"h2h_bytes"` (every copy that
//!   completed, sync or async, HIP or CUDA), `"memset_bytes"`, `"fastpath_read_bytes"`,
//!   `"fastpath_write_bytes"`, `"cufile_read_bytes"`, `"cufile_write_bytes"` (bytes moved by
//!   `cuFileRead` / `cuFileWrite`).
//! * Event counters: `"copies"` (copies that moved bytes), `"copy_faults_injected"` (copies
//!   failed by the `fail_copy` fault), `"host_funcs_run"` (host functions executed by stream
//!   workers), `"cufile_registered_buf_ios"` (`cuFileRead/Write` calls whose `bufPtr_base` is a
//!   buffer registered with `cuFileBufRegister`), `"stream_value_waits"` (waits on a memory
//!   value that completed), `"contexts_broken"` (devices whose context a kernel fault broke,
//!   see [`crate::device`]).
//! * Staging kernel (see [`crate::kernels`]): `"stage_launches"` (launches of `hipfile_stage`
//!   queued by `cuLaunchKernel` / `cuLaunchCooperativeKernel`), `"stage_segments"` (ring
//!   serials the kernel consumed), `"stage_bytes"` (bytes its segment copies moved; they count
//!   in the direction counters and `"copies"` too).
//! * Gauges ([`Gauge`]): `"pinned_bytes_live"`, `"pinned_bytes_peak"`, `"registered_bytes_live"`,
//!   `"device_bytes_live"`, `"managed_bytes_live"`, `"streams_live"`,
//!   `"per_thread_streams_live"` (per-thread default streams not yet gone: an exited thread's
//!   goes once its queued work drained),
//!   `"cufile_driver_opens"` (the cuFile driver's open count), `"cufile_handles_live"`,
//!   `"cufile_bufs_live"` (file handles and buffers registered with cuFile and not yet
//!   deregistered), `"copies_running"` and `"copies_running_peak"` (copies in the delay of the
//!   `copy_delay_us` fault: how many were in flight together).
//!
//! [`reset`] zeroes every counter; gauges describe live state and are kept, except the peaks
//! (`"pinned_bytes_peak"`, `"copies_running_peak"`), which restart from the live values.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

use parking_lot::RwLock;

static COUNTERS: LazyLock<RwLock<HashMap<&'static str, AtomicU64>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// Adds `n` to the counter `name`, creating it on first use.
pub fn add(name: &'static str, n: u64) {
    {
        let map = COUNTERS.read();
        if let Some(c) = map.get(name) {
            c.fetch_add(n, Ordering::Relaxed);
            return;
        }
    }
    COUNTERS
        .write()
        .entry(name)
        .or_insert_with(|| AtomicU64::new(0))
        .fetch_add(n, Ordering::Relaxed);
}

/// Adds one to the counter `name`.
pub fn bump(name: &'static str) {
    add(name, 1);
}

/// Live-state gauges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gauge {
    /// Bytes of live `hipHostMalloc` / `cuMemHostAlloc` / `cuMemAllocHost` memory.
    PinnedBytes,
    /// Bytes of live `hipHostRegister` / `cuMemHostRegister` ranges.
    RegisteredBytes,
    /// Bytes of live device allocations.
    DeviceBytes,
    /// Bytes of live managed allocations.
    ManagedBytes,
    /// Streams created by `hipStreamCreate*` / `cuStreamCreate` and not destroyed (the lazily
    /// created default streams are not counted).
    Streams,
    /// Per-thread default streams (handle 2), one per thread and device that named the
    /// handle: those of live threads, and those of exited threads until their queued work
    /// drained.
    PerThreadStreams,
    /// Open count of the cuFile driver (`cuFileDriverOpen` minus `cuFileDriverClose`).
    CufileDriverOpens,
    /// File handles registered with cuFile.
    CufileHandles,
    /// Buffers registered with cuFile.
    CufileBufs,
    /// Copies in the delay of the `copy_delay_us` fault.
    CopiesRunning,
}

const GAUGES: usize = 10;
static LIVE: [AtomicU64; GAUGES] = [const { AtomicU64::new(0) }; GAUGES];
static PINNED_PEAK: AtomicU64 = AtomicU64::new(0);
static COPIES_PEAK: AtomicU64 = AtomicU64::new(0);

/// Raises a gauge by `n`.
pub fn gauge_add(g: Gauge, n: u64) {
    let now = LIVE[g as usize]
        .fetch_add(n, Ordering::Relaxed)
        .saturating_add(n);
    match g {
        Gauge::PinnedBytes => PINNED_PEAK.fetch_max(now, Ordering::Relaxed),
        Gauge::CopiesRunning => COPIES_PEAK.fetch_max(now, Ordering::Relaxed),
        _ => 0,
    };
}

/// Lowers a gauge by `n` (saturating at zero).
pub fn gauge_sub(g: Gauge, n: u64) {
    // The closure never returns None, so fetch_update cannot fail.
    let _ = LIVE[g as usize].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        Some(v.saturating_sub(n))
    });
}

fn gauge_by_name(name: &str) -> Option<u64> {
    let g = match name {
        "pinned_bytes_live" => Gauge::PinnedBytes,
        "pinned_bytes_peak" => return Some(PINNED_PEAK.load(Ordering::Relaxed)),
        "registered_bytes_live" => Gauge::RegisteredBytes,
        "device_bytes_live" => Gauge::DeviceBytes,
        "managed_bytes_live" => Gauge::ManagedBytes,
        "streams_live" => Gauge::Streams,
        "per_thread_streams_live" => Gauge::PerThreadStreams,
        "cufile_driver_opens" => Gauge::CufileDriverOpens,
        "cufile_handles_live" => Gauge::CufileHandles,
        "cufile_bufs_live" => Gauge::CufileBufs,
        "copies_running" => Gauge::CopiesRunning,
        "copies_running_peak" => return Some(COPIES_PEAK.load(Ordering::Relaxed)),
        _ => return None,
    };
    Some(LIVE[g as usize].load(Ordering::Relaxed))
}

/// Current value of a counter or gauge; unknown names read as 0.
pub fn get(name: &str) -> u64 {
    if let Some(v) = gauge_by_name(name) {
        return v;
    }
    COUNTERS
        .read()
        .get(name)
        .map_or(0, |c| c.load(Ordering::Relaxed))
}

/// Zeroes every counter and restarts the pinned-memory peak from the live value.
pub fn reset() {
    for c in COUNTERS.read().values() {
        c.store(0, Ordering::Relaxed);
    }
    PINNED_PEAK.store(
        LIVE[Gauge::PinnedBytes as usize].load(Ordering::Relaxed),
        Ordering::Relaxed,
    );
    COPIES_PEAK.store(
        LIVE[Gauge::CopiesRunning as usize].load(Ordering::Relaxed),
        Ordering::Relaxed,
    );
}
