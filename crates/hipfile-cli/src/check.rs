//! `hipfile check [--json] [PATH...]`: what AMD's `ais-check` and NVIDIA's `gdscheck` tell,
//! for this library.
//!
//! - the GPU runtime the library chose, why, what the loader tried, its version, device count,
//!   and whether its GPU-direct entry points exist (AMD `hipAmdFileRead/Write`; on NVIDIA the
//!   runtime's description carries cuFile's GDS status); the SIMULATED runtime is said loudly;
//! - on NVIDIA, whether NVIDIA's cuFile would work here and which `libcufile.so.0` is loaded
//!   (NVIDIA's or hipfile's own): [`crate::cufile_check`];
//! - the kernel: `CONFIG_PCI_P2PDMA` (y, m, not set, unknown), on AMD whether amdgpu has the
//!   AIS entry point (`kfd_ais_rw_file` in `/proc/kallsyms`), `RLIMIT_MEMLOCK`, io_uring;
//! - each block-backed mount (source under `/dev/`), or each PATH given: mount point, file
//!   system, ext4 data mode, whether `O_DIRECT` works, the direct-I/O alignment from `statx`,
//!   and whether the GPU-direct fastpath could serve it, with the reason when not: the
//!   library's own refusal (`hipfile::api::fastpath_refusal`) for a file there (for a
//!   directory, the `O_DIRECT` probe file created in it);
//! - the configuration: every `HIPFILE_*` variable set (and `HIPSIM_*` on the simulator), and
//!   the configuration the driver resolves from them;
//! - a self-test: a temporary file of its own in `$TMPDIR` (or `/tmp`; owner-only, unlinked
//!   as soon as it is open: [`crate::temp`]) is registered, and 4 KiB are written and read
//!   back through the library from host memory and, when a GPU runtime is in use, from device
//!   memory, and compared.
//!
//! The library examined is the copy built into this executable (it says so, with the
//! executable's path); `--lib[=PATH]` examines an installed `libhipfile.so.0` instead (see
//! [`crate::libprobe`]).
//!
//! Exit status: 0 when the library can do GPU I/O on this machine (a GPU runtime is usable and
//! the self-test passes); 1 with a one-line reason on standard error when it cannot: no GPU
//! runtime (host-only; `--allow-host-only` accepts it), a failed self-test, an installed
//! library that cannot be loaded; 2 when something named could not be examined, which is no
//! verdict about the machine: a PATH (missing, unreadable; one line each on standard error,
//! and the report's result names it) or the library `--lib` names (not found: said once, with
//! what to do). `fastpath_capable` in the listing says whether each PATH could take the
//! GPU-direct path; that does not change the exit status. A mount of the automatic listing
//! that cannot be examined is shown with its error and does not change it either.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hipfile::api::{
    self, ConfigSnapshot, DeviceMemory, DriverGuard, EnvVar, Mount, Platform, Refusal,
    RegisteredFile, RuntimeReport,
};

use crate::json::Value;
use crate::output::{errln, outln};
use crate::util::{errno_text, fmt_bytes, io_text, lib_text, AlignedBuf, CliError, CliResult, Rng};
use crate::CheckArgs;

/// Bytes moved by each self-test.
const SELF_TEST_BYTES: usize = 4096;

/// The configuration as a JSON object (also used by `bench`).
pub(crate) fn config_json(c: &ConfigSnapshot) -> Value {
    Value::obj()
        .with("io_threads", c.io_threads)
        .with("request_parallelism", c.request_parallelism)
        .with("chunk_size", c.chunk_size)
        .with("bounce_budget", c.bounce_budget)
        .with("inline_threshold", c.inline_threshold)
        .with("async_buffer_size", c.async_buffer_size)
        .with("allow_compat", c.allow_compat)
        .with("force_compat", c.force_compat)
        .with("unsupported_fs", c.unsupported_fs)
        .with("host_io", c.host_io)
        .with("sync_writes", c.sync_writes)
        .with("direct_io", c.direct_io)
        .with("stats_level", c.stats_level)
}

/// Exit status of `check` when something it was asked to examine could not be (a PATH, the
/// library `--lib` names was not found), as for a command-line error; 1 is the verdict that
/// the library cannot do I/O on this machine.
pub(crate) const NOT_EXAMINED: u8 = 2;

