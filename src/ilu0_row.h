/* ilu0_row.h - one row of ILU0 (IKJ, Saad Alg. 10.4), shared by the serial
 * reference and every CPU executor so the arithmetic is the same bit for bit.
 * Row i is final once every row k < i with a_ik != 0 is final. */
#ifndef ATA_ILU0_ROW_H
#define ATA_ILU0_ROW_H
#include "ata.h"

/* diag[i] = position of a_ii in A; MISSING_DIAG naming the first row without. */
ata_status ilu0_find_diag(const ata_csr *A, int *diag);
/* The failure for a bad pivot u of row i: ZERO_PIVOT if zero, NONFINITE if
 * Inf or NaN; the reference and every backend report it so. */
ata_status ilu0_pivot_fail(int row, double u);
/* ata_ref_ilu0 on a square matrix whose structure csr_check_structure has
 * passed (ata_spilu0 checks A, then factors its copy: one check, not two). */
ata_status ref_ilu0_checked(ata_csr *A);

/* Position of column j in Aj[lo..hi) (sorted), or -1; *from advances to
 * where the next, larger j can start its search. */
static inline int ilu0_bisect(const int *Aj, int *from, int hi, int j)
{
    int lo = *from, top = hi;
    while (lo < top) {
        const int mid = lo + (top - lo) / 2;
        if (Aj[mid] < j) lo = mid + 1; else top = mid;
    }
    *from = lo;
    return lo < hi && Aj[lo] == j ? lo : -1;
}

/* work: n ints, all -1 on entry and on return. diag[k]: position of a_kk.
 * Returns 0, or 1 if the new pivot u_ii is zero or not finite.
 * Row k's update touches only row i's columns after k: scan row k's upper
 * part against work[] when it is not much longer than that rest of row i,
 * else look each of row i's columns up in row k by bisection, so one dense
 * early row costs O(log n) per later row, not O(n). Both ways apply
 * a_ij -= l_ik * u_kj once per matching j, so the result is bitwise the
 * same. */
static inline int ilu0_row(const int *Ap, const int *Aj, double *Ax,
                           const int *diag, int *work, int i)
{
    const int lo = Ap[i], hi = Ap[i + 1], di = diag[i];
    for (int p = lo; p < hi; p++) work[Aj[p]] = p;
    for (int p = lo; p < di; p++) {
        const int k = Aj[p], kq = diag[k] + 1, khi = Ap[k + 1];
        const double lik = Ax[p] / Ax[diag[k]];
        Ax[p] = lik;
        if ((long long)(hi - p - 1) * 16 < khi - kq) {
            int from = kq;
            for (int w = p + 1; w < hi && from < khi; w++) {
                const int q = ilu0_bisect(Aj, &from, khi, Aj[w]);
                if (q >= 0) Ax[w] -= lik * Ax[q];
            }
            continue;
        }
        for (int q = kq; q < khi; q++) {
            const int w = work[Aj[q]];
            if (w >= 0) Ax[w] -= lik * Ax[q];
        }
    }
    for (int p = lo; p < hi; p++) work[Aj[p]] = -1;
    const double u = Ax[di];
    return !(u != 0 && u - u == 0);
}

/* Row k of U (kq..khi) much longer than what of row i follows column k
 * (p + 1..lhi in L, ulo..uhi in U): each of those looked up in row k by
 * bisection, as ilu0_row does (the same subtractions in the same order).
 * 1 if it did, 0 if row k is to be scanned. */
static inline int ilu0_split_bisects(const int *Lj, double *Lx, int p, int lhi, const int *Uj, double *Ux, int ulo,
                                     int uhi, int kq, int khi, double lik)
{
    if ((long long)(lhi - p - 1 + uhi - ulo) * 16 >= khi - kq) return 0;
    int from = kq;
    for (int w = p + 1; w < lhi && from < khi; w++) {
        const int q = ilu0_bisect(Uj, &from, khi, Lj[w]);
        if (q >= 0) Lx[w] -= lik * Ux[q];
    }
    for (int w = ulo; w < uhi && from < khi; w++) {
        const int q = ilu0_bisect(Uj, &from, khi, Uj[w]);
        if (q >= 0) Ux[w] -= lik * Ux[q];
    }
    return 1;
}

