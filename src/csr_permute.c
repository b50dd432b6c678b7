/* csr_permute.c - the symmetric permutation P A P^T, whole or one triangle
 * of it, with the map from its entries back to A's (csr.h), in two passes
 * over A shared by a context's workers. Apart from csr.c so that a GPU
 * module, which carries csr.c for its reference solves, needs no pool. */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu_pool.h"
#include "csr.h"
#include "error.h"
#include "mem.h"

/* inv[perm[i]] = i; fails unless perm is a permutation of 0..n-1. */
static ata_status perm_inverse(const int *perm, int n, int **inv_out)
{
    int *inv = mem_alloc(((size_t)n + 1) * sizeof *inv);
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
    csr_pair *t = mem_alloc((size_t)len * sizeof *t);
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
#define PERMUTE_LOCAL_ROW 256     /* rows up to this long sort on the stack */

typedef struct {
    const ata_csr *A;
    const int *perm;
    long long lo;
    unsigned long long width;
    ata_csr *B;
    int *map;
    int phase;              /* 0: count into B->rowptr[r + 1]; 1: fill */
    int all;                /* CSR_ALL: a row keeps its length, no count needed */
    atomic_int failed;      /* a long row's sort found no memory */
} permute_job;

void csr_share_rows(const int *Ap, int n, int tid, int nt, int *r0, int *r1)
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
    csr_share_rows(Ap, n, tid, nt, &i0, &i1);
    if (J->phase == 0) {
        for (int i = i0; i < i1; i++) {
            const int r = perm ? perm[i] : i;
            int k = J->all ? Ap[i + 1] - Ap[i] : 0;
            for (int p = Ap[i]; p < Ap[i + 1] && !J->all; p++) {
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
    int local[PERMUTE_LOCAL_ROW];
    for (int i = i0; i < i1; i++) {
        const int r = perm ? perm[i] : i, w0 = Bp[r];
        int w = w0;
        if (!mp && !perm) {     /* no map asked for and no sort: values directly */
            for (int p = Ap[i]; p < Ap[i + 1]; p++) {
                const int c = Aj[p];
                if ((unsigned long long)((long long)c - r - J->lo) > J->width) continue;
                bj[w] = c;
                if (ax) bx[w] = ax[p];
                w++;
            }
            continue;
        }
        /* src[k]: where the row's k-th kept entry came from, sorted along
         * with the columns; the map itself, or (none asked for) a buffer
         * of the row's own, so the map's nnz ints are not made for nothing. */
        const int len = Ap[i + 1] - Ap[i];
        int *src = mp ? mp + w0 : len <= PERMUTE_LOCAL_ROW ? local : mem_alloc((size_t)len * sizeof *src);
        if (!src) { atomic_store(&J->failed, 1); continue; }
        for (int p = Ap[i]; p < Ap[i + 1]; p++) {
            const int c = perm ? perm[Aj[p]] : Aj[p];
            if ((unsigned long long)((long long)c - r - J->lo) > J->width) continue;
            bj[w] = c;      /* never past the row's end: the next row may be another worker's */
            src[w++ - w0] = p;
        }
        if (perm && sort_row(bj + w0, src, w - w0) != ATA_OK) atomic_store(&J->failed, 1);
        if (ax)
            for (int q = w0; q < w; q++) bx[q] = ax[src[q - w0]];
        if (!mp && src != local) free(src);
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
    J.all = part == CSR_ALL;
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
        B->col = mem_alloc(((size_t)B->nnz + 1) * sizeof *B->col);
        B->val = mem_alloc(((size_t)B->nnz + 1) * sizeof *B->val);
        if (map_out) map = mem_alloc(((size_t)B->nnz + 1) * sizeof *map);
        if (!B->col || !B->val || (map_out && !map)) st = ata_fail(ATA_ERR_NOMEM, "permute: out of memory (nnz = %d)", B->nnz);
    }
    if (st == ATA_OK) {
        J.map = map;
        J.phase = 1;
        permute_run(pool, &J);
        if (atomic_load(&J.failed)) st = ata_fail(ATA_ERR_NOMEM, "permute: out of memory for a long row");
    }
    if (st != ATA_OK) { free(map); ata_csr_free(B); return st; }
    if (map_out) *map_out = map;
    *out = B;
    return ATA_OK;
}

ata_status ata_csr_permute_sym(const ata_csr *A, const int *perm, ata_csr **out)
{
    if (!A || !perm || !out) return ata_fail(ATA_ERR_ARG, "permute: NULL argument");
    return csr_permute_part(A, perm, CSR_ALL, NULL, out, NULL);
}

