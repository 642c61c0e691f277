//! `include/cufile.h` declares exactly NVIDIA's cuFile C ABI at API level 1.19, in C and C++.
//!
//! Builds and runs `tests/c/cufile_abi_asserts.c` (static assertions on every macro, status,
//! enum value and size, structure tag, size, alignment, member offset, size and type, and every
//! function type; run-time checks of the status messages and macros):
//! - against our header: strict C11 (`-pedantic`, the header's own CUDA types), GNU C11 and
//!   C++17; with a minimal `cuda.h` included before it, after it, or only found on the include
//!   path (the header then uses it, as NVIDIA's header does);
//! - against NVIDIA's own `cufile.h` from the `nvidia-cufile` wheel of the Python package
//!   registry, with the real `cuda.h` from the `nvidia-cuda-runtime` wheel (and ours with that
//!   `cuda.h` too). The wheels are pinned by version and SHA-256 and downloaded with
//!   `pip download --no-deps` into this test's temporary directory, never into the repository.
//!   When the registry cannot be reached these tests skip, saying so on standard error and in
//!   `target/tmp/cufile_header.skipped` (which `.ci/run` prints), unless
//!   `HIPFILE_REQUIRE_NVIDIA_CUFILE=1`, which makes a skip a failure.
//!
//! Also: C and C++ translation units that use the header the way consumers do compile
//! warning-free; `tests/cufile-exported-symbols.txt` (what `nm -D --defined-only` of the future
//! `libcufile.so.0` must print) equals the set of functions our header declares, and NVIDIA's
//! header declares the same set; NVIDIA's library exports exactly that set plus its ten
//! undocumented internal helpers; no comment of NVIDIA's header appears in ours; and the one
//! Rust definition of the cuFile types (`crates/cufile/abi`) has the header's sizes, offsets
//! and values.

mod common;

use common::cc::{out_dir, root, run, text};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// NVIDIA's cuFile 1.19.1 (`cuFileGetVersion()` == 1190, the API level `include/cufile.h`
/// declares); its `cufile.h` is byte-identical to 1.20.0's.
const CUFILE_WHEEL: Wheel = Wheel {
    package: "nvidia-cufile",
    version: "1.19.1.55",
    file_prefix: "nvidia_cufile-1.19.1.55-",
    sha256: "971a830d6ad3e160b52085c7340abd3a683e477b8995de9ff8b7912b4138f319",
    members: &[
        "nvidia/cu13/include/cufile.h",
        "nvidia/cu13/lib/libcufile.so.0",
    ],
};
const CUFILE_HEADER_SHA256: &str =
    "e9314020f95a8f806d1884b6ded4462ce2daba3fcde050925ab7afdf4e9c3674";

/// The CUDA 13 runtime wheel, for its `cuda.h` (NVIDIA's `cufile.h` includes it).
const CUDA_RUNTIME_WHEEL: Wheel = Wheel {
    package: "nvidia-cuda-runtime",
    version: "13.5.37",
    file_prefix: "nvidia_cuda_runtime-13.5.37-",
    sha256: "df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d",
    members: &["nvidia/cu13/include/cuda.h"],
};

/// Exports of NVIDIA's 1.19.1 library that no header declares (internal helpers of its
/// stream path; no consumer uses them, and ours does not export them).
const NVIDIA_UNDOCUMENTED_EXPORTS: &[&str] = &[
    "cuFileCopyGpu",
    "cuFileCopyGpuPosixIORetry",
    "cuFileCopyGpuWrap",
    "cuFileCopyGpuWrapPosixIORetry",
    "cuFileGpuWaitValue32",
    "cuFileInlineGpu",
    "cuFileSparseGpu",
    "cuFileStreamHandleInline",
    "cuFileStreamHandleSparse",
    "cuFileStreamWaitValue32",
];

const C_STRICT: &[&str] = &[
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-Wundef",
    "-Wstrict-prototypes",
];
/// glibc declares `loff_t` (the type NVIDIA spells) only outside strict ISO modes.
const C_GNU: &[&str] = &[
    "-std=gnu11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-DCUFILE_ABI_HAVE_LOFF_T",
];
const CXX: &[&str] = &[
    "-x",
    "c++",
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-Wundef",
    "-DCUFILE_ABI_HAVE_LOFF_T",
];

