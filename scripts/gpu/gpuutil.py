#!/usr/bin/env python3
"""Small helpers shared by the GPU benchmark scripts (no third-party imports).

Also a command-line fallback for bench.sh when the C baselines could not be built:
  gpuutil.py mkfile PATH SIZE      write SIZE bytes of a repeated random 64 MiB block, fsync
  gpuutil.py dropcache [PATH]      drop the page cache (drop_caches, else fadvise DONTNEED)
  gpuutil.py resident PATH         page-cache residency of PATH in percent
  gpuutil.py warm PATH [THREADS]   read PATH into host memory unless already resident
"""
import ctypes
import ctypes.util
import os
import sys
import threading
import time

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


def parse_size(text):
    """'8G', '64M', '4K', '4096', '1GiB' -> bytes (binary multiples)."""
    s = str(text).strip()
    mult = 1
    for suffix in ("ib", "b"):
        if s.lower().endswith(suffix) and len(s) > len(suffix) and not s[-len(suffix) - 1].isdigit():
            s = s[: -len(suffix)]
            break
    units = {"k": KiB, "m": MiB, "g": GiB, "t": 1024 * GiB}
    if s and s[-1].lower() in units:
        mult = units[s[-1].lower()]
        s = s[:-1]
    return int(float(s) * mult)


def result_line(mode, threads, chunk, nbytes, seconds, **extra):
    """One machine-readable line, same layout as baselines.c."""
    gbps = nbytes / seconds / 1e9 if seconds and seconds > 0 else 0.0
    parts = [
        "RESULT",
        "mode=%s" % mode,
        "threads=%d" % threads,
        "chunk=%d" % chunk,
        "bytes=%d" % nbytes,
        "seconds=%.6f" % seconds,
        "gbps=%.3f" % gbps,
    ]
    for k, v in extra.items():
        if isinstance(v, float):
            v = "%.3f" % v
        v = str(v).replace(" ", "_")
        parts.append("%s=%s" % (k, v))
    return " ".join(parts)


def percentile(sorted_vals, q):
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, max(0, int(len(sorted_vals) * q)))
    return sorted_vals[i]


_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                               ctypes.c_long]
        _libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    return _libc


def resident_pct(path):
    """Percentage of the file's pages in the page cache (mmap + mincore); -1.0 on error."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return -1.0
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return 100.0
        lc = libc()
        addr = lc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
        if addr in (None, ctypes.c_void_p(-1).value):
            return -1.0
        try:
            ps = os.sysconf("SC_PAGE_SIZE")
            pages = (size + ps - 1) // ps
            vec = (ctypes.c_ubyte * pages)()
            if lc.mincore(ctypes.c_void_p(addr), size, vec) != 0:
                return -1.0
            raw = bytes(vec)
            resident = pages - raw.count(0)
            return 100.0 * resident / pages
        finally:
            lc.munmap(ctypes.c_void_p(addr), size)
    finally:
        os.close(fd)


def drop_cache(path=None):
    """Drop the page cache; returns the method that worked ('drop_caches', 'fadvise' or 'none')."""
    method = "none"
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        method = "drop_caches"
    except OSError as e:
        print("warning: cannot write /proc/sys/vm/drop_caches: %s" % e, file=sys.stderr)
    if path:
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                try:
                    os.fdatasync(fd)
                except OSError:
                    pass
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                if method == "none":
                    method = "fadvise"
            finally:
                os.close(fd)
        except OSError as e:
            print("warning: fadvise(%s): %s" % (path, e), file=sys.stderr)
    return method


def mkfile(path, size, threads=8, block=64 * MiB):
    """Write `size` bytes: a random 64 MiB block repeated, each 4 KiB page stamped with its offset."""
    base = bytearray(os.urandom(min(block, size) or 1))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    errors = []

    def work(idx):
        try:
            buf = bytearray(base)
            off = idx * len(base)
            while off < size:
                n = min(len(base), size - off)
                for p in range(0, n - 7, 4096):
                    buf[p:p + 8] = ((off + p) ^ 0x5A5A5A5A5A5A5A5A).to_bytes(8, "little")
                view = memoryview(buf)[:n]
                done = 0
                while done < n:
                    done += os.pwrite(fd, view[done:], off + done)
                off += threads * len(base)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t0 = time.perf_counter()
    ths = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    if errors:
        os.close(fd)
        raise errors[0]
    os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - t0


def warm(path, threads=16):
    before = resident_pct(path)
    if before >= 99.5:
        return before, before, 0.0
    size = os.path.getsize(path)
    per = max(4096, (size // threads) // 4096 * 4096)
    fd = os.open(path, os.O_RDONLY)

    def work(begin, end):
        off = begin
        while off < end:
            n = min(16 * MiB, end - off)
            got = os.pread(fd, n, off)
            if not got:
                break
            off += len(got)

    t0 = time.perf_counter()
    ths = []
    for i in range(threads):
        b = i * per
        e = size if i == threads - 1 else min(size, (i + 1) * per)
        if b >= size:
            break
        ths.append(threading.Thread(target=work, args=(b, e)))
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    os.close(fd)
    return before, resident_pct(path), time.perf_counter() - t0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 1
    cmd = argv[1]
    if cmd == "mkfile" and len(argv) >= 4:
        size = parse_size(argv[3])
        t = mkfile(argv[2], size)
        print(result_line("mkfile_py", 8, 64 * MiB, size, t))
        return 0
    if cmd == "dropcache":
        path = argv[2] if len(argv) > 2 else None
        m = drop_cache(path)
        pct = resident_pct(path) if path else -1.0
        print("DROPCACHE method=%s resident_pct=%.2f file=%s" % (m, pct, path or "-"))
        return 0 if m != "none" and pct <= 5.0 else 3
    if cmd == "resident" and len(argv) >= 3:
        pct = resident_pct(argv[2])
        print("RESIDENT pct=%.2f file=%s" % (pct, argv[2]))
        return 0 if pct >= 0 else 3
    if cmd == "warm" and len(argv) >= 3:
        thr = int(argv[3]) if len(argv) > 3 else 16
        b, a, t = warm(argv[2], thr)
        print("WARM resident_before=%.2f resident_after=%.2f seconds=%.3f" % (b, a, t))
        return 0 if a >= 95.0 else 5
    print(__doc__)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
