#!/usr/bin/env python3
"""Summarise a bench.sh run: the targets table (the targets of the README's performance section), then every figure.

Reads
  RAW/*.out, RAW/*.err     RESULT lines of the C baselines, KvikIO, cuFile probe and dd steps
  RAW/hipfile_*.out        stdout of `hipfile bench --json` (JSON; gdsio-style lines as a fallback)
  RAW/steps.tsv            name, rc, seconds, status of each step (written by bench.sh)
Writes OUT/summary.txt and OUT/results.json, and prints the summary.

usage: summarize.py --raw DIR [--out DIR] [--log bench.log]
Units: GB/s = 1e9 bytes/s (hipfile's gib_per_s is converted: x 1.073741824).
"""
import argparse
import glob
import json
import math
import os
import re
import sys

GIB_TO_GB = 1.073741824

# Published figures (targets.md, 2026-11-29), used only when this run measured no such peer.
PUB = {
    "copy_pinned": 55.0,
    "kvikio_warm": 31.9,
    "disk_read": 1.70,
    "kvikio_write": 2.2,
    "lat4k_p50": 9.9,
    "lat4k_p99": 20.6,
}


# ------------------------------------------------------------------------------------------------
# parsing


def num(v):
    try:
        f = float(v)
        return f if math.isfinite(f) else None
    except (TypeError, ValueError):
        return None


def parse_result_line(line, src):
    toks = line.strip().split()
    if not toks or toks[0] != "RESULT":
        return None
    r = {"src": src}
    for t in toks[1:]:
        if "=" in t:
            k, _, v = t.partition("=")
            r[k] = v
        elif "mode" not in r:
            r["mode"] = t
    for k in list(r):
        if k in ("mode", "src", "tag", "cfg", "stream", "variant", "register", "driver_open", "verify", "all",
                 "error", "reason", "compat", "drop", "mem"):
            continue
        n = num(r[k])
        if n is not None:
            r[k] = n
    return r if "mode" in r else None


def read_results(files):
    out = []
    for fn in files:
        try:
            with open(fn, errors="replace") as f:
                for line in f:
                    if line.startswith("RESULT"):
                        r = parse_result_line(line, os.path.basename(fn))
                        if r:
                            out.append(r)
        except OSError:
            pass
    return out


def extract_json_objects(text):
    dec = json.JSONDecoder()
    objs = []
    i = 0
    while True:
        j = text.find("{", i)
        if j < 0:
            break
        try:
            obj, end = dec.raw_decode(text, j)
            if isinstance(obj, dict):
                objs.append(obj)
            i = end
        except ValueError:
            i = j + 1
    return objs


def find_key(d, names):
    if not isinstance(d, dict):
        return None
    for n in names:
        if n in d and num(d[n]) is not None:
            return num(d[n])
    return None


