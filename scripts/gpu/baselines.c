/*
 * baselines.c - plain C reference programs for the hipfile benchmarks (scripts/gpu/bench.sh).
 *
 * Every figure here is what "plain code" gets on the same machine, file and memory, so that the
 * library's numbers can be read as ratios (the targets in the README).  CUDA driver API only.
 *
 * Build (GPU machine):
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -pthread -I/usr/local/cuda/include baselines.c -o baselines -lcuda
 * When <cuda.h> is not available (or -DBL_NO_CUDA_H is given) the few driver prototypes used are
 * declared below, with the same versioned symbol names that cuda.h maps them to, so the program also
 * compiles (gcc -fsyntax-only) on machines without CUDA.
 *
 * Usage: baselines [options] MODE [ARGS]
 *   -f FILE   data file (read modes), output file (write modes, mkfile)
 *   -s SIZE   bytes to use (default: the file's size; copy: 1G; write modes and mkfile: required)
 *   -r R      repetitions; the best is reported (default 3; copy: 5)
 *   -c        cold: drop the page cache before each repetition (drop_caches, else fadvise DONTNEED)
 *   -S        use one non-blocking CUDA stream per thread (cuMemcpy*Async + cuStreamSynchronize)
 *             instead of the legacy default stream (which serialises copies of all threads)
 *   -n OPS    operations per thread for lat4k/lat4kN (default 20000)
 *   -t TAG    label added to the RESULT lines (tag=TAG)
 * Modes:
 *   copy                     pinned and pageable host->device (and pinned device->host) bandwidth
 *   pread1 [CHUNK]           1 thread, pread CHUNK (default 64M) into pageable memory + cuMemcpyHtoD
 *   preadN N CHUNK           N threads, own contiguous region, pread into own pinned buffer + copy
 *   direct N CHUNK           as preadN with O_DIRECT (the cold-disk baseline)
 *   lat4k                    1 thread, random 4 KiB pread into pinned + 4 KiB copy: p50/p99
 *   lat4kN N                 N threads of lat4k: aggregate ops/s
 *   writeN N CHUNK           device->pinned cuMemcpyDtoH + pwrite, fdatasync at the end
 *   dwriteN N CHUNK          as writeN with O_DIRECT
 *   mmapreg N CHUNK          zero-copy experiment: mmap + cuMemHostRegister(READ_ONLY) per chunk +
 *                            copy + unregister (N threads); then the whole mapping registered once
 *                            (registration timed apart from the copies), then N regions registered
 *                            in parallel by N threads
 *   mkfile [N]               write SIZE bytes of a repeated random 64 MiB block (offset-stamped
 *                            pages) with N threads (default 8), fsync
 *   dropcache                drop the page cache (and fadvise the file); report residency
 *   resident                 report the page-cache residency of FILE
 *   warm [N]                 read FILE into host memory with N threads unless already resident
 * Output: one line per figure:
 *   RESULT mode=<m> threads=<n> chunk=<bytes> bytes=<total> seconds=<s> gbps=<GB/s> [...]
 * (GB = 1e9 bytes.)  Exit status 0 on success, non-zero on any failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if !defined(BL_NO_CUDA_H) && defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
#define BL_HAVE_CUDA_H 1
#endif
#endif

#ifndef BL_HAVE_CUDA_H
/* Minimal CUDA driver API declarations (ABI of libcuda.so.1, 64-bit). */
typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
#define CUDA_SUCCESS 0
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_MEMHOSTREGISTER_READ_ONLY 0x08
#define cuMemAlloc cuMemAlloc_v2
#define cuMemFree cuMemFree_v2
#define cuMemcpyHtoD cuMemcpyHtoD_v2
#define cuMemcpyDtoH cuMemcpyDtoH_v2
#define cuMemcpyHtoDAsync cuMemcpyHtoDAsync_v2
#define cuMemcpyDtoHAsync cuMemcpyDtoHAsync_v2
#define cuMemHostRegister cuMemHostRegister_v2
#define cuStreamDestroy cuStreamDestroy_v2
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGet(CUdevice *dev, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags);
CUresult cuMemFreeHost(void *p);
CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags);
CUresult cuMemHostUnregister(void *p);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cuStreamCreate(CUstream *s, unsigned int flags);
CUresult cuStreamDestroy_v2(CUstream s);
CUresult cuStreamSynchronize(CUstream s);
CUresult cuGetErrorName(CUresult r, const char **s);
CUresult cuGetErrorString(CUresult r, const char **s);
#endif

#define BL_ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED 113 /* CU_DEVICE_ATTRIBUTE_... */
#define BL_REG_READ_ONLY 0x08                         /* CU_MEMHOSTREGISTER_READ_ONLY */

#define KiB (1024ULL)
#define MiB (1024ULL * 1024ULL)
#define GiB (1024ULL * 1024ULL * 1024ULL)

/* ------------------------------------------------------------------------------------------ */
/* options and small helpers                                                                   */

static const char *opt_file = NULL;
static uint64_t opt_size = 0;
static int opt_repeat = -1;
static int opt_cold = 0;
static int opt_streams = 0;
static long opt_ops = 20000;
static const char *opt_tag = NULL;

static CUcontext g_ctx = NULL;
static CUdevice g_dev = 0;
static int g_cuda_up = 0;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "baselines: FATAL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static const char *cu_name(CUresult r) {
    const char *n = NULL;
    if (cuGetErrorName(r, &n) != CUDA_SUCCESS || !n) n = "?";
    return n;
}

static void cu_fail(const char *what, CUresult r, int line) {
    const char *s = NULL;
    if (cuGetErrorString(r, &s) != CUDA_SUCCESS || !s) s = "?";
    die("line %d: %s -> %d %s (%s)", line, what, (int)r, cu_name(r), s);
}

