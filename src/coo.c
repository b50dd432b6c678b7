/* coo.c - triplets (COO) to CSR: the public ata_csr_from_coo (CSparse's
 * cs_compress habit) and the assembly the Matrix Market reader shares.
 * Two stable counting sorts, by column then by row: O(nnz + rows + cols),
 * sorted columns, and repeated (row, column) side by side in input order,
 * so summed duplicates add up in the order the caller gave them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "coo.h"
#include "error.h"
#include "mem.h"

/* Merge runs of equal columns in each row, summing in input order. */
static void coo_sum_runs(ata_csr *A, int *src)
{
    int w = 0;
    for (int i = 0; i < A->nrows; i++) {
        const int lo = A->rowptr[i], hi = A->rowptr[i + 1];
        A->rowptr[i] = w;
        for (int p = lo; p < hi; p++) {
            if (p > lo && A->col[p] == A->col[w - 1]) { A->val[w - 1] += A->val[p]; continue; }
            A->col[w] = A->col[p];
            A->val[w] = A->val[p];
            src[w++] = src[p];
        }
    }
    A->rowptr[A->nrows] = w;
    A->nnz = w;
}

ata_status coo_assemble(int m, int n, int nz, const int *row, const int *col, const double *val,
                        int sum, ata_csr **out, int **src_out, int dup[2])
{
    *out = NULL;
    if (src_out) *src_out = NULL;
    ata_csr *A;
    ATA_TRY(ata_csr_alloc(m, n, nz, &A));
    int *bycol = mem_alloc(((size_t)nz + 1) * sizeof *bycol), *cnt = mem_calloc((size_t)n + 1, sizeof *cnt);
    int *src = mem_alloc(((size_t)nz + 1) * sizeof *src);
    if (!bycol || !cnt || !src) {
        free(bycol); free(cnt); free(src); ata_csr_free(A);
        return ata_fail(ATA_ERR_NOMEM, "out of memory assembling %d entries", nz);
    }
    for (int k = 0; k < nz; k++) cnt[col[k] + 1]++;
    for (int j = 0; j < n; j++) cnt[j + 1] += cnt[j];
    for (int k = 0; k < nz; k++) bycol[cnt[col[k]]++] = k;
    free(cnt);
    int *Ap = A->rowptr;
    memset(Ap, 0, ((size_t)m + 1) * sizeof *Ap);
    for (int k = 0; k < nz; k++) Ap[row[k] + 1]++;
    for (int i = 0; i < m; i++) Ap[i + 1] += Ap[i];
    for (int t = 0; t < nz; t++) {          /* Ap[i] advances as row i fills */
        const int k = bycol[t], q = Ap[row[k]]++;
        A->col[q] = col[k];
        A->val[q] = val ? val[k] : 1.0;
        src[q] = k;
    }
    free(bycol);
    for (int i = m; i > 0; i--) Ap[i] = Ap[i - 1];
    Ap[0] = 0;
    ata_status st = ATA_OK;
    if (sum) coo_sum_runs(A, src);
    else
        for (int i = 0; i < m && st == ATA_OK; i++)
            for (int p = Ap[i] + 1; p < Ap[i + 1]; p++)
                if (A->col[p] == A->col[p - 1]) {
                    dup[0] = src[p - 1] < src[p] ? src[p - 1] : src[p];
                    dup[1] = src[p - 1] < src[p] ? src[p] : src[p - 1];
                    st = ATA_ERR_DUPLICATE;     /* the caller words it */
                    break;
                }
    if (st != ATA_OK) { free(src); ata_csr_free(A); return st; }
    if (src_out) *src_out = src; else free(src);
    *out = A;
    return ATA_OK;
}

/* Every entry checked before anything is sized by it; messages count
 * entries and rows from 0, as the arrays do. */
ata_status ata_csr_from_coo(int nrows, int ncols, int nnz, const int *row, const int *col,
                            const double *val, int sum_duplicates, ata_csr **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "csr from coo: NULL output");
    *out = NULL;
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return ata_fail(ATA_ERR_ARG, "csr from coo: negative size %d x %d, nnz %d", nrows, ncols, nnz);
    if (nnz > 0 && (!row || !col || !val)) return ata_fail(ATA_ERR_ARG, "csr from coo: NULL array");
    for (int k = 0; k < nnz; k++) {
        if (row[k] < 0 || row[k] >= nrows)
            return ata_fail(ATA_ERR_INDEX, "csr from coo: entry %d: row %d out of range 0..%d", k, row[k], nrows - 1);
        if (col[k] < 0 || col[k] >= ncols)
            return ata_fail(ATA_ERR_INDEX, "csr from coo: entry %d: column %d out of range 0..%d", k, col[k],
                            ncols - 1);
        if (!isfinite(val[k]))
            return ata_fail(ATA_ERR_NONFINITE, "csr from coo: entry %d (row %d, column %d): value %g is not finite",
                            k, row[k], col[k], val[k]);
    }
    ata_csr *A;
    int dup[2];
    ata_status st = coo_assemble(nrows, ncols, nnz, row, col, val, sum_duplicates, &A, NULL, dup);
    if (st == ATA_ERR_DUPLICATE)
        return ata_fail(st, "csr from coo: entries %d and %d are both (row %d, column %d) (pass sum_duplicates = 1 "
                        "to add them)", dup[0], dup[1], row[dup[0]], col[dup[0]]);
    if (st != ATA_OK) return st;
    /* finite terms can still sum to an infinity */
    for (int p = 0; p < A->nnz; p++)
        if (!isfinite(A->val[p])) {
            int i = 0;
            while (A->rowptr[i + 1] <= p) i++;
            const int j = A->col[p];
            ata_csr_free(A);
            return ata_fail(ATA_ERR_NONFINITE, "csr from coo: duplicates of (row %d, column %d) sum to a non-finite "
                            "value", i, j);
        }
    *out = A;
    return ATA_OK;
}
