//! Decoding a statistics block (ours, AMD's \[D\] or AMD's retired \[R\] one) into plain numbers.
//!
//! The block is read one 8-byte word at a time through [`Words`]: from a byte slice (tests,
//! saved dumps) or from live shared memory, where every word is read with a relaxed atomic
//! load because the owner keeps adding to it. A snapshot is therefore not atomic across
//! counters (a concurrent I/O may be half counted), exactly as with AMD's reader.
//!
//! Which layout: a block of exactly [`RETIRED_SIZE`] bytes is \[R\] (`level`, `version`,
//! `counters[64]`); otherwise word 0 is the version and word 1 the level, and version 1 with
//! at least [`V1_SIZE`] bytes is \[D\]. Anything else is [`Layout::Unknown`] (the report then
//! prints only its two header lines, as upstream does). Our extension is used only when its
//! magic, version and size check out.

use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicU64, Ordering};

use super::buckets::BUCKETS;
use super::layout::{
    dir_index, ext_backend, v1_backend, ExtensionV1, Histogram, IoTotals, PerGpuStatsV1, StatsV1,
    EXT_BACKENDS, EXT_MAGIC, EXT_V1_SIZE, MAX_GPUS, REFUSAL_SLOTS, RETIRED_SIZE, V1_BACKENDS,
    V1_SIZE, V1_VERSION,
};
use crate::vocab::BackendKind;
use crate::vocab::Direction;

/// A source of 8-byte little-endian words.
pub(crate) trait Words {
    /// Length in bytes.
    fn len(&self) -> usize;
    /// The word at byte `offset` (a multiple of 8); 0 when out of range.
    fn word(&self, offset: usize) -> u64;
}

impl Words for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn word(&self, offset: usize) -> u64 {
        offset
            .checked_add(8)
            .and_then(|end| self.get(offset..end))
            .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
}

/// Words of live shared memory (our own block, or another process's mapped read-only),
/// read with relaxed atomic loads: the owner keeps adding to them.
impl Words for [AtomicU64] {
    fn len(&self) -> usize {
        <[AtomicU64]>::len(self) * 8
    }
    fn word(&self, offset: usize) -> u64 {
        if offset % 8 != 0 {
            return 0;
        }
        self.get(offset / 8)
            .map_or(0, |w| w.load(Ordering::Relaxed))
    }
}

/// Which layout a block has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// AMD's retired \[R\] block (528 bytes, four byte counters).
    Retired,
    /// AMD's \[D\] `StatsV1` (ours, possibly followed by our extension).
    V1,
    /// A version or size this reader does not know.
    Unknown,
}

/// One GPU × one backend of the \[D\] table (`PerGpuStatsV1`); index 0 = read, 1 = write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuBackendStats {
    /// Non-zero once anything was recorded.
    pub in_use: u64,
    /// Bytes of successful I/Os per size bucket.
    pub io_size_bytes: [[u64; BUCKETS]; 2],
    /// Successful I/Os per size bucket.
    pub io_count: [[u64; BUCKETS]; 2],
    /// Elapsed microseconds of successful I/Os per size bucket.
    pub io_time_us: [[u64; BUCKETS]; 2],
    /// Failed I/Os per bucket of the requested size.
    pub error_count: [[u64; BUCKETS]; 2],
    /// I/Os that violated direct-I/O alignment.
    pub unaligned_count: [u64; 2],
}

fn sum(v: &[u64]) -> u64 {
    v.iter().fold(0u64, |a, &b| a.saturating_add(b))
}

impl GpuBackendStats {
    /// This GPU and backend's totals in direction `dir` (`error_bytes` is not tracked by \[D\]).
    pub fn totals(&self, dir: Direction) -> Totals {
        let d = dir_index(dir);
        Totals {
            ops: sum(&self.io_count[d]),
            bytes: sum(&self.io_size_bytes[d]),
            time_us: sum(&self.io_time_us[d]),
            errors: sum(&self.error_count[d]),
            error_bytes: 0,
            unaligned: self.unaligned_count[d],
        }
    }
}

/// Totals of one backend (or GPU) and one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Successful I/Os.
    pub ops: u64,
    /// Bytes of successful I/Os.
    pub bytes: u64,
    /// Elapsed microseconds of successful I/Os.
    pub time_us: u64,
    /// Failed I/Os.
    pub errors: u64,
    /// Requested bytes of failed I/Os (extension only).
    pub error_bytes: u64,
    /// I/Os that violated direct-I/O alignment.
    pub unaligned: u64,
}

