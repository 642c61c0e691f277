//! A fake NVIDIA cuFile (`libcufile.so.0`, GPUDirect Storage) with the real C ABI, so that
//! `hipfile`'s cuFile adapter can be tested by pointing it at `libhipsim.so`.
//!
//! Exported: `cuFileDriverOpen`, `cuFileDriverClose`, `cuFileDriverClose_v2`,
//! `cuFileDriverGetProperties`, `cuFileHandleRegister`, `cuFileHandleDeregister`,
//! `cuFileBufRegister`, `cuFileBufDeregister`, `cuFileRead`, `cuFileWrite`. Every call is
//! counted under its function name; a panic becomes `CU_FILE_INTERNAL_ERROR` (5030; `-5030` for
//! the I/O calls).
//!
//! Rules:
//! * The driver is reference counted: each `cuFileDriverOpen` needs one `cuFileDriverClose`
//!   (or `_v2`); closing a driver that is not open is `CU_FILE_DRIVER_NOT_INITIALIZED`. When
//!   the count drops to zero every registered handle and buffer is forgotten. Opening with zero
//!   simulated devices fails with `CU_FILE_CUDA_DRIVER_ERROR` (cu_err `CUDA_ERROR_NO_DEVICE`);
//!   a successful open initialises the CUDA face, as the real library calls `cuInit`.
//! * `cuFileDriverGetProperties` reports a real GDS path (nvidia-fs 2.17, NVMe and NVMe P2P
//!   supported) when the `cufile_gds` setting is 1, and "compat mode only" (version 0.0, no
//!   status flags) when it is 0, the default. "Allow compat mode" is set in both.
//! * `cuFileHandleRegister` accepts `CU_FILE_HANDLE_TYPE_OPAQUE_FD` descriptors of regular files
//!   and block devices, opened with or without `O_DIRECT`; one handle per descriptor number.
//!   The `cufile_register_error` fault makes it fail with that code, `*fh` untouched.
//! * `cuFileBufRegister` accepts ranges inside one device allocation (`hipMalloc` /
//!   `cuMemAlloc`), not overlapping another registered buffer.
//! * `cuFileRead` / `cuFileWrite` need a registered handle and a device range
//!   `[bufPtr_base + bufPtr_offset, + size)` inside one device allocation (and inside the
//!   registered length when `bufPtr_base` is a registered buffer). Any alignment works, as with
//!   the real library (which bounces unaligned requests): aligned requests on an `O_DIRECT`
//!   descriptor use it directly, anything else goes through a buffered descriptor of the same
//!   file (the descriptor's own when it is not `O_DIRECT`). They loop until done or end of file
//!   and return the bytes moved; a syscall failure before any byte moved is -1 with `errno`
//!   set, a cuFile failure is `-code`. Faults, applied before any check: `cufile_io_error`
//!   (`-code`), then `cufile_io_errno` (-1 with that errno).
//!
//! Safety contract of every `unsafe extern "C"` function in this module (the C contract of the
//! real library): each pointer argument is NULL or valid for the access the cuFile
//! documentation describes, for the duration of the call.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint, c_void};

use cufile_abi::{
    CUfileDescr_t, CUfileDrvPropsNvfs, CUfileDrvProps_t, CUfileError_t, ALLOW_COMPAT_MODE,
    HANDLE_TYPE_OPAQUE_FD, NVME_P2P_SUPPORTED, NVME_SUPPORTED,
};
use parking_lot::Mutex;

use crate::counters::{self, Gauge};
use crate::cufile_errors::code;
use crate::device;
use crate::faults::{self, Fault};
use crate::ffi::guarded;
use crate::memory;

/// nvidia-fs version reported with `cufile_gds` = 1.
pub const GDS_VERSION: (c_uint, c_uint) = (2, 17);
/// `CUDA_ERROR_NO_DEVICE`.
const CUDA_ERROR_NO_DEVICE: c_int = 100;
/// Alignment below which an `O_DIRECT` request goes through a buffered descriptor.
const DIRECT_ALIGN: u64 = 4096;
/// First handle value; handles are never reused.
const FIRST_HANDLE: usize = 0xC0F1_1E00_0000;

