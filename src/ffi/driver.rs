//! Driver lifetime, version, use count, error strings and driver properties.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_uint};

use super::abi::*;
use super::{boundary, boundary_op, error, Out};
use crate::config::params::{BoolParam, SizeParam};
use crate::driver::driver;
use crate::error::Error;

/// `hipFileDriverOpen`: increments the use count. Always `hipFileSuccess`.
#[no_mangle]
pub extern "C" fn hipFileDriverOpen() -> hipFileError_t {
    boundary_op(|| {
        driver().open();
        Ok(())
    })
}

/// `hipFileDriverClose`: decrements the use count; at zero every file and buffer registration
/// is dropped. `hipFileDriverNotInitialized` when the count is already zero.
#[no_mangle]
pub extern "C" fn hipFileDriverClose() -> hipFileError_t {
    boundary_op(|| driver().close())
}

/// `hipFileUseCount`: the driver's use count (`-1` only on an internal failure).
#[no_mangle]
pub extern "C" fn hipFileUseCount() -> i64 {
    boundary(-1, || driver().use_count())
}

/// `hipFileGetVersion`: writes the API level 0.5.0 through each non-NULL pointer.
///
/// # Safety
/// Each pointer is NULL or valid for a write of an `unsigned`.
#[no_mangle]
pub unsafe extern "C" fn hipFileGetVersion(
    major: *mut c_uint,
    minor: *mut c_uint,
    patch: *mut c_uint,
) -> hipFileError_t {
    boundary_op(|| {
        for (p, v) in [
            (major, HIPFILE_VERSION_MAJOR),
            (minor, HIPFILE_VERSION_MINOR),
            (patch, HIPFILE_VERSION_PATCH),
        ] {
            if !p.is_null() {
                // SAFETY: non-NULL and valid per the C contract.
                unsafe { p.write(v) };
            }
        }
        Ok(())
    })
}

/// `hipFileGetOpErrorString`: a static description of `status` (never NULL).
#[no_mangle]
pub extern "C" fn hipFileGetOpErrorString(status: hipFileOpError_t) -> *const c_char {
    boundary(c"Internal GPU IO library error".as_ptr(), || {
        error::op_error_string(status).as_ptr()
    })
}

/// `hipFileDriverGetProperties`: the driver's limits and features (cuFile's semantics; the
/// sizes are in KiB). NULL → `hipFileInvalidValue`. With the driver closed it succeeds, as
/// cuFile does, and describes what the next open would use (staged values, environment,
/// defaults).
///
/// # Safety
/// `props` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileDriverGetProperties(
    props: *mut hipFileDriverProps_t,
) -> hipFileError_t {
    boundary_op(|| {
        // SAFETY: NULL or writable, per the C contract.
        let out = unsafe { Out::new(props, "NULL properties") }?;
        let d = driver();
        let v = d.params();
        let fastpath = d.rt().gpu_direct().is_some();
        let bit = |on: bool, b: c_int| if on { 1u32 << b } else { 0 };
        let p = hipFileDriverProps_t {
            nvfs: hipFileDriverPropsNvfs {
                major_version: HIPFILE_VERSION_MAJOR,
                minor_version: HIPFILE_VERSION_MINOR,
                poll_thresh_size: v.size(SizeParam::PollThresholdSizeKb),
                max_direct_io_size: v.size(SizeParam::MaxDirectIoSizeKb),
                // GPU-direct storage through the runtime's entry points serves local NVMe.
                driver_status_flags: bit(fastpath, hipFileNVMeSupported),
                driver_control_flags: bit(v.flag(BoolParam::UsePollMode), hipFileUsePollMode)
                    | bit(v.flag(BoolParam::AllowCompatMode), hipFileAllowCompatMode),
            },
            // Batch and stream-ordered I/O work, on every backend.
            feature_flags: bit(true, hipFileParallelIOSupported)
                | bit(true, hipFileBatchIOSupported)
                | bit(true, hipFileStreamsSupported),
            max_device_cache_size: v.size(SizeParam::MaxDeviceCacheSizeKb),
            per_buffer_cache_size: v.size(SizeParam::PerBufferCacheSizeKb),
            max_device_pinned_mem_size: v.size(SizeParam::MaxDevicePinnedMemSizeKb),
            max_batch_io_count: v.size(SizeParam::IoBatchSize) as c_uint,
            max_batch_io_timeout_msecs: v.size(SizeParam::BatchIoTimeoutMs).min(u64::from(u32::MAX))
                as c_uint,
        };
        out.write(p);
        Ok(())
    })
}

