//! The fake cuFile face: driver open/close and properties in both GDS modes, handle and buffer
//! registration rules, reads and writes through device memory on buffered and `O_DIRECT`
//! descriptors at unaligned offsets, the faults, and the C structure layouts.

mod common;

use std::ffi::{c_int, c_void};
use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};

use common::*;
use cufile_abi::{CUfileDescr_t, CUfileDrvPropsNvfs, CUfileDrvProps_t, CUfileError_t};

const NOT_INITIALIZED: c_int = 5001;
const IO_NOT_SUPPORTED: c_int = 5008;
const CUDA_DRIVER_ERROR: c_int = 5011;
const MEMORY_TYPE_INVALID: c_int = 5013;
const POINTER_RANGE_ERROR: c_int = 5014;
const INVALID_FILE_TYPE: c_int = 5018;
const INVALID_VALUE: c_int = 5022;
const MEMORY_ALREADY_REGISTERED: c_int = 5023;
const MEMORY_NOT_REGISTERED: c_int = 5024;
const HANDLE_NOT_REGISTERED: c_int = 5027;
const HANDLE_ALREADY_REGISTERED: c_int = 5028;
const INTERNAL_ERROR: c_int = 5030;

const OK: CUfileError_t = CUfileError_t { err: 0, cu_err: 0 };

fn err(code: c_int) -> CUfileError_t {
    CUfileError_t {
        err: code,
        cu_err: 0,
    }
}

/// A temporary file removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str, contents: &[u8]) -> TempFile {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "hipsim-cufile-{}-{tag}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, contents).unwrap();
        TempFile(path)
    }

    fn open(&self, flags: c_int) -> c_int {
        let c = cstr(self.0.to_str().unwrap());
        // SAFETY: valid path.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
        assert!(fd >= 0, "open: {}", std::io::Error::last_os_error());
        fd
    }

    /// An O_DIRECT descriptor, or None when the filesystem refuses O_DIRECT.
    fn open_direct(&self, flags: c_int) -> Option<c_int> {
        let c = cstr(self.0.to_str().unwrap());
        // SAFETY: valid path.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_DIRECT | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "open O_DIRECT: {e}");
            println!(
                "SKIP O_DIRECT: {} does not support it",
                std::env::temp_dir().display()
            );
            return None;
        }
        Some(fd)
    }

    fn read(&self) -> Vec<u8> {
        std::fs::read(&self.0).unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn close(fd: c_int) {
    // SAFETY: a descriptor the test opened.
    unsafe { libc::close(fd) };
}

/// One open of the cuFile driver, closed on drop (also when a test fails).
struct Driver<'a>(&'a Sim);

impl<'a> Driver<'a> {
    fn open(s: &'a Sim) -> Driver<'a> {
        // SAFETY: plain call.
        assert_eq!(unsafe { (s.cuFileDriverOpen)() }, OK);
        Driver(s)
    }
}

impl Drop for Driver<'_> {
    fn drop(&mut self) {
        // SAFETY: plain call.
        let e = unsafe { (self.0.cuFileDriverClose)() };
        if !std::thread::panicking() {
            assert_eq!(e, OK);
        }
    }
}

fn props(s: &Sim) -> (CUfileError_t, CUfileDrvProps_t) {
    let mut p = CUfileDrvProps_t::default();
    // SAFETY: valid out-pointer.
    let e = unsafe { (s.cuFileDriverGetProperties)(&mut p) };
    (e, p)
}

fn register(s: &Sim, fd: c_int) -> Result<*mut c_void, CUfileError_t> {
    let mut h = ptr::null_mut();
    let mut d = CUfileDescr_t::fd(fd);
    // SAFETY: valid out-pointer and descriptor.
    let e = unsafe { (s.cuFileHandleRegister)(&mut h, &mut d) };
    if e == OK {
        assert!(!h.is_null());
        Ok(h)
    } else {
        assert!(h.is_null(), "handle written on failure");
        Err(e)
    }
}

fn deregister(s: &Sim, h: *mut c_void) {
    // SAFETY: plain call.
    unsafe { (s.cuFileHandleDeregister)(h) };
}

