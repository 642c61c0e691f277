//! A file as registration learned it: statx, open flags, file system,
//! direct-I/O alignment, and the descriptors the backends use: the *buffered* one (page
//! cache) and the *unbuffered* one (`O_DIRECT`). Both are our own: one is a `dup` of the
//! client's descriptor (the same open file description), the other opened through
//! `/proc/self/fd`. So the application closing its descriptor, and reusing the number for
//! another file, can never make the library read or write a file other than the one
//! registered. Only [`File::inspect`] builds one.
#![deny(unsafe_code)]

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use crate::error::{Error, Result};
use crate::sys::{self, mounts, statx};

/// What the fastpath needs to know about where a file lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileKind {
    /// A regular file.
    pub regular: bool,
    /// A block device.
    pub block_device: bool,
    /// On ext4 mounted `data=ordered` (explicitly or by default).
    pub ext4_ordered: bool,
    /// On xfs.
    pub xfs: bool,
}

/// A registered file.
#[derive(Debug)]
pub(crate) struct File {
    /// The application's descriptor number at registration (the registry key; never used
    /// for I/O).
    client_fd: RawFd,
    /// Our `dup` of the client's descriptor (buffered or unbuffered, as the client's was).
    client_dup: RawFd,
    /// Device and inode at registration.
    identity: (u32, u32, u64),
    buffered: OwnedFd,
    unbuffered: Option<OwnedFd>,
    kind: FileKind,
    /// The `O_DIRECT` twin with its alignments, for the engine (`None` without one).
    direct: Option<crate::engine::DirectFd>,
    /// `max(dio_offset_align, 4 KiB) - 1`: what the fastpath needs of offsets and sizes;
    /// all ones without direct I/O.
    fastpath_offset_mask: u64,
    /// `max(dio_mem_align, 4 KiB) - 1`: what the fastpath needs of memory addresses; all ones
    /// without direct I/O.
    fastpath_mem_mask: u64,
}

/// The mask of the fastpath alignment for a direct-I/O alignment: `max(align, 4 KiB) - 1`
/// (the kernel path rejects anything finer than 4 KiB with `EINVAL`, which
/// would not be retried on the fallback), all ones without direct I/O. Linux reports powers of two; anything
/// else would make masks wrong, so such a file is treated as having no direct-I/O alignment.
fn fastpath_mask(align: u32) -> u64 {
    let a = u64::from(align).max(4096);
    if align != 0 && a.is_power_of_two() {
        a - 1
    } else {
        NO_MASK
    }
}

/// The fastpath mask of a file without direct I/O.
const NO_MASK: u64 = u64::MAX;

impl File {
    /// Inspect and prepare a client descriptor (upstream's checks, plus our
    /// `O_APPEND` refusal). Does not touch any registry.
    pub(crate) fn inspect(fd: RawFd) -> Result<File> {
        let facts =
            statx::statx_fd(fd).map_err(|_| Error::Internal("statx of the descriptor failed"))?;
        let flags = sys::io::get_flags(fd).map_err(|_| Error::Internal("fcntl(F_GETFL) failed"))?;
        if flags & libc::O_APPEND != 0 {
            // Positional writes through an O_APPEND descriptor land at the end of the file.
            return Err(Error::InvalidFileOpenFlag);
        }
        let table =
            mounts::read_table().map_err(|_| Error::Internal("reading the mount table failed"))?;
        let mount = mounts::find(&table, facts.dev_major, facts.dev_minor);
        let (ext4_ordered, xfs) = match mount.map(|m| m.kind()) {
            Some(mounts::FsKind::Ext4(mode)) => (mode == mounts::Ext4DataMode::Ordered, false),
            Some(mounts::FsKind::Xfs) => (false, true),
            Some(mounts::FsKind::Other(_)) | None => (false, false),
        };
        if facts.is_socket {
            return Err(Error::Internal("a socket cannot be registered"));
        }
        let own = sys::io::dup_cloexec(fd)
            .map_err(|_| Error::Internal("duplicating the descriptor failed"))?;
        let client_dup = own.as_raw_fd();
        let (buffered, unbuffered, mem, off) = if !(facts.is_regular || facts.is_block_device) {
            // Directories, pipes and character devices: no direct I/O to prepare, and no
            // re-open (opening a FIFO through /proc/self/fd blocks until the other end opens).
            (own, None, 0, 0)
        } else if flags & libc::O_DIRECT != 0 {
            let b = sys::io::reopen(fd, flags & !libc::O_DIRECT).map_err(|_| {
                Error::Internal("re-opening the descriptor without O_DIRECT failed")
            })?;
            (b, Some(own), facts.dio_mem_align, facts.dio_offset_align)
        } else {
            match sys::io::reopen(fd, flags | libc::O_DIRECT) {
                Ok(u) => (own, Some(u), facts.dio_mem_align, facts.dio_offset_align),
                // The file system has no O_DIRECT (tmpfs...): register without the fastpath.
                Err(libc::EINVAL) => (own, None, 0, 0),
                Err(_) => {
                    return Err(Error::Internal(
                        "re-opening the descriptor with O_DIRECT failed",
                    ))
                }
            }
        };
        let direct = match &unbuffered {
            Some(d) if mem != 0 && off != 0 => Some(crate::engine::DirectFd {
                fd: d.as_raw_fd(),
                offset_align: u64::from(off),
                mem_align: u64::from(mem),
            }),
            _ => None,
        };
        Ok(File {
            direct,
            client_fd: fd,
            client_dup,
            identity: (facts.dev_major, facts.dev_minor, facts.ino),
            buffered,
            unbuffered,
            kind: FileKind {
                regular: facts.is_regular,
                block_device: facts.is_block_device,
                ext4_ordered,
                xfs,
            },
            fastpath_offset_mask: fastpath_mask(off),
            fastpath_mem_mask: fastpath_mask(mem),
        })
    }

