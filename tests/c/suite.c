/*
 * suite.c - a portable C test suite for libhipfile.so.0 (hipFile API 0.5.0).
 *
 * The same source runs
 *   - on a CPU-only machine against the simulated GPU runtime libhipsim.so (tests/c_suite.rs,
 *     built with -DSUITE_GPU_HIP, the default), and
 *   - on a machine with an NVIDIA GPU against real CUDA memory (scripts/gpu/build_suite.sh,
 *     built with -DSUITE_GPU_CUDA and linked with -lcudart and -lcuda: the async group creates
 *     streams with cudaStreamCreate and cuStreamCreate).
 *
 * Usage: suite [DIR] [--large] [--only=SUBSTRING] [--skip=SUBSTRING] [--case-timeout=SECONDS]
 *   DIR            existing directory for the test files (default "."); every file is created
 *                  with a unique mkstemp name there and unlinked at the end.
 *   --large        the "large" group uses 1 GiB (default 256 MiB).
 *   --only=S       run only the groups whose name contains S (the closing group always runs).
 *   --skip=S       leave out the groups whose name contains S.
 *
 * Output: one line per case, "PASS name", "FAIL name: details" or "SKIP name: reason", lines
 * starting with '#' for information, then a summary table and the line
 * "passed N / failed M / skipped K". Exit status 0 only when no case failed.
 *
 * Device memory is never touched by the CPU: its contents are always checked by copying them
 * back with the GPU runtime and comparing against a known pattern. Buffers are filled with a
 * poison byte before each read, and the bytes outside the transferred range must keep it.
 *
 * Build: gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -Iinclude tests/c/suite.c \
 *            -lhipfile <GPU runtime> -pthread
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "hipfile.h"
#include "gpu_shim.h"

#define KiB ((size_t)1024)
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

/* Every device or host buffer is filled with POISON before a read; write sources are filled
 * with SRC_FILL outside the range that is written. */
#define POISON 0xA5u
#define SRC_FILL 0x5Au

#define NTHREADS 16

/* ===========================================================================================
 * Options and results
 * ========================================================================================= */

static const char *g_dir = ".";
static int g_large;
static const char *g_only;
static const char *g_skip;
static unsigned g_case_timeout = 900;

struct group_result {
    const char *name;
    int passed, failed, skipped;
};

#define MAX_GROUPS 16
static struct group_result g_groups[MAX_GROUPS];
static int g_ngroups;
static struct group_result *g_group;

static pthread_mutex_t g_case_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_case_name[256];
static char g_case_msg[2048];
static int g_case_failures;
static int g_case_skipped;
static char g_skip_msg[512];
static double g_case_t0;

/* Context prefixed to failure messages reported from a worker thread ("thread 3: "). */
static _Thread_local char t_ctx[64];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void group_begin(const char *name)
{
    if (g_ngroups == MAX_GROUPS) {
        fprintf(stderr, "suite: too many groups\n");
        exit(2);
    }
    g_group = &g_groups[g_ngroups++];
    g_group->name = name;
    printf("# ---- %s\n", name);
    fflush(stdout);
}

static int group_selected(const char *name)
{
    return (g_only == NULL || strstr(name, g_only) != NULL) &&
           (g_skip == NULL || strstr(name, g_skip) == NULL);
}

static void case_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void case_begin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&g_case_mu);
    vsnprintf(g_case_name, sizeof g_case_name, fmt, ap);
    g_case_msg[0] = '\0';
    g_case_failures = 0;
    g_case_skipped = 0;
    g_skip_msg[0] = '\0';
    pthread_mutex_unlock(&g_case_mu);
    va_end(ap);
    g_case_t0 = now_s();
    alarm(g_case_timeout);
}

static void case_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void case_fail(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&g_case_mu);
    if (g_case_failures++ == 0) {
        int n = snprintf(g_case_msg, sizeof g_case_msg, "line %d: %s", line, t_ctx);
        if (n > 0 && (size_t)n < sizeof g_case_msg)
            vsnprintf(g_case_msg + n, sizeof g_case_msg - (size_t)n, fmt, ap);
    }
    pthread_mutex_unlock(&g_case_mu);
    va_end(ap);
}

static void case_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void case_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&g_case_mu);
    g_case_skipped = 1;
    vsnprintf(g_skip_msg, sizeof g_skip_msg, fmt, ap);
    pthread_mutex_unlock(&g_case_mu);
    va_end(ap);
}

/* Prints the case's line; returns 1 when it passed (or was skipped). */
static int case_end(void)
{
    alarm(0);
    double dt = now_s() - g_case_t0;
    int ok;
    pthread_mutex_lock(&g_case_mu);
    if (g_case_failures > 0) {
        if (g_case_failures > 1)
            printf("FAIL %s: %s (and %d more failures)\n", g_case_name, g_case_msg, g_case_failures - 1);
        else
            printf("FAIL %s: %s\n", g_case_name, g_case_msg);
        g_group->failed++;
        ok = 0;
    } else if (g_case_skipped) {
        printf("SKIP %s: %s\n", g_case_name, g_skip_msg);
        g_group->skipped++;
        ok = 1;
    } else {
        printf("PASS %s\n", g_case_name);
        g_group->passed++;
        ok = 1;
    }
    if (dt >= 2.0)
        printf("# %s took %.1f s\n", g_case_name, dt);
    pthread_mutex_unlock(&g_case_mu);
    fflush(stdout);
    return ok;
}

/* A crash or a hang still names the case that caused it. */
static void on_fatal_signal(int sig)
{
    char line[512];
    const char *what = sig == SIGALRM ? "timed out" : "crashed with signal ";
    size_t n = 0;
    const char *parts[3] = { "FAIL ", g_case_name, ": " };
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && n < sizeof line - 16; p++)
            line[n++] = *p;
    for (const char *p = what; *p && n < sizeof line - 16; p++)
        line[n++] = *p;
    if (sig != SIGALRM) {
        if (sig >= 10)
            line[n++] = (char)('0' + sig / 10);
        line[n++] = (char)('0' + sig % 10);
    }
    line[n++] = '\n';
    ssize_t w = write(STDOUT_FILENO, line, n);
    (void)w;
    if (sig == SIGALRM)
        _exit(3);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ===========================================================================================
 * Check macros. Each test function declares its variables first and ends with a "done:"
 * label that releases what it holds; CHECK and friends jump there on failure.
 * ========================================================================================= */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            case_fail(__LINE__, __VA_ARGS__);                                                      \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            case_fail(__LINE__, __VA_ARGS__);                                                      \
    } while (0)

static const char *gpu_err_text(int rc)
{
    const char *s = gpu_errstr(rc);
    return s ? s : "?";
}

