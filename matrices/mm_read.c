/* mm_read.c - ata_matrix_read: Matrix Market through CHOLMOD,
 * Rutherford-Boeing through RBio, compressed files and SuiteSparse Matrix
 * Collection archives through libarchive.
 *
 * CHOLMOD parses, but it is lenient where this library must not be: it
 * reads a missing or unparsable value as 1, ignores entries beyond the
 * declared count, accepts a 'complex' header with real data and a 3x4
 * 'symmetric' matrix, and its failures say only "invalid format". So every
 * Matrix Market text also goes through mm_lint, a line-by-line check of our
 * own that names the line and entry at fault, before CHOLMOD sees it;
 * duplicates are found while the triplets are sorted into CSR. Every
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
#include <sys/stat.h>
#include <unistd.h>
#include "cholmod.h"
#include "error.h"

/* ================================================================== */
/* Matrix Market text check                                            */
/* ================================================================== */

typedef enum { MM_REAL, MM_INTEGER, MM_PATTERN } mm_field;
typedef enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW } mm_symmetry;

typedef struct {
    mm_field field;
    mm_symmetry sym;
    int nrows, ncols;
    long long nnz;              /* entries stored in the file */
    uint64_t print;             /* fingerprint of the entries, in file order */
} mm_header;

typedef struct {
    FILE *f;
    const char *name;
    char *line;
    size_t cap;
    long long lineno;
} mm_lines;

static const char *const mm_sym_name[] = { "general", "symmetric", "skew-symmetric" };

/* Order-dependent hash of the entries (1-based indices, value bits): our
 * reading and CHOLMOD's must agree on it. CHOLMOD reads lines into a
 * fixed buffer, and a line longer than that (a long comment, say) can
 * shift what it takes for the size line and the entries without any
 * error; the fingerprint turns that into one. */
static uint64_t mm_fingerprint(uint64_t h, long long i, long long j, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    const uint64_t w[3] = { (uint64_t)i, (uint64_t)j, b };
    for (int k = 0; k < 3; k++) {
        h = (h ^ w[k]) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

/* Next line without its line ending, or NULL at end of file. */
static char *mm_read_line(mm_lines *r)
{
    ssize_t len = getline(&r->line, &r->cap, r->f);
    if (len < 0) return NULL;
    r->lineno++;
    while (len > 0 && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r')) r->line[--len] = '\0';
    return r->line;
}

/* Next line that is neither a comment nor blank. */
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

/* A non-negative decimal integer, the whole word. */
static int mm_parse_count(const char *s, long long *v)
{
    if (!isdigit((unsigned char)*s)) return 0;
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return errno == 0 && *end == '\0';
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
static ata_status mm_lint_banner(mm_lines *r, mm_header *h)
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
 * symmetric storage only for square matrices. */
static ata_status mm_lint_size(mm_lines *r, mm_header *h)
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
    if (nnz > m * n)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld: %lld entries cannot fit in %lld x %lld",
                        r->name, r->lineno, nnz, m, n);
    h->nrows = (int)m;
    h->ncols = (int)n;
    h->nnz = nnz;
    return ATA_OK;
}

static ata_status mm_lint_index(const mm_lines *r, long long k, const char *what, const char *w, int max,
                                long long *out)
{
    long long v;
    if (!mm_parse_count(w, &v))
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: %s index '%s' is not a positive integer",
                        r->name, r->lineno, k, what, w);
    if (v < 1 || v > max)
        return ata_fail(ATA_ERR_INDEX, "%s: line %lld, entry %lld: %s index %lld out of range 1..%d",
                        r->name, r->lineno, k, what, v, max);
    *out = v;
    return ATA_OK;
}

static ata_status mm_lint_value(const mm_lines *r, long long k, const mm_header *h, const char *w, double *out)
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

/* Entry k: "row column [value]", nothing missing, nothing extra. */
static ata_status mm_lint_entry(mm_lines *r, long long k, mm_header *h, char *s)
{
    char *w[4];
    long long i, j;
    double x = 1;               /* pattern */
    const int need = h->field == MM_PATTERN ? 2 : 3, n = mm_words(s, w, 4);
    const char *form = need == 2 ? "'row column'" : "'row column value'";
    if (n < 2)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: expected %s, found %d word%s",
                        r->name, r->lineno, k, form, n, n == 1 ? "" : "s");
    ATA_TRY(mm_lint_index(r, k, "row", w[0], h->nrows, &i));
    ATA_TRY(mm_lint_index(r, k, "column", w[1], h->ncols, &j));
    if (n < need)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: missing value (a %s file needs %s)",
                        r->name, r->lineno, k, h->field == MM_INTEGER ? "integer" : "real", form);
    if (n > need)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: unexpected '%s' after %s",
                        r->name, r->lineno, k, w[need], form);
    if (h->sym == MM_SKEW && i == j)
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld, entry %lld: skew-symmetric file stores diagonal entry "
                        "(%lld,%lld); its diagonal is zero by definition", r->name, r->lineno, k, i, j);
    if (need == 3) ATA_TRY(mm_lint_value(r, k, h, w[2], &x));
    h->print = mm_fingerprint(h->print, i, j, x);
    return ATA_OK;
}

