/* test_permute.c - the one-pass symmetric permutation (csr_permute_part)
 * against a permutation built entry by entry through COO, serial and on a
 * context's workers; and the plans PCG and the factor make from whole
 * factors through value maps (plan_create with map_out) against plans made
 * the public way on the extracted triangle: bitwise, also after new values;
 * and the CPU factor's split factors and the plans on them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "context.h"
#include "csr.h"
#include "dag.h"
#include "cpu/cpu_exec.h"
#include "factor.h"
#include "plan.h"

/* n x n: a dense first row and column (longer than the insertion-sort
 * limit, so the qsort path runs, and at 300 than the permutation's stack
 * buffer) on a tridiagonal, diagonally dominant. */
static ata_csr *arrow(int n)
{
    int cap = 5 * n, k = 0;
    int *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c);
    double *v = malloc(cap * sizeof *v);
    for (int i = 0; i < n; i++) {
        r[k] = i; c[k] = i; v[k++] = 4.0 * n + i;
        if (i + 1 < n && i > 0) { r[k] = i; c[k] = i + 1; v[k++] = -1.0 - 0.001 * i; }
        if (i > 1) { r[k] = i; c[k] = i - 1; v[k++] = -1.0 - 0.001 * (i - 1); }
        if (i > 0) { r[k] = 0; c[k] = i; v[k++] = 0.5 + 0.01 * i; r[k] = i; c[k] = 0; v[k++] = 0.5 + 0.01 * i; }
    }
    ata_csr *A;
    TU_OK(ata_csr_from_coo(n, n, k, r, c, v, 0, &A));
    free(r); free(c); free(v);
    return A;
}

static int keeps(int part, int r, int c)
{
    return part == CSR_LOWER ? c <= r : part == CSR_STRICT_LOWER ? c < r : part == CSR_UPPER ? c >= r
         : part == CSR_STRICT_UPPER ? c > r : 1;
}

/* The expected result, entry by entry. */
static ata_csr *by_coo(const ata_csr *A, const int *perm, int part)
{
    int *r = malloc((A->nnz + 1) * sizeof *r), *c = malloc((A->nnz + 1) * sizeof *c), k = 0;
    double *v = malloc((A->nnz + 1) * sizeof *v);
    for (int i = 0; i < A->nrows; i++)
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            int ri = perm ? perm[i] : i, cj = perm ? perm[A->col[q]] : A->col[q];
            if (!keeps(part, ri, cj)) continue;
            r[k] = ri; c[k] = cj; v[k++] = A->val[q];
        }
    ata_csr *B;
    TU_OK(ata_csr_from_coo(A->nrows, A->ncols, k, r, c, v, 0, &B));
    free(r); free(c); free(v);
    return B;
}

static void check_one(const ata_csr *A, const int *perm, int part, cpu_pool *pool)
{
    ata_csr *B, *E = by_coo(A, perm, part);
    int *map;
    TU_OK(csr_permute_part(A, perm, part, pool, &B, &map));
    assert_int_equal(B->nnz, E->nnz);
    assert_memory_equal(B->rowptr, E->rowptr, (A->nrows + 1) * sizeof *B->rowptr);
    assert_memory_equal(B->col, E->col, E->nnz * sizeof *B->col);
    assert_memory_equal(B->val, E->val, E->nnz * sizeof *B->val);
    int *row_of = malloc((A->nnz + 1) * sizeof *row_of);
    for (int i = 0; i < A->nrows; i++)
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) row_of[q] = i;
    for (int r = 0; r < B->nrows; r++)     /* map names the entry each one came from */
        for (int q = B->rowptr[r]; q < B->rowptr[r + 1]; q++) {
            int s = map[q];
            assert_true(s >= 0 && s < A->nnz);
            assert_int_equal(perm ? perm[row_of[s]] : row_of[s], r);
            assert_int_equal(perm ? perm[A->col[s]] : A->col[s], B->col[q]);
        }
    free(row_of);
    free(map);
    ata_csr_free(B);
    /* with no map asked for, rows sort through a buffer of their own
     * (on the stack, or allocated for a row longer than its 256) */
    TU_OK(csr_permute_part(A, perm, part, pool, &B, NULL));
    assert_int_equal(B->nnz, E->nnz);
    assert_memory_equal(B->rowptr, E->rowptr, (A->nrows + 1) * sizeof *B->rowptr);
    assert_memory_equal(B->col, E->col, E->nnz * sizeof *B->col);
    assert_memory_equal(B->val, E->val, E->nnz * sizeof *B->val);
    ata_csr_free(B);
    ata_csr_free(E);
}