#define GPU_OK(call)                                                                               \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != 0) {                                                                            \
            case_fail(__LINE__, "%s failed: %d (%s)", #call, rc_, gpu_err_text(rc_));              \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* A hipFileError_t-returning call must give `want`. */
#define CHECK_ERR(expr, want)                                                                      \
    do {                                                                                           \
        hipFileError_t e_ = (expr);                                                                \
        if ((int)e_.err != (int)(want)) {                                                          \
            case_fail(__LINE__, "%s = %d (%s; hip_drv_err %d), want %d", #expr, (int)e_.err,      \
                      hipFileGetOpErrorString(e_.err), (int)e_.hip_drv_err, (int)(want));         \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* Same, without jumping (for clean-up code). */
#define EXPECT_ERR(expr, want)                                                                     \
    do {                                                                                           \
        hipFileError_t e_ = (expr);                                                                \
        if ((int)e_.err != (int)(want))                                                            \
            case_fail(__LINE__, "%s = %d (%s; hip_drv_err %d), want %d", #expr, (int)e_.err,      \
                      hipFileGetOpErrorString(e_.err), (int)e_.hip_drv_err, (int)(want));         \
    } while (0)

/* An ssize_t-returning call must give exactly `want`. */
#define CHECK_SSZ(expr, want)                                                                      \
    do {                                                                                           \
        errno = 0;                                                                                 \
        ssize_t r_ = (expr);                                                                       \
        int en_ = errno;                                                                           \
        if (r_ != (ssize_t)(want)) {                                                               \
            case_fail(__LINE__, "%s = %zd (errno %d: %s), want %zd", #expr, r_, en_, strerror(en_), \
                      (ssize_t)(want));                                                           \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* An ssize_t-returning call must give -1 with errno == want_errno. */
#define CHECK_ERRNO(expr, want_errno)                                                              \
    do {                                                                                           \
        errno = 0;                                                                                 \
        ssize_t r_ = (expr);                                                                       \
        int en_ = errno;                                                                           \
        if (r_ != -1 || en_ != (want_errno)) {                                                     \
            case_fail(__LINE__, "%s = %zd (errno %d: %s), want -1 with errno %d (%s)", #expr, r_,  \
                      en_, strerror(en_), (int)(want_errno), strerror(want_errno));               \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* ===========================================================================================
 * Data patterns: byte p of a pattern with seed s depends on both (not periodic), so a
 * transfer that lands at the wrong offset, or reads the wrong file range, is detected.
 * ========================================================================================= */

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* dst[i] = pattern(seed, pos + i). */
static void pattern_fill(uint8_t *dst, size_t len, uint64_t seed, uint64_t pos)
{
    const uint64_t k = (seed + 1) * 0xD6E8FEB86659FD93ull;
    size_t i = 0;
    while (i < len) {
        uint64_t p = pos + i;
        uint64_t w = mix64(k ^ (p >> 3));
        size_t b = (size_t)(p & 7);
        size_t take = 8 - b;
        if (take > len - i)
            take = len - i;
        memcpy(dst + i, (const uint8_t *)&w + b, take);
        i += take;
    }
}

/* Index of the first byte of buf[0..len) that differs from pattern(seed, pos + i), or SIZE_MAX. */
static size_t pattern_mismatch(const uint8_t *buf, size_t len, uint64_t seed, uint64_t pos, uint8_t *want)
{
    uint8_t chunk[8192];
    for (size_t done = 0; done < len;) {
        size_t n = len - done < sizeof chunk ? len - done : sizeof chunk;
        pattern_fill(chunk, n, seed, pos + done);
        if (memcmp(chunk, buf + done, n) != 0) {
            for (size_t i = 0; i < n; i++)
                if (chunk[i] != buf[done + i]) {
                    *want = chunk[i];
                    return done + i;
                }
        }
        done += n;
    }
    return SIZE_MAX;
}

static size_t fill_mismatch(const uint8_t *buf, size_t len, uint8_t fill)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != fill)
            return i;
    return SIZE_MAX;
}

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/*
 * Checks bytes [at, at + len) of a buffer, given in buf[0..len), against the layout
 * "bytes [off, off + n) hold pattern(seed, fpos + (i - off)); every other byte holds fill",
 * except that each of the zslack bytes right after the data may also be 0x00 (see eof_slack).
 * Returns 0, or -1 with a description in why.
 */
static int layout_check_z(const uint8_t *buf, size_t at, size_t len, size_t off, size_t n, uint64_t seed,
                          uint64_t fpos, uint8_t fill, size_t zslack, char *why, size_t whylen)
{
    size_t end = at + len;
    size_t a = at, b = min_sz(end, off);
    if (a < b) {
        size_t bad = fill_mismatch(buf + (a - at), b - a, fill);
        if (bad != SIZE_MAX) {
            size_t i = a + bad;
            snprintf(why, whylen, "byte %zu (before the transferred range [%zu, %zu)): got 0x%02x, want untouched 0x%02x",
                     i, off, off + n, buf[i - at], fill);
            return -1;
        }
    }
    a = max_sz(at, off);
    b = min_sz(end, off + n);
    if (a < b) {
        uint8_t want = 0;
        size_t bad = pattern_mismatch(buf + (a - at), b - a, seed, fpos + (a - off), &want);
        if (bad != SIZE_MAX) {
            size_t i = a + bad;
            snprintf(why, whylen, "byte %zu (data byte %zu of %zu): got 0x%02x, want 0x%02x", i, i - off, n,
                     buf[i - at], want);
            return -1;
        }
    }
    a = max_sz(at, off + n);
    b = min_sz(end, off + n + zslack);
    for (size_t i = a; i < b; i++)
        if (buf[i - at] != fill && buf[i - at] != 0) {
            snprintf(why, whylen, "byte %zu (in the last file block after the data [%zu, %zu)): got 0x%02x, want 0x%02x or 0x00",
                     i, off, off + n, buf[i - at], fill);
            return -1;
        }
    a = max_sz(at, off + n + zslack);
    b = end;
    if (a < b) {
        size_t bad = fill_mismatch(buf + (a - at), b - a, fill);
        if (bad != SIZE_MAX) {
            size_t i = a + bad;
            snprintf(why, whylen, "byte %zu (after the transferred range [%zu, %zu)): got 0x%02x, want untouched 0x%02x",
                     i, off, off + n, buf[i - at], fill);
            return -1;
        }
    }
    return 0;
}

static int layout_check(const uint8_t *buf, size_t at, size_t len, size_t off, size_t n, uint64_t seed,
                        uint64_t fpos, uint8_t fill, char *why, size_t whylen)
{
    return layout_check_z(buf, at, len, off, n, seed, fpos, fill, 0, why, whylen);
}

/*
 * Whether a request may be served by the GPU-direct fastpath: HIP builds (AMD, or hipsim's
 * hipAmdFileRead), compat mode not forced, file offset, size and device address 4 KiB aligned.
 * The kernel's O_DIRECT read moves whole file blocks, so such a read that stops at end of file
 * may also zero the rest of the last 4 KiB block in device memory (bytes after the returned
 * count). The fallback and host paths must leave those bytes untouched. eof_slack() is the
 * number of bytes after the data that may read back as 0x00.
 */
static int fastpath_possible(uint64_t foff, size_t size, const void *addr)
{
#if defined(SUITE_GPU_CUDA)
    (void)foff;
    (void)size;
    (void)addr;
    return 0;
#else
    const char *forced = getenv("HIPFILE_FORCE_COMPAT_MODE");
    if (forced && strcasecmp(forced, "true") == 0)
        return 0;
    return foff % 4096 == 0 && size % 4096 == 0 && (uintptr_t)addr % 4096 == 0;
#endif
}

static size_t eof_slack(uint64_t foff, size_t size, const void *addr, uint64_t file_end)
{
    if (!fastpath_possible(foff, size, addr) || file_end % 4096 == 0)
        return 0;
    return (size_t)(4096 - file_end % 4096);
}

/* ===========================================================================================
 * Device memory helpers
 * ========================================================================================= */

/* Fills device memory with a byte and waits for it (cudaMemset is asynchronous). */
static int dev_fill_byte(void *dev, uint8_t v, size_t len)
{
    int rc = gpu_memset(dev, v, len);
    return rc ? rc : gpu_sync();
}

static int dev_poison(void *dev, size_t len) { return dev_fill_byte(dev, POISON, len); }

/* Fills a device buffer of len bytes with the layout (fill outside [off, off + n), pattern
 * inside), in pieces so that huge buffers need little host memory. */
static int dev_upload_layout(void *dev, size_t len, size_t off, size_t n, uint64_t seed, uint64_t fpos, uint8_t fill)
{
    size_t piece = min_sz(len, 32 * MiB);
    uint8_t *h = malloc(piece ? piece : 1);
    int rc = 0;
    if (!h)
        return -1;
    for (size_t at = 0; at < len && rc == 0; at += piece) {
        size_t m = min_sz(piece, len - at);
        memset(h, fill, m);
        size_t a = max_sz(at, off), b = min_sz(at + m, off + n);
        if (a < b)
            pattern_fill(h + (a - at), b - a, seed, fpos + (a - off));
        rc = gpu_h2d((uint8_t *)dev + at, h, m);
    }
    free(h);
    return rc ? rc : gpu_sync();
}

/* Copies a device buffer back (in pieces) and checks it against the layout; 0 when it matches. */
static int dev_verify_z(const void *dev, size_t len, size_t off, size_t n, uint64_t seed, uint64_t fpos, uint8_t fill,
                        size_t zslack, char *why, size_t whylen)
{
    size_t piece = min_sz(len, 32 * MiB);
    uint8_t *h = malloc(piece ? piece : 1);
    if (!h) {
        snprintf(why, whylen, "malloc(%zu) failed", piece);
        return -1;
    }
    for (size_t at = 0; at < len; at += piece) {
        size_t m = min_sz(piece, len - at);
        int rc = gpu_d2h(h, (const uint8_t *)dev + at, m);
        if (rc != 0) {
            snprintf(why, whylen, "copy back of %zu bytes at %zu failed: %d (%s)", m, at, rc, gpu_err_text(rc));
            free(h);
            return -1;
        }
        if (layout_check_z(h, at, m, off, n, seed, fpos, fill, zslack, why, whylen) != 0) {
            free(h);
            return -1;
        }
    }
    free(h);
    return 0;
}

static int dev_verify(const void *dev, size_t len, size_t off, size_t n, uint64_t seed, uint64_t fpos, uint8_t fill,
                      char *why, size_t whylen)
{
    return dev_verify_z(dev, len, off, n, seed, fpos, fill, 0, why, whylen);
}

/* A read that stopped at end of file: see eof_slack(). */
#define CHECK_DEV_EOF(dev, len, off, n, seed, fpos, zslack)                                        \
    do {                                                                                           \
        char why_[512];                                                                            \
        if (dev_verify_z((dev), (len), (off), (n), (seed), (fpos), POISON, (zslack), why_,         \
                         sizeof why_) != 0) {                                                      \
            case_fail(__LINE__, "device buffer %s: %s", #dev, why_);                               \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#define CHECK_DEV_FILL(dev, len, off, n, seed, fpos, fill)                                        \
    do {                                                                                           \
        char why_[512];                                                                            \
        if (dev_verify((dev), (len), (off), (n), (seed), (fpos), (fill), why_, sizeof why_) != 0) { \
            case_fail(__LINE__, "device buffer %s: %s", #dev, why_);                               \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* Device buffer: poison outside [off, off + n), pattern(seed, fpos...) inside. */
#define CHECK_DEV(dev, len, off, n, seed, fpos) CHECK_DEV_FILL(dev, len, off, n, seed, fpos, POISON)

#define CHECK_HOST_FILL(buf, len, off, n, seed, fpos, fill)                                        \
    do {                                                                                           \
        char why_[512];                                                                            \
        if (layout_check((const uint8_t *)(buf), 0, (len), (off), (n), (seed), (fpos), (fill), why_, \
                         sizeof why_) != 0) {                                                      \
            case_fail(__LINE__, "host buffer %s: %s", #buf, why_);                                 \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#define CHECK_HOST(buf, len, off, n, seed, fpos) CHECK_HOST_FILL(buf, len, off, n, seed, fpos, POISON)

/* ===========================================================================================
 * Files
 * ========================================================================================= */

#define MAX_TMP 256
static char *g_tmp[MAX_TMP];

/* Creates a new, empty, uniquely named file in the test directory; its name goes in path. */
static int tmp_new(char *path, size_t cap)
{
    int n = snprintf(path, cap, "%s/hipfile-suite-XXXXXX", g_dir);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    for (int i = 0; i < MAX_TMP; i++)
        if (g_tmp[i] == NULL) {
            g_tmp[i] = strdup(path);
            return 0;
        }
    unlink(path);
    errno = EMFILE;
    return -1;
}

static void tmp_remove(const char *path)
{
    if (path[0] == '\0')
        return;
    for (int i = 0; i < MAX_TMP; i++)
        if (g_tmp[i] && strcmp(g_tmp[i], path) == 0) {
            unlink(g_tmp[i]);
            free(g_tmp[i]);
            g_tmp[i] = NULL;
            return;
        }
}

static void tmp_remove_all(void)
{
    for (int i = 0; i < MAX_TMP; i++)
        if (g_tmp[i]) {
            unlink(g_tmp[i]);
            free(g_tmp[i]);
            g_tmp[i] = NULL;
        }
}

/* A new temporary file opened with flags; path (char[PATH_MAX]) and fd are set. */
#define OPEN_TMP(path, fd, flags)                                                                  \
    do {                                                                                           \
        CHECK(tmp_new((path), sizeof(path)) == 0, "cannot create a file in %s: %s", g_dir,        \
              strerror(errno));                                                                    \
        (fd) = open((path), (flags));                                                              \
        CHECK((fd) >= 0, "open(%s, 0x%x): %s", (path), (unsigned)(flags), strerror(errno));        \
    } while (0)

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

static ssize_t pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pwrite(fd, (const uint8_t *)buf + done, len - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += (size_t)r;
    }
    return (ssize_t)done;
}

/* Writes pattern(seed, p) at every file position p in [off, off + len). */
static int file_write_pattern(int fd, uint64_t off, size_t len, uint64_t seed)
{
    size_t piece = min_sz(len, 8 * MiB);
    uint8_t *h = malloc(piece ? piece : 1);
    if (!h)
        return -1;
    for (size_t at = 0; at < len; at += piece) {
        size_t m = min_sz(piece, len - at);
        pattern_fill(h, m, seed, off + at);
        if (pwrite_full(fd, h, m, off + at) != (ssize_t)m) {
            free(h);
            return -1;
        }
    }
    free(h);
    return 0;
}

/* Checks that the file holds pattern(seed, p) at every position p in [off, off + len). */
static int file_verify_pattern(int fd, uint64_t off, size_t len, uint64_t seed, char *why, size_t whylen)
{
    size_t piece = min_sz(len, 8 * MiB);
    uint8_t *h = malloc(piece ? piece : 1);
    if (!h) {
        snprintf(why, whylen, "malloc failed");
        return -1;
    }
    for (size_t at = 0; at < len; at += piece) {
        size_t m = min_sz(piece, len - at);
        ssize_t r = pread_full(fd, h, m, off + at);
        if (r != (ssize_t)m) {
            snprintf(why, whylen, "pread of %zu bytes at %" PRIu64 " returned %zd (%s)", m, off + at, r,
                     r < 0 ? strerror(errno) : "short file");
            free(h);
            return -1;
        }
        uint8_t want = 0;
        size_t bad = pattern_mismatch(h, m, seed, off + at, &want);
        if (bad != SIZE_MAX) {
            snprintf(why, whylen, "file byte %" PRIu64 ": got 0x%02x, want 0x%02x", off + at + bad, h[bad], want);
            free(h);
            return -1;
        }
    }
    free(h);
    return 0;
}

#define CHECK_FILE(fd, off, len, seed)                                                             \
    do {                                                                                           \
        char why_[512];                                                                            \
        if (file_verify_pattern((fd), (off), (len), (seed), why_, sizeof why_) != 0) {             \
            case_fail(__LINE__, "file contents: %s", why_);                                        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static off_t file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? st.st_size : (off_t)-1;
}

static hipFileError_t register_fd(int fd, hipFileHandle_t *fh)
{
    hipFileDescr_t d;
    memset(&d, 0, sizeof d);
    d.type = hipFileHandleTypeOpaqueFD;
    d.handle.fd = fd;
    return hipFileHandleRegister(fh, &d);
}

#define REG_FD(fd, fh) CHECK_ERR(register_fd((fd), &(fh)), hipFileSuccess)

/* Releases what a test holds; safe on NULL / -1 values. */
static void release_handle(hipFileHandle_t *fh)
{
    if (*fh) {
        hipFileHandleDeregister(*fh);
        *fh = NULL;
    }
}

static void release_fd(int *fd, char *path)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    if (path) {
        tmp_remove(path);
        path[0] = '\0';
    }
}

static void release_dev(void **p)
{
    if (*p) {
        gpu_free(*p);
        *p = NULL;
    }
}

static void release_bufreg(void **registered)
{
    if (*registered) {
        EXPECT_ERR(hipFileBufDeregister(*registered), hipFileSuccess);
        *registered = NULL;
    }
}

static uint64_t g_seed = 1000;
static uint64_t next_seed(void) { return __atomic_add_fetch(&g_seed, 1, __ATOMIC_RELAXED); }

/* ===========================================================================================
 * Group "basics": version, error strings, use count
 * ========================================================================================= */

static void t_version(void)
{
    unsigned ma = 99, mi = 99, pa = 99;
    case_begin("version");
    CHECK(HIPFILE_VERSION_MAJOR == 0 && HIPFILE_VERSION_MINOR == 5 && HIPFILE_VERSION_PATCH == 0,
          "header macros say %d.%d.%d, want 0.5.0", HIPFILE_VERSION_MAJOR, HIPFILE_VERSION_MINOR,
          HIPFILE_VERSION_PATCH);
    CHECK_ERR(hipFileGetVersion(&ma, &mi, &pa), hipFileSuccess);
    CHECK(ma == HIPFILE_VERSION_MAJOR && mi == HIPFILE_VERSION_MINOR && pa == HIPFILE_VERSION_PATCH,
          "hipFileGetVersion gave %u.%u.%u, want 0.5.0", ma, mi, pa);
    ma = mi = pa = 99;
    CHECK_ERR(hipFileGetVersion(NULL, &mi, NULL), hipFileSuccess);
    CHECK(mi == 5 && ma == 99 && pa == 99, "partial query gave minor %u", mi);
    CHECK_ERR(hipFileGetVersion(NULL, NULL, NULL), hipFileSuccess);
    CHECK(hipFileUseCount() == 0, "hipFileGetVersion touched the use count (%lld)", (long long)hipFileUseCount());
done:
    case_end();
}

static void t_error_strings(void)
{
    static const struct {
        int code;
        const char *text;
    } want[] = {
        { 0, "hipFile success" },
        { 5001, "GPU IO driver is not loaded" },
        { 5013, "Memory type backing pointer is incompatible with hipFile" },
        { 5014, "Pointer range exceeds allocated memory region" },
        { 5022, "One or more arguments have an invalid value" },
        { 5027, "File handle for GPU IO is not registered" },
        { 5030, "Internal GPU IO library error" },
        { 5036, "Failed to allocated pinned device memory" },
        { 5021, "Unknown hipFile error" },
        { 4242, "Unknown hipFile error" },
    };
    case_begin("error_strings");
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *s = hipFileGetOpErrorString((hipFileOpError_t)want[i].code);
        CHECK(s != NULL, "hipFileGetOpErrorString(%d) is NULL", want[i].code);
        CHECK(strcmp(s, want[i].text) == 0, "hipFileGetOpErrorString(%d) = \"%s\", want \"%s\"", want[i].code, s,
              want[i].text);
    }
    CHECK(strcmp(HIPFILE_ERRSTR(-5022), hipFileGetOpErrorString(hipFileInvalidValue)) == 0,
          "HIPFILE_ERRSTR(-5022) differs from the string of 5022");
    CHECK(IS_HIPFILE_ERR(-5022) && IS_HIPFILE_ERR(5027) && !IS_HIPFILE_ERR(-1) && !IS_HIPFILE_ERR(0),
          "IS_HIPFILE_ERR is wrong");
done:
    case_end();
}

static void t_use_count(void)
{
    case_begin("use_count");
    CHECK(hipFileUseCount() == 0, "initial use count %lld, want 0", (long long)hipFileUseCount());
    for (int i = 1; i <= 3; i++) {
        CHECK_ERR(hipFileDriverOpen(), hipFileSuccess);
        CHECK(hipFileUseCount() == i, "after %d opens the use count is %lld", i, (long long)hipFileUseCount());
    }
    for (int i = 2; i >= 0; i--) {
        CHECK_ERR(hipFileDriverClose(), hipFileSuccess);
        CHECK(hipFileUseCount() == i, "use count %lld, want %d", (long long)hipFileUseCount(), i);
    }
    CHECK_ERR(hipFileDriverClose(), hipFileDriverNotInitialized);
    CHECK(hipFileUseCount() == 0, "use count %lld after an extra close, want 0", (long long)hipFileUseCount());
done:
    case_end();
}

static void t_driver_open(void)
{
    case_begin("driver_open");
    CHECK_ERR(hipFileDriverOpen(), hipFileSuccess);
    CHECK(hipFileUseCount() == 1, "use count %lld, want 1", (long long)hipFileUseCount());
done:
    case_end();
}

/* ===========================================================================================
 * Group "handles"
 * ========================================================================================= */

static void t_handle_null_args(void)
{
    hipFileHandle_t fh = (hipFileHandle_t)0xdead;
    hipFileDescr_t d;
    memset(&d, 0, sizeof d);
    d.type = hipFileHandleTypeOpaqueFD;
    d.handle.fd = 0;
    case_begin("handle_register_null_args");
    CHECK_ERR(hipFileHandleRegister(NULL, &d), hipFileInvalidValue);
    CHECK_ERR(hipFileHandleRegister(&fh, NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileHandleRegister(NULL, NULL), hipFileInvalidValue);
    CHECK(fh == (hipFileHandle_t)0xdead, "*fh was written by a failed registration");
done:
    case_end();
}

static void t_handle_type(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = (hipFileHandle_t)0xdead;
    hipFileDescr_t d;
    static const int types[] = { hipFileHandleTypeOpaqueWin32, hipFileHandleTypeUserspaceFS, 0, 99 };
    case_begin("handle_register_unsupported_type");
    OPEN_TMP(path, fd, O_RDWR);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        memset(&d, 0, sizeof d);
        d.type = (hipFileFileHandleType_t)types[i];
        d.handle.fd = fd;
        CHECK_ERR(hipFileHandleRegister(&fh, &d), hipFileIONotSupported);
        CHECK(fh == (hipFileHandle_t)0xdead, "*fh was written by a failed registration (type %d)", types[i]);
    }
done:
    release_fd(&fd, path);
    case_end();
}

static void t_handle_bad_fd(void)
{
    hipFileHandle_t fh = NULL;
    case_begin("handle_register_bad_fd");
    CHECK_ERR(register_fd(-1, &fh), hipFileInternalError);
    CHECK(fh == NULL, "*fh was written by a failed registration");
done:
    release_handle(&fh);
    case_end();
}

static void t_handle_duplicate(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL, fh2 = NULL;
    case_begin("handle_register_duplicate");
    OPEN_TMP(path, fd, O_RDWR);
    REG_FD(fd, fh);
    CHECK(fh != NULL, "registration gave a NULL handle");
    CHECK_ERR(register_fd(fd, &fh2), hipFileHandleAlreadyRegistered);
    CHECK(fh2 == NULL, "*fh was written by a failed registration");
    hipFileHandleDeregister(fh);
    fh = NULL;
    REG_FD(fd, fh2); /* free again after deregistration */
done:
    release_handle(&fh);
    release_handle(&fh2);
    release_fd(&fd, path);
    case_end();
}

static void t_handle_append(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    case_begin("handle_register_o_append");
    OPEN_TMP(path, fd, O_RDWR | O_APPEND);
    CHECK_ERR(register_fd(fd, &fh), hipFileInvalidFileOpenFlag);
done:
    release_handle(&fh);
    release_fd(&fd, path);
    case_end();
}

static void t_handle_stale(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL, stale = NULL;
    void *dev = NULL;
    case_begin("handle_stale_after_deregister");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 8192, 1) == 0, "write: %s", strerror(errno));
    GPU_OK(gpu_malloc(&dev, 8192));
    GPU_OK(dev_poison(dev, 8192));
    REG_FD(fd, fh);
    stale = fh;
    hipFileHandleDeregister(fh);
    fh = NULL;
    CHECK_SSZ(hipFileRead(stale, dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    CHECK_SSZ(hipFileWrite(stale, dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    CHECK_SSZ(hipFileRead(stale, dev, 100, 1, 3), -hipFileHandleNotRegistered);
    hipFileHandleDeregister(stale); /* a second deregistration is ignored */
    CHECK_SSZ(hipFileRead(stale, dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    CHECK_DEV(dev, 8192, 0, 0, 0, 0);
    CHECK_FILE(fd, 0, 8192, 1);
done:
    release_handle(&fh);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

static void t_handle_forged(void)
{
    void *dev = NULL;
    case_begin("handle_forged");
    GPU_OK(gpu_malloc(&dev, 8192));
    GPU_OK(dev_poison(dev, 8192));
    CHECK_SSZ(hipFileRead((hipFileHandle_t)0x1234, dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    CHECK_SSZ(hipFileWrite((hipFileHandle_t)0x1234, dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    CHECK_SSZ(hipFileRead(NULL, dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    CHECK_SSZ(hipFileRead((hipFileHandle_t)(uintptr_t)dev, dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    hipFileHandleDeregister((hipFileHandle_t)0x1234); /* ignored, no crash */
    CHECK_DEV(dev, 8192, 0, 0, 0, 0);
done:
    release_dev(&dev);
    case_end();
}

/* ===========================================================================================
 * Group "buffers": registration
 * ========================================================================================= */

static void t_buf_range(void)
{
    void *dev = NULL, *reg = NULL;
    case_begin("bufreg_length_beyond_allocation");
    GPU_OK(gpu_malloc(&dev, 4096));
    CHECK_ERR(hipFileBufRegister(dev, 8192, 0), hipFileHipPointerRangeError);
    CHECK_ERR(hipFileBufRegister(dev, 4097, 0), hipFileHipPointerRangeError);
    CHECK_ERR(hipFileBufRegister(dev, SIZE_MAX, 0), hipFileHipPointerRangeError);
    CHECK_ERR(hipFileBufRegister(dev, 4096, 0), hipFileSuccess);
    reg = dev;
    CHECK_ERR(hipFileBufDeregister(dev), hipFileSuccess);
    reg = NULL;
done:
    release_bufreg(&reg);
    release_dev(&dev);
    case_end();
}

static void t_buf_interior(void)
{
    void *dev = NULL, *reg = NULL;
    uint8_t *inner;
    case_begin("bufreg_interior_pointer");
    GPU_OK(gpu_malloc(&dev, 8192));
    inner = (uint8_t *)dev + 4096;
    CHECK_ERR(hipFileBufRegister(inner, 8192, 0), hipFileHipPointerRangeError);
    CHECK_ERR(hipFileBufRegister(inner, 4096, 0), hipFileSuccess);
    reg = inner;
    CHECK_ERR(hipFileBufDeregister(dev), hipFileMemoryNotRegistered); /* only the exact base is a key */
    CHECK_ERR(hipFileBufDeregister(inner), hipFileSuccess);
    reg = NULL;
done:
    release_bufreg(&reg);
    release_dev(&dev);
    case_end();
}

static void t_buf_null(void)
{
    case_begin("bufreg_null");
    CHECK_ERR(hipFileBufRegister(NULL, 4096, 0), hipFileInvalidValue);
    CHECK_ERR(hipFileBufDeregister(NULL), hipFileMemoryNotRegistered);
done:
    case_end();
}

static void t_buf_duplicate(void)
{
    void *dev = NULL, *reg = NULL;
    case_begin("bufreg_duplicate");
    GPU_OK(gpu_malloc(&dev, MiB));
    CHECK_ERR(hipFileBufRegister(dev, MiB, 0), hipFileSuccess);
    reg = dev;
    CHECK_ERR(hipFileBufRegister(dev, MiB, 0), hipFileMemoryAlreadyRegistered);
    CHECK_ERR(hipFileBufRegister(dev, 4096, HIPFILE_RDMA_REGISTER), hipFileMemoryAlreadyRegistered);
    CHECK_ERR(hipFileBufDeregister(dev), hipFileSuccess);
    reg = NULL;
    CHECK_ERR(hipFileBufDeregister(dev), hipFileMemoryNotRegistered);
    CHECK_ERR(hipFileBufRegister(dev, 4096, HIPFILE_RDMA_REGISTER | HIPFILE_RDMA_RELAXED_ORDERING), hipFileSuccess);
    reg = dev;
done:
    release_bufreg(&reg);
    release_dev(&dev);
    case_end();
}

static void t_buf_unknown(void)
{
    void *dev = NULL;
    uint8_t host[64];
    case_begin("bufdereg_unknown");
    GPU_OK(gpu_malloc(&dev, 8192));
    CHECK_ERR(hipFileBufDeregister(dev), hipFileMemoryNotRegistered);
    CHECK_ERR(hipFileBufDeregister((uint8_t *)dev + 1), hipFileMemoryNotRegistered);
    CHECK_ERR(hipFileBufDeregister(host), hipFileMemoryNotRegistered);
done:
    release_dev(&dev);
    case_end();
}

static void t_buf_managed(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, rc;
    hipFileHandle_t fh = NULL;
    void *managed = NULL, *reg = NULL;
    case_begin("bufreg_managed_refused");
    rc = gpu_malloc_managed(&managed, MiB);
    if (rc != 0) {
        managed = NULL;
        case_skip("managed memory unavailable: %d (%s)", rc, gpu_err_text(rc));
        goto done;
    }
    {
        hipFileError_t e = hipFileBufRegister(managed, MiB, 0);
        if (e.err == hipFileSuccess)
            reg = managed;
        CHECK(e.err == hipFileHipMemoryTypeInvalid, "hipFileBufRegister(managed) = %d (%s), want 5013", (int)e.err,
              hipFileGetOpErrorString(e.err));
    }
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 8192, 2) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    CHECK_SSZ(hipFileRead(fh, managed, 4096, 0, 0), -hipFileHipMemoryTypeInvalid);
    CHECK_SSZ(hipFileWrite(fh, managed, 4096, 0, 0), -hipFileHipMemoryTypeInvalid);
done:
    release_bufreg(&reg);
    release_handle(&fh);
    release_fd(&fd, path);
    release_dev(&managed);
    case_end();
}

static void t_buf_pinned_host(void)
{
    void *pinned = NULL, *reg = NULL;
    case_begin("bufreg_pinned_host");
    GPU_OK(gpu_host_alloc(&pinned, MiB));
    CHECK_ERR(hipFileBufRegister(pinned, MiB, 0), hipFileSuccess);
    reg = pinned;
    CHECK_ERR(hipFileBufRegister(pinned, MiB, 0), hipFileMemoryAlreadyRegistered);
    CHECK_ERR(hipFileBufDeregister(pinned), hipFileSuccess);
    reg = NULL;
done:
    release_bufreg(&reg);
    if (pinned)
        gpu_host_free(pinned);
    case_end();
}

static void t_buf_pageable_host(void)
{
    void *mem = NULL, *reg = NULL;
    case_begin("bufreg_pageable_host");
    mem = malloc(MiB);
    CHECK(mem != NULL, "malloc failed");
    CHECK_ERR(hipFileBufRegister(mem, MiB, 0), hipFileSuccess);
    reg = mem;
    CHECK_ERR(hipFileBufDeregister(mem), hipFileSuccess);
    reg = NULL;
done:
    release_bufreg(&reg);
    free(mem);
    case_end();
}

/* ===========================================================================================
 * Group "sync_io"
 * ========================================================================================= */

/*
 * Writes `size` bytes from a device buffer at buffer offset boff to file offset foff, checks
 * the file with pread (data and the 4 KiB around it), reads it back into a poisoned device
 * buffer and checks every byte of that buffer. Both buffers have 4 KiB of slack after the
 * transferred range; reg says whether they are registered (over their whole length).
 */
static void rw_case(hipFileHandle_t fh, int fd, size_t size, int64_t foff, size_t boff, int reg)
{
    const uint64_t seed = next_seed();
    const size_t len = boff + size + 4096;
    void *src = NULL, *dst = NULL, *src_reg = NULL, *dst_reg = NULL;
    uint8_t gb[4096], ga[4096], gb2[4096], ga2[4096];
    size_t gbl;
    ssize_t nb, na;

    case_begin("rw_%s_size%zu_foff%lld_boff%zu", reg ? "reg" : "unreg", size, (long long)foff, boff);
    GPU_OK(gpu_malloc(&src, len));
    GPU_OK(gpu_malloc(&dst, len));
    GPU_OK(dev_upload_layout(src, len, boff, size, seed, (uint64_t)foff, SRC_FILL));
    if (reg) {
        CHECK_ERR(hipFileBufRegister(src, len, 0), hipFileSuccess);
        src_reg = src;
        CHECK_ERR(hipFileBufRegister(dst, len, 0), hipFileSuccess);
        dst_reg = dst;
    }
    gbl = min_sz((size_t)foff, sizeof gb);
    nb = pread_full(fd, gb, gbl, (uint64_t)foff - gbl);
    na = pread_full(fd, ga, sizeof ga, (uint64_t)foff + size);
    CHECK(nb >= 0 && na >= 0, "pread of the guards: %s", strerror(errno));

    CHECK_SSZ(hipFileWrite(fh, src, size, foff, (hoff_t)boff), size);
    CHECK_FILE(fd, (uint64_t)foff, size, seed);
    CHECK(pread_full(fd, gb2, (size_t)nb, (uint64_t)foff - gbl) == nb && memcmp(gb, gb2, (size_t)nb) == 0,
          "the write changed the %zd bytes before file offset %lld", nb, (long long)foff);
    CHECK(pread_full(fd, ga2, (size_t)na, (uint64_t)foff + size) == na && memcmp(ga, ga2, (size_t)na) == 0,
          "the write changed the %zd bytes after the written range", na);
    CHECK_DEV_FILL(src, len, boff, size, seed, (uint64_t)foff, SRC_FILL); /* source unchanged */

    GPU_OK(dev_poison(dst, len));
    CHECK_SSZ(hipFileRead(fh, dst, size, foff, (hoff_t)boff), size);
    CHECK_DEV(dst, len, boff, size, seed, (uint64_t)foff);
done:
    release_bufreg(&src_reg);
    release_bufreg(&dst_reg);
    release_dev(&src);
    release_dev(&dst);
    case_end();
}

static void t_sync_rw_matrix(void)
{
    static const size_t small_sizes[] = { 1, 4095, 4096, 4097, MiB, MiB + 13 };
    static const size_t big_sizes[] = { 64 * MiB, 300 * MiB };
    static const int64_t foffs[] = { 0, 1, 4096, 12345 };
    static const size_t boffs[] = { 0, 7, 4096 };
    /* For the big sizes, each file offset is paired with one buffer offset. */
    static const size_t big_boffs[] = { 0, 7, 4096, 7 };

    for (int big = 0; big < 2; big++) {
        const size_t *sizes = big ? big_sizes : small_sizes;
        size_t nsizes = big ? sizeof big_sizes / sizeof big_sizes[0] : sizeof small_sizes / sizeof small_sizes[0];
        for (size_t s = 0; s < nsizes; s++) {
            char path[PATH_MAX] = "";
            int fd = -1;
            hipFileHandle_t fh = NULL;
            int ok;
            /* The file of each size starts with a background pattern that the writes replace. */
            case_begin("rw_setup_size%zu", sizes[s]);
            OPEN_TMP(path, fd, O_RDWR);
            CHECK(file_write_pattern(fd, 0, 12345 + sizes[s] + 8192, 7) == 0, "write: %s", strerror(errno));
            REG_FD(fd, fh);
        done:
            ok = case_end();
            if (ok) {
                for (size_t f = 0; f < sizeof foffs / sizeof foffs[0]; f++)
                    for (size_t b = 0; b < sizeof boffs / sizeof boffs[0]; b++) {
                        if (big && boffs[b] != big_boffs[f])
                            continue;
                        rw_case(fh, fd, sizes[s], foffs[f], boffs[b], 1);
                        rw_case(fh, fd, sizes[s], foffs[f], boffs[b], 0);
                    }
            }
            release_handle(&fh);
            release_fd(&fd, path);
        }
    }
}

/* The upstream vector (amd/io.cpp): 1 MiB unregistered buffer, buffer offset 4096. */
static void t_unreg_offset_vector(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL;
    const uint64_t seed = next_seed();
    case_begin("unreg_buffer_offset_vector");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, MiB, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, MiB));
    GPU_OK(dev_poison(dev, MiB));
    CHECK_SSZ(hipFileRead(fh, dev, MiB - 4096, 0, 4096), MiB - 4096);
    CHECK_DEV(dev, MiB, 4096, MiB - 4096, seed, 0);
    GPU_OK(dev_poison(dev, MiB));
    CHECK_SSZ(hipFileRead(fh, dev, MiB, 0, 4096), -hipFileInvalidValue);
    CHECK_SSZ(hipFileWrite(fh, dev, MiB, 0, 4096), -hipFileInvalidValue);
    CHECK_DEV(dev, MiB, 0, 0, 0, 0);
    CHECK_FILE(fd, 0, MiB, seed);
done:
    release_handle(&fh);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

/* An unregistered pointer into the middle of an allocation extends to the allocation's end. */
static void t_unreg_interior_pointer(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL;
    uint8_t *inner;
    const uint64_t seed = next_seed();
    case_begin("unreg_interior_pointer");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 2 * MiB, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, MiB));
    GPU_OK(dev_poison(dev, MiB));
    inner = (uint8_t *)dev + 4096;
    CHECK_SSZ(hipFileRead(fh, inner, MiB - 4096, 333, 0), MiB - 4096);
    CHECK_DEV(dev, MiB, 4096, MiB - 4096, seed, 333);
    GPU_OK(dev_poison(dev, MiB));
    CHECK_SSZ(hipFileRead(fh, inner, MiB - 4096 - 5, 333, 5), MiB - 4096 - 5);
    CHECK_DEV(dev, MiB, 4096 + 5, MiB - 4096 - 5, seed, 333);
    CHECK_SSZ(hipFileRead(fh, inner, MiB - 4095, 0, 0), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, inner, 1, 0, (hoff_t)(MiB - 4096)), -hipFileInvalidValue);
done:
    release_handle(&fh);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

/* A file of 10000 bytes: reading 16384 at 4096 gives 5904 bytes and nothing more. */
static void eof_case(const char *name, int reg, size_t boff)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    const size_t len = boff + 16384 + 4096;
    const uint64_t seed = next_seed();
    case_begin("%s", name);
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 10000, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, len));
    if (reg) {
        CHECK_ERR(hipFileBufRegister(dev, len, 0), hipFileSuccess);
        reg_ptr = dev;
    }
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, 16384, 4096, (hoff_t)boff), 5904);
    CHECK_DEV_EOF(dev, len, boff, 5904, seed, 4096, eof_slack(4096, 16384, (uint8_t *)dev + boff, 10000));
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, 16384, 4097, (hoff_t)boff), 5903);
    CHECK_DEV(dev, len, boff, 5903, seed, 4097);
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

/* End of file inside a request of several engine chunks. */
static void t_eof_multichunk(int reg)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    const size_t fsize = 40 * MiB + 123, boff = 3, req = 64 * MiB;
    const uint64_t foff = MiB + 5;
    const size_t len = boff + req + 4096, want = fsize - (size_t)foff;
    const uint64_t seed = next_seed();
    case_begin("eof_multichunk_%s", reg ? "reg" : "unreg");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, fsize, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, len));
    if (reg) {
        CHECK_ERR(hipFileBufRegister(dev, len, 0), hipFileSuccess);
        reg_ptr = dev;
    }
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, req, (hoff_t)foff, (hoff_t)boff), want);
    CHECK_DEV(dev, len, boff, want, seed, foff);
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, req, 0, 0), fsize); /* aligned start */
    CHECK_DEV_EOF(dev, len, 0, fsize, seed, 0, eof_slack(0, req, dev, fsize));
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

static void t_read_at_eof(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    case_begin("read_at_and_beyond_eof");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 10000, 3) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, 65536));
    GPU_OK(dev_poison(dev, 65536));
    CHECK_SSZ(hipFileRead(fh, dev, 16384, 10000, 0), 0);
    CHECK_SSZ(hipFileRead(fh, dev, 4096, 12288, 0), 0);
    CHECK_SSZ(hipFileRead(fh, dev, 65536, (hoff_t)GiB, 0), 0);
    CHECK_SSZ(hipFileRead(fh, dev, 1, 10000, 7), 0);
    CHECK_ERR(hipFileBufRegister(dev, 65536, 0), hipFileSuccess);
    reg_ptr = dev;
    CHECK_SSZ(hipFileRead(fh, dev, 16384, 10000, 0), 0);
    CHECK_SSZ(hipFileRead(fh, dev, 65536, (hoff_t)GiB, 0), 0);
    CHECK_DEV(dev, 65536, 0, 0, 0, 0);
    CHECK(file_size(fd) == 10000, "reads changed the file size to %lld", (long long)file_size(fd));
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

static void t_zero_size(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    uint8_t *host = NULL;
    case_begin("zero_size_io");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 10000, 4) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, 65536));
    GPU_OK(dev_poison(dev, 65536));
    host = malloc(4096);
    CHECK(host != NULL, "malloc");
    memset(host, POISON, 4096);
    for (int r = 0; r < 2; r++) {
        if (r == 1) {
            CHECK_ERR(hipFileBufRegister(dev, 65536, 0), hipFileSuccess);
            reg_ptr = dev;
        }
        CHECK_SSZ(hipFileRead(fh, dev, 0, 0, 0), 0);
        CHECK_SSZ(hipFileRead(fh, dev, 0, 12345, 7), 0);
        CHECK_SSZ(hipFileRead(fh, dev, 0, 20000, 0), 0);
        CHECK_SSZ(hipFileWrite(fh, dev, 0, 0, 0), 0);
        CHECK_SSZ(hipFileWrite(fh, dev, 0, 4096, 4096), 0);
        CHECK_SSZ(hipFileWrite(fh, dev, 0, (hoff_t)MiB, 1), 0); /* must not extend the file */
    }
    CHECK_SSZ(hipFileRead(fh, host, 0, 5, 0), 0);
    CHECK_SSZ(hipFileWrite(fh, host, 0, (hoff_t)MiB, 0), 0);
    CHECK(file_size(fd) == 10000, "zero-size writes changed the file size to %lld", (long long)file_size(fd));
    CHECK_FILE(fd, 0, 10000, 4);
    CHECK_DEV(dev, 65536, 0, 0, 0, 0);
    CHECK_HOST(host, 4096, 0, 0, 0, 0);
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_dev(&dev);
    free(host);
    release_fd(&fd, path);
    case_end();
}

/* buffer_offset == buffer length, and sizes that do not fit, are -hipFileInvalidValue. */
static void t_bounds(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *small = NULL, *reg_ptr = NULL;
    case_begin("buffer_bounds");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 2 * MiB, 5) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, MiB));
    GPU_OK(gpu_malloc(&small, 8192));
    GPU_OK(dev_poison(dev, MiB));
    GPU_OK(dev_poison(small, 8192));
    /* Unregistered: the length is what is left of the allocation. */
    CHECK_SSZ(hipFileRead(fh, dev, 0, 0, (hoff_t)MiB), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, dev, 1, 0, (hoff_t)MiB), -hipFileInvalidValue);
    CHECK_SSZ(hipFileWrite(fh, dev, 0, 0, (hoff_t)MiB), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, dev, MiB + 1, 0, 0), -hipFileInvalidValue);
    CHECK_SSZ(hipFileWrite(fh, dev, MiB + 1, 0, 0), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, dev, 2, 0, (hoff_t)(MiB - 1)), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, dev, 1, 0, (hoff_t)(MiB - 1)), 1);
    CHECK_DEV(dev, MiB, MiB - 1, 1, 5, 0);
    /* Registered with 4096 of its 8192 bytes: the registered length governs. */
    CHECK_ERR(hipFileBufRegister(small, 4096, 0), hipFileSuccess);
    reg_ptr = small;
    CHECK_SSZ(hipFileRead(fh, small, 0, 0, 4096), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, small, 1, 0, 4096), -hipFileInvalidValue);
    CHECK_SSZ(hipFileWrite(fh, small, 0, 0, 4096), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, small, 4097, 0, 0), -hipFileInvalidValue);
    CHECK_SSZ(hipFileRead(fh, small, 4096, 0, 1), -hipFileInvalidValue);
    CHECK_SSZ(hipFileWrite(fh, small, 4097, 0, 0), -hipFileInvalidValue);
    CHECK_SSZ(hipFileWrite(fh, small, 4096, 0, 1), -hipFileInvalidValue);
    CHECK_DEV(small, 8192, 0, 0, 0, 0);
    CHECK_SSZ(hipFileRead(fh, small, 4095, 0, 1), 4095);
    CHECK_DEV(small, 8192, 1, 4095, 5, 0);
    CHECK_FILE(fd, 0, 2 * MiB, 5);
    CHECK_SSZ(hipFileRead(fh, NULL, 4096, 0, 0), -hipFileInvalidValue);
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_dev(&dev);
    release_dev(&small);
    release_fd(&fd, path);
    case_end();
}

