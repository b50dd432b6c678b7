/* gpu_module.c - the entry point of a GPU backend module (libata_cuda.so,
 * libata_hip.so; see backend_load.c) and the few core functions the backend
 * calls, forwarded to the core that loaded it. Linked into the module only,
 * never into libata: here ata_fail writes the caller's ata_last_error(). */
#if defined(ATA_HAVE_CUDA) || defined(ATA_HAVE_HIP)
#include <stdarg.h>
#include <stdio.h>
#include "backend.h"
#include "context.h"
#include "error.h"
#include "plan.h"

#if defined(ATA_HAVE_HIP)
#define GPU_MODULE_OPS hip_backend_ops
#else
#define GPU_MODULE_OPS cuda_backend_ops
#endif

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
    return &GPU_MODULE_OPS;
}

#else
typedef int ata_gpu_module_absent;
#endif
