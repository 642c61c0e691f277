/*
 * cufile_suite.c - the cuFile C ABI of libcufile.so.0, exercised as a cuFile consumer does.
 *
 * Built against include/cufile.h (or NVIDIA's cufile.h: the ABI is the same) and linked with
 * -lcufile only. GPU memory comes from the CUDA driver API, loaded at run time from
 * $CUFILE_SUITE_CUDA (the simulator's libhipsim.so in the tests) or libcuda.so.1 (a real GPU),
 * so the same program runs on the simulator and on an NVIDIA machine.
 *
 *   cufile_suite DIR           every section below, scratch files in DIR
 *   cufile_suite DIR config    the configuration-file section alone ($CUFILE_ENV_PATH_JSON
 *                              written by the caller; see tests/cufile_suite.rs)
 *   cufile_suite DIR open      an open and a close, nothing else
 *   cufile_suite DIR noengine  the answers when libhipfile.so.0 cannot be found
 *
 * Every check compares exact values; the last line is "cufile suite: N checks, F failures"
 * and the exit status is 0 only when F is 0.
 */
#include "cufile_test.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------ */

static const char *dir;

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s-%d", dir, name, (int)getpid());
}

/* A file of `n` pattern bytes, opened with `flags`; its path in `path`. */
static int pattern_file(const char *name, size_t n, int flags, char *path, size_t pn)
{
    unsigned char *buf = malloc(n);
    int fd;
    path_of(path, pn, name);
    fill_pattern(buf, n, 0);
    fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    close(fd);
    free(buf);
    fd = open(path, flags);
    if (fd < 0) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    return fd;
}

static CUfileHandle_t reg(int fd)
{
    CUfileDescr_t d;
    CUfileHandle_t fh = NULL;
    CUfileError_t s;
    memset(&d, 0, sizeof(d));
    d.handle.fd = fd;
    d.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    s = cuFileHandleRegister(&fh, &d);
    CHECK(s.err == CU_FILE_SUCCESS && fh != NULL, "register fd %d -> %d", fd, (int)s.err);
    return fh;
}

static CUfileError_t reg_status(int fd, int type)
{
    CUfileDescr_t d;
    CUfileHandle_t fh = NULL;
    memset(&d, 0, sizeof(d));
    d.handle.fd = fd;
    d.type = (enum CUfileFileHandleType)type;
    return cuFileHandleRegister(&fh, &d);
}

/* Whether the `n` bytes at `p` are all 0. */
static int all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* ---- sections ----------------------------------------------------------------------- */

static void version_and_lifecycle(void)
{
    int v = 0;
    CUfileError_t (*legacy_close)(void) = NULL;
    *(void **)&legacy_close = dlsym(RTLD_DEFAULT, "cuFileDriverClose");
    ST(cuFileGetVersion(&v), CU_FILE_SUCCESS);
    CHECK(v == expected_version(), "version %d, expected %d", v, expected_version());
    ST(cuFileGetVersion(NULL), CU_FILE_INVALID_VALUE);
    CHECK(cuFileUseCount() == 0, "use count %ld before any open", cuFileUseCount());
    ST(cuFileDriverClose(), CU_FILE_DRIVER_NOT_INITIALIZED);
    CHECK(legacy_close != NULL, "cuFileDriverClose (legacy name) not exported");
    if (legacy_close)
        ST(legacy_close(), CU_FILE_DRIVER_NOT_INITIALIZED);
    ST(cuFileDriverOpen(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 1, "use count %ld", cuFileUseCount());
    ST(cuFileDriverOpen(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 2, "use count %ld", cuFileUseCount());
    if (legacy_close)
        ST(legacy_close(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 1, "use count %ld", cuFileUseCount());
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 0, "use count %ld", cuFileUseCount());
    ST(cuFileDriverClose(), CU_FILE_DRIVER_NOT_INITIALIZED);
}

static void parameters_while_closed(void)
{
    size_t v = 0, lo = 1, hi = 1;
    bool b = false;
    char s[64];
    size_t sizes[4] = {0}, counts[4] = {0};
    const size_t gsz[2] = {4096, 8192}, gcnt[2] = {2, 1};
    CUfileP2PFlags_t p2p = (CUfileP2PFlags_t)0;

    ST(cuFileSetParameterSizeT(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, 64), CU_FILE_SUCCESS);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, &v), CU_FILE_SUCCESS);
    CHECK(v == 64, "staged io_batchsize %zu", v);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROPERTIES_PER_BUFFER_CACHE_SIZE_KB, &v), CU_FILE_SUCCESS);
    CHECK(v == 1024, "per_buffer_cache_size_kb %zu", v);
    ST(cuFileGetParameterSizeT((CUFileSizeTConfigParameter_t)12, &v), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROFILE_STATS, NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterMinMaxValue(CUFILE_PARAM_PROPERTIES_MAX_DIRECT_IO_SIZE_KB, &lo, &hi), CU_FILE_SUCCESS);
    CHECK(lo == 64 && hi == 16384, "direct I/O range %zu..%zu", lo, hi);
    ST(cuFileGetParameterMinMaxValue(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, &lo, &hi), CU_FILE_SUCCESS);
    CHECK(lo == 1 && hi == 256, "batch range %zu..%zu", lo, hi);
    ST(cuFileGetParameterMinMaxValue(CUFILE_PARAM_PROFILE_STATS, &lo, &hi), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterMinMaxValue(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, NULL, &hi), CU_FILE_INVALID_VALUE);

    /* Deprecated, and still read and written (NVIDIA's 1.15 answers a value). */
    b = true;
    ST(cuFileGetParameterBool(CUFILE_PARAM_PROFILE_NVTX, &b), CU_FILE_SUCCESS);
    CHECK(!b, "NVTX defaults to false");
    ST(cuFileSetParameterBool(CUFILE_PARAM_PROFILE_NVTX, true), CU_FILE_SUCCESS);
    ST(cuFileGetParameterBool(CUFILE_PARAM_PROFILE_NVTX, &b), CU_FILE_SUCCESS);
    CHECK(b, "staged NVTX reads back");
    ST(cuFileGetParameterBool((CUFileBoolConfigParameter_t)14, &b), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterBool(CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE, &b), CU_FILE_SUCCESS);
    CHECK(b, "allow_compat_mode defaults to true");
    ST(cuFileSetParameterBool(CUFILE_PARAM_PROPERTIES_POSIX_IO_MODE, true), CU_FILE_SUCCESS);
    ST(cuFileGetParameterBool(CUFILE_PARAM_PROPERTIES_POSIX_IO_MODE, &b), CU_FILE_SUCCESS);
    CHECK(b, "staged vanilla POSIX I/O mode");

    /* The whole buffer is written, the text then NULs (as NVIDIA's library does). */
    memset(s, 0xAB, sizeof(s));
    ST(cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, s, sizeof(s)), CU_FILE_SUCCESS);
    CHECK(strcmp(s, "ERROR") == 0, "logging level %s", s);
    CHECK(all_zero(s + 6, sizeof(s) - 6), "NUL padding after the logging level");
    memset(s, 0xAB, sizeof(s));
    ST(cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, s, 5), CU_FILE_INVALID_VALUE);
    CHECK((unsigned char)s[0] == 0xAB, "a refused string wrote nothing");
    ST(cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, s, 0), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterString(CUFILE_PARAM_RDMA_TRANSPORT, s, sizeof(s)), CU_FILE_SUCCESS);
    CHECK(strcmp(s, "DC_V1") == 0, "rdma transport %s", s);
    ST(cuFileGetParameterString(CUFILE_PARAM_RDMA_TRANSPORT, s, 1), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterString(CUFILE_PARAM_ENV_LOGFILE_PATH, s, sizeof(s)), CU_FILE_INVALID_VALUE);
    /* The log file path is cut to the buffer: a 1-byte buffer gets "" (as NVIDIA's). Nothing is
     * logged while the variable is set, and it is gone before the first open reads it. */
    setenv("CUFILE_LOGFILE_PATH", "/nonexistent/cufile-suite.log", 1);
    memset(s, 0xAB, sizeof(s));
    ST(cuFileGetParameterString(CUFILE_PARAM_ENV_LOGFILE_PATH, s, sizeof(s)), CU_FILE_SUCCESS);
    CHECK(strcmp(s, "/nonexistent/cufile-suite.log") == 0 && all_zero(s + 30, sizeof(s) - 30),
          "log file path %s", s);
    memset(s, 0xAB, sizeof(s));
    ST(cuFileGetParameterString(CUFILE_PARAM_ENV_LOGFILE_PATH, s, 1), CU_FILE_SUCCESS);
    CHECK(s[0] == 0 && (unsigned char)s[1] == 0xAB, "log file path in 1 byte");
    ST(cuFileGetParameterString(CUFILE_PARAM_ENV_LOGFILE_PATH, s, 8), CU_FILE_SUCCESS);
    CHECK(strcmp(s, "/nonexi") == 0 && (unsigned char)s[8] == 0xAB, "log file path in 8 bytes: %s", s);
    unsetenv("CUFILE_LOGFILE_PATH");
    ST(cuFileSetParameterString(CUFILE_PARAM_LOG_DIR, NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterString((CUFileStringConfigParameter_t)4, s, sizeof(s)), CU_FILE_INVALID_VALUE);

    ST(cuFileGetParameterPosixPoolSlabArray(sizes, counts, 3), CU_FILE_SUCCESS);
    CHECK(sizes[0] == 4 && sizes[1] == 1024 && sizes[2] == 16384 && counts[0] == 128 &&
              counts[1] == 64 && counts[2] == 64,
          "POSIX slab defaults");
    ST(cuFileGetParameterPosixPoolSlabArray(sizes, counts, 2), CU_FILE_INVALID_VALUE);
    ST(cuFileSetParameterGpuBounceBufferSlabArray(gsz, gcnt, 2), CU_FILE_SUCCESS);
    ST(cuFileSetParameterGpuBounceBufferSlabArray(NULL, gcnt, 2), CU_FILE_INVALID_VALUE);
    ST(cuFileSetParameterGpuBounceBufferSlabArray(gsz, gcnt, 0), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterGpuBounceBufferSlabArray(sizes, counts, 4), CU_FILE_INVALID_VALUE);
    ST(cuFileGetParameterGpuBounceBufferSlabArray(sizes, counts, 2), CU_FILE_SUCCESS);
    CHECK(sizes[0] == 4096 && sizes[1] == 8192 && counts[0] == 2 && counts[1] == 1, "GPU slabs");

    ST(cuFileDriverSetP2PFlags(CU_FILE_NVME_SUPPORTED, CU_FILE_P2P_FLAG_PCI_P2PDMA), CU_FILE_SUCCESS);
    ST(cuFileDriverSetP2PFlags(CU_FILE_NVME_SUPPORTED, CU_FILE_P2P_FLAG_NVFS), CU_FILE_INVALID_VALUE);
    ST(cuFileDriverGetP2PFlags(CU_FILE_NVME_SUPPORTED, &p2p), CU_FILE_SUCCESS);
    CHECK(p2p == CU_FILE_P2P_FLAG_PCI_P2PDMA, "P2P flags %d", (int)p2p);
    ST(cuFileDriverGetP2PFlags(CU_FILE_NFS_SUPPORTED, &p2p), CU_FILE_SUCCESS);
    CHECK(p2p == 0, "P2P flags of another type %d", (int)p2p);
    ST(cuFileDriverGetP2PFlags(CU_FILE_MAX_TARGET_TYPES, &p2p), CU_FILE_INVALID_VALUE);
    ST(cuFileDriverGetP2PFlags(CU_FILE_NVME_SUPPORTED, NULL), CU_FILE_INVALID_VALUE);

    /* The legacy setters stage while closed, like the parameter setters: the getters show it. */
    ST(cuFileDriverSetPollMode(true, 8), CU_FILE_SUCCESS);
    ST(cuFileGetParameterBool(CUFILE_PARAM_PROPERTIES_USE_POLL_MODE, &b), CU_FILE_SUCCESS);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB, &v), CU_FILE_SUCCESS);
    CHECK(b && v == 8, "staged poll mode %d, threshold %zu", (int)b, v);
    /* A size in KiB whose byte count does not fit a size_t: not a size (NVIDIA: 5022). */
    ST(cuFileDriverSetMaxPinnedMemSize(SIZE_MAX), CU_FILE_INVALID_VALUE);
    ST(cuFileDriverSetMaxCacheSize(SIZE_MAX / 1024 + 1), CU_FILE_INVALID_VALUE);
    ST(cuFileDriverSetMaxPinnedMemSize(16), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    /* Beyond their ranges the direct I/O size and the poll threshold are limits, SIZE_MAX
     * included (NVIDIA: 5003), and nothing is staged. */
    ST(cuFileDriverSetMaxDirectIOSize(SIZE_MAX), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    ST(cuFileDriverSetPollMode(true, SIZE_MAX), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB, &v), CU_FILE_SUCCESS);
    CHECK(v == 8, "a refused poll threshold was staged: %zu", v);
}

