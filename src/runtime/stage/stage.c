// The staging kernel of stream-ordered I/O, for NVIDIA (compiled to PTX) and AMD GPUs (compiled
// to AMDGPU code objects), from this one source: scripts/stage_kernels.sh builds both with
// clang, and the library embeds the results (src/runtime/stage/). The host side is
// src/engine/lend/stage.rs; hipsim models the same protocol (crates/hipsim/src/kernels.rs).
//
// One launch per stream-ordered operation, queued on the application's stream at submission:
// it starts when the work before it on the stream is done, tells the host so, and holds the
// stream until the host finishes the operation. Work queued after it on the stream therefore
// sees the operation done. Everything the kernel waits for is host work: it never waits for
// another stream, so no hardware queue shared with a held stream is involved.
//
// Why a kernel: the size and offsets of an operation may be read only when it starts, and a
// read may end early at the end of the file; a copy queued at submission would have to know
// both. A copy issued at run time on another stream may wait behind the held stream in the
// hardware queue they share, which never drains. The kernel reads what to copy from a ring in
// host-mapped memory when it gets there.
//
// Protocol. Every word lives in host-mapped pinned memory; the host writes fields, then the
// word the kernel waits on with release semantics; the kernel reads that word with acquire
// semantics (system scope), and the other way round.
// - The launch's one parameter is its mailbox (`StageMail`, one per operation). Block 0 stores
//   `started = 1` when the launch begins. The host then either stores `finish = 1` (the
//   operation needed no copies: host memory, GPU-direct I/O, a failure before any copy) and
//   every block returns, or assigns a stage: `first`, `ring_len` and `grid`, then `ctl` (the
//   device address of a `StageCtl`).
// - A stage's ring: segment `s` (serials count up over the stage's life) is described by
//   `ring[s % ring_len]`, published by its `serial` field. Each block copies its share of each
//   segment from `first` on, stores `done[b] = s` after it, and stops after a segment marked
//   `last` (posted once the operation's result is stored).
// - Each block adds one to `exited` as it returns: the host reuses the mailbox once all have.
// Blocks never wait for each other, and several are launched only where they are co-resident
// (a cooperative launch).

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define STAGE_MAX_BLOCKS 32
// Threads per block: every launch uses exactly this many (src/runtime: STAGE_THREADS).
#define STAGE_THREADS 1024

typedef struct {               // 32 bytes
    u64 dst;                   // device-visible address
    u64 src;                   // device-visible address
    u64 len;                   // bytes (0: nothing to copy)
    u32 serial;                // written last by the host
    u32 last;                  // 1: the operation's final segment
} StageDesc;

typedef struct {
    u32 done[STAGE_MAX_BLOCKS];
    u32 reserved[32];
    StageDesc ring[1];         // ring_len entries
} StageCtl;

typedef struct {               // 64 bytes
    u32 started;               // kernel: 1 once the launch began
    u32 exited;                // kernel: blocks that returned
    u32 finish;                // host: 1 = return without a stage
    u32 first;                 // host: the first serial of this operation (before ctl)
    u64 ctl;                   // host: the stage's StageCtl (device address), written last
    u32 ring_len;              // host: entries of the stage's ring (before ctl)
    u32 grid;                  // host, at submission: blocks of this launch
    u64 reserved[4];
} StageMail;

#if defined(__NVPTX__)

#define KERNEL __attribute__((nvptx_kernel))
#define SHARED __attribute__((address_space(3))) static
typedef struct { u32 x, y, z, w; } v4;

