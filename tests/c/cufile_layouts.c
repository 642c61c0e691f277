/*
 * cufile_layouts.c - libcufile.so.0 never writes past what a consumer of one cuFile version
 * allocated: every structure, array and scalar the ABI writes into is placed at the very end of
 * a page followed by a PROT_NONE page (a write one byte too far faults), every function that
 * writes into it is called, and the fields the consumer can see are checked.
 *
 * Compiled once per distinct layout of the output structures, with -DCUFILE_LAYOUT=
 *   1070  a consumer of cuFile 1.7..1.14: properties, batch events, handles and counts, data
 *         buffers (the statistics, BAR, slab and P2P calls do not exist there);
 *   1150  1.15..1.18: the statistics are 512 / 1024 / 5000 bytes (declared below as 1.15's
 *         cufile.h has them; parameter, BAR, slab and P2P calls);
 *   1190  1.19..1.20: the statistics of include/cufile.h (624 / 1136 / 5112 bytes), readv.
 * and run by tests/cufile_suite.rs on the simulator's CUDA side.
 *
 *   cufile_layouts DIR    scratch files in DIR; the summary line is
 *                         "cufile layouts NNNN: N checks, F failures", exit 0 only when F is 0
 *
 * The library reports 1180 and fills the 1.15..1.18 layouts unless HIPFILE_CUFILE_API_LEVEL=1.19
 * (then 1190 and the 1.19 layouts): a 1.19 program reads the 1.19-only fields only when the
 * version says they are there, and otherwise checks that they were not written.
 */
#include "cufile_test.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef CUFILE_LAYOUT
#error "compile with -DCUFILE_LAYOUT=1070, 1150 or 1190"
#endif

/* ---- the statistics structures of the layout compiled for --------------------------- */

#if CUFILE_LAYOUT >= 1190
typedef CUfileStatsLevel1_t L1_t;
typedef CUfileStatsLevel2_t L2_t;
typedef CUfileStatsLevel3_t L3_t;
#define L1_SIZE 624
#elif CUFILE_LAYOUT >= 1150
/* CUfileStatsLevel1_t as cufile.h 1.15..1.18 declares it: 1.19's without the readv/writev
 * counters it appended. */
typedef struct {
    CUfileOpCounter_t read_ops;
    CUfileOpCounter_t write_ops;
    CUfileOpCounter_t hdl_register_ops;
    CUfileOpCounter_t hdl_deregister_ops;
    CUfileOpCounter_t buf_register_ops;
    CUfileOpCounter_t buf_deregister_ops;
    uint64_t read_bytes;
    uint64_t write_bytes;
    uint64_t read_bw_bytes_per_sec;
    uint64_t write_bw_bytes_per_sec;
    uint64_t read_lat_avg_us;
    uint64_t write_lat_avg_us;
    uint64_t read_ops_per_sec;
    uint64_t write_ops_per_sec;
    uint64_t read_lat_sum_us;
    uint64_t write_lat_sum_us;
    CUfileOpCounter_t batch_submit_ops;
    CUfileOpCounter_t batch_complete_ops;
    CUfileOpCounter_t batch_setup_ops;
    CUfileOpCounter_t batch_cancel_ops;
    CUfileOpCounter_t batch_destroy_ops;
    CUfileOpCounter_t batch_enqueued_ops;
    CUfileOpCounter_t batch_posix_enqueued_ops;
    CUfileOpCounter_t batch_processed_ops;
    CUfileOpCounter_t batch_posix_processed_ops;
    CUfileOpCounter_t batch_nvfs_submit_ops;
    CUfileOpCounter_t batch_p2p_submit_ops;
    CUfileOpCounter_t batch_aio_submit_ops;
    CUfileOpCounter_t batch_iouring_submit_ops;
    CUfileOpCounter_t batch_mixed_io_submit_ops;
    CUfileOpCounter_t batch_total_submit_ops;
    uint64_t batch_read_bytes;
    uint64_t batch_write_bytes;
    uint64_t batch_read_bw_bytes;
    uint64_t batch_write_bw_bytes;
    uint64_t batch_submit_lat_avg_us;
    uint64_t batch_completion_lat_avg_us;
    uint64_t batch_submit_ops_per_sec;
    uint64_t batch_complete_ops_per_sec;
    uint64_t batch_submit_lat_sum_us;
    uint64_t batch_completion_lat_sum_us;
    uint64_t last_batch_read_bytes;
    uint64_t last_batch_write_bytes;
} L1_t;
typedef struct {
    L1_t basic;
    uint64_t read_size_kb_hist[32];
    uint64_t write_size_kb_hist[32];
} L2_t;
typedef struct {
    L2_t detailed;
    uint32_t num_gpus;
    CUfilePerGpuStats_t per_gpu_stats[16];
} L3_t;
#define L1_SIZE 512
#endif

