//! The host side of the staging kernel (`runtime/stage/stage.c`): how stream-ordered I/O moves
//! bytes between files and device memory.
//!
//! One launch of the kernel per operation is queued on the application's stream at submission,
//! over the operation's [`Mail`]: it starts when the work before it on the stream is done, says
//! so, and holds the stream until the host either finishes the operation without copies
//! ([`Mail::finish`]) or hands it a [`Stage`] ([`Mail::assign`]) and posts the operation's
//! segments there, the last one once the operation's result is stored.
//!
//! Stages are shared: a device has a few (`HIPFILE_ASYNC_CONCURRENCY`), each serving one
//! operation at a time, given to an operation only once its kernel started. The engine cuts the
//! operation into segments with serial numbers (counting up over the stage's life); segment `s`
//! goes through ring entry `s % RING_LEN` of the stage's control block and buffer slot
//! `s % slots` of its host-mapped pinned memory. A reader fills the slot from the file and
//! posts the entry; the kernel copies the slot into device memory. A writer posts the entry,
//! waits until the kernel copied the device bytes into the slot, and writes the slot to the
//! file.
//!
//! Why this is deadlock-free: everything a kernel waits for is host work (a stage, a `pread`,
//! a `pwrite`, a post), and the host waits only for kernels that already started: for a stage
//! (held by operations whose kernels run and will finish), and for a kernel to reach serials
//! below its own, which all belong to chunks already handed out, each posted exactly once by
//! whoever holds it (a [`Lease`] posts an empty segment if dropped unposted, also when
//! unwinding). Nothing here queues GPU work on another stream, so no hardware queue shared
//! with a held stream is involved.
//!
//! Memory: a slot's bytes are lent to the one holder of its serial's [`Lease`]; a lease is
//! granted only after the slot's previous user (serial `s - slots`) released it on the host and
//! the kernel finished with it, so the kernel never reads a slot the host is filling, nor writes
//! one the host is reading. A stage goes to its next operation only once the kernel consumed
//! every serial of the last one ([`Stage::idle`]); a mailbox is reused only once every block of
//! its launch returned.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::runtime::{
    stage as kernel, AtomicStream, MappedHost, RtError, RtResult, Runtime, StreamHandle,
};
use crate::vocab::Address;

/// Blocks the kernel supports.
const MAX_BLOCKS: usize = kernel::MAX_BLOCKS as usize;
/// Ring entries: at least the number of slots, and a power of two so serials wrap cleanly.
const RING_LEN: u32 = 256;
/// Slot data is placed at the device address's offset modulo this, so the kernel copies whole
/// 16-byte words (stage.c's fast path needs source and destination congruent).
const CONGRUENCE: usize = 16;
/// Slack after each slot's data, so each slot starts page-aligned (direct I/O) whatever the
/// shift.
const SLOT_SLACK: usize = 4096;

/// The most slot memory one stage uses, whatever `HIPFILE_ASYNC_BUFFER_SIZE` says.
const MAX_RING_BYTES: usize = 16 << 20;

/// One ring entry (`StageDesc` in stage.c).
#[repr(C)]
struct Desc {
    dst: AtomicU64,
    src: AtomicU64,
    len: AtomicU64,
    /// Written last, with release ordering: the kernel copies once it reads its serial here.
    serial: AtomicU32,
    last: AtomicU32,
}

/// The control block (`StageCtl` in stage.c).
#[repr(C)]
struct Ctl {
    /// Per block: the last serial it finished.
    done: [AtomicU32; MAX_BLOCKS],
    _reserved: [u32; 32],
    ring: [Desc; RING_LEN as usize],
}

/// One operation's mailbox (`StageMail` in stage.c).
#[repr(C)]
struct MailWords {
    /// Kernel: 1 once the launch began.
    started: AtomicU32,
    /// Kernel: blocks that returned.
    exited: AtomicU32,
    /// Host: 1 = return without a stage.
    finish: AtomicU32,
    /// Host: the operation's first serial in its stage (before `ctl`).
    first: AtomicU32,
    /// Host: the stage's control block (device address), written last.
    ctl: AtomicU64,
    /// Host: the stage's ring entries (before `ctl`).
    ring_len: AtomicU32,
    /// Host, before the launch: its blocks.
    grid: AtomicU32,
    _reserved: [u64; 4],
}

