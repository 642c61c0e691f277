//! cuFile's error values (`CUfileOpError`) and their names: what the cuFile face returns and
//! what the fault settings accept by name. Below both, so that neither imports the other.

use std::ffi::c_int;

/// `CUfileOpError` values used by the simulator.
pub mod code {
    use std::ffi::c_int;

    /// `CU_FILE_SUCCESS`.
    pub const SUCCESS: c_int = 0;
    /// `CU_FILE_DRIVER_NOT_INITIALIZED`.
    pub const DRIVER_NOT_INITIALIZED: c_int = 5001;
    /// `CU_FILE_IO_NOT_SUPPORTED`.
    pub const IO_NOT_SUPPORTED: c_int = 5008;
    /// `CU_FILE_CUDA_DRIVER_ERROR` (`cu_err` holds the `CUresult`).
    pub const CUDA_DRIVER_ERROR: c_int = 5011;
    /// `CU_FILE_CUDA_MEMORY_TYPE_INVALID`.
    pub const CUDA_MEMORY_TYPE_INVALID: c_int = 5013;
    /// `CU_FILE_CUDA_POINTER_RANGE_ERROR`.
    pub const CUDA_POINTER_RANGE_ERROR: c_int = 5014;
    /// `CU_FILE_INVALID_FILE_TYPE`.
    pub const INVALID_FILE_TYPE: c_int = 5018;
    /// `CU_FILE_INVALID_VALUE`.
    pub const INVALID_VALUE: c_int = 5022;
    /// `CU_FILE_MEMORY_ALREADY_REGISTERED`.
    pub const MEMORY_ALREADY_REGISTERED: c_int = 5023;
    /// `CU_FILE_MEMORY_NOT_REGISTERED`.
    pub const MEMORY_NOT_REGISTERED: c_int = 5024;
    /// `CU_FILE_HANDLE_NOT_REGISTERED`.
    pub const HANDLE_NOT_REGISTERED: c_int = 5027;
    /// `CU_FILE_HANDLE_ALREADY_REGISTERED`.
    pub const HANDLE_ALREADY_REGISTERED: c_int = 5028;
    /// `CU_FILE_INTERNAL_ERROR`.
    pub const INTERNAL_ERROR: c_int = 5030;
}

/// Names of the `CUfileOpError` values (for fault settings given by name).
const ERROR_NAMES: &[(c_int, &str)] = &[
    (0, "CU_FILE_SUCCESS"),
    (5001, "CU_FILE_DRIVER_NOT_INITIALIZED"),
    (5002, "CU_FILE_DRIVER_INVALID_PROPS"),
    (5003, "CU_FILE_DRIVER_UNSUPPORTED_LIMIT"),
    (5004, "CU_FILE_DRIVER_VERSION_MISMATCH"),
    (5005, "CU_FILE_DRIVER_VERSION_READ_ERROR"),
    (5006, "CU_FILE_DRIVER_CLOSING"),
    (5007, "CU_FILE_PLATFORM_NOT_SUPPORTED"),
    (5008, "CU_FILE_IO_NOT_SUPPORTED"),
    (5009, "CU_FILE_DEVICE_NOT_SUPPORTED"),
    (5010, "CU_FILE_NVFS_DRIVER_ERROR"),
    (5011, "CU_FILE_CUDA_DRIVER_ERROR"),
    (5012, "CU_FILE_CUDA_POINTER_INVALID"),
    (5013, "CU_FILE_CUDA_MEMORY_TYPE_INVALID"),
    (5014, "CU_FILE_CUDA_POINTER_RANGE_ERROR"),
    (5015, "CU_FILE_CUDA_CONTEXT_MISMATCH"),
    (5016, "CU_FILE_INVALID_MAPPING_SIZE"),
    (5017, "CU_FILE_INVALID_MAPPING_RANGE"),
    (5018, "CU_FILE_INVALID_FILE_TYPE"),
    (5019, "CU_FILE_INVALID_FILE_OPEN_FLAG"),
    (5020, "CU_FILE_DIO_NOT_SET"),
    (5022, "CU_FILE_INVALID_VALUE"),
    (5023, "CU_FILE_MEMORY_ALREADY_REGISTERED"),
    (5024, "CU_FILE_MEMORY_NOT_REGISTERED"),
    (5025, "CU_FILE_PERMISSION_DENIED"),
    (5026, "CU_FILE_DRIVER_ALREADY_OPEN"),
    (5027, "CU_FILE_HANDLE_NOT_REGISTERED"),
    (5028, "CU_FILE_HANDLE_ALREADY_REGISTERED"),
    (5029, "CU_FILE_DEVICE_NOT_FOUND"),
    (5030, "CU_FILE_INTERNAL_ERROR"),
    (5031, "CU_FILE_GETNEWFD_FAILED"),
    (5033, "CU_FILE_NVFS_SETUP_ERROR"),
    (5034, "CU_FILE_IO_DISABLED"),
    (5035, "CU_FILE_BATCH_SUBMIT_FAILED"),
    (5036, "CU_FILE_GPU_MEMORY_PINNING_FAILED"),
    (5037, "CU_FILE_BATCH_FULL"),
    (5038, "CU_FILE_ASYNC_NOT_SUPPORTED"),
    (5039, "CU_FILE_IO_MAX_ERROR"),
];

/// The `CUfileOpError` value named `name` (`"CU_FILE_HANDLE_NOT_REGISTERED"`).
pub fn error_by_name(name: &str) -> Option<c_int> {
    ERROR_NAMES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|&(c, _)| c)
}

/// The name of a `CUfileOpError` value.
pub fn error_name(code: c_int) -> Option<&'static str> {
    ERROR_NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|&(_, n)| n)
}