static void t_negative_offsets(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    uint8_t *host = NULL;
    case_begin("negative_offsets");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 65536, 6) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, 65536));
    GPU_OK(dev_poison(dev, 65536));
    host = malloc(65536);
    CHECK(host != NULL, "malloc");
    memset(host, POISON, 65536);
    for (int r = 0; r < 2; r++) {
        if (r == 1) {
            CHECK_ERR(hipFileBufRegister(dev, 65536, 0), hipFileSuccess);
            reg_ptr = dev;
        }
        CHECK_ERRNO(hipFileRead(fh, dev, 4096, -1, 0), EINVAL);
        CHECK_ERRNO(hipFileRead(fh, dev, 4096, -4096, 0), EINVAL);
        CHECK_ERRNO(hipFileRead(fh, dev, 4096, INT64_MIN, 0), EINVAL);
        CHECK_ERRNO(hipFileWrite(fh, dev, 4096, -1, 0), EINVAL);
        CHECK_ERRNO(hipFileRead(fh, dev, 4096, 0, -1), EINVAL);
        CHECK_ERRNO(hipFileWrite(fh, dev, 4096, 0, -4096), EINVAL);
        CHECK_ERRNO(hipFileRead(fh, dev, 0, -1, 0), EINVAL);
    }
    CHECK_ERRNO(hipFileRead(fh, host, 4096, -1, 0), EINVAL);
    CHECK_ERRNO(hipFileWrite(fh, host, 4096, -1, 0), EINVAL);
    CHECK_ERRNO(hipFileRead(fh, host, 4096, 0, -1), EINVAL);
    CHECK_DEV(dev, 65536, 0, 0, 0, 0);
    CHECK_HOST(host, 65536, 0, 0, 0, 0);
    CHECK_FILE(fd, 0, 65536, 6);
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_dev(&dev);
    free(host);
    release_fd(&fd, path);
    case_end();
}

