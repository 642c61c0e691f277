#!/usr/bin/env python3
"""cuFile probe: can NVIDIA's libcufile.so.0 register the benchmark file on this machine?

Loads libcufile.so.0 from the Python environment (nvidia/cu13/lib, found through the `nvidia`
namespace package or cuda.pathfinder) with ctypes, then, in one fresh process per configuration:
  cuFileDriverOpen, open the file (O_DIRECT and buffered), cuFileHandleRegister, report the codes;
  where registration succeeds, cuFileRead of --size bytes (default 1 GiB) into device memory
  (cupy, else torch, else cuMemAlloc through libcuda) and report GB/s (best of 3) and a data check.
Configurations: default; CUFILE_ENV_PATH_JSON -> {"properties": {"allow_compat_mode": true}};
that plus CUFILE_FORCE_COMPAT_MODE=true; and both with CUFILE_SKIP_TOPOLOGY_DETECTION=true.
Prints lines:
  RESULT mode=cufile variant=V odirect=0|1 driver_open=ok|err:CODE register=ok|err:CODE(NAME) ...
  RESULT mode=cufile_read variant=V ... gbps=X          (only where a read ran)
usage: cufile_probe.py --file F [--size 1G] [--timeout 40] [--lib PATH]
"""
import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import gpuutil  # noqa: E402
from cufile_types import CUfileDescr, CUfileError  # noqa: E402

# cufile.h (cuFile 1.19): CUFILEOP_BASE_ERR = 5000
CUFILE_ERRORS = {
    0: "CU_FILE_SUCCESS", 5001: "CU_FILE_DRIVER_NOT_INITIALIZED", 5002: "CU_FILE_DRIVER_INVALID_PROPS",
    5003: "CU_FILE_DRIVER_UNSUPPORTED_LIMIT", 5004: "CU_FILE_DRIVER_VERSION_MISMATCH",
    5005: "CU_FILE_DRIVER_VERSION_READ_ERROR", 5006: "CU_FILE_DRIVER_CLOSING",
    5007: "CU_FILE_PLATFORM_NOT_SUPPORTED", 5008: "CU_FILE_IO_NOT_SUPPORTED", 5009: "CU_FILE_DEVICE_NOT_SUPPORTED",
    5010: "CU_FILE_NVFS_DRIVER_ERROR", 5011: "CU_FILE_CUDA_DRIVER_ERROR", 5012: "CU_FILE_CUDA_POINTER_INVALID",
    5013: "CU_FILE_CUDA_MEMORY_TYPE_INVALID", 5014: "CU_FILE_CUDA_POINTER_RANGE_ERROR",
    5015: "CU_FILE_CUDA_CONTEXT_MISMATCH", 5016: "CU_FILE_INVALID_MAPPING_SIZE", 5017: "CU_FILE_INVALID_MAPPING_RANGE",
    5018: "CU_FILE_INVALID_FILE_TYPE", 5019: "CU_FILE_INVALID_FILE_OPEN_FLAG", 5020: "CU_FILE_DIO_NOT_SET",
    5022: "CU_FILE_INVALID_VALUE", 5023: "CU_FILE_MEMORY_ALREADY_REGISTERED", 5024: "CU_FILE_MEMORY_NOT_REGISTERED",
    5025: "CU_FILE_PERMISSION_DENIED", 5026: "CU_FILE_DRIVER_ALREADY_OPEN", 5027: "CU_FILE_HANDLE_NOT_REGISTERED",
    5028: "CU_FILE_HANDLE_ALREADY_REGISTERED", 5029: "CU_FILE_DEVICE_NOT_FOUND", 5030: "CU_FILE_INTERNAL_ERROR",
    5031: "CU_FILE_GETNEWFD_FAILED", 5033: "CU_FILE_NVFS_SETUP_ERROR", 5034: "CU_FILE_IO_DISABLED",
    5035: "CU_FILE_BATCH_SUBMIT_FAILED", 5036: "CU_FILE_GPU_MEMORY_PINNING_FAILED", 5037: "CU_FILE_BATCH_FULL",
    5038: "CU_FILE_ASYNC_NOT_SUPPORTED", 5043: "CU_FILE_NOMEM_ERROR", 5044: "CU_FILE_IO_ERROR",
    5047: "CU_FILE_INVALID_CONTEXT_ERROR", 5048: "CU_FILE_NVFS_INTERNAL_DRIVER_ERROR",
    5049: "CU_FILE_BATCH_NOCOMPAT_ERROR",
}


