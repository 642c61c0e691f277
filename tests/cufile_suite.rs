//! libcufile.so.0 (crates/cufile) through its exported cuFile ABI: `tests/c/cufile_suite.c`,
//! compiled against `include/cufile.h` and linked with `-lcufile` only, run on the simulator's
//! CUDA side (`HIPFILE_PLATFORM=nvidia`, the CUDA driver API of `libhipsim.so`);
//! `tests/c/cufile_layouts.c`, compiled for each distinct layout of the output structures
//! (cuFile 1.7..1.14, 1.15..1.18, 1.19..1.20), every output at the end of a page followed by a
//! `PROT_NONE` page; the library's ELF identity and exports; the hand-written mirror of
//! hipFile's types it calls libhipfile with.

mod common;

use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::programs::{program, report};
use common::{deps_dir, fresh_out_dir, hipsim_path, libhipfile_path, repo_root};

#[path = "../crates/cufile/src/hip_abi.rs"]
mod hip_abi;

/// `libcufile.so` as cargo built it for the tests (a dev-dependency, like hipsim).
fn libcufile_path() -> PathBuf {
    let p = deps_dir().join("libcufile.so");
    assert!(p.exists(), "{} is missing", p.display());
    p
}

fn work_dir(name: &str) -> PathBuf {
    fresh_out_dir(&format!("cufile_suite/{name}-{}", std::process::id()))
}

/// A directory holding `libcufile.so.0` (the SONAME the program records) pointing at `lib`.
fn soname_dir(name: &str, lib: &Path) -> PathBuf {
    let d = work_dir(&format!("{name}-lib"));
    std::os::unix::fs::symlink(lib, d.join("libcufile.so.0")).unwrap();
    d
}

/// Compile the suite, linked with the cuFile library only; `rpath` names where
/// `libcufile.so.0` is found at run time.
fn compile(name: &str, rpath: &Path) -> PathBuf {
    compile_c("cufile_suite", name, rpath, &[])
}