struct Driver {
    opens: u64,
    /// Handle -> file descriptor.
    handles: BTreeMap<usize, c_int>,
    next_handle: usize,
    /// Buffer start -> registered length.
    bufs: BTreeMap<usize, usize>,
}

static DRIVER: Mutex<Driver> = Mutex::new(Driver {
    opens: 0,
    handles: BTreeMap::new(),
    next_handle: FIRST_HANDLE,
    bufs: BTreeMap::new(),
});

fn require_open(d: &Driver) -> Result<(), CUfileError_t> {
    if d.opens == 0 {
        Err(CUfileError_t::op(code::DRIVER_NOT_INITIALIZED))
    } else {
        Ok(())
    }
}

/// Runs the body of a cuFile entry point returning `CUfileError_t`: counts the call under
/// `name` and turns a panic into `CU_FILE_INTERNAL_ERROR`.
fn cufile_call(
    name: &'static str,
    body: impl FnOnce() -> Result<(), CUfileError_t>,
) -> CUfileError_t {
    guarded(name, CUfileError_t::op(code::INTERNAL_ERROR), || {
        body().err().unwrap_or_default()
    })
}

fn errno() -> c_int {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

fn fault_code(f: Fault) -> c_int {
    match faults::get(f) {
        0 => 0,
        v => c_int::try_from(v.unsigned_abs()).unwrap_or(code::INTERNAL_ERROR),
    }
}

// ---- driver --------------------------------------------------------------------------------

/// `CUfileError_t cuFileDriverOpen(void)`: reference counted.
#[no_mangle]
pub unsafe extern "C" fn cuFileDriverOpen() -> CUfileError_t {
    cufile_call("cuFileDriverOpen", || {
        if device::count() == 0 {
            return Err(CUfileError_t {
                err: code::CUDA_DRIVER_ERROR,
                cu_err: CUDA_ERROR_NO_DEVICE,
            });
        }
        device::cuda_init();
        DRIVER.lock().opens += 1;
        counters::gauge_add(Gauge::CufileDriverOpens, 1);
        Ok(())
    })
}

fn driver_close() -> Result<(), CUfileError_t> {
    let mut d = DRIVER.lock();
    require_open(&d)?;
    d.opens -= 1;
    counters::gauge_sub(Gauge::CufileDriverOpens, 1);
    if d.opens == 0 {
        counters::gauge_sub(Gauge::CufileHandles, d.handles.len() as u64);
        counters::gauge_sub(Gauge::CufileBufs, d.bufs.len() as u64);
        d.handles.clear();
        d.bufs.clear();
    }
    Ok(())
}

/// `CUfileError_t cuFileDriverClose(void)`: drops one open; the last one forgets every handle
/// and buffer.
#[no_mangle]
pub unsafe extern "C" fn cuFileDriverClose() -> CUfileError_t {
    cufile_call("cuFileDriverClose", driver_close)
}

/// `CUfileError_t cuFileDriverClose_v2(void)`: as `cuFileDriverClose`.
#[no_mangle]
pub unsafe extern "C" fn cuFileDriverClose_v2() -> CUfileError_t {
    cufile_call("cuFileDriverClose_v2", driver_close)
}

/// The properties reported now (depends on the `cufile_gds` setting).
pub fn properties() -> CUfileDrvProps_t {
    let gds = faults::get(Fault::CufileGds) != 0;
    let (major_version, minor_version) = if gds { GDS_VERSION } else { (0, 0) };
    CUfileDrvProps_t {
        nvfs: CUfileDrvPropsNvfs {
            major_version,
            minor_version,
            poll_thresh_size: 4,
            max_direct_io_size: 16384,
            dstatusflags: if gds {
                NVME_SUPPORTED | NVME_P2P_SUPPORTED
            } else {
                0
            },
            dcontrolflags: ALLOW_COMPAT_MODE,
        },
        // No batch or stream API is simulated.
        fflags: 0,
        max_device_cache_size: 131_072,
        per_buffer_cache_size: 1024,
        max_device_pinned_mem_size: 33_554_432,
        max_batch_io_size: 128,
        max_batch_io_timeout_msecs: 5,
    }
}

/// `CUfileError_t cuFileDriverGetProperties(CUfileDrvProps_t *props)`.
#[no_mangle]
pub unsafe extern "C" fn cuFileDriverGetProperties(props: *mut CUfileDrvProps_t) -> CUfileError_t {
    cufile_call("cuFileDriverGetProperties", || {
        require_open(&DRIVER.lock())?;
        if props.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        // SAFETY: module contract: `props` is valid for a write of the structure.
        unsafe { props.write(properties()) };
        Ok(())
    })
}

// ---- file handles --------------------------------------------------------------------------

/// Checks that `fd` is an open descriptor of a regular file or block device.
fn check_file(fd: c_int) -> Result<(), CUfileError_t> {
    // SAFETY: fstat writes into a zeroed, properly sized struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer; an invalid fd yields EBADF.
    if fd < 0 || unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG | libc::S_IFBLK => Ok(()),
        _ => Err(CUfileError_t::op(code::INVALID_FILE_TYPE)),
    }
}

