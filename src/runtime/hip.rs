//! The AMD HIP runtime (`libamdhip64.so`), loaded at run time.
//!
//! Required entry points are resolved eagerly when the library is loaded (a missing one makes
//! the load fail with a message, never a panic); optional ones are `Option`s. The fastpath entry
//! points `hipAmdFileRead/Write` are looked up through `hipGetProcAddress`
//! and simply disable the fastpath when absent.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use libloading::os::unix::Library;

use super::stage;
use super::symbols::{opt_sym, sym};

use super::RuntimeTools;
use super::{
    DeviceRestore, EventHandle, FastpathFault, Platform, PointerInfo, RtError, RtResult, Runtime,
    StreamHandle,
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

/// `hipModuleLaunchKernel(f, grid xyz, block xyz, shared bytes, stream, params, extra)`.
type ModuleLaunch = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> HipError;

/// `hipModuleLaunchCooperativeKernel(f, grid xyz, block xyz, shared bytes, stream, params)`.
type ModuleLaunchCooperative = unsafe extern "C" fn(
    *mut c_void,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    *mut c_void,
    *mut *mut c_void,
) -> HipError;

type FileRwFn =
    unsafe extern "C" fn(HipAmdFileHandle, *mut c_void, u64, i64, *mut u64, *mut i32) -> HipError;

const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
const HIP_HOST_MALLOC_PORTABLE: c_uint = 0x1;
const HIP_HOST_MALLOC_MAPPED: c_uint = 0x2;
const HIP_STREAM_NON_BLOCKING: c_uint = 0x1;
/// `hipErrorCooperativeLaunchTooLarge`.
const HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: i32 = 720;
/// Blocks of one staging launch where a cooperative launch puts them co-resident (as on CUDA,
/// where four copied at 49 GB/s on the H200 and one at 35).
const STAGE_GRID: u32 = 4;
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
    // Optional: the staging kernel of stream-ordered I/O reads host-mapped memory through it.
    host_get_device_pointer:
        Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, c_uint) -> HipError>,
    // Optional: the staging kernel of stream-ordered I/O (loaded from the embedded code objects,
    // launched on the application's streams).
    module_load_data: Option<unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> HipError>,
    module_get_function:
        Option<unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> HipError>,
    module_launch_kernel: Option<ModuleLaunch>,
    module_launch_cooperative_kernel: Option<ModuleLaunchCooperative>,
    // Optional: whether a stream failed (the staging kernel's waits look at it now and then).
    stream_query: Option<unsafe extern "C" fn(*mut c_void) -> HipError>,
    // Optional (ROCm 6.2 and later): tells a stream from a later one at the same address.
    stream_get_id: Option<unsafe extern "C" fn(*mut c_void, *mut u64) -> HipError>,
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
    /// The staging kernel per device (its function handle, or why not), loaded on first use.
    stage: [OnceLock<RtResult<usize>>; MAX_DEVICES],
    /// Blocks per staging launch, per device: [`STAGE_GRID`] until a cooperative launch of that
    /// many was refused, then 1.
    stage_grid: [AtomicU32; MAX_DEVICES],
}

