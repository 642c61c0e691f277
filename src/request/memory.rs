//! The memory of an I/O: a buffer checked for registration, or an unregistered pointer
//! resolved for one I/O.
#![deny(unsafe_code)]

use crate::error::{Error, Result};
use crate::runtime::{RtError, Runtime};
use crate::vocab::{Address, MemoryType};

/// A registered buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Buffer {
    /// Base address as the application registered it.
    pub base: Address,
    /// Registered length in bytes.
    pub length: usize,
    /// Memory kind.
    pub memory: MemoryType,
    /// Owning device (`-1` for host memory).
    pub device: i32,
}

/// Map a failure of the pointer-attribute query as registration reports it: `InvalidValue` is the caller's fault, anything else the runtime's.
fn attribute_error(e: RtError) -> Error {
    if e == RtError::INVALID_VALUE {
        Error::InvalidValue("the runtime does not know this pointer")
    } else {
        Error::Runtime(e)
    }
}

/// Map a failure of the address-range query: `NotFound` and
/// `InvalidValue` are the caller's fault, anything else the runtime's.
fn range_error(e: RtError) -> Error {
    if e == RtError::NOT_FOUND {
        Error::InvalidValue("the pointer is not inside an allocation")
    } else {
        attribute_error(e)
    }
}

/// Check a buffer for registration and build its record (plus host
/// memory when the host backend is on).
pub(crate) fn validate(
    rt: &dyn Runtime,
    base: Address,
    length: usize,
    host_io: bool,
) -> Result<Buffer> {
    if base.is_null() {
        return Err(Error::InvalidValue("NULL buffer"));
    }
    let info = rt.pointer_info(base).map_err(attribute_error)?;
    match info.memory_type {
        MemoryType::Device => {
            let (alloc_base, alloc_size) = rt.address_range(base).map_err(range_error)?;
            check_range(base.get(), length, alloc_base.get(), alloc_size)?;
        }
        MemoryType::Host | MemoryType::Unregistered if host_io => {
            // Pinned memory has a known range; pageable memory does not and is taken as given.
            if let Ok((alloc_base, alloc_size)) = rt.address_range(base) {
                check_range(base.get(), length, alloc_base.get(), alloc_size)?;
            }
        }
        _ => return Err(Error::MemoryTypeInvalid),
    }
    Ok(Buffer {
        base,
        length,
        memory: info.memory_type,
        device: info.device,
    })
}

/// The range rule of AMD's development branch: the buffer must lie inside one allocation.
pub(crate) fn check_range(
    ptr: usize,
    length: usize,
    alloc_base: usize,
    alloc_size: usize,
) -> Result<()> {
    if ptr < alloc_base {
        return Err(Error::PointerRange);
    }
    let offset = ptr - alloc_base;
    if offset >= alloc_size || length > alloc_size - offset {
        return Err(Error::PointerRange);
    }
    Ok(())
}

/// Resolve an unregistered pointer for one I/O call: the usable
/// length runs to the end of its allocation (for pageable host memory the runtime knows
/// nothing and the range is unbounded).
#[inline(never)]
pub(crate) fn resolve_unregistered(
    rt: &dyn Runtime,
    base: Address,
    host_io: bool,
) -> Result<Buffer> {
    if base.is_null() {
        return Err(Error::InvalidValue("NULL buffer"));
    }
    let info = rt.pointer_info(base)?;
    let at = base.get();
    let length = match info.memory_type {
        MemoryType::Device => {
            let (alloc_base, alloc_size) = rt.address_range(base)?;
            (alloc_base.get() + alloc_size).saturating_sub(at)
        }
        MemoryType::Host | MemoryType::Unregistered if host_io => match rt.address_range(base) {
            Ok((alloc_base, alloc_size)) if alloc_base.get() <= at => {
                (alloc_base.get() + alloc_size).saturating_sub(at)
            }
            _ => usize::MAX - at,
        },
        _ => return Err(Error::MemoryTypeInvalid),
    };
    Ok(Buffer {
        base,
        length,
        memory: info.memory_type,
        device: info.device,
    })
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
}
