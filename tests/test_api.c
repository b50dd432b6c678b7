/* test_api.c - the setup / solve / update API: ata_factor against the serial
 * reference (bitwise for pull), update_values equal to a fresh setup, zero
 * pivots and the shift strategy, Jacobi, name parsers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"

/* NULL if the shared matrix is absent (a loud SKIPPED line). */


/* The reference preconditioner, by hand: ILU0 (or IC0 = L D^1/2) of A,
 * then the two reference solves; ILU0's U solve multiplies by the
 * reciprocal pivots, as every factor's U plan does (factor_impl.h,
 * inv_pivots): the pivots inverted once, then the plain reference loop. */
static void manual_apply(const ata_csr *A, ata_precond type, const double *b, double *x)
{
    const int n = A->nrows;
    double *t = malloc((size_t)n * sizeof *t);
    if (type == ATA_PC_JACOBI) {
        for (int i = 0; i < n; i++)
            for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
                if (A->col[q] == i) x[i] = b[i] / A->val[q];
        free(t);
        return;
    }
    ata_csr *LU;
    TU_OK(ata_csr_copy(A, &LU));
    TU_OK(ata_ref_ilu0(LU));
    if (type == ATA_PC_ILU0) {
        TU_OK(ata_ref_sptrsv_csr(LU, ATA_LOWER, ATA_UNIT, b, t));
        for (int i = n - 1; i >= 0; i--) {
            double s = t[i], dinv = 0;
            for (int q = LU->rowptr[i + 1] - 1; q >= LU->rowptr[i]; q--) {   /* far to near */
                if (LU->col[q] > i) s -= LU->val[q] * x[LU->col[q]];
                else if (LU->col[q] == i) dinv = 1.0 / LU->val[q];
            }
            x[i] = s * dinv;
        }
    } else {
        ata_csr *C, *Ct;
        TU_OK(ata_csr_tril(LU, &C));
        double *d = malloc((size_t)n * sizeof *d);
        for (int i = 0; i < n; i++) d[i] = sqrt(C->val[C->rowptr[i + 1] - 1]);
        for (int i = 0; i < n; i++)
            for (int q = C->rowptr[i]; q < C->rowptr[i + 1] - 1; q++) C->val[q] *= d[C->col[q]];
        for (int i = 0; i < n; i++) C->val[C->rowptr[i + 1] - 1] = d[i];
        TU_OK(ata_csr_transpose(C, &Ct));
        TU_OK(ata_ref_sptrsv_csr(C, ATA_LOWER, ATA_NON_UNIT, b, t));
        TU_OK(ata_ref_sptrsv_csr(Ct, ATA_UPPER, ATA_NON_UNIT, t, x));
        free(d);
        ata_csr_free(C);
        ata_csr_free(Ct);
    }
    free(t);
    ata_csr_free(LU);
}

/* One matrix: reference factor == by-hand reference, and every CPU pull
 * policy == reference, bitwise; push within 1e-12. */
static void check_factor(ata_context *ctx, const ata_csr *A, const char *name, ata_precond type)
{
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x),
           *xr = malloc((size_t)n * sizeof *xr), *xm = malloc((size_t)n * sizeof *xm);
    tu_random_vec(b, n, 11);
    ata_factor_options fo = ata_factor_defaults();
    fo.type = type;
    ata_factor *F;
    TU_OK(ata_factor_setup(NULL, A, &fo, &F));
    assert_int_equal(ata_factor_pivot_row(F), -1);
    TU_OK(ata_factor_solve(F, b, xr));
    ata_factor_destroy(F);
    manual_apply(A, type, b, xm);
    if (!tu_bitwise_equal(xr, xm, n)) fail_msg("%s %s: reference factor differs from the by-hand reference", name, ata_precond_name(type));
    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_LA, ATA_POLICY_GREEDY };
    for (int k = 0; k < 5; k++)
        for (int tr = 0; tr < 2; tr++) {
            fo.plan.policy = pols[k];
            fo.plan.traversal = tr ? ATA_PUSH : ATA_PULL;
            TU_OK(ata_factor_setup(ctx, A, &fo, &F));
            ata_plan_info Li, Ui;
            TU_OK(ata_factor_get_info(F, &Li, &Ui));
            assert_int_equal(Li.n, n);
            assert_true(Li.atasks >= 1);
            if (type != ATA_PC_JACOBI) assert_int_equal(Ui.n, n);
            for (int rep = 0; rep < 2; rep++) {
                memset(x, 0, (size_t)n * sizeof *x);
                TU_OK(ata_factor_solve(F, b, x));
                if (!tr && !tu_bitwise_equal(x, xr, n))
                    fail_msg("%s %s %s pull: differs from the reference (rel %g)", name, ata_precond_name(type),
                             ata_policy_name(pols[k]), tu_rel_diff(x, xr, n));
                if (tr && !(tu_rel_diff(x, xr, n) <= 1e-12))
                    fail_msg("%s %s %s push: rel diff %g", name, ata_precond_name(type), ata_policy_name(pols[k]),
                             tu_rel_diff(x, xr, n));
            }
            ata_factor_destroy(F);
        }
    free(b); free(x); free(xr); free(xm);
}

