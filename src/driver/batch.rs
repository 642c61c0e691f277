//! Batch I/O contexts, as AMD's next release defines them.
//!
//! A context is a capacity (1–128) and the operations submitted to it and not yet reaped by
//! `GetStatus`. Submission validates every entry first (all or nothing), then appends the
//! operations to the context's queue and starts the jobs it lacks; the engine schedules the
//! jobs ([`crate::engine::batch`]: how many per context, turns of
//! [`OPS_PER_TURN`](crate::engine::batch::OPS_PER_TURN) operations). What a job does with an
//! operation is this module's ([`ContextWork`]): it runs the path of
//! `hipFileRead`/`hipFileWrite` (backend choice, fallback retry, statistics), except that a
//! device read the fallback serves in one chunk is begun before the job finishes the read it
//! took before, so that one read's copy to the device overlaps the next one's `pread`
//! ([`crate::engine::overlap`]). Each operation moves `Pending → Running → Complete | Failed`,
//! or `Pending → Canceled`; a terminal one is reported by exactly one `GetStatus` and then
//! forgotten.
//!
//! Handles are generation-tagged tokens like file handles: never dereferenced, a stale or
//! destroyed one fails its look-up.
//!
//! Lock order: the driver's state lock, then a context's lock (submission holds the state read
//! lock while it queues, so a concurrent close either sees the operations or refuses them);
//! the registry's mutex is taken alone, or inside the state lock by the close that lists the
//! contexts it ends, never with a context's lock.
#![deny(unsafe_code)]

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::files::FileToken;
use super::slots::Slots;
use super::Session;
use crate::backend::Begun;
pub(super) use crate::engine::batch::Jobs;
use crate::engine::batch::{Counted, Queue, Take, Turn, Work};
use crate::engine::overlap::Overlap;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::request::file::File;
use crate::request::memory::Buffer;
use crate::request::{fits, Request};
use crate::vocab::{Address, Direction, MemoryType};

/// Most operations a context holds (upstream's `MAX_SIZE`).
pub(crate) const MAX_OPS: usize = 128;

/// An opaque batch handle: `(generation << 32) | (slot + 1)`; never 0. Only the C door turns a
/// handle's value into a token and back; everything else passes it through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchToken(usize);

impl BatchToken {
    /// The token of a handle's value as C passed it. Any value will do: one this registry
    /// never gave out, or a stale one, fails its lookup.
    pub(crate) fn from_c_handle(value: usize) -> BatchToken {
        BatchToken(value)
    }

    /// The value of the handle C is given.
    pub(crate) fn c_handle(self) -> usize {
        self.0
    }
}

/// How an entry asks to be run (`hipFileBatchMode_t`): batch mode is the only one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `hipFileBatch`.
    Batch,
}

/// One entry of a submission, as the application described it (`hipFileIOParams_t`), in
/// typed values. A field C filled with a value it does not define is `None`, refused when
/// the entry is checked, in the order upstream checks the fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpParams {
    /// `mode`; `None` for anything but `hipFileBatch`.
    pub mode: Option<Mode>,
    /// `u.batch.devPtr_base`.
    pub base: Address,
    /// `u.batch.file_offset`; `None` when negative.
    pub file_offset: Option<u64>,
    /// `u.batch.devPtr_offset`; `None` when negative.
    pub buffer_offset: Option<usize>,
    /// `u.batch.size`.
    pub size: usize,
    /// `fh`.
    pub file: FileToken,
    /// `opcode`; `None` for anything but read and write.
    pub dir: Option<Direction>,
    /// `cookie`, returned with the completion.
    pub cookie: usize,
}

/// Where an operation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpStatus {
    /// Queued, not started.
    Pending,
    /// Its job is moving the bytes.
    Running,
    /// Done: the byte count.
    Complete(usize),
    /// Failed with this error.
    Failed(Error),
    /// Canceled before it started.
    Canceled,
}

impl OpStatus {
    fn is_terminal(self) -> bool {
        matches!(
            self,
            OpStatus::Complete(_) | OpStatus::Failed(_) | OpStatus::Canceled
        )
    }
}

