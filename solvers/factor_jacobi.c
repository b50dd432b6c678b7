/* factor_jacobi.c - Jacobi: diag(A) as a triangle D, solved as a one-level
 * triangular solve by the plan Lp (made once on D at setup). */
#include "csr.h"
#include "error.h"
#include "factor_impl.h"

static ata_status jacobi_setup(factor_core *f, const ata_csr *A, const factor_hints *h)
{
    (void)A; (void)h;
    const int n = f->n;
    ATA_TRY(ata_csr_alloc(n, n, n, &f->D));
    for (int i = 0; i <= n; i++) f->D->rowptr[i] = i;
    for (int i = 0; i < n; i++) { f->D->col[i] = i; f->D->val[i] = 1; }
    ata_plan_options po = f->opt.plan;
    po.uplo = ATA_LOWER;
    po.diag = ATA_NON_UNIT;
    return factor_plan_create(f, f->D, &po, &f->Lp);
}

static ata_status jacobi_load(factor_core *f)
{
    for (int i = 0; i < f->n; i++) f->D->val[i] = f->aval[f->dpos[i]];
    return ATA_OK;
}

static double *jacobi_pivots(const factor_core *f, const int **pos)
{
    *pos = NULL;
    return f->D->val;
}

static ata_status jacobi_factor(factor_core *f)
{
    (void)f;
    return ATA_OK;
}

/* The plan takes D's values (nothing to do where it reads D itself). */
static ata_status jacobi_propagate(factor_core *f)
{
    return factor_plan_values(f->Lp, f->D);
}

const factor_strategy factor_jacobi = {
    "jacobi", jacobi_setup, jacobi_load, jacobi_pivots, jacobi_factor, jacobi_propagate, 0,
    NULL,   /* no precision mixed (factor.c refuses it) */
};
