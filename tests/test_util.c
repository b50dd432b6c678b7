/* test_util.c - shared helpers of the cmocka tests. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"
#include "dag.h"

const char *tu_matrix_dir(void)
{
    const char *d = getenv("ATA_MATRICES");
    return d && *d ? d : "../shared/matrices";
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_list(const char *sub)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", tu_matrix_dir(), sub);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "SKIPPED: matrix folder %s not found (set ATA_MATRICES)\n", dir);
        return NULL;
    }
    size_t cap = 16, n = 0;
    char **list = malloc(cap * sizeof *list);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n + 2 > cap) list = realloc(list, (cap *= 2) * sizeof *list);
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        list[n] = malloc(len);
        snprintf(list[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(list, n, sizeof *list, cmp_str);
    list[n] = NULL;
    return list;
}

void tu_free_list(char **list)
{
    if (!list) return;
    for (char **p = list; *p; p++) free(*p);
    free(list);
}

double tu_backward_error(const ata_csr *T, ata_uplo uplo, ata_diag diag,
                         const double *x, const double *b)
{
    double rmax = 0, tnorm = 0, xmax = 0, bmax = 0;
    for (int i = 0; i < T->nrows; i++) {
        double r = -b[i], rowabs = 0;
        for (int p = T->rowptr[i]; p < T->rowptr[i + 1]; p++) {
            int j = T->col[p];
            if ((uplo == ATA_LOWER && j > i) || (uplo == ATA_UPPER && j < i)) continue;
            if (j == i && diag == ATA_UNIT) continue;
            r += T->val[p] * x[j];
            rowabs += fabs(T->val[p]);
        }
        if (diag == ATA_UNIT) { r += x[i]; rowabs += 1; }
        if (fabs(r) > rmax || isnan(r)) rmax = isnan(r) ? INFINITY : fabs(r);
        if (rowabs > tnorm) tnorm = rowabs;
        if (fabs(x[i]) > xmax) xmax = fabs(x[i]);
        if (fabs(b[i]) > bmax) bmax = fabs(b[i]);
    }
    return rmax / (tnorm * xmax + bmax);
}

double tu_rel_diff(const double *x, const double *y, int n)
{
    double d = 0, m = 0;
    for (int i = 0; i < n; i++) {
        double e = fabs(x[i] - y[i]);
        if (e > d || isnan(e)) d = isnan(e) ? INFINITY : e;
        if (fabs(y[i]) > m) m = fabs(y[i]);
    }
    return m > 0 ? d / m : d;
}

void tu_random_vec(double *v, int n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        v[i] = (double)(s >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
    }
}

/* See test_util.h. */
ata_csr *tu_level_ordered(const ata_csr *A)
{
    const int n = A->nrows;
    /* key: level, then predecessor count, then successor count (each
     * capped as dag.h's classes), then index */
    const int C = DAG_LEN_CLASSES, C2 = C * C;
    int *L = calloc((size_t)n, sizeof *L), *perm = malloc((size_t)n * sizeof *perm), *cnt = calloc((size_t)n * C2 + 2, sizeof *cnt);
    int maxl = 0;
    for (int i = 0; i < n; i++) {
        int l = 0, e = 0, o = 0;
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
            if (A->col[q] < i) {
                e++;
                if (L[A->col[q]] + 1 > l) l = L[A->col[q]] + 1;
            } else o += A->col[q] > i;
        L[i] = l;
        if (l > maxl) maxl = l;
        perm[i] = l * C2 + (e < C - 1 ? e : C - 1) * C + (o < C - 1 ? o : C - 1);
        cnt[perm[i] + 1]++;
    }
    for (int k = 0; k < (maxl + 1) * C2; k++) cnt[k + 1] += cnt[k];
    for (int i = 0; i < n; i++) perm[i] = cnt[perm[i]]++;
    ata_csr *P;
    TU_OK(ata_csr_permute_sym(A, perm, &P));
    free(L); free(perm); free(cnt);
    return P;
}

