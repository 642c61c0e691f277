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
//!
//! A device read that wants several buffers the pool lacks (the first large read of a process)
//! gets them as one [`Fill`]: one mapping whose buffers the request's participants fault in
//! together and then read the file into while one of them registers the whole mapping with the
//! driver; their first copies wait for that registration. One buffer at a time, a participant
//! waits for its buffers to be faulted in and registered before it reads anything, and the
//! driver serialises the registrations (H200, a fresh process's first 1 GiB read: its 20
//! buffers came one by one between 1.5 and 7.2 ms; faulted in by its ten participants in 1.4-4.3
//! ms, then registered at once in 2.4-4.7 ms, in traces of four fresh processes).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::engine::plan;
use crate::error::{Error, Result};
use crate::runtime::{RtError, Runtime};
use crate::sys;

struct PoolState {
    free: Vec<NonNull<u8>>,
    /// The fill under way, if any: a `get` that finds no free buffer helps it to its end
    /// ([`Fill::ready`]) instead of allocating one more.
    filling: Option<Arc<Fill>>,
    /// The fills' mappings (start, bytes, registered), freed with the pool.
    slabs: Vec<(NonNull<u8>, usize, bool)>,
}

impl PoolState {
    /// Whether `p` is a buffer of a fill (freed only with its whole mapping).
    fn in_slab(&self, p: NonNull<u8>) -> bool {
        let a = p.as_ptr() as usize;
        self.slabs
            .iter()
            .any(|&(s, len, _)| (s.as_ptr() as usize..s.as_ptr() as usize + len).contains(&a))
    }
}

// SAFETY: the pointers are exclusively owned pinned allocations, handed to one user at a time.
unsafe impl Send for PoolState {}

/// A bounded pool of pinned buffers of `chunk` bytes.
pub(crate) struct BouncePool {
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
    /// Cleared when a registration failed: later requests allocate buffer by buffer.
    fills: AtomicBool,
}

/// Buffers for one request, made as one mapping and registered at once (see the module
/// comment). A participant of the request takes its buffers with [`Fill::take`] (faulted in by
/// it, ready for file I/O at once) and calls [`Fill::ready`] before its first copy. Whoever
/// faults in the last buffer registers the mapping. `ready` first faults in every buffer nobody
/// took (they go to the pool's free list), so the registration never waits for a participant
/// that has not come.
pub(crate) struct Fill {
    base: NonNull<u8>,
    buffers: usize,
    chunk: usize,
    /// The next buffer to hand out.
    next: AtomicUsize,
    /// Buffers faulted in.
    touched: AtomicUsize,
    /// Buffers faulted in by `ready` for nobody.
    spare: Mutex<Vec<usize>>,
    /// Whether the fill is over (registered, or the registration failed).
    done: Mutex<bool>,
    ended: Condvar,
}

// SAFETY: `base` is a mapping whose buffers are each handed to one thread (the `next` counter)
// and otherwise untouched until the fill ends.
unsafe impl Send for Fill {}
// SAFETY: as above; the counters are atomic and the rest is behind locks.
unsafe impl Sync for Fill {}

/// A buffer checked out of the pool; goes back on drop.
pub(crate) struct Bounce<'a> {
    pool: &'a BouncePool,
    ptr: NonNull<u8>,
}

// SAFETY: a Bounce owns its buffer exclusively until dropped.
unsafe impl Send for Bounce<'_> {}

impl BouncePool {
    /// A pool of buffers of `chunk` bytes within `budget` bytes (at least one buffer).
    pub(crate) fn new(rt: &'static dyn Runtime, chunk: usize, budget: usize) -> Self {
        BouncePool {
            rt,
            chunk,
            max_buffers: AtomicUsize::new((budget / chunk).max(1)),
            allocated: AtomicUsize::new(0),
            hot: AtomicPtr::new(std::ptr::null_mut()),
            waiters: AtomicUsize::new(0),
            state: Mutex::new(PoolState {
                free: Vec::new(),
                filling: None,
                slabs: Vec::new(),
            }),
            returned: Condvar::new(),
            fills: AtomicBool::new(rt.host_registration().is_some()),
        }
    }

