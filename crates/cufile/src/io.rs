//! Files, buffers and I/O: synchronous, vectored, batch and stream-ordered.

use std::ffi::{c_int, c_uint, c_void};

use crate::driver::ensure_open;
use crate::engine::{cu, eng, Engine};
use crate::hip_abi::*;
use crate::{boundary, boundary_op};
use cufile_abi::*;

/// # Safety
/// `fh` and `descr` are NULL or valid (a writable handle, a readable descriptor).
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileHandleRegister(
    fh: *mut *mut c_void,
    descr: *mut CUfileDescr_t,
) -> CUfileError_t {
    boundary_op(|| {
        if fh.is_null() || descr.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        // Two fields are read, not the whole structure: a caller may leave `fs_ops` (a pointer
        // only user-space file systems use) unset, and an uninitialised pointer must not be
        // copied.
        // SAFETY: non-NULL and readable per the C contract.
        let type_ = unsafe { (*descr).type_ };
        // Linux descriptors only: Win32 handles and user-space file systems are not served.
        if type_ != HANDLE_TYPE_OPAQUE_FD {
            return Err(CUfileError_t::op(code::IO_NOT_SUPPORTED));
        }
        // SAFETY: as above; every bit pattern is an `int`, and the union's first 4 bytes are
        // the caller's (`fd` is what consumers write).
        let fd = unsafe { (*descr).handle.fd };
        // SAFETY: F_GETFL only inspects the descriptor table.
        if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFL) } < 0 {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        // Regular files and block devices only (no directories, pipes, sockets).
        // SAFETY: `st` is plain data that fstat fills for an open descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let kind = st.st_mode & libc::S_IFMT;
        if kind != libc::S_IFREG && kind != libc::S_IFBLK {
            return Err(CUfileError_t::op(code::INVALID_FILE_TYPE));
        }
        let e = ensure_open()?;
        let h = e.handle_register(fd).map_err(cu)?;
        // SAFETY: non-NULL and writable per the C contract.
        unsafe { fh.write(h) };
        Ok(())
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileHandleDeregister(fh: *mut c_void) {
    boundary(
        || (),
        || {
            if let Some(e) = crate::engine::engine() {
                e.handle_deregister(fh);
            }
        },
    )
}

/// # Safety
/// `base` names `length` bytes of memory the caller owns.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileBufRegister(
    base: *const c_void,
    length: usize,
    flags: c_int,
) -> CUfileError_t {
    boundary_op(|| {
        if base.is_null() || length == 0 {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = ensure_open()?;
        // cuFile's flags are RDMA hints; the engine takes none.
        let _ = flags;
        // SAFETY: the caller's contract.
        unsafe { e.buf_register(base, length, 0) }.map_err(cu)
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileBufDeregister(base: *const c_void) -> CUfileError_t {
    boundary_op(|| {
        if base.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        // The final close dropped every registration: cuFile answers "closing" then.
        if !e.is_open() {
            return Err(CUfileError_t::op(code::DRIVER_CLOSING));
        }
        e.buf_deregister(base).map_err(cu)
    })
}

fn errno() -> c_int {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() }
}

/// -1 with `errno` set: the one failure form of cuFile's data path.
fn fail(errno: c_int) -> isize {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() = errno };
    -1
}

/// The engine's read/write result as cuFile's: counts pass; -1 keeps the engine's `errno`;
/// a negated hipFile status becomes -1 with that status (the same number in cuFile) in
/// `errno`, except the engine's "invalid value", which after [`precheck`] means a request
/// beyond its buffer: cuFile's `CU_FILE_INVALID_MAPPING_RANGE`; a negated GPU runtime code
/// becomes -1 with `CU_FILE_CUDA_DRIVER_ERROR`.
fn data_result(r: isize) -> isize {
    match r {
        // The engine holds its own descriptors of the file, so EBADF means the client opened it
        // without the access the call needs: cuFile's "unsupported file open flags".
        -1 if errno() == libc::EBADF => fail(code::INVALID_FILE_OPEN_FLAG),
        r if r >= -1 => r,
        r => {
            let status = r.unsigned_abs();
            if status > 5000 && status < 5100 {
                fail(match status as c_int {
                    HIP_IO_MAX_ERROR => code::INTERNAL_ERROR,
                    HIP_INVALID_VALUE => code::INVALID_MAPPING_RANGE,
                    s => s,
                })
            } else {
                fail(code::CUDA_DRIVER_ERROR)
            }
        }
    }
}

fn engine_or_fail() -> Result<&'static Engine, isize> {
    crate::engine::engine().ok_or_else(|| fail(code::PLATFORM_NOT_SUPPORTED))
}

/// `cuFileRead` / `cuFileWrite`, with cuFile's checks in its order: a NULL handle or buffer
/// (`EINVAL`); the handle itself, for an empty request too (NVIDIA's refuses 0 bytes on a
/// handle that is not registered: the engine is asked for 0 bytes at offset 0, which it
/// answers from the handle alone); then an empty request (0, whatever the offsets), a
/// negative file offset (5022) and a negative buffer offset (5030).
///
/// # Safety
/// `base + buf_offset` names `size` bytes valid for the direction (device or host memory).
unsafe fn transfer(
    write: bool,
    fh: *mut c_void,
    base: *mut c_void,
    size: usize,
    off: i64,
    boff: i64,
) -> isize {
    if fh.is_null() || base.is_null() {
        return fail(libc::EINVAL);
    }
    let e = match engine_or_fail() {
        Ok(e) => e,
        Err(r) => return r,
    };
    let call = |size: usize, off: i64, boff: i64| {
        // SAFETY: the caller's contract (0 bytes touch no memory).
        unsafe {
            if write {
                e.write(fh, base, size, off, boff)
            } else {
                e.read(fh, base, size, off, boff)
            }
        }
    };
    if size == 0 {
        return data_result(call(0, 0, 0));
    }
    if off < 0 {
        return fail(code::INVALID_VALUE);
    }
    if boff < 0 {
        return fail(code::INTERNAL_ERROR);
    }
    data_result(call(size, off, boff))
}

/// # Safety
/// `base + buf_offset` names `size` writable bytes (device or host memory).
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileRead(
    fh: *mut c_void,
    base: *mut c_void,
    size: usize,
    file_offset: i64,
    buf_offset: i64,
) -> isize {
    boundary(
        || fail(code::INTERNAL_ERROR),
        || {
            // SAFETY: the caller's contract.
            unsafe { transfer(false, fh, base, size, file_offset, buf_offset) }
        },
    )
}

/// # Safety
/// `base + buf_offset` names `size` readable bytes (device or host memory).
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileWrite(
    fh: *mut c_void,
    base: *const c_void,
    size: usize,
    file_offset: i64,
    buf_offset: i64,
) -> isize {
    boundary(
        || fail(code::INTERNAL_ERROR),
        || {
            // SAFETY: the caller's contract (a write only reads the buffer).
            unsafe { transfer(true, fh, base.cast_mut(), size, file_offset, buf_offset) }
        },
    )
}

/// The entries of a vectored call, checked before anything moves (as `preadv`/`pwritev`
/// check theirs): every entry with bytes needs a base, and the lengths must add up to a count
/// the return value can hold. `None` refuses the call (`EINVAL`).
///
/// # Safety
/// `iov` is valid for `iovcnt` entries (or NULL with `iovcnt` 0).
unsafe fn entries(iov: *const CUfileIOVec_t, iovcnt: usize) -> Option<Vec<CUfileIOVec_t>> {
    if iovcnt == 0 {
        return Some(Vec::new());
    }
    if iov.is_null() {
        return None;
    }
    // SAFETY: `iovcnt` readable entries per the contract.
    let all = unsafe { std::slice::from_raw_parts(iov, iovcnt) };
    let mut total: usize = 0;
    for v in all {
        if v.len > 0 && v.base.is_null() {
            return None;
        }
        total = total
            .checked_add(v.len)
            .filter(|&t| t <= isize::MAX as usize)?;
    }
    Some(all.iter().copied().filter(|v| v.len > 0).collect())
}

/// The vectored calls: one contiguous file range, the buffers in turn. Every entry is checked
/// first, so a refused call moves nothing; once bytes have moved, a failing entry ends the call
/// with the count moved so far (a write's prefix reached the file, a read's the buffers), as
/// `pwritev`/`preadv` report; -1 only when nothing moved. A read stops at EOF, a write at a
/// short entry.
///
/// # Safety
/// `iov` is valid for `iovcnt` entries, each naming memory valid for its direction.
unsafe fn vectored(
    write: bool,
    fh: *mut c_void,
    iov: *const CUfileIOVec_t,
    iovcnt: usize,
    file_offset: i64,
) -> isize {
    if fh.is_null() {
        return fail(libc::EINVAL);
    }
    // SAFETY: the caller's contract.
    let Some(list) = (unsafe { entries(iov, iovcnt) }) else {
        return fail(libc::EINVAL);
    };
    if file_offset < 0 {
        return fail(code::INVALID_VALUE);
    }
    let e = match engine_or_fail() {
        Ok(e) => e,
        Err(r) => return r,
    };
    let mut done: usize = 0;
    for v in list {
        let off = file_offset.saturating_add(done as i64);
        // SAFETY: the entry names `len` bytes valid for this direction.
        let r = unsafe {
            if write {
                e.write(fh, v.base, v.len, off, 0)
            } else {
                e.read(fh, v.base, v.len, off, 0)
            }
        };
        if r < 0 {
            return if done > 0 {
                done as isize
            } else {
                data_result(r)
            };
        }
        done += r as usize;
        if (r as usize) < v.len {
            break; // end of file, or a write that stopped part-way
        }
    }
    done as isize
}

/// # Safety
/// As [`vectored`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileReadv(
    fh: *mut c_void,
    iov: *const CUfileIOVec_t,
    iovcnt: usize,
    file_offset: i64,
    _flags: c_uint,
) -> isize {
    boundary(
        || fail(code::INTERNAL_ERROR),
        || {
            // SAFETY: forwarded contract.
            let r = unsafe { vectored(false, fh, iov, iovcnt, file_offset) };
            crate::window::count_vectored(false, r);
            r
        },
    )
}

/// # Safety
/// As [`vectored`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileWritev(
    fh: *mut c_void,
    iov: *const CUfileIOVec_t,
    iovcnt: usize,
    file_offset: i64,
    _flags: c_uint,
) -> isize {
    boundary(
        || fail(code::INTERNAL_ERROR),
        || {
            // SAFETY: forwarded contract.
            let r = unsafe { vectored(true, fh, iov, iovcnt, file_offset) };
            crate::window::count_vectored(true, r);
            r
        },
    )
}

