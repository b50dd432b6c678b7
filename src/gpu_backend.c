/* gpu_backend.c - host side of the GPU backends: `cuda_backend_ops` when built
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
 * Environment (for experiments): ATA_GPU_GRAPH=0|1 (default 1 on CUDA, 0 on
 * HIP), ATA_GPU_GROUP=N forces N lanes per user task (power of two).
 *
 * Policy `vendor`: SpSV (cuSPARSE generic API / hipSPARSE) on the CSR of the
 * triangle (a push plan's CSC is transposed back to CSR at upload), and
 * csrilu02 for ILU0. */
#if defined(ATA_HAVE_CUDA) || defined(ATA_HAVE_HIP)

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "plan.h"
#include "gpu_kernels.h"

#if defined(ATA_HAVE_HIP)
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hipsparse/hipsparse.h>
#define GPU_NAME "HIP"
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
typedef csrilu02Info_t sp_ilu0_info;
#endif

typedef GPU(Error_t) gpu_err;
#define GPU_OK GPU(Success)

/* Every runtime call goes through one of these: a failure becomes
 * ATA_ERR_BACKEND naming the call and the runtime's message. */
static ata_status gfail(gpu_err e, const char *what)
{
    return ata_fail(ATA_ERR_BACKEND, GPU_NAME " %s: %s", what, GPU(GetErrorString)(e));
}
#define GCHECK(call) do { gpu_err e_ = (call); if (e_ != GPU_OK) return gfail(e_, #call); } while (0)
#define GCHECK_GO(call) do { gpu_err e_ = (call); if (e_ != GPU_OK) { st = gfail(e_, #call); goto fail; } } while (0)
/* Kernel launchers return the runtime's error code as an int. */
#define KCHECK(call) do { int e_ = (call); if (e_ != 0) return gfail((gpu_err)e_, #call); } while (0)
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
    double *val;
    uint32_t *done;
    unsigned *counters;
    ata_gpu_state *state;
    ata_gpu_launch *launches;
    int nlaunch, ncounters;
    graph_slot graphs[NGRAPH];
    unsigned long long graph_clock;
    int graph_broken;
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
} gpu_spmv_h;

static gpu_ctx *GC(ata_context *ctx) { return (gpu_ctx *)ctx->dev; }
static void *SV(gpu_ctx *g) { return (void *)g->stream; }

static int env_int(const char *name, int dflt)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : dflt;
}

static ata_status gmalloc(void **p, size_t bytes, const char *what)
{
    *p = NULL;
    gpu_err e = GPU(Malloc)(p, bytes ? bytes : 8);
    if (e != GPU_OK) {
        (void)GPU(GetLastError)();
        *p = NULL;
        return ata_fail(e == GPU(ErrorMemoryAllocation) ? ATA_ERR_NOMEM : ATA_ERR_BACKEND,
                        GPU_NAME " malloc of %zu bytes for %s: %s", bytes, what, GPU(GetErrorString)(e));
    }
    return ATA_OK;
}
static void gfree(void *p) { if (p) (void)GPU(Free)(p); }

