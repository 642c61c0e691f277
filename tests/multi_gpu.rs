//! Several simulated GPUs (`HIPSIM_DEVICE_COUNT` 1, 2 and 4): device buffers on every device,
//! registered and unregistered, read and written from threads whose current device (HIP) or
//! current context (CUDA) is not the buffer's, through the fastpath (aligned requests) and the
//! fallback (unaligned ones, below and above the engine chunk, so multi-chunk requests run on
//! worker threads with lanes). Every result is byte-exact, the caller's current device or
//! context is exactly the same after every call (the fallback makes the
//! buffer's device current for its copies and restores the caller's), worker threads do not
//! keep a device they switched to, and the per-GPU statistics attribute I/O to the *buffer's*
//! device (our documented deliberate difference from upstream's calling-thread device).
//!
//! The async API's device rule (the buffer's device against the stream's) is tested in
//! `tests/async_io.rs`.
//!
//! Note on hipsim: `hipMemcpy` / `cuMemcpy*` between host memory and device memory of any
//! device work whatever the calling thread's current device is (as with unified addressing on
//! real GPUs; the copy only waits for the current device's NULL stream), and the CUDA copies
//! need *a* current context, not the owning device's. The tests rely on that for their own
//! uploads and downloads.

mod common;
use common::*;

use std::ffi::{c_int, c_void};

/// The engine chunk every test configures (`HIPFILE_CHUNK_SIZE`).
const CHUNK: usize = 64 << 10;
/// Bytes of the file each I/O thread owns.
const REGION: usize = 2 << 20;
/// Size of every device buffer.
const BUF_LEN: usize = 2 << 20;
/// `hipMemoryTypeDevice` with ROCm 6 numbering (hipsim reports HIP 7.2 by default).
const HIP_MEMORY_TYPE_DEVICE: c_int = 2;
/// Engine workers: `HIPFILE_IO_THREADS` 4 is the calling thread plus 3 workers.
const HELPERS: u64 = 3;

// ---- HIP helpers ---------------------------------------------------------------------------------

/// The calling thread's current HIP device.
fn hip_current() -> c_int {
    let mut d = -1;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { (sim().get_device)(&mut d) }, 0, "hipGetDevice");
    d
}

/// Make `d` the calling thread's current HIP device.
fn hip_set(d: c_int) {
    // SAFETY: plain integer argument.
    assert_eq!(unsafe { (sim().set_device)(d) }, 0, "hipSetDevice({d})");
}

/// `hipPointerGetAttributes` of `p`.
fn hip_attributes(p: *const c_void) -> HipPointerAttribute {
    let mut a = HipPointerAttribute::default();
    // SAFETY: valid out-pointer; hipsim only inspects the address.
    assert_eq!(unsafe { (sim().pointer_get_attributes)(&mut a, p) }, 0);
    a
}

/// `BUF_LEN` bytes of device memory on `device` (allocated with `device` current; the calling
/// thread's current device is given back afterwards).
fn alloc_on(device: c_int) -> DeviceBuf {
    let before = hip_current();
    hip_set(device);
    let b = sim().device_alloc(BUF_LEN);
    hip_set(before);
    let a = hip_attributes(b.ptr);
    assert_eq!(
        (a.memory_type, a.device),
        (HIP_MEMORY_TYPE_DEVICE, device),
        "hipPointerGetAttributes of a buffer allocated on device {device}"
    );
    b
}

/// `hipFileRead` into device address `buf` (an allocation base) at `buf_off`.
fn read(fh: usize, buf: usize, size: usize, file_off: usize, buf_off: usize) -> isize {
    // SAFETY: `buf` is a device allocation (or a registered one) of BUF_LEN bytes and every
    // request below stays inside it; the library validates device memory itself.
    unsafe {
        hipFileRead(
            fh as hipFileHandle_t,
            buf as *mut c_void,
            size,
            file_off as i64,
            buf_off as i64,
        )
    }
}

