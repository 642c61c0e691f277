//! The GPU runtime seam: everything the library needs from HIP, CUDA or no GPU at all.
//!
//! The core (driver, backends, engine) sees only the traits of [`seam`]: the core [`Runtime`]
//! (about ten methods: platform, pointer attributes, devices, synchronous copies, pinned host
//! memory) and the capabilities it hands out when the runtime has them ([`Streams`],
//! [`Staging`], [`GpuDirect`], [`HostRegistration`], [`Tools`]), so that a fake runtime
//! implements the core alone. Implementations load the vendor library at run time (never
//! linked): [`hip`] over `libamdhip64`, [`cuda`] over the CUDA driver API in `libcuda.so.1`,
//! and [`host`] when no GPU runtime is present. Each of the first two keeps the library's raw
//! symbol table (typed function pointers resolved once, cudarc's `sys`) in a file of its own,
//! apart from the implementation. The simulated runtime (`crates/hipsim`) is loaded through
//! the same HIP or CUDA code, so tests exercise the real loaders.
//!
//! Errors are reported in HIP's numbering ([`RtError`]) whatever the vendor, because that is what
//! `hipFileError_t::hip_drv_err` and the negative `ssize_t` results carry.

pub(crate) mod cuda;
pub(crate) mod cufile;
pub(crate) mod hip;
pub(crate) mod host;
pub(crate) mod loader;
pub(crate) mod pinned;
pub(crate) mod seam;
pub(crate) mod stage;
mod symbols;

use std::fmt;

#[cfg(any(test, feature = "test-internals"))]
pub use loader::install;
pub(crate) use loader::{runtime, try_runtime};
pub(crate) use seam::AtomicStream;
pub(crate) use seam::{
    DirectCopy, FastpathFault, GpuDirect, HostRegistration, MappedHost, Staging,
};
// What a fake runtime of the tests implements or names (`crate::internals::runtime`).
pub use seam::{DeviceRestore, EventHandle, PointerInfo, Runtime, StreamHandle, Streams, Tools};

/// A runtime error, numbered as HIP numbers `hipError_t` (CUDA results are translated).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RtError(pub i32);

impl RtError {
    /// `hipErrorInvalidValue`.
    pub const INVALID_VALUE: RtError = RtError(1);
    /// `hipErrorOutOfMemory`.
    pub const OUT_OF_MEMORY: RtError = RtError(2);
    /// `hipErrorNotInitialized`.
    pub const NOT_INITIALIZED: RtError = RtError(3);
    /// `hipErrorNoDevice`.
    pub const NO_DEVICE: RtError = RtError(100);
    /// `hipErrorInvalidDevice`.
    pub const INVALID_DEVICE: RtError = RtError(101);
    /// `hipErrorInvalidContext`.
    pub const INVALID_CONTEXT: RtError = RtError(201);
    /// `hipErrorInvalidHandle`.
    pub const INVALID_HANDLE: RtError = RtError(400);
    /// `hipErrorNotFound`.
    pub const NOT_FOUND: RtError = RtError(500);
    /// `hipErrorNotReady`.
    pub const NOT_READY: RtError = RtError(600);
    /// `hipErrorHostMemoryAlreadyRegistered`.
    pub const HOST_MEMORY_ALREADY_REGISTERED: RtError = RtError(712);
    /// `hipErrorNotSupported`.
    pub const NOT_SUPPORTED: RtError = RtError(801);
    /// `hipErrorUnknown`.
    pub const UNKNOWN: RtError = RtError(999);
}

impl fmt::Debug for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hipError({})", self.0)
    }
}

