//! Backends and their selection, in the shape of AMD's
//! `backend.h`.
//!
//! Every [`Backend`] scores a request ([`Score`]): the fastpath 100, the fallback 1, the host
//! backend 1 (on host memory, which the fallback refuses), a refusal −1 with its [`Refusal`].
//! [`select`] keeps the strictly highest non-negative score; ties keep the earlier backend.
//! [`io`] is the one entry that runs a request: it records the statistics and, for a
//! backend with a registered fallback ([`Fastpath`]), resubmits a failure that
//! [`Backend::is_fallback_eligible`] (`ENODEV`, `EREMOTEIO`) when the fallback's own score
//! accepts the request. A failure on the fallback is final. A backend's own work
//! ([`Backend::submit`]) can be run through `io` alone ([`Seal`]).
//!
//! The driver builds [`Backends`] once per open from the configuration. Dispatch is static:
//! the list is scored through `&dyn Backend` references to values of known types, which the
//! compiler resolves to direct calls, and the winner, named by its [`BackendKind`], runs
//! through a `match` on that kind (the per-call cost of target T9; see `ARCHITECTURE.md`).
#![deny(unsafe_code)]

mod fallback;
mod fastpath;
mod host;
mod io;

pub(crate) use fallback::Fallback;
pub(crate) use fastpath::Fastpath;
pub(crate) use host::Host;
pub(crate) use io::Begun;
pub(crate) use io::Seal;

use crate::config::Config;
use crate::engine::overlap::{Overlap, Ready};
use crate::engine::{DirectFd, Engine, Transfer, DIRECT_MIN};
use crate::error::{Error, Result};
use crate::request::Request;
use crate::runtime::Runtime;
use crate::stats::recorder;
use crate::vocab::{BackendKind, MemRef, Refusal, Refusals};
use io::io;

/// A backend's answer to a request: accepted with an eagerness (higher wins), or refused
/// with the reason (where AMD's backends answer −1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Score {
    /// Accepted; the value is the backend's eagerness.
    Accept(u8),
    /// Refused.
    Refuse(Refusal),
}

impl Score {
    /// The fastpath's score: it wins whenever it accepts.
    pub(crate) const FASTPATH: Score = Score::Accept(100);
    /// The fallback's score on device memory.
    pub(crate) const FALLBACK: Score = Score::Accept(1);
    /// The host backend's score on host memory.
    pub(crate) const HOST: Score = Score::Accept(1);

    /// How eager an acceptance is; a refusal is below every acceptance.
    pub(crate) const fn eagerness(self) -> u8 {
        match self {
            Score::Accept(v) => v,
            Score::Refuse(_) => 0,
        }
    }
}

/// One way of moving a request's bytes (AMD's `Backend`).
pub(crate) trait Backend {
    /// Which backend this is (statistics, logs, refusals).
    fn kind(&self) -> BackendKind;