/// A reaped operation: its cookie and how it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Completion {
    /// The submitted cookie.
    pub cookie: usize,
    /// A terminal status.
    pub status: OpStatus,
}

struct Op {
    id: u64,
    cookie: usize,
    status: OpStatus,
    res: Option<Resolved>,
}

#[derive(Default)]
struct Ops {
    ops: Vec<Op>,
    next_id: u64,
    /// Submitted operations no job took yet, oldest first (ids of canceled or reaped ones are
    /// passed over when taken), and the context's jobs.
    queue: Queue<u64>,
    /// Destroyed or closed with the driver: no operation is queued any more (a submission that
    /// was admitted before is refused), while its handle still answers until nothing runs.
    retired: bool,
}

impl Ops {
    fn get(&mut self, id: u64) -> Option<&mut Op> {
        self.ops.iter_mut().find(|o| o.id == id)
    }

    fn terminal(&self) -> usize {
        self.ops.iter().filter(|o| o.status.is_terminal()).count()
    }

    fn running(&self) -> bool {
        self.ops.iter().any(|o| o.status == OpStatus::Running)
    }

    /// Jobs to start for `queued` operations just queued ([`Queue::start_jobs`]).
    fn start_jobs(&mut self, queued: usize, parallelism: usize) -> usize {
        self.queue.start_jobs(queued, parallelism)
    }

    /// For a job ([`Queue::take`]): the next operation nobody took that is still pending
    /// (marked running), with its resources; canceled and reaped ones are passed over.
    fn take(&mut self, holding: bool) -> Take<(u64, Resolved)> {
        let ops = &mut self.ops;
        self.queue.take(holding, |id| {
            let op = ops
                .iter_mut()
                .find(|o| o.id == id && o.status == OpStatus::Pending)?;
            op.status = OpStatus::Running;
            let res = op
                .res
                .take()
                .expect("a pending operation has its resources");
            Some((id, res))
        })
    }

    /// For a job whose turn is over ([`Queue::end_turn`]).
    fn end_turn(&mut self) -> Turn {
        self.queue.end_turn()
    }
}

/// A batch context.
pub(crate) struct BatchContext {
    capacity: usize,
    ops: Mutex<Ops>,
    changed: Condvar,
}

impl BatchContext {
    fn new(capacity: usize) -> BatchContext {
        BatchContext {
            capacity,
            ops: Mutex::new(Ops::default()),
            changed: Condvar::new(),
        }
    }

    /// Whether `n` more operations fit (a concurrent submission may
    /// still take the room before this one queues, which [`enqueue`] checks again).
    pub(crate) fn has_room(&self, n: usize) -> bool {
        n <= self.capacity - self.ops.lock().ops.len()
    }

    /// Every pending operation becomes canceled (running ones run to completion, terminal
    /// ones stay as they are); waiters are woken.
    pub(crate) fn cancel(&self) {
        self.cancel_retiring(false);
    }

    /// [`BatchContext::cancel`]; with `retire`, in the same step no later submission is
    /// queued any more.
    fn cancel_retiring(&self, retire: bool) {
        let mut st = self.ops.lock();
        st.retired |= retire;
        // Every queued operation is pending (or already gone): none is left to take.
        st.queue.clear();
        let mut dropped = Vec::new();
        for op in st.ops.iter_mut() {
            if op.status == OpStatus::Pending {
                op.status = OpStatus::Canceled;
                dropped.push(op.res.take());
            }
        }
        drop(st);
        drop(dropped);
        self.changed.notify_all();
    }

    /// The end of the context (destroy, or the driver's close to 0): nothing more is queued,
    /// pending operations are cancelled, and this returns once no operation runs any more, so
    /// that nothing of the context touches the application's memory or files afterwards.
    pub(crate) fn retire_and_drain(&self) {
        self.cancel_retiring(true);
        let mut st = self.ops.lock();
        while st.running() {
            self.changed.wait(&mut st);
        }
    }