static void test_factor_vs_reference(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const char *gens[] = { "lap2d:40", "lap3d:12", "circuit:3000", "lap2d:30,perm=4" };
    for (int g = 0; g < 4; g++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(gens[g], &A));
        check_factor(ctx, A, gens[g], ATA_PC_ILU0);
        check_factor(ctx, A, gens[g], ATA_PC_IC0);
        check_factor(ctx, A, gens[g], ATA_PC_JACOBI);
        ata_csr_free(A);
    }
    const char *real[] = { "494_bus.mtx", "1138_bus.mtx", "west0479.mtx" };
    for (int r = 0; r < 3; r++) {
        ata_csr *A = tu_read_real(real[r]);
        if (!A) continue;
        ata_factor_options fo = ata_factor_defaults();
        ata_factor *F;
        ata_status st = ata_factor_setup(NULL, A, &fo, &F);
        if (st == ATA_OK) {
            ata_factor_destroy(F);
            check_factor(ctx, A, real[r], ATA_PC_ILU0);
        } else {    /* e.g. a missing diagonal: the same answer on the runtime */
            printf("%s: %s (%s)\n", real[r], ata_status_string(st), ata_last_error());
            if (st == ATA_ERR_ZERO_PIVOT) ata_factor_destroy(F);
            assert_int_equal(ata_factor_setup(ctx, A, &fo, &F), st);
            if (st == ATA_ERR_ZERO_PIVOT) ata_factor_destroy(F);
            else assert_null(F);
        }
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* Values of A scaled and perturbed on the same pattern (still SPD for a
 * diagonally dominant A: the diagonal grows most). */
static double *new_values(const ata_csr *A, int step)
{
    double *v = malloc((size_t)A->nnz * sizeof *v);
    for (int i = 0; i < A->nrows; i++)
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            int j = A->col[q], m = i < j ? i : j;   /* symmetric change */
            v[q] = A->val[q] * (j == i ? 1.5 + 0.1 * step : 1.0 - 0.01 * step * (m % 3 == 0));
        }
    return v;
}

/* Setup once, solve 20 right-hand sides, update values, solve again: each
 * equal to a fresh setup on the same values, bitwise. */
