//! Randomised tests of the engine under the C API: offsets, sizes, alignments, end-of-file
//! positions, chunk sizes, thread counts, inline thresholds, reads and writes, device and host
//! memory, compared byte for byte with a model of the file; and injected copy failures in any
//! chunk, after which nothing is stuck or leaked.

mod common;
use common::*;

use std::os::fd::AsRawFd;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use common::strategies::{edgy, runner};

#[derive(Clone, Debug)]
enum Op {
    Read {
        off: u64,
        size: usize,
        buf_off: usize,
    },
    Write {
        off: u64,
        size: usize,
        buf_off: usize,
        seed: u64,
    },
}

#[derive(Clone, Debug)]
struct Case {
    chunk_kb: usize,
    threads: usize,
    inline_kb: usize,
    initial_len: usize,
    host_memory: bool,
    registered: bool,
    ops: Vec<Op>,
}

const BUF: usize = 3 << 20;

fn op() -> impl Strategy<Value = Op> {
    let size = || edgy(2 << 20).prop_map(|s| s as usize);
    prop_oneof![
        (edgy(4 << 20), size(), 0usize..=(BUF - (2 << 20)))
            .prop_map(|(off, size, buf_off)| Op::Read { off, size, buf_off }),
        (
            edgy(4 << 20),
            size(),
            0usize..=(BUF - (2 << 20)),
            any::<u64>()
        )
            .prop_map(|(off, size, buf_off, seed)| Op::Write {
                off,
                size,
                buf_off,
                seed
            }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec![4usize, 8, 64, 1024]),
        prop::sample::select(vec![1usize, 2, 4, 8]),
        prop::sample::select(vec![0usize, 4, 1024]),
        edgy(3 << 20),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(op(), 1..6),
    )
        .prop_map(
            |(chunk_kb, threads, inline_kb, initial_len, host_memory, registered, ops)| Case {
                chunk_kb,
                threads,
                inline_kb,
                initial_len: initial_len as usize,
                host_memory,
                registered,
                ops,
            },
        )
}

fn set_params(chunk_kb: usize, threads: usize, inline_kb: usize) {
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamPropertiesPerBufferCacheSizeKB, chunk_kb),
        hipFileError_t::SUCCESS
    );
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamExecutionMaxIOThreads, threads),
        hipFileError_t::SUCCESS
    );
    assert_eq!(
        hipFileSetParameterSizeT(hipFileParamExecutionMinIOThresholdSizeKB, inline_kb),
        hipFileError_t::SUCCESS
    );
}

/// Memory the case reads into and writes from.
enum Mem {
    Device(DeviceBuf),
    Host(Vec<u8>),
}

impl Mem {
    fn ptr(&mut self) -> *mut std::ffi::c_void {
        match self {
            Mem::Device(d) => d.ptr,
            Mem::Host(v) => v.as_mut_ptr().cast(),
        }
    }
    fn put(&mut self, off: usize, bytes: &[u8]) {
        match self {
            Mem::Device(d) => sim().upload(d.at(off), bytes),
            Mem::Host(v) => v[off..off + bytes.len()].copy_from_slice(bytes),
        }
    }
    fn get(&mut self, off: usize, len: usize) -> Vec<u8> {
        match self {
            Mem::Device(d) => sim().download(d.at(off), len),
            Mem::Host(v) => v[off..off + len].to_vec(),
        }
    }
}

