//! Thread cancellation (`pthread_cancel`) kept out of the library's calls.
//!
//! A cancellation request acted upon inside one of our calls would unwind through Rust frames
//! that hold locks, pinned buffers and registrations, and the panic boundary would swallow the
//! forced unwind, which makes glibc abort the whole process ("exception not rethrown"). Every
//! exported call therefore runs with the calling thread's cancellation disabled and restores
//! the application's state when it returns: a pending request then acts at the application's
//! next cancellation point, outside the library.

use std::ffi::c_int;

// glibc and musl: <pthread.h>.
const PTHREAD_CANCEL_ENABLE: c_int = 0;
const PTHREAD_CANCEL_DISABLE: c_int = 1;

extern "C" {
    fn pthread_setcancelstate(state: c_int, oldstate: *mut c_int) -> c_int;
}

/// Cancellation disabled on this thread until the guard drops (then the previous state is
/// back). Not a cancellation point itself.
pub(crate) struct NoCancel {
    previous: c_int,
}

impl NoCancel {
    /// Disable cancellation on the calling thread.
    #[inline(always)]
    pub(crate) fn disable() -> NoCancel {
        let mut previous = PTHREAD_CANCEL_ENABLE;
        // SAFETY: a valid state and a valid out-pointer; the call only changes this thread's
        // cancellation state.
        unsafe { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut previous) };
        NoCancel { previous }
    }
}

impl Drop for NoCancel {
    #[inline(always)]
    fn drop(&mut self) {
        if self.previous != PTHREAD_CANCEL_DISABLE {
            // SAFETY: as in `disable`; NULL is allowed for the old state.
            unsafe { pthread_setcancelstate(self.previous, std::ptr::null_mut()) };
        }
    }
}
