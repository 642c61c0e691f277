//! Choosing and loading the GPU runtime once per process (contract §2).
//!
//! Order: `HIPFILE_PLATFORM` forces one; otherwise a runtime already loaded in the process wins
//! (`dlopen` with `RTLD_NOLOAD`: HIP, then CUDA); otherwise HIP, then CUDA, are loaded and kept
//! if they report at least one device; otherwise host-only. `HIPFILE_HIP_LIBRARY` and
//! `HIPFILE_CUDA_LIBRARY` name exact files instead of the default candidates. The result is
//! cached in a `OnceLock` and libraries are never closed.

use std::sync::OnceLock;

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

use super::cuda::CudaRuntime;
use super::hip::HipRuntime;
use super::host::HostRuntime;
use super::{Platform, Runtime};

/// The runtime in use and why it was chosen.
pub struct Choice {
    /// The runtime.
    pub runtime: Box<dyn Runtime>,
    /// One line saying why this platform was chosen (logs, `hipfile check`).
    pub reason: String,
    /// What was tried and what happened, in order.
    pub attempts: Vec<String>,
}

static CHOICE: OnceLock<Choice> = OnceLock::new();

/// The process's runtime, chosen and loaded on first use.
pub fn runtime() -> &'static dyn Runtime {
    &*choice().runtime
}

/// The process's runtime choice with its reasons.
pub fn choice() -> &'static Choice {
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
        if c.runtime.is_simulated() {
            tracing::warn!(target: "hipfile", "running on the SIMULATED GPU runtime (hipsim): test and demo use only");
        }
        c
    })
}

/// Use `runtime` as the process's GPU runtime instead of loading one (for Rust programs that
/// bring their own runtime binding, and for tests that hand the library a fake). Must be called
/// before the first API call that needs a runtime; returns the runtime back if one was already
/// chosen.
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
pub fn try_runtime() -> Option<&'static dyn Runtime> {
    CHOICE.get().map(|c| &*c.runtime)
}

/// The environment inputs of the choice.
#[derive(Clone, Debug, Default)]
pub struct EnvNames {
    /// `HIPFILE_PLATFORM`.
    pub platform: Option<String>,
    /// `HIPFILE_HIP_LIBRARY`.
    pub hip_library: Option<String>,
    /// `HIPFILE_CUDA_LIBRARY`.
    pub cuda_library: Option<String>,
}

impl EnvNames {
    /// Read the three variables from the process environment.
    pub fn from_process() -> Self {
        let get = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        EnvNames {
            platform: get("HIPFILE_PLATFORM"),
            hip_library: get("HIPFILE_HIP_LIBRARY"),
            cuda_library: get("HIPFILE_CUDA_LIBRARY"),
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

/// Try each candidate; `need_device` refuses runtimes that report no device.
fn try_platform(
    platform: Platform,
    candidates: &[String],
    noload: bool,
    need_device: bool,
    attempts: &mut Vec<String>,
) -> Option<Box<dyn Runtime>> {
    for name in candidates {
        let lib = match open(name, noload) {
            Ok(lib) => lib,
            Err(e) => {
                if !noload {
                    attempts.push(format!("{}: {name}: not loadable ({e})", platform.name()));
                }
                continue;
            }
        };
        match bind(platform, lib, name) {
            Ok(rt) if need_device && rt.device_count() < 1 => {
                attempts.push(format!("{}: {name}: reports no device", platform.name()));
            }
            Ok(rt) => return Some(rt),
            Err(e) => attempts.push(format!("{}: {name}: {e}", platform.name())),
        }
    }
    None
}

/// The choice for a given environment (separate from the process-wide cache for tests).
pub fn choose(env: &EnvNames) -> Choice {
    let mut attempts = Vec::new();
    let hip = env.hip_candidates();
    let cuda = env.cuda_candidates();
    let forced = match env
        .platform
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None => None,
        Some("amd") | Some("hip") => Some(Platform::Amd),
        Some("nvidia") | Some("cuda") => Some(Platform::Nvidia),
        Some("host") => Some(Platform::Host),
        Some(other) => {
            tracing::warn!(target: "hipfile", "HIPFILE_PLATFORM={other:?} is not amd, nvidia or host; choosing automatically");
            None
        }
    };
    if let Some(p) = forced {
        if p == Platform::Host {
            return host_choice("HIPFILE_PLATFORM=host", attempts);
        }
        let cands = if p == Platform::Amd { &hip } else { &cuda };
        if let Some(rt) = try_platform(p, cands, true, false, &mut attempts)
            .or_else(|| try_platform(p, cands, false, false, &mut attempts))
        {
            return Choice {
                runtime: rt,
                reason: format!("HIPFILE_PLATFORM={}", p.name()),
                attempts,
            };
        }
        tracing::warn!(target: "hipfile", "HIPFILE_PLATFORM={} but its runtime could not be loaded: {}", p.name(), attempts.join("; "));
        return host_choice(
            &format!("HIPFILE_PLATFORM={} could not be loaded", p.name()),
            attempts,
        );
    }
    for (p, cands) in [(Platform::Amd, &hip), (Platform::Nvidia, &cuda)] {
        if let Some(rt) = try_platform(p, cands, true, true, &mut attempts) {
            return Choice {
                runtime: rt,
                reason: "already loaded in the process".into(),
                attempts,
            };
        }
    }
    for (p, cands) in [(Platform::Amd, &hip), (Platform::Nvidia, &cuda)] {
        if let Some(rt) = try_platform(p, cands, false, true, &mut attempts) {
            return Choice {
                runtime: rt,
                reason: "first runtime with a device".into(),
                attempts,
            };
        }
    }
    host_choice("no GPU runtime with a device was found", attempts)
}

fn host_choice(reason: &str, attempts: Vec<String>) -> Choice {
    Choice {
        runtime: Box::new(HostRuntime::new(reason)),
        reason: reason.to_string(),
        attempts,
    }
}
