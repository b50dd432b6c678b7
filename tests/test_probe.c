/* test_probe.c - S auto is reproducible: the probes' medians are cached in a
 * file (ATA_PROBE_CACHE=FILE here), a second context on the same machine
 * reads them back and picks the same S; a T_l written into the file is the
 * one S is computed from; ATA_PROBE_CACHE=0 leaves no file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"

static char path[64];

static ata_plan_info plan_info(const ata_csr *A, int threads)
{
    ata_context_options co = ata_context_defaults();
    co.backend = ATA_BACKEND_CPU;
    co.threads = threads;
    ata_context *ctx;
    ata_plan *plan;
    ata_plan_info info;
    assert_int_equal(ata_context_create(&co, &ctx), ATA_OK);
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_CA;                      /* S auto: probed (auto takes chain on a grid in natural order) */
    assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &plan), ATA_OK);
    assert_int_equal(ata_plan_get_info(plan, &info), ATA_OK);
    ata_plan_destroy(plan);
    ata_context_destroy(ctx);
    return info;
}

static int count_lines(const char *prefix)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += !strncmp(line, prefix, strlen(prefix));
    fclose(f);
    return n;
}

static void test_cache_roundtrip(void **state)
{
    (void)state;
    ata_csr *A;
    assert_int_equal(ata_gen_laplace2d(60, 60, &A), ATA_OK);
    unlink(path);
    setenv("ATA_PROBE_CACHE", path, 1);
    ata_plan_info a = plan_info(A, 2);
    assert_int_equal(a.probe_cached, 0);
    assert_int_equal(a.probe_reps, 5);
    assert_true(a.T_l_min <= a.T_l && a.T_l <= a.T_l_max && a.T_l > 0);
    assert_true(a.T_u_min <= a.T_u && a.T_u <= a.T_u_max && a.T_u > 0);
    assert_int_equal(count_lines("T_l "), 1);
    assert_int_equal(count_lines("T_u:"), 1);
    ata_plan_info b = plan_info(A, 2);              /* a new context: from the file */
    assert_int_equal(b.probe_cached, 1);
    assert_int_equal(b.S, a.S);
    assert_true(fabs(b.T_l - a.T_l) <= 1e-6 * a.T_l && fabs(b.T_u - a.T_u) <= 1e-6 * a.T_u);
    assert_int_equal(count_lines("T_l "), 1);       /* nothing probed, nothing added */
    assert_int_equal(count_lines("T_u:"), 1);
    ata_csr_free(A);
}

/* S follows the file: T_l written by hand, T_u from a first run. */
static void test_cache_is_used(void **state)
{
    (void)state;
    ata_csr *A;
    assert_int_equal(ata_gen_laplace2d(60, 60, &A), ATA_OK);
    unlink(path);
    setenv("ATA_PROBE_CACHE", path, 1);
    ata_plan_info a = plan_info(A, 1);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    double T_l = 200 * a.T_u;                       /* R 100 x 200 = 20000 rows > n: S = n */
    fprintf(f, "T_l %.6e %.6e %.6e 5\n", T_l, T_l, T_l);
    fclose(f);
    ata_plan_info b = plan_info(A, 1);
    assert_int_equal(b.probe_cached, 1);
    assert_true(fabs(b.T_l - T_l) <= 1e-5 * T_l);
    assert_int_equal(b.S, A->nrows);
    ata_csr_free(A);
}

static void test_cache_off(void **state)
{
    (void)state;
    ata_csr *A;
    assert_int_equal(ata_gen_laplace2d(30, 30, &A), ATA_OK);
    unlink(path);
    setenv("ATA_PROBE_CACHE", "0", 1);
    ata_plan_info a = plan_info(A, 1);
    assert_int_equal(a.probe_cached, 0);
    assert_int_equal(access(path, F_OK), -1);
    ata_csr_free(A);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/ata-probe-test-%d.txt", (int)getpid());
    /* These tests check the cache itself: write it whatever the load (a busy
     * CI machine would otherwise keep its probes out of the file). */
    setenv("ATA_PROBE_CACHE_ANY_LOAD", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_roundtrip),
        cmocka_unit_test(test_cache_is_used),
        cmocka_unit_test(test_cache_off),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    return rc;
}
