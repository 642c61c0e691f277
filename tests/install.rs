//! Installation: `scripts/install.sh --lib <the library built for the tests>
//! PREFIX` lays out what `cargo cinstall` lays out (library with its SONAME link and dev link,
//! both headers at the top of `include/`, `hipfile.pc`); a C program built with the flags
//! pkg-config gives for `hipfile` runs against it; and the installed `libhipfile.so.0` takes
//! over a program linked against another hipFile library through `LD_PRELOAD`.
//!
//! The library installed is the debug `target/<profile>/deps/libhipfile.so` (no release
//! build in CI), stripped as every installed binary is unless `--debug-info`. With `--tool`,
//! the tool and the simulator built beside it are installed without building anything, and
//! `PREFIX/bin/hipfile --sim` runs on the installed simulator. Children never inherit cargo's `LD_LIBRARY_PATH` (see tests/c_suite.rs): each
//! program loads exactly the library the test names.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::cc::CProgram;
use common::*;

/// `install-<pid>` under cargo's test scratch folder; those of processes that have exited (a
/// copy of the debug library each) are removed the first time.
fn work_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("install-") {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let d = base.join(format!("install-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
    .clone()
}

/// `bash scripts/install.sh ARGS` with cargo's environment for libraries removed.
fn install_sh(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/install.sh"))
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("DESTDIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("running bash scripts/install.sh")
}

/// The prefix the library was installed into (once per test process).
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let p = work_dir().join("prefix");
        let _ = std::fs::remove_dir_all(&p);
        let lib = libhipfile_path();
        let out = install_sh(
            &[
                "--lib",
                lib.to_str().unwrap(),
                "--libdir",
                "lib",
                p.to_str().unwrap(),
            ],
            &[],
        );
        println!("{}", ok(&out, "scripts/install.sh"));
        p
    })
}

fn have(prog: &str, arg: &str) -> bool {
    Command::new(prog)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Compile `src` to `exe` with `flags` before it and `libs` after it.
fn compile(src: &Path, exe: &Path, flags: &[String], libs: &[String]) {
    CProgram::new(src, exe).flags(flags).link(libs).build();
}

/// Run `exe` with no inherited LD_LIBRARY_PATH / LD_PRELOAD / hipfile variables, the
/// simulated runtime as the HIP library, and `env` added.
fn run_app(exe: &Path, env: &[(&str, &Path)]) -> String {
    let mut cmd = program(exe);
    cmd.env_remove("LD_PRELOAD")
        .env("HIPFILE_HIP_LIBRARY", hipsim_path())
        .env("HIPFILE_PLATFORM", "amd")
        .env("HIPFILE_LOG", "error");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the C program");
    ok(&out, &format!("{}", exe.display()))
}

/// The SONAME and DT_NEEDED entries of an ELF file (`None` without readelf).
fn dynamic(path: &Path) -> Option<(Option<String>, Vec<String>)> {
    let out = Command::new("readelf").arg("-d").arg(path).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let dynamic = stdout(&out);
    let value = |line: &str| {
        line.split_once('[')
            .and_then(|(_, r)| r.split_once(']'))
            .map(|(v, _)| v.to_string())
    };
    let soname = dynamic
        .lines()
        .find(|l| l.contains("(SONAME)"))
        .and_then(value);
    let needed = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(value)
        .collect();
    Some((soname, needed))
}

/// The section names of an ELF file (`None` without readelf).
fn sections(path: &Path) -> Option<Vec<String>> {
    let out = Command::new("readelf")
        .args(["-S", "-W"])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        stdout(&out)
            .lines()
            .filter_map(|l| {
                let (_, rest) = l.split_once(']')?;
                rest.split_whitespace().next().map(str::to_string)
            })
            .collect(),
    )
}

/// No symbol table and no debug information (a stripped binary), when readelf can tell.
fn assert_stripped(path: &Path) {
    let Some(names) = sections(path) else {
        println!(
            "not checking that {} is stripped: no readelf",
            path.display()
        );
        return;
    };
    assert!(
        names.iter().any(|n| n == ".dynsym"),
        "{}: {names:?}",
        path.display()
    );
    for gone in [".symtab", ".debug_info", ".debug_line"] {
        assert!(
            !names.iter().any(|n| n == gone),
            "{} is not stripped: it has {gone}",
            path.display()
        );
    }
}

