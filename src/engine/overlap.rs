//! Reads of one chunk or less into device memory, run one after another by one thread, each
//! one's copy to the device overlapping the next one's `pread`: the path of batch operations,
//! whose requests are many and small (target T7).
//!
//! A synchronous call of one chunk reads, copies and waits for its copy before it returns, so
//! its thread's `pread` and the DMA never overlap. On the H200, 16 threads of such 1 MiB reads
//! (and batches of 128 of them) moved 27-29 GB/s, against 44 GB/s for the same 1 MiB pieces
//! pipelined within one request. An [`Overlap`] keeps up to [`SLOTS`] bounce buffers, each with
//! a stream of its own, for a batch job's turn: [`Overlap::start`] reads into a free buffer and
//! queues its copy; [`Overlap::finish`] waits for that copy. The batch job starts operations
//! k+1, k+2, … before it finishes operation k.
//!
//! Buffers: the first comes from the pool with a wait (the overlap holds none then), the others
//! only if one is free at once, so an overlap never waits for a buffer while it holds one.
//! [`Overlap::release`] gives everything back (the batch job calls it before it runs an
//! operation synchronously, whose own buffer could otherwise wait for ours).
#![deny(unsafe_code)]

use super::file_io::read_chunk;
use super::lanes::LaneGuard;
use super::lend::{InFlight, Slot};
use super::{Inner, Transfer};
use crate::error::{Error, Result};
use crate::runtime::DeviceRestore;
use crate::vocab::{Direction, MemRef};

/// Reads an overlap keeps in flight at most: one buffer and one stream each. On the H200 (T7,
/// batches of 1 MiB random reads with 128 in flight, three rounds interleaved) jobs that keep
/// their pipelines across submissions moved 37.9-38.9 GB/s with two, 40.0-41.8 with three and
/// 41.7-41.9 with four (16 jobs; 12 jobs of four: 40.8-42.9). So that one batch context never
/// holds the whole bounce budget (a synchronous call made meanwhile would wait for it), its jobs
/// are counted by [`Engine::batch_jobs`](super::Engine::batch_jobs).
pub(crate) const SLOTS: usize = 4;

/// The lanes of an overlap, one per slot, for the device they were checked out on (current
/// while held). A stream per slot: finishing a read synchronises its own stream, which reports
/// a failed copy, without waiting for the next read's copy.
struct Held<'e> {
    device: i32,
    lanes: Vec<LaneGuard<'e>>,
    restore: Option<DeviceRestore>,
}

/// One thread's pipeline of small device reads (see the module comment).
pub(crate) struct Overlap<'e> {
    inner: &'e Inner,
    held: Option<Held<'e>>,
    slots: [Option<Slot<'e>>; SLOTS],
}

/// Whether a transfer can start on an overlap now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ready {
    /// Yes, into this slot.
    Slot(usize),
    /// Not before a read in flight is finished (both buffers lent, or no second one free).
    Busy,
    /// Not here: run it synchronously (not a device read of one chunk, another device while a
    /// copy is in flight, or no stream to copy on).
    No,
}

/// A read whose copy to the device is in flight: finish it with [`Overlap::finish`].
#[must_use = "a started read is finished by Overlap::finish"]
#[derive(Debug)]
pub(crate) struct Pending {
    slot: usize,
    bytes: usize,
}

/// What [`Overlap::start`] did.
#[derive(Debug)]
pub(crate) enum Started {
    /// The copy is in flight.
    Copying(Pending),
    /// Nothing was left in flight: the read failed, or found nothing to copy (end of file).
    Done(Result<usize>),
}

