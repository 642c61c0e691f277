//! Helpers shared by every exported C function: counting the call, catching panics at the C
//! boundary, recording HIP's last error, and checked out-pointers.

use std::ffi::{c_char, c_int, CStr};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

use crate::errors::{self, SimError, SimResult};
use crate::{counters, faults};

/// Runs the body of a HIP entry point: counts the call under `name`, turns a panic into
/// `hipErrorUnknown`, and records a failure as the thread's last error.
pub(crate) fn hip_call(name: &'static str, body: impl FnOnce() -> SimResult<()>) -> c_int {
    let code = guarded(name, SimError::UNKNOWN.0, || errors::code_of(body()));
    errors::record_hip_status(code);
    code
}

/// Runs the body of a CUDA entry point: counts the call under `name` and turns a panic into
/// `CUDA_ERROR_UNKNOWN`.
pub(crate) fn cu_call(name: &'static str, body: impl FnOnce() -> SimResult<()>) -> c_int {
    guarded(name, SimError::UNKNOWN.0, || errors::code_of(body()))
}

/// Counts a call under `name` (an empty name counts nothing) and runs `body`, returning
/// `on_panic` if it panics: a panic must never unwind into C.
pub(crate) fn guarded<T>(name: &'static str, on_panic: T, body: impl FnOnce() -> T) -> T {
    panic::catch_unwind(AssertUnwindSafe(|| {
        faults::init();
        if !name.is_empty() {
            counters::bump(name);
        }
        body()
    }))
    .unwrap_or(on_panic)
}

/// A checked, non-NULL out-pointer supplied by C code.
pub(crate) struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    /// Checks `p`; NULL is `hipErrorInvalidValue` / `CUDA_ERROR_INVALID_VALUE`.
    ///
    /// # Safety
    /// `p` must be NULL or valid and aligned for a write of `T` until the call returns.
    pub(crate) unsafe fn new(p: *mut T) -> SimResult<Self> {
        NonNull::new(p).map(Out).ok_or(SimError::INVALID_VALUE)
    }

    /// Like [`Out::new`] for an optional out-pointer: NULL gives `None`.
    ///
    /// # Safety
    /// As for [`Out::new`].
    pub(crate) unsafe fn optional(p: *mut T) -> Option<Self> {
        NonNull::new(p).map(Out)
    }

    /// Stores `v` through the pointer.
    pub(crate) fn set(&self, v: T) {
        // SAFETY: `new`'s contract: the pointer is valid and aligned for a write of T.
        unsafe { self.0.as_ptr().write(v) }
    }
}

/// Reads a NUL-terminated C string argument; NULL or non-UTF-8 gives `None`.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string valid for the call.
pub(crate) unsafe fn c_str<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: caller guarantees a valid NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}
