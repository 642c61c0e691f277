//! Shared support for the integration tests, which drive the library through its exported C
//! functions against the simulated GPU runtime (`libhipsim.so`).
//!
//! The driver and the environment are process-wide, so every test that needs a fresh driver
//! or its own environment runs in a child process: [`child_test!`] re-executes the test binary
//! for exactly that test with the given environment, and the body runs only in the child.
//! This works the same under `cargo test` (threads) and `cargo nextest` (processes).
#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub use hipfile::ffi::*;

pub mod async_ops;
pub mod cc;
pub mod cprog;
pub mod cuda;
pub mod programs;
pub mod stats_ctx;
pub mod strategies;
pub mod sync_io;

#[allow(unused_imports)] // each test binary uses some of them
pub use programs::{hipfile_tool, ok, program, stderr, stdout, text, without_settings};

/// Directory of the test executable (`target/<profile>/deps`), where cargo also puts the
/// `libhipsim.so` and `libhipfile.so` built for the tests.
pub fn deps_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Path of the simulated runtime.
pub fn hipsim_path() -> PathBuf {
    let p = deps_dir().join("libhipsim.so");
    assert!(
        p.exists(),
        "{} is missing: hipsim is a dev-dependency and should be built with the tests",
        p.display()
    );
    p
}

/// Path of our shared library as built for the tests.
pub fn libhipfile_path() -> PathBuf {
    let p = deps_dir().join("libhipfile.so");
    assert!(p.exists(), "{} is missing", p.display());
    p
}

/// A scratch directory for this test binary (inside `target/`, on the repository's file system).
pub fn scratch_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hipfile-tests");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `CARGO_TARGET_TMPDIR/<name>`, created: a test's own directory for what it builds.
pub fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).expect("create the output directory");
    dir
}

/// The batch opcode of a write or a read.
pub fn batch_opcode(write: bool) -> c_int {
    if write {
        hipFileBatchWrite
    } else {
        hipFileBatchRead
    }
}

/// One batch entry (`hipFileBatch` mode): `size` bytes between file offset `file_offset` and
/// `base + buffer_offset`, read or written as `opcode` says, with `cookie`.
pub fn batch_params(
    fh: hipFileHandle_t,
    opcode: c_int,
    base: *mut c_void,
    file_offset: i64,
    buffer_offset: i64,
    size: usize,
    cookie: usize,
) -> hipFileIOParams_t {
    hipFileIOParams_t {
        mode: hipFileBatch,
        u: hipFileIOParamsU {
            batch: hipFileIOParamsBatch {
                devPtr_base: base,
                file_offset,
                devPtr_offset: buffer_offset,
                size,
            },
        },
        fh,
        opcode,
        cookie: std::ptr::without_provenance_mut(cookie),
    }
}

/// [`out_dir`] emptied first: what an earlier run of the test left there is gone.
pub fn fresh_out_dir(name: &str) -> PathBuf {
    let _ = std::fs::remove_dir_all(Path::new(env!("CARGO_TARGET_TMPDIR")).join(name));
    out_dir(name)
}

/// A unique scratch file path.
pub fn scratch_file(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    scratch_dir().join(format!("{tag}-{}-{n}", std::process::id()))
}

/// `hipFileSuccess` as a whole `hipFileError_t`.
pub const OK: hipFileError_t = hipFileError_t::SUCCESS;

