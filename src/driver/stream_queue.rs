//! Stream-ordered I/O: one [`StreamQueue`] per application stream, served by its own worker
//! thread.
//!
//! Submission enqueues two things on the application's stream, under the queue's submission
//! lock (so operations from several threads keep one order on the stream and in the queue):
//! 1. an event record: it completes when the work before the operation on the stream is done;
//! 2. a hold: a wait on the queue's 32-bit [`Signal`] word until it equals the operation's
//!    sequence number (`hipStreamWaitValue32` / `cuStreamWaitValue32`), or, where the runtime
//!    cannot wait on memory, a host function that blocks on a [`HostGate`] (logged once).
//!
//! The worker takes operations in submission order: it waits for the event, reads the
//! parameters the application may still change (unless the stream's FIXED flags froze them at
//! submission), runs the request through the same [`Backends`] as synchronous I/O (fastpath,
//! fallback with its `ENODEV`/`EREMOTEIO` retry, host), writes the result to the caller's
//! `*bytes_p`, and only then releases the stream (writes the word, or opens the gate). No
//! runtime call happens inside a host function, and a wait on a word costs the runtime's
//! callback thread nothing, so streams never serialise each other.
//!
//! Each queue has its own engine ([`Engine::for_stream`]): its own pinned bounce buffers and
//! helper threads, copies only on non-blocking streams. An operation the stream waits for
//! therefore never waits for a synchronous caller (which may itself wait for the legacy default
//! stream this operation holds), and never makes a synchronous copy.
//!
//! Lock order: `submit`, then `jobs`; `free_events` is a leaf, held for one push or pop. The
//! submission lock is held across the two enqueue calls, and those can block: a full launch
//! queue makes `cuLaunchKernel` wait until the GPU drains the stream. The stream drains only
//! once the worker released the operation at its head, so the worker never takes the
//! submission lock (hipsim's `launch_queue` reproduces the hang that would cause:
//! `a_full_launch_queue_does_not_hang_the_stream` in `tests/async_cuda.rs` and
//! `tests/async_io.rs`).
#![deny(unsafe_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use super::Session;
use crate::backend::Backends;
use crate::engine::{Engine, Stage};
use crate::error::{Error, Result};
use crate::request::file::File;
use crate::request::memory::Buffer;
use crate::request::{Request, MAX_RW};
use crate::runtime::{signal, EventHandle, HostGate, RtError, Runtime, Signal, StreamHandle};
use crate::vocab::Direction;

/// Flags a stream may be registered with (`HIPFILE_STREAM_FLAGS_MASK`).
pub const STREAM_FLAGS_MASK: u32 = 0xf;

