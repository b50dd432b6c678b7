/* test_util.c - shared helpers of the cmocka tests. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

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