def log(msg):
    print(msg, flush=True)


def err_text(code):
    return "%d(%s)" % (code, CUFILE_ERRORS.get(code, "?"))


def find_libcufile():
    """Path of libcufile.so.0 in the Python environment, or None."""
    cands = []
    try:
        import nvidia  # namespace package of the nvidia-* wheels
        for base in list(getattr(nvidia, "__path__", [])):
            cands += sorted(glob.glob(os.path.join(base, "cu13", "lib", "libcufile.so*")))
            cands += sorted(glob.glob(os.path.join(base, "*", "lib", "libcufile.so*")))
            for root, _dirs, files in os.walk(base):
                for fn in files:
                    if fn.startswith("libcufile.so"):
                        cands.append(os.path.join(root, fn))
    except Exception as e:  # noqa: BLE001
        log("info: import nvidia failed: %r" % e)
    if not cands:
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib
            dl = load_nvidia_dynamic_lib("cufile")
            p = getattr(dl, "abs_path", None)
            if p:
                cands.append(p)
        except Exception as e:  # noqa: BLE001
            log("info: cuda.pathfinder could not find cufile: %r" % e)
    for extra in ("/usr/local/cuda/lib64/libcufile.so.0", "/usr/local/cuda/targets/x86_64-linux/lib/libcufile.so.0"):
        if os.path.exists(extra):
            cands.append(extra)
    pref = [c for c in cands if c.endswith("libcufile.so.0")] + cands
    for c in pref:
        if os.path.exists(c) and "rdma" not in os.path.basename(c):
            return c
    return None


# ------------------------------------------------------------------------------------------------
# worker


class DeviceMem:
    """Device allocation through cupy, else torch, else the CUDA driver API."""

    def __init__(self, size):
        self.size = size
        self.kind = None
        self.keep = None
        errs = []
        try:
            import cupy
            cupy.cuda.Device(0).use()
            self.keep = cupy.empty(size, dtype=cupy.uint8)
            self.ptr = self.keep.data.ptr
            self.kind = "cupy"
            self._sync = cupy.cuda.runtime.deviceSynchronize
            self._tohost = lambda off, n: cupy.asnumpy(self.keep[off:off + n]).tobytes()
            return
        except Exception as e:  # noqa: BLE001
            errs.append("cupy: %r" % e)
        try:
            import torch
            self.keep = torch.empty(size, dtype=torch.uint8, device="cuda:0")
            self.ptr = self.keep.data_ptr()
            self.kind = "torch"
            self._sync = torch.cuda.synchronize
            self._tohost = lambda off, n: self.keep[off:off + n].cpu().numpy().tobytes()
            return
        except Exception as e:  # noqa: BLE001
            errs.append("torch: %r" % e)
        cu = ctypes.CDLL("libcuda.so.1")
        dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_ulonglong()
        for what, r in (("cuInit", cu.cuInit(0)), ("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))):
            if r:
                raise RuntimeError("%s -> %d (%s)" % (what, r, "; ".join(errs)))
        if cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) or cu.cuCtxSetCurrent(ctx):
            raise RuntimeError("primary context failed")
        if cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size)):
            raise RuntimeError("cuMemAlloc_v2 failed")
        self.ptr = ptr.value
        self.kind = "cuda-driver"
        self._sync = lambda: cu.cuCtxSynchronize()

        def tohost(off, n):
            buf = ctypes.create_string_buffer(n)
            cu.cuMemcpyDtoH_v2(buf, ctypes.c_ulonglong(self.ptr + off), ctypes.c_size_t(n))
            return buf.raw
        self._tohost = tohost

    def sync(self):
        self._sync()

    def tohost(self, off, n):
        return self._tohost(off, n)


