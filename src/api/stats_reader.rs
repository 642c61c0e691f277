//! The statistics items of [`super::stats`] that are functions: this process's own block, the
//! text report, and how the snapshot's arrays are indexed.

use crate::stats::{self, buckets, layout, report, Snapshot};
use crate::vocab::{Direction, Refusal};

pub use crate::stats::buckets::BUCKETS;
pub use crate::stats::layout::REFUSAL_SLOTS;

/// This process's statistics level (0–3; 0 records nothing).
pub fn level() -> u64 {
    stats::level()
}

/// A snapshot of this process's own statistics block.
pub fn own_snapshot() -> Snapshot {
    stats::snapshot_self()
}

/// The text report of a snapshot: AMD's `ais-stats` report, then our extension section.
pub fn text_report(s: &Snapshot) -> String {
    report::text(s)
}

/// The histogram bucket of a byte count (index into every `[_; BUCKETS]` array).
pub fn bucket(bytes: u64) -> usize {
    buckets::bucket(bytes)
}

/// The report's row label of bucket `i`, in KiB (`"0-4"`, ..., `"65536-..."`).
pub fn bucket_label(i: usize) -> String {
    buckets::label(i)
}

/// The index of a direction in the snapshot's `[_; 2]` arrays: 0 = read, 1 = write.
pub fn direction_index(dir: Direction) -> usize {
    layout::dir_index(dir)
}

/// The slot of a refusal reason in the extension's `refusals[backend]` arrays.
pub fn refusal_slot(r: Refusal) -> usize {
    layout::refusal_slot(r)
}

/// The refusal reason a slot counts; `None` for a slot this reader does not know (a newer
/// writer's).
pub fn refusal_at(slot: usize) -> Option<Refusal> {
    layout::REFUSALS.get(slot).copied()
}

/// GiB/s as the report computes it: `bytes / 2^30` over `time_us / 10^6` seconds; 0
/// without time.
pub fn bandwidth_gib_s(bytes: u64, time_us: u64) -> f64 {
    report::bandwidth_gib_s(bytes, time_us)
}

/// Average latency in µs as the report computes it: `time_us / count`; 0 without I/O.
pub fn latency_us(time_us: u64, count: u64) -> f64 {
    report::latency_us(time_us, count)
}
