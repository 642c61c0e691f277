//! Batch job scheduling: the jobs that run a batch context's operations on the engine's batch
//! workers (`hipfile-batch-N`), how many one context gets, and how contexts share the workers.
//! What an operation is and how it runs is the context's business (`driver/batch.rs`), which it
//! hands the jobs as [`Work`].
//!
//! A submission queues its operations on its context's [`Queue`] and starts the jobs the
//! context lacks ([`Queue::start_jobs`]: at most [`batch_jobs`] per context, never more than the
//! operations queued). A job takes operations from the queue, oldest first, whichever
//! submission brought them, until the queue is empty: an application that keeps operations in
//! flight by resubmitting as it reaps keeps its jobs and their pipelines going. After
//! [`OPS_PER_TURN`] operations it gives its worker to the next job in the pool's queue and
//! queues its continuation behind it, so contexts share the workers.
//!
//! Every job is counted twice: in its context's queue (so that a submission knows how many run)
//! and in the owner's [`Jobs`] (so that the driver's close waits until no job holds its
//! session). A job counts itself out of both when it ends, also by panicking or dropped unrun.
#![deny(unsafe_code)]

use std::collections::VecDeque;
use std::sync::Arc;

use super::pool::Outstanding;
use super::{overlap, Engine};

/// Operations a batch job takes before it gives its worker to the next job in the pool's queue
/// (its continuation goes to the back): jobs of several contexts share the batch workers, and
/// a context whose application keeps resubmitting would otherwise hold them for as long as it
/// does. Each turn ends with the job's reads in flight finished, a pipeline restart of about
/// one operation in this many. Ending a turn only when another job waits measured the same
/// (docs/decisions.md, "A context's jobs take work from every submission").
pub(crate) const OPS_PER_TURN: usize = 32;

/// How many jobs one batch context runs at once, with `workers` batch workers and a budget of
/// `buffers` bounce buffers: one per worker, but no more than can hold three quarters of the
/// budget when each holds a full overlap (with the defaults, 16 workers and 64 buffers: 12),
/// so a synchronous call finds buffers meanwhile; never none.
pub(crate) fn batch_jobs(workers: usize, buffers: usize) -> usize {
    workers.min(buffers * 3 / (4 * overlap::SLOTS)).max(1)
}

/// A context's operations no job took yet, oldest first, and its jobs (queued or running).
/// Kept under the context's lock, with its operations.
pub(crate) struct Queue<T> {
    items: VecDeque<T>,
    jobs: usize,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            items: VecDeque::new(),
            jobs: 0,
        }
    }
}

/// What a job finds in its context's queue.
#[derive(Debug)]
pub(crate) enum Take<R> {
    /// An operation to run.
    Op(R),
    /// Nothing queued; the job's reads in flight are to be finished before it looks again.
    Empty,
    /// Nothing queued and nothing in flight: the job took itself out of the count.
    Retired,
}

/// How a job's turn ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    /// The queue was empty: the job took itself out of the context's count.
    Retired,
    /// [`OPS_PER_TURN`] operations done and more queued: a continuation runs the rest.
    Yield,
}

impl<T> Queue<T> {
    /// Queue an operation.
    pub(crate) fn push(&mut self, item: T) {
        self.items.push_back(item);
    }

    /// Forget every queued operation (they were canceled).
    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }

    /// Whether nothing is queued.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The context's jobs, queued or running.
    #[cfg(test)]
    pub(crate) fn jobs(&self) -> usize {
        self.jobs
    }

    /// Jobs to start for `queued` operations just queued so that the context has at most
    /// `parallelism`, counted in: under the lock a retiring job counts itself out under, so
    /// operations queued as the last job leaves get a new one.
    pub(crate) fn start_jobs(&mut self, queued: usize, parallelism: usize) -> usize {
        let n = queued.min(parallelism.saturating_sub(self.jobs));
        self.jobs += n;
        n
    }

    /// For a job: the oldest queued operation that `pick` takes (it passes over the others:
    /// canceled or reaped). When none is left, a job holding reads in flight (`holding`) is
    /// told to finish them first; one holding none retires (counted out).
    pub(crate) fn take<R>(
        &mut self,
        holding: bool,
        mut pick: impl FnMut(T) -> Option<R>,
    ) -> Take<R> {
        while let Some(item) = self.items.pop_front() {
            if let Some(r) = pick(item) {
                return Take::Op(r);
            }
        }
        if holding {
            return Take::Empty;
        }
        self.jobs -= 1;
        Take::Retired
    }

    /// For a job whose turn is over (nothing in flight): retire (counted out) if nothing is
    /// queued, else yield to a continuation (still counted).
    pub(crate) fn end_turn(&mut self) -> Turn {
        if self.items.is_empty() {
            self.jobs -= 1;
            Turn::Retired
        } else {
            Turn::Yield
        }
    }

    /// A job leaves without retiring through [`Queue::take`] or [`Queue::end_turn`] (it
    /// panicked, or was dropped unrun).
    pub(crate) fn leave(&mut self) {
        self.jobs -= 1;
    }
}

