//! The engine that moves bytes for the fallback and host backends, and the worker threads of
//! the whole library.
//!
//! A [`Transfer`] of at most one chunk runs on the calling thread with one bounce buffer. A
//! larger one is planned from facts alone (`plan.rs`: chunk size, helpers, bounce buffers wanted
//! at once), then run (`pipeline.rs`) as a transfer shared between the calling thread and
//! helper jobs (`chunked.rs`); each participant (`participate.rs`) claims chunks one at a time
//! from a shared counter and records how each ended (`outcome.rs`); a chunk's system calls are
//! in `file_io.rs`. Device transfers go through pinned bounce buffers from a bounded pool
//! (`lend/`); host-memory transfers read and write the application's memory directly. Writes
//! are made durable with one `fdatasync` per request.
//!
//! Every pool of threads the library runs is a [`WorkerPool`] (`pool.rs`): the I/O helpers,
//! the batch workers (whose jobs `batch.rs` schedules), the staged helpers and stream-ordered
//! I/O's workers.
//!
//! Lock order: the bounce pool's mutex and the worker queue's mutex are leaves; no lock is held
//! across file I/O or a GPU call.

pub(crate) mod batch;
mod chunked;
mod file_io;
pub(crate) mod lanes;
mod lend;
mod outcome;
pub(crate) mod overlap;
mod participate;
mod pipeline;
mod plan;
mod pool;

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::runtime::{DirectCopy, RtError, RtResult, Runtime, StreamHandle};
use crate::vocab::{Address, Direction, MemRef};

use lend::bounce::BouncePool;
use lend::stage::Mailboxes;
pub(crate) use lend::stage::{Mail, Stage};
pub(crate) use plan::DIRECT_MIN;
pub(crate) use pool::{Spawner, WorkerPool};

/// The helper threads of every staged stream engine (`hipfile-stage-N`), shared: with a pool
/// per stream, eight streams ran 128 threads of file I/O on 16 cores and each `pread` took five
/// times as long. Safe to share: a staged participant makes no GPU call and waits only for
/// serials of its own request that a running participant holds (a queued helper holds none).
/// Started on first use with the first engine's thread count; never stopped.
fn staged_workers(threads: usize) -> Option<&'static WorkerPool> {
    static POOL: OnceLock<pool::Lazy> = OnceLock::new();
    POOL.get_or_init(|| {
        pool::Lazy::new(
            WorkerPool::builder("hipfile-stage").threads(threads.saturating_sub(1)),
            "staging workers",
            "using the calling thread only",
        )
    })
    .get()
}

/// The `O_DIRECT` twin of a transfer's descriptor, used for reads the page cache cannot serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DirectFd {
    /// The `O_DIRECT` descriptor.
    pub fd: RawFd,
    /// Offset and length alignment it needs.
    pub offset_align: u64,
    /// Memory alignment it needs.
    pub mem_align: u64,
}

/// What a write reports when it fails after part of it reached the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PartWay {
    /// The count of the contiguous prefix that reached the file, as `pwrite` does (the error
    /// only when nothing did): the calls that return a byte count (`hipFileWrite`).
    #[default]
    Prefix,
    /// The error: batch events and stream-ordered results, whose consumers check a status,
    /// not a count (upstream's rule; a short count there would read as success).
    Error,
}

/// One request for the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Transfer {
    /// Read (file → memory) or write (memory → file).
    pub dir: Direction,
    /// The buffered descriptor.
    pub fd: RawFd,
    /// Its `O_DIRECT` twin, when cold reads may bypass the page cache.
    pub direct: Option<DirectFd>,
    /// Memory side.
    pub target: MemRef,
    /// Bytes to move.
    pub size: usize,
    /// File offset of the first byte.
    pub offset: u64,
    /// Make writes durable before returning (one `fdatasync`).
    pub sync: bool,
    /// What a write that fails part-way reports.
    pub part_way: PartWay,
}

/// Engine state shared with worker jobs.
pub(crate) struct Inner {
    pub(crate) rt: &'static dyn Runtime,
    /// The runtime's plain copy entry point, when it has one.
    direct_copy: Option<DirectCopy>,
    pub(crate) bounce: BouncePool,
    pub(crate) lanes: lanes::LanePool,
    /// A stream's staging kernel, where the runtime has one: device transfers of this engine
    /// then go through it instead of lanes ([`lend::stage`]).
    pub(crate) stage: Option<Arc<Stage>>,
    /// Helpers of requests of several chunks (`hipfile-io-N`), started on first use.
    workers: pool::Lazy,
    /// Threads running batch operations (each one a whole request, which may itself use
    /// `workers` as helpers: two pools, so a batch job never waits for its own pool).
    batch_workers: pool::Lazy,
    pub(crate) threads: usize,
    /// What the planner reads: chunk, parallelism, inline threshold, and the largest request
    /// served whole on the calling thread (the chunk, or zero for an engine of stream-ordered
    /// I/O, [`Engine::for_stream`], whose device copies never go through a synchronous copy).
    pub(crate) settings: plan::Settings,
    /// Requests of several chunks running now ([`pipeline`]: one alone may be cut finer).
    pub(crate) chunked_running: std::sync::atomic::AtomicUsize,
}

