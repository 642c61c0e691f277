//! The library's environment variables, read once per process, their
//! parsers, and the defaults they override. The lowest part of the configuration: it imports
//! nothing of the crate.

use std::sync::OnceLock;

/// Parse a boolean the way upstream does: `true`/`false`, case-insensitive; anything else
/// (including `1`, `yes` and the empty string) is "unset".
pub(crate) fn parse_bool(v: &str) -> Option<bool> {
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
pub(crate) fn parse_unsigned(v: &str) -> Option<u32> {
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
pub(crate) fn parse_size(v: &str) -> Option<u64> {
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

/// How the library reads one of its environment variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VarKind {
    /// [`parse_bool`].
    Bool,
    /// [`parse_unsigned`].
    Unsigned,
    /// [`parse_size`].
    Size,
    /// A platform name (`HIPFILE_PLATFORM`).
    Platform,
    /// A library, a file or a directory: ignored in secure-execution mode (a set-user-ID,
    /// set-group-ID or file-capability program), as glibc ignores `LD_PRELOAD` there.
    Path,
    /// Any other text (a log filter).
    Text,
}

/// Every environment variable the library reads, and how.
pub(crate) const VARIABLES: &[(&str, VarKind)] = &[
    ("HIPFILE_PLATFORM", VarKind::Platform),
    ("HIPFILE_HIP_LIBRARY", VarKind::Path),
    ("HIPFILE_CUDA_LIBRARY", VarKind::Path),
    ("HIPFILE_CUFILE_LIBRARY", VarKind::Path),
    ("HIPFILE_ALLOW_COMPAT_MODE", VarKind::Bool),
    ("HIPFILE_FORCE_COMPAT_MODE", VarKind::Bool),
    ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", VarKind::Bool),
    ("HIPFILE_HOST", VarKind::Bool),
    ("HIPFILE_FALLBACK_SYNC_WRITES", VarKind::Bool),
    ("HIPFILE_DIRECT_IO", VarKind::Bool),
    ("HIPFILE_STATS_LEVEL", VarKind::Unsigned),
    ("HIPFILE_STATS_TSC", VarKind::Bool),
    ("HIPFILE_STATS_CONNECT_TIMEOUT", VarKind::Unsigned),
    ("HIPFILE_IO_THREADS", VarKind::Unsigned),
    ("HIPFILE_ASYNC_BUFFER_SIZE", VarKind::Size),
    ("HIPFILE_ASYNC_CONCURRENCY", VarKind::Unsigned),
    ("HIPFILE_CHUNK_SIZE", VarKind::Size),
    ("HIPFILE_BOUNCE_BUDGET", VarKind::Size),
    ("HIPFILE_INLINE_THRESHOLD", VarKind::Size),
    ("HIPFILE_LOG", VarKind::Text),
    ("HIPFILE_LOG_FILE", VarKind::Path),
];

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
    /// `HIPFILE_STATS_CONNECT_TIMEOUT` in seconds (default
    /// [`DEFAULT_STATS_CONNECT_TIMEOUT_S`]; 0: no limit): how long
    /// `hipFileStatsConnectToTargetProcess` waits for a live target's statistics server.
    pub stats_connect_timeout: Option<u32>,
    /// `HIPFILE_ASYNC_BUFFER_SIZE` in bytes (default 16 MiB; 0 means the default): the
    /// staging memory of each stream-ordered operation that moves device bytes at once.
    pub async_buffer_size: Option<u64>,
    /// `HIPFILE_ASYNC_CONCURRENCY` (default 8; 0 means the default): stream-ordered operations
    /// that move bytes at once per device, whatever the number of streams.
    pub async_concurrency: Option<u32>,
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
            stats_connect_timeout: unsigned("HIPFILE_STATS_CONNECT_TIMEOUT"),
            async_buffer_size: size("HIPFILE_ASYNC_BUFFER_SIZE"),
            async_concurrency: unsigned("HIPFILE_ASYNC_CONCURRENCY"),
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
pub(crate) fn env() -> &'static Env {
    ENV.get_or_init(|| Env::from_lookup(|k| std::env::var(k).ok()))
}

/// Default bytes per engine chunk.
pub(crate) const DEFAULT_CHUNK_SIZE: usize = 4 << 20;
/// Default pinned bounce budget.
pub(crate) const DEFAULT_BOUNCE_BUDGET: usize = 256 << 20;
/// Default inline threshold: requests of this size or less run on the calling thread.
pub(crate) const DEFAULT_INLINE_THRESHOLD: usize = 1 << 20;
/// Default staging memory of one stream-ordered operation (0.5.0 CHANGELOG).
pub(crate) const DEFAULT_ASYNC_BUFFER_SIZE: usize = 16 << 20;
/// Default stream-ordered operations moving bytes at once per device: eight, the in-flight
/// depth of the stream-ordered benchmark (eight streams of one operation or one of eight).
pub(crate) const DEFAULT_ASYNC_CONCURRENCY: usize = 8;
/// Upper bound on `HIPFILE_ASYNC_CONCURRENCY`.
pub(crate) const MAX_ASYNC_CONCURRENCY: usize = 64;
/// Default seconds `hipFileStatsConnectToTargetProcess` waits for a live target's statistics
/// server: long enough for a program started by `ais-stats CMD` to reach its first hipFile
/// call (where the server starts), short enough that a process which never serves (pid 1, a
/// program without the library) is an error rather than a hang.
pub(crate) const DEFAULT_STATS_CONNECT_TIMEOUT_S: u32 = 30;
/// Upper bound on worker threads.
pub(crate) const MAX_IO_THREADS: usize = 64;

/// Default worker count: the machine's cores, between 1 and 16.
pub(crate) fn default_io_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .clamp(1, 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_variables_are_the_ones_secure_execution_ignores() {
        let paths: Vec<&str> = VARIABLES
            .iter()
            .filter(|(_, k)| *k == VarKind::Path)
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(paths, crate::sys::secure::PATH_VARIABLES);
    }

    #[test]
    fn connect_timeout_is_read() {
        let env = Env::from_lookup(|k| (k == "HIPFILE_STATS_CONNECT_TIMEOUT").then(|| "2".into()));
        assert_eq!(env.stats_connect_timeout, Some(2));
        assert_eq!(Env::from_lookup(|_| None).stats_connect_timeout, None);
    }
}