static ata_status upload(gpu_ctx *g, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return ATA_OK;
    GCHECK(GPU(MemcpyAsync)(dst, src, bytes, GPU(MemcpyHostToDevice), g->stream));
    GCHECK(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
}

static ata_status download(gpu_ctx *g, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return ATA_OK;
    GCHECK(GPU(MemcpyAsync)(dst, src, bytes, GPU(MemcpyDeviceToHost), g->stream));
    GCHECK(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
}

static int resident_blocks(const gpu_ctx *g, int mode)
{
    int b = g->blocks_per_sm[mode] > 0 ? g->blocks_per_sm[mode] : 1;
    return g->sms * b;
}

/* Lanes per user task: the next power of two of the mean entries per task. */
static int pick_group(const gpu_ctx *g, double mean)
{
    int G = 1;
    if (g->group_override > 0) {
        while (G < g->group_override && G < g->warp) G *= 2;
        return G;
    }
    while (G < mean && G < g->warp) G *= 2;
    return G;
}

/* ---------------------------------------------------------------- context */
static void gpu_ctx_fini(ata_context *ctx)
{
    gpu_ctx *g = GC(ctx);
    if (!g) return;
    (void)GPU(SetDevice)(g->device);
    if (g->stream) (void)GPU(StreamSynchronize)(g->stream);
    if (g->have_sparse) SP(Destroy)(g->sparse);
    gfree(g->dot_partial);
    gfree(g->dot_out);
    if (g->host_state) (void)GPU_HOSTFREE(g->host_state);
    if (g->host_scalar) (void)GPU_HOSTFREE(g->host_scalar);
    if (g->stream) (void)GPU(StreamDestroy)(g->stream);
    free(g);
    ctx->dev = NULL;
}

static ata_status gpu_ctx_init(ata_context *ctx)
{
    int count = 0;
    gpu_err e = GPU(GetDeviceCount)(&count);
    if (e != GPU_OK || count <= 0) {
        (void)GPU(GetLastError)();
        return ata_fail(ATA_ERR_BACKEND, "no " GPU_NAME " device (%sGetDeviceCount: %s)",
                        GPU_NAME[0] == 'C' ? "cuda" : "hip",
                        e != GPU_OK ? GPU(GetErrorString)(e) : "0 devices");
    }
    if (ctx->opt.device < 0 || ctx->opt.device >= count)
        return ata_fail(ATA_ERR_BACKEND, GPU_NAME " device %d does not exist (%d device%s)",
                        ctx->opt.device, count, count == 1 ? "" : "s");
    gpu_ctx *g = calloc(1, sizeof *g);
    if (!g) return ata_fail(ATA_ERR_NOMEM, "gpu context: out of memory");
    ctx->dev = g;
    ata_status st = ATA_OK;
    g->device = ctx->opt.device;
    GCHECK_GO(GPU(SetDevice)(g->device));
    GCHECK_GO(GPU(DeviceGetAttribute)(&g->sms, GPU_ATTR_SMS, g->device));
    g->warp = ata_gpu_warp_size();
    g->wpb = ATA_GPU_BLOCK / g->warp;
    for (int m = 0; m < 4; m++) {
        int e2 = ata_gpu_occupancy(m, &g->blocks_per_sm[m]);
        if (e2 != 0) { st = gfail((gpu_err)e2, "occupancy query"); goto fail; }
        if (g->blocks_per_sm[m] < 1) g->blocks_per_sm[m] = 1;
    }
    g->timer_hz = ata_gpu_timer_hz();
    GCHECK_GO(GPU(StreamCreateWithFlags)(&g->stream, GPU(StreamNonBlocking)));
    GCHECK_GO(GPU_HOSTALLOC(&g->host_state, sizeof *g->host_state));
    GCHECK_GO(GPU_HOSTALLOC(&g->host_scalar, sizeof *g->host_scalar));
    g->dot_grid = 4 * g->sms;
    if (g->dot_grid > 1024) g->dot_grid = 1024;
    if ((st = gmalloc((void **)&g->dot_partial, (size_t)g->dot_grid * sizeof(double), "dot partials")) != ATA_OK)
        goto fail;
    if ((st = gmalloc((void **)&g->dot_out, sizeof(double), "dot result")) != ATA_OK) goto fail;
    g->use_graph = env_int("ATA_GPU_GRAPH", GPU_GRAPH_DEFAULT) != 0;
    g->group_override = env_int("ATA_GPU_GROUP", 0);
    /* Eq. 5.1: S_min = SMs x resident warps per SM at the pull kernel's
     * occupancy; greedy's chunk: the user tasks resident at once. */
    ctx->S_min = g->sms * g->blocks_per_sm[ATA_GPU_PULL] * g->wpb;
    ctx->capacity = ctx->S_min;
    return ATA_OK;
fail:
    gpu_ctx_fini(ctx);
    return st;
}

static ata_status ensure_sparse(gpu_ctx *g)
{
    if (g->have_sparse) return ATA_OK;
    ata_status st = ATA_OK;
    SCHECK_GO(SP(Create)(&g->sparse));
    g->have_sparse = 1;
    SCHECK_GO(SP(SetStream)(g->sparse, g->stream));
    return ATA_OK;
fail:
    return st;
}

/* ------------------------------------------------------------- plan state */
static void graphs_clear(gpu_plan *d)
{
    for (int k = 0; k < NGRAPH; k++)
        if (d->graphs[k].exec) {
            (void)GPU(GraphExecDestroy)(d->graphs[k].exec);
            d->graphs[k].exec = NULL;
            d->graphs[k].b = NULL;
            d->graphs[k].x = NULL;
        }
}

static void vendor_release(gpu_plan *d)
{
    if (d->vflags & V_SPSV) SP(SpSV_destroyDescr)(d->vspsv);
    if (d->vflags & V_MAT) SP(DestroySpMat)(d->vmat);
    if (d->vflags & V_VB) SP(DestroyDnVec)(d->vvb);
    if (d->vflags & V_VX) SP(DestroyDnVec)(d->vvx);
    if (d->vflags & V_ILU) SP(DestroyCsrilu02Info)(d->vilu);
    if (d->vflags & V_DESCR) SP(DestroyMatDescr)(d->vdescr);
    d->vflags = 0;
    gfree(d->vptr); gfree(d->vidx); gfree(d->vval); gfree(d->vtmp); gfree(d->vbuf);
    d->vptr = d->vidx = NULL;
    d->vval = d->vtmp = NULL;
    d->vbuf = NULL;
}

static void gpu_plan_release(ata_plan *p)
{
    gpu_plan *d = p->dev;
    if (!d) return;
    gpu_ctx *g = GC(p->ctx);
    (void)GPU(SetDevice)(g->device);
    (void)GPU(StreamSynchronize)(g->stream);
    graphs_clear(d);
    vendor_release(d);
    gfree(d->ptr); gfree(d->idx); gfree(d->val); gfree(d->diag); gfree(d->order);
    gfree(d->indeg); gfree(d->pending); gfree(d->done); gfree(d->counters); gfree(d->state);
    free(d->launches);
    free(d);
    p->dev = NULL;
}

static int plan_mode(const ata_plan *p)
{
    if (p->kind == PLAN_ILU0) return ATA_GPU_ILU0;
    return p->opt.traversal == ATA_PUSH ? ATA_GPU_PUSH : ATA_GPU_PULL;
}

/* The matrix and every array whose size is known before the schedule: made
 * by the first of probe_task_cost and plan_upload. `order` starts as the
 * identity (the probe runs all tasks as one untracked launch). */
static ata_status ensure_base(ata_plan *p)
{
    if (p->dev) return ATA_OK;
    gpu_ctx *g = GC(p->ctx);
    GCHECK(GPU(SetDevice)(g->device));
    gpu_plan *d = calloc(1, sizeof *d);
    if (!d) return ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory");
    p->dev = d;
    const ata_csr *T = p->T;
    const size_t n = (size_t)p->n, nnz = (size_t)T->nnz;
    d->n = p->n;
    d->nnz = T->nnz;
    d->mode = plan_mode(p);
    ata_status st;
    int *iota = NULL;
    if ((st = gmalloc((void **)&d->ptr, (n + 1) * sizeof(int), "row pointers")) ||
        (st = gmalloc((void **)&d->idx, nnz * sizeof(int), "column indices")) ||
        (st = gmalloc((void **)&d->val, nnz * sizeof(double), "values")) ||
        (st = gmalloc((void **)&d->order, n * sizeof(int), "SET order")) ||
        (st = gmalloc((void **)&d->state, sizeof(ata_gpu_state), "state")))
        goto fail;
    if (d->mode == ATA_GPU_PUSH) {
        if ((st = gmalloc((void **)&d->indeg, n * sizeof(int), "in-degrees")) ||
            (st = gmalloc((void **)&d->pending, n * sizeof(int), "pending counters")))
            goto fail;
    } else if ((st = gmalloc((void **)&d->done, n * sizeof(uint32_t), "done flags"))) {
        goto fail;
    }
    if (p->kind == PLAN_ILU0 && (st = gmalloc((void **)&d->diag, n * sizeof(int), "diagonal positions")))
        goto fail;
    if ((st = upload(g, d->ptr, T->rowptr, (n + 1) * sizeof(int))) ||
        (st = upload(g, d->idx, T->col, nnz * sizeof(int))) ||
        (st = upload(g, d->val, T->val, nnz * sizeof(double))))
        goto fail;
    if (d->diag && (st = upload(g, d->diag, p->diag, n * sizeof(int)))) goto fail;
    iota = malloc((n + 1) * sizeof *iota);
    if (!iota) { st = ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory"); goto fail; }
    for (size_t i = 0; i < n; i++) iota[i] = (int)i;
    if ((st = upload(g, d->order, iota, n * sizeof(int)))) goto fail;
    free(iota);
    iota = NULL;
    GCHECK_GO(GPU(MemsetAsync)(d->state, 0, sizeof(ata_gpu_state), g->stream));
    if (d->done) GCHECK_GO(GPU(MemsetAsync)(d->done, 0, n * sizeof(uint32_t), g->stream));
    if (d->pending) GCHECK_GO(GPU(MemsetAsync)(d->pending, 0, n * sizeof(int), g->stream));
    if (d->indeg) GCHECK_GO(GPU(MemsetAsync)(d->indeg, 0, n * sizeof(int), g->stream));
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
fail:
    free(iota);
    gpu_plan_release(p);
    return st;
}

static ata_gpu_args base_args(const ata_plan *p)
{
    const gpu_plan *d = p->dev;
    const gpu_ctx *g = GC(p->ctx);
    ata_gpu_args a;
    memset(&a, 0, sizeof a);
    a.mode = d->mode;
    a.n = d->n;
    a.lower = p->kind == PLAN_ILU0 || p->opt.uplo == ATA_LOWER;
    a.nonunit = p->kind == PLAN_ILU0 || p->opt.diag == ATA_NON_UNIT;
    a.ptr = d->ptr;
    a.idx = d->idx;
    a.val = d->val;
    a.diag = d->diag;
    a.order = d->order;
    a.done = d->done;
    a.pending = d->pending;
    a.indeg = d->indeg;
    a.counters = d->counters;
    a.ncounters = d->counters ? d->ncounters : 0;
    a.state = d->state;
    double ticks = p->ctx->wait_timeout_s * g->timer_hz;
    a.timeout_ticks = ticks > 1.8e19 ? 18000000000000000000ull : (unsigned long long)ticks;
    return a;
}

/* Grid and claim chunk of a launch of `rows` tasks at `G` lanes each. */
static void size_launch(const gpu_ctx *g, int mode, ata_gpu_launch *l)
{
    const int rows = l->pos_hi - l->pos_lo, NG = g->warp / l->group;
    const long long per_block = (long long)g->wpb * NG;
    long long need = (rows + per_block - 1) / per_block;
    const int cap = resident_blocks(g, mode);
    l->grid = (int)(need < 1 ? 1 : need > cap ? cap : need);
    l->chunk = NG;
    if (l->tracked) {
        /* A few windows per claim where there is plenty of work, one where
         * the launch barely fills the grid (keeps the SET order tight). */
        long long warps = (long long)l->grid * g->wpb;
        long long k = rows / (4 * warps * NG);
        if (k < 1) k = 1;
        if (k > 8) k = 8;
        l->chunk = (int)k * NG;
    }
}

/* Adaptive tasks -> launches (see the file comment). */
static ata_status build_launches(ata_plan *p, gpu_plan *d)
{
    const gpu_ctx *g = GC(p->ctx);
    const agg_result *s = &p->sched;
    const int *ptr = p->T->rowptr;
    const int diag_in_row = p->kind != PLAN_ILU0 && p->opt.diag == ATA_NON_UNIT;
    free(d->launches);
    d->launches = malloc(((size_t)s->natasks + 1) * sizeof *d->launches);
    if (!d->launches) return ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory");
    int nl = 0, ncounter = 0;
    for (int a = 0; a < s->natasks; a++) {
        const int lo = s->atask_ptr[a], hi = s->atask_ptr[a + 1];
        if (hi <= lo) continue;
        long long ent = 0;
        for (int k = lo; k < hi; k++) {
            int i = s->order[k];
            ent += ptr[i + 1] - ptr[i] - diag_in_row;
        }
        const int G = pick_group(g, (double)ent / (hi - lo));
        const int tracked = (s->flags[a] & ATASK_TRACKED) != 0;
        ata_gpu_launch *prev = nl ? &d->launches[nl - 1] : NULL;
        if (prev && !(s->flags[a] & ATASK_BARRIER) && prev->tracked == tracked && prev->group == G &&
            prev->pos_hi == lo) {
            prev->pos_hi = hi;      /* same segment: no coarse edge in between */
            continue;
        }
        ata_gpu_launch *l = &d->launches[nl++];
        memset(l, 0, sizeof *l);
        l->pos_lo = lo;
        l->pos_hi = hi;
        l->group = G;
        l->tracked = tracked;
    }
    for (int k = 0; k < nl; k++) {
        size_launch(g, d->mode, &d->launches[k]);
        d->launches[k].counter = d->launches[k].tracked ? ncounter++ : 0;
    }
    d->nlaunch = nl;
    d->ncounters = 0;
    gfree(d->counters);
    d->counters = NULL;
    ata_status st = gmalloc((void **)&d->counters, ((size_t)ncounter + 1) * sizeof(unsigned), "claim cursors");
    if (st != ATA_OK) return st;
    GCHECK(GPU(MemsetAsync)(d->counters, 0, ((size_t)ncounter + 1) * sizeof(unsigned), g->stream));
    d->ncounters = ncounter;
    return ATA_OK;
}

static ata_status vendor_setup(ata_plan *p, gpu_plan *d);

/* After analysis (idempotent: a second call re-sends the host schedule). */
static ata_status gpu_plan_upload(ata_plan *p)
{
    ATA_TRY(ensure_base(p));
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    const size_t n = (size_t)p->n;
    ata_status st = ATA_OK;
    GCHECK(GPU(SetDevice)(g->device));
    graphs_clear(d);
    d->graph_broken = 0;
    /* Values again (the ILU0 probe ran on them), the real order, in-degrees. */
    ATA_TRY(upload(g, d->val, p->T->val, (size_t)p->T->nnz * sizeof(double)));
    if (n && p->sched.order) ATA_TRY(upload(g, d->order, p->sched.order, n * sizeof(int)));
    if (d->indeg && p->indeg) ATA_TRY(upload(g, d->indeg, p->indeg, n * sizeof(int)));
    if (d->done) GCHECK(GPU(MemsetAsync)(d->done, 0, n * sizeof(uint32_t), g->stream));
    GCHECK(GPU(MemsetAsync)(d->state, 0, sizeof(ata_gpu_state), g->stream));
    ATA_TRY(build_launches(p, d));
    if (p->opt.policy == ATA_POLICY_VENDOR && !d->vendor) {
        if ((st = vendor_setup(p, d)) != ATA_OK) return st;
        d->vendor = 1;
    }
    GCHECK(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
}

/* ------------------------------------------------------------------ solve */
static ata_status enqueue_all(ata_plan *p, const ata_gpu_args *a)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    KCHECK(ata_gpu_begin(a, d->mode == ATA_GPU_PUSH, SV(g)));
    for (int k = 0; k < d->nlaunch; k++) KCHECK(ata_gpu_run(a, &d->launches[k], SV(g)));
    return ATA_OK;
}

/* The graph of this (b, x) pair: cached, or captured now (first solve with
 * these vectors). NULL exec on any failure: the caller launches directly. */
static GPU(GraphExec_t) graph_for(ata_plan *p, const ata_gpu_args *a)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    if (!g->use_graph || d->graph_broken) return NULL;
    graph_slot *victim = &d->graphs[0];
    for (int k = 0; k < NGRAPH; k++) {
        graph_slot *s = &d->graphs[k];
        if (s->exec && s->b == a->b && s->x == a->x) { s->used = ++d->graph_clock; return s->exec; }
        if (!s->exec || s->used < victim->used) victim = s;
    }
    GPU(Graph_t) graph = NULL;
    GPU(GraphExec_t) exec = NULL;
    if (GPU(StreamBeginCapture)(g->stream, GPU(StreamCaptureModeThreadLocal)) != GPU_OK) goto broken;
    ata_status st = enqueue_all(p, a);
    gpu_err e = GPU(StreamEndCapture)(g->stream, &graph);
    if (st != ATA_OK || e != GPU_OK || !graph) goto broken;
    if (GPU_GRAPH_INSTANTIATE(&exec, graph) != GPU_OK) goto broken;
    (void)GPU(GraphDestroy)(graph);
    if (victim->exec) (void)GPU(GraphExecDestroy)(victim->exec);
    victim->exec = exec;
    victim->b = a->b;
    victim->x = a->x;
    victim->used = ++d->graph_clock;
    return exec;
broken:
    /* Not fatal: this plan launches directly from now on. */
    if (graph) (void)GPU(GraphDestroy)(graph);
    (void)GPU(GetLastError)();
    ata_clear_error();
    d->graph_broken = 1;
    return NULL;
}

/* The one synchronisation of a solve: read the state word back. */
static ata_status finish(ata_plan *p, const char *what)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    ata_gpu_state *hs = g->host_state;
    GCHECK(GPU(MemcpyAsync)(hs, d->state, sizeof *hs, GPU(MemcpyDeviceToHost), g->stream));
    gpu_err e = GPU(StreamSynchronize)(g->stream);
    if (e != GPU_OK) return ata_fail(ATA_ERR_BACKEND, GPU_NAME " %s: %s", what, GPU(GetErrorString)(e));
    if (hs->err == ATA_GPU_ERR_TIMEOUT) {
        if (hs->stuck_dep >= 0)
            return ata_fail(ATA_ERR_TIMEOUT, "row %d waited more than %g s for row %d: the plan's "
                            "schedule is inconsistent", hs->stuck_row, p->ctx->wait_timeout_s, hs->stuck_dep);
        return ata_fail(ATA_ERR_TIMEOUT, "a dependency wait (row %d) waited more than %g s: the plan's "
                        "schedule is inconsistent", hs->stuck_row, p->ctx->wait_timeout_s);
    }
    if (hs->err) return ata_fail(ATA_ERR_INTERNAL, "%s: device error word %d", what, hs->err);
    if (p->kind == PLAN_ILU0 && hs->pivot_row >= 0 && hs->pivot_row < p->n) {
        const int r = hs->pivot_row;
        double u = NAN;
        ATA_TRY(download(g, &u, d->val + p->diag[r], sizeof u));
        return ata_fail(ATA_ERR_ZERO_PIVOT, "ilu0: zero pivot in row %d (u_ii = %g)", r, u);
    }
    return ATA_OK;
}

static ata_status run_plan(ata_plan *p, const double *b, double *x, const char *what)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    if (!d) return ata_fail(ATA_ERR_INTERNAL, "%s: plan was not uploaded", what);
    if (p->n == 0) return ATA_OK;
    GCHECK(GPU(SetDevice)(g->device));
    ata_gpu_args a = base_args(p);
    a.b = b;
    a.x = x;
    GPU(GraphExec_t) exec = graph_for(p, &a);
    if (exec) GCHECK(GPU(GraphLaunch)(exec, g->stream));
    else ATA_TRY(enqueue_all(p, &a));
    return finish(p, what);
}

