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

/* Which entries csr_permute_part keeps, by their new (row, column). */
enum { CSR_ALL = 0, CSR_LOWER, CSR_STRICT_LOWER, CSR_UPPER, CSR_STRICT_UPPER };

/* The `part` of P A P^T (perm[old] = new; NULL: A itself), columns sorted,
 * and, if map_out, map[q] = position in A of the result's entry q (new
 * values in A's order reach the result as val[map[q]]). A must be square
 * with sorted columns; perm is checked to be a permutation. pool: the
 * workers to share the passes with (NULL: the calling thread); the result
 * does not depend on it. A->val NULL: the pattern only (B's values are
 * left unset). */
typedef struct cpu_pool cpu_pool;
ata_status csr_permute_part(const ata_csr *A, const int *perm, int part, cpu_pool *pool,
                            ata_csr **out, int **map_out);
/* Worker tid's rows [*r0, *r1) of n rows with row pointers Ap: the rows
 * whose entries start in its share of nnz (a pass over them is balanced by
 * entries, not rows). */
void csr_share_rows(const int *Ap, int n, int tid, int nt, int *r0, int *r1);

#endif
