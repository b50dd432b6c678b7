/* serial.c - the serial baseline of `ata-bench sptrsv` (the "serial" row and
 * the "vs serial" column): the triangle is extracted once into the layout a
 * serial solver wants (timed, and reported as the row's analysis), then solved
 * by a tight loop in the manner of CSparse: pull walks CSR rows with the
 * diagonal last (lower) or first (upper; its row read backwards, far to near
 * as the reference), as cs_ltsolve/cs_utsolve walk the
 * columns of the transpose; push walks CSC columns with the diagonal first
 * (lower) or last (upper), as cs_lsolve/cs_usolve. No checks in the loop: the
 * extraction has already refused a missing or zero diagonal.
 * ata_ref_sptrsv_* stay the tests' oracle (they scan whole rows of A and
 * check every step), and the bench's check column still compares with them. */
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static int in_tri(ata_uplo uplo, int i, int j) { return uplo == ATA_LOWER ? j < i : j > i; }

void serial_tri_free(serial_tri *T)
{
    if (!T) return;
    free(T->ptr);
    free(T->idx);
    free(T->val);
    memset(T, 0, sizeof *T);
}

ata_status serial_tri_build(const ata_csr *A, ata_uplo uplo, ata_diag diag, ata_traversal trav,
                            serial_tri *T, char *msg, size_t cap)
{
    const int n = A->nrows, unit = diag == ATA_UNIT, push = trav == ATA_PUSH;
    memset(T, 0, sizeof *T);
    T->n = n; T->uplo = uplo; T->unit = unit; T->push = push; T->inv = diag == ATA_NON_UNIT_INV;
    /* Diagonal of every row, and the count per row (pull) or column (push). */
    double *d = malloc(((size_t)n + 1) * sizeof *d);
    T->ptr = calloc((size_t)n + 2, sizeof *T->ptr);
    if (!d || !T->ptr) goto nomem;
    long long nnz = 0;
    for (int i = 0; i < n; i++) {
        d[i] = 0;
        int has = 0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->col[p];
            if (j == i) { d[i] = A->val[p]; has = 1; }
            else if (in_tri(uplo, i, j)) { T->ptr[(push ? j : i) + 1]++; nnz++; }
        }
        if (!unit && (!has || d[i] == 0)) {
            snprintf(msg, cap, "serial baseline: row %d: diagonal entry %s", i, has ? "is zero" : "is missing");
            free(d);
            serial_tri_free(T);
            return has ? ATA_ERR_ZERO_PIVOT : ATA_ERR_MISSING_DIAG;
        }
    }
    if (T->inv)     /* the reciprocal, rounded once, multiplies (ATA_NON_UNIT_INV) */
        for (int i = 0; i < n; i++) d[i] = 1.0 / d[i];
    if (!unit)
        for (int k = 0; k < n; k++) T->ptr[k + 1]++;
    for (int k = 0; k < n; k++) T->ptr[k + 1] += T->ptr[k];
    nnz = T->ptr[n];
    T->idx = malloc(((size_t)nnz + 1) * sizeof *T->idx);
    T->val = malloc(((size_t)nnz + 1) * sizeof *T->val);
    int *next = malloc(((size_t)n + 1) * sizeof *next);
    if (!T->idx || !T->val || !next) { free(next); goto nomem; }
    memcpy(next, T->ptr, (size_t)n * sizeof *next);
    /* Lower pull / upper push: the diagonal goes last; upper pull / lower
     * push: first (so the solve divides before, or after, the sweep). */
    int diag_first = (uplo == ATA_UPPER) != push;
    if (!unit && diag_first)
        for (int k = 0; k < n; k++) { T->idx[next[k]] = k; T->val[next[k]++] = d[k]; }
    for (int i = 0; i < n; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->col[p];
            if (j == i || !in_tri(uplo, i, j)) continue;
            int k = push ? j : i, q = next[k]++;
            T->idx[q] = push ? i : j;
            T->val[q] = A->val[p];
        }
    if (!unit && !diag_first)
        for (int k = 0; k < n; k++) { T->idx[next[k]] = k; T->val[next[k]++] = d[k]; }
    free(next);
    free(d);
    return ATA_OK;
nomem:
    free(d);
    serial_tri_free(T);
    snprintf(msg, cap, "serial baseline: out of memory (n = %d)", n);
    return ATA_ERR_NOMEM;
}

void serial_tri_solve(const serial_tri *T, const double *restrict b, double *restrict x)
{
    const int n = T->n, unit = T->unit, inv = T->inv;
    const int *restrict ptr = T->ptr, *restrict idx = T->idx;
    const double *restrict val = T->val;
    if (!T->push && T->uplo == ATA_LOWER) {
        for (int i = 0; i < n; i++) {
            int p = ptr[i], e = ptr[i + 1] - !unit;
            double s = b[i];
            for (; p < e; p++) s -= val[p] * x[idx[p]];
            x[i] = unit ? s : inv ? s * val[e] : s / val[e];
        }
    } else if (!T->push) {
        for (int i = n - 1; i >= 0; i--) {
            int p = ptr[i] + !unit, e = ptr[i + 1];
            double s = b[i];
            while (e > p) { e--; s -= val[e] * x[idx[e]]; }     /* far to near, as the reference */
            x[i] = unit ? s : inv ? s * val[ptr[i]] : s / val[ptr[i]];
        }
    } else if (T->uplo == ATA_LOWER) {
        memcpy(x, b, (size_t)n * sizeof *x);
        for (int j = 0; j < n; j++) {
            int p = ptr[j], e = ptr[j + 1];
            if (!unit) { x[j] = inv ? x[j] * val[p] : x[j] / val[p]; p++; }
            double xj = x[j];
            for (; p < e; p++) x[idx[p]] -= val[p] * xj;
        }
    } else {
        memcpy(x, b, (size_t)n * sizeof *x);
        for (int j = n - 1; j >= 0; j--) {
            int p = ptr[j], e = ptr[j + 1] - !unit;
            if (!unit) x[j] = inv ? x[j] * val[e] : x[j] / val[e];
            double xj = x[j];
            for (; p < e; p++) x[idx[p]] -= val[p] * xj;
        }
    }
}
