/*
 * ata_petsc_idx.h - PETSc's CSR indices as ATA's 32-bit ones, without
 * PETSc's types: the plugin passes sizeof(PetscInt), so this header (and
 * its unit test, tests/test_petsc_idx.c) compiles without PETSc and covers
 * both widths on a PETSc built with either.
 *
 * ATA's indices are int. With a 32-bit PetscInt PETSc's arrays are used as
 * they are (no copy: the path of Debian's PETSc). With a 64-bit PetscInt a
 * rank's block is narrowed once, at setup, into one allocation, after
 * checking that its rows, its entries and every index fit in [0, 2^31-1];
 * otherwise nothing is converted and the message names the limit and what
 * exceeds it. Never a cast of the arrays.
 */
#ifndef ATA_PETSC_IDX_H
#define ATA_PETSC_IDX_H
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATA_PETSC_IDX_LIMIT "2^31-1 = 2147483647"

enum {
    ATA_PETSC_IDX_OK = 0,
    ATA_PETSC_IDX_RANGE = 1, /* a count or an index outside [0, 2^31-1] (err says which) */
    ATA_PETSC_IDX_NOMEM = 2,
    ATA_PETSC_IDX_SIZE = 3   /* an index width other than 4 or 8 bytes */
};

/* idx[i] of an array of idx_size-byte signed integers (4 or 8), widened. */
static inline int64_t ata_petsc_idx_at(const void *idx, size_t idx_size, size_t i)
{
    if (idx_size == sizeof(int64_t)) {
        int64_t v;
        memcpy(&v, (const char *)idx + i * sizeof v, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, (const char *)idx + i * sizeof v, sizeof v);
    return v;
}

/* count indices of idx_size bytes into out (int), each checked to lie in
 * [0, 2^31-1]. On the first one that does not: ATA_PETSC_IDX_RANGE and
 * "<what> <i> is <value>: ..." in err (errlen bytes), out partly written. */
static inline int ata_petsc_idx_narrow(const void *idx, size_t idx_size, size_t count, int *out, const char *what,
                                       char *err, size_t errlen)
{
    if (idx_size != sizeof(int32_t) && idx_size != sizeof(int64_t)) {
        snprintf(err, errlen, "index width of %zu bytes: only 4 or 8", idx_size);
        return ATA_PETSC_IDX_SIZE;
    }
    for (size_t i = 0; i < count; i++) {
        int64_t v = ata_petsc_idx_at(idx, idx_size, i);
        if (v < 0 || v > INT_MAX) {
            snprintf(err, errlen, "%s %zu is %" PRId64 ": outside ATA's 32-bit index range [0, " ATA_PETSC_IDX_LIMIT "]",
                     what, i, v);
            return ATA_PETSC_IDX_RANGE;
        }
        out[i] = (int)v;
    }
    return ATA_PETSC_IDX_OK;
}

/* A rank's block (n rows; row pointers ia[0..n], column indices ja[0..ia[n])
 * of idx_size bytes each) as ATA's CSR indices: *rowptr and *colind, *nnz.
 * idx_size == sizeof(int): they point into ia and ja, *owned is NULL. Else
 * they point into *owned (one malloc, the caller frees it once ATA has
 * read them). On failure the outputs are NULL / 0 and err says why:
 * the rows or entries over 2^31-1, or the row pointer or column index
 * outside [0, 2^31-1]. */
static inline int ata_petsc_csr_idx(int64_t n, const void *ia, const void *ja, size_t idx_size, const int **rowptr,
                                    const int **colind, int *nnz, int **owned, char *err, size_t errlen)
{
    *rowptr = *colind = NULL;
    *owned = NULL;
    *nnz = 0;
    if (idx_size != sizeof(int32_t) && idx_size != sizeof(int64_t)) {
        snprintf(err, errlen, "index width of %zu bytes: only 4 or 8", idx_size);
        return ATA_PETSC_IDX_SIZE;
    }
    if (n < 0 || n > INT_MAX) {
        snprintf(err, errlen, "block of %" PRId64 " rows: over ATA's 32-bit index limit " ATA_PETSC_IDX_LIMIT, n);
        return ATA_PETSC_IDX_RANGE;
    }
    int64_t m = ata_petsc_idx_at(ia, idx_size, (size_t)n);
    if (m < 0 || m > INT_MAX) {
        snprintf(err, errlen, "block of %" PRId64 " rows and %" PRId64 " entries: over ATA's 32-bit index limit " ATA_PETSC_IDX_LIMIT,
                 n, m);
        return ATA_PETSC_IDX_RANGE;
    }
    if (idx_size == sizeof(int)) { /* zero copy: PETSc's arrays are ATA's */
        *rowptr = (const int *)ia;
        *colind = (const int *)ja;
        *nnz = (int)m;
        return ATA_PETSC_IDX_OK;
    }
    int *buf = malloc(((size_t)n + 1 + (size_t)m) * sizeof *buf);
    if (!buf) {
        snprintf(err, errlen, "no memory for the 32-bit indices of a block of %" PRId64 " rows and %" PRId64 " entries", n, m);
        return ATA_PETSC_IDX_NOMEM;
    }
    int rc = ata_petsc_idx_narrow(ia, idx_size, (size_t)n + 1, buf, "row pointer", err, errlen);
    if (rc == ATA_PETSC_IDX_OK)
        rc = ata_petsc_idx_narrow(ja, idx_size, (size_t)m, buf + n + 1, "column index of entry", err, errlen);
    if (rc != ATA_PETSC_IDX_OK) {
        free(buf);
        return rc;
    }
    *rowptr = buf;
    *colind = buf + n + 1;
    *nnz = (int)m;
    *owned = buf;
    return ATA_PETSC_IDX_OK;
}
#endif
