/* factor.c - incomplete factorisation, set up once, refactored on new values
 * (no new analysis), applied many times: ILU0, IC0 from it, or Jacobi, each
 * kept by a storage strategy (factor_impl.h: split, whole-matrix mapped or
 * in place, IC0, Jacobi) chosen from the backend's capabilities; ctx NULL
 * is the serial reference's backend (ref_backend.h), no branch here. This
 * file keeps the diagonal-shift strategy (PETSc's -pc_factor_shift_type in
 * spirit: on a bad pivot, factor again with a larger shift on the
 * diagonal), the apply through the solve plans and the public ata_factor_*
 * API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "csr.h"
#include "dag.h"
#include "error.h"
#include "factor_impl.h"
#include "ilu0_row.h"
#include "plan.h"
#include "mem.h"
#include "ref_backend.h"

#define FACTOR_MAX_RETRIES 40

ata_factor_options ata_factor_defaults(void)
{
    ata_factor_options o;
    memset(&o, 0, sizeof o);
    o.type = ATA_PC_ILU0;
    o.shift = ATA_SHIFT_NONE;
    o.shift_amount = 0;
    o.plan = ata_plan_defaults();
    o.precision = ATA_PRECISION_DOUBLE;
    return o;
}

int factor_values_f32(const factor_core *f)
{
    return f->opt.precision == ATA_PRECISION_MIXED;
}

static const char *type_name(const factor_core *f)
{
    return f->opt.type == ATA_PC_JACOBI ? "Jacobi" : f->opt.type == ATA_PC_IC0 ? "IC0" : "ILU0";
}

/* The storage strategy for this type on this backend (factor_impl.h). */
static const factor_strategy *factor_strategy_for(const ata_context *ctx, ata_precond type)
{
    if (type == ATA_PC_JACOBI) return &factor_jacobi;
    if (type == ATA_PC_IC0) return &factor_ic0;
    if (ctx->ops->caps & BACKEND_FACTOR_SPLIT) return &factor_split;
    if (ctx->ops->caps & BACKEND_READS_WHOLE) return &factor_inplace;
    return &factor_mapped;
}

static double pivot(const factor_core *f, int i)
{
    const int *pos;
    const double *v = f->how->pivots(f, &pos);
    return pos ? v[pos[i]] : v[i];
}

/* First row whose pivot the strategy rejects, -1 if none (the strategy's
 * pivots found once, not once a row: an indirect call per row was most of
 * this pass). */
static int first_bad_pivot(const factor_core *f, int positive)
{
    const int *pos;
    const double *v = f->how->pivots(f, &pos);
    for (int i = 0; i < f->n; i++) {
        const double u = pos ? v[pos[i]] : v[i];
        if (!(u != 0 && isfinite(u)) || (positive && !(u > 0))) return i;
    }
    return -1;
}

/* Factor (or, for Jacobi, take the diagonal of) A + shift, in the
 * strategy's storage. ZERO_PIVOT is not an error here: the caller scans. */
static ata_status numeric(factor_core *f, double s)
{
    const double *aval = f->aval;
    const int n = f->n;
    const int pd = f->opt.shift == ATA_SHIFT_POSITIVE_DEFINITE;
    double dmax = 0;
    if (s != 0 && pd)
        for (int i = 0; i < n; i++) dmax = fmax(dmax, fabs(aval[f->dpos[i]]));
    ATA_TRY(f->how->load(f));
    if (s != 0) {
        const int *pos;
        double *v = f->how->pivots(f, &pos);
        for (int i = 0; i < n; i++) {
            double *d = &v[pos ? pos[i] : i];
            *d += pd ? (*d != 0 ? s * fabs(*d) : s * dmax) : s;
        }
    }
    ata_status st = f->how->factor(f);
    return st == ATA_ERR_ZERO_PIVOT ? ATA_OK : st;
}

void factor_solve_options(const factor_core *f, ata_plan_options *lo, ata_plan_options *uo)
{
    *lo = *uo = f->opt.plan;
    lo->uplo = ATA_LOWER;
    lo->diag = f->opt.type == ATA_PC_ILU0 ? ATA_UNIT : ATA_NON_UNIT;
    uo->uplo = ATA_UPPER;
    uo->diag = ATA_NON_UNIT;
}

