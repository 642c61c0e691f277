//! `hipFileStatsLevel1/2/3_t` from a statistics [`Snapshot`] (the structures mirror
//! cuFile's `CUfileStatsLevel1/2/3_t`).
//!
//! Level 1 (decisions beyond the spec are marked *ours*):
//! - `read_*`/`write_*` count **every backend**, Host included (*ours*: cuFile counts all
//!   I/O, and an application reading into host memory expects to see it): the extension's
//!   totals, which are the \[D\] per-GPU sums plus Host I/O plus I/O whose buffer has no
//!   per-GPU slot. For a block without our extension (not ours) the \[D\] sums are used.
//!   `read_ops.ok` = successful reads, `read_ops.err` = failed ones, `read_bytes` = bytes,
//!   `read_lat_sum_us` = summed elapsed time, `read_lat_avg_us` = sum / ok (0 without I/O),
//!   `read_bw_bytes_per_sec` = bytes × 10^6 / lat_sum (0 when lat_sum is 0).
//! - `hdl_register_ops.ok` = file registrations, `buf_register_ops.ok` = buffer
//!   registrations; `hdl_deregister_ops.ok` / `buf_deregister_ops.ok` = deregistrations
//!   (*ours*, from the extension). Every `.err` of these is 0 (not tracked).
//! - `read/write_ops_per_sec` and every `batch_*` field are 0 (not tracked, as upstream).
//!
//! Level 2: `basic` is level 1. `read_size_kb_hist` / `write_size_kb_hist` (*ours*; upstream
//! leaves them 0) count successful I/Os by size with the log2 KiB slots cuFile uses: slot
//! `i ≥ 1` holds sizes in `[2^i, 2^(i+1))` KiB. Our 16 buckets map onto them losslessly:
//! bucket 0 (below 4 KiB) → slot 0, which therefore holds every size below 4 KiB (slot 1
//! stays 0); bucket `b` in 1..=14 (`[2^(b+1), 2^(b+2))` KiB) → slot `b + 1`; bucket 15
//! (64 MiB and above) → slot 16, which holds everything from 64 MiB up (slots 17–31 stay 0).
//!
//! Level 3: `detailed` is level 2. `per_gpu_stats[i]` is GPU `i` (indexed by device
//! ordinal, not packed): `read_bytes`, `read_duration_us` (summed elapsed time),
//! `n_total_reads`, `n_nvfs_reads` (GPU-direct: the fastpath), `n_posix_reads` (fallback +
//! host), `n_unaligned_reads`, `n_reads_err`, `read_bw_bytes_per_sec` (bytes × 10^6 /
//! duration), the same for writes; `n_p2p_*`, `uuid` and the other fields are 0. GPU-direct
//! operations are counted as `nvfs` ones, as upstream does, so that
//! `n_total = n_nvfs + n_posix` (rocprofiler-systems' hipFile telemetry relies on it).
//! `num_gpus` is the number of GPUs with any record, so consumers should scan all 16 entries.

use super::abi::{
    hipFileOpCounter_t, hipFilePerGpuStats_t, hipFileStatsLevel1_t, hipFileStatsLevel2_t,
    hipFileStatsLevel3_t,
};
use crate::stats::buckets::BUCKETS;
use crate::stats::layout::MAX_GPUS;
use crate::stats::snapshot::{Snapshot, Totals};
use crate::vocab::Direction;

/// `bytes × 10^6 / time_us`, 0 when `time_us` is 0.
fn bytes_per_sec(bytes: u64, time_us: u64) -> u64 {
    if time_us == 0 {
        0
    } else {
        u64::try_from(u128::from(bytes) * 1_000_000 / u128::from(time_us)).unwrap_or(u64::MAX)
    }
}

fn avg(sum: u64, n: u64) -> u64 {
    sum.checked_div(n).unwrap_or(0)
}

fn ok(n: u64) -> hipFileOpCounter_t {
    hipFileOpCounter_t { ok: n, err: 0 }
}

/// The 32-slot KiB histogram slot of size bucket `b`.
pub(crate) const fn kib_hist_slot(b: usize) -> usize {
    match b {
        0 => 0,
        b if b < BUCKETS - 1 => b + 1,
        _ => BUCKETS,
    }
}

