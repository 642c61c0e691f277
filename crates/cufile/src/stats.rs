//! cuFile's statistics API on the engine's counters (`hipFileGetStatsL1/2/3`).
//!
//! The engine counts every I/O of the process; this file keeps cuFile's window over them: the
//! counters shown are those since the driver opened or the last `cuFileStatsReset`, frozen by
//! `cuFileStatsStop` and resumed by `cuFileStatsStart` (the stopped interval is left out).
//! As in NVIDIA's library, `cuFileStatsStop` also sets the level to 0 (so the structures are
//! refused until a level is set again) and `cuFileStatsStart` at level 0 is an internal error.
//! Rates, averages and GPU identities are shown as the engine computes them, never
//! subtracted. The window is kept in the 1.19 layout (hipFile's level 1 is cuFile's first 512
//! bytes, followed by the readv/writev counters kept here; level 2 adds the engine's
//! histograms, level 3 its per-GPU records, the same 248-byte layout) and handed out in the
//! layout of the process's level (`version.rs`): the 1.18 one leaves the readv/writev
//! counters out.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::abi::*;
use crate::boundary_op;
use crate::driver::{cu, eng, is_open, state};
use crate::hip_abi::HIP_STATS_L1_SIZE;
use crate::version::{self, Stats};

const WORDS: usize = STATS_L3_SIZE / 8;

/// Readv/writev counters (cuFile-only fields): ok/err of each, then bytes.
static READV_OK: AtomicU64 = AtomicU64::new(0);
static READV_ERR: AtomicU64 = AtomicU64::new(0);
static WRITEV_OK: AtomicU64 = AtomicU64::new(0);
static WRITEV_ERR: AtomicU64 = AtomicU64::new(0);
static READV_BYTES: AtomicU64 = AtomicU64::new(0);
static WRITEV_BYTES: AtomicU64 = AtomicU64::new(0);

/// Count one vectored call.
pub fn count_vectored(write: bool, result: isize) {
    let (ok, err, bytes) = if write {
        (&WRITEV_OK, &WRITEV_ERR, &WRITEV_BYTES)
    } else {
        (&READV_OK, &READV_ERR, &READV_BYTES)
    };
    if result >= 0 {
        ok.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(result as u64, Ordering::Relaxed);
    } else {
        err.fetch_add(1, Ordering::Relaxed);
    }
}

/// Words of the level-3 layout that are rates, averages, "last" values or identities: shown
/// as they are, never differenced.
fn is_gauge(word: usize) -> bool {
    const L1: [usize; 20] = [
        14, 15, 16, 17, 18, 19, 54, 55, 56, 57, 58, 59, 62, 63, 70, 71, 72, 73, 74, 75,
    ];
    if L1.contains(&word) || word == 142 {
        return true;
    }
    if word >= 143 {
        // CUfilePerGpuStats_t: uuid (0, 1), read bw (3), read utilisation (4), write bw
        // (16), write utilisation (17).
        return matches!((word - 143) % (PER_GPU_SIZE / 8), 0 | 1 | 3 | 4 | 16 | 17);
    }
    false
}

/// The engine's level 3 re-laid into cuFile's level-3 layout, as words.
fn current() -> Result<Vec<u64>, CUfileError_t> {
    let e = eng()?;
    let hip = e.stats(3).map_err(cu)?;
    let mut bytes = vec![0u8; STATS_L3_SIZE];
    bytes[..HIP_STATS_L1_SIZE].copy_from_slice(&hip[..HIP_STATS_L1_SIZE]);
    // readv_ops, writev_ops (ok, err each), readv_bytes, writev_bytes.
    let vectored = [
        &READV_OK,
        &READV_ERR,
        &WRITEV_OK,
        &WRITEV_ERR,
        &READV_BYTES,
        &WRITEV_BYTES,
    ];
    for (i, c) in vectored.iter().enumerate() {
        let at = STATS_L1_READV_OFFSET + 8 * i;
        bytes[at..at + 8].copy_from_slice(&c.load(Ordering::Relaxed).to_ne_bytes());
    }
    // Histograms, num_gpus and the per-GPU records follow at the same relative places.
    bytes[STATS_L1_SIZE..].copy_from_slice(&hip[HIP_STATS_L1_SIZE..]);
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect())
}

