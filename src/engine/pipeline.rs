//! Chunk planning and parallel execution of one [`Transfer`].
//!
//! Participants (the calling thread and helper jobs on the worker pool) claim chunk indices
//! from one atomic counter, so a slow chunk never holds up the others and no per-chunk
//! allocation happens. The request's result is the contiguous byte count from its start: a
//! chunk that comes back short (end of file) bounds it. The first error fails the request and
//! stops further claims. The calling thread waits until every helper has finished before it
//! returns, which is what keeps the application's memory borrowed for exactly the call.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::{Inner, Target, Transfer};
use crate::error::{Error, Result};
use crate::runtime::Direction;
use crate::sys;

/// Shared state of one request.
struct Request {
    t: Transfer,
    chunk: usize,
    chunks: usize,
    next: AtomicUsize,
    /// Smallest end of a short chunk (`usize::MAX` while none came back short).
    short_end: AtomicUsize,
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
    /// Helpers still running.
    helpers: Mutex<usize>,
    helpers_done: Condvar,
}

impl Request {
    fn fail(&self, e: Error) {
        self.failed.store(true, Ordering::Release);
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    fn chunk_range(&self, i: usize) -> (usize, usize) {
        let off = i * self.chunk;
        (off, self.chunk.min(self.t.size - off))
    }
}

/// Run `t` to completion.
pub(crate) fn execute(inner: &Arc<Inner>, t: Transfer) -> Result<usize> {
    let chunk = inner.chunk;
    let chunks = t.size.div_ceil(chunk);
    let req = Arc::new(Request {
        t,
        chunk,
        chunks,
        next: AtomicUsize::new(0),
        short_end: AtomicUsize::new(usize::MAX),
        failed: AtomicBool::new(false),
        error: Mutex::new(None),
        helpers: Mutex::new(0),
        helpers_done: Condvar::new(),
    });
    let helpers = if t.size <= inner.inline_threshold || chunks <= 1 {
        0
    } else {
        inner.workers().map_or(0, |w| w.len().min(chunks - 1))
    };
    if helpers > 0 {
        *req.helpers.lock() = helpers;
        let workers = inner.workers().expect("helpers > 0 implies workers");
        for _ in 0..helpers {
            let inner = inner.clone();
            let req = req.clone();
            workers.spawn(Box::new(move || {
                // Count this helper out even if participate() panics.
                struct Done<'a>(&'a Request);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        if std::thread::panicking() {
                            self.0.fail(Error::Internal("panic in an I/O worker"));
                        }
                        let mut n = self.0.helpers.lock();
                        *n -= 1;
                        if *n == 0 {
                            self.0.helpers_done.notify_all();
                        }
                    }
                }
                let _done = Done(&req);
                participate(&inner, &req);
            }));
        }
    }
    participate(inner, &req);
    {
        let mut n = req.helpers.lock();
        while *n > 0 {
            req.helpers_done.wait(&mut n);
        }
    }
    if let Some(e) = req.error.lock().take() {
        return Err(e);
    }
    if t.dir == Direction::Write && t.sync {
        sys::io::fdatasync(t.fd).map_err(Error::Os)?;
    }
    Ok(req.short_end.load(Ordering::Acquire).min(t.size))
}

/// Claim and process chunks until none is left or the request failed.
fn participate(inner: &Inner, req: &Request) {
    if req.chunks == 0 {
        return;
    }
    let device = match req.t.target {
        Target::Device { device, .. } => Some(device),
        Target::Host { .. } => None,
    };
    let restore = match device.map(|d| inner.rt.enter_device(d)).transpose() {
        Ok(r) => r,
        Err(e) => return req.fail(Error::Runtime(e)),
    };
    let mut bounce = None;
    loop {
        if req.failed.load(Ordering::Acquire) {
            break;
        }
        let i = req.next.fetch_add(1, Ordering::AcqRel);
        if i >= req.chunks {
            break;
        }
        let (off, len) = req.chunk_range(i);
        // Chunks wholly beyond a short chunk (end of file) have nothing to do.
        if off >= req.short_end.load(Ordering::Acquire) {
            continue;
        }
        let result = match req.t.target {
            Target::Device { addr, .. } => {
                if bounce.is_none() {
                    match inner.bounce.get() {
                        Ok(b) => bounce = Some(b),
                        Err(e) => {
                            req.fail(e);
                            break;
                        }
                    }
                }
                let buf = &mut bounce.as_mut().expect("set above").as_mut_slice()[..len];
                device_chunk(inner, req.t, addr + off, buf, off)
            }
            Target::Host { addr } => host_chunk(req.t, addr + off, len, off),
        };
        match result {
            Ok(n) if n < len => {
                req.short_end.fetch_min(off + n, Ordering::AcqRel);
            }
            Ok(_) => {}
            Err(e) => {
                req.fail(e);
                break;
            }
        }
    }
    drop(bounce);
    if let Some(r) = restore {
        inner.rt.leave_device(r);
    }
}

/// One chunk between the file and device memory through a pinned bounce buffer.
fn device_chunk(inner: &Inner, t: Transfer, dev: usize, buf: &mut [u8], off: usize) -> Result<usize> {
    let file_off = t.offset + off as u64;
    match t.dir {
        Direction::Read => {
            let n = sys::io::pread_full(t.fd, buf, file_off).map_err(Error::Os)?;
            if n > 0 {
                inner.rt.copy_to_device(dev, &buf[..n])?;
            }
            Ok(n)
        }
        Direction::Write => {
            inner.rt.copy_from_device(buf, dev)?;
            sys::io::pwrite_full(t.fd, buf, file_off).map_err(Error::Os)
        }
    }
}

/// One chunk between the file and the application's host memory, without a bounce.
fn host_chunk(t: Transfer, addr: usize, len: usize, off: usize) -> Result<usize> {
    let file_off = t.offset + off as u64;
    match t.dir {
        // SAFETY: the application lent `size` bytes at the buffer for this call (the C
        // contract of hipFileRead); the chunk lies inside them and no other participant
        // touches the same chunk.
        Direction::Read => unsafe { sys::io::pread_full_raw(t.fd, addr as *mut u8, len, file_off) },
        // SAFETY: as above, for reading the application's memory.
        Direction::Write => unsafe { sys::io::pwrite_full_raw(t.fd, addr as *const u8, len, file_off) },
    }
    .map_err(Error::Os)
}
