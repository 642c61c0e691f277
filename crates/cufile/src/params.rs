//! cuFile's configuration parameters: the table (JSON key, environment variable, range, and
//! whether the engine holds the value), staging while the driver is closed, and the getters.
//!
//! A parameter the engine has (hipFile's size and boolean parameters share cuFile's first 12
//! indices) lives in the engine: staged here while closed, pushed with
//! `hipFileSetParameter*` just before the engine opens, read back with
//! `hipFileGetParameter*`. The others are ours, stored and reported: the 1.19 booleans 12 and
//! 13, the strings, the slab arrays, the statistics level, `allow_system_memory` (host memory
//! is accepted whatever it says, as NVIDIA's stock configuration needs), the batch timeout (the
//! engine's batches do not time out by themselves; cuFile's default is 5 ms) and
//! `per_buffer_cache_size_kb` (cuFile's GPU bounce buffer; the engine's pipeline chunk is
//! another thing, and NVIDIA's stock 1 MiB would cut its throughput).

use crate::config::{env_bool, env_u64, Flat};

/// Where a parameter's value is kept.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Home {
    /// The engine's parameter of the same index.
    Engine,
    /// Here.
    Own,
}

/// One size parameter.
pub(crate) struct SizeRow {
    pub json: &'static str,
    pub env: Option<&'static str>,
    /// Engine variables that take precedence over the JSON file (as for libhipfile).
    pub engine_env: &'static [&'static str],
    pub home: Home,
    /// `cuFileGetParameterMinMaxValue`; `None` for a parameter without a range. A maximum of 0
    /// means "no upper bound" (the GPU-dependent ones).
    pub range: Option<(u64, u64)>,
    /// The value of an own parameter before anything sets it.
    pub default: u64,
}

pub(crate) const SIZE: [SizeRow; 12] = [
    SizeRow {
        json: "profile.cufile_stats",
        env: Some("CUFILE_STATS_LEVEL"),
        engine_env: &[],
        home: Home::Own,
        range: None,
        default: 0,
    },
    SizeRow {
        json: "execution.max_io_queue_depth",
        env: None,
        engine_env: &[],
        home: Home::Engine,
        range: Some((1, 256)),
        default: 0,
    },
    SizeRow {
        json: "execution.max_io_threads",
        env: None,
        engine_env: &["HIPFILE_IO_THREADS"],
        home: Home::Engine,
        range: Some((0, 128)),
        default: 0,
    },
    SizeRow {
        json: "execution.min_io_threshold_size_kb",
        env: None,
        engine_env: &["HIPFILE_INLINE_THRESHOLD"],
        home: Home::Engine,
        range: Some((4, 4_294_967_295)),
        default: 0,
    },
    SizeRow {
        json: "execution.max_request_parallelism",
        env: None,
        engine_env: &[],
        home: Home::Engine,
        range: Some((0, 8)),
        default: 0,
    },
    SizeRow {
        json: "properties.max_direct_io_size_kb",
        env: None,
        engine_env: &[],
        home: Home::Engine,
        range: Some((64, 16384)),
        default: 0,
    },
    SizeRow {
        json: "properties.max_device_cache_size_kb",
        env: Some("CUFILE_MAX_DEVICE_CACHE_SIZE"),
        engine_env: &["HIPFILE_BOUNCE_BUDGET"],
        home: Home::Engine,
        range: Some((0, 0)),
        default: 0,
    },
    SizeRow {
        json: "properties.per_buffer_cache_size_kb",
        env: Some("CUFILE_PER_BUFFER_CACHE_SIZE"),
        engine_env: &[],
        home: Home::Own,
        range: Some((64, 16384)),
        default: 1024,
    },
    SizeRow {
        json: "properties.max_device_pinned_mem_size_kb",
        env: None,
        engine_env: &[],
        home: Home::Engine,
        range: Some((64, 0)),
        default: 0,
    },
    SizeRow {
        json: "properties.io_batchsize",
        env: None,
        engine_env: &[],
        home: Home::Engine,
        range: Some((1, 256)),
        default: 0,
    },
    SizeRow {
        json: "properties.poll_mode_max_size_kb",
        env: None,
        engine_env: &[],
        home: Home::Engine,
        range: Some((4, 18_014_398_509_481_980)),
        default: 0,
    },
    // Ours: the engine's batch does not time out on its own, and NVIDIA's default is 5.
    SizeRow {
        json: "properties.max_batch_io_timeout_msecs",
        env: None,
        engine_env: &[],
        home: Home::Own,
        range: Some((1, 1000)),
        default: 5,
    },
];

