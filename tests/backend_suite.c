/* backend_suite.c - the backend-vs-reference suite (backend_suite.h): every
 * policy x pull/push x lower/upper x unit/non-unit on the real matrices and
 * on generated ones, ILU0, plans reused and many plans alive at once, a
 * corrupted plan that must time out, the vector kernels and PCG - written
 * once, run by test_runtime (cpu), test_ref_backend (the serial reference)
 * and test_gpu (CUDA, HIP, emulated). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend_suite.h"

ata_context *bs_context(const bs_backend *be, int threads, double timeout)
{
    if (be->context) return be->context(threads ? threads : be->threads, timeout);
    ata_context_options o = ata_context_defaults();
    o.backend = be->backend;
    o.threads = threads ? threads : be->threads;
    o.wait_timeout_s = timeout;
    ata_context *ctx = NULL;
    TU_OK(ata_context_create(&o, &ctx));
    assert_int_equal(ata_context_backend(ctx), be->backend);
    return ctx;
}

void bs_test_real_matrices(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    BS_TINY_SKIP(be);
    char **files = tu_list("real");
    if (!files) { skip(); return; }
    ata_context *ctx = bs_context(be, 0, 10);
    int total = 0, mats = 0, k = 0;
    for (char **f = files; *f; f++, k++) {
        if (be->small && k % 3) continue;
        ata_csr *A;
        TU_OK(ata_matrix_read(*f, &A));
        if (!be->small || k % 2 == 0) total += tu_check_sweep(ctx, A, *f, 0, be->pols, be->npol);
        if (!be->small || k % 2 == 1) total += tu_check_sweep(ctx, A, *f, 3, be->pols, be->npol);
        ata_csr_free(A);
        mats++;
    }
    printf("real matrices: %d matrices, %d %s solves checked\n", mats, total, be->name);
    assert_true(mats >= (be->small ? 4 : 10));
    assert_true(total > 0);
    ata_context_destroy(ctx);
    tu_free_list(files);
}

static const char *const gen_specs[] = { "lap2d:60", "lap2d:40,perm=7", "lap3d:14", "lap3d:12,perm=3",
                                         "lap3d27:10", "circuit:20000", "circuit:5000,perm=11" };
#define NGEN (sizeof gen_specs / sizeof *gen_specs)

void bs_test_generated(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    ata_context *ctx = bs_context(be, 0, 10);
    for (size_t s = 0; s < NGEN; s++) {
        if (be->small && s % 3 != 1) continue;     /* lap2d:40,perm=7 and lap3d27:10 */
        if (be->tiny && s != 1) continue;
        ata_csr *A;
        TU_OK(ata_gen_from_spec(gen_specs[s], &A));
        const int Ss[2] = { 0, 50 }, nS = be->small ? 1 : 2;
        int solves = 0;
        for (int k = 0; k < nS; k++)
            solves += tu_check_sweep(ctx, A, gen_specs[s], Ss[be->small ? (int)(s / 3) % 2 : k], be->pols, be->npol);
        assert_int_equal(solves, 2 * 2 * 2 * 2 * be->npol * nS);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

