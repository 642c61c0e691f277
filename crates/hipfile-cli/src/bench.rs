//! `hipfile bench`: gdsio-style throughput and latency of hipfile reads and writes, and with
//! `--compare` the plain baselines beside them, in one invocation, on the same file and the
//! same kind of memory:
//!
//! - `HIPFILE`: `--threads` application threads, each with its own io-size buffer, each issuing
//!   `hipFileRead`/`hipFileWrite` of io-size (sequential: thread t takes the ops of its own
//!   contiguous region; random: io-size-aligned random offsets, the same op count).
//! - `PREAD_1T`: one thread, `pread` of io-size into pageable memory, then a synchronous copy to
//!   the device buffer (`--mem host`: just the `pread`).
//! - `PREAD_NT`: N threads (the engine's thread count, or `--threads` if larger), each with its
//!   own pinned buffer of one piece (io-size, at most 16 MiB, smaller when needed to give
//!   every thread work) and its own device buffer of that size: `pread` then a synchronous copy
//!   (`--mem host`: `pread` into pageable memory). Its line shows that piece size as `IOSize`.
//!
//! Write modes mirror them (`PWRITE_*`: copy from the device, then `pwrite`, and one
//! `fdatasync` at the end inside the timing, since hipfile's writes are durable at return).
//! Each configuration runs `--repeat` times, interleaved, and the median run is reported.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use hipfile::api::{
    AsyncOp, Batch, BatchOp, ConfigSnapshot, DeviceMemory, Direction, DriverGuard, GpuStream,
    PinnedMemory, Platform, RegisteredBuffer, RegisteredFile, RuntimeReport,
};

use crate::json::Value;
use crate::measure::{Label, Measurement, RunResult};
use crate::output::{errln, outln};
use crate::util::{
    fail, fmt_bytes, io_text, lib_text, pread_full, pwrite_all, slow_request_warning,
    stderr_is_terminal, AlignedBuf, CliError, CliResult, DelayedBar, Rng, PAGE,
};
use crate::{signals, temp, Api, BenchArgs, Mem};

/// Largest piece of the N-thread baseline (the plain-code rows of targets.md use 16 MiB).
const BASELINE_PIECE_MAX: u64 = 16 << 20;
/// File creation and warm-up work in pieces of this size.
const FILL_CHUNK: usize = 16 << 20;

/// One operation: `len` bytes at `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op {
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub len: usize,
}

/// The operations of each application thread: `ceil(size / io_size)` ops in total, thread t
/// taking the t-th contiguous share; random plans draw io-size-aligned slots instead (same
/// count, deterministic seeds, so every configuration and repetition does the same ops).
pub(crate) fn plan(size: u64, io_size: u64, threads: usize, random: bool) -> Vec<Vec<Op>> {
    let n = size.div_ceil(io_size);
    let slot = |i: u64| Op {
        offset: i * io_size,
        len: io_size.min(size - i * io_size) as usize,
    };
    let bound = |t: usize| (u128::from(n) * t as u128 / threads as u128) as u64;
    (0..threads)
        .map(|t| {
            let (lo, hi) = (bound(t), bound(t + 1));
            if random {
                let mut rng = Rng::new(t as u64 + 1);
                (lo..hi).map(|_| slot(rng.below(n))).collect()
            } else {
                (lo..hi).map(slot).collect()
            }
        })
        .collect()
}

/// Cut `ops` (in order) into pieces of at most `piece` bytes and deal them to `threads`
/// threads in contiguous shares.
pub(crate) fn split_pieces(ops: &[Op], piece: u64, threads: usize) -> Vec<Vec<Op>> {
    let mut all = Vec::new();
    for op in ops {
        let mut done = 0u64;
        while done < op.len as u64 {
            let len = piece.min(op.len as u64 - done);
            all.push(Op {
                offset: op.offset + done,
                len: len as usize,
            });
            done += len;
        }
    }
    let n = all.len();
    (0..threads)
        .map(|t| all[n * t / threads..n * (t + 1) / threads].to_vec())
        .collect()
}

/// Piece size of the N-thread baseline: io-size, at most 16 MiB, and small enough that each
/// of the `threads` threads gets a share of `size` (never below a page).
pub(crate) fn baseline_piece(size: u64, io_size: u64, threads: usize) -> u64 {
    let share = (size / threads as u64) / PAGE as u64 * PAGE as u64;
    io_size.min(BASELINE_PIECE_MAX).min(share.max(PAGE as u64))
}

/// Memory operations move to or from.
enum Buf {
    Device(DeviceMemory),
    Host(AlignedBuf),
}

/// Host staging memory of the baselines.
enum HostBuf {
    Pinned(PinnedMemory),
    Pageable(AlignedBuf),
}

impl HostBuf {
    fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            HostBuf::Pinned(p) => p.as_mut_slice(),
            HostBuf::Pageable(p) => p.as_mut_slice(),
        }
    }
}

/// Random non-zero bytes to touch fresh buffers with (so no run pays first-touch faults).
fn pattern() -> Vec<u8> {
    let mut v = vec![0u8; FILL_CHUNK];
    Rng::new(0x5eed).fill_nonzero(&mut v);
    v
}

fn alloc_device(len: usize, pat: &[u8]) -> CliResult<DeviceMemory> {
    let m = DeviceMemory::alloc(len).map_err(|e| {
        CliError(format!(
            "cannot allocate {} of device memory: {}",
            fmt_bytes(len as u64),
            lib_text(&e)
        ))
    })?;
    let mut off = 0;
    while off < len {
        let n = pat.len().min(len - off);
        m.upload(off, &pat[..n])
            .map_err(|e| CliError(format!("copy to device memory failed: {}", lib_text(&e))))?;
        off += n;
    }
    Ok(m)
}

fn alloc_pageable(len: usize, pat: &[u8]) -> CliResult<AlignedBuf> {
    let mut b = AlignedBuf::new(len)?;
    for c in b.as_mut_slice().chunks_mut(pat.len()) {
        c.copy_from_slice(&pat[..c.len()]);
    }
    Ok(b)
}

