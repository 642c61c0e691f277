//! The pinned bounce-buffer pool: page-locked host buffers of one chunk each, allocated
//! through the runtime on demand, never more than the budget, reused for the life of the
//! driver open and freed when the pool is dropped. A caller that finds the pool exhausted
//! waits for a buffer to come back, so memory stays bounded whatever the load (target T10).
//!
//! One free buffer is kept in a lock-free "hot" slot: a small request checks it out and
//! returns it with one atomic swap each (target T9), and only a second concurrent user goes
//! to the mutex-protected free list. A thread that has to wait announces itself in `waiters`
//! before it looks at the hot slot a last time; a returner that fills the hot slot then sees
//! the announcement and wakes it (the two sequentially consistent pairs make a lost wake-up
//! impossible).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::runtime::Runtime;

struct PoolState {
    free: Vec<NonNull<u8>>,
}

// SAFETY: the pointers are exclusively owned pinned allocations, handed to one user at a time.
unsafe impl Send for PoolState {}

/// A bounded pool of pinned buffers of `chunk` bytes.
pub struct BouncePool {
    rt: &'static dyn Runtime,
    chunk: usize,
    max_buffers: AtomicUsize,
    /// Buffers allocated (in use, free or hot). Changed only under `state`'s lock; read
    /// without it as a hint by returning buffers.
    allocated: AtomicUsize,
    /// One free buffer outside the lock, or null.
    hot: AtomicPtr<u8>,
    /// Threads waiting in [`BouncePool::get`].
    waiters: AtomicUsize,
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
            max_buffers: AtomicUsize::new((budget / chunk).max(1)),
            allocated: AtomicUsize::new(0),
            hot: AtomicPtr::new(std::ptr::null_mut()),
            waiters: AtomicUsize::new(0),
            state: Mutex::new(PoolState { free: Vec::new() }),
            returned: Condvar::new(),
        }
    }

    /// Maximum number of buffers.
    pub fn max_buffers(&self) -> usize {
        self.max_buffers.load(Ordering::Relaxed)
    }

    /// Change the budget; at least one buffer. Free buffers above a lowered budget are
    /// released now, busy ones when they come back.
    pub fn set_budget(&self, budget: usize) {
        self.max_buffers
            .store((budget / self.chunk).max(1), Ordering::Relaxed);
        let surplus: Vec<NonNull<u8>> = {
            let mut st = self.state.lock();
            if let Some(p) = self.take_hot(Ordering::Acquire) {
                st.free.push(p);
            }
            let mut out = Vec::new();
            while self.allocated.load(Ordering::Relaxed) > self.max_buffers() {
                match st.free.pop() {
                    Some(p) => {
                        self.allocated.fetch_sub(1, Ordering::Relaxed);
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

    #[cfg(test)]
    /// Bytes currently allocated (in use or free).
    pub fn allocated_bytes(&self) -> usize {
        let _st = self.state.lock();
        self.allocated.load(Ordering::Relaxed) * self.chunk
    }

    #[inline(always)]
    fn take_hot(&self, order: Ordering) -> Option<NonNull<u8>> {
        NonNull::new(self.hot.swap(std::ptr::null_mut(), order))
    }

    /// Check a buffer out without waiting: `None` when the budget is in use.
    pub fn try_get(&self) -> Option<Bounce<'_>> {
        if let Some(ptr) = self.take_hot(Ordering::Acquire) {
            return Some(Bounce { pool: self, ptr });
        }
        let mut st = self.state.lock();
        if let Some(ptr) = st.free.pop() {
            return Some(Bounce { pool: self, ptr });
        }
        if self.allocated.load(Ordering::Relaxed) >= self.max_buffers() {
            return None;
        }
        self.allocated.fetch_add(1, Ordering::Relaxed);
        drop(st);
        self.allocate_reserved().ok()
    }

    /// Check a buffer out, allocating one if under budget, else waiting for one.
    #[inline(always)]
    pub fn get(&self) -> Result<Bounce<'_>> {
        match self.take_hot(Ordering::Acquire) {
            Some(ptr) => Ok(Bounce { pool: self, ptr }),
            None => self.get_locked(),
        }
    }

    /// [`BouncePool::get`] when the hot slot is empty.
    #[inline(never)]
    fn get_locked(&self) -> Result<Bounce<'_>> {
        let mut st = self.state.lock();
        loop {
            if let Some(ptr) = st.free.pop() {
                return Ok(Bounce { pool: self, ptr });
            }
            if self.allocated.load(Ordering::Relaxed) < self.max_buffers() {
                self.allocated.fetch_add(1, Ordering::Relaxed);
                drop(st);
                return self.allocate_reserved();
            }
            // Announce, then look at the hot slot a last time (see the module comment).
            self.waiters.fetch_add(1, Ordering::SeqCst);
            if let Some(ptr) = self.take_hot(Ordering::SeqCst) {
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                return Ok(Bounce { pool: self, ptr });
            }
            self.returned.wait(&mut st);
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Allocate a buffer whose slot was already counted in `allocated`; the slot is given
    /// back on failure. Runs without the lock: it is a GPU runtime call.
    fn allocate_reserved(&self) -> Result<Bounce<'_>> {
        let unreserve = |e: Error| {
            let st = self.state.lock();
            self.allocated.fetch_sub(1, Ordering::Relaxed);
            drop(st);
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

    /// Take back a buffer: into the hot slot when it is empty and the pool is within budget,
    /// otherwise through the lock (freed when over a lowered budget).
    #[inline(always)]
    fn give_back(&self, ptr: NonNull<u8>) {
        if self.allocated.load(Ordering::Relaxed) <= self.max_buffers()
            && self
                .hot
                .compare_exchange(
                    std::ptr::null_mut(),
                    ptr.as_ptr(),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            if self.waiters.load(Ordering::SeqCst) > 0 {
                self.wake_waiter();
            }
            return;
        }
        self.give_back_locked(ptr);
    }

    /// Wake a thread waiting in [`BouncePool::get`]; taking the lock orders the wake-up after
    /// the waiter has gone to sleep.
    #[cold]
    fn wake_waiter(&self) {
        drop(self.state.lock());
        self.returned.notify_one();
    }

    /// [`BouncePool::give_back`] when the hot slot is taken or the budget was lowered.
    #[inline(never)]
    fn give_back_locked(&self, ptr: NonNull<u8>) {
        let mut st = self.state.lock();
        if self.allocated.load(Ordering::Relaxed) > self.max_buffers() {
            // Over a lowered budget: free instead of keeping.
            self.allocated.fetch_sub(1, Ordering::Relaxed);
            drop(st);
            // SAFETY: this buffer came from host_alloc and is no longer used.
            unsafe { self.rt.host_free(ptr.as_ptr()) };
            crate::stats::recorder::bounce_released(self.chunk as u64);
        } else {
            st.free.push(ptr);
            drop(st);
        }
        self.returned.notify_one();
    }
}

impl Drop for BouncePool {
    fn drop(&mut self) {
        let hot = self.take_hot(Ordering::Acquire);
        let st = self.state.get_mut();
        st.free.extend(hot);
        debug_assert_eq!(
            st.free.len(),
            *self.allocated.get_mut(),
            "every bounce buffer is back"
        );
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

    /// Give the buffer back now (what dropping does; an explicit call keeps the common path
    /// free of drop glue).
    #[inline(always)]
    pub fn release(self) {
        let this = std::mem::ManuallyDrop::new(self);
        this.pool.give_back(this.ptr);
    }

    /// The whole buffer, read-only.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the buffer is `chunk` bytes of host memory owned exclusively by this Bounce.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.pool.chunk) }
    }
}

impl Drop for Bounce<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.pool.give_back(self.ptr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::host::HostRuntime;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    fn pool(buffers: usize) -> BouncePool {
        let rt: &'static HostRuntime = Box::leak(Box::new(HostRuntime::new("bounce pool test")));
        BouncePool::new(rt, 4096, buffers * 4096)
    }

    #[test]
    fn one_user_reuses_the_hot_buffer() {
        let p = pool(4);
        let first = p.get().unwrap().ptr;
        for _ in 0..1000 {
            let b = p.get().unwrap();
            assert_eq!(b.ptr, first, "the hot buffer comes back every time");
            b.release();
        }
        assert_eq!(
            p.allocated_bytes(),
            4096,
            "one buffer for one user at a time"
        );
    }

    #[test]
    fn concurrent_users_stay_within_the_budget_and_get_distinct_buffers() {
        let p = pool(2);
        let a = p.get().unwrap();
        let b = p.get().unwrap();
        assert_ne!(a.ptr, b.ptr);
        assert!(p.try_get().is_none(), "budget of two buffers in use");
        drop(a);
        let c = p.try_get().expect("a buffer came back");
        assert_ne!(c.ptr, b.ptr);
        drop((b, c));
        assert_eq!(p.allocated_bytes(), 2 * 4096);
    }

    #[test]
    fn a_waiter_is_woken_by_a_buffer_returned_to_the_hot_slot() {
        let p = pool(1);
        let held = p.get().unwrap();
        let got = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let b = p.get().unwrap();
                got.store(true, Ordering::SeqCst);
                drop(b);
            });
            // Let the thread reach the wait, then give the only buffer back.
            while p.waiters.load(Ordering::SeqCst) == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(!got.load(Ordering::SeqCst));
            held.release();
        });
        assert!(got.load(Ordering::SeqCst));
        assert_eq!(p.allocated_bytes(), 4096);
    }

    #[test]
    fn many_threads_share_a_small_pool_without_losing_a_wake_up() {
        let p = pool(2);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..2000 {
                        let mut b = p.get().unwrap();
                        b.as_mut_slice()[0] = 1;
                        drop(b);
                    }
                });
            }
        });
        assert!(p.allocated_bytes() <= 2 * 4096);
    }

    #[test]
    fn a_lowered_budget_frees_the_hot_buffer_and_returning_ones() {
        let p = pool(3);
        let (a, b, c) = (p.get().unwrap(), p.get().unwrap(), p.get().unwrap());
        drop(a); // into the hot slot
        p.set_budget(4096);
        assert_eq!(
            p.allocated_bytes(),
            2 * 4096,
            "the free (hot) buffer is released now"
        );
        drop(b); // over budget: freed on return
        assert_eq!(p.allocated_bytes(), 4096);
        drop(c); // within budget: kept
        assert_eq!(p.allocated_bytes(), 4096);
        let d = p.get().unwrap();
        assert!(p.try_get().is_none());
        drop(d);
    }
}
