//! `hipfile check --lib[=PATH]`: examine an installed `libhipfile.so.0` (the one applications
//! load) instead of the copy of the library built into this executable.
//!
//! The library is examined in a child process (this executable, hidden subcommand
//! `probe-lib`), so that its one-time choices (environment, GPU runtime, logging) are its own
//! and not mixed with the built-in copy's. The child loads PATH with `dlopen` as an
//! application would (a bare name such as `libhipfile.so.0` is searched by the dynamic
//! loader: `LD_LIBRARY_PATH`, the `ldconfig` cache, the default directories), reports the file
//! it got and `hipFileGetVersion`, opens the driver, and writes and reads back 4 KiB of host
//! memory through `hipFileWrite`/`hipFileRead` on a temporary file. Which GPU runtime the
//! library chose, and why, the parent reads from the library's own log (`HIPFILE_LOG=info`,
//! `HIPFILE_LOG_FILE` set for the child only): the line `platform NAME: RUNTIME (REASON)`.
//! Device memory is not tested this way (the child holds no GPU runtime of its own).

use std::ffi::{c_int, c_uint, c_void, CStr, CString};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::json::Value;
use crate::output::outln;
use crate::util::{fail, io_text, AlignedBuf, CliError, CliResult, Rng};

/// The name applications are linked against.
pub(crate) const DEFAULT_LIB: &str = "libhipfile.so.0";

/// Bytes moved by the self-test.
const TEST_BYTES: usize = 4096;

/// `hipFileError_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct OpError {
    err: c_int,
    hip_drv_err: c_int,
}

/// `hipFileDescr_t`: type, a union of an fd and a pointer, `fs_ops` (24 bytes).
#[repr(C)]
struct Descr {
    type_: c_int,
    handle: DescrHandle,
    fs_ops: *const c_void,
}

/// The union of `hipFileDescr_t`.
#[repr(C)]
union DescrHandle {
    fd: c_int,
    _ptr: *mut c_void,
}

type DriverFn = unsafe extern "C" fn() -> OpError;
type VersionFn = unsafe extern "C" fn(*mut c_uint, *mut c_uint, *mut c_uint) -> OpError;
type RegisterFn = unsafe extern "C" fn(*mut *mut c_void, *mut Descr) -> OpError;
type DeregisterFn = unsafe extern "C" fn(*mut c_void);
type ReadFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, i64, i64) -> isize;
type WriteFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize, i64, i64) -> isize;
type ErrStrFn = unsafe extern "C" fn(c_int) -> *const libc::c_char;

/// The library's text for a hipFile error code.
fn op_text(errstr: ErrStrFn, code: c_int) -> String {
    // SAFETY: hipFileGetOpErrorString takes any value and returns a static string or null.
    let p = unsafe { errstr(code) };
    if p.is_null() {
        return format!("error {code}");
    }
    // SAFETY: a NUL-terminated static string of the library.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    format!("{s} ({code})")
}

/// The child: examine `path`, print `key<TAB>value` lines; exit 0 when it could be loaded.
pub(crate) fn child(path: &Path) -> ExitCode {
    match examine(path) {
        Ok(lines) => {
            for (k, v) in lines {
                outln!("{k}\t{v}");
            }
            ExitCode::SUCCESS
        }
        Err((key, e)) => {
            outln!("{key}\t{e}");
            ExitCode::FAILURE
        }
    }
}

/// Why `dlopen(path)` failed, from the loader's message `dlerror`, as a line of the probe:
/// `not_found` when the loader found no such library (glibc says "PATH: cannot open shared
/// object file: No such file or directory", naming the library itself and not one of its
/// dependencies), else `error` with the message, whose leading "PATH: " is not repeated.
pub(crate) fn load_failure(path: &Path, dlerror: &str) -> (&'static str, String) {
    let name = path.display().to_string();
    let rest = dlerror
        .strip_prefix(name.as_str())
        .and_then(|r| r.strip_prefix(": "));
    match rest {
        Some("cannot open shared object file: No such file or directory") => {
            ("not_found", not_found_text(path))
        }
        Some(r) => ("error", format!("cannot load {name}: {r}")),
        None => ("error", format!("cannot load {name}: {dlerror}")),
    }
}

