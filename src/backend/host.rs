//! The host-memory backend (contract §4): POSIX I/O straight between the buffered descriptor
//! and the application's host memory (pageable or pinned), in parallel chunks for large
//! requests, durable writes with one `fdatasync` per call.
#![deny(unsafe_code)]

use super::{Context, Request};
use crate::engine::{Target, Transfer};
use crate::error::Result;
use crate::vocab::Refusal;

/// Score 1 when host I/O is on and the buffer is host memory.
pub fn score(ctx: &Context<'_>, req: &Request<'_>) -> Result<i32, Refusal> {
    if !ctx.config.host_io {
        return Err(Refusal::HostDisabled);
    }
    if !req.buf.memory.is_host() {
        return Err(Refusal::NotHostMemory);
    }
    Ok(1)
}

/// Run the request on the engine.
#[inline(always)]
pub fn io(ctx: &Context<'_>, req: &Request<'_>) -> Result<usize> {
    ctx.engine.run(Transfer {
        dir: req.dir,
        fd: req.file.buffered_fd(),
        direct: super::direct_fd(ctx, req),
        target: Target::Host {
            addr: req.mem_addr(),
        },
        size: req.size,
        offset: req.file_offset,
        sync: ctx.config.sync_writes,
    })
}