    /// Wait until `min_nr` operations (capped at the number
    /// outstanding) are terminal, all are, or `timeout` passes (`None`: no limit; zero: do
    /// not wait); then reap up to `capacity` terminal operations.
    pub(crate) fn reap(
        &self,
        min_nr: usize,
        capacity: usize,
        timeout: Option<Duration>,
    ) -> Vec<Completion> {
        let deadline = timeout.map(|t| Instant::now().checked_add(t));
        let mut st = self.ops.lock();
        loop {
            // Recomputed on every wake-up: a concurrent caller may have reaped what this one
            // was waiting for.
            let wanted = min_nr.min(st.ops.len());
            let terminal = st.terminal();
            if terminal >= wanted || terminal == st.ops.len() || timeout == Some(Duration::ZERO) {
                break;
            }
            match deadline {
                None | Some(None) => self.changed.wait(&mut st),
                Some(Some(d)) => {
                    if self.changed.wait_until(&mut st, d).timed_out() {
                        break;
                    }
                }
            }
        }
        let mut out = Vec::new();
        st.ops.retain(|op| {
            if out.len() < capacity && op.status.is_terminal() {
                out.push(Completion {
                    cookie: op.cookie,
                    status: op.status,
                });
                false
            } else {
                true
            }
        });
        out
    }

    #[cfg(test)]
    /// Status of every outstanding operation (for tests and tools), in submission order.
    pub(crate) fn statuses(&self) -> Vec<OpStatus> {
        self.ops.lock().ops.iter().map(|o| o.status).collect()
    }
}

/// Batch contexts by handle.
#[derive(Default)]
pub(crate) struct BatchRegistry {
    slots: Slots<Arc<BatchContext>>,
}

impl BatchRegistry {
    /// A new context of `capacity` operations.
    pub(crate) fn create(&mut self, capacity: usize) -> BatchToken {
        BatchToken(self.slots.insert(Arc::new(BatchContext::new(capacity))).0)
    }

    /// The context behind a current token.
    pub(crate) fn get(&self, token: BatchToken) -> Option<Arc<BatchContext>> {
        self.slots.get(token.0).cloned()
    }

    /// Remove a context; its token goes stale.
    pub(crate) fn remove(&mut self, token: BatchToken) -> Option<Arc<BatchContext>> {
        self.slots.remove(token.0).map(|(ctx, _)| ctx)
    }

    /// Every context with its token (the driver closes to 0: the caller retires and drains
    /// them outside the registry's lock, then removes them).
    pub(crate) fn live(&self) -> Vec<(BatchToken, Arc<BatchContext>)> {
        self.slots
            .entries()
            .map(|(key, ctx)| (BatchToken(key), ctx.clone()))
            .collect()
    }
}

/// A validated operation ready to run: what `hipFileRead`/`hipFileWrite` would have resolved
/// (its fields are private to this module).
pub(super) struct Resolved {
    dir: Direction,
    file: Arc<File>,
    /// Held for the operation's life (a registered buffer is "in use" meanwhile).
    _registration: Option<Arc<Buffer>>,
    buf: Buffer,
    size: usize,
    file_offset: u64,
    buffer_offset: usize,
    cookie: usize,
}

