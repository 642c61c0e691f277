//! The one rule for the cuFile version this library reports and the layouts it fills.
//!
//! Every cuFile consumer of a process calls the same `libcufile.so.0`, whatever `cufile.h` it
//! was compiled against, and the ABI gives the library no way to learn the size of the
//! structure a caller allocated. So the library must never write past the smallest layout of a
//! structure that any supported consumer (cuFile 1.7 and later) may have allocated, and the
//! version it reports must name the layouts it fills, so that a consumer that checks the
//! version knows what it gets.
//!
//! What the ABI writes into, per cuFile version 1.7..1.20 (x86-64):
//!
//! | output | written by | size in 1.7..1.20 |
//! | --- | --- | --- |
//! | `CUfileStatsLevel1_t` | `cuFileGetStatsL1` | 512 in 1.15..1.18, 624 from 1.19 (readv/writev counters appended); absent before 1.15 |
//! | `CUfileStatsLevel2_t` | `cuFileGetStatsL2` | 1024 / 1136: level 1 first, so the histograms move by 112 bytes |
//! | `CUfileStatsLevel3_t` | `cuFileGetStatsL3` | 5000 / 5112: likewise `num_gpus` and the per-GPU records |
//! | `CUfileDrvProps_t` | `cuFileDriverGetProperties` | 56 (written whole): one layout in every header from 1.11 on, and a declaration without the last member still pads to 56 |
//! | `CUfileIOEvents_t[*nr]` | `cuFileBatchIOGetStatus` | 24 each in every version; at most `*nr` written |
//! | `unsigned`, `int`, `CUfileP2PFlags_t`, `long` | batch status count, `cuFileGetVersion`, `cuFileGetStatsLevel`, `cuFileDriverGetP2PFlags` | 4 bytes (`long`: returned) |
//! | `size_t` | `cuFileGetParameterSizeT`, `…MinMaxValue` (both), `cuFileGetBARSizeInKB` | 8 |
//! | `bool` | `cuFileGetParameterBool` | 1 |
//! | `char[len]` | `cuFileGetParameterString` | the value and its NUL, never more than `len` (else nothing) |
//! | `size_t[len]` twice | `cuFileGet…SlabArray` | exactly `len` entries, and only when `len` is the array's length |
//! | `CUfileHandle_t`, `CUfileBatchHandle_t` | `cuFileHandleRegister`, `cuFileBatchIOSetUp` | a pointer |
//! | `ssize_t` | `*bytes_p` of `cuFileReadAsync`/`WriteAsync` (when the stream runs it) | 8 |
//! | caller memory | `cuFileRead`, `cuFileReadv`, batch and stream reads | at most the bytes asked for |
//!
//! (`CUfileIOParams_t` entries are only read; their status fields are never written.) Only the
//! statistics structures differ between versions, and no layout serves both sides: a 1.19
//! consumer reads the level-2 histograms 112 bytes further on than a 1.15..1.18 one.
//!
//! The rule: the library reports **1180** (cuFile 1.18: every call 1.18 has, which is all
//! this library implements except `cuFileReadv`/`cuFileWritev`) and fills the 1.15..1.18
//! layouts, which no consumer of any version can have allocated less room for. The 1.19
//! readv/writev counters are then not shown (those calls still work). A deployment whose every
//! cuFile consumer was built against a 1.19 or newer `cufile.h` (the one in `include/` is one)
//! declares it with `HIPFILE_CUFILE_API_LEVEL=1.19`: then the library reports **1190** and
//! fills the 1.19 layouts. The level is read once per process, at the first call that needs it,
//! so a process never sees two.
//!
//! Not chosen: filling the 1.19 layouts (what NVIDIA's 1.19 library does: it overruns the heap
//! of a consumer built against 1.15..1.18, as CUDA 13.0's `cuda.bindings`); reporting 1190
//! while filling 1.18's (a 1.19 consumer that trusts the version reads misplaced histograms);
//! an opt-in through the API (cuFile has no call or parameter by which a consumer declares its
//! header, and an invented parameter index is refused by NVIDIA's library).

use std::sync::OnceLock;

use cufile_abi::{STATS_L1_READV_OFFSET, STATS_L1_SIZE, STATS_L2_SIZE, STATS_L3_SIZE};

/// The environment variable by which a deployment declares 1.19 consumers only.
pub(crate) const ENV: &str = "HIPFILE_CUFILE_API_LEVEL";

/// The layouts this process fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// cuFile 1.15..1.18: statistics 512 / 1024 / 5000 bytes (the default).
    V1_18,
    /// cuFile 1.19 and 1.20: statistics 624 / 1136 / 5112 bytes.
    V1_19,
}

/// The statistics structures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stats {
    L1,
    L2,
    L3,
}

