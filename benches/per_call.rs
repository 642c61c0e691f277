//! Per-call cost of a 4 KiB registered read (target T9 in time; `scripts/t9_callgrind.sh`
//! counts instructions), on the simulated runtime: `hipFileRead` through the fallback and the
//! fastpath, against what an application does by hand (`pread` into pinned memory, then
//! `hipMemcpy`). Run with `cargo bench --bench per_call`.

use std::ffi::{c_int, c_void};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use criterion::{black_box, Criterion};
use hipfile::ffi::*;

type HipError = c_int;

fn hipsim_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let p = deps.join("libhipsim.so");
    assert!(
        p.exists(),
        "{} missing (hipsim is built with the benchmarks)",
        p.display()
    );
    p
}

fn main() {
    // The library reads its environment once: set it before the first call. Compat mode is a
    // parameter, so both paths can be measured in one process.
    std::env::set_var("HIPFILE_HIP_LIBRARY", hipsim_path());
    std::env::set_var("HIPFILE_LOG", "error");
    std::env::set_var("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "true");
    // SAFETY: loading the simulated runtime; the symbols have these C signatures.
    let lib = unsafe { libloading::Library::new(hipsim_path()) }.unwrap();
    // SAFETY: as above.
    let (malloc, host_malloc, memcpy) = unsafe {
        (
            *lib.get::<unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError>(b"hipMalloc\0")
                .unwrap(),
            *lib.get::<unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> HipError>(
                b"hipHostMalloc\0",
            )
            .unwrap(),
            *lib.get::<unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError>(
                b"hipMemcpy\0",
            )
            .unwrap(),
        )
    };
    let dir = std::env::temp_dir().join(format!("hipfile-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("data");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let fd = file.as_raw_fd();
    let mut dev: *mut c_void = std::ptr::null_mut();
    let mut pinned: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(malloc(&mut dev, 4096), 0);
        assert_eq!(host_malloc(&mut pinned, 4096, 0), 0);
    }
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("4KiB read");
    let mut i = 0u64;
    group.bench_function("pread + hipMemcpy", |b| {
        b.iter(|| {
            i = (i + 1) % 256;
            // SAFETY: 4096 bytes of pinned memory and of device memory.
            unsafe {
                black_box(libc::pread(fd, pinned, 4096, (i * 4096) as libc::off_t));
                black_box(memcpy(dev, pinned, 4096, 1));
            }
        })
    });
    for (name, compat) in [
        ("hipFileRead fastpath", false),
        ("hipFileRead fallback", true),
    ] {
        assert_eq!(
            hipFileSetParameterBool(hipFileParamForceCompatMode, compat),
            hipFileError_t::SUCCESS
        );
        assert_eq!(hipFileDriverOpen(), hipFileError_t::SUCCESS);
        let mut fh: hipFileHandle_t = std::ptr::null_mut();
        let mut d = hipFileDescr_t {
            type_: hipFileHandleTypeOpaqueFD,
            handle: hipFileDescrHandle { fd },
            fs_ops: std::ptr::null(),
        };
        // SAFETY: valid pointers.
        assert_eq!(
            unsafe { hipFileHandleRegister(&mut fh, &mut d) },
            hipFileError_t::SUCCESS
        );
        assert_eq!(hipFileBufRegister(dev, 4096, 0), hipFileError_t::SUCCESS);
        group.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % 256;
                // SAFETY: a registered handle and buffer of 4096 bytes.
                black_box(unsafe { hipFileRead(fh, dev, 4096, (i * 4096) as i64, 0) })
            })
        });
        hipFileHandleDeregister(fh);
        assert_eq!(hipFileDriverClose(), hipFileError_t::SUCCESS);
    }
    group.finish();
    c.final_summary();
    let _ = std::fs::remove_dir_all(&dir);
    std::mem::forget(lib);
}
