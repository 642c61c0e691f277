//! Registered streams. Registrations survive driver close, as upstream.
#![deny(unsafe_code)]

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::runtime::{Runtime, StreamHandle};

/// Flags a stream may be registered with (`HIPFILE_STREAM_FLAGS_MASK`).
pub const STREAM_FLAGS_MASK: u32 = 0xf;

/// A registered stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamInfo {
    /// `HIPFILE_STREAM_*` flags.
    pub flags: u32,
    /// The stream's device.
    pub device: i32,
}

/// Streams by their `hipStream_t` value.
#[derive(Default)]
pub struct StreamRegistry {
    map: Mutex<HashMap<StreamHandle, StreamInfo>>,
}

impl StreamRegistry {
    /// Register `stream` with `flags`.
    pub fn register(&self, rt: &dyn Runtime, stream: StreamHandle, flags: u32) -> Result<()> {
        if flags & !STREAM_FLAGS_MASK != 0 {
            return Err(Error::InvalidValue("unknown stream flags"));
        }
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

    /// Deregister `stream`.
    pub fn deregister(&self, stream: StreamHandle) -> Result<()> {
        self.map
            .lock()
            .remove(&stream)
            .map(|_| ())
            .ok_or(Error::InvalidValue("stream not registered"))
    }
}