static ata_status vendor_sptrsv(ata_plan *p, const double *b, double *x);
static ata_status vendor_ilu0(ata_plan *p);

static ata_status gpu_sptrsv(ata_plan *p, const double *b, double *x)
{
    if (p->dev && ((gpu_plan *)p->dev)->vendor) return vendor_sptrsv(p, b, x);
    return run_plan(p, b, x, "sptrsv");
}

static ata_status gpu_ilu0(ata_plan *p)
{
    if (p->kind != PLAN_ILU0) return ata_fail(ATA_ERR_ARG, "ilu0: plan was made for a triangular solve");
    if (p->dev && ((gpu_plan *)p->dev)->vendor) return vendor_ilu0(p);
    /* One factorisation per plan in practice: no graph for it. */
    gpu_ctx *g = GC(p->ctx);
    int keep = g->use_graph;
    g->use_graph = 0;
    ata_status st = run_plan(p, NULL, NULL, "ilu0");
    g->use_graph = keep;
    return st;
}

static ata_status gpu_ilu0_values(ata_plan *p, double *val)
{
    gpu_plan *d = p->dev;
    if (!d) return ata_fail(ATA_ERR_INTERNAL, "ilu0: plan was not uploaded");
    gpu_ctx *g = GC(p->ctx);
    GCHECK(GPU(SetDevice)(g->device));
    return download(g, val, d->val, (size_t)d->nnz * sizeof(double));
}