fn run_case(c: &Case) -> Result<(), TestCaseError> {
    // A failed case may have left the driver open; shrinking reruns from a closed driver.
    while hipFileUseCount() > 0 {
        let _ = hipFileDriverClose();
    }
    set_params(c.chunk_kb, c.threads, c.inline_kb);
    assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
    let path = scratch_file("prop");
    let mut model = pattern(c.initial_len, c.initial_len as u64);
    make_file(&path, &model);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let fh = register_fd(file.as_raw_fd());
    let mut mem = if c.host_memory {
        Mem::Host(vec![0u8; BUF])
    } else {
        Mem::Device(sim().device_alloc(BUF))
    };
    if c.registered {
        assert_eq!(
            hipFileBufRegister(mem.ptr(), BUF, 0),
            hipFileError_t::SUCCESS
        );
    }
    for op in &c.ops {
        match *op {
            Op::Read { off, size, buf_off } => {
                let poison = pattern(size, 0xdead);
                mem.put(buf_off, &poison);
                // SAFETY: a registered handle; `buf_off + size` lies inside the buffer.
                let n = unsafe { hipFileRead(fh, mem.ptr(), size, off as i64, buf_off as i64) };
                let expect = model.len().saturating_sub(off as usize).min(size);
                prop_assert_eq!(n, expect as isize, "read {:?}", op);
                let got = mem.get(buf_off, size);
                let want = if expect == 0 {
                    &[][..]
                } else {
                    &model[off as usize..off as usize + expect]
                };
                prop_assert!(got[..expect] == *want, "read bytes {:?}", op);
                prop_assert!(
                    got[expect..] == poison[expect..],
                    "bytes past the count untouched {:?}",
                    op
                );
            }
            Op::Write {
                off,
                size,
                buf_off,
                seed,
            } => {
                let data = pattern(size, seed);
                mem.put(buf_off, &data);
                // SAFETY: as above.
                let n = unsafe { hipFileWrite(fh, mem.ptr(), size, off as i64, buf_off as i64) };
                prop_assert_eq!(n, size as isize, "write {:?}", op);
                let end = off as usize + size;
                // A zero-size write moves nothing, past the end of the file included.
                if size > 0 {
                    if model.len() < end {
                        model.resize(end, 0);
                    }
                    model[off as usize..end].copy_from_slice(&data);
                }
                prop_assert!(
                    std::fs::read(&path).unwrap() == model,
                    "file after {:?}",
                    op
                );
            }
        }
    }
    if c.registered {
        assert_eq!(hipFileBufDeregister(mem.ptr()), hipFileError_t::SUCCESS);
    }
    hipFileHandleDeregister(fh);
    drop(file);
    let _ = std::fs::remove_file(&path);
    assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
    prop_assert_eq!(
        sim().counter("pinned_bytes_live"),
        0,
        "pinned buffers freed at close"
    );
    Ok(())
}

child_test!(
    random_requests_match_pread_and_pwrite,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        let mut runner = runner(48);
        runner.run(&case(), |c| run_case(&c)).unwrap();
    }
);

child_test!(
    random_requests_on_the_fallback_only,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        let mut runner = runner(32);
        runner.run(&case(), |c| run_case(&c)).unwrap();
    }
);

child_test!(
    a_failing_chunk_fails_the_request_and_leaves_nothing_stuck,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        let strategy = (
            prop::sample::select(vec![4usize, 16, 64]),
            prop::sample::select(vec![1usize, 2, 4, 8]),
            0i64..40,
            any::<bool>(),
        );
        let mut runner = runner(40);
        runner
            .run(&strategy, |(chunk_kb, threads, after, write)| {
                set_params(chunk_kb, threads, 0);
                // A budget of 8 chunks keeps the pool under pressure.
                assert_eq!(
                    hipFileSetParameterSizeT(
                        hipFileParamPropertiesMaxDeviceCacheSizeKB,
                        chunk_kb * 8
                    ),
                    hipFileError_t::SUCCESS
                );
                assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
                let size = 1 << 20;
                let path = scratch_file("prop-fail");
                let data = pattern(size, 5);
                make_file(&path, &data);
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .unwrap();
                let fh = register_fd(file.as_raw_fd());
                let buf = sim().device_alloc(size);
                sim().upload(buf.ptr, &data);
                let chunks = size / (chunk_kb << 10);
                sim().fault("fail_copy", 999);
                sim().fault("fail_copy_after", after);
                // SAFETY: a registered handle and a 1 MiB device buffer.
                let n = unsafe {
                    if write {
                        hipFileWrite(fh, buf.ptr, size, 0, 0)
                    } else {
                        hipFileRead(fh, buf.ptr, size, 0, 0)
                    }
                };
                sim().fault("fail_copy", 0);
                sim().fault("fail_copy_after", 0);
                if (after as usize) < chunks && (!write || after == 0) {
                    prop_assert_eq!(
                        n,
                        -999,
                        "a copy failed after {} of {} chunks",
                        after,
                        chunks
                    );
                } else if (after as usize) < chunks {
                    // A write that fails part-way reports the contiguous prefix that reached
                    // the file (pwrite's rule): whole chunks, no more than the copies that
                    // succeeded; the error when the first chunk's copy was one that failed.
                    let chunk = (chunk_kb << 10) as isize;
                    prop_assert!(
                        n == -999 || (n > 0 && n % chunk == 0 && n <= after as isize * chunk),
                        "a write whose copies failed after {} of {} chunks returned {}",
                        after,
                        chunks,
                        n
                    );
                } else {
                    prop_assert_eq!(n, size as isize);
                }
                prop_assert!(sim().counter("pinned_bytes_live") <= (chunk_kb * 8 * 1024) as u64);
                // The next request works: no worker or buffer is stuck.
                // SAFETY: as above.
                let n = unsafe { hipFileRead(fh, buf.ptr, size, 0, 0) };
                prop_assert_eq!(n, size as isize);
                hipFileHandleDeregister(fh);
                drop(file);
                let _ = std::fs::remove_file(&path);
                assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
                prop_assert_eq!(sim().counter("pinned_bytes_live"), 0);
                Ok(())
            })
            .unwrap();
    }
);

