//! The close race: I/O threads that hold no driver reference of their own read and write the
//! model's files while other threads open the driver and close it, often down to 0, so that
//! closes land in the middle of calls. Every call is checked against the model:
//!
//! * a read that returns a count returns exactly the model's bytes;
//! * a write that returns the whole count is stored in the model;
//! * a write that fails, or returns less, is checked on disk at once (still under its block
//!   locks): the bytes it reported are the new ones, every other byte of its range is the old
//!   one. A call that reports failure leaves the file as it was, or reports what it moved;
//! * a stream-ordered read or write (on the thread's own stream, synchronised at once) is
//!   checked as a synchronous one by the result it stores; one refused at submission must have
//!   been refused because of the close (`hipFileDriverNotInitialized`, `hipFileDriverClosing`,
//!   `hipFileHandleNotRegistered`), and a refused write must leave the file as it was;
//! * batches of up to four reads and writes (some cancelled) are reaped and checked the same
//!   way: a completed write's bytes are on disk, a cancelled or never queued one left the old
//!   bytes, and one whose context a close took away before it was reaped is all old or all new
//!   bytes and is over by then (nothing of a context may run once its handle answers
//!   "unknown": a later read or write of the same blocks would see it land).
//!
//! Each close to 0 stages a chunk size for the next open (64 KiB, 256 KiB or 4 MiB), so that
//! requests run as one chunk or as many shared with helpers; racers also change the bounce
//! budget live. The errors a call may see while closes race are those of a closed driver (`-1`
//! with `EINVAL`) and of a handle the close made stale (`-hipFileHandleNotRegistered`; for a
//! batch, `hipFileInvalidValue` or `hipFileInternalError` at submission and
//! `hipFileInvalidValue` from `GetStatus`); any other result is counted as unexpected. Wrong
//! bytes and unexpected results are counted, the first few described, and the run fails at the
//! end if any was seen.
//!
//! `HIPFILE_CLOSE_RACE_SECS` (default 10) and `HIPFILE_CLOSE_RACE_THREADS` (default 64 I/O
//! threads; four more close and reopen) size the run; `scripts/reliability.sh` runs it longer.

use std::ffi::c_void;

use super::*;

/// Threads that open and close the driver.
const CLOSERS: usize = 4;
/// Wrong results described in full (the rest are counted).
const DESCRIBED: u64 = 8;

#[derive(Default)]
struct RaceFigures {
    reads: AtomicU64,
    writes: AtomicU64,
    bytes_checked: AtomicU64,
    failed_reads: AtomicU64,
    failed_writes: AtomicU64,
    opens: AtomicU64,
    closes_to_zero: AtomicU64,
    registrations: AtomicU64,
    /// Calls during which a close (possibly to 0) returned.
    overlapped: AtomicU64,
    batch_ops: AtomicU64,
    /// Stream-ordered calls, and those refused at submission because of a close.
    stream_calls: AtomicU64,
    stream_refused: AtomicU64,
    /// Batch operations whose context a close took away before they were reaped.
    batch_orphans: AtomicU64,
    /// Calls whose bytes (read, or left on disk by a failed write) differ from the model.
    wrong_calls: AtomicU64,
    wrong_bytes: AtomicU64,
    unexpected: AtomicU64,
}

struct RaceShared {
    model: Model,
    figures: RaceFigures,
    stop: AtomicBool,
    /// Successful closes so far: a call that sees it change was overlapped by one.
    closes: AtomicU64,
}

impl RaceShared {
    /// One wrong result: counted, and described while few.
    fn wrong(&self, what: String, bytes: usize) {
        let n = self.figures.wrong_calls.fetch_add(1, Ordering::Relaxed);
        self.figures
            .wrong_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
        if n < DESCRIBED {
            eprintln!("close race: WRONG: {what}");
        }
    }

