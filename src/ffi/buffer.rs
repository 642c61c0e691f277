//! Buffer registration.
#![allow(non_snake_case)]

use std::ffi::{c_int, c_void};

use super::abi::*;
use super::boundary_op;
use crate::driver::driver;
use crate::vocab::Address;

/// `hipFileBufRegister`: registers `length` bytes at `buffer_base` (device memory, or host
/// memory while the host backend is on). Opens the driver implicitly, even when the buffer is
/// then refused. Returns `hipFileMemoryAlreadyRegistered`, `hipFileInvalidValue` (NULL or
/// unknown pointer), `hipFileHipMemoryTypeInvalid`, `hipFileHipPointerRangeError` or a runtime
/// error as `hipFileHipDriverError`.
#[no_mangle]
pub extern "C" fn hipFileBufRegister(
    buffer_base: *const c_void,
    length: usize,
    flags: c_int,
) -> hipFileError_t {
    // The flags are not interpreted, as upstream (no flag is defined).
    let _ = flags;
    let base = Address::of(buffer_base);
    boundary_op(|| driver().register_buffer(base, length))
}

/// `hipFileBufDeregister`: `hipFileDriverClosing` when the driver is closed,
/// `hipFileMemoryNotRegistered` when `buffer_base` is not a registered base,
/// `hipFileInternalError` while I/O uses the buffer.
#[no_mangle]
pub extern "C" fn hipFileBufDeregister(buffer_base: *const c_void) -> hipFileError_t {
    let base = Address::of(buffer_base);
    boundary_op(|| driver().deregister_buffer(base))
}
