//! The engine: libhipfile.so.0's exported C ABI, found once at run time.
//!
//! This library never links the `hipfile` crate: a process that loads both libcufile.so.0 and
//! libhipfile.so.0 (a consumer of each, or `hipfile check` inspecting itself) must have one
//! driver, one set of registrations and one worker pool. So libhipfile.so.0 is looked up,
//! in order: already loaded (`RTLD_NOLOAD`: then it is that very engine), next to this file
//! (`libhipfile.so.0`, then `libhipfile.so` as cargo's target directory names it), then the
//! loader's default search. Its symbols are resolved once into a table of raw pointers
//! ([`Raw`]); [`Engine`] wraps them into calls that take and give Rust values. When the
//! library cannot be found, [`engine`] says so once in the log and every cuFile call answers
//! `CU_FILE_PLATFORM_NOT_SUPPORTED` (or -1 with that errno).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

use crate::hip_abi::*;
use cufile_abi::{code, CUfileError_t};

type Op0 = unsafe extern "C" fn() -> HipError;

/// The entry points of libhipfile.so.0 we call, as raw pointers.
struct Raw {
    handle_register: unsafe extern "C" fn(*mut *mut c_void, *mut HipDescr) -> HipError,
    handle_deregister: unsafe extern "C" fn(*mut c_void),
    buf_register: unsafe extern "C" fn(*const c_void, usize, c_int) -> HipError,
    buf_deregister: unsafe extern "C" fn(*const c_void) -> HipError,
    read: unsafe extern "C" fn(*mut c_void, *mut c_void, usize, i64, i64) -> isize,
    write: unsafe extern "C" fn(*mut c_void, *const c_void, usize, i64, i64) -> isize,
    driver_open: Op0,
    driver_close: Op0,
    use_count: unsafe extern "C" fn() -> i64,
    get_properties: unsafe extern "C" fn(*mut HipProps) -> HipError,
    set_poll_mode: unsafe extern "C" fn(bool, usize) -> HipError,
    set_max_direct_io_size: unsafe extern "C" fn(usize) -> HipError,
    set_max_cache_size: unsafe extern "C" fn(usize) -> HipError,
    set_max_pinned_mem_size: unsafe extern "C" fn(usize) -> HipError,
    batch_setup: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> HipError,
    batch_submit: unsafe extern "C" fn(*mut c_void, c_uint, *mut c_void, c_uint) -> HipError,
    batch_get_status: unsafe extern "C" fn(
        *mut c_void,
        c_uint,
        *mut c_uint,
        *mut c_void,
        *mut c_void,
    ) -> HipError,
    batch_cancel: unsafe extern "C" fn(*mut c_void) -> HipError,
    batch_destroy: unsafe extern "C" fn(*mut c_void),
    read_async: AsyncFn,
    write_async: AsyncFn,
    stream_register: unsafe extern "C" fn(*mut c_void, c_uint) -> HipError,
    stream_deregister: unsafe extern "C" fn(*mut c_void) -> HipError,
    get_size: unsafe extern "C" fn(c_int, *mut usize) -> HipError,
    get_bool: unsafe extern "C" fn(c_int, *mut bool) -> HipError,
    set_size: unsafe extern "C" fn(c_int, usize) -> HipError,
    set_bool: unsafe extern "C" fn(c_int, bool) -> HipError,
    stats_l1: unsafe extern "C" fn(*mut u8) -> HipError,
    stats_l2: unsafe extern "C" fn(*mut u8) -> HipError,
    stats_l3: unsafe extern "C" fn(*mut u8) -> HipError,
}

/// `hipFileReadAsync` / `hipFileWriteAsync`.
pub(crate) type AsyncFn = unsafe extern "C" fn(
    *mut c_void,
    *mut c_void,
    *mut usize,
    *mut i64,
    *mut i64,
    *mut isize,
    *mut c_void,
) -> HipError;

/// A failed hipFile call: its `hipFileError_t`.
pub(crate) type HipResult<T> = Result<T, HipError>;

fn check(e: HipError) -> HipResult<()> {
    if e.err == 0 {
        Ok(())
    } else {
        Err(e)
    }
}

/// libhipfile.so.0, loaded.
pub(crate) struct Engine {
    raw: Raw,
}

static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();

/// The engine, or `None` after one log line saying why it could not be loaded.
pub(crate) fn engine() -> Option<&'static Engine> {
    ENGINE.get_or_init(load).as_ref().ok()
}

/// The engine, or the status every call answers without one.
pub(crate) fn eng() -> Result<&'static Engine, CUfileError_t> {
    engine().ok_or(CUfileError_t::op(code::PLATFORM_NOT_SUPPORTED))
}

