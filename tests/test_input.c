/* test_input.c - hostile and careless input: files whose headers lie
 * (bounded time and memory, a clear message), decompression limits, no
 * temp file left by a killed read, summed duplicates, COO assembly, and
 * caller-filled CSR at the public entries. Every bad input is generated
 * here, in a private temp folder. */
#include "RBio.h"               /* first: it sets the large-file macros */
#include <limits.h>
#include <math.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ilu0_row.h"
#include "reorder.h"
#include "test_util.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long max_rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* Read `text` written as `name`: the status; *A NULL on failure. */
static ata_status read_text(const char *name, const char *text, ata_csr **A)
{
    char path[4200];
    tu_tmp_path(path, sizeof path, name);
    tu_write_text(path, text);
    *A = NULL;
    return ata_matrix_read(path, A);
}

static void expect_msg(const char *what, const char *says)
{
    printf("  %s\n", ata_last_error());
    if (!strstr(ata_last_error(), what) || !strstr(ata_last_error(), says))
        fail_msg("message '%s' lacks '%s' or '%s'", ata_last_error(), what, says);
}

/* ------------------------------------------------------------------ */
/* Headers that lie: fail fast, allocate nothing proportional          */
/* ------------------------------------------------------------------ */

static void test_mm_lying_headers(void **state)
{
    (void)state;
    static const struct { const char *name, *text; ata_status st; const char *says; } cases[] = {
        /* 60 bytes asking for 400,000,000 rows (once 9.4 GB and 105 s) */
        { "rows400m.mtx", "%%MatrixMarket matrix coordinate real general\n400000000 400000000 1\n1 1 1\n",
          ATA_ERR_UNSUPPORTED, "line 2: 400000000 x 400000000 with 1 entries: at least 399999999 rows would be "
          "empty, so the matrix has no full diagonal" },
        { "intmax.mtx", "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 1\n1 1 1\n",
          ATA_ERR_UNSUPPORTED, "rows would be empty" },
        { "wide.mtx", "%%MatrixMarket matrix coordinate pattern general\n1 2147483647 2\n1 1\n1 5\n",
          ATA_ERR_UNSUPPORTED, "columns would be empty" },
        { "symrows.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3000000 3000000 2\n2 1 1\n3 1 1\n",
          ATA_ERR_UNSUPPORTED, "at least 2999996 rows" },
        /* entries claimed, not present: the arrays grow with what is read */
        { "nnzmax.mtx", "%%MatrixMarket matrix coordinate real general\n50000 50000 2147483647\n1 1 1\n",
          ATA_ERR_FORMAT, "end of file after 1 of the 2147483647 declared entries" },
        { "nnz400m.mtx", "%%MatrixMarket matrix coordinate real general\n20000 20000 400000000\n1 1 1\n2 2 2\n",
          ATA_ERR_FORMAT, "end of file after 2 of the 400000000 declared entries" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        ata_csr *A;
        const long rss0 = max_rss_kb();
        const double t0 = now();
        ata_status st = read_text(cases[k].name, cases[k].text, &A);
        const double dt = now() - t0;
        const long grew_mb = (max_rss_kb() - rss0) / 1024;
        assert_null(A);
        assert_int_equal(st, cases[k].st);
        expect_msg(cases[k].name, cases[k].says);
        if (dt > 2.0 || grew_mb > 64)
            fail_msg("%s: took %.2f s and %ld MB more memory (expected well under 2 s and 64 MB)",
                     cases[k].name, dt, grew_mb);
    }
    /* just inside the bound: a 1,000,000-row file with 1 entry reads
     * (4 MB of row pointers), and the diagonal check says what is wrong */
    ata_csr *A;
    TU_OK(read_text("thin.mtx", "%%MatrixMarket matrix coordinate real general\n1000000 1000000 1\n7 7 2\n", &A));
    assert_int_equal(A->nrows, 1000000);
    assert_int_equal(A->nnz, 1);
    assert_int_equal(ata_csr_check_diag(A, "thin"), ATA_ERR_MISSING_DIAG);
    assert_non_null(strstr(ata_last_error(), "thin: row 0 "));
    assert_non_null(strstr(ata_last_error(), "fewer entries than rows"));
    ata_csr_free(A);
    /* an indented comment before the size line is a comment */
    TU_OK(read_text("indent.mtx", "%%MatrixMarket matrix coordinate real general\n   % indented\n\t%x\n2 2 2\n"
                    "  % between\n1 1 3\n2 2 4\n", &A));
    assert_int_equal(A->nnz, 2);
    assert_true(A->val[0] == 3 && A->val[1] == 4);
    ata_csr_free(A);
}

/* A Rutherford-Boeing file whose line 2 and 3 are given, the rest a tiny
 * valid body (3 x 3, 4 entries, pattern of (40I2)). */
static void rb_text(char *buf, size_t len, long long ptrcrd, const char *type, long long m, long long n,
                    long long nz, const char *body)
{
    snprintf(buf, len,
             "%-72s%-8s\n%14lld%14lld%14lld%14lld\n%-3s%11s%14lld%14lld%14lld%14d\n%-16s%-16s%-20s\n%s",
             "lying header", "lie", 3 + ptrcrd, ptrcrd, 1LL, 1LL, type, "", m, n, nz, 0,
             "(40I2)", "(40I2)", "(40I2)", body);
}

static void test_rb_lying_headers(void **state)
{
    (void)state;
    char text[4096];
    const char *body = " 1 3 4 5\n 1 3 2 3\n 4 1 5 6\n";
    ata_csr *A;
    /* the body is honest: it reads */
    rb_text(text, sizeof text, 1, "iua", 3, 3, 4, body);
    TU_OK(read_text("ok.rua", text, &A));
    assert_int_equal(A->nnz, 4);
    ata_csr_free(A);
    static const struct { const char *name, *type; long long m, n, nz; ata_status st; const char *says; } cases[] = {
        { "nnz.rua", "rua", 3, 3, 2000000000, ATA_ERR_FORMAT, "cannot hold their 4000000004 numbers" },
        { "cols.rua", "rua", 3, 2000000000, 4, ATA_ERR_FORMAT, "declares 2000000000 columns" },
        { "rows.rua", "rua", 2000000000, 3, 4, ATA_ERR_UNSUPPORTED, "at least 1999999996 rows would be empty" },
        { "symrows.rsa", "rsa", 1500000, 1500000, 4, ATA_ERR_FORMAT, "declares 1500000 columns" },
        { "big.rua", "rua", 3, 3, 5000000000LL, ATA_ERR_UNSUPPORTED, "exceeds 32-bit indices" },
        { "zero.rua", "rua", 3, 3, 0, ATA_ERR_EMPTY, "empty matrix" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        rb_text(text, sizeof text, 1, cases[k].type, cases[k].m, cases[k].n, cases[k].nz, body);
        const long rss0 = max_rss_kb();
        const double t0 = now();
        ata_status st = read_text(cases[k].name, text, &A);
        const double dt = now() - t0;
        const long grew_mb = (max_rss_kb() - rss0) / 1024;
        assert_null(A);
        assert_int_equal(st, cases[k].st);
        expect_msg(cases[k].name, cases[k].says);
        if (dt > 2.0 || grew_mb > 64) fail_msg("%s: %.2f s, %ld MB", cases[k].name, dt, grew_mb);
    }
    /* a card count near LLONG_MAX on line 2 and a broken body: RBio fails,
     * and naming where must not overflow (rb_where once did, under UBSan) */
    rb_text(text, sizeof text, LLONG_MAX - 3, "iua", 3, 3, 4, " 1 3 x 5\n 1 3 2 3\n 4 1 5 6\n");
    assert_int_not_equal(read_text("cards.rua", text, &A), ATA_OK);
    expect_msg("cards.rua", "Rutherford-Boeing");
}

/* ------------------------------------------------------------------ */
/* Decompressed size and temp files                                    */
/* ------------------------------------------------------------------ */

static void write_gz(const ata_csr *A, const char *stem, char *gz, size_t len)
{
    char mtx[4200];
    snprintf(mtx, sizeof mtx, "%s/%s.mtx", tu_tmp_dir(), stem);
    snprintf(gz, len, "%s/%s.mtx.gz", tu_tmp_dir(), stem);
    TU_OK(ata_matrix_write_mtx(mtx, A));
    tu_run("gzip -c '%s' > '%s'", mtx, gz);
}

static void test_input_limit(void **state)
{
    (void)state;
    ata_csr *A, *B;
    TU_OK(ata_gen_from_spec("lap2d:40", &A));
    char gz[4200], dir[4200], tgz[4200], p[4400];
    write_gz(A, "lim", gz, sizeof gz);
    /* the environment variable */
    setenv("ATA_MAX_INPUT_BYTES", "1000", 1);
    assert_int_equal(ata_matrix_read(gz, &B), ATA_ERR_UNSUPPORTED);
    expect_msg("lim.mtx.gz", "exceeds the input limit of 1000 bytes (set by ATA_MAX_INPUT_BYTES)");
    setenv("ATA_MAX_INPUT_BYTES", "64M", 1);
    TU_OK(ata_matrix_read(gz, &B));
    assert_int_equal(B->nnz, A->nnz);
    ata_csr_free(B);
    setenv("ATA_MAX_INPUT_BYTES", "12Q", 1);
    assert_int_equal(ata_matrix_read(gz, &B), ATA_ERR_ARG);
    expect_msg("ATA_MAX_INPUT_BYTES='12Q'", "positive byte count");
    unsetenv("ATA_MAX_INPUT_BYTES");
    /* the option; an archive member is refused by its declared size,
     * before it is inflated */
    ata_read_options o = ata_read_defaults();
    o.max_input_bytes = 2000;
    assert_int_equal(ata_matrix_read_opts(gz, &o, &B), ATA_ERR_UNSUPPORTED);
    expect_msg("lim.mtx.gz", "input limit of 2000 bytes (set by ata_read_options.max_input_bytes)");
    tu_tmp_path(dir, sizeof dir, "arc/lim");
    tu_run("mkdir -p '%s'%s", dir, "");
    snprintf(p, sizeof p, "%s/lim.mtx", dir);
    TU_OK(ata_matrix_write_mtx(p, A));
    tu_tmp_path(tgz, sizeof tgz, "lim.tar.gz");
    tu_tmp_path(dir, sizeof dir, "arc");
    tu_run("tar czf '%s' -C '%s' lim", tgz, dir);
    assert_int_equal(ata_matrix_read_opts(tgz, &o, &B), ATA_ERR_UNSUPPORTED);
    expect_msg("lim.tar.gz", "input limit of 2000 bytes");
    /* the default: a quarter of physical memory, far above this file */
    TU_OK(ata_matrix_read(tgz, &B));
    assert_int_equal(B->nnz, A->nnz);
    ata_csr_free(B);
    ata_csr_free(A);
}

static int dir_entries(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A Rutherford-Boeing member of an archive is read by RBio from a file:
 * killed mid-read, the process must leave nothing in TMPDIR. */
static void test_rb_temp_file(void **state)
{
    (void)state;
    ata_csr *A, *At;
    TU_OK(ata_gen_from_spec("lap2d:300", &A));
    TU_OK(ata_csr_transpose(A, &At));
    char dir[4200], path[4400], tgz[4200], tmpdir[4200];
    tu_tmp_path(dir, sizeof dir, "rbarc/big");
    tu_run("mkdir -p '%s'%s", dir, "");
    snprintf(path, sizeof path, "%s/big.rua", dir);
    char mtype[4];
    assert_int_equal(RBwrite_i(path, "ata", "big", A->nrows, A->ncols, At->rowptr, At->col, At->val, NULL, NULL,
                               NULL, 0, mtype), 0);
    tu_tmp_path(tgz, sizeof tgz, "big.tar.gz");
    tu_tmp_path(dir, sizeof dir, "rbarc");
    tu_run("tar czf '%s' -C '%s' big", tgz, dir);
    tu_tmp_path(tmpdir, sizeof tmpdir, "private-tmp");
    tu_run("mkdir -p '%s'%s", tmpdir, "");
    setenv("TMPDIR", tmpdir, 1);
    ata_csr *B;
    TU_OK(ata_matrix_read(tgz, &B));            /* a whole read, for the time it takes */
    assert_int_equal(B->nnz, A->nnz);
    ata_csr_free(B);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (;;) {
            ata_csr *C;
            if (ata_matrix_read(tgz, &C) != ATA_OK) _exit(3);
            ata_csr_free(C);
        }
    }
    struct timespec nap = { 0, 150 * 1000 * 1000 };
    for (int k = 0; k < 3; k++) {
        nanosleep(&nap, NULL);
        assert_int_equal(dir_entries(tmpdir), 0);   /* nothing named, even mid-read */
    }
    kill(pid, SIGKILL);
    int wst;
    waitpid(pid, &wst, 0);
    assert_true(WIFSIGNALED(wst));
    assert_int_equal(dir_entries(tmpdir), 0);
    unsetenv("TMPDIR");
    ata_csr_free(A); ata_csr_free(At);
}

/* ------------------------------------------------------------------ */
/* Duplicates: rejected by default, summed on request                  */
/* ------------------------------------------------------------------ */

static void test_sum_duplicates(void **state)
{
    (void)state;
    char path[4200];
    tu_tmp_path(path, sizeof path, "dups.mtx");
    tu_write_text(path, "%%MatrixMarket matrix coordinate real general\n3 3 6\n1 1 1\n2 2 2\n1 1 0.5\n3 1 4\n"
               "3 3 5\n1 1 0.25\n");
    ata_csr *A;
    assert_int_equal(ata_matrix_read(path, &A), ATA_ERR_DUPLICATE);
    expect_msg("dups.mtx", "duplicate entry (1,1) (1-based): entries 1 and 3");
    ata_read_options o = ata_read_defaults();
    o.sum_duplicates = 1;
    TU_OK(ata_matrix_read_opts(path, &o, &A));
    assert_int_equal(A->nnz, 4);
    const int rp[] = { 0, 1, 2, 4 }, cj[] = { 0, 1, 0, 2 };
    const double vx[] = { 1.75, 2, 4, 5 };
    assert_memory_equal(A->rowptr, rp, sizeof rp);
    assert_memory_equal(A->col, cj, sizeof cj);
    for (int p = 0; p < 4; p++) assert_true(A->val[p] == vx[p]);
    ata_csr_free(A);
    /* symmetric: each stored entry and its mirror; repeats add up */
    tu_tmp_path(path, sizeof path, "symdups.mtx");
    tu_write_text(path, "%%MatrixMarket matrix coordinate real symmetric\n2 2 4\n1 1 2\n2 1 1\n2 2 3\n2 1 0.5\n");
    TU_OK(ata_matrix_read_opts(path, &o, &A));
    assert_int_equal(A->nnz, 4);
    assert_true(A->val[0] == 2 && A->val[1] == 1.5 && A->val[2] == 1.5 && A->val[3] == 3);
    ata_csr_free(A);
    /* finite summands, infinite sum */
    tu_tmp_path(path, sizeof path, "infsum.mtx");
    tu_write_text(path, "%%MatrixMarket matrix coordinate real general\n1 1 2\n1 1 1e308\n1 1 1e308\n");
    assert_int_equal(ata_matrix_read_opts(path, &o, &A), ATA_ERR_NONFINITE);
    expect_msg("infsum.mtx", "duplicates of (1,1) (1-based) sum to a non-finite value");
    /* NULL options are the defaults */
    tu_tmp_path(path, sizeof path, "dups.mtx");
    assert_int_equal(ata_matrix_read_opts(path, NULL, &A), ATA_ERR_DUPLICATE);
}

static void test_csr_from_coo(void **state)
{
    (void)state;
    const int row[] = { 2, 0, 1, 0, 2, 0 }, col[] = { 1, 2, 1, 0, 1, 2 };
    const double val[] = { 1, 2, 3, 4, 5, 6 };
    ata_csr *A;
    assert_int_equal(ata_csr_from_coo(3, 3, 6, row, col, val, 0, &A), ATA_ERR_DUPLICATE);
    expect_msg("entries 1 and 5", "(row 0, column 2)");
    assert_null(A);
    TU_OK(ata_csr_from_coo(3, 3, 6, row, col, val, 1, &A));
    TU_OK(ata_csr_validate(A, "coo"));
    const int rp[] = { 0, 2, 3, 4 }, cj[] = { 0, 2, 1, 1 };
    const double vx[] = { 4, 8, 3, 6 };
    assert_int_equal(A->nnz, 4);
    assert_memory_equal(A->rowptr, rp, sizeof rp);
    assert_memory_equal(A->col, cj, sizeof cj);
    for (int p = 0; p < 4; p++) assert_true(A->val[p] == vx[p]);
    ata_csr_free(A);
    /* without duplicates: the same as a hand-made CSR; empty rows kept */
    const int r2[] = { 3, 0, 3 }, c2[] = { 0, 4, 2 };
    const double v2[] = { -1, 2, 0 };
    TU_OK(ata_csr_from_coo(5, 5, 3, r2, c2, v2, 0, &A));
    const int rp2[] = { 0, 1, 1, 1, 3, 3 }, cj2[] = { 4, 0, 2 };
    assert_memory_equal(A->rowptr, rp2, sizeof rp2);
    assert_memory_equal(A->col, cj2, sizeof cj2);
    assert_true(A->val[0] == 2 && A->val[1] == -1 && A->val[2] == 0);
    ata_csr_free(A);
    TU_OK(ata_csr_from_coo(4, 2, 0, NULL, NULL, NULL, 0, &A));
    assert_int_equal(A->nnz, 0);
    assert_int_equal(A->rowptr[4], 0);
    ata_csr_free(A);
    /* every entry checked before anything is sized by it */
    const int bad_r[] = { 0, -1 }, bad_c[] = { 0, 7 }, ok_r[] = { 0, 1 }, ok_c[] = { 0, 1 };
    const double ok_v[] = { 1, 2 }, nan_v[] = { 1, NAN }, big_v[] = { 1e308, 1e308 };
    assert_int_equal(ata_csr_from_coo(2, 2, 2, bad_r, ok_c, ok_v, 0, &A), ATA_ERR_INDEX);
    expect_msg("entry 1", "row -1 out of range 0..1");
    assert_int_equal(ata_csr_from_coo(2, 2, 2, ok_r, bad_c, ok_v, 0, &A), ATA_ERR_INDEX);
    expect_msg("entry 1", "column 7 out of range 0..1");
    assert_int_equal(ata_csr_from_coo(2, 2, 2, ok_r, ok_c, nan_v, 0, &A), ATA_ERR_NONFINITE);
    expect_msg("entry 1", "not finite");
    const int same_r[] = { 1, 1 }, same_c[] = { 0, 0 };
    assert_int_equal(ata_csr_from_coo(2, 2, 2, same_r, same_c, big_v, 1, &A), ATA_ERR_NONFINITE);
    expect_msg("(row 1, column 0)", "sum to a non-finite value");
    assert_int_equal(ata_csr_from_coo(-1, 2, 0, NULL, NULL, NULL, 0, &A), ATA_ERR_ARG);
    assert_int_equal(ata_csr_from_coo(2, 2, 1, NULL, ok_c, ok_v, 0, &A), ATA_ERR_ARG);
    assert_int_equal(ata_csr_from_coo(2, 2, 1, row, ok_c, ok_v, 0, NULL), ATA_ERR_ARG);
}

/* ------------------------------------------------------------------ */
/* Caller-filled CSR at the public entries                             */
/* ------------------------------------------------------------------ */

/* A valid 4 x 4 matrix, full pattern of a tridiagonal plus (3,0); the
 * cases below each break one rule. */
typedef struct { int rowptr[5], col[11]; double val[11]; ata_csr A; } bad_csr;

static void bad_csr_init(bad_csr *b)
{
    const int rp[] = { 0, 2, 5, 8, 11 }, cj[] = { 0, 1, 0, 1, 2, 1, 2, 3, 0, 2, 3 };
    memcpy(b->rowptr, rp, sizeof rp);
    memcpy(b->col, cj, sizeof cj);
    for (int p = 0; p < 11; p++) b->val[p] = cj[p] == (p < 2 ? 0 : p < 5 ? 1 : p < 8 ? 2 : 3) ? 4 : -1;
    b->A = (ata_csr){ .nrows = 4, .ncols = 4, .nnz = 11, .rowptr = b->rowptr, .col = b->col, .val = b->val };
}

static void test_entry_validation(void **state)
{
    (void)state;
    ata_context_options co = ata_context_defaults();
    co.backend = ATA_BACKEND_CPU;
    co.threads = 2;
    ata_context *ctx;
    TU_OK(ata_context_create(&co, &ctx));
    static const struct { const char *what; int at, v; ata_status st; const char *says; } cases[] = {
        /* at >= 0: col[at] = v; at = -1 - i: rowptr[i] = v; at = -100: nnz = v */
        { "negative column", 8, -5, ATA_ERR_INDEX, "row 3: column -5 out of range 0..3" },
        { "column >= n", 7, 4, ATA_ERR_INDEX, "row 2: column 4 out of range 0..3" },
        { "huge column", 4, 1 << 30, ATA_ERR_INDEX, "row 1: column 1073741824 out of range" },
        { "unsorted", 9, 0, ATA_ERR_DUPLICATE, "row 3: column 0 after column 0" },
        { "descending", 6, 0, ATA_ERR_FORMAT, "row 2: column 0 after column 1" },
        { "rowptr decreasing", -3, 1, ATA_ERR_FORMAT, "row 1: rowptr decreases (2 -> 1)" },
        { "rowptr[0]", -1, 1, ATA_ERR_FORMAT, "rowptr[0] = 1" },
        { "rowptr past nnz", -5, 12, ATA_ERR_FORMAT, "rowptr[4] = 12 but nnz = 11" },
        { "nnz", -100, 10, ATA_ERR_FORMAT, "rowptr[4] = 11 but nnz = 10" },
        { "negative nnz", -100, -1, ATA_ERR_FORMAT, "negative size" },
    };
    ata_plan_options po = ata_plan_defaults();
    po.S = 2;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        bad_csr b;
        bad_csr_init(&b);
        if (cases[k].at >= 0) b.col[cases[k].at] = cases[k].v;
        else if (cases[k].at == -100) b.A.nnz = cases[k].v;
        else b.rowptr[-1 - cases[k].at] = cases[k].v;
        for (int uplo = 0; uplo < 2; uplo++)
            for (int trav = 0; trav < 2; trav++)
                for (int diag = 0; diag < 2; diag++) {
                    ata_plan *plan = NULL;
                    po.uplo = (ata_uplo)uplo;
                    po.traversal = (ata_traversal)trav;
                    po.diag = (ata_diag)diag;
                    assert_int_equal(ata_sptrsv_plan_create(ctx, &b.A, &po, &plan), cases[k].st);
                    assert_null(plan);
                    if (!strstr(ata_last_error(), cases[k].says) || !strstr(ata_last_error(), "sptrsv plan"))
                        fail_msg("%s: '%s' lacks '%s'", cases[k].what, ata_last_error(), cases[k].says);
                }
        ata_csr *LU = NULL;
        assert_int_equal(ata_spilu0(ctx, &b.A, NULL, &LU), cases[k].st);
        assert_null(LU);
        expect_msg("spilu0", cases[k].says);
        assert_int_equal(ata_spilu0_inplace(ctx, &b.A, NULL), cases[k].st);
        assert_int_equal(ata_ref_ilu0(&b.A), cases[k].st);
        expect_msg("ilu0", cases[k].says);
        /* PCG relabels by maps that rely on sorted rows: checked at setup */
        for (int rt = 0; rt < 2; rt++) {
            ata_pcg_solver *S = NULL;
            assert_int_equal(ata_pcg_setup(rt ? ctx : NULL, &b.A, NULL, &S), cases[k].st);
            assert_null(S);
            expect_msg("pcg", cases[k].says);
        }
    }
    /* the untouched matrix goes through all of them */
    bad_csr b;
    bad_csr_init(&b);
    ata_plan *plan;
    po = ata_plan_defaults();
    TU_OK(ata_sptrsv_plan_create(ctx, &b.A, &po, &plan));
    ata_plan_destroy(plan);
    ata_csr *LU;
    TU_OK(ata_spilu0(ctx, &b.A, NULL, &LU));
    ata_pcg_solver *S;
    TU_OK(ata_pcg_setup(ctx, &b.A, NULL, &S));
    ata_pcg_destroy(S);
    TU_OK(ata_ref_ilu0(&b.A));
    assert_memory_equal(LU->val, b.val, sizeof b.val);
    ata_csr_free(LU);
    ata_context_destroy(ctx);
}

/* ------------------------------------------------------------------ */
/* ILU0 with dense rows: linear, and bitwise what the plain scan gives */
/* ------------------------------------------------------------------ */

/* The IKJ row update as it was before rows were searched by bisection:
 * scan all of row k's upper part for every l_ik. The oracle. */
static void ilu0_scan_oracle(ata_csr *A)
{
    const int n = A->nrows, *Ap = A->rowptr, *Aj = A->col;
    double *Ax = A->val;
    int *diag = malloc((size_t)n * sizeof *diag), *work = malloc((size_t)n * sizeof *work);
    for (int i = 0; i < n; i++) {
        work[i] = -1;
        for (int p = Ap[i]; p < Ap[i + 1]; p++)
            if (Aj[p] == i) diag[i] = p;
    }
    for (int i = 0; i < n; i++) {
        for (int p = Ap[i]; p < Ap[i + 1]; p++) work[Aj[p]] = p;
        for (int p = Ap[i]; p < diag[i]; p++) {
            const int k = Aj[p];
            const double lik = Ax[p] / Ax[diag[k]];
            Ax[p] = lik;
            for (int q = diag[k] + 1; q < Ap[k + 1]; q++)
                if (work[Aj[q]] >= 0) Ax[work[Aj[q]]] -= lik * Ax[q];
        }
        for (int p = Ap[i]; p < Ap[i + 1]; p++) work[Aj[p]] = -1;
    }
    free(diag);
    free(work);
}

/* n x n: diagonal, `dense` full rows and columns at the given indices, and
 * a scatter of random entries (deterministic). */
static ata_csr *dense_rows_matrix(int n, const int *dense, int ndense, int scatter, uint64_t seed)
{
    char *on = calloc((size_t)n * n, 1);
    for (int i = 0; i < n; i++) on[(size_t)i * n + i] = 1;
    for (int d = 0; d < ndense; d++)
        for (int j = 0; j < n; j++) on[(size_t)dense[d] * n + j] = on[(size_t)j * n + dense[d]] = 1;
    uint64_t x = seed;
    for (int k = 0; k < scatter; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const int i = (int)((x >> 33) % (uint64_t)n), j = (int)((x >> 13) % (uint64_t)n);
        on[(size_t)i * n + j] = on[(size_t)j * n + i] = 1;
    }
    int nnz = 0;
    for (size_t k = 0; k < (size_t)n * n; k++) nnz += on[k];
    ata_csr *A;
    TU_OK(ata_csr_alloc(n, n, nnz, &A));
    int q = 0;
    for (int i = 0; i < n; i++) {
        A->rowptr[i] = q;
        for (int j = 0; j < n; j++)
            if (on[(size_t)i * n + j]) {
                A->col[q] = j;
                A->val[q++] = i == j ? 2.0 * n : -1.0 / (1 + (i * 7 + j * 3) % 11);
            }
    }
    A->rowptr[n] = q;
    free(on);
    return A;
}

/* A's rows factored by ilu0_row_split on A split into L (strictly lower)
 * and U (diagonal first), written back into A's order. */
static void ilu0_split_rows(ata_csr *A)
{
    const int n = A->nrows;
    ata_csr *L, *U;
    int nl = 0;
    for (int i = 0; i < n; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) nl += A->col[p] < i;
    TU_OK(ata_csr_alloc(n, n, nl, &L));
    TU_OK(ata_csr_alloc(n, n, A->nnz - nl, &U));
    for (int i = 0, a = 0, b = 0; i < n; i++) {
        L->rowptr[i] = a;
        U->rowptr[i] = b;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            ata_csr *T = A->col[p] < i ? L : U;
            int *w = T == L ? &a : &b;
            T->col[*w] = A->col[p];
            T->val[(*w)++] = A->val[p];
        }
        L->rowptr[i + 1] = a;
        U->rowptr[i + 1] = b;
    }
    int *work = malloc((size_t)n * sizeof *work);
    for (int i = 0; i < n; i++) work[i] = -1;
    for (int i = 0; i < n; i++)
        assert_int_equal(ilu0_row_split(L->rowptr, L->col, L->val, U->rowptr, U->col, U->val, work, i), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(work[i], -1);
        const int nli = L->rowptr[i + 1] - L->rowptr[i];
        memcpy(A->val + A->rowptr[i], L->val + L->rowptr[i], (size_t)nli * sizeof *A->val);
        memcpy(A->val + A->rowptr[i] + nli, U->val + U->rowptr[i],
               (size_t)(U->rowptr[i + 1] - U->rowptr[i]) * sizeof *A->val);
    }
    free(work);
    ata_csr_free(L);
    ata_csr_free(U);
}

