//! The shared statistics block: a `#[repr(C)]` mirror of AMD's `StatsV1`,
//! followed by this library's versioned extension.
//!
//! Shorthand used in the statistics code: \[D\] is the block of AMD's development branch
//! (`StatsV1`, what its `ais-stats` reads today), \[R\] the retired block of its 0.1 release
//! (`level`, `version`, `counters[64]`).
//!
//! Every field is an `AtomicU64`, so the block is 8-byte words with no padding: AMD's
//! `ais-stats` reads the first [`V1_SIZE`] bytes of our memfd as its own `Stats`, our client
//! reads AMD's, and the compile-time asserts below pin every size and offset it depends on.
//!
//! The extension starts at byte [`V1_SIZE`] with a header (`magic`, `version`, `size`). A
//! reader that knows only \[D\] never looks past [`V1_SIZE`]; our reader uses the extension
//! only when the magic matches, the version is at least 1 and `size` covers the fields it
//! knows. New fields are only ever appended (and `size` grows); the version changes only if
//! the meaning of an existing field does.
//!
//! Backend indices: \[D\] has two (`0` = Fastpath, `1` = Fallback, [`V1_BACKENDS`]); the
//! extension has three (`2` = Host, [`EXT_BACKENDS`]). Direction index: `0` = read, `1` =
//! write. Refusal reasons have fixed slots ([`refusal_slot`], [`REFUSALS`]).

use std::ffi::c_int;
use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::OwnedFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::vocab::Direction;
use crate::vocab::{BackendKind, Refusal};

/// Number of buckets in every histogram.
pub const BUCKETS: usize = 16;

/// Per-GPU slots of the \[D\] block (`HIPFILE_MAX_GPUS`).
pub(crate) const MAX_GPUS: usize = 16;
/// Backends of the \[D\] block: Fastpath, Fallback.
pub(crate) const V1_BACKENDS: usize = 2;
/// Backends of the extension: Fastpath, Fallback, Host.
pub(crate) const EXT_BACKENDS: usize = 3;
/// Refusal-reason slots per backend in the extension (room for new [`Refusal`] variants).
pub const REFUSAL_SLOTS: usize = 16;

/// `version` of the \[D\] block (`PerGpuStatsV1::version`).
pub(crate) const V1_VERSION: u64 = 1;
/// Size of AMD's retired \[R\] block (`level`, `version`, `counters[64]`), which also calls
/// itself version 1: readers tell the two apart by the memfd's size.
pub const RETIRED_SIZE: usize = 528;
/// Size of the \[D\] block.
pub(crate) const V1_SIZE: usize = size_of::<StatsV1>();
/// Magic of our extension: the bytes `"hipfileX"` read as a little-endian `u64`.
pub(crate) const EXT_MAGIC: u64 = u64::from_le_bytes(*b"hipfileX");
/// Version of the extension layout written by this library.
pub(crate) const EXT_VERSION: u64 = 1;
/// Size of extension version 1.
pub(crate) const EXT_V1_SIZE: usize = size_of::<ExtensionV1>();
/// Size of the whole block (the memfd's size).
pub const SHARED_SIZE: usize = size_of::<SharedStats>();

/// `StatsHistogram`: one counter per size bucket.
#[repr(C)]
#[derive(Default)]
pub struct Histogram {
    /// The buckets (see [`super::buckets`]).
    pub buckets: [AtomicU64; BUCKETS],
}

/// `PerGpuStatsV1`: the counters of one GPU and one backend.
#[repr(C)]
#[derive(Default)]
pub struct PerGpuStatsV1 {
    /// Set to 1 on the first record.
    pub in_use: AtomicU64,
    /// `[read, write]`: sum of the bytes of successful I/Os, per size bucket.
    pub io_size_bytes: [Histogram; 2],
    /// `[read, write]`: number of successful I/Os, per size bucket.
    pub io_count: [Histogram; 2],
    /// `[read, write]`: sum of elapsed microseconds of successful I/Os, per size bucket.
    pub io_time_us: [Histogram; 2],
    /// `[read, write]`: failed I/Os, per bucket of the requested size.
    pub error_count: [Histogram; 2],
    /// `[read, write]`: I/Os that violated direct-I/O alignment.
    pub unaligned_count: [AtomicU64; 2],
}

