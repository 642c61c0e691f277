//! Streams and events.
//!
//! Every stream owns a worker thread that runs the stream's queued work strictly in order
//! (copies, memsets, event markers, waits on a memory value). A stream remembers the device
//! current at its creation. Two special handles name streams made on first use:
//! - The NULL stream and handle 1 (`CU_STREAM_LEGACY`, `hipStreamLegacy`) name the **legacy
//!   default stream** of the current device, one per device, shared by every thread.
//! - Handle 2 (`CU_STREAM_PER_THREAD`, `hipStreamPerThread`) names the **calling thread's
//!   per-thread default stream** on the current device, one per (thread, device), made the
//!   first time that thread uses the handle on that device. It is a blocking stream (below) and
//!   independent of other threads' per-thread streams: synchronising handle 2 waits for the
//!   calling thread's stream only. When its thread exits, the stream is destroyed as
//!   `cuStreamDestroy` destroys a stream with work pending: the exit does not wait, the queued
//!   work runs on (legacy-stream work and device-wide synchronisations still wait for it), and
//!   the stream is gone once it drained (the `per_thread_streams_live` gauge counts the
//!   streams not gone yet). CUDA programs built with `--default-stream per-thread` also map
//!   NULL to it; that is the application's compile-time choice and not modelled: NULL is
//!   always the legacy stream here.
//!
//! The hazards of a real GPU are kept:
//! - **The legacy default stream synchronises.** Work queued on a blocking stream (created
//!   without the non-blocking flag, or any thread's per-thread stream) starts only after the
//!   work queued on the default stream before it, and work queued on the default stream only
//!   after the work queued before it on every blocking stream of the device. A synchronous copy runs on the default stream, so it
//!   waits for all of them. Non-blocking streams are independent.
//! - **Host functions of every stream run on one runtime thread** (`hipsim-callbacks`): a host
//!   function that blocks holds up the host functions of all other streams.
//! - **A wait on a memory value** (`hipStreamWaitValue32`, `cuStreamWaitValue32`) holds the
//!   stream until the 32-bit word in pinned (mapped) memory meets the condition; the word is
//!   polled, as a GPU would.
//! - **A full command queue blocks the caller.** An enqueue on a stream that holds
//!   `launch_queue` items queued and not finished (hipsim's setting, 1024 by default) waits
//!   until one finishes, as `cuLaunchKernel` does when the launch queue is full: a thread that
//!   holds a lock across an enqueue can make another wait for as long as the stream is held.
//!
//! - **Streams share a few hardware queues.** Each device has N hardware queues and its streams
//!   are spread over them round-robin in creation order: the default stream is stream 0 of its
//!   device (as if made when the device was initialised), and the k-th stream created on the
//!   device goes to queue k mod N. N is `hip_hw_queues` (`GPU_MAX_HW_QUEUES`, ROCm's default
//!   4) for a stream made by `hipStreamCreate*` and `cuda_hw_queues`
//!   (`CUDA_DEVICE_MAX_CONNECTIONS`, CUDA's default 8) for one made by `cuStreamCreate`, as the
//!   setting is when the stream is created; 0 gives the stream a queue of its own. A per-thread
//!   stream is placed like a created stream when it is made, taking the next ordinal of its
//!   device, with the setting of the API whose call made it (the first call of its thread on
//!   that device to name handle 2: a HIP call uses `hip_hw_queues`, a CUDA one
//!   `cuda_hw_queues`; the one placement is kept whichever API uses it later). An item (a
//!   copy, a kernel, a wait on a word, a host function, an event marker, ...) starts only when
//!   every item submitted earlier to its hardware queue, by any stream, has finished: the
//!   pessimistic model of an in-order queue whose packets each carry a barrier. So an item that
//!   waits (a wait on a word, a kernel that polls host memory) holds up every stream mapped to
//!   its queue, which is how a held stream hangs a GPU once there are more streams than queues.
//!   Synchronous copies run on the caller and take no queue.
//! - **ROCm runs every cooperative launch of a device on one queue.** `hipModuleLaunchCooperativeKernel`
//!   puts the kernel on the device's own transfer queue, behind every cooperative launch made
//!   before it on the device (from any stream), with a dependency on its stream's earlier work;
//!   the stream's later work waits for it (ROCclr's `VirtualGPU::submitKernel`). So a
//!   cooperative kernel starts only when its stream reached it *and* every cooperative kernel
//!   launched before it on the device has finished: one held kernel holds the next of every
//!   stream. `hip_coop_queue` (`HIPSIM_HIP_COOP_QUEUE`, default 1) models that; 0 runs them as
//!   plain launches. CUDA's cooperative launches run on their stream like any kernel.
//!
//! A failure of queued work (e.g. an injected copy fault) is kept by the stream and returned by
//! the next [`Stream::synchronize`]; only the first failure since the last synchronisation is
//! kept. Once the device's context broke (a kernel faulted, see [`crate::device`]), an item
//! that had not started never runs, and every synchronisation or query of the device's streams
//! and events returns the context's error, again and again.
//!
//! An event records a marker into a stream; synchronising the event waits until the marker of
//! its latest record has run (an event that was never recorded is complete).
//!
//! **Identity.** A stream's handle looks like an address, and a stream created after one was
//! destroyed gets that stream's handle (the one destroyed last first), as real runtimes' heaps
//! give a freed stream object's address to the next one: a handle value alone does not tell a
//! new stream from an old one. Its id (`hipStreamGetId`,
//! `cuStreamGetId`) is never reused: the legacy default stream of device d has id d + 1 (the
//! NULL and legacy handles name it), and created streams and per-thread streams share one
//! count from 17 up in creation order, across devices: every thread's per-thread stream has an
//! id of its own, and a thread's stream on each device too. A per-thread stream's handle is
//! always 2 (it has no other), so the id is the only way to tell two threads' apart.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::thread::{JoinHandle, ThreadId};