const _: () = assert!(std::mem::size_of::<Desc>() == 32);
const _: () = assert!(std::mem::offset_of!(Ctl, ring) == 256);
const _: () = assert!(std::mem::size_of::<MailWords>() == 64);
const _: () = assert!(std::mem::offset_of!(MailWords, ctl) == 16);
const _: () = assert!(std::mem::offset_of!(MailWords, grid) == 28);

/// The segment length and slot count for an async buffer of `buffer` bytes and an engine chunk
/// of `chunk`: eight slots or more (so reads of several slots overlap the kernel's copies of
/// others), segments of at most one chunk, at least 64 KiB; the slot count a power of two.
pub(crate) fn geometry(buffer: usize, chunk: usize) -> (usize, u32) {
    // The kernel reads the slots over PCIe a few bytes per request; with more slot memory it ran
    // slower, not faster (H200, T6 8 streams x 1: 23.4 GB/s with 16 MiB per stream in 2 MiB
    // segments, 13.2 with 32 MiB in 4 MiB segments, 6.6 with 128 MiB), so a larger async buffer
    // is used only up to this.
    let buffer = buffer.min(MAX_RING_BYTES);
    let seg = (buffer / 8).min(chunk).max(64 << 10) & !((64 << 10) - 1);
    let slots = (buffer / seg).clamp(2, RING_LEN as usize);
    let slots = 1u32 << (usize::BITS - 1 - slots.leading_zeros());
    (seg, slots)
}

/// One stage: its control block, its slots, and the serial counter; it serves one operation at
/// a time, of any stream of its device.
pub(crate) struct Stage {
    rt: &'static dyn Runtime,
    device: i32,
    /// The stream of the operation it serves now (its kernel's stream, which the waits look at).
    stream: AtomicStream,
    ctl: MappedHost,
    slots: MappedHost,
    seg: usize,
    pitch: usize,
    nslots: u32,
    /// Blocks of the kernel serving it now (each reports its own progress).
    grid: AtomicU32,
    /// The last serial handed out.
    next: AtomicU32,
    /// Per slot: the serial whose holder last gave the slot back on the host side.
    host_free: Box<[AtomicU32]>,
}

impl Stage {
    /// A stage on `device` with `buffer` bytes of slots in segments of at most `chunk`, for
    /// launches of at most `grid` blocks; "not supported" where the runtime has no staging
    /// kernel or no mapped memory.
    pub(crate) fn new(
        rt: &'static dyn Runtime,
        device: i32,
        buffer: usize,
        chunk: usize,
        grid: u32,
    ) -> RtResult<Stage> {
        let grid = grid.clamp(1, MAX_BLOCKS as u32);
        let (seg, nslots) = geometry(buffer, chunk);
        let pitch = seg + SLOT_SLACK;
        let staging = rt.staging_or_unsupported()?;
        let ctl = staging.mapped_alloc(std::mem::size_of::<Ctl>())?;
        let slots = match staging.mapped_alloc(pitch * nslots as usize) {
            Ok(s) => s,
            Err(e) => {
                staging.mapped_free(ctl);
                return Err(e);
            }
        };
        // SAFETY: `ctl` is a fresh allocation of at least size_of::<Ctl>() bytes, page-aligned;
        // all-zero bytes are a valid `Ctl` (atomics and integers), which is what the kernel
        // expects before its first launch.
        unsafe { ctl.host.as_ptr().write_bytes(0, std::mem::size_of::<Ctl>()) };
        let host_free = (0..nslots)
            .map(|j| {
                // The first user of slot j is serial j (serial `nslots` for slot 0); its
                // "previous user" is the serial one round before.
                let first = if j == 0 { nslots } else { j };
                AtomicU32::new(first.wrapping_sub(nslots))
            })
            .collect();
        Ok(Stage {
            rt,
            device,
            stream: AtomicStream::default(),
            ctl,
            slots,
            seg,
            pitch,
            nslots,
            grid: AtomicU32::new(grid),
            next: AtomicU32::new(0),
            host_free,
        })
    }

    fn ctl(&self) -> &Ctl {
        // SAFETY: `ctl` holds a zero-initialised `Ctl` for the stage's life; it is accessed only
        // through atomics (the kernel's side likewise).
        unsafe { &*self.ctl.host.as_ptr().cast::<Ctl>() }
    }

