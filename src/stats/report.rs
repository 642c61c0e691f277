//! The text report of a statistics block (what `ais-stats` prints, and what
//! `hipFileStatsGenerateReport` writes).
//!
//! Text, \[R\] layout: the two header lines and four byte totals. \[D\] layout: the header lines,
//! the three registration/rejection counters, a blank line, then for Fastpath and Fallback ×
//! Read and Write five lines (total size, average bandwidth, average latency, errors,
//! unaligned) each group followed by a blank line, then a `GPU <i>:` section for every GPU
//! whose `inUse` is set: four histogram tables ("IO Size Histogram" = I/O counts per size
//! bucket, "IO Bandwidth Histogram", "IO Latency Histogram", "IO Errors Histogram" = failed
//! I/Os per bucket of the requested size), each a title line, a header row (`IO Size (KiB)`
//! left-aligned in 16 columns, then four right-aligned 34-column headings) and 16 rows,
//! followed by a blank line, then four `<Backend> <Op> Unaligned Count: N` lines and a blank
//! line. Unknown versions print only the two header lines.
//!
//! Numbers: counts and byte totals are integers. Bandwidth is `bytes / 2^30` GiB divided by
//! `time_us / 10^6` seconds (0 when no time was recorded) and latency is `time_us / count`
//! (0 without I/O); both are printed the way C++ `operator<<` prints a `double` by default
//! (`%g`, six significant digits): `0`, `1.5`, `333.333`, `1.23457e+06`.
//!
//! Our extension, when present, follows under the heading `Extended Stats (hipfile
//! extension, version N)`: Host-backend lines in the same five-line form, refusals per
//! backend and reason, fastpath→fallback retries, async and batch submissions,
//! deregistrations and bounce-buffer use. AMD's reader never prints it.

use std::fmt::Write as _;

use super::buckets::{label, BUCKETS};
use super::layout::{EXT_BACKEND_NAMES, REFUSALS, REFUSAL_SLOTS, V1_BACKENDS};
use super::snapshot::{Extension, GpuBackendStats, Layout, Snapshot, Totals};
use crate::vocab::BackendKind;
use crate::vocab::Direction;

const OPS: [(Direction, &str); 2] = [(Direction::Read, "Read"), (Direction::Write, "Write")];
const V1_KINDS: [(BackendKind, &str); V1_BACKENDS] = [
    (BackendKind::Fastpath, "Fastpath"),
    (BackendKind::Fallback, "Fallback"),
];

/// `value` as C's `%g` (and C++'s default `operator<<` for `double`) prints it.
pub(crate) fn fmt_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Round to six significant digits first: the exponent after rounding decides the style.
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    if !(-4..6).contains(&exp) {
        let m = trim_fraction(mantissa);
        format!(
            "{m}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        )
    } else {
        trim_fraction(&format!("{x:.*}", (5 - exp) as usize)).to_string()
    }
}

fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// GiB/s: `bytes / 2^30` over `time_us / 10^6` seconds; 0 without time.
pub(crate) fn bandwidth_gib_s(bytes: u64, time_us: u64) -> f64 {
    if time_us == 0 {
        0.0
    } else {
        (bytes as f64 / (1u64 << 30) as f64) / (time_us as f64 / 1e6)
    }
}

/// Average latency in µs: `time_us / count`; 0 without I/O.
pub(crate) fn latency_us(time_us: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        time_us as f64 / count as f64
    }
}

fn five_lines(out: &mut String, backend: &str, op: &str, t: &Totals) {
    let _ = writeln!(out, "Total {backend} {op} Size (B): {}", t.bytes);
    let _ = writeln!(
        out,
        "Average {backend} {op} Bandwidth (GiB/s): {}",
        fmt_g(bandwidth_gib_s(t.bytes, t.time_us))
    );
    let _ = writeln!(
        out,
        "Average {backend} {op} Latency (us): {}",
        fmt_g(latency_us(t.time_us, t.ops))
    );
    let _ = writeln!(out, "Total {backend} {op} Errors: {}", t.errors);
    let _ = writeln!(out, "Total {backend} {op} Unaligned: {}", t.unaligned);
    out.push('\n');
}

/// The text report of `s` (then our extension).
pub(crate) fn text(s: &Snapshot) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "AIS-STATS Version: {}", s.version);
    let _ = writeln!(out, "HipFile Stats Level: {}", s.level);
    match s.layout {
        Layout::Unknown => {}
        Layout::Retired => {
            let _ = writeln!(out, "Total fast path reads (B): {}", s.retired[0]);
            let _ = writeln!(out, "Total fast path writes (B): {}", s.retired[1]);
            let _ = writeln!(out, "Total fallback path reads (B): {}", s.retired[2]);
            let _ = writeln!(out, "Total fallback path writes (B): {}", s.retired[3]);
        }
        Layout::V1 => {
            v1_text(&mut out, s);
            if let Some(ext) = &s.ext {
                extension_text(&mut out, ext);
            }
        }
    }
    out
}