fn buf_register(s: &Sim, p: *const c_void, len: usize) -> CUfileError_t {
    // SAFETY: plain call; the simulator validates the pointer.
    unsafe { (s.cuFileBufRegister)(p, len, 0) }
}

fn buf_deregister(s: &Sim, p: *const c_void) -> CUfileError_t {
    // SAFETY: plain call.
    unsafe { (s.cuFileBufDeregister)(p) }
}

/// (result, errno) of a cuFileRead.
fn read(s: &Sim, h: *mut c_void, buf: *mut c_void, size: usize, off: i64, boff: i64) -> isize {
    // SAFETY: the simulator validates every argument.
    unsafe { (s.cuFileRead)(h, buf, size, off, boff) }
}

fn write(s: &Sim, h: *mut c_void, buf: *mut c_void, size: usize, off: i64, boff: i64) -> isize {
    // SAFETY: the simulator validates every argument.
    unsafe { (s.cuFileWrite)(h, buf, size, off, boff) }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap()
}

fn set_errno(e: i32) {
    // SAFETY: the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

fn at(p: *mut c_void, off: usize) -> *mut c_void {
    (p as usize + off) as *mut c_void
}

fn free(s: &Sim, p: *mut c_void) {
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipFree)(p) }, 0);
}

#[test]
fn struct_layouts() {
    let (s, _g) = sim();
    assert_eq!(size_of::<CUfileError_t>(), 8);
    assert_eq!(size_of::<CUfileDrvPropsNvfs>(), 32);
    assert_eq!(size_of::<CUfileDrvProps_t>(), 56);
    assert_eq!(offset_of!(CUfileDrvProps_t, fflags), 32);
    assert_eq!(size_of::<CUfileDescr_t>(), 24);
    assert_eq!(offset_of!(CUfileDescr_t, handle), 8);
    assert_eq!(offset_of!(CUfileDescr_t, fs_ops), 16);
    // The simulator writes exactly 56 bytes, at the offsets of the C structure.
    set_fault(s, "cufile_gds", 1);
    let _d = Driver::open(s);
    let mut raw = [0xA5u8; 80];
    // SAFETY: 80 writable bytes, aligned enough for the structure (checked below).
    let e = unsafe { (s.cuFileDriverGetProperties)(raw.as_mut_ptr().cast()) };
    assert_eq!(e, OK);
    assert!(raw[56..].iter().all(|&b| b == 0xA5), "wrote past 56 bytes");
    let u32_at = |o: usize| u32::from_ne_bytes(raw[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_ne_bytes(raw[o..o + 8].try_into().unwrap());
    assert_eq!((u32_at(0), u32_at(4)), (2, 17));
    assert_eq!((u64_at(8), u64_at(16)), (4, 16384));
    assert_eq!(u32_at(24), (1 << 4) | (1 << 11));
    assert_eq!(u32_at(28), 1 << 1);
    assert_eq!(u32_at(32), 0, "fflags");
    assert_eq!(u32_at(52), 5, "max_batch_io_timeout_msecs");
}

#[test]
fn driver_open_close_and_properties() {
    let (s, _g) = sim();
    // Counters are the process's and other tests of this binary bump them too: the test
    // counts its own calls from here.
    let props0 = counter(s, "cuFileDriverGetProperties");
    assert_eq!(counter(s, "cufile_driver_opens"), 0);
    let mut h = ptr::null_mut();
    let mut d = CUfileDescr_t::fd(0);
    // SAFETY: valid pointers.
    unsafe {
        assert_eq!(props(s).0, err(NOT_INITIALIZED));
        assert_eq!((s.cuFileDriverClose)(), err(NOT_INITIALIZED));
        assert_eq!((s.cuFileDriverClose_v2)(), err(NOT_INITIALIZED));
        assert_eq!(
            (s.cuFileHandleRegister)(&mut h, &mut d),
            err(NOT_INITIALIZED)
        );
        assert_eq!(
            buf_register(s, 4096 as *const c_void, 1),
            err(NOT_INITIALIZED)
        );
        assert_eq!(
            buf_deregister(s, 4096 as *const c_void),
            err(NOT_INITIALIZED)
        );
    }
    let opens0 = counter(s, "cuFileDriverOpen");

    // Compat mode only (the default).
    {
        let _d = Driver::open(s);
        let (e, p) = props(s);
        assert_eq!(e, OK);
        assert_eq!((p.nvfs.major_version, p.nvfs.minor_version), (0, 0));
        assert_eq!(p.nvfs.dstatusflags, 0);
        assert_eq!(p.nvfs.dcontrolflags, 1 << 1, "compat mode allowed");
        // SAFETY: NULL is refused.
        assert_eq!(
            unsafe { (s.cuFileDriverGetProperties)(ptr::null_mut()) },
            err(INVALID_VALUE)
        );
    }

    // A real GDS path; the setting is read on every call.
    {
        let _d = Driver::open(s);
        set_fault(s, "cufile_gds", 1);
        let (e, p) = props(s);
        assert_eq!(e, OK);
        assert_eq!((p.nvfs.major_version, p.nvfs.minor_version), (2, 17));
        assert_ne!(p.nvfs.dstatusflags & (1 << 4), 0, "NVMe");
        assert_ne!(p.nvfs.dstatusflags & (1 << 11), 0, "NVMe P2P");
        assert_eq!(p.nvfs.dcontrolflags & (1 << 1), 1 << 1);
        set_fault(s, "cufile_gds", 0);
        assert_eq!(props(s).1.nvfs.major_version, 0);
    }

    // Reference counted: two opens need two closes (either variant).
    // SAFETY: plain calls.
    unsafe {
        assert_eq!((s.cuFileDriverOpen)(), OK);
        assert_eq!((s.cuFileDriverOpen)(), OK);
        assert_eq!(counter(s, "cufile_driver_opens"), 2);
        assert_eq!((s.cuFileDriverClose_v2)(), OK);
        assert_eq!(props(s).0, OK, "still open");
        assert_eq!((s.cuFileDriverClose)(), OK);
        assert_eq!(props(s).0, err(NOT_INITIALIZED));
        assert_eq!((s.cuFileDriverClose)(), err(NOT_INITIALIZED));
    }
    assert_eq!(counter(s, "cufile_driver_opens"), 0);
    assert_eq!(counter(s, "cuFileDriverOpen"), opens0 + 4);
    // props() five times with the driver open or closed, twice more around the reference
    // count, and the NULL out-pointer once: every call counts, refused or not.
    assert_eq!(counter(s, "cuFileDriverGetProperties"), props0 + 7);

    // No device: the CUDA driver error.
    set_fault(s, "device_count", 0);
    // SAFETY: plain call.
    let e = unsafe { (s.cuFileDriverOpen)() };
    set_fault(s, "device_count", 1);
    assert_eq!(
        e,
        CUfileError_t {
            err: CUDA_DRIVER_ERROR,
            cu_err: 100
        }
    );
    assert_eq!(counter(s, "cufile_driver_opens"), 0);
}

#[test]
fn handle_registration_rules() {
    let (s, _g) = sim();
    // This test's own calls (the counters are shared with the binary's other tests).
    let (reg0, dereg0) = (
        counter(s, "cuFileHandleRegister"),
        counter(s, "cuFileHandleDeregister"),
    );
    let tf = TempFile::new("reg", b"hello");
    let fd = tf.open(libc::O_RDWR);
    let fd2 = tf.open(libc::O_RDONLY);
    let live0 = counter(s, "cufile_handles_live");
    let driver = Driver::open(s);

    let mut h = 7usize as *mut c_void;
    let mut d = CUfileDescr_t::fd(fd);
    // SAFETY: NULL arguments and bad descriptor types are refused.
    unsafe {
        assert_eq!(
            (s.cuFileHandleRegister)(ptr::null_mut(), &mut d),
            err(INVALID_VALUE)
        );
        assert_eq!(
            (s.cuFileHandleRegister)(&mut h, ptr::null_mut()),
            err(INVALID_VALUE)
        );
        let mut win = CUfileDescr_t { type_: 2, ..d };
        assert_eq!(
            (s.cuFileHandleRegister)(&mut h, &mut win),
            err(IO_NOT_SUPPORTED)
        );
        let mut userspace = CUfileDescr_t { type_: 3, ..d };
        assert_eq!(
            (s.cuFileHandleRegister)(&mut h, &mut userspace),
            err(IO_NOT_SUPPORTED)
        );
    }
    assert_eq!(h as usize, 7, "untouched on failure");
    assert_eq!(register(s, -1), Err(err(INVALID_VALUE)));
    assert_eq!(register(s, 1_000_000), Err(err(INVALID_VALUE)));
    let mut pipe = [0; 2];
    // SAFETY: valid out-array.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
    assert_eq!(register(s, pipe[0]), Err(err(INVALID_FILE_TYPE)));
    close(pipe[0]);
    close(pipe[1]);

    // The injected refusal (what real cuFile does without udev's ID_FS_USAGE).
    set_fault(s, "cufile_register_error", HANDLE_NOT_REGISTERED as i64);
    let mut h = 7usize as *mut c_void;
    // SAFETY: valid pointers.
    let e = unsafe { (s.cuFileHandleRegister)(&mut h, &mut d) };
    assert_eq!(e, err(HANDLE_NOT_REGISTERED));
    assert_eq!(h as usize, 7, "*fh untouched");
    set_fault(s, "cufile_register_error", 0);

    let h1 = register(s, fd).unwrap();
    let h2 = register(s, fd2).unwrap();
    assert_ne!(h1, h2);
    assert_eq!(register(s, fd), Err(err(HANDLE_ALREADY_REGISTERED)));
    assert_eq!(counter(s, "cufile_handles_live"), live0 + 2);
    deregister(s, h1);
    deregister(s, h1); // unknown: ignored
    deregister(s, ptr::null_mut());
    assert_eq!(counter(s, "cufile_handles_live"), live0 + 1);
    let h3 = register(s, fd).unwrap();
    assert_ne!(h3, h1, "handles are not reused");

    // A deregistered handle is unknown to I/O.
    let dev = dmalloc(s, 4096);
    assert_eq!(read(s, h1, dev, 5, 0, 0), -(HANDLE_NOT_REGISTERED as isize));
    assert_eq!(read(s, h3, dev, 5, 0, 0), 5);

    // The last close forgets every handle.
    drop(driver);
    assert_eq!(counter(s, "cufile_handles_live"), 0);
    assert_eq!(read(s, h3, dev, 5, 0, 0), -(HANDLE_NOT_REGISTERED as isize));
    {
        let _d = Driver::open(s);
        let h = register(s, fd).unwrap();
        deregister(s, h);
    }
    // Registrations: 4 refused arguments, 3 refused descriptors, the injected refusal,
    // h1, h2, fd again, h3 and the one after the reopen. Deregistrations: h1 twice, NULL,
    // and the one after the reopen. Refused calls count too.
    assert_eq!(counter(s, "cuFileHandleRegister"), reg0 + 13);
    assert_eq!(counter(s, "cuFileHandleDeregister"), dereg0 + 4);
    free(s, dev);
    close(fd);
    close(fd2);
}

#[test]
fn buffer_registration_rules() {
    let (s, _g) = sim();
    let _d = Driver::open(s);
    let live0 = counter(s, "cufile_bufs_live");
    let dev = dmalloc(s, 64 * 1024);
    assert_eq!(buf_register(s, ptr::null(), 4096), err(INVALID_VALUE));
    assert_eq!(buf_register(s, dev, 0), err(INVALID_VALUE));
    assert_eq!(
        buf_register(s, dev, 64 * 1024 + 1),
        err(POINTER_RANGE_ERROR)
    );
    let host = [0u8; 4096];
    assert_eq!(
        buf_register(s, host.as_ptr().cast(), 4096),
        err(MEMORY_TYPE_INVALID)
    );
    let mut pinned = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipHostMalloc)(&mut pinned, 4096, 0) }, 0);
    assert_eq!(buf_register(s, pinned, 4096), err(MEMORY_TYPE_INVALID));
    let mut managed = ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (s.hipMallocManaged)(&mut managed, 4096, 1) }, 0);
    assert_eq!(buf_register(s, managed, 4096), err(MEMORY_TYPE_INVALID));

    assert_eq!(buf_register(s, dev, 32 * 1024), OK);
    assert_eq!(
        buf_register(s, dev, 32 * 1024),
        err(MEMORY_ALREADY_REGISTERED)
    );
    assert_eq!(
        buf_register(s, at(dev, 4096), 4096),
        err(MEMORY_ALREADY_REGISTERED),
        "overlap"
    );
    assert_eq!(
        buf_register(s, at(dev, 32 * 1024), 32 * 1024),
        OK,
        "adjacent"
    );
    assert_eq!(counter(s, "cufile_bufs_live"), live0 + 2);
    assert_eq!(buf_deregister(s, at(dev, 4096)), err(MEMORY_NOT_REGISTERED));
    assert_eq!(buf_deregister(s, dev), OK);
    assert_eq!(buf_deregister(s, dev), err(MEMORY_NOT_REGISTERED));
    assert_eq!(buf_deregister(s, at(dev, 32 * 1024)), OK);
    assert_eq!(counter(s, "cufile_bufs_live"), live0);
    // SAFETY: plain calls.
    unsafe {
        assert_eq!((s.hipHostFree)(pinned), 0);
        assert_eq!((s.hipFree)(managed), 0);
    }
    free(s, dev);
}

