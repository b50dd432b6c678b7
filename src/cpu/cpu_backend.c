/* cpu_backend.c - the CPU backend: the thread pool runs the plan's schedule
 * (cpu_exec.c) and PCG's vector kernels. Vectors are host arrays. */
#include <stdlib.h>
#include <string.h>
#include "cpu_backend.h"
#include "cpu_exec.h"
#include "csr.h"
#include "error.h"
#include "mem.h"

static ata_status cpu_ctx_init(ata_context *ctx)
{
    /* Never more workers than the CPUs this process may use: a thread
     * beyond them only takes turns with the others, and with static shares
     * every barrier then waits for a context switch. threads_used in the
     * plan info reports what runs. */
    int cpus = cpu_pool_cpus_available();
    ATA_TRY(cpu_pool_create(ctx->threads < cpus ? ctx->threads : cpus, ctx->opt.wait_policy, &ctx->pool));
    ctx->S_min = ctx->threads;          /* Eq. 5.1: one task per worker at a time */
    ctx->capacity = 4096 * ctx->threads; /* greedy: a cache-sized slice per worker */
    return ATA_OK;
}

static void cpu_ctx_fini(ata_context *ctx)
{
    cpu_pool_destroy(ctx->pool);
    ctx->pool = NULL;
}

static ata_status cpu_ilu0_values(ata_plan *p, double *val)
{
    if (val != p->T->val) memcpy(val, p->T->val, (size_t)p->T->nnz * sizeof *val);
    return ATA_OK;
}

/* T_l: one barrier among all workers (the coarse synchronisation here). */
typedef struct { cpu_barrier bar; cpu_wait_ctl ctl; int rounds; } probe_job;
#define PROBE_BATCH 50     /* even: each job leaves the sense as it found it */

static void probe_worker(void *arg, int tid, int nt)
{
    probe_job *J = arg;
    int sense = 0;
    (void)tid; (void)nt;
    for (int r = 0; r < J->rounds; r++)
        if (cpu_barrier_wait(&J->bar, &sense, &J->ctl)) return;
}

static ata_status cpu_probe_sync_cost(ata_context *ctx, double *T_l)
{
    probe_job J;
    J.rounds = PROBE_BATCH;
    cpu_barrier_init(&J.bar, cpu_pool_size(ctx->pool));
    cpu_wait_ctl_init(&J.ctl, ctx->pool, ctx->wait_timeout_s);
    cpu_pool_run(ctx->pool, probe_worker, &J);    /* warm-up */
    /* 2000 barriers, or what fits in ~5 ms: on a loaded machine a barrier
     * may cost a scheduler time slice, and the probe must stay short. The
     * median batch: one descheduled worker must not set S for good. */
    double bt[2000 / PROBE_BATCH], t0 = clock_now(), t;
    int nb = 0;
    do {
        double t1 = clock_now();
        cpu_pool_run(ctx->pool, probe_worker, &J);
        bt[nb++] = (clock_now() - t1) / PROBE_BATCH;
    } while (nb < (int)(sizeof bt / sizeof *bt) && clock_now() - t0 < 5e-3);
    for (int i = 1; i < nb; i++)        /* insertion sort: at most 40 */
        for (int k = i; k > 0 && bt[k] < bt[k - 1]; k--) { double tmp = bt[k]; bt[k] = bt[k - 1]; bt[k - 1] = tmp; }
    t = bt[nb / 2];
    *T_l = t > 1e-8 ? t : 1e-8;
    return ATA_OK;
}

/* T_u: the plan's user tasks run once, serially, with no dependencies
 * (a split ILU0 plan's rows are their L and U parts together, as A's). */
