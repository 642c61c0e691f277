//! The compat-mode backend: POSIX I/O on the buffered
//! descriptor through the engine's pinned bounce buffers, durable writes with one
//! `fdatasync` per call.
#![deny(unsafe_code)]

use super::{Backend, Posix, Score, Seal};
use crate::config::Config;
use crate::engine::{Engine, Transfer};
use crate::error::Result;
use crate::request::Request;
use crate::vocab::{BackendKind, MemRef, MemoryType, Refusal};

/// The fallback of one driver open.
#[derive(Clone)]
pub(crate) struct Fallback {
    /// Compat mode allowed.
    allow_compat: bool,
    posix: Posix,
}

impl Fallback {
    /// The fallback for `config` on `engine`.
    pub(crate) fn new(engine: &Engine, config: &Config) -> Fallback {
        Fallback {
            allow_compat: config.allow_compat,
            posix: Posix::new(engine, config),
        }
    }
}

impl Backend for Fallback {
    #[inline(always)]
    fn kind(&self) -> BackendKind {
        BackendKind::Fallback
    }

    /// It never scores more than when it accepts.
    #[inline(always)]
    fn ceiling(&self) -> u8 {
        Score::FALLBACK.eagerness()
    }

    /// 1 when compat mode is allowed and the buffer is device memory.
    #[inline(always)]
    fn score(&self, req: &Request<'_>) -> Score {
        if req.buf.memory != MemoryType::Device {
            return Score::Refuse(Refusal::NotDeviceMemory);
        }
        if !self.allow_compat {
            return Score::Refuse(Refusal::CompatDisabled);
        }
        Score::FALLBACK
    }

    /// Run the request on the engine, through device memory.
    #[inline(always)]
    fn submit(&self, req: &Request<'_>, _: Seal) -> Result<usize> {
        self.posix.engine.run(self.transfer(req))
    }
}

impl Fallback {
    /// The engine's transfer of `req`, through device memory.
    #[inline(always)]
    pub(super) fn transfer(&self, req: &Request<'_>) -> Transfer {
        self.posix.transfer(
            req,
            MemRef::Device {
                addr: req.mem_addr(),
                device: req.buf.device,
            },
        )
    }
}
