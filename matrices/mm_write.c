/* mm_write.c - Matrix Market writer: coordinate real general, 1-based,
 * %.17g so that every double reads back bit for bit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "error.h"

static int mm_write_entries(FILE *f, const ata_csr *A)
{
    const int *Ap = A->rowptr, *Aj = A->col;
    const double *Ax = A->val;
    if (fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n",
                A->nrows, A->ncols, A->nnz) < 0)
        return 0;
    for (int i = 0; i < A->nrows; i++)
        for (int p = Ap[i]; p < Ap[i + 1]; p++)
            if (fprintf(f, "%d %d %.17g\n", i + 1, Aj[p] + 1, Ax[p]) < 0) return 0;
    return 1;
}

ata_status ata_matrix_write_mtx(const char *path, const ata_csr *A)
{
    if (!path || !A) return ata_fail(ATA_ERR_ARG, "write mtx: NULL argument");
    ATA_TRY(ata_csr_validate(A, path));
    FILE *f = fopen(path, "w");
    if (!f) return ata_fail(ATA_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    int ok = mm_write_entries(f, A);
    int err = errno;
    /* fclose flushes: a full disk shows up here, not in fprintf. */
    if (fclose(f) != 0 && ok) { ok = 0; err = errno; }
    if (!ok) return ata_fail(ATA_ERR_IO, "%s: write failed: %s", path, strerror(err));
    return ATA_OK;
}
