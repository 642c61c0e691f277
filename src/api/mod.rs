//! The safe Rust API, the crate's public surface next to [`crate::Error`]: the same code
//! paths as the C functions, with ownership instead of raw handles (registered files and
//! buffers, batches, device and pinned memory), and the few read-only reports tools need
//! ([`runtime_report`], [`config`], [`environment`], [`mount_table`], [`fastpath_refusal`],
//! [`stats`]).
#![deny(unsafe_code)]

mod stats_reader;
mod tools;

use std::os::fd::{AsRawFd, RawFd};

use crate::driver::driver;
use crate::driver::files::FileToken;
use crate::error::{Error, Result};
use crate::runtime;
use crate::runtime::pinned::PinnedHost;
use crate::vocab::Address;

pub use crate::runtime::{Platform, RtError as RuntimeError};
pub use crate::vocab::{BackendKind, Direction, Refusal, Refusals};
pub use tools::{
    config, environment, mount_table, parse_size, runtime_report, set_device, ConfigSnapshot,
    EnvVar, Mount, RuntimeReport,
};

/// Statistics: this process's own block, and another process's (the reader behind
/// `hipfile stats`): connect, snapshot, text report.
pub mod stats {
    pub use super::stats_reader::{
        bandwidth_gib_s, bucket, bucket_label, direction_index, latency_us, level, own_snapshot,
        refusal_at, refusal_slot, text_report, BUCKETS, REFUSAL_SLOTS,
    };
    pub use crate::stats::client::{Connection, OpenError, Target};
    /// Bytes of the statistics block this library writes (AMD's `StatsV1`, then our
    /// extension).
    pub use crate::stats::layout::SHARED_SIZE as BLOCK_SIZE;
    pub use crate::stats::snapshot::{Extension, GpuBackendStats};
    pub use crate::stats::{Layout, Snapshot, Totals};
}

/// The runtime's streams and events ("not supported" where it has none).
fn runtime_streams() -> Result<&'static dyn runtime::Streams> {
    Ok(runtime::runtime().streams_or_unsupported()?)
}

/// What the runtime offers tools ("not supported" where it offers nothing).
fn runtime_tools() -> Result<&'static dyn runtime::Tools> {
    Ok(runtime::runtime()
        .tools()
        .ok_or(RuntimeError::NOT_SUPPORTED)?)
}

/// Keeps the driver open (one use-count reference) for its lifetime.
pub struct DriverGuard(());

impl DriverGuard {
    /// `hipFileDriverOpen`.
    pub fn open() -> DriverGuard {
        driver().open();
        DriverGuard(())
    }
}

impl Drop for DriverGuard {
    fn drop(&mut self) {
        let _ = driver().close();
    }
}

/// Why the GPU-direct fastpath would refuse every request on the open descriptor `fd` under
/// the configuration in force (the open driver's, or what an open would use now), whatever
/// the memory and range: `None` when it may serve aligned requests to device memory. The
/// file is inspected as registration inspects it, without registering it; the refusal is the
/// first that holds, in the order the fastpath checks them.
pub fn fastpath_refusal(fd: RawFd) -> Result<Option<Refusal>> {
    let file = crate::request::file::File::inspect(fd)?;
    let config = driver().config();
    Ok(crate::backend::Fastpath::new(runtime::runtime(), &config).file_refusal(&file))
}

/// Make what was written through `fd` durable, by the rule the library's own writes follow
/// (`fdatasync`, retried on `EINTR`): a file with nothing to synchronise (a character device
/// such as `/dev/null`, a pipe, a socket: `EINVAL`) has taken the bytes, which is success.
pub fn sync_data(fd: &impl AsRawFd) -> Result<()> {
    crate::sys::io::fdatasync(fd.as_raw_fd()).map_err(Error::Os)
}

/// A registered file; deregistered on drop. The descriptor stays owned by the caller.
pub struct RegisteredFile {
    token: FileToken,
}

impl RegisteredFile {
    /// Register an open descriptor (`hipFileHandleRegister`).
    pub fn register(fd: &impl AsRawFd) -> Result<RegisteredFile> {
        Self::register_raw(fd.as_raw_fd())
    }

    /// Register a raw descriptor number.
    pub fn register_raw(fd: RawFd) -> Result<RegisteredFile> {
        Ok(RegisteredFile {
            token: driver().register_file(fd)?,
        })
    }

