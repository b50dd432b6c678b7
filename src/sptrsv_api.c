/* sptrsv_api.c - the public triangular solve on the runtime: a plan from a
 * caller's matrix, solves of one or several right-hand sides in host or
 * device memory, new values on the plan's pattern. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "clock.h"
#include "csr.h"
#include "plan.h"

ata_status ata_sptrsv_plan_create(ata_context *ctx, const ata_csr *T,
                                  const ata_plan_options *opt, ata_plan **out)
{
    if (!ctx || !T || !out) return ata_fail(ATA_ERR_ARG, "sptrsv plan: NULL argument");
    ata_plan_options o = opt ? *opt : ata_plan_defaults();
    ATA_TRY(plan_check_options(ctx, &o));
    if (T->nrows != T->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "sptrsv plan: matrix is %d x %d", T->nrows, T->ncols);
    ATA_TRY(csr_check_structure(T, "sptrsv plan"));     /* a caller-filled CSR is not trusted */
    const plan_desc d = { .kind = PLAN_SPTRSV, .from = T };
    return plan_create(ctx, &d, &o, out);
}

ata_status ata_sptrsv(ata_plan *p, const double *b, double *x)
{
    if (!p || !b || !x) return ata_fail(ATA_ERR_ARG, "sptrsv: NULL argument");
    if (p->kind != PLAN_SPTRSV) return ata_fail(ATA_ERR_ARG, "sptrsv: plan was made for ILU0");
    if (b == x) return ata_fail(ATA_ERR_ARG, "sptrsv: b and x must not alias");
    ata_context *ctx = p->ctx;
    if (ctx->ops->caps & BACKEND_HOST_VECTORS) {
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

/* ---- transposed solves -------------------------------------------------- */
/* T^T x = b on the plan's own triangle, not a transpose of it: the CSR of T
 * is the CSC of T^T, so the plan of T^T reads the same arrays the other
 * way (pull becomes push and back; the plan.h layouts agree: a lower row's
 * diagonal last is an upper column's diagonal last), under a schedule of
 * the reversed DAG. Made at the first transposed solve, with the plan's
 * options (uplo flipped), on a copy of its triangle in input order (the
 * CPU layout may have renumbered p->T); kept until new values. */
static ata_status transposed_plan(ata_plan *p, ata_plan **out)
{
    if (p->kind != PLAN_SPTRSV) return ata_fail(ATA_ERR_ARG, "sptrsv: plan was made for ILU0");
    if (!p->transposed) {
        ata_csr *T = NULL;
        if (p->ctx->ops->plan_triangle) ATA_TRY(p->ctx->ops->plan_triangle(p, &T));
        if (!T) ATA_TRY(ata_csr_copy(p->T, &T));
        ata_plan_options o = p->opt;
        o.uplo = o.uplo == ATA_LOWER ? ATA_UPPER : ATA_LOWER;
        o.traversal = o.traversal == ATA_PULL ? ATA_PUSH : ATA_PULL;
        const plan_desc d = { .kind = PLAN_SPTRSV, .T = T, .own = PLAN_T_OWNED, .diag_inv = p->diag_inv,
                              .values_f32 = p->values_f32 };
        ATA_TRY(plan_create(p->ctx, &d, &o, &p->transposed));     /* owns T from here */
        p->transposed->parallel_after = p->parallel_after;
    }
    *out = p->transposed;
    return ATA_OK;
}

void plan_drop_transposed(ata_plan *p)
{
    if (!p) return;
    plan_free(p->transposed);
    p->transposed = NULL;
}

/* ---- new values, several right-hand sides, memory spaces ---------------- */

ata_status ata_sptrsv_plan_update_values(ata_plan *p, const ata_csr *T)
{
    if (!p || !T) return ata_fail(ATA_ERR_ARG, "sptrsv plan update: NULL argument");
    if (p->kind != PLAN_SPTRSV) return ata_fail(ATA_ERR_ARG, "sptrsv plan update: plan was made for ILU0");
    if (T->nrows != p->n || T->ncols != p->n)
        return ata_fail(ATA_ERR_ARG, "sptrsv plan update: matrix is %d x %d, the plan's is %d x %d",
                        T->nrows, T->ncols, p->n, p->n);
    /* The plan's triangle, made as ata_sptrsv_plan_create makes it. */
    ata_csr *tri;
    ATA_TRY(plan_extract(p->ctx, T, NULL, &p->opt, "sptrsv plan update", &tri, NULL));
    ata_status st = ATA_OK;
    if (tri->nnz != p->T->nnz)
        st = ata_fail(ATA_ERR_ARG, "sptrsv plan update: the triangle has %d entries, the plan's %d: "
                      "not the pattern the plan was made for", tri->nnz, p->T->nnz);
    if (st == ATA_OK && p->diag_invert) plan_invert_diag(tri);     /* ATA_NON_UNIT_INV */
    if (st == ATA_OK) st = p->ctx->ops->plan_values(p, tri->val);
    ata_csr_free(tri);
    plan_drop_transposed(p);
    return st;
}

/* Columns [B, B + (k-1) ld + n) of two column-major blocks overlap? */
static int blocks_overlap(const double *B, int ldb, const double *X, int ldx, int n, int k)
{
    const double *be = B + (size_t)(k - 1) * ldb + n, *xe = X + (size_t)(k - 1) * ldx + n;
    return B < xe && X < be;
}

ata_status ata_sptrsv_multi(ata_plan *p, int nrhs, const double *B, int ldb, double *X, int ldx)
{
    if (!p || !B || !X) return ata_fail(ATA_ERR_ARG, "sptrsv multi: NULL argument");
    if (p->kind != PLAN_SPTRSV) return ata_fail(ATA_ERR_ARG, "sptrsv multi: plan was made for ILU0");
    if (nrhs < 0) return ata_fail(ATA_ERR_ARG, "sptrsv multi: nrhs = %d", nrhs);
    if (ldb < p->n || ldx < p->n || ldb < 1 || ldx < 1)
        return ata_fail(ATA_ERR_ARG, "sptrsv multi: ldb = %d, ldx = %d (expected >= n = %d)", ldb, ldx, p->n);
    if (nrhs == 0) return ATA_OK;
    if (blocks_overlap(B, ldb, X, ldx, p->n, nrhs)) return ata_fail(ATA_ERR_ARG, "sptrsv multi: B and X overlap");
    ata_context *ctx = p->ctx;
    if ((ctx->ops->caps & BACKEND_HOST_VECTORS) && ctx->ops->sptrsv_multi) {
        double t0 = clock_now();
        ata_status st = ctx->ops->sptrsv_multi(p, nrhs, B, ldb, X, ldx);
        p->info.last_solve_s = clock_now() - t0;
        return st;
    }
    for (int c = 0; c < nrhs; c++)   /* GPU host arrays (or no multi-column solve): column by column */
        ATA_TRY(ata_sptrsv(p, B + (size_t)c * ldb, X + (size_t)c * ldx));
    return ATA_OK;
}

ata_solve_args ata_solve_defaults(void)
{
    ata_solve_args a;
    memset(&a, 0, sizeof a);
    a.mem = ATA_MEM_HOST;
    a.nrhs = 1;
    return a;
}

ata_status ata_sptrsv_ex(ata_plan *p, const double *b, double *x, const ata_solve_args *args)
{
    ata_solve_args a = args ? *args : ata_solve_defaults();
    if (!p || !b || !x) return ata_fail(ATA_ERR_ARG, "sptrsv: NULL argument");
    if (a.mem != ATA_MEM_HOST && a.mem != ATA_MEM_DEVICE) return ata_fail(ATA_ERR_ARG, "sptrsv: unknown memory space %d", (int)a.mem);
    if (a.nrhs < 0) return ata_fail(ATA_ERR_ARG, "sptrsv: nrhs = %d", a.nrhs);
    if (a.transpose != 0 && a.transpose != 1) return ata_fail(ATA_ERR_ARG, "sptrsv: transpose = %d (0 or 1)", a.transpose);
    const int ldb = a.ldb ? a.ldb : p->n, ldx = a.ldx ? a.ldx : p->n;
    if (a.transpose) {      /* (the call's own checks first: a bad call makes no plan) */
        if (a.nrhs > 1 && (ldb < p->n || ldx < p->n))
            return ata_fail(ATA_ERR_ARG, "sptrsv: ldb = %d, ldx = %d (expected >= n = %d)", ldb, ldx, p->n);
        ATA_TRY(transposed_plan(p, &p));
    }
    ata_context *ctx = p->ctx;
    /* Host memory is a host backend's device memory. */
    if (a.mem == ATA_MEM_HOST || (ctx->ops->caps & BACKEND_HOST_VECTORS)) {
        if (a.nrhs == 1) return ata_sptrsv(p, b, x);
        return ata_sptrsv_multi(p, a.nrhs, b, ldb, x, ldx);
    }
    if (p->kind != PLAN_SPTRSV) return ata_fail(ATA_ERR_ARG, "sptrsv: plan was made for ILU0");
    if (ldb < p->n || ldx < p->n) return ata_fail(ATA_ERR_ARG, "sptrsv: ldb = %d, ldx = %d (expected >= n = %d)", ldb, ldx, p->n);
    if (a.nrhs > 0 && blocks_overlap(b, ldb, x, ldx, p->n, a.nrhs)) return ata_fail(ATA_ERR_ARG, "sptrsv: b and x overlap");
    if (!ctx->ops->sptrsv_stream)
        return ata_fail(ATA_ERR_UNSUPPORTED, "sptrsv: the %s backend takes no device pointers", ctx->ops->name);
    double t0 = clock_now();
    for (int c = 0; c < a.nrhs; c++)      /* GPU: one solve per column, in stream order */
        ATA_TRY(ctx->ops->sptrsv_stream(p, b + (size_t)c * ldb, x + (size_t)c * ldx, a.stream));
    p->info.last_solve_s = clock_now() - t0;
    return ATA_OK;
}

