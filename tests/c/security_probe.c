/*
 * What tests/security.rs runs, often as another user or installed set-user-ID root: a program
 * linked with libhipfile.so.0 (and nothing else; libcufile.so.0 is loaded by path on demand).
 *
 *   security_probe open                 print the ids, then hipFileDriverOpen, print
 *                                       "logfile=<code> <hipFileParamEnvLogfilePath>", Close
 *   security_probe cufile LIB           print the ids, then cuFileDriverOpen of LIB, print
 *                                       "cufile logfile=<code> <ENV_LOGFILE_PATH>", Close
 *   security_probe serve                hipFileDriverOpen (the statistics server starts), print
 *                                       "READY pid=<pid> open=<code>", wait for the end of
 *                                       standard input
 *   security_probe serve-after-line     print "WAITING", read one line, then as serve
 *   security_probe raw PID              AISSTATS<pid> by hand: print "fd", "nofd" or
 *                                       "noconnect <errno>"
 *   security_probe api PID              hipFileStatsCreateContext + ConnectToTargetProcess: print
 *                                       "connect=<code> errno=<errno> ms=<elapsed>"
 *   security_probe squat PID            bind AISSTATS<pid> first and hand every caller a forged
 *                                       block (level 1, "4242 bytes read"), print "SQUATTING",
 *                                       until the end of standard input
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>

#include "hipfile-stats.h"
#include "hipfile.h"

static void print_ids(void) {
    printf("uid=%d euid=%d secure=%lu\n", (int)getuid(), (int)geteuid(), getauxval(AT_SECURE));
    fflush(stdout);
}

static struct sockaddr_un stats_address(int pid) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path + 1, sizeof addr.sun_path - 1, "AISSTATS%08x", (unsigned)pid);
    return addr;
}

static void wait_for_eof(void) {
    char buf[256];
    while (read(0, buf, sizeof buf) > 0) {
    }
}

static int serve(void) {
    hipFileError_t e = hipFileDriverOpen();
    printf("READY pid=%d open=%d\n", (int)getpid(), (int)e.err);
    fflush(stdout);
    wait_for_eof();
    hipFileDriverClose();
    return 0;
}

static int raw(int pid) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = stats_address(pid);
    if (connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) {
        printf("noconnect %d\n", errno);
        return 0;
    }
    int payload = 0;
    struct iovec iov = {&payload, sizeof payload};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    ssize_t n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        printf("fd\n");
    else
        printf("nofd %zd\n", n);
    return 0;
}

static long ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static int api(int pid) {
    hipFileStatsContext_t *ctx = NULL;
    hipFileStatsError_t e = hipFileStatsCreateContext(&ctx, pid);
    if (e != hipFileStatsSuccess) {
        printf("create=%d\n", (int)e);
        return 1;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    errno = 0;
    e = hipFileStatsConnectToTargetProcess(ctx);
    int err = errno;
    printf("connect=%d errno=%d ms=%ld\n", (int)e, e == hipFileStatsSuccess ? 0 : err, ms_since(&t0));
    if (e == hipFileStatsSuccess)
        hipFileStatsGenerateReport(ctx, 1);
    hipFileStatsCloseContext(ctx);
    return 0;
}

static int squat(int pid) {
    /* A forged block in AMD's first layout (528 bytes): level 1, version 1, 4242 bytes read. */
    int memfd = memfd_create("AISSTATS", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    uint64_t block[66] = {1, 1, 4242};
    if (memfd < 0 || write(memfd, block, sizeof block) != (ssize_t)sizeof block ||
        fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
        perror("memfd");
        return 1;
    }
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = stats_address(pid);
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(s, 16) != 0) {
        perror("bind");
        return 1;
    }
    printf("SQUATTING\n");
    fflush(stdout);
    for (;;) {
        struct pollfd p[2] = {{s, POLLIN, 0}, {0, POLLIN, 0}};
        if (poll(p, 2, -1) < 0)
            continue;
        if (p[1].revents)
            return 0;
        int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        int one = 1;
        struct iovec iov = {&one, sizeof one};
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int))];
        } control;
        struct msghdr msg;
        memset(&msg, 0, sizeof msg);
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &memfd, sizeof memfd);
        sendmsg(c, &msg, MSG_NOSIGNAL);
        close(c);
    }
}

typedef struct {
    int err;
    int cu_err;
} cufile_error_t;

static int cufile(const char *lib) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    cufile_error_t (*open)(void) = (cufile_error_t(*)(void))dlsym(h, "cuFileDriverOpen");
    cufile_error_t (*close_)(void) = (cufile_error_t(*)(void))dlsym(h, "cuFileDriverClose");
    if (open == NULL || close_ == NULL) {
        printf("dlsym: %s\n", dlerror());
        return 1;
    }
    cufile_error_t e = open();
    printf("cufile open=%d\n", e.err);
    cufile_error_t (*get)(int, char *, int) =
        (cufile_error_t(*)(int, char *, int))dlsym(h, "cuFileGetParameterString");
    if (get != NULL) {
        char value[4096] = "";
        /* 1: CUFILE_PARAM_ENV_LOGFILE_PATH (cufile.h is not needed for one value). */
        cufile_error_t g = get(1, value, (int)sizeof value);
        printf("cufile logfile=%d %s\n", g.err, value);
    }
    close_();
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    int pid = argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(mode, "open") == 0) {
        print_ids();
        hipFileError_t e = hipFileDriverOpen();
        printf("open=%d\n", (int)e.err);
        char value[4096] = "";
        hipFileError_t g =
            hipFileGetParameterString(hipFileParamEnvLogfilePath, value, (int)sizeof value);
        printf("logfile=%d %s\n", (int)g.err, value);
        hipFileDriverClose();
        return 0;
    }
    if (strcmp(mode, "cufile") == 0 && argc > 2) {
        print_ids();
        return cufile(argv[2]);
    }
    if (strcmp(mode, "serve") == 0)
        return serve();
    if (strcmp(mode, "serve-after-line") == 0) {
        char line[64];
        printf("WAITING\n");
        fflush(stdout);
        if (fgets(line, sizeof line, stdin) == NULL)
            return 1;
        return serve();
    }
    if (strcmp(mode, "raw") == 0)
        return raw(pid);
    if (strcmp(mode, "api") == 0)
        return api(pid);
    if (strcmp(mode, "squat") == 0)
        return squat(pid);
    return 2;
}
