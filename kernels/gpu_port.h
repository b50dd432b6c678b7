/* gpu_port.h - the one portability header of the device code: CUDA (nvcc,
 * sm_80/sm_90, warp of 32), HIP (hipcc, gfx90a/gfx942, wavefront of 64), and
 * the host SIMT emulator (g++, ATA_EMU, warp 32 or 64: kernels/emu/).
 * Every kernel in kernels/ is written once against these names.
 *
 * Memory-model vocabulary (both targets, GPU/agent scope):
 *   ata_ld_acquire(p)      load that later loads of this thread may not pass
 *   ata_ld_relaxed(p)      coherent (L2) load, no ordering (the polls)
 *   ata_st_release(p, v)   store that earlier accesses of this thread may not pass
 *   ata_st_relaxed(p, v)   coherent store, no ordering (a flag after a fence)
 *   ata_red_add_release    atomic add with release
 *   ata_red_add_relaxed    atomic add, no ordering (after an explicit fence)
 *   ata_fence_acq_rel()    cumulative fence at GPU scope
 *   ata_group_sync(mask)   execution + memory barrier among the lanes of a
 *                          sub-warp group (CUDA: __syncwarp; HIP: the wave
 *                          runs in lock step, a workgroup fence orders memory)
 *   ata_ld_value(p)        64-bit relaxed load of a published x_j (the wait
 *                          on the value; ATA_X_SENTINEL_BITS until solved)
 *   ata_st_value(p, v)     64-bit relaxed store publishing x_i (no fence)
 *   ata_poll_flag(p, want) relaxed poll of a flag: 1 once *p == want
 *   ata_claim(p, n)        atomicAdd on a launch's claim cursor
 *   ata_claim_block(p, n)  the same by thread 0 for its whole block (the
 *                          emulator's model moves the block, not the warp)
 *   ata_ticket(p)          acq_rel increment (the last block of a reduction)
 *   ata_ldg / ata_ld / ata_st  plain global loads (ldg: data no lane writes
 *                          during the kernel) and stores
 *   ata_dep()              the next address depends on the loads before
 *                          (nothing on a GPU; the emulator's count)
 * Every global access of the kernels goes through these, so that the
 * emulator counts them (kernels/emu/emu_counts.h); on CUDA and HIP they are
 * the plain or atomic access they name. The orderings and why each is
 * enough: ata_exec.cu's file comment.
 *
 * Floating point: pull and ILU0 must be bitwise equal to the serial host
 * reference, so no multiply-add contraction anywhere: nvcc --fmad=false and
 * hipcc -ffp-contract=off (set in gpu.mk), and ATA_DMUL (never fused) for the
 * products that feed a subtraction. Double division is IEEE round-to-nearest
 * on both targets by default. */
#ifndef ATA_GPU_PORT_H
#define ATA_GPU_PORT_H

#include <stdint.h>

/* x before its row is solved (the wait on the value, ata_exec.cu): a
 * signalling NaN, which no arithmetic produces (an operation on a NaN
 * returns a quiet one); a row whose result has these bits (a b_i with them,
 * passed through unchanged) publishes the quiet NaN instead. */
#define ATA_X_SENTINEL_BITS 0x7FF0DEAD0000A7A5ull
#define ATA_X_QNAN_BITS 0x7FF8000000000000ull

#if defined(ATA_EMU)
/* ------------------------------------------- host SIMT emulator (kernels/emu)
 * g++ compiles the kernels for the CPU: warp ATA_EMU_WARP (32: reports as
 * CUDA, 64: as HIP). Same vocabulary, same orderings, as C11 atomics. */
