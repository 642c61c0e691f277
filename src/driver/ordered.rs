//! Stream-ordered I/O: operations queued on the application's streams, served by a fixed set of
//! worker threads and staging buffers shared by every stream.
//!
//! Submission queues one launch of the staging kernel on the application's stream, over the
//! operation's mailbox ([`Mail`]), and nothing else: no lock is held across the launch (a full
//! launch queue makes it wait until the GPU drains the stream). The launch starts when the work
//! before it on the stream is done (so after the previous operation on the stream finished: its
//! kernel returned only then), says so in its mailbox, and holds the stream until the operation
//! is over. Order on a stream is therefore the GPU's: the library keeps no queue per stream, and
//! nothing is kept for a stream once its operations finished (a stream used once and destroyed
//! costs nothing afterwards; one re-created at the same address starts afresh).
//!
//! The workers ([`Ordered`], a pool of `hipfile-stream-N`, as many as
//! `HIPFILE_ASYNC_CONCURRENCY`) run only operations whose kernel started. An operation is not
//! queued on the pool when it is submitted: a worker would then wait for a kernel that has not
//! started, and with a bounded pool every worker could wait for kernels held behind work that
//! needs another worker. Instead one job at a time, the watch, looks at the mailboxes of the
//! operations waiting (no system or GPU call: a load from pinned memory each); when it finds
//! one that started, it queues its successor on the pool (the watch handed on) and runs that
//! operation itself. While every worker runs an operation, nobody watches: the successor waits
//! in the pool's queue for the first worker that is done. An operation then reads the parameters the
//! application may still change (unless the stream's FIXED flags froze them at submission),
//! borrows one of its device's stages if its memory is on the device ([`StageSet::lend`]: they
//! are lent only to operations whose kernel runs, which finish without waiting for anything of
//! the GPU, so one always comes back), runs through the same [`Backends`] as synchronous I/O,
//! stores the result in the caller's `*bytes_p`, and only then lets the kernel return.
//!
//! Why nothing can deadlock on a GPU's hardware queues: everything a held stream waits for is
//! host work, and the host waits only for kernels that already started; no GPU work is queued on
//! any other stream. Where the staging kernel cannot be loaded on a device, operations on its
//! streams run at submission, after the stream's earlier work (synchronised), and the call
//! returns when they are done (logged once by the runtime).
//!
//! Lock order: `waiting`, then nothing; `counts` is a leaf. Neither is held across a runtime
//! call or I/O; the watch is queued with neither held.
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::Session;
use crate::backend::Backends;
use crate::config::Config;
use crate::engine::{Engine, Mail, Spawner, StageSet, WorkerPool};
use crate::error::{Error, Result};
use crate::request::file::File;
use crate::request::memory::Buffer;
use crate::request::{Request, MAX_RW};
use crate::runtime::{RtError, Runtime, StreamHandle};
use crate::vocab::Direction;

/// Flags a stream may be registered with (`HIPFILE_STREAM_FLAGS_MASK`).
pub(crate) const STREAM_FLAGS_MASK: u32 = 0xf;

/// A stream's registration flags, typed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StreamFlags {
    /// `HIPFILE_STREAM_FIXED_BUF_OFFSET`: `*buffer_offset_p` is read at submission.
    pub fixed_buf_offset: bool,
    /// `HIPFILE_STREAM_FIXED_FILE_OFFSET`: `*file_offset_p` is read at submission.
    pub fixed_file_offset: bool,
    /// `HIPFILE_STREAM_FIXED_FILE_SIZE`: `*size_p` is read at submission.
    pub fixed_file_size: bool,
    /// `HIPFILE_STREAM_PAGE_ALIGNED_INPUTS`: kept, not consulted (as upstream).
    pub page_aligned_inputs: bool,
}

impl StreamFlags {
    /// The flags of `bits`; unknown bits are `InvalidValue`.
    pub(crate) fn from_bits(bits: u32) -> Result<StreamFlags> {
        if bits & !STREAM_FLAGS_MASK != 0 {
            return Err(Error::InvalidValue("unknown stream flags"));
        }
        Ok(StreamFlags {
            fixed_buf_offset: bits & 1 != 0,
            fixed_file_offset: bits & 2 != 0,
            fixed_file_size: bits & 4 != 0,
            page_aligned_inputs: bits & 8 != 0,
        })
    }
}