/* ----------------------------------------------------------------- probes */
/* T_l: cost of one coarse dependency, i.e. one more kernel in stream order
 * (a graph node when graphs are on), measured back to back with events. */
static ata_status gpu_probe_sync_cost(ata_context *ctx, double *T_l)
{
    gpu_ctx *g = GC(ctx);
    const int grid = resident_blocks(g, ATA_GPU_PULL), reps = 200;
    GPU(Event_t) e0 = NULL, e1 = NULL;
    GPU(Graph_t) graph = NULL;
    GPU(GraphExec_t) exec = NULL;
    ata_status st = ATA_OK;
    float ms = 0;
    GCHECK(GPU(SetDevice)(g->device));
    GCHECK_GO(GPU(EventCreate)(&e0));
    GCHECK_GO(GPU(EventCreate)(&e1));
    for (int r = 0; r < 20; r++) {
        int e = ata_gpu_empty(grid, SV(g));
        if (e) { st = gfail((gpu_err)e, "empty kernel"); goto fail; }
    }
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    if (g->use_graph && GPU(StreamBeginCapture)(g->stream, GPU(StreamCaptureModeThreadLocal)) == GPU_OK) {
        int bad = 0;
        for (int r = 0; r < reps / 4; r++) bad |= ata_gpu_empty(grid, SV(g));
        if (GPU(StreamEndCapture)(g->stream, &graph) != GPU_OK || bad || GPU_GRAPH_INSTANTIATE(&exec, graph) != GPU_OK)
            exec = NULL;
        (void)GPU(GetLastError)();
    }
    if (exec) {
        GCHECK_GO(GPU(GraphLaunch)(exec, g->stream));
        GCHECK_GO(GPU(EventRecord)(e0, g->stream));
        for (int r = 0; r < 4; r++) GCHECK_GO(GPU(GraphLaunch)(exec, g->stream));
        GCHECK_GO(GPU(EventRecord)(e1, g->stream));
    } else {
        GCHECK_GO(GPU(EventRecord)(e0, g->stream));
        for (int r = 0; r < reps; r++) {
            int e = ata_gpu_empty(grid, SV(g));
            if (e) { st = gfail((gpu_err)e, "empty kernel"); goto fail; }
        }
        GCHECK_GO(GPU(EventRecord)(e1, g->stream));
    }
    GCHECK_GO(GPU(EventSynchronize)(e1));
    GCHECK_GO(GPU(EventElapsedTime)(&ms, e0, e1));
    *T_l = ms * 1e-3 / reps;
    if (!(*T_l > 1e-7)) *T_l = 1e-7;
fail:
    if (exec) (void)GPU(GraphExecDestroy)(exec);
    if (graph) (void)GPU(GraphDestroy)(graph);
    if (e0) (void)GPU(EventDestroy)(e0);
    if (e1) (void)GPU(EventDestroy)(e1);
    return st;
}

