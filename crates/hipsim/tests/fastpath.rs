//! `hipAmdFileRead` / `hipAmdFileWrite` on real `O_DIRECT` files: transfers, refusals, end of
//! file, faults, and cheap sparse reads.

mod common;

use std::ffi::{c_int, c_void};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::*;

const EINVAL: i32 = libc::EINVAL;

/// A temporary file removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str) -> TempFile {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "hipsim-{}-{tag}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, b"").unwrap();
        TempFile(path)
    }

    fn open(&self, flags: c_int) -> c_int {
        let c = cstr(self.0.to_str().unwrap());
        // SAFETY: valid path.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
        assert!(
            fd >= 0,
            "open {}: {}",
            self.0.display(),
            std::io::Error::last_os_error()
        );
        fd
    }

    /// An O_DIRECT descriptor, or None when the filesystem refuses O_DIRECT.
    fn open_direct(&self, flags: c_int) -> Option<c_int> {
        let c = cstr(self.0.to_str().unwrap());
        // SAFETY: valid path.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_DIRECT | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINVAL) {
                println!(
                    "SKIP: {} does not support O_DIRECT",
                    std::env::temp_dir().display()
                );
                return None;
            }
            panic!("open O_DIRECT: {e}");
        }
        Some(fd)
    }

    fn file(&self) -> std::fs::File {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.0)
            .unwrap()
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

/// (rc, bytes, status) of a fastpath read.
fn read(s: &Sim, fd: c_int, dev: *mut c_void, size: u64, offset: i64) -> (c_int, u64, i32) {
    let mut bytes = 77u64;
    let mut status = 77i32;
    // SAFETY: valid out-pointers; the simulator validates the rest.
    let rc = unsafe {
        (s.hipAmdFileRead)(
            FileHandle::fd(fd),
            dev,
            size,
            offset,
            &mut bytes,
            &mut status,
        )
    };
    (rc, bytes, status)
}

fn write(s: &Sim, fd: c_int, dev: *mut c_void, size: u64, offset: i64) -> (c_int, u64, i32) {
    let mut bytes = 77u64;
    let mut status = 77i32;
    // SAFETY: valid out-pointers; the simulator validates the rest.
    let rc = unsafe {
        (s.hipAmdFileWrite)(
            FileHandle::fd(fd),
            dev,
            size,
            offset,
            &mut bytes,
            &mut status,
        )
    };
    (rc, bytes, status)
}

fn at(p: *mut c_void, off: usize) -> *mut c_void {
    (p as usize + off) as *mut c_void
}

#[test]
fn read_and_write_round_trip() {
    let (s, _g) = sim();
    let tf = TempFile::new("rt");
    let len = 256 * 1024;
    let data = pattern(len, 1);
    std::fs::write(&tf.0, &data).unwrap();
    let Some(fd) = tf.open_direct(libc::O_RDWR) else {
        return;
    };
    let reads0 = counter(s, "fastpath_read_bytes");
    let writes0 = counter(s, "fastpath_write_bytes");
    let calls0 = counter(s, "hipAmdFileRead");
    let d = dmalloc(s, len);

    assert_eq!(read(s, fd, d, len as u64, 0), (0, len as u64, 0));
    assert_eq!(d2h(s, d, len), data);
    // Partial read at an offset into an interior device address.
    let d2 = dmalloc(s, len);
    assert_eq!(read(s, fd, at(d2, 8192), 16384, 4096), (0, 16384, 0));
    assert_eq!(d2h(s, at(d2, 8192), 16384), data[4096..4096 + 16384]);
    assert_eq!(
        counter(s, "fastpath_read_bytes"),
        reads0 + len as u64 + 16384
    );
    assert_eq!(counter(s, "hipAmdFileRead"), calls0 + 2);

    // Write new bytes over the middle of the file, and past its end.
    let fresh = pattern(64 * 1024, 99);
    h2d(s, d2, &fresh);
    assert_eq!(write(s, fd, d2, 64 * 1024, 128 * 1024), (0, 64 * 1024, 0));
    assert_eq!(write(s, fd, d2, 8192, len as i64), (0, 8192, 0));
    let on_disk = std::fs::read(&tf.0).unwrap();
    assert_eq!(on_disk.len(), len + 8192);
    assert_eq!(on_disk[..128 * 1024], data[..128 * 1024]);
    assert_eq!(on_disk[128 * 1024..192 * 1024], fresh[..]);
    assert_eq!(on_disk[192 * 1024..len], data[192 * 1024..]);
    assert_eq!(on_disk[len..], fresh[..8192]);
    assert_eq!(
        counter(s, "fastpath_write_bytes"),
        writes0 + 64 * 1024 + 8192
    );
    // Zero bytes is a successful no-op.
    assert_eq!(read(s, fd, d, 0, 0), (0, 0, 0));
    close(fd);
    // SAFETY: plain calls.
    unsafe {
        assert_eq!((s.hipFree)(d), 0);
        assert_eq!((s.hipFree)(d2), 0);
    }
}

