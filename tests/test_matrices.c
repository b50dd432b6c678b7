/* test_matrices.c - the matrix core: reading (Matrix Market, gzip, tar.gz,
 * Rutherford-Boeing) with an exact message for every bad file, writing,
 * CSR operations, and the generators' sizes, values and DAG shape. */
#include "RBio.h"               /* first: it sets the large-file macros */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "test_util.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void assert_same_csr(const ata_csr *A, const ata_csr *B)
{
    assert_int_equal(A->nrows, B->nrows);
    assert_int_equal(A->ncols, B->ncols);
    assert_int_equal(A->nnz, B->nnz);
    assert_memory_equal(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof *A->rowptr);
    assert_memory_equal(A->col, B->col, (size_t)A->nnz * sizeof *A->col);
    assert_memory_equal(A->val, B->val, (size_t)A->nnz * sizeof *A->val);
}

/* Position of A(i,j), or -1. */
static int find(const ata_csr *A, int i, int j)
{
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->col[p] == j) return p;
    return -1;
}

/* Small CSR from dense rows (0 = absent). */
static ata_csr *from_dense(int m, int n, const double *d)
{
    int nnz = 0;
    for (int k = 0; k < m * n; k++) nnz += d[k] != 0;
    ata_csr *A;
    TU_OK(ata_csr_alloc(m, n, nnz, &A));
    int q = 0;
    for (int i = 0; i < m; i++) {
        A->rowptr[i] = q;
        for (int j = 0; j < n; j++)
            if (d[i * n + j] != 0) { A->col[q] = j; A->val[q++] = d[i * n + j]; }
    }
    A->rowptr[m] = q;
    return A;
}

/* Read a text written by the test; return the status, message in ata_last_error. */
static ata_status read_text(const char *name, const char *text, ata_csr **A)
{
    char path[4200];
    tu_tmp_path(path, sizeof path, name);
    tu_write_text(path, text);
    *A = NULL;
    return ata_matrix_read(path, A);
}

/* ------------------------------------------------------------------ */
/* Bad files                                                           */
/* ------------------------------------------------------------------ */

static const struct { const char *file; ata_status st; const char *says; } bad_expect[] = {
    { "a0.mtx", ATA_ERR_EMPTY, "0 x 0" },
    { "a04.mtx", ATA_ERR_EMPTY, "0 x 4" },
    { "bad_dimensions.mtx", ATA_ERR_FORMAT, "no size line" },
    { "bad_header.mtx", ATA_ERR_FORMAT, "symmetry 'bogus'" },
    { "bad_matrix_type.mtx", ATA_ERR_UNSUPPORTED, "complex" },
    { "empty.mtx", ATA_ERR_EMPTY, "3 x 4 with 0 entries" },
    { "full_noheader.mtx", ATA_ERR_FORMAT, "line 1: not a Matrix Market header" },
    { "mangle1.mtx", ATA_ERR_FORMAT, "object 'junk'" },
    { "mangle2.mtx", ATA_ERR_FORMAT, "format 'junk'" },
    { "mangle3.mtx", ATA_ERR_FORMAT, "field 'junk'" },
    { "mangle4.mtx", ATA_ERR_FORMAT, "symmetry 'junk'" },
    { "mangled10.mtx", ATA_ERR_FORMAT, "after 2 of the 3 declared entries" },
    { "mangled11.mtx", ATA_ERR_FORMAT, "line 5, entry 1: column index 'zero'" },
    { "mangled12.mtx", ATA_ERR_FORMAT, "line 5, entry 1: missing value" },
    { "mangled13.mtx", ATA_ERR_INDEX, "line 7, entry 3: column index 9999 out of range 1..4" },
    { "mangled14.mtx", ATA_ERR_DUPLICATE, "(2,2) (1-based): entries 2 and 3" },
    { "mangled7.mtx", ATA_ERR_FORMAT, "line 5, entry 1: missing value" },
    { "mangled8.mtx", ATA_ERR_FORMAT, "line 4: size line" },
    { "mangled9.mtx", ATA_ERR_FORMAT, "must be square" },
    { "skew_fp64.mtx", ATA_ERR_NONFINITE, "line 4, entry 2: value 'inf'" },
};

/* Every bad file is refused: by the reader, or else (a readable matrix
 * unusable for a solve) by the diagonal check; the message names it. */
static void test_bad_files(void **state)
{
    (void)state;
    char **list = tu_list("bad");
    if (!list) { skip(); return; }
    int known = 0;
    for (char **f = list; *f; f++) {
        ata_csr *A = NULL;
        ata_status st = ata_matrix_read(*f, &A);
        if (st == ATA_OK) {
            assert_non_null(A);
            st = ata_csr_check_diag(A, *f);
            ata_csr_free(A);
        } else assert_null(A);
        printf("  %-20s %-26s %s\n", base_name(*f), ata_status_string(st), ata_last_error());
        assert_int_not_equal(st, ATA_OK);
        assert_non_null(strstr(ata_last_error(), base_name(*f)));
        for (size_t k = 0; k < sizeof bad_expect / sizeof *bad_expect; k++) {
            if (strcmp(bad_expect[k].file, base_name(*f))) continue;
            known++;
            assert_int_equal(st, bad_expect[k].st);
            if (!strstr(ata_last_error(), bad_expect[k].says))
                fail_msg("%s: message '%s' lacks '%s'", *f, ata_last_error(), bad_expect[k].says);
        }
    }
    printf("  %d bad files, %d with a known exact status\n", (int)(sizeof bad_expect / sizeof *bad_expect), known);
    tu_free_list(list);
}

/* ------------------------------------------------------------------ */
/* Real files                                                          */
/* ------------------------------------------------------------------ */

/* Expanded counts checked with awk against each header; `diag` is what
 * ata_csr_check_diag must say, with the row it names. */
