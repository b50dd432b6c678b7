/* rb_read.c - the Rutherford-Boeing reader, through SuiteSparse's RBio
 * (the format's Fortran fixed fields and its many variants are RBio's
 * business, not ours). What is ours is around it: the header's counts are
 * checked against the file's size, and empty rows bounded as for Matrix
 * Market, before RBio allocates by them; RBio's status codes become a
 * message naming the part of the file at fault; and its CSC (of A, so the
 * CSR of A^T) is checked and transposed. Every message starts with the
 * file. */
#include "RBio.h"               /* first: it sets the large-file macros */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "error.h"
#include "mem.h"
#include "read_internal.h"

/* "rb", or a three-letter Rutherford-Boeing type: value kind (real,
 * complex, pattern, integer), symmetry, assembled/elemental. */
int rb_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot) return 0;
    const char *e = dot + 1;
    if (!strcasecmp(e, "rb")) return 1;
    return strlen(e) == 3 && strchr("rcpiRCPI", e[0]) && strchr("suhzrSUHZR", e[1]) && strchr("aeAE", e[2]);
}

/* One card count of header line 2: the k-th blank-separated word, or -1
 * when it is not a non-negative integer of at most 2^40 (no file has more
 * lines). strtoll saturates defined where sscanf's %lld does not. */
static long long rb_count(const char *line, int k)
{
    const char *q = line;
    long long v = -1;
    for (int w = 0; w <= k; w++) {
        char *end;
        errno = 0;
        v = strtoll(q, &end, 10);
        if (end == q || errno || (*end && !isspace((unsigned char)*end))) return -1;
        q = end;
    }
    return v >= 0 && v <= (1LL << 40) ? v : -1;
}

/* Header cards: line 1 title, 2 card counts, 3 type and sizes, 4 formats;
 * then the column pointers, row indices and values, each PTRCRD, INDCRD,
 * VALCRD lines long. Used only to say where RBio's error lies. Line numbers
 * are computed from bounded counts only: an unchecked sum overflowed
 * (5 + LLONG_MAX, from a saturated count). */
static void rb_where(const char *path, int status, char *buf, size_t len)
{
    char line[256] = "";
    FILE *f = fopen(path, "r");
    const int got = f && fgets(line, sizeof line, f) && fgets(line, sizeof line, f);
    if (f) fclose(f);
    const long long ptr = got ? rb_count(line, 1) : -1, ind = got ? rb_count(line, 2) : -1,
                    vals = got ? rb_count(line, 3) : -1;
    if (status == RBIO_HEADER_IOERROR || ptr < 0 || ind < 0 || vals < 0) {
        snprintf(buf, len, "the header (lines 1-4)");
        return;
    }
    const long long p0 = 5, i0 = p0 + ptr, v0 = i0 + ind;
    if (status == RBIO_CP_IOERROR || status == RBIO_CP_INVALID)
        snprintf(buf, len, "the column pointers (lines %lld-%lld)", p0, i0 - 1);
    else if (status == RBIO_ROW_IOERROR || status == RBIO_ROW_INVALID || status == RBIO_DUPLICATE
             || status == RBIO_JUMBLED || status == RBIO_EXTRANEOUS)
        snprintf(buf, len, "the row indices (lines %lld-%lld)", i0, v0 - 1);
    else if (status == RBIO_VALUE_IOERROR)
        snprintf(buf, len, "the values (lines %lld-%lld)", v0, v0 + vals - 1);
    else snprintf(buf, len, "the header (line 3: type and sizes)");
}

static ata_status rb_fail(const char *path, const char *name, int status)
{
    static const struct { int code; ata_status st; const char *what; } map[] = {
        { RBIO_CP_INVALID, ATA_ERR_FORMAT, "invalid pointers in" },
        { RBIO_ROW_INVALID, ATA_ERR_INDEX, "row index out of range in" },
        { RBIO_DUPLICATE, ATA_ERR_DUPLICATE, "duplicate entry in" },
        { RBIO_EXTRANEOUS, ATA_ERR_FORMAT, "upper-triangle entries of a symmetric matrix in" },
        { RBIO_TYPE_INVALID, ATA_ERR_FORMAT, "invalid matrix type in" },
        { RBIO_DIM_INVALID, ATA_ERR_FORMAT, "invalid dimensions in" },
        { RBIO_JUMBLED, ATA_ERR_FORMAT, "unsorted rows within a column in" },
        { RBIO_OUT_OF_MEMORY, ATA_ERR_NOMEM, "out of memory reading" },
        { RBIO_MKIND_INVALID, ATA_ERR_FORMAT, "invalid matrix kind in" },
        { RBIO_UNSUPPORTED, ATA_ERR_UNSUPPORTED, "finite-element (elemental) form, said by" },
        { RBIO_HEADER_IOERROR, ATA_ERR_FORMAT, "cannot parse" },
        { RBIO_CP_IOERROR, ATA_ERR_FORMAT, "cannot parse" },
        { RBIO_ROW_IOERROR, ATA_ERR_FORMAT, "cannot parse" },
        { RBIO_VALUE_IOERROR, ATA_ERR_FORMAT, "cannot parse" },
    };
    if (status == RBIO_FILE_IOERROR) return ata_fail(ATA_ERR_IO, "%s: cannot open or read the file", name);
    char where[96];
    rb_where(path, status, where, sizeof where);
    for (size_t k = 0; k < sizeof map / sizeof *map; k++)
        if (map[k].code == status)
            return ata_fail(map[k].st, "%s: Rutherford-Boeing: %s %s (RBio status %d)",
                            name, map[k].what, where, status);
    return ata_fail(ATA_ERR_FORMAT, "%s: Rutherford-Boeing: RBio status %d, in %s", name, status, where);
}

