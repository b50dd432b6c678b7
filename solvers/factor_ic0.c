/* factor_ic0.c - IC0 from the whole ILU0 (factor_whole.c) of a symmetric
 * A: U = D L^T, so C = L D^{1/2} gives A ~ C C^T; the solve plans are on C
 * (lower, with diagonal) and C^T. */
#include <math.h>
#include <stdlib.h>
#include "csr.h"
#include "error.h"
#include "factor_impl.h"
#include "mem.h"

/* C (lower, with diagonal) and Ct = C^T as CSR, from the ILU0 factors LU. */
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

static void swap_values(ata_csr *a, ata_csr *b)
{
    double *t = a->val;
    a->val = b->val;
    b->val = t;
}

/* New C and C^T; the plans take them (first call: are made on them). A
 * plan that borrows C (factor_plan_create) keeps reading the same arrays:
 * the new values move into them (same pattern every time). */
static ata_status ic0_propagate(factor_core *f)
{
    ata_csr *C = NULL, *Ct = NULL;
    ATA_TRY(ic0_from_ilu0(f->fp->T, &C, &Ct));
    if (f->C) {
        swap_values(f->C, C);
        swap_values(f->Ct, Ct);
        ata_csr_free(C);
        ata_csr_free(Ct);
    } else {
        f->C = C;
        f->Ct = Ct;
    }
    if (f->Lp) {
        ATA_TRY(factor_plan_values(f->Lp, f->C));
        return factor_plan_values(f->Up, f->Ct);
    }
    ata_plan_options lo, uo;
    factor_solve_options(f, &lo, &uo);
    const plan_desc ld = factor_plan_desc(f, f->C, &lo), ud = factor_plan_desc(f, f->Ct, &uo);
    return factor_make_plans(f, &ld, &lo, &ud, &uo);
}

const factor_strategy factor_ic0 = {
    "ic0", factor_whole_setup, factor_whole_load, factor_whole_pivots, factor_whole_factor, ic0_propagate, 0,
    NULL,   /* no precision mixed (factor.c refuses it) */
};
