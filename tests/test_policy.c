/* test_policy.c - the policy table is the one declaration of a policy: every
 * ata_policy value has a row (name, description, colour, builder), names
 * round-trip, the error message lists the table, and each builder yields a
 * valid schedule with the shape its row promises. */
#include <string.h>
#include "test_util.h"
#include "agg.h"
#include "context.h"
#include "dag.h"
#include "policy.h"

static void test_table_rows(void **state)
{
    (void)state;
    assert_int_equal(policy_count(), ATA_POLICY_COUNT);
    for (int p = 0; p < policy_count(); p++) {
        const policy_desc *d = policy_get((ata_policy)p);
        assert_non_null(d);
        assert_true(d->build != NULL || (d->flags & POLICY_BLOCKS));   /* blocks: agg_build's own */
        assert_true(strlen(d->description) > 10);
        assert_int_equal(d->colour[0], '#');
        assert_int_equal(strlen(d->colour), 7);
        ata_policy back;
        assert_int_equal(ata_policy_from_name(d->name, &back), ATA_OK);
        assert_int_equal(back, p);
        assert_string_equal(ata_policy_name((ata_policy)p), d->name);
        for (int q = 0; q < p; q++) assert_string_not_equal(policy_get((ata_policy)q)->name, d->name);
    }
    assert_null(policy_get(ATA_POLICY_COUNT));
    assert_null(policy_get((ata_policy)-1));
    assert_string_equal(ata_policy_name(ATA_POLICY_COUNT), "unknown");
    ata_policy p;
    assert_int_equal(ata_policy_from_name("fastest", &p), ATA_ERR_ARG);
    for (int q = 0; q < policy_count(); q++) assert_non_null(strstr(ata_last_error(), policy_get((ata_policy)q)->name));
    assert_string_equal(policy_name_list(" or "), "levelset, syncfree, ca, la, greedy, vendor, chain or auto");
}

static void test_builders(void **state)
{
    (void)state;
    ata_csr *A, *L;
    dag d;
    assert_int_equal(ata_gen_laplace2d(30, 20, &A), ATA_OK);
    assert_int_equal(ata_csr_tril(A, &L), ATA_OK);
    assert_int_equal(dag_build(L->nrows, L->rowptr, L->col, 1, ATA_LOWER, &d), ATA_OK);
    const int S = 40, cap = 100, n = L->nrows;
    for (int p = 0; p < policy_count(); p++) {
        agg_result r;
        assert_int_equal(agg_build(&d, L->rowptr, L->col, 1, ATA_LOWER, (ata_policy)p, S, cap, &r), ATA_OK);
        assert_int_equal(agg_check_order(&r, n, L->rowptr, L->col, 1, ATA_LOWER), ATA_OK);
        assert_int_equal(r.atask_ptr[0], 0);
        assert_int_equal(r.atask_ptr[r.natasks], n);
        unsigned fl = policy_get((ata_policy)p)->flags;
        assert_int_equal(r.S, fl & POLICY_CAPACITY ? cap : S);
        if (fl & POLICY_LEVEL_ORDER)    /* the flag's promise: agg_build's level path trusts it */
            assert_memory_equal(r.order, d.level_rows, (size_t)n * sizeof *r.order);
        if (p == ATA_POLICY_LEVELSET) assert_int_equal(r.natasks, d.nlevels);
        if (p == ATA_POLICY_SYNCFREE || p == ATA_POLICY_VENDOR) assert_int_equal(r.natasks, 1);
        if (p == ATA_POLICY_LA) assert_int_equal(r.natasks, (n + S - 1) / S);
        if (p == ATA_POLICY_GREEDY) assert_int_equal(r.natasks, (n + cap - 1) / cap);
        if (p == ATA_POLICY_CA)
            for (int a = 0; a + 1 < r.natasks; a++) assert_true(r.atask_ptr[a + 1] - r.atask_ptr[a] >= S);
        if (p == ATA_POLICY_CHAIN) {
            /* lap2d:30x20 in natural order: a block per grid line (30 rows,
             * each after the one before), in 20 levels, one block each */
            assert_int_equal(r.nblocks, 20);
            assert_int_equal(r.natasks, 20);
            assert_int_equal(r.untracked, r.natasks);
            assert_int_equal(r.barriers, r.natasks - 1);
            for (int b = 0; b <= r.nblocks; b++) assert_int_equal(r.block_ptr[b], 30 * b);
            for (int a = 0; a <= r.natasks; a++) assert_int_equal(r.atask_block[a], a);
            for (int k = 0; k < n; k++) assert_int_equal(r.order[k], k);
        } else {
            assert_null(r.block_ptr);
        }
        agg_free(&r);
    }
    assert_int_equal(agg_build(&d, L->rowptr, L->col, 1, ATA_LOWER, ATA_POLICY_COUNT, S, cap, &(agg_result){ 0 }),
                     ATA_ERR_ARG);
    dag_free(&d);
    ata_csr_free(L);
    ata_csr_free(A);
}

/* A GPU-only row is refused on the CPU backend, naming the policy. */
static void test_gpu_only_on_cpu(void **state)
{
    (void)state;
    ata_context_options co = ata_context_defaults();
    co.backend = ATA_BACKEND_CPU;
    co.threads = 1;
    ata_context *ctx;
    ata_csr *A;
    ata_plan *plan = NULL;
    assert_int_equal(ata_context_create(&co, &ctx), ATA_OK);
    assert_int_equal(ata_gen_laplace2d(5, 5, &A), ATA_OK);
    ata_plan_options po = ata_plan_defaults();
    for (int p = 0; p < policy_count(); p++) {
        if (!(policy_get((ata_policy)p)->flags & POLICY_GPU_ONLY)) continue;
        po.policy = (ata_policy)p;
        assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &plan), ATA_ERR_UNSUPPORTED);
        assert_non_null(strstr(ata_last_error(), policy_get((ata_policy)p)->name));
    }
    po.policy = ATA_POLICY_COUNT;
    assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &plan), ATA_ERR_ARG);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_rows),
        cmocka_unit_test(test_builders),
        cmocka_unit_test(test_gpu_only_on_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