// ---- batch -----------------------------------------------------------------------------

/// # Safety
/// `batch_idp` is NULL or valid for a write.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileBatchIOSetUp(
    batch_idp: *mut *mut c_void,
    nr: c_uint,
) -> CUfileError_t {
    boundary_op(|| {
        if batch_idp.is_null() || nr == 0 {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = ensure_open()?;
        // SAFETY: non-NULL and writable per the C contract.
        unsafe { e.batch_setup(batch_idp, nr) }.map_err(cu)
    })
}

/// Every refusal of a submission is cuFile's "batch submit internal error"; nothing runs.
///
/// # Safety
/// `iocbp` is NULL or valid for reads of `nr` entries.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileBatchIOSubmit(
    batch_idp: *mut c_void,
    nr: c_uint,
    iocbp: *mut CUfileIOParams_t,
    flags: c_uint,
) -> CUfileError_t {
    const _: () = assert!(std::mem::size_of::<CUfileIOParams_t>() == HIP_IO_PARAMS_SIZE);
    boundary_op(|| {
        if nr == 0 || iocbp.is_null() {
            return Err(CUfileError_t::op(code::INTERNAL_BATCH_SUBMIT_ERROR));
        }
        let e = eng()?;
        // SAFETY: the caller's contract; the entries have hipFile's layout.
        unsafe { e.batch_submit(batch_idp, nr, iocbp.cast(), flags) }.map_err(|h| match h.err {
            HIP_DRIVER_ERROR => cu(h),
            _ => CUfileError_t::op(code::INTERNAL_BATCH_SUBMIT_ERROR),
        })
    })
}

