//! Defects found by the reliability suite (fuzzing, stress, fault matrix), each kept as a test
//! through the C ABI. RELIABILITY.md lists them.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;

// A live driver setting (`hipFileDriverSet*`) replaces the open session's configuration; a batch
// submission running at that moment took the new configuration for a closed driver and failed
// with hipFileInternalError ("the driver closed during the batch submission"). Found by
// tests/stress.rs.
child_test!(batch_submission_survives_live_settings, {
    let path = scratch_file("live-settings");
    make_file(&path, &pattern(1 << 20, 7));
    let fd = open_fd(&path, libc::O_RDWR);
    assert_eq!(hipFileDriverOpen().err, 0);
    let fh = register_fd(fd);
    let stop = Arc::new(AtomicBool::new(false));
    let setter = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let kb = if n % 2 == 0 { 64 } else { 16384 };
                assert_eq!(hipFileDriverSetMaxDirectIOSize(kb).err, 0);
                n += 1;
            }
            n
        })
    };
    let submitted = Arc::new(AtomicU64::new(0));
    let fh_addr = fh as usize;
    let submitters: Vec<_> = (0..2)
        .map(|t| {
            let submitted = submitted.clone();
            std::thread::spawn(move || {
                let fh = fh_addr as hipFileHandle_t;
                let buf = sim().device_alloc(16 * 4096);
                let t0 = Instant::now();
                while t0.elapsed() < Duration::from_secs(2) {
                    let params: Vec<hipFileIOParams_t> = (0..16)
                        .map(|k| {
                            let off = (k * 4096) as i64;
                            batch_params(fh, hipFileBatchRead, buf.ptr, off, off, 4096, k + 1)
                        })
                        .collect();
                    let mut b = std::ptr::null_mut();
                    // SAFETY: valid out-pointer.
                    assert_eq!(unsafe { hipFileBatchIOSetUp(&mut b, 16) }.err, 0);
                    // SAFETY: 16 entries.
                    let e = unsafe { hipFileBatchIOSubmit(b, 16, params.as_ptr().cast_mut(), 0) };
                    assert_eq!(e.err, 0, "thread {t}: submission during a live setting");
                    hipFileBatchIODestroy(b);
                    submitted.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for s in submitters {
        s.join().expect("a submitter failed");
    }
    stop.store(true, Ordering::Relaxed);
    let settings = setter.join().unwrap();
    println!(
        "{} submissions during {settings} live settings",
        submitted.load(Ordering::Relaxed)
    );
    assert!(settings > 0 && submitted.load(Ordering::Relaxed) > 0);
    hipFileHandleDeregister(fh);
    assert_eq!(hipFileDriverClose().err, 0);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
});