#define CK(call)                                                                                  \
    do {                                                                                          \
        CUresult ck_r_ = (call);                                                                  \
        if (ck_r_ != CUDA_SUCCESS) cu_fail(#call, ck_r_, __LINE__);                               \
    } while (0)

static double now_s(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) die("clock_gettime: %s", strerror(errno));
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t parse_size(const char *s) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) die("bad size '%s'", s);
    uint64_t mul = 1;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': mul = KiB; break;
        case 'm': case 'M': mul = MiB; break;
        case 'g': case 'G': mul = GiB; break;
        case 't': case 'T': mul = GiB * 1024ULL; break;
        case 'b': case 'B': mul = 1; break;
        default: die("bad size suffix in '%s'", s);
        }
        const char *rest = end + 1;
        if (*rest == 'i' || *rest == 'I') rest++;
        if (*rest == 'b' || *rest == 'B') rest++;
        if (*rest) die("bad size '%s'", s);
    }
    return (uint64_t)(v * (double)mul + 0.5);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) die("malloc(%zu) failed", n);
    return p;
}

static uint64_t xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static void fill_random(unsigned char *p, size_t n, uint64_t seed) {
    uint64_t s = seed ? seed : 0x9e3779b97f4a7c15ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = xorshift64(&s);
        memcpy(p + i, &v, 8);
    }
    for (; i < n; i++) p[i] = (unsigned char)xorshift64(&s);
}

static uint64_t file_size_fd(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) die("fstat: %s", strerror(errno));
    return (uint64_t)st.st_size;
}

static void pread_full(int fd, void *buf, size_t len, uint64_t off) {
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            die("pread(len=%zu, off=%" PRIu64 "): %s", len - done, off + done, strerror(errno));
        }
        if (r == 0) die("pread: unexpected end of file at offset %" PRIu64, off + done);
        done += (size_t)r;
    }
}

static void pwrite_full(int fd, const void *buf, size_t len, uint64_t off) {
    size_t done = 0;
    while (done < len) {
        ssize_t r = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            die("pwrite(len=%zu, off=%" PRIu64 "): %s", len - done, off + done, strerror(errno));
        }
        if (r == 0) die("pwrite wrote 0 bytes at offset %" PRIu64, off + done);
        done += (size_t)r;
    }
}

static int open_or_die(const char *path, int flags, int mode) {
    int fd = open(path, flags, mode);
    if (fd < 0) die("open(%s, 0x%x): %s", path, flags, strerror(errno));
    return fd;
}

/* Fraction (0..100) of FILE's pages in the page cache, through mmap + mincore; -1 on error. */
static double resident_pct(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    uint64_t size = file_size_fd(fd);
    if (size == 0) {
        close(fd);
        return 100.0;
    }
    long ps = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return -1;
    size_t pages = (size_t)((size + (uint64_t)ps - 1) / (uint64_t)ps);
    unsigned char *vec = malloc(pages);
    double pct = -1;
    if (vec && mincore(p, size, vec) == 0) {
        size_t n = 0;
        for (size_t i = 0; i < pages; i++) n += vec[i] & 1;
        pct = 100.0 * (double)n / (double)pages;
    }
    free(vec);
    munmap(p, size);
    return pct;
}

/* Drop the page cache. Returns the method used ("drop_caches", "fadvise" or "none"). */
static const char *drop_cache(const char *path) {
    const char *method = "none";
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd >= 0) {
        ssize_t w = write(fd, "3\n", 2);
        int e = errno;
        close(fd);
        if (w == 2) method = "drop_caches";
        else fprintf(stderr, "baselines: warning: write /proc/sys/vm/drop_caches: %s\n", strerror(e));
    } else {
        fprintf(stderr, "baselines: warning: open /proc/sys/vm/drop_caches: %s\n", strerror(errno));
    }
    if (path) {
        int f = open(path, O_RDONLY);
        if (f >= 0) {
            if (fdatasync(f) != 0 && errno != EINVAL && errno != EROFS)
                fprintf(stderr, "baselines: warning: fdatasync(%s): %s\n", path, strerror(errno));
            int r = posix_fadvise(f, 0, 0, POSIX_FADV_DONTNEED);
            if (r == 0 && strcmp(method, "none") == 0) method = "fadvise";
            else if (r != 0) fprintf(stderr, "baselines: warning: posix_fadvise: %s\n", strerror(r));
            close(f);
        }
    }
    return method;
}

static void cold_prepare(const char *path, int rep) {
    const char *m = drop_cache(path);
    double pct = resident_pct(path);
    fprintf(stderr, "info: rep %d: page cache dropped (%s), resident now %.1f%%\n", rep, m, pct);
    if (pct > 5.0) fprintf(stderr, "baselines: WARNING: file still %.1f%% resident: run is not cold\n", pct);
}

static void cuda_up(void) {
    if (g_cuda_up) return;
    int ver = 0;
    char name[256] = {0};
    CK(cuInit(0));
    CK(cuDriverGetVersion(&ver));
    CK(cuDeviceGet(&g_dev, 0));
    CK(cuDeviceGetName(name, (int)sizeof name - 1, g_dev));
    CK(cuDevicePrimaryCtxRetain(&g_ctx, g_dev));
    CK(cuCtxSetCurrent(g_ctx));
    fprintf(stderr, "info: CUDA driver %d.%d, device 0: %s\n", ver / 1000, (ver % 1000) / 10, name);
    g_cuda_up = 1;
}

static void print_result(const char *mode, int threads, uint64_t chunk, uint64_t bytes, double secs,
                         const char *extra) {
    double gbps = secs > 0 ? (double)bytes / secs / 1e9 : 0.0;
    printf("RESULT mode=%s threads=%d chunk=%" PRIu64 " bytes=%" PRIu64 " seconds=%.6f gbps=%.3f", mode,
           threads, chunk, bytes, secs, gbps);
    printf(" cold=%d stream=%s", opt_cold, opt_streams ? "own" : "legacy");
    if (opt_tag) printf(" tag=%s", opt_tag);
    if (extra && *extra) printf(" %s", extra);
    putchar('\n');
    fflush(stdout);
}