/* ===========================================================================================
 * Group "host": pageable and pinned host buffers through the host backend
 * ========================================================================================= */

static void host_rw_case(int pinned, int reg, size_t size, int64_t foff, size_t boff)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    const size_t len = boff + size + 4096;
    const uint64_t seed = next_seed();
    uint8_t *src = NULL, *dst = NULL;
    void *src_reg = NULL, *dst_reg = NULL;
    case_begin("host_%s_%s_size%zu_foff%lld_boff%zu", pinned ? "pinned" : "pageable", reg ? "reg" : "unreg", size,
               (long long)foff, boff);
    if (pinned) {
        void *a = NULL, *b = NULL;
        GPU_OK(gpu_host_alloc(&a, len));
        src = a;
        GPU_OK(gpu_host_alloc(&b, len));
        dst = b;
    } else {
        src = malloc(len);
        dst = malloc(len);
        CHECK(src && dst, "malloc(%zu)", len);
    }
    memset(src, SRC_FILL, len);
    pattern_fill(src + boff, size, seed, (uint64_t)foff);
    memset(dst, POISON, len);
    if (reg) {
        CHECK_ERR(hipFileBufRegister(src, len, 0), hipFileSuccess);
        src_reg = src;
        CHECK_ERR(hipFileBufRegister(dst, len, 0), hipFileSuccess);
        dst_reg = dst;
    }
    OPEN_TMP(path, fd, O_RDWR);
    REG_FD(fd, fh);
    CHECK_SSZ(hipFileWrite(fh, src, size, foff, (hoff_t)boff), size);
    CHECK(file_size(fd) == foff + (off_t)size, "file size %lld after the write, want %lld", (long long)file_size(fd),
          (long long)(foff + (off_t)size));
    CHECK_FILE(fd, (uint64_t)foff, size, seed);
    CHECK_HOST_FILL(src, len, boff, size, seed, (uint64_t)foff, SRC_FILL);
    CHECK_SSZ(hipFileRead(fh, dst, size, foff, (hoff_t)boff), size);
    CHECK_HOST(dst, len, boff, size, seed, (uint64_t)foff);
    /* Short read at the end of file. */
    memset(dst, POISON, len);
    CHECK_SSZ(hipFileRead(fh, dst, size, foff + 1, (hoff_t)boff), size - 1);
    CHECK_HOST(dst, len, boff, size - 1, seed, (uint64_t)foff + 1);
done:
    release_bufreg(&src_reg);
    release_bufreg(&dst_reg);
    release_handle(&fh);
    release_fd(&fd, path);
    if (pinned) {
        if (src)
            gpu_host_free(src);
        if (dst)
            gpu_host_free(dst);
    } else {
        free(src);
        free(dst);
    }
    case_end();
}

static void t_host(void)
{
    static const struct {
        size_t size;
        int64_t foff;
        size_t boff;
    } v[] = {
        { 1, 0, 0 }, { 4097, 777, 3 }, { 3 * MiB + 5, 4096, 4096 }, { 40 * MiB + 1, 12345, 7 },
    };
    for (int pinned = 0; pinned < 2; pinned++)
        for (int reg = 1; reg >= 0; reg--)
            for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
                host_rw_case(pinned, reg, v[i].size, v[i].foff, v[i].boff);
}

/* ===========================================================================================
 * Group "open_flags"
 * ========================================================================================= */

static void t_wronly(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, rfd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL;
    const uint64_t seed = next_seed();
    case_begin("o_wronly");
    OPEN_TMP(path, fd, O_WRONLY);
    rfd = open(path, O_RDONLY);
    CHECK(rfd >= 0, "open: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, 2 * MiB));
    GPU_OK(dev_upload_layout(dev, 2 * MiB, 0, 2 * MiB, seed, 0, SRC_FILL));
    CHECK_SSZ(hipFileWrite(fh, dev, MiB, 0, 0), MiB);             /* aligned */
    CHECK_SSZ(hipFileWrite(fh, dev, MiB - 7, MiB + 7, (hoff_t)(MiB + 7)), MiB - 7); /* unaligned */
    CHECK_FILE(rfd, 0, MiB, seed);
    CHECK_FILE(rfd, MiB + 7, MiB - 7, seed);
    {
        uint8_t gap[7];
        CHECK(pread_full(rfd, gap, 7, MiB) == 7 && fill_mismatch(gap, 7, 0) == SIZE_MAX,
              "the hole between the two writes is not zero");
    }
    GPU_OK(dev_poison(dev, 2 * MiB));
    CHECK_ERRNO(hipFileRead(fh, dev, 4096, 0, 0), EBADF);
    CHECK_ERRNO(hipFileRead(fh, dev, 100, 1, 3), EBADF);
    CHECK_ERRNO(hipFileRead(fh, dev, MiB, 0, 0), EBADF);
    CHECK_DEV(dev, 2 * MiB, 0, 0, 0, 0);
done:
    release_handle(&fh);
    release_dev(&dev);
    if (rfd >= 0)
        close(rfd);
    release_fd(&fd, path);
    case_end();
}

static void t_rdonly(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, wfd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL;
    const uint64_t seed = next_seed();
    case_begin("o_rdonly");
    CHECK(tmp_new(path, sizeof path) == 0, "mkstemp: %s", strerror(errno));
    wfd = open(path, O_RDWR);
    CHECK(wfd >= 0, "open: %s", strerror(errno));
    CHECK(file_write_pattern(wfd, 0, 2 * MiB, seed) == 0, "write: %s", strerror(errno));
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, 2 * MiB));
    GPU_OK(dev_upload_layout(dev, 2 * MiB, 0, 2 * MiB, 1, 0, SRC_FILL));
    CHECK_ERRNO(hipFileWrite(fh, dev, 4096, 0, 0), EBADF);
    CHECK_ERRNO(hipFileWrite(fh, dev, 100, 1, 3), EBADF);
    CHECK_ERRNO(hipFileWrite(fh, dev, MiB, 0, 0), EBADF);
    CHECK_FILE(wfd, 0, 2 * MiB, seed);
    GPU_OK(dev_poison(dev, 2 * MiB));
    CHECK_SSZ(hipFileRead(fh, dev, MiB, 0, 0), MiB);
    CHECK_SSZ(hipFileRead(fh, dev, MiB - 9, MiB + 9, (hoff_t)(MiB + 9)), MiB - 9);
    CHECK_DEV(dev, MiB, 0, MiB, seed, 0);
    CHECK_DEV((uint8_t *)dev + MiB, MiB, 9, MiB - 9, seed, MiB + 9);
done:
    release_handle(&fh);
    release_dev(&dev);
    if (wfd >= 0)
        close(wfd);
    release_fd(&fd, path);
    case_end();
}

/* The application opened the file with O_DIRECT; unaligned requests must still work. */
static void t_odirect(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, bfd = -1;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    uint8_t *host = NULL;
    const size_t len = 4 * MiB;
    const uint64_t seed = next_seed(), seed2 = next_seed();
    case_begin("o_direct_client_fd");
    CHECK(tmp_new(path, sizeof path) == 0, "mkstemp: %s", strerror(errno));
    fd = open(path, O_RDWR | O_DIRECT);
    if (fd < 0 && errno == EINVAL) {
        case_skip("the file system of %s does not support O_DIRECT", g_dir);
        goto done;
    }
    CHECK(fd >= 0, "open(O_DIRECT): %s", strerror(errno));
    bfd = open(path, O_RDONLY);
    CHECK(bfd >= 0, "open: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, len));
    GPU_OK(dev_upload_layout(dev, len, 7, 3 * MiB + 1, seed, 1, SRC_FILL));
    /* Unaligned write, then an aligned one over part of it. */
    CHECK_SSZ(hipFileWrite(fh, dev, 3 * MiB + 1, 1, 7), 3 * MiB + 1);
    CHECK_FILE(bfd, 1, 3 * MiB + 1, seed);
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, 3 * MiB + 1, 1, 7), 3 * MiB + 1);
    CHECK_DEV(dev, len, 7, 3 * MiB + 1, seed, 1);
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, 4097, 12345, 4096 + 3), 4097);
    CHECK_DEV(dev, len, 4096 + 3, 4097, seed, 12345);
    /* Short read at the end of file through the O_DIRECT descriptor. */
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, 2 * MiB, 2 * MiB, 0), MiB + 2);
    CHECK_DEV_EOF(dev, len, 0, MiB + 2, seed, 2 * MiB, eof_slack(2 * MiB, 2 * MiB, dev, 3 * MiB + 2));
    /* Aligned, registered. */
    CHECK_ERR(hipFileBufRegister(dev, len, 0), hipFileSuccess);
    reg_ptr = dev;
    GPU_OK(dev_upload_layout(dev, len, 0, MiB, seed2, 4096, SRC_FILL));
    CHECK_SSZ(hipFileWrite(fh, dev, MiB, 4096, 0), MiB);
    CHECK_FILE(bfd, 4096, MiB, seed2);
    CHECK_FILE(bfd, 1, 4095, seed);
    CHECK_FILE(bfd, 4096 + MiB, 2 * MiB - 4096 + 2, seed);
    GPU_OK(dev_poison(dev, len));
    CHECK_SSZ(hipFileRead(fh, dev, MiB, 4096, 0), MiB);
    CHECK_DEV(dev, len, 0, MiB, seed2, 4096);
    /* Host memory, unaligned. */
    host = malloc(8192);
    CHECK(host != NULL, "malloc");
    memset(host, POISON, 8192);
    CHECK_SSZ(hipFileRead(fh, host, 5000, 3, 1), 5000);
    {
        char why[512];
        CHECK(layout_check(host, 0, 1, 1, 0, 0, 0, POISON, why, sizeof why) == 0, "host byte 0 touched");
        CHECK(layout_check(host + 1, 0, 4093, 0, 4093, seed, 3, POISON, why, sizeof why) == 0, "host data: %s", why);
        CHECK(layout_check(host + 1 + 4093, 0, 907, 0, 907, seed2, 4096, POISON, why, sizeof why) == 0,
              "host data (2nd part): %s", why);
        CHECK(layout_check(host + 5001, 0, 8192 - 5001, 0, 0, 0, 0, POISON, why, sizeof why) == 0, "host tail: %s",
              why);
    }
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_dev(&dev);
    free(host);
    if (bfd >= 0)
        close(bfd);
    release_fd(&fd, path);
    case_end();
}

/* ===========================================================================================
 * Group "large"
 * ========================================================================================= */

struct large_fixture {
    char path[PATH_MAX];
    int fd;
    hipFileHandle_t fh;
    void *dev;
    size_t size;
    uint64_t seed;
};

static void large_read(struct large_fixture *x, int reg)
{
    void *reg_ptr = NULL;
    double t0, dt;
    case_begin("large_read_%s_%zuMiB", reg ? "reg" : "unreg", x->size / MiB);
    if (reg) {
        CHECK_ERR(hipFileBufRegister(x->dev, x->size, 0), hipFileSuccess);
        reg_ptr = x->dev;
    }
    GPU_OK(dev_poison(x->dev, x->size));
    t0 = now_s();
    CHECK_SSZ(hipFileRead(x->fh, x->dev, x->size, 0, 0), x->size);
    dt = now_s() - t0;
    printf("# hipFileRead of %zu MiB: %.3f s, %.2f GB/s\n", x->size / MiB, dt, (double)x->size / dt / 1e9);
    CHECK_DEV(x->dev, x->size, 0, x->size, x->seed, 0);
done:
    release_bufreg(&reg_ptr);
    case_end();
}

static void large_write(struct large_fixture *x)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    double t0, dt;
    case_begin("large_write_%zuMiB", x->size / MiB);
    OPEN_TMP(path, fd, O_RDWR);
    REG_FD(fd, fh);
    /* The device buffer holds the file's pattern after large_read. */
    GPU_OK(dev_upload_layout(x->dev, x->size, 0, x->size, x->seed, 0, SRC_FILL));
    t0 = now_s();
    CHECK_SSZ(hipFileWrite(fh, x->dev, x->size, 0, 0), x->size);
    dt = now_s() - t0;
    printf("# hipFileWrite of %zu MiB (durable): %.3f s, %.2f GB/s\n", x->size / MiB, dt, (double)x->size / dt / 1e9);
    CHECK(file_size(fd) == (off_t)x->size, "file size %lld", (long long)file_size(fd));
    CHECK_FILE(fd, 0, x->size, x->seed);
done:
    release_handle(&fh);
    release_fd(&fd, path);
    case_end();
}

static void t_large(void)
{
    struct large_fixture x;
    int ok;
    memset(&x, 0, sizeof x);
    x.fd = -1;
    x.size = g_large ? GiB : 256 * MiB;
    x.seed = next_seed();
    case_begin("large_setup_%zuMiB", x.size / MiB);
    OPEN_TMP(x.path, x.fd, O_RDWR);
    CHECK(file_write_pattern(x.fd, 0, x.size, x.seed) == 0, "write: %s", strerror(errno));
    REG_FD(x.fd, x.fh);
    GPU_OK(gpu_malloc(&x.dev, x.size));
done:
    ok = case_end();
    if (ok) {
        large_read(&x, 0);
        large_read(&x, 1);
        large_write(&x);
    }
    release_handle(&x.fh);
    release_dev(&x.dev);
    release_fd(&x.fd, x.path);
}

/* ===========================================================================================
 * Group "threads"
 * ========================================================================================= */

static pthread_barrier_t g_barrier;

#define REGION (8 * MiB)

struct rr_arg {
    int id;
    hipFileHandle_t fh;
    void *dev;
    uint64_t base, seed;
};

/* Each thread reads its own 8 MiB region into its own device buffer, 4 times. */
static void *rr_worker(void *p)
{
    struct rr_arg *a = p;
    snprintf(t_ctx, sizeof t_ctx, "thread %d: ", a->id);
    pthread_barrier_wait(&g_barrier);
    for (int it = 0; it < 4; it++) {
        size_t d = (size_t)it * 7 + (size_t)(it == 3) * 4096; /* 0, 7, 14, 4117 */
        size_t n = REGION - d;
        GPU_OK(dev_poison(a->dev, REGION));
        CHECK_SSZ(hipFileRead(a->fh, a->dev, n, (hoff_t)(a->base + d), (hoff_t)d), n);
        CHECK_DEV(a->dev, REGION, d, n, a->seed, a->base + d);
    }
done:
    return NULL;
}