    /// A [`Fill`] for a request that will want `wanted` buffers at once, if the pool lacks
    /// enough of them ([`plan::fill_buffers`]), no other fill is under way and the runtime can
    /// register memory; `None` otherwise (the buffers then come one by one, as usual).
    pub(crate) fn fill(&self, wanted: usize) -> Option<Arc<Fill>> {
        // Without the lock first: once the pool has grown, a request costs one load here.
        if self.allocated.load(Ordering::Relaxed) >= wanted
            || !self.fills.load(Ordering::Relaxed)
            || self.chunk % 4096 != 0
        {
            return None;
        }
        let mut st = self.state.lock();
        let allocated = self.allocated.load(Ordering::Relaxed);
        let n = plan::fill_buffers(wanted, allocated, self.max_buffers());
        if n == 0 || st.filling.is_some() {
            return None;
        }
        // Nothing is faulted in yet: a lazy mapping is quick, so it is made under the lock.
        let base = sys::huge::map_lazy(n * self.chunk).ok()?;
        let fill = Arc::new(Fill {
            base,
            buffers: n,
            chunk: self.chunk,
            next: AtomicUsize::new(0),
            touched: AtomicUsize::new(0),
            spare: Mutex::new(Vec::new()),
            done: Mutex::new(false),
            ended: Condvar::new(),
        });
        self.allocated.fetch_add(n, Ordering::Relaxed);
        st.filling = Some(fill.clone());
        Some(fill)
    }

    /// The fill is over: its mapping is recorded (`registered` or not: unregistered buffers
    /// still copy correctly, only slower), its spare buffers are free, and threads waiting for
    /// a buffer look again.
    fn end_fill(&self, fill: &Fill, registered: bool, spare: Vec<usize>) {
        let mut st = self.state.lock();
        st.filling = None;
        st.slabs
            .push((fill.base, fill.buffers * self.chunk, registered));
        st.free.extend(spare.into_iter().map(|i| fill.buffer(i)));
        drop(st);
        crate::stats::recorder::bounce_allocated((fill.buffers * self.chunk) as u64);
        self.returned.notify_all();
    }

    /// Maximum number of buffers.
    pub(crate) fn max_buffers(&self) -> usize {
        self.max_buffers.load(Ordering::Relaxed)
    }