/* "a,b,c" list of per-repetition GB/s */
static void fmt_all(char *dst, size_t cap, const double *gbps, int n) {
    size_t off = 0;
    dst[0] = 0;
    for (int i = 0; i < n && off + 16 < cap; i++)
        off += (size_t)snprintf(dst + off, cap - off, "%s%.3f", i ? "," : "", gbps[i]);
}

static int repeats(int dflt) { return opt_repeat > 0 ? opt_repeat : dflt; }

static void need_file(void) {
    if (!opt_file) die("this mode needs -f FILE");
}

/* ------------------------------------------------------------------------------------------ */
/* copy                                                                                        */

static double time_copy_htod(CUdeviceptr d, const void *h, size_t n) {
    double t0 = now_s();
    CK(cuMemcpyHtoD(d, h, n));
    CK(cuStreamSynchronize(0));
    return now_s() - t0;
}

static int mode_copy(void) {
    uint64_t size = opt_size ? opt_size : GiB;
    int reps = repeats(5);
    cuda_up();
    CUdeviceptr d = 0;
    void *pinned = NULL;
    CK(cuMemAlloc(&d, size));
    CK(cuMemHostAlloc(&pinned, size, 0));
    fill_random(pinned, size, 1);
    char *pageable = xmalloc(size);
    fill_random((unsigned char *)pageable, size, 2);

    double best, t, g[64];
    int n = reps > 64 ? 64 : reps;
    char extra[1024], all[900];

    time_copy_htod(d, pinned, size); /* warm-up */
    best = 1e30;
    for (int i = 0; i < n; i++) {
        t = time_copy_htod(d, pinned, size);
        g[i] = (double)size / t / 1e9;
        if (t < best) best = t;
    }
    fmt_all(all, sizeof all, g, n);
    snprintf(extra, sizeof extra, "best_of=%d all=%s", n, all);
    print_result("copy_pinned", 1, size, size, best, extra);

    time_copy_htod(d, pageable, size);
    best = 1e30;
    for (int i = 0; i < n; i++) {
        t = time_copy_htod(d, pageable, size);
        g[i] = (double)size / t / 1e9;
        if (t < best) best = t;
    }
    fmt_all(all, sizeof all, g, n);
    snprintf(extra, sizeof extra, "best_of=%d all=%s", n, all);
    print_result("copy_pageable", 1, size, size, best, extra);

    CK(cuMemcpyDtoH(pinned, d, size));
    best = 1e30;
    for (int i = 0; i < n; i++) {
        double t0 = now_s();
        CK(cuMemcpyDtoH(pinned, d, size));
        CK(cuStreamSynchronize(0));
        t = now_s() - t0;
        g[i] = (double)size / t / 1e9;
        if (t < best) best = t;
    }
    fmt_all(all, sizeof all, g, n);
    snprintf(extra, sizeof extra, "best_of=%d all=%s", n, all);
    print_result("copy_d2h_pinned", 1, size, size, best, extra);

    free(pageable);
    CK(cuMemFreeHost(pinned));
    CK(cuMemFree(d));
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* parallel readers / writers                                                                  */

typedef struct {
    int idx;
    int fd;
    uint64_t begin, end; /* byte range of this thread */
    uint64_t chunk;
    void *buf;           /* pinned (or pageable for pread1) */
    CUdeviceptr dev;     /* base of the whole device buffer */
    CUstream stream;
    int write;           /* 0 read, 1 write */
    int register_mode;   /* mmapreg: 0 none, 1 per chunk, 2 region registered already (copy only) */
    const char *map;     /* mmapreg: base of the mapping */
    double t_reg, t_copy, t_unreg;
    int failed;
} worker_t;

static void copy_htod(worker_t *w, CUdeviceptr dst, const void *src, size_t n) {
    if (w->stream) {
        CK(cuMemcpyHtoDAsync(dst, src, n, w->stream));
        CK(cuStreamSynchronize(w->stream));
    } else {
        CK(cuMemcpyHtoD(dst, src, n));
    }
}

static void copy_dtoh(worker_t *w, void *dst, CUdeviceptr src, size_t n) {
    if (w->stream) {
        CK(cuMemcpyDtoHAsync(dst, src, n, w->stream));
        CK(cuStreamSynchronize(w->stream));
    } else {
        CK(cuMemcpyDtoH(dst, src, n));
    }
}

static void *rw_thread(void *arg) {
    worker_t *w = arg;
    CK(cuCtxSetCurrent(g_ctx));
    for (uint64_t off = w->begin; off < w->end; off += w->chunk) {
        size_t n = (size_t)((w->end - off) < w->chunk ? (w->end - off) : w->chunk);
        if (w->register_mode == 1) {
            void *p = (void *)(w->map + off);
            double t0 = now_s();
            CUresult r = cuMemHostRegister(p, n, BL_REG_READ_ONLY);
            double t1 = now_s();
            if (r != CUDA_SUCCESS) {
                fprintf(stderr, "baselines: cuMemHostRegister(%p, %zu, READ_ONLY) -> %d %s\n", p, n,
                        (int)r, cu_name(r));
                w->failed = (int)r;
                return NULL;
            }
            copy_htod(w, w->dev + off, p, n);
            double t2 = now_s();
            CK(cuMemHostUnregister(p));
            double t3 = now_s();
            w->t_reg += t1 - t0;
            w->t_copy += t2 - t1;
            w->t_unreg += t3 - t2;
        } else if (w->register_mode == 2) {
            copy_htod(w, w->dev + off, w->map + off, n);
        } else if (w->write) {
            copy_dtoh(w, w->buf, w->dev + off, n);
            pwrite_full(w->fd, w->buf, n, off);
        } else {
            pread_full(w->fd, w->buf, n, off);
            copy_htod(w, w->dev + off, w->buf, n);
        }
    }
    return NULL;
}

/* Split [0,size) into nthreads contiguous ranges whose boundaries are multiples of `align`. */
static void split_ranges(worker_t *ws, int nthreads, uint64_t size, uint64_t align) {
    uint64_t per = size / (uint64_t)nthreads;
    per -= per % align;
    if (per == 0) per = align;
    uint64_t off = 0;
    for (int i = 0; i < nthreads; i++) {
        ws[i].begin = off < size ? off : size;
        off += per;
        ws[i].end = (i == nthreads - 1 || off > size) ? size : off;
        if (ws[i].end < ws[i].begin) ws[i].end = ws[i].begin;
        off = ws[i].end;
    }
}

static double run_workers(worker_t *ws, int nthreads) {
    pthread_t *th = xmalloc(sizeof(pthread_t) * (size_t)nthreads);
    double t0 = now_s();
    for (int i = 0; i < nthreads; i++) {
        int e = pthread_create(&th[i], NULL, rw_thread, &ws[i]);
        if (e) die("pthread_create: %s", strerror(e));
    }
    for (int i = 0; i < nthreads; i++) {
        int e = pthread_join(th[i], NULL);
        if (e) die("pthread_join: %s", strerror(e));
    }
    double t = now_s() - t0;
    free(th);
    return t;
}

static void make_streams(worker_t *ws, int nthreads) {
    for (int i = 0; i < nthreads; i++) {
        ws[i].stream = NULL;
        if (opt_streams) CK(cuStreamCreate(&ws[i].stream, CU_STREAM_NON_BLOCKING));
    }
}

static void free_streams(worker_t *ws, int nthreads) {
    for (int i = 0; i < nthreads; i++)
        if (ws[i].stream) CK(cuStreamDestroy(ws[i].stream));
}

/* pread1 / preadN / direct */
static int mode_read(const char *mode, int nthreads, uint64_t chunk, int pinned, int odirect) {
    need_file();
    if (nthreads < 1 || nthreads > 1024) die("bad thread count %d", nthreads);
    if (chunk < 4096) die("chunk must be >= 4096");
    int fd = open_or_die(opt_file, O_RDONLY | (odirect ? O_DIRECT : 0), 0);
    uint64_t fsz = file_size_fd(fd);
    uint64_t size = opt_size ? opt_size : fsz;
    if (size > fsz) die("size %" PRIu64 " > file size %" PRIu64, size, fsz);
    if (odirect) {
        if (chunk % 4096) die("O_DIRECT needs a chunk multiple of 4096");
        size -= size % 4096;
    }
    if (size == 0) die("nothing to read");
    int reps = repeats(3);
    cuda_up();
    CUdeviceptr d = 0;
    CK(cuMemAlloc(&d, size));
    worker_t *ws = calloc((size_t)nthreads, sizeof *ws);
    if (!ws) die("calloc");
    split_ranges(ws, nthreads, size, 4096);
    for (int i = 0; i < nthreads; i++) {
        ws[i].idx = i;
        ws[i].fd = fd;
        ws[i].chunk = chunk;
        ws[i].dev = d;
        if (pinned) {
            CK(cuMemHostAlloc(&ws[i].buf, chunk, 0));
        } else {
            ws[i].buf = xmalloc(chunk);
        }
        memset(ws[i].buf, 0, chunk); /* fault the pages in before timing */
    }
    make_streams(ws, nthreads);
    fprintf(stderr, "info: %s: %d thread(s), chunk %" PRIu64 ", %" PRIu64 " bytes, %s memory%s, resident %.1f%%\n",
            mode, nthreads, chunk, size, pinned ? "pinned" : "pageable", odirect ? ", O_DIRECT" : "",
            resident_pct(opt_file));
    double best = 1e30, g[64];
    int n = reps > 64 ? 64 : reps;
    for (int r = 0; r < n; r++) {
        if (opt_cold) cold_prepare(opt_file, r + 1);
        double t = run_workers(ws, nthreads);
        g[r] = (double)size / t / 1e9;
        fprintf(stderr, "info: rep %d: %.3f s, %.3f GB/s\n", r + 1, t, g[r]);
        if (t < best) best = t;
    }
    char all[900], extra[1024];
    fmt_all(all, sizeof all, g, n);
    snprintf(extra, sizeof extra, "best_of=%d all=%s mem=%s odirect=%d", n, all, pinned ? "pinned" : "pageable",
             odirect);
    print_result(mode, nthreads, chunk, size, best, extra);
    free_streams(ws, nthreads);
    for (int i = 0; i < nthreads; i++) {
        if (pinned) CK(cuMemFreeHost(ws[i].buf));
        else free(ws[i].buf);
    }
    free(ws);
    CK(cuMemFree(d));
    close(fd);
    return 0;
}

/* writeN / dwriteN */
static int mode_write(const char *mode, int nthreads, uint64_t chunk, int odirect) {
    need_file();
    if (!opt_size) die("write modes need -s SIZE");
    if (nthreads < 1 || nthreads > 1024) die("bad thread count %d", nthreads);
    if (chunk < 4096 || (odirect && chunk % 4096)) die("bad chunk %" PRIu64, chunk);
    uint64_t size = opt_size;
    if (odirect) size -= size % 4096;
    int reps = repeats(1);
    cuda_up();
    CUdeviceptr d = 0;
    CK(cuMemAlloc(&d, size));
    {   /* fill the device buffer with random data (not a constant pattern) */
        uint64_t blk = 64 * MiB < size ? 64 * MiB : size;
        void *h = NULL;
        CK(cuMemHostAlloc(&h, blk, 0));
        fill_random(h, blk, 3);
        for (uint64_t off = 0; off < size; off += blk) {
            uint64_t n = size - off < blk ? size - off : blk;
            CK(cuMemcpyHtoD(d + off, h, n));
        }
        CK(cuMemFreeHost(h));
    }
    worker_t *ws = calloc((size_t)nthreads, sizeof *ws);
    if (!ws) die("calloc");
    split_ranges(ws, nthreads, size, 4096);
    for (int i = 0; i < nthreads; i++) {
        ws[i].idx = i;
        ws[i].chunk = chunk;
        ws[i].dev = d;
        ws[i].write = 1;
        CK(cuMemHostAlloc(&ws[i].buf, chunk, 0));
        memset(ws[i].buf, 0, chunk);
    }
    make_streams(ws, nthreads);
    double best = 1e30, best_sync = 0, g[64];
    int n = reps > 64 ? 64 : reps;
    for (int r = 0; r < n; r++) {
        int fd = open_or_die(opt_file, O_WRONLY | O_CREAT | O_TRUNC | (odirect ? O_DIRECT : 0), 0644);
        for (int i = 0; i < nthreads; i++) ws[i].fd = fd;
        double t0 = now_s();
        double tw = run_workers(ws, nthreads);
        double ts0 = now_s();
        if (fdatasync(fd) != 0) die("fdatasync(%s): %s", opt_file, strerror(errno));
        double t = now_s() - t0, tsync = now_s() - ts0;
        if (close(fd) != 0) die("close(%s): %s", opt_file, strerror(errno));
        g[r] = (double)size / t / 1e9;
        fprintf(stderr, "info: rep %d: write %.3f s + fdatasync %.3f s = %.3f s, %.3f GB/s\n", r + 1, tw, tsync,
                t, g[r]);
        if (t < best) {
            best = t;
            best_sync = tsync;
        }
    }
    char all[900], extra[1024];
    fmt_all(all, sizeof all, g, n);
    snprintf(extra, sizeof extra, "best_of=%d all=%s sync_s=%.3f odirect=%d", n, all, best_sync, odirect);
    print_result(mode, nthreads, chunk, size, best, extra);
    free_streams(ws, nthreads);
    for (int i = 0; i < nthreads; i++) CK(cuMemFreeHost(ws[i].buf));
    free(ws);
    CK(cuMemFree(d));
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* 4 KiB latency                                                                               */

typedef struct {
    int idx;
    int fd;
    uint64_t npages;
    long ops;
    void *buf;
    CUdeviceptr slot;
    CUstream stream;
    uint64_t *lat;
    pthread_barrier_t *bar;
} lat_t;

static void *lat_thread(void *arg) {
    lat_t *l = arg;
    CK(cuCtxSetCurrent(g_ctx));
    worker_t w;
    memset(&w, 0, sizeof w);
    w.stream = l->stream;
    uint64_t seed = 0x1234567ULL + (uint64_t)l->idx * 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 500; i++) { /* warm-up */
        uint64_t off = (xorshift64(&seed) % l->npages) * 4096;
        pread_full(l->fd, l->buf, 4096, off);
        copy_htod(&w, l->slot, l->buf, 4096);
    }
    int e = pthread_barrier_wait(l->bar);
    if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD) die("pthread_barrier_wait: %s", strerror(e));
    for (long i = 0; i < l->ops; i++) {
        uint64_t off = (xorshift64(&seed) % l->npages) * 4096;
        uint64_t t0 = now_ns();
        pread_full(l->fd, l->buf, 4096, off);
        copy_htod(&w, l->slot, l->buf, 4096);
        l->lat[i] = now_ns() - t0;
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int mode_lat(const char *mode, int nthreads) {
    need_file();
    if (nthreads < 1 || nthreads > 1024) die("bad thread count %d", nthreads);
    int fd = open_or_die(opt_file, O_RDONLY, 0);
    uint64_t fsz = file_size_fd(fd);
    uint64_t size = opt_size && opt_size < fsz ? opt_size : fsz;
    uint64_t npages = size / 4096;
    if (npages == 0) die("file too small");
    long ops = opt_ops > 0 ? opt_ops : 20000;
    cuda_up();
    fprintf(stderr, "info: %s: %d thread(s) x %ld ops of 4 KiB over %" PRIu64 " bytes, resident %.1f%%\n", mode,
            nthreads, ops, size, resident_pct(opt_file));
    CUdeviceptr d = 0;
    CK(cuMemAlloc(&d, 4096 * (size_t)nthreads));
    lat_t *ls = calloc((size_t)nthreads, sizeof *ls);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    uint64_t *all = calloc((size_t)nthreads * (size_t)ops, sizeof(uint64_t));
    if (!ls || !th || !all) die("calloc");
    pthread_barrier_t bar;
    if (pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1)) die("pthread_barrier_init");
    for (int i = 0; i < nthreads; i++) {
        ls[i].idx = i;
        ls[i].fd = fd;
        ls[i].npages = npages;
        ls[i].ops = ops;
        ls[i].slot = d + 4096 * (uint64_t)i;
        ls[i].lat = all + (size_t)i * (size_t)ops;
        ls[i].bar = &bar;
        CK(cuMemHostAlloc(&ls[i].buf, 4096, 0));
        if (opt_streams) CK(cuStreamCreate(&ls[i].stream, CU_STREAM_NON_BLOCKING));
        int e = pthread_create(&th[i], NULL, lat_thread, &ls[i]);
        if (e) die("pthread_create: %s", strerror(e));
    }
    int e = pthread_barrier_wait(&bar);
    if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD) die("pthread_barrier_wait: %s", strerror(e));
    double t0 = now_s();
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double wall = now_s() - t0;
    size_t total = (size_t)nthreads * (size_t)ops;
    double sum = 0;
    for (size_t i = 0; i < total; i++) sum += (double)all[i];
    qsort(all, total, sizeof(uint64_t), cmp_u64);
    double p50 = (double)all[total / 2] / 1000.0;
    double p99 = (double)all[(size_t)((double)total * 0.99)] / 1000.0;
    double p999 = (double)all[(size_t)((double)total * 0.999)] / 1000.0;
    double avg = sum / (double)total / 1000.0;
    char extra[512];
    snprintf(extra, sizeof extra,
             "ops=%zu iops=%.0f p50_us=%.2f p99_us=%.2f p999_us=%.2f avg_us=%.2f min_us=%.2f max_us=%.2f span=%" PRIu64,
             total, (double)total / wall, p50, p99, p999, avg, (double)all[0] / 1000.0,
             (double)all[total - 1] / 1000.0, size);
    print_result(mode, nthreads, 4096, (uint64_t)total * 4096, wall, extra);
    for (int i = 0; i < nthreads; i++) {
        CK(cuMemFreeHost(ls[i].buf));
        if (ls[i].stream) CK(cuStreamDestroy(ls[i].stream));
    }
    pthread_barrier_destroy(&bar);
    free(all);
    free(ls);
    free(th);
    CK(cuMemFree(d));
    close(fd);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* mmap + cuMemHostRegister(READ_ONLY) zero-copy experiment                                    */

static void *reg_thread(void *arg) {
    worker_t *w = arg;
    CK(cuCtxSetCurrent(g_ctx));
    CUresult r = cuMemHostRegister((void *)(w->map + w->begin), w->end - w->begin, BL_REG_READ_ONLY);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "baselines: parallel cuMemHostRegister(%" PRIu64 " bytes) -> %d %s\n", w->end - w->begin,
                (int)r, cu_name(r));
        w->failed = (int)r;
    }
    return NULL;
}

