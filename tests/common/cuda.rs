//! hipsim's CUDA driver API for tests that play a CUDA application: contexts, allocations and
//! copies, loaded from the same `libhipsim.so` the library loads (one simulated machine).

use std::ffi::{c_int, c_uint, c_void};
use std::sync::OnceLock;

use super::hipsim_path;

/// `CUresult`.
pub type CuResult = c_int;
/// `CUcontext`.
pub type CuContext = *mut c_void;

/// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`.
pub const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
/// `CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL`.
pub const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;
/// `CU_MEMORYTYPE_DEVICE`.
pub const CU_MEMORYTYPE_DEVICE: c_uint = 2;

/// The entry points tests use.
pub struct Cuda {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    primary_retain: unsafe extern "C" fn(*mut CuContext, c_int) -> CuResult,
    ctx_get_current: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_push: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_pop: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut u64, usize) -> CuResult,
    /// `cuMemFree_v2`.
    pub mem_free: unsafe extern "C" fn(u64) -> CuResult,
    /// `cuMemAllocManaged`.
    pub mem_alloc_managed: unsafe extern "C" fn(*mut u64, usize, c_uint) -> CuResult,
    /// `cuMemHostAlloc`.
    pub mem_host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CuResult,
    /// `cuPointerGetAttribute`.
    pub pointer_get_attribute: unsafe extern "C" fn(*mut c_void, c_int, u64) -> CuResult,
    htod: unsafe extern "C" fn(u64, *const c_void, usize) -> CuResult,
    dtoh: unsafe extern "C" fn(*mut c_void, u64, usize) -> CuResult,
}

// SAFETY: plain function pointers into a thread-safe library.
unsafe impl Sync for Cuda {}
// SAFETY: as above.
unsafe impl Send for Cuda {}

/// hipsim's CUDA driver API, initialised (`cuInit`).
pub fn cuda() -> &'static Cuda {
    static C: OnceLock<Cuda> = OnceLock::new();
    C.get_or_init(|| {
        // SAFETY: our simulator; the symbols have these C signatures.
        let lib = unsafe { libloading::Library::new(hipsim_path()) }.unwrap();
        macro_rules! f {
            ($n:literal) => {
                // SAFETY: see above.
                *unsafe { lib.get(concat!($n, "\0").as_bytes()) }.unwrap()
            };
        }
        let c = Cuda {
            init: f!("cuInit"),
            primary_retain: f!("cuDevicePrimaryCtxRetain"),
            ctx_get_current: f!("cuCtxGetCurrent"),
            ctx_set_current: f!("cuCtxSetCurrent"),
            ctx_push: f!("cuCtxPushCurrent_v2"),
            ctx_pop: f!("cuCtxPopCurrent_v2"),
            mem_alloc: f!("cuMemAlloc_v2"),
            mem_free: f!("cuMemFree_v2"),
            mem_alloc_managed: f!("cuMemAllocManaged"),
            mem_host_alloc: f!("cuMemHostAlloc"),
            pointer_get_attribute: f!("cuPointerGetAttribute"),
            htod: f!("cuMemcpyHtoD_v2"),
            dtoh: f!("cuMemcpyDtoH_v2"),
        };
        std::mem::forget(lib);
        // SAFETY: flags 0.
        assert_eq!(unsafe { (c.init)(0) }, 0);
        c
    })
}

impl Cuda {
    /// The calling thread's current context (0 for none).
    pub fn current(&self) -> usize {
        let mut c = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (self.ctx_get_current)(&mut c) }, 0);
        c as usize
    }
    /// `device`'s primary context.
    pub fn primary(&self, device: c_int) -> usize {
        let mut c = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (self.primary_retain)(&mut c, device) }, 0);
        assert!(!c.is_null());
        c as usize
    }
    /// Make `ctx` (or none, for 0) current.
    pub fn set_current(&self, ctx: usize) {
        // SAFETY: a primary context or NULL.
        assert_eq!(unsafe { (self.ctx_set_current)(ctx as CuContext) }, 0);
    }
    /// Device 0's primary context current, as a CUDA runtime application has it.
    pub fn make_current(&self) {
        self.set_current(self.primary(0));
    }
    /// Push `ctx`.
    pub fn push(&self, ctx: usize) {
        // SAFETY: a primary context.
        assert_eq!(unsafe { (self.ctx_push)(ctx as CuContext) }, 0);
    }
    /// Pop the current context.
    pub fn pop(&self) -> usize {
        let mut c = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (self.ctx_pop)(&mut c) }, 0);
        c as usize
    }
    /// `len` bytes of device memory in the current context.
    pub fn alloc(&self, len: usize) -> *mut c_void {
        let mut p = 0u64;
        // SAFETY: valid out-pointer; a context is current.
        assert_eq!(unsafe { (self.mem_alloc)(&mut p, len) }, 0);
        p as *mut c_void
    }
    /// `len` bytes allocated with `device`'s primary context current, from a thread with no
    /// current context (none again afterwards); checks the pointer's reported device.
    pub fn alloc_on(&self, device: c_int, len: usize) -> usize {
        assert_eq!(self.current(), 0);
        self.set_current(self.primary(device));
        let p = self.alloc(len) as u64;
        self.set_current(0);
        let mut ordinal: c_int = -1;
        let mut mem_type: c_uint = 0;
        // SAFETY: out-pointers of the attributes' types.
        unsafe {
            assert_eq!(
                (self.pointer_get_attribute)(
                    (&raw mut ordinal).cast(),
                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    p
                ),
                0
            );
            assert_eq!(
                (self.pointer_get_attribute)(
                    (&raw mut mem_type).cast(),
                    CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                    p
                ),
                0
            );
        }
        assert_eq!((mem_type, ordinal), (CU_MEMORYTYPE_DEVICE, device));
        p as usize
    }
    /// Run `f` with `device`'s primary context pushed, then pop it (the thread's context state
    /// is as before).
    pub fn with_ctx<T>(&self, device: c_int, f: impl FnOnce() -> T) -> T {
        let before = self.current();
        let ctx = self.primary(device);
        self.push(ctx);
        let r = f();
        assert_eq!(self.pop(), ctx);
        assert_eq!(self.current(), before);
        r
    }
    /// Copy `src` to device address `dst` in the current context.
    pub fn upload(&self, dst: *mut c_void, src: &[u8]) {
        // SAFETY: valid host slice; the driver checks the device side.
        assert_eq!(
            unsafe { (self.htod)(dst as u64, src.as_ptr().cast(), src.len()) },
            0
        );
    }
    /// Copy `len` bytes from device address `src` in the current context.
    pub fn download(&self, src: *const c_void, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        // SAFETY: valid host slice; the driver checks the device side.
        assert_eq!(
            unsafe { (self.dtoh)(v.as_mut_ptr().cast(), src as u64, len) },
            0
        );
        v
    }
    /// [`Cuda::upload`] under `device`'s primary context.
    pub fn upload_on(&self, device: c_int, dst: usize, src: &[u8]) {
        self.with_ctx(device, || self.upload(dst as *mut c_void, src));
    }
    /// [`Cuda::download`] under `device`'s primary context.
    pub fn download_on(&self, device: c_int, src: usize, len: usize) -> Vec<u8> {
        self.with_ctx(device, || self.download(src as *const c_void, len))
    }
}