def worker(a):
    variant = a.variant
    lib = ctypes.CDLL(a.lib, mode=ctypes.RTLD_GLOBAL, use_errno=True)
    for name in ("cuFileDriverOpen", "cuFileHandleRegister"):
        getattr(lib, name).restype = CUfileError
    lib.cuFileDriverOpen.argtypes = []
    lib.cuFileHandleRegister.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(CUfileDescr)]
    lib.cuFileHandleDeregister.argtypes = [ctypes.c_void_p]
    lib.cuFileHandleDeregister.restype = None
    lib.cuFileRead.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_longlong, ctypes.c_longlong]
    lib.cuFileRead.restype = ctypes.c_ssize_t
    assert ctypes.sizeof(CUfileDescr) == 24, ctypes.sizeof(CUfileDescr)
    try:
        ver = ctypes.c_int()
        lib.cuFileGetVersion.restype = CUfileError
        e = lib.cuFileGetVersion(ctypes.byref(ver))
        log("info: cuFileGetVersion -> err=%d version=%d" % (e.err, ver.value))
    except AttributeError:
        pass

    fsize = os.path.getsize(a.file)
    size = min(a.size, fsize)
    size -= size % 4096
    try:  # a CUDA context first, as applications have one before opening cuFile
        mem = DeviceMem(size)
        log("info: device memory: %d bytes through %s" % (size, mem.kind))
    except Exception as e:  # noqa: BLE001
        mem = None
        log("warning: no device memory (%r): registration is probed, no read" % e)

    t0 = time.perf_counter()
    e = lib.cuFileDriverOpen()
    t_open = time.perf_counter() - t0
    drv = "ok" if e.err == 0 else "err:" + err_text(e.err)
    log("info: cuFileDriverOpen -> err=%s cu_err=%d (%.2f s)" % (err_text(e.err), e.cu_err, t_open))
    status = 0
    any_ok = False
    for odirect in (1, 0):
        flags = os.O_RDONLY | (os.O_DIRECT if odirect else 0)
        fd = os.open(a.file, flags)
        descr = CUfileDescr.of_fd(fd)
        fh = ctypes.c_void_p()
        r = lib.cuFileHandleRegister(ctypes.byref(fh), ctypes.byref(descr))
        reg = "ok" if r.err == 0 else "err:" + err_text(r.err)
        log("RESULT mode=cufile variant=%s odirect=%d driver_open=%s register=%s cu_err=%d" % (
            variant, odirect, drv, reg, r.cu_err))
        if r.err == 0 and mem is None:
            any_ok = True
            lib.cuFileHandleDeregister(fh)
        elif r.err == 0:
            any_ok = True
            times, bad = [], None
            for rep in range(a.repeat):
                t0 = time.perf_counter()
                n = lib.cuFileRead(fh, ctypes.c_void_p(mem.ptr), size, 0, 0)
                mem.sync()
                t = time.perf_counter() - t0
                if n != size:
                    bad = n
                    log("cuFileRead returned %d (expected %d)%s" % (
                        n, size, " = -" + err_text(-n) if n < -1 else (" errno=%d" % ctypes.get_errno() if n == -1 else "")))
                    break
                times.append(t)
                log("info: cuFileRead rep %d: %.3f s %.3f GB/s" % (rep + 1, t, size / t / 1e9))
            if times:
                ok = True
                if size >= 8192:  # compare one page through a buffered descriptor (fd may be O_DIRECT)
                    vfd = os.open(a.file, os.O_RDONLY)
                    ok = mem.tohost(4096, 4096) == os.pread(vfd, 4096, 4096)
                    os.close(vfd)
                log(gpuutil.result_line("cufile_read", 1, size, size, min(times), variant=variant, odirect=odirect,
                                        best_of=len(times), verify="ok" if ok else "MISMATCH"))
            if bad is not None:
                status = 4
            lib.cuFileHandleDeregister(fh)
        os.close(fd)
    close = getattr(lib, "cuFileDriverClose_v2", None) or getattr(lib, "cuFileDriverClose", None)
    if close is not None:
        close.restype = CUfileError
        c = close()
        log("info: cuFileDriverClose -> %s" % err_text(c.err))
    log("info: variant %s: %s" % (variant, "registration OK" if any_ok else "cuFile cannot register the file"))
    return status


