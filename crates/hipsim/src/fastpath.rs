//! The GPU-direct ("fastpath") entry points `hipAmdFileRead` / `hipAmdFileWrite`.
//!
//! They behave like AMD's kernel path: the descriptor must be open with `O_DIRECT`, the file
//! offset, size and device address must be 4 KiB aligned, and the whole range must lie inside
//! one device allocation; otherwise `*status = -EINVAL`. Valid requests do real
//! `pread`/`pwrite` between the descriptor and the allocation's shadow memory, looping on `EINTR`
//! and short counts until done or end of file. A syscall failure before any byte moved gives
//! `*bytes = 0, *status = -errno`; after some bytes moved, the call reports the partial count
//! (a short transfer). Both return `hipSuccess` in those cases.
//!
//! Reads skip holes of sparse files: holes found with `lseek(SEEK_DATA/SEEK_HOLE)` are zeroed
//! in the shadow with `madvise(MADV_DONTNEED)` (whole pages; anonymous private memory reads
//! back as zeros without being committed) instead of being read, so multi-GiB sparse reads are
//! cheap.
//!
//! Faults: `fastpath_hip_error`, then `fastpath_errno`, are applied before any check of the
//! request; `short_transfer` caps the bytes moved per call. A cap that is not a multiple of
//! 4 KiB is honoured exactly: a read moves whole blocks but reports only the cap, and a write
//! moves the cap through a second, buffered descriptor of the same file.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_int, c_void};

use crate::counters;
use crate::errors::SimError;
use crate::faults::{self, Fault};
use crate::ffi::{hip_call, Out};
use crate::memory;

/// Alignment the kernel path requires of offsets, sizes and device addresses.
pub const BLOCK: u64 = 4096;

/// `hipAmdFileHandle_t`: an 8-byte union passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub union HipAmdFileHandle {
    /// Opaque handle (unused on Linux).
    pub handle: *mut c_void,
    /// The file descriptor.
    pub fd: c_int,
    /// Padding to 8 bytes.
    pub pad: [u8; 8],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// The outcome of a request: bytes moved, or the errno to report as `-status`.
type IoResult = Result<u64, i32>;

fn check_fd(fd: c_int) -> Result<(), i32> {
    // SAFETY: F_GETFL only reads descriptor flags; an invalid fd yields EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(errno());
    }
    if flags & libc::O_DIRECT == 0 {
        return Err(libc::EINVAL);
    }
    Ok(())
}

fn align_down(v: u64, a: u64) -> u64 {
    v & !(a - 1)
}

fn align_up(v: u64, a: u64) -> u64 {
    v.saturating_add(a - 1) & !(a - 1)
}

/// Zeroes `len` bytes of shadow memory at `addr` (the tail of a read that hit a hole): whole
/// pages are dropped with MADV_DONTNEED, partial pages are written.
fn zero_shadow(addr: usize, len: usize) {
    if len == 0 {
        return;
    }
    let page = memory::page_size();
    let end = addr + len;
    let first_page = (addr + page - 1) & !(page - 1);
    let last_page = end & !(page - 1);
    if first_page < last_page {
        // SAFETY: [first_page, last_page) lies inside a private anonymous shadow mapping owned
        // by the simulator; MADV_DONTNEED makes it read back as zeros.
        let rc = unsafe {
            libc::madvise(
                first_page as *mut c_void,
                last_page - first_page,
                libc::MADV_DONTNEED,
            )
        };
        if rc == 0 {
            // SAFETY: the partial pages at both ends lie inside the same shadow range.
            unsafe {
                std::ptr::write_bytes(addr as *mut u8, 0, first_page - addr);
                std::ptr::write_bytes(last_page as *mut u8, 0, end - last_page);
            }
            return;
        }
    }
    // SAFETY: [addr, end) lies inside a shadow mapping owned by the simulator.
    unsafe { std::ptr::write_bytes(addr as *mut u8, 0, len) };
}

