/* How the library finds its GPU runtime, seen from an application.
 *
 * Usage: runtime_detect device SCRATCH_DIR   (linked with the simulated runtime: device memory
 *                                             from hipMalloc must work through the library
 *                                             without any HIPFILE_* variable)
 *        runtime_detect host SCRATCH_DIR     (host memory; run in host-only set-ups)
 * Prints "detect: ok" and exits 0 on success. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hipfile.h>

#ifdef WITH_SIM
int hipMalloc(void **ptr, size_t size);
int hipFree(void *ptr);
int hipMemcpy(void *dst, const void *src, size_t size, int kind);
#endif

#define LEN 8192

static void fail(const char *what)
{
    fprintf(stderr, "detect: FAILED: %s\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    static unsigned char host[LEN], back[LEN];
    char path[4096];
    void *buf = host;
    int device;
    if (argc != 3)
        fail("usage: runtime_detect device|host SCRATCH_DIR");
    device = strcmp(argv[1], "device") == 0;
    snprintf(path, sizeof path, "%s/detect-%d", argv[2], (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fail("create the scratch file");
    unlink(path);
    for (int i = 0; i < LEN; i++)
        host[i] = (unsigned char)(i * 7 + 3);
#ifdef WITH_SIM
    if (device) {
        if (hipMalloc(&buf, LEN) != 0 || hipMemcpy(buf, host, LEN, 1 /* host to device */) != 0)
            fail("hipMalloc");
    }
#else
    if (device)
        fail("built without the simulated runtime");
#endif
    if (hipFileBufRegister(buf, LEN, 0).err != hipFileSuccess)
        fail("hipFileBufRegister");
    hipFileHandle_t fh;
    hipFileDescr_t d;
    memset(&d, 0, sizeof d);
    d.type = hipFileHandleTypeOpaqueFD;
    d.handle.fd = fd;
    if (hipFileHandleRegister(&fh, &d).err != hipFileSuccess)
        fail("hipFileHandleRegister");
    if (hipFileWrite(fh, buf, LEN, 0, 0) != LEN)
        fail("hipFileWrite");
    if (pread(fd, back, LEN, 0) != LEN || memcmp(back, host, LEN) != 0)
        fail("the file does not hold what was written");
    hipFileHandleDeregister(fh);
    if (hipFileBufDeregister(buf).err != hipFileSuccess)
        fail("hipFileBufDeregister");
#ifdef WITH_SIM
    if (device)
        hipFree(buf);
#endif
    close(fd);
    printf("detect: ok\n");
    return 0;
}
