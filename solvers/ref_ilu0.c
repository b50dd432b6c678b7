/* ref_ilu0.c - serial reference ILU0 on A's pattern. */
#include <stdlib.h>
#include "csr.h"
#include "error.h"
#include "ilu0_row.h"
#include "mem.h"

ata_status ata_ref_ilu0(ata_csr *A)
{
    if (!A) return ata_fail(ATA_ERR_ARG, "ilu0: NULL matrix");
    if (A->nrows != A->ncols)
        return ata_fail(ATA_ERR_NOT_SQUARE, "ilu0: matrix is %d x %d", A->nrows, A->ncols);
    ATA_TRY(csr_check_structure(A, "ilu0"));
    return ref_ilu0_checked(A);
}

ata_status ref_ilu0_checked(ata_csr *A)
{
    const int n = A->nrows;
    int *diag = mem_alloc((size_t)n * sizeof *diag), *work = mem_alloc((size_t)n * sizeof *work);
    ata_status st = ATA_OK;
    if (!diag || !work) { st = ata_fail(ATA_ERR_NOMEM, "ilu0: out of memory (n = %d)", n); goto out; }
    if ((st = ilu0_find_diag(A, diag)) != ATA_OK) goto out;
    for (int i = 0; i < n; i++) work[i] = -1;
    for (int i = 0; i < n; i++)
        if (ilu0_row(A->rowptr, A->col, A->val, diag, work, i)) {
            st = ilu0_pivot_fail(i, A->val[diag[i]]);
            break;
        }
out:
    free(diag);
    free(work);
    return st;
}
