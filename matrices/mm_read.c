/* mm_read.c - the Matrix Market reader: coordinate real, integer or
 * pattern; general, symmetric or skew-symmetric; from a file or from text
 * in memory (an archive member, archive_read.c), by our own one-pass
 * reader.
 *
 * The text is read once, line by line: every entry is checked as it is
 * read (the message names the line and entry at fault) and kept as a
 * triplet, then assembled into CSR by counting sorts, where repeated
 * entries are found (or summed, on request). Nothing is sized by the
 * header before the file has shown it holds what the header claims:
 * triplet arrays grow with the entries present, and rows and columns are
 * bounded by the entry count. Every message starts with the file. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "coo.h"
#include "error.h"
#include "mem.h"
#include "read_internal.h"

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

/* Top to bottom once: banner, size, entries (each checked as it is read,
 * naming its line), then the CSR. */
ata_status mm_read_source(const mm_source *s, int sum, ata_csr **out)
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
