//! The C ABI: the only home of `#[no_mangle]` (one file per API family, as the header groups
//! them), the panic boundary, C argument checks and the mapping of errors to C codes.
//!
//! Every exported function is a boundary around an inner function: a panic never unwinds
//! into C; it becomes the function's "internal error" value and one log line.

pub mod abi;
mod batch;
mod buffer;
mod driver;
pub(crate) mod error;
mod file;
mod io;
mod params;
mod stats;
mod stats_client;
mod stats_levels;
mod stream;

pub use abi::*;
pub use batch::*;
pub use buffer::*;
pub use driver::*;
pub use file::*;
pub use io::*;
pub use params::*;
pub use stats::*;
pub use stats_client::*;
pub use stream::*;

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs when the library is unloaded (`dlclose`) or the process exits: stops the statistics
/// server thread, so that no thread of ours runs code that is about to be unmapped. A
/// destructor C calls, so it is a panic boundary too.
extern "C" fn on_unload() {
    boundary((), crate::stats::server::shutdown);
}

// SAFETY (not an unsafe block): an ELF destructor entry; the function takes no arguments and
// never unwinds.
#[used]
#[link_section = ".fini_array"]
static ON_UNLOAD: extern "C" fn() = on_unload;

/// Run `body` with thread cancellation held off (no `pthread_cancel` can act inside the
/// library, see [`crate::sys::cancel`]); if it panics, log the panic and return `on_panic`
/// instead.
#[inline(always)]
pub(crate) fn boundary<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    let _no_cancel = crate::sys::cancel::NoCancel::disable();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => v,
        Err(payload) => {
            report_panic(payload.as_ref());
            on_panic
        }
    }
}

/// Log a caught panic.
#[cold]
fn report_panic(payload: &(dyn Any + Send)) {
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic payload)");
    tracing::error!(target: "hipfile", "internal panic caught at the C boundary: {msg}");
}

/// The boundary for functions returning `hipFileError_t`: errors map through
/// [`error::op_error`], a panic becomes `hipFileInternalError`.
pub(crate) fn boundary_op(body: impl FnOnce() -> crate::error::Result<()>) -> hipFileError_t {
    boundary(hipFileError_t::op(hipFileInternalError), || match body() {
        Ok(()) => hipFileError_t::SUCCESS,
        Err(e) => error::op_error(e),
    })
}

/// An out-parameter of a C function: the pointer checked for NULL once, at the top, and written
/// only when the call succeeds (rustls-ffi's and the simulator's shape).
pub(crate) struct Out<T>(std::ptr::NonNull<T>);

impl<T> Out<T> {
    /// `p`, or `InvalidValue(what)` when it is NULL.
    ///
    /// # Safety
    /// `p` is NULL or valid for a write of a `T` until [`Out::write`] (the C contract of the
    /// function it came to).
    pub(crate) unsafe fn new(p: *mut T, what: &'static str) -> crate::error::Result<Out<T>> {
        std::ptr::NonNull::new(p)
            .map(Out)
            .ok_or(crate::error::Error::InvalidValue(what))
    }

    /// Store the result.
    pub(crate) fn write(self, v: T) {
        // SAFETY: non-NULL, and valid for a write of a `T` per `new`'s contract.
        unsafe { self.0.as_ptr().write(v) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_internal_errors() {
        let r = boundary_op(|| panic!("deliberate"));
        assert_eq!(r, hipFileError_t::op(hipFileInternalError));
        let n: isize = boundary(-(hipFileInternalError as isize), || panic!("deliberate"));
        assert_eq!(n, -5030);
        assert_eq!(boundary_op(|| Ok(())), hipFileError_t::SUCCESS);
    }
}
