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

/* y = A x over windows (the elastic map, gpu_kernels.h): a thread per
 * short row sums in stored order (the reference's bits); a group of G
 * lanes sums its strided entries, then a fixed xor tree. A lane loads
 * ROW_K entries at a time, then their x, then adds them in order. */
__global__ void __launch_bounds__(ATA_GPU_BLOCK)
k_spmv_win(const int *__restrict__ ptr, const int *__restrict__ idx, const double *__restrict__ val,
           const ata_gpu_window *__restrict__ win, int nwin, const double *__restrict__ x, double *__restrict__ y)
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
            for (int q0 = lo + lig; q0 < hi; q0 += G * ATA_GPU_ROW_K) {
                int j[ATA_GPU_ROW_K];
                double v[ATA_GPU_ROW_K];
                for (int t = 0; t < ATA_GPU_ROW_K; t++) {
                    const int q = q0 + G * t;
                    j[t] = q < hi ? ata_ldg(&idx[q]) : 0;
                    v[t] = q < hi ? ata_ldg(&val[q]) : 0.0;
                }
                ata_dep();
                for (int t = 0; t < ATA_GPU_ROW_K; t++)
                    if (q0 + G * t < hi) s += v[t] * ata_ldg(&x[j[t]]);
            }
        }
        for (int off = G / 2; off > 0; off /= 2) s += ata_shfl_xor(s, off, G);
        if (g < cnt && lig == 0) ata_st(&y[i], s);
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
                            const ata_gpu_window *win, int nwin, const double *x, double *y, int grid,
                            void *stream)
{
    if (n <= 0) return 0;
    if (win)
        ATA_LAUNCH(k_spmv_win, (unsigned)(grid > 0 ? grid : 1), ATA_GPU_BLOCK, 0, stream, ptr, idx, val, win, nwin,
                   x, y);
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

extern "C" int ata_gpu_occupancy_blas(int *blocks_per_sm)
{
    return (int)ata_occupancy(blocks_per_sm, k_spmv, ATA_GPU_BLOCK, 0);
}
