//! Registered buffers: the registry from base address to [`Buffer`].
//!
//! Only the exact registered base address is a key: a pointer inside a registered range is
//! resolved like an unregistered one, from the runtime's allocation range.
#![deny(unsafe_code)]

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::request::memory::Buffer;
use crate::vocab::Address;

/// Registered buffers by exact base address: a vector sorted by base. A look-up is a binary
/// search (a handful of instructions for the few buffers applications register: target T9);
/// registration and deregistration, rare next to I/O, shift the tail.
#[derive(Default)]
pub(crate) struct BufferRegistry {
    sorted: Vec<(Address, Arc<Buffer>)>,
}

impl BufferRegistry {
    #[inline(always)]
    fn find(&self, base: Address) -> Result<usize, usize> {
        self.sorted.binary_search_by_key(&base, |(b, _)| *b)
    }

    /// Whether `base` is registered.
    pub(crate) fn contains(&self, base: Address) -> bool {
        self.find(base).is_ok()
    }

    /// Insert a validated buffer.
    pub(crate) fn insert(&mut self, buffer: Buffer) -> Result<()> {
        match self.find(buffer.base) {
            Ok(_) => Err(Error::MemoryAlreadyRegistered),
            Err(at) => {
                self.sorted.insert(at, (buffer.base, Arc::new(buffer)));
                Ok(())
            }
        }
    }

    /// The registration whose base is exactly `base`.
    #[inline(always)]
    pub(crate) fn get(&self, base: Address) -> Option<&Arc<Buffer>> {
        self.find(base).ok().map(|i| &self.sorted[i].1)
    }

    /// Remove a registration: not registered → 5024; in use → internal error.
    pub(crate) fn remove(&mut self, base: Address) -> Result<()> {
        match self.find(base) {
            Err(_) => Err(Error::MemoryNotRegistered),
            Ok(i) if Arc::strong_count(&self.sorted[i].1) > 1 => {
                Err(Error::Internal("buffer is in use by I/O"))
            }
            Ok(i) => {
                self.sorted.remove(i);
                Ok(())
            }
        }
    }

    /// Drop every registration.
    pub(crate) fn clear(&mut self) {
        self.sorted.clear();
    }

    #[cfg(test)]
    /// Number of registrations.
    pub(crate) fn len(&self) -> usize {
        self.sorted.len()
    }

    #[cfg(test)]
    /// Whether nothing is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Address, MemoryType};

    fn a(raw: usize) -> Address {
        Address::new(raw)
    }

    #[test]
    fn registry_rules() {
        let mut r = BufferRegistry::default();
        let b = Buffer {
            base: a(0x1000),
            length: 10,
            memory: MemoryType::Device,
            device: 0,
        };
        r.insert(b.clone()).unwrap();
        assert_eq!(r.insert(b), Err(Error::MemoryAlreadyRegistered));
        assert!(r.get(a(0x1001)).is_none(), "interior pointers are not keys");
        let held = r.get(a(0x1000)).cloned().unwrap();
        assert!(matches!(r.remove(a(0x1000)), Err(Error::Internal(_))));
        drop(held);
        assert_eq!(r.remove(a(0x1000)), Ok(()));
        assert_eq!(r.remove(a(0x1000)), Err(Error::MemoryNotRegistered));
    }

    #[test]
    fn registry_finds_exact_bases_among_many() {
        let mut r = BufferRegistry::default();
        let buffer = |base| Buffer {
            base: a(base),
            length: 0x100,
            memory: MemoryType::Device,
            device: 1,
        };
        // Inserted out of order; looked up by exact base only.
        for base in [0x9000, 0x1000, 0x5000, 0x3000, 0x7000] {
            r.insert(buffer(base)).unwrap();
        }
        assert_eq!(r.len(), 5);
        for base in [0x1000, 0x3000, 0x5000, 0x7000, 0x9000] {
            assert_eq!(r.get(a(base)).map(|b| b.base), Some(a(base)));
            assert!(r.get(a(base + 1)).is_none());
            assert!(r.contains(a(base)));
        }
        assert!(r.get(a(0)).is_none() && r.get(a(usize::MAX)).is_none());
        assert_eq!(
            r.insert(buffer(0x5000)),
            Err(Error::MemoryAlreadyRegistered)
        );
        assert_eq!(r.remove(a(0x5000)), Ok(()));
        assert!(r.get(a(0x5000)).is_none());
        assert_eq!(r.get(a(0x7000)).map(|b| b.base), Some(a(0x7000)));
        r.clear();
        assert!(r.is_empty());
    }
}
