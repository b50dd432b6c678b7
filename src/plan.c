/* plan.c - making a plan, the one way (plan_create, from a plan_desc:
 * plan.h): the options checked, the input extracted or taken as it is, then
 * the analysis shared by every kind of plan and backend: DAG, S (Eq.
 * 5.1/5.2), aggregation, dependency state, and the backend's upload. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu_backend.h"
#include "cpu/cpu_pool.h"
#include "cpu/cpu_sched.h"
#include "csr.h"
#include "dag.h"
#include "error.h"
#include "ilu0_row.h"
#include "plan.h"
#include "policy.h"
#include "probe.h"
#include "mem.h"

ata_plan_options ata_plan_defaults(void)
{
    ata_plan_options o = { ATA_POLICY_AUTO, 0, 100.0, ATA_LOWER, ATA_NON_UNIT, ATA_PULL };
    return o;
}

uint32_t plan_next_epoch(ata_plan *p)
{
    if (p->epoch == UINT32_MAX) {       /* wrap: forget every old epoch */
        memset(p->done, 0, (size_t)p->n * sizeof *p->done);
        p->epoch = 0;
    }
    return ++p->epoch;
}

/* The plan's part of T: all of it, the values only, or nothing. */
static void free_T(ata_csr *T, int borrowed)
{
    if (!T || borrowed == PLAN_T_BORROWED) return;
    if (borrowed == PLAN_T_OWNED) { ata_csr_free(T); return; }
    free(T->val);
    free(T);
}

void plan_free(ata_plan *p)
{
    if (!p) return;
    plan_free(p->transposed);
    if (p->ctx && p->ctx->ops) {
        p->ctx->ops->plan_release(p);
        if (p->vb) p->ctx->ops->vec_free(p->ctx, p->vb);
        if (p->vx) p->ctx->ops->vec_free(p->ctx, p->vx);
    }
    free_T(p->T, p->T_borrowed);
    agg_free(&p->sched);
    free(p->diag);
    free(p->done);
    free(p->indeg);
    free(p->pending);
    free(p);
}

void ata_plan_destroy(ata_plan *plan) { plan_free(plan); }

ata_status ata_plan_get_info(const ata_plan *plan, ata_plan_info *info)
{
    if (!plan || !info) return ata_fail(ATA_ERR_ARG, "plan info: NULL argument");
    *info = plan->info;
    return ATA_OK;
}

/* The worker schedule's cost of a mean row (cpu_sched.h), in entries' work:
 * T_u of Eq. 5.2 where auto on the CPU takes S from that model. */
static double model_row_work(const ata_plan *p)
{
    return SCHED_ROW_COST + (double)(p->T->nnz + (p->Tu ? p->Tu->nnz : 0)) / (p->n > 0 ? p->n : 1);
}

static int node_permille(const ata_csr *T, ata_uplo uplo);
#define AUTO_NODES_PERMILLE 250

/* Eq. 5.1 and 5.2: S = max(S_min, R * T_l / T_u). */
static ata_status choose_S(ata_plan *p, int *S)
{
    ata_context *ctx = p->ctx;
    if (p->opt.S > 0) { *S = p->opt.S; return ATA_OK; }
    /* levelset, syncfree, greedy (the capacity) and vendor never read S: no
     * probes (they are timed runs, and a pass over the pattern for the
     * cache's key: 30 ms of a PCG setup at lap3d:100). */
    const unsigned fl = policy_get(p->opt.policy)->flags;
    if (fl & POLICY_BLOCKS) {
        /* The CPU: blocks as long as its workers allow (agg_chain_cap):
         * short blocks cost a worker (ex19's 149k-row factor on one worker,
         * cold, runs back to back: blocks of 256 rows 4.0 ms a solve, whole
         * lines of 772 2.4; README). */
        if (ctx->backend != ATA_BACKEND_CPU || !ctx->pool) { *S = POLICY_CHAIN_CAP; return ATA_OK; }
        const int preds = p->kind == PLAN_ILU0 || p->opt.traversal == ATA_PULL;
        const ata_uplo uplo = p->kind == PLAN_ILU0 ? ATA_LOWER : p->opt.uplo;
        /* the workers a solve runs on (never more than the CPUs this
         * process may use), as the layout counts them; where a worker
         * walks its blocks side by side (short rows, no nodes: cpu_exec.c,
         * layout_lines), CPU_LINES blocks each: lines cut into pieces, the
         * pieces of successive lines a wavefront (lap2d:1000, 1000 lines
         * of 1000, one process, 30 solves, medians: one worker whole lines
         * 8.51 ms, pieces of 100 or 200 rows side by side 6.80-6.89; two
         * workers pieces of 500 4.61, of 100 3.25, ca 4.00) */
        if (p->auto_chain_cap > 0) { *S = p->auto_chain_cap; return ATA_OK; }     /* plan_resolve_policy's */
        int ways = cpu_pool_workers(ctx->pool);
        if (p->kind == PLAN_SPTRSV && preds && cpu_lines_rows_short(p->T, p->opt.diag != ATA_UNIT) &&
            (p->auto_nodes >= 0 ? p->auto_nodes : node_permille(p->T, uplo)) < AUTO_NODES_PERMILLE)
            ways *= CPU_LINES;
        return agg_chain_cap(p->n, p->T->rowptr, p->T->col, preds, uplo, ways, S, NULL);
    }
    if (!(fl & POLICY_USES_S)) { *S = 1; return ATA_OK; }
    /* auto on the CPU: levels as they are (S_min) unless they are thin runs
     * of chained rows (plan_resolve_policy); no probes either way (five
     * timed passes over each plan's rows, 40% of a PCG setup at lap3d:100;
     * under load they measure the other jobs). */
    if (p->auto_policy && ctx->backend == ATA_BACKEND_CPU) {
        if (!p->auto_group) { *S = ctx->S_min; return ATA_OK; }
        /* Eq. 5.2 on the worker schedule's cost model instead of probes:
         * T_l a hand-off, T_u a mean row (entries' work). S matters little
         * here (lap2d:4000x250 and ex19's 149k-row factor within 10% from
         * S = 1000 to 10000) and a model gives the same S on every run,
         * loaded or not, with no timed passes in the setup. */
        double s = ceil(p->opt.R * SCHED_SYNC / model_row_work(p));
        if (s < ctx->S_min) s = ctx->S_min;
        if (s > p->n) s = p->n;
        *S = s < 1 ? 1 : (int)s;
        return ATA_OK;
    }
    double T_l, T_u;        /* medians of several probes, cached per machine (probe.h) */
    ATA_TRY(probe_costs(p, &T_l, &T_u));
    double s = ceil(p->opt.R * T_l / T_u);
    if (s < ctx->S_min) s = ctx->S_min;
    if (s > p->n) s = p->n;
    *S = s < 1 ? 1 : (int)s;
    return ATA_OK;
}

