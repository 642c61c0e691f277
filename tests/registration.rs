//! File-handle and buffer registration through the C API.
//!
//! Upstream's rules (with the development branch's range rule), the cases of upstream's system
//! and unit tests (`buffer.cpp`, `handle.cpp`), and our own (opaque handles that are never
//! dereferenced, `O_APPEND` refused, host memory). Every test runs in its own process
//! (`child_test!`) so that it starts with the driver closed.

mod common;

use std::collections::HashSet;
use std::ffi::{c_int, c_void, CString};
use std::path::Path;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use common::*;

// ---- helpers --------------------------------------------------------------------------------

/// What `*fh` holds before a registration that must fail (it must not be written).
const SENTINEL: usize = 0x5a5a_5a5a;

/// `hipFileHandleRegister` with a descriptor struct; returns the result and `*fh`, which starts
/// as [`SENTINEL`].
fn try_register_descr(d: &mut hipFileDescr_t) -> (hipFileError_t, usize) {
    let mut fh = SENTINEL as hipFileHandle_t;
    // SAFETY: valid pointers.
    let r = unsafe { hipFileHandleRegister(&mut fh, d) };
    (r, fh as usize)
}

fn try_register(fd: c_int) -> (hipFileError_t, usize) {
    try_register_descr(&mut descr(fd))
}

/// A failed registration: the exact code, `*fh` untouched.
fn assert_refused(fd: c_int, expected: hipFileOpError_t) {
    let (r, fh) = try_register(fd);
    assert_eq!(r, code(expected), "registering fd {fd}");
    assert_eq!(fh, SENTINEL, "*fh must not be written on failure (fd {fd})");
}

fn read(
    fh: hipFileHandle_t,
    buf: *mut c_void,
    size: usize,
    file_offset: i64,
    buffer_offset: i64,
) -> isize {
    // SAFETY: device memory is never dereferenced by the caller; host buffers passed here are
    // valid for `buffer_offset + size` bytes.
    unsafe { hipFileRead(fh, buf, size, file_offset, buffer_offset) }
}

fn write(
    fh: hipFileHandle_t,
    buf: *const c_void,
    size: usize,
    file_offset: i64,
    buffer_offset: i64,
) -> isize {
    // SAFETY: as for `read`.
    unsafe { hipFileWrite(fh, buf, size, file_offset, buffer_offset) }
}

fn read_host(fh: hipFileHandle_t, buf: &mut [u8], file_offset: i64) -> isize {
    read(fh, buf.as_mut_ptr().cast(), buf.len(), file_offset, 0)
}

const NOT_REGISTERED: isize = -(hipFileHandleNotRegistered as isize);