    /// Counts a call as overlapped when a close returned while it ran (`before` is
    /// [`RaceShared::closes`] read before the call).
    fn overlapped(&self, before: u64) {
        if self.closes.load(Ordering::SeqCst) != before {
            self.figures.overlapped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn unexpected(&self, what: String) {
        let n = self.figures.unexpected.fetch_add(1, Ordering::Relaxed);
        if n < DESCRIBED {
            eprintln!("close race: UNEXPECTED: {what}");
        }
    }
}

/// How a failed call failed, when that is what a racing close may cause: the driver was
/// closed (`-1`/`EINVAL`) or the handle went stale with it.
fn close_caused(n: isize, errno: c_int) -> bool {
    (n == -1 && errno == libc::EINVAL) || n == -(hipFileHandleNotRegistered as isize)
}

/// A byte count as the model's difference count: bytes of `a` and `b` that differ.
fn differing(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count() + a.len().abs_diff(b.len())
}

/// A racing thread: the stress test's per-thread state, with the race's own steps, and its
/// stream for stream-ordered calls (made on first use).
struct Racer(Worker, Option<async_ops::Stream>);

/// How a read or write moves its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// `hipFileRead`/`hipFileWrite` with host memory.
    Host,
    /// `hipFileRead`/`hipFileWrite` with device memory.
    Device,
    /// `hipFileReadAsync`/`hipFileWriteAsync` with device memory.
    Stream,
}

/// What a read or write returned.
#[derive(Debug, PartialEq, Eq)]
enum Ret {
    /// A byte count.
    Count(usize),
    /// A failure a racing close explains.
    Closed,
    /// Any other failure, described.
    Other(String),
}

impl Ret {
    /// A synchronous call's result: a closed driver is `-1` with `EINVAL`, a handle the close
    /// made stale `-hipFileHandleNotRegistered`.
    fn of_sync(n: isize) -> Ret {
        let errno = errno();
        match n {
            n if n >= 0 => Ret::Count(n as usize),
            n if close_caused(n, errno) => Ret::Closed,
            n => Ret::Other(format!("{n} (errno {errno})")),
        }
    }
}

impl Racer {
    /// The thread's handle of file `f`, registered (an implicit open) when it has none.
    fn handle(&mut self, sh: &RaceShared, f: usize) -> hipFileHandle_t {
        if self.0.handles[f].is_none() {
            let mut fh: hipFileHandle_t = std::ptr::null_mut();
            let mut d = descr(self.0.fds[f]);
            // SAFETY: valid pointers.
            let r = unsafe { hipFileHandleRegister(&mut fh, &mut d) };
            if r.err != 0 {
                sh.unexpected(format!("hipFileHandleRegister: {r:?}"));
                return std::ptr::null_mut();
            }
            sh.figures.registrations.fetch_add(1, Ordering::Relaxed);
            self.0.handles[f] = Some(fh);
        }
        self.0.handles[f].unwrap()
    }

    fn step(&mut self, sh: &RaceShared) {
        match self.0.rng.below(20) {
            0 => {
                // A registration the close dropped answers "not registered" or "closing".
                let b = &mut self.0.bufs[self.0.rng.below(2)];
                if b.registered {
                    hipFileBufDeregister(b.dev.ptr);
                    b.registered = false;
                } else {
                    b.registered = hipFileBufRegister(b.dev.ptr, BUF_LEN, 0).err == 0;
                }
            }
            1 => {
                if let Some(fh) = self.0.handles[self.0.rng.below(FILES)].take() {
                    hipFileHandleDeregister(fh);
                }
            }
            2 if self.0.rng.chance(4) => {
                // The bounce budget, live (staged when the driver is closed).
                let kb = [4096usize, 16384, 262_144][self.0.rng.below(3)];
                check_code(
                    "hipFileDriverSetMaxCacheSize",
                    hipFileDriverSetMaxCacheSize(kb),
                );
            }
            3..=5 => self.batch(sh),
            2..=11 => self.io(sh, true),
            _ => self.io(sh, false),
        }
    }