static void t_threads_read_regions(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    struct rr_arg args[NTHREADS];
    pthread_t th[NTHREADS];
    int started = 0, barrier = 0;
    void *regs[NTHREADS];
    const uint64_t seed = next_seed();
    memset(args, 0, sizeof args);
    memset(regs, 0, sizeof regs);
    case_begin("threads_read_own_regions");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, NTHREADS * REGION, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    for (int i = 0; i < NTHREADS; i++) {
        args[i].id = i;
        args[i].fh = fh;
        args[i].base = (uint64_t)i * REGION;
        args[i].seed = seed;
        GPU_OK(gpu_malloc(&args[i].dev, REGION));
        if (i % 2 == 0) {
            CHECK_ERR(hipFileBufRegister(args[i].dev, REGION, 0), hipFileSuccess);
            regs[i] = args[i].dev;
        }
    }
    CHECK(pthread_barrier_init(&g_barrier, NULL, NTHREADS) == 0, "pthread_barrier_init");
    barrier = 1;
    for (; started < NTHREADS; started++)
        CHECK(pthread_create(&th[started], NULL, rr_worker, &args[started]) == 0, "pthread_create");
done:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (barrier)
        pthread_barrier_destroy(&g_barrier);
    for (int i = 0; i < NTHREADS; i++) {
        release_bufreg(&regs[i]);
        release_dev(&args[i].dev);
    }
    release_handle(&fh);
    release_fd(&fd, path);
    case_end();
}

#define WREGION (4 * MiB)

struct wr_arg {
    int id;
    hipFileHandle_t fh;
    void *src;
    uint64_t base;
};

/* Each thread writes its own 4 MiB region in three pieces (unaligned, then aligned). */
static void *wr_worker(void *p)
{
    struct wr_arg *a = p;
    static const size_t cut[] = { 0, MiB + 3, 3 * MiB, WREGION };
    snprintf(t_ctx, sizeof t_ctx, "thread %d: ", a->id);
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < 3; i++) {
        size_t n = cut[i + 1] - cut[i];
        CHECK_SSZ(hipFileWrite(a->fh, a->src, n, (hoff_t)(a->base + cut[i]), (hoff_t)cut[i]), n);
    }
done:
    return NULL;
}

static void t_threads_write_regions(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    struct wr_arg args[NTHREADS];
    pthread_t th[NTHREADS];
    int started = 0, barrier = 0;
    void *regs[NTHREADS];
    void *all = NULL;
    const size_t total = NTHREADS * WREGION;
    const uint64_t seed = next_seed();
    memset(args, 0, sizeof args);
    memset(regs, 0, sizeof regs);
    case_begin("threads_write_disjoint_regions");
    OPEN_TMP(path, fd, O_RDWR);
    REG_FD(fd, fh);
    for (int i = 0; i < NTHREADS; i++) {
        args[i].id = i;
        args[i].fh = fh;
        args[i].base = (uint64_t)i * WREGION;
        GPU_OK(gpu_malloc(&args[i].src, WREGION));
        GPU_OK(dev_upload_layout(args[i].src, WREGION, 0, WREGION, seed, args[i].base, SRC_FILL));
        if (i % 2 == 1) {
            CHECK_ERR(hipFileBufRegister(args[i].src, WREGION, 0), hipFileSuccess);
            regs[i] = args[i].src;
        }
    }
    CHECK(pthread_barrier_init(&g_barrier, NULL, NTHREADS) == 0, "pthread_barrier_init");
    barrier = 1;
    for (; started < NTHREADS; started++)
        CHECK(pthread_create(&th[started], NULL, wr_worker, &args[started]) == 0, "pthread_create");
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    started = 0;
    CHECK(g_case_failures == 0, "a writer failed");
    CHECK(file_size(fd) == (off_t)total, "file size %lld, want %zu", (long long)file_size(fd), total);
    CHECK_FILE(fd, 0, total, seed);
    /* One reader verifies through the library as well. */
    GPU_OK(gpu_malloc(&all, total + 4096));
    GPU_OK(dev_poison(all, total + 4096));
    CHECK_SSZ(hipFileRead(fh, all, total, 0, 0), total);
    CHECK_DEV(all, total + 4096, 0, total, seed, 0);
done:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (barrier)
        pthread_barrier_destroy(&g_barrier);
    for (int i = 0; i < NTHREADS; i++) {
        release_bufreg(&regs[i]);
        release_dev(&args[i].src);
    }
    release_dev(&all);
    release_handle(&fh);
    release_fd(&fd, path);
    case_end();
}

#define SR_FOFF 12345u
#define SR_SIZE (6 * MiB + 5)

enum { SR_DEV_REG, SR_DEV_UNREG, SR_PINNED, SR_PAGEABLE };

struct sr_arg {
    int id, kind;
    hipFileHandle_t fh;
    void *buf;
    size_t len, boff;
    uint64_t seed;
};

/* Every thread reads the same file range, into buffers of different kinds. */
static void *sr_worker(void *p)
{
    struct sr_arg *a = p;
    int dev = a->kind == SR_DEV_REG || a->kind == SR_DEV_UNREG;
    snprintf(t_ctx, sizeof t_ctx, "thread %d (kind %d): ", a->id, a->kind);
    pthread_barrier_wait(&g_barrier);
    for (int it = 0; it < 4; it++) {
        if (dev)
            GPU_OK(dev_poison(a->buf, a->len));
        else
            memset(a->buf, POISON, a->len);
        CHECK_SSZ(hipFileRead(a->fh, a->buf, SR_SIZE, SR_FOFF, (hoff_t)a->boff), SR_SIZE);
        if (dev)
            CHECK_DEV(a->buf, a->len, a->boff, SR_SIZE, a->seed, SR_FOFF);
        else
            CHECK_HOST(a->buf, a->len, a->boff, SR_SIZE, a->seed, SR_FOFF);
    }
done:
    return NULL;
}

static void t_threads_same_region(void)
{
    char path[PATH_MAX] = "";
    int fd = -1;
    hipFileHandle_t fh = NULL;
    struct sr_arg args[NTHREADS];
    pthread_t th[NTHREADS];
    int started = 0, barrier = 0;
    void *regs[NTHREADS];
    const uint64_t seed = next_seed();
    memset(args, 0, sizeof args);
    memset(regs, 0, sizeof regs);
    case_begin("threads_mixed_reads_same_region");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, SR_FOFF + SR_SIZE + 100, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    for (int i = 0; i < NTHREADS; i++) {
        args[i].id = i;
        args[i].kind = i % 4;
        args[i].fh = fh;
        args[i].boff = (size_t)i * 3;
        args[i].len = args[i].boff + SR_SIZE + 4096;
        args[i].seed = seed;
        switch (args[i].kind) {
        case SR_DEV_REG:
        case SR_DEV_UNREG:
            GPU_OK(gpu_malloc(&args[i].buf, args[i].len));
            break;
        case SR_PINNED:
            GPU_OK(gpu_host_alloc(&args[i].buf, args[i].len));
            break;
        default:
            args[i].buf = malloc(args[i].len);
            CHECK(args[i].buf != NULL, "malloc");
            break;
        }
        /* Device buffers of kind 0 and, for half the threads, the host buffers are registered. */
        if (args[i].kind == SR_DEV_REG || (args[i].kind != SR_DEV_UNREG && i < NTHREADS / 2)) {
            CHECK_ERR(hipFileBufRegister(args[i].buf, args[i].len, 0), hipFileSuccess);
            regs[i] = args[i].buf;
        }
    }
    CHECK(pthread_barrier_init(&g_barrier, NULL, NTHREADS) == 0, "pthread_barrier_init");
    barrier = 1;
    for (; started < NTHREADS; started++)
        CHECK(pthread_create(&th[started], NULL, sr_worker, &args[started]) == 0, "pthread_create");
done:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (barrier)
        pthread_barrier_destroy(&g_barrier);
    for (int i = 0; i < NTHREADS; i++) {
        release_bufreg(&regs[i]);
        if (!args[i].buf)
            continue;
        if (args[i].kind == SR_PINNED)
            gpu_host_free(args[i].buf);
        else if (args[i].kind == SR_PAGEABLE)
            free(args[i].buf);
        else
            gpu_free(args[i].buf);
    }
    release_handle(&fh);
    release_fd(&fd, path);
    case_end();
}

/* A thread whose first GPU-related call is hipFileRead / hipFileWrite. */
struct ut_arg {
    int write;
    hipFileHandle_t fh;
    void *buf;
    size_t size;
    int64_t foff, boff;
    ssize_t result;
    int err;
};

static void *ut_worker(void *p)
{
    struct ut_arg *a = p;
    errno = 0;
    if (a->write)
        a->result = hipFileWrite(a->fh, a->buf, a->size, a->foff, a->boff);
    else
        a->result = hipFileRead(a->fh, a->buf, a->size, a->foff, a->boff);
    a->err = errno;
    return NULL;
}

static int run_untouched(struct ut_arg *a)
{
    pthread_t t;
    if (pthread_create(&t, NULL, ut_worker, a) != 0)
        return -1;
    return pthread_join(t, NULL);
}

static void t_untouched_thread(void)
{
    char path[PATH_MAX] = "", path2[PATH_MAX] = "";
    int fd = -1, fd2 = -1;
    hipFileHandle_t fh = NULL, fh2 = NULL;
    void *dev = NULL, *regdev = NULL, *src = NULL, *reg_ptr = NULL;
    const size_t n = MiB + 3, len = 2 * MiB;
    const uint64_t seed = next_seed(), seed2 = next_seed();
    struct ut_arg a;
    case_begin("thread_without_gpu_context");
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, 3 * MiB, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    OPEN_TMP(path2, fd2, O_RDWR);
    REG_FD(fd2, fh2);
    GPU_OK(gpu_malloc(&dev, len));
    GPU_OK(gpu_malloc(&regdev, len));
    GPU_OK(gpu_malloc(&src, len));
    GPU_OK(dev_poison(dev, len));
    GPU_OK(dev_poison(regdev, len));
    GPU_OK(dev_upload_layout(src, len, 0, len, seed2, 0, SRC_FILL));
    CHECK_ERR(hipFileBufRegister(regdev, len, 0), hipFileSuccess);
    reg_ptr = regdev;

    /* Unregistered device buffer, unaligned. */
    a = (struct ut_arg){ .write = 0, .fh = fh, .buf = dev, .size = n, .foff = 5, .boff = 0 };
    CHECK(run_untouched(&a) == 0, "pthread_create/join failed");
    CHECK(a.result == (ssize_t)n, "read from a fresh thread (unregistered) = %zd (errno %d: %s), want %zu", a.result,
          a.err, strerror(a.err), n);
    CHECK_DEV(dev, len, 0, n, seed, 5);
    /* Registered device buffer, aligned. */
    a = (struct ut_arg){ .write = 0, .fh = fh, .buf = regdev, .size = MiB, .foff = 4096, .boff = 0 };
    CHECK(run_untouched(&a) == 0, "pthread_create/join failed");
    CHECK(a.result == (ssize_t)MiB, "read from a fresh thread (registered) = %zd (errno %d: %s)", a.result, a.err,
          strerror(a.err));
    CHECK_DEV(regdev, len, 0, MiB, seed, 4096);
    /* Write from a fresh thread. */
    a = (struct ut_arg){ .write = 1, .fh = fh2, .buf = src, .size = n, .foff = 0, .boff = 0 };
    CHECK(run_untouched(&a) == 0, "pthread_create/join failed");
    CHECK(a.result == (ssize_t)n, "write from a fresh thread = %zd (errno %d: %s)", a.result, a.err, strerror(a.err));
    CHECK_FILE(fd2, 0, n, seed2);
done:
    release_bufreg(&reg_ptr);
    release_handle(&fh);
    release_handle(&fh2);
    release_dev(&dev);
    release_dev(&regdev);
    release_dev(&src);
    release_fd(&fd, path);
    release_fd(&fd2, path2);
    case_end();
}

/* ===========================================================================================
 * Group "batch": hipFileBatchIOSetUp / Submit / GetStatus / Cancel / Destroy
 * ========================================================================================= */

#define BATCH_MAX_EV 64

/* One batch entry (hipFileIOParams_t) of mode hipFileBatch. */
static hipFileIOParams_t batch_op(hipFileHandle_t fh, int opcode, void *base, int64_t foff, int64_t boff, size_t size,
                                  uintptr_t cookie)
{
    hipFileIOParams_t p;
    memset(&p, 0, sizeof p);
    p.mode = hipFileBatch;
    p.u.batch.devPtr_base = base;
    p.u.batch.file_offset = foff;
    p.u.batch.devPtr_offset = boff;
    p.u.batch.size = size;
    p.fh = fh;
    p.opcode = (hipFileOpcode_t)opcode;
    p.cookie = (void *)cookie;
    return p;
}

/*
 * Reaps n events of h into ev[0..n): GetStatus(min_nr = remaining, *nr = remaining, no time
 * limit) in a loop; then a GetStatus with a zero timeout must find nothing more. Each event
 * is matched by its cookie to one of ops[0..n) (each exactly once): idx[k] is the index of
 * the entry of event k. Returns 0, or -1 with a description in why.
 */
static int batch_reap(hipFileBatchHandle_t h, const hipFileIOParams_t *ops, unsigned n, hipFileIOEvents_t *ev,
                      int *idx, char *why, size_t whylen)
{
    unsigned got = 0;
    int seen[BATCH_MAX_EV];
    hipFileIOEvents_t extra;
    struct timespec zero = { 0, 0 };
    if (n > BATCH_MAX_EV) {
        snprintf(why, whylen, "%u events: more than %d", n, BATCH_MAX_EV);
        return -1;
    }
    while (got < n) {
        unsigned left = n - got, nr = left;
        hipFileError_t e = hipFileBatchIOGetStatus(h, left, &nr, ev + got, NULL);
        if (e.err != hipFileSuccess) {
            snprintf(why, whylen, "hipFileBatchIOGetStatus(min_nr %u) = %d (%s) after %u of %u events", left,
                     (int)e.err, hipFileGetOpErrorString(e.err), got, n);
            return -1;
        }
        if (nr == 0 || nr > left) {
            snprintf(why, whylen, "hipFileBatchIOGetStatus(min_nr %u, *nr %u, no timeout) gave %u events after %u of %u",
                     left, left, nr, got, n);
            return -1;
        }
        got += nr;
    }
    {
        unsigned nr = 1;
        hipFileError_t e = hipFileBatchIOGetStatus(h, 0, &nr, &extra, &zero);
        if (e.err != hipFileSuccess || nr != 0) {
            snprintf(why, whylen, "after all %u events, hipFileBatchIOGetStatus({0, 0}) = %d with %u more events", n,
                     (int)e.err, nr);
            return -1;
        }
    }
    memset(seen, 0, sizeof seen);
    for (unsigned k = 0; k < n; k++) {
        int j = -1;
        for (unsigned i = 0; i < n; i++)
            if (ops[i].cookie == ev[k].cookie) {
                j = (int)i;
                break;
            }
        if (j < 0) {
            snprintf(why, whylen, "event %u has an unknown cookie %p", k, ev[k].cookie);
            return -1;
        }
        if (seen[j]++) {
            snprintf(why, whylen, "cookie %p reported twice", ev[k].cookie);
            return -1;
        }
        idx[k] = j;
    }
    return 0;
}

