//! The seam between the library and a GPU runtime, split by concept as cudarc splits a driver:
//! a small core every runtime has ([`Runtime`]), and capabilities the core hands out when the
//! runtime has them, each one a trait of its own:
//!
//! | capability | trait | what uses it |
//! | --- | --- | --- |
//! | streams, events, stream-ordered copies | [`Streams`] | the engine's pipelined copies, stream-ordered I/O, the safe API's streams |
//! | mapped pinned memory and the staging kernel | [`Staging`] | stream-ordered I/O's stages and mailboxes |
//! | GPU-direct file I/O | [`GpuDirect`] | the fastpath backend |
//! | registration of our own memory | [`HostRegistration`] | the bounce pool's fills |
//! | what only tools ask (version, devices, device memory) | [`Tools`] | `hipfile check`, benchmarks, the safe API |
//!
//! A runtime without a capability answers `None`, the default, so a fake implements only the
//! core; callers treat a missing capability as the runtime's "not supported". Device memory is
//! never dereferenced by the library: device addresses cross the seam as [`Address`].

use std::ffi::{c_int, c_void};
use std::fmt;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Platform, RtError, RtResult};
use crate::vocab::{Address, Direction, MemoryType};

/// The core of a GPU runtime: what every I/O may ask of it. Everything else is a capability
/// (the module comment), `None` unless the runtime overrides its accessor.
pub trait Runtime: Send + Sync + 'static {
    /// Which platform this is.
    fn platform(&self) -> Platform;
    /// One line saying which library was loaded and its version, for logs and `hipfile check`.
    fn describe(&self) -> String;

    /// Attributes of `ptr`. Pageable host memory is reported as [`MemoryType::Unregistered`]
    /// (runtimes that answer `InvalidValue` for it are normalised by the implementation only
    /// where the vendor documents that meaning).
    fn pointer_info(&self, ptr: Address) -> RtResult<PointerInfo>;
    /// Base and size of the allocation containing `ptr`.
    fn address_range(&self, ptr: Address) -> RtResult<(Address, usize)>;

    /// Make `device` current on the calling thread for a while (the fallback works with the
    /// buffer's device current); returns what to restore.
    fn enter_device(&self, device: i32) -> RtResult<DeviceRestore>;
    /// Undo [`Runtime::enter_device`]; failures are only logged.
    fn leave_device(&self, restore: DeviceRestore);

    /// Synchronous copy from host memory to device address `dst`.
    fn copy_to_device(&self, dst: Address, src: &[u8]) -> RtResult<()>;
    /// Synchronous copy from device address `src` into host memory.
    fn copy_from_device(&self, dst: &mut [u8], src: Address) -> RtResult<()>;

    /// Allocate `len` bytes of page-locked host memory (portable across devices).
    fn host_alloc(&self, len: usize) -> RtResult<*mut u8>;
    /// Free memory from [`Runtime::host_alloc`].
    ///
    /// # Safety
    /// `ptr` must come from `host_alloc` of this runtime and not be used afterwards.
    unsafe fn host_free(&self, ptr: *mut u8);

    /// The runtime's synchronous copy as one plain C entry point, when nothing else has to
    /// happen around a copy (see [`DirectCopy`]).
    fn direct_copy(&self) -> Option<DirectCopy> {
        None
    }
    /// Streams, events and stream-ordered copies.
    fn streams(&self) -> Option<&dyn Streams> {
        None
    }
    /// Mapped pinned memory and the staging kernel of stream-ordered I/O.
    fn staging(&self) -> Option<&dyn Staging> {
        None
    }
    /// GPU-direct file I/O entry points (AMD `hipAmdFileRead/Write`, NVIDIA's cuFile).
    fn gpu_direct(&self) -> Option<&dyn GpuDirect> {
        None
    }
    /// Page-locking of memory the library allocated itself.
    fn host_registration(&self) -> Option<&dyn HostRegistration> {
        None
    }
    /// What only tools, benchmarks and tests ask.
    fn tools(&self) -> Option<&dyn Tools> {
        None
    }
}

/// The capability look-ups the core makes where a missing capability is an error.
impl dyn Runtime {
    /// [`Runtime::streams`], "not supported" where the runtime has none.
    pub(crate) fn streams_or_unsupported(&self) -> RtResult<&dyn Streams> {
        self.streams().ok_or(RtError::NOT_SUPPORTED)
    }

