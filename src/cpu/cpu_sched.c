/* cpu_sched.c - segments and point-to-point waits for the CPU workers (see
 * cpu_sched.h), made once at plan upload.
 *
 * Units, in SET order: an adaptive task whose cost is at most
 * SCHED_WHOLE_MAX (a narrow task: a few rows of a deep DAG's thin levels)
 * is one unit, run whole by one worker, so the dependencies inside it cost
 * nothing; a larger one gives a unit per run (one level, no edge inside),
 * and chain's block levels a unit each (blocks are never cut). A unit runs
 * whole on one worker, or split by cost into one part per worker.
 *
 * The choice is a list-scheduling simulation (earliest finish, as HEFT):
 * each worker has a clock; a part is ready when its worker is free and its
 * predecessors on other workers finished plus one hand-off (SCHED_SYNC, a
 * cache line crossing cores and a wake); a unit goes whole to the worker
 * that finishes it first, or is split where that finishes it sooner. So a
 * wide level is split (half the time plus a hand-off), a thin one stays on
 * the worker that holds its predecessors (no hand-off at all), and
 * independent thin chains run side by side.
 *
 * Costs are in "entries": a row costs its stored entries plus
 * SCHED_ROW_COST (its b, x and loop), a split ILU0 row its L and U parts;
 * a stored diagonal is the row's own (builder.diag). Measured
 * (circuit:1000000's U in PCG, L's levels reversed, 2 workers, the parts
 * of its 4 wide levels timed): counted as an entry, the diagonal gave the
 * first part of each level 1.46M entries to the second's 1.25M at equal
 * cost, and 3.0-3.5 ms of work per solve to the other's 2.3-2.4; left
 * out, 2.7-2.8 to 2.2-2.5.
 * Measured (circuit:1000000's second level split in two by cost, the rows
 * of each half timed): ~1.4 ns an entry (a gather of x) and ~1.7 ns a row;
 * with 3 per row, the half of long rows took 1.5x the other. */
#include <stdlib.h>
#include <string.h>
#include "cpu_sched.h"
#include "error.h"
#include "mem.h"

#define SCHED_WHOLE_MAX 2000    /* an adaptive task this cheap runs whole on one worker */
#define EXEC_SCHED_MAX_NT 256   /* workers at most (ATA_MAX_THREADS) */

void cpu_sched_free(cpu_sched *s)
{
    if (!s) return;
    free(s->seg_ptr); free(s->lo); free(s->hi);
    free(s->wait_ptr); free(s->wait_thr); free(s->wait_cnt);
    free(s->count);
    free(s->claim);
    memset(s, 0, sizeof *s);
}

/* Growable int arrays of the builder. */
typedef struct { int *v; size_t len, cap; } ivec;

static int ivec_push(ivec *a, int x)
{
    if (a->len == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        int *v = realloc(a->v, cap * sizeof *v);
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->len++] = x;
    return 0;
}

typedef struct {
    const cpu_sched_view *v;
    int nt, n;
    int *seg_of;            /* column of T -> its position's segment, -1 until
                               made: one load a predecessor, not posmap's too */
    const int *col_at;      /* position -> its column of T (the view's colmap; NULL: itself) */
    ivec lo, hi, thr, idx;  /* per segment: range, worker, index among its worker's */
    ivec wptr, wthr, wcnt;  /* waits, per segment */
    double *fin;            /* per segment: simulated finish (grown with lo) */
    size_t fin_cap;
    double *clock;          /* nt */
    int *nseg_t;            /* nt: segments per worker so far */
    int *waited;            /* nt x nt: worker t has waited for waited[t*nt+u] of u's */
    double *mf;             /* nt x nt: part p's latest predecessor finish on worker u */
    int *mi;                /* nt x nt: part p's count to wait for on worker u */
    int *cut;               /* nt + 1: the split's cut points */
    long long *pcost;       /* nt: the parts' costs */
    int diag;               /* every row of T stores its diagonal (a solve with
                               ATA_NON_UNIT): the row's own work, not a gather,
                               left out of its cost */
} builder;

static inline long long row_cost(const builder *B, int k)
{
    const cpu_sched_view *v = B->v;
    const int r = v->rowmap ? v->rowmap[k] : k;
    long long c = SCHED_ROW_COST + v->T->rowptr[r + 1] - v->T->rowptr[r] - B->diag;
    if (v->U) c += v->U->rowptr[r + 1] - v->U->rowptr[r];
    return c;
}

/* Parts of [u0, u1) by cost: cut[0..parts]. Cuts fall on `grain`
 * boundaries (chain's blocks: block_ptr[b0..b1]), or anywhere (NULL). */
