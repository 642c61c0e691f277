//! The fault matrix: every fault knob of the simulator × every backend × read/write ×
//! sync/batch (the stream-ordered API is not built yet: it answers hipFileInternalError after its
//! argument checks, so it has no cells).
//!
//! Each cell sets one knob, makes one request, and asserts
//! * the exact outcome: the byte count (the fault is inert on that path, or retried transparently)
//!   or the exact error (`-errno`, `-hipError_t`, `-hipFileOpError`), the same through
//!   `hipFileRead`/`hipFileWrite` and through a batch operation's event;
//! * nothing leaked: descriptors, pinned bytes and device bytes as before the cell;
//! * after the fault is cleared, a write and a read of the same range give the written bytes.
//!
//! Knobs the runtime reads when it is loaded (`no_fastpath`, `device_count`, `runtime_version`,
//! `cuda_driver_version`, `cufile_gds`, `cufile_register_error`, `fail_host_alloc` before the
//! first bounce buffer) have a process of their own each. The system-level faults the simulator
//! cannot inject are at the end: ENOSPC on a small tmpfs, EIO, a file truncated by another process
//! during a read, and SIGKILL during writes.

mod common;

use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

use common::*;

/// Size of every request: 64 KiB, 4 KiB aligned, so the GPU-direct paths take it.
const SIZE: usize = 64 << 10;
/// The file: twice the request.
const FILE: usize = 2 * SIZE;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    /// AMD's GPU-direct entry points (`hipAmdFileRead/Write`), device memory.
    Fastpath,
    /// Our engine: pinned bounce buffers and runtime copies, device memory.
    Fallback,
    /// Host memory read and written in place.
    Host,
    /// NVIDIA's cuFile with a real GPUDirect Storage path, device memory.
    Cufile,
    /// NVIDIA without cuFile: our engine on CUDA copies.
    CudaFallback,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Sync,
    Batch,
}

/// One outcome, in one form for both modes: the byte count, or the negative error a batch
/// event carries (`-errno` where `hipFileRead` returns -1 and sets `errno`).
type Outcome = i64;

/// The request's memory: device memory of the backend's runtime, or host memory.
struct Mem {
    ptr: *mut std::ffi::c_void,
    dev: Option<DeviceBuf>,
    host: Vec<u8>,
    cuda: bool,
}

impl Mem {
    fn new(b: Backend) -> Mem {
        match b {
            Backend::Host => {
                let mut host = vec![0u8; SIZE];
                Mem {
                    ptr: host.as_mut_ptr().cast(),
                    dev: None,
                    host,
                    cuda: false,
                }
            }
            Backend::Cufile | Backend::CudaFallback => {
                common::cuda::cuda().make_current();
                Mem {
                    ptr: common::cuda::cuda().alloc(SIZE),
                    dev: None,
                    host: Vec::new(),
                    cuda: true,
                }
            }
            _ => {
                let d = sim().device_alloc(SIZE);
                Mem {
                    ptr: d.ptr,
                    dev: Some(d),
                    host: Vec::new(),
                    cuda: false,
                }
            }
        }
    }
    fn put(&mut self, data: &[u8]) {
        if self.dev.is_none() && !self.cuda {
            self.host.copy_from_slice(data);
        } else if self.cuda {
            common::cuda::cuda().upload(self.ptr, data);
        } else {
            sim().upload(self.ptr, data);
        }
    }
    fn get(&self) -> Vec<u8> {
        if self.dev.is_none() && !self.cuda {
            self.host.clone()
        } else if self.cuda {
            common::cuda::cuda().download(self.ptr, SIZE)
        } else {
            sim().download(self.ptr, SIZE)
        }
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        if self.cuda {
            // SAFETY: our cuMemAlloc allocation.
            unsafe { (common::cuda::cuda().mem_free)(self.ptr as u64) };
        }
    }
}