    /// Bytes per segment (the engine's chunk for this stream).
    pub(crate) fn segment(&self) -> usize {
        self.seg
    }

    /// Slots: more participants than this in one request would only wait for one.
    pub(crate) fn slots(&self) -> usize {
        self.nslots as usize
    }

    /// Whether the kernel consumed every serial handed out so far: only then may the stage
    /// serve another operation (whose kernel starts after them).
    pub(crate) fn idle(&self) -> bool {
        self.done_through(self.next.load(Ordering::Acquire))
    }

    /// Serve the operation whose kernel runs on `stream` with mailbox `mail` (its kernel
    /// started): the kernel copies its segments from the next serial on.
    pub(crate) fn assign(&self, mail: &Mail, stream: StreamHandle) {
        self.stream.store(stream, Ordering::Release);
        self.grid.store(mail.grid, Ordering::Release);
        let first = self.next.load(Ordering::Acquire).wrapping_add(1);
        mail.words().first.store(first, Ordering::Relaxed);
        mail.words().ring_len.store(RING_LEN, Ordering::Relaxed);
        mail.words()
            .ctl
            .store(self.ctl.device.get() as u64, Ordering::Release);
    }

    /// Whether the stage can never serve again: the kernel of its last operation will not
    /// consume what it was posted (its stream failed, or ended without it).
    pub(crate) fn broken(&self) -> bool {
        self.stream_gone(|| self.idle()).is_some()
    }

    /// Reserve `n` consecutive serials; returns the one before the first.
    pub(crate) fn reserve(&self, n: usize) -> u32 {
        self.next.fetch_add(n as u32, Ordering::AcqRel)
    }

    /// Whether every block finished serial `s` (serials compare cyclically).
    fn done_through(&self, s: u32) -> bool {
        let grid = self.grid.load(Ordering::Acquire) as usize;
        self.ctl().done[..grid]
            .iter()
            .all(|d| d.load(Ordering::Acquire).wrapping_sub(s) as i32 >= 0)
    }

    /// The lease of serial `s` (reserved by the caller, asked for once): waits until the slot's
    /// previous user gave it back and the kernel is done with it. Fails when the stream failed
    /// (or finished) before the kernel got there: a broken context, whose kernel never will.
    pub(crate) fn acquire(&self, s: u32) -> RtResult<Lease<'_>> {
        let slot = (s % self.nslots) as usize;
        let prev = s.wrapping_sub(self.nslots);
        let free = &self.host_free[slot];
        self.wait_for_kernel(|| free.load(Ordering::Acquire) == prev && self.done_through(prev))?;
        Ok(Lease {
            stage: self,
            serial: s,
            slot,
            posted: false,
        })
    }

    /// The operation's last segment (nothing to copy): the kernel returns after it, releasing
    /// the stream. Post it once the operation's result is stored.
    pub(crate) fn finish_operation(&self) -> RtResult<()> {
        let s = self.reserve(1).wrapping_add(1);
        self.acquire(s)?.post(0, 0, 0, true);
        Ok(())
    }

    /// Post an empty segment for serial `s` (a chunk of a request nobody took: it failed
    /// first).
    pub(crate) fn post_empty(&self, s: u32) -> RtResult<()> {
        self.acquire(s).map(drop)
    }

    /// Wait until `ok`, looking at the stream now and then: if it failed, or has nothing left
    /// to run while `ok` still does not hold, the kernel will never get there.
    fn wait_for_kernel(&self, ok: impl Fn() -> bool) -> RtResult<()> {
        wait_until(&ok, || self.stream_gone(&ok))
    }

    /// Why the kernel will never make `ok` true: its stream failed, or finished while `ok`
    /// still does not hold (looked at again after the stream said so, when the kernel's last
    /// writes are visible). `None` while the stream is still running.
    fn stream_gone(&self, ok: impl Fn() -> bool) -> Option<RtError> {
        let restore = self.rt.enter_device(self.device).ok()?;
        let state = self.rt.stream_query(self.stream.load(Ordering::Acquire));
        self.rt.leave_device(restore);
        match state {
            // Still running; or the application destroyed the stream handle, which lets queued
            // work (our kernel) run on: keep waiting.
            Err(e) if e == RtError::NOT_READY || e == RtError::INVALID_HANDLE => None,
            Ok(()) if ok() => None,
            Ok(()) => Some(RtError::UNKNOWN),
            Err(e) => Some(e),
        }
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        // The memory may be freed only once the kernel will not touch it again: after every
        // block finished the last serial handed out, or once its stream failed (a broken
        // context runs nothing more). A kernel that neither finishes nor fails within a while
        // (its stream held up by other work) makes the memory leak instead.
        let last = self.next.load(Ordering::Acquire);
        let deadline = Instant::now() + Duration::from_secs(10);
        let done = || self.done_through(last);
        let waited = wait_until(done, || {
            // A dead stream ends the wait (freeing is safe then); the deadline too (not safe).
            self.stream_gone(done)
                .or_else(|| (Instant::now() > deadline).then_some(RtError::NOT_READY))
        });
        if waited == Err(RtError::NOT_READY) {
            tracing::warn!(target: "hipfile", "a stream's staging kernel did not finish; its pinned memory is leaked");
            return;
        }
        let Some(staging) = self.rt.staging() else {
            return;
        };
        let zero = || MappedHost {
            host: std::ptr::NonNull::dangling(),
            device: Address::new(0),
        };
        staging.mapped_free(std::mem::replace(&mut self.slots, zero()));
        staging.mapped_free(std::mem::replace(&mut self.ctl, zero()));
    }
}