use parking_lot::{Condvar, Mutex};

use crate::counters::{self, Gauge};
use crate::device::{self, MAX_DEVICES};
use crate::errors::{SimError, SimResult};
use crate::faults::{self, Fault};

/// A unit of queued work; an error is reported by the next synchronisation.
pub type Work = Box<dyn FnOnce() -> SimResult<()> + Send>;

/// The runtime whose call created a stream: it decides how many hardware queues it shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `hipStreamCreate*`, or a HIP call that made a per-thread stream: `hip_hw_queues`.
    Hip,
    /// `cuStreamCreate`, or a CUDA call that made a per-thread stream: `cuda_hw_queues`.
    Cuda,
}

// ---- hardware queues -------------------------------------------------------------------------

#[derive(Default)]
struct Turns {
    /// Tickets handed out: the next item submitted gets this one.
    issued: u64,
    /// The ticket whose item may run now (every earlier one has finished).
    serving: u64,
}

/// One hardware queue of a device: a ticket FIFO. Each item submitted to a stream mapped to it
/// takes the next ticket, under the stream's lock, so tickets follow the order of submission
/// on every stream; the item runs when all earlier tickets have finished.
#[derive(Default)]
struct HwQueue {
    turns: Mutex<Turns>,
    cv: Condvar,
}

impl HwQueue {
    fn ticket(&self) -> u64 {
        let mut t = self.turns.lock();
        t.issued += 1;
        t.issued - 1
    }

    fn wait_turn(&self, ticket: u64) {
        let mut t = self.turns.lock();
        while t.serving != ticket {
            self.cv.wait(&mut t);
        }
    }

    fn finished(&self, ticket: u64) {
        let mut t = self.turns.lock();
        debug_assert_eq!(t.serving, ticket);
        t.serving = ticket + 1;
        self.cv.notify_all();
    }
}

/// A stream's place on its device's hardware queues.
struct Placement {
    index: u64,
    queue: Arc<HwQueue>,
}