/// One request in `mode`; its outcome.
fn request(
    f: &TestFile,
    ptr: *mut std::ffi::c_void,
    write: bool,
    mode: Mode,
    size: usize,
) -> Outcome {
    match mode {
        Mode::Sync => {
            set_errno(0);
            // SAFETY: a registered handle and `SIZE` bytes of memory.
            let n = unsafe {
                if write {
                    hipFileWrite(f.fh, ptr, size, 0, 0)
                } else {
                    hipFileRead(f.fh, ptr, size, 0, 0)
                }
            };
            if n == -1 {
                -(errno() as i64)
            } else {
                n as i64
            }
        }
        Mode::Batch => {
            let mut b = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { hipFileBatchIOSetUp(&mut b, 1) }.err, 0);
            let mut p = batch_params(f.fh, batch_opcode(write), ptr, 0, 0, size, 7);
            // SAFETY: one entry.
            let e = unsafe { hipFileBatchIOSubmit(b, 1, &mut p, 0) };
            if e.err != 0 {
                hipFileBatchIODestroy(b);
                return -(e.err as i64);
            }
            let mut ev = std::mem::MaybeUninit::<hipFileIOEvents_t>::uninit();
            let mut nr = 1;
            // SAFETY: room for one event; no timeout (the operation ends).
            let e = unsafe {
                hipFileBatchIOGetStatus(b, 1, &mut nr, ev.as_mut_ptr(), std::ptr::null_mut())
            };
            assert_eq!((e.err, nr), (0, 1), "GetStatus");
            // SAFETY: the library wrote one event.
            let ev = unsafe { ev.assume_init() };
            hipFileBatchIODestroy(b);
            assert_eq!(ev.cookie as usize, 7);
            match ev.status {
                s if s == hipFileComplete => ev.ret as i64,
                s if s == hipFileFailed => ev.ret as isize as i64,
                s => panic!("batch status {s}"),
            }
        }
    }
}

/// Descriptors, pinned bytes and device bytes of this process.
fn resources() -> (usize, u64, u64) {
    (
        std::fs::read_dir("/proc/self/fd").unwrap().count(),
        sim().counter("pinned_bytes_live") + sim().counter("registered_bytes_live"),
        sim().counter("device_bytes_live"),
    )
}

/// The knobs set while running, with the values each cell tries.
const RUNTIME_KNOBS: &[(&str, &[i64])] = &[
    (
        "fastpath_errno",
        &[
            libc::EIO as i64,
            libc::ENODEV as i64,
            libc::EREMOTEIO as i64,
            libc::EINVAL as i64,
            libc::ENOSPC as i64,
            libc::EINTR as i64,
        ],
    ),
    ("fastpath_hip_error", &[1, 2, 999]),
    ("fail_copy", &[1, 999]),
    ("short_transfer", &[4096, 8192, 4097]),
    ("copy_delay_us", &[2000]),
    ("cufile_io_errno", &[libc::EIO as i64, libc::ENOSPC as i64]),
    ("cufile_io_error", &[5030, 5008]),
];

/// What a cell must give: the rules of the library (retry on ENODEV/EREMOTEIO, HIP errors as
/// their negative value except hipErrorInvalidValue = EINVAL, short transfers returned as they
/// are, cuFile's own failures retried on our engine, its OS errors returned), and inert knobs on
/// paths that do not reach what they break.
fn expect(b: Backend, knob: &str, v: i64, mode: Mode) -> Outcome {
    let size = SIZE as i64;
    // A batch operation reports any runtime failure as -hipFileHipDriverError; the synchronous
    // calls return -hipError_t, or -1 with errno EINVAL for hipErrorInvalidValue.
    let hip = |code: i64| match mode {
        Mode::Batch => -(hipFileHipDriverError as i64),
        Mode::Sync if code == 1 => -(libc::EINVAL as i64),
        Mode::Sync => -code,
    };
    if b == Backend::Host && mode == Mode::Batch {
        // Batch operations take device memory only: host memory is an internal error.
        return -(hipFileInternalError as i64);
    }
    match (b, knob) {
        (Backend::Fastpath, "fastpath_errno") => {
            if v == libc::ENODEV as i64 || v == libc::EREMOTEIO as i64 {
                size
            } else {
                -v
            }
        }
        (Backend::Fastpath, "fastpath_hip_error") => hip(v),
        (Backend::Fastpath, "short_transfer") => v.min(size),
        (Backend::Fallback | Backend::CudaFallback, "fail_copy") => hip(v),
        (Backend::Cufile, "cufile_io_errno") => -v,
        (Backend::Cufile, "cufile_io_error") => size,
        _ => size,
    }
}

