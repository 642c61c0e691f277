//! Configuration: environment variables (read once per process), values set
//! through the parameter API, and the immutable snapshot taken at driver open.
//!
//! Precedence: parameter set through the API > environment variable > default.
//! A value that does not parse is ignored with a warning in the log.
//!
//! Inside the module, imports run one way: [`env`](mod@env) (variables, parsers, defaults) <- [`params`]
//! (one table row per parameter) <- this file (the snapshot).
#![deny(unsafe_code)]

pub(crate) mod env;
pub(crate) mod params;

pub(crate) use env::{env, Env};
use env::{
    DEFAULT_ASYNC_BUFFER_SIZE, DEFAULT_ASYNC_CONCURRENCY, MAX_ASYNC_CONCURRENCY, MAX_IO_THREADS,
};
use params::{BoolParam, ParamValues, SizeParam, Staged};

/// The configuration snapshot in force while the driver is open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Config {
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
    /// Staging memory of each stream-ordered operation moving device bytes.
    pub async_buffer_size: usize,
    /// Stream-ordered operations moving bytes at once per device.
    pub async_concurrency: usize,
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
    pub(crate) fn resolve(env: &Env, staged: &Staged) -> Config {
        let params = ParamValues::resolve(env, staged);
        let allow = params.flag(BoolParam::AllowCompatMode);
        let force = params.flag(BoolParam::ForceCompatMode);
        let allow_compat = if force && !allow {
            // As AMD's development branch: forcing compat mode while disallowing it keeps the fallback on.
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
            async_concurrency: match env.async_concurrency {
                None | Some(0) => DEFAULT_ASYNC_CONCURRENCY,
                Some(v) => (v as usize).min(MAX_ASYNC_CONCURRENCY),
            },
            io_threads,
            request_parallelism,
            chunk_size,
            // KiB to bytes, saturating (a shift would drop the high bits of a huge value and
            // turn "no limit" into almost nothing), as the live setter converts them.
            bounce_budget: kib(params.size(SizeParam::MaxDeviceCacheSizeKb)).max(chunk_size),
            inline_threshold: kib(params.size(SizeParam::MinIoThresholdSizeKb)),
            direct_io: env.direct_io.unwrap_or(true),
            params,
        }
    }
}

/// `v` KiB in bytes, saturating at `usize::MAX`.
fn kib(v: u64) -> usize {
    usize::try_from(v)
        .unwrap_or(usize::MAX)
        .saturating_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::env::{parse_bool, parse_size, parse_unsigned, DEFAULT_CHUNK_SIZE};
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
    fn huge_kib_values_saturate() {
        // 2^54 KiB is 2^64 bytes: shifted, it was 0 (a budget of one chunk, no inline
        // threshold); converted, it is as large as a budget can be.
        let mut staged = Staged::default();
        staged.sizes[SizeParam::MaxDeviceCacheSizeKb as usize] = Some(1 << 54);
        staged.sizes[SizeParam::MinIoThresholdSizeKb as usize] = Some(1 << 54);
        let c = Config::resolve(&env_of(&[]), &staged);
        assert_eq!(
            (c.bounce_budget, c.inline_threshold),
            (usize::MAX, usize::MAX)
        );
        staged.sizes[SizeParam::MaxDeviceCacheSizeKb as usize] = Some(8);
        staged.sizes[SizeParam::MinIoThresholdSizeKb as usize] = Some(64);
        let c = Config::resolve(&env_of(&[]), &staged);
        assert_eq!(
            (c.bounce_budget, c.inline_threshold),
            (c.chunk_size, 64 << 10)
        );
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
