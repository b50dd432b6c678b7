/* factor.c - incomplete factorisation, set up once, refactored on new values
 * (no new analysis), applied many times: ILU0 (runtime ILU0 plan, or the
 * serial reference), IC0 from it, or Jacobi; the diagonal-shift strategy
 * (PETSc's -pc_factor_shift_type in spirit: on a bad pivot, factor again
 * with a larger shift on the diagonal); the public ata_factor_* API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "cpu/cpu_pool.h"
#include "csr.h"
#include "dag.h"
#include "error.h"
#include "factor.h"
#include "ilu0_row.h"
#include "plan.h"
#include "mem.h"

#define FACTOR_MAX_RETRIES 40

ata_factor_options ata_factor_defaults(void)
{
    ata_factor_options o;
    memset(&o, 0, sizeof o);
    o.type = ATA_PC_ILU0;
    o.shift = ATA_SHIFT_NONE;
    o.shift_amount = 0;
    o.plan = ata_plan_defaults();
    return o;
}

static const char *type_name(const factor_core *f)
{
    return f->opt.type == ATA_PC_JACOBI ? "Jacobi" : f->opt.type == ATA_PC_IC0 ? "IC0" : "ILU0";
}

/* The host array holding the pivots after a factorisation. */
static const double *pivot_values(const factor_core *f, const ata_csr **M, const int **dpos)
{
    if (f->opt.type == ATA_PC_JACOBI) { *M = f->D; *dpos = NULL; return f->D->val; }
    if (f->Us) { *M = f->Us; *dpos = f->Us->rowptr; return f->Us->val; }   /* diagonal first */
    *M = f->ctx ? f->fp->T : f->LU;
    *dpos = f->dpos;
    return (*M)->val;
}

static double pivot(const factor_core *f, int i)
{
    const ata_csr *M;
    const int *dpos;
    const double *v = pivot_values(f, &M, &dpos);
    return dpos ? v[dpos[i]] : v[i];
}

/* First row whose pivot the strategy rejects, -1 if none. */
static int first_bad_pivot(const factor_core *f, int positive)
{
    for (int i = 0; i < f->n; i++) {
        double u = pivot(f, i);
        if (!(u != 0 && isfinite(u)) || (positive && !(u > 0))) return i;
    }
    return -1;
}

/* ILU0 on the CPU backend keeps the factors split (f->Ls, f->Us), as the
 * L and U solve plans read them, and factors in place there: row i of A is
 * row i of L followed by row i of U, so A's row i starts at Lp[i] + Up[i].
 * Against factoring a copy of A and splitting the factors into the plans
 * after, this spares a fresh copy of A's values (56 MB at lap3d:100) and
 * two extraction passes; the arithmetic is the same (ilu0_row_split). */
static int uses_split(const ata_context *ctx, const ata_factor_options *o)
{
    return ctx && ctx->backend == ATA_BACKEND_CPU && o->type == ATA_PC_ILU0;
}

typedef struct {
    const int *Aj;          /* A's columns to split (or NULL) */
    const double *val;      /* A's values to split (or NULL) */
    ata_csr *L, *U;
} split_job;

/* Workers' rows, balanced by U's entries (every row has one); each writes
 * its rows' L and U parts, so the first touch of fresh arrays is shared. */
static void split_rows(void *arg, int tid, int nt)
{
    const split_job *J = arg;
    const int *Lp = J->L->rowptr, *Up = J->U->rowptr;
    int r0, r1;
    csr_share_rows(Up, J->U->nrows, tid, nt, &r0, &r1);
    if (J->Aj) {
        int *restrict Lj = J->L->col, *restrict Uj = J->U->col;
        for (int i = r0; i < r1; i++) {
            const int *a = J->Aj + Lp[i] + Up[i], nl = Lp[i + 1] - Lp[i], nu = Up[i + 1] - Up[i];
            for (int q = 0; q < nl; q++) Lj[Lp[i] + q] = a[q];
            for (int q = 0; q < nu; q++) Uj[Up[i] + q] = a[nl + q];
        }
    }
    if (!J->val) return;
    double *restrict Lx = J->L->val, *restrict Ux = J->U->val;
    for (int i = r0; i < r1; i++) {
        const double *a = J->val + Lp[i] + Up[i];
        const int nl = Lp[i + 1] - Lp[i], nu = Up[i + 1] - Up[i];
        for (int q = 0; q < nl; q++) Lx[Lp[i] + q] = a[q];
        for (int q = 0; q < nu; q++) Ux[Up[i] + q] = a[nl + q];
    }
}

