//! Attaching to a live process that did known I/O, and checking every statistic exactly.
//!
//! The target is this test binary re-executed in a "target mode" ([`stats_attach_target`]):
//! on hipsim it opens the driver, registers two files and one device buffer, runs the
//! requests of [`PLAN`] through `hipFileRead` / `hipFileWrite` (fastpath, fallback, host,
//! failures of each, a fastpath `ENODEV` retried on the fallback, unaligned requests),
//! deregisters one file, prints a marker line and waits for a line on its standard input.
//!
//! The parent derives the exact expected block from [`PLAN`] (and checks it against the
//! hand-written table of [`literal_table`]), then reads the live target three ways:
//! (a) `hipFileStatsCreateContext` / `ConnectToTargetProcess` / `GenerateReport`, whose text
//! must equal a report built independently from the expected values (bandwidths and
//! latencies use the elapsed times read from the block and C's `%g`);
//! (b) the memfd itself, received over the abstract socket and mapped read-only, compared
//! byte for byte with an image of the expected block built at AMD's offsets, and through
//! `hipfile::api::stats::Target::connect`;
//! (c) `hipfile stats -p PID --json` (and the text form, which must equal (a)).
//! Then it tells the target to exit, checks that `hipFileStatsPollTargetProcess` sees the
//! exit and that the block read afterwards is unchanged. The same I/O at level 0 leaves every
//! counter zero but the block present, with level 0.
//!
//! Elapsed times are the only values not known in advance: they are checked to be zero
//! wherever no I/O was counted and to agree between the [D] table and our extension.

mod common;

use std::ffi::{c_int, c_void};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::ptr::null_mut;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::stats_ctx::{raw_connect, recv_fd, Ctx};
use common::*;
use hipfile::api::stats::{refusal_slot, Layout, Snapshot, Target as StatsTarget, BLOCK_SIZE};
use hipfile::api::Refusal;

const TARGET_ENV: &str = "HIPFILE_STATS_ATTACH_TARGET";
const READY: &str = "STATS-ATTACH-TARGET-READY";

const BUCKETS: usize = 16;
/// Direction indices.
const READ: usize = 0;
const WRITE: usize = 1;
/// Backend indices ([D]: 0 and 1; the extension adds 2).
const FP: usize = 0;
const FB: usize = 1;
const HOST: usize = 2;

/// Refusal slots of the extension (fixed by the shared layout).
const UNALIGNED_OFFSET: usize = 4;
const UNALIGNED_SIZE: usize = 5;
const UNALIGNED_MEMORY: usize = 6;

/// The engine's chunk, which is also the size of one pinned bounce buffer.
const CHUNK: u64 = 4 << 20;
/// Sizes of the target's files and buffers.
const FILE_A_SIZE: usize = 8 << 20;
const FILE_B_SIZE: usize = 1 << 20;
const DEVICE_BUF: usize = 4 << 20;
const HOST_BUF: usize = 8192;

/// Bucket of a byte count, written out independently of the library.
fn bucket(b: u64) -> usize {
    let x = b >> 12;
    let idx = if x == 0 {
        0
    } else {
        64 - x.leading_zeros() as usize
    };
    idx.min(BUCKETS - 1)
}

// ---- the known requests -----------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum File {
    /// 8 MiB of `pattern(.., 11)`, opened read-only.
    A,
    /// 1 MiB of zeros, opened read-write; deregistered at the end.
    B,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mem {
    /// The registered device buffer at this buffer offset.
    Device(usize),
    /// Unregistered pageable host memory, 4 KiB aligned.
    Host,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// hipsim's `fastpath_errno`.
    FastpathErrno(c_int),
    /// hipsim's `fail_copy` = 999 (every copy fails).
    FailCopy,
}

/// What serves a request and what the statistics record for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// The fastpath serves it.
    Fastpath,
    /// The fastpath refuses it (reason slot), the fallback serves it; unaligned.
    Fallback(usize),
    /// The host backend serves it (aligned).
    Host,
    /// The fastpath fails (not retried).
    FastpathError,
    /// The fastpath refuses it (reason slot), the fallback fails.
    FallbackError(usize),
    /// The host backend fails.
    HostError,
    /// The fastpath fails with ENODEV; the fallback serves the retry (aligned).
    Retried,
}

#[derive(Clone, Copy, Debug)]
struct Req {
    what: &'static str,
    dir: usize,
    file: File,
    mem: Mem,
    size: u64,
    offset: u64,
    fault: Fault,
    outcome: Outcome,
}

#[allow(clippy::too_many_arguments)] // one row of the PLAN table
const fn req(
    what: &'static str,
    dir: usize,
    file: File,
    mem: Mem,
    size: u64,
    offset: u64,
    fault: Fault,
    outcome: Outcome,
) -> Req {
    Req {
        what,
        dir,
        file,
        mem,
        size,
        offset,
        fault,
        outcome,
    }
}

/// The target's requests, in order.
#[rustfmt::skip]
const PLAN: [Req; 14] = [
    //   what                                                 dir    file     mem               size      offset   fault                               outcome
    req("fastpath read 4 KiB",                                READ,  File::A, Mem::Device(0),   4096,     0,       Fault::None,                        Outcome::Fastpath),
    req("fastpath read 1 MiB",                                READ,  File::A, Mem::Device(0),   1 << 20,  1 << 20, Fault::None,                        Outcome::Fastpath),
    req("fastpath write 64 KiB",                              WRITE, File::B, Mem::Device(0),   64 << 10, 0,       Fault::None,                        Outcome::Fastpath),
    req("fallback read 5000 B at offset 1",                   READ,  File::A, Mem::Device(0),   5000,     1,       Fault::None,                        Outcome::Fallback(UNALIGNED_OFFSET)),
    req("fallback read 3 MiB at offset 4097",                 READ,  File::A, Mem::Device(0),   3 << 20,  4097,    Fault::None,                        Outcome::Fallback(UNALIGNED_OFFSET)),
    req("fallback read 4 KiB into buffer + 512",              READ,  File::A, Mem::Device(512), 4096,     0,       Fault::None,                        Outcome::Fallback(UNALIGNED_MEMORY)),
    req("fallback write 10000 B at offset 8192",              WRITE, File::B, Mem::Device(0),   10000,    8192,    Fault::None,                        Outcome::Fallback(UNALIGNED_SIZE)),
    req("host read 8 KiB",                                    READ,  File::A, Mem::Host,        8192,     0,       Fault::None,                        Outcome::Host),
    req("host write 100 B to the read-only file",             WRITE, File::A, Mem::Host,        100,      3,       Fault::None,                        Outcome::HostError),
    req("fastpath read 8 KiB failing with EIO",               READ,  File::A, Mem::Device(0),   8192,     4096,    Fault::FastpathErrno(libc::EIO),    Outcome::FastpathError),
    req("fastpath write 4 KiB failing with EIO",              WRITE, File::B, Mem::Device(0),   4096,     0,       Fault::FastpathErrno(libc::EIO),    Outcome::FastpathError),
    req("fallback read 4 KiB at offset 100, copy fails",      READ,  File::A, Mem::Device(0),   4096,     100,     Fault::FailCopy,                    Outcome::FallbackError(UNALIGNED_OFFSET)),
    req("fallback write 6000 B at offset 3, copy fails",      WRITE, File::B, Mem::Device(0),   6000,     3,       Fault::FailCopy,                    Outcome::FallbackError(UNALIGNED_OFFSET)),
    req("fastpath read 16 KiB failing with ENODEV, retried",  READ,  File::A, Mem::Device(0),   16 << 10, 0,       Fault::FastpathErrno(libc::ENODEV), Outcome::Retried),
];

