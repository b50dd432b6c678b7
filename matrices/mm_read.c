/* mm_read.c - ata_matrix_read: Matrix Market by our own one-pass reader,
 * Rutherford-Boeing through RBio, compressed files and SuiteSparse Matrix
 * Collection archives through libarchive.
 *
 * Matrix Market text is read once, line by line: every entry is checked
 * as it is read (the message names the line and entry at fault) and kept
 * as a triplet, then assembled into CSR by counting sorts, where repeated
 * entries are found (or summed, on request). Nothing is sized by a header
 * before the file has shown it holds what the header claims: triplet
 * arrays grow with the entries present, rows and columns are bounded by
 * the entry count, Rutherford-Boeing counts are checked against the file
 * size before RBio sees them, and decompressed data is capped. Every
 * message starts with the file. */
#include "RBio.h"               /* first: it sets the large-file macros */
#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coo.h"
#include "error.h"
#include "mem.h"

/* ================================================================== */
/* Matrix Market text: one pass                                        */
/* ================================================================== */

typedef enum { MM_REAL, MM_INTEGER, MM_PATTERN } mm_field;
typedef enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW } mm_symmetry;

typedef struct {
    mm_field field;
    mm_symmetry sym;
    int nrows, ncols;
    long long nnz;              /* entries stored in the file */
} mm_header;

typedef struct {
    FILE *f;
    const char *name;
    char *line;
    size_t cap;
    long long lineno;
} mm_lines;

/* The entries as read, 0-based, in file order; symmetric storage then
 * appends each off-diagonal entry's mirror. Arrays grow with the entries
 * actually present, so a header that lies costs nothing. */
typedef struct {
    int *row, *col;
    double *val;
    int n, cap;
    int nfile;                  /* entries from the file; mirrors follow */
    int *mirror_of;             /* mirror n - nfile.. : its file entry (0-based) */
} mm_coo;

static const char *const mm_sym_name[] = { "general", "symmetric", "skew-symmetric" };

/* A file may declare this many more rows (or columns) than it has entries:
 * beyond it the empty rows alone would cost more than the file, which is
 * how a 60-byte header could ask for gigabytes. */
#define MM_EMPTY_ROWS_MAX (1LL << 20)

