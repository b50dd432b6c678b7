/* test_ref_backend.c - the serial reference as a backend (ref_backend.h,
 * what ctx == NULL runs on) through the backend-vs-reference suite
 * (backend_suite.c), as test_runtime runs the CPU backend: its plans carry
 * no schedule, so one policy stands for all (it runs none); pull and ILU0
 * must be bitwise the reference kernels', push within 1e-12. No corrupted
 * plan: a serial solve waits on nothing. Plus: ctx == NULL and the
 * reference context give the same PCG bits, and its plans are unscheduled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend_suite.h"
#include "ref_backend.h"

static const ata_policy ref_policies[] = { ATA_POLICY_CA };

static ata_context *ref_ctx(int threads, double timeout)
{
    (void)threads;
    ata_context *ctx = NULL;
    TU_OK(ref_backend_context_create(timeout, &ctx));
    assert_ptr_equal(ctx->ops, &ref_backend_ops);
    return ctx;
}

static const bs_backend ref_backend = {
    .name = "reference", .backend = ATA_BACKEND_CPU, .threads = 1, .available = 1,
    .pols = ref_policies, .npol = 1, .npol_ata = 1,
    .context = ref_ctx,
};

/* No DAG, no schedule: the reference stays as cheap as it was. */
static void test_unscheduled_plan(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:30", &A));
    ata_context *ctx = ref_ctx(0, 10);
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, A, NULL, &p));
    ata_plan_info in;
    TU_OK(ata_plan_get_info(p, &in));
    assert_int_equal(in.levels, 0);
    assert_int_equal(in.atasks, 0);
    assert_null(p->sched.order);
    assert_null(p->done);
    ata_plan_destroy(p);
    ata_context_destroy(ctx);
    ata_csr_free(A);
}

/* PCG on ctx NULL and on a reference context: the same iterates, bit for bit. */
static void test_null_is_reference(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:40,perm=3", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x0 = calloc(n, sizeof *x0), *x1 = calloc(n, sizeof *x1);
    for (int i = 0; i < n; i++) b[i] = 1 + i % 3;
    ata_context *ctx = ref_ctx(0, 10);
    for (int pc = 0; pc < 3; pc++) {
        ata_pcg_options o = ata_pcg_defaults();
        o.precond = pc == 0 ? ATA_PC_ILU0 : pc == 1 ? ATA_PC_IC0 : ATA_PC_JACOBI;
        ata_pcg_result r0, r1;
        memset(x0, 0, n * sizeof *x0);
        memset(x1, 0, n * sizeof *x1);
        TU_OK(ata_pcg(NULL, A, b, x0, &o, &r0));
        TU_OK(ata_pcg(ctx, A, b, x1, &o, &r1));
        assert_int_equal(r0.iterations, r1.iterations);
        assert_memory_equal(x0, x1, n * sizeof *x0);
        ata_pcg_result_free(&r0);
        ata_pcg_result_free(&r1);
    }
    ata_context_destroy(ctx);
    free(b); free(x0); free(x1);
    ata_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        BS_SUITE_TESTS(&ref_backend),
        cmocka_unit_test(test_unscheduled_plan),
        cmocka_unit_test(test_null_is_reference),
    };
    return cmocka_run_group_tests_name("reference backend", tests, NULL, NULL);
}