/// Every runtime knob × read/write × sync/batch on backend `b`, in this process.
fn matrix(b: Backend) {
    if b == Backend::Cufile {
        // Read when the runtime is loaded, by the first call.
        std::env::set_var("HIPFILE_CUFILE_LIBRARY", hipsim_path());
    }
    assert_eq!(hipFileDriverOpen().err, 0);
    let data = pattern(FILE, 1);
    let f = TestFile::rw("matrix", &data);
    let mut m = Mem::new(b);
    // Warm up both directions and modes, and the engine with an unaligned request, so pools
    // and threads exist before counting.
    for write in [false, true] {
        for mode in [Mode::Sync, Mode::Batch] {
            m.put(&data[..SIZE]);
            let want = if b == Backend::Host && mode == Mode::Batch {
                -(hipFileInternalError as i64)
            } else {
                SIZE as i64
            };
            assert_eq!(request(&f, m.ptr, write, mode, SIZE), want, "warm-up");
        }
        // SAFETY: a registered handle and SIZE bytes of memory.
        let n = unsafe {
            if write {
                hipFileWrite(f.fh, m.ptr, 1000, 3, 5)
            } else {
                hipFileRead(f.fh, m.ptr, 1000, 3, 5)
            }
        };
        assert_eq!(n, 1000, "unaligned warm-up");
    }
    let before = resources();
    let mut cells = 0;
    let mut failures = Vec::new();
    for &(knob, values) in RUNTIME_KNOBS {
        for &v in values {
            for write in [false, true] {
                for mode in [Mode::Sync, Mode::Batch] {
                    let fresh = pattern(SIZE, cells as u64 + 10);
                    m.put(&fresh);
                    let on_disk = f.contents();
                    sim().fault(knob, v);
                    if knob == "fail_copy" {
                        sim().fault("fail_copy_after", 0);
                    }
                    let got = request(&f, m.ptr, write, mode, SIZE);
                    sim().fault(knob, 0);
                    let want = expect(b, knob, v, mode);
                    let dir = if write { "write" } else { "read" };
                    if got != want {
                        failures.push(format!(
                            "{b:?} {knob}={v} {dir} {mode:?}: got {got}, expected {want}"
                        ));
                    }
                    if got == SIZE as i64 && write {
                        assert_eq!(
                            &f.contents()[..SIZE],
                            &fresh[..],
                            "{knob}={v}: written bytes"
                        );
                    } else if got == SIZE as i64 {
                        assert!(m.get() == on_disk[..SIZE], "{knob}={v}: read bytes");
                    } else if got < 0 && write {
                        // A failed write leaves nothing but the old bytes or the new ones, and
                        // the file's length as it was.
                        let now = f.contents();
                        assert_eq!(
                            now.len(),
                            on_disk.len(),
                            "{knob}={v}: length after a failed write"
                        );
                    }
                    // Cleared: a write and a read of the same range are right again.
                    let again = pattern(SIZE, cells as u64 + 1000);
                    m.put(&again);
                    assert_eq!(
                        request(&f, m.ptr, true, Mode::Sync, SIZE),
                        SIZE as i64,
                        "{knob}={v}: write after"
                    );
                    m.put(&vec![0u8; SIZE]);
                    assert_eq!(
                        request(&f, m.ptr, false, Mode::Sync, SIZE),
                        SIZE as i64,
                        "{knob}={v}: read after"
                    );
                    assert!(
                        m.get() == again,
                        "{knob}={v} {dir} {mode:?}: data after the fault"
                    );
                    let after = resources();
                    assert_eq!(
                        after, before,
                        "{b:?} {knob}={v} {dir} {mode:?}: fds, pinned, device bytes"
                    );
                    cells += 1;
                }
            }
        }
    }
    println!(
        "fault matrix {b:?}: {cells} cells, {} unexpected",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "unexpected outcomes:\n{}",
        failures.join("\n")
    );
    drop(f);
    assert_eq!(hipFileDriverClose().err, 0);
    assert_eq!(resources().1, 0, "pinned bytes after the driver closed");
}

