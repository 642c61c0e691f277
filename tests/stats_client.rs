//! Reading another process's statistics through the `hipFileStats*` C functions (behaviour
//!  argument checks and result codes, the socket protocol, and reports of
//! live, exited, late-starting and level-0 processes.
//!
//! The target processes are this test binary re-executed in a "target mode"
//! ([`stats_target`]): it records a known set of events, prints a marker line and waits
//! until its standard input is closed.

mod common;

use std::ffi::c_int;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use common::stats_ctx::{raw_connect, raw_connect_with, raw_listen, recv_fd, Ctx};
use common::*;
use hipfile::api::stats::{Connection, Layout};
use hipfile::api::{BackendKind, Direction, Refusal};
use hipfile::internals::stats::{self, recorder, RETIRED_SIZE, SHARED_SIZE};

const TARGET_ENV: &str = "HIPFILE_STATS_TEST_TARGET";
const READY: &str = "STATS-TARGET-READY";

// ---- the target process ---------------------------------------------------------------------

/// Not a test on its own: the body of a target process when [`TARGET_ENV`] is set.
#[test]
fn stats_target() {
    let Ok(mode) = std::env::var(TARGET_ENV) else {
        return;
    };
    match mode.as_str() {
        "record" => record_known_events(),
        "late" => {
            // Start serving only after a while: clients must retry until then.
            std::thread::sleep(Duration::from_millis(300));
            record_known_events();
        }
        "shutdown" => {
            record_known_events();
            stats::server::shutdown();
            assert!(!stats::server::is_running());
            stats::server::shutdown(); // idempotent
        }
        "idle" => {
            // Never touches the library: nothing is ever served.
            std::thread::sleep(Duration::from_millis(300));
            return;
        }
        "wait" => {
            // Never touches the library, and lives until its standard input is closed.
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
            return;
        }
        other => panic!("unknown target mode {other}"),
    }
    println!("{READY}");
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}

fn record_known_events() {
    recorder::file_registered();
    recorder::file_registered();
    recorder::buffer_registered();
    // Fastpath reads on GPU 0: 4 x 256 MiB in 4 x 250 ms = 1 GiB/s, 250000 us each.
    for _ in 0..4 {
        recorder::io_done(
            Direction::Read,
            BackendKind::Fastpath,
            0,
            256 << 20,
            Duration::from_millis(250),
            true,
        );
    }
    // Fallback writes on GPU 1: 3 x 4 KiB in 3 us each, unaligned.
    for _ in 0..3 {
        recorder::io_done(
            Direction::Write,
            BackendKind::Fallback,
            1,
            4096,
            Duration::from_micros(3),
            false,
        );
    }
    recorder::io_failed(Direction::Read, BackendKind::Fallback, 1, 8192);
    recorder::refused(BackendKind::Fastpath, Refusal::NoODirect);
    recorder::io_done(
        Direction::Read,
        BackendKind::Host,
        -1,
        100,
        Duration::from_micros(1),
        true,
    );
    stats::init();
}

/// A running target and its standard input (closing it ends the target).
struct Target {
    child: Child,
}

impl Target {
    /// Start a target in `mode`; with `wait_ready`, return once it serves its statistics.
    fn spawn(mode: &str, env: &[(&str, &str)], wait_ready: bool) -> Target {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["stats_target", "--exact", "--nocapture", "--test-threads=1"]);
        for (k, _) in std::env::vars() {
            if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
                cmd.env_remove(&k);
            }
        }
        cmd.env(TARGET_ENV, mode)
            .env("HIPFILE_LOG", "warn")
            .envs(env.iter().copied());
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn the target");
        if wait_ready {
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            loop {
                let line = lines
                    .next()
                    .expect("the target ended before it was ready")
                    .unwrap();
                if line.contains(READY) {
                    break;
                }
            }
            // Keep draining so the target never blocks on a full pipe.
            std::thread::spawn(move || lines.for_each(drop));
        }
        Target { child }
    }

    fn pid(&self) -> c_int {
        self.child.id() as c_int
    }

    /// Close its standard input and wait for it to exit successfully.
    fn finish(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "target failed: {status}");
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

