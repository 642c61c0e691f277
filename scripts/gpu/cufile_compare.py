#!/usr/bin/env python3
"""NVIDIA's libcufile.so.0 and ours side by side: every cuFile call that works without a
registered file, the same sequence in two fresh processes (one per library), every status and
every output byte compared; a table of the differences at the end.

  python3 scripts/gpu/cufile_compare.py [--nvidia PATH] [--ours PATH] [--out FILE] [--json FILE]
  python3 scripts/gpu/cufile_compare.py --from-json FILE [--nvidia PATH] [--out FILE]

--nvidia: NVIDIA's library (default: searched in the Python environment, nvidia/cu13/lib or
nvidia/cufile/lib, as scripts/gpu/cufile_probe.py finds it); --ours: ours (default
.gpu/lib/libcufile.so.0, with libhipfile.so.0 beside it). Each process loads the CUDA driver
(libcuda.so.1) first, as an application has, then its library by path, and runs in a scratch
directory of its own with CUFILE_LOGFILE_PATH there (no cufile.log elsewhere). Without a GPU,
CUFILE_SUITE_CUDA=<libhipsim.so> HIPFILE_PLATFORM=nvidia HIPFILE_CUDA_LIBRARY=<libhipsim.so> runs
it on the simulator (ours against ours: a check of the script itself).

--from-json tabulates the records of an earlier run (its --json file) again with this
script's reasons, running nothing (to check the reasons against a run's data).

The sequence (each step named; the statuses and output structures of each are recorded):
  closed:   version, use count, both closes, every size/bool/string parameter getter (indices
            -1..N+1; strings into buffers of 64, 8 and 1 bytes), min/max, slab arrays,
            statistics level, P2P flags, every setter (staged), the legacy setters (also values
            beyond their ranges, each followed by a good value again), the getters again, the
            statistics calls (the level read after each), BAR size (GPUs 0, -1, 99),
            properties (NULL, then a struct filled with 0xAB). While closed, every call is
            followed by a use-count step, and by a close where the count is not 0: NVIDIA's
            1.15 opens its driver implicitly in the calls that ask the GPU about memory (BAR
            size, SetMaxCacheSize/SetMaxPinnedMemSize, the ranges of parameters 6 and 8), and
            these steps show each one
  open:     open (twice), properties, every getter again, setters (refused while open), the
            legacy setters (DeepSpeed sets the direct I/O size after its open), statistics
            level/start/stop/reset and levels 1-3 (structures of the 1.19 size filled with 0xAB,
            so the bytes each library wrote show), buffer registration of every memory kind
            (device, interior device range, past the allocation, pinned host, pageable host,
            managed, an unmapped address, a freed device pointer, NULL, length 0), handle
            registration refusals (NULL, fd -1, a directory, O_APPEND, a pipe, Win32 and
            user-space types), data calls with NULL and forged handles, stream registration,
            topology export, statistics after the registrations, close, deregistration after the
            final close, the getters closed again; last the calls that may end a process
            (NVIDIA's 1.15 dies with SIGSEGV in cuFileBatchIOSetUp(NULL, n)): a step that does
            not return is reported as such
  staging:  in a fresh process of its own (steps named "staging: ..."): values staged before
            any call that asks the GPU (so before any implicit open), read back closed, after
            the open (and a batch set-up of 64, 65 and 128 entries against the staged batch
            size) and after the close: whether each library applies what was staged
  header:   the error strings of NVIDIA's cufile.h (next to its library) against include/cufile.h
            (cufileop_status_error is an inline function of the header, not a library export)

Output: the table of differences (step, NVIDIA, ours, known reason or NEW) on stdout and in
--out (default $OUT/cufile_compare.txt, OUT default ./gpu-out), the raw records in --json.
Exit status 0 when the run completed (differences are reported, not failed on); 2 when a
library could not be run.
"""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from cufile_probe import CUFILE_ERRORS, find_libcufile  # noqa: E402
from cufile_types import CUfileDescr, CUfileError as Err, CUfileIOVec as IoVec  # noqa: E402

FORGED = ("a value that was never a handle: -1 with 5027, as cuFile 1.17+ answers (ours reports 1180); "
          "1.15 answered EINVAL")
IMPLICIT_OPEN = ("NVIDIA's 1.15 opens its driver implicitly, and leaves it open, in the calls that ask the GPU "
                 "about memory (BAR size, SetMaxCacheSize/SetMaxPinnedMemSize, the ranges of parameters 6 and 8), "
                 "any argument; ours opens implicitly only for registrations and I/O, as cuFile documents")
STAGED = ("NVIDIA's 1.15 ignored what was staged after an implicit open had loaded its configuration (at "
          "minmax[6] closed); ours applies staged values at the next open, as cuFile documents")
CLOSED_GETTERS = ("closed, ours answers the value the next open uses (staged, else configured: ERROR, 16384 KiB, "
                  "33554432 KiB); NVIDIA's 1.15 its built-in values (0, WARN, SIZE_MAX/1024) until a "
                  "configuration is loaded, its last running value after a close")
# The phases after the setters ran: there NVIDIA's 1.15 had loaded its configuration already.
LATER_PHASES = ("closed after setting", "open", "closed again")


def both_succeeded(why):
    """A reason that holds only where both libraries succeeded (the bytes then differ)."""
    return lambda x, y: why if x and y and x.get("status") == [0, 0] and y.get("status") == [0, 0] else None


