//! Batch I/O, as AMD's next release defines it: argument checks of the C calls and
//! the conversion of completions into `hipFileIOEvents_t`; the contexts live in
//! [`crate::driver::batch`].
#![allow(non_snake_case)]

use std::ffi::{c_uint, c_void};
use std::time::Duration;

use super::abi::*;
use super::{boundary, boundary_op, error, Out};
use crate::driver::batch::{BatchToken, Mode, OpParams, OpStatus};
use crate::driver::driver;
use crate::driver::files::FileToken;
use crate::error::Error;
use crate::vocab::{Address, Direction};

/// `hipFileBatchIOSetUp`: a context for up to `max_nr` outstanding operations (1 to
/// `hipFileParamPropertiesIOBatchsize`, at most 128); works while the driver is closed and does
/// not open it. `batch_idp == NULL` or `max_nr` out of range → `hipFileInvalidValue`, and
/// `*batch_idp` is left as it was.
///
/// # Safety
/// `batch_idp` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileBatchIOSetUp(
    batch_idp: *mut hipFileBatchHandle_t,
    max_nr: c_uint,
) -> hipFileError_t {
    boundary_op(|| {
        // SAFETY: NULL or writable, per the C contract.
        let out = unsafe { Out::new(batch_idp, "NULL batch handle pointer") }?;
        let token = driver().batch_setup(max_nr)?;
        out.write(token.c_handle() as hipFileBatchHandle_t);
        Ok(())
    })
}

/// `hipFileBatchIOSubmit`: queues `nr` operations, all or none. `flags` is ignored. Order of
/// checks (upstream's, at its newest level): `iocbp == NULL` with `nr > 0` and an unknown
/// handle → `hipFileInvalidValue`; `nr == 0` → `hipFileInvalidValue`; more entries than the
/// context has room for → `hipFileBatchFull`; then each entry in turn (closed driver,
/// unregistered file handle and non-device memory → `hipFileInternalError`; bad offsets, size,
/// opcode or mode → `hipFileInvalidValue`). Exactly `nr` entries are read, and only once `nr`
/// is known to fit the context (at most 128), so a wrong `nr` never reads past a short array
/// of a context that could not take it, nor allocates in proportion to it.
///
/// # Safety
/// `iocbp` is NULL or valid for reads of `nr` entries.
#[no_mangle]
pub unsafe extern "C" fn hipFileBatchIOSubmit(
    batch_idp: hipFileBatchHandle_t,
    nr: c_uint,
    iocbp: *mut hipFileIOParams_t,
    _flags: c_uint,
) -> hipFileError_t {
    boundary_op(|| {
        if iocbp.is_null() && nr > 0 {
            return Err(Error::InvalidValue("NULL operation array"));
        }
        let nr = nr as usize;
        let ctx = driver().batch_admit(BatchToken::from_c_handle(batch_idp as usize), nr)?;
        // SAFETY: non-NULL here; the caller guarantees `nr` readable entries, and `nr` is at
        // most the context's capacity (128). Copied at once: the caller may reuse its array as
        // soon as the call returns.
        let params = unsafe { std::slice::from_raw_parts(iocbp, nr) };
        let entries: Vec<OpParams> = params.iter().map(op_params).collect();
        driver().batch_submit(&ctx, &entries)
    })
}

fn op_params(p: &hipFileIOParams_t) -> OpParams {
    // SAFETY: `batch` is the union's only member.
    let b = unsafe { p.u.batch };
    OpParams {
        mode: (p.mode == hipFileBatch).then_some(Mode::Batch),
        base: Address::of(b.devPtr_base),
        file_offset: u64::try_from(b.file_offset).ok(),
        buffer_offset: usize::try_from(b.devPtr_offset).ok(),
        size: b.size,
        file: FileToken::from_c_handle(p.fh as usize),
        dir: match p.opcode {
            o if o == hipFileBatchRead => Some(Direction::Read),
            o if o == hipFileBatchWrite => Some(Direction::Write),
            _ => None,
        },
        cookie: p.cookie as usize,
    }
}

