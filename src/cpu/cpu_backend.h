/* cpu_backend.h - what the CPU backend decides about a matrix, for tests. */
#ifndef ATA_CPU_BACKEND_H
#define ATA_CPU_BACKEND_H
#include "ata.h"

/* 1 where A's rows reach columns at random and there are enough of them
 * (4 MiB of doubles) that a gather misses the cache: the CPU's SpMV then
 * prefetches x ahead, and ILU0 the U rows its next rows read
 * (cpu_backend.c). */
int cpu_gathers_at_random(const ata_csr *A);
/* The CPU SpMV handle's choice (spmv_create). */
int cpu_spmv_prefetches(const void *h);

#endif