/* Next line without its line ending, or NULL at end of file. */
static char *mm_read_line(mm_lines *r)
{
    ssize_t len = getline(&r->line, &r->cap, r->f);
    if (len < 0) return NULL;
    r->lineno++;
    while (len > 0 && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r')) r->line[--len] = '\0';
    return r->line;
}

/* Next line that is neither a comment nor blank; a comment may be
 * indented (the '%' after blanks still opens a comment). */
static char *mm_read_data_line(mm_lines *r)
{
    char *s;
    while ((s = mm_read_line(r))) {
        while (isspace((unsigned char)*s)) s++;
        if (*s && *s != '%') return s;
    }
    return NULL;
}

/* Split s in place at blanks; at most `max` words, the count of all. */
static int mm_words(char *s, char **w, int max)
{
    int n = 0;
    for (;;) {
        while (isspace((unsigned char)*s)) s++;
        if (!*s) return n;
        if (n < max) w[n] = s;
        n++;
        while (*s && !isspace((unsigned char)*s)) s++;
        if (*s) *s++ = '\0';
    }
}

/* A non-negative decimal integer, the whole word, at most 18 digits after
 * leading zeros (so it cannot overflow). By hand: it is most of the
 * reading time through strtoll. */
static int mm_parse_count(const char *s, long long *v)
{
    if (!isdigit((unsigned char)*s)) return 0;
    while (*s == '0' && isdigit((unsigned char)s[1])) s++;
    long long x = 0;
    int n = 0;
    for (; isdigit((unsigned char)*s); s++, n++)
        if (n < 18) x = 10 * x + (*s - '0');
    *v = x;
    return *s == '\0' && n <= 18;
}

static int mm_word_is(const char *w, const char *want) { return strcasecmp(w, want) == 0; }

/* A line quoted in a message: clipped, with binary bytes shown as '?'. */
static const char *mm_quote(const char *s, char *buf, size_t len)
{
    size_t k = 0;
    for (; s[k] && k + 1 < len; k++) buf[k] = isprint((unsigned char)s[k]) ? s[k] : '?';
    buf[k] = '\0';
    return buf;
}

static ata_status mm_bad_word(const mm_lines *r, const char *what, const char *w, const char *expected)
{
    return ata_fail(ATA_ERR_FORMAT, "%s: line %lld: %s '%s' is not %s", r->name, r->lineno, what, w, expected);
}

static ata_status mm_unsupported(const mm_lines *r, const char *what)
{
    return ata_fail(ATA_ERR_UNSUPPORTED, "%s: line %lld: %s is not supported (coordinate real, integer or "
                    "pattern; general, symmetric or skew-symmetric)", r->name, r->lineno, what);
}

/* %%MatrixMarket matrix coordinate FIELD SYMMETRY (words after the banner
 * case-insensitive, as the format allows). */
static ata_status mm_read_banner(mm_lines *r, mm_header *h)
{
    char *s = mm_read_line(r), *w[5], shown[41];
    if (!s) return ata_fail(ATA_ERR_FORMAT, "%s: empty file (no %%%%MatrixMarket header)", r->name);
    if (strncmp(s, "%%MatrixMarket", 14) != 0 || (s[14] && !isspace((unsigned char)s[14])))
        return ata_fail(ATA_ERR_FORMAT, "%s: line 1: not a Matrix Market header (expected '%%%%MatrixMarket "
                        "matrix coordinate ...', found '%s')", r->name, mm_quote(s, shown, sizeof shown));
    int n = mm_words(s, w, 5);
    if (n != 5)
        return ata_fail(ATA_ERR_FORMAT, "%s: line 1: header has %d words after %%%%MatrixMarket, expected 4 "
                        "(object format field symmetry)", r->name, n - 1);
    if (!mm_word_is(w[1], "matrix")) return mm_bad_word(r, "object", w[1], "'matrix'");
    if (mm_word_is(w[2], "array")) return mm_unsupported(r, "dense 'array' storage");
    if (!mm_word_is(w[2], "coordinate")) return mm_bad_word(r, "format", w[2], "'coordinate' or 'array'");
    if (mm_word_is(w[3], "complex")) return mm_unsupported(r, "a 'complex' matrix");
    if (mm_word_is(w[3], "real")) h->field = MM_REAL;
    else if (mm_word_is(w[3], "integer")) h->field = MM_INTEGER;
    else if (mm_word_is(w[3], "pattern")) h->field = MM_PATTERN;
    else return mm_bad_word(r, "field", w[3], "real, integer, pattern or complex");
    if (mm_word_is(w[4], "hermitian")) return mm_unsupported(r, "a 'hermitian' matrix");
    if (mm_word_is(w[4], "general")) h->sym = MM_GENERAL;
    else if (mm_word_is(w[4], "symmetric")) h->sym = MM_SYMMETRIC;
    else if (mm_word_is(w[4], "skew-symmetric")) h->sym = MM_SKEW;
    else return mm_bad_word(r, "symmetry", w[4], "general, symmetric, skew-symmetric or hermitian");
    if (h->field == MM_PATTERN && h->sym == MM_SKEW)
        return ata_fail(ATA_ERR_FORMAT, "%s: line 1: a pattern matrix cannot be skew-symmetric", r->name);
    return ATA_OK;
}

/* "rows columns entries": sizes the 32-bit CSR can hold, nothing empty,
 * symmetric storage only for square matrices, and no more empty rows or
 * columns than MM_EMPTY_ROWS_MAX (nothing is sized by the header before
 * this). */
static ata_status mm_read_size(mm_lines *r, mm_header *h, int sum)
{
    char *s = mm_read_data_line(r), *w[3];
    if (!s) return ata_fail(ATA_ERR_FORMAT, "%s: no size line (end of file after line %lld)", r->name, r->lineno);
    char shown[64];
    mm_quote(s, shown, sizeof shown);
    long long m, n, nnz;
    if (mm_words(s, w, 3) != 3 || !mm_parse_count(w[0], &m) || !mm_parse_count(w[1], &n)
        || !mm_parse_count(w[2], &nnz))
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld: size line must be 'rows columns entries', found '%s'",
                        r->name, r->lineno, shown);
    if (m > INT_MAX || n > INT_MAX || nnz > INT_MAX)
        return ata_fail(ATA_ERR_UNSUPPORTED, "%s: line %lld: %lld x %lld with %lld entries exceeds 32-bit indices",
                        r->name, r->lineno, m, n, nnz);
    if (m == 0 || n == 0 || nnz == 0)
        return ata_fail(ATA_ERR_EMPTY, "%s: line %lld: empty matrix (%lld x %lld with %lld entries)",
                        r->name, r->lineno, m, n, nnz);
    if (h->sym != MM_GENERAL && m != n)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld: a %s matrix must be square, the size line says %lld x %lld",
                        r->name, r->lineno, mm_sym_name[h->sym], m, n);
    if (nnz > m * n && !sum)     /* summed repeats may outnumber the positions */
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld: %lld entries cannot fit in %lld x %lld",
                        r->name, r->lineno, nnz, m, n);
    const long long most = h->sym == MM_GENERAL ? nnz : 2 * nnz;   /* entries after expansion, at most */
    const long long dim = m > n ? m : n;
    if (dim - most > MM_EMPTY_ROWS_MAX)
        return ata_fail(ATA_ERR_UNSUPPORTED, "%s: line %lld: %lld x %lld with %lld entries: at least %lld %s would "
                        "be empty%s; refused beyond %lld (raise the entry count or shrink the size)",
                        r->name, r->lineno, m, n, nnz, dim - most, m >= n ? "rows" : "columns",
                        m == n ? ", so the matrix has no full diagonal" : "", MM_EMPTY_ROWS_MAX);
    h->nrows = (int)m;
    h->ncols = (int)n;
    h->nnz = nnz;
    return ATA_OK;
}