void bs_test_ilu0(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    const char *specs[] = { "lap2d:50", "lap3d:12,perm=9", "circuit:10000", "lap3d27:10" };
    ata_context *ctx = bs_context(be, 0, 10);
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        if ((be->small && s % 2) || (be->tiny && s)) continue;
        ata_csr *A, *R;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        TU_OK(ata_csr_copy(A, &R));
        TU_OK(ata_ref_ilu0(R));
        for (int k = 0; k < be->npol; k++) {
            ata_plan_options po = ata_plan_defaults();
            po.policy = be->pols[k];
            po.S = k % 2 ? 0 : 20;
            ata_csr *LU;
            ata_status st = ata_spilu0(ctx, A, &po, &LU);
            if (st != ATA_OK)
                fail_msg("%s %s %s: ilu0: %s: %s", be->name, specs[s], ata_policy_name(po.policy),
                         ata_status_string(st), ata_last_error());
            assert_int_equal(LU->nnz, A->nnz);
            if (po.policy == ATA_POLICY_VENDOR) {
                double e = tu_rel_diff(LU->val, R->val, A->nnz);
                if (!(e <= 1e-10)) fail_msg("%s vendor ilu0: rel diff %g", specs[s], e);
            } else if (memcmp(LU->val, R->val, A->nnz * sizeof *R->val) != 0) {
                fail_msg("%s %s %s: runtime ILU0 differs from the reference (rel diff %g)", be->name, specs[s],
                         ata_policy_name(po.policy), tu_rel_diff(LU->val, R->val, A->nnz));
            }
            ata_csr_free(LU);
        }
        ata_csr_free(A); ata_csr_free(R);
    }
    /* Real (unsymmetric) matrices: the same factors or the same error, naming the row. */
    char **files = be->tiny ? NULL : tu_list("real");
    int nf = 0;
    for (char **f = files; f && *f; f++) {
        if (be->small && nf++ % 3) continue;
        ata_csr *A, *R, *LU = NULL;
        TU_OK(ata_matrix_read(*f, &A));
        TU_OK(ata_csr_copy(A, &R));
        ata_status ref = ata_ref_ilu0(R);
        for (int k = 0; k < be->npol_ata; k += 2) {     /* levelset, ca (the default), greedy */
            ata_plan_options po = ata_plan_defaults();
            po.policy = be->pols[k];
            ata_status st = ata_spilu0(ctx, A, &po, &LU);
            if (st != ref)
                fail_msg("%s %s ilu0: reference %s, %s %s (%s)", *f, ata_policy_name(po.policy),
                         ata_status_string(ref), be->name, ata_status_string(st), ata_last_error());
            if (st == ATA_OK) {
                if (memcmp(LU->val, R->val, A->nnz * sizeof *R->val) != 0)
                    fail_msg("%s %s: %s ILU0 differs from the reference", *f, ata_policy_name(po.policy), be->name);
            } else {
                assert_true(strstr(ata_last_error(), "row") != NULL);
            }
            ata_csr_free(LU);
            LU = NULL;
        }
        ata_csr_free(A); ata_csr_free(R);
    }
    tu_free_list(files);
    ata_context_destroy(ctx);
}

/* A zero pivot is reported with its row, by the ATA kernels. */
void bs_test_ilu0_zero_pivot(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    BS_TINY_SKIP(be);
    /* [1 1; 1 1]: u_11 = 1 - 1*1 = 0. */
    ata_csr *A;
    TU_OK(ata_csr_alloc(2, 2, 4, &A));
    int rp[] = { 0, 2, 4 }, ci[] = { 0, 1, 0, 1 };
    memcpy(A->rowptr, rp, sizeof rp);
    memcpy(A->col, ci, sizeof ci);
    for (int k = 0; k < 4; k++) A->val[k] = 1;
    ata_context *ctx = bs_context(be, 0, 10);
    for (int k = 0; k < be->npol_ata; k++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = be->pols[k];
        ata_csr *LU = NULL;
        assert_int_equal(ata_spilu0(ctx, A, &po, &LU), ATA_ERR_ZERO_PIVOT);
        assert_non_null(strstr(ata_last_error(), "row 1"));
        ata_csr_free(LU);
    }
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* Several plans alive at once on one context, interleaved solves. */
void bs_test_many_plans(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    ata_context *ctx = bs_context(be, 0, 10);
    tu_check_many_plans(ctx, be->pols, be->npol_ata);
    ata_context_destroy(ctx);
}

/* A corrupted plan (be->corrupt: a row waits for one that never comes, or
 * comes only after it on the same worker) must end with ATA_ERR_TIMEOUT
 * ("waited ... no progress for T s"), never hang, and leave the context
 * usable: a fresh plan solves right afterwards. */
void bs_test_corrupt_plan_times_out(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    BS_TINY_SKIP(be);
    if (!be->corrupt) { skip(); return; }
    tu_problem pb;
    tu_problem_make(&pb, "lap2d:30", 1);
    for (int t = 0; t < 2; t++) {
        ata_context *ctx = bs_context(be, be->corrupt_threads[t], 0.2);
        for (int k = 0; k < be->ncorrupt_pols; k++) {
            ata_plan_options po = ata_plan_defaults();
            po.policy = be->corrupt_pols[k];
            po.S = be->corrupt_S;
            po.traversal = t ? ATA_PUSH : ATA_PULL;
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, pb.A, &po, &p));
            be->corrupt(p);
            ata_status st = ata_sptrsv(p, pb.b, pb.x);
            if (st != ATA_ERR_TIMEOUT)
                fail_msg("%s %s %s: a corrupted plan gave %s, not a timeout", be->name, ata_policy_name(po.policy),
                         t ? "push" : "pull", ata_status_string(st));
            assert_non_null(strstr(ata_last_error(), "waited"));
            assert_non_null(strstr(ata_last_error(), "no progress for 0.2 s"));
            ata_plan_destroy(p);
            TU_OK(ata_sptrsv_plan_create(ctx, pb.A, &po, &p));
            TU_OK(ata_sptrsv(p, pb.b, pb.x));
            tu_check_solution(pb.A, "after a timeout", &po, pb.b, pb.x, pb.xr, pb.n);
            ata_plan_destroy(p);
        }
        ata_context_destroy(ctx);
    }
    tu_problem_free(&pb);
}