/// The mailboxes of one device's staging launches: a fixed slab of host-mapped memory, allocated
/// before any launch (allocating pinned memory later could wait for kernels that wait for us).
/// A mailbox is lent to one operation from its submission; given back, it is reused only once
/// every block of its launch returned.
pub(crate) struct Mailboxes {
    rt: &'static dyn Runtime,
    device: i32,
    mem: MappedHost,
    /// Indices of mailboxes nobody uses.
    free: Mutex<Vec<u32>>,
    /// Given back, with the blocks of their launch and its stream: free once that many
    /// blocks returned.
    retired: Mutex<Vec<Retired>>,
    given_back: Condvar,
}

/// A mailbox given back whose launch may still run.
struct Retired {
    index: u32,
    grid: u32,
    stream: StreamHandle,
}

impl Mailboxes {
    /// `count` mailboxes for launches on `device`.
    pub(crate) fn new(rt: &'static dyn Runtime, device: i32, count: u32) -> RtResult<Mailboxes> {
        let len = count as usize * std::mem::size_of::<MailWords>();
        let mem = rt
            .staging()
            .ok_or(RtError::NOT_SUPPORTED)?
            .mapped_alloc(len)?;
        // SAFETY: a fresh allocation of `len` bytes, page-aligned; zero bytes are valid words.
        unsafe { mem.host.as_ptr().write_bytes(0, len) };
        Ok(Mailboxes {
            rt,
            device,
            mem,
            free: Mutex::new((0..count).rev().collect()),
            retired: Mutex::new(Vec::new()),
            given_back: Condvar::new(),
        })
    }

    fn words(&self, index: u32) -> &MailWords {
        // SAFETY: `index` < count (only `new`'s indices circulate); the slab holds zeroed
        // `MailWords` for its life, accessed only through atomics (the kernel's side likewise).
        unsafe {
            &*self
                .mem
                .host
                .as_ptr()
                .cast::<MailWords>()
                .add(index as usize)
        }
    }

    /// A mailbox for a launch of `grid` blocks, its words cleared. Waits while every mailbox
    /// is in use (as many operations as there are mailboxes queued and not finished).
    pub(crate) fn take(self: &Arc<Self>, grid: u32) -> Mail {
        let mut free = self.free.lock();
        let index = loop {
            if let Some(i) = free.pop() {
                break i;
            }
            self.reclaim(&mut free);
            if free.is_empty() {
                // Kernels that return do not say so: look again now and then.
                self.given_back
                    .wait_for(&mut free, Duration::from_millis(1));
            }
        };
        drop(free);
        let w = self.words(index);
        for word in [&w.started, &w.exited, &w.finish, &w.first, &w.ring_len] {
            word.store(0, Ordering::Relaxed);
        }
        w.ctl.store(0, Ordering::Relaxed);
        w.grid.store(grid, Ordering::Release);
        Mail {
            boxes: Arc::clone(self),
            index,
            grid,
            launched: None,
        }
    }