static ata_status mm_lint_entries(mm_lines *r, mm_header *h)
{
    for (long long k = 1; k <= h->nnz; k++) {
        char *s = mm_read_data_line(r);
        if (!s)
            return ata_fail(ATA_ERR_FORMAT, "%s: end of file after %lld of the %lld declared entries (line %lld)",
                            r->name, k - 1, h->nnz, r->lineno);
        ATA_TRY(mm_lint_entry(r, k, h, s));
    }
    if (mm_read_data_line(r))
        return ata_fail(ATA_ERR_FORMAT, "%s: line %lld: more entries than the %lld declared",
                        r->name, r->lineno, h->nnz);
    return ATA_OK;
}

/* The whole text, top to bottom; fills h on success. */
static ata_status mm_lint(FILE *f, const char *name, mm_header *h)
{
    mm_lines r = { .f = f, .name = name };
    ata_status st = mm_lint_banner(&r, h);
    if (st == ATA_OK) st = mm_lint_size(&r, h);
    if (st == ATA_OK) st = mm_lint_entries(&r, h);
    if (st == ATA_OK && ferror(f)) st = ata_fail(ATA_ERR_IO, "%s: read error: %s", name, strerror(errno));
    free(r.line);
    return st;
}

/* ================================================================== */
/* Triplets -> CSR                                                     */
/* ================================================================== */

/* Entries after symmetric expansion; ent[] is the 1-based entry number in
 * the file, kept so that a duplicate can be named. */
typedef struct {
    int nrows, ncols, n;
    int *row, *col, *ent;
    double *val;
} mm_coo;

static void mm_coo_free(mm_coo *c)
{
    free(c->row); free(c->col); free(c->ent); free(c->val);
}

/* Symmetric storage gives one triangle: each off-diagonal entry also
 * stands for its mirror, negated when skew-symmetric. */
static ata_status mm_coo_from_triplet(const cholmod_triplet *T, const mm_header *h, const char *name, mm_coo *c)
{
    const int *Ti = T->i, *Tj = T->j;
    const double *Tx = T->x;
    const int nnz = (int)h->nnz;
    long long n = nnz;
    if (h->sym != MM_GENERAL)
        for (int k = 0; k < nnz; k++) n += Ti[k] != Tj[k];
    if (n > INT_MAX)
        return ata_fail(ATA_ERR_UNSUPPORTED, "%s: %lld entries after symmetric expansion exceed 32-bit indices",
                        name, n);
    *c = (mm_coo){ .nrows = h->nrows, .ncols = h->ncols };
    c->row = malloc((size_t)n * sizeof *c->row);
    c->col = malloc((size_t)n * sizeof *c->col);
    c->ent = malloc((size_t)n * sizeof *c->ent);
    c->val = malloc((size_t)n * sizeof *c->val);
    if (!c->row || !c->col || !c->ent || !c->val) {
        mm_coo_free(c);
        return ata_fail(ATA_ERR_NOMEM, "%s: out of memory for %lld entries", name, n);
    }
    const double sign = h->sym == MM_SKEW ? -1 : 1;
    int q = 0;
    for (int k = 0; k < nnz; k++) {
        const double x = h->field == MM_PATTERN || !Tx ? 1.0 : Tx[k];
        c->row[q] = Ti[k]; c->col[q] = Tj[k]; c->val[q] = x; c->ent[q++] = k + 1;
        if (h->sym == MM_GENERAL || Ti[k] == Tj[k]) continue;
        c->row[q] = Tj[k]; c->col[q] = Ti[k]; c->val[q] = sign * x; c->ent[q++] = k + 1;
    }
    c->n = q;
    return ATA_OK;
}

/* Two stable counting sorts, by column then by row, give CSR with sorted
 * columns and any repeated (row, column) side by side; ent_out receives
 * the entry numbers in CSR order. */