static ata_status init_dependency_state(ata_plan *p, int preds, ata_uplo uplo)
{
    const int n = p->n;
    if (preds) {
        p->done = mem_calloc((size_t)n + 1, sizeof *p->done);
        return p->done ? ATA_OK : ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    }
    p->indeg = mem_calloc((size_t)n + 1, sizeof *p->indeg);
    p->pending = mem_calloc((size_t)n + 1, sizeof *p->pending);
    if (!p->indeg || !p->pending) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    const ata_csr *C = p->T;
    for (int j = 0; j < n; j++)
        for (int q = C->rowptr[j]; q < C->rowptr[j + 1]; q++)
            if (dag_is_edge(uplo, 0, j, C->col[q])) p->indeg[C->col[q]]++;
    return ATA_OK;
}

/* Rows of T (pull: a row lists its predecessors) that need the row just
 * before them in the solve direction, per mille. */
static int chained_permille(const ata_csr *T, ata_uplo uplo)
{
    const int n = T->nrows;
    long long c = 0;
    for (int i = 0; i < n; i++) {
        const int lo = T->rowptr[i], hi = T->rowptr[i + 1];
        if (lo == hi) continue;
        /* columns sorted. A triangle's row: the row before is the entry
         * next to the diagonal (a bisection per row was 141M instructions
         * of lap3d:100's PCG setup); a whole row (ILU0): bisection. */
        if (uplo == ATA_LOWER && T->col[hi - 1] <= i) {
            const int q = hi - 1 - (T->col[hi - 1] == i);
            c += q >= lo && T->col[q] == i - 1;
            continue;
        }
        if (uplo == ATA_UPPER && T->col[lo] >= i) {
            const int q = lo + (T->col[lo] == i);
            c += q < hi && T->col[q] == i + 1;
            continue;
        }
        const int j = uplo == ATA_LOWER ? i - 1 : i + 1;
        int a = lo, b = hi;
        while (a < b) {
            const int mid = a + (b - a) / 2;
            if (T->col[mid] < j) a = mid + 1; else b = mid;
        }
        c += a < hi && T->col[a] == j;
    }
    return n ? (int)(1000 * c / n) : 0;
}

/* auto: ca everywhere. On the CPU, S is S_min (levels as they are: the
 * workers' schedule, cpu_sched.c, keeps a thin level whole and splits a
 * wide one itself) unless the plan's rows mostly need the row before them
 * (a grid, or a PDE system's nodes, in natural order) and its levels are
 * thin: then S by Eq. 5.2 (on a cost model: choose_S), so that an
 * adaptive task takes tens of thin levels, whose rows it runs level by
 * level. That breaks the chain of dependent rows that a natural-order
 * solve (and chain's blocks) wait on, and syncs once per task instead of
 * once per level. Measured 2026-11-26
 * (ata-bench sptrsv, 2 threads, 10 solves, 7aec8e6, S probed; one process
 * per column, back to back, not interleaved):
 * PETSc's ex19 factor at 149k rows (97 rows a level) ca at Eq. 5.2's S
 * 0.98 ms, chain 1.45, ca at S_min 2.31, serial 1.28; lap2d:4000x250 (235
 * a level) 3.13, chain 5.6, S_min 4.22; circuit:1000000 (not chained)
 * S_min 4.83, Eq. 5.2 6.82; lap3d:100 natural (3355 a level) 3.21 either
 * way. The ILU0 plan of a chained matrix runs chain's blocks in place
 * instead, thin levels or wide: its rows read earlier rows of U, which in
 * natural order were just written, where ca's level order jumps across the
 * matrix (refactorisation, ata-bench ilu0, 2 threads: ex19's 149k rows ca
 * 35 ms, chain 16.5; lap3d:100 natural, 3355 rows a level, ca 72 ms, chain
 * 27, the serial loop 24; convdiff:60 16 against 5.7).
 * Other backends: S by Eq. 5.2 always (the paper's best on both DAG
 * classes). The CPU backend then times its first solves with all workers
 * and with one (cpu_exec.c). */