static ata_status mm_read_index(const mm_lines *r, long long k, const char *what, const char *w, int max,
                                int *out)
{
    long long v;
    if (!mm_parse_count(w, &v))
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: %s index '%s' is not a positive integer",
                        r->name, r->lineno, k, what, w);
    if (v < 1 || v > max)
        return ata_fail(ATA_ERR_INDEX, "%s: line %lld, entry %lld: %s index %lld out of range 1..%d",
                        r->name, r->lineno, k, what, v, max);
    *out = (int)(v - 1);
    return ATA_OK;
}

static ata_status mm_read_value(const mm_lines *r, long long k, const mm_header *h, const char *w, double *out)
{
    char *end;
    errno = 0;
    if (h->field == MM_INTEGER) {
        *out = (double)strtoll(w, &end, 10);
        if (end == w || *end || errno)
            return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: value '%s' is not an integer",
                            r->name, r->lineno, k, w);
        return ATA_OK;
    }
    double x = strtod(w, &end);
    *out = x;
    if (end == w || *end)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: value '%s' is not a number",
                        r->name, r->lineno, k, w);
    if (!isfinite(x))       /* also overflow: 1e999 reads as Inf */
        return ata_fail(ATA_ERR_NONFINITE, "%s: line %lld, entry %lld: value '%s' is not finite",
                        r->name, r->lineno, k, w);
    return ATA_OK;
}

static void mm_coo_free(mm_coo *c)
{
    free(c->row); free(c->col); free(c->val); free(c->mirror_of);
    *c = (mm_coo){ 0 };
}

