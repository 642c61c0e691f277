//! In-process statistics: the recorder's effect on the shared block and on
//! `hipFileGetStatsL1/L2/L3`.
//!
//! Most tests record through `hipfile::internals::stats::recorder` directly and read the results back
//! through the C functions; `io_through_the_c_api_is_counted` and
//! `fastpath_refusals_and_retries_are_counted` check the whole path. Every test that records runs in its own process (`child_test!`): the block and the
//! level are per process.

mod common;

use std::ffi::c_int;
use std::ptr::null_mut;
use std::time::Duration;

use common::*;
use hipfile::api::stats::{bucket, refusal_slot, text_report};
use hipfile::api::{BackendKind, Direction, Refusal};
use hipfile::internals::stats::{self, recorder};

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn get_l1() -> hipFileStatsLevel1_t {
    let mut v = hipFileStatsLevel1_t::default();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileGetStatsL1(&mut v) }, OK);
    v
}

fn get_l2() -> hipFileStatsLevel2_t {
    let mut v = hipFileStatsLevel2_t::default();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileGetStatsL2(&mut v) }, OK);
    v
}

fn get_l3() -> Box<hipFileStatsLevel3_t> {
    let mut v = Box::<hipFileStatsLevel3_t>::default();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { hipFileGetStatsL3(&mut *v) }, OK);
    v
}

fn counter(ok: u64, err: u64) -> hipFileOpCounter_t {
    hipFileOpCounter_t { ok, err }
}

#[test]
fn null_pointers_are_invalid_values() {
    let invalid = hipFileError_t::op(hipFileInvalidValue);
    // SAFETY: NULL is allowed and checked.
    unsafe {
        assert_eq!(hipFileGetStatsL1(null_mut()), invalid);
        assert_eq!(hipFileGetStatsL2(null_mut()), invalid);
        assert_eq!(hipFileGetStatsL3(null_mut()), invalid);
    }
}

child_test!(zero_activity_is_all_zero, {
    assert_eq!(get_l1(), hipFileStatsLevel1_t::default());
    assert_eq!(get_l2(), hipFileStatsLevel2_t::default());
    assert_eq!(*get_l3(), hipFileStatsLevel3_t::default());
    assert_eq!(stats::level(), 1, "default level");
});

/// A fixed mix of events; the expected values below follow from it.
fn record_the_mix() {
    for _ in 0..3 {
        recorder::file_registered();
    }
    recorder::buffer_registered();
    recorder::buffer_registered();
    recorder::file_deregistered();
    recorder::buffer_deregistered();
    // GPU 0 fastpath reads, 4 KiB in 100 us, twice.
    recorder::io_done(
        Direction::Read,
        BackendKind::Fastpath,
        0,
        4096,
        us(100),
        true,
    );
    recorder::io_done(
        Direction::Read,
        BackendKind::Fastpath,
        0,
        4096,
        us(100),
        true,
    );
    // GPU 1 fallback read, 1 MiB in 1 ms, unaligned.
    recorder::io_done(
        Direction::Read,
        BackendKind::Fallback,
        1,
        1 << 20,
        us(1000),
        false,
    );
    // GPU 0 fallback write, 8 KiB in 50 us.
    recorder::io_done(
        Direction::Write,
        BackendKind::Fallback,
        0,
        8192,
        us(50),
        true,
    );
    // Host memory read (no GPU), 100 B in 10 us.
    recorder::io_done(Direction::Read, BackendKind::Host, -1, 100, us(10), true);
    // Host-backend write of a buffer of GPU 2 (e.g. pinned memory), 64 MiB in 2 ms.
    recorder::io_done(
        Direction::Write,
        BackendKind::Host,
        2,
        64 << 20,
        us(2000),
        true,
    );
    // A device without a per-GPU slot: only in the totals.
    recorder::io_done(
        Direction::Read,
        BackendKind::Fallback,
        16,
        4096,
        us(4),
        true,
    );
    recorder::io_failed(Direction::Read, BackendKind::Fastpath, 0, 4096);
    recorder::io_failed(Direction::Write, BackendKind::Host, -1, 512);
    recorder::refused(BackendKind::Fastpath, Refusal::UnalignedOffset);
    recorder::refused(BackendKind::Fastpath, Refusal::UnalignedOffset);
    recorder::refused(BackendKind::Host, Refusal::NotHostMemory);
    recorder::fallback_retry();
    recorder::bounce_bytes(1 << 20);
    recorder::bounce_bytes(4 << 20);
    recorder::bounce_bytes(0);
}