    /// How eagerly this backend serves `req`, or why it refuses it.
    fn score(&self, req: &Request<'_>) -> Score;

    /// The highest score this backend ever gives. Selection stops asking once a backend has
    /// accepted with a score no later one can beat (ties keep the earlier backend anyway), so
    /// a backend that cannot win is not scored. The default, the highest score there is,
    /// means "always ask".
    #[inline(always)]
    fn ceiling(&self) -> u8 {
        u8::MAX
    }

    /// Move the bytes of `req`: this backend's own work, without statistics or retry. Only
    /// [`io`] calls it (it alone makes the [`Seal`]).
    fn submit(&self, req: &Request<'_>, seal: Seal) -> Result<usize>;

    /// The retry hook (AMD's `BackendWithFallback`): the registered backend a failed request
    /// is resubmitted to. None by default.
    #[inline(always)]
    fn fallback(&self) -> Option<&dyn Backend> {
        None
    }

    /// Whether a failure goes to the registered fallback: `ENODEV` and `EREMOTEIO`, the
    /// errors the GPU-direct path reports for "not this way".
    #[inline(always)]
    fn is_fallback_eligible(&self, e: &Error) -> bool {
        matches!(e, Error::GpuDirect(libc::ENODEV | libc::EREMOTEIO))
    }
}

/// The winner of `list` for `req`: the kind of the backend with the strictly highest
/// non-negative score (ties keep the earlier backend), with the refusals of the backends asked
/// before it was certain; or every backend's refusal when none accepts. Backends after an
/// acceptance that none of them could beat ([`Backend::ceiling`]) are not asked.
#[inline(always)]
pub(crate) fn select<'a, B: Backend + ?Sized + 'a, const N: usize>(
    list: [&'a B; N],
    req: &Request<'_>,
) -> std::result::Result<(BackendKind, Refusals), Refusals> {
    let mut best: Option<(BackendKind, u8)> = None;
    let mut refusals = Refusals::default();
    for (i, b) in list.iter().enumerate() {
        if let Some((_, top)) = best {
            if list[i..].iter().all(|later| later.ceiling() <= top) {
                break;
            }
        }
        match b.score(req) {
            Score::Accept(v) => {
                if best.is_none_or(|(_, top)| v > top) {
                    best = Some((b.kind(), v));
                }
            }
            Score::Refuse(r) => refusals.record(b.kind(), r),
        }
    }
    match best {
        Some((kind, _)) => Ok((kind, refusals)),
        None => Err(refusals),
    }
}

/// The POSIX path of the fallback and host backends: the engine's chunked `pread`/`pwrite`
/// on the buffered descriptor (the `O_DIRECT` one for cold aligned reads and aligned writes),
/// into device memory through bounce buffers or straight into host memory.
#[derive(Clone)]
struct Posix {
    engine: Engine,
    /// One `fdatasync` per write call.
    sync_writes: bool,
    /// `HIPFILE_DIRECT_IO`.
    direct_io: bool,
}

impl Posix {
    fn new(engine: &Engine, config: &Config) -> Posix {
        Posix {
            engine: engine.clone(),
            sync_writes: config.sync_writes,
            direct_io: config.direct_io,
        }
    }

    /// The `O_DIRECT` descriptor the engine may use for cold reads and aligned writes of this
    /// request (`HIPFILE_DIRECT_IO`, default on), or `None` (also for requests too small for
    /// any chunk of them to go direct).
    #[inline(always)]
    fn direct_fd(&self, req: &Request<'_>) -> Option<DirectFd> {
        if self.direct_io && req.size >= DIRECT_MIN {
            req.file.direct()
        } else {
            None
        }
    }

    /// The engine's transfer of `req` into or out of `target`.
    #[inline(always)]
    fn transfer(&self, req: &Request<'_>, target: MemRef) -> Transfer {
        Transfer {
            dir: req.dir,
            fd: req.file.buffered_fd(),
            direct: self.direct_fd(req),
            target,
            size: req.size,
            offset: req.file_offset,
            sync: self.sync_writes,
            part_way: req.part_way,
        }
    }

    #[inline(always)]
    fn run(&self, req: &Request<'_>, target: MemRef) -> Result<usize> {
        self.engine.run(self.transfer(req, target))
    }
}

/// The backends of one driver open, in the order they are asked: fastpath (holding the
/// fallback it resubmits to), fallback, host.
pub(crate) struct Backends {
    fastpath: Fastpath,
    fallback: Fallback,
    host: Host,
}

impl Backends {
    /// Build the list for `config` on `rt` and `engine`.
    pub(crate) fn new(rt: &'static dyn Runtime, config: &Config, engine: &Engine) -> Backends {
        let fallback = Fallback::new(engine, config);
        let mut fastpath = Fastpath::new(rt, config);
        fastpath.register_fallback(fallback.clone());
        Backends {
            fastpath,
            fallback,
            host: Host::new(engine, config),
        }
    }

    /// Choose a backend for `req` and run it there ([`io`]). Inlined into the
    /// driver's I/O entry, so that a small request is one flat function up to its system and
    /// runtime calls (target T9).
    ///
    /// Refusals are counted when they mattered: the fastpath's when the fallback serves
    /// instead (with the I/O), every backend's when none accepts, except a refusal of the
    /// memory kind (a backend that never serves such memory is no reason anyone needs).
    #[inline(always)]
    pub(crate) fn run(&self, req: &Request<'_>) -> Result<usize> {
        let Some((winner, declined)) = self.choose(req)? else {
            return Ok(0);
        };
        match winner {
            BackendKind::Fastpath => io(&self.fastpath, req, None),
            BackendKind::Fallback => io(&self.fallback, req, declined),
            BackendKind::Host => io(&self.host, req, None),
        }
    }

    /// Begin `req` on `overlap` where the fallback serves it and it is a device read of one
    /// chunk ([`Overlap`]: batch jobs); the rest is left to [`Backends::run`]
    /// ([`Begun::Synchronous`]). The statistics record such a read from its start to its
    /// finish ([`io::overlapped`]).
    pub(crate) fn begin(&self, req: &Request<'_>, overlap: &mut Overlap<'_>) -> Begun {
        let (winner, declined) = match self.choose(req) {
            Ok(Some(w)) => w,
            Ok(None) => return Begun::Done(Ok(0)),
            Err(e) => return Begun::Done(Err(e)),
        };
        if winner != BackendKind::Fallback {
            return Begun::Synchronous;
        }
        let t = self.fallback.transfer(req);
        match overlap.ready(&t) {
            Ready::Slot(slot) => io::overlapped(&self.fallback, req, declined, overlap, slot, &t),
            Ready::Busy => Begun::Busy,
            Ready::No => Begun::Synchronous,
        }
    }

    /// The kind of backend that serves `req` and the fastpath's refusal when the fallback
    /// serves instead; `None` when there is nothing to move. The refusals that matter are
    /// counted and logged here.
    #[inline(always)]
    fn choose(&self, req: &Request<'_>) -> Result<Option<(BackendKind, Option<Refusal>)>> {
        if req.size == 0 {
            // Valid arguments and nothing to move: 0, whatever a backend would say about the
            // alignment, and no fdatasync for a write (upstream's newest rule).
            req.check_bounds()?;
            return Ok(None);
        }
        let list: [&dyn Backend; 3] = [&self.fastpath, &self.fallback, &self.host];
        let (winner, refusals) = match select(list, req) {
            Ok(w) => w,
            Err(refusals) => return Err(no_backend(refusals)),
        };
        // The fastpath's refusal, when the fallback serves instead.
        let declined = match winner {
            BackendKind::Fallback => refusals.of(BackendKind::Fastpath),
            _ => None,
        };
        if let Some(r) = declined {
            log_fallback_reason(r);
        }
        if let Err(e) = req.check_bounds() {
            if let Some(r) = declined {
                recorder::refused(BackendKind::Fastpath, r);
            }
            return Err(e);
        }
        Ok(Some((winner, declined)))
    }
}

/// Count and log the refusals of a request no backend accepts, and name them in the error.
#[cold]
#[inline(never)]
fn no_backend(refusals: Refusals) -> Error {
    for (backend, reason) in refusals.iter() {
        if !matches!(reason, Refusal::NotDeviceMemory | Refusal::NotHostMemory) {
            recorder::refused(backend, reason);
        }
    }
    let e = Error::NoBackend(refusals);
    tracing::debug!(target: "hipfile", "{e}");
    e
}

/// One log line per distinct reason the fastpath lost a request to the fallback, the first
/// time it happens in the process: enough to tell why I/O is slow without a line per request.
#[inline(always)]
fn log_fallback_reason(r: Refusal) {
    use std::sync::atomic::{AtomicU64, Ordering};
    // One bit per reason: the common case is one load and one test.
    const _: () = assert!(crate::stats::layout::REFUSALS.len() <= 64);
    static LOGGED: AtomicU64 = AtomicU64::new(0);
    let bit = 1u64 << crate::stats::layout::refusal_slot(r);
    if LOGGED.load(Ordering::Relaxed) & bit == 0
        && LOGGED.fetch_or(bit, Ordering::Relaxed) & bit == 0
    {
        log_fallback_reason_once(r);
    }
}

#[cold]
fn log_fallback_reason_once(r: Refusal) {
    tracing::info!(target: "hipfile", "fastpath not used: {}; the fallback serves such requests (logged once)", r.describe());
}

#[cfg(test)]
mod tests {
    //! Mock backends in the spirit of AMD's backend tests: selection by score, the retry rules
    //! of a backend with a registered fallback, and what each of them records.
    use super::*;
    use crate::config::{params::Staged, Env};
    use crate::request::file::File;
    use crate::request::memory::Buffer;
    use crate::vocab::{Direction, MemoryType};
    use std::cell::Cell;

    /// A backend with a fixed score and a fixed outcome, counting its calls.
    struct Mock<'f> {
        kind: BackendKind,
        score: Score,
        outcome: Result<usize>,
        submits: Cell<u32>,
        fallback: Option<&'f dyn Backend>,
    }

    fn mock<'f>(kind: BackendKind, score: Score, outcome: Result<usize>) -> Mock<'f> {
        Mock {
            kind,
            score,
            outcome,
            submits: Cell::new(0),
            fallback: None,
        }
    }

    impl Backend for Mock<'_> {
        fn kind(&self) -> BackendKind {
            self.kind
        }
        fn score(&self, _: &Request<'_>) -> Score {
            self.score
        }
        fn submit(&self, _: &Request<'_>, _: Seal) -> Result<usize> {
            self.submits.set(self.submits.get() + 1);
            self.outcome
        }
        fn fallback(&self) -> Option<&dyn Backend> {
            self.fallback
        }
    }

    fn file() -> File {
        File::inspect(crate::request::file::scratch_fd()).unwrap()
    }

    fn device_buffer() -> Buffer {
        Buffer {
            base: crate::vocab::Address::new(0x10_0000),
            length: 1 << 20,
            memory: MemoryType::Device,
            device: 0,
        }
    }

    /// The process's fallback-retry counter (the retry tests run one at a time).
    fn retries() -> u64 {
        crate::stats::snapshot_self()
            .ext
            .expect("our block has the extension")
            .fallback_retries
    }
    static RETRY_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn scores_are_amds() {
        assert_eq!(Score::FASTPATH, Score::Accept(100));
        assert_eq!(Score::FALLBACK, Score::Accept(1));
        assert_eq!(Score::HOST, Score::Accept(1));
    }

    /// A backend that counts how often it is scored, with a ceiling.
    struct Capped {
        kind: BackendKind,
        ceiling: u8,
        score: Score,
        asked: Cell<u32>,
    }

    impl Backend for Capped {
        fn kind(&self) -> BackendKind {
            self.kind
        }
        fn ceiling(&self) -> u8 {
            self.ceiling
        }
        fn score(&self, _: &Request<'_>) -> Score {
            self.asked.set(self.asked.get() + 1);
            self.score
        }
        fn submit(&self, _: &Request<'_>, _: Seal) -> Result<usize> {
            Ok(0)
        }
    }

    #[test]
    fn backends_that_cannot_win_are_not_asked() {
        let (f, b) = (file(), device_buffer());
        let req = Request::new(Direction::Read, &f, &b, 4096, 0, 0);
        let capped = |kind, ceiling, score| Capped {
            kind,
            ceiling,
            score,
            asked: Cell::new(0),
        };
        let (one, two) = (BackendKind::Fallback, BackendKind::Host);
        // An acceptance of 1, then a backend that never scores above 1: a tie at best.
        let (first, second) = (
            capped(one, 1, Score::Accept(1)),
            capped(two, 1, Score::Accept(1)),
        );
        let list: [&dyn Backend; 2] = [&first, &second];
        assert_eq!(select(list, &req).map(|(k, _)| k), Ok(one));
        assert_eq!((first.asked.get(), second.asked.get()), (1, 0));
        // A later backend that could score higher is asked, and wins.
        let (first, second) = (
            capped(one, 1, Score::Accept(1)),
            capped(two, 100, Score::Accept(100)),
        );
        let list: [&dyn Backend; 2] = [&first, &second];
        assert_eq!(select(list, &req).map(|(k, _)| k), Ok(two));
        assert_eq!((first.asked.get(), second.asked.get()), (1, 1));
        // A refusal stops nothing: everybody is asked until someone accepts.
        let (first, second) = (
            capped(one, 1, Score::Refuse(Refusal::CompatForced)),
            capped(two, 1, Score::Accept(1)),
        );
        let list: [&dyn Backend; 2] = [&first, &second];
        assert_eq!(select(list, &req).map(|(k, _)| k), Ok(two));
        assert_eq!((first.asked.get(), second.asked.get()), (1, 1));
    }

    #[test]
    fn the_strictly_highest_score_wins() {
        let (f, b) = (file(), device_buffer());
        let req = Request::new(Direction::Read, &f, &b, 4096, 0, 0);
        let a = mock(BackendKind::Fastpath, Score::Accept(0), Ok(1));
        let m = mock(BackendKind::Fallback, Score::Accept(2), Ok(2));
        let c = mock(BackendKind::Host, Score::Accept(1), Ok(3));
        let list: [&dyn Backend; 3] = [&a, &m, &c];
        let (kind, refusals) = select(list, &req).unwrap();
        assert_eq!(kind, BackendKind::Fallback);
        assert_eq!(refusals, Refusals::default());
        assert_eq!(io(&m, &req, None), Ok(2));
        assert_eq!(
            (a.submits.get(), m.submits.get(), c.submits.get()),
            (0, 1, 0)
        );
    }

    #[test]
    fn ties_keep_the_earlier_backend() {
        let (f, b) = (file(), device_buffer());
        let req = Request::new(Direction::Read, &f, &b, 4096, 0, 0);
        let r = Score::Refuse(Refusal::UnalignedSize);
        let a = mock(BackendKind::Fastpath, r, Ok(1));
        let m = mock(BackendKind::Fallback, Score::Accept(1), Ok(2));
        let c = mock(BackendKind::Host, Score::Accept(1), Ok(3));
        let (kind, refusals) = select([&a as &dyn Backend, &m, &c], &req).unwrap();
        assert_eq!(kind, BackendKind::Fallback);
        assert_eq!(
            refusals.of(BackendKind::Fastpath),
            Some(Refusal::UnalignedSize)
        );
        assert_eq!(
            select([&c as &dyn Backend, &m], &req).unwrap().0,
            BackendKind::Host
        );
        let z = mock(BackendKind::Fallback, Score::Accept(0), Ok(2));
        assert_eq!(
            select([&z as &dyn Backend, &a], &req).unwrap().0,
            BackendKind::Fallback,
            "0 accepts"
        );
    }

    #[test]
    fn all_refuse_names_every_refusal() {
        let (f, b) = (file(), device_buffer());
        let req = Request::new(Direction::Write, &f, &b, 4096, 0, 0);
        let a = mock(
            BackendKind::Fastpath,
            Score::Refuse(Refusal::CompatForced),
            Ok(1),
        );
        let m = mock(
            BackendKind::Fallback,
            Score::Refuse(Refusal::CompatDisabled),
            Ok(2),
        );
        let c = mock(
            BackendKind::Host,
            Score::Refuse(Refusal::NotHostMemory),
            Ok(3),
        );
        let refusals = select([&a as &dyn Backend, &m, &c], &req).unwrap_err();
        assert_eq!(
            refusals.iter().collect::<Vec<_>>(),
            [
                (BackendKind::Fastpath, Refusal::CompatForced),
                (BackendKind::Fallback, Refusal::CompatDisabled),
                (BackendKind::Host, Refusal::NotHostMemory),
            ]
        );
        let e = no_backend(refusals);
        assert_eq!(
            e,
            Error::NoBackend(refusals),
            "hipFileInternalError at the C door"
        );
        assert_eq!(
            e.to_string(),
            "no backend accepts the request (fastpath refuses: compat mode is forced; \
             fallback refuses: compat mode is not allowed; \
             host refuses: the buffer is not host memory)"
        );
        assert_eq!(
            (a.submits.get(), m.submits.get(), c.submits.get()),
            (0, 0, 0)
        );
    }

    #[test]
    fn retried_on_enodev_and_eremoteio_only_and_counted_once() {
        let _one = RETRY_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (f, b) = (file(), device_buffer());
        let req = Request::new(Direction::Read, &f, &b, 4096, 0, 0);
        for (errno, retried) in [
            (libc::ENODEV, true),
            (libc::EREMOTEIO, true),
            (libc::EIO, false),
            (libc::EINVAL, false),
            (libc::EOPNOTSUPP, false),
        ] {
            let fb = mock(BackendKind::Fallback, Score::FALLBACK, Ok(77));
            let mut fp = mock(
                BackendKind::Fastpath,
                Score::FASTPATH,
                Err(Error::GpuDirect(errno)),
            );
            fp.fallback = Some(&fb);
            let before = retries();
            let r = io(&fp, &req, None);
            let after = retries();
            assert_eq!(fp.submits.get(), 1, "errno {errno}");
            if retried {
                assert_eq!(r, Ok(77), "errno {errno}");
                assert_eq!(fb.submits.get(), 1, "errno {errno}");
                assert_eq!(after - before, 1, "errno {errno}: the retry counted once");
            } else {
                assert_eq!(r, Err(Error::GpuDirect(errno)));
                assert_eq!(fb.submits.get(), 0, "errno {errno}");
                assert_eq!(after, before, "errno {errno}");
            }
        }
        // The same errno from another backend is not a GPU-direct failure: not retried.
        let fb = mock(BackendKind::Fallback, Score::FALLBACK, Ok(77));
        let mut host = mock(BackendKind::Host, Score::HOST, Err(Error::Os(libc::ENODEV)));
        host.fallback = Some(&fb);
        assert_eq!(io(&host, &req, None), Err(Error::Os(libc::ENODEV)));
        assert_eq!(fb.submits.get(), 0);
        // A runtime failure is not an errno of the kernel path: not retried.
        let fb = mock(BackendKind::Fallback, Score::FALLBACK, Ok(77));
        let mut fp = mock(
            BackendKind::Fastpath,
            Score::FASTPATH,
            Err(Error::Runtime(crate::runtime::RtError::UNKNOWN)),
        );
        fp.fallback = Some(&fb);
        assert_eq!(
            io(&fp, &req, None),
            Err(Error::Runtime(crate::runtime::RtError::UNKNOWN))
        );
        assert_eq!(fb.submits.get(), 0);
    }

    #[test]
    fn not_retried_when_the_fallback_refuses_or_compat_mode_is_off() {
        let _one = RETRY_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (f, b) = (file(), device_buffer());
        let req = Request::new(Direction::Read, &f, &b, 4096, 0, 0);
        let fb = mock(
            BackendKind::Fallback,
            Score::Refuse(Refusal::NotDeviceMemory),
            Ok(77),
        );
        let mut fp = mock(
            BackendKind::Fastpath,
            Score::FASTPATH,
            Err(Error::GpuDirect(libc::ENODEV)),
        );
        fp.fallback = Some(&fb);
        let before = retries();
        assert_eq!(io(&fp, &req, None), Err(Error::GpuDirect(libc::ENODEV)));
        assert_eq!(fb.submits.get(), 0);
        assert_eq!(retries(), before);

        // The real fallback with compat mode off refuses, so the failure stands.
        let env = Env::from_lookup(|k| (k == "HIPFILE_ALLOW_COMPAT_MODE").then(|| "false".into()));
        let config = Config::resolve(&env, &Staged::default());
        let rt: &'static dyn Runtime =
            Box::leak(Box::new(crate::runtime::host::HostRuntime::new("test")));
        let engine = Engine::new(rt, &config);
        let real = Fallback::new(&engine, &config);
        assert_eq!(real.score(&req), Score::Refuse(Refusal::CompatDisabled));
        let mut fp = mock(
            BackendKind::Fastpath,
            Score::FASTPATH,
            Err(Error::GpuDirect(libc::EREMOTEIO)),
        );
        fp.fallback = Some(&real);
        assert_eq!(io(&fp, &req, None), Err(Error::GpuDirect(libc::EREMOTEIO)));
        assert_eq!(retries(), before);

        // Without a registered fallback nothing is retried either.
        let fp = mock(
            BackendKind::Fastpath,
            Score::FASTPATH,
            Err(Error::GpuDirect(libc::ENODEV)),
        );
        assert_eq!(io(&fp, &req, None), Err(Error::GpuDirect(libc::ENODEV)));
        assert_eq!(retries(), before);
    }

    #[test]
    fn a_failure_on_the_fallback_is_final() {
        let _one = RETRY_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (f, b) = (file(), device_buffer());
        let req = Request::new(Direction::Write, &f, &b, 4096, 0, 0);
        let last = mock(BackendKind::Host, Score::HOST, Ok(5));
        let mut fb = mock(
            BackendKind::Fallback,
            Score::FALLBACK,
            Err(Error::Os(libc::ENODEV)),
        );
        fb.fallback = Some(&last);
        let mut fp = mock(
            BackendKind::Fastpath,
            Score::FASTPATH,
            Err(Error::GpuDirect(libc::ENODEV)),
        );
        fp.fallback = Some(&fb);
        let before = retries();
        assert_eq!(io(&fp, &req, None), Err(Error::Os(libc::ENODEV)));
        assert_eq!(
            (fp.submits.get(), fb.submits.get(), last.submits.get()),
            (1, 1, 0)
        );
        assert_eq!(retries() - before, 1, "one retry, never a second");
    }
}