type Cell = fn(&GpuBackendStats, usize, usize) -> String;

fn v1_text(out: &mut String, s: &Snapshot) {
    let _ = writeln!(out, "File Handle Registrations: {}", s.file_registrations);
    let _ = writeln!(out, "Buffer Registrations: {}", s.buffer_registrations);
    let _ = writeln!(out, "Fastpath Rejections: {}", s.fastpath_rejections);
    out.push('\n');
    for (kind, name) in V1_KINDS {
        for (dir, op) in OPS {
            five_lines(out, name, op, &s.v1_totals(kind, dir));
        }
    }
    let tables: [(&str, &str, Cell); 4] = [
        ("IO Size Histogram", "Count", |b, d, k| {
            b.io_count[d][k].to_string()
        }),
        ("IO Bandwidth Histogram", "Bandwidth (GiB/s)", |b, d, k| {
            fmt_g(bandwidth_gib_s(b.io_size_bytes[d][k], b.io_time_us[d][k]))
        }),
        ("IO Latency Histogram", "Latency (us)", |b, d, k| {
            fmt_g(latency_us(b.io_time_us[d][k], b.io_count[d][k]))
        }),
        ("IO Errors Histogram", "Errors", |b, d, k| {
            b.error_count[d][k].to_string()
        }),
    ];
    for (g, row) in s.gpus.iter().enumerate() {
        if !s.gpu_in_use(g) {
            continue;
        }
        let _ = writeln!(out, "GPU {g}:");
        for (title, what, cell) in tables {
            let _ = writeln!(out, "{title}");
            let _ = write!(out, "{:<16}", "IO Size (KiB)");
            for (_, name) in V1_KINDS {
                for (_, op) in OPS {
                    let _ = write!(out, "{:>34}", format!("{name} {op} {what}"));
                }
            }
            out.push('\n');
            for k in 0..BUCKETS {
                let _ = write!(out, "{:<16}", label(k));
                for b in row.iter() {
                    for d in 0..2 {
                        let _ = write!(out, "{:>34}", cell(b, d, k));
                    }
                }
                out.push('\n');
            }
            out.push('\n');
        }
        for (b, (_, name)) in row.iter().zip(V1_KINDS) {
            for (d, (_, op)) in OPS.iter().enumerate() {
                let _ = writeln!(out, "{name} {op} Unaligned Count: {}", b.unaligned_count[d]);
            }
        }
        out.push('\n');
    }
}

/// Name and description of refusal slot `slot`.
fn refusal_name(slot: usize) -> (String, &'static str) {
    match REFUSALS.get(slot) {
        Some(r) => (format!("{r:?}"), r.describe()),
        None => (
            format!("Reason{slot}"),
            "a reason this reader does not know",
        ),
    }
}