static const struct { const char *file; int n, nnz, sym; ata_status diag; const char *row; } real_expect[] = {
    { "1138_bus.mtx", 1138, 4054, 1, ATA_OK, NULL },
    { "494_bus.mtx", 494, 1666, 1, ATA_OK, NULL },
    { "LFAT5.mtx", 14, 46, 1, ATA_OK, NULL },
    { "Pd.mtx", 8081, 13036, 0, ATA_OK, NULL },
    { "adder_dcop_05.mtx", 1813, 11097, 0, ATA_ERR_MISSING_DIAG, "row 470 " },
    { "ani1.mtx", 36, 208, 0, ATA_OK, NULL },
    { "bayer10.mtx", 13436, 94926, 0, ATA_ERR_MISSING_DIAG, "row 0 " },
    { "bcsstk13.mtx", 2003, 83883, 1, ATA_OK, NULL },
    { "cryg2500.mtx", 2500, 12349, 0, ATA_OK, NULL },
    { "hangGlider_2.mtx", 1647, 14754, 1, ATA_ERR_MISSING_DIAG, "row 914 " },
    { "nnc1374.mtx", 1374, 8606, 0, ATA_ERR_MISSING_DIAG, "row 8 " },
    { "olm1000.mtx", 1000, 3996, 0, ATA_OK, NULL },
    { "pts5ldd03.mtx", 161, 745, 1, ATA_OK, NULL },
    { "rajat19.mtx", 1157, 5399, 0, ATA_ERR_MISSING_DIAG, "row 2 " },
    { "watt_2.mtx", 1856, 11550, 0, ATA_OK, NULL },
    { "west0067.mtx", 67, 294, 0, ATA_ERR_MISSING_DIAG, "row 0 " },
    { "west0479.mtx", 479, 1910, 0, ATA_ERR_MISSING_DIAG, "row 0 " },
};

/* An independent, naive reading of the text: every stored entry (and its
 * mirror when symmetric) is in A with the same value, and nothing else. */
static void check_against_text(const char *path, const ata_csr *A)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, f));
    const int sym = strstr(line, "symmetric") != NULL, skew = strstr(line, "skew") != NULL;
    const int pattern = strstr(line, "pattern") != NULL;
    long m = -1, n, nz, seen = 0, expanded = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%' || line[strspn(line, " \t\r\n")] == '\0') continue;   /* comment, blank */
        if (m < 0) { assert_int_equal(sscanf(line, "%ld %ld %ld", &m, &n, &nz), 3); continue; }
        int i, j;
        double x = 1;
        assert_true(sscanf(line, "%d %d %lf", &i, &j, &x) >= 2 + !pattern);
        int p = find(A, i - 1, j - 1);
        assert_true(p >= 0);
        assert_true(A->val[p] == x);
        seen++;
        expanded++;
        if (sym && i != j) {
            p = find(A, j - 1, i - 1);
            assert_true(p >= 0 && A->val[p] == (skew ? -x : x));
            expanded++;
        }
    }
    fclose(f);
    assert_int_equal(seen, nz);
    assert_int_equal(expanded, A->nnz);
}

static void check_real_file(const char *path, const ata_csr *A, int k)
{
    assert_int_equal(A->nrows, real_expect[k].n);
    assert_int_equal(A->ncols, real_expect[k].n);
    assert_int_equal(A->nnz, real_expect[k].nnz);
    assert_int_equal(ata_csr_is_symmetric(A), real_expect[k].sym);
    check_against_text(path, A);
    ata_status d = ata_csr_check_diag(A, path);
    assert_int_equal(d, real_expect[k].diag);
    if (d != ATA_OK) {
        assert_non_null(strstr(ata_last_error(), real_expect[k].row));
        assert_non_null(strstr(ata_last_error(), base_name(path)));
    }
}

static void test_real_files(void **state)
{
    (void)state;
    char **list = tu_list("real");
    if (!list) { skip(); return; }
    int checked = 0;
    for (char **f = list; *f; f++) {
        ata_csr *A;
        TU_OK(ata_matrix_read(*f, &A));
        TU_OK(ata_csr_validate(A, *f));       /* sorted, in range, finite */
        for (int p = 0; p < A->nnz; p++) assert_true(isfinite(A->val[p]));
        for (size_t k = 0; k < sizeof real_expect / sizeof *real_expect; k++)
            if (!strcmp(real_expect[k].file, base_name(*f))) { check_real_file(*f, A, (int)k); checked++; }
        ata_csr_free(A);
    }
    printf("  %d real files checked against their headers and text\n", checked);
    tu_free_list(list);
}

static void test_missing_diag_named(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/real/hangGlider_2.mtx", tu_matrix_dir());
    ata_csr *A;
    if (access(path, R_OK) != 0) { printf("SKIPPED: %s not found\n", path); skip(); return; }
    TU_OK(ata_matrix_read(path, &A));
    assert_int_equal(ata_csr_check_diag(A, path), ATA_ERR_MISSING_DIAG);
    assert_non_null(strstr(ata_last_error(), "hangGlider_2.mtx: row 914 (0-based) has no stored diagonal"));
    assert_int_equal(find(A, 914, 914), -1);
    assert_true(find(A, 913, 913) >= 0);
    ata_csr_free(A);
}

/* ------------------------------------------------------------------ */
/* Reader details on small texts                                       */
/* ------------------------------------------------------------------ */

