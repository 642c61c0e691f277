// Probe of the staging kernel (src/runtime/stage/stage.cu) on a CUDA machine: loads the PTX
// with cuModuleLoadData as the library does, and measures what the protocol moves through a
// 16 MiB ring with the host posting pre-filled segments (no file I/O), against
// cuMemcpyHtoDAsync / cuMemcpyDtoHAsync of the same bytes; also checks bytes at odd offsets and
// the cost of one launch. Build: gcc -O2 stage_probe.c -I$CUDA/include -lcuda -lpthread
//
// `stage_probe stage.ptx blocking`: whether driver calls an application (or the library, for a
// new stream's stage or a bounce buffer) makes from another thread return while a staging kernel
// waits for the host, or only after it finished. The kernel waits for a post that the main
// thread makes after 2 s, or as soon as the call returned. A call that blocks until then would
// deadlock the library wherever the thread that would post needs that call's lock or result.
// For a call that does not return, a third thread then asks cuStreamQuery and cuEventQuery of
// another stream (what a library thread waiting for the kernel does now and then): whether
// those get through while the call waits (`query_while_blocked`).
//
// `stage_probe stage.ptx flood`: how many kernel launches one stream takes while a staging
// kernel at its head waits, before cuLaunchKernel blocks (the launch queue is full), and whether
// cuStreamQuery / cuEventQuery of another stream from a third thread get through meanwhile.
#include <cuda.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

typedef struct { uint64_t dst, src, len; uint32_t serial, last; } Desc;
typedef struct { uint32_t done[32]; uint32_t reserved[32]; Desc ring[]; } Ctl;

static CUfunction fn;
static CUcontext ctx;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

typedef struct {
    CUstream st; Ctl *ctl; uint8_t *ring_mem; CUdeviceptr dev; size_t dev_len;
    uint32_t serial; unsigned grid; unsigned ring_len; size_t seg;
} Q;

