//! What one I/O names, resolved once: the [`File`](file::File), the memory
//! ([`Buffer`](memory::Buffer), registered or resolved for the call) and the range, as a
//! [`Request`] that every backend scores and serves. Sync and batch requests are built here
//! and bounds-checked by [`Request::check_bounds`], the one copy of that rule.
#![deny(unsafe_code)]

pub mod file;
pub mod memory;

use crate::error::{Error, Result};
use crate::vocab::Direction;
use file::File;
use memory::Buffer;

/// Largest transfer of one call: `INT_MAX & ~(page_size - 1)` (the kernel's `MAX_RW_COUNT`).
pub const MAX_RW: usize = 0x7fff_f000;

/// One I/O, resolved: offsets are non-negative, the size is clamped to [`MAX_RW`]. Built only
/// by [`Request::new`].
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// Direction.
    pub dir: Direction,
    /// The file.
    pub file: &'a File,
    /// The buffer.
    pub buf: &'a Buffer,
    /// Bytes requested (clamped).
    pub size: usize,
    /// File offset.
    pub file_offset: u64,
    /// Offset into the buffer.
    pub buffer_offset: usize,
}

/// The bounds rule of reads, writes and batch entries: `offset < length` (strictly)
/// and `size <= length - offset`.
#[inline(always)]
pub fn fits(length: usize, offset: usize, size: usize) -> bool {
    offset < length && size <= length - offset
}

impl<'a> Request<'a> {
    /// The request of `size` bytes (clamped to [`MAX_RW`]) between `file` at `file_offset`
    /// and `buf` at `buffer_offset`: the one place sync and batch requests are built.
    #[inline(always)]
    pub fn new(
        dir: Direction,
        file: &'a File,
        buf: &'a Buffer,
        size: usize,
        file_offset: u64,
        buffer_offset: usize,
    ) -> Request<'a> {
        Request {
            dir,
            file,
            buf,
            size: size.min(MAX_RW),
            file_offset,
            buffer_offset,
        }
    }

    /// Address of the first byte of memory.
    pub fn mem_addr(&self) -> usize {
        self.buf.base.wrapping_add(self.buffer_offset)
    }

    /// Bounds of behaviour §B.8 step 5: `buffer_offset < length` (strictly) and
    /// `size <= length - buffer_offset`.
    pub fn check_bounds(&self) -> Result<()> {
        if !fits(self.buf.length, self.buffer_offset, self.size) {
            return Err(Error::InvalidValue(
                "the request does not fit in the buffer",
            ));
        }
        Ok(())
    }
}