#define AUTO_CHAIN_PERMILLE 500
#define AUTO_CHAIN_MAX_WIDTH 1024   /* mean rows per level */

/* Rows of a triangle that continue a node (cpu_nodes.h: a PDE system
 * numbered point by point), per mille: a lower row whose entries left of
 * the diagonal are those of the row before plus that row; an upper row
 * whose entries right of it are that row plus those of the row after.
 * Columns sorted. */
static int node_permille(const ata_csr *T, ata_uplo uplo)
{
    const int n = T->nrows, up = uplo == ATA_UPPER;
    long long c = 0;
    int prev_lo = 0, prev_len = 0;      /* the row solved before: its entries in the triangle */
    for (int k = 0; k < n; k++) {
        const int i = up ? n - 1 - k : k, e0 = T->rowptr[i], e1 = T->rowptr[i + 1];
        int lo = e0, len = 0;
        if (up) {
            while (lo < e1 && T->col[lo] <= i) lo++;
            len = e1 - lo;
        } else {
            while (lo + len < e1 && T->col[lo + len] < i) len++;
        }
        /* the row solved just before (i -+ 1) and its entries: lower last, upper first */
        const int near = up ? lo : lo + len - 1, rest = up ? lo + 1 : lo;
        if (k > 0 && len == prev_len + 1 && T->col[near] == (up ? i + 1 : i - 1) &&
            !memcmp(T->col + rest, T->col + prev_lo, (size_t)prev_len * sizeof *T->col))
            c++;
        prev_lo = lo;
        prev_len = len;
    }
    return n ? (int)(1000 * c / n) : 0;
}

/* auto on the CPU (see the comment above). A lower solve whose rows are
 * chained and mostly in nodes runs chain instead: its lines in place, a
 * node's rows side by side (cpu_nodes.c), pieces of the lines as a
 * wavefront on several workers. Measured 2026-11-26 (ata-bench sptrsv,
 * 2 threads, lap2d:193,dofs=4, ex19's DAG): ca at Eq. 5.2's S 0.97-1.01 ms,
 * chain 0.64; ex19's ILU(0) L in MatSolve's conditions (the cache flushed
 * between solves): 1.21 against 1.01, on one worker 1.50 against 0.92.
 * Upper the same, since rows sum far to near (ref_sptrsv.c) and an upper
 * node's rows run side by side too. */
/* Also chain where x is past the caches (4 MiB, as cpu_gathers_at_random),
 * the rows are short, there are several workers and chain's blocks (pieces
 * of successive lines where a level has few lines: choose_S) hold 100 rows
 * or more on average: each worker walks its blocks side by side
 * (cpu_exec.c, layout_lines) on T, b and x in place, every stream long,
 * where ca stages b and x by position and gathers through levels that jump
 * across the grid. Measured 2026-11-28, 2 threads, chain / ca, lower and
 * upper, with a 32 MB write before each solve (one process, plans
 * alternated, 24 solves, medians): lap2d:4000x250 (blocks of 504) 0.81,
 * 0.64; lap2d:2000 (252) 0.91, 0.83; lap3d:1000x30x30 (1000) 0.88, 0.86;
 * but lap2d:1000 (132) 1.16, 1.06, lap3d:128 (128) 1.00, 1.01,
 * convdiff:100 (100) 1.13, 1.16, lap3d:100 (100) 1.09-1.13. Without the
 * write (`ata-bench sptrsv`, consecutive solves, caches warm) chain was
 * the faster lower solve there too: lap3d:100 0.69 / 1.02, convdiff:100
 * 0.69 / 1.11, lap3d:128 0.67 / 0.88. Where x fits:
 * lap2d:1000x100 1.05-1.46, lap2d:300 1.1-1.6. On one worker chain lost up
 * to 1.4x (lap3d:2000x20x20). (The twelfth session did not reproduce ca's
 * lead on whole lines, lap3d:100, lap3d:128, convdiff:100: below.)
 * Where the lines need no cutting (a 3D grid: 8 or more whole lines a level
 * for 2 workers' 4), chain wins from lines of 40 rows and an x of 512 KiB.
 * Measured 2026-11-28 (twelfth session), 2 threads, one process, plans
 * alternated, medians of 16-52 solves, chain / ca: lap3d:100 0.70 warm
 * (2.63 against 3.77 ms), 0.69-0.97 with the 32 MB write, upper 0.91-0.96;
 * lap3d:128 0.89 / 0.85 (write, L / U); convdiff:100 0.87 / 0.90;
 * lap3d:81 0.91 / 0.90; lap3d:64x128x128 0.69; lap3d:50x150x150 0.67;
 * lap3d:40x160x160 0.74; but lap3d:30x200x200 (lines of 30) 1.03-1.05.
 * auto against auto before, the serial loop as each process's anchor:
 * lap3d:55 to lap3d:100 and convdiff:60 1.1-1.6x faster, lap3d:100x40x40
 * (x 1.3 MB) and convdiff:50 level; lap3d:40x20x20 (x 128 KB) 14% slower,
 * lap3d:40 (x 500 KB) level to 15% slower: hence the x bound. Grids cut
 * into pieces (2D: one line a level) keep the rule above: lap2d:300x3000
 * to lap2d:200x5000 (pieces of 33-57 rows) 1.2-1.45x slower with chain.
 * Whole lines of long rows too (chain without the side-by-side walk,
 * layout_lines): the 27-point lap3d27 (13 entries a row), 2 threads, chain
 * / ca, warm and with the 32 MB write, lower and upper (thirteenth session,
 * `pl`, 24 solves): lap3d27:40 0.73-0.86, lap3d27:50 0.87-0.89,
 * lap3d27:60 0.85-0.97, lap3d27:80 0.95-0.99, lap3d27:100x40x40
 * 0.75-0.83, lap3d27:40x80x80 0.85-0.91; one thread 0.67-0.86. Cut lines
 * keep short rows (bcsstk13, long rows, chain 1.2-3.4x slower).
 * Blocks of 100, not 200 (fifteenth session, Intel VM, 2 threads, warm,
 * ata-bench, 2 processes, chain / ca): lap2d:1000 (blocks of 132) 0.67-0.69,
 * and `make bench` on the AMD VM had flagged it too (auto 1.16x off chain);
 * with a 64 MB write between solves 0.45 here; but pieces of 48
 * (lap2d:300x3000) 1.09-1.12, as the AMD VM's 33-57 (above). */
