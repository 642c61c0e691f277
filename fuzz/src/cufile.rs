//! The `cufile_sequence` target: sequences of every call family of libcufile.so.0's C ABI (the
//! `hipfile-cufile` crate, linked in and instrumented; the engine behind it is the main
//! workspace's `libhipfile.so`, loaded as libcufile.so.0 loads it, on the simulator's CUDA
//! side), checked against a model.
//!
//! Findings, besides a crash, a hang or any panic in the library:
//! * a write or read of caller memory outside what the call may touch: every output the ABI
//!   writes into (properties, statistics, events and their count, parameter values, strings,
//!   slab arrays, handles, the stream-ordered values, host data buffers) and every array it
//!   reads (descriptors, batch entries, iovecs) ends at a `PROT_NONE` page. The statistics are
//!   placed with the size of each supported cuFile version's structure (1.15..1.18 and 1.19):
//!   the library reports 1180, so a 1.19-sized structure must keep its last bytes untouched;
//! * a status outside cuFile's codes, `cu_err` set without `CU_FILE_CUDA_DRIVER_ERROR`, a data
//!   call returning another negative than -1 or more bytes than asked, an `errno` outside POSIX
//!   and cuFile codes, a version other than 1180;
//! * for clean requests (live handle of a modelled file opened for that direction, a buffer big
//!   enough): a byte count or a byte that differs from the model, for `cuFileRead`/`Write`,
//!   `cuFileReadv`/`Writev` and the stream-ordered calls;
//! * an explicit open or close that does not move the use count by one, and after the input a
//!   use count that does not come back to 0 or descriptors left behind.
//!
//! Caller errors the C contract leaves undefined (arrays shorter than their count, host memory
//! past its allocation) are never generated.

use std::ffi::{c_char, c_int, c_long, c_uint, c_void, CString};
use std::path::PathBuf;
use std::sync::{Once, OnceLock};

// The library under test, linked in: its C ABI is what the harness calls.
use cufile as _;
use cufile_abi::{
    CUfileError_t as CuErr, CUfileIOEvents_t as IoEvent, CUfileIOParams_t as IoParams,
    CUfileIOVec_t as IoVec,
};
use libfuzzer_sys::arbitrary::{Result as AResult, Unstructured};

use super::{
    fd_list, hipsim_path, open_fd, pattern, scratch_dir, size_edge, trace, FileModel, Guarded,
    CALLS, CHECKED, FILE_MAX,
};

// Calls that take only values (handles are opaque to the caller) are safe for any argument:
// that is the C contract the library must keep.
unsafe extern "C" {
    safe fn cuFileDriverOpen() -> CuErr;
    safe fn cuFileDriverClose() -> CuErr;
    safe fn cuFileDriverClose_v2() -> CuErr;
    safe fn cuFileUseCount() -> c_long;
    fn cuFileGetVersion(v: *mut c_int) -> CuErr;
    fn cuFileDriverGetProperties(p: *mut u8) -> CuErr;
    safe fn cuFileDriverSetPollMode(poll: bool, kb: usize) -> CuErr;
    safe fn cuFileDriverSetMaxDirectIOSize(kb: usize) -> CuErr;
    safe fn cuFileDriverSetMaxCacheSize(kb: usize) -> CuErr;
    safe fn cuFileDriverSetMaxPinnedMemSize(kb: usize) -> CuErr;
    fn cuFileHandleRegister(fh: *mut *mut c_void, descr: *mut u8) -> CuErr;
    safe fn cuFileHandleDeregister(fh: *mut c_void);
    fn cuFileBufRegister(base: *const c_void, len: usize, flags: c_int) -> CuErr;
    fn cuFileBufDeregister(base: *const c_void) -> CuErr;
    fn cuFileRead(fh: *mut c_void, base: *mut c_void, size: usize, off: i64, boff: i64) -> isize;
    fn cuFileWrite(fh: *mut c_void, base: *const c_void, size: usize, off: i64, boff: i64)
        -> isize;
    fn cuFileReadv(fh: *mut c_void, iov: *const IoVec, n: usize, off: i64, flags: c_uint) -> isize;
    fn cuFileWritev(fh: *mut c_void, iov: *const IoVec, n: usize, off: i64, flags: c_uint)
        -> isize;
    fn cuFileBatchIOSetUp(b: *mut *mut c_void, nr: c_uint) -> CuErr;
    fn cuFileBatchIOSubmit(b: *mut c_void, nr: c_uint, io: *mut IoParams, flags: c_uint) -> CuErr;
    fn cuFileBatchIOGetStatus(
        b: *mut c_void,
        min_nr: c_uint,
        nr: *mut c_uint,
        ev: *mut IoEvent,
        timeout: *mut libc::timespec,
    ) -> CuErr;
    safe fn cuFileBatchIOCancel(b: *mut c_void) -> CuErr;
    safe fn cuFileBatchIODestroy(b: *mut c_void);
    safe fn cuFileStreamRegister(s: *mut c_void, flags: c_uint) -> CuErr;
    safe fn cuFileStreamDeregister(s: *mut c_void) -> CuErr;
    fn cuFileReadAsync(
        fh: *mut c_void,
        base: *mut c_void,
        size: *mut usize,
        off: *mut i64,
        boff: *mut i64,
        bytes: *mut isize,
        s: *mut c_void,
    ) -> CuErr;
    fn cuFileWriteAsync(
        fh: *mut c_void,
        base: *mut c_void,
        size: *mut usize,
        off: *mut i64,
        boff: *mut i64,
        bytes: *mut isize,
        s: *mut c_void,
    ) -> CuErr;
    fn cuFileGetParameterSizeT(p: c_int, v: *mut usize) -> CuErr;
    fn cuFileGetParameterBool(p: c_int, v: *mut bool) -> CuErr;
    fn cuFileGetParameterString(p: c_int, v: *mut c_char, len: c_int) -> CuErr;
    fn cuFileGetParameterMinMaxValue(p: c_int, lo: *mut usize, hi: *mut usize) -> CuErr;
    safe fn cuFileSetParameterSizeT(p: c_int, v: usize) -> CuErr;
    safe fn cuFileSetParameterBool(p: c_int, v: bool) -> CuErr;
    fn cuFileSetParameterString(p: c_int, v: *const c_char) -> CuErr;
    fn cuFileGetParameterPosixPoolSlabArray(s: *mut usize, c: *mut usize, len: c_int) -> CuErr;
    fn cuFileSetParameterPosixPoolSlabArray(s: *const usize, c: *const usize, len: c_int) -> CuErr;
    fn cuFileGetParameterGpuBounceBufferSlabArray(
        s: *mut usize,
        c: *mut usize,
        len: c_int,
    ) -> CuErr;
    fn cuFileSetParameterGpuBounceBufferSlabArray(
        s: *const usize,
        c: *const usize,
        len: c_int,
    ) -> CuErr;
    safe fn cuFileSetStatsLevel(level: c_int) -> CuErr;
    fn cuFileGetStatsLevel(level: *mut c_int) -> CuErr;
    safe fn cuFileStatsStart() -> CuErr;
    safe fn cuFileStatsStop() -> CuErr;
    safe fn cuFileStatsReset() -> CuErr;
    fn cuFileGetStatsL1(s: *mut u8) -> CuErr;
    fn cuFileGetStatsL2(s: *mut u8) -> CuErr;
    fn cuFileGetStatsL3(s: *mut u8) -> CuErr;
    fn cuFileGetBARSizeInKB(gpu: c_int, kb: *mut usize) -> CuErr;
    fn cuFileDriverGetP2PFlags(fs: c_int, f: *mut c_int) -> CuErr;
    safe fn cuFileDriverSetP2PFlags(fs: c_int, f: c_int) -> CuErr;
    fn cuFileExportPCIeTopology(path: *const c_char) -> CuErr;
}

