/*
 * A program that uses the hipFile C API the way any application does, for tests/install.rs.
 * It is linked either against the installed libhipfile (through pkg-config) or against the
 * stand-in libhipfile_stub.so (tests/c/preload_stub.c), and prints what the library answers:
 *
 *   version MAJOR.MINOR.PATCH err E
 *   open err E use_count N
 *   close err E use_count N          (only when the open succeeded)
 *
 * It exits 0 whatever the answers are: the test reads them.
 */
#include <stdio.h>

#include "hipfile.h"

int main(void)
{
    unsigned major = 0, minor = 0, patch = 0;
    hipFileError_t e = hipFileGetVersion(&major, &minor, &patch);
    printf("version %u.%u.%u err %d\n", major, minor, patch, (int)e.err);

    e = hipFileDriverOpen();
    printf("open err %d use_count %lld\n", (int)e.err, (long long)hipFileUseCount());
    if (e.err == hipFileSuccess) {
        e = hipFileDriverClose();
        printf("close err %d use_count %lld\n", (int)e.err, (long long)hipFileUseCount());
    }
    return 0;
}
