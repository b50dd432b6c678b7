/* dag.c - levels of the task DAG of a triangular pattern, in O(n + nnz).
 * Level sets come out of counting sorts (flags -> prefix sum -> scatter):
 * deterministic, no atomics. Inside a level, rows come by their count of
 * predecessors (up to DAG_LEN_CLASSES - 1; more in one class; the same
 * whichever way the adjacency lists the edges), then by their count of
 * entries on the other side of the diagonal (successors, where the
 * adjacency has them: PCG's relabelling reads the whole A), then by index.
 * A solve's loop over a row's entries then runs the same number of times
 * for long stretches of rows and its exit branch is predicted (measured:
 * the second level of circuit:1000000, 271k rows of 1 to ~15 entries,
 * solved twice as fast, 2.9 -> 1.4 ms, serial); the successor class does
 * the same for the upper solve run backwards through these levels
 * (dag_reverse_upper). On a grid, where rows have one length but on the
 * boundary, index order barely changes. */
#include <stdlib.h>
#include <string.h>
#include "dag.h"
#include "error.h"
#include "mem.h"

const char *dag_class_name(int cls)
{
    return cls == DAG_PARALLEL ? "parallel" : cls == DAG_WIDE ? "wide" : "L-shape";
}

void dag_free(dag *d)
{
    if (!d) return;
    free(d->level);
    free(d->level_ptr);
    free(d->level_rows);
    memset(d, 0, sizeof *d);
}

void dag_to_level_order(dag *d)
{
    for (int l = 0; l < d->nlevels; l++)
        for (int k = d->level_ptr[l]; k < d->level_ptr[l + 1]; k++) {
            d->level[k] = l;
            d->level_rows[k] = k;
        }
}

static int classify(const dag *d)
{
    if (d->nlevels < DAG_PARALLEL_MAX_LEVELS) return DAG_PARALLEL;
    int wide = 0;
    for (int l = 0; l < d->nlevels; l++)
        wide += d->level_ptr[l + 1] - d->level_ptr[l] >= DAG_WIDE_MIN_WIDTH;
    return wide >= DAG_WIDE_FRACTION * d->nlevels ? DAG_WIDE : DAG_LSHAPE;
}

ata_status dag_build(int n, const int *ptr, const int *idx, int preds,
                     ata_uplo uplo, dag *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    int *level = mem_calloc((size_t)n + 1, sizeof *level);
    /* Per row, capped: predecessors, and the entries the adjacency holds on
     * the other side of the diagonal (none for a triangle, pull or push;
     * the successors where it is the whole matrix). */
    unsigned char *len = mem_calloc((size_t)n + 1, 1), *oth = mem_calloc((size_t)n + 1, 1);
    if (!level || !len || !oth) {
        free(level); free(len); free(oth);
        return ata_fail(ATA_ERR_NOMEM, "dag: out of memory (n = %d)", n);
    }
    const int cap = DAG_LEN_CLASSES - 1;
    long long m = 0;
    int nlevels = n > 0;
    /* Visit rows in topological direction: every predecessor is final. */
    for (int k = 0; k < n; k++) {
        int i = uplo == ATA_LOWER ? k : n - 1 - k;
        int li = level[i], e = 0, o = 0;
        for (int p = ptr[i]; p < ptr[i + 1]; p++) {
            int j = idx[p];
            if (!dag_is_edge(uplo, preds, i, j)) { o += j != i; continue; }
            e++;
            if (preds) { if (level[j] + 1 > li) li = level[j] + 1; }
            else {
                if (level[j] < li + 1) level[j] = li + 1;
                if (len[j] < cap) len[j]++;
            }
        }
        m += e;
        level[i] = li;
        if (preds) len[i] = (unsigned char)(e < cap ? e : cap);
        oth[i] = (unsigned char)(o < cap ? o : cap);
        if (li + 1 > nlevels) nlevels = li + 1;
    }
    int *lptr = mem_calloc((size_t)nlevels + 1, sizeof *lptr);
    int *rows = mem_alloc(((size_t)n + 1) * sizeof *rows);
    int *bylen = mem_alloc(((size_t)n + 1) * sizeof *bylen);
    if (!lptr || !rows || !bylen) {
        free(level); free(len); free(oth); free(lptr); free(rows); free(bylen);
        return ata_fail(ATA_ERR_NOMEM, "dag: out of memory (n = %d)", n);
    }
    /* Rows by (predecessor class, successor class), by index inside one (a
     * stable counting sort)... */
    enum { NCLS = DAG_LEN_CLASSES * DAG_LEN_CLASSES };
    int cls[NCLS + 1] = { 0 };
    for (int i = 0; i < n; i++) cls[len[i] * DAG_LEN_CLASSES + oth[i] + 1]++;
    for (int c = 0; c < NCLS; c++) cls[c + 1] += cls[c];
    for (int i = 0; i < n; i++) bylen[cls[len[i] * DAG_LEN_CLASSES + oth[i]]++] = i;
    free(len);
    free(oth);
    for (int i = 0; i < n; i++) lptr[level[i] + 1]++;
    int maxw = 0;
    for (int l = 0; l < nlevels; l++) {
        if (lptr[l + 1] > maxw) maxw = lptr[l + 1];
        lptr[l + 1] += lptr[l];
    }
    /* ...then by level, stably: a moving cursor per level, then the
     * pointers restored. */
    for (int k = 0; k < n; k++) rows[lptr[level[bylen[k]]]++] = bylen[k];
    free(bylen);
    for (int l = nlevels; l > 0; l--) lptr[l] = lptr[l - 1];
    lptr[0] = 0;
    out->nlevels = n ? nlevels : 0;
    out->level = level;
    out->level_ptr = lptr;
    out->level_rows = rows;
    out->m = m;
    out->max_width = maxw;
    out->dag_class = classify(out);
    return ATA_OK;
}