/// The caller's parameters of one operation, read when it runs (the C side implements this:
/// the values live behind the application's pointers).
pub(crate) trait AsyncParams: Send {
    /// `*size_p` now.
    fn size(&self) -> usize;
    /// `*file_offset_p` now; `None` when negative.
    fn file_offset(&self) -> Option<u64>;
    /// `*buffer_offset_p` now; `None` when negative.
    fn buffer_offset(&self) -> Option<usize>;
    /// Store the outcome in `*bytes_p`.
    fn set_result(&self, r: Result<usize>);
}

/// The values seen at submission (already checked against the buffer; size clamped).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Submitted {
    /// Size, clamped to [`MAX_RW`].
    pub size: usize,
    /// File offset.
    pub file_offset: u64,
    /// Buffer offset.
    pub buffer_offset: usize,
}

/// One stream-ordered operation, resolved at submission.
pub(crate) struct Op {
    /// Read or write.
    pub dir: Direction,
    /// The file.
    pub file: Arc<File>,
    /// The memory (a registration, or the pointer resolved at submission).
    pub buf: Arc<Buffer>,
    /// The session of the submission (configuration and backends).
    pub(super) session: Arc<Session>,
    /// The stream's flags at submission.
    pub flags: StreamFlags,
    /// What the submission checked.
    pub submitted: Submitted,
    /// The caller's pointers.
    pub params: Box<dyn AsyncParams>,
}

impl Op {
    /// The request this operation makes when it runs: deferred values read now, checked
    /// against what the submission saw.
    fn run(&self, engine: &Engine, rt: &'static dyn Runtime) -> Result<usize> {
        let s = self.submitted;
        let size = if self.flags.fixed_file_size {
            s.size
        } else {
            self.params.size().min(MAX_RW)
        };
        if size > s.size {
            return Err(Error::InvalidValue("the size grew after the submission"));
        }
        let file_offset = if self.flags.fixed_file_offset {
            s.file_offset
        } else {
            self.params
                .file_offset()
                .ok_or(Error::InvalidValue("negative file offset"))?
        };
        let buffer_offset = if self.flags.fixed_buf_offset {
            s.buffer_offset
        } else {
            self.params
                .buffer_offset()
                .ok_or(Error::InvalidValue("negative buffer offset"))?
        };
        // A result the caller checks as a status: a write failing part-way reports the error.
        let req = Request::new(
            self.dir,
            &self.file,
            &self.buf,
            size,
            file_offset,
            buffer_offset,
        )
        .reporting_errors();
        req.check_bounds()?;
        Backends::new(rt, &self.session.config, engine).run(&req)
    }

    /// [`Op::run`], a panic failing only this operation.
    fn run_caught(&self, engine: &Engine, rt: &'static dyn Runtime) -> Result<usize> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(engine, rt)))
            .unwrap_or(Err(Error::Internal("panic in a stream-ordered operation")))
    }
}

/// One operation launched on its stream, waiting for its kernel to start.
struct Job {
    op: Op,
    stream: StreamHandle,
    /// The stream's device: a legacy or NULL handle names another stream on each device.
    device: i32,
    set: Arc<StageSet>,
    mail: Mail,
    queued: Instant,
}

/// What the workers share under one lock.
#[derive(Default)]
struct Waiting {
    jobs: Vec<Job>,
    /// The watch is running or queued on the pool: the one job that looks at `jobs` for a
    /// kernel that started.
    watched: bool,
}

/// Operations submitted and not finished: in all, per stream, per file.
#[derive(Default)]
struct Counts {
    total: usize,
    by_stream: HashMap<StreamHandle, usize>,
    by_file: HashMap<usize, usize>,
    /// Set by the shut-down: a submission that comes later (one that raced the close) is
    /// refused, since the workers that would run it are about to go.
    closed: bool,
}

impl Counts {
    /// Counts an operation in, unless the service is shutting down.
    fn add(&mut self, stream: StreamHandle, file: usize) -> Result<()> {
        if self.closed {
            return Err(Error::DriverClosing);
        }
        self.total += 1;
        *self.by_stream.entry(stream).or_default() += 1;
        *self.by_file.entry(file).or_default() += 1;
        Ok(())
    }

    fn remove(&mut self, stream: StreamHandle, file: usize) {
        self.total -= 1;
        if let Some(n) = self.by_stream.get_mut(&stream) {
            *n -= 1;
            if *n == 0 {
                self.by_stream.remove(&stream);
            }
        }
        if let Some(n) = self.by_file.get_mut(&file) {
            *n -= 1;
            if *n == 0 {
                self.by_file.remove(&file);
            }
        }
    }
}

