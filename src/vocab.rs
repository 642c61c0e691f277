//! The shared vocabulary of every layer: which way data moves, what kind of memory a pointer
//! refers to, which backend serves a request and why one refuses it. It imports nothing of the
//! crate, so every module may use it without importing upwards.
#![deny(unsafe_code)]

/// Direction of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// File → device.
    Read,
    /// Device → file.
    Write,
}

/// What kind of memory a pointer refers to, independent of each vendor's numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryType {
    /// Host memory the GPU runtime does not know (ordinary pageable memory).
    Unregistered,
    /// Page-locked host memory allocated or registered through the runtime.
    Host,
    /// Device (GPU) memory.
    Device,
    /// Managed / unified-shared memory.
    Managed,
    /// Array (texture) memory.
    Array,
    /// Unified memory of older HIP numbering.
    Unified,
}

impl MemoryType {
    /// Whether the CPU can address this memory directly (the host path may use it).
    pub fn is_host(self) -> bool {
        matches!(self, MemoryType::Unregistered | MemoryType::Host)
    }
}

/// An address in the application's address space, exactly as a C caller passed it. What it
/// points at (device or host memory) is known only once the runtime has been asked; until then
/// it is never dereferenced. [`Address::get`] is for the GPU runtime's C calls, alignment
/// arithmetic and ordering, never for making a pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address(usize);

impl Address {
    /// The address of a C pointer (conversion at the door).
    #[inline(always)]
    pub fn of<T>(ptr: *const T) -> Address {
        Address(ptr as usize)
    }

    /// An address from its numeric value (tests and the runtime's answers).
    #[inline(always)]
    pub const fn new(raw: usize) -> Address {
        Address(raw)
    }

    /// The numeric value.
    #[inline(always)]
    pub const fn get(self) -> usize {
        self.0
    }

    /// Whether this is NULL.
    #[inline(always)]
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }

    /// `bytes` further on (wrapping, as C pointer arithmetic on an address does).
    #[inline(always)]
    pub const fn add(self, bytes: usize) -> Address {
        Address(self.0.wrapping_add(bytes))
    }
}

/// The memory side of one transfer: device memory (handed only to the GPU runtime) or host
/// memory the application lent for the call (made into slices in one place, `engine/lend.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemRef {
    /// Device memory at `addr` on `device`.
    Device {
        /// Device address of the first byte.
        addr: Address,
        /// Owning device.
        device: i32,
    },
    /// Host memory at `addr`.
    Host {
        /// Address of the first byte.
        addr: Address,
    },
}

/// The backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// GPU-direct storage (AMD `hipAmdFileRead/Write`).
    Fastpath,
    /// POSIX I/O through pinned bounce buffers (compat mode).
    Fallback,
    /// POSIX I/O straight into host memory.
    Host,
}

impl BackendKind {
    /// Every backend, in the order they are asked.
    pub const ALL: [BackendKind; 3] = [
        BackendKind::Fastpath,
        BackendKind::Fallback,
        BackendKind::Host,
    ];

    /// Its place in [`BackendKind::ALL`].
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Name for logs and statistics.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Fastpath => "fastpath",
            BackendKind::Fallback => "fallback",
            BackendKind::Host => "host",
        }
    }
}

/// Why a backend refused a request (recorded so nobody has to guess why I/O was slow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// The runtime has no GPU-direct entry points.
    NoFastpathEntryPoints,
    /// `HIPFILE_FORCE_COMPAT_MODE` turned the fastpath off.
    CompatForced,
    /// The file has no `O_DIRECT` descriptor (its file system refused `O_DIRECT`).
    NoODirect,
    /// The file is neither a block device nor a regular file on ext4 `data=ordered` or xfs.
    FileSystem,
    /// The file offset is not aligned.
    UnalignedOffset,
    /// The size is not aligned.
    UnalignedSize,
    /// The memory address is not aligned.
    UnalignedMemory,
    /// The buffer is not device memory.
    NotDeviceMemory,
    /// The buffer is not host memory.
    NotHostMemory,
    /// Compat mode is not allowed.
    CompatDisabled,
    /// `HIPFILE_HOST=false`.
    HostDisabled,
}

impl Refusal {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            Refusal::NoFastpathEntryPoints => "the GPU runtime has no GPU-direct file entry points",
            Refusal::CompatForced => "compat mode is forced",
            Refusal::NoODirect => "the file system does not support O_DIRECT",
            Refusal::FileSystem => "the file is not on ext4 (data=ordered), xfs or a block device",
            Refusal::UnalignedOffset => "the file offset is not aligned for direct I/O",
            Refusal::UnalignedSize => "the size is not aligned for direct I/O",
            Refusal::UnalignedMemory => "the memory address is not aligned for direct I/O",
            Refusal::NotDeviceMemory => "the buffer is not device memory",
            Refusal::NotHostMemory => "the buffer is not host memory",
            Refusal::CompatDisabled => "compat mode is not allowed",
            Refusal::HostDisabled => "host I/O is disabled (HIPFILE_HOST=false)",
        }
    }
}

/// Why each backend refused a request, in the order the backends were asked (no allocation:
/// selection runs on every call). Its `Display` names every backend with its reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals {
    /// Indexed by [`BackendKind::index`].
    list: [Option<Refusal>; BackendKind::ALL.len()],
}

impl Refusals {
    /// Record `backend`'s refusal. No search: selection runs on every call (target T9).
    #[inline(always)]
    pub fn record(&mut self, backend: BackendKind, reason: Refusal) {
        self.list[backend.index()] = Some(reason);
    }

    /// The refusals recorded, in the order backends are asked.
    pub fn iter(&self) -> impl Iterator<Item = (BackendKind, Refusal)> + '_ {
        BackendKind::ALL
            .into_iter()
            .zip(self.list)
            .filter_map(|(b, r)| Some((b, r?)))
    }

    /// `backend`'s refusal, if it refused.
    #[inline(always)]
    pub fn of(&self, backend: BackendKind) -> Option<Refusal> {
        self.list[backend.index()]
    }
}

impl std::fmt::Display for Refusals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (backend, reason) in self.iter() {
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            write!(f, "{} refuses: {}", backend.name(), reason.describe())?;
        }
        if first {
            f.write_str("no backend is configured")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_kept_per_backend_in_the_order_backends_are_asked() {
        let mut r = Refusals::default();
        assert_eq!(r.to_string(), "no backend is configured");
        r.record(BackendKind::Host, Refusal::HostDisabled);
        r.record(BackendKind::Fallback, Refusal::CompatDisabled);
        r.record(BackendKind::Fastpath, Refusal::CompatForced);
        // A second refusal of one backend replaces its first.
        r.record(BackendKind::Fastpath, Refusal::UnalignedSize);
        assert_eq!(r.iter().count(), 3);
        assert_eq!(r.of(BackendKind::Fastpath), Some(Refusal::UnalignedSize));
        assert_eq!(r.of(BackendKind::Host), Some(Refusal::HostDisabled));
        assert_eq!(
            r.to_string(),
            "fastpath refuses: the size is not aligned for direct I/O; fallback refuses: compat \
             mode is not allowed; host refuses: host I/O is disabled (HIPFILE_HOST=false)"
        );
        let mut one = Refusals::default();
        one.record(BackendKind::Fallback, Refusal::CompatDisabled);
        assert_eq!(one.of(BackendKind::Fastpath), None);
        assert_eq!(
            one.iter().collect::<Vec<_>>(),
            [(BackendKind::Fallback, Refusal::CompatDisabled)]
        );
    }
}
