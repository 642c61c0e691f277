//! The one error type of the core. Variants are named by meaning; `ffi/error.rs` is the only
//! place they become `hipFileError_t` values or `ssize_t` + `errno`.

use crate::runtime::RtError;
use crate::vocab::Refusals;

/// Everything that can go wrong below the C boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The driver is not open (use count 0). `hipFileDriverNotInitialized` (5001).
    #[error("the driver is not open")]
    DriverNotInitialized,
    /// The driver is closed while an API that mimics cuFile expects it open, or was closed to 0
    /// while the call ran. 5006.
    #[error("the driver is closing")]
    DriverClosing,
    /// The request cannot be served on this file or descriptor kind. 5008.
    #[error("I/O not supported: {0}")]
    IoNotSupported(&'static str),
    /// The memory type of a buffer cannot be used. 5013.
    #[error("memory type not supported by hipFile")]
    MemoryTypeInvalid,
    /// A range reaches beyond its allocation. 5014.
    #[error("pointer range exceeds the allocation")]
    PointerRange,
    /// The client descriptor has open flags we cannot honour (e.g. `O_APPEND`). 5019.
    #[error("unsupported file open flags")]
    InvalidFileOpenFlag,
    /// An argument is invalid. 5022.
    #[error("invalid argument: {0}")]
    InvalidValue(&'static str),
    /// The buffer base is already registered. 5023.
    #[error("buffer already registered")]
    MemoryAlreadyRegistered,
    /// The buffer base is not registered. 5024.
    #[error("buffer not registered")]
    MemoryNotRegistered,
    /// Parameters can only be set while the driver is closed. 5026.
    #[error("the driver is already open")]
    DriverAlreadyOpen,
    /// A batch submission has more entries than its context has room for. 5037.
    #[error("the batch context has no room for that many operations")]
    BatchFull,
    /// The file handle is unknown, stale or NULL. 5027.
    #[error("file handle not registered")]
    HandleNotRegistered,
    /// The descriptor is already registered. 5028.
    #[error("file descriptor already registered")]
    HandleAlreadyRegistered,
    /// The GPU runtime failed.
    #[error("{0}")]
    Runtime(RtError),
    /// An operating-system call failed with this errno.
    #[error("OS error {0}")]
    Os(i32),
    /// The GPU-direct path failed with this errno. Where the POSIX path may take over
    /// (`ENODEV`, `EREMOTEIO`) it does; otherwise it is reported as [`Error::Os`] is, except
    /// in a stream-ordered result (`-hipFileInternalError` there, as upstream).
    #[error("GPU-direct I/O failed with OS error {0}")]
    GpuDirect(i32),
    /// No backend accepts the request (compat mode off and the fastpath refuses, host I/O
    /// disabled, ...): every backend's refusal. 5030.
    #[error("no backend accepts the request ({0})")]
    NoBackend(Refusals),
    /// An internal failure. 5030.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl From<RtError> for Error {
    fn from(e: RtError) -> Self {
        Error::Runtime(e)
    }
}

/// Result of core operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
