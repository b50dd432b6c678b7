/* gpu_internal.h - what the files of the GPU backend (src/gpu/) share: the
 * runtime name macros, the context's and a plan's device state, and the
 * helpers every file calls. Compiled only into the backend module
 * (libata_cuda.so, libata_hip.so; kernels/gpu.mk), never into libata.
 *
 * The files: gpu_device.c (context, device memory, the T_l probe),
 * gpu_exec.c (our kernels' host side: plans on the device, solves, ILU0,
 * the T_u probe), gpu_vendor.c (the cuSPARSE / hipSPARSE baseline, policy
 * `vendor`), gpu_blas.c (PCG's vectors, SpMV, dot, axpby), gpu_module.c (the
 * module's entry point and ops table), gpu_cg.c (PCG on the device).
 *
 * Host side of the GPU backends: `cuda_backend_ops` when built
 * with ATA_HAVE_CUDA (gcc + cudart + cuSPARSE), `hip_backend_ops` when built
 * with ATA_HAVE_HIP (gcc + amdhip64 + hipSPARSE). One source: the runtime
 * calls go through the GPU_/SP_ name macros below; the kernels are the
 * extern "C" launchers of kernels/ (gpu_kernels.h).
 *
 * Plan on the device (allocated once, at analysis; nothing is allocated on the
 * solve path): the plan's matrix copy (plan.h layout), the SET order, done
 * flags (pull, ILU0) or pending counters and in-degrees (push), one claim
 * cursor per launch, and a small state word (epoch, error, pivot). Adaptive
 * tasks become launches in stream order (the coarse dependencies); a barrier
 * segment's consecutive atasks with the same tracking and group width share
 * one launch. Every solve is: begin kernel (epoch++, cursors = 0, push: x = b,
 * pending = indeg), the launches, then one read of the state word (the only
 * host synchronisation). On CUDA the begin kernel and the launches are
 * captured once per (b, x) pair into a graph and replayed.
 *
 * Environment (for experiments, read once per context): ATA_GPU_GRAPH=0|1
 * (default 1 on CUDA, 0 on HIP), ATA_GPU_GROUP=N forces N lanes per user
 * task (power of two), ATA_GPU_WAIT=value|flag: a pull solve waits on x_j
 * itself (default) or on row j's done flag (the first design, kept until a
 * GPU run decides; ata_exec.cu); ATA_GPU_MAP=elastic|elastic-warp|fixed:
 * rows sized to their work (a thread per short row, a group for medium
 * rows, a warp with partial sums for long rows and a whole block for hubs;
 * default), the same with hubs on one warp (the second design), or one
 * group width per launch from its mean row length (the first design);
 * ATA_GPU_PCG=device|host: CG's
 * iterations on the device with the host reading every few (gpu_cg.c;
 * default) or driven from the host (four reads per iteration).
 *
 * Policy `vendor`: SpSV (cuSPARSE generic API / hipSPARSE) on the CSR of the
 * triangle (a push plan's CSC is transposed back to CSR at upload), and
 * csrilu02 for ILU0.
 *
 * Memory: every device array comes from cudaMalloc / hipMalloc. On AMD that
 * is coarse-grained memory, which push's fp64 atomic adds need: on
 * fine-grained (hipMallocManaged, host-registered) memory the hardware fp64
 * atomics of gfx90a/gfx942 are not atomic. Keep them hipMalloc'd.
 *
 * Built with ATA_EMU (make gpu-emu), the same code runs on the host SIMT
 * emulator in kernels/emu/ through its stand-in runtime headers; the vendor
 * policy then runs the serial reference (emulated results are not GPU
 * results). */
#ifndef ATA_GPU_INTERNAL_H
#define ATA_GPU_INTERNAL_H
#if !defined(ATA_HAVE_CUDA) && !defined(ATA_HAVE_HIP)
#error "src/gpu/ is built with -DATA_HAVE_CUDA or -DATA_HAVE_HIP only (kernels/gpu.mk)"
#endif


#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "plan.h"
#include "ilu0_row.h"
#include "gpu_kernels.h"

