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

/// Register `fd`, returning the result code and the handle.
fn try_register(fd: c_int) -> (hipFileError_t, hipFileHandle_t) {
    let mut fh: hipFileHandle_t = null_mut();
    let mut d = descr(fd);
    // SAFETY: valid pointers.
    let r = unsafe { hipFileHandleRegister(&mut fh, &mut d) };
    (r, fh)
}

// Item 2: registering a FIFO opened read-only with no writer returns at once (it used to
// block forever re-opening the FIFO through /proc/self/fd).
child_test!(fifo_registration_returns_promptly, {
    let path = scratch_file("fifo");
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Non-blocking, as an application must open a FIFO that has no writer yet.
    let fd = open_fd(&path, libc::O_RDONLY | libc::O_NONBLOCK);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (r, fh) = try_register(fd);
        tx.send((r, fh as usize)).unwrap();
    });
    let (r, fh) = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("hipFileHandleRegister of a FIFO did not return within 10 s");
    assert_eq!(r, OK, "pipes register; their I/O fails with ESPIPE");
    let dev = sim().device_alloc(4096);
    // SAFETY: a registered handle and device memory.
    assert_eq!(
        unsafe { hipFileRead(fh as hipFileHandle_t, dev.ptr, 4096, 0, 0) },
        -1
    );
    assert_eq!(errno(), libc::ESPIPE);
    hipFileHandleDeregister(fh as hipFileHandle_t);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
    let _ = std::fs::remove_file(&path);
});

// Item 6: the library keeps its own descriptor of a registered file. After the application
// closes its descriptor and the number is reused for another file, I/O through the old handle
// (aligned, which may take the fastpath, and unaligned) reaches the old file, and registering
// the reused number for the new file succeeds.
child_test!(
    reused_descriptor_number_never_reaches_another_file,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        const LEN: usize = 64 << 10;
        let (pa, pb) = (scratch_file("reuse-a"), scratch_file("reuse-b"));
        let (a, b) = (pattern(LEN, 31), pattern(LEN, 32));
        make_file(&pa, &a);
        make_file(&pb, &b);
        let fd = open_fd(&pa, libc::O_RDWR);
        let old = register_fd(fd);
        // The application closes its descriptor; another file gets the same number.
        // SAFETY: our descriptors; dup2 puts file B at the number file A had.
        unsafe {
            libc::close(fd);
            let fb = open_fd(&pb, libc::O_RDWR);
            if fb != fd {
                assert_eq!(libc::dup2(fb, fd), fd);
                libc::close(fb);
            }
        }
        let dev = sim().device_alloc(LEN);
        // SAFETY: registered handles and device memory below.
        unsafe {
            assert_eq!(hipFileRead(old, dev.ptr, 4096, 0, 0), 4096);
            assert_eq!(
                sim().download(dev.ptr, 4096),
                a[..4096],
                "aligned read: file A"
            );
            assert_eq!(hipFileRead(old, dev.ptr, 100, 1, 0), 100);
            assert_eq!(
                sim().download(dev.ptr, 100),
                a[1..101],
                "unaligned read: file A"
            );
        }
        let (r, new) = try_register(fd);
        assert_eq!(r, OK, "the reused number registers for the new file");
        assert_ne!(new, old);
        assert_eq!(try_register(fd).0, code(hipFileHandleAlreadyRegistered));
        let data = pattern(8192, 33);
        sim().upload(dev.ptr, &data);
        // SAFETY: as above.
        unsafe {
            assert_eq!(hipFileRead(new, dev.ptr, 4096, 4096, 8192), 4096);
            assert_eq!(sim().download(dev.at(8192), 4096), b[4096..8192], "file B");
            assert_eq!(hipFileWrite(old, dev.ptr, 8192, 0, 0), 8192);
            assert_eq!(hipFileWrite(old, dev.ptr, 10, 8193, 1), 10);
        }
        let on_a = std::fs::read(&pa).unwrap();
        assert_eq!(on_a[..8192], data[..], "aligned write: file A");
        assert_eq!(on_a[8193..8203], data[1..11], "unaligned write: file A");
        assert_eq!(std::fs::read(&pb).unwrap(), b, "file B untouched");
        // Both handles deregister independently; the number registers again afterwards.
        hipFileHandleDeregister(old);
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(new, dev.ptr, 16, 0, 0) }, 16);
        hipFileHandleDeregister(new);
        let again = register_fd(fd);
        hipFileHandleDeregister(again);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

// Item 6: writes to a character device succeed (fdatasync's EINVAL there is no I/O failure).
child_test!(writes_to_dev_null_succeed, {
    let fd = open_fd(std::path::Path::new("/dev/null"), libc::O_WRONLY);
    let fh = register_fd(fd);
    let dev = sim().device_alloc(1 << 20);
    let host = vec![7u8; 4096];
    // SAFETY: a registered handle; device memory and a host buffer of the sizes given.
    unsafe {
        assert_eq!(hipFileWrite(fh, dev.ptr, 1 << 20, 0, 0), 1 << 20);
        assert_eq!(hipFileWrite(fh, dev.ptr, 100, 3, 5), 100);
        assert_eq!(hipFileWrite(fh, host.as_ptr().cast(), 4096, 0, 0), 4096);
    }
    hipFileHandleDeregister(fh);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
});
