//! The driver: the process singleton behind every API call.
//!
//! "Open" means a use count above zero. The first open (explicit, or implicit through
//! registration) snapshots the configuration and creates the engine; the close that brings the
//! count back to zero drops every file and buffer registration and the engine (work in flight
//! keeps what it uses alive through `Arc`s).
//!
//! Lock order: `state` (one read/write lock over the count and both registries), then
//! `staged` or `batches` (the close lists the batch contexts it ends under the state lock). I/O takes the read lock only long enough to clone `Arc`s; no lock is held
//! across I/O or a GPU runtime call.
#![deny(unsafe_code)]

pub(crate) mod batch;
pub(crate) mod buffers;
pub(crate) mod files;
pub(crate) mod ordered;
mod slots;
pub(crate) mod streams;

use std::os::fd::RawFd;
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

use crate::backend::Backends;
use crate::config::{self, params, Config};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::request::file::File;
use crate::request::memory::Buffer;
use crate::request::{memory, Request};
use crate::runtime::{self, Runtime};
use crate::vocab::{Address, Direction};
use buffers::BufferRegistry;
use files::{FileRegistry, FileToken};
use params::Staged;

/// What exists only while the driver is open. A live setting replaces it with one of the new
/// configuration and the same engine: the engine says which open a session belongs to.
struct Session {
    config: Arc<Config>,
    engine: Engine,
    /// The backends of this configuration, built once.
    backends: Backends,
}

impl Session {
    fn new(rt: &'static dyn Runtime, config: Arc<Config>, engine: Engine) -> Session {
        Session {
            backends: Backends::new(rt, &config, &engine),
            config,
            engine,
        }
    }
}

struct State {
    use_count: i64,
    files: FileRegistry,
    buffers: BufferRegistry,
    session: Option<Arc<Session>>,
}

impl State {
    /// Whether `session` belongs to the open that is still open: the same engine, whatever live
    /// setting replaced the session since.
    fn is_open(&self, session: &Session) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.engine.same(&session.engine))
    }
}

/// What [`Driver::look_up`] finds for one I/O: its file, the exact registration of its buffer
/// (if any) and the open session.
type Named = (Arc<File>, Option<Arc<Buffer>>, Arc<Session>);

/// The process-wide driver.
pub(crate) struct Driver {
    state: RwLock<State>,
    batches: Mutex<batch::BatchRegistry>,
    /// Batch jobs holding the session.
    batch_jobs: Arc<batch::Jobs>,
    staged: Mutex<Staged>,
    streams: streams::StreamRegistry,
    /// Stream-ordered I/O services. Taken after `state` when both are held.
    ordered: Mutex<Services>,
}

/// The stream-ordered I/O services: the open session's, from its first use until the close to
/// 0 takes it (in the same write of the state that ends the session, so that a service found
/// in `open` under the state lock always belongs to the open session), and those a close is
/// still shutting down (a stream's deregistration waits for their operations too).
#[derive(Default)]
struct Services {
    open: Option<Arc<ordered::Ordered>>,
    closing: Vec<Arc<ordered::Ordered>>,
}

static DRIVER: OnceLock<Driver> = OnceLock::new();

/// The driver singleton.
pub(crate) fn driver() -> &'static Driver {
    DRIVER.get_or_init(|| {
        crate::log::init();
        Driver {
            state: RwLock::new(State {
                use_count: 0,
                files: FileRegistry::default(),
                buffers: BufferRegistry::default(),
                session: None,
            }),
            batches: Mutex::new(batch::BatchRegistry::default()),
            batch_jobs: Arc::default(),
            staged: Mutex::new(Staged::default()),
            streams: streams::StreamRegistry::default(),
            ordered: Mutex::default(),
        }
    })
}