const SUCCESS: c_int = 0;
const DRIVER_NOT_INITIALIZED: c_int = 5001;
const CUDA_DRIVER_ERROR: c_int = 5011;
/// `CUFILE_COMPLETE`.
const COMPLETE: c_int = 0x10;
/// Largest request whose bytes are checked.
const CLEAN_MAX: usize = 256 << 10;
/// Statistics sizes: (1.15..1.18, 1.19).
const STATS: [(usize, usize); 3] = [(512, 624), (1024, 1136), (5000, 5112)];

/// The simulator's CUDA driver API, for device memory and streams.
struct Cuda {
    _lib: libloading::Library,
    alloc: unsafe extern "C" fn(*mut u64, usize) -> c_int,
    free: unsafe extern "C" fn(u64) -> c_int,
    htod: unsafe extern "C" fn(u64, *const c_void, usize) -> c_int,
    dtoh: unsafe extern "C" fn(*mut c_void, u64, usize) -> c_int,
    stream_create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int,
    stream_sync: unsafe extern "C" fn(*mut c_void) -> c_int,
    stream_destroy: unsafe extern "C" fn(*mut c_void) -> c_int,
}

// SAFETY: function pointers and a library handle; hipsim is thread-safe.
unsafe impl Sync for Cuda {}
// SAFETY: as above.
unsafe impl Send for Cuda {}

macro_rules! sym {
    ($lib:expr, $name:literal) => {
        // SAFETY: the symbol has the C signature of the field it is stored in.
        *unsafe { $lib.get(concat!($name, "\0").as_bytes()) }
            .unwrap_or_else(|e| panic!("hipsim lacks {}: {e}", $name))
    };
}

fn cuda() -> &'static Cuda {
    static CUDA: OnceLock<Cuda> = OnceLock::new();
    CUDA.get_or_init(|| {
        // SAFETY: loading the simulator (the same file the engine loads).
        let lib = unsafe { libloading::Library::new(hipsim_path()) }.expect("load hipsim");
        let init: unsafe extern "C" fn(c_uint) -> c_int = sym!(lib, "cuInit");
        let retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int =
            sym!(lib, "cuDevicePrimaryCtxRetain");
        let set: unsafe extern "C" fn(*mut c_void) -> c_int = sym!(lib, "cuCtxSetCurrent");
        let mut ctx = std::ptr::null_mut();
        // SAFETY: the CUDA driver's prototypes; device 0 exists in the simulator.
        unsafe {
            assert_eq!(init(0), 0, "cuInit");
            assert_eq!(retain(&mut ctx, 0), 0, "cuDevicePrimaryCtxRetain");
            assert_eq!(set(ctx), 0, "cuCtxSetCurrent");
        }
        Cuda {
            alloc: sym!(lib, "cuMemAlloc_v2"),
            free: sym!(lib, "cuMemFree_v2"),
            htod: sym!(lib, "cuMemcpyHtoD_v2"),
            dtoh: sym!(lib, "cuMemcpyDtoH_v2"),
            stream_create: sym!(lib, "cuStreamCreate"),
            stream_sync: sym!(lib, "cuStreamSynchronize"),
            stream_destroy: sym!(lib, "cuStreamDestroy_v2"),
            _lib: lib,
        }
    })
}

/// Where the engine is: `HIPFILE_ENGINE_LIBRARY`, else the main workspace's release or debug
/// build of `libhipfile.so` (SONAME `libhipfile.so.0`, which libcufile.so.0 finds loaded).
fn engine_path() -> PathBuf {
    if let Some(p) = std::env::var_os("HIPFILE_ENGINE_LIBRARY") {
        return PathBuf::from(p);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    for profile in ["release", "debug"] {
        let p = root.join("target").join(profile).join("libhipfile.so");
        if p.exists() {
            return p;
        }
    }
    panic!("libhipfile.so not found: run `cargo build -p hipfile --release` or set HIPFILE_ENGINE_LIBRARY");
}

fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let sim = hipsim_path();
        std::fs::create_dir_all(scratch_dir()).expect("scratch directory");
        // SAFETY: before the library or any thread of ours reads the environment.
        unsafe {
            std::env::set_var("HIPFILE_PLATFORM", "nvidia");
            std::env::set_var("HIPFILE_CUDA_LIBRARY", &sim);
            std::env::set_var("HIPFILE_CUFILE_LIBRARY", "none");
            std::env::remove_var("HIPFILE_CUFILE_API_LEVEL");
            std::env::remove_var("CUFILE_ENV_PATH_JSON");
            // cuFile's log goes to the scratch directory, never the working directory.
            std::env::set_var("CUFILE_LOGFILE_PATH", scratch_dir().join("cufile.log"));
            if std::env::var_os("HIPFILE_LOG").is_none() {
                std::env::set_var("HIPFILE_LOG", "off");
            }
        }
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default_hook(info);
            std::process::abort();
        }));
        // SAFETY: loading the engine; it runs only static initialisers at load. Kept for the
        // life of the process (libcufile.so.0 holds it too).
        let engine = unsafe {
            libloading::os::unix::Library::open(
                Some(engine_path()),
                libc::RTLD_NOW | libc::RTLD_GLOBAL,
            )
        }
        .expect("load libhipfile.so");
        std::mem::forget(engine);
        cuda();
        // SAFETY: registering a plain function that only prints.
        unsafe { libc::atexit(super::print_totals) };
    });
}

fn check(call: &str, e: CuErr) -> c_int {
    assert!(
        e.err == SUCCESS || ((5001..=5050).contains(&e.err) && e.err != 5021 && e.err != 5032),
        "{call}: err {} is not a CUfileOpError",
        e.err
    );
    if e.err != CUDA_DRIVER_ERROR {
        assert_eq!(
            e.cu_err, 0,
            "{call}: err {} with cu_err {}",
            e.err, e.cu_err
        );
    }
    e.err
}

fn errno() -> c_int {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() }
}

fn check_count(call: &str, n: isize, size: usize) {
    if n >= 0 {
        assert!(
            n as usize <= size,
            "{call}: {n} bytes for a {size}-byte request"
        );
    } else {
        let e = errno();
        assert!(
            n == -1 && ((1..4096).contains(&e) || (5001..=5050).contains(&e)),
            "{call}: {n} with errno {e}"
        );
    }
}

struct Handle {
    fh: *mut c_void,
    fd: c_int,
    /// The modelled file it reads and writes, and the directions its descriptor allows.
    file: Option<usize>,
    read: bool,
    write: bool,
    live: bool,
}

struct Buf {
    dev: bool,
    addr: usize,
    len: usize,
    _host: Option<Guarded>,
    /// Registrations (base, length): the whole buffer at its start, or interior ranges.
    reg: Vec<(usize, usize)>,
}

