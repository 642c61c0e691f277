//! Chunk planning and parallel execution of one [`Transfer`].
//!
//! Participants (the calling thread and helper jobs on the worker pool) claim chunk indices
//! from one atomic counter, so a slow chunk never holds up the others and no per-chunk
//! allocation happens (writes keep one bit per chunk). The request's result is the contiguous
//! byte count from its start: a chunk that comes back short (end of file) bounds it. The first
//! error stops further claims and fails a read; a write that fails part-way returns, as
//! `pwrite` does, the count of the contiguous prefix that reached the file (an error only when
//! nothing did), and what it wrote beyond that prefix past the file's old end is cut back. The calling thread waits until every helper has finished before it
//! returns, which is what keeps the application's memory borrowed for exactly the call.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::lanes::LaneGuard as Lane;
use super::lend::bounce::{Bounce, Fill};
use super::lend::{Chunk, Claims, InFlight, Lent, Slot};
use super::Stage;
use super::{DirectFd, Inner, PartWay, Transfer};
use crate::error::{Error, Result};
use crate::runtime::RtError;
use crate::sys;
use crate::sys::io::PartialWrite;
use crate::vocab::{Address, Direction, MemRef};

/// How one chunk failed: the error, after `done` bytes of it had reached the file (writes; 0
/// for reads).
struct ChunkFault {
    done: usize,
    error: Error,
}

impl ChunkFault {
    fn none_done(error: Error) -> ChunkFault {
        ChunkFault { done: 0, error }
    }
}

impl From<PartialWrite> for ChunkFault {
    fn from(p: PartialWrite) -> ChunkFault {
        ChunkFault {
            done: p.done,
            error: Error::Os(p.errno),
        }
    }
}

/// Bytes a chunk moved, or how it failed.
type ChunkResult = Result<usize, ChunkFault>;

/// Shared state of one request.
struct Request {
    t: Transfer,
    chunk: usize,
    chunks: usize,
    claims: Claims,
    /// Smallest end of a short chunk (`usize::MAX` while none came back short).
    short_end: AtomicUsize,
    /// Writes: one bit per chunk written in full (empty for reads).
    written: Vec<AtomicU64>,
    /// Writes: smallest `offset + bytes written` of a chunk that failed or came back short.
    write_end: AtomicUsize,
    /// Writes: the file's size before the request (`u64::MAX` if unknown: nothing is cut).
    size_before: u64,
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
    /// Device transfers of a stream's staging kernel: the serial before the first chunk's
    /// (chunk `i` is serial `stage_base + i + 1`).
    stage_base: Option<u32>,
    /// Bounce buffers the pool lacked for this request, made at once by its participants.
    fill: Option<Arc<Fill>>,
    /// Helpers still running.
    helpers: Mutex<usize>,
    helpers_done: Condvar,
}

impl Request {
    fn fail(&self, e: Error) {
        self.failed.store(true, Ordering::Release);
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    /// A write chunk at `off` wrote everything.
    fn written_in_full(&self, off: usize) {
        let i = off / self.chunk;
        if let Some(w) = self.written.get(i / 64) {
            w.fetch_or(1 << (i % 64), Ordering::AcqRel);
        }
    }

    /// A write chunk stopped `at` this request offset (failed, short or abandoned).
    fn written_until(&self, at: usize) {
        self.write_end.fetch_min(at, Ordering::AcqRel);
    }

    /// The contiguous prefix of a write that reached the file, once every participant is done:
    /// up to the first chunk not written in full, plus what that chunk wrote before it stopped.
    fn written_prefix(&self) -> usize {
        let first = self
            .written
            .iter()
            .enumerate()
            .find_map(|(w, bits)| {
                let missing = !bits.load(Ordering::Acquire);
                (missing != 0).then(|| w * 64 + missing.trailing_zeros() as usize)
            })
            .unwrap_or(usize::MAX)
            .min(self.chunks);
        if first == self.chunks {
            return self.t.size;
        }
        let base = first * self.chunk;
        let end = self.write_end.load(Ordering::Acquire);
        if end < base + self.chunk {
            end.max(base)
        } else {
            base
        }
    }
}

/// Counts a helper out when it finishes, even by panicking. It releases its reference to the
/// engine *before* signalling, so that once the calling thread returns no helper holds the
/// engine any more (closing the driver then frees its buffers at once).
struct HelperGuard {
    inner: Option<Arc<Inner>>,
    req: Arc<Request>,
}

impl Drop for HelperGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.req.fail(Error::Internal("panic in an I/O worker"));
        }
        drop(self.inner.take());
        let mut n = self.req.helpers.lock();
        *n -= 1;
        if *n == 0 {
            self.req.helpers_done.notify_all();
        }
    }
}

