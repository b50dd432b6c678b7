/* mem.h - the library's allocator for arrays that scale with n or nnz.
 *
 * Blocks under MEM_HUGE_BIG: malloc/calloc, and from MEM_PREFAULT bytes the
 * block's pages faulted in by one madvise(MADV_POPULATE_WRITE) instead of
 * one trap per page (mem.c). glibc's mmap threshold rises to 32 MiB as big
 * blocks are freed, so these come back from its heap already faulted in: a
 * setup's temporaries cost the kernel nothing after the first.
 *
 * Blocks of MEM_HUGE_BIG or more (glibc maps each of them fresh anyway) are
 * aligned to 2 MiB, each a mapping of its own (unmapped by free), and
 * advised as transparent huge pages (MADV_HUGEPAGE): one fault per 2 MiB.
 * ATA_HUGEPAGES=1 does that from MEM_HUGE on (every block of 2 MiB or more:
 * the default until the Intel VM, 2026-11-28), ATA_HUGEPAGES=0 never.
 *
 * Why: with THP defrag "madvise", a fault in an advised block waits for the
 * kernel to compact memory whenever another program has used it in small
 * pages, and a 2-32 MiB block in a mapping of its own is zeroed afresh at
 * every allocation. PCG setup + solve on the Intel VM, each run right after
 * PETSc's (as bench/vs-petsc.sh runs them), small pages from 2 MiB against
 * huge: lap3d:100 1.12-1.22 against 1.30-1.33 s, circuit:2000000 2.46-2.57
 * against 2.84-3.23 s; huge pages from 32 MiB only, against small pages
 * everywhere, 8 of 8 pairs no slower (circuit:2000000 2.29-2.34 against
 * 2.34-2.44 s, lap3d:100 1.07-1.10 against 1.09-1.13). Huge pages on every
 * block still win right after a run that used them (the AMD VM's PCG setup
 * at lap3d:100 0.40x). Everything returned is released with free(). */
#ifndef ATA_MEM_H
#define ATA_MEM_H
#include <stddef.h>

#define MEM_HUGE ((size_t)2 << 20)
#define MEM_HUGE_BIG ((size_t)32 << 20)
#define MEM_PREFAULT ((size_t)64 << 10)

void *mem_alloc(size_t bytes);
void *mem_calloc(size_t n, size_t size);

#endif