/// # Safety
/// `nr` is NULL or valid for reads and writes; `iocbp` for writes of `*nr` events; `timeout`
/// is NULL or readable.
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileBatchIOGetStatus(
    batch_idp: *mut c_void,
    min_nr: c_uint,
    nr: *mut c_uint,
    iocbp: *mut CUfileIOEvents_t,
    timeout: *mut libc::timespec,
) -> CUfileError_t {
    const _: () = assert!(std::mem::size_of::<CUfileIOEvents_t>() == HIP_IO_EVENTS_SIZE);
    boundary_op(|| {
        if nr.is_null() || iocbp.is_null() {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        // SAFETY: non-NULL, readable per the C contract.
        if min_nr > unsafe { nr.read() } {
            return Err(CUfileError_t::op(code::INVALID_VALUE));
        }
        let e = eng()?;
        // SAFETY: the caller's contract; the events have hipFile's layout.
        unsafe { e.batch_get_status(batch_idp, min_nr, nr, iocbp.cast(), timeout.cast()) }.map_err(
            |h| match h.err {
                HIP_DRIVER_ERROR => cu(h),
                _ => CUfileError_t::op(code::INTERNAL_BATCH_GETSTATUS_ERROR),
            },
        )
    })
}

/// A NULL or unknown batch is not an error (as NVIDIA's).
#[no_mangle]
pub(crate) extern "C" fn cuFileBatchIOCancel(batch_idp: *mut c_void) -> CUfileError_t {
    boundary_op(|| {
        if batch_idp.is_null() {
            return Ok(());
        }
        match eng()?.batch_cancel(batch_idp) {
            Err(h) if h.err == HIP_INVALID_VALUE => Ok(()),
            r => r.map_err(cu),
        }
    })
}

#[no_mangle]
pub(crate) extern "C" fn cuFileBatchIODestroy(batch_idp: *mut c_void) {
    boundary(
        || (),
        || {
            if let Some(e) = crate::engine::engine() {
                e.batch_destroy(batch_idp);
            }
        },
    )
}

// ---- streams ---------------------------------------------------------------------------

#[no_mangle]
pub(crate) extern "C" fn cuFileStreamRegister(stream: *mut c_void, flags: c_uint) -> CUfileError_t {
    boundary_op(|| ensure_open()?.stream_register(stream, flags).map_err(cu))
}

#[no_mangle]
pub(crate) extern "C" fn cuFileStreamDeregister(stream: *mut c_void) -> CUfileError_t {
    boundary_op(|| eng()?.stream_deregister(stream).map_err(cu))
}

/// Both directions go to the engine's stream-ordered I/O (`hipFileReadAsync` /
/// `hipFileWriteAsync`): enqueued on `stream`, run in stream order, the result in `*bytes_p`;
/// on the NULL stream the call waits for it.
///
/// # Safety
/// As `cuFileReadAsync`: the pointers stay valid until the operation has run on `stream`.
#[allow(clippy::too_many_arguments)]
unsafe fn async_io(
    write: bool,
    fh: *mut c_void,
    base: *mut c_void,
    size_p: *mut usize,
    file_offset_p: *mut i64,
    buf_offset_p: *mut i64,
    bytes_p: *mut isize,
    stream: *mut c_void,
) -> Result<(), CUfileError_t> {
    if size_p.is_null() || bytes_p.is_null() {
        return Err(CUfileError_t::op(code::INVALID_VALUE));
    }
    let e = ensure_open()?;
    let f = e.async_fn(write);
    // SAFETY: the caller's contract, forwarded unchanged.
    let r = unsafe {
        f(
            fh,
            base,
            size_p,
            file_offset_p,
            buf_offset_p,
            bytes_p,
            stream,
        )
    };
    if r.err != 0 {
        return Err(cu(r));
    }
    // With a NULL stream the call is synchronous (cuFile's documentation): the operation has
    // run, and `*bytes_p` holds its result, when the call returns.
    if stream.is_null() {
        crate::gpu::synchronize_default_stream()?;
    }
    Ok(())
}

/// # Safety
/// See [`async_io`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileReadAsync(
    fh: *mut c_void,
    base: *mut c_void,
    size_p: *mut usize,
    file_offset_p: *mut i64,
    buf_offset_p: *mut i64,
    bytes_read_p: *mut isize,
    stream: *mut c_void,
) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe {
        async_io(
            false,
            fh,
            base,
            size_p,
            file_offset_p,
            buf_offset_p,
            bytes_read_p,
            stream,
        )
    })
}

/// # Safety
/// See [`async_io`].
#[no_mangle]
pub(crate) unsafe extern "C" fn cuFileWriteAsync(
    fh: *mut c_void,
    base: *mut c_void,
    size_p: *mut usize,
    file_offset_p: *mut i64,
    buf_offset_p: *mut i64,
    bytes_written_p: *mut isize,
    stream: *mut c_void,
) -> CUfileError_t {
    // SAFETY: forwarded contract.
    boundary_op(|| unsafe {
        async_io(
            true,
            fh,
            base,
            size_p,
            file_offset_p,
            buf_offset_p,
            bytes_written_p,
            stream,
        )
    })
}
