//! The configuration parameters of the parameter API with cuFile's semantics:
//! its unit, its default, and how it is validated (some drive an engine knob, the others
//! are only stored and returned).
#![deny(unsafe_code)]

use super::env::{self as config, Env};

/// A `hipFileSizeTConfigParameter_t` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizeParam {
    /// `hipFileParamProfileStats`: statistics level 0–3.
    ProfileStats = 0,
    /// `hipFileParamExecutionMaxIOQueueDepth`.
    MaxIoQueueDepth,
    /// `hipFileParamExecutionMaxIOThreads`: engine threads.
    MaxIoThreads,
    /// `hipFileParamExecutionMinIOThresholdSizeKB`: requests up to this size run inline.
    MinIoThresholdSizeKb,
    /// `hipFileParamExecutionMaxRequestParallelism`: threads one request may use (0 = all).
    MaxRequestParallelism,
    /// `hipFileParamPropertiesMaxDirectIOSizeKB`.
    MaxDirectIoSizeKb,
    /// `hipFileParamPropertiesMaxDeviceCacheSizeKB`: bounce-buffer budget.
    MaxDeviceCacheSizeKb,
    /// `hipFileParamPropertiesPerBufferCacheSizeKB`: bounce-buffer (chunk) size.
    PerBufferCacheSizeKb,
    /// `hipFileParamPropertiesMaxDevicePinnedMemSizeKB`.
    MaxDevicePinnedMemSizeKb,
    /// `hipFileParamPropertiesIOBatchsize`.
    IoBatchSize,
    /// `hipFileParamPollthresholdSizeKB`.
    PollThresholdSizeKb,
    /// `hipFileParamPropertiesBatchIOTimeoutMs`.
    BatchIoTimeoutMs,
}

/// A `hipFileBoolConfigParameter_t` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolParam {
    /// `hipFileParamPropertiesUsePollMode`.
    UsePollMode = 0,
    /// `hipFileParamPropertiesAllowCompatMode`.
    AllowCompatMode,
    /// `hipFileParamForceCompatMode`.
    ForceCompatMode,
    /// `hipFileParamFsMiscApiCheckAggressive`.
    FsMiscApiCheckAggressive,
    /// `hipFileParamExecutionParallelIO`.
    ExecutionParallelIo,
    /// `hipFileParamProfileNvtx`.
    ProfileNvtx,
    /// `hipFileParamPropertiesAllowSystemMemory`: the host backend.
    AllowSystemMemory,
    /// `hipFileParamUsePcip2pdma`.
    UsePciP2pDma,
    /// `hipFileParamPreferIOUring`.
    PreferIoUring,
    /// `hipFileParamForceOdirectMode`.
    ForceODirectMode,
    /// `hipFileParamSkipTopologyDetection`.
    SkipTopologyDetection,
    /// `hipFileParamStreamMemopsBypass`.
    StreamMemopsBypass,
}

/// A `hipFileStringConfigParameter_t` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StringParam {
    /// `hipFileParamLoggingLevel`.
    LoggingLevel = 0,
    /// `hipFileParamEnvLogfilePath`.
    EnvLogfilePath,
    /// `hipFileParamLogDir`.
    LogDir,
}

/// All size parameters in enum order.
pub const SIZE_PARAMS: [SizeParam; 12] = [
    SizeParam::ProfileStats,
    SizeParam::MaxIoQueueDepth,
    SizeParam::MaxIoThreads,
    SizeParam::MinIoThresholdSizeKb,
    SizeParam::MaxRequestParallelism,
    SizeParam::MaxDirectIoSizeKb,
    SizeParam::MaxDeviceCacheSizeKb,
    SizeParam::PerBufferCacheSizeKb,
    SizeParam::MaxDevicePinnedMemSizeKb,
    SizeParam::IoBatchSize,
    SizeParam::PollThresholdSizeKb,
    SizeParam::BatchIoTimeoutMs,
];

/// All boolean parameters in enum order.
pub const BOOL_PARAMS: [BoolParam; 12] = [
    BoolParam::UsePollMode,
    BoolParam::AllowCompatMode,
    BoolParam::ForceCompatMode,
    BoolParam::FsMiscApiCheckAggressive,
    BoolParam::ExecutionParallelIo,
    BoolParam::ProfileNvtx,
    BoolParam::AllowSystemMemory,
    BoolParam::UsePciP2pDma,
    BoolParam::PreferIoUring,
    BoolParam::ForceODirectMode,
    BoolParam::SkipTopologyDetection,
    BoolParam::StreamMemopsBypass,
];

/// All string parameters in enum order.
pub(crate) const STRING_PARAMS: [StringParam; 3] = [
    StringParam::LoggingLevel,
    StringParam::EnvLogfilePath,
    StringParam::LogDir,
];

