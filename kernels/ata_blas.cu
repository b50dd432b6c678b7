/* ata_blas.cu - PCG's vector kernels (SpMV, dot, axpby) and the empty kernel
 * of the launch-cost probe. Deterministic: a given grid gives the same bits
 * on every run (fixed reduction trees, no atomics). */
#include "gpu_port.h"
#include "gpu_kernels.h"

#define WPB (ATA_GPU_BLOCK / ATA_WARP)

__global__ void __launch_bounds__(ATA_GPU_BLOCK) k_empty(void) {}

/* y = A x, G lanes per row, tree sum inside the group. */
__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_spmv(int n, const int *__restrict__ ptr, const int *__restrict__ idx,
       const double *__restrict__ val, int G, const double *__restrict__ x, double *__restrict__ y)
{
    const int lane = (int)(threadIdx.x % ATA_WARP), lig = lane % G;
    const int NG = ATA_WARP / G;
    const long long warp = (long long)blockIdx.x * WPB + threadIdx.x / ATA_WARP;
    const long long stride = (long long)gridDim.x * WPB * NG;
    for (long long r0 = warp * NG; r0 < n; r0 += stride) {     /* warp-uniform */
        const long long i = r0 + lane / G;
        double s = 0.0;
        if (i < n) {
            const int lo = ata_ldg(&ptr[i]), hi = ata_ldg(&ptr[i + 1]);
            ata_dep();
            for (int q = lo + lig; q < hi; q += G) {
                const int j = ata_ldg(&idx[q]);
                ata_dep();
                s += ata_ldg(&val[q]) * ata_ldg(&x[j]);
            }
        }
        for (int off = G / 2; off > 0; off /= 2) s += ata_shfl_xor(s, off, G);
        if (i < n && lig == 0) ata_st(&y[i], s);
    }
}

/* One lane's share of a row's sum: entries q = first, first + stride, ..
 * below hi, in order, ROW_K at a time (their indices and values in one
 * batch, then their x). */
__device__ __forceinline__ double lane_row_sum(const int *__restrict__ idx, const double *__restrict__ val,
                                               int first, int hi, int stride, const double *__restrict__ x)
{
    double s = 0.0;
    for (int q0 = first; q0 < hi; q0 += stride * ATA_GPU_ROW_K) {
        int j[ATA_GPU_ROW_K];
        double v[ATA_GPU_ROW_K];
        for (int t = 0; t < ATA_GPU_ROW_K; t++) {
            const int q = q0 + stride * t;
            j[t] = q < hi ? ata_ldg(&idx[q]) : 0;
            v[t] = q < hi ? ata_ldg(&val[q]) : 0.0;
        }
        ata_dep();
        for (int t = 0; t < ATA_GPU_ROW_K; t++)
            if (q0 + stride * t < hi) s += v[t] * ata_ldg(&x[j[t]]);
    }
    return s;
}

/* Row i of A x by the whole block (a hub, WIN_BLOCK): every thread sums
 * its strided share, each warp its lanes by a xor tree, then thread 0 the
 * warps' partials from shared memory in a fixed tree (ata_warps_tree): the
 * same bits every run. Called by every thread; thread 0 gets the sum. */
__device__ double block_row_sum(const int *__restrict__ ptr, const int *__restrict__ idx,
                                const double *__restrict__ val, int i, const double *__restrict__ x)
{
    __shared__ double part[WPB];
    const int t = (int)threadIdx.x;
    const int lo = ata_ldg(&ptr[i]), hi = ata_ldg(&ptr[i + 1]);
    ata_dep();
    double s = lane_row_sum(idx, val, lo + t, hi, ATA_GPU_BLOCK, x);
    for (int off = ATA_WARP / 2; off > 0; off /= 2) s += ata_shfl_xor(s, off, ATA_WARP);
    if (t % ATA_WARP == 0) part[t / ATA_WARP] = s;
    __syncthreads();
    const double r = t == 0 ? ata_warps_tree<WPB>(part) : 0.0;
    __syncthreads();        /* part is free for the next hub */
    return r;
}

/* y = A x over windows (the elastic map, gpu_kernels.h): a thread per
 * short row sums in stored order (the reference's bits); a group of G
 * lanes sums its strided entries, then a fixed xor tree. A lane loads
 * ROW_K entries at a time, then their x, then adds them in order. Then
 * the hubs win[nwin ..] a block each (block-uniform loop). */
