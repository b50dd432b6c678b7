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
/* ... into every cache level (prefetcht0), not as non-temporal: a row's x
 * entry is read again by the other rows that reach it, ~4.5 times a SpMV
 * on a circuit. Measured on the Intel VM (2026-11-28, PCG, 2 threads, 4
 * rounds alternated, ms/it): circuit:2000000 55.8-60.2 -> 43.9-45.1 (SpMV
 * 22.9-24.5 -> 16.3-16.6), circuit:1000000 19.4-20.3 -> 17.9-18.6; the
 * level-ordered lower solve of circuit:1000000 3.17-3.26 -> 2.88-2.98 ms.
 * Locality 1 gave the same; 64 or 256 entries ahead, no change. ILU0's
 * prefetch of the U rows ahead (cpu_exec.c) too: the refactorisation of
 * circuit:1000000 97.5-107.8 -> 84.8-90.4 ms, circuit:2000000 236-278 ->
 * 204-210 (3 rounds). */
#define CPU_PREFETCH_LOCALITY 3
/* chain's blocks walked side by side, CPU_LINES at a time (cpu_exec.c,
 * pull_lines1), where a pull solve's rows are short: 1 where T's rows hold
 * CPU_LINES_MAX_ENTRIES entries off the diagonal or fewer on average
 * (stored_diag: T holds the diagonal too). chain then cuts lines into
 * CPU_LINES pieces per worker where a level of blocks has fewer
 * (plan.c, choose_S). */
#define CPU_LINES 4
#define CPU_LINES_MAX_ENTRIES 8
int cpu_lines_rows_short(const ata_csr *T, int stored_diag);
/* The CPU SpMV handle's choice (spmv_create). */
int cpu_spmv_prefetches(const void *h);

#endif
