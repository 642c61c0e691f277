#!/usr/bin/env python3
"""cuFile consumers on hipfile's libcufile.so.0 (run by cufile_consumers.sh under LD_PRELOAD).

  cufile_consumers.py torch DIR             torch.cuda.gds.GdsFile: save_storage then load_storage
                                            of a 1 GiB tensor, byte-exact
  cufile_consumers.py kvikio FILE MODE N [--create] [--write W] [--size BYTES] [--repeat R]
                                            one KvikIO process (MODE off: cuFile, i.e. our
                                            libcufile; on: KvikIO's own POSIX compat mode; N
                                            threads): reads FILE into a cupy array (best of R),
                                            byte-exact against a pattern made on the GPU; with
                                            --create it first writes FILE from that pattern, with
                                            --write it writes the pattern to W (timed, removed)
  cufile_consumers.py bindings DIR          cuda.bindings.cufile: version, parameters (closed
                                            and open), open, register, write, read, statistics
                                            levels 1-3 in the binding's own structures after
                                            real I/O, BAR size against sysfs, batch and stream
                                            calls; a table of every step

Each prints RESULT lines (key=value) and a final "STATUS ok" or "STATUS FAIL reason"; the exit
code is 0 only for ok. Every run also says which libcufile.so.0 the process mapped.
"""
import ctypes
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from cufile_types import CUfileDescr, CUfileIOEvents, CUfileIOParams  # noqa: E402

GiB = 1 << 30


def say(msg):
    print(msg, flush=True)


def mapped_cufile():
    """The libcufile files this process mapped (must be only ours)."""
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "libcufile" in parts[-1]:
                paths.add(os.path.realpath(parts[-1]))
    return sorted(paths)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def resolved_cufile():
    """The file whose cuFileHandleRegister the process's global scope resolves to (what every
    consumer that links libcufile.so.0 or dlsyms it from RTLD_DEFAULT calls)."""
    try:
        fn = ctypes.CDLL(None).cuFileHandleRegister
    except AttributeError:
        return None
    libdl = ctypes.CDLL("libc.so.6")
    info = _DlInfo()
    if libdl.dladdr(ctypes.cast(fn, ctypes.c_void_p), ctypes.byref(info)) == 0 or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())


def check_mapped():
    """Ours must be the libcufile the process calls. Another one may be mapped as well (torch's
    import loads NVIDIA's by path); it is reported, and harmless as long as nothing resolves to it."""
    want = os.environ.get("CUFILE_EXPECT")
    got = mapped_cufile()
    calls = resolved_cufile()
    say("RESULT mapped=%s calls=%s" % (",".join(got), calls))
    if want and calls != os.path.realpath(want):
        return "cuFile calls resolve to %s, expected %s (mapped: %s)" % (calls, want, got)
    return None


def finish(failure):
    failure = failure or check_mapped()
    say("STATUS ok" if not failure else "STATUS FAIL %s" % failure)
    return 0 if not failure else 1


# ---- torch ---------------------------------------------------------------------------------------