static void q_init(Q *q, unsigned grid, size_t seg, size_t ring_bytes, size_t dev_len) {
    memset(q, 0, sizeof *q);
    CK(cuStreamCreate(&q->st, CU_STREAM_NON_BLOCKING));
    q->ring_len = 64; q->grid = grid; q->seg = seg;
    CK(cuMemHostAlloc((void **)&q->ctl, sizeof(Ctl) + 64 * sizeof(Desc), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    memset(q->ctl, 0, sizeof(Ctl) + 64 * sizeof(Desc));
    CK(cuMemHostAlloc((void **)&q->ring_mem, ring_bytes + 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    memset(q->ring_mem, 0x5a, ring_bytes + 64);
    CK(cuMemAlloc(&q->dev, dev_len)); q->dev_len = dev_len;
}

static void launch(Q *q) {
    void *ctlp = q->ctl; unsigned rl = q->ring_len;
    void *args[] = { &ctlp, &rl };
    if (q->grid > 1) CK(cuLaunchCooperativeKernel(fn, q->grid, 1, 1, 1024, 1, 1, 0, q->st, args));
    else CK(cuLaunchKernel(fn, 1, 1, 1, 1024, 1, 1, 0, q->st, args, NULL));
}

static uint32_t min_done(Q *q) {
    uint32_t m = UINT32_MAX;
    for (unsigned b = 0; b < q->grid; b++) {
        uint32_t v = __atomic_load_n(&q->ctl->done[b], __ATOMIC_ACQUIRE);
        if (v < m) m = v;
    }
    return m;
}

// Post one segment; waits until its ring entry and buffer slot are free.
static void post(Q *q, uint64_t dst, uint64_t src, uint64_t len, int last, unsigned slots) {
    uint32_t s = ++q->serial;
    uint32_t need = s > slots ? s - slots : 0;  // the slot's previous user must be done
    if (s > q->ring_len && s - q->ring_len > need) need = s - q->ring_len;
    while (min_done(q) < need) { }
    Desc *e = &q->ctl->ring[s % q->ring_len];
    e->dst = dst; e->src = src; e->len = len; e->last = last;
    __atomic_store_n(&e->serial, s, __ATOMIC_RELEASE);
}

// `ops` operations of `op` bytes each, `inflight` launched ahead; h2d: ring -> device.
static double run_kernel(Q *q, int h2d, size_t op, int ops, int inflight) {
    unsigned slots = (unsigned)((16u << 20) / q->seg);
    int launched = 0;
    double t0 = now();
    for (; launched < inflight && launched < ops; launched++) launch(q);
    for (int o = 0; o < ops; o++) {
        size_t nseg = (op + q->seg - 1) / q->seg;
        for (size_t i = 0; i < nseg; i++) {
            uint32_t s = q->serial + 1;
            uint64_t slot = (uint64_t)(uintptr_t)(q->ring_mem + (size_t)(s % slots) * q->seg);
            uint64_t dev = q->dev + (i * q->seg) % q->dev_len;
            size_t len = op - i * q->seg < q->seg ? op - i * q->seg : q->seg;
            if (h2d) post(q, dev, slot, len, i + 1 == nseg, slots);
            else post(q, slot, dev, len, 0, slots);
        }
        if (!h2d) post(q, 0, 0, 0, 1, slots);
        if (launched < ops) { launch(q); launched++; }
    }
    CK(cuStreamSynchronize(q->st));
    return (double)op * ops / (now() - t0) / 1e9;
}

static double run_memcpy(Q *q, int h2d, size_t op, int ops, uint8_t *pinned) {
    double t0 = now();
    for (int o = 0; o < ops; o++) {
        if (h2d) CK(cuMemcpyHtoDAsync(q->dev, pinned, op, q->st));
        else CK(cuMemcpyDtoHAsync(pinned, q->dev, op, q->st));
    }
    CK(cuStreamSynchronize(q->st));
    return (double)op * ops / (now() - t0) / 1e9;
}

typedef struct { Q q; int h2d; double gbs; } Par;
static void *par_main(void *a) { Par *p = a; CK(cuCtxSetCurrent(ctx)); p->gbs = run_kernel(&p->q, p->h2d, 64u << 20, 16, 8); return NULL; }

// The calls of the blocking probe, each from its own thread while the kernel waits.
static const char *call_names[] = {
    "cuMemAlloc 8 MiB", "cuMemFree", "cuMemHostAlloc 16 MiB", "cuMemHostRegister 16 MiB",
    "cuMemHostRegister 16 MiB DEVICEMAP", "cuMemHostUnregister", "cuMemFreeHost",
    "cuStreamCreate", "cuEventRecord+Query, other stream", "cuMemcpyHtoD 4 KiB (sync)",
};
#define NCALLS (int)(sizeof call_names / sizeof call_names[0])
static CUdeviceptr pre_dev;
static void *pre_host, *pre_alloc;

static void *huge_touched(size_t len) {
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    madvise(p, len, MADV_HUGEPAGE);
    memset(p, 0, len);
    return p;
}

// What must exist before the kernel starts, for call `w` to undo it.
static void prepare(int w) {
    if (w == 1) CK(cuMemAlloc(&pre_dev, 8u << 20));
    if (w == 5) { pre_host = huge_touched(16u << 20); CK(cuMemHostRegister(pre_host, 16u << 20, CU_MEMHOSTREGISTER_PORTABLE)); }
    if (w == 6) CK(cuMemHostAlloc(&pre_alloc, 16u << 20, CU_MEMHOSTALLOC_PORTABLE));
}

static void do_call(int w) {
    CUdeviceptr d; void *h; CUstream s; CUevent e;
    switch (w) {
    case 0: CK(cuMemAlloc(&d, 8u << 20)); break;
    case 1: CK(cuMemFree(pre_dev)); break;
    case 2: CK(cuMemHostAlloc(&h, 16u << 20, CU_MEMHOSTALLOC_PORTABLE)); break;
    case 3: CK(cuMemHostRegister(huge_touched(16u << 20), 16u << 20, CU_MEMHOSTREGISTER_PORTABLE)); break;
    case 4: CK(cuMemHostRegister(huge_touched(16u << 20), 16u << 20, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP)); break;
    case 5: CK(cuMemHostUnregister(pre_host)); break;
    case 6: CK(cuMemFreeHost(pre_alloc)); break;
    case 7: CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)); break;
    case 8:
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)); CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
        CK(cuEventRecord(e, s));
        while (cuEventQuery(e) == CUDA_ERROR_NOT_READY) { }
        break;
    case 9: { static char b[4096]; CK(cuMemAlloc(&d, 4096)); CK(cuMemcpyHtoD(d, b, 4096)); break; }
    }
}