/// One entry of a submission: resolve the handle and buffer as `hipFileRead` does
/// (with batch's error codes), then check the fields.
pub(super) fn resolve(
    p: &OpParams,
    file: Option<&Arc<File>>,
    registration: Option<&Arc<Buffer>>,
    resolve_unregistered: impl FnOnce(Address) -> Result<Buffer>,
) -> Result<Resolved> {
    let file = file.ok_or(Error::Internal("batch entry: file handle not registered"))?;
    if p.base.is_null() {
        return Err(Error::InvalidValue("batch entry: NULL buffer"));
    }
    let buf = match registration {
        Some(b) => (**b).clone(),
        None => resolve_unregistered(p.base)?,
    };
    if buf.memory != MemoryType::Device {
        return Err(Error::Internal("batch entry: not device memory"));
    }
    let Some(buffer_offset) = p.buffer_offset else {
        return Err(Error::InvalidValue("batch entry: negative buffer offset"));
    };
    // The unclamped size must fit, unlike a synchronous call's, which is clamped to `MAX_RW`
    // first.
    if !fits(buf.length, buffer_offset, p.size) {
        return Err(Error::InvalidValue(
            "batch entry: the operation does not fit in its buffer",
        ));
    }
    let Some(file_offset) = p.file_offset else {
        return Err(Error::InvalidValue("batch entry: negative file offset"));
    };
    let Some(dir) = p.dir else {
        return Err(Error::InvalidValue("batch entry: unknown opcode"));
    };
    if p.mode != Some(Mode::Batch) {
        return Err(Error::InvalidValue("batch entry: mode is not hipFileBatch"));
    }
    Ok(Resolved {
        dir,
        file: file.clone(),
        _registration: registration.cloned(),
        buf,
        size: p.size,
        file_offset,
        buffer_offset,
        cookie: p.cookie,
    })
}

/// Add validated operations to `ctx`'s queue and count in the jobs it lacks for them, which
/// the caller spawns once it let go of the driver's state read lock, held for this call (see
/// the module comment).
pub(super) fn enqueue(
    ctx: &Arc<BatchContext>,
    session: &Arc<Session>,
    jobs_live: &Arc<Jobs>,
    ops: Vec<Resolved>,
) -> Result<Counted<ContextWork>> {
    let (dirs, jobs) = {
        let mut st = ctx.ops.lock();
        if st.retired {
            // Destroyed or closed after this submission found it: its handle is going stale.
            return Err(Error::InvalidValue("unknown batch handle"));
        }
        if ops.len() > ctx.capacity - st.ops.len() {
            // A concurrent submission took the room checked at the start.
            return Err(Error::BatchFull);
        }
        let mut dirs = Vec::with_capacity(ops.len());
        for r in ops {
            let id = st.next_id;
            st.next_id += 1;
            dirs.push(r.dir);
            st.queue.push(id);
            st.ops.push(Op {
                id,
                cookie: r.cookie,
                status: OpStatus::Pending,
                res: Some(r),
            });
        }
        let jobs = st.start_jobs(dirs.len(), session.engine.batch_jobs());
        (dirs, jobs)
    };
    for &dir in &dirs {
        crate::stats::recorder::batch_submitted(dir, 1);
    }
    let work = ContextWork {
        ctx: ctx.clone(),
        session: session.clone(),
    };
    Ok(jobs_live.count_in(&work, jobs))
}

/// What a context's batch jobs work through: its operations, run in the session of the
/// submission that started the job (its backends and engine).
#[derive(Clone)]
pub(super) struct ContextWork {
    ctx: Arc<BatchContext>,
    session: Arc<Session>,
}

impl Work for ContextWork {
    fn engine(&self) -> &Engine {
        &self.session.engine
    }

    fn turn(&self, budget: usize) -> Turn {
        self.work(budget)
    }

    fn leave(&self) {
        self.ctx.ops.lock().queue.leave();
    }
}