/* Room for `want` entries (want <= INT_MAX: the header said so). */
static ata_status mm_coo_reserve(mm_coo *c, long long want, const char *name)
{
    if (want <= c->cap) return ATA_OK;
    long long cap = c->cap ? 2LL * c->cap : 4096;
    if (cap < want) cap = want;
    if (cap > INT_MAX) cap = INT_MAX;
    int *row = realloc(c->row, (size_t)cap * sizeof *row);
    if (row) c->row = row;
    int *col = row ? realloc(c->col, (size_t)cap * sizeof *col) : NULL;
    if (col) c->col = col;
    double *val = col ? realloc(c->val, (size_t)cap * sizeof *val) : NULL;
    if (val) c->val = val;
    if (!val) return ata_fail(ATA_ERR_NOMEM, "%s: out of memory for %lld entries", name, cap);
    c->cap = (int)cap;
    return ATA_OK;
}

/* Entry k (1-based): "row column [value]", nothing missing, nothing extra. */
static ata_status mm_read_entry(mm_lines *r, long long k, const mm_header *h, char *s, mm_coo *c)
{
    char *w[4];
    int i, j;
    double x = 1;               /* pattern */
    const int need = h->field == MM_PATTERN ? 2 : 3, n = mm_words(s, w, 4);
    const char *form = need == 2 ? "'row column'" : "'row column value'";
    if (n < 2)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: expected %s, found %d word%s",
                        r->name, r->lineno, k, form, n, n == 1 ? "" : "s");
    ATA_TRY(mm_read_index(r, k, "row", w[0], h->nrows, &i));
    ATA_TRY(mm_read_index(r, k, "column", w[1], h->ncols, &j));
    if (n < need)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: missing value (a %s file needs %s)",
                        r->name, r->lineno, k, h->field == MM_INTEGER ? "integer" : "real", form);
    if (n > need)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: unexpected '%s' after %s",
                        r->name, r->lineno, k, w[need], form);
    if (h->sym == MM_SKEW && i == j)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: skew-symmetric file stores diagonal entry "
                        "(%d,%d); its diagonal is zero by definition", r->name, r->lineno, k, i + 1, j + 1);
    if (need == 3) ATA_TRY(mm_read_value(r, k, h, w[2], &x));
    ATA_TRY(mm_coo_reserve(c, c->n + 1LL, r->name));
    c->row[c->n] = i; c->col[c->n] = j; c->val[c->n++] = x;
    return ATA_OK;
}

static ata_status mm_read_entries(mm_lines *r, const mm_header *h, mm_coo *c)
{
    for (long long k = 1; k <= h->nnz; k++) {
        char *s = mm_read_data_line(r);
        if (!s)
            return ata_fail(ATA_ERR_FORMAT, "%s: end of file after %lld of the %lld declared entries (line %lld)",
                            r->name, k - 1, h->nnz, r->lineno);
        ATA_TRY(mm_read_entry(r, k, h, s, c));
    }
    if (mm_read_data_line(r))
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld: more entries than the %lld declared",
                        r->name, r->lineno, h->nnz);
    return ATA_OK;
}

/* Symmetric storage gives one triangle: each off-diagonal entry also
 * stands for its mirror, negated when skew-symmetric. */
static ata_status mm_expand(const mm_header *h, const char *name, mm_coo *c)
{
    c->nfile = c->n;
    if (h->sym == MM_GENERAL) return ATA_OK;
    long long n = c->n;
    for (int k = 0; k < c->nfile; k++) n += c->row[k] != c->col[k];
    if (n > INT_MAX)
        return ata_fail(ATA_ERR_UNSUPPORTED, "%s: %lld entries after symmetric expansion exceed 32-bit indices",
                        name, n);
    ATA_TRY(mm_coo_reserve(c, n, name));
    c->mirror_of = mem_alloc(((size_t)(n - c->nfile) + 1) * sizeof *c->mirror_of);
    if (!c->mirror_of) return ata_fail(ATA_ERR_NOMEM, "%s: out of memory for %lld entries", name, n);
    const double sign = h->sym == MM_SKEW ? -1 : 1;
    for (int k = 0; k < c->nfile; k++) {
        if (c->row[k] == c->col[k]) continue;
        c->mirror_of[c->n - c->nfile] = k;
        c->row[c->n] = c->col[k]; c->col[c->n] = c->row[k]; c->val[c->n++] = sign * c->val[k];
    }
    return ATA_OK;
}

