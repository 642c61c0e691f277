/*
 * copy_file SOURCE DEST - copy a file through GPU memory with hipFile.
 *
 * The equivalent of upstream's `aiscp` example: SOURCE is read into a device buffer with
 * hipFileRead() and written back out to DEST with hipFileWrite(), one buffer at a time.
 * Both files are opened without O_DIRECT, so the program works on any file system: the
 * library picks the GPU-direct path where it can and its compat path elsewhere.
 *
 * Exit status 0 on success (nothing is printed), 1 on any error (one line on stderr).
 * Errors are reported as hipFile examples do: IS_HIPFILE_ERR(ret) ? HIPFILE_ERRSTR(ret) :
 * strerror(errno), plus the GPU runtime's own message for a negated hipError_t.
 *
 * Build (the HIP runtime library provides the three HIP functions declared below):
 *     cc -std=c11 -Wall -Wextra -Werror -I include examples/copy_file.c -o copy_file \
 *        -lhipfile -lamdhip64
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <hipfile.h>

/*
 * The HIP runtime functions this program uses, declared with HIP's own signatures so that
 * the program needs no ROCm headers (identical redeclarations are harmless when
 * <hip/hip_runtime_api.h> was included by hipfile.h).
 */
extern hipError_t hipMalloc(void **ptr, size_t size);
extern hipError_t hipFree(void *ptr);
extern const char *hipGetErrorString(hipError_t error);

/* Largest device buffer used for one round trip. */
#define MAX_BUFFER_SIZE ((size_t)64 << 20)

static const char *const prog = "copy_file";

/*
 * Message for a failed hipFileRead()/hipFileWrite() result; call it before errno changes.
 * IS_HIPFILE_ERR and HIPFILE_ERRSTR take the ssize_t result as it is.
 */
static const char *io_error_string(ssize_t ret)
{
    if (IS_HIPFILE_ERR(ret)) {
        return HIPFILE_ERRSTR(ret);
    }
    if (ret == -1) {
        return strerror(errno);
    }
    return hipGetErrorString((hipError_t)-ret);
}

/* Message for a failed hipFileError_t result. */
static const char *op_error_string(hipFileError_t status)
{
    if (IS_HIP_DRV_ERR(status)) {
        return hipGetErrorString(HIP_DRV_ERR(status));
    }
    return hipFileGetOpErrorString(status.err);
}

static bool register_file(int fd, const char *path, hipFileHandle_t *handle)
{
    hipFileDescr_t descr;
    hipFileError_t status;

    memset(&descr, 0, sizeof descr);
    descr.type = hipFileHandleTypeOpaqueFD;
    descr.handle.fd = fd;
    status = hipFileHandleRegister(handle, &descr);
    if (status.err != hipFileSuccess) {
        fprintf(stderr, "%s: cannot register %s: %s\n", prog, path, op_error_string(status));
        *handle = NULL;
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    const char *src_path;
    const char *dst_path;
    int src = -1;
    int dst = -1;
    bool driver_open = false;
    hipFileHandle_t src_handle = NULL;
    hipFileHandle_t dst_handle = NULL;
    void *buffer = NULL;
    size_t buffer_size;
    struct stat st;
    hipFileError_t status;
    hipError_t hip_status;
    hoff_t offset = 0;
    int result = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: %s SOURCE DEST\n", prog);
        return 1;
    }
    src_path = argv[1];
    dst_path = argv[2];

    src = open(src_path, O_RDONLY);
    if (src < 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, src_path, strerror(errno));
        goto out;
    }
    if (fstat(src, &st) != 0) {
        fprintf(stderr, "%s: cannot stat %s: %s\n", prog, src_path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "%s: %s is not a regular file\n", prog, src_path);
        goto out;
    }
    dst = open(dst_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (dst < 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, dst_path, strerror(errno));
        goto out;
    }

    status = hipFileDriverOpen();
    if (status.err != hipFileSuccess) {
        fprintf(stderr, "%s: cannot open the hipFile driver: %s\n", prog, op_error_string(status));
        goto out;
    }
    driver_open = true;
    if (!register_file(src, src_path, &src_handle) || !register_file(dst, dst_path, &dst_handle)) {
        goto out;
    }

    if (st.st_size == 0) {
        result = 0; /* DEST was created (and truncated): nothing else to do */
        goto out;
    }
    buffer_size = (size_t)st.st_size < MAX_BUFFER_SIZE ? (size_t)st.st_size : MAX_BUFFER_SIZE;
    hip_status = hipMalloc(&buffer, buffer_size);
    if (hip_status != hipSuccess) {
        fprintf(stderr, "%s: cannot allocate %zu bytes of GPU memory: %s\n", prog, buffer_size,
                hipGetErrorString(hip_status));
        buffer = NULL;
        goto out;
    }

    /* Read until end of file (a file that grows while we copy is copied as we find it). */
    for (;;) {
        ssize_t n = hipFileRead(src_handle, buffer, buffer_size, offset, 0);
        ssize_t written = 0;

        if (n < 0) {
            fprintf(stderr, "%s: reading %s: %s\n", prog, src_path, io_error_string(n));
            goto out;
        }
        if (n == 0) {
            break;
        }
        while (written < n) {
            ssize_t w = hipFileWrite(dst_handle, buffer, (size_t)(n - written), offset + written, written);

            if (w < 0) {
                fprintf(stderr, "%s: writing %s: %s\n", prog, dst_path, io_error_string(w));
                goto out;
            }
            if (w == 0) {
                fprintf(stderr, "%s: writing %s: nothing was written\n", prog, dst_path);
                goto out;
            }
            written += w;
        }
        offset += n;
    }
    result = 0;

out:
    if (buffer != NULL) {
        hip_status = hipFree(buffer);
        if (hip_status != hipSuccess && result == 0) {
            fprintf(stderr, "%s: cannot free GPU memory: %s\n", prog, hipGetErrorString(hip_status));
            result = 1;
        }
    }
    if (src_handle != NULL) {
        hipFileHandleDeregister(src_handle);
    }
    if (dst_handle != NULL) {
        hipFileHandleDeregister(dst_handle);
    }
    if (driver_open) {
        status = hipFileDriverClose();
        if (status.err != hipFileSuccess && result == 0) {
            fprintf(stderr, "%s: cannot close the hipFile driver: %s\n", prog, op_error_string(status));
            result = 1;
        }
    }
    if (dst >= 0 && close(dst) != 0 && result == 0) {
        fprintf(stderr, "%s: closing %s: %s\n", prog, dst_path, strerror(errno));
        result = 1;
    }
    if (src >= 0) {
        close(src);
    }
    return result;
}