static void split_run(const factor_core *f, const int *Aj, const double *val)
{
    split_job J = { Aj, val, f->Ls, f->Us };
    cpu_pool_run_sized(f->ctx->pool, split_rows, &J, (size_t)f->nnz);
}

/* L and U from A (f->dpos: A's diagonals), values too: the ILU0 plan's
 * cost probe reads them before the first factorisation (which, unshifted,
 * then needs no copy of its own: f->split_fresh). */
static ata_status split_pattern(factor_core *f, const ata_csr *A)
{
    const int n = A->nrows, *Ap = A->rowptr;
    int lower = 0;
    for (int i = 0; i < n; i++) lower += f->dpos[i] - Ap[i];
    ATA_TRY(ata_csr_alloc(n, n, lower, &f->Ls));
    ATA_TRY(ata_csr_alloc(n, n, A->nnz - lower, &f->Us));
    int *Lp = f->Ls->rowptr, *Up = f->Us->rowptr;
    Lp[0] = Up[0] = 0;
    for (int i = 0; i < n; i++) {
        Lp[i + 1] = Lp[i] + (f->dpos[i] - Ap[i]);
        Up[i + 1] = Up[i] + (Ap[i + 1] - f->dpos[i]);
    }
    split_run(f, A->col, A->val);
    f->split_fresh = A->val != NULL;
    return ATA_OK;
}

/* Factor (or, for Jacobi, take the diagonal of) A + shift; the values land in
 * fp->T / Ls and Us / LU / D. ZERO_PIVOT is not an error here: the caller scans. */
static ata_status numeric(factor_core *f, double s)
{
    const double *aval = f->aval;
    const int n = f->n;
    const int pd = f->opt.shift == ATA_SHIFT_POSITIVE_DEFINITE;
    double dmax = 0;
    if (s != 0 && pd)
        for (int i = 0; i < n; i++) dmax = fmax(dmax, fabs(aval[f->dpos[i]]));
    ata_csr *dst = f->opt.type == ATA_PC_JACOBI ? f->D : f->ctx ? f->fp->T : f->LU;
    if (f->opt.type == ATA_PC_JACOBI) {
        for (int i = 0; i < n; i++) dst->val[i] = aval[f->dpos[i]];
    } else if (f->Us) {
        if (!f->split_fresh) split_run(f, NULL, aval);     /* setup's split holds A's values */
        f->split_fresh = 0;
    } else {
        if (!dst->val && !(dst->val = mem_alloc(((size_t)f->nnz + 1) * sizeof *dst->val)))
            return ata_fail(ATA_ERR_NOMEM, "factor: out of memory for %d values", f->nnz);
        cpu_pool_copy(f->ctx ? f->ctx->pool : NULL, dst->val, aval, (size_t)f->nnz);
    }
    if (s != 0)
        for (int i = 0; i < n; i++) {
            double *d = f->Us ? &f->Us->val[f->Us->rowptr[i]]
                              : &dst->val[f->opt.type == ATA_PC_JACOBI ? i : f->dpos[i]];
            *d += pd ? (*d != 0 ? s * fabs(*d) : s * dmax) : s;
        }
    if (f->opt.type == ATA_PC_JACOBI) return ATA_OK;   /* the plan takes D's values in propagate() */
    ata_status st;
    if (!f->ctx) {
        st = ata_ref_ilu0(f->LU);
    } else if (f->Us) {
        st = f->ctx->ops->ilu0(f->fp);      /* in place, on the host */
    } else {
        const ata_backend_ops *ops = f->ctx->ops;
        ATA_TRY(ops->plan_values(f->fp, f->fp->T->val));
        st = ops->ilu0(f->fp);
        if (st == ATA_OK || st == ATA_ERR_ZERO_PIVOT) {
            ata_status st2 = ops->ilu0_values(f->fp, f->fp->T->val);
            if (st2 != ATA_OK) return st2;
        }
    }
    return st == ATA_ERR_ZERO_PIVOT ? ATA_OK : st;
}

