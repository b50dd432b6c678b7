/* gpu_cg.c - PCG on the device (backend.h's cg_* ops, driven by
 * solvers/cg_device.c for CG). CG's scalars (r'z, alpha, beta, the stop
 * word) stay in device memory (ata_gpu_cg_state): a reduction's last block
 * finishes it there (kernels/ata_blas.cu), so an iteration is kernels in
 * stream order and nothing else: q = A p with p'q, x += alpha p with r -=
 * alpha q and r'r (fused), the L and U solves, r'z, p = z + beta p. Where
 * CG would stop (converged, diverged, a breakdown) the device sets the stop
 * word and every later kernel returns at once. The iteration is captured
 * once as a graph (when graphs are on) and replayed k times per batch; the
 * host reads the stop word and the batch's records (p'Ap, r'r, r'z per
 * iteration) once per batch, and solvers/cg_device.c replays CG's checks
 * on them, so the messages and the iteration count are the host loop's.
 * The arithmetic is the host loop's on this backend (the same kernels'
 * expressions and reduction trees) except p'Ap, fused with the SpMV here:
 * its own fixed order, the same bits every run. */
#include "gpu_internal.h"

#define CG_MAX_BATCH 64

typedef struct {
    ata_gpu_cg_state *st, *hst;     /* device, pinned copy */
    ata_gpu_cg_rec *rec, *hrec;     /* CG_MAX_BATCH records, device and pinned */
    ata_gpu_state *hplan;           /* pinned: the L and U plans' state words */
    double *partial;                /* a partial sum per block of the largest grid */
    double *stage;                  /* pinned: b, x0 in; x out (2n) */
    GPU(GraphExec_t) exec;          /* one iteration, or NULL */
    unsigned gen[2];                /* the plans' layouts the graph was captured on */
    int graph_broken;
} cg_dev;

static void cg_dev_free(cg_dev *c)
{
    if (!c) return;
    if (c->exec) (void)GPU(GraphExecDestroy)(c->exec);
    gpu_free(c->st);
    gpu_free(c->rec);
    gpu_free(c->partial);
    if (c->hst) (void)GPU_HOSTFREE(c->hst);
    if (c->hrec) (void)GPU_HOSTFREE(c->hrec);
    if (c->hplan) (void)GPU_HOSTFREE(c->hplan);
    if (c->stage) (void)GPU_HOSTFREE(c->stage);
    free(c);
}

void gpu_cg_free(ata_context *ctx, backend_cg *cg)
{
    if (!cg || !cg->dev) return;
    gpu_ctx *g = GC(ctx);
    (void)GPU(SetDevice)(g->device);
    (void)GPU(StreamSynchronize)(g->stream);
    cg_dev_free(cg->dev);
    cg->dev = NULL;
}

static ata_status cg_dev_make(gpu_ctx *g, int n, cg_dev **out)
{
    cg_dev *c = calloc(1, sizeof *c);
    if (!c) return ata_fail(ATA_ERR_NOMEM, "device pcg: out of memory");
    ata_status st = ATA_OK;
    if ((st = gpu_malloc((void **)&c->st, sizeof *c->st, "device pcg state")) ||
        (st = gpu_malloc((void **)&c->rec, CG_MAX_BATCH * sizeof *c->rec, "device pcg records")) ||
        (st = gpu_malloc((void **)&c->partial, (size_t)(g->dot_grid > gpu_resident_blocks(g, 3) ? g->dot_grid
                         : gpu_resident_blocks(g, 3)) * sizeof *c->partial, "device pcg partial sums")))
        goto fail;
    GCHECK_GO(GPU_HOSTALLOC(&c->hst, sizeof *c->hst));
    GCHECK_GO(GPU_HOSTALLOC(&c->hrec, CG_MAX_BATCH * sizeof *c->hrec));
    GCHECK_GO(GPU_HOSTALLOC(&c->hplan, 2 * sizeof *c->hplan));
    GCHECK_GO(GPU_HOSTALLOC(&c->stage, 2 * ((size_t)n + 1) * sizeof *c->stage));
    *out = c;
    return ATA_OK;
fail:
    cg_dev_free(c);
    return st;
}