def later(why):
    """A reason that holds only for the phases after the setters (see LATER_PHASES)."""
    return lambda step: why if step.endswith(LATER_PHASES) else None


# Differences predicted from the cuFile specification or explained by the runs, with the
# reason documented for them (docs/cufile.md lists the same). Keys are step names (a trailing
# '*' matches a prefix); the first key that matches gives the reason. A value is the reason,
# or a function of the step name (one argument) or of the two records (two) giving it (None:
# not explained).
KNOWN = {
    "version": "ours reports 1180 and fills cuFile 1.18's layouts (1190 with "
               "HIPFILE_CUFILE_API_LEVEL=1.19); NVIDIA's here is 1.15",
    "readv*": "cuFileReadv/cuFileWritev are cuFile 1.19 calls: absent from NVIDIA's 1.15",
    "writev*": "cuFileReadv/cuFileWritev are cuFile 1.19 calls: absent from NVIDIA's 1.15",
    "gpu_slabs*": "GpuBounceBufferSlabArray is a cuFile 1.17 call: absent from NVIDIA's 1.15",
    "p2p*": "the P2P flag calls are cuFile 1.16: absent from NVIDIA's 1.15",
    "topology*": "cuFileExportPCIeTopology is cuFile 1.17: absent from NVIDIA's 1.15",
    "bool_get[12]*": "parameters 12 and 13 are cuFile 1.19's: NVIDIA's 1.15 refuses them",
    "bool_get[13]*": "parameters 12 and 13 are cuFile 1.19's: NVIDIA's 1.15 refuses them",
    "bool_set[12]*": "parameters 12 and 13 are cuFile 1.19's: NVIDIA's 1.15 refuses them",
    "bool_set[13]*": "parameters 12 and 13 are cuFile 1.19's: NVIDIA's 1.15 refuses them",
    "string_get[3]*": "RDMA_TRANSPORT is a cuFile 1.19 parameter: NVIDIA's 1.15 refuses it",
    "string_set[3]*": "RDMA_TRANSPORT is a cuFile 1.19 parameter: NVIDIA's 1.15 refuses it",
    "size_get[2]*": "execution values are the engine's (its thread pool), not cuFile's defaults",
    "size_get[3]*": "execution values are the engine's (its inline threshold), not cuFile's defaults",
    "size_get[4]*": "execution values are the engine's, not cuFile's defaults",
    "stats_l*": both_succeeded("counters of two different engines (timing fields differ by nature)"),
    "buf_register[managed]": "the engine serves device, pinned and pageable memory; managed memory is "
                             "refused (CU_FILE_CUDA_MEMORY_TYPE_INVALID) as hipFile refuses it",
    "buf_deregister[managed]": "not registered (see buf_register[managed])",
    "cufileread[forged handle]": FORGED,
    "cufilewrite[forged handle]": FORGED,
    "cufileread[size 0]": FORGED,
    "cufilewrite[size 0]": FORGED,
    "cufileread[NULL buffer]": FORGED,
    "cufilewrite[NULL buffer]": FORGED,
    "minmax[2]*": "ours reports cuFile 1.19's ranges (max_io_threads 0..128; 1.15: 0..32)",
    "size_get[5] closed after setting": STAGED,
    "size_get[5] open": STAGED,
    "size_get[5]*": CLOSED_GETTERS,
    "size_get[6]*": "the engine's bounce budget (HIPFILE_BOUNCE_BUDGET, 256 MiB) is ours; cuFile's 131072 KiB",
    "size_get[8]*": CLOSED_GETTERS,
    "string_get[0]*": CLOSED_GETTERS,
    "size_get[9]*": later(STAGED),
    "size_get[10]*": later(STAGED),
    "bool_get[0]*": later(STAGED),
    "bool_get[5]*": later(STAGED),
    "string_get[2]*": later(STAGED),
    "batch_setup(128)": STAGED + " (here io_batchsize 64: 128 entries are too many)",
    "use_count after minmax[6]*": IMPLICIT_OPEN,
    "close after minmax[6]*": IMPLICIT_OPEN,
    "use_count after minmax[8]*": IMPLICIT_OPEN,
    "close after minmax[8]*": IMPLICIT_OPEN,
    "use_count after legacy MaxCacheSize*": IMPLICIT_OPEN,
    "close after legacy MaxCacheSize*": IMPLICIT_OPEN,
    "use_count after legacy MaxPinnedMemSize*": IMPLICIT_OPEN,
    "close after legacy MaxPinnedMemSize*": IMPLICIT_OPEN,
    "use_count after bar[*": IMPLICIT_OPEN,
    "close after bar[*": IMPLICIT_OPEN,
    "properties*": both_succeeded(
        "ours describes the engine's configuration (staged values applied or shown, the poll bit, the 1.19 "
        "control bits of boolean parameters 12-13, per_buffer_cache_size 1024, the bounce budget as "
        "max_device_cache_size); NVIDIA's 1.15 its nvidia-fs side in compat mode (per_buffer_cache_size 0), "
        "without what it ignored after its implicit open"),
    "batch_setup(NULL)": "NVIDIA's 1.15 dereferences the NULL batch handle pointer (the process dies with "
                         "SIGSEGV); ours answers CU_FILE_INVALID_VALUE",
}

