//! Registered files: the registry from handle to [`File`].
//!
//! Handles are generation-tagged slot keys turned into pointer-sized tokens: never NULL, never
//! dereferenced, and a stale handle fails its lookup even after its slot is reused.
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::fmt;
use std::os::fd::RawFd;
use std::sync::Arc;

use super::slots::Slots;
use crate::error::{Error, Result};
use crate::request::file::File;

/// An opaque file handle token: `(generation << 32) | (slot + 1)`; never 0. Only the C door
/// turns a handle's value into a token and back; everything else passes it through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileToken(usize);

impl FileToken {
    /// The token of a handle's value as C passed it. Any value will do: one this registry
    /// never gave out, or a stale one, fails its lookup.
    pub(crate) fn from_c_handle(value: usize) -> FileToken {
        FileToken(value)
    }

    /// The value of the handle C is given.
    pub(crate) fn c_handle(self) -> usize {
        self.0
    }
}

/// Logs show the handle as C saw it.
impl fmt::LowerHex for FileToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

/// Registered files by handle and by client descriptor.
#[derive(Default)]
pub(crate) struct FileRegistry {
    slots: Slots<Arc<File>>,
    by_fd: HashMap<RawFd, usize>,
}

impl FileRegistry {
    /// Insert a file; `HandleAlreadyRegistered` when its client descriptor is registered. A
    /// registered number whose descriptor the application closed and reused for another file
    /// does not block the new registration: the old handle keeps reaching the old file.
    pub(crate) fn insert(&mut self, file: File) -> Result<FileToken> {
        if let Some(&index) = self.by_fd.get(&file.client_fd()) {
            let old = self.slots.at(index).expect("indexed slots are full");
            if old.same_registration(&file) {
                return Err(Error::HandleAlreadyRegistered);
            }
        }
        let fd = file.client_fd();
        let (key, index) = self.slots.insert(Arc::new(file));
        self.by_fd.insert(fd, index);
        Ok(FileToken(key))
    }

    /// The file behind a token, if the token is current.
    #[inline(always)]
    pub(crate) fn get(&self, token: FileToken) -> Option<&Arc<File>> {
        self.slots.get(token.0)
    }

    /// Remove a file; I/O that holds it keeps it alive until it ends. Returns the file, or
    /// `None` for an unknown or stale token.
    pub(crate) fn remove(&mut self, token: FileToken) -> Option<Arc<File>> {
        let (file, index) = self.slots.remove(token.0)?;
        if self.by_fd.get(&file.client_fd()) == Some(&index) {
            self.by_fd.remove(&file.client_fd());
        }
        Some(file)
    }

    /// Drop every registration (driver closed to 0). Files in use stay alive through their
    /// `Arc`s until their I/O ends.
    pub(crate) fn clear(&mut self) {
        self.slots.drain();
        self.by_fd.clear();
    }

    #[cfg(test)]
    /// Number of registered files (a superseded registration of a reused number included).
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    #[cfg(test)]
    /// Whether no file is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::file::scratch_fd as temp_fd;

    #[test]
    fn tokens_are_never_null_and_go_stale() {
        let mut r = FileRegistry::default();
        let fd = temp_fd();
        let t1 = r.insert(File::inspect(fd).unwrap()).unwrap();
        assert_ne!(t1.0, 0);
        assert_eq!(
            r.insert(File::inspect(fd).unwrap()).unwrap_err(),
            Error::HandleAlreadyRegistered
        );
        assert!(r.get(t1).is_some());
        assert!(r.remove(t1).is_some());
        assert!(r.get(t1).is_none());
        assert!(r.remove(t1).is_none());
        let t2 = r.insert(File::inspect(fd).unwrap()).unwrap();
        assert_ne!(t1, t2, "slot reused with a new generation");
        assert!(r.get(t1).is_none());
        assert!(r.get(FileToken(0)).is_none());
        assert!(r.get(FileToken(usize::MAX)).is_none());
        // A file held by in-flight I/O is removed; the I/O keeps it alive.
        let held = r.get(t2).cloned().unwrap();
        assert!(Arc::ptr_eq(&r.remove(t2).unwrap(), &held));
        assert!(r.is_empty());
    }

    #[test]
    fn a_token_is_the_value_c_holds() {
        let t = FileToken::from_c_handle(0x1_0000_0002);
        assert_eq!(t.c_handle(), 0x1_0000_0002);
        // What the logs print is the handle as C saw it.
        assert_eq!(format!("{t:#x}"), "0x100000002");
    }
}