/// Run `t` to completion. A request of at most one chunk (small requests, targets T4/T9)
/// runs straight through on the calling thread: no request state, no claiming; this part is
/// inlined into the caller so that the common small call is one flat function.
#[inline(always)]
pub(crate) fn execute(inner: &Arc<Inner>, t: Transfer) -> Result<usize> {
    // The chunk, or zero for a stream-ordered engine, which copies on lanes only
    // (`Engine::for_stream`).
    if t.size <= inner.single_max {
        return single_chunk(inner, &t);
    }
    execute_chunked(inner, t)
}

/// A request of several chunks, shared between the calling thread and helpers.
#[inline(never)]
fn execute_chunked(inner: &Arc<Inner>, t: Transfer) -> Result<usize> {
    let running = Running::enter(&inner.chunked_running);
    let writing = t.dir == Direction::Write;
    let size_before = if writing {
        sys::io::file_size(t.fd).unwrap_or(u64::MAX)
    } else {
        u64::MAX
    };
    let stage = match t.target {
        MemRef::Device { .. } => inner.stage.as_deref(),
        MemRef::Host { .. } => None,
    };
    // Whether the read starts in the page cache, asked at most once.
    let mut warm_answer = None;
    let mut warm = || *warm_answer.get_or_insert_with(|| warm_start(&t));
    let inline = t.size <= inner.inline_threshold || t.size <= inner.chunk;
    let mut cap = if inline {
        0
    } else {
        participants(inner.request_parallelism, &mut warm).saturating_sub(1)
    };
    if let Some(s) = stage {
        // Through a stage, a participant holds one slot: more than that would only wait.
        cap = cap.min(s.slots().saturating_sub(1));
    }
    // Asked only for a request that will share its chunks: `workers()` starts the pool.
    let workers = if inline {
        0
    } else {
        inner.workers().map_or(0, |w| w.len())
    };
    let fine = !inline
        && stage.is_none()
        && running.alone
        && matches!(t.target, MemRef::Device { .. })
        && !writing
        && warm() == Some(true);
    let chunk = if fine {
        fine_chunk(inner.chunk, t.size, workers.min(cap) + 1)
    } else {
        inner.chunk
    };
    let chunks = t.size.div_ceil(chunk);
    let helpers = if inline || chunks <= 1 {
        0
    } else {
        workers.min(chunks - 1).min(cap)
    };
    // Device reads through bounce buffers: two per participant (`pipelined_read`), made at once
    // if the pool lacks them. Not writes: their participants ask the pool for buffers one by
    // one, and the first would then fault in the whole fill alone (`Fill::ready`).
    let fill = match (t.target, stage) {
        (MemRef::Device { .. }, None) if !writing => inner.bounce.fill(2 * (helpers + 1)),
        _ => None,
    };
    let stage_base = stage.map(|s| s.reserve(chunks));
    let req = Request {
        t,
        chunk,
        chunks,
        claims: Claims::new(t.size, chunk),
        short_end: AtomicUsize::new(usize::MAX),
        written: if writing {
            (0..chunks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect()
        } else {
            Vec::new()
        },
        write_end: AtomicUsize::new(usize::MAX),
        size_before,
        failed: AtomicBool::new(false),
        error: Mutex::new(None),
        stage_base,
        fill,
        helpers: Mutex::new(0),
        helpers_done: Condvar::new(),
    };
    if helpers == 0 {
        // The calling thread alone: the request's state lives on its stack.
        participate_guarded(inner, &req);
        post_unclaimed(stage, &req);
        return finish(&req);
    }
    let req = Arc::new(req);
    *req.helpers.lock() = helpers;
    let workers = inner.workers().expect("helpers > 0 implies workers");
    for _ in 0..helpers {
        let inner = inner.clone();
        let req = req.clone();
        workers.spawn(Box::new(move || {
            let guard = HelperGuard {
                inner: Some(inner),
                req,
            };
            participate(guard.inner.as_ref().expect("set"), &guard.req);
        }));
    }
    participate_guarded(inner, &req);
    {
        let mut n = req.helpers.lock();
        while *n > 0 {
            req.helpers_done.wait(&mut n);
        }
    }
    post_unclaimed(stage, &req);
    finish(&req)
}

/// Counts a request of several chunks in while it runs; `alone` when it was the only one.
struct Running<'a> {
    count: &'a AtomicUsize,
    alone: bool,
}

