//! The `hipsim*` control functions that tests (and `hipfile`'s simulator detection) call:
//! counters, fault injection, a stream's hardware queue, a device's architecture, repairing a
//! broken device, and the simulator marker.
//!
//! These are not counted as calls.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int};

use crate::ffi::{c_str, guarded};
use crate::{counters, device, faults, stream};

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
    guarded("", 0, || {
        // SAFETY: caller contract (NULL or a NUL-terminated string).
        unsafe { c_str(name) }
            .and_then(faults::get_by_name)
            .unwrap_or(0)
    })
}

/// `int64_t hipsimStreamHwQueue(void *stream)`: the index of the hardware queue of its device that
/// a stream runs on (see [`crate::stream`]; the NULL and legacy handles name the legacy default
/// stream of HIP's current device, on queue 0; the per-thread handle the calling thread's
/// per-thread stream there, made and placed as by a HIP call if the thread never named it);
/// -2 for a stream with a queue of its own, -1 for an unknown handle or a current device that
/// does not exist.
#[no_mangle]
pub unsafe extern "C" fn hipsimStreamHwQueue(handle: *mut std::ffi::c_void) -> i64 {
    guarded("", -1, || {
        match stream::resolve(handle as usize, stream::Api::Hip, device::hip_current) {
            Ok(s) => s
                .hw_queue()
                .map_or(-2, |q| i64::try_from(q).unwrap_or(i64::MAX)),
            Err(_) => -1,
        }
    })
}

/// `int hipsimSetGcnArch(int device, const char *arch)`: sets the architecture name a device
/// reports (`gcnArchName`, e.g. `"gfx90a:sramecc-:xnack+"`), for `device` 0..16 or every
/// device for -1; NULL gives back the default (`HIPSIM_GCN_ARCH`, else
/// `"gfx942:sramecc+:xnack-"`). 0 on success, -1 for another ordinal or a name that is not
/// `gfx<processor>[:sramecc±][:xnack±]` (see [`crate::device::parse_target`]).
///
/// `arch` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hipsimSetGcnArch(device: c_int, arch: *const c_char) -> c_int {
    guarded("", -1, || {
        let name = if arch.is_null() {
            None
        } else {
            // SAFETY: caller contract.
            match unsafe { c_str(arch) } {
                Some(n) => Some(n),
                None => return -1,
            }
        };
        if device::set_gcn_arch(device, name) {
            0
        } else {
            -1
        }
    })
}

/// `int hipsimRepairDevice(int device)`: clears the sticky error of a device whose context broke
/// (a kernel faulted, see [`crate::device`]): 1 if it had one, 0 if not, -1 for an ordinal
/// outside 0..16. A test's way back after a deliberate fault; no runtime offers one short of
/// resetting the device, which the simulator does not model (memory and streams are kept).
/// Repair a device only once its streams are idle (synchronised): a kernel still stopping
/// would break the context again.
#[no_mangle]
pub unsafe extern "C" fn hipsimRepairDevice(device: c_int) -> c_int {
    guarded("", -1, || {
        if usize::try_from(device).is_ok_and(|d| d < device::MAX_DEVICES) {
            c_int::from(device::repair(device))
        } else {
            -1
        }
    })
}

/// `int hipsimIsSimulator(void)`: always 1.
#[no_mangle]
pub unsafe extern "C" fn hipsimIsSimulator() -> c_int {
    1
}