/// NVIDIA's header needs looser flags than ours: it opens with `#if __cplusplus` (-Wundef),
/// its `IS_CUFILE_ERR`/`CUFILE_ERRSTR` pass an `ssize_t` to `abs()` (-Wabsolute-value, part of
/// C's -Wextra), it needs glibc's `loff_t` (not in strict ISO C), and the real `cuda.h` is not
/// `-pedantic`-clean (an enumerator `1 << 31`).
const NVIDIA_C: &[&str] = &[
    "-std=gnu11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-absolute-value",
    "-DCUFILE_ABI_HAVE_LOFF_T",
];
const NVIDIA_CXX: &[&str] = &[
    "-x",
    "c++",
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-DCUFILE_ABI_HAVE_LOFF_T",
];

/// The stand-in `cuda.h` of the offline cases: guard, includes and the two types as the real
/// header has them, plus a second enumerator so that a clash with our stand-in cannot pass.
const MINIMAL_CUDA_H: &str = "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n\
#include <stdlib.h>\n#include <stdint.h>\n\
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 } CUresult;\n\
typedef struct CUstream_st *CUstream;\n#endif\n";

struct Wheel {
    package: &'static str,
    version: &'static str,
    file_prefix: &'static str,
    sha256: &'static str,
    members: &'static [&'static str],
}

fn ok(output: &Output, what: &str) -> String {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}",
        output.status,
        text(output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn sha256(path: &Path) -> String {
    let mut command = Command::new("sha256sum");
    command.arg(path);
    let out = ok(&run(command), "sha256sum");
    out.split_whitespace().next().unwrap_or_default().to_owned()
}

/// A directory holding only a minimal `cuda.h`.
fn minimal_cuda_dir() -> PathBuf {
    let dir = out_dir("cufile_header").join("minimal-cuda");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cuda.h"), MINIMAL_CUDA_H).unwrap();
    dir
}

/// Whether the compiler finds a `cuda.h` of its own (a CUDA toolkit on the default include
/// path); our header then uses it instead of its stand-ins.
fn system_has_cuda_h() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let source = out_dir("cufile_header").join("probe_cuda_h.c");
        std::fs::write(&source, "#include <cuda.h>\n").unwrap();
        let mut command = Command::new("gcc");
        command.args(["-fsyntax-only"]).arg(&source);
        run(command).status.success()
    })
}

/// The mode flag for "no cuda.h beyond what the command line adds".
fn expect_default_cuda() -> &'static str {
    if system_has_cuda_h() {
        println!(
            "note: a cuda.h is on the compiler's default include path; expecting it to be used"
        );
        "-DCUFILE_ABI_EXPECT_CUDA_H"
    } else {
        "-DCUFILE_ABI_EXPECT_STAND_IN"
    }
}

/// Builds `tests/c/cufile_abi_asserts.c` with `compiler`, `flags` and the include directories
/// (in order) into `exe`, runs it and expects exactly "cufile abi ok".
fn build_and_run(compiler: &str, flags: &[&str], includes: &[&Path], exe: &str) {
    let exe = out_dir("cufile_header").join(exe);
    let mut build = Command::new(compiler);
    build.args(flags);
    for dir in includes {
        build.arg("-I").arg(dir);
    }
    build
        .arg(root().join("tests/c/cufile_abi_asserts.c"))
        .arg("-o")
        .arg(&exe);
    common::cc::build_and_run(
        build,
        "tests/c/cufile_abi_asserts.c",
        exe.as_ref(),
        "cufile abi ok\n",
    );
}

fn our_include() -> PathBuf {
    root().join("include")
}

#[test]
fn ours_in_strict_c11_with_its_own_cuda_types() {
    let flags = [C_STRICT, &[expect_default_cuda()]].concat();
    build_and_run("gcc", &flags, &[&our_include()], "ours_c11");
}

#[test]
fn ours_in_gnu_c11_and_cxx17() {
    let mode = expect_default_cuda();
    build_and_run(
        "gcc",
        &[C_GNU, &[mode]].concat(),
        &[&our_include()],
        "ours_gnu11",
    );
    build_and_run(
        "g++",
        &[CXX, &[mode]].concat(),
        &[&our_include()],
        "ours_cxx17",
    );
}

