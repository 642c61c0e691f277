//! Statistics: what this process records about its I/O, the
//! shared-memory block other processes read, and the reader for other processes' blocks.
//!
//! What it owns:
//! - the process's statistics block ([`shm`]): a sealed memfd `"AISSTATS"` holding AMD's
//!   \[D\] `StatsV1` layout ([`layout`]) followed by our versioned extension; created lazily,
//!   once, and never freed;
//! - the recording API the I/O path calls ([`recorder`]);
//! - the server thread `hipfile-stats` handing the memfd to readers over the abstract socket
//!   `"\0AISSTATS<pid>"` ([`server`]);
//! - the client side: attach to another process, receive and decode its block ([`client`],
//!   [`snapshot`]) and the text and JSON reports ([`report`]). The `hipFileGetStats*`
//!   structures are filled from a [`Snapshot`] by the C layer, which owns every C type.
//!
//! Invariants: the block is written only with relaxed atomic adds/stores and read only with
//! relaxed atomic loads (so snapshots are not atomic across counters); nothing is recorded at
//! level 0 but the block still exists and is served; a failure of shared memory or of the
//! server never reaches the application (the block falls back to private memory, with one
//! warning in the log). `fork()` after the block exists is unsupported: the child records
//! nothing and does not serve (see [`shm`]).
//!
//! Lock order: none on the recording path (no lock at all). The block's `OnceLock` is taken
//! once at creation; the server's mutex only by [`server::start`] / [`server::shutdown`].
#![deny(unsafe_code)]

pub(crate) mod buckets;
pub(crate) mod client;
pub(crate) mod clock;
/// The block's layout lives with the other memory this process shares with others, in `sys`.
pub(crate) use crate::sys::stats_block as layout;
#[cfg(test)]
mod layout_tests;
pub mod recorder;
pub(crate) mod report;
pub mod server;
pub mod shm;
pub(crate) mod snapshot;

pub use snapshot::{Layout, Snapshot, Totals};

/// Create the statistics block and start its server now, if not done yet (otherwise the
/// first recorded event or `hipFileGetStats*` call does it). Never fails.
pub fn init() {
    let _ = shm::shared();
}

/// The statistics level of this process (0–3).
pub fn level() -> u64 {
    shm::shared().level()
}

/// Set the statistics level (0–3): a driver open applies `hipFileParamProfileStats`.
pub(crate) fn set_level(level: u64) {
    shm::set_level(level);
}

/// A snapshot of this process's own block.
pub fn snapshot_self() -> Snapshot {
    Snapshot::decode(shm::shared().stats().words()).expect("our own block always decodes")
}
