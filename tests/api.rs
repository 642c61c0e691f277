//! The safe Rust API's view of the fastpath (what `hipfile check` reports): the refusal that
//! holds for every request on a file, checked against what a read then does.

mod common;

use std::ffi::c_void;

use common::*;
use hipfile::api::stats;
use hipfile::api::Refusal;

/// The fastpath refusals recorded so far for `r`.
fn fastpath_refusals_of(r: Refusal) -> u64 {
    let slot = stats::refusal_slot(r);
    stats::own_snapshot().ext.expect("our extension").refusals[0][slot]
}

child_test!(
    forced_compat_mode_refuses_every_file,
    [("HIPFILE_FORCE_COMPAT_MODE", "true")],
    {
        let path = scratch_file("api-forced");
        make_file(&path, &pattern(8192, 1));
        let fd = open_fd(&path, libc::O_RDWR);
        assert_eq!(
            hipfile::api::fastpath_refusal(fd),
            Ok(Some(Refusal::CompatForced))
        );
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        std::fs::remove_file(&path).unwrap();
    }
);

child_test!(
    the_refusal_is_what_an_aligned_read_meets,
    [("HIPFILE_UNSUPPORTED_FILE_SYSTEMS", "false")],
    {
        let path = scratch_file("api-read");
        make_file(&path, &pattern(1 << 20, 2));
        let fd = open_fd(&path, libc::O_RDWR);
        let expected = hipfile::api::fastpath_refusal(fd).unwrap();
        assert_ne!(expected, Some(Refusal::CompatForced));
        let fh = register_fd(fd);
        let dev = sim().device_alloc(1 << 20);
        let (calls, refused) = (
            sim().counter("hipAmdFileRead"),
            expected.map(fastpath_refusals_of),
        );
        // A 64 KiB read at offset 0 into the start of a device allocation: aligned for any
        // direct-I/O alignment up to 64 KiB, so only the file's refusal can stop the fastpath.
        // SAFETY: device memory; the library never dereferences it on the host.
        let n = unsafe { hipFileRead(fh, dev.ptr.cast::<c_void>(), 65536, 0, 0) };
        assert_eq!(n, 65536);
        match expected {
            None => assert_eq!(sim().counter("hipAmdFileRead") - calls, 1, "fastpath"),
            Some(r) => {
                assert_eq!(sim().counter("hipAmdFileRead"), calls, "no fastpath call");
                assert_eq!(
                    fastpath_refusals_of(r) - refused.unwrap(),
                    1,
                    "refused for {r:?}"
                );
            }
        }
        hipFileHandleDeregister(fh);
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        std::fs::remove_file(&path).unwrap();
    }
);