/// The key of a file in [`Counts`]: its address, which stays its own while an operation holds it.
fn file_key(file: &Arc<File>) -> usize {
    Arc::as_ptr(file) as usize
}

/// Ends a watch that unwinds (a panic, caught by the pool): nobody watches until the next
/// submission, instead of nobody for good.
struct WatchEnd<'a> {
    shared: &'a Shared,
    handed_on: bool,
}

impl Drop for WatchEnd<'_> {
    fn drop(&mut self) {
        if !self.handed_on {
            self.shared.waiting.lock().watched = false;
        }
    }
}

/// Devices whose stages the service keeps track of.
const MAX_DEVICES: usize = 64;

/// How often the watcher asks the runtime whether the stream of a long-waiting operation failed.
const FAILURE_CHECK: Duration = Duration::from_millis(10);

/// The stream-ordered I/O of one driver session: its workers, the stages of each device, and
/// what is queued.
pub(crate) struct Ordered {
    shared: Arc<Shared>,
    /// The workers (`hipfile-stream-N`); taken (closed and joined) at the shut-down.
    workers: Mutex<Option<WorkerPool>>,
}

struct Shared {
    rt: &'static dyn Runtime,
    /// Queues the watch on the workers.
    spawner: Spawner,
    config: Arc<Config>,
    /// Per device: its stages and mailboxes, or why the staging kernel cannot run there.
    sets: [OnceLock<std::result::Result<Arc<StageSet>, RtError>>; MAX_DEVICES],
    /// The engine of operations on host memory (no device copies), and of every operation
    /// where the kernel cannot run.
    plain: Engine,
    waiting: Mutex<Waiting>,
    wake: Condvar,
    counts: Mutex<Counts>,
    finished: Condvar,
    /// Set once a device's stages could not be made: logged once.
    degraded: AtomicBool,
}

impl Ordered {
    /// The service for a session with `config`: its workers start now.
    pub(super) fn new(rt: &'static dyn Runtime, config: Arc<Config>) -> Result<Ordered> {
        let workers = WorkerPool::builder("hipfile-stream")
            .threads(config.async_concurrency.max(1))
            .build()
            .map_err(|_| Error::Internal("cannot start a stream-ordered I/O thread"))?;
        let shared = Arc::new(Shared {
            rt,
            spawner: workers.spawner(),
            plain: Engine::for_stream(rt, &config, None),
            config,
            sets: [const { OnceLock::new() }; MAX_DEVICES],
            waiting: Mutex::new(Waiting::default()),
            wake: Condvar::new(),
            counts: Mutex::new(Counts::default()),
            finished: Condvar::new(),
            degraded: AtomicBool::new(false),
        });
        Ok(Ordered {
            shared,
            workers: Mutex::new(Some(workers)),
        })
    }

    /// The stages of `device`, made on first use (`Err` where the kernel cannot run there).
    pub(super) fn prepare(&self, device: i32) -> std::result::Result<Arc<StageSet>, RtError> {
        self.shared.stage_set(device)
    }

    /// Queue `op` on `stream` (of `device`). Where the staging kernel cannot run on the device,
    /// the operation runs now, after the stream's earlier work.
    pub(super) fn submit(&self, op: Op, stream: StreamHandle, device: i32) -> Result<()> {
        let sh = &*self.shared;
        let rt = sh.rt;
        let set = match sh.stage_set(device) {
            Ok(set) => set,
            Err(_) => return sh.run_now(op, stream),
        };
        let staging = rt.staging_or_unsupported()?;
        let mut grid = staging.stage_grid(device)?;
        // Counted in from here on: every path below either queues the job or counts it out.
        let (stream_key, file) = (stream, file_key(&op.file));
        sh.counts.lock().add(stream_key, file)?;
        let mut mail = set.mail(grid);
        let mut launched = staging.stage_launch(device, stream, mail.device_address(), grid);
        if launched.is_err() {
            // CUDA refused a cooperative launch of that many blocks and lowered its grid (HIP
            // launches one block, never cooperatively).
            if let Ok(lower) = staging.stage_grid(device) {
                if lower < grid {
                    grid = lower;
                    mail = set.mail(grid);
                    launched = staging.stage_launch(device, stream, mail.device_address(), grid);
                }
            }
        }
        if let Err(e) = launched {
            sh.count_out(stream_key, file);
            return Err(e.into());
        }
        mail.launched(stream);
        let start_watch = {
            let mut waiting = sh.waiting.lock();
            waiting.jobs.push(Job {
                op,
                stream,
                device,
                set,
                mail,
                queued: Instant::now(),
            });
            !std::mem::replace(&mut waiting.watched, true)
        };
        // The watch, if one runs, looks at once: the kernel may have started already.
        sh.wake.notify_one();
        if start_watch {
            Shared::spawn_watch(&self.shared);
        }
        Ok(())
    }