// ---- the target process -----------------------------------------------------------------------

/// A 4 KiB-aligned heap block (pageable host memory, unknown to hipsim).
struct HostBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl HostBuf {
    fn new(len: usize) -> HostBuf {
        let layout = std::alloc::Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        HostBuf { ptr, layout }
    }

    fn bytes(&self, off: usize, len: usize) -> Vec<u8> {
        assert!(off + len <= self.layout.size());
        // SAFETY: within the allocation.
        unsafe { std::slice::from_raw_parts(self.ptr.add(off), len) }.to_vec()
    }
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        // SAFETY: allocated above with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// Not a test on its own: the body of a target process when [`TARGET_ENV`] is set.
#[test]
fn stats_attach_target() {
    let Ok(mode) = std::env::var(TARGET_ENV) else {
        return;
    };
    assert_eq!(mode, "run");
    let path_a = scratch_file("attach-a");
    let path_b = scratch_file("attach-b");
    let data_a = pattern(FILE_A_SIZE, 11);
    make_file(&path_a, &data_a);
    make_file(&path_b, &vec![0u8; FILE_B_SIZE]);

    assert_eq!(hipFileDriverOpen(), OK);
    let fd_a = open_fd(&path_a, libc::O_RDONLY);
    let fd_b = open_fd(&path_b, libc::O_RDWR);
    let fh_a = register_fd(fd_a);
    let fh_b = register_fd(fd_b);
    let dev = sim().device_alloc(DEVICE_BUF);
    let dev_data = pattern(DEVICE_BUF, 5);
    sim().upload(dev.ptr, &dev_data);
    assert_eq!(hipFileBufRegister(dev.ptr, dev.len, 0), OK);
    let host = HostBuf::new(HOST_BUF);
    sim().reset_counters();
    // What device memory and file B must hold after each successful request.
    let mut dev_model = dev_data.clone();
    let mut b_model = vec![0u8; FILE_B_SIZE];

    for r in PLAN {
        let fh = match r.file {
            File::A => fh_a,
            File::B => fh_b,
        };
        let (base, buffer_offset): (*mut c_void, i64) = match r.mem {
            Mem::Device(off) => (dev.ptr, off as i64),
            Mem::Host => (host.ptr.cast(), 0),
        };
        match r.fault {
            Fault::None => {}
            Fault::FastpathErrno(e) => sim().fault("fastpath_errno", i64::from(e)),
            Fault::FailCopy => sim().fault("fail_copy", 999),
        }
        let size = r.size as usize;
        let off = r.offset as i64;
        // SAFETY: the device buffer is registered and large enough for every request of the
        // plan (checked by the library's bounds check too); the host buffer holds HOST_BUF
        // bytes, more than any host request.
        let n = unsafe {
            if r.dir == READ {
                hipFileRead(fh, base, size, off, buffer_offset)
            } else {
                hipFileWrite(fh, base, size, off, buffer_offset)
            }
        };
        match r.fault {
            Fault::None => {}
            Fault::FastpathErrno(_) => sim().fault("fastpath_errno", 0),
            Fault::FailCopy => sim().fault("fail_copy", 0),
        }
        let fails = matches!(
            r.outcome,
            Outcome::FastpathError | Outcome::FallbackError(_) | Outcome::HostError
        );
        if fails {
            assert!(n < 0, "{}: expected a failure, got {n}", r.what);
            continue;
        }
        assert_eq!(n, size as isize, "{}", r.what);
        // The bytes arrived where they should (the request really ran).
        let range = r.offset as usize..r.offset as usize + size;
        match (r.dir, r.mem) {
            (READ, Mem::Device(boff)) => {
                dev_model[boff..boff + size].copy_from_slice(&data_a[range.clone()]);
                let got = sim().download(dev.at(boff), size);
                assert!(got == data_a[range], "{}: wrong data", r.what);
            }
            (READ, Mem::Host) => {
                assert!(
                    host.bytes(0, size) == data_a[range],
                    "{}: wrong data",
                    r.what
                );
            }
            (_, Mem::Device(boff)) => {
                assert_eq!(r.file, File::B);
                b_model[range].copy_from_slice(&dev_model[boff..boff + size]);
            }
            (_, Mem::Host) => unreachable!("no successful host write in the plan"),
        }
    }
    // The simulator saw exactly the fastpath transfers and copy failures of the plan.
    assert_eq!(sim().counter("fastpath_read_bytes"), 4096 + (1 << 20));
    assert_eq!(sim().counter("fastpath_write_bytes"), 64 << 10);
    assert_eq!(sim().counter("copy_faults_injected"), 2);
    assert!(sim().download(dev.ptr, DEVICE_BUF) == dev_model);
    assert!(std::fs::read(&path_b).unwrap() == b_model, "file B");

    hipFileHandleDeregister(fh_b);

    println!("{READY}");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), "exit", "the parent's command");
    // Nothing below touches the library: the parent reads the block again after our exit.
    std::mem::forget(dev);
    // SAFETY: our descriptors.
    unsafe {
        libc::close(fd_a);
        libc::close(fd_b);
    }
    let _ = std::fs::remove_file(&path_a);
    let _ = std::fs::remove_file(&path_b);
}

/// A running target.
struct Target {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Arc<Mutex<String>>,
    drain: Option<std::thread::JoinHandle<()>>,
}