# ---- the child: one library, the whole sequence ---------------------------------------------------


SIZES = {"props": 56, "l1": 624, "l2": 1136, "l3": 5112}


class Records(list):
    """The records, each also written as a JSON line at once (a crash keeps what came before)."""

    def __init__(self, path):
        super().__init__()
        self.f = open(path, "w")

    def append(self, r):
        super().append(r)
        self.f.write(json.dumps(r) + "\n")
        self.f.flush()

    def begin(self, step):
        """A call is about to run: if the process dies in it, the parent names it."""
        self.f.write(json.dumps({"step": step, "pending": True}) + "\n")
        self.f.flush()


class Child:
    def __init__(self, path, work, jpath):
        self.work = work
        self.records = Records(jpath)
        # CUFILE_SUITE_CUDA: another CUDA driver (the simulator's, to try the script without a GPU).
        self.cu = ctypes.CDLL(os.environ.get("CUFILE_SUITE_CUDA") or "libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL, use_errno=True)
        self.allocs = []
        # While closed, every call is followed by the use count (and a close where it is not 0).
        self.watch = False
        self.seen = {}
        self.prefix = ""

    def unique(self, step):
        """Step names are keys: a repeated one gets its ordinal ("stats_start closed #2"); the
        sequence's prefix goes first."""
        step = self.prefix + step
        n = self.seen.get(step, 0) + 1
        self.seen[step] = n
        return step if n == 1 else "%s #%d" % (step, n)

    def fn(self, name, restype=Err):
        try:
            f = getattr(self.lib, name)
        except AttributeError:
            return None
        f.restype = restype
        return f

    def rec(self, step, name, *args, out=(), restype=Err):
        """Call NAME(*args); record its status (or count and errno) and the bytes of `out`."""
        step = self.unique(step)
        f = self.fn(name, restype)
        r = {"step": step}
        if f is None:
            r["missing"] = name
        else:
            self.records.begin(step)
            ctypes.set_errno(0)
            v = f(*args)
            if restype is Err:
                r["status"] = [v.err, v.cu_err]
            elif restype is None:
                r["status"] = None
            else:
                r["ret"] = v
                if v == -1:
                    r["errno"] = ctypes.get_errno()
            for i, o in enumerate(out):
                r["out%d" % i] = bytes(o).hex() if not isinstance(o, str) else o
        self.records.append(r)
        if self.watch:
            self.count_after(step)
        return r

    def use_count(self, step):
        n = self.fn("cuFileUseCount", ctypes.c_long)()
        self.records.append({"step": self.unique(step), "ret": n})
        return n

    def count_after(self, step):
        """The use count after a call made while closed; a close where the call opened the
        driver (so that the next call is made closed again). `step` has its prefix already."""
        step = step[len(self.prefix):]
        if self.use_count("use_count after %s" % step) > 0:
            self.watch = False
            self.rec("close after %s" % step, "cuFileDriverClose_v2")
            self.watch = True

    def filled(self, n):
        return (ctypes.c_ubyte * n)(*([0xAB] * n))

    # -- CUDA memory --
    def cuda(self):
        dev, ctx = ctypes.c_int(), ctypes.c_void_p()
        assert self.cu.cuInit(0) == 0
        assert self.cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
        assert self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
        assert self.cu.cuCtxSetCurrent(ctx) == 0

    def dev_alloc(self, n):
        p = ctypes.c_ulonglong()
        assert self.cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0
        return p.value

    def managed_alloc(self, n):
        p = ctypes.c_ulonglong()
        assert self.cu.cuMemAllocManaged(ctypes.byref(p), ctypes.c_size_t(n), 1) == 0
        return p.value

    def pinned_alloc(self, n):
        p = ctypes.c_void_p()
        assert self.cu.cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(n), 0) == 0
        return p.value

    # -- the sequence --
    def params(self, phase, gpu=True):
        for i in range(-1, 13):
            v = self.filled(8)
            self.rec("size_get[%d] %s" % (i, phase), "cuFileGetParameterSizeT", i, v, out=(v,))
            lo, hi = self.filled(8), self.filled(8)
            self.rec("minmax[%d] %s" % (i, phase), "cuFileGetParameterMinMaxValue", i, lo, hi, out=(lo, hi))
        for i in range(-1, 15):
            v = self.filled(1)
            self.rec("bool_get[%d] %s" % (i, phase), "cuFileGetParameterBool", i, v, out=(v,))
        for i in range(-1, 5):
            for n in (64, 8, 1):
                v = self.filled(n)
                self.rec("string_get[%d] len %d %s" % (i, n, phase), "cuFileGetParameterString", i, v, n, out=(v,))
        for name, fn, n in (("posix_slabs", "cuFileGetParameterPosixPoolSlabArray", 3),
                            ("posix_slabs", "cuFileGetParameterPosixPoolSlabArray", 2),
                            ("gpu_slabs", "cuFileGetParameterGpuBounceBufferSlabArray", 4),
                            ("gpu_slabs", "cuFileGetParameterGpuBounceBufferSlabArray", 2)):
            s, c = self.filled(8 * n), self.filled(8 * n)
            self.rec("%s_get len %d %s" % (name, n, phase), fn, s, c, n, out=(s, c))
        lvl = self.filled(4)
        self.rec("stats_level_get %s" % phase, "cuFileGetStatsLevel", lvl, out=(lvl,))
        for fs in (0, 4, 14, 15):
            f = self.filled(4)
            self.rec("p2p_get[%d] %s" % (fs, phase), "cuFileDriverGetP2PFlags", fs, f, out=(f,))
        if gpu:
            self.gpu_calls(phase)

    def gpu_calls(self, phase):
        """BAR size and properties: the calls that query the GPU (NVIDIA's 1.15 initialises
        CUDA, and its driver, for the properties)."""
        for gpu in (0, -1, 99):
            kb = self.filled(8)
            self.rec("bar[%d] %s" % (gpu, phase), "cuFileGetBARSizeInKB", gpu, kb, out=(kb,))
        self.rec("properties(NULL) %s" % phase, "cuFileDriverGetProperties", None)
        p = self.filled(56)
        self.rec("properties %s" % phase, "cuFileDriverGetProperties", p, out=(p,))

    def setters(self, phase):
        sz, b = ctypes.c_size_t, ctypes.c_bool
        for i, v in ((9, 64), (1, 128), (5, 4096), (11, 5), (0, 0), (12, 1)):
            self.lib.cuFileSetParameterSizeT.argtypes = [ctypes.c_int, sz]
            self.rec("size_set[%d]=%d %s" % (i, v, phase), "cuFileSetParameterSizeT", i, v)
        self.lib.cuFileSetParameterBool.argtypes = [ctypes.c_int, b]
        for i in (5, 6, 12, 13, 14):
            self.rec("bool_set[%d] %s" % (i, phase), "cuFileSetParameterBool", i, True)
        for i, text in ((0, b"ERROR"), (2, self.work.encode()), (3, b"DC_V1"), (4, b"x")):
            self.rec("string_set[%d] %s" % (i, phase), "cuFileSetParameterString", i, ctypes.c_char_p(text))
        self.rec("string_set[NULL] %s" % phase, "cuFileSetParameterString", 0, None)
        arr_s, arr_c = (sz * 3)(4, 1024, 16384), (sz * 3)(128, 64, 64)
        self.rec("posix_slabs_set %s" % phase, "cuFileSetParameterPosixPoolSlabArray", arr_s, arr_c, 3)
        self.rec("posix_slabs_set len 0 %s" % phase, "cuFileSetParameterPosixPoolSlabArray", arr_s, arr_c, 0)
        g_s, g_c = (sz * 4)(1024, 8192, 16384, 65536), (sz * 4)(128, 8, 4, 2)
        self.rec("gpu_slabs_set %s" % phase, "cuFileSetParameterGpuBounceBufferSlabArray", g_s, g_c, 4)
        for fs, mask in ((4, 1), (4, 2), (15, 1)):
            self.rec("p2p_set[%d]=%d %s" % (fs, mask, phase), "cuFileDriverSetP2PFlags", fs, mask)
        self.lib.cuFileDriverSetPollMode.argtypes = [b, sz]
        self.rec("legacy poll(true,8) %s" % phase, "cuFileDriverSetPollMode", True, 8)
        size_max = (1 << 64) - 1
        # Beyond the ranges: SIZE_MAX (NVIDIA's 1.15: 5022 for the pinned size), the first value
        # whose byte count overflows, twice the H200's BAR1; each followed by a good value again,
        # so that what is staged stays the same whatever the answer.
        for name, v in (("MaxDirectIOSize", 1024), ("MaxDirectIOSize", 0), ("MaxDirectIOSize", 1 << 40),
                        ("MaxDirectIOSize", size_max), ("MaxDirectIOSize", 1024),
                        ("MaxCacheSize", size_max), ("MaxCacheSize", 131072),
                        ("MaxPinnedMemSize", size_max), ("MaxPinnedMemSize", 16),
                        ("MaxPinnedMemSize", size_max // 1024 + 1), ("MaxPinnedMemSize", 536870912),
                        ("MaxPinnedMemSize", 33554432)):
            getattr(self.lib, "cuFileDriverSet" + name).argtypes = [sz]
            self.rec("legacy %s(%d) %s" % (name, v, phase), "cuFileDriverSet" + name, v)
        self.rec("legacy poll(true,SIZE_MAX) %s" % phase, "cuFileDriverSetPollMode", True, size_max)
        self.rec("legacy poll(true,8) again %s" % phase, "cuFileDriverSetPollMode", True, 8)
        for v in (-1, 0, 3, 4):
            self.rec("stats_level_set(%d) %s" % (v, phase), "cuFileSetStatsLevel", v)

    def stats(self, phase):
        for what in ("Start", "Reset", "Stop", "Start"):
            self.rec("stats_%s %s" % (what.lower(), phase), "cuFileStats" + what)
            lvl = self.filled(4)
            self.rec("stats_level_get after stats_%s %s" % (what.lower(), phase), "cuFileGetStatsLevel", lvl,
                     out=(lvl,))
        for lvl, key in ((1, "l1"), (2, "l2"), (3, "l3")):
            s = self.filled(SIZES[key])
            self.rec("stats_%s %s" % (key, phase), "cuFileGetStatsL%d" % lvl, s, out=(s,))
        self.rec("stats_l1(NULL) %s" % phase, "cuFileGetStatsL1", None)

    def buffers(self):
        reg = lambda step, p, n, flags=0: self.rec("buf_register[%s]" % step, "cuFileBufRegister",
                                                   ctypes.c_void_p(p), ctypes.c_size_t(n), flags)
        dereg = lambda step, p: self.rec("buf_deregister[%s]" % step, "cuFileBufDeregister", ctypes.c_void_p(p))
        d = self.dev_alloc(1 << 20)
        reg("device", d, 1 << 20)
        reg("device again", d, 1 << 20)
        reg("device interior", d + 65536, 65536)
        reg("device past its allocation", d + 4096, 2 << 20)
        reg("device flags 1", d + 131072, 4096, 1)
        dereg("device interior", d + 65536)
        dereg("device flags 1", d + 131072)
        dereg("device unregistered", d + 8192)
        dereg("device", d)
        reg("NULL", 0, 4096)
        reg("length 0", d, 0)
        dereg("NULL", 0)
        pinned = self.pinned_alloc(1 << 20)
        reg("pinned", pinned, 1 << 20)
        dereg("pinned", pinned)
        pageable = ctypes.create_string_buffer(1 << 20)
        reg("pageable", ctypes.addressof(pageable), 1 << 20)
        dereg("pageable", ctypes.addressof(pageable))
        managed = self.managed_alloc(1 << 20)
        reg("managed", managed, 1 << 20)
        dereg("managed", managed)
        # One registration left for the final close to drop.
        reg("device kept", d, 1 << 20)
        self.kept = d

    def handles(self):
        def register(step, fd, kind=1, descr=True):
            dsc = CUfileDescr.of_fd(fd, kind)
            fh = ctypes.c_void_p()
            self.rec("handle_register[%s]" % step, "cuFileHandleRegister", ctypes.byref(fh),
                     ctypes.byref(dsc) if descr else None)
        fh = ctypes.c_void_p()
        self.rec("handle_register[NULL handle]", "cuFileHandleRegister", None, ctypes.byref(CUfileDescr.of_fd(0)))
        register("NULL descriptor", 0, descr=False)
        register("fd -1", -1)
        dfd = os.open(self.work, os.O_RDONLY | os.O_DIRECTORY)
        register("directory", dfd)
        os.close(dfd)
        path = os.path.join(self.work, "append.bin")
        with open(path, "wb") as f:
            f.write(b"\0" * 4096)
        afd = os.open(path, os.O_WRONLY | os.O_APPEND)
        register("O_APPEND", afd)
        os.close(afd)
        r, w = os.pipe()
        register("pipe", r)
        os.close(r)
        os.close(w)
        ffd = os.open(path, os.O_RDWR)
        register("win32 type", ffd, 2)
        register("userspace type", ffd, 3)
        register("type 7", ffd, 7)
        os.close(ffd)
        self.lib.cuFileHandleDeregister.argtypes = [ctypes.c_void_p]
        self.rec("handle_deregister[NULL]", "cuFileHandleDeregister", None, restype=None)
        self.rec("handle_deregister[forged]", "cuFileHandleDeregister", ctypes.c_void_p(0x1234), restype=None)
        del fh

    def data_path(self):
        buf = ctypes.create_string_buffer(4096)
        rw = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_longlong, ctypes.c_longlong]
        for name in ("cuFileRead", "cuFileWrite"):
            f = self.fn(name, ctypes.c_ssize_t)
            if f:
                f.argtypes = rw
            b = ctypes.addressof(buf)
            self.rec("%s[NULL handle]" % name.lower(), name, None, b, 4096, 0, 0, restype=ctypes.c_ssize_t)
            self.rec("%s[forged handle]" % name.lower(), name, 0x1234, b, 4096, 0, 0, restype=ctypes.c_ssize_t)
            self.rec("%s[size 0]" % name.lower(), name, 0x1234, b, 0, 0, 0, restype=ctypes.c_ssize_t)
            self.rec("%s[NULL buffer]" % name.lower(), name, 0x1234, None, 4096, 0, 0, restype=ctypes.c_ssize_t)
        iov = (IoVec * 1)(IoVec(ctypes.addressof(buf), 4096))
        for name in ("cuFileReadv", "cuFileWritev"):
            f = self.fn(name, ctypes.c_ssize_t)
            if f:
                f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_longlong, ctypes.c_uint]
            self.rec("%s[NULL handle]" % name[6:].lower(), name, None, iov, 1, 0, 0, restype=ctypes.c_ssize_t)
        bh = ctypes.c_void_p()
        for nr in (0, 1, 128, 256, 257):
            r = self.rec("batch_setup(%d)" % nr, "cuFileBatchIOSetUp", ctypes.byref(bh), nr)
            if r.get("status") == [0, 0]:
                self.lib.cuFileBatchIODestroy.argtypes = [ctypes.c_void_p]
                self.lib.cuFileBatchIODestroy.restype = None
                self.lib.cuFileBatchIODestroy(bh)
        self.rec("batch_cancel(NULL)", "cuFileBatchIOCancel", None)
        self.rec("stream_register(NULL,0)", "cuFileStreamRegister", None, 0)
        self.rec("stream_register(NULL,16)", "cuFileStreamRegister", None, 16)
        self.rec("stream_deregister(NULL)", "cuFileStreamDeregister", None)
        topo = os.path.join(self.work, "topology.json")
        for step, p in (("NULL", None), ("empty", b""), ("/", b"/"), ("missing dir", b"/nonexistent-dir/t.json"),
                        ("file", topo.encode())):
            self.rec("topology[%s]" % step, "cuFileExportPCIeTopology", p)
        if os.path.exists(topo):
            with open(topo) as f:
                self.records.append({"step": "topology[file] content", "text": f.read()})

    def run(self):
        self.cuda()
        v = self.filled(4)
        self.rec("version", "cuFileGetVersion", v, out=(v,))
        self.rec("version(NULL)", "cuFileGetVersion", None)
        self.use_count("use_count closed")
        self.watch = True
        self.rec("close_v2 at 0", "cuFileDriverClose_v2")
        self.rec("close (legacy) at 0", "cuFileDriverClose")
        self.params("closed", gpu=False)
        self.setters("closed")
        self.params("closed after setting", gpu=False)
        self.stats("closed")
        self.gpu_calls("closed")
        self.watch = False
        self.rec("open", "cuFileDriverOpen")
        self.rec("open again", "cuFileDriverOpen")
        self.use_count("use_count open")
        self.rec("close back to 1", "cuFileDriverClose_v2")
        self.params("open")
        self.setters("open")
        self.rec("stats_level_set(3) open", "cuFileSetStatsLevel", 3)
        self.stats("open")
        self.buffers()
        self.handles()
        self.data_path()
        self.stats("open after registrations")
        self.rec("close", "cuFileDriverClose_v2")
        self.use_count("use_count after close")
        self.rec("buf_deregister[after the final close]", "cuFileBufDeregister", ctypes.c_void_p(self.kept))
        self.watch = True
        self.params("closed again")
        self.watch = False
        self.risky()
        return self.records

    def staging(self):
        """A fresh process that stages values before anything asks the GPU (no implicit open
        before them), opens, reads them back and closes: whether each library applies what was
        staged, apart from the main sequence (where NVIDIA's 1.15 had loaded its configuration
        in an implicit open before its setters ran). Step names start with "staging: "."""
        self.prefix = "staging: "
        self.cuda()
        self.watch = True
        sz = ctypes.c_size_t
        self.lib.cuFileSetParameterSizeT.argtypes = [ctypes.c_int, sz]
        self.lib.cuFileSetParameterBool.argtypes = [ctypes.c_int, ctypes.c_bool]
        self.lib.cuFileDriverSetPollMode.argtypes = [ctypes.c_bool, sz]
        self.lib.cuFileDriverSetMaxDirectIOSize.argtypes = [sz]
        self.rec("size_set[9]=64", "cuFileSetParameterSizeT", 9, 64)
        self.rec("size_set[5]=4096", "cuFileSetParameterSizeT", 5, 4096)
        self.rec("bool_set[5]", "cuFileSetParameterBool", 5, True)
        self.rec("string_set[2]", "cuFileSetParameterString", 2, ctypes.c_char_p(self.work.encode()))
        self.rec("string_set[0]=INFO", "cuFileSetParameterString", 0, ctypes.c_char_p(b"INFO"))
        self.rec("legacy poll(true,8)", "cuFileDriverSetPollMode", True, 8)
        self.rec("legacy MaxDirectIOSize(1024)", "cuFileDriverSetMaxDirectIOSize", 1024)

        def getters(phase):
            for i in (5, 9, 10):
                v = self.filled(8)
                self.rec("size_get[%d] %s" % (i, phase), "cuFileGetParameterSizeT", i, v, out=(v,))
            for i in (0, 5):
                v = self.filled(1)
                self.rec("bool_get[%d] %s" % (i, phase), "cuFileGetParameterBool", i, v, out=(v,))
            # The log directory (longer than 8 bytes) also into buffers too short for it: cut, as
            # the log file path is, or refused, as the logging level is?
            for i, n in ((0, 64), (2, 64), (2, 8), (2, 1)):
                v = self.filled(n)
                self.rec("string_get[%d] len %d %s" % (i, n, phase), "cuFileGetParameterString", i, v, n, out=(v,))
            p = self.filled(56)
            self.rec("properties %s" % phase, "cuFileDriverGetProperties", p, out=(p,))

        getters("closed")
        self.watch = False
        self.rec("open", "cuFileDriverOpen")
        getters("open")
        bh = ctypes.c_void_p()
        for nr in (64, 65, 128):
            r = self.rec("batch_setup(%d)" % nr, "cuFileBatchIOSetUp", ctypes.byref(bh), nr)
            if r.get("status") == [0, 0]:
                self.lib.cuFileBatchIODestroy.argtypes = [ctypes.c_void_p]
                self.lib.cuFileBatchIODestroy.restype = None
                self.lib.cuFileBatchIODestroy(bh)
        self.rec("close", "cuFileDriverClose_v2")
        self.watch = True
        getters("closed again")
        return self.records

    def risky(self):
        """Last, as they may end a process (NVIDIA's 1.15 dies with SIGSEGV in
        cuFileBatchIOSetUp(NULL, n), so that is the very last): what ran before is kept either
        way, and the step a process died in is named."""
        self.rec("open (last steps)", "cuFileDriverOpen")
        buf = ctypes.create_string_buffer(4096)
        size, off, boff, nb = ctypes.c_size_t(4096), ctypes.c_longlong(0), ctypes.c_longlong(0), ctypes.c_ssize_t(0)
        self.rec("read_async[NULL size]", "cuFileReadAsync", None, buf, None, ctypes.byref(off), ctypes.byref(boff),
                 ctypes.byref(nb), None)
        self.rec("read_async[NULL bytes]", "cuFileReadAsync", None, buf, ctypes.byref(size), ctypes.byref(off),
                 ctypes.byref(boff), None, None)
        n = ctypes.c_uint(1)
        self.rec("batch_status(NULL)", "cuFileBatchIOGetStatus", None, 0, ctypes.byref(n), None, None)
        self.rec("batch_submit(NULL)", "cuFileBatchIOSubmit", None, 1, None, 0)
        self.rec("buf_register[unmapped]", "cuFileBufRegister", ctypes.c_void_p(0xDEAD0000), ctypes.c_size_t(4096), 0)
        self.rec("buf_deregister[unmapped]", "cuFileBufDeregister", ctypes.c_void_p(0xDEAD0000))
        freed = self.dev_alloc(1 << 20)
        self.cu.cuMemFree_v2(ctypes.c_ulonglong(freed))
        self.rec("buf_register[freed device]", "cuFileBufRegister", ctypes.c_void_p(freed), ctypes.c_size_t(1 << 20), 0)
        self.rec("buf_deregister[freed device]", "cuFileBufDeregister", ctypes.c_void_p(freed))
        self.rec("close (last steps)", "cuFileDriverClose_v2")
        self.rec("open (the last step)", "cuFileDriverOpen")
        self.rec("batch_setup(NULL)", "cuFileBatchIOSetUp", None, 4)