/* Parts of [u0, u1) by cost: cut[0..parts], their costs in pcost. */
static int split_cuts(const builder *B, int u0, int u1, const int *grain, int g0, int g1, long long total)
{
    int parts = B->nt;
    const int units = grain ? g1 - g0 : u1 - u0;
    if (units < parts) parts = units;
    int *cut = B->cut;
    long long *pc = B->pcost, acc = 0, prev = 0;
    cut[0] = u0;
    int p = 1;
    if (grain) {
        /* A cut goes before or after the block its target falls in,
         * whichever is nearer (always after: two unequal blocks, the
         * smaller first, never split). */
        for (int g = g0; g < g1 && p < parts; g++) {
            long long next = acc;
            for (int k = grain[g]; k < grain[g + 1]; k++) next += row_cost(B, k);
            while (p < parts && next * parts >= total * p) {
                if (acc > prev && total * p - acc * parts < next * parts - total * p) {
                    pc[p - 1] = acc - prev; prev = acc; cut[p++] = grain[g];
                } else {
                    pc[p - 1] = next - prev; prev = next; cut[p++] = grain[g + 1];
                }
            }
            acc = next;
        }
    } else {
        for (int k = u0; k < u1 && p < parts; k++) {
            acc += row_cost(B, k);
            while (p < parts && acc * parts >= total * p) { pc[p - 1] = acc - prev; prev = acc; cut[p++] = k + 1; }
        }
    }
    while (p < parts) { pc[p - 1] = acc - prev; prev = acc; cut[p++] = u1; }
    pc[parts - 1] = total - prev;
    cut[parts] = u1;
    return parts;
}

/* Latest finish and wait count of the predecessors of positions [a, b)
 * in earlier units, per worker: into mf/mi row `row`. */
static void scan_preds(builder *B, int a, int b, int row)
{
    const cpu_sched_view *v = B->v;
    const int *Tp = v->T->rowptr, *Tj = v->T->col;
    double *mf = B->mf + (size_t)row * B->nt;
    int *mi = B->mi + (size_t)row * B->nt;
    int last = -1;      /* neighbours' predecessors share segments: each taken once in a row */
    const int *seg_of = B->seg_of;
    for (int k = a; k < b; k++) {
        const int r = v->rowmap ? v->rowmap[k] : k;
        for (int q = Tp[r]; q < Tp[r + 1]; q++) {
            /* Segments are made in position order: a column in none yet
             * is in this unit (same worker), the diagonal or a successor. */
            const int s = seg_of[Tj[q]];
            if (s < 0 || s == last) continue;
            last = s;
            const int t = B->thr.v[s];
            if (B->fin[s] > mf[t]) mf[t] = B->fin[s];
            if (B->idx.v[s] + 1 > mi[t]) mi[t] = B->idx.v[s] + 1;
        }
    }
}

/* When part `row` (predecessors scanned into mf/mi row `row`) can start on
 * worker t. */
static double ready_at(const builder *B, int row, int t)
{
    const double *mf = B->mf + (size_t)row * B->nt;
    double r = B->clock[t];
    for (int u = 0; u < B->nt; u++)
        if (u != t && mf[u] > 0 && mf[u] + SCHED_SYNC > r) r = mf[u] + SCHED_SYNC;
    return r;
}

/* A segment [a, b) on worker t, finishing at `fin`, waiting as mi row
 * `row` says beyond what t already waited for. */
static int add_segment(builder *B, int a, int b, int t, double fin, int row)
{
    const int s = (int)B->lo.len, nt = B->nt;
    if (B->lo.len == B->fin_cap) {
        size_t cap = B->fin_cap ? 2 * B->fin_cap : 256;
        double *f = realloc(B->fin, cap * sizeof *f);
        if (!f) return -1;
        B->fin = f;
        B->fin_cap = cap;
    }
    if (ivec_push(&B->lo, a) || ivec_push(&B->hi, b) || ivec_push(&B->thr, t) || ivec_push(&B->idx, B->nseg_t[t]) ||
        ivec_push(&B->wptr, (int)B->wthr.len))
        return -1;
    B->fin[s] = fin;
    B->nseg_t[t]++;
    B->clock[t] = fin;
    const int *mi = B->mi + (size_t)row * nt;
    int *waited = B->waited + (size_t)t * nt;
    for (int u = 0; u < nt; u++)
        if (u != t && mi[u] > waited[u]) {
            if (ivec_push(&B->wthr, u) || ivec_push(&B->wcnt, mi[u])) return -1;
            waited[u] = mi[u];
        }
    if (B->col_at)
        for (int k = a; k < b; k++) B->seg_of[B->col_at[k]] = s;
    else
        for (int k = a; k < b; k++) B->seg_of[k] = s;
    return 0;
}