impl<'a> Running<'a> {
    fn enter(count: &'a AtomicUsize) -> Running<'a> {
        let before = count.fetch_add(1, Ordering::AcqRel);
        Running {
            count,
            alone: before == 0,
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A read that has the engine to itself is cut finer while it would give each participant
/// fewer chunks than this: a 16 MiB read in 4 MiB chunks kept six of its ten participants
/// idle. H200, interleaved three times against the fixed chunk: 16 MiB reads from one thread
/// 16.1-16.5 -> 20.7-21.4 GB/s; 64 MiB, 256 MiB and 1 GiB reads from one thread and 16 or
/// 64 MiB reads from eight threads unchanged within the noise
/// (`benches/gpu/2026-12-02-h200-round10-probes.txt`).
const FINE_CHUNKS_PER_PARTICIPANT: usize = 4;
/// The finest chunk a read is cut into.
const FINE_CHUNK_MIN: usize = 1 << 20;

/// The chunk for a page-cache read of `size` bytes to device memory that no other request of
/// several chunks shares the engine with: `chunk` halved while the read would give its
/// `participants` fewer than [`FINE_CHUNKS_PER_PARTICIPANT`] chunks each, down to
/// [`FINE_CHUNK_MIN`] (and never below a multiple of 4 KiB). With ten participants a 16 or
/// 64 MiB read goes in 1 MiB chunks, a 1 GiB read keeps 4 MiB. Reads of several threads at
/// once keep the chunk: their participants are busy anyway, and 1 MiB chunks everywhere made
/// 64 MiB reads from eight threads slower (47.1 -> 39.4 GB/s, round six).
fn fine_chunk(chunk: usize, size: usize, participants: usize) -> usize {
    let mut c = chunk;
    while c / 2 >= FINE_CHUNK_MIN
        && c % (8 << 10) == 0
        && size.div_ceil(c) < FINE_CHUNKS_PER_PARTICIPANT * participants
    {
        c /= 2;
    }
    c
}

/// At most this many participants copy a read whose data is in the page cache. Such a copy is
/// bound by memory bandwidth, not by the number of threads: on the H200 machine (16 cores) 1 GiB
/// reads with 10 participants ran at 50.12 / 50.46 GB/s for 0.209 / 0.206 CPU seconds per GiB,
/// with 12 at 49.49 / 49.99 for 0.251 / 0.249, with 16 at 49.46 / 49.51 for 0.332 / 0.333
/// (two rounds in one run). Cold reads and writes wait for the disk and keep every participant.
const WARM_READ_PARTICIPANTS: usize = 10;

/// Participants for a request: `parallelism`, but no more than [`WARM_READ_PARTICIPANTS`] for a
/// read known to start in the page cache (`warm` says `Some(true)`; `None` when unknown). `warm`
/// is asked only when the cap could change the count, so machines with few threads make no
/// `cachestat` call for it.
fn participants(parallelism: usize, warm: impl FnOnce() -> Option<bool>) -> usize {
    if parallelism <= WARM_READ_PARTICIPANTS {
        return parallelism;
    }
    match warm() {
        Some(true) => WARM_READ_PARTICIPANTS,
        _ => parallelism,
    }
}

/// Whether a read starts in the page cache: any page of its first MiB cached (`cachestat`, no
/// readahead; a cold chunk, the one read with `O_DIRECT`, has none). `None` for writes and where
/// the kernel cannot say.
fn warm_start(t: &Transfer) -> Option<bool> {
    if t.dir != Direction::Read {
        return None;
    }
    let len = t.size.min(WARM_PROBE) as u64;
    let cs = sys::io::cachestat(t.fd, t.offset, len).ok()?;
    Some(cs.cached > 0)
}

/// Bytes at a read's start that [`warm_start`] looks at.
const WARM_PROBE: usize = 1 << 20;

/// Staged requests: once every participant is done, an empty segment for each chunk nobody took
/// (the request failed first), so the stream's kernel passes their serials. They are the last
/// chunks of the request (chunks are handed out in order), so no participant waited for them.
fn post_unclaimed(stage: Option<&Stage>, req: &Request) {
    if let (Some(stage), Some(base)) = (stage, req.stage_base) {
        while let Some(c) = req.claims.next() {
            // A failure means the kernel is gone: nothing will wait for the rest.
            if stage.post_empty(serial_of(base, req, &c)).is_err() {
                break;
            }
        }
    }
}

/// The serial of chunk `c` of a staged request.
fn serial_of(base: u32, req: &Request, c: &Chunk) -> u32 {
    base.wrapping_add((c.off / req.chunk) as u32 + 1)
}

/// A request of at most one chunk, served on the calling thread. Its copy is synchronous and
/// names the device address, so the current device need not change (a small request pays
/// no device calls).
#[inline(always)]
fn single_chunk(inner: &Inner, t: &Transfer) -> Result<usize> {
    let r = match t.target {
        _ if t.size == 0 => Ok(0),
        MemRef::Host { addr } => host_chunk(t, Lent::new(addr, t.size), Chunk::whole(t.size)),
        MemRef::Device { addr, .. } => {
            let mut bounce = inner.bounce.get()?;
            let r = device_chunk(inner, t, addr, &mut bounce.as_mut_slice()[..t.size], 0);
            bounce.release();
            r
        }
    };
    let n = match r {
        Ok(n) => n,
        // One chunk is written in order: what reached the file is a prefix, reported as a
        // short write (pwrite's rule) where the caller reports counts; nothing lies beyond it
        // to cut back.
        Err(f) if f.done > 0 && t.part_way == PartWay::Prefix => f.done,
        Err(f) => return Err(f.error),
    };
    if t.dir == Direction::Write && t.sync {
        sys::io::fdatasync(t.fd).map_err(Error::Os)?;
    }
    Ok(n)
}

/// The calling thread's share, under `catch_unwind`: if it panics the request fails, and the
/// caller still waits for the helpers, which may be using the application's memory.
fn participate_guarded(inner: &Inner, req: &Request) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| participate(inner, req))).is_err() {
        req.fail(Error::Internal(
            "panic on the calling thread's share of a request",
        ));
    }
}

/// The request's result once every participant is done. A read: its error, or the contiguous
/// byte count. A write: the contiguous prefix that reached the file (made durable with the
/// request's one `fdatasync`), or the error when nothing did or the caller reports errors
/// ([`PartWay::Error`]); bytes written past that prefix and past the file's old end are cut
/// back, so a failed write leaves no holes and no growth beyond its prefix.
fn finish(req: &Request) -> Result<usize> {
    let t = req.t;
    let error = req.error.lock().take();
    if t.dir == Direction::Read {
        return match error {
            Some(e) => Err(e),
            None => Ok(req.short_end.load(Ordering::Acquire).min(t.size)),
        };
    }
    let prefix = req.written_prefix().min(t.size);
    if prefix < t.size {
        cut_back(&t, req.size_before, prefix);
    }
    match error {
        Some(e) if prefix == 0 || t.part_way == PartWay::Error => return Err(e),
        Some(e) => {
            tracing::debug!(target: "hipfile", "write failed after {prefix} contiguous bytes ({e}); reporting the short count")
        }
        None => {}
    }
    if t.sync {
        sys::io::fdatasync(t.fd).map_err(Error::Os)?;
    }
    Ok(prefix)
}

/// After a write that reached the file only up to `prefix`: cut the file back to the larger of
/// its size before the write and the end of the prefix (bytes that existed before are never
/// cut). Best effort: a failure is logged, the count reported stays right.
#[cold]
fn cut_back(t: &Transfer, size_before: u64, prefix: usize) {
    let keep = size_before.max(t.offset + prefix as u64);
    match sys::io::file_size(t.fd) {
        Ok(now) if now > keep => {
            if let Err(e) = sys::io::truncate(t.fd, keep) {
                tracing::warn!(target: "hipfile", "cannot cut a partly failed write back to {keep} bytes (errno {e})");
            }
        }
        Ok(_) => {}
        Err(e) => {
            tracing::warn!(target: "hipfile", "cannot size the file after a partly failed write (errno {e})")
        }
    }
}

/// Claim the next chunk still worth doing, or `None` when the request is finished or failed.
fn claim(req: &Request) -> Option<Chunk> {
    loop {
        if req.failed.load(Ordering::Acquire) {
            return None;
        }
        let c = req.claims.next()?;
        // Chunks wholly beyond a short chunk (end of file) have nothing to do.
        if c.off < req.short_end.load(Ordering::Acquire) {
            return Some(c);
        }
    }
}

/// Record the outcome of one chunk; false when the participant should stop.
fn record(req: &Request, off: usize, len: usize, result: ChunkResult) -> bool {
    match result {
        Ok(n) if n == len => {
            req.written_in_full(off);
            true
        }
        Ok(n) => {
            req.short_end.fetch_min(off + n, Ordering::AcqRel);
            req.written_until(off + n);
            true
        }
        Err(f) => {
            req.written_until(off + f.done);
            req.fail(f.error);
            false
        }
    }
}

/// Claim and process chunks until none is left or the request failed.
fn participate(inner: &Inner, req: &Request) {
    // Requests of one chunk never get here (see `single_chunk`).
    match req.t.target {
        MemRef::Host { addr } => {
            let lent = Lent::new(addr, req.t.size);
            while let Some(c) = claim(req) {
                let (off, len) = (c.off, c.len);
                if !record(req, off, len, host_chunk(&req.t, lent, c)) {
                    break;
                }
            }
        }
        MemRef::Device { addr, .. } if req.stage_base.is_some() => {
            if let (Some(stage), Some(base)) = (inner.stage.as_deref(), req.stage_base) {
                staged(stage, base, req, addr);
            }
        }
        MemRef::Device { addr, device } => {
            // Several chunks pipeline file I/O with stream-ordered copies on a lane, whose
            // stream belongs to the buffer's device: make it current for the participation.
            let restore = match inner.rt.enter_device(device) {
                Ok(r) => r,
                Err(e) => return req.fail(Error::Runtime(e)),
            };
            let _restore = RestoreDevice {
                inner,
                restore: Some(restore),
            };
            match inner.lanes.checkout(inner.rt, device) {
                Some(lane) => match req.t.dir {
                    Direction::Read => pipelined_read(inner, req, addr, &lane),
                    Direction::Write => pipelined_write(inner, req, addr, &lane),
                },
                None => synchronous_device(inner, req, addr),
            }
        }
    }
}

/// Chunks of a device transfer through the stream's staging kernel: each chunk is one segment,
/// filled from the file and posted (reads), or posted, copied out by the kernel and written
/// (writes). Every chunk taken is posted, also when it fails (its lease posts an empty segment
/// when dropped), and no chunk is skipped (a read past the end posts nothing to copy), so the
/// kernel never waits for a serial nobody holds. No GPU call is made here.
fn staged(stage: &Stage, base: u32, req: &Request, addr: Address) {
    while let Some(c) = (!req.failed.load(Ordering::Acquire))
        .then(|| req.claims.next())
        .flatten()
    {
        let (off, len) = (c.off, c.len);
        let mut lease = match stage.acquire(serial_of(base, req, &c)) {
            Ok(l) => l,
            Err(e) => {
                req.fail(Error::Runtime(e));
                break;
            }
        };
        let dev = addr.add(off);
        let file_off = req.t.offset + off as u64;
        let result = match req.t.dir {
            Direction::Read => {
                // Past a short chunk (end of file) there is nothing to read.
                let r = if off >= req.short_end.load(Ordering::Acquire) {
                    Ok(0)
                } else {
                    read_chunk(&req.t, lease.bytes_mut(dev, len), file_off)
                };
                let n = *r.as_ref().unwrap_or(&0);
                lease.copy_to_device(dev, n);
                r.map_err(|e| ChunkFault::none_done(Error::Os(e)))
            }
            Direction::Write => match lease.copy_from_device(dev, len) {
                Ok(()) => {
                    let r = write_chunk(&req.t, lease.bytes(dev, len), file_off);
                    drop(lease);
                    r.map_err(ChunkFault::from)
                }
                Err(e) => Err(ChunkFault::none_done(Error::Runtime(e))),
            },
        };
        if !record(req, off, len, result) {
            break;
        }
    }
}

/// Gives the calling thread's device back, also when unwinding.
struct RestoreDevice<'a> {
    inner: &'a Inner,
    restore: Option<crate::runtime::DeviceRestore>,
}

