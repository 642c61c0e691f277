//! What stream-ordered I/O needs from a runtime beyond copies and events: a 32-bit word in
//! host-mapped pinned memory that a stream waits on ([`Signal`]), and a gate a blocking host
//! function waits on when the runtime cannot wait on memory ([`HostGate`]).

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::{RtResult, Runtime, StreamHandle};

/// A 32-bit word of host-mapped pinned memory: the host writes it, a stream waits on it.
#[derive(Debug)]
pub struct Signal {
    host: NonNull<AtomicU32>,
    /// The word's device alias (what the stream's wait names).
    pub device: usize,
}

// SAFETY: the word is only ever accessed atomically; the allocation lives until
// `Runtime::signal_free` consumes the value.
unsafe impl Send for Signal {}
// SAFETY: as above.
unsafe impl Sync for Signal {}

impl Signal {
    /// A signal over the word at `host` (aligned pinned memory from the runtime, zeroed by the
    /// caller) with its device alias.
    ///
    /// # Safety
    /// `host` points to a 4-byte aligned word of pinned memory that stays allocated until the
    /// signal is given to `Runtime::signal_free`, and is accessed only through this signal.
    pub unsafe fn new(host: NonNull<u32>, device: usize) -> Signal {
        // SAFETY: per the contract the word is valid; AtomicU32 has u32's layout.
        unsafe { host.as_ptr().write(0) };
        Signal {
            host: host.cast(),
            device,
        }
    }

    /// Store `v`, released to the stream (and to every thread that reads the word).
    pub fn set(&self, v: u32) {
        // SAFETY: the word is allocated while `self` lives (constructor contract).
        unsafe { self.host.as_ref() }.store(v, Ordering::Release);
    }

    /// The host address (for the runtime's free).
    pub(super) fn host_ptr(&self) -> *mut u8 {
        self.host.as_ptr().cast()
    }
}

/// A gate a blocking host function waits on: open once the operation it holds the stream for
/// is done. It only waits on a condition variable (no runtime call inside a host function).
#[derive(Debug, Default)]
pub struct HostGate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl HostGate {
    /// Let the host function return.
    pub fn open(&self) {
        *self.open.lock() = true;
        self.cv.notify_all();
    }

    fn wait(&self) {
        let mut open = self.open.lock();
        while !*open {
            self.cv.wait(&mut open);
        }
    }
}

/// The host function behind [`hold_stream`]: waits until the gate opens, then drops it.
unsafe extern "C" fn gate_trampoline(data: *mut c_void) {
    // SAFETY: `data` came from `Arc::into_raw` in `hold_stream`, and the runtime calls each
    // host function exactly once.
    let gate = unsafe { Arc::from_raw(data.cast::<HostGate>()) };
    // A panic must not unwind into the runtime.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| gate.wait()));
}

/// Hold `stream` with a host function until `gate` opens: what stream-ordered I/O uses when the
/// runtime cannot wait on a memory value. The runtime runs host functions of all streams on
/// few threads, so this holds up other streams' host functions while it waits.
pub fn hold_stream(rt: &dyn Runtime, stream: StreamHandle, gate: &Arc<HostGate>) -> RtResult<()> {
    let data = Arc::into_raw(Arc::clone(gate)) as *mut c_void;
    // SAFETY: the trampoline matches the host-function signature and owns one reference.
    let r = unsafe { rt.launch_host_func(stream, gate_trampoline, data) };
    if r.is_err() {
        // SAFETY: not queued, so the reference is still ours.
        drop(unsafe { Arc::from_raw(data.cast::<HostGate>()) });
    }
    r
}