/// `StatsV1` (`StatsTemplate<PerGpuStatsV1, 16>`): AMD's \[D\] block.
#[repr(C)]
pub struct StatsV1 {
    /// Always [`V1_VERSION`].
    pub version: AtomicU64,
    /// The statistics level, 0–3.
    pub level: AtomicU64,
    /// Successful file-handle registrations.
    pub file_registrations: AtomicU64,
    /// Successful buffer registrations.
    pub buffer_registrations: AtomicU64,
    /// Fastpath refusals.
    pub fastpath_rejections: AtomicU64,
    /// `[gpu][backend]`, backend 0 = Fastpath, 1 = Fallback.
    pub per_gpu: [[PerGpuStatsV1; V1_BACKENDS]; MAX_GPUS],
}

/// Totals of one backend and one direction (extension).
#[repr(C)]
#[derive(Default)]
pub struct IoTotals {
    /// Successful I/Os.
    pub ops: AtomicU64,
    /// Bytes of successful I/Os.
    pub bytes: AtomicU64,
    /// Elapsed microseconds of successful I/Os.
    pub time_us: AtomicU64,
    /// Failed I/Os.
    pub errors: AtomicU64,
    /// Requested bytes of failed I/Os.
    pub error_bytes: AtomicU64,
    /// I/Os that violated direct-I/O alignment.
    pub unaligned: AtomicU64,
}

/// Version 1 of our extension, placed right after [`StatsV1`].
#[repr(C)]
pub struct ExtensionV1 {
    /// [`EXT_MAGIC`].
    pub magic: AtomicU64,
    /// [`EXT_VERSION`].
    pub version: AtomicU64,
    /// Size of the extension in bytes, header included.
    pub size: AtomicU64,
    /// `[backend][direction]` totals over every device, the I/Os of devices without a
    /// per-GPU slot (host memory, device ≥ 16) included.
    pub io: [[IoTotals; 2]; EXT_BACKENDS],
    /// `[direction]`: successful I/Os of every backend and device, per size bucket.
    pub size_hist: [Histogram; 2],
    /// `[gpu][direction]`: Host-backend I/Os whose buffer belongs to GPU `gpu`.
    pub host_per_gpu: [[IoTotals; 2]; MAX_GPUS],
    /// `[backend][slot]`: refusals per reason (slots of [`refusal_slot`]).
    pub refusals: [[AtomicU64; REFUSAL_SLOTS]; EXT_BACKENDS],
    /// Fastpath failures retried on the fallback.
    pub fallback_retries: AtomicU64,
    /// `[direction]`: asynchronous (stream) operations submitted.
    pub async_ops: [AtomicU64; 2],
    /// `[direction]`: batch operations submitted.
    pub batch_ops: [AtomicU64; 2],
    /// File-handle deregistrations.
    pub file_deregistrations: AtomicU64,
    /// Buffer deregistrations.
    pub buffer_deregistrations: AtomicU64,
    /// Pinned bounce-buffer bytes in use (last value reported).
    pub bounce_bytes_in_use: AtomicU64,
    /// Highest value of `bounce_bytes_in_use` seen.
    pub bounce_bytes_peak: AtomicU64,
}

/// The whole shared block: the \[D\] layout, then our extension.
#[repr(C)]
pub struct SharedStats {
    /// AMD's \[D\] layout.
    pub v1: StatsV1,
    /// Our extension.
    pub ext: ExtensionV1,
}

