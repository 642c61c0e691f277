/*
 * A stand-in hipFile library under another name (libhipfile_stub.so, SONAME
 * libhipfile_stub.so), for tests/install.rs: a program linked against it gets version 9.9.9
 * and a driver that never opens, unless our libhipfile.so.0 is put in front of it with
 * LD_PRELOAD, in which case every hipFile symbol resolves to ours.
 *
 * Built with: cc -shared -fPIC -Wl,-soname,libhipfile_stub.so -I include preload_stub.c
 * The prototypes come from include/hipfile.h, so the stub's ABI is the real one.
 */
#include "hipfile.h"

hipFileError_t hipFileGetVersion(unsigned *major, unsigned *minor, unsigned *patch)
{
    if (major) *major = 9;
    if (minor) *minor = 9;
    if (patch) *patch = 9;
    hipFileError_t e = {hipFileSuccess, hipSuccess};
    return e;
}

hipFileError_t hipFileDriverOpen(void)
{
    hipFileError_t e = {hipFileInternalError, hipSuccess};
    return e;
}

hipFileError_t hipFileDriverClose(void)
{
    hipFileError_t e = {hipFileDriverNotInitialized, hipSuccess};
    return e;
}

int64_t hipFileUseCount(void)
{
    return -1;
}