/// A stream's registration flags, typed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamFlags {
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
    pub fn from_bits(bits: u32) -> Result<StreamFlags> {
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
pub trait AsyncParams: Send {
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
pub struct Submitted {
    /// Size, clamped to [`MAX_RW`].
    pub size: usize,
    /// File offset.
    pub file_offset: u64,
    /// Buffer offset.
    pub buffer_offset: usize,
}

/// One stream-ordered operation, resolved at submission.
pub struct Op {
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
}

/// A queued operation with what holds its stream.
struct Job {
    seq: u32,
    event: EventHandle,
    gate: Option<Arc<HostGate>>,
    op: Op,
}

struct Submit {
    /// Sequence number of the latest operation (0: none yet).
    seq: u32,
}

#[derive(Default)]
struct Jobs {
    queue: VecDeque<Job>,
    /// Submitted and not finished.
    pending: usize,
    shutdown: bool,
}

/// What a queue shares with its worker.
struct Shared {
    rt: &'static dyn Runtime,
    stream: StreamHandle,
    engine: Engine,
    /// The staging kernel that holds the stream and moves the bytes, where the runtime has one.
    stage: Option<Arc<Stage>>,
    /// The word the stream waits on otherwise; `None` when the runtime has none.
    signal: Option<Signal>,
    /// Set when the runtime refused a wait on the word: blocking host functions from then on.
    no_wait_value: AtomicBool,
    submit: Mutex<Submit>,
    /// Events whose operation finished, for reuse (not under `submit`: see the module comment).
    free_events: Mutex<Vec<EventHandle>>,
    jobs: Mutex<Jobs>,
    cv: Condvar,
}

/// The ordered I/O of one application stream.
pub struct StreamQueue {
    shared: Arc<Shared>,
    /// The stream's device.
    pub device: i32,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl StreamQueue {
    /// The queue of `stream` (on `device`) for `session`'s configuration: its engine, its
    /// word and its worker thread.
    pub(super) fn new(
        rt: &'static dyn Runtime,
        stream: StreamHandle,
        device: i32,
        session: &Session,
    ) -> Result<StreamQueue> {
        let config = &session.config;
        // The staging kernel where the runtime has one (CUDA); otherwise a word to wait on.
        let stage = {
            let restore = rt.enter_device(device)?;
            let stage = Stage::new(
                rt,
                device,
                stream,
                config.async_buffer_size,
                config.chunk_size,
            );
            rt.leave_device(restore);
            stage.ok().map(Arc::new)
        };
        let signal = match &stage {
            Some(_) => None,
            None => match rt.signal_alloc() {
                Ok(s) => Some(s),
                Err(e) => {
                    log_no_wait_value(e);
                    None
                }
            },
        };
        let engine = Engine::for_stream(rt, config, stage.clone());
        if stage.is_none() {
            // Pinned memory is allocated here, before the stream ever waits for us.
            engine.preallocate_bounce();
        }
        let shared = Arc::new(Shared {
            rt,
            stream,
            engine,
            stage,
            signal,
            no_wait_value: AtomicBool::new(false),
            submit: Mutex::new(Submit { seq: 0 }),
            free_events: Mutex::new(Vec::new()),
            jobs: Mutex::new(Jobs::default()),
            cv: Condvar::new(),
        });
        let for_worker = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("hipfile-stream".into())
            .spawn(move || for_worker.serve())
            .map_err(|_| Error::Internal("cannot start a stream worker thread"))?;
        Ok(StreamQueue {
            shared,
            device,
            worker: Mutex::new(Some(worker)),
        })
    }

    /// Enqueue `op` on the stream and in the queue (see the module comment). A queue that was
    /// shut down (its stream deregistered meanwhile) gives `op` back untouched.
    pub fn submit(&self, op: Op) -> std::result::Result<Result<()>, Op> {
        let sh = &*self.shared;
        let mut sub = sh.submit.lock();
        if sh.jobs.lock().shutdown {
            return Err(op);
        }
        Ok(self.submit_locked(&mut sub, op))
    }

    fn submit_locked(&self, sub: &mut Submit, op: Op) -> Result<()> {
        let sh = &*self.shared;
        let rt = sh.rt;
        let reuse = sh.free_events.lock().pop();
        let event = match reuse {
            Some(e) => e,
            None => {
                let restore = rt.enter_device(self.device)?;
                // Not a blocking-sync event: on the H200 machine a worker waiting on one (with
                // CU_EVENT_BLOCKING_SYNC) woke late enough that 8 streams x 100 small operations
                // took over 40 s instead of 2 s.
                let e = rt.event_create();
                rt.leave_device(restore);
                e?
            }
        };
        if let Err(e) = rt.event_record(event, sh.stream) {
            sh.free_events.lock().push(event);
            return Err(e.into());
        }
        let seq = match sub.seq.wrapping_add(1) {
            0 => 1,
            s => s,
        };
        let gate = match self.hold(seq) {
            Ok(()) => None,
            Err(e) if e == RtError::NOT_SUPPORTED => {
                let gate = Arc::new(HostGate::default());
                if let Err(e) = signal::hold_stream(rt, sh.stream, &gate) {
                    // The event stays recorded: harmless, it is reused after a later sync.
                    sh.free_events.lock().push(event);
                    return Err(e.into());
                }
                Some(gate)
            }
            Err(e) => {
                sh.free_events.lock().push(event);
                return Err(e.into());
            }
        };
        sub.seq = seq;
        let mut jobs = sh.jobs.lock();
        jobs.queue.push_back(Job {
            seq,
            event,
            gate,
            op,
        });
        jobs.pending += 1;
        drop(jobs);
        sh.cv.notify_all();
        Ok(())
    }

    /// Hold the stream: with the staging kernel (one launch per operation), or on the word
    /// until it equals `seq`; "not supported" when the runtime can do neither (the caller then
    /// holds it with a host function).
    fn hold(&self, seq: u32) -> std::result::Result<(), RtError> {
        let sh = &*self.shared;
        if let Some(stage) = &sh.stage {
            let restore = sh.rt.enter_device(self.device)?;
            let r = stage.launch();
            sh.rt.leave_device(restore);
            // The engine copies through the kernel only: a failed launch fails the submission
            // (never a host-function hold, which would leave the engine's segments uncopied).
            return r.map_err(|e| {
                if e == RtError::NOT_SUPPORTED {
                    RtError::UNKNOWN
                } else {
                    e
                }
            });
        }
        match &sh.signal {
            Some(sig) if !sh.no_wait_value.load(Ordering::Relaxed) => {
                match sh.rt.stream_wait_value32(sh.stream, sig, seq) {
                    Err(e) if e == RtError::NOT_SUPPORTED => {
                        sh.no_wait_value.store(true, Ordering::Relaxed);
                        log_no_wait_value(e);
                        Err(e)
                    }
                    r => r,
                }
            }
            _ => Err(RtError::NOT_SUPPORTED),
        }
    }

    /// Wait until every operation submitted so far has finished.
    pub fn drain(&self) {
        let mut jobs = self.shared.jobs.lock();
        while jobs.pending > 0 {
            self.shared.cv.wait(&mut jobs);
        }
    }

    /// Finish everything queued, stop the worker and free the queue's runtime resources.
    /// Later submissions are refused (under the submission lock, so none slips in).
    pub fn shut_down(&self) {
        self.drain();
        {
            let _sub = self.shared.submit.lock();
            self.shared.jobs.lock().shutdown = true;
        }
        self.shared.cv.notify_all();
        if let Some(w) = self.worker.lock().take() {
            let _ = w.join();
        }
    }
}

impl Drop for StreamQueue {
    fn drop(&mut self) {
        self.shut_down();
    }
}

impl Shared {
    /// The worker: operations in submission order, each after the work before it on the stream.
    fn serve(&self) {
        loop {
            let job = {
                let mut jobs = self.jobs.lock();
                loop {
                    if let Some(j) = jobs.queue.pop_front() {
                        break j;
                    }
                    if jobs.shutdown {
                        return;
                    }
                    self.cv.wait(&mut jobs);
                }
            };
            let result = match self.rt.event_synchronize(job.event) {
                Ok(()) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    job.op.run(&self.engine, self.rt)
                }))
                .unwrap_or(Err(Error::Internal("panic in a stream-ordered operation"))),
                Err(e) => Err(e.into()),
            };
            if let Err(e) = &result {
                tracing::debug!(target: "hipfile", "stream-ordered {:?} failed: {e}", job.op.dir);
            }
            job.op.params.set_result(result);
            self.free_events.lock().push(job.event);
            // Release the stream only after the result is visible.
            match (&job.gate, &self.stage, &self.signal) {
                (Some(gate), _, _) => gate.open(),
                (None, Some(stage), _) => {
                    if let Err(e) = stage.finish_operation() {
                        tracing::warn!(target: "hipfile", "the stream's staging kernel stopped ({e}); its operations fail");
                    }
                }
                (None, None, Some(sig)) => sig.set(job.seq),
                (None, None, None) => {}
            }
            drop(job);
            let mut jobs = self.jobs.lock();
            jobs.pending -= 1;
            drop(jobs);
            self.cv.notify_all();
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        for e in self.free_events.get_mut().drain(..) {
            self.rt.event_destroy(e);
        }
        if let Some(sig) = self.signal.take() {
            self.rt.signal_free(sig);
        }
    }
}

/// Once per process: the runtime cannot hold a stream on a memory word.
#[cold]
fn log_no_wait_value(e: RtError) {
    static LOGGED: std::sync::Once = std::sync::Once::new();
    LOGGED.call_once(|| {
        tracing::info!(target: "hipfile", "the GPU runtime cannot make a stream wait on a memory value ({e}); stream-ordered I/O holds streams with blocking host functions, which run one at a time on the runtime's callback thread (logged once)");
    });
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