static void *unreg_thread(void *arg) {
    worker_t *w = arg;
    CK(cuCtxSetCurrent(g_ctx));
    if (!w->failed) CK(cuMemHostUnregister((void *)(w->map + w->begin)));
    return NULL;
}

static double run_fn(worker_t *ws, int nthreads, void *(*fn)(void *)) {
    pthread_t *th = xmalloc(sizeof(pthread_t) * (size_t)nthreads);
    double t0 = now_s();
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, fn, &ws[i])) die("pthread_create");
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    free(th);
    return now_s() - t0;
}

static int mode_mmapreg(int nthreads, uint64_t chunk) {
    need_file();
    if (nthreads < 1 || nthreads > 1024) die("bad thread count %d", nthreads);
    if (chunk < 4096 || chunk % 4096) die("chunk must be a multiple of 4096");
    int fd = open_or_die(opt_file, O_RDONLY, 0);
    uint64_t fsz = file_size_fd(fd);
    uint64_t size = opt_size && opt_size < fsz ? opt_size : fsz;
    size -= size % 4096;
    int reps = repeats(3);
    int status = 0;
    cuda_up();
    int ro_ok = -1;
    CUresult ar = cuDeviceGetAttribute(&ro_ok, (CUdevice_attribute)BL_ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED, g_dev);
    fprintf(stderr, "info: READ_ONLY_HOST_REGISTER_SUPPORTED = %d (query %s)\n", ro_ok, cu_name(ar));
    char *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) die("mmap(%s): %s", opt_file, strerror(errno));
    CUdeviceptr d = 0;
    CK(cuMemAlloc(&d, size));
    fprintf(stderr, "info: mmapreg: %d thread(s), chunk %" PRIu64 ", %" PRIu64 " bytes, resident %.1f%%\n", nthreads,
            chunk, size, resident_pct(opt_file));
    worker_t *ws = calloc((size_t)nthreads, sizeof *ws);
    if (!ws) die("calloc");
    split_ranges(ws, nthreads, size, chunk);
    for (int i = 0; i < nthreads; i++) {
        ws[i].idx = i;
        ws[i].chunk = chunk;
        ws[i].dev = d;
        ws[i].map = map;
    }
    make_streams(ws, nthreads);
    char extra[1024], all[900];
    double g[64];
    int n = reps > 64 ? 64 : reps;

    /* 1. per-chunk register + copy + unregister */
    {
        double best = 1e30, breg = 0, bcopy = 0, bunreg = 0;
        int failed = 0;
        for (int r = 0; r < n && !failed; r++) {
            for (int i = 0; i < nthreads; i++) {
                ws[i].register_mode = 1;
                ws[i].t_reg = ws[i].t_copy = ws[i].t_unreg = 0;
                ws[i].failed = 0;
            }
            double t = run_workers(ws, nthreads);
            double sreg = 0, scopy = 0, sunreg = 0;
            for (int i = 0; i < nthreads; i++) {
                if (ws[i].failed) failed = ws[i].failed;
                sreg += ws[i].t_reg;
                scopy += ws[i].t_copy;
                sunreg += ws[i].t_unreg;
            }
            g[r] = (double)size / t / 1e9;
            fprintf(stderr, "info: mmapreg rep %d: %.3f s, %.3f GB/s (thread-seconds: reg %.3f copy %.3f unreg %.3f)\n",
                    r + 1, t, g[r], sreg, scopy, sunreg);
            if (t < best) {
                best = t;
                breg = sreg;
                bcopy = scopy;
                bunreg = sunreg;
            }
        }
        if (failed) {
            printf("RESULT mode=mmapreg threads=%d chunk=%" PRIu64 " bytes=%" PRIu64 " seconds=0 gbps=0 error=%s%s%s\n",
                   nthreads, chunk, size, cu_name((CUresult)failed), opt_tag ? " tag=" : "", opt_tag ? opt_tag : "");
            fflush(stdout);
            status = 3;
        } else {
            fmt_all(all, sizeof all, g, n);
            snprintf(extra, sizeof extra, "best_of=%d all=%s reg_thread_s=%.3f copy_thread_s=%.3f unreg_thread_s=%.3f",
                     n, all, breg, bcopy, bunreg);
            print_result("mmapreg", nthreads, chunk, size, best, extra);
        }
    }

    /* 2. whole mapping registered once by one thread, then N threads copy, then unregister */
    {
        double t0 = now_s();
        CUresult r = cuMemHostRegister(map, size, BL_REG_READ_ONLY);
        double treg = now_s() - t0;
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "baselines: cuMemHostRegister(whole mapping, %" PRIu64 " bytes) -> %d %s after %.3f s\n",
                    size, (int)r, cu_name(r), treg);
            printf("RESULT mode=mmapreg_whole threads=%d chunk=%" PRIu64 " bytes=%" PRIu64
                   " seconds=0 gbps=0 error=%s%s%s\n",
                   nthreads, chunk, size, cu_name(r), opt_tag ? " tag=" : "", opt_tag ? opt_tag : "");
            fflush(stdout);
            status = 3;
        } else {
            double best = 1e30;
            for (int k = 0; k < n; k++) {
                for (int i = 0; i < nthreads; i++) ws[i].register_mode = 2;
                double t = run_workers(ws, nthreads);
                g[k] = (double)size / t / 1e9;
                if (t < best) best = t;
            }
            double t1 = now_s();
            CK(cuMemHostUnregister(map));
            double tunreg = now_s() - t1;
            fmt_all(all, sizeof all, g, n);
            snprintf(extra, sizeof extra, "best_of=%d all=%s reg_s=%.3f unreg_s=%.3f reg_gbps=%.3f total_gbps=%.3f", n,
                     all, treg, tunreg, (double)size / treg / 1e9, (double)size / (treg + best + tunreg) / 1e9);
            print_result("mmapreg_whole", nthreads, chunk, size, best, extra);
        }
    }

    /* 3. N regions registered in parallel (one per thread), then copied, then unregistered */
    {
        for (int i = 0; i < nthreads; i++) ws[i].failed = 0;
        double treg = run_fn(ws, nthreads, reg_thread);
        int failed = 0;
        for (int i = 0; i < nthreads; i++)
            if (ws[i].failed) failed = ws[i].failed;
        if (failed) {
            run_fn(ws, nthreads, unreg_thread);
            printf("RESULT mode=mmapreg_par threads=%d chunk=%" PRIu64 " bytes=%" PRIu64 " seconds=0 gbps=0 error=%s%s%s\n",
                   nthreads, chunk, size, cu_name((CUresult)failed), opt_tag ? " tag=" : "", opt_tag ? opt_tag : "");
            fflush(stdout);
            status = 3;
        } else {
            for (int i = 0; i < nthreads; i++) ws[i].register_mode = 2;
            double tcopy = run_workers(ws, nthreads);
            double tunreg = run_fn(ws, nthreads, unreg_thread);
            snprintf(extra, sizeof extra, "reg_s=%.3f unreg_s=%.3f reg_gbps=%.3f total_gbps=%.3f", treg, tunreg,
                     (double)size / treg / 1e9, (double)size / (treg + tcopy + tunreg) / 1e9);
            print_result("mmapreg_par", nthreads, chunk, size, tcopy, extra);
        }
    }
    free_streams(ws, nthreads);
    free(ws);
    CK(cuMemFree(d));
    munmap(map, size);
    close(fd);
    return status;
}