/// `hipFileDriverSetPollMode`: records poll mode and its threshold (KiB) for later I/O; while
/// the driver is closed the values are staged for the next open.
#[no_mangle]
pub extern "C" fn hipFileDriverSetPollMode(
    poll: bool,
    poll_threshold_size: usize,
) -> hipFileError_t {
    boundary_op(|| {
        driver().set_property(
            |c, _| {
                c.params.bools[BoolParam::UsePollMode as usize] = poll;
                c.params.sizes[SizeParam::PollThresholdSizeKb as usize] =
                    poll_threshold_size as u64;
            },
            |s| {
                s.bools[BoolParam::UsePollMode as usize] = Some(poll);
                s.sizes[SizeParam::PollThresholdSizeKb as usize] = Some(poll_threshold_size as u64);
            },
        );
        Ok(())
    })
}

/// `hipFileDriverSetMaxDirectIOSize`: records the largest direct I/O (KiB); staged while the
/// driver is closed. 0 → `hipFileInvalidValue`.
#[no_mangle]
pub extern "C" fn hipFileDriverSetMaxDirectIOSize(max_direct_io_size: usize) -> hipFileError_t {
    boundary_op(|| {
        if max_direct_io_size == 0 {
            return Err(Error::InvalidValue("zero size"));
        }
        set_size(SizeParam::MaxDirectIoSizeKb, max_direct_io_size);
        Ok(())
    })
}

/// `hipFileDriverSetMaxCacheSize`: the pinned bounce-buffer budget (KiB) for later I/O;
/// staged while the driver is closed. Below 4 KiB → `hipFileInvalidValue`.
#[no_mangle]
pub extern "C" fn hipFileDriverSetMaxCacheSize(max_cache_size: usize) -> hipFileError_t {
    boundary_op(|| {
        if !SizeParam::MaxDeviceCacheSizeKb.valid(max_cache_size as u64) {
            return Err(Error::InvalidValue("cache size below 4 KiB"));
        }
        driver().set_property(
            |c, engine| {
                c.params.sizes[SizeParam::MaxDeviceCacheSizeKb as usize] = max_cache_size as u64;
                c.bounce_budget = max_cache_size.saturating_mul(1024).max(c.chunk_size);
                engine.set_bounce_budget(c.bounce_budget);
            },
            |s| s.sizes[SizeParam::MaxDeviceCacheSizeKb as usize] = Some(max_cache_size as u64),
        );
        Ok(())
    })
}

/// `hipFileDriverSetMaxPinnedMemSize`: records the pinned-memory limit (KiB); staged while
/// the driver is closed. 0 → `hipFileInvalidValue`.
#[no_mangle]
pub extern "C" fn hipFileDriverSetMaxPinnedMemSize(max_pinned_size: usize) -> hipFileError_t {
    boundary_op(|| {
        if max_pinned_size == 0 {
            return Err(Error::InvalidValue("zero size"));
        }
        set_size(SizeParam::MaxDevicePinnedMemSizeKb, max_pinned_size);
        Ok(())
    })
}

/// A size property that is only stored and returned: live while open, staged while closed.
fn set_size(p: SizeParam, kib: usize) {
    driver().set_property(
        |c, _| c.params.sizes[p as usize] = kib as u64,
        |s| s.sizes[p as usize] = Some(kib as u64),
    );
}
