/* krylov_ops.c - see krylov_ops.h. The fused forms fall back to the plain
 * ones where the backend has no fusion, and the reference always uses the
 * plain ones, so both providers do the arithmetic of their own kernels. */
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "context.h"
#include "error.h"
#include "krylov_ops.h"
#include "mem.h"

ata_status krylov_init(krylov_ops *o, ata_context *ctx, const ata_csr *A, factor_core *pc)
{
    memset(o, 0, sizeof *o);
    o->n = A->nrows;
    o->ctx = ctx;
    o->A = A;
    o->pc = pc;
    return ctx ? ctx->ops->spmv_create(ctx, A, &o->spmv_h) : ATA_OK;
}

ata_status krylov_refresh(krylov_ops *o)
{
    if (!o->ctx) return ATA_OK;
    o->ctx->ops->spmv_destroy(o->ctx, o->spmv_h);
    o->spmv_h = NULL;
    return o->ctx->ops->spmv_create(o->ctx, o->A, &o->spmv_h);
}

void krylov_fini(krylov_ops *o)
{
    if (o->ctx && o->spmv_h) o->ctx->ops->spmv_destroy(o->ctx, o->spmv_h);
    o->spmv_h = NULL;
}

ata_status krylov_alloc(krylov_ops *o, double **v)
{
    if (o->ctx) return o->ctx->ops->vec_alloc(o->ctx, (size_t)o->n, v);
    *v = mem_calloc((size_t)o->n + 1, sizeof **v);
    return *v ? ATA_OK : ata_fail(ATA_ERR_NOMEM, "krylov: out of memory (n = %d)", o->n);
}

void krylov_free(krylov_ops *o, double *v)
{
    if (!v) return;
    if (o->ctx) o->ctx->ops->vec_free(o->ctx, v);
    else free(v);
}

ata_status krylov_put(krylov_ops *o, double *dst, const double *src)
{
    if (o->ctx) return o->ctx->ops->vec_upload(o->ctx, dst, src, (size_t)o->n);
    if (dst != src) memcpy(dst, src, (size_t)o->n * sizeof *dst);
    return ATA_OK;
}

ata_status krylov_get(krylov_ops *o, double *dst, const double *src)
{
    if (o->ctx) return o->ctx->ops->vec_download(o->ctx, dst, src, (size_t)o->n);
    if (dst != src) memcpy(dst, src, (size_t)o->n * sizeof *dst);
    return ATA_OK;
}

static ata_status ref_dot(int n, const double *x, const double *y, double *r)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * y[i];
    *r = s;
    return ATA_OK;
}

ata_status krylov_spmv(krylov_ops *o, const double *x, double *y)
{
    double t0 = clock_now();
    ata_status st = o->ctx ? o->ctx->ops->spmv(o->ctx, o->spmv_h, x, y) : ata_ref_spmv(o->A, x, y);
    o->t_spmv += clock_now() - t0;
    return st;
}

ata_status krylov_dot(krylov_ops *o, const double *x, const double *y, double *r)
{
    double t0 = clock_now();
    ata_status st = o->ctx ? o->ctx->ops->dot(o->ctx, (size_t)o->n, x, y, r) : ref_dot(o->n, x, y, r);
    o->t_vec += clock_now() - t0;
    return st;
}

ata_status krylov_axpby(krylov_ops *o, double a, const double *x, double b, double *y)
{
    double t0 = clock_now();
    ata_status st = ATA_OK;
    if (o->ctx) {
        st = o->ctx->ops->axpby(o->ctx, (size_t)o->n, a, x, b, y);
    } else if (b == 0) {
        for (int i = 0; i < o->n; i++) y[i] = a * x[i];   /* y not read */
    } else {
        for (int i = 0; i < o->n; i++) y[i] = a * x[i] + b * y[i];
    }
    o->t_vec += clock_now() - t0;
    return st;
}

ata_status krylov_spmv_dot(krylov_ops *o, const double *x, double *y, double *xy)
{
    if (!o->ctx || !o->ctx->ops->spmv_dot) {
        ATA_TRY(krylov_spmv(o, x, y));
        return krylov_dot(o, x, y, xy);
    }
    double t0 = clock_now();
    ata_status st = o->ctx->ops->spmv_dot(o->ctx, o->spmv_h, x, y, xy);
    o->t_spmv += clock_now() - t0;
    return st;
}

ata_status krylov_cg_update(krylov_ops *o, double a, const double *p, const double *q, double *x,
                            double *r, double *rr)
{
    if (!o->ctx || !o->ctx->ops->cg_update) {
        ATA_TRY(krylov_axpby(o, a, p, 1.0, x));
        ATA_TRY(krylov_axpby(o, -a, q, 1.0, r));
        return krylov_dot(o, r, r, rr);
    }
    double t0 = clock_now();
    ata_status st = o->ctx->ops->cg_update(o->ctx, (size_t)o->n, a, p, q, x, r, rr);
    o->t_vec += clock_now() - t0;
    return st;
}

ata_status krylov_precond(krylov_ops *o, const double *r, double *z)
{
    if (!o->pc) {
        if (o->ctx) return krylov_axpby(o, 1.0, r, 0.0, z);
        double t0 = clock_now();
        memcpy(z, r, (size_t)o->n * sizeof *z);
        o->t_vec += clock_now() - t0;
        return ATA_OK;
    }
    return factor_core_apply(o->pc, r, z, &o->t_L, &o->t_U);
}