/* One header number: the fixed Fortran field [from, from + width) of line,
 * or else the `word`-th blank-separated word after `skip` characters; -1 if
 * neither reads. The larger of the two readings is kept by the caller, so
 * whichever RBio takes, it is bounded. */
static long long rb_field(const char *line, size_t from, size_t width, size_t skip, int word)
{
    long long fixed = -1, free_form = -1;
    const size_t len = strlen(line);
    if (len > from) {
        char buf[32];
        size_t w = len - from < width ? len - from : width;
        memcpy(buf, line + from, w);
        buf[w] = '\0';
        char *end;
        errno = 0;
        long long v = strtoll(buf, &end, 10);
        while (isspace((unsigned char)*end)) end++;
        if (end != buf && !*end && !errno && v >= 0) fixed = v;
    }
    if (len > skip) {
        const char *q = line + skip;
        for (int k = 0; k <= word; k++) {
            while (isspace((unsigned char)*q)) q++;
            char *end;
            errno = 0;
            long long v = strtoll(q, &end, 10);
            if (end == q || errno || (*end && !isspace((unsigned char)*end))) { free_form = -1; break; }
            free_form = v >= 0 ? v : -1;
            q = end;
        }
    }
    return fixed > free_form ? fixed : free_form;
}

/* The counts of header line 3 (type, rows, columns, entries) checked
 * against the file before RBio allocates by them: every pointer, index and
 * value takes at least one byte, and rows or columns beyond the entries
 * must stay within MM_EMPTY_ROWS_MAX, as for Matrix Market. */
static ata_status rb_check_header(const char *path, const char *name, long long bytes)
{
    char l1[512] = "", l2[512] = "", l3[512] = "";
    FILE *f = fopen(path, "r");
    if (!f) return ata_fail(ATA_ERR_IO, "%s: cannot open: %s", name, strerror(errno));
    int got = fgets(l1, sizeof l1, f) && fgets(l2, sizeof l2, f) && fgets(l3, sizeof l3, f);
    fclose(f);
    if (!got) return ata_fail(ATA_ERR_FORMAT, "%s: Rutherford-Boeing: the header (lines 1-4) is cut short", name);
    /* line 3: (A3, 11X, 4I14) type, NROW, NCOL, NNZERO, NELTVL */
    const long long m = rb_field(l3, 14, 14, 3, 0), n = rb_field(l3, 28, 14, 3, 1), nz = rb_field(l3, 42, 14, 3, 2);
    if (m < 0 || n < 0 || nz < 0)
        return ata_fail(ATA_ERR_FORMAT, "%s: Rutherford-Boeing: line 3 must give the type, then rows, columns and "
                        "entries as non-negative integers", name);
    if (m > INT_MAX || n > INT_MAX || nz > INT_MAX)
        return ata_fail(ATA_ERR_UNSUPPORTED, "%s: Rutherford-Boeing: line 3: %lld x %lld with %lld entries exceeds "
                        "32-bit indices", name, m, n, nz);
    if (m == 0 || n == 0 || nz == 0)
        return ata_fail(ATA_ERR_EMPTY, "%s: empty matrix (%lld x %lld with %lld entries)", name, m, n, nz);
    const int pattern = l3[0] == 'p' || l3[0] == 'P', sym = l3[1] != 'u' && l3[1] != 'U' && l3[1] != 'r'
                                                               && l3[1] != 'R';
    const int elemental = l3[2] == 'e' || l3[2] == 'E';     /* values counted apart (NELTVL) */
    const long long need = n + 1 + nz + (pattern || elemental ? 0 : nz);
    if (bytes >= 0 && need > bytes)
        return ata_fail(ATA_ERR_FORMAT, "%s: Rutherford-Boeing: line 3 declares %lld columns and %lld entries, but "
                        "the file's %lld bytes cannot hold their %lld numbers", name, n, nz, bytes, need);
    const long long most = sym ? 2 * nz : nz, dim = m > n ? m : n;
    if (dim - most > MM_EMPTY_ROWS_MAX)
        return ata_fail(ATA_ERR_UNSUPPORTED, "%s: Rutherford-Boeing: line 3: %lld x %lld with %lld entries: at least "
                        "%lld %s would be empty; refused beyond %lld", name, m, n, nz, dim - most,
                        m >= n ? "rows" : "columns", MM_EMPTY_ROWS_MAX);
    return ATA_OK;
}