#[test]
fn ours_with_a_cuda_h_before_after_or_only_on_the_path() {
    let cuda = minimal_cuda_dir();
    let include = our_include();
    let dirs: [&Path; 2] = [&include, &cuda];
    for (mode, name) in [
        ("-DCUFILE_ABI_INCLUDE_CUDA_FIRST", "first"),
        ("-DCUFILE_ABI_INCLUDE_CUDA_AFTER", "after"),
        ("-DCUFILE_ABI_EXPECT_CUDA_H", "found"),
    ] {
        let extra = [mode, "-DCUFILE_ABI_EXPECT_CUDA_H"];
        build_and_run(
            "gcc",
            &[C_STRICT, &extra].concat(),
            &dirs,
            &format!("ours_c11_cuda_{name}"),
        );
        build_and_run(
            "g++",
            &[CXX, &extra].concat(),
            &dirs,
            &format!("ours_cxx17_cuda_{name}"),
        );
    }
}

/// Where `.ci/run` looks for the reason of a skip.
fn skip_note() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cufile_header.skipped")
}

/// Says it past cargo's output capture (straight to standard error) and leaves the note;
/// with `HIPFILE_REQUIRE_NVIDIA_CUFILE=1` a skip is a failure.
fn skip(reason: &str) {
    assert!(
        std::env::var("HIPFILE_REQUIRE_NVIDIA_CUFILE").as_deref() != Ok("1"),
        "HIPFILE_REQUIRE_NVIDIA_CUFILE=1 but NVIDIA's header cannot be tested: {reason}"
    );
    let line = format!("cufile_header: SKIPPED the comparison with NVIDIA's cufile.h: {reason}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    std::fs::write(skip_note(), &line).unwrap();
}

/// `python3 -m pip`, or the pip of a virtual environment made for the purpose where the
/// system's Python has none (Debian without python3-pip).
fn pip() -> Command {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    let python = PYTHON.get_or_init(|| {
        let mut probe = Command::new("python3");
        probe.args(["-m", "pip", "--version"]);
        if run(probe).status.success() {
            return PathBuf::from("python3");
        }
        let venv = out_dir("cufile_header").join("venv");
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(&venv);
        ok(
            &run(create),
            "python3 -m venv (install python3-pip or python3-venv)",
        );
        venv.join("bin/python")
    });
    let mut command = Command::new(python);
    command
        .args(["-m", "pip"])
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_NO_INPUT", "1");
    command
}

/// Whether the registry answers at all: it lists versions of `package`.
fn registry_lists(package: &str) -> bool {
    let mut command = pip();
    command.args([
        "index",
        "versions",
        "--timeout",
        "20",
        "--retries",
        "1",
        package,
    ]);
    let out = run(command);
    out.status.success() && text(&out).contains("Available versions:")
}

/// The wheel's members, extracted under `dir`; `None` when the registry cannot be reached.
fn fetch(wheel: &Wheel, dir: &Path) -> Option<()> {
    std::fs::create_dir_all(dir).unwrap();
    let find = || {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(wheel.file_prefix) && n.ends_with(".whl"))
            })
    };
    let file = match find() {
        Some(file) => file,
        None => {
            let mut command = pip();
            command
                .args(["download", "--no-deps", "--only-binary=:all:"])
                .args(["--timeout", "20", "--retries", "1", "--dest"])
                .arg(dir)
                .arg(format!("{}=={}", wheel.package, wheel.version));
            let out = run(command);
            if !out.status.success() {
                if !registry_lists(wheel.package) {
                    return None;
                }
                panic!(
                    "the registry answers but `pip download {}=={}` failed:\n{}",
                    wheel.package,
                    wheel.version,
                    text(&out)
                );
            }
            find().expect("pip download left no wheel")
        }
    };
    assert_eq!(
        sha256(&file),
        wheel.sha256,
        "{} is not the pinned wheel",
        file.display()
    );
    let mut extract = Command::new("python3");
    extract
        .args([
            "-c",
            "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
             [z.extract(m, sys.argv[2]) for m in sys.argv[3:]]",
        ])
        .arg(&file)
        .arg(dir)
        .args(wheel.members);
    ok(&run(extract), "extracting the wheel");
    Some(())
}

struct Nvidia {
    /// Holds NVIDIA's `cufile.h`.
    cufile_include: PathBuf,
    /// Holds the real `cuda.h`.
    cuda_include: PathBuf,
    /// NVIDIA's `libcufile.so.0`.
    library: PathBuf,
}