impl ContextWork {
    /// One turn: take operations until the queue is empty or `budget` were taken. A
    /// device read that the fallback serves begins on the job's overlap, and the job finishes
    /// it after it began the next one, so each read's copy to the device overlaps the next
    /// one's `pread` (target T7); anything else runs as `hipFileRead`/`hipFileWrite` would. A
    /// panic fails only its operation.
    fn work(&self, budget: usize) -> Turn {
        let session = &*self.session;
        let mut overlap = session.engine.overlap();
        // Oldest first.
        let mut in_flight: VecDeque<InFlightOp> = VecDeque::new();
        let mut taken = 0;
        loop {
            if taken == budget {
                self.drain(&mut in_flight, &mut overlap);
                return self.ctx.ops.lock().end_turn();
            }
            let taking = self.ctx.ops.lock().take(!in_flight.is_empty());
            let (id, res) = match taking {
                Take::Op(op) => op,
                Take::Empty => {
                    self.drain(&mut in_flight, &mut overlap);
                    continue;
                }
                Take::Retired => return Turn::Retired,
            };
            taken += 1;
            // An event reports a status: a write that fails part-way is Failed with its error.
            let req = Request::new(
                res.dir,
                &res.file,
                &res.buf,
                res.size,
                res.file_offset,
                res.buffer_offset,
            )
            .reporting_errors();
            let failed = || Begun::Done(Err(PANIC));
            let mut begun = guarded(|| session.backends.begin(&req, &mut overlap), failed);
            // Every buffer lent to a copy: the oldest read makes room.
            while let Begun::Busy = begun {
                let Some(op) = in_flight.pop_front() else {
                    break;
                };
                let r = finish(op.begun, &mut overlap);
                self.settle(op.id, op.res, r);
                begun = guarded(|| session.backends.begin(&req, &mut overlap), failed);
            }
            match begun {
                Begun::Busy | Begun::Synchronous => {
                    // The overlap's buffers go back first: this request's own may wait for them.
                    self.drain(&mut in_flight, &mut overlap);
                    let r = guarded(|| session.backends.run(&req), || Err(PANIC));
                    self.settle(id, res, r);
                }
                Begun::Done(r) => self.settle(id, res, r),
                begun @ Begun::Copying { .. } => in_flight.push_back(InFlightOp { id, begun, res }),
            }
        }
    }

    /// Finish every read in flight and release the overlap, then record how they ended: once
    /// the application sees them complete, the job holds no buffer any more.
    fn drain(&self, in_flight: &mut VecDeque<InFlightOp>, overlap: &mut Overlap<'_>) {
        let done: Vec<_> = in_flight
            .drain(..)
            .map(|op| {
                let r = finish(op.begun, overlap);
                (op.id, op.res, r)
            })
            .collect();
        overlap.release();
        for (id, res, r) in done {
            self.settle(id, res, r);
        }
    }

    /// Record how operation `id` ended, after its resources are given back.
    fn settle(&self, id: u64, res: Resolved, r: Result<usize>) {
        drop(res);
        let status = match r {
            Ok(n) => OpStatus::Complete(n),
            Err(e) => OpStatus::Failed(e),
        };
        if let Some(op) = self.ctx.ops.lock().get(id) {
            op.status = status;
        }
        self.ctx.changed.notify_all();
    }
}

/// An operation whose copy to the device is in flight, with the resources it holds.
struct InFlightOp {
    id: u64,
    begun: Begun,
    res: Resolved,
}

const PANIC: Error = Error::Internal("panic in a batch operation");

/// Wait for a read in flight: its result (a panic fails it).
fn finish(begun: Begun, overlap: &mut Overlap<'_>) -> Result<usize> {
    guarded(|| begun.finish(overlap), || Err(PANIC))
}

