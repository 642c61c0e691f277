//! cuFile's window over the engine's statistics counters.
//!
//! The engine counts every I/O of the process; cuFile shows the counters since the driver
//! opened or the last `cuFileStatsReset`, frozen by `cuFileStatsStop` and resumed by
//! `cuFileStatsStart` (the stopped interval is left out). Rates, averages and GPU identities
//! are shown as the engine computes them, never subtracted. The window is kept in the 1.19
//! layout (hipFile's level 1 is cuFile's first 512 bytes, followed by the readv/writev counters
//! kept here; level 2 adds the engine's histograms, level 3 its per-GPU records, the same
//! 248-byte layout); `stats.rs` hands it out in the layout of the process's level.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::{cu, eng};
use crate::hip_abi::HIP_STATS_L1_SIZE;
use cufile_abi::{
    CUfileError_t, PER_GPU_SIZE, STATS_L1_READV_OFFSET, STATS_L1_SIZE, STATS_L3_SIZE,
};

pub(crate) const WORDS: usize = STATS_L3_SIZE / 8;

/// Readv/writev counters (cuFile-only fields): ok/err of each, then bytes.
static READV_OK: AtomicU64 = AtomicU64::new(0);
static READV_ERR: AtomicU64 = AtomicU64::new(0);
static WRITEV_OK: AtomicU64 = AtomicU64::new(0);
static WRITEV_ERR: AtomicU64 = AtomicU64::new(0);
static READV_BYTES: AtomicU64 = AtomicU64::new(0);
static WRITEV_BYTES: AtomicU64 = AtomicU64::new(0);

/// Count one vectored call.
pub(crate) fn count_vectored(write: bool, result: isize) {
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
pub(crate) fn current() -> Result<Vec<u64>, CUfileError_t> {
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
pub(crate) struct Window {
    pub(crate) level: u64,
    baseline: Vec<u64>,
    frozen: Option<Vec<u64>>,
}

impl Window {
    /// The driver opened: counting starts now.
    pub(crate) fn opened(&mut self, level: u64) {
        self.level = level;
        self.baseline = current().unwrap_or_else(|_| vec![0; WORDS]);
        self.frozen = None;
    }

    pub(crate) fn closed(&mut self) {
        self.frozen = None;
    }

    pub(crate) fn view(&self, now: &[u64]) -> Vec<u64> {
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

    pub(crate) fn start(&mut self, now: Vec<u64>) {
        if let Some(frozen) = self.frozen.take() {
            for (i, b) in self.baseline.iter_mut().enumerate() {
                if !is_gauge(i) {
                    *b = b.saturating_add(now[i].saturating_sub(frozen[i]));
                }
            }
        }
    }

    pub(crate) fn stop(&mut self, now: Vec<u64>) {
        if self.frozen.is_none() {
            self.frozen = Some(now);
        }
    }

    pub(crate) fn reset(&mut self, now: Vec<u64>) {
        if self.frozen.is_some() {
            self.frozen = Some(now.clone());
        }
        self.baseline = now;
    }
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
