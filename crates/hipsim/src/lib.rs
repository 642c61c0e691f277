//! `hipsim`: a simulated GPU runtime for testing `hipfile` on machines without a GPU.
//!
//! Built as `libhipsim.so`, it exports — with the real C signatures and ABI — a subset of AMD's
//! HIP runtime API (`libamdhip64.so`, see [`hip_api`]), the GPU-direct file entry points
//! `hipAmdFileRead`/`hipAmdFileWrite` (see [`fastpath`]) and a subset of NVIDIA's CUDA driver
//! API (`libcuda.so.1`, see [`cuda_api`]), including `cuModuleLoadData`, `cuModuleUnload`,
//! `cuModuleGetFunction`, `cuLaunchKernel`, `cuLaunchCooperativeKernel` and
//! `cuDeviceGetAttribute` for the one kernel it emulates, hipfile's staging kernel
//! `hipfile_stage` (see [`kernels`]). Both faces share one simulated machine: the same
//! devices, memory, streams and events. It also exports a fake NVIDIA cuFile
//! (`libcufile.so.0`, see [`cufile_api`]) whose reads and writes move bytes between files and
//! that simulated device memory.
//!
//! Device memory lives at addresses inside a large `PROT_NONE` reservation, so a CPU dereference
//! of a device pointer faults exactly as it would with a real GPU; the bytes really live in a
//! separate, lazily committed "shadow" mapping per allocation (see [`memory`]).
//!
//! Tests drive the simulator through the `hipsim*` control functions in [`control`]: named
//! counters (see [`counters`]) and run-time fault injection (see [`faults`]).
//!
//! The crate is also built as an rlib only so that cargo accepts it as a dev-dependency; never
//! link the rlib into a process that also dlopens `libhipsim.so`, or the process would hold two
//! independent copies of the simulated machine.

// Every `unsafe` operation sits in its own block, even in an `unsafe fn`, with the `// SAFETY:`
// line that says why it holds; every public `unsafe fn` documents its contract (`# Safety`).
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

pub mod control;
pub mod copy;
pub mod counters;
pub mod cuda_api;
pub mod cufile_api;
pub mod cufile_errors;
pub mod device;
pub mod errors;
pub mod fastpath;
pub mod faults;
mod ffi;
pub mod hip_api;
pub mod kernels;
pub mod memory;
pub mod stream;

/// Reads the settings from the environment when the library is loaded (see [`faults`]).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static READ_SETTINGS_AT_LOAD: extern "C" fn() = read_settings_at_load;

#[cfg(target_os = "linux")]
extern "C" fn read_settings_at_load() {
    // A panic must not unwind out of a loader callback; the settings are then read lazily.
    let _ = std::panic::catch_unwind(faults::init);
}
