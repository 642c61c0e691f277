//! The AMD HIP runtime (`libamdhip64.so`), loaded at run time.
//!
//! Required entry points are resolved eagerly when the library is loaded (a missing one makes
//! the load fail with a message, never a panic); optional ones are `Option`s. The fastpath entry
//! points `hipAmdFileRead/Write` are looked up through `hipGetProcAddress`
//! and simply disable the fastpath when absent.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::os::fd::RawFd;

use libloading::os::unix::Library;

use super::symbols::{opt_sym, sym};

use super::RuntimeTools;
use super::{
    DeviceRestore, EventHandle, FastpathFault, HostFn, Platform, PointerInfo, RtError, RtResult,
    Runtime, StreamHandle,
};
use crate::vocab::{Direction, MemoryType};

type HipError = c_int;

/// `hipPointerAttribute_t` (32 bytes in every ROCm version; the type numbering changed in 6.0).
#[repr(C)]
struct HipPointerAttribute {
    memory_type: c_int,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    is_managed: c_int,
    allocation_flags: c_uint,
}

impl Default for HipPointerAttribute {
    fn default() -> Self {
        HipPointerAttribute {
            memory_type: 0,
            device: -1,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
        }
    }
}

/// `hipAmdFileHandle_t`: an 8-byte union passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct HipAmdFileHandle {
    handle: u64,
}

type FileRwFn =
    unsafe extern "C" fn(HipAmdFileHandle, *mut c_void, u64, i64, *mut u64, *mut i32) -> HipError;

const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
const HIP_HOST_MALLOC_PORTABLE: c_uint = 0x1;
const HIP_HOST_MALLOC_MAPPED: c_uint = 0x2;
const HIP_STREAM_NON_BLOCKING: c_uint = 0x1;
const HIP_STREAM_WAIT_VALUE_EQ: c_uint = 0x1;
/// First HIP_VERSION with the ROCm 6 `hipMemoryType` numbering.
const ROCM6: i32 = 60_000_000;

/// Typed entry points of `libamdhip64`.
struct HipApi {
    init: unsafe extern "C" fn(c_uint) -> HipError,
    runtime_get_version: unsafe extern "C" fn(*mut c_int) -> HipError,
    get_device_count: unsafe extern "C" fn(*mut c_int) -> HipError,
    get_device: unsafe extern "C" fn(*mut c_int) -> HipError,
    set_device: unsafe extern "C" fn(c_int) -> HipError,
    pointer_get_attributes:
        unsafe extern "C" fn(*mut HipPointerAttribute, *const c_void) -> HipError,
    mem_get_address_range:
        unsafe extern "C" fn(*mut *mut c_void, *mut usize, *mut c_void) -> HipError,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError,
    memcpy_async:
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, *mut c_void) -> HipError,
    stream_create: unsafe extern "C" fn(*mut *mut c_void) -> HipError,
    // Optional: our streams are created non-blocking when the runtime has it.
    stream_create_with_flags: Option<unsafe extern "C" fn(*mut *mut c_void, c_uint) -> HipError>,
    // Optional: stream-ordered I/O holds a stream on a mapped word with it.
    stream_wait_value32:
        Option<unsafe extern "C" fn(*mut c_void, *mut c_void, u32, c_uint, u32) -> HipError>,
    host_get_device_pointer:
        Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, c_uint) -> HipError>,
    // Optional: the blocking hold of stream-ordered I/O where wait-values are missing (HIP 5.2,
    // Debian 12's, lacks it).
    launch_host_func: Option<unsafe extern "C" fn(*mut c_void, HostFn, *mut c_void) -> HipError>,
    stream_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    stream_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    stream_get_device: Option<unsafe extern "C" fn(*mut c_void, *mut c_int) -> HipError>,
    event_create: unsafe extern "C" fn(*mut *mut c_void) -> HipError,
    event_record: unsafe extern "C" fn(*mut c_void, *mut c_void) -> HipError,
    event_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    event_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    free: unsafe extern "C" fn(*mut c_void) -> HipError,
    host_malloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    host_free: unsafe extern "C" fn(*mut c_void) -> HipError,
    // Optional: not called by the library itself.
    file_read: Option<FileRwFn>,
    file_write: Option<FileRwFn>,
}

