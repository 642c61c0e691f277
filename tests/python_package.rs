//! AMD's own `hipfile` Python package, unchanged, against our library on the simulated GPU.
//!
//! In a virtual environment it creates, the test installs pinned build tools from the Python
//! package registry, builds the registry's `hipfile` sdist (pinned) against our
//! `include/hipfile.h` and our `libhipfile.so` as `scripts/install.sh` installs it (the package's
//! CMake options `HIPFILE_INCLUDE_DIR`, `HIPFILE_LIBRARY`, `HIP_INCLUDE_DIR`; the HIP headers are
//! Debian's `libamdhip64-dev`), then runs `tests/python/hipfile_package.py` with
//! `libamdhip64.so` and `libamdhip64.so.7` resolving to `libhipsim.so`: the package's ctypes
//! helper loads the first, our library's auxiliary filter the second, and our library finds that
//! runtime already loaded (no `HIPFILE_HIP_LIBRARY`). The script covers version and use count,
//! open/close and the context manager, file and `hipMalloc` buffer registration, 8 MiB written
//! and read back byte-exact at unaligned offsets, errors as `HipFileException` with our codes,
//! properties, and async I/O on a registered stream (a write and a read of the same bytes
//! queued back to back, their `bytes_done` after the stream synchronised, the bytes on the
//! device and in the file).
//!
//! Without a HIP runtime behind `libamdhip64.so.7` the package's extension does not import
//! (`undefined symbol: hipPeekAtLastError`): it takes HIP symbols through libhipfile's
//! dependencies. The test checks that too.
//!
//! The package is never copied into the repository. When the registry cannot be reached, the
//! test skips: it says so on standard error (past cargo's capture) and in
//! `target/tmp/python_package.skipped`, which `.ci/run` prints. Every other failure fails.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

/// The package, as published on the registry.
const PACKAGE: &str = "hipfile";
const PACKAGE_VERSION: &str = "0.4.0.dev0";
/// Its build requirements (scikit-build-core with its dependencies, Cython, CMake, Ninja),
/// pinned; installed into the environment, which builds without isolation.
const BUILD_TOOLS: &[&str] = &[
    "cython==3.3.1",
    "scikit-build-core==1.1.2",
    "packaging==26.4",
    "pathspec==1.1.1",
    "cmake==4.4.5",
    "ninja==1.13.2",
];
/// Debian's `libamdhip64-dev` puts `hip/hip_runtime_api.h` here.
const HIP_INCLUDE_DIR: &str = "/usr/include";

/// Where `.ci/run` looks for the reason of a skip.
fn skip_note() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("python_package.skipped")
}

/// Say it past cargo's output capture (straight to file descriptor 2) and leave the note.
fn skip(reason: &str) {
    let line = format!("python_package: SKIPPED: {reason}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    std::fs::write(skip_note(), &line).unwrap();
}

/// A command with none of cargo's library paths and none of our or the simulator's settings.
fn clean(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("HIPFILE_") || k.starts_with("HIPSIM_") {
            cmd.env_remove(&*k);
        }
    }
    cmd.env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME");
    cmd
}

struct Venv {
    dir: PathBuf,
}

impl Venv {
    fn create(dir: &Path) -> Venv {
        let out = clean("python3")
            .args(["-m", "venv"])
            .arg(dir)
            .output()
            .expect("running python3 (install python3, python3-venv and python3-dev)");
        ok(
            &out,
            "python3 -m venv (install python3-venv and python3-dev)",
        );
        Venv {
            dir: dir.to_path_buf(),
        }
    }

    fn python(&self) -> PathBuf {
        self.dir.join("bin/python")
    }

    /// `python ARGS` as an activated environment runs it (its `bin/` first on PATH, where the
    /// package's CMake looks for `cython`).
    fn run(&self) -> Command {
        let mut cmd = clean(self.python());
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", self.dir.join("bin").display()))
            .env("VIRTUAL_ENV", &self.dir)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env("PIP_NO_INPUT", "1");
        cmd
    }

    fn pip(&self, args: &[&str]) -> Output {
        self.run()
            .args(["-m", "pip"])
            .args(args)
            .output()
            .expect("running pip")
    }

