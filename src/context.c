/* context.c - backend choice, worker count, names of backends (policies: policy.c). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "context.h"
#include "cpu/cpu_pool.h"
#include "error.h"

#define ATA_MAX_THREADS 256

static const char *const backend_names[] = { "auto", "cpu", "cuda", "hip" };

const char *ata_backend_name(ata_backend b)
{
    return (unsigned)b < 4 ? backend_names[b] : "unknown";
}

ata_status ata_backend_from_name(const char *name, ata_backend *out)
{
    for (int b = 0; name && b < 4; b++)
        if (!strcasecmp(name, backend_names[b])) { *out = (ata_backend)b; return ATA_OK; }
    return ata_fail(ATA_ERR_ARG, "unknown backend '%s' (expected auto, cpu, cuda or hip)", name ? name : "(null)");
}

ata_context_options ata_context_defaults(void)
{
    ata_context_options o = { ATA_BACKEND_AUTO, 0, 0, 10.0, ATA_WAIT_DEFAULT };
    return o;
}

/* OMP_NUM_THREADS as OpenMP reads it (the first entry of a comma list is
 * the outer level's count), strictly: a value out of 1..ATA_MAX_THREADS or
 * not a number is an error, as --threads is. Unset or blank: 0. */
static ata_status env_threads(int *out)
{
    *out = 0;
    const char *e = getenv("OMP_NUM_THREADS");
    if (!e) return ATA_OK;
    const char *s = e;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return ATA_OK;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    int digits = end != s;
    while (isspace((unsigned char)*end)) end++;
    if (!digits || errno || (*end && *end != ',') || v < 1 || v > ATA_MAX_THREADS)
        return ata_fail(ATA_ERR_ARG, "OMP_NUM_THREADS='%s': expected a thread count in 1..%d", e, ATA_MAX_THREADS);
    *out = (int)v;
    return ATA_OK;
}

/* ATA_WAIT_POLICY=active|passive (as OMP_WAIT_POLICY); unset or blank:
 * the default spin-then-sleep. */
static ata_status env_wait_policy(ata_wait_policy *out)
{
    *out = ATA_WAIT_DEFAULT;
    const char *e = getenv("ATA_WAIT_POLICY");
    if (!e || !*e) return ATA_OK;
    if (!strcasecmp(e, "active")) *out = ATA_WAIT_ACTIVE;
    else if (!strcasecmp(e, "passive")) *out = ATA_WAIT_PASSIVE;
    else return ata_fail(ATA_ERR_ARG, "ATA_WAIT_POLICY='%s': expected active or passive", e);
    return ATA_OK;
}

/* Default workers: the CPUs this process may use (affinity mask, cgroup
 * quota), never more: a thread beyond them only waits for the others. */
static int default_threads(void)
{
    int t = cpu_pool_cpus_available();
    return t > ATA_MAX_THREADS ? ATA_MAX_THREADS : t < 1 ? 1 : t;
}

/* GPU backends come from run-time modules (backend_load.c): a missing
 * module, runtime or device is ATA_ERR_BACKEND "backend unavailable: ...". */
static ata_status try_backend(ata_context *ctx, ata_backend b)
{
    const ata_backend_ops *ops;
    ATA_TRY(backend_load(b, &ops));
    ctx->backend = b;
    ctx->ops = ops;
    ata_status st = ops->ctx_init(ctx);
    if (st != ATA_OK && b != ATA_BACKEND_CPU && !strstr(ata_last_error(), "backend unavailable")) {
        char why[768];
        snprintf(why, sizeof why, "%s", ata_last_error());
        return ata_fail(st, "backend unavailable: %s: %s", ata_backend_name(b), why);
    }
    return st;
}

ata_status ata_context_create(const ata_context_options *opt, ata_context **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "context: NULL output");
    ata_context_options o = opt ? *opt : ata_context_defaults();
    if (o.threads < 0 || o.threads > ATA_MAX_THREADS)
        return ata_fail(ATA_ERR_ARG, "context: threads = %d (expected 0 for default, or 1..%d)", o.threads, ATA_MAX_THREADS);
    if (!(o.wait_timeout_s > 0)) return ata_fail(ATA_ERR_ARG, "context: wait_timeout_s must be > 0");
    if ((unsigned)o.backend > ATA_BACKEND_HIP) return ata_fail(ATA_ERR_ARG, "context: unknown backend %d", (int)o.backend);
    if ((unsigned)o.wait_policy > ATA_WAIT_PASSIVE)
        return ata_fail(ATA_ERR_ARG, "context: unknown wait policy %d", (int)o.wait_policy);
    int env_t = 0;
    if (o.threads == 0) ATA_TRY(env_threads(&env_t));
    if (o.wait_policy == ATA_WAIT_DEFAULT) ATA_TRY(env_wait_policy(&o.wait_policy));
    ata_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ata_fail(ATA_ERR_NOMEM, "context: out of memory");
    ctx->opt = o;
    ctx->threads = o.threads ? o.threads : env_t ? env_t : default_threads();
    ctx->wait_timeout_s = o.wait_timeout_s;
    ata_status st;
    if (o.backend == ATA_BACKEND_AUTO) {
        st = try_backend(ctx, ATA_BACKEND_CUDA);
        if (st != ATA_OK) st = try_backend(ctx, ATA_BACKEND_HIP);
        if (st != ATA_OK) st = try_backend(ctx, ATA_BACKEND_CPU);
    } else {
        st = try_backend(ctx, o.backend);
    }
    if (st != ATA_OK) { free(ctx); return st; }
    ata_clear_error();
    *out = ctx;
    return ATA_OK;
}

void ata_context_destroy(ata_context *ctx)
{
    if (!ctx) return;
    ctx->ops->ctx_fini(ctx);
    free(ctx);
}

ata_backend ata_context_backend(const ata_context *ctx) { return ctx->backend; }
int ata_context_threads(const ata_context *ctx) { return ctx->threads; }

int ata_backend_available(ata_backend b)
{
    ata_context_options o = ata_context_defaults();
    o.backend = b;
    o.threads = 1;
    ata_context *ctx;
    if (ata_context_create(&o, &ctx) != ATA_OK) return 0;
    ata_context_destroy(ctx);
    return 1;
}
