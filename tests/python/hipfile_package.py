"""AMD's `hipfile` Python package, unchanged, against our libhipfile on the simulated GPU.

Run by tests/python_package.rs inside a virtual environment where the package was built from
the registry's sdist against our include/hipfile.h and libhipfile.so. `libamdhip64.so` (the
package's ctypes helper) and `libamdhip64.so.7` (our library's auxiliary filter) both resolve to
libhipsim.so, so the package, our library and this script share one simulated runtime.

Usage: python hipfile_package.py SCRATCH_DIR
Prints one line per check and "all checks passed" at the end; any failure raises.
"""

import ctypes
import errno
import os
import random
import sys

import hipfile
from hipfile import (
    Buffer,
    Driver,
    FileHandle,
    FileHandleType,
    HipFileException,
    Stream,
    driver_get_properties,
    get_version,
    supports_async,
)
from hipfile.hipMalloc import hipFree, hipMalloc

MIB = 1 << 20
SIZE = 8 * MIB
HIP_MEMCPY_H2D = 1
HIP_MEMCPY_D2H = 2
HIP_ERROR_ILLEGAL_ADDRESS = 700

# The package's own handle on libamdhip64.so: here the simulator.
hip = hipfile.hipMalloc._hip
for name, argtypes, restype in [
    ("hipMemcpy", [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int),
    ("hipMemset", [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t], ctypes.c_int),
    ("hipStreamCreate", [ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int),
    ("hipStreamDestroy", [ctypes.c_void_p], ctypes.c_int),
    ("hipsimIsSimulator", [], ctypes.c_int),
    ("hipsimCounter", [ctypes.c_char_p], ctypes.c_uint64),
    ("hipsimSetFault", [ctypes.c_char_p, ctypes.c_int64], ctypes.c_int),
]:
    getattr(hip, name).argtypes = argtypes
    getattr(hip, name).restype = restype


PROPS = {
    "nvfs_major_version": 0,
    "nvfs_minor_version": 5,
    "nvfs_poll_thresh_size": 4,
    "nvfs_max_direct_io_size": 16384,
    "nvfs_driver_status_flags": 1 << 4,  # NVMe: the runtime has GPU-direct entry points
    "nvfs_driver_control_flags": 1 << 1,  # compat mode allowed, no poll mode
    "feature_flags": (1 << 1) | (1 << 2) | (1 << 3),  # batch I/O, streams, parallel I/O
    "max_device_cache_size": 64 * 1024,  # KiB, HIPFILE_BOUNCE_BUDGET
    "per_buffer_cache_size": 2 * 1024,  # KiB, HIPFILE_CHUNK_SIZE
    "max_device_pinned_mem_size": 33554432,
    "max_batch_io_count": 128,
    "max_batch_io_timeout_msecs": 0,
}


def check(what, got, want):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")
    shown = repr(got)
    print(f"ok  {what}: {shown if len(shown) <= 600 else shown[:60] + '...'}")


def raises(what, exc_type, fn):
    try:
        fn()
    except exc_type as e:  # noqa: PERF203
        return e
    raise AssertionError(f"{what}: no {exc_type.__name__} raised")


def hip_ok(what, rc):
    if rc != 0:
        raise AssertionError(f"{what} failed with hipError_t {rc}")


def to_device(dev, offset, data):
    hip_ok("hipMemcpy H2D", hip.hipMemcpy(dev + offset, data, len(data), HIP_MEMCPY_H2D))


def from_device(dev, offset, n):
    out = ctypes.create_string_buffer(n)
    hip_ok("hipMemcpy D2H", hip.hipMemcpy(out, dev + offset, n, HIP_MEMCPY_D2H))
    return out.raw


def hipfile_error(what, e, code, message):
    check(f"{what}: exception type", type(e).__name__, "HipFileException")
    check(f"{what}: hipfile_err", e.hipfile_err, code)
    check(f"{what}: str()", str(e), f"{code} - {message}")


def main(scratch):
    check("runtime behind libamdhip64.so is the simulator", hip.hipsimIsSimulator(), 1)

    # ---- version and use count -----------------------------------------------------------
    check("hipfile.__version__ (from our header)", hipfile.__version__, "0.5.0")
    check("get_version() (from our library)", get_version(), (0, 5, 0))
    check("use count before any open", Driver.use_count(), 0)

    # ---- open/close and the context manager ----------------------------------------------
    d = Driver()
    d.open()
    check("use count after open()", Driver.use_count(), 1)
    d.close()
    check("use count after close()", Driver.use_count(), 0)
    e = raises("close() of a closed driver", HipFileException, d.close)
    hipfile_error("close() of a closed driver", e, 5001, "GPU IO driver is not loaded")
    # Properties: the two sizes come from the environment the test sets (HIPFILE_CHUNK_SIZE=2M,
    # HIPFILE_BOUNCE_BUDGET=64M), so a field read from the wrong place of hipFileDriverProps_t
    # cannot match. While closed they describe what the next open will use, as cuFile's do.
    check("driver_get_properties() while closed", driver_get_properties(), PROPS)
    check("use count after reading properties while closed", Driver.use_count(), 0)
    with Driver() as outer:
        check("use count inside `with Driver()`", outer.use_count(), 1)
        with Driver():
            check("use count in a nested `with Driver()`", Driver.use_count(), 2)
        check("use count after the nested block", Driver.use_count(), 1)
    check("use count after the outer block", Driver.use_count(), 0)

    # ---- everything else with the driver open --------------------------------------------
    path = os.path.join(scratch, "data.bin")
    file_offset = 12345  # unaligned
    src_off, dst_off = 4097, 777  # unaligned buffer offsets
    data = random.Random(17).randbytes(SIZE)
    device_bytes = hip.hipsimCounter(b"device_bytes_live")
    dev = hipMalloc(SIZE + 8192)
    dev2 = hipMalloc(SIZE + 8192)
    check("simulated device memory taken by the package's hipMalloc",
          hip.hipsimCounter(b"device_bytes_live") - device_bytes, 2 * (SIZE + 8192))
    try:
        with Driver():
            check("driver_get_properties() while open", driver_get_properties(), PROPS)

            # Register a hipMalloc buffer (and refuse it twice).
            with Buffer.from_ctypes_void_p(dev, SIZE + 8192, 0) as buf:
                e = raises("second registration", HipFileException, Buffer(dev.value, 4096, 0).register)
                hipfile_error("second registration", e, 5023, "Device pointer is already registered")
                buf2 = Buffer.from_ctypes_void_p(dev2, SIZE + 8192, 0)
                buf2.register()

                # Write 8 MiB from device memory at unaligned offsets, read it back elsewhere.
                to_device(dev.value, src_off, data)
                hip_ok("hipMemset", hip.hipMemset(dev2, 0, SIZE + 8192))
                copies = hip.hipsimCounter(b"copies")
                flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC
                with FileHandle(path, flags, handle_type=FileHandleType.OPAQUE_FD) as fh:
                    check("write(8 MiB, file offset 12345, buffer offset 4097)",
                          fh.write(buf, SIZE, file_offset, src_off), SIZE)
                    with open(path, "rb") as f:
                        f.seek(file_offset)
                        ok = f.read() == data
                    check("file bytes equal the device bytes written", ok, True)
                    check("read(8 MiB, file offset 12345, buffer offset 777)",
                          fh.read(buf2, SIZE, file_offset, dst_off), SIZE)
                    back = from_device(dev2.value, dst_off, SIZE)
                    check("device bytes read back (through hipMemcpy) equal the data",
                          back == data, True)
                    check("bytes before the read's buffer offset untouched",
                          from_device(dev2.value, 0, dst_off) == bytes(dst_off), True)
                    start = file_offset + SIZE - MIB - 3
                    check("read across the end of file returns the bytes left",
                          fh.read(buf2, SIZE, start, 0), MIB + 3)
                    check("those bytes", from_device(dev2.value, 0, MIB + 3) == data[-(MIB + 3):], True)
                    check("zero-size read", fh.read(buf2, 0, file_offset, 0), 0)
                    check("the simulator served our library's copies",
                          hip.hipsimCounter(b"copies") > copies, True)

                    # Errors surface as the package's exception with our codes.
                    e = raises("read at file offset -1", OSError, lambda: fh.read(buf2, 4096, -1, 0))
                    check("read at file offset -1: OSError errno", e.errno, errno.EINVAL)
                    e = raises("read past the registered length", HipFileException,
                               lambda: fh.read(buf2, 8193, 0, SIZE))
                    hipfile_error("read past the registered length", e, 5022,
                                  "One or more arguments have an invalid value")
                    # A HIP failure is the negated hipError_t, as AMD's library returns it.
                    check("inject fail_copy", hip.hipsimSetFault(b"fail_copy", HIP_ERROR_ILLEGAL_ADDRESS), 0)
                    try:
                        e = raises("read while copies fail", HipFileException,
                                   lambda: fh.read(buf2, 4096, 1, 1))
                    finally:
                        hip.hipsimSetFault(b"fail_copy", 0)
                    check("read while copies fail: hipfile_err (hipErrorIllegalAddress)",
                          (e.hipfile_err, e.hip_err), (HIP_ERROR_ILLEGAL_ADDRESS, 0))

                    # Async I/O on a registered stream: a write and then a read of the same
                    # bytes queued back to back, without waiting in between; both results are
                    # written when the stream reaches them, the read sees the write.
                    check("supports_async() (hipFileStreamRegister(NULL) succeeds)", supports_async(), True)
                    stream = ctypes.c_void_p()
                    hip_ok("hipStreamCreate", hip.hipStreamCreate(ctypes.byref(stream)))
                    try:
                        with Stream(stream.value) as st:
                            check("Stream registered", st.registered, True)
                            e = raises("read_async with a NULL buffer", HipFileException,
                                       lambda: fh.read_async(Buffer(0, 0, 0), 4096, 0, 0, st.handle))
                            hipfile_error("read_async with a NULL buffer (argument check)", e, 5022,
                                          "One or more arguments have an invalid value")
                            n = MIB + 5
                            fresh = random.Random(18).randbytes(n)
                            to_device(dev.value, 0, fresh)
                            hip_ok("hipMemset", hip.hipMemset(dev2, 0, SIZE + 8192))
                            w = fh.write_async(buf, n, 3, 0, st.handle)
                            r = fh.read_async(buf2, n, 3, 11, st.handle)
                            hip_ok("hipStreamSynchronize", hip.hipStreamSynchronize(stream))
                            check("write_async bytes_done after the stream synchronised", w.bytes_done, n)
                            check("read_async bytes_done after the stream synchronised", r.bytes_done, n)
                            check("read_async saw the write queued before it",
                                  from_device(dev2.value, 11, n) == fresh, True)
                            with open(path, "rb") as f:
                                f.seek(3)
                                check("file bytes equal the device bytes written asynchronously",
                                      f.read(n) == fresh, True)
                            # A read whose size is 0 completes at submission.
                            z = fh.read_async(buf2, 0, 0, 0, st.handle)
                            check("zero-size read_async bytes_done at once", z.bytes_done, 0)
                        check("Stream deregistered", st.registered, False)
                    finally:
                        hip_ok("hipStreamDestroy", hip.hipStreamDestroy(stream))

                buf2.deregister()

            # A directory registers; reading it is an OS error (EISDIR).
            with FileHandle(scratch, os.O_RDONLY) as dh:
                with Buffer.from_ctypes_void_p(dev2, 4096, 0) as b:
                    e = raises("read of a directory", OSError, lambda: dh.read(b, 4096, 0, 0))
                    check("read of a directory: OSError errno", e.errno, errno.EISDIR)
            # Only descriptors register (hipFileIONotSupported); the package closes the fd.
            fh = FileHandle(path, os.O_RDONLY, handle_type=FileHandleType.USERSPACE_FS)
            e = raises("userspace-FS handle", HipFileException, fh.open)
            hipfile_error("userspace-FS handle", e, 5008, "hipFile is not supported on the selected file")
            check("userspace-FS handle left closed", fh.handle, None)
        check("use count at the end", Driver.use_count(), 0)
    finally:
        hipFree(dev)
        hipFree(dev2)
    check("device memory after hipFree (the package's helper)",
          hip.hipsimCounter(b"device_bytes_live"), device_bytes)
    print("all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
