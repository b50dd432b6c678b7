/* cpu_backend.h - what the CPU backend decides about a matrix, for tests. */
#ifndef ATA_CPU_BACKEND_H
#define ATA_CPU_BACKEND_H
#include "ata.h"

/* 1 where the CPU's SpMV prefetches x ahead: x of 4 MiB or more, gathered
 * at random (cpu_backend.c). */
int cpu_spmv_gathers_at_random(const ata_csr *A);

#endif
