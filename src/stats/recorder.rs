//! The recording API the I/O path calls.
//!
//! Every function first checks the level (nothing is recorded at level 0 or in a detached
//! `fork()` child), then makes relaxed atomic adds straight into the shared block: no lock,
//! no allocation, no system call (the first call of the process creates the block; see
//! [`super::shm`]). Levels 1, 2 and 3 record the same counters.
//!
//! Where a record goes:
//! - Fastpath and Fallback I/O go to the \[D\] per-GPU table (backend index 0 and 1), so AMD's
//!   `ais-stats` sees them, and to the extension's totals.
//! - Host-backend I/O exists only in our extension (\[D\] has no slot for it): its totals, and
//!   its per-GPU table when the buffer belongs to a GPU.
//! - Every successful I/O also counts in the extension's size histogram (all backends),
//!   which feeds the `hipFileGetStatsL2` histograms.
//!
//! **GPU index.** The GPU an I/O is attributed to is the `device` argument: the device that
//! owns the *buffer*. Upstream uses the calling thread's current HIP device
//! instead, which attributes a transfer to the wrong GPU whenever a thread
//! moves data for a GPU that is not its current one (common in multi-GPU loaders); the
//! buffer's device is where the bytes actually went, and it costs no runtime call on the
//! I/O path. A `device` of -1 (host memory) or ≥ 16 has no per-GPU slot: the I/O is dropped
//! from the per-GPU tables but still counted in the extension's totals.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
#[cfg(any(test, feature = "test-internals"))]
use std::time::Duration;

use super::buckets::bucket;
use super::layout::{
    dir_index, ext_backend, refusal_slot, v1_backend, IoTotals, PerGpuStatsV1, SharedStats,
    MAX_GPUS,
};
use super::shm::recording;
use crate::vocab::Direction;
use crate::vocab::{BackendKind, Refusal};

#[inline]
fn add(counter: &AtomicU64, v: u64) {
    counter.fetch_add(v, Relaxed);
}

/// The per-GPU slot of `device`, if it has one.
#[inline]
fn gpu_slot(device: i32) -> Option<usize> {
    usize::try_from(device).ok().filter(|&g| g < MAX_GPUS)
}

#[inline]
fn mark_in_use(p: &PerGpuStatsV1) {
    // Load first: after the first record the line stays shared instead of being written.
    if p.in_use.load(Relaxed) == 0 {
        p.in_use.store(1, Relaxed);
    }
}

#[inline]
fn add_success(t: &IoTotals, bytes: u64, us: u64, aligned: bool) {
    add(&t.ops, 1);
    add(&t.bytes, bytes);
    add(&t.time_us, us);
    if !aligned {
        add(&t.unaligned, 1);
    }
}

#[inline]
fn add_failure(t: &IoTotals, requested: u64) {
    add(&t.errors, 1);
    add(&t.error_bytes, requested);
}

/// A successful I/O: `bytes` is the count returned to the caller, `elapsed` the time spent
/// in the backend (steady clock, from the start of the backend call to its return),
/// `device` the buffer's device (-1 for host memory), `aligned` whether offset, size and
/// address met the file's direct-I/O alignment (always true on the fastpath, which refuses
/// anything else).
#[cfg(any(test, feature = "test-internals"))]
pub fn io_done(
    dir: Direction,
    backend: BackendKind,
    device: i32,
    bytes: u64,
    elapsed: Duration,
    aligned: bool,
) {
    let Some(s) = recording() else { return };
    let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
    add_done(s, dir, backend, device, bytes, us, aligned);
}

/// A failed I/O of `requested` bytes (counted in the bucket of the requested size).
#[cfg(any(test, feature = "test-internals"))]
pub fn io_failed(dir: Direction, backend: BackendKind, device: i32, requested: u64) {
    let Some(s) = recording() else { return };
    add_failed(s, dir, backend, device, requested);
}