    /// [`Runtime::staging`], "not supported" where the runtime has none.
    pub(crate) fn staging_or_unsupported(&self) -> RtResult<&dyn Staging> {
        self.staging().ok_or(RtError::NOT_SUPPORTED)
    }

    /// [`Streams::stream_query`], as the library's own threads ask it about an application's
    /// stream, with the stream's device current; "not ready" (as its default answers) where the
    /// runtime has no streams. The per-thread default stream's handle names the asking thread's
    /// own stream, so no thread but the one that queued on it can learn whether it is busy (a
    /// worker would see its own idle stream and take the application's for finished): it is
    /// "not ready", unless the device's context broke ([`Streams::context_broken`]), which
    /// failed every stream of the device.
    pub(crate) fn stream_query(&self, stream: StreamHandle) -> RtResult<()> {
        let Some(streams) = self.streams() else {
            return Err(RtError::NOT_READY);
        };
        if stream.is_per_thread() {
            return Err(streams.context_broken().unwrap_or(RtError::NOT_READY));
        }
        streams.stream_query(stream)
    }
}

/// Streams, events and the copies queued on streams.
pub trait Streams: Send + Sync {
    /// Stream-ordered copy host → device.
    ///
    /// # Safety
    /// `src..src+len` must stay valid and unchanged until the copy completes on `stream`.
    unsafe fn copy_to_device_async(
        &self,
        dst: Address,
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
        src: Address,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()>;

    /// Create a stream on the current device.
    fn stream_create(&self) -> RtResult<StreamHandle>;
    /// Destroy a stream created by [`Streams::stream_create`].
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
    /// The error that broke the current device's context, if one did: an error after which
    /// every call of the context answers the same (CUDA's `ILLEGAL_ADDRESS`, `LAUNCH_FAILED`
    /// and the like), so every stream of the device failed. `None` by default: nothing known,
    /// or a runtime where such a fault ends the process (ROCm's default), or where asking has a
    /// cost (ROCm's query of the NULL stream queues a marker behind every blocking stream).
    fn context_broken(&self) -> Option<RtError> {
        None
    }
    /// A number that identifies `stream` for its whole life and is never given to another
    /// stream, also one created at the same address after it was destroyed
    /// (`hipStreamGetId` / `cuStreamGetId`). "Not supported" by default.
    fn stream_id(&self, _stream: StreamHandle) -> RtResult<u64> {
        Err(RtError::NOT_SUPPORTED)
    }

    /// Create an event.
    fn event_create(&self) -> RtResult<EventHandle>;
    /// Record `event` on `stream`.
    fn event_record(&self, event: EventHandle, stream: StreamHandle) -> RtResult<()>;
    /// Wait for `event`.
    fn event_synchronize(&self, event: EventHandle) -> RtResult<()>;
    /// Destroy `event`.
    fn event_destroy(&self, event: EventHandle);
}

/// Host memory the device reads and writes while a kernel runs, and the staging kernel of
/// stream-ordered I/O (`runtime/stage/stage.c`) that does so.
pub trait Staging: Send + Sync {
    /// `len` bytes of page-locked host memory that devices can address too (its device alias
    /// in [`MappedHost::device`]).
    fn mapped_alloc(&self, len: usize) -> RtResult<MappedHost>;
    /// Free memory from [`Staging::mapped_alloc`]. No device work may still use it.
    fn mapped_free(&self, m: MappedHost);
    /// Load the staging kernel for `device` (once) and say how many blocks one launch may use
    /// (more than one only where the runtime can launch them co-resident). "Not supported"
    /// where it cannot be loaded.
    fn stage_grid(&self, device: i32) -> RtResult<u32>;
    /// Queue the staging kernel on `stream` (of `device`): `grid` blocks (at most
    /// [`Staging::stage_grid`]) of `stage::THREADS` threads over the mailbox at device
    /// address `mail`.
    fn stage_launch(
        &self,
        device: i32,
        stream: StreamHandle,
        mail: Address,
        grid: u32,
    ) -> RtResult<()>;
}

/// GPU-direct file I/O: the runtime moves bytes between a file and device memory itself.
pub trait GpuDirect: Send + Sync {
    /// Transfer between the `O_DIRECT` descriptor `fd` and device address `dev`. Returns the
    /// byte count moved (possibly short).
    fn fastpath_io(
        &self,
        dir: Direction,
        fd: RawFd,
        dev: Address,
        size: u64,
        offset: i64,
    ) -> Result<u64, FastpathFault>;
    /// Forget what the GPU-direct path knows about descriptor `fd` (its file was deregistered
    /// and the number may be reused).
    fn forget_file(&self, _fd: RawFd) {}
}

/// Page-locking of memory the library allocated itself, as one registration: the bounce pool
/// registers several buffers at once this way, which costs the driver far less than one
/// allocation per buffer. Without it the pool allocates buffer by buffer
/// ([`Runtime::host_alloc`]).
pub trait HostRegistration: Send + Sync {
    /// Page-lock `len` bytes of our own memory at `ptr` for copies (portable across devices).
    fn host_register(&self, ptr: *mut u8, len: usize) -> RtResult<()>;
    /// Undo [`HostRegistration::host_register`].
    ///
    /// # Safety
    /// `ptr` must have been registered by `host_register` of this runtime, and no copy may
    /// still use the memory.
    unsafe fn host_unregister(&self, ptr: *mut u8);
}

/// What only tools, benchmarks and tests ask of a runtime (the `hipfile` tool, the safe API's
/// device allocations): the I/O path never calls these.
pub trait Tools: Send + Sync {
    /// Runtime version as the vendor reports it (HIP: major·10⁷ + minor·10⁵ + patch; CUDA:
    /// 1000·major + 10·minor).
    fn version(&self) -> i32;
    /// True when the loaded library is the simulated runtime (`hipsim`).
    fn is_simulated(&self) -> bool;
    /// Number of visible devices (0 when none).
    fn device_count(&self) -> i32;
    /// Make `device` current on the calling thread.
    fn set_device(&self, device: i32) -> RtResult<()>;
    /// Allocate `len` bytes of device memory on the current device.
    fn device_alloc(&self, len: usize) -> RtResult<Address>;
    /// Free memory from [`Tools::device_alloc`].
    fn device_free(&self, addr: Address);
}

/// A runtime's synchronous copy as one plain C entry point, `copy(dst, src, bytes, kind)`
/// returning 0 or the runtime's error code. The engine calls it for one-chunk requests
/// instead of going through the trait (one indirect call and a wrapper less per small request,
/// target T9). A runtime offers it only when the entry point is all a copy takes: HIP's
/// `hipMemcpy`; CUDA copies run inside the caller's context and keep going through the trait.
#[derive(Clone, Copy, Debug)]
pub struct DirectCopy {
    /// The copy entry point.
    pub copy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> i32,
    /// Its `kind` argument for host → device.
    pub to_device: c_int,
    /// Its `kind` argument for device → host.
    pub to_host: c_int,
}

impl DirectCopy {
    /// Host memory `src` to device address `dst`.
    #[inline(always)]
    pub fn copy_to_device(&self, dst: Address, src: &[u8]) -> RtResult<()> {
        // SAFETY: `src` is valid host memory for its length; the runtime validates `dst`.
        let e = unsafe {
            (self.copy)(
                dst.get() as *mut c_void,
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
    pub fn copy_from_device(&self, dst: &mut [u8], src: Address) -> RtResult<()> {
        // SAFETY: `dst` is valid writable host memory; the runtime validates `src`.
        let e = unsafe {
            (self.copy)(
                dst.as_mut_ptr().cast(),
                src.get() as *const c_void,
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
/// [`Staging::mapped_free`].
#[derive(Debug)]
pub struct MappedHost {
    /// Host address (page-aligned).
    pub host: std::ptr::NonNull<u8>,
    /// The device's address of the same memory.
    pub device: Address,
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

impl PointerInfo {
    /// Pageable host memory the runtime does not know.
    pub const UNREGISTERED: PointerInfo = PointerInfo {
        memory_type: MemoryType::Unregistered,
        device: -1,
    };
}

/// An opaque stream as the application or the runtime knows it (`hipStream_t` / `CUstream`).
/// Zero is the default (NULL) stream. The runtimes (`runtime/` and its children) make and read
/// its value; above them, only the C door turns an application's stream into one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamHandle(pub(in crate::runtime) usize);

impl StreamHandle {
    /// The stream whose value C passed (`hipStream_t`, `CUstream`): never dereferenced; one
    /// that is not a stream is the runtime's to refuse.
    pub(crate) fn from_c_handle(value: usize) -> StreamHandle {
        StreamHandle(value)
    }

    /// Whether this is the per-thread default stream's handle (`hipStreamPerThread`,
    /// `CU_STREAM_PER_THREAD`: both 2), which names the calling thread's own stream.
    pub(crate) fn is_per_thread(self) -> bool {
        self.0 == 2
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
pub struct EventHandle(pub(in crate::runtime) usize);

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime whose every stream gives the same answer to a query, and whose context broke
    /// with the second field.
    struct AllAnswer(RtResult<()>, Option<RtError>);

    impl Runtime for AllAnswer {
        fn platform(&self) -> Platform {
            Platform::Nvidia
        }
        fn describe(&self) -> String {
            "every stream gives one answer".into()
        }
        fn pointer_info(&self, _: Address) -> RtResult<PointerInfo> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn address_range(&self, _: Address) -> RtResult<(Address, usize)> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn enter_device(&self, _: i32) -> RtResult<DeviceRestore> {
            Ok(DeviceRestore(None))
        }
        fn leave_device(&self, _: DeviceRestore) {}
        fn copy_to_device(&self, _: Address, _: &[u8]) -> RtResult<()> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn copy_from_device(&self, _: &mut [u8], _: Address) -> RtResult<()> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn host_alloc(&self, _: usize) -> RtResult<*mut u8> {
            Err(RtError::OUT_OF_MEMORY)
        }
        unsafe fn host_free(&self, _: *mut u8) {}
        fn streams(&self) -> Option<&dyn Streams> {
            Some(self)
        }
    }

    impl Streams for AllAnswer {
        unsafe fn copy_to_device_async(
            &self,
            _: Address,
            _: *const u8,
            _: usize,
            _: StreamHandle,
        ) -> RtResult<()> {
            Err(RtError::NOT_SUPPORTED)
        }
        unsafe fn copy_from_device_async(
            &self,
            _: *mut u8,
            _: Address,
            _: usize,
            _: StreamHandle,
        ) -> RtResult<()> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn stream_create(&self) -> RtResult<StreamHandle> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn stream_destroy(&self, _: StreamHandle) {}
        fn stream_synchronize(&self, _: StreamHandle) -> RtResult<()> {
            Ok(())
        }
        fn stream_device(&self, _: StreamHandle) -> RtResult<i32> {
            Ok(0)
        }
        fn stream_query(&self, _: StreamHandle) -> RtResult<()> {
            self.0
        }
        fn context_broken(&self) -> Option<RtError> {
            self.1
        }
        fn event_create(&self) -> RtResult<EventHandle> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn event_record(&self, _: EventHandle, _: StreamHandle) -> RtResult<()> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn event_synchronize(&self, _: EventHandle) -> RtResult<()> {
            Err(RtError::NOT_SUPPORTED)
        }
        fn event_destroy(&self, _: EventHandle) {}
    }

    #[test]
    fn the_per_thread_stream_is_never_taken_for_finished_by_another_thread() {
        let rt: &dyn Runtime = &AllAnswer(Ok(()), None);
        // The legacy handles (NULL, 1) and a created stream are the same on every thread.
        for h in [0, 1, 0x5555_0000] {
            assert_eq!(
                rt.stream_query(StreamHandle::from_c_handle(h)),
                Ok(()),
                "{h:#x}"
            );
        }
        // From a library thread, handle 2 would be that thread's own (idle) stream.
        assert_eq!(
            rt.stream_query(StreamHandle::from_c_handle(2)),
            Err(RtError::NOT_READY)
        );
    }

    #[test]
    fn the_per_thread_stream_fails_when_the_context_broke() {
        let per_thread = StreamHandle::from_c_handle(2);
        // Whatever the streams answer, handle 2 is "not ready" until the context broke.
        for query in [Ok(()), Err(RtError(700)), Err(RtError::INVALID_VALUE)] {
            let rt: &dyn Runtime = &AllAnswer(query, None);
            assert_eq!(
                rt.stream_query(per_thread),
                Err(RtError::NOT_READY),
                "{query:?}"
            );
            let rt: &dyn Runtime = &AllAnswer(query, Some(RtError(719)));
            assert_eq!(rt.stream_query(per_thread), Err(RtError(719)), "{query:?}");
        }
    }
}