impl Totals {
    /// Field-wise saturating sum.
    pub fn plus(self, o: Totals) -> Totals {
        Totals {
            ops: self.ops.saturating_add(o.ops),
            bytes: self.bytes.saturating_add(o.bytes),
            time_us: self.time_us.saturating_add(o.time_us),
            errors: self.errors.saturating_add(o.errors),
            error_bytes: self.error_bytes.saturating_add(o.error_bytes),
            unaligned: self.unaligned.saturating_add(o.unaligned),
        }
    }

    /// Whether anything was recorded.
    pub fn is_active(&self) -> bool {
        self.ops != 0 || self.errors != 0
    }
}

/// Our extension, decoded (the block layout is `ExtensionV1`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extension {
    /// Extension version found in the block.
    pub version: u64,
    /// Extension size found in the block.
    pub size: u64,
    /// `[backend][direction]` totals over every device (backend 0 Fastpath, 1 Fallback, 2 Host).
    pub io: [[Totals; 2]; EXT_BACKENDS],
    /// `[direction]`: successful I/Os of every backend per size bucket.
    pub size_hist: [[u64; BUCKETS]; 2],
    /// `[gpu][direction]`: Host-backend I/O whose buffer belongs to that GPU.
    pub host_per_gpu: [[Totals; 2]; MAX_GPUS],
    /// `[backend][slot]`: refusals per reason (the slot of a reason: `api::stats::refusal_slot`).
    pub refusals: [[u64; REFUSAL_SLOTS]; EXT_BACKENDS],
    /// Fastpath failures retried on the fallback.
    pub fallback_retries: u64,
    /// `[direction]`: asynchronous operations submitted.
    pub async_ops: [u64; 2],
    /// `[direction]`: batch operations submitted.
    pub batch_ops: [u64; 2],
    /// File-handle deregistrations.
    pub file_deregistrations: u64,
    /// Buffer deregistrations.
    pub buffer_deregistrations: u64,
    /// Bounce-buffer bytes in use.
    pub bounce_bytes_in_use: u64,
    /// Peak bounce-buffer bytes in use.
    pub bounce_bytes_peak: u64,
}

/// A copy of a statistics block in plain numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Which layout the block had.
    pub layout: Layout,
    /// The block's version word.
    pub version: u64,
    /// The block's statistics level.
    pub level: u64,
    /// \[R\] only: fastpath read, fastpath write, fallback read, fallback write bytes.
    pub retired: [u64; 4],
    /// Successful file-handle registrations.
    pub file_registrations: u64,
    /// Successful buffer registrations.
    pub buffer_registrations: u64,
    /// Fastpath refusals.
    pub fastpath_rejections: u64,
    /// `[gpu][backend]` (\[D\] backends: 0 Fastpath, 1 Fallback).
    pub gpus: Box<[[GpuBackendStats; V1_BACKENDS]; MAX_GPUS]>,
    /// Our extension, when present and valid.
    pub ext: Option<Box<Extension>>,
}