/* IC0 from ILU0 on a symmetric A: U = D L^T, so C = L D^{1/2} gives A ~ C C^T.
 * Returns C (lower, with diagonal) and Ct = C^T as CSR. */
static ata_status ic0_from_ilu0(const ata_csr *LU, ata_csr **C_out, ata_csr **Ct_out)
{
    ata_csr *C;
    ATA_TRY(ata_csr_tril(LU, &C));
    const int n = C->nrows;
    double *d = mem_alloc(((size_t)n + 1) * sizeof *d);
    if (!d) { ata_csr_free(C); return ata_fail(ATA_ERR_NOMEM, "ic0: out of memory"); }
    for (int i = 0; i < n; i++) d[i] = sqrt(C->val[C->rowptr[i + 1] - 1]);   /* diagonal is last */
    for (int i = 0; i < n; i++)
        for (int q = C->rowptr[i]; q < C->rowptr[i + 1] - 1; q++) C->val[q] *= d[C->col[q]];
    for (int i = 0; i < n; i++) C->val[C->rowptr[i + 1] - 1] = d[i];
    free(d);
    ata_status st = ata_csr_transpose(C, Ct_out);
    if (st != ATA_OK) { ata_csr_free(C); return st; }
    *C_out = C;
    return ATA_OK;
}

/* The matrices the two solves use: (L unit lower, U upper) of the factors,
 * or (C, C^T) for IC0, or D for Jacobi. */
static void solve_matrices(const factor_core *f, const ata_csr **Lm, const ata_csr **Um)
{
    if (f->opt.type == ATA_PC_JACOBI) { *Lm = f->D; *Um = NULL; return; }
    if (f->C) { *Lm = f->C; *Um = f->Ct; return; }
    const ata_csr *F = f->ctx ? f->fp->T : f->LU;
    *Lm = *Um = F;
}

/* New values of F into plan p, made from F (its triangle) by
 * sptrsv_plan_create_mapped or on F itself: through a map from the plan's
 * values to F's, made at the first refactor, not at setup, so a solver that
 * is set up once and never given new values keeps no maps (28 MB at
 * lap3d:100). A plan that reads F in place (p->T == F) has them already. */
static ata_status plan_take(ata_plan *p, const ata_csr *F, int **map)
{
    if (p->T == F) return ATA_OK;
    if (!*map) {
        ata_csr view = *F;
        view.val = NULL;
        ATA_TRY(sptrsv_plan_value_map(p, &view, NULL, map));
    }
    double *scratch = mem_alloc(((size_t)p->info.nnz + 1) * sizeof *scratch);
    if (!scratch) return ata_fail(ATA_ERR_NOMEM, "factor: out of memory");
    ata_status st = sptrsv_plan_values_mapped(p, F->val, *map, scratch);
    free(scratch);
    return st;
}

/* The two solve plans' options: L unit for ILU0 (its diagonal is U's). */
static void solve_options(const factor_core *f, ata_plan_options *lo, ata_plan_options *uo)
{
    *lo = *uo = f->opt.plan;
    lo->uplo = ATA_LOWER;
    lo->diag = f->opt.type == ATA_PC_ILU0 ? ATA_UNIT : ATA_NON_UNIT;
    uo->uplo = ATA_UPPER;
    uo->diag = ATA_NON_UNIT;
}

/* ILU0 on a GPU runtime: the L and U plans split straight off the factors,
 * one streaming pass each. A refactor moves the values through maps
 * (plan_take): no extraction again. */
