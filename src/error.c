/* error.c - status strings and the thread-local detail of the last failure. */
#include <stdarg.h>
#include <stdio.h>
#include "error.h"

static _Thread_local char last_error[1024];

const char *ata_status_string(ata_status s)
{
    switch (s) {
    case ATA_OK: return "success";
    case ATA_ERR_ARG: return "invalid argument";
    case ATA_ERR_NOMEM: return "out of memory";
    case ATA_ERR_IO: return "cannot read or write file";
    case ATA_ERR_FORMAT: return "malformed input";
    case ATA_ERR_UNSUPPORTED: return "unsupported input";
    case ATA_ERR_EMPTY: return "empty matrix";
    case ATA_ERR_NOT_SQUARE: return "matrix is not square";
    case ATA_ERR_INDEX: return "index out of range";
    case ATA_ERR_DUPLICATE: return "duplicate entry";
    case ATA_ERR_NONFINITE: return "NaN or Inf value";
    case ATA_ERR_MISSING_DIAG: return "missing diagonal entry";
    case ATA_ERR_ZERO_PIVOT: return "zero pivot";
    case ATA_ERR_NOT_CONVERGED: return "not converged (maximum iterations reached)";
    case ATA_ERR_BREAKDOWN: return "breakdown (CG: non-positive curvature; BiCGStab, GMRES: a vanishing or untrustworthy recurrence; NaN/Inf)";
    case ATA_ERR_INDEFINITE_PC: return "indefinite preconditioner";
    case ATA_ERR_TIMEOUT: return "no progress within the wait timeout";
    case ATA_ERR_BACKEND: return "backend error";
    case ATA_ERR_INTERNAL: return "internal error";
    case ATA_ERR_DIVERGED: return "diverged (residual grew past dtol)";
    }
    return "unknown status";
}

const char *ata_last_error(void) { return last_error; }

void ata_clear_error(void) { last_error[0] = '\0'; }

ata_status ata_fail(ata_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}