/// The message for a library that is not there, and what to do.
pub(crate) fn not_found_text(path: &Path) -> String {
    if path.as_os_str().as_encoded_bytes().contains(&b'/') {
        format!(
            "'{}' not found: no such file; give the path of an installed libhipfile.so.0 \
             (PREFIX/LIBDIR/libhipfile.so.0), or --lib alone for the one the dynamic loader finds",
            path.display()
        )
    } else {
        format!(
            "{} not found: the dynamic loader has none in LD_LIBRARY_PATH, the ldconfig cache \
             or the system's library folders. Install it (scripts/install.sh PREFIX) and let the \
             loader find it (LD_LIBRARY_PATH=PREFIX/LIBDIR, or PREFIX/LIBDIR in \
             /etc/ld.so.conf.d/ then ldconfig), or name the file: --lib=PATH",
            path.display()
        )
    }
}

fn examine(path: &Path) -> Result<Vec<(&'static str, String)>, (&'static str, String)> {
    let mut out = Vec::new();
    // SAFETY: loading a library runs its initialisers; this is the library the user asked us
    // to examine, as every application that links it would load it.
    let lib = unsafe {
        libloading::os::unix::Library::open(Some(path), libc::RTLD_NOW | libc::RTLD_LOCAL)
    }
    .map_err(|e| load_failure(path, &e.to_string()))?;
    macro_rules! sym {
        ($name:literal, $ty:ty) => {
            // SAFETY: the symbol is the hipFile C function of that name, whose prototype in
            // hipfile.h is the function type given here.
            *unsafe { lib.get::<$ty>(concat!($name, "\0").as_bytes()) }
                .map_err(|e| ("error", format!("{} has no {}: {e}", path.display(), $name)))?
        };
    }
    let open: DriverFn = sym!("hipFileDriverOpen", DriverFn);
    let close: DriverFn = sym!("hipFileDriverClose", DriverFn);
    let version: VersionFn = sym!("hipFileGetVersion", VersionFn);
    let register: RegisterFn = sym!("hipFileHandleRegister", RegisterFn);
    let deregister: DeregisterFn = sym!("hipFileHandleDeregister", DeregisterFn);
    let read: ReadFn = sym!("hipFileRead", ReadFn);
    let write: WriteFn = sym!("hipFileWrite", WriteFn);
    let errstr: ErrStrFn = sym!("hipFileGetOpErrorString", ErrStrFn);

    // The file the dynamic loader found.
    if let Some(p) = crate::util::loaded_from(open as *const c_void) {
        out.push((
            "file",
            std::fs::canonicalize(&p).unwrap_or(p).display().to_string(),
        ));
    }
    let (mut ma, mut mi, mut pa) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    let v = unsafe { version(&mut ma, &mut mi, &mut pa) };
    out.push((
        "version",
        if v.err == 0 {
            format!("{ma}.{mi}.{pa}")
        } else {
            format!("unknown: {}", op_text(errstr, v.err))
        },
    ));

    // SAFETY: no arguments.
    let o = unsafe { open() };
    if o.err != 0 {
        out.push((
            "self_test",
            format!("failed: hipFileDriverOpen: {}", op_text(errstr, o.err)),
        ));
        return Ok(out);
    }
    let test = self_test(register, deregister, read, write, errstr);
    out.push((
        "self_test",
        match test {
            Ok(()) => "passed".to_string(),
            Err(e) => format!("failed: {e}"),
        },
    ));
    // SAFETY: no arguments; balances the open above.
    unsafe { close() };
    Ok(out)
}

fn self_test(
    register: RegisterFn,
    deregister: DeregisterFn,
    read: ReadFn,
    write: WriteFn,
    errstr: ErrStrFn,
) -> Result<(), String> {
    let dir = std::env::temp_dir();
    // Owner-only and without a name: see crate::temp.
    let file = crate::temp::anonymous(&dir, 0).map_err(|e| {
        format!(
            "cannot create a temporary file in '{}': {}",
            dir.display(),
            io_text(&e)
        )
    })?;
    let mut descr = Descr {
        type_: 1, // hipFileHandleTypeOpaqueFD
        handle: DescrHandle {
            fd: file.as_raw_fd(),
        },
        fs_ops: std::ptr::null(),
    };
    let mut fh: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointer and descriptor; the fd stays open until after deregistration.
    let r = unsafe { register(&mut fh, &mut descr) };
    if r.err != 0 {
        return Err(format!("hipFileHandleRegister: {}", op_text(errstr, r.err)));
    }
    let mut wrote = AlignedBuf::new(TEST_BYTES).map_err(|e| e.0)?;
    Rng::new(0xc4ec).fill_nonzero(wrote.as_mut_slice());
    let mut back = AlignedBuf::new(TEST_BYTES).map_err(|e| e.0)?;
    let ssize_text = |n: isize| {
        if n == -1 {
            io_text(&std::io::Error::last_os_error())
        } else {
            op_text(errstr, (-n) as c_int)
        }
    };
    // SAFETY: `fh` is registered; both buffers hold TEST_BYTES bytes of host memory.
    let w = unsafe { write(fh, wrote.as_slice().as_ptr().cast(), TEST_BYTES, 0, 0) };
    let result = if w != TEST_BYTES as isize {
        Err(if w < 0 {
            format!("hipFileWrite from host memory: {}", ssize_text(w))
        } else {
            format!("hipFileWrite from host memory wrote {w} of {TEST_BYTES} bytes")
        })
    } else {
        // SAFETY: as above.
        let n = unsafe {
            read(
                fh,
                back.as_mut_slice().as_mut_ptr().cast(),
                TEST_BYTES,
                0,
                0,
            )
        };
        if n != TEST_BYTES as isize {
            Err(if n < 0 {
                format!("hipFileRead into host memory: {}", ssize_text(n))
            } else {
                format!("hipFileRead into host memory read {n} of {TEST_BYTES} bytes")
            })
        } else if back.as_slice() != wrote.as_slice() {
            Err("the bytes read back differ from those written".to_string())
        } else {
            Ok(())
        }
    };
    // SAFETY: registered above, deregistered once.
    unsafe { deregister(fh) };
    result
}

