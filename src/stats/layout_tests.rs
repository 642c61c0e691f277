//! The statistics block's fixed facts: the size buckets, AMD's `StatsV1`
//! layout AMD's `ais-stats` reads (sizes and offsets), our extension after it, and the
//! decoding and report of blocks written by AMD's library (release and development layouts).
//! (The JSON form of the same AMD block is checked by the `hipfile` tool's `stats` tests.)

use std::mem::{offset_of, size_of};

use crate::stats::buckets::{bucket, label};
use crate::stats::layout::*;
use crate::stats::{report, Layout, Snapshot};

#[test]
fn bucket_math() {
    let cases: [(u64, usize); 13] = [
        (0, 0),
        (1, 0),
        (4095, 0),
        (4096, 1),
        (8191, 1),
        (8192, 2),
        (12288, 2),
        (16384, 3),
        (1 << 20, 9),
        (32 << 20, 14),
        ((64 << 20) - 1, 14),
        (64 << 20, 15),
        (u64::MAX, 15),
    ];
    for (bytes, want) in cases {
        assert_eq!(bucket(bytes), want, "bucket({bytes})");
    }
    let labels: Vec<String> = (0..16).map(label).collect();
    assert_eq!(labels[..4], ["0-4", "4-8", "8-16", "16-32"]);
    assert_eq!(labels[14], "32768-65536");
    assert_eq!(labels[15], "65536-...");
}

#[test]
fn v1_layout_matches_amd() {
    assert_eq!(size_of::<Histogram>(), 16 * 8);
    assert_eq!(size_of::<PerGpuStatsV1>(), 1048);
    assert_eq!(offset_of!(PerGpuStatsV1, in_use), 0);
    assert_eq!(offset_of!(PerGpuStatsV1, io_size_bytes), 8);
    assert_eq!(offset_of!(PerGpuStatsV1, io_count), 8 + 256);
    assert_eq!(offset_of!(PerGpuStatsV1, io_time_us), 8 + 2 * 256);
    assert_eq!(offset_of!(PerGpuStatsV1, error_count), 8 + 3 * 256);
    assert_eq!(offset_of!(PerGpuStatsV1, unaligned_count), 8 + 4 * 256);
    assert_eq!(size_of::<StatsV1>(), 33_576);
    assert_eq!(V1_SIZE, 40 + 16 * 2 * 1048);
    assert_eq!(offset_of!(StatsV1, version), 0);
    assert_eq!(offset_of!(StatsV1, level), 8);
    assert_eq!(offset_of!(StatsV1, file_registrations), 16);
    assert_eq!(offset_of!(StatsV1, buffer_registrations), 24);
    assert_eq!(offset_of!(StatsV1, fastpath_rejections), 32);
    assert_eq!(offset_of!(StatsV1, per_gpu), 40);
    assert_eq!(RETIRED_SIZE, 528);
}

#[test]
fn extension_follows_the_v1_block() {
    assert_eq!(offset_of!(SharedStats, v1), 0);
    assert_eq!(offset_of!(SharedStats, ext), V1_SIZE);
    assert_eq!(SHARED_SIZE, V1_SIZE + EXT_V1_SIZE);
    assert_eq!(offset_of!(ExtensionV1, magic), 0);
    assert_eq!(offset_of!(ExtensionV1, version), 8);
    assert_eq!(offset_of!(ExtensionV1, size), 16);
    assert_eq!(&EXT_MAGIC.to_le_bytes(), b"hipfileX");
    assert_eq!(EXT_VERSION, 1);
    assert_eq!(EXT_V1_SIZE, 2560);
    // Every refusal reason has its own slot.
    let mut slots: Vec<usize> = REFUSALS.iter().map(|r| refusal_slot(*r)).collect();
    slots.dedup();
    assert_eq!(slots, (0..REFUSALS.len()).collect::<Vec<_>>());
}