/// The repository root.
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The text of the repository's file `rel` (`"docs/configuration.md"`).
pub fn repo_file(rel: &str) -> String {
    std::fs::read_to_string(repo_root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Set the calling thread's `errno` (to see whether a call sets or leaves it).
pub fn set_errno(v: c_int) {
    // SAFETY: the calling thread's errno slot is always valid.
    unsafe { *libc::__errno_location() = v };
}

/// A scratch file with known contents, open with `flags`; closed and removed on drop.
pub struct TempFile {
    pub path: PathBuf,
    pub fd: c_int,
}

impl TempFile {
    pub fn new(tag: &str, contents: &[u8], flags: c_int) -> TempFile {
        Self::at(scratch_file(tag), contents, flags)
    }

    pub fn at(path: PathBuf, contents: &[u8], flags: c_int) -> TempFile {
        make_file(&path, contents);
        let fd = open_fd(&path, flags);
        TempFile { path, fd }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // SAFETY: our own descriptor (the library never closes a client descriptor).
        unsafe { libc::close(self.fd) };
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A registered scratch file, deregistered, closed and removed on drop.
pub struct TestFile {
    pub path: PathBuf,
    pub fd: c_int,
    pub fh: hipFileHandle_t,
}

// SAFETY: a file handle is an opaque token the library accepts from any thread.
unsafe impl Send for TestFile {}
// SAFETY: as above; the struct has no interior mutability.
unsafe impl Sync for TestFile {}

impl TestFile {
    pub fn new_at(path: PathBuf, contents: &[u8], flags: c_int) -> TestFile {
        make_file(&path, contents);
        let fd = open_fd(&path, flags);
        let fh = register_fd(fd);
        TestFile { path, fd, fh }
    }

    pub fn with_flags(tag: &str, contents: &[u8], flags: c_int) -> TestFile {
        Self::new_at(scratch_file(tag), contents, flags)
    }

    pub fn rw(tag: &str, contents: &[u8]) -> TestFile {
        Self::with_flags(tag, contents, libc::O_RDWR)
    }

    pub fn contents(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }
}

impl Drop for TestFile {
    fn drop(&mut self) {
        hipFileHandleDeregister(self.fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(self.fd) };
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `statx(fd, STATX_DIOALIGN)`: `(stx_dio_mem_align, stx_dio_offset_align)`, zeros when the
/// kernel does not report them.
pub fn dio_alignment(fd: c_int) -> (u32, u32) {
    // SAFETY: statx is plain old data; all-zero is a valid value.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: an empty path with AT_EMPTY_PATH names `fd`; `stx` is a valid out-pointer.
    let rc = unsafe {
        libc::statx(
            fd,
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    assert_eq!(rc, 0, "statx: {}", std::io::Error::last_os_error());
    (stx.stx_dio_mem_align, stx.stx_dio_offset_align)
}

/// The `hipFileError_t` of operation error `err` (no runtime error).
pub fn code(err: hipFileOpError_t) -> hipFileError_t {
    hipFileError_t::op(err)
}

/// `hipFileUseCount()`: the driver's open count.
pub fn use_count() -> i64 {
    hipFileUseCount()
}

/// `hipFileBatchIOSetUp(&h, max_nr)`, which must succeed with a handle.
pub fn batch_setup(max_nr: c_uint) -> hipFileBatchHandle_t {
    let mut h: hipFileBatchHandle_t = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileBatchIOSetUp(&mut h, max_nr) }, OK);
    assert!(!h.is_null());
    h
}

/// `hipFileBufRegister(p, len, 0)`.
pub fn buf_register(p: *const c_void, len: usize) -> hipFileError_t {
    hipFileBufRegister(p, len, 0)
}

/// `hipFileBufDeregister(p)`.
pub fn buf_deregister(p: *const c_void) -> hipFileError_t {
    hipFileBufDeregister(p)
}

/// `hipFileDriverOpen`, which must succeed.
pub fn open_driver() {
    assert_eq!(hipFileDriverOpen(), OK);
}

/// Whether this process is a test child.
pub fn in_child() -> bool {
    std::env::var_os("HIPFILE_TEST_CHILD").is_some()
}

/// Run test `name` (as given by `module_path!()` + function name) in a child process with
/// `env` added to a clean hipfile environment pointing at hipsim. Panics if the child fails.
pub fn run_in_child(module_path: &str, name: &str, env: &[(&str, &str)]) {
    let path_in_binary = match module_path.split_once("::") {
        Some((_, rest)) => format!("{rest}::{name}"),
        None => name.to_string(),
    };
    let out = child_command(&path_in_binary, env)
        .output()
        .expect("spawn the test child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child test {path_in_binary} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

/// The command that runs test `name` of this binary (its path in the binary) in a child
/// process: no hipfile or hipsim setting of this process, the library pointed at hipsim,
/// warnings logged, and `env` added.
pub fn child_command(name: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        name,
        "--exact",
        "--nocapture",
        "--test-threads=1",
        "--include-ignored",
    ]);
    without_settings(&mut cmd);
    cmd.env("HIPFILE_TEST_CHILD", "1")
        .env("HIPFILE_HIP_LIBRARY", hipsim_path())
        .env("HIPFILE_CUDA_LIBRARY", hipsim_path())
        .env("HIPFILE_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// A test whose body runs in its own process with the given environment:
/// `child_test!(name, [("HIPFILE_X", "y")], { body });`
#[macro_export]
macro_rules! child_test {
    ($name:ident, [$(($k:expr, $v:expr)),* $(,)?], $body:block) => {
        #[test]
        fn $name() {
            if !$crate::common::in_child() {
                $crate::common::run_in_child(module_path!(), stringify!($name), &[$(($k, $v)),*]);
                return;
            }
            $body
        }
    };
    ($name:ident, $body:block) => {
        $crate::child_test!($name, [], $body);
    };
}

/// hipError_t / CUresult.
pub type HipError = c_int;

/// `hipPointerAttribute_t`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct HipPointerAttribute {
    pub memory_type: c_int,
    pub device: c_int,
    pub device_pointer: usize,
    pub host_pointer: usize,
    pub is_managed: c_int,
    pub allocation_flags: c_uint,
}

/// The simulated runtime, opened at the same path as the library opens it (so both see the
/// same state): HIP calls for setting up memory, plus hipsim's counters and faults.
pub struct Sim {
    _lib: libloading::Library,
    pub malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    pub free: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub malloc_managed: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    pub host_malloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    pub host_free: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError,
    pub memset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> HipError,
    pub set_device: unsafe extern "C" fn(c_int) -> HipError,
    pub get_device: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub stream_create: unsafe extern "C" fn(*mut *mut c_void) -> HipError,
    pub stream_destroy: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub stream_synchronize: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub stream_query: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub stream_wait_value32:
        unsafe extern "C" fn(*mut c_void, *mut c_void, u32, c_uint, u32) -> HipError,
    pub launch_host_func: unsafe extern "C" fn(
        *mut c_void,
        unsafe extern "C" fn(*mut c_void),
        *mut c_void,
    ) -> HipError,
    pub pointer_get_attributes:
        unsafe extern "C" fn(*mut HipPointerAttribute, *const c_void) -> HipError,
    counter: unsafe extern "C" fn(*const c_char) -> u64,
    reset: unsafe extern "C" fn(),
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

/// The simulated runtime of this process.
pub fn sim() -> &'static Sim {
    static SIM: OnceLock<Sim> = OnceLock::new();
    SIM.get_or_init(|| {
        // SAFETY: loading our own simulator library.
        let lib = unsafe { libloading::Library::new(hipsim_path()) }.expect("load hipsim");
        Sim {
            malloc: load!(lib, "hipMalloc"),
            free: load!(lib, "hipFree"),
            malloc_managed: load!(lib, "hipMallocManaged"),
            host_malloc: load!(lib, "hipHostMalloc"),
            host_free: load!(lib, "hipHostFree"),
            memcpy: load!(lib, "hipMemcpy"),
            memset: load!(lib, "hipMemset"),
            set_device: load!(lib, "hipSetDevice"),
            get_device: load!(lib, "hipGetDevice"),
            stream_create: load!(lib, "hipStreamCreate"),
            stream_destroy: load!(lib, "hipStreamDestroy"),
            stream_synchronize: load!(lib, "hipStreamSynchronize"),
            stream_query: load!(lib, "hipStreamQuery"),
            stream_wait_value32: load!(lib, "hipStreamWaitValue32"),
            launch_host_func: load!(lib, "hipLaunchHostFunc"),
            pointer_get_attributes: load!(lib, "hipPointerGetAttributes"),
            counter: load!(lib, "hipsimCounter"),
            reset: load!(lib, "hipsimResetCounters"),
            set_fault: load!(lib, "hipsimSetFault"),
            _lib: lib,
        }
    })
}

pub const H2D: c_int = 1;
pub const D2H: c_int = 2;

impl Sim {
    /// A named counter.
    pub fn counter(&self, name: &str) -> u64 {
        let c = CString::new(name).unwrap();
        // SAFETY: valid NUL-terminated name.
        unsafe { (self.counter)(c.as_ptr()) }
    }
    /// Reset all counters.
    pub fn reset_counters(&self) {
        // SAFETY: no arguments.
        unsafe { (self.reset)() }
    }
    /// Set a fault (0 clears it).
    pub fn fault(&self, name: &str, value: i64) {
        let c = CString::new(name).unwrap();
        // SAFETY: valid NUL-terminated name.
        assert_eq!(
            unsafe { (self.set_fault)(c.as_ptr(), value) },
            0,
            "unknown hipsim fault {name}"
        );
    }
    /// Allocate device memory.
    pub fn device_alloc(&self, len: usize) -> DeviceBuf {
        let mut p = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (self.malloc)(&mut p, len) }, 0, "hipMalloc({len})");
        DeviceBuf { ptr: p, len }
    }
    /// Copy host bytes into device memory.
    pub fn upload(&self, dst: *mut c_void, src: &[u8]) {
        // SAFETY: valid host slice; hipsim validates the device side.
        assert_eq!(
            unsafe { (self.memcpy)(dst, src.as_ptr().cast(), src.len(), H2D) },
            0
        );
    }
    /// Copy device bytes out.
    pub fn download(&self, src: *const c_void, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        // SAFETY: valid host slice; hipsim validates the device side.
        assert_eq!(
            unsafe { (self.memcpy)(v.as_mut_ptr().cast(), src, len, D2H) },
            0
        );
        v
    }
}

/// A device allocation, freed on drop.
pub struct DeviceBuf {
    pub ptr: *mut c_void,
    pub len: usize,
}

impl DeviceBuf {
    pub fn at(&self, off: usize) -> *mut c_void {
        (self.ptr as usize + off) as *mut c_void
    }
}

impl Drop for DeviceBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by hipMalloc.
        unsafe { (sim().free)(self.ptr) };
    }
}

/// Deterministic pseudo-random bytes.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
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

/// The functions `libhipfile.so.0` exports, as `tests/exported-symbols.txt` lists them.
pub fn expected_exports() -> Vec<&'static str> {
    include_str!("../exported-symbols.txt")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The value of `#define NAME <value>` in `include/hipfile.h`, which must define it exactly once.
pub fn header_define(name: &str) -> u32 {
    let header = std::fs::read_to_string(repo_root().join("include/hipfile.h"))
        .expect("read include/hipfile.h");
    let values: Vec<&str> = header
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next(), words.next()) {
                (Some("#define"), Some(n), Some(value), None) if n == name => Some(value),
                _ => None,
            }
        })
        .collect();
    assert_eq!(
        values.len(),
        1,
        "expected one `#define {name} <n>` in hipfile.h, found {values:?}"
    );
    values[0]
        .parse()
        .unwrap_or_else(|e| panic!("#define {name} {}: not a number: {e}", values[0]))
}

