//! The fuzz harness: decodes a sequence of C-API calls from the fuzzer's input and makes them
//! against the library (linked in) and the simulated GPU runtime (`libhipsim.so`, loaded at run
//! time exactly as the library loads it), checking every answer against a model.
//!
//! What counts as a finding (the process aborts, libFuzzer keeps the input):
//! * a crash, a hang (libFuzzer's `-timeout`), or any panic inside the library, even one the C
//!   boundary would turn into `hipFileInternalError` (the panic hook aborts first);
//! * a read or write of caller memory outside what the call may touch: host buffers and the
//!   caller's `hipFileIOParams_t` / `hipFileIOEvents_t` arrays end at a `PROT_NONE` page;
//! * a return value outside the C API's ranges (hipFile codes 5000..=5039, `-1`/`-errno`,
//!   byte counts above the request);
//! * for requests the model calls clean (live handle, buffer big enough, no fault set, no batch
//!   in flight): a byte count or a byte that differs from the model of the file;
//! * after the input: the use count not reaching 0, or descriptors, simulator streams or
//!   pinned and device bytes left behind.
//!
//! Caller errors the C contract leaves undefined (host memory past its allocation, an array
//! shorter than the `nr` the library may legitimately read) are never generated.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Once, OnceLock};

use hipfile::ffi::*;
use libfuzzer_sys::arbitrary::{Result as AResult, Unstructured};

/// The `cufile_sequence` target (libcufile.so.0's C ABI).
pub mod cufile;

const PAGE: usize = 4096;
/// Largest scratch file.
const FILE_MAX: usize = 256 << 10;
/// Largest "clean" request.
const CLEAN_MAX: usize = 1 << 20;
const NFILES: usize = 3;

type HipError = c_int;

/// The simulator's fault knobs the harness sets (the cuFile ones need the NVIDIA platform).
const FAULTS: [&CStr; 8] = [
    c"fastpath_errno",
    c"fastpath_hip_error",
    c"fail_copy",
    c"fail_copy_after",
    c"short_transfer",
    c"fail_host_alloc",
    c"copy_delay_us",
    c"no_fastpath",
];

/// The simulated runtime's entry points the harness needs.
struct Sim {
    _lib: libloading::Library,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    free: unsafe extern "C" fn(*mut c_void) -> HipError,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError,
    stream_create: unsafe extern "C" fn(*mut *mut c_void) -> HipError,
    stream_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    stream_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    counter: unsafe extern "C" fn(*const c_char) -> u64,
    set_fault: unsafe extern "C" fn(*const c_char, i64) -> c_int,
}

// SAFETY: function pointers and a library handle; hipsim is thread-safe.
unsafe impl Sync for Sim {}
// SAFETY: as above.
unsafe impl Send for Sim {}

macro_rules! load {
    ($lib:expr, $name:literal) => {
        // SAFETY: the symbol has the C signature of the field it is stored in.
        *unsafe { $lib.get(concat!($name, "\0").as_bytes()) }
            .unwrap_or_else(|e| panic!("hipsim lacks {}: {e}", $name))
    };
}

/// Where `libhipsim.so` is: `HIPSIM_LIBRARY`, else the main workspace's release or debug build.
fn hipsim_path() -> PathBuf {
    if let Some(p) = std::env::var_os("HIPSIM_LIBRARY") {
        return PathBuf::from(p);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    for profile in ["release", "debug"] {
        let p = root.join("target").join(profile).join("libhipsim.so");
        if p.exists() {
            return p;
        }
    }
    panic!("libhipsim.so not found: run `cargo build -p hipsim --release` or set HIPSIM_LIBRARY");
}

fn sim() -> &'static Sim {
    static SIM: OnceLock<Sim> = OnceLock::new();
    SIM.get_or_init(|| {
        // SAFETY: loading the simulator library (its initialisers only read the environment).
        let lib = unsafe { libloading::Library::new(hipsim_path()) }.expect("load hipsim");
        Sim {
            malloc: load!(lib, "hipMalloc"),
            free: load!(lib, "hipFree"),
            memcpy: load!(lib, "hipMemcpy"),
            stream_create: load!(lib, "hipStreamCreate"),
            stream_destroy: load!(lib, "hipStreamDestroy"),
            stream_synchronize: load!(lib, "hipStreamSynchronize"),
            counter: load!(lib, "hipsimCounter"),
            set_fault: load!(lib, "hipsimSetFault"),
            _lib: lib,
        }
    })
}

impl Sim {
    fn counter(&self, name: &CStr) -> u64 {
        // SAFETY: NUL-terminated name.
        unsafe { (self.counter)(name.as_ptr()) }
    }
    fn fault(&self, name: &CStr, v: i64) {
        // SAFETY: NUL-terminated name.
        let r = unsafe { (self.set_fault)(name.as_ptr(), v) };
        assert_eq!(r, 0, "hipsimSetFault({name:?}, {v})");
    }
    fn upload(&self, dst: usize, src: &[u8]) -> bool {
        // SAFETY: valid host slice; hipsim checks the device side.
        unsafe { (self.memcpy)(dst as *mut c_void, src.as_ptr().cast(), src.len(), 1) == 0 }
    }
    fn download(&self, src: usize, len: usize) -> Option<Vec<u8>> {
        let mut v = vec![0u8; len];
        // SAFETY: valid host slice; hipsim checks the device side.
        let r = unsafe { (self.memcpy)(v.as_mut_ptr().cast(), src as *const c_void, len, 2) };
        (r == 0).then_some(v)
    }
}

/// Calls made, and reads/writes whose bytes were checked against the model.
static CALLS: AtomicU64 = AtomicU64::new(0);
static CHECKED: AtomicU64 = AtomicU64::new(0);

extern "C" fn print_totals() {
    eprintln!(
        "hipfile-fuzz: {} calls decoded, {} reads and writes checked byte for byte",
        CALLS.load(Ordering::Relaxed),
        CHECKED.load(Ordering::Relaxed)
    );
}

/// Process set-up, once: the environment the library reads at its first call, and a panic hook
/// that aborts (so a panic the C boundary would swallow is still a crash).
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let sim_path = hipsim_path();
        // SAFETY: called before the library or any thread of ours reads the environment.
        unsafe {
            std::env::set_var("HIPFILE_HIP_LIBRARY", &sim_path);
            std::env::set_var("HIPFILE_CUDA_LIBRARY", &sim_path);
            if std::env::var_os("HIPFILE_LOG").is_none() {
                std::env::set_var("HIPFILE_LOG", "off");
            }
        }
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default_hook(info);
            std::process::abort();
        }));
        sim();
        // SAFETY: registering a plain function that only prints.
        unsafe { libc::atexit(print_totals) };
        std::fs::create_dir_all(scratch_dir()).expect("scratch directory");
        let fifo = CString::new(
            scratch_dir()
                .join("fifo")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        // SAFETY: a NUL-terminated path.
        unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) };
    });
}

fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("hipfile-fuzz-{}", std::process::id()))
}

/// Memory whose last byte is followed by a `PROT_NONE` page.
struct Guarded {
    map: *mut c_void,
    map_len: usize,
    data: *mut u8,
    len: usize,
}