def hipfile_figures(path):
    """-> dict(gbps, gbps_reported, stat, p50_us, p99_us, avg_us, baselines, config, json, error)"""
    res = {"file": os.path.basename(path)}
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        res["error"] = str(e)
        return res
    objs = [o for o in extract_json_objects(text) if "hipfile" in o]
    if objs:
        obj = max(objs, key=lambda o: len(json.dumps(o)))
        res["json"] = obj
        h = obj.get("hipfile") or {}
        gib = find_key(h, ["gib_per_s", "throughput_gib_s", "gibps", "gib_s"])
        gb = find_key(h, ["gb_per_s", "gbps"])
        best_gib = find_key(h, ["best_gib_per_s", "max_gib_per_s", "gib_per_s_best", "gib_per_s_max"])
        runs = []
        for key in ("runs", "repeats", "samples"):
            for container in (h, obj):
                if isinstance(container.get(key), list):
                    for item in container[key]:
                        v = find_key(item, ["gib_per_s"]) if isinstance(item, dict) else num(item)
                        if v is not None:
                            runs.append(v)
            if runs:
                break
        if best_gib is not None:
            res["gbps"], res["stat"] = best_gib * GIB_TO_GB, "best (JSON)"
        elif runs:
            res["gbps"], res["stat"] = max(runs) * GIB_TO_GB, "best of %d runs" % len(runs)
        elif gib is not None:
            res["gbps"], res["stat"] = gib * GIB_TO_GB, "gib_per_s"
        elif gb is not None:
            res["gbps"], res["stat"] = gb, "gb_per_s"
        if gib is not None:
            res["gbps_reported"] = gib * GIB_TO_GB
        res["p50_us"] = find_key(h, ["p50_latency_us", "p50_us"])
        res["p99_us"] = find_key(h, ["p99_latency_us", "p99_us"])
        res["avg_us"] = find_key(h, ["avg_latency_us", "avg_us"])
        res["cpu_s_per_gib"] = find_key(h, ["cpu_s_per_gib"])
        bl = {}
        for name, b in (obj.get("baselines") or {}).items():
            if isinstance(b, dict):
                g = find_key(b, ["gib_per_s"])
                bl[name] = {"gbps": g * GIB_TO_GB if g is not None else find_key(b, ["gb_per_s", "gbps"]),
                            "p50_us": find_key(b, ["p50_latency_us"]), "p99_us": find_key(b, ["p99_latency_us"])}
        res["baselines"] = bl
        res["config"] = obj.get("config")
        return res
    # gdsio-style fallback: "... Throughput: 3.43 GiB/sec, Avg_Latency: 284.0 usecs ..."
    thr = re.findall(r"Throughput[^0-9]*([0-9.]+)\s*GiB/sec", text)
    lat = re.findall(r"Avg_Latency[^0-9]*([0-9.]+)\s*usecs", text)
    if thr:
        vals = [float(x) * GIB_TO_GB for x in thr]
        res["gbps"], res["stat"] = max(vals), "gdsio lines (best of %d)" % len(vals)
        if lat:
            res["avg_us"] = min(float(x) for x in lat)
        return res
    res["error"] = "no JSON object with a 'hipfile' key and no gdsio-style line"
    return res


def read_steps(raw):
    steps = []
    fn = os.path.join(raw, "steps.tsv")
    try:
        for line in open(fn):
            p = line.rstrip("\n").split("\t")
            if len(p) >= 4:
                steps.append({"name": p[0], "rc": p[1], "seconds": p[2], "status": p[3]})
    except OSError:
        pass
    return steps


# ------------------------------------------------------------------------------------------------
# selection


def ok(r):
    """A usable figure: no error, positive rate, data check (where one ran) passed."""
    return ("error" not in r and (num(r.get("gbps")) or 0) > 0
            and str(r.get("verify", "ok")).startswith("ok"))


def sel(results, mode, **conds):
    out = []
    for r in results:
        if r.get("mode") != mode or not ok(r):
            continue
        good = True
        for k, v in conds.items():
            if callable(v):
                if not v(r.get(k)):
                    good = False
            elif r.get(k) != v:
                good = False
        if good:
            out.append(r)
    return out


def best(rs, key="gbps"):
    rs = [r for r in rs if num(r.get(key)) is not None]
    return max(rs, key=lambda r: r[key]) if rs else None


def label(r):
    if r is None:
        return "-"
    m = r["mode"]
    bits = []
    if r.get("threads") not in (None, 0, 1) or m.startswith(("kvikio", "preadN", "direct", "lat4kN", "writeN", "dwriteN")):
        bits.append("%dt" % int(r.get("threads", 0) or 0))
    ch = r.get("chunk")
    if isinstance(ch, float) and ch >= 1 << 20 and not m.startswith("kvikio"):
        bits.append("%dM" % int(ch / (1 << 20)))
    if r.get("stream") == "own":
        bits.append("own-streams")
    if r.get("cfg") not in (None, "default"):
        bits.append(str(r["cfg"]))
    if r.get("tag") and m.startswith("dd"):
        bits.append(str(r["tag"]))
    return m + ("(" + ",".join(bits) + ")" if bits else "")


def fmt(v, unit="", nd=2):
    if v is None:
        return "-"
    return ("%." + str(nd) + "f%s") % (v, unit)


def short(v):
    if isinstance(v, float):
        return "%d" % v if v.is_integer() and abs(v) < 1e15 else "%.4g" % v
    return str(v)


def verdict(cond):
    if cond is None:
        return "N/A"
    return "PASS" if cond else "MISS"


