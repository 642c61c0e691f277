/*
 * batch_read FILE [BLOCK_BYTES] - read a file into GPU memory with hipFile's batch API.
 *
 * FILE is cut into blocks of BLOCK_BYTES (default 1 MiB). Each round submits up to DEPTH
 * blocks with one hipFileBatchIOSubmit(), every block into its own slice of one device
 * buffer, and waits for all of them with hipFileBatchIOGetStatus(); the round's bytes are
 * then copied back to the host (hipMemcpy) and folded into a 64-bit FNV-1a checksum, so the
 * result can be compared with the file's own checksum.
 *
 * Prints one line on success, exit status 0:
 *     FILE: BYTES bytes in OPS batch reads (ROUNDS rounds), fnv1a64 0x0123456789abcdef
 * Exit status 1 on any error (one line on stderr).
 *
 * Build (the HIP runtime library provides the HIP functions declared below):
 *     cc -std=c11 -Wall -Wextra -Werror -I include examples/batch_read.c -o batch_read \
 *        -lhipfile -lamdhip64
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <hipfile.h>

/*
 * The HIP runtime functions this program uses, with HIP's signatures (no ROCm headers
 * needed; when hipfile.h included <hip/hip_runtime_api.h>, they are declared there).
 */
#if !defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)
typedef enum hipMemcpyKind {
    hipMemcpyDeviceToHost = 2
} hipMemcpyKind;
extern hipError_t hipMalloc(void **ptr, size_t size);
extern hipError_t hipFree(void *ptr);
extern hipError_t hipMemcpy(void *dst, const void *src, size_t size, hipMemcpyKind kind);
extern const char *hipGetErrorString(hipError_t error);
#endif

/* Operations submitted together (at most hipFileParamPropertiesIOBatchsize, 128 by default). */
#define DEPTH 16u

static const char *const prog = "batch_read";

/* Message for a failed batch entry: its ret is a negative code stored in a size_t. */
static const char *entry_error_string(size_t ret)
{
    ssize_t code = (ssize_t)ret;

    if (IS_HIPFILE_ERR(code)) {
        return HIPFILE_ERRSTR(code);
    }
    if (code < 0 && code > -4096) {
        return strerror((int)-code);
    }
    return hipGetErrorString((hipError_t)-code);
}

/* Message for a failed hipFileError_t result. */
static const char *op_error_string(hipFileError_t status)
{
    if (IS_HIP_DRV_ERR(status)) {
        return hipGetErrorString(HIP_DRV_ERR(status));
    }
    return hipFileGetOpErrorString(status.err);
}

