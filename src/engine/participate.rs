//! One participant's share of a transfer of several chunks: it claims chunks until none is
//! left or the transfer failed, and moves each by the route of the transfer's memory (host
//! memory in place, device memory through a stage or through bounce buffers pipelined on a
//! lane), recording how each ended in the transfer's [`Outcome`](super::outcome::Outcome).
//! Also the one-chunk moves that a request served whole on its calling thread makes.
#![deny(unsafe_code)]

use super::chunked::Chunked;
use super::file_io::{read_chunk, write_chunk};
use super::lanes::LaneGuard as Lane;
use super::lend::bounce::Bounce;
use super::lend::{Chunk, InFlight, Lent, Slot};
use super::outcome::{ChunkFault, ChunkResult};
use super::{Inner, Stage, Transfer};
use crate::error::Error;
use crate::vocab::{Address, Direction, MemRef};

/// Claim and process chunks until none is left or the transfer failed.
pub(super) fn participate(inner: &Inner, xfer: &Chunked) {
    // Requests of one chunk never get here (see `single_chunk`).
    match xfer.t.target {
        MemRef::Host { addr } => {
            let lent = Lent::new(addr, xfer.t.size);
            while let Some(c) = xfer.claim() {
                let (off, len) = (c.off, c.len);
                if !xfer.outcome.record(off, len, host_chunk(&xfer.t, lent, c)) {
                    break;
                }
            }
        }
        MemRef::Device { addr, .. } if xfer.stage_base.is_some() => {
            if let (Some(stage), Some(base)) = (inner.stage.as_deref(), xfer.stage_base) {
                staged(stage, base, xfer, addr);
            }
        }
        MemRef::Device { addr, device } => {
            // Several chunks pipeline file I/O with stream-ordered copies on a lane, whose
            // stream belongs to the buffer's device: make it current for the participation.
            let restore = match inner.rt.enter_device(device) {
                Ok(r) => r,
                Err(e) => return xfer.outcome.fail(Error::Runtime(e)),
            };
            let _restore = RestoreDevice {
                inner,
                restore: Some(restore),
            };
            match inner.lanes.checkout(inner.rt, device) {
                Some(lane) => match xfer.t.dir {
                    Direction::Read => pipelined_read(inner, xfer, addr, &lane),
                    Direction::Write => pipelined_write(inner, xfer, addr, &lane),
                },
                None => synchronous_device(inner, xfer, addr),
            }
        }
    }
}

/// Chunks of a device transfer through the stream's staging kernel: each chunk is one segment,
/// filled from the file and posted (reads), or posted, copied out by the kernel and written
/// (writes). Every chunk taken is posted, also when it fails (its lease posts an empty segment
/// when dropped), and no chunk is skipped (a read past the end posts nothing to copy), so the
/// kernel never waits for a serial nobody holds. No GPU call is made here.
fn staged(stage: &Stage, base: u32, xfer: &Chunked, addr: Address) {
    while let Some(c) = xfer.claim_staged() {
        let (off, len) = (c.off, c.len);
        let mut lease = match stage.acquire(xfer.serial_of(base, &c)) {
            Ok(l) => l,
            Err(e) => {
                xfer.outcome.fail(Error::Runtime(e));
                break;
            }
        };
        let dev = addr.add(off);
        let file_off = xfer.t.offset + off as u64;
        let result = match xfer.t.dir {
            Direction::Read => {
                // Past a short chunk (end of file) there is nothing to read.
                let r = if off >= xfer.outcome.short_end() {
                    Ok(0)
                } else {
                    read_chunk(&xfer.t, lease.bytes_mut(dev, len), file_off)
                };
                let n = *r.as_ref().unwrap_or(&0);
                lease.copy_to_device(dev, n);
                r.map_err(|e| ChunkFault::none_done(Error::Os(e)))
            }
            Direction::Write => match lease.copy_from_device(dev, len) {
                Ok(()) => {
                    let r = write_chunk(&xfer.t, lease.bytes(dev, len), file_off);
                    drop(lease);
                    r.map_err(ChunkFault::from)
                }
                Err(e) => Err(ChunkFault::none_done(Error::Runtime(e))),
            },
        };
        if !xfer.outcome.record(off, len, result) {
            break;
        }
    }
}