// ---- helpers ------------------------------------------------------------------------------------

/// A pid that names no process.
const NO_SUCH_PID: c_int = c_int::MAX;

// ---- argument checks ---------------------------------------------------------

#[test]
fn create_context_arguments() {
    // SAFETY: NULL is checked.
    assert_eq!(
        unsafe { hipFileStatsCreateContext(null_mut(), 1) },
        hipFileStatsInvalidArgument
    );
    for pid in [0, -1, c_int::MIN] {
        let mut ctx = std::ptr::dangling_mut::<hipFileStatsContext_t>();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { hipFileStatsCreateContext(&mut ctx, pid) },
            hipFileStatsInvalidArgument,
            "pid {pid}"
        );
        assert!(ctx.is_null(), "*context is cleared for pid {pid}");
    }
    let mut ctx = std::ptr::dangling_mut::<hipFileStatsContext_t>();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { hipFileStatsCreateContext(&mut ctx, NO_SUCH_PID) },
        hipFileStatsTargetProcessNotFound
    );
    assert!(ctx.is_null());
}

#[test]
fn null_contexts_and_bad_descriptors() {
    // SAFETY: NULL is checked by every function.
    unsafe {
        assert_eq!(
            hipFileStatsConnectToTargetProcess(null_mut()),
            hipFileStatsInvalidArgument
        );
        assert_eq!(
            hipFileStatsPollTargetProcess(std::ptr::null(), false),
            hipFileStatsInvalidArgument
        );
        assert_eq!(
            hipFileStatsPollTargetProcess(std::ptr::null(), true),
            hipFileStatsInvalidArgument
        );
        assert_eq!(
            hipFileStatsGenerateReport(std::ptr::null(), 1),
            hipFileStatsInvalidArgument
        );
        hipFileStatsCloseContext(null_mut());
    }
    let ctx = Ctx::create(std::process::id() as c_int);
    // SAFETY: a live context.
    unsafe {
        assert_eq!(
            hipFileStatsGenerateReport(ctx.0, -1),
            hipFileStatsInvalidArgument
        );
        // Not connected yet: there is no block to report.
        assert_eq!(
            hipFileStatsGenerateReport(ctx.0, 1),
            hipFileStatsReportGenerationFailed
        );
    }
    // This process is running.
    assert_eq!(ctx.poll(false), hipFileStatsTargetProcessNotAccessible);
}

#[test]
fn own_process_and_unwritable_descriptors() {
    stats::init();
    let ctx = Ctx::create(std::process::id() as c_int);
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    assert!(ctx
        .report()
        .starts_with("AIS-STATS Version: 1\nHipFile Stats Level: 1\nFile Handle Registrations: "));
    // A closed descriptor number and a read-only one cannot take the report.
    // SAFETY: a live context; the descriptors are only numbers to the kernel.
    unsafe {
        assert_eq!(
            hipFileStatsGenerateReport(ctx.0, 1_000_000),
            hipFileStatsReportGenerationFailed
        );
    }
    let ro = std::fs::File::open("/proc/self/stat").unwrap();
    // SAFETY: as above.
    assert_eq!(
        unsafe { hipFileStatsGenerateReport(ctx.0, ro.as_raw_fd()) },
        hipFileStatsReportGenerationFailed
    );
}

// ---- end to end -------------------------------------------------------------------------------

const EXPECTED_HEAD: [&str; 30] = [
    "AIS-STATS Version: 1",
    "HipFile Stats Level: 1",
    "File Handle Registrations: 2",
    "Buffer Registrations: 1",
    "Fastpath Rejections: 1",
    "",
    "Total Fastpath Read Size (B): 1073741824",
    "Average Fastpath Read Bandwidth (GiB/s): 1",
    "Average Fastpath Read Latency (us): 250000",
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
    "Total Fallback Read Errors: 1",
    "Total Fallback Read Unaligned: 0",
    "",
    "Total Fallback Write Size (B): 12288",
    "Average Fallback Write Bandwidth (GiB/s): 1.27157",
    "Average Fallback Write Latency (us): 3",
    "Total Fallback Write Errors: 0",
    "Total Fallback Write Unaligned: 3",
    "",
];

