//! `hipfile check`: runs the built tool with and without the simulated GPU runtime and reads
//! its `--json` output back.
//!
//! Exit-code rule under test: 0 when the library can do GPU I/O on this machine (a GPU runtime
//! is usable and its self-test passes), 1 with a one-line reason otherwise: no GPU runtime
//! (unless --allow-host-only), a failed self-test, a library that cannot be loaded; 2 when
//! something named could not be examined (a PATH, the library --lib names is not found),
//! which is no verdict about the machine; each reason said once.

mod common;
use common::{hipsim, run_hipfile, scratch, text};

use std::ffi::CString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Output;

// The tool's JSON writer and, under cfg(test), its small parser: used here to read the output.
#[allow(dead_code)]
#[path = "../src/json.rs"]
mod json;

use json::parse::parse;
use json::Value;

fn hipfile(tmp: &Path, sim: bool, env: &[(&str, &str)], args: &[&str]) -> Output {
    run_hipfile(tmp, sim, env, args)
}

fn ok_json(out: &Output) -> Value {
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "hipfile check failed: {stdout}{}",
        text(&out.stderr)
    );
    parse(stdout.trim()).unwrap_or_else(|e| panic!("not one JSON object ({e}): {stdout}"))
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    match v.get(key) {
        Some(Value::Arr(a)) => a,
        other => panic!("{key} is not an array: {other:?}"),
    }
}

/// What this test itself finds for `dir`: the file-system type of its mount (from
/// /proc/self/mountinfo, by device number and longest mount-point prefix) and the mount point.
fn own_mount_of(dir: &Path) -> (String, String) {
    let dir = std::fs::canonicalize(dir).unwrap();
    let dev = std::fs::metadata(&dir).unwrap().dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut best: Option<(String, String)> = None;
    for line in table.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let f: Vec<&str> = left.split(' ').collect();
        let mp = f[4].replace("\\040", " ");
        if f[2] != format!("{maj}:{min}") || !dir.starts_with(&mp) {
            continue;
        }
        let fstype = right.split(' ').next().unwrap().to_string();
        if best.as_ref().is_none_or(|(m, _)| mp.len() > m.len()) {
            best = Some((mp, fstype));
        }
    }
    best.expect("the scratch directory's mount is in /proc/self/mountinfo")
}

/// Whether this test can open a file in `dir` with O_DIRECT.
fn own_odirect(dir: &Path) -> bool {
    let p = dir.join("odirect-probe");
    std::fs::write(&p, [0u8; 4096]).unwrap();
    let c = CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: valid path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECT) };
    if fd >= 0 {
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
    std::fs::remove_file(&p).unwrap();
    fd >= 0
}

/// The listed mount holding `dir` (longest mount point that prefixes it).
fn volume_of<'a>(v: &'a Value, dir: &Path) -> &'a Value {
    let dir = std::fs::canonicalize(dir).unwrap();
    arr(v, "volumes")
        .iter()
        .filter(|vol| s(vol, "mount_point").is_some_and(|m| dir.starts_with(m)))
        .max_by_key(|vol| s(vol, "mount_point").unwrap().len())
        .unwrap_or_else(|| panic!("no listed mount holds {}: {v:?}", dir.display()))
}

fn self_test_status<'a>(v: &'a Value, which: &str) -> &'a str {
    s(v.get("self_test").unwrap().get(which).unwrap(), "status").unwrap()
}

/// The scratch directory's mount as the tool reports it agrees with what this test sees.
fn assert_scratch_mount(v: &Value, tmp: &Path) {
    let (mount_point, fstype) = own_mount_of(tmp);
    let vol = volume_of(v, tmp);
    println!("scratch mount: {mount_point} ({fstype}); tool says {vol:?}");
    assert_eq!(s(vol, "mount_point"), Some(mount_point.as_str()));
    assert_eq!(s(vol, "fstype"), Some(fstype.as_str()));
    assert_eq!(s(vol, "error"), None);
    let odirect = own_odirect(tmp);
    assert_eq!(vol.get("o_direct_works"), Some(&Value::Bool(odirect)));
    if odirect {
        assert_eq!(s(vol, "o_direct"), Some("works"));
    }
    if fstype == "ext4" {
        assert!(s(vol, "ext4_data_mode").is_some(), "{vol:?}");
    }
    if odirect {
        assert!(
            vol.get("dio_offset_align")
                .and_then(Value::as_f64)
                .is_some_and(|a| a > 0.0),
            "statx reports the DIO alignment on this kernel: {vol:?}"
        );
    }
}