/// Compile `tests/c/<source>.c` with `defines` (`-D` flags), linked with the cuFile library
/// only (and libdl for the CUDA driver it loads).
fn compile_c(source: &str, name: &str, rpath: &Path, defines: &[&str]) -> PathBuf {
    let exe = work_dir(&format!("{name}-build")).join(source);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args([
            "-std=c11",
            "-D_GNU_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O2",
        ])
        .args(defines)
        .arg("-I")
        .arg(repo_root().join("include"))
        .arg(repo_root().join(format!("tests/c/{source}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", deps_dir().display()))
        .args(["-lcufile", "-ldl"])
        .arg(format!("-Wl,-rpath,{}", rpath.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(
        out.status.success(),
        "compiling tests/c/{source}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Run the suite in `cwd` with a clean environment plus `env`: the engine drives the
/// simulator's CUDA driver API, and so does the suite.
fn run(exe: &Path, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = program(exe);
    cmd.current_dir(cwd).args(args);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("CUFILE_") || k.starts_with("KVIKIO_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("HIPFILE_PLATFORM", "nvidia")
        .env("HIPFILE_CUDA_LIBRARY", hipsim_path())
        .env("CUFILE_SUITE_CUDA", hipsim_path())
        .env("HIPFILE_LOG", "info");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the cuFile suite")
}

/// The "N checks, F failures" line: `N` when `F` is 0 and the program succeeded.
fn passed(out: &Output) -> usize {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("cufile suite: "))
        .unwrap_or_else(|| panic!("no summary line:\n{}", report(out)));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert!(
        out.status.success() && words[4] == "0",
        "the cuFile suite failed:\n{}",
        report(out)
    );
    words[2].parse().unwrap()
}

/// The checks `tests/c/cufile_suite.c` makes in its full run (the `CHECK`s reached: counted
/// from a run on a file system with O_DIRECT, and to be updated with the suite). A count, not a
/// floor: a section that stops running, or a loop that stops early, fails the test.
const SUITE_CHECKS: usize = 355;
/// The checks of `direct_io()` (a registration, two `read_exact`s of three checks, the close),
/// which it leaves out, saying so, where the scratch file system has no O_DIRECT.
const DIRECT_IO_CHECKS: usize = 8;
/// The line the suite prints when it leaves `direct_io()` out.
const NO_O_DIRECT: &str = "direct I/O: the scratch file system has no O_DIRECT (skipped)";

/// The checks a full run of the suite must have made: all of them, less `direct_io()`'s
/// where the file system had no O_DIRECT (the only part that depends on the machine).
fn full_run_checks(out: &Output, all: usize) -> usize {
    if String::from_utf8_lossy(&out.stdout).contains(NO_O_DIRECT) {
        all - DIRECT_IO_CHECKS
    } else {
        all
    }
}

#[test]
fn suite_passes_on_the_simulated_cuda_side() {
    let exe = compile("main", &soname_dir("main", &libcufile_path()));
    let cwd = work_dir("main-run");
    let out = run(&exe, &cwd, &[cwd.to_str().unwrap()], &[]);
    let n = passed(&out);
    assert_eq!(
        n,
        full_run_checks(&out, SUITE_CHECKS),
        "checks run:\n{}",
        report(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("stream-ordered I/O: "),
        "the stream section did not run:\n{}",
        report(&out)
    );
    // The engine looked for NVIDIA's cuFile as its GPU-direct path, found this library under
    // that name, and did not call into it (that would be the engine calling itself).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("libcufile.so.0 is hipfile's own cuFile library"),
        "{}",
        report(&out)
    );
    // The default level is ERROR and nothing failed: no cufile.log left behind.
    assert!(
        !cwd.join("cufile.log").exists(),
        "a cufile.log was written in the working directory"
    );
}

#[test]
fn suite_passes_with_the_1_19_layouts_declared() {
    let exe = compile("v119", &soname_dir("v119", &libcufile_path()));
    let cwd = work_dir("v119-run");
    let out = run(
        &exe,
        &cwd,
        &[cwd.to_str().unwrap()],
        &[("HIPFILE_CUFILE_API_LEVEL", "1.19")],
    );
    // One check more than the default run: with 1.19 declared, level 1 statistics have the
    // readv counters, and the suite checks them.
    assert_eq!(
        passed(&out),
        full_run_checks(&out, SUITE_CHECKS + 1),
        "{}",
        report(&out)
    );
}

/// `tests/c/cufile_layouts.c` compiled for one layout (`1070`, `1150`, `1190`) and run with
/// `env`; its output.
fn layouts(layout: &str, env: &[(&str, &str)]) -> Output {
    let tag = format!("layouts-{layout}-{}", env.len());
    let exe = compile_c(
        "cufile_layouts",
        &tag,
        &soname_dir(&tag, &libcufile_path()),
        &[&format!("-DCUFILE_LAYOUT={layout}")],
    );
    let cwd = work_dir(&format!("{tag}-run"));
    run(&exe, &cwd, &[cwd.to_str().unwrap()], env)
}

/// The checks of a layouts run that passed, for the layout it was built for.
fn layouts_passed(out: &Output, layout: &str) -> usize {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("cufile layouts {layout}: ");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no summary line:\n{}", report(out)));
    let words: Vec<&str> = line[prefix.len()..].split_whitespace().collect();
    assert!(
        out.status.success() && words[2] == "0",
        "the layouts check failed:\n{}",
        report(out)
    );
    words[0].parse().unwrap()
}

#[test]
fn every_output_of_a_1_7_to_1_14_consumer_ends_at_a_guard_page_unharmed() {
    let out = layouts("1070", &[]);
    // Every layouts run's count is the program's own, the same on any machine.
    assert_eq!(layouts_passed(&out, "1070"), 27, "{}", report(&out));
}

#[test]
fn every_output_of_a_1_15_to_1_18_consumer_ends_at_a_guard_page_unharmed() {
    // The statistics of 512 / 1024 / 5000 bytes: what CUDA 13.0's cuda.bindings allocates.
    let out = layouts("1150", &[]);
    assert_eq!(layouts_passed(&out, "1150"), 127, "{}", report(&out));
}

#[test]
fn a_1_19_consumer_gets_1_18_layouts_and_is_told_so_unless_1_19_is_declared() {
    let out = layouts("1190", &[]);
    assert_eq!(layouts_passed(&out, "1190"), 129, "{}", report(&out));
    // Declared 1.19: the same number of checks, of the other layout's values.
    let out = layouts("1190", &[("HIPFILE_CUFILE_API_LEVEL", "1.19")]);
    assert_eq!(layouts_passed(&out, "1190"), 129, "{}", report(&out));
}

#[test]
fn the_guard_pages_catch_a_structure_written_too_long() {
    // A deployment that declares 1.19 consumers while one was built against 1.15..1.18 is the
    // overrun the rule prevents: the first statistics call faults at the guard page.
    use std::os::unix::process::ExitStatusExt;
    let out = layouts("1150", &[("HIPFILE_CUFILE_API_LEVEL", "1.19")]);
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "{}", report(&out));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("cufile layouts"),
        "{}",
        report(&out)
    );
}

/// A configuration file as NVIDIA writes them: comments of both kinds, trailing commas,
/// unknown keys, numbers as strings, a scalar for an array.
const CUFILE_JSON: &str = r#"// written by tests/cufile_suite.rs
{
    "logging": {
        "dir": "@DIR@",
        "level": "INFO",
    },
    /* sizes */
    "execution": { "max_io_threads": 100, "parallel_io": true, },
    "properties": {
        "io_batchsize": "32",
        "max_direct_io_size_kb": 4096,
        "poll_mode_max_size_kb": 16,
        "per_buffer_cache_size_kb": 2048,
        "gds_fallback_io": true,
        "rdma_transport_type": "DC_V2",
        "posix_pool_slab_size_kb": [8, 2048],
        "posix_pool_slab_count": [16, 4],
        "rdma_dev_addr_list": [],
        "no_such_key": { "nested": [1, 2, 3] },
        // a comment before the closing brace
    },
    "fs": { "generic": { "posix_unaligned_writes": false } },
}
"#;

#[test]
fn configuration_file_and_environment_are_applied() {
    let exe = compile("config", &soname_dir("config", &libcufile_path()));
    let cwd = work_dir("config-run");
    let logs = work_dir("config-logs");
    let json = cwd.join("cufile.json");
    std::fs::write(&json, CUFILE_JSON.replace("@DIR@", logs.to_str().unwrap())).unwrap();
    let out = run(
        &exe,
        &cwd,
        &[cwd.to_str().unwrap(), "config"],
        &[
            ("CUFILE_ENV_PATH_JSON", json.to_str().unwrap()),
            ("CUFILE_FORCE_COMPAT_MODE", "true"),
        ],
    );
    // configuration() alone, which has no O_DIRECT part.
    assert_eq!(passed(&out), 27, "{}", report(&out));
    // logging.level INFO and logging.dir: the log is in that directory, not the working one.
    let log = std::fs::read_to_string(logs.join("cufile.log"))
        .unwrap_or_else(|e| panic!("no cufile.log in logging.dir ({e}):\n{}", report(&out)));
    assert!(
        log.contains(&format!("configuration read from {}", json.display())),
        "{log}"
    );
    assert!(log.contains("driver open"), "{log}");
    assert!(!cwd.join("cufile.log").exists());
}

#[test]
fn a_missing_configuration_file_is_one_log_line() {
    // DeepSpeed's case: CUFILE_ENV_PATH_JSON names a file that does not exist.
    let exe = compile("missing", &soname_dir("missing", &libcufile_path()));
    let cwd = work_dir("missing-run");
    let log = cwd.join("custom.log");
    let missing = "/nonexistent/$PWD/local_cufile.json";
    let out = run(
        &exe,
        &cwd,
        &[cwd.to_str().unwrap(), "open"],
        &[
            ("CUFILE_ENV_PATH_JSON", missing),
            ("CUFILE_LOGGING_LEVEL", "notice"),
            ("CUFILE_LOGFILE_PATH", log.to_str().unwrap()),
        ],
    );
    assert_eq!(passed(&out), 2);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&format!("no configuration at {missing}")))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains("NOTICE"), "{text}");
}

