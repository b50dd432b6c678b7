/* read_internal.h - what the matrix readers (mm_read.c, rb_read.c,
 * archive_read.c) and their entry point (read.c) share; nothing outside
 * matrices/ includes it. Each reader's entry, for the dispatch in read.c
 * and for archive members (Matrix Market text or Rutherford-Boeing files);
 * the bound on empty rows both text formats apply; the options of one
 * read. */
#ifndef ATA_READ_INTERNAL_H
#define ATA_READ_INTERNAL_H
#include <stddef.h>
#include "ata.h"

/* A file may declare this many more rows (or columns) than it has entries:
 * beyond it the empty rows alone would cost more than the file, which is
 * how a 60-byte header could ask for gigabytes. */
#define MM_EMPTY_ROWS_MAX (1LL << 20)

/* What one read may do: sum duplicates, and how much decompressed data it
 * may hold (`limit`, said in messages with where it came from). */
typedef struct {
    int sum;
    size_t limit;
    const char *limit_from;
} rd_opts;

/* Matrix Market (mm_read.c). A file on disk, or text in memory (an archive
 * member). */
typedef struct {
    const char *path;
    const char *buf;
    size_t len;
    const char *name;           /* for messages */
} mm_source;

ata_status mm_read_source(const mm_source *s, int sum, ata_csr **out);

/* Rutherford-Boeing (rb_read.c). bytes: the file's size, -1 if unknown. */
int rb_extension(const char *name);
ata_status rb_read_file(const char *path, const char *name, long long bytes, ata_csr **out);

/* Compressed files and archives (archive_read.c). */
int arc_sniff(const char *path);
ata_status arc_read(const char *path, const rd_opts *o, ata_csr **out);

#endif