static ata_status propagate_mapped(factor_core *f)
{
    const ata_csr *F = f->fp->T;
    if (f->Lp) {
        ATA_TRY(plan_take(f->Lp, F, &f->Lmap));
        return plan_take(f->Up, F, &f->Umap);
    }
    double t0 = clock_now();
    ata_plan_options lo, uo;
    solve_options(f, &lo, &uo);
    ATA_TRY(sptrsv_plan_create_mapped(f->ctx, F, NULL, &lo, f->lower, &f->Lp, NULL));   /* L's DAG is A's */
    ata_status st = sptrsv_plan_create_mapped(f->ctx, F, NULL, &uo, NULL, &f->Up, NULL);
    if (st != ATA_OK) {     /* as propagate_split */
        ata_plan_destroy(f->Lp);
        f->Lp = NULL;
        return st;
    }
    /* Once the plans hold the factors, the ILU0 plan's copy is written again
     * only by the next factorisation (numeric() allocates it then): freed
     * now, it is not resident during the solves (56 MB at lap3d:100). */
    free(f->fp->T->val);
    f->fp->T->val = NULL;
    f->analysis_s += clock_now() - t0;
    return ATA_OK;
}

/* Split factors: the solve plans are made on Ls and Us themselves (pull),
 * or on copies (push: CSC; or a CPU layout that stages): those take new
 * factors through maps (plan_take); the others read them in place. */
static ata_status split_plan(factor_core *f, ata_csr *F, ata_plan_options *o, const dag *known,
                             const ata_plan *like, ata_plan **out)
{
    if (o->traversal == ATA_PULL) return sptrsv_plan_create_borrowed(f->ctx, F, o, known, like, out);
    return sptrsv_plan_create_mapped(f->ctx, F, NULL, o, known, out, NULL);
}

static ata_status propagate_split(factor_core *f)
{
    if (f->Lp) {
        ATA_TRY(plan_take(f->Lp, f->Ls, &f->Lmap));
        return plan_take(f->Up, f->Us, &f->Umap);
    }
    double t0 = clock_now();
    ata_plan_options lo, uo;
    solve_options(f, &lo, &uo);
    ATA_TRY(split_plan(f, f->Ls, &lo, f->lower, f->fp, &f->Lp));   /* the ILU0 plan's DAG and schedule */
    ata_status st = split_plan(f, f->Us, &uo, NULL, NULL, &f->Up);
    if (st != ATA_OK) {     /* no L plan without its U plan: the next update makes both */
        ata_plan_destroy(f->Lp);
        f->Lp = NULL;
        return st;
    }
    f->analysis_s += clock_now() - t0;
    return ATA_OK;
}

/* After a good factorisation: IC0, and the solve plans (made on the first
 * call, given new values after). */
static ata_status propagate(factor_core *f)
{
    if (f->Us) return propagate_split(f);
    if (f->ctx && f->opt.type == ATA_PC_ILU0) return propagate_mapped(f);
    if (f->opt.type == ATA_PC_IC0) {
        ata_csr_free(f->C);
        ata_csr_free(f->Ct);
        f->C = f->Ct = NULL;
        ATA_TRY(ic0_from_ilu0(f->ctx ? f->fp->T : f->LU, &f->C, &f->Ct));
    }
    if (!f->ctx) return ATA_OK;
    const ata_csr *Lm, *Um;
    solve_matrices(f, &Lm, &Um);
    if (f->Lp) {
        ATA_TRY(ata_sptrsv_plan_update_values(f->Lp, Lm));
        if (f->Up) ATA_TRY(ata_sptrsv_plan_update_values(f->Up, Um));
        return ATA_OK;
    }
    double t0 = clock_now();
    ata_plan_options lo, uo;
    solve_options(f, &lo, &uo);
    ATA_TRY(ata_sptrsv_plan_create(f->ctx, Lm, &lo, &f->Lp));
    if (Um) ATA_TRY(ata_sptrsv_plan_create(f->ctx, Um, &uo, &f->Up));
    f->analysis_s += clock_now() - t0;
    return ATA_OK;
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

/* Factor A's current values with the shift strategy, then propagate. */
static ata_status factorise(factor_core *f)
{
    const int pd = f->opt.shift == ATA_SHIFT_POSITIVE_DEFINITE;
    double s = 0, s0 = f->opt.shift_amount;
    if (!(s0 > 0)) {
        if (pd) {
            s0 = 1e-3;
        } else {
            double dmax = 0;
            for (int i = 0; i < f->n; i++) dmax = fmax(dmax, fabs(f->aval[f->dpos[i]]));
            s0 = 1e-10 * (dmax > 0 ? dmax : 1);
        }
    }
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
        s = s == 0 ? s0 : s * (pd ? 2 : 10);
    }
    f->factor_s = clock_now() - t0;
    if (f->require_positive) ATA_TRY(check_positive(f));
    ATA_TRY(propagate(f));
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
    return ATA_OK;
}