impl Drop for RestoreDevice<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.restore.take() {
            self.inner.rt.leave_device(r);
        }
    }
}

/// Device chunks one at a time with synchronous copies through one bounce buffer.
fn synchronous_device(inner: &Inner, req: &Request, addr: Address) {
    let mut bounce = None;
    while let Some(Chunk { off, len }) = claim(req) {
        if bounce.is_none() {
            match inner.bounce.get() {
                Ok(b) => bounce = Some(b),
                Err(e) => return req.fail(e),
            }
        }
        let buf = &mut bounce.as_mut().expect("set above").as_mut_slice()[..len];
        if !record(
            req,
            off,
            len,
            device_chunk(inner, &req.t, addr.add(off), buf, off),
        ) {
            break;
        }
    }
}

/// Reads: `pread` of chunk k+1 into one bounce buffer overlaps the stream-ordered copy of
/// chunk k from the other; a buffer is reused only after its copy's event completed. Copy
/// errors surface at the final stream synchronisation and fail the request.
fn pipelined_read(inner: &Inner, req: &Request, addr: Address, lane: &Lane) {
    let rt = inner.rt;
    // Buffers of the request's fill are read into at once; their first copy waits for the
    // fill's registration (`Fill::ready`).
    let taken = req.fill.as_ref().map(|f| f.take(&inner.bounce));
    let mut unregistered = matches!(taken, Some([Some(_), _]));
    let mut slots: [Option<Slot<'_>>; 2] = match taken {
        // A second buffer, if the fill had none left, is asked for once the fill is over (its
        // spare buffers are free then; a new one now would wait behind its registration).
        Some([Some(a), b]) => [Some(Slot::Free(a)), b.map(Slot::Free)],
        _ => match (inner.bounce.get(), inner.bounce.try_get()) {
            (Ok(a), b) => [Some(Slot::Free(a)), b.map(Slot::Free)],
            (Err(e), _) => return req.fail(e),
        },
    };
    let mut count = if slots[1].is_some() { 2 } else { 1 };
    let mut k = 0usize;
    while let Some(Chunk { off, len }) = claim(req) {
        let s = k % count;
        k += 1;
        let mut buf = match slots[s].take().expect("a slot holds its buffer") {
            Slot::Free(b) => b,
            Slot::Copying(copy) => {
                let (waited, b) = copy.wait();
                if let Err(e) = waited {
                    slots[s] = Some(Slot::Free(b));
                    req.fail(Error::Runtime(e));
                    break;
                }
                b
            }
        };
        let file_off = req.t.offset + off as u64;
        let n = match read_chunk(&req.t, &mut buf.as_mut_slice()[..len], file_off) {
            Ok(n) => n,
            Err(e) => {
                slots[s] = Some(Slot::Free(buf));
                req.fail(Error::Os(e));
                break;
            }
        };
        if n > 0 {
            if unregistered {
                if let Some(f) = &req.fill {
                    f.ready(&inner.bounce);
                }
                unregistered = false;
                if count == 1 {
                    if let Some(b) = inner.bounce.try_get() {
                        slots[1] = Some(Slot::Free(b));
                        count = 2;
                    }
                }
            }
            match InFlight::to_device(rt, lane, s, addr.add(off), buf, n) {
                Ok(copy) => slots[s] = Some(Slot::Copying(copy)),
                Err((e, b)) => {
                    slots[s] = Some(Slot::Free(b));
                    req.fail(Error::Runtime(e));
                    break;
                }
            }
        } else {
            slots[s] = Some(Slot::Free(buf));
        }
        if !record(req, off, len, Ok(n)) {
            break;
        }
    }
    // The stream reports a failed copy; the copies' buffers come back after it.
    let synced = rt.streams().map_or(Err(RtError::NOT_SUPPORTED), |s| {
        s.stream_synchronize(lane.stream)
    });
    if let Err(e) = synced {
        req.fail(Error::Runtime(e));
    }
    for slot in slots.iter_mut() {
        if let Some(Slot::Copying(copy)) = slot.take() {
            drop(copy.wait());
        }
    }
}