static void test_factor_update(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:14", &A));
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    const ata_precond types[] = { ATA_PC_ILU0, ATA_PC_IC0, ATA_PC_JACOBI };
    for (int t = 0; t < 3; t++)
        for (int rt = 0; rt < 2; rt++) {
            ata_context *c = rt ? ctx : NULL;
            ata_factor_options fo = ata_factor_defaults();
            fo.type = types[t];
            ata_factor *F, *G;
            TU_OK(ata_factor_setup(c, A, &fo, &F));
            for (int step = 0; step < 3; step++) {
                ata_csr *B;
                TU_OK(ata_csr_copy(A, &B));
                if (step > 0) {
                    double *v = new_values(A, step);
                    memcpy(B->val, v, (size_t)A->nnz * sizeof *v);
                    TU_OK(ata_factor_update_values(F, v));
                    free(v);
                }
                TU_OK(ata_factor_setup(c, B, &fo, &G));
                for (int k = 0; k < 20; k++) {
                    tu_random_vec(b, n, 100 + k);
                    TU_OK(ata_factor_solve(F, b, x));
                    TU_OK(ata_factor_solve(G, b, y));
                    if (!tu_bitwise_equal(x, y, n))
                        fail_msg("%s %s step %d rhs %d: updated factor differs from a fresh one (rel %g)",
                                 ata_precond_name(types[t]), rt ? "cpu" : "reference", step, k, tu_rel_diff(x, y, n));
                }
                ata_factor_destroy(G);
                ata_csr_free(B);
            }
            ata_factor_destroy(F);
        }
    free(b); free(x); free(y);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* lap2d:10 with row 50's lower entries and diagonal set to 0: u_50,50 = 0
 * exactly. */
static ata_csr *zero_pivot_matrix(void)
{
    ata_csr *A;
    TU_OK(ata_gen_laplace2d(10, 10, &A));
    for (int q = A->rowptr[50]; q < A->rowptr[51]; q++)
        if (A->col[q] <= 50) A->val[q] = 0;
    return A;
}

/* A caller-filled CSR whose row lists a column left of the diagonal after
 * it: refused with the row named, not factored past the arrays' ends (the
 * row kernels index by sorted columns). */
static void test_factor_unsorted_refused(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    int rp[4] = { 0, 1, 3, 6 }, ci[6] = { 0, 0, 1, 0, 2, 1 };
    double v[6] = { 4, -1, 4, -1, 4, -1 };
    const ata_csr A = { 3, 3, 6, rp, ci, v };
    for (int rt = 0; rt < 2; rt++) {
        ata_factor *F = (ata_factor *)&F;
        ata_factor_options fo = ata_factor_defaults();
        assert_int_equal(ata_factor_setup(rt ? ctx : NULL, &A, &fo, &F), ATA_ERR_FORMAT);
        assert_null(F);
        assert_non_null(strstr(ata_last_error(), "row 2: column 1 after column 2"));
    }
    ata_context_destroy(ctx);
}

static void test_factor_zero_pivot(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    ata_csr *A = zero_pivot_matrix(), *good;
    TU_OK(ata_gen_laplace2d(10, 10, &good));
    double b[100], x[100], y[100];
    tu_random_vec(b, 100, 3);
    for (int rt = 0; rt < 2; rt++) {
        ata_context *c = rt ? ctx : NULL;
        ata_factor *F = NULL;
        ata_factor_options fo = ata_factor_defaults();
        assert_int_equal(ata_factor_setup(c, A, &fo, &F), ATA_ERR_ZERO_PIVOT);
        assert_non_null(F);                      /* documented: the handle comes back */
        assert_int_equal(ata_factor_pivot_row(F), 50);
        assert_non_null(strstr(ata_last_error(), "row 50"));
        assert_non_null(strstr(ata_last_error(), "--shift"));
        assert_non_null(strstr(ata_last_error(), "ATA_SHIFT_NONZERO"));
        assert_int_equal(ata_factor_solve(F, b, x), ATA_ERR_ZERO_PIVOT);
        /* update with usable values: solves again, equal to a fresh factor */
        TU_OK(ata_factor_update_values(F, good->val));
        assert_int_equal(ata_factor_pivot_row(F), -1);
        TU_OK(ata_factor_solve(F, b, x));
        ata_factor *G;
        TU_OK(ata_factor_setup(c, good, &fo, &G));
        TU_OK(ata_factor_solve(G, b, y));
        assert_true(tu_bitwise_equal(x, y, 100));
        /* back to the bad values: the update fails, the handle stays usable */
        assert_int_equal(ata_factor_update_values(F, A->val), ATA_ERR_ZERO_PIVOT);
        assert_int_equal(ata_factor_pivot_row(F), 50);
        /* never a solve on half-updated factors: it refuses until an update succeeds */
        assert_int_equal(ata_factor_solve(F, b, x), ATA_ERR_ZERO_PIVOT);
        assert_int_equal(ata_factor_solve_multi(F, 1, b, 100, x, 100), ATA_ERR_ZERO_PIVOT);
        TU_OK(ata_factor_update_values(F, good->val));
        TU_OK(ata_factor_solve(F, b, x));
        assert_true(tu_bitwise_equal(x, y, 100));
        ata_factor_destroy(G);
        ata_factor_destroy(F);
        /* the nonzero shift: one retry, the shift of 1e-10 x max|a_ii| */
        fo.shift = ATA_SHIFT_NONZERO;
        TU_OK(ata_factor_setup(c, A, &fo, &F));
        int retries;
        double s = ata_factor_shift_used(F, &retries);
        assert_int_equal(retries, 1);
        assert_true(s == 4e-10);
        TU_OK(ata_factor_solve(F, b, x));
        for (int i = 0; i < 100; i++) assert_true(isfinite(x[i]));
        ata_factor_destroy(F);
        /* bad arguments: no handle */
        fo.type = ATA_PC_NONE;
        F = (ata_factor *)&fo;
        assert_int_equal(ata_factor_setup(c, A, &fo, &F), ATA_ERR_ARG);
        assert_null(F);
    }
    /* a missing diagonal: no handle */
    ata_csr *M;
    TU_OK(ata_csr_alloc(2, 2, 2, &M));
    M->rowptr[0] = 0; M->rowptr[1] = 1; M->rowptr[2] = 2;
    M->col[0] = 1; M->col[1] = 0; M->val[0] = M->val[1] = 1;
    ata_factor *F = NULL;
    assert_int_equal(ata_factor_setup(ctx, M, NULL, &F), ATA_ERR_MISSING_DIAG);
    assert_null(F);
    ata_csr_free(M);
    ata_csr_free(A);
    ata_csr_free(good);
    ata_context_destroy(ctx);
}

/* SPD but not M-matrices: plain ILU0 / IC0 is indefinite; the
 * positive-definite shift makes PCG converge, on the reference and the CPU. */
static void test_shift_spd(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const char *names[] = { "LFAT5.mtx", "bcsstk13.mtx" };
    for (int m = 0; m < 2; m++) {
        ata_csr *A = tu_read_real(names[m]);
        if (!A) continue;
        const int n = A->nrows;
        double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x), *r = malloc((size_t)n * sizeof *r);
        for (int i = 0; i < n; i++) b[i] = 1;
        for (int pc = 0; pc < 2; pc++)
            for (int rt = 0; rt < 2; rt++) {
                if (m == 1 && pc == 1 && rt == 1) continue;   /* 400+ iterations: keep CI short */
                ata_pcg_options o = ata_pcg_defaults();
                o.precond = pc ? ATA_PC_IC0 : ATA_PC_ILU0;
                o.maxit = 20000;
                ata_pcg_result res;
                memset(x, 0, (size_t)n * sizeof *x);
                assert_int_equal(ata_pcg(rt ? ctx : NULL, A, b, x, &o, &res), ATA_ERR_INDEFINITE_PC);
                assert_non_null(strstr(ata_last_error(), "shift"));
                assert_non_null(strstr(ata_last_error(), "--shift positive-definite"));
                o.shift = ATA_SHIFT_POSITIVE_DEFINITE;
                memset(x, 0, (size_t)n * sizeof *x);
                ata_status st = ata_pcg(rt ? ctx : NULL, A, b, x, &o, &res);
                printf("%-13s %s %s shift pd: %s, %d iterations, relres %.2e, shift %g after %d retries\n", names[m],
                       ata_precond_name(o.precond), rt ? "cpu" : "ref", ata_status_string(st), res.iterations,
                       res.relres, res.shift, res.shift_retries);
                if (st != ATA_OK) fail_msg("%s: %s", names[m], ata_last_error());
                assert_true(res.shift > 0 && res.shift_retries >= 1);
                TU_OK(ata_ref_spmv(A, x, r));
                double rr = 0, bb = 0;
                for (int i = 0; i < n; i++) { rr += (b[i] - r[i]) * (b[i] - r[i]); bb += b[i] * b[i]; }
                assert_true(sqrt(rr / bb) <= 1e-6);
            }
        free(b); free(x); free(r);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* Several right-hand sides: every column bitwise equal to a one-column solve
 * (pull; push within 1e-12), for column counts that use every block size
 * (16 + 4 + 1 = 21), leading dimensions > n, natural and level order. */
static void test_sptrsv_multi(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const char *specs[] = { "lap3d:10", "circuit:2000", "lap2d:30,perm=2" };
    const int ks[] = { 1, 3, 8, 21 };   /* blocks of 16, 8, 4, 2 and 1 */
    for (int g = 0; g < 3; g++)
        for (int lev = 0; lev < 2; lev++) {
            ata_csr *A0, *A;
            TU_OK(ata_gen_from_spec(specs[g], &A0));
            A = lev ? tu_level_ordered(A0) : A0;
            const int n = A->nrows, ld = n + 3;
            double *B = malloc((size_t)ld * 21 * sizeof *B), *X = malloc((size_t)ld * 21 * sizeof *X),
                   *x1 = malloc((size_t)n * sizeof *x1);
            for (int c = 0; c < 21; c++) tu_random_vec(B + (size_t)c * ld, n, 50 + c);
            const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_LA,
                                        ATA_POLICY_GREEDY };
            for (int k = lev; k < 5; k += 2)
                for (int v = 0; v < 8; v++) {
                    ata_plan_options po = ata_plan_defaults();
                    po.policy = pols[k];
                    po.uplo = (v & 1) ? ATA_UPPER : ATA_LOWER;
                    po.diag = (v & 2) ? ATA_UNIT : ATA_NON_UNIT;
                    po.traversal = (v & 4) ? ATA_PUSH : ATA_PULL;
                    po.S = (v & 1) ? 0 : 8;   /* a fixed S always runs both workers (threads and TSan) */
                    ata_plan *p;
                    TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
                    for (int t = 0; t < 4; t++) {
                        const int K = ks[t];
                        for (size_t q = 0; q < (size_t)ld * K; q++) X[q] = -7;
                        ata_solve_args sa = ata_solve_defaults();
                        sa.nrhs = K;
                        sa.ldb = sa.ldx = ld;
                        sa.mem = (t & 1) ? ATA_MEM_DEVICE : ATA_MEM_HOST;   /* CPU: the same memory */
                        TU_OK(t % 3 == 0 ? ata_sptrsv_multi(p, K, B, ld, X, ld) : ata_sptrsv_ex(p, B, X, &sa));
                        for (int c = 0; c < K; c++) {
                            TU_OK(ata_sptrsv(p, B + (size_t)c * ld, x1));
                            const double *xc = X + (size_t)c * ld;
                            if (po.traversal == ATA_PULL ? !tu_bitwise_equal(xc, x1, n) : !(tu_rel_diff(xc, x1, n) <= 1e-12))
                                fail_msg("%s%s %s v%d K=%d column %d: rel diff %g from the one-column solve", specs[g],
                                         lev ? " (level order)" : "", ata_policy_name(pols[k]), v, K, c,
                                         tu_rel_diff(xc, x1, n));
                            assert_true(xc[n] == -7);   /* padding between columns untouched */
                        }
                    }
                    ata_plan_destroy(p);
                }
            /* argument checks */
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, A, NULL, &p));
            assert_int_equal(ata_sptrsv_multi(p, 2, B, n - 1, X, n), ATA_ERR_ARG);
            assert_int_equal(ata_sptrsv_multi(p, 2, B, ld, B + 1, ld), ATA_ERR_ARG);   /* overlap */
            assert_int_equal(ata_sptrsv_multi(p, -1, B, ld, X, ld), ATA_ERR_ARG);
            TU_OK(ata_sptrsv_multi(p, 0, B, ld, X, ld));
            /* a non-finite b in column 2: the row and column are named */
            double keep = B[2 * (size_t)ld + 5];
            B[2 * (size_t)ld + 5] = NAN;
            assert_int_equal(ata_sptrsv_multi(p, 4, B, ld, X, ld), ATA_ERR_NONFINITE);
            assert_non_null(strstr(ata_last_error(), "column 2"));
            B[2 * (size_t)ld + 5] = keep;
            /* columns past the first block of 16, and the one-column tail */
            for (int c = 17; c <= 20; c += 3) {
                char want[32];
                snprintf(want, sizeof want, "column %d", c);
                B[(size_t)c * ld + 5] = NAN;
                assert_int_equal(ata_sptrsv_multi(p, 21, B, ld, X, ld), ATA_ERR_NONFINITE);
                if (!strstr(ata_last_error(), want)) fail_msg("'%s' does not name %s", ata_last_error(), want);
                B[(size_t)c * ld + 5] = keep;
            }
            ata_plan_destroy(p);
            free(B); free(X); free(x1);
            if (lev) ata_csr_free(A);
            ata_csr_free(A0);
        }
    ata_context_destroy(ctx);
}