__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_spmv_win(const int *__restrict__ ptr, const int *__restrict__ idx, const double *__restrict__ val,
           const ata_gpu_window *__restrict__ win, int nwin, int nhub, const double *__restrict__ x,
           double *__restrict__ y)
{
    const int lane = (int)(threadIdx.x % ATA_WARP);
    const int stride = (int)gridDim.x * WPB;
    for (int k = (int)(blockIdx.x * WPB + threadIdx.x / ATA_WARP); k < nwin; k += stride) {
        const int pos = ata_ldg(&win[k].pos), meta = ata_ldg(&win[k].meta);
        ata_dep();
        const int cnt = meta & ATA_GPU_WIN_ROWS, G = 1 << ATA_GPU_WIN_LOG2G(meta);
        const int g = lane / G, lig = lane % G, i = pos + g;
        double s = 0.0;
        if (g < cnt) {
            const int lo = ata_ldg(&ptr[i]), hi = ata_ldg(&ptr[i + 1]);
            ata_dep();
            s = lane_row_sum(idx, val, lo + lig, hi, G, x);
        }
        for (int off = G / 2; off > 0; off /= 2) s += ata_shfl_xor(s, off, G);
        if (g < cnt && lig == 0) ata_st(&y[i], s);
    }
    for (int h = (int)blockIdx.x; h < nhub; h += (int)gridDim.x) {
        const int i = ata_ldg(&win[nwin + h].pos);
        ata_dep();
        const double s = block_row_sum(ptr, idx, val, i, x);
        if (threadIdx.x == 0) ata_st(&y[i], s);
    }
}

/* Block sums of x.y in a fixed order into partial[blockIdx.x]. */
__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_dot_partial(long long n, const double *__restrict__ x, const double *__restrict__ y,
              double *__restrict__ partial)
{
    __shared__ double sh[ATA_GPU_BLOCK];
    double s = 0.0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        s += ata_ldg(&x[i]) * ata_ldg(&y[i]);
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int h = ATA_GPU_BLOCK / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) ata_st(&partial[blockIdx.x], sh[0]);
}

__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_dot_final(int m, const double *__restrict__ partial, double *__restrict__ out)
{
    __shared__ double sh[ATA_GPU_BLOCK];
    double s = 0.0;
    for (int i = (int)threadIdx.x; i < m; i += ATA_GPU_BLOCK) s += ata_ld(&partial[i]);
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int h = ATA_GPU_BLOCK / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) ata_st(out, sh[0]);
}

__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_axpby(long long n, double a, const double *__restrict__ x, double b, double *__restrict__ y)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        ata_st(&y[i], b == 0.0 ? a * ata_ldg(&x[i]) : a * ata_ldg(&x[i]) + b * ata_ld(&y[i]));   /* BLAS: b = 0 does not read y */
}

__global__ void __launch_bounds__(ATA_GPU_BLOCK) k_fill(long long n, double c, double *__restrict__ v)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        ata_st(&v[i], c);
}

/* ------------------------------------------------------- PCG on the device
 * (gpu_kernels.h; host side src/gpu/gpu_cg.c). The scalars live in *st;
 * each kernel returns at once while st->stop is set. A reduction is the
 * dot product's (the same grid, per-thread order and trees as
 * k_dot_partial + k_dot_final, so the same bits as ata_gpu_dot): each block
 * writes its partial and takes a ticket (acq_rel: it releases the partial,
 * and the last taker acquires them all); the block with the last ticket
 * sums the partials in order and finishes the step. A block reads stop
 * when it starts, before its ticket: the last block's write of stop comes
 * after every ticket, so no block of the kernel reads it late. */
__device__ __forceinline__ bool cg_finite(double v) { return v - v == 0; }

/* The block's sum of s (fixed tree) into partial[blockIdx.x]; then 1 in the
 * one block that arrives last, which has S, the sum of all partials. */
