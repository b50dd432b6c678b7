/* test_runtime.c - the CPU backend: the backend-vs-reference suite
 * (backend_suite.c: every policy x pull/push x lower/upper x unit/non-unit
 * on the real and generated matrices, ILU0, many plans, a corrupted plan
 * must time out, vector kernels, PCG) instantiated for cpu, plus what only
 * the CPU backend has (thread counts, its way to corrupt a plan) and the
 * host-side schedule invariants and DAG levels every backend relies on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend_suite.h"
#include "dag.h"
#include "context.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_exec.h"
#include "factor.h"

static const ata_policy cpu_policies[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_CHAIN,
                                           ATA_POLICY_LA, ATA_POLICY_GREEDY, ATA_POLICY_AUTO };
#define NPOL (int)(sizeof cpu_policies / sizeof *cpu_policies)

/* A solve that can never finish. Push: a position with a predecessor on
 * the other worker waits for one more than it has (its cross slot's count,
 * cpu_plan.slot_preds). Pull, two workers (corrupt_threads; one worker runs the SET
 * order and trusts it, waiting for nothing): a row is made to wait on the
 * last one of the order, which its worker reaches only after rows that wait
 * on this one's. The CPU plan is in position space (cpu_exec_layout):
 * position n/2's first entry is off-diagonal; point it at the last one.
 * S = 1 keeps every row tracked, whatever the measured costs say. */
static void cpu_corrupt(ata_plan *p)
{
    const int n = p->n;
    if (p->opt.traversal == ATA_PUSH) {
        if (cpu_plan_of(p)->push_nslots > 0)    /* (none on one worker: then no timeout either) */
            cpu_plan_of(p)->slot_preds[cpu_plan_of(p)->push_nslots / 2] += 1;
    }
    else p->T->col[p->T->rowptr[n / 2]] = n - 1;
}

static const bs_backend cpu_backend = {
    .name = "cpu", .backend = ATA_BACKEND_CPU, .threads = 2, .available = 1,
    .pols = cpu_policies, .npol = NPOL, .npol_ata = NPOL,
    .corrupt = cpu_corrupt, .corrupt_pols = { ATA_POLICY_SYNCFREE }, .ncorrupt_pols = 1, .corrupt_S = 1,
    .corrupt_threads = { 2, 2 },
};

static ata_context *make_ctx(int threads, double timeout)
{
    return bs_context(&cpu_backend, threads, timeout);
}

/* A NaN put into b at `row`, the first row in solve order that it reaches:
 * the solve says so and names that row. */
static void expect_bad_row(ata_plan *p, double *b, double *x, int row)
{
    b[row] = NAN;
    assert_int_equal(ata_sptrsv(p, b, x), ATA_ERR_NONFINITE);
    char want[32];
    snprintf(want, sizeof want, "row %d:", row);
    if (!strstr(ata_last_error(), want)) fail_msg("'%s' does not name %s", ata_last_error(), want);
}

/* chain's blocks: whole atasks, at most S rows, every row but a block's
 * first needing the one before it in the block; and a block cut in two
 * inside its atask (an edge between two blocks one worker does not order)
 * is caught by agg_check_order. */
static void check_blocks(agg_result *r, const ata_csr *T, ata_uplo uplo, int S)
{
    assert_non_null(r->block_ptr);
    assert_int_equal(r->untracked, r->natasks);
    assert_int_equal(r->atask_block[r->natasks], r->nblocks);
    for (int a = 0; a < r->natasks; a++)
        assert_int_equal(r->atask_ptr[a], r->block_ptr[r->atask_block[a]]);
    int cut = -1;
    for (int b = 0; b < r->nblocks; b++) {
        assert_true(r->block_ptr[b + 1] - r->block_ptr[b] <= S);
        for (int k = r->block_ptr[b] + 1; k < r->block_ptr[b + 1]; k++) {
            const int i = r->order[k], prev = r->order[k - 1];
            assert_int_equal(i, uplo == ATA_LOWER ? prev + 1 : prev - 1);
            int dep = 0;
            for (int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) dep |= T->col[q] == prev;
            assert_true(dep);
            if (cut < 0) cut = k;
        }
    }
    if (cut < 0) return;    /* no block of two rows */
    int *bp = malloc((r->nblocks + 2) * sizeof *bp), *ab = malloc((r->natasks + 1) * sizeof *ab), nb = 0;
    for (int b = 0; b < r->nblocks; b++) {
        bp[nb++] = r->block_ptr[b];
        if (r->block_ptr[b] < cut && cut < r->block_ptr[b + 1]) bp[nb++] = cut;
    }
    bp[nb] = r->block_ptr[r->nblocks];
    for (int a = 0; a <= r->natasks; a++) ab[a] = r->atask_block[a] + (r->atask_ptr[a] > cut);
    int *obp = r->block_ptr, *oab = r->atask_block, onb = r->nblocks;
    r->block_ptr = bp; r->atask_block = ab; r->nblocks = nb;
    assert_int_not_equal(agg_check_order(r, T->nrows, T->rowptr, T->col, 1, uplo), ATA_OK);
    r->block_ptr = obp; r->atask_block = oab; r->nblocks = onb;
    free(bp); free(ab);
}

/* The schedule invariant behind deadlock freedom: every edge goes forward in
 * the SET order, every coarse edge crosses a barrier. */
static void test_schedule_order(void **state)
{
    (void)state;
    const char *specs[] = { "lap2d:50", "lap3d:10,perm=5", "circuit:8000" };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        ata_csr *A, *L, *U;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        TU_OK(ata_csr_tril(A, &L));
        TU_OK(ata_csr_triu(A, &U));
        for (int u = 0; u < 2; u++) {
            const ata_csr *T = u ? U : L;
            ata_uplo uplo = u ? ATA_UPPER : ATA_LOWER;
            dag d;
            TU_OK(dag_build(T->nrows, T->rowptr, T->col, 1, uplo, &d));
            int S_list[] = { 1, 7, 100, 100000 };
            for (int k = 0; k < NPOL; k++)
                for (int si = 0; si < 4; si++) {
                    agg_result r;
                    TU_OK(agg_build(&d, T->rowptr, T->col, 1, uplo, cpu_policies[k], S_list[si], 64, &r));
                    TU_OK(agg_check_order(&r, T->nrows, T->rowptr, T->col, 1, uplo));
                    assert_int_equal(r.atask_ptr[r.natasks], T->nrows);
                    assert_true(r.c + r.f <= d.m);
                    /* positions form a permutation */
                    char *seen = calloc(T->nrows, 1);
                    for (int i = 0; i < T->nrows; i++) { assert_false(seen[r.order[i]]); seen[r.order[i]] = 1; }
                    free(seen);
                    if (cpu_policies[k] == ATA_POLICY_CA)
                        for (int a = 0; a + 1 < r.natasks; a++)
                            assert_true(r.atask_ptr[a + 1] - r.atask_ptr[a] >= S_list[si]);
                    if (cpu_policies[k] == ATA_POLICY_CHAIN) check_blocks(&r, T, uplo, S_list[si]);
                    /* Swapping a task with its predecessor must be caught. */
                    int *pos = malloc(T->nrows * sizeof *pos);
                    for (int q = 0; q < T->nrows; q++) pos[r.order[q]] = q;
                    int i = r.order[T->nrows - 1], j = -1;
                    for (int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++)
                        if (T->col[q] != i) j = T->col[q];
                    if (j >= 0) {
                        r.order[pos[i]] = j;
                        r.order[pos[j]] = i;
                        assert_int_not_equal(agg_check_order(&r, T->nrows, T->rowptr, T->col, 1, uplo), ATA_OK);
                    }
                    free(pos);
                    agg_free(&r);
                }
            dag_free(&d);
        }
        ata_csr_free(A); ata_csr_free(L); ata_csr_free(U);
    }
}

/* Levels and classes of small known DAGs. */
static void test_dag_levels(void **state)
{
    (void)state;
    /* Lower bidiagonal chain of 5: levels 0..4, 4 edges. */
    int ptr[] = { 0, 1, 3, 5, 7, 9 }, idx[] = { 0, 0, 1, 1, 2, 2, 3, 3, 4 };
    dag d;
    TU_OK(dag_build(5, ptr, idx, 1, ATA_LOWER, &d));
    assert_int_equal(d.nlevels, 5);
    assert_int_equal(d.m, 4);
    for (int i = 0; i < 5; i++) assert_int_equal(d.level[i], i);
    assert_int_equal(d.dag_class, DAG_PARALLEL);
    dag_free(&d);
    /* Same pattern read as successors (CSC of the upper triangle of the
     * transpose): row i lists i-1 and i, i.e. successor i-1 in an upper DAG. */
    TU_OK(dag_build(5, ptr, idx, 0, ATA_UPPER, &d));
    assert_int_equal(d.nlevels, 5);
    assert_int_equal(d.level[4], 0);
    assert_int_equal(d.level[0], 4);
    dag_free(&d);
    /* 2D Laplacian natural order: levels = nx + ny - 1, L-shape class for a
     * long thin grid? No: 300x300 has 599 levels, widths up to 300 < 512. */
    ata_csr *A, *L;
    TU_OK(ata_gen_laplace2d(300, 300, &A));
    TU_OK(ata_csr_tril(A, &L));
    TU_OK(dag_build(L->nrows, L->rowptr, L->col, 1, ATA_LOWER, &d));
    assert_int_equal(d.nlevels, 599);
    assert_int_equal(d.max_width, 300);
    assert_int_equal(d.dag_class, DAG_LSHAPE);
    dag_free(&d);
    ata_csr_free(A); ata_csr_free(L);
    /* 3D 7-point: level l holds ~l^2/2 rows early on, so >= 512 from l ~ 32.
     * 40^3: 118 levels, 46% of them wide -> L-shape; 60^3: 178 levels, 64%
     * wide -> wide. */
    TU_OK(ata_gen_laplace3d(40, 40, 40, 7, &A));
    TU_OK(ata_csr_tril(A, &L));
    TU_OK(dag_build(L->nrows, L->rowptr, L->col, 1, ATA_LOWER, &d));
    assert_int_equal(d.nlevels, 118);
    assert_int_equal(d.dag_class, DAG_LSHAPE);
    dag_free(&d);
    ata_csr_free(A); ata_csr_free(L);
    TU_OK(ata_gen_laplace3d(60, 60, 60, 7, &A));
    TU_OK(ata_csr_tril(A, &L));
    TU_OK(dag_build(L->nrows, L->rowptr, L->col, 1, ATA_LOWER, &d));
    assert_int_equal(d.nlevels, 178);
    assert_int_equal(d.dag_class, DAG_WIDE);
    dag_free(&d);
    ata_csr_free(A); ata_csr_free(L);
}

static void test_thread_counts(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:16,perm=2", &A));
    for (int threads = 1; threads <= 4; threads *= 2) {   /* 4 oversubscribes this machine */
        ata_context *ctx = make_ctx(threads, 20);
        assert_int_equal(ata_context_threads(ctx), threads);
        assert_int_equal(tu_check_sweep(ctx, A, "lap3d:16,perm=2", 0, cpu_policies, NPOL), 2 * 2 * 2 * 2 * NPOL);
        ata_context_destroy(ctx);
    }
    ata_csr_free(A);
}

/* The pull solve's three ways to meet b and x (cpu_exec.c, pull_rows):
 * where the plan's order jumps around in index (lap3d), b is staged into
 * position order before and x scattered after; where it is almost the
 * identity (the upper triangle of a level-ordered matrix), T, b and x stay
 * by row and are read and written through the order; where it is the
 * identity (the lower one), the solve reads b and writes the caller's x
 * straight. Neither makes a position copy of x or of T. Each is taken here (asserted on the plan), with 2
 * workers (fixed S) and tracked atasks (syncfree), and each solve is
 * bitwise the serial reference's, for random b, x poisoned before, after
 * new values, and a NaN in b named at its row. */
