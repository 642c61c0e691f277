/* Application threads cancelled (pthread_cancel) while they call the library: writes through
 * device and host memory (each ends with an fdatasync), file registrations (each reads the
 * mount table) and deregistrations (each closes descriptors), buffer registrations. The library
 * must reach no cancellation point inside a call, so a thread can only be cancelled between
 * calls (here: at pthread_testcancel), the process lives on, and nothing is leaked or left
 * locked. Run against the simulated runtime, with copies slowed down (HIPSIM_COPY_DELAY_US)
 * so that threads spend their time inside the library.
 *
 * Usage: cancel SCRATCH_DIR. Prints "cancel: ok" and exits 0 on success. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hipfile.h>

/* From the simulated runtime the program links against. */
int hipMalloc(void **ptr, size_t size);
int hipFree(void *ptr);

#define THREADS 4
#define LEN (64 * 1024)

struct job {
    int fd;
    void *dev;
    unsigned char host[LEN];
    unsigned long rounds;
};

static void fail(const char *what)
{
    fprintf(stderr, "cancel: FAILED: %s\n", what);
    exit(1);
}

static int open_fd_count(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (!d)
        fail("opendir /proc/self/fd");
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static void *worker(void *arg)
{
    struct job *j = arg;
    for (;;) {
        hipFileHandle_t fh;
        hipFileDescr_t d;
        memset(&d, 0, sizeof d);
        d.type = hipFileHandleTypeOpaqueFD;
        d.handle.fd = j->fd;
        if (hipFileHandleRegister(&fh, &d).err == hipFileSuccess) {
            (void)hipFileWrite(fh, j->dev, LEN, 0, 0);
            (void)hipFileWrite(fh, j->host, 4096, 4096, 0);
            (void)hipFileRead(fh, j->dev, LEN, 0, 0);
            hipFileHandleDeregister(fh);
        }
        if (hipFileBufRegister(j->dev, LEN, 0).err == hipFileSuccess)
            (void)hipFileBufDeregister(j->dev);
        j->rounds++;
        pthread_testcancel(); /* the only cancellation point of the loop */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static struct job jobs[THREADS];
    pthread_t t[THREADS];
    char path[4096];
    int baseline;
    if (argc != 2)
        fail("usage: cancel SCRATCH_DIR");
    alarm(60); /* a lock left held would hang the checks below */
    /* Opens the driver (and loads the runtime and the engine) before the baseline. */
    if (hipFileDriverOpen().err != hipFileSuccess)
        fail("hipFileDriverOpen");
    for (int i = 0; i < THREADS; i++) {
        snprintf(path, sizeof path, "%s/cancel-%d-%d", argv[1], (int)getpid(), i);
        jobs[i].fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (jobs[i].fd < 0 || ftruncate(jobs[i].fd, LEN) != 0)
            fail("create a scratch file");
        unlink(path);
        if (hipMalloc(&jobs[i].dev, LEN) != 0)
            fail("hipMalloc");
        memset(jobs[i].host, i, LEN);
    }
    baseline = open_fd_count();
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < THREADS; i++)
            if (pthread_create(&t[i], NULL, worker, &jobs[i]) != 0)
                fail("pthread_create");
        struct timespec pause = {0, 300 * 1000 * 1000};
        nanosleep(&pause, NULL);
        for (int i = 0; i < THREADS; i++)
            if (pthread_cancel(t[i]) != 0)
                fail("pthread_cancel");
        for (int i = 0; i < THREADS; i++) {
            void *ret = NULL;
            if (pthread_join(t[i], &ret) != 0 || ret != PTHREAD_CANCELED)
                fail("a cancelled thread did not end as cancelled");
        }
    }
    unsigned long rounds = 0;
    for (int i = 0; i < THREADS; i++)
        rounds += jobs[i].rounds;
    if (rounds < THREADS)
        fail("the threads did not get to run");
    if (open_fd_count() != baseline) {
        fprintf(stderr, "cancel: %d descriptors open, %d before\n", open_fd_count(), baseline);
        fail("descriptors leaked");
    }
    /* Nothing stays locked: everything still works from this thread. */
    for (int i = 0; i < THREADS; i++) {
        hipFileHandle_t fh;
        hipFileDescr_t d;
        memset(&d, 0, sizeof d);
        d.type = hipFileHandleTypeOpaqueFD;
        d.handle.fd = jobs[i].fd;
        if (hipFileHandleRegister(&fh, &d).err != hipFileSuccess)
            fail("register after the cancellations");
        if (hipFileWrite(fh, jobs[i].host, LEN, 0, 0) != LEN)
            fail("write after the cancellations");
        memset(jobs[i].host, 0xee, LEN);
        if (hipFileRead(fh, jobs[i].host, LEN, 0, 0) != LEN || jobs[i].host[LEN - 1] != (unsigned char)i)
            fail("read back after the cancellations");
        hipFileHandleDeregister(fh);
        hipFree(jobs[i].dev);
        close(jobs[i].fd);
    }
    if (hipFileDriverClose().err != hipFileSuccess)
        fail("hipFileDriverClose");
    printf("cancel: ok (%lu rounds in cancelled threads)\n", rounds);
    return 0;
}