    /// The application's descriptor number (the registry key).
    pub(crate) fn client_fd(&self) -> RawFd {
        self.client_fd
    }
    /// Descriptor through the page cache.
    pub(crate) fn buffered_fd(&self) -> RawFd {
        self.buffered.as_raw_fd()
    }
    /// `O_DIRECT` descriptor, if the file system supports it.
    pub(crate) fn unbuffered_fd(&self) -> Option<RawFd> {
        self.unbuffered.as_ref().map(AsRawFd::as_raw_fd)
    }
    /// Whether `other` was registered through the same client descriptor as `self`: the same
    /// open file description (or, where the kernel cannot tell, the same device and inode).
    /// False when the application closed its descriptor and the number now names another file.
    pub(crate) fn same_registration(&self, other: &File) -> bool {
        sys::io::same_open_file(self.client_dup, other.client_dup)
            .unwrap_or(self.identity == other.identity)
    }
    /// File kind facts for scoring.
    pub(crate) fn kind(&self) -> FileKind {
        self.kind
    }
    /// The `O_DIRECT` descriptor and its alignments, when the file has one and the kernel
    /// reported them.
    #[inline(always)]
    pub(crate) fn direct(&self) -> Option<crate::engine::DirectFd> {
        self.direct
    }
    /// Whether a request of `size` bytes at `offset` into memory at `addr` meets the fastpath's
    /// alignment (false without direct I/O). `addr` is never 0 (a NULL buffer is refused before
    /// any I/O), which is what lets an all-ones mask stand for "no direct I/O": one branch
    /// less on every call (target T9).
    #[inline(always)]
    pub(crate) fn fastpath_aligned(&self, offset: u64, size: u64, addr: u64) -> bool {
        (offset | size) & self.fastpath_offset_mask == 0 && addr & self.fastpath_mem_mask == 0
    }
    /// The fastpath's alignment mask for offsets and sizes (`None` without direct I/O).
    #[inline]
    pub(crate) fn fastpath_offset_mask(&self) -> Option<u64> {
        (self.fastpath_offset_mask != NO_MASK).then_some(self.fastpath_offset_mask)
    }
    /// The fastpath's alignment mask for memory addresses (`None` without direct I/O).
    #[inline]
    pub(crate) fn fastpath_mem_mask(&self) -> Option<u64> {
        (self.fastpath_mem_mask != NO_MASK).then_some(self.fastpath_mem_mask)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // The GPU-direct path may hold a registration of our O_DIRECT descriptor.
        let gpu_direct = crate::runtime::try_runtime().and_then(|rt| rt.gpu_direct());
        if let (Some(fd), Some(g)) = (self.unbuffered_fd(), gpu_direct) {
            g.forget_file(fd);
        }
    }
}

/// A descriptor of a new, empty scratch file that only this process can reach, for unit tests
/// (never closed: the tests hand it to [`File::inspect`], which keeps its own duplicate).
#[cfg(test)]
pub(crate) fn scratch_fd() -> RawFd {
    use std::os::fd::IntoRawFd;
    sys::io::scratch_file().into_raw_fd()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastpath_masks_and_alignment() {
        assert_eq!(fastpath_mask(512), 4095, "never finer than 4 KiB");
        assert_eq!(fastpath_mask(4096), 4095);
        assert_eq!(fastpath_mask(65536), 65535);
        assert_eq!(fastpath_mask(0), NO_MASK, "no direct I/O");
        assert_eq!(fastpath_mask(12288), NO_MASK, "not a power of two");
        let mut f = File::inspect(scratch_fd()).unwrap();
        f.fastpath_offset_mask = fastpath_mask(512);
        f.fastpath_mem_mask = fastpath_mask(4096);
        assert!(f.fastpath_aligned(0, 4096, 0x10000));
        assert!(f.fastpath_aligned(8192, 1 << 20, 0x7000));
        assert!(!f.fastpath_aligned(512, 4096, 0x10000), "offset");
        assert!(!f.fastpath_aligned(0, 4097, 0x10000), "size");
        assert!(!f.fastpath_aligned(0, 4096, 0x10200), "address");
        assert_eq!(f.fastpath_offset_mask(), Some(4095));
        f.fastpath_offset_mask = NO_MASK;
        f.fastpath_mem_mask = NO_MASK;
        assert!(
            !f.fastpath_aligned(0, 0, 0x1000),
            "no direct I/O: never aligned"
        );
        assert_eq!(f.fastpath_offset_mask(), None);
        assert_eq!(f.fastpath_mem_mask(), None);
    }
}
