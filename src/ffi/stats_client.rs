//! The process-statistics client API used by `ais-stats` and `hipfile stats`
//! (`include/hipfile-stats.h`).
//!
//! A `hipFileStatsContext_t *` is a `Box<StatsContext>` turned into a raw pointer: created by
//! `hipFileStatsCreateContext`, freed by `hipFileStatsCloseContext`. Like upstream, the
//! functions trust that a non-NULL context came from `hipFileStatsCreateContext` and was not
//! closed. A panic becomes `hipFileStatsTargetProcessNotAccessible`
//! (`hipFileStatsReportGenerationFailed` for the report).
#![allow(non_snake_case)]

use std::ffi::c_int;
use std::io;
use std::time::Duration;

use super::abi::*;
use super::boundary;
use crate::config::env::DEFAULT_STATS_CONNECT_TIMEOUT_S;
use crate::stats::client::{Connection, OpenError, Target};

/// What a context holds: the watched target and, once connected, its statistics block.
struct StatsContext {
    target: Target,
    connection: Option<Connection>,
}

/// # Safety
/// `context` is NULL or a live pointer from [`hipFileStatsCreateContext`].
unsafe fn context_ref<'a>(context: *const hipFileStatsContext_t) -> Option<&'a StatsContext> {
    // SAFETY: per the contract, a non-NULL context points at a live StatsContext.
    unsafe { context.cast::<StatsContext>().as_ref() }
}

/// `hipFileStatsCreateContext`: watches process `target_pid` and stores a new context in
/// `*context`. NULL `context` → `hipFileStatsInvalidArgument`; `target_pid <= 0` → `*context`
/// = NULL and `hipFileStatsInvalidArgument`; `pidfd_open` fails → `*context` = NULL and
/// `hipFileStatsTargetProcessNotFound`, or `hipFileStatsTargetProcessNotAccessible` when the
/// kernel lacks it (`ENOSYS`, as \[D\]) or the caller is out of descriptors or memory (`errno`
/// then says which: `EMFILE`, `ENFILE`, `ENOMEM`).
///
/// # Safety
/// `context` is NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsCreateContext(
    context: *mut *mut hipFileStatsContext_t,
    target_pid: c_int,
) -> hipFileStatsError_t {
    boundary(hipFileStatsTargetProcessNotAccessible, || {
        if context.is_null() {
            return hipFileStatsInvalidArgument;
        }
        // As upstream: every failure after the NULL check clears `*context`.
        let mut errno = None;
        let (out, code) = match Target::open(target_pid) {
            Ok(target) => {
                let ctx = Box::new(StatsContext {
                    target,
                    connection: None,
                });
                (
                    Box::into_raw(ctx).cast::<hipFileStatsContext_t>(),
                    hipFileStatsSuccess,
                )
            }
            Err(OpenError::InvalidPid) => (std::ptr::null_mut(), hipFileStatsInvalidArgument),
            Err(OpenError::NotFound(_)) => {
                (std::ptr::null_mut(), hipFileStatsTargetProcessNotFound)
            }
            Err(OpenError::Unsupported(_)) => {
                (std::ptr::null_mut(), hipFileStatsTargetProcessNotAccessible)
            }
            // Out of descriptors (or memory): the target may exist but cannot be watched;
            // errno keeps the reason (EMFILE, ENFILE, ENOMEM).
            Err(OpenError::NoResources(e)) => {
                errno = e.raw_os_error();
                (std::ptr::null_mut(), hipFileStatsTargetProcessNotAccessible)
            }
        };
        // SAFETY: non-NULL and valid for writes per the C contract.
        unsafe { context.write(out) };
        if let Some(e) = errno {
            crate::sys::set_errno(e);
        }
        code
    })
}

/// `hipFileStatsCloseContext`: frees the context (and its descriptors). NULL is ignored.
///
/// # Safety
/// `context` is NULL or a live pointer from [`hipFileStatsCreateContext`], not used again.
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsCloseContext(context: *mut hipFileStatsContext_t) {
    boundary((), || {
        if !context.is_null() {
            // SAFETY: per the contract it came from Box::into_raw in CreateContext and is
            // freed exactly once, here.
            drop(unsafe { Box::from_raw(context.cast::<StatsContext>()) });
        }
    })
}