#if CUFILE_LAYOUT >= 1150
_Static_assert(sizeof(L1_t) == L1_SIZE, "level 1 of this layout");
_Static_assert(sizeof(L2_t) == L1_SIZE + 512, "level 2 of this layout");
_Static_assert(sizeof(L3_t) == L1_SIZE + 512 + 8 + 16 * 248, "level 3 of this layout");
#endif

/* ---- memory that ends where a PROT_NONE page begins ---------------------------------- */

struct guard {
    void *map;
    size_t len;
};

/* `n` bytes whose last one is the last byte before a PROT_NONE page, filled with 0xAB. */
static void *at_page_end(struct guard *g, size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = (n + (size_t)page - 1) / (size_t)page;
    unsigned char *m;
    if (pages == 0)
        pages = 1;
    g->len = (pages + 1) * (size_t)page;
    m = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + pages * (size_t)page, (size_t)page, PROT_NONE) != 0) {
        perror("guard page");
        exit(2);
    }
    g->map = m;
    memset(m, 0xAB, pages * (size_t)page);
    return m + pages * (size_t)page - n;
}

static void unguard(struct guard *g) { munmap(g->map, g->len); }

/* Shorthand: a guarded T at the end of its page. */
#define GUARDED(g, T) ((T *)at_page_end(&(g), sizeof(T)))

/* Whether bytes [from, to) of `p` still hold the 0xAB fill. */
static inline int untouched(const void *p, size_t from, size_t to)
{
    const unsigned char *b = p;
    for (size_t i = from; i < to; i++)
        if (b[i] != 0xAB)
            return 0;
    return 1;
}

static const char *dir;
static int reported;

/* ---- what every layout has (1.7 on) ------------------------------------------------- */

static void version_and_properties(void)
{
    struct guard g;
    int *v = GUARDED(g, int);
    CUfileDrvProps_t *p;
    ST(cuFileGetVersion(v), CU_FILE_SUCCESS);
    reported = *v;
    CHECK(*v == expected_version(), "version %d, expected %d", *v, expected_version());
    unguard(&g);
    /* Closed (staged and default values), then open. */
    for (int open = 0; open < 2; open++) {
        if (open)
            ST(cuFileDriverOpen(), CU_FILE_SUCCESS);
        p = GUARDED(g, CUfileDrvProps_t);
        ST(cuFileDriverGetProperties(p), CU_FILE_SUCCESS);
        CHECK(p->nvfs.major_version == 0 && p->nvfs.minor_version == 0, "nvfs %u.%u",
              p->nvfs.major_version, p->nvfs.minor_version);
        CHECK((p->nvfs.dcontrolflags & (1u << CU_FILE_ALLOW_COMPAT_MODE)) != 0, "dcontrolflags %#x",
              p->nvfs.dcontrolflags);
        CHECK(p->per_buffer_cache_size == 1024 && p->max_batch_io_timeout_msecs == 5 &&
                  p->max_batch_io_size == 128 && p->nvfs.max_direct_io_size == 16384 &&
                  p->nvfs.poll_thresh_size == 4,
              "properties: per buffer %u, batch %u in %u ms, direct %zu", p->per_buffer_cache_size,
              p->max_batch_io_size, p->max_batch_io_timeout_msecs, p->nvfs.max_direct_io_size);
        unguard(&g);
    }
    CHECK(cuFileUseCount() == 1, "use count %ld", cuFileUseCount());
}

/* A scratch file of `n` pattern bytes, registered; its descriptor in *fd. */
static CUfileHandle_t scratch(const char *name, size_t n, int *fd)
{
    char path[512];
    unsigned char *buf = malloc(n);
    struct guard gd, gh;
    CUfileDescr_t *d = GUARDED(gd, CUfileDescr_t);
    CUfileHandle_t *fh = GUARDED(gh, CUfileHandle_t), h;
    snprintf(path, sizeof(path), "%s/%s-%d", dir, name, (int)getpid());
    fill_pattern(buf, n, 0);
    *fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (*fd < 0 || write(*fd, buf, n) != (ssize_t)n) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    unlink(path);
    free(buf);
    memset(d, 0, sizeof(*d));
    d->type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    d->handle.fd = *fd;
    ST(cuFileHandleRegister(fh, d), CU_FILE_SUCCESS);
    h = *fh;
    unguard(&gd);
    unguard(&gh);
    return h;
}