impl TryFrom<i32> for SizeParam {
    type Error = ();
    fn try_from(v: i32) -> Result<Self, ()> {
        usize::try_from(v)
            .ok()
            .and_then(|i| SIZE_PARAMS.get(i).copied())
            .ok_or(())
    }
}

impl TryFrom<i32> for BoolParam {
    type Error = ();
    fn try_from(v: i32) -> Result<Self, ()> {
        usize::try_from(v)
            .ok()
            .and_then(|i| BOOL_PARAMS.get(i).copied())
            .ok_or(())
    }
}

impl TryFrom<i32> for StringParam {
    type Error = ();
    fn try_from(v: i32) -> Result<Self, ()> {
        usize::try_from(v)
            .ok()
            .and_then(|i| STRING_PARAMS.get(i).copied())
            .ok_or(())
    }
}

/// Largest engine thread count accepted.
pub(crate) const MAX_IO_THREADS: u64 = config::MAX_IO_THREADS as u64;
/// Largest batch size.
pub(crate) const MAX_BATCH: u64 = 128;

impl SizeParam {
    /// The value used when neither the API nor the environment sets one.
    pub fn default_value(self) -> u64 {
        match self {
            SizeParam::ProfileStats => 1,
            SizeParam::MaxIoQueueDepth => 128,
            SizeParam::MaxIoThreads => config::default_io_threads() as u64,
            SizeParam::MinIoThresholdSizeKb => (config::DEFAULT_INLINE_THRESHOLD >> 10) as u64,
            SizeParam::MaxRequestParallelism => 0,
            SizeParam::MaxDirectIoSizeKb => 16 << 10,
            SizeParam::MaxDeviceCacheSizeKb => (config::DEFAULT_BOUNCE_BUDGET >> 10) as u64,
            SizeParam::PerBufferCacheSizeKb => (config::DEFAULT_CHUNK_SIZE >> 10) as u64,
            SizeParam::MaxDevicePinnedMemSizeKb => 32 << 20,
            SizeParam::IoBatchSize => MAX_BATCH,
            SizeParam::PollThresholdSizeKb => 4,
            SizeParam::BatchIoTimeoutMs => 0,
        }
    }

    /// The value the environment gives, if any.
    pub fn env_value(self, env: &Env) -> Option<u64> {
        match self {
            SizeParam::ProfileStats => env.stats_level.map(|v| u64::from(v).min(3)),
            SizeParam::MaxIoThreads => env
                .io_threads
                .filter(|&n| n > 0)
                .map(|n| u64::from(n).min(MAX_IO_THREADS)),
            SizeParam::MinIoThresholdSizeKb => env.inline_threshold.map(|b| b >> 10),
            SizeParam::MaxDeviceCacheSizeKb => env.bounce_budget.map(|b| (b >> 10).max(4)),
            SizeParam::PerBufferCacheSizeKb => env
                .chunk_size
                .map(|b| (b.div_ceil(4096) * 4).clamp(4, 1 << 20)),
            _ => None,
        }
    }

    /// Whether `v` is acceptable.
    pub fn valid(self, v: u64) -> bool {
        match self {
            SizeParam::ProfileStats => v <= 3,
            SizeParam::MaxIoThreads => (1..=MAX_IO_THREADS).contains(&v),
            SizeParam::PerBufferCacheSizeKb => (4..=(1 << 20)).contains(&v) && v % 4 == 0,
            SizeParam::MaxDeviceCacheSizeKb => v >= 4,
            SizeParam::IoBatchSize => (1..=MAX_BATCH).contains(&v),
            _ => true,
        }
    }
}

impl BoolParam {
    /// The value used when neither the API nor the environment sets one.
    pub fn default_value(self) -> bool {
        matches!(
            self,
            BoolParam::AllowCompatMode
                | BoolParam::ExecutionParallelIo
                | BoolParam::AllowSystemMemory
        )
    }

    /// The value the environment gives, if any.
    pub fn env_value(self, env: &Env) -> Option<bool> {
        match self {
            BoolParam::AllowCompatMode => env.allow_compat,
            BoolParam::ForceCompatMode => env.force_compat,
            BoolParam::AllowSystemMemory => env.host_io,
            _ => None,
        }
    }
}

impl StringParam {
    /// The value used when neither the API nor the environment sets one.
    pub(crate) fn default_value(self) -> String {
        match self {
            StringParam::LoggingLevel => "warn".to_string(),
            StringParam::EnvLogfilePath | StringParam::LogDir => String::new(),
        }
    }