def torch_gds(d):
    import torch
    from torch.cuda import gds

    n = GiB
    path = os.path.join(d, "torch-gds-%d.bin" % os.getpid())
    torch.manual_seed(7)
    src = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda")
    dst = torch.zeros(n, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    try:
        f = gds.GdsFile(path, os.O_CREAT | os.O_RDWR)
        gds.gds_register_buffer(dst.untyped_storage())
        t0 = time.perf_counter()
        f.save_storage(src.untyped_storage(), 0)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        f.load_storage(dst.untyped_storage(), 0)
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        gds.gds_deregister_buffer(dst.untyped_storage())
        del f
        same = bool(torch.equal(src, dst))
        size = os.path.getsize(path)
        say("RESULT torch save_gbps=%.2f load_gbps=%.2f bytes=%d file_size=%d byte_exact=%s"
            % (n / (t1 - t0) / 1e9, n / (t2 - t1) / 1e9, n, size, same))
        if not same:
            return finish("the loaded tensor differs from the saved one")
        if size != n:
            return finish("file size %d, expected %d" % (size, n))
        return finish(None)
    except Exception as e:  # noqa: BLE001
        return finish("%s: %s" % (type(e).__name__, e))
    finally:
        if os.path.exists(path):
            os.unlink(path)


# ---- KvikIO --------------------------------------------------------------------------------------


def pattern(cupy, n):
    """n bytes made on the GPU from their offsets (the same in every process)."""
    out = cupy.empty(n, dtype=cupy.uint8)
    step = 1 << 28
    for i in range(0, n, step):
        m = min(step, n - i)
        idx = cupy.arange(i, i + m, dtype=cupy.uint64)
        out[i:i + m] = ((idx * cupy.uint64(0x9E3779B97F4A7C15)) >> cupy.uint64(56)).astype(cupy.uint8)
    cupy.cuda.runtime.deviceSynchronize()
    return out


def warm(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, 64 << 20):
            pass
    finally:
        os.close(fd)


def kvikio_worker(argv):
    file, mode, nthreads = argv[0], argv[1], int(argv[2])
    create = "--create" in argv
    write_to = argv[argv.index("--write") + 1] if "--write" in argv else None
    size = int(argv[argv.index("--size") + 1]) if "--size" in argv else 8 * GiB
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
    # Read by KvikIO at import.
    os.environ["KVIKIO_COMPAT_MODE"] = "OFF" if mode == "off" else "ON"
    os.environ["KVIKIO_NTHREADS"] = str(nthreads)
    import cupy
    import kvikio
    import kvikio.defaults

    tag = "kvikio_%s threads=%d task=%s" % (mode, nthreads, os.environ.get("KVIKIO_TASK_SIZE", "default"))
    try:
        say("info: kvikio %s compat_mode=%s num_threads=%s task_size=%s" % (
            kvikio.__version__, kvikio.defaults.get("compat_mode"), kvikio.defaults.get("num_threads"),
            kvikio.defaults.get("task_size")))
    except Exception:  # noqa: BLE001
        pass
    ref = pattern(cupy, size)
    failure = None
    try:
        if create:
            with kvikio.CuFile(file, "w") as f:
                t0 = time.perf_counter()
                got = f.write(ref)
                t = time.perf_counter() - t0
            os.sync()
            say("RESULT %s op=write bytes=%d gbps=%.2f" % (tag, got, size / t / 1e9))
            if got != size:
                return finish("wrote %d of %d bytes" % (got, size))
        # Warm the page cache with plain reads first, so both modes read the same warm file:
        # our engine, like GPUDirect Storage, reads uncached data with O_DIRECT, which leaves
        # the cache as it was (and a file it wrote itself is not cached either).
        warm(file)
        buf = cupy.zeros(size, dtype=cupy.uint8)
        best = None
        with kvikio.CuFile(file, "r") as f:
            for _ in range(repeat):
                buf.fill(0)
                cupy.cuda.runtime.deviceSynchronize()
                t0 = time.perf_counter()
                got = f.read(buf)
                cupy.cuda.runtime.deviceSynchronize()
                t = time.perf_counter() - t0
                best = t if best is None else min(best, t)
                if got != size:
                    return finish("read %d of %d bytes" % (got, size))
        exact = bool(cupy.array_equal(buf, ref))
        say("RESULT %s op=read bytes=%d gbps=%.2f byte_exact=%s" % (tag, size, size / best / 1e9, exact))
        if not exact:
            failure = "the bytes read differ from the file"
        if write_to and not failure:
            try:
                with kvikio.CuFile(write_to, "w") as f:
                    t0 = time.perf_counter()
                    got = f.write(ref)
                    t = time.perf_counter() - t0
                # The written bytes, checked through the page cache.
                with kvikio.CuFile(write_to, "r") as f:
                    buf.fill(0)
                    f.read(buf)
                exact = bool(cupy.array_equal(buf, ref))
                say("RESULT %s op=write bytes=%d gbps=%.2f byte_exact=%s" % (tag, got, size / t / 1e9, exact))
                if got != size or not exact:
                    failure = "write of %d bytes: %d written, byte_exact=%s" % (size, got, exact)
            finally:
                if os.path.exists(write_to):
                    os.unlink(write_to)
    except Exception as e:  # noqa: BLE001
        failure = "%s: %s" % (type(e).__name__, e)
    return finish(failure)


# ---- cuda.bindings.cufile ------------------------------------------------------------------------


def expected_version():
    """What our libcufile reports: 1190 where HIPFILE_CUFILE_API_LEVEL=1.19 declares 1.19
    consumers only, else 1180 (and the 1.15..1.18 structure layouts)."""
    return 1190 if os.environ.get("HIPFILE_CUFILE_API_LEVEL") in ("1.19", "1190") else 1180


def use_count(cufile):
    """cuFileUseCount: through the binding, or (where this version of cuda.bindings returns
    None from use_count) straight from the global scope, which is the same function."""
    n = cufile.use_count()
    if n is None:
        f = ctypes.CDLL(None).cuFileUseCount
        f.restype = ctypes.c_long
        n = f()
        say("info: cuda.bindings' use_count() returned None; cuFileUseCount() = %d" % n)
    return n


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def bar1_kib_from_resource(text):
    """BAR1 in KiB from the text of a sysfs resource file: the second memory BAR
    (IORESOURCE_MEM, 0x200 in the flags column) that is not empty among the six BAR lines. A
    64-bit BAR takes two lines, the second (its upper half) empty: BAR1 is on line 2 after a
    32-bit BAR0 and on line 3 after a 64-bit one (the H200 VM). 0 without a second one."""
    sizes = []
    for line in text.splitlines()[:6]:
        start, end, flags = (int(x, 16) for x in line.split()[:3])
        if flags & 0x200 and end > start:
            sizes.append((end - start + 1) // 1024)
    return sizes[1] if len(sizes) > 1 else 0


def sysfs_bar1_kib():
    """BAR1 of GPU 0 in KiB from sysfs, found through the CUDA driver's PCI bus id: what
    cuFileGetBARSizeInKB(0) must answer. The resource file is printed (INFO lines)."""
    cu = ctypes.CDLL("libcuda.so.1")
    bus = ctypes.create_string_buffer(64)
    dev = ctypes.c_int()
    if cu.cuInit(0) or cu.cuDeviceGet(ctypes.byref(dev), 0) or cu.cuDeviceGetPCIBusId(bus, 64, dev):
        return None, "?"
    d, b, rest = bus.value.decode().split(":")
    dv, fn = rest.split(".")
    bid = "%04x:%02x:%02x.%x" % (int(d, 16), int(b, 16), int(dv, 16), int(fn, 16))
    path = "/sys/bus/pci/devices/%s/resource" % bid
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        say("info: %s: %s" % (path, e))
        return 0, bid
    for i, line in enumerate(text.splitlines()[:7]):
        say("info: %s line %d: %s" % (path, i + 1, line))
    return bar1_kib_from_resource(text), bid


# The byte offsets the statistics structures are read at (cufile.h; the 1.19 layout appends 112
# bytes of readv/writev counters to level 1, which moves everything after it in levels 2 and 3).
L1_SIZE = {1180: 512, 1190: 624}


def stats_bytes(cufile, obj, lvl):
    """The raw bytes of a cuda.bindings StatsLevelN object and how they were read. Versions
    differ: CUDA 13.0's keeps a C struct behind `ptr` with the buffer protocol and field
    accessors (no `_data`); earlier 12.9/13.0 builds keep a NumPy record in `_data`. Tried in
    turn: the buffer protocol, `_data`, then `ptr` with the size of the module's NumPy dtype."""
    tried = []
    try:
        return memoryview(obj).cast("B").tobytes(), "memoryview(StatsLevel%d) (buffer protocol)" % lvl
    except (TypeError, ValueError, BufferError) as e:
        tried.append("buffer protocol: %s" % e)
    data = getattr(obj, "_data", None)
    if data is not None:
        return bytes(data.tobytes()), "StatsLevel%d._data (NumPy record)" % lvl
    tried.append("no _data")
    dtype = getattr(cufile, "stats_level%d_dtype" % lvl, None)
    if dtype is not None and getattr(obj, "ptr", None):
        return ctypes.string_at(obj.ptr, dtype.itemsize), "ptr + stats_level%d_dtype.itemsize" % lvl
    tried.append("no stats_level%d_dtype" % lvl)
    raise RuntimeError("cannot read StatsLevel%d: %s" % (lvl, "; ".join(tried)))


def decode_stats(raw, lvl, version):
    """The counters the run checks, from the bytes in the layout our library fills for the
    version it reports (a binding's structure may be larger: the rest is then untouched)."""
    u64 = lambda off: struct.unpack_from("<Q", raw, off)[0]  # noqa: E731
    l1 = L1_SIZE[version]
    out = {"read_ops": u64(0), "write_ops": u64(16), "read_bytes": u64(96), "write_bytes": u64(104)}
    if lvl >= 2:
        out["read_hist_sum"] = sum(u64(l1 + 8 * i) for i in range(32))
    if lvl == 3:
        gpus_at = l1 + 512
        out["num_gpus"] = struct.unpack_from("<I", raw, gpus_at)[0]
        out["gpu0_read_bytes"] = u64(gpus_at + 8 + 16)
    return out


def stats_accessors(obj, lvl):
    """The same counters through the binding's own field accessors (informational: the
    accessors of each binding version differ), or why they could not be read."""
    try:
        basic = obj if lvl == 1 else (obj.basic if lvl == 2 else obj.detailed.basic)

        def ok(counter):
            v = getattr(counter, "ok", None)
            if v is None:  # a NumPy record
                v = counter["ok"]
            return int(v[0] if hasattr(v, "__len__") else v)

        def num(v):
            return int(v[0] if hasattr(v, "__len__") else v)

        return {"read_ops": ok(basic.read_ops), "write_ops": ok(basic.write_ops),
                "read_bytes": num(basic.read_bytes), "write_bytes": num(basic.write_bytes)}
    except Exception as e:  # noqa: BLE001
        return "%s: %s" % (type(e).__name__, e)


def batch_set_up(cufile, nr):
    """cufile.batch_io_set_up: it returns the handle in CUDA 13.0's binding and takes a pointer
    to it in earlier ones."""
    try:
        return cufile.batch_io_set_up(nr)
    except TypeError:
        h = ctypes.c_void_p()
        cufile.batch_io_set_up(ctypes.addressof(h), nr)
        return h.value


class Steps:
    """The table of the bindings run: one row per step, its result and whether it is right."""

    def __init__(self):
        self.rows = []

    def add(self, step, result, ok=True):
        self.rows.append((step, str(result), ok))
        say("RESULT bindings step=%r ok=%s result=%r" % (step, ok, str(result)))
        return ok

    def call(self, step, fn, *args, expect=None, check=None):
        """fn(*args): ok when it returns (and `check(value)` holds), or when it raises
        cuFileError with the status `expect`."""
        try:
            v = fn(*args)
        except Exception as e:  # noqa: BLE001
            code = getattr(e, "status", None)
            code = code if code is not None else (e.args[0] if e.args else None)
            return self.add(step, "%s: %s" % (type(e).__name__, e),
                            expect is not None and (code == expect or str(expect) in str(e))), None
        return self.add(step, v, expect is None and (check is None or bool(check(v)))), v

    def table(self):
        if not self.rows:
            return []
        w = max(len(r[0]) for r in self.rows)
        say("")
        say("| %-*s | %-4s | %s |" % (w, "cuda.bindings.cufile step", "ok", "result"))
        say("| %s | ---- | ------ |" % ("-" * w))
        for step, res, ok in self.rows:
            say("| %-*s | %-4s | %s |" % (w, step, "ok" if ok else "FAIL", res[:110]))
        bad = [r[0] for r in self.rows if not r[2]]
        return bad


def bindings(d):
    """cuda.bindings.cufile (as installed) drives our library: version, parameters closed and
    open, driver open, registration, write/read (aligned and not), statistics levels 1-3 through
    the binding's own StatsLevel1/2/3 structures after real I/O (the structures CUDA 13.0's
    binding allocates with cuFile 1.15's sizes), BAR size, batch and stream I/O; a table."""
    import cupy
    from cuda.bindings import cufile

    assert ctypes.sizeof(Descr) == 24 and Descr.fd.offset == 8 and Descr.fs_ops.offset == 16
    assert ctypes.sizeof(CUfileIOParams) == 64 and CUfileIOParams.fh.offset == 40 and CUfileIOParams.cookie.offset == 56
    assert ctypes.sizeof(CUfileIOEvents) == 24 and CUfileIOEvents.status.offset == 8 and CUfileIOEvents.ret.offset == 16
    n = 8 << 20
    path = os.path.join(d, "bindings-%d.bin" % os.getpid())
    st = Steps()
    done = []
    # CUDA first, as a CUDA program has it before its first cuFile call.
    src = pattern(cupy, n)
    dst = cupy.zeros(n, dtype=cupy.uint8)
    want = expected_version()
    try:
        # -- closed --
        st.call("get_version", cufile.get_version, check=lambda v: v == want)
        st.call("get_parameter_bool(PROFILE_NVTX) closed", cufile.get_parameter_bool, 5, check=lambda v: v in (0, 1))
        st.call("set_parameter_bool(PROFILE_NVTX) closed", cufile.set_parameter_bool, 5, False)
        st.call("set_parameter_size_t(IO_BATCHSIZE, 128) closed", cufile.set_parameter_size_t, 9, 128)
        st.call("get_parameter_size_t(IO_BATCHSIZE) closed", cufile.get_parameter_size_t, 9, check=lambda v: v == 128)
        st.call("set_stats_level(3) closed", cufile.set_stats_level, 3)
        st.call("stats_start closed (5001)", cufile.stats_start, expect=5001)
        kb, bid = sysfs_bar1_kib()
        st.call("get_bar_size_in_kb(0): sysfs BAR1 of %s = %s KiB" % (bid, kb), cufile.get_bar_size_in_kb, 0,
                check=lambda v: kb is not None and v == kb and v > 0)
        st.call("get_bar_size_in_kb(99) (5022)", cufile.get_bar_size_in_kb, 99, expect=5022)
        # -- open --
        ok, _ = st.call("driver_open", cufile.driver_open)
        if not ok:
            return finish("driver_open failed")
        st.add("use_count after driver_open", use_count(cufile), use_count(cufile) == 1)
        done.append("version+open")
        for i in range(12):
            st.call("get_parameter_size_t(%d)" % i, cufile.get_parameter_size_t, i)
            if i == 0:
                st.call("get_parameter_min_max_value(0) (no range: 5022)", cufile.get_parameter_min_max_value, 0,
                        expect=5022)
            else:
                st.call("get_parameter_min_max_value(%d)" % i, cufile.get_parameter_min_max_value, i,
                        check=lambda v: v[1] == 0 or v[0] <= v[1])
        for i in range(14):
            st.call("get_parameter_bool(%d)" % i, cufile.get_parameter_bool, i, check=lambda v: v in (0, 1))
        for i in (0, 2, 3):
            st.call("get_parameter_string(%d, 64)" % i, cufile.get_parameter_string, i, 64)
        st.call("set_parameter_size_t while open (5026)", cufile.set_parameter_size_t, 9, 64, expect=5026)
        st.call("driver_set_max_direct_io_size(1024) while open", cufile.driver_set_max_direct_io_size, 1024)
        done.append("parameters")
        fd = os.open(path, os.O_CREAT | os.O_RDWR | getattr(os, "O_DIRECT", 0), 0o644)
        descr = CUfileDescr.of_fd(fd)
        ok, fh = st.call("handle_register (O_DIRECT)", cufile.handle_register, ctypes.addressof(descr))
        if not ok:
            return finish("handle_register failed")
        st.call("buf_register", cufile.buf_register, dst.data.ptr, n, 0)
        st.call("stats_reset", cufile.stats_reset)
        st.call("write %d bytes" % n, cufile.write, fh, src.data.ptr, n, 0, 0, check=lambda v: v == n)
        ok, got = st.call("read %d bytes" % n, cufile.read, fh, dst.data.ptr, n, 0, 0, check=lambda v: v == n)
        st.add("read bytes equal", "", bool(cupy.array_equal(src, dst)))
        dst.fill(0)
        st.call("read 100001 bytes at 7 into +3", cufile.read, fh, dst.data.ptr, 100001, 7, 3,
                check=lambda v: v == 100001)
        st.add("unaligned bytes equal", "", bool(cupy.array_equal(dst[3:3 + 100001], src[7:7 + 100001])))
        done.append("read+write")
        # Statistics through the binding's own structures: their size is its header's.
        for lvl in (1, 2, 3):
            obj = getattr(cufile, "StatsLevel%d" % lvl)()
            ok, _ = st.call("get_stats_l%d into the binding's StatsLevel%d" % (lvl, lvl),
                            getattr(cufile, "get_stats_l%d" % lvl), obj.ptr)
            if not ok:
                continue
            try:
                raw, how = stats_bytes(cufile, obj, lvl)
            except Exception as e:  # noqa: BLE001
                st.add("stats level %d: reading the binding's structure" % lvl, "%s: %s" % (type(e).__name__, e),
                       False)
                continue
            st.add("stats level %d: %d bytes read through %s" % (lvl, len(raw), how), "", True)
            got = decode_stats(raw, lvl, want)
            right = (got["read_ops"], got["read_bytes"], got["write_ops"], got["write_bytes"]) == (2, n + 100001, 1, n)
            st.add("stats level %d: reads %d/%d bytes, writes %d/%d bytes" % (
                lvl, got["read_ops"], got["read_bytes"], got["write_ops"], got["write_bytes"]), "", right)
            acc = stats_accessors(obj, lvl)
            same = isinstance(acc, dict) and all(acc[k] == got[k] for k in acc)
            # Informational where the binding's structure has another layout than the one we
            # fill (its accessors then read the 1.19 offsets of a 1.18 layout, or the reverse).
            st.add("stats level %d: the binding's accessors" % lvl, acc if not same else "agree", True)
            if lvl == 2:
                st.add("stats level 2: read size histogram sums to the 2 reads", got["read_hist_sum"],
                       got["read_hist_sum"] == 2)
            if lvl == 3:
                st.add("stats level 3: %d GPU(s), GPU 0 read %d bytes" % (got["num_gpus"], got["gpu0_read_bytes"]),
                       "", got["num_gpus"] >= 1 and got["gpu0_read_bytes"] == n + 100001)
        done.append("stats")
        # Batch: two reads.
        dst.fill(0)
        cupy.cuda.runtime.deviceSynchronize()
        ok, bid = st.call("batch_io_set_up(2)", batch_set_up, cufile, 2)
        params = (CUfileIOParams * 2)()
        for i in range(2):
            params[i] = CUfileIOParams(mode=1, devPtr_base=dst.data.ptr, file_offset=i * (1 << 20) + 11,
                                 devPtr_offset=i * (2 << 20), size=1 << 20, fh=fh, opcode=0, cookie=100 + i)
        st.call("batch_io_submit(2)", cufile.batch_io_submit, bid, 2, ctypes.addressof(params), 0)
        events = (CUfileIOEvents * 2)()
        nr = ctypes.c_uint(2)
        ts = Timespec(10, 0)
        st.call("batch_io_get_status", cufile.batch_io_get_status, bid, 2, ctypes.addressof(nr),
                ctypes.addressof(events), ctypes.addressof(ts))
        ok = nr.value == 2 and all(e.status == 0x10 and e.ret == (1 << 20) for e in events[:2])
        for i in range(2):
            a, b = i * (2 << 20), i * (1 << 20) + 11
            ok = ok and bool(cupy.array_equal(dst[a:a + (1 << 20)], src[b:b + (1 << 20)]))
        st.add("batch: 2 events complete, bytes equal", [(e.status, e.ret) for e in events[:nr.value]], ok)
        cufile.batch_io_destroy(bid)
        done.append("batch")
        # Stream-ordered read.
        stream = cupy.cuda.Stream(non_blocking=True)
        size = ctypes.c_size_t(1 << 20)
        foff, boff, nbytes = ctypes.c_int64(5), ctypes.c_int64(9), ctypes.c_ssize_t(0)
        st.call("stream_register", cufile.stream_register, stream.ptr, 0)
        dst.fill(0)
        cupy.cuda.runtime.deviceSynchronize()
        st.call("read_async", cufile.read_async, fh, dst.data.ptr, ctypes.addressof(size), ctypes.addressof(foff),
                ctypes.addressof(boff), ctypes.addressof(nbytes), stream.ptr)
        stream.synchronize()
        exact = bool(cupy.array_equal(dst[9:9 + (1 << 20)], src[5:5 + (1 << 20)]))
        st.add("stream read: *bytes_p and bytes", nbytes.value, nbytes.value == (1 << 20) and exact)
        say("RESULT bindings stream=%s bytes=%d byte_exact=%s" % ("works" if exact else "differs", nbytes.value,
                                                                   exact))
        st.call("stream_deregister", cufile.stream_deregister, stream.ptr)
        done.append("stream")
        st.call("buf_deregister", cufile.buf_deregister, dst.data.ptr)
        cufile.handle_deregister(fh)
        os.close(fd)
        st.call("driver_close", cufile.driver_close)
        st.add("use_count after driver_close", use_count(cufile), use_count(cufile) == 0)
        bad = st.table()
        say("RESULT bindings calls=%s steps=%d failed=%d" % ("+".join(done), len(st.rows), len(bad)))
        return finish("failed steps: %s" % ", ".join(bad) if bad else None)
    except Exception as e:  # noqa: BLE001
        st.table()
        return finish("after %s: %s: %s" % ("+".join(done) or "nothing", type(e).__name__, e))
    finally:
        if os.path.exists(path):
            os.unlink(path)


def main(argv):
    if len(argv) >= 2 and argv[0] == "torch":
        return torch_gds(argv[1])
    if len(argv) >= 4 and argv[0] == "kvikio":
        return kvikio_worker(argv[1:])
    if len(argv) >= 2 and argv[0] == "bindings":
        return bindings(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