/* The vector kernels PCG uses (the backend's private ops), against host
 * arithmetic. */
void bs_test_vector_kernels(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    ata_context *ctx = bs_context(be, 0, 10);
    const ata_backend_ops *ops = ctx->ops;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d27:20", &A));
    const int n = A->nrows;
    double *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy), *hr = malloc(n * sizeof *hr);
    double *dx, *dy;
    tu_random_vec(hx, n, 3);
    TU_OK(ops->vec_alloc(ctx, n, &dx));
    TU_OK(ops->vec_alloc(ctx, n, &dy));
    TU_OK(ops->vec_upload(ctx, dx, hx, n));
    void *h;
    TU_OK(ops->spmv_create(ctx, A, &h));
    TU_OK(ops->spmv(ctx, h, dx, dy));
    TU_OK(ops->vec_download(ctx, hy, dy, n));
    ata_ref_spmv(A, hx, hr);
    assert_true(tu_rel_diff(hy, hr, n) <= 1e-14);
    double dot, ref = 0, dot2;
    for (int i = 0; i < n; i++) ref += hx[i] * hr[i];
    TU_OK(ops->dot(ctx, n, dx, dy, &dot));
    TU_OK(ops->dot(ctx, n, dx, dy, &dot2));
    assert_true(fabs(dot - ref) <= 1e-12 * fabs(ref));
    assert_memory_equal(&dot, &dot2, sizeof dot);      /* deterministic */
    /* axpby against the backend's own SpMV output (hy), not the host SpMV
     * (hr), which may sum in another order: one rounding per entry, bitwise. */
    TU_OK(ops->axpby(ctx, n, 2.0, dx, -0.5, dy));
    double *hz = malloc(n * sizeof *hz);
    TU_OK(ops->vec_download(ctx, hz, dy, n));
    for (int i = 0; i < n; i++) assert_true(hz[i] == 2.0 * hx[i] + -0.5 * hy[i]);
    free(hz);
    ops->spmv_destroy(ctx, h);
    ops->vec_free(ctx, dx);
    ops->vec_free(ctx, dy);
    free(hx); free(hy); free(hr);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* PCG on the backend with ATA (and vendor, where the backend has it)
 * triangular solves: converged, and with ILU0 within two iterations of the
 * serial PCG (test_pcg asks the CPU for the same count). */
