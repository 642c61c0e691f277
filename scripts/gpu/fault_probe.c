// What a CUDA context does after a kernel faults: the model the simulator (crates/hipsim,
// "A broken context" in src/device.rs) and the library's stream-ordered error paths rely on,
// checked call by call. One staging kernel (src/runtime/stage/stage.ptx, loaded as the library
// loads it) waits on stream B, with a copy, a host function and an event queued behind it;
// another on stream A is handed a segment whose source the device cannot address, and faults.
// Then every call below is made once, and its result printed: the same table from the
// simulator and from a GPU, so that the two can be compared line by line.
//
// No vendor header: the few driver entry points are declared here (CUresult is an int-sized
// enum whose success is 0), so the probe builds anywhere.
//   GPU:       gcc -O2 scripts/gpu/fault_probe.c -o fault_probe -lcuda -lpthread
//              ./fault_probe src/runtime/stage/stage.ptx
//   simulator: gcc -O2 scripts/gpu/fault_probe.c -o fault_probe -Ltarget/debug/deps -lhipsim
//              -Wl,-rpath,$PWD/target/debug/deps -lpthread (one line)
//              ./fault_probe src/runtime/stage/stage.ptx
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;
int cuInit(unsigned);
int cuDevicePrimaryCtxRetain(CUcontext *, int);
int cuCtxSetCurrent(CUcontext);
int cuCtxGetDevice(int *);
int cuCtxSynchronize(void);
int cuModuleLoadData(CUmodule *, const void *);
int cuModuleGetFunction(CUfunction *, CUmodule, const char *);
int cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   unsigned, CUstream, void **, void **);
int cuMemAlloc_v2(CUdeviceptr *, size_t);
int cuMemFree_v2(CUdeviceptr);
int cuMemHostAlloc(void **, size_t, unsigned);
int cuMemFreeHost(void *);
int cuMemHostGetDevicePointer_v2(CUdeviceptr *, void *, unsigned);
int cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
int cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, CUstream);
int cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t);
int cuStreamCreate(CUstream *, unsigned);
int cuStreamDestroy_v2(CUstream);
int cuStreamSynchronize(CUstream);
int cuStreamQuery(CUstream);
int cuStreamGetId(CUstream, unsigned long long *);
int cuLaunchHostFunc(CUstream, void (*)(void *), void *);
int cuEventCreate(CUevent *, unsigned);
int cuEventRecord(CUevent, CUstream);
int cuEventQuery(CUevent);
int cuEventSynchronize(CUevent);
int cuEventDestroy_v2(CUevent);
int cuGetErrorName(int, const char **);

#define DEVICEMAP 0x2u     /* CU_MEMHOSTALLOC_DEVICEMAP */
#define PORTABLE 0x1u      /* CU_MEMHOSTALLOC_PORTABLE */
#define NON_BLOCKING 0x1u  /* CU_STREAM_NON_BLOCKING */
#define LEGACY ((CUstream)0x1)
#define PER_THREAD ((CUstream)0x2)

#define MUST(x) do { int r_ = (x); if (r_) { fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

/* The staging kernel's mailbox and stage control block (src/runtime/stage/stage.c). */
typedef struct {
    uint32_t started, exited, finish, first;
    uint64_t ctl;
    uint32_t ring_len, grid;
    uint8_t pad[32];
} Mail;
typedef struct { uint64_t dst, src, len; uint32_t serial, last; } Desc;
typedef struct { uint32_t done[32]; uint32_t reserved[32]; Desc ring[4]; } Ctl;

static CUfunction fn;
static atomic_int host_fn_ran;
static void host_fn(void *p) { (void)p; atomic_fetch_add(&host_fn_ran, 1); }

static const char *name(int r) {
    const char *s = NULL;
    if (r == 0) return "0 (success)";
    static char buf[16][64];
    static int next;
    char *b = buf[next++ % 16];
    cuGetErrorName(r, &s);
    snprintf(b, 64, "%d (%s)", r, s ? s : "?");
    return b;
}

static void row(const char *call, int r) { printf("%-58s %s\n", call, name(r)); }

static Mail *mail_new(CUdeviceptr *dev) {
    Mail *m;
    MUST(cuMemHostAlloc((void **)&m, sizeof *m, PORTABLE | DEVICEMAP));
    memset(m, 0, sizeof *m);
    m->grid = 1;
    MUST(cuMemHostGetDevicePointer_v2(dev, m, 0));
    return m;
}

static int launch(CUstream s, CUdeviceptr mail) {
    void *args[] = { &mail };
    return cuLaunchKernel(fn, 1, 1, 1, 1024, 1, 1, 0, s, args, NULL);
}

static void wait_started(Mail *m) {
    for (int i = 0; i < 100000 && !__atomic_load_n(&m->started, __ATOMIC_ACQUIRE); i++) usleep(100);
    if (!__atomic_load_n(&m->started, __ATOMIC_ACQUIRE)) { fprintf(stderr, "a kernel never started\n"); exit(1); }
}