/// NVIDIA's files, fetched once per test binary; `None` (after a skip note) when the
/// registry cannot be reached.
fn nvidia() -> Option<&'static Nvidia> {
    static FETCHED: OnceLock<Option<Nvidia>> = OnceLock::new();
    let fetched = FETCHED.get_or_init(|| {
        let _ = std::fs::remove_file(skip_note());
        let cufile_dir = out_dir("cufile_header").join("wheel-nvidia-cufile");
        let cuda_dir = out_dir("cufile_header").join("wheel-nvidia-cuda-runtime");
        if fetch(&CUFILE_WHEEL, &cufile_dir).is_none()
            || fetch(&CUDA_RUNTIME_WHEEL, &cuda_dir).is_none()
        {
            return None;
        }
        let fetched = Nvidia {
            cufile_include: cufile_dir.join("nvidia/cu13/include"),
            cuda_include: cuda_dir.join("nvidia/cu13/include"),
            library: cufile_dir.join("nvidia/cu13/lib/libcufile.so.0"),
        };
        assert_eq!(
            sha256(&fetched.cufile_include.join("cufile.h")),
            CUFILE_HEADER_SHA256,
            "NVIDIA's cufile.h is not the 1.19.1/1.20.0 header"
        );
        Some(fetched)
    });
    if fetched.is_none() {
        skip("the Python package registry cannot be reached (pip download and pip index failed)");
    }
    fetched.as_ref()
}

#[test]
fn nvidia_header_passes_the_same_asserts() {
    let Some(nvidia) = nvidia() else { return };
    let dirs: [&Path; 2] = [&nvidia.cufile_include, &nvidia.cuda_include];
    let mode = ["-DCUFILE_ABI_EXPECT_CUDA_H"];
    build_and_run("gcc", &[NVIDIA_C, &mode].concat(), &dirs, "nvidia_gnu11");
    build_and_run("g++", &[NVIDIA_CXX, &mode].concat(), &dirs, "nvidia_cxx17");
}

#[test]
fn ours_with_the_real_cuda_h() {
    let Some(nvidia) = nvidia() else { return };
    let include = our_include();
    let dirs: [&Path; 2] = [&include, &nvidia.cuda_include];
    // The real cuda.h is not -pedantic-clean; everything else stays as strict as for ours.
    let c: Vec<&str> = C_STRICT
        .iter()
        .copied()
        .filter(|f| *f != "-pedantic")
        .collect();
    let cxx: Vec<&str> = CXX.iter().copied().filter(|f| *f != "-pedantic").collect();
    for (mode, name) in [
        ("-DCUFILE_ABI_INCLUDE_CUDA_FIRST", "first"),
        ("-DCUFILE_ABI_INCLUDE_CUDA_AFTER", "after"),
        ("-DCUFILE_ABI_EXPECT_CUDA_H", "found"),
    ] {
        let extra = [mode, "-DCUFILE_ABI_EXPECT_CUDA_H"];
        build_and_run(
            "gcc",
            &[&c[..], &extra].concat(),
            &dirs,
            &format!("ours_c11_real_cuda_{name}"),
        );
        build_and_run(
            "g++",
            &[&cxx[..], &extra].concat(),
            &dirs,
            &format!("ours_cxx17_real_cuda_{name}"),
        );
    }
}

