//! Backends and their selection (behaviour §C.1–C.2, contract §4).
//!
//! Every backend scores a request: a negative score refuses it (with a [`Refusal`] saying
//! why), the strictly highest non-negative score wins and ties keep the earlier backend in
//! the order [Fallback, Fastpath, Host]. A fastpath failure with `ENODEV` or `EREMOTEIO` is
//! retried on the fallback when the fallback accepts the request.
#![deny(unsafe_code)]

pub mod fallback;
pub mod fastpath;
pub mod host;

use crate::driver::buffers::Buffer;
use crate::driver::config::Config;
use crate::driver::files::File;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::runtime::Direction;
use crate::stats::recorder::{self, IoCall};

/// Largest transfer of one call: `INT_MAX & ~(page_size - 1)` (the kernel's `MAX_RW_COUNT`).
pub const MAX_RW: usize = 0x7fff_f000;

/// The backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// GPU-direct storage (AMD `hipAmdFileRead/Write`).
    Fastpath,
    /// POSIX I/O through pinned bounce buffers (compat mode).
    Fallback,
    /// POSIX I/O straight into host memory.
    Host,
}

impl BackendKind {
    /// Name for logs and statistics.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Fastpath => "fastpath",
            BackendKind::Fallback => "fallback",
            BackendKind::Host => "host",
        }
    }
}

/// Why a backend refused a request (recorded so nobody has to guess why I/O was slow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// The runtime has no GPU-direct entry points.
    NoFastpathEntryPoints,
    /// `HIPFILE_FORCE_COMPAT_MODE` turned the fastpath off.
    CompatForced,
    /// The file has no `O_DIRECT` descriptor (its file system refused `O_DIRECT`).
    NoODirect,
    /// The file is neither a block device nor a regular file on ext4 `data=ordered` or xfs.
    FileSystem,
    /// The file offset is not aligned.
    UnalignedOffset,
    /// The size is not aligned.
    UnalignedSize,
    /// The memory address is not aligned.
    UnalignedMemory,
    /// The buffer is not device memory.
    NotDeviceMemory,
    /// The buffer is not host memory.
    NotHostMemory,
    /// Compat mode is not allowed.
    CompatDisabled,
    /// `HIPFILE_HOST=false`.
    HostDisabled,
}

impl Refusal {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            Refusal::NoFastpathEntryPoints => "the GPU runtime has no GPU-direct file entry points",
            Refusal::CompatForced => "compat mode is forced",
            Refusal::NoODirect => "the file system does not support O_DIRECT",
            Refusal::FileSystem => "the file is not on ext4 (data=ordered), xfs or a block device",
            Refusal::UnalignedOffset => "the file offset is not aligned for direct I/O",
            Refusal::UnalignedSize => "the size is not aligned for direct I/O",
            Refusal::UnalignedMemory => "the memory address is not aligned for direct I/O",
            Refusal::NotDeviceMemory => "the buffer is not device memory",
            Refusal::NotHostMemory => "the buffer is not host memory",
            Refusal::CompatDisabled => "compat mode is not allowed",
            Refusal::HostDisabled => "host I/O is disabled (HIPFILE_HOST=false)",
        }
    }
}

/// A validated-enough request: offsets are non-negative, the size is clamped to [`MAX_RW`].
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

impl Request<'_> {
    /// Address of the first byte of memory.
    pub fn mem_addr(&self) -> usize {
        self.buf.base.wrapping_add(self.buffer_offset)
    }

    /// Bounds of behaviour §B.8 step 5: `buffer_offset < length` (strictly) and
    /// `size <= length - buffer_offset`.
    pub fn check_bounds(&self) -> Result<()> {
        if self.buffer_offset >= self.buf.length || self.size > self.buf.length - self.buffer_offset
        {
            return Err(Error::InvalidValue(
                "the request does not fit in the buffer",
            ));
        }
        Ok(())
    }
}

/// What a backend needs besides the request.
pub struct Context<'a> {
    /// The configuration snapshot.
    pub config: &'a Config,
    /// The engine of this driver open.
    pub engine: &'a Engine,
    /// [`fastpath::gate`] for this runtime and configuration.
    pub fastpath_gate: Option<Refusal>,
}

/// The `O_DIRECT` descriptor the engine may use for cold reads and aligned writes of this
/// request (`HIPFILE_DIRECT_IO`, default on), or `None` (also for requests too small for any
/// chunk of them to go direct).
#[inline(always)]
pub fn direct_fd(ctx: &Context<'_>, req: &Request<'_>) -> Option<crate::engine::DirectFd> {
    if ctx.config.direct_io && req.size >= crate::engine::DIRECT_MIN {
        req.file.direct()
    } else {
        None
    }
}

/// Why each backend that refused a request refused it (no allocation: selection runs on
/// every call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals([Option<(BackendKind, Refusal)>; 3]);

impl Refusals {
    /// The refusals recorded.
    pub fn iter(&self) -> impl Iterator<Item = (BackendKind, Refusal)> + '_ {
        self.0.iter().flatten().copied()
    }
}

