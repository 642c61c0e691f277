//! The GPU runtime seam: everything the library needs from HIP, CUDA or no GPU at all.
//!
//! The core (driver, backends, engine) sees only the [`Runtime`] trait: what it calls, with
//! defaults where "not available" is an answer (no GPU-direct entry points, no host
//! registration, no host callbacks). What only tools and tests ask (version, device count,
//! device allocation) is [`RuntimeTools`], every method defaulted. Implementations load the
//! vendor library at run time (never linked): [`hip`] over `libamdhip64`, [`cuda`] over the CUDA
//! driver API in `libcuda.so.1`, and [`host`] when no GPU runtime is present. The simulated runtime
//! (`crates/hipsim`) is loaded through the same HIP or CUDA code, so tests exercise the real loaders.
//!
//! Errors are reported in HIP's numbering ([`RtError`]) whatever the vendor, because that is what
//! `hipFileError_t::hip_drv_err` and the negative `ssize_t` results carry.

pub mod cuda;
pub mod cufile;
pub mod hip;
pub mod host;
pub mod loader;
pub mod pinned;
pub(crate) mod stage;
mod symbols;

use std::ffi::c_void;
use std::fmt;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(any(test, feature = "test-internals"))]
pub use loader::install;
pub use loader::{runtime, try_runtime};

use crate::vocab::{Direction, MemoryType};

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

/// A runtime's synchronous copy as one plain C entry point, `copy(dst, src, bytes, kind)`
/// returning 0 or the runtime's error code. The engine calls it for one-chunk requests
/// instead of going through the trait (one indirect call and a wrapper less per small request,
/// target T9). A runtime offers it only when the entry point is all a copy takes: HIP's
/// `hipMemcpy`; CUDA copies run inside the caller's context and keep going through the trait.
#[derive(Clone, Copy, Debug)]
pub struct DirectCopy {
    /// The copy entry point.
    pub copy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, std::ffi::c_int) -> i32,
    /// Its `kind` argument for host → device.
    pub to_device: std::ffi::c_int,
    /// Its `kind` argument for device → host.
    pub to_host: std::ffi::c_int,
}

impl DirectCopy {
    /// Host memory `src` to device address `dst`.
    #[inline(always)]
    pub fn copy_to_device(&self, dst: usize, src: &[u8]) -> RtResult<()> {
        // SAFETY: `src` is valid host memory for its length; the runtime validates `dst`.
        let e = unsafe {
            (self.copy)(
                dst as *mut c_void,
                src.as_ptr().cast(),
                src.len(),
                self.to_device,
            )
        };
        if e == 0 {
            Ok(())
        } else {
            Err(RtError(e))
        }
    }

    /// Device address `src` into host memory `dst`.
    #[inline(always)]
    pub fn copy_from_device(&self, dst: &mut [u8], src: usize) -> RtResult<()> {
        // SAFETY: `dst` is valid writable host memory; the runtime validates `src`.
        let e = unsafe {
            (self.copy)(
                dst.as_mut_ptr().cast(),
                src as *const c_void,
                dst.len(),
                self.to_host,
            )
        };
        if e == 0 {
            Ok(())
        } else {
            Err(RtError(e))
        }
    }
}

/// Page-locked host memory that devices address too: the host's address and the device's alias
/// (the same number under unified addressing). Owned: give it back with
/// [`Runtime::mapped_free`].
#[derive(Debug)]
pub struct MappedHost {
    /// Host address (page-aligned).
    pub host: std::ptr::NonNull<u8>,
    /// The device's address of the same memory.
    pub device: usize,
}

// SAFETY: plain memory owned by the value; whoever lends it out synchronises its users.
unsafe impl Send for MappedHost {}
// SAFETY: as above.
unsafe impl Sync for MappedHost {}

/// The attributes of a pointer the library cares about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerInfo {
    /// Memory kind.
    pub memory_type: MemoryType,
    /// Device ordinal owning the memory (`-1` when unknown or host memory).
    pub device: i32,
}

/// An opaque stream as the application or the runtime knows it (`hipStream_t` / `CUstream`).
/// Zero is the default (NULL) stream. The runtimes (this module's children) make and read its
/// value; above them, only the C door turns an application's stream into one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamHandle(usize);

impl StreamHandle {
    /// The stream whose value C passed (`hipStream_t`, `CUstream`): never dereferenced; one
    /// that is not a stream is the runtime's to refuse.
    pub(crate) fn from_c_handle(value: usize) -> StreamHandle {
        StreamHandle(value)
    }
}

/// Logs show the stream as the application knows it.
impl fmt::LowerHex for StreamHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

/// A [`StreamHandle`] that threads read and replace without a lock.
#[derive(Debug, Default)]
pub(crate) struct AtomicStream(AtomicUsize);