/// Whether a descriptor is still open.
fn fd_is_open(fd: c_int) -> bool {
    // SAFETY: F_GETFD takes no pointer.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// Wait until hipsim's counter `name` reaches `n` (panics after 20 s).
fn wait_for_counter(name: &str, n: u64) {
    let start = Instant::now();
    while sim().counter(name) < n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "counter {name} never reached {n}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

// ---- file registration -----------------------------------------------------

child_test!(fd_zero_can_be_registered, {
    let data = pattern(8192, 1);
    let f = TempFile::new("fd0", &data, libc::O_RDWR);
    // SAFETY: replaces this child's stdin with the scratch file.
    assert_eq!(unsafe { libc::dup2(f.fd, 0) }, 0);
    let fh = register_fd(0);
    assert_eq!(use_count(), 1);
    let mut buf = vec![0u8; 8192];
    assert_eq!(read_host(fh, &mut buf, 0), 8192);
    assert_eq!(buf, data);
    // Registration is by descriptor number: 0 again is a duplicate; the original number is not.
    assert_refused(0, hipFileHandleAlreadyRegistered);
    let fh2 = register_fd(f.fd);
    assert_ne!(fh, fh2);
    hipFileHandleDeregister(fh);
    hipFileHandleDeregister(fh2);
    assert!(fd_is_open(0), "the client descriptor stays open");
});

child_test!(
    unusable_descriptors_are_internal_errors_and_leave_the_driver_closed,
    {
        let closed = open_fd(&scratch_dir(), libc::O_RDONLY | libc::O_DIRECTORY);
        // SAFETY: our own descriptor.
        unsafe { libc::close(closed) };
        // -100 is AT_FDCWD: statx accepts it with AT_EMPTY_PATH, F_GETFL does not.
        for fd in [-1, closed, 1_000_000, i32::MAX, libc::AT_FDCWD, i32::MIN] {
            assert_refused(fd, hipFileInternalError);
            assert_eq!(
                use_count(),
                0,
                "a failed inspection does not open the driver (fd {fd})"
            );
        }
        assert_eq!(hipFileDriverClose(), code(hipFileDriverNotInitialized));
    }
);

child_test!(handle_types_other_than_opaque_fd_are_not_supported, {
    let f = TempFile::new("types", b"x", libc::O_RDWR);
    for t in [
        hipFileHandleTypeOpaqueWin32,
        hipFileHandleTypeUserspaceFS,
        0,
        99,
        -1,
        i32::MIN,
        i32::MAX,
    ] {
        let mut d = descr(f.fd);
        d.type_ = t;
        let (r, fh) = try_register_descr(&mut d);
        assert_eq!(r, code(hipFileIONotSupported), "type {t}");
        assert_eq!(fh, SENTINEL);
        assert_eq!(use_count(), 0, "type {t} must not open the driver");
    }
    // fs_ops is ignored: a dangling pointer there is never read.
    let mut d = descr(f.fd);
    d.fs_ops = std::ptr::dangling::<hipFileFSOps_t>();
    let (r, fh) = try_register_descr(&mut d);
    assert_eq!(r, OK);
    assert_ne!(fh, SENTINEL);
    assert_ne!(fh, 0);
    assert_eq!(use_count(), 1);
});

child_test!(a_registered_descriptor_cannot_be_registered_again, {
    let f = TempFile::new("dup", &pattern(4096, 2), libc::O_RDWR);
    let fh = register_fd(f.fd);
    assert_eq!(use_count(), 1);
    assert_refused(f.fd, hipFileHandleAlreadyRegistered);
    assert_eq!(use_count(), 1);
    assert_eq!(hipFileDriverOpen(), OK);
    assert_refused(f.fd, hipFileHandleAlreadyRegistered);
    assert_eq!(use_count(), 2);
    // A dup of the descriptor is another number: it registers, with another handle.
    // SAFETY: duplicating our own descriptor.
    let d = unsafe { libc::dup(f.fd) };
    assert!(d >= 0);
    let fh_dup = register_fd(d);
    assert_ne!(fh_dup, fh);
    // After deregistration the number registers again, with a new handle.
    hipFileHandleDeregister(fh);
    let fh_again = register_fd(f.fd);
    assert_ne!(fh_again, fh);
    let mut buf = vec![0u8; 4096];
    assert_eq!(read_host(fh, &mut buf, 0), NOT_REGISTERED);
    assert_eq!(read_host(fh_again, &mut buf, 0), 4096);
    assert_eq!(read_host(fh_dup, &mut buf, 0), 4096);
    assert_eq!(buf, pattern(4096, 2));
    // SAFETY: our own descriptor.
    unsafe { libc::close(d) };
});

/// Number of open descriptors of this process.
fn open_fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

child_test!(secondary_descriptors_are_closed_with_their_registration, {
    // A refused duplicate closes the descriptor it opened, and (descriptors opened by the library close with the last reference; client
    // descriptors never do).
    let files: Vec<TempFile> = (0..8)
        .map(|i| TempFile::new("fds", &[i as u8; 64], libc::O_RDWR))
        .collect();
    assert_eq!(hipFileDriverOpen(), OK);
    // Our own duplicate of the client's descriptor, and its O_DIRECT twin where the file
    // system has O_DIRECT.
    let per = 1 + usize::from(odirect_works());
    let baseline = open_fd_count();
    let handles: Vec<hipFileHandle_t> = files.iter().map(|f| register_fd(f.fd)).collect();
    assert_eq!(
        open_fd_count(),
        baseline + per * files.len(),
        "a duplicate and an O_DIRECT descriptor per registration"
    );
    for f in &files {
        assert_refused(f.fd, hipFileHandleAlreadyRegistered);
    }
    assert_eq!(
        open_fd_count(),
        baseline + per * files.len(),
        "refused duplicates leak nothing"
    );
    for h in &handles[..4] {
        hipFileHandleDeregister(*h);
    }
    assert_eq!(
        open_fd_count(),
        baseline + per * 4,
        "deregistration closes what registration opened"
    );
    // Closing the driver to 0 drops the other four.
    assert_eq!(hipFileDriverClose(), OK);
    assert_eq!(open_fd_count(), baseline);
    assert!(
        files.iter().all(|f| fd_is_open(f.fd)),
        "client descriptors stay open"
    );
    // The same for an O_DIRECT client descriptor, whose buffered twin is ours.
    if odirect_works() {
        let g = TempFile::new("fds-odirect", &[0u8; 4096], libc::O_RDWR | libc::O_DIRECT);
        let before = open_fd_count();
        let h = register_fd(g.fd);
        assert_eq!(
            open_fd_count(),
            before + 2,
            "a duplicate and a buffered twin"
        );
        hipFileHandleDeregister(h);
        assert_eq!(open_fd_count(), before);
        assert!(fd_is_open(g.fd));
    }
});

fn stat_of(fd: c_int) -> (u64, u64) {
    // SAFETY: all-zero is a valid `stat`; valid out-pointer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
    (st.st_dev, st.st_ino)
}

/// Register `client` and return the twin the registration opened (the descriptor with the
/// other `O_DIRECT` setting); the other new descriptor is the library's duplicate of the
/// client's, which shares its open file description (so its flags).
fn secondary_of(client: c_int) -> (hipFileHandle_t, c_int) {
    let before = open_fds();
    let fh = register_fd(client);
    let new: Vec<c_int> = open_fds().difference(&before).copied().collect();
    assert_eq!(
        new.len(),
        2,
        "registration opens a duplicate and a twin: {new:?}"
    );
    let same = |fd: c_int| fl(fd) & libc::O_DIRECT == fl(client) & libc::O_DIRECT;
    let (dups, twins): (Vec<c_int>, Vec<c_int>) = new.iter().partition(|&&fd| same(fd));
    assert_eq!((dups.len(), twins.len()), (1, 1), "{new:?}");
    assert!(cloexec(dups[0]), "our duplicate is O_CLOEXEC");
    assert_eq!(
        stat_of(dups[0]),
        stat_of(client),
        "the duplicate is the same file"
    );
    (fh, twins[0])
}

fn fl(fd: c_int) -> c_int {
    // SAFETY: F_GETFL takes no pointer.
    unsafe { libc::fcntl(fd, libc::F_GETFL) }
}

fn cloexec(fd: c_int) -> bool {
    // SAFETY: F_GETFD takes no pointer.
    unsafe { libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0 }
}

child_test!(secondary_descriptor_flags, {
    // Upstream's handle.cpp: a buffered client fd gets an O_DIRECT twin, an O_DIRECT client fd gets a
    // buffered twin; both inherit the access mode, are O_CLOEXEC, and refer to the same file.
    if !odirect_works() {
        eprintln!(
            "O_DIRECT does not work in {}: skipped",
            scratch_dir().display()
        );
        return;
    }
    assert_eq!(hipFileDriverOpen(), OK);
    for (tag, flags) in [
        ("rw", libc::O_RDWR),
        ("ro", libc::O_RDONLY),
        ("wo", libc::O_WRONLY),
        ("rw-direct", libc::O_RDWR | libc::O_DIRECT),
        ("ro-direct", libc::O_RDONLY | libc::O_DIRECT),
    ] {
        let f = TempFile::new(tag, &[0u8; 4096], flags);
        // The client's own close-on-exec flag does not matter.
        // SAFETY: F_SETFD with a plain flag.
        unsafe { libc::fcntl(f.fd, libc::F_SETFD, 0) };
        let (fh, twin) = secondary_of(f.fd);
        assert_eq!(stat_of(twin), stat_of(f.fd), "{tag}: same file");
        assert!(
            cloexec(twin),
            "{tag}: O_CLOEXEC on the descriptor we opened"
        );
        assert_eq!(
            fl(twin) & libc::O_ACCMODE,
            flags & libc::O_ACCMODE,
            "{tag}: access mode inherited"
        );
        let client_direct = flags & libc::O_DIRECT != 0;
        assert_eq!(
            fl(twin) & libc::O_DIRECT != 0,
            !client_direct,
            "{tag}: the twin has the other O_DIRECT setting"
        );
        assert!(
            !cloexec(f.fd),
            "{tag}: the client's descriptor flags are not changed"
        );
        assert_eq!(
            fl(f.fd) & libc::O_DIRECT != 0,
            client_direct,
            "{tag}: the client descriptor is not changed"
        );
        hipFileHandleDeregister(fh);
        assert!(!fd_is_open(twin), "{tag}: closed with the registration");
    }
});

child_test!(o_append_descriptors_are_refused, {
    let f = TempFile::new("append", b"0123", libc::O_RDWR);
    for flags in [
        libc::O_WRONLY | libc::O_APPEND,
        libc::O_RDWR | libc::O_APPEND,
    ] {
        let fd = open_fd(&f.path, flags);
        assert_refused(fd, hipFileInvalidFileOpenFlag);
        assert_eq!(
            use_count(),
            0,
            "a refused descriptor does not open the driver"
        );
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
    }
    // With the driver open the answer is the same and the count does not move.
    let fh = register_fd(f.fd);
    assert_eq!(use_count(), 1);
    let fd = open_fd(&f.path, libc::O_WRONLY | libc::O_APPEND);
    assert_refused(fd, hipFileInvalidFileOpenFlag);
    assert_eq!(use_count(), 1);
    // Clearing O_APPEND makes the same descriptor acceptable.
    // SAFETY: F_SETFL with plain flags.
    assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFL, 0) }, 0);
    let fh2 = register_fd(fd);
    assert_ne!(fh, fh2);
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
});