#include "emu/emu.h"
#define ATA_WARP ATA_EMU_WARP
#if ATA_EMU_WARP == 64
typedef unsigned long long ata_lanemask;
#define ATA_FULL_MASK (~0ull)
#define ATA_TIMER_HZ 100000000.0
#else
typedef unsigned int ata_lanemask;
#define ATA_FULL_MASK 0xffffffffu
#define ATA_TIMER_HZ 1e9
#endif
#define ata_ballot(pred) ((ata_lanemask)emu_ballot((pred) ? 1 : 0))
#define ata_shfl(v, src, width) emu_shfl((v), emu_seg_lane((src), (width)))
#define ata_shfl_full(v, src) emu_shfl((v), (src))
#define ata_shfl_xor(v, m, width) emu_shfl((v), emu_self->lane ^ (m))
/* Each operation adds its counts (emu_counts.h) to the lane's. */
static inline uint32_t ata_ld_acquire(const uint32_t *p)
{ uint32_t v = emu_ld_acq(p); emu_cnt_sync_ld(p, 4, 1, 1); return v; }
static inline int ata_ld_acquire_s32(const int *p) { int v = emu_ld_acq(p); emu_cnt_sync_ld(p, 4, 1, 1); return v; }
/* Bookkeeping reads (the spin guard's error and progress words): not counted. */
static inline uint32_t ata_ld_relaxed(const uint32_t *p) { return emu_ld_rlx(p); }
static inline int ata_ld_relaxed_s32(const int *p) { return emu_ld_rlx(p); }
static inline bool ata_poll_flag(const uint32_t *p, uint32_t want)
{
    const bool ok = emu_ld_rlx(p) == want;
    emu_cnt_sync_ld(p, 4, ok, 0);
    if (ok) emu_cnt_dep();      /* the caller branches on it */
    return ok;
}
static inline bool ata_poll_zero_s32(const int *p)
{
    const bool ok = emu_ld_rlx(p) == 0;
    emu_cnt_sync_ld(p, 4, ok, 0);
    if (ok) emu_cnt_dep();
    return ok;
}
static inline void ata_st_release(uint32_t *p, uint32_t v) { emu_cnt_st(p, 4, 2); emu_st_rel(p, v); }
static inline void ata_st_relaxed(uint32_t *p, uint32_t v) { emu_cnt_st(p, 4, 1); emu_st_rlx(p, v); }
static inline void ata_red_add_release(int *p, int v) { emu_cnt_rmw(p, 4, 0, 1); (void)emu_add_rel(p, v); }
static inline void ata_red_add_relaxed(int *p, int v) { emu_cnt_rmw(p, 4, 0, 0); (void)emu_add_rlx(p, v); }
static inline void ata_red_add_relaxed_u32(unsigned *p, unsigned v) { emu_cnt_rmw(p, 4, 0, 0); (void)emu_add_rlx(p, v); }
#if ATA_EMU_BUG_NO_RELEASE
static inline void ata_fence_acq_rel(void) { emu_cnt_fence(1); emu_fence(false); }
#else
static inline void ata_fence_acq_rel(void) { emu_cnt_fence(1); emu_fence(true); }
#endif
static inline void ata_pause_ns(unsigned ns) { (void)ns; emu_pause(); }
static inline void ata_group_sync(ata_lanemask m) { emu_cnt_fence(0); emu_syncwarp((uint64_t)m); }
static inline void ata_atomic_add_f64(double *p, double v) { emu_atomic_add_f64(p, v); }
/* Plain global memory: ldg for data no lane writes during the kernel, ld
 * for data an earlier kernel (or, after an acquire, another lane) wrote. */
template <class T> static inline T ata_ldg(const T *p) { emu_cnt_ld(p, sizeof(T)); return *p; }
template <class T> static inline T ata_ld(const T *p) { emu_cnt_ld(p, sizeof(T)); return *p; }
template <class T> static inline void ata_st(T *p, T v) { emu_cnt_st(p, sizeof(T), 0); *p = v; }
static inline void ata_dep(void) { emu_cnt_dep(); }
static inline void ata_untimed(int on) { emu_cnt_untimed(on); }
static inline unsigned ata_claim(unsigned *p, unsigned n) { emu_cnt_claim(); return atomicAdd(p, n); }
static inline unsigned ata_claim_block(unsigned *p, unsigned n) { emu_cnt_claim_block(); return atomicAdd(p, n); }
/* An RMW that releases what this thread wrote and acquires what the
 * earlier RMWs' threads wrote (the last-block reductions' ticket). */
static inline unsigned ata_ticket(unsigned *p) { emu_cnt_rmw(p, 4, 1, 1); return __atomic_fetch_add(p, 1u, __ATOMIC_ACQ_REL); }
static inline uint64_t ata_dbits(double v) { uint64_t b; memcpy(&b, &v, 8); return b; }
static inline double ata_bitsd(uint64_t b) { double v; memcpy(&v, &b, 8); return v; }
/* The value a row publishes (the wait on the value, ata_exec.cu): a 64-bit
 * relaxed atomic, so that a poll sees the old or the new value whole. The
 * injected bugs of make gpu-emu-tsan-bug make either side plain. */
