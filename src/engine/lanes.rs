//! Lanes: a stream and two events, the GPU-side resources one participant needs to pipeline
//! its chunks. Created on first use for a device, pooled per device for the life of the
//! engine and destroyed with it. If the runtime cannot create streams or events, pipelining is
//! switched off (logged once) and the engine copies synchronously.
#![deny(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use crate::runtime::{EventHandle, Runtime, StreamHandle};

/// A stream with two events, owned by one participant at a time.
#[derive(Debug)]
pub(crate) struct Lane {
    /// Device the stream belongs to.
    pub device: i32,
    /// The stream (never the default stream).
    pub stream: StreamHandle,
    /// One event per bounce buffer.
    pub events: [EventHandle; 2],
}

/// Idle lanes of one engine.
#[derive(Default)]
pub(crate) struct LanePool {
    free: Mutex<Vec<Lane>>,
    disabled: AtomicBool,
}

impl LanePool {
    /// An idle lane for the calling thread's current `device`, creating one if needed.
    pub(crate) fn get(&self, rt: &dyn Runtime, device: i32) -> Option<Lane> {
        if self.disabled.load(Ordering::Relaxed) {
            return None;
        }
        {
            let mut free = self.free.lock();
            if let Some(i) = free.iter().position(|l| l.device == device) {
                return Some(free.swap_remove(i));
            }
        }
        match Self::create(rt, device) {
            Ok(l) => Some(l),
            Err(e) => {
                if !self.disabled.swap(true, Ordering::Relaxed) {
                    tracing::warn!(target: "hipfile", "cannot create GPU streams/events ({e}); copies will not be pipelined");
                }
                None
            }
        }
    }

    fn create(rt: &dyn Runtime, device: i32) -> crate::runtime::RtResult<Lane> {
        let rt = rt.streams_or_unsupported()?;
        let stream = rt.stream_create()?;
        let e0 = match rt.event_create() {
            Ok(e) => e,
            Err(e) => {
                rt.stream_destroy(stream);
                return Err(e);
            }
        };
        let e1 = match rt.event_create() {
            Ok(e) => e,
            Err(e) => {
                rt.event_destroy(e0);
                rt.stream_destroy(stream);
                return Err(e);
            }
        };
        Ok(Lane {
            device,
            stream,
            events: [e0, e1],
        })
    }

    /// A lane (see [`LanePool::get`]), returned to the pool when the guard drops (also when
    /// unwinding).
    pub(crate) fn checkout(&self, rt: &dyn Runtime, device: i32) -> Option<LaneGuard<'_>> {
        self.get(rt, device).map(|lane| LaneGuard {
            pool: self,
            lane: Some(lane),
        })
    }

    /// Give a lane back.
    pub(crate) fn put(&self, lane: Lane) {
        self.free.lock().push(lane);
    }

    /// Destroy every idle lane.
    pub(crate) fn destroy_all(&self, rt: &dyn Runtime) {
        let Some(rt) = rt.streams() else {
            return;
        };
        for lane in self.free.lock().drain(..) {
            for e in lane.events {
                rt.event_destroy(e);
            }
            rt.stream_destroy(lane.stream);
        }
    }
}

/// A lane checked out of its pool; derefs to the [`Lane`].
pub(crate) struct LaneGuard<'a> {
    pool: &'a LanePool,
    lane: Option<Lane>,
}

impl std::ops::Deref for LaneGuard<'_> {
    type Target = Lane;
    fn deref(&self) -> &Lane {
        self.lane.as_ref().expect("present until drop")
    }
}

impl Drop for LaneGuard<'_> {
    fn drop(&mut self) {
        if let Some(l) = self.lane.take() {
            self.pool.put(l);
        }
    }
}