# ------------------------------------------------------------------------------------------------
# driver


def driver(a):
    lib = a.lib or find_libcufile()
    if not lib:
        log("CUFILE UNAVAILABLE: libcufile.so.0 not found in the Python environment")
        log("RESULT mode=cufile variant=none odirect=0 driver_open=n/a register=n/a reason=libcufile_not_found")
        return 0
    log("info: libcufile: %s" % lib)
    log("info: /etc/cufile.json %s" % ("exists" if os.path.exists("/etc/cufile.json") else "absent"))
    tmp = tempfile.mkdtemp(prefix="cufile_probe.")
    compat_json = os.path.join(tmp, "cufile_compat.json")
    with open(compat_json, "w") as f:
        json.dump({"logging": {"dir": tmp, "level": "INFO"}, "properties": {"allow_compat_mode": True}}, f)
    variants = [
        ("default", {}),
        ("compat_json", {"CUFILE_ENV_PATH_JSON": compat_json}),
        ("compat_json_force", {"CUFILE_ENV_PATH_JSON": compat_json, "CUFILE_FORCE_COMPAT_MODE": "true"}),
        ("compat_json_skip_topo", {"CUFILE_ENV_PATH_JSON": compat_json, "CUFILE_SKIP_TOPOLOGY_DETECTION": "true"}),
        ("compat_json_force_skip_topo", {"CUFILE_ENV_PATH_JSON": compat_json, "CUFILE_FORCE_COMPAT_MODE": "true",
                                         "CUFILE_SKIP_TOPOLOGY_DETECTION": "true"}),
    ]
    t_end = time.time() + a.budget
    for name, extra in variants:
        left = t_end - time.time()
        if left < 10:
            log("SKIP cufile variant %s: budget exhausted" % name)
            continue
        logfile = os.path.join(tmp, "cufile_%s.log" % name)
        env = dict(os.environ, PYTHONUNBUFFERED="1", CUFILE_LOGFILE_PATH=logfile, CUFILE_LOGGING_LEVEL="INFO")
        env.update(extra)
        log("--- cufile variant %s: %s" % (name, extra or "(no env)"))
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--variant", name, "--lib", lib,
               "--file", a.file, "--size", str(a.size), "--repeat", str(a.repeat)]
        try:
            p = subprocess.run(cmd, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=min(a.timeout, left), stdin=subprocess.DEVNULL)
            out, rc = p.stdout.decode(errors="replace"), p.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = (e.stdout or b"").decode(errors="replace"), "TIMEOUT"
        sys.stdout.write(out)
        if "register=" not in out:
            what = "timeout" if rc == "TIMEOUT" else "crashed"
            log("RESULT mode=cufile variant=%s odirect=1 driver_open=? register=%s rc=%s" % (name, what, rc))
        # cuFile's own log: the lines that say why
        logs = [logfile] + sorted(glob.glob(os.path.join(tmp, "cufile*.log")))
        seen = set()
        for lf in logs:
            if lf in seen or not os.path.exists(lf):
                continue
            seen.add(lf)
            try:
                lines = open(lf, errors="replace").read().splitlines()
            except OSError:
                continue
            words = ("ID_FS", "udev", "rror", "ERROR", "WARN", "NOTICE", "fail", "not supported", "denied")
            key = [ln for ln in lines if any(w in ln for w in words)]
            log("    cufile log %s: %d lines; warnings/errors (last 15), then the last 4 lines:" % (
                os.path.basename(lf), len(lines)))
            for ln in key[-15:] + ["..."] + lines[-4:]:
                log("    | " + ln[:300])
            try:
                os.unlink(lf)  # each variant starts with an empty log
            except OSError:
                pass
        log("--- variant %s rc=%s" % (name, rc))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", required=True)
    ap.add_argument("--size", type=gpuutil.parse_size, default=gpuutil.GiB)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=45.0, help="seconds per variant")
    ap.add_argument("--budget", type=float, default=150.0, help="seconds for all variants")
    ap.add_argument("--lib")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--variant", default="default", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    return driver(a)


if __name__ == "__main__":
    sys.exit(main())
