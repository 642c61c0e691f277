//! cuFile's statistics API (`cuFileSetStatsLevel`, `cuFileStatsStart/Stop/Reset`,
//! `cuFileGetStatsL1/2/3`) on the window over the engine's counters (`window.rs`).
//!
//! As in NVIDIA's library, `cuFileStatsStop` also sets the level to 0 (so the structures are
//! refused until a level is set again) and `cuFileStatsStart` at level 0 is an internal error.
//! The structures are handed out in the layout of the process's level (`version.rs`): the 1.18
//! one leaves the readv/writev counters out.

use std::ffi::c_int;

use crate::boundary_op;
use crate::driver::state;
use crate::engine::eng;
use crate::version::{self, Stats};
use crate::window::{current, Window};
use cufile_abi::{code, CUfileError_t};

fn need_open() -> Result<(), CUfileError_t> {
    if eng()?.is_open() {
        Ok(())
    } else {
        Err(CUfileError_t::op(code::DRIVER_NOT_INITIALIZED))
    }
}

#[no_mangle]
pub(crate) extern "C" fn cuFileSetStatsLevel(level: c_int) -> CUfileError_t {
    boundary_op(|| {
        if !(0..=3).contains(&level) {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let mut st = state();
        st.stats_level_set = Some(level as u64);
        st.stats.level = level as u64;
        Ok(())
    })
}

/// # Safety
/// `level` is NULL or valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetStatsLevel(level: *mut c_int) -> CUfileError_t {
    boundary_op(|| {
        if level.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        let st = state();
        let v = if e.is_open() {
            st.stats.level
        } else {
            st.stats_level_set
                .or(st.staged_size[0])
                .unwrap_or(st.own_size[0])
        };
        // SAFETY: non-NULL, writable per the C contract.
        unsafe { level.write(v.min(3) as c_int) };
        Ok(())
    })
}

fn window_op(f: fn(&mut Window, Vec<u64>)) -> CUfileError_t {
    boundary_op(|| {
        need_open()?;
        let now = current()?;
        f(&mut state().stats, now);
        Ok(())
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileStatsStart() -> CUfileError_t {
    boundary_op(|| {
        need_open()?;
        let now = current()?;
        let mut st = state();
        // Nothing to collect at level 0: NVIDIA's library answers an internal error.
        if st.stats.level == 0 {
            return Err(CUfileError_t::op(code::INTERNAL_ERROR));
        }
        st.stats.start(now);
        Ok(())
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileStatsStop() -> CUfileError_t {
    boundary_op(|| {
        need_open()?;
        let now = current()?;
        let mut st = state();
        st.stats.stop(now);
        // Stopping ends collection: the level is 0 until cuFileSetStatsLevel sets another.
        st.stats.level = 0;
        st.stats_level_set = Some(0);
        Ok(())
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileStatsReset() -> CUfileError_t {
    window_op(Window::reset)
}

/// Write statistics structure `which`, in the layout of the process's level, into `out`.
///
/// # Safety
/// `out` is NULL or valid for writes of that structure at that level.
unsafe fn fill(out: *mut u8, which: Stats) -> Result<(), CUfileError_t> {
    let needed = match which {
        Stats::L1 => 1,
        Stats::L2 => 2,
        Stats::L3 => 3,
    };
    // NULL is refused first, while closed too (as NVIDIA's library does).
    if out.is_null() {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    need_open()?;
    let now = current()?;
    let st = state();
    if st.stats.level < needed {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    let words = st.stats.view(&now);
    let full: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let bytes = version::level().stats_bytes(&full, which);
    // SAFETY: the structure at the process's level is writable per the caller's contract, and
    // `bytes` is exactly its size.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
    Ok(())
}

/// # Safety
/// `stats` is NULL or valid for writes of a `CUfileStatsLevel1_t` of the reported version.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetStatsL1(stats: *mut u8) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { fill(stats, Stats::L1) })
}

/// # Safety
/// `stats` is NULL or valid for writes of a `CUfileStatsLevel2_t` of the reported version.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetStatsL2(stats: *mut u8) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { fill(stats, Stats::L2) })
}

/// # Safety
/// `stats` is NULL or valid for writes of a `CUfileStatsLevel3_t` of the reported version.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileGetStatsL3(stats: *mut u8) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { fill(stats, Stats::L3) })
}
