//! Fault injection and run-time settings.
//!
//! Each setting has a name (for `hipsimSetFault` / `hipsimGetFault`) and an environment
//! variable that is read once, when the simulator is first used (in practice: at the first call
//! after the library is loaded). A value of 0 clears a fault. Settings:
//!
//! | name | environment | meaning |
//! | --- | --- | --- |
//! | `fastpath_errno` | `HIPSIM_FASTPATH_ERRNO` | `hipAmdFileRead/Write` return hipSuccess, `*bytes = 0`, `*status = -errno`, without I/O |
//! | `fastpath_hip_error` | `HIPSIM_FASTPATH_HIP_ERROR` | `hipAmdFileRead/Write` return this `hipError_t` |
//! | `fail_copy` | `HIPSIM_FAIL_COPY` | every memcpy, and every segment copy of the staging kernel, fails with this code (HIP numbering) |
//! | `fail_copy_after` | `HIPSIM_FAIL_COPY_AFTER` | with `fail_copy`: the first N copies succeed |
//! | `short_transfer` | `HIPSIM_SHORT_TRANSFER` | `hipAmdFileRead/Write` move at most this many bytes per call |
//! | `no_fastpath` | `HIPSIM_NO_FASTPATH` | `hipGetProcAddress` refuses `hipAmdFileRead/Write` |
//! | `device_count` | `HIPSIM_DEVICE_COUNT` | number of devices, 0..=16 (default 1; 0 means no device) |
//! | `fail_host_alloc` | `HIPSIM_FAIL_HOST_ALLOC` | host allocation/registration fails with out-of-memory |
//! | `copy_delay_us` | `HIPSIM_COPY_DELAY_US` | every copy (staging kernel segments included) sleeps this long first |
//! | `runtime_version` | `HIPSIM_RUNTIME_VERSION` | reported HIP_VERSION (0 = default 70200000) |
//! | `cuda_driver_version` | `HIPSIM_CUDA_DRIVER_VERSION` | reported CUDA driver version (0 = default 13000) |
//! | `cufile_gds` | `HIPSIM_CUFILE_GDS` | 1: cuFile reports a real GPUDirect Storage path (nvidia-fs 2.17, NVMe + NVMe P2P); 0 (default): compat mode only |
//! | `cufile_register_error` | `HIPSIM_CUFILE_REGISTER_ERROR` | `cuFileHandleRegister` fails with this cuFile error (e.g. 5027), `*fh` untouched |
//! | `cufile_io_errno` | `HIPSIM_CUFILE_IO_ERRNO` | `cuFileRead/Write` return -1 with this errno, without I/O |
//! | `cufile_io_error` | `HIPSIM_CUFILE_IO_ERROR` | `cuFileRead/Write` return -(this cuFile error), without I/O |
//! | `no_wait_value` | `HIPSIM_NO_WAIT_VALUE` | `hipStreamWaitValue32` / `cuStreamWaitValue32` answer "not supported" (a device without stream memory operations) |
//! | `no_kernels` | `HIPSIM_NO_KERNELS` | `cuModuleLoadData` answers `CUDA_ERROR_NOT_SUPPORTED` (801): no kernel can be loaded |
//! | `stage_dies` | `HIPSIM_STAGE_DIES` | a staging kernel faults after this many segments (1 = at its first) with `CUDA_ERROR_ILLEGAL_ADDRESS`: later segments are never copied, `done` stays where it was, and the device's context is broken for good (every kernel of the device stops, queued work never runs, later calls fail with 700: see [`crate::device`]) |
//! | `launch_queue` | `HIPSIM_LAUNCH_QUEUE` | a setting, default 1024: an enqueue on a stream (a kernel launch, a copy, an event record, a wait, a host function) blocks while this many of the stream's items are queued and not finished, as a GPU's full command queue makes `cuLaunchKernel` block until the device drains it; 0: unbounded |
//! | `hip_hw_queues` | `GPU_MAX_HW_QUEUES` | a setting, default 4 (ROCm's): the hardware queues of each device that streams created by `hipStreamCreate*` are spread over (see [`crate::stream`]); 0 or less: every stream has a queue of its own |
//! | `cuda_hw_queues` | `CUDA_DEVICE_MAX_CONNECTIONS` | a setting, default 8 (CUDA's): the same for streams created by `cuStreamCreate` |
//! | `hip_coop_queue` | `HIPSIM_HIP_COOP_QUEUE` | a setting, default 1 (ROCm's): every cooperative launch of the HIP face on a device runs on one queue, in launch order, after its stream's earlier work (see [`crate::stream`]); 0: on its stream only |
//!
//! Errno values may be written in the environment as numbers or names (`EIO`, `ENODEV`, ...);
//! HIP error values as numbers or names (`hipErrorUnknown`, ...); cuFile error values as
//! numbers or names (`CU_FILE_HANDLE_NOT_REGISTERED`, ...). Errno and cuFile values are taken
//! as absolute values (`-5027` means 5027). `device_count` is a setting, not a fault: 0 really
//! means zero devices.
//!
//! A device's architecture name is a string, outside this table: `HIPSIM_GCN_ARCH` and
//! `hipsimSetGcnArch` (see [`crate::device::gcn_arch`]).
//!
//! The two hardware-queue settings read the real runtimes' variables (not `HIPSIM_*` ones), so
//! that a program run with `GPU_MAX_HW_QUEUES=1` sees on the simulator what it would see on a
//! ROCm machine. A stream takes the value current when it is created.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::LazyLock;