/// `CUfileError_t cuFileHandleRegister(CUfileHandle_t *fh, CUfileDescr_t *descr)`.
#[no_mangle]
pub unsafe extern "C" fn cuFileHandleRegister(
    fh: *mut *mut c_void,
    descr: *mut CUfileDescr_t,
) -> CUfileError_t {
    cufile_call("cuFileHandleRegister", || {
        require_open(&DRIVER.lock())?;
        if fh.is_null() || descr.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        // SAFETY: module contract: `descr` points to a valid descriptor.
        let descr = unsafe { descr.read() };
        if descr.type_ != HANDLE_TYPE_OPAQUE_FD {
            return Err(CUfileError_t::op(code::IO_NOT_SUPPORTED));
        }
        let injected = fault_code(Fault::CufileRegisterError);
        if injected != 0 {
            return Err(CUfileError_t::op(injected));
        }
        // SAFETY: every variant of the union is plain data; `fd` is the low 4 bytes.
        let fd = unsafe { descr.handle.fd };
        check_file(fd)?;
        let mut d = DRIVER.lock();
        require_open(&d)?;
        if d.handles.values().any(|&f| f == fd) {
            return Err(CUfileError_t::op(code::HANDLE_ALREADY_REGISTERED));
        }
        let h = d.next_handle;
        d.next_handle += 0x10;
        d.handles.insert(h, fd);
        counters::gauge_add(Gauge::CufileHandles, 1);
        // SAFETY: module contract: `fh` is valid for a write.
        unsafe { fh.write(h as *mut c_void) };
        Ok(())
    })
}

/// `void cuFileHandleDeregister(CUfileHandle_t fh)`: unknown handles are ignored.
#[no_mangle]
pub unsafe extern "C" fn cuFileHandleDeregister(fh: *mut c_void) {
    guarded("cuFileHandleDeregister", (), || {
        if DRIVER.lock().handles.remove(&(fh as usize)).is_some() {
            counters::gauge_sub(Gauge::CufileHandles, 1);
        }
    });
}

// ---- buffers -------------------------------------------------------------------------------