/// Reads and writes at unaligned file offsets, device offsets and sizes through `fd`.
fn round_trip(s: &Sim, tf: &TempFile, fd: c_int, data: &[u8]) {
    let len = data.len();
    let h = register(s, fd).unwrap();
    let dev = dmalloc(s, len + 8192);
    let reads0 = counter(s, "cufile_read_bytes");
    let writes0 = counter(s, "cufile_write_bytes");

    // Unaligned read: file offset 1000, bufPtr_offset 333, size 10001.
    assert_eq!(read(s, h, dev, 10_001, 1000, 333), 10_001);
    assert_eq!(d2h(s, at(dev, 333), 10_001), data[1000..11_001]);
    // Unaligned device base and a zero bufPtr_offset.
    assert_eq!(read(s, h, at(dev, 7), 4096, 4096, 0), 4096);
    assert_eq!(d2h(s, at(dev, 7), 4096), data[4096..8192]);
    // Aligned: the whole file.
    assert_eq!(read(s, h, dev, len, 0, 0), len as isize);
    assert_eq!(d2h(s, dev, len), data);
    // Aligned everything: the O_DIRECT descriptor is used as it is.
    assert_eq!(read(s, h, dev, 65_536, 131_072, 0), 65_536);
    assert_eq!(d2h(s, dev, 65_536), data[131_072..196_608]);
    // End of file: short, then nothing (aligned and unaligned).
    let tail = len % 4096;
    assert_eq!(read(s, h, dev, 8192, (len - tail) as i64, 0), tail as isize);
    assert_eq!(d2h(s, dev, tail), data[len - tail..]);
    assert_eq!(read(s, h, dev, 8192, len as i64 - 100, 0), 100);
    assert_eq!(d2h(s, dev, 100), data[len - 100..]);
    assert_eq!(read(s, h, dev, 4096, len as i64, 0), 0);
    assert_eq!(read(s, h, dev, 4096, len as i64 + 12_345, 0), 0);
    assert_eq!(read(s, h, dev, 0, 0, 0), 0);
    assert_eq!(
        counter(s, "cufile_read_bytes"),
        reads0 + 10_001 + 4096 + len as u64 + 65_536 + tail as u64 + 100
    );

    // Unaligned writes over the middle of the file and past its end.
    let fresh = pattern(20_000, 77);
    h2d(s, at(dev, 4096 + 5), &fresh);
    assert_eq!(write(s, h, dev, 20_000, 12_345, 4096 + 5), 20_000);
    assert_eq!(write(s, h, at(dev, 4096 + 5), 999, len as i64 + 10, 0), 999);
    // An aligned write.
    h2d(s, dev, &fresh[..8192]);
    assert_eq!(write(s, h, dev, 8192, 65_536, 0), 8192);
    let on_disk = tf.read();
    assert_eq!(on_disk.len(), len + 10 + 999);
    let mut expect = data.to_vec();
    expect[12_345..32_345].copy_from_slice(&fresh);
    expect[65_536..65_536 + 8192].copy_from_slice(&fresh[..8192]);
    expect.resize(len + 10, 0);
    expect.extend_from_slice(&fresh[..999]);
    assert_eq!(on_disk, expect);
    assert_eq!(
        counter(s, "cufile_write_bytes"),
        writes0 + 20_000 + 999 + 8192
    );
    // And read back through the same descriptor.
    assert_eq!(read(s, h, dev, 30_000, 12_000, 1), 30_000);
    assert_eq!(d2h(s, at(dev, 1), 30_000), expect[12_000..42_000]);

    // A registered buffer: counted, and its registered length bounds the request.
    assert_eq!(buf_register(s, dev, 16_384), OK);
    let reg0 = counter(s, "cufile_registered_buf_ios");
    assert_eq!(read(s, h, dev, 8192, 3, 8192), 8192);
    assert_eq!(
        read(s, h, dev, 8192, 3, 8193),
        -(INVALID_VALUE as isize),
        "past the registration"
    );
    assert_eq!(counter(s, "cufile_registered_buf_ios"), reg0 + 2);
    assert_eq!(buf_deregister(s, dev), OK);
    // Unregistered, the same request is fine: it lies inside the allocation.
    assert_eq!(read(s, h, dev, 8192, 3, 8193), 8192);

    deregister(s, h);
    free(s, dev);
}

