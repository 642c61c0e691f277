//! The GPU-direct backend: the runtime's file entry points move data
//! between the `O_DIRECT` descriptor and device memory without a host copy. It holds its
//! registered fallback, as AMD's `BackendWithFallback` does: a request that fails with
//! `ENODEV` or `EREMOTEIO` is resubmitted there when the fallback accepts it.
#![deny(unsafe_code)]

use super::{Backend, Fallback, Score, Seal};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::request::file::File;
use crate::request::Request;
use crate::runtime::{FastpathFault, GpuDirect, RtError, Runtime};
use crate::vocab::{BackendKind, MemoryType, Refusal};

/// The fastpath of one driver open.
pub(crate) struct Fastpath {
    /// The runtime's GPU-direct entry points; `None` where it has none (the gate refuses).
    gpu_direct: Option<&'static dyn GpuDirect>,
    /// [`gate`] of this runtime and configuration.
    gate: Option<Refusal>,
    /// `HIPFILE_UNSUPPORTED_FILE_SYSTEMS`: any file system with `O_DIRECT` is accepted.
    unsupported_fs: bool,
    /// Where failed requests are resubmitted ([`Fastpath::register_fallback`]).
    fallback: Option<Fallback>,
}

/// Why the fastpath refuses every request, whatever the file and memory: no GPU-direct entry
/// points in the runtime, or compat mode forced. Computed once per configuration.
fn gate(gpu_direct: Option<&dyn GpuDirect>, config: &Config) -> Option<Refusal> {
    if gpu_direct.is_none() {
        Some(Refusal::NoFastpathEntryPoints)
    } else if config.force_compat {
        Some(Refusal::CompatForced)
    } else {
        None
    }
}

impl Fastpath {
    /// The fastpath for `config` on `rt`, without a fallback.
    pub(crate) fn new(rt: &'static dyn Runtime, config: &Config) -> Fastpath {
        let gpu_direct = rt.gpu_direct();
        Fastpath {
            gpu_direct,
            gate: gate(gpu_direct, config),
            unsupported_fs: config.unsupported_fs,
            fallback: None,
        }
    }

    /// Register the backend failed requests are resubmitted to (AMD's
    /// `register_fallback_backend`). Its type is [`Fallback`], so "none" and "itself", which
    /// AMD refuses at run time, cannot be expressed.
    pub(crate) fn register_fallback(&mut self, fallback: Fallback) {
        self.fallback = Some(fallback);
    }

    /// Why the fastpath refuses every request on `file`, whatever the memory and the range:
    /// the gate, no `O_DIRECT` descriptor or no direct-I/O alignment, a file system it does
    /// not serve. [`Backend::score`] starts with this; `hipfile check` reports it.
    #[inline(always)]
    pub(crate) fn file_refusal(&self, file: &File) -> Option<Refusal> {
        if let Some(r) = self.gate {
            return Some(r);
        }
        if file.unbuffered_fd().is_none() {
            return Some(Refusal::NoODirect);
        }
        let k = file.kind();
        if !(k.block_device || (k.regular && (self.unsupported_fs || k.ext4_ordered || k.xfs))) {
            return Some(Refusal::FileSystem);
        }
        if file.fastpath_offset_mask().is_none() {
            return Some(Refusal::NoODirect);
        }
        None
    }
}

impl Backend for Fastpath {
    #[inline(always)]
    fn kind(&self) -> BackendKind {
        BackendKind::Fastpath
    }

    /// It never scores more than when it accepts.
    #[inline(always)]
    fn ceiling(&self) -> u8 {
        Score::FASTPATH.eagerness()
    }

    /// 100 when every GPU-direct rule holds (device memory, an `O_DIRECT` descriptor, a
    /// supported file system, aligned offset, size and address). The rules that depend only on the runtime
    /// and the configuration come precomputed in the gate.
    #[inline(always)]
    fn score(&self, req: &Request<'_>) -> Score {
        // The memory kind first: on host memory the fastpath's refusal is that, whatever else.
        if req.buf.memory != MemoryType::Device {
            return Score::Refuse(Refusal::NotDeviceMemory);
        }
        if let Some(r) = self.file_refusal(req.file) {
            return Score::Refuse(r);
        }
        let Some(offset_mask) = req.file.fastpath_offset_mask() else {
            return Score::Refuse(Refusal::NoODirect);
        };
        if req.file_offset & offset_mask != 0 {
            return Score::Refuse(Refusal::UnalignedOffset);
        }
        if req.size as u64 & offset_mask != 0 {
            return Score::Refuse(Refusal::UnalignedSize);
        }
        // As for offsets: never finer than 4 KiB, the granularity the kernel path accepts.
        match req.file.fastpath_mem_mask() {
            Some(m) if req.mem_addr().get() as u64 & m == 0 => Score::FASTPATH,
            _ => Score::Refuse(Refusal::UnalignedMemory),
        }
    }

    /// Run the request through the runtime's GPU-direct entry point.
    #[inline(always)]
    fn submit(&self, req: &Request<'_>, _: Seal) -> Result<usize> {
        let fd = req.file.unbuffered_fd().ok_or(Error::Internal(
            "the fastpath ran a file without an O_DIRECT descriptor",
        ))?;
        let offset = i64::try_from(req.file_offset)
            .map_err(|_| Error::InvalidValue("file offset too large"))?;
        let Some(gpu_direct) = self.gpu_direct else {
            return Err(Error::Runtime(RtError::NOT_SUPPORTED));
        };
        match gpu_direct.fastpath_io(req.dir, fd, req.mem_addr(), req.size as u64, offset) {
            Ok(n) => Ok(n as usize),
            Err(FastpathFault::Os(e)) => Err(Error::GpuDirect(e)),
            Err(FastpathFault::Runtime(e)) => Err(Error::Runtime(e)),
        }
    }

    #[inline(always)]
    fn fallback(&self) -> Option<&dyn Backend> {
        self.fallback.as_ref().map(|f| f as &dyn Backend)
    }
}
