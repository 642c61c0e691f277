//! The file side of one chunk: its `pread` or `pwrite`, through the page cache or around it
//! (the `O_DIRECT` twin, as [`plan::direct_ok`] and [`plan::read_direct`] decide), and the
//! page-cache probe that tells the planner whether a read starts warm. Raw system calls
//! (`sys::io`): no cancellation point inside the library.
#![deny(unsafe_code)]

use std::os::fd::RawFd;

use super::plan;
use super::Transfer;
use crate::sys;
use crate::sys::io::PartialWrite;
use crate::vocab::Direction;

/// Read one chunk: through the page cache when it holds any of the chunk, otherwise (for
/// aligned chunks with an `O_DIRECT` twin) straight from the device, bypassing the cache, so
/// cold data is neither copied through the cache nor pushed out of it (target T2). Residency
/// comes from `cachestat`, which, unlike a `RWF_NOWAIT` probe, starts no readahead (a probe
/// would read cold data twice).
#[inline(always)]
pub(super) fn read_chunk(t: &Transfer, buf: &mut [u8], off: u64) -> Result<usize, i32> {
    // By value: a reference into `t` would keep the whole transfer in memory (target T9).
    if let Some(d) = t.direct {
        if plan::direct_ok(&d, buf.as_ptr() as usize, buf.len(), off) {
            return read_chunk_cold(t.fd, d.fd, buf, off);
        }
    }
    sys::io::pread_full(t.fd, buf, off)
}

/// [`read_chunk`] of an aligned chunk with an `O_DIRECT` twin: direct when nothing of it is
/// cached.
#[inline(never)]
fn read_chunk_cold(buffered: RawFd, direct: RawFd, buf: &mut [u8], off: u64) -> Result<usize, i32> {
    let cached = sys::io::cachestat(buffered, off, buf.len() as u64)
        .ok()
        .map(|cs| cs.cached);
    if plan::read_direct(cached) {
        return direct_read(buffered, direct, buf, off);
    }
    sys::io::pread_full(buffered, buf, off)
}

/// Write one chunk: aligned chunks with an `O_DIRECT` twin go straight to the device (the
/// transfer's one `fdatasync` then only flushes metadata and the drive's cache); the rest
/// through the page cache.
#[inline(always)]
pub(super) fn write_chunk(t: &Transfer, buf: &[u8], off: u64) -> Result<usize, PartialWrite> {
    let direct = match t.direct {
        Some(d) if plan::direct_ok(&d, buf.as_ptr() as usize, buf.len(), off) => Some(d),
        _ => None,
    };
    if let Some(d) = direct {
        let n = sys::io::pwrite(d.fd, buf, off).map_err(|errno| PartialWrite { done: 0, errno })?;
        if n == buf.len() || n == 0 {
            return Ok(n);
        }
        // A short direct write leaves an unaligned remainder: finish it through the cache.
        return sys::io::pwrite_full(t.fd, &buf[n..], off + n as u64)
            .map(|m| n + m)
            .map_err(|p| PartialWrite {
                done: n + p.done,
                ..p
            });
    }
    sys::io::pwrite_full(t.fd, buf, off)
}

/// Read through the `O_DIRECT` descriptor until done; a short (end-of-file) direct read leaves
/// an unaligned remainder, which the buffered descriptor finishes (it returns 0 at the end).
fn direct_read(buffered: RawFd, direct: RawFd, buf: &mut [u8], off: u64) -> Result<usize, i32> {
    let n = sys::io::pread(direct, buf, off)?;
    if n == buf.len() || n == 0 {
        return Ok(n);
    }
    Ok(n + sys::io::pread_full(buffered, &mut buf[n..], off + n as u64)?)
}

/// Whether a read starts in the page cache: any page of its first MiB cached (`cachestat`, no
/// readahead; a cold chunk, the one read with `O_DIRECT`, has none). `None` for writes and where
/// the kernel cannot say.
pub(super) fn warm_start(t: &Transfer) -> Option<bool> {
    if t.dir != Direction::Read {
        return None;
    }
    let len = t.size.min(WARM_PROBE) as u64;
    let cs = sys::io::cachestat(t.fd, t.offset, len).ok()?;
    Some(cs.cached > 0)
}

/// Bytes at a read's start that [`warm_start`] looks at.
const WARM_PROBE: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::PartWay;
    use crate::vocab::{Address, MemRef};
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn transfer(fd: RawFd, dir: Direction) -> Transfer {
        Transfer {
            dir,
            fd,
            direct: None,
            target: MemRef::Host {
                addr: Address::new(4096),
            },
            size: 8 << 20,
            offset: 0,
            sync: false,
            part_way: PartWay::Prefix,
        }
    }

    #[test]
    fn a_read_starts_warm_when_its_first_pages_are_cached() {
        let mut f = sys::io::scratch_file();
        f.write_all(&vec![7u8; 8 << 20]).unwrap();
        f.sync_all().unwrap();
        let fd = f.as_raw_fd();
        match sys::io::cachestat(fd, 0, 1 << 20) {
            Err(_) => assert_eq!(warm_start(&transfer(fd, Direction::Read)), None),
            Ok(_) => {
                assert_eq!(warm_start(&transfer(fd, Direction::Read)), Some(true));
                // Written back, then dropped from the cache: cold.
                rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
                if sys::io::cachestat(fd, 0, 1 << 20).unwrap().cached == 0 {
                    assert_eq!(warm_start(&transfer(fd, Direction::Read)), Some(false));
                }
            }
        }
        assert_eq!(warm_start(&transfer(fd, Direction::Write)), None);
    }
}
