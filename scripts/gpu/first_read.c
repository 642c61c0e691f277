/* Target T11, the first-call cost, on an NVIDIA machine: what a fresh process pays for its first
 * large read, and what the pieces of the engine's set-up cost the CUDA driver here.
 *
 *   first_read first FILE [SIZE]   one fresh process: the CUDA context and a device buffer made
 *                                  first (as any GPU application has them), then the clock runs
 *                                  over hipFileHandleRegister (which opens the driver) and one
 *                                  hipFileRead of SIZE bytes (default 1 GiB) from offset 0; then
 *                                  the same read again in the same process, warm
 *   first_read pinprobe            what pinned host memory, streams, events and threads cost:
 *                                  32 x 4 MiB by cuMemHostAlloc (one thread, then 16 threads),
 *                                  by mmap + MAP_POPULATE + cuMemHostRegister (same two ways),
 *                                  with huge pages asked for (16 threads), mmap + MAP_POPULATE
 *                                  alone (both ways),
 *                                  16 streams with 2 events each, 15 threads started and joined;
 *                                  the same 128 MiB as one huge-page slab touched by 16 threads
 *                                  (then by one) and registered with one call; 32 buffers
 *                                  carved out of one region mapped before, each touched and
 *                                  registered on its own by 16 threads
 *   first_read pageprobe FILE      copies from pageable memory: 1 GiB in 4 MiB cuMemcpyHtoD
 *                                  calls from 1, 4, 10 and 16 threads, out of anonymous memory
 *                                  and out of FILE mapped (its pages cached)
 *
 * Each prints one RESULT line (baselines.c's layout). Build on the GPU machine:
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -pthread scripts/gpu/first_read.c -Iinclude -I/usr/local/cuda/include \
 *       -L.gpu/lib -lhipfile -Wl,-rpath,$PWD/.gpu/lib -L/usr/local/cuda/lib64/stubs -lcuda -o /tmp/first_read
 */
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hipfile.h"

#define CK(x)                                                                    \
    do {                                                                         \
        CUresult r_ = (x);                                                       \
        if (r_ != CUDA_SUCCESS) {                                                \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, r_); \
            exit(2);                                                             \
        }                                                                        \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static CUcontext g_ctx;

static void cuda_up(void) {
    CUdevice dev;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&g_ctx, dev));
    CK(cuCtxSetCurrent(g_ctx));
}

static int first(const char *path, size_t size) {
    cuda_up();
    CUdeviceptr d;
    CK(cuMemAlloc(&d, size));
    CK(cuMemsetD8(d, 0, size));
    CK(cuCtxSynchronize());
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    hipFileDescr_t descr;
    memset(&descr, 0, sizeof descr);
    descr.type = hipFileHandleTypeOpaqueFD;
    descr.handle.fd = fd;
    hipFileHandle_t fh;

    double t0 = now();
    hipFileError_t e = hipFileHandleRegister(&fh, &descr);
    double t1 = now();
    if (e.err != hipFileSuccess) {
        fprintf(stderr, "hipFileHandleRegister: %d\n", (int)e.err);
        return 3;
    }
    ssize_t n = hipFileRead(fh, (void *)(uintptr_t)d, size, 0, 0);
    double t2 = now();
    if (n != (ssize_t)size) {
        fprintf(stderr, "first hipFileRead: %zd of %zu\n", n, size);
        return 3;
    }
    n = hipFileRead(fh, (void *)(uintptr_t)d, size, 0, 0);
    double t3 = now();
    if (n != (ssize_t)size) {
        fprintf(stderr, "second hipFileRead: %zd of %zu\n", n, size);
        return 3;
    }
    /* The data: the file's first and last 8 bytes against the device's. */
    unsigned char want[16], got[16];
    if (pread(fd, want, 8, 0) != 8 || pread(fd, want + 8, 8, (off_t)size - 8) != 8) {
        perror("pread");
        return 2;
    }
    CK(cuMemcpyDtoH(got, d, 8));
    CK(cuMemcpyDtoH(got + 8, d + size - 8, 8));
    const char *verify = memcmp(want, got, 16) == 0 ? "ok" : "MISMATCH";
    hipFileHandleDeregister(fh);
    printf("RESULT mode=first_read threads=1 chunk=%zu bytes=%zu seconds=%.6f gbps=%.3f cold=0 "
           "register_ms=%.2f read_ms=%.2f second_gbps=%.3f verify=%s\n",
           size, size, t2 - t0, size / (t2 - t0) / 1e9, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
           size / (t3 - t2) / 1e9, verify);
    return verify[0] == 'o' ? 0 : 4;
}

/* ---- pinprobe ------------------------------------------------------------------------------ */