/* T_u: every user task of this plan in one untracked launch (no waiting),
 * best of three. The launch runs `slots` tasks at a time (resident warps x
 * tasks per warp), so one task takes the kernel time over the number of
 * rounds: the mean time of a user task profiled in parallel (Eq. 5.2), not
 * the kernel's throughput per task. Runs before the schedule exists, on the
 * identity order; ILU0 runs on the device copy of the values, which
 * plan_upload sends again. */
static ata_status gpu_probe_task_cost(ata_plan *p, double *T_u)
{
    ATA_TRY(ensure_base(p));
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    const int n = p->n;
    if (n == 0) { *T_u = 1e-9; return ATA_OK; }
    double *vb = NULL, *vx = NULL;
    GPU(Event_t) e0 = NULL, e1 = NULL;
    ata_status st = ATA_OK;
    GCHECK(GPU(SetDevice)(g->device));
    if (d->mode != ATA_GPU_ILU0) {
        if ((st = gmalloc((void **)&vb, (size_t)n * sizeof(double), "probe vector")) ||
            (st = gmalloc((void **)&vx, (size_t)n * sizeof(double), "probe vector")))
            goto fail;
        int e = ata_gpu_fill(n, 1.0, vb, SV(g));
        if (!e) e = ata_gpu_fill(n, 0.0, vx, SV(g));
        if (e) { st = gfail((gpu_err)e, "probe vector fill"); goto fail; }
    }
    const int diag_in_row = p->kind != PLAN_ILU0 && p->opt.diag == ATA_NON_UNIT;
    ata_gpu_launch l;
    memset(&l, 0, sizeof l);
    l.pos_lo = 0;
    l.pos_hi = n;
    l.group = pick_group(g, (double)p->T->nnz / n - diag_in_row);
    l.tracked = 0;
    size_launch(g, d->mode, &l);
    ata_gpu_args a = base_args(p);
    a.b = vb;
    a.x = vx;
    GCHECK_GO(GPU(EventCreate)(&e0));
    GCHECK_GO(GPU(EventCreate)(&e1));
    double best = INFINITY;
    for (int r = 0; r < 4; r++) {
        int e;
        GCHECK_GO(GPU(EventRecord)(e0, g->stream));
        if ((e = ata_gpu_run(&a, &l, SV(g))) != 0) { st = gfail((gpu_err)e, "probe kernel"); goto fail; }
        GCHECK_GO(GPU(EventRecord)(e1, g->stream));
        GCHECK_GO(GPU(EventSynchronize)(e1));
        float ms = 0;
        GCHECK_GO(GPU(EventElapsedTime)(&ms, e0, e1));
        if (r > 0 && ms * 1e-3 < best) best = ms * 1e-3;   /* r = 0 warms up */
    }
    const long long slots = (long long)l.grid * g->wpb * (g->warp / l.group);
    const long long rounds = (n + slots - 1) / slots;
    *T_u = best / (double)(rounds > 0 ? rounds : 1);
    if (!(*T_u > 1e-12)) *T_u = 1e-12;
fail:
    if (e0) (void)GPU(EventDestroy)(e0);
    if (e1) (void)GPU(EventDestroy)(e1);
    gfree(vb);
    gfree(vx);
    return st;
}

