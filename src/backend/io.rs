//! Running a backend: the one place that records an I/O's statistics and retries a fastpath
//! failure (AMD's `Backend::io`, final, around the protected `_io_impl`).
//!
//! [`io`] is the only caller of [`Backend::submit`]: `submit` takes a [`Seal`], which only
//! this module can make, so no other code runs a backend's own work without its statistics
//! and its retry, and no backend can replace what `io` does (it is not a trait method). A
//! batch job's overlapped read ([`overlapped`]) is the same call cut in two: it is recorded
//! here when it begins and when [`Begun::finish`] ends it.
#![deny(unsafe_code)]

use super::{Backend, Score};
use crate::engine::overlap::{Overlap, Pending, Started};
use crate::engine::Transfer;
use crate::error::{Error, Result};
use crate::request::Request;
use crate::stats::recorder::{self, IoCall};
use crate::vocab::{BackendKind, Refusal};

/// What [`Backend::submit`] takes, and only [`io`] can make: proof that the call is recorded.
pub(crate) struct Seal(());

/// Run `req` on `backend`: its statistics recorded, and a failure the backend hands on
/// ([`Backend::is_fallback_eligible`]) resubmitted to its registered fallback when the
/// fallback's own score accepts the request (counted once as a retry; that outcome is final).
/// `declined` is the fastpath's refusal when `backend` serves a request the fastpath declined
/// (recorded with the I/O). Generic, so the caller's `match` on the winner inlines it whole
/// (target T9).
#[inline(always)]
pub(crate) fn io<B: Backend + ?Sized>(
    backend: &B,
    req: &Request<'_>,
    declined: Option<Refusal>,
) -> Result<usize> {
    // Not through a closure: the compiler kept that one out of line (target T9).
    let call = begin(backend.kind(), req, declined);
    let r = end(call, backend.submit(req, Seal(())));
    match r {
        Err(e) => match backend.fallback() {
            Some(f) if backend.is_fallback_eligible(&e) => retry(f, *req, e),
            _ => Err(e),
        },
        ok => ok,
    }
}

/// The resubmission of a failed request to `fallback`, when its own score accepts it; its
/// outcome is final (the fallback's `submit`, never its retry).
#[cold]
#[inline(never)]
fn retry(fallback: &dyn Backend, req: Request<'_>, e: Error) -> Result<usize> {
    // By value: the hot path then never needs the request in memory.
    let req = &req;
    if let Score::Refuse(_) = fallback.score(req) {
        return Err(e);
    }
    tracing::debug!(target: "hipfile", "{e}; retrying on the {}", fallback.kind().name());
    recorder::fallback_retry();
    let call = begin(fallback.kind(), req, None);
    end(call, fallback.submit(req, Seal(())))
}

/// What a batch job's request did on its overlap ([`super::Backends::begin`]).
pub(crate) enum Begun {
    /// Its copy to the device is in flight on the overlap; [`Begun::finish`] gives the result.
    Copying {
        /// The read in flight.
        read: Pending,
        /// Its statistics record, completed when it finishes.
        call: IoCall,
    },
    /// Nothing in flight: this is its result (it failed, or had nothing to move).
    Done(Result<usize>),
    /// Not started: finish a read in flight on the overlap first, then begin it again.
    Busy,
    /// Not started, and not for an overlap: release the overlap and run it synchronously
    /// ([`super::Backends::run`]).
    Synchronous,
}

impl Begun {
    /// The result of a request that began: waits for its copy (on `overlap`, where it began).
    pub(crate) fn finish(self, overlap: &mut Overlap<'_>) -> Result<usize> {
        match self {
            Begun::Copying { read, call } => end(call, overlap.finish(read)),
            Begun::Done(r) => r,
            Begun::Busy | Begun::Synchronous => {
                Err(Error::Internal("a request that did not begin was finished"))
            }
        }
    }
}

/// Start `backend`'s transfer `t` of `req` in `slot` of `overlap` (where [`Overlap::ready`]
/// put it): its `pread` now, its copy in flight. Recorded as a call of `backend` from now
/// until [`Begun::finish`]. The backends that run this way have no fallback of their own, so
/// nothing is retried, as [`io`] would not.
pub(crate) fn overlapped<B: Backend + ?Sized>(
    backend: &B,
    req: &Request<'_>,
    declined: Option<Refusal>,
    overlap: &mut Overlap<'_>,
    slot: usize,
    t: &Transfer,
) -> Begun {
    debug_assert!(
        backend.fallback().is_none(),
        "an overlapped read is never retried"
    );
    let call = begin(backend.kind(), req, declined);
    match overlap.start(slot, t) {
        Started::Copying(read) => Begun::Copying { read, call },
        Started::Done(r) => Begun::Done(end(call, r)),
    }
}

/// Whether offset, size and address meet the fastpath's alignment,
/// for the statistics' unaligned counters.
#[inline(always)]
fn dio_aligned(req: &Request<'_>) -> bool {
    req.file.fastpath_aligned(
        req.file_offset,
        req.size as u64,
        req.mem_addr().get() as u64,
    )
}

/// The statistics record of one call of `kind` on `req`, started now.
#[inline(always)]
fn begin(kind: BackendKind, req: &Request<'_>, declined: Option<Refusal>) -> IoCall {
    IoCall {
        dir: req.dir,
        backend: kind,
        device: req.buf.device,
        requested: req.size as u64,
        aligned: kind == BackendKind::Fastpath || dio_aligned(req),
        declined,
        recording: recorder::start(),
    }
}

/// Record the outcome of `call` and pass it on.
#[inline(always)]
fn end(call: IoCall, r: Result<usize>) -> Result<usize> {
    recorder::io_call(call, r.as_ref().ok().map(|&n| n as u64));
    r
}