static ata_status mm_coo_sort(const mm_coo *c, const char *name, ata_csr **out, int **ent_out)
{
    const int m = c->nrows, n = c->ncols, nz = c->n;
    ata_csr *A;
    ATA_TRY(ata_csr_alloc(m, n, nz, &A));
    int *bycol = malloc(((size_t)nz + 1) * sizeof *bycol), *cnt = calloc((size_t)n + 1, sizeof *cnt);
    int *ent = malloc(((size_t)nz + 1) * sizeof *ent);
    if (!bycol || !cnt || !ent) {
        free(bycol); free(cnt); free(ent); ata_csr_free(A);
        return ata_fail(ATA_ERR_NOMEM, "%s: out of memory sorting %d entries", name, nz);
    }
    for (int k = 0; k < nz; k++) cnt[c->col[k] + 1]++;
    for (int j = 0; j < n; j++) cnt[j + 1] += cnt[j];
    for (int k = 0; k < nz; k++) bycol[cnt[c->col[k]]++] = k;
    int *Ap = A->rowptr;
    memset(Ap, 0, ((size_t)m + 1) * sizeof *Ap);
    for (int k = 0; k < nz; k++) Ap[c->row[k] + 1]++;
    for (int i = 0; i < m; i++) Ap[i + 1] += Ap[i];
    for (int t = 0; t < nz; t++) {          /* Ap[i] advances as row i fills */
        const int k = bycol[t], q = Ap[c->row[k]]++;
        A->col[q] = c->col[k]; A->val[q] = c->val[k]; ent[q] = c->ent[k];
    }
    for (int i = m; i > 0; i--) Ap[i] = Ap[i - 1];
    Ap[0] = 0;
    free(bycol); free(cnt);
    *out = A;
    *ent_out = ent;
    return ATA_OK;
}

/* Repeated entries are an error: summing them silently would change the
 * matrix the file's author meant. */
static ata_status mm_check_duplicates(const ata_csr *A, const int *ent, const mm_header *h, const char *name)
{
    for (int i = 0; i < A->nrows; i++)
        for (int p = A->rowptr[i] + 1; p < A->rowptr[i + 1]; p++) {
            if (A->col[p] != A->col[p - 1]) continue;
            const int a = ent[p - 1] < ent[p] ? ent[p - 1] : ent[p];
            const int b = ent[p - 1] < ent[p] ? ent[p] : ent[p - 1];
            return ata_fail(ATA_ERR_DUPLICATE, "%s: duplicate entry (%d,%d) (1-based): entries %d and %d%s",
                            name, i + 1, A->col[p] + 1, a, b,
                            h->sym == MM_GENERAL ? "" : " (symmetric storage holds each off-diagonal pair once)");
        }
    return ATA_OK;
}

/* CHOLMOD's triplets, checked against the header our own pass read. */
static ata_status mm_from_triplet(const cholmod_triplet *T, const mm_header *h, const char *name, ata_csr **out)
{
    if (T->nrow != (size_t)h->nrows || T->ncol != (size_t)h->ncols || T->nnz < (size_t)h->nnz
        || T->itype != CHOLMOD_INT || T->dtype != CHOLMOD_DOUBLE
        || (T->xtype != CHOLMOD_REAL && T->xtype != CHOLMOD_PATTERN))
        return ata_fail(ATA_ERR_FORMAT, "%s: CHOLMOD read %zu x %zu with %zu entries, the header declares "
                        "%d x %d with %lld", name, T->nrow, T->ncol, T->nnz, h->nrows, h->ncols, h->nnz);
    const int *Ti = T->i, *Tj = T->j;
    const double *Tx = T->x;
    uint64_t print = 0;
    for (long long k = 0; k < h->nnz; k++)
        print = mm_fingerprint(print, Ti[k] + 1LL, Tj[k] + 1LL, h->field == MM_PATTERN || !Tx ? 1.0 : Tx[k]);
    if (print != h->print)
        return ata_fail(ATA_ERR_FORMAT, "%s: CHOLMOD's reading differs from the text (is a line longer than "
                        "CHOLMOD's line buffer?)", name);
    mm_coo c = { 0 };
    ATA_TRY(mm_coo_from_triplet(T, h, name, &c));
    ata_csr *A = NULL;
    int *ent = NULL;
    ata_status st = mm_coo_sort(&c, name, &A, &ent);
    mm_coo_free(&c);
    if (st == ATA_OK) st = mm_check_duplicates(A, ent, h, name);
    free(ent);
    if (st != ATA_OK) { ata_csr_free(A); return st; }
    *out = A;
    return ATA_OK;
}

/* ================================================================== */
/* Matrix Market through CHOLMOD                                       */
/* ================================================================== */