impl RtError {
    /// HIP's name of the error (`hipErrorInvalidValue`), if HIP has one for this number.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "hipSuccess",
            1 => "hipErrorInvalidValue",
            2 => "hipErrorOutOfMemory",
            3 => "hipErrorNotInitialized",
            4 => "hipErrorDeinitialized",
            5 => "hipErrorProfilerDisabled",
            6 => "hipErrorProfilerNotInitialized",
            7 => "hipErrorProfilerAlreadyStarted",
            8 => "hipErrorProfilerAlreadyStopped",
            9 => "hipErrorInvalidConfiguration",
            12 => "hipErrorInvalidPitchValue",
            13 => "hipErrorInvalidSymbol",
            17 => "hipErrorInvalidDevicePointer",
            21 => "hipErrorInvalidMemcpyDirection",
            35 => "hipErrorInsufficientDriver",
            52 => "hipErrorMissingConfiguration",
            53 => "hipErrorPriorLaunchFailure",
            98 => "hipErrorInvalidDeviceFunction",
            100 => "hipErrorNoDevice",
            101 => "hipErrorInvalidDevice",
            200 => "hipErrorInvalidImage",
            201 => "hipErrorInvalidContext",
            202 => "hipErrorContextAlreadyCurrent",
            205 => "hipErrorMapFailed",
            206 => "hipErrorUnmapFailed",
            207 => "hipErrorArrayIsMapped",
            208 => "hipErrorAlreadyMapped",
            209 => "hipErrorNoBinaryForGpu",
            210 => "hipErrorAlreadyAcquired",
            211 => "hipErrorNotMapped",
            212 => "hipErrorNotMappedAsArray",
            213 => "hipErrorNotMappedAsPointer",
            214 => "hipErrorECCNotCorrectable",
            215 => "hipErrorUnsupportedLimit",
            216 => "hipErrorContextAlreadyInUse",
            217 => "hipErrorPeerAccessUnsupported",
            218 => "hipErrorInvalidKernelFile",
            219 => "hipErrorInvalidGraphicsContext",
            300 => "hipErrorInvalidSource",
            301 => "hipErrorFileNotFound",
            302 => "hipErrorSharedObjectSymbolNotFound",
            303 => "hipErrorSharedObjectInitFailed",
            304 => "hipErrorOperatingSystem",
            400 => "hipErrorInvalidHandle",
            401 => "hipErrorIllegalState",
            500 => "hipErrorNotFound",
            600 => "hipErrorNotReady",
            700 => "hipErrorIllegalAddress",
            701 => "hipErrorLaunchOutOfResources",
            702 => "hipErrorLaunchTimeOut",
            704 => "hipErrorPeerAccessAlreadyEnabled",
            705 => "hipErrorPeerAccessNotEnabled",
            708 => "hipErrorSetOnActiveProcess",
            709 => "hipErrorContextIsDestroyed",
            710 => "hipErrorAssert",
            712 => "hipErrorHostMemoryAlreadyRegistered",
            713 => "hipErrorHostMemoryNotRegistered",
            719 => "hipErrorLaunchFailure",
            720 => "hipErrorCooperativeLaunchTooLarge",
            801 => "hipErrorNotSupported",
            900 => "hipErrorStreamCaptureUnsupported",
            901 => "hipErrorStreamCaptureInvalidated",
            902 => "hipErrorStreamCaptureMerge",
            903 => "hipErrorStreamCaptureUnmatched",
            904 => "hipErrorStreamCaptureUnjoined",
            905 => "hipErrorStreamCaptureIsolation",
            906 => "hipErrorStreamCaptureImplicit",
            907 => "hipErrorCapturedEvent",
            908 => "hipErrorStreamCaptureWrongThread",
            910 => "hipErrorGraphExecUpdateFailure",
            999 => "hipErrorUnknown",
            1052 => "hipErrorRuntimeMemory",
            1053 => "hipErrorRuntimeOther",
            _ => return None,
        })
    }
}

impl fmt::Display for RtError {
    /// `hipErrorInvalidValue (1)`; a number HIP has no name for: `hipError_t 1234`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "hipError_t {}", self.0),
        }
    }
}

impl std::error::Error for RtError {}

/// Result of a runtime call.
pub type RtResult<T> = Result<T, RtError>;

/// Which GPU platform the process runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Platform {
    /// AMD, through the HIP runtime.
    Amd,
    /// NVIDIA, through the CUDA driver API.
    Nvidia,
    /// No GPU runtime: host memory only.
    Host,
}

impl Platform {
    /// Lower-case name as used by `HIPFILE_PLATFORM`.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Amd => "amd",
            Platform::Nvidia => "nvidia",
            Platform::Host => "host",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_named_as_hip_names_them() {
        assert_eq!(
            RtError::INVALID_VALUE.to_string(),
            "hipErrorInvalidValue (1)"
        );
        assert_eq!(RtError::UNKNOWN.to_string(), "hipErrorUnknown (999)");
        assert_eq!(RtError(12345).to_string(), "hipError_t 12345");
        assert_eq!(RtError(-3).name(), None);
        // Every CUDA result with a HIP twin names the same HIP error.
        for (code, text) in cuda::HIP_TWINS {
            let hip = text.rsplit("→ ").next().unwrap();
            assert_eq!(RtError(*code).name(), Some(hip), "{code}");
        }
    }
}