child_test!(
    matrix_fastpath,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        if !odirect_works() {
            println!(
                "SKIP matrix_fastpath: O_DIRECT does not work in {}",
                scratch_dir().display()
            );
            return;
        }
        matrix(Backend::Fastpath);
    }
);
child_test!(
    matrix_fallback,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_FORCE_COMPAT_MODE", "true")
    ],
    {
        matrix(Backend::Fallback);
    }
);
child_test!(
    matrix_host,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        matrix(Backend::Host);
    }
);
child_test!(
    matrix_cufile,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPSIM_CUFILE_GDS", "1")
    ],
    {
        matrix(Backend::Cufile);
    }
);
child_test!(
    matrix_cuda_fallback,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_CUFILE_LIBRARY", "none")
    ],
    {
        matrix(Backend::CudaFallback);
    }
);

// ---- knobs read when the runtime is loaded: one process each -----------------------------------

/// Read and write, sync and batch, on backend `b` in a process whose environment set a load-time
/// knob: each outcome as `want(write, mode)` says, the data right, nothing leaked after close.
fn load_time_cell(b: Backend, want: impl Fn(bool, Mode) -> Outcome) {
    if b == Backend::Cufile {
        std::env::set_var("HIPFILE_CUFILE_LIBRARY", hipsim_path());
    }
    assert_eq!(hipFileDriverOpen().err, 0);
    let data = pattern(FILE, 3);
    let f = TestFile::rw("load-time", &data);
    let mut m = Mem::new(b);
    let mut cells = Vec::new();
    for write in [false, true] {
        for mode in [Mode::Sync, Mode::Batch] {
            let fresh = pattern(SIZE, 50 + cells.len() as u64);
            m.put(&fresh);
            let on_disk = f.contents();
            let got = request(&f, m.ptr, write, mode, SIZE);
            assert_eq!(got, want(write, mode), "write {write} {mode:?}");
            if got == SIZE as i64 && write {
                assert!(f.contents()[..SIZE] == fresh[..], "written bytes");
            } else if got == SIZE as i64 {
                assert!(m.get() == on_disk[..SIZE], "read bytes");
            }
            cells.push(got);
        }
    }
    drop(f);
    drop(m);
    assert_eq!(hipFileDriverClose().err, 0);
    let (_, pinned, device) = resources();
    assert_eq!(
        (pinned, device),
        (0, 0),
        "pinned and device bytes after close"
    );
    println!("load-time cell {b:?}: {cells:?}");
}

const OK: fn(bool, Mode) -> Outcome = |_, _| SIZE as i64;

child_test!(
    load_no_fastpath,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPSIM_NO_FASTPATH", "1")
    ],
    {
        // Without hipAmdFileRead/Write the engine serves every request.
        load_time_cell(Backend::Fastpath, OK);
        assert_eq!(
            sim().counter("hipAmdFileRead") + sim().counter("hipAmdFileWrite"),
            0
        );
    }
);

child_test!(
    load_two_devices,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPSIM_DEVICE_COUNT", "2")
    ],
    {
        load_time_cell(Backend::Fastpath, OK);
        // Memory of the second device too.
        assert_eq!(unsafe { (sim().set_device)(1) }, 0);
        load_time_cell(Backend::Fallback, OK);
    }
);

child_test!(load_no_device, [("HIPSIM_DEVICE_COUNT", "0")], {
    // No device: host-only; host memory is served, batch refuses it.
    load_time_cell(Backend::Host, |_, mode| match mode {
        Mode::Sync => SIZE as i64,
        Mode::Batch => -(hipFileInternalError as i64),
    });
});

child_test!(
    load_rocm5_numbering,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPSIM_RUNTIME_VERSION", "50700000")
    ],
    {
        // ROCm 5 numbers hipMemoryType differently: device memory must still be device memory.
        load_time_cell(Backend::Fastpath, OK);
    }
);

child_test!(
    load_cuda_12,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPFILE_CUFILE_LIBRARY", "none"),
        ("HIPSIM_CUDA_DRIVER_VERSION", "12000")
    ],
    {
        load_time_cell(Backend::CudaFallback, OK);
    }
);