/// Writes: the stream-ordered copy of chunk k+1 out of device memory overlaps the `pwrite`
/// of chunk k. The stream is synchronised before each `pwrite`, so a failed copy is known
/// before its bytes could reach the file.
fn pipelined_write<'a>(inner: &'a Inner, req: &Request, addr: Address, lane: &Lane) {
    let rt = inner.rt;
    let (first, mut spare) = match (inner.bounce.get(), inner.bounce.try_get()) {
        (Ok(a), b) => (a, b),
        (Err(e), _) => return req.fail(e),
    };
    let issue = |buf: Bounce<'a>, off: usize, len: usize| {
        InFlight::from_device(rt, lane.stream, addr.add(off), buf, len)
    };
    // A chunk claimed but not written (its copy failed, or the loop stopped) is simply never
    // marked written in full: the request's prefix ends before it.
    let Some(Chunk { off, len }) = claim(req) else {
        return;
    };
    let mut current = match issue(first, off, len) {
        Ok(copy) => (copy, off, len),
        Err((e, _)) => return req.fail(Error::Runtime(e)),
    };
    loop {
        let (copy, off, len) = current;
        let (synced, buf) = copy.wait();
        if let Err(e) = synced {
            req.fail(Error::Runtime(e));
            break;
        }
        // Start the next chunk's copy into the other buffer before writing this one.
        let next = claim(req);
        let mut next_copy = None;
        if let (
            Some(Chunk {
                off: noff,
                len: nlen,
            }),
            Some(other),
        ) = (&next, spare.take())
        {
            match issue(other, *noff, *nlen) {
                Ok(copy) => next_copy = Some(copy),
                Err((e, _)) => {
                    req.fail(Error::Runtime(e));
                    break;
                }
            }
        }
        let file_off = req.t.offset + off as u64;
        let n = write_chunk(&req.t, &buf.as_slice()[..len], file_off).map_err(ChunkFault::from);
        if !record(req, off, len, n) {
            break;
        }
        let Some(Chunk {
            off: noff,
            len: nlen,
        }) = next
        else {
            break;
        };
        current = match next_copy {
            Some(copy) => {
                spare = Some(buf);
                (copy, noff, nlen)
            }
            // Single-buffered: copy the next chunk now that this one is written.
            None => match issue(buf, noff, nlen) {
                Ok(copy) => (copy, noff, nlen),
                Err((e, _)) => {
                    req.fail(Error::Runtime(e));
                    break;
                }
            },
        };
    }
}