static ata_status cpu_probe_task_cost(ata_plan *p, double *T_u)
{
    const ata_csr *T = p->T, *U = p->Tu;
    double *x = mem_calloc((size_t)p->n + 1, sizeof *x);
    if (!x) return ata_fail(ATA_ERR_NOMEM, "probe: out of memory");
    double t0 = clock_now();
    for (int i = 0; i < p->n; i++) {
        double s = 1;
        for (int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) s -= T->val[q] * x[T->col[q]];
        if (U)
            for (int q = U->rowptr[i]; q < U->rowptr[i + 1]; q++) s -= U->val[q] * x[U->col[q]];
        x[i] = s;
    }
    double t = (clock_now() - t0) / (p->n ? p->n : 1);
    free(x);
    *T_u = t > 1e-10 ? t : 1e-10;
    return ATA_OK;
}

static ata_status cpu_vec_alloc(ata_context *ctx, size_t n, double **v)
{
    (void)ctx;
    *v = mem_alloc((n ? n : 1) * sizeof **v);
    return *v ? ATA_OK : ata_fail(ATA_ERR_NOMEM, "vector of %zu doubles: out of memory", n);
}
static void cpu_vec_free(ata_context *ctx, double *v) { (void)ctx; free(v); }
static ata_status cpu_vec_copy(ata_context *ctx, double *dst, const double *src, size_t n)
{
    (void)ctx;
    if (dst != src) memcpy(dst, src, n * sizeof *dst);     /* PCG's relabelled b and x are in place */
    return ATA_OK;
}

/* Vector kernels and the SpMV run as chunked pool jobs (cpu_pool_run_chunks:
 * a worker that lost its core holds up at most one chunk); a reduction sums
 * per-chunk partials in chunk order, and the chunks depend on the size
 * only, so every thread count above one gives the same bits, and one thread
 * (one chunk) the plain serial sum. */
typedef struct {
    const ata_csr *A;
    int prefetch;           /* SpMV: x prefetched ahead (cpu_spmv) */
    size_t n;
    double a, b;
    const double *x, *y;
    double *out, *out2;
    double partial[CPU_POOL_MAX_CHUNKS];
} vec_job;

/* Per-chunk partials summed in chunk order. */
static double sum_partials(const vec_job *J, int nc)
{
    double s = 0;
    for (int c = 0; c < nc; c++) s += J->partial[c];
    return s;
}

#define SPLIT(n, tid, nt, lo, hi) \
    size_t lo = (size_t)((n) * (unsigned long long)(tid) / (nt)), \
           hi = (size_t)((n) * (unsigned long long)((tid) + 1) / (nt))

static inline __attribute__((always_inline)) double spmv_rows(const ata_csr *A, const double *restrict x,
                                                              double *restrict y, int lo, int hi, const int pf)
{
    const int *restrict Ap = A->rowptr, *restrict Aj = A->col;
    const double *restrict Ax = A->val;
    const int last = Ap[A->nrows] - 1;
    double dot = 0;
    for (int i = lo; i < hi; i++) {
        double s = 0;
        for (int q = Ap[i]; q < Ap[i + 1]; q++) {
            if (pf) __builtin_prefetch(&x[Aj[q < last - CPU_PREFETCH_AHEAD ? q + CPU_PREFETCH_AHEAD : last]], 0, CPU_PREFETCH_LOCALITY);
            s += Ax[q] * x[Aj[q]];
        }
        y[i] = s;
        dot += x[i] * s;
    }
    return dot;
}

static void spmv_chunk(void *arg, int c, int nc)
{
    vec_job *J = arg;
    /* rows shared by entries, not by count: a circuit's hubs and a
     * level-ordered matrix's long rows sit together at one end */
    int lo, hi;
    csr_share_rows(J->A->rowptr, J->A->nrows, c, nc, &lo, &hi);
    J->partial[c] = J->prefetch ? spmv_rows(J->A, J->x, J->out, lo, hi, 1) : spmv_rows(J->A, J->x, J->out, lo, hi, 0);
}

