//! The one worker mechanism of the library: a fixed set of named threads taking boxed jobs from
//! one queue (the pool's channel). Every pool of threads the library runs is one of these: the
//! engine's helpers (`hipfile-io-N`), the batch workers (`hipfile-batch-N`), the helpers of the
//! staging kernel's transfers (`hipfile-stage-N`) and stream-ordered I/O's workers
//! (`hipfile-stream-N`).
//!
//! - [`Builder::build`] returns a `Result`: a thread that cannot be started is an error, never a
//!   panic, and the threads already started are shut down first (the half-started pool is a
//!   [`WorkerPool`] from the first thread on, so its `Drop` is the guard).
//! - Shutdown closes the channel: the workers run every job already queued, then exit, and are
//!   joined. A job given to a closed pool is dropped unrun, so what it owns is released (the
//!   engine's jobs count themselves out in their destructors).
//! - A job that panics fails only itself: the panic is caught here and the worker keeps serving.
//! - [`Spawner`] lets a job queue another one on its own pool (stream-ordered I/O's watcher hands
//!   the watch on that way) without owning the pool.
//!
//! Lock order: the queue's mutex is a leaf; no job runs under it.
#![deny(unsafe_code)]

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

/// A unit of work.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// The pool's channel: the jobs not taken yet, and whether it is closed.
struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

struct Channel {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Channel {
    /// Queue `job`; a closed channel drops it (unrun) and says so.
    fn send(&self, job: Job) -> bool {
        let mut q = self.queue.lock();
        if q.closed {
            drop(q);
            drop(job);
            return false;
        }
        q.jobs.push_back(job);
        drop(q);
        self.ready.notify_one();
        true
    }

    fn close(&self) {
        self.queue.lock().closed = true;
        self.ready.notify_all();
    }
}

/// How a pool is to be started: the threads' name prefix and their number.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Builder {
    prefix: &'static str,
    threads: usize,
}

impl Builder {
    /// `n` threads (0 is a pool that runs nothing: [`Lazy`] makes none).
    pub(crate) fn threads(self, n: usize) -> Builder {
        Builder { threads: n, ..self }
    }

    /// Start the threads, named `<prefix>-N`. If one cannot be started, those already running
    /// are shut down (closed and joined) and the error is returned.
    pub(crate) fn build(self) -> std::io::Result<WorkerPool> {
        let mut pool = WorkerPool {
            channel: Arc::new(Channel {
                queue: Mutex::new(Queue {
                    jobs: VecDeque::new(),
                    closed: false,
                }),
                ready: Condvar::new(),
            }),
            threads: Vec::with_capacity(self.threads),
        };
        for i in 0..self.threads {
            let channel = Arc::clone(&pool.channel);
            // On error `pool` is dropped: the guard of the half-started pool.
            let t = std::thread::Builder::new()
                .name(format!("{}-{i}", self.prefix))
                .spawn(move || serve(&channel))?;
            pool.threads.push(t);
        }
        Ok(pool)
    }
}

/// A fixed-size pool of worker threads.
pub(crate) struct WorkerPool {
    channel: Arc<Channel>,
    threads: Vec<JoinHandle<()>>,
}

impl WorkerPool {
    /// A pool whose threads are named `<prefix>-N` (one thread unless told otherwise).
    pub(crate) fn builder(prefix: &'static str) -> Builder {
        Builder { prefix, threads: 1 }
    }

    /// Number of workers.
    pub(crate) fn len(&self) -> usize {
        self.threads.len()
    }

    /// Queue a job.
    pub(crate) fn spawn(&self, job: Job) {
        self.channel.send(job);
    }

    /// A handle that queues jobs on this pool, for as long as it is open.
    pub(crate) fn spawner(&self) -> Spawner {
        Spawner {
            channel: Arc::clone(&self.channel),
        }
    }
}

/// Queues jobs on a pool without owning it: once the pool shut down, what it is given is
/// dropped unrun.
#[derive(Clone)]
pub(crate) struct Spawner {
    channel: Arc<Channel>,
}

impl Spawner {
    /// Queue a job; `false` (the job dropped unrun) once the pool shut down.
    pub(crate) fn spawn(&self, job: Job) -> bool {
        self.channel.send(job)
    }
}

/// One worker: jobs in order until the channel is closed and empty.
fn serve(channel: &Channel) {
    loop {
        let job = {
            let mut q = channel.queue.lock();
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    break j;
                }
                if q.closed {
                    return;
                }
                channel.ready.wait(&mut q);
            }
        };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
            tracing::error!(target: "hipfile", "a worker's job panicked; its operation failed");
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.channel.close();
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            // A pool dropped from one of its own jobs cannot join itself; that thread exits
            // when its job returns because the channel is closed.
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

/// A pool started on first use (no thread before a request needs one), or never: with no
/// threads to start, or when starting them failed (logged once; the callers then work without
/// it).
pub(crate) struct Lazy {
    builder: Builder,
    /// The log line of a failed start: what the pool is, and what happens without it.
    what: &'static str,
    otherwise: &'static str,
    pool: OnceLock<Option<WorkerPool>>,
}