#[test]
fn read_write_buffered_descriptor() {
    let (s, _g) = sim();
    let (reads0, writes0) = (counter(s, "cuFileRead"), counter(s, "cuFileWrite"));
    let _d = Driver::open(s);
    let data = pattern(256 * 1024 + 77, 3);
    let tf = TempFile::new("buffered", &data);
    let fd = tf.open(libc::O_RDWR);
    round_trip(s, &tf, fd, &data);
    close(fd);
    // round_trip's calls: 9 reads up to the end of the file and past it, the read back, 3
    // around the buffer registration (one refused); 3 writes.
    assert_eq!(counter(s, "cuFileRead"), reads0 + 13);
    assert_eq!(counter(s, "cuFileWrite"), writes0 + 3);
}

#[test]
fn read_write_direct_descriptor() {
    let (s, _g) = sim();
    let _d = Driver::open(s);
    let data = pattern(256 * 1024 + 77, 5);
    let tf = TempFile::new("direct", &data);
    let Some(fd) = tf.open_direct(libc::O_RDWR) else {
        return;
    };
    round_trip(s, &tf, fd, &data);
    close(fd);
}

#[test]
fn io_refusals() {
    let (s, _g) = sim();
    let _d = Driver::open(s);
    let data = pattern(64 * 1024, 9);
    let tf = TempFile::new("refuse", &data);
    let fd = tf.open(libc::O_RDONLY);
    let h = register(s, fd).unwrap();
    let dev = dmalloc(s, 16_384);
    let host = vec![0u8; 16_384];
    let invalid = -(INVALID_VALUE as isize);

    assert_eq!(
        read(s, 0x1234 as *mut c_void, dev, 10, 0, 0),
        -(HANDLE_NOT_REGISTERED as isize)
    );
    assert_eq!(
        read(s, h, dev, 16_385, 0, 0),
        invalid,
        "past the allocation"
    );
    assert_eq!(
        read(s, h, dev, 4096, 0, 12_289),
        invalid,
        "past the allocation"
    );
    assert_eq!(read(s, h, dev, 10, -1, 0), invalid, "negative file offset");
    assert_eq!(
        read(s, h, dev, 10, 0, -1),
        invalid,
        "negative buffer offset"
    );
    assert_eq!(read(s, h, ptr::null_mut(), 10, 0, 0), invalid, "NULL");
    assert_eq!(
        read(s, h, host.as_ptr() as *mut c_void, 10, 0, 0),
        invalid,
        "host memory"
    );
    assert_eq!(read(s, h, dev, usize::MAX, 0, 0), invalid, "size");
    assert_eq!(
        read(s, h, dev, 10, i64::MAX - 5, 0),
        invalid,
        "offset + size"
    );

    // A read-only descriptor cannot be written: -1 with errno.
    set_errno(0);
    assert_eq!(write(s, h, dev, 4096, 0, 0), -1);
    assert_eq!(last_errno(), libc::EBADF);
    // A registered descriptor closed behind cuFile's back.
    close(fd);
    set_errno(0);
    assert_eq!(read(s, h, dev, 4096, 0, 0), -1);
    assert_eq!(last_errno(), libc::EBADF);
    assert_eq!(tf.read(), data, "nothing written");
    deregister(s, h);
    free(s, dev);
}

