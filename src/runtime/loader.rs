//! Choosing and loading the GPU runtime once per process.
//!
//! Order: `HIPFILE_PLATFORM` forces one; otherwise a runtime already loaded in the process wins
//! (`dlopen` with `RTLD_NOLOAD`: HIP, then CUDA); otherwise HIP, then CUDA, are loaded and kept
//! if they report at least one device; otherwise host-only. `HIPFILE_HIP_LIBRARY` and
//! `HIPFILE_CUDA_LIBRARY` name exact files instead of the default candidates (except in
//! secure-execution mode, where they are ignored). The result is cached in a `OnceLock` and
//! libraries are never closed.

use std::ffi::CStr;
use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

use super::cuda::CudaRuntime;
use super::hip::HipRuntime;
use super::host::HostRuntime;
use super::{Platform, Runtime};
use crate::sys::secure;

/// The runtime in use and why it was chosen.
pub(crate) struct Choice {
    /// The runtime.
    pub runtime: Box<dyn Runtime>,
    /// One line saying why this platform was chosen (logs, `hipfile check`).
    pub reason: String,
    /// What was tried and what happened, in order.
    pub attempts: Vec<String>,
}

static CHOICE: OnceLock<Choice> = OnceLock::new();

/// The process's runtime, chosen and loaded on first use.
pub(crate) fn runtime() -> &'static dyn Runtime {
    &*choice().runtime
}

/// The process's runtime choice with its reasons.
pub(crate) fn choice() -> &'static Choice {
    CHOICE.get_or_init(|| {
        crate::log::init();
        let c = choose(&EnvNames::from_process());
        tracing::info!(
            target: "hipfile",
            "platform {}: {} ({})",
            c.runtime.platform().name(),
            c.runtime.describe(),
            c.reason
        );
        if c.runtime.tools().is_some_and(|t| t.is_simulated()) {
            tracing::warn!(target: "hipfile", "running on the SIMULATED GPU runtime (hipsim): test and demo use only");
        }
        c
    })
}

/// Use `runtime` as the process's GPU runtime instead of loading one (for Rust programs that
/// bring their own runtime binding, and for tests that hand the library a fake). Must be called
/// before the first API call that needs a runtime; returns the runtime back if one was already
/// chosen.
#[cfg(any(test, feature = "test-internals"))]
pub fn install(runtime: Box<dyn Runtime>, reason: &str) -> Result<(), Box<dyn Runtime>> {
    let mut slot = Some(Choice {
        runtime,
        reason: reason.to_string(),
        attempts: Vec::new(),
    });
    CHOICE.get_or_init(|| slot.take().expect("taken once"));
    match slot {
        None => Ok(()),
        Some(c) => Err(c.runtime),
    }
}

/// The runtime if it has already been chosen (never loads anything).
pub(crate) fn try_runtime() -> Option<&'static dyn Runtime> {
    CHOICE.get().map(|c| &*c.runtime)
}

/// The environment inputs of the choice.
#[derive(Clone, Debug, Default)]
pub(crate) struct EnvNames {
    /// `HIPFILE_PLATFORM`.
    pub platform: Option<String>,
    /// `HIPFILE_HIP_LIBRARY`.
    pub hip_library: Option<String>,
    /// `HIPFILE_CUDA_LIBRARY`.
    pub cuda_library: Option<String>,
}

impl EnvNames {
    /// Read the three variables from the process environment. The two that name a library
    /// are ignored in secure-execution mode: the environment of a set-user-ID program
    /// belongs to the user who started it, who must not choose what it loads.
    pub(crate) fn from_process() -> Self {
        let library = |k: &str| secure::path_var(k).and_then(|v| v.into_string().ok());
        EnvNames {
            platform: std::env::var("HIPFILE_PLATFORM")
                .ok()
                .filter(|v| !v.is_empty()),
            hip_library: library("HIPFILE_HIP_LIBRARY"),
            cuda_library: library("HIPFILE_CUDA_LIBRARY"),
        }
    }

