/*
 * async_read FILE [BLOCK_BYTES] - read a file into GPU memory with hipFile's stream-ordered
 * (async) API, on two streams at once.
 *
 * FILE is cut into blocks of BLOCK_BYTES (default 1 MiB); block k goes to stream k % 2, into
 * its own slice of one device buffer. Every read is queued with hipFileReadAsync() before
 * any of them is waited for, so the two streams' reads overlap; each stream then records an
 * event, and the program waits on both events (hipEventSynchronize). The bytes are copied
 * back to the host (hipMemcpy) and folded into a 64-bit FNV-1a checksum, so the result can be
 * compared with the file's own checksum.
 *
 * Prints one line on success, exit status 0:
 *     FILE: BYTES bytes in OPS async reads on 2 streams, fnv1a64 0x0123456789abcdef
 * Exit status 1 on any error (one line on stderr).
 *
 * Build (the HIP runtime library provides the HIP functions declared below):
 *     cc -std=c11 -Wall -Wextra -Werror -I include examples/async_read.c -o async_read \
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
typedef struct ihipEvent_t *hipEvent_t;
extern hipError_t hipMalloc(void **ptr, size_t size);
extern hipError_t hipFree(void *ptr);
extern hipError_t hipMemcpy(void *dst, const void *src, size_t size, hipMemcpyKind kind);
extern hipError_t hipStreamCreate(hipStream_t *stream);
extern hipError_t hipStreamDestroy(hipStream_t stream);
extern hipError_t hipEventCreate(hipEvent_t *event);
extern hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
extern hipError_t hipEventSynchronize(hipEvent_t event);
extern hipError_t hipEventDestroy(hipEvent_t event);
extern const char *hipGetErrorString(hipError_t error);
#endif

#define STREAMS 2

static const char *const prog = "async_read";

/* Message for a failed hipFileError_t result. */
static const char *op_error_string(hipFileError_t status)
{
    if (IS_HIP_DRV_ERR(status)) {
        return hipGetErrorString(HIP_DRV_ERR(status));
    }
    return hipFileGetOpErrorString(status.err);
}

/* Message for a negative *bytes_read_p. */
static const char *result_string(ssize_t code)
{
    if (code == -1) {
        return "operating-system error";
    }
    if (IS_HIPFILE_ERR(code)) {
        return HIPFILE_ERRSTR(code);
    }
    return hipGetErrorString((hipError_t)-code);
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
    hipFileDescr_t descr;
    hipFileError_t status;
    hipError_t hip_status;
    hipStream_t streams[STREAMS] = {NULL, NULL};
    bool registered[STREAMS] = {false, false};
    hipEvent_t events[STREAMS] = {NULL, NULL};
    void *device = NULL;
    unsigned char *host = NULL;
    size_t *sizes = NULL;
    hoff_t *file_offsets = NULL;
    hoff_t *buffer_offsets = NULL;
    ssize_t *results = NULL;
    size_t ops = 0;
    size_t length;
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
    if (st.st_size == 0 || (uint64_t)st.st_size > ((uint64_t)1 << 30)) {
        fprintf(stderr, "%s: %s must hold 1 byte to 1 GiB\n", prog, path);
        goto out;
    }
    length = (size_t)st.st_size;
    ops = (length + block - 1) / block;

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
    for (int s = 0; s < STREAMS; s++) {
        hip_status = hipStreamCreate(&streams[s]);
        if (hip_status == hipSuccess) {
            hip_status = hipEventCreate(&events[s]);
        }
        if (hip_status != hipSuccess) {
            fprintf(stderr, "%s: cannot create a stream: %s\n", prog, hipGetErrorString(hip_status));
            goto out;
        }
        /* Registered streams keep their pinned buffers between operations. */
        status = hipFileStreamRegister(streams[s], 0);
        if (status.err != hipFileSuccess) {
            fprintf(stderr, "%s: hipFileStreamRegister: %s\n", prog, op_error_string(status));
            goto out;
        }
        registered[s] = true;
    }
    hip_status = hipMalloc(&device, length);
    if (hip_status != hipSuccess) {
        fprintf(stderr, "%s: cannot allocate %zu bytes of GPU memory: %s\n", prog, length,
                hipGetErrorString(hip_status));
        device = NULL;
        goto out;
    }
    /* The values behind the pointers must live until the streams have passed the reads. */
    host = malloc(length);
    sizes = calloc(ops, sizeof *sizes);
    file_offsets = calloc(ops, sizeof *file_offsets);
    buffer_offsets = calloc(ops, sizeof *buffer_offsets);
    results = calloc(ops, sizeof *results);
    if (host == NULL || sizes == NULL || file_offsets == NULL || buffer_offsets == NULL ||
        results == NULL) {
        fprintf(stderr, "%s: out of host memory\n", prog);
        goto out;
    }

    for (size_t k = 0; k < ops; k++) {
        size_t off = k * block;

        sizes[k] = length - off < block ? length - off : block;
        file_offsets[k] = (hoff_t)off;
        buffer_offsets[k] = (hoff_t)off;
        status = hipFileReadAsync(handle, device, &sizes[k], &file_offsets[k], &buffer_offsets[k],
                                  &results[k], streams[k % STREAMS]);
        if (status.err != hipFileSuccess) {
            fprintf(stderr, "%s: hipFileReadAsync: %s\n", prog, op_error_string(status));
            goto out;
        }
    }
    /* Wait for both streams through an event each. */
    for (int s = 0; s < STREAMS; s++) {
        hip_status = hipEventRecord(events[s], streams[s]);
        if (hip_status == hipSuccess) {
            hip_status = hipEventSynchronize(events[s]);
        }
        if (hip_status != hipSuccess) {
            fprintf(stderr, "%s: waiting for a stream: %s\n", prog, hipGetErrorString(hip_status));
            goto out;
        }
    }
    for (size_t k = 0; k < ops; k++) {
        if (results[k] < 0) {
            fprintf(stderr, "%s: read %zu failed: %s\n", prog, k, result_string(results[k]));
            goto out;
        }
        if ((size_t)results[k] != sizes[k]) {
            fprintf(stderr, "%s: read %zu: %zd of %zu bytes\n", prog, k, results[k], sizes[k]);
            goto out;
        }
    }
    hip_status = hipMemcpy(host, device, length, hipMemcpyDeviceToHost);
    if (hip_status != hipSuccess) {
        fprintf(stderr, "%s: hipMemcpy: %s\n", prog, hipGetErrorString(hip_status));
        goto out;
    }
    printf("%s: %zu bytes in %zu async reads on %d streams, fnv1a64 0x%016" PRIx64 "\n", path,
           length, ops, STREAMS, fnv1a64(UINT64_C(0xcbf29ce484222325), host, length));
    result = 0;

out:
    free(results);
    free(buffer_offsets);
    free(file_offsets);
    free(sizes);
    free(host);
    if (device != NULL) {
        hipFree(device);
    }
    for (int s = 0; s < STREAMS; s++) {
        if (registered[s]) {
            hipFileStreamDeregister(streams[s]);
        }
        if (events[s] != NULL) {
            hipEventDestroy(events[s]);
        }
        if (streams[s] != NULL) {
            hipStreamDestroy(streams[s]);
        }
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