/// Level 1 of `s`.
pub(crate) fn l1(s: &Snapshot) -> hipFileStatsLevel1_t {
    let r = s.all_backends(Direction::Read);
    let w = s.all_backends(Direction::Write);
    let (file_dereg, buf_dereg) = s.ext.as_ref().map_or((0, 0), |e| {
        (e.file_deregistrations, e.buffer_deregistrations)
    });
    hipFileStatsLevel1_t {
        read_ops: hipFileOpCounter_t {
            ok: r.ops,
            err: r.errors,
        },
        write_ops: hipFileOpCounter_t {
            ok: w.ops,
            err: w.errors,
        },
        hdl_register_ops: ok(s.file_registrations),
        hdl_deregister_ops: ok(file_dereg),
        buf_register_ops: ok(s.buffer_registrations),
        buf_deregister_ops: ok(buf_dereg),
        read_bytes: r.bytes,
        write_bytes: w.bytes,
        read_bw_bytes_per_sec: bytes_per_sec(r.bytes, r.time_us),
        write_bw_bytes_per_sec: bytes_per_sec(w.bytes, w.time_us),
        read_lat_avg_us: avg(r.time_us, r.ops),
        write_lat_avg_us: avg(w.time_us, w.ops),
        read_lat_sum_us: r.time_us,
        write_lat_sum_us: w.time_us,
        ..hipFileStatsLevel1_t::default()
    }
}

/// Level 2 of `s`.
pub(crate) fn l2(s: &Snapshot) -> hipFileStatsLevel2_t {
    let mut out = hipFileStatsLevel2_t {
        basic: l1(s),
        ..hipFileStatsLevel2_t::default()
    };
    let [read, write] = s.size_histogram();
    for (b, (r, w)) in read.into_iter().zip(write).enumerate() {
        out.read_size_kb_hist[kib_hist_slot(b)] += r;
        out.write_size_kb_hist[kib_hist_slot(b)] += w;
    }
    out
}

fn gpu_stats(s: &Snapshot, g: usize) -> hipFilePerGpuStats_t {
    let row = &s.gpus[g];
    let dir = |d: Direction| -> (Totals, Totals, Totals) {
        (row[0].totals(d), row[1].totals(d), s.host_gpu_totals(g, d))
    };
    let (rf, rb, rh) = dir(Direction::Read);
    let (wf, wb, wh) = dir(Direction::Write);
    let (r, w) = (rf.plus(rb).plus(rh), wf.plus(wb).plus(wh));
    hipFilePerGpuStats_t {
        read_bytes: r.bytes,
        read_bw_bytes_per_sec: bytes_per_sec(r.bytes, r.time_us),
        read_duration_us: r.time_us,
        n_total_reads: r.ops,
        n_nvfs_reads: rf.ops,
        n_posix_reads: rb.ops.saturating_add(rh.ops),
        n_unaligned_reads: r.unaligned,
        n_reads_err: r.errors,
        write_bytes: w.bytes,
        write_bw_bytes_per_sec: bytes_per_sec(w.bytes, w.time_us),
        write_duration_us: w.time_us,
        n_total_writes: w.ops,
        n_nvfs_writes: wf.ops,
        n_posix_writes: wb.ops.saturating_add(wh.ops),
        n_unaligned_writes: w.unaligned,
        n_writes_err: w.errors,
        ..hipFilePerGpuStats_t::default()
    }
}

/// Level 3 of `s`.
pub(crate) fn l3(s: &Snapshot) -> hipFileStatsLevel3_t {
    let mut out = hipFileStatsLevel3_t {
        detailed: l2(s),
        ..hipFileStatsLevel3_t::default()
    };
    for g in 0..MAX_GPUS {
        if s.gpu_active(g) {
            out.num_gpus += 1;
            out.per_gpu_stats[g] = gpu_stats(s, g);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::buckets::{bucket, lower_bound, upper_bound};

    #[test]
    fn kib_slots_hold_their_sizes() {
        assert_eq!(kib_hist_slot(0), 0);
        assert_eq!(kib_hist_slot(1), 2);
        assert_eq!(kib_hist_slot(14), 15);
        assert_eq!(kib_hist_slot(15), 16);
        // Slot i >= 2 covers [2^i, 2^(i+1)) KiB: the bucket's bounds in KiB agree.
        for b in 1..BUCKETS - 1 {
            let slot = kib_hist_slot(b);
            assert_eq!(lower_bound(b) >> 10, 1 << slot);
            assert_eq!(upper_bound(b).unwrap() >> 10, 1 << (slot + 1));
        }
        assert_eq!(kib_hist_slot(bucket(64 << 20)), 16);
    }

    #[test]
    fn rates() {
        assert_eq!(bytes_per_sec(1000, 0), 0);
        assert_eq!(bytes_per_sec(1000, 1000), 1_000_000);
        assert_eq!(bytes_per_sec(u64::MAX, 1), u64::MAX);
        assert_eq!(avg(10, 0), 0);
        assert_eq!(avg(10, 4), 2);
    }
}