static void properties_and_open_parameters(void)
{
    CUfileDrvProps_t p;
    size_t v = 0;
    ST(cuFileDriverGetProperties(NULL), CU_FILE_INVALID_VALUE);
    memset(&p, 0xAB, sizeof(p));
    ST(cuFileDriverGetProperties(&p), CU_FILE_SUCCESS);
    CHECK(p.nvfs.major_version == 0 && p.nvfs.minor_version == 0, "nvfs %u.%u", p.nvfs.major_version,
          p.nvfs.minor_version);
    CHECK(p.per_buffer_cache_size == 1024, "per_buffer_cache_size %u", p.per_buffer_cache_size);
    /* What is staged shows through before the open (cuFile 1.17+). */
    CHECK(p.max_batch_io_size == 64 && p.nvfs.poll_thresh_size == 8 && (p.nvfs.dcontrolflags & 1u) != 0 &&
              (p.nvfs.dcontrolflags & (1u << CU_FILE_VANILLA_POSIX_IO_MODE)) != 0,
          "staged properties: batch %u, poll %zu, control %#x", p.max_batch_io_size, p.nvfs.poll_thresh_size,
          p.nvfs.dcontrolflags);

    ST(cuFileDriverOpen(), CU_FILE_SUCCESS);
    /* The staged values were applied by the open and the staging cleared. */
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, &v), CU_FILE_SUCCESS);
    CHECK(v == 64, "io_batchsize after open %zu", v);
    {
        bool nvtx = false;
        ST(cuFileGetParameterBool(CUFILE_PARAM_PROFILE_NVTX, &nvtx), CU_FILE_SUCCESS);
        CHECK(nvtx, "the staged NVTX switch was applied by the open");
    }
    ST(cuFileSetParameterSizeT(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, 32), CU_FILE_DRIVER_ALREADY_OPEN);
    ST(cuFileSetParameterBool(CUFILE_PARAM_FORCE_COMPAT_MODE, true), CU_FILE_DRIVER_ALREADY_OPEN);
    ST(cuFileSetParameterGpuBounceBufferSlabArray((const size_t[]){4}, (const size_t[]){1}, 1),
       CU_FILE_DRIVER_ALREADY_OPEN);
    memset(&p, 0xAB, sizeof(p));
    ST(cuFileDriverGetProperties(&p), CU_FILE_SUCCESS);
    CHECK(p.nvfs.major_version == 0 && p.nvfs.minor_version == 0, "nvfs version %u.%u",
          p.nvfs.major_version, p.nvfs.minor_version);
    CHECK(p.max_batch_io_size == 64, "max_batch_io_size %u", p.max_batch_io_size);
    CHECK(p.nvfs.poll_thresh_size == 8 && (p.nvfs.dcontrolflags & 1u) != 0, "staged poll mode applied: %zu, %#x",
          p.nvfs.poll_thresh_size, p.nvfs.dcontrolflags);
    CHECK((p.nvfs.dcontrolflags & (1u << CU_FILE_ALLOW_COMPAT_MODE)) != 0, "dcontrolflags %#x",
          p.nvfs.dcontrolflags);
    CHECK((p.nvfs.dcontrolflags & (1u << CU_FILE_VANILLA_POSIX_IO_MODE)) != 0,
          "staged vanilla POSIX mode in dcontrolflags %#x", p.nvfs.dcontrolflags);
    CHECK((p.fflags & 0xBu) == 0xBu, "fflags %#x: dynamic routing, batch and parallel I/O", p.fflags);
    /* Legacy setters work while open (DeepSpeed calls this after its open). */
    ST(cuFileDriverSetMaxDirectIOSize(1024), CU_FILE_SUCCESS);
    ST(cuFileDriverSetMaxDirectIOSize(0), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    ST(cuFileDriverSetMaxDirectIOSize((size_t)1 << 40), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    ST(cuFileDriverSetPollMode(true, 16), CU_FILE_SUCCESS);
    ST(cuFileDriverSetMaxCacheSize(131072), CU_FILE_SUCCESS);
    ST(cuFileDriverSetMaxPinnedMemSize(SIZE_MAX), CU_FILE_INVALID_VALUE);
    ST(cuFileDriverSetMaxPinnedMemSize(33554432), CU_FILE_SUCCESS);
    ST(cuFileDriverSetMaxPinnedMemSize(16), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    ST(cuFileDriverSetMaxDirectIOSize(SIZE_MAX), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    ST(cuFileDriverSetPollMode(true, SIZE_MAX), CU_FILE_DRIVER_UNSUPPORTED_LIMIT);
    ST(cuFileDriverGetProperties(&p), CU_FILE_SUCCESS);
    CHECK(p.nvfs.max_direct_io_size == 1024, "max_direct_io_size %zu", p.nvfs.max_direct_io_size);
    CHECK(p.nvfs.poll_thresh_size == 16, "poll_thresh_size %zu", p.nvfs.poll_thresh_size);
    CHECK((p.nvfs.dcontrolflags & 1u) != 0, "poll mode bit");
    CHECK(p.max_device_cache_size == 131072, "max_device_cache_size %u", p.max_device_cache_size);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 0, "closed");
}

static void registration(void)
{
    char path[512];
    int fds[2];
    int fd, fd_append, fd_dir, fd_closed;
    CUfileHandle_t fh = NULL, fh2;
    CUfileDescr_t d;
    void *dev;

    /* Implicit open by registration: counts 1, and deregistering leaves it. */
    CHECK(cuFileUseCount() == 0, "use count %ld", cuFileUseCount());
    fd = pattern_file("reg", 8192, O_RDONLY, path, sizeof(path));
    fh = reg(fd);
    CHECK(cuFileUseCount() == 1, "implicit open counts: %ld", cuFileUseCount());
    ST(reg_status(fd, CU_FILE_HANDLE_TYPE_OPAQUE_FD), CU_FILE_HANDLE_ALREADY_REGISTERED);
    cuFileHandleDeregister(fh);
    CHECK(cuFileUseCount() == 1, "deregistering does not close: %ld", cuFileUseCount());
    cuFileHandleDeregister(NULL); /* ignored */
    fh2 = reg(fd);
    cuFileHandleDeregister(fh2);

    memset(&d, 0, sizeof(d));
    ST(cuFileHandleRegister(NULL, &d), CU_FILE_INVALID_VALUE);
    ST(cuFileHandleRegister(&fh, NULL), CU_FILE_INVALID_VALUE);
    ST(reg_status(fd, CU_FILE_HANDLE_TYPE_OPAQUE_WIN32), CU_FILE_IO_NOT_SUPPORTED);
    ST(reg_status(fd, CU_FILE_HANDLE_TYPE_USERSPACE_FS), CU_FILE_IO_NOT_SUPPORTED);
    ST(reg_status(-1, CU_FILE_HANDLE_TYPE_OPAQUE_FD), CU_FILE_INVALID_VALUE);
    fd_closed = dup(fd);
    close(fd_closed);
    ST(reg_status(fd_closed, CU_FILE_HANDLE_TYPE_OPAQUE_FD), CU_FILE_INVALID_VALUE);
    fd_append = open(path, O_WRONLY | O_APPEND);
    ST(reg_status(fd_append, CU_FILE_HANDLE_TYPE_OPAQUE_FD), CU_FILE_INVALID_FILE_OPEN_FLAG);
    close(fd_append);
    fd_dir = open(dir, O_RDONLY | O_DIRECTORY);
    ST(reg_status(fd_dir, CU_FILE_HANDLE_TYPE_OPAQUE_FD), CU_FILE_INVALID_FILE_TYPE);
    close(fd_dir);
    if (pipe(fds) == 0) {
        ST(reg_status(fds[0], CU_FILE_HANDLE_TYPE_OPAQUE_FD), CU_FILE_INVALID_FILE_TYPE);
        close(fds[0]);
        close(fds[1]);
    }
    close(fd);
    unlink(path);

    /* Buffers. */
    dev = dev_alloc(1 << 20);
    ST(cuFileBufRegister(NULL, 4096, 0), CU_FILE_INVALID_VALUE);
    ST(cuFileBufRegister(dev, 0, 0), CU_FILE_INVALID_VALUE);
    ST(cuFileBufRegister(dev, 1 << 20, 0), CU_FILE_SUCCESS);
    ST(cuFileBufRegister(dev, 1 << 20, 0), CU_FILE_MEMORY_ALREADY_REGISTERED);
    ST(cuFileBufRegister((char *)dev + 65536, 65536, 0), CU_FILE_SUCCESS);
    ST(cuFileBufRegister((char *)dev + 4096, 2 << 20, 0), CU_FILE_CUDA_POINTER_RANGE_ERROR);
    ST(cuFileBufDeregister((char *)dev + 65536), CU_FILE_SUCCESS);
    ST(cuFileBufDeregister((char *)dev + 8192), CU_FILE_MEMORY_NOT_REGISTERED);
    ST(cuFileBufDeregister(NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileBufDeregister(dev), CU_FILE_SUCCESS);
    dev_free(dev);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 0, "closed");
}

/* Read `size` bytes at file offset `off` into `mem` + `boff` (device when `device`). */
static void read_exact(CUfileHandle_t fh, void *mem, int device, size_t size, off_t off, off_t boff,
                       size_t file_len)
{
    size_t want = off >= (off_t)file_len ? 0 : ((size_t)off + size > file_len ? file_len - (size_t)off : size);
    unsigned char *host = malloc(size ? size : 1);
    errno = 0;
    ssize_t r = cuFileRead(fh, mem, size, off, boff);
    CHECK(r == (ssize_t)want, "read %zu at %lld (+%lld) -> %zd, expected %zu", size, (long long)off,
          (long long)boff, r, want);
    /* errno means nothing after a success, but a cuFile status left there misleads a reader. */
    CHECK(r < 0 || errno < 5000, "a successful read left errno %d", errno);
    if (r > 0) {
        if (device)
            download(host, (char *)mem + boff, (size_t)r);
        else
            memcpy(host, (char *)mem + boff, (size_t)r);
        CHECK(is_pattern(host, (size_t)r, (size_t)off), "bytes of the read of %zu at %lld", size,
              (long long)off);
    }
    free(host);
}

static void sync_io(void)
{
    const size_t len = (3 << 20) + 12345, dlen = 4 << 20;
    char path[512];
    int fd = pattern_file("io", len, O_RDWR, path, sizeof(path));
    CUfileHandle_t fh = reg(fd), stale;
    unsigned char *dev = dev_alloc(dlen), *pinned = NULL, *pageable = malloc(dlen), *check = malloc(dlen);
    unsigned char *src = malloc(1 << 20);
    size_t i;
    cu.host_alloc((void **)&pinned, dlen, 0);

    /* Unaligned everything, into device memory, registered and not. */
    read_exact(fh, dev, 1, 100, 1, 3, len);
    read_exact(fh, dev, 1, (1 << 20) + 7, 4099, 13, len);
    ST(cuFileBufRegister(dev, dlen, 0), CU_FILE_SUCCESS);
    read_exact(fh, dev, 1, len, 0, 0, len);
    read_exact(fh, dev, 1, 777777, 333, 4097, len);
    read_exact(fh, dev + 8192, 1, 5000, 12345, 0, len); /* interior pointer, unregistered base */
    /* Host memory: pinned and pageable. */
    read_exact(fh, pinned, 0, 123457, 7, 5, len);
    read_exact(fh, pageable, 0, (2 << 20) + 1, 1001, 11, len);
    /* End of file: a short count there, 0 at and past it. */
    read_exact(fh, dev, 1, 65536, (off_t)len - 1000, 0, len);
    read_exact(fh, dev, 1, 4096, (off_t)len, 0, len);
    read_exact(fh, dev, 1, 4096, (off_t)len + (1 << 30), 0, len);

    /* Writes from device and host memory at unaligned offsets, read back through the file. */
    fill_pattern(src, 1 << 20, 5555);
    upload(dev + 17, src, 1 << 20);
    CHECK(cuFileWrite(fh, dev, 1 << 20, 4097, 17) == (1 << 20), "device write");
    CHECK(pread(fd, check, 1 << 20, 4097) == (1 << 20) && memcmp(check, src, 1 << 20) == 0,
          "device write bytes");
    memcpy(pageable + 3, src, 4099);
    CHECK(cuFileWrite(fh, pageable, 4099, 123, 3) == 4099, "host write");
    CHECK(pread(fd, check, 4099, 123) == 4099 && memcmp(check, src, 4099) == 0, "host write bytes");
    for (i = 0; i < 4099; i++)
        pinned[i] = (unsigned char)(i * 7);
    CHECK(cuFileWrite(fh, pinned, 4099, len - 10, 0) == 4099, "pinned write extending the file");
    CHECK(pread(fd, check, 4099, len - 10) == 4099 && memcmp(check, pinned, 4099) == 0,
          "pinned write bytes");

    /* Refusals, in cuFile's order. */
    FAILS_WITH(cuFileRead(NULL, dev, 4096, 0, 0), EINVAL);
    FAILS_WITH(cuFileRead(fh, NULL, 4096, 0, 0), EINVAL);
    CHECK(cuFileRead(fh, dev, 0, 0, 0) == 0, "size 0");
    /* An empty request is 0 whatever its offsets, as NVIDIA's library answers it... */
    CHECK(cuFileRead(fh, dev, 0, -1, -1) == 0 && cuFileWrite(fh, dev, 0, -1, 0) == 0, "size 0, bad offsets");
    /* ...but only on a registered handle: the handle is checked first. */
    FAILS_WITH(cuFileRead((CUfileHandle_t)(uintptr_t)0x1234, dev, 0, 0, 0), CU_FILE_HANDLE_NOT_REGISTERED);
    FAILS_WITH(cuFileWrite((CUfileHandle_t)(uintptr_t)0x1234, dev, 0, 0, 0), CU_FILE_HANDLE_NOT_REGISTERED);
    FAILS_WITH(cuFileRead(fh, dev, 4096, -1, 0), CU_FILE_INVALID_VALUE);
    FAILS_WITH(cuFileRead(fh, dev, 4096, 0, -1), CU_FILE_INTERNAL_ERROR);
    FAILS_WITH(cuFileRead(fh, dev, 8192, 0, (off_t)dlen - 4096), CU_FILE_INVALID_MAPPING_RANGE);
    stale = reg(open(path, O_RDONLY));
    FAILS_WITH(cuFileWrite(stale, dev, 4096, 0, 0), CU_FILE_INVALID_FILE_OPEN_FLAG);
    cuFileHandleDeregister(stale);
    FAILS_WITH(cuFileRead(stale, dev, 4096, 0, 0), CU_FILE_HANDLE_NOT_REGISTERED);
    FAILS_WITH(cuFileRead(stale, dev, 0, 0, 0), CU_FILE_HANDLE_NOT_REGISTERED);
    {
        int wfd = open(path, O_WRONLY);
        CUfileHandle_t wfh = reg(wfd);
        FAILS_WITH(cuFileRead(wfh, dev, 4096, 0, 0), CU_FILE_INVALID_FILE_OPEN_FLAG);
        cuFileHandleDeregister(wfh);
        close(wfd);
    }

    /* Vectored: device then host, one contiguous file range. */
    {
        CUfileIOVec_t iov[2] = {{dev, 3000}, {pageable, 5000}};
        unsigned char got[3000];
        const off_t at = (2 << 20) + 100; /* a range no write above has touched */
        ssize_t r = cuFileReadv(fh, iov, 2, at, 0);
        CHECK(r == 8000, "readv -> %zd", r);
        download(got, dev, 3000);
        CHECK(is_pattern(got, 3000, (size_t)at) && is_pattern(pageable, 5000, (size_t)at + 3000),
              "readv bytes");
        fill_pattern(src, 8000, 999);
        upload(dev, src, 3000);
        memcpy(pageable, src + 3000, 5000);
        CHECK(cuFileWritev(fh, iov, 2, 1 << 20, 0) == 8000, "writev");
        CHECK(pread(fd, check, 8000, 1 << 20) == 8000 && memcmp(check, src, 8000) == 0, "writev bytes");
        FAILS_WITH(cuFileReadv(NULL, iov, 2, 0, 0), EINVAL);
    }
    /* Every entry is checked before any I/O (as pwritev does): a NULL base in a later entry
     * refuses the call, and neither the file nor the earlier buffers were touched. */
    {
        static unsigned char before[8192], after[8192];
        const off_t at = 3 << 20;
        CUfileIOVec_t bad[3] = {{dev, 4096}, {pageable, 100}, {NULL, 100}};
        CUfileIOVec_t huge[2] = {{pageable, (size_t)1 << 62}, {pageable, (size_t)1 << 62}};
        CUfileIOVec_t empty[2] = {{NULL, 0}, {pageable, 10}};
        CHECK(pread(fd, before, sizeof before, at) == (ssize_t)sizeof before, "pread");
        fill_pattern(src, 4096, 4242);
        upload(dev, src, 4096);
        memset(pageable, 0x5A, 100);
        FAILS_WITH(cuFileWritev(fh, bad, 3, at, 0), EINVAL);
        CHECK(pread(fd, after, sizeof after, at) == (ssize_t)sizeof after &&
                  memcmp(before, after, sizeof before) == 0,
              "a refused writev changed the file");
        FAILS_WITH(cuFileReadv(fh, bad, 3, at, 0), EINVAL);
        download(check, dev, 4096);
        CHECK(memcmp(check, src, 4096) == 0 && pageable[0] == 0x5A && pageable[99] == 0x5A,
              "a refused readv filled the earlier buffers");
        /* Lengths whose sum is beyond ssize_t: refused before anything moves. */
        FAILS_WITH(cuFileWritev(fh, huge, 2, at, 0), EINVAL);
        /* A zero-length entry may have any base. */
        CHECK(cuFileReadv(fh, empty, 2, at, 0) == 10 && is_pattern(pageable, 10, (size_t)at),
              "readv with an empty NULL entry");
    }
    /* Once I/O has started, what was moved is reported: a base the engine cannot use (past its
     * device allocation) after a good entry gives the first entry's count. */
    {
        static unsigned char before[4096];
        const off_t at = (3 << 20) - 8192;
        CUfileIOVec_t part[2] = {{dev, 4096}, {dev + dlen - 100, 4096}};
        ssize_t r;
        CHECK(pread(fd, before, sizeof before, at + 4096) == (ssize_t)sizeof before, "pread");
        fill_pattern(src, 4096, 777);
        upload(dev, src, 4096);
        r = cuFileWritev(fh, part, 2, at, 0);
        CHECK(r == 4096, "writev that fails at its second entry -> %zd, expected 4096", r);
        CHECK(pread(fd, check, 8192, at) == 8192 && memcmp(check, src, 4096) == 0 &&
                  memcmp(check + 4096, before, 4096) == 0,
              "writev prefix bytes");
        r = cuFileReadv(fh, part, 2, (2 << 20) + 65536, 0); /* a range no write touched */
        CHECK(r == 4096, "readv that fails at its second entry -> %zd, expected 4096", r);
        download(check, dev, 4096);
        CHECK(is_pattern(check, 4096, (2 << 20) + 65536), "readv prefix bytes");
        /* Failing at the first entry: nothing moved, -1 and the error. */
        errno = 0;
        r = cuFileReadv(fh, part + 1, 1, 0, 0);
        CHECK(r == -1 && errno != 0, "readv of an unusable base alone -> %zd errno %d", r, errno);
    }

    ST(cuFileBufDeregister(dev), CU_FILE_SUCCESS);
    cuFileHandleDeregister(fh);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS); /* the implicit open of reg() */
    close(fd);
    unlink(path);
    dev_free(dev);
    cu.free_host(pinned);
    free(pageable);
    free(check);
    free(src);
}

/* O_DIRECT descriptors take any alignment (when the file system has O_DIRECT at all). */
static void direct_io(void)
{
    char path[512];
    const size_t len = (1 << 20) + 333;
    int fd = pattern_file("direct", len, O_RDONLY, path, sizeof(path));
    int dfd = open(path, O_RDWR | O_DIRECT);
    close(fd);
    if (dfd < 0) {
        printf("direct I/O: the scratch file system has no O_DIRECT (skipped)\n");
        unlink(path);
        return;
    }
    {
        CUfileHandle_t fh = reg(dfd);
        unsigned char *dev = dev_alloc(2 << 20);
        read_exact(fh, dev, 1, 100001, 4095, 1, len);
        read_exact(fh, dev, 1, len, 0, 0, len);
        cuFileHandleDeregister(fh);
        ST(cuFileDriverClose(), CU_FILE_SUCCESS);
        dev_free(dev);
    }
    close(dfd);
    unlink(path);
}

/* Many threads on one handle at once (KvikIO's pool, DeepSpeed, fastsafetensors). */
enum { THREADS = 8, PIECE = (512 << 10) + 3 };
struct piece {
    CUfileHandle_t fh;
    unsigned char *dev;
    int index;
    ssize_t got;
};

static void *read_piece(void *arg)
{
    struct piece *p = arg;
    off_t off = (off_t)p->index * PIECE;
    p->got = cuFileRead(p->fh, p->dev, PIECE, off + 1, off);
    return NULL;
}

static void concurrent_reads(void)
{
    char path[512];
    const size_t len = (size_t)THREADS * PIECE + 1;
    int fd = pattern_file("threads", len, O_RDONLY, path, sizeof(path));
    CUfileHandle_t fh = reg(fd);
    unsigned char *dev = dev_alloc((size_t)THREADS * PIECE);
    unsigned char *host = malloc((size_t)THREADS * PIECE);
    pthread_t t[THREADS];
    struct piece p[THREADS];
    int i;
    ST(cuFileBufRegister(dev, (size_t)THREADS * PIECE, 0), CU_FILE_SUCCESS);
    for (i = 0; i < THREADS; i++) {
        p[i] = (struct piece){fh, dev, i, 0};
        pthread_create(&t[i], NULL, read_piece, &p[i]);
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(p[i].got == PIECE, "thread %d read %zd", i, p[i].got);
    }
    download(host, dev, (size_t)THREADS * PIECE);
    CHECK(is_pattern(host, (size_t)THREADS * PIECE, 1), "bytes of the concurrent reads");
    ST(cuFileBufDeregister(dev), CU_FILE_SUCCESS);
    cuFileHandleDeregister(fh);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    /* After the final close nothing is registered any more. */
    ST(cuFileBufDeregister(dev), CU_FILE_DRIVER_CLOSING);
    close(fd);
    unlink(path);
    dev_free(dev);
    free(host);
}

static void batch(void)
{
    char path[512];
    const size_t len = 1 << 20;
    int fd = pattern_file("batch", len, O_RDWR, path, sizeof(path));
    CUfileHandle_t fh = reg(fd);
    CUfileBatchHandle_t b = NULL, b2 = NULL;
    CUfileIOParams_t io[3];
    CUfileIOEvents_t ev[4];
    unsigned char *dev = dev_alloc(len);
    unsigned char *host = malloc(len);
    unsigned nr = 4, i, seen = 0;
    struct timespec t = {5, 0};

    ST(cuFileBatchIOSetUp(&b, 0), CU_FILE_INVALID_VALUE);
    ST(cuFileBatchIOSetUp(NULL, 4), CU_FILE_INVALID_VALUE);
    ST(cuFileBatchIOSetUp(&b, 4), CU_FILE_SUCCESS);
    memset(io, 0, sizeof(io));
    for (i = 0; i < 2; i++) {
        io[i].mode = CUFILE_BATCH;
        io[i].fh = fh;
        io[i].opcode = CUFILE_READ;
        io[i].u.batch.devPtr_base = dev;
        io[i].u.batch.file_offset = (off_t)(i * 300001 + 7);
        io[i].u.batch.devPtr_offset = (off_t)(i * 400000 + 1);
        io[i].u.batch.size = 300000;
        io[i].cookie = (void *)(uintptr_t)(100 + i);
    }
    ST(cuFileBatchIOSubmit(b, 2, io, 0), CU_FILE_SUCCESS);
    ST(cuFileBatchIOGetStatus(b, 3, &(unsigned){2}, ev, &t), CU_FILE_INVALID_VALUE);
    while (seen < 2) {
        nr = 4 - seen;
        ST(cuFileBatchIOGetStatus(b, 2 - seen, &nr, ev + seen, &t), CU_FILE_SUCCESS);
        if (nr == 0)
            break;
        seen += nr;
    }
    CHECK(seen == 2, "%u events", seen);
    for (i = 0; i < seen; i++) {
        unsigned k = (unsigned)((uintptr_t)ev[i].cookie - 100);
        CHECK(k < 2 && ev[i].status == CUFILE_COMPLETE && ev[i].ret == 300000,
              "event %u: cookie %p status %d ret %zu", i, ev[i].cookie, (int)ev[i].status, ev[i].ret);
    }
    download(host, dev, len);
    CHECK(is_pattern(host + 1, 300000, 7) && is_pattern(host + 400001, 300000, 300008), "batch bytes");

    /* Refused submissions run nothing. */
    ST(cuFileBatchIOSubmit(b, 0, io, 0), CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR);
    io[2] = io[0];
    io[2].mode = (CUfileBatchMode_t)0;
    ST(cuFileBatchIOSubmit(b, 1, io + 2, 0), CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR);
    io[2] = io[0];
    io[2].fh = (CUfileHandle_t)(uintptr_t)0x1234;
    ST(cuFileBatchIOSubmit(b, 1, io + 2, 0), CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR);
    ST(cuFileBatchIOCancel(NULL), CU_FILE_SUCCESS);
    ST(cuFileBatchIOCancel(b), CU_FILE_SUCCESS);
    cuFileBatchIODestroy(b);
    ST(cuFileBatchIOSubmit(b, 1, io, 0), CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR);
    nr = 4;
    ST(cuFileBatchIOGetStatus(b, 0, &nr, ev, &t), CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR);
    cuFileBatchIODestroy(NULL);

    /* A write entry. */
    ST(cuFileBatchIOSetUp(&b2, 1), CU_FILE_SUCCESS);
    fill_pattern(host, 4096, 77);
    upload(dev, host, 4096);
    io[0].opcode = CUFILE_WRITE;
    io[0].u.batch.file_offset = 9;
    io[0].u.batch.devPtr_offset = 0;
    io[0].u.batch.size = 4096;
    ST(cuFileBatchIOSubmit(b2, 1, io, 0), CU_FILE_SUCCESS);
    nr = 1;
    ST(cuFileBatchIOGetStatus(b2, 1, &nr, ev, NULL), CU_FILE_SUCCESS);
    CHECK(nr == 1 && ev[0].status == CUFILE_COMPLETE && ev[0].ret == 4096, "write event");
    {
        unsigned char got[4096];
        CHECK(pread(fd, got, 4096, 9) == 4096 && is_pattern(got, 4096, 77), "batch write bytes");
    }
    cuFileBatchIODestroy(b2);

    cuFileHandleDeregister(fh);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    close(fd);
    unlink(path);
    dev_free(dev);
    free(host);
}

static void streams(void)
{
    char path[512];
    const size_t len = 1 << 16;
    int fd = pattern_file("stream", len, O_RDWR, path, sizeof(path));
    CUfileHandle_t fh = reg(fd);
    void *stream = NULL;
    unsigned char *dev = dev_alloc(len);
    size_t size = 4096;
    off_t foff = 3, boff = 5;
    ssize_t done = 0;
    CUfileError_t s;

    cu.stream_create(&stream, 0);
    ST(cuFileStreamRegister((CUstream)stream, 16), CU_FILE_INVALID_VALUE);
    ST(cuFileStreamRegister((CUstream)stream, 0xF), CU_FILE_SUCCESS);
    ST(cuFileStreamRegister((CUstream)stream, 0), CU_FILE_INVALID_VALUE);
    ST(cuFileReadAsync(fh, dev, NULL, &foff, &boff, &done, (CUstream)stream), CU_FILE_INVALID_VALUE);
    ST(cuFileReadAsync(fh, dev, &size, &foff, &boff, NULL, (CUstream)stream), CU_FILE_INVALID_VALUE);
    s = cuFileReadAsync(fh, dev, &size, &foff, &boff, &done, (CUstream)stream);
    CHECK(s.err == CU_FILE_SUCCESS && s.cu_err == CUDA_SUCCESS, "cuFileReadAsync -> %d", (int)s.err);
    if (s.err == CU_FILE_SUCCESS) {
        unsigned char got[4096];
        cu.stream_sync(stream);
        download(got, dev + 5, 4096);
        CHECK(done == 4096 && is_pattern(got, 4096, 3), "stream-ordered read: %zd bytes", done);
        /* The same bytes written back 8 KiB further on, then read there. */
        off_t woff = 8192 + 3;
        ssize_t wrote = 0;
        s = cuFileWriteAsync(fh, dev, &size, &woff, &boff, &wrote, (CUstream)stream);
        CHECK(s.err == CU_FILE_SUCCESS, "cuFileWriteAsync -> %d", (int)s.err);
        cu.stream_sync(stream);
        CHECK(wrote == 4096, "stream-ordered write: %zd bytes", wrote);
        unsigned char back[4096];
        CHECK(pread(fd, back, sizeof back, woff) == 4096 && is_pattern(back, 4096, 3),
              "stream-ordered write: the bytes in the file");
        printf("stream-ordered I/O: works\n");
    }
    /* The NULL stream: synchronous, *bytes_p is there when the call returns. */
    {
        ssize_t now = 0;
        off_t at = 100;
        ST(cuFileReadAsync(fh, dev, &size, &at, &boff, &now, NULL), CU_FILE_SUCCESS);
        CHECK(now == 4096, "stream-ordered read on the NULL stream: %zd bytes on return", now);
    }
    ST(cuFileStreamDeregister((CUstream)stream), CU_FILE_SUCCESS);
    ST(cuFileStreamDeregister((CUstream)stream), CU_FILE_INVALID_VALUE);
    cu.stream_destroy(stream);
    cuFileHandleDeregister(fh);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    close(fd);
    unlink(path);
    dev_free(dev);
}

/* The statistics structures in the layout of the version the library reports: 1.15..1.18
 * (512 / 1024 / 5000 bytes) below 1190, 1.19 (624 / 1136 / 5112) from it. The suite's header
 * declares the 1.19 ones, so it reads through offsets, as a consumer that checks the version
 * must; each structure is filled with 0xAB first, to see what the library wrote. */
static int stats_version;
static size_t l1_size(void) { return stats_version >= 1190 ? 624 : 512; }
static size_t hist_at(void) { return l1_size(); }
static size_t gpus_at(void) { return l1_size() + 512; }

static uint64_t u64_at(const unsigned char *p, size_t off)
{
    uint64_t v;
    memcpy(&v, p + off, sizeof(v));
    return v;
}

static int untouched(const unsigned char *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (p[i] != 0xAB)
            return 0;
    return 1;
}

static void statistics(void)
{
    char path[512];
    const size_t len = 1 << 20;
    int fd = pattern_file("stats", len, O_RDWR, path, sizeof(path));
    CUfileHandle_t fh;
    /* Room for the largest layout, 8-byte aligned. */
    unsigned char *l1 = malloc(sizeof(CUfileStatsLevel1_t)), *l2 = malloc(sizeof(CUfileStatsLevel2_t));
    unsigned char *l3 = malloc(sizeof(CUfileStatsLevel3_t));
    unsigned char *dev = dev_alloc(len);
    int level = -1;
    CUfileIOVec_t iov[1] = {{dev, 1000}};
    const size_t per_gpu_read_bytes = 16; /* CUfilePerGpuStats_t.read_bytes */

    ST(cuFileGetVersion(&stats_version), CU_FILE_SUCCESS);
    ST(cuFileGetStatsL1((CUfileStatsLevel1_t *)l1), CU_FILE_DRIVER_NOT_INITIALIZED);
    /* NULL is refused first, while closed too (as NVIDIA's). */
    ST(cuFileGetStatsL1(NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileGetStatsL2(NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileGetStatsL3(NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileStatsStart(), CU_FILE_DRIVER_NOT_INITIALIZED);
    ST(cuFileSetStatsLevel(4), CU_FILE_INVALID_VALUE);
    ST(cuFileSetStatsLevel(-1), CU_FILE_INVALID_VALUE);
    ST(cuFileSetStatsLevel(3), CU_FILE_SUCCESS);
    ST(cuFileGetStatsLevel(NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileGetStatsLevel(&level), CU_FILE_SUCCESS);
    CHECK(level == 3, "level %d", level);
    ST(cuFileDriverOpen(), CU_FILE_SUCCESS);
    fh = reg(fd);
    ST(cuFileStatsReset(), CU_FILE_SUCCESS);
    ST(cuFileGetStatsL1((CUfileStatsLevel1_t *)l1), CU_FILE_SUCCESS);
    CHECK(((CUfileStatsLevel1_t *)l1)->read_ops.ok == 0 && ((CUfileStatsLevel1_t *)l1)->read_bytes == 0,
          "after reset: %llu ops %llu bytes", (unsigned long long)((CUfileStatsLevel1_t *)l1)->read_ops.ok,
          (unsigned long long)((CUfileStatsLevel1_t *)l1)->read_bytes);
    CHECK(cuFileRead(fh, dev, 4096, 0, 0) == 4096, "read 1");
    CHECK(cuFileRead(fh, dev, 10000, 5, 0) == 10000, "read 2");
    CHECK(cuFileWrite(fh, dev, 3000, 0, 0) == 3000, "write");
    CHECK(cuFileReadv(fh, iov, 1, 0, 0) == 1000, "readv");
    memset(l1, 0xAB, sizeof(CUfileStatsLevel1_t));
    ST(cuFileGetStatsL1((CUfileStatsLevel1_t *)l1), CU_FILE_SUCCESS);
    {
        const CUfileStatsLevel1_t *s = (const CUfileStatsLevel1_t *)l1;
        /* The vectored read is one engine read too. */
        CHECK(s->read_ops.ok == 3 && s->read_bytes == 15096, "reads: %llu ops %llu bytes",
              (unsigned long long)s->read_ops.ok, (unsigned long long)s->read_bytes);
        CHECK(s->write_ops.ok == 1 && s->write_bytes == 3000, "writes: %llu ops %llu bytes",
              (unsigned long long)s->write_ops.ok, (unsigned long long)s->write_bytes);
        if (stats_version >= 1190)
            CHECK(s->readv_ops.ok == 1 && s->readv_bytes == 1000, "readv: %llu ops %llu bytes",
                  (unsigned long long)s->readv_ops.ok, (unsigned long long)s->readv_bytes);
        CHECK(untouched(l1, l1_size(), sizeof(CUfileStatsLevel1_t)),
              "level 1 of cuFile %d wrote past its %zu bytes", stats_version, l1_size());
    }
    memset(l2, 0xAB, sizeof(CUfileStatsLevel2_t));
    ST(cuFileGetStatsL2((CUfileStatsLevel2_t *)l2), CU_FILE_SUCCESS);
    CHECK(((CUfileStatsLevel2_t *)l2)->basic.read_ops.ok == 3, "L2 basic");
    /* Reads of 4096, 10000 and 1000 bytes: the 4 KiB, 8 KiB and 0 KiB histogram buckets were
     * reached; every bucket is a count, so the read column sums to the 3 reads. */
    {
        uint64_t sum = 0;
        for (int i = 0; i < 32; i++)
            sum += u64_at(l2, hist_at() + 8 * (size_t)i);
        CHECK(sum == 3, "read histogram at %zu sums to %llu", hist_at(), (unsigned long long)sum);
        CHECK(untouched(l2, gpus_at(), sizeof(CUfileStatsLevel2_t)), "level 2 wrote past %zu bytes",
              gpus_at());
    }
    memset(l3, 0xAB, sizeof(CUfileStatsLevel3_t));
    ST(cuFileGetStatsL3((CUfileStatsLevel3_t *)l3), CU_FILE_SUCCESS);
    {
        uint32_t gpus;
        memcpy(&gpus, l3 + gpus_at(), sizeof(gpus));
        CHECK(((CUfileStatsLevel3_t *)l3)->detailed.basic.write_bytes == 3000 && gpus >= 1 &&
                  u64_at(l3, gpus_at() + 8 + per_gpu_read_bytes) == 15096,
              "L3: %u GPUs, GPU 0 read %llu bytes", gpus,
              (unsigned long long)u64_at(l3, gpus_at() + 8 + per_gpu_read_bytes));
        CHECK(untouched(l3, gpus_at() + 8 + 16 * 248, sizeof(CUfileStatsLevel3_t)),
              "level 3 wrote past its %zu bytes", gpus_at() + 8 + 16 * 248);
    }
    /* Stop ends collection, as NVIDIA's does: the level is 0, the structures are refused, and
     * a start needs a level first. */
    ST(cuFileStatsStop(), CU_FILE_SUCCESS);
    ST(cuFileGetStatsLevel(&level), CU_FILE_SUCCESS);
    CHECK(level == 0, "level after the stop %d", level);
    CHECK(cuFileRead(fh, dev, 4096, 0, 0) == 4096, "read while stopped");
    ST(cuFileGetStatsL1((CUfileStatsLevel1_t *)l1), CU_FILE_INVALID_VALUE);
    ST(cuFileStatsStart(), CU_FILE_INTERNAL_ERROR);
    ST(cuFileSetStatsLevel(3), CU_FILE_SUCCESS);
    ST(cuFileGetStatsL1((CUfileStatsLevel1_t *)l1), CU_FILE_SUCCESS);
    CHECK(((CUfileStatsLevel1_t *)l1)->read_ops.ok == 3, "frozen at the stop: %llu",
          (unsigned long long)((CUfileStatsLevel1_t *)l1)->read_ops.ok);
    ST(cuFileStatsStart(), CU_FILE_SUCCESS);
    CHECK(cuFileRead(fh, dev, 100, 0, 0) == 100, "read after start");
    ST(cuFileGetStatsL1((CUfileStatsLevel1_t *)l1), CU_FILE_SUCCESS);
    CHECK(((CUfileStatsLevel1_t *)l1)->read_ops.ok == 4 && ((CUfileStatsLevel1_t *)l1)->read_bytes == 15196,
          "resumed without the stopped read: %llu ops",
          (unsigned long long)((CUfileStatsLevel1_t *)l1)->read_ops.ok);
    ST(cuFileSetStatsLevel(1), CU_FILE_SUCCESS);
    {
        /* The parameter is the configured level (profile.cufile_stats, 0 here), not the level
         * cuFileSetStatsLevel put in force (as NVIDIA's reads 0 at level 3). */
        size_t v = 9;
        ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROFILE_STATS, &v), CU_FILE_SUCCESS);
        CHECK(v == 0, "profile stats parameter %zu", v);
        ST(cuFileGetStatsLevel(&level), CU_FILE_SUCCESS);
        CHECK(level == 1, "level %d", level);
    }
    ST(cuFileGetStatsL2((CUfileStatsLevel2_t *)l2), CU_FILE_INVALID_VALUE);
    ST(cuFileGetStatsL1(NULL), CU_FILE_INVALID_VALUE);
    /* Reset works at level 0 too. */
    ST(cuFileStatsStop(), CU_FILE_SUCCESS);
    ST(cuFileStatsReset(), CU_FILE_SUCCESS);
    cuFileHandleDeregister(fh);
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    CHECK(cuFileUseCount() == 0, "closed: %ld", cuFileUseCount());
    close(fd);
    unlink(path);
    dev_free(dev);
    free(l1);
    free(l2);
    free(l3);
}

/* BAR1 of device 0 in KiB as sysfs shows it, 0 where it cannot be read: what
 * cuFileGetBARSizeInKB must answer. BAR1 is the second memory BAR (IORESOURCE_MEM, 0x200)
 * that is not empty among the six BAR lines of the device's resource file: line 2 after a
 * 32-bit BAR0, line 3 after a 64-bit one (whose upper half is the empty line 2). Every line
 * is printed, for the record of a run. */
static size_t sysfs_bar1_kib(void)
{
    char id[64] = {0}, path[160], line[256];
    unsigned long long start, end, flags;
    unsigned dom, bus, devn, fn;
    size_t kib = 0;
    int memory = 0, n = 0;
    FILE *f;
    if (!cu.pci_bus_id || cu.pci_bus_id(id, sizeof(id), 0) != 0 ||
        sscanf(id, "%x:%x:%x.%x", &dom, &bus, &devn, &fn) != 4)
        return 0;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/resource", dom, bus, devn, fn);
    f = fopen(path, "r");
    if (!f)
        return 0;
    printf("BAR1: GPU 0 is PCI device %s; %s:\n", id, path);
    while (n < 6 && fgets(line, sizeof(line), f)) {
        printf("BAR1:   line %d: %s", ++n, line);
        if (sscanf(line, "%llx %llx %llx", &start, &end, &flags) == 3 && (flags & 0x200) && end > start &&
            ++memory == 2)
            kib = (size_t)((end - start + 1) / 1024);
    }
    fclose(f);
    printf("BAR1: %zu KiB\n", kib);
    return kib;
}

static void gpu_and_topology(void)
{
    size_t kb = 1;
    char path[512], text[64] = {0};
    FILE *f;
    ST(cuFileGetBARSizeInKB(0, NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileGetBARSizeInKB(0, &kb), CU_FILE_SUCCESS);
    CHECK(kb == sysfs_bar1_kib(), "BAR1 %zu KiB, sysfs says %zu", kb, sysfs_bar1_kib());
    ST(cuFileGetBARSizeInKB(99, &kb), CU_FILE_INVALID_VALUE);
    ST(cuFileGetBARSizeInKB(-1, &kb), CU_FILE_INVALID_VALUE);
    {
        /* The GPU-dependent maxima are GPU 0's BAR1 in KiB (0: no bound), as NVIDIA reports. */
        size_t lo = 1, hi = 1, bar = sysfs_bar1_kib();
        ST(cuFileGetParameterMinMaxValue(CUFILE_PARAM_PROPERTIES_MAX_DEVICE_CACHE_SIZE_KB, &lo, &hi), CU_FILE_SUCCESS);
        CHECK(lo == 0 && hi == bar, "device cache range %zu..%zu, BAR1 %zu", lo, hi, bar);
        ST(cuFileGetParameterMinMaxValue(CUFILE_PARAM_PROPERTIES_MAX_DEVICE_PINNED_MEM_SIZE_KB, &lo, &hi),
           CU_FILE_SUCCESS);
        CHECK(lo == 64 && hi == bar, "pinned memory range %zu..%zu, BAR1 %zu", lo, hi, bar);
    }
    ST(cuFileExportPCIeTopology(NULL), CU_FILE_INVALID_VALUE);
    ST(cuFileExportPCIeTopology(""), CU_FILE_INVALID_VALUE);
    ST(cuFileExportPCIeTopology("/"), CU_FILE_INVALID_VALUE);
    ST(cuFileExportPCIeTopology("/nonexistent-dir/x/topology.json"), CU_FILE_INVALID_VALUE);
    path_of(path, sizeof(path), "topology.json");
    ST(cuFileExportPCIeTopology(path), CU_FILE_SUCCESS);
    f = fopen(path, "r");
    CHECK(f && fread(text, 1, sizeof(text) - 1, f) > 0 &&
              strncmp(text, "// Topology file for cuFile.", 28) == 0,
          "topology file: %s", text);
    if (f)
        fclose(f);
    unlink(path);
}

/* The configuration file named by $CUFILE_ENV_PATH_JSON (written by the test). */
static void configuration(void)
{
    size_t v = 0;
    bool b = false;
    char s[64];
    CUfileDrvProps_t p;
    CHECK(getenv("CUFILE_ENV_PATH_JSON") != NULL, "CUFILE_ENV_PATH_JSON is set by the test");
    /* The API beats the file's logging.level (INFO). */
    ST(cuFileSetParameterString(CUFILE_PARAM_LOGGING_LEVEL, "NOTICE"), CU_FILE_SUCCESS);
    /* A value a legacy setter staged beats the file's (4096), as a staged parameter does. */
    ST(cuFileDriverSetMaxDirectIOSize(1024), CU_FILE_SUCCESS);
    ST(cuFileDriverOpen(), CU_FILE_SUCCESS);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROPERTIES_MAX_DIRECT_IO_SIZE_KB, &v), CU_FILE_SUCCESS);
    CHECK(v == 1024, "max_direct_io_size_kb staged by the legacy setter: %zu", v);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_POLLTHRESHOLD_SIZE_KB, &v), CU_FILE_SUCCESS);
    CHECK(v == 16, "poll_mode_max_size_kb from the file: %zu", v);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, &v), CU_FILE_SUCCESS);
    CHECK(v == 32, "io_batchsize from the file: %zu", v);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_EXECUTION_MAX_IO_THREADS, &v), CU_FILE_SUCCESS);
    CHECK(v == 64, "max_io_threads 100 from the file, brought into the engine's range: %zu", v);
    ST(cuFileGetParameterSizeT(CUFILE_PARAM_PROPERTIES_PER_BUFFER_CACHE_SIZE_KB, &v), CU_FILE_SUCCESS);
    CHECK(v == 2048, "per_buffer_cache_size_kb from the file: %zu", v);
    ST(cuFileGetParameterBool(CUFILE_PARAM_FORCE_COMPAT_MODE, &b), CU_FILE_SUCCESS);
    CHECK(b, "CUFILE_FORCE_COMPAT_MODE=true");
    ST(cuFileGetParameterBool(CUFILE_PARAM_GDS_FALLBACK_IO, &b), CU_FILE_SUCCESS);
    CHECK(b, "gds_fallback_io from the file");
    ST(cuFileGetParameterString(CUFILE_PARAM_RDMA_TRANSPORT, s, sizeof(s)), CU_FILE_SUCCESS);
    CHECK(strcmp(s, "DC_V2") == 0, "rdma_transport_type %s", s);
    ST(cuFileGetParameterString(CUFILE_PARAM_LOGGING_LEVEL, s, sizeof(s)), CU_FILE_SUCCESS);
    CHECK(strcmp(s, "NOTICE") == 0, "logging level %s", s);
    ST(cuFileDriverGetProperties(&p), CU_FILE_SUCCESS);
    CHECK(p.per_buffer_cache_size == 2048 && p.max_batch_io_size == 32 &&
              (p.nvfs.dcontrolflags & (1u << CU_FILE_FALLBACK_IO_MODE)) != 0,
          "properties from the file: %u KiB, batch %u, control %#x", p.per_buffer_cache_size,
          p.max_batch_io_size, p.nvfs.dcontrolflags);
    {
        size_t sizes[2], counts[2];
        ST(cuFileGetParameterPosixPoolSlabArray(sizes, counts, 2), CU_FILE_SUCCESS);
        CHECK(sizes[0] == 8 && sizes[1] == 2048 && counts[0] == 16 && counts[1] == 4, "POSIX slabs");
    }
    ST(cuFileDriverClose(), CU_FILE_SUCCESS);
}

