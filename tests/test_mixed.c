/* test_mixed.c - factors in fp32, arithmetic in fp64 (ATA_PRECISION_MIXED):
 * the serial reference's mixed factor equals a by-hand one (ILU0 in double,
 * U's pivots inverted, every value rounded to float, double solves); every
 * CPU policy and layout gives its bits (pull; push within 1e-12), with
 * several columns and transposed too; the answers differ from double's
 * where the factors are not floats; the CPU plans count 4 bytes a value;
 * new values equal a fresh setup; a factor beyond float's range, IC0,
 * Jacobi and PCG without ILU0 are refused; CG, BiCGStab and GMRES converge
 * in about double's iterations. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"



static ata_factor_options mixed(ata_policy pol, ata_traversal tr)
{
    ata_factor_options fo = ata_factor_defaults();
    fo.precision = ATA_PRECISION_MIXED;
    fo.plan.policy = pol;
    fo.plan.traversal = tr;
    return fo;
}

/* By hand: ILU0 of A in double, U's pivots inverted, every value rounded
 * to float once; then L (unit) and U (times the rounded reciprocal) in
 * double, in the reference's order. */
static void manual_mixed(const ata_csr *A, const double *b, double *x)
{
    const int n = A->nrows;
    double *t = malloc((size_t)n * sizeof *t);
    ata_csr *LU;
    TU_OK(ata_csr_copy(A, &LU));
    TU_OK(ata_ref_ilu0(LU));
    for (int i = 0; i < n; i++)
        for (int q = LU->rowptr[i]; q < LU->rowptr[i + 1]; q++)
            if (LU->col[q] == i) LU->val[q] = 1.0 / LU->val[q];
    for (int q = 0; q < LU->nnz; q++) LU->val[q] = (float)LU->val[q];
    TU_OK(ata_ref_sptrsv_csr(LU, ATA_LOWER, ATA_UNIT, b, t));
    for (int i = n - 1; i >= 0; i--) {
        double s = t[i], dinv = 0;
        for (int q = LU->rowptr[i + 1] - 1; q >= LU->rowptr[i]; q--) {   /* far to near */
            if (LU->col[q] > i) s -= LU->val[q] * x[LU->col[q]];
            else if (LU->col[q] == i) dinv = LU->val[q];
        }
        x[i] = s * dinv;
    }
    ata_csr_free(LU);
    free(t);
}

/* One matrix: the reference's mixed factor against the by-hand one and
 * against double (must differ: ILU0 of these matrices is not made of
 * floats), then every CPU policy, pull and push: one column, three columns
 * (each the one-column answer) and the transposed solve (the transposed
 * plans read the same floats: within 1e-12 of the reference's, push or
 * pull, as the double's are); and the plans' value bytes halved. */