static void test_pull_staging(void **state)
{
    (void)state;
    ata_csr *nat, *lev;
    TU_OK(ata_gen_from_spec("lap3d:12", &nat));
    lev = tu_level_ordered(nat);
    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA };
    const int n = nat->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
    /* 2 workers, then one: a plan by row whose levels are intervals of rows
     * runs them in natural order (cpu_plan.nat_rows, exec_natural) */
    for (int workers = 2; workers >= 1; workers--) {
    ata_context *ctx = make_ctx(workers, 20);
    for (int m = 0; m < 2; m++) {
        ata_csr *A = m ? lev : nat;
        for (int k = 0; k < 3; k++)
            for (int v = 0; v < 4; v++) {
                ata_plan_options po = ata_plan_defaults();
                po.policy = pols[k];
                po.uplo = (v & 1) ? ATA_UPPER : ATA_LOWER;
                po.diag = (v & 2) ? ATA_UNIT : ATA_NON_UNIT;
                po.S = k == 1 ? 1 : 8;
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
                assert_int_equal(p->info.threads_used, workers);
                /* the level-ordered matrix's upper levels are intervals of
                 * rows (levelset keeps them whole); natural lap3d's are not */
                if (m == 1 && po.uplo == ATA_UPPER && k == 0) assert_true(cpu_plan_of(p)->nat_rows);
                if (m == 0) assert_false(cpu_plan_of(p)->nat_rows);
                /* lower on the level-ordered matrix: levelset and syncfree keep
                 * the level order (ca may merge levels and reorder) */
                const int direct = m == 1 && po.uplo == ATA_LOWER && k < 2;
                if (direct) assert_true(cpu_plan_of(p)->order_identity && cpu_plan_of(p)->by_row);
                if (m == 0) assert_false(cpu_plan_of(p)->order_identity);
                if (m == 0 && po.uplo == ATA_LOWER) assert_false(cpu_plan_of(p)->by_row);          /* staged */
                if (m == 1 && po.uplo == ATA_UPPER && k == 0)                           /* by row, through order */
                    assert_true(cpu_plan_of(p)->by_row && !cpu_plan_of(p)->order_identity);
                if (cpu_plan_of(p)->by_row) { assert_null(cpu_plan_of(p)->xp); assert_null(cpu_plan_of(p)->xpos); }
                else { assert_non_null(cpu_plan_of(p)->xp); assert_non_null(cpu_plan_of(p)->xpos); }
                ata_csr *A2;
                TU_OK(ata_csr_copy(A, &A2));
                for (int q = 0; q < A2->nnz; q++) A2->val[q] *= 1.0 + 0.25 * (q % 5);
                for (int t = 0; t < 3; t++) {
                    if (t == 2) TU_OK(ata_sptrsv_plan_update_values(p, A2));
                    tu_random_vec(b, n, 100 + t);
                    for (int i = 0; i < n; i++) x[i] = NAN;
                    TU_OK(ata_ref_sptrsv_csr(t == 2 ? A2 : A, po.uplo, po.diag, b, xr));
                    TU_OK(ata_sptrsv(p, b, x));
                    if (memcmp(x, xr, (size_t)n * sizeof *x))
                        fail_msg("%s %s v%d solve %d: not bitwise the reference (rel diff %g)", m ? "level order" : "natural",
                                 ata_policy_name(pols[k]), v, t, tu_rel_diff(x, xr, n));
                }
                {   /* several columns (blocks of 2 and 1): each bitwise its own reference */
                    double *B = malloc(3 * (size_t)n * sizeof *B), *X = malloc(3 * (size_t)n * sizeof *X);
                    for (int c = 0; c < 3; c++) tu_random_vec(B + (size_t)c * n, n, 200 + c);
                    for (size_t i = 0; i < 3 * (size_t)n; i++) X[i] = NAN;
                    TU_OK(ata_sptrsv_multi(p, 3, B, n, X, n));
                    for (int c = 0; c < 3; c++) {
                        TU_OK(ata_ref_sptrsv_csr(A2, po.uplo, po.diag, B + (size_t)c * n, xr));
                        if (memcmp(X + (size_t)c * n, xr, (size_t)n * sizeof *xr))
                            fail_msg("%s %s v%d column %d of 3: not bitwise the reference", m ? "level order" : "natural",
                                     ata_policy_name(pols[k]), v, c);
                    }
                    free(B); free(X);
                }
                expect_bad_row(p, b, x, n / 3); /* the first row in solve order with a non-finite x */
                ata_csr_free(A2);
                ata_plan_destroy(p);
            }
    }
    ata_context_destroy(ctx);
    }
    free(b); free(x); free(xr);
    ata_csr_free(nat); ata_csr_free(lev);
    /* x over EXEC_STREAM_MIN_BYTES (4 MiB): the scatter's streaming stores,
     * into x aligned and not (the first element stored alone) */
    ata_context *ctx = make_ctx(2, 20);
    ata_csr *big;
    TU_OK(ata_gen_from_spec("lap3d:82", &big));
    const int nb = big->nrows;
    b = malloc((size_t)nb * sizeof *b); x = malloc(((size_t)nb + 1) * sizeof *x); xr = malloc((size_t)nb * sizeof *xr);
    tu_random_vec(b, nb, 7);
    TU_OK(ata_ref_sptrsv_csr(big, ATA_LOWER, ATA_NON_UNIT, b, xr));
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_LEVELSET;
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, big, &po, &p));
    assert_false(cpu_plan_of(p)->order_identity);
    assert_false(cpu_plan_of(p)->by_row);
    for (int off = 0; off < 2; off++) {
        for (int i = 0; i <= nb; i++) x[i] = NAN;
        TU_OK(ata_sptrsv(p, b, x + off));
        if (memcmp(x + off, xr, (size_t)nb * sizeof *x)) fail_msg("lap3d:82, x + %d: not bitwise the reference", off);
        assert_true(isnan(off ? x[0] : x[nb]));     /* nothing stored outside x */
    }
    ata_plan_destroy(p);
    free(b); free(x); free(xr);
    ata_csr_free(big);
    ata_context_destroy(ctx);
}

/* ATA_NON_UNIT_INV: each plan (policies, pull and push, lower and upper, 1
 * and 2 workers) bitwise the reference called with it, which differs from
 * dividing on this matrix (so the option cannot be ignored unseen); after
 * new values (the plan inverts them again); the transposed solve (a pull
 * plan for push: bitwise; for pull a push plan, within rounding); push
 * (within rounding of the reference) differs from push dividing; a bad
 * diag refused. */
static void test_diag_inverse(void **state)
{
    (void)state;
    ata_csr *A, *A2;
    TU_OK(ata_gen_from_spec("lap2d:9x7,dofs=3,perm=5", &A));
    TU_OK(ata_csr_copy(A, &A2));
    for (int q = 0; q < A->nnz; q++) A->val[q] *= 1.0 + 0.37 * sin(1.0 + q);
    for (int q = 0; q < A2->nnz; q++) A2->val[q] = A->val[q] * (1.0 + 0.11 * (q % 7));
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_CHAIN, ATA_POLICY_AUTO };
    tu_random_vec(b, n, 9);
    int differs = 0;
    for (int u = 0; u < 2; u++) {
        TU_OK(ata_ref_sptrsv_csr(A, u ? ATA_UPPER : ATA_LOWER, ATA_NON_UNIT_INV, b, xr));
        TU_OK(ata_ref_sptrsv_csr(A, u ? ATA_UPPER : ATA_LOWER, ATA_NON_UNIT, b, x));
        differs += memcmp(x, xr, (size_t)n * sizeof *x) != 0;
    }
    assert_int_equal(differs, 2);
    for (int workers = 1; workers <= 2; workers++) {
        ata_context *ctx = make_ctx(workers, 20);
        for (size_t k = 0; k < sizeof pols / sizeof *pols; k++)
            for (int v = 0; v < 4; v++) {
                ata_plan_options po = ata_plan_defaults();
                po.policy = pols[k];
                po.uplo = (v & 1) ? ATA_UPPER : ATA_LOWER;
                po.traversal = (v & 2) ? ATA_PUSH : ATA_PULL;
                po.diag = ATA_NON_UNIT_INV;
                if (po.traversal == ATA_PUSH && pols[k] == ATA_POLICY_CHAIN) continue;     /* pull only */
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
                for (int t = 0; t < 3; t++) {       /* t = 2: new values */
                    const ata_csr *M = t == 2 ? A2 : A;
                    if (t == 2) TU_OK(ata_sptrsv_plan_update_values(p, A2));
                    for (int i = 0; i < n; i++) x[i] = NAN;
                    TU_OK(ata_sptrsv(p, b, x));
                    if (po.traversal == ATA_PUSH) {     /* the push reference: on the CSC */
                        ata_csr *Mc;
                        TU_OK(po.uplo == ATA_LOWER ? ata_csr_tril(M, &Mc) : ata_csr_triu(M, &Mc));
                        ata_csr *Mt;
                        TU_OK(ata_csr_transpose(Mc, &Mt));
                        TU_OK(ata_ref_sptrsv_csc(Mt, po.uplo, ATA_NON_UNIT_INV, b, xr));
                        ata_csr_free(Mc); ata_csr_free(Mt);
                        if (tu_rel_diff(x, xr, n) > 1e-12)
                            fail_msg("%s push v%d, %d workers, solve %d: rel diff %g", ata_policy_name(pols[k]), v,
                                     workers, t, tu_rel_diff(x, xr, n));
                    } else {
                        TU_OK(ata_ref_sptrsv_csr(M, po.uplo, ATA_NON_UNIT_INV, b, xr));
                        if (memcmp(x, xr, (size_t)n * sizeof *x))
                            fail_msg("%s pull v%d, %d workers, solve %d: not bitwise the reference (rel diff %g)",
                                     ata_policy_name(pols[k]), v, workers, t, tu_rel_diff(x, xr, n));
                    }
                }
                {   /* T^T x = b: the same triangle's transposed solve */
                    ata_solve_args a = ata_solve_defaults();
                    a.transpose = 1;
                    TU_OK(ata_sptrsv_ex(p, b, x, &a));
                    ata_csr *Mc, *Mt;
                    TU_OK(po.uplo == ATA_LOWER ? ata_csr_tril(A2, &Mc) : ata_csr_triu(A2, &Mc));
                    TU_OK(ata_csr_transpose(Mc, &Mt));
                    TU_OK(ata_ref_sptrsv_csr(Mt, po.uplo == ATA_LOWER ? ATA_UPPER : ATA_LOWER, ATA_NON_UNIT_INV, b, xr));
                    if (po.traversal == ATA_PUSH ? memcmp(x, xr, (size_t)n * sizeof *x) != 0 : tu_rel_diff(x, xr, n) > 1e-12)
                        fail_msg("%s v%d transposed: rel diff %g", ata_policy_name(pols[k]), v, tu_rel_diff(x, xr, n));
                    ata_csr_free(Mc); ata_csr_free(Mt);
                }
                if (po.traversal == ATA_PUSH) {     /* push multiplies: not push dividing */
                    ata_plan_options pd = po;
                    pd.diag = ATA_NON_UNIT;
                    ata_plan *q;
                    TU_OK(ata_sptrsv_plan_create(ctx, A2, &pd, &q));
                    double *y = malloc((size_t)n * sizeof *y);
                    TU_OK(ata_sptrsv(p, b, x));
                    TU_OK(ata_sptrsv(q, b, y));
                    if (!memcmp(x, y, (size_t)n * sizeof *x))
                        fail_msg("%s push v%d: the same bits as dividing", ata_policy_name(pols[k]), v);
                    free(y);
                    ata_plan_destroy(q);
                }
                ata_plan_destroy(p);
            }
        ata_context_destroy(ctx);
    }
    ata_context *ctx = make_ctx(1, 20);
    ata_plan_options po = ata_plan_defaults();
    ata_plan *p = NULL;
    po.diag = (ata_diag)3;
    assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &p), ATA_ERR_ARG);
    assert_int_equal(ata_ref_sptrsv_csr(A, ATA_LOWER, (ata_diag)3, b, x), ATA_ERR_ARG);
    ata_context_destroy(ctx);
    free(b); free(x); free(xr);
    ata_csr_free(A); ata_csr_free(A2);
}

/* One worker walks a plan in the rows' natural order where few rows have a
 * predecessor within a few rows in it, or its levels are thin (cpu_exec.c,
 * few_near_rows, layout_natural): the
 * upper triangle of a circuit in its lower triangle's level order, whose
 * own levels scatter its rows (staged with two workers). Bitwise the
 * reference, unit and not, and a NaN in b named at its row; natural lap3d's
 * chained rows keep their levels. */