enum { N_BUF = 32, BUF = 4 << 20, THREADS = 16 };
static void *g_bufs[N_BUF];
static int g_way; /* 0: cuMemHostAlloc, 1: mmap + populate + cuMemHostRegister, 2: the same
                    * with transparent huge pages asked for, 3: mmap + populate only, 4: carved
                    * out of one huge-page region mapped before (no mmap per buffer), touched and
                    * registered one by one */
static char *g_region;

static void pin_one(int i) {
    if (g_way == 4) {
        char *p = g_region + (size_t)i * BUF;
        for (size_t o = 0; o < BUF; o += 4096) p[o] = 0;
        CK(cuMemHostRegister(p, BUF, CU_MEMHOSTREGISTER_PORTABLE));
        g_bufs[i] = p;
    } else if (g_way == 0) {
        CK(cuMemHostAlloc(&g_bufs[i], BUF, CU_MEMHOSTALLOC_PORTABLE));
    } else if (g_way == 2) {
        /* 2 MiB-aligned, huge pages asked for, then touched (a huge page is zeroed at once). */
        char *raw = mmap(NULL, BUF + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) {
            perror("mmap");
            exit(2);
        }
        char *p = (char *)(((uintptr_t)raw + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
        madvise(p, BUF, MADV_HUGEPAGE);
        for (size_t o = 0; o < BUF; o += 4096) p[o] = 0;
        CK(cuMemHostRegister(p, BUF, CU_MEMHOSTREGISTER_PORTABLE));
        g_bufs[i] = p;
    } else {
        void *p = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            exit(2);
        }
        if (g_way == 1) CK(cuMemHostRegister(p, BUF, CU_MEMHOSTREGISTER_PORTABLE));
        g_bufs[i] = p;
    }
}

static void unpin_all(void) {
    for (int i = 0; i < N_BUF; i++) {
        if (g_way == 0) {
            CK(cuMemFreeHost(g_bufs[i]));
        } else if (g_way == 4) {
            CK(cuMemHostUnregister(g_bufs[i]));
        } else {
            if (g_way != 3) CK(cuMemHostUnregister(g_bufs[i]));
            if (g_way != 2) munmap(g_bufs[i], BUF); /* way 2's aligned mappings are left */
        }
    }
}

static void *pin_worker(void *arg) {
    int t = (int)(intptr_t)arg;
    CK(cuCtxSetCurrent(g_ctx));
    for (int i = t; i < N_BUF; i += THREADS) pin_one(i);
    return NULL;
}

static void *nothing(void *arg) { return arg; }

static double pin_run(int way, int threads) {
    g_way = way;
    char *raw = NULL;
    size_t span = (size_t)N_BUF * BUF + (2 << 20);
    if (way == 4) {
        /* The region is reserved and advised outside the clock: a pool would do it once. */
        raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) {
            perror("mmap");
            exit(2);
        }
        g_region = (char *)(((uintptr_t)raw + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
        madvise(g_region, (size_t)N_BUF * BUF, MADV_HUGEPAGE);
    }
    double t0 = now();
    if (threads == 1) {
        for (int i = 0; i < N_BUF; i++) pin_one(i);
    } else {
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, pin_worker, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    }
    double dt = now() - t0;
    unpin_all();
    if (raw) munmap(raw, span);
    return dt;
}

/* The same 128 MiB as one slab: one 2 MiB-aligned mapping with huge pages asked for, touched by
 * `threads` threads (each its share), then registered with one call (register = 0: touch only).
 * The two phases' times come back in ms[0] (touch) and ms[1] (register). */
struct slab_share { char *p; size_t len; };
static void *slab_touch(void *arg) {
    struct slab_share *s = arg;
    for (size_t o = 0; o < s->len; o += 4096) s->p[o] = 0;
    return NULL;
}
static void slab_run(int threads, int reg, double ms[2]) {
    size_t len = (size_t)N_BUF * BUF;
    char *raw = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    char *p = (char *)(((uintptr_t)raw + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
    double t0 = now();
    madvise(p, len, MADV_HUGEPAGE);
    pthread_t th[THREADS];
    struct slab_share sh[THREADS];
    for (int t = 0; t < threads; t++) {
        sh[t].p = p + len / threads * t;
        sh[t].len = len / threads;
        pthread_create(&th[t], NULL, slab_touch, &sh[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    double t1 = now();
    if (reg) CK(cuMemHostRegister(p, len, CU_MEMHOSTREGISTER_PORTABLE));
    double t2 = now();
    ms[0] = (t1 - t0) * 1e3;
    ms[1] = (t2 - t1) * 1e3;
    if (reg) CK(cuMemHostUnregister(p));
    munmap(raw, len + (2 << 20));
}

static int pinprobe(void) {
    cuda_up();
    double alloc1 = pin_run(0, 1), alloc16 = pin_run(0, THREADS);
    double reg1 = pin_run(1, 1), reg16 = pin_run(1, THREADS);
    double huge16 = pin_run(2, THREADS), carve16 = pin_run(4, THREADS), pop1 = pin_run(3, 1), pop16 = pin_run(3, THREADS);
    double t0 = now();
    CUstream s[THREADS];
    CUevent ev[2 * THREADS];
    for (int i = 0; i < THREADS; i++) {
        CK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate(&ev[2 * i], CU_EVENT_DISABLE_TIMING));
        CK(cuEventCreate(&ev[2 * i + 1], CU_EVENT_DISABLE_TIMING));
    }
    double streams = now() - t0;
    t0 = now();
    pthread_t th[THREADS - 1];
    for (int i = 0; i < THREADS - 1; i++) pthread_create(&th[i], NULL, nothing, NULL);
    for (int i = 0; i < THREADS - 1; i++) pthread_join(th[i], NULL);
    double threads = now() - t0;
    double slab16[2], slab1[2], touch16[2];
    slab_run(THREADS, 1, slab16);
    slab_run(1, 1, slab1);
    slab_run(THREADS, 0, touch16);
    printf("RESULT mode=slab threads=%d bytes=%d slab_16t_touch_ms=%.2f slab_16t_register_ms=%.2f "
           "slab_1t_touch_ms=%.2f slab_1t_register_ms=%.2f huge_touch_only_16t_ms=%.2f\n",
           THREADS, N_BUF * BUF, slab16[0], slab16[1], slab1[0], slab1[1], touch16[0]);
    printf("RESULT mode=pinprobe threads=%d chunk=%d bytes=%d seconds=%.6f gbps=%.3f "
           "hostalloc_1t_ms=%.2f hostalloc_16t_ms=%.2f register_1t_ms=%.2f register_16t_ms=%.2f "
           "hugepage_register_16t_ms=%.2f carved_register_16t_ms=%.2f populate_only_1t_ms=%.2f populate_only_16t_ms=%.2f "
           "streams_events_ms=%.2f threads_ms=%.2f\n",
           THREADS, BUF, N_BUF * BUF, alloc1, (double)N_BUF * BUF / alloc1 / 1e9, alloc1 * 1e3,
           alloc16 * 1e3, reg1 * 1e3, reg16 * 1e3, huge16 * 1e3, carve16 * 1e3, pop1 * 1e3, pop16 * 1e3, streams * 1e3,
           threads * 1e3);
    return 0;
}

/* ---- pageprobe ----------------------------------------------------------------------------- */
/* What copies from pageable (unregistered) memory reach: 1 GiB in 4 MiB cuMemcpyHtoD calls from
 * T threads (each its contiguous share), the source either anonymous memory faulted in before, or
 * FILE mapped with mmap (its pages in the page cache: a copy straight out of the cache). */
struct page_share { CUdeviceptr d; const char *src; size_t len; };
static void *page_copy(void *arg) {
    struct page_share *s = arg;
    CK(cuCtxSetCurrent(g_ctx));
    for (size_t o = 0; o < s->len; o += BUF) {
        size_t n = s->len - o < BUF ? s->len - o : BUF;
        CK(cuMemcpyHtoD(s->d + o, s->src + o, n));
    }
    return NULL;
}
static double page_run(CUdeviceptr d, const char *src, size_t len, int threads) {
    pthread_t th[THREADS];
    struct page_share sh[THREADS];
    double t0 = now();
    for (int t = 0; t < threads; t++) {
        size_t per = len / threads;
        sh[t] = (struct page_share){d + per * t, src + per * t, per};
        pthread_create(&th[t], NULL, page_copy, &sh[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    return len / (now() - t0) / 1e9;
}
static int pageprobe(const char *path) {
    cuda_up();
    size_t len = (size_t)1 << 30;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, len));
    char *anon = malloc(len);
    memset(anon, 1, len);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    char *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    int ts[] = {1, 4, 10, 16};
    for (int k = 0; k < 4; k++) {
        double a = page_run(d, anon, len, ts[k]);
        double m1 = page_run(d, map, len, ts[k]); /* first pass: the mapping's page faults too */
        double m2 = page_run(d, map, len, ts[k]);
        printf("RESULT mode=pageable threads=%d chunk=%d bytes=%zu anon_gbps=%.2f mmap_first_gbps=%.2f "
               "mmap_again_gbps=%.2f\n", ts[k], BUF, len, a, m1, m2);
        /* A fresh mapping for the next thread count, so its first pass faults again. */
        munmap(map, len);
        map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "pageprobe") == 0) return pageprobe(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "first") == 0) {
        return first(argv[2], argc >= 4 ? strtoull(argv[3], NULL, 0) : (size_t)1 << 30);
    }
    if (argc >= 2 && strcmp(argv[1], "pinprobe") == 0) return pinprobe();
    fprintf(stderr, "usage: %s first FILE [SIZE] | pinprobe | pageprobe FILE\n", argv[0]);
    return 2;
}