/* The factor's multi-column solve and ata_factor_solve_ex equal to column
 * by column solves; plan value updates equal to a fresh plan. */
static void test_factor_multi_and_plan_update(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:12", &A));
    const int n = A->nrows, K = 7;
    double *B = malloc((size_t)n * K * sizeof *B), *X = malloc((size_t)n * K * sizeof *X), *x1 = malloc((size_t)n * sizeof *x1);
    for (int c = 0; c < K; c++) tu_random_vec(B + (size_t)c * n, n, 70 + c);
    for (int rt = 0; rt < 2; rt++)
        for (int t = 0; t < 3; t++) {
            ata_factor_options fo = ata_factor_defaults();
            fo.type = t == 0 ? ATA_PC_ILU0 : t == 1 ? ATA_PC_IC0 : ATA_PC_JACOBI;
            ata_factor *F;
            TU_OK(ata_factor_setup(rt ? ctx : NULL, A, &fo, &F));
            for (int e = 0; e < 2; e++) {
                ata_solve_args sa = ata_solve_defaults();
                sa.nrhs = K;
                if (e) TU_OK(ata_factor_solve_ex(F, B, X, &sa));
                else TU_OK(ata_factor_solve_multi(F, K, B, n, X, n));
                for (int c = 0; c < K; c++) {
                    TU_OK(ata_factor_solve(F, B + (size_t)c * n, x1));
                    if (!tu_bitwise_equal(X + (size_t)c * n, x1, n))
                        fail_msg("factor %s %s column %d: differs from the one-column solve", ata_precond_name(fo.type),
                                 rt ? "cpu" : "ref", c);
                }
            }
            ata_factor_destroy(F);
        }
    /* ata_sptrsv_plan_update_values: equal to a fresh plan on the new values */
    double *v = new_values(A, 3);
    ata_csr *A2;
    TU_OK(ata_csr_copy(A, &A2));
    memcpy(A2->val, v, (size_t)A->nnz * sizeof *v);
    for (int w = 0; w < 4; w++) {
        ata_plan_options po = ata_plan_defaults();
        po.uplo = (w & 1) ? ATA_UPPER : ATA_LOWER;
        po.traversal = (w & 2) ? ATA_PUSH : ATA_PULL;
        ata_plan *p, *q;
        TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
        TU_OK(ata_sptrsv_plan_update_values(p, A2));
        TU_OK(ata_sptrsv_plan_create(ctx, A2, &po, &q));
        TU_OK(ata_sptrsv(p, B, X));
        TU_OK(ata_sptrsv(q, B, x1));
        if (po.traversal == ATA_PULL) assert_true(tu_bitwise_equal(X, x1, n));
        else assert_true(tu_rel_diff(X, x1, n) <= 1e-12);
        ata_plan_destroy(q);
        /* a different pattern is refused */
        ata_csr *D;
        TU_OK(ata_gen_laplace3d(12, 12, 12, 27, &D));
        assert_int_equal(ata_sptrsv_plan_update_values(p, D), ATA_ERR_ARG);
        ata_csr_free(D);
        ata_plan_destroy(p);
    }
    free(v);
    ata_csr_free(A2);
    free(B); free(X); free(x1);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

typedef struct { int calls, last_it; double last; } monitor_log;

static void monitor(int it, double relres, void *ctx)
{
    monitor_log *m = ctx;
    if (it != m->calls) fail_msg("monitor: iteration %d after %d calls", it, m->calls);
    m->calls++;
    m->last_it = it;
    m->last = relres;
}

/* Setup once, 20 right-hand sides, update values, solve again: each solve
 * bitwise equal to a fresh one-shot ata_pcg (same iterations). */
static void check_split(ata_context *ctx, const char *spec, ata_reorder reorder, int nrhs)
{
    ata_csr *A;
    TU_OK(ata_gen_from_spec(spec, &A));
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    const ata_precond pcs[] = { ATA_PC_ILU0, ATA_PC_IC0, ATA_PC_JACOBI, ATA_PC_NONE };
    for (int pc = 0; pc < 4; pc++)
        for (int rt = 0; rt < 2; rt++) {
            ata_context *c = rt ? ctx : NULL;
            ata_pcg_options o = ata_pcg_defaults();
            o.precond = pcs[pc];
            o.reorder = reorder;
            o.rtol = 1e-8;
            ata_pcg_solver *S;
            TU_OK(ata_pcg_setup(c, A, &o, &S));
            ata_csr *B;
            TU_OK(ata_csr_copy(A, &B));
            for (int step = 0; step < 2; step++) {
                if (step == 1) {
                    double *v = new_values(A, 2);
                    memcpy(B->val, v, (size_t)A->nnz * sizeof *v);
                    TU_OK(ata_pcg_update_values(S, v));
                    free(v);
                }
                ata_pcg_solver *G;       /* a fresh setup on the same values */
                TU_OK(ata_pcg_setup(c, B, &o, &G));
                const int nb = step ? 3 : (pc == 0 ? nrhs : 3);
                for (int k = 0; k < nb; k++) {
                    tu_random_vec(b, n, 1000 + k);
                    ata_pcg_result r1, r2;
                    memset(x, 0, (size_t)n * sizeof *x);
                    memset(y, 0, (size_t)n * sizeof *y);
                    TU_OK(ata_pcg_solve(S, b, x, &r1));
                    /* the first and last against the one-shot call, the others a fresh solver */
                    if (k == 0 || k == nb - 1) TU_OK(ata_pcg(c, B, b, y, &o, &r2));
                    else TU_OK(ata_pcg_solve(G, b, y, &r2));
                    if (r1.iterations != r2.iterations || !tu_bitwise_equal(x, y, n))
                        fail_msg("%s %s %s step %d rhs %d: split %d its, fresh %d its, rel diff %g", spec,
                                 ata_precond_name(pcs[pc]), rt ? "cpu" : "ref", step, k, r1.iterations,
                                 r2.iterations, tu_rel_diff(x, y, n));
                    assert_true(r1.relres == r2.relres);
                }
                ata_pcg_destroy(G);
            }
            ata_csr_free(B);
            ata_pcg_destroy(S);
        }
    free(b); free(x); free(y);
    ata_csr_free(A);
}

static void test_pcg_split(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    check_split(ctx, "lap3d:12", ATA_REORDER_NONE, 20);    /* level-order layout on the runtime */
    check_split(ctx, "lap2d:24,perm=4", ATA_REORDER_RCM, 5); /* user ordering + layout: composed maps */
    check_split(ctx, "circuit:1000", ATA_REORDER_ND, 5);
    ata_context_destroy(ctx);
}

static void test_pcg_monitor_phases_failures(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:16", &A));
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    tu_random_vec(b, n, 9);
    for (int rt = 0; rt < 2; rt++) {
        monitor_log m = { 0, -1, 0 };
        ata_pcg_options o = ata_pcg_defaults();
        o.keep_history = 1;
        o.monitor = monitor;
        o.monitor_ctx = &m;
        ata_pcg_solver *S;
        TU_OK(ata_pcg_setup(rt ? ctx : NULL, A, &o, &S));
        ata_pcg_result res;
        TU_OK(ata_pcg_solve(S, b, x, &res));
        assert_int_equal(m.calls, res.iterations + 1);
        assert_int_equal(m.last_it, res.iterations);
        assert_true(m.last == res.history[res.iterations]);
        assert_true(res.L_solve_s > 0 && res.U_solve_s > 0 && res.spmv_s > 0 && res.vec_s > 0);
        assert_true(res.L_solve_s + res.U_solve_s + res.spmv_s + res.vec_s <= res.solve_s);
        ata_pcg_result_free(&res);
        /* tolerances changed between solves */
        m.calls = 0;
        TU_OK(ata_pcg_set_tolerances(S, 0, 0, 3));
        assert_int_equal(ata_pcg_solve(S, b, x, &res), ATA_ERR_NOT_CONVERGED);
        assert_int_equal(res.iterations, 3);
        ata_pcg_result_free(&res);
        /* a failed update: indefinite factors, the solver refuses until a good one */
        double *v = malloc((size_t)A->nnz * sizeof *v);
        for (int q = 0; q < A->nnz; q++) v[q] = -A->val[q];
        assert_int_equal(ata_pcg_update_values(S, v), ATA_ERR_INDEFINITE_PC);
        assert_int_equal(ata_pcg_solve(S, b, x, &res), ATA_ERR_ZERO_PIVOT);
        assert_int_equal(res.status, ATA_ERR_ZERO_PIVOT);
        TU_OK(ata_pcg_update_values(S, A->val));
        TU_OK(ata_pcg_set_tolerances(S, 1e-6, 0, 2000));
        m.calls = 0;
        TU_OK(ata_pcg_solve(S, b, x, &res));
        ata_pcg_result_free(&res);
        free(v);
        ata_pcg_destroy(S);
    }
    /* divergence (PETSc's DTOL): Pd is not SPD; stops early and says so */
    ata_csr *P = tu_read_real("Pd.mtx");
    if (P) {
        double *pb = malloc((size_t)P->nrows * sizeof *pb), *px = calloc((size_t)P->nrows, sizeof *px);
        for (int i = 0; i < P->nrows; i++) pb[i] = 1;
        ata_pcg_result res;
        ata_pcg_options o = ata_pcg_defaults();
        assert_int_equal(ata_pcg(NULL, P, pb, px, &o, &res), ATA_ERR_DIVERGED);
        printf("Pd: %s\n", ata_last_error());
        assert_true(res.iterations < o.maxit);
        assert_non_null(strstr(ata_last_error(), "dtol"));
        o.dtol = 0;     /* off: runs to maxit */
        o.maxit = 1000;
        memset(px, 0, (size_t)P->nrows * sizeof *px);
        assert_int_equal(ata_pcg(NULL, P, pb, px, &o, &res), ATA_ERR_NOT_CONVERGED);
        assert_int_equal(res.iterations, 1000);
        free(pb); free(px);
        ata_csr_free(P);
    }
    free(b); free(x);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

static void test_names(void **state)
{
    (void)state;
    ata_precond p;
    ata_reorder r;
    ata_shift s;
    for (int k = 0; k <= ATA_PC_JACOBI; k++) {
        TU_OK(ata_precond_from_name(ata_precond_name((ata_precond)k), &p));
        assert_int_equal(p, k);
    }
    TU_OK(ata_precond_from_name("JACOBI", &p));
    assert_int_equal(p, ATA_PC_JACOBI);
    assert_int_equal(ata_precond_from_name("ilu1", &p), ATA_ERR_ARG);
    assert_non_null(strstr(ata_last_error(), "ilu1"));
    for (int k = 0; k <= ATA_REORDER_ND; k++) {
        TU_OK(ata_reorder_from_name(ata_reorder_name((ata_reorder)k), &r));
        assert_int_equal(r, k);
    }
    assert_int_equal(ata_reorder_from_name("amd", &r), ATA_ERR_ARG);
    assert_int_equal(ata_reorder_from_name(NULL, &r), ATA_ERR_ARG);
    for (int k = 0; k <= ATA_SHIFT_POSITIVE_DEFINITE; k++) {
        TU_OK(ata_shift_from_name(ata_shift_name((ata_shift)k), &s));
        assert_int_equal(s, k);
    }
    TU_OK(ata_shift_from_name("positive_definite", &s));
    assert_int_equal(s, ATA_SHIFT_POSITIVE_DEFINITE);
    assert_int_equal(ata_shift_from_name("inblocks", &s), ATA_ERR_ARG);
    /* ata_ref_spmv is a status call */
    ata_csr *A;
    TU_OK(ata_gen_laplace2d(3, 3, &A));
    double x[9], y[9];
    for (int i = 0; i < 9; i++) x[i] = 1;
    TU_OK(ata_ref_spmv(A, x, y));
    assert_true(y[4] == 0 && y[0] == 2);
    assert_int_equal(ata_ref_spmv(A, NULL, y), ATA_ERR_ARG);
    /* ata_last_error is sticky: a success keeps the old detail */
    TU_OK(ata_ref_spmv(A, x, y));
    assert_non_null(strstr(ata_last_error(), "spmv"));
    ata_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_vs_reference),
        cmocka_unit_test(test_factor_update),
        cmocka_unit_test(test_factor_zero_pivot),
        cmocka_unit_test(test_factor_unsorted_refused),
        cmocka_unit_test(test_shift_spd),
        cmocka_unit_test(test_sptrsv_multi),
        cmocka_unit_test(test_factor_multi_and_plan_update),
        cmocka_unit_test(test_pcg_split),
        cmocka_unit_test(test_pcg_monitor_phases_failures),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
