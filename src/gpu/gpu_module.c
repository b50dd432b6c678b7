/* gpu_module.c - the entry point of a GPU backend module (libata_cuda.so,
 * libata_hip.so; see backend_load.c), its ops table, and the few core
 * functions the backend calls, forwarded to the core that loaded it. Linked
 * into the module only, never into libata: here ata_fail writes the
 * caller's ata_last_error(). */
#include <stdarg.h>
#include "gpu_internal.h"

const ata_backend_ops OPS_NAME = {
#if defined(ATA_HAVE_HIP)
    .name = "hip",
#else
    .name = "cuda",
#endif
    .ctx_init = gpu_ctx_init,
    .ctx_fini = gpu_ctx_fini,
    .plan_upload = gpu_plan_upload,
    .plan_release = gpu_plan_release,
    .sptrsv = gpu_sptrsv,
    .ilu0 = gpu_ilu0,
    .ilu0_values = gpu_ilu0_values,
    .probe_sync_cost = gpu_probe_sync_cost,
    .probe_task_cost = gpu_probe_task_cost,
    .vec_alloc = gpu_vec_alloc,
    .vec_free = gpu_vec_free,
    .vec_upload = gpu_vec_upload,
    .vec_download = gpu_vec_download,
    .spmv_create = gpu_spmv_create,
    .spmv_destroy = gpu_spmv_destroy,
    .spmv = gpu_spmv,
    .dot = gpu_dot,
    .axpby = gpu_axpby,
    .plan_values = gpu_plan_values,
    .sptrsv_stream = gpu_sptrsv_stream,
    .cg_start = gpu_cg_start,
    .cg_steps = gpu_cg_steps,
    .cg_finish = gpu_cg_finish,
    .cg_free = gpu_cg_free,
};


static const ata_backend_host *core;

ata_status ata_fail(ata_status s, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return core->fail_msg(s, msg);
}

void ata_clear_error(void) { core->clear_error(); }
#ifndef ATA_EMU   /* the emulated module links its own csr.o (kernels/emu/emu.mk) */
void ata_csr_free(ata_csr *A) { core->csr_free(A); }
ata_status ata_csr_transpose(const ata_csr *A, ata_csr **out) { return core->csr_transpose(A, out); }
#endif

__attribute__((visibility("default"))) const ata_backend_ops *ata_backend_module(const ata_backend_host *host);
const ata_backend_ops *ata_backend_module(const ata_backend_host *host)
{
    if (!host || host->abi != ATA_BACKEND_ABI || host->sizeof_context != sizeof(ata_context) ||
        host->sizeof_plan != sizeof(ata_plan))
        return NULL;
    core = host;
    return &OPS_NAME;
}