impl SharedStats {
    /// A zeroed block in a new sealed memfd named `name` (see [`super::shm::create_sealed`]),
    /// mapped read-write shared for the rest of the process.
    pub fn in_memfd(
        name: &std::ffi::CStr,
        seals: c_int,
    ) -> io::Result<(OwnedFd, &'static SharedStats)> {
        let (fd, ptr) = super::shm::create_sealed(name, SHARED_SIZE, seals)?;
        // SAFETY: page-aligned, SHARED_SIZE bytes, zero-filled by ftruncate (a valid
        // SharedStats: atomics only), never unmapped (so 'static), and shared only with readers
        // that cannot write (the seals); our writes are atomic.
        Ok((fd, unsafe { ptr.cast::<SharedStats>().as_ref() }))
    }

    /// A zeroed block on the heap, leaked (it lives as long as the process).
    pub fn on_heap() -> &'static SharedStats {
        let layout = std::alloc::Layout::new::<SharedStats>();
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<SharedStats>();
        match NonNull::new(ptr) {
            // SAFETY: a fresh, aligned allocation of one SharedStats, all zero: a valid value,
            // since it consists of AtomicU64s only. Leaked, so 'static.
            Some(p) => unsafe { p.as_ref() },
            None => std::alloc::handle_alloc_error(layout),
        }
    }

    /// The block as its 8-byte words, in layout order.
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: `SharedStats` is `repr(C)` and consists of `AtomicU64`s only (no padding:
        // the size assert below), so it is exactly SHARED_SIZE / 8 words, aligned as one.
        unsafe {
            std::slice::from_raw_parts(
                std::ptr::from_ref(self).cast::<AtomicU64>(),
                SHARED_SIZE / 8,
            )
        }
    }

    /// Write the constant header words into a zeroed block.
    pub fn init_header(&self, level: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.v1.version.store(V1_VERSION, Relaxed);
        self.v1.level.store(level, Relaxed);
        self.ext.magic.store(EXT_MAGIC, Relaxed);
        self.ext.version.store(EXT_VERSION, Relaxed);
        self.ext.size.store(EXT_V1_SIZE as u64, Relaxed);
    }
}

/// Direction index: 0 = read, 1 = write.
#[inline]
pub(crate) const fn dir_index(dir: Direction) -> usize {
    match dir {
        Direction::Read => 0,
        Direction::Write => 1,
    }
}

/// Index of a backend in the \[D\] per-GPU table; `None` for Host (extension only).
#[inline]
pub(crate) const fn v1_backend(kind: BackendKind) -> Option<usize> {
    match kind {
        BackendKind::Fastpath => Some(0),
        BackendKind::Fallback => Some(1),
        BackendKind::Host => None,
    }
}

/// Index of a backend in the extension.
#[inline]
pub(crate) const fn ext_backend(kind: BackendKind) -> usize {
    match kind {
        BackendKind::Fastpath => 0,
        BackendKind::Fallback => 1,
        BackendKind::Host => 2,
    }
}

/// Backend names by extension index (report order).
pub(crate) const EXT_BACKEND_NAMES: [&str; EXT_BACKENDS] = ["Fastpath", "Fallback", "Host"];

/// The refusal reason stored in each slot, by slot. Slots are part of the shared layout:
/// never reorder; a new [`Refusal`] variant takes the next free slot.
pub(crate) const REFUSALS: [Refusal; 11] = [
    Refusal::NoFastpathEntryPoints,
    Refusal::CompatForced,
    Refusal::NoODirect,
    Refusal::FileSystem,
    Refusal::UnalignedOffset,
    Refusal::UnalignedSize,
    Refusal::UnalignedMemory,
    Refusal::NotDeviceMemory,
    Refusal::NotHostMemory,
    Refusal::CompatDisabled,
    Refusal::HostDisabled,
];

/// The slot of a refusal reason (exhaustive: a new variant does not compile until it has one).
#[inline]
pub(crate) const fn refusal_slot(r: Refusal) -> usize {
    match r {
        Refusal::NoFastpathEntryPoints => 0,
        Refusal::CompatForced => 1,
        Refusal::NoODirect => 2,
        Refusal::FileSystem => 3,
        Refusal::UnalignedOffset => 4,
        Refusal::UnalignedSize => 5,
        Refusal::UnalignedMemory => 6,
        Refusal::NotDeviceMemory => 7,
        Refusal::NotHostMemory => 8,
        Refusal::CompatDisabled => 9,
        Refusal::HostDisabled => 10,
    }
}