child_test!(
    load_cufile_compat_only,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPSIM_CUFILE_GDS", "0")
    ],
    {
        // cuFile without a GPUDirect path is not used.
        load_time_cell(Backend::Cufile, OK);
        assert_eq!(
            sim().counter("cuFileRead") + sim().counter("cuFileWrite"),
            0
        );
    }
);

child_test!(
    load_cufile_refuses_the_file,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPSIM_CUFILE_GDS", "1"),
        ("HIPSIM_CUFILE_REGISTER_ERROR", "5027")
    ],
    {
        // A file cuFile refuses is served by our engine.
        load_time_cell(Backend::Cufile, OK);
        assert_eq!(
            sim().counter("cuFileRead") + sim().counter("cuFileWrite"),
            0
        );
    }
);

child_test!(
    load_pinned_allocation_fails,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_FORCE_COMPAT_MODE", "true"),
        ("HIPSIM_FAIL_HOST_ALLOC", "1")
    ],
    {
        // No bounce buffer can be pinned: the engine's requests fail with the runtime's
        // hipErrorOutOfMemory (batch: hipFileHipDriverError).
        load_time_cell(Backend::Fallback, |_, mode| match mode {
            Mode::Sync => -2,
            Mode::Batch => -(hipFileHipDriverError as i64),
        });
    }
);

// ---- a copy that fails part-way (`fail_copy` with `fail_copy_after`) ----------------------------

// A 12 MiB request through the engine (three 4 MiB chunks) whose second runtime copy fails: a
// read fails whole (-hipError_t; batch: -hipFileHipDriverError); a write returns the contiguous
// prefix that reached the file, or the error when none did (a batch write is Failed with the
// error either way); afterwards all is right again.
child_test!(
    fail_copy_part_way,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        assert_eq!(hipFileDriverOpen().err, 0);
        let len = 12 << 20;
        let data = pattern(len, 95);
        let f = TestFile::rw("copy-part-way", &data);
        let big = sim().device_alloc(len);
        assert_eq!(request(&f, big.ptr, false, Mode::Sync, len), len as i64);
        let before = resources();
        for write in [false, true] {
            for mode in [Mode::Sync, Mode::Batch] {
                let fresh = pattern(
                    len,
                    96 + u64::from(write) + 2 * (mode == Mode::Batch) as u64,
                );
                sim().upload(big.ptr, &fresh);
                let on_disk = f.contents();
                sim().fault("fail_copy", 999);
                sim().fault("fail_copy_after", 1);
                let got = request(&f, big.ptr, write, mode, len);
                sim().fault("fail_copy", 0);
                sim().fault("fail_copy_after", 0);
                let err = match mode {
                    Mode::Sync => -999,
                    Mode::Batch => -(hipFileHipDriverError as i64),
                };
                let what = format!("fail_copy after 1 copy, write {write} {mode:?}");
                let now = f.contents();
                // Only the synchronous write reports a prefix; a batch event is Failed.
                if write && mode == Mode::Sync && got > 0 {
                    let n = got as usize;
                    assert!(n < len, "{what}: {got}");
                    assert!(
                        now[..n] == fresh[..n],
                        "{what}: the reported prefix is not on disk"
                    );
                } else {
                    assert_eq!(got, err, "{what}");
                }
                assert_eq!(now.len(), on_disk.len(), "{what}: length");
                sim().upload(big.ptr, &data);
                assert_eq!(
                    request(&f, big.ptr, true, Mode::Sync, len),
                    len as i64,
                    "{what}: write after"
                );
                sim().upload(big.ptr, &vec![0u8; len]);
                assert_eq!(
                    request(&f, big.ptr, false, Mode::Sync, len),
                    len as i64,
                    "{what}: read after"
                );
                assert!(sim().download(big.ptr, len) == data, "{what}: data after");
                assert_eq!(resources(), before, "{what}: resources");
            }
        }
        drop(big);
        drop(f);
        assert_eq!(hipFileDriverClose().err, 0);
        assert_eq!(resources().1, 0);
    }
);

// ---- system-level faults ------------------------------------------------------------------------

