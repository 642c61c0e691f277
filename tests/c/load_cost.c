/*
 * load_cost.c - what loading libhipfile costs a process that never calls it (target T12).
 *
 * Usage: load_cost LIBRARY. Counts the process's threads and descriptors and looks for a GPU
 * runtime among its mappings before dlopen, after dlopen and after dlclose, and prints the time
 * dlopen + dlclose took. The test that runs it asserts the counts; the time is printed only.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - (strcmp(dir, "/proc/self/fd") == 0); /* opendir's own descriptor */
}

/* Mappings of a GPU runtime (AMD's, NVIDIA's, our simulator, NVIDIA's cuFile). */
static int runtimes_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "libamdhip64") || strstr(line, "libcuda.so") ||
            strstr(line, "libhipsim") || strstr(line, "libcufile"))
            n++;
    fclose(f);
    return n;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: load_cost LIBRARY\n");
        return 2;
    }
    int threads[3], fds[3], mapped[3];
    threads[0] = entries("/proc/self/task");
    fds[0] = entries("/proc/self/fd");
    mapped[0] = runtimes_mapped();
    double t0 = now_us();
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    double t1 = now_us();
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    threads[1] = entries("/proc/self/task");
    fds[1] = entries("/proc/self/fd");
    mapped[1] = runtimes_mapped();
    double t2 = now_us();
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        return 1;
    }
    double t3 = now_us();
    threads[2] = entries("/proc/self/task");
    fds[2] = entries("/proc/self/fd");
    mapped[2] = runtimes_mapped();
    printf("threads %d %d %d\n", threads[0], threads[1], threads[2]);
    printf("descriptors %d %d %d\n", fds[0], fds[1], fds[2]);
    printf("runtimes mapped %d %d %d\n", mapped[0], mapped[1], mapped[2]);
    printf("dlopen+dlclose %.0f us\n", (t1 - t0) + (t3 - t2));
    return 0;
}
