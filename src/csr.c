/* csr.c - the one matrix type: allocation, checks, transpose, triangles,
 * symmetric permutation. Every routine returns a fresh matrix with strictly
 * increasing columns in each row, so callers never sort. Rows in messages
 * are 0-based, as everywhere in the library. */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_pool.h"
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
    A->rowptr = calloc((size_t)nrows + 1, sizeof *A->rowptr);
    A->col = mem_alloc_big(((size_t)nnz + 1) * sizeof *A->col);
    A->val = mem_alloc_big(((size_t)nnz + 1) * sizeof *A->val);
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
    int *next = malloc(((size_t)m + 1) * sizeof *next);
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

/* inv[perm[i]] = i; fails unless perm is a permutation of 0..n-1. */
static ata_status perm_inverse(const int *perm, int n, int **inv_out)
{
    int *inv = malloc(((size_t)n + 1) * sizeof *inv);
    if (!inv) return ata_fail(ATA_ERR_NOMEM, "permute: out of memory (n = %d)", n);
    for (int i = 0; i < n; i++) inv[i] = -1;
    for (int i = 0; i < n; i++) {
        int k = perm[i];
        if (k < 0 || k >= n || inv[k] >= 0) {
            free(inv);
            return ata_fail(ATA_ERR_ARG, "permute: perm[%d] = %d is out of range or repeated (n = %d)", i, k, n);
        }
        inv[k] = i;
    }
    *inv_out = inv;
    return ATA_OK;
}

/* The band of c - r that `part` keeps: lo <= c - r <= hi. */
static void part_band(int part, long long *lo, long long *hi)
{
    *lo = part == CSR_UPPER ? 0 : part == CSR_STRICT_UPPER ? 1 : -(long long)INT_MAX - 1;
    *hi = part == CSR_LOWER ? 0 : part == CSR_STRICT_LOWER ? -1 : INT_MAX;
}

typedef struct { int col, src; } csr_pair;

static int cmp_pair(const void *a, const void *b)
{
    const csr_pair *x = a, *y = b;
    return (x->col > y->col) - (x->col < y->col);
}

/* Sort one row's (col, src) by col: insertion for short rows (all of a
 * stencil's; an order that keeps neighbours in order leaves them sorted),
 * qsort for long ones (a dense row must not cost len^2). */
static ata_status sort_row(int *col, int *src, int len)
{
    if (len <= 32) {
        for (int a = 1; a < len; a++) {
            int c = col[a], s = src[a], b = a - 1;
            for (; b >= 0 && col[b] > c; b--) { col[b + 1] = col[b]; src[b + 1] = src[b]; }
            col[b + 1] = c;
            src[b + 1] = s;
        }
        return ATA_OK;
    }
    int sorted = 1;
    for (int a = 1; a < len && sorted; a++) sorted = col[a - 1] < col[a];
    if (sorted) return ATA_OK;
    csr_pair *t = malloc((size_t)len * sizeof *t);
    if (!t) return ATA_ERR_NOMEM;     /* the caller reports it, on its own thread */
    for (int a = 0; a < len; a++) { t[a].col = col[a]; t[a].src = src[a]; }
    qsort(t, (size_t)len, sizeof *t, cmp_pair);
    for (int a = 0; a < len; a++) { col[a] = t[a].col; src[a] = t[a].src; }
    free(t);
    return ATA_OK;
}

/* Row by row of A, in A's order: old row i becomes new row perm[i], its
 * columns relabelled, filtered and sorted in place. A is read as a stream
 * and each row lands in one place (visiting the new rows instead reads A
 * at random, ~10 cache misses a row: 6x slower on a 7-point Laplacian).
 * One pass counts the kept entries of every row, one fills; both split
 * over the pool's workers by A's entries, so the first touch of the
 * result's pages is shared too. No transpose. */
typedef struct {
    const ata_csr *A;
    const int *perm;
    long long lo;
    unsigned long long width;
    ata_csr *B;
    int *map;
    int phase;              /* 0: count into B->rowptr[r + 1]; 1: fill */
    atomic_int failed;      /* a long row's sort found no memory */
} permute_job;

/* Rows of A whose entries start in worker tid's share of nnz. */
static void share_rows(const int *Ap, int n, int tid, int nt, int *r0, int *r1)
{
    const long long nnz = Ap[n];
    int b[2];
    for (int e = 0; e < 2; e++) {
        const long long want = nnz * (tid + e) / nt;
        int lo = 0, hi = n;
        while (lo < hi) { int m = lo + (hi - lo) / 2; if (Ap[m] < want) lo = m + 1; else hi = m; }
        b[e] = lo;
    }
    *r0 = tid == 0 ? 0 : b[0];
    *r1 = tid == nt - 1 ? n : b[1];
}

