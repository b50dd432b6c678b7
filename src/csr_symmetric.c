/* csr_symmetric.c - whether A equals its transpose, its rows shared by a
 * context's workers (csr.h). ata_csr_is_symmetric (csr.c) is the one-thread
 * answer: a cursor per row merges each row's upper entries into the rows
 * they name, in order, and that cursor is shared state. Here each upper
 * entry (i, j) looks for (j, i) in row j on its own, so rows split freely:
 * rows are sorted without repeats (csr_check_structure), so every upper
 * entry finding its mirror, and as many strictly lower entries as strictly
 * upper ones, leave none unmatched. PCG's setup asks this of every matrix
 * (circuit:2000000: 85 of its ~800 ms, serial). */
#include <stdatomic.h>
#include "cpu/cpu_pool.h"
#include "csr.h"

#define SYM_LINEAR_MAX 16       /* rows up to this long are searched in order */

typedef struct {
    const ata_csr *A;
    atomic_int asym;            /* a worker found a mismatch */
    atomic_llong below_minus_above;     /* strictly lower entries less strictly upper ones */
} sym_job;

/* Row j's entry at column i (i < j, so among its first entries), or -1. */
static int mirror(const int *Ap, const int *Aj, int j, int i)
{
    int lo = Ap[j], hi = Ap[j + 1];
    if (hi - lo <= SYM_LINEAR_MAX) {
        for (; lo < hi && Aj[lo] < i; lo++) {}
        return lo < hi && Aj[lo] == i ? lo : -1;
    }
    while (lo < hi) {
        const int m = lo + (hi - lo) / 2;
        if (Aj[m] < i) lo = m + 1; else hi = m;
    }
    return lo < Ap[j + 1] && Aj[lo] == i ? lo : -1;
}

static void sym_rows(void *arg, int tid, int nt)
{
    sym_job *J = arg;
    const ata_csr *A = J->A;
    const int *Ap = A->rowptr, *Aj = A->col;
    const double *Ax = A->val;
    int i0, i1;
    csr_share_rows(Ap, A->nrows, tid, nt, &i0, &i1);
    long long below = 0, above = 0;
    for (int i = i0; i < i1; i++) {
        if ((i & 4095) == 0 && atomic_load_explicit(&J->asym, memory_order_relaxed)) break;
        for (int q = Ap[i]; q < Ap[i + 1]; q++) {
            const int j = Aj[q];
            if (j < i) { below++; continue; }
            if (j == i) continue;
            above++;
            const int p = mirror(Ap, Aj, j, i);
            if (p < 0 || Ax[p] != Ax[q]) {
                atomic_store_explicit(&J->asym, 1, memory_order_relaxed);
                return;
            }
        }
    }
    atomic_fetch_add(&J->below_minus_above, below - above);
}

int csr_is_symmetric_on(const ata_csr *A, cpu_pool *pool)
{
    if (!pool) return ata_csr_is_symmetric(A);
    if (!A || A->nrows != A->ncols) return 0;
    sym_job J = { .A = A };
    atomic_init(&J.asym, 0);
    atomic_init(&J.below_minus_above, 0);
    cpu_pool_run_sized(pool, sym_rows, &J, (size_t)A->nnz);
    return !atomic_load(&J.asym) && atomic_load(&J.below_minus_above) == 0;
}
