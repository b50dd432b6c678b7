/* test_mem.c - the allocator for big arrays (src/mem.c): small blocks are
 * plain malloc; big ones start on a 2 MiB boundary and carry the kernel's
 * huge-page advice ("hg" in /proc/self/smaps): from MEM_HUGE_BIG by
 * default, from MEM_HUGE with ATA_HUGEPAGES=1, never with ATA_HUGEPAGES=0;
 * calloc zeroes and refuses an overflowing size; medium blocks arrive with
 * their pages faulted in; all of it is freed with free(). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "test_util.h"
#include "mem.h"

/* 1: the mapping holding p has VmFlags "hg" (MADV_HUGEPAGE), 0: not,
 * -1: no smaps to read. */
static int advised(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int inside = 0, found = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = a >= lo && a < hi;
        } else if (inside && !strncmp(line, "VmFlags:", 8)) {
            found = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return found;
}

static int thp_built(void) { return access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0; }

static void test_small_blocks(void **state)
{
    (void)state;
    unsetenv("ATA_HUGEPAGES");
    int *z = mem_calloc(1000, sizeof *z);
    assert_non_null(z);
    for (int i = 0; i < 1000; i++) assert_int_equal(z[i], 0);
    char *p = mem_alloc(0);          /* never NULL for a zero size */
    assert_non_null(p);
    free(p);
    free(z);
    assert_null(mem_calloc(SIZE_MAX / 2, 4));   /* n * size overflows */
}

static void test_big_blocks_advised(void **state)
{
    (void)state;
    setenv("ATA_HUGEPAGES", "1", 1);
    const size_t n = 1000001;        /* n + 1 ints at n = 10^6: 4.0 MB */
    int *a = mem_alloc(n * sizeof *a);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % MEM_HUGE, 0);
    for (size_t i = 0; i < n; i++) a[i] = (int)i;
    assert_int_equal(a[n - 1], (int)(n - 1));
    if (thp_built()) {
        assert_int_equal(advised(a), 1);
        assert_int_equal(advised(a + n - 1), 1);   /* the tail too: rounded up to 4 MiB */
    }
    free(a);

    double *z = mem_calloc(3 * MEM_HUGE / sizeof *z + 5, sizeof *z);
    assert_non_null(z);
    for (size_t i = 0; i < 3 * MEM_HUGE / sizeof *z + 5; i++) assert_true(z[i] == 0.0);
    if (thp_built()) assert_int_equal(advised(z), 1);
    free(z);
    unsetenv("ATA_HUGEPAGES");
}

/* By default only blocks of MEM_HUGE_BIG or more are advised (and aligned);
 * with ATA_HUGEPAGES=0 none. */
static void test_advice_default_and_off(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {   /* the default, then ATA_HUGEPAGES=0 */
        if (v) setenv("ATA_HUGEPAGES", "0", 1);
        else unsetenv("ATA_HUGEPAGES");
        char *p = mem_alloc(8 * MEM_HUGE);
        assert_non_null(p);
        memset(p, 1, 8 * MEM_HUGE);
        if (thp_built()) assert_int_equal(advised(p), 0);
        free(p);
        const size_t big = MEM_HUGE_BIG + 12345;
        char *q = mem_alloc(big);
        double *z = mem_calloc(big / sizeof *z, sizeof *z);
        assert_non_null(q);
        assert_non_null(z);
        memset(q, 2, big);
        for (size_t i = 0; i < big / sizeof *z; i += 4096) assert_true(z[i] == 0.0);
        assert_true(z[big / sizeof *z - 1] == 0.0);
        if (!v) {
            assert_int_equal((uintptr_t)q % MEM_HUGE, 0);
            assert_int_equal((uintptr_t)z % MEM_HUGE, 0);
        }
        if (thp_built()) {
            assert_int_equal(advised(q), !v);
            assert_int_equal(advised(z), !v);
        }
        free(q);
        free(z);
    }
    unsetenv("ATA_HUGEPAGES");
}

/* Whole pages of [p, p + bytes) resident (mincore), or -1: cannot tell. */
static int resident(const void *p, size_t bytes)
{
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = ((uintptr_t)p + pg - 1) & ~(pg - 1),
                    e = ((uintptr_t)p + bytes) & ~(pg - 1);
    unsigned char v[512];
    if (e <= a || (e - a) / pg > sizeof v || mincore((void *)a, e - a, v) != 0) return -1;
    for (size_t k = 0; k < (e - a) / pg; k++)
        if (!(v[k] & 1)) return 0;
    return 1;
}

/* Can this kernel populate on request (MADV_POPULATE_WRITE, Linux 5.14)? */
static int populate_works(void)
{
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 0;
    const int ok = madvise(m, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
    munmap(m, 4096);
    return ok;
}

/* A fresh 1 MiB block (its own mapping: above malloc's mmap threshold) has
 * every page in before it is touched: one madvise, not a fault per page. */
static void test_medium_blocks_prefaulted(void **state)
{
    (void)state;
    if (!populate_works()) { printf("SKIPPED: no MADV_POPULATE_WRITE here\n"); skip(); }
    setenv("ATA_HUGEPAGES", "0", 1);
    for (int c = 0; c < 2; c++) {
        const size_t bytes = ((size_t)1 << 20) + 123;
        char *p = c ? mem_calloc(bytes, 1) : mem_alloc(bytes);
        assert_non_null(p);
        const int r = resident(p, bytes);
        if (r >= 0) assert_int_equal(r, 1);
        if (c) for (size_t i = 0; i < bytes; i += 4096) assert_int_equal(p[i], 0);
        free(p);
        if (r < 0) { printf("SKIPPED: mincore cannot tell\n"); skip(); }
    }
    unsetenv("ATA_HUGEPAGES");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_blocks),
        cmocka_unit_test(test_big_blocks_advised),
        cmocka_unit_test(test_advice_default_and_off),
        cmocka_unit_test(test_medium_blocks_prefaulted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