#define AUTO_LINES_MIN_X (4u << 20)
#define AUTO_LINES_MIN_BLOCK 100
#define AUTO_LINES_MIN_LINE 40
#define AUTO_LINES_MIN_X_WHOLE (512u << 10)

static ata_policy plan_resolve_policy(const ata_context *ctx, const ata_csr *T, int kind, const ata_plan_options *o,
                                      int *chained, int *nodes, int *chain_cap)
{
    *chained = *nodes = -1;
    *chain_cap = 0;
    if (o->policy != ATA_POLICY_AUTO) return o->policy;
    if (ctx->backend != ATA_BACKEND_CPU || (ctx->ops->caps & BACKEND_NO_SCHEDULE)) return ATA_POLICY_CA;
    if (kind == PLAN_SPTRSV && o->traversal != ATA_PULL) return ATA_POLICY_CA;
    *chained = chained_permille(T, kind == PLAN_ILU0 ? ATA_LOWER : o->uplo);
    if (kind == PLAN_ILU0) return *chained >= AUTO_CHAIN_PERMILLE ? ATA_POLICY_CHAIN : ATA_POLICY_CA;
    if (*chained < AUTO_CHAIN_PERMILLE) return ATA_POLICY_CA;
    *nodes = node_permille(T, o->uplo);
    if (*nodes >= AUTO_NODES_PERMILLE) return ATA_POLICY_CHAIN;
    if (ctx->pool && cpu_pool_workers(ctx->pool) > 1 && (size_t)T->nrows * sizeof(double) >= AUTO_LINES_MIN_X_WHOLE) {
        /* as choose_S would cut them for the blocks side by side (long rows
         * take fewer ways there; lines whole at these are whole at those);
         * out of memory: ca, which needs less, and the last error as it was
         * (the plan may still succeed) */
        char old_error[256];
        snprintf(old_error, sizeof old_error, "%s", ata_last_error());
        int cap, mean;
        if (agg_chain_cap(T->nrows, T->rowptr, T->col, 1, o->uplo, cpu_pool_workers(ctx->pool) * CPU_LINES, &cap,
                          &mean) != ATA_OK) {
            (void)ata_fail(ATA_OK, "%s", old_error);
            return ATA_POLICY_CA;
        }
        const int whole = cap >= T->nrows;     /* lines not cut: enough of them a level */
        if (whole ? mean >= AUTO_LINES_MIN_LINE
                  : (size_t)T->nrows * sizeof(double) >= AUTO_LINES_MIN_X && mean >= AUTO_LINES_MIN_BLOCK &&
                        cpu_lines_rows_short(T, o->diag != ATA_UNIT)) {
            *chain_cap = cap;
            return ATA_POLICY_CHAIN;
        }
    }
    return ATA_POLICY_CA;
}

/* auto on the CPU: S by Eq. 5.2 (see plan_resolve_policy)? */
static int auto_groups_levels(const ata_plan *p, const dag *d)
{
    return p->auto_chained >= AUTO_CHAIN_PERMILLE && d->nlevels > 0 && p->n / d->nlevels < AUTO_CHAIN_MAX_WIDTH;
}

const char *ata_plan_choice(const ata_plan *plan) { return plan ? plan->choice : "(no plan)"; }

/* The analysis's part of ata_plan_choice (the backend may add to it).
 * No commas in it: ata-bench's CSV carries it as a last column that a
 * comma-splitting reader can take whole. */