void tu_problem_make(tu_problem *pb, const char *spec, uint64_t seed)
{
    TU_OK(ata_gen_from_spec(spec, &pb->A));
    const int n = pb->n = pb->A->nrows;
    pb->b = malloc(n * sizeof *pb->b);
    pb->x = malloc(n * sizeof *pb->x);
    pb->xr = malloc(n * sizeof *pb->xr);
    tu_random_vec(pb->b, n, seed);
    TU_OK(ata_ref_sptrsv_csr(pb->A, ATA_LOWER, ATA_NON_UNIT, pb->b, pb->xr));
}

void tu_problem_free(tu_problem *pb)
{
    free(pb->b); free(pb->x); free(pb->xr);
    ata_csr_free(pb->A);
}

void tu_check_many_plans(ata_context *ctx, const ata_policy *pols, int npol)
{
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:80,perm=1", &A));
    const int n = A->nrows, np = 6;
    ata_plan *plans[6];
    for (int k = 0; k < np; k++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = pols[k % npol];
        po.uplo = k % 2 ? ATA_UPPER : ATA_LOWER;
        po.traversal = k >= 3 ? ATA_PUSH : ATA_PULL;
        TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &plans[k]));
    }
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    for (int round = 0; round < 20; round++) {
        int k = (round * 5) % np;
        tu_random_vec(b, n, round);
        TU_OK(ata_sptrsv(plans[k], b, x));
        TU_OK(ata_ref_sptrsv_csr(A, k % 2 ? ATA_UPPER : ATA_LOWER, ATA_NON_UNIT, b, xr));
        assert_true(tu_rel_diff(x, xr, n) <= (k >= 3 ? 1e-12 : 0));
    }
    for (int k = 0; k < np; k++) ata_plan_destroy(plans[k]);
    free(b); free(x); free(xr);
    ata_csr_free(A);
}

int tu_pull_split_above = 0;

int tu_pull_splits(const ata_csr *A, ata_uplo uplo)
{
    if (tu_pull_split_above <= 0) return 0;
    for (int i = 0; i < A->nrows; i++) {
        int e = 0;
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
            e += uplo == ATA_LOWER ? A->col[q] < i : A->col[q] > i;
        if (e > tu_pull_split_above) return 1;
    }
    return 0;
}

double tu_rel_diff2(const double *x, const double *y, int n)
{
    double d = 0, m = 0;
    for (int i = 0; i < n; i++) {
        d += (x[i] - y[i]) * (x[i] - y[i]);
        m += y[i] * y[i];
    }
    if (isnan(d)) return INFINITY;
    return m > 0 ? sqrt(d / m) : sqrt(d);
}

void tu_check_solution(const ata_csr *A, const char *name, const ata_plan_options *po,
                           const double *b, const double *x, const double *xr, int n)
{
    if (po->policy == ATA_POLICY_VENDOR) {
        double be = tu_backward_error(A, po->uplo, po->diag, x, b);
        double ber = tu_backward_error(A, po->uplo, po->diag, xr, b);
        if (!(be <= 1e-12 || be <= 100 * ber))
            fail_msg("%s vendor %s uplo=%d diag=%d: backward error %g (reference %g)", name,
                     po->traversal == ATA_PUSH ? "push" : "pull", po->uplo, po->diag, be, ber);
    } else if (po->traversal == ATA_PULL && tu_pull_splits(A, po->uplo)) {
        double e = tu_rel_diff2(x, xr, n);
        if (!(e <= 1e-12))
            fail_msg("%s %s pull uplo=%d diag=%d S=%d (rows split between lanes): rel diff %g > 1e-12",
                     name, ata_policy_name(po->policy), po->uplo, po->diag, po->S, e);
    } else if (po->traversal == ATA_PULL) {
        if (memcmp(x, xr, (size_t)n * sizeof *x) != 0)
            fail_msg("%s %s pull uplo=%d diag=%d S=%d: not bitwise equal to the reference (rel diff %g)",
                     name, ata_policy_name(po->policy), po->uplo, po->diag, po->S, tu_rel_diff(x, xr, n));
    } else {
        double e = tu_rel_diff(x, xr, n);
        if (!(e <= 1e-12))
            fail_msg("%s %s push uplo=%d diag=%d S=%d: rel diff %g > 1e-12", name,
                     ata_policy_name(po->policy), po->uplo, po->diag, po->S, e);
    }
}