/// One chunk between the file and device memory through a pinned bounce buffer.
#[inline(always)]
fn device_chunk(
    inner: &Inner,
    t: &Transfer,
    dev: Address,
    buf: &mut [u8],
    off: usize,
) -> ChunkResult {
    let file_off = t.offset + off as u64;
    match t.dir {
        Direction::Read => {
            let n =
                read_chunk(t, buf, file_off).map_err(|e| ChunkFault::none_done(Error::Os(e)))?;
            if n > 0 {
                inner
                    .copy_to_device(dev, &buf[..n])
                    .map_err(|e| ChunkFault::none_done(e.into()))?;
            }
            Ok(n)
        }
        Direction::Write => {
            inner
                .copy_from_device(buf, dev)
                .map_err(|e| ChunkFault::none_done(e.into()))?;
            Ok(write_chunk(t, buf, file_off)?)
        }
    }
}

/// One chunk between the file and the application's host memory, without a bounce.
#[inline(always)]
fn host_chunk(t: &Transfer, lent: Lent, c: Chunk) -> ChunkResult {
    let file_off = t.offset + c.off as u64;
    match t.dir {
        Direction::Read => lent
            .read_into(c, |buf| read_chunk(t, buf, file_off))
            .map_err(|e| ChunkFault::none_done(Error::Os(e))),
        Direction::Write => Ok(lent.write_from(c, |buf| write_chunk(t, buf, file_off))?),
    }
}

