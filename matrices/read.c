/* read.c - ata_matrix_read, the public entry of the matrix readers: the
 * options (summing duplicates, the decompressed-size cap), then the route
 * by content and name: compressed or archived input to archive_read.c,
 * Rutherford-Boeing by its extension to rb_read.c, anything else to the
 * Matrix Market reader (mm_read.c). Whatever the route, the result is
 * validated here against ata_csr's contract. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "error.h"
#include "read_internal.h"

ata_read_options ata_read_defaults(void)
{
    return (ata_read_options){ .sum_duplicates = 0, .max_input_bytes = 0 };
}

/* Decompressed-size cap: the option, else ATA_MAX_INPUT_BYTES (bytes, with
 * an optional K, M or G suffix), else a quarter of physical memory (the
 * text, its triplets and the CSR must all fit beside the caller's data). */
static ata_status rd_limit(const ata_read_options *opt, rd_opts *o)
{
    if (opt->max_input_bytes) {
        o->limit = opt->max_input_bytes;
        o->limit_from = "set by ata_read_options.max_input_bytes";
        return ATA_OK;
    }
    const char *env = getenv("ATA_MAX_INPUT_BYTES");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        int shift = 0;
        if (*end == 'k' || *end == 'K') shift = 10;
        else if (*end == 'm' || *end == 'M') shift = 20;
        else if (*end == 'g' || *end == 'G') shift = 30;
        if (shift) end++;
        if (!isdigit((unsigned char)*env) || *end || errno || v == 0 || v > (SIZE_MAX >> shift))
            return ata_fail(ATA_ERR_ARG, "ATA_MAX_INPUT_BYTES='%s': expected a positive byte count, optionally "
                            "with K, M or G", env);
        o->limit = (size_t)v << shift;
        o->limit_from = "set by ATA_MAX_INPUT_BYTES";
        return ATA_OK;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    o->limit = pages > 0 && page > 0 ? (size_t)pages / 4 * (size_t)page : (size_t)1 << 32;
    o->limit_from = "a quarter of physical memory";
    return ATA_OK;
}

ata_status ata_matrix_read_opts(const char *path, const ata_read_options *opt, ata_csr **out)
{
    if (!path || !out) return ata_fail(ATA_ERR_ARG, "matrix read: NULL argument");
    *out = NULL;
    const ata_read_options def = ata_read_defaults();
    if (!opt) opt = &def;
    rd_opts o = { .sum = opt->sum_duplicates != 0 };
    ATA_TRY(rd_limit(opt, &o));
    struct stat sb;
    if (stat(path, &sb) != 0) return ata_fail(ATA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return ata_fail(ATA_ERR_IO, "%s: is a directory, not a matrix file", path);
    ata_csr *A = NULL;
    ata_status st;
    if (arc_sniff(path)) st = arc_read(path, &o, &A);
    else if (rb_extension(path)) st = rb_read_file(path, path, S_ISREG(sb.st_mode) ? (long long)sb.st_size : -1, &A);
    else {
        mm_source s = { .path = path, .name = path };
        st = mm_read_source(&s, o.sum, &A);
    }
    /* Belt and braces: whatever the route, the result obeys ata_csr's
     * contract (sorted, in range, finite). */
    if (st == ATA_OK) st = ata_csr_validate(A, path);
    if (st != ATA_OK) { ata_csr_free(A); return st; }
    *out = A;
    return ATA_OK;
}

ata_status ata_matrix_read(const char *path, ata_csr **out)
{
    return ata_matrix_read_opts(path, NULL, out);
}