/* The same row on the factors kept split, as the solve plans hold them
 * (PCG on the CPU backend factors in place there): L (Lp, Lj, Lx) the
 * strictly lower part, U (Up, Uj, Ux) the diagonal first, then the upper
 * part. Row i of A is row i of L followed by row i of U, so the operations
 * and their order are ilu0_row's: bitwise its result. work[j] holds the
 * position of column j in L's part of row i (j < i) or in U's (j >= i).
 * Row k's columns are sorted, so its scan splits at column i: the entries
 * before update L, the rest U, one test each (against a three-way test per
 * entry, this kernel alone, one thread: bcsstk13 8-26% faster, lap3d27 and
 * ex19's pattern 6-10%, lap3d:60 and convdiff level, Pd 4% slower). */
static inline int ilu0_row_split(const int *Lp, const int *Lj, double *Lx,
                                 const int *Up, const int *Uj, double *Ux, int *work, int i)
{
    const int llo = Lp[i], lhi = Lp[i + 1], ulo = Up[i], uhi = Up[i + 1];
    for (int p = llo; p < lhi; p++) work[Lj[p]] = p;
    for (int q = ulo; q < uhi; q++) work[Uj[q]] = q;
    for (int p = llo; p < lhi; p++) {
        const int k = Lj[p], kq = Up[k] + 1, khi = Up[k + 1];
        const double lik = Lx[p] / Ux[Up[k]];
        Lx[p] = lik;
        if (ilu0_split_bisects(Lj, Lx, p, lhi, Uj, Ux, ulo, uhi, kq, khi, lik)) continue;
        int q = kq;
        for (; q < khi && Uj[q] < i; q++) {
            const int w = work[Uj[q]];
            if (w >= 0) Lx[w] -= lik * Ux[q];
        }
        for (; q < khi; q++) {
            const int w = work[Uj[q]];
            if (w >= 0) Ux[w] -= lik * Ux[q];
        }
    }
    for (int p = llo; p < lhi; p++) work[Lj[p]] = -1;
    for (int q = ulo; q < uhi; q++) work[Uj[q]] = -1;
    const double u = Ux[ulo];
    return !(u != 0 && u - u == 0);
}

/* ilu0_row_split with a table instead of a test: slot[j] is where column
 * j of row i lies (in Lx or Ux) while row i runs, else one of ILU0_SPARE
 * scratch doubles (spare[j & (ILU0_SPARE - 1)], many so that misses do not
 * wait on each other), so every entry of row k is subtracted somewhere and
 * no branch depends on the pattern. The matching entries get the same
 * operations in the same order: bitwise ilu0_row_split. Costs a pointer
 * per column and a store per miss; pays where hits and misses alternate
 * without a pattern (FEM and circuit matrices: cpu_exec.c times both). */
#define ILU0_SPARE 64
static inline int ilu0_row_split_table(const int *Lp, const int *Lj, double *Lx, const int *Up, const int *Uj,
                                       double *Ux, double **slot, double *spare, int i)
{
    const int llo = Lp[i], lhi = Lp[i + 1], ulo = Up[i], uhi = Up[i + 1];
    for (int p = llo; p < lhi; p++) slot[Lj[p]] = Lx + p;
    for (int q = ulo; q < uhi; q++) slot[Uj[q]] = Ux + q;
    for (int p = llo; p < lhi; p++) {
        const int k = Lj[p], kq = Up[k] + 1, khi = Up[k + 1];
        const double lik = Lx[p] / Ux[Up[k]];
        Lx[p] = lik;
        if (ilu0_split_bisects(Lj, Lx, p, lhi, Uj, Ux, ulo, uhi, kq, khi, lik)) continue;
        for (int q = kq; q < khi; q++) *slot[Uj[q]] -= lik * Ux[q];
    }
    for (int p = llo; p < lhi; p++) slot[Lj[p]] = spare + (Lj[p] & (ILU0_SPARE - 1));
    for (int q = ulo; q < uhi; q++) slot[Uj[q]] = spare + (Uj[q] & (ILU0_SPARE - 1));
    const double u = Ux[ulo];
    return !(u != 0 && u - u == 0);
}

#endif