/// Every hardware queue used so far, by device and index.
type HwQueues = HashMap<(i32, u64), Arc<HwQueue>>;
static HW_QUEUES: LazyLock<Mutex<HwQueues>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The next creation ordinal of each device (0 is its default stream's).
static ORDINALS: [AtomicU64; MAX_DEVICES] = [const { AtomicU64::new(1) }; MAX_DEVICES];

/// Hardware queue `index` of `device`.
fn hw_queue(device: i32, index: u64) -> Placement {
    let queue = Arc::clone(HW_QUEUES.lock().entry((device, index)).or_default());
    Placement { index, queue }
}

/// Held while a cooperative launch takes its tickets (see [`Stream::enqueue_plain`]).
static COOP_TICKETS: Mutex<()> = Mutex::new(());

/// The cooperative queue of `device` (ROCm's transfer queue), made on first use.
fn coop_queue(device: i32) -> Option<Arc<HwQueue>> {
    static COOP: LazyLock<Mutex<HashMap<i32, Arc<HwQueue>>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    usize::try_from(device).ok().filter(|&d| d < MAX_DEVICES)?;
    Some(Arc::clone(COOP.lock().entry(device).or_default()))
}

/// Where the next stream `api` creates on `device` goes: `None` when the setting gives every
/// stream a queue of its own (its own worker then orders its items).
fn place_created(device: i32, api: Api) -> Option<Placement> {
    let slot = usize::try_from(device).ok().filter(|&d| d < MAX_DEVICES)?;
    let ordinal = ORDINALS[slot].fetch_add(1, Ordering::Relaxed);
    let n = faults::count(match api {
        Api::Hip => Fault::HipHwQueues,
        Api::Cuda => Fault::CudaHwQueues,
    })?;
    Some(hw_queue(device, ordinal % n))
}

// ---- identity --------------------------------------------------------------------------------

/// Handles of created streams: destroyed ones, to be given out again, and the next new one.
struct Handles {
    free: Vec<usize>,
    next: usize,
}

/// The first handle of a created stream: pointer-like, apart from the other handles the
/// simulator makes up (kernels' are 0x5157_xxxx_xxxx).
const FIRST_HANDLE: usize = 0x5354_0000_0000;
/// The distance between two new handles (the size a runtime's stream object might have).
const HANDLE_STRIDE: usize = 0x100;

static HANDLES: Mutex<Handles> = Mutex::new(Handles {
    free: Vec::new(),
    next: FIRST_HANDLE,
});

/// A handle for a new stream: the one destroyed last, or a new one.
fn take_handle() -> usize {
    let mut h = HANDLES.lock();
    h.free.pop().unwrap_or_else(|| {
        h.next += HANDLE_STRIDE;
        h.next - HANDLE_STRIDE
    })
}

/// The id of the first created stream; the ids below belong to the default streams.
pub const FIRST_CREATED_ID: u64 = MAX_DEVICES as u64 + 1;
static NEXT_ID: AtomicU64 = AtomicU64::new(FIRST_CREATED_ID);

// ---- streams ---------------------------------------------------------------------------------

/// An item and its ticket on the stream's hardware queue.
struct Item {
    work: Work,
    ticket: Option<u64>,
    /// Its ticket on the device's cooperative queue (a cooperative launch of the HIP face).
    coop: Option<(Arc<HwQueue>, u64)>,
    /// Run by the worker under the queue's lock as it counts the item done (an event's
    /// marker): what it marks and the stream's completion are seen together.
    done: Option<Marker>,
}

/// What an event's marker does when it completes.
type Marker = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Queue {
    items: VecDeque<Item>,
    enqueued: u64,
    completed: u64,
    shutdown: bool,
    /// Run by the worker as it ends after a shutdown, with the queue drained (an exited
    /// thread's per-thread stream unregisters itself so).
    on_stop: Option<Marker>,
    error: Option<SimError>,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    cv: Condvar,
}

/// A simulated stream.
pub struct Stream {
    device: i32,
    /// Synchronises with the legacy default stream (false: created non-blocking).
    blocking: bool,
    /// Never reused (see the module's documentation).
    id: u64,
    placement: Option<Placement>,
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
    worker_id: ThreadId,
}

static NEXT_WORKER: AtomicU64 = AtomicU64::new(0);

fn worker_loop(shared: &Shared, hw: Option<&HwQueue>, device: i32) {
    loop {
        let item = {
            let mut q = shared.queue.lock();
            loop {
                if let Some(w) = q.items.pop_front() {
                    break w;
                }
                if q.shutdown {
                    let on_stop = q.on_stop.take();
                    drop(q);
                    if let Some(f) = on_stop {
                        f();
                    }
                    return;
                }
                shared.cv.wait(&mut q);
            }
        };
        let turn = hw.zip(item.ticket);
        if let Some((hw, ticket)) = turn {
            hw.wait_turn(ticket);
        }
        if let Some((coop, ticket)) = &item.coop {
            coop.wait_turn(*ticket);
        }
        // A broken context runs nothing more; the item still takes its turn and completes, so
        // that nothing waits for it.
        let result = device::usable(device).and_then(|()| {
            panic::catch_unwind(AssertUnwindSafe(item.work)).unwrap_or(Err(SimError::UNKNOWN))
        });
        if let Some((coop, ticket)) = &item.coop {
            coop.finished(*ticket);
        }
        if let Some((hw, ticket)) = turn {
            hw.finished(ticket);
        }
        let mut q = shared.queue.lock();
        q.completed += 1;
        if let Some(done) = item.done {
            done();
        }
        if let Err(e) = result {
            q.error.get_or_insert(e);
        }
        shared.cv.notify_all();
    }
}

impl Stream {
    fn spawn(
        device: i32,
        blocking: bool,
        id: u64,
        placement: Option<Placement>,
    ) -> SimResult<Arc<Stream>> {
        let shared = Arc::new(Shared::default());
        let for_worker = Arc::clone(&shared);
        let hw = placement.as_ref().map(|p| Arc::clone(&p.queue));
        let n = NEXT_WORKER.fetch_add(1, Ordering::Relaxed);
        let handle = std::thread::Builder::new()
            .name(format!("hipsim-stream-{n}"))
            .spawn(move || worker_loop(&for_worker, hw.as_deref(), device))
            .map_err(|_| SimError::OUT_OF_MEMORY)?;
        let worker_id = handle.thread().id();
        Ok(Arc::new(Stream {
            device,
            blocking,
            id,
            placement,
            shared,
            worker: Mutex::new(Some(handle)),
            worker_id,
        }))
    }

    /// The device current when the stream was created.
    pub fn device(&self) -> i32 {
        self.device
    }

    /// The stream's id, unique for the life of the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The index of the device's hardware queue the stream runs on; `None` when it has a queue
    /// of its own.
    pub fn hw_queue(&self) -> Option<u64> {
        self.placement.as_ref().map(|p| p.index)
    }

    /// Queues `work` behind everything already queued, and (legacy default stream semantics)
    /// behind what the default stream, or for the default stream every blocking stream of the
    /// device, has queued so far.
    pub fn enqueue(self: &Arc<Self>, work: Work) {
        self.enqueue_with(work, None);
    }

    /// Queues a cooperative launch of the HIP face: like [`Stream::enqueue`], and with
    /// `hip_coop_queue` also behind every cooperative launch queued before it on the device
    /// (see the module's documentation).
    pub fn enqueue_cooperative(self: &Arc<Self>, work: Work) {
        let coop = (faults::get(Fault::HipCoopQueue) != 0).then(|| coop_queue(self.device));
        self.enqueue_full(work, None, coop.flatten());
    }

    /// [`Stream::enqueue`] with a marker that completes with the item.
    fn enqueue_with(self: &Arc<Self>, work: Work, done: Option<Marker>) {
        self.enqueue_full(work, done, None);
    }

    /// [`Stream::enqueue`] with a marker and a place on a device's cooperative queue.
    fn enqueue_full(
        self: &Arc<Self>,
        work: Work,
        done: Option<Marker>,
        coop: Option<Arc<HwQueue>>,
    ) {
        let deps = self.legacy_dependencies();
        let work: Work = if deps.is_empty() {
            work
        } else {
            Box::new(move || {
                for (shared, target) in deps {
                    let mut q = shared.queue.lock();
                    while q.completed < target {
                        shared.cv.wait(&mut q);
                    }
                }
                work()
            })
        };
        self.enqueue_plain(work, done, coop);
    }

    /// The streams (and their queued counts now) that work queued on this stream now must
    /// wait for.
    fn legacy_dependencies(self: &Arc<Self>) -> Vec<(Arc<Shared>, u64)> {
        let is_default = existing_default(self.device).is_some_and(|d| Arc::ptr_eq(&d, self));
        let others: Vec<Arc<Stream>> = if is_default {
            blocking_streams_of(self.device)
        } else if self.blocking {
            existing_default(self.device).into_iter().collect()
        } else {
            Vec::new()
        };
        others
            .into_iter()
            .filter_map(|s| {
                let q = s.shared.queue.lock();
                (q.completed < q.enqueued).then(|| (Arc::clone(&s.shared), q.enqueued))
            })
            .collect()
    }

    /// Queues `work` last. A full queue (`launch_queue` items queued and not finished) makes
    /// the caller wait until the stream drains one, as a GPU's command queue does; the stream's
    /// own worker never waits (it would wait for itself).
    fn enqueue_plain(&self, work: Work, done: Option<Marker>, coop: Option<Arc<HwQueue>>) {
        let mut q = self.shared.queue.lock();
        if let Some(limit) = crate::faults::launch_queue() {
            if !self.on_worker() {
                while q.enqueued - q.completed >= limit && !q.shutdown {
                    self.shared.cv.wait(&mut q);
                }
            }
        }
        // The ticket is taken under the stream's lock: the tickets of one stream's items follow
        // their order, and an item that another's legacy dependency waits for was submitted,
        // ticket included, before that item took its own.
        // A cooperative launch takes both tickets at once, with respect to every other
        // cooperative launch: two threads launching on streams that share a hardware queue must
        // not take them in opposite orders (each worker would then hold one queue's turn and
        // wait for the other's). Under the stream's lock too, so the cooperative tickets of one
        // stream's items follow their order.
        let both = coop.as_ref().map(|_| COOP_TICKETS.lock());
        let ticket = self.placement.as_ref().map(|p| p.queue.ticket());
        let coop = coop.map(|c| {
            let t = c.ticket();
            (c, t)
        });
        drop(both);
        q.items.push_back(Item {
            work,
            ticket,
            coop,
            done,
        });
        q.enqueued += 1;
        self.shared.cv.notify_all();
    }

    fn on_worker(&self) -> bool {
        std::thread::current().id() == self.worker_id
    }

    /// Waits until everything queued before this call has run. A no-op when called from the
    /// stream's own worker (a host function), which would otherwise wait for itself.
    pub fn wait_idle(&self) {
        if self.on_worker() {
            return;
        }
        let mut q = self.shared.queue.lock();
        let target = q.enqueued;
        while q.completed < target {
            self.shared.cv.wait(&mut q);
        }
    }

    /// Waits like [`Stream::wait_idle`] and returns (and clears) the first failure of queued
    /// work since the last synchronisation; a broken context's error every time.
    pub fn synchronize(&self) -> SimResult<()> {
        self.wait_idle();
        let pending = self.shared.queue.lock().error.take();
        device::usable(self.device)?;
        pending.map_or(Ok(()), Err)
    }

    /// The first failure of queued work since the last synchronisation, left in place (a
    /// broken context's error first).
    pub fn pending_error(&self) -> Option<SimError> {
        device::usable(self.device)
            .err()
            .or(self.shared.queue.lock().error)
    }

    /// Whether all queued work has run.
    pub fn is_idle(&self) -> bool {
        let q = self.shared.queue.lock();
        q.completed == q.enqueued
    }

    fn shutdown(&self) {
        self.wait_idle();
        self.shared.queue.lock().shutdown = true;
        self.shared.cv.notify_all();
        let handle = self.worker.lock().take();
        if let Some(h) = handle {
            if !self.on_worker() {
                let _ = h.join();
            }
        }
    }
}

static STREAMS: LazyLock<Mutex<HashMap<usize, Arc<Stream>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static DEFAULT_STREAMS: Mutex<[Option<Arc<Stream>>; MAX_DEVICES]> =
    Mutex::new([const { None }; MAX_DEVICES]);

/// Creates a stream on `device` for `api` (`blocking`: it synchronises with the legacy default
/// stream); returns its handle.
pub fn create(device: i32, blocking: bool, api: Api) -> SimResult<usize> {
    let placement = place_created(device, api);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let s = Stream::spawn(device, blocking, id, placement)?;
    let handle = take_handle();
    STREAMS.lock().insert(handle, s);
    counters::gauge_add(Gauge::Streams, 1);
    Ok(handle)
}

/// `CU_STREAM_PER_THREAD`, `hipStreamPerThread`: the calling thread's per-thread stream.
pub const PER_THREAD_HANDLE: usize = 2;

/// Whether `handle` names a default stream (the legacy one: NULL or 1; the calling thread's
/// per-thread one: 2) rather than a created stream. Neither can be destroyed, which is what the
/// destroy calls ask this for.
pub fn is_default_handle(handle: usize) -> bool {
    handle <= PER_THREAD_HANDLE
}

/// The default stream of `device`, created on first use.
pub fn default_stream(device: i32) -> SimResult<Arc<Stream>> {
    let idx = usize::try_from(device)
        .ok()
        .filter(|&d| d < MAX_DEVICES)
        .ok_or(SimError::INVALID_DEVICE)?;
    let mut defaults = DEFAULT_STREAMS.lock();
    if let Some(s) = &defaults[idx] {
        return Ok(Arc::clone(s));
    }
    // Stream 0 of the device: hardware queue 0, whatever the number of queues.
    let s = Stream::spawn(device, true, idx as u64 + 1, Some(hw_queue(device, 0)))?;
    defaults[idx] = Some(Arc::clone(&s));
    Ok(s)
}

/// The default stream of `device` if it was ever created.
fn existing_default(device: i32) -> Option<Arc<Stream>> {
    let idx = usize::try_from(device).ok().filter(|&d| d < MAX_DEVICES)?;
    DEFAULT_STREAMS.lock()[idx].clone()
}

/// Resolves a stream handle for a call of `api`: NULL and 1 name `default_device()`'s legacy
/// default stream, 2 the calling thread's per-thread stream on that device (made now, placed
/// for `api`, if this thread never named it there). Unknown handles are
/// `hipErrorInvalidHandle`.
pub fn resolve(
    handle: usize,
    api: Api,
    default_device: impl FnOnce() -> SimResult<i32>,
) -> SimResult<Arc<Stream>> {
    if handle == PER_THREAD_HANDLE {
        return per_thread_stream(default_device()?, api);
    }
    if is_default_handle(handle) {
        return default_stream(default_device()?);
    }
    STREAMS
        .lock()
        .get(&handle)
        .cloned()
        .ok_or(SimError::INVALID_HANDLE)
}

// ---- per-thread default streams --------------------------------------------------------------

/// Every live per-thread stream of every thread, by id: what the legacy default stream, the
/// synchronous copies and the device-wide waits must see besides the created streams.
static PER_THREAD_STREAMS: LazyLock<Mutex<HashMap<u64, Arc<Stream>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// One thread's per-thread streams, by device. Dropped as the thread exits, which destroys
/// them as a runtime does with a thread's per-thread streams.
struct PerThread(RefCell<[Option<Arc<Stream>>; MAX_DEVICES]>);

impl Drop for PerThread {
    fn drop(&mut self) {
        // As `cuStreamDestroy` with work pending: the exit does not wait (a thread, or the
        // process's exit, never hangs on work held on its stream). The worker runs what is
        // queued and then ends, and only then is the stream unregistered: until it drained,
        // legacy-stream work and device-wide waits still wait for it. Nothing new can be queued
        // on it: handle 2 names it for this thread only, which is exiting.
        for s in self.0.get_mut().iter_mut().filter_map(Option::take) {
            let id = s.id;
            let mut q = s.shared.queue.lock();
            q.on_stop = Some(Box::new(move || {
                // Usually the last reference: the stream is dropped here, on its own worker
                // (which detaches itself), after the registry's lock was let go.
                let last = PER_THREAD_STREAMS.lock().remove(&id);
                drop(last);
                counters::gauge_sub(Gauge::PerThreadStreams, 1);
            }));
            q.shutdown = true;
            s.shared.cv.notify_all();
        }
    }
}

thread_local! {
    static PER_THREAD: PerThread = const { PerThread(RefCell::new([const { None }; MAX_DEVICES])) };
}

/// The calling thread's per-thread stream on `device`, made (and placed for `api`) on first
/// use. A thread whose per-thread streams were already destroyed (a runtime call from a
/// thread-local destructor that runs after the simulator's) gets `INVALID_HANDLE`.
fn per_thread_stream(device: i32, api: Api) -> SimResult<Arc<Stream>> {
    let idx = usize::try_from(device)
        .ok()
        .filter(|&d| d < MAX_DEVICES)
        .ok_or(SimError::INVALID_DEVICE)?;
    PER_THREAD
        .try_with(|pt| {
            let mut slots = pt.0.borrow_mut();
            if let Some(s) = &slots[idx] {
                return Ok(Arc::clone(s));
            }
            let placement = place_created(device, api);
            let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            let s = Stream::spawn(device, true, id, placement)?;
            PER_THREAD_STREAMS.lock().insert(id, Arc::clone(&s));
            counters::gauge_add(Gauge::PerThreadStreams, 1);
            slots[idx] = Some(Arc::clone(&s));
            Ok(s)
        })
        .unwrap_or(Err(SimError::INVALID_HANDLE))
}

/// Every per-thread stream of `device`, of every thread.
fn per_thread_streams_of(device: i32) -> Vec<Arc<Stream>> {
    PER_THREAD_STREAMS
        .lock()
        .values()
        .filter(|s| s.device == device)
        .cloned()
        .collect()
}

/// The streams of `device` that synchronise with its legacy default stream: the blocking
/// created streams and every thread's per-thread stream.
fn blocking_streams_of(device: i32) -> Vec<Arc<Stream>> {
    let mut v: Vec<Arc<Stream>> = STREAMS
        .lock()
        .values()
        .filter(|s| s.device == device && s.blocking)
        .cloned()
        .collect();
    v.extend(per_thread_streams_of(device));
    v
}

/// Destroys a created stream: drains its work, then stops and joins its worker.
pub fn destroy(handle: usize) -> SimResult<()> {
    let s = STREAMS
        .lock()
        .remove(&handle)
        .ok_or(SimError::INVALID_HANDLE)?;
    s.shutdown();
    // Only now, once its work drained, as a runtime frees the stream object.
    HANDLES.lock().free.push(handle);
    counters::gauge_sub(Gauge::Streams, 1);
    Ok(())
}

/// Every stream of `device`: created, every thread's per-thread stream, and the legacy one.
fn streams_of(device: i32) -> Vec<Arc<Stream>> {
    let mut v: Vec<Arc<Stream>> = STREAMS
        .lock()
        .values()
        .filter(|s| s.device == device)
        .cloned()
        .collect();
    v.extend(per_thread_streams_of(device));
    v.extend(existing_default(device));
    v
}

/// Waits for every stream of `device` (every thread's per-thread streams included) and returns
/// the first pending failure among them (clearing the failures it reports); a broken context's
/// error every time.
pub fn synchronize_device(device: i32) -> SimResult<()> {
    let mut first = Ok(());
    for s in streams_of(device) {
        let r = s.synchronize();
        if first.is_ok() {
            first = r;
        }
    }
    device::usable(device)?;
    first
}

/// Waits for every stream of `device` (every thread's per-thread streams included) without
/// consuming their pending failures.
pub fn wait_device_idle(device: i32) {
    for s in streams_of(device) {
        s.wait_idle();
    }
}

/// What a synchronous copy waits for: `device`'s legacy default stream if it exists, and
/// (legacy default stream semantics) every blocking stream of the device, every thread's
/// per-thread stream included.
pub fn wait_default_idle(device: i32) {
    if let Some(s) = existing_default(device) {
        s.wait_idle();
    }
    for s in blocking_streams_of(device) {
        s.wait_idle();
    }
}

// ---- host functions --------------------------------------------------------------------------

type Callback = Box<dyn FnOnce() + Send>;

/// The one runtime thread that runs the host functions of every stream.
struct Callbacks {
    queue: Mutex<VecDeque<Callback>>,
    cv: Condvar,
}

static CALLBACKS: LazyLock<Arc<Callbacks>> = LazyLock::new(|| {
    let c = Arc::new(Callbacks {
        queue: Mutex::new(VecDeque::new()),
        cv: Condvar::new(),
    });
    let for_thread = Arc::clone(&c);
    std::thread::Builder::new()
        .name("hipsim-callbacks".into())
        .spawn(move || loop {
            let f = {
                let mut q = for_thread.queue.lock();
                loop {
                    if let Some(f) = q.pop_front() {
                        break f;
                    }
                    for_thread.cv.wait(&mut q);
                }
            };
            let _ = panic::catch_unwind(AssertUnwindSafe(f));
        })
        .expect("the simulator's callback thread starts");
    c
});

/// Queues `f` as a host function on `stream`: when the stream reaches it, it runs on the
/// callback thread, and the stream waits until it returned.
pub fn enqueue_host_fn(stream: &Arc<Stream>, f: Callback) {
    stream.enqueue(Box::new(move || {
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = Arc::clone(&done);
        {
            let mut q = CALLBACKS.queue.lock();
            q.push_back(Box::new(move || {
                f();
                *signal.0.lock() = true;
                signal.1.notify_all();
            }));
            CALLBACKS.cv.notify_one();
        }
        let mut finished = done.0.lock();
        while !*finished {
            done.1.wait(&mut finished);
        }
        Ok(())
    }));
}

// ---- waits on a memory value -----------------------------------------------------------------

/// The condition of a wait on a 32-bit word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitCondition {
    /// `(int32_t)(*addr - value) >= 0` (CUDA's GEQ; HIP's `hipStreamWaitValueGte`).
    Geq,
    /// `*addr == value`.
    Eq,
    /// `(*addr & value) != 0`.
    And,
    /// `~(*addr | value) != 0`.
    Nor,
}

