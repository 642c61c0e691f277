//! The compat-mode backend (behaviour §C.5, contract §3–4): POSIX I/O on the buffered
//! descriptor through the engine's pinned bounce buffers, durable writes with one
//! `fdatasync` per call.
#![deny(unsafe_code)]

use super::{Context, Request};
use crate::engine::{Target, Transfer};
use crate::error::Result;
use crate::vocab::MemoryType;
use crate::vocab::Refusal;

/// Score 0 when compat mode is allowed and the buffer is device memory.
#[inline(always)]
pub fn score(ctx: &Context<'_>, req: &Request<'_>) -> Result<i32, Refusal> {
    if !ctx.config.allow_compat {
        return Err(Refusal::CompatDisabled);
    }
    if req.buf.memory != MemoryType::Device {
        return Err(Refusal::NotDeviceMemory);
    }
    Ok(0)
}

/// Run the request on the engine.
#[inline(always)]
pub fn io(ctx: &Context<'_>, req: &Request<'_>) -> Result<usize> {
    ctx.engine.run(Transfer {
        dir: req.dir,
        fd: req.file.buffered_fd(),
        direct: super::direct_fd(ctx, req),
        target: Target::Device {
            addr: req.mem_addr(),
            device: req.buf.device,
        },
        size: req.size,
        offset: req.file_offset,
        sync: ctx.config.sync_writes,
    })
}