static void plan_describe(ata_plan *p, const dag *d)
{
    const ata_plan_info *in = &p->info;
    char lines_why[128];
    if (p->auto_chain_cap >= p->n)
        snprintf(lines_why, sizeof lines_why, "whole lines of %d or more and an x of %u KiB or more: "
                 "chain's lines in place", AUTO_LINES_MIN_LINE, AUTO_LINES_MIN_X_WHOLE >> 10);
    else
        snprintf(lines_why, sizeof lines_why, "short rows in blocks of %d or more and an x past the caches: chain's "
                 "blocks in place", AUTO_LINES_MIN_BLOCK);
    int w = snprintf(p->choice, sizeof p->choice, "%s%s", p->auto_policy ? "auto: " : "", ata_policy_name(p->opt.policy));
    if (w > 0 && (size_t)w < sizeof p->choice && p->auto_chained >= 0 && d && d->nlevels > 0)
        w += snprintf(p->choice + w, sizeof p->choice - w, " (%.1f%% of rows need the row before them, %d rows a "
                      "level: %s; from %d%% below %d rows a level S is Eq. 5.2's)", p->auto_chained / 10.0,
                      p->n / d->nlevels, p->opt.policy == ATA_POLICY_CHAIN
                      ? p->auto_nodes >= AUTO_NODES_PERMILLE ? "chained rows in nodes: chain's lines in place"
                        : p->auto_nodes >= 0 ? lines_why
                        : "ILU0 on chained rows: chain's blocks in place"
                      : p->auto_group ? "thin levels of chained rows" : "levels as they are",
                      AUTO_CHAIN_PERMILLE / 10, AUTO_CHAIN_MAX_WIDTH);
    if (w > 0 && (size_t)w < sizeof p->choice && p->auto_nodes >= 0)
        w += snprintf(p->choice + w, sizeof p->choice - w, "; %.1f%% of rows continue a node (chain from %d%%)",
                      p->auto_nodes / 10.0, AUTO_NODES_PERMILLE / 10);
    const unsigned fl = policy_get(p->opt.policy)->flags;
    if (w > 0 && (size_t)w < sizeof p->choice && (fl & POLICY_USES_S)) {
        if (p->opt.S > 0) w += snprintf(p->choice + w, sizeof p->choice - w, "; S %d (fixed)", in->S);
        else if (p->auto_group)
            w += snprintf(p->choice + w, sizeof p->choice - w, "; S %d (Eq. 5.2 on the worker schedule's cost model: "
                          "a hand-off %.0f entries' work, a row %.1f; no probes)", in->S, SCHED_SYNC,
                          model_row_work(p));
        else if (!(in->T_u > 0) && p->kind == PLAN_SPTRSV && p->opt.traversal == ATA_PUSH)
            w += snprintf(p->choice + w, sizeof p->choice - w, "; S %d (S_min: no probes; push has no worker "
                          "schedule: about a level an adaptive task)", in->S);
        else if (!(in->T_u > 0))
            w += snprintf(p->choice + w, sizeof p->choice - w, "; S %d (S_min: no probes; the workers' schedule "
                          "groups thin levels itself)", in->S);
        else w += snprintf(p->choice + w, sizeof p->choice - w, "; S %d (Eq. 5.2: T_l %.0f ns / T_u %.2f ns)", in->S,
                           in->T_l * 1e9, in->T_u * 1e9);
    }
    if (w > 0 && (size_t)w < sizeof p->choice && d)
        snprintf(p->choice + w, sizeof p->choice - w, "; %d adaptive tasks on %d levels (%s DAG%s)", in->atasks,
                 d->nlevels, dag_class_name(d->dag_class), d->lower_reversed ? "; L's levels reversed" : "");
}

