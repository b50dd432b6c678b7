/* error.h - status detail for ata_last_error(): one thread-local message,
 * the errno habit, so matrix loading works without a context. */
#ifndef ATA_ERROR_H
#define ATA_ERROR_H
#include "ata.h"

#if defined(__GNUC__)
#define ATA_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ATA_PRINTF(a, b)
#endif

/* Record the detail and return `s`, so callers write
 *   return ata_fail(ATA_ERR_INDEX, "%s: entry %d: row %d out of range", ...); */
ata_status ata_fail(ata_status s, const char *fmt, ...) ATA_PRINTF(2, 3);
void ata_clear_error(void);

#define ATA_TRY(expr) do { ata_status st_ = (expr); if (st_ != ATA_OK) return st_; } while (0)

#endif
