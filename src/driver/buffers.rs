//! Registered buffers (behaviour §B.6–B.7) and the resolution of an unregistered buffer
//! pointer for one I/O (behaviour §B.8 step 3).
//!
//! Only the exact registered base address is a key: a pointer inside a registered range is
//! resolved like an unregistered one, from the runtime's allocation range.
#![deny(unsafe_code)]

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::runtime::{RtError, Runtime};
use crate::vocab::MemoryType;

/// A registered buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// Base address as the application registered it.
    pub base: usize,
    /// Registered length in bytes.
    pub length: usize,
    /// Registration flags (stored, not interpreted: behaviour §J.2.11).
    pub flags: i32,
    /// Memory kind.
    pub memory: MemoryType,
    /// Owning device (`-1` for host memory).
    pub device: i32,
}

/// Map a failure of the pointer-attribute query as registration reports it (behaviour §B.6
/// step 4): `InvalidValue` is the caller's fault, anything else the runtime's.
fn attribute_error(e: RtError) -> Error {
    if e == RtError::INVALID_VALUE {
        Error::InvalidValue("the runtime does not know this pointer")
    } else {
        Error::Runtime(e)
    }
}

/// Map a failure of the address-range query (behaviour §B.6 step 6): `NotFound` and
/// `InvalidValue` are the caller's fault, anything else the runtime's.
fn range_error(e: RtError) -> Error {
    if e == RtError::NOT_FOUND {
        Error::InvalidValue("the pointer is not inside an allocation")
    } else {
        attribute_error(e)
    }
}

/// Check a buffer for registration and build its record (behaviour §B.6 steps 3–6, plus host
/// memory when the host backend is on).
pub fn validate(
    rt: &dyn Runtime,
    base: usize,
    length: usize,
    flags: i32,
    host_io: bool,
) -> Result<Buffer> {
    if base == 0 {
        return Err(Error::InvalidValue("NULL buffer"));
    }
    let info = rt.pointer_info(base).map_err(attribute_error)?;
    match info.memory_type {
        MemoryType::Device => {
            let (alloc_base, alloc_size) = rt.address_range(base).map_err(range_error)?;
            check_range(base, length, alloc_base, alloc_size)?;
        }
        MemoryType::Host | MemoryType::Unregistered if host_io => {
            // Pinned memory has a known range; pageable memory does not and is taken as given.
            if let Ok((alloc_base, alloc_size)) = rt.address_range(base) {
                check_range(base, length, alloc_base, alloc_size)?;
            }
        }
        _ => return Err(Error::MemoryTypeInvalid),
    }
    Ok(Buffer {
        base,
        length,
        flags,
        memory: info.memory_type,
        device: info.device,
    })
}

/// The [D] range rule of behaviour §B.6 step 6.
pub fn check_range(ptr: usize, length: usize, alloc_base: usize, alloc_size: usize) -> Result<()> {
    if ptr < alloc_base {
        return Err(Error::PointerRange);
    }
    let offset = ptr - alloc_base;
    if offset >= alloc_size || length > alloc_size - offset {
        return Err(Error::PointerRange);
    }
    Ok(())
}

/// Resolve an unregistered pointer for one I/O call (behaviour §B.8 step 3): the usable
/// length runs to the end of its allocation (for pageable host memory the runtime knows
/// nothing and the range is unbounded).
#[inline(never)]
pub fn resolve_unregistered(rt: &dyn Runtime, base: usize, host_io: bool) -> Result<Buffer> {
    if base == 0 {
        return Err(Error::InvalidValue("NULL buffer"));
    }
    let info = rt.pointer_info(base)?;
    let length = match info.memory_type {
        MemoryType::Device => {
            let (alloc_base, alloc_size) = rt.address_range(base)?;
            (alloc_base + alloc_size).saturating_sub(base)
        }
        MemoryType::Host | MemoryType::Unregistered if host_io => match rt.address_range(base) {
            Ok((alloc_base, alloc_size)) if alloc_base <= base => {
                (alloc_base + alloc_size).saturating_sub(base)
            }
            _ => usize::MAX - base,
        },
        _ => return Err(Error::MemoryTypeInvalid),
    };
    Ok(Buffer {
        base,
        length,
        flags: 0,
        memory: info.memory_type,
        device: info.device,
    })
}

