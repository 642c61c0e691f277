// Probe of another stage for stream-ordered reads on CUDA, before building it: what 64 MiB reads
// from a page-cached file move with 8 in flight (8 streams x 1, and 1 stream x 8) when the copies
// are DMA copies queued on the application's stream at submission, instead of the staging kernel
// (src/runtime/stage/stage.cu) copying out of host-mapped memory.
//
// The shape measured ("dma"): per operation, at submission, on the application's stream:
//   cuEventRecord(start)                            -- the readers begin when it completes
//   per unit g of the operation (U bytes):
//     cuStreamWaitValue32(post[g % H] >= g + 1)     -- the readers filled host slot g % H
//     cuMemcpyHtoDAsync(staging[g % D] <- slot)     -- DMA into device memory of the queue's own
//     cuMemcpyDtoDAsync(dst + u * U <- staging)     -- the scatter (a kernel in a real design,
//                                                      reading size and address at run time)
//     cuStreamWriteValue32(done = g + 1)            -- the slot is free again
// Reader threads (R per stream) claim pieces of the operation in order, wait until their unit's
// slot is free (done >= g + 1 - H), pread into it and post the unit once its last piece is in.
// Everything the stream waits for is host work; nothing is queued on another stream.
// "direct" is the same without the scatter (DMA straight into the destination: what the
// scatter costs). "sync" is the synchronous engine's shape for comparison: the R threads of an
// operation pread into two pinned buffers each and copy with cuMemcpyHtoDAsync on a stream of
// their own, no holds.
//
// Usage: dma_stage_probe FILE   (FILE: at least 4 GiB, in the page cache)
// Build: gcc -O2 scripts/gpu/dma_stage_probe.c -I/usr/local/cuda/include
//          -L/usr/local/cuda/lib64/stubs -lcuda -lpthread
// Prints one RESULT line per configuration and shape (median of 3 runs, GB/s, and the
// submitting thread's microseconds per operation).
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

#define OP_BYTES ((size_t)64 << 20)
#define FILE_SPAN ((uint64_t)4 << 30)
#define MAX_OPS 64
#define MAX_R 16

static CUcontext ctx;
static int fd;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void relax(unsigned *spins) { if (++*spins > 64) { sched_yield(); } }

enum Mode { DMA, DIRECT, SYNC };
typedef struct { enum Mode mode; size_t unit, piece; unsigned host_units, readers; } Cfg;

typedef struct {
    uint64_t foff; CUdeviceptr dst; CUevent start; uint64_t g0; size_t units, pieces;
    atomic_size_t next_piece; atomic_int started; atomic_uint left[64];  // pieces left per unit
} Op;

typedef struct Q {
    const Cfg *c; CUstream st;
    uint8_t *slots; CUdeviceptr staging;
    volatile uint32_t *words; CUdeviceptr words_dev;  // post[H], then done
    uint64_t gnext;
    Op ops[MAX_OPS]; atomic_int submitted; int total;
    pthread_t th[MAX_R]; unsigned nth;
    // sync mode: per reader two pinned buffers, a stream and two events
    uint8_t *sbuf[MAX_R][2]; CUstream sst[MAX_R]; CUevent sev[MAX_R][2];
} Q;

typedef struct { Q *q; unsigned id; } Reader;

static void op_pieces(const Cfg *c, Op *o) {
    o->units = (OP_BYTES + c->unit - 1) / c->unit;
    o->pieces = (OP_BYTES + c->piece - 1) / c->piece;
    size_t per = c->unit / c->piece;
    for (size_t u = 0; u < o->units; u++) atomic_store(&o->left[u], (unsigned)per);
    atomic_store(&o->next_piece, 0);
    atomic_store(&o->started, 0);
}

// Readers of one queue: every operation in order; reader 0 watches the start event.
static void *reader_main(void *a) {
    Reader *r = a; Q *q = r->q; const Cfg *c = q->c;
    CK(cuCtxSetCurrent(ctx));
    size_t per = c->unit / c->piece;
    unsigned H = c->host_units;
    volatile uint32_t *done = &q->words[H];
    uint64_t k = 0;  // sync mode: copies issued by this reader
    for (int i = 0; i < q->total; i++) {
        Op *o = &q->ops[i];
        unsigned spins = 0;
        while (atomic_load_explicit(&q->submitted, memory_order_acquire) <= i) relax(&spins);
        if (c->mode != SYNC) {
            if (r->id == 0) {
                while (cuEventQuery(o->start) == CUDA_ERROR_NOT_READY) relax(&spins);
                atomic_store_explicit(&o->started, 1, memory_order_release);
            } else {
                while (!atomic_load_explicit(&o->started, memory_order_acquire)) relax(&spins);
            }
        }
        for (;;) {
            size_t p = atomic_fetch_add(&o->next_piece, 1);
            if (p >= o->pieces) break;
            size_t off = p * c->piece, len = OP_BYTES - off < c->piece ? OP_BYTES - off : c->piece;
            if (c->mode == SYNC) {
                int b = (int)(k & 1);
                if (k >= 2) CK(cuEventSynchronize(q->sev[r->id][b]));
                if (pread(fd, q->sbuf[r->id][b], len, (off_t)(o->foff + off)) != (ssize_t)len) { perror("pread"); exit(1); }
                CK(cuMemcpyHtoDAsync(o->dst + off, q->sbuf[r->id][b], len, q->sst[r->id]));
                CK(cuEventRecord(q->sev[r->id][b], q->sst[r->id]));
                k++;
                continue;
            }
            size_t u = p / per;
            uint64_t g = o->g0 + u;
            uint32_t need = (uint32_t)(g + 1 - H);
            if (g >= H) while ((int32_t)(*done - need) < 0) relax(&spins);
            uint8_t *dst = q->slots + (g % H) * c->unit + (p % per) * c->piece;
            if (pread(fd, dst, len, (off_t)(o->foff + off)) != (ssize_t)len) { perror("pread"); exit(1); }
            if (atomic_fetch_sub(&o->left[u], 1) == 1) {
                __atomic_store_n((uint32_t *)&q->words[g % H], (uint32_t)(g + 1), __ATOMIC_RELEASE);
            }
        }
    }
    if (c->mode == SYNC) CK(cuStreamSynchronize(q->sst[r->id]));
    return NULL;
}