impl Driver {
    /// The GPU runtime (loaded on first use).
    pub(crate) fn rt(&self) -> &'static dyn Runtime {
        runtime::runtime()
    }

    /// Start a session (count 0 → 1): configuration snapshot and engine.
    fn activate(&self, st: &mut State) {
        crate::stats::init();
        let config = Arc::new(Config::resolve(config::env(), &self.staged.lock()));
        crate::stats::set_level(u64::from(config.stats_level));
        let rt = self.rt();
        tracing::debug!(target: "hipfile", "driver open: {config:?}");
        let engine = Engine::new(rt, &config);
        st.session = Some(Arc::new(Session::new(rt, config, engine)));
    }

    fn implicit_open(&self, st: &mut State) {
        if st.use_count == 0 {
            self.activate(st);
            st.use_count = 1;
        }
    }

    /// `hipFileDriverOpen`: increment the use count.
    pub(crate) fn open(&self) {
        // Load the runtime before taking the lock: it may take a while and logs.
        self.rt();
        let mut st = self.state.write();
        if st.use_count == 0 {
            self.activate(&mut st);
        }
        st.use_count += 1;
    }

    /// `hipFileDriverClose`: decrement; at zero drop every registration.
    pub(crate) fn close(&self) -> Result<()> {
        let (session, contexts, ordered) = {
            let mut st = self.state.write();
            if st.use_count == 0 {
                return Err(Error::DriverNotInitialized);
            }
            st.use_count -= 1;
            if st.use_count > 0 {
                return Ok(());
            }
            st.files.clear();
            st.buffers.clear();
            let ordered = {
                let mut services = self.ordered.lock();
                let open = services.open.take();
                services.closing.extend(open.clone());
                open
            };
            *self.staged.lock() = Staged::default();
            // The contexts this close ends: those that exist now. One set up once the count is
            // 0 (possibly on the next open, while this close still drains) is not this close's.
            let contexts = self.batches.lock().live();
            (st.session.take(), contexts, ordered)
        };
        // At count 0 every batch context is retired (nothing more is queued, pending
        // operations are cancelled), drained (running operations finish; they hold what they
        // use), and only then removed: its handle goes stale (later use gets
        // hipFileInvalidValue, as upstream's newest code) once nothing of it runs any more.
        // Until then GetStatus reaps what the close cancelled and what completed, so a
        // handle never answers "unknown" while an operation of it still moves bytes. Then
        // the engine (threads, pinned memory) goes away, outside the state lock.
        for (_, ctx) in &contexts {
            ctx.retire_and_drain();
        }
        {
            let mut batches = self.batches.lock();
            for (token, _) in &contexts {
                batches.remove(*token);
            }
        }
        // Batch jobs, of these contexts and of destroyed ones, hold the session until they end
        // (a queued one with nothing left to take ends at once): waited for, so the engine goes
        // with this close.
        self.batch_jobs.wait_none();
        // Stream-ordered operations queued before the close finish first (their streams wait
        // for them); then the service's threads and pinned memory go.
        if let Some(o) = ordered {
            o.shut_down();
            self.ordered.lock().closing.retain(|c| !Arc::ptr_eq(c, &o));
        }
        drop(session);
        Ok(())
    }

    /// `hipFileUseCount`.
    pub(crate) fn use_count(&self) -> i64 {
        self.state.read().use_count
    }

    /// The configuration in force (the open session's, or what an open would use now).
    pub(crate) fn config(&self) -> Arc<Config> {
        match &self.state.read().session {
            Some(s) => s.config.clone(),
            None => Arc::new(Config::resolve(config::env(), &self.staged.lock())),
        }
    }

    /// Every parameter's value: the live one while open, otherwise what the next open would
    /// use (staged API value > environment > default).
    pub(crate) fn params(&self) -> params::ParamValues {
        let st = self.state.read();
        match &st.session {
            Some(s) => s.config.params.clone(),
            None => params::ParamValues::resolve(config::env(), &self.staged.lock()),
        }
    }

    /// Stage a parameter value for the next open: only while the driver is
    /// closed (`DriverAlreadyOpen` otherwise); reset to its default when the driver closes.
    pub(crate) fn stage(&self, apply: impl FnOnce(&mut Staged) -> Result<()>) -> Result<()> {
        // Holding the state lock keeps an open from racing with the staging.
        let st = self.state.read();
        if st.use_count > 0 {
            return Err(Error::DriverAlreadyOpen);
        }
        apply(&mut self.staged.lock())
    }

    /// `hipFileDriverSet*`: while open, `live` changes the configuration and later I/O sees
    /// the new snapshot; while closed, `staged` records the value for the next open, as a
    /// parameter set through the API would be (cuFile answers success there too).
    pub(crate) fn set_property(
        &self,
        live: impl FnOnce(&mut Config, &Engine),
        staged: impl FnOnce(&mut Staged),
    ) {
        let mut st = self.state.write();
        match st.session.as_mut() {
            Some(session) => {
                let mut config = (*session.config).clone();
                live(&mut config, &session.engine);
                *session = Arc::new(Session::new(
                    self.rt(),
                    Arc::new(config),
                    session.engine.clone(),
                ));
            }
            None => staged(&mut self.staged.lock()),
        }
    }

    /// Implicit open without anything else (the async calls on a closed
    /// driver). Returns whether the driver was closed.
    pub(crate) fn open_if_closed(&self) -> bool {
        self.rt();
        let mut st = self.state.write();
        let was_closed = st.use_count == 0;
        self.implicit_open(&mut st);
        was_closed
    }

    /// `hipFileHandleRegister` for a descriptor.
    pub(crate) fn register_file(&self, fd: RawFd) -> Result<FileToken> {
        let file = File::inspect(fd)?;
        self.rt();
        let mut st = self.state.write();
        self.implicit_open(&mut st);
        let token = st.files.insert(file)?;
        drop(st);
        crate::stats::recorder::file_registered();
        Ok(token)
    }

    /// `hipFileHandleDeregister`: silently nothing when closed or unknown. The handle goes at
    /// once (later calls with it get `HandleNotRegistered`, and its descriptor may be
    /// registered again), then the call waits for the stream-ordered operations queued on it,
    /// as `hipFileStreamDeregister` does for a stream: when it returns, nothing of the library
    /// uses the file any more but synchronous calls already running on other threads.
    pub(crate) fn deregister_file(&self, token: FileToken) {
        let mut st = self.state.write();
        if st.use_count == 0 {
            return;
        }
        let Some(file) = st.files.remove(token) else {
            tracing::debug!(target: "hipfile", "deregistration of unknown handle {token:#x} ignored");
            return;
        };
        drop(st);
        crate::stats::recorder::file_deregistered();
        // The file was the open session's: so are the operations on it.
        let ordered = self.ordered.lock().open.clone();
        if let Some(o) = ordered {
            o.drain_file(&file);
        }
    }

    /// `hipFileBufRegister`: opens the driver first, even when the buffer is
    /// then refused.
    pub(crate) fn register_buffer(&self, base: Address, length: usize) -> Result<()> {
        let rt = self.rt();
        if rt.platform() == runtime::Platform::Host {
            warn_host_only_once();
        }
        let host_io = {
            let mut st = self.state.write();
            self.implicit_open(&mut st);
            if st.buffers.contains(base) {
                return Err(Error::MemoryAlreadyRegistered);
            }
            st.session.as_ref().expect("open").config.host_io
        };
        let buffer = memory::validate(rt, base, length, host_io)?;
        let mut st = self.state.write();
        if st.use_count == 0 {
            // Closed while we validated: the registration would be dropped by that close.
            return Err(Error::DriverClosing);
        }
        st.buffers.insert(buffer)?;
        drop(st);
        crate::stats::recorder::buffer_registered();
        Ok(())
    }

    /// `hipFileBufDeregister`.
    pub(crate) fn deregister_buffer(&self, base: Address) -> Result<()> {
        let mut st = self.state.write();
        if st.use_count == 0 {
            return Err(Error::DriverClosing);
        }
        st.buffers.remove(base)?;
        drop(st);
        crate::stats::recorder::buffer_deregistered();
        Ok(())
    }

    /// What one I/O names, under the read lock, as `Arc`s the call holds after it: the file of
    /// `token`, the registration whose base is exactly `base` (if any) and the session. A
    /// closed driver and an unknown handle are refused here, in that order.
    #[inline(always)]
    fn look_up(&self, token: FileToken, base: Address) -> Result<Named> {
        let st = self.state.read();
        if st.use_count == 0 {
            return Err(Error::DriverNotInitialized);
        }
        let file = st
            .files
            .get(token)
            .cloned()
            .ok_or(Error::HandleNotRegistered)?;
        let session = st.session.clone().expect("open driver has a session");
        Ok((file, st.buffers.get(base).cloned(), session))
    }

    /// `hipFileRead` / `hipFileWrite`. An offset is `None` when
    /// the application passed a negative one (refused after the handle and buffer checks).
    #[inline(always)]
    pub(crate) fn io(
        &self,
        dir: Direction,
        token: FileToken,
        base: Address,
        size: usize,
        file_offset: Option<u64>,
        buffer_offset: Option<usize>,
    ) -> Result<usize> {
        let (file, registration, session) = self.look_up(token, base)?;
        // A registration is held (in `registration`) for the whole call; an unregistered
        // pointer is resolved into a description that lives on this stack frame.
        let resolved;
        let buf = match &registration {
            Some(b) => &**b,
            None => {
                resolved = memory::resolve_unregistered(self.rt(), base, session.config.host_io)?;
                &resolved
            }
        };
        let (Some(file_offset), Some(buffer_offset)) = (file_offset, buffer_offset) else {
            // hipFile 0.4.0: negative offsets are -1 with errno EINVAL.
            return Err(Error::Os(libc::EINVAL));
        };
        let req = Request::new(dir, &file, buf, size, file_offset, buffer_offset);
        session.backends.run(&req)
    }

    /// `hipFileBatchIOSetUp`: works while closed, does not open. `max_nr` is
    /// 1 to `hipFileParamPropertiesIOBatchsize` (at most 128).
    pub(crate) fn batch_setup(&self, max_nr: u32) -> Result<batch::BatchToken> {
        let limit = (self
            .params()
            .size(params::SizeParam::IoBatchSize)
            .min(batch::MAX_OPS as u64)) as usize;
        if max_nr == 0 || max_nr as usize > limit {
            return Err(Error::InvalidValue("batch capacity out of range"));
        }
        Ok(self.batches.lock().create(max_nr as usize))
    }

    /// The live batch context behind `token` (`InvalidValue` for an unknown or destroyed one).
    /// `hipFileBatchIOGetStatus` is its `reap`, after the caller's
    /// argument checks of step 1.
    pub(crate) fn batch_context(
        &self,
        token: batch::BatchToken,
    ) -> Result<Arc<batch::BatchContext>> {
        self.batches
            .lock()
            .get(token)
            .ok_or(Error::InvalidValue("unknown batch handle"))
    }

    /// `hipFileBatchIOSubmit`'s checks before any entry is read: the handle (`InvalidValue`),
    /// `n == 0` (`InvalidValue`) and the room (`BatchFull`). Returns the context to submit to.
    pub(crate) fn batch_admit(
        &self,
        token: batch::BatchToken,
        n: usize,
    ) -> Result<Arc<batch::BatchContext>> {
        let ctx = self.batch_context(token)?;
        if n == 0 {
            return Err(Error::InvalidValue("no operations to submit"));
        }
        if !ctx.has_room(n) {
            return Err(Error::BatchFull);
        }
        Ok(ctx)
    }

    /// `hipFileBatchIOSubmit` on a context admitted by [`Driver::batch_admit`]:
    /// all entries are resolved and checked before any is queued. Runtime queries for
    /// unregistered buffers run without the state lock.
    pub(crate) fn batch_submit(
        &self,
        ctx: &Arc<batch::BatchContext>,
        entries: &[batch::OpParams],
    ) -> Result<()> {
        let (session, found) = {
            let st = self.state.read();
            if st.use_count == 0 {
                return Err(Error::Internal("batch submission on a closed driver"));
            }
            let session = st.session.clone().expect("open driver has a session");
            let found: Vec<_> = entries
                .iter()
                .map(|p| {
                    (
                        st.files.get(p.file).cloned(),
                        st.buffers.get(p.base).cloned(),
                    )
                })
                .collect();
            (session, found)
        };
        let host_io = session.config.host_io;
        let mut ops = Vec::with_capacity(entries.len());
        for (p, (file, registration)) in entries.iter().zip(&found) {
            ops.push(batch::resolve(
                p,
                file.as_ref(),
                registration.as_ref(),
                |base| memory::resolve_unregistered(self.rt(), base, host_io),
            )?);
        }
        // The operations run under the newest configuration of the same open. Their jobs are
        // spawned after the lock: one runs on this thread where the workers cannot start.
        let jobs = {
            let st = self.state.read();
            match &st.session {
                Some(s) if st.is_open(&session) => batch::enqueue(ctx, s, &self.batch_jobs, ops)?,
                _ => {
                    return Err(Error::Internal(
                        "the driver closed during the batch submission",
                    ))
                }
            }
        };
        jobs.spawn();
        Ok(())
    }

    /// `hipFileBatchIOCancel`.
    pub(crate) fn batch_cancel(&self, token: batch::BatchToken) -> Result<()> {
        self.batch_context(token)?.cancel();
        Ok(())
    }

    /// `hipFileBatchIODestroy`: unknown handles are ignored; otherwise the
    /// handle goes stale at once, pending operations are cancelled and running ones waited for.
    pub(crate) fn batch_destroy(&self, token: batch::BatchToken) {
        let ctx = self.batches.lock().remove(token);
        if let Some(ctx) = ctx {
            ctx.retire_and_drain();
        }
    }
}

