/* reorder.h - fill/bandwidth orderings for PCG (RCM, METIS nested dissection). */
#ifndef ATA_REORDER_H
#define ATA_REORDER_H
#include "ata.h"

/* perm[old] = new for A + A^T's graph; how is ATA_REORDER_RCM or _ND. */
ata_status reorder_perm(const ata_csr *A, ata_reorder how, int **perm_out);

#endif
