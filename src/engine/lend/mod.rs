//! The one place where the engine lends memory out: the application's host memory of one
//! request, made into slices chunk by chunk for the file system calls; the pinned bounce
//! buffers of the pool ([`bounce`]), lent to one user at a time; and bounce buffers handed to
//! the runtime's asynchronous copies, which own them until they completed. Everything else in
//! the engine is safe code over what this module hands out.
//!
//! - [`Lent`] is the application's host memory of a request. It becomes a slice only through
//!   a [`Chunk`], and a chunk is handed out once ([`Claims`]), so no two slices of one request
//!   overlap, whichever participant holds them.
//! - [`InFlight`] owns the bounce buffer of a copy in flight (either direction); the buffer comes
//!   back only after the copy is known to be complete, and dropping one (also when unwinding)
//!   first waits for its stream. Forgetting one leaks the buffer, it can never be reused early.

use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) mod bounce;
pub(crate) mod stage;

use super::lanes::Lane;
use crate::runtime::{EventHandle, RtError, RtResult, Runtime, StreamHandle, Streams};
use crate::vocab::Address;
use bounce::Bounce;

/// One chunk of a request: `len` bytes at request offset `off`. Not `Clone`: each chunk is
/// handed out once, which is what lets [`Lent`] make it a slice.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Offset from the start of the request.
    pub(crate) off: usize,
    /// Bytes.
    pub(crate) len: usize,
}

impl Chunk {
    /// The one chunk of a request that a single thread runs whole, without [`Claims`].
    #[inline(always)]
    pub(crate) fn whole(size: usize) -> Chunk {
        Chunk { off: 0, len: size }
    }
}

/// The chunks of a request shared between participants: each index is handed out once.
pub(crate) struct Claims {
    next: AtomicUsize,
    chunk: usize,
    chunks: usize,
    size: usize,
}

impl Claims {
    /// `size` bytes in chunks of `chunk` bytes.
    pub(crate) fn new(size: usize, chunk: usize) -> Claims {
        Claims {
            next: AtomicUsize::new(0),
            chunk,
            chunks: size.div_ceil(chunk),
            size,
        }
    }

    /// The next chunk nobody has had yet, or `None` when all are out.
    #[inline]
    pub(crate) fn next(&self) -> Option<Chunk> {
        let i = self.next.fetch_add(1, Ordering::AcqRel);
        if i >= self.chunks {
            return None;
        }
        let off = i * self.chunk;
        Some(Chunk {
            off,
            len: self.chunk.min(self.size - off),
        })
    }
}

/// The application's host memory of one request: `len` bytes at `addr`, lent for the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lent {
    addr: Address,
    len: usize,
}

impl Lent {
    /// The memory of a request of `len` bytes at `addr`. The lender's promise (the C contract
    /// of `hipFileRead`/`hipFileWrite` and of a batch entry; a borrowed slice for the safe Rust
    /// API) is that these bytes are valid, and not used by anything else, until the call
    /// returns — and the engine returns only after every participant is done with them.
    #[inline(always)]
    pub(crate) fn new(addr: Address, len: usize) -> Lent {
        Lent { addr, len }
    }

    /// The memory of chunk `c` to read the file into.
    #[inline(always)]
    pub(crate) fn read_into<R>(&self, c: Chunk, f: impl FnOnce(&mut [u8]) -> R) -> R {
        assert!(
            c.off <= self.len && c.len <= self.len - c.off,
            "chunk outside the request"
        );
        let ptr = self.addr.add(c.off).get() as *mut u8;
        // SAFETY: the lender's promise (see `new`) covers `len` bytes from `addr`, and the chunk
        // lies inside them (asserted). Chunks are handed out once, so no other slice of this
        // request overlaps this one while `f` runs.
        f(unsafe { std::slice::from_raw_parts_mut(ptr, c.len) })
    }

    /// The memory of chunk `c` to write to the file.
    #[inline(always)]
    pub(crate) fn write_from<R>(&self, c: Chunk, f: impl FnOnce(&[u8]) -> R) -> R {
        assert!(
            c.off <= self.len && c.len <= self.len - c.off,
            "chunk outside the request"
        );
        let ptr = self.addr.add(c.off).get() as *const u8;
        // SAFETY: as in `read_into`, for reading.
        f(unsafe { std::slice::from_raw_parts(ptr, c.len) })
    }
}