static void test_natural_walk(void **state)
{
    (void)state;
    ata_context *one = make_ctx(1, 20), *two = make_ctx(2, 20);
    ata_csr *A, *C, *L;     /* A: the upper triangle alone (the whole matrix's plan takes L's levels reversed) */
    TU_OK(ata_gen_from_spec("circuit:3000,levelorder", &L));
    TU_OK(ata_csr_triu(L, &A));
    ata_csr_free(L);
    TU_OK(ata_gen_from_spec("lap3d:10", &C));
    const int n = A->nrows;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
    for (int d = 0; d < 2; d++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = ATA_POLICY_LEVELSET;
        po.uplo = ATA_UPPER;
        po.diag = d ? ATA_UNIT : ATA_NON_UNIT;
        ata_plan *p, *q, *r;
        TU_OK(ata_sptrsv_plan_create(one, A, &po, &p));
        TU_OK(ata_sptrsv_plan_create(two, A, &po, &q));
        TU_OK(ata_sptrsv_plan_create(one, C, &po, &r));
        assert_true(cpu_plan_of(p)->by_row && cpu_plan_of(p)->nat_rows && !cpu_plan_of(p)->order_identity);
        assert_false(cpu_plan_of(q)->by_row);
        assert_false(cpu_plan_of(r)->nat_rows);
        tu_random_vec(b, n, 31 + d);
        for (int i = 0; i < n; i++) x[i] = NAN;
        TU_OK(ata_ref_sptrsv_csr(A, po.uplo, po.diag, b, xr));
        TU_OK(ata_sptrsv(p, b, x));
        if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("circuit upper, one worker: not bitwise the reference");
        expect_bad_row(p, b, x, n / 2); /* rows above n / 2 stay finite: the first non-finite row in solve order */
        ata_plan_destroy(p); ata_plan_destroy(q); ata_plan_destroy(r);
    }
    {   /* lower, rows ascending (PULL_DIRECT on an order that is not the
         * identity): the same circuit numbered backwards, whose lower
         * triangle is the upper one above */
        int *rev = malloc((size_t)n * sizeof *rev);
        for (int i = 0; i < n; i++) rev[i] = n - 1 - i;
        ata_csr *R;
        TU_OK(ata_csr_permute_sym(A, rev, &R));
        ata_plan_options po = ata_plan_defaults();
        po.policy = ATA_POLICY_LEVELSET;
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(one, R, &po, &p));
        assert_true(cpu_plan_of(p)->by_row && cpu_plan_of(p)->nat_rows && !cpu_plan_of(p)->order_identity);
        tu_random_vec(b, n, 41);
        TU_OK(ata_ref_sptrsv_csr(R, ATA_LOWER, ATA_NON_UNIT, b, xr));
        TU_OK(ata_sptrsv(p, b, x));
        if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("circuit lower, one worker: not bitwise the reference");
        {   /* several columns, the same walk (pull_rows): each bitwise its own reference */
            double *B = malloc(3 * (size_t)n * sizeof *B), *X = malloc(3 * (size_t)n * sizeof *X);
            for (int c = 0; c < 3; c++) tu_random_vec(B + (size_t)c * n, n, 50 + c);
            TU_OK(ata_sptrsv_multi(p, 3, B, n, X, n));
            for (int c = 0; c < 3; c++) {
                TU_OK(ata_ref_sptrsv_csr(R, ATA_LOWER, ATA_NON_UNIT, B + (size_t)c * n, xr));
                if (memcmp(X + (size_t)c * n, xr, (size_t)n * sizeof *xr))
                    fail_msg("circuit lower, one worker, column %d of 3: not bitwise the reference", c);
            }
            free(B); free(X);
        }
        expect_bad_row(p, b, x, n / 2); /* rows below n / 2 stay finite */
        ata_plan_destroy(p);
        ata_csr_free(R);
        free(rev);
    }
    /* Real matrices on one worker (few_near_rows): a third of the rows near
     * (1138_bus, 36% within 4 rows; its levels 54 rows wide) and thin levels
     * (bcsstk13: 87% near, 3 rows a level) walk in natural order; cryg2500
     * (98% near, 25 rows a level) keeps its levels. Bitwise the reference. */
    const char *reals[] = { "1138_bus.mtx", "bcsstk13.mtx", "cryg2500.mtx" };
    const int natural[] = { 1, 1, 0 };
    for (int m = 0; m < 3; m++) {
        ata_csr *M = tu_read_real(reals[m]);
        if (!M) continue;
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(one, M, NULL, &p));
        /* few_near itself: nat_rows alone may come from runs that are intervals */
        if (cpu_plan_of(p)->few_near != natural[m] || cpu_plan_of(p)->nat_rows != natural[m])
            fail_msg("%s, one worker: few_near %d, natural walk %d, expected %d", reals[m], cpu_plan_of(p)->few_near,
                     cpu_plan_of(p)->nat_rows, natural[m]);
        const int nm = M->nrows;
        double *bm = malloc((size_t)nm * sizeof *bm), *xm = malloc((size_t)nm * sizeof *xm), *xrm = malloc((size_t)nm * sizeof *xrm);
        tu_random_vec(bm, nm, 60 + m);
        TU_OK(ata_ref_sptrsv_csr(M, ATA_LOWER, ATA_NON_UNIT, bm, xrm));
        TU_OK(ata_sptrsv(p, bm, xm));
        if (memcmp(xm, xrm, (size_t)nm * sizeof *xm)) fail_msg("%s, one worker: not bitwise the reference", reals[m]);
        free(bm); free(xm); free(xrm);
        ata_plan_destroy(p);
        ata_csr_free(M);
    }
    free(b); free(x); free(xr);
    ata_csr_free(A); ata_csr_free(C);
    ata_context_destroy(one); ata_context_destroy(two);
}

/* A context of two workers, or NULL (a note printed: the test is skipped)
 * where this process may use one CPU only. */
static ata_context *two_workers_or_skip(int timeout_s, const char *what)
{
    ata_context *ctx = make_ctx(2, timeout_s);
    if (ata_context_threads(ctx) >= 2 && cpu_pool_workers(ctx->pool) >= 2) return ctx;
    print_message("SKIPPED: one CPU, %s\n", what);
    ata_context_destroy(ctx);
    return NULL;
}

/* A plan laid out for two workers (T in worker order), laid out again for
 * one (cpu_exec_relayout_one, what auto's timing does when it keeps one
 * worker on a small plan): no segments, one worker, rows in natural order
 * where few are near (circuit, a permuted grid), staged in level order
 * where rows chain (lap2d:30); bitwise the reference before and after,
 * with one and several columns and after new values. A second call, and a
 * factor's plan (its T read in place), are left alone. */
static void test_relayout_one(void **state)
{
    (void)state;
    ata_context *two = two_workers_or_skip(20, "no plan laid out for two workers");
    if (!two) return;
    const char *specs[] = { "circuit:3000", "lap2d:30", "lap3d:12,perm=3" };
    const int natural[] = { 1, 0, 1 };     /* few rows near a predecessor: natural order; lap2d's chain: staged */
    for (int m = 0; m < 3; m++) {
        ata_csr *A, *L;
        TU_OK(ata_gen_from_spec(specs[m], &A));
        TU_OK(ata_csr_tril(A, &L));
        const int n = L->nrows;
        ata_plan_options po = ata_plan_defaults();
        po.policy = ATA_POLICY_CA;      /* not auto: no timing in the way */
        po.S = 64;
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(two, L, &po, &p));
        assert_true(cpu_plan_of(p)->segmented);
        double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
        double *B = malloc(2 * (size_t)n * sizeof *B), *X = malloc(2 * (size_t)n * sizeof *X);
        tu_random_vec(b, n, 70 + m);
        TU_OK(ata_ref_sptrsv_csr(L, ATA_LOWER, ATA_NON_UNIT, b, xr));
        TU_OK(ata_sptrsv(p, b, x));
        if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("%s, two workers: not bitwise the reference", specs[m]);
        assert_non_null(cpu_plan_of(p)->tbase);     /* owned T: in worker order */
        TU_OK(cpu_exec_relayout_one(p));
        if (cpu_plan_of(p)->nat_rows != natural[m] || cpu_plan_of(p)->by_row != natural[m])
            fail_msg("%s, laid out again: natural walk %d, by row %d, expected %d", specs[m], cpu_plan_of(p)->nat_rows,
                     cpu_plan_of(p)->by_row, natural[m]);
        ata_plan_info info;
        TU_OK(ata_plan_get_info(p, &info));
        assert_int_equal(info.threads_used, 1);
        assert_false(cpu_plan_of(p)->segmented);
        assert_null(cpu_plan_of(p)->tbase);
        for (int i = 0; i < n; i++) x[i] = NAN;
        TU_OK(ata_sptrsv(p, b, x));
        if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("%s, laid out again for one worker: not bitwise", specs[m]);
        for (int c = 0; c < 2; c++) tu_random_vec(B + (size_t)c * n, n, 80 + c);
        TU_OK(ata_sptrsv_multi(p, 2, B, n, X, n));
        for (int c = 0; c < 2; c++) {
            TU_OK(ata_ref_sptrsv_csr(L, ATA_LOWER, ATA_NON_UNIT, B + (size_t)c * n, xr));
            if (memcmp(X + (size_t)c * n, xr, (size_t)n * sizeof *xr))
                fail_msg("%s, laid out again, column %d of 2: not bitwise the reference", specs[m], c);
        }
        /* new values: the layout's own map from the input, made afresh */
        for (int q = 0; q < L->nnz; q++) L->val[q] *= 1.0 + 0.25 * (q % 3);
        TU_OK(ata_sptrsv_plan_update_values(p, L));
        TU_OK(ata_ref_sptrsv_csr(L, ATA_LOWER, ATA_NON_UNIT, b, xr));
        TU_OK(ata_sptrsv(p, b, x));
        if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("%s, laid out again, new values: not bitwise", specs[m]);
        /* once is all: a plan on one worker already is left as it is */
        assert_int_equal(cpu_exec_relayout_one(p), ATA_ERR_UNSUPPORTED);
        free(b); free(x); free(xr); free(B); free(X);
        ata_plan_destroy(p);
        ata_csr_free(A); ata_csr_free(L);
    }
    {   /* a factor's chain plans on two workers read a copy of their
         * triangles in worker order (not the factors in place; U's segments
         * mirrored, its rows descending): laid out again for one worker, they
         * read the factors in place again and drop the copy; the factor's
         * bits throughout, after new values too (double and float factors);
         * the copy counted once in plan_bytes, and no more after */
        ata_csr *A, *A2;
        TU_OK(ata_gen_from_spec("lap2d:40,dofs=4", &A));    /* nodes: lines cut in two, the halves alternate */
        TU_OK(ata_csr_copy(A, &A2));
        for (int q = 0; q < A2->nnz; q++) A2->val[q] *= 1.0 + 0.01 * (q % 7);
        const int n = A->nrows;
        double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
        tu_random_vec(b, n, 29);
        ata_context *one = make_ctx(1, 20);
        size_t bytes_double = 0;
        for (int mixed = 0; mixed < 2; mixed++) {
            ata_factor_options fo = ata_factor_defaults();
            fo.plan.policy = ATA_POLICY_CHAIN;     /* not auto: no timing in the way */
            fo.precision = mixed ? ATA_PRECISION_MIXED : ATA_PRECISION_DOUBLE;
            ata_factor *F, *G;
            TU_OK(ata_factor_setup(two, A, &fo, &F));
            TU_OK(ata_factor_setup(one, A, &fo, &G));   /* the reference: one worker, no relayout */
            const ata_plan *Lp, *Up;
            ata_factor_plans(F, &Lp, &Up);
            const ata_plan *P[2] = { Lp, Up };
            const ata_csr *in_place[2] = { NULL, NULL };
            for (int u = 0; u < 2; u++) {
                const cpu_plan *cp = cpu_plan_of(P[u]);
                assert_int_equal(P[u]->T_borrowed, PLAN_T_OWNED);
                assert_true(cp->segmented && cp->tbase && cp->t_source);
                assert_int_equal(cp->order_reversed, u);    /* U: L's levels backwards */
                assert_true(cp->tbase[2] != (u ? n - cp->segs.hi[2] : cp->segs.lo[2]));     /* rows moved */
                in_place[u] = cp->t_source;
                const size_t nnz = (size_t)P[u]->T->nnz,
                             copy = sizeof(int) * ((size_t)n + 1 + nnz) + sizeof(double) * nnz;
                assert_true(P[u]->info.plan_bytes >= copy && P[u]->info.plan_bytes < copy + sizeof(double) * nnz);
                if (!mixed && !u) bytes_double = P[u]->info.plan_bytes;
                else if (!u) assert_int_equal(P[u]->info.plan_bytes, bytes_double);     /* the double copy once, not twice */
            }
            for (int v = 0; v < 4; v++) {     /* A, A2 in worker order; laid out again, A2, A */
                if (v == 2) {
                    TU_OK(cpu_exec_relayout_one((ata_plan *)Lp));
                    TU_OK(cpu_exec_relayout_one((ata_plan *)Up));
                    ata_factor_plans(F, &Lp, &Up);
                    const ata_plan *Q[2] = { Lp, Up }, *R[2];
                    ata_factor_plans(G, &R[0], &R[1]);
                    for (int u = 0; u < 2; u++) {
                        assert_false(cpu_plan_of(Q[u])->segmented);
                        assert_int_equal(Q[u]->T_borrowed, PLAN_T_BORROWED);    /* the factor's own, in place */
                        assert_ptr_equal(Q[u]->T, in_place[u]);
                        /* no copy: one worker's bytes, but for a few adaptive tasks more (the cap) */
                        assert_true(Q[u]->info.plan_bytes < R[u]->info.plan_bytes + 1024 &&
                                    Q[u]->info.plan_bytes + 1024 > R[u]->info.plan_bytes);
                    }
                }
                if (v == 1 || v == 3) {
                    TU_OK(ata_factor_update_values(F, v == 1 ? A2->val : A->val));
                    TU_OK(ata_factor_update_values(G, v == 1 ? A2->val : A->val));
                }
                TU_OK(ata_factor_solve(F, b, x));
                TU_OK(ata_factor_solve(G, b, xr));
                if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("factor (%s), step %d: not bitwise",
                                                                   mixed ? "mixed" : "double", v);
            }
            ata_factor_destroy(F);
            ata_factor_destroy(G);
        }
        free(b); free(x); free(xr);
        ata_context_destroy(one);
        ata_csr_free(A);
        ata_csr_free(A2);
    }
    {   /* auto's timing (tune_record) on a small plan: the two-worker solves
         * made to look slow, so one worker is kept; the plan is laid out
         * again, says so, and solves bitwise */
        ata_csr *A, *L;
        TU_OK(ata_gen_from_spec("circuit:3000", &A));
        TU_OK(ata_csr_tril(A, &L));
        const int n = L->nrows;
        ata_plan_options po = ata_plan_defaults();
        po.policy = ATA_POLICY_CA;
        po.S = 64;
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(two, L, &po, &p));
        p->auto_policy = 1;     /* times its first solves as auto does */
        double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
        tu_random_vec(b, n, 90);
        TU_OK(ata_ref_sptrsv_csr(L, ATA_LOWER, ATA_NON_UNIT, b, xr));
        for (int k = 0; k < ATA_AUTO_TUNE_SOLVES + 2; k++) {
            if (k == ATA_AUTO_TUNE_SOLVES - 1)
                for (int i = 0; i < CPU_TUNE_SOLVES; i++) cpu_plan_of(p)->tune_s[0][i] = 1.0;   /* all workers: 1 s */
            memset(x, 0, (size_t)n * sizeof *x);
            TU_OK(ata_sptrsv(p, b, x));
            if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("circuit:3000, timed solve %d: not bitwise the reference", k);
        }
        assert_false(cpu_plan_of(p)->segmented);
        if (!strstr(ata_plan_choice(p), "kept 1 worker") || !strstr(ata_plan_choice(p), "laid out again for 1 worker") ||
            strstr(ata_plan_choice(p), "segments"))
            fail_msg("circuit:3000 after the timing: %s", ata_plan_choice(p));
        free(b); free(x); free(xr);
        ata_plan_destroy(p);
        ata_csr_free(A); ata_csr_free(L);
    }
    ata_context_destroy(two);
}

