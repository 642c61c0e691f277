//! Registered streams and the queues of stream-ordered I/O.
//!
//! A registration (flags and device) survives driver close, as upstream. A queue
//! ([`StreamQueue`]) holds a stream's pinned bounce buffers, the word it waits on and its
//! worker thread, reused by every operation on the stream: created when a stream is registered
//! on an open driver, or at the first stream-ordered operation of a driver open (registered or
//! not). It lives until the stream is deregistered (which waits for its queued operations
//! first) or the driver closes (which waits for every queue); an unregistered stream's queue is
//! kept until then, since freeing pinned memory synchronises the device and must not happen
//! while the stream may still wait for one of our operations.
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::stream_queue::{StreamFlags, StreamQueue};
use super::Session;
use crate::error::{Error, Result};
use crate::runtime::{Runtime, StreamHandle};

/// A registered stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamInfo {
    /// Its flags.
    pub flags: StreamFlags,
    /// The stream's device.
    pub device: i32,
}

/// Streams by their `hipStream_t` value.
#[derive(Default)]
pub struct StreamRegistry {
    map: Mutex<HashMap<StreamHandle, StreamInfo>>,
    queues: Mutex<HashMap<StreamHandle, Arc<StreamQueue>>>,
}

impl StreamRegistry {
    /// Register `stream` with `flags`.
    pub fn register(
        &self,
        rt: &dyn Runtime,
        stream: StreamHandle,
        flags: StreamFlags,
    ) -> Result<()> {
        if self.map.lock().contains_key(&stream) {
            return Err(Error::InvalidValue("stream already registered"));
        }
        let device = rt.stream_device(stream)?;
        let mut map = self.map.lock();
        if map.contains_key(&stream) {
            return Err(Error::InvalidValue("stream already registered"));
        }
        map.insert(stream, StreamInfo { flags, device });
        Ok(())
    }

    /// Deregister `stream`, after its queued operations finished; its queue (pinned buffers,
    /// word, thread) goes with the registration.
    pub fn deregister(&self, stream: StreamHandle) -> Result<()> {
        if !self.map.lock().contains_key(&stream) {
            return Err(Error::InvalidValue("stream not registered"));
        }
        let queue = self.queues.lock().get(&stream).cloned();
        if let Some(q) = &queue {
            q.drain();
        }
        let removed = self.map.lock().remove(&stream);
        if let Some(q) = queue {
            // Only the queue this call drained (a later one belongs to later submissions).
            let mut queues = self.queues.lock();
            if queues.get(&stream).is_some_and(|cur| Arc::ptr_eq(cur, &q)) {
                queues.remove(&stream);
            }
            drop(queues);
            q.shut_down();
        }
        removed
            .map(|_| ())
            .ok_or(Error::InvalidValue("stream not registered"))
    }

    /// The registration of `stream`, if any.
    pub fn info(&self, stream: StreamHandle) -> Option<StreamInfo> {
        self.map.lock().get(&stream).copied()
    }

    /// The queue of `stream` for this driver open, created on first use; `device` is the
    /// stream's device (known from the registration, or asked of the runtime once).
    pub(super) fn queue(
        &self,
        rt: &'static dyn Runtime,
        stream: StreamHandle,
        device: impl FnOnce() -> Result<i32>,
        session: &Session,
    ) -> Result<Arc<StreamQueue>> {
        if let Some(q) = self.queues.lock().get(&stream) {
            return Ok(q.clone());
        }
        // Created outside the lock: it allocates pinned memory and starts a thread.
        let q = Arc::new(StreamQueue::new(rt, stream, device()?, session)?);
        let mut queues = self.queues.lock();
        Ok(queues.entry(stream).or_insert(q).clone())
    }

    /// Forget the registration of `stream` again (its queue could not be created).
    pub(super) fn unregister(&self, stream: StreamHandle) {
        self.map.lock().remove(&stream);
    }

    /// The queue of `stream` if it has one.
    pub(super) fn existing_queue(&self, stream: StreamHandle) -> Option<Arc<StreamQueue>> {
        self.queues.lock().get(&stream).cloned()
    }

    /// At driver close: wait for every queue, then free them.
    pub(super) fn close_queues(&self) {
        let queues: Vec<Arc<StreamQueue>> = self.queues.lock().drain().map(|(_, q)| q).collect();
        for q in &queues {
            q.shut_down();
        }
    }
}
