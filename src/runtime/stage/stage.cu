// The staging kernel of stream-ordered I/O on CUDA (see stage.rs). One launch per operation,
// queued on the application's stream at submission: it starts when the work before it on the
// stream is done, copies the segments the library's worker posts into a ring in host-mapped
// pinned memory (file data the worker read, or device data the worker is to write), and returns
// after the operation's last segment, which the worker posts only once the operation is over and
// its result is stored. Work queued after it on the stream therefore sees the operation done.
//
// Why a kernel: the size and offsets of an operation may be read only when it starts, and a read
// may end early at the end of the file; a copy queued at submission would have to know both. A
// copy issued at run time on another stream may wait behind the held stream in the hardware queue
// they share, which never drains. The kernel reads what to copy from the ring when it gets there.
//
// Protocol (all words in host-mapped memory; the host writes a descriptor's fields, then its
// `serial` with release semantics; the kernel reads `serial` with acquire semantics):
// - `done[b]`: the serial of the last segment block b finished (written by block b, read by the
//   host before it reuses a ring entry, and by the next launch's block b to know where it starts);
// - `ring[serial % ring_len]`: the segment with that serial; serials count up from 1 over the
//   life of the stream, one per segment.
// Each block copies its share of each segment: blocks never wait for each other, and the library
// launches several only where they are co-resident (a cooperative launch).
//
// Regenerate stage.ptx on a machine with CUDA: scripts/gpu/stage_ptx.sh.

#define STAGE_MAX_BLOCKS 32

struct StageDesc {            // 32 bytes
    unsigned long long dst;   // device-visible address
    unsigned long long src;   // device-visible address
    unsigned long long len;   // bytes (0: nothing to copy)
    unsigned int serial;      // written last by the host
    unsigned int last;        // 1: the operation's final segment
};

struct StageCtl {
    unsigned int done[STAGE_MAX_BLOCKS];
    unsigned int reserved[32];
    StageDesc ring[1];        // ring_len entries
};

__device__ __forceinline__ unsigned int ld_acquire_sys(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long ld_relaxed_sys64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned int ld_relaxed_sys32(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release_sys(unsigned int *p, unsigned int v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Copy block `b`'s share of [src, src + len) to dst. Host memory is read with cache-volatile
// loads (ring entries are refilled by the host).
__device__ void copy_share(unsigned char *dst, const unsigned char *src, unsigned long long len) {
    const unsigned int b = blockIdx.x, g = gridDim.x, t = threadIdx.x, nt = blockDim.x;
    unsigned long long head = 0;
    if ((((unsigned long long)dst ^ (unsigned long long)src) & 15) == 0) {
        head = (16 - ((unsigned long long)dst & 15)) & 15;
        if (head > len) head = len;
    } else {
        head = len;  // not congruent: bytes only (the library never asks for this)
    }
    // Head bytes (and the whole of an incongruent copy): every block its slice.
    {
        unsigned long long per = (head + g - 1) / g, lo = b * per, hi = lo + per;
        if (hi > head) hi = head;
        for (unsigned long long i = lo + t; i < hi; i += nt) dst[i] = __ldcv(src + i);
    }
    if (head == len) return;
    const unsigned long long body = (len - head) / 16;
    const uint4 *s = (const uint4 *)(src + head);
    uint4 *d = (uint4 *)(dst + head);
    // Contiguous slices per block, 4 loads in flight per thread.
    unsigned long long per = (body + g - 1) / g, lo = b * per, hi = lo + per;
    if (hi > body) hi = body;
    unsigned long long i = lo + t;
    for (; i + 3 * nt < hi; i += 4 * nt) {
        uint4 v0 = __ldcv(s + i), v1 = __ldcv(s + i + nt), v2 = __ldcv(s + i + 2 * nt),
              v3 = __ldcv(s + i + 3 * nt);
        d[i] = v0;
        d[i + nt] = v1;
        d[i + 2 * nt] = v2;
        d[i + 3 * nt] = v3;
    }
    for (; i < hi; i += nt) d[i] = __ldcv(s + i);
    // Tail bytes: the last block.
    if (b == g - 1) {
        const unsigned long long from = head + body * 16;
        for (unsigned long long k = from + t; k < len; k += nt) dst[k] = __ldcv(src + k);
    }
}

extern "C" __global__ void hipfile_stage(StageCtl *ctl, unsigned int ring_len) {
    __shared__ unsigned long long dst, src, len;
    __shared__ unsigned int serial, last;
    if (threadIdx.x == 0) serial = ld_acquire_sys(&ctl->done[blockIdx.x]) + 1;
    __syncthreads();
    for (;;) {
        if (threadIdx.x == 0) {
            StageDesc *e = &ctl->ring[serial % ring_len];
            unsigned int ns = 32;
            while (ld_acquire_sys(&e->serial) != serial) {
                __nanosleep(ns);
                if (ns < 4096) ns *= 2;
            }
            dst = ld_relaxed_sys64(&e->dst);
            src = ld_relaxed_sys64(&e->src);
            len = ld_relaxed_sys64(&e->len);
            last = ld_relaxed_sys32(&e->last);
        }
        __syncthreads();
        if (len) copy_share((unsigned char *)dst, (const unsigned char *)src, len);
        __syncthreads();
        const unsigned int was_last = last;
        if (threadIdx.x == 0) {
            __threadfence_system();
            st_release_sys(&ctl->done[blockIdx.x], serial);
            serial += 1;
        }
        __syncthreads();
        if (was_last) return;
    }
}
