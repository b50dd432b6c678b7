/* dagshape.c - level widths of a triangle's DAG, for the DAG-shape picture.
 *
 * The library reports levels and the class but not the width of every
 * level, so the bench computes them itself: row i is a task, an entry (i, j)
 * on the solved side of the diagonal is an edge j -> i, and
 * level(i) = 1 + max level of its predecessors (0 for a root). Rows are
 * visited in the order the solve goes (up for lower, down for upper), so
 * every predecessor's level is final when it is read. */
#include <stdlib.h>
#include "bench.h"

int dagshape_compute(const ata_csr *A, ata_uplo uplo, int **widths_out, int *nlevels,
                     int *max_width, long long *m, long long *tri_nnz)
{
    int n = A->nrows;
    const int *Ap = A->rowptr, *Aj = A->col;
    *widths_out = NULL;
    *nlevels = *max_width = 0;
    *m = *tri_nnz = 0;
    if (n <= 0 || A->ncols != n) return -1;
    int *level = malloc((size_t)n * sizeof *level);
    if (!level) return -1;
    int nl = 0;
    long long edges = 0, tnnz = 0;
    for (int k = 0; k < n; k++) {
        int i = uplo == ATA_LOWER ? k : n - 1 - k;
        int lv = 0;
        for (int p = Ap[i]; p < Ap[i + 1]; p++) {
            int j = Aj[p];
            if (uplo == ATA_LOWER ? j > i : j < i) continue;
            tnnz++;
            if (j == i) continue;
            edges++;
            if (level[j] + 1 > lv) lv = level[j] + 1;
        }
        level[i] = lv;
        if (lv + 1 > nl) nl = lv + 1;
    }
    int *w = calloc((size_t)nl, sizeof *w);
    if (!w) { free(level); return -1; }
    for (int i = 0; i < n; i++) w[level[i]]++;
    int mw = 0;
    for (int l = 0; l < nl; l++)
        if (w[l] > mw) mw = w[l];
    free(level);
    *widths_out = w;
    *nlevels = nl;
    *max_width = mw;
    *m = edges;
    *tri_nnz = tnnz;
    return 0;
}