use crate::errors::SimError;

/// Every setting, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `fastpath_errno`.
    FastpathErrno,
    /// `fastpath_hip_error`.
    FastpathHipError,
    /// `fail_copy`.
    FailCopy,
    /// `fail_copy_after`.
    FailCopyAfter,
    /// `short_transfer`.
    ShortTransfer,
    /// `no_fastpath`.
    NoFastpath,
    /// `device_count`.
    DeviceCount,
    /// `fail_host_alloc`.
    FailHostAlloc,
    /// `copy_delay_us`.
    CopyDelayUs,
    /// `runtime_version`.
    RuntimeVersion,
    /// `cuda_driver_version`.
    CudaDriverVersion,
    /// `cufile_gds`.
    CufileGds,
    /// `cufile_register_error`.
    CufileRegisterError,
    /// `cufile_io_errno`.
    CufileIoErrno,
    /// `cufile_io_error`.
    CufileIoError,
    /// `no_wait_value`.
    NoWaitValue,
    /// `no_kernels`.
    NoKernels,
    /// `stage_dies`.
    StageDies,
    /// `launch_queue`.
    LaunchQueue,
    /// `hip_hw_queues`.
    HipHwQueues,
    /// `cuda_hw_queues`.
    CudaHwQueues,
    /// `hip_coop_queue`.
    HipCoopQueue,
}

#[derive(Clone, Copy)]
enum Parse {
    Int,
    Errno,
    HipError,
    CufileError,
}

struct Spec {
    fault: Fault,
    name: &'static str,
    env: &'static str,
    parse: Parse,
    default: i64,
}