    /// One read or write of a random range, synchronous (host or device memory) or
    /// stream-ordered (device memory, on the thread's own stream, synchronised at once),
    /// checked against the model under its block locks.
    fn io(&mut self, sh: &RaceShared, write: bool) {
        let f = self.0.rng.below(FILES);
        let (off, size) = self.0.rng.range();
        let fh = self.handle(sh, f);
        if fh.is_null() {
            return;
        }
        let way = match self.0.rng.below(5) {
            0 => Way::Host,
            1 => Way::Stream,
            _ => Way::Device,
        };
        let bi = self.0.rng.below(self.0.bufs.len());
        let seed = self.0.rng.next();
        let expect = size.min(FILE_LEN - off);
        let dev = self.0.bufs[bi].dev.ptr;
        let call = format!(
            "thread {}: {}({} at {off}, {way:?}) of file {f}",
            self.0.t,
            if write { "write" } else { "read" },
            if write { expect } else { size }
        );
        if write {
            let data = pattern(expect, seed);
            let mut held = sh.model.write(f, off, size);
            let closes = sh.closes.load(Ordering::SeqCst);
            let ret = match way {
                Way::Host => {
                    self.0.host[..expect].copy_from_slice(&data);
                    // SAFETY: host buffer of BUF_LEN >= expect bytes.
                    let n = unsafe {
                        hipFileWrite(fh, self.0.host.as_ptr().cast(), expect, off as i64, 0)
                    };
                    Ret::of_sync(n)
                }
                Way::Device | Way::Stream => {
                    sim().upload(dev, &data);
                    self.device_call(sh, fh, dev, (off, expect), way, true)
                }
            };
            sh.overlapped(closes);
            if ret == Ret::Count(expect) {
                held.store(off, &data);
                sh.figures.writes.fetch_add(1, Ordering::Relaxed);
                sh.figures
                    .bytes_checked
                    .fetch_add(expect as u64, Ordering::Relaxed);
                return;
            }
            // Failed or short: the reported prefix is new, the rest of the range untouched.
            let done = match ret {
                Ret::Count(n) => n.min(expect),
                _ => 0,
            };
            if ret == Ret::Closed {
                self.0.handles[f] = None;
            } else {
                sh.unexpected(format!("{call} returned {ret:?}"));
            }
            let mut want = held.bytes(off, expect);
            want[..done].copy_from_slice(&data[..done]);
            let mut disk = vec![0u8; expect];
            let file = std::fs::File::open(&sh.model.files[f].path).unwrap();
            file.read_exact_at(&mut disk, off as u64).unwrap();
            if disk != want {
                let first = disk.iter().zip(&want).position(|(a, b)| a != b).unwrap();
                let of_new = (done..expect).filter(|&i| disk[i] == data[i]).count();
                sh.wrong(
                    format!(
                        "{call} returned {ret:?} but changed the file: first differing byte at \
                         {}, {} bytes differ, {of_new} of them the failed write's",
                        off + first,
                        differing(&disk, &want)
                    ),
                    differing(&disk, &want),
                );
                // The model follows the file, so later checks stay meaningful.
                held.store(off, &disk);
            }
            sh.figures.failed_writes.fetch_add(1, Ordering::Relaxed);
        } else {
            let held = sh.model.read(f, off, size);
            let closes = sh.closes.load(Ordering::SeqCst);
            let ret = match way {
                Way::Host => {
                    self.0.host[..size].fill(0xEE);
                    // SAFETY: host buffer of BUF_LEN >= size bytes.
                    let n = unsafe {
                        hipFileRead(fh, self.0.host.as_mut_ptr().cast(), size, off as i64, 0)
                    };
                    Ret::of_sync(n)
                }
                Way::Device | Way::Stream => self.device_call(sh, fh, dev, (off, size), way, false),
            };
            sh.overlapped(closes);
            let n = match ret {
                Ret::Count(n) => n,
                Ret::Closed => {
                    self.0.handles[f] = None;
                    sh.figures.failed_reads.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Ret::Other(_) => {
                    sh.unexpected(format!("{call} returned {ret:?}"));
                    sh.figures.failed_reads.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            };
            if n != expect {
                sh.unexpected(format!("{call} returned {n}, want {expect}"));
            }
            let got = match way {
                Way::Host => self.0.host[..expect].to_vec(),
                Way::Device | Way::Stream => sim().download(dev, expect),
            };
            let want = held.bytes(off, size);
            let n = n.min(expect);
            if got[..n] != want[..n] {
                let first = got.iter().zip(&want).position(|(a, b)| a != b).unwrap();
                sh.wrong(
                    format!(
                        "{call}: byte {} and {} in all differ from the model",
                        off + first,
                        differing(&got[..n], &want[..n])
                    ),
                    differing(&got[..n], &want[..n]),
                );
            }
            sh.figures.reads.fetch_add(1, Ordering::Relaxed);
            sh.figures
                .bytes_checked
                .fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    /// A read or write of `size` bytes at `off` of device memory `dev`: `hipFileRead`/
    /// `hipFileWrite`, or the stream-ordered call on the thread's stream, which is synchronised
    /// before its result is read.
    fn device_call(
        &mut self,
        sh: &RaceShared,
        fh: hipFileHandle_t,
        dev: *mut c_void,
        (off, size): (usize, usize),
        way: Way,
        write: bool,
    ) -> Ret {
        if way != Way::Stream {
            // SAFETY: device buffer of BUF_LEN >= size bytes.
            let n = unsafe {
                if write {
                    hipFileWrite(fh, dev, size, off as i64, 0)
                } else {
                    hipFileRead(fh, dev, size, off as i64, 0)
                }
            };
            return Ret::of_sync(n);
        }
        sh.figures.stream_calls.fetch_add(1, Ordering::Relaxed);
        let stream = self.1.get_or_insert_with(async_ops::Stream::new);
        let mut params = async_ops::Params::new(size, off as i64, 0);
        let e = if write {
            async_ops::write_async(fh, dev, &mut params, stream)
        } else {
            async_ops::read_async(fh, dev, &mut params, stream)
        };
        if e.err != 0 {
            // Refused at submission: nothing was queued. A close explains a closed driver
            // (before the call or while it ran) and a handle the close made stale.
            return if [
                hipFileInvalidValue,
                hipFileDriverNotInitialized,
                hipFileDriverClosing,
                hipFileHandleNotRegistered,
            ]
            .contains(&e.err)
            {
                sh.figures.stream_refused.fetch_add(1, Ordering::Relaxed);
                Ret::Closed
            } else {
                Ret::Other(format!("submission {e:?}"))
            };
        }
        stream.sync();
        match params.result() {
            n if n >= 0 => Ret::Count(n as usize),
            n => Ret::Other(format!("result {n}")),
        }
    }

    /// A batch of up to four reads and writes on distinct blocks of one file, submitted and
    /// reaped while closes race: a close takes the context away (its handle goes stale), which
    /// the checks below allow for.
    fn batch(&mut self, sh: &RaceShared) {
        let f = self.0.rng.below(FILES);
        let fh = self.handle(sh, f);
        if fh.is_null() {
            return;
        }
        let n = 1 + self.0.rng.below(4);
        let mut blocks: Vec<usize> = (0..n).map(|_| self.0.rng.below(BLOCKS)).collect();
        blocks.sort_unstable();
        blocks.dedup();
        struct Entry {
            off: usize,
            size: usize,
            write: bool,
            data: Vec<u8>,
            /// Offset in the device buffer.
            at: usize,
        }
        let dev = &self.0.bufs[0].dev;
        let mut entries = Vec::new();
        let mut locks = Vec::new();
        for (k, &b) in blocks.iter().enumerate() {
            let size = 1 + self.0.rng.below(BLOCK);
            let off = b * BLOCK + self.0.rng.below(BLOCK - size + 1);
            let write = self.0.rng.chance(2);
            let data = if write {
                pattern(size, self.0.rng.next())
            } else {
                Vec::new()
            };
            locks.push(if write {
                sh.model.write(f, off, size)
            } else {
                sh.model.read(f, off, size)
            });
            let at = k * BLOCK;
            if write {
                sim().upload(dev.at(at), &data);
            }
            entries.push(Entry {
                off,
                size,
                write,
                data,
                at,
            });
        }
        let params: Vec<hipFileIOParams_t> = entries
            .iter()
            .enumerate()
            .map(|(k, e)| {
                let (off, at) = (e.off as i64, e.at as i64);
                batch_params(fh, batch_opcode(e.write), dev.ptr, off, at, e.size, k + 1)
            })
            .collect();
        let closes = sh.closes.load(Ordering::SeqCst);
        let mut h = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check_code("hipFileBatchIOSetUp", unsafe {
            hipFileBatchIOSetUp(&mut h, params.len() as u32)
        });
        // SAFETY: `params` holds exactly that many entries.
        let e =
            unsafe { hipFileBatchIOSubmit(h, params.len() as u32, params.as_ptr().cast_mut(), 0) };
        // How each entry ended: None while unknown.
        #[derive(Clone, Copy, PartialEq)]
        enum End {
            Complete(usize),
            Failed(isize),
            Canceled,
            /// Never queued (the submission failed) or its context went away unreaped.
            NotRun,
            Orphaned,
        }
        let mut ends: Vec<Option<End>> = vec![None; entries.len()];
        if e.err != 0 {
            // A close between set-up and submission: the handle (or the file handle) is stale
            // or the driver closed; nothing was queued.
            // (A stale file handle is found out by the next synchronous call.)
            if !matches!(e.err, x if x == hipFileInvalidValue || x == hipFileInternalError) {
                sh.unexpected(format!("thread {}: hipFileBatchIOSubmit: {e:?}", self.0.t));
            }
            ends.fill(Some(End::NotRun));
        } else {
            sh.figures
                .batch_ops
                .fetch_add(params.len() as u64, Ordering::Relaxed);
            if self.0.rng.chance(4) {
                let _ = hipFileBatchIOCancel(h);
            }
            while ends.iter().any(Option::is_none) {
                let mut events: Vec<hipFileIOEvents_t> = Vec::with_capacity(entries.len());
                let mut nr = entries.len() as u32;
                let mut ts = libc::timespec {
                    tv_sec: 1,
                    tv_nsec: 0,
                };
                // SAFETY: room for `nr` events.
                let e =
                    unsafe { hipFileBatchIOGetStatus(h, 1, &mut nr, events.as_mut_ptr(), &mut ts) };
                if e.err != 0 {
                    if e.err != hipFileInvalidValue {
                        sh.unexpected(format!(
                            "thread {}: hipFileBatchIOGetStatus: {e:?}",
                            self.0.t
                        ));
                    }
                    for end in ends.iter_mut().filter(|x| x.is_none()) {
                        *end = Some(End::Orphaned);
                    }
                    break;
                }
                // SAFETY: the library wrote `nr` events.
                unsafe { events.set_len(nr as usize) };
                for ev in events {
                    let k = ev.cookie as usize - 1;
                    ends[k] = Some(match ev.status {
                        s if s == hipFileComplete => End::Complete(ev.ret),
                        s if s == hipFileFailed => End::Failed(ev.ret as isize),
                        s if s == hipFileCanceled => End::Canceled,
                        s => {
                            sh.unexpected(format!("thread {}: batch status {s}", self.0.t));
                            End::Orphaned
                        }
                    });
                }
            }
        }
        hipFileBatchIODestroy(h);
        sh.overlapped(closes);
        let path = &sh.model.files[f].path;
        for (k, e) in entries.iter().enumerate() {
            let held = &mut locks[k];
            let end = ends[k].expect("every entry ended");
            if let End::Orphaned = end {
                sh.figures.batch_orphans.fetch_add(1, Ordering::Relaxed);
            }
            if let End::Failed(r) = end {
                sh.unexpected(format!(
                    "thread {}: batch {} of {} at {} of file {f} failed with {r}",
                    self.0.t,
                    if e.write { "write" } else { "read" },
                    e.size,
                    e.off
                ));
            }
            if let End::Complete(n) = end {
                if n != e.size {
                    sh.unexpected(format!(
                        "thread {}: batch entry of {} at {} completed with {n}",
                        self.0.t, e.size, e.off
                    ));
                }
            }
            if !e.write {
                if end == End::Complete(e.size) {
                    let got = sim().download(dev.at(e.at), e.size);
                    let want = held.bytes(e.off, e.size);
                    if got != want {
                        sh.wrong(
                            format!(
                                "thread {}: batch read of {} at {} of file {f} differs from the model",
                                self.0.t, e.size, e.off
                            ),
                            differing(&got, &want),
                        );
                    }
                    sh.figures.reads.fetch_add(1, Ordering::Relaxed);
                    sh.figures
                        .bytes_checked
                        .fetch_add(e.size as u64, Ordering::Relaxed);
                }
                continue;
            }
            let mut disk = vec![0u8; e.size];
            let file = std::fs::File::open(path).unwrap();
            file.read_exact_at(&mut disk, e.off as u64).unwrap();
            let old = held.bytes(e.off, e.size);
            // Complete: the new bytes; canceled or never run: the old ones; run while its
            // context went away (nobody can reap it): all old or all new, never a mixture;
            // failed: reported above, and what reached the file is a prefix of the new bytes.
            let ok = match end {
                End::Complete(_) => disk == e.data,
                End::Canceled | End::NotRun => disk == old,
                End::Orphaned => disk == old || disk == e.data,
                End::Failed(_) => {
                    (0..=e.size).any(|p| disk[..p] == e.data[..p] && disk[p..] == old[p..])
                }
            };
            if !ok {
                sh.wrong(
                    format!(
                        "thread {}: batch write of {} at {} of file {f} left bytes that its \
                         outcome does not explain",
                        self.0.t, e.size, e.off
                    ),
                    differing(
                        &disk,
                        if end == End::Complete(e.size) {
                            &e.data
                        } else {
                            &old
                        },
                    ),
                );
            }
            held.store(e.off, &disk);
            if matches!(end, End::Complete(_)) {
                sh.figures.writes.fetch_add(1, Ordering::Relaxed);
            } else {
                sh.figures.failed_writes.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// A thread that opens and closes the driver, down to 0 one time in three.
fn closer(sh: &RaceShared, seed: u64) {
    let mut rng = Rng(seed);
    while !sh.stop.load(Ordering::Relaxed) {
        check_code("hipFileDriverOpen", hipFileDriverOpen());
        sh.figures.opens.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_micros(rng.below(2000) as u64));
        // Another closer may have taken the count to 0 meanwhile.
        let e = hipFileDriverClose();
        assert!(
            e.err == 0 || e.err == hipFileDriverNotInitialized,
            "hipFileDriverClose: {e:?}"
        );
        sh.closes.fetch_add(1, Ordering::SeqCst);
        if rng.chance(3) {
            while hipFileDriverClose().err == 0 {
                sh.closes.fetch_add(1, Ordering::SeqCst);
            }
            sh.figures.closes_to_zero.fetch_add(1, Ordering::Relaxed);
            // The next session's chunk: requests of one chunk, or of many shared with helpers.
            // Staged or "already open" (a racer's registration opened it meanwhile).
            let e = hipFileSetParameterSizeT(
                hipFileParamPropertiesPerBufferCacheSizeKB,
                [64usize, 256, 4096][rng.below(3)],
            );
            assert!(
                e.err == 0 || e.err == hipFileDriverAlreadyOpen,
                "staging the chunk size: {e:?}"
            );
        }
        std::thread::sleep(Duration::from_micros(rng.below(3000) as u64));
    }
}

pub(super) fn run_close_race() {
    let secs = env_usize("HIPFILE_CLOSE_RACE_SECS", 10);
    let threads = env_usize("HIPFILE_CLOSE_RACE_THREADS", 64);
    let files = model_files("close-race", 200);
    warm_up(&files);
    let before = process_counts();
    let pinned_before = pinned();
    let sh = Arc::new(RaceShared {
        model: Model { files },
        figures: RaceFigures::default(),
        stop: AtomicBool::new(false),
        closes: AtomicU64::new(0),
    });
    let start = Instant::now();
    let deadline = start + Duration::from_secs(secs as u64);
    let closers: Vec<_> = (0..CLOSERS)
        .map(|c| {
            let sh = sh.clone();
            std::thread::spawn(move || closer(&sh, 0x5851_F42D_4C95_7F2D ^ ((c as u64 + 1) << 20)))
        })
        .collect();
    let racers: Vec<_> = (0..threads)
        .map(|t| {
            let sh = sh.clone();
            std::thread::spawn(move || {
                let mut r = Racer(
                    Worker::new(
                        t,
                        0x2545_F491_4F6C_DD1D ^ ((t as u64 + 1) << 17) ^ secs as u64,
                        &sh.model.files,
                        2,
                    ),
                    None,
                );
                while Instant::now() < deadline {
                    r.step(&sh);
                }
                for fd in &r.0.fds {
                    // SAFETY: our descriptors; the registrations go with the last close.
                    unsafe { libc::close(*fd) };
                }
            })
        })
        .collect();
    for h in racers {
        h.join().expect("a close-race thread failed");
    }
    sh.stop.store(true, Ordering::Relaxed);
    for h in closers {
        h.join().expect("a closer failed");
    }
    while hipFileDriverClose().err == 0 {}
    let elapsed = start.elapsed();
    assert_eq!(hipFileUseCount(), 0, "use count at the end");

    let t0 = Instant::now();
    let mut after = process_counts();
    while (after.0 != before.0 || pinned() != pinned_before)
        && t0.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(10));
        after = process_counts();
    }
    let f = &sh.figures;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "close race: {threads} I/O threads + {CLOSERS} closers x {:.1} s: {} reads and {} writes \
         checked ({} MiB compared), {} failed reads, {} failed writes checked on disk, {} opens, \
         {} closes to 0, {} handle registrations, {} calls overlapped by a close, {} stream-ordered \
         calls ({} refused by a close), {} batch operations ({} orphaned by a close); {} wrong calls ({} wrong bytes), {} unexpected \
         results; fds {} -> {}, pinned bytes {} -> {}",
        elapsed.as_secs_f64(),
        load(&f.reads),
        load(&f.writes),
        load(&f.bytes_checked) >> 20,
        load(&f.failed_reads),
        load(&f.failed_writes),
        load(&f.opens),
        load(&f.closes_to_zero),
        load(&f.registrations),
        load(&f.overlapped),
        load(&f.stream_calls),
        load(&f.stream_refused),
        load(&f.batch_ops),
        load(&f.batch_orphans),
        load(&f.wrong_calls),
        load(&f.wrong_bytes),
        load(&f.unexpected),
        before.0,
        after.0,
        pinned_before,
        pinned(),
    );
    assert_eq!(load(&f.wrong_calls), 0, "calls with wrong bytes");
    assert_eq!(load(&f.unexpected), 0, "unexpected results");
    assert!(
        load(&f.reads) > 0 && load(&f.writes) > 0 && load(&f.closes_to_zero) > 0,
        "nothing raced"
    );
    // What the test is for: calls a close returned during, batches and stream-ordered calls
    // among them, and calls a close made fail (whose bytes were then checked on disk). A run
    // of a few seconds (the CI and default 10 s) has all of them many times over; a shorter
    // one, set by hand for a quick look, may miss the rarer ones.
    if secs >= 5 {
        for (figure, what) in [
            (load(&f.overlapped), "calls overlapped by a close"),
            (load(&f.batch_ops), "batch operations"),
            (load(&f.stream_calls), "stream-ordered calls"),
            (
                load(&f.failed_reads) + load(&f.failed_writes),
                "failed reads and writes",
            ),
        ] {
            assert!(figure > 0, "no {what} in {secs} s: the run did not race");
        }
    }
    assert_eq!(after.0, before.0, "descriptors leaked");
    assert_eq!(pinned(), pinned_before, "pinned memory leaked");
    files_match_the_model(&sh.model.files);
}