/// `hipFileWrite` from device address `buf` at `buf_off`.
fn write(fh: usize, buf: usize, size: usize, file_off: usize, buf_off: usize) -> isize {
    // SAFETY: as for `read`.
    unsafe {
        hipFileWrite(
            fh as hipFileHandle_t,
            buf as *const c_void,
            size,
            file_off as i64,
            buf_off as i64,
        )
    }
}

// ---- the interleaved workload ----------------------------------------------------------------------

/// One request of the workload; offsets are relative to the thread's file region.
#[derive(Clone, Copy, Debug)]
struct Op {
    write: bool,
    size: usize,
    file_off: usize,
    buf_off: usize,
}

const fn op(write: bool, size: usize, file_off: usize, buf_off: usize) -> Op {
    Op {
        write,
        size,
        file_off,
        buf_off,
    }
}

/// Reads and writes interleaved: aligned (fastpath-eligible: 4 KiB aligned offset, size and
/// address) and unaligned (fallback), below and above the 64 KiB chunk. Later reads cover
/// earlier writes, so written bytes are checked through the library too.
const OPS: [Op; 10] = [
    op(false, 16 << 10, 0, 0),                // read, aligned, one chunk
    op(true, 1000, 4099, 13),                 // write, unaligned, one chunk
    op(false, 300_001, 70_001, 777),          // read, unaligned, 5 chunks
    op(true, 512 << 10, 1 << 20, 256 << 10),  // write, aligned, 8 chunks
    op(false, 512 << 10, 768 << 10, 1 << 20), // read, aligned, covers the write above
    op(true, 400_003, 123_457, 99),           // write, unaligned, 7 chunks
    op(false, 2000, 4000, 5),                 // read, unaligned, one chunk, covers the first write
    op(true, 32 << 10, 192 << 10, 8 << 10),   // write, aligned, one chunk
    op(false, REGION, 0, 0),                  // read, aligned, the whole region (32 chunks)
    op(false, REGION - 2, 1, 1),              // read, unaligned, the whole region (32 chunks)
];

impl Op {
    fn aligned(&self) -> bool {
        self.size % 4096 == 0 && self.file_off % 4096 == 0 && self.buf_off % 4096 == 0
    }
}

/// `hipSetDevice` calls the library makes for one round of [`OPS`] into a buffer on
/// `buffer_device` from a thread whose current device is another: two (enter and restore) per
/// participant of each multi-chunk fallback request that is not on the buffer's device
/// already: the calling thread, and the `min(HELPERS, chunks - 1)` workers unless the buffer
/// is on device 0 (a worker thread's current device is 0, HIP's initial one, as long as no
/// switch leaks). Single-chunk requests (copied synchronously) and fastpath requests make
/// none.
fn library_switches(fastpath: bool, buffer_device: c_int) -> u64 {
    OPS.iter()
        .map(|o| {
            let chunks = o.size.div_ceil(CHUNK) as u64;
            if (fastpath && o.aligned()) || chunks <= 1 {
                0
            } else if buffer_device == 0 {
                2
            } else {
                2 * (1 + HELPERS.min(chunks - 1))
            }
        })
        .sum()
}

/// How each thread of [`interleaved_io`] knows its current device: `(buffer device + 1) % n`,
/// never the buffer's own when there are several devices.
fn caller_device(buffer_device: c_int, devices: c_int) -> c_int {
    (buffer_device + 1) % devices
}