    /// Move the retired mailboxes whose launches returned to `free`.
    fn reclaim(&self, free: &mut Vec<u32>) {
        self.retired.lock().retain(|r| {
            let out = self.words(r.index).exited.load(Ordering::Acquire) >= r.grid;
            if out {
                free.push(r.index);
            }
            !out
        });
    }

    /// Whether no launch can write a mailbox any more: each returned, or its stream has
    /// nothing left to run (it failed, or finished without the launch returning: a broken
    /// context runs nothing more).
    fn quiet(&self) -> bool {
        self.reclaim(&mut self.free.lock());
        let streams: Vec<StreamHandle> = self.retired.lock().iter().map(|r| r.stream).collect();
        streams.into_iter().all(|s| {
            let Ok(restore) = self.rt.enter_device(self.device) else {
                return false;
            };
            let state = self.rt.stream_query(s);
            self.rt.leave_device(restore);
            match state {
                Ok(()) => true,
                Err(e) => e != RtError::NOT_READY && e != RtError::INVALID_HANDLE,
            }
        })
    }
}

impl Drop for Mailboxes {
    fn drop(&mut self) {
        // Launches that never returned (their stream failed, or is still held by other work)
        // may still write their mailbox: leak the slab then.
        let deadline = Instant::now() + Duration::from_secs(10);
        let out = wait_until(
            || self.quiet(),
            || (Instant::now() > deadline).then_some(RtError::NOT_READY),
        );
        if out.is_err() {
            tracing::warn!(target: "hipfile", "staging launches did not return; their mailboxes' pinned memory is leaked");
            return;
        }
        let Some(staging) = self.rt.staging() else {
            return;
        };
        let m = std::mem::replace(
            &mut self.mem,
            MappedHost {
                host: std::ptr::NonNull::dangling(),
                device: Address::new(0),
            },
        );
        staging.mapped_free(m);
    }
}

/// One operation's mailbox, lent from submission until dropped: then it is reused at once if
/// no launch was queued over it, otherwise once every block of that launch returned.
pub(crate) struct Mail {
    boxes: Arc<Mailboxes>,
    index: u32,
    /// Blocks of the launch over it.
    grid: u32,
    /// The stream of the launch over it, once queued.
    launched: Option<StreamHandle>,
}

impl Mail {
    fn words(&self) -> &MailWords {
        self.boxes.words(self.index)
    }

    /// The device address the launch takes.
    pub(crate) fn device_address(&self) -> Address {
        self.boxes
            .mem
            .device
            .add(self.index as usize * std::mem::size_of::<MailWords>())
    }

    /// A launch over it was queued on `stream`.
    pub(crate) fn launched(&mut self, stream: StreamHandle) {
        self.launched = Some(stream);
    }

    /// Whether the launch began (the work before it on its stream is done).
    pub(crate) fn started(&self) -> bool {
        self.words().started.load(Ordering::Acquire) != 0
    }

    /// Let the launch return without a stage (the operation needed no copies, or failed first).
    pub(crate) fn finish(&self) {
        self.words().finish.store(1, Ordering::Release);
    }
}

impl Drop for Mail {
    fn drop(&mut self) {
        if let Some(stream) = self.launched {
            self.boxes.retired.lock().push(Retired {
                index: self.index,
                grid: self.grid,
                stream,
            });
        } else {
            self.boxes.free.lock().push(self.index);
        }
        self.boxes.given_back.notify_one();
    }
}

/// The right to use one serial's ring entry and slot until dropped. Dropping it unposted posts
/// an empty segment, so the kernel never waits for a serial nobody will post.
pub(crate) struct Lease<'s> {
    stage: &'s Stage,
    serial: u32,
    slot: usize,
    posted: bool,
}