const SPECS: [Spec; COUNT] = [
    Spec {
        fault: Fault::FastpathErrno,
        name: "fastpath_errno",
        env: "HIPSIM_FASTPATH_ERRNO",
        parse: Parse::Errno,
        default: 0,
    },
    Spec {
        fault: Fault::FastpathHipError,
        name: "fastpath_hip_error",
        env: "HIPSIM_FASTPATH_HIP_ERROR",
        parse: Parse::HipError,
        default: 0,
    },
    Spec {
        fault: Fault::FailCopy,
        name: "fail_copy",
        env: "HIPSIM_FAIL_COPY",
        parse: Parse::HipError,
        default: 0,
    },
    Spec {
        fault: Fault::FailCopyAfter,
        name: "fail_copy_after",
        env: "HIPSIM_FAIL_COPY_AFTER",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::ShortTransfer,
        name: "short_transfer",
        env: "HIPSIM_SHORT_TRANSFER",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::NoFastpath,
        name: "no_fastpath",
        env: "HIPSIM_NO_FASTPATH",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::DeviceCount,
        name: "device_count",
        env: "HIPSIM_DEVICE_COUNT",
        parse: Parse::Int,
        default: 1,
    },
    Spec {
        fault: Fault::FailHostAlloc,
        name: "fail_host_alloc",
        env: "HIPSIM_FAIL_HOST_ALLOC",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::CopyDelayUs,
        name: "copy_delay_us",
        env: "HIPSIM_COPY_DELAY_US",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::RuntimeVersion,
        name: "runtime_version",
        env: "HIPSIM_RUNTIME_VERSION",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::CudaDriverVersion,
        name: "cuda_driver_version",
        env: "HIPSIM_CUDA_DRIVER_VERSION",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::CufileGds,
        name: "cufile_gds",
        env: "HIPSIM_CUFILE_GDS",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::CufileRegisterError,
        name: "cufile_register_error",
        env: "HIPSIM_CUFILE_REGISTER_ERROR",
        parse: Parse::CufileError,
        default: 0,
    },
    Spec {
        fault: Fault::CufileIoErrno,
        name: "cufile_io_errno",
        env: "HIPSIM_CUFILE_IO_ERRNO",
        parse: Parse::Errno,
        default: 0,
    },
    Spec {
        fault: Fault::CufileIoError,
        name: "cufile_io_error",
        env: "HIPSIM_CUFILE_IO_ERROR",
        parse: Parse::CufileError,
        default: 0,
    },
    Spec {
        fault: Fault::NoWaitValue,
        name: "no_wait_value",
        env: "HIPSIM_NO_WAIT_VALUE",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::NoKernels,
        name: "no_kernels",
        env: "HIPSIM_NO_KERNELS",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::StageDies,
        name: "stage_dies",
        env: "HIPSIM_STAGE_DIES",
        parse: Parse::Int,
        default: 0,
    },
    Spec {
        fault: Fault::LaunchQueue,
        name: "launch_queue",
        env: "HIPSIM_LAUNCH_QUEUE",
        parse: Parse::Int,
        default: DEFAULT_LAUNCH_QUEUE,
    },
    Spec {
        fault: Fault::HipHwQueues,
        name: "hip_hw_queues",
        env: "GPU_MAX_HW_QUEUES",
        parse: Parse::Int,
        default: DEFAULT_HIP_HW_QUEUES,
    },
    Spec {
        fault: Fault::CudaHwQueues,
        name: "cuda_hw_queues",
        env: "CUDA_DEVICE_MAX_CONNECTIONS",
        parse: Parse::Int,
        default: DEFAULT_CUDA_HW_QUEUES,
    },
    Spec {
        fault: Fault::HipCoopQueue,
        name: "hip_coop_queue",
        env: "HIPSIM_HIP_COOP_QUEUE",
        parse: Parse::Int,
        default: 1,
    },
];

/// Number of settings.
const COUNT: usize = 22;

/// Items a stream holds queued before an enqueue blocks (`launch_queue`): CUDA's launch queue
/// is about this deep.
pub const DEFAULT_LAUNCH_QUEUE: i64 = 1024;
/// Hardware queues per device for HIP streams (`GPU_MAX_HW_QUEUES`): ROCm's default.
pub const DEFAULT_HIP_HW_QUEUES: i64 = 4;
/// Hardware queues per device for CUDA streams (`CUDA_DEVICE_MAX_CONNECTIONS`): CUDA's default.
pub const DEFAULT_CUDA_HW_QUEUES: i64 = 8;

/// Most devices the simulator can expose.
pub const MAX_DEVICES: i64 = 16;
/// HIP_VERSION reported by default (7.2.0).
pub const DEFAULT_RUNTIME_VERSION: i32 = 70_200_000;
/// CUDA driver version reported by default (13.0).
pub const DEFAULT_CUDA_DRIVER_VERSION: i32 = 13_000;

static VALUES: LazyLock<[AtomicI64; COUNT]> = LazyLock::new(|| {
    let values = [const { AtomicI64::new(0) }; COUNT];
    for spec in &SPECS {
        let mut v = spec.default;
        if let Ok(text) = std::env::var(spec.env) {
            match parse_value(spec.parse, text.trim()) {
                Some(parsed) => v = parsed,
                None => eprintln!("hipsim: ignoring {}={text:?}: not a valid value", spec.env),
            }
        }
        if spec.fault == Fault::DeviceCount {
            v = v.clamp(0, MAX_DEVICES);
        }
        values[spec.fault as usize].store(v, Ordering::Relaxed);
    }
    values
});

/// Copies counted against `fail_copy_after` since the copy faults were last set.
static COPIES_SINCE_SET: AtomicU64 = AtomicU64::new(0);

fn parse_value(kind: Parse, text: &str) -> Option<i64> {
    if let Ok(v) = text.parse::<i64>() {
        return Some(match kind {
            Parse::Errno | Parse::CufileError => v.abs(),
            _ => v,
        });
    }
    match kind {
        Parse::Int => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(1),
            "false" | "no" | "off" => Some(0),
            _ => None,
        },
        Parse::Errno => errno_by_name(text).map(i64::from),
        Parse::HipError => hip_error_by_name(text).map(i64::from),
        Parse::CufileError => crate::cufile_errors::error_by_name(text).map(i64::from),
    }
}