# ---- the parent -----------------------------------------------------------------------------------

def header_strings(path):
    """code -> message of a cufile.h's CUFILE_OP entries."""
    text = open(path).read()
    out = {}
    for m in re.finditer(r"CUFILE_OP\(\s*(?:CUFILEOP_BASE_ERR\s*\+\s*)?(\d+)\s*,\s*(\w+)\s*,\s*([^)]*)\)", text):
        n = int(m.group(1))
        code = n if n == 0 or n > 5000 else 5000 + n
        out[code] = (m.group(2), m.group(3).strip())
    return out


def run_child(lib, label, sequence="main"):
    # The same prefix for both: the paths the parameters report then have the same length.
    work = tempfile.mkdtemp(prefix="cufile-compare-")
    jf = os.path.join(work, "records.json")
    env = dict(os.environ)
    env["CUFILE_LOGFILE_PATH"] = os.path.join(work, "cufile.log")
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", lib, "--work", work, "--json", jf,
                        "--sequence", sequence],
                       cwd=work, env=env, capture_output=True, text=True, timeout=300)
    recs, pending = [], None
    for line in open(jf) if os.path.exists(jf) else []:
        r = json.loads(line)
        if r.get("pending"):
            pending = r["step"]
        else:
            pending = None
            recs.append(r)
    if p.returncode != 0:
        # What ran is compared; a call begun and never returned is where the process died.
        print("%s (%s sequence): the process ended with status %d after %d steps (%s)\n%s\n%s" % (
            label, sequence, p.returncode, len(recs), "in: %s" % pending if pending else
            "last: %s" % (recs[-1]["step"] if recs else "none"), p.stdout[-2000:], p.stderr[-2000:]))
        if pending:
            recs.append({"step": pending, "died": p.returncode})
        else:
            recs.append({"step": "process exit", "ret": p.returncode})
    return recs, work