/// Run `hipfile check`: on `paths` when any are given, else on every block-backed mount.
pub(crate) fn run_paths(args: &CheckArgs, paths: &[PathBuf]) -> CliResult<ExitCode> {
    if let Some(lib) = &args.lib {
        return run_installed(args, &crate::libprobe::lib_path(lib));
    }
    let rt = &api::runtime_report();
    let config = api::config();

    let kernel = Kernel::examine(rt.platform);
    let volumes = if paths.is_empty() {
        match api::mount_table() {
            Ok(table) => table
                .iter()
                .filter(|m| m.source().starts_with("/dev/"))
                .map(|m| Volume::of_mount(m, rt))
                .collect(),
            Err(e) => vec![Volume::failed(
                "/proc/self/mountinfo",
                format!("cannot read the mount table: {}", errno_text(e)),
            )],
        }
    } else {
        let table = api::mount_table().unwrap_or_default();
        paths
            .iter()
            .map(|p| Volume::of_path(p, &table, rt))
            .collect()
    };
    let env = api::environment(rt.simulated);
    let test = SelfTest::run(rt, &config);
    let reason = crate::util::chosen_because(rt);
    // A PATH that cannot be examined (missing, unreadable) is an error about that PATH, said
    // once on standard error, never a verdict about the machine. (A mount of the automatic
    // listing that cannot be examined is shown with its error in the listing.)
    let unexamined: Vec<&Volume> = if paths.is_empty() {
        Vec::new()
    } else {
        volumes.iter().filter(|v| v.error.is_some()).collect()
    };
    let failure = test.failure().or_else(|| {
        (rt.platform == Platform::Host && !args.allow_host_only).then(|| {
            format!(
                "no usable GPU runtime: the library would run host-only ({}); --allow-host-only accepts that",
                rt.reason
            )
        })
    });
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "this executable".to_string());
    let cufile = (rt.platform == Platform::Nvidia).then(crate::cufile_check::CufileReport::examine);

    for v in &unexamined {
        if let Some(e) = &v.error {
            errln!("hipfile: cannot examine {}: {e}", quote(&v.path));
        }
    }
    let unexamined_names: Vec<String> = unexamined.iter().map(|v| v.path.clone()).collect();
    let status = match (&failure, unexamined.is_empty()) {
        (Some(_), _) => 1,
        (None, false) => NOT_EXAMINED,
        (None, true) => 0,
    };
    if args.json {
        let v = Value::obj()
            .with(
                "library",
                Value::obj()
                    .with("examined", "built-in")
                    .with("executable", exe.clone())
                    .with("crate_version", env!("CARGO_PKG_VERSION")),
            )
            .with("platform", rt.platform.name())
            .with("runtime", rt.description.as_str())
            .with("simulated", rt.simulated)
            .with("reason", reason.as_str())
            .with("attempts", rt.attempts.clone())
            .with("device_count", rt.device_count)
            .with("runtime_version", rt.version)
            .with("gpu_direct_entry_points", rt.gpu_direct)
            .with("cufile", cufile.as_ref().map(|c| c.json()))
            .with("kernel", kernel.json())
            .with(
                "volumes",
                Value::Arr(volumes.iter().map(Volume::json).collect()),
            )
            .with(
                "environment",
                Value::Arr(env.iter().map(env_json).collect()),
            )
            .with("config", config_json(&config))
            .with("self_test", test.json())
            .with("ok", failure.is_none())
            .with("failure", failure.clone())
            .with("unexamined_paths", unexamined_names.clone())
            .with("exit_status", u32::from(status));
        outln!("{}", v.to_json());
    } else {
        outln!(
            "Library examined: the copy built into this executable ({exe}, hipfile {}); \
             applications load libhipfile.so.0 instead: `hipfile check --lib` examines that one",
            env!("CARGO_PKG_VERSION")
        );
        outln!();
        print_runtime(rt, &reason);
        if let Some(c) = &cufile {
            c.print();
        }
        kernel.print();
        print_volumes(&volumes, !paths.is_empty());
        print_config(&env, &config);
        test.print();
        outln!(
            "{}",
            result_line(&test, failure.as_deref(), rt, &unexamined_names)
        );
    }
    match failure {
        Some(f) => Err(CliError(f)),
        None => Ok(ExitCode::from(status)),
    }
}

/// `Result: ...`, the verdict at the end of the text report: whether the library can do I/O
/// on this machine, then the PATHs that could not be examined, by name (standard error said
/// why).
fn result_line(
    test: &SelfTest,
    failure: Option<&str>,
    rt: &RuntimeReport,
    unexamined: &[String],
) -> String {
    let host_only = rt.platform == Platform::Host;
    let verdict = match failure {
        None if rt.simulated => {
            "the library can do I/O on this machine (device memory: the SIMULATED GPU runtime)"
        }
        None if host_only => {
            "the library can do I/O on this machine, host memory only (host-only accepted)"
        }
        None => "the library can do I/O on this machine",
        Some(_)
            if host_only && test.setup.is_none() && !matches!(test.host, Outcome::Failed(_)) =>
        {
            "the library CANNOT do GPU I/O on this machine (host-only)"
        }
        Some(_) => "the library CANNOT do I/O on this machine",
    };
    let paths = match unexamined {
        [] => String::new(),
        [one] => format!("; 1 PATH could not be examined: {}", quote(one)),
        many => format!(
            "; {} PATHs could not be examined: {}",
            many.len(),
            many.iter().map(|p| quote(p)).collect::<Vec<_>>().join(", ")
        ),
    };
    format!("Result: {verdict}{paths}")
}