static void test_read_kinds(void **state)
{
    (void)state;
    ata_csr *A;
    /* pattern -> ones; rectangular is fine for the reader */
    TU_OK(read_text("pat.mtx", "%%MatrixMarket matrix coordinate pattern general\n% c\n2 3 3\n2 3\n1 1\n1 2\n", &A));
    double want_pat[] = { 1, 1, 0, 0, 0, 1 };
    ata_csr *W = from_dense(2, 3, want_pat);
    assert_same_csr(A, W);
    assert_int_equal(ata_csr_check_diag(A, "pat"), ATA_ERR_NOT_SQUARE);
    ata_csr_free(A); ata_csr_free(W);
    /* integer symmetric, CRLF, comments between entries, upper-stored entry */
    TU_OK(read_text("int.mtx", "%%MatrixMarket matrix coordinate integer symmetric\r\n3 3 3\r\n1 1 5\r\n% x\r\n"
                    "1 3 -2\r\n\r\n2 2 7\r\n", &A));
    double want_int[] = { 5, 0, -2, 0, 7, 0, -2, 0, 0 };
    W = from_dense(3, 3, want_int);
    assert_same_csr(A, W);
    ata_csr_free(A); ata_csr_free(W);
    /* skew-symmetric: the mirror is negated */
    TU_OK(read_text("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -0.25\n", &A));
    double want_skew[] = { 0, -1.5, 0, 1.5, 0, 0.25, 0, -0.25, 0 };
    W = from_dense(3, 3, want_skew);
    assert_same_csr(A, W);
    assert_int_equal(ata_csr_check_diag(A, "skew"), ATA_ERR_MISSING_DIAG);
    ata_csr_free(A); ata_csr_free(W);
    /* explicit zeros are kept as stored entries */
    TU_OK(read_text("zero.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0\n2 2 3e-310\n", &A));
    assert_int_equal(A->nnz, 2);
    assert_true(A->val[0] == 0 && A->val[1] == 3e-310);
    assert_int_equal(ata_csr_check_diag(A, "zero"), ATA_ERR_ZERO_PIVOT);
    ata_csr_free(A);
}

static void test_read_errors(void **state)
{
    (void)state;
    static const struct { const char *name, *text; ata_status st; const char *says; } cases[] = {
        { "sym_both.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1\n2 1 3\n1 2 3\n",
          ATA_ERR_DUPLICATE, "(1,2) (1-based): entries 2 and 3" },
        { "extra.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n",
          ATA_ERR_FORMAT, "line 4: more entries than the 1 declared" },
        { "words.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 9\n",
          ATA_ERR_FORMAT, "line 3, entry 1: unexpected '9'" },
        { "huge.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e999\n",
          ATA_ERR_NONFINITE, "line 3, entry 1: value '1e999' is not finite" },
        { "nan.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 nan\n",
          ATA_ERR_NONFINITE, "line 4, entry 2" },
        { "junkval.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 forty-two\n",
          ATA_ERR_FORMAT, "value 'forty-two' is not a number" },
        { "intval.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n",
          ATA_ERR_FORMAT, "value '2.5' is not an integer" },
        { "row0.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n",
          ATA_ERR_INDEX, "entry 1: row index 0 out of range 1..2" },
        { "array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
          ATA_ERR_UNSUPPORTED, "array" },
        { "herm.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
          ATA_ERR_UNSUPPORTED, "hermitian" },
        { "skewdiag.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
          ATA_ERR_FORMAT, "diagonal entry (1,1)" },
        { "lower.mtx", "%%matrixmarket matrix coordinate real general\n1 1 1\n1 1 1\n",
          ATA_ERR_FORMAT, "not a Matrix Market header" },
        { "blank.mtx", "", ATA_ERR_FORMAT, "empty file" },
        { "toobig.mtx", "%%MatrixMarket matrix coordinate real general\n3000000000 1 1\n1 1 1\n",
          ATA_ERR_UNSUPPORTED, "32-bit" },
        { "sizejunk.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1 7\n1 1 1\n",
          ATA_ERR_FORMAT, "line 2: size line" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        ata_csr *A;
        ata_status st = read_text(cases[k].name, cases[k].text, &A);
        printf("  %-14s %s\n", cases[k].name, ata_last_error());
        assert_null(A);
        assert_int_equal(st, cases[k].st);
        assert_non_null(strstr(ata_last_error(), cases[k].name));
        if (!strstr(ata_last_error(), cases[k].says))
            fail_msg("%s: message '%s' lacks '%s'", cases[k].name, ata_last_error(), cases[k].says);
    }
    /* A comment longer than CHOLMOD's line buffer once shifted what it
     * took for the size line; our own reader takes lines of any length. */
    char text[2048];
    snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%%%01027d 2 2 2\n"
             "2 2 2\n1 1 5\n2 2 7\n", 0);
    ata_csr *A = NULL;
    TU_OK(read_text("longcomment.mtx", text, &A));
    double want_long[] = { 5, 0, 0, 7 };
    ata_csr *W = from_dense(2, 2, want_long);
    assert_same_csr(A, W);
    ata_csr_free(A); ata_csr_free(W);
    assert_int_equal(ata_matrix_read("/nonexistent/dir/x.mtx", &A), ATA_ERR_IO);
    assert_non_null(strstr(ata_last_error(), "/nonexistent/dir/x.mtx"));
    assert_int_equal(ata_matrix_read(tu_tmp_dir(), &A), ATA_ERR_IO);
    assert_int_equal(ata_matrix_read(NULL, &A), ATA_ERR_ARG);
}

/* ------------------------------------------------------------------ */
/* Round trips: .mtx, .mtx.gz, .tar.gz, Rutherford-Boeing              */
/* ------------------------------------------------------------------ */

/* A matrix whose values need all 17 digits. */
static ata_csr *round_trip_matrix(void)
{
    ata_csr *A;
    TU_OK(ata_gen_from_spec("circuit:3000,perm=9", &A));
    return A;
}

static void test_mtx_round_trip(void **state)
{
    (void)state;
    ata_csr *A = round_trip_matrix(), *B;
    char path[4200];
    tu_tmp_path(path, sizeof path, "rt.mtx");
    TU_OK(ata_matrix_write_mtx(path, A));
    TU_OK(ata_matrix_read(path, &B));
    assert_same_csr(A, B);
    ata_csr_free(B);
    /* a rectangular one too */
    double d[] = { 1, 0, 2.5, 0, 0, -3, 0, 1e-300 };
    ata_csr *R = from_dense(2, 4, d);
    TU_OK(ata_matrix_write_mtx(path, R));
    TU_OK(ata_matrix_read(path, &B));
    assert_same_csr(R, B);
    ata_csr_free(B); ata_csr_free(R);
    assert_int_equal(ata_matrix_write_mtx("/nonexistent/dir/x.mtx", A), ATA_ERR_IO);
    assert_non_null(strstr(ata_last_error(), "/nonexistent/dir/x.mtx"));
    assert_int_equal(ata_matrix_write_mtx(path, NULL), ATA_ERR_ARG);
    ata_csr_free(A);
}