static uint64_t fnv1a64(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

int main(int argc, char **argv)
{
    const char *path;
    size_t block = (size_t)1 << 20;
    int fd = -1;
    struct stat st;
    bool driver_open = false;
    hipFileHandle_t handle = NULL;
    hipFileBatchHandle_t batch = NULL;
    hipFileDescr_t descr;
    hipFileError_t status;
    hipError_t hip_status;
    void *device = NULL;
    unsigned char *host = NULL;
    uint64_t hash = UINT64_C(0xcbf29ce484222325);
    uint64_t done = 0;
    unsigned long ops = 0;
    unsigned long rounds = 0;
    int result = 1;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s FILE [BLOCK_BYTES]\n", prog);
        return 1;
    }
    path = argv[1];
    if (argc == 3) {
        char *end = NULL;
        unsigned long long v;

        errno = 0;
        v = strtoull(argv[2], &end, 10);
        if (errno != 0 || end == argv[2] || *end != '\0' || v == 0 || v > ((size_t)1 << 30)) {
            fprintf(stderr, "%s: BLOCK_BYTES must be a number from 1 to 1073741824\n", prog);
            return 1;
        }
        block = (size_t)v;
    }

    fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "%s: %s is not a regular file\n", prog, path);
        goto out;
    }

    status = hipFileDriverOpen();
    if (status.err != hipFileSuccess) {
        fprintf(stderr, "%s: cannot open the hipFile driver: %s\n", prog, op_error_string(status));
        goto out;
    }
    driver_open = true;
    memset(&descr, 0, sizeof descr);
    descr.type = hipFileHandleTypeOpaqueFD;
    descr.handle.fd = fd;
    status = hipFileHandleRegister(&handle, &descr);
    if (status.err != hipFileSuccess) {
        fprintf(stderr, "%s: cannot register %s: %s\n", prog, path, op_error_string(status));
        handle = NULL;
        goto out;
    }
    status = hipFileBatchIOSetUp(&batch, DEPTH);
    if (status.err != hipFileSuccess) {
        fprintf(stderr, "%s: hipFileBatchIOSetUp: %s\n", prog, op_error_string(status));
        batch = NULL;
        goto out;
    }
    hip_status = hipMalloc(&device, block * DEPTH);
    if (hip_status != hipSuccess) {
        fprintf(stderr, "%s: cannot allocate %zu bytes of GPU memory: %s\n", prog, block * DEPTH,
                hipGetErrorString(hip_status));
        device = NULL;
        goto out;
    }
    host = malloc(block * DEPTH);
    if (host == NULL) {
        fprintf(stderr, "%s: out of host memory\n", prog);
        goto out;
    }

    while (done < (uint64_t)st.st_size) {
        hipFileIOParams_t params[DEPTH];
        hipFileIOEvents_t events[DEPTH];
        size_t lengths[DEPTH];
        uint64_t round_bytes = 0;
        unsigned n = 0;
        unsigned reaped = 0;

        memset(params, 0, sizeof params);
        while (n < DEPTH && done + round_bytes < (uint64_t)st.st_size) {
            uint64_t left = (uint64_t)st.st_size - done - round_bytes;

            lengths[n] = left < block ? (size_t)left : block;
            params[n].mode = hipFileBatch;
            params[n].fh = handle;
            params[n].opcode = hipFileBatchRead;
            params[n].cookie = &lengths[n];
            params[n].u.batch.devPtr_base = device;
            params[n].u.batch.devPtr_offset = (int64_t)(n * block);
            params[n].u.batch.file_offset = (int64_t)(done + round_bytes);
            params[n].u.batch.size = lengths[n];
            round_bytes += lengths[n];
            n++;
        }
        status = hipFileBatchIOSubmit(batch, n, params, 0);
        if (status.err != hipFileSuccess) {
            fprintf(stderr, "%s: hipFileBatchIOSubmit: %s\n", prog, op_error_string(status));
            goto out;
        }
        /* Wait until every operation of the round has finished (no timeout). */
        while (reaped < n) {
            unsigned got = n - reaped;

            status = hipFileBatchIOGetStatus(batch, got, &got, events, NULL);
            if (status.err != hipFileSuccess) {
                fprintf(stderr, "%s: hipFileBatchIOGetStatus: %s\n", prog, op_error_string(status));
                goto out;
            }
            for (unsigned i = 0; i < got; i++) {
                size_t want = *(const size_t *)events[i].cookie;

                if (events[i].status != hipFileComplete) {
                    fprintf(stderr, "%s: a batch read of %s failed: %s\n", prog, path,
                            entry_error_string(events[i].ret));
                    goto out;
                }
                if (events[i].ret != want) {
                    fprintf(stderr, "%s: a batch read of %s returned %zu of %zu bytes\n", prog, path,
                            events[i].ret, want);
                    goto out;
                }
            }
            reaped += got;
        }
        hip_status = hipMemcpy(host, device, (size_t)round_bytes, hipMemcpyDeviceToHost);
        if (hip_status != hipSuccess) {
            fprintf(stderr, "%s: hipMemcpy: %s\n", prog, hipGetErrorString(hip_status));
            goto out;
        }
        hash = fnv1a64(hash, host, (size_t)round_bytes);
        done += round_bytes;
        ops += n;
        rounds++;
    }
    printf("%s: %" PRIu64 " bytes in %lu batch reads (%lu rounds), fnv1a64 0x%016" PRIx64 "\n", path, done,
           ops, rounds, hash);
    result = 0;

out:
    free(host);
    if (device != NULL) {
        hipFree(device);
    }
    if (batch != NULL) {
        hipFileBatchIODestroy(batch);
    }
    if (handle != NULL) {
        hipFileHandleDeregister(handle);
    }
    if (driver_open) {
        hipFileDriverClose();
    }
    if (fd >= 0) {
        close(fd);
    }
    return result;
}