    /// Change the budget; at least one buffer. Free buffers above a lowered budget are
    /// released now, busy ones when they come back; a fill's buffers stay until the pool is
    /// dropped (they are one mapping and one registration).
    pub(crate) fn set_budget(&self, budget: usize) {
        self.max_buffers
            .store((budget / self.chunk).max(1), Ordering::Relaxed);
        let surplus: Vec<NonNull<u8>> = {
            let mut st = self.state.lock();
            if let Some(p) = self.take_hot(Ordering::Acquire) {
                st.free.push(p);
            }
            // Buffers of a fill are freed only with their whole mapping, when the pool goes.
            let mut out = Vec::new();
            let mut kept = Vec::new();
            while self.allocated.load(Ordering::Relaxed) > self.max_buffers() {
                match st.free.pop() {
                    Some(p) if st.in_slab(p) => kept.push(p),
                    Some(p) => {
                        self.allocated.fetch_sub(1, Ordering::Relaxed);
                        out.push(p);
                    }
                    None => break,
                }
            }
            st.free.extend(kept);
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
    pub(crate) fn allocated_bytes(&self) -> usize {
        let _st = self.state.lock();
        self.allocated.load(Ordering::Relaxed) * self.chunk
    }

    #[inline(always)]
    fn take_hot(&self, order: Ordering) -> Option<NonNull<u8>> {
        NonNull::new(self.hot.swap(std::ptr::null_mut(), order))
    }

    /// Check a buffer out without waiting: `None` when the budget is in use.
    pub(crate) fn try_get(&self) -> Option<Bounce<'_>> {
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
    pub(crate) fn get(&self) -> Result<Bounce<'_>> {
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
            if let Some(fill) = st.filling.clone() {
                drop(st);
                fill.ready(self);
                st = self.state.lock();
                continue;
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
        if self.allocated.load(Ordering::Relaxed) > self.max_buffers() && !st.in_slab(ptr) {
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
        // A fill nobody finished (its request failed before any copy): finish it, so that its
        // buffers are counted back and its mapping freed like the others.
        if let Some(fill) = self.state.get_mut().filling.clone() {
            fill.ready(self);
        }
        let hot = self.take_hot(Ordering::Acquire);
        let st = self.state.get_mut();
        st.free.extend(hot);
        debug_assert_eq!(
            st.free.len(),
            *self.allocated.get_mut(),
            "every bounce buffer is back"
        );
        let free = std::mem::take(&mut st.free);
        for p in free.into_iter().filter(|&p| !st.in_slab(p)) {
            // SAFETY: each pointer came from host_alloc and no Bounce borrows the pool anymore.
            unsafe { self.rt.host_free(p.as_ptr()) };
            crate::stats::recorder::bounce_released(self.chunk as u64);
        }
        for (base, len, registered) in st.slabs.drain(..) {
            // SAFETY: a fill's mapping of `len` bytes from map_lazy (registered if so recorded),
            // none of its buffers in use any more.
            unsafe {
                if let (true, Some(r)) = (registered, self.rt.host_registration()) {
                    r.host_unregister(base.as_ptr());
                }
                sys::huge::unmap(base, len);
            }
            crate::stats::recorder::bounce_released(len as u64);
        }
    }
}

impl Fill {
    fn buffer(&self, i: usize) -> NonNull<u8> {
        self.base.map_addr(|a| a.saturating_add(i * self.chunk))
    }

    /// The next `n` buffers nobody has (fewer at the end), not faulted in yet.
    fn claim(&self, n: usize) -> std::ops::Range<usize> {
        let i = self.next.fetch_add(n, Ordering::Relaxed);
        i.min(self.buffers)..i.saturating_add(n).min(self.buffers)
    }

    /// Fault in buffer `i`, claimed by the caller.
    fn touch(&self, i: usize) {
        // SAFETY: buffer `i` of the mapping, handed to this thread alone (the counter).
        unsafe { sys::huge::touch(self.buffer(i).as_ptr(), self.chunk) };
    }

    /// One more buffer is faulted in; the last one registers the fill.
    fn touched(&self, pool: &BouncePool) {
        if self.touched.fetch_add(1, Ordering::AcqRel) + 1 == self.buffers {
            self.register(pool);
        }
    }

    /// Up to two buffers for the calling participant, faulted in by it: ready for file I/O now,
    /// for copies after [`Fill::ready`]. `pool` is the pool this fill came from. Both are
    /// claimed before either is faulted in, so that participants arriving together each get
    /// theirs and fault them in side by side.
    pub(crate) fn take<'p>(&self, pool: &'p BouncePool) -> [Option<Bounce<'p>>; 2] {
        let mut mine = self.claim(2);
        std::array::from_fn(|_| {
            let i = mine.next()?;
            self.touch(i);
            let b = Bounce {
                pool,
                ptr: self.buffer(i),
            };
            self.touched(pool);
            Some(b)
        })
    }

    /// Fault in the buffers nobody took (for the pool), then wait until the fill is over. One
    /// buffer at a time, so that threads calling this together share the faulting in.
    pub(crate) fn ready(&self, pool: &BouncePool) {
        while let Some(i) = self.claim(1).next() {
            self.touch(i);
            self.spare.lock().push(i);
            self.touched(pool);
        }
        let mut done = self.done.lock();
        while !*done {
            self.ended.wait(&mut done);
        }
    }

    /// Every buffer is faulted in: one registration for all of them. The fill ends whatever
    /// happens (a panic in the runtime counts as a failure), or `ready` would wait forever.
    fn register(&self, pool: &BouncePool) {
        let len = self.buffers * self.chunk;
        let registered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.rt
                .host_registration()
                .ok_or(RtError::NOT_SUPPORTED)
                .and_then(|r| r.host_register(self.base.as_ptr(), len))
        }));
        let ok = matches!(registered, Ok(Ok(())));
        if !ok {
            tracing::warn!(
                target: "hipfile",
                "registering {len} bytes of bounce buffers failed ({:?}): they copy as pageable \
                 memory, more slowly, and later buffers are allocated one by one",
                registered.ok().and_then(Result::err)
            );
            pool.fills.store(false, Ordering::Relaxed);
        }
        let spare = std::mem::take(&mut *self.spare.lock());
        pool.end_fill(self, ok, spare);
        *self.done.lock() = true;
        self.ended.notify_all();
    }
}