void bs_test_pcg(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    BS_TINY_SKIP(be);
    ata_context *ctx = bs_context(be, 0, 10);
    ata_csr *A;
    TU_OK(ata_gen_from_spec(be->small ? "lap2d:40,perm=3" : "lap2d:100,perm=3", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1;
    ata_pcg_result ref;
    ata_pcg_options o = ata_pcg_defaults();
    TU_OK(ata_pcg(NULL, A, b, x, &o, &ref));
    ata_policy pols[3] = { ATA_POLICY_CA, ATA_POLICY_SYNCFREE };
    int npols = 2;
    for (int k = be->npol_ata; k < be->npol; k++)
        if (be->pols[k] == ATA_POLICY_VENDOR) pols[npols++] = ATA_POLICY_VENDOR;
    for (int pc = 0; pc < 2; pc++)
        for (int k = 0; k < npols; k++) {
            o = ata_pcg_defaults();
            o.precond = pc ? ATA_PC_IC0 : ATA_PC_ILU0;
            o.plan.policy = pols[k];
            ata_pcg_result res;
            memset(x, 0, n * sizeof *x);
            ata_status st = ata_pcg(ctx, A, b, x, &o, &res);
            if (st != ATA_OK)
                fail_msg("%s pcg %s: %s: %s", be->name, ata_policy_name(pols[k]), ata_status_string(st), ata_last_error());
            assert_true(res.relres <= 1e-6);
            if (pc == 0) assert_true(abs(res.iterations - ref.iterations) <= 2);
            ata_pcg_result_free(&res);
        }
    ata_pcg_result_free(&ref);
    free(b); free(x);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* ILU0 with a dense first row and column (an arrow): the kernels look row
 * i's few columns up in the long row 0 instead of scanning it (the
 * quadratic case of a dense early row); the factors must stay bitwise the
 * reference's. */
void bs_test_ilu0_dense_row(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    const int n = be->tiny ? 200 : 3000, nnz = 3 * n - 2;
    int *ri = malloc(nnz * sizeof *ri), *ci = malloc(nnz * sizeof *ci), e = 0;
    double *v = malloc(nnz * sizeof *v);
    for (int i = 0; i < n; i++) { ri[e] = i; ci[e] = i; v[e++] = 4.0 + i % 7; }
    for (int j = 1; j < n; j++) {
        ri[e] = 0; ci[e] = j; v[e++] = -1.0 / (1 + j % 5);
        ri[e] = j; ci[e] = 0; v[e++] = -1.0 / (2 + j % 3);
    }
    ata_csr *A, *R, *LU;
    TU_OK(ata_csr_from_coo(n, n, nnz, ri, ci, v, 0, &A));
    TU_OK(ata_csr_copy(A, &R));
    TU_OK(ata_ref_ilu0(R));
    ata_context *ctx = bs_context(be, 0, 10);
    for (int k = 0; k < be->npol_ata; k++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = be->pols[k];
        TU_OK(ata_spilu0(ctx, A, &po, &LU));
        if (memcmp(LU->val, R->val, A->nnz * sizeof *R->val) != 0)
            fail_msg("arrow n = %d %s: %s ILU0 differs from the reference (rel diff %g)", n, be->name,
                     ata_policy_name(po.policy), tu_rel_diff(LU->val, R->val, A->nnz));
        ata_csr_free(LU);
    }
    ata_context_destroy(ctx);
    ata_csr_free(A); ata_csr_free(R);
    free(ri); free(ci); free(v);
}

/* Transposed solves (ata_solve_args.transpose): T^T x = b against the
 * reference's row solve of T^T (formed here, not by the library): bitwise
 * where the transposed plan is pull (that of a push plan: it reads the push
 * plan's CSC of T, the CSR of T^T, in stored order), within 1e-12 where it
 * is push;
 * several columns; new values reach the transposed plan; factors: (L U)^T
 * against U^T then L^T of the reference. */
static void check_transposed(ata_context *ctx, const bs_backend *be, const ata_csr *A, const char *name, int pi)
{
    const int n = A->nrows;
    double *b = malloc(3 * (size_t)n * sizeof *b), *x = malloc(3 * (size_t)n * sizeof *x),
           *xr = malloc((size_t)n * sizeof *xr);
    tu_random_vec(b, 3 * n, 11);
    ata_solve_args tr = ata_solve_defaults();
    tr.transpose = 1;
    for (int v = 0; v < 8; v++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = be->pols[pi];
        po.uplo = (v & 1) ? ATA_UPPER : ATA_LOWER;
        po.diag = (v & 2) ? ATA_UNIT : ATA_NON_UNIT;
        po.traversal = (v & 4) ? ATA_PUSH : ATA_PULL;
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
        for (int round = 0; round < 2; round++) {
            ata_csr *T;
            TU_OK(po.uplo == ATA_LOWER ? ata_csr_tril(A, &T) : ata_csr_triu(A, &T));
            if (round) {            /* new values, then the transposed plan must see them */
                for (int q = 0; q < T->nnz; q++) T->val[q] *= 1.0 + 0.25 * (q % 3);
                TU_OK(ata_sptrsv_plan_update_values(p, T));
            }
            ata_csr *Tt;
            TU_OK(ata_csr_transpose(T, &Tt));
            TU_OK(ata_ref_sptrsv_csr(Tt, po.uplo == ATA_LOWER ? ATA_UPPER : ATA_LOWER, po.diag, b, xr));
            TU_OK(ata_sptrsv_ex(p, b, x, &tr));
            /* vendor plans run cuSPARSE (or the emulator's reference): a bound, not bits */
            const int vendor = pi >= be->npol_ata;
            /* T^T's rows are T's columns: those the backend splits (the
             * GPU's hubs) are held to 1e-12, not to the bits */
            const int split = tu_pull_splits(Tt, po.uplo == ATA_LOWER ? ATA_UPPER : ATA_LOWER);
            if (po.traversal == ATA_PUSH && !vendor && split) {
                if (tu_rel_diff2(x, xr, n) > 1e-12)
                    fail_msg("%s %s: transposed solve of a push plan (pull, rows split) off by %g", name,
                             ata_policy_name(po.policy), tu_rel_diff2(x, xr, n));
            } else if (po.traversal == ATA_PUSH && !vendor) {
                if (memcmp(x, xr, (size_t)n * sizeof *x))
                    fail_msg("%s %s %s %s: transposed solve of a push plan (pull) not bitwise the reference's", name,
                             ata_policy_name(po.policy), po.uplo == ATA_LOWER ? "lower" : "upper",
                             po.diag == ATA_UNIT ? "unit" : "non-unit");
            } else if (tu_rel_diff(x, xr, n) > (vendor ? 1e-10 : 1e-12)) {
                fail_msg("%s %s: transposed solve off by %g", name, ata_policy_name(po.policy), tu_rel_diff(x, xr, n));
            }
            /* three columns at once: each the single-column answer */
            ata_solve_args tm = tr;
            tm.nrhs = 3;
            TU_OK(ata_sptrsv_ex(p, b, x, &tm));
            for (int c = 0; c < 3; c++) {
                TU_OK(ata_ref_sptrsv_csr(Tt, po.uplo == ATA_LOWER ? ATA_UPPER : ATA_LOWER, po.diag, b + (size_t)c * n, xr));
                assert_true(tu_rel_diff(x + (size_t)c * n, xr, n) <= (vendor ? 1e-10 : 1e-12));
            }
            ata_csr_free(T);
            ata_csr_free(Tt);
        }
        ata_plan_destroy(p);
    }
    free(b); free(x); free(xr);
}

void bs_test_transpose(void **state)
{
    const bs_backend *be = *state;
    BS_NEED(be);
    ata_context *ctx = bs_context(be, 0, 10);
    const char *specs[] = { "lap3d:8", "circuit:3000,perm=5", "lap2d:20,perm=2" };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        if (be->tiny && s) continue;
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        for (int k = 0; k < be->npol; k++) {
            if (be->small && (k + (int)s) % 2) continue;
            check_transposed(ctx, be, A, specs[s], k);
        }
        /* a factor: (L U)^T x = b is U^T y = b, then L^T x = y */
        ata_factor_options fo = ata_factor_defaults();
        fo.plan.policy = be->pols[0];
        ata_factor *F;
        TU_OK(ata_factor_setup(ctx, A, &fo, &F));
        ata_csr *LU;
        TU_OK(ata_csr_copy(A, &LU));
        TU_OK(ata_ref_ilu0(LU));
        const int n = A->nrows;
        double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x),
               *y = malloc((size_t)n * sizeof *y), *xr = malloc((size_t)n * sizeof *xr);
        tu_random_vec(b, n, 5);
        TU_OK(ata_ref_sptrsv_csc(LU, ATA_LOWER, ATA_NON_UNIT, b, y));   /* U^T y = b: U's CSR as CSC of a lower */
        TU_OK(ata_ref_sptrsv_csc(LU, ATA_UPPER, ATA_UNIT, y, xr));      /* L^T x = y */
        ata_solve_args tr = ata_solve_defaults();
        tr.transpose = 1;
        TU_OK(ata_factor_solve_ex(F, b, x, &tr));
        /* (the runtime's factors are A's relabelled ones only in PCG: here
         * the same operations, so a bound for rounding in the solves) */
        if (tu_rel_diff(x, xr, n) > 1e-10) fail_msg("%s: factor transposed solve off by %g", specs[s], tu_rel_diff(x, xr, n));
        /* the same contract as the plain solve: b and x must not alias */
        assert_int_equal(ata_factor_solve_ex(F, b, b, &tr), ATA_ERR_ARG);
        /* new values: the transposed plans must not keep the old factors */
        for (int q = 0; q < A->nnz; q++) LU->val[q] = 3 * A->val[q];
        TU_OK(ata_factor_update_values(F, LU->val));
        ata_csr *LU2;
        TU_OK(ata_csr_copy(LU, &LU2));
        TU_OK(ata_ref_ilu0(LU2));
        TU_OK(ata_ref_sptrsv_csc(LU2, ATA_LOWER, ATA_NON_UNIT, b, y));
        TU_OK(ata_ref_sptrsv_csc(LU2, ATA_UPPER, ATA_UNIT, y, xr));
        TU_OK(ata_factor_solve_ex(F, b, x, &tr));
        if (tu_rel_diff(x, xr, n) > 1e-10) fail_msg("%s: factor transposed solve after new values off by %g", specs[s],
                                                  tu_rel_diff(x, xr, n));
        ata_csr_free(LU2);
        tr.transpose = 2;
        assert_int_equal(ata_factor_solve_ex(F, b, x, &tr), ATA_ERR_ARG);
        ata_factor_destroy(F);
        ata_csr_free(LU);
        free(b); free(x); free(y); free(xr);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}
