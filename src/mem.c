/* mem.c - big arrays: malloc with their pages faulted in at once, the
 * biggest on transparent huge pages (see mem.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mem.h"

#define MEM_OWN_MAP ((size_t)33 << 20)

/* Linux 5.14's MADV_POPULATE_WRITE (older kernels say EINVAL: no harm). */
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif

/* Fault in a block's whole pages in one call instead of one trap per 4 KiB
 * page on first touch: the block is written next anyway. Measured on the
 * development VM (a paravirtualised guest, where a page fault costs ~12-20
 * us): a fresh 1 MiB malloc block filled by memset, 3.8 ms faulting page by
 * page against 0.8 ms populated first; 16 MiB 64 against 15 ms. */
static void prefault(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    const uintptr_t pg = 4096, a = ((uintptr_t)p + pg - 1) & ~(pg - 1), e = ((uintptr_t)p + bytes) & ~(pg - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p; (void)bytes;
#endif
}

/* The smallest block put on huge pages (mem.h): MEM_HUGE_BIG, MEM_HUGE with
 * ATA_HUGEPAGES=1, none with ATA_HUGEPAGES=0. Read each time: a getenv
 * costs nothing beside a 2 MiB allocation, and a test can switch it. */
static size_t huge_from(void)
{
    const char *e = getenv("ATA_HUGEPAGES");
    if (e && e[0] == '1' && !e[1]) return MEM_HUGE;
    if (e && e[0] == '0' && !e[1]) return SIZE_MAX;
    return MEM_HUGE_BIG;
}

void *mem_alloc(size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (bytes >= huge_from()) {     /* MEM_HUGE at least */
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
    void *p = malloc(bytes ? bytes : 1);
    if (p && bytes >= MEM_PREFAULT) prefault(p, bytes);
    return p;
}

void *mem_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    size_t bytes = n * size;
    if (bytes < MEM_HUGE) {
        void *p = calloc(n ? n : 1, size ? size : 1);
        if (p && bytes >= MEM_PREFAULT) prefault(p, bytes);
        return p;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= huge_from()) {
        /* Zero without touching: on Linux a private anonymous page dropped
         * by MADV_DONTNEED reads as zeros and costs nothing until written
         * (the kernel zeroes it then, as it would have for memset's write;
         * elsewhere the advice may keep the contents, hence Linux only).
         * An array never written (a plan's done flags where no row is
         * tracked) never costs its pages. The block is mem_alloc's 2 MiB
         * aligned one; only the whole pages inside [p, p + bytes) are
         * dropped, never an allocator's header before it or another block
         * after it. (An allocator interposed with file-backed or shared
         * memory would break this; glibc's, ASan's and TSan's are
         * anonymous and private.) */
        char *p = mem_alloc(bytes);
        if (!p) return NULL;
        const long pg = sysconf(_SC_PAGESIZE);
        size_t whole = pg > 0 ? bytes & ~((size_t)pg - 1) : 0;
        if (whole && madvise(p, whole, MADV_DONTNEED) != 0) whole = 0;
        memset(p + whole, 0, bytes - whole);
        return p;
    }
#endif
    void *p = calloc(n, size);      /* (zero from a fresh mapping, not written again) */
    if (p) prefault(p, bytes);
    return p;
}