static inline u32 thread_id(void) { return __nvvm_read_ptx_sreg_tid_x(); }
static inline u32 block_id(void) { return __nvvm_read_ptx_sreg_ctaid_x(); }
static inline void block_barrier(void) { __nvvm_bar_sync(0); }
static inline void pause(u32 ns) { __nvvm_nanosleep(ns); }
static inline u32 ld_acquire32(const u32 *p) {
    u32 v;
    __asm__ volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
static inline u64 ld_acquire64(const u64 *p) {
    u64 v;
    __asm__ volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
static inline u32 ld_relaxed32(const u32 *p) {
    u32 v;
    __asm__ volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
static inline u64 ld_relaxed64(const u64 *p) {
    u64 v;
    __asm__ volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
static inline void st_release32(u32 *p, u32 v) {
    __asm__ volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
static inline void add_release32(u32 *p, u32 v) {
    __asm__ volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// Makes this block's device writes visible system-wide before a release store.
static inline void fence_system(void) { __asm__ volatile("fence.sc.sys;" ::: "memory"); }
// Host memory is read with cache-volatile loads (ring slots are refilled by the host).
static inline v4 load_host16(const v4 *p) {
    v4 v;
    __asm__ volatile("ld.global.cv.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p)
                     : "memory");
    return v;
}
static inline u8 load_host1(const u8 *p) {
    u16 v;
    __asm__ volatile("ld.global.cv.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return (u8)v;
}

#elif defined(__AMDGPU__)

// The default flat work-group size limit of a kernel is 1024 (STAGE_THREADS).
#define KERNEL __attribute__((amdgpu_kernel, visibility("default")))
// LDS cannot be zero-initialised: it holds nothing before the kernel writes it.
#define SHARED __attribute__((address_space(3), loader_uninitialized)) static
typedef u32 v4 __attribute__((ext_vector_type(4)));

static inline u32 thread_id(void) { return __builtin_amdgcn_workitem_id_x(); }
static inline u32 block_id(void) { return __builtin_amdgcn_workgroup_id_x(); }
static inline void block_barrier(void) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
// s_sleep 1 waits about 64 clocks (some 30 ns).
static inline void pause(u32 ns) {
    for (u32 i = 0; i < ns / 32; i++) __builtin_amdgcn_s_sleep(1);
}
static inline u32 ld_acquire32(const u32 *p) {
    return __scoped_atomic_load_n(p, __ATOMIC_ACQUIRE, __MEMORY_SCOPE_SYSTEM);
}
static inline u64 ld_acquire64(const u64 *p) {
    return __scoped_atomic_load_n(p, __ATOMIC_ACQUIRE, __MEMORY_SCOPE_SYSTEM);
}
static inline u32 ld_relaxed32(const u32 *p) {
    return __scoped_atomic_load_n(p, __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM);
}
static inline u64 ld_relaxed64(const u64 *p) {
    return __scoped_atomic_load_n(p, __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM);
}
static inline void st_release32(u32 *p, u32 v) {
    __scoped_atomic_store_n(p, v, __ATOMIC_RELEASE, __MEMORY_SCOPE_SYSTEM);
}
static inline void add_release32(u32 *p, u32 v) {
    (void)__scoped_atomic_fetch_add(p, v, __ATOMIC_RELEASE, __MEMORY_SCOPE_SYSTEM);
}
static inline void fence_system(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }
// Host memory (fine-grained, uncached on the device) is streamed with non-temporal loads.
static inline v4 load_host16(const v4 *p) { return __builtin_nontemporal_load(p); }
static inline u8 load_host1(const u8 *p) { return __builtin_nontemporal_load(p); }

#else
#error "stage.c builds for nvptx64-nvidia-cuda or amdgcn-amd-amdhsa only"
#endif

// Copy block `b`'s share (of `g`) of [src, src + len) to dst, as the simulator's
// `block_share` splits it: head bytes up to dst's 16-byte boundary among the blocks, then the
// 16-byte units in contiguous slices, then the tail bytes by the last block; bytes only when
// the two are not congruent modulo 16 (the library never asks for that).
static void copy_share(u8 *dst, const u8 *src, u64 len, u32 b, u32 g) {
    const u32 t = thread_id(), nt = STAGE_THREADS;
    u64 head = len;
    if ((((u64)dst ^ (u64)src) & 15) == 0) {
        head = (16 - ((u64)dst & 15)) & 15;
        if (head > len) head = len;
    }
    {
        u64 per = (head + g - 1) / g, lo = b * per, hi = lo + per;
        if (lo > head) lo = head;
        if (hi > head) hi = head;
        for (u64 i = lo + t; i < hi; i += nt) dst[i] = load_host1(src + i);
    }
    if (head == len) return;
    const u64 body = (len - head) / 16;
    const v4 *s = (const v4 *)(src + head);
    v4 *d = (v4 *)(dst + head);
    u64 per = (body + g - 1) / g, lo = b * per, hi = lo + per;
    if (lo > body) lo = body;
    if (hi > body) hi = body;
    u64 i = lo + t;
    // Four loads in flight per thread.
    for (; i + 3 * nt < hi; i += 4 * nt) {
        v4 v0 = load_host16(s + i), v1 = load_host16(s + i + nt), v2 = load_host16(s + i + 2 * nt),
           v3 = load_host16(s + i + 3 * nt);
        d[i] = v0;
        d[i + nt] = v1;
        d[i + 2 * nt] = v2;
        d[i + 3 * nt] = v3;
    }
    for (; i < hi; i += nt) d[i] = load_host16(s + i);
    if (b == g - 1) {
        for (u64 k = head + body * 16 + t; k < len; k += nt) dst[k] = load_host1(src + k);
    }
}

KERNEL void hipfile_stage(StageMail *mail) {
    SHARED u64 s_ctl, s_dst, s_src, s_len;
    SHARED u32 s_serial, s_last, s_ring_len, s_grid;
    const u32 b = block_id();
    if (thread_id() == 0) {
        if (b == 0) st_release32(&mail->started, 1);
        // Wait for a stage, or for the word that no copy is needed. Waiting for a stage may take
        // a while (they are shared by every stream), so the sleep grows.
        u32 ns = 32;
        u64 ctl = 0;
        for (;;) {
            ctl = ld_acquire64(&mail->ctl);
            if (ctl) break;
            if (ld_acquire32(&mail->finish)) break;
            pause(ns);
            if (ns < 8192) ns *= 2;
        }
        s_ctl = ctl;
        if (ctl) {
            s_serial = ld_relaxed32(&mail->first);
            s_ring_len = ld_relaxed32(&mail->ring_len);
            s_grid = ld_relaxed32(&mail->grid);
        }
    }
    block_barrier();
    if (s_ctl) {
        StageCtl *ctl = (StageCtl *)s_ctl;
        for (;;) {
            if (thread_id() == 0) {
                StageDesc *e = &ctl->ring[s_serial % s_ring_len];
                u32 ns = 32;
                while (ld_acquire32(&e->serial) != s_serial) {
                    pause(ns);
                    if (ns < 4096) ns *= 2;
                }
                s_dst = ld_relaxed64(&e->dst);
                s_src = ld_relaxed64(&e->src);
                s_len = ld_relaxed64(&e->len);
                s_last = ld_relaxed32(&e->last);
            }
            block_barrier();
            if (s_len) copy_share((u8 *)s_dst, (const u8 *)s_src, s_len, b, s_grid);
            block_barrier();
            const u32 was_last = s_last;
            if (thread_id() == 0) {
                fence_system();
                st_release32(&ctl->done[b], s_serial);
                s_serial += 1;
            }
            block_barrier();
            if (was_last) break;
        }
    }
    if (thread_id() == 0) {
        fence_system();
        add_release32(&mail->exited, 1);
    }
}
