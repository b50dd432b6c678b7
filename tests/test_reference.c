/* test_reference.c - the serial oracle itself: triangular solves have tiny
 * backward error and push agrees with pull; ILU0 reproduces A on its pattern;
 * unusable diagonals and zero pivots are reported with their row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

/* Solve every triangle/diagonal variant of A both ways and check them. */
static int check_sptrsv(const ata_csr *A, const char *name)
{
    const int n = A->nrows;
    ata_csr *At;
    TU_OK(ata_csr_transpose(A, &At));   /* CSC of A */
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    tu_random_vec(b, n, 7);
    int ok = 0;
    for (int u = 0; u < 2; u++)
        for (int d = 0; d < 2; d++) {
            ata_uplo uplo = u ? ATA_UPPER : ATA_LOWER;
            ata_diag diag = d ? ATA_UNIT : ATA_NON_UNIT;
            ata_status s1 = ata_ref_sptrsv_csr(A, uplo, diag, b, x);
            ata_status s2 = ata_ref_sptrsv_csc(At, uplo, diag, b, y);
            assert_int_equal(s1, s2);
            if (s1 != ATA_OK) {
                assert_true(s1 == ATA_ERR_MISSING_DIAG || s1 == ATA_ERR_ZERO_PIVOT || s1 == ATA_ERR_NONFINITE);
                assert_non_null(strstr(ata_last_error(), "column") ? "" : strstr(ata_last_error(), "row"));
                continue;
            }
            double be = tu_backward_error(A, uplo, diag, x, b);
            if (!(be <= 1e-14)) fail_msg("%s uplo=%d diag=%d: backward error %g", name, u, d, be);
            be = tu_backward_error(A, uplo, diag, y, b);
            if (!(be <= 1e-14)) fail_msg("%s uplo=%d diag=%d push: backward error %g", name, u, d, be);
            ok++;
        }
    free(b); free(x); free(y);
    ata_csr_free(At);
    return ok;
}

static void test_sptrsv_real(void **state)
{
    (void)state;
    char **files = tu_list("real");
    if (!files) { skip(); return; }
    int solved = 0;
    for (char **f = files; *f; f++) {
        ata_csr *A;
        TU_OK(ata_matrix_read(*f, &A));
        solved += check_sptrsv(A, *f);
        ata_csr_free(A);
    }
    tu_free_list(files);
    printf("reference SpTS: %d solves checked on real matrices\n", solved);
    assert_true(solved >= 40);
}

static void test_sptrsv_generated(void **state)
{
    (void)state;
    const char *specs[] = { "lap2d:70", "lap3d:15,perm=4", "lap3d27:9", "circuit:30000" };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        assert_int_equal(check_sptrsv(A, specs[s]), 4);
        ata_csr_free(A);
    }
}

/* Known answer: L = [2 0 0; 1 4 0; 0 3 5], b = [2 9 13] -> x = [1 2 7/5]. */
static void test_sptrsv_known(void **state)
{
    (void)state;
    ata_csr *L;
    TU_OK(ata_csr_alloc(3, 3, 5, &L));
    int rp[] = { 0, 1, 3, 5 }, cj[] = { 0, 0, 1, 1, 2 };
    double v[] = { 2, 1, 4, 3, 5 }, b[] = { 2, 9, 13 }, x[3];
    memcpy(L->rowptr, rp, sizeof rp); memcpy(L->col, cj, sizeof cj); memcpy(L->val, v, sizeof v);
    TU_OK(ata_ref_sptrsv_csr(L, ATA_LOWER, ATA_NON_UNIT, b, x));
    assert_true(x[0] == 1 && x[1] == 2 && fabs(x[2] - 7.0 / 5) < 1e-15);
    TU_OK(ata_ref_sptrsv_csr(L, ATA_LOWER, ATA_UNIT, b, x));   /* [2, 7, -8] */
    assert_true(x[0] == 2 && x[1] == 7 && x[2] == -8);
    L->val[2] = 0;
    assert_int_equal(ata_ref_sptrsv_csr(L, ATA_LOWER, ATA_NON_UNIT, b, x), ATA_ERR_ZERO_PIVOT);
    assert_non_null(strstr(ata_last_error(), "row 1"));
    ata_csr_free(L);
}