typedef struct {
    int nrow, ncol, mkind, skind;
    int *Ap, *Ai, *Zp, *Zi;
    double *Ax, *Az;
} rb_data;

static void rb_free(rb_data *d)
{
    SuiteSparse_free(d->Ap); SuiteSparse_free(d->Ai); SuiteSparse_free(d->Zp);
    SuiteSparse_free(d->Zi); SuiteSparse_free(d->Ax); SuiteSparse_free(d->Az);
}

/* RBio's CSC is the CSR of A^T: check it there (values finite, rows
 * strictly increasing in each column), then transpose. */
static ata_status rb_to_csr(const rb_data *d, const char *name, ata_csr **out)
{
    const int nnz = d->Ap[d->ncol];
    for (int j = 0; j < d->ncol; j++)
        for (int p = d->Ap[j]; p < d->Ap[j + 1]; p++) {
            if (p > d->Ap[j] && d->Ai[p] <= d->Ai[p - 1])
                return ata_fail(d->Ai[p] == d->Ai[p - 1] ? ATA_ERR_DUPLICATE : ATA_ERR_FORMAT,
                                "%s: column %d (1-based): row %d after row %d", name, j + 1, d->Ai[p] + 1,
                                d->Ai[p - 1] + 1);
            if (d->Ax && !isfinite(d->Ax[p]))
                return ata_fail(ATA_ERR_NONFINITE, "%s: entry (%d,%d) (1-based) is %g", name, d->Ai[p] + 1,
                                j + 1, d->Ax[p]);
        }
    ata_csr At = { .nrows = d->ncol, .ncols = d->nrow, .nnz = nnz, .rowptr = d->Ap, .col = d->Ai, .val = d->Ax };
    double *ones = NULL;
    if (!d->Ax) {           /* pattern: every stored entry is 1 */
        ones = mem_alloc(((size_t)nnz + 1) * sizeof *ones);
        if (!ones) return ata_fail(ATA_ERR_NOMEM, "%s: out of memory", name);
        for (int p = 0; p < nnz; p++) ones[p] = 1;
        At.val = ones;
    }
    ata_status st = ata_csr_transpose(&At, out);
    free(ones);
    return st;
}

/* bytes: the file's size, -1 if unknown. */
ata_status rb_read_file(const char *path, const char *name, long long bytes, ata_csr **out)
{
    char title[73], key[9], mtype[4];
    int asize, znz;
    rb_data d = { 0 };
    ATA_TRY(rb_check_header(path, name, bytes));
    /* RBread takes a non-const name; build_upper expands symmetric and
     * skew storage (negating the mirror), zeros stay as stored. */
    char *fname = strdup(path);
    if (!fname) return ata_fail(ATA_ERR_NOMEM, "%s: out of memory", name);
    int status = RBread_i(fname, 1, 0, title, key, mtype, &d.nrow, &d.ncol, &d.mkind, &d.skind, &asize, &znz,
                          &d.Ap, &d.Ai, &d.Ax, &d.Az, &d.Zp, &d.Zi);
    free(fname);
    ata_status st = ATA_OK;
    if (status < 0) st = rb_fail(path, name, status);
    else if (d.mkind == 2 || d.mkind == 4 || d.Az)
        st = ata_fail(ATA_ERR_UNSUPPORTED, "%s: complex Rutherford-Boeing matrix (type %s) is not supported",
                      name, mtype);
    else if (d.nrow <= 0 || d.ncol <= 0 || !d.Ap || d.Ap[d.ncol] == 0)
        st = ata_fail(ATA_ERR_EMPTY, "%s: empty matrix (%d x %d with %d entries)", name, d.nrow, d.ncol,
                      d.Ap ? d.Ap[d.ncol > 0 ? d.ncol : 0] : 0);
    else st = rb_to_csr(&d, name, out);
    rb_free(&d);
    return st;
}