__device__ __forceinline__ bool cg_reduce(double s, double *partial, ata_gpu_cg_state *st, double *S)
{
    __shared__ double sh[ATA_GPU_BLOCK];
    __shared__ int last;
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int h = ATA_GPU_BLOCK / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        ata_st(&partial[blockIdx.x], sh[0]);
        last = ata_ticket(&st->ticket) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return false;
    double t = 0.0;
    for (int i = (int)threadIdx.x; i < (int)gridDim.x; i += ATA_GPU_BLOCK) t += ata_ld(&partial[i]);
    sh[threadIdx.x] = t;
    __syncthreads();
    for (int h = ATA_GPU_BLOCK / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    *S = sh[0];
    if (threadIdx.x == 0) ata_st(&st->ticket, 0u);     /* for the next reduction (stream order) */
    return threadIdx.x == 0;
}

__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_cg_dot(long long n, int what, const double *x, const double *y, double *xu,   /* RR: x = y = r, written */
         const double *__restrict__ pu, const double *__restrict__ qu, double *partial, ata_gpu_cg_state *st,
         ata_gpu_cg_rec *rec, double rtol, double atol, double dtol)
{
    if (ata_ld(&st->stop)) return;
    double s = 0.0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    if (what == ATA_GPU_CG_RR) {
        /* x += alpha p, r -= alpha q (axpby's expressions: 1.0 * v is v), then r'r */
        const double alpha = ata_ld(&st->alpha);
        double *r = (double *)x;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            ata_st(&xu[i], alpha * ata_ldg(&pu[i]) + ata_ld(&xu[i]));
            const double ri = -alpha * ata_ldg(&qu[i]) + ata_ld(&r[i]);
            ata_st(&r[i], ri);
            s += ri * ri;
        }
    } else {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
            s += ata_ldg(&x[i]) * ata_ldg(&y[i]);
    }
    double S;
    if (!cg_reduce(s, partial, st, &S)) return;
    const int m = ata_ld(&st->m);
    switch (what) {
    case ATA_GPU_CG_BB:
        ata_st(&st->bb, S);
        break;
    case ATA_GPU_CG_RR0: {
        const double bn = sqrt(ata_ld(&st->bb)), rn = sqrt(S);
        const double tol = fmax(rtol * bn, atol);
        ata_st(&st->rr0, S);
        ata_st(&st->tol, tol);
        ata_st(&st->dtol_abs, dtol > 0 ? dtol * rn : 0.0);
        if (!cg_finite(bn) || !cg_finite(S) || rn <= tol) ata_st(&st->stop, (int)ATA_GPU_CG_STOP_START);
        break;
    }
    case ATA_GPU_CG_RZ0:
        ata_st(&st->rz0, S);
        ata_st(&st->rz, S);
        if (!cg_finite(S) || S <= 0) ata_st(&st->stop, (int)ATA_GPU_CG_STOP_START);
        break;
    case ATA_GPU_CG_RR: {
        ata_st(&rec[m].rr, S);
        const double rn = sqrt(S), dabs = ata_ld(&st->dtol_abs);
        if (!cg_finite(S) || rn <= ata_ld(&st->tol) || (dabs > 0 && rn > dabs))
            ata_st(&st->stop, (int)ATA_GPU_CG_STOP_ITER);
        break;
    }
    case ATA_GPU_CG_RZ: {
        ata_st(&rec[m].rz, S);
        if (!cg_finite(S) || S <= 0) {
            ata_st(&st->stop, (int)ATA_GPU_CG_STOP_ITER);
        } else {
            ata_st(&st->beta, S / ata_ld(&st->rz));
            ata_st(&st->rz, S);
        }
        break;
    }
    }
}

/* q = A p (the rows as k_spmv or k_spmv_win place them) and p'q. */
__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_cg_spmv_dot(int n, const int *__restrict__ ptr, const int *__restrict__ idx, const double *__restrict__ val,
              int G0, const ata_gpu_window *__restrict__ win, int nwin, int nhub, const double *__restrict__ p,
              double *__restrict__ q, double *partial, ata_gpu_cg_state *st, ata_gpu_cg_rec *rec)
{
    if (ata_ld(&st->stop)) return;
    const int lane = (int)(threadIdx.x % ATA_WARP);
    const long long warp = (long long)blockIdx.x * WPB + threadIdx.x / ATA_WARP;
    const long long nwarps = (long long)gridDim.x * WPB;
    const long long nunits = win ? nwin : (n + ATA_WARP / G0 - 1) / (ATA_WARP / G0);
    double acc = 0.0;
    for (long long u = warp; u < nunits; u += nwarps) {         /* warp-uniform */
        int pos = 0, cnt = ATA_WARP / G0, G = G0;
        if (win) {
            pos = ata_ldg(&win[u].pos);
            const int meta = ata_ldg(&win[u].meta);
            ata_dep();
            cnt = meta & ATA_GPU_WIN_ROWS;
            G = 1 << ATA_GPU_WIN_LOG2G(meta);
        } else {
            pos = (int)(u * cnt);
        }
        const int g = lane / G, lig = lane % G, i = pos + g;
        double s = 0.0;
        if (g < cnt && i < n) {
            const int lo = ata_ldg(&ptr[i]), hi = ata_ldg(&ptr[i + 1]);
            ata_dep();
            s = lane_row_sum(idx, val, lo + lig, hi, G, p);
        }
        for (int off = G / 2; off > 0; off /= 2) s += ata_shfl_xor(s, off, G);
        if (g < cnt && i < n && lig == 0) {
            ata_st(&q[i], s);
            acc += ata_ldg(&p[i]) * s;
        }
    }
    for (int h = (int)blockIdx.x; h < nhub; h += (int)gridDim.x) {     /* hubs: a block each */
        const int i = ata_ldg(&win[nwin + h].pos);
        ata_dep();
        const double s = block_row_sum(ptr, idx, val, i, p);
        if (threadIdx.x == 0) {
            ata_st(&q[i], s);
            acc += ata_ldg(&p[i]) * s;
        }
    }
    double S;
    if (!cg_reduce(acc, partial, st, &S)) return;
    const int m = ata_ld(&st->m);
    ata_st(&rec[m].pq, S);
    if (!cg_finite(S) || S <= 0) ata_st(&st->stop, (int)ATA_GPU_CG_STOP_ITER);
    else ata_st(&st->alpha, ata_ld(&st->rz) / S);
}