#if defined(ATA_HAVE_HIP)
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hipsparse/hipsparse.h>
#define GPU_NAME "HIP"
/* hipSPARSE 3 (ROCm 6) dropped the buffer argument of SpSV_solve. */
#if defined(hipsparseVersionMajor) && hipsparseVersionMajor >= 3
#define SPSV_SOLVE_HAS_BUFFER 0
#else
#define SPSV_SOLVE_HAS_BUFFER 1
#endif
#define OPS_NAME hip_backend_ops
#define GPU(x) hip##x
#define SP(x) hipsparse##x
#define SPC(x) HIPSPARSE_##x
#define GPU_R_64F HIP_R_64F
#define GPU_ATTR_SMS hipDeviceAttributeMultiprocessorCount
#define GPU_HOSTALLOC(p, sz) hipHostMalloc((void **)(p), (sz), 0)
#define GPU_HOSTFREE hipHostFree
#define GPU_GRAPH_INSTANTIATE(e, g) hipGraphInstantiateWithFlags((e), (g), 0)
#define GPU_GRAPH_DEFAULT 0
typedef csrilu02Info_t sp_ilu0_info;
#else
#define DISABLE_CUSPARSE_DEPRECATED 1   /* csrilu02 is the documented baseline */
#include <cuda_runtime_api.h>
#include <cusparse.h>
#define GPU_NAME "CUDA"
#define OPS_NAME cuda_backend_ops
#define GPU(x) cuda##x
#define SP(x) cusparse##x
#define SPC(x) CUSPARSE_##x
#define GPU_R_64F CUDA_R_64F
#define GPU_ATTR_SMS cudaDevAttrMultiProcessorCount
#define GPU_HOSTALLOC(p, sz) cudaMallocHost((void **)(p), (sz))
#define GPU_HOSTFREE cudaFreeHost
#define GPU_GRAPH_INSTANTIATE(e, g) cudaGraphInstantiate((e), (g), 0)
#define GPU_GRAPH_DEFAULT 1
#define SPSV_SOLVE_HAS_BUFFER 0
typedef csrilu02Info_t sp_ilu0_info;
#endif
#if defined(ATA_EMU)
#undef GPU_NAME
#if defined(ATA_HAVE_HIP)
#define GPU_NAME "HIP (emulated)"
#else
#define GPU_NAME "CUDA (emulated)"
#endif
#endif

typedef GPU(Error_t) gpu_err;
#define GPU_OK GPU(Success)

/* Every runtime call goes through one of these: a failure becomes
 * ATA_ERR_BACKEND naming the call and the runtime's message. */
