//! What the chunks of one transfer achieved, recorded by its participants as they go, and the
//! transfer's result once they are all done.
//!
//! The result is the contiguous byte count from the transfer's start: a chunk that comes back
//! short (end of file) bounds it. The first error stops further claims and fails a read; a
//! write that fails part-way returns, as `pwrite` does, the count of the contiguous prefix that
//! reached the file (an error only when nothing did, or when the caller reports a status:
//! [`PartWay::Error`]), and what it wrote beyond that prefix past the file's old end is cut
//! back. Writes keep one bit per chunk written in full, so no per-chunk allocation happens.
#![deny(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::{PartWay, Transfer};
use crate::error::{Error, Result};
use crate::sys;
use crate::sys::io::PartialWrite;
use crate::vocab::Direction;

/// How one chunk failed: the error, after `done` bytes of it had reached the file (writes; 0
/// for reads).
pub(super) struct ChunkFault {
    pub(super) done: usize,
    pub(super) error: Error,
}

impl ChunkFault {
    pub(super) fn none_done(error: Error) -> ChunkFault {
        ChunkFault { done: 0, error }
    }
}

impl From<PartialWrite> for ChunkFault {
    fn from(p: PartialWrite) -> ChunkFault {
        ChunkFault {
            done: p.done,
            error: Error::Os(p.errno),
        }
    }
}

/// Bytes a chunk moved, or how it failed.
pub(super) type ChunkResult = Result<usize, ChunkFault>;

/// What the chunks of one transfer of `chunks` chunks of `chunk` bytes achieved so far.
pub(super) struct Outcome {
    chunk: usize,
    chunks: usize,
    /// Smallest end of a short chunk (`usize::MAX` while none came back short).
    short_end: AtomicUsize,
    /// Writes: one bit per chunk written in full (empty for reads).
    written: Vec<AtomicU64>,
    /// Writes: smallest `offset + bytes written` of a chunk that failed or came back short.
    write_end: AtomicUsize,
    /// Writes: the file's size before the transfer (`u64::MAX` if unknown: nothing is cut).
    size_before: u64,
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
}