/// Host-only mode is never silent: the first memory registration says so at the default log
/// level, since every pointer is then taken as host memory and device pointers fail later.
#[cold]
fn warn_host_only_once() {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        tracing::warn!(
            target: "hipfile",
            "host-only mode ({}): buffers are taken as host memory; GPU memory cannot be used",
            runtime::loader::choice().reason
        );
    });
}

impl Driver {
    /// `hipFileReadAsync` / `hipFileWriteAsync` after the C argument checks, in upstream's
    /// order: the handle, the buffer, the stream's device, the bounds with the current values
    /// (size clamped), the buffer's device against the stream's; then `*bytes_p = 0`, a size
    /// of 0 done at once, otherwise the operation queued on the stream
    /// ([`ordered`]).
    pub(crate) fn submit_async(
        &self,
        dir: Direction,
        token: FileToken,
        base: Address,
        stream: runtime::StreamHandle,
        params: Box<dyn ordered::AsyncParams>,
    ) -> Result<()> {
        let rt = self.rt();
        let (file, registration, session) = self.look_up(token, base)?;
        let buf = match registration {
            Some(b) => b,
            None => Arc::new(
                memory::resolve_unregistered(rt, base, session.config.host_io).map_err(
                    |e| match e {
                        // Upstream's async mapping of memory it does not serve.
                        Error::MemoryTypeInvalid => {
                            Error::Internal("stream-ordered I/O on memory no backend serves")
                        }
                        e => e,
                    },
                )?,
            ),
        };
        // Asked at every submission: a stream destroyed and re-created at the same address may
        // be on another device.
        let stream_device = rt.streams_or_unsupported()?.stream_device(stream)?;
        let info = self.streams.info(rt, stream);
        let (Some(file_offset), Some(buffer_offset)) =
            (params.file_offset(), params.buffer_offset())
        else {
            return Err(Error::InvalidValue("negative offset"));
        };
        let req = Request::new(dir, &file, &buf, params.size(), file_offset, buffer_offset);
        req.check_bounds()?;
        if buf.memory == crate::vocab::MemoryType::Device && buf.device != stream_device {
            return Err(Error::InvalidValue(
                "the buffer is not on the stream's device",
            ));
        }
        let submitted = ordered::Submitted {
            size: req.size,
            file_offset,
            buffer_offset,
        };
        params.set_result(Ok(0));
        crate::stats::recorder::async_submitted(dir);
        if submitted.size == 0 {
            return Ok(());
        }
        let op = ordered::Op {
            dir,
            file,
            buf,
            session: session.clone(),
            flags: info.map(|i| i.flags).unwrap_or_default(),
            submitted,
            params,
        };
        self.ordered(&session)?.submit(op, stream, stream_device)
    }

