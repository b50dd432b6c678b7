/* reorder.c - symmetric orderings applied before factorisation:
 * reverse Cuthill-McKee and METIS nested dissection (METIS_NodeND).
 * Both return perm[old] = new. */
#include <stdlib.h>
#include <string.h>
#include <metis.h>
#include "error.h"
#include "reorder.h"

/* Graph of A + A^T without the diagonal, as METIS wants it. */
static ata_status sym_graph(const ata_csr *A, int **xadj_out, int **adj_out)
{
    ata_csr *At;
    ATA_TRY(ata_csr_transpose(A, &At));
    const int n = A->nrows;
    int *xadj = calloc((size_t)n + 1, sizeof *xadj);
    int *adj = malloc(((size_t)A->nnz + At->nnz + 1) * sizeof *adj);
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
    idx_t *mperm = malloc(((size_t)n + 1) * sizeof *mperm);
    if (!mperm) return ata_fail(ATA_ERR_NOMEM, "reorder: out of memory");
    METIS_SetDefaultOptions(opts);
    /* METIS: row k of A' is row mperm[k] of A; iperm[i] = new index of i. */
    int rc = METIS_NodeND(&nv, xadj, adj, NULL, opts, mperm, perm);
    free(mperm);
    return rc == METIS_OK ? ATA_OK : ata_fail(ATA_ERR_INTERNAL, "reorder: METIS_NodeND failed (%d)", rc);
}

/* BFS from a minimum-degree vertex of each component, neighbours by
 * increasing degree, then reversed (George & Liu). */
static ata_status order_rcm(int n, const int *xadj, const int *adj, int *perm)
{
    int *seq = malloc(((size_t)n + 1) * sizeof *seq), *nb = malloc(((size_t)n + 1) * sizeof *nb);
    char *seen = calloc((size_t)n + 1, 1);
    if (!seq || !nb || !seen) { free(seq); free(nb); free(seen); return ata_fail(ATA_ERR_NOMEM, "reorder: out of memory"); }
    int head = 0, tail = 0;
    while (tail < n) {
        int root = -1;
        for (int v = 0; v < n; v++)
            if (!seen[v] && (root < 0 || xadj[v + 1] - xadj[v] < xadj[root + 1] - xadj[root])) root = v;
        seen[root] = 1;
        seq[tail++] = root;
        while (head < tail) {
            int v = seq[head++], k = 0;
            for (int q = xadj[v]; q < xadj[v + 1]; q++)
                if (!seen[adj[q]]) { seen[adj[q]] = 1; nb[k++] = adj[q]; }
            /* insertion sort by degree: neighbour lists are short */
            for (int a = 1; a < k; a++) {
                int w = nb[a], dw = xadj[w + 1] - xadj[w], b = a - 1;
                while (b >= 0 && xadj[nb[b] + 1] - xadj[nb[b]] > dw) { nb[b + 1] = nb[b]; b--; }
                nb[b + 1] = w;
            }
            for (int a = 0; a < k; a++) seq[tail++] = nb[a];
        }
    }
    for (int k = 0; k < n; k++) perm[seq[k]] = n - 1 - k;
    free(seq); free(nb); free(seen);
    return ATA_OK;
}

ata_status reorder_perm(const ata_csr *A, ata_reorder how, int **perm_out)
{
    const int n = A->nrows;
    int *perm = malloc(((size_t)n + 1) * sizeof *perm), *xadj = NULL, *adj = NULL;
    if (!perm) return ata_fail(ATA_ERR_NOMEM, "reorder: out of memory");
    ata_status st = sym_graph(A, &xadj, &adj);
    if (st == ATA_OK) st = how == ATA_REORDER_ND ? order_nd(n, xadj, adj, perm) : order_rcm(n, xadj, adj, perm);
    free(xadj);
    free(adj);
    if (st != ATA_OK) { free(perm); return st; }
    *perm_out = perm;
    return ATA_OK;
}
