//! The simulated memory system: device allocations, pinned and registered host memory, and
//! managed memory, all tracked in one ordered table.
//!
//! Device addresses are handed out from a large `PROT_NONE` reservation (the "device address
//! space"), so the CPU faults on any dereference of a device pointer, as with a real GPU.
//! Allocations are bump-allocated with a 2 MiB aligned start and a 2 MiB guard gap, and device
//! addresses are never reused. Each device allocation's bytes live in its own anonymous,
//! `MAP_NORESERVE` shadow mapping, committed lazily by the kernel, so multi-GiB allocations cost
//! nothing until touched. Pinned, registered and managed memory are ordinary CPU memory whose
//! "device alias" is the same address.
//!
//! Lookups hold the table's read lock only to translate an address; callers move bytes after
//! releasing it. Freeing memory while a copy into it still runs is the application's bug, as it
//! is on a real GPU (the simulator's `hipFree` waits for the owning device's streams first,
//! as HIP's does).

use std::collections::BTreeMap;
use std::ptr;
use std::sync::LazyLock;

use parking_lot::RwLock;

use crate::counters::{self, Gauge};
use crate::errors::{SimError, SimResult};

/// Alignment of the start of every device allocation.
pub const DEVICE_ALIGN: usize = 2 << 20;
/// Unmapped gap left after every device allocation.
pub const GUARD_GAP: usize = 2 << 20;

/// What kind of memory a tracked region is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `hipMalloc` / `cuMemAlloc`: not CPU accessible; bytes live in a shadow mapping.
    Device,
    /// `hipHostMalloc` / `cuMemHostAlloc` / `cuMemAllocHost`: simulator-owned pinned memory.
    PinnedHost,
    /// `hipHostRegister` / `cuMemHostRegister`: application memory tracked as pinned.
    Registered,
    /// `hipMallocManaged` / `cuMemAllocManaged`: CPU accessible memory tracked as managed.
    Managed,
}

/// One tracked memory range.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    /// First address (device address for [`Kind::Device`], host address otherwise).
    pub start: usize,
    /// Size requested by the application.
    pub size: usize,
    /// Kind of memory.
    pub kind: Kind,
    /// Device current on the allocating thread.
    pub device: i32,
    /// Flags given at allocation / registration.
    pub flags: u32,
    /// Where the bytes live: the shadow mapping for device memory, `start` otherwise.
    shadow: usize,
    /// Length of the simulator-owned mapping (0 for registered application memory).
    map_len: usize,
}

impl Region {
    /// One past the last byte.
    pub fn end(&self) -> usize {
        self.start + self.size
    }

    /// Whether `[addr, addr + len)` lies wholly inside the region (`len` 0: whether `addr`
    /// lies inside it).
    pub fn contains(&self, addr: usize, len: usize) -> bool {
        if addr < self.start || addr >= self.end() {
            return false;
        }
        len <= self.end() - addr
    }

    /// The CPU address where the byte at `addr` (inside the region) really lives.
    pub fn shadow_of(&self, addr: usize) -> usize {
        self.shadow + (addr - self.start)
    }
}

struct AddressSpace {
    base: usize,
    len: usize,
}

static SPACE: LazyLock<AddressSpace> = LazyLock::new(|| {
    // 16 TiB if the kernel allows it, smaller otherwise.
    for shift in [44u32, 40, 38, 36, 34] {
        let len = 1usize << shift;
        // SAFETY: a fresh anonymous PROT_NONE reservation; no existing mapping is touched.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            return AddressSpace {
                base: p as usize,
                len,
            };
        }
    }
    AddressSpace { base: 0, len: 0 }
});

struct Table {
    regions: BTreeMap<usize, Region>,
    next_device_addr: usize,
}

static TABLE: LazyLock<RwLock<Table>> = LazyLock::new(|| {
    RwLock::new(Table {
        regions: BTreeMap::new(),
        next_device_addr: 0,
    })
});

impl Table {
    fn containing(&self, addr: usize) -> Option<&Region> {
        self.regions
            .range(..=addr)
            .next_back()
            .map(|(_, r)| r)
            .filter(|r| r.contains(addr, 0))
    }

