#!/usr/bin/env python3
"""KvikIO peer benchmark (KvikIO 26.10 Python API, compat mode: page cache -> cupy device array).

For each KvikIO thread-pool size (default 1, 8, 16) a fresh worker process (the pool size is read at
import time) measures:
  warm   read of the whole file into a cupy device array in 1 GiB requests (best of --repeat)
  lat    4 KiB random reads from one Python thread into a 4 KiB device array (p50/p99)
  cold   the same whole-file read after dropping the page cache (one pass)
  write  write of the same bytes to a new file + os.fsync (durable), file removed afterwards
Prints RESULT lines (same layout as baselines.c): mode=kvikio_warm|kvikio_lat4k|kvikio_cold|kvikio_write.
If KvikIO cannot be imported the reason is printed and the script exits 0 (nothing measured).

usage: kvikio_bench.py --file F --write-file W [--lat-file L] [--threads 1,8,16] [--repeat 3]
                       [--size BYTES] [--req 1G] [--lat-ops 2000] [--tests warm,lat,cold,write]
                       [--extra] [--budget SECONDS] [--worker-timeout SECONDS]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpuutil  # noqa: E402

STAMP_XOR = 0x5A5A5A5A5A5A5A5A


def log(msg):
    print(msg, flush=True)


# ------------------------------------------------------------------------------------------------
# worker (runs in its own process)


def kvikio_defaults_dump(kvikio):
    out = {}
    d = getattr(kvikio, "defaults", None)
    names = ["compat_mode", "num_threads", "task_size", "gds_threshold", "bounce_buffer_size",
             "auto_direct_io_read", "auto_direct_io_write"]
    for n in names:
        try:
            v = d.get(n)
        except Exception:  # noqa: BLE001
            try:
                v = getattr(d, n)()
            except Exception as e:  # noqa: BLE001
                v = "n/a(%s)" % type(e).__name__
        out[n] = str(v)
    try:
        out["compat_mode_preferred"] = str(d.is_compat_mode_preferred())
    except Exception:  # noqa: BLE001
        pass
    return out


def apply_config(kvikio, nthreads, sets):
    """Set thread count, compat mode ON and extra properties through whatever API exists."""
    d = kvikio.defaults
    conf = {"num_threads": nthreads}
    try:
        conf["compat_mode"] = kvikio.CompatMode.ON
    except AttributeError:
        conf["compat_mode"] = True
    conf.update(sets)
    how = []
    if hasattr(d, "set"):
        try:
            d.set(conf)
            how.append("defaults.set")
            return ",".join(how)
        except Exception as e:  # noqa: BLE001
            log("warning: kvikio.defaults.set(%r) failed: %r; trying the *_reset API" % (conf, e))
    for key, val in conf.items():
        fn = getattr(d, key + "_reset", None)
        if fn is None and key == "num_threads":
            fn = getattr(d, "thread_pool_nthreads_reset", None)
        if fn is None:
            log("warning: no API to set %s (relying on the environment)" % key)
            continue
        try:
            fn(val)
            how.append(key + "_reset")
        except Exception as e:  # noqa: BLE001
            log("warning: %s_reset(%r) failed: %r" % (key, val, e))
    return ",".join(how) or "env-only"


def parse_sets(items):
    sets = {}
    for item in items or []:
        k, _, v = item.partition("=")
        if v.lower() in ("true", "on", "yes"):
            val = True
        elif v.lower() in ("false", "off", "no"):
            val = False
        else:
            try:
                val = int(gpuutil.parse_size(v))
            except ValueError:
                val = v
        sets[k] = val
    return sets


def worker(a):
    t_start = time.perf_counter()
    deadline = a.deadline or (time.time() + 1e9)

    def left():
        return deadline - time.time()

    try:
        import cupy
        import kvikio
        import kvikio.defaults  # noqa: F401
    except Exception:  # noqa: BLE001
        log("KVIKIO_IMPORT_FAILED")
        traceback.print_exc(file=sys.stdout)
        return 3
    log("info: kvikio %s (%s), cupy %s, import took %.2f s" % (
        getattr(kvikio, "__version__", "?"), os.path.dirname(kvikio.__file__), cupy.__version__,
        time.perf_counter() - t_start))
    if a.probe:
        api = {n: hasattr(kvikio.defaults, n) for n in ("set", "get", "num_threads_reset", "compat_mode_reset")}
        log("PROBE api=%s" % json.dumps(api))
        log("PROBE defaults=%s" % json.dumps(kvikio_defaults_dump(kvikio)))
        try:
            dev = cupy.cuda.Device(0)
            props = cupy.cuda.runtime.getDeviceProperties(0)
            log("PROBE device=%s cc=%s" % (props.get("name", b"?").decode(errors="replace")
                                          if isinstance(props.get("name"), bytes) else props.get("name"),
                                          dev.compute_capability))
        except Exception as e:  # noqa: BLE001
            log("PROBE device query failed: %r" % e)
        return 0

    nthreads = a.threads
    sets = parse_sets(a.set)
    how = apply_config(kvikio, nthreads, sets)
    conf = kvikio_defaults_dump(kvikio)
    log("CONFIG cfg=%s via=%s %s" % (a.cfg, how, " ".join("%s=%s" % kv for kv in conf.items())))
    if str(conf.get("num_threads")) not in (str(nthreads), "n/a"):
        log("warning: KvikIO reports num_threads=%s, wanted %d" % (conf.get("num_threads"), nthreads))
    cfg_tags = dict(cfg=a.cfg, task_size=conf.get("task_size"), compat=conf.get("compat_mode"),
                    dio_read=conf.get("auto_direct_io_read"), dio_write=conf.get("auto_direct_io_write"))

    fsize = os.path.getsize(a.file)
    size = min(fsize, a.size) if a.size else fsize
    req = a.req
    tests = [t for t in a.tests.split(",") if t]
    status = 0

    dev = cupy.empty(size, dtype=cupy.uint8)
    dev.fill(0)
    cupy.cuda.runtime.deviceSynchronize()

    def cpu_now():
        # CPU time of the whole process, every thread (KvikIO's pool included): target T13.
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime

    cpu_per_gib = []

    def read_pass(f):
        t0 = time.perf_counter()
        c0 = cpu_now()
        off = 0
        while off < size:
            n = min(req, size - off)
            got = f.read(dev[off:off + n], n, off)
            if got != n:
                raise RuntimeError("short read: %d of %d at %d" % (got, n, off))
            off += n
        cupy.cuda.runtime.deviceSynchronize()
        cpu_per_gib.append((cpu_now() - c0) / (size / (1 << 30)))
        return time.perf_counter() - t0

    def verify():
        """Compare a few pages of the device array with the file."""
        import random
        rnd = random.Random(7)
        fd = os.open(a.file, os.O_RDONLY)
        try:
            for _ in range(8):
                off = rnd.randrange(0, max(1, size // 4096)) * 4096
                n = min(4096, size - off)
                host = cupy.asnumpy(dev[off:off + n]).tobytes()
                if host != os.pread(fd, n, off):
                    return "MISMATCH@%d" % off
        finally:
            os.close(fd)
        return "ok"

    have_data = False
    with kvikio.CuFile(a.file, "r") as f:
        try:
            log("info: CuFile open_flags=0x%x direct_io_supported=%s" % (f.open_flags(), f.is_direct_io_supported()))
        except Exception:  # noqa: BLE001
            pass
        if "warm" in tests:
            est = size / 2e9 * (a.repeat + 1) + 5
            if left() < est:
                log("SKIP kvikio_warm threads=%d: %.0f s left, ~%.0f s needed" % (nthreads, left(), est))
            else:
                pct = gpuutil.resident_pct(a.file)
                log("info: warm: file resident %.1f%%" % pct)
                if pct < 99.0:
                    log("info: warm-up pass (file not fully in page cache): %.3f s" % read_pass(f))
                times = []
                del cpu_per_gib[:]
                for r in range(a.repeat):
                    t = read_pass(f)
                    times.append(t)
                    log("info: warm rep %d: %.3f s %.3f GB/s" % (r + 1, t, size / t / 1e9))
                have_data = True
                ver = verify()
                if ver != "ok":
                    status = 4
                log(gpuutil.result_line("kvikio_warm", nthreads, req, size, min(times), best_of=len(times),
                                        all=",".join("%.3f" % (size / t / 1e9) for t in times), verify=ver,
                                        cpu_s_per_gib="%.4f" % min(cpu_per_gib), **cfg_tags))
        if "lat" in tests:
            lat_file = a.lat_file or a.file
            lsize = os.path.getsize(lat_file)
            if a.lat_span:
                lsize = min(lsize, a.lat_span)
            npages = lsize // 4096
            small = cupy.empty(4096, dtype=cupy.uint8)
            import random
            rnd = random.Random(11)
            with kvikio.CuFile(lat_file, "r") as lf:
                if gpuutil.resident_pct(lat_file) < 99.0:
                    gpuutil.warm(lat_file, 4)
                for _ in range(200):
                    lf.read(small, 4096, rnd.randrange(npages) * 4096)
                lats = []
                pc = time.perf_counter_ns
                t0 = time.perf_counter()
                for _ in range(a.lat_ops):
                    off = rnd.randrange(npages) * 4096
                    s = pc()
                    got = lf.read(small, 4096, off)
                    lats.append(pc() - s)
                    if got != 4096:
                        raise RuntimeError("short 4 KiB read: %d" % got)
                wall = time.perf_counter() - t0
            lats.sort()
            log(gpuutil.result_line("kvikio_lat4k", nthreads, 4096, 4096 * len(lats), wall, ops=len(lats),
                                    p50_us="%.2f" % (gpuutil.percentile(lats, 0.5) / 1e3),
                                    p99_us="%.2f" % (gpuutil.percentile(lats, 0.99) / 1e3),
                                    avg_us="%.2f" % (sum(lats) / len(lats) / 1e3), span=lsize, **cfg_tags))
        if "cold" in tests:
            est = size / 0.8e9 + 10
            if left() < est:
                log("SKIP kvikio_cold threads=%d: %.0f s left, ~%.0f s needed" % (nthreads, left(), est))
            else:
                method = gpuutil.drop_cache(a.file)
                pct = gpuutil.resident_pct(a.file)
                log("info: cold: cache dropped (%s), file resident %.1f%%" % (method, pct))
                t = read_pass(f)
                have_data = True
                log(gpuutil.result_line("kvikio_cold", nthreads, req, size, t, drop=method,
                                        resident_before="%.1f" % pct, **cfg_tags))
                if pct > 5.0:
                    log("warning: cold run was not cold (%.1f%% resident)" % pct)
        if "write" in tests and not have_data:
            read_pass(f)  # the bytes to write: the file's own data
    if "write" in tests:
        est = size / 0.8e9 * a.write_repeat + 10
        if left() < est:
            log("SKIP kvikio_write threads=%d: %.0f s left, ~%.0f s needed" % (nthreads, left(), est))
        else:
            times = []
            for r in range(a.write_repeat):
                try:
                    os.unlink(a.write_file)
                except FileNotFoundError:
                    pass
                t0 = time.perf_counter()
                with kvikio.CuFile(a.write_file, "w") as wf:
                    off = 0
                    while off < size:
                        n = min(req, size - off)
                        got = wf.write(dev[off:off + n], n, off)
                        if got != n:
                            raise RuntimeError("short write: %d of %d" % (got, n))
                        off += n
                    tw = time.perf_counter() - t0
                    os.fsync(wf.fileno())
                t = time.perf_counter() - t0
                times.append(t)
                log("info: write rep %d: write %.3f s + fsync %.3f s = %.3f s, %.3f GB/s" % (
                    r + 1, tw, t - tw, t, size / t / 1e9))
            wsize = os.path.getsize(a.write_file)
            if wsize != size:
                log("warning: written file has %d bytes, expected %d" % (wsize, size))
                status = 4
            try:
                os.unlink(a.write_file)
            except OSError:
                pass
            log(gpuutil.result_line("kvikio_write", nthreads, req, size, min(times), best_of=len(times),
                                    all=",".join("%.3f" % (size / t / 1e9) for t in times), **cfg_tags))
    del dev
    return status


# ------------------------------------------------------------------------------------------------
# driver


def run_worker(a, nthreads, cfg, tests, sets, env_extra, timeout):
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["KVIKIO_COMPAT_MODE"] = "ON"
    env["KVIKIO_NTHREADS"] = str(nthreads)
    env["KVIKIO_NUM_THREADS"] = str(nthreads)
    env.update(env_extra)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--threads", str(nthreads), "--cfg", cfg,
           "--tests", tests, "--file", a.file, "--write-file", a.write_file, "--repeat", str(a.repeat),
           "--write-repeat", str(a.write_repeat), "--req", str(a.req), "--lat-ops", str(a.lat_ops),
           "--deadline", "%.0f" % (time.time() + timeout - 5)]
    if a.lat_file:
        cmd += ["--lat-file", a.lat_file]
    if a.lat_span:
        cmd += ["--lat-span", str(a.lat_span)]
    if a.size:
        cmd += ["--size", str(a.size)]
    for k, v in sets.items():
        cmd += ["--set", "%s=%s" % (k, v)]
    log("--- kvikio worker: threads=%d cfg=%s tests=%s timeout=%.0fs env=%s" % (
        nthreads, cfg, tests, timeout, {k: v for k, v in env.items() if k.startswith("KVIKIO_")}))
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = e.stdout or b"", "TIMEOUT"
    sys.stdout.write(out.decode(errors="replace") if isinstance(out, bytes) else (out or ""))
    log("--- kvikio worker threads=%d cfg=%s: rc=%s in %.1f s" % (nthreads, cfg, rc, time.perf_counter() - t0))
    if rc == "TIMEOUT":
        try:
            os.unlink(a.write_file)
        except OSError:
            pass
    return rc


def driver(a):
    t0 = time.time()
    deadline = t0 + a.budget
    # 1. can KvikIO be imported at all?
    env = dict(os.environ, PYTHONUNBUFFERED="1", KVIKIO_COMPAT_MODE="ON")
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "--probe", "--file", a.file,
                            "--write-file", a.write_file], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=min(120, a.budget), stdin=subprocess.DEVNULL)
        out, rc = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace"), "TIMEOUT"
    sys.stdout.write(out)
    if rc != 0:
        reason = "import failed" if "KVIKIO_IMPORT_FAILED" in out else "probe rc=%s" % rc
        last = [ln.strip() for ln in out.splitlines() if ln.strip()]
        detail = last[-1] if last else ""
        log("KVIKIO UNAVAILABLE: %s: %s" % (reason, detail))
        log("RESULT mode=kvikio_unavailable threads=0 chunk=0 bytes=0 seconds=0 gbps=0 reason=%s" %
            reason.replace(" ", "_"))
        return 0
    defaults = {}
    for ln in out.splitlines():
        if ln.startswith("PROBE defaults="):
            try:
                defaults = json.loads(ln.split("=", 1)[1])
            except ValueError:
                pass

    configs = []
    for t in [int(x) for x in a.threads.split(",") if x]:
        configs.append((t, "default", a.tests, {}, {}))
    if a.extra:
        configs.append((8, "task16M", "warm", {"task_size": 16 * gpuutil.MiB}, {"KVIKIO_TASK_SIZE": str(16 * gpuutil.MiB)}))
        configs.append((16, "task16M", "warm", {"task_size": 16 * gpuutil.MiB}, {"KVIKIO_TASK_SIZE": str(16 * gpuutil.MiB)}))
        configs.append((16, "dio_read", "cold", {"auto_direct_io_read": True}, {"KVIKIO_AUTO_DIRECT_IO_READ": "ON"}))
        flip = "false" if str(defaults.get("auto_direct_io_write", "")).lower() in ("true", "1", "on") else "true"
        configs.append((16, "dio_write_" + flip, "write", {"auto_direct_io_write": flip == "true"},
                        {"KVIKIO_AUTO_DIRECT_IO_WRITE": "ON" if flip == "true" else "OFF"}))
    failures = 0
    for (nthreads, cfg, tests, sets, env_extra) in configs:
        left = deadline - time.time()
        if left < 20:
            log("SKIP kvikio threads=%d cfg=%s: budget exhausted (%.0f s left)" % (nthreads, cfg, left))
            continue
        rc = run_worker(a, nthreads, cfg, tests, sets, env_extra, min(a.worker_timeout, left))
        if rc != 0:
            failures += 1
    log("kvikio_bench: %d worker(s) failed; total %.1f s" % (failures, time.time() - t0))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", required=True)
    ap.add_argument("--write-file", required=True)
    ap.add_argument("--lat-file")
    ap.add_argument("--lat-span", type=gpuutil.parse_size, default=0)
    ap.add_argument("--threads", default="1,8,16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write-repeat", type=int, default=1)
    ap.add_argument("--size", type=gpuutil.parse_size, default=0)
    ap.add_argument("--req", type=gpuutil.parse_size, default=gpuutil.GiB)
    ap.add_argument("--lat-ops", type=int, default=2000)
    ap.add_argument("--tests", default="warm,lat,cold,write")
    ap.add_argument("--extra", action="store_true", help="also tuned configs (task size, O_DIRECT)")
    ap.add_argument("--budget", type=float, default=240.0, help="seconds for the whole driver")
    ap.add_argument("--worker-timeout", type=float, default=150.0)
    # worker-only
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cfg", default="default", help=argparse.SUPPRESS)
    ap.add_argument("--set", action="append", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.threads = int(a.threads) if not a.probe else 0
        return worker(a)
    return driver(a)


if __name__ == "__main__":
    sys.exit(main())