/* Reads into host memory that ends at a guard page, exactly the size asked for. */
static void data_buffers(CUfileHandle_t fh)
{
    struct guard g;
    unsigned char *b = at_page_end(&g, 10000);
    CHECK(cuFileRead(fh, b, 10000, 5, 0) == 10000 && is_pattern(b, 10000, 5), "read into a guarded buffer");
    CHECK(cuFileRead(fh, b, 9000, 5, 1000) == 9000 && is_pattern(b + 1000, 9000, 5),
          "read at a buffer offset, ending at the guard");
    unguard(&g);
}

/* Batch: the entries (read) and the events and count (written) end at guard pages. */
static void batch(CUfileHandle_t fh, unsigned char *dev)
{
    struct guard gb, gp, ge, gn, gt;
    CUfileBatchHandle_t *b = GUARDED(gb, CUfileBatchHandle_t);
    CUfileIOParams_t *io = at_page_end(&gp, 2 * sizeof(CUfileIOParams_t));
    CUfileIOEvents_t *ev = GUARDED(ge, CUfileIOEvents_t);
    unsigned *nr = GUARDED(gn, unsigned);
    struct timespec *t = GUARDED(gt, struct timespec);
    unsigned seen = 0, tries = 0;
    unsigned char host[4096];
    ST(cuFileBatchIOSetUp(b, 2), CU_FILE_SUCCESS);
    memset(io, 0, 2 * sizeof(*io));
    for (int i = 0; i < 2; i++) {
        io[i].mode = CUFILE_BATCH;
        io[i].fh = fh;
        io[i].opcode = CUFILE_READ;
        io[i].u.batch.devPtr_base = dev;
        io[i].u.batch.file_offset = 4096 * i + 3;
        io[i].u.batch.devPtr_offset = 8192 * i;
        io[i].u.batch.size = 4096;
        io[i].cookie = (void *)(uintptr_t)(7 + i);
    }
    ST(cuFileBatchIOSubmit(*b, 2, io, 0), CU_FILE_SUCCESS);
    t->tv_sec = 5;
    t->tv_nsec = 0;
    /* One event at a time: the events array holds exactly *nr = 1. */
    while (seen < 2 && tries++ < 10) {
        *nr = 1;
        memset(ev, 0xAB, sizeof(*ev));
        ST(cuFileBatchIOGetStatus(*b, 1, nr, ev, t), CU_FILE_SUCCESS);
        if (*nr == 1) {
            CHECK(ev->status == CUFILE_COMPLETE && ev->ret == 4096 &&
                      ((uintptr_t)ev->cookie == 7 || (uintptr_t)ev->cookie == 8),
                  "event: cookie %p status %d ret %zu", ev->cookie, (int)ev->status, ev->ret);
            seen++;
        }
    }
    CHECK(seen == 2, "%u events", seen);
    download(host, dev + 8192, 4096);
    CHECK(is_pattern(host, 4096, 4099), "batch bytes");
    cuFileBatchIODestroy(*b);
    unguard(&gb);
    unguard(&gp);
    unguard(&ge);
    unguard(&gn);
    unguard(&gt);
}

/* Stream-ordered: the four values the library reads at execution and the count it writes. */
static void stream_ordered(CUfileHandle_t fh, unsigned char *dev)
{
    struct guard gs, gf, go, gy;
    size_t *size = GUARDED(gs, size_t);
    off_t *foff = GUARDED(gf, off_t), *boff = GUARDED(go, off_t);
    ssize_t *bytes = GUARDED(gy, ssize_t);
    void *stream = NULL;
    unsigned char host[1000];
    cu.stream_create(&stream, 0);
    *size = 1000;
    *foff = 77;
    *boff = 11;
    *bytes = 0;
    ST(cuFileReadAsync(fh, dev, size, foff, boff, bytes, (CUstream)stream), CU_FILE_SUCCESS);
    cu.stream_sync(stream);
    download(host, dev + 11, 1000);
    CHECK(*bytes == 1000 && is_pattern(host, 1000, 77), "stream-ordered read: %zd bytes", *bytes);
    cu.stream_destroy(stream);
    unguard(&gs);
    unguard(&gf);
    unguard(&go);
    unguard(&gy);
}

/* ---- 1.14 and 1.15 on: parameters, BAR, slabs, statistics; 1.16 P2P --------------- */

