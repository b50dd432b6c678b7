/* gpu_blas.c - the vector operations PCG needs on the device: vectors,
 * SpMV (a group of lanes per row, as the solves), dot (one read back to the
 * host), axpby. */
#include "gpu_internal.h"

ata_status gpu_vec_alloc(ata_context *ctx, size_t n, double **v)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    ATA_TRY(gpu_malloc((void **)v, (n ? n : 1) * sizeof(double), "vector"));
    gpu_err e = GPU(MemsetAsync)(*v, 0, (n ? n : 1) * sizeof(double), g->stream);
    if (e != GPU_OK) { gpu_free(*v); *v = NULL; return gpu_fail(e, "vector memset"); }
    return ATA_OK;
}

void gpu_vec_free(ata_context *ctx, double *v)
{
    if (!v) return;
    (void)GPU(SetDevice)(GC(ctx)->device);
    gpu_free(v);
}

ata_status gpu_vec_upload(ata_context *ctx, double *dst, const double *src, size_t n)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    return gpu_upload(g, dst, src, n * sizeof(double));
}

ata_status gpu_vec_download(ata_context *ctx, double *dst, const double *src, size_t n)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    return gpu_download(g, dst, src, n * sizeof(double));
}

void gpu_spmv_destroy(ata_context *ctx, void *h)
{
    gpu_spmv_h *s = h;
    if (!s) return;
    (void)GPU(SetDevice)(GC(ctx)->device);
    gpu_free(s->ptr); gpu_free(s->idx); gpu_free(s->val); gpu_free(s->win);
    free(s);
}

/* Is row i of A a hub that a whole block sums (ATA_GPU_MAP=elastic)? */
static int spmv_hub(const gpu_ctx *g, const ata_csr *A, int i)
{
    return g->hub_block && g->group_override <= 0 && A->rowptr[i + 1] - A->rowptr[i] > ATA_GPU_BLOCK_HUB;
}

/* The elastic map's windows over A's rows: a thread per row of up to 8
 * entries, else a group of one lane per 8 entries (up to the warp); the
 * same class rows side by side, W / G of them per window; the hubs last,
 * a window each (run a block each after the others). */
static ata_status spmv_windows(const gpu_ctx *g, const ata_csr *A, gpu_spmv_h *s)
{
    const int n = A->nrows;
    ata_gpu_window *win = malloc(((size_t)n + 1) * sizeof *win);
    if (!win) return ata_fail(ATA_ERR_NOMEM, "spmv: out of memory");
    int nw = 0, prev = -1;
    for (int i = 0; i < n; i++) {
        const int e = A->rowptr[i + 1] - A->rowptr[i];
        if (spmv_hub(g, A, i)) {
            prev = -1;          /* a window holds consecutive rows: none joins across */
            continue;
        }
        int lg = 0;
        while ((1 << lg) * 8 < e && (1 << lg) < g->warp) lg++;
        if (g->group_override > 0)
            for (lg = 0; (1 << lg) < g->group_override && (1 << lg) < g->warp; lg++) {}
        if (lg == prev && (win[nw - 1].meta & ATA_GPU_WIN_ROWS) < (g->warp >> lg)) {
            win[nw - 1].meta++;
            continue;
        }
        win[nw].pos = i;
        win[nw].meta = 1 | lg << 8;
        nw++;
        prev = lg;
    }
    s->nwin = nw;
    for (int i = 0; i < n; i++)
        if (spmv_hub(g, A, i)) {
            win[nw].pos = i;
            win[nw++].meta = 1 | ATA_GPU_WIN_SPLIT | ATA_GPU_WIN_BLOCK;
        }
    s->nhub = nw - s->nwin;
    ata_status st = gpu_malloc((void **)&s->win, ((size_t)nw + 1) * sizeof *win, "spmv windows");
    if (st == ATA_OK) st = gpu_upload((gpu_ctx *)g, s->win, win, (size_t)nw * sizeof *win);
    free(win);
    return st;
}

ata_status gpu_spmv_create(ata_context *ctx, const ata_csr *A, void **h)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    gpu_spmv_h *s = calloc(1, sizeof *s);
    if (!s) return ata_fail(ATA_ERR_NOMEM, "spmv: out of memory");
    ata_status st;
    s->n = A->nrows;
    if ((st = gpu_malloc((void **)&s->ptr, ((size_t)A->nrows + 1) * sizeof(int), "spmv row pointers")) ||
        (st = gpu_malloc((void **)&s->idx, (size_t)A->nnz * sizeof(int), "spmv columns")) ||
        (st = gpu_malloc((void **)&s->val, (size_t)A->nnz * sizeof(double), "spmv values")) ||
        (st = gpu_upload(g, s->ptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof(int))) ||
        (st = gpu_upload(g, s->idx, A->col, (size_t)A->nnz * sizeof(int))) ||
        (st = gpu_upload(g, s->val, A->val, (size_t)A->nnz * sizeof(double)))) {
        gpu_spmv_destroy(ctx, s);
        return st;
    }
    s->G = gpu_pick_group(g, A->nrows ? (double)A->nnz / A->nrows : 1);
    long long per_block = (long long)g->wpb * (g->warp / s->G);
    long long need = (A->nrows + per_block - 1) / per_block, cap = (long long)gpu_resident_blocks(g, 3);
    if (g->elastic && (st = spmv_windows(g, A, s)) != ATA_OK) {
        gpu_spmv_destroy(ctx, s);
        return st;
    }
    if (s->win) need = (s->nwin + g->wpb - 1) / g->wpb;
    if (need < s->nhub) need = s->nhub;    /* a block per hub where the device has them */
    s->grid = (int)(need < 1 ? 1 : need > cap ? cap : need);
    *h = s;
    return ATA_OK;
}

ata_status gpu_spmv(ata_context *ctx, void *h, const double *x, double *y)
{
    gpu_ctx *g = GC(ctx);
    gpu_spmv_h *s = h;
    GCHECK(GPU(SetDevice)(g->device));
    KCHECK(ata_gpu_spmv(s->n, s->ptr, s->idx, s->val, s->G, s->win, s->nwin, s->nhub, x, y, s->grid, SV(g)));
    return ATA_OK;
}

ata_status gpu_dot(ata_context *ctx, size_t n, const double *x, const double *y, double *out)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    KCHECK(ata_gpu_dot((long long)n, x, y, g->dot_partial, g->dot_grid, g->dot_out, SV(g)));
    ATA_TRY(gpu_download(g, g->host_scalar, g->dot_out, sizeof(double)));
    *out = *g->host_scalar;
    return ATA_OK;
}

ata_status gpu_axpby(ata_context *ctx, size_t n, double a, const double *x, double b, double *y)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    KCHECK(ata_gpu_axpby((long long)n, a, x, b, y, gpu_resident_blocks(g, 3), SV(g)));
    return ATA_OK;
}
