//! In-process statistics: `hipFileGetStatsL1/L2/L3`.
//!
//! Each call takes a fresh snapshot of this process's statistics block and fills the
//! caller's structure; what goes where is documented in `stats_levels.rs` (all
//! backends, Host included, count in the totals; the L2 KiB histograms are filled from our
//! size buckets; L3 is indexed by device ordinal). The block always exists here (in private
//! memory if shared memory failed), so "statistics unavailable" (`hipFileInternalError`)
//! only comes from an internal panic. The driver need not be open.
#![allow(non_snake_case)]

use super::abi::*;
use super::stats_levels::{l1, l2, l3};
use super::{boundary, Out};
use crate::stats;

/// Fill `*out` with `value` (NULL → `hipFileInvalidValue`).
///
/// # Safety
/// `out` is NULL or valid for writes of a `T`.
unsafe fn fill<T>(out: *mut T, value: impl FnOnce() -> T) -> hipFileError_t {
    // SAFETY: NULL or writable, per the caller's contract.
    match unsafe { Out::new(out, "NULL statistics") } {
        Ok(out) => {
            out.write(value());
            hipFileError_t::SUCCESS
        }
        Err(_) => hipFileError_t::op(hipFileInvalidValue),
    }
}

/// `hipFileGetStatsL1`: fills `*stats` with the level-1 counters of this process. NULL →
/// `hipFileInvalidValue`; otherwise `hipFileSuccess`.
///
/// # Safety
/// `stats` is NULL or valid for writes of a `hipFileStatsLevel1_t`.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetStatsL1(stats: *mut hipFileStatsLevel1_t) -> hipFileError_t {
    // SAFETY: forwarded from this function's contract.
    boundary(hipFileError_t::op(hipFileInternalError), || unsafe {
        fill(stats, || l1(&stats::snapshot_self()))
    })
}

/// `hipFileGetStatsL2`: level 1 plus the read and write size histograms. NULL →
/// `hipFileInvalidValue`; otherwise `hipFileSuccess`.
///
/// # Safety
/// `stats` is NULL or valid for writes of a `hipFileStatsLevel2_t`.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetStatsL2(stats: *mut hipFileStatsLevel2_t) -> hipFileError_t {
    // SAFETY: forwarded from this function's contract.
    boundary(hipFileError_t::op(hipFileInternalError), || unsafe {
        fill(stats, || l2(&stats::snapshot_self()))
    })
}

/// `hipFileGetStatsL3`: level 2 plus per-GPU counters. NULL → `hipFileInvalidValue`;
/// otherwise `hipFileSuccess`.
///
/// # Safety
/// `stats` is NULL or valid for writes of a `hipFileStatsLevel3_t`.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetStatsL3(stats: *mut hipFileStatsLevel3_t) -> hipFileError_t {
    // SAFETY: forwarded from this function's contract.
    boundary(hipFileError_t::op(hipFileInternalError), || unsafe {
        fill(stats, || l3(&stats::snapshot_self()))
    })
}