impl Lazy {
    /// The pool `builder` makes, started by the first [`Lazy::get`]; `what` it is and what
    /// happens `otherwise` say, in the log, why work runs without it.
    pub(crate) const fn new(builder: Builder, what: &'static str, otherwise: &'static str) -> Lazy {
        Lazy {
            builder,
            what,
            otherwise,
            pool: OnceLock::new(),
        }
    }

    /// The pool, started now if it was not; `None` without threads.
    pub(crate) fn get(&self) -> Option<&WorkerPool> {
        self.pool
            .get_or_init(|| {
                if self.builder.threads == 0 {
                    return None;
                }
                self.builder
                    .build()
                    .map_err(|e| {
                        tracing::warn!(target: "hipfile", "cannot start {} ({e}); {}", self.what, self.otherwise)
                    })
                    .ok()
            })
            .as_ref()
    }

    /// Shut the pool down if it started (its queued jobs run first).
    pub(crate) fn shut_down(&mut self) {
        drop(self.pool.take());
    }
}

/// Jobs given to a pool and not ended, for whoever must wait for them: counted in before they
/// are queued, out when they end (a job dropped unrun counts itself out too, from its
/// destructor).
#[derive(Default)]
pub(crate) struct Outstanding {
    n: Mutex<usize>,
    none: Condvar,
}

impl Outstanding {
    /// `n` more jobs.
    pub(crate) fn add(&self, n: usize) {
        *self.n.lock() += n;
    }

    /// One job ended.
    pub(crate) fn done(&self) {
        let mut n = self.n.lock();
        *n -= 1;
        if *n == 0 {
            self.none.notify_all();
        }
    }

    /// Wait until none is left.
    pub(crate) fn wait_none(&self) {
        let mut n = self.n.lock();
        while *n > 0 {
            self.none.wait(&mut n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_jobs_survives_panics_and_joins() {
        let pool = WorkerPool::builder("hipfile-test")
            .threads(3)
            .build()
            .unwrap();
        assert_eq!(pool.len(), 3);
        let n = Arc::new(AtomicUsize::new(0));
        pool.spawn(Box::new(|| panic!("job panics on purpose")));
        for _ in 0..100 {
            let n = n.clone();
            pool.spawn(Box::new(move || {
                n.fetch_add(1, Ordering::SeqCst);
            }));
        }
        drop(pool); // drains the queue before the workers exit
        assert_eq!(n.load(Ordering::SeqCst), 100);
    }

    #[test]
    fn threads_are_named_by_the_prefix() {
        let pool = WorkerPool::builder("hipfile-test")
            .threads(2)
            .build()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..2 {
            let tx = tx.clone();
            pool.spawn(Box::new(move || {
                let name = std::thread::current().name().map(str::to_owned);
                tx.send(name).unwrap();
            }));
        }
        let mut names: Vec<_> = rx.iter().take(2).flatten().collect();
        names.sort();
        names.dedup();
        assert!(
            names
                .iter()
                .all(|n| n == "hipfile-test-0" || n == "hipfile-test-1"),
            "{names:?}"
        );
    }

    /// Counts itself when dropped (run or not).
    struct Dropped(Arc<AtomicUsize>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_closed_pool_drops_what_it_is_given_unrun() {
        let pool = WorkerPool::builder("hipfile-test")
            .threads(1)
            .build()
            .unwrap();
        let spawner = pool.spawner();
        let ran = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicUsize::new(0));
        let job = |ran: &Arc<AtomicUsize>, dropped: &Arc<AtomicUsize>| -> Job {
            let (ran, guard) = (ran.clone(), Dropped(dropped.clone()));
            Box::new(move || {
                let _guard = guard;
                ran.fetch_add(1, Ordering::SeqCst);
            })
        };
        assert!(spawner.spawn(job(&ran, &dropped)));
        drop(pool);
        assert_eq!(
            (ran.load(Ordering::SeqCst), dropped.load(Ordering::SeqCst)),
            (1, 1),
            "queued before the close: run"
        );
        assert!(!spawner.spawn(job(&ran, &dropped)));
        assert_eq!(
            (ran.load(Ordering::SeqCst), dropped.load(Ordering::SeqCst)),
            (1, 2),
            "after the close: dropped, not run"
        );
    }

    #[test]
    fn a_lazy_pool_starts_on_first_use_and_never_without_threads() {
        let mut lazy = Lazy::new(
            WorkerPool::builder("hipfile-test").threads(2),
            "test workers",
            "none",
        );
        assert!(lazy.pool.get().is_none(), "nothing before the first use");
        assert_eq!(lazy.get().map(WorkerPool::len), Some(2));
        lazy.shut_down();
        assert!(lazy.pool.get().is_none());
        let none = Lazy::new(
            WorkerPool::builder("hipfile-test").threads(0),
            "test workers",
            "none",
        );
        assert!(none.get().is_none());
    }
}
