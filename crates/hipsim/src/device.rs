//! Devices and per-thread device state: HIP's current device and CUDA's primary contexts and
//! per-thread context stack.
//!
//! The HIP and CUDA notions of "current" are independent, as they would be with two different
//! real libraries: HIP's current device starts at 0 on every thread; a thread starts with no
//! current CUDA context.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::errors::{SimError, SimResult};
use crate::faults;

/// Size of the per-device tables (the largest possible `device_count`).
pub const MAX_DEVICES: usize = faults::MAX_DEVICES as usize;

/// Number of simulated devices right now.
pub fn count() -> i32 {
    faults::device_count()
}

/// Checks a device ordinal against the current device count.
pub fn check_ordinal(device: i32) -> SimResult<()> {
    let n = count();
    if n == 0 {
        Err(SimError::NO_DEVICE)
    } else if device < 0 || device >= n {
        Err(SimError::INVALID_DEVICE)
    } else {
        Ok(())
    }
}

thread_local! {
    static HIP_DEVICE: Cell<i32> = const { Cell::new(0) };
    static CTX_STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// HIP's current device of the calling thread, checked against the device count.
pub fn hip_current() -> SimResult<i32> {
    let d = HIP_DEVICE.with(Cell::get);
    check_ordinal(d)?;
    Ok(d)
}

/// `hipSetDevice`.
pub fn hip_set_current(device: i32) -> SimResult<()> {
    check_ordinal(device)?;
    HIP_DEVICE.with(|c| c.set(device));
    Ok(())
}

// ---- CUDA ------------------------------------------------------------------------------------

static CUDA_INITIALIZED: AtomicBool = AtomicBool::new(false);

/// `cuInit` ran.
pub fn cuda_init() {
    CUDA_INITIALIZED.store(true, Ordering::Release);
}

/// `CUDA_ERROR_NOT_INITIALIZED` unless `cuInit` ran.
pub fn cuda_require_init() -> SimResult<()> {
    if CUDA_INITIALIZED.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(SimError::NOT_INITIALIZED)
    }
}

/// One primary context per device. Its address is the `CUcontext` handle, stable for the
/// process lifetime.
struct PrimaryContext {
    retains: AtomicU32,
}

static PRIMARY: [PrimaryContext; MAX_DEVICES] = [const {
    PrimaryContext {
        retains: AtomicU32::new(0),
    }
}; MAX_DEVICES];

/// The `CUcontext` handle of `device`'s primary context (no range check).
pub fn primary_handle(device: i32) -> *mut c_void {
    let idx = usize::try_from(device).unwrap_or(0).min(MAX_DEVICES - 1);
    std::ptr::from_ref(&PRIMARY[idx]).cast_mut().cast()
}

/// The device of a `CUcontext` handle, if it is one of ours and the device exists.
pub fn context_device(handle: usize) -> Option<i32> {
    let idx = PRIMARY
        .iter()
        .position(|p| std::ptr::from_ref(p) as usize == handle)?;
    let device = idx as i32;
    check_ordinal(device).ok().map(|()| device)
}

/// `cuDevicePrimaryCtxRetain`.
pub fn retain_primary(device: i32) -> SimResult<*mut c_void> {
    cuda_require_init()?;
    check_ordinal(device).map_err(|_| SimError::INVALID_DEVICE)?;
    PRIMARY[device as usize]
        .retains
        .fetch_add(1, Ordering::Relaxed);
    Ok(primary_handle(device))
}

/// `cuDevicePrimaryCtxRelease`: drops one reference; the context itself stays usable.
pub fn release_primary(device: i32) -> SimResult<()> {
    cuda_require_init()?;
    check_ordinal(device).map_err(|_| SimError::INVALID_DEVICE)?;
    PRIMARY[device as usize]
        .retains
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1))
        .map(|_| ())
        .map_err(|_| SimError::INVALID_CONTEXT)
}

/// The calling thread's current context handle (0 = none).
pub fn current_context() -> usize {
    CTX_STACK.with(|s| s.borrow().last().copied().unwrap_or(0))
}

/// `cuCtxSetCurrent`: replaces the top of the stack; NULL pops it.
pub fn set_current_context(handle: usize) -> SimResult<()> {
    if handle != 0 && context_device(handle).is_none() {
        return Err(SimError::INVALID_CONTEXT);
    }
    CTX_STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.pop();
        if handle != 0 {
            s.push(handle);
        }
    });
    Ok(())
}

/// `cuCtxPushCurrent`.
pub fn push_context(handle: usize) -> SimResult<()> {
    if handle == 0 || context_device(handle).is_none() {
        return Err(SimError::INVALID_CONTEXT);
    }
    CTX_STACK.with(|s| s.borrow_mut().push(handle));
    Ok(())
}

/// `cuCtxPopCurrent`: the popped handle, or `CUDA_ERROR_INVALID_CONTEXT` on an empty stack.
pub fn pop_context() -> SimResult<usize> {
    CTX_STACK
        .with(|s| s.borrow_mut().pop())
        .ok_or(SimError::INVALID_CONTEXT)
}

/// The device of the calling thread's current context: `CUDA_ERROR_NOT_INITIALIZED` before
/// `cuInit`, `CUDA_ERROR_INVALID_CONTEXT` without a current context.
pub fn cuda_current_device() -> SimResult<i32> {
    cuda_require_init()?;
    context_device(current_context()).ok_or(SimError::INVALID_CONTEXT)
}