/* One unit [u0, u1): whole on the worker that finishes it first, or split
 * (grain: chain's block boundaries) where that is sooner. */
static int place_unit(builder *B, int u0, int u1, int can_split, const int *grain, int g0, int g1)
{
    const int nt = B->nt;
    long long total = 0;
    for (int k = u0; k < u1; k++) total += row_cost(B, k);
    int parts = can_split && nt > 1 ? split_cuts(B, u0, u1, grain, g0, g1, total) : 1;
    if (parts == 1) { B->cut[0] = u0; B->cut[1] = u1; B->pcost[0] = total; }
    for (int p = 0; p < parts; p++) {
        for (int u = 0; u < nt; u++) { B->mf[(size_t)p * nt + u] = 0; B->mi[(size_t)p * nt + u] = 0; }
        scan_preds(B, B->cut[p], B->cut[p + 1], p);
    }
    /* Row `parts` of mf/mi: the whole unit (the parts' maxima). */
    double *mfw = B->mf + (size_t)parts * nt;
    int *miw = B->mi + (size_t)parts * nt;
    for (int u = 0; u < nt; u++) {
        mfw[u] = 0; miw[u] = 0;
        for (int p = 0; p < parts; p++) {
            if (B->mf[(size_t)p * nt + u] > mfw[u]) mfw[u] = B->mf[(size_t)p * nt + u];
            if (B->mi[(size_t)p * nt + u] > miw[u]) miw[u] = B->mi[(size_t)p * nt + u];
        }
    }
    int best = 0;
    double best_fin = 0;
    for (int t = 0; t < nt; t++) {
        const double f = ready_at(B, parts, t) + (double)total;
        if (t == 0 || f < best_fin) { best = t; best_fin = f; }
    }
    if (parts > 1) {
        double split_fin = 0;
        double fin[EXEC_SCHED_MAX_NT];
        for (int p = 0; p < parts; p++) {
            fin[p] = ready_at(B, p, p) + (double)B->pcost[p];
            if (fin[p] > split_fin) split_fin = fin[p];
        }
        if (split_fin < best_fin) {
            for (int p = 0; p < parts; p++)
                if (B->cut[p] < B->cut[p + 1] && add_segment(B, B->cut[p], B->cut[p + 1], p, fin[p], p)) return -1;
            return 0;
        }
    }
    return add_segment(B, u0, u1, best, best_fin, parts);
}

static int place_all(builder *B, const agg_result *s)
{
    int r = 0;
    for (int a = 0; a < s->natasks; a++) {
        const int A0 = s->atask_ptr[a], A1 = s->atask_ptr[a + 1];
        if (A0 == A1) continue;
        /* chain: a block level, blocks kept whole; a segment never spans two
         * (cpu_exec.c's pull_lines1 walks a segment's blocks as independent
         * ones; cpu_exec_check_schedule checks it) */
        if (s->block_ptr) {
            if (place_unit(B, A0, A1, 1, s->block_ptr, s->atask_block[a], s->atask_block[a + 1])) return -1;
            continue;
        }
        long long cost = 0;
        for (int k = A0; k < A1 && cost <= SCHED_WHOLE_MAX; k++) cost += row_cost(B, k);
        while (r < s->nruns && s->run_ptr[r + 1] <= A0) r++;
        if (cost <= SCHED_WHOLE_MAX) {
            if (place_unit(B, A0, A1, 0, NULL, 0, 0)) return -1;
            continue;
        }
        for (; r < s->nruns && s->run_ptr[r] < A1; r++)
            if (place_unit(B, s->run_ptr[r], s->run_ptr[r + 1], 1, NULL, 0, 0)) return -1;
    }
    return 0;
}

/* The worker whose simulated clock ends last becomes worker 0 (the labels
 * are the builder's own; workers are alike but for the caller). The caller
 * joins the others at the end of a solve: where it finished first it slept
 * there, and a wake on this VM took ~0.1 ms (circuit:1000000's L in PCG,
 * 2 workers: the caller's return came 113 us after the last worker's end,
 * per solve, of a 2.6 ms solve), while a worker that finishes first is
 * only idle until the next job. */