/// Why a block could not be decoded at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Smaller than the two header words.
    TooSmall(usize),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::TooSmall(n) => write!(f, "statistics block of {n} bytes is too small"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl Snapshot {
    /// An all-zero snapshot of `layout`.
    fn empty(layout: Layout, version: u64, level: u64) -> Snapshot {
        Snapshot {
            layout,
            version,
            level,
            retired: [0; 4],
            file_registrations: 0,
            buffer_registrations: 0,
            fastpath_rejections: 0,
            gpus: Box::default(),
            ext: None,
        }
    }

    /// Decode a block held in memory (little-endian words), e.g. a saved copy of a memfd.
    pub fn from_bytes(bytes: &[u8]) -> Result<Snapshot, DecodeError> {
        Snapshot::decode(bytes)
    }

    /// Decode a block.
    pub(crate) fn decode<W: Words + ?Sized>(w: &W) -> Result<Snapshot, DecodeError> {
        let len = w.len();
        if len == RETIRED_SIZE {
            let (level, version) = (w.word(0), w.word(8));
            if version != 1 {
                return Ok(Snapshot::empty(Layout::Unknown, version, level));
            }
            let mut s = Snapshot::empty(Layout::Retired, version, level);
            for (i, v) in s.retired.iter_mut().enumerate() {
                *v = w.word(16 + 8 * i);
            }
            return Ok(s);
        }
        if len < 16 {
            return Err(DecodeError::TooSmall(len));
        }
        let (version, level) = (
            w.word(offset_of!(StatsV1, version)),
            w.word(offset_of!(StatsV1, level)),
        );
        if version != V1_VERSION || len < V1_SIZE {
            return Ok(Snapshot::empty(Layout::Unknown, version, level));
        }
        let mut s = Snapshot::empty(Layout::V1, version, level);
        s.file_registrations = w.word(offset_of!(StatsV1, file_registrations));
        s.buffer_registrations = w.word(offset_of!(StatsV1, buffer_registrations));
        s.fastpath_rejections = w.word(offset_of!(StatsV1, fastpath_rejections));
        for (g, row) in s.gpus.iter_mut().enumerate() {
            for (b, out) in row.iter_mut().enumerate() {
                let base = offset_of!(StatsV1, per_gpu)
                    + (g * V1_BACKENDS + b) * size_of::<PerGpuStatsV1>();
                *out = decode_gpu_backend(w, base);
            }
        }
        s.ext = decode_extension(w, V1_SIZE).map(Box::new);
        Ok(s)
    }

    /// Totals of `backend` in direction `dir`: the extension's (every device) when present,
    /// otherwise the sum of the \[D\] per-GPU table (nothing for Host).
    pub fn totals(&self, backend: BackendKind, dir: Direction) -> Totals {
        match &self.ext {
            Some(ext) => ext.io[ext_backend(backend)][dir_index(dir)],
            None => self.v1_totals(backend, dir),
        }
    }

    /// Sum of the \[D\] per-GPU table for `backend` (what AMD's report prints; Host: zero).
    pub fn v1_totals(&self, backend: BackendKind, dir: Direction) -> Totals {
        let Some(b) = v1_backend(backend) else {
            return Totals::default();
        };
        self.gpus
            .iter()
            .fold(Totals::default(), |acc, row| acc.plus(row[b].totals(dir)))
    }

    /// Totals of every backend in direction `dir`.
    pub fn all_backends(&self, dir: Direction) -> Totals {
        [
            BackendKind::Fastpath,
            BackendKind::Fallback,
            BackendKind::Host,
        ]
        .into_iter()
        .fold(Totals::default(), |acc, k| acc.plus(self.totals(k, dir)))
    }

    /// Whether GPU `g` has any \[D\] record (its `inUse` flag, either backend).
    pub fn gpu_in_use(&self, g: usize) -> bool {
        self.gpus
            .get(g)
            .is_some_and(|row| row.iter().any(|b| b.in_use != 0))
    }

    /// Host-backend totals of GPU `g` (extension only).
    pub fn host_gpu_totals(&self, g: usize, dir: Direction) -> Totals {
        self.ext
            .as_ref()
            .and_then(|e| e.host_per_gpu.get(g))
            .map_or_else(Totals::default, |t| t[dir_index(dir)])
    }

    /// Whether GPU `g` has any record, Host-backend I/O included.
    pub fn gpu_active(&self, g: usize) -> bool {
        self.gpu_in_use(g)
            || [Direction::Read, Direction::Write]
                .into_iter()
                .any(|d| self.host_gpu_totals(g, d).is_active())
    }

    /// `[direction]`: successful I/Os of every backend per size bucket (the extension's
    /// histogram, else the \[D\] counts summed over GPUs and backends).
    pub fn size_histogram(&self) -> [[u64; BUCKETS]; 2] {
        if let Some(ext) = &self.ext {
            return ext.size_hist;
        }
        let mut h = [[0u64; BUCKETS]; 2];
        for row in self.gpus.iter() {
            for b in row {
                for (d, hd) in h.iter_mut().enumerate() {
                    for (k, v) in hd.iter_mut().enumerate() {
                        *v = v.saturating_add(b.io_count[d][k]);
                    }
                }
            }
        }
        h
    }
}

fn decode_hist<W: Words + ?Sized>(w: &W, base: usize) -> [[u64; BUCKETS]; 2] {
    let mut h = [[0u64; BUCKETS]; 2];
    for (d, hd) in h.iter_mut().enumerate() {
        for (k, v) in hd.iter_mut().enumerate() {
            *v = w.word(base + d * size_of::<Histogram>() + 8 * k);
        }
    }
    h
}

fn decode_gpu_backend<W: Words + ?Sized>(w: &W, base: usize) -> GpuBackendStats {
    let u = base + offset_of!(PerGpuStatsV1, unaligned_count);
    GpuBackendStats {
        in_use: w.word(base + offset_of!(PerGpuStatsV1, in_use)),
        io_size_bytes: decode_hist(w, base + offset_of!(PerGpuStatsV1, io_size_bytes)),
        io_count: decode_hist(w, base + offset_of!(PerGpuStatsV1, io_count)),
        io_time_us: decode_hist(w, base + offset_of!(PerGpuStatsV1, io_time_us)),
        error_count: decode_hist(w, base + offset_of!(PerGpuStatsV1, error_count)),
        unaligned_count: [w.word(u), w.word(u + 8)],
    }
}

fn decode_totals<W: Words + ?Sized>(w: &W, base: usize) -> Totals {
    Totals {
        ops: w.word(base + offset_of!(IoTotals, ops)),
        bytes: w.word(base + offset_of!(IoTotals, bytes)),
        time_us: w.word(base + offset_of!(IoTotals, time_us)),
        errors: w.word(base + offset_of!(IoTotals, errors)),
        error_bytes: w.word(base + offset_of!(IoTotals, error_bytes)),
        unaligned: w.word(base + offset_of!(IoTotals, unaligned)),
    }
}

fn decode_extension<W: Words + ?Sized>(w: &W, base: usize) -> Option<Extension> {
    let len = w.len();
    if len < base + 24 || w.word(base + offset_of!(ExtensionV1, magic)) != EXT_MAGIC {
        return None;
    }
    let version = w.word(base + offset_of!(ExtensionV1, version));
    let size = w.word(base + offset_of!(ExtensionV1, size));
    if version < 1 || size < EXT_V1_SIZE as u64 || len < base + EXT_V1_SIZE {
        return None;
    }
    let at = |off: usize| base + off;
    let mut e = Extension {
        version,
        size,
        ..Extension::default()
    };
    for (b, row) in e.io.iter_mut().enumerate() {
        for (d, t) in row.iter_mut().enumerate() {
            *t = decode_totals(
                w,
                at(offset_of!(ExtensionV1, io)) + (b * 2 + d) * size_of::<IoTotals>(),
            );
        }
    }
    e.size_hist = decode_hist(w, at(offset_of!(ExtensionV1, size_hist)));
    for (g, row) in e.host_per_gpu.iter_mut().enumerate() {
        for (d, t) in row.iter_mut().enumerate() {
            *t = decode_totals(
                w,
                at(offset_of!(ExtensionV1, host_per_gpu)) + (g * 2 + d) * size_of::<IoTotals>(),
            );
        }
    }
    for (b, row) in e.refusals.iter_mut().enumerate() {
        for (slot, v) in row.iter_mut().enumerate() {
            *v = w.word(at(offset_of!(ExtensionV1, refusals)) + 8 * (b * REFUSAL_SLOTS + slot));
        }
    }
    e.fallback_retries = w.word(at(offset_of!(ExtensionV1, fallback_retries)));
    let a = at(offset_of!(ExtensionV1, async_ops));
    e.async_ops = [w.word(a), w.word(a + 8)];
    let b = at(offset_of!(ExtensionV1, batch_ops));
    e.batch_ops = [w.word(b), w.word(b + 8)];
    e.file_deregistrations = w.word(at(offset_of!(ExtensionV1, file_deregistrations)));
    e.buffer_deregistrations = w.word(at(offset_of!(ExtensionV1, buffer_deregistrations)));
    e.bounce_bytes_in_use = w.word(at(offset_of!(ExtensionV1, bounce_bytes_in_use)));
    e.bounce_bytes_peak = w.word(at(offset_of!(ExtensionV1, bounce_bytes_peak)));
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::layout::{SharedStats, SHARED_SIZE};

    fn put(buf: &mut [u8], off: usize, v: u64) {
        buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }

    #[test]
    fn retired_block() {
        let mut b = vec![0u8; RETIRED_SIZE];
        put(&mut b, 0, 2); // level
        put(&mut b, 8, 1); // version
        for i in 0..4 {
            put(&mut b, 16 + 8 * i, 100 + i as u64);
        }
        let s = Snapshot::from_bytes(&b).unwrap();
        assert_eq!(s.layout, Layout::Retired);
        assert_eq!((s.version, s.level), (1, 2));
        assert_eq!(s.retired, [100, 101, 102, 103]);
    }

    #[test]
    fn amd_v1_block_without_extension() {
        let mut b = vec![0u8; V1_SIZE];
        put(&mut b, 0, 1);
        put(&mut b, 8, 3);
        put(&mut b, 16, 7);
        put(&mut b, 24, 8);
        put(&mut b, 32, 9);
        // GPU 2, Fallback, io_count[write] bucket 3 = 5.
        let base = 40 + (2 * 2 + 1) * 1048;
        put(&mut b, base, 1);
        put(&mut b, base + 264 + 128 + 3 * 8, 5);
        put(&mut b, base + 1032 + 8, 4);
        let s = Snapshot::from_bytes(&b).unwrap();
        assert_eq!(s.layout, Layout::V1);
        assert_eq!(
            (
                s.level,
                s.file_registrations,
                s.buffer_registrations,
                s.fastpath_rejections
            ),
            (3, 7, 8, 9)
        );
        assert!(s.ext.is_none());
        assert!(s.gpu_in_use(2) && !s.gpu_in_use(0));
        assert_eq!(s.gpus[2][1].io_count[1][3], 5);
        assert_eq!(s.gpus[2][1].unaligned_count, [0, 4]);
        assert_eq!(s.totals(BackendKind::Fallback, Direction::Write).ops, 5);
        assert_eq!(s.size_histogram()[1][3], 5);
    }

    #[test]
    fn unknown_versions_and_sizes() {
        let mut b = vec![0u8; V1_SIZE];
        put(&mut b, 0, 2);
        assert_eq!(Snapshot::from_bytes(&b).unwrap().layout, Layout::Unknown);
        let mut b = vec![0u8; 64];
        put(&mut b, 0, 1);
        assert_eq!(Snapshot::from_bytes(&b).unwrap().layout, Layout::Unknown);
        assert_eq!(
            Snapshot::from_bytes(&[0u8; 8]),
            Err(DecodeError::TooSmall(8))
        );
    }

    #[test]
    fn extension_needs_its_magic_and_size() {
        let mut b = vec![0u8; SHARED_SIZE];
        put(&mut b, 0, 1);
        let e = V1_SIZE;
        put(&mut b, e, EXT_MAGIC);
        put(&mut b, e + 8, 1);
        put(&mut b, e + 16, EXT_V1_SIZE as u64);
        put(&mut b, e + offset_of!(ExtensionV1, fallback_retries), 42);
        assert_eq!(
            Snapshot::from_bytes(&b)
                .unwrap()
                .ext
                .unwrap()
                .fallback_retries,
            42
        );
        put(&mut b, e + 16, 8);
        assert!(Snapshot::from_bytes(&b).unwrap().ext.is_none());
        put(&mut b, e + 16, EXT_V1_SIZE as u64);
        put(&mut b, e, 0x1234);
        assert!(Snapshot::from_bytes(&b).unwrap().ext.is_none());
        assert!(Snapshot::from_bytes(&b[..SHARED_SIZE - 8])
            .unwrap()
            .ext
            .is_none());
    }

    #[test]
    fn live_words_match_the_struct() {
        use std::sync::atomic::Ordering::Relaxed;
        let block: &SharedStats = crate::stats::shm::private_block();
        block.init_header(2);
        block.v1.per_gpu[15][0].io_time_us[1].buckets[15].store(77, Relaxed);
        block.ext.host_per_gpu[3][1].bytes.store(99, Relaxed);
        block.ext.refusals[2][10].store(5, Relaxed);
        block.ext.bounce_bytes_peak.store(4096, Relaxed);
        let w = block.words();
        let s = Snapshot::decode(w).unwrap();
        assert_eq!((s.layout, s.level), (Layout::V1, 2));
        assert_eq!(s.gpus[15][0].io_time_us[1][15], 77);
        let ext = s.ext.unwrap();
        assert_eq!(ext.host_per_gpu[3][1].bytes, 99);
        assert_eq!(ext.refusals[2][10], 5);
        assert_eq!(ext.bounce_bytes_peak, 4096);
        assert_eq!(w.word(SHARED_SIZE), 0, "out of range reads are zero");
    }
}