static void test_ilu0_dense_rows(void **state)
{
    (void)state;
    ata_context_options co = ata_context_defaults();
    co.backend = ATA_BACKEND_CPU;
    co.threads = 2;
    ata_context *ctx;
    TU_OK(ata_context_create(&co, &ctx));
    const int first[] = { 0 }, last[] = { 799 }, mixed[] = { 3, 400, 401, 790 };
    const struct { const int *dense; int nd, scatter; } cases[] = {
        { first, 1, 0 }, { last, 1, 0 }, { mixed, 4, 3000 }, { first, 1, 20000 }, { NULL, 0, 40000 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ata_csr *A = dense_rows_matrix(800, cases[c].dense, cases[c].nd, cases[c].scatter, 17 + c), *R, *LU, *S;
        TU_OK(ata_csr_copy(A, &R));
        ilu0_scan_oracle(R);
        ata_csr *F;
        TU_OK(ata_csr_copy(A, &F));
        TU_OK(ata_ref_ilu0(F));
        assert_memory_equal(F->val, R->val, (size_t)A->nnz * sizeof *A->val);
        ata_plan_options po = ata_plan_defaults();
        po.policy = ATA_POLICY_CA;      /* the runtime's ILU0 plan (auto runs the serial loop here) */
        TU_OK(ata_spilu0(ctx, A, &po, &LU));
        assert_memory_equal(LU->val, R->val, (size_t)A->nnz * sizeof *A->val);
        ata_csr_free(LU);
        po.policy = ATA_POLICY_AUTO;
        TU_OK(ata_spilu0(ctx, A, &po, &LU));
        assert_memory_equal(LU->val, R->val, (size_t)A->nnz * sizeof *A->val);
        /* on split factors (ata_factor and PCG on the CPU backend): the
         * same bits, row by row, and through a runtime factor's solve */
        TU_OK(ata_csr_copy(A, &S));
        ilu0_split_rows(S);
        assert_memory_equal(S->val, R->val, (size_t)A->nnz * sizeof *A->val);
        ata_factor *Fr, *Fc;
        double b[800], xr[800], xc[800];
        tu_random_vec(b, 800, 5 + (uint64_t)c);
        TU_OK(ata_factor_setup(NULL, A, NULL, &Fr));
        TU_OK(ata_factor_setup(ctx, A, NULL, &Fc));
        TU_OK(ata_factor_solve(Fr, b, xr));
        TU_OK(ata_factor_solve(Fc, b, xc));
        assert_memory_equal(xr, xc, sizeof xr);
        ata_factor_destroy(Fr); ata_factor_destroy(Fc);
        ata_csr_free(A); ata_csr_free(R); ata_csr_free(F); ata_csr_free(LU); ata_csr_free(S);
    }
    /* the arrow with a dense first row: linear now (the scan took
     * 0.74 s at n = 25k, quadratic); 200k rows must take well under 2 s */
    const int n = 200000;
    ata_csr *A;
    TU_OK(ata_csr_alloc(n, n, 3 * n - 2, &A));
    int q = 0;
    for (int i = 0; i < n; i++) {
        A->rowptr[i] = q;
        if (i == 0)
            for (int j = 0; j < n; j++) { A->col[q] = j; A->val[q++] = j ? -1.0 / (j + 1) : 4.0 * n; }
        else {
            A->col[q] = 0; A->val[q++] = -1.0 / (i + 2);
            A->col[q] = i; A->val[q++] = 4.0 + i % 7;
        }
    }
    A->rowptr[n] = q;
    const double t0 = now();
    TU_OK(ata_ref_ilu0(A));
    const double dt = now() - t0;
    printf("  arrow n = %d: serial ILU0 %.3f s\n", n, dt);
    assert_true(dt < 2.0);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* ------------------------------------------------------------------ */
/* Messages say what failed                                            */
/* ------------------------------------------------------------------ */

static void test_messages(void **state)
{
    (void)state;
    ata_context_options co = ata_context_defaults();
    co.backend = ATA_BACKEND_CPU;
    co.threads = 2;
    ata_context *ctx;
    TU_OK(ata_context_create(&co, &ctx));
    /* an overflowed pivot is not a zero pivot: u_11 = 1 - (1e300/1e-300) 1e300 = -inf */
    const int rp[] = { 0, 2, 4 }, cj[] = { 0, 1, 0, 1 };
    double v[] = { 1e-300, 1e300, 1e300, 1 };
    ata_csr A = { .nrows = 2, .ncols = 2, .nnz = 4, .rowptr = (int *)rp, .col = (int *)cj, .val = v };
    ata_csr *F, *LU = NULL;
    TU_OK(ata_csr_copy(&A, &F));
    assert_int_equal(ata_ref_ilu0(F), ATA_ERR_NONFINITE);
    expect_msg("ilu0: pivot in row 1 is not finite", "-inf");
    ata_csr_free(F);
    assert_int_equal(ata_spilu0(ctx, &A, NULL, &LU), ATA_ERR_NONFINITE);
    expect_msg("ilu0: pivot in row 1 is not finite", "-inf");
    /* a zero pivot still is one */
    double z[] = { 1, 1, 1, 1 };
    A.val = z;
    TU_OK(ata_csr_copy(&A, &F));
    assert_int_equal(ata_ref_ilu0(F), ATA_ERR_ZERO_PIVOT);
    expect_msg("ilu0: zero pivot in row 1", "u_ii = 0");
    ata_csr_free(F);
    assert_int_equal(ata_spilu0(ctx, &A, NULL, &LU), ATA_ERR_ZERO_PIVOT);
    expect_msg("ilu0: zero pivot in row 1", "u_ii = 0");
    /* IC0 failures say IC0, on the reference and through the runtime */
    double ind[] = { 1, 2, 2, 1 };
    A.val = ind;
    double b[2] = { 1, 1 }, x[2] = { 0, 0 };
    ata_pcg_options po = ata_pcg_defaults();
    po.precond = ATA_PC_IC0;
    ata_pcg_result res;
    for (int k = 0; k < 2; k++) {
        memset(&res, 0, sizeof res);
        assert_int_equal(ata_pcg(k ? ctx : NULL, &A, b, x, &po, &res), ATA_ERR_INDEFINITE_PC);
        expect_msg("pcg: IC0 pivot u_1,1 = -3", "indefinite");
        ata_pcg_result_free(&res);
        A.val = z;
        memset(&res, 0, sizeof res);
        assert_int_not_equal(ata_pcg(k ? ctx : NULL, &A, b, x, &po, &res), ATA_OK);
        expect_msg("IC0: zero pivot in row 1", "shift");
        ata_pcg_result_free(&res);
        A.val = ind;
    }
    /* NaN in x0 is named as x0, not as b */
    double spd[] = { 4, -1, -1, 4 }, x0[2] = { NAN, 0 };
    A.val = spd;
    po = ata_pcg_defaults();
    po.use_x0 = 1;
    for (int k = 0; k < 2; k++) {
        memset(&res, 0, sizeof res);
        x0[0] = NAN;
        assert_int_equal(ata_pcg(k ? ctx : NULL, &A, b, x0, &po, &res), ATA_ERR_NONFINITE);
        expect_msg("pcg: initial residual b - A x0", "x0 holds NaN/Inf");
        ata_pcg_result_free(&res);
    }
    b[0] = INFINITY;
    x0[0] = 0;
    memset(&res, 0, sizeof res);
    assert_int_equal(ata_pcg(NULL, &A, b, x0, &po, &res), ATA_ERR_NONFINITE);
    expect_msg("pcg: right-hand side", "NaN/Inf");
    ata_pcg_result_free(&res);
    ata_context_destroy(ctx);
}

/* ------------------------------------------------------------------ */
/* RCM in linear time, same ordering                                   */
/* ------------------------------------------------------------------ */

/* The ordering as first written: a scan of all vertices for each
 * component's root, insertion sort of the neighbours. A is symmetric, so
 * its off-diagonal pattern is the graph. The oracle. */
static void rcm_oracle(const ata_csr *A, int *perm)
{
    const int n = A->nrows, *Ap = A->rowptr, *Aj = A->col;
    int *deg = calloc((size_t)n, sizeof *deg), *seq = malloc((size_t)n * sizeof *seq);
    int *nb = malloc((size_t)n * sizeof *nb);
    char *seen = calloc((size_t)n, 1);
    for (int v = 0; v < n; v++)
        for (int q = Ap[v]; q < Ap[v + 1]; q++) deg[v] += Aj[q] != v;
    int head = 0, tail = 0;
    while (tail < n) {
        int root = -1;
        for (int v = 0; v < n; v++)
            if (!seen[v] && (root < 0 || deg[v] < deg[root])) root = v;
        seen[root] = 1;
        seq[tail++] = root;
        while (head < tail) {
            int v = seq[head++], k = 0;
            for (int q = Ap[v]; q < Ap[v + 1]; q++)
                if (Aj[q] != v && !seen[Aj[q]]) { seen[Aj[q]] = 1; nb[k++] = Aj[q]; }
            for (int a = 1; a < k; a++) {
                int w = nb[a], b = a - 1;
                while (b >= 0 && deg[nb[b]] > deg[w]) { nb[b + 1] = nb[b]; b--; }
                nb[b + 1] = w;
            }
            for (int a = 0; a < k; a++) seq[tail++] = nb[a];
        }
    }
    for (int k = 0; k < n; k++) perm[seq[k]] = n - 1 - k;
    free(deg); free(seq); free(nb); free(seen);
}

static void test_rcm_linear(void **state)
{
    (void)state;
    const int hub[] = { 5 };
    ata_csr *cases[6];
    cases[0] = dense_rows_matrix(600, NULL, 0, 150, 3);       /* many small components */
    cases[1] = dense_rows_matrix(600, hub, 1, 400, 4);        /* a hub: a 600-neighbour list */
    cases[2] = dense_rows_matrix(600, NULL, 0, 2000, 5);
    TU_OK(ata_gen_from_spec("circuit:3000,perm=4", &cases[3]));
    TU_OK(ata_gen_from_spec("lap2d:30x20", &cases[4]));
    TU_OK(ata_csr_alloc(5000, 5000, 5000, &cases[5]));         /* diagonal: 5000 components */
    for (int i = 0; i < 5000; i++) {
        cases[5]->rowptr[i] = i; cases[5]->col[i] = i; cases[5]->val[i] = 1;
    }
    cases[5]->rowptr[5000] = 5000;
    for (int c = 0; c < 6; c++) {
        const ata_csr *A = cases[c];
        int *perm, *want = malloc((size_t)A->nrows * sizeof *want);
        TU_OK(reorder_perm(A, ATA_REORDER_RCM, &perm));
        rcm_oracle(A, want);
        assert_memory_equal(perm, want, (size_t)A->nrows * sizeof *perm);
        free(perm); free(want);
        ata_csr_free(cases[c]);
    }
    /* a 200k diagonal: 200k components (quadratic before: 0.67 s at 25k) */
    ata_csr *D;
    const int n = 200000;
    TU_OK(ata_csr_alloc(n, n, n, &D));
    for (int i = 0; i < n; i++) { D->rowptr[i] = i; D->col[i] = i; D->val[i] = 1; }
    D->rowptr[n] = n;
    int *perm;
    const double t0 = now();
    TU_OK(reorder_perm(D, ATA_REORDER_RCM, &perm));
    const double dt = now() - t0;
    printf("  RCM on a %d diagonal: %.3f s\n", n, dt);
    assert_true(dt < 2.0);
    for (int i = 0; i < n; i++) assert_int_equal(perm[i], n - 1 - i);
    free(perm);
    ata_csr_free(D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mm_lying_headers),
        cmocka_unit_test(test_rb_lying_headers),
        cmocka_unit_test(test_input_limit),
        cmocka_unit_test(test_rb_temp_file),
        cmocka_unit_test(test_sum_duplicates),
        cmocka_unit_test(test_csr_from_coo),
        cmocka_unit_test(test_entry_validation),
        cmocka_unit_test(test_ilu0_dense_rows),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_rcm_linear),
    };
    return cmocka_run_group_tests_name("input", tests, tu_tmp_make, tu_tmp_remove);
}