#[test]
fn without_the_engine_every_call_says_platform_not_supported() {
    // A copy of the library alone in a directory: no libhipfile.so.0 beside it, none loaded,
    // none on the default search path.
    let alone = work_dir("alone");
    std::fs::copy(libcufile_path(), alone.join("libcufile.so.0")).unwrap();
    let exe = compile("alone", &alone);
    let cwd = work_dir("alone-run");
    let out = run(&exe, &cwd, &[cwd.to_str().unwrap(), "noengine"], &[]);
    assert_eq!(passed(&out), 6, "{}", report(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("libhipfile.so.0 not found").count(),
        1,
        "said once:\n{}",
        report(&out)
    );
    // An ERROR: it goes to cufile.log in the working directory, as cuFile's errors do.
    let log = std::fs::read_to_string(cwd.join("cufile.log")).unwrap();
    assert!(
        log.contains("ERROR") && log.contains("libhipfile.so.0 not found"),
        "{log}"
    );
}

fn tool(name: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(name)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(out.status.success(), "{name} failed:\n{}", report(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn exports_are_exactly_the_cufile_functions() {
    let listing = tool("nm", &["-D", "--defined-only"], &libcufile_path());
    let exported: BTreeSet<String> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .collect();
    let expected: BTreeSet<String> = include_str!("cufile-exported-symbols.txt")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    assert_eq!(expected.len(), 50);
    assert_eq!(exported, expected);
    // Every one a function (T), unversioned.
    for line in listing.lines() {
        assert!(line.contains(" T ") && !line.contains('@'), "{line}");
    }
}

#[test]
fn elf_identity_is_cufile_s() {
    let dynamic = tool("readelf", &["-d"], &libcufile_path());
    assert!(
        dynamic.contains("Library soname: [libcufile.so.0]"),
        "{dynamic}"
    );
    assert!(
        dynamic
            .lines()
            .any(|l| l.contains("FLAGS_1") && l.contains("NODELETE")),
        "{dynamic}"
    );
    let needed: Vec<&str> = dynamic.lines().filter(|l| l.contains("(NEEDED)")).collect();
    for n in &needed {
        assert!(
            !n.contains("cuda") && !n.contains("cufile") && !n.contains("hipfile"),
            "no link-time dependency on CUDA, cuFile or the engine: {n}"
        );
    }
    // Not a second engine: no hipFile symbol is defined inside.
    let symbols = tool("nm", &["--defined-only"], &libcufile_path());
    assert!(
        !symbols.contains("hipFileDriverOpen"),
        "libcufile contains hipFile's code"
    );
    assert!(libhipfile_path().exists());
}

#[test]
fn hip_mirror_has_the_engine_s_layouts() {
    use common::*;
    assert_eq!(size_of::<hip_abi::HipError>(), size_of::<hipFileError_t>());
    assert_eq!(size_of::<hip_abi::HipDescr>(), size_of::<hipFileDescr_t>());
    assert_eq!(
        offset_of!(hip_abi::HipDescr, handle),
        offset_of!(hipFileDescr_t, handle)
    );
    assert_eq!(
        offset_of!(hip_abi::HipDescr, fs_ops),
        offset_of!(hipFileDescr_t, fs_ops)
    );
    assert_eq!(
        size_of::<hip_abi::HipProps>(),
        size_of::<hipFileDriverProps_t>()
    );
    assert_eq!(
        size_of::<hip_abi::HipPropsNvfs>(),
        size_of::<hipFileDriverPropsNvfs>()
    );
    macro_rules! same_offset {
        ($field:ident) => {
            assert_eq!(
                offset_of!(hip_abi::HipProps, $field),
                offset_of!(hipFileDriverProps_t, $field),
                stringify!($field)
            );
        };
    }
    same_offset!(feature_flags);
    same_offset!(max_device_cache_size);
    same_offset!(per_buffer_cache_size);
    same_offset!(max_device_pinned_mem_size);
    same_offset!(max_batch_io_count);
    same_offset!(max_batch_io_timeout_msecs);
    assert_eq!(
        offset_of!(hip_abi::HipPropsNvfs, driver_control_flags),
        offset_of!(hipFileDriverPropsNvfs, driver_control_flags)
    );
    assert_eq!(
        offset_of!(hip_abi::HipPropsNvfs, max_direct_io_size),
        offset_of!(hipFileDriverPropsNvfs, max_direct_io_size)
    );
    assert_eq!(
        hip_abi::HIP_STATS_L1_SIZE,
        size_of::<hipFileStatsLevel1_t>()
    );
    assert_eq!(
        hip_abi::HIP_STATS_L2_SIZE,
        size_of::<hipFileStatsLevel2_t>()
    );
    assert_eq!(
        hip_abi::HIP_STATS_L3_SIZE,
        size_of::<hipFileStatsLevel3_t>()
    );
    assert_eq!(hip_abi::HIP_IO_PARAMS_SIZE, size_of::<hipFileIOParams_t>());
    assert_eq!(hip_abi::HIP_IO_EVENTS_SIZE, size_of::<hipFileIOEvents_t>());
    assert_eq!(hip_abi::HIP_INVALID_VALUE, hipFileInvalidValue);
    assert_eq!(hip_abi::HIP_DRIVER_ERROR, hipFileHipDriverError);
    assert_eq!(hip_abi::HIP_INTERNAL_ERROR, hipFileInternalError);
    assert_eq!(hip_abi::HIP_IO_MAX_ERROR, hipFileIOMaxError);
    assert_eq!(
        hip_abi::HIP_ALLOW_COMPAT_MODE_BIT as i32,
        hipFileAllowCompatMode
    );
    assert_eq!(hip_abi::HIP_USE_POLL_MODE_BIT as i32, hipFileUsePollMode);
}

#[test]
fn installed_library_finds_the_engine_beside_it() {
    let prefix = work_dir("prefix");
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/install.sh"))
        // As built (not stripped): the bytes are compared below.
        .args(["--debug-info", "--libdir", "lib", "--lib"])
        .arg(libhipfile_path())
        .arg(&prefix)
        .env_remove("DESTDIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "install.sh failed:\n{}", report(&out));
    let lib = prefix.join("lib");
    assert_eq!(
        std::fs::read(lib.join("libcufile.so.0")).unwrap(),
        std::fs::read(libcufile_path()).unwrap(),
        "the libcufile.so next to --lib's file is installed"
    );
    assert_eq!(
        std::fs::read_link(lib.join("libcufile.so")).unwrap(),
        Path::new("libcufile.so.0")
    );
    assert_eq!(
        std::fs::read(prefix.join("include/cufile.h")).unwrap(),
        std::fs::read(repo_root().join("include/cufile.h")).unwrap()
    );
    // A program that runs against the installed copy: the engine is found in its directory
    // (nothing loaded it before, and no library path names it).
    let exe = compile("installed", &lib);
    let cwd = work_dir("installed-run");
    let log = cwd.join("cufile.log");
    let out = run(
        &exe,
        &cwd,
        &[cwd.to_str().unwrap(), "open"],
        &[
            ("CUFILE_LOGGING_LEVEL", "INFO"),
            ("CUFILE_LOGFILE_PATH", log.to_str().unwrap()),
        ],
    );
    assert_eq!(passed(&out), 2);
    let text = std::fs::read_to_string(&log).unwrap();
    let engine = std::fs::canonicalize(&lib).unwrap().join("libhipfile.so.0");
    assert!(
        text.contains(&format!("using the hipfile engine {}", engine.display())),
        "{text}"
    );
}