ata_status factor_core_setup(ata_context *ctx, const ata_csr *A, const ata_factor_options *opt,
                             int require_positive, const factor_hints *hints, factor_core **out)
{
    const factor_hints none = { 0, NULL };
    if (!hints) hints = &none;
    *out = NULL;
    if (!A) return ata_fail(ATA_ERR_ARG, "factor: NULL matrix");
    ATA_TRY(check_options(opt));
    if (A->nrows != A->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "factor: matrix is %d x %d", A->nrows, A->ncols);
    if (A->nrows == 0) return ata_fail(ATA_ERR_EMPTY, "factor: empty matrix");
    factor_core *f = calloc(1, sizeof *f);
    if (!f) return ata_fail(ATA_ERR_NOMEM, "factor: out of memory");
    f->ctx = ctx;
    f->n = A->nrows;
    f->opt = *opt;
    f->require_positive = require_positive;
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
    if (opt->type == ATA_PC_JACOBI) {
        CHECK(ata_csr_alloc(n, n, n, &f->D));
        for (int i = 0; i <= n; i++) f->D->rowptr[i] = i;
        for (int i = 0; i < n; i++) { f->D->col[i] = i; f->D->val[i] = 1; }
        if (ctx) {      /* the diagonal solve is a one-level triangular solve */
            ata_plan_options po = opt->plan;
            po.uplo = ATA_LOWER;
            po.diag = ATA_NON_UNIT;
            CHECK(ata_sptrsv_plan_create(ctx, f->D, &po, &f->Lp));
        }
    } else if (!ctx) {
        CHECK(ata_csr_copy(A, &f->LU));
    } else if (uses_split(ctx, opt)) {
        ata_plan_options po = opt->plan;
        po.uplo = ATA_LOWER; po.diag = ATA_NON_UNIT; po.traversal = ATA_PULL;
        CHECK(split_pattern(f, A));
        CHECK(plan_analyse_ilu0_split(ctx, f->Ls, f->Us, &po, hints->lower, &f->fp));
    } else {
        ata_plan_options po = opt->plan;
        po.uplo = ATA_LOWER; po.diag = ATA_NON_UNIT; po.traversal = ATA_PULL;
        ata_csr *T;
        if (hints->borrow_pattern) {   /* the plan's values only: numeric() writes them */
            if (!(T = calloc(1, sizeof *T)) || !(T->val = mem_alloc(((size_t)A->nnz + 1) * sizeof *T->val))) {
                free(T);
                st = ata_fail(ATA_ERR_NOMEM, "factor: out of memory for %d values", A->nnz);
                goto fail;
            }
            T->nrows = A->nrows;
            T->ncols = A->ncols;
            T->nnz = A->nnz;
            T->rowptr = A->rowptr;
            T->col = A->col;
        } else {
            CHECK(ata_csr_copy(A, &T));
        }
        CHECK(plan_analyse(ctx, T, hints->borrow_pattern ? PLAN_T_PATTERN : PLAN_T_OWNED, PLAN_ILU0, &po, hints->lower, NULL, &f->fp));   /* owns T (or its values) */
    }
    if (ctx) CHECK(ctx->ops->vec_alloc(ctx, (size_t)n, &f->tmp));
    else if (!(f->tmp = mem_calloc((size_t)n + 1, sizeof *f->tmp))) {
        st = ata_fail(ATA_ERR_NOMEM, "factor: out of memory");
        goto fail;
    }
    f->analysis_s = clock_now() - t0;
    f->aval = A->val;
    f->lower = hints->lower;
    st = factorise(f);
    f->aval = NULL;
    f->lower = NULL;
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
    f->aval = NULL;
    return st;
}