child_test!(levels_from_recorded_events, {
    record_the_mix();

    let l1 = get_l1();
    // Reads: 2 fastpath + 1 fallback + 1 host + 1 on device 16 (all backends count).
    assert_eq!(l1.read_ops, counter(5, 1));
    assert_eq!(l1.read_bytes, 4096 * 2 + (1 << 20) + 100 + 4096);
    assert_eq!(l1.read_lat_sum_us, 200 + 1000 + 10 + 4);
    assert_eq!(l1.read_lat_avg_us, 1214 / 5);
    assert_eq!(l1.read_bw_bytes_per_sec, 873_940_691);
    assert_eq!(l1.write_ops, counter(2, 1));
    assert_eq!(l1.write_bytes, 8192 + (64 << 20));
    assert_eq!(l1.write_lat_sum_us, 2050);
    assert_eq!(l1.write_lat_avg_us, 1025);
    assert_eq!(l1.write_bw_bytes_per_sec, 32_740_027_317);
    assert_eq!(l1.hdl_register_ops, counter(3, 0));
    assert_eq!(l1.hdl_deregister_ops, counter(1, 0));
    assert_eq!(l1.buf_register_ops, counter(2, 0));
    assert_eq!(l1.buf_deregister_ops, counter(1, 0));
    assert_eq!((l1.read_ops_per_sec, l1.write_ops_per_sec), (0, 0));
    assert_eq!(l1.batch_total_submit_ops, counter(0, 0));

    let l2 = get_l2();
    assert_eq!(l2.basic, l1);
    let mut read_hist = [0u64; 32];
    read_hist[0] = 1; // 100 B: below 4 KiB
    read_hist[2] = 3; // 4 KiB x3: [4, 8) KiB
    read_hist[10] = 1; // 1 MiB: [1024, 2048) KiB
    assert_eq!(l2.read_size_kb_hist, read_hist);
    let mut write_hist = [0u64; 32];
    write_hist[3] = 1; // 8 KiB: [8, 16) KiB
    write_hist[16] = 1; // 64 MiB and above
    assert_eq!(l2.write_size_kb_hist, write_hist);

    let l3 = get_l3();
    assert_eq!(l3.detailed, l2);
    assert_eq!(l3.num_gpus, 3);
    let g0 = &l3.per_gpu_stats[0];
    // GPU-direct operations are counted as nvfs ones and n_p2p_* stay 0, as upstream, so that
    // n_total = n_nvfs + n_posix (what rocprofiler-systems' hipFile telemetry relies on).
    assert_eq!(
        (
            g0.read_bytes,
            g0.n_total_reads,
            g0.n_nvfs_reads,
            g0.n_posix_reads,
            g0.n_p2p_reads
        ),
        (8192, 2, 2, 0, 0)
    );
    assert_eq!(
        (g0.n_reads_err, g0.n_unaligned_reads, g0.read_duration_us),
        (1, 0, 200)
    );
    assert_eq!(g0.read_bw_bytes_per_sec, 40_960_000);
    assert_eq!(
        (
            g0.write_bytes,
            g0.n_total_writes,
            g0.n_nvfs_writes,
            g0.n_posix_writes,
            g0.n_p2p_writes
        ),
        (8192, 1, 0, 1, 0)
    );
    assert_eq!(
        (
            g0.write_duration_us,
            g0.write_bw_bytes_per_sec,
            g0.n_writes_err
        ),
        (50, 163_840_000, 0)
    );
    let g1 = &l3.per_gpu_stats[1];
    assert_eq!(
        (
            g1.read_bytes,
            g1.n_total_reads,
            g1.n_posix_reads,
            g1.n_unaligned_reads
        ),
        (1 << 20, 1, 1, 1)
    );
    assert_eq!(
        (g1.read_duration_us, g1.read_bw_bytes_per_sec),
        (1000, 1_048_576_000)
    );
    let g2 = &l3.per_gpu_stats[2];
    assert_eq!(
        (
            g2.write_bytes,
            g2.n_total_writes,
            g2.n_posix_writes,
            g2.n_nvfs_writes,
            g2.n_p2p_writes
        ),
        (64 << 20, 1, 1, 0, 0)
    );
    assert_eq!(
        (g2.write_duration_us, g2.write_bw_bytes_per_sec),
        (2000, 33_554_432_000)
    );
    assert_eq!(g2.uuid, [0; 16]);
    for g in 3..16 {
        assert_eq!(
            l3.per_gpu_stats[g],
            hipFilePerGpuStats_t::default(),
            "GPU {g}"
        );
    }

    // The shared block itself ([D] part and extension).
    let s = stats::snapshot_self();
    assert_eq!((s.version, s.level), (1, 1));
    assert_eq!(
        (
            s.file_registrations,
            s.buffer_registrations,
            s.fastpath_rejections
        ),
        (3, 2, 2)
    );
    assert!(s.gpu_in_use(0) && s.gpu_in_use(1));
    assert!(!s.gpu_in_use(2), "Host I/O stays out of the [D] table");
    assert_eq!(s.gpus[0][0].io_count[0][1], 2);
    assert_eq!(s.gpus[0][0].error_count[0][1], 1);
    assert_eq!(s.gpus[1][1].unaligned_count, [1, 0]);
    let ext = s.ext.as_ref().expect("our extension");
    assert_eq!(ext.refusals[0][refusal_slot(Refusal::UnalignedOffset)], 2);
    assert_eq!(ext.refusals[2][refusal_slot(Refusal::NotHostMemory)], 1);
    assert_eq!(ext.fallback_retries, 1);
    assert_eq!(
        (ext.bounce_bytes_in_use, ext.bounce_bytes_peak),
        (0, 4 << 20)
    );
    assert_eq!(ext.io[2][1].error_bytes, 512);

    // The report: [D] totals are the per-GPU sums (device 16 is not in them), then ours.
    let text = text_report(&s);
    for line in [
        "File Handle Registrations: 3\n",
        "Buffer Registrations: 2\n",
        "Fastpath Rejections: 2\n",
        "Total Fastpath Read Size (B): 8192\n",
        "Average Fastpath Read Latency (us): 100\n",
        "Total Fastpath Read Errors: 1\n",
        "Total Fallback Read Size (B): 1048576\n",
        "Total Fallback Read Unaligned: 1\n",
        "Total Fallback Write Size (B): 8192\n",
        "\nGPU 0:\n",
        "\nGPU 1:\n",
        "Extended Stats (hipfile extension, version 1)\n",
        "Total Host Read Size (B): 100\n",
        "Total Host Write Size (B): 67108864\n",
        "Total Host Write Errors: 1\n",
        "Fastpath To Fallback Retries: 1\n",
        "Fastpath Refusals: 2\n  UnalignedOffset (the file offset is not aligned for direct I/O): 2\n",
        "Fallback Refusals: 0\n",
        "Host Refusals: 1\n  NotHostMemory (the buffer is not host memory): 1\n",
        "File Handle Deregistrations: 1\n",
        "Buffer Deregistrations: 1\n",
        "Bounce Buffer Bytes In Use: 0\n",
        "Bounce Buffer Bytes Peak: 4194304\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    assert!(!text.contains("GPU 2:"));
    // The JSON form of these totals is checked by the `hipfile` tool (crates/hipfile-cli,
    // `stats::json_tests`), which owns the JSON writer.
});

child_test!(
    level_zero_keeps_the_block_but_records_nothing,
    [("HIPFILE_STATS_LEVEL", "0")],
    {
        record_the_mix();
        assert_eq!(stats::level(), 0);
        let s = stats::snapshot_self();
        assert_eq!((s.version, s.level), (1, 0));
        assert_eq!(
            (
                s.file_registrations,
                s.buffer_registrations,
                s.fastpath_rejections
            ),
            (0, 0, 0)
        );
        assert!((0..16).all(|g| !s.gpu_active(g)));
        let ext = s.ext.expect("the extension exists at level 0 too");
        assert!(ext
            .io
            .iter()
            .flatten()
            .all(|t| *t == hipfile::api::stats::Totals::default()));
        assert_eq!((ext.fallback_retries, ext.bounce_bytes_peak), (0, 0));
        assert_eq!(get_l1(), hipFileStatsLevel1_t::default());
        assert_eq!(*get_l3(), hipFileStatsLevel3_t::default());
        if stats::shm::shared().memfd().is_some() {
            assert!(
                stats::server::is_running(),
                "the block is served at level 0"
            );
        }
    }
);

child_test!(level_is_clamped_to_three, [("HIPFILE_STATS_LEVEL", "9")], {
    assert_eq!(stats::level(), 3);
    recorder::file_registered();
    assert_eq!(get_l1().hdl_register_ops, counter(1, 0));
    assert_eq!(stats::snapshot_self().level, 3);
});

child_test!(profile_stats_parameter_drives_the_level, {
    // hipFileParamProfileStats set while closed is the level of the next open, whatever
    // HIPFILE_STATS_LEVEL (unset here: 1) says.
    assert_eq!(stats::level(), 1);
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamProfileStats, 0).err,
        hipFileSuccess
    );
    assert_eq!(hipFileDriverOpen().err, hipFileSuccess);
    assert_eq!(stats::level(), 0);
    assert_eq!(stats::snapshot_self().level, 0, "readers see it");
    recorder::file_registered();
    assert_eq!(get_l1().hdl_register_ops, counter(0, 0), "nothing recorded");
    assert_eq!(hipFileDriverClose().err, hipFileSuccess);
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamProfileStats, 2).err,
        hipFileSuccess
    );
    assert_eq!(hipFileDriverOpen().err, hipFileSuccess);
    assert_eq!(stats::level(), 2);
    recorder::file_registered();
    assert_eq!(get_l1().hdl_register_ops, counter(1, 0));
    assert_eq!(hipFileDriverClose().err, hipFileSuccess);
    // Closing resets the parameter: the next open is back at the environment's level.
    assert_eq!(hipFileDriverOpen().err, hipFileSuccess);
    assert_eq!(stats::level(), 1);
    assert_eq!(hipFileDriverClose().err, hipFileSuccess);
});