/// `check --lib[=PATH]`: the installed library, examined in a child process. A library that
/// is not there is not a verdict about the machine: it is said once, with what to do, and the
/// status is [`NOT_EXAMINED`].
fn run_installed(args: &CheckArgs, lib: &Path) -> CliResult<ExitCode> {
    crate::libprobe::validate(lib)?;
    let report = crate::libprobe::probe(lib)?;
    if let Some(why) = &report.not_found {
        if args.json {
            outln!("{}", report.json(Some(why)).to_json());
        }
        errln!("hipfile: {why}");
        return Ok(ExitCode::from(NOT_EXAMINED));
    }
    let failure = report.failure(args.allow_host_only);
    if args.json {
        outln!("{}", report.json(failure.as_deref()).to_json());
    } else {
        report.print(failure.as_deref());
    }
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(f) => Err(CliError(f)),
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn quote(p: &str) -> String {
    format!("'{p}'")
}

const SIM_BANNER: &str =
    "*** SIMULATED GPU runtime (hipsim): test and demo use only, no real GPU is involved ***";

fn print_runtime(rt: &RuntimeReport, reason: &str) {
    outln!("GPU runtime");
    if rt.simulated {
        outln!("  {SIM_BANNER}");
    }
    outln!("  platform:          {}", rt.platform.name());
    outln!("  runtime:           {}", rt.description);
    outln!("  simulated:         {}", yes_no(rt.simulated));
    outln!("  chosen because:    {reason}");
    if rt.attempts.is_empty() {
        outln!("  loader attempts:   none needed");
    } else {
        outln!("  loader attempts:");
        for a in &rt.attempts {
            outln!("    - {a}");
        }
    }
    outln!("  devices:           {}", rt.device_count);
    outln!("  runtime version:   {}", rt.version);
    outln!(
        "  GPU-direct I/O entry points: {}",
        if rt.gpu_direct { "present" } else { "absent" }
    );
}

// ---------------------------------------------------------------------------------------------
// Kernel

/// `CONFIG_PCI_P2PDMA` as the kernel configuration says.
#[derive(Clone, Debug, PartialEq, Eq)]
enum P2pdma {
    Yes,
    Module,
    NotSet,
    Unknown,
}

impl P2pdma {
    fn name(&self) -> &'static str {
        match self {
            P2pdma::Yes => "y",
            P2pdma::Module => "m",
            P2pdma::NotSet => "not set",
            P2pdma::Unknown => "unknown",
        }
    }
}

/// Scan a kernel configuration text: the option's line decides; no line means not set (the
/// option's dependencies are not met).
fn scan_p2pdma(config: &str) -> P2pdma {
    for line in config.lines() {
        let line = line.trim();
        match line {
            "CONFIG_PCI_P2PDMA=y" => return P2pdma::Yes,
            "CONFIG_PCI_P2PDMA=m" => return P2pdma::Module,
            "# CONFIG_PCI_P2PDMA is not set" => return P2pdma::NotSet,
            _ => {}
        }
    }
    P2pdma::NotSet
}