/* Statistics every plan must satisfy, whatever the backend. */
static void check_info(const ata_plan *p, const ata_plan_options *po, const char *name, int n, int S)
{
    ata_plan_info in;
    TU_OK(ata_plan_get_info(p, &in));
    assert_true(in.c + in.f <= in.m);
    if (po->policy == ATA_POLICY_LEVELSET) {
        assert_int_equal(in.atasks, in.levels);
        assert_int_equal(in.f, 0);
        assert_int_equal(in.untracked, in.atasks);
    }
    if (po->policy == ATA_POLICY_SYNCFREE) {
        assert_int_equal(in.atasks, n > 0);
        assert_int_equal(in.c, 0);
        assert_true(in.f == in.m);
    }
    /* At most 6 words per row (order, flags, push counters, the CPU's x
     * copy), one per level-run and ~2.25 per atask (README); a CPU push on
     * several workers adds up to 17 bytes a row (its cross slots:
     * cpu_exec.c, push_owners). Level-runs are
     * pieces of levels cut at atask boundaries: at most levels + atasks.
     * Counting runs and atasks by what the plan reports keeps the bound
     * exact when a loaded machine's probe picks a small S. */
    const size_t words = (size_t)6 * n + (size_t)2 * in.atasks + (size_t)in.levels + 2;
    /* The CPU's worker schedule (cpu_sched.h): per worker at most a
     * segment per level-run, each 3 words and 2 per wait (at most one per
     * other worker), and a cache line of count. */
    const size_t nt = in.threads_used > 1 ? (size_t)in.threads_used : 0;
    const size_t segs = nt * ((size_t)in.levels + (size_t)in.atasks) * (3 + 2 * (nt ? nt - 1 : 0)) + 16 * nt;
    const size_t slots = po->traversal == ATA_PUSH && in.threads_used > 1 ? (size_t)17 * n : 0;
    if (S == 0 && in.plan_bytes > sizeof(int) * (words + segs) + slots + (size_t)in.atasks + 64)
        fail_msg("%s: plan uses %zu bytes for %d rows, %d levels, %d atasks", name, in.plan_bytes, n,
                 in.levels, in.atasks);
}

