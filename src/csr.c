/* csr.c - the one matrix type: allocation, checks, transpose, triangles,
 * symmetric permutation. Every routine returns a fresh matrix with strictly
 * increasing columns in each row, so callers never sort. Rows in messages
 * are 0-based, as everywhere in the library. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "csr.h"
#include "error.h"
#include "mem.h"

static const char *csr_name(const char *what) { return what && *what ? what : "matrix"; }

ata_status ata_csr_alloc(int nrows, int ncols, int nnz, ata_csr **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "csr alloc: NULL output");
    *out = NULL;
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return ata_fail(ATA_ERR_ARG, "csr alloc: negative size %d x %d, nnz %d", nrows, ncols, nnz);
    ata_csr *A = calloc(1, sizeof *A);
    if (!A) return ata_fail(ATA_ERR_NOMEM, "csr alloc: out of memory");
    /* At least one element each, so an empty matrix still has valid arrays
     * and malloc(0) returning NULL is never mistaken for failure. */
    A->rowptr = mem_calloc((size_t)nrows + 1, sizeof *A->rowptr);
    A->col = mem_alloc(((size_t)nnz + 1) * sizeof *A->col);
    A->val = mem_alloc(((size_t)nnz + 1) * sizeof *A->val);
    if (!A->rowptr || !A->col || !A->val) {
        ata_csr_free(A);
        return ata_fail(ATA_ERR_NOMEM, "csr alloc: out of memory (%d x %d, nnz %d)", nrows, ncols, nnz);
    }
    A->nrows = nrows;
    A->ncols = ncols;
    A->nnz = nnz;
    A->rowptr[nrows] = nnz;   /* consistent even before the caller fills it */
    *out = A;
    return ATA_OK;
}

void ata_csr_free(ata_csr *A)
{
    if (!A) return;
    free(A->rowptr);
    free(A->col);
    free(A->val);
    free(A);
}

ata_status ata_csr_copy(const ata_csr *A, ata_csr **out)
{
    if (!A || !out) return ata_fail(ATA_ERR_ARG, "csr copy: NULL argument");
    ata_csr *B;
    ATA_TRY(ata_csr_alloc(A->nrows, A->ncols, A->nnz, &B));
    memcpy(B->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof *B->rowptr);
    memcpy(B->col, A->col, (size_t)A->nnz * sizeof *B->col);
    memcpy(B->val, A->val, (size_t)A->nnz * sizeof *B->val);
    *out = B;
    return ATA_OK;
}

/* Row pointers first: the column loop below trusts them. */
static ata_status csr_validate_rowptr(const ata_csr *A, const char *what)
{
    const int n = A->nrows, *Ap = A->rowptr;
    if (Ap[0] != 0) return ata_fail(ATA_ERR_FORMAT, "%s: rowptr[0] = %d, expected 0", what, Ap[0]);
    for (int i = 0; i < n; i++)
        if (Ap[i + 1] < Ap[i])
            return ata_fail(ATA_ERR_FORMAT, "%s: row %d: rowptr decreases (%d -> %d)", what, i, Ap[i], Ap[i + 1]);
    if (Ap[n] != A->nnz)
        return ata_fail(ATA_ERR_FORMAT, "%s: rowptr[%d] = %d but nnz = %d", what, n, Ap[n], A->nnz);
    return ATA_OK;
}

/* Sizes, arrays, row pointers, then columns in range and strictly
 * increasing: everything an index computation trusts, in O(nrows + nnz). */