ata_status factor_core_apply(factor_core *f, const double *r, double *z, double *t_L, double *t_U)
{
    if (!f->valid)
        return ata_fail(ATA_ERR_ZERO_PIVOT, "%s: no valid factors (the last factorisation failed at row %d)",
                        type_name(f), f->pivot_row);
    const ata_csr *Lm, *Um;
    solve_matrices(f, &Lm, &Um);
    double t0 = clock_now(), t1;
    ata_status st;
    if (!f->ctx) {
        if (!Um) {
            st = ata_ref_sptrsv_csr(Lm, ATA_LOWER, ATA_NON_UNIT, r, z);
            if (t_L) *t_L += clock_now() - t0;
            return st;
        }
        ATA_TRY(ata_ref_sptrsv_csr(Lm, ATA_LOWER, f->opt.type == ATA_PC_ILU0 ? ATA_UNIT : ATA_NON_UNIT, r, f->tmp));
        t1 = clock_now();
        st = ata_ref_sptrsv_csr(Um, ATA_UPPER, ATA_NON_UNIT, f->tmp, z);
    } else {
        const ata_backend_ops *ops = f->ctx->ops;
        if (!f->Up) {
            st = ops->sptrsv(f->Lp, r, z);
            if (t_L) *t_L += clock_now() - t0;
            return st;
        }
        ATA_TRY(ops->sptrsv(f->Lp, r, f->tmp));
        t1 = clock_now();
        st = ops->sptrsv(f->Up, f->tmp, z);
    }
    if (t_L) *t_L += t1 - t0;
    if (t_U) *t_U += clock_now() - t1;
    return st;
}

void factor_core_free(factor_core *f)
{
    if (!f) return;
    if (f->tmp) {
        if (f->ctx) f->ctx->ops->vec_free(f->ctx, f->tmp);
        else free(f->tmp);
    }
    ata_plan_destroy(f->Lp);
    ata_plan_destroy(f->Up);
    plan_free(f->fp);
    ata_csr_free(f->Ls);    /* after the plans that borrow them */
    ata_csr_free(f->Us);
    ata_csr_free(f->LU);
    ata_csr_free(f->C);
    ata_csr_free(f->Ct);
    ata_csr_free(f->D);
    free(f->dpos);
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
    ata_factor *F = calloc(1, sizeof *F);
    if (!F) return ata_fail(ATA_ERR_NOMEM, "factor: out of memory");
    ata_status st = factor_core_setup(ctx, A, &opt, 0, NULL, &F->core);
    if (!F->core) { free(F); return st; }
    F->nnz = A->nnz;
    if (ctx && ctx->backend != ATA_BACKEND_CPU) {
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
    if (!ctx || ctx->backend == ATA_BACKEND_CPU) return factor_core_apply(f, b, x, NULL, NULL);
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
    if (!f->ctx || f->ctx->backend != ATA_BACKEND_CPU) {
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

ata_status ata_factor_solve_ex(ata_factor *F, const double *b, double *x, const ata_solve_args *args)
{
    ata_solve_args a = args ? *args : ata_solve_defaults();
    if (!F || !b || !x) return ata_fail(ATA_ERR_ARG, "factor solve: NULL argument");
    factor_core *f = F->core;
    const int ldb = a.ldb ? a.ldb : f->n, ldx = a.ldx ? a.ldx : f->n;
    if (a.mem != ATA_MEM_HOST && a.mem != ATA_MEM_DEVICE)
        return ata_fail(ATA_ERR_ARG, "factor solve: unknown memory space %d", (int)a.mem);
    if (a.mem == ATA_MEM_HOST || !f->ctx || f->ctx->backend == ATA_BACKEND_CPU) {
        if (a.mem == ATA_MEM_DEVICE && !f->ctx)
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
    if (L) {
        memset(L, 0, sizeof *L);
        if (f->Lp) ATA_TRY(ata_plan_get_info(f->Lp, L));
    }
    if (U) {
        memset(U, 0, sizeof *U);
        if (f->Up) ATA_TRY(ata_plan_get_info(f->Up, U));
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
    if (ctx) {
        if (F->vb) ctx->ops->vec_free(ctx, F->vb);
        if (F->vx) ctx->ops->vec_free(ctx, F->vx);
    }
    factor_core_free(F->core);
    free(F->tmpm);
    free(F);
}