static void *other_thread_query(void *arg) {
    (void)arg;
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    row("cuStreamQuery(CU_STREAM_PER_THREAD), another thread", cuStreamQuery(PER_THREAD));
    row("cuStreamQuery(CU_STREAM_LEGACY), another thread", cuStreamQuery(LEGACY));
    return NULL;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) { fprintf(stderr, "usage: %s stage.ptx\n", argv[0]); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    static char ptx[1 << 20];
    size_t n = fread(ptx, 1, sizeof ptx - 1, f);
    ptx[n] = 0;
    fclose(f);
    CUcontext ctx;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    CUmodule mod;
    MUST(cuModuleLoadData(&mod, ptx));
    MUST(cuModuleGetFunction(&fn, mod, "hipfile_stage"));

    CUstream a, b, spare;
    MUST(cuStreamCreate(&a, NON_BLOCKING));
    MUST(cuStreamCreate(&b, NON_BLOCKING));
    MUST(cuStreamCreate(&spare, NON_BLOCKING));
    CUdeviceptr dev, freed;
    MUST(cuMemAlloc_v2(&dev, 1 << 20));
    MUST(cuMemAlloc_v2(&freed, 1 << 20));
    MUST(cuMemsetD8_v2(dev, 0xee, 1 << 20));
    uint8_t *host;
    MUST(cuMemHostAlloc((void **)&host, 1 << 20, PORTABLE | DEVICEMAP));
    memset(host, 0x5a, 1 << 20);
    Ctl *ctl;
    MUST(cuMemHostAlloc((void **)&ctl, sizeof *ctl, PORTABLE | DEVICEMAP));
    memset(ctl, 0, sizeof *ctl);
    CUdeviceptr ctl_dev;
    MUST(cuMemHostGetDevicePointer_v2(&ctl_dev, ctl, 0));

    // B: a kernel waiting for the host, then a copy, a host function and an event behind it.
    CUdeviceptr mb_dev, ma_dev;
    Mail *mb = mail_new(&mb_dev), *ma = mail_new(&ma_dev);
    MUST(launch(b, mb_dev));
    wait_started(mb);
    CUevent ev;
    MUST(cuEventCreate(&ev, 0));
    MUST(cuMemcpyHtoDAsync_v2(dev, host, 4096, b));
    MUST(cuLaunchHostFunc(b, host_fn, NULL));
    MUST(cuEventRecord(ev, b));
    // A: a kernel handed one segment whose source the device cannot address.
    MUST(launch(a, ma_dev));
    wait_started(ma);
    ctl->ring[1].dst = dev;
    ctl->ring[1].src = 0x1000;
    ctl->ring[1].len = 256;
    ctl->ring[1].last = 1;
    __atomic_store_n(&ctl->ring[1].serial, 1, __ATOMIC_RELEASE);
    ma->first = 1;
    ma->ring_len = 4;
    __atomic_store_n(&ma->ctl, ctl_dev, __ATOMIC_RELEASE);

    printf("%-58s %s\n", "call", "result");
    row("cuStreamSynchronize(A), the faulting kernel's stream", cuStreamSynchronize(a));
    row("cuStreamSynchronize(A) again", cuStreamSynchronize(a));
    usleep(200 * 1000);
    row("cuStreamQuery(B), a kernel waiting for the host", cuStreamQuery(b));
    printf("%-58s %u\n", "B's kernel counted itself out (mailbox exited)", __atomic_load_n(&mb->exited, __ATOMIC_ACQUIRE));
    printf("%-58s %d\n", "host function behind B's kernel ran", atomic_load(&host_fn_ran));
    row("cuEventQuery(event behind B's kernel)", cuEventQuery(ev));
    row("cuEventSynchronize(event behind B's kernel)", cuEventSynchronize(ev));
    row("cuStreamSynchronize(B)", cuStreamSynchronize(b));
    row("cuStreamQuery(spare), a stream that never had work", cuStreamQuery(spare));
    row("cuStreamQuery(NULL)", cuStreamQuery(NULL));
    row("cuStreamQuery(CU_STREAM_LEGACY)", cuStreamQuery(LEGACY));
    row("cuStreamQuery(CU_STREAM_PER_THREAD)", cuStreamQuery(PER_THREAD));
    pthread_t t;
    pthread_create(&t, NULL, other_thread_query, NULL);
    pthread_join(t, NULL);
    row("cuCtxSynchronize", cuCtxSynchronize());
    row("cuCtxSynchronize again", cuCtxSynchronize());
    int ordinal = -1;
    row("cuCtxGetDevice", cuCtxGetDevice(&ordinal));
    unsigned long long id = 0;
    row("cuStreamGetId(A)", cuStreamGetId(a, &id));
    CUdeviceptr more = 0;
    row("cuMemAlloc", cuMemAlloc_v2(&more, 4096));
    uint8_t bytes[64] = {0};
    row("cuMemcpyHtoD (synchronous)", cuMemcpyHtoD_v2(dev, bytes, sizeof bytes));
    row("cuMemsetD8", cuMemsetD8_v2(dev, 0, 64));
    row("cuMemcpyHtoDAsync(spare)", cuMemcpyHtoDAsync_v2(dev, host, 64, spare));
    CUdeviceptr mc_dev;
    Mail *mc = NULL;
    if (cuMemHostAlloc((void **)&mc, sizeof *mc, PORTABLE | DEVICEMAP) == 0) {
        memset(mc, 0, sizeof *mc);
        mc->grid = 1;
        mc->finish = 1;
        row("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer_v2(&mc_dev, mc, 0));
        row("cuLaunchKernel(spare)", launch(spare, mc_dev));
    } else {
        row("cuMemHostAlloc", cuMemHostAlloc((void **)&mc, sizeof *mc, PORTABLE | DEVICEMAP));
    }
    CUstream fresh;
    row("cuStreamCreate", cuStreamCreate(&fresh, NON_BLOCKING));
    CUevent ev2;
    row("cuEventCreate", cuEventCreate(&ev2, 0));
    CUmodule mod2;
    row("cuModuleLoadData", cuModuleLoadData(&mod2, ptx));
    row("cuMemFree", cuMemFree_v2(freed));
    row("cuMemFreeHost", cuMemFreeHost(host));
    row("cuEventDestroy", cuEventDestroy_v2(ev));
    row("cuStreamDestroy(B)", cuStreamDestroy_v2(b));
    return 0;
}