fn check_known_report(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..EXPECTED_HEAD.len()],
        EXPECTED_HEAD,
        "report:\n{text}"
    );
    assert_eq!(lines[30], "GPU 0:");
    assert!(text.contains("\nGPU 1:\n"));
    assert!(!text.contains("GPU 2:"));
    assert!(text.contains("\nFallback Write Unaligned Count: 3\n"));
    assert!(text.contains(
        "\nExtended Stats (hipfile extension, version 1)\nTotal Host Read Size (B): 100\n"
    ));
    assert!(text.contains(
        "\nFastpath Refusals: 1\n  NoODirect (the file system does not support O_DIRECT): 1\n"
    ));
}

#[test]
fn report_of_a_running_then_exited_process() {
    let target = Target::spawn("record", &[], true);
    let ctx = Ctx::create(target.pid());
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    assert_eq!(
        ctx.poll(false),
        hipFileStatsTargetProcessNotAccessible,
        "still running"
    );
    let live = ctx.report();
    check_known_report(&live);
    target.finish();
    assert_eq!(ctx.poll(true), hipFileStatsSuccess);
    assert_eq!(ctx.poll(false), hipFileStatsSuccess);
    // The block outlives its process: the context holds the memfd.
    assert_eq!(ctx.report(), live);
}

#[test]
fn poll_blocks_until_the_target_exits() {
    let mut target = Target::spawn("record", &[], true);
    let ctx = Ctx::create(target.pid());
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    let stdin = target.child.stdin.take();
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        drop(stdin);
    });
    let start = Instant::now();
    assert_eq!(ctx.poll(true), hipFileStatsSuccess);
    assert!(start.elapsed() >= Duration::from_millis(150));
    closer.join().unwrap();
    check_known_report(&ctx.report());
}

#[test]
fn connect_waits_for_a_late_server() {
    let target = Target::spawn("late", &[], false);
    let ctx = Ctx::create(target.pid());
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    check_known_report(&ctx.report());
    target.finish();
}

#[test]
fn level_zero_target_reports_zeros() {
    let target = Target::spawn("record", &[("HIPFILE_STATS_LEVEL", "0")], true);
    let ctx = Ctx::create(target.pid());
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    let text = ctx.report();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..7],
        [
            "AIS-STATS Version: 1",
            "HipFile Stats Level: 0",
            "File Handle Registrations: 0",
            "Buffer Registrations: 0",
            "Fastpath Rejections: 0",
            "",
            "Total Fastpath Read Size (B): 0",
        ]
    );
    assert!(!text.contains("GPU "));
    assert!(text.contains("\nTotal Host Read Size (B): 0\n"));
    target.finish();
}

#[test]
fn a_process_that_never_serves_is_not_accessible() {
    let target = Target::spawn("idle", &[], false);
    let ctx = Ctx::create(target.pid());
    // Retries until the target exits, then gives up.
    assert_eq!(ctx.connect(), hipFileStatsTargetProcessNotAccessible);
    assert_eq!(ctx.poll(false), hipFileStatsSuccess);
    assert_eq!(ctx.try_report().0, hipFileStatsReportGenerationFailed);
}

/// `hipFileStatsConnectToTargetProcess` on a new context for `pid`, on a thread of its own:
/// (code, errno, time taken); a panic if it has not returned after `limit`.
fn timed_connect(pid: c_int, limit: Duration) -> (hipFileStatsError_t, c_int, Duration) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ctx = Ctx::create(pid);
        set_errno(0);
        let start = Instant::now();
        let code = ctx.connect();
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let _ = tx.send((code, errno, start.elapsed()));
    });
    rx.recv_timeout(limit).unwrap_or_else(|_| {
        panic!("hipFileStatsConnectToTargetProcess({pid}) has not returned after {limit:?}")
    })
}