static void test_gz_round_trip(void **state)
{
    (void)state;
    ata_csr *A = round_trip_matrix(), *B;
    char mtx[4200], gz[4200];
    tu_tmp_path(mtx, sizeof mtx, "gzrt.mtx");
    tu_tmp_path(gz, sizeof gz, "gzrt.mtx.gz");
    TU_OK(ata_matrix_write_mtx(mtx, A));
    tu_run("gzip -c '%s' > '%s'", mtx, gz);
    TU_OK(ata_matrix_read(gz, &B));
    assert_same_csr(A, B);
    ata_csr_free(B);
    /* a bad file inside gzip is still named, with its line */
    tu_tmp_path(mtx, sizeof mtx, "gzbad.mtx");
    tu_tmp_path(gz, sizeof gz, "gzbad.mtx.gz");
    tu_write_text(mtx, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n");
    tu_run("gzip -c '%s' > '%s'", mtx, gz);
    assert_int_equal(ata_matrix_read(gz, &B), ATA_ERR_DUPLICATE);
    assert_non_null(strstr(ata_last_error(), "gzbad.mtx.gz: duplicate entry (1,1)"));
    /* gzip of nothing */
    tu_tmp_path(gz, sizeof gz, "nothing.mtx.gz");
    tu_run("printf '' | gzip -c > '%s'%s", gz, "");
    assert_int_equal(ata_matrix_read(gz, &B), ATA_ERR_FORMAT);
    printf("  %s\n", ata_last_error());
    assert_non_null(strstr(ata_last_error(), "nothing.mtx.gz"));
    /* corrupt gzip */
    tu_tmp_path(gz, sizeof gz, "corrupt.mtx.gz");
    tu_run("printf '\\037\\213garbage' > '%s'%s", gz, "");
    assert_int_not_equal(ata_matrix_read(gz, &B), ATA_OK);
    printf("  %s\n", ata_last_error());
    assert_non_null(strstr(ata_last_error(), "corrupt.mtx.gz"));
    ata_csr_free(A);
}

/* NAME/NAME.mtx is picked over the auxiliary NAME/NAME_b.mtx, whichever
 * comes first in the archive. */
static void test_tar_round_trip(void **state)
{
    (void)state;
    ata_csr *A = round_trip_matrix(), *B, *b;
    TU_OK(ata_gen_laplace2d(3, 1, &b));
    char dir[4200], p[4400], tgz[4200];
    tu_tmp_path(dir, sizeof dir, "coll/rtm");
    tu_run("mkdir -p '%s'%s", dir, "");
    snprintf(p, sizeof p, "%s/rtm_b.mtx", dir);
    TU_OK(ata_matrix_write_mtx(p, b));
    snprintf(p, sizeof p, "%s/rtm.mtx", dir);
    TU_OK(ata_matrix_write_mtx(p, A));
    tu_tmp_path(tgz, sizeof tgz, "rtm.tar.gz");
    tu_tmp_path(dir, sizeof dir, "coll");
    tu_run("tar czf '%s' -C '%s' rtm/rtm_b.mtx rtm/rtm.mtx", tgz, dir);
    TU_OK(ata_matrix_read(tgz, &B));
    assert_same_csr(A, B);
    ata_csr_free(B);
    /* only an auxiliary file: taken as the matrix */
    tu_tmp_path(tgz, sizeof tgz, "aux.tar.gz");
    tu_run("tar czf '%s' -C '%s' rtm/rtm_b.mtx", tgz, dir);
    TU_OK(ata_matrix_read(tgz, &B));
    assert_same_csr(b, B);
    ata_csr_free(B);
    /* a bad member is named as archive:member */
    char bad[4400];
    snprintf(bad, sizeof bad, "%s/bad/bad.mtx", dir);
    tu_run("mkdir -p '%s/bad'%s", dir, "");
    tu_write_text(bad, "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n");
    tu_tmp_path(tgz, sizeof tgz, "bad.tar.gz");
    tu_run("tar czf '%s' -C '%s' bad", tgz, dir);
    assert_int_equal(ata_matrix_read(tgz, &B), ATA_ERR_INDEX);
    assert_non_null(strstr(ata_last_error(), "bad.tar.gz:bad/bad.mtx: line 3, entry 1: row index 3"));
    /* no matrix inside */
    tu_tmp_path(tgz, sizeof tgz, "none.tar.gz");
    snprintf(bad, sizeof bad, "%s/readme.txt", dir);
    tu_write_text(bad, "hello\n");
    tu_run("tar czf '%s' -C '%s' readme.txt", tgz, dir);
    assert_int_equal(ata_matrix_read(tgz, &B), ATA_ERR_FORMAT);
    assert_non_null(strstr(ata_last_error(), "none.tar.gz: archive holds no"));
    ata_csr_free(A); ata_csr_free(b);
}

/* RBio writes CSC, i.e. the CSR of A^T; it stores only the lower triangle
 * of a symmetric matrix, which the reader must expand again. */
static void rb_write(const char *path, const ata_csr *A)
{
    ata_csr *At;
    TU_OK(ata_csr_transpose(A, &At));
    char mtype[4], *fname = strdup(path);
    int st = RBwrite_i(fname, "ata test", "ata", A->nrows, A->ncols, At->rowptr, At->col, At->val,
                       NULL, NULL, NULL, 0, mtype);
    free(fname);
    assert_int_equal(st, 0);
    ata_csr_free(At);
}

static void test_rb_round_trip(void **state)
{
    (void)state;
    char path[4200], dir[4200], tgz[4200];
    ata_csr *S = round_trip_matrix(), *U, *B;   /* symmetric: written as rsa */
    double d[] = { 1, 0, 2.5, 0, 0, -3, 0, 1e-300, 7, 0, 0, 0.1 };
    U = from_dense(3, 4, d);                     /* rectangular: rra */
    tu_tmp_path(path, sizeof path, "s.rsa");
    rb_write(path, S);
    TU_OK(ata_matrix_read(path, &B));
    assert_same_csr(S, B);
    ata_csr_free(B);
    tu_tmp_path(path, sizeof path, "u.rb");
    rb_write(path, U);
    TU_OK(ata_matrix_read(path, &B));
    assert_same_csr(U, B);
    ata_csr_free(B);
    /* inside a collection archive (RBio needs a file: a temp copy) */
    tu_tmp_path(dir, sizeof dir, "rbcoll/urb");
    tu_run("mkdir -p '%s'%s", dir, "");
    tu_tmp_path(path, sizeof path, "rbcoll/urb/urb.rb");
    rb_write(path, U);
    tu_tmp_path(tgz, sizeof tgz, "urb.tar.gz");
    tu_tmp_path(dir, sizeof dir, "rbcoll");
    tu_run("tar czf '%s' -C '%s' urb", tgz, dir);
    TU_OK(ata_matrix_read(tgz, &B));
    assert_same_csr(U, B);
    ata_csr_free(B);
    /* truncated: the message names the file and the part */
    char cmd_src[4200];
    tu_tmp_path(cmd_src, sizeof cmd_src, "s.rsa");
    tu_tmp_path(path, sizeof path, "trunc.rsa");
    tu_run("head -n 6 '%s' > '%s'", cmd_src, path);
    assert_int_equal(ata_matrix_read(path, &B), ATA_ERR_FORMAT);
    printf("  %s\n", ata_last_error());
    assert_non_null(strstr(ata_last_error(), "trunc.rsa: Rutherford-Boeing: line 3 declares 3000 columns"));
    /* a damaged pointer line: RBio's own failure, with the lines it lies on */
    tu_tmp_path(path, sizeof path, "damaged.rsa");
    tu_run("sed '6s/[0-9]/x/g' '%s' > '%s'", cmd_src, path);
    assert_int_equal(ata_matrix_read(path, &B), ATA_ERR_FORMAT);
    printf("  %s\n", ata_last_error());
    assert_non_null(strstr(ata_last_error(), "damaged.rsa: Rutherford-Boeing"));
    assert_non_null(strstr(ata_last_error(), "lines"));
    /* huge card counts on line 2 (the fuzzer's find: line numbers summed
     * from them overflowed): the message points at the header instead */
    B = NULL;
    tu_tmp_path(path, sizeof path, "huge.rsa");
    tu_run("sed -e '2s/.*/99999999999999999999 9223372036854775807 9223372036854775807 5/' -e '6s/[0-9]/x/g' "
           "'%s' > '%s'", cmd_src, path);
    assert_int_equal(ata_matrix_read(path, &B), ATA_ERR_FORMAT);
    printf("  %s\n", ata_last_error());
    assert_non_null(strstr(ata_last_error(), "huge.rsa: Rutherford-Boeing"));
    assert_non_null(strstr(ata_last_error(), "the header (lines 1-4)"));
    assert_null(B);
    ata_csr_free(S); ata_csr_free(U);
}

/* ------------------------------------------------------------------ */
/* CSR operations                                                      */
/* ------------------------------------------------------------------ */

static void test_transpose(void **state)
{
    (void)state;
    double d[] = { 1, 0, 2, 0, 3, 4, 0, 5, 0 , 0, 0, 6 };
    double dt[] = { 1, 3, 0, 0, 4, 0, 2, 0, 0, 0, 5, 6 };
    ata_csr *A = from_dense(3, 4, d), *T, *TT, *W = from_dense(4, 3, dt);
    TU_OK(ata_csr_transpose(A, &T));
    assert_same_csr(T, W);
    TU_OK(ata_csr_transpose(T, &TT));
    assert_same_csr(A, TT);
    ata_csr_free(A); ata_csr_free(T); ata_csr_free(TT); ata_csr_free(W);
    TU_OK(ata_gen_from_spec("circuit:5000,perm=2", &A));
    TU_OK(ata_csr_transpose(A, &T));
    assert_same_csr(A, T);                        /* symmetric */
    ata_csr_free(A); ata_csr_free(T);
    char path[4096];
    snprintf(path, sizeof path, "%s/real/bayer10.mtx", tu_matrix_dir());
    if (ata_matrix_read(path, &A) == ATA_OK) {
        TU_OK(ata_csr_transpose(A, &T));
        TU_OK(ata_csr_validate(T, "bayer10^T"));
        assert_false(ata_csr_is_symmetric(A));
        TU_OK(ata_csr_transpose(T, &TT));
        assert_same_csr(A, TT);
        ata_csr_free(A); ata_csr_free(T); ata_csr_free(TT);
    } else printf("SKIPPED: %s\n", ata_last_error());
}

static void check_triangles(const ata_csr *A)
{
    ata_csr *L, *U;
    TU_OK(ata_csr_tril(A, &L));
    TU_OK(ata_csr_triu(A, &U));
    TU_OK(ata_csr_validate(L, "tril"));
    TU_OK(ata_csr_validate(U, "triu"));
    int ndiag = 0;
    for (int i = 0; i < A->nrows; i++) {
        for (int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) assert_true(L->col[p] <= i);
        for (int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) assert_true(U->col[p] >= i);
        /* every entry of A is in exactly the triangles it belongs to */
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            const int j = A->col[p], pl = find(L, i, j), pu = find(U, i, j);
            assert_int_equal(pl >= 0, j <= i);
            assert_int_equal(pu >= 0, j >= i);
            if (pl >= 0) assert_true(L->val[pl] == A->val[p]);
            if (pu >= 0) assert_true(U->val[pu] == A->val[p]);
            ndiag += j == i;
        }
    }
    assert_int_equal(L->nnz + U->nnz, A->nnz + ndiag);
    ata_csr_free(L); ata_csr_free(U);
}

