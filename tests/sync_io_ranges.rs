//! Synchronous I/O: sizes, offsets and end of file, and byte-exact round trips.
//!
//! Shared set-up and what the sync suites compare: `tests/common/sync_io.rs`.

mod common;

use std::ffi::c_void;
use std::path::Path;
use std::time::Instant;

use common::sync_io::*;
use common::*;

// ---- sizes, offsets and end of file -----------------------------------------------------------

child_test!(
    zero_size_io,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        open_driver();
        let data = pattern(64 * 1024, 20);
        let f = TestFile::rw("zero", &data);
        let dev = device_filled(64 * 1024, 0x5A);
        let mut host = vec![0x5Au8; 4096];
        let hp: *mut c_void = host.as_mut_ptr().cast();
        // Aligned for the fastpath: size 0 with valid arguments is 0 at once (upstream's
        // newest rule), not forwarded to the runtime.
        if fastpath_possible("zero_size_io") {
            let before = paths();
            assert_eq!(rd(f.fh, dev.ptr, 0, 0, 0), 0);
            assert_eq!(wr(f.fh, dev.ptr, 0, 4096, 0), 0);
            assert_eq!(
                paths_since(before),
                Paths {
                    fast_read: 0,
                    fast_write: 0,
                    copied: 0
                }
            );
        }
        // Fallback (unaligned file offset) and host.
        for p in [dev.ptr, hp] {
            let before = paths();
            for foff in [1i64, 4097, 64 * 1024, 1 << 30] {
                assert_eq!(rd(f.fh, p, 0, foff, 3), 0, "read size 0 at {foff}");
                assert_eq!(wr(f.fh, p, 0, foff, 3), 0, "write size 0 at {foff}");
            }
            assert_eq!(
                paths_since(before),
                Paths {
                    fast_read: 0,
                    fast_write: 0,
                    copied: 0
                },
                "nothing to copy"
            );
        }
        // Size 0 at buffer offset == length is still out of bounds.
        assert_eq!(rd(f.fh, dev.ptr, 0, 0, 64 * 1024), -5022);
        assert_eq!(wr(f.fh, dev.ptr, 0, 1, 64 * 1024), -5022);
        assert_eq!(buf_register(hp, 4096), hipFileError_t::SUCCESS);
        assert_eq!(rd(f.fh, hp, 0, 0, 4096), -5022);
        assert_eq!(buf_deregister(hp), hipFileError_t::SUCCESS);
        assert_eq!(
            f.contents(),
            data,
            "zero-size writes change nothing, not even the length"
        );
        assert!(sim()
            .download(dev.ptr, 64 * 1024)
            .iter()
            .all(|&b| b == 0x5A));
        assert!(host.iter().all(|&b| b == 0x5A));
    }
);

/// I/O at a buffer offset into an unregistered allocation touches exactly that range.
fn buffer_offset_io(fast: bool) {
    open_driver();
    let s = sim();
    let len = 64 * 1024;
    let data = pattern(len, 21);
    let f = TestFile::rw("bufoff", &data);
    let dev = device_filled(len, 0x77);
    let (foff, boff, size) = if fast {
        (4096usize, 8192usize, 16384usize)
    } else {
        (3, 8191, 10000)
    };
    let before = paths();
    assert_eq!(
        rd(f.fh, dev.ptr, size, foff as i64, boff as i64),
        size as isize
    );
    let d = paths_since(before);
    if fast {
        assert_fastpath(d, "aligned buffer-offset read");
    } else {
        assert_fallback(d, "unaligned buffer-offset read", size);
    }
    let back = s.download(dev.ptr, len);
    assert!(back[..boff].iter().all(|&b| b == 0x77));
    assert_eq!(back[boff..boff + size], data[foff..foff + size]);
    assert!(back[boff + size..].iter().all(|&b| b == 0x77));
    // Through an interior pointer too (its length runs to the end of the allocation).
    fill(dev.ptr, 0x77, len);
    let inner = dev.at(4096);
    assert_eq!(
        rd(f.fh, inner, size, foff as i64, (boff - 4096) as i64),
        size as isize
    );
    assert_eq!(s.download(dev.at(boff), size), data[foff..foff + size]);
    // Writes from the same ranges.
    let out = TestFile::rw("bufoff-out", &vec![0x11; len]);
    let fresh = pattern(size, 22);
    s.upload(dev.at(boff), &fresh);
    let before = paths();
    assert_eq!(
        wr(out.fh, dev.ptr, size, foff as i64, boff as i64),
        size as isize
    );
    let d = paths_since(before);
    if fast {
        assert_fastpath(d, "aligned buffer-offset write");
    } else {
        assert_fallback(d, "unaligned buffer-offset write", size);
    }
    let mut expect = vec![0x11; len];
    expect[foff..foff + size].copy_from_slice(&fresh);
    assert_eq!(out.contents(), expect);
}