static int vendor_plan(const ata_plan *p)
{
    return p && (!p->dev || ((const gpu_plan *)p->dev)->vendor);
}

/* z = M^{-1} r on the device: the plans' solves, or a copy. */
static ata_status cg_precond(gpu_ctx *g, backend_cg *cg, cg_dev *c)
{
    const int *stop = &c->st->stop;
    if (!cg->L) {
        KCHECK(ata_gpu_cg_copy(cg->n, cg->r, cg->z, gpu_resident_blocks(g, 3), c->st, SV(g)));
        return ATA_OK;
    }
    ATA_TRY(gpu_plan_enqueue(cg->L, cg->r, cg->U ? cg->tmp : cg->z, stop));
    if (cg->U) ATA_TRY(gpu_plan_enqueue(cg->U, cg->tmp, cg->z, stop));
    return ATA_OK;
}

/* One CG iteration (Saad Alg. 9.1, as solvers/cg.c), on the stream. */
static ata_status cg_iteration(gpu_ctx *g, backend_cg *cg, cg_dev *c)
{
    const gpu_spmv_h *A = cg->spmv_h;
    const long long n = cg->n;
    KCHECK(ata_gpu_cg_spmv_dot(A->n, A->ptr, A->idx, A->val, A->G, A->win, A->nwin, A->nhub, cg->p, cg->q, c->partial,
                               A->grid, c->st, c->rec, SV(g)));
    KCHECK(ata_gpu_cg_dot(n, ATA_GPU_CG_RR, cg->r, cg->r, cg->x, cg->p, cg->q, c->partial, g->dot_grid, c->st, c->rec,
                          0, 0, 0, SV(g)));
    ATA_TRY(cg_precond(g, cg, c));
    KCHECK(ata_gpu_cg_dot(n, ATA_GPU_CG_RZ, cg->r, cg->z, NULL, NULL, NULL, c->partial, g->dot_grid, c->st, c->rec,
                          0, 0, 0, SV(g)));
    KCHECK(ata_gpu_cg_p(n, cg->z, cg->p, 0, gpu_resident_blocks(g, 3), c->st, SV(g)));
    return ATA_OK;
}

ata_status gpu_cg_start(ata_context *ctx, backend_cg *cg, const double *b_host, const double *x0_host)
{
    gpu_ctx *g = GC(ctx);
    if (!g->pcg_device) return ata_fail(ATA_ERR_UNSUPPORTED, "device pcg: ATA_GPU_PCG=host");
    if (vendor_plan(cg->L) || vendor_plan(cg->U))
        return ata_fail(ATA_ERR_UNSUPPORTED, "device pcg: the vendor library's solves run apart");
    GCHECK(GPU(SetDevice)(g->device));
    if (!cg->dev) ATA_TRY(cg_dev_make(g, cg->n, (cg_dev **)&cg->dev));
    cg_dev *c = cg->dev;
    const size_t n = (size_t)cg->n;
    /* b and x0 through pinned memory: a copy from the caller's pageable
     * memory would synchronise with the host */
    memcpy(c->stage, b_host, n * sizeof *c->stage);
    GCHECK(GPU(MemcpyAsync)(cg->b, c->stage, n * sizeof *c->stage, GPU(MemcpyHostToDevice), g->stream));
    if (x0_host) {
        memcpy(c->stage + n, x0_host, n * sizeof *c->stage);
        GCHECK(GPU(MemcpyAsync)(cg->x, c->stage + n, n * sizeof *c->stage, GPU(MemcpyHostToDevice), g->stream));
    } else {
        KCHECK(ata_gpu_fill((long long)n, 0.0, cg->x, SV(g)));
    }
    GCHECK(GPU(MemsetAsync)(c->st, 0, sizeof *c->st, g->stream));
    for (int k = 0; k < 2; k++) {
        ata_plan *p = k ? cg->U : cg->L;
        if (!p) continue;
        ATA_TRY(gpu_plan_state_clear(p));
        ATA_TRY(gpu_plan_epochs(p, 1));
    }
    const gpu_spmv_h *A = cg->spmv_h;
    const double *nul = NULL;
    KCHECK(ata_gpu_cg_dot((long long)n, ATA_GPU_CG_BB, cg->b, cg->b, NULL, nul, nul, c->partial, g->dot_grid, c->st,
                          c->rec, 0, 0, 0, SV(g)));
    /* r = b - A x0, as the host loop: r = A x, then r = 1 b + (-1) r */
    KCHECK(ata_gpu_spmv(A->n, A->ptr, A->idx, A->val, A->G, A->win, A->nwin, A->nhub, cg->x, cg->r, A->grid, SV(g)));
    KCHECK(ata_gpu_axpby((long long)n, 1.0, cg->b, -1.0, cg->r, gpu_resident_blocks(g, 3), SV(g)));
    KCHECK(ata_gpu_cg_dot((long long)n, ATA_GPU_CG_RR0, cg->r, cg->r, NULL, nul, nul, c->partial, g->dot_grid, c->st,
                          c->rec, cg->rtol, cg->atol, cg->dtol, SV(g)));
    ATA_TRY(cg_precond(g, cg, c));
    KCHECK(ata_gpu_cg_p((long long)n, cg->z, cg->p, 1, gpu_resident_blocks(g, 3), c->st, SV(g)));
    KCHECK(ata_gpu_cg_dot((long long)n, ATA_GPU_CG_RZ0, cg->r, cg->z, NULL, nul, nul, c->partial, g->dot_grid, c->st,
                          c->rec, 0, 0, 0, SV(g)));
    return ATA_OK;
}