    /// Whether any region overlaps `[start, end)`. Regions never overlap each other, so only
    /// the last one starting before `end` can reach `start`.
    fn overlaps(&self, start: usize, end: usize) -> bool {
        self.regions
            .range(..end)
            .next_back()
            .is_some_and(|(_, r)| r.end() > start)
    }
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

fn align_up(v: usize, a: usize) -> Option<usize> {
    v.checked_add(a - 1).map(|x| x & !(a - 1))
}

/// Whether `addr` lies in the simulated device address space.
pub fn in_device_space(addr: usize) -> bool {
    let s = &*SPACE;
    s.len != 0 && addr >= s.base && addr - s.base < s.len
}

/// Whether `[addr, addr + len)` touches the device address space.
fn touches_device_space(addr: usize, len: usize) -> bool {
    let s = &*SPACE;
    let end = addr.saturating_add(len.max(1));
    s.len != 0 && addr < s.base + s.len && end > s.base
}

/// Maps `len` bytes of fresh, lazily committed, zero-filled anonymous memory.
fn map_anonymous(len: usize) -> SimResult<usize> {
    // SAFETY: a fresh anonymous mapping; no existing memory is affected.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(SimError::OUT_OF_MEMORY)
    } else {
        Ok(p as usize)
    }
}

fn unmap(addr: usize, len: usize) {
    if len != 0 {
        // SAFETY: `addr..addr+len` is a mapping this module created and no longer tracks.
        unsafe { libc::munmap(addr as *mut libc::c_void, len) };
    }
}

/// Allocates `size` (> 0) bytes of device memory owned by `device`; returns the device address.
pub fn alloc_device(size: usize, device: i32) -> SimResult<usize> {
    if size == 0 {
        return Err(SimError::INVALID_VALUE);
    }
    let space = &*SPACE;
    let reserve = align_up(size, DEVICE_ALIGN).ok_or(SimError::OUT_OF_MEMORY)?;
    if space.len == 0 || reserve > space.len {
        return Err(SimError::OUT_OF_MEMORY);
    }
    let map_len = align_up(size, page_size()).ok_or(SimError::OUT_OF_MEMORY)?;
    let shadow = map_anonymous(map_len)?;
    let mut t = TABLE.write();
    if t.next_device_addr == 0 {
        t.next_device_addr = align_up(space.base, DEVICE_ALIGN).unwrap_or(space.base);
    }
    let start = t.next_device_addr;
    let space_end = space.base + space.len;
    match start
        .checked_add(reserve)
        .and_then(|e| e.checked_add(GUARD_GAP))
    {
        Some(next) if next <= space_end => {
            t.next_device_addr = next;
            t.regions.insert(
                start,
                Region {
                    start,
                    size,
                    kind: Kind::Device,
                    device,
                    flags: 0,
                    shadow,
                    map_len,
                },
            );
        }
        _ => {
            drop(t);
            unmap(shadow, map_len);
            return Err(SimError::OUT_OF_MEMORY);
        }
    }
    drop(t);
    counters::gauge_add(Gauge::DeviceBytes, size as u64);
    Ok(start)
}

/// Allocates `size` (> 0) bytes of CPU memory tracked as `kind` ([`Kind::PinnedHost`] or
/// [`Kind::Managed`]).
pub fn alloc_host(size: usize, kind: Kind, device: i32, flags: u32) -> SimResult<usize> {
    debug_assert!(matches!(kind, Kind::PinnedHost | Kind::Managed));
    if size == 0 {
        return Err(SimError::INVALID_VALUE);
    }
    let map_len = align_up(size, page_size()).ok_or(SimError::OUT_OF_MEMORY)?;
    let start = map_anonymous(map_len)?;
    let region = Region {
        start,
        size,
        kind,
        device,
        flags,
        shadow: start,
        map_len,
    };
    let stale: Vec<Region> = {
        let mut t = TABLE.write();
        // A fresh mapping can only overlap a registration whose memory the application
        // released without unregistering it; such a stale registration is dropped.
        let stale: Vec<usize> = t
            .regions
            .range(..start + map_len)
            .rev()
            .take_while(|(_, r)| r.end() > start)
            .map(|(&k, _)| k)
            .collect();
        let stale = stale
            .into_iter()
            .filter_map(|k| t.regions.remove(&k))
            .collect();
        t.regions.insert(start, region);
        stale
    };
    for r in stale {
        forget_registration(&r);
    }
    counters::gauge_add(gauge_of(kind), size as u64);
    Ok(start)
}

fn gauge_of(kind: Kind) -> Gauge {
    match kind {
        Kind::Device => Gauge::DeviceBytes,
        Kind::PinnedHost => Gauge::PinnedBytes,
        Kind::Registered => Gauge::RegisteredBytes,
        Kind::Managed => Gauge::ManagedBytes,
    }
}

