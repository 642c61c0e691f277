//! The statistics' stopwatch: how long one I/O spent in its backend, read twice on every call
//! (elapsed microseconds from a steady clock; target T9 counts its cost).
//!
//! Where the kernel itself keeps `CLOCK_MONOTONIC` on the TSC (x86_64 with the current
//! clocksource `tsc`, which the kernel only selects when the TSC is invariant and synchronised
//! across CPUs), the stopwatch reads the TSC directly: one instruction instead of a vDSO call,
//! converted to microseconds with a factor calibrated once against `CLOCK_MONOTONIC`. Anywhere
//! else (another clocksource, another architecture, a failed calibration, or
//! `HIPFILE_STATS_TSC=false`) it reads `CLOCK_MONOTONIC`. The choice is made by [`calibrate`] before the first recording and never
//! changes afterwards, so a start and its end always come from the same clock.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Microseconds per TSC tick in 32.32 fixed point; 0 while the stopwatch uses
/// `CLOCK_MONOTONIC`.
static TSC_US_PER_TICK: AtomicU64 = AtomicU64::new(0);

/// How long the calibration watches both clocks.
const CALIBRATION_NS: u64 = 200_000;

/// A start reading, with the clock it was taken on.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// TSC ticks, or nanoseconds of `CLOCK_MONOTONIC`.
    at: u64,
    /// Microseconds per tick (32.32 fixed point), or 0 for `CLOCK_MONOTONIC`.
    per_tick: u64,
}

/// Start the stopwatch.
#[inline(always)]
pub(crate) fn now() -> Start {
    let per_tick = TSC_US_PER_TICK.load(Relaxed);
    let at = if per_tick != 0 {
        tsc()
    } else {
        crate::sys::monotonic_ns()
    };
    Start { at, per_tick }
}

/// Whole microseconds since `start` (0 if the clock went backwards).
#[inline(always)]
pub(crate) fn elapsed_us(start: Start) -> u64 {
    if start.per_tick != 0 {
        let ticks = tsc().saturating_sub(start.at);
        ((u128::from(ticks) * u128::from(start.per_tick)) >> 32) as u64
    } else {
        crate::sys::monotonic_ns().saturating_sub(start.at) / 1000
    }
}

/// Choose the stopwatch's clock; called once, before anything is recorded.
/// `HIPFILE_STATS_TSC=false` keeps it on `CLOCK_MONOTONIC`.
pub(crate) fn calibrate() {
    if crate::config::env().stats_tsc == Some(false) {
        return;
    }
    if let Some(per_tick) = tsc_us_per_tick() {
        TSC_US_PER_TICK.store(per_tick, Relaxed);
    }
}

/// The TSC's microseconds per tick (32.32 fixed point) when the kernel keeps time on it.
fn tsc_us_per_tick() -> Option<u64> {
    if !cfg!(target_arch = "x86_64") || !kernel_clocksource_is_tsc() {
        return None;
    }
    // Bracket each clock reading with TSC readings taken right next to it.
    let (c0, t0) = (tsc(), crate::sys::monotonic_ns());
    let mut t1 = t0;
    while t1.saturating_sub(t0) < CALIBRATION_NS {
        t1 = crate::sys::monotonic_ns();
    }
    let c1 = tsc();
    per_tick_from(c1.checked_sub(c0)?, t1 - t0)
}

/// 32.32 fixed-point microseconds per tick from `ticks` counted over `ns` nanoseconds;
/// `None` for a TSC slower than 1 MHz or faster than 100 GHz (not a TSC we understand).
fn per_tick_from(ticks: u64, ns: u64) -> Option<u64> {
    if ns == 0 {
        return None;
    }
    let hz = u128::from(ticks) * 1_000_000_000 / u128::from(ns);
    if !(1_000_000..=100_000_000_000).contains(&hz) {
        return None;
    }
    u64::try_from((1_000_000u128 << 32) / hz).ok()
}

fn kernel_clocksource_is_tsc() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}

use crate::sys::tsc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_factor() {
        // 3 GHz: one tick is 1/3000 µs; 2^32 / 3000 = 1_431_655.76 → 1_431_655.
        assert_eq!(per_tick_from(3_000_000, 1_000_000), Some(1_431_655));
        // 3,000,000 ticks at 3 GHz are 1000 µs (999.99… truncated).
        let us = (3_000_000u128 * 1_431_655) >> 32;
        assert_eq!(us, 999);
        assert_eq!(per_tick_from(0, 1_000_000), None, "no ticks: not a TSC");
        assert_eq!(per_tick_from(1, 0), None);
    }

    #[test]
    fn the_stopwatch_measures_a_sleep() {
        calibrate();
        let start = now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let us = elapsed_us(start);
        assert!(
            (20_000..1_000_000).contains(&us),
            "{us} µs for a 20 ms sleep"
        );
    }
}