/* File entry number (1-based) behind assembled position q of the triplets. */
static int mm_entry_of(const mm_coo *c, int q) { return 1 + (q < c->nfile ? q : c->mirror_of[q - c->nfile]); }

/* Triplets -> CSR. Repeated entries are an error unless the caller asked
 * for them to be summed: summing silently would change the matrix the
 * file's author meant. */
static ata_status mm_assemble(const mm_header *h, const mm_coo *c, const char *name, int sum, ata_csr **out)
{
    int dup[2];
    ata_status st = coo_assemble(h->nrows, h->ncols, c->n, c->row, c->col, c->val, sum, out, NULL, dup);
    if (st == ATA_ERR_DUPLICATE) {
        int a = mm_entry_of(c, dup[0]), b = mm_entry_of(c, dup[1]);
        if (a > b) { int t = a; a = b; b = t; }
        return ata_fail(ATA_ERR_DUPLICATE, "%s: duplicate entry (%d,%d) (1-based): entries %d and %d%s", name,
                        c->row[dup[0]] + 1, c->col[dup[0]] + 1, a, b,
                        h->sym == MM_GENERAL ? "" : " (symmetric storage holds each off-diagonal pair once)");
    }
    if (st != ATA_OK) return st;
    if (sum)        /* finite summands can add up to an infinity */
        for (int i = 0; i < (*out)->nrows; i++)
            for (int p = (*out)->rowptr[i]; p < (*out)->rowptr[i + 1]; p++)
                if (!isfinite((*out)->val[p])) {
                    const int j = (*out)->col[p];
                    ata_csr_free(*out);
                    *out = NULL;
                    return ata_fail(ATA_ERR_NONFINITE, "%s: duplicates of (%d,%d) (1-based) sum to a non-finite value",
                                    name, i + 1, j + 1);
                }
    return ATA_OK;
}

/* A file on disk, or text in memory (an archive member). */
typedef struct {
    const char *path;
    const char *buf;
    size_t len;
    const char *name;           /* for messages */
} mm_source;

/* Top to bottom once: banner, size, entries (each checked as it is read,
 * naming its line), then the CSR. */
static ata_status mm_read_source(const mm_source *s, int sum, ata_csr **out)
{
    if (!s->path && s->len == 0)    /* fmemopen refuses a zero-length buffer */
        return ata_fail(ATA_ERR_FORMAT, "%s: empty file (no %%%%MatrixMarket header)", s->name);
    FILE *f = s->path ? fopen(s->path, "r") : fmemopen((void *)s->buf, s->len, "r");
    if (!f) return ata_fail(ATA_ERR_IO, "%s: cannot open: %s", s->name, strerror(errno));
    mm_lines r = { .f = f, .name = s->name };
    mm_header h = { 0 };
    mm_coo c = { 0 };
    ata_status st = mm_read_banner(&r, &h);
    if (st == ATA_OK) st = mm_read_size(&r, &h, sum);
    if (st == ATA_OK) st = mm_read_entries(&r, &h, &c);
    if (st == ATA_OK && ferror(f)) st = ata_fail(ATA_ERR_IO, "%s: read error: %s", s->name, strerror(errno));
    free(r.line);
    fclose(f);
    if (st == ATA_OK) st = mm_expand(&h, s->name, &c);
    if (st == ATA_OK) st = mm_assemble(&h, &c, s->name, sum, out);
    mm_coo_free(&c);
    return st;
}

/* ================================================================== */
/* Rutherford-Boeing through RBio                                      */
/* ================================================================== */

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
static ata_status rb_read_file(const char *path, const char *name, long long bytes, ata_csr **out)
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

/* ================================================================== */
/* Compressed files and archives through libarchive                    */
/* ================================================================== */

/* "rb", or a three-letter Rutherford-Boeing type: value kind (real,
 * complex, pattern, integer), symmetry, assembled/elemental. */