/* Push on the CPU (run_push_col, exec_push_natural): a one-thread
 * context's plan walks the columns in their natural order, bitwise the
 * reference's push (ata_ref_sptrsv_csc, the same order of subtractions);
 * two workers sum plainly where a position's predecessors are all its
 * worker's, else the others' sums go to a cross slot, atomically, counted
 * down to 0 (within 1e-12 of the reference); both
 * name the first non-finite row. auto's timing, made to find the two
 * workers slow, keeps one and lays the plan out again in natural order. */
static void test_push_workers(void **state)
{
    (void)state;
    const char *specs[] = { "circuit:6000", "lap3d:14", "lap2d:40x30,perm=3" };
    ata_context *one = make_ctx(1, 20), *two = two_workers_or_skip(20, "push on one worker only");
    for (int m = 0; m < 3; m++)
        for (int u = 0; u < 2; u++) {
            const ata_uplo uplo = u ? ATA_UPPER : ATA_LOWER;
            ata_csr *A, *Tc;
            TU_OK(ata_gen_from_spec(specs[m], &A));
            TU_OK(ata_csr_transpose(A, &Tc));     /* A's CSC (the CSR of A^T): the reference reads its columns */
            const int n = A->nrows;
            double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
            tu_random_vec(b, n, 100 + m);
            TU_OK(ata_ref_sptrsv_csc(Tc, uplo, ATA_NON_UNIT, b, xr));
            ata_plan_options po = ata_plan_defaults();
            po.uplo = uplo;
            po.traversal = ATA_PUSH;
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(one, A, &po, &p));
            assert_true(cpu_plan_of(p)->push_natural);
            TU_OK(ata_sptrsv(p, b, x));
            if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("%s %s, one worker: not bitwise the reference push", specs[m], u ? "upper" : "lower");
            const int bad = u ? n / 3 : 2 * n / 3;      /* rows after it in solve order are reached only through it */
            double keep = b[bad];
            expect_bad_row(p, b, x, bad);
            b[bad] = keep;
            ata_plan_destroy(p);
            if (two) {
                const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_CHAIN };
                for (int k = 0; k < 4; k++) {
                    po.policy = pols[k];
                    po.S = k == 1 ? 0 : 16;
                    TU_OK(ata_sptrsv_plan_create(two, A, &po, &p));
                    assert_false(cpu_plan_of(p)->push_natural);
                    for (int r = 0; r < 2; r++) {
                        for (int i = 0; i < n; i++) x[i] = NAN;
                        TU_OK(ata_sptrsv(p, b, x));
                        const double d = tu_rel_diff(x, xr, n);
                        if (!(d <= 1e-12)) fail_msg("%s %s %s, two workers, solve %d: %.3g from the reference", specs[m],
                                                    u ? "upper" : "lower", ata_policy_name(pols[k]), r, d);
                    }
                    const cpu_plan *cp = cpu_plan_of(p);
                    assert_int_equal(cp->push_nt, 2);
                    int slots = 0, plain[2] = { 0, 0 };
                    for (int i = 0; i < n; i++) {
                        const int c = cp->push_code[i];
                        if (c < 0) { plain[~c]++; continue; }
                        if (c != slots++ || cp->slot_owner[c] >= 2 || cp->slot_preds[c] < 1)    /* two workers */
                            fail_msg("%s %s: position %d: slot %d (owner %d, %d predecessors)", specs[m],
                                     ata_policy_name(pols[k]), i, c, cp->slot_owner[c], cp->slot_preds[c]);
                        if (cp->slot_pending[c] != 0) fail_msg("%s %s: position %d: %d predecessors pending after the solve",
                                                               specs[m], ata_policy_name(pols[k]), i, cp->slot_pending[c]);
                    }
                    if (slots != cp->push_nslots || !plain[0] || !plain[1] || (m == 0 && !slots))
                        fail_msg("%s %s: %d and %d positions with plain sums, %d cross slots (of %d)", specs[m],
                                 ata_policy_name(pols[k]), plain[0], plain[1], slots, cp->push_nslots);
                    expect_bad_row(p, b, x, bad);
                    b[bad] = keep;
                    ata_plan_destroy(p);
                }
                if (m == 0) {   /* a solve that timed out (a slot waits for one more than it has), then a good one */
                    ata_context *quick = make_ctx(2, 0.2);
                    po.policy = ATA_POLICY_SYNCFREE;    /* every column tracked */
                    po.S = 0;
                    TU_OK(ata_sptrsv_plan_create(quick, A, &po, &p));
                    cpu_plan *cq = cpu_plan_of(p);
                    assert_true(cq->push_nslots > 0);
                    cq->slot_preds[cq->push_nslots / 2]++;
                    assert_int_equal(ata_sptrsv(p, b, x), ATA_ERR_TIMEOUT);
                    cq->slot_preds[cq->push_nslots / 2]--;
                    TU_OK(ata_sptrsv(p, b, x));
                    if (!(tu_rel_diff(x, xr, n) <= 1e-12)) fail_msg("%s %s: the solve after a timeout is off", specs[m], u ? "upper" : "lower");
                    ata_plan_destroy(p);
                    ata_context_destroy(quick);
                }
                /* auto's timing with the two workers' solves made slow */
                po.policy = ATA_POLICY_CA;
                po.S = 16;
                TU_OK(ata_sptrsv_plan_create(two, A, &po, &p));
                p->auto_policy = 1;
                for (int k = 0; k < ATA_AUTO_TUNE_SOLVES + 2; k++) {
                    if (k == ATA_AUTO_TUNE_SOLVES - 1)
                        for (int i = 0; i < CPU_TUNE_SOLVES; i++) cpu_plan_of(p)->tune_s[0][i] = 1.0;
                    TU_OK(ata_sptrsv(p, b, x));
                    if (!(tu_rel_diff(x, xr, n) <= 1e-12)) fail_msg("%s, timed solve %d: off the reference", specs[m], k);
                }
                assert_true(cpu_plan_of(p)->push_natural);
                if (!strstr(ata_plan_choice(p), "kept 1 worker") || !strstr(ata_plan_choice(p), "columns in their natural order"))
                    fail_msg("%s after the timing: %s", specs[m], ata_plan_choice(p));
                TU_OK(ata_sptrsv(p, b, x));
                if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("%s, laid out again: not bitwise the reference push", specs[m]);
                for (int q = 0; q < A->nnz; q++) A->val[q] *= 1.0 + 0.25 * (A->col[q] % 3);   /* the same pattern */
                TU_OK(ata_sptrsv_plan_update_values(p, A));
                ata_csr_free(Tc);
                TU_OK(ata_csr_transpose(A, &Tc));
                TU_OK(ata_ref_sptrsv_csc(Tc, uplo, ATA_NON_UNIT, b, xr));
                TU_OK(ata_sptrsv(p, b, x));
                if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("%s, laid out again, new values: not bitwise", specs[m]);
                assert_int_equal(cpu_exec_relayout_one(p), ATA_ERR_UNSUPPORTED);
                ata_plan_destroy(p);
            }
            free(b); free(x); free(xr);
            ata_csr_free(A); ata_csr_free(Tc);
        }
    ata_context_destroy(one);
    if (two) ata_context_destroy(two);
}

/* The workers' schedules (cpu_sched.h): every predecessor finished before a
 * row runs, waits and segments only forwards (deadlock freedom), on the
 * plans' own schedules (2 workers here) and on schedules made afresh for
 * 3, 5 and 8 workers on the same layouts; for solve plans (staged, in
 * level order, upper solves run backwards: by row), ILU0 and the factor's
 * plans. And the check can fail: a schedule without its waits is caught. */
static void check_plan_schedule(const ata_plan *p, const char *what)
{
    ata_status st = cpu_exec_check_schedule(p, 0);
    if (st != ATA_OK) fail_msg("%s: %s", what, ata_last_error());
    const int nts[] = { 3, 5, 8 };
    for (int i = 0; i < 3; i++)
        if ((st = cpu_exec_check_schedule(p, nts[i])) != ATA_OK) fail_msg("%s, %d workers: %s", what, nts[i], ata_last_error());
}