/// What the parent learnt about the library.
pub(crate) struct Report {
    /// What `--lib` named.
    pub asked: String,
    /// The file loaded, when the loader said.
    pub file: Option<String>,
    /// `hipFileGetVersion`.
    pub version: Option<String>,
    /// The library's platform line: (`amd`/`nvidia`/`host`, the rest of the line).
    pub platform: Option<(String, String)>,
    /// "passed" or "failed: ...".
    pub self_test: Option<String>,
    /// Warnings the library logged.
    pub warnings: Vec<String>,
    /// Why it could not be loaded or used at all.
    pub error: Option<String>,
    /// The library is not there: why, and what to do.
    pub not_found: Option<String>,
}

/// Take the log line `... platform NAME: REST` apart.
pub(crate) fn platform_line(log: &str) -> Option<(String, String)> {
    log.lines().find_map(|l| {
        let at = l.find(" platform ")?;
        let rest = &l[at + " platform ".len()..];
        let (name, desc) = rest.split_once(": ")?;
        matches!(name, "amd" | "nvidia" | "host").then(|| (name.to_string(), desc.to_string()))
    })
}

/// Examine `lib` in a child process.
pub(crate) fn probe(lib: &Path) -> CliResult<Report> {
    let mut r = Report {
        asked: lib.display().to_string(),
        file: None,
        version: None,
        platform: None,
        self_test: None,
        warnings: Vec::new(),
        error: None,
        not_found: None,
    };
    // A path (not a name for the loader to search) that leads nowhere.
    if lib.as_os_str().as_encoded_bytes().contains(&b'/')
        && std::fs::metadata(lib).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    {
        r.not_found = Some(not_found_text(lib));
        return Ok(r);
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError(format!("--lib: cannot locate this executable: {e}")))?;
    // The library appends its log to HIPFILE_LOG_FILE: a file in a folder of our own (0700),
    // where nobody else can put a link or a file first.
    let dir = std::env::temp_dir();
    let private = crate::temp::PrivateDir::new(&dir, "hipfile-check-lib-").map_err(|e| {
        CliError(format!(
            "--lib: cannot create a temporary folder in '{}': {}",
            dir.display(),
            io_text(&e)
        ))
    })?;
    let log = private.path().join("library.log");
    let out = Command::new(exe)
        .arg("probe-lib")
        .arg(lib)
        .env("HIPFILE_LOG", "info")
        .env("HIPFILE_LOG_FILE", &log)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| CliError(format!("--lib: cannot start the probe: {}", io_text(&e))))?;
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    drop(private);
    r.platform = platform_line(&log_text);
    r.warnings = log_text
        .lines()
        .filter_map(|l| l.split_once(" WARN ").map(|(_, w)| w.trim().to_string()))
        .collect();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        match line.split_once('\t') {
            Some(("file", v)) => r.file = Some(v.to_string()),
            Some(("version", v)) => r.version = Some(v.to_string()),
            Some(("self_test", v)) => r.self_test = Some(v.to_string()),
            Some(("error", v)) => r.error = Some(v.to_string()),
            Some(("not_found", v)) => r.not_found = Some(v.to_string()),
            _ => {}
        }
    }
    if r.error.is_none() && r.not_found.is_none() && !out.status.success() {
        r.error = Some(format!(
            "the probe of {} ended with {}",
            lib.display(),
            out.status
        ));
    }
    Ok(r)
}

