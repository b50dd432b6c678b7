/* ilu0_row.c - the ILU0 row kernel's helpers, shared by the runtime and the
 * serial reference. */
#include "error.h"
#include "ilu0_row.h"

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
