//! The `hipsim*` control functions that tests (and `hipfile`'s simulator detection) call:
//! counters, fault injection, and the simulator marker.
//!
//! These are not counted as calls.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int};

use crate::ffi::{c_str, guarded};
use crate::{counters, faults};

/// `uint64_t hipsimCounter(const char *name)`: the current value of a counter or gauge
/// (unknown or NULL name: 0). See [`crate::counters`] for the names.
///
/// `name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hipsimCounter(name: *const c_char) -> u64 {
    // SAFETY: caller contract.
    guarded("", 0, || unsafe { c_str(name) }.map_or(0, counters::get))
}

/// `void hipsimResetCounters(void)`: zeroes every counter (gauges keep describing live state;
/// the pinned-memory peak restarts from the live value).
#[no_mangle]
pub unsafe extern "C" fn hipsimResetCounters() {
    guarded("", (), counters::reset);
}

/// `int hipsimSetFault(const char *name, int64_t value)`: 0 on success, -1 for an unknown name
/// (or a `device_count` outside 0..=16). Value 0 clears a fault. See [`crate::faults`].
///
/// `name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hipsimSetFault(name: *const c_char, value: i64) -> c_int {
    guarded("", -1, || {
        // SAFETY: caller contract.
        match unsafe { c_str(name) } {
            Some(n) if faults::set_by_name(n, value) => 0,
            _ => -1,
        }
    })
}

/// `int64_t hipsimGetFault(const char *name)`: the current value of a setting (unknown or NULL
/// name: 0).
///
/// `name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hipsimGetFault(name: *const c_char) -> i64 {
    // SAFETY: caller contract.
    guarded("", 0, || {
        unsafe { c_str(name) }
            .and_then(faults::get_by_name)
            .unwrap_or(0)
    })
}

/// `int hipsimIsSimulator(void)`: always 1.
#[no_mangle]
pub unsafe extern "C" fn hipsimIsSimulator() -> c_int {
    1
}