static void test_triangles(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:17x9", &A));
    check_triangles(A);
    ata_csr *L;
    TU_OK(ata_csr_tril(A, &L));
    assert_int_equal(L->nnz, (5 * 17 * 9 - 2 * 17 - 2 * 9 + 17 * 9) / 2);
    ata_csr_free(L); ata_csr_free(A);
    double d[] = { 1, 2, 3, 4, 5, 6, 0, 7 };      /* rectangular 2 x 4 */
    A = from_dense(2, 4, d);
    check_triangles(A);
    ata_csr_free(A);
}

static void test_permute(void **state)
{
    (void)state;
    int *perm, *perm2, *inv;
    TU_OK(ata_random_perm(1000, 42, &perm));
    TU_OK(ata_random_perm(1000, 42, &perm2));
    assert_memory_equal(perm, perm2, 1000 * sizeof *perm);     /* deterministic */
    free(perm2);
    TU_OK(ata_random_perm(1000, 43, &perm2));
    assert_memory_not_equal(perm, perm2, 1000 * sizeof *perm);
    free(perm2);
    inv = calloc(1000, sizeof *inv);
    char *hit = calloc(1000, 1);
    int moved = 0;
    for (int i = 0; i < 1000; i++) { assert_false(hit[perm[i]]); hit[perm[i]] = 1; inv[perm[i]] = i; moved += perm[i] != i; }
    assert_true(moved > 950);
    free(hit);
    ata_csr *A, *B, *C;
    TU_OK(ata_gen_from_spec("circuit:1000", &A));
    TU_OK(ata_csr_permute_sym(A, perm, &B));
    TU_OK(ata_csr_validate(B, "PAP'"));
    for (int i = 0; i < A->nrows; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int q = find(B, perm[i], perm[A->col[p]]);
            assert_true(q >= 0 && B->val[q] == A->val[p]);
        }
    assert_int_equal(B->nnz, A->nnz);
    TU_OK(ata_csr_permute_sym(B, inv, &C));
    assert_same_csr(A, C);
    ata_csr_free(C);
    perm[0] = perm[1];                              /* no longer a permutation */
    assert_int_equal(ata_csr_permute_sym(A, perm, &C), ATA_ERR_ARG);
    assert_non_null(strstr(ata_last_error(), "perm["));
    double d[] = { 1, 2, 3, 4, 5, 6 };
    ata_csr *R = from_dense(2, 3, d);
    assert_int_equal(ata_csr_permute_sym(R, inv, &C), ATA_ERR_NOT_SQUARE);
    ata_csr_free(R);
    free(perm); free(inv);
    ata_csr_free(A); ata_csr_free(B);
}