/// `/proc/config.gz` through `gzip -dc` (no decompressor is linked into the tool).
fn read_gzip(path: &str) -> Option<String> {
    let out = std::process::Command::new("gzip")
        .args(["-dc", path])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

struct Kernel {
    release: Option<String>,
    p2pdma: P2pdma,
    p2pdma_source: Option<String>,
    /// On AMD only: amdgpu exports the AIS entry point (`Some(None)`: cannot tell).
    amdgpu_ais: Option<Option<bool>>,
    memlock: (Option<u64>, Option<u64>),
    io_uring: IoUring,
}

impl Kernel {
    fn examine(platform: Platform) -> Kernel {
        let release = kernel_release();
        let mut p2pdma = P2pdma::Unknown;
        let mut p2pdma_source = None;
        let mut candidates = Vec::new();
        if let Some(r) = &release {
            candidates.push(format!("/boot/config-{r}"));
            candidates.push(format!("/lib/modules/{r}/build/.config"));
        }
        candidates.push("/proc/config.gz".to_string());
        for c in candidates {
            let text = if c.ends_with(".gz") {
                read_gzip(&c)
            } else {
                std::fs::read_to_string(&c).ok()
            };
            if let Some(t) = text {
                p2pdma = scan_p2pdma(&t);
                p2pdma_source = Some(c);
                break;
            }
        }
        let amdgpu_ais = (platform == Platform::Amd).then(|| {
            let mut f = File::open("/proc/kallsyms").ok()?;
            let mut s = String::new();
            f.read_to_string(&mut s).ok()?;
            Some(s.lines().any(|l| {
                l.split_whitespace()
                    .nth(2)
                    .is_some_and(|n| n == "kfd_ais_rw_file")
            }))
        });
        Kernel {
            release,
            p2pdma,
            p2pdma_source,
            amdgpu_ais,
            memlock: memlock(),
            io_uring: IoUring::probe(),
        }
    }

    fn json(&self) -> Value {
        let lim = |l: Option<u64>| match l {
            Some(n) => Value::from(n),
            None => Value::from("unlimited"),
        };
        let mut v = Value::obj()
            .with("release", self.release.clone())
            .with("pci_p2pdma", self.p2pdma.name())
            .with("pci_p2pdma_source", self.p2pdma_source.clone());
        if let Some(ais) = self.amdgpu_ais {
            v = v.with("amdgpu_ais", ais);
        }
        v.with(
            "memlock",
            Value::obj()
                .with("soft", lim(self.memlock.0))
                .with("hard", lim(self.memlock.1)),
        )
        .with(
            "io_uring",
            Value::obj()
                .with("works", self.io_uring.works())
                .with("status", self.io_uring.text()),
        )
    }

    fn print(&self) {
        let lim = |l: Option<u64>| l.map_or("unlimited".to_string(), fmt_bytes);
        outln!();
        outln!("Kernel");
        outln!(
            "  release:           {}",
            self.release.as_deref().unwrap_or("unknown")
        );
        match &self.p2pdma_source {
            Some(src) => outln!(
                "  CONFIG_PCI_P2PDMA: {} (from {src})",
                self.p2pdma.name()
            ),
            None => outln!(
                "  CONFIG_PCI_P2PDMA: unknown (no kernel configuration found in /boot, /lib/modules or /proc/config.gz)"
            ),
        }
        if let Some(ais) = self.amdgpu_ais {
            outln!(
                "  amdgpu AIS entry point (kfd_ais_rw_file): {}",
                match ais {
                    Some(b) => yes_no(b),
                    None => "unknown (cannot read /proc/kallsyms)",
                }
            );
        }
        outln!(
            "  RLIMIT_MEMLOCK:    soft {}, hard {}",
            lim(self.memlock.0),
            lim(self.memlock.1)
        );
        outln!("  io_uring:          {}", self.io_uring.text());
    }
}

fn kernel_release() -> Option<String> {
    Some(
        rustix::system::uname()
            .release()
            .to_string_lossy()
            .into_owned(),
    )
}

/// `RLIMIT_MEMLOCK` (soft, hard) in bytes; `None` is unlimited.
fn memlock() -> (Option<u64>, Option<u64>) {
    let r = rustix::process::getrlimit(rustix::process::Resource::Memlock);
    (r.current, r.maximum)
}

/// Whether `io_uring_setup` works.
enum IoUring {
    Works,
    Failed(i32, Option<String>),
}

impl IoUring {
    fn probe() -> IoUring {
        // No flags, no features requested; the ring is closed at once.
        let mut params = rustix::io_uring::io_uring_params::default();
        // SAFETY: without IORING_SETUP_ATTACH_WQ, `wq_fd` is not read.
        match unsafe { rustix::io_uring::io_uring_setup(4, &mut params) } {
            Ok(_ring) => IoUring::Works,
            Err(e) => {
                let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                    .ok()
                    .map(|s| s.trim().to_string());
                IoUring::Failed(e.raw_os_error(), disabled)
            }
        }
    }

    fn works(&self) -> bool {
        matches!(self, IoUring::Works)
    }

    fn text(&self) -> String {
        match self {
            IoUring::Works => "works".to_string(),
            IoUring::Failed(e, _) if *e == libc::ENOSYS => {
                "not available (ENOSYS: the kernel has no io_uring)".to_string()
            }
            IoUring::Failed(e, disabled) if *e == libc::EPERM => format!(
                "not permitted (EPERM{})",
                disabled
                    .as_deref()
                    .map(|d| format!(": kernel.io_uring_disabled = {d}"))
                    .unwrap_or_default()
            ),
            IoUring::Failed(e, _) => format!("fails ({})", errno_text(*e)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Volumes

/// What an `O_DIRECT` open did.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ODirect {
    Works,
    Fails(i32),
    NotWritable,
    NotApplicable,
}

impl ODirect {
    fn text(&self) -> String {
        match self {
            ODirect::Works => "works".to_string(),
            ODirect::Fails(e) => format!("fails ({})", errno_text(*e)),
            ODirect::NotWritable => "unknown (not writable)".to_string(),
            ODirect::NotApplicable => "not applicable".to_string(),
        }
    }

    fn works(&self) -> Option<bool> {
        match self {
            ODirect::Works => Some(true),
            ODirect::Fails(_) => Some(false),
            ODirect::NotWritable | ODirect::NotApplicable => None,
        }
    }
}

/// What the PATH (or mount point) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Directory,
    Regular,
    BlockDevice,
    Other,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Directory => "directory",
            Kind::Regular => "regular file",
            Kind::BlockDevice => "block device",
            Kind::Other => "other (not a directory, regular file or block device)",
        }
    }
}

/// One examined mount or PATH.
struct Volume {
    path: String,
    kind: Option<Kind>,
    mount: Option<Mount>,
    o_direct: ODirect,
    /// `statx` `(stx_dio_mem_align, stx_dio_offset_align)` when the kernel reports them.
    dio: Option<(u32, u32)>,
    /// Why the fastpath could not serve it; empty: it could.
    not_fastpath: Vec<String>,
    error: Option<String>,
}

/// Open `p` with `flags` (read-only unless they say otherwise), close-on-exec; the errno on
/// failure.
fn open_flags(p: &Path, flags: i32) -> Result<File, i32> {
    OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(p)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/// `statx(fd, STATX_DIOALIGN)`: `None` when the kernel does not report it for this file.
fn dio_align(fd: impl AsFd) -> Option<(u32, u32)> {
    use rustix::fs::{statx, AtFlags, StatxFlags};
    let stx = statx(fd, c"", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN).ok()?;
    (stx.stx_mask & StatxFlags::DIOALIGN.bits() != 0)
        .then_some((stx.stx_dio_mem_align, stx.stx_dio_offset_align))
}

fn not_writable(e: i32) -> bool {
    matches!(e, libc::EACCES | libc::EPERM | libc::EROFS)
}

/// What an `O_DIRECT` probe found, and the file it opened (for the library to inspect), if any.
type Probe = (ODirect, Option<(u32, u32)>, Option<File>);

/// Try `O_DIRECT` in a directory: a file of the tool's own there, without a name (see
/// [`crate::temp::anonymous`]), kept open for the library to inspect.
fn odirect_in_dir(dir: &Path) -> Probe {
    let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
    match crate::temp::anonymous(dir, libc::O_DIRECT).map_err(errno) {
        Ok(f) => (ODirect::Works, dio_align(&f), Some(f)),
        Err(e) if not_writable(e) => (ODirect::NotWritable, None, None),
        // Tell "no O_DIRECT here" from "cannot create files here".
        Err(e) => match crate::temp::anonymous(dir, 0).map_err(errno) {
            Ok(f) => (ODirect::Fails(e), dio_align(&f), Some(f)),
            Err(e2) if not_writable(e2) => (ODirect::NotWritable, None, None),
            Err(_) => (ODirect::Fails(e), None, None),
        },
    }
}

/// Try `O_DIRECT` on a regular file or block device (read-only).
fn odirect_on_file(p: &Path) -> Probe {
    match open_flags(p, libc::O_DIRECT) {
        Ok(f) => (ODirect::Works, dio_align(&f), Some(f)),
        Err(e) => {
            let f = open_flags(p, 0).ok();
            let dio = f.as_ref().and_then(dio_align);
            (ODirect::Fails(e), dio, f)
        }
    }
}

fn dev_numbers(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// The mount holding `path` (device `maj:min`): among the entries of that device, the one
/// whose mount point is the longest prefix of the path; else the first of that device.
fn mount_of<'a>(table: &'a [Mount], path: &Path, maj: u32, min: u32) -> Option<&'a Mount> {
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let of_device = || table.iter().filter(|m| m.device() == (maj, min));
    of_device()
        .filter(|m| canon.starts_with(m.mount_point()))
        .max_by_key(|m| m.mount_point().len())
        .or_else(|| of_device().next())
}

impl Volume {
    fn failed(path: &str, error: String) -> Volume {
        Volume {
            path: path.to_string(),
            kind: None,
            mount: None,
            o_direct: ODirect::NotApplicable,
            dio: None,
            not_fastpath: vec!["it could not be examined".to_string()],
            error: Some(error),
        }
    }

    fn examine(p: &Path, mount: Option<Mount>, rt: &RuntimeReport) -> Volume {
        let path = p.display().to_string();
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => return Volume::failed(&path, io_text(&e)),
        };
        let ft = meta.file_type();
        let kind = if ft.is_dir() {
            Kind::Directory
        } else if ft.is_file() {
            Kind::Regular
        } else if ft.is_block_device() {
            Kind::BlockDevice
        } else {
            Kind::Other
        };
        let (o_direct, dio, probe) = match kind {
            Kind::Directory => odirect_in_dir(p),
            Kind::Regular | Kind::BlockDevice => odirect_on_file(p),
            Kind::Other => (ODirect::NotApplicable, None, None),
        };
        let mut v = Volume {
            path,
            kind: Some(kind),
            mount: if kind == Kind::BlockDevice {
                None
            } else {
                mount
            },
            o_direct,
            dio,
            not_fastpath: Vec::new(),
            error: None,
        };
        let refusal = probe.map(|f| api::fastpath_refusal(f.as_raw_fd()));
        v.not_fastpath = v.fastpath_refusals(refusal, rt);
        v
    }

    fn of_mount(m: &Mount, rt: &RuntimeReport) -> Volume {
        Volume::examine(Path::new(m.mount_point()), Some(m.clone()), rt)
    }

    fn of_path(p: &Path, table: &[Mount], rt: &RuntimeReport) -> Volume {
        let mount = std::fs::metadata(p).ok().and_then(|meta| {
            let (maj, min) = dev_numbers(meta.dev());
            mount_of(table, p, maj, min).cloned()
        });
        Volume::examine(p, mount, rt)
    }

    /// Why the fastpath could not serve this volume: the library's refusal for the file the
    /// probe opened (`refusal`; `None`: no file could be opened), in words with what this
    /// examination knows about it.
    fn fastpath_refusals(
        &self,
        refusal: Option<hipfile::Result<Option<Refusal>>>,
        rt: &RuntimeReport,
    ) -> Vec<String> {
        if self.kind == Some(Kind::Other) {
            return vec!["not a directory, regular file or block device".to_string()];
        }
        let why = match refusal {
            Some(Ok(None)) => return Vec::new(),
            Some(Ok(Some(r))) => self.refusal_text(r, rt),
            Some(Err(e)) => format!("the library cannot inspect it ({})", lib_text(&e)),
            None => match &self.o_direct {
                ODirect::NotWritable => {
                    "O_DIRECT could not be tried (the directory is not writable)".to_string()
                }
                ODirect::Fails(e) => format!("the O_DIRECT open failed ({})", errno_text(*e)),
                _ => "it could not be opened".to_string(),
            },
        };
        vec![why]
    }

    /// A refusal of the library in words, with the detail this examination found.
    fn refusal_text(&self, r: Refusal, rt: &RuntimeReport) -> String {
        match r {
            Refusal::NoFastpathEntryPoints if rt.platform == Platform::Host => {
                "no GPU runtime (host-only)".to_string()
            }
            Refusal::CompatForced => format!("{} (HIPFILE_FORCE_COMPAT_MODE)", r.describe()),
            Refusal::NoODirect if self.o_direct == ODirect::Works => {
                format!("{} (statx reports no direct-I/O alignment)", r.describe())
            }
            Refusal::FileSystem => {
                let what = match &self.mount {
                    Some(m) => match m.option("data").filter(|_| m.fstype() == "ext4") {
                        Some(d) => format!("it is ext4 with data={d}"),
                        None => format!("it is {}", m.fstype()),
                    },
                    None => "its mount is not in the mount table".to_string(),
                };
                format!("{} ({what})", r.describe())
            }
            _ => r.describe().to_string(),
        }
    }

    fn fstype(&self) -> Option<String> {
        match self.kind {
            Some(Kind::BlockDevice) => Some("block device".to_string()),
            _ => self.mount.as_ref().map(|m| m.fstype().to_string()),
        }
    }

    /// The ext4 data mode (`ordered` when no `data=` option is given).
    fn ext4_data_mode(&self) -> Option<String> {
        let m = self.mount.as_ref().filter(|m| m.fstype() == "ext4")?;
        Some(m.option("data").unwrap_or("ordered").to_string())
    }

    fn json(&self) -> Value {
        let m = self.mount.as_ref();
        Value::obj()
            .with("path", self.path.as_str())
            .with("type", self.kind.map(Kind::name))
            .with("mount_point", m.map(|m| m.mount_point().to_string()))
            .with("source", m.map(|m| m.source().to_string()))
            .with("fstype", self.fstype())
            .with("ext4_data_mode", self.ext4_data_mode())
            .with("o_direct", self.o_direct.text())
            .with("o_direct_works", self.o_direct.works())
            .with("dio_mem_align", self.dio.map(|d| d.0))
            .with("dio_offset_align", self.dio.map(|d| d.1))
            .with(
                "fastpath_capable",
                self.error.is_none() && self.not_fastpath.is_empty(),
            )
            .with("fastpath_reasons", self.not_fastpath.clone())
            .with("error", self.error.clone())
    }

    fn print(&self) {
        outln!("  {}", self.path);
        if let Some(e) = &self.error {
            outln!("      error:            {e}");
            return;
        }
        if let Some(k) = self
            .kind
            .filter(|&k| k != Kind::Directory || self.mount.is_none())
        {
            outln!("      type:             {}", k.name());
        }
        if let Some(m) = &self.mount {
            if m.mount_point() != self.path {
                outln!("      mount point:      {}", m.mount_point());
            }
            outln!("      file system:      {} on {}", m.fstype(), m.source());
        } else if self.kind != Some(Kind::BlockDevice) {
            outln!("      file system:      unknown (not in the mount table)");
        }
        if let Some(d) = self.ext4_data_mode() {
            let default = self.mount.as_ref().and_then(|m| m.option("data")).is_none();
            outln!(
                "      ext4 data mode:   {d}{}",
                if default { " (default)" } else { "" }
            );
        }
        outln!("      O_DIRECT:         {}", self.o_direct.text());
        match self.dio {
            Some((mem, off)) => {
                outln!("      DIO alignment:    memory {mem} B, offset {off} B (statx)")
            }
            None => outln!("      DIO alignment:    not reported (the library assumes 4096 B)"),
        }
        if self.not_fastpath.is_empty() {
            outln!("      fastpath capable: yes");
        } else {
            outln!(
                "      fastpath capable: no: {}",
                self.not_fastpath.join("; ")
            );
        }
    }
}