/// One backend call of the I/O path, recorded with a single level check (target T9).
#[derive(Clone, Copy)]
pub struct IoCall {
    /// Direction.
    pub dir: Direction,
    /// The backend that ran it.
    pub backend: BackendKind,
    /// The buffer's device (-1 for host memory).
    pub device: i32,
    /// Bytes requested.
    pub requested: u64,
    /// Whether offset, size and address met the direct-I/O alignment.
    pub aligned: bool,
    /// The fastpath's refusal, when the fallback serves a request the fastpath declined.
    pub declined: Option<Refusal>,
    /// Where it is recorded (`None` at level 0) and the stopwatch's start reading.
    pub recording: Option<(&'static SharedStats, super::clock::Start)>,
}

/// Where an [`IoCall`] starting now is recorded, and the stopwatch's start reading (no clock
/// read when nothing is recorded).
#[inline(always)]
pub fn start() -> Option<(&'static SharedStats, super::clock::Start)> {
    recording().map(|s| (s, super::clock::now()))
}

/// The outcome of an [`IoCall`]: `Some(bytes returned)` or `None` for a failure. Records
/// what [`io_done`] / [`io_failed`] record, plus the fastpath refusal ([`refused`]).
#[inline(always)]
pub fn io_call(call: IoCall, outcome: Option<u64>) {
    let Some((s, start)) = call.recording else {
        return;
    };
    if let Some(r) = call.declined {
        add_refusal(s, BackendKind::Fastpath, r);
    }
    match outcome {
        Some(bytes) => {
            let us = super::clock::elapsed_us(start);
            add_done(
                s,
                call.dir,
                call.backend,
                call.device,
                bytes,
                us,
                call.aligned,
            );
        }
        None => add_failed(s, call.dir, call.backend, call.device, call.requested),
    }
}

#[inline(always)]
fn add_done(
    s: &SharedStats,
    dir: Direction,
    backend: BackendKind,
    device: i32,
    bytes: u64,
    us: u64,
    aligned: bool,
) {
    let d = dir_index(dir);
    let k = bucket(bytes);
    match (v1_backend(backend), gpu_slot(device)) {
        (Some(b), Some(g)) => {
            let p = &s.v1.per_gpu[g][b];
            mark_in_use(p);
            add(&p.io_size_bytes[d].buckets[k], bytes);
            add(&p.io_count[d].buckets[k], 1);
            add(&p.io_time_us[d].buckets[k], us);
            if !aligned {
                add(&p.unaligned_count[d], 1);
            }
        }
        (None, Some(g)) => add_success(&s.ext.host_per_gpu[g][d], bytes, us, aligned),
        (_, None) => {}
    }
    add_success(&s.ext.io[ext_backend(backend)][d], bytes, us, aligned);
    add(&s.ext.size_hist[d].buckets[k], 1);
}

#[inline(never)]
fn add_failed(s: &SharedStats, dir: Direction, backend: BackendKind, device: i32, requested: u64) {
    let d = dir_index(dir);
    match (v1_backend(backend), gpu_slot(device)) {
        (Some(b), Some(g)) => {
            let p = &s.v1.per_gpu[g][b];
            mark_in_use(p);
            add(&p.error_count[d].buckets[bucket(requested)], 1);
        }
        (None, Some(g)) => add_failure(&s.ext.host_per_gpu[g][d], requested),
        (_, None) => {}
    }
    add_failure(&s.ext.io[ext_backend(backend)][d], requested);
}

/// A successful `hipFileHandleRegister`.
pub fn file_registered() {
    if let Some(s) = recording() {
        add(&s.v1.file_registrations, 1);
    }
}

/// A successful `hipFileBufRegister`.
pub fn buffer_registered() {
    if let Some(s) = recording() {
        add(&s.v1.buffer_registrations, 1);
    }
}

/// A file handle actually deregistered (extension only).
pub fn file_deregistered() {
    if let Some(s) = recording() {
        add(&s.ext.file_deregistrations, 1);
    }
}

/// A buffer actually deregistered (extension only).
pub fn buffer_deregistered() {
    if let Some(s) = recording() {
        add(&s.ext.buffer_deregistrations, 1);
    }
}

/// `backend` refused a request for `reason`. Fastpath refusals also count in \[D\]'s
/// `fastpathRejections`.
pub fn refused(backend: BackendKind, reason: Refusal) {
    if let Some(s) = recording() {
        add_refusal(s, backend, reason);
    }
}

#[inline(always)]
fn add_refusal(s: &SharedStats, backend: BackendKind, reason: Refusal) {
    if backend == BackendKind::Fastpath {
        add(&s.v1.fastpath_rejections, 1);
    }
    add(
        &s.ext.refusals[ext_backend(backend)][refusal_slot(reason)],
        1,
    );
}

/// A fastpath failure retried on the fallback (the retried I/O itself is then recorded by
/// [`io_done`] / [`io_failed`] with `BackendKind::Fallback`).
pub fn fallback_retry() {
    if let Some(s) = recording() {
        add(&s.ext.fallback_retries, 1);
    }
}

/// Pinned bounce-buffer bytes now in use, process-wide (the peak is kept too). Use either
/// this gauge or the [`bounce_allocated`] / [`bounce_released`] deltas, not both.
#[cfg(any(test, feature = "test-internals"))]
pub fn bounce_bytes(in_use: u64) {
    if let Some(s) = recording() {
        s.ext.bounce_bytes_in_use.store(in_use, Relaxed);
        s.ext.bounce_bytes_peak.fetch_max(in_use, Relaxed);
    }
}

/// `bytes` of pinned bounce memory were allocated (adds to the in-use gauge and its peak).
pub fn bounce_allocated(bytes: u64) {
    if let Some(s) = recording() {
        let now = s
            .ext
            .bounce_bytes_in_use
            .fetch_add(bytes, Relaxed)
            .saturating_add(bytes);
        s.ext.bounce_bytes_peak.fetch_max(now, Relaxed);
    }
}

/// `bytes` of pinned bounce memory were freed.
pub fn bounce_released(bytes: u64) {
    if let Some(s) = recording() {
        let _ = s
            .ext
            .bounce_bytes_in_use
            .fetch_update(Relaxed, Relaxed, |v| Some(v.saturating_sub(bytes)));
    }
}

/// An asynchronous (stream-ordered) operation accepted at submission.
pub fn async_submitted(dir: Direction) {
    if let Some(s) = recording() {
        add(&s.ext.async_ops[dir_index(dir)], 1);
    }
}

/// `n` batch operations submitted in direction `dir`. For the batch API; nothing calls it yet.
pub fn batch_submitted(dir: Direction, n: u64) {
    if let Some(s) = recording() {
        add(&s.ext.batch_ops[dir_index(dir)], n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::snapshot_self;

    // The block is process-wide and other tests may record concurrently: only check that our
    // own records arrive (counters grow by at least what we added).
    #[test]
    fn records_reach_the_block() {
        if crate::stats::shm::shared().level() == 0 {
            return;
        }
        let before = snapshot_self();
        io_done(
            Direction::Read,
            BackendKind::Fallback,
            15,
            8192,
            Duration::from_micros(10),
            false,
        );
        io_failed(Direction::Write, BackendKind::Host, -1, 4096);
        refused(BackendKind::Fastpath, Refusal::UnalignedSize);
        let after = snapshot_self();
        assert!(after.gpus[15][1].io_count[0][2] > before.gpus[15][1].io_count[0][2]);
        assert!(after.gpus[15][1].unaligned_count[0] > before.gpus[15][1].unaligned_count[0]);
        let (eb, ea) = (before.ext.unwrap(), after.ext.unwrap());
        assert!(ea.io[2][1].errors > eb.io[2][1].errors);
        assert!(ea.io[2][1].error_bytes >= eb.io[2][1].error_bytes + 4096);
        assert!(
            ea.refusals[0][refusal_slot(Refusal::UnalignedSize)]
                > eb.refusals[0][refusal_slot(Refusal::UnalignedSize)]
        );
        assert!(after.fastpath_rejections > before.fastpath_rejections);
    }

    #[test]
    fn gpu_slots() {
        assert_eq!(gpu_slot(-1), None);
        assert_eq!(gpu_slot(0), Some(0));
        assert_eq!(gpu_slot(15), Some(15));
        assert_eq!(gpu_slot(16), None);
        assert_eq!(gpu_slot(i32::MIN), None);
    }
}
