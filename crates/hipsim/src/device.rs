//! Devices and per-thread device state: HIP's current device and CUDA's primary contexts and
//! per-thread context stack, each device's architecture name, and whether a device's context
//! broke.
//!
//! **A broken context.** A kernel that faults (an operand the device cannot address, a launch
//! whose blocks would copy the wrong shares, the `stage_dies` fault) breaks its device's context
//! for good, as `CUDA_ERROR_ILLEGAL_ADDRESS` does on a GPU ("the process is left in an
//! inconsistent state and any further CUDA work will return the same error"):
//! - every kernel still running on the device stops where it is, without returning (its blocks
//!   never count themselves out), and a wait on a memory value stops waiting;
//! - queued work that had not started never runs: its stream reports the error;
//! - from then on, every call that does work on the device returns the error, again and again
//!   (synchronising a stream, the device or an event, querying a stream or an event, queueing
//!   anything on a stream, copies, memsets, allocations, creating a stream, loading a module).
//!   Frees, unregistrations and stream and event destruction still release what they name (a
//!   program tearing down must not wait forever) and then return the error; creating an event
//!   and asking a stream's id fail too. Questions about memory (pointer attributes) and the
//!   current device still answer. `scripts/gpu/fault_probe.c` prints the same table of calls
//!   and results on the simulator and on a GPU: on the H200 (2026-12-05) they agree line by
//!   line.
//!
//! ROCm's default answer to a GPU memory fault is to abort the process; the simulator gives
//! both faces CUDA's behaviour, which a library can test. Only `hipsimRepairDevice` (a control
//! function for tests, not a runtime's API) clears the state; the simulator keeps the device's
//! memory and streams, which a real context reset would destroy.
//!
//! The HIP and CUDA notions of "current" are independent, as they would be with two different
//! real libraries: HIP's current device starts at 0 on every thread; a thread starts with no
//! current CUDA context.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::LazyLock;

use parking_lot::Mutex;

use crate::errors::{SimError, SimResult};
use crate::faults;

/// Size of the per-device tables (the largest possible `device_count`).
pub const MAX_DEVICES: usize = faults::MAX_DEVICES as usize;

/// Number of simulated devices right now.
pub fn count() -> i32 {
    faults::device_count()
}

/// Checks a device ordinal against the current device count.
pub fn check_ordinal(device: i32) -> SimResult<()> {
    let n = count();
    if n == 0 {
        Err(SimError::NO_DEVICE)
    } else if device < 0 || device >= n {
        Err(SimError::INVALID_DEVICE)
    } else {
        Ok(())
    }
}

thread_local! {
    static HIP_DEVICE: Cell<i32> = const { Cell::new(0) };
    static CTX_STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// HIP's current device of the calling thread, checked against the device count.
pub fn hip_current() -> SimResult<i32> {
    let d = HIP_DEVICE.with(Cell::get);
    check_ordinal(d)?;
    Ok(d)
}

/// `hipSetDevice`.
pub fn hip_set_current(device: i32) -> SimResult<()> {
    check_ordinal(device)?;
    HIP_DEVICE.with(|c| c.set(device));
    Ok(())
}

// ---- CUDA ------------------------------------------------------------------------------------

static CUDA_INITIALIZED: AtomicBool = AtomicBool::new(false);

/// `cuInit` ran.
pub fn cuda_init() {
    CUDA_INITIALIZED.store(true, Ordering::Release);
}

/// `CUDA_ERROR_NOT_INITIALIZED` unless `cuInit` ran.
pub fn cuda_require_init() -> SimResult<()> {
    if CUDA_INITIALIZED.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(SimError::NOT_INITIALIZED)
    }
}

/// One primary context per device. Its address is the `CUcontext` handle, stable for the
/// process lifetime.
struct PrimaryContext {
    retains: AtomicU32,
}

static PRIMARY: [PrimaryContext; MAX_DEVICES] = [const {
    PrimaryContext {
        retains: AtomicU32::new(0),
    }
}; MAX_DEVICES];