    /// The versions the registry lists for `name` (`None` when it lists none or cannot be
    /// reached: pip reports both alike).
    fn listed_versions(&self, name: &str) -> Option<String> {
        let out = self.pip(&[
            "index",
            "versions",
            "--pre",
            "--timeout",
            "20",
            "--retries",
            "1",
            name,
        ]);
        let s = text(&out);
        s.lines()
            .find_map(|l| l.trim().strip_prefix("Available versions:"))
            .map(|v| v.trim().to_string())
            .filter(|_| out.status.success())
    }
}

/// Our library as a user installs it: `scripts/install.sh --libdir lib PREFIX`.
fn install_library(prefix: &Path) -> PathBuf {
    let out = clean("bash")
        .arg(repo_root().join("scripts/install.sh"))
        .args(["--lib", libhipfile_path().to_str().unwrap()])
        .args(["--libdir", "lib"])
        .arg(prefix)
        .env_remove("DESTDIR")
        .output()
        .expect("running scripts/install.sh");
    ok(&out, "scripts/install.sh");
    prefix.join("lib")
}

/// `libamdhip64.so` (what the package's ctypes helper loads) and `libamdhip64.so.7` (our
/// auxiliary filter) as links to the simulator.
fn simulated_hip_dir(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for name in ["libamdhip64.so", "libamdhip64.so.7"] {
        std::os::unix::fs::symlink(hipsim_path(), dir.join(name)).unwrap();
    }
    dir.to_path_buf()
}

/// Whether the system's loader knows a real `libamdhip64.so.7` (a ROCm 7 machine).
fn system_has_rocm7() -> bool {
    Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|o| stdout(&o).contains("libamdhip64.so.7 "))
}

#[test]
fn amd_hipfile_package_runs_unchanged_on_the_simulator() {
    let _ = std::fs::remove_file(skip_note());
    if !Path::new(HIP_INCLUDE_DIR)
        .join("hip/hip_runtime_api.h")
        .exists()
    {
        assert!(
            std::env::var("HIPFILE_REQUIRE_HIP_HEADERS").as_deref() != Ok("1"),
            "{HIP_INCLUDE_DIR}/hip/hip_runtime_api.h is missing but HIPFILE_REQUIRE_HIP_HEADERS=1: install libamdhip64-dev"
        );
        skip("libamdhip64-dev is not installed (the package's build needs hip/hip_runtime_api.h)");
        return;
    }

    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-package");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let venv = Venv::create(&work.join("venv"));
    println!(
        "{}",
        ok(
            &venv.run().arg("--version").output().unwrap(),
            "python --version"
        )
        .trim()
    );

    // The registry: reachable when it lists pip itself; then it must list our pinned version.
    if venv.listed_versions("pip").is_none() {
        skip("the Python package registry cannot be reached (`pip index versions pip` lists nothing)");
        return;
    }
    let versions = venv.listed_versions(PACKAGE).unwrap_or_default();
    assert!(
        versions.split(", ").any(|v| v == PACKAGE_VERSION),
        "the registry is reachable but does not list {PACKAGE} {PACKAGE_VERSION} (it lists: {versions:?})"
    );

    let mut install = vec!["install", "--no-cache-dir"];
    install.extend_from_slice(BUILD_TOOLS);
    ok(&venv.pip(&install), "pip install (build tools)");

    let libdir = install_library(&work.join("prefix"));
    let include = repo_root().join("include");
    let hipfile_library = libdir.join("libhipfile.so");
    let defines = [
        format!("cmake.define.HIPFILE_INCLUDE_DIR={}", include.display()),
        format!("cmake.define.HIPFILE_LIBRARY={}", hipfile_library.display()),
        format!("cmake.define.HIP_INCLUDE_DIR={HIP_INCLUDE_DIR}"),
    ];
    let requirement = format!("{PACKAGE}=={PACKAGE_VERSION}");
    let mut build = vec![
        "install",
        "--no-cache-dir",
        "--no-build-isolation",
        "--no-deps",
        "--no-binary",
        PACKAGE,
    ];
    for d in &defines {
        build.extend_from_slice(&["-C", d]);
    }
    build.push(&requirement);
    ok(&venv.pip(&build), "pip install hipfile (sdist build)");
    let freeze = ok(&venv.pip(&["freeze", "--all"]), "pip freeze");
    println!("built with:\n{freeze}");
    for pin in BUILD_TOOLS.iter().copied().chain([requirement.as_str()]) {
        assert!(
            freeze
                .lines()
                .any(|l| l.replace('_', "-").eq_ignore_ascii_case(pin)),
            "{pin} is not what the environment holds:\n{freeze}"
        );
    }

    let sim = simulated_hip_dir(&work.join("sim"));
    let scratch = work.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let ld_path = format!("{}:{}", libdir.display(), sim.display());
    let out = venv
        .run()
        .arg(repo_root().join("tests/python/hipfile_package.py"))
        .arg(&scratch)
        .env("LD_LIBRARY_PATH", &ld_path)
        .env("HIPFILE_LOG", "info")
        .env("HIPFILE_CHUNK_SIZE", "2M")
        .env("HIPFILE_BOUNCE_BUDGET", "64M")
        .output()
        .expect("running the script");
    let stdout = ok(&out, "tests/python/hipfile_package.py");
    println!("{stdout}");
    assert_eq!(stdout.lines().last(), Some("all checks passed"));
    let log = stderr(&out);
    let platform = log
        .lines()
        .find(|l| l.contains("platform amd:"))
        .unwrap_or_else(|| panic!("no platform line in the log:\n{log}"));
    assert!(
        platform.contains("(simulated GPU runtime)")
            && platform.ends_with("(already loaded in the process)"),
        "our library found the simulator the filter loaded: {platform}"
    );

    // The first script of docs/python.md, as a reader runs it: in a directory of its own, with
    // the library's and the simulator's directories on the library path and nothing else.
    let example_dir = work.join("docs-example");
    std::fs::create_dir_all(&example_dir).unwrap();
    std::fs::write(example_dir.join("example.py"), docs_example()).unwrap();
    let out = venv
        .run()
        .arg("example.py")
        .current_dir(&example_dir)
        .env("LD_LIBRARY_PATH", &ld_path)
        .output()
        .expect("running docs/python.md's example");
    let stdout = ok(&out, "docs/python.md's example.py");
    assert_eq!(
        stdout.trim(),
        "8388608 bytes through GPU memory, copy identical",
        "docs/python.md's example:\n{}",
        text(&out)
    );

    // The same package without a HIP runtime behind libamdhip64.so.7: the import fails as
    // AMD's library would fail to load there.
    if system_has_rocm7() {
        println!("not checking the import without a runtime: this machine has libamdhip64.so.7");
        return;
    }
    let out = venv
        .run()
        .args(["-c", "import hipfile"])
        .env("LD_LIBRARY_PATH", &libdir)
        .output()
        .unwrap();
    assert!(!out.status.success(), "imported without a HIP runtime");
    let err = stderr(&out);
    assert!(
        err.contains("undefined symbol: hipPeekAtLastError"),
        "without a runtime: {err}"
    );
    println!(
        "without a HIP runtime: {}",
        err.trim().lines().last().unwrap_or("")
    );
}