/* Without the engine every call says so; the version and use count still answer. */
static void no_engine(void)
{
    int v = 0;
    char buf[16];
    ST(cuFileGetVersion(&v), CU_FILE_SUCCESS);
    CHECK(v == expected_version(), "version %d", v);
    CHECK(cuFileUseCount() == 0, "use count %ld", cuFileUseCount());
    ST(cuFileDriverOpen(), CU_FILE_PLATFORM_NOT_SUPPORTED);
    ST(reg_status(open("/proc/self/exe", O_RDONLY), CU_FILE_HANDLE_TYPE_OPAQUE_FD), CU_FILE_PLATFORM_NOT_SUPPORTED);
    FAILS_WITH(cuFileRead((CUfileHandle_t)buf, buf, sizeof(buf), 0, 0), CU_FILE_PLATFORM_NOT_SUPPORTED);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [config]\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    if (argc > 2 && strcmp(argv[2], "noengine") == 0) {
        no_engine();
        printf("cufile suite: %d checks, %d failures\n", checks, failures);
        return failures ? 1 : 0;
    }
    cuda_setup();
    if (argc > 2 && strcmp(argv[2], "config") == 0) {
        configuration();
    } else if (argc > 2 && strcmp(argv[2], "open") == 0) {
        ST(cuFileDriverOpen(), CU_FILE_SUCCESS);
        ST(cuFileDriverClose(), CU_FILE_SUCCESS);
    } else {
        version_and_lifecycle();
        parameters_while_closed();
        properties_and_open_parameters();
        registration();
        sync_io();
        direct_io();
        concurrent_reads();
        batch();
        streams();
        statistics();
        gpu_and_topology();
        CHECK(cuFileUseCount() == 0, "use count at the end %ld", cuFileUseCount());
    }
    printf("cufile suite: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