int tu_check_sweep(ata_context *ctx, const ata_csr *A, const char *name, int S,
                   const ata_policy *pols, int npol)
{
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *xr = malloc(n * sizeof *xr), *x = malloc(n * sizeof *x);
    tu_random_vec(b, n, 42);
    int solves = 0;
    for (int u = 0; u < 2; u++)
        for (int d = 0; d < 2; d++) {
            ata_uplo uplo = u ? ATA_UPPER : ATA_LOWER;
            ata_diag diag = d ? ATA_UNIT : ATA_NON_UNIT;
            ata_status ref = ata_ref_sptrsv_csr(A, uplo, diag, b, xr);
            for (int t = 0; t < 2; t++)
                for (int k = 0; k < npol; k++) {
                    ata_plan_options po = ata_plan_defaults();
                    po.policy = pols[k];
                    po.S = S;
                    po.uplo = uplo;
                    po.diag = diag;
                    po.traversal = t ? ATA_PUSH : ATA_PULL;
                    ata_plan *p = NULL;
                    ata_status st = ata_sptrsv_plan_create(ctx, A, &po, &p);
                    if (ref == ATA_ERR_NONFINITE) {
                        /* Overflow: the solve must say so; pull names the same row. */
                        char want[256];
                        snprintf(want, sizeof want, "%s", ata_last_error());
                        TU_OK(st);
                        assert_int_equal(ata_sptrsv(p, b, x), ATA_ERR_NONFINITE);
                        if (po.traversal == ATA_PULL && po.policy != ATA_POLICY_VENDOR &&
                            strcmp(want, ata_last_error()) != 0)
                            fail_msg("%s: reference says '%s', runtime says '%s'", name, want, ata_last_error());
                        ata_plan_destroy(p);
                        assert_int_equal(ata_ref_sptrsv_csr(A, uplo, diag, b, xr), ref);
                        continue;
                    }
                    if (ref != ATA_OK) {
                        /* Unusable diagonal: the plan must refuse it the same way. */
                        if (st != ref)
                            fail_msg("%s %s: reference says %s, plan says %s (%s)", name,
                                     ata_policy_name(po.policy), ata_status_string(ref), ata_status_string(st),
                                     ata_last_error());
                        ata_plan_destroy(p);
                        continue;
                    }
                    if (st != ATA_OK)
                        fail_msg("%s: plan %s: %s", name, ata_policy_name(po.policy), ata_last_error());
                    check_info(p, &po, name, n, S);
                    for (int rep = 0; rep < 2; rep++) {   /* the plan is reused */
                        memset(x, 0xff, n * sizeof *x);    /* NaN poison */
                        st = ata_sptrsv(p, b, x);
                        if (st != ATA_OK)
                            fail_msg("%s %s %s uplo=%d diag=%d S=%d: %s: %s", name, ata_policy_name(po.policy),
                                     t ? "push" : "pull", u, d, S, ata_status_string(st), ata_last_error());
                        tu_check_solution(A, name, &po, b, x, xr, n);
                        solves++;
                    }
                    ata_plan_destroy(p);
                }
        }
    free(b); free(xr); free(x);
    return solves;
}

static char tu_tmp_root[4096];

int tu_tmp_make(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tu_tmp_root, sizeof tu_tmp_root, "%s/ata-test-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tu_tmp_root) ? 0 : -1;
}

int tu_tmp_remove(void **state)
{
    (void)state;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

const char *tu_tmp_dir(void) { return tu_tmp_root; }

void tu_tmp_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tu_tmp_root, name);
}

void tu_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

void tu_run(const char *fmt, const char *a, const char *b)
{
    char cmd[8192];
    if (snprintf(cmd, sizeof cmd, fmt, a, b) >= (int)sizeof cmd) fail_msg("command too long: %s", fmt);
    if (system(cmd) != 0) fail_msg("command failed: %s", cmd);
}

ata_context *tu_cpu_context(int threads)
{
    ata_context_options o = ata_context_defaults();
    o.backend = ATA_BACKEND_CPU;
    o.threads = threads;
    ata_context *ctx;
    TU_OK(ata_context_create(&o, &ctx));
    return ctx;
}

double tu_true_relres(const ata_csr *A, const double *x, const double *b)
{
    const int n = A->nrows;
    double *r = malloc(((size_t)n + 1) * sizeof *r), rr = 0, bb = 0;
    assert_non_null(r);
    TU_OK(ata_ref_spmv(A, x, r));
    for (int i = 0; i < n; i++) { rr += (b[i] - r[i]) * (b[i] - r[i]); bb += b[i] * b[i]; }
    free(r);
    return sqrt(rr / bb);
}

ata_csr *tu_read_real(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/real/%s", tu_matrix_dir(), name);
    if (access(path, R_OK) != 0) {
        printf("SKIPPED: %s not found (set ATA_MATRICES)\n", path);
        return NULL;
    }
    ata_csr *A;
    TU_OK(ata_matrix_read(path, &A));
    return A;
}

int tu_bitwise_equal(const double *x, const double *y, int n)
{
    return memcmp(x, y, (size_t)n * sizeof *x) == 0;
}