static void test_validate_and_diag(void **state)
{
    (void)state;
    double d[] = { 2, 1, 0, 1, 3, 1, 0, 1, 4 };
    ata_csr *A = from_dense(3, 3, d), *C;
    TU_OK(ata_csr_validate(A, "A"));
    TU_OK(ata_csr_check_diag(A, "A"));
    assert_true(ata_csr_is_symmetric(A));
    TU_OK(ata_csr_copy(A, &C));
    assert_same_csr(A, C);
    C->val[1] = 1.5;                                /* A(0,1) != A(1,0) */
    assert_false(ata_csr_is_symmetric(C));
    C->val[1] = 1;
    C->val[3] = 0;                                  /* zero diagonal in row 1 */
    assert_int_equal(ata_csr_check_diag(C, "C"), ATA_ERR_ZERO_PIVOT);
    assert_non_null(strstr(ata_last_error(), "C: row 1"));
    C->val[3] = NAN;
    assert_int_equal(ata_csr_validate(C, "C"), ATA_ERR_NONFINITE);
    assert_non_null(strstr(ata_last_error(), "row 1, column 1"));
    C->val[3] = 3;
    int t = C->col[0]; C->col[0] = C->col[1]; C->col[1] = t;   /* unsorted row 0 */
    assert_int_equal(ata_csr_validate(C, "C"), ATA_ERR_FORMAT);
    C->col[1] = C->col[0];                                      /* repeated */
    assert_int_equal(ata_csr_validate(C, "C"), ATA_ERR_DUPLICATE);
    C->col[0] = 0; C->col[1] = 7;                               /* out of range */
    assert_int_equal(ata_csr_validate(C, "C"), ATA_ERR_INDEX);
    C->col[1] = 1;
    C->rowptr[2] = 1;                                           /* decreasing rowptr */
    assert_int_equal(ata_csr_validate(C, "C"), ATA_ERR_FORMAT);
    assert_int_equal(ata_csr_validate(NULL, "C"), ATA_ERR_ARG);
    ata_csr_free(C);
    ata_csr_free(A);
    assert_int_equal(ata_csr_alloc(-1, 2, 0, &C), ATA_ERR_ARG);
    assert_null(C);
    double r[] = { 1, 0, 0, 0, 1, 0 };
    A = from_dense(2, 3, r);
    assert_int_equal(ata_csr_check_diag(A, "rect"), ATA_ERR_NOT_SQUARE);
    assert_false(ata_csr_is_symmetric(A));
    ata_csr_free(A);
    ata_csr_free(NULL);                             /* allowed */
}

/* ------------------------------------------------------------------ */
/* Generators                                                          */
/* ------------------------------------------------------------------ */

static double row_sum(const ata_csr *A, int i)
{
    double s = 0;
    for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s += A->val[p];
    return s;
}

