/* mem.h - the library's allocator for arrays that scale with n or nnz.
 *
 * By default: malloc/calloc, and from MEM_PREFAULT bytes the block's pages
 * faulted in by one madvise(MADV_POPULATE_WRITE) instead of one trap per
 * page (mem.c). Blocks under glibc's mmap threshold (which rises to 32 MiB
 * as big blocks are freed) come back from its heap, already faulted in: a
 * setup's temporaries cost the kernel nothing after the first.
 *
 * ATA_HUGEPAGES=1: blocks of at least MEM_HUGE bytes are aligned to 2 MiB,
 * each a mapping of its own (unmapped by free), and advised as transparent
 * huge pages (MADV_HUGEPAGE): one fault per 2 MiB. That was the default
 * until the Intel VM (2026-11-28): with THP defrag "madvise", a fault in an
 * advised block waits for the kernel to compact memory whenever another
 * program has used it in small pages, and every fresh mapping is zeroed
 * again. PCG setup + solve there, each run right after PETSc's (as
 * bench/vs-petsc.sh runs them), small pages against huge: lap3d:100 1.12-1.22
 * against 1.30-1.33 s, circuit:2000000 2.46-2.57 against 2.84-3.23 s,
 * circuit:1000000 0.95-0.97 against 0.95-1.01; ms/it no worse. Huge pages
 * still win right after a run that used them (the AMD VM's PCG setup at
 * lap3d:100 0.40x; circuit:2000000 here 0.58-0.62 against 0.67 s).
 * Everything returned is released with free(). */
#ifndef ATA_MEM_H
#define ATA_MEM_H
#include <stddef.h>

#define MEM_HUGE ((size_t)2 << 20)
#define MEM_PREFAULT ((size_t)64 << 10)

void *mem_alloc(size_t bytes);
void *mem_calloc(size_t n, size_t size);

#endif