impl<'e> Overlap<'e> {
    pub(super) fn new(inner: &'e Inner) -> Overlap<'e> {
        Overlap {
            inner,
            held: None,
            slots: std::array::from_fn(|_| None),
        }
    }

    fn copying(&self) -> bool {
        self.slots
            .iter()
            .any(|s| matches!(s, Some(Slot::Copying(_))))
    }

    /// Whether `t` can start now, and where; gets the lane and buffers it needs.
    pub(crate) fn ready(&mut self, t: &Transfer) -> Ready {
        let device = match t.target {
            MemRef::Device { device, .. }
                if t.dir == Direction::Read && t.size > 0 && self.inner.settings.single(t.size) =>
            {
                device
            }
            _ => return Ready::No,
        };
        if self.held.as_ref().is_some_and(|h| h.device != device) {
            if self.copying() {
                return Ready::No;
            }
            self.release();
        }
        if self.held.is_none() {
            let Ok(restore) = self.inner.rt.enter_device(device) else {
                return Ready::No;
            };
            let pool = &self.inner.lanes;
            let lanes: Option<Vec<_>> = (0..SLOTS)
                .map(|_| pool.checkout(self.inner.rt, device))
                .collect();
            match lanes {
                Some(lanes) => {
                    self.held = Some(Held {
                        device,
                        lanes,
                        restore: Some(restore),
                    })
                }
                None => {
                    self.inner.rt.leave_device(restore);
                    return Ready::No;
                }
            }
        }
        if let Some(i) = self
            .slots
            .iter()
            .position(|s| matches!(s, Some(Slot::Free(_))))
        {
            return Ready::Slot(i);
        }
        let Some(i) = self.slots.iter().position(Option::is_none) else {
            return Ready::Busy;
        };
        // The first buffer may wait for the pool: nothing of ours is held then.
        let bounce = if self.slots.iter().all(Option::is_none) {
            match self.inner.bounce.get() {
                Ok(b) => b,
                Err(_) => return Ready::No,
            }
        } else {
            match self.inner.bounce.try_get() {
                Some(b) => b,
                None => return Ready::Busy,
            }
        };
        self.slots[i] = Some(Slot::Free(bounce));
        Ready::Slot(i)
    }

    /// Read `t` into the buffer of `slot` (from [`Overlap::ready`] for this `t`) and queue its
    /// copy to the device.
    pub(crate) fn start(&mut self, slot: usize, t: &Transfer) -> Started {
        let (MemRef::Device { addr, .. }, Some(held)) = (t.target, self.held.as_ref()) else {
            return Started::Done(Err(Error::Internal("overlap: not ready for this transfer")));
        };
        let Some(Slot::Free(mut buf)) = self.slots[slot].take() else {
            return Started::Done(Err(Error::Internal("overlap: slot not free")));
        };
        let n = match read_chunk(t, &mut buf.as_mut_slice()[..t.size], t.offset) {
            Ok(n) => n,
            Err(e) => {
                self.slots[slot] = Some(Slot::Free(buf));
                return Started::Done(Err(Error::Os(e)));
            }
        };
        if n == 0 {
            self.slots[slot] = Some(Slot::Free(buf));
            return Started::Done(Ok(0));
        }
        let stream = held.lanes[slot].stream;
        match InFlight::to_device_on(self.inner.rt, stream, None, addr, buf, n) {
            Ok(copy) => {
                self.slots[slot] = Some(Slot::Copying(copy));
                Started::Copying(Pending { slot, bytes: n })
            }
            Err((e, buf)) => {
                self.slots[slot] = Some(Slot::Free(buf));
                Started::Done(Err(Error::Runtime(e)))
            }
        }
    }

    /// Wait for the copy of `p`: the bytes read, or the copy's error.
    pub(crate) fn finish(&mut self, p: Pending) -> Result<usize> {
        let Some(Slot::Copying(copy)) = self.slots[p.slot].take() else {
            return Err(Error::Internal("overlap: no copy in flight in this slot"));
        };
        let (r, buf) = copy.wait();
        self.slots[p.slot] = Some(Slot::Free(buf));
        r.map(|()| p.bytes).map_err(Error::Runtime)
    }

    /// Give the buffers, the lane and the device back; a copy still in flight is waited for
    /// first (its [`InFlight`] does so when dropped).
    pub(crate) fn release(&mut self) {
        self.slots = std::array::from_fn(|_| None);
        if let Some(mut h) = self.held.take() {
            if let Some(r) = h.restore.take() {
                self.inner.rt.leave_device(r);
            }
        }
    }
}

impl Drop for Overlap<'_> {
    fn drop(&mut self) {
        self.release();
    }
}