/// One boolean parameter.
pub(crate) struct BoolRow {
    pub json: &'static str,
    pub env: &'static [&'static str],
    pub engine_env: &'static [&'static str],
    pub home: Home,
    pub default: bool,
}

pub(crate) const BOOL: [BoolRow; 14] = [
    BoolRow {
        json: "properties.use_poll_mode",
        env: &[],
        engine_env: &[],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "properties.allow_compat_mode",
        env: &["CUFILE_ALLOW_COMPAT_MODE"],
        engine_env: &["HIPFILE_ALLOW_COMPAT_MODE"],
        home: Home::Engine,
        default: true,
    },
    BoolRow {
        json: "properties.force_compat_mode",
        env: &["CUFILE_FORCE_COMPAT_MODE"],
        engine_env: &["HIPFILE_FORCE_COMPAT_MODE"],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "miscellaneous.api_check_aggressive",
        env: &[],
        engine_env: &[],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "execution.parallel_io",
        env: &[],
        engine_env: &[],
        home: Home::Engine,
        default: true,
    },
    // Deprecated (NVTX ranges are not emitted): read and written like the others, as NVIDIA's
    // 1.15 library does.
    BoolRow {
        json: "profile.nvtx",
        env: &["CUFILE_NVTX"],
        engine_env: &[],
        home: Home::Own,
        default: false,
    },
    BoolRow {
        json: "properties.allow_system_memory",
        env: &[],
        engine_env: &[],
        home: Home::Own,
        default: true,
    },
    BoolRow {
        json: "properties.use_pci_p2pdma",
        env: &["CUFILE_USE_PCIP2PDMA"],
        engine_env: &[],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "properties.prefer_iouring",
        env: &[],
        engine_env: &[],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "properties.force_odirect_mode",
        env: &[],
        engine_env: &[],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "miscellaneous.skip_topology_detection",
        env: &["CUFILE_SKIP_TOPOLOGY_DETECTION"],
        engine_env: &[],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "miscellaneous.stream_memops_bypass",
        env: &["CUFILE_STREAM_MEMOPS_BYPASS"],
        engine_env: &[],
        home: Home::Engine,
        default: false,
    },
    BoolRow {
        json: "properties.vanilla_posix_io_mode",
        env: &[],
        engine_env: &[],
        home: Home::Own,
        default: false,
    },
    BoolRow {
        json: "properties.gds_fallback_io",
        env: &[],
        engine_env: &[],
        home: Home::Own,
        default: false,
    },
];

/// String parameters (all ours).
pub(crate) const STRING_LOGGING_LEVEL: usize = 0;
pub(crate) const STRING_ENV_LOGFILE_PATH: usize = 1;
pub(crate) const STRING_LOG_DIR: usize = 2;
pub(crate) const STRING_COUNT: usize = 4;
pub(crate) const STRING_JSON: [&str; STRING_COUNT] = [
    "logging.level",
    "",
    "logging.dir",
    "properties.rdma_transport_type",
];

/// Slab arrays: (sizes KiB, counts) defaults and JSON keys.
pub(crate) struct SlabRow {
    pub json_sizes: &'static str,
    pub json_counts: &'static str,
    pub sizes: &'static [u64],
    pub counts: &'static [u64],
}

pub(crate) const POSIX_SLABS: SlabRow = SlabRow {
    json_sizes: "properties.posix_pool_slab_size_kb",
    json_counts: "properties.posix_pool_slab_count",
    sizes: &[4, 1024, 16384],
    counts: &[128, 64, 64],
};

pub(crate) const GPU_SLABS: SlabRow = SlabRow {
    json_sizes: "properties.gpu_bounce_buffer_slab_config.slab_size_kb",
    json_counts: "properties.gpu_bounce_buffer_slab_config.slab_count",
    sizes: &[1024, 8192, 16384, 65536],
    counts: &[128, 8, 4, 2],
};