typedef struct { int which; double took; int done; } Call;

// A third thread's queries of another stream: whether they return within `limit` seconds.
typedef struct { CUstream st; CUevent ev; int done; } Query;
static void *query_main(void *a) {
    Query *q = a;
    CK(cuCtxSetCurrent(ctx));
    cuStreamQuery(q->st);
    cuEventQuery(q->ev);
    __atomic_store_n(&q->done, 1, __ATOMIC_RELEASE);
    return NULL;
}
// Made before the kernel starts: a driver call of the main thread could itself block while
// the probed call waits, and then nobody would release the kernel.
static void query_prepare(Query *q) {
    CK(cuStreamCreate(&q->st, CU_STREAM_NON_BLOCKING)); CK(cuEventCreate(&q->ev, CU_EVENT_DISABLE_TIMING));
    CK(cuEventRecord(q->ev, q->st));
    CK(cuStreamSynchronize(q->st));
}
static int queries_get_through(double limit, pthread_t *th, Query *q) {
    q->done = 0;
    pthread_create(th, NULL, query_main, q);
    double t0 = now();
    while (!__atomic_load_n(&q->done, __ATOMIC_ACQUIRE) && now() - t0 < limit) usleep(1000);
    return __atomic_load_n(&q->done, __ATOMIC_ACQUIRE);
}
static void *call_main(void *a) {
    Call *c = a;
    CK(cuCtxSetCurrent(ctx));
    double t0 = now();
    do_call(c->which);
    c->took = now() - t0;
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void blocking_probe(void) {
    for (int w = 0; w < NCALLS; w++) {
        Q q; q_init(&q, 1, 1u << 20, 16u << 20, 1u << 20);
        prepare(w);
        pthread_t qt; Query qq; query_prepare(&qq);
        printf("probing %s\n", call_names[w]);
        launch(&q);
        usleep(50000);  // the kernel is running and waits for serial 1
        Call c = { w, 0, 0 };
        pthread_t th; pthread_create(&th, NULL, call_main, &c);
        double t0 = now();
        while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) && now() - t0 < 2.0) usleep(1000);
        int returned = __atomic_load_n(&c.done, __ATOMIC_ACQUIRE);
        int through = -1;
        if (!returned) through = queries_get_through(1.0, &qt, &qq);
        post(&q, 0, 0, 0, 1, 16);  // release the kernel
        pthread_join(th, NULL);
        if (!returned) pthread_join(qt, NULL);
        CK(cuStreamSynchronize(q.st));
        printf("RESULT mode=blocking call=\"%s\" returned_while_kernel_waits=%d took_ms=%.2f query_while_blocked=%d\n", call_names[w], returned, c.took * 1e3, through);
    }
}