static void test_permute_matches_coo(void **state)
{
    (void)state;
    const char *specs[] = { "lap3d:7", "circuit:3000", "lap2d:30x20" };
    ata_context *ctx = tu_cpu_context(2);
    for (int m = 0; m < 4; m++) {
        ata_csr *A;
        if (m < 3) TU_OK(ata_gen_from_spec(specs[m], &A));
        else A = arrow(300);
        int *perm;
        TU_OK(ata_random_perm(A->nrows, 11 + m, &perm));
        for (int part = CSR_ALL; part <= CSR_STRICT_UPPER; part++) {
            check_one(A, perm, part, NULL);
            check_one(A, perm, part, ctx->pool);
            check_one(A, NULL, part, ctx->pool);
        }
        ata_csr *P;
        TU_OK(ata_csr_permute_sym(A, perm, &P));        /* the public wrapper: the same */
        ata_csr *E = by_coo(A, perm, CSR_ALL);
        assert_memory_equal(P->col, E->col, E->nnz * sizeof *P->col);
        assert_memory_equal(P->val, E->val, E->nnz * sizeof *P->val);
        ata_csr_free(P);
        ata_csr_free(E);
        perm[0] = perm[1];                               /* not a permutation */
        assert_int_equal(csr_permute_part(A, perm, CSR_ALL, ctx->pool, &P, NULL), ATA_ERR_ARG);
        free(perm);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* Pull: bitwise. Push subtracts atomically in the order threads get there,
 * so two runs of the same plan differ in rounding: within 1e-12. */
static void solve_both(ata_plan *p, ata_plan *q, int n, uint64_t seed)
{
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    tu_random_vec(b, n, seed);
    TU_OK(ata_sptrsv(p, b, x));
    TU_OK(ata_sptrsv(q, b, y));
    if (p->opt.traversal == ATA_PULL) assert_memory_equal(x, y, n * sizeof *x);
    else assert_true(tu_rel_diff(x, y, n) <= 1e-12);
    free(b); free(x); free(y);
}

/* The mapped plan solves as the public plan on the extracted triangle, and
 * new values through the map as the public update does. */
static void test_mapped_plans(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    for (int m = 0; m < 2; m++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(m ? "circuit:4000" : "lap3d:9", &A));
        int *perm;
        TU_OK(ata_random_perm(A->nrows, 5 + m, &perm));
        for (int c = 0; c < 4; c++) {
            ata_plan_options o = ata_plan_defaults();
            o.policy = m ? ATA_POLICY_LEVELSET : ATA_POLICY_CA;
            o.uplo = c & 1 ? ATA_UPPER : ATA_LOWER;
            o.diag = o.uplo == ATA_LOWER ? ATA_UNIT : ATA_NON_UNIT;
            o.traversal = c & 2 ? ATA_PUSH : ATA_PULL;
            ata_plan *pm, *pp;
            int *map;
            TU_OK(plan_create(ctx, &(plan_desc){ .kind = PLAN_SPTRSV, .from = A, .perm = perm, .map_out = &map }, &o, &pm));
            ata_csr *P;
            TU_OK(ata_csr_permute_sym(A, perm, &P));
            TU_OK(ata_sptrsv_plan_create(ctx, P, &o, &pp));
            solve_both(pm, pp, A->nrows, 3 + c);
            /* New values, twice (the second through the map the backend
             * kept): A scaled off the diagonal; the plans take them. */
            double *v2 = malloc(A->nnz * sizeof *v2);
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < A->nrows; i++)
                    for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
                        v2[q] = A->col[q] == i ? A->val[q] : A->val[q] * (0.5 + 0.1 * ((q + round) % 3));
                TU_OK(sptrsv_plan_values_mapped(pm, v2, map));
                ata_csr *A2, *P2;
                TU_OK(ata_csr_copy(A, &A2));
                memcpy(A2->val, v2, A->nnz * sizeof *v2);
                TU_OK(ata_csr_permute_sym(A2, perm, &P2));
                TU_OK(ata_sptrsv_plan_update_values(pp, P2));
                solve_both(pm, pp, A->nrows, 7 + c + round);
                ata_csr_free(A2); ata_csr_free(P2);
            }
            free(v2); free(map);
            ata_csr_free(P);
            ata_plan_destroy(pm);
            ata_plan_destroy(pp);
        }
        free(perm);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* dag_to_level_order: A's lower DAG turned into that of A relabelled by its
 * level order is the DAG built on the relabelled matrix, field by field;
 * and the L plans PCG makes with it (every CPU policy, pull and push) are
 * the plans made without it: the same schedule, solving bitwise alike. */
static void test_known_dag(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const char *specs[] = { "lap3d:9", "circuit:4000", "lap2d:30x20,perm=4" };
    for (int m = 0; m < 3; m++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[m], &A));
        ata_csr *L = tu_level_ordered(A);
        dag d, e;
        TU_OK(dag_build(A->nrows, A->rowptr, A->col, 1, ATA_LOWER, &d));
        dag_to_level_order(&d);
        TU_OK(dag_build(L->nrows, L->rowptr, L->col, 1, ATA_LOWER, &e));
        const int n = A->nrows;
        assert_int_equal(d.n, e.n);
        assert_int_equal(d.nlevels, e.nlevels);
        assert_true(d.m == e.m && d.max_width == e.max_width && d.dag_class == e.dag_class);
        assert_memory_equal(d.level, e.level, n * sizeof *d.level);
        assert_memory_equal(d.level_ptr, e.level_ptr, (d.nlevels + 1) * sizeof *d.level_ptr);
        assert_memory_equal(d.level_rows, e.level_rows, n * sizeof *d.level_rows);
        for (int pol = 0; pol < ATA_POLICY_VENDOR; pol++)
            for (int t = 0; t < 2; t++) {
                ata_plan_options o = ata_plan_defaults();
                o.policy = (ata_policy)pol;
                o.S = 16;
                o.uplo = ATA_LOWER;
                o.diag = ATA_UNIT;
                o.traversal = t ? ATA_PUSH : ATA_PULL;
                ata_plan *pk, *pb;
                TU_OK(plan_create(ctx, &(plan_desc){ .kind = PLAN_SPTRSV, .from = L, .known = &d }, &o, &pk));
                TU_OK(plan_create(ctx, &(plan_desc){ .kind = PLAN_SPTRSV, .from = L }, &o, &pb));
                assert_int_equal(pk->sched.natasks, pb->sched.natasks);
                assert_memory_equal(pk->sched.order, pb->sched.order, n * sizeof *pk->sched.order);
                assert_memory_equal(pk->sched.atask_ptr, pb->sched.atask_ptr,
                                    (pk->sched.natasks + 1) * sizeof *pk->sched.atask_ptr);
                assert_memory_equal(pk->sched.flags, pb->sched.flags, pk->sched.natasks);
                assert_true(pk->info.c == pb->info.c && pk->info.f == pb->info.f &&
                            pk->info.barriers == pb->info.barriers && pk->info.levels == pb->info.levels);
                solve_both(pk, pb, n, 11 + pol);
                ata_plan_destroy(pk);
                ata_plan_destroy(pb);
            }
        dag_free(&d);
        dag_free(&e);
        ata_csr_free(L);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* ILU0 on the CPU backend factors in the split L and U the plans read
 * (factor.c, split_pattern): the factors are the reference's, bitwise; the
 * L plan's schedule, copied from the ILU0 plan, is the one a fresh analysis
 * of L builds; pull plans read L and U in place unless their layout copies;
 * and after new values every plan solves as plans made afresh on the new
 * factors. */
static int split_reversed_seen;     /* U plans solved through PULL_DOWN */

static void check_split(ata_context *ctx, const ata_csr *A, const ata_factor_options *fo, const char *name)
{
    const int n = A->nrows;
    factor_core *f;
    TU_OK(factor_core_setup(ctx, A, fo, 0, NULL, &f));
    assert_non_null(f->Ls);
    for (int step = 0; step < 2; step++) {
        ata_csr *R;
        TU_OK(ata_csr_copy(A, &R));
        if (step) {     /* new values: the diagonal grows */
            for (int i = 0; i < n; i++)
                for (int q = R->rowptr[i]; q < R->rowptr[i + 1]; q++) R->val[q] *= R->col[q] == i ? 1.5 : 0.9;
            TU_OK(factor_core_update(f, R->val));
        }
        TU_OK(ata_ref_ilu0(R));
        ata_csr *RL, *RU;
        TU_OK(csr_permute_part(R, NULL, CSR_STRICT_LOWER, NULL, &RL, NULL));
        TU_OK(csr_permute_part(R, NULL, CSR_UPPER, NULL, &RU, NULL));
        for (int i = 0; i < n; i++) RU->val[RU->rowptr[i]] = 1.0 / RU->val[RU->rowptr[i]];   /* inv_pivots */
        assert_memory_equal(f->Ls->rowptr, RL->rowptr, (n + 1) * sizeof *RL->rowptr);
        assert_memory_equal(f->Ls->col, RL->col, RL->nnz * sizeof *RL->col);
        assert_memory_equal(f->Us->col, RU->col, RU->nnz * sizeof *RU->col);
        if (memcmp(f->Ls->val, RL->val, RL->nnz * sizeof *RL->val) || memcmp(f->Us->val, RU->val, RU->nnz * sizeof *RU->val))
            fail_msg("%s %s step %d: split factors differ from the reference", name, ata_policy_name(fo->plan.policy), step);
        ata_plan_options lo = fo->plan, uo = fo->plan;
        lo.uplo = ATA_LOWER; lo.diag = ATA_UNIT;
        uo.uplo = ATA_UPPER; uo.diag = ATA_NON_UNIT;
        ata_plan *pl, *pu;
        TU_OK(ata_sptrsv_plan_create(ctx, RL, &lo, &pl));
        TU_OK(plan_create(ctx, &(plan_desc){ .kind = PLAN_SPTRSV, .from = RU, .diag_inv = 1 }, &uo, &pu));
        /* the schedule a fresh aggregation of L gives at the L plan's S
         * (S auto may differ between the ILU0 and L plans: then no copy) */
        dag dl;
        agg_result fresh;
        TU_OK(dag_build(n, RL->rowptr, RL->col, 1, ATA_LOWER, &dl));
        TU_OK(agg_build(&dl, RL->rowptr, RL->col, 1, ATA_LOWER, fo->plan.policy, f->Lp->sched.S_in, ctx->capacity,
                        &fresh));
        const agg_result *a = &f->Lp->sched, *b = &fresh;
        if (fo->plan.S == 0 && f->Lp->info.T_u > 0) {     /* the L plan's own S (Eq. 5.2), not the ILU0 plan's */
            double s = ceil(f->Lp->opt.R * f->Lp->info.T_l / f->Lp->info.T_u);
            if (s < ctx->S_min) s = ctx->S_min;
            if (s > n) s = n;
            assert_int_equal(a->S_in, s < 1 ? 1 : (int)s);
        }
        assert_int_equal(a->natasks, b->natasks);
        assert_int_equal(a->nruns, b->nruns);
        assert_memory_equal(a->order, b->order, n * sizeof *a->order);
        assert_memory_equal(a->atask_ptr, b->atask_ptr, (a->natasks + 1) * sizeof *a->atask_ptr);
        assert_memory_equal(a->flags, b->flags, a->natasks);
        assert_memory_equal(a->run_ptr, b->run_ptr, (a->nruns + 1) * sizeof *a->run_ptr);
        assert_true(a->c == b->c && a->f == b->f && a->barriers == b->barriers && a->untracked == b->untracked &&
                    a->S == b->S);
        agg_free(&fresh);
        dag_free(&dl);
        if (fo->plan.traversal == ATA_PULL) {
            /* in place where the rows keep their order, unless several
             * workers run it: then a copy in worker order (cpu_exec.c,
             * layout_segments) */
            assert_true((f->Lp->T == f->Ls) == ((cpu_plan_of(f->Lp)->order_identity || cpu_plan_of(f->Lp)->by_row) &&
                                                !cpu_plan_of(f->Lp)->tbase));
            assert_true((f->Up->T == f->Us) == ((cpu_plan_of(f->Up)->order_identity || cpu_plan_of(f->Up)->by_row) &&
                                                !cpu_plan_of(f->Up)->tbase));
            /* U through L's levels backwards, by row: row n - 1 - k at
             * position k, without reading the order (PULL_DOWN) */
            int rev = n > 1;
            for (int k = 0; k < n && rev; k++) rev = f->Up->sched.order[k] == n - 1 - k;
            assert_int_equal(cpu_plan_of(f->Up)->order_reversed, rev && cpu_plan_of(f->Up)->by_row);
            split_reversed_seen += cpu_plan_of(f->Up)->order_reversed;
        }
        solve_both(f->Lp, pl, n, 40 + step);
        solve_both(f->Up, pu, n, 50 + step);
        ata_plan_destroy(pl);
        ata_plan_destroy(pu);
        ata_csr_free(RL);
        ata_csr_free(RU);
        ata_csr_free(R);
    }
    factor_core_free(f);
}

static void test_split_factors(void **state)
{
    (void)state;
    ata_context *ctx = tu_cpu_context(2);
    const char *specs[] = { "lap3d:9", "circuit:4000", "lap2d:30x20,perm=4" };
    for (int m = 0; m < 4; m++) {
        ata_csr *A;
        if (m < 3) {
            TU_OK(ata_gen_from_spec(specs[m], &A));
        } else {    /* level ordered: L's plan keeps L by row (identity), U's by row through the order */
            ata_csr *G;
            TU_OK(ata_gen_from_spec("lap3d:9", &G));
            A = tu_level_ordered(G);
            ata_csr_free(G);
        }
        const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_LA,
                                    ATA_POLICY_GREEDY, ATA_POLICY_CHAIN };
        for (int pol = 0; pol < 6; pol++)
            for (int t = 0; t < 3; t++) {     /* pull, push, pull with S auto */
                ata_factor_options fo = ata_factor_defaults();
                fo.plan.policy = pols[pol];
                fo.plan.S = t == 2 ? 0 : 16;
                fo.plan.traversal = t == 1 ? ATA_PUSH : ATA_PULL;
                check_split(ctx, A, &fo, m < 3 ? specs[m] : "lap3d:9 level ordered");
            }
        ata_csr_free(A);
    }
    assert_true(split_reversed_seen > 0);      /* (the level-ordered matrix's U, as in PCG) */
    ata_context_destroy(ctx);
}

