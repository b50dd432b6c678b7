/* fuzz_common.h - shared by the libFuzzer targets: one CPU context for the
 * process, and the agreement checks between the serial reference and the
 * CPU runtime. A disagreement aborts, so libFuzzer keeps the input. */
#ifndef ATA_FUZZ_COMMON_H
#define ATA_FUZZ_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ata.h"

#define FUZZ_FAIL(...) do { fprintf(stderr, "fuzz mismatch: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

static ata_context *fuzz_ctx(void)
{
    static ata_context *ctx;
    if (!ctx) {
        ata_context_options co = ata_context_defaults();
        co.backend = ATA_BACKEND_CPU;
        co.threads = 2;
        if (ata_context_create(&co, &ctx) != ATA_OK) FUZZ_FAIL("context: %s", ata_last_error());
    }
    return ctx;
}

/* Triangular solves of both triangles of square A: the runtime (pull,
 * bitwise) against ata_ref_sptrsv_csr; push must not crash and must fail
 * exactly when its plan does. Then ILU0: ata_spilu0 against ata_ref_ilu0,
 * same status, bitwise-equal factors. */
static void fuzz_compare(const ata_csr *A, ata_policy pol, int S, int push, int unit)
{
    ata_context *ctx = fuzz_ctx();
    const int n = A->nrows;
    double *b = malloc(((size_t)n + 1) * sizeof *b), *x = malloc(((size_t)n + 1) * sizeof *x);
    double *xr = malloc(((size_t)n + 1) * sizeof *xr);
    if (!b || !x || !xr) abort();
    for (int i = 0; i < n; i++) b[i] = 1 + (i % 7) * 0.25;
    for (int uplo = 0; uplo < 2; uplo++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = pol;
        po.S = S;
        po.uplo = (ata_uplo)uplo;
        po.diag = unit ? ATA_UNIT : ATA_NON_UNIT;
        po.traversal = push ? ATA_PUSH : ATA_PULL;
        ata_plan *plan = NULL;
        ata_status ps = ata_sptrsv_plan_create(ctx, A, &po, &plan);
        if (ps != ATA_OK) {
            if (plan) FUZZ_FAIL("plan_create failed (%s) but returned a plan", ata_status_string(ps));
            if (!*ata_last_error()) FUZZ_FAIL("plan_create failed (%s) with no message", ata_status_string(ps));
            continue;
        }
        ata_status rs = ata_ref_sptrsv_csr(A, po.uplo, po.diag, b, xr);
        ata_status ss = ata_sptrsv(plan, b, x);
        if (!push && ss != rs)
            FUZZ_FAIL("sptrsv uplo=%d: runtime %s, reference %s (%s)", uplo, ata_status_string(ss),
                      ata_status_string(rs), ata_last_error());
        if (!push && ss == ATA_OK && memcmp(x, xr, (size_t)n * sizeof *x) != 0)
            FUZZ_FAIL("sptrsv uplo=%d policy=%s S=%d: pull not bitwise equal to the reference", uplo,
                      ata_policy_name(pol), S);
        ata_plan_destroy(plan);
    }
    ata_csr *F = NULL, *LU = NULL;
    if (ata_csr_copy(A, &F) != ATA_OK) abort();
    ata_status rs = ata_ref_ilu0(F);
    ata_plan_options po = ata_plan_defaults();
    po.policy = pol;
    po.S = S;
    ata_status ss = ata_spilu0(ctx, A, &po, &LU);
    if (ss != rs) FUZZ_FAIL("ilu0: runtime %s, reference %s", ata_status_string(ss), ata_status_string(rs));
    if (ss == ATA_OK && memcmp(LU->val, F->val, (size_t)A->nnz * sizeof *F->val) != 0)
        FUZZ_FAIL("ilu0 policy=%s S=%d: factors not bitwise equal to the reference", ata_policy_name(pol), S);
    ata_csr_free(F);
    ata_csr_free(LU);
    free(b); free(x); free(xr);
}

#endif