    /// Wait until the operations queued on `stream` so far have finished.
    pub(super) fn drain_stream(&self, stream: StreamHandle) {
        let mut counts = self.shared.counts.lock();
        while counts.by_stream.contains_key(&stream) {
            self.shared.finished.wait(&mut counts);
        }
    }

    /// Wait until the operations on `file` queued so far have finished.
    pub(super) fn drain_file(&self, file: &Arc<File>) {
        let key = file_key(file);
        let mut counts = self.shared.counts.lock();
        while counts.by_file.contains_key(&key) {
            self.shared.finished.wait(&mut counts);
        }
    }

    /// Refuse new submissions, finish everything queued, then stop the workers; the stages and
    /// mailboxes go with the last reference (after their kernels returned).
    pub(super) fn shut_down(&self) {
        {
            let mut counts = self.shared.counts.lock();
            counts.closed = true;
            while counts.total > 0 {
                self.shared.finished.wait(&mut counts);
            }
        }
        // Nothing waits any more: a watch still running ends at its next look. Closing the
        // pool joins its workers.
        let workers = self.workers.lock().take();
        drop(workers);
    }
}

impl Drop for Ordered {
    fn drop(&mut self) {
        self.shut_down();
    }
}

impl Shared {
    fn stage_set(&self, device: i32) -> std::result::Result<Arc<StageSet>, RtError> {
        let slot = usize::try_from(device)
            .ok()
            .and_then(|d| self.sets.get(d))
            .ok_or(RtError::INVALID_DEVICE)?;
        slot.get_or_init(|| {
            StageSet::new(self.rt, &self.config, device)
                .map(Arc::new)
                .inspect_err(|e| {
                    if !self.degraded.swap(true, Ordering::Relaxed) {
                        tracing::info!(target: "hipfile", "stream-ordered I/O on device {device} runs at submission, after the stream's earlier work ({e}): the staging kernel cannot run there");
                    }
                })
        })
        .clone()
    }

    /// An operation where the kernel cannot run: after the stream's earlier work, now.
    fn run_now(&self, op: Op, stream: StreamHandle) -> Result<()> {
        if self.counts.lock().closed {
            return Err(Error::DriverClosing);
        }
        self.rt
            .streams_or_unsupported()?
            .stream_synchronize(stream)?;
        let result = op.run_caught(&self.plain, self.rt);
        op.params.set_result(result);
        Ok(())
    }

    fn count_out(&self, stream: StreamHandle, file: usize) {
        self.counts.lock().remove(stream, file);
        self.finished.notify_all();
    }

    /// Queue the watch on the workers (`watched` was set by the caller, under the lock).
    fn spawn_watch(shared: &Arc<Shared>) {
        let me = Arc::clone(shared);
        shared.spawner.spawn(Box::new(move || me.watch_turn()));
    }

    /// The watch, a job on the workers: watch the waiting operations until one's kernel
    /// started, hand the watch on (its successor queued on the pool, while operations still
    /// wait), and run that operation on this worker. With nothing left to watch, the watch
    /// ends; the next submission starts it again.
    fn watch_turn(self: Arc<Self>) {
        let mut ended = WatchEnd {
            shared: &self,
            handed_on: false,
        };
        let mut waiting = self.waiting.lock();
        let job = self.watch(&mut waiting);
        let more = job.is_some() && !waiting.jobs.is_empty();
        waiting.watched = more;
        ended.handed_on = true;
        drop(waiting);
        if more {
            Shared::spawn_watch(&self);
        }
        if let Some(job) = job {
            self.run(job);
        }
    }