plan_desc factor_plan_desc(const factor_core *f, ata_csr *M, ata_plan_options *opt)
{
    const int f32 = factor_values_f32(f);
    const plan_desc copy = { .kind = PLAN_SPTRSV, .from = M, .values_f32 = f32 },
                    borrow = { .kind = PLAN_SPTRSV, .T = M, .own = PLAN_T_BORROWED, .values_f32 = f32 };
    if (!(f->ctx->ops->caps & BACKEND_READS_WHOLE)) return copy;
    opt->traversal = ATA_PULL;
    return borrow;
}

ata_status factor_plan_create(factor_core *f, ata_csr *M, const ata_plan_options *opt, ata_plan **out)
{
    ata_plan_options o = *opt;
    const plan_desc d = factor_plan_desc(f, M, &o);
    return plan_create(f->ctx, &d, &o, out);
}

ata_status factor_make_plans(factor_core *f, const plan_desc *ld, const ata_plan_options *lo,
                             const plan_desc *ud, const ata_plan_options *uo)
{
    double t0 = clock_now();
    ATA_TRY(plan_create(f->ctx, ld, lo, &f->Lp));
    ata_status st = plan_create(f->ctx, ud, uo, &f->Up);
    if (st != ATA_OK) {
        ata_plan_destroy(f->Lp);
        f->Lp = NULL;
        return st;
    }
    f->analysis_s += clock_now() - t0;
    return ATA_OK;
}

ata_status factor_plan_values(ata_plan *p, const ata_csr *M)
{
    return p->T == M ? ATA_OK : ata_sptrsv_plan_update_values(p, M);
}

ata_status factor_plan_take(ata_plan *p, const ata_csr *F, int **map)
{
    /* In place: the plan reads F itself, unless it reads float copies of
     * F's values (values_f32), which the backend refreshes from F. */
    if (p->T == F) return p->values_f32 ? p->ctx->ops->plan_values(p, F->val) : ATA_OK;
    if (!*map) {
        ata_csr view = *F;
        view.val = NULL;
        ATA_TRY(sptrsv_plan_value_map(p, &view, NULL, map));
    }
    return sptrsv_plan_values_mapped(p, F->val, *map);
}

static ata_status pivot_failure(factor_core *f, int row)
{
    f->pivot_row = row;
    f->valid = 0;
    const double u = pivot(f, row);
    const char *what = f->opt.type == ATA_PC_JACOBI ? "diagonal" : "pivot";
    /* A zero pivot and an overflowed one are different failures: say which. */
    const char *kind = u == 0 ? "zero" : isfinite(u) ? "non-positive" : "non-finite";
    if (f->opt.shift == ATA_SHIFT_NONE)
        return ata_fail(ATA_ERR_ZERO_PIVOT, "%s: %s %s in row %d (u = %g): use a diagonal shift "
                        "(option shift = ATA_SHIFT_NONZERO or ATA_SHIFT_POSITIVE_DEFINITE; CLI --shift nonzero "
                        "or --shift positive-definite)", type_name(f), kind, what, row, u);
    return ata_fail(ATA_ERR_ZERO_PIVOT, "%s: %s in row %d is still %s (u = %g) after %d shifts up to %g "
                    "(shift %s)", type_name(f), what, row, f->opt.shift == ATA_SHIFT_NONZERO ? "zero or non-finite"
                    : "<= 0 or non-finite", u, f->retries, f->shift, ata_shift_name(f->opt.shift));
}

/* PETSc's DIVERGED_INDEFINITE_PC at the source: for an SPD A, a pivot
 * u_ii <= 0 makes the preconditioner indefinite. */
static ata_status check_positive(factor_core *f)
{
    int row = first_bad_pivot(f, 1);
    if (row < 0) return ATA_OK;
    f->pivot_row = row;
    f->valid = 0;
    return ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: %s pivot u_%d,%d = %g <= 0: the preconditioner is indefinite "
                    "(A may still be SPD: incomplete factors of SPD matrices that are not M-matrices can break "
                    "down); use the shift option shift = ATA_SHIFT_POSITIVE_DEFINITE (CLI --shift "
                    "positive-definite), or --precond jacobi", type_name(f), row, row, pivot(f, row));
}