impl Outcome {
    /// Nothing achieved yet, for a transfer in `direction` of `chunks` chunks of `chunk`
    /// bytes; a write's file was `size_before` bytes long.
    pub(super) fn new(dir: Direction, chunk: usize, chunks: usize, size_before: u64) -> Outcome {
        Outcome {
            chunk,
            chunks,
            short_end: AtomicUsize::new(usize::MAX),
            written: if dir == Direction::Write {
                (0..chunks.div_ceil(64))
                    .map(|_| AtomicU64::new(0))
                    .collect()
            } else {
                Vec::new()
            },
            write_end: AtomicUsize::new(usize::MAX),
            size_before,
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    /// The transfer failed with `e` (the first error is the one reported).
    pub(super) fn fail(&self, e: Error) {
        self.failed.store(true, Ordering::Release);
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    /// Whether a chunk failed: nothing more is claimed.
    #[inline]
    pub(super) fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Where the first short chunk ended (`usize::MAX` while none did): nothing lies beyond.
    #[inline]
    pub(super) fn short_end(&self) -> usize {
        self.short_end.load(Ordering::Acquire)
    }

    /// Record how the chunk of `len` bytes at transfer offset `off` ended; false when its
    /// participant should stop.
    pub(super) fn record(&self, off: usize, len: usize, result: ChunkResult) -> bool {
        match result {
            Ok(n) if n == len => {
                self.written_in_full(off);
                true
            }
            Ok(n) => {
                self.short_end.fetch_min(off + n, Ordering::AcqRel);
                self.written_until(off + n);
                true
            }
            Err(f) => {
                self.written_until(off + f.done);
                self.fail(f.error);
                false
            }
        }
    }

    /// A write chunk at `off` wrote everything.
    fn written_in_full(&self, off: usize) {
        let i = off / self.chunk;
        if let Some(w) = self.written.get(i / 64) {
            w.fetch_or(1 << (i % 64), Ordering::AcqRel);
        }
    }

    /// A write chunk stopped `at` this transfer offset (failed, short or abandoned).
    fn written_until(&self, at: usize) {
        self.write_end.fetch_min(at, Ordering::AcqRel);
    }

    /// The contiguous prefix of a write of `size` bytes that reached the file, once every
    /// participant is done: up to the first chunk not written in full, plus what that chunk
    /// wrote before it stopped.
    fn written_prefix(&self, size: usize) -> usize {
        let first = self
            .written
            .iter()
            .enumerate()
            .find_map(|(w, bits)| {
                let missing = !bits.load(Ordering::Acquire);
                (missing != 0).then(|| w * 64 + missing.trailing_zeros() as usize)
            })
            .unwrap_or(usize::MAX)
            .min(self.chunks);
        if first == self.chunks {
            return size;
        }
        let base = first * self.chunk;
        let end = self.write_end.load(Ordering::Acquire);
        if end < base + self.chunk {
            end.max(base)
        } else {
            base
        }
    }

    /// The result of `t` once every participant is done. A read: its error, or the contiguous
    /// byte count. A write: the contiguous prefix that reached the file (made durable with the
    /// transfer's one `fdatasync`), or the error when nothing did or the caller reports errors
    /// ([`PartWay::Error`]); bytes written past that prefix and past the file's old end are cut
    /// back, so a failed write leaves no holes and no growth beyond its prefix.
    pub(super) fn result(&self, t: &Transfer) -> Result<usize> {
        let error = self.error.lock().take();
        if t.dir == Direction::Read {
            return match error {
                Some(e) => Err(e),
                None => Ok(self.short_end().min(t.size)),
            };
        }
        let prefix = self.written_prefix(t.size).min(t.size);
        if prefix < t.size {
            cut_back(t, self.size_before, prefix);
        }
        match error {
            Some(e) if prefix == 0 || t.part_way == PartWay::Error => return Err(e),
            Some(e) => {
                tracing::debug!(target: "hipfile", "write failed after {prefix} contiguous bytes ({e}); reporting the short count")
            }
            None => {}
        }
        if t.sync {
            sys::io::fdatasync(t.fd).map_err(Error::Os)?;
        }
        Ok(prefix)
    }
}

/// After a write that reached the file only up to `prefix`: cut the file back to the larger of
/// its size before the write and the end of the prefix (bytes that existed before are never
/// cut). Best effort: a failure is logged, the count reported stays right.
#[cold]
fn cut_back(t: &Transfer, size_before: u64, prefix: usize) {
    let keep = size_before.max(t.offset + prefix as u64);
    match sys::io::file_size(t.fd) {
        Ok(now) if now > keep => {
            if let Err(e) = sys::io::truncate(t.fd, keep) {
                tracing::warn!(target: "hipfile", "cannot cut a partly failed write back to {keep} bytes (errno {e})");
            }
        }
        Ok(_) => {}
        Err(e) => {
            tracing::warn!(target: "hipfile", "cannot size the file after a partly failed write (errno {e})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: usize = 1 << 20;

    fn fault(done: usize) -> ChunkResult {
        Err(ChunkFault {
            done,
            error: Error::Os(libc::EIO),
        })
    }

    #[test]
    fn a_short_chunk_bounds_a_read() {
        let o = Outcome::new(Direction::Read, M, 4, u64::MAX);
        assert!(o.record(0, M, Ok(M)));
        assert!(
            o.record(2 * M, M, Ok(100)),
            "short: the participant goes on"
        );
        assert!(o.record(M, M, Ok(M)));
        assert_eq!(o.short_end(), 2 * M + 100);
        assert!(!o.failed());
        assert!(
            !o.record(3 * M, M, fault(0)),
            "a failure stops the participant"
        );
        assert!(o.failed());
    }

    #[test]
    fn a_write_reports_its_contiguous_prefix() {
        // Chunks 0 and 2 written in full, chunk 1 stopped after 300 bytes: 1 MiB + 300.
        let o = Outcome::new(Direction::Write, M, 3, u64::MAX);
        assert!(o.record(0, M, Ok(M)));
        assert!(o.record(2 * M, M, Ok(M)));
        assert!(!o.record(M, M, fault(300)));
        assert_eq!(o.written_prefix(3 * M), M + 300);
        // Every chunk in full: the whole size, also past 64 chunks.
        let o = Outcome::new(Direction::Write, M, 70, u64::MAX);
        for i in 0..70 {
            assert!(o.record(i * M, M, Ok(M)));
        }
        assert_eq!(o.written_prefix(70 * M), 70 * M);
        // Chunk 65 never written (abandoned): the prefix ends at its start.
        let o = Outcome::new(Direction::Write, M, 70, u64::MAX);
        for i in (0..70).filter(|&i| i != 65) {
            assert!(o.record(i * M, M, Ok(M)));
        }
        assert_eq!(o.written_prefix(70 * M), 65 * M);
    }
}