/// The HIP runtime.
pub struct HipRuntime {
    api: HipApi,
    version: i32,
    device_count: i32,
    simulated: bool,
    path: String,
}

fn check(e: HipError) -> RtResult<()> {
    if e == 0 {
        Ok(())
    } else {
        Err(RtError(e))
    }
}

thread_local! {
    /// Whether `hipInit(0)` already ran on this thread (a HIP runtime crash
    /// work-around for threads that never touched HIP before the fastpath).
    static THREAD_INIT: Cell<bool> = const { Cell::new(false) };
}

impl HipRuntime {
    /// Bind the HIP API in `lib` (already opened by the loader) and initialise it.
    pub fn bind(lib: Library, path: &str) -> Result<Self, String> {
        let get_proc_address: Option<
            unsafe extern "C" fn(
                *const c_char,
                *mut *mut c_void,
                c_int,
                u64,
                *mut c_int,
            ) -> HipError,
        > = opt_sym(&lib, "hipGetProcAddress");
        let mut api = HipApi {
            init: sym(&lib, "hipInit")?,
            runtime_get_version: sym(&lib, "hipRuntimeGetVersion")?,
            get_device_count: sym(&lib, "hipGetDeviceCount")?,
            get_device: sym(&lib, "hipGetDevice")?,
            set_device: sym(&lib, "hipSetDevice")?,
            pointer_get_attributes: sym(&lib, "hipPointerGetAttributes")?,
            mem_get_address_range: sym(&lib, "hipMemGetAddressRange")?,
            memcpy: sym(&lib, "hipMemcpy")?,
            memcpy_async: sym(&lib, "hipMemcpyAsync")?,
            stream_create: sym(&lib, "hipStreamCreate")?,
            stream_create_with_flags: opt_sym(&lib, "hipStreamCreateWithFlags"),
            stream_wait_value32: opt_sym(&lib, "hipStreamWaitValue32"),
            launch_host_func: opt_sym(&lib, "hipLaunchHostFunc"),
            host_get_device_pointer: opt_sym(&lib, "hipHostGetDevicePointer"),
            stream_destroy: sym(&lib, "hipStreamDestroy")?,
            stream_synchronize: sym(&lib, "hipStreamSynchronize")?,
            stream_get_device: opt_sym(&lib, "hipStreamGetDevice"),
            event_create: sym(&lib, "hipEventCreate")?,
            event_record: sym(&lib, "hipEventRecord")?,
            event_synchronize: sym(&lib, "hipEventSynchronize")?,
            event_destroy: sym(&lib, "hipEventDestroy")?,
            malloc: sym(&lib, "hipMalloc")?,
            free: sym(&lib, "hipFree")?,
            host_malloc: sym(&lib, "hipHostMalloc")?,
            host_free: sym(&lib, "hipHostFree")?,
            file_read: None,
            file_write: None,
        };
        // SAFETY: hipInit takes a flags integer.
        let rc = unsafe { (api.init)(0) };
        if rc != 0 {
            return Err(format!("hipInit failed with {rc}"));
        }
        let mut version = 0;
        // SAFETY: valid out-pointer.
        let rc = unsafe { (api.runtime_get_version)(&mut version) };
        if rc != 0 {
            return Err(format!("hipRuntimeGetVersion failed with {rc}"));
        }
        let mut count = 0;
        // SAFETY: valid out-pointer. hipErrorNoDevice leaves the count at 0.
        if unsafe { (api.get_device_count)(&mut count) } != 0 {
            count = 0;
        }
        if let Some(gpa) = get_proc_address {
            let lookup = |name: &CStr| -> Option<FileRwFn> {
                let mut p: *mut c_void = std::ptr::null_mut();
                // SAFETY: valid name and out-pointer; a NULL status pointer is allowed.
                let rc = unsafe { gpa(name.as_ptr(), &mut p, version, 0, std::ptr::null_mut()) };
                if rc != 0 || p.is_null() {
                    None
                } else {
                    // SAFETY: hipGetProcAddress returned the entry point of this documented
                    // signature.
                    Some(unsafe { std::mem::transmute::<*mut c_void, FileRwFn>(p) })
                }
            };
            api.file_read = lookup(c"hipAmdFileRead");
            api.file_write = lookup(c"hipAmdFileWrite");
            if api.file_read.is_none() || api.file_write.is_none() {
                api.file_read = None;
                api.file_write = None;
            }
        }
        let simulated =
            opt_sym::<unsafe extern "C" fn() -> c_int>(&lib, "hipsimIsSimulator").is_some();
        // Never dlclose a GPU runtime: other code in the process may hold its pointers.
        std::mem::forget(lib);
        Ok(HipRuntime {
            api,
            version,
            device_count: count,
            simulated,
            path: path.to_string(),
        })
    }

