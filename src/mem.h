/* mem.h - the library's allocator for arrays that scale with n or nnz.
 *
 * Setup writes ~20 fresh matrix-sized arrays; on 4 KiB pages every 4 KiB of
 * them is one page fault (58 260 in PCG's setup at lap3d:100). Blocks of at
 * least MEM_HUGE bytes are aligned to 2 MiB and advised as transparent huge
 * pages (MADV_HUGEPAGE), which Linux honours when THP is "always" or
 * "madvise": one fault per 2 MiB (216 in that setup, 0.40x its time).
 * Smaller blocks (and all blocks with ATA_HUGEPAGES=0, which turns the
 * advice off) are malloc/calloc's; from MEM_PREFAULT bytes their pages are
 * faulted in by one madvise(MADV_POPULATE_WRITE) instead of one trap per
 * page (mem.c). Everything returned is released with free(). */
#ifndef ATA_MEM_H
#define ATA_MEM_H
#include <stddef.h>

#define MEM_HUGE ((size_t)2 << 20)
#define MEM_PREFAULT ((size_t)64 << 10)

void *mem_alloc(size_t bytes);
void *mem_calloc(size_t n, size_t size);

#endif
