//! The CUDA face before `cuInit` (a binary of its own: `cuInit` is process-wide).

mod common;

use std::ptr;

use common::*;

#[test]
fn calls_before_cu_init_are_not_initialized() {
    let (s, _g) = sim();
    let mut n = 0;
    let mut ctx = ptr::null_mut();
    let mut d = 0u64;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!((s.cuDeviceGetCount)(&mut n), 3);
        assert_eq!((s.cuDevicePrimaryCtxRetain)(&mut ctx, 0), 3);
        assert_eq!((s.cuCtxGetCurrent)(&mut ctx), 3);
        assert_eq!((s.cuMemAlloc_v2)(&mut d, 4096), 3);
        // The driver version is available before initialisation, as with the real driver.
        assert_eq!((s.cuDriverGetVersion)(&mut n), 0);
        assert_eq!((s.cuInit)(0), 0);
        assert_eq!((s.cuDeviceGetCount)(&mut n), 0);
        assert_eq!(n, 1);
        assert_eq!(
            (s.cuMemAlloc_v2)(&mut d, 4096),
            201,
            "initialised but no context"
        );
    }
    assert_eq!(counter(s, "cuDeviceGetCount"), 2);
}