static ata_status analyse(ata_context *ctx, ata_csr *T, ata_csr *Tu, int borrowed, int kind,
                          const ata_plan_options *opt_in, const dag *known, const ata_plan *like, int values_f32,
                          ata_plan **out)
{
    double t0 = clock_now();
    ata_plan_options resolved = *opt_in;
    int chained, nodes, chain_cap;
    resolved.policy = plan_resolve_policy(ctx, T, kind, opt_in, &chained, &nodes, &chain_cap);
    const ata_plan_options *opt = &resolved;
    const policy_desc *pd = policy_get(opt->policy);
    /* (a backend that schedules nothing runs no policy: any known one will do) */
    ata_status bad = !pd ? ata_fail(ATA_ERR_ARG, "plan: unknown policy %d", (int)opt->policy)
                   : ctx->ops->caps & BACKEND_NO_SCHEDULE ? ATA_OK : policy_check_backend(pd, ctx->backend);
    if (bad != ATA_OK) { free_T(T, borrowed); return bad; }
    ata_plan *p = calloc(1, sizeof *p);
    if (!p) { free_T(T, borrowed); return ata_fail(ATA_ERR_NOMEM, "plan: out of memory"); }
    p->ctx = ctx;
    p->kind = kind;
    p->opt = *opt;
    p->auto_policy = opt_in->policy == ATA_POLICY_AUTO;
    p->auto_chained = chained;
    p->auto_nodes = nodes;
    p->auto_chain_cap = chain_cap;
    p->n = T->nrows;
    p->T = T;
    p->Tu = Tu;
    p->T_borrowed = borrowed;
    p->values_f32 = values_f32 && kind == PLAN_SPTRSV;     /* before the upload: the backend lays them out */
    const int preds = kind == PLAN_ILU0 || opt->traversal == ATA_PULL;
    const ata_uplo uplo = kind == PLAN_ILU0 ? ATA_LOWER : opt->uplo;
    dag d = { 0 };
    ata_status st = ATA_OK;
    int S = 1;
    if (kind == PLAN_ILU0 && !Tu) {
        p->diag = mem_alloc(((size_t)p->n + 1) * sizeof *p->diag);
        if (!p->diag) { st = ata_fail(ATA_ERR_NOMEM, "plan: out of memory"); goto fail; }
        if ((st = ilu0_find_diag(T, p->diag)) != ATA_OK) goto fail;
    }
    const dag *dp = known ? known : &d;
    /* A backend that schedules nothing (the serial reference) gets the
     * matrix only: no DAG, S, aggregation or dependency state. */
    const int unscheduled = (ctx->ops->caps & BACKEND_NO_SCHEDULE) != 0;
    if (unscheduled) goto upload;
    if (!known && (st = dag_build(p->n, T->rowptr, T->col, preds, uplo, &d)) != ATA_OK) goto fail;
    p->auto_group = p->auto_policy && opt->policy == ATA_POLICY_CA && auto_groups_levels(p, dp);
    /* like: the ILU0 plan on split factors, whose T is this pull lower
     * plan's T (factor.c); its schedule is this one's where policy and S
     * agree. chain's S is its cap, from this T and these workers either
     * way: taken, not counted again (a pass over the pattern); but not
     * where auto chose chain for blocks side by side (its own cap, cut
     * for them: auto_chain_cap). */
    const int as_like = like && like->kind == PLAN_ILU0 && like->Tu && kind == PLAN_SPTRSV && like->T == T &&
                        opt->traversal == ATA_PULL && opt->uplo == ATA_LOWER && like->opt.policy == opt->policy &&
                        like->ctx == ctx;
    if (as_like && opt->S == 0 && like->opt.S == 0 && !p->auto_chain_cap &&
        (policy_get(opt->policy)->flags & POLICY_BLOCKS) &&
        ctx->backend == ATA_BACKEND_CPU)
        S = like->sched.S_in;
    else if ((st = choose_S(p, &S)) != ATA_OK)
        goto fail;
    /* vendor keeps a syncfree schedule only for the statistics. */
    ata_policy pol = opt->policy == ATA_POLICY_VENDOR ? ATA_POLICY_SYNCFREE : opt->policy;
    if (as_like && like->sched.S_in == S) {
        if ((st = agg_copy(&like->sched, p->n, &p->sched)) != ATA_OK) goto fail;
    } else if ((st = agg_build(dp, T->rowptr, T->col, preds, uplo, pol, S, ctx->capacity, &p->sched)) != ATA_OK) {
        goto fail;
    }
    if ((st = init_dependency_state(p, preds, uplo)) != ATA_OK) goto fail;

    ata_plan_info *in = &p->info;
    in->n = p->n;
    in->nnz = T->nnz + (Tu ? Tu->nnz : 0);
    in->levels = dp->nlevels;
    in->max_width = dp->max_width;
    in->m = dp->m;
    in->dag_class = dag_class_name(dp->dag_class);
    in->S = p->sched.S;
    in->atasks = p->sched.natasks;
    in->untracked = p->sched.untracked;
    in->barriers = p->sched.barriers;
    in->c = p->sched.c;
    in->f = p->sched.f;
    in->policy = opt->policy;
    in->traversal = kind == PLAN_ILU0 ? ATA_PULL : opt->traversal;
    in->plan_bytes = sizeof(int) * ((size_t)p->n                    /* order */
                                    + (size_t)p->sched.natasks + 1    /* atask_ptr */
                                    + (p->done ? (size_t)p->n : 0)
                                    + (p->indeg ? 2 * (size_t)p->n : 0)
                                    + (p->diag ? (size_t)p->n : 0)
                                    + (size_t)p->sched.nruns + 1)
                     + (size_t)p->sched.natasks;                       /* flags */
    /* (the backend's plan_upload adds what it keeps: cpu_exec_layout) */
    in->matrix_bytes = sizeof(int) * ((size_t)p->n + 1 + (size_t)T->nnz) + sizeof(double) * (size_t)T->nnz;
    if (Tu) in->matrix_bytes += sizeof(int) * ((size_t)p->n + 1 + (size_t)Tu->nnz) + sizeof(double) * (size_t)Tu->nnz;
    p->nlevels = dp->nlevels;
    plan_describe(p, dp);
    dag_free(&d);
upload:
    if (unscheduled) {
        p->info.n = p->n;
        p->info.nnz = T->nnz + (Tu ? Tu->nnz : 0);
        p->info.policy = opt->policy;
        p->info.traversal = kind == PLAN_ILU0 ? ATA_PULL : opt->traversal;
        p->info.dag_class = "none (not scheduled)";
        snprintf(p->choice, sizeof p->choice, "serial reference: rows in order (no schedule)");
    }
    if ((st = ctx->ops->plan_upload(p)) != ATA_OK) goto fail;
    if (!(ctx->ops->caps & BACKEND_HOST_VECTORS) && kind == PLAN_SPTRSV) {
        if ((st = ctx->ops->vec_alloc(ctx, (size_t)p->n, &p->vb)) != ATA_OK) goto fail;
        if ((st = ctx->ops->vec_alloc(ctx, (size_t)p->n, &p->vx)) != ATA_OK) goto fail;
    }
    p->info.analysis_s = clock_now() - t0;
    *out = p;
    return ATA_OK;
fail:
    dag_free(&d);
    plan_free(p);
    return st;
}

