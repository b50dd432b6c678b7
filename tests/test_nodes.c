/* test_nodes.c - nodes of a PDE system's rows (cpu_nodes.h) on the CPU:
 * found where rows share their columns (",dofs=D"), not where they do not;
 * solves through them bitwise the reference's, lower and upper, unit and
 * not, by row and in order, on 1 to 3 workers, with blocks cut inside a
 * node; a non-finite x inside a node named as the reference names it; an
 * ILU(0) factor's solves bitwise the serial factor's; what auto chooses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

/* One plan's solve against the reference; returns whether the plan says it
 * found nodes. */
static int check_plan(ata_context *ctx, const ata_csr *A, const char *name, ata_policy pol, int S, ata_uplo uplo,
                      ata_diag diag)
{
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 7);
    TU_OK(ata_ref_sptrsv_csr(A, uplo, diag, b, xr));
    ata_plan_options po = ata_plan_defaults();
    po.policy = pol;
    po.S = S;
    po.uplo = uplo;
    po.diag = diag;
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
    for (int rep = 0; rep < (pol == ATA_POLICY_AUTO ? 8 : 2); rep++) {    /* auto: its timed solves on one worker and all */
        memset(x, 0, n * sizeof *x);
        TU_OK(ata_sptrsv(p, b, x));
        if (!tu_bitwise_equal(x, xr, n))
            fail_msg("%s %s S %d %s %s: not bitwise the reference (%s)", name, ata_policy_name(pol), S,
                     uplo == ATA_LOWER ? "lower" : "upper", diag == ATA_UNIT ? "unit" : "non-unit", ata_plan_choice(p));
    }
    const int nodes = strstr(ata_plan_choice(p), "nodes:") != NULL;
    ata_plan_destroy(p);
    free(b); free(x); free(xr);
    return nodes;
}

static void test_nodes_solves(void **state)
{
    (void)state;
    const char *specs[] = { "lap2d:12x9,dofs=2", "lap2d:10x7,dofs=3", "lap2d:9x8,dofs=4", "lap3d:4x5x3,dofs=5",
                            "lap2d:6,dofs=7", "convdiff:5,dofs=4" };
    const int Ss[] = { 0, 7, 13, 1000000 };
    for (int threads = 1; threads <= 3; threads++) {
        ata_context *ctx = tu_cpu_context(threads);
        for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
            ata_csr *A;
            TU_OK(ata_gen_from_spec(specs[s], &A));
            for (int u = 0; u < 2; u++)
                for (int d = 0; d < 2; d++)
                    for (size_t k = 0; k < sizeof Ss / sizeof *Ss; k++) {
                        const int nodes = check_plan(ctx, A, specs[s], ATA_POLICY_CHAIN, Ss[k],
                                                     u ? ATA_UPPER : ATA_LOWER, d ? ATA_UNIT : ATA_NON_UNIT);
                        /* Whole lines (S past n, or one worker's own cap)
                         * are solved in place: nodes. Short blocks are
                         * staged (a jump every few rows), without. */
                        if (!nodes && (Ss[k] == 1000000 || (Ss[k] == 0 && threads == 1)))
                            fail_msg("%s, %d threads, S %d: chain plan without nodes", specs[s], threads, Ss[k]);
                    }
            /* other policies (level order, staged) must still agree */
            check_plan(ctx, A, specs[s], ATA_POLICY_AUTO, 0, ATA_LOWER, ATA_NON_UNIT);
            check_plan(ctx, A, specs[s], ATA_POLICY_LEVELSET, 0, ATA_UPPER, ATA_UNIT);
            ata_csr_free(A);
        }
        ata_context_destroy(ctx);
    }
}

/* Rows that share no columns with their neighbours have no nodes: the
 * plain loop, and the plan says nothing of nodes. */
static void test_nodes_absent(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const char *specs[] = { "lap2d:30", "lap3d:8", "circuit:2000", "lap2d:9x8,dofs=4,perm=3" };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        for (int u = 0; u < 2; u++)
            if (check_plan(ctx, A, specs[s], ATA_POLICY_CHAIN, 0, u ? ATA_UPPER : ATA_LOWER, ATA_NON_UNIT))
                fail_msg("%s: nodes found where rows share no columns", specs[s]);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* From 16384 rows a sample decides first whether to search every row
 * (nodes_unlikely): a system with nodes everywhere keeps them (by row on
 * one worker, and in the segments of two), a grid of single unknowns and
 * a permuted system (no node) are skipped; solves stay the reference's. */
static void test_nodes_sampled(void **state)
{
    (void)state;
    const char *specs[] = { "lap2d:70,dofs=4", "lap3d:27", "lap2d:70,dofs=4,perm=5" };
    const int want[] = { 1, 0, 0 };
    for (int threads = 1; threads <= 2; threads++) {
        ata_context *ctx = tu_cpu_context(threads);
        for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
            ata_csr *A;
            TU_OK(ata_gen_from_spec(specs[s], &A));
            assert_true(A->nrows >= 16384);
            for (int u = 0; u < 2; u++)
                if (check_plan(ctx, A, specs[s], ATA_POLICY_CHAIN, 1000000, u ? ATA_UPPER : ATA_LOWER, ATA_NON_UNIT) !=
                    want[s])
                    fail_msg("%s, %d threads, %s: nodes %s", specs[s], threads, u ? "upper" : "lower",
                             want[s] ? "not found" : "found");
            ata_csr_free(A);
        }
        ata_context_destroy(ctx);
    }
}