/// Descriptors, pinned and device bytes, as [`resources`], once the driver has closed.
fn closed_resources() -> (usize, u64, u64) {
    assert_eq!(hipFileUseCount(), 0);
    resources()
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop; `None` (with the reason
/// printed) where mounting is not possible.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = scratch_file("tmpfs");
        std::fs::create_dir_all(&dir).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(dir)),
            Ok(o) => {
                println!(
                    "SKIP: cannot mount a tmpfs on {}: {}",
                    dir.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                skipped(&format!("the ENOSPC cells: cannot run mount: {e}"));
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A write bigger than the file system: a short count (or `-1`/`ENOSPC` when nothing fitted),
/// and what is on disk is exactly that prefix of the data (no hole, no stale byte); once space is
/// back, a write and a read are right; nothing leaked.
fn enospc(b: Backend) {
    let Some(fs) = Tmpfs::mount("1m") else {
        return;
    };
    assert_eq!(hipFileDriverOpen().err, 0);
    let big = 2 << 20;
    let data = pattern(big, 60);
    let path = fs.0.join("full");
    make_file(&path, &[]);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let fh = register_fd(file.as_raw_fd());
    let before = resources();
    let (ptr, _keep): (*mut std::ffi::c_void, Box<dyn std::any::Any>) = match b {
        Backend::Host => {
            let mut v = data.clone();
            (v.as_mut_ptr().cast(), Box::new(v))
        }
        _ => {
            let d = sim().device_alloc(big);
            sim().upload(d.ptr, &data);
            (d.ptr, Box::new(d))
        }
    };
    set_errno(0);
    // SAFETY: a registered handle and `big` bytes of memory.
    let n = unsafe { hipFileWrite(fh, ptr, big, 0, 0) };
    let e = errno();
    let disk = std::fs::read(&path).unwrap();
    println!(
        "ENOSPC {b:?}: hipFileWrite({big}) = {n} (errno {e}), {} bytes on disk",
        disk.len()
    );
    // The contiguous prefix that reached the file is returned (-1 only when nothing did), and
    // nothing past it stays beyond the old end (here 0).
    if n < 0 {
        assert_eq!((n, e), (-1, libc::ENOSPC), "a failed write's code");
        assert_eq!(disk.len(), 0, "a write that reported nothing left bytes");
    } else {
        assert!(n > 0 && (n as usize) < big, "a short write's count {n}");
        assert_eq!(
            disk.len(),
            n as usize,
            "the file holds more than the reported prefix"
        );
    }
    assert!(disk.len() < big, "the file system held more than it has");
    assert!(
        disk == data[..disk.len()],
        "after ENOSPC the file is not a prefix of the data (a hole or a stale byte at {})",
        disk.iter()
            .zip(&data)
            .position(|(a, b)| a != b)
            .unwrap_or(0)
    );
    // Space again: a write and a read of 256 KiB at 0.
    file.set_len(0).unwrap();
    let again = pattern(256 << 10, 61);
    let m = sim().device_alloc(256 << 10);
    sim().upload(m.ptr, &again);
    // SAFETY: as above.
    assert_eq!(
        unsafe { hipFileWrite(fh, m.ptr, 256 << 10, 0, 0) },
        256 << 10
    );
    sim().upload(m.ptr, &vec![0u8; 256 << 10]);
    // SAFETY: as above.
    assert_eq!(
        unsafe { hipFileRead(fh, m.ptr, 256 << 10, 0, 0) },
        256 << 10
    );
    assert!(sim().download(m.ptr, 256 << 10) == again);
    drop(m);
    assert_eq!(resources().0, before.0, "descriptors after ENOSPC");
    hipFileHandleDeregister(fh);
    drop(file);
    assert_eq!(hipFileDriverClose().err, 0);
    assert_eq!(closed_resources().1, 0, "pinned bytes after close");
}

child_test!(
    enospc_on_a_small_tmpfs_fallback,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        enospc(Backend::Fallback);
    }
);
child_test!(enospc_on_a_small_tmpfs_host, {
    enospc(Backend::Host);
});

/// `EIO` from storage, through the library's test-only I/O seam (this machine has neither
/// device-mapper nor a failing FUSE file system): the exact code in both modes, for a whole
/// request and for one that fails after its first system call; the data right afterwards.
#[cfg(feature = "io-fault-seam")]
fn eio(b: Backend) {
    use hipfile::internals::fault_seam;
    assert_eq!(hipFileDriverOpen().err, 0);
    let len = 12 << 20;
    let data = pattern(len, 70);
    let f = TestFile::rw("eio", &data);
    let mut m = Mem::new(b);
    let mut big_host = vec![0u8; len];
    let big_host_ptr = big_host.as_mut_ptr();
    let big_dev = sim().device_alloc(len);
    let big = if b == Backend::Host {
        big_host_ptr.cast()
    } else {
        big_dev.ptr
    };
    // Warm-up (the pool grows to what a large request uses), then count.
    m.put(&data[..SIZE]);
    assert_eq!(request(&f, m.ptr, false, Mode::Sync, SIZE), SIZE as i64);
    assert_eq!(request(&f, big, false, Mode::Sync, len), len as i64);
    assert_eq!(request(&f, big, true, Mode::Sync, len), len as i64);
    let before = resources();
    for write in [false, true] {
        for mode in [Mode::Sync, Mode::Batch] {
            for after in [0, 1] {
                let (rd, wr) = if write {
                    (0, libc::EIO)
                } else {
                    (libc::EIO, 0)
                };
                let on_disk = f.contents();
                // Fresh bytes in the big buffer, so a written prefix can be told apart.
                let fresh = pattern(len, 90 + after as u64 + 2 * u64::from(write));
                if b == Backend::Host {
                    // SAFETY: `big_host` is `len` bytes; nothing else uses it meanwhile.
                    unsafe { std::ptr::copy_nonoverlapping(fresh.as_ptr(), big_host_ptr, len) };
                } else {
                    sim().upload(big, &fresh);
                }
                fault_seam::set(rd, wr, after);
                let got = if after == 0 {
                    request(&f, m.ptr, write, mode, SIZE)
                } else {
                    // Three 4 MiB chunks: one system call succeeds, a later one fails.
                    request(&f, big, write, mode, len)
                };
                fault_seam::set(0, 0, 0);
                let what = format!("{b:?} EIO write {write} {mode:?} after {after} calls");
                let now = f.contents();
                if b == Backend::Host && mode == Mode::Batch {
                    assert_eq!(got, -(hipFileInternalError as i64), "{what}");
                } else if write && after > 0 && mode == Mode::Sync && got > 0 {
                    // A write that fails part-way returns the contiguous prefix that reached
                    // the file (as pwrite does); -EIO only when nothing did. A batch event is
                    // Failed with -EIO either way (upstream's rule for events).
                    let n = got as usize;
                    assert!(n < len, "{what}: {got}");
                    assert!(
                        now[..n] == fresh[..n],
                        "{what}: the reported prefix is not on disk"
                    );
                } else {
                    assert_eq!(got, -(libc::EIO as i64), "{what}");
                }
                if write {
                    assert_eq!(
                        now.len(),
                        on_disk.len(),
                        "{what}: length after a failed write"
                    );
                }
                let again = pattern(SIZE, 71 + after as u64);
                m.put(&again);
                assert_eq!(request(&f, m.ptr, true, Mode::Sync, SIZE), SIZE as i64);
                m.put(&vec![0u8; SIZE]);
                assert_eq!(request(&f, m.ptr, false, Mode::Sync, SIZE), SIZE as i64);
                assert!(m.get() == again, "data after EIO");
                assert_eq!(resources(), before, "resources after EIO");
            }
        }
    }
    drop(big_dev);
    drop(m);
    drop(f);
    assert_eq!(hipFileDriverClose().err, 0);
    assert_eq!(closed_resources().1, 0);
}

#[cfg(feature = "io-fault-seam")]
child_test!(eio_fallback, [("HIPFILE_FORCE_COMPAT_MODE", "true")], {
    eio(Backend::Fallback);
});
#[cfg(feature = "io-fault-seam")]
child_test!(eio_host, {
    eio(Backend::Host);
});

// Another process truncates the file while a large read runs (slowed by the simulator's copy
// delay): the read returns a count or an error, and every byte it reports is the file's.
child_test!(
    truncated_by_another_process_during_a_read,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        assert_eq!(hipFileDriverOpen().err, 0);
        let len = 32 << 20;
        let data = pattern(len, 80);
        let f = TestFile::rw("truncated", &data);
        let d = sim().device_alloc(len);
        sim().fault("copy_delay_us", 3000);
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "sleep 0.005; truncate -s 1048576 '{}'",
                f.path.display()
            ))
            .spawn()
            .expect("spawn truncate");
        set_errno(0);
        // SAFETY: a registered handle and `len` bytes of device memory.
        let n = unsafe { hipFileRead(f.fh, d.ptr, len, 0, 0) };
        let e = errno();
        assert!(child.wait().unwrap().success(), "truncate failed");
        sim().fault("copy_delay_us", 0);
        println!("truncated during a read: hipFileRead({len}) = {n} (errno {e})");
        if n >= 0 {
            let n = n as usize;
            assert!(n <= len);
            assert!(
                sim().download(d.ptr, n) == data[..n],
                "bytes reported past what the file held"
            );
        } else {
            assert!(
                n == -1 && e != 0 || (5000..=5039).contains(&-n),
                "code {n}/{e}"
            );
        }
        // The truncated file reads as it now is.
        // SAFETY: as above.
        assert_eq!(unsafe { hipFileRead(f.fh, d.ptr, len, 0, 0) }, 1 << 20);
        assert!(sim().download(d.ptr, 1 << 20) == data[..1 << 20]);
        drop(d);
        drop(f);
        assert_eq!(hipFileDriverClose().err, 0);
    }
);