child_test!(
    bounce_memory_does_not_grow_over_a_million_calls,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        // Target T10: a million small requests keep the pinned memory at its first level.
        let path = scratch_file("t10");
        make_file(&path, &pattern(1 << 20, 3));
        let file = std::fs::File::open(&path).unwrap();
        let fh = register_fd(file.as_raw_fd());
        let buf = sim().device_alloc(4096);
        // SAFETY: a registered handle and a 4 KiB device buffer.
        assert_eq!(unsafe { hipFileRead(fh, buf.ptr, 4096, 0, 0) }, 4096);
        let first = sim().counter("pinned_bytes_live");
        assert!(first > 0 && first <= 4 << 20, "one bounce buffer: {first}");
        let rss = || {
            std::fs::read_to_string("/proc/self/statm")
                .unwrap()
                .split(' ')
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        let rss_before = rss();
        for i in 0..1_000_000u64 {
            // SAFETY: as above.
            let n = unsafe { hipFileRead(fh, buf.ptr, 4096, ((i % 256) * 4096) as i64, 0) };
            assert_eq!(n, 4096);
        }
        assert_eq!(
            sim().counter("pinned_bytes_live"),
            first,
            "no pinned growth"
        );
        assert_eq!(sim().counter("pinned_bytes_peak"), first);
        let grown = rss().saturating_sub(rss_before) * 4096;
        assert!(grown < 4 << 20, "resident memory grew by {grown} bytes");
        hipFileHandleDeregister(fh);
        let _ = std::fs::remove_file(&path);
    }
);

/// Drop a file's pages from the page cache (they are clean after `fdatasync`).
fn drop_cache(file: &std::fs::File) {
    // SAFETY: plain calls on our descriptor.
    unsafe {
        assert_eq!(libc::fdatasync(file.as_raw_fd()), 0);
        assert_eq!(
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED),
            0
        );
    }
}

child_test!(
    cold_reads_through_o_direct_match,
    [
        ("HIPFILE_FORCE_COMPAT_MODE", "true"),
        ("HIPFILE_CHUNK_SIZE", "64K"),
        ("HIPFILE_IO_THREADS", "4")
    ],
    {
        // Reads of data the page cache does not hold go through the O_DIRECT descriptor when
        // aligned, and through the cache otherwise; partly cached ranges mix both.
        let len = (3 << 20) + 1234;
        let path = scratch_file("cold");
        let data = pattern(len, 31);
        make_file(&path, &data);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let fh = register_fd(file.as_raw_fd());
        let dev = sim().device_alloc(4 << 20);
        let host = std::cell::RefCell::new(vec![0u8; 4 << 20]);
        let strategy = (
            edgy(len as u64 + 8192),
            edgy(3 << 20),
            any::<bool>(),
            any::<bool>(),
        );
        let mut runner = runner(64);
        runner
            .run(&strategy, |(off, size, warm_half, to_host)| {
                let size = size as usize;
                drop_cache(&file);
                if warm_half {
                    // Bring every other 64 KiB of the range back into the cache.
                    let mut tmp = vec![0u8; 65536];
                    let mut o = off & !65535;
                    while o < off + size as u64 {
                        // SAFETY: a valid buffer.
                        unsafe {
                            libc::pread(file.as_raw_fd(), tmp.as_mut_ptr().cast(), 65536, o as i64)
                        };
                        o += 131072;
                    }
                }
                let expect = len.saturating_sub(off as usize).min(size);
                let got = if to_host {
                    let mut host = host.borrow_mut();
                    // SAFETY: a registered handle and 4 MiB of host memory.
                    let n =
                        unsafe { hipFileRead(fh, host.as_mut_ptr().cast(), size, off as i64, 0) };
                    prop_assert_eq!(n, expect as isize);
                    host[..expect].to_vec()
                } else {
                    // SAFETY: a registered handle and a 4 MiB device buffer.
                    let n = unsafe { hipFileRead(fh, dev.ptr, size, off as i64, 0) };
                    prop_assert_eq!(n, expect as isize);
                    sim().download(dev.ptr, expect)
                };
                let want = if expect == 0 {
                    &[][..]
                } else {
                    &data[off as usize..off as usize + expect]
                };
                prop_assert!(got == want, "bytes at {} size {}", off, size);
                Ok(())
            })
            .unwrap();
        hipFileHandleDeregister(fh);
        let _ = std::fs::remove_file(&path);
    }
);
