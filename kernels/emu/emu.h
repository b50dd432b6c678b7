/* emu.h - device side of the host SIMT emulator: what the kernels (kernels/ *.cu) need
 * from CUDA/HIP when gpu_port.h's ATA_EMU branch compiles them with g++.
 * Each lane is a fiber; the lanes of a block share one OS thread (a
 * "resident block slot", emu.cc). Warp collectives (ballot, shuffles,
 * __syncwarp) and __syncthreads are meeting points: a lane blocks until every
 * lane of the mask has arrived. Memory operations are GCC __atomic builtins
 * with exactly the orderings gpu_port.h promises; under ThreadSanitizer
 * (ATA_EMU_TSAN) fences, barriers and the lanes are made visible to TSan so
 * that a relaxed poll or a missing release is reported (README: GPU
 * emulator). */
#ifndef ATA_EMU_H
#define ATA_EMU_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <tuple>
#include <utility>
#include "emu_api.h"
#if ATA_EMU_TSAN
#include <sanitizer/tsan_interface.h>
#endif

struct emu_dim3 { unsigned x, y, z; };

/* The part of a lane that inline device code reads (emu.cc extends it). */
struct emu_lane_pub {
    emu_dim3 tid, bid, bdim, gdim;
    int lane;               /* in the warp */
    int rel_fenced;         /* TSan model: a fence was executed (see emu_fence) */
    unsigned nrecent;       /* TSan model: relaxed loads since the last fence */
    const void *recent[4];
    /* Counted work (emu_counts.h): this lane's model clock in round trips,
     * and when the loads it issued since its last use point return. */
    double t, tr;
    int untimed;            /* bookkeeping (the spin guard): neither counted nor timed */
};
extern thread_local emu_lane_pub *emu_self;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
/* One OS thread runs one block at a time: thread_local is block-shared. */
#define __shared__ static thread_local
#define threadIdx (emu_self->tid)
#define blockIdx (emu_self->bid)
#define blockDim (emu_self->bdim)
#define gridDim (emu_self->gdim)

extern "C" {
uint64_t emu_ballot(int pred);
uint64_t emu_shfl_bits(uint64_t v, int src_lane);
void emu_syncwarp(uint64_t mask);
void emu_syncthreads(void);
void emu_pause(void);
/* Counted work (emu_counts.h; emu.cc). p: the address; bytes: its size. */
void emu_cnt_ld(const void *p, unsigned bytes);     /* a load of data: batched until a use */
/* A load of a word another lane may store in this kernel (flag, value,
 * counter): `seen` 1 when it returned what the lane waited for (it then
 * costs max(issue, when that was stored) + 1), 0 for a poll that did not
 * (counted apart, costs nothing); `acquire` 1 for an acquire load. */
void emu_cnt_sync_ld(const void *p, unsigned bytes, int seen, int acquire);
/* A store: kind 0 plain, 1 relaxed atomic (its time is kept for the loads
 * that wait on it), 2 release (a fence first). */
void emu_cnt_st(const void *p, unsigned bytes, int kind);
void emu_cnt_fence(int gpu_scope);                  /* 1: GPU scope; 0: warp/block scope */
/* An RMW; ret: its old value is used; release: with release semantics. */
void emu_cnt_rmw(const void *p, unsigned bytes, int ret, int release);
void emu_cnt_dep(void);                             /* a use point: wait for the batch */
void emu_cnt_claim(void);                           /* lane 0 claimed work for its warp */
void emu_cnt_claim_block(void);                     /* thread 0 claimed work for its block */
void emu_cnt_untimed(int on);                       /* bookkeeping follows (on) / ends (off) */
}
#define __syncthreads emu_syncthreads

static inline int min(int a, int b) { return a < b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }

template <class T> static inline T emu_shfl(T v, int src)
{
    static_assert(sizeof(T) <= 8, "shuffle of more than 64 bits");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    b = emu_shfl_bits(b, src);
    T r;
    memcpy(&r, &b, sizeof r);
    return r;
}
/* CUDA/HIP: source lane `src` of this lane's segment of `width` lanes. */
static inline int emu_seg_lane(int src, int width)
{
    return (emu_self->lane & ~(width - 1)) + (src & (width - 1));
}

/* ---------------------------------------------------------------- memory */
/* TSan model of fences (TSan ignores atomic_thread_fence): a fence acquires
 * what the lane's recent relaxed loads read, and makes the lane's later
 * relaxed atomic stores/RMWs releases. The release is taken at the store,
 * not at the fence: writes placed between a fence and a flag store are not
 * caught (README lists this). Without TSan these are plain relaxed ops. */
