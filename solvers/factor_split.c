/* factor_split.c - ILU0 kept split (f->Ls, f->Us), as the L and U solve
 * plans read them, and factored in place there (BACKEND_FACTOR_SPLIT: the
 * CPU): row i of A is row i of L followed by row i of U, so A's row i
 * starts at Lp[i] + Up[i]. Against factoring a copy of A and splitting the
 * factors into the plans after, this spares a fresh copy of A's values
 * (56 MB at lap3d:100) and two extraction passes; the arithmetic is the
 * same (ilu0_row_split). */
#include <stdlib.h>
#include "context.h"
#include "cpu/cpu_pool.h"
#include "csr.h"
#include "dag.h"
#include "error.h"
#include "factor_impl.h"
#include "mem.h"

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
 * then needs no copy of its own: f->split_fresh); then the ILU0 plan on
 * them. */
static ata_status split_setup(factor_core *f, const ata_csr *A, const factor_hints *h)
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
    /* L's DAG, once: the ILU0 plan, the L plan and U's reversed levels
     * take it (f->lower; each built it again before: ex19's factor setup
     * 94-109 -> 69-76 ms) */
    const dag *known = h->lower;
    if (!known && !(f->ctx->ops->caps & BACKEND_NO_SCHEDULE)) {
        ATA_TRY(dag_build(n, Lp, f->Ls->col, 1, ATA_LOWER, &f->own_lower));
        known = &f->own_lower;
    }
    ata_plan_options po = f->opt.plan;
    po.uplo = ATA_LOWER; po.diag = ATA_NON_UNIT; po.traversal = ATA_PULL;
    const plan_desc d = { .kind = PLAN_ILU0, .T = f->Ls, .own = PLAN_T_BORROWED, .U = f->Us, .known = known };
    return plan_create(f->ctx, &d, &po, &f->fp);
}

static ata_status split_load(factor_core *f)
{
    if (!f->split_fresh) split_run(f, NULL, f->aval);     /* setup's split holds A's values */
    f->split_fresh = 0;
    return ATA_OK;
}

static double *split_pivots(const factor_core *f, const int **pos)
{
    *pos = f->Us->rowptr;       /* diagonal first */
    return f->Us->val;
}

static ata_status split_factor(factor_core *f)
{
    return f->ctx->ops->ilu0(f->fp);      /* in place, on the host */
}

/* The solve plans are made on Ls and Us themselves (pull), or on copies
 * (push: CSC; or a CPU layout that stages): those take new factors through
 * maps (plan_take); the others read them in place. */
static plan_desc split_plan(const factor_core *f, ata_csr *F, const ata_plan_options *o, const dag *known,
                            const ata_plan *like)
{
    const int f32 = factor_values_f32(f);
    const plan_desc borrow = { .kind = PLAN_SPTRSV, .T = F, .own = PLAN_T_BORROWED, .known = known, .like = like,
                               .values_f32 = f32 };
    const plan_desc copy = { .kind = PLAN_SPTRSV, .from = F, .known = known, .values_f32 = f32 };
    return o->traversal == ATA_PULL ? borrow : copy;
}

static ata_status split_propagate(factor_core *f)
{
    if (f->Lp) {
        ATA_TRY(factor_plan_take(f->Lp, f->Ls, &f->Lmap));
        return factor_plan_take(f->Up, f->Us, &f->Umap);
    }
    ata_plan_options lo, uo;
    factor_solve_options(f, &lo, &uo);
    /* U's DAG: L's levels run backwards where A is structurally symmetric
     * (dag_reverse_upper), so that the upper solve walks the rows of the
     * factors' order back to front, level by level, instead of jumping
     * through U's own levels (measured, circuit:1000000 in PCG:
     * the upper solve took 1.5-2x the lower one). */
    dag own = { 0 }, rev = { 0 };
    const dag *lower = f->lower;
    ata_status st = ATA_OK;
    if (!lower && (st = dag_build(f->Ls->nrows, f->Ls->rowptr, f->Ls->col, 1, ATA_LOWER, &own)) == ATA_OK) lower = &own;
    const int have_rev = st == ATA_OK && dag_reverse_upper(lower, f->Us->rowptr, f->Us->col, &rev) == ATA_OK;
    dag_free(&own);
    if (st != ATA_OK) return st;
    const plan_desc ld = split_plan(f, f->Ls, &lo, f->lower, f->fp);   /* the ILU0 plan's DAG and schedule */
    plan_desc ud = split_plan(f, f->Us, &uo, have_rev ? &rev : NULL, NULL);
    ud.diag_inv = 1;    /* factor_split.inv_pivots */
    st = factor_make_plans(f, &ld, &lo, &ud, &uo);
    dag_free(&rev);
    return st;
}

static void split_factors(const factor_core *f, ata_csr *M[2], int *n)
{
    M[0] = f->Ls;
    M[1] = f->Us;
    *n = 2;
}

const factor_strategy factor_split = {
    "split", split_setup, split_load, split_pivots, split_factor, split_propagate, 1, split_factors,
};