/// A hipFile failure as a cuFile status: the codes 5001–5038 are the same numbers; a GPU
/// runtime failure (`hipFileHipDriverError`) is `CU_FILE_CUDA_DRIVER_ERROR` with the engine's
/// `hip_drv_err` as `cu_err`. On NVIDIA that is the CUDA driver's `CUresult` for every code
/// HIP has a twin of (the same number), and 999 (`CUDA_ERROR_UNKNOWN` too) for the others.
pub(crate) fn cu(e: HipError) -> CUfileError_t {
    match e.err {
        HIP_DRIVER_ERROR => CUfileError_t {
            err: code::CUDA_DRIVER_ERROR,
            cu_err: e.hip_drv_err,
        },
        HIP_IO_MAX_ERROR => CUfileError_t::op(code::INTERNAL_ERROR),
        other => CUfileError_t::op(other),
    }
}

fn load() -> Result<Engine, String> {
    let mut tried = Vec::new();
    for (name, flags) in candidates() {
        let Ok(c) = CString::new(name.clone()) else {
            continue;
        };
        // SAFETY: a NUL-terminated name; loading libhipfile runs only its static
        // initialisers (it loads GPU runtimes at its first driver open, not at load).
        let handle = unsafe { libc::dlopen(c.as_ptr(), flags) };
        if handle.is_null() {
            tried.push(name);
            continue;
        }
        match resolve(handle) {
            Ok(raw) => {
                let path = loaded_path(handle).unwrap_or(name);
                crate::log::info(&format!("using the hipfile engine {path}"));
                return Ok(Engine { raw });
            }
            Err(missing) => tried.push(format!("{name} (no symbol {missing})")),
        }
    }
    let reason = format!(
        "libhipfile.so.0 not found (tried {}): every cuFile call fails with CU_FILE_PLATFORM_NOT_SUPPORTED",
        tried.join(", ")
    );
    crate::log::error_always(&reason);
    Err(reason)
}

/// The names to try, with their `dlopen` flags.
fn candidates() -> Vec<(String, c_int)> {
    let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_NODELETE;
    let mut v = vec![("libhipfile.so.0".to_string(), flags | libc::RTLD_NOLOAD)];
    if let Some(dir) = own_dir() {
        v.push((format!("{dir}/libhipfile.so.0"), flags));
        v.push((format!("{dir}/libhipfile.so"), flags));
    }
    v.push(("libhipfile.so.0".to_string(), flags));
    v
}