/// A translation unit that uses the header as consumers do: it discards results (DeepSpeed
/// ignores cuFileDriverOpen's), tests ssize_t results with the status macros, fills a
/// descriptor, queues a batch entry and a stream read, and reads properties' bits.
const CONSUMER_UNIT: &str = r#"#include "cufile.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int consumer_read(const char *path, void *gpu, size_t n, CUstream stream);
int consumer_read(const char *path, void *gpu, size_t n, CUstream stream)
{
    CUfileDescr_t descr;
    CUfileHandle_t fh;
    CUfileError_t status;
    CUfileDrvProps_t props;
    CUfileIOParams_t entry;
    ssize_t got;
    size_t size = n;
    off_t file_offset = 0, buf_offset = 0;
    ssize_t done = 0;
    int fd = open(path, O_RDONLY);
    cuFileDriverOpen();
    memset(&descr, 0, sizeof(descr));
    descr.handle.fd = fd;
    descr.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    status = cuFileHandleRegister(&fh, &descr);
    if (status.err != CU_FILE_SUCCESS) {
        fprintf(stderr, "register: %s (cuda %d)\n", CUFILE_ERRSTR(status.err),
                IS_CUDA_ERR(status) ? (int)CU_FILE_CUDA_ERR(status) : 0);
        return -1;
    }
    got = cuFileRead(fh, gpu, n, 0, 0);
    if (got < 0) {
        fprintf(stderr, "read: %s\n", IS_CUFILE_ERR(got) ? CUFILE_ERRSTR(got) : "errno");
    }
    if (cuFileDriverGetProperties(&props).err == CU_FILE_SUCCESS &&
        (props.fflags & (1u << CU_FILE_BATCH_IO_SUPPORTED))) {
        memset(&entry, 0, sizeof(entry));
        entry.mode = CUFILE_BATCH;
        entry.fh = fh;
        entry.opcode = CUFILE_READ;
        entry.u.batch.devPtr_base = gpu;
        entry.u.batch.size = n;
    }
    cuFileReadAsync(fh, gpu, &size, &file_offset, &buf_offset, &done, stream);
    cuFileHandleDeregister(fh);
    cuFileDriverClose();
    close(fd);
    return (int)got;
}
"#;

fn compile_consumer(compiler: &str, language: &str, flags: &[&str], name: &str) {
    let source = out_dir("cufile_header").join(format!("{name}.src"));
    std::fs::write(&source, CONSUMER_UNIT).unwrap();
    let mut command = Command::new(compiler);
    command
        .args(["-x", language])
        .args(flags)
        .arg("-I")
        .arg(our_include())
        .args(["-c", "-o"])
        .arg(out_dir("cufile_header").join(format!("{name}.o")))
        .arg(&source);
    let output = run(command);
    assert!(
        output.status.success(),
        "a consumer's use of cufile.h does not compile warning-free ({compiler} {flags:?}):\n{}",
        text(&output)
    );
}

#[test]
fn consumer_units_compile_warning_free_in_c_and_cxx() {
    let warnings = ["-Wall", "-Wextra", "-Werror", "-pedantic", "-Wundef"];
    // _DEFAULT_SOURCE: the unit itself calls POSIX open()/close().
    compile_consumer(
        "gcc",
        "c",
        &[&["-std=c11", "-D_DEFAULT_SOURCE"], &warnings[..]].concat(),
        "consumer_c11",
    );
    compile_consumer(
        "gcc",
        "c",
        &[&["-std=c99", "-D_DEFAULT_SOURCE"], &warnings[..]].concat(),
        "consumer_c99",
    );
    compile_consumer(
        "g++",
        "c++",
        &[&["-std=c++17"], &warnings[..]].concat(),
        "consumer_cxx17",
    );
    compile_consumer(
        "g++",
        "c++",
        &[&["-std=c++11"], &warnings[..]].concat(),
        "consumer_cxx11",
    );
}

#[test]
fn header_alone_compiles_in_strict_c99_and_cxx11() {
    // Consumers' builds vary; C++98 is out (the status X-macro leaves a comma after the last
    // enumerator, as NVIDIA's does).
    let source = out_dir("cufile_header").join("older_modes.c");
    std::fs::write(
        &source,
        "#include \"cufile.h\"\ntypedef CUfileError_t older_modes_unit;\n",
    )
    .unwrap();
    for (compiler, language, std) in [("gcc", "c", "-std=c99"), ("g++", "c++", "-std=c++11")] {
        let mut command = Command::new(compiler);
        command
            .args([
                "-x",
                language,
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
            ])
            .args(["-Wundef", "-fsyntax-only", "-I"])
            .arg(our_include())
            .arg(&source);
        let output = run(command);
        assert!(
            output.status.success(),
            "cufile.h does not compile with {compiler} {std}:\n{}",
            text(&output)
        );
    }
}

/// Every symbol `libcufile.so.0` is to export: the committed list.
fn expected_exports() -> Vec<&'static str> {
    include_str!("cufile-exported-symbols.txt")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The functions a `cufile.h` declares, as gcc's `-aux-info` reports them: (extern
