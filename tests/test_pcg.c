/* test_pcg.c - PCG with ILU0/IC0: serial reference and runtime converge on
 * SPD problems with the same iterations for every policy; breakdowns are
 * reported, never looped on; reordering is transparent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"

static double *ones(int n)
{
    double *b = malloc(n * sizeof *b);
    for (int i = 0; i < n; i++) b[i] = 1;
    return b;
}

/* Reference and every CPU policy: same iteration count, converged. */
static void check_problem(const char *spec, int it_lo, int it_hi)
{
    ata_csr *A;
    TU_OK(ata_gen_from_spec(spec, &A));
    const int n = A->nrows;
    double *b = ones(n), *x = calloc(n, sizeof *x);
    ata_pcg_options opt = ata_pcg_defaults();
    ata_pcg_result res;
    TU_OK(ata_pcg(NULL, A, b, x, &opt, &res));
    printf("%-22s reference: %d iterations, relres %.2e\n", spec, res.iterations, res.relres);
    if (res.iterations < it_lo || res.iterations > it_hi)
        fail_msg("%s: %d iterations, expected %d..%d", spec, res.iterations, it_lo, it_hi);
    assert_true(res.relres <= 1e-6);
    assert_true(tu_true_relres(A, x, b) <= 1e-6);
    const int ref_it = res.iterations;
    ata_context *ctx = tu_cpu_context(2);
    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_LA, ATA_POLICY_GREEDY };
    for (int k = 0; k < 5; k++) {
        opt.plan.policy = pols[k];
        memset(x, 0, n * sizeof *x);
        TU_OK(ata_pcg(ctx, A, b, x, &opt, &res));
        if (res.iterations != ref_it)
            fail_msg("%s %s: %d iterations, reference took %d", spec, ata_policy_name(pols[k]), res.iterations, ref_it);
        assert_true(tu_true_relres(A, x, b) <= 1e-6);
        assert_true(res.L_info.atasks >= 1 && res.U_info.atasks >= 1);
    }
    ata_context_destroy(ctx);
    free(b); free(x);
    ata_csr_free(A);
}

static void test_laplacians(void **state)
{
    (void)state;
    check_problem("lap2d:100", 40, 80);
    check_problem("lap3d:30", 15, 40);
    check_problem("lap3d:20,perm=5", 20, 60);
    check_problem("lap3d27:15", 5, 30);
}

static void test_circuit(void **state)
{
    (void)state;
    check_problem("circuit:50000", 3, 200);
}

/* Real SPD matrices: converge where ILU0 is usable, else the right error. */
static void test_real_spd(void **state)
{
    (void)state;
    struct { const char *name; ata_status want; } cases[] = {
        { "494_bus.mtx", ATA_OK }, { "1138_bus.mtx", ATA_OK },
        { "bcsstk13.mtx", ATA_ERR_INDEFINITE_PC }, { "LFAT5.mtx", ATA_ERR_INDEFINITE_PC },
        { "hangGlider_2.mtx", ATA_ERR_MISSING_DIAG },
    };
    char path[4096];
    ata_context *ctx = tu_cpu_context(2);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        snprintf(path, sizeof path, "%s/real/%s", tu_matrix_dir(), cases[c].name);
        ata_csr *A;
        if (access(path, R_OK) != 0) {
            printf("SKIPPED: %s not found (set ATA_MATRICES)\n", path);
            continue;
        }
        TU_OK(ata_matrix_read(path, &A));
        double *b = ones(A->nrows), *x = calloc(A->nrows, sizeof *x);
        ata_pcg_options opt = ata_pcg_defaults();
        ata_pcg_result res;
        for (int rt = 0; rt < 2; rt++) {
            memset(x, 0, A->nrows * sizeof *x);
            ata_status st = ata_pcg(rt ? ctx : NULL, A, b, x, &opt, &res);
            printf("%-18s %s: %s after %d iterations (%s)\n", cases[c].name, rt ? "cpu" : "reference",
                   ata_status_string(st), res.iterations, ata_last_error());
            assert_int_equal(st, cases[c].want);
            assert_int_equal(res.status, st);
            if (st == ATA_OK) assert_true(tu_true_relres(A, x, b) <= 1e-6);
            else assert_true(res.iterations < opt.maxit);   /* stopped, did not loop */
        }
        free(b); free(x);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

static void test_reorder_and_ic0(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:60,perm=3", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
    tu_random_vec(b, n, 5);
    ata_context *ctx = tu_cpu_context(2);
    const ata_reorder how[] = { ATA_REORDER_NONE, ATA_REORDER_RCM, ATA_REORDER_ND };
    for (int r = 0; r < 3; r++)
        for (int pc = 0; pc < 3; pc++) {
            ata_pcg_options opt = ata_pcg_defaults();
            opt.reorder = how[r];
            opt.precond = (ata_precond)pc;
            opt.rtol = 1e-10;
            ata_pcg_result res;
            memset(x, 0, n * sizeof *x);
            ata_status st = ata_pcg(ctx, A, b, x, &opt, &res);
            if (st != ATA_OK) fail_msg("reorder %s precond %s: %s", ata_reorder_name(how[r]),
                                       ata_precond_name(opt.precond), ata_last_error());
            double rel = tu_true_relres(A, x, b);   /* in the caller's ordering */
            if (!(rel <= 1e-10)) fail_msg("reorder %s precond %s: relres %g", ata_reorder_name(how[r]),
                                          ata_precond_name(opt.precond), rel);
        }
    ata_context_destroy(ctx);
    free(b); free(x);
    ata_csr_free(A);
}

static void test_history_maxit_x0(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:50", &A));
    const int n = A->nrows;
    double *b = ones(n), *x = calloc(n, sizeof *x);
    ata_pcg_options opt = ata_pcg_defaults();
    opt.keep_history = 1;
    ata_pcg_result res;
    TU_OK(ata_pcg(NULL, A, b, x, &opt, &res));
    assert_int_equal(res.history_len, res.iterations + 1);
    assert_true(res.history[0] == 1.0);
    assert_true(res.history[res.iterations] <= 1e-6);
    const int full = res.iterations;
    ata_pcg_result_free(&res);
    /* maxit reached: reported as not converged, with a message. */
    opt.maxit = 3;
    memset(x, 0, n * sizeof *x);
    assert_int_equal(ata_pcg(NULL, A, b, x, &opt, &res), ATA_ERR_NOT_CONVERGED);
    assert_int_equal(res.iterations, 3);
    assert_non_null(strstr(ata_last_error(), "not converged"));
    ata_pcg_result_free(&res);
    /* Warm start from a converged solution: no iteration needed. */
    opt.maxit = 2000;
    opt.keep_history = 0;
    TU_OK(ata_pcg(NULL, A, b, x, &opt, &res));
    assert_true(res.iterations > 0);
    opt.use_x0 = 1;
    TU_OK(ata_pcg(NULL, A, b, x, &opt, &res));
    assert_true(res.iterations < full);
    free(b); free(x);
    ata_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_laplacians),
        cmocka_unit_test(test_circuit),
        cmocka_unit_test(test_real_spd),
        cmocka_unit_test(test_reorder_and_ic0),
        cmocka_unit_test(test_history_maxit_x0),
    };
    return cmocka_run_group_tests_name("pcg", tests, NULL, NULL);
}
