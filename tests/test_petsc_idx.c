/* test_petsc_idx.c - the PETSc plugin's index conversion
 * (solvers/petsc/ata_petsc_idx.h) without PETSc: 32-bit indices pass
 * through without a copy, 64-bit ones within range are narrowed exactly
 * (and factor the same as the 32-bit originals), and a count or an index
 * outside [0, 2^31-1] is refused with a message naming the limit and what
 * exceeds it. Debian's PETSc has 32-bit indices; this covers the 64-bit
 * path the plugin takes on a PETSc configured with --with-64-bit-indices. */
#include "test_util.h"
#include "petsc/ata_petsc_idx.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A's indices widened to 64 bits, as a 64-bit PetscInt holds them. */
static void widen(const ata_csr *A, int64_t **ia, int64_t **ja)
{
    int nnz = A->rowptr[A->nrows];
    *ia = malloc((size_t)(A->nrows + 1) * sizeof **ia);
    *ja = malloc((size_t)nnz * sizeof **ja);
    assert_non_null(*ia);
    assert_non_null(*ja);
    for (int i = 0; i <= A->nrows; i++) (*ia)[i] = A->rowptr[i];
    for (int k = 0; k < nnz; k++) (*ja)[k] = A->col[k];
}

static void test_32bit_pass_through(void **state)
{
    (void)state;
    ata_csr *A;
    assert_int_equal(ata_gen_laplace2d(20, 20, &A), ATA_OK);
    const int *rp, *ci;
    int nnz, *owned;
    char err[200] = "";
    assert_int_equal(ata_petsc_csr_idx(A->nrows, A->rowptr, A->col, sizeof(int32_t), &rp, &ci, &nnz, &owned, err,
                                       sizeof err),
                     ATA_PETSC_IDX_OK);
    assert_ptr_equal(rp, A->rowptr); /* no copy */
    assert_ptr_equal(ci, A->col);
    assert_null(owned);
    assert_int_equal(nnz, A->rowptr[A->nrows]);
    ata_csr_free(A);
}

static void test_64bit_converted_exactly(void **state)
{
    (void)state;
    ata_csr *A;
    assert_int_equal(ata_gen_laplace2d(30, 25, &A), ATA_OK);
    int n = A->nrows, m = A->rowptr[n];
    int64_t *ia, *ja;
    widen(A, &ia, &ja);
    const int *rp, *ci;
    int nnz, *owned;
    char err[200] = "";
    assert_int_equal(ata_petsc_csr_idx(n, ia, ja, sizeof(int64_t), &rp, &ci, &nnz, &owned, err, sizeof err),
                     ATA_PETSC_IDX_OK);
    assert_non_null(owned);
    assert_int_equal(nnz, m);
    assert_memory_equal(rp, A->rowptr, (size_t)(n + 1) * sizeof(int));
    assert_memory_equal(ci, A->col, (size_t)m * sizeof(int));

    /* the narrowed block factors and solves bitwise as the original */
    ata_csr B = {n, n, nnz, (int *)rp, (int *)ci, A->val};
    ata_factor_options o = ata_factor_defaults();
    ata_factor *F1, *F2;
    assert_int_equal(ata_factor_setup(NULL, A, &o, &F1), ATA_OK);
    assert_int_equal(ata_factor_setup(NULL, &B, &o, &F2), ATA_OK);
    free(owned); /* ATA keeps what it needs: the plugin frees it here too */
    double *b = malloc((size_t)n * sizeof *b), *x1 = malloc((size_t)n * sizeof *x1), *x2 = malloc((size_t)n * sizeof *x2);
    assert_non_null(b);
    assert_non_null(x1);
    assert_non_null(x2);
    tu_random_vec(b, n, 23);
    assert_int_equal(ata_factor_solve(F1, b, x1), ATA_OK);
    assert_int_equal(ata_factor_solve(F2, b, x2), ATA_OK);
    assert_memory_equal(x1, x2, (size_t)n * sizeof *x1);
    ata_factor_destroy(F1);
    ata_factor_destroy(F2);
    free(b);
    free(x1);
    free(x2);
    free(ia);
    free(ja);
    ata_csr_free(A);
}