/// declarations, static definitions), one entry per declaration.
fn declared_functions(includes: &[&Path], name: &str) -> (Vec<String>, Vec<String>) {
    let source = out_dir("cufile_header").join(format!("{name}.c"));
    std::fs::write(&source, "#include \"cufile.h\"\n").unwrap();
    let aux = out_dir("cufile_header").join(format!("{name}.aux"));
    let mut command = Command::new("gcc");
    command
        .args(["-std=gnu11", "-fsyntax-only", "-aux-info"])
        .arg(&aux);
    for dir in includes {
        command.arg("-I").arg(dir);
    }
    command.arg(&source);
    ok(&run(command), "gcc -aux-info");
    let listing = std::fs::read_to_string(&aux).unwrap();
    let (mut externs, mut statics) = (Vec::new(), Vec::new());
    for line in listing.lines() {
        // "/* PATH/cufile.h:LINE:NC */ extern TYPE NAME (PARAMS); ..."
        let Some((origin, declaration)) = line.split_once(" */ ") else {
            continue;
        };
        if !origin.contains("/cufile.h:") {
            continue;
        }
        let head = &declaration[..declaration.find(" (").expect("a function declaration")];
        let function: String = head
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap()
            .to_owned();
        if declaration.starts_with("static ") {
            statics.push(function);
        } else {
            externs.push(function);
        }
    }
    (externs, statics)
}

fn sorted(names: &[impl AsRef<str>]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|s| s.as_ref().to_owned()).collect();
    v.sort();
    v
}

#[test]
fn exported_symbols_list_is_the_set_of_header_prototypes() {
    let expected = expected_exports();
    let unique: BTreeSet<&str> = expected.iter().copied().collect();
    assert_eq!(unique.len(), expected.len(), "the list has a duplicate");
    // 49 functions plus the legacy name of the close.
    assert_eq!(expected.len(), 50);
    let (externs, statics) = declared_functions(&[&our_include()], "ours_aux");
    assert_eq!(
        sorted(&externs),
        sorted(&expected),
        "include/cufile.h vs the list"
    );
    assert_eq!(statics, ["cufileop_status_error"]);
}

#[test]
fn nvidia_declares_and_exports_the_same_functions() {
    let Some(nvidia) = nvidia() else { return };
    let dirs: [&Path; 2] = [&nvidia.cufile_include, &nvidia.cuda_include];
    let (externs, statics) = declared_functions(&dirs, "nvidia_aux");
    assert_eq!(
        sorted(&externs),
        sorted(&expected_exports()),
        "NVIDIA's cufile.h vs the list"
    );
    assert_eq!(statics, ["cufileop_status_error"]);

    let mut command = Command::new("nm");
    command.args(["-D", "--defined-only"]).arg(&nvidia.library);
    let listing = ok(&run(command), "nm -D --defined-only (binutils)");
    let exported: BTreeSet<String> = listing
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [_, "T", name] if name.starts_with("cuFile") => Some(name.to_owned()),
            _ => None,
        })
        .collect();
    let mut expected: BTreeSet<String> = expected_exports().iter().map(|s| s.to_string()).collect();
    expected.extend(NVIDIA_UNDOCUMENTED_EXPORTS.iter().map(|s| s.to_string()));
    assert_eq!(
        exported, expected,
        "cuFile* functions NVIDIA's libcufile.so.0 exports"
    );
}

/// The comments of a C file, whitespace-collapsed, each at least `min` characters long.
fn comments(source: &str, min: usize) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(start) = rest.find("/*").into_iter().chain(rest.find("//")).min() {
        let (body, next) = if rest[start..].starts_with("/*") {
            let end = rest[start..].find("*/").map_or(rest.len(), |e| start + e);
            (&rest[start + 2..end], (end + 2).min(rest.len()))
        } else {
            let end = rest[start..].find('\n').map_or(rest.len(), |e| start + e);
            (&rest[start + 2..end], end)
        };
        let words: Vec<&str> = body
            .split(|c: char| c.is_whitespace() || c == '*')
            .filter(|w| !w.is_empty())
            .collect();
        let collapsed = words.join(" ");
        if collapsed.len() >= min {
            found.push(collapsed);
        }
        rest = &rest[next..];
    }
    found
}