/// PATH with a `cargo` in front that fails: install.sh run with it must build nothing (and so
/// fetch nothing).
fn path_where_cargo_fails() -> String {
    let d = work_dir().join("no-cargo");
    std::fs::create_dir_all(&d).unwrap();
    let cargo = d.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\necho \"cargo must not run: the build is there ($*)\" >&2\nexit 97\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        d.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `scripts/install.sh --lib <test library> --libdir lib --tool EXTRA... PREFIX` with a PATH
/// where cargo fails; the prefix.
fn install_with_tool(name: &str, extra: &[&str]) -> PathBuf {
    hipfile_tool();
    let p = work_dir().join(name);
    let _ = std::fs::remove_dir_all(&p);
    let lib = libhipfile_path();
    let mut args = vec!["--lib", lib.to_str().unwrap(), "--libdir", "lib", "--tool"];
    args.extend_from_slice(extra);
    args.push(p.to_str().unwrap());
    let path = path_where_cargo_fails();
    println!(
        "{}",
        ok(&install_sh(&args, &[("PATH", &path)]), "install.sh --tool")
    );
    p
}

#[test]
fn install_sh_tool_installs_a_tool_whose_sim_works_without_building() {
    let p = install_with_tool("tool", &[]);
    let (tool, sim) = (
        p.join("bin/hipfile"),
        p.join("libexec/hipfile/libhipsim.so"),
    );
    assert!(tool.is_file() && sim.is_file(), "{}", p.display());
    for f in [&tool, &sim] {
        assert_stripped(f);
    }

    // The installed tool finds the installed simulator: --sim as documented.
    let tmp = work_dir().join("tool-tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new(&tool);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&*k);
        }
    }
    let out = cmd
        .args(["--sim", "check", "--json"])
        .env_remove("LD_LIBRARY_PATH")
        .env("HIPFILE_LOG", "error")
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let json = ok(&out, "PREFIX/bin/hipfile --sim check --json");
    assert!(json.contains("\"simulated\":true"), "{json}");
    let installed_sim = std::fs::canonicalize(&sim).unwrap();
    assert!(
        json.contains(&format!(
            "--sim chose the simulated GPU runtime {}",
            installed_sim.display()
        )),
        "{json}"
    );
    assert!(json.contains("\"ok\":true"), "{json}");
}

#[test]
fn install_sh_debug_info_installs_the_binaries_as_built() {
    let p = install_with_tool("debug-info", &["--debug-info"]);
    let tool = hipfile_tool().to_path_buf();
    let deps = deps_dir();
    for (installed, built) in [
        (p.join("lib/libhipfile.so.0.5.0"), libhipfile_path()),
        (p.join("lib/libcufile.so.0"), deps.join("libcufile.so")),
        (p.join("bin/hipfile"), tool.clone()),
    ] {
        assert!(
            std::fs::read(&installed).unwrap() == std::fs::read(&built).unwrap(),
            "{} is {} as built",
            installed.display(),
            built.display()
        );
    }
    if let Some(names) = sections(&p.join("bin/hipfile")) {
        assert!(names.iter().any(|n| n == ".debug_info"), "{names:?}");
    }
}

