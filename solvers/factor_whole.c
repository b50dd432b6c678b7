/* factor_whole.c - ILU0 on a whole copy of A: the ILU0 plan's T (A's
 * pattern borrowed where the caller says it outlives the factor), factored
 * by the backend and read back there. Two ways to hand the factors to the
 * solve plans:
 *   factor_mapped (GPUs): the L and U plans split straight off the factors,
 *     one streaming pass each; a refactor moves the values through maps
 *     (plan_take): no extraction again.
 *   factor_inplace (BACKEND_READS_WHOLE: the serial reference): the L and U
 *     plans borrow T itself and read their triangle in it; nothing to copy,
 *     ever (the reference solved on its LU this way before it was a
 *     backend: same loops, same bits). */
#include <stdlib.h>
#include "context.h"
#include "cpu/cpu_pool.h"
#include "error.h"
#include "factor_impl.h"
#include "mem.h"

ata_status factor_whole_setup(factor_core *f, const ata_csr *A, const factor_hints *h)
{
    ata_plan_options po = f->opt.plan;
    po.uplo = ATA_LOWER; po.diag = ATA_NON_UNIT; po.traversal = ATA_PULL;
    ata_csr *T;
    if (h->borrow_pattern) {   /* the plan's values only: load writes them */
        if (!(T = calloc(1, sizeof *T)) || !(T->val = mem_alloc(((size_t)A->nnz + 1) * sizeof *T->val))) {
            free(T);
            return ata_fail(ATA_ERR_NOMEM, "factor: out of memory for %d values", A->nnz);
        }
        T->nrows = A->nrows;
        T->ncols = A->ncols;
        T->nnz = A->nnz;
        T->rowptr = A->rowptr;
        T->col = A->col;
    } else {
        ATA_TRY(ata_csr_copy(A, &T));
    }
    const plan_desc d = { .kind = PLAN_ILU0, .T = T, .own = h->borrow_pattern ? PLAN_T_PATTERN : PLAN_T_OWNED,
                          .known = h->lower };
    return plan_create(f->ctx, &d, &po, &f->fp);   /* owns T (or its values) */
}

ata_status factor_whole_load(factor_core *f)
{
    ata_csr *T = f->fp->T;
    if (!T->val && !(T->val = mem_alloc(((size_t)f->nnz + 1) * sizeof *T->val)))
        return ata_fail(ATA_ERR_NOMEM, "factor: out of memory for %d values", f->nnz);
    cpu_pool_copy(f->ctx->pool, T->val, f->aval, (size_t)f->nnz);
    return ATA_OK;
}

double *factor_whole_pivots(const factor_core *f, const int **pos)
{
    *pos = f->dpos;
    return f->fp->T->val;
}

/* (On a host backend, plan_values and ilu0_values find T->val is the
 * plan's own and move nothing.) */
ata_status factor_whole_factor(factor_core *f)
{
    const ata_backend_ops *ops = f->ctx->ops;
    ATA_TRY(ops->plan_values(f->fp, f->fp->T->val));
    ata_status st = ops->ilu0(f->fp);
    if (st == ATA_OK || st == ATA_ERR_ZERO_PIVOT) {
        ata_status st2 = ops->ilu0_values(f->fp, f->fp->T->val);
        if (st2 != ATA_OK) return st2;
    }
    return st;
}

void factor_whole_factors(const factor_core *f, ata_csr *M[2], int *n)
{
    M[0] = f->fp->T;
    *n = 1;
}

static ata_status mapped_propagate(factor_core *f)
{
    const ata_csr *F = f->fp->T;
    if (f->Lp) {
        ATA_TRY(factor_plan_take(f->Lp, F, &f->Lmap));
        return factor_plan_take(f->Up, F, &f->Umap);
    }
    ata_plan_options lo, uo;
    factor_solve_options(f, &lo, &uo);
    const int f32 = factor_values_f32(f);     /* (a GPU keeps them as doubles: README) */
    const plan_desc ld = { .kind = PLAN_SPTRSV, .from = F, .known = f->lower, .values_f32 = f32 },   /* L's DAG is A's */
                    ud = { .kind = PLAN_SPTRSV, .from = F, .values_f32 = f32 };
    ATA_TRY(factor_make_plans(f, &ld, &lo, &ud, &uo));
    /* Once the plans hold the factors, the ILU0 plan's copy is written again
     * only by the next factorisation (load allocates it then): freed now,
     * it is not resident during the solves (56 MB at lap3d:100). */
    free(f->fp->T->val);
    f->fp->T->val = NULL;
    return ATA_OK;
}

/* The plans read T in place: made once, new factors need nothing. */
static ata_status inplace_propagate(factor_core *f)
{
    if (f->Lp) return ATA_OK;
    ata_plan_options lo, uo;
    factor_solve_options(f, &lo, &uo);
    const plan_desc ld = factor_plan_desc(f, f->fp->T, &lo);
    plan_desc ud = factor_plan_desc(f, f->fp->T, &uo);
    ud.diag_inv = 1;    /* factor_inplace.inv_pivots */
    return factor_make_plans(f, &ld, &lo, &ud, &uo);
}

const factor_strategy factor_mapped = {
    "mapped", factor_whole_setup, factor_whole_load, factor_whole_pivots, factor_whole_factor, mapped_propagate, 0,
    factor_whole_factors,
};

const factor_strategy factor_inplace = {
    "in place", factor_whole_setup, factor_whole_load, factor_whole_pivots, factor_whole_factor, inplace_propagate, 1,
    factor_whole_factors,
};