/* ---------------------------------------------------------------- vendor */
static ata_status vendor_setup(ata_plan *p, gpu_plan *d)
{
    gpu_ctx *g = GC(p->ctx);
    ata_status st = ATA_OK;
    ata_csr *Tt = NULL;
    ATA_TRY(ensure_sparse(g));
    const int n = p->n;
    if (p->kind == PLAN_ILU0) {
        int bytes = 0, pos = -1;
        SCHECK_GO(SP(CreateMatDescr)(&d->vdescr));
        d->vflags |= V_DESCR;
        SCHECK_GO(SP(SetMatIndexBase)(d->vdescr, SPC(INDEX_BASE_ZERO)));
        SCHECK_GO(SP(SetMatType)(d->vdescr, SPC(MATRIX_TYPE_GENERAL)));
        SCHECK_GO(SP(CreateCsrilu02Info)(&d->vilu));
        d->vflags |= V_ILU;
        SCHECK_GO(SP(Dcsrilu02_bufferSize)(g->sparse, n, d->nnz, d->vdescr, d->val, d->ptr, d->idx,
                                           d->vilu, &bytes));
        if ((st = gmalloc(&d->vbuf, (size_t)(bytes > 0 ? bytes : 8), "csrilu02 buffer"))) goto fail;
        SCHECK_GO(SP(Dcsrilu02_analysis)(g->sparse, n, d->nnz, d->vdescr, d->val, d->ptr, d->idx, d->vilu,
                                         SPC(SOLVE_POLICY_USE_LEVEL), d->vbuf));
        if (SP(Xcsrilu02_zeroPivot)(g->sparse, d->vilu, &pos) == SPC(STATUS_ZERO_PIVOT)) {
            st = ata_fail(ATA_ERR_MISSING_DIAG, "ilu0: csrilu02: structural zero pivot in row %d", pos);
            goto fail;
        }
        return ATA_OK;
    }
    /* SpSV on CSR(T); a push plan holds CSC(T) = CSR(T^T): transpose back. */
    int *rp = d->ptr, *ci = d->idx;
    double *vv = d->val;
    if (p->opt.traversal == ATA_PUSH) {
        if ((st = ata_csr_transpose(p->T, &Tt)) != ATA_OK) goto fail;
        if ((st = gmalloc((void **)&d->vptr, ((size_t)n + 1) * sizeof(int), "vendor row pointers")) ||
            (st = gmalloc((void **)&d->vidx, (size_t)Tt->nnz * sizeof(int), "vendor columns")) ||
            (st = gmalloc((void **)&d->vval, (size_t)Tt->nnz * sizeof(double), "vendor values")))
            goto fail;
        if ((st = upload(g, d->vptr, Tt->rowptr, ((size_t)n + 1) * sizeof(int))) ||
            (st = upload(g, d->vidx, Tt->col, (size_t)Tt->nnz * sizeof(int))) ||
            (st = upload(g, d->vval, Tt->val, (size_t)Tt->nnz * sizeof(double))))
            goto fail;
        rp = d->vptr; ci = d->vidx; vv = d->vval;
        ata_csr_free(Tt);
        Tt = NULL;
    }
    if ((st = gmalloc((void **)&d->vtmp, 2 * (size_t)(n > 0 ? n : 1) * sizeof(double), "vendor vectors"))) goto fail;
    int fe = ata_gpu_fill(2LL * n, 0.0, d->vtmp, SV(g));
    if (fe) { st = gfail((gpu_err)fe, "vendor vector fill"); goto fail; }
    SCHECK_GO(SP(CreateCsr)(&d->vmat, n, n, d->nnz, rp, ci, vv, SPC(INDEX_32I), SPC(INDEX_32I),
                            SPC(INDEX_BASE_ZERO), GPU_R_64F));
    d->vflags |= V_MAT;
    SP(FillMode_t) fill = p->opt.uplo == ATA_LOWER ? SPC(FILL_MODE_LOWER) : SPC(FILL_MODE_UPPER);
    SP(DiagType_t) dt = p->opt.diag == ATA_UNIT ? SPC(DIAG_TYPE_UNIT) : SPC(DIAG_TYPE_NON_UNIT);
    SCHECK_GO(SP(SpMatSetAttribute)(d->vmat, SPC(SPMAT_FILL_MODE), &fill, sizeof fill));
    SCHECK_GO(SP(SpMatSetAttribute)(d->vmat, SPC(SPMAT_DIAG_TYPE), &dt, sizeof dt));
    SCHECK_GO(SP(CreateDnVec)(&d->vvb, n, d->vtmp, GPU_R_64F));
    d->vflags |= V_VB;
    SCHECK_GO(SP(CreateDnVec)(&d->vvx, n, d->vtmp + n, GPU_R_64F));
    d->vflags |= V_VX;
    SCHECK_GO(SP(SpSV_createDescr)(&d->vspsv));
    d->vflags |= V_SPSV;
    const double one = 1.0;
    size_t bytes = 0;
    SCHECK_GO(SP(SpSV_bufferSize)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                                  GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv, &bytes));
    if ((st = gmalloc(&d->vbuf, bytes ? bytes : 8, "SpSV buffer"))) goto fail;
    SCHECK_GO(SP(SpSV_analysis)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                                GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv, d->vbuf));
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
fail:
    ata_csr_free(Tt);
    return st;
}

