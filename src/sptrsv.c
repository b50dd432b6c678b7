/* sptrsv.c - public triangular-solve and ILU0 entry points on the runtime. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "clock.h"
#include "plan.h"
#include "policy.h"

static ata_status check_plan_options(const ata_context *ctx, const ata_plan_options *o)
{
    const policy_desc *pd = policy_get(o->policy);
    if (!pd) return ata_fail(ATA_ERR_ARG, "plan: unknown policy %d", (int)o->policy);
    if (o->S < 0) return ata_fail(ATA_ERR_ARG, "plan: S = %d (expected 0 for auto, or >= 1)", o->S);
    if (!(o->R > 0)) return ata_fail(ATA_ERR_ARG, "plan: R = %g (expected > 0)", o->R);
    if (o->uplo != ATA_LOWER && o->uplo != ATA_UPPER) return ata_fail(ATA_ERR_ARG, "plan: bad uplo");
    if (o->diag != ATA_UNIT && o->diag != ATA_NON_UNIT) return ata_fail(ATA_ERR_ARG, "plan: bad diag");
    if (o->traversal != ATA_PULL && o->traversal != ATA_PUSH) return ata_fail(ATA_ERR_ARG, "plan: bad traversal");
    if ((pd->flags & POLICY_GPU_ONLY) && ctx->backend == ATA_BACKEND_CPU)
        return ata_fail(ATA_ERR_UNSUPPORTED, "policy '%s' (%s) needs the cuda or hip backend", pd->name, pd->description);
    return ATA_OK;
}

/* Remove stored diagonal entries (unit-diagonal solves ignore them). */
static void drop_diagonal(ata_csr *T)
{
    int w = 0;
    for (int i = 0; i < T->nrows; i++) {
        int lo = T->rowptr[i], hi = T->rowptr[i + 1];
        T->rowptr[i] = w;
        for (int q = lo; q < hi; q++)
            if (T->col[q] != i) { T->col[w] = T->col[q]; T->val[w] = T->val[q]; w++; }
    }
    T->rowptr[T->nrows] = w;
    T->nnz = w;
}

ata_status ata_sptrsv_plan_create(ata_context *ctx, const ata_csr *T,
                                  const ata_plan_options *opt, ata_plan **out)
{
    if (!ctx || !T || !out) return ata_fail(ATA_ERR_ARG, "sptrsv plan: NULL argument");
    ata_plan_options o = opt ? *opt : ata_plan_defaults();
    ATA_TRY(check_plan_options(ctx, &o));
    if (T->nrows != T->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "sptrsv plan: matrix is %d x %d", T->nrows, T->ncols);
    ata_csr *tri = NULL, *tc = NULL;
    ATA_TRY(o.uplo == ATA_LOWER ? ata_csr_tril(T, &tri) : ata_csr_triu(T, &tri));
    ata_status st = ATA_OK;
    if (o.diag == ATA_UNIT) drop_diagonal(tri);
    else if ((st = ata_csr_check_diag(tri, "sptrsv plan")) != ATA_OK) { ata_csr_free(tri); return st; }
    if (o.traversal == ATA_PUSH) {
        st = ata_csr_transpose(tri, &tc);
        ata_csr_free(tri);
        if (st != ATA_OK) return st;
        tri = tc;
    }
    return plan_analyse(ctx, tri, PLAN_SPTRSV, &o, out);
}

ata_status ata_sptrsv(ata_plan *p, const double *b, double *x)
{
    if (!p || !b || !x) return ata_fail(ATA_ERR_ARG, "sptrsv: NULL argument");
    if (p->kind != PLAN_SPTRSV) return ata_fail(ATA_ERR_ARG, "sptrsv: plan was made for ILU0");
    if (b == x) return ata_fail(ATA_ERR_ARG, "sptrsv: b and x must not alias");
    ata_context *ctx = p->ctx;
    if (ctx->backend == ATA_BACKEND_CPU) {
        double t0 = clock_now();
        ata_status st = ctx->ops->sptrsv(p, b, x);
        p->info.last_solve_s = clock_now() - t0;
        return st;
    }
    ATA_TRY(ctx->ops->vec_upload(ctx, p->vb, b, (size_t)p->n));
    double t0 = clock_now();     /* the backend's sptrsv returns after the device is done */
    ATA_TRY(ctx->ops->sptrsv(p, p->vb, p->vx));
    p->info.last_solve_s = clock_now() - t0;
    ATA_TRY(ctx->ops->vec_download(ctx, x, p->vx, (size_t)p->n));
    /* GPU kernels don't flag overflow; the host copy is checked instead, in
     * the solve order, so the row named is the one the CPU would name. */
    for (int k = 0; k < p->n; k++) {
        int i = p->opt.uplo == ATA_LOWER ? k : p->n - 1 - k;
        if (!isfinite(x[i]))
            return ata_fail(ATA_ERR_NONFINITE, "sptrsv: row %d: x = %g is not finite (overflow, or NaN/Inf in b)", i, x[i]);
    }
    return ATA_OK;
}

ata_status ata_spilu0(ata_context *ctx, const ata_csr *A,
                      const ata_plan_options *opt, ata_csr **LU)
{
    if (!ctx || !A || !LU) return ata_fail(ATA_ERR_ARG, "spilu0: NULL argument");
    ata_plan_options o = opt ? *opt : ata_plan_defaults();
    o.uplo = ATA_LOWER;
    o.diag = ATA_NON_UNIT;
    o.traversal = ATA_PULL;
    ATA_TRY(check_plan_options(ctx, &o));
    if (A->nrows != A->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "spilu0: matrix is %d x %d", A->nrows, A->ncols);
    ata_csr *F;
    ATA_TRY(ata_csr_copy(A, &F));
    ata_plan *p;
    ATA_TRY(plan_analyse(ctx, F, PLAN_ILU0, &o, &p));   /* owns F from here */
    ata_status st = ctx->ops->ilu0(p);
    if (st == ATA_OK) st = ctx->ops->ilu0_values(p, p->T->val);
    if (st == ATA_OK) { *LU = p->T; p->T = NULL; }
    plan_free(p);
    return st;
}

ata_status ata_spilu0_inplace(ata_context *ctx, ata_csr *A, const ata_plan_options *opt)
{
    ata_csr *LU;
    ATA_TRY(ata_spilu0(ctx, A, opt, &LU));
    memcpy(A->val, LU->val, (size_t)A->nnz * sizeof *A->val);
    ata_csr_free(LU);
    return ATA_OK;
}
