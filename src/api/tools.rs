//! The read-only reports tools need (`hipfile check`, `bench`, `cp`): which GPU runtime the
//! process uses and why, the configuration in force, the library's environment variables as
//! it reads them, and the mount table as it sees it.

use crate::config::env::{self, VarKind};
use crate::driver::driver;
use crate::error::Result;
use crate::runtime::{loader, Platform};
use crate::sys::mounts;

/// The GPU runtime this process uses: what was chosen, why, and what it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeReport {
    /// The platform.
    pub platform: Platform,
    /// The runtime's own description (library, version, devices).
    pub description: String,
    /// Whether it is the simulated runtime (`hipsim`).
    pub simulated: bool,
    /// One line saying why this platform was chosen.
    pub reason: String,
    /// What the loader tried and what happened, in order.
    pub attempts: Vec<String>,
    /// Devices the runtime reports.
    pub device_count: i32,
    /// The runtime's version number.
    pub version: i32,
    /// Whether the runtime has GPU-direct file entry points.
    pub gpu_direct: bool,
}

/// The process's GPU runtime (chosen and loaded on first use).
pub fn runtime_report() -> RuntimeReport {
    let choice = loader::choice();
    let rt = &*choice.runtime;
    let tools = rt.tools();
    RuntimeReport {
        platform: rt.platform(),
        description: rt.describe(),
        simulated: tools.is_some_and(|t| t.is_simulated()),
        reason: choice.reason.clone(),
        attempts: choice.attempts.clone(),
        device_count: tools.map_or(0, |t| t.device_count()),
        version: tools.map_or(0, |t| t.version()),
        gpu_direct: rt.gpu_direct().is_some(),
    }
}

/// Make `device` the calling thread's current device (device memory is allocated there).
pub fn set_device(device: i32) -> Result<()> {
    Ok(super::runtime_tools()?.set_device(device)?)
}

/// The configuration in force, as plain values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigSnapshot {
    /// Engine worker threads.
    pub io_threads: usize,
    /// Threads one request may use.
    pub request_parallelism: usize,
    /// Bytes per engine chunk.
    pub chunk_size: usize,
    /// Total bytes of pinned bounce buffers.
    pub bounce_budget: usize,
    /// Requests up to this size run on the calling thread.
    pub inline_threshold: usize,
    /// Bytes of staging memory of each stream-ordered operation moving device bytes.
    pub async_buffer_size: usize,
    /// Stream-ordered operations moving bytes at once per device.
    pub async_concurrency: usize,
    /// Compat mode allowed.
    pub allow_compat: bool,
    /// Compat mode forced (no fastpath).
    pub force_compat: bool,
    /// Any file system with `O_DIRECT` is accepted by the fastpath.
    pub unsupported_fs: bool,
    /// Host-memory I/O enabled.
    pub host_io: bool,
    /// One `fdatasync` per fallback write call.
    pub sync_writes: bool,
    /// `O_DIRECT` for aligned fallback reads and writes.
    pub direct_io: bool,
    /// Statistics level (0–3).
    pub stats_level: u32,
}

/// The configuration in force: the open driver's, or what an open would use now.
pub fn config() -> ConfigSnapshot {
    let c = driver().config();
    ConfigSnapshot {
        io_threads: c.io_threads,
        request_parallelism: c.request_parallelism,
        chunk_size: c.chunk_size,
        bounce_budget: c.bounce_budget,
        inline_threshold: c.inline_threshold,
        async_buffer_size: c.async_buffer_size,
        async_concurrency: c.async_concurrency,
        allow_compat: c.allow_compat,
        force_compat: c.force_compat,
        unsupported_fs: c.unsupported_fs,
        host_io: c.host_io,
        sync_writes: c.sync_writes,
        direct_io: c.direct_io,
        stats_level: c.stats_level,
    }
}

