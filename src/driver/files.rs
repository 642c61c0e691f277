//! Registered files and their registry (behaviour §B.4–B.5, contract §3).
//!
//! A [`File`] holds what registration learned once (statx, open flags, file system, direct-I/O
//! alignment) and the descriptors the backends use: the *buffered* one (page cache) and the
//! *unbuffered* one (`O_DIRECT`). Both are our own: one is a `dup` of the client's descriptor
//! (the same open file description), the other opened through `/proc/self/fd`. So the
//! application closing its descriptor, and reusing the number for another file, can never make
//! the library read or write a file other than the one registered.
//!
//! Handles are generation-tagged slot keys turned into pointer-sized tokens: never NULL, never
//! dereferenced, and a stale handle fails its lookup even after its slot is reused.
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::sys::{self, mounts, statx};

/// What the fastpath needs to know about where a file lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileKind {
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
pub struct File {
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
    fstype: String,
    dio_mem_align: u32,
    dio_offset_align: u32,
    /// The `O_DIRECT` twin with its alignments, for the engine (`None` without one).
    direct: Option<crate::engine::DirectFd>,
    /// `max(dio_offset_align, 4 KiB) - 1`: what the fastpath needs of offsets and sizes;
    /// all ones without direct I/O.
    fastpath_offset_mask: u64,
    /// `max(dio_mem_align, 4 KiB) - 1`: what the fastpath needs of memory addresses; all ones
    /// without direct I/O.
    fastpath_mem_mask: u64,
    readable: bool,
    writable: bool,
}

/// The mask of the fastpath alignment for a direct-I/O alignment: `max(align, 4 KiB) - 1`
/// (behaviour §J.2.8: the kernel path rejects anything finer than 4 KiB with `EINVAL`, which
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
    /// Inspect and prepare a client descriptor (behaviour §B.4 step 3; contract §3 adds the
    /// `O_APPEND` refusal). Does not touch any registry.
    pub fn inspect(fd: RawFd) -> Result<File> {
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
        let (ext4_ordered, xfs, fstype) = match mount.map(|m| (m.kind(), m.fstype.clone())) {
            Some((mounts::FsKind::Ext4(mode), t)) => {
                (mode == mounts::Ext4DataMode::Ordered, false, t)
            }
            Some((mounts::FsKind::Xfs, t)) => (false, true, t),
            Some((mounts::FsKind::Other(_), t)) => (false, false, t),
            None => (false, false, String::new()),
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
        let acc = flags & libc::O_ACCMODE;
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
            fstype,
            dio_mem_align: mem,
            dio_offset_align: off,
            fastpath_offset_mask: fastpath_mask(off),
            fastpath_mem_mask: fastpath_mask(mem),
            readable: acc == libc::O_RDONLY || acc == libc::O_RDWR,
            writable: acc == libc::O_WRONLY || acc == libc::O_RDWR,
        })
    }

    /// The application's descriptor number (the registry key).
    pub fn client_fd(&self) -> RawFd {
        self.client_fd
    }
    /// Descriptor through the page cache.
    pub fn buffered_fd(&self) -> RawFd {
        self.buffered.as_raw_fd()
    }
    /// `O_DIRECT` descriptor, if the file system supports it.
    pub fn unbuffered_fd(&self) -> Option<RawFd> {
        self.unbuffered.as_ref().map(AsRawFd::as_raw_fd)
    }
    /// Whether `other` was registered through the same client descriptor as `self`: the same
    /// open file description (or, where the kernel cannot tell, the same device and inode).
    /// False when the application closed its descriptor and the number now names another file.
    fn same_registration(&self, other: &File) -> bool {
        sys::io::same_open_file(self.client_dup, other.client_dup)
            .unwrap_or(self.identity == other.identity)
    }
    /// File kind facts for scoring.
    pub fn kind(&self) -> FileKind {
        self.kind
    }
    /// File-system type name (empty when no mount entry matched).
    pub fn fstype(&self) -> &str {
        &self.fstype
    }
    /// Direct-I/O memory alignment (0 without `O_DIRECT`).
    pub fn dio_mem_align(&self) -> u32 {
        self.dio_mem_align
    }
    /// Direct-I/O offset alignment (0 without `O_DIRECT`).
    pub fn dio_offset_align(&self) -> u32 {
        self.dio_offset_align
    }
    /// The `O_DIRECT` descriptor and its alignments, when the file has one and the kernel
    /// reported them.
    #[inline(always)]
    pub fn direct(&self) -> Option<crate::engine::DirectFd> {
        self.direct
    }
    /// Whether a request of `size` bytes at `offset` into memory at `addr` meets the fastpath's
    /// alignment (false without direct I/O). `addr` is never 0 (a NULL buffer is refused before
    /// any I/O), which is what lets an all-ones mask stand for "no direct I/O": one branch
    /// less on every call (target T9).
    #[inline(always)]
    pub fn fastpath_aligned(&self, offset: u64, size: u64, addr: u64) -> bool {
        (offset | size) & self.fastpath_offset_mask == 0 && addr & self.fastpath_mem_mask == 0
    }
    /// The fastpath's alignment mask for offsets and sizes (`None` without direct I/O).
    #[inline]
    pub fn fastpath_offset_mask(&self) -> Option<u64> {
        (self.fastpath_offset_mask != NO_MASK).then_some(self.fastpath_offset_mask)
    }
    /// The fastpath's alignment mask for memory addresses (`None` without direct I/O).
    #[inline]
    pub fn fastpath_mem_mask(&self) -> Option<u64> {
        (self.fastpath_mem_mask != NO_MASK).then_some(self.fastpath_mem_mask)
    }
    /// Opened for reading.
    pub fn readable(&self) -> bool {
        self.readable
    }
    /// Opened for writing.
    pub fn writable(&self) -> bool {
        self.writable
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // The GPU-direct path may hold a registration of our O_DIRECT descriptor.
        if let (Some(fd), Some(rt)) = (self.unbuffered_fd(), crate::runtime::try_runtime()) {
            rt.forget_file(fd);
        }
    }
}

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
        if let Some(&index) = self.by_fd.get(&file.client_fd) {
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
        self.by_fd.insert(file.client_fd, index);
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
        if self.by_fd.get(&file.client_fd) == Some(&index) {
            self.by_fd.remove(&file.client_fd);
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
    fn fastpath_masks_and_alignment() {
        assert_eq!(fastpath_mask(512), 4095, "never finer than 4 KiB");
        assert_eq!(fastpath_mask(4096), 4095);
        assert_eq!(fastpath_mask(65536), 65535);
        assert_eq!(fastpath_mask(0), NO_MASK, "no direct I/O");
        assert_eq!(fastpath_mask(12288), NO_MASK, "not a power of two");
        let mut f = File::inspect(temp_fd()).unwrap();
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