static void permute_rows(void *arg, int tid, int nt)
{
    permute_job *J = arg;
    const ata_csr *A = J->A;
    const int n = A->nrows, *restrict Ap = A->rowptr, *restrict Aj = A->col, *perm = J->perm;
    int *restrict Bp = J->B->rowptr;
    int i0, i1;
    share_rows(Ap, n, tid, nt, &i0, &i1);
    if (J->phase == 0) {
        for (int i = i0; i < i1; i++) {
            const int r = perm ? perm[i] : i;
            int k = 0;
            for (int p = Ap[i]; p < Ap[i + 1]; p++) {
                const int c = perm ? perm[Aj[p]] : Aj[p];
                k += (unsigned long long)((long long)c - r - J->lo) <= J->width;
            }
            Bp[r + 1] = k;
        }
        return;
    }
    int *restrict bj = J->B->col, *restrict mp = J->map;
    double *restrict bx = J->B->val;
    const double *restrict ax = A->val;
    for (int i = i0; i < i1; i++) {
        const int r = perm ? perm[i] : i, w0 = Bp[r];
        int w = w0;
        for (int p = Ap[i]; p < Ap[i + 1]; p++) {
            const int c = perm ? perm[Aj[p]] : Aj[p];
            if ((unsigned long long)((long long)c - r - J->lo) > J->width) continue;
            bj[w] = c;      /* never past the row's end: the next row may be another worker's */
            mp[w++] = p;
        }
        if (perm && sort_row(bj + w0, mp + w0, w - w0) != ATA_OK) atomic_store(&J->failed, 1);
        for (int q = w0; q < w; q++) bx[q] = ax[mp[q]];
    }
}

static void permute_run(cpu_pool *pool, permute_job *J)
{
    if (pool) cpu_pool_run_sized(pool, permute_rows, J, (size_t)J->A->nnz);
    else permute_rows(J, 0, 1);
}

ata_status csr_permute_part(const ata_csr *A, const int *perm, int part, cpu_pool *pool,
                            ata_csr **out, int **map_out)
{
    if (!A || !out) return ata_fail(ATA_ERR_ARG, "permute: NULL argument");
    const int n = A->nrows;
    if (n != A->ncols)
        return ata_fail(ATA_ERR_NOT_SQUARE, "permute: %d x %d matrix is not square", n, A->ncols);
    permute_job J;
    memset(&J, 0, sizeof J);
    J.A = A;
    J.perm = perm;
    if (perm) {     /* only checked: the rows are visited in A's order */
        int *inv = NULL;
        ATA_TRY(perm_inverse(perm, n, &inv));
        free(inv);
    }
    long long lo, hi;
    part_band(part, &lo, &hi);
    J.lo = lo;
    J.width = (unsigned long long)(hi - lo);
    atomic_init(&J.failed, 0);
    ata_csr *B = NULL;
    int *map = NULL;
    ata_status st = ata_csr_alloc(n, n, 0, &B);     /* rowptr now, the rest once counted */
    if (st == ATA_OK) {
        J.B = B;
        permute_run(pool, &J);
        B->rowptr[0] = 0;
        for (int r = 0; r < n; r++) B->rowptr[r + 1] += B->rowptr[r];
        B->nnz = B->rowptr[n];
        free(B->col);
        free(B->val);
        B->col = mem_alloc_big(((size_t)B->nnz + 1) * sizeof *B->col);
        B->val = mem_alloc_big(((size_t)B->nnz + 1) * sizeof *B->val);
        map = mem_alloc_big(((size_t)B->nnz + 1) * sizeof *map);
        if (!B->col || !B->val || !map) st = ata_fail(ATA_ERR_NOMEM, "permute: out of memory (nnz = %d)", B->nnz);
    }
    if (st == ATA_OK) {
        J.map = map;
        J.phase = 1;
        permute_run(pool, &J);
        if (atomic_load(&J.failed)) st = ata_fail(ATA_ERR_NOMEM, "permute: out of memory sorting a long row");
    }
    if (st != ATA_OK) { free(map); ata_csr_free(B); return st; }
    if (map_out) *map_out = map;
    else free(map);
    *out = B;
    return ATA_OK;
}

ata_status ata_csr_permute_sym(const ata_csr *A, const int *perm, ata_csr **out)
{
    if (!A || !perm || !out) return ata_fail(ATA_ERR_ARG, "permute: NULL argument");
    return csr_permute_part(A, perm, CSR_ALL, NULL, out, NULL);
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
    int *perm = malloc(((size_t)n + 1) * sizeof *perm);
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
    int *next = malloc(((size_t)n + 1) * sizeof *next);
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