#if CUFILE_LAYOUT >= 1150
static void parameters(void)
{
    struct guard g, g2;
    for (int i = 0; i <= CUFILE_PARAM_PROPERTIES_BATCH_IO_TIMEOUT_MS; i++) {
        size_t *v = GUARDED(g, size_t), *hi = GUARDED(g2, size_t);
        *v = 0xABABABABABABABABu;
        ST(cuFileGetParameterSizeT((CUFileSizeTConfigParameter_t)i, v), CU_FILE_SUCCESS);
        CHECK(*v != 0xABABABABABABABABu, "size parameter %d not written", i);
        if (i != CUFILE_PARAM_PROFILE_STATS) {
            *v = 0xABABABABABABABABu;
            ST(cuFileGetParameterMinMaxValue((CUFileSizeTConfigParameter_t)i, v, hi), CU_FILE_SUCCESS);
            CHECK(*v != 0xABABABABABABABABu && *hi != 0xABABABABABABABABu && (*hi == 0 || *v <= *hi),
                  "range of %d: %zu..%zu", i, *v, *hi);
        }
        unguard(&g);
        unguard(&g2);
    }
    /* bool is one byte. */
    for (int i = 0; i <= CUFILE_PARAM_GDS_FALLBACK_IO; i++) {
        unsigned char *b = at_page_end(&g, 1);
        ST(cuFileGetParameterBool((CUFileBoolConfigParameter_t)i, (bool *)b), CU_FILE_SUCCESS);
        CHECK(*b == 0 || *b == 1, "bool parameter %d: %u", i, *b);
        unguard(&g);
    }
    {
        /* A string of exactly its length and NUL; one byte less is refused, nothing written. */
        char *s = at_page_end(&g, 6);
        ST(cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, s, 6), CU_FILE_SUCCESS);
        CHECK(strcmp(s, "ERROR") == 0, "logging level %s", s);
        unguard(&g);
        s = at_page_end(&g, 5);
        ST(cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, s, 5), CU_FILE_INVALID_VALUE);
        CHECK((unsigned char)s[0] == 0xAB, "a refused string get wrote");
        unguard(&g);
        s = at_page_end(&g, 6);
        ST(cuFileGetParameterString(CUFILE_PARAM_RDMA_TRANSPORT, s, 6), CU_FILE_SUCCESS);
        CHECK(strcmp(s, "DC_V1") == 0, "rdma transport %s", s);
        unguard(&g);
    }
    {
        /* Slab arrays: exactly `len` entries each. */
        size_t *sz = at_page_end(&g, 3 * sizeof(size_t)), *ct = at_page_end(&g2, 3 * sizeof(size_t));
        ST(cuFileGetParameterPosixPoolSlabArray(sz, ct, 3), CU_FILE_SUCCESS);
        CHECK(sz[0] == 4 && sz[2] == 16384 && ct[0] == 128 && ct[2] == 64, "POSIX slabs");
        unguard(&g);
        unguard(&g2);
        sz = at_page_end(&g, 4 * sizeof(size_t));
        ct = at_page_end(&g2, 4 * sizeof(size_t));
        ST(cuFileGetParameterGpuBounceBufferSlabArray(sz, ct, 4), CU_FILE_SUCCESS);
        CHECK(sz[0] == 1024 && sz[3] == 65536 && ct[0] == 128 && ct[3] == 2, "GPU slabs");
        unguard(&g);
        unguard(&g2);
    }
    {
        size_t *kb = GUARDED(g, size_t);
        CUfileP2PFlags_t *f = GUARDED(g2, CUfileP2PFlags_t);
        ST(cuFileGetBARSizeInKB(0, kb), CU_FILE_SUCCESS);
        ST(cuFileDriverGetP2PFlags(CU_FILE_NVME_SUPPORTED, f), CU_FILE_SUCCESS);
        CHECK(*f == 0, "P2P flags %d", (int)*f);
        unguard(&g);
        unguard(&g2);
    }
}

static uint64_t hist_sum(const uint64_t *h)
{
    uint64_t s = 0;
    for (int i = 0; i < 32; i++)
        s += h[i];
    return s;
}

