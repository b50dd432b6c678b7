/* reorder.c - symmetric orderings applied before factorisation:
 * reverse Cuthill-McKee and METIS nested dissection (METIS_NodeND).
 * Both return perm[old] = new. */
#include <stdlib.h>
#include <string.h>
#include <metis.h>
#include "error.h"
#include "reorder.h"
#include "mem.h"

/* Graph of A + A^T without the diagonal, as METIS wants it. */
static ata_status sym_graph(const ata_csr *A, int **xadj_out, int **adj_out)
{
    ata_csr *At;
    ATA_TRY(ata_csr_transpose(A, &At));
    const int n = A->nrows;
    int *xadj = mem_calloc((size_t)n + 1, sizeof *xadj);
    int *adj = mem_alloc(((size_t)A->nnz + At->nnz + 1) * sizeof *adj);
    if (!xadj || !adj) { free(xadj); free(adj); ata_csr_free(At); return ata_fail(ATA_ERR_NOMEM, "reorder: out of memory"); }
    for (int i = 0; i < n; i++) {
        /* Merge two sorted rows, dropping i itself and duplicates. */
        int p = A->rowptr[i], pe = A->rowptr[i + 1], q = At->rowptr[i], qe = At->rowptr[i + 1], last = -1;
        xadj[i + 1] = xadj[i];
        while (p < pe || q < qe) {
            int j = q >= qe || (p < pe && A->col[p] <= At->col[q]) ? A->col[p++] : At->col[q++];
            if (j != i && j != last) adj[xadj[i + 1]++] = j;
            last = j;
        }
    }
    ata_csr_free(At);
    *xadj_out = xadj;
    *adj_out = adj;
    return ATA_OK;
}

static ata_status order_nd(int n, int *xadj, int *adj, int *perm)
{
    idx_t nv = n, opts[METIS_NOPTIONS];
    idx_t *mperm = mem_alloc(((size_t)n + 1) * sizeof *mperm);
    if (!mperm) return ata_fail(ATA_ERR_NOMEM, "reorder: out of memory");
    METIS_SetDefaultOptions(opts);
    /* METIS: row k of A' is row mperm[k] of A; iperm[i] = new index of i. */
    int rc = METIS_NodeND(&nv, xadj, adj, NULL, opts, mperm, perm);
    free(mperm);
    return rc == METIS_OK ? ATA_OK : ata_fail(ATA_ERR_INTERNAL, "reorder: METIS_NodeND failed (%d)", rc);
}

/* Stable merge sort of v[0..k) by degree (tmp: k ints): the same order
 * as an insertion sort, without its k^2 on a hub's neighbour list. */
static void rcm_sort_by_degree(int *v, int *tmp, int k, const int *xadj)
{
    if (k < 2) return;
    if (k <= 16) {                  /* insertion sort: short lists */
        for (int a = 1; a < k; a++) {
            int w = v[a], dw = xadj[w + 1] - xadj[w], b = a - 1;
            while (b >= 0 && xadj[v[b] + 1] - xadj[v[b]] > dw) { v[b + 1] = v[b]; b--; }
            v[b + 1] = w;
        }
        return;
    }
    const int h = k / 2;
    rcm_sort_by_degree(v, tmp, h, xadj);
    rcm_sort_by_degree(v + h, tmp, k - h, xadj);
    int a = 0, b = h, t = 0;
    while (a < h && b < k)          /* ties take the left run first: stable */
        tmp[t++] = xadj[v[b] + 1] - xadj[v[b]] < xadj[v[a] + 1] - xadj[v[a]] ? v[b++] : v[a++];
    while (a < h) tmp[t++] = v[a++];
    while (b < k) tmp[t++] = v[b++];
    memcpy(v, tmp, (size_t)k * sizeof *v);
}

/* BFS from a minimum-degree vertex of each component (the lowest index
 * among equal degrees), neighbours by increasing degree, then reversed
 * (George & Liu). Roots come from one pass over the vertices sorted by
 * degree (a stable counting sort), so finding every root costs O(n) in
 * all, not O(n) per component: the same ordering, in linear time. */
static ata_status order_rcm(int n, const int *xadj, const int *adj, int *perm)
{
    int *seq = mem_alloc(((size_t)n + 1) * sizeof *seq), *nb = mem_alloc(((size_t)n + 1) * sizeof *nb);
    int *byd = mem_alloc(((size_t)n + 1) * sizeof *byd), *cnt = mem_calloc((size_t)n + 2, sizeof *cnt);
    int *tmp = mem_alloc(((size_t)n + 1) * sizeof *tmp);
    char *seen = mem_calloc((size_t)n + 1, 1);
    if (!seq || !nb || !byd || !cnt || !tmp || !seen) {
        free(seq); free(nb); free(byd); free(cnt); free(tmp); free(seen);
        return ata_fail(ATA_ERR_NOMEM, "reorder: out of memory");
    }
    for (int v = 0; v < n; v++) cnt[xadj[v + 1] - xadj[v] + 1]++;    /* degree <= n - 1 */
    for (int d = 0; d < n; d++) cnt[d + 1] += cnt[d];
    for (int v = 0; v < n; v++) byd[cnt[xadj[v + 1] - xadj[v]]++] = v;
    int head = 0, tail = 0, next_root = 0;
    while (tail < n) {
        while (seen[byd[next_root]]) next_root++;
        const int root = byd[next_root];
        seen[root] = 1;
        seq[tail++] = root;
        while (head < tail) {
            int v = seq[head++], k = 0;
            for (int q = xadj[v]; q < xadj[v + 1]; q++)
                if (!seen[adj[q]]) { seen[adj[q]] = 1; nb[k++] = adj[q]; }
            rcm_sort_by_degree(nb, tmp, k, xadj);
            for (int a = 0; a < k; a++) seq[tail++] = nb[a];
        }
    }
    for (int k = 0; k < n; k++) perm[seq[k]] = n - 1 - k;
    free(seq); free(nb); free(byd); free(cnt); free(tmp); free(seen);
    return ATA_OK;
}

ata_status reorder_perm(const ata_csr *A, ata_reorder how, int **perm_out)
{
    const int n = A->nrows;
    int *perm = mem_alloc(((size_t)n + 1) * sizeof *perm), *xadj = NULL, *adj = NULL;
    if (!perm) return ata_fail(ATA_ERR_NOMEM, "reorder: out of memory");
    ata_status st = sym_graph(A, &xadj, &adj);
    if (st == ATA_OK) st = how == ATA_REORDER_ND ? order_nd(n, xadj, adj, perm) : order_rcm(n, xadj, adj, perm);
    free(xadj);
    free(adj);
    if (st != ATA_OK) { free(perm); return st; }
    *perm_out = perm;
    return ATA_OK;
}
