/* spilu0.c - the public ILU0 on the runtime (a pull plan on A's lower
 * pattern, rows factored in place, IKJ). */
#include <string.h>
#include "csr.h"
#include "error.h"
#include "context.h"
#include "ilu0_row.h"
#include "plan.h"

ata_status ata_spilu0(ata_context *ctx, const ata_csr *A,
                      const ata_plan_options *opt, ata_csr **LU)
{
    if (!ctx || !A || !LU) return ata_fail(ATA_ERR_ARG, "spilu0: NULL argument");
    ata_plan_options o = opt ? *opt : ata_plan_defaults();
    o.uplo = ATA_LOWER;
    o.diag = ATA_NON_UNIT;
    o.traversal = ATA_PULL;
    ATA_TRY(plan_check_options(ctx, &o));
    if (A->nrows != A->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "spilu0: matrix is %d x %d", A->nrows, A->ncols);
    ATA_TRY(csr_check_structure(A, "spilu0"));
    ata_csr *F;
    ATA_TRY(ata_csr_copy(A, &F));
    /* One factorisation on the CPU: the analysis (DAG, schedule, layout)
     * costs more than the serial loop it would parallelise (ata-bench
     * ilu0, 2 threads, one run: lap3d:100 chain 81 ms, ca 118, the serial
     * loop 24; circuit:300000 ca 93 against 35). */
    if (o.policy == ATA_POLICY_AUTO && ctx->backend == ATA_BACKEND_CPU) {
        ata_status st = ref_ilu0_checked(F);    /* F: A's copy, checked above */
        if (st == ATA_OK) *LU = F;
        else ata_csr_free(F);
        return st;
    }
    ata_plan *p;
    const plan_desc d = { .kind = PLAN_ILU0, .T = F, .own = PLAN_T_OWNED };
    ATA_TRY(plan_create(ctx, &d, &o, &p));     /* owns F from here */
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