/* An overflow inside a node: the solve fails as the reference does and
 * names the same row (the first bad one in the solve direction). */
static void test_nodes_nonfinite(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:10,dofs=4", &A));
    const int n = A->nrows;
    for (int i = 0; i < n; i++)     /* tiny diagonals: x grows along the solve until it overflows */
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
            if (A->col[q] == i) A->val[q] = 1e-30;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1;
    for (int threads = 1; threads <= 2; threads++) {
        ata_context *ctx = tu_cpu_context(threads);
        for (int u = 0; u < 2; u++) {
            const ata_uplo uplo = u ? ATA_UPPER : ATA_LOWER;
            assert_int_equal(ata_ref_sptrsv_csr(A, uplo, ATA_NON_UNIT, b, x), ATA_ERR_NONFINITE);
            char want[256];
            snprintf(want, sizeof want, "%s", ata_last_error());
            ata_plan_options po = ata_plan_defaults();
            po.policy = ATA_POLICY_CHAIN;
            po.uplo = uplo;
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
            assert_non_null(strstr(ata_plan_choice(p), "nodes:"));
            assert_int_equal(ata_sptrsv(p, b, x), ATA_ERR_NONFINITE);
            if (strcmp(want, ata_last_error()) != 0)
                fail_msg("%s, %d threads: reference says '%s', runtime says '%s'", u ? "upper" : "lower", threads, want,
                         ata_last_error());
            ata_plan_destroy(p);
        }
        ata_context_destroy(ctx);
    }
    free(b); free(x);
    ata_csr_free(A);
}

/* ILU(0) of a PDE system: its L (unit) and U (reciprocal pivots) solved
 * through nodes, bitwise the serial factor's solve. */
static void test_nodes_factor(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:14x11,dofs=4", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 3);
    ata_factor_options fo = ata_factor_defaults();
    ata_factor *R;
    TU_OK(ata_factor_setup(NULL, A, &fo, &R));
    TU_OK(ata_factor_solve(R, b, xr));
    const ata_policy pols[] = { ATA_POLICY_CHAIN, ATA_POLICY_AUTO };
    for (int threads = 1; threads <= 2; threads++) {
        ata_context *ctx = tu_cpu_context(threads);
        for (int k = 0; k < 2; k++) {
            fo.plan.policy = pols[k];
            ata_factor *F;
            TU_OK(ata_factor_setup(ctx, A, &fo, &F));
            TU_OK(ata_factor_solve(F, b, x));
            if (!tu_bitwise_equal(x, xr, n))
                fail_msg("%s, %d threads: factor solve not bitwise the serial factor's", ata_policy_name(pols[k]),
                         threads);
            const ata_plan *L, *U;
            ata_factor_plans(F, &L, &U);
            if (pols[k] == ATA_POLICY_CHAIN && (!strstr(ata_plan_choice(L), "nodes:") || !strstr(ata_plan_choice(U), "nodes:")))
                fail_msg("chain, %d threads: no nodes in the factor's plans (L: %s; U: %s)", threads,
                         ata_plan_choice(L), ata_plan_choice(U));
            ata_factor_destroy(F);
        }
        ata_context_destroy(ctx);
    }
    ata_factor_destroy(R);
    free(b); free(x); free(xr);
    ata_csr_free(A);
}

/* auto on the CPU: chain for a chained solve in nodes, lower or upper, ca
 * for rows without nodes (plan.c, plan_resolve_policy). */
static void test_nodes_auto(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const struct { const char *spec; ata_uplo uplo; ata_policy want; } cases[] = {
        { "lap2d:30,dofs=4", ATA_LOWER, ATA_POLICY_CHAIN }, { "lap2d:30,dofs=4", ATA_UPPER, ATA_POLICY_CHAIN },
        { "lap2d:60", ATA_LOWER, ATA_POLICY_CA }, { "lap2d:60", ATA_UPPER, ATA_POLICY_CA },
        { "lap2d:30,dofs=4,perm=2", ATA_LOWER, ATA_POLICY_CA }, { "lap2d:30,dofs=4,perm=2", ATA_UPPER, ATA_POLICY_CA },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(cases[c].spec, &A));
        ata_plan_options po = ata_plan_defaults();
        po.uplo = cases[c].uplo;
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
        ata_plan_info in;
        TU_OK(ata_plan_get_info(p, &in));
        if (in.policy != cases[c].want)
            fail_msg("%s %s: auto chose %s, not %s (%s)", cases[c].spec, cases[c].uplo == ATA_LOWER ? "lower" : "upper",
                     ata_policy_name(in.policy), ata_policy_name(cases[c].want), ata_plan_choice(p));
        ata_plan_destroy(p);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_solves),
        cmocka_unit_test(test_nodes_absent),
        cmocka_unit_test(test_nodes_sampled),
        cmocka_unit_test(test_nodes_nonfinite),
        cmocka_unit_test(test_nodes_factor),
        cmocka_unit_test(test_nodes_auto),
    };
    return cmocka_run_group_tests_name("nodes", tests, NULL, NULL);
}