static void statistics(CUfileHandle_t fh, unsigned char *dev)
{
    struct guard g;
    int *level = GUARDED(g, int);
    L1_t *l1;
    L2_t *l2;
    L3_t *l3;
    ST(cuFileGetStatsLevel(level), CU_FILE_SUCCESS);
    CHECK(*level == 3, "level %d", *level);
    unguard(&g);
    ST(cuFileStatsReset(), CU_FILE_SUCCESS);
    CHECK(cuFileRead(fh, dev, 4096, 0, 0) == 4096, "read");
    CHECK(cuFileRead(fh, dev, 20000, 1, 0) == 20000, "read");
    CHECK(cuFileWrite(fh, dev, 3000, 100000, 0) == 3000, "write");
#if CUFILE_LAYOUT >= 1190
    {
        CUfileIOVec_t iov[2] = {{dev, 100}, {dev + 4096, 200}};
        CHECK(cuFileReadv(fh, iov, 2, 7, 0) == 300, "readv");
    }
#endif
    l1 = GUARDED(g, L1_t);
    /* A 1.15..1.18 consumer's own header declares its L1_t as CUfileStatsLevel1_t. */
    ST(cuFileGetStatsL1((CUfileStatsLevel1_t *)l1), CU_FILE_SUCCESS);
#if CUFILE_LAYOUT >= 1190
    const uint64_t reads = 4, read_bytes = 24396; /* the readv is two engine reads */
#else
    const uint64_t reads = 2, read_bytes = 24096;
#endif
    CHECK(l1->read_ops.ok == reads && l1->read_bytes == read_bytes && l1->write_ops.ok == 1 &&
              l1->write_bytes == 3000,
          "level 1: %llu reads %llu bytes, %llu writes %llu bytes", (unsigned long long)l1->read_ops.ok,
          (unsigned long long)l1->read_bytes, (unsigned long long)l1->write_ops.ok,
          (unsigned long long)l1->write_bytes);
#if CUFILE_LAYOUT >= 1190
    if (reported >= 1190) {
        CHECK(l1->readv_ops.ok == 1 && l1->readv_bytes == 300, "readv: %llu ops %llu bytes",
              (unsigned long long)l1->readv_ops.ok, (unsigned long long)l1->readv_bytes);
    } else {
        /* Reported 1180: the 1.19 fields are not there, and not written. */
        CHECK(untouched(l1, 512, 624), "cuFile %d wrote the 1.19 readv/writev fields", reported);
    }
#endif
    unguard(&g);
    l2 = GUARDED(g, L2_t);
    ST(cuFileGetStatsL2((CUfileStatsLevel2_t *)l2), CU_FILE_SUCCESS);
    if (reported >= 1190 || CUFILE_LAYOUT < 1190) {
        CHECK(l2->basic.read_ops.ok == reads && hist_sum(l2->read_size_kb_hist) == reads &&
                  hist_sum(l2->write_size_kb_hist) == 1,
              "level 2: %llu reads, histograms %llu + %llu", (unsigned long long)l2->basic.read_ops.ok,
              (unsigned long long)hist_sum(l2->read_size_kb_hist),
              (unsigned long long)hist_sum(l2->write_size_kb_hist));
    } else {
        CHECK(untouched(l2, 1024, sizeof(L2_t)), "cuFile %d wrote past 1024 bytes of level 2", reported);
    }
    unguard(&g);
    l3 = GUARDED(g, L3_t);
    ST(cuFileGetStatsL3((CUfileStatsLevel3_t *)l3), CU_FILE_SUCCESS);
    if (reported >= 1190 || CUFILE_LAYOUT < 1190) {
        CHECK(l3->num_gpus == 1 && l3->per_gpu_stats[0].read_bytes == read_bytes &&
                  l3->per_gpu_stats[0].writes_bytes == 3000 &&
                  l3->detailed.basic.write_ops.ok == 1,
              "level 3: %u GPUs, GPU 0 read %llu wrote %llu", l3->num_gpus,
              (unsigned long long)l3->per_gpu_stats[0].read_bytes,
              (unsigned long long)l3->per_gpu_stats[0].writes_bytes);
    } else {
        CHECK(untouched(l3, 5000, sizeof(L3_t)), "cuFile %d wrote past 5000 bytes of level 3", reported);
    }
    unguard(&g);
}
#endif

int main(int argc, char **argv)
{
    int fd;
    CUfileHandle_t fh;
    unsigned char *dev;
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    cuda_setup();
#if CUFILE_LAYOUT >= 1150
    /* Before the open, so that the engine records what level 3 shows. */
    ST(cuFileSetStatsLevel(3), CU_FILE_SUCCESS);
#endif
    version_and_properties();
    fh = scratch("layouts", 1 << 20, &fd);
    dev = dev_alloc(1 << 20);
    data_buffers(fh);
    batch(fh, dev);
    stream_ordered(fh, dev);
#if CUFILE_LAYOUT >= 1150
    parameters();
    statistics(fh, dev);
#endif
    cuFileHandleDeregister(fh);
    close(fd);
    dev_free(dev);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 0, "use count %ld", cuFileUseCount());
    printf("cufile layouts %d: %d checks, %d failures\n", CUFILE_LAYOUT, checks, failures);
    return failures ? 1 : 0;
}