# ------------------------------------------------------------------------------------------------


def build(raw, extra_logs):
    files = sorted(glob.glob(os.path.join(raw, "*.out")) + glob.glob(os.path.join(raw, "*.err")))
    results = read_results(files)
    if not results and extra_logs:
        results = read_results(extra_logs)
    hip = {}
    for fn in sorted(glob.glob(os.path.join(raw, "hipfile_*.out"))):
        step = os.path.basename(fn)[:-4]
        hip[step] = hipfile_figures(fn)
    return results, hip


def targets_table(results, hip):
    rows = []
    notes = []

    def hipval(step, key="gbps"):
        h = hip.get(step) or {}
        return h.get(key)

    def median(vals):
        vals = sorted(v for v in vals if v is not None)
        return vals[(len(vals) - 1) // 2] if vals else None

    # T1 ---------------------------------------------------------------------------------------
    ours = hipval("hipfile_T1")
    pinned = best(sel(results, "copy_pinned"))
    kv = best(sel(results, "kvikio_warm"))
    pin_v = pinned["gbps"] if pinned else PUB["copy_pinned"]
    kv_v = kv["gbps"] if kv else PUB["kvikio_warm"]
    need = max(0.95 * pin_v, 1.15 * kv_v)
    rows.append(dict(
        t="T1", what="8 GiB page cache -> device, 1 GiB reads", ours=fmt(ours, " GB/s"),
        peer="pinned copy %s%s, KvikIO %s %s" % (fmt(pin_v, ""), "" if pinned else " pub", fmt(kv_v, ""),
                                                 label(kv) if kv else "pub"),
        ratio="%s / %s" % (fmt(ours / pin_v if ours else None, "x"), fmt(ours / kv_v if ours else None, "x")),
        need=">= 0.95x the pinned copy and >= 1.15x KvikIO's best (%.1f GB/s)" % need,
        verdict=verdict(ours >= need if ours is not None else None)))

    # T1 of the previous build and this one in turns (bench.sh --previous) --------------------------
    sides = {side: [hipval("hipfile_T1ab_%s_%d" % (side, i)) for i in (1, 2, 3)] for side in ("prev", "this")}
    if any(v is not None for vs in sides.values() for v in vs):
        med = {side: median(vs) for side, vs in sides.items()}
        spread = [(max(v for v in vs if v is not None) - min(v for v in vs if v is not None)) / med[side]
                  for side, vs in sides.items() if med[side]]
        notes.append("T1 in turns, 3 rounds each (GB/s, best of each run): previous build %s, median %s; "
                     "this build %s, median %s; this/previous %s; one build's rounds spread up to %s" % (
                         "/".join(fmt(v, "") for v in sides["prev"]), fmt(med["prev"], ""),
                         "/".join(fmt(v, "") for v in sides["this"]), fmt(med["this"], ""),
                         fmt(med["this"] / med["prev"] if med["this"] and med["prev"] else None, "x", 3),
                         "%.1f%%" % (100 * max(spread)) if spread else "-"))

    # T2: interleaved, medians of three -----------------------------------------------------------
    ours = median([(hip.get("hipfile_T2_%d" % i) or {}).get("gbps") for i in (1, 2, 3)])
    readers = []
    for mode in ("preadN", "direct"):
        rs = [r for r in sel(results, mode, cold=1) if int(r.get("threads", 0)) == 16]
        m = median([r["gbps"] for r in rs])
        if m is not None:
            readers.append((m, "%s(16t) median of %d" % (mode, len(rs))))
    peer = max(readers) if readers else None
    rows.append(dict(
        t="T2", what="same file, cold, interleaved (median of 3 each)", ours=fmt(ours, " GB/s"),
        peer="%s %s" % (fmt(peer[0], " GB/s"), peer[1]) if peer else "-",
        ratio=fmt(ours / peer[0], "x") if ours and peer else "-",
        need=">= 0.95x the best cold reader",
        verdict=verdict(ours >= 0.95 * peer[0] if ours is not None and peer else None)))

    # T3 (kept) --------------------------------------------------------------------------------
    ours = hipval("hipfile_T3")
    kvw = best(sel(results, "kvikio_write"))
    kvw_v = kvw["gbps"] if kvw else PUB["kvikio_write"]
    rows.append(dict(
        t="T3", what="device -> 8 GiB file, durable", ours=fmt(ours, " GB/s"),
        peer="KvikIO %s GB/s %s" % (fmt(kvw_v, ""), label(kvw) if kvw else "pub"),
        ratio=fmt(ours / kvw_v, "x") if ours else "-",
        need=">= 1.2x KvikIO's best write",
        verdict=verdict(ours >= 1.2 * kvw_v if ours is not None else None)))

    # T4 ---------------------------------------------------------------------------------------
    p50, p99 = hipval("hipfile_T4", "p50_us"), hipval("hipfile_T4", "p99_us")
    lat = [r for r in results if r.get("mode") == "lat4k" and r.get("tag") == "lat" and num(r.get("p50_us")) is not None]
    plain = min(lat, key=lambda r: r["p50_us"]) if lat else None
    pp50 = plain["p50_us"] if plain else PUB["lat4k_p50"]
    pp99 = plain["p99_us"] if plain else PUB["lat4k_p99"]
    cond = None
    if p50 is not None and p99 is not None:
        cond = p50 <= pp50 and p99 <= pp99 + 1.0
    rows.append(dict(
        t="T4", what="4 KiB random reads, page cache, 1 thread",
        ours="p50 %s p99 %s" % (fmt(p50, "us", 1), fmt(p99, "us", 1)),
        peer="plain p50 %.1fus p99 %.1fus%s" % (pp50, pp99, "" if plain else " (pub)"),
        ratio="%s / %s" % ("%+.1fus" % (p50 - pp50) if p50 is not None else "-",
                           "%+.1fus" % (p99 - pp99) if p99 is not None else "-"),
        need="p50 <= plain, p99 <= plain + 1 us", verdict=verdict(cond)))

    # T5 ---------------------------------------------------------------------------------------
    ours = hipval("hipfile_T5")
    l16 = [r for r in sel(results, "lat4kN") if int(r.get("threads", 0)) == 16 and r.get("tag") == "lat"]
    plain = best(l16)
    rows.append(dict(
        t="T5", what="4 KiB random reads, 16 threads", ours="%s (%s kIOPS)" % (
            fmt(ours, " GB/s", 3), fmt(ours * 1e6 / 4096 if ours else None, "", 0)),
        peer="%s %s" % (fmt(plain["gbps"] if plain else None, " GB/s", 3), label(plain)),
        ratio=fmt(ours / plain["gbps"], "x") if ours and plain else "-",
        need=">= 1.0x 16 plain threads (best of legacy / own streams)",
        verdict=verdict(ours >= plain["gbps"] if ours is not None and plain else None)))

    # T7 ---------------------------------------------------------------------------------------
    ours, t1 = hipval("hipfile_T7"), hipval("hipfile_T1")
    rows.append(dict(
        t="T7", what="batch: 128 x 1 MiB random reads per submit", ours=fmt(ours, " GB/s"),
        peer="T1 %s" % fmt(t1, " GB/s"), ratio=fmt(ours / t1, "x") if ours and t1 else "-",
        need=">= 0.9x T1", verdict=verdict(ours >= 0.9 * t1 if ours is not None and t1 else None)))

    # T11 --------------------------------------------------------------------------------------
    firsts = sel(results, "first_read")
    ours = median([r["gbps"] for r in firsts])
    rows.append(dict(
        t="T11", what="first 1 GiB read of a fresh process (median of %d)" % len(firsts),
        ours=fmt(ours, " GB/s"), peer="T1 %s" % fmt(t1, " GB/s"),
        ratio=fmt(ours / t1, "x") if ours and t1 else "-",
        need=">= 0.8x T1", verdict=verdict(ours >= 0.8 * t1 if ours is not None and t1 else None)))
    for r in firsts:
        notes.append("T11 run: %.2f GB/s (register %.2f ms, read %.2f ms; the same read again %.2f GB/s)" % (
            r["gbps"], num(r.get("register_ms")) or 0, num(r.get("read_ms")) or 0, num(r.get("second_gbps")) or 0))
    for r in [x for x in results if x.get("mode") == "pinprobe"]:
        notes.append("set-up costs here: 32 x 4 MiB pinned by cuMemHostAlloc %s ms (16 threads %s ms), by "
                     "mmap + cuMemHostRegister %s ms (16 threads %s ms; on huge pages %s ms); populating alone "
                     "%s ms (16 threads %s ms); 16 streams + 32 events %s ms; 15 threads %s ms" % tuple(
                         short(r.get(k)) for k in (
                             "hostalloc_1t_ms", "hostalloc_16t_ms", "register_1t_ms", "register_16t_ms",
                             "hugepage_register_16t_ms", "populate_only_1t_ms", "populate_only_16t_ms",
                             "streams_events_ms", "threads_ms")))

    # T13 --------------------------------------------------------------------------------------
    ours = hipval("hipfile_T1", "cpu_s_per_gib")
    kvc = num(kv.get("cpu_s_per_gib")) if kv else None
    rows.append(dict(
        t="T13", what="CPU s (user + sys) per GiB moved in T1",
        ours=fmt(ours, " s/GiB", 3), peer="KvikIO %s %s" % (fmt(kvc, " s/GiB", 3), label(kv) if kv else "-"),
        ratio=fmt(ours / kvc, "x") if ours and kvc else "-",
        need="<= 0.8x KvikIO's at its best thread count",
        verdict=verdict(ours <= 0.8 * kvc if ours is not None and kvc else None)))

    kv_un = [r for r in results if r.get("mode") == "kvikio_unavailable"]
    if kv_un:
        notes.append("KvikIO UNAVAILABLE (%s): its rows use the published figures (pub)" % kv_un[0].get("reason"))
    elif not any(r.get("mode", "").startswith("kvikio_") for r in results):
        notes.append("KvikIO: no result (step skipped or failed): published figures used (pub)")
    bad = [r for r in results if not str(r.get("verify", "ok")).startswith("ok")]
    for r in bad:
        notes.append("DATA CHECK FAILED, figure ignored: %s %s verify=%s" % (r["mode"], label(r), r.get("verify")))
    cf = [r for r in results if r.get("mode") == "cufile"]
    if cf and all(r.get("reason") for r in cf):
        notes.append("cuFile: not probed (%s)" % cf[0]["reason"])
    elif cf:
        regs = sorted(set("%s/odirect=%s:%s" % (r.get("variant"), int(num(r.get("odirect")) or 0), r.get("register"))
                          for r in cf))
        okv = [x for x in regs if x.endswith(":ok")]
        cr = best(sel(results, "cufile_read"))
        notes.append("cuFile: %s" % ("registers the file in " + ", ".join(okv) +
                                     (" (read %.2f GB/s)" % cr["gbps"] if cr else "") if okv
                                     else "cannot register the file: " + "; ".join(regs)))
    else:
        notes.append("cuFile: no probe result")
    for step in ("hipfile_T1", "hipfile_T2_1", "hipfile_T3", "hipfile_T4", "hipfile_T5", "hipfile_T7"):
        h = hip.get(step)
        if h is None:
            notes.append("%s: no output file (step skipped or not run)" % step)
        elif h.get("error"):
            notes.append("%s: %s" % (step, h["error"]))
        elif h.get("stat"):
            notes.append("%s: figure = %s%s" % (step, h["stat"], (
                "; reported gib_per_s = %.2f GB/s" % h["gbps_reported"]) if h.get("gbps_reported") and
                abs(h["gbps_reported"] - h.get("gbps", 0)) > 1e-9 else ""))
    return rows, notes


def render(results, hip, steps):
    """Details first, the targets table last (the device returns only the tail of the output)."""
    out = []
    w = out.append
    rows, notes = targets_table(results, hip)

    w("-- hipfile bench runs (GB/s converted from gib_per_s)")
    for step, h in sorted(hip.items()):
        if h.get("error"):
            w("  %-26s ERROR %s" % (step, h["error"]))
            continue
        line = "  %-26s %s" % (step, fmt(h.get("gbps"), " GB/s"))
        if h.get("p50_us") is not None:
            line += "  p50 %s p99 %s avg %s" % (fmt(h.get("p50_us"), "us", 1), fmt(h.get("p99_us"), "us", 1),
                                                fmt(h.get("avg_us"), "us", 1))
        for name, b in (h.get("baselines") or {}).items():
            line += "  | %s %s" % (name, fmt(b.get("gbps"), " GB/s"))
        w(line)
        if h.get("config") is not None:
            w("  %-26s config %s" % ("", json.dumps(h["config"], separators=(",", ":"))[:180]))
    w("")

    w("-- all RESULT lines")
    w("  %-16s %-4s %-9s %-10s %-9s %-9s %s" % ("mode", "thr", "chunk", "GB/s", "p50us", "p99us", "details"))
    skip = {"mode", "threads", "chunk", "gbps", "p50_us", "p99_us", "bytes", "seconds", "src"}
    for r in results:
        ch = r.get("chunk")
        chs = "-"
        if isinstance(ch, float):
            chs = "%dM" % (ch / (1 << 20)) if ch >= 1 << 20 else ("%dK" % (ch / 1024) if ch >= 1024 else "%d" % ch)
        det = " ".join("%s=%s" % (k, short(v)) for k, v in r.items() if k not in skip)
        w("  %-16s %-4s %-9s %-10s %-9s %-9s %s" % (
            r.get("mode", "?")[:16], int(r["threads"]) if isinstance(r.get("threads"), float) else r.get("threads", "-"),
            chs, fmt(num(r.get("gbps")), "", 3), fmt(num(r.get("p50_us")), "", 1), fmt(num(r.get("p99_us")), "", 1),
            det[:150]))
    w("")
    if steps:
        w("-- steps (status/rc/seconds)")
        line = []
        for s in steps:
            line.append("%s:%s/%s/%ss" % (s["name"], s["status"], s["rc"], s["seconds"]))
        for i in range(0, len(line), 4):
            w("  " + "  ".join(line[i:i + 4]))
        bad = [s for s in steps if s["status"] not in ("ok", "skipped")]
        if bad:
            w("  FAILED/TIMED OUT: " + ", ".join("%s(%s)" % (s["name"], s["status"]) for s in bad))
        skipped = [s["name"] for s in steps if s["status"] == "skipped"]
        if skipped:
            w("  SKIPPED: " + ", ".join(skipped))
    w("")

    sweep = {k: v for k, v in hip.items() if k.startswith("hipfile_sweep_") and v.get("gbps")}
    if sweep:
        k = max(sweep, key=lambda x: sweep[x]["gbps"])
        t1 = (hip.get("hipfile_T1") or {}).get("gbps")
        notes.append("knob sweep (T1 workload, repeat 2): best %s = %.2f GB/s; T1 defaults = %s" % (
            k[len("hipfile_sweep_"):], sweep[k]["gbps"], fmt(t1, " GB/s")))
    w("=" * 112)
    w("hipfile GPU benchmark: round-two targets; GB/s = 1e9 B/s; pub = published figure")
    w("=" * 112)
    w("%-3s %-26s %-62s %-11s %s" % ("T", "ours", "best peer", "ours/peer", "verdict"))
    for r in rows:
        w("%-3s %-26s %-62s %-11s %s" % (r["t"], r["ours"], r["peer"][:62], r["ratio"], r["verdict"]))
    w("")
    for r in rows:
        w("  %s %s: need %s" % (r["t"], r["what"], r["need"]))
    for n in notes:
        w("  note: " + n)
    w("=" * 112)
    w("TARGETS: " + "  ".join("%s %s" % (r["t"], r["verdict"]) for r in rows))
    return "\n".join(out) + "\n", rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out")
    ap.add_argument("--log", action="append", default=[])
    a = ap.parse_args()
    results, hip = build(a.raw, a.log)
    steps = read_steps(a.raw)
    text, rows = render(results, hip, steps)
    sys.stdout.write(text)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "summary.txt"), "w") as f:
            f.write(text)
        with open(os.path.join(a.out, "results.json"), "w") as f:
            json.dump({"targets": rows, "results": results, "hipfile": hip, "steps": steps}, f, indent=1,
                      default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