/* A file on disk, or text in memory (an archive member). */
typedef struct {
    const char *path;
    const char *buf;
    size_t len;
    const char *name;           /* for messages */
} mm_source;

static FILE *mm_open(const mm_source *s)
{
    return s->path ? fopen(s->path, "r") : fmemopen((void *)s->buf, s->len, "r");
}

/* CHOLMOD reports through a callback without a user pointer: keep its
 * last word per thread, for when nothing of ours explains the failure. */
static _Thread_local char mm_cholmod_msg[256];

static void mm_cholmod_error(int status, const char *file, int line, const char *msg)
{
    snprintf(mm_cholmod_msg, sizeof mm_cholmod_msg, "%s (status %d at %s:%d)", msg, status, file, line);
}

static ata_status mm_cholmod_read(const mm_source *s, cholmod_common *cm, cholmod_triplet **T)
{
    FILE *f = mm_open(s);
    if (!f) return ata_fail(ATA_ERR_IO, "%s: cannot open: %s", s->name, strerror(errno));
    mm_cholmod_msg[0] = '\0';
    *T = cholmod_read_triplet(f, cm);
    fclose(f);
    return ATA_OK;
}

static ata_status mm_lint_source(const mm_source *s, mm_header *h)
{
    if (!s->path && s->len == 0)    /* fmemopen refuses a zero-length buffer */
        return ata_fail(ATA_ERR_FORMAT, "%s: empty file (no %%%%MatrixMarket header)", s->name);
    FILE *f = mm_open(s);
    if (!f) return ata_fail(ATA_ERR_IO, "%s: cannot open: %s", s->name, strerror(errno));
    ata_status st = mm_lint(f, s->name, h);
    fclose(f);
    return st;
}

/* Our pass first: it names the line at fault, and it keeps malformed text
 * away from CHOLMOD, whose premature-EOF error path leaks the triplet it
 * was filling (CHOLMOD 3.0.14, seen under LeakSanitizer). CHOLMOD then
 * parses text already known to be well formed. */
static ata_status mm_read_source(const mm_source *s, ata_csr **out)
{
    mm_header h = { 0 };
    ATA_TRY(mm_lint_source(s, &h));
    cholmod_common cm;
    if (!cholmod_start(&cm)) return ata_fail(ATA_ERR_NOMEM, "%s: cannot start CHOLMOD", s->name);
    cm.print = 0;
    cm.error_handler = mm_cholmod_error;
    cholmod_triplet *T = NULL;
    ata_status st = mm_cholmod_read(s, &cm, &T);
    if (st == ATA_OK && !T)
        st = ata_fail(ATA_ERR_FORMAT, "%s: CHOLMOD cannot read it: %s", s->name,
                      mm_cholmod_msg[0] ? mm_cholmod_msg : "no reason given");
    if (st == ATA_OK) st = mm_from_triplet(T, &h, s->name, out);
    cholmod_free_triplet(&T, &cm);
    cholmod_finish(&cm);
    return st;
}

/* ================================================================== */
/* Rutherford-Boeing through RBio                                      */
/* ================================================================== */

/* Header cards: line 1 title, 2 card counts, 3 type and sizes, 4 formats;
 * then the column pointers, row indices and values, each PTRCRD, INDCRD,
 * VALCRD lines long. Used only to say where RBio's error lies. */
static void rb_where(const char *path, int status, char *buf, size_t len)
{
    long long tot = 0, ptr = 0, ind = 0, vals = 0;
    char line[256] = "";
    FILE *f = fopen(path, "r");
    int ok = f && fgets(line, sizeof line, f) && fgets(line, sizeof line, f)
             && sscanf(line, "%lld %lld %lld %lld", &tot, &ptr, &ind, &vals) == 4;
    if (f) fclose(f);
    const long long p0 = 5, i0 = p0 + ptr, v0 = i0 + ind;
    if (status == RBIO_HEADER_IOERROR || !ok) snprintf(buf, len, "the header (lines 1-4)");
    else if (status == RBIO_CP_IOERROR || status == RBIO_CP_INVALID)
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
        ones = malloc(((size_t)nnz + 1) * sizeof *ones);
        if (!ones) return ata_fail(ATA_ERR_NOMEM, "%s: out of memory", name);
        for (int p = 0; p < nnz; p++) ones[p] = 1;
        At.val = ones;
    }
    ata_status st = ata_csr_transpose(&At, out);
    free(ones);
    return st;
}