impl Lease<'_> {
    /// Where in the slot the bytes of a segment whose device side starts at `dev` go.
    fn place(&self, dev: Address, len: usize) -> usize {
        let shift = dev.get() % CONGRUENCE;
        assert!(
            len <= self.stage.seg,
            "segment longer than the stage's slots"
        );
        self.slot * self.stage.pitch + shift
    }

    /// The slot's `len` bytes for the segment at device address `dev`, to fill from the file.
    pub(crate) fn bytes_mut(&mut self, dev: Address, len: usize) -> &mut [u8] {
        let at = self.place(dev, len);
        // SAFETY: `at + len` lies within the slot (len <= seg, shift < SLOT_SLACK); the slot
        // is this lease's alone (see `Stage::acquire`), and the kernel does not access it until
        // this lease posts, which takes `&mut self` and so ends this borrow.
        unsafe { std::slice::from_raw_parts_mut(self.stage.slots.host.as_ptr().add(at), len) }
    }

    /// The slot's `len` bytes for the segment at device address `dev`, after
    /// [`Lease::copy_from_device`] filled them.
    pub(crate) fn bytes(&self, dev: Address, len: usize) -> &[u8] {
        let at = self.place(dev, len);
        // SAFETY: as in `bytes_mut`; once the kernel finished this serial it no longer writes
        // the slot.
        unsafe { std::slice::from_raw_parts(self.stage.slots.host.as_ptr().add(at), len) }
    }

    /// Have the kernel copy the first `len` bytes placed for `dev` from the slot to `dev`.
    pub(crate) fn copy_to_device(mut self, dev: Address, len: usize) {
        let src = self.stage.slots.device.add(self.place(dev, len));
        self.post(dev.get() as u64, src.get() as u64, len as u64, false);
    }

    /// Have the kernel copy `len` bytes at `dev` into the slot, and wait until it did.
    pub(crate) fn copy_from_device(&mut self, dev: Address, len: usize) -> RtResult<()> {
        let dst = self.stage.slots.device.add(self.place(dev, len));
        self.post(dst.get() as u64, dev.get() as u64, len as u64, false);
        let (stage, s) = (self.stage, self.serial);
        stage.wait_for_kernel(|| stage.done_through(s))
    }

    fn post(&mut self, dst: u64, src: u64, len: u64, last: bool) {
        let e = &self.stage.ctl().ring[(self.serial % RING_LEN) as usize];
        e.dst.store(dst, Ordering::Relaxed);
        e.src.store(src, Ordering::Relaxed);
        e.len.store(len, Ordering::Relaxed);
        e.last.store(u32::from(last), Ordering::Relaxed);
        e.serial.store(self.serial, Ordering::Release);
        self.posted = true;
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if !self.posted {
            self.post(0, 0, 0, false);
        }
        self.stage.host_free[self.slot].store(self.serial, Ordering::Release);
    }
}

/// Wait for `ok`: spin briefly (a segment takes tens of microseconds), then sleep in short
/// steps (no `yield`: with many streams, yielding threads crowd out the ones doing file I/O).
/// Every `CHECK_EVERY` sleeps (about every 10 ms) `failed` may end the wait with an error.
fn wait_until(ok: impl Fn() -> bool, mut failed: impl FnMut() -> Option<RtError>) -> RtResult<()> {
    const SPINS: u32 = 100;
    const CHECK_EVERY: u32 = 1000;
    thread_local!(static SLACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    let (mut spins, mut sleeps) = (0u32, 0u32);
    while !ok() {
        if spins < SPINS {
            spins += 1;
            std::hint::spin_loop();
            continue;
        }
        if !SLACK.get() {
            crate::sys::tight_timer_slack();
            SLACK.set(true);
        }
        std::thread::sleep(Duration::from_micros(10));
        sleeps = sleeps.wrapping_add(1);
        if sleeps % CHECK_EVERY == 0 {
            if let Some(e) = failed() {
                return Err(e);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::geometry;

    #[test]
    fn geometry_of_common_buffers() {
        // The default 16 MiB: eight 2 MiB slots.
        assert_eq!(geometry(16 << 20, 4 << 20), (2 << 20, 8));
        // More is capped at 16 MiB.
        assert_eq!(geometry(32 << 20, 4 << 20), (2 << 20, 8));
        assert_eq!(geometry(128 << 20, 4 << 20), (2 << 20, 8));
        // Smaller chunks: chunk-sized segments, more slots.
        assert_eq!(geometry(16 << 20, 1 << 20), (1 << 20, 16));
        // Small buffers: 64 KiB segments at least, a power of two of slots.
        assert_eq!(geometry(1 << 20, 4 << 20), (128 << 10, 8));
        assert_eq!(geometry(100 << 10, 4 << 20), (64 << 10, 2));
        assert_eq!(geometry(3 << 20, 4 << 20), (384 << 10, 8));
    }
}