/// The `example.py` block of docs/python.md (the one marked `<!-- doctest: file example.py -->`).
fn docs_example() -> String {
    let page = std::fs::read_to_string(repo_root().join("docs/python.md")).unwrap();
    let marker = "<!-- doctest: file example.py -->\n```python\n";
    let start = page
        .find(marker)
        .expect("docs/python.md has no example.py block")
        + marker.len();
    let end = page[start..].find("```").unwrap();
    page[start..start + end].to_string()
}

/// docs/python.md gives the reader this test's recipe: the same pinned build tools, the same
/// package version, the same build options. (Without the registry, this is what still checks
/// the page; with it, the test above also runs the page's example.)
#[test]
fn docs_python_md_gives_this_recipe() {
    let page = std::fs::read_to_string(repo_root().join("docs/python.md")).unwrap();
    let mut wanted: Vec<String> = BUILD_TOOLS.iter().map(|s| s.to_string()).collect();
    wanted.push(format!("{PACKAGE}=={PACKAGE_VERSION}"));
    for define in ["HIPFILE_INCLUDE_DIR", "HIPFILE_LIBRARY", "HIP_INCLUDE_DIR"] {
        wanted.push(format!("-C cmake.define.{define}="));
    }
    for flag in ["--no-build-isolation", "--no-deps", "--no-binary hipfile"] {
        wanted.push(flag.to_string());
    }
    // The simulator under both names the package and the filter look for.
    wanted.push("sim/libamdhip64.so\n".to_string());
    wanted.push("sim/libamdhip64.so.7\n".to_string());
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|w| !page.contains(w.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/python.md does not give the recipe of this test: {missing:?}"
    );
    assert!(docs_example().contains("hipfile.FileHandle("));
}
