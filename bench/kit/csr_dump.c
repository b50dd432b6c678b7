/* csr_dump.c - ata-csr-dump SPEC|FILE OUT: the matrix exactly as ata-bench
 * builds it (ata_gen_from_spec for a generator spec such as lap3d:100 or
 * circuit:1000000, ata_matrix_read for a file: symmetric storage expanded),
 * written as one raw little-endian CSR file for bench/cupy_anchor.py:
 *
 *   8 bytes  "ATACSR1\n"
 *   3 x i32  nrows, ncols, nnz
 *   i32      rowptr[nrows + 1]
 *   i32      col[nnz]           0-based, sorted within each row
 *   f64      val[nnz]
 *
 * Part of the GPU kit (make gpu-kit); not installed. */
#include <stdio.h>
#include <string.h>
#include "ata.h"

static int is_spec(const char *s)
{
    static const char *pfx[] = { "lap2d:", "lap3d:", "lap3d27:", "circuit:" };
    for (size_t i = 0; i < sizeof pfx / sizeof *pfx; i++)
        if (!strncmp(s, pfx[i], strlen(pfx[i]))) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ata-csr-dump SPEC|FILE OUT.csr\n");
        return 2;
    }
    ata_csr *A = NULL;
    ata_status st = is_spec(argv[1]) ? ata_gen_from_spec(argv[1], &A) : ata_matrix_read(argv[1], &A);
    if (st != ATA_OK) {
        fprintf(stderr, "ata-csr-dump: %s: %s\n", argv[1], ata_last_error());
        return 1;
    }
    FILE *f = fopen(argv[2], "wb");
    if (!f) { perror(argv[2]); ata_csr_free(A); return 1; }
    int hdr[3] = { A->nrows, A->ncols, A->nnz };
    int ok = fwrite("ATACSR1\n", 1, 8, f) == 8 && fwrite(hdr, sizeof *hdr, 3, f) == 3 &&
             fwrite(A->rowptr, sizeof *A->rowptr, (size_t)A->nrows + 1, f) == (size_t)A->nrows + 1 &&
             fwrite(A->col, sizeof *A->col, (size_t)A->nnz, f) == (size_t)A->nnz &&
             fwrite(A->val, sizeof *A->val, (size_t)A->nnz, f) == (size_t)A->nnz;
    if (fclose(f) != 0) ok = 0;
    if (!ok) { fprintf(stderr, "ata-csr-dump: %s: write failed\n", argv[2]); ata_csr_free(A); return 1; }
    printf("%s: %d x %d, %d entries -> %s\n", argv[1], A->nrows, A->ncols, A->nnz, argv[2]);
    ata_csr_free(A);
    return 0;
}