/// `hipFileBatchIOGetStatus`: waits until `min_nr` operations (capped at the number
/// outstanding) have ended, all have, or `timeout` passed (NULL: no limit; `{0, 0}`: no
/// wait), then reports up to `*nr` ended operations, each exactly once, and sets `*nr` to
/// their number. Unknown handle, `nr == NULL`, `*nr == 0`, `iocbp == NULL`, `min_nr > *nr` or a
/// malformed timeout → `hipFileInvalidValue`.
///
/// # Safety
/// `nr` is NULL or valid for reads and writes; `iocbp` is NULL or valid for writes of `*nr`
/// entries; `timeout` is NULL or valid for reads.
#[no_mangle]
pub unsafe extern "C" fn hipFileBatchIOGetStatus(
    batch_idp: hipFileBatchHandle_t,
    min_nr: c_uint,
    nr: *mut c_uint,
    iocbp: *mut hipFileIOEvents_t,
    timeout: *mut libc::timespec,
) -> hipFileError_t {
    boundary_op(|| {
        // Upstream's order: the handle first.
        let ctx = driver().batch_context(BatchToken::from_c_handle(batch_idp as usize))?;
        if nr.is_null() {
            return Err(Error::InvalidValue("NULL nr"));
        }
        // SAFETY: checked non-NULL; the caller guarantees it.
        let capacity = unsafe { *nr };
        if capacity == 0 || iocbp.is_null() || min_nr > capacity {
            return Err(Error::InvalidValue("bad nr, events or min_nr"));
        }
        let timeout = if timeout.is_null() {
            None
        } else {
            // SAFETY: checked non-NULL; the caller guarantees it is readable.
            let t = unsafe { *timeout };
            if t.tv_sec < 0 || t.tv_nsec < 0 || t.tv_nsec >= 1_000_000_000 {
                return Err(Error::InvalidValue("malformed timeout"));
            }
            Some(Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
        };
        // SAFETY: as above.
        unsafe { *nr = 0 };
        let done = ctx.reap(min_nr as usize, capacity as usize, timeout);
        for (i, c) in done.iter().enumerate() {
            let (status, ret) = match c.status {
                OpStatus::Complete(n) => (hipFileComplete, n),
                OpStatus::Failed(e) => (hipFileFailed, error::batch_ret(&e) as usize),
                OpStatus::Canceled => (hipFileCanceled, 0),
                OpStatus::Pending | OpStatus::Running => {
                    unreachable!("only ended operations are reaped")
                }
            };
            // SAFETY: i < capacity entries, which the caller guarantees writable.
            unsafe {
                iocbp.add(i).write(hipFileIOEvents_t {
                    cookie: c.cookie as *mut c_void,
                    status,
                    ret,
                })
            };
        }
        // SAFETY: as above.
        unsafe { *nr = done.len() as c_uint };
        Ok(())
    })
}

/// `hipFileBatchIOCancel`: operations not started yet end as `hipFileCanceled` (reported by
/// a later `GetStatus`); running ones finish. Unknown handle → `hipFileInvalidValue`.
#[no_mangle]
pub extern "C" fn hipFileBatchIOCancel(batch_idp: hipFileBatchHandle_t) -> hipFileError_t {
    boundary_op(|| driver().batch_cancel(BatchToken::from_c_handle(batch_idp as usize)))
}

/// `hipFileBatchIODestroy`: the handle goes stale, operations not started are cancelled and
/// running ones waited for. Unknown handles are ignored.
#[no_mangle]
pub extern "C" fn hipFileBatchIODestroy(batch_idp: hipFileBatchHandle_t) {
    boundary((), || {
        driver().batch_destroy(BatchToken::from_c_handle(batch_idp as usize))
    })
}