fn put(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// Byte offset of `field` (an offset within `PerGpuStatsV1`) of GPU `g`, backend `b`,
/// direction `d`, bucket `k` in a \[D\] block.
fn v1_hist(g: usize, b: usize, field: usize, d: usize, k: usize) -> usize {
    40 + (g * 2 + b) * 1048 + field + d * 128 + k * 8
}

#[test]
fn amd_v1_block_report() {
    // What AMD's library would have written: level 2, one GPU (3), no extension.
    let mut b = vec![0u8; V1_SIZE];
    put(&mut b, 0, 1);
    put(&mut b, 8, 2);
    put(&mut b, 16, 5);
    put(&mut b, 24, 6);
    put(&mut b, 32, 7);
    let g = 3;
    put(&mut b, 40 + (g * 2) * 1048, 1); // Fastpath inUse
    let (size, count, time, err) = (8, 264, 520, 776);
    // Fastpath reads: two 1 MiB reads (bucket 9) in 500 us each.
    put(&mut b, v1_hist(g, 0, size, 0, 9), 2 << 20);
    put(&mut b, v1_hist(g, 0, count, 0, 9), 2);
    put(&mut b, v1_hist(g, 0, time, 0, 9), 1000);
    // Fallback write errors: one 4 KiB request.
    put(&mut b, v1_hist(g, 1, err, 1, 1), 1);
    put(&mut b, 40 + (g * 2 + 1) * 1048 + 1032 + 8, 4); // Fallback write unaligned
    let s = Snapshot::from_bytes(&b).unwrap();
    assert_eq!(s.layout, Layout::V1);
    assert!(s.ext.is_none());
    let text = report::text(&s);
    let lines: Vec<&str> = text.lines().collect();
    let want_head = [
        "AIS-STATS Version: 1",
        "HipFile Stats Level: 2",
        "File Handle Registrations: 5",
        "Buffer Registrations: 6",
        "Fastpath Rejections: 7",
        "",
        "Total Fastpath Read Size (B): 2097152",
        "Average Fastpath Read Bandwidth (GiB/s): 1.95312",
        "Average Fastpath Read Latency (us): 500",
        "Total Fastpath Read Errors: 0",
        "Total Fastpath Read Unaligned: 0",
        "",
        "Total Fastpath Write Size (B): 0",
        "Average Fastpath Write Bandwidth (GiB/s): 0",
        "Average Fastpath Write Latency (us): 0",
        "Total Fastpath Write Errors: 0",
        "Total Fastpath Write Unaligned: 0",
        "",
        "Total Fallback Read Size (B): 0",
        "Average Fallback Read Bandwidth (GiB/s): 0",
        "Average Fallback Read Latency (us): 0",
        "Total Fallback Read Errors: 0",
        "Total Fallback Read Unaligned: 0",
        "",
        "Total Fallback Write Size (B): 0",
        "Average Fallback Write Bandwidth (GiB/s): 0",
        "Average Fallback Write Latency (us): 0",
        "Total Fallback Write Errors: 1",
        "Total Fallback Write Unaligned: 4",
        "",
        "GPU 3:",
        "IO Size Histogram",
    ];
    assert_eq!(lines[..want_head.len()], want_head);
    let header = format!(
        "{:<16}{:>34}{:>34}{:>34}{:>34}",
        "IO Size (KiB)",
        "Fastpath Read Count",
        "Fastpath Write Count",
        "Fallback Read Count",
        "Fallback Write Count"
    );
    assert_eq!(lines[32], header);
    assert_eq!(
        lines[33],
        format!("{:<16}{:>34}{:>34}{:>34}{:>34}", "0-4", 0, 0, 0, 0)
    );
    assert_eq!(
        lines[42],
        format!("{:<16}{:>34}{:>34}{:>34}{:>34}", "1024-2048", 2, 0, 0, 0)
    );
    assert_eq!(
        lines[48],
        format!("{:<16}{:>34}{:>34}{:>34}{:>34}", "65536-...", 0, 0, 0, 0)
    );
    assert_eq!(lines[49], "");
    assert_eq!(lines[50], "IO Bandwidth Histogram");
    assert_eq!(
        lines[52 + 9],
        format!(
            "{:<16}{:>34}{:>34}{:>34}{:>34}",
            "1024-2048", "1.95312", 0, 0, 0
        )
    );
    assert_eq!(lines[69], "IO Latency Histogram");
    assert_eq!(
        lines[71 + 9],
        format!("{:<16}{:>34}{:>34}{:>34}{:>34}", "1024-2048", 500, 0, 0, 0)
    );
    assert_eq!(lines[88], "IO Errors Histogram");
    assert_eq!(
        lines[90 + 1],
        format!("{:<16}{:>34}{:>34}{:>34}{:>34}", "4-8", 0, 0, 0, 1)
    );
    assert_eq!(
        lines[106..],
        [
            "",
            "Fastpath Read Unaligned Count: 0",
            "Fastpath Write Unaligned Count: 0",
            "Fallback Read Unaligned Count: 0",
            "Fallback Write Unaligned Count: 4",
            "",
        ]
    );
    assert!(!text.contains("Extended Stats"));
}

#[test]
fn amd_retired_block_report() {
    let mut b = vec![0u8; RETIRED_SIZE];
    put(&mut b, 0, 1); // level
    put(&mut b, 8, 1); // version
    for (i, v) in [10u64, 20, 30, 40].into_iter().enumerate() {
        put(&mut b, 16 + 8 * i, v);
    }
    let s = Snapshot::from_bytes(&b).unwrap();
    assert_eq!(s.layout, Layout::Retired);
    assert_eq!(
        report::text(&s),
        "AIS-STATS Version: 1\n\
         HipFile Stats Level: 1\n\
         Total fast path reads (B): 10\n\
         Total fast path writes (B): 20\n\
         Total fallback path reads (B): 30\n\
         Total fallback path writes (B): 40\n"
    );
}

#[test]
fn unknown_version_prints_the_header_only() {
    let mut b = vec![0u8; V1_SIZE];
    put(&mut b, 0, 2);
    put(&mut b, 8, 1);
    let s = Snapshot::from_bytes(&b).unwrap();
    assert_eq!(s.layout, Layout::Unknown);
    assert_eq!(
        report::text(&s),
        "AIS-STATS Version: 2\nHipFile Stats Level: 1\n"
    );
}
