//! The host-memory backend: POSIX I/O straight between the buffered descriptor
//! and the application's host memory (pageable or pinned), in parallel chunks for large
//! requests, durable writes with one `fdatasync` per call.
#![deny(unsafe_code)]

use super::{Backend, Posix, Score, Seal};
use crate::config::Config;
use crate::engine::Engine;
use crate::error::Result;
use crate::request::Request;
use crate::vocab::{BackendKind, MemRef, Refusal};

/// The host backend of one driver open.
pub(crate) struct Host {
    /// `HIPFILE_HOST` / `hipFileParamAllowSystemMemory`.
    enabled: bool,
    posix: Posix,
}

impl Host {
    /// The host backend for `config` on `engine`.
    pub(crate) fn new(engine: &Engine, config: &Config) -> Host {
        Host {
            enabled: config.host_io,
            posix: Posix::new(engine, config),
        }
    }
}

impl Backend for Host {
    #[inline(always)]
    fn kind(&self) -> BackendKind {
        BackendKind::Host
    }

    /// It never scores more than when it accepts.
    #[inline(always)]
    fn ceiling(&self) -> u8 {
        Score::HOST.eagerness()
    }

    /// 1 when host I/O is on and the buffer is host memory (which the fallback refuses).
    #[inline(always)]
    fn score(&self, req: &Request<'_>) -> Score {
        if !req.buf.memory.is_host() {
            return Score::Refuse(Refusal::NotHostMemory);
        }
        if !self.enabled {
            return Score::Refuse(Refusal::HostDisabled);
        }
        Score::HOST
    }

    /// Run the request on the engine, straight into host memory.
    #[inline(always)]
    fn submit(&self, req: &Request<'_>, _: Seal) -> Result<usize> {
        self.posix.run(
            req,
            MemRef::Host {
                addr: req.mem_addr(),
            },
        )
    }
}