    /// The stream-ordered I/O service of `session`'s open, started on its first use.
    /// `DriverClosing` when that open was closed meanwhile (the call raced the close to 0):
    /// its service is shutting down, and one started now would outlive the close.
    fn ordered(&self, session: &Session) -> Result<Arc<ordered::Ordered>> {
        if let Some(o) = self.open_service(session)? {
            return Ok(o);
        }
        // Started outside the locks (it spawns threads); dropped (joined) when another call
        // stored one first or the open ended meanwhile, after the guards (locals drop in
        // reverse order).
        let fresh = Arc::new(ordered::Ordered::new(self.rt(), session.config.clone())?);
        let st = self.state.read();
        if !st.is_open(session) {
            return Err(Error::DriverClosing);
        }
        let mut services = self.ordered.lock();
        let open = services.open.get_or_insert_with(|| Arc::clone(&fresh));
        Ok(Arc::clone(open))
    }

    /// The service of `session`'s open if it has one; `DriverClosing` when that open ended.
    fn open_service(&self, session: &Session) -> Result<Option<Arc<ordered::Ordered>>> {
        if !self.state.read().is_open(session) {
            return Err(Error::DriverClosing);
        }
        Ok(self.ordered.lock().open.clone())
    }

    /// `hipFileStreamDeregister`: `InvalidValue` when `stream` is not registered; otherwise
    /// waits for the operations queued on it, then forgets the registration.
    pub(crate) fn deregister_stream(&self, stream: runtime::StreamHandle) -> Result<()> {
        if !self.streams.contains(stream) {
            return Err(Error::InvalidValue("stream not registered"));
        }
        // A stream outlives sessions: the operations of a session being closed count too.
        let services: Vec<_> = {
            let services = self.ordered.lock();
            services
                .open
                .iter()
                .chain(&services.closing)
                .cloned()
                .collect()
        };
        for o in services {
            o.drain_stream(stream);
        }
        self.streams.deregister(stream)
    }

    /// `hipFileStreamRegister`: the registration, and on an open driver the stages of the
    /// stream's device (their pinned memory is allocated now, as upstream allocates at
    /// registration).
    pub(crate) fn register_stream(
        &self,
        stream: runtime::StreamHandle,
        flags: ordered::StreamFlags,
    ) -> Result<()> {
        let rt = self.rt();
        self.streams.register(rt, stream, flags)?;
        let session = self.state.read().session.clone();
        if let Some(session) = session {
            let ordered = match self.ordered(&session) {
                Ok(o) => o,
                // Closed meanwhile: registered as on a closed driver.
                Err(Error::DriverClosing) => return Ok(()),
                Err(e) => {
                    let _ = self.streams.deregister(stream);
                    return Err(e);
                }
            };
            // A device where the kernel cannot run serves its streams at submission (logged).
            if let Some(Ok(device)) = rt.streams().map(|s| s.stream_device(stream)) {
                let _ = ordered.prepare(device);
            }
        }
        Ok(())
    }
}
