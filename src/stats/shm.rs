//! The process's statistics block: a sealed memfd named `"AISSTATS"`,
//! mapped shared, holding a [`SharedStats`].
//!
//! Created once, lazily, by the first caller that needs it (the first recorded event, the
//! first `hipFileGetStats*` call, or [`super::init`]); kept for the life of the process and
//! never unmapped, so `&'static` references to it are sound. Creation order: `memfd_create`
//! (`MFD_ALLOW_SEALING | MFD_CLOEXEC`), `ftruncate` to [`SHARED_SIZE`], `mmap` read-write
//! shared, then the seals `F_SEAL_SHRINK | F_SEAL_FUTURE_WRITE`: readers can neither shrink
//! the block under us (which would fault their mapping) nor write into it, while our own
//! mapping, made before the seal, stays writable. Then the server starts ([`server::start`]).
//!
//! If any step fails (no `memfd_create`, or `EINVAL` from the seals on kernels before 5.1)
//! the block lives in private memory instead: statistics are still recorded and visible to
//! `hipFileGetStats*`, other processes just cannot read them. One warning is logged; the
//! application never sees an error.
//!
//! The level starts as `HIPFILE_STATS_LEVEL` (default 1, clamped to 3); every driver open
//! sets it to its configuration's `hipFileParamProfileStats` ([`set_level`]), which is that
//! variable unless the application set the parameter. The block exists and is served even at
//! level 0 (readers see the level); recording is then skipped.
//!
//! `fork()` after the block exists is unsupported: the child shares the parent's mapping, so
//! an `atfork` handler detaches the child (it records nothing more and does not serve or
//! stop the parent's server). A child that `exec`s starts afresh (every descriptor is
//! close-on-exec).
//!
//! Lock order: none. The only lock is the `OnceLock` initialisation itself.

use std::io;
#[cfg(any(test, feature = "test-internals"))]
use std::os::fd::BorrowedFd;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::layout::{RecordingSlot, SharedStats};
use super::server;

use crate::sys::shm::{self, SEAL_FUTURE_WRITE};

/// The process's block.
pub struct Shared {
    stats: &'static SharedStats,
    #[cfg_attr(not(any(test, feature = "test-internals")), allow(dead_code))]
    memfd: Option<Arc<OwnedFd>>,
    level: AtomicU64,
}

impl Shared {
    /// The block.
    pub fn stats(&self) -> &'static SharedStats {
        self.stats
    }

    /// The statistics level (0–3) in force.
    pub fn level(&self) -> u64 {
        self.level.load(Ordering::Relaxed)
    }

    /// The memfd other processes receive; `None` when the block is private.
    #[cfg(any(test, feature = "test-internals"))]
    pub fn memfd(&self) -> Option<BorrowedFd<'_>> {
        self.memfd.as_ref().map(|fd| {
            use std::os::fd::AsFd;
            fd.as_fd()
        })
    }
}

static SHARED: OnceLock<Shared> = OnceLock::new();

/// Set in a `fork()`ed child: stop recording into the parent's shared mapping.
static DETACHED: AtomicBool = AtomicBool::new(false);

/// The block, created on first use.
#[inline(always)]
pub fn shared() -> &'static Shared {
    SHARED.get_or_init(create)
}

/// The block while recording (level ≥ 1, not a detached child), else null: what
/// [`recording`] reads on the I/O path, one load instead of the `OnceLock` and two flags.
static RECORDING: RecordingSlot = RecordingSlot::new();

/// The block to record into, or `None` at level 0 or in a detached `fork()` child.
#[inline(always)]
pub fn recording() -> Option<&'static SharedStats> {
    match RECORDING.get() {
        Some(s) => Some(s),
        None => recording_slow(),
    }
}

/// [`recording`] before the block exists, at level 0 and in a detached child.
#[cold]
fn recording_slow() -> Option<&'static SharedStats> {
    let s = shared();
    if s.level() == 0 || DETACHED.load(Ordering::Relaxed) {
        None
    } else {
        Some(s.stats)
    }
}

/// Whether this process is a `fork()`ed child of the block's creator.
#[cfg(any(test, feature = "test-internals"))]
pub fn detached() -> bool {
    DETACHED.load(Ordering::Relaxed)
}

fn configured_level() -> u64 {
    u64::from(crate::config::env().stats_level.unwrap_or(1).min(3))
}

fn create() -> Shared {
    crate::log::init();
    let level = configured_level();
    // Before the block is published: every recording then uses the same stopwatch clock.
    super::clock::calibrate();
    register_atfork();
    match map_memfd() {
        Ok((memfd, stats)) => {
            stats.init_header(level);
            publish(stats, level);
            let memfd = Arc::new(memfd);
            server::start(Arc::clone(&memfd));
            Shared {
                stats,
                memfd: Some(memfd),
                level: AtomicU64::new(level),
            }
        }
        Err(e) => {
            tracing::warn!(
                target: "hipfile",
                "statistics are kept in private memory, invisible to other processes (shared memory failed: {e})"
            );
            let stats = private_block();
            stats.init_header(level);
            publish(stats, level);
            Shared {
                stats,
                memfd: None,
                level: AtomicU64::new(level),
            }
        }
    }
}

/// Make `stats` the block [`recording`] returns, when `level` records.
fn publish(stats: &'static SharedStats, level: u64) {
    if level > 0 && !DETACHED.load(Ordering::Relaxed) {
        RECORDING.set(Some(stats));
    }
}

/// Change the level (clamped to 3): what readers see in the block and whether this process
/// records. Counters keep their values.
pub fn set_level(level: u64) {
    let s = shared();
    let level = level.min(3);
    if s.level.swap(level, Ordering::Relaxed) == level {
        return;
    }
    s.stats.v1.level.store(level, Ordering::Relaxed);
    if level == 0 {
        RECORDING.set(None);
    } else {
        publish(s.stats, level);
    }
}

/// A zeroed block on the heap, leaked (it lives as long as the process).
pub(crate) fn private_block() -> &'static SharedStats {
    SharedStats::on_heap()
}

/// Create, size, map and seal the memfd.
fn map_memfd() -> io::Result<(OwnedFd, &'static SharedStats)> {
    SharedStats::in_memfd(c"AISSTATS", libc::F_SEAL_SHRINK | SEAL_FUTURE_WRITE)
}

/// Runs in the child right after `fork()`: only async-signal-safe work (an atomic store and
/// `close`), and nothing here can panic.
extern "C" fn after_fork_in_child() {
    DETACHED.store(true, Ordering::Relaxed);
    RECORDING.set(None);
    server::after_fork_in_child();
}

fn register_atfork() {
    let rc = shm::on_fork_child(after_fork_in_child);
    if rc != 0 {
        tracing::debug!(target: "hipfile", "pthread_atfork failed ({rc}); fork() children are not detached");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn the_block_is_a_sealed_memfd() {
        let s = shared();
        let Some(fd) = s.memfd() else {
            // Kernels without memfd seals keep the block private; nothing more to check.
            return;
        };
        let seals = shm::seals(fd.as_raw_fd()).unwrap();
        assert_eq!(
            seals & (libc::F_SEAL_SHRINK | SEAL_FUTURE_WRITE),
            libc::F_SEAL_SHRINK | SEAL_FUTURE_WRITE
        );
        assert_eq!(
            shm::regular_size(fd.as_raw_fd()).unwrap(),
            (true, crate::sys::stats_block::SHARED_SIZE as i64)
        );
        assert_eq!(s.stats().v1.version.load(Ordering::Relaxed), 1);
    }
}