    fn memory_type(&self, raw: c_int, managed: bool) -> MemoryType {
        if managed {
            return MemoryType::Managed;
        }
        if self.version >= ROCM6 {
            match raw {
                0 => MemoryType::Unregistered,
                1 => MemoryType::Host,
                2 => MemoryType::Device,
                3 => MemoryType::Managed,
                10 => MemoryType::Array,
                _ => MemoryType::Unified,
            }
        } else {
            match raw {
                0 => MemoryType::Host,
                1 => MemoryType::Device,
                2 => MemoryType::Array,
                _ => MemoryType::Unified,
            }
        }
    }
}

impl Runtime for HipRuntime {
    fn platform(&self) -> Platform {
        Platform::Amd
    }

    fn describe(&self) -> String {
        let v = self.version;
        format!(
            "HIP {}.{}.{} from {}{}, {} device(s), fastpath entry points {}",
            v / 10_000_000,
            (v / 100_000) % 100,
            v % 100_000,
            self.path,
            if self.simulated {
                " (simulated GPU runtime)"
            } else {
                ""
            },
            self.device_count,
            if self.has_fastpath() {
                "present"
            } else {
                "absent"
            }
        )
    }

    fn pointer_info(&self, ptr: usize) -> RtResult<PointerInfo> {
        let mut attr = HipPointerAttribute::default();
        // SAFETY: valid out-pointer; the runtime only inspects the address.
        let rc = unsafe { (self.api.pointer_get_attributes)(&mut attr, ptr as *const c_void) };
        if rc == RtError::INVALID_VALUE.0 && ptr != 0 {
            // Memory the runtime does not know: pageable host memory. ROCm 5 answers so, and
            // AMD's documentation says every version does (ROCm 6 and later answer
            // hipMemoryTypeUnregistered instead, below). Only NULL stays an error.
            return Ok(PointerInfo {
                memory_type: MemoryType::Unregistered,
                device: -1,
            });
        }
        check(rc)?;
        Ok(PointerInfo {
            memory_type: self.memory_type(attr.memory_type, attr.is_managed != 0),
            device: attr.device,
        })
    }

    fn address_range(&self, ptr: usize) -> RtResult<(usize, usize)> {
        let mut base: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: valid out-pointers.
        check(unsafe {
            (self.api.mem_get_address_range)(&mut base, &mut size, ptr as *mut c_void)
        })?;
        Ok((base as usize, size))
    }

    fn enter_device(&self, device: i32) -> RtResult<DeviceRestore> {
        let current = self.current_device()?;
        if device < 0 || device == current {
            return Ok(DeviceRestore(None));
        }
        self.set_device(device)?;
        Ok(DeviceRestore(Some(current as usize)))
    }

    fn leave_device(&self, restore: DeviceRestore) {
        if let Some(prev) = restore.0 {
            if let Err(e) = self.set_device(prev as i32) {
                tracing::warn!(target: "hipfile", "restoring the current HIP device {prev} failed: {e}");
            }
        }
    }

    fn thread_init(&self) {
        THREAD_INIT.with(|done| {
            if !done.get() {
                // SAFETY: hipInit takes a flags integer; repeated calls are harmless.
                unsafe { (self.api.init)(0) };
                done.set(true);
            }
        });
    }