/// The engine of one driver open.
#[derive(Clone)]
pub(crate) struct Engine {
    inner: Arc<Inner>,
}

impl Engine {
    /// Whether both are the same engine (one driver session, across live setting changes).
    pub(crate) fn same(&self, other: &Engine) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// An engine configured from `config`; threads and buffers are created on first use.
    pub(crate) fn new(rt: &'static dyn Runtime, config: &Config) -> Engine {
        Engine::build(rt, config, config.bounce_budget, None, false)
    }

    /// The engine of one stream's ordered I/O: its own pinned bounce buffers
    /// (`async_buffer_size` bytes in all, never the shared pool, so an operation a stream
    /// waits for never waits for a synchronous caller) and its own helper threads; device
    /// copies only on lanes, whose streams are non-blocking (a synchronous copy would wait for
    /// the legacy default stream, which the application's stream may be holding).
    ///
    /// With `stage` (the stream's staging kernel, on runtimes that have one), device transfers
    /// go through its slots in segments of its size instead (no bounce buffer, no lane), with
    /// helpers from the pool all staged engines share (`staged_workers`).
    pub(crate) fn for_stream(
        rt: &'static dyn Runtime,
        config: &Config,
        stage: Option<Arc<Stage>>,
    ) -> Engine {
        Engine::build(rt, config, config.async_buffer_size, stage, true)
    }

    fn build(
        rt: &'static dyn Runtime,
        config: &Config,
        budget: usize,
        stage: Option<Arc<Stage>>,
        stream_ordered: bool,
    ) -> Engine {
        let chunk = stage.as_ref().map_or(config.chunk_size, |s| s.segment());
        Engine {
            inner: Arc::new(Inner {
                rt,
                direct_copy: rt.direct_copy(),
                bounce: BouncePool::new(rt, config.chunk_size, budget),
                lanes: lanes::LanePool::default(),
                stage,
                workers: pool::Lazy::new(
                    WorkerPool::builder("hipfile-io").threads(config.io_threads.saturating_sub(1)),
                    "I/O workers",
                    "using the calling thread only",
                ),
                batch_workers: pool::Lazy::new(
                    WorkerPool::builder("hipfile-batch").threads(config.io_threads.max(1)),
                    "batch workers",
                    "batch operations run at submission",
                ),
                threads: config.io_threads,
                settings: plan::Settings {
                    chunk,
                    // A stream's engine never copies synchronously: nothing is a small request.
                    single_max: if stream_ordered { 0 } else { config.chunk_size },
                    inline_threshold: config.inline_threshold,
                    parallelism: config.request_parallelism,
                },
                chunked_running: std::sync::atomic::AtomicUsize::new(0),
            }),
        }
    }

    /// Move the bytes of `t`; returns the count moved (short at end of file).
    #[inline(always)]
    pub(crate) fn run(&self, t: Transfer) -> Result<usize> {
        pipeline::execute(&self.inner, t)
    }

    /// A pipeline of small device reads for one thread ([`overlap`]): batch jobs.
    pub(crate) fn overlap(&self) -> overlap::Overlap<'_> {
        overlap::Overlap::new(&self.inner)
    }

    /// How many jobs one batch context runs at once ([`batch::batch_jobs`]): one per batch
    /// worker (as many as the engine's threads), within the bounce budget.
    pub(crate) fn batch_jobs(&self) -> usize {
        batch::batch_jobs(self.inner.threads.max(1), self.inner.bounce.max_buffers())
    }

    /// Run `job` on the batch workers (started on first use, as many as the engine's
    /// threads); on the calling thread if they cannot be started.
    fn spawn_batch(&self, job: pool::Job) {
        match self.inner.batch_workers.get() {
            Some(p) => p.spawn(job),
            None => job(),
        }
    }

    /// Change the bounce budget (`hipFileDriverSetMaxCacheSize`): applies to later requests;
    /// buffers above a lowered budget are freed as they come back.
    pub(crate) fn set_bounce_budget(&self, bytes: usize) {
        self.inner.bounce.set_budget(bytes);
    }
}

/// Mailboxes per device: operations queued on a device's streams and not finished, at most (a
/// submission past that waits for one to finish).
const MAILBOXES: u32 = 4096;

/// What stream-ordered I/O moves device bytes with on one device: a fixed set of stages, each
/// with the engine that copies through it, shared by every stream of the device and lent to one
/// operation at a time once its kernel started; and the mailboxes of the launches. Everything
/// is allocated here, before the first launch: allocating pinned memory while kernels wait for
/// the host could wait for those kernels.
pub(crate) struct StageSet {
    stages: Vec<(Arc<Stage>, Engine)>,
    /// Indices of the stages nobody borrowed.
    free: Mutex<Vec<usize>>,
    returned: Condvar,
    /// Stages still in service (a broken one is retired for good).
    live: AtomicUsize,
    mails: Arc<Mailboxes>,
}