// ---- layout assertions ----------------------------------------------------
const _: () = {
    assert!(size_of::<Histogram>() == 128);
    assert!(size_of::<PerGpuStatsV1>() == 1048);
    assert!(offset_of!(PerGpuStatsV1, in_use) == 0);
    assert!(offset_of!(PerGpuStatsV1, io_size_bytes) == 8);
    assert!(offset_of!(PerGpuStatsV1, io_count) == 264);
    assert!(offset_of!(PerGpuStatsV1, io_time_us) == 520);
    assert!(offset_of!(PerGpuStatsV1, error_count) == 776);
    assert!(offset_of!(PerGpuStatsV1, unaligned_count) == 1032);
    assert!(size_of::<StatsV1>() == 33_576);
    assert!(offset_of!(StatsV1, version) == 0);
    assert!(offset_of!(StatsV1, level) == 8);
    assert!(offset_of!(StatsV1, file_registrations) == 16);
    assert!(offset_of!(StatsV1, buffer_registrations) == 24);
    assert!(offset_of!(StatsV1, fastpath_rejections) == 32);
    assert!(offset_of!(StatsV1, per_gpu) == 40);
    // The extension: a header of three words, then the counters; no padding anywhere.
    assert!(size_of::<IoTotals>() == 48);
    assert!(offset_of!(ExtensionV1, magic) == 0);
    assert!(offset_of!(ExtensionV1, version) == 8);
    assert!(offset_of!(ExtensionV1, size) == 16);
    assert!(offset_of!(ExtensionV1, io) == 24);
    assert!(offset_of!(ExtensionV1, size_hist) == 312);
    assert!(offset_of!(ExtensionV1, host_per_gpu) == 568);
    assert!(offset_of!(ExtensionV1, refusals) == 2104);
    assert!(offset_of!(ExtensionV1, fallback_retries) == 2488);
    assert!(offset_of!(ExtensionV1, async_ops) == 2496);
    assert!(offset_of!(ExtensionV1, batch_ops) == 2512);
    assert!(offset_of!(ExtensionV1, file_deregistrations) == 2528);
    assert!(offset_of!(ExtensionV1, buffer_deregistrations) == 2536);
    assert!(offset_of!(ExtensionV1, bounce_bytes_in_use) == 2544);
    assert!(offset_of!(ExtensionV1, bounce_bytes_peak) == 2552);
    assert!(size_of::<ExtensionV1>() == 2560);
    assert!(offset_of!(SharedStats, ext) == 33_576);
    assert!(size_of::<SharedStats>() == 33_576 + 2560);
    assert!(REFUSALS.len() <= REFUSAL_SLOTS);
};

/// Where the I/O path finds the block while recording: one atomic load, `None` when not
/// recording. Only a `&'static SharedStats` ever goes in.
pub(crate) struct RecordingSlot(AtomicPtr<SharedStats>);

impl RecordingSlot {
    /// Empty.
    pub(crate) const fn new() -> RecordingSlot {
        RecordingSlot(AtomicPtr::new(std::ptr::null_mut()))
    }

    /// The block, if one is set.
    #[inline(always)]
    pub(crate) fn get(&self) -> Option<&'static SharedStats> {
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: only `set` stores a non-null pointer, and only from a `&'static SharedStats`.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// Record into `block` from now on, or stop (`None`).
    pub(crate) fn set(&self, block: Option<&'static SharedStats>) {
        let p = block.map_or(std::ptr::null_mut(), |b| std::ptr::from_ref(b).cast_mut());
        self.0.store(p, Ordering::Release);
    }
}

impl Default for RecordingSlot {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_slots_round_trip() {
        for (slot, r) in REFUSALS.iter().enumerate() {
            assert_eq!(refusal_slot(*r), slot, "{r:?}");
        }
    }

    #[test]
    fn magic_spells_hipfilex() {
        assert_eq!(&EXT_MAGIC.to_le_bytes(), b"hipfileX");
    }
}