static void test_worker_schedules(void **state)
{
    (void)state;
    ata_context *ctx = two_workers_or_skip(10, "no worker schedules");
    if (!ctx) return;
    const char *specs[] = { "lap3d:12", "circuit:6000", "lap2d:40x30,perm=3", "convdiff:8", "lap3d:10,levelorder" };
    const ata_policy pols[] = { ATA_POLICY_CA, ATA_POLICY_LA, ATA_POLICY_GREEDY, ATA_POLICY_CHAIN };
    int checked = 0;
    for (int m = 0; m < 5; m++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[m], &A));
        for (int k = 0; k < 4; k++)
            for (int u = 0; u < 2; u++) {
                ata_plan_options o = ata_plan_defaults();
                o.policy = pols[k];
                o.S = k == 2 ? 0 : 16;
                o.uplo = u ? ATA_UPPER : ATA_LOWER;
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, A, &o, &p));
                char what[96];
                snprintf(what, sizeof what, "%s %s %s", specs[m], ata_policy_name(pols[k]), u ? "upper" : "lower");
                assert_true(cpu_plan_of(p)->segmented);
                check_plan_schedule(p, what);
                checked++;
                ata_plan_destroy(p);
            }
        /* a factor: its ILU0 plan and both solve plans */
        ata_factor_options fo = ata_factor_defaults();
        fo.plan.policy = ATA_POLICY_CA;
        fo.plan.S = 16;
        factor_core *f;
        TU_OK(factor_core_setup(ctx, A, &fo, 0, NULL, &f));
        check_plan_schedule(f->fp, "ILU0 plan");
        check_plan_schedule(f->Lp, "factor L plan");
        check_plan_schedule(f->Up, "factor U plan");
        factor_core_free(f);
        ata_csr_free(A);
    }
    assert_int_equal(checked, 5 * 4 * 2);
    /* The caller (worker 0) runs what the simulation finishes last: on a
     * deep DAG, the segment of the last position (its thin levels' tail),
     * lower and upper */
    const char *deep[] = { "circuit:6000", "circuit:20000" };
    for (int m = 0; m < 2; m++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(deep[m], &A));
        for (int u = 0; u < 2; u++) {
            ata_plan_options o = ata_plan_defaults();
            o.policy = ATA_POLICY_CA;
            o.S = 16;
            o.uplo = u ? ATA_UPPER : ATA_LOWER;
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, A, &o, &p));
            const cpu_sched *S = &cpu_plan_of(p)->segs;
            int owner = -1;
            for (int t = 0; t < S->nt; t++)
                for (int q = S->seg_ptr[t]; q < S->seg_ptr[t + 1]; q++)
                    if (S->hi[q] == p->n) owner = t;
            if (owner != 0) fail_msg("%s %s: the last position's segment is worker %d's", deep[m], u ? "upper" : "lower", owner);
            ata_plan_destroy(p);
        }
        ata_csr_free(A);
    }
    /* without its waits, a schedule of a DAG with edges between workers fails the check */
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:30", &A));     /* levels wide enough to split */
    ata_plan_options o = ata_plan_defaults();
    o.S = 16;
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, A, &o, &p));
    cpu_sched *S = &cpu_plan_of(p)->segs;
    assert_true(S->nwaits > 0);
    for (int s = 0; s <= S->nseg; s++) S->wait_ptr[s] = 0;
    assert_int_equal(cpu_exec_check_schedule(p, 0), ATA_ERR_INTERNAL);
    ata_plan_destroy(p);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* The faster way is kept; where parallel kernels follow each solve (PCG's
 * factors), one worker only where it is more than 10% faster (cpu_exec.h,
 * CPU_TUNE_ONE_MARGIN), and PCG marks its factor's plans so. */
