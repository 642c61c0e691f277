//! Configuration: environment variables (read once per process, behaviour §C.6), values set
//! through the parameter API, and the immutable snapshot taken at driver open.
//!
//! Precedence (contract §7): parameter set through the API > environment variable > default.
//! A value that does not parse is ignored with a warning in the log.

use std::sync::OnceLock;

use super::params::{BoolParam, ParamValues, SizeParam, Staged};

/// Parse a boolean the way upstream does: `true`/`false`, case-insensitive; anything else
/// (including `1`, `yes` and the empty string) is "unset".
pub fn parse_bool(v: &str) -> Option<bool> {
    if v.eq_ignore_ascii_case("true") {
        Some(true)
    } else if v.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// Parse an unsigned integer with `strtoul` semantics as upstream uses them: leading white
/// space and a sign are accepted, digits are required, trailing junk or overflow make it
/// "unset", and values above `u32::MAX` saturate (a negative value wraps as `strtoul` does and
/// therefore saturates too).
pub fn parse_unsigned(v: &str) -> Option<u32> {
    let t = v.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?; // overflow of unsigned long: ERANGE → unset
    if neg && n != 0 {
        return Some(u32::MAX);
    }
    Some(u32::try_from(n).unwrap_or(u32::MAX))
}

/// Parse a byte size: digits with an optional binary suffix `K`, `M`, `G` (or `KiB`, `MiB`,
/// `GiB`, case-insensitive). Used for our own variables and by the command-line tool.
pub fn parse_size(v: &str) -> Option<u64> {
    let t = v.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return None;
    }
    let n: u64 = num.parse().ok()?;
    let mul: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mul)
}

/// The library's environment variables, parsed once per process. `None` means unset or
/// unparsable (a warning was logged for the latter).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env {
    /// `HIPFILE_ALLOW_COMPAT_MODE` (default true).
    pub allow_compat: Option<bool>,
    /// `HIPFILE_FORCE_COMPAT_MODE` (default false).
    pub force_compat: Option<bool>,
    /// `HIPFILE_UNSUPPORTED_FILE_SYSTEMS` (default false).
    pub unsupported_fs: Option<bool>,
    /// `HIPFILE_STATS_LEVEL` (default 1, clamped to 3).
    pub stats_level: Option<u32>,
    /// `HIPFILE_STATS_TSC` (default true): the statistics' stopwatch may read the TSC where
    /// the kernel keeps time on it; false: always `CLOCK_MONOTONIC`.
    pub stats_tsc: Option<bool>,
    /// `HIPFILE_ASYNC_BUFFER_SIZE` in bytes (default 16 MiB; 0 means the default).
    pub async_buffer_size: Option<u64>,
    /// `HIPFILE_HOST` (default true).
    pub host_io: Option<bool>,
    /// `HIPFILE_FALLBACK_SYNC_WRITES` (default true): one `fdatasync` per write call.
    pub sync_writes: Option<bool>,
    /// `HIPFILE_IO_THREADS`: worker threads of the engine.
    pub io_threads: Option<u32>,
    /// `HIPFILE_CHUNK_SIZE`: bytes per engine chunk.
    pub chunk_size: Option<u64>,
    /// `HIPFILE_BOUNCE_BUDGET`: total bytes of pinned bounce buffers.
    pub bounce_budget: Option<u64>,
    /// `HIPFILE_INLINE_THRESHOLD`: requests up to this size run on the calling thread.
    pub inline_threshold: Option<u64>,
    /// `HIPFILE_DIRECT_IO` (default true): aligned writes, and aligned reads of data the page
    /// cache does not hold, go through the `O_DIRECT` descriptor.
    pub direct_io: Option<bool>,
}