/// `hipFileStatsConnectToTargetProcess`: connects to the target's statistics socket,
/// retrying (0, 1, 2, ... ms apart, at most 100 ms) until it answers, exits, or
/// `HIPFILE_STATS_CONNECT_TIMEOUT` seconds (default 30; 0: no limit, as upstream) have passed,
/// and receives its block. NULL → `hipFileStatsInvalidArgument`; no block →
/// `hipFileStatsTargetProcessNotAccessible`, with `errno` saying why when it can:
/// `ETIMEDOUT` (a live process that did not serve in time: pid 1, a program without the
/// library), `EACCES` (the target refused us, or its socket name is held by another process;
/// the log says which, at warn level), `ESRCH` (it exited without serving).
///
/// # Safety
/// `context` is NULL or a live pointer from [`hipFileStatsCreateContext`].
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsConnectToTargetProcess(
    context: *mut hipFileStatsContext_t,
) -> hipFileStatsError_t {
    boundary(hipFileStatsTargetProcessNotAccessible, || {
        // SAFETY: per the contract, NULL or a live context that C does not use concurrently.
        let Some(ctx) = (unsafe { context.cast::<StatsContext>().as_mut() }) else {
            return hipFileStatsInvalidArgument;
        };
        crate::log::init();
        let timeout = match crate::config::env()
            .stats_connect_timeout
            .unwrap_or(DEFAULT_STATS_CONNECT_TIMEOUT_S)
        {
            0 => None,
            s => Some(Duration::from_secs(u64::from(s))),
        };
        match ctx.target.connect_timeout(timeout) {
            Ok(conn) => {
                ctx.connection = Some(conn);
                hipFileStatsSuccess
            }
            Err(e) => {
                let pid = ctx.target.pid();
                let errno = match e.kind() {
                    io::ErrorKind::TimedOut => Some(libc::ETIMEDOUT),
                    io::ErrorKind::NotFound => Some(libc::ESRCH),
                    io::ErrorKind::PermissionDenied => Some(libc::EACCES),
                    _ => e.raw_os_error(),
                };
                // A refusal or a name held by another process is worth a line at the default
                // level (the caller has only the code); a target without a server is not.
                if errno == Some(libc::EACCES) {
                    tracing::warn!(target: "hipfile", "statistics of process {pid}: {e}");
                } else {
                    tracing::debug!(target: "hipfile", "statistics of process {pid}: {e}");
                }
                if let Some(errno) = errno {
                    crate::sys::set_errno(errno);
                }
                hipFileStatsTargetProcessNotAccessible
            }
        }
    })
}

/// `hipFileStatsPollTargetProcess`: `hipFileStatsSuccess` once the target has exited (with
/// `block`, waits for that), else `hipFileStatsTargetProcessNotAccessible`. NULL →
/// `hipFileStatsInvalidArgument`.
///
/// # Safety
/// `context` is NULL or a live pointer from [`hipFileStatsCreateContext`].
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsPollTargetProcess(
    context: *const hipFileStatsContext_t,
    block: bool,
) -> hipFileStatsError_t {
    boundary(hipFileStatsTargetProcessNotAccessible, || {
        // SAFETY: forwarded from this function's contract.
        let Some(ctx) = (unsafe { context_ref(context) }) else {
            return hipFileStatsInvalidArgument;
        };
        match ctx.target.has_exited(block) {
            Ok(true) => hipFileStatsSuccess,
            Ok(false) | Err(_) => hipFileStatsTargetProcessNotAccessible,
        }
    })
}

/// `hipFileStatsGenerateReport`: writes the text report of the target's block
/// to `fd`, all of it (`EINTR` retried). NULL context or `fd < 0` →
/// `hipFileStatsInvalidArgument`; not connected, an unreadable block or a failed write →
/// `hipFileStatsReportGenerationFailed` (a pipe without a reader: that, with `errno` `EPIPE`,
/// never `SIGPIPE`).
///
/// # Safety
/// `context` is NULL or a live pointer from [`hipFileStatsCreateContext`].
#[no_mangle]
pub unsafe extern "C" fn hipFileStatsGenerateReport(
    context: *const hipFileStatsContext_t,
    fd: c_int,
) -> hipFileStatsError_t {
    boundary(hipFileStatsReportGenerationFailed, || {
        // SAFETY: forwarded from this function's contract.
        let Some(ctx) = (unsafe { context_ref(context) }) else {
            return hipFileStatsInvalidArgument;
        };
        if fd < 0 {
            return hipFileStatsInvalidArgument;
        }
        let Some(conn) = &ctx.connection else {
            return hipFileStatsReportGenerationFailed;
        };
        match conn.write_report(fd) {
            Ok(()) => hipFileStatsSuccess,
            Err(e) => {
                tracing::debug!(target: "hipfile", "statistics report of process {}: {e}", ctx.target.pid());
                if let Some(code) = e.raw_os_error() {
                    crate::sys::set_errno(code);
                }
                hipFileStatsReportGenerationFailed
            }
        }
    })
}