/// `pread` until `len` bytes at `offset` are in `buf`, EOF, or an error. Returns bytes read.
fn pread_full(fd: c_int, buf: usize, len: u64, offset: u64) -> IoResult {
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(1 << 30) as usize;
        // SAFETY: [buf + done, buf + done + want) is writable shadow memory validated by the
        // caller.
        let n = unsafe {
            libc::pread(
                fd,
                (buf + done as usize) as *mut c_void,
                want,
                (offset + done) as i64,
            )
        };
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                e if done == 0 => return Err(e),
                _ => break,
            }
        }
        if n == 0 {
            break;
        }
        done += n as u64;
        // O_DIRECT returns a short, unaligned count only at end of file; the next pread
        // would be unaligned and fail.
        if (n as u64) < want as u64 && (offset + done) % BLOCK != 0 {
            break;
        }
    }
    Ok(done)
}

/// `pwrite` until `len` bytes from `buf` are at `offset` or an error. Returns bytes written.
fn pwrite_full(fd: c_int, buf: usize, len: u64, offset: u64) -> IoResult {
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(1 << 30) as usize;
        // SAFETY: [buf + done, buf + done + want) is readable shadow memory validated by the
        // caller.
        let n = unsafe {
            libc::pwrite(
                fd,
                (buf + done as usize) as *const c_void,
                want,
                (offset + done) as i64,
            )
        };
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                e if done == 0 => return Err(e),
                _ => break,
            }
        }
        if n == 0 {
            break;
        }
        done += n as u64;
        if (offset + done) % BLOCK != 0 && done < len {
            // An unaligned partial O_DIRECT write cannot be continued.
            break;
        }
    }
    Ok(done)
}

/// Restores a descriptor's file offset on drop: `lseek(SEEK_DATA/SEEK_HOLE)` moves it, and the
/// kernel path being simulated never does.
struct OffsetGuard {
    fd: c_int,
    offset: libc::off_t,
}

impl OffsetGuard {
    fn save(fd: c_int) -> OffsetGuard {
        // SAFETY: lseek has no memory-safety preconditions.
        let offset = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
        OffsetGuard { fd, offset }
    }
}

impl Drop for OffsetGuard {
    fn drop(&mut self) {
        if self.offset >= 0 {
            // SAFETY: as above.
            unsafe { libc::lseek(self.fd, self.offset, libc::SEEK_SET) };
        }
    }
}

/// Reads `[offset, offset + len)` (len aligned) into `buf`, skipping holes of a regular file.
/// Returns the bytes that lie before end of file.
fn read_sparse(fd: c_int, buf: usize, len: u64, offset: u64) -> IoResult {
    // SAFETY: fstat writes into a zeroed, properly sized struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(errno());
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return pread_full(fd, buf, len, offset);
    }
    let file_size = st.st_size.max(0) as u64;
    if offset >= file_size {
        return Ok(0);
    }
    let _restore = OffsetGuard::save(fd);
    let end = (offset + len).min(file_size);
    let end_aligned = align_up(end, BLOCK).min(offset + len);
    let at = |pos: u64| buf + (pos - offset) as usize;
    let mut pos = offset;
    while pos < end {
        // Next data at or after pos; ENXIO: only a hole remains up to end of file.
        // SAFETY: lseek has no memory-safety preconditions.
        let data = unsafe { libc::lseek(fd, pos as i64, libc::SEEK_DATA) };
        let data = if data < 0 {
            match errno() {
                libc::ENXIO => end,
                // The filesystem cannot report holes: treat everything as data.
                _ => pos,
            }
        } else {
            align_down(data as u64, BLOCK).max(pos).min(end)
        };
        if data > pos {
            zero_shadow(at(pos), (data - pos) as usize);
            pos = data;
            continue;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, pos as i64, libc::SEEK_HOLE) };
        let seg_end = if hole < 0 {
            end_aligned
        } else {
            align_up(hole as u64, BLOCK)
                .max(pos + BLOCK)
                .min(end_aligned)
        };
        let want = seg_end - pos;
        let got = match pread_full(fd, at(pos), want, pos) {
            Ok(n) => n,
            Err(e) if pos == offset => return Err(e),
            Err(_) => break,
        };
        pos += got;
        if got < want {
            break;
        }
    }
    Ok(pos.min(end) - offset)
}