impl AtomicStream {
    pub(crate) fn load(&self, order: Ordering) -> StreamHandle {
        StreamHandle(self.0.load(order))
    }

    pub(crate) fn store(&self, stream: StreamHandle, order: Ordering) {
        self.0.store(stream.0, order);
    }
}

/// An opaque event handle (`hipEvent_t` / `CUevent`), made and read by the runtimes only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventHandle(usize);

/// What [`Runtime::enter_device`] changed on the calling thread, for [`Runtime::leave_device`].
#[derive(Debug, PartialEq, Eq)]
#[must_use]
pub struct DeviceRestore(pub Option<usize>);

/// How a GPU-direct (fastpath) call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastpathFault {
    /// The kernel path reported an errno (`status != 0`).
    Os(i32),
    /// The runtime call itself failed.
    Runtime(RtError),
}

/// The GPU runtime interface used by the core. Addresses of device memory are plain integers:
/// the library never dereferences them.
pub trait Runtime: RuntimeTools + Send + Sync + 'static {
    /// Which platform this is.
    fn platform(&self) -> Platform;
    /// One line saying which library was loaded and its version, for logs and `hipfile check`.
    fn describe(&self) -> String;

    /// Attributes of `ptr`. Pageable host memory is reported as [`MemoryType::Unregistered`]
    /// (runtimes that answer `InvalidValue` for it are normalised by the implementation only
    /// where the vendor documents that meaning).
    fn pointer_info(&self, ptr: usize) -> RtResult<PointerInfo>;
    /// Base and size of the allocation containing `ptr`.
    fn address_range(&self, ptr: usize) -> RtResult<(usize, usize)>;

    /// Make `device` current on the calling thread for a while (the
    /// fallback works with the buffer's device current); returns what to restore.
    fn enter_device(&self, device: i32) -> RtResult<DeviceRestore>;
    /// Undo [`Runtime::enter_device`]; failures are only logged.
    fn leave_device(&self, restore: DeviceRestore);
    /// Per-thread initialisation before the fastpath is used on a new thread.
    fn thread_init(&self) {}

    /// The runtime's synchronous copy as one plain C entry point, when nothing else has to
    /// happen around a copy (see [`DirectCopy`]); `None` by default.
    fn direct_copy(&self) -> Option<DirectCopy> {
        None
    }

    /// Synchronous copy from host memory to device address `dst`.
    fn copy_to_device(&self, dst: usize, src: &[u8]) -> RtResult<()>;
    /// Synchronous copy from device address `src` into host memory.
    fn copy_from_device(&self, dst: &mut [u8], src: usize) -> RtResult<()>;

    /// Stream-ordered copy host → device.
    ///
    /// # Safety
    /// `src..src+len` must stay valid and unchanged until the copy completes on `stream`.
    unsafe fn copy_to_device_async(
        &self,
        dst: usize,
        src: *const u8,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()>;
    /// Stream-ordered copy device → host.
    ///
    /// # Safety
    /// `dst..dst+len` must stay valid, and not be accessed, until the copy completes on `stream`.
    unsafe fn copy_from_device_async(
        &self,
        dst: *mut u8,
        src: usize,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()>;

    /// Create a stream on the current device.
    fn stream_create(&self) -> RtResult<StreamHandle>;
    /// Destroy a stream created by [`Runtime::stream_create`].
    fn stream_destroy(&self, stream: StreamHandle);
    /// Wait for all work on `stream`.
    fn stream_synchronize(&self, stream: StreamHandle) -> RtResult<()>;
    /// Device of `stream`.
    fn stream_device(&self, stream: StreamHandle) -> RtResult<i32>;
    /// Whether `stream` is done: `Ok` when everything queued on it has run, `NOT_READY` while
    /// work is pending, another error when queued work failed (a copy, a kernel, a broken
    /// context). "Not ready" by default (nothing known).
    fn stream_query(&self, _stream: StreamHandle) -> RtResult<()> {
        Err(RtError::NOT_READY)
    }

    /// Create an event.
    fn event_create(&self) -> RtResult<EventHandle>;
    /// Record `event` on `stream`.
    fn event_record(&self, event: EventHandle, stream: StreamHandle) -> RtResult<()>;
    /// Wait for `event`.
    fn event_synchronize(&self, event: EventHandle) -> RtResult<()>;
    /// Destroy `event`.
    fn event_destroy(&self, event: EventHandle);

    /// `len` bytes of page-locked host memory that devices can address too (its device alias
    /// in [`MappedHost::device`]). "Not supported" by default.
    fn mapped_alloc(&self, _len: usize) -> RtResult<MappedHost> {
        Err(RtError::NOT_SUPPORTED)
    }

    /// Free memory from [`Runtime::mapped_alloc`]. No device work may still use it.
    fn mapped_free(&self, m: MappedHost) {
        // SAFETY: the memory came from this runtime's pinned allocation (mapped_alloc).
        unsafe { self.host_free(m.host.as_ptr()) }
    }

    /// Load the staging kernel of stream-ordered I/O (`runtime/stage/stage.c`) for `device`
    /// (once) and say how many blocks one launch may use (more than one only where the runtime
    /// can launch them co-resident). "Not supported" by default and where it cannot be loaded.
    fn stage_grid(&self, _device: i32) -> RtResult<u32> {
        Err(RtError::NOT_SUPPORTED)
    }

    /// Queue the staging kernel on `stream` (of `device`): `grid` blocks (at most
    /// [`Runtime::stage_grid`]) of [`stage::THREADS`] threads over the mailbox at device
    /// address `mail`.
    fn stage_launch(
        &self,
        _device: i32,
        _stream: StreamHandle,
        _mail: usize,
        _grid: u32,
    ) -> RtResult<()> {
        Err(RtError::NOT_SUPPORTED)
    }

    /// A number that identifies `stream` for its whole life and is never given to another
    /// stream, also one created at the same address after it was destroyed
    /// (`hipStreamGetId` / `cuStreamGetId`). "Not supported" by default.
    fn stream_id(&self, _stream: StreamHandle) -> RtResult<u64> {
        Err(RtError::NOT_SUPPORTED)
    }

    /// Allocate `len` bytes of page-locked host memory (portable across devices).
    fn host_alloc(&self, len: usize) -> RtResult<*mut u8>;
    /// Free memory from [`Runtime::host_alloc`].
    ///
    /// # Safety
    /// `ptr` must come from `host_alloc` of this runtime and not be used afterwards.
    unsafe fn host_free(&self, ptr: *mut u8);
    /// Page-lock `len` bytes of our own memory at `ptr` for copies (portable across devices),
    /// as one registration: the bounce pool registers several buffers at once this way, which
    /// costs the driver far less than one call per buffer. Where the runtime cannot, the pool
    /// allocates buffer by buffer with [`Runtime::host_alloc`] ([`Runtime::registers_host`]).
    fn host_register(&self, _ptr: *mut u8, _len: usize) -> RtResult<()> {
        Err(RtError::NOT_SUPPORTED)
    }
    /// Undo [`Runtime::host_register`].
    ///
    /// # Safety
    /// `ptr` must have been registered by `host_register` of this runtime, and no copy may
    /// still use the memory.
    unsafe fn host_unregister(&self, _ptr: *mut u8) {}
    /// Whether [`Runtime::host_register`] can work here (asked before memory is prepared for it).
    fn registers_host(&self) -> bool {
        false
    }
    /// Whether GPU-direct file I/O entry points are present (AMD `hipAmdFileRead/Write`).
    fn has_fastpath(&self) -> bool {
        false
    }
    /// Forget what the GPU-direct path knows about descriptor `fd` (its file was deregistered
    /// and the number may be reused).
    fn forget_file(&self, _fd: RawFd) {}
    /// GPU-direct transfer between the O_DIRECT descriptor `fd` and device address `dev`.
    /// Returns the byte count moved (possibly short).
    fn fastpath_io(
        &self,
        _dir: Direction,
        _fd: RawFd,
        _dev: usize,
        _size: u64,
        _offset: i64,
    ) -> Result<u64, FastpathFault> {
        Err(FastpathFault::Runtime(RtError::NOT_SUPPORTED))
    }
}

/// What only tools, benchmarks and tests ask of a runtime (the `hipfile` tool, the safe API's
/// device allocations): the core never calls these. Every method has a default, so a test's
/// fake runtime implements none of them.
pub trait RuntimeTools {
    /// Runtime version as the vendor reports it (HIP: major·10⁷ + minor·10⁵ + patch; CUDA: 1000·major + 10·minor).
    fn version(&self) -> i32 {
        0
    }
    /// True when the loaded library is the simulated runtime (`hipsim`).
    fn is_simulated(&self) -> bool {
        false
    }
    /// Number of visible devices (0 when none).
    fn device_count(&self) -> i32 {
        0
    }
    /// The calling thread's current device.
    fn current_device(&self) -> RtResult<i32> {
        Err(RtError::NOT_SUPPORTED)
    }
    /// Make `device` current on the calling thread.
    fn set_device(&self, _device: i32) -> RtResult<()> {
        Err(RtError::NOT_SUPPORTED)
    }
    /// Allocate `len` bytes of device memory on the current device (tools and benchmarks).
    fn device_alloc(&self, _len: usize) -> RtResult<usize> {
        Err(RtError::NOT_SUPPORTED)
    }
    /// Free memory from [`RuntimeTools::device_alloc`].
    fn device_free(&self, _addr: usize) {}
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