/// The `CUcontext` handle of `device`'s primary context (no range check).
pub fn primary_handle(device: i32) -> *mut c_void {
    let idx = usize::try_from(device).unwrap_or(0).min(MAX_DEVICES - 1);
    std::ptr::from_ref(&PRIMARY[idx]).cast_mut().cast()
}

/// The device of a `CUcontext` handle, if it is one of ours and the device exists.
pub fn context_device(handle: usize) -> Option<i32> {
    let idx = PRIMARY
        .iter()
        .position(|p| std::ptr::from_ref(p) as usize == handle)?;
    let device = idx as i32;
    check_ordinal(device).ok().map(|()| device)
}

/// `cuDevicePrimaryCtxRetain`.
pub fn retain_primary(device: i32) -> SimResult<*mut c_void> {
    cuda_require_init()?;
    check_ordinal(device).map_err(|_| SimError::INVALID_DEVICE)?;
    PRIMARY[device as usize]
        .retains
        .fetch_add(1, Ordering::Relaxed);
    Ok(primary_handle(device))
}

/// `cuDevicePrimaryCtxRelease`: drops one reference; the context itself stays usable.
pub fn release_primary(device: i32) -> SimResult<()> {
    cuda_require_init()?;
    check_ordinal(device).map_err(|_| SimError::INVALID_DEVICE)?;
    PRIMARY[device as usize]
        .retains
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1))
        .map(|_| ())
        .map_err(|_| SimError::INVALID_CONTEXT)
}

/// The calling thread's current context handle (0 = none).
pub fn current_context() -> usize {
    CTX_STACK.with(|s| s.borrow().last().copied().unwrap_or(0))
}

/// `cuCtxSetCurrent`: replaces the top of the stack; NULL pops it.
pub fn set_current_context(handle: usize) -> SimResult<()> {
    if handle != 0 && context_device(handle).is_none() {
        return Err(SimError::INVALID_CONTEXT);
    }
    CTX_STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.pop();
        if handle != 0 {
            s.push(handle);
        }
    });
    Ok(())
}

/// `cuCtxPushCurrent`.
pub fn push_context(handle: usize) -> SimResult<()> {
    if handle == 0 || context_device(handle).is_none() {
        return Err(SimError::INVALID_CONTEXT);
    }
    CTX_STACK.with(|s| s.borrow_mut().push(handle));
    Ok(())
}

/// `cuCtxPopCurrent`: the popped handle, or `CUDA_ERROR_INVALID_CONTEXT` on an empty stack.
pub fn pop_context() -> SimResult<usize> {
    CTX_STACK
        .with(|s| s.borrow_mut().pop())
        .ok_or(SimError::INVALID_CONTEXT)
}

/// The device of the calling thread's current context: `CUDA_ERROR_NOT_INITIALIZED` before
/// `cuInit`, `CUDA_ERROR_INVALID_CONTEXT` without a current context.
pub fn cuda_current_device() -> SimResult<i32> {
    cuda_require_init()?;
    context_device(current_context()).ok_or(SimError::INVALID_CONTEXT)
}

// ---- a broken context ------------------------------------------------------------------------

/// The sticky error of each device's context (0: none).
static BROKEN: [AtomicI32; MAX_DEVICES] = [const { AtomicI32::new(0) }; MAX_DEVICES];

fn broken_slot(device: i32) -> Option<&'static AtomicI32> {
    usize::try_from(device).ok().and_then(|d| BROKEN.get(d))
}

/// Breaks `device`'s context with `e` (see the module's documentation); the first error stays.
pub fn break_context(device: i32, e: SimError) {
    if let Some(slot) = broken_slot(device) {
        if slot
            .compare_exchange(0, e.0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            crate::counters::bump("contexts_broken");
        }
    }
}

/// `Err` with the sticky error once `device`'s context broke.
pub fn usable(device: i32) -> SimResult<()> {
    match broken_slot(device).map_or(0, |s| s.load(Ordering::Acquire)) {
        0 => Ok(()),
        code => Err(SimError(code)),
    }
}

/// Clears `device`'s sticky error; whether it had one.
pub fn repair(device: i32) -> bool {
    broken_slot(device).is_some_and(|s| s.swap(0, Ordering::AcqRel) != 0)
}