/// Gives the calling thread's device back, also when unwinding.
struct RestoreDevice<'a> {
    inner: &'a Inner,
    restore: Option<crate::runtime::DeviceRestore>,
}

impl Drop for RestoreDevice<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.restore.take() {
            self.inner.rt.leave_device(r);
        }
    }
}

/// Device chunks one at a time with synchronous copies through one bounce buffer.
fn synchronous_device(inner: &Inner, xfer: &Chunked, addr: Address) {
    let mut bounce = None;
    while let Some(Chunk { off, len }) = xfer.claim() {
        if bounce.is_none() {
            match inner.bounce.get() {
                Ok(b) => bounce = Some(b),
                Err(e) => return xfer.outcome.fail(e),
            }
        }
        let buf = &mut bounce.as_mut().expect("set above").as_mut_slice()[..len];
        if !xfer.outcome.record(
            off,
            len,
            device_chunk(inner, &xfer.t, addr.add(off), buf, off),
        ) {
            break;
        }
    }
}

/// Reads: `pread` of chunk k+1 into one bounce buffer overlaps the stream-ordered copy of
/// chunk k from the other; a buffer is reused only after its copy's event completed. Copy
/// errors surface at the final stream synchronisation and fail the request.
fn pipelined_read(inner: &Inner, xfer: &Chunked, addr: Address, lane: &Lane) {
    let rt = inner.rt;
    // Buffers of the request's fill are read into at once; their first copy waits for the
    // fill's registration (`Fill::ready`).
    let taken = xfer.fill.as_ref().map(|f| f.take(&inner.bounce));
    let mut unregistered = matches!(taken, Some([Some(_), _]));
    let mut slots: [Option<Slot<'_>>; 2] = match taken {
        // A second buffer, if the fill had none left, is asked for once the fill is over (its
        // spare buffers are free then; a new one now would wait behind its registration).
        Some([Some(a), b]) => [Some(Slot::Free(a)), b.map(Slot::Free)],
        _ => match (inner.bounce.get(), inner.bounce.try_get()) {
            (Ok(a), b) => [Some(Slot::Free(a)), b.map(Slot::Free)],
            (Err(e), _) => return xfer.outcome.fail(e),
        },
    };
    let mut count = if slots[1].is_some() { 2 } else { 1 };
    let mut k = 0usize;
    while let Some(Chunk { off, len }) = xfer.claim() {
        let s = k % count;
        k += 1;
        let mut buf = match slots[s].take().expect("a slot holds its buffer") {
            Slot::Free(b) => b,
            Slot::Copying(copy) => {
                let (waited, b) = copy.wait();
                if let Err(e) = waited {
                    slots[s] = Some(Slot::Free(b));
                    xfer.outcome.fail(Error::Runtime(e));
                    break;
                }
                b
            }
        };
        let file_off = xfer.t.offset + off as u64;
        let n = match read_chunk(&xfer.t, &mut buf.as_mut_slice()[..len], file_off) {
            Ok(n) => n,
            Err(e) => {
                slots[s] = Some(Slot::Free(buf));
                xfer.outcome.fail(Error::Os(e));
                break;
            }
        };
        if n > 0 {
            if unregistered {
                if let Some(f) = &xfer.fill {
                    f.ready(&inner.bounce);
                }
                unregistered = false;
                if count == 1 {
                    if let Some(b) = inner.bounce.try_get() {
                        slots[1] = Some(Slot::Free(b));
                        count = 2;
                    }
                }
            }
            match InFlight::to_device(rt, lane, s, addr.add(off), buf, n) {
                Ok(copy) => slots[s] = Some(Slot::Copying(copy)),
                Err((e, b)) => {
                    slots[s] = Some(Slot::Free(b));
                    xfer.outcome.fail(Error::Runtime(e));
                    break;
                }
            }
        } else {
            slots[s] = Some(Slot::Free(buf));
        }
        if !xfer.outcome.record(off, len, Ok(n)) {
            break;
        }
    }
    // The stream reports a failed copy; the copies' buffers come back after it.
    let synced = rt
        .streams_or_unsupported()
        .and_then(|s| s.stream_synchronize(lane.stream));
    if let Err(e) = synced {
        xfer.outcome.fail(Error::Runtime(e));
    }
    for slot in slots.iter_mut() {
        if let Some(Slot::Copying(copy)) = slot.take() {
            drop(copy.wait());
        }
    }
}

