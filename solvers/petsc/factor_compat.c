/* factor_compat.c - see factor_compat.h. IC0 is computed as ILU0: for a
 * symmetric A both give the same preconditioner M = L U (U = D L^T). */
#include "factor_compat.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ata_factor {
    ata_context *ctx;
    ata_factor_options opt;
    ata_csr *A;         /* pattern and current values */
    ata_csr *LU;        /* factors on A's pattern */
    ata_plan *L, *U;
    double *tmp;
    int pivot_row;
};

ata_factor_options ata_factor_defaults(void)
{
    ata_factor_options o;
    memset(&o, 0, sizeof o);
    o.type = ATA_PC_ILU0;
    o.plan = ata_plan_defaults();
    return o;
}

/* The row named by the last error message ("... row 95 ..."), or -1. */
static int compat_error_row(void)
{
    const char *m = strstr(ata_last_error(), "row ");
    int r = -1;
    if (m && sscanf(m + 4, "%d", &r) != 1) r = -1;
    return r;
}

static void compat_release(ata_factor *F)
{
    ata_plan_destroy(F->L);
    ata_plan_destroy(F->U);
    ata_csr_free(F->LU);
    F->L = F->U = NULL;
    F->LU = NULL;
}

static ata_status compat_refactor(ata_factor *F)
{
    ata_status st;
    compat_release(F);
    F->pivot_row = -1;
    st = ata_spilu0(F->ctx, F->A, &F->opt.plan, &F->LU);
    if (st == ATA_ERR_ZERO_PIVOT) F->pivot_row = compat_error_row();
    if (st != ATA_OK) return st;
    ata_plan_options po = F->opt.plan;
    po.uplo = ATA_LOWER;
    po.diag = ATA_UNIT;
    st = ata_sptrsv_plan_create(F->ctx, F->LU, &po, &F->L);
    if (st == ATA_OK) {
        po.uplo = ATA_UPPER;
        po.diag = ATA_NON_UNIT;
        st = ata_sptrsv_plan_create(F->ctx, F->LU, &po, &F->U);
    }
    if (st == ATA_ERR_ZERO_PIVOT) F->pivot_row = compat_error_row();
    return st;
}

ata_status ata_factor_setup(ata_context *ctx, const ata_csr *A, const ata_factor_options *opt, ata_factor **out)
{
    ata_factor *F = calloc(1, sizeof *F);
    ata_status st;
    *out = NULL;
    if (!F) return ATA_ERR_NOMEM;
    F->ctx = ctx;
    F->opt = opt ? *opt : ata_factor_defaults();
    F->pivot_row = -1;
    st = ata_csr_copy(A, &F->A);
    if (st == ATA_OK && !(F->tmp = malloc((size_t)A->nrows * sizeof(double)))) st = ATA_ERR_NOMEM;
    if (st == ATA_OK) st = compat_refactor(F);
    *out = F; /* kept on a failed factorisation: pivot row, later update */
    if (st != ATA_OK && st != ATA_ERR_ZERO_PIVOT) { ata_factor_destroy(F); *out = NULL; }
    return st;
}

ata_status ata_factor_update_values(ata_factor *F, const double *val)
{
    memcpy(F->A->val, val, (size_t)F->A->nnz * sizeof(double));
    return compat_refactor(F);
}

ata_status ata_factor_solve(ata_factor *F, const double *b, double *x)
{
    if (!F->L || !F->U) return ATA_ERR_ARG;
    ata_status st = ata_sptrsv(F->L, b, F->tmp);
    return st == ATA_OK ? ata_sptrsv(F->U, F->tmp, x) : st;
}

int ata_factor_pivot_row(const ata_factor *F) { return F->pivot_row; }

ata_status ata_factor_get_info(const ata_factor *F, ata_plan_info *L, ata_plan_info *U)
{
    if (!F->L || !F->U) return ATA_ERR_ARG;
    ata_status st = ata_plan_get_info(F->L, L);
    return st == ATA_OK ? ata_plan_get_info(F->U, U) : st;
}

void ata_factor_destroy(ata_factor *F)
{
    if (!F) return;
    compat_release(F);
    ata_csr_free(F->A);
    free(F->tmp);
    free(F);
}