static void q_init(Q *q, const Cfg *c, int total, CUdeviceptr *dsts, int qi) {
    memset(q, 0, sizeof *q);
    q->c = c; q->total = total;
    CK(cuStreamCreate(&q->st, CU_STREAM_NON_BLOCKING));
    if (c->mode == SYNC) {
        for (unsigned r = 0; r < c->readers; r++) {
            CK(cuStreamCreate(&q->sst[r], CU_STREAM_NON_BLOCKING));
            for (int b = 0; b < 2; b++) {
                CK(cuMemHostAlloc((void **)&q->sbuf[r][b], c->piece, CU_MEMHOSTALLOC_PORTABLE));
                CK(cuEventCreate(&q->sev[r][b], CU_EVENT_DISABLE_TIMING));
            }
        }
    } else {
        CK(cuMemHostAlloc((void **)&q->slots, c->unit * c->host_units, CU_MEMHOSTALLOC_PORTABLE));
        memset(q->slots, 0, c->unit * c->host_units);
        CK(cuMemHostAlloc((void **)&q->words, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
        memset((void *)q->words, 0, 4096);
        CK(cuMemHostGetDevicePointer(&q->words_dev, (void *)q->words, 0));
        if (c->mode == DMA) CK(cuMemAlloc(&q->staging, c->unit * 2));
    }
    for (int i = 0; i < total; i++) {
        Op *o = &q->ops[i];
        CK(cuEventCreate(&o->start, CU_EVENT_DISABLE_TIMING));
        o->dst = dsts[i % 8];
        o->foff = ((uint64_t)(qi * total + i) * OP_BYTES) % FILE_SPAN;
        op_pieces(c, o);
    }
    q->nth = c->readers;
    static Reader rd[64][MAX_R];
    for (unsigned r = 0; r < q->nth; r++) {
        rd[qi][r].q = q; rd[qi][r].id = r;
        pthread_create(&q->th[r], NULL, reader_main, &rd[qi][r]);
    }
}

static void q_free(Q *q) {
    const Cfg *c = q->c;
    if (c->mode == SYNC) {
        for (unsigned r = 0; r < c->readers; r++) {
            for (int b = 0; b < 2; b++) { CK(cuMemFreeHost(q->sbuf[r][b])); CK(cuEventDestroy(q->sev[r][b])); }
            CK(cuStreamDestroy(q->sst[r]));
        }
    } else {
        CK(cuMemFreeHost(q->slots)); CK(cuMemFreeHost((void *)q->words));
        if (q->staging) CK(cuMemFree(q->staging));
    }
    for (int i = 0; i < q->total; i++) CK(cuEventDestroy(q->ops[i].start));
    CK(cuStreamDestroy(q->st));
}

// Queue operation i of q on its stream (dma, direct) or hand it to the readers (sync).
static void submit(Q *q, int i) {
    const Cfg *c = q->c; Op *o = &q->ops[i];
    if (c->mode != SYNC) {
        unsigned H = c->host_units;
        o->g0 = q->gnext;
        CK(cuEventRecord(o->start, q->st));
        for (size_t u = 0; u < o->units; u++) {
            uint64_t g = q->gnext++;
            size_t len = OP_BYTES - u * c->unit < c->unit ? OP_BYTES - u * c->unit : c->unit;
            CK(cuStreamWaitValue32(q->st, q->words_dev + 4 * (g % H), (uint32_t)(g + 1), CU_STREAM_WAIT_VALUE_GEQ));
            if (c->mode == DMA) {
                CUdeviceptr st = q->staging + (g % 2) * c->unit;
                CK(cuMemcpyHtoDAsync(st, q->slots + (g % H) * c->unit, len, q->st));
                CK(cuMemcpyDtoDAsync(o->dst + u * c->unit, st, len, q->st));
            } else {
                CK(cuMemcpyHtoDAsync(o->dst + u * c->unit, q->slots + (g % H) * c->unit, len, q->st));
            }
            CK(cuStreamWriteValue32(q->st, q->words_dev + 4 * H, (uint32_t)(g + 1), 0));
        }
    }
    atomic_store_explicit(&q->submitted, i + 1, memory_order_release);
}

// One run: nq streams, per round `depth` operations on each, `rounds` rounds (the first is not
// timed). Returns GB/s; *sub_us: the submitting thread's microseconds per operation.
static double run(const Cfg *c, int nq, int depth, int rounds, CUdeviceptr *dsts, double *sub_us) {
    static Q qs[8];
    int total = depth * rounds;
    for (int qi = 0; qi < nq; qi++) q_init(&qs[qi], c, total, dsts, qi);
    double t0 = 0, sub = 0; int subs = 0;
    for (int r = 0; r < rounds; r++) {
        if (r == 1) t0 = now();
        for (int qi = 0; qi < nq; qi++)
            for (int d = 0; d < depth; d++) {
                double s = now(); submit(&qs[qi], r * depth + d); sub += now() - s; subs++;
            }
        for (int qi = 0; qi < nq; qi++) {
            if (c->mode == SYNC) {
                // The operations of the round are done when their readers have moved past them.
                Op *o = &qs[qi].ops[r * depth + depth - 1];
                unsigned spins = 0;
                while (atomic_load(&o->next_piece) < o->pieces + c->readers) relax(&spins);
            } else {
                CK(cuStreamSynchronize(qs[qi].st));
            }
        }
    }
    // The readers exit after the last operation (sync mode: after synchronising their copies).
    for (int qi = 0; qi < nq; qi++)
        for (unsigned r = 0; r < qs[qi].nth; r++) pthread_join(qs[qi].th[r], NULL);
    double t = now() - t0;
    for (int qi = 0; qi < nq; qi++) q_free(&qs[qi]);
    *sub_us = sub / subs * 1e6;
    return (double)OP_BYTES * nq * depth * (rounds - 1) / t / 1e9;
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

static void measure(const char *name, Cfg c, int nq, int depth, CUdeviceptr *dsts) {
    double g[3], s[3];
    int rounds = nq == 1 ? 5 : 17;  // 32 or 128 timed operations of 64 MiB
    for (int k = 0; k < 3; k++) g[k] = run(&c, nq, depth, rounds, dsts, &s[k]);
    double gs[3]; memcpy(gs, g, sizeof g); qsort(gs, 3, sizeof(double), cmp);
    const char *mode = c.mode == DMA ? "dma" : c.mode == DIRECT ? "direct" : "sync";
    printf("RESULT probe=dma_stage cfg=%s mode=%s shape=%dx%d unit_mib=%zu piece_mib=%zu ring_mib=%zu readers=%u gbs=%.2f runs=%.2f/%.2f/%.2f submit_us=%.1f\n",
           name, mode, nq, depth, c.unit >> 20, c.piece >> 20, (c.unit * c.host_units) >> 20, c.readers,
           gs[1], g[0], g[1], g[2], s[1]);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) { fprintf(stderr, "usage: %s FILE (>= 4 GiB, in the page cache)\n", argv[0]); return 2; }
    fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    CUdevice d;
    CK(cuInit(0)); CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, d)); CK(cuCtxSetCurrent(ctx));
    int memops = 0;
    cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, d);
    printf("stream wait-value NOR supported: %d\n", memops);
    CUdeviceptr dsts[8];
    for (int i = 0; i < 8; i++) CK(cuMemAlloc(&dsts[i], OP_BYTES));
    const size_t M = 1u << 20;
    // name, mode, unit, piece, host units; readers per stream for 8 x 1 and for 1 x 8
    struct { const char *name; enum Mode mode; size_t unit, piece; unsigned h, r8, r1; } a[] = {
        {"sync", SYNC, 2 * M, 2 * M, 0, 2, 8},
        {"sync", SYNC, 2 * M, 2 * M, 0, 4, 16},
        {"dma_u2", DMA, 2 * M, 2 * M, 8, 2, 8},
        {"dma_u2", DMA, 2 * M, 2 * M, 8, 4, 16},
        {"dma_u8_p2", DMA, 8 * M, 2 * M, 4, 2, 8},
        {"dma_u8_p2", DMA, 8 * M, 2 * M, 4, 4, 16},
        {"dma_u4_p1", DMA, 4 * M, 1 * M, 8, 4, 8},
        {"dma_u8_p1", DMA, 8 * M, 1 * M, 4, 4, 8},
        {"direct_u2", DIRECT, 2 * M, 2 * M, 8, 2, 8},
        {"direct_u2", DIRECT, 2 * M, 2 * M, 8, 4, 16},
    };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        Cfg c8 = {a[i].mode, a[i].unit, a[i].piece, a[i].h, a[i].r8};
        Cfg c1 = {a[i].mode, a[i].unit, a[i].piece, a[i].h, a[i].r1};
        measure(a[i].name, c8, 8, 1, dsts);
        measure(a[i].name, c1, 1, 8, dsts);
    }
    return 0;
}