fn print_volumes(volumes: &[Volume], given: bool) {
    outln!();
    if given {
        outln!("Paths");
    } else {
        outln!("Block-backed mounts");
    }
    if volumes.is_empty() {
        outln!("  none (no mount in /proc/self/mountinfo has a /dev/ source)");
    }
    // A PATH that could not be examined was said on standard error (and is named in the
    // result); a mount of the automatic listing is shown with its error.
    let shown: Vec<&Volume> = volumes
        .iter()
        .filter(|v| !given || v.error.is_none())
        .collect();
    if given && shown.is_empty() {
        outln!("  none could be examined");
    }
    for v in shown {
        v.print();
    }
}

// ---------------------------------------------------------------------------------------------
// Configuration

fn env_json(v: &EnvVar) -> Value {
    Value::obj()
        .with("name", v.name.as_str())
        .with("value", v.value.as_str())
        .with("note", v.note)
}

fn print_config(env: &[EnvVar], config: &ConfigSnapshot) {
    outln!();
    outln!("Configuration");
    if env.is_empty() {
        outln!("  environment:        no HIPFILE_* variable set (defaults apply)");
    } else {
        outln!("  environment:");
        for v in env {
            match v.note {
                Some(n) => outln!("    {}={}   ({n})", v.name, v.value),
                None => outln!("    {}={}", v.name, v.value),
            }
        }
    }
    outln!("  engine threads:     {}", config.io_threads);
    outln!("  threads per request: {}", config.request_parallelism);
    outln!(
        "  chunk size:         {}",
        fmt_bytes(config.chunk_size as u64)
    );
    outln!(
        "  bounce budget:      {}",
        fmt_bytes(config.bounce_budget as u64)
    );
    outln!(
        "  inline threshold:   {}",
        fmt_bytes(config.inline_threshold as u64)
    );
    outln!(
        "  async buffer size:  {}",
        fmt_bytes(config.async_buffer_size as u64)
    );
    outln!(
        "  compat mode:        allowed {}, forced {}",
        yes_no(config.allow_compat),
        yes_no(config.force_compat)
    );
    outln!("  unsupported fs:     {}", yes_no(config.unsupported_fs));
    outln!("  host memory I/O:    {}", yes_no(config.host_io));
    outln!("  durable writes:     {}", yes_no(config.sync_writes));
    outln!("  O_DIRECT reads/writes: {}", yes_no(config.direct_io));
    outln!("  stats level:        {}", config.stats_level);
}