static void cg_update_chunk(void *arg, int c, int nc)
{
    vec_job *J = arg;
    const double *restrict p = J->x, *restrict q = J->y;
    double *restrict x = J->out, *restrict r = J->out2, a = J->a, rr = 0;
    SPLIT(J->n, c, nc, lo, hi);
    for (size_t i = lo; i < hi; i++) {
        x[i] += a * p[i];
        r[i] -= a * q[i];
        rr += r[i] * r[i];
    }
    J->partial[c] = rr;
}

static void dot_chunk(void *arg, int c, int nc)
{
    vec_job *J = arg;
    SPLIT(J->n, c, nc, lo, hi);
    double s = 0;
    for (size_t i = lo; i < hi; i++) s += J->x[i] * J->y[i];
    J->partial[c] = s;
}

static void axpby_chunk(void *arg, int c, int nc)
{
    vec_job *J = arg;
    SPLIT(J->n, c, nc, lo, hi);
    /* BLAS semantics: with b == 0, y is written, never read (it may hold NaN). */
    if (J->b == 0) for (size_t i = lo; i < hi; i++) J->out[i] = J->a * J->x[i];
    else for (size_t i = lo; i < hi; i++) J->out[i] = J->a * J->x[i] + J->b * J->out[i];
}

/* The SpMV handle: A, and whether its x is gathered at random. The gathers
 * of a matrix whose rows reach places their neighbour rows do not (a
 * circuit, any matrix in a random order) wait on memory one at a time; the
 * next rows' x fetched CPU_PREFETCH_AHEAD entries ahead overlap them.
 * Measured (2 threads, one run, medians of 15): circuit:1000000 in level
 * order 6.1 -> 4.0 ms, circuit:2000000 21.8 -> 8.9, lap3d:100 randomly
 * permuted 9.1 -> 6.9; but a stencil (its x streams, which the hardware
 * prefetches already) 2.6 -> 3.9 (lap3d27:60), and an x of 2.4 MB or less
 * gains nothing. So: where at least a quarter of the entries (sampled, one
 * row pair in 16) have no entry of the row before within 8 columns, and x
 * is 4 MiB or more. Same sums in the same order: the same bits. */
#define GATHER_PREFETCH_MIN_X (4u << 20)
#define GATHER_NEAR_COLS 8
typedef struct { const ata_csr *A; int prefetch; } cpu_spmv_h;

int cpu_gathers_at_random(const ata_csr *A)
{
    if ((size_t)A->ncols * sizeof(double) < GATHER_PREFETCH_MIN_X) return 0;
    const int *Ap = A->rowptr, *Aj = A->col;
    long long seen = 0, far = 0;
    for (int i = 1; i < A->nrows; i += 16) {
        int p = Ap[i - 1];
        const int pe = Ap[i];
        for (int q = Ap[i]; q < Ap[i + 1]; q++) {
            const int j = Aj[q];
            while (p < pe && Aj[p] < j - GATHER_NEAR_COLS) p++;
            seen++;
            far += !(p < pe && Aj[p] <= j + GATHER_NEAR_COLS);
        }
    }
    return far * 4 >= seen && seen > 0;
}

int cpu_lines_rows_short(const ata_csr *T, int stored_diag)
{
    const long long off = T->nnz - (stored_diag ? (long long)T->nrows : 0);
    return T->nrows > 0 && off <= (long long)CPU_LINES_MAX_ENTRIES * T->nrows;
}

static ata_status cpu_spmv_create(ata_context *ctx, const ata_csr *A, void **h)
{
    (void)ctx;
    cpu_spmv_h *s = malloc(sizeof *s);
    if (!s) return ata_fail(ATA_ERR_NOMEM, "spmv: out of memory");
    *s = (cpu_spmv_h){ A, cpu_gathers_at_random(A) };
    *h = s;
    return ATA_OK;
}
static void cpu_spmv_destroy(ata_context *ctx, void *h) { (void)ctx; free(h); }
int cpu_spmv_prefetches(const void *h) { return ((const cpu_spmv_h *)h)->prefetch; }