#[test]
fn io_faults() {
    let (s, _g) = sim();
    let _d = Driver::open(s);
    let data = pattern(64 * 1024, 11);
    let tf = TempFile::new("faults", &data);
    let fd = tf.open(libc::O_RDWR);
    let h = register(s, fd).unwrap();
    let dev = dmalloc(s, 16_384);
    let zeros = vec![0u8; 16_384];
    h2d(s, dev, &zeros);
    let reads0 = counter(s, "cufile_read_bytes");
    let calls0 = counter(s, "cuFileRead");

    set_fault(s, "cufile_io_errno", libc::ENODEV as i64);
    set_errno(0);
    assert_eq!(read(s, h, dev, 4096, 0, 0), -1);
    assert_eq!(last_errno(), libc::ENODEV);
    set_errno(0);
    assert_eq!(write(s, h, dev, 4096, 0, 0), -1);
    assert_eq!(last_errno(), libc::ENODEV);
    // Applied before any check.
    set_errno(0);
    assert_eq!(read(s, ptr::null_mut(), ptr::null_mut(), 1, -1, 0), -1);
    assert_eq!(last_errno(), libc::ENODEV);

    // The cuFile error wins over the errno.
    set_fault(s, "cufile_io_error", INTERNAL_ERROR as i64);
    assert_eq!(read(s, h, dev, 4096, 0, 0), -(INTERNAL_ERROR as isize));
    set_fault(s, "cufile_io_errno", 0);
    assert_eq!(write(s, h, dev, 4096, 0, 0), -(INTERNAL_ERROR as isize));
    set_fault(s, "cufile_io_error", -(CUDA_DRIVER_ERROR as i64));
    assert_eq!(read(s, h, dev, 4096, 0, 0), -(CUDA_DRIVER_ERROR as isize));
    set_fault(s, "cufile_io_error", 0);

    assert_eq!(d2h(s, dev, 16_384), zeros, "no bytes moved");
    assert_eq!(tf.read(), data, "no bytes written");
    assert_eq!(counter(s, "cufile_read_bytes"), reads0);
    assert_eq!(counter(s, "cuFileRead"), calls0 + 4);
    assert_eq!(read(s, h, dev, 4096, 0, 0), 4096);
    assert_eq!(d2h(s, dev, 4096), data[..4096]);
    deregister(s, h);
    free(s, dev);
    close(fd);
}

