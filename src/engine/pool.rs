//! The engine's worker threads: a fixed set of named threads (`hipfile-io-N`) taking boxed
//! jobs from one queue. Shutdown closes the queue and joins the threads. A job that panics
//! fails only itself: the panic is caught here and the worker keeps serving.
#![deny(unsafe_code)]

use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

/// A unit of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

/// A fixed-size pool of worker threads.
pub struct WorkerPool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl WorkerPool {
    /// Start `n` workers. If a thread cannot be started, the ones already running are shut
    /// down and the error is returned.
    pub fn new(n: usize) -> std::io::Result<WorkerPool> {
        Self::named("hipfile-io", n)
    }

    /// [`WorkerPool::new`] with threads named `<prefix>-N`.
    pub fn named(prefix: &str, n: usize) -> std::io::Result<WorkerPool> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                closed: false,
            }),
            ready: Condvar::new(),
        });
        let mut pool = WorkerPool {
            shared,
            threads: Vec::with_capacity(n),
        };
        for i in 0..n {
            let shared = pool.shared.clone();
            // On error `pool` is dropped, which closes the queue and joins what started.
            let t = std::thread::Builder::new()
                .name(format!("{prefix}-{i}"))
                .spawn(move || worker(&shared))?;
            pool.threads.push(t);
        }
        Ok(pool)
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Queue a job.
    pub fn spawn(&self, job: Job) {
        self.shared.queue.lock().jobs.push_back(job);
        self.shared.ready.notify_one();
    }
}

fn worker(shared: &Shared) {
    loop {
        let job = {
            let mut q = shared.queue.lock();
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    break j;
                }
                if q.closed {
                    return;
                }
                shared.ready.wait(&mut q);
            }
        };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
            tracing::error!(target: "hipfile", "an I/O job panicked; its request failed");
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.queue.lock().closed = true;
        self.shared.ready.notify_all();
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            // A pool dropped from one of its own jobs cannot join itself; that thread exits
            // when its job returns because the queue is closed.
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_jobs_survives_panics_and_joins() {
        let pool = WorkerPool::new(3).unwrap();
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
}