/// 64-bit FNV-1a, as the C examples print it.
pub fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Create a file with `contents`.
pub fn make_file(path: &Path, contents: &[u8]) {
    std::fs::write(path, contents).unwrap();
}

/// Open a file with raw `open(2)` flags; returns the descriptor.
pub fn open_fd(path: &Path, flags: c_int) -> c_int {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid path; mode given for O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o644) };
    assert!(
        fd >= 0,
        "open {} failed: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
    fd
}

/// Register `fd` and return its handle (asserting success).
pub fn register_fd(fd: c_int) -> hipFileHandle_t {
    let mut fh: hipFileHandle_t = std::ptr::null_mut();
    let mut d = descr(fd);
    // SAFETY: valid pointers.
    let r = unsafe { hipFileHandleRegister(&mut fh, &mut d) };
    assert_eq!(r, hipFileError_t::SUCCESS, "register fd {fd}");
    assert!(!fh.is_null());
    fh
}

/// A descriptor struct for `fd`.
pub fn descr(fd: c_int) -> hipFileDescr_t {
    hipFileDescr_t {
        type_: hipFileHandleTypeOpaqueFD,
        handle: hipFileDescrHandle { fd },
        fs_ops: std::ptr::null(),
    }
}

/// The descriptor numbers open in this process.
pub fn open_fds() -> std::collections::BTreeSet<c_int> {
    // Collect the names first: the directory's own descriptor is closed once read.
    let names: Vec<c_int> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    // SAFETY: F_GETFD takes no pointer; a closed descriptor answers -1.
    let open = |fd: c_int| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
    names.into_iter().filter(|&fd| open(fd)).collect()
}

/// `errno` of this thread.
pub fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Whether `O_DIRECT` opens work in the scratch directory.
pub fn odirect_works() -> bool {
    let p = scratch_file("odirect-probe");
    std::fs::write(&p, [0u8; 4096]).unwrap();
    let c = CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECT) };
    let ok = fd >= 0;
    if ok {
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
    let _ = std::fs::remove_file(&p);
    if !ok {
        // The tests that need O_DIRECT skip (or check less).
        skipped(&format!(
            "O_DIRECT does not work in {}: the fastpath checks that need it",
            scratch_dir().display()
        ));
    }
    ok
}

/// A check that did not run because this machine lacks what it needs (`reason` names both):
/// printed, and recorded once in `CARGO_TARGET_TMPDIR/skipped.txt`, which `.ci/run` prints at
/// the end (a child test's output is dropped when it passes; a skip nobody sees is a check
/// nobody knows is missing).
pub fn skipped(reason: &str) {
    use std::io::Write;
    println!("SKIP: {reason}");
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped.txt");
    let known = std::fs::read_to_string(&path).unwrap_or_default();
    if known.lines().any(|l| l == reason) {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "{reason}");
    }
}