static ata_status cpu_spmv_dot(ata_context *ctx, void *h, const double *x, double *y, double *xy)
{
    const cpu_spmv_h *s = h;
    vec_job J = { .A = s->A, .prefetch = s->prefetch, .x = x, .out = y };
    /* Shared from nnz + n elements; then one chunk per CPU_POOL_CHUNK_ELEMS
     * rows, each with its share of the entries (~0.6 MB of a stencil's
     * matrix: a chunk per 8192 entries measured 25% slower on lap3d:60,
     * each chunk restarting the hardware's streams). */
    int nc = cpu_pool_chunks(ctx->pool, (size_t)J.A->nnz + (size_t)J.A->nrows);
    if (nc > 1) {
        const int by_rows = J.A->nrows / CPU_POOL_CHUNK_ELEMS;
        nc = by_rows < 2 ? 2 : by_rows < nc ? by_rows : nc;
    }
    cpu_pool_run_chunks(ctx->pool, spmv_chunk, &J, nc);
    *xy = sum_partials(&J, nc);
    return ATA_OK;
}

/* The worker forms x'y as it goes: the plain SpMV just ignores it. */
static ata_status cpu_spmv(ata_context *ctx, void *h, const double *x, double *y)
{
    double unused;
    return cpu_spmv_dot(ctx, h, x, y, &unused);
}

static ata_status cpu_dot(ata_context *ctx, size_t n, const double *x, const double *y, double *out)
{
    vec_job J = { .n = n, .x = x, .y = y };
    const int nc = cpu_pool_chunks(ctx->pool, n);
    cpu_pool_run_chunks(ctx->pool, dot_chunk, &J, nc);
    *out = sum_partials(&J, nc);
    return ATA_OK;
}

static ata_status cpu_cg_update(ata_context *ctx, size_t n, double a, const double *p, const double *q,
                                double *x, double *r, double *rr)
{
    vec_job J = { .n = n, .a = a, .x = p, .y = q, .out = x, .out2 = r };
    const int nc = cpu_pool_chunks(ctx->pool, 2 * n);
    cpu_pool_run_chunks(ctx->pool, cg_update_chunk, &J, nc);
    *rr = sum_partials(&J, nc);
    return ATA_OK;
}

static ata_status cpu_axpby(ata_context *ctx, size_t n, double a, const double *x, double b, double *y)
{
    vec_job J = { .n = n, .a = a, .b = b, .x = x, .out = y };
    cpu_pool_run_chunks(ctx->pool, axpby_chunk, &J, cpu_pool_chunks(ctx->pool, n));
    return ATA_OK;
}

const ata_backend_ops cpu_backend_ops = {
    .name = "cpu",
    .ctx_init = cpu_ctx_init,
    .ctx_fini = cpu_ctx_fini,
    .plan_upload = cpu_exec_layout,
    .plan_release = cpu_exec_release,
    .sptrsv = cpu_exec_sptrsv,
    .ilu0 = cpu_exec_ilu0,
    .ilu0_values = cpu_ilu0_values,
    .probe_sync_cost = cpu_probe_sync_cost,
    .probe_task_cost = cpu_probe_task_cost,
    .vec_alloc = cpu_vec_alloc,
    .vec_free = cpu_vec_free,
    .vec_upload = cpu_vec_copy,
    .vec_download = cpu_vec_copy,
    .spmv_create = cpu_spmv_create,
    .spmv_destroy = cpu_spmv_destroy,
    .spmv = cpu_spmv,
    .dot = cpu_dot,
    .axpby = cpu_axpby,
    .spmv_dot = cpu_spmv_dot,
    .cg_update = cpu_cg_update,
    .plan_values = cpu_exec_set_values,
    .plan_values_mapped = cpu_exec_set_values_mapped,
    .sptrsv_multi = cpu_exec_sptrsv_multi,
    .plan_triangle = cpu_exec_triangle,
    .caps = BACKEND_HOST_VECTORS | BACKEND_FACTOR_SPLIT,
};
