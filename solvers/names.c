/* names.c - the solvers' option names: preconditioner, reordering, pivot
 * shift, Krylov method and factor precision, each way (ata_*_name,
 * ata_*_from_name), for ata-bench's flags, reports and error messages.
 * Apart from pcg.c because factor.c and the benchmark read them too, and
 * a name table is no part of PCG. (The core's own names stay with their
 * modules: backends in src/context.c, policies in src/policy.c's table,
 * statuses in src/error.c.) */
#include <strings.h>
#include "error.h"

static const char *const precond_names[] = { "ilu0", "ic0", "none", "jacobi" };
static const char *const reorder_names[] = { "none", "rcm", "nd" };
static const char *const shift_names[] = { "none", "nonzero", "positive-definite" };
static const char *const ksp_names[] = { "cg", "bicgstab", "gmres" };

const char *ata_precond_name(ata_precond p)
{
    return (unsigned)p <= ATA_PC_JACOBI ? precond_names[p] : "unknown";
}

const char *ata_reorder_name(ata_reorder r)
{
    return (unsigned)r <= ATA_REORDER_ND ? reorder_names[r] : "unknown";
}

const char *ata_shift_name(ata_shift s)
{
    return (unsigned)s <= ATA_SHIFT_POSITIVE_DEFINITE ? shift_names[s] : "unknown";
}

ata_status ata_precond_from_name(const char *name, ata_precond *out)
{
    for (int p = 0; name && out && p <= ATA_PC_JACOBI; p++)
        if (!strcasecmp(name, precond_names[p])) { *out = (ata_precond)p; return ATA_OK; }
    return ata_fail(ATA_ERR_ARG, "unknown preconditioner '%s' (expected ilu0, ic0, jacobi or none)",
                    name ? name : "(null)");
}

ata_status ata_reorder_from_name(const char *name, ata_reorder *out)
{
    for (int r = 0; name && out && r <= ATA_REORDER_ND; r++)
        if (!strcasecmp(name, reorder_names[r])) { *out = (ata_reorder)r; return ATA_OK; }
    return ata_fail(ATA_ERR_ARG, "unknown reordering '%s' (expected none, rcm or nd)", name ? name : "(null)");
}

ata_status ata_shift_from_name(const char *name, ata_shift *out)
{
    if (name && out && (!strcasecmp(name, "positive_definite") || !strcasecmp(name, "pd"))) {
        *out = ATA_SHIFT_POSITIVE_DEFINITE;
        return ATA_OK;
    }
    for (int s = 0; name && out && s <= ATA_SHIFT_POSITIVE_DEFINITE; s++)
        if (!strcasecmp(name, shift_names[s])) { *out = (ata_shift)s; return ATA_OK; }
    return ata_fail(ATA_ERR_ARG, "unknown shift '%s' (expected none, nonzero or positive-definite)",
                    name ? name : "(null)");
}

const char *ata_ksp_name(ata_ksp m)
{
    return (unsigned)m <= ATA_KSP_GMRES ? ksp_names[m] : "unknown";
}

ata_status ata_ksp_from_name(const char *name, ata_ksp *out)
{
    for (int m = 0; name && out && m <= ATA_KSP_GMRES; m++)
        if (!strcasecmp(name, ksp_names[m])) { *out = (ata_ksp)m; return ATA_OK; }
    if (name && out && !strcasecmp(name, "bcgs")) { *out = ATA_KSP_BICGSTAB; return ATA_OK; }
    return ata_fail(ATA_ERR_ARG, "unknown Krylov method '%s' (expected cg, bicgstab or gmres)", name ? name : "(null)");
}

static const char *const precision_names[] = { "double", "mixed" };

const char *ata_precision_name(ata_precision p)
{
    return (unsigned)p <= ATA_PRECISION_MIXED ? precision_names[p] : "unknown";
}

ata_status ata_precision_from_name(const char *name, ata_precision *out)
{
    for (int p = 0; name && out && p <= ATA_PRECISION_MIXED; p++)
        if (!strcasecmp(name, precision_names[p])) { *out = (ata_precision)p; return ATA_OK; }
    return ata_fail(ATA_ERR_ARG, "unknown precision '%s' (expected double or mixed)", name ? name : "(null)");
}