/// The winning backend, or the refusals of every candidate.
///
/// Behaviour §C.1 scores every backend and keeps the strictly highest non-negative score
/// (Fastpath 100 > Host 1 > Fallback 0). Host memory can only go to the host backend and
/// device memory never does, so the candidates are decided by the memory kind first; then
/// the fastpath wins whenever it accepts. Refusals are counted when they mattered: every
/// candidate's when none accepts (here), the fastpath's when the fallback serves instead
/// (returned as the second value, for [`run`] to record with the I/O).
#[inline(always)]
pub fn select(
    ctx: &Context<'_>,
    req: &Request<'_>,
) -> Result<(BackendKind, Option<Refusal>), Refusals> {
    use crate::stats::recorder::refused;
    if req.buf.memory.is_host() {
        return match host::score(ctx, req) {
            Ok(_) => Ok((BackendKind::Host, None)),
            Err(r) => {
                refused(BackendKind::Host, r);
                Err(Refusals([None, None, Some((BackendKind::Host, r))]))
            }
        };
    }
    let fastpath = match fastpath::score(ctx, req) {
        Ok(_) => return Ok((BackendKind::Fastpath, None)),
        Err(r) => r,
    };
    match fallback::score(ctx, req) {
        Ok(_) => {
            log_fallback_reason(fastpath);
            Ok((BackendKind::Fallback, Some(fastpath)))
        }
        Err(r) => {
            refused(BackendKind::Fastpath, fastpath);
            refused(BackendKind::Fallback, r);
            Err(Refusals([
                Some((BackendKind::Fallback, r)),
                Some((BackendKind::Fastpath, fastpath)),
                None,
            ]))
        }
    }
}

/// One log line per distinct reason the fastpath lost a request to the fallback, the first
/// time it happens in the process: enough to tell why I/O is slow without a line per request.
#[inline(always)]
fn log_fallback_reason(r: Refusal) {
    use std::sync::atomic::{AtomicBool, Ordering};
    const N: usize = crate::stats::layout::REFUSALS.len();
    static LOGGED: [AtomicBool; N] = [const { AtomicBool::new(false) }; N];
    let slot = &LOGGED[crate::stats::layout::refusal_slot(r)];
    if !slot.load(Ordering::Relaxed) && !slot.swap(true, Ordering::Relaxed) {
        log_fallback_reason_once(r);
    }
}

#[cold]
fn log_fallback_reason_once(r: Refusal) {
    tracing::info!(target: "hipfile", "fastpath not used: {}; the fallback serves such requests (logged once)", r.describe());
}

/// Whether offset, size and address meet the fastpath's alignment (behaviour §C.2 rules 6–7),
/// for the statistics' unaligned counters.
#[inline(always)]
fn dio_aligned(req: &Request<'_>) -> bool {
    req.file
        .fastpath_aligned(req.file_offset, req.size as u64, req.mem_addr() as u64)
}

/// The statistics record of one call of `kind` on `req`, started now.
#[inline(always)]
fn begin(kind: BackendKind, req: &Request<'_>, declined: Option<Refusal>) -> IoCall {
    IoCall {
        dir: req.dir,
        backend: kind,
        device: req.buf.device,
        requested: req.size as u64,
        aligned: kind == BackendKind::Fastpath || dio_aligned(req),
        declined,
        recording: recorder::start(),
    }
}

/// Record the outcome of `call` and pass it on.
#[inline(always)]
fn end(call: IoCall, r: Result<usize>) -> Result<usize> {
    recorder::io_call(call, r.as_ref().ok().map(|&n| n as u64));
    r
}

/// Choose a backend and run the request on it, retrying fastpath failures on the fallback.
/// Inlined into the driver's I/O entry, so that a small request is one flat function up to
/// its system and runtime calls (target T9).
#[inline(always)]
pub fn run(ctx: &Context<'_>, req: &Request<'_>) -> Result<usize> {
    if req.size == 0 {
        // Valid arguments and nothing to move: 0, whatever a backend would say about the
        // alignment, and no fdatasync for a write (upstream's newest rule).
        req.check_bounds()?;
        return Ok(0);
    }
    let (kind, declined) = match select(ctx, req) {
        Ok(k) => k,
        Err(refusals) => {
            tracing::debug!(target: "hipfile", "no backend accepts the request: {refusals:?}");
            return Err(Error::NoBackend("every backend refused the request"));
        }
    };
    if let Err(e) = req.check_bounds() {
        if let Some(r) = declined {
            recorder::refused(BackendKind::Fastpath, r);
        }
        return Err(e);
    }
    match kind {
        BackendKind::Fastpath => {
            let call = begin(kind, req, None);
            match end(call, fastpath::io(ctx, req)) {
                Err(Error::Os(e)) if e == libc::ENODEV || e == libc::EREMOTEIO => {
                    if fallback::score(ctx, req).is_err() {
                        return Err(Error::Os(e));
                    }
                    tracing::debug!(target: "hipfile", "fastpath failed with errno {e}; retrying on the fallback");
                    recorder::fallback_retry();
                    let call = begin(BackendKind::Fallback, req, None);
                    end(call, fallback::io(ctx, req))
                }
                other => other,
            }
        }
        BackendKind::Fallback => {
            let call = begin(kind, req, declined);
            end(call, fallback::io(ctx, req))
        }
        BackendKind::Host => {
            let call = begin(kind, req, None);
            end(call, host::io(ctx, req))
        }
    }
}