struct Batch {
    h: *mut c_void,
    live: bool,
    outstanding: u32,
}

struct World {
    files: Vec<FileModel>,
    handles: Vec<Handle>,
    bufs: Vec<Buf>,
    batches: Vec<Batch>,
    streams: Vec<(*mut c_void, bool)>,
    /// A parameter was staged: the finish opens and closes once more to apply and drop it.
    tuned: bool,
}

/// Stage `bytes` of caller memory at the end of a page.
fn guarded_copy(bytes: &[u8]) -> Guarded {
    let mut g = Guarded::new(bytes.len().max(1));
    g.bytes()[..bytes.len()].copy_from_slice(bytes);
    g
}

fn as_bytes<T>(v: &[T]) -> &[u8] {
    // SAFETY: plain-data views of `#[repr(C)]` values.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

impl World {
    fn new(u: &mut Unstructured) -> AResult<World> {
        let files = FileModel::scratch(u, 3, "c", 11)?;
        let mut w = World {
            files,
            handles: Vec::new(),
            bufs: Vec::new(),
            batches: Vec::new(),
            streams: Vec::new(),
            tuned: false,
        };
        // A state worth mutating: every file registered read-write, a device and a host buffer.
        if u.arbitrary::<u8>()? < 224 {
            for f in 0..3 {
                w.register(f, libc::O_RDWR, 1);
            }
            w.alloc(true, 1 << 20);
            w.alloc(false, FILE_MAX);
        }
        Ok(w)
    }

    fn alloc(&mut self, dev: bool, len: usize) {
        if dev {
            let mut p = 0u64;
            // SAFETY: a valid out-pointer.
            assert_eq!(unsafe { (cuda().alloc)(&mut p, len) }, 0, "cuMemAlloc");
            self.bufs.push(Buf {
                dev,
                addr: p as usize,
                len,
                _host: None,
                reg: Vec::new(),
            });
        } else {
            let g = Guarded::new(len);
            self.bufs.push(Buf {
                dev,
                addr: g.addr(),
                len,
                _host: Some(g),
                reg: Vec::new(),
            });
        }
    }

    /// Open modelled file `f` with `flags` and register it with handle type `kind` through a
    /// descriptor at a guard page; the handle is kept when registration succeeds.
    fn register(&mut self, f: usize, flags: c_int, kind: c_int) -> c_int {
        let fd = open_fd(&self.files[f].path, flags);
        let mut descr = [0u8; 24];
        descr[..4].copy_from_slice(&kind.to_ne_bytes());
        descr[8..12].copy_from_slice(&fd.to_ne_bytes());
        let d = guarded_copy(&descr);
        let mut out = Guarded::new(8);
        // SAFETY: a 24-byte descriptor and an 8-byte output, each ending at a guard page.
        let e = check("cuFileHandleRegister", unsafe {
            cuFileHandleRegister(out.addr() as *mut *mut c_void, d.addr() as *mut u8)
        });
        if e == SUCCESS {
            let fh = usize::from_ne_bytes(out.bytes().try_into().unwrap()) as *mut c_void;
            let acc = flags & libc::O_ACCMODE;
            self.handles.push(Handle {
                fh,
                fd,
                file: Some(f),
                read: acc != libc::O_WRONLY,
                write: acc != libc::O_RDONLY,
                live: true,
            });
        } else if fd >= 0 {
            // SAFETY: our descriptor.
            unsafe { libc::close(fd) };
        }
        e
    }

    /// Re-reads the models from the files (after a write whose outcome is not predicted).
    fn resync(&mut self) {
        for f in &mut self.files {
            let len = std::fs::metadata(&f.path).map_or(0, |m| m.len());
            if len > 4 * FILE_MAX as u64 {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&f.path)
                    .and_then(|h| h.set_len(FILE_MAX as u64))
                    .expect("truncate a scratch file");
            }
            f.bytes = std::fs::read(&f.path).expect("read back a scratch file");
        }
    }

    /// Waits for every submitted batch entry (before anything that could race with one).
    fn drain(&mut self) {
        for b in &mut self.batches {
            let mut tries = 0;
            while b.live && b.outstanding > 0 {
                let n = b.outstanding;
                let mut ev = Guarded::new(n as usize * 24);
                let mut nr = n;
                let mut t = libc::timespec {
                    tv_sec: 5,
                    tv_nsec: 0,
                };
                // SAFETY: `n` events at a guard page.
                let e = check("cuFileBatchIOGetStatus (drain)", unsafe {
                    cuFileBatchIOGetStatus(b.h, n, &mut nr, ev.addr() as *mut IoEvent, &mut t)
                });
                assert_eq!(e, SUCCESS, "draining a live batch");
                assert!(nr <= n);
                b.outstanding -= nr;
                let _ = ev.bytes();
                tries += 1;
                assert!(tries < 20, "batch entries never complete");
            }
        }
    }

    /// A handle: live, deregistered, NULL or forged.
    fn pick_handle(&self, u: &mut Unstructured) -> AResult<(*mut c_void, Option<usize>)> {
        Ok(match u.int_in_range(0..=9)? {
            0 => (std::ptr::null_mut(), None),
            1 => (0x1234 as *mut c_void, None),
            _ if self.handles.is_empty() => (std::ptr::null_mut(), None),
            _ => {
                let i = u.choose_index(self.handles.len())?;
                (self.handles[i].fh, Some(i))
            }
        })
    }

    /// A buffer (device or host) and its index, or NULL.
    fn pick_buf(&self, u: &mut Unstructured) -> AResult<Option<usize>> {
        if self.bufs.is_empty() || u.int_in_range(0..=15)? == 0 {
            return Ok(None);
        }
        Ok(Some(u.choose_index(self.bufs.len())?))
    }

    fn buf_bytes(&self, b: usize, at: usize, len: usize) -> Vec<u8> {
        let buf = &self.bufs[b];
        if buf.dev {
            let mut v = vec![0u8; len];
            // SAFETY: a host slice of `len` bytes; the device range is ours.
            let r = unsafe { (cuda().dtoh)(v.as_mut_ptr().cast(), (buf.addr + at) as u64, len) };
            assert_eq!(r, 0, "cuMemcpyDtoH");
            v
        } else {
            // SAFETY: inside our guarded allocation.
            unsafe { std::slice::from_raw_parts((buf.addr + at) as *const u8, len) }.to_vec()
        }
    }

    fn set_buf_bytes(&self, b: usize, at: usize, data: &[u8]) {
        let buf = &self.bufs[b];
        if buf.dev {
            // SAFETY: as above.
            let r =
                unsafe { (cuda().htod)((buf.addr + at) as u64, data.as_ptr().cast(), data.len()) };
            assert_eq!(r, 0, "cuMemcpyHtoD");
        } else {
            // SAFETY: inside our guarded allocation.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), (buf.addr + at) as *mut u8, data.len())
            };
        }
    }

    /// Bytes a transfer may use from `base` inside buffer `b`: a registration at that very
    /// base bounds it (the library identifies registrations by their base).
    fn room(&self, b: usize, base: usize) -> usize {
        let buf = &self.bufs[b];
        let left = buf.addr + buf.len - base;
        buf.reg
            .iter()
            .find(|r| r.0 == base)
            .map_or(left, |r| r.1.min(left))
    }

    /// Whether a transfer through handle `h` into buffer `b` is clean, and so predicted.
    fn clean(
        &self,
        h: Option<usize>,
        b: Option<usize>,
        write: bool,
        size: usize,
        off: i64,
        boff: i64,
    ) -> Option<usize> {
        let h = &self.handles[h?];
        let b = b?;
        let file = h.file?;
        let ok = h.live
            && (if write { h.write } else { h.read })
            && size > 0
            && size <= CLEAN_MAX
            && (0..=(2 * FILE_MAX) as i64).contains(&off)
            && boff >= 0
            && (boff as usize)
                .checked_add(size)
                .is_some_and(|e| e <= self.room(b, self.bufs[b].addr));
        ok.then_some(file)
    }

    /// Checks a clean read's result against the model.
    fn expect_read(&self, call: &str, file: usize, off: i64, size: usize, got: isize, data: &[u8]) {
        let model = &self.files[file].bytes;
        let off = off as usize;
        let want = model.len().saturating_sub(off).min(size);
        assert_eq!(
            got,
            want as isize,
            "{call}: {size} bytes at {off} of a {}-byte file",
            model.len()
        );
        assert!(
            want == 0 || data[..want] == model[off..off + want],
            "{call}: bytes differ from the model"
        );
        CHECKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// A clean write reached the file: the model follows.
    fn apply_write(&mut self, call: &str, file: usize, off: i64, data: &[u8], got: isize) {
        assert_eq!(
            got,
            data.len() as isize,
            "{call}: a clean {}-byte write",
            data.len()
        );
        let m = &mut self.files[file].bytes;
        let off = off as usize;
        if m.len() < off + data.len() {
            m.resize(off + data.len(), 0);
        }
        m[off..off + data.len()].copy_from_slice(data);
        let f = &self.files[file];
        let disk = std::fs::read(&f.path).expect("read a scratch file");
        assert!(
            disk == f.bytes,
            "{call}: the file differs from the model after the write"
        );
        CHECKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn op(&mut self, u: &mut Unstructured) -> AResult<()> {
        CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let which = u.int_in_range(0..=25)?;
        if trace() {
            eprintln!("cufile op {which}");
        }
        if !matches!(which, 13 | 14) {
            self.drain();
        }
        match which {
            0 => {
                let before = cuFileUseCount();
                if check("cuFileDriverOpen", cuFileDriverOpen()) == SUCCESS {
                    assert_eq!(cuFileUseCount(), before + 1, "an open counts one");
                }
            }
            1 => {
                let before = cuFileUseCount();
                let legacy = u.arbitrary::<bool>()?;
                let e = check(
                    "cuFileDriverClose",
                    if legacy {
                        cuFileDriverClose()
                    } else {
                        cuFileDriverClose_v2()
                    },
                );
                let after = cuFileUseCount();
                if before == 0 {
                    assert_eq!(e, DRIVER_NOT_INITIALIZED, "close at use count 0");
                } else if e == SUCCESS {
                    assert_eq!(after, before - 1, "a close counts one");
                }
                if after == 0 {
                    // The final close dropped every registration.
                    for h in &mut self.handles {
                        h.live = false;
                    }
                    for b in &mut self.bufs {
                        b.reg.clear();
                    }
                    for b in &mut self.batches {
                        b.live = false;
                    }
                    for s in &mut self.streams {
                        s.1 = false;
                    }
                }
            }
            2 => {
                let mut v = Guarded::new(4);
                // SAFETY: an int at a guard page.
                check("cuFileGetVersion", unsafe {
                    cuFileGetVersion(v.addr() as *mut c_int)
                });
                assert_eq!(
                    c_int::from_ne_bytes(v.bytes().try_into().unwrap()),
                    1180,
                    "the version of the 1.15..1.18 layouts"
                );
                assert!(cuFileUseCount() >= 0);
            }
            3 => {
                let mut p = Guarded::new(56);
                // SAFETY: 56 bytes at a guard page.
                if check("cuFileDriverGetProperties", unsafe {
                    cuFileDriverGetProperties(p.addr() as *mut u8)
                }) == SUCCESS
                {
                    assert_eq!(&p.bytes()[..8], &[0; 8], "no nvidia-fs version");
                }
            }
            4 => {
                let v = size_edge(u)?;
                let which = u.int_in_range(0..=3)?;
                let e = match which {
                    0 => cuFileDriverSetPollMode(u.arbitrary()?, v),
                    1 => cuFileDriverSetMaxDirectIOSize(v),
                    2 => cuFileDriverSetMaxCacheSize(v),
                    _ => cuFileDriverSetMaxPinnedMemSize(v),
                };
                check("cuFileDriverSet*", e);
                self.tuned = true;
            }
            5 => {
                let f = u.int_in_range(0..=2)?;
                let flags = *u.choose(&[
                    libc::O_RDWR,
                    libc::O_RDONLY,
                    libc::O_WRONLY,
                    libc::O_RDWR | libc::O_APPEND,
                    libc::O_RDWR | libc::O_DIRECT,
                ])?;
                let kind = *u.choose(&[1, 1, 1, 2, 3, 0, 7])?;
                if self.handles.len() < 12 {
                    self.register(f, flags, kind);
                }
            }
            6 => {
                let (fh, i) = self.pick_handle(u)?;
                cuFileHandleDeregister(fh);
                if let Some(i) = i {
                    self.handles[i].live = false;
                }
            }
            7 => {
                if self.bufs.len() < 6 && u.int_in_range(0..=3)? == 0 {
                    let dev = u.arbitrary()?;
                    let len = u.int_in_range(1..=(1u32 << 20))? as usize;
                    self.alloc(dev, len);
                }
                let Some(b) = self.pick_buf(u)? else {
                    // SAFETY: NULL is refused without a dereference.
                    check("cuFileBufRegister(NULL)", unsafe {
                        cuFileBufRegister(std::ptr::null(), 4096, 0)
                    });
                    return Ok(());
                };
                let len = self.bufs[b].len;
                // The whole buffer, or an interior range (never an I/O base), or too long.
                let (at, n) = match u.int_in_range(0..=2)? {
                    0 => (0, len),
                    1 => {
                        let at = u.int_in_range(1..=len.max(2) as u32 - 1)? as usize;
                        (at.min(len - 1), (len - at.min(len - 1)).min(4096))
                    }
                    _ => (0, len + u.int_in_range(1..=8192)? as usize),
                };
                let base = self.bufs[b].addr + at;
                let n = if self.bufs[b].dev { n } else { n.min(len - at) };
                // SAFETY: `n` bytes of our buffer (device ranges past the end are the
                // library's to refuse).
                let e = check("cuFileBufRegister", unsafe {
                    cuFileBufRegister(base as *const c_void, n, 0)
                });
                if e == SUCCESS {
                    assert!(
                        at + n <= len,
                        "a registration past a device allocation succeeded"
                    );
                    assert!(
                        !self.bufs[b].reg.iter().any(|r| r.0 == base),
                        "a base registered twice"
                    );
                    self.bufs[b].reg.push((base, n));
                }
            }
            8 => {
                let Some(b) = self.pick_buf(u)? else {
                    // SAFETY: NULL is refused without a dereference.
                    check("cuFileBufDeregister(NULL)", unsafe {
                        cuFileBufDeregister(std::ptr::null())
                    });
                    return Ok(());
                };
                let base = match self.bufs[b].reg.len() {
                    0 => self.bufs[b].addr + 8,
                    n => self.bufs[b].reg[u.choose_index(n)?].0,
                };
                // SAFETY: an address of ours, looked up only.
                if check("cuFileBufDeregister", unsafe {
                    cuFileBufDeregister(base as *const c_void)
                }) == SUCCESS
                {
                    self.bufs[b].reg.retain(|r| r.0 != base);
                }
            }
            9 | 10 => self.sync_io(u, which == 10)?,
            11 => self.vectored(u)?,
            12 => {
                let nr = u.int_in_range(0..=300)?;
                let mut out = Guarded::new(8);
                // SAFETY: a handle-sized output at a guard page.
                if check("cuFileBatchIOSetUp", unsafe {
                    cuFileBatchIOSetUp(out.addr() as *mut *mut c_void, nr)
                }) == SUCCESS
                    && self.batches.len() < 8
                {
                    let h = usize::from_ne_bytes(out.bytes().try_into().unwrap()) as *mut c_void;
                    self.batches.push(Batch {
                        h,
                        live: true,
                        outstanding: 0,
                    });
                } else if nr > 0 && self.batches.len() >= 8 {
                    let h = usize::from_ne_bytes(out.bytes().try_into().unwrap()) as *mut c_void;
                    cuFileBatchIODestroy(h);
                }
            }
            13 => self.batch_submit(u)?,
            14 => self.batch_status(u)?,
            15 => {
                if self.batches.is_empty() {
                    check(
                        "cuFileBatchIOCancel(NULL)",
                        cuFileBatchIOCancel(std::ptr::null_mut()),
                    );
                    cuFileBatchIODestroy(std::ptr::null_mut());
                    return Ok(());
                }
                let i = u.choose_index(self.batches.len())?;
                if u.arbitrary()? {
                    check(
                        "cuFileBatchIOCancel",
                        cuFileBatchIOCancel(self.batches[i].h),
                    );
                } else {
                    cuFileBatchIODestroy(self.batches[i].h);
                    self.batches[i].live = false;
                }
            }
            16 => {
                if self.streams.len() < 4 && u.int_in_range(0..=2)? == 0 {
                    let mut s = std::ptr::null_mut();
                    // SAFETY: a valid out-pointer.
                    assert_eq!(unsafe { (cuda().stream_create)(&mut s, 0) }, 0);
                    self.streams.push((s, false));
                }
                if self.streams.is_empty() {
                    return Ok(());
                }
                let i = u.choose_index(self.streams.len())?;
                let s = self.streams[i].0;
                if u.arbitrary()? {
                    // Not CU_FILE_STREAM_PAGE_ALIGNED_INPUTS (8): a promise this harness's
                    // unaligned requests would break (the contract leaves that undefined).
                    let flags = *u.choose(&[0, 1, 2, 4, 7, 16, 32])?;
                    if check("cuFileStreamRegister", cuFileStreamRegister(s, flags)) == SUCCESS {
                        self.streams[i].1 = true;
                    }
                } else if check("cuFileStreamDeregister", cuFileStreamDeregister(s)) == SUCCESS {
                    self.streams[i].1 = false;
                }
            }
            17 => self.stream_io(u)?,
            18 => self.param_get(u)?,
            19 => self.param_set(u)?,
            20 => self.slabs(u)?,
            21 => {
                if u.arbitrary()? {
                    let level = u.int_in_range(-1..=4)?;
                    check("cuFileSetStatsLevel", cuFileSetStatsLevel(level));
                } else {
                    let mut l = Guarded::new(4);
                    // SAFETY: an int at a guard page.
                    if check("cuFileGetStatsLevel", unsafe {
                        cuFileGetStatsLevel(l.addr() as *mut c_int)
                    }) == SUCCESS
                    {
                        let v = c_int::from_ne_bytes(l.bytes().try_into().unwrap());
                        assert!((0..=3).contains(&v), "statistics level {v}");
                    }
                }
            }
            22 => {
                let e = match u.int_in_range(0..=2)? {
                    0 => cuFileStatsStart(),
                    1 => cuFileStatsStop(),
                    _ => cuFileStatsReset(),
                };
                check("cuFileStats*", e);
            }
            23 => {
                let level = u.int_in_range(0..=2)?;
                let (small, large) = STATS[level];
                let size = if u.arbitrary()? { large } else { small };
                let mut g = Guarded::new(size);
                g.bytes().fill(0xAB);
                let p = g.addr() as *mut u8;
                // SAFETY: a structure of one supported version's size at a guard page.
                let e = unsafe {
                    match level {
                        0 => cuFileGetStatsL1(p),
                        1 => cuFileGetStatsL2(p),
                        _ => cuFileGetStatsL3(p),
                    }
                };
                check("cuFileGetStatsL*", e);
                assert!(
                    g.bytes()[small..].iter().all(|&b| b == 0xAB),
                    "level {} statistics written past the {small} bytes of cuFile 1180",
                    level + 1
                );
            }
            24 => {
                let gpu = u.int_in_range(-1..=2)?;
                let mut kb = Guarded::new(8);
                // SAFETY: a size_t at a guard page.
                check("cuFileGetBARSizeInKB", unsafe {
                    cuFileGetBARSizeInKB(gpu, kb.addr() as *mut usize)
                });
                let _ = kb.bytes();
                let fs = u.int_in_range(-1..=16)?;
                if u.arbitrary()? {
                    let mask = *u.choose(&[0, 1, 2, 4, 8, 3, 16])?;
                    check("cuFileDriverSetP2PFlags", cuFileDriverSetP2PFlags(fs, mask));
                } else {
                    let mut f = Guarded::new(4);
                    // SAFETY: an enum at a guard page.
                    if check("cuFileDriverGetP2PFlags", unsafe {
                        cuFileDriverGetP2PFlags(fs, f.addr() as *mut c_int)
                    }) == SUCCESS
                    {
                        let v = c_int::from_ne_bytes(f.bytes().try_into().unwrap());
                        assert!(v == 0 || v == 1, "P2P flags {v}");
                    }
                }
            }
            _ => {
                let path = match u.int_in_range(0..=3)? {
                    0 => String::new(),
                    1 => "/".to_string(),
                    2 => "/nonexistent-dir/topology.json".to_string(),
                    _ => scratch_dir().join("topology.json").display().to_string(),
                };
                let c = CString::new(path).unwrap();
                // SAFETY: a NUL-terminated path.
                check("cuFileExportPCIeTopology", unsafe {
                    cuFileExportPCIeTopology(c.as_ptr())
                });
            }
        }
        Ok(())
    }

    fn sync_io(&mut self, u: &mut Unstructured, write: bool) -> AResult<()> {
        let (fh, h) = self.pick_handle(u)?;
        let b = self.pick_buf(u)?;
        let size = match u.int_in_range(0..=3)? {
            0 => size_edge(u)?,
            _ => u.int_in_range(0..=(64u32 << 10))? as usize,
        };
        let off = super::offset_edge(
            u,
            h.and_then(|i| self.handles[i].file)
                .map_or(0, |f| self.files[f].bytes.len()),
        )?;
        let boff = match u.int_in_range(0..=5)? {
            0 => *u.choose(&[-1i64, 1 << 40, i64::MAX])?,
            1 => 0,
            _ => u.int_in_range(0..=(64u32 << 10))? as i64,
        };
        // Host memory is never named past its allocation (the contract leaves that undefined).
        if let Some(bi) = b {
            if !self.bufs[bi].dev
                && (boff < 0 || (boff as usize).saturating_add(size) > self.bufs[bi].len)
            {
                return Ok(());
            }
        }
        let base = b.map_or(std::ptr::null_mut(), |i| self.bufs[i].addr as *mut c_void);
        let clean = self.clean(h, b, write, size, off, boff);
        let data = pattern(if clean.is_some() { size } else { 0 }, u.arbitrary()?);
        if let (Some(_), Some(bi)) = (clean, b) {
            if write {
                self.set_buf_bytes(bi, boff as usize, &data);
            }
        }
        // SAFETY: host ranges are inside their allocations; device ones are checked by the
        // library.
        let got = unsafe {
            if write {
                cuFileWrite(fh, base, size, off, boff)
            } else {
                cuFileRead(fh, base, size, off, boff)
            }
        };
        let call = if write { "cuFileWrite" } else { "cuFileRead" };
        check_count(call, got, size);
        match (clean, b) {
            (Some(f), Some(_)) if write => self.apply_write(call, f, off, &data, got),
            (Some(f), Some(bi)) => {
                let bytes = self.buf_bytes(bi, boff as usize, got.max(0) as usize);
                self.expect_read(call, f, off, size, got, &bytes);
            }
            // A write the model does not predict (refused, failed, or through a handle it
            // calls dead) may still have moved bytes: the model follows the file.
            _ if write => self.resync(),
            _ => {}
        }
        Ok(())
    }

    fn vectored(&mut self, u: &mut Unstructured) -> AResult<()> {
        let write = u.arbitrary()?;
        let (fh, h) = self.pick_handle(u)?;
        let n = u.int_in_range(0..=4)?;
        let mut iov = Vec::new();
        // (buffer, offset in it) of each entry; None for a NULL base.
        let mut parts = Vec::new();
        for _ in 0..n {
            let b = self.pick_buf(u)?;
            let len = u.int_in_range(0..=(16u32 << 10))? as usize;
            match b {
                Some(bi) if len <= self.bufs[bi].len => {
                    let at = u.int_in_range(0..=(self.bufs[bi].len - len) as u32)? as usize;
                    iov.push(IoVec {
                        base: (self.bufs[bi].addr + at) as *mut c_void,
                        len,
                    });
                    parts.push(Some((bi, at)));
                }
                _ => {
                    iov.push(IoVec {
                        base: std::ptr::null_mut(),
                        len,
                    });
                    parts.push(None);
                }
            }
        }
        let off = u.int_in_range(0..=(FILE_MAX as u32))? as i64;
        let total: usize = iov.iter().map(|v| v.len).sum();
        let null_with_bytes = iov.iter().any(|v| v.base.is_null() && v.len > 0);
        // Every entry inside the room its base has (a registration at it bounds it).
        let fits = iov.iter().zip(&parts).all(|(v, p)| match p {
            Some((bi, o)) => v.len <= self.room(*bi, self.bufs[*bi].addr + o),
            None => v.len == 0,
        });
        let file = h.and_then(|i| {
            let hd = &self.handles[i];
            (hd.live && fits && (if write { hd.write } else { hd.read }))
                .then_some(hd.file)
                .flatten()
        });
        let mut data = Vec::new();
        if write && file.is_some() && !null_with_bytes {
            data = pattern(total, u.arbitrary()?);
            let mut at = 0;
            for (v, p) in iov.iter().zip(&parts) {
                if let Some((bi, o)) = p {
                    self.set_buf_bytes(*bi, *o, &data[at..at + v.len]);
                }
                at += v.len;
            }
        }
        let g = guarded_copy(as_bytes(&iov));
        let arr = if n == 0 && u.arbitrary()? {
            std::ptr::null()
        } else {
            g.addr() as *const IoVec
        };
        // SAFETY: `n` entries at a guard page, each naming memory of ours.
        let got = unsafe {
            if write {
                cuFileWritev(fh, arr, n, off, 0)
            } else {
                cuFileReadv(fh, arr, n, off, 0)
            }
        };
        let call = if write { "cuFileWritev" } else { "cuFileReadv" };
        check_count(call, got, total);
        if null_with_bytes {
            assert_eq!(
                (got, errno()),
                (-1, libc::EINVAL),
                "{call}: an entry with bytes and no base is refused before any I/O"
            );
            return Ok(());
        }
        // Entries that overlap in memory make the outcome ambiguous (a read's last entry wins, a
        // write's data is whatever the last staging left there): only disjoint ones are checked.
        let overlap = parts.iter().enumerate().any(|(i, a)| {
            parts.iter().enumerate().any(|(j, b)| match (a, b) {
                (Some((x, o1)), Some((y, o2))) if i != j && x == y => {
                    o1 < &(o2 + iov[j].len) && o2 < &(o1 + iov[i].len)
                }
                _ => false,
            })
        });
        match file {
            Some(f) if total > 0 && write && !overlap => self.apply_write(call, f, off, &data, got),
            Some(f) if total > 0 && !write && !overlap => {
                let mut bytes = Vec::new();
                let mut left = got.max(0) as usize;
                for (v, p) in iov.iter().zip(&parts) {
                    let take = left.min(v.len);
                    if let Some((bi, o)) = p {
                        bytes.extend(self.buf_bytes(*bi, *o, take));
                    }
                    left -= take;
                }
                self.expect_read(call, f, off, total, got, &bytes);
            }
            // A write the model does not predict (refused, failed, or through a handle it
            // calls dead) may still have moved bytes: the model follows the file.
            _ if write => self.resync(),
            _ => {}
        }
        Ok(())
    }

    fn batch_submit(&mut self, u: &mut Unstructured) -> AResult<()> {
        if self.batches.is_empty() {
            return Ok(());
        }
        let i = u.choose_index(self.batches.len())?;
        let nr = u.int_in_range(0..=6)?;
        let dev: Vec<usize> = (0..self.bufs.len()).filter(|&b| self.bufs[b].dev).collect();
        let mut entries = Vec::new();
        for k in 0..nr {
            let (fh, _) = self.pick_handle(u)?;
            let b = if dev.is_empty() {
                None
            } else {
                Some(*u.choose(&dev)?)
            };
            let size = u.int_in_range(0..=(16u32 << 10))? as usize;
            let boff = match b {
                Some(b) if u.int_in_range(0..=7)? > 0 => {
                    u.int_in_range(0..=(self.bufs[b].len.saturating_sub(size)) as u32)? as i64
                }
                _ => u.int_in_range(0..=(2u32 << 20))? as i64,
            };
            entries.push(IoParams {
                mode: if u.int_in_range(0..=15)? == 0 { 0 } else { 1 },
                dev_ptr_base: b.map_or(std::ptr::null_mut(), |b| self.bufs[b].addr as *mut c_void),
                file_offset: u.int_in_range(0..=(FILE_MAX as u32))? as i64,
                dev_ptr_offset: boff,
                size,
                fh,
                // Reads only: batch writes would leave the models unpredictable until reaped.
                opcode: 0,
                cookie: (k as usize + 1) as *mut c_void,
            });
        }
        let g = guarded_copy(as_bytes(&entries));
        let arr = if nr == 0 {
            std::ptr::null_mut()
        } else {
            g.addr() as *mut IoParams
        };
        // SAFETY: `nr` entries at a guard page.
        let e = check("cuFileBatchIOSubmit", unsafe {
            cuFileBatchIOSubmit(self.batches[i].h, nr, arr, 0)
        });
        if e == SUCCESS {
            assert!(
                self.batches[i].live,
                "a submission to a dead batch succeeded"
            );
            self.batches[i].outstanding += nr;
        }
        Ok(())
    }

    fn batch_status(&mut self, u: &mut Unstructured) -> AResult<()> {
        let (h, i) = if self.batches.is_empty() || u.int_in_range(0..=15)? == 0 {
            (std::ptr::null_mut(), None)
        } else {
            let i = u.choose_index(self.batches.len())?;
            (self.batches[i].h, Some(i))
        };
        let cap = u.int_in_range(0..=8)?;
        let outstanding = i.map_or(0, |i| self.batches[i].outstanding);
        // Never wait for more than can complete (that would be a hang of the caller's making).
        let min_nr = u.int_in_range(0..=cap.min(outstanding) + 1)?.min(cap + 1);
        let mut ev = Guarded::new((cap as usize * 24).max(1));
        let mut nr = Guarded::new(4);
        nr.bytes().copy_from_slice(&cap.to_ne_bytes());
        let mut t = Guarded::new(16);
        t.bytes()[..8].copy_from_slice(&0i64.to_ne_bytes());
        t.bytes()[8..].copy_from_slice(&20_000_000i64.to_ne_bytes());
        let events = if cap == 0 && u.arbitrary()? {
            std::ptr::null_mut()
        } else {
            ev.addr() as *mut IoEvent
        };
        // SAFETY: `cap` events, the count and the timeout each at a guard page.
        let e = check("cuFileBatchIOGetStatus", unsafe {
            cuFileBatchIOGetStatus(
                h,
                min_nr,
                nr.addr() as *mut c_uint,
                events,
                t.addr() as *mut libc::timespec,
            )
        });
        if e == SUCCESS {
            let got = c_uint::from_ne_bytes(nr.bytes().try_into().unwrap());
            assert!(got <= cap, "{got} events for room for {cap}");
            if let Some(i) = i {
                assert!(
                    got <= self.batches[i].outstanding,
                    "more events than submitted"
                );
                self.batches[i].outstanding -= got;
            }
            let evs = ev.bytes();
            for k in 0..got as usize {
                let status = c_int::from_ne_bytes(evs[k * 24 + 8..k * 24 + 12].try_into().unwrap());
                let ret = usize::from_ne_bytes(evs[k * 24 + 16..k * 24 + 24].try_into().unwrap());
                assert!(
                    [1, 2, 4, 8, 0x10, 0x20, 0x40].contains(&status),
                    "event status {status:#x}"
                );
                if status == COMPLETE {
                    assert!(ret <= 16 << 10, "event ret {ret}");
                }
            }
        }
        Ok(())
    }

    fn stream_io(&mut self, u: &mut Unstructured) -> AResult<()> {
        let write = u.arbitrary()?;
        let (fh, h) = self.pick_handle(u)?;
        let b = self.pick_buf(u)?;
        let s = if self.streams.is_empty() || u.int_in_range(0..=7)? == 0 {
            std::ptr::null_mut()
        } else {
            self.streams[u.choose_index(self.streams.len())?].0
        };
        let size = u.int_in_range(0..=(32u32 << 10))? as usize;
        let off = u.int_in_range(0..=(FILE_MAX as u32))? as i64;
        let boff = u.int_in_range(0..=(32u32 << 10))? as i64;
        if let Some(bi) = b {
            if !self.bufs[bi].dev && (boff as usize) + size > self.bufs[bi].len {
                return Ok(());
            }
        }
        let base = b.map_or(std::ptr::null_mut(), |i| self.bufs[i].addr as *mut c_void);
        let clean = self.clean(h, b, write, size, off, boff);
        let data = pattern(if clean.is_some() { size } else { 0 }, u.arbitrary()?);
        if let (Some(_), Some(bi), true) = (clean, b, write) {
            self.set_buf_bytes(bi, boff as usize, &data);
        }
        let mut sz = guarded_copy(&size.to_ne_bytes());
        let mut fo = guarded_copy(&off.to_ne_bytes());
        let mut bo = guarded_copy(&boff.to_ne_bytes());
        let mut bytes = guarded_copy(&0isize.to_ne_bytes());
        let null_size = u.int_in_range(0..=15)? == 0;
        // SAFETY: the four values at guard pages, alive until the stream is synchronised below.
        let e = unsafe {
            let f = if write {
                cuFileWriteAsync
            } else {
                cuFileReadAsync
            };
            f(
                fh,
                base,
                if null_size {
                    std::ptr::null_mut()
                } else {
                    sz.addr() as *mut usize
                },
                fo.addr() as *mut i64,
                bo.addr() as *mut i64,
                bytes.addr() as *mut isize,
                s,
            )
        };
        let call = if write {
            "cuFileWriteAsync"
        } else {
            "cuFileReadAsync"
        };
        let e = check(call, e);
        // Also the NULL stream: the library waits for it through the CUDA driver of the global
        // scope, and the simulator is not there in this process.
        // SAFETY: our stream, or the NULL stream.
        let _ = unsafe { (cuda().stream_sync)(s) };
        let _ = (sz.bytes(), fo.bytes(), bo.bytes());
        if e != SUCCESS {
            if write {
                self.resync();
            }
            return Ok(());
        }
        let got = isize::from_ne_bytes(bytes.bytes().try_into().unwrap());
        assert!(
            got <= size as isize && got >= -5050,
            "{call}: *bytes_p {got} for {size} bytes"
        );
        match (clean, b) {
            (Some(f), Some(_)) if write => self.apply_write(call, f, off, &data, got),
            (Some(f), Some(bi)) => {
                let v = self.buf_bytes(bi, boff as usize, got.max(0) as usize);
                self.expect_read(call, f, off, size, got, &v);
            }
            // A write the model does not predict (refused, failed, or through a handle it
            // calls dead) may still have moved bytes: the model follows the file.
            _ if write => self.resync(),
            _ => {}
        }
        Ok(())
    }

    fn param_get(&mut self, u: &mut Unstructured) -> AResult<()> {
        let kind = u.int_in_range(0..=3)?;
        let p = u.int_in_range(-1..=15)?;
        match kind {
            0 => {
                let mut v = Guarded::new(8);
                // SAFETY: a size_t at a guard page.
                check("cuFileGetParameterSizeT", unsafe {
                    cuFileGetParameterSizeT(p, v.addr() as *mut usize)
                });
                let _ = v.bytes();
            }
            1 => {
                let mut v = Guarded::new(1);
                v.bytes()[0] = 0xAB;
                // SAFETY: one byte at a guard page.
                if check("cuFileGetParameterBool", unsafe {
                    cuFileGetParameterBool(p, v.addr() as *mut bool)
                }) == SUCCESS
                {
                    assert!(v.bytes()[0] <= 1, "bool {}", v.bytes()[0]);
                }
            }
            2 => {
                let len = u.int_in_range(0..=40)? as usize;
                let mut v = Guarded::new(len.max(1));
                v.bytes().fill(0xAB);
                let ptr = if len == 0 && u.arbitrary()? {
                    std::ptr::null_mut()
                } else {
                    v.addr() as *mut c_char
                };
                // SAFETY: `len` bytes at a guard page.
                if check("cuFileGetParameterString", unsafe {
                    cuFileGetParameterString(p, ptr, len as c_int)
                }) == SUCCESS
                {
                    assert!(v.bytes()[..len].contains(&0), "a string without its NUL");
                }
            }
            _ => {
                let mut lo = Guarded::new(8);
                let mut hi = Guarded::new(8);
                // SAFETY: two size_t at guard pages.
                check("cuFileGetParameterMinMaxValue", unsafe {
                    cuFileGetParameterMinMaxValue(
                        p,
                        lo.addr() as *mut usize,
                        hi.addr() as *mut usize,
                    )
                });
                let _ = (lo.bytes(), hi.bytes());
            }
        }
        Ok(())
    }

    fn param_set(&mut self, u: &mut Unstructured) -> AResult<()> {
        let p = u.int_in_range(-1..=15)?;
        let e = match u.int_in_range(0..=2)? {
            0 => cuFileSetParameterSizeT(p, size_edge(u)?),
            1 => cuFileSetParameterBool(p, u.arbitrary()?),
            _ => {
                // Log directories only under the scratch directory.
                let text = match u.int_in_range(0..=4)? {
                    0 => "ERROR".to_string(),
                    1 => "TRACE".to_string(),
                    2 => "BOGUS".to_string(),
                    3 => String::new(),
                    _ => scratch_dir().display().to_string(),
                };
                let c = CString::new(text).unwrap();
                // SAFETY: a NUL-terminated string.
                unsafe { cuFileSetParameterString(p, c.as_ptr()) }
            }
        };
        if check("cuFileSetParameter*", e) == SUCCESS {
            self.tuned = true;
        }
        Ok(())
    }

    fn slabs(&mut self, u: &mut Unstructured) -> AResult<()> {
        let gpu = u.arbitrary::<bool>()?;
        let len = u.int_in_range(0..=5)?;
        if u.arbitrary()? {
            let mut s = Guarded::new(len.max(1) * 8);
            let mut c = Guarded::new(len.max(1) * 8);
            // SAFETY: `len` values each at guard pages.
            let e = unsafe {
                let f = if gpu {
                    cuFileGetParameterGpuBounceBufferSlabArray
                } else {
                    cuFileGetParameterPosixPoolSlabArray
                };
                f(s.addr() as *mut usize, c.addr() as *mut usize, len as c_int)
            };
            check("cuFileGetParameter*SlabArray", e);
            let _ = (s.bytes(), c.bytes());
        } else {
            let sizes: Vec<usize> = (0..len).map(|i| 4 << (i * 2)).collect();
            let counts: Vec<usize> = (0..len).map(|i| 8 >> i.min(3)).collect();
            let s = guarded_copy(as_bytes(&sizes));
            let c = guarded_copy(as_bytes(&counts));
            // SAFETY: `len` values each at guard pages.
            let e = unsafe {
                let f = if gpu {
                    cuFileSetParameterGpuBounceBufferSlabArray
                } else {
                    cuFileSetParameterPosixPoolSlabArray
                };
                f(
                    s.addr() as *const usize,
                    c.addr() as *const usize,
                    len as c_int,
                )
            };
            if check("cuFileSetParameter*SlabArray", e) == SUCCESS {
                self.tuned = true;
            }
        }
        Ok(())
    }

    fn finish(mut self, baseline: usize) {
        self.drain();
        for b in &mut self.batches {
            cuFileBatchIODestroy(b.h);
        }
        for h in &self.handles {
            if h.live {
                cuFileHandleDeregister(h.fh);
            }
        }
        for b in &self.bufs {
            for &(r, _) in &b.reg {
                // SAFETY: an address of ours, looked up only.
                let _ = unsafe { cuFileBufDeregister(r as *const c_void) };
            }
        }
        for &(s, _) in &self.streams {
            let _ = cuFileStreamDeregister(s);
            // SAFETY: our stream, idle.
            unsafe { (cuda().stream_destroy)(s) };
        }
        let mut closes = 0;
        while cuFileUseCount() > 0 {
            let e = cuFileDriverClose_v2();
            assert_eq!(e.err, SUCCESS, "cuFileDriverClose at use count > 0");
            closes += 1;
            assert!(closes < 100_000, "the use count never reaches 0");
        }
        if self.tuned && cuFileDriverOpen().err == SUCCESS {
            assert_eq!(cuFileDriverClose_v2().err, SUCCESS);
        }
        assert_eq!(cuFileUseCount(), 0);
        for h in self.handles.drain(..) {
            // SAFETY: our descriptor.
            unsafe { libc::close(h.fd) };
        }
        for b in self.bufs.drain(..) {
            if b.dev {
                // SAFETY: our allocation.
                assert_eq!(unsafe { (cuda().free)(b.addr as u64) }, 0, "cuMemFree");
            }
        }
        let now = fd_count_but_log();
        assert!(
            now <= baseline,
            "descriptors left behind: {now} > {baseline}: {}",
            fd_list()
        );
    }
}

/// Descriptors open in this process, but cuFile's log file (opened at the first message at
/// its level, which an input may lower, and kept for the life of the process).
fn fd_count_but_log() -> usize {
    let log = scratch_dir().join("cufile.log");
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| {
        d.flatten()
            .filter(|e| std::fs::read_link(e.path()).map_or(true, |t| t != log))
            .count()
    })
}

/// Runs one input of the `cufile_sequence` target.
pub fn run(data: &[u8]) {
    init();
    static BASELINE: OnceLock<usize> = OnceLock::new();
    let baseline = *BASELINE.get_or_init(|| {
        // Everything the library keeps for the life of the process (log file, engine, worker
        // pool, runtime) is created by one full round first.
        // Statistics at level 3 (the engine's statistics server), I/O, a batch, a stream.
        assert_eq!(cuFileSetStatsLevel(3).err, SUCCESS);
        let mut u = Unstructured::new(&[0; 64]);
        let mut w = World::new(&mut u).expect("warm-up world");
        let mut u = Unstructured::new(&[9, 0, 0, 0, 0, 0, 0, 12, 0, 4, 0, 0, 17, 1, 2]);
        for _ in 0..4 {
            let _ = w.op(&mut u);
        }
        w.finish(usize::MAX);
        assert_eq!(cuFileSetStatsLevel(0).err, SUCCESS);
        fd_count_but_log()
    });
    let mut u = Unstructured::new(data);
    let Ok(mut w) = World::new(&mut u) else {
        return;
    };
    for _ in 0..64 {
        if u.is_empty() || w.op(&mut u).is_err() {
            break;
        }
    }
    w.finish(baseline);
}