impl Target {
    /// Start a target at statistics level `level` and wait until it did its I/O.
    fn spawn(level: &str) -> Target {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "stats_attach_target",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ]);
        for (k, _) in std::env::vars() {
            if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
                cmd.env_remove(&k);
            }
        }
        cmd.env(TARGET_ENV, "run")
            .env("HIPFILE_HIP_LIBRARY", hipsim_path())
            .env("HIPFILE_CUDA_LIBRARY", hipsim_path())
            .env("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")
            .env("HIPFILE_STATS_LEVEL", level)
            .env("HIPFILE_HOST", "true")
            .env("HIPFILE_CHUNK_SIZE", "4M")
            .env("HIPFILE_LOG", "error");
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn the target");
        let stdin = child.stdin.take();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let out = Arc::new(Mutex::new(String::new()));
        loop {
            let line = lines
                .next()
                .expect("the target ended before it was ready")
                .unwrap();
            out.lock().unwrap().push_str(&line);
            out.lock().unwrap().push('\n');
            if line.contains(READY) {
                break;
            }
        }
        // Keep draining so that the target never blocks on a full pipe.
        let sink = out.clone();
        let drain = std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Target {
            child,
            stdin,
            stdout: out,
            drain: Some(drain),
        }
    }

    fn pid(&self) -> c_int {
        self.child.id() as c_int
    }

    /// Tell the target to exit and wait until it did, successfully.
    fn finish(&mut self) {
        let mut stdin = self.stdin.take().expect("still running");
        stdin.write_all(b"exit\n").unwrap();
        drop(stdin);
        let status = self.child.wait().unwrap();
        if let Some(d) = self.drain.take() {
            d.join().unwrap();
        }
        let out = self.stdout.lock().unwrap().clone();
        assert!(
            status.success() && out.contains("1 passed"),
            "target failed ({status}):\n{out}"
        );
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if self.stdin.take().is_some() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

// ---- the expected block -------------------------------------------------------------------------

/// One backend and one direction of GPU 0 in the [D] table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cell {
    count: [u64; BUCKETS],
    bytes: [u64; BUCKETS],
    errors: [u64; BUCKETS],
    unaligned: u64,
}

impl Cell {
    fn ok(&mut self, bytes: u64, aligned: bool) {
        self.count[bucket(bytes)] += 1;
        self.bytes[bucket(bytes)] += bytes;
        if !aligned {
            self.unaligned += 1;
        }
    }

    fn failed(&mut self, requested: u64) {
        self.errors[bucket(requested)] += 1;
    }

    fn in_use(&self) -> bool {
        *self != Cell::default()
    }

    fn ops(&self) -> u64 {
        self.count.iter().sum()
    }

    fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }

    fn total_errors(&self) -> u64 {
        self.errors.iter().sum()
    }
}

/// Extension totals of one backend and one direction (times apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tot {
    ops: u64,
    bytes: u64,
    errors: u64,
    error_bytes: u64,
    unaligned: u64,
}

impl Tot {
    fn ok(&mut self, bytes: u64, aligned: bool) {
        self.ops += 1;
        self.bytes += bytes;
        if !aligned {
            self.unaligned += 1;
        }
    }