    /// The value the environment gives, if any (read at the call). `HIPFILE_LOG_FILE` names a
    /// file: in secure-execution mode it is ignored here as everywhere else, so the parameter
    /// never reports a path the library does not use.
    pub(crate) fn env_value(self) -> Option<String> {
        match self {
            StringParam::LoggingLevel => std::env::var("HIPFILE_LOG").ok(),
            StringParam::EnvLogfilePath => {
                crate::sys::secure::path_var("HIPFILE_LOG_FILE").and_then(|v| v.into_string().ok())
            }
            StringParam::LogDir => None,
        }
    }

    /// Whether `v` is acceptable (a log directory must exist, as cuFile requires).
    pub(crate) fn valid(self, v: &str) -> bool {
        match self {
            StringParam::LogDir => v.is_empty() || std::path::Path::new(v).is_dir(),
            _ => true,
        }
    }
}

/// Values set through the API and not yet applied (staged while the driver is closed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Staged {
    /// Size parameters by enum value.
    pub sizes: [Option<u64>; 12],
    /// Boolean parameters by enum value.
    pub bools: [Option<bool>; 12],
    /// String parameters by enum value.
    pub strings: [Option<String>; 3],
}

/// Every parameter's value in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParamValues {
    /// Size parameters by enum value.
    pub sizes: [u64; 12],
    /// Boolean parameters by enum value.
    pub bools: [bool; 12],
    /// String parameters by enum value.
    pub strings: [String; 3],
}

impl ParamValues {
    /// API value > environment > default.
    pub(crate) fn resolve(env: &Env, staged: &Staged) -> ParamValues {
        ParamValues {
            sizes: SIZE_PARAMS.map(|p| {
                staged.sizes[p as usize]
                    .or_else(|| p.env_value(env))
                    .unwrap_or_else(|| p.default_value())
            }),
            bools: BOOL_PARAMS.map(|p| {
                staged.bools[p as usize]
                    .or_else(|| p.env_value(env))
                    .unwrap_or_else(|| p.default_value())
            }),
            strings: STRING_PARAMS.map(|p| {
                staged.strings[p as usize]
                    .clone()
                    .or_else(|| p.env_value())
                    .unwrap_or_else(|| p.default_value())
            }),
        }
    }

    /// A size parameter.
    pub(crate) fn size(&self, p: SizeParam) -> u64 {
        self.sizes[p as usize]
    }

    /// A boolean parameter.
    pub(crate) fn flag(&self, p: BoolParam) -> bool {
        self.bools[p as usize]
    }

    /// A string parameter.
    pub(crate) fn string(&self, p: StringParam) -> &str {
        &self.strings[p as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_values_round_trip() {
        for (i, p) in SIZE_PARAMS.iter().enumerate() {
            assert_eq!(*p as usize, i);
            assert_eq!(SizeParam::try_from(i as i32), Ok(*p));
        }
        for (i, p) in BOOL_PARAMS.iter().enumerate() {
            assert_eq!(*p as usize, i);
            assert_eq!(BoolParam::try_from(i as i32), Ok(*p));
        }
        for (i, p) in STRING_PARAMS.iter().enumerate() {
            assert_eq!(*p as usize, i);
            assert_eq!(StringParam::try_from(i as i32), Ok(*p));
        }
        assert!(SizeParam::try_from(12).is_err());
        assert!(SizeParam::try_from(-1).is_err());
        assert!(BoolParam::try_from(12).is_err());
        assert!(StringParam::try_from(3).is_err());
    }

    #[test]
    fn precedence_api_env_default() {
        let env = Env {
            io_threads: Some(3),
            allow_compat: Some(false),
            ..Default::default()
        };
        let mut staged = Staged::default();
        let v = ParamValues::resolve(&env, &staged);
        assert_eq!(v.size(SizeParam::MaxIoThreads), 3);
        assert!(!v.flag(BoolParam::AllowCompatMode));
        assert_eq!(v.size(SizeParam::PerBufferCacheSizeKb), 4096);
        staged.sizes[SizeParam::MaxIoThreads as usize] = Some(7);
        staged.bools[BoolParam::AllowCompatMode as usize] = Some(true);
        let v = ParamValues::resolve(&env, &staged);
        assert_eq!(v.size(SizeParam::MaxIoThreads), 7);
        assert!(v.flag(BoolParam::AllowCompatMode));
    }

    #[test]
    fn validation() {
        assert!(!SizeParam::MaxIoThreads.valid(0));
        assert!(!SizeParam::MaxIoThreads.valid(65));
        assert!(SizeParam::MaxIoThreads.valid(64));
        assert!(!SizeParam::PerBufferCacheSizeKb.valid(6));
        assert!(SizeParam::PerBufferCacheSizeKb.valid(8));
        assert!(!SizeParam::ProfileStats.valid(4));
        assert!(!SizeParam::IoBatchSize.valid(129));
        assert!(StringParam::LogDir.valid("/"));
        assert!(!StringParam::LogDir.valid("/no/such/dir/hipfile"));
    }
}