fn alloc_pinned(len: usize, pat: &[u8], direct: bool) -> CliResult<PinnedMemory> {
    let mut p = PinnedMemory::alloc(len).map_err(|e| {
        CliError(format!(
            "cannot allocate {} of pinned memory: {}",
            fmt_bytes(len as u64),
            lib_text(&e)
        ))
    })?;
    if direct && p.as_slice().as_ptr() as usize % PAGE != 0 {
        return fail(
            "pinned memory from the runtime is not page-aligned: cannot use it with --direct",
        );
    }
    for c in p.as_mut_slice().chunks_mut(pat.len()) {
        c.copy_from_slice(&pat[..c.len()]);
    }
    Ok(p)
}

/// Shared between the worker threads of one run.
struct Shared {
    progress: AtomicU64,
    abort: AtomicBool,
    /// `--duration`.
    duration: Option<Duration>,
    /// `--duration`: the threads repeat their operations until then. Set by the first look at
    /// it, which comes after that thread's start, so every run lasts at least the duration from
    /// its first thread's start (the wall time the result reports).
    deadline: OnceLock<Instant>,
}

impl Shared {
    /// Why the thread must stop now: another thread failed, or a signal arrived.
    fn stop(&self) -> Option<String> {
        if let Some(sig) = signals::pending() {
            return Some(signals::describe(sig));
        }
        self.abort
            .load(Ordering::Relaxed)
            .then(|| "aborted".to_string())
    }

    /// With `--duration`, whether the time is up.
    fn time_up(&self) -> bool {
        self.duration.is_some_and(|d| {
            let deadline = *self.deadline.get_or_init(|| Instant::now() + d);
            Instant::now() >= deadline
        })
    }

    /// Whether the `next`-th operation over `ops` (operation k is `ops[k % len]`) should start:
    /// once over them, or with `--duration` until the time is up.
    fn wants(&self, ops: &[Op], next: usize) -> bool {
        !ops.is_empty()
            && if self.duration.is_some() {
                !self.time_up()
            } else {
                next < ops.len()
            }
    }
}

/// How every run of the invocation goes.
#[derive(Clone, Copy)]
struct RunPolicy {
    /// Progress bars allowed (a terminal, no `--json`/`-q`).
    bars: bool,
    /// `--duration`: every run lasts this long.
    duration: Option<Duration>,
    /// `--device`: current on every thread.
    device: i32,
}

/// Run `f` on one thread per state, all released together; returns the latencies, the bytes
/// and the wall time from the first start to the last end (plus `after`, run once all threads
/// are done, e.g. a final `fdatasync`).
fn run_threads<S: Send>(
    states: &mut [S],
    bar_label: &str,
    total: u64,
    policy: RunPolicy,
    f: impl Fn(&mut S, &Shared) -> Result<Vec<f64>, String> + Sync,
    after: Option<&(dyn Fn() -> Result<(), String> + Sync)>,
) -> CliResult<RunResult> {
    let shared = Shared {
        progress: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        duration: policy.duration,
        deadline: OnceLock::new(),
    };
    // Every thread ready (its device current), then the clock starts and all are released.
    let ready = Barrier::new(states.len() + 1);
    let go = Barrier::new(states.len() + 1);
    let mut bar = DelayedBar::new(
        total,
        if policy.duration.is_some() {
            "{msg} {bytes} {binary_bytes_per_sec} {elapsed}"
        } else {
            "{msg} {bytes}/{total_bytes} {wide_bar} {binary_bytes_per_sec}"
        },
        policy.bars,
    );
    bar.set_message(bar_label.to_string());
    let outcomes = std::thread::scope(|s| {
        let handles: Vec<_> = states
            .iter_mut()
            .map(|st| {
                let (f, shared, ready, go) = (&f, &shared, &ready, &go);
                s.spawn(move || {
                    // Like a thread of a GPU application: the device (its primary context on
                    // CUDA) current, for every configuration alike. Host-only has no device.
                    let _ = hipfile::api::set_device(policy.device);
                    ready.wait();
                    go.wait();
                    let t0 = Instant::now();
                    let r = f(st, shared);
                    if r.is_err() {
                        shared.abort.store(true, Ordering::Relaxed);
                    }
                    (t0, Instant::now(), r)
                })
            })
            .collect();
        ready.wait();
        go.wait();
        let cpu0 = crate::util::process_cpu();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            bar.set_position(shared.progress.load(Ordering::Relaxed));
        }
        let outcomes = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect::<Vec<_>>();
        (outcomes, crate::util::process_cpu().saturating_sub(cpu0))
    });
    let (outcomes, cpu) = outcomes;
    drop(bar);
    let mut result = RunResult::default();
    let mut first = None::<Instant>;
    let mut last = None::<Instant>;
    for (t0, t1, r) in outcomes {
        result.latencies_us.extend(r.map_err(CliError)?);
        first = Some(first.map_or(t0, |f| f.min(t0)));
        last = Some(last.map_or(t1, |l| l.max(t1)));
    }
    if let Some(after) = after {
        after().map_err(CliError)?;
        last = Some(Instant::now());
    }
    result.bytes = shared.progress.load(Ordering::Relaxed);
    result.cpu = cpu;
    result.elapsed = match (first, last) {
        (Some(f), Some(l)) => l - f,
        _ => Duration::ZERO,
    };
    Ok(result)
}