// ---------------------------------------------------------------------------------------------
// Self-test

/// The result of one self-test.
enum Outcome {
    Passed,
    Skipped(String),
    Failed(String),
}

impl Outcome {
    fn json(&self) -> Value {
        let (status, detail) = match self {
            Outcome::Passed => ("passed", None),
            Outcome::Skipped(s) => ("skipped", Some(s.clone())),
            Outcome::Failed(s) => ("failed", Some(s.clone())),
        };
        Value::obj().with("status", status).with("detail", detail)
    }

    fn text(&self) -> String {
        match self {
            Outcome::Passed => {
                format!("passed ({SELF_TEST_BYTES} bytes written, read back, identical)")
            }
            Outcome::Skipped(s) => format!("skipped: {s}"),
            Outcome::Failed(s) => format!("FAILED: {s}"),
        }
    }
}

/// 4 KiB through the library, from host memory and from device memory.
struct SelfTest {
    dir: PathBuf,
    /// The temporary file could not be created or registered.
    setup: Option<String>,
    host: Outcome,
    device: Outcome,
}

/// The self-test's file: in `dir`, owner-only, without a name (nothing to remove, even after
/// a crash; see [`crate::temp::anonymous`]).
fn temp_file(dir: &Path) -> Result<File, String> {
    crate::temp::anonymous(dir, 0).map_err(|e| {
        format!(
            "cannot create a temporary file in {}: {}",
            quote(&dir.display().to_string()),
            io_text(&e)
        )
    })
}