use super::DIRECT_MIN;

/// Whether the chunk at `off` may go through the `O_DIRECT` twin: large enough, aligned in
/// file offset, length and memory.
#[inline(always)]
fn direct_ok(d: &DirectFd, mem: *const u8, len: usize, off: u64) -> bool {
    len >= DIRECT_MIN
        && off % d.offset_align == 0
        && len as u64 % d.offset_align == 0
        && mem as usize as u64 % d.mem_align == 0
}

/// Read one chunk: through the page cache when it holds any of the chunk, otherwise (for
/// aligned chunks with an `O_DIRECT` twin) straight from the device, bypassing the cache, so
/// cold data is neither copied through the cache nor pushed out of it (target T2). Residency
/// comes from `cachestat`, which, unlike a `RWF_NOWAIT` probe, starts no readahead (a probe
/// would read cold data twice).
#[inline(always)]
pub(super) fn read_chunk(t: &Transfer, buf: &mut [u8], off: u64) -> Result<usize, i32> {
    // By value: a reference into `t` would keep the whole transfer in memory (target T9).
    if let Some(d) = t.direct {
        if direct_ok(&d, buf.as_ptr(), buf.len(), off) {
            return read_chunk_cold(t.fd, d.fd, buf, off);
        }
    }
    sys::io::pread_full(t.fd, buf, off)
}

/// [`read_chunk`] of an aligned chunk with an `O_DIRECT` twin: direct when nothing of it is
/// cached.
#[inline(never)]
fn read_chunk_cold(buffered: RawFd, direct: RawFd, buf: &mut [u8], off: u64) -> Result<usize, i32> {
    if let Ok(cs) = sys::io::cachestat(buffered, off, buf.len() as u64) {
        if cs.cached == 0 {
            return direct_read(buffered, direct, buf, off);
        }
    }
    sys::io::pread_full(buffered, buf, off)
}