static void test_tune_margin(void **state)
{
    (void)state;
    assert_false(cpu_tune_keeps_one(1.0, 1.2, 0));
    assert_true(cpu_tune_keeps_one(1.0, 0.95, 0));
    assert_false(cpu_tune_keeps_one(1.0, 1.0, 0));
    assert_false(cpu_tune_keeps_one(1.0, 1.2, 1));
    assert_false(cpu_tune_keeps_one(1.0, 0.95, 1));
    assert_false(cpu_tune_keeps_one(1.0, 0.9, 1));
    assert_true(cpu_tune_keeps_one(1.0, 0.89, 1));
    assert_true(cpu_tune_keeps_one(3e-3, 1e-3, 1));
    assert_true(cpu_tune_clear_for_all(1.0, 1.5));
    assert_false(cpu_tune_clear_for_all(1.0, 1.49));
    assert_false(cpu_tune_clear_for_all(1.0, 0.5));
    ata_context *ctx = make_ctx(2, 10);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:12", &A));
    const ata_plan *L, *U;
    for (int pc = 0; pc < 2; pc++) {    /* ILU0's L and U, Jacobi's D */
        ata_pcg_options po = ata_pcg_defaults();
        if (pc) po.precond = ATA_PC_JACOBI;
        ata_pcg_solver *s;
        TU_OK(ata_pcg_setup(ctx, A, &po, &s));
        ata_pcg_plans(s, &L, &U);
        assert_non_null(L);
        assert_int_equal(L->parallel_after, 1);
        if (pc) assert_null(U);
        else {
            assert_non_null(U);
            assert_int_equal(U->parallel_after, 1);
        }
        ata_pcg_destroy(s);
    }
    ata_factor *F;
    ata_factor_options fo = ata_factor_defaults();
    TU_OK(ata_factor_setup(ctx, A, &fo, &F));
    ata_factor_plans(F, &L, &U);
    assert_int_equal(L->parallel_after, 0);
    assert_int_equal(U->parallel_after, 0);
    ata_factor_destroy(F);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* One timing of auto's (ATA_AUTO_TUNE_SOLVES solves from its first), its
 * recorded times overwritten before its last solve so that one worker
 * wins or loses; every solve checked against the reference's bits. */
static void forced_timing(ata_plan *p, const double *b, double *x, const double *xr, int n, int one_wins)
{
    assert_int_equal(cpu_plan_of(p)->tune_step, 0);
    for (int k = 0; k < ATA_AUTO_TUNE_SOLVES; k++) {
        if (k == 3) cpu_plan_of(p)->tune_s[0][0] = 1e300;     /* the first pair not clear */
        if (k == ATA_AUTO_TUNE_SOLVES - 1)
            for (int i = 0; i < CPU_TUNE_SOLVES; i++) {
                cpu_plan_of(p)->tune_s[0][i] = 1;
                if (i < CPU_TUNE_SOLVES - 1) cpu_plan_of(p)->tune_s[1][i] = one_wins ? 1e-12 : 10;
            }
        memset(x, 0, n * sizeof *x);
        TU_OK(ata_sptrsv(p, b, x));
        assert_memory_equal(x, xr, n * sizeof *x);
    }
    assert_int_equal(cpu_plan_of(p)->tune_done, 2 * CPU_TUNE_SOLVES);
}

/* Two solves slower than twice the kept median (timed again), then a
 * timing that one worker wins: one worker kept, its confirmation pending
 * (a timing before this kept all workers). */
static void forced_switch_to_one(ata_plan *p, const double *b, double *x, const double *xr, int n)
{
    cpu_plan_of(p)->tune_kept_s = 1e-12;
    for (int k = 0; k < 2; k++) {
        memset(x, 0, n * sizeof *x);
        TU_OK(ata_sptrsv(p, b, x));
    }
    forced_timing(p, b, x, xr, n, 1);
    assert_true(cpu_plan_of(p)->one_worker);
    assert_int_equal(cpu_plan_of(p)->tune_confirm, 1);
    cpu_plan_of(p)->tune_kept_s = 1e300;    /* no "solves slowed" from here */
}

/* auto on the CPU: ca, with Eq. 5.2's S for a grid in natural order (thin
 * levels of rows that need the row before them), S_min in level order and
 * on a circuit; the first ATA_AUTO_TUNE_SOLVES solves
 * alternate all workers and one, then one way stays; every solve is
 * bitwise the reference's, the choice names what ran, and the one-worker
 * path (forced here) gives the same bits too. */
static void test_auto_tuning(void **state)
{
    (void)state;
    ata_context *ctx = make_ctx(2, 10);
    const char *specs[] = { "lap3d:30", "lap3d:30,levelorder", "circuit:20000" };
    const char *want[] = { "auto: ca (9", "auto: ca (0", "auto: ca (" };
    const char *want_S[] = { "(Eq. 5.2 on the worker schedule's cost model", "(S_min", "(S_min" };
    for (int m = 0; m < 3; m++) {
        ata_csr *A, *T;
        TU_OK(ata_gen_from_spec(specs[m], &A));
        TU_OK(ata_csr_tril(A, &T));
        const int n = A->nrows;
        double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
        tu_random_vec(b, n, 5);
        TU_OK(ata_ref_sptrsv_csr(T, ATA_LOWER, ATA_NON_UNIT, b, xr));
        ata_plan *p;
        ata_plan_options o = ata_plan_defaults();
        assert_int_equal(o.policy, ATA_POLICY_AUTO);
        TU_OK(ata_sptrsv_plan_create(ctx, A, &o, &p));
        if (!strstr(ata_plan_choice(p), want[m]) || !strstr(ata_plan_choice(p), want_S[m]))
            fail_msg("%s: %s, expected %s and %s", specs[m], ata_plan_choice(p), want[m], want_S[m]);
        const int segmented = cpu_plan_of(p)->segmented;
        for (int k = 0; k < ATA_AUTO_TUNE_SOLVES + 3; k++) {
            /* the full timing: the first all-workers solve made to look
             * slow, so the first pair is not clear (cpu_tune_clear_for_all) */
            if (k == 3 && segmented) cpu_plan_of(p)->tune_s[0][0] = 1e300;
            memset(x, 0, n * sizeof *x);
            TU_OK(ata_sptrsv(p, b, x));
            assert_memory_equal(x, xr, n * sizeof *x);
        }
        if (segmented) {
            assert_int_equal(cpu_plan_of(p)->tune_done, 2 * CPU_TUNE_SOLVES);     /* the timed half */
            assert_int_equal(cpu_plan_of(p)->tune_step, ATA_AUTO_TUNE_SOLVES);
            assert_non_null(strstr(ata_plan_choice(p), "timed"));
            cpu_plan_of(p)->one_worker = !cpu_plan_of(p)->one_worker;     /* the other way */
            memset(x, 0, n * sizeof *x);
            TU_OK(ata_sptrsv(p, b, x));
            assert_memory_equal(x, xr, n * sizeof *x);
            /* solves twice as slow as the kept median, twice in a row: timed
             * again (as after one worker: the real timings below then never
             * ask for a confirmation, which would move the timings counted) */
            cpu_plan_of(p)->tune_last_one = 1;
            cpu_plan_of(p)->tune_kept_s = 1e-12;
            for (int k = 0; k < 2 + ATA_AUTO_TUNE_SOLVES; k++) {
                memset(x, 0, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
                assert_memory_equal(x, xr, n * sizeof *x);
            }
            assert_int_equal(cpu_plan_of(p)->tune_rounds, 2);
            if (!strstr(ata_plan_choice(p), "timing 2")) fail_msg("%s: %s", specs[m], ata_plan_choice(p));
            /* CPU_TUNE_AGAIN_FIRST solves after a timing, timed again, and
             * then 4 times as many later (no "solves slowed" in between) */
            cpu_plan_of(p)->tune_kept_s = 1e300;
            for (int k = 0; k < CPU_TUNE_AGAIN_FIRST + ATA_AUTO_TUNE_SOLVES; k++) {
                memset(x, 0, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
                assert_memory_equal(x, xr, n * sizeof *x);
            }
            assert_int_equal(cpu_plan_of(p)->tune_rounds, 3);
            assert_int_equal(cpu_plan_of(p)->tune_next, CPU_TUNE_AGAIN_FIRST * CPU_TUNE_AGAIN_GROWTH);
            if (!strstr(ata_plan_choice(p), "timing 3: checked again")) fail_msg("%s: %s", specs[m], ata_plan_choice(p));
            /* a clear first pair ends the timing after 4 solves with all
             * workers: timed again (slowed), the first all-workers solve
             * made to look instant */
            cpu_plan_of(p)->tune_kept_s = 1e-12;
            for (int k = 0; k < 2 + 4; k++) {
                if (k == 2 + 3) cpu_plan_of(p)->tune_s[0][0] = 1e-12;
                memset(x, 0, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
                assert_memory_equal(x, xr, n * sizeof *x);
            }
            assert_int_equal(cpu_plan_of(p)->tune_rounds, 4);
            assert_int_equal(cpu_plan_of(p)->tune_step, 4);
            assert_int_equal(cpu_plan_of(p)->tune_done, 2 * CPU_TUNE_SOLVES);
            assert_false(cpu_plan_of(p)->one_worker);
            if (!strstr(ata_plan_choice(p), "kept all workers (timed: 1 solve each way, clear") ||
                !strstr(ata_plan_choice(p), "timing 4: solves slowed"))
                fail_msg("%s: %s", specs[m], ata_plan_choice(p));
            /* one worker kept where all workers were: timed again
             * CPU_TUNE_CONFIRM solves later, whatever the next timing's
             * due count; that timing decides (here all workers again) */
            const int next = cpu_plan_of(p)->tune_next;
            forced_switch_to_one(p, b, x, xr, n);
            if (!strstr(ata_plan_choice(p), "kept 1 worker") || !strstr(ata_plan_choice(p), "timing 5: solves slowed"))
                fail_msg("%s: %s", specs[m], ata_plan_choice(p));
            for (int k = 0; k < CPU_TUNE_CONFIRM; k++) {
                assert_int_equal(cpu_plan_of(p)->tune_done, 2 * CPU_TUNE_SOLVES);     /* still decided */
                memset(x, 0, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
                assert_memory_equal(x, xr, n * sizeof *x);
            }
            assert_int_equal(cpu_plan_of(p)->tune_confirm, 2);
            forced_timing(p, b, x, xr, n, 0);
            assert_false(cpu_plan_of(p)->one_worker);
            assert_int_equal(cpu_plan_of(p)->tune_confirm, 0);
            assert_int_equal(cpu_plan_of(p)->tune_rounds, 6);
            assert_int_equal(cpu_plan_of(p)->tune_next, next);     /* a confirmation grows nothing */
            if (!strstr(ata_plan_choice(p), "kept all workers (timed: medians of") ||
                !strstr(ata_plan_choice(p), "timing 6: confirming one worker"))
                fail_msg("%s: %s", specs[m], ata_plan_choice(p));
            /* one worker again, confirmed: it stands, no third timing soon */
            forced_switch_to_one(p, b, x, xr, n);
            for (int k = 0; k < CPU_TUNE_CONFIRM; k++) {
                memset(x, 0, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
            }
            forced_timing(p, b, x, xr, n, 1);
            assert_true(cpu_plan_of(p)->one_worker);
            assert_int_equal(cpu_plan_of(p)->tune_confirm, 0);
            assert_int_equal(cpu_plan_of(p)->tune_rounds, 8);
            cpu_plan_of(p)->tune_kept_s = 1e300;
            for (int k = 0; k < CPU_TUNE_CONFIRM + 1; k++) {
                memset(x, 0, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
            }
            assert_int_equal(cpu_plan_of(p)->tune_done, 2 * CPU_TUNE_SOLVES);   /* no timing started */
        } else {
            print_message("%s: auto plan not segmented here (one worker): %s\n", specs[m], ata_plan_choice(p));
        }
        ata_plan_destroy(p);
        free(b); free(x); free(xr);
        ata_csr_free(T);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* A small plan (EXEC_RELAYOUT_MAX_N rows at most, its own triangle) that a
 * recheck switches to one worker is laid out again for one only once the
 * confirming timing agrees; until then it runs one worker on its layout
 * for several. S fixed, so that the plan is laid out for two workers. */
static void test_auto_confirm_relayout(void **state)
{
    (void)state;
    ata_context *ctx = make_ctx(2, 10);
    ata_csr *A, *T;
    TU_OK(ata_gen_from_spec("lap3d:20", &A));
    TU_OK(ata_csr_tril(A, &T));
    const int n = A->nrows;
    assert_true(n <= EXEC_RELAYOUT_MAX_N);
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 7);
    TU_OK(ata_ref_sptrsv_csr(T, ATA_LOWER, ATA_NON_UNIT, b, xr));
    ata_plan *p;
    ata_plan_options o = ata_plan_defaults();
    o.S = 2;
    TU_OK(ata_sptrsv_plan_create(ctx, A, &o, &p));
    if (!cpu_plan_of(p)->segmented) {
        print_message("lap3d:20: not laid out for two workers here: %s\n", ata_plan_choice(p));
    } else {
        forced_timing(p, b, x, xr, n, 0);                   /* timing 1: all workers */
        assert_false(cpu_plan_of(p)->one_worker);
        forced_switch_to_one(p, b, x, xr, n);               /* timing 2: to be confirmed */
        assert_true(cpu_plan_of(p)->segmented);             /* not laid out again yet */
        assert_null(strstr(ata_plan_choice(p), "laid out again"));
        for (int k = 0; k < CPU_TUNE_CONFIRM; k++) {
            memset(x, 0, n * sizeof *x);
            TU_OK(ata_sptrsv(p, b, x));
            assert_memory_equal(x, xr, n * sizeof *x);
        }
        forced_timing(p, b, x, xr, n, 1);                   /* timing 3 agrees */
        assert_true(cpu_plan_of(p)->one_worker);
        assert_int_equal(cpu_plan_of(p)->tune_confirm, 0);
        assert_false(cpu_plan_of(p)->segmented);            /* laid out for one */
        if (!strstr(ata_plan_choice(p), "timing 3: confirming one worker") ||
            !strstr(ata_plan_choice(p), "laid out again for 1 worker"))
            fail_msg("lap3d:20: %s", ata_plan_choice(p));
        for (int k = 0; k < 3; k++) {
            memset(x, 0, n * sizeof *x);
            TU_OK(ata_sptrsv(p, b, x));
            assert_memory_equal(x, xr, n * sizeof *x);
        }
    }
    ata_plan_destroy(p);
    free(b); free(x); free(xr);
    ata_csr_free(T);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* Rows of a level come by predecessor class, then successor class, then
 * index (dag.c); ",levelorder" relabels a generated matrix in that order, so
 * its lower DAG's level_rows is the identity with the same level sizes; the
 * reversed levels of L are levels of U for a symmetric pattern, and are
 * refused for a pattern whose U has an edge inside one of L's levels. */
static void test_level_order_spec(void **state)
{
    (void)state;
    const char *specs[] = { "lap3d:8", "circuit:3000", "lap2d:20x7,perm=2" };
    for (int s = 0; s < 3; s++) {
        char lo[64];
        snprintf(lo, sizeof lo, "%s,levelorder", specs[s]);
        ata_csr *A, *B;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        TU_OK(ata_gen_from_spec(lo, &B));
        dag a, d;
        TU_OK(dag_build(A->nrows, A->rowptr, A->col, 1, ATA_LOWER, &a));
        TU_OK(dag_build(B->nrows, B->rowptr, B->col, 1, ATA_LOWER, &d));
        assert_int_equal(a.nlevels, d.nlevels);
        assert_memory_equal(a.level_ptr, d.level_ptr, (a.nlevels + 1) * sizeof *a.level_ptr);
        for (int k = 0; k < B->nrows; k++) assert_int_equal(d.level_rows[k], k);
        /* inside a level: predecessor counts never decrease */
        for (int l = 0; l < d.nlevels; l++)
            for (int k = d.level_ptr[l] + 1; k < d.level_ptr[l + 1]; k++) {
                int e0 = 0, e1 = 0;
                for (int q = B->rowptr[k - 1]; q < B->rowptr[k]; q++) e0 += B->col[q] < k - 1;
                for (int q = B->rowptr[k]; q < B->rowptr[k + 1]; q++) e1 += B->col[q] < k;
                assert_true((e0 < DAG_LEN_CLASSES - 1 ? e0 : DAG_LEN_CLASSES - 1) <=
                            (e1 < DAG_LEN_CLASSES - 1 ? e1 : DAG_LEN_CLASSES - 1));
            }
        dag u;
        TU_OK(dag_reverse_upper(&d, B->rowptr, B->col, &u));
        assert_int_equal(u.nlevels, d.nlevels);
        for (int i = 0; i < B->nrows; i++)
            for (int q = B->rowptr[i]; q < B->rowptr[i + 1]; q++)
                if (B->col[q] > i) assert_true(u.level[B->col[q]] < u.level[i]);
        dag_free(&u);
        dag_free(&a);
        dag_free(&d);
        ata_csr_free(A);
        ata_csr_free(B);
    }
    /* a U edge between two rows of one L level: no reversed levels */
    int ptr[] = { 0, 2, 3 }, idx[] = { 0, 1, 1 };     /* [x x; 0 x]: L has no edge, U has (0, 1) */
    dag l, u;
    TU_OK(dag_build(2, ptr, idx, 1, ATA_LOWER, &l));
    assert_int_equal(l.nlevels, 1);
    assert_int_equal(dag_reverse_upper(&l, ptr, idx, &u), ATA_ERR_UNSUPPORTED);
    dag_free(&l);
    ata_csr *A;
    assert_int_equal(ata_gen_from_spec("lap2d:4,levelorder,levelorder", &A), ATA_ERR_ARG);
    assert_non_null(strstr(ata_last_error(), "levelorder"));
    assert_int_equal(ata_gen_from_spec("lap2d:4,level", &A), ATA_ERR_ARG);
}

/* Solves with plan p, each bitwise the reference's xr: twice, or (auto)
 * through its tuning's solves and one after. */
static void solve_bitwise(ata_plan *p, ata_policy pol, const double *b, double *x, const double *xr, int n)
{
    for (int rep = 0; rep < (pol == ATA_POLICY_AUTO ? ATA_AUTO_TUNE_SOLVES + 1 : 2); rep++) {
        memset(x, 0, n * sizeof *x);
        TU_OK(ata_sptrsv(p, b, x));
        assert_memory_equal(x, xr, n * sizeof *x);
    }
}

/* An upper solve of the whole matrix in its lower level order runs on L's
 * levels backwards (plan.c, upper_on_lower_levels): the choice says so, the
 * CPU plan reads no order (PULL_DOWN), every policy's x is the reference's
 * bits and every worker schedule meets every edge. Not for the same
 * matrix in natural order, nor for the upper triangle alone (no L to take
 * levels from), nor where a U edge joins two rows of one L level. */
static void test_upper_on_lower_levels(void **state)
{
    (void)state;
    ata_context *ctx = make_ctx(2, 10);
    const char *specs[] = { "lap3d:12,levelorder", "circuit:5000,levelorder", "lap3d:12", "circuit:5000" };
    for (int m = 0; m < 4; m++) {
        ata_csr *A, *U;
        TU_OK(ata_gen_from_spec(specs[m], &A));
        TU_OK(ata_csr_triu(A, &U));
        const int n = A->nrows, want = m < 2;
        double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
        tu_random_vec(b, n, 3);
        TU_OK(ata_ref_sptrsv_csr(U, ATA_UPPER, ATA_NON_UNIT, b, xr));
        for (int k = 0; k < NPOL; k++)
            for (int whole = 0; whole < 2; whole++) {
                ata_plan_options o = ata_plan_defaults();
                o.uplo = ATA_UPPER;
                o.policy = cpu_policies[k];
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, whole ? A : U, &o, &p));
                const int rev = strstr(ata_plan_choice(p), "L's levels reversed") != NULL;
                if (rev != (want && whole))
                    fail_msg("%s %s, %s: %s", specs[m], whole ? "whole" : "U alone", ata_policy_name(o.policy),
                             ata_plan_choice(p));
                /* levels as they are: the rows from the last to the first */
                if (rev && (o.policy == ATA_POLICY_LEVELSET || o.policy == ATA_POLICY_CA) &&
                    !cpu_plan_of(p)->order_reversed)
                    fail_msg("%s %s: not PULL_DOWN: %s", specs[m], ata_policy_name(o.policy), ata_plan_choice(p));
                check_plan_schedule(p, specs[m]);
                solve_bitwise(p, o.policy, b, x, xr, n);
                ata_plan_destroy(p);
            }
        free(b); free(x); free(xr);
        ata_csr_free(U);
        ata_csr_free(A);
    }
    /* [2 1 0; 0 2 0; 1 0 2]: in L's level order (levels {0, 1}, {2}), but
     * U's (0, 1) joins two rows of L's level 0: U's own levels */
    int ptr[] = { 0, 2, 3, 5 }, col[] = { 0, 1, 1, 0, 2 };
    double val[] = { 2, 1, 2, 1, 2 };
    ata_csr B = { 3, 3, 5, ptr, col, val };
    ata_plan_options o = ata_plan_defaults();
    o.uplo = ATA_UPPER;
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, &B, &o, &p));
    assert_null(strstr(ata_plan_choice(p), "L's levels reversed"));
    double bb[3] = { 1, 2, 3 }, xx[3];
    TU_OK(ata_sptrsv(p, bb, xx));
    assert_true(xx[1] == 1.0 && xx[2] == 1.5 && xx[0] == 0.0);
    ata_plan_destroy(p);
    /* [2 0 0; 1 2 0; 0 1 2]: in L's level order (3 levels) and no U edge
     * against them, but U is diagonal: its own single level, not L's 3 */
    int ptr2[] = { 0, 1, 3, 5 }, col2[] = { 0, 0, 1, 1, 2 };
    double val2[] = { 2, 1, 2, 1, 2 };
    ata_csr C = { 3, 3, 5, ptr2, col2, val2 };
    TU_OK(ata_sptrsv_plan_create(ctx, &C, &o, &p));
    assert_null(strstr(ata_plan_choice(p), "L's levels reversed"));
    ata_plan_info info;
    TU_OK(ata_plan_get_info(p, &info));
    assert_int_equal(info.levels, 1);
    ata_plan_destroy(p);
    /* so too the U plan of its ILU0 factor (factor_split.c) */
    ata_factor *F;
    ata_factor_options fo = ata_factor_defaults();
    TU_OK(ata_factor_setup(ctx, &C, &fo, &F));
    const ata_plan *FL, *FU;
    ata_factor_plans(F, &FL, &FU);
    TU_OK(ata_plan_get_info(FU, &info));
    assert_int_equal(info.levels, 1);
    assert_null(strstr(ata_plan_choice(FU), "L's levels reversed"));
    TU_OK(ata_plan_get_info(FL, &info));
    assert_int_equal(info.levels, 3);
    ata_factor_destroy(F);
    ata_context_destroy(ctx);
}

static void test_api_errors(void **state)
{
    (void)state;
    ata_context *ctx = make_ctx(1, 10);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:5", &A));
    ata_plan *p = NULL;
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_VENDOR;
    assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &p), ATA_ERR_UNSUPPORTED);
    assert_non_null(strstr(ata_last_error(), "vendor"));
    po = ata_plan_defaults();
    po.S = -1;
    assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &p), ATA_ERR_ARG);
    assert_int_equal(ata_sptrsv_plan_create(ctx, NULL, NULL, &p), ATA_ERR_ARG);
    ata_policy pol;
    assert_int_equal(ata_policy_from_name("bogus", &pol), ATA_ERR_ARG);
    TU_OK(ata_policy_from_name("LA", &pol));
    assert_int_equal(pol, ATA_POLICY_LA);
    ata_context_options o = ata_context_defaults();
    o.backend = ATA_BACKEND_CPU;
    o.threads = -2;
    ata_context *bad;
    assert_int_equal(ata_context_create(&o, &bad), ATA_ERR_ARG);
    assert_true(ata_backend_available(ATA_BACKEND_CPU));
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* f's split factors bitwise the reference's factors R (in A's layout). */
static void assert_split_factors(const factor_core *f, const ata_csr *R)
{
    for (int i = 0; i < R->nrows; i++) {
        const int nl = f->Ls->rowptr[i + 1] - f->Ls->rowptr[i], a0 = R->rowptr[i];
        assert_memory_equal(f->Ls->val + f->Ls->rowptr[i], R->val + a0, nl * sizeof *R->val);
        const double u = 1.0 / R->val[a0 + nl];      /* U's pivots are kept inverted */
        assert_memory_equal(&f->Us->val[f->Us->rowptr[i]], &u, sizeof u);
        assert_memory_equal(f->Us->val + f->Us->rowptr[i] + 1, R->val + a0 + nl + 1,
                            (f->Us->rowptr[i + 1] - f->Us->rowptr[i] - 1) * sizeof *R->val);
    }
}

/* ILU0 on A's split factors on ctx (the U rows fetched ahead or not, as
 * want says), bitwise the reference's factors of R (A's copy, factored). */
static void check_factor_prefetch(ata_context *ctx, const ata_csr *A, const ata_csr *R, int want)
{
    factor_core *f;
    ata_factor_options fo = ata_factor_defaults();
    TU_OK(factor_core_setup(ctx, A, &fo, 0, NULL, &f));
    assert_int_equal(cpu_plan_of(f->fp)->ilu_prefetch, want);
    assert_split_factors(f, R);
    factor_core_free(f);
}

/* The row kernel by test and by table (ilu0_row_split_table): the first
 * CPU_ILU_TRIALS factorisations alternate them, then one stays (which one
 * is timed, so both are forced after); each factorisation bitwise the
 * reference's, a bad pivot named at its row either way. */
static void test_ilu0_by_table(void **state)
{
    (void)state;
    assert_int_equal(CPU_ILU_TRIALS, 4);    /* as the sequence below assumes */
    assert_true(cpu_ilu_keeps_table(1.0, 0.85));     /* the table only by the margin */
    assert_false(cpu_ilu_keeps_table(1.0, 0.95));
    assert_false(cpu_ilu_keeps_table(1.0, 1.2));
    const char *specs[] = { "circuit:20000", "lap3d27:16,perm=3" };
    for (int nt = 1; nt <= 2; nt++) {
        /* no helping: every worker runs its own rows, which the spare
         * doubles' check below needs (under a loaded CI a worker that never
         * got a core had all its segments run by the other, and wrote none) */
        setenv("ATA_HELP_AFTER_US", "1e9", 1);
        ata_context *ctx = tu_cpu_context(nt);
        unsetenv("ATA_HELP_AFTER_US");
        for (int m = 0; m < 2; m++) {
            ata_csr *A, *R;
            TU_OK(ata_gen_from_spec(specs[m], &A));
            TU_OK(ata_csr_copy(A, &R));
            TU_OK(ata_ref_ilu0(R));
            factor_core *f;
            ata_factor_options fo = ata_factor_defaults();
            fo.plan.S = 256;    /* S fixed: no probes, so all workers (a probed S's worker count is timing's) */
            TU_OK(factor_core_setup(ctx, A, &fo, 0, NULL, &f));
            cpu_plan *cp = cpu_plan_of(f->fp);
            const int used = f->fp->info.threads_used;
            assert_int_equal(used, nt);     /* both workers by table too */
            const size_t bytes0 = f->fp->info.plan_bytes, table_bytes = (size_t)used * A->nrows * sizeof(double *);
            /* a NaN on row r's diagonal: the executor names r, by table too */
            const int r = A->nrows / 3;
            double *v = malloc((size_t)A->nnz * sizeof *v);
            memcpy(v, A->val, (size_t)A->nnz * sizeof *v);
            v[f->dpos[r]] = NAN;
            /* setup's factorisation: the first trial, by test */
            assert_int_equal(cp->ilu_trials, 1);
            assert_int_equal(cp->ilu_table, -1);
            assert_null(cp->ilu_slot);
            assert_split_factors(f, R);
            /* the second, by table, fails on the NaN: a trial all the same */
            assert_int_equal(factor_core_update(f, v), ATA_ERR_NONFINITE);
            assert_int_equal(cp->ilu_trials, 2);
            assert_non_null(cp->ilu_slot);
            assert_int_equal(f->fp->info.plan_bytes, bytes0 + table_bytes);
            TU_OK(factor_core_update(f, A->val));       /* by test */
            assert_int_equal(cp->ilu_trials, 3);
            assert_split_factors(f, R);
            TU_OK(factor_core_update(f, A->val));       /* by table: the choice */
            assert_int_equal(cp->ilu_trials, CPU_ILU_TRIALS);
            assert_true(cp->ilu_table == 0 || cp->ilu_table == 1);
            assert_true(cp->ilu_table ? cp->ilu_slot != NULL : cp->ilu_slot == NULL);
            assert_int_equal(f->fp->info.plan_bytes, bytes0 + (cp->ilu_table ? table_bytes : 0));
            assert_split_factors(f, R);
            for (int k = 0; k < 4; k++) {
                cp->ilu_table = k % 2 == 0;     /* forced: by table, by test */
                if (k == 0 && cp->ilu_spare) memset(cp->ilu_spare, 0, (size_t)used * CPU_ILU_SPARE_STRIDE * sizeof(double));
                TU_OK(factor_core_update(f, A->val));
                assert_int_equal(cp->ilu_trials, CPU_ILU_TRIALS);
                assert_split_factors(f, R);
                if (k == 0)     /* every worker ran rows by table: its misses reached its spare doubles */
                    for (int t = 0; t < used; t++) {
                        int written = 0;
                        for (int j = 0; j < ILU0_SPARE; j++) written |= cp->ilu_spare[t * CPU_ILU_SPARE_STRIDE + j] != 0;
                        assert_true(written);
                    }
            }
            assert_split_factors(f, R);
            for (int table = 1; table >= 0; table--) {
                cp->ilu_table = table;
                assert_int_equal(factor_core_update(f, v), ATA_ERR_NONFINITE);
                char want[64];
                snprintf(want, sizeof want, "pivot in row %d is not finite", r);
                assert_non_null(strstr(ata_last_error(), want));
                TU_OK(factor_core_update(f, A->val));
                assert_split_factors(f, R);
            }
            free(v);
            factor_core_free(f);
            ata_csr_free(R);
            ata_csr_free(A);
        }
        ata_context_destroy(ctx);
    }
}

/* SpMV prefetches x ahead, and ILU0 the U rows of the rows ahead, where x
 * is large and gathered at random (a randomly permuted grid), not for a
 * stencil in order or a small x; either way y and the factors are the
 * reference's, bit for bit (the same operations in the same order). */
static void test_gather_prefetch(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    skip();     /* a prefetch is no access to TSan, and x must be large: 22 s there for nothing */
#endif
    const char *specs[] = { "lap3d:82,perm=5", "lap3d:82", "circuit:100000" };
    const int want[] = { 1, 0, 0 };
    ata_context_options o = ata_context_defaults();
    o.backend = ATA_BACKEND_CPU;
    o.threads = 2;
    ata_context *ctx, *ctx1;
    TU_OK(ata_context_create(&o, &ctx));
    o.threads = 1;
    TU_OK(ata_context_create(&o, &ctx1));
    for (int m = 0; m < 3; m++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[m], &A));
        assert_int_equal(cpu_gathers_at_random(A), want[m]);
        const int n = A->nrows;
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *r = malloc(n * sizeof *r), dot;
        tu_random_vec(x, n, 7 + m);
        void *h;
        TU_OK(ctx->ops->spmv_create(ctx, A, &h));
        assert_int_equal(cpu_spmv_prefetches(h), want[m]);
        TU_OK(ctx->ops->spmv_dot(ctx, h, x, y, &dot));
        TU_OK(ata_ref_spmv(A, x, r));
        assert_memory_equal(y, r, n * sizeof *y);
        ctx->ops->spmv_destroy(ctx, h);
        free(x); free(y); free(r);
#if defined(__SANITIZE_ADDRESS__)
        const int factor_too = m == 0, one_too = 0;     /* ~10x slower there */
#else
        const int factor_too = m < 2, one_too = m == 0;
#endif
        if (factor_too) {    /* ILU0 on the split factors, against the reference's */
            ata_csr *R;
            TU_OK(ata_csr_copy(A, &R));
            TU_OK(ata_ref_ilu0(R));
            check_factor_prefetch(ctx, A, R, want[m]);
            /* one worker: rows in natural order, fetched ahead the same way (exec_ilu0_natural) */
            if (one_too) check_factor_prefetch(ctx1, A, R, want[m]);
            ata_csr_free(R);
        }
        ata_csr_free(A);
    }
    ata_context_destroy(ctx1);
    ata_context_destroy(ctx);
}

/* A solve plan whose rows gather a large x at random fetches it ahead
 * (cpu_plan.x_prefetch), in level order or not, lower or upper (however
 * many workers the plan gets); not a stencil in order. The reference's
 * bits either way, tuning included. A walk by row through an order goes
 * the way its short steps go (cpu_order_steps_down). */
static void test_solve_prefetch(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    skip();     /* as test_gather_prefetch: ASan and the plain build run it */
#endif
    const struct { const char *spec; ata_uplo uplo; int on; } cases[] = {
        { "lap3d:82,perm=5,levelorder", ATA_LOWER, 1 },
        { "lap3d:82,levelorder", ATA_LOWER, 0 },
        { "lap3d:82,perm=5,levelorder", ATA_UPPER, 1 },
        { "lap3d:82,perm=5", ATA_UPPER, 1 },
    };
    const ata_policy pols[] = { ATA_POLICY_CA, ATA_POLICY_AUTO, ATA_POLICY_LEVELSET };
#if defined(__SANITIZE_ADDRESS__)
    const int ncases = 2, npol = 1;     /* ~10x slower there, and the gate fixes the size */
#else
    const int ncases = 4, npol = 3;
#endif
    ata_context *ctx = make_ctx(2, 10);
    for (int c = 0; c < ncases; c++) {
        ata_csr *A, *T;
        TU_OK(ata_gen_from_spec(cases[c].spec, &A));
        TU_OK(cases[c].uplo == ATA_LOWER ? ata_csr_tril(A, &T) : ata_csr_triu(A, &T));
        const int n = A->nrows;
        double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
        tu_random_vec(b, n, 11 + c);
        TU_OK(ata_ref_sptrsv_csr(T, cases[c].uplo, ATA_NON_UNIT, b, xr));
        for (int k = 0; k < npol; k++) {
            ata_plan_options o = ata_plan_defaults();
            o.uplo = cases[c].uplo;
            o.policy = pols[k];
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, A, &o, &p));
            if ((cpu_plan_of(p)->x_prefetch != 0) != cases[c].on)
                fail_msg("%s %s %s: x_prefetch %d, want it %s (%s)", cases[c].spec,
                         cases[c].uplo == ATA_LOWER ? "lower" : "upper", ata_policy_name(o.policy),
                         cpu_plan_of(p)->x_prefetch, cases[c].on ? "on" : "off", ata_plan_choice(p));
            solve_bitwise(p, o.policy, b, x, xr, n);
            ata_plan_destroy(p);
        }
        free(b); free(x); free(xr);
        ata_csr_free(T);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
    /* levels descending, rows ascending inside: up; rows descending: down */
    int lv[30], dn[30];
    for (int k = 0; k < 30; k++) {
        lv[k] = (2 - k / 10) * 10 + k % 10;
        dn[k] = 29 - k;
    }
    assert_int_equal(cpu_order_steps_down(lv, 30), 0);
    assert_int_equal(cpu_order_steps_down(dn, 30), 1);
}