static void check_matrix(ata_context *ctx, const ata_csr *A, const char *name)
{
    const int n = A->nrows, K = 3;
    double *b = malloc((size_t)K * n * sizeof *b), *x = malloc((size_t)K * n * sizeof *x),
           *xr = malloc((size_t)n * sizeof *xr), *xd = malloc((size_t)n * sizeof *xd),
           *xt = malloc((size_t)n * sizeof *xt), *xtr = malloc((size_t)n * sizeof *xtr);
    tu_random_vec(b, K * n, 21);
    ata_factor_options fo = mixed(ATA_POLICY_AUTO, ATA_PULL);
    ata_factor *F;
    TU_OK(ata_factor_setup(NULL, A, &fo, &F));
    TU_OK(ata_factor_solve(F, b, xr));
    ata_solve_args tr = ata_solve_defaults();
    tr.transpose = 1;
    TU_OK(ata_factor_solve_ex(F, b, xtr, &tr));
    ata_factor_destroy(F);
    manual_mixed(A, b, x);
    if (!tu_bitwise_equal(x, xr, n)) fail_msg("%s: reference mixed factor differs from the by-hand one", name);
    ata_factor_options fd = ata_factor_defaults();
    TU_OK(ata_factor_setup(NULL, A, &fd, &F));
    TU_OK(ata_factor_solve(F, b, xd));
    ata_factor_destroy(F);
    const double dm = tu_rel_diff(xr, xd, n);
    printf("  %s: mixed vs double factor solve: relative difference %.2e\n", name, dm);
    if (!(dm > 0 && dm < 1e-4)) fail_msg("%s: mixed vs double differ by %g (expected 0 < d < 1e-4)", name, dm);

    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_LA,
                                ATA_POLICY_GREEDY, ATA_POLICY_CHAIN, ATA_POLICY_AUTO };
    for (int k = 0; k < 7; k++)
        for (int push = 0; push < 2; push++) {
            if (push && pols[k] == ATA_POLICY_CHAIN) continue;     /* chain is pull only */
            fo = mixed(pols[k], push ? ATA_PUSH : ATA_PULL);
            TU_OK(ata_factor_setup(ctx, A, &fo, &F));
            const char *pn = ata_policy_name(pols[k]), *tn = push ? "push" : "pull";
            /* auto times its first solves: run past them */
            for (int rep = 0; rep < (pols[k] == ATA_POLICY_AUTO ? ATA_AUTO_TUNE_SOLVES + 1 : 2); rep++) {
                memset(x, 0, (size_t)n * sizeof *x);
                TU_OK(ata_factor_solve(F, b, x));
                if (!push && !tu_bitwise_equal(x, xr, n))
                    fail_msg("%s %s pull, mixed: differs from the reference (rel %g)", name, pn, tu_rel_diff(x, xr, n));
                if (push && !(tu_rel_diff(x, xr, n) <= 1e-12))
                    fail_msg("%s %s push, mixed: rel diff %g", name, pn, tu_rel_diff(x, xr, n));
            }
            TU_OK(ata_factor_solve_multi(F, K, b, n, x, n));
            for (int c = 0; c < K; c++) {
                TU_OK(ata_factor_solve(F, b + (size_t)c * n, xt));
                if (!push && !tu_bitwise_equal(x + (size_t)c * n, xt, n))
                    fail_msg("%s %s %s, mixed: column %d differs from its one-column solve", name, pn, tn, c);
                if (push && !(tu_rel_diff(x + (size_t)c * n, xt, n) <= 1e-12))
                    fail_msg("%s %s %s, mixed: column %d off by %g", name, pn, tn, c, tu_rel_diff(x + (size_t)c * n, xt, n));
            }
            TU_OK(ata_factor_solve_ex(F, b, xt, &tr));
            if (!(tu_rel_diff(xt, xtr, n) <= 1e-12))
                fail_msg("%s %s %s, mixed: transposed solve off by %g", name, pn, tn, tu_rel_diff(xt, xtr, n));
            /* 4 bytes a value read; against the same plans in double */
            ata_plan_info Lm, Um, Ld, Ud;
            TU_OK(ata_factor_get_info(F, &Lm, &Um));
            ata_factor_destroy(F);
            fd = fo;
            fd.precision = ATA_PRECISION_DOUBLE;
            TU_OK(ata_factor_setup(ctx, A, &fd, &F));
            TU_OK(ata_factor_get_info(F, &Ld, &Ud));
            ata_factor_destroy(F);
            assert_int_equal(Ld.matrix_bytes - Lm.matrix_bytes, 4 * (size_t)Lm.nnz);
            assert_int_equal(Ud.matrix_bytes - Um.matrix_bytes, 4 * (size_t)Um.nnz);
        }
    free(b); free(x); free(xr); free(xd); free(xt); free(xtr);
}