fn compare(what: &str, wrote: &[u8], read: &[u8]) -> Outcome {
    match wrote.iter().zip(read).position(|(a, b)| a != b) {
        None => Outcome::Passed,
        Some(i) => Outcome::Failed(format!(
            "{what}: the data read back differs from the data written at byte {i}"
        )),
    }
}

fn host_test(file: &RegisteredFile) -> Outcome {
    let run = || -> Result<Outcome, String> {
        let mut out = AlignedBuf::new(SELF_TEST_BYTES).map_err(|e| e.0)?;
        let mut back = AlignedBuf::new(SELF_TEST_BYTES).map_err(|e| e.0)?;
        Rng::new(0x4849_5046).fill_nonzero(out.as_mut_slice());
        let n = file
            .write_host(out.as_slice(), 0)
            .map_err(|e| format!("hipFileWrite from host memory: {}", lib_text(&e)))?;
        if n != SELF_TEST_BYTES {
            return Err(format!(
                "hipFileWrite from host memory wrote {n} of {SELF_TEST_BYTES} bytes"
            ));
        }
        let n = file
            .read_host(back.as_mut_slice(), 0)
            .map_err(|e| format!("hipFileRead into host memory: {}", lib_text(&e)))?;
        if n != SELF_TEST_BYTES {
            return Err(format!(
                "hipFileRead into host memory read {n} of {SELF_TEST_BYTES} bytes"
            ));
        }
        Ok(compare("host memory", out.as_slice(), back.as_slice()))
    };
    run().unwrap_or_else(Outcome::Failed)
}