ata_status csr_check_structure(const ata_csr *A, const char *what)
{
    what = csr_name(what);
    if (!A) return ata_fail(ATA_ERR_ARG, "%s: NULL matrix", what);
    if (A->nrows < 0 || A->ncols < 0 || A->nnz < 0)
        return ata_fail(ATA_ERR_FORMAT, "%s: negative size %d x %d, nnz %d", what, A->nrows, A->ncols, A->nnz);
    if (!A->rowptr || (A->nnz > 0 && (!A->col || !A->val)))
        return ata_fail(ATA_ERR_ARG, "%s: NULL array", what);
    ATA_TRY(csr_validate_rowptr(A, what));
    const int n = A->nrows, m = A->ncols, *Ap = A->rowptr, *Aj = A->col;
    for (int i = 0; i < n; i++) {
        for (int p = Ap[i]; p < Ap[i + 1]; p++) {
            int j = Aj[p];
            if (j < 0 || j >= m)
                return ata_fail(ATA_ERR_INDEX, "%s: row %d: column %d out of range 0..%d", what, i, j, m - 1);
            if (p > Ap[i] && j <= Aj[p - 1])
                return ata_fail(j == Aj[p - 1] ? ATA_ERR_DUPLICATE : ATA_ERR_FORMAT,
                                "%s: row %d: column %d after column %d (columns must strictly increase)",
                                what, i, j, Aj[p - 1]);
        }
    }
    return ATA_OK;
}

ata_status ata_csr_validate(const ata_csr *A, const char *what)
{
    ATA_TRY(csr_check_structure(A, what));
    what = csr_name(what);
    const int n = A->nrows, *Ap = A->rowptr, *Aj = A->col;
    const double *Ax = A->val;
    for (int i = 0; i < n; i++)
        for (int p = Ap[i]; p < Ap[i + 1]; p++)
            if (!isfinite(Ax[p]))
                return ata_fail(ATA_ERR_NONFINITE, "%s: row %d, column %d: value %g is not finite",
                                what, i, Aj[p], Ax[p]);
    return ATA_OK;
}

/* Counting sort by column: visiting rows in order makes every row of the
 * result sorted for free. */
ata_status ata_csr_transpose(const ata_csr *A, ata_csr **out)
{
    if (!A || !out) return ata_fail(ATA_ERR_ARG, "csr transpose: NULL argument");
    const int n = A->nrows, m = A->ncols, *Ap = A->rowptr, *Aj = A->col;
    const double *Ax = A->val;
    ata_csr *B;
    ATA_TRY(ata_csr_alloc(m, n, A->nnz, &B));
    int *Bp = B->rowptr, *Bj = B->col;
    double *Bx = B->val;
    int *next = mem_alloc(((size_t)m + 1) * sizeof *next);
    if (!next) { ata_csr_free(B); return ata_fail(ATA_ERR_NOMEM, "csr transpose: out of memory"); }
    memset(Bp, 0, ((size_t)m + 1) * sizeof *Bp);
    for (int p = 0; p < A->nnz; p++) Bp[Aj[p] + 1]++;
    for (int j = 0; j < m; j++) Bp[j + 1] += Bp[j];
    memcpy(next, Bp, (size_t)m * sizeof *next);
    for (int i = 0; i < n; i++) {
        for (int p = Ap[i]; p < Ap[i + 1]; p++) {
            int q = next[Aj[p]]++;
            Bj[q] = i;
            Bx[q] = Ax[p];
        }
    }
    free(next);
    *out = B;
    return ATA_OK;
}

/* Two passes, count then copy; `upper` keeps j >= i, else j <= i. */
static int csr_keep(int upper, int i, int j) { return upper ? j >= i : j <= i; }

static ata_status csr_triangle(const ata_csr *A, int upper, ata_csr **out)
{
    if (!A || !out) return ata_fail(ATA_ERR_ARG, "csr triangle: NULL argument");
    const int n = A->nrows, *Ap = A->rowptr, *Aj = A->col;
    const double *Ax = A->val;
    int nnz = 0;
    for (int i = 0; i < n; i++)
        for (int p = Ap[i]; p < Ap[i + 1]; p++) nnz += csr_keep(upper, i, Aj[p]);
    ata_csr *B;
    ATA_TRY(ata_csr_alloc(n, A->ncols, nnz, &B));
    int *Bp = B->rowptr, *Bj = B->col, q = 0;
    double *Bx = B->val;
    for (int i = 0; i < n; i++) {
        Bp[i] = q;
        for (int p = Ap[i]; p < Ap[i + 1]; p++) {
            if (!csr_keep(upper, i, Aj[p])) continue;
            Bj[q] = Aj[p];
            Bx[q++] = Ax[p];
        }
    }
    Bp[n] = q;
    *out = B;
    return ATA_OK;
}