static void caller_last(builder *B)
{
    int last = 0;
    for (int t = 1; t < B->nt; t++)
        if (B->clock[t] > B->clock[last]) last = t;
    if (last == 0) return;
    for (size_t s = 0; s < B->thr.len; s++)
        B->thr.v[s] = B->thr.v[s] == last ? 0 : B->thr.v[s] == 0 ? last : B->thr.v[s];
    for (size_t q = 0; q < B->wthr.len; q++)
        B->wthr.v[q] = B->wthr.v[q] == last ? 0 : B->wthr.v[q] == 0 ? last : B->wthr.v[q];
}

/* Segments grouped by worker, in the order each worker runs them. */
static ata_status finish(builder *B, cpu_sched *out)
{
    const int nt = B->nt, nseg = (int)B->lo.len;
    const size_t nw = B->wthr.len;
    caller_last(B);
    out->nt = nt;
    out->nseg = nseg;
    out->nwaits = (long long)nw;
    out->seg_ptr = mem_calloc((size_t)nt + 1, sizeof *out->seg_ptr);
    out->lo = mem_alloc(((size_t)nseg + 1) * sizeof *out->lo);
    out->hi = mem_alloc(((size_t)nseg + 1) * sizeof *out->hi);
    out->wait_ptr = mem_alloc(((size_t)nseg + 1) * sizeof *out->wait_ptr);
    out->wait_thr = mem_alloc((nw + 1) * sizeof *out->wait_thr);
    out->wait_cnt = mem_alloc((nw + 1) * sizeof *out->wait_cnt);
    out->count = mem_alloc((size_t)nt * sizeof *out->count);
    out->claim = mem_alloc((size_t)nt * sizeof *out->claim);
    if (!out->seg_ptr || !out->lo || !out->hi || !out->wait_ptr || !out->wait_thr || !out->wait_cnt || !out->count ||
        !out->claim)
        return ata_fail(ATA_ERR_NOMEM, "plan: out of memory for the workers' schedule (%d segments)", nseg);
    for (int t = 0; t < nt; t++) {
        atomic_init(&out->count[t].v, 0);
        atomic_init(&out->claim[t].v, 0);
    }
    for (int s = 0; s < nseg; s++) out->seg_ptr[B->thr.v[s] + 1]++;
    for (int t = 0; t < nt; t++) out->seg_ptr[t + 1] += out->seg_ptr[t];
    /* Stable by worker: each worker's segments keep the order made (its idx). */
    int w = 0;
    out->wait_ptr[0] = 0;
    for (int t = 0; t < nt; t++)
        for (int s = 0, d = out->seg_ptr[t]; s < nseg; s++) {
            if (B->thr.v[s] != t) continue;
            out->lo[d] = B->lo.v[s];
            out->hi[d] = B->hi.v[s];
            const int w1 = s + 1 < nseg ? B->wptr.v[s + 1] : (int)nw;
            for (int q = B->wptr.v[s]; q < w1; q++, w++) {
                out->wait_thr[w] = B->wthr.v[q];
                out->wait_cnt[w] = B->wcnt.v[q];
            }
            out->wait_ptr[++d] = w;
        }
    return ATA_OK;
}

ata_status cpu_sched_build(const ata_plan *p, const cpu_sched_view *v, int nt, cpu_sched *out)
{
    memset(out, 0, sizeof *out);
    const int n = p->n;
    if (!v->posmap != !v->colmap) return ata_fail(ATA_ERR_INTERNAL, "plan: a worker schedule's view without posmap's inverse");
    builder B = { .v = v, .nt = nt, .n = n, .col_at = v->colmap,
                  .diag = p->kind == PLAN_SPTRSV && p->opt.diag == ATA_NON_UNIT };
    B.seg_of = mem_alloc(((size_t)n + 1) * sizeof *B.seg_of);
    if (B.seg_of)
        for (int j = 0; j < n; j++) B.seg_of[j] = -1;
    B.clock = mem_calloc((size_t)nt, sizeof *B.clock);
    B.nseg_t = mem_calloc((size_t)nt, sizeof *B.nseg_t);
    B.waited = mem_calloc((size_t)nt * nt, sizeof *B.waited);
    B.mf = mem_alloc(((size_t)nt + 1) * nt * sizeof *B.mf);
    B.mi = mem_alloc(((size_t)nt + 1) * nt * sizeof *B.mi);
    B.cut = mem_alloc(((size_t)nt + 1) * sizeof *B.cut);
    B.pcost = mem_alloc(((size_t)nt + 1) * sizeof *B.pcost);
    ata_status st = ATA_OK;
    if (!B.seg_of || !B.clock || !B.nseg_t || !B.waited || !B.mf || !B.mi || !B.cut || !B.pcost || place_all(&B, &p->sched))
        st = ata_fail(ATA_ERR_NOMEM, "plan: out of memory for the workers' schedule (n = %d)", n);
    if (st == ATA_OK) st = finish(&B, out);
    if (st != ATA_OK) cpu_sched_free(out);
    free(B.seg_of); free(B.clock); free(B.nseg_t); free(B.waited); free(B.mf); free(B.mi); free(B.cut); free(B.pcost);
    free(B.fin);
    free(B.lo.v); free(B.hi.v); free(B.thr.v); free(B.idx.v); free(B.wptr.v); free(B.wthr.v); free(B.wcnt.v);
    return st;
}