/// A bounce buffer of a reader that keeps copies in flight (a pipelined request, a batch job's
/// overlap): free, or lent to the copy of an earlier chunk.
pub(crate) enum Slot<'p> {
    /// Free for the next `pread`.
    Free(Bounce<'p>),
    /// Lent to a copy to the device.
    Copying(InFlight<'p>),
}

/// A copy between a bounce buffer and device memory, in flight on a stream: it owns the
/// buffer until the copy is known to be complete (its event, or the whole stream).
pub(crate) struct InFlight<'p> {
    bounce: Option<Bounce<'p>>,
    rt: &'p dyn Streams,
    stream: StreamHandle,
    /// The event recorded after the copy; `None`: waiting means synchronising the stream.
    event: Option<EventHandle>,
}

impl<'p> InFlight<'p> {
    /// Start copying the first `n` bytes of `bounce` to `dst` on `lane`'s stream, followed by
    /// a record of `lane.events[slot]`. On failure the buffer comes back with the error.
    pub(crate) fn to_device(
        rt: &'p dyn Runtime,
        lane: &Lane,
        slot: usize,
        dst: Address,
        bounce: Bounce<'p>,
        n: usize,
    ) -> Result<InFlight<'p>, (RtError, Bounce<'p>)> {
        Self::to_device_on(rt, lane.stream, Some(lane.events[slot]), dst, bounce, n)
    }

    /// [`InFlight::to_device`] on `stream`, followed by a record of `event` if one is given;
    /// without one, waiting synchronises the stream (which also reports the copy's failure).
    pub(crate) fn to_device_on(
        rt: &'p dyn Runtime,
        stream: StreamHandle,
        event: Option<EventHandle>,
        dst: Address,
        mut bounce: Bounce<'p>,
        n: usize,
    ) -> Result<InFlight<'p>, (RtError, Bounce<'p>)> {
        let Some(rt) = rt.streams() else {
            return Err((RtError::NOT_SUPPORTED, bounce));
        };
        let src = bounce.as_mut_slice();
        assert!(n <= src.len(), "copy larger than its bounce buffer");
        let src = src.as_ptr();
        // SAFETY: the buffer is moved into the returned value, which gives it back only after
        // the copy's event (or the whole stream) completed, so nothing writes or frees it while
        // the runtime reads it.
        let issued = unsafe { rt.copy_to_device_async(dst, src, n, stream) }
            .and_then(|()| event.map_or(Ok(()), |e| rt.event_record(e, stream)));
        Self::issued(issued, rt, stream, event, bounce)
    }

    /// Start copying `n` bytes at `src` into the start of `bounce` on `stream`. On failure the
    /// buffer comes back with the error.
    pub(crate) fn from_device(
        rt: &'p dyn Runtime,
        stream: StreamHandle,
        src: Address,
        mut bounce: Bounce<'p>,
        n: usize,
    ) -> Result<InFlight<'p>, (RtError, Bounce<'p>)> {
        let Some(rt) = rt.streams() else {
            return Err((RtError::NOT_SUPPORTED, bounce));
        };
        let dst = bounce.as_mut_slice();
        assert!(n <= dst.len(), "copy larger than its bounce buffer");
        let dst = dst.as_mut_ptr();
        // SAFETY: the buffer is moved into the returned value, which gives it back only after
        // the stream was synchronised, so nothing reads, writes or frees it while the runtime
        // writes it.
        let issued = unsafe { rt.copy_from_device_async(dst, src, n, stream) };
        Self::issued(issued, rt, stream, None, bounce)
    }

    fn issued(
        issued: RtResult<()>,
        rt: &'p dyn Streams,
        stream: StreamHandle,
        event: Option<EventHandle>,
        bounce: Bounce<'p>,
    ) -> Result<InFlight<'p>, (RtError, Bounce<'p>)> {
        match issued {
            Ok(()) => Ok(InFlight {
                bounce: Some(bounce),
                rt,
                stream,
                event,
            }),
            Err(e) => {
                // Whatever was queued before the failure must finish before the buffer is reused.
                let _ = rt.stream_synchronize(stream);
                Err((e, bounce))
            }
        }
    }

    /// Wait for the copy (its event, or the stream: this copy and everything before it); the
    /// buffer comes back either way, holding the copied bytes after a successful copy from the
    /// device.
    pub(crate) fn wait(mut self) -> (RtResult<()>, Bounce<'p>) {
        let r = match self.event {
            Some(e) => match self.rt.event_synchronize(e) {
                Ok(()) => Ok(()),
                Err(err) => {
                    // The event failed: only the stream can say nothing uses the buffer now.
                    let _ = self.rt.stream_synchronize(self.stream);
                    Err(err)
                }
            },
            None => self.rt.stream_synchronize(self.stream),
        };
        (r, self.bounce.take().expect("present until taken"))
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.bounce.is_some() {
            let _ = self.rt.stream_synchronize(self.stream);
        }
    }
}