#[test]
fn check_json_on_the_simulator() {
    let tmp = scratch("sim");
    let v = ok_json(&hipfile(&tmp, true, &[], &["check", "--json"]));
    assert_eq!(v.get("simulated"), Some(&Value::Bool(true)));
    assert_eq!(s(&v, "platform"), Some("amd"));
    assert_eq!(v.get("gpu_direct_entry_points"), Some(&Value::Bool(true)));
    assert!(v.get("device_count").and_then(Value::as_f64).unwrap() >= 1.0);
    assert!(s(&v, "runtime").unwrap().contains("simulated"));
    assert_eq!(v.get("ok"), Some(&Value::Bool(true)));
    assert_eq!(v.get("failure"), Some(&Value::Null));
    assert_eq!(self_test_status(&v, "host_memory"), "passed");
    assert_eq!(self_test_status(&v, "device_memory"), "passed");
    let st = v.get("self_test").unwrap();
    assert_eq!(
        s(st, "dir").map(PathBuf::from),
        Some(tmp.clone()),
        "the self-test uses TMPDIR"
    );
    assert_scratch_mount(&v, &tmp);
    // ext4 data=ordered or xfs, O_DIRECT and entry points: the fastpath could serve it.
    let vol = volume_of(&v, &tmp);
    let (_, fstype) = own_mount_of(&tmp);
    if (fstype == "ext4" && s(vol, "ext4_data_mode") == Some("ordered") || fstype == "xfs")
        && vol.get("o_direct_works") == Some(&Value::Bool(true))
    {
        assert_eq!(
            vol.get("fastpath_capable"),
            Some(&Value::Bool(true)),
            "{vol:?}"
        );
        assert!(arr(vol, "fastpath_reasons").is_empty());
    }
    // The variables --sim sets are listed as the configuration in effect.
    let names: Vec<&str> = arr(&v, "environment")
        .iter()
        .map(|e| s(e, "name").unwrap())
        .collect();
    assert!(names.contains(&"HIPFILE_HIP_LIBRARY"), "{names:?}");
    let config = v.get("config").unwrap();
    assert!(config.get("io_threads").and_then(Value::as_f64).unwrap() >= 1.0);
    assert_eq!(config.get("host_io"), Some(&Value::Bool(true)));
    let kernel = v.get("kernel").unwrap();
    assert!(["y", "m", "not set", "unknown"].contains(&s(kernel, "pci_p2pdma").unwrap()));
    assert!(kernel.get("memlock").unwrap().get("soft").is_some());
    assert!(s(kernel.get("io_uring").unwrap(), "status").is_some());
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn check_json_without_a_gpu_runtime() {
    let tmp = scratch("host");
    let v = ok_json(&hipfile(
        &tmp,
        false,
        &[],
        &["check", "--json", "--allow-host-only"],
    ));
    assert_eq!(v.get("simulated"), Some(&Value::Bool(false)));
    let devices = v.get("device_count").and_then(Value::as_f64).unwrap();
    if devices > 0.0 {
        // A machine with a real GPU runtime: the rest of this test is about host-only.
        println!("a real GPU runtime was found: {:?}", s(&v, "runtime"));
        return;
    }
    assert_eq!(s(&v, "platform"), Some("host"));
    assert_eq!(v.get("gpu_direct_entry_points"), Some(&Value::Bool(false)));
    assert!(
        !arr(&v, "attempts").is_empty(),
        "the loader says what it tried"
    );
    assert_eq!(v.get("ok"), Some(&Value::Bool(true)));
    assert_eq!(self_test_status(&v, "host_memory"), "passed");
    assert_eq!(self_test_status(&v, "device_memory"), "skipped");
    assert_scratch_mount(&v, &tmp);
    let vol = volume_of(&v, &tmp);
    assert_eq!(vol.get("fastpath_capable"), Some(&Value::Bool(false)));
    assert!(
        arr(vol, "fastpath_reasons")
            .iter()
            .any(|r| r.as_str() == Some("no GPU runtime (host-only)")),
        "{vol:?}"
    );
    assert!(arr(&v, "environment")
        .iter()
        .all(|e| s(e, "name") == Some("HIPFILE_LOG")));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn check_text_says_simulated_loudly() {
    let tmp = scratch("text");
    let out = hipfile(&tmp, true, &[], &["check"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("SIMULATED GPU runtime"), "{stdout}");
    assert!(stdout.contains("CONFIG_PCI_P2PDMA:"), "{stdout}");
    assert!(stdout.contains("RLIMIT_MEMLOCK:"), "{stdout}");
    assert!(stdout.contains("io_uring:"), "{stdout}");
    assert!(stdout.contains("fastpath capable:"), "{stdout}");
    assert!(
        stdout.contains("Result: the library can do I/O on this machine"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn check_fails_with_one_line_when_no_io_is_possible() {
    let tmp = scratch("noio");
    // Host-only with host-memory I/O disabled: nothing can move.
    let out = hipfile(&tmp, false, &[("HIPFILE_HOST", "false")], &["check"]);
    let stderr = text(&out.stderr);
    let plain = hipfile(&tmp, false, &[], &["check", "--json", "--allow-host-only"]);
    let host_only = text(&plain.stdout).contains("\"platform\":\"host\"");
    if host_only {
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(
                "hipfile: the library cannot do I/O on this machine: host memory I/O is disabled"
            ),
            "{stderr}"
        );
    }
    // No usable temporary directory: the self-test cannot run.
    let missing = tmp.join("missing");
    let out = hipfile(&missing, true, &[], &["check", "--json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot create a temporary file") && stderr.contains("No such file"),
        "{stderr}"
    );
    let v = parse(text(&out.stdout).trim()).unwrap();
    assert_eq!(v.get("ok"), Some(&Value::Bool(false)));
    assert!(s(&v, "failure")
        .unwrap()
        .contains("cannot create a temporary file"));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn check_paths_examines_each_and_fails_for_a_bad_one() {
    let tmp = scratch("paths");
    let file = tmp.join("data.bin");
    std::fs::write(&file, vec![7u8; 8192]).unwrap();
    let missing = tmp.join("no-such-file");
    let args = [
        "check",
        "--json",
        tmp.to_str().unwrap(),
        file.to_str().unwrap(),
        missing.to_str().unwrap(),
    ];
    let out = hipfile(&tmp, true, &[], &args);
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("unexpected argument"),
        "hipfile check does not take PATH arguments: CheckArgs (main.rs) needs \
         `paths: Vec<PathBuf>` passed to check::run_paths: {stderr}"
    );
    // The bad PATH is a PATH error (one line, status 2), not a verdict about the machine;
    // the JSON listing still has every PATH.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "hipfile: cannot examine '{}': No such file or directory\n",
            missing.display()
        )
    );
    let v = parse(text(&out.stdout).trim()).unwrap();
    let vols = arr(&v, "volumes");
    assert_eq!(vols.len(), 3, "{vols:?}");
    let (mount_point, fstype) = own_mount_of(&tmp);
    let odirect = own_odirect(&tmp);
    for (vol, ty) in vols[..2].iter().zip(["directory", "regular file"]) {
        assert_eq!(s(vol, "type"), Some(ty), "{vol:?}");
        assert_eq!(s(vol, "mount_point"), Some(mount_point.as_str()));
        assert_eq!(s(vol, "fstype"), Some(fstype.as_str()));
        assert_eq!(vol.get("o_direct_works"), Some(&Value::Bool(odirect)));
        assert_eq!(vol.get("error"), Some(&Value::Null));
    }
    assert_eq!(s(&vols[0], "path"), tmp.to_str());
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        1,
        "the O_DIRECT probe file was deleted"
    );
    assert_eq!(s(&vols[2], "error"), Some("No such file or directory"));
    assert_eq!(vols[2].get("fastpath_capable"), Some(&Value::Bool(false)));
    assert_eq!(v.get("ok"), Some(&Value::Bool(true)), "the machine can");
    assert_eq!(v.get("failure"), Some(&Value::Null));
    assert_eq!(
        v.get("unexamined_paths"),
        Some(&Value::Arr(vec![Value::Str(missing.display().to_string())]))
    );
    assert_eq!(v.get("exit_status").and_then(Value::as_f64), Some(2.0));
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `check /typo` on a machine that can do I/O: the PATH's error on standard error, once; the
/// report's verdict is about the machine and names the PATH; status 2.
#[test]
fn check_a_missing_path_is_a_path_error_not_a_verdict() {
    let tmp = scratch("typo");
    let missing = tmp.join("typo");
    let out = hipfile(&tmp, true, &[], &["check", missing.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!(
            "hipfile: cannot examine '{}': No such file or directory\n",
            missing.display()
        )
    );
    assert!(
        stdout.ends_with(&format!(
            "\nResult: the library can do I/O on this machine (device memory: the SIMULATED GPU \
             runtime); 1 PATH could not be examined: '{}'\n",
            missing.display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("CANNOT"), "{stdout}");
    assert!(
        !stdout.contains("No such file"),
        "the reason is said once, on standard error: {stdout}"
    );
    assert!(
        stdout.contains("\nPaths\n  none could be examined\n"),
        "{stdout}"
    );

    // Two bad PATHs: one line each, the same form; the machine still can.
    let other = tmp.join("typo2");
    let out = hipfile(
        &tmp,
        true,
        &[],
        &[
            "check",
            missing.to_str().unwrap(),
            tmp.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "hipfile: cannot examine '{0}': No such file or directory\n\
             hipfile: cannot examine '{1}': No such file or directory\n",
            missing.display(),
            other.display()
        )
    );
    assert!(text(&out.stdout).ends_with(&format!(
        "; 2 PATHs could not be examined: '{}', '{}'\n",
        missing.display(),
        other.display()
    )));

    // A verdict against the machine (host-only not accepted) comes first: status 1, and the
    // PATH's line is still there, once.
    let out = hipfile(
        &tmp,
        false,
        &[("HIPFILE_PLATFORM", "host")],
        &["check", missing.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "hipfile: cannot examine '{}': No such file or directory\n\
             hipfile: no usable GPU runtime: the library would run host-only \
             (HIPFILE_PLATFORM=host); --allow-host-only accepts that\n",
            missing.display()
        )
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `check --lib` when the library is not installed: "not found" and what to do, once, on
/// standard error; nothing else; status 2.
#[test]
fn check_lib_says_not_found_and_what_to_do() {
    let tmp = scratch("notfound");
    // A name the dynamic loader cannot find here, and the default name where it cannot either.
    let mut names = vec!["libhipfile-not-installed.so.0"];
    let default = hipfile(&tmp, false, &[], &["check", "--lib"]);
    if text(&default.stdout).starts_with("Library examined: /") {
        println!("libhipfile.so.0 is installed on this machine: only the other name is tried");
    } else {
        names.push("libhipfile.so.0");
    }
    for name in names {
        let out = hipfile(&tmp, false, &[], &["check", &format!("--lib={name}")]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert_eq!(text(&out.stdout), "", "{name}");
        assert_eq!(
            stderr,
            format!(
                "hipfile: {name} not found: the dynamic loader has none in LD_LIBRARY_PATH, the \
                 ldconfig cache or the system's library folders. Install it (scripts/install.sh \
                 PREFIX) and let the loader find it (LD_LIBRARY_PATH=PREFIX/LIBDIR, or \
                 PREFIX/LIBDIR in /etc/ld.so.conf.d/ then ldconfig), or name the file: \
                 --lib=PATH\n"
            )
        );
        let v = parse(
            text(
                &hipfile(
                    &tmp,
                    false,
                    &[],
                    &["check", "--json", &format!("--lib={name}")],
                )
                .stdout,
            )
            .trim(),
        )
        .unwrap();
        assert_eq!(
            v.get("library").unwrap().get("found"),
            Some(&Value::Bool(false))
        );
        assert_eq!(v.get("exit_status").and_then(Value::as_f64), Some(2.0));
    }
    // A path that leads nowhere.
    let missing = tmp.join("libhipfile.so.0");
    let out = hipfile(
        &tmp,
        false,
        &[],
        &["check", &format!("--lib={}", missing.display())],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!(
            "hipfile: '{}' not found: no such file; give the path of an installed \
             libhipfile.so.0 (PREFIX/LIBDIR/libhipfile.so.0), or --lib alone for the one the \
             dynamic loader finds\n",
            missing.display()
        )
    );
    // A file that is not a library: it cannot be used (status 1), said once, the name once.
    let junk = tmp.join("junk.so");
    std::fs::write(&junk, b"not an ELF file").unwrap();
    let out = hipfile(
        &tmp,
        false,
        &[],
        &["check", &format!("--lib={}", junk.display())],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("hipfile: cannot load {}: ", junk.display())),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches(&*junk.display().to_string()).count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        text(&out.stdout),
        format!(
            "Library examined: none (--lib={} could not be loaded)\n\
             Result: this library cannot be used on this machine\n",
            junk.display()
        )
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Without a GPU runtime the check fails with one line, unless host-only is accepted.
#[test]
fn check_without_a_gpu_runtime_fails_unless_allowed() {
    let tmp = scratch("nogpu");
    // HIPFILE_PLATFORM=host: host-only on any machine.
    let env = [("HIPFILE_PLATFORM", "host")];
    let out = hipfile(&tmp, false, &env, &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "hipfile: no usable GPU runtime: the library would run host-only (HIPFILE_PLATFORM=host); \
         --allow-host-only accepts that\n"
    );
    assert!(text(&out.stdout)
        .ends_with("\nResult: the library CANNOT do GPU I/O on this machine (host-only)\n"));
    let out = hipfile(&tmp, false, &env, &["check", "--allow-host-only"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with(
        "\nResult: the library can do I/O on this machine, host memory only (host-only accepted)\n"
    ));
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `check` says which library it examined, and that --sim (not the user) chose the platform.
#[test]
fn check_names_the_library_and_the_sim_option() {
    let tmp = scratch("names");
    let out = hipfile(&tmp, true, &[], &["check"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_hipfile")).unwrap();
    assert!(
        stdout.starts_with(&format!(
            "Library examined: the copy built into this executable ({}, hipfile {}); \
             applications load libhipfile.so.0 instead: `hipfile check --lib` examines that one\n",
            exe.display(),
            env!("CARGO_PKG_VERSION")
        )),
        "{stdout}"
    );
    let sim = std::fs::canonicalize(hipsim()).unwrap();
    assert!(
        stdout.contains(&format!(
            "  chosen because:    --sim chose the simulated GPU runtime {} (the tool set \
             HIPFILE_PLATFORM=amd and HIPFILE_HIP_LIBRARY for it)\n",
            sim.display()
        )),
        "{stdout}"
    );
    let v = ok_json(&hipfile(&tmp, true, &[], &["check", "--json"]));
    let lib = v.get("library").unwrap();
    assert_eq!(s(lib, "examined"), Some("built-in"));
    assert_eq!(s(lib, "executable"), exe.to_str());
    assert!(s(&v, "reason")
        .unwrap()
        .starts_with("--sim chose the simulated GPU runtime"));
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// The cdylib cargo built beside the tests (`target/<profile>/deps/libhipfile.so`).
fn built_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe.parent().unwrap().join("libhipfile.so");
    assert!(p.is_file(), "{} was not built", p.display());
    p
}

/// `check --lib=PATH` examines that file in a child process, through its C API.
#[test]
fn check_lib_examines_an_installed_library() {
    let tmp = scratch("lib");
    let lib = built_library();
    let arg = format!("--lib={}", lib.display());
    let v = ok_json(&hipfile(&tmp, true, &[], &["check", "--json", &arg]));
    let l = v.get("library").unwrap();
    assert_eq!(s(l, "examined"), Some("installed"));
    assert_eq!(s(l, "file"), std::fs::canonicalize(&lib).unwrap().to_str());
    assert_eq!(s(l, "version"), Some("0.5.0"));
    assert_eq!(s(&v, "platform"), Some("amd"));
    assert!(
        s(&v, "runtime").unwrap().contains("simulated GPU runtime"),
        "{v:?}"
    );
    assert_eq!(s(&v, "self_test"), Some("passed"));
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the probe's temporary file and log are gone"
    );

    // The same library without a GPU runtime: host-only fails the check, one line.
    let out = hipfile(
        &tmp,
        false,
        &[("HIPFILE_PLATFORM", "host")],
        &["check", &arg],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "hipfile: {} found no usable GPU runtime and runs host-only",
            std::fs::canonicalize(&lib).unwrap().display()
        )) && stderr.ends_with("; --allow-host-only accepts that\n"),
        "{stderr}"
    );
    let out = hipfile(
        &tmp,
        false,
        &[("HIPFILE_PLATFORM", "host")],
        &["check", &arg, "--allow-host-only"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("  self-test:         passed"));

    // A library that does not exist: not found (status 2).
    let missing = tmp.join("libnothing.so");
    let out = hipfile(
        &tmp,
        true,
        &[],
        &["check", &format!("--lib={}", missing.display())],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("hipfile: '{}' not found: ", missing.display())),
        "{stderr}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}