// ---- architecture ----------------------------------------------------------------------------

/// The architecture name a device reports unless told otherwise: an MI300X's, as ROCm writes it
/// in `gcnArchName` (processor, then the target features code objects are built for).
pub const DEFAULT_GCN_ARCH: &str = "gfx942:sramecc+:xnack-";

/// Most bytes of an architecture name (`gcnArchName` holds 256 with the NUL).
const MAX_ARCH_LEN: usize = 255;

/// Each device's name, `None` for the default (`HIPSIM_GCN_ARCH`, else [`DEFAULT_GCN_ARCH`]).
static ARCHS: Mutex<[Option<&'static str>; MAX_DEVICES]> = Mutex::new([None; MAX_DEVICES]);

/// Names given so far; each is leaked once, so that [`gcn_arch`] can hand out `&'static str`.
static INTERNED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// `HIPSIM_GCN_ARCH`, read on first use (an invalid name is reported and ignored).
static ENV_ARCH: LazyLock<Option<&'static str>> = LazyLock::new(|| {
    let text = std::env::var("HIPSIM_GCN_ARCH").ok()?;
    let name = intern(text.trim());
    if name.is_none() {
        eprintln!("hipsim: ignoring HIPSIM_GCN_ARCH={text:?}: not an architecture name");
    }
    name
});

fn intern(name: &str) -> Option<&'static str> {
    parse_target(name)?;
    let mut names = INTERNED.lock();
    if let Some(&known) = names.iter().find(|&&n| n == name) {
        return Some(known);
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(leaked);
    Some(leaked)
}

/// The architecture name of `device` (`gcnArchName`), e.g. `"gfx942:sramecc+:xnack-"`: what a
/// code object must be built for to load on it. Set for tests with `HIPSIM_GCN_ARCH` (every
/// device) or `hipsimSetGcnArch` (one device); an ordinal outside the table gives the default.
pub fn gcn_arch(device: i32) -> &'static str {
    let set = usize::try_from(device)
        .ok()
        .filter(|&d| d < MAX_DEVICES)
        .and_then(|d| ARCHS.lock()[d]);
    set.or(*ENV_ARCH).unwrap_or(DEFAULT_GCN_ARCH)
}

/// Sets the architecture name of `device` (0..16), or of every device for -1; `None` gives
/// back the default. False for another ordinal or a name [`parse_target`] refuses.
pub fn set_gcn_arch(device: i32, name: Option<&str>) -> bool {
    let name = match name {
        Some(n) => match intern(n) {
            Some(i) => Some(i),
            None => return false,
        },
        None => None,
    };
    let mut archs = ARCHS.lock();
    match device {
        -1 => archs.iter_mut().for_each(|a| *a = name),
        d => match usize::try_from(d).ok().filter(|&d| d < MAX_DEVICES) {
            Some(d) => archs[d] = name,
            None => return false,
        },
    }
    true
}

/// An architecture name taken apart, as a loader compares it with a code object's target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcnTarget<'a> {
    /// The processor, e.g. `"gfx942"`.
    pub processor: &'a str,
    /// `sramecc+` (Some(true)), `sramecc-` (Some(false)) or not named (None: either).
    pub sramecc: Option<bool>,
    /// `xnack+`, `xnack-` or not named, likewise.
    pub xnack: Option<bool>,
}

impl GcnTarget<'_> {
    /// The compute capability HIP reports for the processor: `gfx942` is 9.4, `gfx90a` 9.0,
    /// `gfx1100` 11.0 (the digits before the last two, then the one before the last).
    pub fn version(&self) -> (i32, i32) {
        let digits = &self.processor[3..];
        let (major, rest) = digits.split_at(digits.len() - 2);
        let minor = rest[..1].parse().unwrap_or(0);
        (major.parse().unwrap_or(0), minor)
    }
}

