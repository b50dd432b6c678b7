/* coo.h - triplet (COO) to CSR assembly shared by ata_csr_from_coo and the
 * Matrix Market reader. */
#ifndef ATA_COO_H
#define ATA_COO_H
#include "ata.h"

/* Entries (row[k], col[k], val[k]) already known in range, 0-based; val
 * NULL means every value is 1. sum: add repeated (row, column) in input
 * order; else ATA_ERR_DUPLICATE with no message set and dup[0] < dup[1] the
 * input positions of the first repeated pair in CSR order. *src_out, if
 * asked for, gets the input position of each CSR entry (of the first
 * summand when summed). */
ata_status coo_assemble(int m, int n, int nz, const int *row, const int *col, const double *val,
                        int sum, ata_csr **out, int **src_out, int dup[2]);

#endif