/// `CUfileError_t cuFileBufRegister(const void *bufPtr_base, size_t length, int flags)`:
/// device memory only; flags are ignored.
#[no_mangle]
pub unsafe extern "C" fn cuFileBufRegister(
    buf: *const c_void,
    length: usize,
    _flags: c_int,
) -> CUfileError_t {
    cufile_call("cuFileBufRegister", || {
        require_open(&DRIVER.lock())?;
        let start = buf as usize;
        if start == 0 || length == 0 {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let region = memory::lookup(start)
            .filter(|r| r.kind == memory::Kind::Device)
            .ok_or(CUfileError_t::op(code::CUDA_MEMORY_TYPE_INVALID))?;
        if !region.contains(start, length) {
            return Err(CUfileError_t::op(code::CUDA_POINTER_RANGE_ERROR));
        }
        let end = start + length;
        let mut d = DRIVER.lock();
        require_open(&d)?;
        let overlaps = d
            .bufs
            .range(..end)
            .next_back()
            .is_some_and(|(&s, &l)| s + l > start);
        if overlaps {
            return Err(CUfileError_t::op(code::MEMORY_ALREADY_REGISTERED));
        }
        d.bufs.insert(start, length);
        counters::gauge_add(Gauge::CufileBufs, 1);
        Ok(())
    })
}

/// `CUfileError_t cuFileBufDeregister(const void *bufPtr_base)`: the exact registered start.
#[no_mangle]
pub unsafe extern "C" fn cuFileBufDeregister(buf: *const c_void) -> CUfileError_t {
    cufile_call("cuFileBufDeregister", || {
        let mut d = DRIVER.lock();
        require_open(&d)?;
        if d.bufs.remove(&(buf as usize)).is_none() {
            return Err(CUfileError_t::op(code::MEMORY_NOT_REGISTERED));
        }
        counters::gauge_sub(Gauge::CufileBufs, 1);
        Ok(())
    })
}

// ---- I/O -----------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
}

/// Why an I/O call failed.
enum Fail {
    /// Return `-code`.
    CuFile(c_int),
    /// Return -1 with `errno` set.
    Errno(c_int),
}

const INVALID: Fail = Fail::CuFile(code::INVALID_VALUE);

/// `pread`/`pwrite` until `len` bytes moved, end of file, or an error (`EINTR` retried). An
/// error after some bytes moved ends the transfer with the partial count.
fn transfer_full(op: Op, fd: c_int, buf: usize, len: u64, offset: u64) -> Result<u64, c_int> {
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(1 << 30) as usize;
        let at = buf + done as usize;
        let pos = (offset + done) as libc::off_t;
        // SAFETY: [at, at + want) lies inside shadow memory of a device allocation validated by
        // the caller.
        let n = unsafe {
            match op {
                Op::Read => libc::pread(fd, at as *mut c_void, want, pos),
                Op::Write => libc::pwrite(fd, at as *const c_void, want, pos),
            }
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
    }
    Ok(done)
}

/// As [`transfer_full`], through a fresh buffered descriptor of `fd`'s file.
fn transfer_buffered(op: Op, fd: c_int, buf: usize, len: u64, offset: u64) -> Result<u64, c_int> {
    let path = format!("/proc/self/fd/{fd}\0");
    let mode = match op {
        Op::Read => libc::O_RDONLY,
        Op::Write => libc::O_WRONLY,
    };
    // SAFETY: a NUL-terminated path; the result is checked.
    let fd2 = unsafe { libc::open(path.as_ptr().cast(), mode | libc::O_CLOEXEC) };
    if fd2 < 0 {
        return Err(errno());
    }
    let r = transfer_full(op, fd2, buf, len, offset);
    // SAFETY: fd2 was opened above and is closed once.
    unsafe { libc::close(fd2) };
    r
}

