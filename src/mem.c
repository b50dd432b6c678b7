/* mem.c - large arrays in transparent huge pages (mem.h). */
#include <stdlib.h>
#include <sys/mman.h>
#include "mem.h"

#define MEM_HUGE_ALIGN ((size_t)2 << 20)

void *mem_alloc_big(size_t bytes)
{
    if (bytes < MEM_BIG_BYTES) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, MEM_HUGE_ALIGN, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    /* Advice only: where THP is off or "never", the pages stay 4 KiB. */
    (void)madvise(p, bytes & ~(MEM_HUGE_ALIGN - 1), MADV_HUGEPAGE);
#endif
    return p;
}
