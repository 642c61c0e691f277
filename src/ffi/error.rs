//! The one mapping of core errors to C results: `hipFileError_t` for most functions, and
//! `ssize_t` + `errno` for `hipFileRead/Write`. Both matches are
//! exhaustive without a catch-all arm, so a new error variant cannot compile unmapped.

use super::abi::*;
use crate::error::Error;
use crate::runtime::RtError;

/// The `hipFileOpError_t` code of an error (runtime errors are `hipFileHipDriverError`).
pub(crate) fn op_code(e: &Error) -> hipFileOpError_t {
    match e {
        Error::DriverNotInitialized => hipFileDriverNotInitialized,
        Error::DriverClosing => hipFileDriverClosing,
        Error::IoNotSupported(_) => hipFileIONotSupported,
        Error::MemoryTypeInvalid => hipFileHipMemoryTypeInvalid,
        Error::PointerRange => hipFileHipPointerRangeError,
        Error::InvalidFileOpenFlag => hipFileInvalidFileOpenFlag,
        Error::InvalidValue(_) => hipFileInvalidValue,
        Error::MemoryAlreadyRegistered => hipFileMemoryAlreadyRegistered,
        Error::MemoryNotRegistered => hipFileMemoryNotRegistered,
        Error::DriverAlreadyOpen => hipFileDriverAlreadyOpen,
        Error::HandleNotRegistered => hipFileHandleNotRegistered,
        Error::HandleAlreadyRegistered => hipFileHandleAlreadyRegistered,
        Error::BatchFull => hipFileBatchFull,
        Error::Runtime(_) => hipFileHipDriverError,
        Error::Os(_) | Error::GpuDirect(_) => hipFileInternalError,
        Error::NoBackend(_) => hipFileInternalError,
        Error::Internal(_) => hipFileInternalError,
    }
}

/// `hipFileError_t` for an error: `{code, hipSuccess}`, or `{hipFileHipDriverError, e}`.
pub(crate) fn op_error(e: Error) -> hipFileError_t {
    tracing::debug!(target: "hipfile", "API call failed: {e}");
    let hip_drv_err = match e {
        Error::Runtime(RtError(code)) => code,
        _ => 0,
    };
    hipFileError_t {
        err: op_code(&e),
        hip_drv_err,
    }
}

/// The `ret` of a failed batch operation, before its cast to `size_t`:
/// `-errno` for an operating-system error, `-hipFileHipDriverError` for a runtime failure,
/// `-code` for every other error.
pub(crate) fn batch_ret(e: &Error) -> i64 {
    match e {
        Error::Os(code) | Error::GpuDirect(code) => -i64::from(*code),
        other => -i64::from(op_code(other)),
    }
}

/// The `ssize_t` result of a failed read or write, setting `errno` when it is `-1`.
pub(crate) fn ssize_error(e: Error) -> isize {
    tracing::debug!(target: "hipfile", "I/O failed: {e}");
    let (ret, errno) = match e {
        // cuFile compatibility: a closed driver is -1 / EINVAL.
        Error::DriverNotInitialized => (-1, Some(libc::EINVAL)),
        Error::Os(code) | Error::GpuDirect(code) => (-1, Some(code)),
        // -hipErrorInvalidValue would be -1: report it as -1 / EINVAL so that -1 always means
        // "look at errno".
        Error::Runtime(RtError::INVALID_VALUE) => (-1, Some(libc::EINVAL)),
        Error::Runtime(RtError(code)) => (-(code as isize), None),
        Error::DriverClosing
        | Error::IoNotSupported(_)
        | Error::MemoryTypeInvalid
        | Error::PointerRange
        | Error::InvalidFileOpenFlag
        | Error::InvalidValue(_)
        | Error::MemoryAlreadyRegistered
        | Error::MemoryNotRegistered
        | Error::DriverAlreadyOpen
        | Error::HandleNotRegistered
        | Error::HandleAlreadyRegistered
        | Error::BatchFull
        | Error::NoBackend(_)
        | Error::Internal(_) => (-(op_code(&e) as isize), None),
    };
    if let Some(errno) = errno {
        crate::sys::set_errno(errno);
    }
    ret
}

