//! Per-call cost of a 4 KiB registered read (target T9), for `scripts/t9_callgrind.sh`.
//!
//! `t9_percall MODE N FILE` performs N iterations of one 4 KiB read from a page-cached file
//! into device memory of the simulated runtime (set HIPFILE_HIP_LIBRARY to libhipsim.so):
//! - `hipfile`: `hipFileRead` of a registered device buffer (the fallback path, since 4 KiB
//!   reads of a buffered descriptor are served through a bounce buffer);
//! - `plain`: what an application does by hand: `pread` into a pinned buffer, then `hipMemcpy`.
//!
//! The script runs each mode at two iteration counts under callgrind and divides the
//! difference in instructions by the difference in iterations, which cancels the setup.

use std::ffi::{c_int, c_void};
use std::os::fd::AsRawFd;

use hipfile::ffi::*;

type HipError = c_int;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, n, path) = (
        args[1].as_str(),
        args[2].parse::<usize>().unwrap(),
        &args[3],
    );
    let lib_path = std::env::var("HIPFILE_HIP_LIBRARY").expect("HIPFILE_HIP_LIBRARY");
    // SAFETY: loading the simulated runtime; the symbols have these C signatures.
    let lib = unsafe { libloading::Library::new(&lib_path) }.unwrap();
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
    let file = std::fs::File::open(path).unwrap();
    let fd = file.as_raw_fd();
    let mut dev: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { malloc(&mut dev, 4096) }, 0);
    match mode {
        "hipfile" => {
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
            for i in 0..n {
                // SAFETY: a registered handle and buffer of 4096 bytes.
                let r = unsafe { hipFileRead(fh, dev, 4096, ((i % 256) * 4096) as i64, 0) };
                assert_eq!(r, 4096);
            }
        }
        "plain" => {
            let mut pinned: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { host_malloc(&mut pinned, 4096, 0) }, 0);
            for i in 0..n {
                // SAFETY: 4096 bytes of pinned memory.
                let r = unsafe { libc::pread(fd, pinned, 4096, ((i % 256) * 4096) as libc::off_t) };
                assert_eq!(r, 4096);
                // SAFETY: valid host and device buffers of 4096 bytes.
                assert_eq!(unsafe { memcpy(dev, pinned, 4096, 1) }, 0);
            }
        }
        other => panic!("unknown mode {other}"),
    }
    std::mem::forget(lib);
}