fn micros(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

/// One hipfile operation, looping over short transfers.
fn hipfile_op(reg: &RegisteredFile, buf: &mut Buf, op: Op, read: bool) -> Result<(), String> {
    let mut done = 0usize;
    while done < op.len {
        let off = op.offset + done as u64;
        let r = match (&mut *buf, read) {
            (Buf::Device(m), true) => reg.read_device(m, op.len - done, off, done),
            (Buf::Device(m), false) => reg.write_device(m, op.len - done, off, done),
            (Buf::Host(b), true) => reg.read_host(&mut b.as_mut_slice()[done..op.len], off),
            (Buf::Host(b), false) => reg.write_host(&b.as_slice()[done..op.len], off),
        };
        let n = r.map_err(|e| {
            format!(
                "hipfile {} at offset {off}: {}",
                if read { "read" } else { "write" },
                lib_text(&e)
            )
        })?;
        if n == 0 {
            return Err(format!(
                "hipfile read at offset {off}: unexpected end of file"
            ));
        }
        done += n;
    }
    Ok(())
}

/// One baseline operation: `pread` + copy to the device, or copy from the device + `pwrite`.
fn plain_op(
    fd: BorrowedFd<'_>,
    host: &mut [u8],
    dev: Option<&DeviceMemory>,
    op: Op,
    read: bool,
) -> Result<(), String> {
    let h = &mut host[..op.len];
    if read {
        let n = pread_full(fd, h, op.offset)
            .map_err(|e| format!("pread at offset {}: {}", op.offset, io_text(&e)))?;
        if n < op.len {
            return Err(format!(
                "pread at offset {}: unexpected end of file",
                op.offset
            ));
        }
        if let Some(d) = dev {
            d.upload(0, h)
                .map_err(|e| format!("copy to the device: {}", lib_text(&e)))?;
        }
    } else {
        if let Some(d) = dev {
            d.download(0, h)
                .map_err(|e| format!("copy from the device: {}", lib_text(&e)))?;
        }
        pwrite_all(fd, h, op.offset)
            .map_err(|e| format!("pwrite at offset {}: {}", op.offset, io_text(&e)))?;
    }
    Ok(())
}

/// Run a list of ops on one thread's state, timing each.
fn timed_ops(
    ops: &[Op],
    shared: &Shared,
    mut one: impl FnMut(Op) -> Result<(), String>,
) -> Result<Vec<f64>, String> {
    let mut lat = Vec::with_capacity(ops.len());
    if ops.is_empty() {
        return Ok(lat);
    }
    // Once over the ops, or with --duration round and round until the time is up.
    for &op in ops.iter().cycle() {
        if let Some(why) = shared.stop() {
            return Err(why);
        }
        let t = Instant::now();
        one(op)?;
        lat.push(micros(t));
        shared.progress.fetch_add(op.len as u64, Ordering::Relaxed);
        if (shared.duration.is_none() && lat.len() == ops.len()) || shared.time_up() {
            break;
        }
    }
    Ok(lat)
}

/// `--api batch`: one batch context per thread keeping up to `depth` operations in flight,
/// the operation of slot k in bytes `k * slot_len..` of `mem`; an operation's latency runs from its
/// submission until its completion is reaped.
fn batch_ops(
    reg: &RegisteredFile,
    mem: &DeviceMemory,
    ops: &[Op],
    depth: usize,
    slot_len: usize,
    read: bool,
    shared: &Shared,
) -> Result<Vec<f64>, String> {
    let dir = if read {
        Direction::Read
    } else {
        Direction::Write
    };
    let what = if read { "read" } else { "write" };
    let batch =
        Batch::new(depth as u32).map_err(|e| format!("hipFileBatchIOSetUp: {}", lib_text(&e)))?;
    let mut lat = Vec::with_capacity(ops.len());
    // Slot → (submission time, index of the operation in `ops`).
    let mut started: Vec<Option<(Instant, usize)>> = vec![None; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let (mut next, mut in_flight) = (0usize, 0usize);
    let mut entries = Vec::with_capacity(depth);
    let more = |next: usize| shared.wants(ops, next);
    while more(next) || in_flight > 0 {
        if let Some(why) = shared.stop() {
            return Err(why);
        }
        entries.clear();
        let now = Instant::now();
        while more(next) {
            let Some(slot) = free.pop() else { break };
            let op = ops[next % ops.len()];
            started[slot] = Some((now, next % ops.len()));
            entries.push(BatchOp {
                dir,
                file: reg,
                mem,
                mem_offset: slot * slot_len,
                file_offset: op.offset,
                size: op.len,
                cookie: slot,
            });
            next += 1;
        }
        if !entries.is_empty() {
            batch
                .submit(&entries)
                .map_err(|e| format!("hipFileBatchIOSubmit: {}", lib_text(&e)))?;
            in_flight += entries.len();
        }
        let done = batch
            .completions(1, depth, None)
            .map_err(|e| format!("hipFileBatchIOGetStatus: {}", lib_text(&e)))?;
        for (slot, r) in done {
            let (t0, i) = started[slot]
                .take()
                .ok_or("a completion for an idle slot")?;
            let n = r.map_err(|e| {
                format!("batch {what} at offset {}: {}", ops[i].offset, lib_text(&e))
            })?;
            if n != ops[i].len {
                return Err(format!(
                    "batch {what} at offset {}: {n} of {} bytes",
                    ops[i].offset, ops[i].len
                ));
            }
            lat.push(micros(t0));
            shared.progress.fetch_add(n as u64, Ordering::Relaxed);
            free.push(slot);
            in_flight -= 1;
        }
    }
    Ok(lat)
}

/// Time the submitting threads spent in `hipFileReadAsync`/`WriteAsync` calls, and the calls.
static SUBMIT_NS: AtomicU64 = AtomicU64::new(0);
static SUBMITS: AtomicU64 = AtomicU64::new(0);

/// The shape of `--api async`: operation j goes on stream `j % streams`, into bytes
/// `j * slot_len..` of the memory, with `streams * depth` of them queued at a time.
#[derive(Clone, Copy)]
struct AsyncShape {
    streams: usize,
    depth: usize,
    slot_len: usize,
    read: bool,
    /// Keep them all in flight (a new one as soon as the oldest is done) instead of rounds.
    keep_in_flight: bool,
    /// The streams' registration flags (`None`: not registered).
    flags: Option<u32>,
}

/// `--api async`. In rounds (the default), each round queues up to `streams * depth`
/// operations without waiting, then waits for every stream; an operation's latency runs from
/// the round's first submission until its stream was synchronised. With `keep_in_flight`, a
/// mark (an event) follows each operation on its stream, and as soon as the oldest operation's
/// mark is reached a new operation takes its place (same stream, same bytes of memory); its
/// latency runs from its own submission to its mark. The submission calls themselves are timed
/// apart ([`submit_micros`]).
fn async_ops(
    reg: &RegisteredFile,
    mem: &DeviceMemory,
    ops: &[Op],
    shape: AsyncShape,
    shared: &Shared,
) -> Result<Vec<f64>, String> {
    let what = if shape.read { "read" } else { "write" };
    let queues = (0..shape.streams)
        .map(|_| GpuStream::with_flags(shape.flags))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot create a GPU stream: {}", lib_text(&e)))?;
    let timed = shared.duration.is_some();
    let more = |next: usize| shared.wants(ops, next);
    // Queue operation `i` (of `ops`) in slot `j`.
    let submit = |i: usize, j: usize| -> Result<AsyncOp, String> {
        let op = AsyncOp::new(ops[i].len, ops[i].offset, j * shape.slot_len);
        let stream = &queues[j % shape.streams];
        let s0 = Instant::now();
        let r = if shape.read {
            reg.read_async(mem, &op, stream)
        } else {
            reg.write_async(mem, &op, stream)
        };
        SUBMIT_NS.fetch_add(s0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        SUBMITS.fetch_add(1, Ordering::Relaxed);
        r.map_err(|e| format!("async {what} at offset {}: {}", ops[i].offset, lib_text(&e)))?;
        Ok(op)
    };
    // The outcome of operation `i`, once its stream has passed it.
    let finished = |op: &AsyncOp, i: usize| -> Result<(), String> {
        let n = match op.take_outcome() {
            Some(Ok(n)) => n,
            Some(Err(e)) => {
                return Err(format!(
                    "async {what} at offset {}: {}",
                    ops[i].offset,
                    lib_text(&e)
                ))
            }
            None => return Err("an async operation without an outcome".into()),
        };
        if n != ops[i].len {
            return Err(format!(
                "async {what} at offset {}: {n} of {} bytes",
                ops[i].offset, ops[i].len
            ));
        }
        shared.progress.fetch_add(n as u64, Ordering::Relaxed);
        Ok(())
    };
    let slots = shape.streams * shape.depth;
    let mut lat = Vec::with_capacity(ops.len());
    let mut next = 0usize;
    if shape.keep_in_flight {
        let mark = |j: usize| {
            queues[j % shape.streams]
                .mark()
                .map_err(|e| format!("cannot mark a GPU stream: {}", lib_text(&e)))
        };
        let mut flight = std::collections::VecDeque::with_capacity(slots);
        for j in 0..slots {
            if !more(next) {
                break;
            }
            let t = Instant::now();
            let i = next % ops.len();
            flight.push_back((submit(i, j)?, i, j, mark(j)?, t));
            next += 1;
        }
        while let Some((op, i, j, m, t)) = flight.pop_front() {
            if let Some(why) = shared.stop() {
                return Err(why);
            }
            m.wait()
                .map_err(|e| format!("stream synchronisation: {}", lib_text(&e)))?;
            lat.push(micros(t));
            finished(&op, i)?;
            if more(next) {
                let t = Instant::now();
                let i = next % ops.len();
                flight.push_back((submit(i, j)?, i, j, mark(j)?, t));
                next += 1;
            }
        }
        return Ok(lat);
    }
    let mut round: Vec<(AsyncOp, usize)> = Vec::with_capacity(slots);
    while more(next) {
        if let Some(why) = shared.stop() {
            return Err(why);
        }
        round.clear();
        let t0 = Instant::now();
        for j in 0..slots {
            if !timed && next >= ops.len() {
                break;
            }
            let i = next % ops.len();
            round.push((submit(i, j)?, i));
            next += 1;
        }
        for q in &queues {
            q.synchronize()
                .map_err(|e| format!("stream synchronisation: {}", lib_text(&e)))?;
        }
        let done = micros(t0);
        for (op, i) in &round {
            finished(op, *i)?;
            lat.push(done);
        }
    }
    Ok(lat)
}

/// Mean microseconds per `hipFileReadAsync`/`WriteAsync` call so far, and the call count.
fn submit_micros() -> (f64, u64) {
    let n = SUBMITS.load(Ordering::Relaxed);
    let ns = SUBMIT_NS.load(Ordering::Relaxed);
    (
        if n == 0 {
            0.0
        } else {
            ns as f64 / n as f64 / 1000.0
        },
        n,
    )
}

/// Bytes this process's statistics count per backend (fastpath, fallback, host) in `dir`;
/// `None` at statistics level 0 or without our extension block.
fn backend_bytes(dir: Direction) -> Option<[u64; 3]> {
    use hipfile::api::stats;
    if stats::level() == 0 {
        return None;
    }
    let ext = stats::own_snapshot().ext?;
    let d = stats::direction_index(dir);
    Some([ext.io[0][d].bytes, ext.io[1][d].bytes, ext.io[2][d].bytes])
}

/// "fallback (100% of the bytes)", "fastpath 75%, fallback 25%", or why it is unknown.
pub(crate) fn backends_text(served: Option<[u64; 3]>) -> String {
    let Some(b) = served else {
        return "unknown (statistics off: HIPFILE_STATS_LEVEL=0)".to_string();
    };
    let total: u64 = b.iter().sum();
    if total == 0 {
        return "nothing recorded".to_string();
    }
    let parts: Vec<(&str, u64)> = ["fastpath", "fallback", "host"]
        .into_iter()
        .zip(b)
        .filter(|&(_, n)| n > 0)
        .collect();
    let pct = |n: u64| n as f64 * 100.0 / total as f64;
    match parts.as_slice() {
        [(name, _)] => format!("{name} backend (100% of the bytes)"),
        _ => parts
            .iter()
            .map(|(name, n)| format!("{name} {:.1}%", pct(*n)))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `--verify`: read every range of the plan once more through hipfile (as the runs did, one
/// at a time) and compare it with a plain read of the file (`plain`); the bytes compared.
fn verify_reads(
    a: &BenchArgs,
    path: &Path,
    plain: &File,
    reg: &RegisteredFile,
    buf: &mut Buf,
    ops: &[Op],
) -> CliResult<u64> {
    let shared = Shared {
        progress: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        duration: None,
        deadline: OnceLock::new(),
    };
    let len = ops.iter().map(|o| o.len).max().unwrap_or(0);
    let (mut want, mut got) = (vec![0u8; len], vec![0u8; len]);
    let mut checked = 0u64;
    for &op in ops {
        if let Some(why) = shared.stop() {
            return fail(format!("verify: {why}"));
        }
        match (a.api, &mut *buf) {
            (Api::Batch, Buf::Device(m)) => {
                batch_ops(reg, m, &[op], 1, len, true, &shared).map(drop)
            }
            (_, b) => hipfile_op(reg, b, op, true),
        }
        .map_err(|e| CliError(format!("verify: {e}")))?;
        let got = match &*buf {
            Buf::Device(m) => {
                m.download(0, &mut got[..op.len]).map_err(|e| {
                    CliError(format!("verify: copy from the device: {}", lib_text(&e)))
                })?;
                &got[..op.len]
            }
            Buf::Host(h) => &h.as_slice()[..op.len],
        };
        let n = pread_full(plain, &mut want[..op.len], op.offset).map_err(|e| {
            CliError(format!(
                "verify: pread at offset {}: {}",
                op.offset,
                io_text(&e)
            ))
        })?;
        if let Some(i) = (0..op.len).find(|&i| i >= n || got[i] != want[i]) {
            return fail(format!(
                "verify failed: the byte at offset {} of '{}' read through hipfile differs from the file",
                op.offset + i as u64,
                path.display()
            ));
        }
        checked += op.len as u64;
    }
    Ok(checked)
}

/// The file the runs use.
struct Target {
    path: PathBuf,
    /// Open for plain reads (the warm-up, `--verify`); read-write where the tool created it.
    plain: File,
    /// A file this run created: the default scratch file (removed at the end, also on errors,
    /// unless `--keep`), or a `--file` that did not exist (kept once filled).
    created: Option<temp::Created>,
}

impl Target {
    /// The file of the runs, holding at least `size` bytes: `--file` as it is, or created and
    /// filled when it does not exist (`bench` refuses a `--file` too short to read from); by
    /// default a new scratch file in `$TMPDIR` (or `/tmp`) under a name of its own, so that
    /// nothing there is ever opened, followed or removed, and two benches never share one.
    fn prepare(a: &BenchArgs, read: bool, bars: bool) -> CliResult<Target> {
        let Some(path) = &a.file else {
            let dir = std::env::temp_dir();
            let (file, mut created) = temp::create_named(&dir, "hipfile-bench-", ".dat", 0)
                .map_err(|e| {
                    CliError(format!(
                        "cannot create a scratch file in '{}': {}",
                        dir.display(),
                        io_text(&e)
                    ))
                })?;
            let path = created.path().to_path_buf();
            fill(&path, &file, a.size, bars)?;
            if a.keep {
                created.keep();
            }
            return Ok(Target {
                path,
                plain: file,
                created: Some(created),
            });
        };
        let q = format!("'{}'", path.display());
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => return fail(format!("{q} is a directory")),
            Ok(m) if m.len() < a.size && read => {
                return fail(format!(
                "{q} holds {} bytes, fewer than --size {}: give a smaller --size or a larger file",
                m.len(),
                a.size
            ))
            }
            // Long enough, or the writes extend it.
            Ok(_) => {
                let plain = File::open(path)
                    .map_err(|e| CliError(format!("cannot open {q}: {}", io_text(&e))))?;
                return Ok(Target {
                    path: path.clone(),
                    plain,
                    created: None,
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return fail(format!("cannot stat {q}: {}", io_text(&e))),
        }
        let (file, mut created) = temp::create_at(path, 0o644)
            .map_err(|e| CliError(format!("cannot create regular file {q}: {}", io_text(&e))))?;
        fill(path, &file, a.size, bars)?;
        // The user's file from now on.
        created.keep();
        Ok(Target {
            path: path.clone(),
            plain: file,
            created: Some(created),
        })
    }

    /// Open the file for the runs with `options`: the file this run created, never anything
    /// put at its name since.
    fn open(&self, options: &mut OpenOptions, flags: i32) -> std::io::Result<File> {
        match &self.created {
            Some(c) => c.reopen(options, flags),
            None => options.custom_flags(flags).open(&self.path),
        }
    }
}

/// Fill the new file `f` (at `path`) with `size` bytes of non-zero pseudo-random data,
/// written in large chunks, fsync'd. On an error the caller's guard removes it: a file left
/// half-written would pass for a prepared one.
fn fill(path: &Path, f: &File, size: u64, bars: bool) -> CliResult<()> {
    let q = format!("'{}'", path.display());
    let mut bar = DelayedBar::new(
        size,
        "creating the file {bytes}/{total_bytes} {wide_bar} {binary_bytes_per_sec}",
        bars,
    );
    let mut rng = Rng::new(size);
    let mut chunk = vec![0u8; FILL_CHUNK];
    let mut left = size;
    while left > 0 {
        if let Some(sig) = signals::pending() {
            return fail(format!("creating {q}: {}", signals::describe(sig)));
        }
        let n = (left as usize).min(FILL_CHUNK);
        rng.fill_nonzero(&mut chunk[..n]);
        let mut w = f;
        w.write_all(&chunk[..n])
            .map_err(|e| CliError(format!("error writing {q}: {}", io_text(&e))))?;
        left -= n as u64;
        bar.set_position(size - left);
    }
    f.sync_all()
        .map_err(|e| CliError(format!("error writing {q}: {}", io_text(&e))))
}

/// Read the first `size` bytes of `f` (at `path`) once through the page cache.
fn warm_up(path: &Path, f: &File, size: u64, bars: bool) -> CliResult<()> {
    let mut bar = DelayedBar::new(
        size,
        "warm-up read {bytes}/{total_bytes} {wide_bar} {binary_bytes_per_sec}",
        bars,
    );
    let mut buf = vec![0u8; FILL_CHUNK];
    let mut off = 0;
    while off < size {
        if let Some(sig) = signals::pending() {
            return fail(format!("warm-up: {}", signals::describe(sig)));
        }
        let n = (size - off).min(FILL_CHUNK as u64) as usize;
        let got = pread_full(f, &mut buf[..n], off).map_err(|e| {
            CliError(format!(
                "warm-up read of '{}': {}",
                path.display(),
                io_text(&e)
            ))
        })?;
        if got == 0 {
            break;
        }
        off += got as u64;
        bar.set_position(off);
    }
    Ok(())
}

/// Drop the file's pages: `fdatasync` + `POSIX_FADV_DONTNEED`, and as root the whole page
/// cache too (`/proc/sys/vm/drop_caches`; failure ignored).
fn drop_cache(fd: BorrowedFd<'_>) -> CliResult<()> {
    hipfile::api::sync_data(&fd)
        .map_err(|e| CliError(format!("--drop-cache: fdatasync: {}", lib_text(&e))))?;
    rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed).map_err(|e| {
        CliError(format!(
            "--drop-cache: posix_fadvise: {}",
            crate::util::errno_text(e.raw_os_error())
        ))
    })?;
    if rustix::process::geteuid().is_root() {
        let _ = fs::write("/proc/sys/vm/drop_caches", "1");
    }
    Ok(())
}

/// The three configurations.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hipfile,
    Pread1t,
    PreadNt,
}

/// Run `hipfile bench`.
pub(crate) fn run(a: &BenchArgs) -> CliResult<()> {
    signals::install();
    if a.verify && !a.mode.is_read() {
        return fail("--verify checks what reads bring: use it with --mode read or randread");
    }
    if a.api == Api::Batch && a.mem != Mem::Device {
        return fail("--api batch moves data between files and device memory: use --mem device");
    }
    if a.api == Api::Async && a.mem != Mem::Device {
        return fail("--api async moves data between files and device memory: use --mem device");
    }
    // Batch and async: each thread keeps `depth` operations in flight, each in its own slice
    // of memory.
    let depth = match a.api {
        Api::Sync => 1,
        Api::Batch => a.batch_depth as usize,
        Api::Async => (a.streams * a.depth) as usize,
    };
    if a.direct && (a.io_size % PAGE as u64 != 0 || a.size % PAGE as u64 != 0) {
        return fail(format!(
            "--direct needs --size and --io-size to be multiples of {PAGE} bytes"
        ));
    }
    let read = a.mode.is_read();
    let threads = a.threads as usize;
    let io_size = a.io_size as usize;

    // Writes overwrite --file from its start: only with --force when it exists (a regular file,
    // or a block device: a whole disk). A directory is refused below, with or without it.
    if let (false, Some(path), false) = (read, &a.file, a.force) {
        if let Ok(m) = fs::metadata(path) {
            if !m.is_dir() {
                return fail(format!(
                    "'{}' exists and --mode {} would overwrite it: give --force, or a --file that does not exist",
                    path.display(),
                    a.mode.name()
                ));
            }
        }
    }
    let choice = hipfile::api::runtime_report();
    let rt = &choice;
    if a.mem == Mem::Device && rt.platform == Platform::Host {
        return fail(format!(
            "no GPU device memory: the library runs host-only ({}); use --mem host, or --sim for the simulated GPU",
            choice.reason
        ));
    }
    if a.mem == Mem::Device {
        let count = rt.device_count.max(0);
        if a.device >= count as u32 {
            return fail(format!(
                "--device {}: the GPU runtime has {count} device(s)",
                a.device
            ));
        }
        // Device memory is allocated on the current device, by this thread.
        hipfile::api::set_device(a.device as i32)
            .map_err(|e| CliError(format!("cannot use device {}: {e}", a.device)))?;
    }
    if a.duration.is_none() {
        if let Some(w) = slow_request_warning(a.size, a.io_size, !read, "--io-size") {
            errln!("hipfile: warning: {w}");
        }
    }
    let _driver = DriverGuard::open();
    let config = hipfile::api::config();

    let bars = !a.json && !a.quiet && stderr_is_terminal();
    // Holds the scratch file's guard: removed when `run` returns, whichever way.
    let target = Target::prepare(a, read, bars)?;
    let path = target.path.clone();

    let mut oo = OpenOptions::new();
    oo.read(true).write(!read);
    let file = target
        .open(&mut oo, if a.direct { libc::O_DIRECT } else { 0 })
        .map_err(|e| {
            CliError(format!(
                "cannot open '{}'{}: {}",
                path.display(),
                if a.direct { " with O_DIRECT" } else { "" },
                io_text(&e)
            ))
        })?;
    let fd = file.as_fd();
    let reg = RegisteredFile::register(&file).map_err(|e| {
        CliError(format!(
            "cannot register '{}' with hipfile: {}",
            path.display(),
            lib_text(&e)
        ))
    })?;

    // Plans and memory, all allocated and touched before any run.
    let pat = pattern();
    let plans = plan(a.size, a.io_size, threads, a.mode.is_random());
    let flat: Vec<Op> = plans.iter().flatten().copied().collect();
    let mut bufs = (0..threads)
        .map(|_| match a.mem {
            Mem::Device => alloc_device(io_size * depth, &pat).map(Buf::Device),
            Mem::Host => alloc_pageable(io_size, &pat).map(Buf::Host),
        })
        .collect::<CliResult<Vec<Buf>>>()?;
    // Device buffers are registered, as applications (and gdsio) do for repeated I/O.
    let _registrations = if a.no_register {
        Vec::new()
    } else {
        bufs.iter()
            .filter_map(|b| match b {
                Buf::Device(m) => Some(RegisteredBuffer::device(m)),
                Buf::Host(_) => None,
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CliError(format!("cannot register a device buffer: {}", lib_text(&e))))?
    };
    let nt_threads = config.io_threads.max(threads);
    let piece = baseline_piece(a.size, a.io_size, nt_threads);
    let mut one_host = None;
    let mut nt_states = Vec::new();
    if a.compare {
        one_host = Some(alloc_pageable(io_size, &pat)?);
        for ops in split_pieces(&flat, piece, nt_threads) {
            let (host, dev) = match a.mem {
                Mem::Device => (
                    HostBuf::Pinned(alloc_pinned(piece as usize, &pat, a.direct)?),
                    Some(alloc_device(piece as usize, &pat)?),
                ),
                Mem::Host => (
                    HostBuf::Pageable(alloc_pageable(piece as usize, &pat)?),
                    None,
                ),
            };
            nt_states.push((host, dev, ops));
        }
    }

    let warm = read && !a.drop_cache;
    if warm {
        warm_up(&path, &target.plain, a.size, bars)?;
    }

    let policy = RunPolicy {
        bars,
        duration: a.duration,
        device: a.device as i32,
    };
    let kinds: &[Kind] = if a.compare {
        &[Kind::Hipfile, Kind::Pread1t, Kind::PreadNt]
    } else {
        &[Kind::Hipfile]
    };
    let mut runs: Vec<Vec<RunResult>> = vec![Vec::new(); kinds.len()];
    let dir = if read {
        Direction::Read
    } else {
        Direction::Write
    };
    // Bytes the hipfile runs moved through each backend (fastpath, fallback, host).
    let mut served: Option<[u64; 3]> = None;
    let sync_fd =
        || hipfile::api::sync_data(&fd).map_err(|e| format!("fdatasync: {}", lib_text(&e)));
    for r in 0..a.repeat {
        for (k, kind) in kinds.iter().enumerate() {
            if a.drop_cache {
                drop_cache(fd)?;
            }
            let tag = |name: &str| format!("{name} {}/{}", r + 1, a.repeat);
            let result = match kind {
                Kind::Hipfile => {
                    let before = backend_bytes(dir);
                    let mut states: Vec<(&mut Buf, &[Op])> = bufs
                        .iter_mut()
                        .zip(plans.iter())
                        .map(|(b, p)| (b, p.as_slice()))
                        .collect();
                    let result = run_threads(
                        &mut states,
                        &tag("hipfile"),
                        a.size,
                        policy,
                        |(buf, ops), sh| match (a.api, &**buf) {
                            (Api::Batch, Buf::Device(m)) => {
                                batch_ops(&reg, m, ops, depth, io_size, read, sh)
                            }
                            (Api::Async, Buf::Device(m)) => async_ops(
                                &reg,
                                m,
                                ops,
                                AsyncShape {
                                    streams: a.streams as usize,
                                    depth: a.depth as usize,
                                    slot_len: io_size,
                                    read,
                                    keep_in_flight: a.keep_in_flight,
                                    flags: a.stream_flags.0,
                                },
                                sh,
                            ),
                            _ => timed_ops(ops, sh, |op| hipfile_op(&reg, buf, op, read)),
                        },
                        None,
                    )?;
                    if let (Some(b), Some(a)) = (before, backend_bytes(dir)) {
                        let total = served.get_or_insert([0; 3]);
                        for i in 0..3 {
                            total[i] += a[i].saturating_sub(b[i]);
                        }
                    }
                    result
                }
                Kind::Pread1t => {
                    let dev = match &bufs[0] {
                        Buf::Device(m) => Some(m),
                        Buf::Host(_) => None,
                    };
                    let host = one_host.as_mut().expect("allocated with --compare");
                    let mut states = [(host, dev)];
                    run_threads(
                        &mut states,
                        &tag("pread_1t"),
                        a.size,
                        policy,
                        |(host, dev), sh| {
                            timed_ops(&flat, sh, |op| {
                                plain_op(fd, host.as_mut_slice(), *dev, op, read)
                            })
                        },
                        (!read).then_some(&sync_fd as &(dyn Fn() -> Result<(), String> + Sync)),
                    )?
                }
                Kind::PreadNt => run_threads(
                    &mut nt_states,
                    &tag("pread_nt"),
                    a.size,
                    policy,
                    |(host, dev, ops), sh| {
                        timed_ops(ops, sh, |op| {
                            plain_op(fd, host.as_mut_slice(), dev.as_ref(), op, read)
                        })
                    },
                    (!read).then_some(&sync_fd as &(dyn Fn() -> Result<(), String> + Sync)),
                )?,
            };
            runs[k].push(result);
        }
    }

    let verified = if a.verify {
        Some(verify_reads(
            a,
            &path,
            &target.plain,
            &reg,
            &mut bufs[0],
            &flat,
        )?)
    } else {
        None
    };

    let io_type = a.mode.io_type();
    let (x1, xn) = if read {
        ("PREAD_1T", "PREAD_NT")
    } else {
        ("PWRITE_1T", "PWRITE_NT")
    };
    let label = |xfer_type, threads, io| Label {
        io_type,
        xfer_type,
        threads,
        dataset_total_bytes: a.size,
        io_size_bytes: io,
    };
    let hip = Measurement::median(label("HIPFILE", threads, a.io_size), &runs[0]);
    let baselines = a.compare.then(|| {
        (
            Measurement::median(label(x1, 1, a.io_size), &runs[1]),
            Measurement::median(label(xn, nt_threads, piece), &runs[2]),
        )
    });
    let ratio = |b: &Measurement| {
        if b.gib_per_s > 0.0 {
            hip.gib_per_s / b.gib_per_s
        } else {
            0.0
        }
    };

    if a.json {
        let backends = match served {
            Some(b) => Value::obj()
                .with("fastpath", b[0])
                .with("fallback", b[1])
                .with("host", b[2]),
            None => Value::Null,
        };
        let mut v = Value::obj()
            .with("hipfile", hip.to_json())
            .with("backend_bytes", backends)
            .with("verified_bytes", verified);
        if let Some((one, nt)) = &baselines {
            v = v
                .with(
                    "baselines",
                    Value::obj()
                        .with("pread_1t", one.to_json())
                        .with("pread_nt", nt.to_json()),
                )
                .with(
                    "ratios",
                    Value::obj()
                        .with("hipfile_over_pread_nt", ratio(nt))
                        .with("hipfile_over_pread_1t", ratio(one)),
                );
        }
        let cfg = Value::obj()
            .with("platform", rt.platform.name())
            .with("simulated", rt.simulated)
            .with("runtime", rt.description.as_str())
            .with("reason", crate::util::chosen_because(rt))
            .with("engine_threads", config.io_threads)
            .with("chunk_size", config.chunk_size)
            .with("library", crate::check::config_json(&config))
            .with("file", path.display().to_string())
            .with("mode", a.mode.name())
            .with("mem", a.mem.name())
            .with("api", a.api.name())
            .with("batch_depth", (a.api == Api::Batch).then_some(depth))
            .with("streams", (a.api == Api::Async).then_some(a.streams))
            .with("depth", (a.api == Api::Async).then_some(a.depth))
            .with(
                "keep_in_flight",
                (a.api == Api::Async).then_some(a.keep_in_flight),
            )
            .with(
                "stream_flags",
                (a.api == Api::Async).then(|| a.stream_flags.to_string()),
            )
            .with(
                "submit_us",
                (a.api == Api::Async).then(|| submit_micros().0),
            )
            .with("direct", a.direct)
            .with("drop_cache", a.drop_cache)
            .with("warm_up", warm)
            .with("size", a.size)
            .with("io_size", a.io_size)
            .with("threads", threads)
            .with("device", a.device)
            .with("duration_s", a.duration.map(|d| d.as_secs_f64()))
            .with("repeat", a.repeat)
            .with("baseline_threads", nt_threads)
            .with("baseline_piece", piece);
        outln!("{}", v.with("config", cfg).to_json());
        return Ok(());
    }
    outln!(
        "{}",
        header(rt, &crate::util::chosen_because(rt), &config, &path, a)
    );
    outln!("{}", hip.gdsio_line());
    outln!("HIPFILE served by: {}", backends_text(served));
    if a.api == Api::Async {
        let (us, n) = submit_micros();
        outln!(
            "submission: {us:.1} us per hipFile{}Async call (mean of {n} calls)",
            if read { "Read" } else { "Write" }
        );
    }
    if let Some(n) = verified {
        outln!(
            "verify: {} read again through hipfile, identical to the file",
            fmt_bytes(n)
        );
    }
    if let Some((one, nt)) = &baselines {
        outln!("{}", one.gdsio_line());
        outln!("{}", nt.gdsio_line());
        outln!(
            "hipfile/{} = {:.2}x, hipfile/{} = {:.2}x",
            nt.xfer_type.to_ascii_lowercase(),
            ratio(nt),
            one.xfer_type.to_ascii_lowercase(),
            ratio(one)
        );
    }
    Ok(())
}

/// The line before the results: platform, runtime and why, engine threads and chunk size.
fn header(
    rt: &RuntimeReport,
    reason: &str,
    config: &ConfigSnapshot,
    path: &Path,
    a: &BenchArgs,
) -> String {
    let runtime = if rt.simulated {
        format!("SIMULATED GPU runtime: {}", rt.description)
    } else {
        rt.description.clone()
    };
    format!(
        "hipfile bench: platform {}, {} (chosen: {}); engine {} threads, chunk {}; file {}{}, mem {}, api {}, \
         median of {} run(s){}",
        rt.platform.name(),
        runtime,
        reason,
        config.io_threads,
        fmt_bytes(config.chunk_size as u64),
        path.display(),
        if a.direct { " (O_DIRECT)" } else { "" },
        a.mem.name(),
        match a.api {
            Api::Sync => "sync".to_string(),
            Api::Batch => format!("batch (depth {} per thread)", a.batch_depth),
            Api::Async => format!(
                "async ({} stream(s) x {} {} per thread)",
                a.streams,
                a.depth,
                if a.keep_in_flight {
                    "kept in flight"
                } else {
                    "queued"
                }
            ),
        },
        a.repeat,
        if a.drop_cache {
            ", page cache dropped before each run"
        } else if a.mode.is_read() {
            ", warm page cache"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_plan_covers_the_file_once() {
        let p = plan(10 << 20, 4 << 20, 2, false);
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0],
            vec![Op {
                offset: 0,
                len: 4 << 20
            }]
        );
        assert_eq!(
            p[1],
            vec![
                Op {
                    offset: 4 << 20,
                    len: 4 << 20
                },
                Op {
                    offset: 8 << 20,
                    len: 2 << 20
                }
            ]
        );
        let p = plan(1 << 30, 16 << 20, 3, false);
        let flat: Vec<Op> = p.iter().flatten().copied().collect();
        assert_eq!(flat.len(), 64);
        assert!(
            flat.windows(2)
                .all(|w| w[1].offset == w[0].offset + w[0].len as u64),
            "contiguous regions in order"
        );
        assert_eq!(flat.iter().map(|o| o.len as u64).sum::<u64>(), 1 << 30);
        assert!(
            plan(4096, 4096, 4, false).iter().flatten().count() == 1,
            "more threads than ops"
        );
    }

    #[test]
    fn random_plan_is_aligned_deterministic_and_same_count() {
        let p = plan(64 << 20, 1 << 20, 4, true);
        assert_eq!(p.iter().map(Vec::len).sum::<usize>(), 64);
        assert!(p.iter().all(|t| t.len() == 16));
        assert!(p
            .iter()
            .flatten()
            .all(|o| o.offset % (1 << 20) == 0 && o.offset < 64 << 20 && o.len == 1 << 20));
        assert_eq!(p, plan(64 << 20, 1 << 20, 4, true));
        let distinct: std::collections::HashSet<u64> =
            p.iter().flatten().map(|o| o.offset).collect();
        assert!(distinct.len() > 16, "offsets vary");
    }

    #[test]
    fn pieces_split_and_deal() {
        let ops = [
            Op { offset: 0, len: 10 },
            Op {
                offset: 100,
                len: 4,
            },
        ];
        let s = split_pieces(&ops, 4, 2);
        let flat: Vec<Op> = s.iter().flatten().copied().collect();
        assert_eq!(
            flat,
            vec![
                Op { offset: 0, len: 4 },
                Op { offset: 4, len: 4 },
                Op { offset: 8, len: 2 },
                Op {
                    offset: 100,
                    len: 4
                }
            ]
        );
        assert_eq!(s[0].len(), 2);
        assert_eq!(
            split_pieces(&ops, 100, 4)
                .iter()
                .filter(|t| t.is_empty())
                .count(),
            2
        );
    }

    #[test]
    fn baseline_piece_sizes() {
        assert_eq!(baseline_piece(1 << 30, 256 << 20, 16), 16 << 20);
        assert_eq!(baseline_piece(1 << 30, 1 << 20, 16), 1 << 20);
        assert_eq!(
            baseline_piece(64 << 20, 8 << 20, 16),
            4 << 20,
            "every thread gets work"
        );
        assert_eq!(
            baseline_piece(4096, 1 << 20, 64),
            4096,
            "never below a page"
        );
    }
}