/* A segment that runs longer than wait_timeout_s, while another worker
 * waits for it, is progress, not a stall: a chain of K banded ILU0 rows
 * (one worker's segment under chain, ~B*B work a row: ~80 ms here), then a
 * wide level of W rows that all need the chain's last row (split between
 * the workers: one waits for the whole chain). With a 20 ms deadline the
 * waiter timed out before segments reported progress from inside
 * (exec_seg_progress); now only a producer stalled 20 ms fails it. */
static void test_long_segment(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    const int K = 8000, W = 4000, B = 45, n = K + W;    /* (rows cost ~10x there: the chain still runs long) */
#else
    const int K = 40000, W = 20000, B = 45, n = K + W;
#endif
    ata_csr *A;
    TU_OK(ata_csr_alloc(n, n, K * (2 * B + 1) + 2 * W, &A));
    int q = 0;
    for (int i = 0; i < n; i++) {
        A->rowptr[i] = q;
        const int lo = i < K ? (i > B ? i - B : 0) : K - 1, hi = i < K ? (i + B < K ? i + B : K - 1) : K - 1;
        for (int j = lo; j <= hi; j++) { A->col[q] = j; A->val[q++] = j == i ? 2 * B + 2 : -1.0 - (j % 7) * 0.01; }
        if (i >= K) { A->col[q] = i; A->val[q++] = 3; }
    }
    A->rowptr[n] = q;
    A->nnz = q;
    ata_csr *R;
    TU_OK(ata_csr_copy(A, &R));
    TU_OK(ata_ref_ilu0(R));
    ata_context *ctx = make_ctx(2, 20e-3);
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_CHAIN;       /* one segment for the chain (ca's are short: it never failed) */
    ata_csr *LU = NULL;
    ata_status st = ata_spilu0(ctx, A, &po, &LU);
    if (st != ATA_OK) fail_msg("chain: %s: %s", ata_status_string(st), ata_last_error());
    assert_memory_equal(LU->val, R->val, R->nnz * sizeof *R->val);
    ata_csr_free(LU);
    ata_context_destroy(ctx);
    ata_csr_free(A);
    ata_csr_free(R);
}