static ata_status vendor_sptrsv(ata_plan *p, const double *b, double *x)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    ata_status st = ATA_OK;
    if (p->n == 0) return ATA_OK;
    GCHECK(GPU(SetDevice)(g->device));
    const double one = 1.0;
    SCHECK_GO(SP(DnVecSetValues)(d->vvb, (void *)b));
    SCHECK_GO(SP(DnVecSetValues)(d->vvx, x));
#if defined(ATA_HAVE_HIP)
    SCHECK_GO(SP(SpSV_solve)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                             GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv, d->vbuf));
#else
    SCHECK_GO(SP(SpSV_solve)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                             GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv));
#endif
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
fail:
    return st;
}

static ata_status vendor_ilu0(ata_plan *p)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    ata_status st = ATA_OK;
    int pos = -1;
    GCHECK(GPU(SetDevice)(g->device));
    SCHECK_GO(SP(Dcsrilu02)(g->sparse, p->n, d->nnz, d->vdescr, d->val, d->ptr, d->idx, d->vilu,
                            SPC(SOLVE_POLICY_USE_LEVEL), d->vbuf));
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    if (SP(Xcsrilu02_zeroPivot)(g->sparse, d->vilu, &pos) == SPC(STATUS_ZERO_PIVOT))
        return ata_fail(ATA_ERR_ZERO_PIVOT, "ilu0: zero pivot in row %d (csrilu02)", pos);
    return ATA_OK;
fail:
    return st;
}

/* ---------------------------------------------------------------- vectors */
static ata_status gpu_vec_alloc(ata_context *ctx, size_t n, double **v)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    ATA_TRY(gmalloc((void **)v, (n ? n : 1) * sizeof(double), "vector"));
    gpu_err e = GPU(MemsetAsync)(*v, 0, (n ? n : 1) * sizeof(double), g->stream);
    if (e != GPU_OK) { gfree(*v); *v = NULL; return gfail(e, "vector memset"); }
    return ATA_OK;
}

static void gpu_vec_free(ata_context *ctx, double *v)
{
    if (!v) return;
    (void)GPU(SetDevice)(GC(ctx)->device);
    gfree(v);
}

static ata_status gpu_vec_upload(ata_context *ctx, double *dst, const double *src, size_t n)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    return upload(g, dst, src, n * sizeof(double));
}

static ata_status gpu_vec_download(ata_context *ctx, double *dst, const double *src, size_t n)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    return download(g, dst, src, n * sizeof(double));
}

static void gpu_spmv_destroy(ata_context *ctx, void *h)
{
    gpu_spmv_h *s = h;
    if (!s) return;
    (void)GPU(SetDevice)(GC(ctx)->device);
    gfree(s->ptr); gfree(s->idx); gfree(s->val);
    free(s);
}

static ata_status gpu_spmv_create(ata_context *ctx, const ata_csr *A, void **h)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    gpu_spmv_h *s = calloc(1, sizeof *s);
    if (!s) return ata_fail(ATA_ERR_NOMEM, "spmv: out of memory");
    ata_status st;
    s->n = A->nrows;
    if ((st = gmalloc((void **)&s->ptr, ((size_t)A->nrows + 1) * sizeof(int), "spmv row pointers")) ||
        (st = gmalloc((void **)&s->idx, (size_t)A->nnz * sizeof(int), "spmv columns")) ||
        (st = gmalloc((void **)&s->val, (size_t)A->nnz * sizeof(double), "spmv values")) ||
        (st = upload(g, s->ptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof(int))) ||
        (st = upload(g, s->idx, A->col, (size_t)A->nnz * sizeof(int))) ||
        (st = upload(g, s->val, A->val, (size_t)A->nnz * sizeof(double)))) {
        gpu_spmv_destroy(ctx, s);
        return st;
    }
    s->G = pick_group(g, A->nrows ? (double)A->nnz / A->nrows : 1);
    long long per_block = (long long)g->wpb * (g->warp / s->G);
    long long need = (A->nrows + per_block - 1) / per_block, cap = (long long)resident_blocks(g, 3);
    s->grid = (int)(need < 1 ? 1 : need > cap ? cap : need);
    *h = s;
    return ATA_OK;
}

