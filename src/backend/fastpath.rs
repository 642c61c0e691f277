//! The GPU-direct backend (behaviour §C.2, §C.4): the runtime's file entry points move data
//! between the `O_DIRECT` descriptor and device memory without a host copy.
#![deny(unsafe_code)]

use super::{Context, Request};
use crate::error::{Error, Result};
use crate::runtime::FastpathFault;
use crate::vocab::MemoryType;
use crate::vocab::Refusal;

/// Score 100 when every rule of behaviour §C.2 holds. The rules that depend only on the
/// runtime and the configuration come precomputed in `ctx.fastpath_gate`.
#[inline(always)]
pub fn score(ctx: &Context<'_>, req: &Request<'_>) -> Result<i32, Refusal> {
    if let Some(r) = ctx.fastpath_gate {
        return Err(r);
    }
    if req.file.unbuffered_fd().is_none() {
        return Err(Refusal::NoODirect);
    }
    if req.buf.memory != MemoryType::Device {
        return Err(Refusal::NotDeviceMemory);
    }
    let k = req.file.kind();
    if !(k.block_device || (k.regular && (ctx.config.unsupported_fs || k.ext4_ordered || k.xfs))) {
        return Err(Refusal::FileSystem);
    }
    let Some(offset_mask) = req.file.fastpath_offset_mask() else {
        return Err(Refusal::NoODirect);
    };
    if req.file_offset & offset_mask != 0 {
        return Err(Refusal::UnalignedOffset);
    }
    if req.size as u64 & offset_mask != 0 {
        return Err(Refusal::UnalignedSize);
    }
    // As for offsets: never finer than 4 KiB, the granularity the kernel path accepts.
    match req.file.fastpath_mem_mask() {
        Some(m) if req.mem_addr() as u64 & m == 0 => Ok(100),
        _ => Err(Refusal::UnalignedMemory),
    }
}

/// Why the fastpath refuses every request, whatever the file and memory: no GPU-direct entry
/// points in the runtime, or compat mode forced. Computed once per configuration.
pub fn gate(rt: &dyn crate::runtime::Runtime, config: &crate::config::Config) -> Option<Refusal> {
    if !rt.has_fastpath() {
        Some(Refusal::NoFastpathEntryPoints)
    } else if config.force_compat {
        Some(Refusal::CompatForced)
    } else {
        None
    }
}

/// Run the request through the runtime's GPU-direct entry point.
#[inline(always)]
pub fn io(ctx: &Context<'_>, req: &Request<'_>) -> Result<usize> {
    let fd = req
        .file
        .unbuffered_fd()
        .ok_or(Error::NoBackend("no O_DIRECT descriptor"))?;
    let offset =
        i64::try_from(req.file_offset).map_err(|_| Error::InvalidValue("file offset too large"))?;
    match ctx
        .engine
        .rt()
        .fastpath_io(req.dir, fd, req.mem_addr(), req.size as u64, offset)
    {
        Ok(n) => Ok(n as usize),
        Err(FastpathFault::Os(e)) => Err(Error::Os(e)),
        Err(FastpathFault::Runtime(e)) => Err(Error::Runtime(e)),
    }
}