    fn failed(&mut self, requested: u64) {
        self.errors += 1;
        self.error_bytes += requested;
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Expected {
    level: u64,
    file_registrations: u64,
    buffer_registrations: u64,
    fastpath_rejections: u64,
    /// `[backend][direction]` of GPU 0 (every other GPU is all zero).
    gpu0: [[Cell; 2]; 2],
    /// `[backend][direction]`, extension.
    io: [[Tot; 2]; 3],
    /// `[direction]`: successful I/Os of every backend per bucket.
    size_hist: [[u64; BUCKETS]; 2],
    /// Fastpath refusals per slot (the fallback and host ones stay zero).
    refusals: [u64; BUCKETS],
    fallback_retries: u64,
    file_deregistrations: u64,
    buffer_deregistrations: u64,
    bounce_in_use: u64,
    bounce_peak: u64,
}

/// The block after [`PLAN`], derived request by request.
fn derive_expected(level: u64) -> Expected {
    let mut e = Expected {
        level,
        ..Expected::default()
    };
    if level == 0 {
        return e;
    }
    e.file_registrations = 2;
    e.buffer_registrations = 1;
    e.file_deregistrations = 1;
    for r in PLAN {
        let (d, n) = (r.dir, r.size);
        let ok = |e: &mut Expected, b: usize, aligned: bool| {
            if b != HOST {
                e.gpu0[b][d].ok(n, aligned);
            }
            e.io[b][d].ok(n, aligned);
            e.size_hist[d][bucket(n)] += 1;
        };
        let failed = |e: &mut Expected, b: usize| {
            if b != HOST {
                e.gpu0[b][d].failed(n);
            }
            e.io[b][d].failed(n);
        };
        let refused = |e: &mut Expected, slot: usize| {
            e.fastpath_rejections += 1;
            e.refusals[slot] += 1;
        };
        match r.outcome {
            Outcome::Fastpath => ok(&mut e, FP, true),
            Outcome::Fallback(slot) => {
                refused(&mut e, slot);
                ok(&mut e, FB, false);
            }
            Outcome::Host => ok(&mut e, HOST, true),
            Outcome::FastpathError => failed(&mut e, FP),
            Outcome::FallbackError(slot) => {
                refused(&mut e, slot);
                failed(&mut e, FB);
            }
            Outcome::HostError => failed(&mut e, HOST),
            Outcome::Retried => {
                failed(&mut e, FP);
                e.fallback_retries += 1;
                ok(&mut e, FB, true);
            }
        }
    }
    // Every fallback request fits in one chunk: one bounce buffer, kept by the pool.
    e.bounce_in_use = CHUNK;
    e.bounce_peak = CHUNK;
    e
}

/// The same block written out by hand: the table this test asserts.
fn literal_table() -> Expected {
    let mut e = Expected {
        level: 1,
        file_registrations: 2,
        buffer_registrations: 1,
        fastpath_rejections: 6,
        fallback_retries: 1,
        file_deregistrations: 1,
        buffer_deregistrations: 0,
        bounce_in_use: 4 << 20,
        bounce_peak: 4 << 20,
        ..Expected::default()
    };
    // GPU 0, Fastpath, Read: 4096 B (bucket 1) and 1 MiB (bucket 9); failed: 8 KiB (bucket 2,
    // EIO) and 16 KiB (bucket 3, ENODEV).
    let c = &mut e.gpu0[FP][READ];
    c.count[1] = 1;
    c.bytes[1] = 4096;
    c.count[9] = 1;
    c.bytes[9] = 1 << 20;
    c.errors[2] = 1;
    c.errors[3] = 1;
    // GPU 0, Fastpath, Write: 64 KiB (bucket 5); failed: 4 KiB (bucket 1).
    let c = &mut e.gpu0[FP][WRITE];
    c.count[5] = 1;
    c.bytes[5] = 64 << 10;
    c.errors[1] = 1;
    // GPU 0, Fallback, Read: 5000 B + 4096 B (bucket 1), 16 KiB retry (bucket 3), 3 MiB
    // (bucket 10); failed: 4 KiB (bucket 1); unaligned: 5000, 3 MiB, 4096 at buffer + 512.
    let c = &mut e.gpu0[FB][READ];
    c.count[1] = 2;
    c.bytes[1] = 5000 + 4096;
    c.count[3] = 1;
    c.bytes[3] = 16 << 10;
    c.count[10] = 1;
    c.bytes[10] = 3 << 20;
    c.errors[1] = 1;
    c.unaligned = 3;
    // GPU 0, Fallback, Write: 10000 B (bucket 2), unaligned; failed: 6000 B (bucket 1).
    let c = &mut e.gpu0[FB][WRITE];
    c.count[2] = 1;
    c.bytes[2] = 10000;
    c.errors[1] = 1;
    c.unaligned = 1;
    // Extension totals.
    e.io[FP][READ] = Tot {
        ops: 2,
        bytes: 4096 + (1 << 20),
        errors: 2,
        error_bytes: 8192 + 16384,
        unaligned: 0,
    };
    e.io[FP][WRITE] = Tot {
        ops: 1,
        bytes: 64 << 10,
        errors: 1,
        error_bytes: 4096,
        unaligned: 0,
    };
    e.io[FB][READ] = Tot {
        ops: 4,
        bytes: 5000 + (3 << 20) + 4096 + 16384,
        errors: 1,
        error_bytes: 4096,
        unaligned: 3,
    };
    e.io[FB][WRITE] = Tot {
        ops: 1,
        bytes: 10000,
        errors: 1,
        error_bytes: 6000,
        unaligned: 1,
    };
    e.io[HOST][READ] = Tot {
        ops: 1,
        bytes: 8192,
        ..Tot::default()
    };
    e.io[HOST][WRITE] = Tot {
        errors: 1,
        error_bytes: 100,
        ..Tot::default()
    };
    e.size_hist[READ] = [0, 3, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0];
    e.size_hist[WRITE] = [0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    e.refusals[UNALIGNED_OFFSET] = 4;
    e.refusals[UNALIGNED_SIZE] = 1;
    e.refusals[UNALIGNED_MEMORY] = 1;
    e
}

// ---- the raw block (AMD's offsets, written out) ----------------------------------------------

const V1_SIZE: usize = 33_576;
const PER_GPU: usize = 1048;
const HIST: usize = 128;
const EXT_SIZE: usize = 2560;
const TOTAL_SIZE: usize = V1_SIZE + EXT_SIZE;
const IO_TOTALS: usize = 48;

/// Offset of `PerGpuStatsV1` `[g][b]`.
fn gpu_base(g: usize, b: usize) -> usize {
    40 + (g * 2 + b) * PER_GPU
}
fn in_use_at(b: usize) -> usize {
    gpu_base(0, b)
}
fn size_at(b: usize, d: usize, k: usize) -> usize {
    gpu_base(0, b) + 8 + d * HIST + 8 * k
}
fn count_at(b: usize, d: usize, k: usize) -> usize {
    gpu_base(0, b) + 264 + d * HIST + 8 * k
}
fn time_at(b: usize, d: usize, k: usize) -> usize {
    gpu_base(0, b) + 520 + d * HIST + 8 * k
}
fn errors_at(b: usize, d: usize, k: usize) -> usize {
    gpu_base(0, b) + 776 + d * HIST + 8 * k
}
fn unaligned_at(b: usize, d: usize) -> usize {
    gpu_base(0, b) + 1032 + 8 * d
}
/// Extension `io[b][d]` field `f` (0 ops, 1 bytes, 2 time_us, 3 errors, 4 error_bytes,
/// 5 unaligned).
fn ext_io_at(b: usize, d: usize, f: usize) -> usize {
    V1_SIZE + 24 + (b * 2 + d) * IO_TOTALS + 8 * f
}
fn ext_size_hist_at(d: usize, k: usize) -> usize {
    V1_SIZE + 312 + d * HIST + 8 * k
}
fn ext_refusal_at(b: usize, slot: usize) -> usize {
    V1_SIZE + 2104 + (b * 16 + slot) * 8
}
const EXT_RETRIES: usize = V1_SIZE + 2488;
const EXT_FILE_DEREG: usize = V1_SIZE + 2528;
const EXT_BUF_DEREG: usize = V1_SIZE + 2536;
const EXT_BOUNCE_IN_USE: usize = V1_SIZE + 2544;
const EXT_BOUNCE_PEAK: usize = V1_SIZE + 2552;

fn word(img: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(img[off..off + 8].try_into().unwrap())
}

fn put(img: &mut [u8], off: usize, v: u64) {
    img[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// The elapsed times the block holds (the only values not known in advance).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Times {
    /// `[backend][direction][bucket]` of GPU 0.
    gpu0: [[[u64; BUCKETS]; 2]; 2],
    /// `[backend][direction]`, extension.
    io: [[u64; 2]; 3],
}

impl Times {
    fn of(img: &[u8]) -> Times {
        let mut t = Times::default();
        for b in [FP, FB] {
            for d in [READ, WRITE] {
                for k in 0..BUCKETS {
                    t.gpu0[b][d][k] = word(img, time_at(b, d, k));
                }
            }
        }
        for b in [FP, FB, HOST] {
            for d in [READ, WRITE] {
                t.io[b][d] = word(img, ext_io_at(b, d, 2));
            }
        }
        t
    }

    fn cell_total(&self, b: usize, d: usize) -> u64 {
        self.gpu0[b][d].iter().sum()
    }
}

/// The whole block as it must be, byte for byte, with the elapsed times `t`.
fn expected_image(e: &Expected, t: &Times) -> Vec<u8> {
    let mut img = vec![0u8; TOTAL_SIZE];
    put(&mut img, 0, 1); // version
    put(&mut img, 8, e.level);
    put(&mut img, 16, e.file_registrations);
    put(&mut img, 24, e.buffer_registrations);
    put(&mut img, 32, e.fastpath_rejections);
    for b in [FP, FB] {
        if e.gpu0[b].iter().any(Cell::in_use) {
            put(&mut img, in_use_at(b), 1);
        }
        for d in [READ, WRITE] {
            let c = &e.gpu0[b][d];
            for k in 0..BUCKETS {
                put(&mut img, size_at(b, d, k), c.bytes[k]);
                put(&mut img, count_at(b, d, k), c.count[k]);
                // Time only where I/O was counted (asserted zero elsewhere by the comparison).
                put(
                    &mut img,
                    time_at(b, d, k),
                    if c.count[k] != 0 { t.gpu0[b][d][k] } else { 0 },
                );
                put(&mut img, errors_at(b, d, k), c.errors[k]);
            }
            put(&mut img, unaligned_at(b, d), c.unaligned);
        }
    }
    let x = V1_SIZE;
    put(&mut img, x, u64::from_le_bytes(*b"hipfileX"));
    put(&mut img, x + 8, 1);
    put(&mut img, x + 16, EXT_SIZE as u64);
    for b in [FP, FB, HOST] {
        for d in [READ, WRITE] {
            let o = &e.io[b][d];
            put(&mut img, ext_io_at(b, d, 0), o.ops);
            put(&mut img, ext_io_at(b, d, 1), o.bytes);
            put(
                &mut img,
                ext_io_at(b, d, 2),
                if o.ops != 0 { t.io[b][d] } else { 0 },
            );
            put(&mut img, ext_io_at(b, d, 3), o.errors);
            put(&mut img, ext_io_at(b, d, 4), o.error_bytes);
            put(&mut img, ext_io_at(b, d, 5), o.unaligned);
        }
    }
    for d in [READ, WRITE] {
        for k in 0..BUCKETS {
            put(&mut img, ext_size_hist_at(d, k), e.size_hist[d][k]);
        }
    }
    // host_per_gpu stays zero: the host buffer belongs to no GPU.
    for (slot, &n) in e.refusals.iter().enumerate() {
        put(&mut img, ext_refusal_at(FP, slot), n);
    }
    put(&mut img, EXT_RETRIES, e.fallback_retries);
    // async_ops and batch_ops stay zero.
    put(&mut img, EXT_FILE_DEREG, e.file_deregistrations);
    put(&mut img, EXT_BUF_DEREG, e.buffer_deregistrations);
    put(&mut img, EXT_BOUNCE_IN_USE, e.bounce_in_use);
    put(&mut img, EXT_BOUNCE_PEAK, e.bounce_peak);
    img
}

/// Compare two blocks word by word, naming the first differences.
fn assert_same_block(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: size");
    let diffs: Vec<String> = (0..want.len() / 8)
        .filter(|i| got[i * 8..i * 8 + 8] != want[i * 8..i * 8 + 8])
        .take(20)
        .map(|i| {
            let off = i * 8;
            let place = if off < V1_SIZE {
                if off < 40 {
                    format!("header word {}", off / 8)
                } else {
                    let rel = off - 40;
                    let (gb, inner) = (rel / PER_GPU, rel % PER_GPU);
                    format!("perGpu[{}][{}] + {inner}", gb / 2, gb % 2)
                }
            } else {
                format!("extension + {}", off - V1_SIZE)
            };
            format!(
                "  offset {off} ({place}): got {}, want {}",
                word(got, off),
                word(want, off)
            )
        })
        .collect();
    assert!(
        diffs.is_empty(),
        "{what}: the block differs from the expected one:\n{}",
        diffs.join("\n")
    );
}

/// Times are zero where nothing was counted and agree between the [D] table and the extension.
fn check_times(e: &Expected, t: &Times) {
    for b in [FP, FB] {
        for d in [READ, WRITE] {
            for k in 0..BUCKETS {
                if e.gpu0[b][d].count[k] == 0 {
                    assert_eq!(t.gpu0[b][d][k], 0, "time of [{b}][{d}] bucket {k}");
                }
            }
            // Every device I/O is GPU 0's: the extension's total is the table's sum.
            assert_eq!(
                t.io[b][d],
                t.cell_total(b, d),
                "time of backend {b} dir {d}"
            );
        }
    }
    for d in [READ, WRITE] {
        if e.io[HOST][d].ops == 0 {
            assert_eq!(t.io[HOST][d], 0);
        }
    }
}

// ---- receiving the memfd the way AMD's client does ------------------------

/// Connect to `"\0AISSTATS%08x"` (full `sizeof(sockaddr_un)`) and receive the memfd.
fn receive_memfd(pid: c_int) -> OwnedFd {
    let deadline = Instant::now() + Duration::from_secs(10);
    let sock = loop {
        match raw_connect(pid) {
            Ok(sock) => break sock,
            Err(e) => assert!(Instant::now() < deadline, "connect: {e}"),
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    recv_fd(&sock)
}

/// The block behind `memfd`, through a read-only shared mapping.
fn map_block(memfd: &OwnedFd) -> Vec<u8> {
    // SAFETY: fstat into a zeroed struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { libc::fstat(memfd.as_raw_fd(), &mut st) }, 0);
    assert_eq!(st.st_size as usize, TOTAL_SIZE, "[D] block + extension");
    // SAFETY: a new read-only mapping, unmapped below.
    let p = unsafe {
        libc::mmap(
            null_mut(),
            TOTAL_SIZE,
            libc::PROT_READ,
            libc::MAP_SHARED,
            memfd.as_raw_fd(),
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    // SAFETY: TOTAL_SIZE readable bytes; the writer is idle (the target waits on stdin).
    let v = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), TOTAL_SIZE) }.to_vec();
    // SAFETY: our mapping.
    unsafe { libc::munmap(p, TOTAL_SIZE) };
    v
}

// ---- (a) the hipFileStats* functions ------------------------------------------------------------

/// `x` as C's `printf("%g")` prints it (what C++'s `operator<<` prints for a `double`).
fn c_g(x: f64) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: a buffer of 64 bytes, a NUL-terminated format taking one double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%g".as_ptr(), x) };
    assert!(n > 0 && (n as usize) < buf.len());
    String::from_utf8(buf[..n as usize].to_vec()).unwrap()
}

/// GiB/s: `bytes / 2^30` over `time_us / 10^6` seconds, 0 without time.
fn gib_s(bytes: u64, time_us: u64) -> f64 {
    if time_us == 0 {
        0.0
    } else {
        (bytes as f64 / (1u64 << 30) as f64) / (time_us as f64 / 1e6)
    }
}

/// Average latency in µs: `time_us / count`, 0 without I/O.
fn lat_us(time_us: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        time_us as f64 / count as f64
    }
}

/// Row label of bucket `k` in KiB: "0-4", "4-8", ..., "32768-65536", "65536-...".
fn label(k: usize) -> String {
    match k {
        0 => "0-4".to_string(),
        15 => "65536-...".to_string(),
        k => format!("{}-{}", 1u64 << (k + 1), 1u64 << (k + 2)),
    }
}

const BACKENDS: [&str; 2] = ["Fastpath", "Fallback"];
const OPS: [&str; 2] = ["Read", "Write"];

#[allow(clippy::too_many_arguments)]
fn five_lines(
    out: &mut Vec<String>,
    backend: &str,
    op: &str,
    bytes: u64,
    time_us: u64,
    ops: u64,
    errors: u64,
    unaligned: u64,
) {
    out.push(format!("Total {backend} {op} Size (B): {bytes}"));
    out.push(format!(
        "Average {backend} {op} Bandwidth (GiB/s): {}",
        c_g(gib_s(bytes, time_us))
    ));
    out.push(format!(
        "Average {backend} {op} Latency (us): {}",
        c_g(lat_us(time_us, ops))
    ));
    out.push(format!("Total {backend} {op} Errors: {errors}"));
    out.push(format!("Total {backend} {op} Unaligned: {unaligned}"));
    out.push(String::new());
}

/// The report the block must produce (AMD's, then our extension section), line by line.
fn expected_report(e: &Expected, t: &Times) -> Vec<String> {
    let mut out = vec![
        "AIS-STATS Version: 1".to_string(),
        format!("HipFile Stats Level: {}", e.level),
        format!("File Handle Registrations: {}", e.file_registrations),
        format!("Buffer Registrations: {}", e.buffer_registrations),
        format!("Fastpath Rejections: {}", e.fastpath_rejections),
        String::new(),
    ];
    for b in [FP, FB] {
        for d in [READ, WRITE] {
            let c = &e.gpu0[b][d];
            five_lines(
                &mut out,
                BACKENDS[b],
                OPS[d],
                c.total_bytes(),
                t.cell_total(b, d),
                c.ops(),
                c.total_errors(),
                c.unaligned,
            );
        }
    }
    if e.gpu0.iter().flatten().any(Cell::in_use) {
        out.push("GPU 0:".to_string());
        type Column = fn(&Cell, &[u64; BUCKETS], usize) -> String;
        let tables: [(&str, &str, Column); 4] = [
            ("IO Size Histogram", "Count", |c, _, k| {
                c.count[k].to_string()
            }),
            ("IO Bandwidth Histogram", "Bandwidth (GiB/s)", |c, t, k| {
                c_g(gib_s(c.bytes[k], t[k]))
            }),
            ("IO Latency Histogram", "Latency (us)", |c, t, k| {
                c_g(lat_us(t[k], c.count[k]))
            }),
            ("IO Errors Histogram", "Errors", |c, _, k| {
                c.errors[k].to_string()
            }),
        ];
        for (title, what, column) in tables {
            out.push(title.to_string());
            let mut header = format!("{:<16}", "IO Size (KiB)");
            for b in BACKENDS {
                for op in OPS {
                    header.push_str(&format!("{:>34}", format!("{b} {op} {what}")));
                }
            }
            out.push(header);
            for k in 0..BUCKETS {
                let mut row = format!("{:<16}", label(k));
                for b in [FP, FB] {
                    for d in [READ, WRITE] {
                        row.push_str(&format!("{:>34}", column(&e.gpu0[b][d], &t.gpu0[b][d], k)));
                    }
                }
                out.push(row);
            }
            out.push(String::new());
        }
        for b in [FP, FB] {
            for d in [READ, WRITE] {
                out.push(format!(
                    "{} {} Unaligned Count: {}",
                    BACKENDS[b], OPS[d], e.gpu0[b][d].unaligned
                ));
            }
        }
        out.push(String::new());
    }
    out.push("Extended Stats (hipfile extension, version 1)".to_string());
    for d in [READ, WRITE] {
        let h = &e.io[HOST][d];
        five_lines(
            &mut out,
            "Host",
            OPS[d],
            h.bytes,
            t.io[HOST][d],
            h.ops,
            h.errors,
            h.unaligned,
        );
    }
    out.push(format!(
        "Fastpath To Fallback Retries: {}",
        e.fallback_retries
    ));
    out.push(format!(
        "Fastpath Refusals: {}",
        e.refusals.iter().sum::<u64>()
    ));
    let reasons = [
        (
            UNALIGNED_OFFSET,
            "UnalignedOffset (the file offset is not aligned for direct I/O)",
        ),
        (
            UNALIGNED_SIZE,
            "UnalignedSize (the size is not aligned for direct I/O)",
        ),
        (
            UNALIGNED_MEMORY,
            "UnalignedMemory (the memory address is not aligned for direct I/O)",
        ),
    ];
    for (slot, name) in reasons {
        if e.refusals[slot] != 0 {
            out.push(format!("  {name}: {}", e.refusals[slot]));
        }
    }
    out.push("Fallback Refusals: 0".to_string());
    out.push("Host Refusals: 0".to_string());
    out.push("Async Read Submissions: 0".to_string());
    out.push("Async Write Submissions: 0".to_string());
    out.push("Batch Read Submissions: 0".to_string());
    out.push("Batch Write Submissions: 0".to_string());
    out.push(format!(
        "File Handle Deregistrations: {}",
        e.file_deregistrations
    ));
    out.push(format!(
        "Buffer Deregistrations: {}",
        e.buffer_deregistrations
    ));
    out.push(format!("Bounce Buffer Bytes In Use: {}", e.bounce_in_use));
    out.push(format!("Bounce Buffer Bytes Peak: {}", e.bounce_peak));
    out
}

fn assert_report(text: &str, want: &[String], what: &str) {
    let got: Vec<&str> = text.lines().collect();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g,
            w,
            "{what}: report line {} differs; report:\n{text}",
            i + 1
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: report line count; report:\n{text}"
    );
    assert!(text.ends_with('\n'));
}

// ---- (b) the library's own client -----------------------------------------------------------

fn check_snapshot(s: &Snapshot, e: &Expected, t: &Times) {
    assert_eq!(s.layout, Layout::V1);
    assert_eq!((s.version, s.level), (1, e.level));
    assert_eq!(
        (
            s.file_registrations,
            s.buffer_registrations,
            s.fastpath_rejections
        ),
        (
            e.file_registrations,
            e.buffer_registrations,
            e.fastpath_rejections
        )
    );
    for (g, row) in s.gpus.iter().enumerate() {
        for (b, gb) in row.iter().enumerate() {
            if g != 0 {
                assert_eq!(*gb, Default::default(), "GPU {g} backend {b}");
                continue;
            }
            let in_use = e.gpu0[b].iter().any(Cell::in_use);
            assert_eq!(gb.in_use, u64::from(in_use), "inUse of backend {b}");
            for d in [READ, WRITE] {
                let c = &e.gpu0[b][d];
                assert_eq!(gb.io_count[d], c.count, "ioCount [{b}][{d}]");
                assert_eq!(gb.io_size_bytes[d], c.bytes, "ioSizeBytes [{b}][{d}]");
                assert_eq!(gb.error_count[d], c.errors, "errorCount [{b}][{d}]");
                assert_eq!(gb.io_time_us[d], t.gpu0[b][d], "ioTimeUs [{b}][{d}]");
                assert_eq!(gb.unaligned_count[d], c.unaligned, "unaligned [{b}][{d}]");
            }
        }
    }
    let x = s.ext.as_ref().expect("our extension");
    assert_eq!((x.version, x.size), (1, EXT_SIZE as u64));
    for b in [FP, FB, HOST] {
        for d in [READ, WRITE] {
            let (got, want) = (x.io[b][d], e.io[b][d]);
            assert_eq!(
                (
                    got.ops,
                    got.bytes,
                    got.errors,
                    got.error_bytes,
                    got.unaligned,
                    got.time_us
                ),
                (
                    want.ops,
                    want.bytes,
                    want.errors,
                    want.error_bytes,
                    want.unaligned,
                    t.io[b][d]
                ),
                "extension io [{b}][{d}]"
            );
        }
    }
    assert_eq!(x.size_hist, e.size_hist);
    assert!(x
        .host_per_gpu
        .iter()
        .flatten()
        .all(|t| *t == Default::default()));
    assert_eq!(x.refusals[FP], e.refusals);
    assert_eq!(x.refusals[FB], [0; 16]);
    assert_eq!(x.refusals[HOST], [0; 16]);
    assert_eq!(x.fallback_retries, e.fallback_retries);
    assert_eq!((x.async_ops, x.batch_ops), ([0, 0], [0, 0]));
    assert_eq!(
        (x.file_deregistrations, x.buffer_deregistrations),
        (e.file_deregistrations, e.buffer_deregistrations)
    );
    assert_eq!(
        (x.bounce_bytes_in_use, x.bounce_bytes_peak),
        (e.bounce_in_use, e.bounce_peak)
    );
}

// ---- (c) `hipfile stats` -----------------------------------------------------------------------

fn run_cli(pid: c_int, json: bool) -> String {
    let mut cmd = Command::new(hipfile_tool());
    cmd.args(["stats", "-p", &pid.to_string()]);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().expect("run hipfile stats");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "hipfile stats failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A tiny JSON reader: enough for the `hipfile stats --json` object.
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn parse(text: &str) -> Json {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.ws();
        assert_eq!(p.i, p.s.len(), "trailing text after the JSON value");
        v
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) {
        self.ws();
        assert_eq!(
            self.s.get(self.i).copied().map(char::from),
            Some(char::from(c)),
            "JSON: expected '{}' at {}",
            char::from(c),
            self.i
        );
        self.i += 1;
    }

    fn peek(&mut self) -> u8 {
        self.ws();
        *self.s.get(self.i).expect("JSON: unexpected end")
    }

    fn literal(&mut self, word: &str, v: Json) -> Json {
        assert!(
            self.s[self.i..].starts_with(word.as_bytes()),
            "JSON: bad literal"
        );
        self.i += word.len();
        v
    }

    fn string(&mut self) -> String {
        self.eat(b'"');
        let mut out = String::new();
        loop {
            let c = self.s[self.i];
            self.i += 1;
            match c {
                b'"' => return out,
                b'\\' => {
                    let e = self.s[self.i];
                    self.i += 1;
                    match e {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hex = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
                            self.i += 4;
                            out.push(
                                char::from_u32(u32::from_str_radix(hex, 16).unwrap()).unwrap(),
                            );
                        }
                        other => out.push(char::from(other)),
                    }
                }
                _ => out.push(char::from(c)),
            }
        }
    }

    fn value(&mut self) -> Json {
        match self.peek() {
            b'{' => {
                self.eat(b'{');
                let mut members = Vec::new();
                if self.peek() == b'}' {
                    self.eat(b'}');
                    return Json::Obj(members);
                }
                loop {
                    let k = self.string();
                    self.eat(b':');
                    members.push((k, self.value()));
                    if self.peek() == b',' {
                        self.eat(b',');
                    } else {
                        self.eat(b'}');
                        return Json::Obj(members);
                    }
                }
            }
            b'[' => {
                self.eat(b'[');
                let mut items = Vec::new();
                if self.peek() == b']' {
                    self.eat(b']');
                    return Json::Arr(items);
                }
                loop {
                    items.push(self.value());
                    if self.peek() == b',' {
                        self.eat(b',');
                    } else {
                        self.eat(b']');
                        return Json::Arr(items);
                    }
                }
            }
            b'"' => Json::Str(self.string()),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                Json::Num(
                    t.parse()
                        .unwrap_or_else(|_| panic!("JSON: bad number {t:?}")),
                )
            }
        }
    }
}

