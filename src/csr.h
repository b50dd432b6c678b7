/* csr.h - internal CSR checks shared by the public entry points. */
#ifndef ATA_CSR_H
#define ATA_CSR_H
#include "ata.h"

/* ata_csr_validate without the value check: sizes, row pointers (from 0,
 * never decreasing, ending at nnz), columns in 0..ncols-1 and strictly
 * increasing in each row. Every public entry that takes a caller-filled
 * ata_csr calls it before indexing anything; the message names the row
 * (0-based). O(nrows + nnz). */
ata_status csr_check_structure(const ata_csr *A, const char *what);

#endif
