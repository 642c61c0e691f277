//! `statx` of an open descriptor: file type, device numbers and direct-I/O alignment.

use std::os::fd::RawFd;

/// What registration needs to know about a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FdFacts {
    /// `S_ISREG` and the kernel reported the type.
    pub is_regular: bool,
    /// `S_ISBLK` and the kernel reported the type.
    pub is_block_device: bool,
    /// `S_ISSOCK` and the kernel reported the type.
    pub is_socket: bool,
    /// Inode number (with the device numbers, the file's identity).
    pub ino: u64,
    /// Major number of the device holding the file.
    pub dev_major: u32,
    /// Minor number of the device holding the file.
    pub dev_minor: u32,
    /// Direct-I/O memory alignment (4096 when the kernel does not report it).
    pub dio_mem_align: u32,
    /// Direct-I/O offset alignment (4096 when the kernel does not report it).
    pub dio_offset_align: u32,
    /// File size in bytes.
    pub size: u64,
}

/// The alignment assumed when the kernel does not report `STATX_DIOALIGN`.
pub(crate) const DEFAULT_DIO_ALIGN: u32 = 4096;

/// `statx(fd, "", AT_EMPTY_PATH, STATX_TYPE|STATX_MODE|STATX_DIOALIGN|STATX_SIZE|STATX_INO)`.
pub(crate) fn statx_fd(fd: RawFd) -> Result<FdFacts, i32> {
    // SAFETY: statx is plain old data; all-zero is a valid value.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let mask = libc::STATX_TYPE
        | libc::STATX_MODE
        | libc::STATX_DIOALIGN
        | libc::STATX_SIZE
        | libc::STATX_INO;
    // SAFETY: the path is a valid NUL-terminated empty string and `stx` a valid out-pointer.
    let rc = unsafe { libc::statx(fd, c"".as_ptr(), libc::AT_EMPTY_PATH, mask, &mut stx) };
    if rc != 0 {
        return Err(super::errno());
    }
    let has_type = stx.stx_mask & libc::STATX_TYPE != 0;
    let fmt = u32::from(stx.stx_mode) & libc::S_IFMT;
    let (mem, off) = if stx.stx_mask & libc::STATX_DIOALIGN != 0 {
        (stx.stx_dio_mem_align, stx.stx_dio_offset_align)
    } else {
        (DEFAULT_DIO_ALIGN, DEFAULT_DIO_ALIGN)
    };
    Ok(FdFacts {
        is_regular: has_type && fmt == libc::S_IFREG,
        is_block_device: has_type && fmt == libc::S_IFBLK,
        is_socket: has_type && fmt == libc::S_IFSOCK,
        ino: stx.stx_ino,
        dev_major: stx.stx_dev_major,
        dev_minor: stx.stx_dev_minor,
        dio_mem_align: mem,
        dio_offset_align: off,
        size: stx.stx_size,
    })
}
