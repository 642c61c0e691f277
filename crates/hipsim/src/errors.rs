//! Error codes shared by the HIP and CUDA faces of the simulator, their names and descriptions,
//! and HIP's per-thread "last error".
//!
//! Every code the simulator produces has the same number in HIP's `hipError_t` and CUDA's
//! `CUresult` (for example 201 is both `hipErrorInvalidContext` and
//! `CUDA_ERROR_INVALID_CONTEXT`), except `hipErrorInvalidMemcpyDirection` (21), which only the
//! HIP face can return.

use std::cell::Cell;
use std::ffi::{c_int, CStr};

/// A non-success status, in HIP numbering (identical to CUDA numbering for every code used).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimError(pub c_int);

/// Result type of the simulator's internals.
pub type SimResult<T> = Result<T, SimError>;

/// `hipSuccess` / `CUDA_SUCCESS`.
pub const SUCCESS: c_int = 0;

impl SimError {
    /// `hipErrorInvalidValue` / `CUDA_ERROR_INVALID_VALUE`.
    pub const INVALID_VALUE: Self = Self(1);
    /// `hipErrorOutOfMemory` / `CUDA_ERROR_OUT_OF_MEMORY`.
    pub const OUT_OF_MEMORY: Self = Self(2);
    /// `hipErrorNotInitialized` / `CUDA_ERROR_NOT_INITIALIZED`.
    pub const NOT_INITIALIZED: Self = Self(3);
    /// `hipErrorInvalidMemcpyDirection` (HIP only).
    pub const INVALID_MEMCPY_DIRECTION: Self = Self(21);
    /// `hipErrorNoDevice` / `CUDA_ERROR_NO_DEVICE`.
    pub const NO_DEVICE: Self = Self(100);
    /// `hipErrorInvalidDevice` / `CUDA_ERROR_INVALID_DEVICE`.
    pub const INVALID_DEVICE: Self = Self(101);
    /// `hipErrorInvalidImage` / `CUDA_ERROR_INVALID_IMAGE`.
    pub const INVALID_IMAGE: Self = Self(200);
    /// `hipErrorNoBinaryForGpu` / `CUDA_ERROR_NO_BINARY_FOR_GPU`.
    pub const NO_BINARY_FOR_GPU: Self = Self(209);
    /// `hipErrorInvalidContext` / `CUDA_ERROR_INVALID_CONTEXT`.
    pub const INVALID_CONTEXT: Self = Self(201);
    /// `hipErrorInvalidHandle` / `CUDA_ERROR_INVALID_HANDLE`.
    pub const INVALID_HANDLE: Self = Self(400);
    /// `hipErrorNotFound` / `CUDA_ERROR_NOT_FOUND`.
    pub const NOT_FOUND: Self = Self(500);
    /// `hipErrorNotReady` / `CUDA_ERROR_NOT_READY`.
    pub const NOT_READY: Self = Self(600);
    /// `hipErrorIllegalAddress` / `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub const ILLEGAL_ADDRESS: Self = Self(700);
    /// `hipErrorHostMemoryAlreadyRegistered` / `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
    pub const HOST_MEMORY_ALREADY_REGISTERED: Self = Self(712);
    /// `hipErrorHostMemoryNotRegistered` / `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED`.
    pub const HOST_MEMORY_NOT_REGISTERED: Self = Self(713);
    /// `hipErrorNotSupported` / `CUDA_ERROR_NOT_SUPPORTED`.
    pub const NOT_SUPPORTED: Self = Self(801);
    /// `hipErrorUnknown` / `CUDA_ERROR_UNKNOWN`.
    pub const UNKNOWN: Self = Self(999);
}

/// Converts an internal result into the C status code.
pub fn code_of(r: SimResult<()>) -> c_int {
    match r {
        Ok(()) => SUCCESS,
        Err(e) => e.0,
    }
}

struct ErrorInfo {
    code: c_int,
    hip_name: &'static CStr,
    cuda_name: Option<&'static CStr>,
    hip_text: &'static CStr,
    cuda_text: &'static CStr,
}

const fn info(
    code: c_int,
    hip_name: &'static CStr,
    cuda_name: Option<&'static CStr>,
    hip_text: &'static CStr,
    cuda_text: &'static CStr,
) -> ErrorInfo {
    ErrorInfo {
        code,
        hip_name,
        cuda_name,
        hip_text,
        cuda_text,
    }
}