child_test!(
    connect_to_a_live_process_without_a_server_is_bounded,
    [("HIPFILE_STATS_CONNECT_TIMEOUT", "1")],
    {
        // A live process that never serves, pid 1, and this process before anything started
        // its statistics: each gives up after the configured second, with ETIMEDOUT.
        let target = Target::spawn("wait", &[], false);
        for pid in [target.pid(), 1, std::process::id() as c_int] {
            let (code, errno, took) = timed_connect(pid, Duration::from_secs(20));
            assert_eq!(
                (code, errno),
                (hipFileStatsTargetProcessNotAccessible, libc::ETIMEDOUT),
                "pid {pid}"
            );
            assert!(
                took >= Duration::from_millis(950) && took < Duration::from_secs(10),
                "pid {pid}: {took:?}"
            );
        }
        drop(target);
    }
);

child_test!(
    a_listener_that_never_accepts_does_not_hold_the_client,
    [("HIPFILE_STATS_CONNECT_TIMEOUT", "1")],
    {
        // Someone holds the target's name with a full backlog (listen(0) and one waiting
        // connection; a stopped server fills up the same way): a connect there would wait
        // for a place with no time limit. The client gives up after its second instead.
        let target = Target::spawn("wait", &[], false);
        let _squat = raw_listen(target.pid(), 0);
        let mut queued = Vec::new();
        loop {
            match raw_connect_with(target.pid(), libc::SOCK_NONBLOCK) {
                Ok(s) => queued.push(s),
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::EAGAIN), "{e}");
                    break;
                }
            }
        }
        assert!(!queued.is_empty(), "the backlog took no connection");
        let (code, errno, took) = timed_connect(target.pid(), Duration::from_secs(20));
        assert_eq!(
            (code, errno),
            (hipFileStatsTargetProcessNotAccessible, libc::ETIMEDOUT)
        );
        assert!(took < Duration::from_secs(10), "{took:?}");
        drop(target);
    }
);

#[test]
fn a_timeout_beyond_the_clock_is_no_limit() {
    // Duration::MAX cannot be added to the clock: the safe API waits without a limit (here
    // until the target exits) instead of panicking.
    let mut target = Target::spawn("shutdown", &[], true);
    let t = hipfile::api::stats::Target::open(target.pid()).unwrap();
    let stdin = target.child.stdin.take();
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        drop(stdin);
    });
    let e = t.connect_timeout(Some(Duration::MAX)).unwrap_err();
    assert_eq!(
        (e.kind(), e.to_string()),
        (
            std::io::ErrorKind::NotFound,
            "the target exited without serving its statistics".to_string()
        )
    );
    closer.join().unwrap();
}

#[test]
fn after_shutdown_the_socket_is_gone() {
    let mut target = Target::spawn("shutdown", &[], true);
    assert_eq!(
        raw_connect(target.pid()).unwrap_err().raw_os_error(),
        Some(libc::ECONNREFUSED)
    );
    let ctx = Ctx::create(target.pid());
    let stdin = target.child.stdin.take();
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        drop(stdin);
    });
    assert_eq!(ctx.connect(), hipFileStatsTargetProcessNotAccessible);
    closer.join().unwrap();
}

// ---- the wire protocol, spelled out independently of the library ----------

