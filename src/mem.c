/* mem.c - big arrays on transparent huge pages (see mem.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mem.h"

#define MEM_OWN_MAP ((size_t)33 << 20)

/* Read each time: a getenv costs nothing beside a 2 MiB allocation, and a
 * test can switch it. */
static int huge_wanted(void)
{
    const char *e = getenv("ATA_HUGEPAGES");
    return !(e && e[0] == '0' && !e[1]);
}

void *mem_alloc(size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (bytes >= MEM_HUGE && huge_wanted()) {
        /* Whole 2 MiB pages only, so the advice never reaches a neighbour's
         * memory: the block is rounded up to them where that wastes at most
         * an eighth of it (n + 1 ints at n = 10^6: 4.0 MB in 4 MiB), else
         * its tail stays on small pages. Advisory: a refusal (THP off)
         * changes nothing. */
        size_t up = (bytes + MEM_HUGE - 1) & ~(MEM_HUGE - 1);
        size_t len = up - bytes <= bytes / 8 ? up : bytes & ~(MEM_HUGE - 1);
        size_t need = len > bytes ? len : bytes;
        /* Padded past glibc's largest mmap threshold (32 MiB on 64-bit) so
         * that the block is a mapping of its own, unmapped by free():
         * carved from the heap, 2 MiB-aligned blocks leave gaps that later
         * ones do not fit, and peak RSS grew from 324 to 555 MB over four
         * PCG setups at lap3d:100. The padding is address space only,
         * never touched. */
        void *p = NULL;
        if (posix_memalign(&p, MEM_HUGE, need < MEM_OWN_MAP ? MEM_OWN_MAP : need) != 0 &&
            posix_memalign(&p, MEM_HUGE, need) != 0)
            return NULL;
        (void)madvise(p, len, MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(bytes ? bytes : 1);
}

void *mem_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    size_t bytes = n * size;
    if (bytes < MEM_HUGE) return calloc(n ? n : 1, size ? size : 1);
    void *p = mem_alloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}