#[test]
fn refusals() {
    let (s, _g) = sim();
    let tf = TempFile::new("refuse");
    std::fs::write(&tf.0, pattern(64 * 1024, 2)).unwrap();
    let Some(fd) = tf.open_direct(libc::O_RDWR) else {
        return;
    };
    let reads0 = counter(s, "fastpath_read_bytes");
    let d = dmalloc(s, 16384);
    let refused = (0, 0, -EINVAL);
    assert_eq!(read(s, fd, d, 4096, 100), refused, "unaligned offset");
    assert_eq!(read(s, fd, d, 1000, 0), refused, "unaligned size");
    assert_eq!(
        read(s, fd, at(d, 512), 4096, 0),
        refused,
        "unaligned device address"
    );
    assert_eq!(read(s, fd, d, 20480, 0), refused, "past the allocation");
    assert_eq!(
        read(s, fd, at(d, 12288), 8192, 0),
        refused,
        "past the allocation"
    );
    assert_eq!(read(s, fd, d, 4096, -4096), refused, "negative offset");
    assert_eq!(write(s, fd, d, 4096, 100), refused);
    assert_eq!(read(s, fd, ptr::null_mut(), 4096, 0), refused);
    let mut pinned = ptr::null_mut();
    let mut managed = ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!((s.hipHostMalloc)(&mut pinned, 8192, 0), 0);
        assert_eq!((s.hipMallocManaged)(&mut managed, 8192, 1), 0);
    }
    assert_eq!(read(s, fd, pinned, 4096, 0), refused, "pinned host memory");
    assert_eq!(read(s, fd, managed, 4096, 0), refused, "managed memory");
    let mut pageable = vec![0u8; 3 * 4096];
    let aligned = (pageable.as_mut_ptr() as usize + 4095) & !4095;
    assert_eq!(
        read(s, fd, aligned as *mut c_void, 4096, 0),
        refused,
        "pageable memory"
    );

    // Descriptors: without O_DIRECT, invalid, read-only for a write.
    let plain = tf.open(libc::O_RDWR);
    assert_eq!(read(s, plain, d, 4096, 0), refused, "no O_DIRECT");
    close(plain);
    assert_eq!(read(s, -1, d, 4096, 0), (0, 0, -libc::EBADF));
    let ro = tf.open_direct(libc::O_RDONLY).unwrap();
    assert_eq!(write(s, ro, d, 4096, 0), (0, 0, -libc::EBADF));
    close(ro);
    assert_eq!(counter(s, "fastpath_read_bytes"), reads0);

    // NULL out-pointers.
    let mut bytes = 0u64;
    let mut status = 0i32;
    // SAFETY: NULL out-pointers are refused before use.
    unsafe {
        assert_eq!(
            (s.hipAmdFileRead)(FileHandle::fd(fd), d, 4096, 0, ptr::null_mut(), &mut status),
            1
        );
        assert_eq!(
            (s.hipAmdFileWrite)(FileHandle::fd(fd), d, 4096, 0, &mut bytes, ptr::null_mut()),
            1
        );
        assert_eq!((s.hipHostFree)(pinned), 0);
        assert_eq!((s.hipFree)(managed), 0);
        assert_eq!((s.hipFree)(d), 0);
    }
    close(fd);
}

#[test]
fn end_of_file_and_holes() {
    let (s, _g) = sim();
    let tf = TempFile::new("eof");
    let data = pattern(10_000, 4);
    std::fs::write(&tf.0, &data).unwrap();
    let Some(fd) = tf.open_direct(libc::O_RDWR) else {
        return;
    };
    let d = dmalloc(s, 1 << 20);
    assert_eq!(read(s, fd, d, 16384, 0), (0, 10_000, 0));
    assert_eq!(d2h(s, d, 10_000), data);
    assert_eq!(read(s, fd, d, 4096, 8192), (0, 10_000 - 8192, 0));
    assert_eq!(read(s, fd, d, 4096, 16384), (0, 0, 0), "at end of file");
    close(fd);

    // Data, a hole, data: the hole reads back as zeros over previously dirty memory.
    let tf = TempFile::new("holes");
    let f = tf.file();
    let a = pattern(4096, 5);
    let b = pattern(4096 + 100, 6);
    f.write_all_at(&a, 0).unwrap();
    f.write_all_at(&b, 512 * 1024).unwrap();
    drop(f);
    let size = 512 * 1024 + 4096 + 100;
    let Some(fd) = tf.open_direct(libc::O_RDONLY) else {
        return;
    };
    // SAFETY: valid device range.
    assert_eq!(unsafe { (s.hipMemset)(d, 0xFF, 1 << 20) }, 0);
    // SAFETY: lseek on a descriptor the test owns.
    assert_eq!(unsafe { libc::lseek(fd, 8192, libc::SEEK_SET) }, 8192);
    assert_eq!(read(s, fd, d, 1 << 20, 0), (0, size as u64, 0));
    // SAFETY: as above.
    let offset_after = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    assert_eq!(offset_after, 8192, "the file offset is left alone");
    let back = d2h(s, d, 1 << 20);
    assert_eq!(back[..4096], a[..]);
    assert!(
        back[4096..512 * 1024].iter().all(|&x| x == 0),
        "hole reads as zeros"
    );
    assert_eq!(back[512 * 1024..size], b[..]);
    // O_DIRECT moves whole blocks: the tail of the last block may be overwritten, but nothing
    // beyond it.
    let block_end = (size + 4095) & !4095;
    assert!(
        back[block_end..].iter().all(|&x| x == 0xFF),
        "bytes past end of file are untouched"
    );
    close(fd);
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipFree)(d) }, 0);
}