#[test]
fn no_comment_of_nvidia_s_header_is_in_ours() {
    let Some(nvidia) = nvidia() else { return };
    let theirs = std::fs::read_to_string(nvidia.cufile_include.join("cufile.h")).unwrap();
    let ours = std::fs::read_to_string(our_include().join("cufile.h")).unwrap();
    let ours_collapsed = comments(&ours, 0).join(" ");
    let their_comments = comments(&theirs, 24);
    assert!(
        their_comments.len() > 50,
        "the comment scanner found only {} comments in NVIDIA's header",
        their_comments.len()
    );
    let copied: Vec<&String> = their_comments
        .iter()
        .filter(|c| ours_collapsed.contains(c.as_str()))
        .collect();
    assert!(
        copied.is_empty(),
        "comments of NVIDIA's header found in ours: {copied:#?}"
    );
}

#[test]
fn comment_scanner_finds_block_and_line_comments() {
    let source = "int a; /* first\n * comment */ int b; // second one\n/**/ x";
    assert_eq!(comments(source, 0), ["first comment", "second one", ""]);
    assert_eq!(comments(source, 11), ["first comment"]);
}

/// A program compiled against NVIDIA's `cufile.h` (and the real `cuda.h`) runs against our
/// library: `tests/c/cufile_suite.c`, built that way, passes on the simulator's CUDA side.
#[test]
fn suite_built_with_nvidia_s_header_passes_against_our_library() {
    let Some(nvidia) = nvidia() else { return };
    let deps = common::deps_dir();
    let dir = out_dir("cufile_header").join("nvidia_built_suite");
    std::fs::create_dir_all(&dir).unwrap();
    let soname = dir.join("libcufile.so.0");
    let _ = std::fs::remove_file(&soname);
    std::os::unix::fs::symlink(deps.join("libcufile.so"), &soname).unwrap();
    let exe = dir.join("cufile_suite");
    let mut build = Command::new("cc");
    build
        .args([
            "-std=gnu11",
            "-D_GNU_SOURCE",
            "-O2",
            "-pthread",
            "-Wall",
            "-I",
        ])
        .arg(&nvidia.cufile_include)
        .arg("-I")
        .arg(&nvidia.cuda_include)
        .arg(root().join("tests/c/cufile_suite.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", deps.display()))
        .args(["-lcufile", "-ldl"])
        .arg(format!("-Wl,-rpath,{}", dir.display()));
    ok(
        &run(build),
        "compiling tests/c/cufile_suite.c against NVIDIA's cufile.h",
    );
    let work = dir.join("files");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let sim = common::hipsim_path();
    let mut command = Command::new(&exe);
    command.arg(&work).current_dir(&work);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if ["HIPFILE_", "HIPSIM_", "CUFILE_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            command.env_remove(&k);
        }
    }
    command
        .env_remove("LD_LIBRARY_PATH")
        .env("HIPFILE_PLATFORM", "nvidia")
        .env("HIPFILE_CUDA_LIBRARY", &sim)
        .env("CUFILE_SUITE_CUDA", &sim)
        .env("HIPFILE_LOG", "error");
    let out = ok(&run(command), "the suite built with NVIDIA's header");
    assert!(
        out.lines()
            .any(|l| l.starts_with("cufile suite: ") && l.ends_with(" checks, 0 failures")),
        "{out}"
    );
}

