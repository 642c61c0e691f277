//! Synchronous I/O: a panic in the GPU runtime never crosses the C boundary.
//!
//! Shared set-up and what the sync suites compare: `tests/common/sync_io.rs`.

mod common;

use std::ffi::c_void;
use std::time::Duration;

use common::sync_io::*;
use common::*;

// ---- panics never cross the C boundary --------------------------------------------------------

/// A GPU runtime that panics where a test wants it to.
mod fake {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use hipfile::internals::runtime::{
        Address, DeviceRestore, MemoryType, Platform, PointerInfo, RtError, RtResult, Runtime,
    };

    /// Fake device memory: addresses in this range are "device memory" (never dereferenced).
    pub const BASE: usize = 0x7e00_0000_0000;
    /// Size of the fake device allocation.
    pub const LEN: usize = 64 << 20;

    /// Where the fake panics.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Mode {
        /// `pointer_info` panics.
        PointerInfo,
        /// Every device copy panics.
        Copy,
        /// Device copies panic on the calling (application) thread; on the library's I/O
        /// workers they take 20 ms and are counted.
        CopyOnCaller,
    }

    /// Worker copies running now.
    pub static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
    /// Worker copies started after the test saw the call return.
    pub static LATE: AtomicUsize = AtomicUsize::new(0);
    /// Set by the test when the call returned.
    pub static RETURNED: AtomicBool = AtomicBool::new(false);

    /// The fake runtime.
    pub struct Fake(pub Mode);

    impl Fake {
        fn copy(&self) -> RtResult<()> {
            match self.0 {
                Mode::PointerInfo => Ok(()),
                Mode::Copy => panic!("fake runtime: device copy panics on purpose"),
                Mode::CopyOnCaller => {
                    let on_worker = std::thread::current()
                        .name()
                        .is_some_and(|n| n.starts_with("hipfile-io"));
                    if !on_worker {
                        panic!("fake runtime: device copy panics on purpose on the calling thread");
                    }
                    IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
                    if RETURNED.load(Ordering::SeqCst) {
                        LATE.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
                    Ok(())
                }
            }
        }
    }

    fn inside(ptr: Address) -> bool {
        (BASE..BASE + LEN).contains(&ptr.get())
    }

    /// What the fake says of an address inside its device memory, and of any other.
    const DEVICE: PointerInfo = PointerInfo {
        memory_type: MemoryType::Device,
        device: 0,
    };
    const PAGEABLE: PointerInfo = PointerInfo::UNREGISTERED;

    /// The core of the seam is all the fake implements: no streams (copies are synchronous),
    /// no GPU-direct path, no tools.
    impl Runtime for Fake {
        fn platform(&self) -> Platform {
            Platform::Amd
        }
        fn describe(&self) -> String {
            "fake runtime of tests/sync_io_panics.rs".to_string()
        }
        fn pointer_info(&self, ptr: Address) -> RtResult<PointerInfo> {
            if self.0 == Mode::PointerInfo {
                panic!("fake runtime: pointer_info panics on purpose");
            }
            Ok(if inside(ptr) { DEVICE } else { PAGEABLE })
        }
        fn address_range(&self, ptr: Address) -> RtResult<(Address, usize)> {
            let range = (Address::new(BASE), LEN);
            inside(ptr).then_some(range).ok_or(RtError::NOT_FOUND)
        }
        fn enter_device(&self, _device: i32) -> RtResult<DeviceRestore> {
            Ok(DeviceRestore(None))
        }
        fn leave_device(&self, _restore: DeviceRestore) {}
        fn copy_to_device(&self, _dst: Address, _src: &[u8]) -> RtResult<()> {
            self.copy()
        }
        fn copy_from_device(&self, _dst: &mut [u8], _src: Address) -> RtResult<()> {
            self.copy()
        }
        fn host_alloc(&self, len: usize) -> RtResult<*mut u8> {
            // SAFETY: plain allocation.
            let p = unsafe { libc::malloc(len) }.cast::<u8>();
            (!p.is_null()).then_some(p).ok_or(RtError::OUT_OF_MEMORY)
        }
        unsafe fn host_free(&self, ptr: *mut u8) {
            // SAFETY: `ptr` came from host_alloc (malloc).
            unsafe { libc::free(ptr.cast()) }
        }
    }

    /// Install the fake before any API call.
    pub fn install(mode: Mode) {
        assert!(
            hipfile::internals::runtime::install(
                Box::new(Fake(mode)),
                "tests/sync_io_panics.rs fake runtime"
            )
            .is_ok(),
            "a runtime was already chosen"
        );
    }
}