#[test]
fn fastpath_faults() {
    let (s, _g) = sim();
    let tf = TempFile::new("faults");
    let data = pattern(64 * 1024, 7);
    std::fs::write(&tf.0, &data).unwrap();
    let Some(fd) = tf.open_direct(libc::O_RDWR) else {
        return;
    };
    let d = dmalloc(s, 64 * 1024);
    let reads0 = counter(s, "fastpath_read_bytes");

    set_fault(s, "fastpath_errno", libc::EREMOTEIO as i64);
    assert_eq!(read(s, fd, d, 4096, 0), (0, 0, -libc::EREMOTEIO));
    assert_eq!(write(s, fd, d, 4096, 0), (0, 0, -libc::EREMOTEIO));
    // Even invalid requests get the injected errno: no I/O is attempted.
    assert_eq!(read(s, -1, d, 4096, 0), (0, 0, -libc::EREMOTEIO));
    assert_eq!(counter(s, "fastpath_read_bytes"), reads0);
    assert_eq!(d2h(s, d, 16), vec![0u8; 16]);
    set_fault(s, "fastpath_errno", 0);

    set_fault(s, "fastpath_hip_error", 999);
    assert_eq!(read(s, fd, d, 4096, 0).0, 999);
    assert_eq!(write(s, fd, d, 4096, 0).0, 999);
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipGetLastError)() }, 999);
    set_fault(s, "fastpath_hip_error", 0);

    set_fault(s, "short_transfer", 8192);
    assert_eq!(read(s, fd, d, 64 * 1024, 0), (0, 8192, 0));
    assert_eq!(d2h(s, d, 8192), data[..8192]);
    assert_eq!(
        read(s, fd, d, 4096, 0),
        (0, 4096, 0),
        "smaller requests are not affected"
    );
    assert_eq!(write(s, fd, d, 64 * 1024, 0), (0, 8192, 0));

    // A cap that is not a multiple of 4 KiB is honoured exactly.
    set_fault(s, "short_transfer", 1000);
    assert_eq!(read(s, fd, d, 64 * 1024, 4096), (0, 1000, 0));
    assert_eq!(d2h(s, d, 1000), data[4096..5096]);
    let out = TempFile::new("short-write");
    let Some(wfd) = out.open_direct(libc::O_RDWR) else {
        return;
    };
    let fresh = pattern(4096, 8);
    h2d(s, d, &fresh);
    assert_eq!(write(s, wfd, d, 4096, 0), (0, 1000, 0));
    assert_eq!(std::fs::read(&out.0).unwrap(), fresh[..1000]);
    set_fault(s, "short_transfer", 0);
    close(wfd);
    close(fd);
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipFree)(d) }, 0);
}

/// A 3 GiB read of a sparse file into a 3 GiB allocation must cost (almost) nothing.
#[test]
fn sparse_three_gib_read_is_cheap() {
    let (s, _g) = sim();
    let gib = 1u64 << 30;
    let size = 3 * gib;
    let tf = TempFile::new("sparse");
    let f = tf.file();
    f.set_len(size).unwrap();
    let marker = pattern(4096, 9);
    f.write_all_at(&marker, gib).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let Some(fd) = tf.open_direct(libc::O_RDONLY) else {
        return;
    };
    let d = dmalloc(s, size as usize);
    // Dirty a few pages first: the read must zero them.
    for off in [0u64, 512 << 20, 2 * gib + 12288, size - 4096] {
        // SAFETY: valid device range.
        assert_eq!(unsafe { (s.hipMemset)(at(d, off as usize), 0x55, 4096) }, 0);
    }
    let t = Instant::now();
    let r = read(s, fd, d, size, 0);
    let elapsed = t.elapsed();
    assert_eq!(r, (0, size, 0));
    assert!(
        elapsed < Duration::from_millis(900),
        "sparse read took {elapsed:?}"
    );
    for off in [
        0u64,
        4096,
        512 << 20,
        gib - 4096,
        2 * gib + 12288,
        size - 4096,
    ] {
        assert_eq!(
            d2h(s, at(d, off as usize), 4096),
            vec![0u8; 4096],
            "offset {off}"
        );
    }
    assert_eq!(d2h(s, at(d, gib as usize), 4096), marker);
    close(fd);
    // SAFETY: plain call.
    assert_eq!(unsafe { (s.hipFree)(d) }, 0);
}