/// SIGKILL during a stream of writes: every block the writer reported complete (after its
/// `hipFileWrite` returned) is complete on disk.
#[test]
fn sigkill_during_writes() {
    const BLOCK: usize = 1 << 20;
    if let Some(path) = std::env::var_os("HIPFILE_SIGKILL_FILE") {
        // The writer: blocks of distinct patterns, one `done k` line after each.
        use std::io::Write;
        assert_eq!(hipFileDriverOpen().err, 0);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        let fh = register_fd(file.as_raw_fd());
        let d = sim().device_alloc(BLOCK);
        let mut out = std::io::stdout();
        for k in 0.. {
            sim().upload(d.ptr, &pattern(BLOCK, 1000 + k as u64));
            // SAFETY: a registered handle and BLOCK bytes of device memory.
            let n = unsafe { hipFileWrite(fh, d.ptr, BLOCK, (k * BLOCK) as i64, 0) };
            assert_eq!(n, BLOCK as isize);
            writeln!(out, "done {k}").unwrap();
            out.flush().unwrap();
        }
        return;
    }
    use std::io::BufRead;
    let path = scratch_file("sigkill");
    make_file(&path, &[]);
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "sigkill_during_writes",
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("HIPFILE_SIGKILL_FILE", &path)
    .env("HIPFILE_HIP_LIBRARY", hipsim_path())
    .env("HIPFILE_CUDA_LIBRARY", hipsim_path())
    .env("HIPFILE_FORCE_COMPAT_MODE", "true")
    .env("HIPFILE_LOG", "error")
    .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut done = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // (libtest's "test ... " may precede the first line.)
        if let Some(at) = line.find("done ") {
            done.push(line[at + 5..].trim().parse::<usize>().unwrap());
            if done.len() == 8 {
                // SAFETY: our child's pid.
                unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
                break;
            }
        }
    }
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(libc::SIGKILL),
        "the writer was killed"
    );
    let disk = std::fs::read(&path).unwrap();
    assert_eq!(done, (0..8).collect::<Vec<_>>());
    for &k in &done {
        assert!(
            disk.len() >= (k + 1) * BLOCK,
            "block {k} reported but the file is short"
        );
        assert!(
            disk[k * BLOCK..(k + 1) * BLOCK] == pattern(BLOCK, 1000 + k as u64)[..],
            "block {k} reported complete but is not"
        );
    }
    println!(
        "SIGKILL after {} reported blocks: all complete ({} bytes on disk)",
        done.len(),
        disk.len()
    );
    let _ = std::fs::remove_file(&path);
}