child_test!(
    buffer_offset_into_unregistered_allocation_fastpath,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        if fastpath_possible("buffer_offset_into_unregistered_allocation_fastpath") {
            buffer_offset_io(true);
        }
    }
);
child_test!(buffer_offset_into_unregistered_allocation_fallback, {
    buffer_offset_io(false)
});

/// End of file in the middle of a request, through the engine (fallback with device memory,
/// or host memory): a short count, nothing written past it.
fn eof_engine(device: bool) {
    open_driver();
    let s = sim();
    let flen = 5 * MIB + 123;
    let data = pattern(flen, 23);
    let f = TestFile::rw("eof", &data);
    let blen = 17 * MIB;
    let dev = device_filled(blen, 0xAB);
    let mut host = vec![0xABu8; blen];
    let p: *mut c_void = if device {
        dev.ptr
    } else {
        host.as_mut_ptr().cast()
    };
    let back = |len: usize| -> Vec<u8> {
        if device {
            s.download(dev.ptr, len)
        } else {
            // SAFETY: `host` is alive for the whole function and not borrowed elsewhere now.
            unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec()
        }
    };
    let before = paths();
    // (file offset, size) → expected count; sizes unaligned so the fallback serves them.
    for (foff, size) in [
        (0usize, blen - 1),
        (1, 6 * MIB + 1),
        (5 * MIB, MIB + 7),
        (flen - 1, 4097),
        (flen, 4097),
        (flen + 1, 9),
        (1 << 32, 3),
    ] {
        let expect = flen.saturating_sub(foff).min(size);
        let start = foff.min(flen);
        assert_eq!(
            rd(f.fh, p, size, foff as i64, 0),
            expect as isize,
            "read {size} at {foff}"
        );
        let got = back(blen);
        assert_eq!(
            got[..expect],
            data[start..start + expect],
            "data read at {foff}"
        );
        assert!(
            got[expect..].iter().all(|&b| b == 0xAB),
            "bytes past the short count untouched (read at {foff})"
        );
        if device {
            fill(dev.ptr, 0xAB, blen);
        } else {
            // SAFETY: as above.
            unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), blen) }.fill(0xAB);
        }
    }
    let d = paths_since(before);
    if device {
        assert_eq!(d.fast_read, 0);
    } else {
        assert_host(d, "host EOF reads");
    }
}

child_test!(eof_mid_request_fallback, { eof_engine(true) });
child_test!(
    eof_mid_request_fallback_many_chunks,
    [("HIPFILE_CHUNK_SIZE", "4096"), ("HIPFILE_IO_THREADS", "4")],
    { eof_engine(true) }
);
child_test!(eof_mid_request_host, { eof_engine(false) });
child_test!(
    eof_mid_request_host_many_chunks,
    [("HIPFILE_CHUNK_SIZE", "4096"), ("HIPFILE_IO_THREADS", "4")],
    { eof_engine(false) }
);

