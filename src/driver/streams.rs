//! Registered streams (`hipFileStreamRegister`): their flags, by `hipStream_t` value.
//!
//! A registration survives driver close, as upstream. A stream's value is only an address, which
//! runtimes give to the next stream created after one is destroyed; where the runtime can tell
//! streams apart for their whole life (`hipStreamGetId` / `cuStreamGetId`), a registration keeps
//! the stream's identity, and one found on another stream at the same address (the application
//! destroyed the registered stream without deregistering it) is dropped at the next lookup, so
//! its FIXED flags never apply to a stream that was not registered with them. Where the runtime
//! cannot tell (HIP before ROCm 6.2, CUDA before 12), registrations follow the address.
//! Nothing else is kept per stream: the device of a stream is asked at every submission.
#![deny(unsafe_code)]

use std::collections::HashMap;

use parking_lot::Mutex;

use super::ordered::StreamFlags;
use crate::error::{Error, Result};
use crate::runtime::{RtError, Runtime, StreamHandle, Streams};

/// A registered stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StreamInfo {
    /// Its flags.
    pub flags: StreamFlags,
    /// The stream's identity, where the runtime has one.
    id: Option<u64>,
}

/// Streams by their `hipStream_t` value.
#[derive(Default)]
pub(crate) struct StreamRegistry {
    map: Mutex<HashMap<StreamHandle, StreamInfo>>,
}

/// The identity of `stream`: `None` where the runtime has none to give.
fn identity(rt: &dyn Streams, stream: StreamHandle) -> Result<Option<u64>> {
    match rt.stream_id(stream) {
        Ok(id) => Ok(Some(id)),
        Err(e) if e == RtError::NOT_SUPPORTED => Ok(None),
        Err(e) => Err(e.into()),
    }
}

impl StreamRegistry {
    /// Register `stream` with `flags` (the runtime must know the stream: its device is asked).
    pub(crate) fn register(
        &self,
        rt: &dyn Runtime,
        stream: StreamHandle,
        flags: StreamFlags,
    ) -> Result<()> {
        let streams = rt.streams_or_unsupported()?;
        streams.stream_device(stream)?;
        let id = identity(streams, stream)?;
        if self.info(rt, stream).is_some() {
            return Err(Error::InvalidValue("stream already registered"));
        }
        let mut map = self.map.lock();
        if map.contains_key(&stream) {
            return Err(Error::InvalidValue("stream already registered"));
        }
        map.insert(stream, StreamInfo { flags, id });
        Ok(())
    }

    /// Forget the registration of `stream`; `InvalidValue` when there is none.
    pub(crate) fn deregister(&self, stream: StreamHandle) -> Result<()> {
        self.map
            .lock()
            .remove(&stream)
            .map(|_| ())
            .ok_or(Error::InvalidValue("stream not registered"))
    }

    /// Whether `stream` has a registration (a stale one included: deregistering it is fine).
    pub(crate) fn contains(&self, stream: StreamHandle) -> bool {
        self.map.lock().contains_key(&stream)
    }

    /// The registration of the stream now at `stream`, if it has one. A registration of an
    /// earlier stream at that address is dropped (logged).
    pub(crate) fn info(&self, rt: &dyn Runtime, stream: StreamHandle) -> Option<StreamInfo> {
        let info = *self.map.lock().get(&stream)?;
        let Some(id) = info.id else {
            return Some(info);
        };
        match rt
            .streams_or_unsupported()
            .and_then(|s| s.stream_id(stream))
        {
            Ok(now) if now == id => Some(info),
            _ => {
                let mut map = self.map.lock();
                if map.get(&stream) == Some(&info) {
                    map.remove(&stream);
                    tracing::info!(target: "hipfile", "stream {stream:#x} was registered, then destroyed without hipFileStreamDeregister: the stream now at that address is not registered");
                }
                None
            }
        }
    }
}
