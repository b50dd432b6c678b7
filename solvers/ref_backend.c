/* ref_backend.c - see ref_backend.h. Every kernel is the loop the serial
 * path ran before the reference was a backend (krylov_ops.c, factor.c), in
 * the same summation order and with no fusion (spmv_dot and cg_update
 * NULL: krylov_ops composes them from spmv, axpby and dot), so results stay
 * bitwise those of the reference. A plan's T is solved as stored: the
 * triangle of a pull plan (or a whole matrix it borrows: ata_ref_sptrsv_csr
 * reads only the triangle, in its own order, so the bits do not change), the
 * CSC of a push plan; an ILU0 plan's T is factored by ata_ref_ilu0. */
#include <stdlib.h>
#include <string.h>
#include "context.h"
#include "error.h"
#include "mem.h"
#include "plan.h"
#include "ref_backend.h"

static ata_status ref_ctx_init(ata_context *ctx)
{
    ctx->threads = 1;
    ctx->S_min = 1;
    ctx->capacity = 1;
    return ATA_OK;
}

static void ref_ctx_fini(ata_context *ctx) { (void)ctx; }

static ata_status ref_plan_upload(ata_plan *p) { (void)p; return ATA_OK; }
static void ref_plan_release(ata_plan *p) { (void)p; }

static ata_status ref_sptrsv(ata_plan *p, const double *b, double *x)
{
    if (p->opt.traversal == ATA_PUSH) return ref_sptrsv_csc(p->T, p->opt.uplo, p->opt.diag, p->diag_inv, b, x);
    return ref_sptrsv_csr(p->T, p->opt.uplo, p->opt.diag, p->diag_inv, b, x);
}

static ata_status ref_ilu0(ata_plan *p) { return ata_ref_ilu0(p->T); }

static ata_status ref_values_out(ata_plan *p, double *val)
{
    if (val != p->T->val) memcpy(val, p->T->val, (size_t)p->T->nnz * sizeof *val);
    return ATA_OK;
}

static ata_status ref_values_in(ata_plan *p, const double *val)
{
    if (val != p->T->val) memcpy(p->T->val, val, (size_t)p->T->nnz * sizeof *val);
    return ATA_OK;
}

/* Never called: its plans are not scheduled (BACKEND_NO_SCHEDULE). */
static ata_status ref_probe_sync(ata_context *ctx, double *T_l)
{
    (void)ctx; (void)T_l;
    return ata_fail(ATA_ERR_INTERNAL, "reference backend: no probes (plans are not scheduled)");
}

static ata_status ref_probe_task(ata_plan *p, double *T_u)
{
    return ref_probe_sync(p->ctx, T_u);
}

static ata_status ref_vec_alloc(ata_context *ctx, size_t n, double **v)
{
    (void)ctx;
    *v = mem_calloc(n + 1, sizeof **v);
    return *v ? ATA_OK : ata_fail(ATA_ERR_NOMEM, "reference: out of memory for a vector of %zu", n);
}

static void ref_vec_free(ata_context *ctx, double *v) { (void)ctx; free(v); }

static ata_status ref_vec_copy(ata_context *ctx, double *dst, const double *src, size_t n)
{
    (void)ctx;
    if (dst != src) memcpy(dst, src, n * sizeof *dst);
    return ATA_OK;
}

/* The handle is A itself (krylov_ops keeps A alive while the handle is). */
static ata_status ref_spmv_create(ata_context *ctx, const ata_csr *A, void **h)
{
    (void)ctx;
    *h = (void *)A;
    return ATA_OK;
}

static void ref_spmv_destroy(ata_context *ctx, void *h) { (void)ctx; (void)h; }

static ata_status ref_spmv(ata_context *ctx, void *h, const double *x, double *y)
{
    (void)ctx;
    return ata_ref_spmv(h, x, y);
}

static ata_status ref_dot(ata_context *ctx, size_t n, const double *x, const double *y, double *out)
{
    (void)ctx;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i] * y[i];
    *out = s;
    return ATA_OK;
}

static ata_status ref_axpby(ata_context *ctx, size_t n, double a, const double *x, double b, double *y)
{
    (void)ctx;
    if (b == 0) {
        for (size_t i = 0; i < n; i++) y[i] = a * x[i];   /* y not read */
    } else {
        for (size_t i = 0; i < n; i++) y[i] = a * x[i] + b * y[i];
    }
    return ATA_OK;
}

const ata_backend_ops ref_backend_ops = {
    .name = "reference",
    .ctx_init = ref_ctx_init,
    .ctx_fini = ref_ctx_fini,
    .plan_upload = ref_plan_upload,
    .plan_release = ref_plan_release,
    .sptrsv = ref_sptrsv,
    .ilu0 = ref_ilu0,
    .ilu0_values = ref_values_out,
    .probe_sync_cost = ref_probe_sync,
    .probe_task_cost = ref_probe_task,
    .vec_alloc = ref_vec_alloc,
    .vec_free = ref_vec_free,
    .vec_upload = ref_vec_copy,
    .vec_download = ref_vec_copy,
    .spmv_create = ref_spmv_create,
    .spmv_destroy = ref_spmv_destroy,
    .spmv = ref_spmv,
    .dot = ref_dot,
    .axpby = ref_axpby,
    .plan_values = ref_values_in,
    .caps = BACKEND_HOST_VECTORS | BACKEND_NO_SCHEDULE | BACKEND_READS_WHOLE,
};

/* backend CPU: the reference runs on the host and takes the CPU's policy
 * names (and ignores them: it schedules nothing); code that asks for host
 * memory by `backend` sees the truth. */
#define REF_CONTEXT_INIT { .opt = { ATA_BACKEND_CPU, 1, 0, 10.0, ATA_WAIT_DEFAULT }, .backend = ATA_BACKEND_CPU, \
                           .ops = &ref_backend_ops, .threads = 1, .S_min = 1, .capacity = 1, .wait_timeout_s = 10.0 }

ata_context *ref_backend_context(void)
{
    static ata_context ref_ctx = REF_CONTEXT_INIT;
    return &ref_ctx;
}

ata_context *ref_backend_or(ata_context *ctx)
{
    return ctx ? ctx : ref_backend_context();
}

ata_status ref_backend_context_create(double wait_timeout_s, ata_context **out)
{
    ata_context *ctx = malloc(sizeof *ctx);
    if (!ctx) return ata_fail(ATA_ERR_NOMEM, "context: out of memory");
    *ctx = (ata_context)REF_CONTEXT_INIT;
    ctx->wait_timeout_s = ctx->opt.wait_timeout_s = wait_timeout_s;
    *out = ctx;
    return ATA_OK;
}