impl Json {
    /// The value at a dotted path of object keys and array indices ("gpus.0.gpu").
    fn at(&self, path: &str) -> &Json {
        path.split('.').fold(self, |v, k| match v {
            Json::Obj(m) => m
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("JSON: no key {k:?} in {path}")),
            Json::Arr(a) => &a[k.parse::<usize>().unwrap()],
            other => panic!("JSON: {path}: {other:?} has no {k:?}"),
        })
    }

    fn u64(&self) -> u64 {
        match self {
            Json::Num(x) if x.fract() == 0.0 && *x >= 0.0 => *x as u64,
            other => panic!("JSON: not a count: {other:?}"),
        }
    }

    fn f64(&self) -> f64 {
        match self {
            Json::Num(x) => *x,
            other => panic!("JSON: not a number: {other:?}"),
        }
    }

    fn u64s(&self) -> Vec<u64> {
        match self {
            Json::Arr(a) => a.iter().map(Json::u64).collect(),
            other => panic!("JSON: not an array: {other:?}"),
        }
    }

    fn len(&self) -> usize {
        match self {
            Json::Arr(a) => a.len(),
            Json::Obj(m) => m.len(),
            other => panic!("JSON: no length: {other:?}"),
        }
    }
}

fn check_json(text: &str, e: &Expected, t: &Times) {
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let j = Parser::parse(text.trim_end());
    let n = |path: &str| j.at(path).u64();
    assert_eq!(j.at("layout"), &Json::Str("v1".into()));
    assert_eq!((n("version"), n("level")), (1, e.level));
    assert_eq!(n("file_registrations"), e.file_registrations);
    assert_eq!(n("buffer_registrations"), e.buffer_registrations);
    assert_eq!(n("fastpath_rejections"), e.fastpath_rejections);
    for (b, name) in ["fastpath", "fallback", "host"].into_iter().enumerate() {
        for (d, op) in ["read", "write"].into_iter().enumerate() {
            let p = format!("backends.{name}.{op}");
            let want = &e.io[b][d];
            let f = |k: &str| n(&format!("{p}.{k}"));
            assert_eq!(
                (
                    f("ops"),
                    f("bytes"),
                    f("errors"),
                    f("error_bytes"),
                    f("unaligned"),
                    f("time_us")
                ),
                (
                    want.ops,
                    want.bytes,
                    want.errors,
                    want.error_bytes,
                    want.unaligned,
                    t.io[b][d]
                ),
                "{p}"
            );
            assert_eq!(
                j.at(&format!("{p}.bandwidth_gib_s")).f64(),
                gib_s(want.bytes, t.io[b][d]),
                "{p}.bandwidth_gib_s"
            );
            assert_eq!(
                j.at(&format!("{p}.latency_us")).f64(),
                lat_us(t.io[b][d], want.ops),
                "{p}.latency_us"
            );
        }
    }
    let any_gpu = e.gpu0.iter().flatten().any(Cell::in_use);
    assert_eq!(j.at("gpus").len(), usize::from(any_gpu), "GPUs listed");
    if any_gpu {
        assert_eq!(n("gpus.0.gpu"), 0);
        for (b, name) in ["fastpath", "fallback"].into_iter().enumerate() {
            let in_use = e.gpu0[b].iter().any(Cell::in_use);
            assert_eq!(j.at(&format!("gpus.0.{name}.in_use")), &Json::Bool(in_use));
            for (d, op) in ["read", "write"].into_iter().enumerate() {
                let p = format!("gpus.0.{name}.{op}");
                let c = &e.gpu0[b][d];
                let arr = |k: &str| j.at(&format!("{p}.{k}")).u64s();
                assert_eq!(arr("count"), c.count, "{p}.count");
                assert_eq!(arr("bytes"), c.bytes, "{p}.bytes");
                assert_eq!(arr("errors"), c.errors, "{p}.errors");
                assert_eq!(arr("time_us"), t.gpu0[b][d], "{p}.time_us");
                assert_eq!(n(&format!("{p}.unaligned")), c.unaligned, "{p}.unaligned");
            }
        }
        for op in ["read", "write"] {
            for k in [
                "ops",
                "bytes",
                "time_us",
                "errors",
                "error_bytes",
                "unaligned",
            ] {
                assert_eq!(
                    n(&format!("gpus.0.host.{op}.{k}")),
                    0,
                    "gpus.0.host.{op}.{k}"
                );
            }
        }
    }
    assert_eq!(n("extension.version"), 1);
    let fp = j.at("extension.refusals.fastpath");
    let mut want_refusals = Vec::new();
    for (slot, name) in [
        (UNALIGNED_OFFSET, "UnalignedOffset"),
        (UNALIGNED_SIZE, "UnalignedSize"),
        (UNALIGNED_MEMORY, "UnalignedMemory"),
    ] {
        if e.refusals[slot] != 0 {
            want_refusals.push((name.to_string(), Json::Num(e.refusals[slot] as f64)));
        }
    }
    assert_eq!(fp, &Json::Obj(want_refusals), "extension.refusals.fastpath");
    assert_eq!(j.at("extension.refusals.fallback"), &Json::Obj(vec![]));
    assert_eq!(j.at("extension.refusals.host"), &Json::Obj(vec![]));
    assert_eq!(n("extension.fallback_retries"), e.fallback_retries);
    for k in [
        "async_ops.read",
        "async_ops.write",
        "batch_ops.read",
        "batch_ops.write",
    ] {
        assert_eq!(n(&format!("extension.{k}")), 0, "{k}");
    }
    assert_eq!(n("extension.file_deregistrations"), e.file_deregistrations);
    assert_eq!(
        n("extension.buffer_deregistrations"),
        e.buffer_deregistrations
    );
    assert_eq!(n("extension.bounce_bytes_in_use"), e.bounce_in_use);
    assert_eq!(n("extension.bounce_bytes_peak"), e.bounce_peak);
    assert_eq!(
        j.at("extension.size_histogram.read").u64s(),
        e.size_hist[READ]
    );
    assert_eq!(
        j.at("extension.size_histogram.write").u64s(),
        e.size_hist[WRITE]
    );
}