/// The directory of this library's file.
fn own_dir() -> Option<String> {
    // SAFETY: Dl_info is plain data that dladdr fills for an address inside a loaded object.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = own_dir as *const c_void;
    // SAFETY: as above.
    if unsafe { libc::dladdr(here, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr gives a NUL-terminated path owned by the loader.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    let path = std::fs::canonicalize(&*path).ok()?;
    Some(path.parent()?.to_string_lossy().into_owned())
}

/// The file of a loaded object.
fn loaded_path(handle: *mut c_void) -> Option<String> {
    // SAFETY: a valid handle and a NUL-terminated name.
    let sym = unsafe { libc::dlsym(handle, c"hipFileDriverOpen".as_ptr()) };
    // SAFETY: plain data filled by dladdr.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if sym.is_null() || unsafe { libc::dladdr(sym, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: NUL-terminated, owned by the loader.
    Some(
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// One symbol of the engine, as the function-pointer type `T` of its prototype.
fn get<T: Copy>(handle: *mut c_void, name: &'static CStr) -> Result<T, &'static str> {
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: a valid handle and a NUL-terminated name.
    let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
    if p.is_null() {
        return Err(name.to_str().unwrap_or("?"));
    }
    // SAFETY: libhipfile.so.0 defines this symbol with the C prototype of include/hipfile.h,
    // which `T` (a field type of `Raw`) spells out; both are pointer-sized.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}

fn resolve(handle: *mut c_void) -> Result<Raw, &'static str> {
    macro_rules! sym {
        ($name:literal) => {
            get(handle, $name)?
        };
    }
    Ok(Raw {
        handle_register: sym!(c"hipFileHandleRegister"),
        handle_deregister: sym!(c"hipFileHandleDeregister"),
        buf_register: sym!(c"hipFileBufRegister"),
        buf_deregister: sym!(c"hipFileBufDeregister"),
        read: sym!(c"hipFileRead"),
        write: sym!(c"hipFileWrite"),
        driver_open: sym!(c"hipFileDriverOpen"),
        driver_close: sym!(c"hipFileDriverClose"),
        use_count: sym!(c"hipFileUseCount"),
        get_properties: sym!(c"hipFileDriverGetProperties"),
        set_poll_mode: sym!(c"hipFileDriverSetPollMode"),
        set_max_direct_io_size: sym!(c"hipFileDriverSetMaxDirectIOSize"),
        set_max_cache_size: sym!(c"hipFileDriverSetMaxCacheSize"),
        set_max_pinned_mem_size: sym!(c"hipFileDriverSetMaxPinnedMemSize"),
        batch_setup: sym!(c"hipFileBatchIOSetUp"),
        batch_submit: sym!(c"hipFileBatchIOSubmit"),
        batch_get_status: sym!(c"hipFileBatchIOGetStatus"),
        batch_cancel: sym!(c"hipFileBatchIOCancel"),
        batch_destroy: sym!(c"hipFileBatchIODestroy"),
        read_async: sym!(c"hipFileReadAsync"),
        write_async: sym!(c"hipFileWriteAsync"),
        stream_register: sym!(c"hipFileStreamRegister"),
        stream_deregister: sym!(c"hipFileStreamDeregister"),
        get_size: sym!(c"hipFileGetParameterSizeT"),
        get_bool: sym!(c"hipFileGetParameterBool"),
        set_size: sym!(c"hipFileSetParameterSizeT"),
        set_bool: sym!(c"hipFileSetParameterBool"),
        stats_l1: sym!(c"hipFileGetStatsL1"),
        stats_l2: sym!(c"hipFileGetStatsL2"),
        stats_l3: sym!(c"hipFileGetStatsL3"),
    })
}

/// The calls, with Rust values in and out. Those that take caller memory are `unsafe`, with
/// the caller's C contract as theirs.
impl Engine {
    pub(crate) fn driver_open(&self) -> HipResult<()> {
        // SAFETY: no arguments.
        check(unsafe { (self.raw.driver_open)() })
    }

    pub(crate) fn driver_close(&self) -> HipResult<()> {
        // SAFETY: no arguments.
        check(unsafe { (self.raw.driver_close)() })
    }

    pub(crate) fn use_count(&self) -> i64 {
        // SAFETY: no arguments.
        unsafe { (self.raw.use_count)() }
    }

    /// Whether the driver is open (its use count is above 0).
    pub(crate) fn is_open(&self) -> bool {
        self.use_count() > 0
    }

    pub(crate) fn properties(&self) -> HipResult<HipProps> {
        let mut p = HipProps::default();
        // SAFETY: a valid out-structure of the right type.
        check(unsafe { (self.raw.get_properties)(&mut p) })?;
        Ok(p)
    }

    pub(crate) fn set_poll_mode(&self, poll: bool, kib: usize) -> HipResult<()> {
        // SAFETY: plain values.
        check(unsafe { (self.raw.set_poll_mode)(poll, kib) })
    }

    pub(crate) fn set_max_direct_io_size(&self, kib: usize) -> HipResult<()> {
        // SAFETY: plain values.
        check(unsafe { (self.raw.set_max_direct_io_size)(kib) })
    }

    pub(crate) fn set_max_cache_size(&self, kib: usize) -> HipResult<()> {
        // SAFETY: plain values.
        check(unsafe { (self.raw.set_max_cache_size)(kib) })
    }

    pub(crate) fn set_max_pinned_mem_size(&self, kib: usize) -> HipResult<()> {
        // SAFETY: plain values.
        check(unsafe { (self.raw.set_max_pinned_mem_size)(kib) })
    }

    pub(crate) fn get_size(&self, param: c_int) -> HipResult<usize> {
        let mut v = 0usize;
        // SAFETY: a valid out-pointer.
        check(unsafe { (self.raw.get_size)(param, &mut v) })?;
        Ok(v)
    }

    pub(crate) fn get_bool(&self, param: c_int) -> HipResult<bool> {
        let mut v = false;
        // SAFETY: a valid out-pointer.
        check(unsafe { (self.raw.get_bool)(param, &mut v) })?;
        Ok(v)
    }

    pub(crate) fn set_size(&self, param: c_int, v: usize) -> HipResult<()> {
        // SAFETY: plain values.
        check(unsafe { (self.raw.set_size)(param, v) })
    }

    pub(crate) fn set_bool(&self, param: c_int, v: bool) -> HipResult<()> {
        // SAFETY: plain values.
        check(unsafe { (self.raw.set_bool)(param, v) })
    }

    /// Register a file descriptor.
    pub(crate) fn handle_register(&self, fd: c_int) -> HipResult<*mut c_void> {
        let mut descr = HipDescr {
            kind: 1,
            // The union's `int fd`, zero-extended as C would leave the upper half.
            handle: fd as u32 as usize as *mut c_void,
            fs_ops: std::ptr::null(),
        };
        let mut fh: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer and descriptor (hipFileHandleTypeOpaqueFD).
        check(unsafe { (self.raw.handle_register)(&mut fh, &mut descr) })?;
        Ok(fh)
    }

    pub(crate) fn handle_deregister(&self, fh: *mut c_void) {
        // SAFETY: hipFile ignores NULL and unknown handles.
        unsafe { (self.raw.handle_deregister)(fh) }
    }

    /// # Safety
    /// `base` names `len` bytes of memory the caller owns.
    pub(crate) unsafe fn buf_register(
        &self,
        base: *const c_void,
        len: usize,
        flags: c_int,
    ) -> HipResult<()> {
        // SAFETY: the caller's contract.
        check(unsafe { (self.raw.buf_register)(base, len, flags) })
    }

    pub(crate) fn buf_deregister(&self, base: *const c_void) -> HipResult<()> {
        // SAFETY: hipFile only looks the address up.
        check(unsafe { (self.raw.buf_deregister)(base) })
    }

    /// # Safety
    /// As `hipFileRead`: `base + offset` names `size` writable bytes.
    pub(crate) unsafe fn read(
        &self,
        fh: *mut c_void,
        base: *mut c_void,
        size: usize,
        off: i64,
        boff: i64,
    ) -> isize {
        // SAFETY: the caller's contract.
        unsafe { (self.raw.read)(fh, base, size, off, boff) }
    }

    /// # Safety
    /// As `hipFileWrite`: `base + offset` names `size` readable bytes.
    pub(crate) unsafe fn write(
        &self,
        fh: *mut c_void,
        base: *const c_void,
        size: usize,
        off: i64,
        boff: i64,
    ) -> isize {
        // SAFETY: the caller's contract.
        unsafe { (self.raw.write)(fh, base, size, off, boff) }
    }

    /// # Safety
    /// `out` is valid for a write.
    pub(crate) unsafe fn batch_setup(&self, out: *mut *mut c_void, nr: c_uint) -> HipResult<()> {
        // SAFETY: the caller's contract.
        check(unsafe { (self.raw.batch_setup)(out, nr) })
    }

    /// # Safety
    /// `entries` is valid for reads of `nr` `CUfileIOParams_t` (= `hipFileIOParams_t`).
    pub(crate) unsafe fn batch_submit(
        &self,
        h: *mut c_void,
        nr: c_uint,
        entries: *mut c_void,
        flags: c_uint,
    ) -> HipResult<()> {
        // SAFETY: the caller's contract.
        check(unsafe { (self.raw.batch_submit)(h, nr, entries, flags) })
    }

    /// # Safety
    /// As `hipFileBatchIOGetStatus`.
    pub(crate) unsafe fn batch_get_status(
        &self,
        h: *mut c_void,
        min_nr: c_uint,
        nr: *mut c_uint,
        events: *mut c_void,
        timeout: *mut c_void,
    ) -> HipResult<()> {
        // SAFETY: the caller's contract.
        check(unsafe { (self.raw.batch_get_status)(h, min_nr, nr, events, timeout) })
    }

    pub(crate) fn batch_cancel(&self, h: *mut c_void) -> HipResult<()> {
        // SAFETY: hipFile looks the handle up.
        check(unsafe { (self.raw.batch_cancel)(h) })
    }

    pub(crate) fn batch_destroy(&self, h: *mut c_void) {
        // SAFETY: hipFile ignores unknown handles.
        unsafe { (self.raw.batch_destroy)(h) }
    }

    /// The stream-ordered read or write entry point.
    pub(crate) fn async_fn(&self, write: bool) -> AsyncFn {
        if write {
            self.raw.write_async
        } else {
            self.raw.read_async
        }
    }

    pub(crate) fn stream_register(&self, stream: *mut c_void, flags: c_uint) -> HipResult<()> {
        // SAFETY: hipFile takes the stream as an opaque value.
        check(unsafe { (self.raw.stream_register)(stream, flags) })
    }

    pub(crate) fn stream_deregister(&self, stream: *mut c_void) -> HipResult<()> {
        // SAFETY: as above.
        check(unsafe { (self.raw.stream_deregister)(stream) })
    }

    /// hipFile's statistics of level 1, 2 or 3, as the bytes of its structure.
    pub(crate) fn stats(&self, level: u8) -> HipResult<Vec<u8>> {
        let (f, len) = match level {
            1 => (self.raw.stats_l1, HIP_STATS_L1_SIZE),
            2 => (self.raw.stats_l2, HIP_STATS_L2_SIZE),
            _ => (self.raw.stats_l3, HIP_STATS_L3_SIZE),
        };
        // u64 words: the structures are 8-byte aligned.
        let mut words = vec![0u64; len / 8];
        // SAFETY: a writable buffer of the structure's size and alignment.
        check(unsafe { f(words.as_mut_ptr().cast()) })?;
        Ok(words.iter().flat_map(|w| w.to_ne_bytes()).collect())
    }
}

/// A C string for the log.
pub(crate) fn c_text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL, NUL-terminated per the C contract of the caller.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}
