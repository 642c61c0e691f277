//! One transfer of several chunks while its participants run it: its plan's chunk size, the
//! chunks nobody took yet ([`Claims`]), what the others achieved ([`Outcome`]), where its
//! buffers come from (a stage's serials, a fill), and how many helpers still run.
//!
//! Participants (the calling thread and helper jobs on the worker pool) claim chunks one at a
//! time from one atomic counter, so a slow chunk never holds up the others and no per-chunk
//! allocation happens.
#![deny(unsafe_code)]

use std::sync::Arc;

use super::lend::bounce::Fill;
use super::lend::{Chunk, Claims};
use super::outcome::Outcome;
use super::plan::Plan;
use super::pool::Outstanding;
use super::Transfer;

/// A transfer of several chunks, shared by its participants.
pub(super) struct Chunked {
    pub(super) t: Transfer,
    /// Bytes per chunk.
    pub(super) chunk: usize,
    claims: Claims,
    pub(super) outcome: Outcome,
    /// Device transfers of a stream's staging kernel: the serial before the first chunk's
    /// (chunk `i` is serial `stage_base + i + 1`).
    pub(super) stage_base: Option<u32>,
    /// Bounce buffers the pool lacked for this transfer, made at once by its participants.
    pub(super) fill: Option<Arc<Fill>>,
    /// Helpers queued and not done.
    helpers: Outstanding,
}

impl Chunked {
    /// `t` cut as `plan` says; a write's file was `size_before` bytes long.
    pub(super) fn new(
        t: Transfer,
        plan: &Plan,
        size_before: u64,
        stage_base: Option<u32>,
        fill: Option<Arc<Fill>>,
    ) -> Chunked {
        Chunked {
            t,
            chunk: plan.chunk,
            claims: Claims::new(t.size, plan.chunk),
            outcome: Outcome::new(t.dir, plan.chunk, plan.chunks, size_before),
            stage_base,
            fill,
            helpers: Outstanding::default(),
        }
    }

    /// Claim the next chunk still worth doing, or `None` when the transfer is finished or
    /// failed.
    pub(super) fn claim(&self) -> Option<Chunk> {
        loop {
            if self.outcome.failed() {
                return None;
            }
            let c = self.claims.next()?;
            // Chunks wholly beyond a short chunk (end of file) have nothing to do.
            if c.off < self.outcome.short_end() {
                return Some(c);
            }
        }
    }

    /// Staged transfers: the next chunk while the transfer has not failed, also past the end
    /// of the file (every serial is posted, with nothing to copy there).
    pub(super) fn claim_staged(&self) -> Option<Chunk> {
        if self.outcome.failed() {
            return None;
        }
        self.claims.next()
    }

    /// A chunk nobody took, once every participant is done (the transfer failed first).
    pub(super) fn unclaimed(&self) -> Option<Chunk> {
        self.claims.next()
    }

    /// The serial of chunk `c` of a staged transfer that starts after `base`.
    pub(super) fn serial_of(&self, base: u32, c: &Chunk) -> u32 {
        base.wrapping_add((c.off / self.chunk) as u32 + 1)
    }

    /// `n` helpers are about to be queued.
    pub(super) fn helpers_start(&self, n: usize) {
        self.helpers.add(n);
    }

    /// A helper is done (or was dropped unrun).
    pub(super) fn helper_done(&self) {
        self.helpers.done();
    }

    /// Wait until every helper is done: the application's memory stays borrowed until then.
    pub(super) fn wait_helpers(&self) {
        self.helpers.wait_none();
    }
}
