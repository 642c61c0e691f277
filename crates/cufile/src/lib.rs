//! `libcufile.so.0`: NVIDIA's cuFile C ABI (every call of `include/cufile.h`, API level 1.19)
//! on the hipfile engine of `libhipfile.so.0`. It reports cuFile 1.18 and fills 1.18's
//! structure layouts unless the deployment declares 1.19 consumers only (`version.rs`: the one
//! rule for the version and the layouts).
//!
//! Every exported function converts its C arguments at the door (cuFile types to values, the
//! checks cuFile makes first), calls the engine through libhipfile's C ABI (`engine.rs`), and
//! converts the answer into cuFile's conventions (`CUfileError_t` with the CUDA driver's
//! `CUresult` in `cu_err`; for the data path a byte count, or -1 with `errno`). What cuFile
//! has and hipFile does not (statistics windows, readv/writev, slab arrays, P2P flags, the
//! 1.19 parameters, `cufile.json`, cuFile's log) is kept here. No panic crosses the C
//! boundary.

// Every `unsafe` operation sits in its own block, even in an `unsafe fn`, with the `// SAFETY:`
// line that says why it holds; every public `unsafe fn` documents its contract (`# Safety`).
// `pub` only where another crate reaches the item: the rest is `pub(crate)`, so rustc reports
// dead code.
#![warn(unreachable_pub)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod config;
mod driver;
mod engine;
mod env;
mod gpu;
mod hip_abi;
mod io;
mod log;
mod params;
mod stats;
mod version;
mod window;

use std::panic::{catch_unwind, AssertUnwindSafe};

use cufile_abi::{code, CUfileError_t};

/// Bytes that say which library this is, for a reader of the file (the engine does not use
/// a `libcufile.so.0` that carries them as its GPU-direct path: that would be itself).
pub(crate) const MARKER: &[u8] = b"hipfile-cufile: libcufile.so.0 served by the hipfile engine";

/// Run `body`; a panic is logged and answered with what `on_panic` makes (made only then: it
/// may set `errno`).
pub(crate) fn boundary<T>(on_panic: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => v,
        Err(_) => {
            log::error("internal panic caught at the C boundary");
            on_panic()
        }
    }
}

/// [`boundary`] for the calls returning `CUfileError_t`.
pub(crate) fn boundary_op(body: impl FnOnce() -> Result<(), CUfileError_t>) -> CUfileError_t {
    boundary(
        || CUfileError_t::op(code::INTERNAL_ERROR),
        || match body() {
            Ok(()) => CUfileError_t::SUCCESS,
            Err(e) => e,
        },
    )
}