/// The one Rust definition of the cuFile types (`crates/cufile/abi`, which libcufile.so.0, the
/// engine's cuFile path, the simulator and the fuzz target use) against `include/cufile.h`:
/// every size and member offset, every `CUfileOpError` value and the flag values, printed by
/// a C program compiled against the header.
#[test]
fn the_rust_cufile_types_are_the_header_s() {
    use cufile_abi::*;
    use std::mem::{offset_of, size_of};
    let mut checks: Vec<(String, usize)> = vec![];
    let mut check = |c: &str, rust: usize| checks.push((c.to_string(), rust));
    check("sizeof(CUfileError_t)", size_of::<CUfileError_t>());
    check(
        "offsetof(CUfileError_t, cu_err)",
        offset_of!(CUfileError_t, cu_err),
    );
    check("sizeof(CUfileDrvProps_t)", size_of::<CUfileDrvProps_t>());
    macro_rules! nvfs {
        ($($f:ident),*) => {$(
            check(
                concat!("offsetof(CUfileDrvProps_t, nvfs.", stringify!($f), ")"),
                offset_of!(CUfileDrvProps_t, nvfs) + offset_of!(CUfileDrvPropsNvfs, $f),
            );
        )*};
    }
    nvfs!(
        major_version,
        minor_version,
        poll_thresh_size,
        max_direct_io_size,
        dstatusflags,
        dcontrolflags
    );
    macro_rules! fields {
        ($t:ident: $($f:ident = $c:literal),*) => {$(
            check(concat!("offsetof(", stringify!($t), ", ", $c, ")"), offset_of!($t, $f));
        )*};
    }
    fields!(CUfileDrvProps_t: fflags = "fflags", max_device_cache_size = "max_device_cache_size",
        per_buffer_cache_size = "per_buffer_cache_size",
        max_device_pinned_mem_size = "max_device_pinned_mem_size",
        max_batch_io_size = "max_batch_io_size",
        max_batch_io_timeout_msecs = "max_batch_io_timeout_msecs");
    check("sizeof(CUfileDescr_t)", size_of::<CUfileDescr_t>());
    check(
        "sizeof(((CUfileDescr_t *)0)->handle)",
        size_of::<CUfileDescrHandle>(),
    );
    fields!(CUfileDescr_t: type_ = "type", handle = "handle", fs_ops = "fs_ops");
    check("sizeof(CUfileIOVec_t)", size_of::<CUfileIOVec_t>());
    fields!(CUfileIOVec_t: base = "base", len = "len");
    check("sizeof(CUfileIOParams_t)", size_of::<CUfileIOParams_t>());
    fields!(CUfileIOParams_t: mode = "mode", dev_ptr_base = "u.batch.devPtr_base",
        file_offset = "u.batch.file_offset", dev_ptr_offset = "u.batch.devPtr_offset",
        size = "u.batch.size", fh = "fh", opcode = "opcode", cookie = "cookie");
    check("sizeof(CUfileIOEvents_t)", size_of::<CUfileIOEvents_t>());
    fields!(CUfileIOEvents_t: cookie = "cookie", status = "status", ret = "ret");
    check("sizeof(CUfileStatsLevel1_t)", STATS_L1_SIZE);
    check("sizeof(CUfileStatsLevel2_t)", STATS_L2_SIZE);
    check("sizeof(CUfileStatsLevel3_t)", STATS_L3_SIZE);
    check(
        "offsetof(CUfileStatsLevel1_t, readv_ops)",
        STATS_L1_READV_OFFSET,
    );
    check("sizeof(CUfilePerGpuStats_t)", PER_GPU_SIZE);
    check(
        "sizeof(((CUfileStatsLevel3_t *)0)->per_gpu_stats) / sizeof(CUfilePerGpuStats_t)",
        MAX_GPUS,
    );
    check(
        "CU_FILE_HANDLE_TYPE_OPAQUE_FD",
        HANDLE_TYPE_OPAQUE_FD as usize,
    );
    check("1u << CU_FILE_NVME_SUPPORTED", NVME_SUPPORTED as usize);
    check(
        "1u << CU_FILE_NVME_P2P_SUPPORTED",
        NVME_P2P_SUPPORTED as usize,
    );
    check("1u << CU_FILE_USE_POLL_MODE", USE_POLL_MODE as usize);
    check(
        "1u << CU_FILE_ALLOW_COMPAT_MODE",
        ALLOW_COMPAT_MODE as usize,
    );
    for (name, value) in code::ALL {
        check(&format!("CU_FILE_{name}"), *value as usize);
    }
    // And no status of the header is missing: its table counted.
    check("0 CUFILEOP_STATUS_ENTRIES", code::ALL.len());

    let dir = out_dir("cufile_header");
    let source = dir.join("rust_types.c");
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"cufile.h\"\n\
         #define CUFILE_OP(value, name, message) +1\nint main(void)\n{\n",
    );
    let mut expected = String::new();
    for (expr, rust) in &checks {
        c.push_str(&format!(
            "    printf(\"%s = %zu\\n\", {:?}, (size_t)({expr}));\n",
            expr
        ));
        expected.push_str(&format!("{expr} = {rust}\n"));
    }
    c.push_str("    return 0;\n}\n");
    std::fs::write(&source, c).unwrap();
    let exe = dir.join("rust_types");
    let mut build = Command::new("gcc");
    build
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(our_include())
        .arg(&source)
        .arg("-o")
        .arg(&exe);
    common::cc::build_and_run(build, "the generated rust_types.c", &exe, &expected);
}
