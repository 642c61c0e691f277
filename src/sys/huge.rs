//! Anonymous memory on transparent huge pages, faulted in by the caller: what CUDA's pinned
//! bounce buffers are made of ([`crate::runtime`] registers it with the driver).
//!
//! Why: on the H200 machine, 32 buffers of 4 MiB from 16 threads took 67 ms through
//! `cuMemHostAlloc`, 45 ms as 4 KiB pages registered with `cuMemHostRegister`, and 22 ms on
//! huge pages registered the same way (`scripts/gpu/first_read.c pinprobe`): a fresh
//! process's first large read pays for its buffers, so this is most of its set-up cost. Where
//! the kernel gives no huge pages (`transparent_hugepage` set to `never`) the advice is ignored
//! and the memory is ordinary pages, still correct.

use std::ptr::NonNull;

/// The huge page size this aligns to (x86_64 and most aarch64 kernels).
const HUGE: usize = 2 << 20;

/// `len` bytes (rounded up to 4 KiB), 2 MiB-aligned, huge pages asked for and every page
/// written once, so the memory exists before it is registered. Free with [`unmap`] and the
/// same `len`.
pub(crate) fn map(len: usize) -> Result<NonNull<u8>, i32> {
    let p = map_lazy(len)?;
    // SAFETY: the whole mapping just made, ours alone.
    unsafe { touch(p.as_ptr(), round(len)) };
    Ok(p)
}

/// [`map`] without the faulting in: the pages come when first written, so that several
/// threads can fault in parts of one mapping at once ([`touch`]). Free with [`unmap`].
pub(crate) fn map_lazy(len: usize) -> Result<NonNull<u8>, i32> {
    let len = round(len);
    // Room to align the start; the slack on both sides is unmapped again.
    let span = len + HUGE;
    // SAFETY: anonymous private mapping, no address hint.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return Err(super::errno());
    }
    let start = raw as usize;
    let aligned = (start + HUGE - 1) & !(HUGE - 1);
    let head = aligned - start;
    let tail = span - head - len;
    // SAFETY: both ranges lie inside the mapping just made and nothing refers to them.
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
        // Advice only: an error (no THP in this kernel) leaves ordinary pages.
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8).ok_or(libc::ENOMEM)
}

/// Fault in `len` bytes at `p` by writing one byte of each page (zero, what a new page holds).
///
/// # Safety
/// `p..p + len` must lie in a writable mapping from [`map_lazy`] whose bytes nobody else uses.
pub(crate) unsafe fn touch(p: *mut u8, len: usize) {
    for off in (0..len).step_by(4096) {
        // SAFETY: inside the caller's mapping, which is writable and not in use.
        unsafe { p.add(off).write_volatile(0) };
    }
}

/// Unmap memory from [`map`].
///
/// # Safety
/// `p` and `len` must be what [`map`] gave and took, and nothing may use the memory afterwards.
pub(crate) unsafe fn unmap(p: NonNull<u8>, len: usize) {
    // SAFETY: the caller's contract: this is one whole mapping of ours.
    unsafe { libc::munmap(p.as_ptr().cast(), round(len)) };
}

fn round(len: usize) -> usize {
    len.max(1).div_ceil(4096) * 4096
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_writable_and_unmapped() {
        for len in [1, 4096, 3 << 20, 4 << 20] {
            let p = map(len).unwrap();
            assert_eq!(p.as_ptr() as usize % HUGE, 0, "{len}");
            // SAFETY: `len` bytes of our mapping.
            let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), len) };
            assert!(s.iter().all(|&b| b == 0));
            s.fill(0xa5);
            assert_eq!(s[len - 1], 0xa5);
            // SAFETY: from map with this len, no longer used.
            unsafe { unmap(p, len) };
        }
    }
}
