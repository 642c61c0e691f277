//! The safe Rust API's reports, the ones the `hipfile` tool prints: the fastpath's refusal that
//! holds for every request on a file (checked against what a read then does), the runtime
//! report, the configuration snapshot, the environment as the library reads it, the mount
//! table, and this process's statistics.

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

child_test!(
    runtime_report_says_what_was_chosen,
    [("HIPFILE_PLATFORM", "amd"), ("HIPSIM_DEVICE_COUNT", "3")],
    {
        let r = hipfile::api::runtime_report();
        assert_eq!(r.platform, hipfile::api::Platform::Amd);
        assert!(r.simulated);
        assert_eq!(r.reason, "HIPFILE_PLATFORM=amd");
        assert_eq!(r.device_count, 3);
        assert!(r.gpu_direct, "hipsim has hipAmdFileRead/Write");
        assert_eq!(hipfile::api::set_device(2), Ok(()));
        assert!(hipfile::api::set_device(3).is_err(), "no fourth device");
    }
);

child_test!(runtime_report_host_only, [("HIPFILE_PLATFORM", "host")], {
    let r = hipfile::api::runtime_report();
    assert_eq!(r.platform, hipfile::api::Platform::Host);
    assert!(!r.simulated);
    assert!(!r.gpu_direct);
    assert_eq!(r.reason, "HIPFILE_PLATFORM=host");
});

child_test!(
    config_snapshot_follows_the_environment,
    [
        ("HIPFILE_CHUNK_SIZE", "1M"),
        ("HIPFILE_HOST", "false"),
        ("HIPFILE_IO_THREADS", "3"),
        ("HIPFILE_FORCE_COMPAT_MODE", "true"),
    ],
    {
        let c = hipfile::api::config();
        assert_eq!(c.chunk_size, 1 << 20);
        assert!(!c.host_io);
        assert_eq!(c.io_threads, 3);
        assert!(c.force_compat);
        assert!(c.allow_compat, "the default");
    }
);

child_test!(
    environment_says_what_the_library_makes_of_each_variable,
    [
        ("HIPFILE_HOST", "0"),
        ("HIPFILE_STATS_TSC", "false"),
        ("HIPFILE_NO_SUCH_VARIABLE", "1"),
        ("HIPSIM_DEVICE_COUNT", "2"),
    ],
    {
        let env = hipfile::api::environment(true);
        let note = |name: &str| {
            env.iter()
                .find(|v| v.name == name)
                .unwrap_or_else(|| panic!("{name} not listed: {env:?}"))
                .note
        };
        assert_eq!(
            note("HIPFILE_HOST"),
            Some("neither true nor false: ignored")
        );
        assert_eq!(note("HIPFILE_STATS_TSC"), None);
        assert_eq!(
            note("HIPFILE_NO_SUCH_VARIABLE"),
            Some("unknown variable: the library ignores it")
        );
        assert_eq!(note("HIPSIM_DEVICE_COUNT"), None);
        let names: Vec<&str> = env.iter().map(|v| v.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "sorted by name");
        assert!(hipfile::api::environment(false)
            .iter()
            .all(|v| v.name.starts_with("HIPFILE_")));
    }
);

#[test]
fn the_mount_table_holds_the_root() {
    let table = hipfile::api::mount_table().unwrap();
    assert!(table.iter().any(|m| m.mount_point() == "/"), "{table:?}");
}

child_test!(own_statistics_through_the_safe_api, {
    let path = scratch_file("api-stats");
    make_file(&path, &pattern(8192, 3));
    let file = std::fs::File::open(&path).unwrap();
    let _driver = hipfile::api::DriverGuard::open();
    let reg = hipfile::api::RegisteredFile::register(&file).unwrap();
    let mut buf = vec![0u8; 4096];
    assert_eq!(reg.read_host(&mut buf, 0), Ok(4096));
    let s = stats::own_snapshot();
    let ext = s.ext.as_ref().expect("our extension");
    let read = stats::direction_index(hipfile::api::Direction::Read);
    assert_eq!((ext.io[2][read].ops, ext.io[2][read].bytes), (1, 4096));
    assert_eq!(s.file_registrations, 1);
    let text = stats::text_report(&s);
    assert!(text.starts_with("AIS-STATS Version: 1\n"), "{text}");
    assert!(text.contains("Total Host Read Size (B): 4096\n"), "{text}");
    drop(reg);
    std::fs::remove_file(&path).unwrap();
});