    fn direct_copy(&self) -> Option<super::DirectCopy> {
        Some(super::DirectCopy {
            copy: self.api.memcpy,
            to_device: HIP_MEMCPY_HOST_TO_DEVICE,
            to_host: HIP_MEMCPY_DEVICE_TO_HOST,
        })
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> RtResult<()> {
        // SAFETY: `src` is valid host memory for its length; the runtime validates `dst`.
        check(unsafe {
            (self.api.memcpy)(
                dst as *mut c_void,
                src.as_ptr().cast(),
                src.len(),
                HIP_MEMCPY_HOST_TO_DEVICE,
            )
        })
    }

    fn copy_from_device(&self, dst: &mut [u8], src: usize) -> RtResult<()> {
        // SAFETY: `dst` is valid writable host memory; the runtime validates `src`.
        check(unsafe {
            (self.api.memcpy)(
                dst.as_mut_ptr().cast(),
                src as *const c_void,
                dst.len(),
                HIP_MEMCPY_DEVICE_TO_HOST,
            )
        })
    }

    unsafe fn copy_to_device_async(
        &self,
        dst: usize,
        src: *const u8,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        // SAFETY: the caller keeps `src` valid until the copy completes on `stream`.
        check(unsafe {
            (self.api.memcpy_async)(
                dst as *mut c_void,
                src.cast(),
                len,
                HIP_MEMCPY_HOST_TO_DEVICE,
                stream.0 as *mut c_void,
            )
        })
    }

    unsafe fn copy_from_device_async(
        &self,
        dst: *mut u8,
        src: usize,
        len: usize,
        stream: StreamHandle,
    ) -> RtResult<()> {
        // SAFETY: the caller keeps `dst` valid until the copy completes on `stream`.
        check(unsafe {
            (self.api.memcpy_async)(
                dst.cast(),
                src as *const c_void,
                len,
                HIP_MEMCPY_DEVICE_TO_HOST,
                stream.0 as *mut c_void,
            )
        })
    }

    /// Non-blocking when the runtime can (our copies never wait for the legacy default
    /// stream, which an application's stream-ordered I/O may hold).
    fn stream_create(&self) -> RtResult<StreamHandle> {
        let mut s: *mut c_void = std::ptr::null_mut();
        match self.api.stream_create_with_flags {
            // SAFETY: valid out-pointer.
            Some(f) => check(unsafe { f(&mut s, HIP_STREAM_NON_BLOCKING) })?,
            // SAFETY: valid out-pointer.
            None => check(unsafe { (self.api.stream_create)(&mut s) })?,
        }
        Ok(StreamHandle(s as usize))
    }

    fn signal_alloc(&self) -> RtResult<super::Signal> {
        let (Some(alias), Some(_)) = (
            self.api.host_get_device_pointer,
            self.api.stream_wait_value32,
        ) else {
            return Err(RtError::NOT_SUPPORTED);
        };
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe {
            (self.api.host_malloc)(
                &mut p,
                64,
                HIP_HOST_MALLOC_PORTABLE | HIP_HOST_MALLOC_MAPPED,
            )
        })?;
        let Some(host) = std::ptr::NonNull::new(p.cast::<u32>()) else {
            return Err(RtError::OUT_OF_MEMORY);
        };
        let mut dev: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `p` is mapped pinned memory just allocated.
        if let Err(e) = check(unsafe { alias(&mut dev, p, 0) }) {
            // SAFETY: allocated above, not shared.
            unsafe { (self.api.host_free)(p) };
            return Err(e);
        }
        // SAFETY: 64 bytes of pinned memory, page-aligned, ours until signal_free.
        Ok(unsafe { super::Signal::new(host, dev as usize) })
    }

    fn stream_wait_value32(
        &self,
        stream: StreamHandle,
        signal: &super::Signal,
        value: u32,
    ) -> RtResult<()> {
        let wait = self.api.stream_wait_value32.ok_or(RtError::NOT_SUPPORTED)?;
        // SAFETY: the word is mapped pinned memory alive while the signal is; the runtime
        // validates the stream.
        check(unsafe {
            wait(
                stream.0 as *mut c_void,
                signal.device as *mut c_void,
                value,
                HIP_STREAM_WAIT_VALUE_EQ,
                u32::MAX,
            )
        })
    }

    fn stream_destroy(&self, stream: StreamHandle) {
        // SAFETY: the stream came from stream_create.
        unsafe { (self.api.stream_destroy)(stream.0 as *mut c_void) };
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        check(unsafe { (self.api.stream_synchronize)(stream.0 as *mut c_void) })
    }