    /// Watch the waiting operations until one's kernel started (returned, taken out), or none
    /// waits any more (`None`). Sleeps between looks, briefly at first, longer while nothing
    /// happens; now and then asks the runtime whether a long-waiting operation's stream failed
    /// (its kernel will never start: the operation fails).
    fn watch(&self, waiting: &mut parking_lot::MutexGuard<'_, Waiting>) -> Option<Job> {
        let mut idle = Duration::from_micros(2);
        let mut last_check = Instant::now();
        loop {
            if let Some(at) = waiting.jobs.iter().position(|j| j.mail.started()) {
                return Some(waiting.jobs.swap_remove(at));
            }
            if waiting.jobs.is_empty() {
                return None;
            }
            if last_check.elapsed() >= FAILURE_CHECK {
                last_check = Instant::now();
                let stale: Vec<(i32, StreamHandle)> = waiting
                    .jobs
                    .iter()
                    .filter(|j| j.queued.elapsed() >= FAILURE_CHECK)
                    .map(|j| (j.device, j.stream))
                    .collect();
                let failed =
                    parking_lot::MutexGuard::unlocked(waiting, || self.failed_streams(stale));
                if !failed.is_empty() {
                    let (dead, alive): (Vec<Job>, Vec<Job>) = std::mem::take(&mut waiting.jobs)
                        .into_iter()
                        .partition(|j| failed.iter().any(|(s, _)| *s == (j.device, j.stream)));
                    waiting.jobs = alive;
                    parking_lot::MutexGuard::unlocked(waiting, || {
                        for job in dead {
                            let e = failed
                                .iter()
                                .find(|(s, _)| *s == (job.device, job.stream))
                                .map(|(_, e)| *e);
                            self.fail(job, e.unwrap_or(RtError::UNKNOWN));
                        }
                    });
                    continue;
                }
            }
            // The Condvar wakes the watcher for new submissions, which may be ready at once.
            self.wake.wait_for(waiting, idle);
            idle = (idle * 2).min(Duration::from_micros(200));
        }
    }

    /// Of `streams` (each with its device, current while it is asked about), those that
    /// failed, with their error.
    fn failed_streams(
        &self,
        mut streams: Vec<(i32, StreamHandle)>,
    ) -> Vec<((i32, StreamHandle), RtError)> {
        streams.sort_unstable();
        streams.dedup();
        streams
            .into_iter()
            .filter_map(|(device, s)| {
                let restore = self.rt.enter_device(device).ok()?;
                let state = self.rt.stream_query(s);
                self.rt.leave_device(restore);
                match state {
                    // Still busy, or destroyed by the application (queued work runs on).
                    Ok(()) => None,
                    Err(e) if e == RtError::NOT_READY || e == RtError::INVALID_HANDLE => None,
                    Err(e) => Some(((device, s), e)),
                }
            })
            .collect()
    }

    /// An operation whose kernel will never start: it fails (its mailbox is never reused).
    fn fail(&self, job: Job, e: RtError) {
        let Job {
            op, stream, mail, ..
        } = job;
        tracing::warn!(target: "hipfile", "a stream-ordered operation fails: its stream failed before it started ({e})");
        op.params.set_result(Err(e.into()));
        // Given back, the mailbox is never reused: its launch does not return.
        drop(mail);
        self.count_out(stream, file_key(&op.file));
    }

    /// Run an operation whose kernel started; then let the kernel return.
    fn run(&self, job: Job) {
        let Job {
            op,
            stream,
            set,
            mail,
            ..
        } = job;
        let file = file_key(&op.file);
        if op.buf.memory.is_host() {
            let result = op.run_caught(&self.plain, self.rt);
            op.params.set_result(result);
            mail.finish();
        } else {
            match set.lend() {
                Ok(loan) => {
                    loan.assign(&mail, stream);
                    let result = op.run_caught(loan.engine(), self.rt);
                    op.params.set_result(result);
                    if let Err(e) = loan.finish() {
                        tracing::warn!(target: "hipfile", "the staging kernel of a stream-ordered operation stopped ({e}); its stream failed");
                    }
                }
                Err(e) => {
                    op.params.set_result(Err(e));
                    mail.finish();
                }
            }
        }
        drop(mail);
        drop(op);
        self.count_out(stream, file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_flags_from_bits() {
        assert_eq!(StreamFlags::from_bits(0), Ok(StreamFlags::default()));
        let all = StreamFlags::from_bits(0xf).unwrap();
        assert!(
            all.fixed_buf_offset
                && all.fixed_file_offset
                && all.fixed_file_size
                && all.page_aligned_inputs
        );
        let two = StreamFlags::from_bits(2).unwrap();
        assert_eq!(
            (
                two.fixed_buf_offset,
                two.fixed_file_offset,
                two.fixed_file_size
            ),
            (false, true, false)
        );
        for bad in [0x10, 0x1f, u32::MAX] {
            assert!(matches!(
                StreamFlags::from_bits(bad),
                Err(Error::InvalidValue(_))
            ));
        }
    }
}