// The flood: launches behind a waiting staging kernel on its stream.
typedef struct { Q *q; int max; int launched; double slowest; int done; } Flood;
static void *flood_main(void *a) {
    Flood *f = a;
    CK(cuCtxSetCurrent(ctx));
    for (int i = 0; i < f->max; i++) {
        double t0 = now();
        launch(f->q);
        double t = now() - t0;
        if (t > f->slowest) f->slowest = t;
        __atomic_store_n(&f->launched, i + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void flood_probe(void) {
    Q q; q_init(&q, 1, 1u << 20, 16u << 20, 1u << 20);
    pthread_t qt; Query qq; query_prepare(&qq);
    launch(&q);  // the head kernel: waits for serial 1
    usleep(50000);
    Flood f = { &q, 20000, 0, 0, 0 };
    pthread_t th; pthread_create(&th, NULL, flood_main, &f);
    double t0 = now();
    int last = -1;
    while (now() - t0 < 3.0 && !__atomic_load_n(&f.done, __ATOMIC_ACQUIRE)) {
        usleep(200000);
        int n = __atomic_load_n(&f.launched, __ATOMIC_ACQUIRE);
        if (n == last) break;  // no launch returned for 200 ms: blocked
        last = n;
    }
    int blocked = !__atomic_load_n(&f.done, __ATOMIC_ACQUIRE);
    int queued = __atomic_load_n(&f.launched, __ATOMIC_ACQUIRE);
    int through = -1;
    printf("flood: %d launches queued, blocked=%d\n", queued, blocked);
    if (blocked) through = queries_get_through(1.0, &qt, &qq);
    // Release every kernel: one last segment per launch, in order.
    int posted = 0;
    while (posted < 1 + __atomic_load_n(&f.launched, __ATOMIC_ACQUIRE) || !__atomic_load_n(&f.done, __ATOMIC_ACQUIRE)) {
        if (posted < 1 + __atomic_load_n(&f.launched, __ATOMIC_ACQUIRE)) { post(&q, 0, 0, 0, 1, 16); posted++; }
    }
    pthread_join(th, NULL);
    if (blocked) pthread_join(qt, NULL);
    CK(cuStreamSynchronize(q.st));
    printf("RESULT mode=flood launches_before_block=%d blocked=%d slowest_launch_ms=%.2f query_while_blocked=%d\n", queued, blocked, f.slowest * 1e3, through);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) { fprintf(stderr, "usage: %s stage.ptx [blocking|flood]\n", argv[0]); return 2; }
    FILE *f = fopen(argv[1], "rb"); if (!f) { perror(argv[1]); return 1; }
    static char ptx[1 << 20]; size_t n = fread(ptx, 1, sizeof ptx - 1, f); ptx[n] = 0; fclose(f);
    CUdevice d;
    CK(cuInit(0)); CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, d)); CK(cuCtxSetCurrent(ctx));
    int coop = 0, sms = 0; cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, d);
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    double t0 = now(); CUmodule m; CK(cuModuleLoadData(&m, ptx)); double tl = now() - t0;
    CK(cuModuleGetFunction(&fn, m, "hipfile_stage"));
    printf("module load (JIT) %.1f ms; cooperative launch %d; %d SMs\n", tl * 1e3, coop, sms);
    if (argc > 2 && !strcmp(argv[2], "blocking")) { blocking_probe(); return 0; }
    if (argc > 2 && !strcmp(argv[2], "flood")) { flood_probe(); return 0; }
    uint8_t *pinned; CK(cuMemHostAlloc((void **)&pinned, 64u << 20, CU_MEMHOSTALLOC_PORTABLE)); memset(pinned, 1, 64u << 20);

    // Correctness: odd offsets, a short last segment, both directions.
    {
        Q q; q_init(&q, 2, 1u << 20, 16u << 20, 8u << 20);
        CK(cuMemsetD8(q.dev, 0xee, 8u << 20));
        // Segment data congruent mod 16 with its destination (as the library places it).
        size_t off = 3, len = (3u << 20) + 777; const unsigned slots = 8; const size_t pitch = (1u << 20) + 64;
        launch(&q);
        size_t done = 0; int bad = 0;
        while (done < len) {
            size_t l = len - done < (1u << 20) ? len - done : (1u << 20);
            uint32_t s = q.serial + 1;
            uint64_t dst = q.dev + off + done;
            uint8_t *slot = q.ring_mem + (size_t)(s % slots) * pitch + (dst & 15);  // congruent
            while (min_done(&q) + slots < s) { }
            for (size_t k = 0; k < l; k++) slot[k] = (uint8_t)((done + k) * 7 + 1);
            post(&q, dst, (uint64_t)(uintptr_t)slot, l, done + l == len, slots);
            done += l;
        }
        CK(cuStreamSynchronize(q.st));
        uint8_t *back = malloc(8u << 20); CK(cuMemcpyDtoH(back, q.dev, 8u << 20));
        for (size_t k = 0; k < (8u << 20); k++) {
            uint8_t want = (k >= off && k < off + len) ? (uint8_t)((k - off) * 7 + 1) : 0xee;
            if (back[k] != want) { if (bad < 5) printf("  h2d mismatch at %zu: %02x want %02x\n", k, back[k], want); bad++; }
        }
        printf("check h2d odd offset %zu len %zu: %s\n", off, len, bad ? "FAIL" : "ok");
        // D2H: device pattern -> ring at an odd offset.
        for (size_t k = 0; k < (8u << 20); k++) back[k] = (uint8_t)(k * 13 + 5);
        CK(cuMemcpyHtoD(q.dev, back, 8u << 20));
        launch(&q);
        uint64_t src = q.dev + 5; uint8_t *slot = q.ring_mem + (src & 15); size_t l2 = (1u << 20) - 100;
        post(&q, (uint64_t)(uintptr_t)slot, src, l2, 0, 8);
        while (min_done(&q) < q.serial) { }
        int bad2 = 0; for (size_t k = 0; k < l2; k++) if (slot[k] != (uint8_t)((k + 5) * 13 + 5)) bad2++;
        post(&q, 0, 0, 0, 1, 8);
        CK(cuStreamSynchronize(q.st));
        printf("check d2h odd offset 5 len %zu: %s\n", l2, bad2 ? "FAIL" : "ok");
        free(back);
    }
    // Launch cost.
    {
        Q q; q_init(&q, 1, 1u << 20, 16u << 20, 64u << 20);
        double t = now(); for (int i = 0; i < 64; i++) launch(&q); t = now() - t;
        for (int i = 0; i < 64; i++) post(&q, 0, 0, 0, 1, 16);
        CK(cuStreamSynchronize(q.st));
        printf("launch: %.2f us per call (64 queued)\n", t / 64 * 1e6);
    }
    printf("%-6s %-5s %-6s %10s %10s %6s\n", "dir", "grid", "seg", "kernel", "memcpy", "ratio");
    unsigned grids[] = {1, 2, 4, 8, 16};
    size_t segs[] = {1u << 20, 2u << 20, 4u << 20};
    for (int h2d = 1; h2d >= 0; h2d--)
        for (int gi = 0; gi < 5; gi++)
            for (int si = 0; si < 3; si++) {
                if (grids[gi] > 1 && !coop) continue;
                Q q; q_init(&q, grids[gi], segs[si], 16u << 20, 64u << 20);
                run_kernel(&q, h2d, 64u << 20, 2, 2);
                double k = run_kernel(&q, h2d, 64u << 20, 32, 8);
                double c = run_memcpy(&q, h2d, 64u << 20, 32, pinned);
                printf("%-6s %-5u %-6zu %10.2f %10.2f %6.2f\n", h2d ? "h2d" : "d2h", grids[gi], segs[si] >> 20, k, c, k / c);
            }
    // 8 streams at once, each its own ring and host thread.
    for (int g = 1; g <= 4; g *= 4) {
        Par p[8]; pthread_t th[8];
        for (int i = 0; i < 8; i++) { q_init(&p[i].q, g, 2u << 20, 16u << 20, 64u << 20); p[i].h2d = 1; }
        double t = now();
        for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, par_main, &p[i]);
        for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
        t = now() - t;
        printf("8 streams x 16 ops of 64 MiB, grid %d: %.2f GB/s total\n", g, 8.0 * 16 * (64u << 20) / t / 1e9);
    }
    return 0;
}
