/* sptrsv.c - public triangular-solve and ILU0 entry points on the runtime. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "clock.h"
#include "csr.h"
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
    return policy_check_backend(pd, ctx->backend);
}

/* A solve plan's input (plan.h), the one way every constructor makes it:
 * the triangle of P F P^T (perm NULL: of F; no diagonal if unit, else each
 * diagonal checked), transposed for push. If map_out, map[q] = position in
 * F of the input's entry q: through a push transpose it is carried as the
 * entries' values (exact below 2^53). */
static ata_status plan_input(ata_context *ctx, const ata_csr *F, const int *perm, const ata_plan_options *o,
                             const char *what, ata_csr **tri_out, int **map_out)
{
    const int unit = o->diag == ATA_UNIT;
    const int part = o->uplo == ATA_LOWER ? (unit ? CSR_STRICT_LOWER : CSR_LOWER) : (unit ? CSR_STRICT_UPPER : CSR_UPPER);
    ata_csr *tri = NULL, *tc = NULL;
    int *map = NULL;
    ATA_TRY(csr_permute_part(F, perm, part, ctx->pool, &tri, map_out ? &map : NULL));
    ata_status st = unit || !F->val ? ATA_OK : ata_csr_check_diag(tri, what);
    if (st == ATA_OK && o->traversal == ATA_PUSH) {
        if (map) for (int q = 0; q < tri->nnz; q++) tri->val[q] = map[q];
        st = ata_csr_transpose(tri, &tc);
        if (st == ATA_OK && map)
            for (int q = 0; q < tc->nnz; q++) {
                map[q] = (int)tc->val[q];
                if (F->val) tc->val[q] = F->val[map[q]];
            }
        ata_csr_free(tri);
        tri = tc;
    }
    if (st != ATA_OK) { free(map); ata_csr_free(tri); return st; }
    *tri_out = tri;
    if (map_out) *map_out = map;
    else free(map);
    return ATA_OK;
}

ata_status ata_sptrsv_plan_create(ata_context *ctx, const ata_csr *T,
                                  const ata_plan_options *opt, ata_plan **out)
{
    if (!ctx || !T || !out) return ata_fail(ATA_ERR_ARG, "sptrsv plan: NULL argument");
    ata_plan_options o = opt ? *opt : ata_plan_defaults();
    ATA_TRY(check_plan_options(ctx, &o));
    if (T->nrows != T->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "sptrsv plan: matrix is %d x %d", T->nrows, T->ncols);
    ATA_TRY(csr_check_structure(T, "sptrsv plan"));     /* a caller-filled CSR is not trusted */
    ata_csr *tri;
    ATA_TRY(plan_input(ctx, T, NULL, &o, "sptrsv plan", &tri, NULL));
    return plan_analyse(ctx, tri, PLAN_T_OWNED, PLAN_SPTRSV, &o, NULL, NULL, out);
}

ata_status sptrsv_plan_create_mapped(ata_context *ctx, const ata_csr *F, const int *perm,
                                     const ata_plan_options *opt, const dag *known,
                                     ata_plan **out, int **map_out)
{
    ata_plan_options o = *opt;
    ATA_TRY(check_plan_options(ctx, &o));
    ata_csr *tri;
    ATA_TRY(plan_input(ctx, F, perm, &o, "sptrsv plan", &tri, map_out));
    ata_status st = plan_analyse(ctx, tri, PLAN_T_OWNED, PLAN_SPTRSV, &o, known, NULL, out);   /* owns tri */
    if (st != ATA_OK && map_out) { free(*map_out); *map_out = NULL; }
    return st;
}