impl Report {
    /// The one-line reason the library fails the check, if it does.
    pub(crate) fn failure(&self, allow_host_only: bool) -> Option<String> {
        let name = self.file.as_deref().unwrap_or(&self.asked);
        if let Some(e) = &self.error {
            return Some(e.clone());
        }
        if let Some(t) = self
            .self_test
            .as_deref()
            .and_then(|t| t.strip_prefix("failed: "))
        {
            return Some(format!("{name} cannot do I/O: {t}"));
        }
        match &self.platform {
            None => Some(format!(
                "{name} did not say which GPU runtime it uses (no 'platform' line in its log): not this project's library?"
            )),
            Some((p, desc)) if p == "host" && !allow_host_only => Some(format!(
                "{name} found no usable GPU runtime and runs host-only ({desc}); --allow-host-only accepts that"
            )),
            _ => None,
        }
    }

    /// The text report.
    pub(crate) fn print(&self, failure: Option<&str>) {
        // Standard error says why (once).
        if self.error.is_some() {
            outln!(
                "Library examined: none (--lib={} could not be loaded)",
                self.asked
            );
            outln!("Result: this library cannot be used on this machine");
            return;
        }
        outln!(
            "Library examined: {} (--lib={})",
            self.file.as_deref().unwrap_or("unknown"),
            self.asked
        );
        outln!(
            "  API version:       {}",
            self.version.as_deref().unwrap_or("unknown")
        );
        match &self.platform {
            Some((p, desc)) => {
                outln!("  platform:          {p}");
                outln!("  runtime (reason):  {desc}");
                if let Some(sim) = crate::util::sim_lib() {
                    outln!(
                        "  chosen because:    --sim chose the simulated GPU runtime {} (the tool set HIPFILE_PLATFORM=amd and HIPFILE_HIP_LIBRARY for the library)",
                        sim.display()
                    );
                }
            }
            None => outln!("  platform:          unknown"),
        }
        outln!(
            "  self-test:         {} ({TEST_BYTES} bytes of host memory through hipFileWrite/hipFileRead)",
            self.self_test.as_deref().unwrap_or("not run")
        );
        for w in &self.warnings {
            outln!("  library warning:   {w}");
        }
        match failure {
            None => outln!("Result: this library can do I/O on this machine"),
            Some(_) => outln!("Result: this library CANNOT do GPU I/O on this machine"),
        }
    }

    /// The JSON object.
    pub(crate) fn json(&self, failure: Option<&str>) -> Value {
        Value::obj()
            .with(
                "library",
                Value::obj()
                    .with("examined", "installed")
                    .with("asked", self.asked.clone())
                    .with("found", self.not_found.is_none())
                    .with("file", self.file.clone())
                    .with("version", self.version.clone()),
            )
            .with("platform", self.platform.as_ref().map(|p| p.0.clone()))
            .with("runtime", self.platform.as_ref().map(|p| p.1.clone()))
            .with("self_test", self.self_test.clone())
            .with("warnings", self.warnings.clone())
            .with("ok", failure.is_none())
            .with("failure", failure.map(str::to_string))
            .with(
                "exit_status",
                match (&self.not_found, failure) {
                    (Some(_), _) => u32::from(crate::check::NOT_EXAMINED),
                    (None, Some(_)) => 1,
                    (None, None) => 0,
                },
            )
    }
}

/// `--lib=PATH` as given, or the default name.
pub(crate) fn lib_path(arg: &Option<PathBuf>) -> PathBuf {
    arg.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_LIB))
}

/// Refuse a `--lib` value with a NUL byte early (dlopen takes a C string).
pub(crate) fn validate(p: &Path) -> CliResult<()> {
    if CString::new(p.as_os_str().as_bytes()).is_err() {
        return fail("--lib: the path contains a NUL byte");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_platform_line_is_found_in_the_log() {
        let log = "2026-12-01T11:00:00.1Z  INFO platform amd: HIP 7.2.0 from /x/libhipsim.so (simulated GPU runtime), 1 device(s) (HIPFILE_PLATFORM=amd)\n\
                   2026-12-01T11:00:00.2Z  WARN running on the SIMULATED GPU runtime\n";
        assert_eq!(
            platform_line(log),
            Some((
                "amd".to_string(),
                "HIP 7.2.0 from /x/libhipsim.so (simulated GPU runtime), 1 device(s) (HIPFILE_PLATFORM=amd)"
                    .to_string()
            ))
        );
        assert_eq!(platform_line("INFO platform x: y\n"), None);
        assert_eq!(platform_line(""), None);
    }
}
