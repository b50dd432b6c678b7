/* test_agg.c - the aggregation's statistics and runs against a plain
 * recomputation from the schedule alone: owner of every row from order and
 * atask_ptr, every DAG edge classified (c by sorting all coarse pairs),
 * barriers from the latest source of each atask, runs by reading the level
 * of every position. agg.c takes shortcuts (atask from the level, runs from
 * the level cut points, one atask without a scan, the pair set fed only on
 * a change of source); this covers each of them, on matrices in natural and
 * permuted order, for every policy, uplo, pull/push and several S. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "agg.h"
#include "dag.h"

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void check_against_reference(const dag *d, const ata_csr *M, int preds, ata_uplo uplo,
                                    const agg_result *r, const char *what)
{
    const int n = d->n, p = r->natasks;
    int *owner = malloc(((size_t)n + 1) * sizeof *owner);
    int *maxsrc = malloc(((size_t)p + 1) * sizeof *maxsrc);
    unsigned char *flags = calloc((size_t)p + 1, 1);
    uint64_t *pairs = malloc(((size_t)d->m + 1) * sizeof *pairs);
    assert_true(owner && maxsrc && flags && pairs);
    for (int a = 0; a < p; a++) {
        maxsrc[a] = -1;
        for (int k = r->atask_ptr[a]; k < r->atask_ptr[a + 1]; k++) owner[r->order[k]] = a;
    }
    long long f = 0, npairs = 0;
    for (int i = 0; i < n; i++)
        for (int q = M->rowptr[i]; q < M->rowptr[i + 1]; q++) {
            int j = M->col[q];
            if (!dag_is_edge(uplo, preds, i, j)) continue;
            int a = owner[i], b = owner[j];
            if (a == b) { f++; flags[a] |= ATASK_TRACKED; continue; }
            pairs[npairs++] = (uint64_t)a << 32 | (uint32_t)b;
            int src = a < b ? a : b, dst = a < b ? b : a;
            if (src > maxsrc[dst]) maxsrc[dst] = src;
        }
    qsort(pairs, (size_t)npairs, sizeof *pairs, cmp_u64);
    long long c = 0;
    for (long long k = 0; k < npairs; k++) c += !k || pairs[k] != pairs[k - 1];
    int barriers = 0, untracked = 0, seg = 0;
    for (int b = 1; b < p; b++)
        if (maxsrc[b] >= seg) { flags[b] |= ATASK_BARRIER; seg = b; barriers++; }
    for (int a = 0; a < p; a++) untracked += !(flags[a] & ATASK_TRACKED);
    if (r->c != c || r->f != f || r->barriers != barriers || r->untracked != untracked)
        fail_msg("%s: c %lld f %lld barriers %d untracked %d, expected %lld %lld %d %d", what,
                 r->c, r->f, r->barriers, r->untracked, c, f, barriers, untracked);
    for (int a = 0; a < p; a++)
        if (r->flags[a] != flags[a]) fail_msg("%s: atask %d flags %d, expected %d", what, a, r->flags[a], flags[a]);
    int nr = 0;
    for (int a = 0; a < p; a++)
        for (int k = r->atask_ptr[a]; k < r->atask_ptr[a + 1]; k++)
            if (k == r->atask_ptr[a] || d->level[r->order[k]] != d->level[r->order[k - 1]]) {
                if (nr >= r->nruns || r->run_ptr[nr] != k)
                    fail_msg("%s: run %d starts at %d, expected %d", what, nr,
                             nr < r->nruns ? r->run_ptr[nr] : -1, k);
                nr++;
            }
    if (nr != r->nruns || r->run_ptr[nr] != n) fail_msg("%s: %d runs, expected %d", what, r->nruns, nr);
    free(owner); free(maxsrc); free(flags); free(pairs);
}

static void test_statistics(void **state)
{
    (void)state;
    /* Natural and permuted order, a nonsymmetric pattern, a diagonal (no
     * edges: every atask untracked). */
    const char *specs[] = { "lap2d:24", "lap2d:24,perm=3", "circuit:1500", "lap3d27:7", "diagonal" };
    const int S_list[] = { 1, 7, 60, 100000 };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        ata_csr *A, *AT;
        if (!strcmp(specs[s], "diagonal")) {
            TU_OK(ata_csr_alloc(50, 50, 50, &A));
            for (int i = 0; i <= 50; i++) A->rowptr[i] = i;
            for (int i = 0; i < 50; i++) { A->col[i] = i; A->val[i] = 1; }
        } else {
            TU_OK(ata_gen_from_spec(specs[s], &A));
        }
        TU_OK(ata_csr_transpose(A, &AT));
        for (int u = 0; u < 2; u++)
            for (int preds = 0; preds < 2; preds++) {
                const ata_uplo uplo = u ? ATA_UPPER : ATA_LOWER;
                const ata_csr *M = preds ? A : AT;   /* rows list predecessors / successors */
                dag d;
                TU_OK(dag_build(M->nrows, M->rowptr, M->col, preds, uplo, &d));
                for (int pol = 0; pol < ATA_POLICY_VENDOR; pol++)
                    for (size_t si = 0; si < sizeof S_list / sizeof *S_list; si++)
                        for (int cap = 0; cap < 2; cap++) {
                            /* capacity S, or one that cuts inside levels */
                            const int capacity = cap ? 13 : S_list[si];
                            char what[128];
                            snprintf(what, sizeof what, "%s %s %s %s S %d cap %d", specs[s],
                                     u ? "upper" : "lower", preds ? "pull" : "push",
                                     ata_policy_name((ata_policy)pol), S_list[si], capacity);
                            agg_result r;
                            TU_OK(agg_build(&d, M->rowptr, M->col, preds, uplo, (ata_policy)pol,
                                            S_list[si], capacity, &r));
                            check_against_reference(&d, M, preds, uplo, &r, what);
                            agg_free(&r);
                        }
                dag_free(&d);
            }
        ata_csr_free(AT);
        ata_csr_free(A);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_statistics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