ata_status sptrsv_plan_create_borrowed(ata_context *ctx, ata_csr *T, const ata_plan_options *opt,
                                       const dag *known, const ata_plan *like, ata_plan **out)
{
    ata_plan_options o = *opt;
    ATA_TRY(check_plan_options(ctx, &o));
    if (ctx->backend != ATA_BACKEND_CPU || o.traversal != ATA_PULL)
        return ata_fail(ATA_ERR_INTERNAL, "sptrsv plan: a borrowed triangle is for CPU pull plans only");
    return plan_analyse(ctx, T, PLAN_T_BORROWED, PLAN_SPTRSV, &o, known, like, out);
}

ata_status sptrsv_plan_value_map(const ata_plan *p, const ata_csr *F, const int *perm, int **map_out)
{
    ata_csr *tri;
    ATA_TRY(plan_input(p->ctx, F, perm, &p->opt, "sptrsv plan", &tri, map_out));
    ata_csr_free(tri);
    return ATA_OK;
}

ata_status sptrsv_plan_values_mapped(ata_plan *p, const double *fval, const int *map, double *scratch)
{
    const int nnz = p->info.nnz;
    for (int q = 0; q < nnz; q++) scratch[q] = fval[map[q]];
    return p->ctx->ops->plan_values(p, scratch);
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
    ATA_TRY(csr_check_structure(A, "spilu0"));
    ata_csr *F;
    ATA_TRY(ata_csr_copy(A, &F));
    ata_plan *p;
    ATA_TRY(plan_analyse(ctx, F, PLAN_T_OWNED, PLAN_ILU0, &o, NULL, NULL, &p));   /* owns F from here */
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
    ATA_TRY(plan_input(p->ctx, T, NULL, &p->opt, "sptrsv plan update", &tri, NULL));
    ata_status st = ATA_OK;
    if (tri->nnz != p->T->nnz)
        st = ata_fail(ATA_ERR_ARG, "sptrsv plan update: the triangle has %d entries, the plan's %d: "
                      "not the pattern the plan was made for", tri->nnz, p->T->nnz);
    if (st == ATA_OK) st = p->ctx->ops->plan_values(p, tri->val);
    ata_csr_free(tri);
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
    if (ctx->backend == ATA_BACKEND_CPU && ctx->ops->sptrsv_multi) {
        double t0 = clock_now();
        ata_status st = ctx->ops->sptrsv_multi(p, nrhs, B, ldb, X, ldx);
        p->info.last_solve_s = clock_now() - t0;
        return st;
    }
    for (int c = 0; c < nrhs; c++)   /* GPU host arrays: staged column by column */
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
    const int ldb = a.ldb ? a.ldb : p->n, ldx = a.ldx ? a.ldx : p->n;
    ata_context *ctx = p->ctx;
    /* Host memory is the CPU backend's device memory. */
    if (a.mem == ATA_MEM_HOST || ctx->backend == ATA_BACKEND_CPU) {
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

ata_status ata_vec_alloc(ata_context *ctx, size_t n, double **v)
{
    if (!ctx || !v) return ata_fail(ATA_ERR_ARG, "vec alloc: NULL argument");
    ATA_TRY(ctx->ops->vec_alloc(ctx, n, v));
    if (ctx->backend == ATA_BACKEND_CPU) memset(*v, 0, (n ? n : 1) * sizeof **v);   /* zeroed, as on a GPU */
    return ATA_OK;
}

void ata_vec_free(ata_context *ctx, double *v)
{
    if (ctx && v) ctx->ops->vec_free(ctx, v);
}

ata_status ata_vec_upload(ata_context *ctx, double *dst, const double *src_host, size_t n)
{
    if (!ctx || !dst || !src_host) return ata_fail(ATA_ERR_ARG, "vec upload: NULL argument");
    return ctx->ops->vec_upload(ctx, dst, src_host, n);
}

ata_status ata_vec_download(ata_context *ctx, double *dst_host, const double *src, size_t n)
{
    if (!ctx || !dst_host || !src) return ata_fail(ATA_ERR_ARG, "vec download: NULL argument");
    return ctx->ops->vec_download(ctx, dst_host, src, n);
}
