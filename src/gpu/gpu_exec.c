/* gpu_exec.c - our kernels' host side: a plan's device copy (matrix, SET
 * order, flags or counters, claim cursors, state word), adaptive tasks as
 * launches in stream order, solves (captured as graphs on CUDA), ILU0, the
 * T_u probe, solves on the caller's stream, new values. See
 * gpu_internal.h for the layout and the one synchronisation per solve. */
#include "gpu_internal.h"

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

void gpu_plan_release(ata_plan *p)
{
    gpu_plan *d = p->dev;
    if (!d) return;
    gpu_ctx *g = GC(p->ctx);
    (void)GPU(SetDevice)(g->device);
    (void)GPU(StreamSynchronize)(g->stream);
    graphs_clear(d);
    gpu_vendor_release(d);
    gpu_free(d->ptr); gpu_free(d->idx); gpu_free(d->val); gpu_free(d->diag); gpu_free(d->order);
    gpu_free(d->indeg); gpu_free(d->pending); gpu_free(d->done); gpu_free(d->counters); gpu_free(d->state);
    gpu_free(d->win); gpu_free(d->posof); gpu_free(d->umap_row); gpu_free(d->umap);
    free(d->launches);
    free(d);
    p->dev = NULL;
}

static int plan_mode(const ata_plan *p)
{
    if (p->kind == PLAN_ILU0) return ATA_GPU_ILU0;
    return p->opt.traversal == ATA_PUSH ? ATA_GPU_PUSH : ATA_GPU_PULL;
}

/* ILU0's position map (gpu_kernels.h): for each row i and each predecessor
 * k of it, where each entry of row k right of its diagonal lands in row i
 * (-1: not in its pattern), found once here with a dense marker of row i's
 * columns instead of a binary search per pair on the device. A row whose
 * map would be more than 16 times its own length (+64), or past a total of
 * 4 nnz + n entries, keeps the searches (umap_row -1): a dense early row
 * used by many rows would make the map quadratic. */