#define CHECK_REAP(h, ops, n, ev, idx)                                                             \
    do {                                                                                           \
        char why_[512];                                                                            \
        if (batch_reap((h), (ops), (n), (ev), (idx), why_, sizeof why_) != 0) {                   \
            case_fail(__LINE__, "reaping %u events: %s", (unsigned)(n), why_);                     \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* Event k of a reap must be hipFileComplete with ret == want. */
#define CHECK_EV_COMPLETE(ev, k, want)                                                             \
    CHECK((ev)[k].status == hipFileComplete && (ev)[k].ret == (size_t)(want),                      \
          "event of cookie %p: status %d, ret %zd; want hipFileComplete (%d) with ret %zd", (ev)[k].cookie, \
          (int)(ev)[k].status, (ssize_t)(ev)[k].ret, (int)hipFileComplete, (ssize_t)(want))

static void release_batch(hipFileBatchHandle_t *h)
{
    if (*h) {
        hipFileBatchIODestroy(*h);
        *h = NULL;
    }
}

/* The suite's own reference on the driver, taken by a case that does I/O. */
#define OPEN_DRIVER(opened)                                                                        \
    do {                                                                                           \
        CHECK_ERR(hipFileDriverOpen(), hipFileSuccess);                                            \
        (opened) = 1;                                                                              \
    } while (0)

/*
 * The set-up most batch cases share, on the case's locals opened, path, fd, fh, dev, reg_ptr
 * and h: the driver opened, a file of len pattern bytes (seed) registered, a device buffer of
 * len bytes poisoned and registered, and a context of depth entries.
 */
#define BATCH_FIXTURE(len, seed, depth)                                                           \
    do {                                                                                           \
        OPEN_DRIVER(opened);                                                                       \
        OPEN_TMP(path, fd, O_RDWR);                                                                \
        CHECK(file_write_pattern(fd, 0, (len), (seed)) == 0, "write: %s", strerror(errno));        \
        REG_FD(fd, fh);                                                                            \
        GPU_OK(gpu_malloc(&dev, (len)));                                                           \
        GPU_OK(dev_poison(dev, (len)));                                                            \
        CHECK_ERR(hipFileBufRegister(dev, (len), 0), hipFileSuccess);                              \
        reg_ptr = dev;                                                                             \
        CHECK_ERR(hipFileBatchIOSetUp(&h, (depth)), hipFileSuccess);                               \
    } while (0)

static void release_driver(int *opened)
{
    if (*opened) {
        EXPECT_ERR(hipFileDriverClose(), hipFileSuccess);
        *opened = 0;
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/*
 * The end of a batch case (success or not): destroys the context, then deregisters the
 * buffer and the file handle. Once Destroy has returned, no operation may hold them any more:
 * a buffer deregistration refused as in use, or a handle deregistration ignored (the handle
 * still reads, through probe), is a failure. After reporting it, this waits up to 5 s for the
 * library to let go, so that later cases do not inherit the registrations.
 */
static void batch_finish(hipFileBatchHandle_t *h, void **registered, hipFileHandle_t *fh, void *probe)
{
    release_batch(h);
    if (*registered) {
        hipFileError_t e = hipFileBufDeregister(*registered);
        if (e.err != hipFileSuccess) {
            case_fail(__LINE__, "hipFileBufDeregister after hipFileBatchIODestroy = %d (%s), want 0 (buffer still in use)",
                      (int)e.err, hipFileGetOpErrorString(e.err));
            for (int i = 0; i < 5000 && e.err == hipFileInternalError; i++) {
                sleep_ms(1);
                e = hipFileBufDeregister(*registered);
            }
        }
        *registered = NULL;
    }
    if (*fh) {
        hipFileHandleDeregister(*fh);
        if (probe && hipFileRead(*fh, probe, 1, 0, 0) != -hipFileHandleNotRegistered) {
            case_fail(__LINE__, "hipFileHandleDeregister after hipFileBatchIODestroy was ignored (handle still in use)");
            for (int i = 0; i < 5000; i++) {
                sleep_ms(1);
                hipFileHandleDeregister(*fh);
                if (hipFileRead(*fh, probe, 1, 0, 0) == -hipFileHandleNotRegistered)
                    break;
            }
        }
        *fh = NULL;
    }
}

static void t_batch_setup(void)
{
    hipFileBatchHandle_t h = (hipFileBatchHandle_t)0x1234, a = NULL, b = NULL;
    int64_t count = hipFileUseCount();
    case_begin("batch_setup");
    CHECK_ERR(hipFileBatchIOSetUp(NULL, 4), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOSetUp(&h, 0), hipFileInvalidValue);
    CHECK(h == (hipFileBatchHandle_t)0x1234, "*batch_idp was written by a failed set-up (max_nr 0)");
    CHECK_ERR(hipFileBatchIOSetUp(&h, 129), hipFileInvalidValue);
    CHECK(h == (hipFileBatchHandle_t)0x1234, "*batch_idp was written by a failed set-up (max_nr 129)");
    CHECK_ERR(hipFileBatchIOSetUp(&a, 128), hipFileSuccess);
    CHECK(a != NULL, "set-up with max_nr 128 gave a NULL handle");
    CHECK_ERR(hipFileBatchIOSetUp(&b, 1), hipFileSuccess);
    CHECK(b != NULL, "set-up with max_nr 1 gave a NULL handle");
    CHECK(a != b, "two contexts got the same handle %p", a);
    CHECK(hipFileUseCount() == count, "set-up changed the use count from %lld to %lld", (long long)count,
          (long long)hipFileUseCount());
    hipFileBatchIODestroy(a);
    h = b;
    a = NULL;
    b = NULL;
    hipFileBatchIODestroy(h);
    hipFileBatchIODestroy(h); /* destroyed: ignored */
    hipFileBatchIODestroy(NULL);
    CHECK_ERR(hipFileBatchIOCancel(h), hipFileInvalidValue);
done:
    release_batch(&a);
    release_batch(&b);
    case_end();
}

static void t_batch_submit_rules(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    hipFileBatchHandle_t h = NULL;
    hipFileIOParams_t ops[5], pair[2];
    hipFileIOEvents_t ev[BATCH_MAX_EV];
    int idx[BATCH_MAX_EV];
    struct timespec zero = { 0, 0 };
    const size_t len = 64 * KiB;
    const uint64_t seed = next_seed();
    /* The invalid second entries, in the order of the checks, and their codes. */
    static const struct {
        const char *what;
        int want;
    } bad[] = {
        { "a NULL file handle", hipFileInternalError },
        { "a NULL devPtr_base", hipFileInvalidValue },
        { "devPtr_offset -1", hipFileInvalidValue },
        { "devPtr_offset == buffer length", hipFileInvalidValue },
        { "a size one past the buffer end", hipFileInvalidValue },
        { "file_offset -4096", hipFileInvalidValue },
        { "opcode 2", hipFileInvalidValue },
        { "mode 0", hipFileInvalidValue },
    };
    case_begin("batch_submit_rules");
    BATCH_FIXTURE(len, seed, 4);

    CHECK_ERR(hipFileBatchIOSubmit(h, 1, NULL, 0), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOSubmit(NULL, 0, NULL, 0), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOSubmit(h, 0, NULL, 0), hipFileInvalidValue);
    for (int i = 0; i < 5; i++)
        ops[i] = batch_op(fh, hipFileBatchRead, dev, (int64_t)i * 4096, (int64_t)i * 4096, 4096, 1 + (uintptr_t)i);
    CHECK_ERR(hipFileBatchIOSubmit(h, 5, ops, 0), hipFileBatchFull); /* over capacity */

    /* A valid first entry and an invalid second one: nothing may be queued. */
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        unsigned nr = 4;
        pair[0] = batch_op(fh, hipFileBatchRead, dev, 0, 0, 4096, 10);
        pair[1] = batch_op(fh, hipFileBatchRead, dev, 4096, 4096, 4096, 11);
        switch (c) {
        case 0:
            pair[1].fh = NULL;
            break;
        case 1:
            pair[1].u.batch.devPtr_base = NULL;
            break;
        case 2:
            pair[1].u.batch.devPtr_offset = -1;
            break;
        case 3:
            pair[1].u.batch.devPtr_offset = (int64_t)len;
            pair[1].u.batch.size = 0;
            break;
        case 4:
            pair[1].u.batch.devPtr_offset = 4096;
            pair[1].u.batch.size = len - 4096 + 1;
            break;
        case 5:
            pair[1].u.batch.file_offset = -4096;
            break;
        case 6:
            pair[1].opcode = (hipFileOpcode_t)2;
            break;
        default:
            pair[1].mode = (hipFileBatchMode_t)0;
            break;
        }
        {
            hipFileError_t e = hipFileBatchIOSubmit(h, 2, pair, 0);
            CHECK((int)e.err == bad[c].want, "submission with %s as second entry = %d (%s), want %d", bad[c].what,
                  (int)e.err, hipFileGetOpErrorString(e.err), bad[c].want);
        }
        CHECK_ERR(hipFileBatchIOGetStatus(h, 0, &nr, ev, &zero), hipFileSuccess);
        CHECK(nr == 0, "after the refused submission with %s, %u operations were reported", bad[c].what, nr);
    }
    /* The context is still empty: all four slots take entries. */
    CHECK_ERR(hipFileBatchIOSubmit(h, 4, ops, 0), hipFileSuccess);
    CHECK_REAP(h, ops, 4, ev, idx);
    for (int k = 0; k < 4; k++)
        CHECK_EV_COMPLETE(ev, k, 4096);
    CHECK_DEV(dev, len, 0, 4 * 4096, seed, 0);
done:
    batch_finish(&h, &reg_ptr, &fh, dev);
    release_driver(&opened);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

#define BRW_N 16                  /* reads into each of the two buffers */
#define BRW_SIZE (32 * KiB)       /* bytes per read */
#define BRW_STRIDE (48 * KiB)     /* device window of one read */
#define BRW_LEN (BRW_N * BRW_STRIDE)
#define BRW_FSIZE (2 * MiB)
#define BRW_WN 8                  /* writes */
#define BRW_WSIZE (64 * KiB)
#define BRW_WSTRIDE (96 * KiB)    /* device window of one write */

static void t_batch_rw(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *reg = NULL, *unreg = NULL, *reg_ptr = NULL;
    hipFileBatchHandle_t h = NULL;
    hipFileIOParams_t ops[2 * BRW_N];
    hipFileIOEvents_t ev[BATCH_MAX_EV];
    int idx[BATCH_MAX_EV];
    int64_t rfoff[2 * BRW_N], wfoff[BRW_WN];
    size_t rboff[2 * BRW_N], wboff[BRW_WN];
    const uint64_t seed = next_seed(), wseed = next_seed();
    case_begin("batch_read_write");
    OPEN_DRIVER(opened);
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, BRW_FSIZE, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&reg, BRW_LEN));
    GPU_OK(gpu_malloc(&unreg, BRW_LEN));
    GPU_OK(dev_poison(reg, BRW_LEN));
    GPU_OK(dev_poison(unreg, BRW_LEN));
    CHECK_ERR(hipFileBufRegister(reg, BRW_LEN, 0), hipFileSuccess);
    reg_ptr = reg;
    CHECK_ERR(hipFileBatchIOSetUp(&h, 64), hipFileSuccess);

    /* 16 reads into the registered buffer (cookies 100 + i), 16 into the unregistered one
     * (200 + i); aligned and unaligned file and buffer offsets. */
    for (int i = 0; i < BRW_N; i++) {
        for (int u = 0; u < 2; u++) {
            int k = 2 * i + u;
            rfoff[k] = (int64_t)i * 65536 + (i % 3) * 4096 + (i % 4 == 1 ? 7 : 0) + u * 12345;
            rboff[k] = (size_t)i * BRW_STRIDE + (size_t)(i % 4) * 4096 + (size_t)(i % 2) * 3;
            ops[k] = batch_op(fh, hipFileBatchRead, u ? unreg : reg, rfoff[k], (int64_t)rboff[k], BRW_SIZE,
                              (u ? 200 : 100) + (uintptr_t)i);
        }
    }
    CHECK_ERR(hipFileBatchIOSubmit(h, 2 * BRW_N, ops, 0), hipFileSuccess);
    CHECK_REAP(h, ops, 2 * BRW_N, ev, idx);
    for (int k = 0; k < 2 * BRW_N; k++)
        CHECK_EV_COMPLETE(ev, k, BRW_SIZE);
    for (int k = 0; k < 2 * BRW_N; k++) {
        uint8_t *base = (uint8_t *)((k % 2) ? unreg : reg) + (size_t)(k / 2) * BRW_STRIDE;
        CHECK_DEV(base, BRW_STRIDE, rboff[k] - (size_t)(k / 2) * BRW_STRIDE, BRW_SIZE, seed, (uint64_t)rfoff[k]);
    }

    /* A zero-size entry, and a read that starts 1000 bytes before the end of the file. */
    GPU_OK(dev_poison(reg, BRW_LEN));
    GPU_OK(dev_poison(unreg, BRW_LEN));
    ops[0] = batch_op(fh, hipFileBatchRead, unreg, 4096, 0, 0, 300);
    ops[1] = batch_op(fh, hipFileBatchRead, reg, BRW_FSIZE - 1000, 5, BRW_SIZE, 301);
    CHECK_ERR(hipFileBatchIOSubmit(h, 2, ops, 0), hipFileSuccess);
    CHECK_REAP(h, ops, 2, ev, idx);
    for (int k = 0; k < 2; k++)
        CHECK_EV_COMPLETE(ev, k, idx[k] == 0 ? 0 : 1000);
    CHECK_DEV(unreg, BRW_LEN, 0, 0, 0, 0);
    CHECK_DEV_EOF(reg, BRW_LEN, 5, 1000, seed, BRW_FSIZE - 1000,
                  eof_slack(BRW_FSIZE - 1000, BRW_SIZE, (uint8_t *)reg + 5, BRW_FSIZE));

    /* 8 writes from both buffers to new file ranges past the original end (cookies 400 + i). */
    for (int i = 0; i < BRW_WN; i++) {
        void *buf = (i % 2) ? unreg : reg;
        size_t win = (size_t)(i / 2) * BRW_WSTRIDE;
        size_t rel = (size_t)((i / 2) % 2) * 4096 + (size_t)(i % 3);
        wfoff[i] = (int64_t)BRW_FSIZE + (int64_t)i * 131072 + (i % 4 == 3 ? 11 : 0);
        wboff[i] = win + rel;
        GPU_OK(dev_upload_layout((uint8_t *)buf + win, BRW_WSTRIDE, rel, BRW_WSIZE, wseed, (uint64_t)wfoff[i],
                                 SRC_FILL));
        ops[i] = batch_op(fh, hipFileBatchWrite, buf, wfoff[i], (int64_t)wboff[i], BRW_WSIZE, 400 + (uintptr_t)i);
    }
    CHECK_ERR(hipFileBatchIOSubmit(h, BRW_WN, ops, 0), hipFileSuccess);
    CHECK_REAP(h, ops, BRW_WN, ev, idx);
    for (int k = 0; k < BRW_WN; k++)
        CHECK_EV_COMPLETE(ev, k, BRW_WSIZE);
    for (int i = 0; i < BRW_WN; i++) {
        void *buf = (i % 2) ? unreg : reg;
        size_t win = (size_t)(i / 2) * BRW_WSTRIDE;
        CHECK_FILE(fd, (uint64_t)wfoff[i], BRW_WSIZE, wseed);
        /* The source is unchanged. */
        CHECK_DEV_FILL((uint8_t *)buf + win, BRW_WSTRIDE, wboff[i] - win, BRW_WSIZE, wseed, (uint64_t)wfoff[i],
                       SRC_FILL);
    }
    CHECK_FILE(fd, 0, BRW_FSIZE, seed);
    CHECK(file_size(fd) == wfoff[BRW_WN - 1] + (off_t)BRW_WSIZE, "file size %lld after the writes, want %lld",
          (long long)file_size(fd), (long long)(wfoff[BRW_WN - 1] + (off_t)BRW_WSIZE));
done:
    batch_finish(&h, &reg_ptr, &fh, reg);
    release_driver(&opened);
    release_dev(&reg);
    release_dev(&unreg);
    release_fd(&fd, path);
    case_end();
}

static void t_batch_status_rules(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    hipFileBatchHandle_t h = NULL, stale = NULL;
    hipFileIOParams_t ops[6];
    hipFileIOEvents_t ev[4];
    int seen[6];
    unsigned nr = 4, zero_nr = 0;
    static const long bad_ts[][2] = { { -1, 0 }, { 0, -1 }, { 0, 1000000000 } };
    struct timespec ts, zero = { 0, 0 };
    const size_t len = 64 * KiB;
    const uint64_t seed = next_seed();
    memset(seen, 0, sizeof seen);
    case_begin("batch_status_rules");
    BATCH_FIXTURE(len, seed, 8);

    CHECK_ERR(hipFileBatchIOGetStatus(NULL, 0, &nr, ev, NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOGetStatus((hipFileBatchHandle_t)0x1234, 0, &nr, ev, NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOGetStatus(h, 0, NULL, ev, NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOGetStatus(h, 0, &zero_nr, ev, NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOGetStatus(h, 0, &nr, NULL, NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOGetStatus(h, 5, &nr, ev, NULL), hipFileInvalidValue); /* min_nr > *nr */
    for (size_t i = 0; i < sizeof bad_ts / sizeof bad_ts[0]; i++) {
        ts.tv_sec = (time_t)bad_ts[i][0];
        ts.tv_nsec = bad_ts[i][1];
        nr = 4;
        {
            hipFileError_t e = hipFileBatchIOGetStatus(h, 0, &nr, ev, &ts);
            CHECK(e.err == hipFileInvalidValue, "timeout {%ld, %ld}: GetStatus = %d (%s), want %d", bad_ts[i][0],
                  bad_ts[i][1], (int)e.err, hipFileGetOpErrorString(e.err), (int)hipFileInvalidValue);
        }
    }
    /* Nothing outstanding: returns at once, even with min_nr 4 and no time limit. */
    nr = 4;
    CHECK_ERR(hipFileBatchIOGetStatus(h, 4, &nr, ev, NULL), hipFileSuccess);
    CHECK(nr == 0, "with nothing outstanding, *nr = %u, want 0", nr);

    /* Six reads, reaped two at a time (min_nr 2, *nr 2): each reported exactly once. */
    for (int i = 0; i < 6; i++)
        ops[i] = batch_op(fh, hipFileBatchRead, dev, (int64_t)i * 4096, (int64_t)i * 4096, 4096, 1 + (uintptr_t)i);
    CHECK_ERR(hipFileBatchIOSubmit(h, 6, ops, 0), hipFileSuccess);
    for (int call = 0; call < 3; call++) {
        ev[2].cookie = ev[3].cookie = (void *)(uintptr_t)0xfeed;
        nr = 2;
        CHECK_ERR(hipFileBatchIOGetStatus(h, 2, &nr, ev, NULL), hipFileSuccess);
        CHECK(nr == 2, "call %d: *nr = %u, want 2", call, nr);
        CHECK(ev[2].cookie == (void *)(uintptr_t)0xfeed && ev[3].cookie == (void *)(uintptr_t)0xfeed,
              "call %d wrote events beyond *nr", call);
        for (int k = 0; k < 2; k++) {
            uintptr_t c = (uintptr_t)ev[k].cookie;
            CHECK(c >= 1 && c <= 6, "call %d: unknown cookie %p", call, ev[k].cookie);
            CHECK(seen[c - 1]++ == 0, "cookie %zu reported twice", (size_t)c);
            CHECK_EV_COMPLETE(ev, k, 4096);
        }
    }
    nr = 4;
    CHECK_ERR(hipFileBatchIOGetStatus(h, 0, &nr, ev, &zero), hipFileSuccess);
    CHECK(nr == 0, "after all six, %u more events", nr);
    CHECK_DEV(dev, len, 0, 6 * 4096, seed, 0);
    stale = h;
    release_batch(&h);
    nr = 4;
    CHECK_ERR(hipFileBatchIOGetStatus(stale, 0, &nr, ev, &zero), hipFileInvalidValue);
done:
    batch_finish(&h, &reg_ptr, &fh, dev);
    release_driver(&opened);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

#define BCD_SIZE (256 * KiB)

/* ===========================================================================================
 * async: stream-ordered reads and writes on streams the application created
 * ========================================================================================= */

/* The by-reference parameters of one async operation (they live until the stream passed it). */
struct aop {
    size_t size;
    hoff_t foff, boff;
    ssize_t bytes;
};

static hipFileError_t aop_submit(int write, hipFileHandle_t fh, void *buf, struct aop *p, hipStream_t s)
{
    if (write)
        return hipFileWriteAsync(fh, buf, &p->size, &p->foff, &p->boff, &p->bytes, s);
    return hipFileReadAsync(fh, buf, &p->size, &p->foff, &p->boff, &p->bytes, s);
}

static ssize_t aop_result(const struct aop *p) { return *(const volatile ssize_t *)&p->bytes; }

/* Creates a stream the way `kind` says: 0 the runtime API, 1 the driver API. */
static int stream_new(int kind, hipStream_t *s) { return kind ? gpu_stream_create_drv(s) : gpu_stream_create(s); }

static void stream_release(int kind, hipStream_t *s)
{
    if (*s) {
        if (kind)
            gpu_stream_destroy_drv(*s);
        else
            gpu_stream_destroy(*s);
        *s = NULL;
    }
}

#define AS_LEN (256 * KiB + 5)

/* Every combination of the four stream flags x read/write x (zero offsets with size-1, file
 * offset 1 with size-1, buffer offset 1 with size-1, size 0) on a stream of `kind`. */
static void t_async_matrix(int kind)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL;
    hipStream_t s = NULL;
    int registered = 0;
    const uint64_t seed = next_seed();
    static const size_t shapes[][3] = { { 0, 0, AS_LEN - 1 }, { 1, 0, AS_LEN - 1 }, { 0, 1, AS_LEN - 1 }, { 5, 9, 0 } };
    case_begin("async_flag_matrix_%s", kind ? GPU_STREAM_DRV_NAME : GPU_STREAM_RT_NAME);
    OPEN_DRIVER(opened);
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, AS_LEN, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, AS_LEN));
    GPU_OK(stream_new(kind, &s));
    for (unsigned flags = 0; flags < 16; flags++) {
        CHECK_ERR(hipFileStreamRegister(s, flags), hipFileSuccess);
        registered = 1;
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            size_t foff = shapes[k][0], boff = shapes[k][1], n = shapes[k][2];
            const uint64_t wseed = next_seed();
            struct aop p = { n, (hoff_t)foff, (hoff_t)boff, -77 };
            snprintf(t_ctx, sizeof t_ctx, "flags %u, %zu/%zu/%zu: ", flags, foff, boff, n);
            GPU_OK(dev_poison(dev, AS_LEN));
            CHECK_ERR(aop_submit(0, fh, dev, &p, s), hipFileSuccess);
            GPU_OK(gpu_stream_sync(s));
            CHECK(aop_result(&p) == (ssize_t)n, "read: *bytes_p %zd, want %zu", aop_result(&p), n);
            CHECK_DEV(dev, AS_LEN, boff, n, seed, foff);
            /* Write a new pattern to [foff, foff + n), then put the original back. */
            GPU_OK(dev_upload_layout(dev, AS_LEN, boff, n, wseed, foff, SRC_FILL));
            p = (struct aop){ n, (hoff_t)foff, (hoff_t)boff, -77 };
            CHECK_ERR(aop_submit(1, fh, dev, &p, s), hipFileSuccess);
            GPU_OK(gpu_stream_sync(s));
            CHECK(aop_result(&p) == (ssize_t)n, "write: *bytes_p %zd, want %zu", aop_result(&p), n);
            CHECK_FILE(fd, foff, n, wseed);
            CHECK(file_write_pattern(fd, 0, AS_LEN, seed) == 0, "rewrite: %s", strerror(errno));
        }
        CHECK_ERR(hipFileStreamDeregister(s), hipFileSuccess);
        registered = 0;
    }
    t_ctx[0] = '\0';
done:
    t_ctx[0] = '\0';
    if (registered)
        hipFileStreamDeregister(s);
    stream_release(kind, &s);
    release_handle(&fh);
    release_driver(&opened);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

/* Write, read, write, read of the same range queued on one stream without a synchronisation:
 * each read sees the write before it. Then a read past the end of the file returns the bytes
 * up to it, and one at the end 0. */
static void t_async_order_eof(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *a = NULL, *b = NULL, *c = NULL;
    hipStream_t s = NULL;
    const size_t n = 3 * MiB + 11;
    const uint64_t s1 = next_seed(), s2 = next_seed();
    struct aop w1 = { n, 0, 0, -77 }, r1 = { n, 0, 0, -77 }, w2 = { n, 0, 0, -77 }, r2 = { n, 0, 0, -77 };
    struct aop eof = { n, 4096, 0, -77 }, at_end = { 4096, (hoff_t)n, 0, -77 };
    case_begin("async_order_and_eof");
    OPEN_DRIVER(opened);
    OPEN_TMP(path, fd, O_RDWR);
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&a, n));
    GPU_OK(gpu_malloc(&b, n));
    GPU_OK(gpu_malloc(&c, n));
    GPU_OK(dev_upload_layout(a, n, 0, n, s1, 0, 0));
    GPU_OK(dev_upload_layout(c, n, 0, n, s2, 0, 0));
    GPU_OK(dev_poison(b, n));
    GPU_OK(gpu_stream_create(&s));
    CHECK_ERR(aop_submit(1, fh, a, &w1, s), hipFileSuccess);
    CHECK_ERR(aop_submit(0, fh, b, &r1, s), hipFileSuccess);
    CHECK_ERR(aop_submit(1, fh, c, &w2, s), hipFileSuccess);
    CHECK_ERR(aop_submit(0, fh, a, &r2, s), hipFileSuccess);
    GPU_OK(gpu_stream_sync(s));
    CHECK(aop_result(&w1) == (ssize_t)n && aop_result(&r1) == (ssize_t)n && aop_result(&w2) == (ssize_t)n &&
              aop_result(&r2) == (ssize_t)n,
          "results %zd %zd %zd %zd, want %zu each", aop_result(&w1), aop_result(&r1), aop_result(&w2),
          aop_result(&r2), n);
    CHECK_DEV_FILL(b, n, 0, n, s1, 0, 0);
    CHECK_DEV_FILL(a, n, 0, n, s2, 0, 0);
    CHECK_FILE(fd, 0, n, s2);
    GPU_OK(dev_poison(b, n));
    CHECK_ERR(aop_submit(0, fh, b, &eof, s), hipFileSuccess);
    CHECK_ERR(aop_submit(0, fh, b, &at_end, s), hipFileSuccess);
    GPU_OK(gpu_stream_sync(s));
    CHECK(aop_result(&eof) == (ssize_t)(n - 4096), "read past the end: %zd, want %zu", aop_result(&eof), n - 4096);
    CHECK(aop_result(&at_end) == 0, "read at the end: %zd, want 0", aop_result(&at_end));
    CHECK_DEV_EOF(b, n, 0, n - 4096, s2, 4096, eof_slack(4096, n, b, n));
done:
    stream_release(0, &s);
    release_handle(&fh);
    release_driver(&opened);
    release_dev(&a);
    release_dev(&b);
    release_dev(&c);
    release_fd(&fd, path);
    case_end();
}

/* The NULL stream (small and large reads, a write), and host memory on a stream. */
static void t_async_null_stream_and_host(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL;
    uint8_t *host = NULL;
    hipStream_t s = NULL;
    const size_t n = 300 * KiB + 1;
    const uint64_t seed = next_seed(), wseed = next_seed();
    struct aop small = { 100, 5, 0, -77 }, large = { n - 200, 200, 200, -77 };
    struct aop hr = { n - 1, 1, 0, -77 }, w = { n, 0, 0, -77 };
    case_begin("async_null_stream_and_host_memory");
    OPEN_DRIVER(opened);
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, n, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, n));
    GPU_OK(dev_poison(dev, n));
    CHECK_ERR(aop_submit(0, fh, dev, &small, NULL), hipFileSuccess);
    CHECK_ERR(aop_submit(0, fh, dev, &large, NULL), hipFileSuccess);
    GPU_OK(gpu_stream_sync(NULL));
    CHECK(aop_result(&small) == 100 && aop_result(&large) == (ssize_t)(n - 200), "NULL stream results %zd %zd",
          aop_result(&small), aop_result(&large));
    CHECK_DEV_FILL((uint8_t *)dev + 200, n - 200, 0, n - 200, seed, 200, 0);
    host = malloc(n);
    CHECK(host != NULL, "malloc");
    memset(host, POISON, n);
    GPU_OK(gpu_stream_create(&s));
    CHECK_ERR(aop_submit(0, fh, host, &hr, s), hipFileSuccess);
    GPU_OK(gpu_stream_sync(s));
    CHECK(aop_result(&hr) == (ssize_t)(n - 1), "host read: %zd", aop_result(&hr));
    CHECK_HOST(host, n, 0, n - 1, seed, 1);
    pattern_fill(host, n, wseed, 0);
    CHECK_ERR(aop_submit(1, fh, host, &w, s), hipFileSuccess);
    GPU_OK(gpu_stream_sync(s));
    CHECK(aop_result(&w) == (ssize_t)n, "host write: %zd", aop_result(&w));
    CHECK_FILE(fd, 0, n, wseed);
done:
    free(host);
    stream_release(0, &s);
    release_handle(&fh);
    release_driver(&opened);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

/* 8 threads, each with its own stream (half runtime-API, half driver-API streams), queue 100
 * reads of different sizes and offsets before synchronising once; every byte is checked. */
#define AM_OPS 100
#define AM_SLOT (64 * KiB)
#define AM_FILE (8 * MiB)
struct am_arg {
    int t;
    hipFileHandle_t fh;
    uint64_t seed;
};

static void *am_worker(void *argp)
{
    struct am_arg *arg = argp;
    void *dev = NULL;
    hipStream_t s = NULL;
    const int kind = arg->t % 2;
    struct aop *p = calloc(AM_OPS, sizeof *p);
    snprintf(t_ctx, sizeof t_ctx, "thread %d: ", arg->t);
    CHECK(p != NULL, "calloc");
    GPU_OK(gpu_set_device(0));
    GPU_OK(gpu_malloc(&dev, AM_OPS * AM_SLOT));
    GPU_OK(stream_new(kind, &s));
    for (int i = 0; i < AM_OPS; i++) {
        size_t k = (size_t)arg->t * AM_OPS + (size_t)i;
        size_t size = 1 + (k * 7919) % (AM_SLOT - 1);
        p[i] = (struct aop){ size, (hoff_t)((k * 104729) % (AM_FILE - size)), (hoff_t)((size_t)i * AM_SLOT), -77 };
        CHECK_ERR(aop_submit(0, arg->fh, dev, &p[i], s), hipFileSuccess);
    }
    GPU_OK(gpu_stream_sync(s));
    for (int i = 0; i < AM_OPS; i++) {
        CHECK(aop_result(&p[i]) == (ssize_t)p[i].size, "op %d: %zd, want %zu", i, aop_result(&p[i]), p[i].size);
        CHECK_DEV_FILL((uint8_t *)dev + (size_t)i * AM_SLOT, p[i].size, 0, p[i].size, arg->seed, (uint64_t)p[i].foff, 0);
    }
done:
    stream_release(kind, &s);
    release_dev(&dev);
    free(p);
    t_ctx[0] = '\0';
    return NULL;
}

static void t_async_many_streams(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0, started = 0;
    hipFileHandle_t fh = NULL;
    pthread_t th[8];
    struct am_arg args[8];
    const uint64_t seed = next_seed();
    case_begin("async_8_streams_x_100_ops_8_threads");
    OPEN_DRIVER(opened);
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, AM_FILE, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    for (; started < 8; started++) {
        args[started] = (struct am_arg){ started, fh, seed };
        CHECK(pthread_create(&th[started], NULL, am_worker, &args[started]) == 0, "pthread_create");
    }
done:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    release_handle(&fh);
    release_driver(&opened);
    release_fd(&fd, path);
    case_end();
}

/* A stream held on a word of mapped pinned memory before the read; the parameters change
 * behind the pointers, then the word releases it: a smaller size, moved file and buffer
 * offsets are honoured; a larger size gives -hipFileInvalidValue. Skipped where the runtime
 * cannot make a stream wait on a memory value. */
static void t_async_paused(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *word = NULL;
    hipStream_t s = NULL;
    void *ev = NULL;
    const size_t n = 256 * KiB;
    const uint64_t seed = next_seed();
    struct aop a = { n, 0, 0, -77 }, b = { 1000, 0, 0, -77 };
    int rc;
    case_begin("async_paused_stream_parameters");
    OPEN_DRIVER(opened);
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, n, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, n));
    GPU_OK(dev_poison(dev, n));
    GPU_OK(gpu_host_alloc_mapped(&word, 64));
    *(volatile uint32_t *)word = 0;
    GPU_OK(gpu_stream_create(&s));
    GPU_OK(gpu_event_create(&ev));
    /* A first operation before the pause: the library sets up the stream's queue (pinned
     * buffers) while nothing holds the stream. */
    CHECK_ERR(aop_submit(0, fh, dev, &b, s), hipFileSuccess);
    GPU_OK(gpu_stream_sync(s));
    CHECK(aop_result(&b) == 1000, "warm-up read: %zd, want 1000", aop_result(&b));
    b = (struct aop){ 1000, 0, 0, -77 };
    GPU_OK(dev_poison(dev, n));
    rc = gpu_stream_wait_value32(s, word, 1);
    if (rc != 0) {
        case_skip("the runtime cannot make a stream wait on a memory value (%d: %s)", rc, gpu_err_text(rc));
        goto done;
    }
    CHECK_ERR(aop_submit(0, fh, dev, &a, s), hipFileSuccess);
    CHECK_ERR(aop_submit(0, fh, dev, &b, s), hipFileSuccess);
    GPU_OK(gpu_event_record(ev, s));
    sleep_ms(50);
    CHECK(aop_result(&a) == 0 && aop_result(&b) == 0, "before the release: %zd %zd, want 0 0", aop_result(&a),
          aop_result(&b));
    a.size = 5000;
    a.foff = 12345;
    a.boff = 777;
    b.size = 2000;
    __atomic_store_n((uint32_t *)word, 1u, __ATOMIC_RELEASE);
    GPU_OK(gpu_event_sync(ev));
    CHECK(aop_result(&a) == 5000, "smaller size, moved offsets: %zd, want 5000", aop_result(&a));
    CHECK(aop_result(&b) == -hipFileInvalidValue, "larger size: %zd, want %d", aop_result(&b), -hipFileInvalidValue);
    CHECK_DEV(dev, n, 777, 5000, seed, 12345);
done:
    if (word)
        __atomic_store_n((uint32_t *)word, 1u, __ATOMIC_RELEASE);
    if (s)
        gpu_stream_sync(s);
    if (ev)
        gpu_event_destroy(ev);
    stream_release(0, &s);
    if (word)
        gpu_host_free(word);
    release_handle(&fh);
    release_driver(&opened);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

/* Deregistering a stream and closing the driver with operations queued wait for them. */
static void t_async_dereg_close(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0, registered = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL;
    hipStream_t s = NULL;
    const size_t n = 4 * MiB;
    const uint64_t seed = next_seed();
    struct aop p[4];
    case_begin("async_deregister_and_close_wait");
    OPEN_DRIVER(opened);
    OPEN_TMP(path, fd, O_RDWR);
    CHECK(file_write_pattern(fd, 0, n, seed) == 0, "write: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, n));
    GPU_OK(gpu_stream_create(&s));
    CHECK_ERR(hipFileStreamRegister(s, 0), hipFileSuccess);
    registered = 1;
    for (int i = 0; i < 4; i++) {
        p[i] = (struct aop){ n / 4, (hoff_t)((size_t)i * n / 4), (hoff_t)((size_t)i * n / 4), -77 };
        CHECK_ERR(aop_submit(0, fh, dev, &p[i], s), hipFileSuccess);
    }
    CHECK_ERR(hipFileStreamDeregister(s), hipFileSuccess);
    registered = 0;
    for (int i = 0; i < 4; i++)
        CHECK(aop_result(&p[i]) == (ssize_t)(n / 4), "after deregistration: op %d %zd", i, aop_result(&p[i]));
    for (int i = 0; i < 4; i++) {
        p[i] = (struct aop){ n / 4, (hoff_t)((size_t)i * n / 4), (hoff_t)((size_t)i * n / 4), -77 };
        CHECK_ERR(aop_submit(0, fh, dev, &p[i], s), hipFileSuccess);
    }
    release_handle(&fh);
    release_driver(&opened);
    if (hipFileUseCount() == 0) {
        for (int i = 0; i < 4; i++)
            CHECK(aop_result(&p[i]) == (ssize_t)(n / 4), "after the close: op %d %zd", i, aop_result(&p[i]));
    } else {
        printf("# async_deregister_and_close_wait: the driver stays open elsewhere (use count %lld): the close "
               "did not end the session\n",
               (long long)hipFileUseCount());
    }
    GPU_OK(gpu_stream_sync(s));
    CHECK_DEV_FILL(dev, n, 0, n, seed, 0, 0);
done:
    if (registered)
        hipFileStreamDeregister(s);
    stream_release(0, &s);
    release_handle(&fh);
    release_driver(&opened);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

static void t_batch_cancel_destroy(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    hipFileBatchHandle_t h = NULL, stale = NULL;
    hipFileIOParams_t ops[8];
    hipFileIOEvents_t ev[BATCH_MAX_EV];
    int idx[BATCH_MAX_EV];
    unsigned nr = 4;
    int canceled = 0;
    struct timespec zero = { 0, 0 };
    const size_t len = 12 * BCD_SIZE;
    const uint64_t seed = next_seed();
    case_begin("batch_cancel_destroy");
    BATCH_FIXTURE(len, seed, 8);

    /* Eight reads, canceled at once: each ends complete or canceled. */
    for (int i = 0; i < 8; i++)
        ops[i] = batch_op(fh, hipFileBatchRead, dev, (int64_t)i * BCD_SIZE, (int64_t)i * BCD_SIZE, BCD_SIZE,
                          1 + (uintptr_t)i);
    CHECK_ERR(hipFileBatchIOSubmit(h, 8, ops, 0), hipFileSuccess);
    CHECK_ERR(hipFileBatchIOCancel(h), hipFileSuccess);
    CHECK_REAP(h, ops, 8, ev, idx);
    for (int k = 0; k < 8; k++) {
        uint8_t *region = (uint8_t *)dev + (size_t)idx[k] * BCD_SIZE;
        if (ev[k].status == hipFileCanceled) {
            canceled++;
            CHECK(ev[k].ret == 0, "canceled cookie %p: ret %zd, want 0", ev[k].cookie, (ssize_t)ev[k].ret);
            CHECK_DEV(region, BCD_SIZE, 0, 0, 0, 0); /* never started: untouched */
        } else {
            CHECK_EV_COMPLETE(ev, k, BCD_SIZE);
            CHECK_DEV(region, BCD_SIZE, 0, BCD_SIZE, seed, (uint64_t)idx[k] * BCD_SIZE);
        }
    }
    printf("# batch_cancel_destroy: %d of 8 canceled\n", canceled);
    CHECK_ERR(hipFileBatchIOCancel(NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOCancel(h), hipFileSuccess); /* nothing outstanding */

    /* Four more reads, destroyed at once: Destroy waits for what runs and must not hang. */
    for (int i = 0; i < 4; i++)
        ops[i] = batch_op(fh, hipFileBatchRead, dev, (int64_t)(8 + i) * BCD_SIZE, (int64_t)(8 + i) * BCD_SIZE,
                          BCD_SIZE, 20 + (uintptr_t)i);
    CHECK_ERR(hipFileBatchIOSubmit(h, 4, ops, 0), hipFileSuccess);
    stale = h;
    release_batch(&h);
    CHECK_ERR(hipFileBatchIOGetStatus(stale, 0, &nr, ev, &zero), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOGetStatus(stale, 0, &nr, ev, NULL), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOCancel(stale), hipFileInvalidValue);
    CHECK_ERR(hipFileBatchIOSubmit(stale, 1, ops, 0), hipFileInvalidValue);
    hipFileBatchIODestroy(stale); /* again: ignored */
    /* Each of the four regions is untouched or holds the whole read: none is still moving. */
    for (int i = 0; i < 4; i++) {
        char why1[512], why2[512];
        uint8_t *region = (uint8_t *)dev + (size_t)(8 + i) * BCD_SIZE;
        int full = dev_verify(region, BCD_SIZE, 0, BCD_SIZE, seed, (uint64_t)(8 + i) * BCD_SIZE, POISON, why1,
                              sizeof why1);
        int none = dev_verify(region, BCD_SIZE, 0, 0, 0, 0, POISON, why2, sizeof why2);
        CHECK(full == 0 || none == 0, "region %d after Destroy is neither complete (%s) nor untouched (%s)", 8 + i,
              why1, why2);
    }
done:
    batch_finish(&h, &reg_ptr, &fh, dev);
    release_driver(&opened);
    release_dev(&dev);
    release_fd(&fd, path);
    case_end();
}

static void t_batch_failures(void)
{
    char path[PATH_MAX] = "";
    int fd = -1, wfd = -1, opened = 0;
    hipFileHandle_t fh = NULL;
    void *dev = NULL, *reg_ptr = NULL;
    hipFileBatchHandle_t h = NULL;
    hipFileIOParams_t ops[3];
    hipFileIOEvents_t ev[BATCH_MAX_EV];
    int idx[BATCH_MAX_EV];
    const size_t len = 64 * KiB;
    const uint64_t seed = next_seed();
    case_begin("batch_failures");
    OPEN_DRIVER(opened);
    CHECK(tmp_new(path, sizeof path) == 0, "mkstemp: %s", strerror(errno));
    wfd = open(path, O_RDWR);
    CHECK(wfd >= 0, "open: %s", strerror(errno));
    CHECK(file_write_pattern(wfd, 0, len, seed) == 0, "write: %s", strerror(errno));
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open: %s", strerror(errno));
    REG_FD(fd, fh);
    GPU_OK(gpu_malloc(&dev, len));
    GPU_OK(dev_upload_layout(dev, len, 0, len, 1, 0, SRC_FILL));
    CHECK_ERR(hipFileBufRegister(dev, len, 0), hipFileSuccess);
    reg_ptr = dev;
    CHECK_ERR(hipFileBatchIOSetUp(&h, 4), hipFileSuccess);
    /* Two writes to the read-only descriptor fail with EBADF; a read beside them succeeds. */
    ops[0] = batch_op(fh, hipFileBatchWrite, dev, 0, 0, 4096, 1);
    ops[1] = batch_op(fh, hipFileBatchWrite, dev, 1, 3, 100, 2);
    ops[2] = batch_op(fh, hipFileBatchRead, dev, 8192, 32 * KiB, 4096, 3);
    CHECK_ERR(hipFileBatchIOSubmit(h, 3, ops, 0), hipFileSuccess);
    CHECK_REAP(h, ops, 3, ev, idx);
    for (int k = 0; k < 3; k++) {
        if (idx[k] == 2) {
            CHECK_EV_COMPLETE(ev, k, 4096);
            continue;
        }
        CHECK(ev[k].status == hipFileFailed && (ssize_t)ev[k].ret == -EBADF,
              "write of cookie %p to an O_RDONLY file: status %d, ret %zd; want hipFileFailed (%d) with -EBADF (%d)",
              ev[k].cookie, (int)ev[k].status, (ssize_t)ev[k].ret, (int)hipFileFailed, -EBADF);
    }
    CHECK_FILE(wfd, 0, len, seed);
    CHECK_DEV_FILL(dev, 32 * KiB, 0, 32 * KiB, 1, 0, SRC_FILL);
    CHECK_DEV_FILL((uint8_t *)dev + 32 * KiB, 4096, 0, 4096, seed, 8192, SRC_FILL);
    CHECK_DEV_FILL((uint8_t *)dev + 36 * KiB, len - 36 * KiB, 0, len - 36 * KiB, 1, 36 * KiB, SRC_FILL);
done:
    batch_finish(&h, &reg_ptr, &fh, dev);
    release_driver(&opened);
    release_dev(&dev);
    if (wfd >= 0)
        close(wfd);
    release_fd(&fd, path);
    case_end();
}

/* ===========================================================================================
 * Group "closed_driver" (always last): every reference is dropped, then the driver reopens
 * ========================================================================================= */

struct closed_fixture {
    char path[PATH_MAX];
    int fd;
    hipFileHandle_t fh;
    void *dev;
    uint64_t seed;
};

/* Drops every reference; I/O is then -1/EINVAL and buffer deregistration 5006. */
static int closed_phase(struct closed_fixture *x)
{
    uint8_t host[4096];
    int64_t count;
    case_begin("closed_driver");
    OPEN_TMP(x->path, x->fd, O_RDWR);
    CHECK(file_write_pattern(x->fd, 0, 65536, x->seed) == 0, "write: %s", strerror(errno));
    REG_FD(x->fd, x->fh);
    GPU_OK(gpu_malloc(&x->dev, 65536));
    GPU_OK(dev_poison(x->dev, 65536));
    CHECK_ERR(hipFileBufRegister(x->dev, 65536, 0), hipFileSuccess);
    count = hipFileUseCount();
    /* One explicit open at the start; implicit opens never add a reference. */
    EXPECT(count == 1, "use count before closing is %lld, want 1", (long long)count);
    for (int64_t i = 0; i < count && i < 1000; i++)
        CHECK_ERR(hipFileDriverClose(), hipFileSuccess);
    CHECK(hipFileUseCount() == 0, "use count %lld after closing", (long long)hipFileUseCount());
    CHECK_ERR(hipFileDriverClose(), hipFileDriverNotInitialized);
    CHECK_ERRNO(hipFileRead(x->fh, x->dev, 4096, 0, 0), EINVAL);
    CHECK_ERRNO(hipFileWrite(x->fh, x->dev, 4096, 0, 0), EINVAL);
    CHECK_ERRNO(hipFileRead(x->fh, x->dev, 100, 1, 7), EINVAL);
    CHECK_ERRNO(hipFileRead((hipFileHandle_t)0x1234, x->dev, 4096, 0, 0), EINVAL);
    CHECK_ERRNO(hipFileRead(x->fh, host, 4096, 0, 0), EINVAL);
    CHECK_ERR(hipFileBufDeregister(x->dev), hipFileDriverClosing);
    CHECK_ERR(hipFileBufDeregister(NULL), hipFileDriverClosing);
    hipFileHandleDeregister(x->fh); /* ignored while closed */
    CHECK(hipFileUseCount() == 0, "use count %lld, want 0 (reads and deregistrations must not open the driver)",
          (long long)hipFileUseCount());
    CHECK(fcntl(x->fd, F_GETFD) != -1, "closing the driver closed the application's descriptor");
    CHECK_DEV(x->dev, 65536, 0, 0, 0, 0);
done:
    return case_end();
}

/* Reopening starts from scratch: the old handle and buffer registration are gone. */
static void reopen_phase(struct closed_fixture *x)
{
    hipFileHandle_t fh2 = NULL;
    int open = 0;
    case_begin("reopen_after_close");
    CHECK_ERR(hipFileDriverOpen(), hipFileSuccess);
    open = 1;
    CHECK(hipFileUseCount() == 1, "use count %lld, want 1", (long long)hipFileUseCount());
    CHECK_SSZ(hipFileRead(x->fh, x->dev, 4096, 0, 0), -hipFileHandleNotRegistered);
    CHECK_ERR(hipFileBufDeregister(x->dev), hipFileMemoryNotRegistered);
    REG_FD(x->fd, fh2);
    GPU_OK(dev_poison(x->dev, 65536));
    CHECK_SSZ(hipFileRead(fh2, x->dev, 65536 - 11, 11, 0), 65536 - 11);
    CHECK_DEV(x->dev, 65536, 0, 65536 - 11, x->seed, 11);
    hipFileHandleDeregister(fh2);
    fh2 = NULL;
    open = 0;
    CHECK_ERR(hipFileDriverClose(), hipFileSuccess);
    CHECK(hipFileUseCount() == 0, "use count %lld, want 0", (long long)hipFileUseCount());
done:
    release_handle(&fh2);
    if (open) {
        hipFileError_t e = hipFileDriverClose();
        (void)e;
    }
    case_end();
}

static void t_closed_driver(void)
{
    struct closed_fixture x;
    memset(&x, 0, sizeof x);
    x.fd = -1;
    x.seed = next_seed();
    if (closed_phase(&x))
        reopen_phase(&x);
    release_dev(&x.dev);
    release_fd(&x.fd, x.path);
}

/* ===========================================================================================
 * main
 * ========================================================================================= */

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [DIR] [--large] [--only=GROUP] [--skip=GROUP] [--case-timeout=SECONDS]\n",
            argv0);
}

int main(int argc, char **argv)
{
    struct stat st;
    int total_pass = 0, total_fail = 0, total_skip = 0;
    static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM };

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--large") == 0)
            g_large = 1;
        else if (strncmp(argv[i], "--only=", 7) == 0)
            g_only = argv[i] + 7;
        else if (strncmp(argv[i], "--skip=", 7) == 0)
            g_skip = argv[i] + 7;
        else if (strncmp(argv[i], "--case-timeout=", 15) == 0)
            g_case_timeout = (unsigned)strtoul(argv[i] + 15, NULL, 10);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(argv[0]);
            return 0;
        } else if (argv[i][0] == '-') {
            usage(argv[0]);
            return 2;
        } else
            g_dir = argv[i];
    }
    if (stat(g_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "suite: %s is not an existing directory\n", g_dir);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], on_fatal_signal);

    printf("# hipfile C suite: GPU shim %s, header API %d.%d.%d, directory %s, large %s\n", GPU_SHIM_NAME,
           HIPFILE_VERSION_MAJOR, HIPFILE_VERSION_MINOR, HIPFILE_VERSION_PATCH, g_dir, g_large ? "1 GiB" : "256 MiB");

    group_begin("setup");
    case_begin("gpu_init");
    GPU_OK(gpu_set_device(0));
    GPU_OK(gpu_sync());