child_test!(panic_in_the_runtime_becomes_internal_error, {
    fake::install(fake::Mode::PointerInfo);
    let dev = fake::BASE as *mut c_void;
    assert_eq!(
        buf_register(dev, 4096),
        hipFileError_t {
            err: 5030,
            hip_drv_err: 0
        }
    );
    assert_eq!(
        hipFileUseCount(),
        1,
        "the implicit open happened before the panic"
    );
    // Nothing stays locked: the same call again returns, and so does a file registration.
    assert_eq!(
        buf_register(dev, 4096),
        hipFileError_t {
            err: 5030,
            hip_drv_err: 0
        }
    );
    let f = TestFile::rw("panic-attr", &pattern(8192, 33));
    assert_eq!(rd(f.fh, dev, 4096, 0, 0), -5030);
    assert_eq!(wr(f.fh, dev, 4096, 0, 0), -5030);
    assert_eq!(rd(f.fh, dev, 4096, 0, 0), -5030);
    drop(f);
    assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
    assert_eq!(hipFileUseCount(), 0);
});

child_test!(
    panic_in_a_device_copy_becomes_internal_error,
    [("HIPFILE_CHUNK_SIZE", "4096"), ("HIPFILE_IO_THREADS", "4")],
    {
        watchdog(120);
        fake::install(fake::Mode::Copy);
        let dev = fake::BASE as *mut c_void;
        let data = pattern(4 * MIB, 34);
        let f = TestFile::rw("panic-copy", &data);
        // 1 MiB is served on the calling thread (the inline threshold), 4 MiB by the workers too.
        for size in [MIB, MIB, 4 * MIB, 4 * MIB] {
            assert_eq!(rd(f.fh, dev, size, 1, 0), -5030, "read of {size}");
            assert_eq!(wr(f.fh, dev, size, 1, 0), -5030, "write of {size}");
        }
        // The engine and its workers still serve host memory.
        let mut host = vec![0u8; 4 * MIB - 1];
        assert_eq!(
            rd(f.fh, host.as_mut_ptr().cast(), 4 * MIB - 1, 1, 0),
            (4 * MIB - 1) as isize
        );
        assert!(host[..] == data[1..]);
        assert_eq!(f.contents(), data);
        drop(f);
        assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
    }
);

child_test!(
    panic_on_the_calling_thread_waits_for_the_workers,
    [
        ("HIPFILE_CHUNK_SIZE", "4096"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_INLINE_THRESHOLD", "4096")
    ],
    {
        // When the calling thread's part of a parallel request panics, the call must still not
        // return before the workers are done with the application's memory (and the workers must
        // stop taking chunks of a request that failed).
        watchdog(120);
        use std::sync::atomic::Ordering;
        fake::install(fake::Mode::CopyOnCaller);
        let dev = fake::BASE as *mut c_void;
        let size = 256 * 1024;
        let f = TestFile::rw("panic-caller", &pattern(size, 35));
        assert_eq!(rd(f.fh, dev, size, 0, 0), -5030);
        let in_flight = fake::IN_FLIGHT.load(Ordering::SeqCst);
        fake::RETURNED.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(500));
        let late = fake::LATE.load(Ordering::SeqCst);
        eprintln!("worker copies in flight at return: {in_flight}; started after return: {late}");
        assert_eq!(
            in_flight, 0,
            "the call returned while workers were still copying into the buffer"
        );
        assert_eq!(
            late, 0,
            "workers kept copying into the buffer after the call returned"
        );
    }
);
