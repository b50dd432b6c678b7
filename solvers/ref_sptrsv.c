/* ref_sptrsv.c - serial reference triangular solves (Algorithm 5).
 * Pull over CSR: x_i = (b_i - sum_{j in row i, off-diagonal} t_ij x_j) / t_ii,
 * summing far to near: a lower row in stored order, an upper row in reverse
 * stored order (rows sorted by column: the x solved longest ago first). The
 * x solved just before row i then comes last, so a row's other products
 * need not wait for it: a chain of rows (natural order, a node) costs one
 * product a row on its critical path, not the whole row. It is also the
 * order push (below) subtracts in. Every runtime pull executor sums in the
 * same order, which is what makes its result bitwise equal to this one. With
 * `inv` (a factor's plans: plan_desc.diag_inv) the stored diagonal is 1/t_ii
 * and multiplies, as the runtime's does then; diag ATA_NON_UNIT_INV
 * multiplies by 1/t_ii rounded here, as a plan that inverted its copy. */
#include <math.h>
#include "error.h"
#include "ref_backend.h"

/* A solve that overflows (or meets NaN/Inf in b) says so instead of
 * returning Inf; every executor reports the first such row too. */
static ata_status not_finite(int i, double v)
{
    return ata_fail(ATA_ERR_NONFINITE, "sptrsv: row %d: x = %g is not finite (overflow, or NaN/Inf in b)", i, v);
}

static int in_triangle(ata_uplo uplo, int i, int j)
{
    return uplo == ATA_LOWER ? j < i : j > i;
}

ata_status ref_sptrsv_csr(const ata_csr *T, ata_uplo uplo, ata_diag diag, int inv, const double *b, double *x)
{
    if (!T || !b || !x) return ata_fail(ATA_ERR_ARG, "sptrsv: NULL argument");
    if (T->nrows != T->ncols)
        return ata_fail(ATA_ERR_NOT_SQUARE, "sptrsv: matrix is %d x %d", T->nrows, T->ncols);
    if ((unsigned)diag > ATA_NON_UNIT_INV) return ata_fail(ATA_ERR_ARG, "sptrsv: bad diag %d", (int)diag);
    const int n = T->nrows, *Tp = T->rowptr, *Tj = T->col;
    const double *Tx = T->val;
    for (int k = 0; k < n; k++) {
        int i = uplo == ATA_LOWER ? k : n - 1 - k;
        double s = b[i], d = 0;
        int has_d = 0;
        for (int e = Tp[i]; e < Tp[i + 1]; e++) {
            const int p = uplo == ATA_LOWER ? e : Tp[i] + Tp[i + 1] - 1 - e;   /* far to near */
            int j = Tj[p];
            if (in_triangle(uplo, i, j)) s -= Tx[p] * x[j];
            else if (j == i) { d = Tx[p]; has_d = 1; }
        }
        if (diag != ATA_UNIT) {
            if (!has_d) return ata_fail(ATA_ERR_MISSING_DIAG, "sptrsv: row %d has no diagonal entry", i);
            if (d == 0) return ata_fail(ATA_ERR_ZERO_PIVOT, "sptrsv: zero diagonal in row %d", i);
            s = inv ? s * d : diag == ATA_NON_UNIT_INV ? s * (1.0 / d) : s / d;
        }
        if (!isfinite(s)) return not_finite(i, s);
        x[i] = s;
    }
    return ATA_OK;
}

ata_status ata_ref_sptrsv_csr(const ata_csr *T, ata_uplo uplo, ata_diag diag, const double *b, double *x)
{
    return ref_sptrsv_csr(T, uplo, diag, 0, b, x);
}

ata_status ref_sptrsv_csc(const ata_csr *Tc, ata_uplo uplo, ata_diag diag, int inv, const double *b, double *x)
{
    if (!Tc || !b || !x) return ata_fail(ATA_ERR_ARG, "sptrsv: NULL argument");
    if (Tc->nrows != Tc->ncols)
        return ata_fail(ATA_ERR_NOT_SQUARE, "sptrsv: matrix is %d x %d", Tc->ncols, Tc->nrows);
    if ((unsigned)diag > ATA_NON_UNIT_INV) return ata_fail(ATA_ERR_ARG, "sptrsv: bad diag %d", (int)diag);
    /* Row j of Tc is column j of T: entries (i, j) with i = Tc->col[p]. */
    const int n = Tc->nrows, *Cp = Tc->rowptr, *Ci = Tc->col;
    const double *Cx = Tc->val;
    for (int i = 0; i < n; i++) x[i] = b[i];
    for (int k = 0; k < n; k++) {
        int j = uplo == ATA_LOWER ? k : n - 1 - k;
        if (diag != ATA_UNIT) {
            double d = 0;
            int has_d = 0;
            for (int p = Cp[j]; p < Cp[j + 1]; p++)
                if (Ci[p] == j) { d = Cx[p]; has_d = 1; }
            if (!has_d) return ata_fail(ATA_ERR_MISSING_DIAG, "sptrsv: column %d has no diagonal entry", j);
            if (d == 0) return ata_fail(ATA_ERR_ZERO_PIVOT, "sptrsv: zero diagonal in column %d", j);
            x[j] = inv ? x[j] * d : diag == ATA_NON_UNIT_INV ? x[j] * (1.0 / d) : x[j] / d;
        }
        const double xj = x[j];
        if (!isfinite(xj)) return not_finite(j, xj);
        for (int p = Cp[j]; p < Cp[j + 1]; p++)
            if (in_triangle(uplo, Ci[p], j)) x[Ci[p]] -= Cx[p] * xj;
    }
    return ATA_OK;
}

ata_status ata_ref_sptrsv_csc(const ata_csr *Tc, ata_uplo uplo, ata_diag diag, const double *b, double *x)
{
    return ref_sptrsv_csc(Tc, uplo, diag, 0, b, x);
}

ata_status ata_ref_spmv(const ata_csr *A, const double *x, double *y)
{
    if (!A || !x || !y) return ata_fail(ATA_ERR_ARG, "spmv: NULL argument");
    for (int i = 0; i < A->nrows; i++) {
        double s = 0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s += A->val[p] * x[A->col[p]];
        y[i] = s;
    }
    return ATA_OK;
}