/// `f`, or what `failed` gives if it panics (the operation fails; the job goes on).
fn guarded<T>(f: impl FnOnce() -> T, failed: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| failed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(ctx: &BatchContext, cookies: &[usize]) -> Vec<u64> {
        let mut st = ctx.ops.lock();
        cookies
            .iter()
            .map(|&cookie| {
                let id = st.next_id;
                st.next_id += 1;
                st.ops.push(Op {
                    id,
                    cookie,
                    status: OpStatus::Pending,
                    res: None,
                });
                id
            })
            .collect()
    }

    fn finish(ctx: &BatchContext, id: u64, status: OpStatus) {
        ctx.ops.lock().get(id).unwrap().status = status;
        ctx.changed.notify_all();
    }

    #[test]
    fn tokens_are_never_null_and_go_stale() {
        let mut r = BatchRegistry::default();
        let t = r.create(4);
        assert_ne!(t.0, 0);
        assert!(r.get(t).is_some());
        assert!(r.get(BatchToken(0)).is_none());
        assert!(r.remove(t).is_some());
        assert!(r.get(t).is_none() && r.remove(t).is_none());
        let t2 = r.create(4);
        assert_ne!(t, t2, "slot reused with a new generation");
        let t3 = r.create(4);
        let mut live: Vec<_> = r.live().into_iter().map(|(t, _)| t.0).collect();
        live.sort_unstable();
        let mut want = vec![t2.0, t3.0];
        want.sort_unstable();
        assert_eq!(live, want, "the live contexts with their tokens");
        assert!(r.get(t2).is_some(), "listing removes nothing");
        assert!(r.remove(t2).is_some() && r.remove(t3).is_some());
        assert!(r.live().is_empty());
    }

    #[test]
    fn reap_reports_each_terminal_operation_once_up_to_capacity() {
        let ctx = BatchContext::new(8);
        let ids = pending(&ctx, &[10, 11, 12, 13]);
        finish(&ctx, ids[0], OpStatus::Complete(4096));
        finish(&ctx, ids[1], OpStatus::Failed(Error::Os(libc::EIO)));
        finish(&ctx, ids[3], OpStatus::Complete(7));
        let got = ctx.reap(0, 2, Some(Duration::ZERO));
        assert_eq!(
            got,
            vec![
                Completion {
                    cookie: 10,
                    status: OpStatus::Complete(4096)
                },
                Completion {
                    cookie: 11,
                    status: OpStatus::Failed(Error::Os(libc::EIO))
                },
            ]
        );
        let got = ctx.reap(0, 8, Some(Duration::ZERO));
        assert_eq!(
            got,
            vec![Completion {
                cookie: 13,
                status: OpStatus::Complete(7)
            }]
        );
        assert!(
            ctx.reap(0, 8, Some(Duration::ZERO)).is_empty(),
            "reported once"
        );
        assert_eq!(ctx.statuses(), vec![OpStatus::Pending]);
    }

    #[test]
    fn cancel_touches_only_pending_operations() {
        let ctx = BatchContext::new(8);
        let ids = pending(&ctx, &[1, 2, 3]);
        finish(&ctx, ids[0], OpStatus::Complete(1));
        finish(&ctx, ids[1], OpStatus::Running);
        ctx.cancel();
        assert_eq!(
            ctx.statuses(),
            vec![OpStatus::Complete(1), OpStatus::Running, OpStatus::Canceled]
        );
    }

    #[test]
    fn reap_waits_for_min_nr_and_gives_up_at_the_timeout() {
        let ctx = Arc::new(BatchContext::new(8));
        let ids = pending(&ctx, &[1, 2]);
        // Nothing finishes: a 30 ms timeout returns empty-handed after at least 30 ms.
        let t0 = Instant::now();
        assert!(ctx.reap(1, 8, Some(Duration::from_millis(30))).is_empty());
        assert!(t0.elapsed() >= Duration::from_millis(30));
        // A finisher on another thread wakes an unlimited wait.
        let c = ctx.clone();
        let finisher = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            finish(&c, ids[1], OpStatus::Complete(5));
        });
        let got = ctx.reap(1, 8, None);
        finisher.join().unwrap();
        assert_eq!(
            got,
            vec![Completion {
                cookie: 2,
                status: OpStatus::Complete(5)
            }]
        );
        // min_nr above what is outstanding is capped: with one pending op and nothing
        // terminal, a zero timeout returns at once.
        assert!(ctx.reap(5, 8, Some(Duration::ZERO)).is_empty());
    }

    /// Queue `n` pending operations without resources (they are only taken, never run).
    fn queued(ctx: &BatchContext, n: usize) -> Vec<u64> {
        let ids = pending(ctx, &vec![0; n]);
        let mut st = ctx.ops.lock();
        for &id in &ids {
            st.get(id).unwrap().res = Some(resolved_stub());
            st.queue.push(id);
        }
        ids
    }

    fn resolved_stub() -> Resolved {
        let file = Arc::new(File::inspect(crate::request::file::scratch_fd()).unwrap());
        Resolved {
            dir: Direction::Read,
            file,
            _registration: None,
            buf: Buffer {
                base: Address::new(0x1000),
                length: 4096,
                memory: MemoryType::Device,
                device: 0,
            },
            size: 1,
            file_offset: 0,
            buffer_offset: 0,
            cookie: 0,
        }
    }

    fn taken(t: Take<(u64, Resolved)>) -> Option<u64> {
        match t {
            Take::Op((id, _)) => Some(id),
            Take::Empty | Take::Retired => None,
        }
    }

    #[test]
    fn jobs_take_every_queued_operation_in_order_and_retire_when_none_is_left() {
        let ctx = BatchContext::new(8);
        let ids = queued(&ctx, 3);
        let mut st = ctx.ops.lock();
        // Three operations, two workers: two jobs; a later submission while both run: none.
        assert_eq!(st.start_jobs(3, 2), 2);
        assert_eq!(st.start_jobs(1, 2), 0);
        assert_eq!(st.queue.jobs(), 2);
        assert_eq!(taken(st.take(false)), Some(ids[0]));
        assert_eq!(taken(st.take(true)), Some(ids[1]));
        assert_eq!(st.ops[1].status, OpStatus::Running);
        assert_eq!(taken(st.take(false)), Some(ids[2]));
        // Nothing queued: a job with reads in flight finishes them first, then retires.
        assert!(matches!(st.take(true), Take::Empty));
        assert_eq!(st.queue.jobs(), 2);
        assert!(matches!(st.take(false), Take::Retired));
        assert_eq!(st.queue.jobs(), 1);
        // One of two jobs left: an operation queued now gets a second one again.
        drop(st);
        let more = queued(&ctx, 1);
        let mut st = ctx.ops.lock();
        assert_eq!(st.start_jobs(1, 2), 1, "one worker is free again");
        assert_eq!(st.queue.jobs(), 2);
        assert_eq!(taken(st.take(false)), Some(more[0]));
        assert!(matches!(st.end_turn(), Turn::Retired));
        assert!(matches!(st.take(false), Take::Retired));
        assert_eq!(st.queue.jobs(), 0);
        assert_eq!(
            st.start_jobs(2, 2),
            2,
            "the next submission starts jobs again"
        );
    }

    #[test]
    fn a_turn_yields_while_operations_are_queued_and_canceled_ones_are_passed_over() {
        let ctx = BatchContext::new(8);
        let ids = queued(&ctx, 3);
        let mut st = ctx.ops.lock();
        assert_eq!(st.start_jobs(3, 1), 1);
        assert_eq!(taken(st.take(false)), Some(ids[0]));
        assert!(matches!(st.end_turn(), Turn::Yield));
        assert_eq!(st.queue.jobs(), 1, "the continuation keeps the job's place");
        st.get(ids[1]).unwrap().status = OpStatus::Canceled;
        assert_eq!(
            taken(st.take(false)),
            Some(ids[2]),
            "the canceled one is passed over"
        );
        drop(st);
        queued(&ctx, 2);
        ctx.cancel();
        let mut st = ctx.ops.lock();
        assert!(st.queue.is_empty(), "cancel leaves nothing to take");
        assert!(matches!(st.take(false), Take::Retired));
        assert_eq!(st.queue.jobs(), 0);
    }

    #[test]
    fn drain_waits_for_running_operations() {
        let ctx = Arc::new(BatchContext::new(8));
        let ids = pending(&ctx, &[1, 2]);
        finish(&ctx, ids[0], OpStatus::Running);
        let c = ctx.clone();
        let finisher = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            finish(&c, ids[0], OpStatus::Complete(3));
        });
        ctx.retire_and_drain();
        // Read before the join: after it the finisher has run whatever the drain did, so
        // only the statuses seen the moment the drain returns show that it waited.
        let drained = ctx.statuses();
        finisher.join().unwrap();
        // The running one finished as the finisher set it; the pending one was canceled by
        // the retirement.
        assert_eq!(drained, vec![OpStatus::Complete(3), OpStatus::Canceled]);
        assert!(ctx.ops.lock().retired, "nothing is queued any more");
    }
}