child_test!(concurrent_recording_is_exact, {
    const THREADS: u64 = 8;
    const EACH: u64 = 10_000;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            scope.spawn(move || {
                for i in 0..EACH {
                    let dir = if i % 2 == 0 {
                        Direction::Read
                    } else {
                        Direction::Write
                    };
                    recorder::io_done(
                        dir,
                        BackendKind::Fallback,
                        (t % 4) as i32,
                        4096,
                        us(1),
                        true,
                    );
                    recorder::file_registered();
                }
            });
        }
    });
    let l1 = get_l1();
    assert_eq!(l1.read_ops.ok + l1.write_ops.ok, THREADS * EACH);
    assert_eq!(l1.read_bytes + l1.write_bytes, THREADS * EACH * 4096);
    assert_eq!(l1.read_lat_sum_us + l1.write_lat_sum_us, THREADS * EACH);
    assert_eq!(l1.hdl_register_ops.ok, THREADS * EACH);
    let l3 = get_l3();
    assert_eq!(l3.num_gpus, 4);
    for g in 0..4 {
        let p = &l3.per_gpu_stats[g];
        assert_eq!(p.n_total_reads + p.n_total_writes, 2 * EACH, "GPU {g}");
    }
});

/// The whole path through the C API.
#[test]
fn io_through_the_c_api_is_counted() {
    if !in_child() {
        run_in_child(
            module_path!(),
            "io_through_the_c_api_is_counted",
            &[("HIPFILE_HOST", "true")],
        );
        return;
    }
    let path = scratch_file("stats-io");
    let data = pattern(64 << 10, 7);
    make_file(&path, &data);
    let fd = open_fd(&path, libc::O_RDWR);
    let fh = register_fd(fd);
    let dev = sim().device_alloc(64 << 10);
    assert_eq!(hipFileBufRegister(dev.ptr, dev.len, 0), OK);
    // SAFETY: a registered device buffer of 64 KiB.
    let n = unsafe { hipFileRead(fh, dev.ptr, 64 << 10, 0, 0) };
    assert_eq!(n, 64 << 10);
    // SAFETY: as above.
    let n = unsafe { hipFileWrite(fh, dev.ptr, 16 << 10, 0, 0) };
    assert_eq!(n, 16 << 10);
    let mut host = vec![0u8; 4096];
    // SAFETY: host memory valid for 4096 bytes.
    let n = unsafe { hipFileRead(fh, host.as_mut_ptr().cast(), 4096, 0, 0) };
    assert_eq!(n, 4096);
    assert_eq!(hipFileBufDeregister(dev.ptr), OK);
    hipFileHandleDeregister(fh);

    let l1 = get_l1();
    assert_eq!(l1.hdl_register_ops, counter(1, 0));
    assert_eq!(l1.buf_register_ops, counter(1, 0));
    assert_eq!(l1.hdl_deregister_ops, counter(1, 0));
    assert_eq!(l1.buf_deregister_ops, counter(1, 0));
    assert_eq!(l1.read_ops, counter(2, 0));
    assert_eq!(l1.read_bytes, (64 << 10) + 4096);
    assert_eq!(l1.write_ops, counter(1, 0));
    assert_eq!(l1.write_bytes, 16 << 10);
    let l3 = get_l3();
    let g0 = &l3.per_gpu_stats[0];
    assert_eq!(
        (g0.n_total_reads, g0.read_bytes),
        (1, 64 << 10),
        "the device read is GPU 0's"
    );
    assert_eq!((g0.n_total_writes, g0.write_bytes), (1, 16 << 10));
    let s = stats::snapshot_self();
    assert_eq!(s.totals(BackendKind::Host, Direction::Read).bytes, 4096);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
    let _ = std::fs::remove_file(&path);
}

