//! The staging kernel's embedded images (`src/runtime/stage/stage.ptx` and `amdgpu/*.hsaco`)
//! are what `scripts/stage_kernels.sh` builds from `stage.c`: rebuilt here and compared byte for
//! byte when LLVM 19 is installed. CI installs it (`.ci/run` sets `HIPFILE_REQUIRE_LLVM19=1`, so
//! the test fails there rather than skip); elsewhere it skips and says so.
//!
//! `scripts/gpu/fault_probe.c`, the probe of what a CUDA context does after a kernel faults,
//! runs here against the simulator: its table is the model the simulator claims, to be compared
//! line by line with the table the probe prints on a GPU.

mod common;

use std::path::Path;
use std::process::Command;

use common::repo_root;

fn llvm19() -> bool {
    ["clang", "ld.lld"]
        .iter()
        .all(|t| Path::new("/usr/lib/llvm-19/bin").join(t).exists())
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_embedded_kernels_are_what_the_source_builds() {
    if !llvm19() {
        assert!(
            std::env::var_os("HIPFILE_REQUIRE_LLVM19").is_none(),
            "HIPFILE_REQUIRE_LLVM19 is set but clang-19 and lld-19 are not installed"
        );
        eprintln!("LLVM 19 (clang-19, lld-19) is not installed: the staging kernel is not rebuilt");
        return;
    }
    let out = std::env::temp_dir().join(format!("hipfile-stage-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let run = Command::new("bash")
        .arg(repo_root().join("scripts/stage_kernels.sh"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "stage_kernels.sh failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stage = repo_root().join("src/runtime/stage");
    let built = std::fs::read(out.join("stage.ptx")).unwrap();
    assert!(
        built == std::fs::read(stage.join("stage.ptx")).unwrap(),
        "stage.ptx differs from what stage.c builds: run scripts/stage_kernels.sh"
    );
    let (want, got) = (files(&stage.join("amdgpu")), files(&out.join("amdgpu")));
    assert_eq!(
        want.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        got.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in want.iter().zip(&got) {
        assert!(
            a == b,
            "{name} differs from what stage.c builds: run scripts/stage_kernels.sh"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// What the simulator answers after a kernel faults (see `crates/hipsim/src/device.rs`): what the
/// H200 printed too, line by line (`benches/gpu/2026-12-05-h200-fault-probe.txt`).
const SIMULATED_FAULT_TABLE: &str = "\
call                                                       result
cuStreamSynchronize(A), the faulting kernel's stream       700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamSynchronize(A) again                               700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamQuery(B), a kernel waiting for the host            700 (CUDA_ERROR_ILLEGAL_ADDRESS)
B's kernel counted itself out (mailbox exited)             0
host function behind B's kernel ran                        0
cuEventQuery(event behind B's kernel)                      700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuEventSynchronize(event behind B's kernel)                700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamSynchronize(B)                                     700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamQuery(spare), a stream that never had work         700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamQuery(NULL)                                        700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamQuery(CU_STREAM_LEGACY)                            700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamQuery(CU_STREAM_PER_THREAD)                        700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamQuery(CU_STREAM_PER_THREAD), another thread        700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamQuery(CU_STREAM_LEGACY), another thread            700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuCtxSynchronize                                           700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuCtxSynchronize again                                     700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuCtxGetDevice                                             0 (success)
cuStreamGetId(A)                                           700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuMemAlloc                                                 700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuMemcpyHtoD (synchronous)                                 700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuMemsetD8                                                 700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuMemcpyHtoDAsync(spare)                                   700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuMemHostAlloc                                             700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamCreate                                             700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuEventCreate                                              700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuModuleLoadData                                           700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuMemFree                                                  700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuMemFreeHost                                              700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuEventDestroy                                             700 (CUDA_ERROR_ILLEGAL_ADDRESS)
cuStreamDestroy(B)                                         700 (CUDA_ERROR_ILLEGAL_ADDRESS)
";

#[test]
fn the_fault_probe_prints_the_simulators_model() {
    let dir = common::repo_root().join("target/tmp/fault_probe");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = common::cc::CProgram::new("scripts/gpu/fault_probe.c", dir.join("fault_probe"))
        .hipsim()
        .build();
    let out = Command::new("timeout")
        .arg("60")
        .arg(&exe)
        .arg(common::repo_root().join("src/runtime/stage/stage.ptx"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), SIMULATED_FAULT_TABLE);
}