/// A byte size as the library's size variables take it: digits with an optional binary
/// suffix `K`, `M`, `G`, `T` (or `KiB`..., case-insensitive).
pub fn parse_size(text: &str) -> Option<u64> {
    env::parse_size(text)
}

/// One variable of the process environment that matters to the library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvVar {
    /// Its name.
    pub name: String,
    /// Its value (lossily decoded).
    pub value: String,
    /// Why the library ignores it, if it does.
    pub note: Option<&'static str>,
}

/// Why the library ignores `name=value`: `None` when it takes it (`HIPSIM_*` variables are
/// the simulator's and always taken).
fn note(name: &str, value: &str) -> Option<&'static str> {
    if name.starts_with("HIPSIM_") {
        return None;
    }
    let Some(&(_, kind)) = env::VARIABLES.iter().find(|(n, _)| *n == name) else {
        return Some("unknown variable: the library ignores it");
    };
    match kind {
        VarKind::Bool if env::parse_bool(value).is_none() => {
            Some("neither true nor false: ignored")
        }
        VarKind::Unsigned if env::parse_unsigned(value).is_none() => {
            Some("not an unsigned integer: ignored")
        }
        VarKind::Size if env::parse_size(value).is_none() => {
            Some("not a size (digits with an optional K/M/G/T suffix): ignored")
        }
        VarKind::Platform if loader::parse_platform(value).is_none() => {
            Some("not amd, nvidia or host: ignored (automatic choice)")
        }
        _ => None,
    }
}

/// Every `HIPFILE_*` variable set (and the simulator's `HIPSIM_*` ones when `simulator`),
/// sorted by name, each with what the library makes of it.
pub fn environment(simulator: bool) -> Vec<EnvVar> {
    let mut vars: Vec<EnvVar> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let name = k.to_string_lossy().into_owned();
            let wanted = name.starts_with("HIPFILE_") || (simulator && name.starts_with("HIPSIM_"));
            wanted.then(|| {
                let value = v.to_string_lossy().into_owned();
                EnvVar {
                    note: note(&name, &value),
                    name,
                    value,
                }
            })
        })
        .collect();
    vars.sort_by(|a, b| a.name.cmp(&b.name));
    vars
}

/// One mount of the mount table (`/proc/self/mountinfo`), as the library reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount(mounts::MountEntry);

impl Mount {
    /// The mount point.
    pub fn mount_point(&self) -> &str {
        &self.0.mount_point
    }
    /// The file-system type (`ext4`, `xfs`, `tmpfs`, ...).
    pub fn fstype(&self) -> &str {
        &self.0.fstype
    }
    /// The mount source (`/dev/nvme0n1p1`, ...).
    pub fn source(&self) -> &str {
        &self.0.source
    }
    /// The device number, `(major, minor)`.
    pub fn device(&self) -> (u32, u32) {
        (self.0.major, self.0.minor)
    }
    /// The value of option `name` (`Some("")` for a flag without `=`): per-mount options
    /// first, then super-block options.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.0.option(name)
    }
}

/// The mount table, in its order; the error is an errno value.
pub fn mount_table() -> std::result::Result<Vec<Mount>, i32> {
    Ok(mounts::read_table()?.into_iter().map(Mount).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_judged_as_the_library_reads_them() {
        assert_eq!(note("HIPFILE_HOST", "false"), None);
        assert!(note("HIPFILE_HOST", "0").unwrap().contains("ignored"));
        assert_eq!(note("HIPFILE_CHUNK_SIZE", "8M"), None);
        assert!(note("HIPFILE_CHUNK_SIZE", "lots").is_some());
        assert_eq!(note("HIPFILE_IO_THREADS", "4"), None);
        assert_eq!(note("HIPFILE_PLATFORM", "AMD"), None);
        assert!(note("HIPFILE_PLATFORM", "intel").is_some());
        assert!(note("HIPFILE_NOPE", "1").unwrap().contains("unknown"));
        assert_eq!(note("HIPFILE_LOG_FILE", "/x"), None);
    }
}