static ata_status rb_read_file(const char *path, const char *name, ata_csr **out)
{
    char title[73], key[9], mtype[4];
    int asize, znz;
    rb_data d = { 0 };
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

static ata_status arc_read_data(struct archive *a, const char *path, arc_member *m)
{
    size_t cap = 1 << 16;
    m->data = malloc(cap);
    m->len = 0;
    for (;;) {
        if (!m->data) return ata_fail(ATA_ERR_NOMEM, "%s: out of memory decompressing", path);
        la_ssize_t got = archive_read_data(a, m->data + m->len, cap - m->len - 1);
        if (got < 0)
            return ata_fail(ATA_ERR_FORMAT, "%s: corrupt archive or compressed data: %s", path,
                            archive_error_string(a));
        if (got == 0) break;
        m->len += (size_t)got;
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
static ata_status arc_pick(struct archive *a, const char *path, arc_member *best)
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
            return arc_read_data(a, path, best);
        }
        const char *mp = archive_entry_pathname(e);
        if (archive_entry_filetype(e) != AE_IFREG || !mp || !(mtx_extension(mp) || rb_extension(mp))) continue;
        const int primary = arc_is_primary(mp);
        if (best->data && !primary) continue;
        arc_member_free(best);
        snprintf(best->name, sizeof best->name, "%s", mp);
        ATA_TRY(arc_read_data(a, path, best));
        if (primary) return ATA_OK;
    }
    if (r != ARCHIVE_EOF)
        return ata_fail(ATA_ERR_FORMAT, "%s: corrupt archive: %s", path, archive_error_string(a));
    if (!best->data)
        return ata_fail(ATA_ERR_FORMAT, "%s: archive holds no .mtx or Rutherford-Boeing file", path);
    return ATA_OK;
}

static ata_status arc_extract(const char *path, arc_member *m)
{
    struct archive *a = archive_read_new();
    if (!a) return ata_fail(ATA_ERR_NOMEM, "%s: cannot start libarchive", path);
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_raw(a);     /* a lone .mtx.gz */
    ata_status st = ATA_OK;
    if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK)
        st = ata_fail(ATA_ERR_FORMAT, "%s: cannot open as an archive: %s", path, archive_error_string(a));
    else st = arc_pick(a, path, m);
    if (st != ATA_OK) arc_member_free(m);
    archive_read_free(a);
    return st;
}

/* RBio reads only named files: the member goes to a private temp file. */
static ata_status arc_read_rb(const arc_member *m, const char *name, ata_csr **out)
{
    const char *dir = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/ata-rb-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0) return ata_fail(ATA_ERR_IO, "%s: cannot create a temporary file in %s: %s", name,
                                dir && *dir ? dir : "/tmp", strerror(errno));
    FILE *f = fdopen(fd, "w");
    int ok = f && fwrite(m->data, 1, m->len, f) == m->len;
    if (f) ok = fclose(f) == 0 && ok; else close(fd);
    ata_status st = ok ? rb_read_file(tmp, name, out)
                       : ata_fail(ATA_ERR_IO, "%s: cannot write temporary file %s", name, tmp);
    unlink(tmp);
    return st;
}

static ata_status arc_read(const char *path, ata_csr **out)
{
    arc_member m = { 0 };
    ATA_TRY(arc_extract(path, &m));
    char name[4096];
    if (m.raw) snprintf(name, sizeof name, "%s", path);
    else snprintf(name, sizeof name, "%s:%s", path, m.name);
    ata_status st;
    if (rb_extension(m.name)) st = arc_read_rb(&m, name, out);
    else {
        mm_source s = { .buf = m.data, .len = m.len, .name = name };
        st = mm_read_source(&s, out);
    }
    arc_member_free(&m);
    return st;
}

/* ================================================================== */
/* Entry point                                                         */
/* ================================================================== */

ata_status ata_matrix_read(const char *path, ata_csr **out)
{
    if (!path || !out) return ata_fail(ATA_ERR_ARG, "matrix read: NULL argument");
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0) return ata_fail(ATA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return ata_fail(ATA_ERR_IO, "%s: is a directory, not a matrix file", path);
    ata_csr *A = NULL;
    ata_status st;
    if (arc_sniff(path)) st = arc_read(path, &A);
    else if (rb_extension(path)) st = rb_read_file(path, path, &A);
    else {
        mm_source s = { .path = path, .name = path };
        st = mm_read_source(&s, &A);
    }
    /* Belt and braces: whatever the route, the result obeys ata_csr's
     * contract (sorted, in range, finite). */
    if (st == ATA_OK) st = ata_csr_validate(A, path);
    if (st != ATA_OK) { ata_csr_free(A); return st; }
    *out = A;
    return ATA_OK;
}