static inline double ata_ld_value(const double *p)
{
#if ATA_EMU_BUG_PLAIN_VALUE_LOAD
    const uint64_t b = *(const uint64_t *)p;
#else
    const uint64_t b = __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
#endif
    emu_cnt_sync_ld(p, 8, b != ATA_X_SENTINEL_BITS, 0);
    return ata_bitsd(b);
}
static inline void ata_st_value(double *p, double v)
{
    emu_cnt_st(p, 8, 1);
#if ATA_EMU_BUG_PLAIN_VALUE_STORE
    *(uint64_t *)p = ata_dbits(v);
#else
    __atomic_store_n((uint64_t *)p, ata_dbits(v), __ATOMIC_RELAXED);
#endif
}
static inline unsigned long long ata_timer(void) { return emu_clock(); }
#define ATA_DMUL(a, b) ((a) * (b))
#define ATA_GRID_CONST
#define ATA_BOUNDS(threads)
#define ATA_LAUNCH(kernel, grid, block, shmem, stream, ...) \
    emu_launch((unsigned)(grid), (unsigned)(block), (void *)(stream), #kernel, kernel, ##__VA_ARGS__)
typedef int ata_gpu_err;
#define ata_gpu_get_last_error EMU_RT(GetLastError)
#define ata_gpu_success 0
#define ata_occupancy emu_occupancy

#elif defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
/* ------------------------------------------------------------------ HIP */
#include <hip/hip_runtime.h>
#define ATA_HIP 1
#define ATA_WARP 64
typedef unsigned long long ata_lanemask;
#pragma clang fp contract(off)

#define ATA_FULL_MASK (~0ull)
#define ata_ballot(pred) ((ata_lanemask)__ballot((int)(pred)))
/* __shfl reads from an active lane; width divides the wave (segments). */
#define ata_shfl(v, src, width) __shfl((v), (src), (width))
#define ata_shfl_full(v, src) __shfl((v), (src), ATA_WARP)
#define ata_shfl_xor(v, m, width) __shfl_xor((v), (m), (width))

__device__ __forceinline__ uint32_t ata_ld_acquire(const uint32_t *p)
{ return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ int ata_ld_acquire_s32(const int *p)
{ return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ int ata_ld_relaxed_s32(const int *p)
{ return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ uint32_t ata_ld_relaxed(const uint32_t *p)
{ return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ void ata_st_relaxed(uint32_t *p, uint32_t v)
{ __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ void ata_st_release(uint32_t *p, uint32_t v)
{ __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ void ata_red_add_release(int *p, int v)
{ (void)__hip_atomic_fetch_add(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ void ata_red_add_relaxed(int *p, int v)
{ (void)__hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ void ata_fence_acq_rel(void)
{ __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "agent"); }
__device__ __forceinline__ bool ata_poll_flag(const uint32_t *p, uint32_t want) { return ata_ld_relaxed(p) == want; }
__device__ __forceinline__ bool ata_poll_zero_s32(const int *p) { return ata_ld_relaxed_s32(p) == 0; }
template <class T> __device__ __forceinline__ T ata_ldg(const T *p) { return __ldg(p); }
template <class T> __device__ __forceinline__ T ata_ld(const T *p) { return *p; }
template <class T> __device__ __forceinline__ void ata_st(T *p, T v) { *p = v; }
__device__ __forceinline__ void ata_dep(void) {}
__device__ __forceinline__ void ata_untimed(int) {}
__device__ __forceinline__ unsigned ata_claim(unsigned *p, unsigned n) { return atomicAdd(p, n); }
__device__ __forceinline__ unsigned ata_claim_block(unsigned *p, unsigned n) { return atomicAdd(p, n); }
__device__ __forceinline__ unsigned ata_ticket(unsigned *p)
{ return __hip_atomic_fetch_add(p, 1u, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT); }
__device__ __forceinline__ uint64_t ata_dbits(double v) { return (uint64_t)__double_as_longlong(v); }
__device__ __forceinline__ double ata_bitsd(uint64_t b) { return __longlong_as_double((long long)b); }
/* Relaxed 64-bit atomics at agent scope: coherent (no stale L1 / non-coherent
 * L2 line on gfx942), the value whole. */
__device__ __forceinline__ double ata_ld_value(const double *p)
{ return ata_bitsd(__hip_atomic_load((const uint64_t *)p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)); }
__device__ __forceinline__ void ata_st_value(double *p, double v)
{ __hip_atomic_store((uint64_t *)p, ata_dbits(v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
/* Back-off inside a long spin: fewer polls competing with the producers. */
__device__ __forceinline__ void ata_pause_ns(unsigned ns) { (void)ns; __builtin_amdgcn_s_sleep(1); }  /* an immediate only */
/* The wave executes in lock step; the fence orders the group's global
 * stores before its later loads (and keeps the compiler from moving them). */
__device__ __forceinline__ void ata_group_sync(ata_lanemask m)
{ (void)m; __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "workgroup"); __builtin_amdgcn_wave_barrier(); }
/* x += v on a hipMalloc'd (coarse-grained) double: the hardware fp64 add on
 * gfx90a/gfx942; a CAS loop is what plain atomicAdd would generate. */
__device__ __forceinline__ void ata_atomic_add_f64(double *p, double v) { (void)unsafeAtomicAdd(p, v); }
/* Constant-rate real-time counter: 100 MHz on gfx90a/gfx942 (the host
 * reads the rate from hipDeviceAttributeWallClockRate where ROCm has it). */
__device__ __forceinline__ unsigned long long ata_timer(void)
{ return (unsigned long long)__builtin_amdgcn_s_memrealtime(); }
#define ATA_TIMER_HZ 100000000.0
#define ATA_DMUL(a, b) ((a) * (b))
#define ATA_GRID_CONST
/* Second argument differs in meaning on HIP (waves per EU): block size only. */
#define ATA_BOUNDS(threads) __launch_bounds__(threads)
#define ATA_LAUNCH(kernel, grid, block, shmem, stream, ...) \
    hipLaunchKernelGGL(kernel, dim3(grid), dim3(block), shmem, (hipStream_t)(stream), __VA_ARGS__)
typedef hipError_t ata_gpu_err;
#define ata_gpu_get_last_error hipGetLastError
#define ata_gpu_success hipSuccess
#define ata_occupancy hipOccupancyMaxActiveBlocksPerMultiprocessor
#if defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE != 64
#error "ATA's HIP kernels are built for wave64 targets (gfx90a, gfx942, gfx950)"
#endif

#else
/* ----------------------------------------------------------------- CUDA */
#include <cuda_runtime.h>
#define ATA_CUDA 1
#define ATA_WARP 32
typedef unsigned int ata_lanemask;

#define ATA_FULL_MASK 0xffffffffu
#define ata_ballot(pred) __ballot_sync(ATA_FULL_MASK, (pred))
#define ata_shfl(v, src, width) __shfl_sync(ATA_FULL_MASK, (v), (src), (width))
#define ata_shfl_full(v, src) __shfl_sync(ATA_FULL_MASK, (v), (src))
#define ata_shfl_xor(v, m, width) __shfl_xor_sync(ATA_FULL_MASK, (v), (m), (width))

__device__ __forceinline__ uint32_t ata_ld_acquire(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ int ata_ld_acquire_s32(const int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ int ata_ld_relaxed_s32(const int *p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint32_t ata_ld_relaxed(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void ata_st_release(uint32_t *p, uint32_t v)
{ asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void ata_st_relaxed(uint32_t *p, uint32_t v)
{ asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void ata_red_add_release(int *p, int v)
{ asm volatile("red.release.gpu.global.add.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void ata_red_add_relaxed(int *p, int v)
{ asm volatile("red.relaxed.gpu.global.add.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void ata_fence_acq_rel(void)
{ asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ bool ata_poll_flag(const uint32_t *p, uint32_t want) { return ata_ld_relaxed(p) == want; }
__device__ __forceinline__ bool ata_poll_zero_s32(const int *p) { return ata_ld_relaxed_s32(p) == 0; }
template <class T> __device__ __forceinline__ T ata_ldg(const T *p) { return __ldg(p); }
template <class T> __device__ __forceinline__ T ata_ld(const T *p) { return *p; }
template <class T> __device__ __forceinline__ void ata_st(T *p, T v) { *p = v; }
__device__ __forceinline__ void ata_dep(void) {}
__device__ __forceinline__ void ata_untimed(int) {}
__device__ __forceinline__ unsigned ata_claim(unsigned *p, unsigned n) { return atomicAdd(p, n); }
__device__ __forceinline__ unsigned ata_claim_block(unsigned *p, unsigned n) { return atomicAdd(p, n); }
__device__ __forceinline__ unsigned ata_ticket(unsigned *p)
{
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
    return old;
}
__device__ __forceinline__ uint64_t ata_dbits(double v) { return (uint64_t)__double_as_longlong(v); }
__device__ __forceinline__ double ata_bitsd(uint64_t b) { return __longlong_as_double((long long)b); }
/* ld/st.relaxed.gpu: strong at GPU scope, so served by L2 (never a stale L1
 * line), 64 bits whole. No "memory" clobber on the load: polls of
 * independent rows may be issued back to back. */
__device__ __forceinline__ double ata_ld_value(const double *p)
{
    double v;
    asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void ata_st_value(double *p, double v)
{ asm volatile("st.relaxed.gpu.global.f64 [%0], %1;" :: "l"(p), "d"(v) : "memory"); }
__device__ __forceinline__ void ata_pause_ns(unsigned ns) { __nanosleep(ns); }
__device__ __forceinline__ void ata_group_sync(ata_lanemask m) { __syncwarp(m); }
__device__ __forceinline__ void ata_atomic_add_f64(double *p, double v) { (void)atomicAdd(p, v); }
/* Global nanosecond timer. */
__device__ __forceinline__ unsigned long long ata_timer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define ATA_TIMER_HZ 1e9
#define ATA_DMUL(a, b) __dmul_rn((a), (b))
/* Kernel parameters passed by reference to helpers without a local copy. */
#define ATA_GRID_CONST __grid_constant__
/* At least 4 resident blocks per SM: ptxas's own heuristic spills at 40
 * registers; with this it stays under 48 without spills (5 blocks of 8 warps). */
#define ATA_BOUNDS(threads) __launch_bounds__(threads, 4)
#define ATA_LAUNCH(kernel, grid, block, shmem, stream, ...) \
    kernel<<<(grid), (block), (shmem), (cudaStream_t)(stream)>>>(__VA_ARGS__)
typedef cudaError_t ata_gpu_err;
#define ata_gpu_get_last_error cudaGetLastError
#define ata_gpu_success cudaSuccess
#define ata_occupancy cudaOccupancyMaxActiveBlocksPerMultiprocessor
#endif

/* ------------------------------------------------------------ common */
#define ata_any(pred) (ata_ballot(pred) != 0)

__device__ __forceinline__ bool ata_is_sentinel(double v) { return ata_dbits(v) == ATA_X_SENTINEL_BITS; }

/* Lanes of the group of `G` lanes (a power of two) that holds `lane`. */
__device__ __forceinline__ ata_lanemask ata_group_mask(int lane, int G)
{
    ata_lanemask bits = G >= ATA_WARP ? ATA_FULL_MASK : (((ata_lanemask)1 << G) - 1);
    return G >= ATA_WARP ? bits : bits << (lane & ~(G - 1));
}

/* 1 if `pred` holds on every lane of this lane's group (call convergently). */
__device__ __forceinline__ int ata_group_all(int pred, int lane, int G)
{
    ata_lanemask m = ata_group_mask(lane, G);
    return (ata_ballot(pred) & m) == m;
}

/* The sum of a block's N warps' partial sums part[0 .. N-1] (shared
 * memory, read after a barrier) in a fixed pairwise tree: ((0+1) + (2+3))
 * + .., the same bits on every run whatever the warps' timing. */
template <int N> __device__ __forceinline__ double ata_warps_tree(const double *part)
{
    double t[N];
    for (int k = 0; k < N; k++) t[k] = part[k];
    for (int m = 1; m < N; m *= 2)
        for (int k = 0; k + m < N; k += 2 * m) t[k] += t[k + m];
    return t[0];
}

#endif /* ATA_GPU_PORT_H */