/// Writes exactly `len` (unaligned) bytes through a buffered descriptor of the same file.
fn write_buffered(fd: c_int, buf: usize, len: u64, offset: u64) -> IoResult {
    let path = format!("/proc/self/fd/{fd}\0");
    // SAFETY: a NUL-terminated path; the result is checked.
    let fd2 = unsafe { libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd2 < 0 {
        return Err(errno());
    }
    let r = pwrite_full(fd2, buf, len, offset);
    // SAFETY: fd2 was opened above and is closed once.
    unsafe { libc::close(fd2) };
    r
}

fn transfer(op: Op, fd: c_int, devptr: usize, size: u64, offset: i64) -> IoResult {
    if size == 0 {
        return Ok(0);
    }
    check_fd(fd)?;
    let offset = u64::try_from(offset).map_err(|_| libc::EINVAL)?;
    if offset % BLOCK != 0 || size % BLOCK != 0 || devptr as u64 % BLOCK != 0 {
        return Err(libc::EINVAL);
    }
    let len = usize::try_from(size).map_err(|_| libc::EINVAL)?;
    let (_, shadow) = memory::device_memory_operand(devptr, len).ok_or(libc::EINVAL)?;
    offset
        .checked_add(size)
        .filter(|&e| e <= i64::MAX as u64)
        .ok_or(libc::EINVAL)?;
    let cap = match faults::get(Fault::ShortTransfer) {
        c if c > 0 => (c as u64).min(size),
        _ => size,
    };
    match op {
        Op::Read => Ok(read_sparse(fd, shadow, align_up(cap, BLOCK), offset)?.min(cap)),
        Op::Write if cap % BLOCK == 0 => pwrite_full(fd, shadow, cap, offset),
        Op::Write => write_buffered(fd, shadow, cap, offset),
    }
}

fn file_io(
    op: Op,
    h: HipAmdFileHandle,
    devptr: *mut c_void,
    size: u64,
    offset: i64,
    bytes: *mut u64,
    status: *mut i32,
) -> c_int {
    let name = match op {
        Op::Read => "hipAmdFileRead",
        Op::Write => "hipAmdFileWrite",
    };
    hip_call(name, || {
        // SAFETY: C contract: NULL or valid out-pointers.
        let (bytes, status) = unsafe { (Out::new(bytes)?, Out::new(status)?) };
        bytes.set(0);
        status.set(0);
        let hip_error = faults::get(Fault::FastpathHipError);
        if hip_error != 0 {
            return Err(SimError(
                i32::try_from(hip_error).unwrap_or(SimError::UNKNOWN.0),
            ));
        }
        let injected = faults::get(Fault::FastpathErrno);
        if injected != 0 {
            status.set(-(i32::try_from(injected.abs()).unwrap_or(libc::EIO)));
            return Ok(());
        }
        // SAFETY: every variant of the union is plain data; `fd` is the low 4 bytes.
        let fd = unsafe { h.fd };
        match transfer(op, fd, devptr as usize, size, offset) {
            Ok(n) => {
                bytes.set(n);
                let counter = if op == Op::Read {
                    "fastpath_read_bytes"
                } else {
                    "fastpath_write_bytes"
                };
                counters::add(counter, n);
            }
            Err(e) => status.set(-e),
        }
        Ok(())
    })
}

/// `hipError_t hipAmdFileRead(hipAmdFileHandle_t handle, void *devicePtr, uint64_t size,
/// int64_t file_offset, uint64_t *size_copied, int32_t *status)`.
#[no_mangle]
pub unsafe extern "C" fn hipAmdFileRead(
    handle: HipAmdFileHandle,
    device_ptr: *mut c_void,
    size: u64,
    file_offset: i64,
    size_copied: *mut u64,
    status: *mut i32,
) -> c_int {
    file_io(
        Op::Read,
        handle,
        device_ptr,
        size,
        file_offset,
        size_copied,
        status,
    )
}

/// `hipError_t hipAmdFileWrite(hipAmdFileHandle_t handle, void *devicePtr, uint64_t size,
/// int64_t file_offset, uint64_t *size_copied, int32_t *status)`.
#[no_mangle]
pub unsafe extern "C" fn hipAmdFileWrite(
    handle: HipAmdFileHandle,
    device_ptr: *mut c_void,
    size: u64,
    file_offset: i64,
    size_copied: *mut u64,
    status: *mut i32,
) -> c_int {
    file_io(
        Op::Write,
        handle,
        device_ptr,
        size,
        file_offset,
        size_copied,
        status,
    )
}