#[test]
fn wire_protocol_and_sealed_block() {
    let target = Target::spawn("record", &[], true);
    // The server thread binds its socket shortly after the block exists: retry, as clients do.
    let deadline = Instant::now() + Duration::from_secs(10);
    let sock = loop {
        match raw_connect(target.pid()) {
            Ok(sock) => break sock,
            Err(e) if Instant::now() < deadline => {
                assert_eq!(e.raw_os_error(), Some(libc::ECONNREFUSED));
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("connect: {e}"),
        }
    };
    // One int payload and one descriptor.
    let memfd = recv_fd(&sock);
    // The connection is closed after the hand-over.
    let mut byte = [0u8; 1];
    // SAFETY: a one-byte buffer.
    assert_eq!(
        unsafe { libc::read(sock.as_raw_fd(), byte.as_mut_ptr().cast(), 1) },
        0
    );

    // SAFETY: fstat into a zeroed struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { libc::fstat(memfd.as_raw_fd(), &mut st) }, 0);
    assert_eq!(
        st.st_size as usize, SHARED_SIZE,
        "[D] block followed by our extension"
    );
    // SAFETY: plain fcntl.
    let seals = unsafe { libc::fcntl(memfd.as_raw_fd(), libc::F_GET_SEALS) };
    assert_eq!(
        seals & (libc::F_SEAL_SHRINK | 0x10),
        libc::F_SEAL_SHRINK | 0x10,
        "seals {seals:#x}"
    );
    // Readers cannot map it writable (F_SEAL_FUTURE_WRITE)...
    // SAFETY: a new mapping that is unmapped if it succeeds.
    let p = unsafe {
        libc::mmap(
            null_mut(),
            SHARED_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            memfd.as_raw_fd(),
            0,
        )
    };
    assert_eq!(
        p,
        libc::MAP_FAILED,
        "a writable shared mapping must be refused"
    );
    // ...but can read it: version 1, level 1, two file registrations.
    // SAFETY: a new read-only mapping, unmapped below.
    let p = unsafe {
        libc::mmap(
            null_mut(),
            SHARED_SIZE,
            libc::PROT_READ,
            libc::MAP_SHARED,
            memfd.as_raw_fd(),
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    // SAFETY: the mapping is at least 24 bytes and page-aligned; the writer is stopped.
    let words = unsafe { std::slice::from_raw_parts(p.cast::<u64>(), 3) }.to_vec();
    // SAFETY: our mapping.
    unsafe { libc::munmap(p, SHARED_SIZE) };
    assert_eq!(words, [1, 1, 2]);

    let snap = Connection::from_fd(memfd).snapshot().unwrap();
    assert_eq!(snap.layout, Layout::V1);
    assert_eq!(
        snap.totals(BackendKind::Fastpath, Direction::Read).bytes,
        1 << 30
    );
    assert!(snap.ext.is_some());
    target.finish();
}

/// A sealed memfd holding `bytes`.
fn sealed_memfd(bytes: &[u8], seal: bool) -> OwnedFd {
    // SAFETY: valid name, plain flags.
    let fd = unsafe {
        libc::memfd_create(
            c"fake".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    assert!(fd >= 0);
    // SAFETY: a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut file, bytes).unwrap();
    if seal {
        // SAFETY: plain fcntl.
        assert_eq!(
            unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) },
            0
        );
    }
    file.into()
}

#[test]
fn reading_amd_blocks_from_a_memfd() {
    // AMD's retired layout: level 1, version 1, four byte counters.
    let mut r = vec![0u8; RETIRED_SIZE];
    r[0] = 1;
    r[8] = 1;
    r[16] = 42;
    let conn = Connection::from_fd(sealed_memfd(&r, true));
    let s = conn.snapshot().unwrap();
    assert_eq!((s.layout, s.retired[0]), (Layout::Retired, 42));
    // SAFETY: memfd_create with a valid name.
    let out = unsafe { libc::memfd_create(c"out".as_ptr(), libc::MFD_CLOEXEC) };
    // SAFETY: a fresh descriptor we own.
    let mut out = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(out) });
    conn.write_report(out.as_raw_fd()).unwrap();
    out.seek(SeekFrom::Start(0)).unwrap();
    let mut text = String::new();
    out.read_to_string(&mut text).unwrap();
    assert!(text.starts_with(
        "AIS-STATS Version: 1\nHipFile Stats Level: 1\nTotal fast path reads (B): 42\n"
    ));
    // A block that could shrink under the mapping is refused.
    let unsealed = Connection::from_fd(sealed_memfd(&r, false));
    assert!(unsealed.snapshot().is_err());
}