impl Env {
    /// Parse from any variable source (the process environment or a test map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Env {
        let boolean = |k: &str| {
            let v = get(k)?;
            let p = parse_bool(&v);
            if p.is_none() {
                tracing::warn!(target: "hipfile", "{k}={v:?} is neither true nor false; ignored");
            }
            p
        };
        let unsigned = |k: &str| {
            let v = get(k)?;
            let p = parse_unsigned(&v);
            if p.is_none() {
                tracing::warn!(target: "hipfile", "{k}={v:?} is not an unsigned integer; ignored");
            }
            p
        };
        let size = |k: &str| {
            let v = get(k)?;
            let p = parse_size(&v);
            if p.is_none() {
                tracing::warn!(target: "hipfile", "{k}={v:?} is not a size (digits with an optional K/M/G suffix); ignored");
            }
            p
        };
        Env {
            allow_compat: boolean("HIPFILE_ALLOW_COMPAT_MODE"),
            force_compat: boolean("HIPFILE_FORCE_COMPAT_MODE"),
            unsupported_fs: boolean("HIPFILE_UNSUPPORTED_FILE_SYSTEMS"),
            stats_level: unsigned("HIPFILE_STATS_LEVEL"),
            stats_tsc: boolean("HIPFILE_STATS_TSC"),
            async_buffer_size: size("HIPFILE_ASYNC_BUFFER_SIZE"),
            host_io: boolean("HIPFILE_HOST"),
            sync_writes: boolean("HIPFILE_FALLBACK_SYNC_WRITES"),
            io_threads: unsigned("HIPFILE_IO_THREADS"),
            chunk_size: size("HIPFILE_CHUNK_SIZE"),
            bounce_budget: size("HIPFILE_BOUNCE_BUDGET"),
            inline_threshold: size("HIPFILE_INLINE_THRESHOLD"),
            direct_io: boolean("HIPFILE_DIRECT_IO"),
        }
    }
}

static ENV: OnceLock<Env> = OnceLock::new();

/// The process environment, read on first use; later `setenv` calls have no effect.
pub fn env() -> &'static Env {
    ENV.get_or_init(|| Env::from_lookup(|k| std::env::var(k).ok()))
}

/// Default bytes per engine chunk.
pub const DEFAULT_CHUNK_SIZE: usize = 4 << 20;
/// Default pinned bounce budget.
pub const DEFAULT_BOUNCE_BUDGET: usize = 256 << 20;
/// Default inline threshold: requests of this size or less run on the calling thread.
pub const DEFAULT_INLINE_THRESHOLD: usize = 1 << 20;
/// Default per-stream async bounce buffer (behaviour §C.6, 0.5.0 CHANGELOG).
pub const DEFAULT_ASYNC_BUFFER_SIZE: usize = 16 << 20;
/// Upper bound on worker threads.
pub const MAX_IO_THREADS: usize = 64;

/// Default worker count: the machine's cores, between 1 and 16.
pub fn default_io_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .clamp(1, 16)
}

/// The configuration snapshot in force while the driver is open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Compat mode allowed: the fallback backend may serve device memory.
    pub allow_compat: bool,
    /// Compat mode forced: the fastpath is off.
    pub force_compat: bool,
    /// Fastpath accepted on any file system.
    pub unsupported_fs: bool,
    /// Host backend enabled.
    pub host_io: bool,
    /// One `fdatasync` per write call on the fallback and host paths.
    pub sync_writes: bool,
    /// Statistics level 0–3.
    pub stats_level: u32,
    /// Per-stream async bounce buffer size.
    pub async_buffer_size: usize,
    /// Engine worker threads (the calling thread included).
    pub io_threads: usize,
    /// Threads one request may use (calling thread included).
    pub request_parallelism: usize,
    /// Engine chunk size (bytes, a multiple of 4 KiB).
    pub chunk_size: usize,
    /// Pinned bounce budget (bytes, at least one chunk).
    pub bounce_budget: usize,
    /// Inline threshold (bytes).
    pub inline_threshold: usize,
    /// Aligned writes and cold aligned reads through the `O_DIRECT` descriptor.
    pub direct_io: bool,
    /// Every parameter's value (what `hipFileGetParameter*` reports while open).
    pub params: ParamValues,
}