/* ata_csr_is_symmetric (one pass with row cursors) against A == A^T by
 * transposing, on small random patterns that are symmetric, symmetric in
 * pattern only, or lack one mirror entry (upper or lower side). */
static int equal_transpose(const ata_csr *A)
{
    ata_csr *T;
    TU_OK(ata_csr_transpose(A, &T));
    int eq = !memcmp(A->rowptr, T->rowptr, (A->nrows + 1) * sizeof *A->rowptr) &&
             !memcmp(A->col, T->col, A->nnz * sizeof *A->col) && !memcmp(A->val, T->val, A->nnz * sizeof *A->val);
    ata_csr_free(T);
    return eq;
}

static void test_symmetry_check(void **state)
{
    (void)state;
    uint64_t s = 7;
    int seen[2] = { 0, 0 };
    for (int t = 0; t < 400; t++) {
        const int n = 2 + t % 9, cap = n * n;
        int *r = malloc(cap * sizeof *r), *c = malloc(cap * sizeof *c), k = 0;
        double *v = malloc(cap * sizeof *v);
        for (int i = 0; i < n; i++)
            for (int j = i; j < n; j++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                if (j != i && (s >> 33) % 3) continue;
                double x = 1 + (double)((s >> 40) % 5);
                r[k] = i; c[k] = j; v[k++] = x;
                if (j == i) continue;
                int mode = (int)((s >> 20) % 8);       /* 0: drop mirror, 1: other value, else mirror */
                if (mode == 0) continue;
                r[k] = j; c[k] = i; v[k++] = mode == 1 ? x + 1 : x;
            }
        if (t % 2) for (int q = 0; q < k; q++) { int x = r[q]; r[q] = c[q]; c[q] = x; }   /* lower side too */
        ata_csr *A;
        TU_OK(ata_csr_from_coo(n, n, k, r, c, v, 0, &A));
        int want = equal_transpose(A);
        assert_int_equal(ata_csr_is_symmetric(A), want);
        seen[want]++;
        ata_csr_free(A);
        free(r); free(c); free(v);
    }
    assert_true(seen[0] > 50 && seen[1] > 50);     /* both answers were exercised */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permute_matches_coo),
        cmocka_unit_test(test_mapped_plans),
        cmocka_unit_test(test_known_dag),
        cmocka_unit_test(test_split_factors),
        cmocka_unit_test(test_symmetry_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
