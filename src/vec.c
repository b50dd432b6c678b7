/* vec.c - vectors in a context's memory space (device memory on GPU
 * backends, host arrays on host backends). */
#include <string.h>
#include "error.h"
#include "plan.h"

ata_status ata_vec_alloc(ata_context *ctx, size_t n, double **v)
{
    if (!ctx || !v) return ata_fail(ATA_ERR_ARG, "vec alloc: NULL argument");
    ATA_TRY(ctx->ops->vec_alloc(ctx, n, v));
    if (ctx->ops->caps & BACKEND_HOST_VECTORS) memset(*v, 0, (n ? n : 1) * sizeof **v);   /* zeroed, as on a GPU */
    return ATA_OK;
}

void ata_vec_free(ata_context *ctx, double *v)
{
    if (ctx && v) ctx->ops->vec_free(ctx, v);
}

ata_status ata_vec_upload(ata_context *ctx, double *dst, const double *src_host, size_t n)
{
    if (!ctx || !dst || !src_host) return ata_fail(ATA_ERR_ARG, "vec upload: NULL argument");
    return ctx->ops->vec_upload(ctx, dst, src_host, n);
}

ata_status ata_vec_download(ata_context *ctx, double *dst_host, const double *src, size_t n)
{
    if (!ctx || !dst_host || !src) return ata_fail(ATA_ERR_ARG, "vec download: NULL argument");
    return ctx->ops->vec_download(ctx, dst_host, src, n);
}