    /// Read into device memory.
    pub fn read_device(
        &self,
        mem: &DeviceMemory,
        size: usize,
        file_offset: u64,
        mem_offset: usize,
    ) -> Result<usize> {
        self.io(Direction::Read, mem.addr, size, file_offset, mem_offset)
    }

    /// Write from device memory.
    pub fn write_device(
        &self,
        mem: &DeviceMemory,
        size: usize,
        file_offset: u64,
        mem_offset: usize,
    ) -> Result<usize> {
        self.io(Direction::Write, mem.addr, size, file_offset, mem_offset)
    }

    /// Read into host memory (the host backend).
    pub fn read_host(&self, buf: &mut [u8], file_offset: u64) -> Result<usize> {
        self.io(
            Direction::Read,
            buf.as_mut_ptr() as usize,
            buf.len(),
            file_offset,
            0,
        )
    }

    /// Write from host memory (the host backend).
    pub fn write_host(&self, buf: &[u8], file_offset: u64) -> Result<usize> {
        self.io(
            Direction::Write,
            buf.as_ptr() as usize,
            buf.len(),
            file_offset,
            0,
        )
    }

    fn io(
        &self,
        dir: Direction,
        base: usize,
        size: usize,
        file_offset: u64,
        mem_offset: usize,
    ) -> Result<usize> {
        // Offsets C cannot express are refused as before the driver saw unsigned ones.
        i64::try_from(file_offset).map_err(|_| Error::InvalidValue("file offset too large"))?;
        i64::try_from(mem_offset).map_err(|_| Error::InvalidValue("memory offset too large"))?;
        driver().io(
            dir,
            self.token,
            Address::new(base),
            size,
            Some(file_offset),
            Some(mem_offset),
        )
    }
}

impl Drop for RegisteredFile {
    fn drop(&mut self) {
        driver().deregister_file(self.token);
    }
}

/// A batch context (`hipFileBatchIOSetUp`), destroyed on drop (which cancels what has not
/// started and waits for what runs).
pub struct Batch {
    token: crate::driver::batch::BatchToken,
}

/// One operation of a batch submission: `size` bytes between `file` at `file_offset` and
/// `mem` at `mem_offset`; `cookie` comes back with its completion.
#[derive(Clone, Copy)]
pub struct BatchOp<'a> {
    /// Read (file → memory) or write.
    pub dir: Direction,
    /// The file.
    pub file: &'a RegisteredFile,
    /// The device memory.
    pub mem: &'a DeviceMemory,
    /// Offset into the memory.
    pub mem_offset: usize,
    /// File offset.
    pub file_offset: u64,
    /// Bytes.
    pub size: usize,
    /// Returned with the completion.
    pub cookie: usize,
}

/// How a batch operation ended: its cookie and the byte count, or its error.
pub type BatchCompletion = (usize, Result<usize>);

impl Batch {
    /// A context for up to `max_nr` outstanding operations (1–128).
    pub fn new(max_nr: u32) -> Result<Batch> {
        Ok(Batch {
            token: driver().batch_setup(max_nr)?,
        })
    }