/// cuFile's view of the counters.
#[derive(Default)]
pub struct Window {
    pub level: u64,
    baseline: Vec<u64>,
    frozen: Option<Vec<u64>>,
}

impl Window {
    /// The driver opened: counting starts now.
    pub fn opened(&mut self, level: u64) {
        self.level = level;
        self.baseline = current().unwrap_or_else(|_| vec![0; WORDS]);
        self.frozen = None;
    }

    pub fn closed(&mut self) {
        self.frozen = None;
    }

    fn view(&self, now: &[u64]) -> Vec<u64> {
        let shown = self.frozen.as_deref().unwrap_or(now);
        shown
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if is_gauge(i) {
                    v
                } else {
                    v.saturating_sub(self.baseline.get(i).copied().unwrap_or(0))
                }
            })
            .collect()
    }

    fn start(&mut self, now: Vec<u64>) {
        if let Some(frozen) = self.frozen.take() {
            for (i, b) in self.baseline.iter_mut().enumerate() {
                if !is_gauge(i) {
                    *b = b.saturating_add(now[i].saturating_sub(frozen[i]));
                }
            }
        }
    }

    fn stop(&mut self, now: Vec<u64>) {
        if self.frozen.is_none() {
            self.frozen = Some(now);
        }
    }

    fn reset(&mut self, now: Vec<u64>) {
        if self.frozen.is_some() {
            self.frozen = Some(now.clone());
        }
        self.baseline = now;
    }
}

fn need_open() -> Result<(), CUfileError_t> {
    if is_open(eng()?) {
        Ok(())
    } else {
        Err(CUfileError_t::op(code::DRIVER_NOT_INITIALIZED))
    }
}

#[no_mangle]
pub extern "C" fn cuFileSetStatsLevel(level: c_int) -> CUfileError_t {
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
pub unsafe extern "C" fn cuFileGetStatsLevel(level: *mut c_int) -> CUfileError_t {
    boundary_op(|| {
        if level.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        let st = state();
        let v = if is_open(e) {
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
pub extern "C" fn cuFileStatsStart() -> CUfileError_t {
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
pub extern "C" fn cuFileStatsStop() -> CUfileError_t {
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
pub extern "C" fn cuFileStatsReset() -> CUfileError_t {
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
pub unsafe extern "C" fn cuFileGetStatsL1(stats: *mut u8) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { fill(stats, Stats::L1) })
}

/// # Safety
/// `stats` is NULL or valid for writes of a `CUfileStatsLevel2_t` of the reported version.
#[no_mangle]
pub unsafe extern "C" fn cuFileGetStatsL2(stats: *mut u8) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { fill(stats, Stats::L2) })
}

/// # Safety
/// `stats` is NULL or valid for writes of a `CUfileStatsLevel3_t` of the reported version.
#[no_mangle]
pub unsafe extern "C" fn cuFileGetStatsL3(stats: *mut u8) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe { fill(stats, Stats::L3) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_are_the_rate_and_identity_words() {
        assert!(is_gauge(14)); // read_bw_bytes_per_sec at byte 112
        assert!(!is_gauge(0)); // read_ops.ok
        assert!(!is_gauge(12)); // read_bytes at 96
        assert!(is_gauge(142)); // num_gpus
        assert!(is_gauge(143) && is_gauge(144)); // GPU 0 uuid
        assert!(!is_gauge(145)); // GPU 0 read_bytes
        assert!(is_gauge(143 + 31)); // GPU 1 uuid
    }

    #[test]
    fn window_differences_stops_and_resumes() {
        let mut w = Window {
            level: 1,
            baseline: vec![10; WORDS],
            frozen: None,
        };
        let now = vec![15; WORDS];
        assert_eq!(w.view(&now)[0], 5);
        assert_eq!(w.view(&now)[14], 15, "a rate is shown as it is");
        w.stop(vec![20; WORDS]);
        assert_eq!(w.view(&[99; WORDS])[0], 10, "frozen at the stop");
        w.start(vec![30; WORDS]);
        assert_eq!(
            w.view(&[31; WORDS])[0],
            11,
            "the stopped interval is left out"
        );
        w.reset(vec![40; WORDS]);
        assert_eq!(w.view(&[42; WORDS])[0], 2);
    }
}