ata_status gpu_fail(gpu_err e, const char *what);
#define GCHECK(call) do { gpu_err e_ = (call); if (e_ != GPU_OK) return gpu_fail(e_, #call); } while (0)
#define GCHECK_GO(call) do { gpu_err e_ = (call); if (e_ != GPU_OK) { st = gpu_fail(e_, #call); goto fail; } } while (0)
/* Kernel launchers return the runtime's error code as an int. */
#define KCHECK(call) do { int e_ = (call); if (e_ != 0) return gpu_fail((gpu_err)e_, #call); } while (0)
#define SCHECK_GO(call) do { SP(Status_t) s_ = (call); if (s_ != SPC(STATUS_SUCCESS)) { \
    st = ata_fail(ATA_ERR_BACKEND, GPU_NAME " sparse library: %s: status %d", #call, (int)s_); goto fail; } } while (0)

/* ------------------------------------------------------------------ types */
typedef struct {
    int device;
    GPU(Stream_t) stream;
    int sms, warp, wpb;
    int blocks_per_sm[4];       /* PULL, PUSH, ILU0, vector kernels */
    int dot_grid;
    double timer_hz;
    ata_gpu_state *host_state;  /* pinned: the state word read after a solve */
    double *host_scalar;        /* pinned: dot results */
    double *dot_partial, *dot_out;
    SP(Handle_t) sparse;        /* created on the first vendor plan */
    int have_sparse;
    int use_graph;
    int group_override;
    int wait;                   /* ATA_GPU_WAIT: ATA_GPU_WAIT_VALUE (default) or _FLAG */
    int elastic;                /* ATA_GPU_MAP: 1 elastic or elastic-warp, 0 fixed */
    int hub_block;              /* ATA_GPU_MAP=elastic (default): hubs split over a block, not a warp */
    unsigned spin_rounds, pause_ns; /* ATA_GPU_BACKOFF=ROUNDS:NS (default 32:64) */
    int pcg_device;             /* ATA_GPU_PCG: 1 device (default), 0 host (the first design) */
    uint32_t epoch0;            /* tests: ATA_GPU_EPOCH0 (see plan_epoch_start) */
} gpu_ctx;

#define NGRAPH 4
typedef struct {
    const double *b;
    double *x;
    GPU(GraphExec_t) exec;
    unsigned long long used;
} graph_slot;

typedef struct {
    int n, nnz, mode;
    int *ptr, *idx, *diag, *order, *indeg, *pending;
    ata_gpu_window *win;        /* elastic map: the windows of every launch */
    int nwin;
    int *posof;                 /* elastic: SET position of each row (WIN_FWD windows need it), or NULL */
    int *umap_row, *umap;       /* ILU0: the position map (gpu_kernels.h), or NULL */
    unsigned gen;               /* launches rebuilt this many times (device PCG's graph checks it) */
    double *val;
    uint32_t *done;
    unsigned *counters;
    ata_gpu_state *state;
    ata_gpu_launch *launches;
    int nlaunch, ncounters;
    graph_slot graphs[NGRAPH];
    unsigned long long graph_clock;
    int graph_broken;
    uint32_t epoch;             /* the device's state->epoch: begin kernels run since the reset */
    /* vendor */
    int vendor;
    int *vptr, *vidx;
    double *vval, *vtmp;
    void *vbuf;
    SP(SpMatDescr_t) vmat;
    SP(DnVecDescr_t) vvb, vvx;
    SP(SpSVDescr_t) vspsv;
    SP(MatDescr_t) vdescr;
    sp_ilu0_info vilu;
    int vflags;                 /* which vendor objects exist */
} gpu_plan;

enum { V_MAT = 1, V_VB = 2, V_VX = 4, V_SPSV = 8, V_DESCR = 16, V_ILU = 32 };

typedef struct {
    int n, G, grid;
    int *ptr, *idx;
    double *val;
    ata_gpu_window *win;        /* elastic map: windows of rows, or NULL (one G) */
    int nwin;
    int nhub;                   /* then win[nwin .. nwin + nhub): hub rows, a block each */
} gpu_spmv_h;

static inline gpu_ctx *GC(ata_context *ctx) { return (gpu_ctx *)ctx->dev; }
static inline void *SV(gpu_ctx *g) { return (void *)g->stream; }

/* Device memory and copies (gpu_device.c). Copies are synchronous. */
ata_status gpu_malloc(void **p, size_t bytes, const char *what);
void gpu_free(void *p);
ata_status gpu_upload(gpu_ctx *g, void *dst, const void *src, size_t bytes);
ata_status gpu_download(gpu_ctx *g, void *dst, const void *src, size_t bytes);
/* Resident blocks of kernel family `mode` (ATA_GPU_PULL.. ; 3: vectors). */
int gpu_resident_blocks(const gpu_ctx *g, int mode);
/* Lanes per user task: the next power of two of the mean entries per task. */
int gpu_pick_group(const gpu_ctx *g, double mean);

/* The vendor baseline (gpu_vendor.c), on a plan's device copy. */
ata_status gpu_vendor_setup(ata_plan *p, gpu_plan *d);
void gpu_vendor_release(gpu_plan *d);
ata_status gpu_vendor_sptrsv(ata_plan *p, const double *b, double *x);
ata_status gpu_vendor_ilu0(ata_plan *p);

/* A plan's solve enqueued for PCG on the device (gpu_exec.c; gpu_cg.c). */
ata_status gpu_plan_enqueue(ata_plan *p, const double *b, double *x, const int *stop);
ata_status gpu_plan_epochs(ata_plan *p, unsigned solves);
ata_status gpu_plan_state_read(ata_plan *p, ata_gpu_state *hs);
ata_status gpu_plan_state_check(ata_plan *p, const ata_gpu_state *hs, const char *what);
ata_status gpu_plan_state_clear(ata_plan *p);

/* The ops (gpu_module.c gathers them into the backend's table). */
ata_status gpu_ctx_init(ata_context *ctx);
void gpu_ctx_fini(ata_context *ctx);
ata_status gpu_probe_sync_cost(ata_context *ctx, double *T_l);
ata_status gpu_plan_upload(ata_plan *p);
void gpu_plan_release(ata_plan *p);
ata_status gpu_sptrsv(ata_plan *p, const double *b, double *x);
ata_status gpu_sptrsv_stream(ata_plan *p, const double *b, double *x, void *stream);
ata_status gpu_ilu0(ata_plan *p);
ata_status gpu_ilu0_values(ata_plan *p, double *val);
ata_status gpu_plan_values(ata_plan *p, const double *val);
ata_status gpu_probe_task_cost(ata_plan *p, double *T_u);
ata_status gpu_vec_alloc(ata_context *ctx, size_t n, double **v);
void gpu_vec_free(ata_context *ctx, double *v);
ata_status gpu_vec_upload(ata_context *ctx, double *dst, const double *src, size_t n);
ata_status gpu_vec_download(ata_context *ctx, double *dst, const double *src, size_t n);
ata_status gpu_spmv_create(ata_context *ctx, const ata_csr *A, void **h);
void gpu_spmv_destroy(ata_context *ctx, void *h);
ata_status gpu_spmv(ata_context *ctx, void *h, const double *x, double *y);
ata_status gpu_dot(ata_context *ctx, size_t n, const double *x, const double *y, double *out);
ata_status gpu_axpby(ata_context *ctx, size_t n, double a, const double *x, double b, double *y);
ata_status gpu_cg_start(ata_context *ctx, backend_cg *cg, const double *b_host, const double *x0_host);
ata_status gpu_cg_steps(ata_context *ctx, backend_cg *cg, int k, backend_cg_batch *out, backend_cg_rec *rec);
ata_status gpu_cg_finish(ata_context *ctx, backend_cg *cg, double *x_host, double *rr);
void gpu_cg_free(ata_context *ctx, backend_cg *cg);

#endif