/// Write one chunk: aligned chunks with an `O_DIRECT` twin go straight to the device (the
/// request's one `fdatasync` then only flushes metadata and the drive's cache); the rest
/// through the page cache.
#[inline(always)]
fn write_chunk(t: &Transfer, buf: &[u8], off: u64) -> Result<usize, PartialWrite> {
    let direct = match t.direct {
        Some(d) if direct_ok(&d, buf.as_ptr(), buf.len(), off) => Some(d),
        _ => None,
    };
    if let Some(d) = direct {
        let n = sys::io::pwrite(d.fd, buf, off).map_err(|errno| PartialWrite { done: 0, errno })?;
        if n == buf.len() || n == 0 {
            return Ok(n);
        }
        // A short direct write leaves an unaligned remainder: finish it through the cache.
        return sys::io::pwrite_full(t.fd, &buf[n..], off + n as u64)
            .map(|m| n + m)
            .map_err(|p| PartialWrite {
                done: n + p.done,
                ..p
            });
    }
    sys::io::pwrite_full(t.fd, buf, off)
}

/// Read through the `O_DIRECT` descriptor until done; a short (end-of-file) direct read leaves
/// an unaligned remainder, which the buffered descriptor finishes (it returns 0 at the end).
fn direct_read(buffered: RawFd, direct: RawFd, buf: &mut [u8], off: u64) -> Result<usize, i32> {
    let n = sys::io::pread(direct, buf, off)?;
    if n == buf.len() || n == 0 {
        return Ok(n);
    }
    Ok(n + sys::io::pread_full(buffered, &mut buf[n..], off + n as u64)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn warm_reads_get_at_most_ten_participants() {
        assert_eq!(participants(16, || Some(true)), 10);
        assert_eq!(participants(8, || Some(true)), 8);
        assert_eq!(participants(16, || Some(false)), 16);
        assert_eq!(participants(16, || None), 16);
        assert_eq!(participants(1, || Some(true)), 1);
        // At or under the cap the page cache is not asked.
        assert_eq!(participants(10, || unreachable!("not asked")), 10);
    }

    #[test]
    fn a_read_alone_with_few_chunks_per_participant_is_cut_finer() {
        const M: usize = 1 << 20;
        // Ten participants: 64 MiB in 4 MiB chunks is 16 (under 40), in 1 MiB 64.
        assert_eq!(fine_chunk(4 * M, 64 * M, 10), M);
        // 160 MiB: 40 chunks of 4 MiB are enough.
        assert_eq!(fine_chunk(4 * M, 160 * M, 10), 4 * M);
        assert_eq!(fine_chunk(4 * M, 100 * M, 10), 2 * M);
        assert_eq!(fine_chunk(4 * M, 1 << 30, 10), 4 * M);
        // Never below 1 MiB, and a chunk that is no multiple of 8 KiB is not halved.
        assert_eq!(fine_chunk(4 * M, 5 * M, 16), M);
        assert_eq!(fine_chunk(M, 5 * M, 16), M);
        assert_eq!(fine_chunk(4 * M + 4096, 5 * M, 16), 4 * M + 4096);
        // Halved only until each participant has four: 16 chunks of 4 MiB for four.
        assert_eq!(fine_chunk(16 * M, 64 * M, 4), 4 * M);
    }

    #[test]
    fn running_counts_requests_and_knows_the_first() {
        let n = AtomicUsize::new(0);
        let a = Running::enter(&n);
        assert!(a.alone);
        let b = Running::enter(&n);
        assert!(!b.alone);
        assert_eq!(n.load(Ordering::Acquire), 2);
        drop(a);
        drop(b);
        assert_eq!(n.load(Ordering::Acquire), 0);
        assert!(Running::enter(&n).alone);
    }

    fn transfer(fd: RawFd, dir: Direction) -> Transfer {
        Transfer {
            dir,
            fd,
            direct: None,
            target: MemRef::Host {
                addr: Address::new(4096),
            },
            size: 8 << 20,
            offset: 0,
            sync: false,
            part_way: PartWay::Prefix,
        }
    }

    #[test]
    fn a_read_starts_warm_when_its_first_pages_are_cached() {
        let mut f = sys::io::scratch_file();
        f.write_all(&vec![7u8; 8 << 20]).unwrap();
        f.sync_all().unwrap();
        let fd = f.as_raw_fd();
        match sys::io::cachestat(fd, 0, 1 << 20) {
            Err(_) => assert_eq!(warm_start(&transfer(fd, Direction::Read)), None),
            Ok(_) => {
                assert_eq!(warm_start(&transfer(fd, Direction::Read)), Some(true));
                // Written back, then dropped from the cache: cold.
                rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
                if sys::io::cachestat(fd, 0, 1 << 20).unwrap().cached == 0 {
                    assert_eq!(warm_start(&transfer(fd, Direction::Read)), Some(false));
                }
            }
        }
        assert_eq!(warm_start(&transfer(fd, Direction::Write)), None);
    }
}