/// `threads` threads, thread `t` with its own device buffer on device `t % devices` (the first
/// half registered, the rest not) and its own region of one shared file, run [`OPS`] `rounds`
/// times with the current device [`caller_device`]. After every library call the thread's
/// current device is checked, and every read is compared byte for byte with what the file
/// holds (the thread's model of its region, updated by its writes); at the end the file on
/// disk is compared with the models too.
fn interleaved_io(devices: c_int, threads: usize, rounds: usize) {
    assert_eq!(hip_current(), 0);
    let data = pattern(threads * REGION, 1);
    let file = TestFile::rw("multi-gpu", &data);
    let bufs: Vec<DeviceBuf> = (0..threads)
        .map(|t| alloc_on((t % devices as usize) as c_int))
        .collect();
    let registered = threads / 2;
    for b in &bufs[..registered] {
        assert_eq!(hipFileBufRegister(b.ptr, b.len, 0), OK);
    }
    assert_eq!(
        hip_current(),
        0,
        "allocation gave the main thread's device back"
    );
    let fh = file.fh as usize;
    let models: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bufs
            .iter()
            .enumerate()
            .map(|(t, b)| {
                let buf = b.ptr as usize;
                let mut model = data[t * REGION..(t + 1) * REGION].to_vec();
                scope.spawn(move || {
                    let buffer_device = (t % devices as usize) as c_int;
                    let mine = caller_device(buffer_device, devices);
                    if devices > 1 {
                        assert_ne!(mine, buffer_device);
                    }
                    hip_set(mine);
                    let base = t * REGION;
                    for round in 0..rounds {
                        for (i, o) in OPS.iter().enumerate() {
                            let what = format!(
                                "thread {t} (current device {mine}, buffer on device \
                                 {buffer_device}, {}registered), round {round}, op {i} {o:?}",
                                if t < registered { "" } else { "un" }
                            );
                            if o.write {
                                let new = pattern(o.size, (t * 1000 + round * 100 + i) as u64);
                                sim().upload((buf + o.buf_off) as *mut c_void, &new);
                                assert_eq!(hip_current(), mine, "{what}: after hipMemcpy");
                                let n = write(fh, buf, o.size, base + o.file_off, o.buf_off);
                                assert_eq!(n, o.size as isize, "{what}");
                                assert_eq!(hip_current(), mine, "{what}: current device changed");
                                model[o.file_off..o.file_off + o.size].copy_from_slice(&new);
                            } else {
                                let n = read(fh, buf, o.size, base + o.file_off, o.buf_off);
                                assert_eq!(n, o.size as isize, "{what}");
                                assert_eq!(hip_current(), mine, "{what}: current device changed");
                                let got =
                                    sim().download((buf + o.buf_off) as *const c_void, o.size);
                                assert!(
                                    got == model[o.file_off..o.file_off + o.size],
                                    "{what}: the bytes read differ from the file's"
                                );
                            }
                        }
                    }
                    assert_eq!(hip_current(), mine);
                    model
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let on_disk = std::fs::read(&file.path).unwrap();
    for (t, model) in models.iter().enumerate() {
        assert!(
            on_disk[t * REGION..(t + 1) * REGION] == model[..],
            "region of thread {t} on disk differs from what it wrote"
        );
    }
    for b in &bufs[..registered] {
        assert_eq!(hipFileBufDeregister(b.ptr), OK);
    }
    assert_eq!(hip_current(), 0);
}

child_test!(
    four_devices_interleaved_from_foreign_current_devices,
    [
        ("HIPSIM_DEVICE_COUNT", "4"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_INLINE_THRESHOLD", "64K"),
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
    ],
    {
        assert_eq!(
            hipfile::api::runtime_report().device_count,
            4,
            "{}",
            hipfile::api::runtime_report().description
        );
        let fastpath = odirect_works();
        sim().reset_counters();
        interleaved_io(4, 8, 2);
        // Both backends served requests (the fastpath only where O_DIRECT works here).
        assert!(sim().counter("h2d_bytes") > 0 && sim().counter("d2h_bytes") > 0);
        if fastpath {
            assert!(sim().counter("fastpath_read_bytes") > 0);
            assert!(sim().counter("fastpath_write_bytes") > 0);
        }
        // 8 buffers (hipSetDevice twice each in alloc_on), 8 threads (once each), and the
        // library's own switches: every participant of a multi-chunk fallback request not on
        // the buffer's device made it current once and restored its own once; nothing else
        // switched (thread t's buffer is on device t % 4; 2 rounds).
        let library: u64 = (0..8).map(|t| 2 * library_switches(fastpath, t % 4)).sum();
        assert_eq!(sim().counter("hipSetDevice"), 8 * 2 + 8 + library);
    }
);

child_test!(
    single_device_takes_the_same_path,
    [
        ("HIPSIM_DEVICE_COUNT", "1"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_INLINE_THRESHOLD", "64K"),
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
    ],
    {
        assert_eq!(hipfile::api::runtime_report().device_count, 1);
        // Load the runtime and allocate first, then count only the workload's device calls.
        let warm = alloc_on(0);
        drop(warm);
        sim().reset_counters();
        interleaved_io(1, 4, 2);
        // 4 buffers (hipSetDevice(0) twice each in alloc_on) and 4 threads (once each): with the
        // buffer's device already current, the library itself never switched.
        assert_eq!(sim().counter("hipSetDevice"), 4 * 2 + 4);
        assert!(sim().counter("h2d_bytes") > 0 && sim().counter("d2h_bytes") > 0);
    }
);

// ---- statistics per device ---------------------------------------------------------------------

child_test!(
    per_gpu_stats_follow_the_buffers_device,
    [
        ("HIPSIM_DEVICE_COUNT", "4"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_INLINE_THRESHOLD", "64K"),
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
    ],
    {
        // Device d (0, 1, 3; 2 has no buffer) does `d + 1` rounds of: an aligned 16 KiB read,
        // an unaligned 100_001-byte read (2 chunks), an aligned 8 KiB write and an unaligned
        // 70_000-byte write (2 chunks), alternating between a registered and an unregistered
        // buffer, from a thread whose current device is (d + 1) % 4: device 2 is the current
        // device of the thread that does device 1's I/O, and must see none of it.
        const READS: [(usize, usize); 2] = [(16 << 10, 0), (100_001, 4097 + 3)];
        // Writes go above the bytes read, so every read sees the file's original bytes.
        const WRITES: [(usize, usize); 2] = [(8 << 10, 1 << 20), (70_000, (1 << 20) + 12_345)];
        let io_devices: [c_int; 3] = [0, 1, 3];
        let data = pattern(4 * REGION, 2);
        let file = TestFile::rw("multi-gpu-stats", &data);
        let fh = file.fh as usize;
        let bufs: Vec<(c_int, DeviceBuf, DeviceBuf)> = io_devices
            .iter()
            .map(|&d| (d, alloc_on(d), alloc_on(d)))
            .collect();
        for (_, reg, _) in &bufs {
            assert_eq!(hipFileBufRegister(reg.ptr, reg.len, 0), OK);
        }
        std::thread::scope(|scope| {
            for (d, reg, unreg) in &bufs {
                let (d, reg, unreg) = (*d, reg.ptr as usize, unreg.ptr as usize);
                let data = &data;
                scope.spawn(move || {
                    let mine = caller_device(d, 4);
                    hip_set(mine);
                    let base = d as usize * REGION;
                    for round in 0..=d as usize {
                        let buf = if round % 2 == 0 { reg } else { unreg };
                        for (size, off) in READS {
                            assert_eq!(read(fh, buf, size, base + off, 0), size as isize);
                            assert_eq!(hip_current(), mine);
                            assert!(
                                sim().download(buf as *const c_void, size)
                                    == data[base + off..base + off + size]
                            );
                        }
                        for (size, off) in WRITES {
                            assert_eq!(write(fh, buf, size, base + off, 0), size as isize);
                            assert_eq!(hip_current(), mine);
                        }
                    }
                });
            }
        });
        let fastpath = odirect_works();
        let mut l3 = Box::<hipFileStatsLevel3_t>::default();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { hipFileGetStatsL3(&mut *l3) }, OK);
        // num_gpus counts the GPUs with any record (src/stats/levels.rs).
        assert_eq!(l3.num_gpus, 3);
        let mut total_reads = 0;
        let mut total_read_bytes = 0;
        for g in 0..16 {
            let s = &l3.per_gpu_stats[g];
            if !io_devices.contains(&(g as c_int)) {
                assert_eq!(*s, hipFilePerGpuStats_t::default(), "GPU {g} had no buffer");
                continue;
            }
            let rounds = g as u64 + 1;
            let read_bytes = rounds * READS.iter().map(|r| r.0 as u64).sum::<u64>();
            let write_bytes = rounds * WRITES.iter().map(|w| w.0 as u64).sum::<u64>();
            assert_eq!(
                (s.read_bytes, s.n_total_reads, s.n_reads_err),
                (read_bytes, 2 * rounds, 0),
                "GPU {g} reads"
            );
            assert_eq!(
                (s.write_bytes, s.n_total_writes, s.n_writes_err),
                (write_bytes, 2 * rounds, 0),
                "GPU {g} writes"
            );
            // GPU-direct requests count as nvfs ones (n_p2p_* stay 0), as upstream.
            assert_eq!((s.n_p2p_reads, s.n_p2p_writes), (0, 0), "GPU {g} p2p");
            if fastpath {
                // One aligned (fastpath) and one unaligned (fallback) request of each kind.
                assert_eq!(
                    (s.n_nvfs_reads, s.n_posix_reads, s.n_unaligned_reads),
                    (rounds, rounds, rounds),
                    "GPU {g} read backends"
                );
                assert_eq!(
                    (s.n_nvfs_writes, s.n_posix_writes, s.n_unaligned_writes),
                    (rounds, rounds, rounds),
                    "GPU {g} write backends"
                );
            } else {
                assert_eq!((s.n_nvfs_reads, s.n_posix_reads), (0, 2 * rounds));
                assert_eq!((s.n_nvfs_writes, s.n_posix_writes), (0, 2 * rounds));
            }
            total_reads += s.n_total_reads;
            total_read_bytes += s.read_bytes;
        }
        assert_eq!(l3.detailed.basic.read_ops.ok, total_reads);
        assert_eq!(l3.detailed.basic.read_bytes, total_read_bytes);
        for (_, reg, _) in &bufs {
            assert_eq!(hipFileBufDeregister(reg.ptr), OK);
        }
    }
);

// ---- worker threads do not keep a device --------------------------------------------------------

child_test!(
    worker_device_switches_do_not_leak,
    [
        ("HIPSIM_DEVICE_COUNT", "4"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_INLINE_THRESHOLD", "64K"),
    ],
    {
        let data = pattern(4 << 20, 3);
        let file = TestFile::rw("multi-gpu-workers", &data);
        let fh = file.fh as usize;
        let on3 = alloc_on(3);
        let on1 = alloc_on(1);
        assert_eq!(hipFileBufRegister(on1.ptr, on1.len, 0), OK);
        assert_eq!(hip_current(), 0);
        // Unaligned, so the fallback serves it: 17 chunks, the calling thread and 3 workers.
        let size = (1 << 20) + 3;
        let check = |buf: &DeviceBuf, file_off: usize| {
            sim().reset_counters();
            assert_eq!(read(fh, buf.ptr as usize, size, file_off, 0), size as isize);
            assert_eq!(hip_current(), 0, "the calling thread's device is kept");
            // Each participant (calling thread and 3 helpers, none of them on the buffer's
            // device beforehand) made the buffer's device current once and gave its own back
            // once. A worker that kept the buffer's device would skip both next time.
            assert_eq!(
                sim().counter("hipSetDevice"),
                2 * (1 + HELPERS),
                "device switches of one multi-chunk request"
            );
            assert!(
                sim().download(buf.ptr, size) == data[file_off..file_off + size],
                "bytes"
            );
        };
        check(&on3, 1);
        check(&on1, 5);
        check(&on3, 7);
        check(&on1, 11);
        let on0 = alloc_on(0);
        let (p3, p1, p0) = (on3.ptr as usize, on1.ptr as usize, on0.ptr as usize);
        let data = &data;
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    hip_set(2);
                    sim().reset_counters();
                    // One chunk: copied synchronously, without a device switch.
                    assert_eq!(read(fh, p3, 1000, 4001, 17), 1000);
                    assert_eq!(hip_current(), 2);
                    assert!(sim().download((p3 + 17) as *const c_void, 1000) == data[4001..5001]);
                    assert_eq!(read(fh, p1, 60_000, 123, 0), 60_000);
                    assert_eq!(hip_current(), 2);
                    assert!(sim().download(p1 as *const c_void, 60_000) == data[123..60_123]);
                    assert_eq!(
                        sim().counter("hipSetDevice"),
                        0,
                        "single-chunk requests switch no device"
                    );
                    // A multi-chunk request into device 0's buffer: only this thread switches;
                    // the workers are still on device 0 (HIP's initial device), which they
                    // would not be had a switch to device 3 or 1 above leaked.
                    assert_eq!(read(fh, p0, 500_000, 3, 0), 500_000);
                    assert_eq!(hip_current(), 2);
                    assert!(sim().download(p0 as *const c_void, 500_000) == data[3..500_003]);
                    assert_eq!(sim().counter("hipSetDevice"), 2, "only the caller switched");
                    // Into device 3's buffer: every participant switches, and switches back.
                    sim().reset_counters();
                    assert_eq!(read(fh, p3, 500_000, 9, 0), 500_000);
                    assert_eq!(hip_current(), 2);
                    assert!(sim().download(p3 as *const c_void, 500_000) == data[9..500_009]);
                    assert_eq!(sim().counter("hipSetDevice"), 2 * (1 + HELPERS));
                })
                .join()
                .unwrap();
        });
        assert_eq!(hip_current(), 0);
        assert_eq!(hipFileBufDeregister(on1.ptr), OK);
    }
);

// ---- CUDA: contexts ------------------------------------------------------------------------------

use common::cuda::cuda;

child_test!(
    cuda_two_devices_keep_the_callers_context,
    [
        ("HIPFILE_PLATFORM", "nvidia"),
        ("HIPSIM_DEVICE_COUNT", "2"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_IO_THREADS", "4"),
        ("HIPFILE_INLINE_THRESHOLD", "64K"),
    ],
    {
        assert_eq!(hipFileDriverOpen(), OK);
        let rt = hipfile::api::runtime_report();
        assert_eq!(rt.platform, hipfile::api::Platform::Nvidia);
        assert_eq!(rt.device_count, 2);
        const THREADS: usize = 8;
        const ROUNDS: usize = 2;
        let data = pattern(THREADS * REGION, 4);
        let file = TestFile::rw("multi-gpu-cuda", &data);
        let fh = file.fh as usize;
        // Thread t: buffer on device t % 2, registered for t % 4 < 2; threads 0..4 run with
        // their own device's context under the *other* device's (a stack [own, other]),
        // threads 4..8 with no context at all.
        let bufs: Vec<usize> = (0..THREADS)
            .map(|t| cuda().alloc_on((t % 2) as c_int, BUF_LEN))
            .collect();
        let registered = |t: usize| t % 4 < 2;
        for (t, &b) in bufs.iter().enumerate() {
            if registered(t) {
                assert_eq!(hipFileBufRegister(b as *const c_void, BUF_LEN, 0), OK);
            }
        }
        assert_eq!(cuda().current(), 0);
        sim().reset_counters();
        let models: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let handles: Vec<_> = bufs
                .iter()
                .enumerate()
                .map(|(t, &buf)| {
                    let mut model = data[t * REGION..(t + 1) * REGION].to_vec();
                    scope.spawn(move || {
                        let device = (t % 2) as c_int;
                        let with_context = t < 4;
                        let (own, other) = (cuda().primary(device), cuda().primary(1 - device));
                        assert_ne!(own, other);
                        assert_eq!(cuda().current(), 0, "a new thread has no context");
                        if with_context {
                            cuda().set_current(own);
                            cuda().push(other);
                        }
                        let expected = if with_context { other } else { 0 };
                        let base = t * REGION;
                        for round in 0..ROUNDS {
                            for (i, o) in OPS.iter().enumerate() {
                                let what = format!(
                                    "thread {t} (buffer on device {device}, {}, {}registered), \
                                     round {round}, op {i} {o:?}",
                                    if with_context {
                                        "other device's context current"
                                    } else {
                                        "no context"
                                    },
                                    if registered(t) { "" } else { "un" }
                                );
                                if o.write {
                                    let new =
                                        pattern(o.size, (t * 1000 + round * 100 + i + 7) as u64);
                                    cuda().upload_on(device, buf + o.buf_off, &new);
                                    let n = write(fh, buf, o.size, base + o.file_off, o.buf_off);
                                    assert_eq!(n, o.size as isize, "{what}");
                                    assert_eq!(cuda().current(), expected, "{what}: context");
                                    model[o.file_off..o.file_off + o.size].copy_from_slice(&new);
                                } else {
                                    let n = read(fh, buf, o.size, base + o.file_off, o.buf_off);
                                    assert_eq!(n, o.size as isize, "{what}");
                                    assert_eq!(cuda().current(), expected, "{what}: context");
                                    let got = cuda().download_on(device, buf + o.buf_off, o.size);
                                    assert!(
                                        got == model[o.file_off..o.file_off + o.size],
                                        "{what}: the bytes read differ from the file's"
                                    );
                                }
                            }
                        }
                        if with_context {
                            // The stack under the current context is untouched too.
                            assert_eq!(cuda().pop(), other);
                            assert_eq!(cuda().current(), own);
                            cuda().set_current(0);
                        }
                        assert_eq!(cuda().current(), 0);
                        model
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let on_disk = std::fs::read(&file.path).unwrap();
        for (t, model) in models.iter().enumerate() {
            assert!(
                on_disk[t * REGION..(t + 1) * REGION] == model[..],
                "region of thread {t} on disk differs from what it wrote"
            );
        }
        assert_eq!(
            sim().counter("hipMemcpy"),
            0,
            "the CUDA runtime never calls HIP"
        );
        assert_eq!(sim().counter("hipSetDevice"), 0);
        // Per-GPU statistics follow the buffers: 4 threads per device, all requests on the
        // fallback (no cuFile).
        let per_device = |write: bool| -> u64 {
            (4 * ROUNDS) as u64
                * OPS
                    .iter()
                    .filter(|o| o.write == write)
                    .map(|o| o.size as u64)
                    .sum::<u64>()
        };
        let count =
            |write: bool| (4 * ROUNDS * OPS.iter().filter(|o| o.write == write).count()) as u64;
        let mut l3 = Box::<hipFileStatsLevel3_t>::default();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { hipFileGetStatsL3(&mut *l3) }, OK);
        assert_eq!(l3.num_gpus, 2);
        for g in 0..2 {
            let s = &l3.per_gpu_stats[g];
            assert_eq!(
                (
                    s.read_bytes,
                    s.n_total_reads,
                    s.n_posix_reads,
                    s.n_p2p_reads
                ),
                (per_device(false), count(false), count(false), 0),
                "GPU {g} reads"
            );
            assert_eq!(
                (
                    s.write_bytes,
                    s.n_total_writes,
                    s.n_posix_writes,
                    s.n_p2p_writes
                ),
                (per_device(true), count(true), count(true), 0),
                "GPU {g} writes"
            );
        }
        for (t, &b) in bufs.iter().enumerate() {
            if registered(t) {
                assert_eq!(hipFileBufDeregister(b as *const c_void), OK);
            }
        }
        cuda().with_ctx(0, || {
            for &b in &bufs {
                // SAFETY: allocated by cuMemAlloc above.
                assert_eq!(unsafe { (cuda().mem_free)(b as u64) }, 0);
            }
        });
    }
);

/// Sanity of the workload itself: it has every kind of request the tests claim.
#[test]
fn the_workload_covers_every_kind_of_request() {
    for write in [false, true] {
        for aligned in [false, true] {
            for multi in [false, true] {
                assert!(
                    OPS.iter().any(|o| o.write == write
                        && o.aligned() == aligned
                        && (o.size > CHUNK) == multi),
                    "write {write}, aligned {aligned}, multi-chunk {multi}"
                );
            }
        }
    }
    for o in OPS {
        assert!(o.file_off + o.size <= REGION && o.buf_off + o.size <= BUF_LEN);
    }
}