child_test!(
    eof_mid_request_fastpath,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        // The fastpath reads up to end of file and returns the short count. O_DIRECT moves whole
        // 4 KiB blocks, so the tail of the block holding end of file may be overwritten (the kernel
        // zero-fills it); nothing past that block is touched. (Upstream notes that the KFD path may
        // report EIO for such reads on some versions; hipsim models the kernel's
        // O_DIRECT semantics.)
        open_driver();
        if !fastpath_possible("eof_mid_request_fastpath") {
            return;
        }
        let s = sim();
        let blen = 64 * 1024;
        for flen in [3 * K4 + 100, 3 * K4] {
            let data = pattern(flen, 24);
            let f = TestFile::rw("eof-fast", &data);
            let dev = device_filled(blen, 0xAB);
            let block_end = flen.div_ceil(K4) * K4;
            let before = paths();
            assert_eq!(
                rd(f.fh, dev.ptr, 8 * K4, 0, 0),
                flen as isize,
                "file of {flen}"
            );
            assert_eq!(
                paths_since(before),
                Paths {
                    fast_read: 1,
                    fast_write: 0,
                    copied: 0
                }
            );
            let back = s.download(dev.ptr, blen);
            assert_eq!(back[..flen], data[..]);
            assert!(
                back[block_end..].iter().all(|&b| b == 0xAB),
                "nothing past the last block is touched"
            );
            fill(dev.ptr, 0xAB, blen);
            assert_eq!(
                rd(f.fh, dev.ptr, 2 * K4, 2 * K4 as i64, 0),
                (flen - 2 * K4) as isize
            );
            assert_eq!(s.download(dev.ptr, flen - 2 * K4), data[2 * K4..]);
            // At and after end of file.
            assert_eq!(rd(f.fh, dev.ptr, K4, block_end as i64, 0), 0);
            assert_eq!(rd(f.fh, dev.ptr, K4, (block_end + 4 * K4) as i64, 0), 0);
        }
    }
);

child_test!(
    oversized_request_is_clamped_on_the_fastpath,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    {
        open_driver();
        if !fastpath_possible("oversized_request_is_clamped_on_the_fastpath") {
            return;
        }
        let s = sim();
        let size = 3usize << 30;
        let path = scratch_file("sparse3g");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(size as u64).unwrap();
        drop(file);
        let fd = open_fd(&path, libc::O_RDWR);
        let fh = register_fd(fd);
        let dev = sim().device_alloc(size);
        // Dirty the first page and the page just past the clamp.
        fill(dev.ptr, 0x55, K4);
        fill(dev.at(MAX_RW), 0x55, K4);
        let rb = s.counter("fastpath_read_bytes");
        let before = paths();
        let t = Instant::now();
        assert_eq!(rd(fh, dev.ptr, size, 0, 0), MAX_RW as isize);
        eprintln!("3 GiB sparse fastpath read took {:?}", t.elapsed());
        assert_fastpath(paths_since(before), "clamped read");
        assert_eq!(s.counter("fastpath_read_bytes") - rb, MAX_RW as u64);
        assert_eq!(
            s.download(dev.ptr, K4),
            vec![0u8; K4],
            "the hole reads as zeros"
        );
        assert_eq!(
            s.download(dev.at(MAX_RW), K4),
            vec![0x55u8; K4],
            "nothing past the clamp"
        );
        // The clamp comes before the bounds check: an absurd size still fits a 3 GiB buffer.
        assert_eq!(rd(fh, dev.ptr, usize::MAX, 0, 0), MAX_RW as isize);
        // But not a buffer shorter than the clamped size.
        assert_eq!(rd(fh, dev.ptr, usize::MAX, 0, (size - MIB) as i64), -5022);
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        let _ = std::fs::remove_file(&path);
    }
);