child_test!(
    write_only_descriptor_registers_and_reads_fail_with_ebadf,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        const LEN: usize = 64 << 10;
        let f = TempFile::new("wronly", &vec![0u8; LEN], libc::O_WRONLY);
        let fh = register_fd(f.fd);
        let b = sim().device_alloc(LEN);
        for size in [4096, LEN] {
            set_errno(0);
            assert_eq!(read(fh, b.ptr, size, 0, 0), -1, "read of {size} bytes");
            assert_eq!(errno(), libc::EBADF);
        }
        // Writes through the write-only descriptor work.
        let data = pattern(LEN, 3);
        sim().upload(b.ptr, &data);
        assert_eq!(write(fh, b.ptr, LEN, 0, 0), LEN as isize);
        assert_eq!(std::fs::read(&f.path).unwrap(), data);
        // Compat mode was forced: the fallback served everything.
        assert_eq!(sim().counter("hipAmdFileRead"), 0);
        assert_eq!(sim().counter("hipAmdFileWrite"), 0);

        // And the mirror image: a read-only descriptor reads, writes fail with EBADF.
        let g = TempFile::new("rdonly", &data, libc::O_RDONLY);
        let gh = register_fd(g.fd);
        let c = sim().device_alloc(LEN);
        assert_eq!(read(gh, c.ptr, LEN, 0, 0), LEN as isize);
        assert!(sim().download(c.ptr, LEN) == data);
        set_errno(0);
        assert_eq!(write(gh, c.ptr, LEN, 0, 0), -1);
        assert_eq!(errno(), libc::EBADF);
    }
);

child_test!(o_direct_client_descriptor_registers, {
    if !odirect_works() {
        eprintln!(
            "O_DIRECT does not work in {}: skipped",
            scratch_dir().display()
        );
        return;
    }
    const LEN: usize = 1 << 20;
    let data = pattern(LEN, 4);
    let f = TempFile::new("odirect", &data, libc::O_RDWR | libc::O_DIRECT);
    let fh = register_fd(f.fd);
    let b = sim().device_alloc(LEN);
    sim().reset_counters();
    // Aligned: the fastpath, on the client's own O_DIRECT descriptor (ext4 data=ordered).
    assert_eq!(read(fh, b.ptr, LEN, 0, 0), LEN as isize);
    assert!(sim().download(b.ptr, LEN) == data);
    // Unaligned: the fallback, on the buffered descriptor opened at registration.
    let c = sim().device_alloc(8192);
    assert_eq!(read(fh, c.ptr, 1000, 123, 0), 1000);
    assert_eq!(sim().download(c.ptr, 1000), &data[123..1123]);
    let w = pattern(777, 5);
    sim().upload(c.ptr, &w);
    assert_eq!(write(fh, c.ptr, 777, 5000, 0), 777);
    let on_disk = std::fs::read(&f.path).unwrap();
    assert_eq!(&on_disk[5000..5777], &w[..]);
    eprintln!(
        "fastpath reads: {}, fastpath bytes: {}",
        sim().counter("hipAmdFileRead"),
        sim().counter("fastpath_read_bytes")
    );
    assert_eq!(
        sim().counter("hipAmdFileRead"),
        1,
        "only the aligned read takes the fastpath"
    );
    assert_eq!(sim().counter("fastpath_read_bytes"), LEN as u64);
    assert_eq!(sim().counter("hipAmdFileWrite"), 0);
});

/// Read all of `fd`'s file (`len` bytes) with `pread`, past the library.
fn pread_all(fd: c_int, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    // SAFETY: `v` is writable for `len` bytes.
    let n = unsafe { libc::pread(fd, v.as_mut_ptr().cast(), len, 0) };
    assert_eq!(
        n,
        len as isize,
        "pread: {}",
        std::io::Error::last_os_error()
    );
    v
}