const TABLE: &[ErrorInfo] = &[
    info(
        0,
        c"hipSuccess",
        Some(c"CUDA_SUCCESS"),
        c"no error",
        c"no error",
    ),
    info(
        1,
        c"hipErrorInvalidValue",
        Some(c"CUDA_ERROR_INVALID_VALUE"),
        c"invalid argument",
        c"invalid argument",
    ),
    info(
        2,
        c"hipErrorOutOfMemory",
        Some(c"CUDA_ERROR_OUT_OF_MEMORY"),
        c"out of memory",
        c"out of memory",
    ),
    info(
        3,
        c"hipErrorNotInitialized",
        Some(c"CUDA_ERROR_NOT_INITIALIZED"),
        c"initialization error",
        c"initialization error",
    ),
    info(
        21,
        c"hipErrorInvalidMemcpyDirection",
        None,
        c"invalid copy direction for memcpy",
        c"",
    ),
    info(
        100,
        c"hipErrorNoDevice",
        Some(c"CUDA_ERROR_NO_DEVICE"),
        c"no ROCm-capable device is detected",
        c"no CUDA-capable device is detected",
    ),
    info(
        101,
        c"hipErrorInvalidDevice",
        Some(c"CUDA_ERROR_INVALID_DEVICE"),
        c"invalid device ordinal",
        c"invalid device ordinal",
    ),
    info(
        200,
        c"hipErrorInvalidImage",
        Some(c"CUDA_ERROR_INVALID_IMAGE"),
        c"device kernel image is invalid",
        c"device kernel image is invalid",
    ),
    info(
        201,
        c"hipErrorInvalidContext",
        Some(c"CUDA_ERROR_INVALID_CONTEXT"),
        c"invalid device context",
        c"invalid device context",
    ),
    info(
        209,
        c"hipErrorNoBinaryForGpu",
        Some(c"CUDA_ERROR_NO_BINARY_FOR_GPU"),
        c"no kernel image is available for execution on the device",
        c"no kernel image is available for execution on the device",
    ),
    info(
        400,
        c"hipErrorInvalidHandle",
        Some(c"CUDA_ERROR_INVALID_HANDLE"),
        c"invalid resource handle",
        c"invalid resource handle",
    ),
    info(
        500,
        c"hipErrorNotFound",
        Some(c"CUDA_ERROR_NOT_FOUND"),
        c"named symbol not found",
        c"named symbol not found",
    ),
    info(
        600,
        c"hipErrorNotReady",
        Some(c"CUDA_ERROR_NOT_READY"),
        c"device not ready",
        c"device not ready",
    ),
    info(
        700,
        c"hipErrorIllegalAddress",
        Some(c"CUDA_ERROR_ILLEGAL_ADDRESS"),
        c"an illegal memory access was encountered",
        c"an illegal memory access was encountered",
    ),
    info(
        712,
        c"hipErrorHostMemoryAlreadyRegistered",
        Some(c"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
        c"part or all of the requested memory range is already mapped",
        c"part or all of the requested memory range is already mapped",
    ),
    info(
        713,
        c"hipErrorHostMemoryNotRegistered",
        Some(c"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"),
        c"pointer does not correspond to a registered memory region",
        c"pointer does not correspond to a registered memory region",
    ),
    info(
        801,
        c"hipErrorNotSupported",
        Some(c"CUDA_ERROR_NOT_SUPPORTED"),
        c"operation not supported",
        c"operation not supported",
    ),
    info(
        999,
        c"hipErrorUnknown",
        Some(c"CUDA_ERROR_UNKNOWN"),
        c"unknown error",
        c"unknown error",
    ),
];

fn find(code: c_int) -> Option<&'static ErrorInfo> {
    TABLE.iter().find(|e| e.code == code)
}

/// `hipGetErrorName` text; unknown codes read as `hipErrorUnknown`.
pub fn hip_name(code: c_int) -> &'static CStr {
    find(code).map_or(c"hipErrorUnknown", |e| e.hip_name)
}

/// `hipGetErrorString` text; unknown codes read as "unknown error".
pub fn hip_text(code: c_int) -> &'static CStr {
    find(code).map_or(c"unknown error", |e| e.hip_text)
}

/// `cuGetErrorName` text, or `None` for a code CUDA does not define here.
pub fn cuda_name(code: c_int) -> Option<&'static CStr> {
    find(code).and_then(|e| e.cuda_name)
}

/// `cuGetErrorString` text, or `None` for a code CUDA does not define here.
pub fn cuda_text(code: c_int) -> Option<&'static CStr> {
    find(code).and_then(|e| e.cuda_name.map(|_| e.cuda_text))
}

/// The code whose HIP or CUDA name is `name` (`"hipErrorUnknown"`, `"CUDA_ERROR_UNKNOWN"`).
pub fn code_by_name(name: &str) -> Option<c_int> {
    TABLE
        .iter()
        .find(|e| {
            e.hip_name.to_bytes() == name.as_bytes()
                || e.cuda_name.is_some_and(|c| c.to_bytes() == name.as_bytes())
        })
        .map(|e| e.code)
}

thread_local! {
    static LAST_ERROR: Cell<c_int> = const { Cell::new(SUCCESS) };
}

/// Records the status of a HIP call as the thread's last error. Like CUDA (and recent HIP),
/// only failures are recorded, and `hipErrorNotReady` (a query answer) is not a failure.
pub fn record_hip_status(code: c_int) {
    if code != SUCCESS && code != SimError::NOT_READY.0 {
        LAST_ERROR.with(|c| c.set(code));
    }
}

/// `hipGetLastError`: the last error of this thread, which is reset to `hipSuccess`.
pub fn take_last_error() -> c_int {
    LAST_ERROR.with(|c| c.replace(SUCCESS))
}

/// `hipPeekAtLastError`: the last error of this thread, left in place.
pub fn peek_last_error() -> c_int {
    LAST_ERROR.with(Cell::get)
}