    fn hip_candidates(&self) -> Vec<String> {
        match &self.hip_library {
            Some(p) => vec![p.clone()],
            // The unversioned name first (a development install), then the sonames of the
            // ROCm releases whose HIP exports the fastpath entry points (7.x) or not (6.x).
            None => [
                "libamdhip64.so",
                "libamdhip64.so.7",
                "libamdhip64.so.6",
                "libamdhip64.so.5",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    fn cuda_candidates(&self) -> Vec<String> {
        match &self.cuda_library {
            Some(p) => vec![p.clone()],
            // The driver API has one copy per system under this soname (unlike libcudart).
            None => vec!["libcuda.so.1".to_string()],
        }
    }
}

fn open(name: &str, noload: bool) -> Result<Library, String> {
    let flags = RTLD_NOW | RTLD_LOCAL | if noload { libc::RTLD_NOLOAD } else { 0 };
    // SAFETY: loading a GPU runtime runs its initialisers; that is the purpose of this call.
    unsafe { Library::open(Some(name), flags) }.map_err(|e| e.to_string())
}

fn bind(platform: Platform, lib: Library, name: &str) -> Result<Box<dyn Runtime>, String> {
    match platform {
        Platform::Amd => HipRuntime::bind(lib, name).map(|r| Box::new(r) as Box<dyn Runtime>),
        Platform::Nvidia => CudaRuntime::bind(lib, name).map(|r| Box::new(r) as Box<dyn Runtime>),
        Platform::Host => unreachable!("host has no library"),
    }
}

/// What was tried: every attempt in order, and separately the runtimes that were found (the
/// library loaded) but rejected, which host-only mode must not keep quiet about.
#[derive(Default)]
struct Attempts {
    all: Vec<String>,
    rejected: Vec<String>,
}

impl Attempts {
    fn rejected(&mut self, line: String) {
        self.all.push(line.clone());
        self.rejected.push(line);
    }
}

/// Try each candidate; `need_device` refuses runtimes that report no device.
fn try_platform(
    platform: Platform,
    candidates: &[String],
    noload: bool,
    need_device: bool,
    attempts: &mut Attempts,
) -> Option<Box<dyn Runtime>> {
    for name in candidates {
        let lib = match open(name, noload) {
            Ok(lib) => lib,
            Err(e) => {
                if !noload {
                    attempts
                        .all
                        .push(format!("{}: {name}: not loadable ({e})", platform.name()));
                }
                continue;
            }
        };
        match bind(platform, lib, name) {
            Ok(rt) if need_device && rt.tools().map_or(0, |t| t.device_count()) < 1 => {
                attempts.rejected(format!("{}: {name}: reports no device", platform.name()));
            }
            Ok(rt) => return Some(rt),
            Err(e) => attempts.rejected(format!("{}: {name}: {e}", platform.name())),
        }
    }
    None
}

/// The file of a runtime already in the process under any name: the object that defines
/// `probe` in the global scope (an application linked against the runtime, or one that loaded
/// it with `RTLD_GLOBAL`), found whatever its file is called.
fn in_global_scope(probe: &CStr) -> Option<String> {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the global scope and finds
    // nothing rather than failing.
    let addr = unsafe { libc::dlsym(libc::RTLD_DEFAULT, probe.as_ptr()) };
    if addr.is_null() {
        return None;
    }
    // SAFETY: Dl_info is plain data; dladdr fills it for an address inside a loaded object.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated path owned by the loader.
    let path = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(path.to_string_lossy().into_owned())
}

/// A `HIPFILE_PLATFORM` value (case-insensitive): `amd` or `hip`, `nvidia` or `cuda`, `host`.
pub(crate) fn parse_platform(name: &str) -> Option<Platform> {
    match name.to_ascii_lowercase().as_str() {
        "amd" | "hip" => Some(Platform::Amd),
        "nvidia" | "cuda" => Some(Platform::Nvidia),
        "host" => Some(Platform::Host),
        _ => None,
    }
}

/// The choice for a given environment (separate from the process-wide cache for tests).
pub(crate) fn choose(env: &EnvNames) -> Choice {
    let mut attempts = Attempts::default();
    let hip = env.hip_candidates();
    let cuda = env.cuda_candidates();
    let forced = match env.platform.as_deref() {
        None => None,
        Some(name) => parse_platform(name).or_else(|| {
            let other = name.to_ascii_lowercase();
            tracing::warn!(target: "hipfile", "HIPFILE_PLATFORM={other:?} is not amd, nvidia or host; choosing automatically");
            None
        }),
    };
    if let Some(p) = forced {
        if p == Platform::Host {
            return host_choice("HIPFILE_PLATFORM=host", attempts.all);
        }
        let cands = if p == Platform::Amd { &hip } else { &cuda };
        if let Some(rt) = try_platform(p, cands, true, false, &mut attempts)
            .or_else(|| try_platform(p, cands, false, false, &mut attempts))
        {
            return Choice {
                runtime: rt,
                reason: format!("HIPFILE_PLATFORM={}", p.name()),
                attempts: attempts.all,
            };
        }
        tracing::warn!(target: "hipfile", "HIPFILE_PLATFORM={} but its runtime could not be loaded: {}", p.name(), attempts.all.join("; "));
        return host_choice(
            &format!("HIPFILE_PLATFORM={} could not be loaded", p.name()),
            attempts.all,
        );
    }
    // A runtime already in the process: by its usual names, then by its symbols in the
    // global scope whatever its file is called.
    let probes = [
        (Platform::Amd, &hip, c"hipRuntimeGetVersion"),
        (Platform::Nvidia, &cuda, c"cuDriverGetVersion"),
    ];
    for (p, cands, probe) in probes {
        let global = in_global_scope(probe).filter(|path| !cands.contains(path));
        let found = try_platform(p, cands, true, true, &mut attempts).or_else(|| {
            let path = global?;
            try_platform(p, &[path], true, true, &mut attempts)
        });
        if let Some(rt) = found {
            return Choice {
                runtime: rt,
                reason: "already loaded in the process".into(),
                attempts: attempts.all,
            };
        }
    }
    for (p, cands) in [(Platform::Amd, &hip), (Platform::Nvidia, &cuda)] {
        if let Some(rt) = try_platform(p, cands, false, true, &mut attempts) {
            return Choice {
                runtime: rt,
                reason: "first runtime with a device".into(),
                attempts: attempts.all,
            };
        }
    }
    if !attempts.rejected.is_empty() {
        // Found but unusable: say so at the default level, with the reason, so that nobody
        // mistakes host-only mode for GPU I/O.
        tracing::warn!(
            target: "hipfile",
            "no usable GPU runtime, running host-only (only host memory can be used): {}",
            attempts.rejected.join("; ")
        );
    }
    host_choice("no GPU runtime with a device was found", attempts.all)
}

fn host_choice(reason: &str, attempts: Vec<String>) -> Choice {
    Choice {
        runtime: Box::new(HostRuntime::new(reason)),
        reason: reason.to_string(),
        attempts,
    }
}
