//! Running one [`Transfer`]: a request of at most one chunk straight through on the calling
//! thread; a larger one planned from what the engine knows ([`plan`](super::plan)), then shared
//! between the calling thread and helper jobs on the worker pool ([`participate`]). The calling
//! thread waits until every helper has finished before it returns, which is what keeps the
//! application's memory borrowed for exactly the call; the result is the transfer's
//! [`Outcome`](super::outcome::Outcome).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::chunked::Chunked;
use super::file_io::warm_start;
use super::lend::{Chunk, Lent};
use super::participate::{device_chunk, host_chunk, participate};
use super::plan::{Ask, Facts, Route};
use super::Stage;
use super::{Inner, PartWay, Transfer};
use crate::error::{Error, Result};
use crate::sys;
use crate::vocab::{Direction, MemRef};

/// Counts a helper out when it finishes, even by panicking, or when its job is dropped unrun.
/// It releases its reference to the engine *before* signalling, so that once the calling
/// thread returns no helper holds the engine any more (closing the driver then frees its
/// buffers at once).
struct HelperGuard {
    inner: Option<Arc<Inner>>,
    xfer: Arc<Chunked>,
}

impl Drop for HelperGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.xfer
                .outcome
                .fail(Error::Internal("panic in an I/O worker"));
        }
        drop(self.inner.take());
        self.xfer.helper_done();
    }
}

/// Run `t` to completion. A request of at most one chunk (small requests, targets T4/T9)
/// runs straight through on the calling thread: no plan, no shared state, no claiming; this
/// part is inlined into the caller so that the common small call is one flat function.
#[inline(always)]
pub(crate) fn execute(inner: &Arc<Inner>, t: Transfer) -> Result<usize> {
    if inner.settings.single(t.size) {
        return single_chunk(inner, &t);
    }
    execute_chunked(inner, t)
}

/// What the planner asks the engine: the page cache (one `cachestat`) and the worker pool
/// (started by the question).
struct Asked<'a> {
    inner: &'a Inner,
    t: &'a Transfer,
}

impl Ask for Asked<'_> {
    fn warm(&mut self) -> Option<bool> {
        warm_start(self.t)
    }

    fn workers(&mut self) -> usize {
        self.inner.workers().map_or(0, |w| w.len())
    }
}

/// A transfer of several chunks: planned, then shared between the calling thread and the
/// helpers the plan gives it.
#[inline(never)]
fn execute_chunked(inner: &Arc<Inner>, t: Transfer) -> Result<usize> {
    let running = Running::enter(&inner.chunked_running);
    let size_before = if t.dir == Direction::Write {
        sys::io::file_size(t.fd).unwrap_or(u64::MAX)
    } else {
        u64::MAX
    };
    let stage = match t.target {
        MemRef::Device { .. } => inner.stage.as_deref(),
        MemRef::Host { .. } => None,
    };
    let route = match (t.target, stage) {
        (MemRef::Host { .. }, _) => Route::Host,
        (MemRef::Device { .. }, Some(s)) => Route::Stage { slots: s.slots() },
        (MemRef::Device { .. }, None) => Route::Bounce,
    };
    let facts = Facts {
        size: t.size,
        dir: t.dir,
        route,
        alone: running.alone,
    };
    let plan = inner.settings.plan(facts, &mut Asked { inner, t: &t });
    let fill = match plan.fill {
        0 => None,
        n => inner.bounce.fill(n),
    };
    let stage_base = stage.map(|s| s.reserve(plan.chunks));
    let xfer = Chunked::new(t, &plan, size_before, stage_base, fill);
    if plan.helpers == 0 {
        // The calling thread alone: the transfer's state lives on its stack.
        participate_guarded(inner, &xfer);
        post_unclaimed(stage, &xfer);
        return xfer.outcome.result(&xfer.t);
    }
    let xfer = Arc::new(xfer);
    xfer.helpers_start(plan.helpers);
    let workers = inner.workers().expect("helpers > 0 implies workers");
    for _ in 0..plan.helpers {
        // Made before the job, so that a job dropped unrun counts its helper out too.
        let guard = HelperGuard {
            inner: Some(inner.clone()),
            xfer: xfer.clone(),
        };
        workers.spawn(Box::new(move || {
            let guard = guard;
            participate(guard.inner.as_ref().expect("set"), &guard.xfer);
        }));
    }
    participate_guarded(inner, &xfer);
    xfer.wait_helpers();
    post_unclaimed(stage, &xfer);
    xfer.outcome.result(&xfer.t)
}

/// Counts a request of several chunks in while it runs; `alone` when it was the only one.
struct Running<'a> {
    count: &'a AtomicUsize,
    alone: bool,
}

impl<'a> Running<'a> {
    fn enter(count: &'a AtomicUsize) -> Running<'a> {
        let before = count.fetch_add(1, Ordering::AcqRel);
        Running {
            count,
            alone: before == 0,
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Staged transfers: once every participant is done, an empty segment for each chunk nobody
/// took (the transfer failed first), so the stream's kernel passes their serials. They are the
/// last chunks of the transfer (chunks are handed out in order), so no participant waited for
/// them.
fn post_unclaimed(stage: Option<&Stage>, xfer: &Chunked) {
    if let (Some(stage), Some(base)) = (stage, xfer.stage_base) {
        while let Some(c) = xfer.unclaimed() {
            // A failure means the kernel is gone: nothing will wait for the rest.
            if stage.post_empty(xfer.serial_of(base, &c)).is_err() {
                break;
            }
        }
    }
}

/// A request of at most one chunk, served on the calling thread. Its copy is synchronous and
/// names the device address, so the current device need not change (a small request pays
/// no device calls).
#[inline(always)]
fn single_chunk(inner: &Inner, t: &Transfer) -> Result<usize> {
    let r = match t.target {
        _ if t.size == 0 => Ok(0),
        MemRef::Host { addr } => host_chunk(t, Lent::new(addr, t.size), Chunk::whole(t.size)),
        MemRef::Device { addr, .. } => {
            let mut bounce = inner.bounce.get()?;
            let r = device_chunk(inner, t, addr, &mut bounce.as_mut_slice()[..t.size], 0);
            bounce.release();
            r
        }
    };
    let n = match r {
        Ok(n) => n,
        // One chunk is written in order: what reached the file is a prefix, reported as a
        // short write (pwrite's rule) where the caller reports counts; nothing lies beyond it
        // to cut back.
        Err(f) if f.done > 0 && t.part_way == PartWay::Prefix => f.done,
        Err(f) => return Err(f.error),
    };
    if t.dir == Direction::Write && t.sync {
        sys::io::fdatasync(t.fd).map_err(Error::Os)?;
    }
    Ok(n)
}

/// The calling thread's share, under `catch_unwind`: if it panics the transfer fails, and the
/// caller still waits for the helpers, which may be using the application's memory.
fn participate_guarded(inner: &Inner, xfer: &Chunked) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| participate(inner, xfer))).is_err()
    {
        xfer.outcome.fail(Error::Internal(
            "panic on the calling thread's share of a request",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_counts_requests_and_knows_the_first() {
        let n = AtomicUsize::new(0);
        let a = Running::enter(&n);
        assert!(a.alone);
        let b = Running::enter(&n);
        assert!(!b.alone);
        assert_eq!(n.load(Ordering::Acquire), 2);
        drop(a);
        drop(b);
        assert_eq!(n.load(Ordering::Acquire), 0);
        assert!(Running::enter(&n).alone);
    }
}