child_test!(
    oversized_request_is_clamped_on_the_fallback,
    [("HIPFILE_FALLBACK_SYNC_WRITES", "false")],
    {
        // A write into /dev/null: 2 GiB move from (never touched, so never committed) simulated
        // device memory through the bounce buffers, and the kernel discards them. fdatasync is
        // off because /dev/null does not support it.
        open_driver();
        let s = sim();
        let fd = open_fd(Path::new("/dev/null"), libc::O_WRONLY);
        let fh = register_fd(fd);
        let size = 3usize << 30;
        let dev = sim().device_alloc(size);
        s.reset_counters();
        let t = Instant::now();
        assert_eq!(wr(fh, dev.ptr, size, 0, 0), MAX_RW as isize);
        eprintln!("2 GiB fallback write into /dev/null took {:?}", t.elapsed());
        assert_eq!(s.counter("d2h_bytes"), MAX_RW as u64);
        assert_eq!(s.counter("hipAmdFileWrite"), 0);
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
);

// ---- byte-exact round trips ----------------------------------------------------------------

/// Writes then reads at many unaligned (and some aligned) offsets and sizes, registered and
/// unregistered buffers, various buffer offsets; checks the whole file after each write, the
/// device bytes after each read, and which backend served each request.
fn round_trip_matrix() {
    open_driver();
    let s = sim();
    let check_paths = odirect_works();
    let foffs = [0usize, 1, 4095, 4097, MIB + 3];
    let sizes = [1usize, 4095, 4097, 3 * MIB + 5, 17 * MIB];
    let boffs = [0usize, 3, 4097];
    let mut cases: Vec<(usize, usize, usize, usize, bool)> = Vec::new();
    let mut i = 0;
    for &foff in &foffs {
        for &size in &sizes {
            cases.push((foff, size, boffs[i % 3], boffs[(i + 1) % 3], i % 2 == 0));
            i += 1;
        }
    }
    // Aligned cases for the fastpath.
    for (foff, size, boff) in [
        (0usize, K4, 0usize),
        (K4, 6 * K4, 2 * K4),
        (MIB, 17 * MIB, 0),
    ] {
        cases.push((foff, size, boff, boff, i % 2 == 0));
        i += 1;
    }
    let flen = MIB + 3 + 17 * MIB + 2 * K4;
    let original = pattern(flen, 25);
    let f = TestFile::rw("matrix", &original);
    let mut expect = original.clone();
    let dev = sim().device_alloc(17 * MIB + 2 * K4);
    for (n, &(foff, size, wboff, rboff, registered)) in cases.iter().enumerate() {
        let what = format!("case {n}: file offset {foff}, size {size}, buffer offsets {wboff}/{rboff}, registered {registered}");
        if registered {
            assert_eq!(buf_register(dev.ptr, dev.len), hipFileError_t::SUCCESS);
        }
        let data = pattern(size, 1000 + n as u64);
        s.upload(dev.at(wboff), &data);
        let before = paths();
        assert_eq!(
            wr(f.fh, dev.ptr, size, foff as i64, wboff as i64),
            size as isize,
            "write, {what}"
        );
        let d = paths_since(before);
        expect[foff..foff + size].copy_from_slice(&data);
        assert!(
            f.contents() == expect,
            "file contents after the write, {what}"
        );
        if check_paths {
            if aligned(dev.ptr as usize + wboff, foff, size) {
                assert_fastpath(d, &what);
            } else {
                assert_fallback(d, &what, size);
            }
        }
        fill(dev.ptr, 0, dev.len);
        let before = paths();
        assert_eq!(
            rd(f.fh, dev.ptr, size, foff as i64, rboff as i64),
            size as isize,
            "read, {what}"
        );
        let d = paths_since(before);
        let back = s.download(dev.ptr, dev.len);
        assert!(
            back[rboff..rboff + size] == data[..],
            "device bytes after the read, {what}"
        );
        assert!(
            back[..rboff]
                .iter()
                .chain(&back[rboff + size..])
                .all(|&b| b == 0),
            "only the request's bytes change, {what}"
        );
        if check_paths {
            if aligned(dev.ptr as usize + rboff, foff, size) {
                assert_fastpath(d, &what);
            } else {
                assert_fallback(d, &what, size);
            }
        }
        if registered {
            assert_eq!(buf_deregister(dev.ptr), hipFileError_t::SUCCESS);
        }
    }
}

child_test!(
    round_trips_byte_exact,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true")],
    { round_trip_matrix() }
);
child_test!(
    round_trips_byte_exact_many_parallel_chunks,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_CHUNK_SIZE", "4096"),
        ("HIPFILE_IO_THREADS", "4"),
    ],
    { round_trip_matrix() }
);
child_test!(
    round_trips_byte_exact_without_sync_writes,
    [
        ("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true"),
        ("HIPFILE_FALLBACK_SYNC_WRITES", "false"),
    ],
    { round_trip_matrix() }
);