fn io(
    op: Op,
    fh: usize,
    base: usize,
    size: usize,
    file_offset: libc::off_t,
    buf_offset: libc::off_t,
) -> Result<u64, Fail> {
    let injected = fault_code(Fault::CufileIoError);
    if injected != 0 {
        return Err(Fail::CuFile(injected));
    }
    let injected = fault_code(Fault::CufileIoErrno);
    if injected != 0 {
        return Err(Fail::Errno(injected));
    }
    let (fd, registered) = {
        let d = DRIVER.lock();
        let fd = *d
            .handles
            .get(&fh)
            .ok_or(Fail::CuFile(code::HANDLE_NOT_REGISTERED))?;
        (fd, d.bufs.get(&base).copied())
    };
    if base == 0 || isize::try_from(size).is_err() {
        return Err(INVALID);
    }
    let offset = u64::try_from(file_offset).map_err(|_| INVALID)?;
    let buf_offset = usize::try_from(buf_offset).map_err(|_| INVALID)?;
    offset
        .checked_add(size as u64)
        .filter(|&e| e <= i64::MAX as u64)
        .ok_or(INVALID)?;
    let addr = base.checked_add(buf_offset).ok_or(INVALID)?;
    if let Some(reg_len) = registered {
        counters::bump("cufile_registered_buf_ios");
        if buf_offset.checked_add(size).is_none_or(|e| e > reg_len) {
            return Err(INVALID);
        }
    }
    if size == 0 {
        return Ok(0);
    }
    let (_, shadow) = memory::device_memory_operand(addr, size).ok_or(INVALID)?;
    // SAFETY: F_GETFL only reads descriptor flags; an invalid fd yields EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(Fail::Errno(errno()));
    }
    let allowed = match (op, flags & libc::O_ACCMODE) {
        (_, libc::O_RDWR) => true,
        (Op::Read, m) => m == libc::O_RDONLY,
        (Op::Write, m) => m == libc::O_WRONLY,
    };
    if !allowed {
        return Err(Fail::Errno(libc::EBADF));
    }
    let len = size as u64;
    let r = if flags & libc::O_DIRECT == 0 {
        transfer_full(op, fd, shadow, len, offset)
    } else {
        let aligned = [shadow as u64, offset, len]
            .iter()
            .all(|v| v % DIRECT_ALIGN == 0);
        match aligned.then(|| transfer_full(op, fd, shadow, len, offset)) {
            // The filesystem wants a larger alignment: bounce, as cuFile does.
            Some(Err(libc::EINVAL)) | None => transfer_buffered(op, fd, shadow, len, offset),
            Some(r) => r,
        }
    };
    r.map_err(Fail::Errno)
}

fn file_io(
    op: Op,
    fh: *mut c_void,
    base: usize,
    size: usize,
    file_offset: libc::off_t,
    buf_offset: libc::off_t,
) -> isize {
    let (name, counter) = match op {
        Op::Read => ("cuFileRead", "cufile_read_bytes"),
        Op::Write => ("cuFileWrite", "cufile_write_bytes"),
    };
    guarded(name, -(code::INTERNAL_ERROR as isize), || {
        match io(op, fh as usize, base, size, file_offset, buf_offset) {
            Ok(n) => {
                counters::add(counter, n);
                n as isize
            }
            Err(Fail::CuFile(c)) => -(c as isize),
            Err(Fail::Errno(e)) => {
                set_errno(e);
                -1
            }
        }
    })
}

/// `ssize_t cuFileRead(CUfileHandle_t fh, void *bufPtr_base, size_t size, off_t file_offset,
/// off_t bufPtr_offset)`: bytes read (short only at end of file), -1 with `errno`, or `-code`.
#[no_mangle]
pub unsafe extern "C" fn cuFileRead(
    fh: *mut c_void,
    buf_base: *mut c_void,
    size: usize,
    file_offset: libc::off_t,
    buf_offset: libc::off_t,
) -> isize {
    file_io(
        Op::Read,
        fh,
        buf_base as usize,
        size,
        file_offset,
        buf_offset,
    )
}

/// `ssize_t cuFileWrite(CUfileHandle_t fh, const void *bufPtr_base, size_t size, off_t
/// file_offset, off_t bufPtr_offset)`: bytes written, -1 with `errno`, or `-code`.
#[no_mangle]
pub unsafe extern "C" fn cuFileWrite(
    fh: *mut c_void,
    buf_base: *const c_void,
    size: usize,
    file_offset: libc::off_t,
    buf_offset: libc::off_t,
) -> isize {
    file_io(
        Op::Write,
        fh,
        buf_base as usize,
        size,
        file_offset,
        buf_offset,
    )
}