/// Parses `gfx<processor>[:feature±]...` (`processor`: at least three lower-case letters or
/// digits; features `sramecc` and `xnack`, each at most once), at most 255 bytes; `None` for
/// anything else.
pub fn parse_target(name: &str) -> Option<GcnTarget<'_>> {
    if name.len() > MAX_ARCH_LEN {
        return None;
    }
    let mut parts = name.split(':');
    let processor = parts.next()?;
    let id = processor.strip_prefix("gfx")?;
    if id.len() < 3
        || !id
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        || !id.as_bytes()[0].is_ascii_digit()
    {
        return None;
    }
    let mut target = GcnTarget {
        processor,
        sramecc: None,
        xnack: None,
    };
    for feature in parts {
        let (name, on) = match feature.as_bytes().last()? {
            b'+' => (&feature[..feature.len() - 1], true),
            b'-' => (&feature[..feature.len() - 1], false),
            _ => return None,
        };
        let slot = match name {
            "sramecc" => &mut target.sramecc,
            "xnack" => &mut target.xnack,
            _ => return None,
        };
        if slot.replace(on).is_some() {
            return None;
        }
    }
    Some(target)
}

/// The architecture of `device`, taken apart.
pub fn gcn_target(device: i32) -> GcnTarget<'static> {
    parse_target(gcn_arch(device)).expect("only names parse_target accepts are stored")
}

// ---- hipGetDevicePropertiesR0600 -------------------------------------------------------------

/// `hipDeviceProp_tR0600`, the device properties of ROCm 6 and later (1472 bytes; the layout
/// of `hip_runtime_api.h`, checked by the tests against offsets a C compiler gave for it).
/// `hipGetDeviceProperties` in ROCm 6 sources is a macro for `hipGetDevicePropertiesR0600`.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(missing_docs)]
pub struct HipDevicePropR0600 {
    pub name: [c_char; 256],
    pub uuid: [c_char; 16],
    pub luid: [c_char; 8],
    pub luid_device_node_mask: c_uint,
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: c_int,
    pub warp_size: c_int,
    pub mem_pitch: usize,
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub clock_rate: c_int,
    pub total_const_mem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub device_overlap: c_int,
    pub multi_processor_count: c_int,
    pub kernel_exec_timeout_enabled: c_int,
    pub integrated: c_int,
    pub can_map_host_memory: c_int,
    pub compute_mode: c_int,
    pub max_texture_1d: c_int,
    pub max_texture_1d_mipmap: c_int,
    pub max_texture_1d_linear: c_int,
    pub max_texture_2d: [c_int; 2],
    pub max_texture_2d_mipmap: [c_int; 2],
    pub max_texture_2d_linear: [c_int; 3],
    pub max_texture_2d_gather: [c_int; 2],
    pub max_texture_3d: [c_int; 3],
    pub max_texture_3d_alt: [c_int; 3],
    pub max_texture_cubemap: c_int,
    pub max_texture_1d_layered: [c_int; 2],
    pub max_texture_2d_layered: [c_int; 3],
    pub max_texture_cubemap_layered: [c_int; 2],
    pub max_surface_1d: c_int,
    pub max_surface_2d: [c_int; 2],
    pub max_surface_3d: [c_int; 3],
    pub max_surface_1d_layered: [c_int; 2],
    pub max_surface_2d_layered: [c_int; 3],
    pub max_surface_cubemap: c_int,
    pub max_surface_cubemap_layered: [c_int; 2],
    pub surface_alignment: usize,
    pub concurrent_kernels: c_int,
    pub ecc_enabled: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub pci_domain_id: c_int,
    pub tcc_driver: c_int,
    pub async_engine_count: c_int,
    pub unified_addressing: c_int,
    pub memory_clock_rate: c_int,
    pub memory_bus_width: c_int,
    pub l2_cache_size: c_int,
    pub persisting_l2_cache_max_size: c_int,
    pub max_threads_per_multi_processor: c_int,
    pub stream_priorities_supported: c_int,
    pub global_l1_cache_supported: c_int,
    pub local_l1_cache_supported: c_int,
    pub shared_mem_per_multiprocessor: usize,
    pub regs_per_multiprocessor: c_int,
    pub managed_memory: c_int,
    pub is_multi_gpu_board: c_int,
    pub multi_gpu_board_group_id: c_int,
    pub host_native_atomic_supported: c_int,
    pub single_to_double_precision_perf_ratio: c_int,
    pub pageable_memory_access: c_int,
    pub concurrent_managed_access: c_int,
    pub compute_preemption_supported: c_int,
    pub can_use_host_pointer_for_registered_mem: c_int,
    pub cooperative_launch: c_int,
    pub cooperative_multi_device_launch: c_int,
    pub shared_mem_per_block_optin: usize,
    pub pageable_memory_access_uses_host_page_tables: c_int,
    pub direct_managed_mem_access_from_host: c_int,
    pub max_blocks_per_multi_processor: c_int,
    pub access_policy_max_window_size: c_int,
    pub reserved_shared_mem_per_block: usize,
    pub host_register_supported: c_int,
    pub sparse_hip_array_supported: c_int,
    pub host_register_read_only_supported: c_int,
    pub timeline_semaphore_interop_supported: c_int,
    pub memory_pools_supported: c_int,
    pub gpu_direct_rdma_supported: c_int,
    pub gpu_direct_rdma_flush_writes_options: c_uint,
    pub gpu_direct_rdma_writes_ordering: c_int,
    pub memory_pool_supported_handle_types: c_uint,
    pub deferred_mapping_hip_array_supported: c_int,
    pub ipc_event_supported: c_int,
    pub cluster_launch: c_int,
    pub unified_function_pointers: c_int,
    pub reserved: [c_int; 63],
    pub hip_reserved: [c_int; 32],
    pub gcn_arch_name: [c_char; 256],
    pub max_shared_memory_per_multi_processor: usize,
    pub clock_instruction_rate: c_int,
    /// `hipDeviceArch_t`: 17 one-bit feature flags in one 32-bit word.
    pub arch: c_uint,
    pub hdp_mem_flush_cntl: *mut c_uint,
    pub hdp_reg_flush_cntl: *mut c_uint,
    pub cooperative_multi_device_unmatched_func: c_int,
    pub cooperative_multi_device_unmatched_grid_dim: c_int,
    pub cooperative_multi_device_unmatched_block_dim: c_int,
    pub cooperative_multi_device_unmatched_shared_mem: c_int,
    pub is_large_bar: c_int,
    pub asic_revision: c_int,
}