/// Connect to this process's statistics socket (retrying while the server starts) and
/// return the connect error once it stops answering, or `None` if it answered.
fn own_socket_state(wait_until_up: bool) -> Option<c_int> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        // SAFETY: plain syscall.
        let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        assert!(fd >= 0);
        // SAFETY: a fresh descriptor we own.
        let sock = unsafe { OwnedFd::from_raw_fd(fd) };
        let addr = stats::server::socket_address(std::process::id());
        // SAFETY: a valid address of the full sockaddr_un length.
        let rc = unsafe {
            libc::connect(
                sock.as_raw_fd(),
                (&raw const addr).cast(),
                stats::server::SOCKET_ADDRESS_LEN,
            )
        };
        if rc == 0 {
            return None;
        }
        if !wait_until_up || std::time::Instant::now() > deadline {
            return Some(errno());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

child_test!(fork_child_is_detached, {
    recorder::file_registered();
    // memfd_create exists on every kernel the library supports: a missing block is a defect
    // here, not a reason to skip.
    assert!(
        stats::shm::shared().memfd().is_some(),
        "the statistics block has no memfd"
    );
    assert_eq!(own_socket_state(true), None, "the server answers");
    let mut pipe: [c_int; 2] = [0; 2];
    // The child stays alive until the parent closes its end of `release`: the check below
    // that the child closed its copy of the listening socket means something only while
    // the child lives (an exit closes every descriptor anyway).
    let mut release: [c_int; 2] = [0; 2];
    // SAFETY: valid arrays of two ints.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
    assert_eq!(unsafe { libc::pipe(release.as_mut_ptr()) }, 0);
    // SAFETY: the child only records (atomic loads), calls shutdown (a no-op there), writes
    // one byte, waits for end-of-file on `release` and _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        for _ in 0..5 {
            recorder::file_registered();
            recorder::io_done(Direction::Read, BackendKind::Fallback, 0, 4096, us(1), true);
        }
        stats::server::shutdown();
        let ok: u8 = if stats::shm::detached() { 1 } else { 2 };
        // SAFETY: one byte from a live local; a read into a live local (0 at end-of-file,
        // once the parent closed the only write end left); then leave without running
        // destructors.
        unsafe {
            libc::close(release[1]);
            libc::write(pipe[1], (&raw const ok).cast(), 1);
            let mut byte = 0u8;
            libc::read(release[0], (&raw mut byte).cast(), 1);
            libc::_exit(0);
        }
    }
    // SAFETY: the parent's copy of the read end, not used here.
    unsafe { libc::close(release[0]) };
    let mut got = 0u8;
    // SAFETY: one byte into a live local.
    assert_eq!(unsafe { libc::read(pipe[0], (&raw mut got).cast(), 1) }, 1);
    assert_eq!(got, 1, "the child knows it is detached");
    // Nothing the child did reached the parent's block, and its shutdown did not stop ours.
    let s = stats::snapshot_self();
    assert_eq!(s.file_registrations, 1);
    assert!(!s.gpu_in_use(0));
    assert!(stats::server::is_running());
    assert_eq!(own_socket_state(false), None, "the parent still serves");
    // The child (still alive) closed its copy of the listening socket: once the parent
    // stops, the name is gone.
    stats::server::shutdown();
    assert_eq!(own_socket_state(false), Some(libc::ECONNREFUSED));
    let mut status = 0;
    // SAFETY: our child, still alive: nothing it waits for came yet (WNOHANG: 0).
    assert_eq!(
        unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) },
        0,
        "the child lived through the checks"
    );
    // SAFETY: our write end of `release` (the child's read returns end-of-file); our child.
    unsafe { libc::close(release[1]) };
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
});