impl WaitCondition {
    fn holds(self, word: u32, value: u32) -> bool {
        match self {
            WaitCondition::Geq => (word.wrapping_sub(value) as i32) >= 0,
            WaitCondition::Eq => word == value,
            WaitCondition::And => word & value != 0,
            WaitCondition::Nor => !(word | value) != 0,
        }
    }
}

/// Queues a wait on the 32-bit word at `addr` (pinned or registered host memory, checked by
/// the caller): the stream holds until `cond` holds for `word & mask`.
pub fn enqueue_wait_value(
    stream: &Arc<Stream>,
    addr: usize,
    value: u32,
    mask: u32,
    cond: WaitCondition,
) {
    let device = stream.device;
    stream.enqueue(Box::new(move || {
        // SAFETY: the caller checked that `addr` is a live, 4-byte aligned word of pinned or
        // registered host memory; freeing pinned memory waits for the device's streams, so it
        // stays mapped while this wait runs. Other threads write it, hence the atomic view.
        let word = unsafe { std::sync::atomic::AtomicU32::from_ptr(addr as *mut u32) };
        let mut pause = std::time::Duration::from_micros(1);
        while !cond.holds(word.load(Ordering::Acquire) & mask, value & mask) {
            // A broken context stops waiting.
            device::usable(device)?;
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_micros(100));
        }
        counters::bump("stream_value_waits");
        Ok(())
    }));
}