done:
    if (!case_end()) {
        printf("# no usable GPU: stopping\n");
        goto summary;
    }

    group_begin("basics");
    t_version();
    t_error_strings();
    t_use_count();
    t_driver_open();

    if (group_selected("handles")) {
        group_begin("handles");
        t_handle_null_args();
        t_handle_type();
        t_handle_bad_fd();
        t_handle_duplicate();
        t_handle_append();
        t_handle_stale();
        t_handle_forged();
    }
    if (group_selected("buffers")) {
        group_begin("buffers");
        t_buf_range();
        t_buf_interior();
        t_buf_null();
        t_buf_duplicate();
        t_buf_unknown();
        t_buf_managed();
        t_buf_pinned_host();
        t_buf_pageable_host();
    }
    if (group_selected("sync_io")) {
        group_begin("sync_io");
        t_sync_rw_matrix();
        t_unreg_offset_vector();
        t_unreg_interior_pointer();
        eof_case("eof_middle_reg", 1, 0);
        eof_case("eof_middle_unreg", 0, 0);
        eof_case("eof_middle_unreg_boff7", 0, 7);
        t_eof_multichunk(0);
        t_eof_multichunk(1);
        t_read_at_eof();
        t_zero_size();
        t_bounds();
        t_negative_offsets();
    }
    if (group_selected("host")) {
        group_begin("host");
        t_host();
    }
    if (group_selected("open_flags")) {
        group_begin("open_flags");
        t_wronly();
        t_rdonly();
        t_odirect();
    }
    if (group_selected("large")) {
        group_begin("large");
        t_large();
    }
    if (group_selected("threads")) {
        group_begin("threads");
        t_threads_read_regions();
        t_threads_write_regions();
        t_threads_same_region();
        t_untouched_thread();
    }
    if (group_selected("batch")) {
        group_begin("batch");
        t_batch_setup();
        t_batch_submit_rules();
        t_batch_rw();
        t_batch_status_rules();
        t_batch_cancel_destroy();
        t_batch_failures();
    }
    if (group_selected("async")) {
        group_begin("async");
        t_async_matrix(0);
        t_async_matrix(1);
        t_async_order_eof();
        t_async_null_stream_and_host();
        t_async_many_streams();
        t_async_paused();
        t_async_dereg_close();
    }
    group_begin("closed_driver");
    t_closed_driver();

summary:
    tmp_remove_all();
    printf("\n==================== summary ====================\n");
    printf("%-16s %8s %8s %8s\n", "group", "passed", "failed", "skipped");
    for (int i = 0; i < g_ngroups; i++) {
        printf("%-16s %8d %8d %8d\n", g_groups[i].name, g_groups[i].passed, g_groups[i].failed, g_groups[i].skipped);
        total_pass += g_groups[i].passed;
        total_fail += g_groups[i].failed;
        total_skip += g_groups[i].skipped;
    }
    printf("%-16s %8d %8d %8d\n", "total", total_pass, total_fail, total_skip);
    printf("passed %d / failed %d / skipped %d\n", total_pass, total_fail, total_skip);
    return total_fail == 0 ? 0 : 1;
}