/* Extreme values narrow exactly: 0 and INT_MAX are in range. */
static void test_64bit_bounds(void **state)
{
    (void)state;
    const int64_t v[4] = {0, 1, INT_MAX - 1, INT_MAX};
    int out[4];
    char err[200] = "";
    assert_int_equal(ata_petsc_idx_narrow(v, sizeof v[0], 4, out, "index", err, sizeof err), ATA_PETSC_IDX_OK);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], INT_MAX - 1);
    assert_int_equal(out[3], INT_MAX);
}

static void expect_refusal(int rc, const char *err, const char *what)
{
    assert_int_equal(rc, ATA_PETSC_IDX_RANGE);
    if (!strstr(err, "2^31-1") || !strstr(err, "2147483647") || !strstr(err, what))
        fail_msg("message \"%s\" should name the limit and \"%s\"", err, what);
}

/* A column index over INT_MAX (and a negative one): refused, named. */
static void test_64bit_index_refused(void **state)
{
    (void)state;
    /* 3 rows, 5 entries */
    int64_t ia[4] = {0, 2, 3, 5}, ja[5] = {0, 1, 1, 0, 2};
    const int *rp, *ci;
    int nnz, *owned;
    char err[200];

    ja[3] = (int64_t)INT_MAX + 1;
    int rc = ata_petsc_csr_idx(3, ia, ja, sizeof(int64_t), &rp, &ci, &nnz, &owned, err, sizeof err);
    expect_refusal(rc, err, "column index of entry 3 is 2147483648");
    assert_null(rp);
    assert_null(ci);
    assert_null(owned);
    assert_int_equal(nnz, 0);

    ja[3] = -1;
    rc = ata_petsc_csr_idx(3, ia, ja, sizeof(int64_t), &rp, &ci, &nnz, &owned, err, sizeof err);
    expect_refusal(rc, err, "column index of entry 3 is -1");
    assert_null(owned);

    ja[3] = 0;
    ia[1] = -5; /* a row pointer out of range */
    rc = ata_petsc_csr_idx(3, ia, ja, sizeof(int64_t), &rp, &ci, &nnz, &owned, err, sizeof err);
    expect_refusal(rc, err, "row pointer 1 is -5");
    assert_null(owned);
}

/* Rows or entries over INT_MAX: refused before anything is read or
 * allocated (the arrays stand for a block too large to build here). */
static void test_64bit_counts_refused(void **state)
{
    (void)state;
    const int *rp, *ci;
    int nnz, *owned;
    char err[200];

    /* entries: ia[n] > INT_MAX; ja is never read */
    int64_t ia[3] = {0, 1, (int64_t)INT_MAX + 7};
    int rc = ata_petsc_csr_idx(2, ia, NULL, sizeof(int64_t), &rp, &ci, &nnz, &owned, err, sizeof err);
    expect_refusal(rc, err, "2147483654 entries");
    assert_null(owned);

    /* rows: n > INT_MAX; neither array is read */
    rc = ata_petsc_csr_idx((int64_t)INT_MAX + 1, NULL, NULL, sizeof(int64_t), &rp, &ci, &nnz, &owned, err, sizeof err);
    expect_refusal(rc, err, "2147483648 rows");
    assert_null(owned);

    /* a negative entry count */
    int64_t neg[2] = {0, -3};
    rc = ata_petsc_csr_idx(1, neg, NULL, sizeof(int64_t), &rp, &ci, &nnz, &owned, err, sizeof err);
    expect_refusal(rc, err, "-3 entries");
}

static void test_bad_width(void **state)
{
    (void)state;
    const int *rp, *ci;
    int nnz, *owned;
    char err[200];
    int16_t ia[2] = {0, 0};
    assert_int_equal(ata_petsc_csr_idx(1, ia, ia, sizeof(int16_t), &rp, &ci, &nnz, &owned, err, sizeof err),
                     ATA_PETSC_IDX_SIZE);
    assert_non_null(strstr(err, "2 bytes"));
    assert_null(owned);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_32bit_pass_through),   cmocka_unit_test(test_64bit_converted_exactly),
        cmocka_unit_test(test_64bit_bounds),         cmocka_unit_test(test_64bit_index_refused),
        cmocka_unit_test(test_64bit_counts_refused), cmocka_unit_test(test_bad_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