static inline void emu_note_relaxed(const void *p)
{
#if ATA_EMU_TSAN
    emu_lane_pub *s = emu_self;
    s->recent[s->nrecent++ & 3] = p;
#else
    (void)p;
#endif
}
static inline bool emu_fenced(void)
{
#if ATA_EMU_TSAN
    return emu_self->rel_fenced != 0;
#else
    return false;
#endif
}
static inline void emu_fence(bool release)
{
#if ATA_EMU_TSAN
    emu_lane_pub *s = emu_self;
    const unsigned n = s->nrecent < 4 ? s->nrecent : 4;
    for (unsigned k = 0; k < n; k++) __tsan_acquire((void *)s->recent[k]);
    s->nrecent = 0;
    if (release) s->rel_fenced = 1;
#else
    (void)release;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
/* The memory operations below are uncounted; the counted vocabulary
 * (gpu_port.h) adds its counts. */
template <class T> static inline T emu_ld_rlx(const T *p)
{
    emu_note_relaxed(p);
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <class T> static inline T emu_ld_acq(const T *p)
{
#if ATA_EMU_BUG_NO_ACQUIRE    /* injected bug: every acquire load is relaxed */
    return emu_ld_rlx(p);
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}
template <class T> static inline void emu_st_rlx(T *p, T v)
{
    if (emu_fenced()) __atomic_store_n(p, v, __ATOMIC_RELEASE);
    else __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
template <class T> static inline void emu_st_rel(T *p, T v)
{
#if ATA_EMU_BUG_NO_RELEASE    /* injected bug: releases are relaxed */
    emu_st_rlx(p, v);
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}
template <class T> static inline T emu_add_rlx(T *p, T v)
{
    if (emu_fenced()) return __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <class T> static inline T emu_add_rel(T *p, T v)
{
#if ATA_EMU_BUG_NO_RELEASE
    return emu_add_rlx(p, v);
#else
    return __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
#endif
}
template <class T> static inline bool emu_cas_rlx(T *p, T *expect, T v)
{
    if (emu_fenced()) return __atomic_compare_exchange_n(p, expect, v, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    return __atomic_compare_exchange_n(p, expect, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* CUDA's atomic functions: relaxed, device scope; each one counted as an
 * RMW whose old value is used. */
static inline unsigned atomicAdd(unsigned *p, unsigned v) { emu_cnt_rmw(p, 4, 1, 0); return emu_add_rlx(p, v); }
static inline int atomicAdd(int *p, int v) { emu_cnt_rmw(p, 4, 1, 0); return emu_add_rlx(p, v); }
static inline int atomicCAS(int *p, int expect, int v)
{
    emu_cnt_rmw(p, 4, 1, 0);
    emu_cas_rlx(p, &expect, v);
    return expect;
}
static inline int atomicMin(int *p, int v)
{
    emu_cnt_rmw(p, 4, 1, 0);    /* one atomic min on the hardware, a CAS loop here */
    int old = emu_ld_rlx(p);
    while (old > v && !emu_cas_rlx(p, &old, v)) {}
    return old;
}
static inline void emu_atomic_add_f64(double *p, double v)
{
    emu_cnt_rmw(p, 8, 0, 0);
    uint64_t *q = (uint64_t *)p, old = emu_ld_rlx(q), nw;
    do {
        double d;
        memcpy(&d, &old, sizeof d);
        d += v;
        memcpy(&nw, &d, sizeof nw);
    } while (!emu_cas_rlx(q, &old, nw));
}

/* ---------------------------------------------------------------- launch */
struct emu_closure {
    virtual ~emu_closure() {}
    virtual void run() = 0;
};
template <class... P> struct emu_kclosure : emu_closure {
    void (*k)(P...);
    std::tuple<P...> args;      /* kernel arguments, copied at launch */
    explicit emu_kclosure(void (*k_)(P...), P... a) : k(k_), args(a...) {}
    void run() override { std::apply(k, args); }
};
extern "C++" void emu_launch_raw(unsigned grid, unsigned block, void *stream, const char *name, emu_closure *c);
template <class... P, class... A>
static inline void emu_launch(unsigned grid, unsigned block, void *stream, const char *name, void (*k)(P...),
                              A &&...a)
{
    emu_launch_raw(grid, block, stream, name, new emu_kclosure<P...>(k, P(std::forward<A>(a))...));
}
template <class F> static inline int emu_occupancy(int *blocks, F, int, size_t)
{
    *blocks = emu_blocks_per_sm();
    return 0;
}
#endif