/// A set slab array.
#[derive(Clone, Debug, Default)]
pub(crate) struct Slabs {
    pub sizes: Vec<u64>,
    pub counts: Vec<u64>,
    /// Set through the API (then the JSON file does not replace it).
    pub by_api: bool,
}

/// Whether any of these variables is set.
fn any_env(names: &[&str]) -> bool {
    names.iter().any(|n| std::env::var_os(n).is_some())
}

/// The value a size parameter gets at open when the API did not stage one: its cuFile
/// environment variable, else the JSON file unless an engine variable overrides it.
pub(crate) fn size_from_config(i: usize, json: &Flat) -> Option<u64> {
    let row = &SIZE[i];
    if let Some(v) = row.env.and_then(env_u64) {
        return Some(v);
    }
    if any_env(row.engine_env) {
        return None;
    }
    let v = json.get(row.json)?;
    let n = v.as_u64();
    if n.is_none() {
        crate::log::warn(&format!("{}: not a number, ignored", row.json));
    }
    n
}

/// The same for a boolean parameter.
pub(crate) fn bool_from_config(i: usize, json: &Flat) -> Option<bool> {
    let row = &BOOL[i];
    if let Some(v) = row.env.iter().find_map(|n| env_bool(n)) {
        return Some(v);
    }
    if any_env(row.engine_env) {
        return None;
    }
    let v = json.get(row.json)?;
    let b = v.as_bool();
    if b.is_none() {
        crate::log::warn(&format!("{}: not a boolean, ignored", row.json));
    }
    b
}

/// A slab array from the JSON file (both lists, the same length).
pub(crate) fn slabs_from_config(row: &SlabRow, json: &Flat) -> Option<Slabs> {
    let sizes = json.get(row.json_sizes)?.as_u64_list()?;
    let counts = json.get(row.json_counts)?.as_u64_list()?;
    if sizes.len() != counts.len() || sizes.is_empty() {
        crate::log::warn(&format!(
            "{} and {} differ in length: ignored",
            row.json_sizes, row.json_counts
        ));
        return None;
    }
    Some(Slabs {
        sizes,
        counts,
        by_api: false,
    })
}

/// The engine's value for the JSON/env value `v` of size parameter `i`: cuFile's ranges are
/// wider than some of the engine's (threads 0..128 against 1..64, batch 1..256 against
/// 1..128), so a value the engine would refuse is brought into its range.
pub(crate) fn engine_size(i: usize, v: u64) -> u64 {
    match i {
        2 => v.clamp(1, 64),
        9 => v.clamp(1, 128),
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_cufile_1_19_s() {
        let ranges: Vec<Option<(u64, u64)>> = SIZE.iter().map(|r| r.range).collect();
        assert_eq!(
            ranges,
            [
                None,
                Some((1, 256)),
                Some((0, 128)),
                Some((4, 4_294_967_295)),
                Some((0, 8)),
                Some((64, 16384)),
                Some((0, 0)),
                Some((64, 16384)),
                Some((64, 0)),
                Some((1, 256)),
                Some((4, 18_014_398_509_481_980)),
                Some((1, 1000)),
            ]
        );
        // 18014398509481980: SIZE_MAX / 1024 rounded down to a multiple of 4.
        assert_eq!((u64::MAX / 1024) & !3, 18_014_398_509_481_980);
    }

    #[test]
    fn homes_and_defaults() {
        let own: Vec<usize> = (0..SIZE.len())
            .filter(|&i| SIZE[i].home == Home::Own)
            .collect();
        assert_eq!(
            own,
            [0, 7, 11],
            "the statistics level, per_buffer_cache_size_kb and the batch timeout"
        );
        assert_eq!((SIZE[7].default, SIZE[11].default), (1024, 5));
        let own: Vec<usize> = (0..BOOL.len())
            .filter(|&i| BOOL[i].home == Home::Own)
            .collect();
        assert_eq!(own, [5, 6, 12, 13]);
        assert!(BOOL[1].default && BOOL[4].default && BOOL[6].default);
    }

    #[test]
    fn values_beyond_the_engine_s_ranges_are_brought_into_them() {
        assert_eq!(engine_size(2, 100), 64, "threads");
        assert_eq!(engine_size(2, 0), 1);
        assert_eq!(engine_size(9, 256), 128, "batch size");
        assert_eq!(engine_size(5, 99999), 99999, "others unchanged");
    }
}