/* A's pattern without the couplings of rows i - 1 and i where i % 7 == 3:
 * a grid's lines broken at places, chain's blocks of unequal lengths. */
static ata_csr *broken_lines(const ata_csr *A)
{
    ata_csr *B;
    TU_OK(ata_csr_alloc(A->nrows, A->ncols, A->nnz, &B));
    int w = 0;
    for (int i = 0; i < A->nrows; i++) {
        B->rowptr[i] = w;
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            const int j = A->col[q], hi = i > j ? i : j;
            if (abs(i - j) == 1 && hi % 7 == 3) continue;
            B->col[w] = j;
            B->val[w++] = A->val[q];
        }
    }
    B->rowptr[A->nrows] = w;
    B->nnz = w;
    return B;
}

/* chain's blocks side by side (cpu_plan.lines, pull_lines1): on where rows
 * are short and a level has blocks to pair (a 2D grid's lines, one a
 * level, cut into pieces for it), off for the 27-point stencil;
 * bitwise the reference either way, on 1-3 workers (lines cut into pieces
 * on several), both triangles, unit, non-unit and inverse diagonals, blocks
 * of unequal lengths, ranges that start inside a block; several columns;
 * laid out again for one worker; every segment inside one block level; a
 * NaN is named at its row. */
static void test_chain_lines(void **state)
{
    (void)state;
    ata_csr *M[6], *G;
    TU_OK(ata_gen_from_spec("lap3d:9x11x7", &M[0]));
    TU_OK(ata_gen_from_spec("convdiff:9", &M[1]));
    TU_OK(ata_gen_from_spec("lap3d:10", &G));
    M[2] = broken_lines(G);
    ata_csr_free(G);
    TU_OK(ata_gen_from_spec("lap3d27:6", &M[3]));
    TU_OK(ata_gen_from_spec("lap2d:150x40", &M[4]));   /* a line a level: cut into pieces (choose_S) */
    TU_OK(ata_gen_from_spec("lap3d:1000x20x6", &M[5])); /* levels of ~5000 rows: cut inside a block (pull_marked) */
    const int on[6] = { 1, 1, 1, 0, 1, 1 };
    const ata_diag diags[3] = { ATA_NON_UNIT, ATA_UNIT, ATA_NON_UNIT_INV };
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    const int max_workers = 2, nm = 5;     /* ~10x slower there (7.6 s under TSan in full) */
#else
    const int max_workers = 3, nm = 6;
#endif
    int sides = 0;
    for (int workers = 1; workers <= max_workers; workers++) {
        ata_context *ctx = make_ctx(workers, 20);
        for (int m = 0; m < nm; m++) {
            const int n = M[m]->nrows;
            double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x),
                   *xr = malloc((size_t)n * sizeof *xr);
            for (int v = 0; v < 6; v++) {
                ata_plan_options po = ata_plan_defaults();
                po.policy = ATA_POLICY_CHAIN;
                po.uplo = v & 1 ? ATA_UPPER : ATA_LOWER;
                po.diag = diags[v / 2];
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, M[m], &po, &p));
                const int lines = cpu_plan_of(p)->lines;
                if (lines != on[m] || !strstr(ata_plan_choice(p), "side by side") != !on[m])
                    fail_msg("matrix %d, %d workers, v%d: lines %d (%s)", m, workers, v, lines, ata_plan_choice(p));
                if (lines) assert_false(cpu_plan_of(p)->nat_rows);
                if (m == 4) assert_true(p->sched.nblocks >= 4 * 40);     /* a line cut into CPU_LINES pieces or more */
                tu_random_vec(b, n, 60 + v);
                TU_OK(ata_ref_sptrsv_csr(M[m], po.uplo, po.diag, b, xr));
                for (int t = 0; t < 2; t++) {
                    for (int i = 0; i < n; i++) x[i] = NAN;
                    TU_OK(ata_sptrsv(p, b, x));
                    if (memcmp(x, xr, (size_t)n * sizeof *x))
                        fail_msg("matrix %d, %d workers, v%d, solve %d: not bitwise the reference (rel diff %g)", m,
                                 workers, v, t, tu_rel_diff(x, xr, n));
                }
                sides += lines;
                TU_OK(cpu_exec_check_schedule(p, 0));       /* each segment inside one block level */
                if (m == 0 && v == 0) {     /* several columns (pull_rows), and laid out again for one worker */
                    double *B = malloc(3 * (size_t)n * sizeof *B), *X = malloc(3 * (size_t)n * sizeof *X);
                    for (int c = 0; c < 3; c++) tu_random_vec(B + (size_t)c * n, n, 80 + c);
                    TU_OK(ata_sptrsv_multi(p, 3, B, n, X, n));
                    for (int c = 0; c < 3; c++) {
                        TU_OK(ata_ref_sptrsv_csr(M[m], po.uplo, po.diag, B + (size_t)c * n, xr));
                        if (memcmp(X + (size_t)c * n, xr, (size_t)n * sizeof *x))
                            fail_msg("%d workers, column %d: not bitwise the reference", workers, c);
                    }
                    if (cpu_exec_relayout_one(p) == ATA_OK) {
                        assert_true(cpu_plan_of(p)->lines);
                        TU_OK(ata_sptrsv(p, b, x));
                        TU_OK(ata_ref_sptrsv_csr(M[m], po.uplo, po.diag, b, xr));
                        if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("laid out again for one worker: not bitwise");
                    }
                    free(B); free(X);
                }
                if (m == 2 && v == 0) expect_bad_row(p, b, x, n / 2);
                ata_plan_destroy(p);
            }
            free(b); free(x); free(xr);
        }
        ata_context_destroy(ctx);
    }
    assert_int_equal(sides, max_workers * (nm - 1) * 6);
    for (int m = 0; m < 6; m++) ata_csr_free(M[m]);
}

/* auto on a grid in natural order whose x is past the caches
 * (lap2d:2200x240, 4.2 MB) runs chain, its blocks (pieces of 276 rows)
 * side by side, where there are two workers, both triangles and a factor's
 * L and U plans; ca on one; the same bits either way. ca where the pieces would be short (lap2d:600x900: 84 rows)
 * or x fits (lap2d:2000x240, 3.8 MB). Whole lines (a 3D grid: no cuts)
 * run chain from 40 rows and an x of 512 KiB (lap3d:48x40x40, 600 KB),
 * long rows too (lap3d27:48x40x40: 13 entries a row, no side-by-side walk);
 * ca on lines of 32 (lap3d:32x48x48) or an x of 338 KB (lap3d:48x30x30). */
static void test_auto_chain_large(void **state)
{
    (void)state;
    const char *specs[7] = { "lap2d:2200x240", "lap3d:48x40x40", "lap2d:600x900", "lap2d:2000x240",
                             "lap3d:32x48x48", "lap3d:48x30x30", "lap3d27:48x40x40" };
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    const int light = 1;    /* ~10x slower there (33 s under TSan in full): the chain case on two workers alone */
#else
    const int light = 0;
#endif
    for (int g = 0; g < (light ? 2 : 7); g++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[g], &A));
        const int n = A->nrows;
        double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
        tu_random_vec(b, n, 71);
        for (int w = 0; w < 4; w++) {
            if (light && w != 1) continue;
            const int workers = 1 + (w & 1);
            ata_context *ctx = make_ctx(workers, 20);
            ata_plan *p;
            ata_plan_options po = ata_plan_defaults();
            po.uplo = w & 2 ? ATA_UPPER : ATA_LOWER;
            TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
            const int chain = (g < 2 || g == 6) && cpu_pool_workers(ctx->pool) > 1;
            if (!strstr(ata_plan_choice(p), chain ? "auto: chain" : "auto: ca") ||
                (chain && (!strstr(ata_plan_choice(p), g ? "whole lines of 40" : "an x past the caches") ||
                           cpu_plan_of(p)->lines != (g < 2))))    /* the blocks side by side: short rows only */
                fail_msg("%s, %d workers: %s", specs[g], workers, ata_plan_choice(p));
            TU_OK(ata_ref_sptrsv_csr(A, po.uplo, ATA_NON_UNIT, b, xr));
            for (int i = 0; i < n; i++) x[i] = NAN;
            TU_OK(ata_sptrsv(p, b, x));
            if (memcmp(x, xr, (size_t)n * sizeof *x)) fail_msg("%s, %d workers: not bitwise the reference", specs[g], workers);
            ata_plan_destroy(p);
            if (g < 2 && w == 1) {      /* a factor's L and U plans: L its own cap, not the ILU0 plan's */
                ata_factor_options fo = ata_factor_defaults();
                ata_factor *F;
                TU_OK(ata_factor_setup(ctx, A, &fo, &F));
                const ata_plan *L, *U;
                ata_factor_plans(F, &L, &U);
                if (chain && (!cpu_plan_of(L)->lines || !cpu_plan_of(U)->lines))
                    fail_msg("factor: L %s; U %s", ata_plan_choice(L), ata_plan_choice(U));
                ata_factor_destroy(F);
            }
            ata_context_destroy(ctx);
        }
        free(b); free(x); free(xr);
        ata_csr_free(A);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dag_levels),
        cmocka_unit_test(test_schedule_order),
        cmocka_unit_test(test_api_errors),
        BS_SUITE_TESTS(&cpu_backend),
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_pull_staging),
        cmocka_unit_test(test_natural_walk),
        cmocka_unit_test(test_relayout_one),
        cmocka_unit_test(test_push_workers),
        cmocka_unit_test(test_diag_inverse),
        cmocka_unit_test(test_chain_lines),
        cmocka_unit_test(test_auto_chain_large),
        cmocka_unit_test(test_worker_schedules),
        cmocka_unit_test(test_tune_margin),
        cmocka_unit_test(test_upper_on_lower_levels),
        cmocka_unit_test(test_auto_tuning),
        cmocka_unit_test(test_auto_confirm_relayout),
        cmocka_unit_test(test_level_order_spec),
        cmocka_unit_test(test_gather_prefetch),
        cmocka_unit_test(test_ilu0_by_table),
        cmocka_unit_test(test_solve_prefetch),
        cmocka_unit_test(test_long_segment),
    };
    return cmocka_run_group_tests_name("runtime (cpu backend)", tests, NULL, NULL);
}