def normalised(recs, work):
    """The records with the process's own scratch directory written as <work> (the log path and
    log directory parameters name it), so that the two processes compare."""
    w = work.encode()
    for r in recs:
        for k in [k for k in r if k.startswith("out")]:
            r[k] = bytes.fromhex(r[k]).replace(w, b"<work>").hex()
        if "text" in r:
            r["text"] = r["text"].replace(work, "<work>")
    return recs, work


def show(r):
    if r is None:
        return "(no such step)"
    if "missing" in r:
        return "no symbol %s" % r["missing"]
    if "died" in r:
        rc = r["died"]
        return "the process died in this call (%s)" % ("signal %d" % -rc if rc < 0 else "exit %d" % rc)
    parts = []
    if "status" in r and r["status"] is not None:
        e, c = r["status"]
        parts.append("%s%s" % (CUFILE_ERRORS.get(e, str(e)) if e else "SUCCESS", " cu_err %d" % c if c else ""))
    if "ret" in r:
        parts.append("ret %s%s" % (r["ret"], " errno %d" % r["errno"] if "errno" in r else ""))
    if "text" in r:
        parts.append(repr(r["text"][:60]))
    for k in sorted(x for x in r if x.startswith("out")):
        h = r[k]
        b = bytes.fromhex(h)
        if len(b) <= 8:
            parts.append("%s=%s" % (k, h))
        else:
            last = max((i for i, x in enumerate(b) if x != 0xAB), default=-1)
            parts.append("%s: %d bytes, written up to byte %d" % (k, len(b), last + 1))
    return ", ".join(parts) or "(void)"