/* Row of entry q of M (M->rowptr[row] <= q < M->rowptr[row + 1]). */
static int entry_row(const ata_csr *M, int q)
{
    int lo = 0, hi = M->nrows;      /* rowptr[lo] <= q < rowptr[hi] */
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        if (M->rowptr[mid] <= q) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* ATA_PRECISION_MIXED: every value of the factors rounded to float, once,
 * where the strategy keeps them (as doubles: the plans that read floats
 * copy them from there, the others read these; the same numbers either
 * way, so a CPU solve stays bitwise the reference's). After the pivots were
 * checked (and inverted, where the solves multiply): a value beyond float's
 * range would become an infinity, a pivot (or its reciprocal) below float's
 * smallest a zero; either is refused, naming the row. */
static ata_status round_factors(factor_core *f)
{
    ata_csr *M[2];
    int nm = 0;
    f->how->factors(f, M, &nm);
    for (int k = 0; k < nm; k++) {
        double *restrict v = M[k]->val;
        const int nnz = M[k]->nnz;
        for (int q = 0; q < nnz; q++) {
            const double r = (float)v[q];
            if (!isfinite(r)) {
                const int i = entry_row(M[k], q);
                return ata_fail(ATA_ERR_NONFINITE, "%s: precision mixed: the factor entry (%d, %d) = %g is beyond "
                                "float's range; use precision double", type_name(f), i, M[k]->col[q], v[q]);
            }
            v[q] = r;
        }
    }
    for (int i = 0; i < f->n; i++)
        if (pivot(f, i) == 0)
            return ata_fail(ATA_ERR_NONFINITE, "%s: precision mixed: the pivot of row %d%s underflows to 0 in float; "
                            "use precision double", type_name(f), i, f->how->inv_pivots ? " (its reciprocal)" : "");
    return ATA_OK;
}

/* The first shift of a retry (ata_factor_options): made only when a pivot
 * fails, so that a refactorisation that needs none pays no pass over A's
 * diagonal. */
static double first_shift(const factor_core *f)
{
    if (f->opt.shift_amount > 0) return f->opt.shift_amount;
    if (f->opt.shift == ATA_SHIFT_POSITIVE_DEFINITE) return 1e-3;
    double dmax = 0;
    for (int i = 0; i < f->n; i++) dmax = fmax(dmax, fabs(f->aval[f->dpos[i]]));
    return 1e-10 * (dmax > 0 ? dmax : 1);
}

/* Factor A's current values with the shift strategy, then propagate. */
static ata_status factorise(factor_core *f)
{
    const int pd = f->opt.shift == ATA_SHIFT_POSITIVE_DEFINITE;
    plan_drop_transposed(f->Lp);    /* their copies of the factors are stale from here */
    plan_drop_transposed(f->Up);
    double s = 0;
    double t0 = clock_now();
    f->retries = 0;
    f->pivot_row = -1;
    f->valid = 0;
    for (;;) {
        ATA_TRY(numeric(f, s));
        f->shift = s;
        int bad = first_bad_pivot(f, pd);
        if (bad < 0) break;
        if (f->opt.shift == ATA_SHIFT_NONE || f->retries >= FACTOR_MAX_RETRIES) {
            f->factor_s = clock_now() - t0;
            return pivot_failure(f, bad);
        }
        f->retries++;
        s = s == 0 ? first_shift(f) : s * (pd ? 2 : 10);
    }
    f->factor_s = clock_now() - t0;
    if (f->require_positive) ATA_TRY(check_positive(f));
    if (f->how->inv_pivots) {   /* the U plans multiply (factor_strategy.inv_pivots) */
        const int *pos;
        double *v = f->how->pivots(f, &pos);
        for (int i = 0; i < f->n; i++) v[pos ? pos[i] : i] = 1.0 / v[pos ? pos[i] : i];
    }
    if (factor_values_f32(f)) ATA_TRY(round_factors(f));
    ATA_TRY(f->how->propagate(f));
    f->valid = 1;
    return ATA_OK;
}

static ata_status check_options(const ata_factor_options *o)
{
    if (o->type != ATA_PC_ILU0 && o->type != ATA_PC_IC0 && o->type != ATA_PC_JACOBI)
        return ata_fail(ATA_ERR_ARG, "factor: type %d is not ilu0, ic0 or jacobi", (int)o->type);
    if ((unsigned)o->shift > ATA_SHIFT_POSITIVE_DEFINITE)
        return ata_fail(ATA_ERR_ARG, "factor: unknown shift type %d", (int)o->shift);
    if (!(o->shift_amount >= 0) || !isfinite(o->shift_amount))
        return ata_fail(ATA_ERR_ARG, "factor: shift_amount = %g (expected >= 0, 0 for the default)", o->shift_amount);
    if ((unsigned)o->precision > ATA_PRECISION_MIXED)
        return ata_fail(ATA_ERR_ARG, "factor: unknown precision %d (expected double or mixed)", (int)o->precision);
    if (o->precision == ATA_PRECISION_MIXED && o->type != ATA_PC_ILU0)
        return ata_fail(ATA_ERR_UNSUPPORTED, "factor: precision mixed (float factors) is built for ILU0 only, not %s; "
                        "use precision double", o->type == ATA_PC_IC0 ? "IC0" : "Jacobi");
    return ATA_OK;
}

/* Every solve plan of the factor (ILU0's and IC0's L and U, Jacobi's D)
 * as factor_hints.in_krylov says, whichever strategy made it. */
static void mark_plans(factor_core *f)
{
    if (f->Lp) f->Lp->parallel_after = f->in_krylov;
    if (f->Up) f->Up->parallel_after = f->in_krylov;
}

ata_status factor_core_setup(ata_context *ctx, const ata_csr *A, const ata_factor_options *opt,
                             int require_positive, const factor_hints *hints, factor_core **out)
{
    const factor_hints none = { 0 };
    if (!hints) hints = &none;
    *out = NULL;
    if (!A) return ata_fail(ATA_ERR_ARG, "factor: NULL matrix");
    ATA_TRY(check_options(opt));
    if (A->nrows != A->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "factor: matrix is %d x %d", A->nrows, A->ncols);
    if (A->nrows == 0) return ata_fail(ATA_ERR_EMPTY, "factor: empty matrix");
    factor_core *f = calloc(1, sizeof *f);
    if (!f) return ata_fail(ATA_ERR_NOMEM, "factor: out of memory");
    f->ctx = ref_backend_or(ctx);
    f->serial = ctx == NULL;
    f->how = factor_strategy_for(f->ctx, opt->type);
    f->n = A->nrows;
    f->opt = *opt;
    f->require_positive = require_positive;
    f->in_krylov = hints->in_krylov;
    f->pivot_row = -1;
    const int n = f->n;
    ata_status st;
    double t0 = clock_now();
#define CHECK(e) do { if ((st = (e)) != ATA_OK) goto fail; } while (0)
    f->nnz = A->nnz;
    if (!(f->dpos = mem_alloc(((size_t)n + 1) * sizeof *f->dpos))) {
        st = ata_fail(ATA_ERR_NOMEM, "factor: out of memory");
        goto fail;
    }
    CHECK(ilu0_find_diag(A, f->dpos));
    CHECK(f->how->setup(f, A, hints));
    CHECK(f->ctx->ops->vec_alloc(f->ctx, (size_t)n, &f->tmp));
    f->analysis_s = clock_now() - t0;
    f->aval = A->val;
    f->lower = hints->lower ? hints->lower : f->own_lower.level ? &f->own_lower : NULL;
    st = factorise(f);
    mark_plans(f);
    f->aval = NULL;
    f->lower = NULL;
    dag_free(&f->own_lower);
    if (st == ATA_ERR_ZERO_PIVOT || st == ATA_ERR_INDEFINITE_PC || st == ATA_OK) {
        *out = f;
        return st;
    }
#undef CHECK
fail:
    factor_core_free(f);
    return st;
}

ata_status factor_core_update(factor_core *f, const double *val)
{
    if (!f || !val) return ata_fail(ATA_ERR_ARG, "factor update: NULL argument");
    f->aval = val;
    ata_status st = factorise(f);
    mark_plans(f);
    f->aval = NULL;
    return st;
}

ata_status factor_core_apply(factor_core *f, const double *r, double *z, double *t_L, double *t_U)
{
    if (!f->valid && f->pivot_row < 0)    /* (precision mixed: a factor beyond float's range) */
        return ata_fail(ATA_ERR_ZERO_PIVOT, "%s: no valid factors (the last factorisation failed)", type_name(f));
    if (!f->valid)
        return ata_fail(ATA_ERR_ZERO_PIVOT, "%s: no valid factors (the last factorisation failed at row %d)",
                        type_name(f), f->pivot_row);
    const ata_backend_ops *ops = f->ctx->ops;
    double t0 = clock_now(), t1;
    ata_status st;
    if (!f->Up) {
        st = ops->sptrsv(f->Lp, r, z);
        if (t_L) *t_L += clock_now() - t0;
        return st;
    }
    ATA_TRY(ops->sptrsv(f->Lp, r, f->tmp));
    t1 = clock_now();
    st = ops->sptrsv(f->Up, f->tmp, z);
    if (t_L) *t_L += t1 - t0;
    if (t_U) *t_U += clock_now() - t1;
    return st;
}

void factor_core_free(factor_core *f)
{
    if (!f) return;
    if (f->tmp) f->ctx->ops->vec_free(f->ctx, f->tmp);
    ata_plan_destroy(f->Lp);
    ata_plan_destroy(f->Up);
    plan_free(f->fp);
    ata_csr_free(f->Ls);    /* after the plans that borrow them */
    ata_csr_free(f->Us);
    ata_csr_free(f->C);
    ata_csr_free(f->Ct);
    ata_csr_free(f->D);
    free(f->dpos);
    dag_free(&f->own_lower);
    free(f->Lmap);
    free(f->Umap);
    free(f);
}

/* ---- public API ---------------------------------------------------------- */
struct ata_factor {
    factor_core *core;
    double *vb, *vx;        /* GPU: device staging of host b and x */
    int nnz;
    double *tmpm;           /* CPU: n x nrhs between the two multi-column solves */
    size_t tmpm_len;
};

ata_status ata_factor_setup(ata_context *ctx, const ata_csr *A, const ata_factor_options *opt_in, ata_factor **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "factor: NULL output");
    *out = NULL;
    ata_factor_options opt = opt_in ? *opt_in : ata_factor_defaults();
    /* A caller-filled CSR is not trusted: the row kernels index by sorted
     * columns (ilu0_row_split sends a column left of the diagonal to L's
     * part). PCG checks its own A before it factors. */
    ATA_TRY(csr_check_structure(A, "factor"));
    ata_factor *F = calloc(1, sizeof *F);
    if (!F) return ata_fail(ATA_ERR_NOMEM, "factor: out of memory");
    ata_status st = factor_core_setup(ctx, A, &opt, 0, NULL, &F->core);
    if (!F->core) { free(F); return st; }
    F->nnz = A->nnz;
    ctx = F->core->ctx;
    if (!(ctx->ops->caps & BACKEND_HOST_VECTORS)) {
        ata_status st2 = ctx->ops->vec_alloc(ctx, (size_t)A->nrows, &F->vb);
        if (st2 == ATA_OK) st2 = ctx->ops->vec_alloc(ctx, (size_t)A->nrows, &F->vx);
        if (st2 != ATA_OK) { ata_factor_destroy(F); return st2; }
    }
    *out = F;
    return st;
}

ata_status ata_factor_update_values(ata_factor *F, const double *val)
{
    if (!F || !val) return ata_fail(ATA_ERR_ARG, "factor update: NULL argument");
    return factor_core_update(F->core, val);
}

/* Host arrays: direct on the CPU and the reference; staged on a GPU, with
 * the host copy of x checked in solve order (the kernels don't flag overflow). */
static ata_status solve_host(ata_factor *F, const double *b, double *x)
{
    factor_core *f = F->core;
    ata_context *ctx = f->ctx;
    if (ctx->ops->caps & BACKEND_HOST_VECTORS) return factor_core_apply(f, b, x, NULL, NULL);
    ATA_TRY(ctx->ops->vec_upload(ctx, F->vb, b, (size_t)f->n));
    ATA_TRY(factor_core_apply(f, F->vb, F->vx, NULL, NULL));
    ATA_TRY(ctx->ops->vec_download(ctx, x, F->vx, (size_t)f->n));
    for (int k = 0; k < f->n; k++) {
        int i = f->Up ? f->n - 1 - k : k;
        if (!isfinite(x[i]))
            return ata_fail(ATA_ERR_NONFINITE, "factor solve: row %d: x = %g is not finite (overflow, or NaN/Inf in b)",
                            i, x[i]);
    }
    return ATA_OK;
}

ata_status ata_factor_solve(ata_factor *F, const double *b, double *x)
{
    if (!F || !b || !x) return ata_fail(ATA_ERR_ARG, "factor solve: NULL argument");
    if (b == x) return ata_fail(ATA_ERR_ARG, "factor solve: b and x must not alias");
    return solve_host(F, b, x);
}

ata_status ata_factor_solve_multi(ata_factor *F, int nrhs, const double *B, int ldb, double *X, int ldx)
{
    if (!F || !B || !X) return ata_fail(ATA_ERR_ARG, "factor solve: NULL argument");
    factor_core *f = F->core;
    const int n = f->n;
    if (nrhs < 0 || ldb < n || ldx < n)
        return ata_fail(ATA_ERR_ARG, "factor solve: nrhs = %d, ldb = %d, ldx = %d (n = %d)", nrhs, ldb, ldx, n);
    if (nrhs == 0) return ATA_OK;
    if (B < X + (size_t)(nrhs - 1) * ldx + n && X < B + (size_t)(nrhs - 1) * ldb + n)
        return ata_fail(ATA_ERR_ARG, "factor solve: B and X overlap");
    if (!f->valid) return factor_core_apply(f, B, X, NULL, NULL);   /* the zero-pivot status */
    /* Column by column where the backend has no multi-column solve, or
     * stages host arrays (GPU). */
    const ata_backend_ops *ops = f->ctx->ops;
    if (!(ops->caps & BACKEND_HOST_VECTORS) || !ops->sptrsv_multi) {
        for (int c = 0; c < nrhs; c++) ATA_TRY(solve_host(F, B + (size_t)c * ldb, X + (size_t)c * ldx));
        return ATA_OK;
    }
    if (!f->Up) return ata_sptrsv_multi(f->Lp, nrhs, B, ldb, X, ldx);
    const size_t need = (size_t)n * nrhs;
    if (F->tmpm_len < need) {
        double *t = realloc(F->tmpm, need * sizeof *t);
        if (!t) return ata_fail(ATA_ERR_NOMEM, "factor solve: out of memory for %d columns", nrhs);
        F->tmpm = t;
        F->tmpm_len = need;
    }
    ATA_TRY(ata_sptrsv_multi(f->Lp, nrhs, B, ldb, F->tmpm, n));
    return ata_sptrsv_multi(f->Up, nrhs, F->tmpm, n, X, ldx);
}

/* (L U)^T x = b: U^T y = b, then L^T x = y, each through its plan's
 * transposed solve (sptrsv_api.c), y in the factor's backend vector (or,
 * for host arrays on a GPU, a host buffer). IC0's C C^T and Jacobi's D are
 * their own transposes. */
static ata_status solve_transposed(ata_factor *F, const double *b, double *x, const ata_solve_args *a, int ldb,
                                   int ldx)
{
    factor_core *f = F->core;
    const int n = f->n;
    ata_solve_args one = *a;
    one.transpose = 0;
    if (f->opt.type != ATA_PC_ILU0) return ata_factor_solve_ex(F, b, x, &one);
    if (!f->valid) return factor_core_apply(f, b, x, NULL, NULL);     /* refuses, naming the pivot */
    if (a->nrhs < 0 || ldb < n || ldx < n)
        return ata_fail(ATA_ERR_ARG, "factor solve: nrhs = %d, ldb = %d, ldx = %d (n = %d)", a->nrhs, ldb, ldx, n);
    if (a->nrhs == 0) return ATA_OK;
    if (b < x + (size_t)(a->nrhs - 1) * ldx + n && x < b + (size_t)(a->nrhs - 1) * ldb + n)   /* as the plain solves */
        return ata_fail(ATA_ERR_ARG, a->nrhs == 1 ? "factor solve: b and x must not alias" : "factor solve: B and X overlap");
    if (a->mem == ATA_MEM_DEVICE && f->serial)
        return ata_fail(ATA_ERR_ARG, "factor solve: device pointers need a context (this factor is the serial reference)");
    double *t = f->tmp;
    if (a->mem == ATA_MEM_HOST && !(f->ctx->ops->caps & BACKEND_HOST_VECTORS)) {
        if (F->tmpm_len < (size_t)n) {
            double *w = realloc(F->tmpm, (size_t)n * sizeof *w);
            if (!w) return ata_fail(ATA_ERR_NOMEM, "factor solve: out of memory for %d rows", n);
            F->tmpm = w;
            F->tmpm_len = (size_t)n;
        }
        t = F->tmpm;
    }
    one.nrhs = 1;
    one.ldb = one.ldx = 0;
    one.transpose = 1;
    for (int c = 0; c < a->nrhs; c++) {
        ATA_TRY(ata_sptrsv_ex(f->Up, b + (size_t)c * ldb, t, &one));
        ATA_TRY(ata_sptrsv_ex(f->Lp, t, x + (size_t)c * ldx, &one));
    }
    return ATA_OK;
}

ata_status ata_factor_solve_ex(ata_factor *F, const double *b, double *x, const ata_solve_args *args)
{
    ata_solve_args a = args ? *args : ata_solve_defaults();
    if (!F || !b || !x) return ata_fail(ATA_ERR_ARG, "factor solve: NULL argument");
    factor_core *f = F->core;
    const int ldb = a.ldb ? a.ldb : f->n, ldx = a.ldx ? a.ldx : f->n;
    if (a.mem != ATA_MEM_HOST && a.mem != ATA_MEM_DEVICE)
        return ata_fail(ATA_ERR_ARG, "factor solve: unknown memory space %d", (int)a.mem);
    if (a.transpose != 0 && a.transpose != 1)
        return ata_fail(ATA_ERR_ARG, "factor solve: transpose = %d (0 or 1)", a.transpose);
    if (a.transpose) return solve_transposed(F, b, x, &a, ldb, ldx);
    if (a.mem == ATA_MEM_HOST || (f->ctx->ops->caps & BACKEND_HOST_VECTORS)) {
        if (a.mem == ATA_MEM_DEVICE && f->serial)
            return ata_fail(ATA_ERR_ARG, "factor solve: device pointers need a context (this factor is the serial reference)");
        if (a.nrhs == 1) return ata_factor_solve(F, b, x);
        return ata_factor_solve_multi(F, a.nrhs, b, ldb, x, ldx);
    }
    /* Device pointers on a GPU: the two solves through the plans, in stream
     * order; tmp is the factor's device vector. */
    if (!f->valid) return factor_core_apply(f, b, x, NULL, NULL);
    if (a.nrhs < 0 || ldb < f->n || ldx < f->n)
        return ata_fail(ATA_ERR_ARG, "factor solve: nrhs = %d, ldb = %d, ldx = %d (n = %d)", a.nrhs, ldb, ldx, f->n);
    ata_solve_args one = a;
    one.nrhs = 1;
    for (int c = 0; c < a.nrhs; c++) {
        const double *bc = b + (size_t)c * ldb;
        double *xc = x + (size_t)c * ldx;
        if (!f->Up) { ATA_TRY(ata_sptrsv_ex(f->Lp, bc, xc, &one)); continue; }
        ATA_TRY(ata_sptrsv_ex(f->Lp, bc, f->tmp, &one));
        ATA_TRY(ata_sptrsv_ex(f->Up, f->tmp, xc, &one));
    }
    return ATA_OK;
}

int ata_factor_pivot_row(const ata_factor *F)
{
    return F ? F->core->pivot_row : -1;
}

ata_status ata_factor_get_info(const ata_factor *F, ata_plan_info *L, ata_plan_info *U)
{
    if (!F) return ata_fail(ATA_ERR_ARG, "factor info: NULL argument");
    const factor_core *f = F->core;
    /* The serial reference reports no plans (zeros), as before it was a
     * backend: its plans are unscheduled copies of nothing the user chose. */
    if (L) {
        memset(L, 0, sizeof *L);
        if (f->Lp && !f->serial) ATA_TRY(ata_plan_get_info(f->Lp, L));
    }
    if (U) {
        memset(U, 0, sizeof *U);
        if (f->Up && !f->serial) ATA_TRY(ata_plan_get_info(f->Up, U));
    }
    return ATA_OK;
}

double ata_factor_shift_used(const ata_factor *F, int *retries)
{
    if (retries) *retries = F ? F->core->retries : 0;
    return F ? F->core->shift : 0;
}

void ata_factor_destroy(ata_factor *F)
{
    if (!F) return;
    ata_context *ctx = F->core->ctx;
    if (F->vb) ctx->ops->vec_free(ctx, F->vb);
    if (F->vx) ctx->ops->vec_free(ctx, F->vx);
    factor_core_free(F->core);
    free(F->tmpm);
    free(F);
}

void ata_factor_plans(const ata_factor *F, const ata_plan **L, const ata_plan **U)
{
    if (L) *L = F && F->core ? F->core->Lp : NULL;
    if (U) *U = F && F->core ? F->core->Up : NULL;
}