/// Register `fd` (a file of `data`), then read it into device and host memory and write
/// through it, checking every byte; with `O_DIRECT`, the aligned read is served by the fastpath
/// through the descriptor the registration opened.
fn register_and_check_io(fd: c_int, data: &[u8], seed: u64) {
    const LEN: usize = 1 << 20;
    assert_eq!(data.len(), LEN);
    let before = open_fd_count();
    let fh = register_fd(fd);
    assert_eq!(
        open_fd_count(),
        before + 1 + usize::from(odirect_works()),
        "a duplicate, and an O_DIRECT twin where the file system has O_DIRECT"
    );
    let b = sim().device_alloc(LEN);
    sim().reset_counters();
    assert_eq!(read(fh, b.ptr, LEN, 0, 0), LEN as isize);
    assert!(sim().download(b.ptr, LEN) == data);
    if odirect_works() {
        assert_eq!(sim().counter("hipAmdFileRead"), 1, "the aligned read");
        assert_eq!(sim().counter("fastpath_read_bytes"), LEN as u64);
    }
    let mut host = vec![0u8; 5000];
    assert_eq!(read_host(fh, &mut host, 777), 5000);
    assert_eq!(host, &data[777..5777]);
    let w = pattern(64 << 10, seed);
    sim().upload(b.ptr, &w);
    assert_eq!(write(fh, b.ptr, w.len(), 8192, 0), w.len() as isize);
    let hw = pattern(999, seed + 1);
    assert_eq!(
        write(fh, hw.as_ptr().cast(), hw.len(), 100_001, 0),
        hw.len() as isize
    );
    let mut expected = data.to_vec();
    expected[8192..8192 + w.len()].copy_from_slice(&w);
    expected[100_001..100_001 + hw.len()].copy_from_slice(&hw);
    assert!(
        pread_all(fd, LEN) == expected,
        "the file holds exactly what was written"
    );
    hipFileHandleDeregister(fh);
    assert_eq!(open_fd_count(), before);
}