/// Devices whose staging kernel the runtime keeps track of.
const MAX_DEVICES: usize = 64;

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
            host_get_device_pointer: opt_sym(&lib, "hipHostGetDevicePointer"),
            module_load_data: opt_sym(&lib, "hipModuleLoadData"),
            module_get_function: opt_sym(&lib, "hipModuleGetFunction"),
            module_launch_kernel: opt_sym(&lib, "hipModuleLaunchKernel"),
            module_launch_cooperative_kernel: opt_sym(&lib, "hipModuleLaunchCooperativeKernel"),
            stream_query: opt_sym(&lib, "hipStreamQuery"),
            stream_get_id: opt_sym(&lib, "hipStreamGetId"),
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
            stage: [const { OnceLock::new() }; MAX_DEVICES],
            stage_grid: [const { AtomicU32::new(STAGE_GRID) }; MAX_DEVICES],
        })
    }

    /// Load the staging kernel on `device`: the embedded AMD code objects in turn (the runtime
    /// refuses those of another architecture), then the PTX for HIP on NVIDIA GPUs.
    fn load_stage(&self, device: i32) -> RtResult<usize> {
        let (Some(load), Some(get), Some(_), Some(_)) = (
            self.api.module_load_data,
            self.api.module_get_function,
            self.api.module_launch_kernel,
            self.api.host_get_device_pointer,
        ) else {
            return Err(RtError::NOT_SUPPORTED);
        };
        let restore = self.enter_device(device)?;
        let images = stage::AMDGPU
            .iter()
            .map(|&(_, image)| image)
            .chain([stage::PTX]);
        let mut refused = RtError::NOT_SUPPORTED;
        let mut found = None;
        for image in images {
            let mut module: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the image is a whole code object (or NUL-terminated
            // PTX text) that lives for the program's life.
            match check(unsafe { load(&mut module, image.as_ptr().cast()) }) {
                Ok(()) => {
                    let mut f: *mut c_void = std::ptr::null_mut();
                    // SAFETY: valid out-pointer, a module just loaded, a NUL-terminated name.
                    found = Some(
                        check(unsafe { get(&mut f, module, stage::NAME.as_ptr()) })
                            .map(|()| f as usize),
                    );
                    break;
                }
                Err(e) => refused = e,
            }
        }
        self.leave_device(restore);
        let loaded = found.unwrap_or(Err(refused));
        if let Err(e) = &loaded {
            tracing::warn!(target: "hipfile", "the staging kernel of stream-ordered I/O cannot be loaded on HIP device {device} (last answer: {e}; the library carries code objects for {}): stream-ordered operations on it run when they are submitted, after their stream's earlier work", stage::AMDGPU.iter().map(|(g, _)| *g).collect::<Vec<_>>().join(", "));
        }
        loaded
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

    fn mapped_alloc(&self, len: usize) -> RtResult<super::MappedHost> {
        let alias = self
            .api
            .host_get_device_pointer
            .ok_or(RtError::NOT_SUPPORTED)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer. Pinned memory from hipHostMalloc is coherent
        // (fine-grained) by default: the kernel sees the host's stores and the host the kernel's.
        check(unsafe {
            (self.api.host_malloc)(
                &mut p,
                len.max(1),
                HIP_HOST_MALLOC_PORTABLE | HIP_HOST_MALLOC_MAPPED,
            )
        })?;
        let Some(host) = std::ptr::NonNull::new(p.cast::<u8>()) else {
            return Err(RtError::OUT_OF_MEMORY);
        };
        let mut dev: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `p` is mapped pinned memory just allocated.
        if let Err(e) = check(unsafe { alias(&mut dev, p, 0) }) {
            // SAFETY: allocated above, not shared.
            unsafe { (self.api.host_free)(p) };
            return Err(e);
        }
        Ok(super::MappedHost {
            host,
            device: dev as usize,
        })
    }

    fn stage_grid(&self, device: i32) -> RtResult<u32> {
        let at = usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?;
        let slot = self.stage.get(at).ok_or(RtError::INVALID_DEVICE)?;
        (*slot.get_or_init(|| self.load_stage(device)))?;
        Ok(match self.api.module_launch_cooperative_kernel {
            Some(_) => self.stage_grid[at].load(Ordering::Relaxed),
            None => 1,
        })
    }

    fn stage_launch(
        &self,
        device: i32,
        stream: StreamHandle,
        mail: usize,
        grid: u32,
    ) -> RtResult<()> {
        let at = usize::try_from(device).map_err(|_| RtError::INVALID_DEVICE)?;
        let f = self
            .stage
            .get(at)
            .and_then(|s| s.get())
            .copied()
            .ok_or(RtError::NOT_SUPPORTED)?? as *mut c_void;
        let restore = self.enter_device(device)?;
        let mut mail_arg = mail as u64;
        let mut params = [(&mut mail_arg as *mut u64).cast::<c_void>()];
        let s = stream.0 as *mut c_void;
        let block = stage::THREADS;
        let r = match (grid, self.api.module_launch_cooperative_kernel) {
            (g, Some(coop)) if g > 1 => {
                // SAFETY: the kernel takes (StageMail *); `params` points at it for the duration
                // of the call, which copies it; the runtime validates the stream.
                let r = check(unsafe { coop(f, g, 1, 1, block, 1, 1, 0, s, params.as_mut_ptr()) });
                if let Err(e) = r {
                    if e.0 == HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE || e == RtError::NOT_SUPPORTED
                    {
                        // One block from now on; the caller asks stage_grid again and retries.
                        self.stage_grid[at].store(1, Ordering::Relaxed);
                    }
                }
                r
            }
            _ => match self.api.module_launch_kernel {
                // SAFETY: as above, one block.
                Some(launch) => check(unsafe {
                    launch(
                        f,
                        1,
                        1,
                        1,
                        block,
                        1,
                        1,
                        0,
                        s,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                }),
                None => Err(RtError::NOT_SUPPORTED),
            },
        };
        self.leave_device(restore);
        r
    }

    fn stream_query(&self, stream: StreamHandle) -> RtResult<()> {
        let query = self.api.stream_query.ok_or(RtError::NOT_READY)?;
        // SAFETY: the runtime validates the handle.
        check(unsafe { query(stream.0 as *mut c_void) })
    }

    fn stream_id(&self, stream: StreamHandle) -> RtResult<u64> {
        let get = self.api.stream_get_id.ok_or(RtError::NOT_SUPPORTED)?;
        let mut id = 0u64;
        // SAFETY: valid out-pointer; the runtime validates the stream.
        check(unsafe { get(stream.0 as *mut c_void, &mut id) })?;
        Ok(id)
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