/// Runs this test binary again with the cuFile settings in the environment; the child part is
/// `environment_child`.
#[test]
fn environment_settings_are_read_at_load() {
    run_child(
        "environment_child",
        &[
            ("HIPSIM_CUFILE_GDS", "1"),
            (
                "HIPSIM_CUFILE_REGISTER_ERROR",
                "CU_FILE_HANDLE_NOT_REGISTERED",
            ),
            ("HIPSIM_CUFILE_IO_ERRNO", "ENODEV"),
            ("HIPSIM_CUFILE_IO_ERROR", "-5011"),
        ],
        "environment child ok",
    );
}

#[test]
fn environment_child() {
    if !in_child() {
        return;
    }
    let s = sim_raw();
    assert_eq!(fault(s, "cufile_gds"), 1);
    assert_eq!(fault(s, "cufile_register_error"), 5027);
    assert_eq!(fault(s, "cufile_io_errno"), libc::ENODEV as i64);
    assert_eq!(fault(s, "cufile_io_error"), 5011);
    let _d = Driver::open(s);
    assert_eq!(props(s).1.nvfs.major_version, 2);
    let tf = TempFile::new("env", b"x");
    let fd = tf.open(libc::O_RDONLY);
    assert_eq!(register(s, fd), Err(err(HANDLE_NOT_REGISTERED)));
    close(fd);
    println!("environment child ok");
}