/* (LU)_ij == A_ij for every (i, j) on A's pattern. */
static double ilu0_pattern_error(const ata_csr *A, const ata_csr *LU)
{
    const int n = A->nrows;
    double *row = calloc(n, sizeof *row), worst = 0;
    for (int i = 0; i < n; i++) {
        /* row i of L*U = sum_k l_ik u_k*, with l_ii = 1 */
        for (int p = LU->rowptr[i]; p < LU->rowptr[i + 1]; p++) {
            int k = LU->col[p];
            if (k > i) continue;
            double l = k == i ? 1.0 : LU->val[p];
            for (int q = LU->rowptr[k]; q < LU->rowptr[k + 1]; q++)
                if (LU->col[q] >= k) row[LU->col[q]] += l * LU->val[q];
        }
        double scale = 0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) scale = fmax(scale, fabs(A->val[p]));
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double e = fabs(row[A->col[p]] - A->val[p]) / (scale > 0 ? scale : 1);
            if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
        }
        for (int p = LU->rowptr[i]; p < LU->rowptr[i + 1]; p++) {
            int k = LU->col[p];
            if (k > i) continue;
            for (int q = LU->rowptr[k]; q < LU->rowptr[k + 1]; q++) row[LU->col[q]] = 0;
        }
    }
    free(row);
    return worst;
}

static void test_ilu0_pattern(void **state)
{
    (void)state;
    const char *specs[] = { "lap2d:40", "lap3d:12,perm=8", "lap3d27:8", "circuit:20000" };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        ata_csr *A, *LU;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        TU_OK(ata_csr_copy(A, &LU));
        TU_OK(ata_ref_ilu0(LU));
        double e = ilu0_pattern_error(A, LU);
        if (!(e <= 1e-13)) fail_msg("%s: (LU)_ij - A_ij = %g on the pattern", specs[s], e);
        ata_csr_free(A); ata_csr_free(LU);
    }
    char **files = tu_list("real");
    int factored = 0;
    for (char **f = files; f && *f; f++) {
        ata_csr *A, *LU;
        TU_OK(ata_matrix_read(*f, &A));
        TU_OK(ata_csr_copy(A, &LU));
        ata_status st = ata_ref_ilu0(LU);
        if (st == ATA_OK) {
            double e = ilu0_pattern_error(A, LU);
            if (!(e <= 1e-10)) fail_msg("%s: (LU)_ij - A_ij = %g on the pattern", *f, e);
            factored++;
        } else {
            assert_true(st == ATA_ERR_MISSING_DIAG || st == ATA_ERR_ZERO_PIVOT);
            assert_non_null(strstr(ata_last_error(), "row"));
        }
        ata_csr_free(A); ata_csr_free(LU);
    }
    tu_free_list(files);
    if (files) assert_true(factored >= 5);
}

/* A = [1 1 0; 1 1 1; 0 1 2]: u_11 = 1 - 1*1 = 0, a zero pivot in row 1. */
static void test_ilu0_zero_pivot(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_csr_alloc(3, 3, 7, &A));
    int rp[] = { 0, 2, 5, 7 }, cj[] = { 0, 1, 0, 1, 2, 1, 2 };
    double v[] = { 1, 1, 1, 1, 1, 1, 2 };
    memcpy(A->rowptr, rp, sizeof rp); memcpy(A->col, cj, sizeof cj); memcpy(A->val, v, sizeof v);
    assert_int_equal(ata_ref_ilu0(A), ATA_ERR_ZERO_PIVOT);
    assert_non_null(strstr(ata_last_error(), "row 1"));
    ata_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sptrsv_known),
        cmocka_unit_test(test_sptrsv_real),
        cmocka_unit_test(test_sptrsv_generated),
        cmocka_unit_test(test_ilu0_pattern),
        cmocka_unit_test(test_ilu0_zero_pivot),
    };
    return cmocka_run_group_tests_name("serial reference", tests, NULL, NULL);
}