// ---- the tests ----------------------------------------------------------------------------------

/// Run the target at `level` and check every channel against `e`.
fn attach_and_check(level: &str, e: &Expected) {
    let mut target = Target::spawn(level);
    let pid = target.pid();

    // (b) The memfd as AMD's reader receives it, compared byte for byte.
    let memfd = receive_memfd(pid);
    let raw = map_block(&memfd);
    let t = Times::of(&raw);
    check_times(e, &t);
    let image = expected_image(e, &t);
    assert_same_block(&raw, &image, "live block");
    assert_eq!(BLOCK_SIZE, TOTAL_SIZE);
    assert_eq!(
        Snapshot::from_bytes(&raw).unwrap(),
        Snapshot::from_bytes(&image).unwrap()
    );
    // ... and through the library's client.
    let conn = StatsTarget::open(pid)
        .expect("pidfd of the target")
        .connect()
        .expect("connect to the target");
    let snap = conn.snapshot().unwrap();
    check_snapshot(&snap, e, &t);

    // (a) The hipFileStats* functions.
    let ctx = Ctx::create(pid);
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    assert_eq!(
        ctx.poll(false),
        hipFileStatsTargetProcessNotAccessible,
        "the target is still running"
    );
    let report = ctx.report();
    let want = expected_report(e, &t);
    assert_report(&report, &want, "live report");

    // (c) hipfile stats -p PID: the same text, and the JSON object.
    assert_eq!(
        run_cli(pid, false),
        report,
        "hipfile stats text = library report"
    );
    check_json(&run_cli(pid, true), e, &t);

    // The target exits; everything read afterwards is unchanged.
    target.finish();
    assert_eq!(
        ctx.poll(true),
        hipFileStatsSuccess,
        "exited (blocking poll)"
    );
    assert_eq!(ctx.poll(false), hipFileStatsSuccess, "exited");
    assert_eq!(ctx.report(), report, "report after exit");
    assert_same_block(&map_block(&memfd), &image, "block after exit");
    assert_eq!(conn.snapshot().unwrap(), snap, "snapshot after exit");
}