static void test_laplace2d(void **state)
{
    (void)state;
    const int sizes[][2] = { { 1, 1 }, { 1, 7 }, { 5, 1 }, { 4, 6 }, { 33, 20 } };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        const int nx = sizes[k][0], ny = sizes[k][1];
        ata_csr *A;
        TU_OK(ata_gen_laplace2d(nx, ny, &A));
        TU_OK(ata_csr_validate(A, "lap2d"));
        TU_OK(ata_csr_check_diag(A, "lap2d"));
        assert_int_equal(A->nrows, nx * ny);
        assert_int_equal(A->nnz, 5 * nx * ny - 2 * nx - 2 * ny);
        assert_true(ata_csr_is_symmetric(A));
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const int i = x + nx * y, missing = (x == 0) + (x == nx - 1) + (y == 0) + (y == ny - 1);
                assert_true(row_sum(A, i) == missing);        /* 4 - (4 - missing) neighbours */
                assert_true(A->val[find(A, i, i)] == 4);
                if (x + 1 < nx) assert_true(A->val[find(A, i, i + 1)] == -1);
                if (y + 1 < ny) assert_true(A->val[find(A, i, i + nx)] == -1);
            }
        ata_csr_free(A);
    }
    ata_csr *A = NULL;
    assert_int_equal(ata_gen_laplace2d(0, 5, &A), ATA_ERR_ARG);
    assert_int_equal(ata_gen_laplace2d(50000, 50000, &A), ATA_ERR_ARG);   /* n > INT_MAX */
    assert_non_null(strstr(ata_last_error(), "32-bit"));
    assert_null(A);
}

static void check_lap3d(int nx, int ny, int nz, int points)
{
    ata_csr *A;
    TU_OK(ata_gen_laplace3d(nx, ny, nz, points, &A));
    TU_OK(ata_csr_validate(A, "lap3d"));
    const int n = nx * ny * nz;
    assert_int_equal(A->nrows, n);
    const long want = points == 7 ? 7L * n - 2L * (ny * nz + nx * nz + nx * ny)
                                  : (3L * nx - 2) * (3L * ny - 2) * (3L * nz - 2);
    assert_int_equal(A->nnz, want);
    assert_true(ata_csr_is_symmetric(A));
    for (int i = 0; i < n; i++) {
        const int len = A->rowptr[i + 1] - A->rowptr[i];
        assert_true(A->val[find(A, i, i)] == points - 1);
        assert_true(row_sum(A, i) == points - len);   /* diag - (len - 1) neighbours */
    }
    /* an interior node has all its neighbours */
    if (nx > 2 && ny > 2 && nz > 2) {
        const int c = 1 + nx * (1 + ny * 1);
        assert_int_equal(A->rowptr[c + 1] - A->rowptr[c], points);
        assert_true(row_sum(A, c) == 0);
        assert_true(find(A, c, c + nx * ny) >= 0);
        assert_int_equal(find(A, c, c + nx * ny + 1) >= 0, points == 27);
    }
    ata_csr_free(A);
}

static void test_laplace3d(void **state)
{
    (void)state;
    check_lap3d(1, 1, 1, 7);
    check_lap3d(3, 4, 5, 7);
    check_lap3d(6, 5, 4, 27);
    check_lap3d(1, 2, 7, 27);
    ata_csr *A = NULL;
    assert_int_equal(ata_gen_laplace3d(4, 4, 4, 9, &A), ATA_ERR_ARG);
    assert_int_equal(ata_gen_laplace3d(2000, 2000, 2000, 7, &A), ATA_ERR_ARG);
    assert_int_equal(ata_gen_laplace3d(1000, 1000, 100, 27, &A), ATA_ERR_ARG);   /* nnz overflows */
    assert_null(A);
    /* several million unknowns, built directly */
    clock_t t0 = clock();
    TU_OK(ata_gen_laplace3d(130, 130, 130, 7, &A));
    const double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("  lap3d 130^3: n = %d, nnz = %d built in %.2f s\n", A->nrows, A->nnz, s);
    assert_int_equal(A->nnz, 7 * 2197000 - 6 * 16900);
    assert_int_equal(A->rowptr[A->nrows], A->nnz);
    ata_csr_free(A);
}

/* Levels of the lower-triangle DAG (1 + deepest predecessor) and their
 * widths, as the runtime's analysis would compute them. */
static int dag_levels(const ata_csr *A, int **width_out)
{
    int *lev = calloc(A->nrows, sizeof *lev), L = 0;
    for (int i = 0; i < A->nrows; i++) {
        int l = 0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1] && A->col[p] < i; p++)
            if (lev[A->col[p]] > l) l = lev[A->col[p]];
        lev[i] = l + 1;
        if (l + 1 > L) L = l + 1;
    }
    int *w = calloc(L + 2, sizeof *w);
    for (int i = 0; i < A->nrows; i++) w[lev[i]]++;
    free(lev);
    *width_out = w;
    return L;
}