/// Copies `text` into a C char array, NUL-terminated (cut to fit).
fn c_text<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (o, b) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *o = b as c_char;
    }
    out
}

/// The properties of `device` (which must exist): an MI300X-like device with the device's
/// architecture name ([`gcn_arch`]) and the compute capability that follows from it.
pub fn hip_properties(device: i32) -> HipDevicePropR0600 {
    // SAFETY: every field is an integer, an array of integers or a raw pointer, for which all
    // zero bytes are a valid value.
    let mut p: HipDevicePropR0600 = unsafe { std::mem::zeroed() };
    let arch = gcn_arch(device);
    let (major, minor) = gcn_target(device).version();
    p.name = c_text(&format!("hipsim simulated GPU {device}"));
    p.uuid = c_text(&format!("hipsim-gpu-{device:04}"));
    p.total_global_mem = 192 << 30;
    p.shared_mem_per_block = 64 << 10;
    p.regs_per_block = 512 * 128;
    p.warp_size = 64;
    p.mem_pitch = i32::MAX as usize;
    p.max_threads_per_block = 1024;
    p.max_threads_dim = [1024, 1024, 1024];
    p.max_grid_size = [i32::MAX, 65536, 65536];
    p.clock_rate = 2_100_000;
    p.total_const_mem = i32::MAX as usize;
    p.major = major;
    p.minor = minor;
    p.texture_alignment = 256;
    p.texture_pitch_alignment = 256;
    p.device_overlap = 1;
    p.multi_processor_count = 304;
    p.can_map_host_memory = 1;
    p.concurrent_kernels = 1;
    p.pci_bus_id = device + 1;
    p.async_engine_count = 4;
    p.unified_addressing = 1;
    p.memory_clock_rate = 1_300_000;
    p.memory_bus_width = 8192;
    p.l2_cache_size = 4 << 20;
    p.max_threads_per_multi_processor = 2048;
    p.shared_mem_per_multiprocessor = 64 << 10;
    p.regs_per_multiprocessor = 512 * 128;
    p.managed_memory = 1;
    p.host_native_atomic_supported = 1;
    p.concurrent_managed_access = 1;
    p.can_use_host_pointer_for_registered_mem = 1;
    p.cooperative_launch = 1;
    p.cooperative_multi_device_launch = 1;
    p.shared_mem_per_block_optin = 64 << 10;
    p.max_blocks_per_multi_processor = 2;
    p.host_register_supported = 1;
    p.gcn_arch_name = c_text(arch);
    p.max_shared_memory_per_multi_processor = 64 << 10;
    p.clock_instruction_rate = 100_000;
    // Every flag but hasSurfaceFuncs (bit 14) and hasDynamicParallelism (bit 16).
    p.arch = 0xBFFF;
    p.is_large_bar = 1;
    p.asic_revision = 1;
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn the_properties_have_rocm_6_s_layout() {
        // Offsets gcc gives for hipDeviceProp_t of ROCm 6's hip_runtime_api.h (x86-64).
        type P = HipDevicePropR0600;
        assert_eq!(size_of::<P>(), 1472);
        for (offset, want) in [
            (offset_of!(P, total_global_mem), 288),
            (offset_of!(P, shared_mem_per_block), 296),
            (offset_of!(P, warp_size), 308),
            (offset_of!(P, max_threads_per_block), 320),
            (offset_of!(P, max_threads_dim), 324),
            (offset_of!(P, max_grid_size), 336),
            (offset_of!(P, major), 360),
            (offset_of!(P, minor), 364),
            (offset_of!(P, multi_processor_count), 388),
            (offset_of!(P, can_map_host_memory), 400),
            (offset_of!(P, concurrent_kernels), 576),
            (offset_of!(P, pci_bus_id), 584),
            (offset_of!(P, unified_addressing), 604),
            (offset_of!(P, l2_cache_size), 616),
            (offset_of!(P, managed_memory), 652),
            (offset_of!(P, cooperative_launch), 688),
            (offset_of!(P, host_register_supported), 728),
            (offset_of!(P, unified_function_pointers), 776),
            (offset_of!(P, reserved), 780),
            (offset_of!(P, hip_reserved), 1032),
            (offset_of!(P, gcn_arch_name), 1160),
            (offset_of!(P, max_shared_memory_per_multi_processor), 1416),
            (offset_of!(P, clock_instruction_rate), 1424),
            (offset_of!(P, arch), 1428),
            (offset_of!(P, hdp_mem_flush_cntl), 1432),
            (offset_of!(P, is_large_bar), 1464),
            (offset_of!(P, asic_revision), 1468),
        ] {
            assert_eq!(offset, want, "the field at {want}");
        }
    }

    #[test]
    fn architecture_names_are_taken_apart() {
        let t = |p, s, x| GcnTarget {
            processor: p,
            sramecc: s,
            xnack: x,
        };
        assert_eq!(
            parse_target("gfx942:sramecc+:xnack-"),
            Some(t("gfx942", Some(true), Some(false)))
        );
        assert_eq!(
            parse_target("gfx90a:xnack+"),
            Some(t("gfx90a", None, Some(true)))
        );
        assert_eq!(parse_target("gfx1100"), Some(t("gfx1100", None, None)));
        for bad in [
            "",
            "gfx",
            "gfx94",
            "sm_90",
            "gfx942:",
            "gfx942:xnack",
            "gfx942:xnack+:xnack-",
            "gfx942:tgsplit+",
            "GFX942",
            "gfx9-generic",
            "gfxa42",
        ] {
            assert_eq!(parse_target(bad), None, "{bad:?}");
        }
        assert_eq!(parse_target(&format!("gfx9{}", "0".repeat(252))), None);
        assert!(parse_target(&format!("gfx9{}", "0".repeat(251))).is_some());
        assert_eq!(t("gfx942", None, None).version(), (9, 4));
        assert_eq!(t("gfx90a", None, None).version(), (9, 0));
        assert_eq!(t("gfx1100", None, None).version(), (11, 0));
        assert_eq!(t("gfx1201", None, None).version(), (12, 0));
    }
}