impl Bounce<'_> {
    /// The whole buffer.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the buffer is `chunk` bytes of host memory owned exclusively by this Bounce.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.pool.chunk) }
    }

    /// Give the buffer back now (what dropping does; an explicit call keeps the common path
    /// free of drop glue).
    #[inline(always)]
    pub(crate) fn release(self) {
        let this = std::mem::ManuallyDrop::new(self);
        this.pool.give_back(this.ptr);
    }

    /// The whole buffer, read-only.
    pub(crate) fn as_slice(&self) -> &[u8] {
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

    #[test]
    fn a_fill_hands_its_buffers_to_its_participants_and_the_rest_to_the_pool() {
        let p = pool(8);
        let single = p.get().unwrap();
        assert!(p.fill(4).is_none(), "three missing: one by one");
        let fill = p.fill(7).expect("six missing");
        assert!(p.fill(8).is_none(), "one fill at a time");
        assert_eq!(p.allocated_bytes(), 7 * 4096, "reserved at once");
        let [a, b] = fill.take(&p);
        let [c, d] = fill.take(&p);
        let (a, b, c, d) = (a.unwrap(), b.unwrap(), c.unwrap(), d.unwrap());
        let base = fill.base.as_ptr() as usize;
        let got: Vec<usize> = [&a, &b, &c, &d]
            .iter()
            .map(|x| x.ptr.as_ptr() as usize)
            .collect();
        assert_eq!(got, (0..4).map(|i| base + i * 4096).collect::<Vec<_>>());
        assert!(!*fill.done.lock(), "two buffers nobody took yet");
        // `ready` faults in the two others, registers, and they become free buffers.
        fill.ready(&p);
        assert!(*fill.done.lock());
        assert_eq!(fill.touched.load(Ordering::SeqCst), 6);
        assert!(p.state.lock().filling.is_none());
        assert_eq!(p.state.lock().slabs.len(), 1);
        let e = p.try_get().unwrap();
        let f = p.try_get().unwrap();
        let mut spare = vec![e.ptr.as_ptr() as usize, f.ptr.as_ptr() as usize];
        spare.sort_unstable();
        assert_eq!(spare, vec![base + 4 * 4096, base + 5 * 4096]);
        // One more single buffer fits the budget of eight, then nothing.
        let g = p.try_get().unwrap();
        assert!(p.try_get().is_none());
        assert!(p.fill(8).is_none(), "nothing missing");
        drop((a, b, c, d, e, f, g, single));
        assert_eq!(p.allocated_bytes(), 8 * 4096);
    }

    #[test]
    fn a_buffer_asked_for_during_a_fill_finishes_the_fill_first() {
        let p = pool(6);
        let fill = p.fill(6).expect("six missing");
        let [a, b] = fill.take(&p);
        let (a, b) = (a.unwrap(), b.unwrap());
        // The participants that would take the rest never come: a `get` faults them in.
        let got = std::thread::scope(|s| {
            s.spawn(|| p.get().map(|b| b.ptr.as_ptr() as usize))
                .join()
                .unwrap()
        });
        let got = got.unwrap();
        let base = fill.base.as_ptr() as usize;
        assert!(
            (base + 2 * 4096..base + 6 * 4096).contains(&got),
            "a spare buffer of the fill"
        );
        assert!(*fill.done.lock());
        assert_eq!(p.allocated_bytes(), 6 * 4096, "no buffer beyond the fill's");
        drop((a, b));
    }

    #[test]
    fn many_participants_share_a_fill_and_every_buffer_is_used_once() {
        let p = pool(16);
        let fill = p.fill(16).expect("all missing");
        let seen = Mutex::new(Vec::new());
        let all_took = std::sync::Barrier::new(6);
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    let mut mine: Vec<Bounce<'_>> = fill.take(&p).into_iter().flatten().collect();
                    all_took.wait();
                    fill.ready(&p);
                    for b in &mut mine {
                        b.as_mut_slice().fill(7);
                        seen.lock().push(b.ptr.as_ptr() as usize);
                    }
                });
            }
        });
        let mut seen = seen.into_inner();
        let n = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            (n, seen.len()),
            (12, 12),
            "six participants, two buffers each, all distinct"
        );
        assert_eq!(p.allocated_bytes(), 16 * 4096);
        let hot = usize::from(!p.hot.load(Ordering::SeqCst).is_null());
        assert_eq!(
            p.state.lock().free.len() + hot,
            16,
            "four spare, twelve returned"
        );
    }

    #[test]
    fn a_lowered_budget_keeps_the_buffers_of_a_fill() {
        let p = pool(8);
        let single = p.get().unwrap();
        let fill = p.fill(5).expect("four missing");
        fill.ready(&p);
        let held: Vec<_> = (0..4).map(|_| p.try_get().unwrap()).collect();
        assert_eq!(p.allocated_bytes(), 5 * 4096);
        p.set_budget(4096);
        drop(held);
        drop(single);
        // The single buffer is freed on its return; the fill's stay until the pool goes.
        assert_eq!(p.allocated_bytes(), 4 * 4096);
        assert_eq!(p.state.lock().free.len(), 4);
    }

    #[test]
    fn a_pool_dropped_during_a_fill_frees_it() {
        let p = pool(4);
        let fill = p.fill(4).expect("four missing");
        let [a, _] = fill.take(&p);
        drop(a);
        drop(p);
        assert!(*fill.done.lock(), "finished by the drop");
    }
}