ata_status ata_csr_tril(const ata_csr *A, ata_csr **out) { return csr_triangle(A, 0, out); }
ata_status ata_csr_triu(const ata_csr *A, ata_csr **out) { return csr_triangle(A, 1, out); }

/* Position of column j in row i, or -1 (columns are sorted: bisect). */
static int csr_find(const ata_csr *A, int i, int j)
{
    int lo = A->rowptr[i], hi = A->rowptr[i + 1] - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = A->col[mid];
        if (c == j) return mid;
        if (c < j) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

ata_status ata_csr_check_diag(const ata_csr *A, const char *what)
{
    what = csr_name(what);
    if (!A) return ata_fail(ATA_ERR_ARG, "%s: NULL matrix", what);
    if (A->nrows != A->ncols)
        return ata_fail(ATA_ERR_NOT_SQUARE, "%s: %d x %d matrix is not square", what, A->nrows, A->ncols);
    for (int i = 0; i < A->nrows; i++) {
        int p = csr_find(A, i, i);
        if (p < 0)      /* fewer entries than rows: say why no diagonal can be full */
            return ata_fail(ATA_ERR_MISSING_DIAG, "%s: row %d (0-based) has no stored diagonal entry%s", what, i,
                            A->nnz < A->nrows ? " (fewer entries than rows: some rows are empty)" : "");
        if (A->val[p] == 0 || !isfinite(A->val[p]))
            return ata_fail(ATA_ERR_ZERO_PIVOT, "%s: row %d (0-based): diagonal entry is %g", what, i, A->val[p]);
    }
    return ATA_OK;
}

/* splitmix64: a full-period 64-bit generator, good enough for shuffles and
 * identical on every platform, so a seed names one permutation forever. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound): reject the top sliver that would bias the modulo. */
static uint64_t uniform_below(uint64_t *s, uint64_t bound)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound, r;
    do r = splitmix64(s); while (r >= limit);
    return r % bound;
}

ata_status ata_random_perm(int n, uint64_t seed, int **perm_out)
{
    if (!perm_out || n < 0) return ata_fail(ATA_ERR_ARG, "random perm: n = %d or NULL output", n);
    int *perm = mem_alloc(((size_t)n + 1) * sizeof *perm);
    if (!perm) return ata_fail(ATA_ERR_NOMEM, "random perm: out of memory (n = %d)", n);
    uint64_t s = seed;
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {              /* Fisher-Yates */
        int k = (int)uniform_below(&s, (uint64_t)i + 1);
        int t = perm[i]; perm[i] = perm[k]; perm[k] = t;
    }
    *perm_out = perm;
    return ATA_OK;
}

/* Every upper A(i,j) meets its mirror A(j,i) as the next unmatched lower
 * entry of row j (rows visited in order, so each row's lower entries are
 * met in column order), and no lower entry is left over: A == A^T in one
 * pass (a bisection per entry cost twice as much on lap3d:100). Out of
 * memory for the cursors: bisection. */
int ata_csr_is_symmetric(const ata_csr *A)
{
    if (!A || A->nrows != A->ncols) return 0;
    const int n = A->nrows, *Ap = A->rowptr, *Aj = A->col;
    const double *Ax = A->val;
    int *next = mem_alloc(((size_t)n + 1) * sizeof *next);
    if (!next) {
        for (int i = 0; i < n; i++)
            for (int p = Ap[i]; p < Ap[i + 1]; p++) {
                int j = Aj[p], q = j == i ? p : csr_find(A, j, i);
                if (q < 0 || Ax[q] != Ax[p]) return 0;
            }
        return 1;
    }
    memcpy(next, Ap, (size_t)n * sizeof *next);
    int sym = 1;
    for (int i = 0; i < n && sym; i++)
        for (int q = Ap[i]; q < Ap[i + 1]; q++) {
            const int j = Aj[q];
            if (j <= i) continue;
            const int p = next[j]++;
            if (p >= Ap[j + 1] || Aj[p] != i || Ax[p] != Ax[q]) { sym = 0; break; }
        }
    for (int j = 0; j < n && sym; j++)
        if (next[j] < Ap[j + 1] && Aj[next[j]] < j) sym = 0;
    free(next);
    return sym;
}