ata_status dag_build_row_ordered(int n, const int *ptr, const int *idx, dag *out)
{
    memset(out, 0, sizeof *out);
    int *level = mem_alloc(((size_t)n + 1) * sizeof *level);
    if (!level) return ata_fail(ATA_ERR_NOMEM, "dag: out of memory (n = %d)", n);
    long long m = 0;
    int prev = 0;
    for (int i = 0; i < n; i++) {
        int li = 0;
        for (int p = ptr[i]; p < ptr[i + 1]; p++)
            if (dag_is_edge(ATA_LOWER, 1, i, idx[p])) {
                if (level[idx[p]] + 1 > li) li = level[idx[p]] + 1;
                m++;
            }
        if (li < prev) {    /* out of level order: stop here (a natural-order grid, after one line) */
            free(level);
            return ATA_ERR_UNSUPPORTED;
        }
        level[i] = prev = li;
    }
    const int nl = n ? prev + 1 : 0;
    int *lptr = mem_calloc((size_t)nl + 1, sizeof *lptr), *rows = mem_alloc(((size_t)n + 1) * sizeof *rows);
    if (!lptr || !rows) {
        free(level); free(lptr); free(rows);
        return ata_fail(ATA_ERR_NOMEM, "dag: out of memory (n = %d)", n);
    }
    int maxw = 0;
    for (int i = 0; i < n; i++) {
        lptr[level[i] + 1]++;
        rows[i] = i;
    }
    for (int l = 0; l < nl; l++) {
        if (lptr[l + 1] > maxw) maxw = lptr[l + 1];
        lptr[l + 1] += lptr[l];
    }
    *out = (dag){ .n = n, .nlevels = nl, .level = level, .level_ptr = lptr, .level_rows = rows, .m = m,
                  .max_width = maxw };
    out->dag_class = classify(out);
    return ATA_OK;
}

ata_status dag_reverse_upper(const dag *lower, const int *ptr, const int *idx, dag *out)
{
    memset(out, 0, sizeof *out);
    const int n = lower->n, nl = lower->nlevels, *lev = lower->level;
    long long m = 0;
    for (int i = 0; i < n; i++)
        for (int p = ptr[i]; p < ptr[i + 1]; p++) {
            const int j = idx[p];
            if (j <= i) continue;
            if (lev[j] <= lev[i]) return ATA_ERR_UNSUPPORTED;   /* a U edge inside or against L's levels */
            m++;
        }
    if (m != lower->m) return ATA_ERR_UNSUPPORTED;      /* not structurally symmetric */
    out->n = n;
    out->nlevels = nl;
    out->level = mem_alloc(((size_t)n + 1) * sizeof *out->level);
    out->level_ptr = mem_alloc(((size_t)nl + 1) * sizeof *out->level_ptr);
    out->level_rows = mem_alloc(((size_t)n + 1) * sizeof *out->level_rows);
    if (!out->level || !out->level_ptr || !out->level_rows) {
        dag_free(out);
        return ata_fail(ATA_ERR_NOMEM, "dag: out of memory (n = %d)", n);
    }
    for (int i = 0; i < n; i++) out->level[i] = nl - 1 - lev[i];
    for (int l = 0; l <= nl; l++) out->level_ptr[l] = n - lower->level_ptr[nl - l];
    for (int k = 0; k < n; k++) out->level_rows[k] = lower->level_rows[n - 1 - k];
    out->m = m;
    out->max_width = lower->max_width;
    out->dag_class = classify(out);
    out->lower_reversed = 1;
    return ATA_OK;
}