    /// Queue `ops`, all or none (`hipFileBatchIOSubmit`).
    pub fn submit(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        let ctx = driver().batch_admit(self.token, ops.len())?;
        let to_i64 = |v: u64, what| i64::try_from(v).map_err(|_| Error::InvalidValue(what));
        let entries = ops
            .iter()
            .map(|op| {
                Ok(crate::driver::batch::OpParams {
                    mode: Some(crate::driver::batch::Mode::Batch),
                    base: Address::new(op.mem.addr),
                    file_offset: Some(to_i64(op.file_offset, "file offset too large")? as u64),
                    buffer_offset: Some(
                        to_i64(op.mem_offset as u64, "memory offset too large")? as usize
                    ),
                    size: op.size,
                    file: op.file.token,
                    dir: Some(op.dir),
                    cookie: op.cookie,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        driver().batch_submit(&ctx, &entries)
    }

    /// Wait until `min_nr` operations ended (or all outstanding did, or `timeout` passed:
    /// `None` waits without limit), then take up to `max_nr` ended ones
    /// (`hipFileBatchIOGetStatus`).
    pub fn completions(
        &self,
        min_nr: usize,
        max_nr: usize,
        timeout: Option<std::time::Duration>,
    ) -> Result<Vec<BatchCompletion>> {
        use crate::driver::batch::OpStatus;
        let done = driver()
            .batch_context(self.token)?
            .reap(min_nr, max_nr, timeout);
        Ok(done
            .into_iter()
            .map(|c| {
                let r = match c.status {
                    OpStatus::Complete(n) => Ok(n),
                    OpStatus::Failed(e) => Err(e),
                    OpStatus::Canceled => Err(Error::Internal("operation canceled")),
                    OpStatus::Pending | OpStatus::Running => {
                        unreachable!("only ended operations are reaped")
                    }
                };
                (c.cookie, r)
            })
            .collect())
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        driver().batch_destroy(self.token);
    }
}

/// A buffer registration (`hipFileBufRegister`), deregistered on drop. Registering a buffer
/// used for many small requests saves the pointer queries of each call.
pub struct RegisteredBuffer {
    base: Address,
}

impl RegisteredBuffer {
    /// Register a device allocation whole. Drop the registration before the memory.
    pub fn device(mem: &DeviceMemory) -> Result<RegisteredBuffer> {
        let base = Address::new(mem.addr);
        driver().register_buffer(base, mem.len)?;
        Ok(RegisteredBuffer { base })
    }
}

impl Drop for RegisteredBuffer {
    fn drop(&mut self) {
        let _ = driver().deregister_buffer(self.base);
    }
}

/// Device memory allocated through the runtime; freed on drop.
pub struct DeviceMemory {
    addr: usize,
    len: usize,
}

impl DeviceMemory {
    /// Allocate `len` bytes on the current device.
    pub fn alloc(len: usize) -> Result<DeviceMemory> {
        let addr = runtime_tools()?.device_alloc(len.max(1))?.get();
        Ok(DeviceMemory { addr, len })
    }

    /// Device address.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the allocation is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copy `src` into the allocation at `offset`.
    pub fn upload(&self, offset: usize, src: &[u8]) -> Result<()> {
        if offset
            .checked_add(src.len())
            .is_none_or(|end| end > self.len)
        {
            return Err(Error::InvalidValue("upload beyond the allocation"));
        }
        Ok(runtime::runtime().copy_to_device(Address::new(self.addr + offset), src)?)
    }

    /// Copy from the allocation at `offset` into `dst`.
    pub fn download(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        if offset
            .checked_add(dst.len())
            .is_none_or(|end| end > self.len)
        {
            return Err(Error::InvalidValue("download beyond the allocation"));
        }
        Ok(runtime::runtime().copy_from_device(dst, Address::new(self.addr + offset))?)
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if let Ok(tools) = runtime_tools() {
            tools.device_free(Address::new(self.addr));
        }
    }
}

/// Page-locked host memory allocated through the runtime; freed on drop.
pub struct PinnedMemory {
    mem: PinnedHost,
}

impl PinnedMemory {
    /// Allocate `len` bytes.
    pub fn alloc(len: usize) -> Result<PinnedMemory> {
        PinnedHost::alloc(runtime::runtime(), len)?
            .map(|mem| PinnedMemory { mem })
            .ok_or(Error::Internal("pinned allocation returned NULL"))
    }

    /// The memory.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.mem.as_mut_slice()
    }

    /// The memory, read-only.
    pub fn as_slice(&self) -> &[u8] {
        self.mem.as_slice()
    }
}

/// A GPU stream for stream-ordered I/O, created through the runtime (a non-blocking stream of
/// the current device) and registered (`hipFileStreamRegister`, flags 0: its pinned buffers
/// are allocated now and reused); deregistered and destroyed on drop.
pub struct GpuStream {
    handle: runtime::StreamHandle,
}

impl GpuStream {
    /// A new stream registered with no flags.
    pub fn new() -> Result<GpuStream> {
        GpuStream::with_flags(Some(0))
    }

    /// A new stream, registered with `HIPFILE_STREAM_*` bits `flags` (`None`: not registered).
    pub fn with_flags(flags: Option<u32>) -> Result<GpuStream> {
        let flags = flags
            .map(crate::driver::ordered::StreamFlags::from_bits)
            .transpose()?;
        let streams = runtime_streams()?;
        let handle = streams.stream_create()?;
        if let Some(flags) = flags {
            if let Err(e) = driver().register_stream(handle, flags) {
                streams.stream_destroy(handle);
                return Err(e);
            }
        }
        Ok(GpuStream { handle })
    }

    /// Wait until everything queued on the stream has run.
    pub fn synchronize(&self) -> Result<()> {
        Ok(runtime_streams()?.stream_synchronize(self.handle)?)
    }

    /// A mark at the stream's current end (an event recorded now): waiting for it waits for
    /// what was queued before it, not for what is queued later.
    pub fn mark(&self) -> Result<StreamMark> {
        let rt = runtime_streams()?;
        let event = rt.event_create()?;
        if let Err(e) = rt.event_record(event, self.handle) {
            rt.event_destroy(event);
            return Err(e.into());
        }
        Ok(StreamMark { event })
    }
}

/// A position on a [`GpuStream`] ([`GpuStream::mark`]); its event is destroyed on drop.
pub struct StreamMark {
    event: runtime::EventHandle,
}

impl StreamMark {
    /// Wait until the work queued on the stream before the mark has run.
    pub fn wait(&self) -> Result<()> {
        Ok(runtime_streams()?.event_synchronize(self.event)?)
    }
}

impl Drop for StreamMark {
    fn drop(&mut self) {
        if let Ok(streams) = runtime_streams() {
            streams.event_destroy(self.event);
        }
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        // Waits for the operations queued on it (an unregistered stream: nothing to forget).
        let _ = driver().deregister_stream(self.handle);
        if let Ok(streams) = runtime_streams() {
            streams.stream_destroy(self.handle);
        }
    }
}

/// The parameters and the outcome of one stream-ordered operation (what the C calls take by
/// reference), shared with the stream's worker. The parameters may change until the stream
/// reaches the operation; the outcome is final once the stream has passed it.
#[derive(Clone)]
pub struct AsyncOp(std::sync::Arc<AsyncSlots>);

struct AsyncSlots {
    size: std::sync::atomic::AtomicUsize,
    file_offset: std::sync::atomic::AtomicU64,
    mem_offset: std::sync::atomic::AtomicUsize,
    outcome: parking_lot::Mutex<Option<Result<usize>>>,
}

impl AsyncOp {
    /// `size` bytes between the file at `file_offset` and the memory at `mem_offset`.
    pub fn new(size: usize, file_offset: u64, mem_offset: usize) -> AsyncOp {
        AsyncOp(std::sync::Arc::new(AsyncSlots {
            size: size.into(),
            file_offset: file_offset.into(),
            mem_offset: mem_offset.into(),
            outcome: parking_lot::Mutex::new(None),
        }))
    }

    /// Take the outcome (`Ok(0)` from the submission until the operation ran).
    pub fn take_outcome(&self) -> Option<Result<usize>> {
        self.0.outcome.lock().take()
    }
}

impl crate::driver::ordered::AsyncParams for AsyncOp {
    fn size(&self) -> usize {
        self.0.size.load(std::sync::atomic::Ordering::Acquire)
    }

    fn file_offset(&self) -> Option<u64> {
        let v = self
            .0
            .file_offset
            .load(std::sync::atomic::Ordering::Acquire);
        i64::try_from(v).is_ok().then_some(v)
    }

    fn buffer_offset(&self) -> Option<usize> {
        let v = self.0.mem_offset.load(std::sync::atomic::Ordering::Acquire);
        i64::try_from(v).is_ok().then_some(v)
    }

    fn set_result(&self, r: Result<usize>) {
        *self.0.outcome.lock() = Some(r);
    }
}

impl RegisteredFile {
    /// Queue a read into device memory on `stream` (`hipFileReadAsync`).
    pub fn read_async(&self, mem: &DeviceMemory, op: &AsyncOp, stream: &GpuStream) -> Result<()> {
        self.submit_async(Direction::Read, mem, op, stream)
    }

    /// Queue a write from device memory on `stream` (`hipFileWriteAsync`).
    pub fn write_async(&self, mem: &DeviceMemory, op: &AsyncOp, stream: &GpuStream) -> Result<()> {
        self.submit_async(Direction::Write, mem, op, stream)
    }

    fn submit_async(
        &self,
        dir: Direction,
        mem: &DeviceMemory,
        op: &AsyncOp,
        stream: &GpuStream,
    ) -> Result<()> {
        driver().submit_async(
            dir,
            self.token,
            Address::new(mem.addr),
            stream.handle,
            Box::new(op.clone()),
        )
    }
}
