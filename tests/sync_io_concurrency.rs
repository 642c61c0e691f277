//! Synchronous I/O: failures inside a request split over several threads, and concurrency.
//!
//! Shared set-up and what the sync suites compare: `tests/common/sync_io.rs`.

mod common;

use common::sync_io::*;
use common::*;

// ---- failures inside a parallel request, concurrency ------------------------------------------

child_test!(
    copy_failure_in_a_middle_chunk_fails_the_whole_request,
    [
        ("HIPFILE_CHUNK_SIZE", "65536"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_BOUNCE_BUDGET", "262144"),
    ],
    {
        watchdog(300);
        open_driver();
        let s = sim();
        let budget = 262_144u64;
        let size = 4 * MIB;
        let data = pattern(size + 1, 31);
        let f = TestFile::rw("midfail", &data);
        let dev = device_filled(size, 0);
        s.reset_counters();
        for round in 0..3 {
            // Read (unaligned file offset: fallback), failing after 5 successful copies.
            s.fault("fail_copy", HIP_ERROR_UNKNOWN);
            s.fault("fail_copy_after", 5);
            assert_eq!(rd(f.fh, dev.ptr, size, 1, 0), -999, "round {round}: read");
            s.fault("fail_copy", 0);
            s.fault("fail_copy_after", 0);
            assert!(s.counter("copy_faults_injected") > 0);
            assert_eq!(
                rd(f.fh, dev.ptr, size, 1, 0),
                size as isize,
                "round {round}: the next read works"
            );
            assert!(s.download(dev.ptr, size) == data[1..]);

            // Write, failing the same way.
            let fresh = pattern(size, 32 + round);
            s.upload(dev.ptr, &fresh);
            s.fault("fail_copy", HIP_ERROR_UNKNOWN);
            s.fault("fail_copy_after", 5);
            // A write that fails part-way reports the contiguous prefix that reached the file
            // (whole 64 KiB chunks, no more than the 5 copies that succeeded), or the error when
            // the first chunk's copy was one that failed.
            let n = wr(f.fh, dev.ptr, size, 1, 0);
            assert!(
                n == -999 || (n > 0 && n % 65536 == 0 && n <= 5 * 65536),
                "round {round}: write returned {n}"
            );
            s.fault("fail_copy", 0);
            s.fault("fail_copy_after", 0);
            assert_eq!(
                wr(f.fh, dev.ptr, size, 1, 0),
                size as isize,
                "round {round}: the next write works"
            );
            let mut expect = data.clone();
            expect[1..].copy_from_slice(&fresh);
            assert!(
                f.contents() == expect,
                "round {round}: file after the write"
            );
            std::fs::write(&f.path, &data).unwrap();

            let live = s.counter("pinned_bytes_live");
            let peak = s.counter("pinned_bytes_peak");
            eprintln!("round {round}: pinned bytes live {live}, peak {peak}");
            assert!(
                live <= budget && peak <= budget,
                "bounce memory within the budget: live {live}, peak {peak}"
            );
        }
        // Every bounce buffer came back to the pool: closing the driver frees them all (a buffer
        // that never came back would stay allocated).
        assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
        assert_eq!(
            s.counter("pinned_bytes_live"),
            0,
            "closing the driver frees the bounce buffers"
        );
    }
);

child_test!(
    many_threads_on_one_handle,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_CHUNK_SIZE", "65536"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_INLINE_THRESHOLD", "65536"),
    ],
    {
        watchdog(300);
        open_driver();
        let threads = 16;
        let region = 2 * MIB;
        let f = TestFile::rw("threads", &vec![0u8; threads * region]);
        let fh = f.fh as usize;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                std::thread::spawn(move || {
                    let fh = fh as hipFileHandle_t;
                    let s = sim();
                    let dev = sim().device_alloc(region);
                    let base = t * region;
                    for iter in 0..6 {
                        let seed = (t * 100 + iter) as u64;
                        match (t + iter) % 3 {
                            0 => {
                                // Aligned device I/O: the fastpath where O_DIRECT works.
                                let (off, size) = (base, 256 * 1024);
                                let data = pattern(size, seed);
                                s.upload(dev.ptr, &data);
                                assert_eq!(wr(fh, dev.ptr, size, off as i64, 0), size as isize);
                                fill(dev.ptr, 0, size);
                                assert_eq!(rd(fh, dev.ptr, size, off as i64, 0), size as isize);
                                assert!(
                                    s.download(dev.ptr, size) == data,
                                    "thread {t} iteration {iter}"
                                );
                            }
                            1 => {
                                // Unaligned device I/O: the fallback, in parallel chunks.
                                let (off, size, boff) = (base + 7, MIB + 1001, 5usize);
                                let data = pattern(size, seed);
                                s.upload(dev.at(boff), &data);
                                assert_eq!(
                                    wr(fh, dev.ptr, size, off as i64, boff as i64),
                                    size as isize
                                );
                                fill(dev.ptr, 0, region);
                                assert_eq!(
                                    rd(fh, dev.ptr, size, off as i64, boff as i64),
                                    size as isize
                                );
                                assert!(
                                    s.download(dev.at(boff), size) == data,
                                    "thread {t} iteration {iter}"
                                );
                            }
                            _ => {
                                // Host memory.
                                let (off, size) = (base + MIB + 1, 300_001);
                                let data = pattern(size, seed);
                                assert_eq!(
                                    wr(fh, data.as_ptr().cast(), size, off as i64, 0),
                                    size as isize
                                );
                                let mut back = vec![0u8; size];
                                assert_eq!(
                                    rd(fh, back.as_mut_ptr().cast(), size, off as i64, 0),
                                    size as isize
                                );
                                assert!(back == data, "thread {t} iteration {iter}");
                            }
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("an I/O thread failed");
        }
    }
);