static int rb_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot) return 0;
    const char *e = dot + 1;
    if (!strcasecmp(e, "rb")) return 1;
    return strlen(e) == 3 && strchr("rcpiRCPI", e[0]) && strchr("suhzrSUHZR", e[1]) && strchr("aeAE", e[2]);
}

static int mtx_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && !strcasecmp(dot + 1, "mtx");
}

/* gzip, bzip2, xz, zstd, or an uncompressed tar ("ustar" at 257). */
static int arc_sniff(const char *path)
{
    unsigned char b[264] = { 0 };
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    return (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) || (n >= 3 && !memcmp(b, "BZh", 3))
           || (n >= 6 && !memcmp(b, "\xfd" "7zXZ", 6)) || (n >= 4 && !memcmp(b, "\x28\xb5\x2f\xfd", 4))
           || (n >= 262 && !memcmp(b + 257, "ustar", 5));
}

typedef struct {
    char *data;
    size_t len;
    int raw;                    /* a single compressed file, not an archive */
    char name[1024];            /* member path, or the stripped file name */
} arc_member;

/* What one read may do: sum duplicates, and how much decompressed data it
 * may hold (`limit`, said in messages with where it came from). */
typedef struct {
    int sum;
    size_t limit;
    const char *limit_from;
} rd_opts;

static ata_status arc_too_big(const char *path, const rd_opts *o)
{
    return ata_fail(ATA_ERR_UNSUPPORTED, "%s: decompressed data exceeds the input limit of %zu bytes (%s); raise it "
                    "with ATA_MAX_INPUT_BYTES or ata_read_options.max_input_bytes", path, o->limit, o->limit_from);
}

static ata_status arc_read_data(struct archive *a, const char *path, const rd_opts *o, arc_member *m)
{
    size_t cap = 1 << 16;
    m->data = mem_alloc(cap);
    m->len = 0;
    for (;;) {
        if (!m->data) return ata_fail(ATA_ERR_NOMEM, "%s: out of memory decompressing", path);
        la_ssize_t got = archive_read_data(a, m->data + m->len, cap - m->len - 1);
        if (got < 0)
            return ata_fail(ATA_ERR_FORMAT, "%s: corrupt archive or compressed data: %s", path,
                            archive_error_string(a));
        if (got == 0) break;
        m->len += (size_t)got;
        if (m->len > o->limit) return arc_too_big(path, o);
        if (cap - m->len - 1 == 0) {
            char *bigger = realloc(m->data, cap *= 2);
            if (!bigger) free(m->data);
            m->data = bigger;
        }
    }
    m->data[m->len] = '\0';
    return ATA_OK;
}

/* The Matrix Collection stores NAME/NAME.mtx next to NAME/NAME_b.mtx and
 * the like: the member whose file stem equals its folder is the matrix. */
static int arc_is_primary(const char *member)
{
    if (!strncmp(member, "./", 2)) member += 2;
    const char *slash = strrchr(member, '/'), *dot = strrchr(member, '.');
    if (!slash || !dot || dot < slash) return 0;
    const char *dir = slash;
    while (dir > member && dir[-1] != '/') dir--;
    const size_t dlen = (size_t)(slash - dir);
    return dlen == (size_t)(dot - slash - 1) && !strncmp(dir, slash + 1, dlen);
}

/* A single compressed file: the member is the file name minus the
 * compression suffix, so "x.rb.gz" is read as Rutherford-Boeing. */
static void arc_raw_name(const char *path, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    snprintf(buf, len, "%s", base ? base + 1 : path);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = '\0';
}

static void arc_member_free(arc_member *m) { free(m->data); m->data = NULL; }

/* Walk the members: take NAME/NAME.mtx (or .rb) at once, else keep the
 * first matrix file seen. */