/* See cpu_sched.h. Positions whose segment is not found yet are -1. */
ata_status cpu_sched_check(const cpu_sched *S, const cpu_sched_view *v, int n)
{
    const int nt = S->nt;
    int *seg = mem_alloc(((size_t)n + 1) * sizeof *seg), *thr = mem_alloc(((size_t)S->nseg + 1) * sizeof *thr);
    int *idx = mem_alloc(((size_t)S->nseg + 1) * sizeof *idx), *waited = mem_calloc((size_t)nt * nt + 1, sizeof *waited);
    ata_status st = ATA_OK;
    if (!seg || !thr || !idx || !waited) { st = ata_fail(ATA_ERR_NOMEM, "schedule check: out of memory"); goto out; }
    for (int k = 0; k < n; k++) seg[k] = -1;
    for (int t = 0; t < nt && st == ATA_OK; t++)
        for (int s = S->seg_ptr[t]; s < S->seg_ptr[t + 1]; s++) {
            thr[s] = t;
            idx[s] = s - S->seg_ptr[t];
            if (s > S->seg_ptr[t] && S->lo[s] < S->hi[s - 1]) {
                st = ata_fail(ATA_ERR_INTERNAL, "schedule: worker %d runs [%d, %d) after [%d, %d)", t, S->lo[s],
                              S->hi[s], S->lo[s - 1], S->hi[s - 1]);
                break;
            }
            for (int k = S->lo[s]; k < S->hi[s]; k++) {
                if (seg[k] >= 0) {
                    st = ata_fail(ATA_ERR_INTERNAL, "schedule: position %d is in two segments", k);
                    break;
                }
                seg[k] = s;
            }
        }
    for (int k = 0; k < n && st == ATA_OK; k++)
        if (seg[k] < 0) st = ata_fail(ATA_ERR_INTERNAL, "schedule: position %d is in no segment", k);
    /* Every worker's waits, in its order: a wait names an earlier-made
     * segment (lower positions), and before a segment runs, each of its
     * predecessors is in it (earlier), in an earlier segment of its worker,
     * or in a segment another worker has been waited for. */
    for (int t = 0; t < nt && st == ATA_OK; t++)
        for (int s = S->seg_ptr[t]; s < S->seg_ptr[t + 1] && st == ATA_OK; s++) {
            int *w = waited + (size_t)t * nt;
            for (int q = S->wait_ptr[s]; q < S->wait_ptr[s + 1]; q++) {
                const int u = S->wait_thr[q], c = S->wait_cnt[q];
                if (u == t || c < 1 || c > S->seg_ptr[u + 1] - S->seg_ptr[u] || S->lo[S->seg_ptr[u] + c - 1] >= S->lo[s]) {
                    st = ata_fail(ATA_ERR_INTERNAL, "schedule: worker %d waits for %d segments of worker %d before [%d, %d)",
                                  t, c, u, S->lo[s], S->hi[s]);
                    break;
                }
                if (c > w[u]) w[u] = c;
            }
            for (int k = S->lo[s]; k < S->hi[s] && st == ATA_OK; k++) {
                const int r = v->rowmap ? v->rowmap[k] : k;
                for (int q = v->T->rowptr[r]; q < v->T->rowptr[r + 1]; q++) {
                    const int pj = v->posmap ? v->posmap[v->T->col[q]] : v->T->col[q];
                    if (pj >= k) continue;
                    const int sp = seg[pj];
                    const int ok = sp == s || (thr[sp] == t ? idx[sp] < idx[s] : w[thr[sp]] > idx[sp]);
                    if (!ok) {
                        st = ata_fail(ATA_ERR_INTERNAL, "schedule: position %d (worker %d) may run before its "
                                      "predecessor at %d (worker %d)", k, t, pj, thr[sp]);
                        break;
                    }
                }
            }
        }
out:
    free(seg); free(thr); free(idx); free(waited);
    return st;
}