/* The iteration as a graph, captured on the plans' present layouts; NULL
 * (launch directly) when graphs are off or capture fails. */
static GPU(GraphExec_t) cg_graph(gpu_ctx *g, backend_cg *cg, cg_dev *c)
{
    const unsigned gen[2] = { cg->L && cg->L->dev ? ((gpu_plan *)cg->L->dev)->gen : 0,
                              cg->U && cg->U->dev ? ((gpu_plan *)cg->U->dev)->gen : 0 };
    if (c->exec && gen[0] == c->gen[0] && gen[1] == c->gen[1]) return c->exec;
    if (c->exec) (void)GPU(GraphExecDestroy)(c->exec);
    c->exec = NULL;
    if (!g->use_graph || c->graph_broken) return NULL;
    GPU(Graph_t) graph = NULL;
    GPU(GraphExec_t) exec = NULL;
    if (GPU(StreamBeginCapture)(g->stream, GPU(StreamCaptureModeThreadLocal)) != GPU_OK) goto broken;
    ata_status st = cg_iteration(g, cg, c);
    gpu_err e = GPU(StreamEndCapture)(g->stream, &graph);
    if (st != ATA_OK || e != GPU_OK || !graph) goto broken;
    if (GPU_GRAPH_INSTANTIATE(&exec, graph) != GPU_OK) goto broken;
    (void)GPU(GraphDestroy)(graph);
    c->exec = exec;
    c->gen[0] = gen[0];
    c->gen[1] = gen[1];
    return exec;
broken:
    if (graph) (void)GPU(GraphDestroy)(graph);
    (void)GPU(GetLastError)();
    ata_clear_error();
    c->graph_broken = 1;
    return NULL;
}