fn device_test(file: &RegisteredFile) -> Outcome {
    let run = || -> Result<Outcome, String> {
        let alloc = || {
            DeviceMemory::alloc(SELF_TEST_BYTES).map_err(|e| {
                format!(
                    "cannot allocate {SELF_TEST_BYTES} bytes of device memory: {}",
                    lib_text(&e)
                )
            })
        };
        let (a, b) = (alloc()?, alloc()?);
        let mut data = vec![0u8; SELF_TEST_BYTES];
        Rng::new(0x4750_5544).fill_nonzero(&mut data);
        a.upload(0, &data)
            .map_err(|e| format!("copy to device memory: {}", lib_text(&e)))?;
        let off = SELF_TEST_BYTES as u64;
        let n = file
            .write_device(&a, SELF_TEST_BYTES, off, 0)
            .map_err(|e| format!("hipFileWrite from device memory: {}", lib_text(&e)))?;
        if n != SELF_TEST_BYTES {
            return Err(format!(
                "hipFileWrite from device memory wrote {n} of {SELF_TEST_BYTES} bytes"
            ));
        }
        let n = file
            .read_device(&b, SELF_TEST_BYTES, off, 0)
            .map_err(|e| format!("hipFileRead into device memory: {}", lib_text(&e)))?;
        if n != SELF_TEST_BYTES {
            return Err(format!(
                "hipFileRead into device memory read {n} of {SELF_TEST_BYTES} bytes"
            ));
        }
        let mut back = vec![0u8; SELF_TEST_BYTES];
        b.download(0, &mut back)
            .map_err(|e| format!("copy from device memory: {}", lib_text(&e)))?;
        Ok(compare("device memory", &data, &back))
    };
    run().unwrap_or_else(Outcome::Failed)
}

impl SelfTest {
    fn run(rt: &RuntimeReport, config: &ConfigSnapshot) -> SelfTest {
        let dir = std::env::temp_dir();
        let skipped = |s: &str| Outcome::Skipped(s.to_string());
        let file = match temp_file(&dir) {
            Ok(f) => f,
            Err(e) => {
                return SelfTest {
                    dir,
                    setup: Some(e),
                    host: skipped("no temporary file"),
                    device: skipped("no temporary file"),
                }
            }
        };
        let _driver = DriverGuard::open();
        let reg = match RegisteredFile::register(&file) {
            Ok(r) => r,
            Err(e) => {
                return SelfTest {
                    setup: Some(format!(
                        "cannot register a temporary file in {} with hipfile: {}",
                        quote(&dir.display().to_string()),
                        lib_text(&e)
                    )),
                    dir,
                    host: skipped("the file could not be registered"),
                    device: skipped("the file could not be registered"),
                }
            }
        };
        let host = if config.host_io {
            host_test(&reg)
        } else {
            skipped("host memory I/O is disabled (HIPFILE_HOST=false)")
        };
        let device = if rt.platform == Platform::Host {
            skipped("no GPU runtime (host-only)")
        } else {
            device_test(&reg)
        };
        drop(reg);
        SelfTest {
            dir,
            setup: None,
            host,
            device,
        }
    }

    /// The one-line reason the library cannot do I/O here, if it cannot.
    fn failure(&self) -> Option<String> {
        let prefix = "the library cannot do I/O on this machine";
        if let Some(s) = &self.setup {
            return Some(format!("{prefix}: {s}"));
        }
        for (what, o) in [("host memory", &self.host), ("device memory", &self.device)] {
            if let Outcome::Failed(s) = o {
                return Some(format!("{prefix}: the {what} self-test failed: {s}"));
            }
        }
        if matches!(
            (&self.host, &self.device),
            (Outcome::Skipped(_), Outcome::Skipped(_))
        ) {
            return Some(format!(
                "{prefix}: host memory I/O is disabled (HIPFILE_HOST=false) and there is no GPU runtime"
            ));
        }
        None
    }

    fn json(&self) -> Value {
        Value::obj()
            .with("dir", self.dir.display().to_string())
            .with("bytes", SELF_TEST_BYTES)
            .with("setup_error", self.setup.clone())
            .with("host_memory", self.host.json())
            .with("device_memory", self.device.json())
    }

    fn print(&self) {
        outln!();
        outln!(
            "Self-test ({} through the library, temporary file in {})",
            fmt_bytes(SELF_TEST_BYTES as u64),
            self.dir.display()
        );
        if let Some(s) = &self.setup {
            outln!("  FAILED: {s}");
        } else {
            outln!("  host memory:       {}", self.host.text());
            outln!("  device memory:     {}", self.device.text());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p2pdma_lines() {
        assert_eq!(scan_p2pdma("A=1\nCONFIG_PCI_P2PDMA=y\n"), P2pdma::Yes);
        assert_eq!(scan_p2pdma("CONFIG_PCI_P2PDMA=m"), P2pdma::Module);
        assert_eq!(
            scan_p2pdma("# CONFIG_PCI_P2PDMA is not set\n"),
            P2pdma::NotSet
        );
        assert_eq!(scan_p2pdma("CONFIG_PCI=y\n"), P2pdma::NotSet);
        // A longer option name is another option.
        assert_eq!(scan_p2pdma("CONFIG_PCI_P2PDMA_X=y\n"), P2pdma::NotSet);
    }

    #[test]
    fn odirect_probe_in_a_directory_leaves_nothing_behind() {
        let d = std::env::temp_dir().join(format!("hipfile-check-probe-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (od, _, _) = odirect_in_dir(&d);
        assert_ne!(od, ODirect::NotApplicable);
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::remove_dir_all(&d).unwrap();
        let (od, _, _) = odirect_in_dir(&d);
        assert!(
            matches!(od, ODirect::Fails(e) if e == libc::ENOENT),
            "{od:?}"
        );
    }

    #[test]
    fn io_uring_probe_does_not_panic() {
        let r = IoUring::probe();
        assert!(!r.text().is_empty());
    }
}
