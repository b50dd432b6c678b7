/* cpu_backend.h - what the CPU backend decides about a matrix, for tests. */
#ifndef ATA_CPU_BACKEND_H
#define ATA_CPU_BACKEND_H
#include "ata.h"

/* 1 where A's rows reach columns at random and there are enough of them
 * (4 MiB of doubles) that a gather misses the cache: the CPU's SpMV then
 * prefetches x ahead, a triangular solve (pull, one column) the x its
 * rows ahead read, and ILU0 the U rows its next rows read (cpu_backend.c,
 * cpu_exec.c). */
int cpu_gathers_at_random(const ata_csr *A);
/* How far ahead, in entries, the SpMV's and the solves' x prefetches
 * reach (SpMV: 64 to 256 alike; the lower solve of circuit:1000000 in PCG:
 * 64 gained 15%, 128 and 256 25%). */
#define CPU_PREFETCH_AHEAD 128
/* The CPU SpMV handle's choice (spmv_create). */
int cpu_spmv_prefetches(const void *h);

#endif
