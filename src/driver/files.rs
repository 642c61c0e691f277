//! Registered files (behaviour §B.4–B.5, contract §3): the registry from handle to [`File`].
//!
//! Handles are generation-tagged slot keys turned into pointer-sized tokens: never NULL, never
//! dereferenced, and a stale handle fails its lookup even after its slot is reused.
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::request::file::File;

/// An opaque file handle token: `(generation << 32) | (slot + 1)`; never 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileToken(pub usize);

struct Slot {
    generation: u32,
    file: Option<Arc<File>>,
}

/// Registered files by handle and by client descriptor.
#[derive(Default)]
pub struct FileRegistry {
    slots: Vec<Slot>,
    free: Vec<usize>,
    by_fd: HashMap<RawFd, usize>,
}

impl FileRegistry {
    fn decode(token: FileToken) -> Option<(usize, u32)> {
        let t = token.0 as u64;
        let index = (t & 0xffff_ffff).checked_sub(1)? as usize;
        Some((index, (t >> 32) as u32))
    }

    /// Insert a file; `HandleAlreadyRegistered` when its client descriptor is registered. A
    /// registered number whose descriptor the application closed and reused for another file
    /// does not block the new registration: the old handle keeps reaching the old file.
    pub fn insert(&mut self, file: File) -> Result<FileToken> {
        if let Some(&index) = self.by_fd.get(&file.client_fd()) {
            let old = self.slots[index]
                .file
                .as_ref()
                .expect("indexed slots are full");
            if old.same_registration(&file) {
                return Err(Error::HandleAlreadyRegistered);
            }
        }
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 1,
                    file: None,
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        self.by_fd.insert(file.client_fd(), index);
        slot.file = Some(Arc::new(file));
        Ok(FileToken(
            ((u64::from(slot.generation) << 32) | (index as u64 + 1)) as usize,
        ))
    }

    /// The file behind a token, if the token is current.
    pub fn get(&self, token: FileToken) -> Option<&Arc<File>> {
        let (index, gen) = Self::decode(token)?;
        let slot = self.slots.get(index)?;
        if slot.generation != gen {
            return None;
        }
        slot.file.as_ref()
    }

    /// Remove a file unless I/O still holds it (behaviour §B.5: refused silently then).
    /// Returns whether it was removed.
    pub fn remove(&mut self, token: FileToken) -> bool {
        let Some((index, gen)) = Self::decode(token) else {
            return false;
        };
        let Some(slot) = self.slots.get_mut(index) else {
            return false;
        };
        if slot.generation != gen {
            return false;
        }
        let Some(file) = slot.file.as_ref() else {
            return false;
        };
        if Arc::strong_count(file) > 1 {
            return false;
        }
        let file = slot.file.take().expect("checked above");
        if self.by_fd.get(&file.client_fd()) == Some(&index) {
            self.by_fd.remove(&file.client_fd());
        }
        slot.generation = slot.generation.wrapping_add(1).max(1);
        self.free.push(index);
        true
    }

    /// Drop every registration (driver closed to 0). Files in use stay alive through their
    /// `Arc`s until their I/O ends.
    pub fn clear(&mut self) {
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if slot.file.take().is_some() {
                slot.generation = slot.generation.wrapping_add(1).max(1);
                self.free.push(index);
            }
        }
        self.by_fd.clear();
    }

    /// Number of registered files (a superseded registration of a reused number included).
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.file.is_some()).count()
    }

    /// Whether no file is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::IntoRawFd;

    fn temp_fd() -> RawFd {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(std::env::temp_dir().join(format!(
                "hipfile-files-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            )))
            .unwrap();
        f.into_raw_fd()
    }

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
        assert!(r.remove(t1));
        assert!(r.get(t1).is_none());
        assert!(!r.remove(t1));
        let t2 = r.insert(File::inspect(fd).unwrap()).unwrap();
        assert_ne!(t1, t2, "slot reused with a new generation");
        assert!(r.get(t1).is_none());
        assert!(r.get(FileToken(0)).is_none());
        assert!(r.get(FileToken(usize::MAX)).is_none());
        // A file held by in-flight I/O is not removed.
        let held = r.get(t2).cloned().unwrap();
        assert!(!r.remove(t2));
        drop(held);
        assert!(r.remove(t2));
        assert!(r.is_empty());
    }
}