static ata_status gpu_spmv(ata_context *ctx, void *h, const double *x, double *y)
{
    gpu_ctx *g = GC(ctx);
    gpu_spmv_h *s = h;
    GCHECK(GPU(SetDevice)(g->device));
    KCHECK(ata_gpu_spmv(s->n, s->ptr, s->idx, s->val, s->G, x, y, s->grid, SV(g)));
    return ATA_OK;
}

static ata_status gpu_dot(ata_context *ctx, size_t n, const double *x, const double *y, double *out)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    KCHECK(ata_gpu_dot((long long)n, x, y, g->dot_partial, g->dot_grid, g->dot_out, SV(g)));
    ATA_TRY(download(g, g->host_scalar, g->dot_out, sizeof(double)));
    *out = *g->host_scalar;
    return ATA_OK;
}

static ata_status gpu_axpby(ata_context *ctx, size_t n, double a, const double *x, double b, double *y)
{
    gpu_ctx *g = GC(ctx);
    GCHECK(GPU(SetDevice)(g->device));
    KCHECK(ata_gpu_axpby((long long)n, a, x, b, y, resident_blocks(g, 3), SV(g)));
    return ATA_OK;
}

/* A solve on the caller's device pointers. The context's stream first waits
 * for the work queued on `stream` (an event: no host wait), then runs the
 * solve and a dot x'x, whose non-finite value flags overflow or NaN on the
 * device; the one host synchronisation reads the state word and that dot
 * (finish). Only when the dot is not finite is x copied down, to name the
 * first bad row in solve order (what the CPU would name). */
static ata_status gpu_sptrsv_stream(ata_plan *p, const double *b, double *x, void *stream)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    if (!d) return ata_fail(ATA_ERR_INTERNAL, "sptrsv: plan was not uploaded");
    if (p->n == 0) return ATA_OK;
    GCHECK(GPU(SetDevice)(g->device));
    GPU(Stream_t) us = (GPU(Stream_t))stream;
    GPU(Event_t) ev = NULL;
    double *hx = NULL;
    ata_status st = ATA_OK;
    if (us && us != g->stream) {
        GCHECK(GPU(EventCreateWithFlags)(&ev, GPU(EventDisableTiming)));
        GCHECK_GO(GPU(EventRecord)(ev, us));
        GCHECK_GO(GPU(StreamWaitEvent)(g->stream, ev, 0));
    }
    if (d->vendor) {
        if ((st = vendor_sptrsv(p, b, x)) != ATA_OK) goto fail;
    } else {
        ata_gpu_args a = base_args(p);
        a.b = b;
        a.x = x;
        GPU(GraphExec_t) exec = graph_for(p, &a);
        if (exec) GCHECK_GO(GPU(GraphLaunch)(exec, g->stream));
        else if ((st = enqueue_all(p, &a)) != ATA_OK) goto fail;
    }
    int e = ata_gpu_dot((long long)p->n, x, x, g->dot_partial, g->dot_grid, g->dot_out, SV(g));
    if (e) { st = gfail((gpu_err)e, "non-finite check (dot)"); goto fail; }
    GCHECK_GO(GPU(MemcpyAsync)(g->host_scalar, g->dot_out, sizeof(double), GPU(MemcpyDeviceToHost), g->stream));
    if ((st = finish(p, "sptrsv")) != ATA_OK) goto fail;
    if (!isfinite(*g->host_scalar)) {
        if (!(hx = malloc((size_t)p->n * sizeof *hx))) { st = ata_fail(ATA_ERR_NOMEM, "sptrsv: out of memory"); goto fail; }
        if ((st = download(g, hx, x, (size_t)p->n * sizeof *hx)) != ATA_OK) goto fail;
        for (int k = 0; k < p->n; k++) {
            int i = p->opt.uplo == ATA_LOWER ? k : p->n - 1 - k;
            if (!isfinite(hx[i])) {
                st = ata_fail(ATA_ERR_NONFINITE, "sptrsv: row %d: x = %g is not finite (overflow, or NaN/Inf in b)",
                              i, hx[i]);
                break;
            }
        }
    }
fail:
    free(hx);
    if (ev) (void)GPU(EventDestroy)(ev);
    return st;
}

/* New values on the plan's pattern: host copy, device copy, and the vendor
 * objects rebuilt (their analysis depends on the values). */
static ata_status gpu_plan_values(ata_plan *p, const double *val)
{
    gpu_plan *d = p->dev;
    if (!d) return ata_fail(ATA_ERR_INTERNAL, "plan values: plan was not uploaded");
    gpu_ctx *g = GC(p->ctx);
    if (val != p->T->val) memcpy(p->T->val, val, (size_t)p->T->nnz * sizeof *val);
    GCHECK(GPU(SetDevice)(g->device));
    ATA_TRY(upload(g, d->val, p->T->val, (size_t)d->nnz * sizeof(double)));
    if (d->vendor) {
        vendor_release(d);
        d->vendor = 0;
        ATA_TRY(vendor_setup(p, d));
        d->vendor = 1;
    }
    return ATA_OK;
}

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
};

#else
/* Built without a GPU toolchain: nothing here (ISO C wants a declaration). */
typedef int ata_gpu_backend_absent;
#endif
