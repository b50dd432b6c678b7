/* ilu0_row.h - one row of ILU0 (IKJ, Saad Alg. 10.4), shared by the serial
 * reference and every CPU executor so the arithmetic is the same bit for bit.
 * Row i is final once every row k < i with a_ik != 0 is final. */
#ifndef ATA_ILU0_ROW_H
#define ATA_ILU0_ROW_H
#include "ata.h"

/* diag[i] = position of a_ii in A; MISSING_DIAG naming the first row without. */
ata_status ilu0_find_diag(const ata_csr *A, int *diag);

/* work: n ints, all -1 on entry and on return. diag[k]: position of a_kk.
 * Returns 0, or 1 if the new pivot u_ii is zero or not finite. */
static inline int ilu0_row(const int *Ap, const int *Aj, double *Ax,
                           const int *diag, int *work, int i)
{
    const int lo = Ap[i], hi = Ap[i + 1], di = diag[i];
    for (int p = lo; p < hi; p++) work[Aj[p]] = p;
    for (int p = lo; p < di; p++) {
        const int k = Aj[p];
        const double lik = Ax[p] / Ax[diag[k]];
        Ax[p] = lik;
        for (int q = diag[k] + 1; q < Ap[k + 1]; q++) {
            const int w = work[Aj[q]];
            if (w >= 0) Ax[w] -= lik * Ax[q];
        }
    }
    for (int p = lo; p < hi; p++) work[Aj[p]] = -1;
    const double u = Ax[di];
    return !(u != 0 && u - u == 0);
}

#endif