impl Guarded {
    fn new(len: usize) -> Guarded {
        let pages = len.div_ceil(PAGE).max(1);
        let map_len = (pages + 1) * PAGE;
        // SAFETY: a fresh anonymous mapping.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED, "mmap");
        // SAFETY: the last page of our own mapping.
        let r = unsafe {
            libc::mprotect(
                (map as usize + pages * PAGE) as *mut c_void,
                PAGE,
                libc::PROT_NONE,
            )
        };
        assert_eq!(r, 0, "mprotect");
        let data = (map as usize + pages * PAGE - len) as *mut u8;
        Guarded {
            map,
            map_len,
            data,
            len,
        }
    }
    fn addr(&self) -> usize {
        self.data as usize
    }
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `len` bytes of our mapping.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: our mapping.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mem {
    Device,
    Host,
}

struct Buf {
    kind: Mem,
    /// Device: the hipMalloc pointer; host: the guarded memory.
    addr: usize,
    len: usize,
    host: Option<Guarded>,
    /// Registered range (base offset, length), if registered.
    reg: Option<(usize, usize)>,
}

impl Buf {
    /// Bytes a request at the allocation's start may use: a registration starting there
    /// bounds it.
    fn base_room(&self) -> usize {
        match self.reg {
            Some((0, rlen)) => rlen,
            _ => self.len,
        }
    }
}

/// A scratch file and the bytes it should hold.
struct FileModel {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl FileModel {
    /// `n` scratch files named `<prefix><i>`, each empty, 4 KiB or a size the input picks up to
    /// `FILE_MAX`, filled with the pattern of seed `seed + i`.
    fn scratch(u: &mut Unstructured, n: usize, prefix: &str, seed: u64) -> AResult<Vec<FileModel>> {
        let mut files = Vec::with_capacity(n);
        for i in 0..n {
            let len = match u.int_in_range(0..=3)? {
                0 => 0,
                1 => 4096,
                _ => u.int_in_range(0..=(FILE_MAX as u32))? as usize,
            };
            let path = scratch_dir().join(format!("{prefix}{i}"));
            let bytes = pattern(len, i as u64 + seed);
            std::fs::write(&path, &bytes).expect("write a scratch file");
            files.push(FileModel { path, bytes });
        }
        Ok(files)
    }
}

struct Fd {
    fd: c_int,
    file: usize,
    writable: bool,
    readable: bool,
    /// Whether it is one of the scratch files (the model knows its bytes).
    modelled: bool,
}

struct Handle {
    fh: hipFileHandle_t,
    /// The scratch descriptor it was made from (`None`: a descriptor the model does not know,
    /// such as standard input).
    fd: Option<usize>,
    live: bool,
}

struct Batch {
    h: hipFileBatchHandle_t,
    max_nr: u32,
    live: bool,
    /// Operations submitted and not yet reaped.
    outstanding: u32,
}

/// Which calls an input may make, and how often.
#[derive(Clone, Copy)]
pub enum Mode {
    /// Every call family.
    Api,
    /// Mostly batch set-up, submission, status, cancel and destroy, with registration and
    /// driver close around them.
    Batch,
}

struct World {
    files: Vec<FileModel>,
    fds: Vec<Fd>,
    handles: Vec<Handle>,
    bufs: Vec<Buf>,
    batches: Vec<Batch>,
    streams: Vec<(*mut c_void, bool)>,
    /// Batch operations submitted since the models were last synchronised with the files.
    batch_in_flight: bool,
    faults: bool,
    /// Registrations of addresses that are not the harness's allocations.
    foreign: Vec<usize>,
    /// Further registrations (base, length) inside an allocation that has one already.
    extra: Vec<(usize, usize)>,
    /// Whether the handle `pick_handle` chose last is dead, forged or NULL.
    last_dead: bool,
    /// A parameter or driver setting was changed: byte counts are no longer predicted.
    tuned: bool,
    stats_ctx: Vec<*mut hipFileStatsContext_t>,
    /// `Some(c)` while the model knows the use count exactly.
    use_count: Option<i64>,
}

fn check_err(call: &str, e: hipFileError_t) {
    assert!(
        e.err == 0 || (5000..=5039).contains(&e.err),
        "{call}: hipFileError_t.err {} outside 0 and 5000..=5039",
        e.err
    );
    if e.err == 0 {
        assert_eq!(
            e.hip_drv_err, 0,
            "{call}: success with hip_drv_err {}",
            e.hip_drv_err
        );
    }
}

fn check_ssize(call: &str, n: isize, size: usize) {
    if n >= 0 {
        assert!(
            n as usize <= size,
            "{call}: {n} bytes for a {size}-byte request"
        );
    } else {
        let e = -n;
        assert!(
            e == 1 || (1..4096).contains(&e) || (5000..=5039).contains(&e),
            "{call}: return value {n} is neither -1, -errno nor -hipFileOpError"
        );
    }
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn open_fd(path: &std::path::Path, flags: c_int) -> c_int {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid path.
    unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644) }
}

/// Descriptors open in this process.
fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// `HIPFILE_FUZZ_TRACE=1`: print each call family as it is decoded (for minimising findings).
fn trace() -> bool {
    static T: OnceLock<bool> = OnceLock::new();
    *T.get_or_init(|| std::env::var_os("HIPFILE_FUZZ_TRACE").is_some())
}

fn fd_list() -> String {
    let mut v: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.flatten()
                .map(|e| {
                    format!(
                        "{}->{}",
                        e.file_name().to_string_lossy(),
                        std::fs::read_link(e.path())
                            .map(|p| p.display().to_string())
                            .unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.join(", ")
}

fn pick<T: Copy>(u: &mut Unstructured, xs: &[T]) -> AResult<T> {
    Ok(*u.choose(xs)?)
}

/// A size at the interesting edges, or any small one.
fn size_edge(u: &mut Unstructured) -> AResult<usize> {
    Ok(match u.int_in_range(0..=9)? {
        0 => 0,
        1 => 1,
        2 => 4095,
        3 => 4096,
        4 => 4097,
        5 => 65536,
        6 => *u.choose(&[
            1usize << 20,
            usize::MAX,
            1 << 40,
            isize::MAX as usize,
            (1 << 31) - 1,
        ])?,
        _ => u.int_in_range(0..=(CLEAN_MAX as u32))? as usize,
    })
}

fn offset_edge(u: &mut Unstructured, len: usize) -> AResult<i64> {
    Ok(match u.int_in_range(0..=11)? {
        0 => 0,
        1 => 4095,
        2 => 4096,
        3 => 4097,
        4 => len as i64 - 1,
        5 => len as i64,
        6 => len as i64 + 1,
        7 => *u.choose(&[-1i64, i64::MIN, i64::MAX, 1 << 40, -4096])?,
        _ => u.int_in_range(0..=(FILE_MAX as u32))? as i64,
    })
}

impl World {
    fn new(u: &mut Unstructured) -> AResult<World> {
        let files = FileModel::scratch(u, NFILES, "f", 1)?;
        let mut w = World {
            files,
            fds: Vec::new(),
            handles: Vec::new(),
            bufs: Vec::new(),
            batches: Vec::new(),
            streams: Vec::new(),
            batch_in_flight: false,
            faults: false,
            tuned: false,
            last_dead: false,
            foreign: Vec::new(),
            extra: Vec::new(),
            stats_ctx: Vec::new(),
            use_count: Some(0),
        };
        // A starting state worth mutating: every file open read-write and registered (which
        // opens the driver), one device and one host buffer.
        if u.arbitrary::<u8>()? < 224 {
            for file in 0..NFILES {
                let fd = open_fd(&w.files[file].path, libc::O_RDWR);
                assert!(fd >= 0, "open a scratch file");
                w.fds.push(Fd {
                    fd,
                    file,
                    readable: true,
                    writable: true,
                    modelled: true,
                });
                let mut d = hipFileDescr_t {
                    type_: hipFileHandleTypeOpaqueFD,
                    handle: hipFileDescrHandle { fd },
                    fs_ops: std::ptr::null(),
                };
                let mut fh = std::ptr::null_mut();
                // SAFETY: valid pointers.
                let e = unsafe { hipFileHandleRegister(&mut fh, &mut d) };
                assert_eq!(e.err, 0, "registration of a scratch file");
                w.handles.push(Handle {
                    fh,
                    fd: Some(file),
                    live: true,
                });
            }
            w.implicit_open();
            let mut p = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { (sim().malloc)(&mut p, 1 << 20) }, 0, "hipMalloc");
            w.bufs.push(Buf {
                kind: Mem::Device,
                addr: p as usize,
                len: 1 << 20,
                host: None,
                reg: None,
            });
            let g = Guarded::new(FILE_MAX);
            w.bufs.push(Buf {
                kind: Mem::Host,
                addr: g.addr(),
                len: FILE_MAX,
                host: Some(g),
                reg: None,
            });
        }
        Ok(w)
    }

    /// Re-reads the models from the files (after a failed write or drained batch writes).
    fn resync(&mut self) {
        for f in &mut self.files {
            // A write far past the end leaves a sparse file: cut it back before reading.
            let len = std::fs::metadata(&f.path).map_or(0, |m| m.len());
            if len > 4 * FILE_MAX as u64 {
                let file = std::fs::OpenOptions::new().write(true).open(&f.path);
                file.and_then(|h| h.set_len(FILE_MAX as u64))
                    .expect("truncate a scratch file");
            }
            f.bytes = std::fs::read(&f.path).expect("read back a scratch file");
        }
    }

    /// When no batch operation is outstanding any more, the models are read back from the files.
    fn drained(&mut self) {
        if self.batch_in_flight && !self.batches.iter().any(|b| b.live && b.outstanding > 0) {
            self.resync();
            self.batch_in_flight = false;
        }
    }

    /// Clears the simulator's faults after the call they were set for.
    fn clear_faults(&mut self) {
        if self.faults {
            for name in FAULTS {
                sim().fault(name, 0);
            }
            self.faults = false;
        }
    }

    /// Bytes a request at `b`'s start may use: the registration starting there bounds it.
    fn room_at(&self, b: &Buf) -> usize {
        match self.extra.iter().find(|&&(a, _)| a == b.addr) {
            Some(&(_, len)) => len,
            None => b.base_room(),
        }
    }

    fn quiet(&self) -> bool {
        !self.faults && !self.batch_in_flight && !self.tuned
    }

    /// A handle: a live one of the model (`Some(index)`), or (`None`) a stale, forged, NULL
    /// or unmodelled one; the flag says whether every call through it must fail.
    fn pick_handle(&mut self, u: &mut Unstructured) -> AResult<(hipFileHandle_t, Option<usize>)> {
        let (fh, live, dead) = self.pick_handle3(u)?;
        self.last_dead = dead;
        Ok((fh, live))
    }

    fn pick_handle3(
        &mut self,
        u: &mut Unstructured,
    ) -> AResult<(hipFileHandle_t, Option<usize>, bool)> {
        Ok(match u.int_in_range(0..=9)? {
            0 => (std::ptr::null_mut(), None, true),
            1 => (
                std::ptr::without_provenance_mut(*u.choose(&[
                    1usize,
                    0x1000,
                    usize::MAX,
                    0xdead_beef,
                ])?),
                None,
                true,
            ),
            _ if !self.handles.is_empty() => {
                let i = u.choose_index(self.handles.len())?;
                let h = &self.handles[i];
                let known = h.live && h.fd.is_some();
                (h.fh, known.then_some(i), !h.live)
            }
            _ => (std::ptr::null_mut(), None, true),
        })
    }

    fn op(&mut self, u: &mut Unstructured, mode: Mode) -> AResult<()> {
        let choice = match mode {
            Mode::Api => u.int_in_range(0..=19)?,
            Mode::Batch => {
                *u.choose(&[0, 1, 3, 5, 6, 7, 9, 10, 15, 16, 17, 18, 19, 15, 16, 17, 16])?
            }
        };
        if trace() {
            eprintln!("op {choice} ({} bytes left)", u.len());
        }
        CALLS.fetch_add(1, Ordering::Relaxed);
        // Simulator faults are set by a call of their own and hold for the next call only, so
        // most calls still run fault-free against the model.
        let faulted = self.faults && choice != 11;
        match choice {
            0 => self.driver_open(),
            1 => self.driver_close(),
            2 => self.misc(u)?,
            3 => self.open_file(u)?,
            4 => self.close_file(u)?,
            5 => self.handle_register(u)?,
            6 => self.handle_deregister(u)?,
            7 => self.buf_alloc(u)?,
            8 => self.buf_register(u)?,
            9 => self.buf_deregister(u)?,
            10 => self.io(u)?,
            11 => self.set_fault(u)?,
            12 => self.params(u)?,
            13 => self.props(u)?,
            14 => self.streams_op(u)?,
            15 => self.batch_setup(u)?,
            16 => self.batch_submit(u)?,
            17 => self.batch_status(u)?,
            18 => self.batch_cancel_destroy(u)?,
            _ => self.stats(u)?,
        }
        if faulted {
            self.clear_faults();
        }
        Ok(())
    }

    fn driver_open(&mut self) {
        let e = hipFileDriverOpen();
        check_err("hipFileDriverOpen", e);
        if e.err == 0 {
            self.use_count = self.use_count.map(|c| c + 1);
        } else {
            self.use_count = None;
        }
        self.check_use_count();
    }

    fn driver_close(&mut self) {
        let before = hipFileUseCount();
        let e = hipFileDriverClose();
        check_err("hipFileDriverClose", e);
        if before == 0 {
            assert_ne!(e.err, 0, "hipFileDriverClose on a closed driver succeeded");
        }
        if e.err == 0 {
            assert_eq!(hipFileUseCount(), before - 1, "use count after a close");
            self.use_count = self.use_count.map(|c| c - 1);
            if hipFileUseCount() == 0 {
                self.closed_to_zero();
            }
        }
    }

    /// The driver closed: every registration went with it and batch work was drained.
    fn closed_to_zero(&mut self) {
        for h in &mut self.handles {
            h.live = false;
        }
        for b in &mut self.bufs {
            b.reg = None;
        }
        self.foreign.clear();
        self.extra.clear();
        for s in &mut self.streams {
            s.1 = false;
        }
        // Closing to 0 also ends every batch context and resets every parameter.
        for b in &mut self.batches {
            b.live = false;
            b.outstanding = 0;
        }
        self.tuned = false;
        if self.batch_in_flight {
            self.resync();
            self.batch_in_flight = false;
        }
    }

    fn check_use_count(&mut self) {
        let n = hipFileUseCount();
        assert!(n >= 0, "hipFileUseCount {n}");
        if let Some(c) = self.use_count {
            // Implicit opens (registration on a closed driver) make the count at least 1.
            assert!(n >= c.min(1), "use count {n}, model {c}");
        }
        self.use_count = Some(n);
    }

    /// Calls that implicitly open the driver leave the model's count at "at least 1".
    fn implicit_open(&mut self) {
        let n = hipFileUseCount();
        assert!(
            n >= 1,
            "a call that opens the driver left the use count at {n}"
        );
        self.use_count = Some(n);
    }

    fn misc(&mut self, u: &mut Unstructured) -> AResult<()> {
        match u.int_in_range(0..=3)? {
            0 => {
                let (mut a, mut b, mut c) = (9u32, 9u32, 9u32);
                let null = u.arbitrary::<u8>()?;
                // SAFETY: valid or NULL out-pointers.
                let e = unsafe {
                    hipFileGetVersion(
                        if null & 1 != 0 {
                            std::ptr::null_mut()
                        } else {
                            &mut a
                        },
                        if null & 2 != 0 {
                            std::ptr::null_mut()
                        } else {
                            &mut b
                        },
                        if null & 4 != 0 {
                            std::ptr::null_mut()
                        } else {
                            &mut c
                        },
                    )
                };
                check_err("hipFileGetVersion", e);
            }
            1 => {
                let code = match u.int_in_range(0..=2)? {
                    0 => u.int_in_range(4990..=5045)?,
                    _ => u.arbitrary::<i32>()?,
                };
                let s = hipFileGetOpErrorString(code);
                assert!(!s.is_null(), "hipFileGetOpErrorString({code}) is NULL");
                // SAFETY: the library returns a NUL-terminated static string.
                let text = unsafe { CStr::from_ptr(s) };
                assert!(!text.to_bytes().is_empty(), "empty error string for {code}");
            }
            2 => self.check_use_count(),
            _ => {
                // SAFETY: no arguments.
                let _ = hipFileUseCount();
            }
        }
        Ok(())
    }

    fn open_file(&mut self, u: &mut Unstructured) -> AResult<()> {
        if self.fds.len() >= 8 {
            return Ok(());
        }
        let file = u.choose_index(NFILES)?;
        let (flags, readable, writable) = pick(
            u,
            &[
                (libc::O_RDWR, true, true),
                (libc::O_RDWR, true, true),
                (libc::O_RDONLY, true, false),
                (libc::O_WRONLY, false, true),
                (libc::O_RDWR | libc::O_DIRECT, true, true),
                (libc::O_RDWR | libc::O_APPEND, true, false),
                (libc::O_PATH, false, false),
            ],
        )?;
        // Sometimes a descriptor the model does not follow: a FIFO without a writer (its
        // registration must not block) or a directory.
        let (fd, modelled) = match u.int_in_range(0..=9)? {
            0 => (
                open_fd(
                    &scratch_dir().join("fifo"),
                    libc::O_RDONLY | libc::O_NONBLOCK,
                ),
                false,
            ),
            1 => (
                open_fd(&scratch_dir(), libc::O_RDONLY | libc::O_DIRECTORY),
                false,
            ),
            _ => (open_fd(&self.files[file].path, flags), true),
        };
        if fd >= 0 {
            self.fds.push(Fd {
                fd,
                file,
                readable: readable && modelled,
                writable: writable && modelled,
                modelled,
            });
        }
        Ok(())
    }

    fn close_file(&mut self, u: &mut Unstructured) -> AResult<()> {
        // Registered descriptors too: the library keeps its own duplicate, so a handle goes on
        // reaching its file even after the number is reused by another open.
        let open: Vec<usize> = (0..self.fds.len())
            .filter(|&i| self.fds[i].fd >= 0)
            .collect();
        if open.is_empty() {
            return Ok(());
        }
        let i = *u.choose(&open)?;
        // SAFETY: our descriptor.
        unsafe { libc::close(self.fds[i].fd) };
        self.fds[i].fd = -1;
        Ok(())
    }

    fn handle_register(&mut self, u: &mut Unstructured) -> AResult<()> {
        let mut fh: hipFileHandle_t = std::ptr::without_provenance_mut(0x5a5a);
        let (fd, idx) = match u.int_in_range(0..=7)? {
            0 => (-1, None),
            1 => (*u.choose(&[1_000_000, i32::MAX, i32::MIN])?, None),
            2 => (0, None),
            _ if !self.fds.is_empty() => {
                let i = u.choose_index(self.fds.len())?;
                let f = &self.fds[i];
                (f.fd, (f.fd >= 0).then_some(i))
            }
            _ => (-1, None),
        };
        let kind = match u.int_in_range(0..=9)? {
            0 => hipFileHandleTypeOpaqueWin32,
            1 => hipFileHandleTypeUserspaceFS,
            2 => u.arbitrary()?,
            _ => hipFileHandleTypeOpaqueFD,
        };
        let mut d = hipFileDescr_t {
            type_: kind,
            handle: hipFileDescrHandle { fd },
            fs_ops: std::ptr::null(),
        };
        let nulls = u.int_in_range(0..=15)?;
        let before = fh;
        // SAFETY: valid or NULL pointers.
        let e = unsafe {
            hipFileHandleRegister(
                if nulls == 0 {
                    std::ptr::null_mut()
                } else {
                    &mut fh
                },
                if nulls == 1 {
                    std::ptr::null_mut()
                } else {
                    &mut d
                },
            )
        };
        check_err("hipFileHandleRegister", e);
        if e.err == 0 {
            assert!(nulls > 1, "registration through a NULL pointer succeeded");
            assert!(!fh.is_null(), "registration succeeded with a NULL handle");
            assert_eq!(kind, hipFileHandleTypeOpaqueFD);
            assert!(
                idx.is_some() || fd == 0,
                "registration of fd {fd} (not an open descriptor) succeeded"
            );
            assert!(
                !self.handles.iter().any(|h| h.live && h.fh == fh),
                "a live handle was handed out twice"
            );
            // A FIFO or directory handle is live but outside the model.
            let idx = idx.filter(|&i| self.fds[i].modelled);
            self.handles.push(Handle {
                fh,
                fd: idx,
                live: true,
            });
            self.implicit_open();
        } else {
            assert_eq!(fh, before, "a failed registration wrote the handle");
        }
        Ok(())
    }

    fn handle_deregister(&mut self, u: &mut Unstructured) -> AResult<()> {
        let (fh, live) = self.pick_handle(u)?;
        hipFileHandleDeregister(fh);
        if let Some(i) = live {
            if self.batch_in_flight {
                // A handle that queued batch work may still use is kept (the deregistration is
                // silently ignored while busy): the model no longer predicts it.
                self.handles[i].fd = None;
            } else {
                self.handles[i].live = false;
            }
        }
        Ok(())
    }

    fn buf_alloc(&mut self, u: &mut Unstructured) -> AResult<()> {
        if self.bufs.len() >= 6 {
            return Ok(());
        }
        let len = match u.int_in_range(0..=3)? {
            0 => 4096,
            1 => 1 << 20,
            _ => u.int_in_range(1..=(1u32 << 20))? as usize,
        };
        if u.arbitrary::<bool>()? {
            let mut p = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            let r = unsafe { (sim().malloc)(&mut p, len) };
            if trace() {
                eprintln!(
                    "hipMalloc({len}) = {r}, live {}",
                    sim().counter(c"device_bytes_live")
                );
            }
            if r == 0 {
                self.bufs.push(Buf {
                    kind: Mem::Device,
                    addr: p as usize,
                    len,
                    host: None,
                    reg: None,
                });
            }
        } else {
            let g = Guarded::new(len);
            self.bufs.push(Buf {
                kind: Mem::Host,
                addr: g.addr(),
                len,
                host: Some(g),
                reg: None,
            });
        }
        Ok(())
    }

    fn buf_register(&mut self, u: &mut Unstructured) -> AResult<()> {
        let flags = match u.int_in_range(0..=3)? {
            0 => u.arbitrary()?,
            1 => HIPFILE_RDMA_REGISTER,
            _ => 0,
        };
        if self.bufs.is_empty() || u.int_in_range(0..=7)? == 0 {
            let base = *u.choose(&[0usize, 1, 0x1000, usize::MAX & !0xfff])?;
            let len = size_edge(u)?;
            let e = hipFileBufRegister(base as *const c_void, len, flags);
            check_err("hipFileBufRegister", e);
            if e.err == 0 {
                // Pageable host memory cannot be told from an unmapped range; only NULL must fail.
                assert_ne!(base, 0, "registration of NULL succeeded");
                self.implicit_open();
                self.foreign.push(base);
            }
            return Ok(());
        }
        let i = u.choose_index(self.bufs.len())?;
        let (kind, len) = (self.bufs[i].kind, self.bufs[i].len);
        let off = match u.int_in_range(0..=3)? {
            0 => u.int_in_range(0..=len)?,
            _ => 0,
        };
        let rlen = match kind {
            // Device memory: inside, to the end, across the end, far outside.
            Mem::Device => match u.int_in_range(0..=5)? {
                0 => len - off + 1,
                1 => usize::MAX,
                2 => 0,
                3 => u.int_in_range(0..=len - off)?,
                _ => len - off,
            },
            // Host memory past the allocation is the caller's bug: only inside.
            Mem::Host => match u.int_in_range(0..=3)? {
                0 => 0,
                1 => u.int_in_range(0..=len - off)?,
                _ => len - off,
            },
        };
        let base = self.bufs[i].addr + off;
        let before = self
            .bufs
            .iter()
            .any(|b| b.reg.is_some_and(|r| b.addr + r.0 == base));
        let e = hipFileBufRegister(base as *const c_void, rlen, flags);
        check_err("hipFileBufRegister", e);
        if e.err == 0 {
            assert!(!before, "the same base registered twice");
            self.implicit_open();
            if off == len {
                // One past the end is no allocation's pointer: the runtime calls it pageable
                // host memory, taken as given. Never used for I/O (it is not addressable).
                self.foreign.push(base);
                return Ok(());
            }
            assert!(
                off + rlen <= len,
                "registration past the allocation's end succeeded"
            );
            if self.bufs[i].reg.is_none() {
                self.bufs[i].reg = Some((off, rlen));
            } else {
                // A second registration inside the same allocation: kept aside.
                self.extra.push((base, rlen));
            }
        } else if before {
            assert_eq!(e.err, hipFileMemoryAlreadyRegistered, "re-registration");
        }
        Ok(())
    }

    fn buf_deregister(&mut self, u: &mut Unstructured) -> AResult<()> {
        if self.batch_in_flight {
            return Ok(());
        }
        let (addr, idx) = match u.int_in_range(0..=5)? {
            0 => (0usize, None),
            1 => (0xdead_0000usize, None),
            _ if !self.bufs.is_empty() => {
                let i = u.choose_index(self.bufs.len())?;
                let b = &self.bufs[i];
                match b.reg {
                    Some((off, _)) if u.arbitrary::<bool>()? => (b.addr + off, Some(i)),
                    _ => (b.addr + u.int_in_range(0..=b.len)?, None),
                }
            }
            _ => (0, None),
        };
        let registered = self
            .bufs
            .iter()
            .any(|b| b.reg.is_some_and(|r| b.addr + r.0 == addr))
            || self.foreign.contains(&addr)
            || self.extra.iter().any(|&(a, _)| a == addr);
        let e = hipFileBufDeregister(addr as *const c_void);
        check_err("hipFileBufDeregister", e);
        if e.err == 0 {
            assert!(
                registered,
                "deregistration of unregistered {addr:#x} succeeded"
            );
            self.foreign.retain(|&f| f != addr);
            self.extra.retain(|&(a, _)| a != addr);
            for b in &mut self.bufs {
                if b.reg.is_some_and(|r| b.addr + r.0 == addr) {
                    b.reg = None;
                }
            }
        } else if registered && hipFileUseCount() > 0 {
            panic!(
                "deregistration of registered {addr:#x} failed with {}",
                e.err
            );
        }
        let _ = idx;
        Ok(())
    }

    /// One `hipFileRead` / `hipFileWrite`, checked against the model when the request is clean.
    fn io(&mut self, u: &mut Unstructured) -> AResult<()> {
        let write = u.arbitrary::<bool>()?;
        let (fh, live) = self.pick_handle(u)?;
        let file = live.map(|i| self.fds[self.handles[i].fd.unwrap()].file);
        let flen = file.map_or(4096, |f| self.files[f].bytes.len());
        // The buffer: registered base, an allocation with an offset, NULL or a forged pointer.
        let mut clean = live.is_some();
        let (base, room, buf) = if self.bufs.is_empty() || u.int_in_range(0..=9)? == 0 {
            clean = false;
            (0usize, 0usize, None)
        } else {
            let i = u.choose_index(self.bufs.len())?;
            let b = &self.bufs[i];
            match b.reg {
                Some((off, rlen)) if u.arbitrary::<bool>()? => (b.addr + off, rlen, Some((i, off))),
                // The allocation's start: its registration's length if one starts there.
                _ => (b.addr, self.room_at(b), Some((i, 0))),
            }
        };
        let host = buf.is_some_and(|(i, _)| self.bufs[i].kind == Mem::Host);
        let mut size = size_edge(u)?;
        let mut boff = match u.int_in_range(0..=5)? {
            0 => *u.choose(&[-1i64, 4096, room as i64, room as i64 + 1, i64::MAX])?,
            1 => u.int_in_range(0..=room)? as i64,
            _ => 0,
        };
        if host {
            // Host memory cannot be checked by anyone: stay inside the allocation.
            let (i, off) = buf.unwrap();
            let avail = self.bufs[i].len - off;
            if boff < 0 || boff as usize > avail {
                boff = 0;
            }
            size = size.min(avail - boff as usize);
        }
        let foff = offset_edge(u, flen)?;
        let fdm = live.map(|i| &self.fds[self.handles[i].fd.unwrap()]);
        clean &= fdm.is_some_and(|f| if write { f.writable } else { f.readable });
        // The offset must point into the buffer (even for 0 bytes: a zero-length registration
        // fails every request).
        clean &= boff >= 0
            && (boff as usize) < room
            && (boff as usize).checked_add(size).is_some_and(|e| e <= room);
        clean &= (0..=FILE_MAX as i64).contains(&foff) && size <= CLEAN_MAX;
        clean &= self.quiet();
        if trace() {
            eprintln!(
                "io: live {} fd {} room {} offs {} faults {} batch {} tuned {}",
                live.is_some(),
                fdm.is_some_and(|f| if write { f.writable } else { f.readable }),
                boff >= 0 && (boff as usize).checked_add(size).is_some_and(|e| e <= room),
                (0..=FILE_MAX as i64).contains(&foff) && size <= CLEAN_MAX,
                self.faults,
                self.batch_in_flight,
                self.tuned
            );
        }
        let seed = u.arbitrary::<u64>()?;

        // Fill the source (write) or a sentinel (read) where the buffer is addressable.
        let at = buf.map(|(i, off)| self.bufs[i].addr + off + boff.max(0) as usize);
        let span = if clean { size } else { 0 };
        let data = pattern(span, seed);
        if let (Some(at), true) = (at, clean) {
            let fill = if write {
                data.clone()
            } else {
                vec![0xEE; span]
            };
            if host {
                let (i, _) = buf.unwrap();
                let start = at - self.bufs[i].addr;
                self.bufs[i].host.as_mut().unwrap().bytes()[start..start + span]
                    .copy_from_slice(&fill);
            } else if !sim().upload(at, &fill) {
                clean = false;
            }
        }

        if trace() {
            eprintln!(
                "before: file {file:?} of {} bytes on disk, model {}",
                file.map_or(0, |f| std::fs::metadata(&self.files[f].path)
                    .map_or(0, |m| m.len())),
                file.map_or(0, |f| self.files[f].bytes.len())
            );
        }
        // SAFETY: the harness keeps host requests inside their allocation; everything else the
        // library must check.
        let n = unsafe {
            if write {
                hipFileWrite(fh, base as *const c_void, size, foff, boff)
            } else {
                hipFileRead(fh, base as *mut c_void, size, foff, boff)
            }
        };
        let call = if write { "hipFileWrite" } else { "hipFileRead" };
        if trace() {
            eprintln!(
                "{call}(fh {:#x}, base {base:#x} host {host}, size {size}, foff {foff}, boff {boff}) = {n}; file {file:?} of {} bytes on disk",
                fh as usize,
                file.map_or(0, |f| std::fs::metadata(&self.files[f].path).map_or(0, |m| m.len()))
            );
        }
        check_ssize(call, n, size);
        if self.last_dead {
            assert!(n < 0, "{call} through a dead or forged handle returned {n}");
        }
        if !clean {
            if write && n != 0 && live.is_some() {
                if self.batch_in_flight {
                    // Resynchronised when the batch work drains.
                } else {
                    self.resync();
                }
            }
            return Ok(());
        }
        CHECKED.fetch_add(1, Ordering::Relaxed);
        let f = file.unwrap();
        let foff = foff as usize;
        let at = at.unwrap();
        if write {
            assert_eq!(
                n, size as isize,
                "{call} of {size} bytes at {foff} returned {n}"
            );
            let model = &mut self.files[f].bytes;
            // A zero-size write changes nothing, not even the length.
            if size > 0 {
                if model.len() < foff + size {
                    model.resize(foff + size, 0);
                }
                model[foff..foff + size].copy_from_slice(&data);
            }
        } else {
            let model = &self.files[f].bytes;
            let expect = size.min(model.len().saturating_sub(foff));
            assert_eq!(
                n,
                expect as isize,
                "{call} of {size} bytes at {foff} of a {}-byte file returned {n}",
                model.len()
            );
            let got = if host {
                let (i, _) = buf.unwrap();
                let start = at - self.bufs[i].addr;
                self.bufs[i].host.as_mut().unwrap().bytes()[start..start + expect].to_vec()
            } else {
                sim().download(at, expect).expect("download a read")
            };
            if expect > 0 && got != model[foff..foff + expect] {
                let first = got
                    .iter()
                    .zip(&model[foff..])
                    .position(|(a, b)| a != b)
                    .unwrap();
                panic!(
                    "{call}: byte {} of a read at {foff} differs from the file",
                    first
                );
            }
        }
        Ok(())
    }

    fn set_fault(&mut self, u: &mut Unstructured) -> AResult<()> {
        let (name, values): (&CStr, &[i64]) = *u.choose(&[
            (
                c"fastpath_errno",
                &[
                    0,
                    libc::EIO as i64,
                    libc::ENODEV as i64,
                    libc::EREMOTEIO as i64,
                    libc::EINTR as i64,
                    libc::EAGAIN as i64,
                    libc::EINVAL as i64,
                    libc::ENOSPC as i64,
                ][..],
            ),
            (c"fastpath_hip_error", &[0, 1, 2, 700, 999][..]),
            (c"fail_copy", &[0, 1, 2, 999][..]),
            (c"fail_copy_after", &[0, 1, 2, 5][..]),
            (c"short_transfer", &[0, 1, 512, 4096, 4097, 65536][..]),
            (c"fail_host_alloc", &[0, 1][..]),
            (c"copy_delay_us", &[0, 10, 100][..]),
            (c"no_fastpath", &[0, 1][..]),
        ])?;
        let v = *u.choose(values)?;
        sim().fault(name, v);
        if v != 0 {
            self.faults = true;
        }
        Ok(())
    }

    fn params(&mut self, u: &mut Unstructured) -> AResult<()> {
        let which = u.int_in_range(0..=5)?;
        let p: c_int = match u.int_in_range(0..=3)? {
            0 => u.arbitrary()?,
            _ => u.int_in_range(-1..=13)?,
        };
        let null = u.int_in_range(0..=7)? == 0;
        let e = match which {
            0 => {
                let mut v = 0usize;
                // SAFETY: valid or NULL out-pointer.
                unsafe {
                    hipFileGetParameterSizeT(p, if null { std::ptr::null_mut() } else { &mut v })
                }
            }
            1 => {
                let mut v = false;
                // SAFETY: valid or NULL out-pointer.
                unsafe {
                    hipFileGetParameterBool(p, if null { std::ptr::null_mut() } else { &mut v })
                }
            }
            2 => {
                let len = *u.choose(&[0i32, 1, 2, 8, 64, 4096, -1])?;
                let mut v = vec![0x55 as c_char; len.max(0) as usize + 1];
                let last = v.len() - 1;
                v[last] = 0x77;
                // SAFETY: `len` bytes of room (the extra byte is a canary).
                let e = unsafe {
                    hipFileGetParameterString(
                        p,
                        if null {
                            std::ptr::null_mut()
                        } else {
                            v.as_mut_ptr()
                        },
                        len,
                    )
                };
                assert_eq!(
                    v[last], 0x77,
                    "hipFileGetParameterString wrote past len {len}"
                );
                e
            }
            3 => hipFileSetParameterSizeT(p, size_edge(u)?),
            4 => hipFileSetParameterBool(p, u.arbitrary()?),
            _ => {
                let s: &CStr = u.choose(&[
                    c"",
                    c"ERROR",
                    c"TRACE",
                    c"bogus",
                    c"/tmp",
                    c"/nonexistent/dir",
                ])?;
                let long = CString::new(vec![b'a'; 5000]).unwrap();
                let ptr = match u.int_in_range(0..=5)? {
                    0 => std::ptr::null(),
                    1 => long.as_ptr(),
                    _ => s.as_ptr(),
                };
                // SAFETY: NULL or NUL-terminated.
                unsafe { hipFileSetParameterString(p, ptr) }
            }
        };
        check_err("hipFile{Get,Set}Parameter*", e);
        if which >= 3 && e.err == 0 {
            self.tuned = true;
            assert_eq!(
                hipFileUseCount(),
                0,
                "a parameter was set while the driver was open"
            );
        }
        Ok(())
    }

    fn props(&mut self, u: &mut Unstructured) -> AResult<()> {
        let e = match u.int_in_range(0..=4)? {
            0 => {
                let mut p = hipFileDriverProps_t::default();
                let null = u.arbitrary::<bool>()?;
                // SAFETY: valid or NULL.
                unsafe {
                    hipFileDriverGetProperties(if null { std::ptr::null_mut() } else { &mut p })
                }
            }
            1 => hipFileDriverSetPollMode(u.arbitrary()?, size_edge(u)?),
            2 => hipFileDriverSetMaxDirectIOSize(size_edge(u)?),
            3 => hipFileDriverSetMaxCacheSize(size_edge(u)?),
            _ => hipFileDriverSetMaxPinnedMemSize(size_edge(u)?),
        };
        check_err("hipFileDriver{Get,Set}*", e);
        if e.err == 0 {
            self.tuned = true;
        }
        Ok(())
    }

    fn streams_op(&mut self, u: &mut Unstructured) -> AResult<()> {
        let flags = match u.int_in_range(0..=2)? {
            0 => u.arbitrary()?,
            _ => u.int_in_range(0..=15)?,
        };
        match u.int_in_range(0..=5)? {
            0 if self.streams.len() < 4 => {
                let mut s = std::ptr::null_mut();
                // SAFETY: valid out-pointer.
                if unsafe { (sim().stream_create)(&mut s) } == 0 {
                    self.streams.push((s, false));
                }
            }
            1 | 2 => {
                let (s, idx) = if self.streams.is_empty() || u.int_in_range(0..=3)? == 0 {
                    (
                        std::ptr::without_provenance_mut(*u.choose(&[0usize, 0x1234_5678])?),
                        None,
                    )
                } else {
                    let i = u.choose_index(self.streams.len())?;
                    (self.streams[i].0, Some(i))
                };
                let e = hipFileStreamRegister(s, flags);
                check_err("hipFileStreamRegister", e);
                if let (0, Some(i)) = (e.err, idx) {
                    self.streams[i].1 = true;
                }
            }
            3 => {
                if !self.streams.is_empty() {
                    let i = u.choose_index(self.streams.len())?;
                    let e = hipFileStreamDeregister(self.streams[i].0);
                    check_err("hipFileStreamDeregister", e);
                    self.streams[i].1 = false;
                }
            }
            4 => {
                // Destroy a stream, deregistered first or not (the next stream the simulator
                // creates may get its address, and must not inherit its registration).
                if !self.streams.is_empty() {
                    let i = u.choose_index(self.streams.len())?;
                    let (st, registered) = self.streams.swap_remove(i);
                    if registered && u.arbitrary::<bool>()? {
                        check_err("hipFileStreamDeregister", hipFileStreamDeregister(st));
                    }
                    // SAFETY: our stream; its queued operations were waited for.
                    unsafe { (sim().stream_destroy)(st) };
                }
            }
            _ => {
                // The stream-ordered calls on one of our streams or the NULL stream; a queued
                // operation is waited for before its parameters (locals here) go away, and its
                // result checked.
                let stream = if self.streams.is_empty() || u.arbitrary::<bool>()? {
                    std::ptr::null_mut()
                } else {
                    self.streams[u.choose_index(self.streams.len())?].0
                };
                let (fh, live) = self.pick_handle(u)?;
                let mut size = size_edge(u)?;
                let mut foff: hoff_t = 0;
                let mut boff: hoff_t = 0;
                let mut bytes: libc::ssize_t = 0;
                let nulls = u.arbitrary::<u8>()?;
                let base = self.bufs.first().map_or(0, |b| b.addr);
                let p = |bit: u8, ptr: *mut c_void| {
                    if nulls & bit != 0 {
                        std::ptr::null_mut()
                    } else {
                        ptr
                    }
                };
                let write = !u.arbitrary::<bool>()?;
                // SAFETY: valid or NULL pointers; the stream is one of ours or NULL.
                let e = unsafe {
                    let f = if write {
                        hipFileWriteAsync
                    } else {
                        hipFileReadAsync
                    };
                    f(
                        fh,
                        p(1, base as *mut c_void),
                        p(2, (&mut size as *mut usize).cast()).cast(),
                        p(4, (&mut foff as *mut hoff_t).cast()).cast(),
                        p(8, (&mut boff as *mut hoff_t).cast()).cast(),
                        p(16, (&mut bytes as *mut libc::ssize_t).cast()).cast(),
                        stream,
                    )
                };
                check_err("hipFile{Read,Write}Async", e);
                if e.err == 0 {
                    // SAFETY: the NULL stream or one of ours.
                    assert_eq!(unsafe { (sim().stream_synchronize)(stream) }, 0);
                    // SAFETY: written by the stream's worker, which is done with it now.
                    let n = unsafe { std::ptr::read_volatile(&bytes) };
                    check_ssize("hipFile{Read,Write}Async result", n, size.min(0x7fff_f000));
                    // The write changed a file of the model (the buffer's bytes are not
                    // modelled): read the files back, as after an unchecked synchronous write.
                    if write && live.is_some() && !self.batch_in_flight {
                        self.resync();
                    }
                }
                self.check_use_count();
            }
        }
        Ok(())
    }

    fn batch_setup(&mut self, u: &mut Unstructured) -> AResult<()> {
        if self.batches.iter().filter(|b| b.live).count() >= 4 {
            return Ok(());
        }
        let max_nr = match u.int_in_range(0..=5)? {
            0 => *u.choose(&[0u32, 129, u32::MAX, 1 << 31])?,
            1 => 128,
            _ => u.int_in_range(1..=16)?,
        };
        let mut h: hipFileBatchHandle_t = std::ptr::without_provenance_mut(0x77);
        let null = u.int_in_range(0..=9)? == 0;
        // SAFETY: valid or NULL out-pointer.
        let e = unsafe {
            hipFileBatchIOSetUp(if null { std::ptr::null_mut() } else { &mut h }, max_nr)
        };
        check_err("hipFileBatchIOSetUp", e);
        if e.err == 0 {
            assert!(
                !null && (1..=128).contains(&max_nr),
                "hipFileBatchIOSetUp({max_nr}) succeeded"
            );
            assert!(!h.is_null());
            self.batches.push(Batch {
                h,
                max_nr,
                live: true,
                outstanding: 0,
            });
        } else {
            assert_eq!(h as usize, 0x77, "a failed set-up wrote the handle");
        }
        Ok(())
    }

    fn pick_batch(
        &mut self,
        u: &mut Unstructured,
    ) -> AResult<(hipFileBatchHandle_t, Option<usize>)> {
        Ok(match u.int_in_range(0..=7)? {
            0 => (std::ptr::null_mut(), None),
            1 => (
                std::ptr::without_provenance_mut(*u.choose(&[8usize, usize::MAX, 0xbad0])?),
                None,
            ),
            _ if !self.batches.is_empty() => {
                let i = u.choose_index(self.batches.len())?;
                (self.batches[i].h, self.batches[i].live.then_some(i))
            }
            _ => (std::ptr::null_mut(), None),
        })
    }

    fn batch_submit(&mut self, u: &mut Unstructured) -> AResult<()> {
        let (h, live) = self.pick_batch(u)?;
        let len = u.int_in_range(0..=9)? as usize;
        let max_nr = live.map(|i| self.batches[i].max_nr);
        // An `nr` longer than the array only where the library must refuse before reading:
        // an unknown handle, or more entries than the context can ever hold.
        let nr = match (u.int_in_range(0..=3)?, max_nr) {
            (0, None) => *u.choose(&[len as u32 + 1, 1000, u32::MAX])?,
            (0, Some(m)) if m < u32::MAX => *u.choose(&[m + 1, u32::MAX])?.max(&(len as u32)),
            _ => u.int_in_range(0..=len as u32)?,
        };
        let beyond = nr as usize > len;
        let mut arr = Guarded::new(len * std::mem::size_of::<hipFileIOParams_t>());
        let entries = arr.data.cast::<hipFileIOParams_t>();
        let mut writes = false;
        for k in 0..len {
            let (fh, _) = self.pick_handle(u)?;
            let (base, blen) = if self.bufs.is_empty() || u.int_in_range(0..=7)? == 0 {
                (0usize, 0)
            } else {
                let i = u.choose_index(self.bufs.len())?;
                let b = &self.bufs[i];
                match b.reg {
                    Some((off, rlen)) if u.arbitrary::<bool>()? => (b.addr + off, rlen),
                    _ => (b.addr, self.room_at(b)),
                }
            };
            let host = self
                .bufs
                .iter()
                .any(|b| b.kind == Mem::Host && b.addr <= base && base < b.addr + b.len);
            let mut size = size_edge(u)?;
            let mut boff = match u.int_in_range(0..=3)? {
                0 => *u.choose(&[-1i64, blen as i64, blen as i64 + 1])?,
                _ => u.int_in_range(0..=blen)? as i64,
            };
            if host {
                let b = self
                    .bufs
                    .iter()
                    .find(|b| b.addr <= base && base < b.addr + b.len)
                    .unwrap();
                let avail = b.addr + b.len - base;
                if !(0..=avail as i64).contains(&boff) {
                    boff = 0;
                }
                size = size.min(avail - boff as usize);
            }
            let opcode = match u.int_in_range(0..=7)? {
                0 => u.arbitrary()?,
                1..=3 => hipFileBatchWrite,
                _ => hipFileBatchRead,
            };
            writes |= opcode == hipFileBatchWrite;
            let p = hipFileIOParams_t {
                mode: if u.int_in_range(0..=9)? == 0 {
                    u.arbitrary()?
                } else {
                    hipFileBatch
                },
                u: hipFileIOParamsU {
                    batch: hipFileIOParamsBatch {
                        devPtr_base: base as *mut c_void,
                        file_offset: offset_edge(u, FILE_MAX)?,
                        devPtr_offset: boff,
                        size,
                    },
                },
                fh,
                opcode,
                cookie: std::ptr::without_provenance_mut(k + 1),
            };
            // SAFETY: element k of the guarded array.
            unsafe { entries.add(k).write(p) };
        }
        let null = len == 0 && u.arbitrary::<bool>()?;
        let ptr = if null { std::ptr::null_mut() } else { entries };
        // SAFETY: `ptr` holds `len` entries; `nr > len` only where the library must refuse
        // before reading any.
        let e = unsafe { hipFileBatchIOSubmit(h, nr, ptr, u.arbitrary()?) };
        check_err("hipFileBatchIOSubmit", e);
        if e.err == 0 {
            assert!(
                live.is_some(),
                "submission to a dead or forged batch handle succeeded"
            );
            assert!(
                !beyond,
                "submission of {nr} entries to a context of {max_nr:?} succeeded"
            );
            if nr > 0 {
                self.batch_in_flight = true;
                let b = &mut self.batches[live.unwrap()];
                b.outstanding += nr;
                assert!(
                    b.outstanding <= b.max_nr,
                    "more operations outstanding than max_nr"
                );
            }
        }
        let _ = (writes, &mut arr);
        Ok(())
    }

    fn batch_status(&mut self, u: &mut Unstructured) -> AResult<()> {
        let (h, live) = self.pick_batch(u)?;
        let len = u.int_in_range(0..=9)? as usize;
        let mut cap = match u.int_in_range(0..=3)? {
            0 if live.is_none() => *u.choose(&[len as u32 + 1, u32::MAX])?,
            _ => u.int_in_range(0..=len as u32)?,
        };
        let arr = Guarded::new(len * std::mem::size_of::<hipFileIOEvents_t>());
        let events = arr.data.cast::<hipFileIOEvents_t>();
        let min_nr = match u.int_in_range(0..=3)? {
            0 => cap.saturating_add(1),
            1 => cap,
            _ => u.int_in_range(0..=cap)?,
        };
        let mut ts = match u.int_in_range(0..=5)? {
            0 => libc::timespec {
                tv_sec: -1,
                tv_nsec: 0,
            },
            1 => libc::timespec {
                tv_sec: 0,
                tv_nsec: 1_000_000_000,
            },
            2 => libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            _ => libc::timespec {
                tv_sec: 0,
                tv_nsec: 2_000_000,
            },
        };
        let nulls = u.int_in_range(0..=15)?;
        let wait_forever = nulls == 3 && !self.faults;
        let before = cap;
        // SAFETY: `events` holds `len` events; `cap > len` only with a dead handle.
        let e = unsafe {
            hipFileBatchIOGetStatus(
                h,
                min_nr,
                if nulls == 1 {
                    std::ptr::null_mut()
                } else {
                    &mut cap
                },
                if nulls == 2 {
                    std::ptr::null_mut()
                } else {
                    events
                },
                if wait_forever {
                    std::ptr::null_mut()
                } else {
                    &mut ts
                },
            )
        };
        check_err("hipFileBatchIOGetStatus", e);
        if e.err == 0 {
            assert!(
                live.is_some(),
                "status of a dead or forged batch handle succeeded"
            );
            assert!(
                cap <= before,
                "{cap} events reported into room for {before}"
            );
            let b = &mut self.batches[live.unwrap()];
            assert!(
                cap <= b.outstanding,
                "{cap} events reaped, {} outstanding",
                b.outstanding
            );
            b.outstanding -= cap;
            self.drained();
            for k in 0..cap as usize {
                // SAFETY: the library reported `cap` events.
                let ev = unsafe { events.add(k).read() };
                assert!(
                    [hipFileComplete, hipFileFailed, hipFileCanceled].contains(&ev.status),
                    "event status {}",
                    ev.status
                );
                let c = ev.cookie as usize;
                assert!(
                    (1..=9).contains(&c),
                    "event cookie {c:#x} was never submitted"
                );
                if ev.status == hipFileFailed {
                    let r = ev.ret as isize;
                    assert!(
                        (1..4096).contains(&-r) || (5000..=5039).contains(&-r),
                        "failed event ret {r}"
                    );
                } else if ev.status == hipFileCanceled {
                    assert_eq!(ev.ret, 0, "cancelled event ret");
                } else {
                    assert!(
                        ev.ret <= CLEAN_MAX.max(1 << 24),
                        "complete event ret {}",
                        ev.ret
                    );
                }
            }
        } else {
            assert_eq!(e.err, hipFileInvalidValue, "GetStatus failure code");
        }
        drop(arr);
        Ok(())
    }

    fn batch_cancel_destroy(&mut self, u: &mut Unstructured) -> AResult<()> {
        let (h, live) = self.pick_batch(u)?;
        if u.arbitrary::<bool>()? {
            let e = hipFileBatchIOCancel(h);
            check_err("hipFileBatchIOCancel", e);
            if live.is_none() {
                assert_ne!(
                    e.err, 0,
                    "cancel of a dead or forged batch handle succeeded"
                );
            }
        } else {
            hipFileBatchIODestroy(h);
            if let Some(i) = live {
                self.batches[i].live = false;
                self.batches[i].outstanding = 0;
            }
            self.drained();
        }
        Ok(())
    }

    fn stats(&mut self, u: &mut Unstructured) -> AResult<()> {
        match u.int_in_range(0..=5)? {
            0 => {
                let mut s = hipFileStatsLevel1_t::default();
                let null = u.arbitrary::<bool>()?;
                // SAFETY: valid or NULL.
                let e =
                    unsafe { hipFileGetStatsL1(if null { std::ptr::null_mut() } else { &mut s }) };
                check_err("hipFileGetStatsL1", e);
            }
            1 => {
                let mut s: Box<hipFileStatsLevel2_t> = Box::new(unsafe { std::mem::zeroed() });
                // SAFETY: valid out-pointer (plain-data struct, zeroed is valid).
                let e = unsafe { hipFileGetStatsL2(&mut *s) };
                check_err("hipFileGetStatsL2", e);
            }
            2 => {
                let mut s: Box<hipFileStatsLevel3_t> = Box::new(unsafe { std::mem::zeroed() });
                // SAFETY: valid out-pointer (plain-data struct, zeroed is valid).
                let e = unsafe { hipFileGetStatsL3(&mut *s) };
                check_err("hipFileGetStatsL3", e);
            }
            3 if self.stats_ctx.len() < 2 => {
                let pid = match u.int_in_range(0..=3)? {
                    0 => -1,
                    1 => i32::MAX,
                    _ => std::process::id() as i32,
                };
                let mut ctx = std::ptr::null_mut();
                // SAFETY: valid out-pointer.
                let r = unsafe { hipFileStatsCreateContext(&mut ctx, pid) };
                if r == 0 {
                    assert!(!ctx.is_null());
                    self.stats_ctx.push(ctx);
                }
            }
            4 if !self.stats_ctx.is_empty() => {
                let ctx = self.stats_ctx[u.choose_index(self.stats_ctx.len())?];
                // SAFETY: a live context of ours.
                unsafe {
                    let _ = hipFileStatsConnectToTargetProcess(ctx);
                    let _ = hipFileStatsPollTargetProcess(ctx, false);
                }
                // The report goes to /dev/null or into a pipe whose reader has gone (EPIPE, not a
                // SIGPIPE that would end this process).
                if u.arbitrary::<bool>()? {
                    let null = open_fd(std::path::Path::new("/dev/null"), libc::O_WRONLY);
                    // SAFETY: a live context and our descriptor.
                    unsafe {
                        let _ = hipFileStatsGenerateReport(ctx, null);
                        libc::close(null);
                    }
                } else {
                    let mut p = [0 as c_int; 2];
                    // SAFETY: a two-element array; both ends are ours.
                    unsafe {
                        assert_eq!(libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC), 0);
                        libc::close(p[0]);
                        let r = hipFileStatsGenerateReport(ctx, p[1]);
                        libc::close(p[1]);
                        assert_ne!(r, 0, "a report into a pipe without a reader succeeded");
                    }
                }
            }
            _ => {
                if let Some(ctx) = self.stats_ctx.pop() {
                    // SAFETY: a live context of ours, closed once.
                    unsafe { hipFileStatsCloseContext(ctx) };
                }
            }
        }
        Ok(())
    }

    /// Ends every object the input made, closes the driver to 0 and checks that nothing leaked.
    fn finish(mut self, baseline: &mut Option<(usize, u64)>) {
        for b in &mut self.batches {
            if b.live {
                hipFileBatchIODestroy(b.h);
                b.live = false;
            }
        }
        for h in &mut self.handles {
            if h.live {
                hipFileHandleDeregister(h.fh);
                h.live = false;
            }
        }
        for b in &self.bufs {
            if let Some((off, _)) = b.reg {
                let _ = hipFileBufDeregister((b.addr + off) as *const c_void);
            }
        }
        for (s, _) in &self.streams {
            let _ = hipFileStreamDeregister(*s);
        }
        for ctx in self.stats_ctx.drain(..) {
            // SAFETY: live contexts of ours.
            unsafe { hipFileStatsCloseContext(ctx) };
        }
        for name in FAULTS {
            sim().fault(name, 0);
        }
        let mut closes = 0;
        while hipFileUseCount() > 0 {
            let e = hipFileDriverClose();
            assert_eq!(
                e.err,
                0,
                "hipFileDriverClose with use count {}",
                hipFileUseCount()
            );
            closes += 1;
            assert!(closes < 100_000, "the use count never reaches 0");
        }
        // Parameters staged while closed apply at the next open and are reset by the close
        // after it: one more open and close, so the next input starts from the defaults.
        if self.tuned {
            check_err("hipFileDriverOpen", hipFileDriverOpen());
            check_err("hipFileDriverClose", hipFileDriverClose());
        }
        for f in self.fds.drain(..) {
            if f.fd >= 0 {
                // SAFETY: our descriptor.
                unsafe { libc::close(f.fd) };
            }
        }
        if trace() {
            eprintln!("finish: {} buffers", self.bufs.len());
        }
        for b in self.bufs.drain(..) {
            if b.kind == Mem::Device {
                // SAFETY: our hipMalloc allocation.
                assert_eq!(unsafe { (sim().free)(b.addr as *mut c_void) }, 0, "hipFree");
                if trace() {
                    eprintln!(
                        "hipFree({}), live {}",
                        b.len,
                        sim().counter(c"device_bytes_live")
                    );
                }
            }
        }
        for (s, _) in self.streams.drain(..) {
            // SAFETY: our stream.
            unsafe { (sim().stream_destroy)(s) };
        }
        let s = sim();
        assert_eq!(
            s.counter(c"streams_live"),
            0,
            "simulator streams left after the driver closed"
        );
        assert_eq!(
            s.counter(c"device_bytes_live"),
            0,
            "device memory left after the driver closed"
        );
        let pinned_now = || s.counter(c"pinned_bytes_live") + s.counter(c"registered_bytes_live");
        // A batch thread may still be letting go of the last reference to the closed
        // session's engine (and its pinned buffers) right after the close returned: allow it
        // two seconds, then the bytes count as leaked.
        let mut pinned = pinned_now();
        if let Some((_, p0)) = baseline {
            let t0 = std::time::Instant::now();
            while pinned != *p0 && t0.elapsed() < std::time::Duration::from_secs(2) {
                std::thread::sleep(std::time::Duration::from_millis(1));
                pinned = pinned_now();
            }
            if trace() && t0.elapsed().as_millis() > 0 {
                eprintln!("pinned bytes took {:?} to return", t0.elapsed());
            }
        }
        // Likewise the statistics server thread closes a connection it answered on its own time.
        let mut fds = fd_count();
        if let Some((f0, _)) = baseline {
            let t0 = std::time::Instant::now();
            while fds != *f0 && t0.elapsed() < std::time::Duration::from_secs(2) {
                std::thread::sleep(std::time::Duration::from_millis(1));
                fds = fd_count();
            }
        }
        match baseline {
            None => *baseline = Some((fds, pinned)),
            Some((f0, p0)) => {
                assert_eq!(
                    fds,
                    *f0,
                    "descriptors after the input (before: {f0}): {}",
                    fd_list()
                );
                assert_eq!(pinned, *p0, "pinned bytes after the input (before: {p0})");
            }
        }
    }
}

/// Runs one input: a world of scratch files, then up to 64 calls decoded from `data`.
pub fn run(data: &[u8], mode: Mode) {
    init();
    static BASELINE: std::sync::Mutex<Option<(usize, u64)>> = std::sync::Mutex::new(None);
    let mut b = BASELINE.lock().unwrap_or_else(|e| e.into_inner());
    if b.is_none() {
        warm_up(&mut b);
    }
    let mut u = Unstructured::new(data);
    let Ok(mut w) = World::new(&mut u) else {
        return;
    };
    for _ in 0..64 {
        if u.is_empty() || w.op(&mut u, mode).is_err() {
            break;
        }
    }
    w.finish(&mut b);
}

/// Makes the library create what it keeps for the life of the process (logging, statistics
/// server, runtime), then records the descriptors and pinned bytes that every later input must
/// end with.
fn warm_up(baseline: &mut Option<(usize, u64)>) {
    let mut u = Unstructured::new(&[0; 64]);
    let mut w = World::new(&mut u).expect("warm-up world");
    w.driver_open();
    let fd = open_fd(&w.files[0].path, libc::O_RDWR);
    assert!(fd >= 0);
    let mut d = hipFileDescr_t {
        type_: hipFileHandleTypeOpaqueFD,
        handle: hipFileDescrHandle { fd },
        fs_ops: std::ptr::null(),
    };
    let mut fh = std::ptr::null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { hipFileHandleRegister(&mut fh, &mut d) }.err, 0);
    let mut p = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (sim().malloc)(&mut p, 1 << 20) }, 0);
    let mut host = Guarded::new(1 << 20);
    for (base, size) in [
        (p as usize, 1 << 20),
        (p as usize, 100),
        (host.addr(), 1 << 20),
    ] {
        // SAFETY: buffers of at least `size` bytes.
        unsafe {
            check_ssize(
                "warm-up write",
                hipFileWrite(fh, base as *const c_void, size, 0, 0),
                size,
            );
            check_ssize(
                "warm-up read",
                hipFileRead(fh, base as *mut c_void, size, 0, 0),
                size,
            );
        }
    }
    let _ = host.bytes();
    let mut b = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileBatchIOSetUp(&mut b, 4) }.err, 0);
    hipFileBatchIODestroy(b);
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; closed right away.
    unsafe {
        hipFileStatsCreateContext(&mut ctx, std::process::id() as i32);
        if !ctx.is_null() {
            hipFileStatsCloseContext(ctx);
        }
    }
    hipFileHandleDeregister(fh);
    // SAFETY: our allocation and descriptor.
    unsafe {
        (sim().free)(p);
        libc::close(fd);
    }
    w.finish(baseline);
}