#[test]
fn install_sh_help_documents_the_tool_and_debug_info() {
    let out = install_sh(&["--help"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let help = stderr(&out);
    for needle in [
        "--debug-info",
        "STRIP",
        "PREFIX/libexec/hipfile/libhipsim.so",
        "never updates the crates.io index",
    ] {
        assert!(help.contains(needle), "{needle} not in:\n{help}");
    }
}

#[test]
fn install_lays_out_library_headers_and_pkg_config() {
    let p = prefix();
    let lib = p.join("lib");
    let real = lib.join("libhipfile.so.0.5.0");
    assert!(
        std::fs::symlink_metadata(&real).unwrap().is_file(),
        "the real file"
    );
    for link in ["libhipfile.so.0", "libhipfile.so"] {
        assert_eq!(
            std::fs::read_link(lib.join(link)).unwrap(),
            Path::new("libhipfile.so.0.5.0"),
            "{link} is a relative link to the real file"
        );
    }
    if let Some((soname, _)) = dynamic(&real) {
        assert_eq!(soname.as_deref(), Some("libhipfile.so.0"));
    }
    assert_stripped(&real);
    assert_stripped(&lib.join("libcufile.so.0"));
    for h in ["hipfile.h", "hipfile-stats.h"] {
        assert_eq!(
            std::fs::read(p.join("include").join(h)).unwrap(),
            std::fs::read(repo_root().join("include").join(h)).unwrap(),
            "include/{h} at the top of include/"
        );
    }
    // The tool's manual pages, as doc/man/ has them.
    let mut pages = 0;
    for page in std::fs::read_dir(repo_root().join("doc/man")).unwrap() {
        let page = page.unwrap().path();
        let installed = p.join("share/man/man1").join(page.file_name().unwrap());
        assert_eq!(
            std::fs::read(&installed).unwrap(),
            std::fs::read(&page).unwrap(),
            "{} installed",
            installed.display()
        );
        pages += 1;
    }
    assert_eq!(pages, 5, "hipfile.1 and one page per subcommand");
    let pc = std::fs::read_to_string(lib.join("pkgconfig/hipfile.pc")).unwrap();
    for line in [
        format!("prefix={}", p.display()),
        "Name: hipfile".to_string(),
        "Version: 0.5.0".to_string(),
        "Libs: -L${libdir} -lhipfile".to_string(),
        "Cflags: -I${includedir}".to_string(),
    ] {
        assert!(
            pc.lines().any(|l| l == line),
            "{line:?} not in hipfile.pc:\n{pc}"
        );
    }
    if !have("pkg-config", "--version") {
        skipped("install.sh's pkg-config queries: pkg-config is not installed");
        return;
    }
    let pkg = |arg: &str| {
        let out = Command::new("pkg-config")
            .args([arg, "hipfile"])
            .env("PKG_CONFIG_PATH", lib.join("pkgconfig"))
            .output()
            .unwrap();
        ok(&out, &format!("pkg-config {arg} hipfile"))
            .trim()
            .to_string()
    };
    assert_eq!(pkg("--modversion"), "0.5.0");
    assert_eq!(
        pkg("--cflags"),
        format!("-I{}", p.join("include").display())
    );
    assert_eq!(pkg("--libs"), format!("-L{} -lhipfile", lib.display()));
}

#[test]
fn program_built_with_pkg_config_runs_against_the_installed_library() {
    let p = prefix();
    let lib = p.join("lib");
    let flags: Vec<String> = if have("pkg-config", "--version") {
        let out = Command::new("pkg-config")
            .args(["--cflags", "--libs", "hipfile"])
            .env("PKG_CONFIG_PATH", lib.join("pkgconfig"))
            .output()
            .unwrap();
        ok(&out, "pkg-config --cflags --libs hipfile")
            .split_whitespace()
            .map(str::to_string)
            .collect()
    } else {
        println!(
            "skipping pkg-config (not installed): building with -I{0}/include -L{0}/lib -lhipfile",
            p.display()
        );
        vec![
            format!("-I{}", p.join("include").display()),
            format!("-L{}", lib.display()),
            "-lhipfile".to_string(),
        ]
    };
    let exe = work_dir().join("app");
    compile(
        &repo_root().join("tests/c/preload_app.c"),
        &exe,
        &[],
        &flags,
    );
    if let Some((_, needed)) = dynamic(&exe) {
        assert!(
            needed.iter().any(|n| n == "libhipfile.so.0"),
            "the program records the SONAME: {needed:?}"
        );
    }
    let out = run_app(&exe, &[("LD_LIBRARY_PATH", &lib)]);
    println!("{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "version 0.5.0 err 0",
            "open err 0 use_count 1",
            "close err 0 use_count 0"
        ],
        "{out}"
    );
}

#[test]
fn ld_preload_replaces_another_hipfile_library() {
    let p = prefix();
    let dir = work_dir().join("stub");
    std::fs::create_dir_all(&dir).unwrap();
    let include = format!("-I{}", repo_root().join("include").display());
    let stub = dir.join("libhipfile_stub.so");
    compile(
        &repo_root().join("tests/c/preload_stub.c"),
        &stub,
        &[
            "-shared".to_string(),
            "-fPIC".to_string(),
            "-Wl,-soname,libhipfile_stub.so".to_string(),
            include.clone(),
        ],
        &[],
    );
    let exe = dir.join("preload_app");
    compile(
        &repo_root().join("tests/c/preload_app.c"),
        &exe,
        &[include],
        &[
            format!("-L{}", dir.display()),
            "-lhipfile_stub".to_string(),
            format!("-Wl,-rpath,{}", dir.display()),
        ],
    );

    // Plain: the stand-in answers.
    let out = run_app(&exe, &[]);
    println!("plain:\n{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["version 9.9.9 err 0", "open err 5030 use_count -1"],
        "{out}"
    );

    // Our installed library in front: every hipFile symbol is ours.
    let ours = p.join("lib/libhipfile.so.0");
    let out = run_app(&exe, &[("LD_PRELOAD", &ours)]);
    println!("LD_PRELOAD={}:\n{out}", ours.display());
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "version 0.5.0 err 0",
            "open err 0 use_count 1",
            "close err 0 use_count 0"
        ],
        "{out}"
    );
}

#[test]
fn install_sh_refuses_a_library_with_another_soname() {
    if dynamic(&hipsim_path()).is_none() {
        skipped("install_sh_refuses_a_library_with_another_soname: readelf is not installed");
        return;
    }
    let p = work_dir().join("wrong");
    let out = install_sh(
        &[
            "--lib",
            hipsim_path().to_str().unwrap(),
            p.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("expected libhipfile.so.0"),
        "{}",
        stderr(&out)
    );
    assert!(!p.join("lib/libhipfile.so.0.5.0").exists());
}

#[test]
fn install_sh_stages_under_destdir() {
    let stage = work_dir().join("stage");
    let _ = std::fs::remove_dir_all(&stage);
    let lib = libhipfile_path();
    let out = install_sh(
        &[
            "--lib",
            lib.to_str().unwrap(),
            "--libdir",
            "lib64",
            "/opt/hipfile",
        ],
        &[("DESTDIR", stage.to_str().unwrap())],
    );
    ok(&out, "install.sh with DESTDIR");
    let base = stage.join("opt/hipfile");
    assert!(base.join("lib64/libhipfile.so.0.5.0").is_file());
    assert!(base.join("include/hipfile.h").is_file());
    let pc = std::fs::read_to_string(base.join("lib64/pkgconfig/hipfile.pc")).unwrap();
    assert!(pc.lines().any(|l| l == "prefix=/opt/hipfile"), "{pc}");
    assert!(pc.lines().any(|l| l == "libdir=${prefix}/lib64"), "{pc}");
    std::fs::remove_dir_all(&stage).unwrap();
}
