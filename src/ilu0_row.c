/* ilu0_row.c - the ILU0 row kernel's helpers, shared by the runtime and the
 * serial reference. */
#include "error.h"
#include "ilu0_row.h"

/* A zero pivot is one; an overflowed (Inf) or NaN pivot is another failure
 * and is named as such. */
ata_status ilu0_pivot_fail(int row, double u)
{
    if (u == 0) return ata_fail(ATA_ERR_ZERO_PIVOT, "ilu0: zero pivot in row %d (u_ii = 0)", row);
    return ata_fail(ATA_ERR_NONFINITE, "ilu0: pivot in row %d is not finite (u_ii = %g): the factorisation "
                    "overflowed", row, u);
}

/* Diagonal positions; the ILU0 DAG needs every diagonal stored. */
ata_status ilu0_find_diag(const ata_csr *A, int *diag)
{
    for (int i = 0; i < A->nrows; i++) {
        diag[i] = -1;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->col[p] == i) { diag[i] = p; break; }
        if (diag[i] < 0)
            return ata_fail(ATA_ERR_MISSING_DIAG, "ilu0: matrix is missing diagonal entry in row %d", i);
    }
    return ATA_OK;
}