__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_cg_p(long long n, const double *__restrict__ z, double *__restrict__ p, int first, ata_gpu_cg_state *st)
{
    if (ata_ld(&st->stop)) return;
    const double beta = first ? 0.0 : ata_ld(&st->beta);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        ata_st(&p[i], beta == 0.0 ? ata_ldg(&z[i]) : ata_ldg(&z[i]) + beta * ata_ld(&p[i]));  /* axpby(1, z, beta, p) */
    if (!first && blockIdx.x == 0 && threadIdx.x == 0) ata_st(&st->m, ata_ld(&st->m) + 1);
}

__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_cg_copy(long long n, const double *__restrict__ r, double *__restrict__ z, const ata_gpu_cg_state *st)
{
    if (ata_ld(&st->stop)) return;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        ata_st(&z[i], ata_ldg(&r[i]));
}

static unsigned grid_for(long long n, int cap)
{
    long long g = (n + ATA_GPU_BLOCK - 1) / ATA_GPU_BLOCK;
    if (g < 1) g = 1;
    if (g > cap) g = cap;
    return (unsigned)g;
}

extern "C" int ata_gpu_empty(int grid, void *stream)
{
    ATA_LAUNCH(k_empty, (unsigned)(grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_spmv(int n, const int *ptr, const int *idx, const double *val, int group,
                            const ata_gpu_window *win, int nwin, int nhub, const double *x, double *y, int grid,
                            void *stream)
{
    if (n <= 0) return 0;
    if (win)
        ATA_LAUNCH(k_spmv_win, (unsigned)(grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, ptr, idx, val, win, nwin,
                   nhub, x, y);
    else
        ATA_LAUNCH(k_spmv, (unsigned)(grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, n, ptr, idx, val,
                   group, x, y);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_dot(long long n, const double *x, const double *y, double *partial, int grid,
                           double *out, void *stream)
{
    const unsigned g = (unsigned)(grid > 0 ? grid : 1);
    ATA_LAUNCH(k_dot_partial, g, ATA_GPU_BLOCK, 0, stream, n, x, y, partial);
    ata_gpu_err e = ata_gpu_get_last_error();
    if (e != ata_gpu_success) return (int)e;
    ATA_LAUNCH(k_dot_final, 1, ATA_GPU_BLOCK, 0, stream, (int)g, (const double *)partial, out);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_axpby(long long n, double a, const double *x, double b, double *y, int grid,
                             void *stream)
{
    if (n <= 0) return 0;
    ATA_LAUNCH(k_axpby, grid_for(n, grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, n, a, x, b, y);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_fill(long long n, double c, double *v, void *stream)
{
    if (n <= 0) return 0;
    ATA_LAUNCH(k_fill, grid_for(n, 4096), ATA_GPU_BLOCK, 0, stream, n, c, v);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_cg_dot(long long n, int what, const double *x, const double *y, double *xu, const double *pu,
                              const double *qu, double *partial, int grid, ata_gpu_cg_state *st, ata_gpu_cg_rec *rec,
                              double rtol, double atol, double dtol, void *stream)
{
    ATA_LAUNCH(k_cg_dot, (unsigned)(grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, n, what, x, y, xu, pu, qu,
               partial, st, rec, rtol, atol, dtol);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_cg_spmv_dot(int n, const int *ptr, const int *idx, const double *val, int group,
                                   const ata_gpu_window *win, int nwin, int nhub, const double *p, double *q,
                                   double *partial, int grid, ata_gpu_cg_state *st, ata_gpu_cg_rec *rec,
                                   void *stream)
{
    ATA_LAUNCH(k_cg_spmv_dot, (unsigned)(grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, n, ptr, idx, val,
               group, win, nwin, nhub, p, q, partial, st, rec);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_cg_p(long long n, const double *z, double *p, int first, int grid, ata_gpu_cg_state *st,
                            void *stream)
{
    ATA_LAUNCH(k_cg_p, grid_for(n, grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, n, z, p, first, st);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_cg_copy(long long n, const double *r, double *z, int grid, const ata_gpu_cg_state *st,
                               void *stream)
{
    ATA_LAUNCH(k_cg_copy, grid_for(n, grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, n, r, z, st);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_occupancy_blas(int *blocks_per_sm)
{
    return (int)ata_occupancy(blocks_per_sm, k_spmv, ATA_GPU_BLOCK, 0);
}
