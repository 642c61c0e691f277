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

use crate::driver::buffers::BufferView;
use crate::driver::config::Config;
use crate::driver::files::File;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::runtime::{Direction, Runtime};

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
    pub buf: &'a BufferView,
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
    /// The GPU runtime.
    pub rt: &'static dyn Runtime,
    /// The configuration snapshot.
    pub config: &'a Config,
    /// The engine of this driver open.
    pub engine: &'a Engine,
}

/// The `O_DIRECT` descriptor the engine may use for cold reads and aligned writes of this
/// request (`HIPFILE_DIRECT_IO`, default on), or `None`.
pub fn direct_fd(ctx: &Context<'_>, req: &Request<'_>) -> Option<crate::engine::DirectFd> {
    if !ctx.config.direct_io {
        return None;
    }
    let fd = req.file.unbuffered_fd()?;
    let offset_align = u64::from(req.file.dio_offset_align());
    let mem_align = u64::from(req.file.dio_mem_align());
    if offset_align == 0 || mem_align == 0 {
        return None;
    }
    Some(crate::engine::DirectFd {
        fd,
        offset_align,
        mem_align,
    })
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
/// the fastpath wins whenever it accepts. Refusals are counted when they mattered: the
/// fastpath's when the fallback serves instead, every candidate's when none accepts.
pub fn select(ctx: &Context<'_>, req: &Request<'_>) -> Result<BackendKind, Refusals> {
    use crate::stats::recorder::refused;
    if req.buf.memory.is_host() {
        return match host::score(ctx, req) {
            Ok(_) => Ok(BackendKind::Host),
            Err(r) => {
                refused(BackendKind::Host, r);
                Err(Refusals([None, None, Some((BackendKind::Host, r))]))
            }
        };
    }
    let fastpath = match fastpath::score(ctx, req) {
        Ok(_) => return Ok(BackendKind::Fastpath),
        Err(r) => r,
    };
    refused(BackendKind::Fastpath, fastpath);
    match fallback::score(ctx, req) {
        Ok(_) => {
            log_fallback_reason(fastpath);
            Ok(BackendKind::Fallback)
        }
        Err(r) => {
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
fn log_fallback_reason(r: Refusal) {
    use std::sync::atomic::{AtomicBool, Ordering};
    const N: usize = crate::stats::layout::REFUSALS.len();
    static LOGGED: [AtomicBool; N] = [const { AtomicBool::new(false) }; N];
    let slot = &LOGGED[crate::stats::layout::refusal_slot(r)];
    if !slot.load(Ordering::Relaxed) && !slot.swap(true, Ordering::Relaxed) {
        tracing::info!(target: "hipfile", "fastpath not used: {}; the fallback serves such requests (logged once)", r.describe());
    }
}

/// Whether offset, size and address meet the fastpath's alignment (behaviour §C.2 rules 6–7),
/// for the statistics' unaligned counters.
fn dio_aligned(req: &Request<'_>) -> bool {
    let (off, mem) = (req.file.dio_offset_align(), req.file.dio_mem_align());
    let a = fastpath::offset_alignment(off);
    let m = fastpath::offset_alignment(mem);
    off != 0
        && mem != 0
        && req.file_offset % a == 0
        && req.size as u64 % a == 0
        && req.mem_addr() as u64 % m == 0
}

/// Run `io` on `kind` and record its outcome in the statistics.
fn timed(
    kind: BackendKind,
    req: &Request<'_>,
    io: impl FnOnce() -> Result<usize>,
) -> Result<usize> {
    let start = crate::sys::monotonic_ns();
    let r = io();
    match &r {
        Ok(n) => crate::stats::recorder::io_done(
            req.dir,
            kind,
            req.buf.device,
            *n as u64,
            std::time::Duration::from_nanos(crate::sys::monotonic_ns().saturating_sub(start)),
            kind == BackendKind::Fastpath || dio_aligned(req),
        ),
        Err(_) => crate::stats::recorder::io_failed(req.dir, kind, req.buf.device, req.size as u64),
    }
    r
}

/// Choose a backend and run the request on it, retrying fastpath failures on the fallback.
pub fn run(ctx: &Context<'_>, req: &Request<'_>) -> Result<usize> {
    let kind = match select(ctx, req) {
        Ok(k) => k,
        Err(refusals) => {
            tracing::debug!(target: "hipfile", "no backend accepts the request: {refusals:?}");
            return Err(Error::NoBackend("every backend refused the request"));
        }
    };
    req.check_bounds()?;
    match kind {
        BackendKind::Fastpath => match timed(kind, req, || fastpath::io(ctx, req)) {
            Err(Error::Os(e)) if e == libc::ENODEV || e == libc::EREMOTEIO => {
                if fallback::score(ctx, req).is_err() {
                    return Err(Error::Os(e));
                }
                tracing::debug!(target: "hipfile", "fastpath failed with errno {e}; retrying on the fallback");
                crate::stats::recorder::fallback_retry();
                timed(BackendKind::Fallback, req, || fallback::io(ctx, req))
            }
            other => other,
        },
        BackendKind::Fallback => timed(kind, req, || fallback::io(ctx, req)),
        BackendKind::Host => timed(kind, req, || host::io(ctx, req)),
    }
}
