/* krylov_ops.c - see krylov_ops.h. Every provider is a backend: ctx NULL
 * is the serial reference's (ref_backend.c), whose kernels are the plain
 * loops this file held before. The fused forms fall back to the plain ones
 * where the backend has no fusion (the reference has none), so each
 * backend does the arithmetic of its own kernels. */
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "context.h"
#include "error.h"
#include "krylov_ops.h"
#include "mem.h"
#include "ref_backend.h"

ata_status krylov_init(krylov_ops *o, ata_context *ctx, const ata_csr *A, factor_core *pc)
{
    memset(o, 0, sizeof *o);
    o->n = A->nrows;
    o->ctx = ref_backend_or(ctx);
    o->A = A;
    o->pc = pc;
    return o->ctx->ops->spmv_create(o->ctx, A, &o->spmv_h);
}

ata_status krylov_refresh(krylov_ops *o)
{
    if (o->dev_cg) {        /* made on the old handle */
        o->ctx->ops->cg_free(o->ctx, o->dev_cg);
        free(o->dev_cg);
        o->dev_cg = NULL;
    }
    o->ctx->ops->spmv_destroy(o->ctx, o->spmv_h);
    o->spmv_h = NULL;
    return o->ctx->ops->spmv_create(o->ctx, o->A, &o->spmv_h);
}

void krylov_fini(krylov_ops *o)
{
    if (o->dev_cg) {
        o->ctx->ops->cg_free(o->ctx, o->dev_cg);
        free(o->dev_cg);
        o->dev_cg = NULL;
    }
    if (o->ctx && o->spmv_h) o->ctx->ops->spmv_destroy(o->ctx, o->spmv_h);
    o->spmv_h = NULL;
}

ata_status krylov_alloc(krylov_ops *o, double **v)
{
    return o->ctx->ops->vec_alloc(o->ctx, (size_t)o->n, v);
}

void krylov_free(krylov_ops *o, double *v)
{
    if (v) o->ctx->ops->vec_free(o->ctx, v);
}

ata_status krylov_put(krylov_ops *o, double *dst, const double *src)
{
    return o->ctx->ops->vec_upload(o->ctx, dst, src, (size_t)o->n);
}

ata_status krylov_get(krylov_ops *o, double *dst, const double *src)
{
    return o->ctx->ops->vec_download(o->ctx, dst, src, (size_t)o->n);
}

ata_status krylov_spmv(krylov_ops *o, const double *x, double *y)
{
    double t0 = clock_now();
    ata_status st = o->ctx->ops->spmv(o->ctx, o->spmv_h, x, y);
    o->t_spmv += clock_now() - t0;
    return st;
}

ata_status krylov_dot(krylov_ops *o, const double *x, const double *y, double *r)
{
    double t0 = clock_now();
    ata_status st = o->ctx->ops->dot(o->ctx, (size_t)o->n, x, y, r);
    o->t_vec += clock_now() - t0;
    return st;
}

ata_status krylov_axpby(krylov_ops *o, double a, const double *x, double b, double *y)
{
    double t0 = clock_now();
    ata_status st = o->ctx->ops->axpby(o->ctx, (size_t)o->n, a, x, b, y);
    o->t_vec += clock_now() - t0;
    return st;
}

ata_status krylov_spmv_dot(krylov_ops *o, const double *x, double *y, double *xy)
{
    if (!o->ctx->ops->spmv_dot) {
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
    if (!o->ctx->ops->cg_update) {
        ATA_TRY(krylov_axpby(o, a, p, 1.0, x));
        ATA_TRY(krylov_axpby(o, -a, q, 1.0, r));
        return krylov_dot(o, r, r, rr);
    }
    double t0 = clock_now();
    ata_status st = o->ctx->ops->cg_update(o->ctx, (size_t)o->n, a, p, q, x, r, rr);
    o->t_vec += clock_now() - t0;
    return st;
}

/* Without a preconditioner z = 1.0 * r: exact, as the copy it replaces. */
ata_status krylov_precond(krylov_ops *o, const double *r, double *z)
{
    if (!o->pc) return krylov_axpby(o, 1.0, r, 0.0, z);
    return factor_core_apply(o->pc, r, z, &o->t_L, &o->t_U);
}