/* ---- the one constructor ------------------------------------------------- */
ata_status plan_check_options(const ata_context *ctx, const ata_plan_options *o)
{
    const policy_desc *pd = policy_get(o->policy);
    if (!pd) return ata_fail(ATA_ERR_ARG, "plan: unknown policy %d", (int)o->policy);
    if (o->S < 0) return ata_fail(ATA_ERR_ARG, "plan: S = %d (expected 0 for auto, or >= 1)", o->S);
    if (!(o->R > 0)) return ata_fail(ATA_ERR_ARG, "plan: R = %g (expected > 0)", o->R);
    if (o->uplo != ATA_LOWER && o->uplo != ATA_UPPER) return ata_fail(ATA_ERR_ARG, "plan: bad uplo");
    if (o->diag != ATA_UNIT && o->diag != ATA_NON_UNIT && o->diag != ATA_NON_UNIT_INV)
        return ata_fail(ATA_ERR_ARG, "plan: bad diag");
    if (o->diag == ATA_NON_UNIT_INV && ctx->backend != ATA_BACKEND_CPU)
        return ata_fail(ATA_ERR_UNSUPPORTED, "plan: diag ATA_NON_UNIT_INV (the diagonal's reciprocal) runs on the CPU "
                        "backend only; the %s backend divides (use ATA_NON_UNIT)", ctx->ops->name);
    if (o->traversal != ATA_PULL && o->traversal != ATA_PUSH) return ata_fail(ATA_ERR_ARG, "plan: bad traversal");
    return policy_check_backend(pd, ctx->backend);
}

/* plan_desc.from (plan.h): the solve's triangle extracted:
 * the triangle of P F P^T (perm NULL: of F; no diagonal if unit, else each
 * diagonal checked), transposed for push. If map_out, map[q] = position in
 * F of the input's entry q: through a push transpose it is carried as the
 * entries' values (exact below 2^53). */
ata_status plan_extract(ata_context *ctx, const ata_csr *F, const int *perm, const ata_plan_options *o,
                             const char *what, ata_csr **tri_out, int **map_out)
{
    const int unit = o->diag == ATA_UNIT;
    const int part = o->uplo == ATA_LOWER ? (unit ? CSR_STRICT_LOWER : CSR_LOWER) : (unit ? CSR_STRICT_UPPER : CSR_UPPER);
    ata_csr *tri = NULL, *tc = NULL;
    int *map = NULL;
    ATA_TRY(csr_permute_part(F, perm, part, ctx->pool, &tri, map_out ? &map : NULL));
    ata_status st = unit || !F->val ? ATA_OK : ata_csr_check_diag(tri, what);
    if (st == ATA_OK && o->traversal == ATA_PUSH) {
        if (map) for (int q = 0; q < tri->nnz; q++) tri->val[q] = map[q];
        st = ata_csr_transpose(tri, &tc);
        if (st == ATA_OK && map)
            for (int q = 0; q < tc->nnz; q++) {
                map[q] = (int)tc->val[q];
                if (F->val) tc->val[q] = F->val[map[q]];
            }
        ata_csr_free(tri);
        tri = tc;
    }
    if (st != ATA_OK) { free(map); ata_csr_free(tri); return st; }
    *tri_out = tri;
    if (map_out) *map_out = map;
    else free(map);
    return ATA_OK;
}

/* ATA_NON_UNIT_INV: the reciprocal of each diagonal entry of the plan's
 * triangle (a row's or, pushed, a column's entry on the diagonal; checked
 * nonzero by the extraction), rounded once: the plan then multiplies. */
void plan_invert_diag(ata_csr *T)
{
    for (int r = 0; r < T->nrows; r++)
        for (int q = T->rowptr[r]; q < T->rowptr[r + 1]; q++)
            if (T->col[q] == r) T->val[q] = 1.0 / T->val[q];
}

/* An upper solve of a matrix in its lower triangle's level order (PCG's
 * relabelled A, `,levelorder`) runs on L's levels backwards, as PCG's own
 * upper solve does (factor_split.c): each level a block of rows, from the
 * last row to the first (the CPU's PULL_DOWN: no order read, nothing
 * staged), instead of U's own levels, which scatter its rows. Measured
 * (ata-bench sptrsv --uplo upper, 2 threads, auto, 5 alternated runs):
 * lap3d:100,levelorder 2.67 -> 1.95 ms (medians), circuit:1000000,levelorder
 * 6.23 -> 4.45; the plan 19.1 -> 7.65 MB on the circuit. Only where F holds
 * the lower triangle too (a caller's U alone has none), its levels come in
 * row order (dag_build_row_ordered stops at the first row out of order: a
 * natural-order matrix costs a few rows), and the pattern is structurally
 * symmetric (dag_reverse_upper); a CPU plan (the GPU kernels have not run
 * on it). Each level's rows run in row order, so the order read back is
 * exactly the rows backwards. */