fn odirect_or_skip() -> bool {
    if odirect_works() {
        return true;
    }
    eprintln!("O_DIRECT does not work in the scratch directory: the fastpath cannot run; skipped");
    false
}

#[test]
fn expected_table_matches_the_plan() {
    assert_eq!(derive_expected(1), literal_table());
    // The slots are the library's (part of the shared layout).
    assert_eq!(refusal_slot(Refusal::UnalignedOffset), UNALIGNED_OFFSET);
    assert_eq!(refusal_slot(Refusal::UnalignedSize), UNALIGNED_SIZE);
    assert_eq!(refusal_slot(Refusal::UnalignedMemory), UNALIGNED_MEMORY);
    // The bucket function at the sizes of the plan.
    let sizes = [
        (100, 0),
        (4096, 1),
        (5000, 1),
        (6000, 1),
        (8192, 2),
        (10000, 2),
        (16384, 3),
        (65536, 5),
        (1 << 20, 9),
        (3 << 20, 10),
        (64 << 20, 15),
    ];
    for (b, k) in sizes {
        assert_eq!(bucket(b), k, "bucket({b})");
        assert_eq!(hipfile::api::stats::bucket(b), k, "library bucket({b})");
    }
}

#[test]
fn attached_process_counters_are_exact() {
    if !odirect_or_skip() {
        return;
    }
    attach_and_check("1", &literal_table());
}

#[test]
fn level_zero_process_counts_nothing() {
    if !odirect_or_skip() {
        return;
    }
    let e = derive_expected(0);
    assert_eq!(
        e,
        Expected::default(),
        "level 0: every counter zero, the header apart"
    );
    attach_and_check("0", &e);
}