ata_status gpu_cg_steps(ata_context *ctx, backend_cg *cg, int k, backend_cg_batch *out, backend_cg_rec *rec)
{
    gpu_ctx *g = GC(ctx);
    cg_dev *c = cg->dev;
    if (!c) return ata_fail(ATA_ERR_INTERNAL, "device pcg: steps before start");
    GCHECK(GPU(SetDevice)(g->device));
    if (k < 0) k = 0;
    if (k > CG_MAX_BATCH) k = CG_MAX_BATCH;
    GCHECK(GPU(MemsetAsync)(&c->st->m, 0, sizeof c->st->m, g->stream));
    if (k > 0) {
        if (cg->L) ATA_TRY(gpu_plan_epochs(cg->L, (unsigned)k));
        if (cg->U) ATA_TRY(gpu_plan_epochs(cg->U, (unsigned)k));
        GPU(GraphExec_t) exec = cg_graph(g, cg, c);
        for (int it = 0; it < k; it++) {
            if (exec) GCHECK(GPU(GraphLaunch)(exec, g->stream));
            else ATA_TRY(cg_iteration(g, cg, c));
        }
    }
    /* the one read of the batch: the scalars, the records, the plans' words */
    GCHECK(GPU(MemcpyAsync)(c->hst, c->st, sizeof *c->hst, GPU(MemcpyDeviceToHost), g->stream));
    if (k > 0) GCHECK(GPU(MemcpyAsync)(c->hrec, c->rec, (size_t)k * sizeof *c->hrec, GPU(MemcpyDeviceToHost), g->stream));
    if (cg->L) ATA_TRY(gpu_plan_state_read(cg->L, &c->hplan[0]));
    if (cg->U) ATA_TRY(gpu_plan_state_read(cg->U, &c->hplan[1]));
    gpu_err e = GPU(StreamSynchronize)(g->stream);
    if (e != GPU_OK) return ata_fail(ATA_ERR_BACKEND, GPU_NAME " device pcg: %s", GPU(GetErrorString)(e));
    if (cg->L) ATA_TRY(gpu_plan_state_check(cg->L, &c->hplan[0], "pcg (L solve)"));
    if (cg->U) ATA_TRY(gpu_plan_state_check(cg->U, &c->hplan[1], "pcg (U solve)"));
    const ata_gpu_cg_state *hs = c->hst;
    out->bb = hs->bb;
    out->rr0 = hs->rr0;
    out->rz0 = hs->rz0;
    out->stopped = hs->stop != ATA_GPU_CG_RUN;
    out->ran = hs->m + (hs->stop == ATA_GPU_CG_STOP_ITER);
    if (out->ran > k) return ata_fail(ATA_ERR_INTERNAL, "device pcg: %d records from a batch of %d", out->ran, k);
    for (int m = 0; m < out->ran; m++) {
        rec[m].pq = c->hrec[m].pq;
        rec[m].rr = c->hrec[m].rr;
        rec[m].rz = c->hrec[m].rz;
    }
    return ATA_OK;
}

ata_status gpu_cg_finish(ata_context *ctx, backend_cg *cg, double *x_host, double *rr)
{
    gpu_ctx *g = GC(ctx);
    cg_dev *c = cg->dev;
    if (!c) return ata_fail(ATA_ERR_INTERNAL, "device pcg: finish before start");
    const gpu_spmv_h *A = cg->spmv_h;
    const size_t n = (size_t)cg->n;
    GCHECK(GPU(SetDevice)(g->device));
    /* the true residual, as the host loop computes it */
    KCHECK(ata_gpu_spmv(A->n, A->ptr, A->idx, A->val, A->G, A->win, A->nwin, A->nhub, cg->x, cg->r, A->grid, SV(g)));
    KCHECK(ata_gpu_axpby((long long)n, 1.0, cg->b, -1.0, cg->r, gpu_resident_blocks(g, 3), SV(g)));
    KCHECK(ata_gpu_dot((long long)n, cg->r, cg->r, g->dot_partial, g->dot_grid, g->dot_out, SV(g)));
    GCHECK(GPU(MemcpyAsync)(g->host_scalar, g->dot_out, sizeof(double), GPU(MemcpyDeviceToHost), g->stream));
    GCHECK(GPU(MemcpyAsync)(c->stage, cg->x, n * sizeof *c->stage, GPU(MemcpyDeviceToHost), g->stream));
    gpu_err e = GPU(StreamSynchronize)(g->stream);
    if (e != GPU_OK) return ata_fail(ATA_ERR_BACKEND, GPU_NAME " device pcg: %s", GPU(GetErrorString)(e));
    memcpy(x_host, c->stage, n * sizeof *x_host);
    *rr = *g->host_scalar;
    return ATA_OK;
}