/// Fastpath, refusal and retry accounting through the C API (a fastpath
/// failure with `ENODEV` counts as a fastpath error, then the fallback I/O is counted).
#[test]
fn fastpath_refusals_and_retries_are_counted() {
    if !in_child() {
        run_in_child(
            module_path!(),
            "fastpath_refusals_and_retries_are_counted",
            &[("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
        );
        return;
    }
    if !odirect_works() {
        eprintln!("O_DIRECT does not work in the scratch directory: skipped");
        return;
    }
    let path = scratch_file("stats-fastpath");
    make_file(&path, &pattern(1 << 20, 3));
    let fd = open_fd(&path, libc::O_RDWR);
    let fh = register_fd(fd);
    let dev = sim().device_alloc(1 << 20);
    assert_eq!(hipFileBufRegister(dev.ptr, dev.len, 0), OK);
    // SAFETY (all reads below): a registered device buffer of 1 MiB.
    let read = |size: usize, off: i64| unsafe { hipFileRead(fh, dev.ptr, size, off, 0) };
    // 1. Aligned: fastpath.
    assert_eq!(read(64 << 10, 0), 64 << 10);
    // 2. Unaligned offset: fastpath refuses, the fallback serves it (and counts it unaligned).
    assert_eq!(read(4096, 512), 4096);
    // 3. The fastpath fails with ENODEV: one fastpath error, one retry, one fallback read.
    sim().fault("fastpath_errno", libc::ENODEV as i64);
    assert_eq!(read(8192, 0), 8192);
    sim().fault("fastpath_errno", 0);

    let s = stats::snapshot_self();
    assert_eq!(s.fastpath_rejections, 1);
    let fp = s.gpus[0][0];
    let fb = s.gpus[0][1];
    assert_eq!(fp.io_count[0][bucket(64 << 10)], 1);
    assert_eq!(fp.error_count[0][bucket(8192)], 1);
    assert_eq!(fb.totals(Direction::Read).ops, 2);
    assert_eq!(fb.totals(Direction::Read).bytes, 4096 + 8192);
    assert_eq!(fb.unaligned_count[0], 1);
    let ext = s.ext.unwrap();
    assert_eq!(ext.fallback_retries, 1);
    assert_eq!(ext.refusals[0][refusal_slot(Refusal::UnalignedOffset)], 1);
    let l1 = get_l1();
    assert_eq!(l1.read_ops, counter(3, 1));
    let l3 = get_l3();
    let g0 = &l3.per_gpu_stats[0];
    assert_eq!(
        (
            g0.n_total_reads,
            g0.n_nvfs_reads,
            g0.n_posix_reads,
            g0.n_p2p_reads,
            g0.n_unaligned_reads,
            g0.n_reads_err
        ),
        (3, 1, 2, 0, 1, 1)
    );
    assert_eq!(g0.n_total_reads, g0.n_nvfs_reads + g0.n_posix_reads);

    assert_eq!(hipFileBufDeregister(dev.ptr), OK);
    hipFileHandleDeregister(fh);
    // SAFETY: our descriptor.
    unsafe { libc::close(fd) };
    let _ = std::fs::remove_file(&path);
}

/// Names of this process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|s| s.trim_end().to_string())
        .collect()
}

child_test!(server_thread_is_named_and_stops, {
    assert!(!thread_names().iter().any(|n| n == "hipfile-stats"));
    stats::init();
    // memfd_create exists on every supported kernel: without the block there is no server,
    // and skipping would hide that.
    assert!(
        stats::shm::shared().memfd().is_some(),
        "the statistics block has no memfd"
    );
    // The new thread names itself when it starts: give it a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !thread_names().iter().any(|n| n == "hipfile-stats") {
        assert!(
            std::time::Instant::now() < deadline,
            "no hipfile-stats thread: {:?}",
            thread_names()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    // The socket is listening as soon as init returns.
    assert_eq!(own_socket_state(false), None);
    stats::server::shutdown();
    assert!(!stats::server::is_running());
    assert!(!thread_names().iter().any(|n| n == "hipfile-stats"));
    assert_eq!(own_socket_state(false), Some(libc::ECONNREFUSED));
    // Recording goes on without the server.
    recorder::file_registered();
    assert_eq!(get_l1().hdl_register_ops, counter(1, 0));
});