static ata_status arc_pick(struct archive *a, const char *path, const rd_opts *o, arc_member *best)
{
    struct archive_entry *e;
    int r;
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
        if (archive_format(a) == ARCHIVE_FORMAT_RAW) {
            /* raw without a decompression filter: the magic bytes lied */
            if (archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE)
                return ata_fail(ATA_ERR_FORMAT, "%s: starts like a compressed file but cannot be decompressed",
                                path);
            arc_raw_name(path, best->name, sizeof best->name);
            best->raw = 1;
            return arc_read_data(a, path, o, best);
        }
        const char *mp = archive_entry_pathname(e);
        if (archive_entry_filetype(e) != AE_IFREG || !mp || !(mtx_extension(mp) || rb_extension(mp))) continue;
        const int primary = arc_is_primary(mp);
        if (best->data && !primary) continue;
        if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0
            && (unsigned long long)archive_entry_size(e) > o->limit)
            return arc_too_big(path, o);           /* before inflating any of it */
        arc_member_free(best);
        snprintf(best->name, sizeof best->name, "%s", mp);
        ATA_TRY(arc_read_data(a, path, o, best));
        if (primary) return ATA_OK;
    }
    if (r != ARCHIVE_EOF)
        return ata_fail(ATA_ERR_FORMAT, "%s: corrupt archive: %s", path, archive_error_string(a));
    if (!best->data)
        return ata_fail(ATA_ERR_FORMAT, "%s: archive holds no .mtx or Rutherford-Boeing file", path);
    return ATA_OK;
}

static ata_status arc_extract(const char *path, const rd_opts *o, arc_member *m)
{
    struct archive *a = archive_read_new();
    if (!a) return ata_fail(ATA_ERR_NOMEM, "%s: cannot start libarchive", path);
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_raw(a);     /* a lone .mtx.gz */
    ata_status st = ATA_OK;
    if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK)
        st = ata_fail(ATA_ERR_FORMAT, "%s: cannot open as an archive: %s", path, archive_error_string(a));
    else st = arc_pick(a, path, o, m);
    if (st != ATA_OK) arc_member_free(m);
    archive_read_free(a);
    return st;
}

/* RBio reads only named files: the member goes to an anonymous memory file
 * named through /proc, so nothing is left behind if the process dies
 * mid-read; without memfd or /proc, a temp file unlinked after the read. */
static ata_status arc_read_rb(const arc_member *m, const char *name, ata_csr **out)
{
    char tmp[4096];
    int fd = memfd_create("ata-rb", MFD_CLOEXEC), named = 0;
    if (fd >= 0) {
        snprintf(tmp, sizeof tmp, "/proc/self/fd/%d", fd);
        if (access(tmp, R_OK) != 0) { close(fd); fd = -1; }
    }
    if (fd < 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp, sizeof tmp, "%s/ata-rb-XXXXXX", dir && *dir ? dir : "/tmp");
        fd = mkstemp(tmp);
        if (fd < 0) return ata_fail(ATA_ERR_IO, "%s: cannot create a temporary file in %s: %s", name,
                                    dir && *dir ? dir : "/tmp", strerror(errno));
        named = 1;
    }
    size_t done = 0;
    while (done < m->len) {
        ssize_t w = write(fd, m->data + done, m->len - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    ata_status st = done == m->len ? rb_read_file(tmp, name, (long long)m->len, out)
                                   : ata_fail(ATA_ERR_IO, "%s: cannot write temporary file %s", name, tmp);
    if (named) unlink(tmp);
    close(fd);
    return st;
}

static ata_status arc_read(const char *path, const rd_opts *o, ata_csr **out)
{
    arc_member m = { 0 };
    ATA_TRY(arc_extract(path, o, &m));
    char name[4096];
    if (m.raw) snprintf(name, sizeof name, "%s", path);
    else snprintf(name, sizeof name, "%s:%s", path, m.name);
    ata_status st;
    if (rb_extension(m.name)) st = arc_read_rb(&m, name, out);
    else {
        mm_source s = { .buf = m.data, .len = m.len, .name = name };
        st = mm_read_source(&s, o->sum, out);
    }
    arc_member_free(&m);
    return st;
}

/* ================================================================== */
/* Entry point                                                         */
/* ================================================================== */

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
