//! The pinned bounce-buffer pool: page-locked host buffers of one chunk each, allocated
//! through the runtime on demand, never more than the budget, reused for the life of the
//! driver open and freed when the pool is dropped. A caller that finds the pool exhausted
//! waits for a buffer to come back, so memory stays bounded whatever the load (target T10).

use std::ptr::NonNull;

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::runtime::Runtime;

struct PoolState {
    free: Vec<NonNull<u8>>,
    allocated: usize,
}

// SAFETY: the pointers are exclusively owned pinned allocations, handed to one user at a time.
unsafe impl Send for PoolState {}

/// A bounded pool of pinned buffers of `chunk` bytes.
pub struct BouncePool {
    rt: &'static dyn Runtime,
    chunk: usize,
    max_buffers: std::sync::atomic::AtomicUsize,
    state: Mutex<PoolState>,
    returned: Condvar,
}

/// A buffer checked out of the pool; goes back on drop.
pub struct Bounce<'a> {
    pool: &'a BouncePool,
    ptr: NonNull<u8>,
}

// SAFETY: a Bounce owns its buffer exclusively until dropped.
unsafe impl Send for Bounce<'_> {}

impl BouncePool {
    /// A pool of buffers of `chunk` bytes within `budget` bytes (at least one buffer).
    pub fn new(rt: &'static dyn Runtime, chunk: usize, budget: usize) -> Self {
        BouncePool {
            rt,
            chunk,
            max_buffers: std::sync::atomic::AtomicUsize::new((budget / chunk).max(1)),
            state: Mutex::new(PoolState {
                free: Vec::new(),
                allocated: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// Bytes per buffer.
    pub fn chunk(&self) -> usize {
        self.chunk
    }

    /// Maximum number of buffers.
    pub fn max_buffers(&self) -> usize {
        self.max_buffers.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Change the budget; at least one buffer. Free buffers above a lowered budget are
    /// released now, busy ones when they come back.
    pub fn set_budget(&self, budget: usize) {
        self.max_buffers.store(
            (budget / self.chunk).max(1),
            std::sync::atomic::Ordering::Relaxed,
        );
        let surplus: Vec<NonNull<u8>> = {
            let mut st = self.state.lock();
            let mut out = Vec::new();
            while st.allocated > self.max_buffers() {
                match st.free.pop() {
                    Some(p) => {
                        st.allocated -= 1;
                        out.push(p);
                    }
                    None => break,
                }
            }
            out
        };
        for p in surplus {
            // SAFETY: a free buffer from host_alloc, no longer reachable from the pool.
            unsafe { self.rt.host_free(p.as_ptr()) };
            crate::stats::recorder::bounce_released(self.chunk as u64);
        }
        self.returned.notify_all();
    }

    /// Bytes currently allocated (in use or free).
    pub fn allocated_bytes(&self) -> usize {
        self.state.lock().allocated * self.chunk
    }

    /// Check a buffer out without waiting: `None` when the budget is in use.
    pub fn try_get(&self) -> Option<Bounce<'_>> {
        let mut st = self.state.lock();
        if let Some(ptr) = st.free.pop() {
            return Some(Bounce { pool: self, ptr });
        }
        if st.allocated >= self.max_buffers() {
            return None;
        }
        st.allocated += 1;
        drop(st);
        self.allocate_reserved().ok()
    }

    /// Check a buffer out, allocating one if under budget, else waiting for one.
    pub fn get(&self) -> Result<Bounce<'_>> {
        let mut st = self.state.lock();
        loop {
            if let Some(ptr) = st.free.pop() {
                return Ok(Bounce { pool: self, ptr });
            }
            if st.allocated < self.max_buffers() {
                st.allocated += 1;
                drop(st);
                return self.allocate_reserved();
            }
            self.returned.wait(&mut st);
        }
    }
}

impl BouncePool {
    /// Allocate a buffer whose slot was already counted in `allocated`; the slot is given
    /// back on failure. Runs without the lock: it is a GPU runtime call.
    fn allocate_reserved(&self) -> Result<Bounce<'_>> {
        let unreserve = |e: Error| {
            self.state.lock().allocated -= 1;
            self.returned.notify_one();
            e
        };
        match self.rt.host_alloc(self.chunk) {
            Ok(p) => NonNull::new(p)
                .map(|ptr| {
                    crate::stats::recorder::bounce_allocated(self.chunk as u64);
                    Bounce { pool: self, ptr }
                })
                .ok_or_else(|| unreserve(Error::Internal("pinned allocation returned NULL"))),
            Err(e) => Err(unreserve(Error::Runtime(e))),
        }
    }
}

impl Drop for BouncePool {
    fn drop(&mut self) {
        let st = self.state.get_mut();
        debug_assert_eq!(st.free.len(), st.allocated, "every bounce buffer is back");
        for p in st.free.drain(..) {
            // SAFETY: each pointer came from host_alloc and no Bounce borrows the pool anymore.
            unsafe { self.rt.host_free(p.as_ptr()) };
            crate::stats::recorder::bounce_released(self.chunk as u64);
        }
    }
}

impl Bounce<'_> {
    /// The whole buffer.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the buffer is `chunk` bytes of host memory owned exclusively by this Bounce.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.pool.chunk) }
    }

    /// Raw pointer to the buffer (for stream-ordered copies).
    pub fn as_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Bounce<'_> {
    fn drop(&mut self) {
        let pool = self.pool;
        let mut st = pool.state.lock();
        if st.allocated > pool.max_buffers() {
            // Over a lowered budget: free instead of keeping.
            st.allocated -= 1;
            drop(st);
            // SAFETY: this buffer came from host_alloc and is no longer used.
            unsafe { pool.rt.host_free(self.ptr.as_ptr()) };
            crate::stats::recorder::bounce_released(pool.chunk as u64);
        } else {
            st.free.push(self.ptr);
            drop(st);
        }
        pool.returned.notify_one();
    }
}