static ata_status upper_on_lower_levels(const ata_context *ctx, const plan_desc *d, const ata_plan_options *opt,
                                        const ata_csr *T, dag *rev, int *made)
{
    const ata_csr *F = d->from;
    *made = 0;
    if (d->kind != PLAN_SPTRSV || opt->uplo != ATA_UPPER || opt->traversal != ATA_PULL || d->perm ||
        ctx->backend != ATA_BACKEND_CPU || (ctx->ops->caps & BACKEND_NO_SCHEDULE) || F->nnz <= T->nnz)
        return ATA_OK;
    dag low;
    ata_status st = dag_build_row_ordered(F->nrows, F->rowptr, F->col, &low);
    if (st == ATA_OK) {
        st = low.nlevels > 1 ? dag_reverse_upper(&low, T->rowptr, T->col, rev) : ATA_ERR_UNSUPPORTED;
        dag_free(&low);
    }
    *made = st == ATA_OK;
    return st == ATA_ERR_UNSUPPORTED ? ATA_OK : st;   /* (quietly: U's own levels then) */
}

ata_status plan_create(ata_context *ctx, const plan_desc *d, const ata_plan_options *opt_in, ata_plan **out)
{
    ata_csr *T = d->T;
    int own = d->own;
    *out = NULL;
    ata_status st = plan_check_options(ctx, opt_in);
    /* NON_UNIT_INV: a non-unit plan on a triangle whose diagonal this plan
     * inverts (here, and at new values: diag_invert) */
    ata_plan_options o = *opt_in;
    const int invert = o.diag == ATA_NON_UNIT_INV;
    if (invert) o.diag = ATA_NON_UNIT;
    const ata_plan_options *opt = &o;
    if (st == ATA_OK && invert && (!d->from || d->diag_inv))
        st = ata_fail(ATA_ERR_INTERNAL, "plan: ATA_NON_UNIT_INV needs a triangle to extract");
    if (st == ATA_OK && d->from && d->T)
        st = ata_fail(ATA_ERR_INTERNAL, "plan: both a source to extract and a triangle to take");
    if (st == ATA_OK && d->U && !(ctx->ops->caps & BACKEND_FACTOR_SPLIT))
        st = ata_fail(ATA_ERR_INTERNAL, "ilu0: the %s backend does not factor split triangles", ctx->ops->name);
    if (st == ATA_OK && d->T && own == PLAN_T_BORROWED && d->kind == PLAN_SPTRSV &&
        (!(ctx->ops->caps & BACKEND_HOST_VECTORS) || opt->traversal != ATA_PULL))
        st = ata_fail(ATA_ERR_INTERNAL, "sptrsv plan: a borrowed triangle is for pull plans on host backends only");
    if (st != ATA_OK) {
        if (d->T) free_T(d->T, own);
        return st;
    }
    if (d->from) {
        ATA_TRY(plan_extract(ctx, d->from, d->perm, opt, "sptrsv plan", &T, d->map_out));
        own = PLAN_T_OWNED;
        if (invert && T->val) plan_invert_diag(T);
    }
    dag rev = { 0 };
    const dag *known = d->known;
    int reversed = 0;
    if (!known && d->from && (st = upper_on_lower_levels(ctx, d, opt, T, &rev, &reversed)) != ATA_OK) {
        ata_csr_free(T);
        if (d->map_out) { free(*d->map_out); *d->map_out = NULL; }
        return st;
    }
    if (reversed) known = &rev;
    st = analyse(ctx, T, d->U, d->U ? PLAN_T_BORROWED : own, d->kind, opt, known, d->like, d->values_f32, out);
    dag_free(&rev);
    if (st == ATA_OK) {
        (*out)->diag_inv = (d->diag_inv || invert) && opt->diag == ATA_NON_UNIT;
        (*out)->diag_invert = invert;
    }
    if (st != ATA_OK && d->from && d->map_out) { free(*d->map_out); *d->map_out = NULL; }
    return st;
}

/* ---- new values through a map (plan_desc.map_out) -------------------------- */
ata_status sptrsv_plan_value_map(const ata_plan *p, const ata_csr *F, const int *perm, int **map_out)
{
    ata_csr *tri;
    ATA_TRY(plan_extract(p->ctx, F, perm, &p->opt, "sptrsv plan", &tri, map_out));
    ata_csr_free(tri);
    return ATA_OK;
}

ata_status sptrsv_plan_values_mapped(ata_plan *p, const double *fval, const int *map)
{
    plan_drop_transposed(p);
    if (p->ctx->ops->plan_values_mapped) return p->ctx->ops->plan_values_mapped(p, fval, map);
    const int nnz = p->info.nnz;
    double *scratch = mem_alloc(((size_t)nnz + 1) * sizeof *scratch);
    if (!scratch) return ata_fail(ATA_ERR_NOMEM, "plan values: out of memory (nnz = %d)", nnz);
    for (int q = 0; q < nnz; q++) scratch[q] = fval[map[q]];
    ata_status st = p->ctx->ops->plan_values(p, scratch);
    free(scratch);
    return st;
}