// ---- events ----------------------------------------------------------------------------------

#[derive(Default)]
struct EventState {
    recorded: u64,
    completed: u64,
    /// The device of the stream of the latest record.
    device: Option<i32>,
}

/// A simulated event.
#[derive(Default)]
pub struct Event {
    state: Mutex<EventState>,
    cv: Condvar,
}

static EVENTS: LazyLock<Mutex<HashMap<usize, Arc<Event>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Creates an event; returns its handle.
pub fn event_create() -> usize {
    let e = Arc::new(Event::default());
    let handle = Arc::as_ptr(&e) as usize;
    EVENTS.lock().insert(handle, e);
    handle
}

/// Resolves an event handle (`hipErrorInvalidHandle` if unknown).
pub fn event_resolve(handle: usize) -> SimResult<Arc<Event>> {
    EVENTS
        .lock()
        .get(&handle)
        .cloned()
        .ok_or(SimError::INVALID_HANDLE)
}

/// Destroys an event. A marker still queued keeps the event's state alive until it runs.
pub fn event_destroy(handle: usize) -> SimResult<()> {
    EVENTS
        .lock()
        .remove(&handle)
        .map(|_| ())
        .ok_or(SimError::INVALID_HANDLE)
}

impl Event {
    /// Queues a marker for this event on `stream`.
    pub fn record(self: &Arc<Self>, stream: &Arc<Stream>) {
        let seq = {
            let mut st = self.state.lock();
            st.recorded += 1;
            st.device = Some(stream.device);
            st.recorded
        };
        let ev = Arc::clone(self);
        // Completed as the stream counts the marker done: a host that saw the event complete
        // finds the stream idle when nothing was queued after it, as on a GPU.
        stream.enqueue_with(
            Box::new(|| Ok(())),
            Some(Box::new(move || {
                let mut st = ev.state.lock();
                st.completed = st.completed.max(seq);
                ev.cv.notify_all();
            })),
        );
    }

    /// Waits until the marker of the latest record has run.
    pub fn synchronize(&self) {
        let mut st = self.state.lock();
        let target = st.recorded;
        while st.completed < target {
            self.cv.wait(&mut st);
        }
    }

    /// Whether the marker of the latest record has run.
    pub fn is_complete(&self) -> bool {
        let st = self.state.lock();
        st.completed >= st.recorded
    }

    /// The broken context's error of the device the event was last recorded on.
    pub fn usable(&self) -> SimResult<()> {
        self.state.lock().device.map_or(Ok(()), device::usable)
    }
}