static void test_factor_vs_reference(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    /* natural and permuted orders (staged plans, segments in worker order),
     * and a level-ordered one (the plans read the factors in place) */
    const char *gens[] = { "lap2d:40", "lap3d:12,perm=3", "circuit:3000", "convdiff:10", "lap2d:24,dofs=4" };
    for (int g = 0; g < 5; g++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(gens[g], &A));
        check_matrix(ctx, A, gens[g]);
        if (g == 4) {   /* a PDE system: its mixed factor's solves run through nodes (cpu_nodes, fval) */
            ata_factor_options fo = mixed(ATA_POLICY_CHAIN, ATA_PULL);
            ata_factor *F;
            TU_OK(ata_factor_setup(ctx, A, &fo, &F));
            const ata_plan *L, *U;
            ata_factor_plans(F, &L, &U);
            if (!strstr(ata_plan_choice(L), "nodes:") || !strstr(ata_plan_choice(U), "nodes:"))
                fail_msg("%s mixed, chain: no nodes (L: %s; U: %s)", gens[g], ata_plan_choice(L), ata_plan_choice(U));
            ata_factor_destroy(F);
        }
        if (g == 1) {
            ata_csr *B = tu_level_ordered(A);
            check_matrix(ctx, B, "lap3d:12,perm=3 in level order");
            ata_csr_free(B);
        }
        ata_csr_free(A);
    }
    const char *real[] = { "1138_bus.mtx", "olm1000.mtx" };      /* SPD; nonsymmetric */
    for (int r = 0; r < 2; r++) {
        ata_csr *A = tu_read_real(real[r]);
        if (!A) continue;
        check_matrix(ctx, A, real[r]);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* New values on the same pattern: solves equal a fresh mixed setup on
 * them, bitwise, CPU (pull by row in level order and staged, push) and
 * reference; the floats the plans read are the new ones. */
static void test_update_values(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    ata_csr *A0;
    TU_OK(ata_gen_from_spec("lap3d:10,perm=2", &A0));
    ata_csr *Al = tu_level_ordered(A0);
    const ata_csr *mats[2] = { A0, Al };
    const int n = A0->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    tu_random_vec(b, n, 3);
    for (int mi = 0; mi < 2; mi++)
        for (int w = 0; w < 3; w++) {
            const ata_csr *A = mats[mi];
            ata_context *c = w == 2 ? NULL : ctx;
            ata_factor_options fo = mixed(ATA_POLICY_CA, w == 1 ? ATA_PUSH : ATA_PULL);
            ata_factor *F, *G;
            TU_OK(ata_factor_setup(c, A, &fo, &F));
            ata_csr *B;
            TU_OK(ata_csr_copy(A, &B));
            for (int step = 1; step <= 2; step++) {
                for (int i = 0; i < n; i++)
                    for (int q = B->rowptr[i]; q < B->rowptr[i + 1]; q++)
                        B->val[q] = A->val[q] * (B->col[q] == i ? 1.0 + 0.37 * step : 1.0 / (1 + step));
                TU_OK(ata_factor_update_values(F, B->val));
                TU_OK(ata_factor_setup(c, B, &fo, &G));
                TU_OK(ata_factor_solve(F, b, x));
                TU_OK(ata_factor_solve(G, b, y));
                if (w != 1 && !tu_bitwise_equal(x, y, n))
                    fail_msg("matrix %d %s step %d: updated mixed factor differs from a fresh one (rel %g)", mi,
                             w == 2 ? "reference" : "cpu pull", step, tu_rel_diff(x, y, n));
                if (w == 1 && !(tu_rel_diff(x, y, n) <= 1e-12))
                    fail_msg("matrix %d cpu push step %d: off by %g", mi, step, tu_rel_diff(x, y, n));
                ata_factor_destroy(G);
            }
            ata_csr_free(B);
            ata_factor_destroy(F);
        }
    free(b); free(x); free(y);
    ata_csr_free(Al);
    ata_csr_free(A0);
    ata_context_destroy(ctx);
}

/* What mixed refuses, and how. */
static void test_refused(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:10", &A));
    const ata_precond types[] = { ATA_PC_IC0, ATA_PC_JACOBI };
    for (int t = 0; t < 2; t++)
        for (int rt = 0; rt < 2; rt++) {
            ata_factor_options fo = mixed(ATA_POLICY_AUTO, ATA_PULL);
            fo.type = types[t];
            ata_factor *F = (ata_factor *)1;
            assert_int_equal(ata_factor_setup(rt ? ctx : NULL, A, &fo, &F), ATA_ERR_UNSUPPORTED);
            assert_null(F);
            assert_non_null(strstr(ata_last_error(), "ILU0 only"));
        }
    ata_factor_options fo = ata_factor_defaults();
    fo.precision = (ata_precision)7;
    ata_factor *F;
    assert_int_equal(ata_factor_setup(ctx, A, &fo, &F), ATA_ERR_ARG);
    assert_non_null(strstr(ata_last_error(), "precision"));
    /* PCG: mixed is for ILU0 */
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1;
    const ata_precond pcs[] = { ATA_PC_IC0, ATA_PC_JACOBI, ATA_PC_NONE };
    for (int k = 0; k < 3; k++) {
        ata_pcg_options po = ata_pcg_defaults();
        po.precision = ATA_PRECISION_MIXED;
        po.precond = pcs[k];
        ata_pcg_result res;
        assert_int_equal(ata_pcg(ctx, A, b, x, &po, &res), ATA_ERR_UNSUPPORTED);
        assert_non_null(strstr(ata_last_error(), ata_precond_name(pcs[k])));
    }
    ata_pcg_options po = ata_pcg_defaults();
    po.precision = (ata_precision)-1;
    ata_pcg_solver *s;
    assert_int_equal(ata_pcg_setup(ctx, A, &po, &s), ATA_ERR_ARG);
    free(b); free(x);
    /* names */
    ata_precision p;
    for (int k = 0; k <= ATA_PRECISION_MIXED; k++) {
        TU_OK(ata_precision_from_name(ata_precision_name((ata_precision)k), &p));
        assert_int_equal(p, k);
    }
    TU_OK(ata_precision_from_name("MIXED", &p));
    assert_int_equal(p, ATA_PRECISION_MIXED);
    assert_int_equal(ata_precision_from_name("single", &p), ATA_ERR_ARG);
    assert_non_null(strstr(ata_last_error(), "single"));
    assert_int_equal(ata_pcg_defaults().precision, ATA_PRECISION_DOUBLE);
    assert_int_equal(ata_factor_defaults().precision, ATA_PRECISION_DOUBLE);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* A factor entry beyond float's range (l_10 = 1e39), and a pivot whose
 * reciprocal underflows (u = 1e50): refused with the row, on the CPU and
 * the reference; double takes both. */
static void test_beyond_float(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const int ri[] = { 0, 1, 1, 2 }, ci[] = { 0, 0, 1, 2 };
    const double big[] = { 1, 1e39, 1, 1 }, huge_pivot[] = { 1, 1, 1, 1e50 };
    const double *vals[] = { big, huge_pivot };
    const char *want[] = { "(1, 0)", "row 2" };
    for (int m = 0; m < 2; m++) {
        ata_csr *A;
        TU_OK(ata_csr_from_coo(3, 3, 4, ri, ci, vals[m], 0, &A));
        for (int rt = 0; rt < 2; rt++) {
            ata_factor_options fo = mixed(ATA_POLICY_AUTO, ATA_PULL);
            ata_factor *F = (ata_factor *)1;
            assert_int_equal(ata_factor_setup(rt ? ctx : NULL, A, &fo, &F), ATA_ERR_NONFINITE);
            assert_null(F);
            printf("  %s\n", ata_last_error());
            assert_non_null(strstr(ata_last_error(), want[m]));
            assert_non_null(strstr(ata_last_error(), "float"));
            fo.precision = ATA_PRECISION_DOUBLE;
            TU_OK(ata_factor_setup(rt ? ctx : NULL, A, &fo, &F));
            ata_factor_destroy(F);
        }
        ata_csr_free(A);
    }
    /* an update whose factors leave float's range: the factor refuses to
     * solve until a good update */
    ata_csr *A;
    TU_OK(ata_csr_from_coo(3, 3, 4, ri, ci, huge_pivot, 0, &A));
    A->val[3] = 2;
    ata_factor_options fo = mixed(ATA_POLICY_AUTO, ATA_PULL);
    ata_factor *F;
    TU_OK(ata_factor_setup(ctx, A, &fo, &F));
    assert_int_equal(ata_factor_update_values(F, huge_pivot), ATA_ERR_NONFINITE);
    double b[3] = { 1, 2, 3 }, x[3];
    assert_int_not_equal(ata_factor_solve(F, b, x), ATA_OK);
    TU_OK(ata_factor_update_values(F, A->val));
    TU_OK(ata_factor_solve(F, b, x));
    assert_true(x[0] == 1 && x[1] == 1 && x[2] == 1.5);
    ata_factor_destroy(F);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* Iterations with mixed factors against double's: CG on lap3d and a
 * circuit (the benchmark's problems, small), BiCGStab and GMRES on
 * convection-diffusion and olm1000; every run converged (true residual),
 * iterations within 5% (+1) of double's. */
static void check_iterations(ata_context *ctx, const ata_csr *A, const char *name, ata_ksp m)
{
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1;
    int it[2];
    for (int p = 0; p < 2; p++) {
        ata_pcg_options o = ata_pcg_defaults();
        o.method = m;
        o.precision = p ? ATA_PRECISION_MIXED : ATA_PRECISION_DOUBLE;
        o.maxit = 5000;
        ata_pcg_result res;
        memset(x, 0, (size_t)n * sizeof *x);
        TU_OK(ata_pcg(ctx, A, b, x, &o, &res));
        assert_true(tu_true_relres(A, x, b) <= o.rtol);
        it[p] = res.iterations;
    }
    printf("  %s %s: %d iterations in double, %d mixed\n", name, ata_ksp_name(m), it[0], it[1]);
    if (it[1] > it[0] + it[0] / 20 + 1 || it[1] < it[0] - it[0] / 20 - 1)
        fail_msg("%s %s: mixed took %d iterations, double %d", name, ata_ksp_name(m), it[1], it[0]);
    free(b); free(x);
}

static void test_krylov_iterations(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const struct { const char *spec; ata_ksp m; } cases[] = {
        { "lap3d:20", ATA_KSP_CG }, { "circuit:20000", ATA_KSP_CG }, { "convdiff:16", ATA_KSP_BICGSTAB },
        { "convdiff:16", ATA_KSP_GMRES },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(cases[k].spec, &A));
        check_iterations(ctx, A, cases[k].spec, cases[k].m);
        ata_csr_free(A);
    }
    ata_csr *A = tu_read_real("olm1000.mtx");
    if (A) {
        check_iterations(ctx, A, "olm1000", ATA_KSP_GMRES);
        check_iterations(ctx, A, "olm1000", ATA_KSP_BICGSTAB);
        ata_csr_free(A);
    }
    /* setup once, new values, solve again: the same as a fresh solver */
    TU_OK(ata_gen_from_spec("lap3d:12", &A));
    ata_pcg_options o = ata_pcg_defaults();
    o.precision = ATA_PRECISION_MIXED;
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x), *y = calloc((size_t)n, sizeof *y);
    for (int i = 0; i < n; i++) b[i] = 1;
    ata_pcg_solver *s;
    TU_OK(ata_pcg_setup(ctx, A, &o, &s));
    ata_csr *B;
    TU_OK(ata_csr_copy(A, &B));
    for (int i = 0; i < n; i++)
        for (int q = B->rowptr[i]; q < B->rowptr[i + 1]; q++) B->val[q] *= B->col[q] == i ? 1.3 : 0.9;
    TU_OK(ata_pcg_update_values(s, B->val));
    ata_pcg_result r1, r2;
    TU_OK(ata_pcg_solve(s, b, x, &r1));
    TU_OK(ata_pcg(ctx, B, b, y, &o, &r2));
    assert_int_equal(r1.iterations, r2.iterations);
    assert_true(tu_bitwise_equal(x, y, n));
    ata_pcg_destroy(s);
    free(b); free(x); free(y);
    ata_csr_free(B);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_vs_reference),
        cmocka_unit_test(test_update_values),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_beyond_float),
        cmocka_unit_test(test_krylov_iterations),
    };
    return cmocka_run_group_tests_name("mixed", tests, NULL, NULL);
}