def first_diff(a, b):
    """Where two output records differ, as offsets."""
    out = []
    for k in sorted(set(a) | set(b)):
        if not k.startswith("out") or a.get(k) == b.get(k):
            continue
        x, y = bytes.fromhex(a.get(k, "")), bytes.fromhex(b.get(k, ""))
        offs = [i for i in range(max(len(x), len(y))) if x[i:i + 1] != y[i:i + 1]]
        out.append("%s differs at %d byte(s) from offset %d" % (k, len(offs), offs[0]))
    return "; ".join(out)


def known(step, x, y):
    for k, why in KNOWN.items():
        if (k.endswith("*") and step.startswith(k[:-1])) or k == step:
            if not callable(why):
                return why
            return why(step) if why.__code__.co_argcount == 1 else why(x, y)
    return None


def table(nv, us, nvidia):
    """The differences of two record lists: (number of identical steps, rows of step, NVIDIA,
    ours, reason); the error strings of NVIDIA's header (next to `nvidia`, if known) too."""
    by_nv = {r["step"]: r for r in nv}
    by_us = {r["step"]: r for r in us}
    steps = [r["step"] for r in nv] + [r["step"] for r in us if r["step"] not in by_nv]
    same, rows, notes = 0, [], []
    for s in steps:
        x, y = by_nv.get(s), by_us.get(s)
        if x == y:
            same += 1
            continue
        why = known(s, x, y) or ("NEW" if not (x and y and "missing" in x) else "absent from NVIDIA's version")
        detail = first_diff(x or {}, y or {})
        rows.append((s, show(x), show(y), why + (" [" + detail + "]" if detail else "")))
    # Error strings: NVIDIA's header next to its library against ours.
    nv_h = nvidia and os.path.join(os.path.dirname(os.path.dirname(nvidia)), "include", "cufile.h")
    if nv_h and os.path.exists(nv_h):
        a_s, b_s = header_strings(nv_h), header_strings(os.path.join(ROOT, "include", "cufile.h"))
        for code in sorted(set(a_s) | set(b_s)):
            if a_s.get(code) != b_s.get(code):
                rows.append(("error string %d" % code, str(a_s.get(code)), str(b_s.get(code)),
                             "NVIDIA's header is 1.15's; ours is 1.19's" if code >= 5039 else "NEW"))
            else:
                same += 1
    else:
        notes.append("(NVIDIA's cufile.h not found at %s: error strings not compared)" % nv_h)
    return same, rows, notes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvidia")
    ap.add_argument("--ours", default=os.path.join(ROOT, ".gpu/lib/libcufile.so.0"))
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--from-json", help="tabulate the records of an earlier run (its --json file) again, "
                                        "with the reasons of this script; nothing is run")
    ap.add_argument("--child")
    ap.add_argument("--sequence", default="main", choices=("main", "staging"))
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.child:
        child = Child(a.child, a.work, a.json)
        child.staging() if a.sequence == "staging" else child.run()
        return 0
    out_dir = os.environ.get("OUT", "./gpu-out")
    if a.from_json:
        d = json.load(open(a.from_json))
        nv, us, nvidia = d["nvidia"], d["ours"], a.nvidia
        logs = "(records of %s)" % a.from_json
    else:
        nvidia = a.nvidia or find_libcufile()
        if not nvidia or not os.path.exists(nvidia):
            print("NVIDIA's libcufile.so.0 not found (pass --nvidia PATH)")
            return 2
        if not os.path.exists(a.ours):
            print("ours not found: %s (see scripts/gpu/cufile_consumers.sh for the build)" % a.ours)
            return 2
        nv, nv_work = normalised(*run_child(nvidia, "nvidia"))
        us, us_work = normalised(*run_child(a.ours, "ours"))
        if not nv or not us:
            return 2
        # The staging sequence, each in a fresh process of its own; its steps are prefixed.
        nv_s, nv_s_work = normalised(*run_child(nvidia, "nvidia", "staging"))
        us_s, us_s_work = normalised(*run_child(a.ours, "ours", "staging"))
        nv, us = nv + nv_s, us + us_s
        logs = "logs: %s/cufile.log and %s/cufile.log (NVIDIA), %s/cufile.log and %s/cufile.log (ours)" % (
            nv_work, nv_s_work, us_work, us_s_work)
    os.makedirs(out_dir, exist_ok=True)
    out = a.out or os.path.join(out_dir, "cufile_compare.txt")
    jpath = a.json or os.path.join(out_dir, "cufile_compare.json")
    same, rows, notes = table(nv, us, nvidia)
    lines = ["cuFile side by side: NVIDIA %s against ours %s" % (nvidia, a.ours)] + notes
    lines.append("%d steps identical, %d differ (%d not explained: NEW)" % (
        same, len(rows), sum(1 for r in rows if r[3].startswith("NEW"))))
    w = [max(len(r[i]) for r in rows + [("step", "NVIDIA", "ours", "reason")]) for i in range(3)]
    w = [min(x, 60) for x in w]
    fmt = "| %%-%ds | %%-%ds | %%-%ds | %%s |" % tuple(w)
    lines.append(fmt % ("step", "NVIDIA", "ours", "reason"))
    lines.append(fmt % tuple("-" * x for x in w + [6]))
    for r in rows:
        lines.append(fmt % (r[0][:60], r[1][:60], r[2][:60], r[3]))
    lines.append(logs)
    text = "\n".join(lines)
    print(text)
    open(out, "w").write(text + "\n")
    if not a.from_json:
        json.dump({"nvidia": nv, "ours": us}, open(jpath, "w"), indent=1)
    return 0

if __name__ == "__main__":
    sys.exit(main())