child_test!(o_nofollow_and_o_tmpfile_descriptors_register, {
    // Regression: the re-open through /proc/self/fd replayed every F_GETFL flag, so
    // O_NOFOLLOW refused the magic link (ELOOP) and O_TMPFILE asked for a directory (ENOTDIR):
    // hipFileInternalError. Python's tempfile.TemporaryFile() opens with both.
    assert_eq!(hipFileDriverOpen(), OK);
    let data = pattern(1 << 20, 21);
    let f = TempFile::new("nofollow", &data, libc::O_RDWR | libc::O_NOFOLLOW);
    assert_ne!(fl(f.fd) & libc::O_NOFOLLOW, 0, "F_GETFL reports O_NOFOLLOW");
    register_and_check_io(f.fd, &data, 22);

    let dir = CString::new(scratch_dir().as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated directory name; the mode is given for O_TMPFILE.
    let fd = unsafe {
        libc::open(
            dir.as_ptr(),
            libc::O_TMPFILE | libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd < 0 {
        eprintln!(
            "O_TMPFILE does not work in {}: {}; skipped",
            scratch_dir().display(),
            std::io::Error::last_os_error()
        );
        return;
    }
    assert_eq!(
        fl(fd) & libc::O_TMPFILE,
        libc::O_TMPFILE,
        "F_GETFL reports O_TMPFILE"
    );
    let data = pattern(1 << 20, 23);
    // SAFETY: `data` is readable for its length.
    let n = unsafe { libc::pwrite(fd, data.as_ptr().cast(), data.len(), 0) };
    assert_eq!(n, data.len() as isize);
    register_and_check_io(fd, &data, 24);
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
});

child_test!(tmpfs_file_registers_and_is_served_by_the_fallback, {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        skipped("tmpfs_file_registers_and_is_served_by_the_fallback: no /dev/shm");
        return;
    }
    const LEN: usize = 256 << 10;
    let data = pattern(LEN, 6);
    let f = TempFile::at(
        shm.join(format!("hipfile-registration-{}", std::process::id())),
        &data,
        libc::O_RDWR,
    );
    let fh = register_fd(f.fd);
    let b = sim().device_alloc(LEN);
    sim().reset_counters();
    // Aligned requests: still not the fastpath (tmpfs is neither ext4 nor xfs).
    assert_eq!(read(fh, b.ptr, LEN, 0, 0), LEN as isize);
    assert!(sim().download(b.ptr, LEN) == data);
    assert_eq!(read(fh, b.ptr, 64 << 10, 64 << 10, 4096), 64 << 10);
    assert_eq!(
        sim().download(b.at(4096), 64 << 10),
        &data[64 << 10..128 << 10]
    );
    let w = pattern(128 << 10, 7);
    sim().upload(b.ptr, &w);
    assert_eq!(write(fh, b.ptr, w.len(), 3 * 4096, 0), w.len() as isize);
    let on_disk = std::fs::read(&f.path).unwrap();
    assert_eq!(&on_disk[3 * 4096..3 * 4096 + w.len()], &w[..]);
    assert_eq!(&on_disk[..3 * 4096], &data[..3 * 4096]);
    assert_eq!(sim().counter("hipAmdFileRead"), 0);
    assert_eq!(sim().counter("hipAmdFileWrite"), 0);
    assert!(
        sim().counter("h2d_bytes") >= (LEN + (64 << 10)) as u64,
        "the fallback copied the bytes"
    );
});

child_test!(directory_descriptor_registers_and_io_fails_with_eisdir, {
    // The spec does not check the file type at registration (statx and F_GETFL succeed; the
    // O_DIRECT re-open fails with EINVAL, which is tolerated), so a directory registers;
    // I/O then fails in the kernel's read with EISDIR.
    let dir = scratch_dir().join(format!("dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fd = open_fd(&dir, libc::O_RDONLY | libc::O_DIRECTORY);
    let fh = register_fd(fd);
    let b = sim().device_alloc(4096);
    set_errno(0);
    assert_eq!(read(fh, b.ptr, 4096, 0, 0), -1);
    assert_eq!(errno(), libc::EISDIR);
    let mut v = vec![0u8; 4096];
    set_errno(0);
    assert_eq!(read_host(fh, &mut v, 0), -1);
    assert_eq!(errno(), libc::EISDIR);
    hipFileHandleDeregister(fh);
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
    std::fs::remove_dir(&dir).unwrap();
});

child_test!(socket_descriptor_is_an_internal_error, {
    // statx and F_GETFL work on a socket; re-opening it through /proc/self/fd fails with ENXIO,
    // which is not the tolerated EINVAL (upstream's registration check).
    // SAFETY: plain socket creation.
    let sock = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    assert!(sock >= 0);
    assert_refused(sock, hipFileInternalError);
    assert_eq!(use_count(), 0);
    // SAFETY: our own descriptor.
    unsafe { libc::close(sock) };
});

child_test!(pipe_descriptor_registers_and_io_fails_with_espipe, {
    // The spec does not check the file type; a pipe's O_DIRECT re-open fails with EINVAL
    // (tolerated), so it registers without the fastpath, and positional I/O fails with ESPIPE.
    let mut fds = [0 as c_int; 2];
    // SAFETY: valid out-array of two descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let rh = register_fd(fds[0]);
    let wh = register_fd(fds[1]);
    let b = sim().device_alloc(4096);
    set_errno(0);
    assert_eq!(read(rh, b.ptr, 4096, 0, 0), -1);
    assert_eq!(errno(), libc::ESPIPE);
    set_errno(0);
    assert_eq!(write(wh, b.ptr, 4096, 0, 0), -1);
    assert_eq!(errno(), libc::ESPIPE);
    let mut v = vec![0u8; 16];
    set_errno(0);
    assert_eq!(read_host(rh, &mut v, 0), -1);
    assert_eq!(errno(), libc::ESPIPE);
    hipFileHandleDeregister(rh);
    hipFileHandleDeregister(wh);
    // SAFETY: our own descriptors.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
});

// ---- handles: stale, forged, reused ---------------------------

child_test!(deregistered_handle_is_not_registered, {
    let f = TempFile::new("stale", &pattern(4096, 8), libc::O_RDWR);
    let fh = register_fd(f.fd);
    let mut v = vec![0u8; 4096];
    assert_eq!(read_host(fh, &mut v, 0), 4096);
    hipFileHandleDeregister(fh);
    assert_eq!(read_host(fh, &mut v, 0), NOT_REGISTERED);
    assert_eq!(write(fh, v.as_ptr().cast(), 4096, 0, 0), NOT_REGISTERED);
    // Deregistering again, or NULL, is silent.
    hipFileHandleDeregister(fh);
    hipFileHandleDeregister(null_mut());
    assert_eq!(use_count(), 1, "deregistration never changes the count");
    assert!(fd_is_open(f.fd), "the client descriptor stays open");
    assert_eq!(
        std::fs::read(&f.path).unwrap(),
        pattern(4096, 8),
        "the refused write wrote nothing"
    );
});

child_test!(forged_handles_are_not_registered, {
    let f = TempFile::new("forged", &pattern(4096, 9), libc::O_RDWR);
    let fh = register_fd(f.fd);
    let real = fh as usize;
    let mut local: hipFileHandle_t = fh;
    let forged = [
        0xdead_beef_usize,
        usize::MAX,
        1,
        0,
        0x1000,
        real ^ (1 << 40),
        real.wrapping_add(1),
        real.wrapping_sub(1),
        real ^ (1 << 63),
        &mut local as *mut hipFileHandle_t as usize,
    ];
    let mut v = vec![0u8; 4096];
    for h in forged {
        assert_ne!(h, real);
        let h = h as hipFileHandle_t;
        assert_eq!(read_host(h, &mut v, 0), NOT_REGISTERED, "read with {h:?}");
        assert_eq!(
            write(h, v.as_ptr().cast(), 4096, 0, 0),
            NOT_REGISTERED,
            "write with {h:?}"
        );
        hipFileHandleDeregister(h);
    }
    // The real registration survived all of that.
    assert_eq!(read_host(fh, &mut v, 0), 4096);
    assert_eq!(v, pattern(4096, 9));
    assert_eq!(local, fh);
});

child_test!(stale_handle_stays_invalid_after_its_slot_is_reused, {
    let a = TempFile::new("reuse-a", &pattern(4096, 10), libc::O_RDWR);
    let b = TempFile::new("reuse-b", &pattern(4096, 11), libc::O_RDWR);
    let old = register_fd(a.fd);
    hipFileHandleDeregister(old);
    let new = register_fd(b.fd);
    assert_ne!(old, new);
    let mut v = vec![0u8; 4096];
    assert_eq!(read_host(old, &mut v, 0), NOT_REGISTERED);
    // Deregistering the stale handle must not remove the new registration.
    hipFileHandleDeregister(old);
    assert_eq!(read_host(new, &mut v, 0), 4096);
    assert_eq!(v, pattern(4096, 11));
    // Many cycles on the same descriptor: every handle is new, every old one is dead.
    hipFileHandleDeregister(new);
    let mut seen: HashSet<usize> = [old as usize, new as usize].into();
    let mut previous = Vec::new();
    for _ in 0..200 {
        let h = register_fd(a.fd);
        assert!(seen.insert(h as usize), "handle {h:?} handed out twice");
        hipFileHandleDeregister(h);
        previous.push(h);
    }
    for h in previous {
        assert_eq!(read_host(h, &mut v, 0), NOT_REGISTERED);
    }
    assert_eq!(use_count(), 1);
});

// A deregistration while a synchronous read is in flight: the buffer's is refused with
// hipFileInternalError (upstream's answer); the handle's takes effect at once (AMD's hipFile
// ignores it while the file is in use, which leaves a handle the application thinks gone): later
// calls with the handle get hipFileHandleNotRegistered and the descriptor registers again, while
// the read in flight finishes with the file it started with.
child_test!(
    deregistration_while_io_is_in_flight,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        let data = pattern(4096, 12);
        let f = TempFile::new("inflight", &data, libc::O_RDWR);
        let fh = register_fd(f.fd);
        let b = sim().device_alloc(4096);
        assert_eq!(hipFileBufRegister(b.ptr, 4096, 0), OK);
        sim().reset_counters();
        // Every copy sleeps 500 ms: the read below sits inside its one hipMemcpy for that long.
        sim().fault("copy_delay_us", 500_000);
        let (fh_addr, b_addr) = (fh as usize, b.ptr as usize);
        let reader = std::thread::spawn(move || {
            read(
                fh_addr as hipFileHandle_t,
                b_addr as *mut c_void,
                4096,
                0,
                0,
            )
        });
        wait_for_counter("hipMemcpy", 1);
        // Mid-read: the buffer refuses with 5030; the handle goes.
        assert_eq!(hipFileBufDeregister(b.ptr), code(hipFileInternalError));
        hipFileHandleDeregister(fh);
        assert!(
            !reader.is_finished(),
            "the read ended before the deregistration attempts; raise the delay"
        );
        sim().fault("copy_delay_us", 0);
        assert_eq!(read(fh, b.ptr, 4096, 0, 0), NOT_REGISTERED);
        assert_eq!(reader.join().unwrap(), 4096, "the read in flight completes");
        assert_eq!(sim().download(b.ptr, 4096), data);
        // The buffer is still registered; the descriptor registers again.
        assert_eq!(
            hipFileBufRegister(b.ptr, 4096, 0),
            code(hipFileMemoryAlreadyRegistered)
        );
        let again = register_fd(f.fd);
        assert_eq!(read(again, b.ptr, 4096, 0, 0), 4096);
        assert_eq!(hipFileBufDeregister(b.ptr), OK);
        hipFileHandleDeregister(again);
        assert_eq!(read(again, b.ptr, 4096, 0, 0), NOT_REGISTERED);
    }
);

// ---- buffer registration --------------------------------------

child_test!(device_buffer_registration_vectors, {
    let s = sim();
    let b4 = s.device_alloc(4096);
    // 4 KiB allocation, length 8192 → range error (and the driver was opened first).
    assert_eq!(
        hipFileBufRegister(b4.ptr, 8192, 0),
        code(hipFileHipPointerRangeError)
    );
    assert_eq!(use_count(), 1);
    assert_eq!(
        hipFileBufRegister(b4.ptr, 4097, 0),
        code(hipFileHipPointerRangeError)
    );
    assert_eq!(
        hipFileBufRegister(b4.ptr, 4096, 0),
        OK,
        "exactly the allocation"
    );
    assert_eq!(hipFileBufDeregister(b4.ptr), OK);
    // Interior pointer +4096 of an 8 KiB allocation.
    let b8 = s.device_alloc(8192);
    assert_eq!(hipFileBufRegister(b8.at(4096), 4096, 0), OK);
    assert_eq!(hipFileBufDeregister(b8.at(4096)), OK);
    assert_eq!(
        hipFileBufRegister(b8.at(4096), 8192, 0),
        code(hipFileHipPointerRangeError)
    );
    assert_eq!(
        hipFileBufRegister(b8.at(4096), 4097, 0),
        code(hipFileHipPointerRangeError)
    );
    assert_eq!(hipFileBufRegister(b8.at(8191), 1, 0), OK, "last byte");
    assert_eq!(hipFileBufDeregister(b8.at(8191)), OK);
    // Length UINT64_MAX.
    assert_eq!(
        hipFileBufRegister(b8.ptr, usize::MAX, 0),
        code(hipFileHipPointerRangeError)
    );
    assert_eq!(
        hipFileBufRegister(b8.at(4096), usize::MAX, 0),
        code(hipFileHipPointerRangeError)
    );
    // NULL.
    assert_eq!(
        hipFileBufRegister(null(), 4096, 0),
        code(hipFileInvalidValue)
    );
    assert_eq!(hipFileBufRegister(null(), 0, 0), code(hipFileInvalidValue));
    // Length 0 is accepted.
    assert_eq!(hipFileBufRegister(b8.ptr, 0, 0), OK);
    assert_eq!(hipFileBufDeregister(b8.ptr), OK);
    // Duplicates, whatever the length or flags.
    assert_eq!(hipFileBufRegister(b8.ptr, 8192, 0), OK);
    assert_eq!(
        hipFileBufRegister(b8.ptr, 8192, 0),
        code(hipFileMemoryAlreadyRegistered)
    );
    assert_eq!(
        hipFileBufRegister(b8.ptr, 4096, 1),
        code(hipFileMemoryAlreadyRegistered)
    );
    assert_eq!(
        hipFileBufRegister(b8.ptr, usize::MAX, 0),
        code(hipFileMemoryAlreadyRegistered),
        "duplicate is checked first"
    );
    // Only the exact base is a key: an interior pointer is a separate registration.
    assert_eq!(hipFileBufRegister(b8.at(4096), 4096, 0), OK);
    assert_eq!(hipFileBufDeregister(b8.at(4096)), OK);
    assert_eq!(hipFileBufDeregister(b8.ptr), OK);
    // Flags are stored and ignored.
    assert_eq!(hipFileBufRegister(b8.ptr, 8192, -1), OK);
    assert_eq!(hipFileBufDeregister(b8.ptr), OK);
    assert_eq!(use_count(), 1);
});

child_test!(registered_length_bounds_io_on_that_base, {
    // I/O on a registered base is bounded by the registered length, not by
    // the allocation; length 0 makes every I/O on that exact pointer fail; pointers inside the
    // range are not registered and are resolved from their allocation.
    let data = pattern(8192, 14);
    let f = TempFile::new("reglen", &data, libc::O_RDWR);
    let fh = register_fd(f.fd);
    let b = sim().device_alloc(8192);
    assert_eq!(
        read(fh, b.ptr, 8192, 0, 0),
        8192,
        "unregistered: the whole allocation"
    );
    assert_eq!(hipFileBufRegister(b.ptr, 4096, 0), OK);
    assert_eq!(read(fh, b.ptr, 8192, 0, 0), -(hipFileInvalidValue as isize));
    assert_eq!(read(fh, b.ptr, 4096, 0, 0), 4096);
    assert_eq!(
        read(fh, b.ptr, 1, 0, 4096),
        -(hipFileInvalidValue as isize),
        "buffer_offset == length"
    );
    assert_eq!(
        read(fh, b.at(4096), 4096, 4096, 0),
        4096,
        "interior pointer: its allocation"
    );
    assert_eq!(sim().download(b.ptr, 8192), data);
    assert_eq!(hipFileBufDeregister(b.ptr), OK);
    assert_eq!(hipFileBufRegister(b.ptr, 0, 0), OK);
    assert_eq!(
        read(fh, b.ptr, 0, 0, 0),
        -(hipFileInvalidValue as isize),
        "length 0: even size 0 fails"
    );
    assert_eq!(read(fh, b.ptr, 4096, 0, 0), -(hipFileInvalidValue as isize));
    assert_eq!(
        write(fh, b.ptr, 4096, 0, 0),
        -(hipFileInvalidValue as isize)
    );
    assert_eq!(hipFileBufDeregister(b.ptr), OK);
    assert_eq!(
        read(fh, b.ptr, 0, 0, 0),
        0,
        "unregistered again: size 0 reads nothing"
    );
});

/// hipMallocManaged.
fn managed_alloc(len: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer; 1 = hipMemAttachGlobal.
    assert_eq!(unsafe { (sim().malloc_managed)(&mut p, len, 1) }, 0);
    p
}

/// hipHostMalloc (pinned host memory).
fn pinned_alloc(len: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (sim().host_malloc)(&mut p, len, 0) }, 0);
    p
}

fn pinned_free(p: *mut c_void) {
    // SAFETY: from pinned_alloc.
    assert_eq!(unsafe { (sim().host_free)(p) }, 0);
}

fn managed_free(p: *mut c_void) {
    // SAFETY: from managed_alloc.
    assert_eq!(unsafe { (sim().free)(p) }, 0);
}

child_test!(buffer_memory_types_with_the_host_backend, {
    // Managed memory is never accepted.
    let m = managed_alloc(8192);
    assert_eq!(
        hipFileBufRegister(m, 8192, 0),
        code(hipFileHipMemoryTypeInvalid)
    );
    assert_eq!(use_count(), 1);
    // Pinned host memory: accepted by the host backend, range-checked against its allocation.
    let p = pinned_alloc(8192);
    assert_eq!(hipFileBufRegister(p, 8192, 0), OK);
    assert_eq!(
        hipFileBufRegister(p, 8192, 0),
        code(hipFileMemoryAlreadyRegistered)
    );
    assert_eq!(hipFileBufDeregister(p), OK);
    let p_mid = (p as usize + 4096) as *const c_void;
    assert_eq!(
        hipFileBufRegister(p_mid, 8192, 0),
        code(hipFileHipPointerRangeError)
    );
    assert_eq!(hipFileBufRegister(p_mid, 4096, 0), OK);
    assert_eq!(hipFileBufDeregister(p_mid), OK);
    // Pageable host memory: accepted (the runtime knows no range for it).
    let v = vec![0u8; 8192];
    assert_eq!(hipFileBufRegister(v.as_ptr().cast(), v.len(), 0), OK);
    assert_eq!(hipFileBufDeregister(v.as_ptr().cast()), OK);
    // A garbage pointer: hipsim (ROCm >= 6 numbering) reports unknown memory as
    // hipMemoryTypeUnregistered, which is what pageable memory looks like, so it is accepted as
    // host memory. Nothing is dereferenced at registration.
    assert_eq!(hipFileBufRegister(0x10 as *const c_void, 4096, 0), OK);
    assert_eq!(hipFileBufDeregister(0x10 as *const c_void), OK);
    // Device memory, of course.
    let d = sim().device_alloc(4096);
    assert_eq!(hipFileBufRegister(d.ptr, 4096, 0), OK);
    assert_eq!(hipFileBufDeregister(d.ptr), OK);
    pinned_free(p);
    managed_free(m);
});

child_test!(
    buffer_memory_types_without_the_host_backend,
    [("HIPFILE_HOST", "false")],
    {
        // Upstream 0.2 rules: only device memory.
        let m = managed_alloc(8192);
        let p = pinned_alloc(8192);
        let v = vec![0u8; 8192];
        assert_eq!(
            hipFileBufRegister(m, 8192, 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        assert_eq!(
            hipFileBufRegister(p, 8192, 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        assert_eq!(
            hipFileBufRegister(v.as_ptr().cast(), v.len(), 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        assert_eq!(
            hipFileBufRegister(0x10 as *const c_void, 4096, 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        assert_eq!(
            hipFileBufRegister(null(), 4096, 0),
            code(hipFileInvalidValue)
        );
        let d = sim().device_alloc(4096);
        assert_eq!(hipFileBufRegister(d.ptr, 4096, 0), OK);
        assert_eq!(
            hipFileBufRegister(d.ptr, 8192, 0),
            code(hipFileMemoryAlreadyRegistered)
        );
        assert_eq!(hipFileBufDeregister(d.ptr), OK);
        assert_eq!(
            hipFileBufRegister(d.ptr, 8192, 0),
            code(hipFileHipPointerRangeError)
        );
        // Nothing was registered by the refusals.
        for ptr in [
            m as *const c_void,
            p as *const c_void,
            v.as_ptr().cast(),
            0x10 as *const c_void,
        ] {
            assert_eq!(hipFileBufDeregister(ptr), code(hipFileMemoryNotRegistered));
        }
        assert_eq!(use_count(), 1);
        pinned_free(p);
        managed_free(m);
    }
);

// ---- buffer deregistration -------------------------------------------------

child_test!(buffer_deregistration_rules, {
    assert_eq!(hipFileDriverOpen(), OK);
    let b = sim().device_alloc(8192);
    assert_eq!(
        hipFileBufDeregister(b.ptr),
        code(hipFileMemoryNotRegistered),
        "never registered"
    );
    assert_eq!(
        hipFileBufDeregister(null()),
        code(hipFileMemoryNotRegistered),
        "NULL with the driver open"
    );
    assert_eq!(
        hipFileBufDeregister(std::ptr::dangling::<c_void>()),
        code(hipFileMemoryNotRegistered)
    );
    assert_eq!(hipFileBufRegister(b.ptr, 8192, 0), OK);
    assert_eq!(
        hipFileBufDeregister(b.at(4096)),
        code(hipFileMemoryNotRegistered),
        "interior pointer"
    );
    assert_eq!(
        hipFileBufDeregister(b.at(1)),
        code(hipFileMemoryNotRegistered),
        "interior pointer"
    );
    assert_eq!(hipFileBufDeregister(b.ptr), OK);
    assert_eq!(
        hipFileBufDeregister(b.ptr),
        code(hipFileMemoryNotRegistered),
        "twice"
    );
    assert_eq!(use_count(), 1);
});

// ---- pageable memory, whatever the runtime answers ----------------------------

child_test!(
    pageable_memory_is_host_memory_whatever_the_runtime_answers,
    {
        assert_eq!(hipFileDriverOpen(), OK);
        assert_eq!(hipfile::api::runtime_report().version, 70_200_000);
        let data = pattern(8192, 31);
        let f = TempFile::new("pageable", &data, libc::O_RDWR);
        let fh = register_fd(f.fd);
        let check = |what: &str| {
            // A registered pageable buffer, then an unregistered one.
            let mut v = vec![0u8; 8192];
            assert_eq!(
                hipFileBufRegister(v.as_ptr().cast(), v.len(), 0),
                OK,
                "{what}"
            );
            assert_eq!(read(fh, v.as_mut_ptr().cast(), 8192, 0, 0), 8192, "{what}");
            assert_eq!(v, data, "{what}");
            assert_eq!(hipFileBufDeregister(v.as_ptr().cast()), OK, "{what}");
            let mut u = vec![0u8; 5000];
            assert_eq!(read_host(fh, &mut u, 100), 5000, "{what}");
            assert_eq!(u, &data[100..5100], "{what}");
        };
        // AMD's ROCm 7 runtime: hipSuccess, hipMemoryTypeUnregistered, hipInvalidDeviceId.
        check("ROCm 7 answers Unregistered");
        // AMD's documentation: hipErrorInvalidValue for memory the runtime does not know, at any
        // version. The simulator answers so below ROCm 6; switched there after the library read the
        // version, it plays a ROCm 7.2 runtime that answers as documented. (Regression: the library
        // took that answer for "unregistered" only from a ROCm 5 runtime, and refused the memory
        // with hipFileInvalidValue.)
        sim().fault("runtime_version", 50_700_000);
        assert_eq!(
            hipfile::api::runtime_report().version,
            70_200_000,
            "the library still holds the version it read at load"
        );
        check("ROCm 7 answers hipErrorInvalidValue");
        hipFileHandleDeregister(fh);
    }
);

// ---- ROCm 5 memory-type numbering ---------------------------------------------

child_test!(
    rocm5_numbering_is_read_from_the_runtime_version,
    [("HIPSIM_RUNTIME_VERSION", "50200000")],
    {
        assert_eq!(hipFileDriverOpen(), OK);
        assert_eq!(hipfile::api::runtime_report().version, 50_200_000);
        // Device memory (type 1 on ROCm 5) registers, with the device range rules.
        let b8 = sim().device_alloc(8192);
        assert_eq!(hipFileBufRegister(b8.ptr, 8192, 0), OK);
        assert_eq!(hipFileBufDeregister(b8.ptr), OK);
        assert_eq!(
            hipFileBufRegister(b8.ptr, 8193, 0),
            code(hipFileHipPointerRangeError)
        );
        assert_eq!(hipFileBufRegister(b8.at(4096), 4096, 0), OK);
        assert_eq!(hipFileBufDeregister(b8.at(4096)), OK);
        assert_eq!(
            hipFileBufRegister(b8.at(4096), 8192, 0),
            code(hipFileHipPointerRangeError)
        );
        // Pinned host memory (type 0 on ROCm 5) is host memory: accepted.
        let p = pinned_alloc(8192);
        assert_eq!(hipFileBufRegister(p, 8192, 0), OK);
        assert_eq!(hipFileBufDeregister(p), OK);
        // Managed memory (Unified + isManaged on ROCm 5): refused.
        let m = managed_alloc(8192);
        assert_eq!(
            hipFileBufRegister(m, 8192, 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        // Pageable memory (ROCm 5 answers hipErrorInvalidValue): host memory, accepted.
        let v = vec![0u8; 8192];
        assert_eq!(hipFileBufRegister(v.as_ptr().cast(), v.len(), 0), OK);
        assert_eq!(hipFileBufDeregister(v.as_ptr().cast()), OK);
        // I/O into the device buffer goes through a device path (a host path would touch the
        // simulated device's inaccessible addresses and crash).
        let data = pattern(8192, 13);
        let f = TempFile::new("rocm5", &data, libc::O_RDWR);
        let fh = register_fd(f.fd);
        assert_eq!(read(fh, b8.ptr, 8192, 0, 0), 8192);
        assert_eq!(sim().download(b8.ptr, 8192), data);
        hipFileHandleDeregister(fh);
        pinned_free(p);
        managed_free(m);
    }
);

child_test!(
    rocm5_numbering_without_the_host_backend,
    [
        ("HIPSIM_RUNTIME_VERSION", "50200000"),
        ("HIPFILE_HOST", "false")
    ],
    {
        // Only device memory passes: proves type 1 is read as Device and type 0 as Host.
        let b = sim().device_alloc(4096);
        assert_eq!(hipFileBufRegister(b.ptr, 4096, 0), OK);
        assert_eq!(hipFileBufDeregister(b.ptr), OK);
        let p = pinned_alloc(4096);
        assert_eq!(
            hipFileBufRegister(p, 4096, 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        let m = managed_alloc(4096);
        assert_eq!(
            hipFileBufRegister(m, 4096, 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        let v = vec![0u8; 4096];
        assert_eq!(
            hipFileBufRegister(v.as_ptr().cast(), v.len(), 0),
            code(hipFileHipMemoryTypeInvalid)
        );
        assert_eq!(use_count(), 1);
        pinned_free(p);
        managed_free(m);
    }
);

// A file system that refuses O_DIRECT (procfs, as tmpfs did before Linux 6.6): the file
// registers without an O_DIRECT descriptor (EINVAL tolerated) and
// even aligned requests are served by the fallback, with HIPFILE_UNSUPPORTED_FILE_SYSTEMS
// lifting the file-system rule so that only the missing O_DIRECT descriptor refuses the fastpath.
child_test!(
    file_system_without_o_direct_registers_and_uses_the_fallback,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        let path = Path::new("/proc/version");
        let expected = std::fs::read(path).unwrap();
        assert!(expected.len() > 16, "the kernel version is not empty");
        let fd = open_fd(path, libc::O_RDONLY);
        let fh = register_fd(fd);
        let buf = sim().device_alloc(1 << 20);
        sim().reset_counters();
        // SAFETY: a registered handle and a 1 MiB device buffer; aligned offset and size.
        let n = unsafe { hipFileRead(fh, buf.ptr, 1 << 20, 0, 0) };
        assert_eq!(n as usize, expected.len(), "short read at end of file");
        assert_eq!(sim().download(buf.ptr, expected.len()), expected);
        assert_eq!(
            sim().counter("hipAmdFileRead"),
            0,
            "no O_DIRECT descriptor, no fastpath"
        );
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);
