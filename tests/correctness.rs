//! Regression tests for defects found by running the library as outsiders would: bad batch
//! input that used to crash or abort, registration that used to hang, thread cancellation that
//! used to abort the process, partial writes that used to report nothing, a reused descriptor
//! number that used to reach the wrong file, and statistics reports into a closed pipe. Each
//! test drives the exported C functions on the simulated runtime, in its own process.

mod common;

use std::ffi::{c_int, c_uint, c_void};
use std::ptr::null_mut;

use common::*;

const OK: hipFileError_t = hipFileError_t::SUCCESS;

fn code(c: c_int) -> hipFileError_t {
    hipFileError_t::op(c)
}

fn setup(max_nr: c_uint) -> hipFileBatchHandle_t {
    let mut h: hipFileBatchHandle_t = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileBatchIOSetUp(&mut h, max_nr) }, OK);
    h
}

fn read_entry(fh: hipFileHandle_t, base: *mut c_void, off: i64) -> hipFileIOParams_t {
    hipFileIOParams_t {
        mode: hipFileBatch,
        u: hipFileIOParamsU {
            batch: hipFileIOParamsBatch {
                devPtr_base: base,
                file_offset: off,
                devPtr_offset: off,
                size: 4096,
            },
        },
        fh,
        opcode: hipFileBatchRead,
        cookie: null_mut(),
    }
}

/// Two pages whose second one is inaccessible: `n` entries are placed so that they end exactly
/// where the inaccessible page begins, so reading entry `n` (one past them) faults.
struct GuardedEntries {
    map: *mut c_void,
    page: usize,
}

impl GuardedEntries {
    fn new() -> GuardedEntries {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: an anonymous private mapping; checked below.
        let map = unsafe {
            libc::mmap(
                null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        // SAFETY: the second page of our own mapping.
        let r =
            unsafe { libc::mprotect((map as usize + page) as *mut c_void, page, libc::PROT_NONE) };
        assert_eq!(r, 0);
        GuardedEntries { map, page }
    }

    /// Copy `entries` to the end of the accessible page; returns the pointer to the first.
    fn place(&self, entries: &[hipFileIOParams_t]) -> *mut hipFileIOParams_t {
        let bytes = std::mem::size_of_val(entries);
        let at = (self.map as usize + self.page - bytes) as *mut hipFileIOParams_t;
        // SAFETY: `bytes` fit in the accessible page, which we own; entries are plain data.
        unsafe { std::ptr::copy_nonoverlapping(entries.as_ptr(), at, entries.len()) };
        at
    }
}

impl Drop for GuardedEntries {
    fn drop(&mut self) {
        // SAFETY: our mapping.
        unsafe { libc::munmap(self.map, 2 * self.page) };
    }
}

// Item 1: the handle and the room are checked before any entry is read, and nothing is
// allocated in proportion to an unchecked `nr`.
child_test!(
    batch_submit_reads_no_entry_before_checking_handle_and_room,
    {
        let path = scratch_file("guarded-batch");
        make_file(&path, &pattern(1 << 16, 1));
        let fd = open_fd(&path, libc::O_RDWR);
        let fh = register_fd(fd);
        let dev = sim().device_alloc(1 << 16);
        let guard = GuardedEntries::new();
        let entries: Vec<_> = (0..4).map(|i| read_entry(fh, dev.ptr, i * 4096)).collect();
        let four = guard.place(&entries);
        let h = setup(4);
        // SAFETY: the pointers are as described; the calls must not read past 4 entries.
        unsafe {
            assert_eq!(hipFileBatchIOSubmit(h, 5, four, 0), code(hipFileBatchFull));
            assert_eq!(
                hipFileBatchIOSubmit(h, c_uint::MAX, four, 0),
                code(hipFileBatchFull)
            );
            let one = guard.place(&entries[..1]);
            let forged = 0x5eed_0000_0001usize as hipFileBatchHandle_t;
            assert_eq!(
                hipFileBatchIOSubmit(forged, 2, one, 0),
                code(hipFileInvalidValue)
            );
            assert_eq!(
                hipFileBatchIOSubmit(forged, c_uint::MAX, one, 0),
                code(hipFileInvalidValue)
            );
            // The room is what it was: all four entries still go in.
            let four = guard.place(&entries);
            assert_eq!(hipFileBatchIOSubmit(h, 4, four, 0), OK);
        }
        hipFileBatchIODestroy(h);
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

// Item 10: zero-size I/O with valid arguments returns 0 whatever the backends would say, here
// a fastpath-only configuration at an offset the fastpath refuses.
child_test!(
    zero_size_io_returns_zero_on_any_backend,
    [("HIPFILE_ALLOW_COMPAT_MODE", "false")],
    {
        let path = scratch_file("zero-size");
        make_file(&path, &pattern(8192, 2));
        let fd = open_fd(&path, libc::O_RDWR);
        let fh = register_fd(fd);
        let dev = sim().device_alloc(8192);
        // SAFETY: registered handle and device memory.
        unsafe {
            assert_eq!(hipFileRead(fh, dev.ptr, 0, 512, 0), 0);
            assert_eq!(hipFileWrite(fh, dev.ptr, 0, 512, 3), 0);
            assert_eq!(hipFileRead(fh, dev.ptr, 0, 1 << 40, 0), 0, "past the end");
            // Invalid arguments are still refused.
            assert_eq!(hipFileRead(fh, dev.ptr, 0, -1, 0), -1);
            assert_eq!(errno(), libc::EINVAL);
            assert_eq!(
                hipFileRead(fh, dev.ptr, 0, 0, 8192),
                -(hipFileInvalidValue as isize),
                "buffer offset at the end of the buffer"
            );
            assert_eq!(
                hipFileRead(null_mut(), dev.ptr, 0, 0, 0),
                -(hipFileHandleNotRegistered as isize)
            );
        }
        assert_eq!(
            std::fs::read(&path).unwrap(),
            pattern(8192, 2),
            "nothing written"
        );
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);