static void test_circuit(void **state)
{
    (void)state;
    ata_csr *A, *B;
    const int n = 100000;
    TU_OK(ata_gen_circuit(n, 0, &A));
    TU_OK(ata_csr_validate(A, "circuit"));
    TU_OK(ata_csr_check_diag(A, "circuit"));
    assert_true(ata_csr_is_symmetric(A));
    assert_true(A->nnz >= 4 * n && A->nnz <= 6 * n);
    int maxlen = 0;
    for (int i = 0; i < n; i++) {
        double diag = 0, off = 0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            if (A->col[p] == i) { diag = A->val[p]; continue; }
            assert_true(A->val[p] < 0);
            off -= A->val[p];
        }
        assert_true(diag > off);                       /* strictly dominant */
        if (A->rowptr[i + 1] - A->rowptr[i] > maxlen) maxlen = A->rowptr[i + 1] - A->rowptr[i];
    }
    assert_true(maxlen > 100 * (A->nnz / n));         /* hubs */
    /* L-shape: >= 100 levels, most rows in the first few, a thin tail */
    int *w, L = dag_levels(A, &w), wide = 0;
    for (int l = 1; l <= L; l++) wide += w[l] >= 512;
    printf("  circuit:%d nnz %d, %d levels, widths %d %d %d %d %d ... %d %d %d, max row %d\n", n, A->nnz, L,
           w[1], w[2], w[3], w[4], w[5], w[L - 2], w[L - 1], w[L], maxlen);
    assert_true(L >= 100);
    assert_true(w[1] + w[2] + w[3] + w[4] >= 0.9 * n);
    assert_true(w[L] <= 2 && w[L / 2] < w[5]);
    assert_true(wide < L / 2);                         /* not "wide" */
    free(w);
    /* a seed names one matrix */
    TU_OK(ata_gen_circuit(n, 0, &B));
    assert_same_csr(A, B);
    ata_csr_free(B);
    TU_OK(ata_gen_circuit(n, 1, &B));
    assert_true(B->nnz != A->nnz || memcmp(B->col, A->col, A->nnz * sizeof *A->col));
    ata_csr_free(B);
    ata_csr_free(A);
    /* small sizes still L-shaped (runtime tests use 5000..50000) */
    TU_OK(ata_gen_circuit(5000, 3, &A));
    L = dag_levels(A, &w);
    assert_true(L >= 100);
    free(w);
    ata_csr_free(A);
    for (int k = 1; k <= 12; k++) {
        TU_OK(ata_gen_circuit(k, 7, &A));
        TU_OK(ata_csr_validate(A, "tiny circuit"));
        TU_OK(ata_csr_check_diag(A, "tiny circuit"));
        assert_true(ata_csr_is_symmetric(A));
        ata_csr_free(A);
    }
    assert_int_equal(ata_gen_circuit(0, 1, &A), ATA_ERR_ARG);
}

static void test_spec_good(void **state)
{
    (void)state;
    static const struct { const char *spec; int n, nnz; } good[] = {
        { "lap2d:10", 100, 5 * 100 - 40 },
        { "lap2d:10x20", 200, 5 * 200 - 60 },
        { "lap3d:5", 125, 7 * 125 - 6 * 25 },
        { "lap3d:4x5x6", 120, 7 * 120 - 2 * (30 + 24 + 20) },
        { "lap3d27:3", 27, 7 * 7 * 7 },
        { "lap3d27:2x3x4", 24, 4 * 7 * 10 },
        { "lap2d:10,perm=3", 100, 5 * 100 - 40 },
        { "lap3d:5,perm=0", 125, 7 * 125 - 6 * 25 },
    };
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(good[k].spec, &A));
        assert_int_equal(A->nrows, good[k].n);
        assert_int_equal(A->nnz, good[k].nnz);
        assert_true(ata_csr_is_symmetric(A));
        TU_OK(ata_csr_check_diag(A, good[k].spec));
        ata_csr_free(A);
    }
    ata_csr *A, *B, *C;
    TU_OK(ata_gen_from_spec("lap2d:12", &A));
    TU_OK(ata_gen_from_spec("lap2d:12,perm=5", &B));
    assert_memory_not_equal(A->col, B->col, A->nnz * sizeof *A->col);
    int *perm;
    TU_OK(ata_random_perm(144, 5, &perm));
    TU_OK(ata_csr_permute_sym(A, perm, &C));
    assert_same_csr(B, C);                              /* perm=SEED is ata_random_perm(SEED) */
    free(perm);
    ata_csr_free(A); ata_csr_free(B); ata_csr_free(C);
    TU_OK(ata_gen_from_spec("circuit:2000", &A));
    TU_OK(ata_gen_circuit(2000, 0, &B));
    assert_same_csr(A, B);
    ata_csr_free(B);
    TU_OK(ata_gen_from_spec("circuit:2000,seed=4,perm=1", &B));
    assert_int_equal(B->nrows, 2000);
    assert_true(ata_csr_is_symmetric(B));
    TU_OK(ata_gen_circuit(2000, 4, &C));
    assert_int_equal(B->nnz, C->nnz);
    ata_csr_free(A); ata_csr_free(B); ata_csr_free(C);
}

static void test_spec_bad(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "lap2d", "lap2d:", "lap2d:0", "lap2d:-5", "lap2d:+5", "lap2d: 5", "lap2d:10x", "lap2d:x10",
        "lap2d:1x2x3", "lap3d:4x5", "lap3d27:2x2", "lap3d:1x2x3x4", "foo:3", ":3", "circuit:10x10",
        "lap2d:10,perm", "lap2d:10,perm=", "lap2d:10,perm=x", "lap2d:10,perm=-1", "lap2d:10,seed=3",
        "lap2d:10,bogus=1", "lap2d:10,perm=1,perm=2", "lap2d:10,", "lap2d:99999999999", "lap2d:5.5",
        "circuit:0", "LAP2D:10", "averyveryverylongkindname:4",
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        ata_csr *A = (ata_csr *)&A;
        ata_status st = ata_gen_from_spec(bad[k], &A);
        if (st != ATA_ERR_ARG) fail_msg("spec '%s': %s, expected invalid argument", bad[k], ata_status_string(st));
        assert_null(A);
        assert_true(strlen(ata_last_error()) > 10);
        if (*bad[k] && strncmp(bad[k], "circuit:0", 9) && !strstr(ata_last_error(), bad[k]))
            fail_msg("spec '%s': message '%s' does not quote it", bad[k], ata_last_error());
    }
    assert_int_equal(ata_gen_from_spec(NULL, NULL), ATA_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_real_files),
        cmocka_unit_test(test_missing_diag_named),
        cmocka_unit_test(test_read_kinds),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_mtx_round_trip),
        cmocka_unit_test(test_gz_round_trip),
        cmocka_unit_test(test_tar_round_trip),
        cmocka_unit_test(test_rb_round_trip),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_triangles),
        cmocka_unit_test(test_permute),
        cmocka_unit_test(test_validate_and_diag),
        cmocka_unit_test(test_laplace2d),
        cmocka_unit_test(test_laplace3d),
        cmocka_unit_test(test_circuit),
        cmocka_unit_test(test_spec_good),
        cmocka_unit_test(test_spec_bad),
    };
    return cmocka_run_group_tests_name("matrices", tests, tu_tmp_make, tu_tmp_remove);
}