    fn stream_device(&self, stream: StreamHandle) -> RtResult<i32> {
        match self.api.stream_get_device {
            Some(f) => {
                let mut d = 0;
                // SAFETY: valid out-pointer; the runtime validates the handle.
                check(unsafe { f(stream.0 as *mut c_void, &mut d) })?;
                Ok(d)
            }
            None => self.current_device(),
        }
    }

    unsafe fn launch_host_func(
        &self,
        stream: StreamHandle,
        f: HostFn,
        data: *mut c_void,
    ) -> RtResult<()> {
        let launch = self.api.launch_host_func.ok_or(RtError::NOT_SUPPORTED)?;
        // SAFETY: the caller guarantees `f`/`data` per the trait contract.
        check(unsafe { launch(stream.0 as *mut c_void, f, data) })
    }

    fn event_create(&self) -> RtResult<EventHandle> {
        let mut e: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.event_create)(&mut e) })?;
        Ok(EventHandle(e as usize))
    }

    fn event_record(&self, event: EventHandle, stream: StreamHandle) -> RtResult<()> {
        // SAFETY: the runtime validates both handles.
        check(unsafe { (self.api.event_record)(event.0 as *mut c_void, stream.0 as *mut c_void) })
    }

    fn event_synchronize(&self, event: EventHandle) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        check(unsafe { (self.api.event_synchronize)(event.0 as *mut c_void) })
    }

    fn event_destroy(&self, event: EventHandle) {
        // SAFETY: the event came from event_create.
        unsafe { (self.api.event_destroy)(event.0 as *mut c_void) };
    }

    fn host_alloc(&self, len: usize) -> RtResult<*mut u8> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.host_malloc)(&mut p, len, HIP_HOST_MALLOC_PORTABLE) })?;
        Ok(p.cast())
    }

    unsafe fn host_free(&self, ptr: *mut u8) {
        // SAFETY: the caller passes memory from host_alloc.
        unsafe { (self.api.host_free)(ptr.cast()) };
    }

    fn has_fastpath(&self) -> bool {
        self.api.file_read.is_some() && self.api.file_write.is_some()
    }

    fn fastpath_io(
        &self,
        dir: Direction,
        fd: RawFd,
        dev: usize,
        size: u64,
        offset: i64,
    ) -> Result<u64, FastpathFault> {
        let f = match dir {
            Direction::Read => self.api.file_read,
            Direction::Write => self.api.file_write,
        }
        .ok_or(FastpathFault::Runtime(RtError::NOT_SUPPORTED))?;
        self.thread_init();
        let handle = HipAmdFileHandle {
            handle: fd as u32 as u64,
        };
        let mut bytes = 0u64;
        let mut status = 0i32;
        // SAFETY: the entry point has the documented signature; out-pointers are valid; the
        // kernel path validates the device address and descriptor.
        let rc = unsafe {
            f(
                handle,
                dev as *mut c_void,
                size,
                offset,
                &mut bytes,
                &mut status,
            )
        };
        if status != 0 {
            return Err(FastpathFault::Os(status.abs()));
        }
        if rc != 0 {
            return Err(FastpathFault::Runtime(RtError(rc)));
        }
        Ok(bytes)
    }
}

impl RuntimeTools for HipRuntime {
    fn current_device(&self) -> RtResult<i32> {
        let mut d = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.get_device)(&mut d) })?;
        Ok(d)
    }
    fn version(&self) -> i32 {
        self.version
    }
    fn is_simulated(&self) -> bool {
        self.simulated
    }
    fn device_count(&self) -> i32 {
        self.device_count
    }
    fn set_device(&self, device: i32) -> RtResult<()> {
        // SAFETY: plain integer argument.
        check(unsafe { (self.api.set_device)(device) })
    }
    fn device_alloc(&self, len: usize) -> RtResult<usize> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { (self.api.malloc)(&mut p, len) })?;
        Ok(p as usize)
    }
    fn device_free(&self, addr: usize) {
        // SAFETY: the address came from device_alloc.
        unsafe { (self.api.free)(addr as *mut c_void) };
    }
}