impl Config {
    /// Combine parameters set through the API, the environment and defaults.
    pub fn resolve(env: &Env, staged: &Staged) -> Config {
        let params = ParamValues::resolve(env, staged);
        let allow = params.flag(BoolParam::AllowCompatMode);
        let force = params.flag(BoolParam::ForceCompatMode);
        let allow_compat = if force && !allow {
            // Behaviour §C.6 [D]: forcing compat mode while disallowing it keeps the fallback on.
            tracing::warn!(
                target: "hipfile",
                "compat mode forced while disallowed (HIPFILE_FORCE_COMPAT_MODE=true, HIPFILE_ALLOW_COMPAT_MODE=false): compat mode stays allowed"
            );
            true
        } else {
            allow
        };
        let io_threads = params
            .size(SizeParam::MaxIoThreads)
            .clamp(1, MAX_IO_THREADS as u64) as usize;
        let request_parallelism = if !params.flag(BoolParam::ExecutionParallelIo) {
            1
        } else {
            match params.size(SizeParam::MaxRequestParallelism) {
                0 => io_threads,
                n => (n as usize).min(io_threads),
            }
        };
        let chunk_size = (params.size(SizeParam::PerBufferCacheSizeKb) as usize) << 10;
        Config {
            allow_compat,
            force_compat: force,
            unsupported_fs: env.unsupported_fs.unwrap_or(false),
            host_io: params.flag(BoolParam::AllowSystemMemory),
            sync_writes: env.sync_writes.unwrap_or(true),
            stats_level: params.size(SizeParam::ProfileStats).min(3) as u32,
            async_buffer_size: match env.async_buffer_size {
                None | Some(0) => DEFAULT_ASYNC_BUFFER_SIZE,
                Some(v) => v as usize,
            },
            io_threads,
            request_parallelism,
            chunk_size,
            bounce_budget: ((params.size(SizeParam::MaxDeviceCacheSizeKb) as usize) << 10)
                .max(chunk_size),
            inline_threshold: (params.size(SizeParam::MinIoThresholdSizeKb) as usize) << 10,
            direct_io: env.direct_io.unwrap_or(true),
            params,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn booleans_follow_upstream() {
        for t in ["true", "TRUE", "TrUe"] {
            assert_eq!(parse_bool(t), Some(true));
        }
        for f in ["false", "FALSE", "FaLsE"] {
            assert_eq!(parse_bool(f), Some(false));
        }
        for u in ["blah", "", "1", "0", "yes", " true"] {
            assert_eq!(parse_bool(u), None);
        }
    }

    #[test]
    fn unsigned_follows_strtoul() {
        assert_eq!(parse_unsigned("0"), Some(0));
        assert_eq!(parse_unsigned("3"), Some(3));
        assert_eq!(parse_unsigned("  7"), Some(7));
        assert_eq!(parse_unsigned("+7"), Some(7));
        assert_eq!(parse_unsigned("blah"), None);
        assert_eq!(parse_unsigned(""), None);
        assert_eq!(parse_unsigned("1abc"), None);
        assert_eq!(parse_unsigned("99999999999"), Some(u32::MAX));
        assert_eq!(parse_unsigned("99999999999999999999999"), None);
        assert_eq!(parse_unsigned("-1"), Some(u32::MAX));
    }

    #[test]
    fn sizes_take_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("16m"), Some(16 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("4X"), None);
        assert_eq!(parse_size(""), None);
    }

    fn env_of(pairs: &[(&str, &str)]) -> Env {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Env::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn defaults_and_conflicts() {
        let c = Config::resolve(&env_of(&[]), &Staged::default());
        assert!(
            c.allow_compat && !c.force_compat && !c.unsupported_fs && c.host_io && c.sync_writes
        );
        assert_eq!(c.stats_level, 1);
        assert_eq!(c.async_buffer_size, 16 << 20);
        assert_eq!(c.chunk_size, DEFAULT_CHUNK_SIZE);

        let c = Config::resolve(
            &env_of(&[("HIPFILE_ALLOW_COMPAT_MODE", "false")]),
            &Staged::default(),
        );
        assert!(!c.allow_compat);
        let c = Config::resolve(
            &env_of(&[
                ("HIPFILE_ALLOW_COMPAT_MODE", "false"),
                ("HIPFILE_FORCE_COMPAT_MODE", "TRUE"),
            ]),
            &Staged::default(),
        );
        assert!(c.allow_compat && c.force_compat);
        let c = Config::resolve(
            &env_of(&[("HIPFILE_ALLOW_COMPAT_MODE", "0")]),
            &Staged::default(),
        );
        assert!(c.allow_compat, "0 is not a boolean upstream");
        let c = Config::resolve(
            &env_of(&[
                ("HIPFILE_STATS_LEVEL", "9"),
                ("HIPFILE_ASYNC_BUFFER_SIZE", "0"),
            ]),
            &Staged::default(),
        );
        assert_eq!(c.stats_level, 3);
        assert_eq!(c.async_buffer_size, 16 << 20);
        assert_eq!(
            env_of(&[("HIPFILE_STATS_TSC", "false")]).stats_tsc,
            Some(false)
        );
        assert_eq!(
            env_of(&[("HIPFILE_STATS_TSC", "no")]).stats_tsc,
            None,
            "not a boolean"
        );
        assert_eq!(env_of(&[]).stats_tsc, None);
    }

    #[test]
    fn overrides_beat_environment() {
        let e = env_of(&[("HIPFILE_IO_THREADS", "3"), ("HIPFILE_CHUNK_SIZE", "1000")]);
        let c = Config::resolve(&e, &Staged::default());
        assert_eq!(c.io_threads, 3);
        assert_eq!(c.chunk_size, 4096, "rounded up to 4 KiB");
        let mut staged = Staged::default();
        staged.sizes[SizeParam::MaxIoThreads as usize] = Some(5);
        let c = Config::resolve(&e, &staged);
        assert_eq!(c.io_threads, 5);
    }
}
