/* archive_read.c - compressed files (.mtx.gz, .rb.bz2, ...) and
 * SuiteSparse Matrix Collection archives (.tar.gz) through libarchive: the
 * matrix member is found and decompressed into memory, with the
 * decompressed size capped (rd_opts.limit) so that a small archive cannot
 * fill memory, then read as Matrix Market text (mm_read.c) or as a
 * Rutherford-Boeing file (rb_read.c). Every message starts with the
 * file. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>
#include "error.h"
#include "mem.h"
#include "read_internal.h"

static int mtx_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && !strcasecmp(dot + 1, "mtx");
}

/* gzip, bzip2, xz, zstd, or an uncompressed tar ("ustar" at 257). */
int arc_sniff(const char *path)
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

ata_status arc_read(const char *path, const rd_opts *o, ata_csr **out)
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