/// What batch jobs work through: one context's operations, and what they run with.
pub(crate) trait Work: Clone + Send + 'static {
    /// The engine whose batch workers run the jobs.
    fn engine(&self) -> &Engine;

    /// One turn: take operations from the context's queue ([`Queue::take`]) and run them until
    /// the queue is empty (retired) or `budget` were taken ([`Queue::end_turn`]).
    fn turn(&self, budget: usize) -> Turn;

    /// The job leaves the context's count without ending its turn there ([`Queue::leave`]).
    fn leave(&self);
}

/// The batch jobs of one owner (the driver) that are queued or running, each holding its
/// [`Work`]: the owner's close waits until none is left, so that what the work holds (the
/// driver's session, its engine with the streams and pinned buffers the jobs used) goes with
/// that close.
#[derive(Default)]
pub(crate) struct Jobs {
    live: Outstanding,
}

impl Jobs {
    /// Wait until no batch job is queued or running.
    pub(crate) fn wait_none(&self) {
        self.live.wait_none();
    }

    /// Count `n` jobs on `work` in, already counted in its context's queue
    /// ([`Queue::start_jobs`]): waited for from now on. They run when [`Counted::spawn`] is
    /// called, which the caller does once it holds no lock (a job runs on the calling thread
    /// when the batch workers cannot start).
    pub(crate) fn count_in<W: Work>(self: &Arc<Self>, work: &W, n: usize) -> Counted<W> {
        self.live.add(n);
        Counted(
            (0..n)
                .map(|_| Job {
                    work: Some(work.clone()),
                    live: Arc::clone(self),
                    counted: true,
                })
                .collect(),
        )
    }
}

/// Jobs counted in and not yet spawned; dropped unspawned, each counts itself out.
#[must_use = "counted jobs run only when spawned"]
pub(crate) struct Counted<W: Work>(Vec<Job<W>>);

impl<W: Work> Counted<W> {
    /// Run the jobs on the batch workers.
    pub(crate) fn spawn(self) {
        for job in self.0 {
            job.spawn();
        }
    }
}

/// One batch job: counted out of its context and of the owner's live jobs when it ends (also by
/// panicking, or dropped unrun), after it let go of its work.
struct Job<W: Work> {
    work: Option<W>,
    live: Arc<Jobs>,
    /// Whether the job is still in its context's count (it takes itself out when it retires).
    counted: bool,
}

impl<W: Work> Job<W> {
    fn spawn(self) {
        let work = self.work.clone().expect("a job to spawn holds its work");
        work.engine().spawn_batch(Box::new(move || self.run()));
    }

    fn run(mut self) {
        let Some(work) = self.work.clone() else {
            return;
        };
        match work.turn(OPS_PER_TURN) {
            Turn::Retired => self.counted = false,
            Turn::Yield => {
                // The continuation takes over this job's place in both counts; the live count
                // goes up before this job's drop takes it down, so a close waiting for it
                // never sees zero in between.
                self.live.live.add(1);
                self.counted = false;
                Job {
                    work: Some(work),
                    live: self.live.clone(),
                    counted: true,
                }
                .spawn();
            }
        }
    }
}

impl<W: Work> Drop for Job<W> {
    fn drop(&mut self) {
        if let Some(work) = self.work.take() {
            if self.counted {
                work.leave();
            }
        }
        self.live.live.done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_jobs_leave_a_quarter_of_the_bounce_budget() {
        // The default budget (64 buffers of 4 MiB) with 16 workers: 12 jobs of 4 reads hold 48.
        assert_eq!(batch_jobs(16, 64), 12);
        assert_eq!(
            batch_jobs(8, 64),
            8,
            "fewer workers than that: one job each"
        );
        assert_eq!(batch_jobs(16, 256), 16);
        assert_eq!(batch_jobs(16, 8), 1, "a small budget: one job");
        assert_eq!(batch_jobs(16, 1), 1, "never none");
    }

    fn queue(items: &[u32]) -> Queue<u32> {
        let mut q = Queue::default();
        for &i in items {
            q.push(i);
        }
        q
    }

    fn taken(t: Take<u32>) -> Option<u32> {
        match t {
            Take::Op(i) => Some(i),
            Take::Empty | Take::Retired => None,
        }
    }

    #[test]
    fn a_queue_hands_out_the_oldest_its_picker_takes_and_counts_jobs() {
        let mut q = queue(&[1, 2, 3, 4]);
        assert_eq!(q.start_jobs(4, 3), 3, "no more than the parallelism");
        assert_eq!(q.start_jobs(4, 3), 0);
        assert_eq!(taken(q.take(false, Some)), Some(1));
        // The picker passes over 2 (canceled, say): 3 is next.
        assert_eq!(taken(q.take(false, |i| (i != 2).then_some(i))), Some(3));
        assert_eq!(q.end_turn(), Turn::Yield, "4 is still queued");
        assert_eq!(q.jobs(), 3);
        assert_eq!(taken(q.take(true, Some)), Some(4));
        assert!(q.is_empty());
        assert!(matches!(q.take(true, Some), Take::Empty), "reads in flight");
        assert_eq!(q.jobs(), 3);
        assert!(matches!(q.take(false, Some), Take::Retired));
        assert_eq!(q.end_turn(), Turn::Retired);
        q.leave();
        assert_eq!(q.jobs(), 0);
        assert_eq!(q.start_jobs(1, 3), 1, "one operation, one job");
        q.push(5);
        q.clear();
        assert!(q.is_empty());
    }
}