fn extension_text(out: &mut String, e: &Extension) {
    let _ = writeln!(
        out,
        "Extended Stats (hipfile extension, version {})",
        e.version
    );
    for (d, (_, op)) in OPS.iter().enumerate() {
        five_lines(out, "Host", op, &e.io[2][d]);
    }
    let _ = writeln!(out, "Fastpath To Fallback Retries: {}", e.fallback_retries);
    for (b, name) in EXT_BACKEND_NAMES.iter().enumerate() {
        let total = e.refusals[b].iter().fold(0u64, |a, &v| a.saturating_add(v));
        let _ = writeln!(out, "{name} Refusals: {total}");
        for slot in 0..REFUSAL_SLOTS {
            let n = e.refusals[b][slot];
            if n != 0 {
                let (id, why) = refusal_name(slot);
                let _ = writeln!(out, "  {id} ({why}): {n}");
            }
        }
    }
    let _ = writeln!(out, "Async Read Submissions: {}", e.async_ops[0]);
    let _ = writeln!(out, "Async Write Submissions: {}", e.async_ops[1]);
    let _ = writeln!(out, "Batch Read Submissions: {}", e.batch_ops[0]);
    let _ = writeln!(out, "Batch Write Submissions: {}", e.batch_ops[1]);
    let _ = writeln!(
        out,
        "File Handle Deregistrations: {}",
        e.file_deregistrations
    );
    let _ = writeln!(out, "Buffer Deregistrations: {}", e.buffer_deregistrations);
    let _ = writeln!(out, "Bounce Buffer Bytes In Use: {}", e.bounce_bytes_in_use);
    let _ = writeln!(out, "Bounce Buffer Bytes Peak: {}", e.bounce_bytes_peak);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::layout::{RETIRED_SIZE, V1_SIZE};

    #[test]
    fn percent_g() {
        assert_eq!(fmt_g(0.0), "0");
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(1.5), "1.5");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(1000.0 / 3.0), "333.333");
        assert_eq!(fmt_g(123456.7), "123457");
        assert_eq!(fmt_g(999999.5), "1e+06");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_g(0.0001), "0.0001");
        assert_eq!(fmt_g(0.00001), "1e-05");
        assert_eq!(fmt_g(0.000123456789), "0.000123457");
        assert_eq!(fmt_g(-2.25), "-2.25");
        assert_eq!(fmt_g(1e100), "1e+100");
    }

    #[test]
    fn bandwidth_and_latency() {
        assert_eq!(bandwidth_gib_s(1 << 30, 1_000_000), 1.0);
        assert_eq!(bandwidth_gib_s(1 << 30, 0), 0.0);
        assert_eq!(latency_us(30, 3), 10.0);
        assert_eq!(latency_us(30, 0), 0.0);
    }

    #[test]
    fn retired_report() {
        let mut b = vec![0u8; RETIRED_SIZE];
        b[0..8].copy_from_slice(&1u64.to_le_bytes());
        b[8..16].copy_from_slice(&1u64.to_le_bytes());
        b[16..24].copy_from_slice(&4096u64.to_le_bytes());
        let s = Snapshot::from_bytes(&b).unwrap();
        assert_eq!(
            text(&s),
            "AIS-STATS Version: 1\nHipFile Stats Level: 1\nTotal fast path reads (B): 4096\n\
             Total fast path writes (B): 0\nTotal fallback path reads (B): 0\nTotal fallback path writes (B): 0\n"
        );
    }

    #[test]
    fn unknown_report_has_two_lines() {
        let mut b = vec![0u8; V1_SIZE];
        b[0..8].copy_from_slice(&7u64.to_le_bytes());
        b[8..16].copy_from_slice(&2u64.to_le_bytes());
        let s = Snapshot::from_bytes(&b).unwrap();
        assert_eq!(text(&s), "AIS-STATS Version: 7\nHipFile Stats Level: 2\n");
    }

    #[test]
    fn gpu_tables_have_fixed_columns() {
        let mut b = vec![0u8; V1_SIZE];
        b[0..8].copy_from_slice(&1u64.to_le_bytes());
        b[8..16].copy_from_slice(&1u64.to_le_bytes());
        // GPU 1, Fastpath: in use, one 4 KiB read in 2 us.
        let base = 40 + 2 * 1048;
        let put =
            |b: &mut Vec<u8>, off: usize, v: u64| b[off..off + 8].copy_from_slice(&v.to_le_bytes());
        put(&mut b, base, 1);
        put(&mut b, base + 8 + 8, 4096);
        put(&mut b, base + 264 + 8, 1);
        put(&mut b, base + 520 + 8, 2);
        let s = Snapshot::from_bytes(&b).unwrap();
        let t = text(&s);
        assert!(!t.contains("GPU 0:"));
        let lines: Vec<&str> = t.lines().collect();
        let gpu = lines
            .iter()
            .position(|l| *l == "GPU 1:")
            .expect("GPU 1 section");
        assert_eq!(lines[gpu + 1], "IO Size Histogram");
        let header = lines[gpu + 2];
        assert_eq!(header.len(), 16 + 4 * 34);
        assert!(header.starts_with("IO Size (KiB)   "));
        assert!(header.ends_with("Fallback Write Count"));
        let row = lines[gpu + 4];
        assert_eq!(&row[..16], "4-8             ");
        assert_eq!(row.len(), 16 + 4 * 34);
        assert_eq!(row[16..50].trim_start(), "1");
        let lat = lines
            .iter()
            .position(|l| *l == "IO Latency Histogram")
            .unwrap();
        assert_eq!(lines[lat + 3][16..50].trim_start(), "2");
        assert!(
            t.contains("\nFastpath Read Unaligned Count: 0\nFastpath Write Unaligned Count: 0\n")
        );
        assert!(t.contains("Total Fastpath Read Size (B): 4096\n"));
        assert!(t.contains("Average Fastpath Read Latency (us): 2\n"));
        // 4096 B in 2 us = 2.048e9 B/s = 1.90735 GiB/s.
        assert!(t.contains("Average Fastpath Read Bandwidth (GiB/s): 1.90735\n"));
    }
}