fn errno_by_name(name: &str) -> Option<i32> {
    Some(match name {
        "EPERM" => libc::EPERM,
        "ENOENT" => libc::ENOENT,
        "EINTR" => libc::EINTR,
        "EIO" => libc::EIO,
        "ENXIO" => libc::ENXIO,
        "EBADF" => libc::EBADF,
        "EAGAIN" => libc::EAGAIN,
        "ENOMEM" => libc::ENOMEM,
        "EACCES" => libc::EACCES,
        "EFAULT" => libc::EFAULT,
        "EBUSY" => libc::EBUSY,
        "EEXIST" => libc::EEXIST,
        "ENODEV" => libc::ENODEV,
        "EINVAL" => libc::EINVAL,
        "EFBIG" => libc::EFBIG,
        "ENOSPC" => libc::ENOSPC,
        "ESPIPE" => libc::ESPIPE,
        "EROFS" => libc::EROFS,
        "ENOSYS" => libc::ENOSYS,
        "EOPNOTSUPP" | "ENOTSUP" => libc::EOPNOTSUPP,
        "ETIMEDOUT" => libc::ETIMEDOUT,
        "EREMOTEIO" => libc::EREMOTEIO,
        "ECANCELED" => libc::ECANCELED,
        "EDQUOT" => libc::EDQUOT,
        _ => return None,
    })
}

fn hip_error_by_name(name: &str) -> Option<i32> {
    crate::errors::code_by_name(name)
}

fn spec_by_name(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

/// Current value of a setting.
pub fn get(f: Fault) -> i64 {
    VALUES[f as usize].load(Ordering::Relaxed)
}

/// Forces the environment to be read now (called on the first use of the simulator).
pub fn init() {
    LazyLock::force(&VALUES);
}

/// `hipsimSetFault`: sets a setting by name. Returns false for an unknown name or a
/// `device_count` outside 0..=16.
pub fn set_by_name(name: &str, value: i64) -> bool {
    let Some(spec) = spec_by_name(name) else {
        return false;
    };
    if spec.fault == Fault::DeviceCount && !(0..=MAX_DEVICES).contains(&value) {
        return false;
    }
    VALUES[spec.fault as usize].store(value, Ordering::Relaxed);
    if matches!(spec.fault, Fault::FailCopy | Fault::FailCopyAfter) {
        COPIES_SINCE_SET.store(0, Ordering::Relaxed);
    }
    true
}

/// `hipsimGetFault`: a setting by name, `None` for an unknown name.
pub fn get_by_name(name: &str) -> Option<i64> {
    spec_by_name(name).map(|s| get(s.fault))
}

/// Number of simulated devices (0..=16).
pub fn device_count() -> i32 {
    get(Fault::DeviceCount).clamp(0, MAX_DEVICES) as i32
}

/// A setting that counts something, `None` for 0 or less (unbounded).
pub fn count(f: Fault) -> Option<u64> {
    u64::try_from(get(f)).ok().filter(|&n| n > 0)
}

/// Items a stream may hold queued and unfinished before an enqueue blocks; `None`: unbounded.
pub fn launch_queue() -> Option<u64> {
    count(Fault::LaunchQueue)
}

/// Reported HIP_VERSION.
pub fn runtime_version() -> i32 {
    match i32::try_from(get(Fault::RuntimeVersion)) {
        Ok(v) if v > 0 => v,
        _ => DEFAULT_RUNTIME_VERSION,
    }
}

/// Reported CUDA driver version.
pub fn cuda_driver_version() -> i32 {
    match i32::try_from(get(Fault::CudaDriverVersion)) {
        Ok(v) if v > 0 => v,
        _ => DEFAULT_CUDA_DRIVER_VERSION,
    }
}

/// Decides whether the copy being executed now fails (the `fail_copy` / `fail_copy_after`
/// faults), counting it against `fail_copy_after`.
pub fn copy_fault() -> Option<SimError> {
    let code = get(Fault::FailCopy);
    if code == 0 {
        return None;
    }
    let seq = COPIES_SINCE_SET.fetch_add(1, Ordering::Relaxed);
    let after = get(Fault::FailCopyAfter);
    if after > 0 && seq < after as u64 {
        return None;
    }
    Some(SimError(i32::try_from(code).unwrap_or(SimError::UNKNOWN.0)))
}