/* ------------------------------------------------------------------------------------------ */
/* file creation, cache control                                                                */

typedef struct {
    int fd;
    uint64_t begin, end;
    const unsigned char *block;
    uint64_t blk;
} mk_t;

static void *mk_thread(void *arg) {
    mk_t *m = arg;
    unsigned char *buf = xmalloc(m->blk);
    for (uint64_t off = m->begin; off < m->end; off += m->blk) {
        uint64_t n = m->end - off < m->blk ? m->end - off : m->blk;
        memcpy(buf, m->block, n);
        /* stamp each 4 KiB page with its file offset so misplaced data is detectable */
        for (uint64_t p = 0; p + 8 <= n; p += 4096) {
            uint64_t stamp = (off + p) ^ 0x5a5a5a5a5a5a5a5aULL;
            memcpy(buf + p, &stamp, 8);
        }
        pwrite_full(m->fd, buf, n, off);
    }
    free(buf);
    return NULL;
}

static int mode_mkfile(int nthreads) {
    need_file();
    if (!opt_size) die("mkfile needs -s SIZE");
    if (nthreads < 1 || nthreads > 256) die("bad thread count");
    uint64_t blk = 64 * MiB;
    unsigned char *block = xmalloc(blk);
    fill_random(block, blk, 0xC0FFEEULL);
    int fd = open_or_die(opt_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    mk_t *ms = calloc((size_t)nthreads, sizeof *ms);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    if (!ms || !th) die("calloc");
    uint64_t per = opt_size / (uint64_t)nthreads;
    per -= per % blk;
    if (per == 0) per = blk;
    double t0 = now_s();
    uint64_t off = 0;
    for (int i = 0; i < nthreads; i++) {
        ms[i].fd = fd;
        ms[i].block = block;
        ms[i].blk = blk;
        ms[i].begin = off < opt_size ? off : opt_size;
        off += per;
        ms[i].end = (i == nthreads - 1 || off > opt_size) ? opt_size : off;
        off = ms[i].end;
        if (pthread_create(&th[i], NULL, mk_thread, &ms[i])) die("pthread_create");
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double tw = now_s() - t0;
    if (fsync(fd) != 0) die("fsync: %s", strerror(errno));
    if (close(fd) != 0) die("close: %s", strerror(errno));
    double t = now_s() - t0;
    char extra[256];
    snprintf(extra, sizeof extra, "write_s=%.3f sync_s=%.3f", tw, t - tw);
    print_result("mkfile", nthreads, blk, opt_size, t, extra);
    free(block);
    free(ms);
    free(th);
    return 0;
}

static int mode_dropcache(void) {
    const char *m = drop_cache(opt_file);
    double pct = opt_file ? resident_pct(opt_file) : -1;
    printf("DROPCACHE method=%s resident_pct=%.2f file=%s\n", m, pct, opt_file ? opt_file : "-");
    fflush(stdout);
    if (strcmp(m, "none") == 0) return 3;
    if (opt_file && pct > 5.0) {
        fprintf(stderr, "baselines: file still %.1f%% resident after dropping the cache\n", pct);
        return 4;
    }
    return 0;
}

static int mode_resident(void) {
    need_file();
    double pct = resident_pct(opt_file);
    printf("RESIDENT pct=%.2f file=%s\n", pct, opt_file);
    fflush(stdout);
    return pct < 0 ? 3 : 0;
}

typedef struct {
    int fd;
    uint64_t begin, end;
} warm_t;

static void *warm_thread(void *arg) {
    warm_t *w = arg;
    size_t blk = 16 * MiB;
    char *buf = xmalloc(blk);
    for (uint64_t off = w->begin; off < w->end; off += blk) {
        size_t n = (size_t)(w->end - off < blk ? w->end - off : blk);
        pread_full(w->fd, buf, n, off);
    }
    free(buf);
    return NULL;
}

static int mode_warm(int nthreads) {
    need_file();
    double before = resident_pct(opt_file);
    if (before >= 99.5) {
        printf("WARM already resident_pct=%.2f\n", before);
        fflush(stdout);
        return 0;
    }
    int fd = open_or_die(opt_file, O_RDONLY, 0);
    uint64_t size = file_size_fd(fd);
    warm_t *ws = calloc((size_t)nthreads, sizeof *ws);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    if (!ws || !th) die("calloc");
    uint64_t per = size / (uint64_t)nthreads;
    per -= per % 4096;
    uint64_t off = 0;
    double t0 = now_s();
    for (int i = 0; i < nthreads; i++) {
        ws[i].fd = fd;
        ws[i].begin = off;
        off += per;
        ws[i].end = (i == nthreads - 1) ? size : off;
        if (pthread_create(&th[i], NULL, warm_thread, &ws[i])) die("pthread_create");
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double t = now_s() - t0;
    double after = resident_pct(opt_file);
    printf("WARM read bytes=%" PRIu64 " seconds=%.3f gbps=%.3f resident_before=%.2f resident_after=%.2f\n", size, t,
           (double)size / t / 1e9, before, after);
    fflush(stdout);
    free(ws);
    free(th);
    close(fd);
    return after >= 95.0 ? 0 : 5;
}

/* ------------------------------------------------------------------------------------------ */

static void usage(void) {
    fprintf(stderr,
            "usage: baselines [-f FILE] [-s SIZE] [-r REPEAT] [-c] [-S] [-n OPS] [-t TAG] MODE [ARGS]\n"
            "modes: copy | pread1 [CHUNK] | preadN N CHUNK | direct N CHUNK | lat4k | lat4kN N |\n"
            "       writeN N CHUNK | dwriteN N CHUNK | mmapreg N CHUNK | mkfile [N] | dropcache | resident | warm [N]\n");
    exit(1);
}

static int arg_int(int argc, char **argv, int i, int dflt) {
    if (i < argc) {
        char *end = NULL;
        long v = strtol(argv[i], &end, 10);
        if (!end || *end || v <= 0 || v > 4096) die("bad number '%s'", argv[i]);
        return (int)v;
    }
    if (dflt < 0) usage();
    return dflt;
}

static uint64_t arg_size(int argc, char **argv, int i, uint64_t dflt) {
    if (i < argc) return parse_size(argv[i]);
    if (dflt == 0) usage();
    return dflt;
}

int main(int argc, char **argv) {
    int c;
    while ((c = getopt(argc, argv, "+f:s:r:cSn:t:h")) != -1) {
        switch (c) {
        case 'f': opt_file = optarg; break;
        case 's': opt_size = parse_size(optarg); break;
        case 'r': opt_repeat = atoi(optarg); if (opt_repeat < 1) die("bad -r"); break;
        case 'c': opt_cold = 1; break;
        case 'S': opt_streams = 1; break;
        case 'n': opt_ops = atol(optarg); if (opt_ops < 1) die("bad -n"); break;
        case 't': opt_tag = optarg; break;
        default: usage();
        }
    }
    if (optind >= argc) usage();
    const char *mode = argv[optind];
    int a = optind + 1;
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (!strcmp(mode, "copy")) return mode_copy();
    if (!strcmp(mode, "pread1")) return mode_read("pread1", 1, arg_size(argc, argv, a, 64 * MiB), 0, 0);
    if (!strcmp(mode, "preadN"))
        return mode_read("preadN", arg_int(argc, argv, a, -1), arg_size(argc, argv, a + 1, 0), 1, 0);
    if (!strcmp(mode, "direct"))
        return mode_read("direct", arg_int(argc, argv, a, -1), arg_size(argc, argv, a + 1, 0), 1, 1);
    if (!strcmp(mode, "lat4k")) return mode_lat("lat4k", 1);
    if (!strcmp(mode, "lat4kN")) return mode_lat("lat4kN", arg_int(argc, argv, a, -1));
    if (!strcmp(mode, "writeN"))
        return mode_write("writeN", arg_int(argc, argv, a, -1), arg_size(argc, argv, a + 1, 0), 0);
    if (!strcmp(mode, "dwriteN"))
        return mode_write("dwriteN", arg_int(argc, argv, a, -1), arg_size(argc, argv, a + 1, 0), 1);
    if (!strcmp(mode, "mmapreg")) return mode_mmapreg(arg_int(argc, argv, a, -1), arg_size(argc, argv, a + 1, 0));
    if (!strcmp(mode, "mkfile")) return mode_mkfile(arg_int(argc, argv, a, 8));
    if (!strcmp(mode, "dropcache")) return mode_dropcache();
    if (!strcmp(mode, "resident")) return mode_resident();
    if (!strcmp(mode, "warm")) return mode_warm(arg_int(argc, argv, a, 16));
    fprintf(stderr, "baselines: unknown mode '%s'\n", mode);
    usage();
    return 1;
}