fn forget_registration(r: &Region) {
    counters::gauge_sub(gauge_of(r.kind), r.size as u64);
}

/// The region starting exactly at `addr` if its kind is one of `kinds`.
pub fn region_at(addr: usize, kinds: &[Kind]) -> Option<Region> {
    TABLE
        .read()
        .regions
        .get(&addr)
        .filter(|r| kinds.contains(&r.kind))
        .copied()
}

/// Frees the allocation starting exactly at `addr` if its kind is one of `kinds` (not
/// [`Kind::Registered`]); `hipErrorInvalidValue` otherwise.
pub fn free(addr: usize, kinds: &[Kind]) -> SimResult<Region> {
    let r = {
        let mut t = TABLE.write();
        match t.regions.get(&addr) {
            Some(r) if kinds.contains(&r.kind) && r.kind != Kind::Registered => {}
            _ => return Err(SimError::INVALID_VALUE),
        }
        t.regions.remove(&addr).ok_or(SimError::INVALID_VALUE)?
    };
    unmap(r.shadow, r.map_len);
    counters::gauge_sub(gauge_of(r.kind), r.size as u64);
    Ok(r)
}

/// Tracks the application range `[addr, addr + size)` as registered (pinned) host memory.
pub fn register(addr: usize, size: usize, device: i32, flags: u32) -> SimResult<()> {
    if addr == 0 || size == 0 {
        return Err(SimError::INVALID_VALUE);
    }
    let end = addr.checked_add(size).ok_or(SimError::INVALID_VALUE)?;
    if touches_device_space(addr, size) {
        return Err(SimError::INVALID_VALUE);
    }
    {
        let mut t = TABLE.write();
        if t.overlaps(addr, end) {
            return Err(SimError::HOST_MEMORY_ALREADY_REGISTERED);
        }
        let region = Region {
            start: addr,
            size,
            kind: Kind::Registered,
            device,
            flags,
            shadow: addr,
            map_len: 0,
        };
        t.regions.insert(addr, region);
    }
    counters::gauge_add(Gauge::RegisteredBytes, size as u64);
    Ok(())
}

/// Stops tracking the registration starting exactly at `addr`.
pub fn unregister(addr: usize) -> SimResult<()> {
    let r = {
        let mut t = TABLE.write();
        match t.regions.get(&addr) {
            Some(r) if r.kind == Kind::Registered => {}
            _ => return Err(SimError::HOST_MEMORY_NOT_REGISTERED),
        }
        t.regions
            .remove(&addr)
            .ok_or(SimError::HOST_MEMORY_NOT_REGISTERED)?
    };
    forget_registration(&r);
    Ok(())
}

/// The tracked region containing `addr`, if any.
pub fn lookup(addr: usize) -> Option<Region> {
    TABLE.read().containing(addr).copied()
}

/// Resolves a "device" operand `[addr, addr + len)` (len > 0) of a copy: it must lie wholly
/// inside one device allocation, or inside pinned, registered or managed host memory (whose
/// device alias is the same address). Returns the CPU address where the bytes live.
pub fn device_operand(addr: usize, len: usize) -> SimResult<usize> {
    if addr == 0 {
        return Err(SimError::INVALID_VALUE);
    }
    let t = TABLE.read();
    let r = t.containing(addr).ok_or(SimError::INVALID_VALUE)?;
    if !r.contains(addr, len) {
        return Err(SimError::INVALID_VALUE);
    }
    Ok(r.shadow_of(addr))
}

/// Resolves a device operand that must be real device memory (the fastpath): returns the
/// region and the CPU address where the bytes live.
pub fn device_memory_operand(addr: usize, len: usize) -> Option<(Region, usize)> {
    let t = TABLE.read();
    let r = t.containing(addr)?;
    if r.kind != Kind::Device || !r.contains(addr, len) {
        return None;
    }
    Some((*r, r.shadow_of(addr)))
}

/// Resolves a "host" operand `[addr, addr + len)` (len > 0): any CPU memory, but never the
/// device address space (the CPU cannot access it).
pub fn host_operand(addr: usize, len: usize) -> SimResult<usize> {
    if addr == 0 || addr.checked_add(len).is_none() || touches_device_space(addr, len) {
        return Err(SimError::INVALID_VALUE);
    }
    Ok(addr)
}