/// Registered buffers by exact base address: a vector sorted by base. A look-up is a binary
/// search (a handful of instructions for the few buffers applications register: target T9);
/// registration and deregistration, rare next to I/O, shift the tail.
#[derive(Default)]
pub struct BufferRegistry {
    sorted: Vec<(usize, Arc<Buffer>)>,
}

impl BufferRegistry {
    #[inline(always)]
    fn find(&self, base: usize) -> Result<usize, usize> {
        self.sorted.binary_search_by_key(&base, |(b, _)| *b)
    }

    /// Whether `base` is registered.
    pub fn contains(&self, base: usize) -> bool {
        self.find(base).is_ok()
    }

    /// Insert a validated buffer.
    pub fn insert(&mut self, buffer: Buffer) -> Result<()> {
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
    pub fn get(&self, base: usize) -> Option<&Arc<Buffer>> {
        self.find(base).ok().map(|i| &self.sorted[i].1)
    }

    /// Remove a registration (behaviour §B.7): not registered → 5024; in use → internal error.
    pub fn remove(&mut self, base: usize) -> Result<()> {
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
    pub fn clear(&mut self) {
        self.sorted.clear();
    }

    /// Number of registrations.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_rule_matches_the_test_vectors() {
        let k4 = 4096;
        // 4 KiB allocation, length 8192 → range error.
        assert_eq!(
            check_range(0x10000, 8192, 0x10000, k4),
            Err(Error::PointerRange)
        );
        // ptr+4096 into an 8 KiB allocation, length 4096 → OK; 8192 → range error.
        assert_eq!(check_range(0x11000, 4096, 0x10000, 8192), Ok(()));
        assert_eq!(
            check_range(0x11000, 8192, 0x10000, 8192),
            Err(Error::PointerRange)
        );
        // length UINT64_MAX → range error.
        assert_eq!(
            check_range(0x10000, usize::MAX, 0x10000, k4),
            Err(Error::PointerRange)
        );
        // A range ending exactly at UINTPTR_MAX is fine.
        let base = usize::MAX - k4 + 1;
        assert_eq!(check_range(base, k4, base, k4), Ok(()));
        // Pointer before the base, or at base+size → range error.
        assert_eq!(check_range(0xfff, 1, 0x1000, k4), Err(Error::PointerRange));
        assert_eq!(check_range(0x2000, 0, 0x1000, k4), Err(Error::PointerRange));
        // length 0 is accepted.
        assert_eq!(check_range(0x1000, 0, 0x1000, k4), Ok(()));
    }

    #[test]
    fn registry_rules() {
        let mut r = BufferRegistry::default();
        let b = Buffer {
            base: 0x1000,
            length: 10,
            flags: 0,
            memory: MemoryType::Device,
            device: 0,
        };
        r.insert(b.clone()).unwrap();
        assert_eq!(r.insert(b), Err(Error::MemoryAlreadyRegistered));
        assert!(r.get(0x1001).is_none(), "interior pointers are not keys");
        let held = r.get(0x1000).cloned().unwrap();
        assert!(matches!(r.remove(0x1000), Err(Error::Internal(_))));
        drop(held);
        assert_eq!(r.remove(0x1000), Ok(()));
        assert_eq!(r.remove(0x1000), Err(Error::MemoryNotRegistered));
    }

    #[test]
    fn registry_finds_exact_bases_among_many() {
        let mut r = BufferRegistry::default();
        let buffer = |base| Buffer {
            base,
            length: 0x100,
            flags: 0,
            memory: MemoryType::Device,
            device: 1,
        };
        // Inserted out of order; looked up by exact base only.
        for base in [0x9000, 0x1000, 0x5000, 0x3000, 0x7000] {
            r.insert(buffer(base)).unwrap();
        }
        assert_eq!(r.len(), 5);
        for base in [0x1000, 0x3000, 0x5000, 0x7000, 0x9000] {
            assert_eq!(r.get(base).map(|b| b.base), Some(base));
            assert!(r.get(base + 1).is_none());
            assert!(r.contains(base));
        }
        assert!(r.get(0).is_none() && r.get(usize::MAX).is_none());
        assert_eq!(
            r.insert(buffer(0x5000)),
            Err(Error::MemoryAlreadyRegistered)
        );
        assert_eq!(r.remove(0x5000), Ok(()));
        assert!(r.get(0x5000).is_none());
        assert_eq!(r.get(0x7000).map(|b| b.base), Some(0x7000));
        r.clear();
        assert!(r.is_empty());
    }
}