impl StageSet {
    /// The stages and mailboxes of `device` for `config`; "not supported" where the runtime
    /// cannot load the staging kernel there.
    pub(crate) fn new(
        rt: &'static dyn Runtime,
        config: &Config,
        device: i32,
    ) -> RtResult<StageSet> {
        let grid = rt
            .staging()
            .ok_or(RtError::NOT_SUPPORTED)?
            .stage_grid(device)?;
        let restore = rt.enter_device(device)?;
        let built = (|| {
            let mails = Arc::new(Mailboxes::new(rt, device, MAILBOXES)?);
            let stages = (0..config.async_concurrency.max(1))
                .map(|_| {
                    let stage = Arc::new(Stage::new(
                        rt,
                        device,
                        config.async_buffer_size,
                        config.chunk_size,
                        grid,
                    )?);
                    let engine = Engine::for_stream(rt, config, Some(Arc::clone(&stage)));
                    Ok((stage, engine))
                })
                .collect::<RtResult<Vec<_>>>()?;
            Ok(StageSet {
                free: Mutex::new((0..stages.len()).rev().collect()),
                returned: Condvar::new(),
                live: AtomicUsize::new(stages.len()),
                stages,
                mails,
            })
        })();
        rt.leave_device(restore);
        built
    }

    /// A mailbox for a launch of `grid` blocks.
    pub(crate) fn mail(&self, grid: u32) -> Mail {
        self.mails.take(grid)
    }

    /// A stage for one operation whose kernel started, once one is free and its last kernel
    /// consumed everything (stages are held only by operations whose kernels run, so one comes
    /// back). Fails only when every stage broke (their streams failed).
    pub(crate) fn lend(&self) -> Result<StageLoan<'_>> {
        let mut free = self.free.lock();
        loop {
            if let Some(at) = free.iter().position(|&i| self.stages[i].0.idle()) {
                let index = free.swap_remove(at);
                return Ok(StageLoan { set: self, index });
            }
            if free.is_empty() {
                if self.live.load(Ordering::Acquire) == 0 {
                    return Err(Error::Internal("every staging buffer of the device broke"));
                }
                self.returned.wait(&mut free);
                continue;
            }
            // Free stages whose last kernel has a segment or two to go: look again shortly,
            // and retire those that never will.
            let broken: Vec<usize> = free
                .iter()
                .copied()
                .filter(|&i| self.stages[i].0.broken())
                .collect();
            if !broken.is_empty() {
                free.retain(|i| !broken.contains(i));
                self.live.fetch_sub(broken.len(), Ordering::AcqRel);
                tracing::warn!(target: "hipfile", "{} staging buffer(s) retired: their stream failed", broken.len());
                continue;
            }
            self.returned
                .wait_for(&mut free, std::time::Duration::from_micros(20));
        }
    }
}

/// A stage lent to one operation until dropped.
pub(crate) struct StageLoan<'s> {
    set: &'s StageSet,
    index: usize,
}

impl StageLoan<'_> {
    /// The engine that copies through the stage.
    pub(crate) fn engine(&self) -> &Engine {
        &self.set.stages[self.index].1
    }

    /// Serve the operation whose kernel runs on `stream` over `mail` (its kernel started).
    pub(crate) fn assign(&self, mail: &Mail, stream: StreamHandle) {
        self.set.stages[self.index].0.assign(mail, stream);
    }

    /// Post the operation's last segment (its result is stored): its kernel returns.
    pub(crate) fn finish(&self) -> RtResult<()> {
        self.set.stages[self.index].0.finish_operation()
    }
}

impl Drop for StageLoan<'_> {
    fn drop(&mut self) {
        self.set.free.lock().push(self.index);
        self.set.returned.notify_one();
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Workers first (they may hold lanes), then the lanes' streams and events.
        self.batch_workers.shut_down();
        self.workers.shut_down();
        self.lanes.destroy_all(self.rt);
    }
}

impl Inner {
    /// Synchronous copy into device memory, straight through the runtime's entry point when
    /// it offers one.
    #[inline(always)]
    pub(crate) fn copy_to_device(&self, dst: Address, src: &[u8]) -> crate::runtime::RtResult<()> {
        match &self.direct_copy {
            Some(c) => c.copy_to_device(dst, src),
            None => self.rt.copy_to_device(dst, src),
        }
    }

    /// Synchronous copy out of device memory, as [`Inner::copy_to_device`].
    #[inline(always)]
    pub(crate) fn copy_from_device(
        &self,
        dst: &mut [u8],
        src: Address,
    ) -> crate::runtime::RtResult<()> {
        match &self.direct_copy {
            Some(c) => c.copy_from_device(dst, src),
            None => self.rt.copy_from_device(dst, src),
        }
    }

    /// The worker pool, started on first use; `None` if threads cannot be started (the
    /// engine then works on the calling thread alone).
    pub(crate) fn workers(&self) -> Option<&WorkerPool> {
        if self.stage.is_some() {
            return staged_workers(self.threads);
        }
        self.workers.get()
    }
}
