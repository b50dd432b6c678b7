/* mem.h - allocation of the library's large arrays (matrix entries, value
 * maps, vectors). */
#ifndef ATA_MEM_H
#define ATA_MEM_H
#include <stddef.h>

/* malloc for arrays of MEM_BIG_BYTES or more: 2 MiB-aligned and advised
 * for transparent huge pages (MADV_HUGEPAGE), so their first touch takes
 * one page fault per 2 MiB instead of one per 4 KiB. On the development VM
 * faulting a fresh 84 MB array in took 80-100 ms in 4 KiB pages and 15-25
 * ms in huge pages: setup writes several such arrays. Smaller requests are
 * plain malloc. Free with free(); NULL when out of memory. */
#define MEM_BIG_BYTES ((size_t)4 << 20)
void *mem_alloc_big(size_t bytes);

#endif