/// Bytes the 1.19 readv/writev counters add to level 1 (and so to levels 2 and 3).
const READV_BYTES: usize = STATS_L1_SIZE - STATS_L1_READV_OFFSET;

impl Level {
    /// The value of `HIPFILE_CUFILE_API_LEVEL`: `1.18`/`1180` or `1.19`/`1190`; `None` for
    /// anything else.
    pub(crate) fn parse(text: &str) -> Option<Level> {
        match text.trim() {
            "1.18" | "1180" => Some(Level::V1_18),
            "1.19" | "1190" => Some(Level::V1_19),
            _ => None,
        }
    }

    /// What `cuFileGetVersion` answers (`1000 * major + 10 * minor`).
    pub(crate) fn version(self) -> i32 {
        match self {
            Level::V1_18 => 1180,
            Level::V1_19 => 1190,
        }
    }

    /// Size of a statistics structure at this level.
    pub(crate) fn size(self, s: Stats) -> usize {
        let full = match s {
            Stats::L1 => STATS_L1_SIZE,
            Stats::L2 => STATS_L2_SIZE,
            Stats::L3 => STATS_L3_SIZE,
        };
        match self {
            Level::V1_18 => full - READV_BYTES,
            Level::V1_19 => full,
        }
    }

    /// The bytes of statistics structure `s` at this level, from the complete 1.19 level-3
    /// image `full`: the 1.18 layouts are the 1.19 ones without the readv/writev counters.
    pub(crate) fn stats_bytes(self, full: &[u8], s: Stats) -> Vec<u8> {
        assert_eq!(full.len(), STATS_L3_SIZE);
        let mut out = match self {
            Level::V1_19 => full.to_vec(),
            Level::V1_18 => [&full[..STATS_L1_READV_OFFSET], &full[STATS_L1_SIZE..]].concat(),
        };
        out.truncate(self.size(s));
        out
    }
}

/// The level of this process: `HIPFILE_CUFILE_API_LEVEL` at the first call that asks, else 1.18.
pub(crate) fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| match std::env::var(ENV) {
        Err(_) => Level::V1_18,
        Ok(v) => Level::parse(&v).unwrap_or_else(|| {
            crate::log::warn(&format!(
                "{ENV}={v:?} is neither 1.18 nor 1.19: cuFile 1.18 layouts are filled"
            ));
            Level::V1_18
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_those_of_each_header() {
        let v18: Vec<usize> = [Stats::L1, Stats::L2, Stats::L3]
            .iter()
            .map(|&s| Level::V1_18.size(s))
            .collect();
        let v19: Vec<usize> = [Stats::L1, Stats::L2, Stats::L3]
            .iter()
            .map(|&s| Level::V1_19.size(s))
            .collect();
        assert_eq!(v18, [512, 1024, 5000]);
        assert_eq!(v19, [624, 1136, 5112]);
        assert_eq!(
            (Level::V1_18.version(), Level::V1_19.version()),
            (1180, 1190)
        );
    }

    #[test]
    fn the_variable_takes_two_spellings_of_two_levels() {
        assert_eq!(Level::parse("1.19"), Some(Level::V1_19));
        assert_eq!(Level::parse(" 1190\n"), Some(Level::V1_19));
        assert_eq!(Level::parse("1.18"), Some(Level::V1_18));
        assert_eq!(Level::parse("1180"), Some(Level::V1_18));
        assert_eq!(Level::parse("1.20"), None);
        assert_eq!(Level::parse(""), None);
    }

    #[test]
    fn the_1_18_layout_leaves_out_the_readv_counters_and_moves_the_rest_up() {
        // Each byte of the 1.19 image holds its offset / 8 (mod 256): a word's identity.
        let full: Vec<u8> = (0..STATS_L3_SIZE).map(|i| (i / 8) as u8).collect();
        let l3 = Level::V1_18.stats_bytes(&full, Stats::L3);
        assert_eq!(l3.len(), 5000);
        assert_eq!(l3[504], 63, "last_batch_write_bytes stays at 504");
        assert_eq!(
            l3[512],
            (624 / 8) as u8,
            "read_size_kb_hist[0]: 624 in 1.19, 512 here"
        );
        assert_eq!(
            l3[1024],
            (1136 / 8) as u8,
            "num_gpus: 1136 in 1.19, 1024 here"
        );
        assert_eq!(l3[4999], (5111 / 8) as u8);
        let l2 = Level::V1_18.stats_bytes(&full, Stats::L2);
        assert_eq!(&l2[..], &l3[..1024]);
        let l1 = Level::V1_19.stats_bytes(&full, Stats::L1);
        assert_eq!(&l1[..], &full[..624]);
    }
}
