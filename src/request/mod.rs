//! What one I/O names, resolved once: the [`File`](file::File), the memory
//! ([`Buffer`](memory::Buffer), registered or resolved for the call) and the range, as a
//! [`Request`] that every backend scores and serves. Sync and batch requests are built here
//! and bounds-checked by [`Request::check_bounds`], the one copy of that rule.
#![deny(unsafe_code)]

pub(crate) mod file;
pub(crate) mod memory;

use crate::engine::PartWay;
use crate::error::{Error, Result};
use crate::vocab::{Address, Direction};
use file::File;
use memory::Buffer;

/// Largest transfer of one call: `INT_MAX & ~(page_size - 1)` (the kernel's `MAX_RW_COUNT`).
pub(crate) const MAX_RW: usize = 0x7fff_f000;

/// One I/O, resolved: offsets are non-negative, the size is clamped to [`MAX_RW`]. Built only
/// by [`Request::new`].
#[derive(Clone, Copy)]
pub(crate) struct Request<'a> {
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
    /// What a write that fails part-way reports: its prefix (the default), or the error.
    pub part_way: PartWay,
}

/// The bounds rule of reads, writes and batch entries: `offset < length` (strictly)
/// and `size <= length - offset`.
#[inline(always)]
pub(crate) fn fits(length: usize, offset: usize, size: usize) -> bool {
    offset < length && size <= length - offset
}

impl<'a> Request<'a> {
    /// The request of `size` bytes (clamped to [`MAX_RW`]) between `file` at `file_offset`
    /// and `buf` at `buffer_offset`: the one place sync and batch requests are built.
    #[inline(always)]
    pub(crate) fn new(
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
            part_way: PartWay::Prefix,
        }
    }

    /// The same request for a caller that reports a status instead of a count (a batch
    /// event, a stream-ordered result): a write that fails part-way reports its error.
    #[inline(always)]
    pub(crate) fn reporting_errors(self) -> Request<'a> {
        Request {
            part_way: PartWay::Error,
            ..self
        }
    }

    /// Address of the first byte of memory.
    #[inline(always)]
    pub(crate) fn mem_addr(&self) -> Address {
        self.buf.base.add(self.buffer_offset)
    }

    /// Upstream's bounds: `buffer_offset < length` (strictly) and
    /// `size <= length - buffer_offset`.
    pub(crate) fn check_bounds(&self) -> Result<()> {
        if !fits(self.buf.length, self.buffer_offset, self.size) {
            return Err(Error::InvalidValue(
                "the request does not fit in the buffer",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_rule() {
        assert!(fits(10, 0, 10));
        assert!(fits(10, 9, 1));
        assert!(!fits(10, 9, 2), "one byte past the end");
        assert!(!fits(10, 10, 0), "the offset must lie inside the buffer");
        assert!(fits(10, 3, 0));
        assert!(!fits(0, 0, 0), "an empty buffer holds no offset");
        assert!(
            fits(usize::MAX, usize::MAX - 1, 1),
            "no overflow at the top"
        );
        assert!(!fits(usize::MAX, 1, usize::MAX));
    }

    #[test]
    fn sizes_are_clamped_to_max_rw() {
        let f = std::fs::File::open("/dev/null").unwrap();
        let file = File::inspect(std::os::fd::AsRawFd::as_raw_fd(&f)).unwrap();
        let buf = Buffer {
            base: Address::new(0x1000),
            length: usize::MAX - 0x1000,
            memory: crate::vocab::MemoryType::Unregistered,
            device: -1,
        };
        let r = Request::new(Direction::Read, &file, &buf, usize::MAX, 7, 16);
        assert_eq!((r.size, r.file_offset, r.buffer_offset), (MAX_RW, 7, 16));
        assert_eq!(r.mem_addr(), Address::new(0x1010));
        assert_eq!(r.check_bounds(), Ok(()));
        let r = Request::new(Direction::Write, &file, &buf, 100, 0, usize::MAX - 0x1000);
        assert!(matches!(r.check_bounds(), Err(Error::InvalidValue(_))));
    }
}