static ata_status ilu0_map(gpu_ctx *g, const ata_plan *p, gpu_plan *d)
{
    const ata_csr *T = p->T;
    const int n = T->nrows, *ptr = T->rowptr, *col = T->col, *dg = p->diag;
    const long long budget = 4LL * T->nnz + n;
    ata_status st = ATA_OK;
    int *row = malloc(((size_t)n + 1) * sizeof *row), *mark = malloc(((size_t)n + 1) * sizeof *mark);
    int *map = NULL;
    if (!row || !mark) { st = ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory"); goto out; }
    long long total = 0;
    for (int i = 0; i < n; i++) {
        long long m = 0;
        for (int q = ptr[i]; q < dg[i]; q++) m += ptr[col[q] + 1] - dg[col[q]] - 1;
        const int fits = m <= 16LL * (ptr[i + 1] - ptr[i]) + 64 && total + m <= budget;
        row[i] = fits ? (int)total : -1;
        if (fits) total += m;
    }
    map = malloc(((size_t)total + 1) * sizeof *map);
    if (!map) { st = ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory"); goto out; }
    for (int c = 0; c < n; c++) mark[c] = -1;
    for (int i = 0; i < n; i++) {
        if (row[i] < 0) continue;
        for (int q = ptr[i]; q < ptr[i + 1]; q++) mark[col[q]] = q;
        long long m = row[i];
        for (int q = ptr[i]; q < dg[i]; q++) {
            const int k = col[q];
            for (int u = dg[k] + 1; u < ptr[k + 1]; u++) map[m++] = mark[col[u]] > q ? mark[col[u]] : -1;
        }
        for (int q = ptr[i]; q < ptr[i + 1]; q++) mark[col[q]] = -1;
    }
    if ((st = gpu_malloc((void **)&d->umap_row, (size_t)n * sizeof *row, "ILU0 position map")) ||
        (st = gpu_malloc((void **)&d->umap, ((size_t)total + 1) * sizeof *map, "ILU0 position map")) ||
        (st = gpu_upload(g, d->umap_row, row, (size_t)n * sizeof *row)) ||
        (st = gpu_upload(g, d->umap, map, (size_t)total * sizeof *map)))
        goto out;
out:
    free(row);
    free(mark);
    free(map);
    return st;
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
    if ((st = gpu_malloc((void **)&d->ptr, (n + 1) * sizeof(int), "row pointers")) ||
        (st = gpu_malloc((void **)&d->idx, nnz * sizeof(int), "column indices")) ||
        (st = gpu_malloc((void **)&d->val, nnz * sizeof(double), "values")) ||
        (st = gpu_malloc((void **)&d->order, n * sizeof(int), "SET order")) ||
        (st = gpu_malloc((void **)&d->state, sizeof(ata_gpu_state), "state")))
        goto fail;
    if (d->mode == ATA_GPU_PUSH) {
        if ((st = gpu_malloc((void **)&d->indeg, n * sizeof(int), "in-degrees")) ||
            (st = gpu_malloc((void **)&d->pending, n * sizeof(int), "pending counters")))
            goto fail;
    } else if ((d->mode == ATA_GPU_ILU0 || g->wait == ATA_GPU_WAIT_FLAG) &&
               (st = gpu_malloc((void **)&d->done, n * sizeof(uint32_t), "done flags"))) {
        goto fail;      /* a pull solve that waits on x needs no flags */
    }
    if (p->kind == PLAN_ILU0 && (st = gpu_malloc((void **)&d->diag, n * sizeof(int), "diagonal positions")))
        goto fail;
    if ((st = gpu_upload(g, d->ptr, T->rowptr, (n + 1) * sizeof(int))) ||
        (st = gpu_upload(g, d->idx, T->col, nnz * sizeof(int))) ||
        (st = gpu_upload(g, d->val, T->val, nnz * sizeof(double))))
        goto fail;
    if (d->diag && (st = gpu_upload(g, d->diag, p->diag, n * sizeof(int)))) goto fail;
    if (d->diag && (st = ilu0_map(g, p, d))) goto fail;
    iota = malloc((n + 1) * sizeof *iota);
    if (!iota) { st = ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory"); goto fail; }
    for (size_t i = 0; i < n; i++) iota[i] = (int)i;
    if ((st = gpu_upload(g, d->order, iota, n * sizeof(int)))) goto fail;
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
    a.posof = d->posof;
    a.umap_row = d->umap_row;
    a.umap = d->umap;
    a.win = d->win;
    a.done = d->done;
    a.pending = d->pending;
    a.indeg = d->indeg;
    a.counters = d->counters;
    a.ncounters = d->counters ? d->ncounters : 0;
    a.state = d->state;
    a.wait = g->wait;
    a.spin_rounds = g->spin_rounds;
    a.pause_ns = g->pause_ns;
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
    const int cap = gpu_resident_blocks(g, mode);
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

/* ------------------------------------------------------- the elastic map */
/* Class of row i (gpu_kernels.h): log2 of its lanes, CLASS_SPLIT or
 * CLASS_BLOCK. A pull row gets a lane per ROW_K entries (a thread up to
 * ROW_K), up to the warp; longer than ATA_GPU_HUB it is split between the
 * whole warp, longer than ATA_GPU_BLOCK_HUB (ATA_GPU_MAP=elastic) between
 * a whole block. An ILU0 row gets a lane per predecessor (the wait in one
 * round) and per 8 entries (its updates), up to the warp. ATA_GPU_GROUP
 * forces one width. */
#define CLASS_BLOCK 14
#define CLASS_SPLIT 15
#define CLASS_HUB(c) ((c) >= CLASS_BLOCK)     /* a window of its own */
static int row_class(const gpu_ctx *g, const ata_plan *p, int mode, int diag_in_row, int i)
{
    const int *ptr = p->T->rowptr;
    const int e = ptr[i + 1] - ptr[i] - diag_in_row;
    long long need;
    if (g->group_override > 0) {
        need = g->group_override;
    } else if (mode == ATA_GPU_ILU0) {
        const int deps = p->diag[i] - ptr[i];
        need = deps > (e + 7) / 8 ? deps : (e + 7) / 8;
    } else {
        if (e > ATA_GPU_BLOCK_HUB && g->hub_block) return CLASS_BLOCK;
        if (e > ATA_GPU_HUB(g->warp)) return CLASS_SPLIT;
        need = (e + ATA_GPU_ROW_K - 1) / ATA_GPU_ROW_K;
    }
    int lg = 0;
    while ((1LL << lg) < need && (1 << lg) < g->warp) lg++;
    return lg;
}

/* Grid and claim chunk (in windows) of an elastic launch; a launch of
 * block claims takes the warps' chunks of a block at once. */
static void size_launch_elastic(const gpu_ctx *g, int mode, ata_gpu_launch *l)
{
    const long long nwin = l->win_hi - l->win_lo, need = (nwin + g->wpb - 1) / g->wpb;
    const int cap = gpu_resident_blocks(g, mode);
    l->grid = (int)(need < 1 ? 1 : need > cap ? cap : need);
    long long k = nwin / (4LL * l->grid * g->wpb);
    l->chunk = (int)(k < 1 ? 1 : k > 8 ? 8 : k) * (l->block ? g->wpb : 1);
}

/* A launch with block hubs: each hub first and alone in its chunk of C
 * windows (the kernel runs such a chunk by the whole block), so empty
 * windows pad before it to the chunk's start and after it to its end.
 * win[lo, *nw) become the padded windows; tmp holds as many. */
static void pad_block_hubs(ata_gpu_window *win, int lo, int *nw, int C, ata_gpu_window *tmp)
{
    const ata_gpu_window empty = { 0, 0 };
    int m = 0;
    for (int k = lo; k < *nw; k++) {
        const int hub = (win[k].meta & ATA_GPU_WIN_BLOCK) != 0;
        while (hub && m % C) tmp[m++] = empty;
        tmp[m++] = win[k];
        while (hub && m % C) tmp[m++] = empty;
    }
    memcpy(win + lo, tmp, (size_t)m * sizeof *tmp);
    *nw = lo + m;
}

/* Each launch's SET range cut into windows: consecutive rows at the width
 * of the widest of them, W / G of them at most (a split row alone); WIN_FWD on a tracked
 * thread-per-row pull window whose rows depend on each other (then the
 * rows' SET positions go to the device too). */
static ata_status build_windows(ata_plan *p, gpu_plan *d)
{
    gpu_ctx *g = GC(p->ctx);
    const int n = p->n, *order = p->sched.order, *ptr = p->T->rowptr, *idx = p->T->col;
    const int diag_in_row = p->kind != PLAN_ILU0 && p->opt.diag == ATA_NON_UNIT;
    ata_status st = ATA_OK;
    unsigned char *cls = malloc((size_t)n + 1);
    int *posof = malloc(((size_t)n + 1) * sizeof *posof);
    ata_gpu_window *win = NULL, *tmp = NULL;
    size_t nhub = 0;
    if (!cls || !posof) { st = ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory"); goto out; }
    for (int k = 0; k < n; k++) {
        posof[order[k]] = k;
        cls[k] = (unsigned char)row_class(g, p, d->mode, diag_in_row, order[k]);
        nhub += cls[k] == CLASS_BLOCK;
    }
    /* room for the padding of block hubs: 2 (C - 1) windows each, C <= 8 wpb */
    const size_t cap = (size_t)n + 1 + nhub * 16 * (size_t)g->wpb;
    win = malloc(cap * sizeof *win);
    tmp = nhub ? malloc(cap * sizeof *tmp) : NULL;
    if (!win || (nhub && !tmp)) { st = ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory"); goto out; }
    int nw = 0, any_fwd = 0;
    for (int L = 0; L < d->nlaunch; L++) {
        ata_gpu_launch *l = &d->launches[L];
        l->win_lo = nw;
        for (int k = l->pos_lo; k < l->pos_hi;) {
            /* Rows join while the widest class among them still fits: a
             * short row may get more lanes than it needs, but windows of
             * varied rows (circuits) are not cut at every class change. */
            int c = cls[k], cnt = 1;
            while (!CLASS_HUB(c) && k + cnt < l->pos_hi && !CLASS_HUB(cls[k + cnt])) {
                const int c2 = cls[k + cnt] > c ? cls[k + cnt] : c;
                if (cnt + 1 > g->warp >> c2) break;
                c = c2;
                cnt++;
            }
            int meta = cnt | (c == CLASS_BLOCK ? ATA_GPU_WIN_SPLIT | ATA_GPU_WIN_BLOCK
                              : c == CLASS_SPLIT ? ATA_GPU_WIN_SPLIT : c << 8);
            l->block |= c == CLASS_BLOCK;
            if (c == 0 && cnt > 1 && l->tracked && d->mode == ATA_GPU_PULL) {
                for (int r = k; r < k + cnt && !(meta & ATA_GPU_WIN_FWD); r++) {
                    const int i = order[r];
                    for (int q = ptr[i]; q < ptr[i + 1]; q++)
                        if (idx[q] != i && posof[idx[q]] >= k && posof[idx[q]] < k + cnt) {
                            meta |= ATA_GPU_WIN_FWD;
                            break;
                        }
                }
            }
            any_fwd |= (meta & ATA_GPU_WIN_FWD) != 0;
            win[nw].pos = k;
            win[nw].meta = meta;
            nw++;
            k += cnt;
        }
        l->win_hi = nw;
        size_launch_elastic(g, d->mode, l);
        if (l->block) {
            const int C = l->chunk;
            pad_block_hubs(win, l->win_lo, &nw, C, tmp);
            l->win_hi = nw;
            size_launch_elastic(g, d->mode, l);   /* the grid of the padded windows */
            l->chunk = C;                         /* the hubs are aligned to it */
        }
    }
    gpu_free(d->win);
    gpu_free(d->posof);
    d->win = NULL;
    d->posof = NULL;
    d->nwin = nw;
    if ((st = gpu_malloc((void **)&d->win, ((size_t)nw + 1) * sizeof *win, "elastic windows")) ||
        (st = gpu_upload(g, d->win, win, (size_t)nw * sizeof *win)))
        goto out;
    if (any_fwd && ((st = gpu_malloc((void **)&d->posof, (size_t)n * sizeof *posof, "SET positions")) ||
                    (st = gpu_upload(g, d->posof, posof, (size_t)n * sizeof *posof))))
        goto out;
out:
    free(cls);
    free(posof);
    free(win);
    free(tmp);
    return st;
}

/* Adaptive tasks -> launches (see the file comment). */
static ata_status build_launches(ata_plan *p, gpu_plan *d)
{
    const gpu_ctx *g = GC(p->ctx);
    const agg_result *s = &p->sched;
    const int *ptr = p->T->rowptr;
    const int diag_in_row = p->kind != PLAN_ILU0 && p->opt.diag == ATA_NON_UNIT;
    const int elastic = g->elastic && d->mode != ATA_GPU_PUSH;   /* push keeps one width per launch */
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
        const int G = gpu_pick_group(g, (double)ent / (hi - lo));
        const int tracked = (s->flags[a] & ATASK_TRACKED) != 0;
        ata_gpu_launch *prev = nl ? &d->launches[nl - 1] : NULL;
        if (prev && !(s->flags[a] & ATASK_BARRIER) && prev->tracked == tracked && (elastic || prev->group == G) &&
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
    d->gen++;
    if (elastic) ATA_TRY(build_windows(p, d));
    d->ncounters = 0;
    gpu_free(d->counters);
    d->counters = NULL;
    ata_status st = gpu_malloc((void **)&d->counters, ((size_t)ncounter + 1) * sizeof(unsigned), "claim cursors");
    if (st != ATA_OK) return st;
    GCHECK(GPU(MemsetAsync)(d->counters, 0, ((size_t)ncounter + 1) * sizeof(unsigned), g->stream));
    d->ncounters = ncounter;
    return ATA_OK;
}

/* Tests of the epoch wrap (ATA_GPU_EPOCH0=E at context creation): the plan
 * starts at epoch E with every done flag at 1, as if written 2^32 solves
 * ago; unless the wrap clears them, the solve after epoch 2^32-1 would take
 * every row for done. */
static ata_status plan_epoch_start(ata_plan *p, gpu_plan *d, uint32_t e)
{
    gpu_ctx *g = GC(p->ctx);
    uint32_t *ones = malloc((size_t)p->n * sizeof *ones);
    if (!ones) return ata_fail(ATA_ERR_NOMEM, "gpu plan: out of memory");
    for (int i = 0; i < p->n; i++) ones[i] = 1;
    ata_status st = gpu_upload(g, d->done, ones, (size_t)p->n * sizeof *ones);
    free(ones);
    ATA_TRY(st);
    ATA_TRY(gpu_upload(g, &d->state->epoch, &e, sizeof e));
    d->epoch = e;
    return ATA_OK;
}

/* After analysis (idempotent: a second call re-sends the host schedule). */
ata_status gpu_plan_upload(ata_plan *p)
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
    ATA_TRY(gpu_upload(g, d->val, p->T->val, (size_t)p->T->nnz * sizeof(double)));
    if (n && p->sched.order) ATA_TRY(gpu_upload(g, d->order, p->sched.order, n * sizeof(int)));
    if (d->indeg && p->indeg) ATA_TRY(gpu_upload(g, d->indeg, p->indeg, n * sizeof(int)));
    if (d->done) GCHECK(GPU(MemsetAsync)(d->done, 0, n * sizeof(uint32_t), g->stream));
    GCHECK(GPU(MemsetAsync)(d->state, 0, sizeof(ata_gpu_state), g->stream));
    d->epoch = 0;
    if (g->epoch0 && d->done) ATA_TRY(plan_epoch_start(p, d, g->epoch0));
    ATA_TRY(build_launches(p, d));
    if (p->opt.policy == ATA_POLICY_VENDOR && !d->vendor) {
        if ((st = gpu_vendor_setup(p, d)) != ATA_OK) return st;
        d->vendor = 1;
    }
    GCHECK(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
}

/* ------------------------------------------------------------------ solve */
static ata_status enqueue_all(ata_plan *p, const ata_gpu_args *a);

/* PCG on the device (gpu_cg.c): the solve's kernels on the context's
 * stream (or into the graph it captures), each returning at once while
 * *stop; no host synchronisation, no error read back (a timeout leaves
 * the state word set: gpu_plan_check reads it). */
ata_status gpu_plan_enqueue(ata_plan *p, const double *b, double *x, const int *stop)
{
    gpu_plan *d = p->dev;
    if (!d || d->vendor) return ata_fail(ATA_ERR_UNSUPPORTED, "device pcg: the vendor library's solves run apart");
    ata_gpu_args a = base_args(p);
    a.b = b;
    a.x = x;
    a.stop = stop;
    return enqueue_all(p, &a);
}

/* Before `solves` more begin kernels run without the host counting them
 * one by one (graph replays): the epoch wraps early rather than late. */
ata_status gpu_plan_epochs(ata_plan *p, unsigned solves)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    if (!d || !d->done) return ATA_OK;
    if (d->epoch > UINT32_MAX - solves - 1) {
        GCHECK(GPU(MemsetAsync)(d->done, 0, (size_t)d->n * sizeof(uint32_t), g->stream));
        GCHECK(GPU(MemsetAsync)(&d->state->epoch, 0, sizeof d->state->epoch, g->stream));
        d->epoch = 0;
    }
    d->epoch += solves;
    return ATA_OK;
}

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
static ata_status state_eval(ata_plan *p, const ata_gpu_state *hs, const char *what);

/* Device PCG: the plan's state word copied to `hs` (pinned) in stream
 * order, and read after the caller's one synchronisation. */
ata_status gpu_plan_state_read(ata_plan *p, ata_gpu_state *hs)
{
    gpu_plan *d = p->dev;
    GCHECK(GPU(MemcpyAsync)(hs, d->state, sizeof *hs, GPU(MemcpyDeviceToHost), GC(p->ctx)->stream));
    return ATA_OK;
}
ata_status gpu_plan_state_check(ata_plan *p, const ata_gpu_state *hs, const char *what)
{
    return state_eval(p, hs, what);
}
/* Device PCG's solves keep their error word from one solve to the next
 * (a failed solve makes the later ones stop at once): cleared here. */
ata_status gpu_plan_state_clear(ata_plan *p)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    GCHECK(GPU(MemsetAsync)(&d->state->err, 0, sizeof d->state->err, g->stream));
    return ATA_OK;
}

static ata_status finish(ata_plan *p, const char *what)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    ata_gpu_state *hs = g->host_state;
    GCHECK(GPU(MemcpyAsync)(hs, d->state, sizeof *hs, GPU(MemcpyDeviceToHost), g->stream));
    gpu_err e = GPU(StreamSynchronize)(g->stream);
    if (e != GPU_OK) return ata_fail(ATA_ERR_BACKEND, GPU_NAME " %s: %s", what, GPU(GetErrorString)(e));
    return state_eval(p, hs, what);
}

static ata_status state_eval(ata_plan *p, const ata_gpu_state *hs, const char *what)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    if (hs->err == ATA_GPU_ERR_TIMEOUT) {
        /* The kernels time out only when nothing finished anywhere on the
         * device for the whole wait: a dependency that never completes. */
        if (hs->stuck_dep >= 0)
            return ata_fail(ATA_ERR_TIMEOUT, "%s: row %d waited for row %d with no progress for %g s "
                            "(wait timeout)", what, hs->stuck_row, hs->stuck_dep, p->ctx->wait_timeout_s);
        return ata_fail(ATA_ERR_TIMEOUT, "%s: row %d waited for its pending predecessors with no progress "
                        "for %g s (wait timeout)", what, hs->stuck_row, p->ctx->wait_timeout_s);
    }
    if (hs->err) return ata_fail(ATA_ERR_INTERNAL, "%s: device error word %d", what, hs->err);
    if (p->kind == PLAN_ILU0 && hs->pivot_row >= 0 && hs->pivot_row < p->n) {
        const int r = hs->pivot_row;
        double u = NAN;
        ATA_TRY(gpu_download(g, &u, d->val + p->diag[r], sizeof u));
        return ilu0_pivot_fail(r, u);
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
    if (d->done) {
        /* The begin kernel is about to take epoch + 1: at the wrap, forget
         * every old epoch first (as the host's plan_next_epoch does). */
        if (d->epoch == UINT32_MAX) {
            GCHECK(GPU(MemsetAsync)(d->done, 0, (size_t)d->n * sizeof(uint32_t), g->stream));
            GCHECK(GPU(MemsetAsync)(&d->state->epoch, 0, sizeof d->state->epoch, g->stream));
            d->epoch = 0;
        }
        d->epoch++;
    }
    ata_gpu_args a = base_args(p);
    a.b = b;
    a.x = x;
    GPU(GraphExec_t) exec = graph_for(p, &a);
    if (exec) GCHECK(GPU(GraphLaunch)(exec, g->stream));
    else ATA_TRY(enqueue_all(p, &a));
    return finish(p, what);
}

ata_status gpu_sptrsv(ata_plan *p, const double *b, double *x)
{
    if (p->dev && ((gpu_plan *)p->dev)->vendor) return gpu_vendor_sptrsv(p, b, x);
    return run_plan(p, b, x, "sptrsv");
}

ata_status gpu_ilu0(ata_plan *p)
{
    if (p->kind != PLAN_ILU0) return ata_fail(ATA_ERR_ARG, "ilu0: plan was made for a triangular solve");
    if (p->dev && ((gpu_plan *)p->dev)->vendor) return gpu_vendor_ilu0(p);
    /* One factorisation per plan in practice: no graph for it. */
    gpu_ctx *g = GC(p->ctx);
    int keep = g->use_graph;
    g->use_graph = 0;
    ata_status st = run_plan(p, NULL, NULL, "ilu0");
    g->use_graph = keep;
    return st;
}

ata_status gpu_ilu0_values(ata_plan *p, double *val)
{
    gpu_plan *d = p->dev;
    if (!d) return ata_fail(ATA_ERR_INTERNAL, "ilu0: plan was not uploaded");
    gpu_ctx *g = GC(p->ctx);
    GCHECK(GPU(SetDevice)(g->device));
    return gpu_download(g, val, d->val, (size_t)d->nnz * sizeof(double));
}


/* T_u: every user task of this plan in one untracked launch (no waiting),
 * best of three. The launch runs `slots` tasks at a time (resident warps x
 * tasks per warp), so one task takes the kernel time over the number of
 * rounds: the mean time of a user task profiled in parallel (Eq. 5.2), not
 * the kernel's throughput per task. Runs before the schedule exists, on the
 * identity order; ILU0 runs on the device copy of the values, which
 * plan_upload sends again. */
ata_status gpu_probe_task_cost(ata_plan *p, double *T_u)
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
        if ((st = gpu_malloc((void **)&vb, (size_t)n * sizeof(double), "probe vector")) ||
            (st = gpu_malloc((void **)&vx, (size_t)n * sizeof(double), "probe vector")))
            goto fail;
        int e = ata_gpu_fill(n, 1.0, vb, SV(g));
        if (!e) e = ata_gpu_fill(n, 0.0, vx, SV(g));
        if (e) { st = gpu_fail((gpu_err)e, "probe vector fill"); goto fail; }
    }
    const int diag_in_row = p->kind != PLAN_ILU0 && p->opt.diag == ATA_NON_UNIT;
    ata_gpu_launch l;
    memset(&l, 0, sizeof l);
    l.pos_lo = 0;
    l.pos_hi = n;
    l.group = gpu_pick_group(g, (double)p->T->nnz / n - diag_in_row);
    l.tracked = 0;
    size_launch(g, d->mode, &l);
    ata_gpu_args a = base_args(p);
    a.b = vb;
    a.x = vx;
    GCHECK_GO(GPU(EventCreate)(&e0));
    GCHECK_GO(GPU(EventCreate)(&e1));
#if defined(ATA_EMU)
    emu_expect_races(1);    /* no waiting at all, by design: the values are discarded */
#endif
    double best = INFINITY;
    for (int r = 0; r < 4; r++) {
        int e;
        GCHECK_GO(GPU(EventRecord)(e0, g->stream));
        if ((e = ata_gpu_run(&a, &l, SV(g))) != 0) { st = gpu_fail((gpu_err)e, "probe kernel"); goto fail; }
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
#if defined(ATA_EMU)
    emu_expect_races(0);
#endif
    if (e0) (void)GPU(EventDestroy)(e0);
    if (e1) (void)GPU(EventDestroy)(e1);
    gpu_free(vb);
    gpu_free(vx);
    return st;
}

/* A solve on the caller's device pointers. The context's stream first waits
 * for the work queued on `stream` (an event: no host wait), then runs the
 * solve and a dot x'x, whose non-finite value flags overflow or NaN on the
 * device; the one host synchronisation reads the state word and that dot
 * (finish). Only when the dot is not finite is x copied down, to name the
 * first bad row in solve order (what the CPU would name). */
ata_status gpu_sptrsv_stream(ata_plan *p, const double *b, double *x, void *stream)
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
        if ((st = gpu_vendor_sptrsv(p, b, x)) != ATA_OK) goto fail;
    } else {
        ata_gpu_args a = base_args(p);
        a.b = b;
        a.x = x;
        GPU(GraphExec_t) exec = graph_for(p, &a);
        if (exec) GCHECK_GO(GPU(GraphLaunch)(exec, g->stream));
        else if ((st = enqueue_all(p, &a)) != ATA_OK) goto fail;
    }
    int e = ata_gpu_dot((long long)p->n, x, x, g->dot_partial, g->dot_grid, g->dot_out, SV(g));
    if (e) { st = gpu_fail((gpu_err)e, "non-finite check (dot)"); goto fail; }
    GCHECK_GO(GPU(MemcpyAsync)(g->host_scalar, g->dot_out, sizeof(double), GPU(MemcpyDeviceToHost), g->stream));
    if ((st = finish(p, "sptrsv")) != ATA_OK) goto fail;
    if (!isfinite(*g->host_scalar)) {
        if (!(hx = malloc((size_t)p->n * sizeof *hx))) { st = ata_fail(ATA_ERR_NOMEM, "sptrsv: out of memory"); goto fail; }
        if ((st = gpu_download(g, hx, x, (size_t)p->n * sizeof *hx)) != ATA_OK) goto fail;
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
ata_status gpu_plan_values(ata_plan *p, const double *val)
{
    gpu_plan *d = p->dev;
    if (!d) return ata_fail(ATA_ERR_INTERNAL, "plan values: plan was not uploaded");
    gpu_ctx *g = GC(p->ctx);
    if (val != p->T->val) memcpy(p->T->val, val, (size_t)p->T->nnz * sizeof *val);
    GCHECK(GPU(SetDevice)(g->device));
    ATA_TRY(gpu_upload(g, d->val, p->T->val, (size_t)d->nnz * sizeof(double)));
    if (d->vendor) {
        gpu_vendor_release(d);
        d->vendor = 0;
        ATA_TRY(gpu_vendor_setup(p, d));
        d->vendor = 1;
    }
    return ATA_OK;
}
