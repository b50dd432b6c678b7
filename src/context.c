/* context.c - backend choice, worker count, names of backends (policies: policy.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "context.h"
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
    ata_context_options o = { ATA_BACKEND_AUTO, 0, 0, 10.0 };
    return o;
}

static int default_threads(void)
{
    const char *e = getenv("OMP_NUM_THREADS");
    int t = e ? atoi(e) : 0;
    if (t <= 0) t = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (t <= 0) t = 1;
    return t > ATA_MAX_THREADS ? ATA_MAX_THREADS : t;
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
    ata_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ata_fail(ATA_ERR_NOMEM, "context: out of memory");
    ctx->opt = o;
    ctx->threads = o.threads ? o.threads : default_threads();
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