/// The static description of a `hipFileOpError_t` value.
pub(crate) fn op_error_string(code: i32) -> &'static std::ffi::CStr {
    match code {
        0 => c"hipFile success",
        5001 => c"GPU IO driver is not loaded",
        5002 => c"Invalid GPU IO driver property provided",
        5003 => c"GPU IO Driver property value is unsupported",
        5004 => c"hipFile version does not match GPU IO driver version",
        5005 => c"Unable to read the GPU IO driver version",
        5006 => c"GPU IO driver is closing and not accepting new requests",
        5007 => c"hipFile is not supported on the current platform",
        5008 => c"hipFile is not supported on the selected file",
        5009 => c"The selected GPU does not support hipFile",
        5010 => c"GPU IO driver error",
        5011 => c"GPU driver error: Inspect hip_drv_err for additional information",
        5012 => c"Invalid GPU pointer",
        5013 => c"Memory type backing pointer is incompatible with hipFile",
        5014 => c"Pointer range exceeds allocated memory region",
        5015 => c"GPU driver context mismatch",
        5016 => c"Accessing memory beyond pinned memory buffer",
        5017 => c"Accessing memory beyond mapped memory region",
        5018 => c"Unsupported file type",
        5019 => c"Unsupported file open flags",
        5020 => c"O_DIRECT flag not set",
        5022 => c"One or more arguments have an invalid value",
        5023 => c"Device pointer is already registered",
        5024 => c"Device pointer is not registered",
        5025 => c"Permission error on device or file access",
        5026 => c"GPU IO driver is already open",
        5027 => c"File handle for GPU IO is not registered",
        5028 => c"File handle for GPU IO is already registered",
        5029 => c"Selected device not found",
        5030 => c"Internal GPU IO library error",
        5031 => c"Unable to obtain a new file descriptor",
        5033 => c"GPU IO Driver initialization error",
        5034 => c"GPU IO config file prohibits GPU IO on specified file",
        5035 => c"Failed to submit request for batch operation",
        5036 => c"Failed to allocated pinned device memory",
        5037 => c"Batch operation queue is full",
        5038 => c"hipFile async IO is not supported",
        5039 => c"Internal flag to mark largest hipFile error code",
        _ => c"Unknown hipFile error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssize_mapping_follows_behaviour_b1() {
        assert_eq!(ssize_error(Error::DriverNotInitialized), -1);
        assert_eq!(crate::sys::errno(), libc::EINVAL);
        assert_eq!(ssize_error(Error::Os(libc::EBADF)), -1);
        assert_eq!(crate::sys::errno(), libc::EBADF);
        crate::sys::set_errno(0);
        assert_eq!(ssize_error(Error::Runtime(RtError(999))), -999);
        assert_eq!(crate::sys::errno(), 0, "no errno for a runtime error");
        assert_eq!(ssize_error(Error::Runtime(RtError::INVALID_VALUE)), -1);
        assert_eq!(crate::sys::errno(), libc::EINVAL);
        assert_eq!(ssize_error(Error::MemoryTypeInvalid), -5013);
        assert_eq!(ssize_error(Error::InvalidValue("x")), -5022);
        assert_eq!(ssize_error(Error::HandleNotRegistered), -5027);
        assert_eq!(
            ssize_error(Error::NoBackend(crate::vocab::Refusals::default())),
            -5030
        );
    }

    #[test]
    fn op_mapping() {
        assert_eq!(
            op_error(Error::Runtime(RtError(999))),
            hipFileError_t {
                err: 5011,
                hip_drv_err: 999
            }
        );
        assert_eq!(op_error(Error::Os(5)), hipFileError_t::op(5030));
        assert_eq!(
            op_error(Error::HandleAlreadyRegistered),
            hipFileError_t::op(5028)
        );
    }

    #[test]
    fn strings() {
        assert_eq!(
            op_error_string(5036).to_str().unwrap(),
            "Failed to allocated pinned device memory"
        );
        assert_eq!(
            op_error_string(5021).to_str().unwrap(),
            "Unknown hipFile error"
        );
        assert_eq!(
            op_error_string(-5022).to_str().unwrap(),
            "Unknown hipFile error"
        );
    }
}