/// Writes: the stream-ordered copy of chunk k+1 out of device memory overlaps the `pwrite`
/// of chunk k. The stream is synchronised before each `pwrite`, so a failed copy is known
/// before its bytes could reach the file.
fn pipelined_write<'a>(inner: &'a Inner, xfer: &Chunked, addr: Address, lane: &Lane) {
    let rt = inner.rt;
    let (first, mut spare) = match (inner.bounce.get(), inner.bounce.try_get()) {
        (Ok(a), b) => (a, b),
        (Err(e), _) => return xfer.outcome.fail(e),
    };
    let issue = |buf: Bounce<'a>, off: usize, len: usize| {
        InFlight::from_device(rt, lane.stream, addr.add(off), buf, len)
    };
    // A chunk claimed but not written (its copy failed, or the loop stopped) is simply never
    // marked written in full: the request's prefix ends before it.
    let Some(Chunk { off, len }) = xfer.claim() else {
        return;
    };
    let mut current = match issue(first, off, len) {
        Ok(copy) => (copy, off, len),
        Err((e, _)) => return xfer.outcome.fail(Error::Runtime(e)),
    };
    loop {
        let (copy, off, len) = current;
        let (synced, buf) = copy.wait();
        if let Err(e) = synced {
            xfer.outcome.fail(Error::Runtime(e));
            break;
        }
        // Start the next chunk's copy into the other buffer before writing this one.
        let next = xfer.claim();
        let mut next_copy = None;
        if let (
            Some(Chunk {
                off: noff,
                len: nlen,
            }),
            Some(other),
        ) = (&next, spare.take())
        {
            match issue(other, *noff, *nlen) {
                Ok(copy) => next_copy = Some(copy),
                Err((e, _)) => {
                    xfer.outcome.fail(Error::Runtime(e));
                    break;
                }
            }
        }
        let file_off = xfer.t.offset + off as u64;
        let n = write_chunk(&xfer.t, &buf.as_slice()[..len], file_off).map_err(ChunkFault::from);
        if !xfer.outcome.record(off, len, n) {
            break;
        }
        let Some(Chunk {
            off: noff,
            len: nlen,
        }) = next
        else {
            break;
        };
        current = match next_copy {
            Some(copy) => {
                spare = Some(buf);
                (copy, noff, nlen)
            }
            // Single-buffered: copy the next chunk now that this one is written.
            None => match issue(buf, noff, nlen) {
                Ok(copy) => (copy, noff, nlen),
                Err((e, _)) => {
                    xfer.outcome.fail(Error::Runtime(e));
                    break;
                }
            },
        };
    }
}

/// One chunk between the file and device memory through a pinned bounce buffer.
#[inline(always)]
pub(super) fn device_chunk(
    inner: &Inner,
    t: &Transfer,
    dev: Address,
    buf: &mut [u8],
    off: usize,
) -> ChunkResult {
    let file_off = t.offset + off as u64;
    match t.dir {
        Direction::Read => {
            let n =
                read_chunk(t, buf, file_off).map_err(|e| ChunkFault::none_done(Error::Os(e)))?;
            if n > 0 {
                inner
                    .copy_to_device(dev, &buf[..n])
                    .map_err(|e| ChunkFault::none_done(e.into()))?;
            }
            Ok(n)
        }
        Direction::Write => {
            inner
                .copy_from_device(buf, dev)
                .map_err(|e| ChunkFault::none_done(e.into()))?;
            Ok(write_chunk(t, buf, file_off)?)
        }
    }
}

/// One chunk between the file and the application's host memory, without a bounce.
#[inline(always)]
pub(super) fn host_chunk(t: &Transfer, lent: Lent, c: Chunk) -> ChunkResult {
    let file_off = t.offset + c.off as u64;
    match t.dir {
        Direction::Read => lent
            .read_into(c, |buf| read_chunk(t, buf, file_off))
            .map_err(|e| ChunkFault::none_done(Error::Os(e))),
        Direction::Write => Ok(lent.write_from(c, |buf| write_chunk(t, buf, file_off))?),
    }
}
