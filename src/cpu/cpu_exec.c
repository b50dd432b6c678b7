/* cpu_exec.c - executes a plan's schedule on the context's thread pool:
 * pull (CSR), push (CSC: counters and atomics only for what one worker
 * hands another, run_push_col; one worker walks the columns in natural
 * order, exec_push_natural) and ILU0 (pull).
 *
 * Two ways. Segmented plans (pull and ILU0 under every policy but the two
 * baselines, more than one worker: cpu_sched.h) give each worker a list of
 * segments and point-to-point waits on the other workers' counts: no
 * barrier, no flag per row (exec_worker_segments). The baselines (levelset,
 * syncfree), push, and plans on one worker run as follows.
 * Workers walk the adaptive tasks in order, passing a barrier where the plan
 * has one. Inside an atask, every run (the rows of one level) is split into
 * one contiguous block per worker: the same worker then tends to own a row
 * and its predecessors (neighbours in index), so x_j is read from the
 * worker's own cache. Dynamic claiming from a shared cursor scattered them
 * across cores and cost more in cache transfers than the second core gave
 * (measured: 2 threads no faster than 1 on a 3D Laplacian).
 * Tracked atasks wait on predecessors; untracked ones never wait (their
 * predecessors finished before the barrier), and neither does one worker
 * alone (it runs the SET order): they trust the plan, so a corrupted plan
 * is caught (as a timeout) only where tracking happens.
 * Every dependency wait is bounded; barriers leave on abort.
 * Deadlock freedom: each worker visits its positions in increasing SET order;
 * the smallest unfinished position overall is its worker's current one, and
 * its predecessors stand earlier, so are finished: it always proceeds. If
 * that worker sits at a barrier instead, everything before the barrier is
 * finished, so all workers reach it and it opens. */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_backend.h"
#include "cpu_exec.h"
#include "cpu_nodes.h"
#include "csr.h"
#include "error.h"
#include "ilu0_row.h"
#include "mem.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define EXEC_MAX_THREADS 256    /* ATA_MAX_THREADS (context.c) */

enum { EXEC_PULL, EXEC_PUSH, EXEC_ILU0 };

/* A worker's count of finished blocks, alone on its cache line. */
typedef struct { atomic_uint v; char pad[60]; } exec_progress;

typedef struct {
    ata_plan *p;
    int mode;
    int nt;                 /* workers running it (1: the calling thread) */
    const double *b;
    double *x;              /* ILU0: the plan's values */
    uint32_t epoch;
    cpu_barrier bar;
    cpu_wait_ctl ctl;
    cpu_event ev;           /* dependency waiters sleep here */
    atomic_int stuck_row, stuck_dep;
    atomic_int bad_row;     /* smallest row with a zero pivot (ILU0) or a
                               non-finite x_i (solves) */
    int *work;              /* ILU0: n ints per worker, all -1 */
    double **slot;          /* ILU0 on split factors by table (cpu_exec_ilu0):
                               n pointers per worker, at their spare doubles */
    double *spare;          /* ILU0_SPARE doubles per worker, a line apart */
    exec_progress prog[EXEC_MAX_THREADS];
    atomic_uint inner_prog; /* progress inside blocks and segments: every
                               64 rows of a tracked block, EXEC_SEG_STRIDE
                               rows of an untracked pull or entries of an
                               ILU0 segment */
    int nrhs, ldb, ldx;     /* pull with several columns (nrhs > 1) */
    int col0;               /* first column of this block (messages) */
    int publish;            /* pull: set done flags (some atask waits on them) */
    double help_after_s;    /* segments: spin this long before helping (cpu_pool_help_after_s) */
} exec_job;

/* Rows finished: wake dependency waiters if any sleep (see cpu_event). */
static inline void exec_publish(exec_job *J) { cpu_event_notify(&J->ev); }

/* 64 more rows finished inside a block: progress too, so a waiter whose
 * producer is still inside a long block does not time out (dep_check). */
static inline void exec_rows_done(exec_job *J)
{
    atomic_fetch_add_explicit(&J->inner_prog, 1, memory_order_relaxed);
    exec_publish(J);
}

/* Inside a segment or an untracked block: progress for the waiters'
 * deadline (seg_check, dep_check), so one that runs longer than
 * wait_timeout_s (a huge matrix, dense ILU0 rows) fails no one: every
 * EXEC_SEG_STRIDE rows of a pull, or entries of ILU0 rows. No wake:
 * seg_check runs on the waiter's own timed wakes. */
#define EXEC_SEG_STRIDE 4096
static inline void exec_seg_progress(exec_job *J) { atomic_fetch_add_explicit(&J->inner_prog, 1, memory_order_relaxed); }

/* A block finished: progress for the waiters' deadline (dep_check). */
static inline void exec_block_done(exec_job *J, int tid, unsigned blocks)
{
    atomic_store_explicit(&J->prog[tid].v, blocks, memory_order_relaxed);
    exec_publish(J);
}

typedef struct {
    exec_job *J;
    atomic_uint *f;
    uint32_t want;
    int row, dep;
    unsigned seen;          /* sum of the progress counters last seen */
    double t_prog;          /* when it last changed */
} dep_wait;

static int dep_ready(void *a)
{
    dep_wait *w = a;
    return atomic_load_explicit(w->f, memory_order_acquire) == w->want;
}

/* Every ~10 ms of waiting: leave on abort; time out after deadline_s in
 * which no worker finished a block (progress anywhere resets the clock, so
 * a slow but moving solve on a loaded machine is not failed). */
static int dep_check(void *a, double now)
{
    dep_wait *w = a;
    exec_job *J = w->J;
    if (atomic_load_explicit(&J->ctl.abort, memory_order_relaxed)) return -1;
    unsigned sum = atomic_load_explicit(&J->inner_prog, memory_order_relaxed);
    for (int t = 0; t < J->nt; t++) sum += atomic_load_explicit(&J->prog[t].v, memory_order_relaxed);
    if (w->t_prog == 0 || sum != w->seen) { w->seen = sum; w->t_prog = now; return 0; }
    if (now - w->t_prog <= J->ctl.deadline_s) return 0;
    /* Only the first to time out names the row: the others may be waiting
     * on it in turn. The pool's join orders these stores before the
     * caller reads them. */
    int expect = 0;
    if (atomic_compare_exchange_strong(&J->ctl.abort, &expect, 1)) {
        atomic_store_explicit(&J->stuck_row, w->row, memory_order_relaxed);
        atomic_store_explicit(&J->stuck_dep, w->dep, memory_order_relaxed);
    }
    return -1;
}

/* Bounded wait until *f == want (a done flag reaching the epoch, or a
 * pending counter reaching 0): spin, then sleep on J->ev (cpu_wait). 0:
 * ready; -1: abort (no progress, ours or another worker's). The acquire
 * load pairs with the producer's release store (or the release sequence of
 * decrements), so what it wrote before is seen. Our own finished rows are
 * published first: a producer may be waiting on them in turn.
 * dep < 0: the predecessor is unknown (push counts, it doesn't name). */
static int wait_u32(exec_job *J, atomic_uint *f, uint32_t want, int row, int dep)
{
    dep_wait w = { J, f, want, row, dep, 0, 0 };
    if (dep_ready(&w)) return 0;
    exec_publish(J);
    return cpu_wait(&J->ctl, &J->ev, dep_ready, dep_check, &w);
}

/* *a -= v, *a a double's bits, with a CAS loop: C11 has no atomic add on
 * double. */
static void atomic_sub_double(_Atomic uint64_t *a, double v)
{
    uint64_t old = atomic_load_explicit(a, memory_order_relaxed), nw;
    do {
        double d;
        memcpy(&d, &old, sizeof d);
        d -= v;
        memcpy(&nw, &d, sizeof nw);
    } while (!atomic_compare_exchange_weak_explicit(a, &old, nw, memory_order_relaxed,
                                                    memory_order_relaxed));
}

/* Keep the bad row a sequential run would stop at: the first in the
 * topological direction (the set of bad rows is the same in any order). */
static void note_bad_row(exec_job *J, int i)
{
    if (J->mode != EXEC_ILU0 && J->p->opt.uplo == ATA_UPPER) i = J->p->n - 1 - i;
    int cur = atomic_load_explicit(&J->bad_row, memory_order_relaxed);
    while (i < cur && !atomic_compare_exchange_weak_explicit(&J->bad_row, &cur, i, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

/* Pull over positions k0..k1-1 of one run, with m columns (see
 * cpu_exec_layout: entries, column indices and flags are by position). Each
 * row's entries are read once and applied to every column (matrix traffic
 * and dependency waits amortised over the columns); per column, the same
 * operations in the same order as the reference: bitwise its result. Where
 * b and x live (src):
 *   PULL_DIRECT: the plan's order is the identity (a matrix already in level
 *     order, as PCG's layout makes it), or one worker walks a plan by row
 *     in ascending rows (exec_natural): b is read and x written as they are;
 *     one column solves straight into the caller's x (xp == x), several
 *     write x and a row-major copy (xwork) that predecessors are read from
 *     (one line per row instead of m).
 *   PULL_INDEX: the order is almost the identity (cpu_plan.by_row, see
 *     cpu_exec_layout; PCG's upper solve): as direct, through the order,
 *     with T, done flags and x by row, not by position.
 *   PULL_DOWN: a plan by row in descending rows (order_reversed: an upper
 *     solve on L's levels backwards, or exec_natural): x's row n - 1 - k at
 *     position k, T's row toff - k (in place toff is n - 1; T in worker
 *     order, cpu_plan.tbase: each segment's rows ascending, seg_toff).
 *   PULL_STAGED: b was gathered into xp (by position, row-major, the
 *     columns of a row side by side; stage_gather) and the solve overwrites
 *     it in place with x, scattered to the caller's x after (stage_scatter):
 *     the solve streams, instead of a random read of b and a random write
 *     of x per row through the level order (measured, lap3d:100 in natural
 *     order, one column: 1.2-1.5x faster at 1 and 2 threads; gathering by
 *     position instead was slower than by index, see stage_gather).
 * Everything is hoisted into restrict locals: stores through x would
 * otherwise make the compiler reload the plan's pointers for every row (the
 * profile's top cost). m, tracked and src are compile-time constants at
 * every call: the column loops unroll and the sums stay in registers
 * (measured: a run-time m kept them on the stack and cost more than the
 * matrix traffic saved). f32 (compile-time too): entries and the diagonal
 * are read from the plan's float copy of T's values (cpu_plan.fval, a
 * factor with ATA_PRECISION_MIXED: every value is exactly a float, so the
 * sums are the same bits as from T->val, in half the bytes). -1: abort. */
#define EXEC_MAX_COLS 16
#define EXEC_GATHER_BLOCK 256
enum { PULL_DIRECT, PULL_STAGED, PULL_INDEX, PULL_DOWN };   /* DOWN: x's row n - 1 - k, T's toff - k */

/* The position-ordered x of an m-column pull (see pull_rows). */
static double *pull_xp(const exec_job *J)
{
    const cpu_plan *cp = cpu_plan_of(J->p);
    if (J->nrhs > 1) return cp->xwork;
    return cp->by_row ? J->x : cp->xp;
}

/* After a range whose running sum nf came out non-zero (NaN or Inf in
 * some x): name its non-finite rows, m columns each. Off the hot path. */
static void note_bad_range(exec_job *J, const double *xp, int k0, int k1, int toff, int src, int m)
{
    const int *order = J->p->sched.order;
    for (int k = k0; k < k1; k++)
        for (int c = 0; c < m; c++) {
            /* the row (DIRECT: the order is the identity, or exec_natural's rows) */
            const int row = src == PULL_DOWN ? J->p->n - 1 - k : src == PULL_DIRECT ? k : order[k];
            const int at = src == PULL_STAGED ? k + toff : src == PULL_INDEX || src == PULL_DOWN ? row : k;
            if (!isfinite(xp[(size_t)at * m + c])) note_bad_row(J, row);
        }
}

static inline __attribute__((always_inline)) int pull_rows(exec_job *J, int k0, int k1, int toff, const int tracked,
                                                            const int m, const int src, const int f32)
{
    const ata_plan *p = J->p;
    const int *restrict Tp = p->T->rowptr, *restrict Tj = p->T->col, *restrict order = p->sched.order;
    const double *restrict Tx = p->T->val, *restrict b = J->b;
    const float *restrict Tf = cpu_plan_of(p)->fval;
    double *xp = pull_xp(J);    /* not restrict: other workers write it */
    double *restrict x = J->x;  /* not used where it is xp (direct or index, m = 1) */
    const size_t ldb = (size_t)J->ldb, ldx = (size_t)J->ldx;
    atomic_uint *done = (atomic_uint *)p->done;
    const uint32_t epoch = J->epoch;
    const int nonunit = p->opt.diag == ATA_NON_UNIT, lower = p->opt.uplo == ATA_LOWER, inv = p->diag_inv;
    const int publish = J->publish, top = p->n - 1;
    double s[EXEC_MAX_COLS];
    double nf = 0;   /* non-finite x found once per range, not by a compare and branch per row */
    for (int k = k0; k < k1; k++) {
        /* r: x's slot and the done flag, a row or (staged) a position; tr:
         * T's row (staged in worker order: both move with toff) */
        const int tr = src == PULL_INDEX ? order[k] : src == PULL_DOWN ? toff - k : k + toff;
        const int r = src == PULL_DIRECT ? k : src == PULL_DOWN ? top - k : tr;
        int lo = Tp[tr], hi = Tp[tr + 1];
        double d = 1;
        if (nonunit) {      /* diagonal last / first */
            const int dq = lower ? --hi : lo++;
            d = f32 ? (double)Tf[dq] : Tx[dq];
        }
        if (src == PULL_STAGED) for (int c = 0; c < m; c++) s[c] = xp[(size_t)r * m + c];
        else for (int c = 0; c < m; c++) s[c] = b[r + c * ldb];
        for (int e = lo; e < hi; e++) {
            const int q = lower ? e : lo + hi - 1 - e;     /* far to near (ref_sptrsv.c) */
            const int j = Tj[q];
            if (tracked && atomic_load_explicit(&done[j], memory_order_acquire) != epoch &&
                wait_u32(J, &done[j], epoch, order[k], src == PULL_STAGED ? order[j] : j))
                return -1;
            const double t = f32 ? (double)Tf[q] : Tx[q], *xj = xp + (size_t)j * m;
            for (int c = 0; c < m; c++) s[c] -= t * xj[c];
        }
        if (nonunit)
            for (int c = 0; c < m; c++) s[c] = inv ? s[c] * d : s[c] / d;
        double *xk = xp + (size_t)r * m;
        for (int c = 0; c < m; c++) {
            xk[c] = s[c];
            if (src != PULL_STAGED && m > 1) x[r + c * ldx] = s[c];
            nf += s[c] - s[c];      /* 0 while every x is finite, NaN after a NaN or Inf */
        }
        if (publish) atomic_store_explicit(&done[r], epoch, memory_order_release);
        if (tracked && ((k - k0) & 63) == 63) exec_rows_done(J);
    }
    if (nf != 0) note_bad_range(J, xp, k0, k1, toff, src, m);     /* (NaN too) */
    return 0;
}

/* The x that entry q + step of T reads (clamped to T, without
 * overflow), fetched now (cpu_plan.x_prefetch). always_inline: as a call
 * GCC took it for a pure function and dropped it (see ilu0_prefetch). */
static inline __attribute__((always_inline)) void prefetch_x(const double *xp, const int *Tj, int q, int step,
                                                             int last)
{
    const int a = step > 0 ? (q < last - step ? q + step : last) : (q > -step ? q + step : 0);
    __builtin_prefetch(&xp[Tj[a]], 0, CPU_PREFETCH_LOCALITY);
}

/* Position k of a pull: T's row tr and x's slot r (see pull_rows). */
static inline __attribute__((always_inline)) void pull_at(const int src, const int *restrict order, int toff, int top,
                                                          int k, int *tr, int *r)
{
    *tr = src == PULL_INDEX ? order[k] : src == PULL_DOWN ? toff - k : k + toff;
    *r = src == PULL_DIRECT ? k : src == PULL_DOWN ? top - k : *tr;
}

/* One row of pull_rows1 / pull_lines1: its x, not stored; s0[r] its b
 * (staged: b is in xp already). */
static inline __attribute__((always_inline)) double pull_row(const int *restrict Tp, const int *restrict Tj,
                                                             const double *restrict Tx, const float *restrict Tf,
                                                             const double *s0, const double *xp, int tr, int r,
                                                             const int f32, const int up, const int dk, const int inv,
                                                             const int step, const int last)
{
#define PULL_TERM(q) ((f32 ? (double)Tf[q] : Tx[q]) * xp[Tj[q]])
    int lo = Tp[tr], hi = Tp[tr + 1];
    const int dq = dk == 1 ? --hi : dk == 2 ? lo++ : 0;
    double s = s0[r];
    if (step) {     /* loops of their own: no test per entry elsewhere */
        if (up) for (int q = hi - 1; q >= lo; q--) { prefetch_x(xp, Tj, q, step, last); s -= PULL_TERM(q); }
        else for (int q = lo; q < hi; q++) { prefetch_x(xp, Tj, q, step, last); s -= PULL_TERM(q); }
    } else if (up) for (int q = hi - 1; q >= lo; q--) s -= PULL_TERM(q);
    else for (int q = lo; q < hi; q++) s -= PULL_TERM(q);
#undef PULL_TERM
    if (dk) {
        const double d = f32 ? (double)Tf[dq] : Tx[dq];
        s = inv ? s * d : s / d;
    }
    return s;
}

/* pull_rows for what nearly every solve is: one column, no wait, no flag
 * to publish, with the diagonal's place (dk: 0 none, 1 last, 2 first) and
 * its use (inv) compile-time too: pull_rows keeps ~25 instructions of
 * flags and pointers per row on the stack (callgrind, circuit:1000000 in
 * level order, one worker: 45 instructions a row against a plain loop's
 * 27, and 1.4x its time). The same operations in the same order: the same
 * bits. up: an upper row, read backwards (far to near, as the reference).
 * x is fetched ahead where the plan says so (layout_prefetch). */
static inline __attribute__((always_inline)) void pull_rows1(exec_job *J, int k0, int k1, int toff, const int src,
                                                             const int f32, const int up, const int dk, const int inv)
{
    const ata_plan *p = J->p;
    const int *restrict Tp = p->T->rowptr, *restrict Tj = p->T->col, *restrict order = p->sched.order;
    const double *restrict Tx = p->T->val, *restrict b = J->b;
    const float *restrict Tf = cpu_plan_of(p)->fval;
    double *xp = pull_xp(J);    /* not restrict: other workers write it */
    double nf = 0;
    const int top = p->n - 1;   /* PULL_DOWN's x row at position 0 */
    /* ahead along the walk over T: down it for PULL_DOWN, as the order
     * mostly steps for PULL_INDEX (cpu_plan.x_prefetch), else up */
    const int pf = cpu_plan_of(p)->x_prefetch, last = p->T->nnz - 1;
    const int dir = src == PULL_DOWN ? -1 : src == PULL_INDEX ? pf : 1, step = pf ? dir * CPU_PREFETCH_AHEAD : 0;
    for (int k = k0; k < k1; k++) {
        int tr, r;
        pull_at(src, order, toff, top, k, &tr, &r);
        const double s = pull_row(Tp, Tj, Tx, Tf, src == PULL_STAGED ? xp : b, xp, tr, r, f32, up, dk, inv, step, last);
        xp[r] = s;
        nf += s - s;
    }
    if (nf != 0) note_bad_range(J, xp, k0, k1, toff, src, 1);
}

/* pull_rows1 on chain's blocks (cpu_plan.lines): [k0, k1) lies in one
 * block level, whose blocks need nothing of each other; each block's rows
 * need the row before. Walked one block after another, every row waits for
 * the row before it (its x, a divide); CPU_LINES blocks walked side by side,
 * a row of each in turn, overlap those waits. Each row's sum is the same
 * operations in the same order: the same bits. */
_Static_assert(CPU_LINES == 4, "pull_lines1 writes the four blocks out");
static inline __attribute__((always_inline)) void pull_lines1(exec_job *J, int k0, int k1, int toff, int src,
                                                              const int f32, const int up, const int dk, const int inv)
{
    const ata_plan *p = J->p;
    const int *restrict Tp = p->T->rowptr, *restrict Tj = p->T->col, *restrict order = p->sched.order;
    const double *restrict Tx = p->T->val, *restrict b = J->b;
    const float *restrict Tf = cpu_plan_of(p)->fval;
    const int *restrict bp = p->sched.block_ptr;
    double *xp = pull_xp(J);
    double nf = 0;
    const int top = p->n - 1;
    int lo = 0, hi = p->sched.nblocks;     /* the block holding k0: bp[blk] <= k0 < bp[blk + 1] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (bp[mid] <= k0) lo = mid; else hi = mid;
    }
    /* A block's rows are consecutive (chain_blocks): along it T's row and
     * x's slot each step by a constant (+1 or -1), read off its first two
     * positions; no test of src per row. */
    const double *s0 = src == PULL_STAGED ? xp : b;
    int blk = lo, k = k0;
    while (k < k1) {
        int tr[CPU_LINES], r[CPU_LINES], dt[CPU_LINES], dr[CPU_LINES], n[CPU_LINES], m = 0, len = INT_MAX;
        for (; m < CPU_LINES && k < k1; m++, blk++) {
            const int e = bp[blk + 1] < k1 ? bp[blk + 1] : k1;
            n[m] = e - k;
            pull_at(src, order, toff, top, k, &tr[m], &r[m]);
            dt[m] = dr[m] = 0;
            if (n[m] > 1) {
                int t1, r1;
                pull_at(src, order, toff, top, k + 1, &t1, &r1);
                dt[m] = t1 - tr[m];
                dr[m] = r1 - r[m];
            }
            if (n[m] < len) len = n[m];
            k = e;
        }
        if (m < CPU_LINES) len = 0;
        /* a row of each block, all four sums before any store (written out:
         * as a loop over the blocks GCC kept it a loop, 1.2x slower) */
#define LINE_SUM(u)                                                                         \
    const int r##u = r[u] + t * dr[u];                                                      \
    const double v##u = pull_row(Tp, Tj, Tx, Tf, s0, xp, tr[u] + t * dt[u], r##u, f32, up, dk, inv, 0, 0)
        for (int t = 0; t < len; t++) {
            LINE_SUM(0);
            LINE_SUM(1);
            LINE_SUM(2);
            LINE_SUM(3);
            xp[r0] = v0; xp[r1] = v1; xp[r2] = v2; xp[r3] = v3;
            nf += (v0 - v0) + (v1 - v1) + (v2 - v2) + (v3 - v3);
        }
#undef LINE_SUM
        for (int u = 0; u < m; u++)     /* the blocks' rest, one after another */
            for (int t = len; t < n[u]; t++) {
                const int ru = r[u] + t * dr[u];
                const double v = pull_row(Tp, Tj, Tx, Tf, s0, xp, tr[u] + t * dt[u], ru, f32, up, dk, inv, 0, 0);
                xp[ru] = v;
                nf += v - v;
            }
    }
    if (nf != 0) note_bad_range(J, xp, k0, k1, toff, src, 1);
}

/* pull_lines1's twelve copies (floats, direction, the diagonal's place
 * and use); where the rows are read from (src) is looked at per block
 * (all 48 combinations as constants made this file's compile 3.5-4x
 * slower under clang's sanitizers). */
#define PULL_LINES_DIAG(f32)                                                                     \
    do {                                                                                         \
        if (dk == 0 && !up) pull_lines1(J, k0, k1, toff, src, f32, 0, 0, 0);                     \
        else if (dk == 0) pull_lines1(J, k0, k1, toff, src, f32, 1, 0, 0);                       \
        else if (!up) { if (inv) pull_lines1(J, k0, k1, toff, src, f32, 0, 1, 1);                \
                        else pull_lines1(J, k0, k1, toff, src, f32, 0, 1, 0); }                  \
        else if (inv) pull_lines1(J, k0, k1, toff, src, f32, 1, 2, 1);                           \
        else pull_lines1(J, k0, k1, toff, src, f32, 1, 2, 0);                                    \
    } while (0)
static __attribute__((noinline)) void pull_lines(exec_job *J, int k0, int k1, int toff, int src, int f32)
{
    const ata_plan *p = J->p;
    const int up = p->opt.uplo == ATA_UPPER, dk = p->opt.diag == ATA_UNIT ? 0 : up ? 2 : 1, inv = p->diag_inv;
    if (f32) PULL_LINES_DIAG(1);
    else PULL_LINES_DIAG(0);
}
#undef PULL_LINES_DIAG

static inline __attribute__((always_inline)) void pull_one_diag(exec_job *J, int k0, int k1, int toff, const int src,
                                                                const int f32)
{
    const ata_plan *p = J->p;
    const int dk = p->opt.diag == ATA_UNIT ? 0 : p->opt.uplo == ATA_LOWER ? 1 : 2;
    if (cpu_plan_of(p)->lines) {
        pull_lines(J, k0, k1, toff, src, f32);
        return;
    }
    if (dk == 0 && p->opt.uplo == ATA_LOWER) pull_rows1(J, k0, k1, toff, src, f32, 0, 0, 0);
    else if (dk == 0) pull_rows1(J, k0, k1, toff, src, f32, 1, 0, 0);
    else if (dk == 1) { if (p->diag_inv) pull_rows1(J, k0, k1, toff, src, f32, 0, 1, 1); else pull_rows1(J, k0, k1, toff, src, f32, 0, 1, 0); }
    else { if (p->diag_inv) pull_rows1(J, k0, k1, toff, src, f32, 1, 2, 1); else pull_rows1(J, k0, k1, toff, src, f32, 1, 2, 0); }
}

static void pull_one_src(exec_job *J, int k0, int k1, int toff, int f32, int src)
{
    if (f32) {
        if (src == PULL_DIRECT) pull_one_diag(J, k0, k1, toff, PULL_DIRECT, 1);
        else if (src == PULL_INDEX) pull_one_diag(J, k0, k1, toff, PULL_INDEX, 1);
        else if (src == PULL_DOWN) pull_one_diag(J, k0, k1, toff, PULL_DOWN, 1);
        else pull_one_diag(J, k0, k1, toff, PULL_STAGED, 1);
    } else {
        if (src == PULL_DIRECT) pull_one_diag(J, k0, k1, toff, PULL_DIRECT, 0);
        else if (src == PULL_INDEX) pull_one_diag(J, k0, k1, toff, PULL_INDEX, 0);
        else if (src == PULL_DOWN) pull_one_diag(J, k0, k1, toff, PULL_DOWN, 0);
        else pull_one_diag(J, k0, k1, toff, PULL_STAGED, 0);
    }
}

/* Where the plan's pull meets b, x and T (pull_rows), and the toff it runs
 * with: an order n - 1 - k runs as PULL_DOWN from row n - 1, reading no
 * order (cpu_plan.order_reversed). */
static int pull_src(const ata_plan *p, int *toff)
{
    const cpu_plan *cp = cpu_plan_of(p);
    if (cp->order_identity) return PULL_DIRECT;
    if (cp->order_reversed) {
        if (!cp->tbase) *toff = p->n - 1;   /* in place; else the segment's (seg_toff) */
        return PULL_DOWN;
    }
    return cp->by_row ? PULL_INDEX : PULL_STAGED;
}

static void pull_one(exec_job *J, int k0, int k1, int toff, int f32)
{
    const int src = pull_src(J->p, &toff);
    pull_one_src(J, k0, k1, toff, f32, src);
}

static inline __attribute__((always_inline)) int pull_cols(exec_job *J, int k0, int k1, int toff, int tracked,
                                                            const int m, const int f32)
{
    const int src = pull_src(J->p, &toff);
    if (src == PULL_DIRECT)
        return tracked ? pull_rows(J, k0, k1, toff, 1, m, PULL_DIRECT, f32)
                       : pull_rows(J, k0, k1, toff, 0, m, PULL_DIRECT, f32);
    if (src == PULL_DOWN)
        return tracked ? pull_rows(J, k0, k1, toff, 1, m, PULL_DOWN, f32)
                       : pull_rows(J, k0, k1, toff, 0, m, PULL_DOWN, f32);
    if (src == PULL_INDEX)
        return tracked ? pull_rows(J, k0, k1, toff, 1, m, PULL_INDEX, f32)
                       : pull_rows(J, k0, k1, toff, 0, m, PULL_INDEX, f32);
    return tracked ? pull_rows(J, k0, k1, toff, 1, m, PULL_STAGED, f32)
                   : pull_rows(J, k0, k1, toff, 0, m, PULL_STAGED, f32);
}

static inline __attribute__((always_inline)) int pull_width(exec_job *J, int k0, int k1, int toff, int tracked,
                                                             const int f32)
{
    switch (J->nrhs) {
    case 1: return pull_cols(J, k0, k1, toff, tracked, 1, f32);
    case 2: return pull_cols(J, k0, k1, toff, tracked, 2, f32);
    case 4: return pull_cols(J, k0, k1, toff, tracked, 4, f32);
    case 8: return pull_cols(J, k0, k1, toff, tracked, 8, f32);
    default: return pull_cols(J, k0, k1, toff, tracked, 16, f32);  /* cpu_exec_sptrsv_multi's blocks only */
    }
}

/* The plan's triangle as cpu_nodes reads it (by row through the order, by
 * position, or down: a reversed order with T in worker order). */
static cpu_nodes_view nodes_view(const ata_plan *p)
{
    const cpu_plan *cp = cpu_plan_of(p);
    const int lower = p->opt.uplo == ATA_LOWER, down = cp->order_reversed && cp->tbase;
    return (cpu_nodes_view){ p->T->rowptr, p->T->col, p->T->val, lower,
                             p->opt.diag == ATA_UNIT ? 0 : lower ? 1 : 2, p->diag_inv,
                             cp->order_identity || down ? NULL : p->sched.order, down, cp->fval, p->n - 1 };
}

/* toff: row k of the stored T is k + toff (cpu_plan.tbase: a segmented
 * plan keeps T in the order its workers run it), except by row (INDEX).
 * One column with nothing to wait for or publish: through nodes where the
 * plan has them, else the lean kernel. */
static int pull_block(exec_job *J, int k0, int k1, int toff, int tracked)
{
    const cpu_plan *cp = cpu_plan_of(J->p);
    if (J->nrhs == 1 && !tracked && !J->publish && cp->node_len) {
        cpu_nodes_view v = nodes_view(J->p);
        const int src = pull_src(J->p, &toff);     /* by row: DIRECT, INDEX or DOWN */
        if (src == PULL_DOWN) {     /* the same rows, downwards, no order read */
            v.order = NULL;
            v.down = 1;
        }
        if (cpu_nodes_pull1(&v, cp->node_len, toff, k0, k1, J->b, J->x) != 0)
            note_bad_range(J, J->x, k0, k1, toff, src, 1);
        return 0;
    }
    if (J->nrhs == 1 && !tracked && !J->publish) {
        pull_one(J, k0, k1, toff, cp->fval != NULL);
        return 0;
    }
    if (cpu_plan_of(J->p)->fval) return pull_width(J, k0, k1, toff, tracked, 1);
    return pull_width(J, k0, k1, toff, tracked, 0);
}

/* An untracked pull_block in pieces, with progress between them
 * (exec_seg_progress). A node cut at a piece's end: its rows still give
 * the reference's bits. */
static int pull_marked(exec_job *J, int k0, int k1, int toff)
{
    for (int a = k0; a < k1; a += EXEC_SEG_STRIDE) {
        const int b = k1 - a > EXEC_SEG_STRIDE ? a + EXEC_SEG_STRIDE : k1;
        if (pull_block(J, a, b, toff, 0)) return -1;
        if (b < k1) exec_seg_progress(J);
    }
    return 0;
}

/* Segment s's toff (pull_rows) where T is in worker order (cpu_plan.tbase):
 * position k's row of T is k + toff; a reversed order's (PULL_DOWN) is
 * toff - k, its rows stored ascending (layout_worker_order). */
static int seg_toff(const cpu_plan *cp, int s)
{
    return cp->order_reversed ? cp->tbase[s] + cp->segs.hi[s] - 1 : cp->tbase[s] - cp->segs.lo[s];
}

/* Gather and scatter run in index order (position pos[i] of row i): B is
 * read and X written as streams. A line of the position-ordered block holds
 * neighbours in a level, which in index order come by within a few rows, so
 * it is filled (emptied) while still in cache. Walking positions instead,
 * with m columns, needs m times the cache to reuse a line of B (measured:
 * the staging cost twice the solve at m = 16). Blocks of rows keep the
 * block's lines in cache while its columns go by. */
static void stage_gather(exec_job *J, int tid, int nt)
{
    const ata_plan *p = J->p;
    const int m = J->nrhs, *pos = cpu_plan_of(p)->xpos;
    const int lo = (int)((long long)p->n * tid / nt), hi = (int)((long long)p->n * (tid + 1) / nt);
    double *bw = pull_xp(J);
    for (int i0 = lo; i0 < hi; i0 += EXEC_GATHER_BLOCK) {
        const int i1 = hi - i0 < EXEC_GATHER_BLOCK ? hi : i0 + EXEC_GATHER_BLOCK;
        for (int c = 0; c < m; c++) {
            const double *b = J->b + (size_t)c * J->ldb;
            for (int i = i0; i < i1; i++) bw[(size_t)pos[i] * m + c] = b[i];
        }
    }
}

/* One column's x[i0..i1) from the position block. Where x is too large to
 * be still in cache for whatever reads it next, with streaming stores (on
 * x86): written whole lines need not be read first, a read stream saved
 * (measured: lap3d:100 one column, 2 threads, 10-20% less per solve).
 * The caller fences. */
#define EXEC_STREAM_MIN_BYTES (4u << 20)
static void stage_store(double *restrict x, const double *restrict xw, const int *restrict pos, int i0, int i1,
                        int m, int c, int stream)
{
    int i = i0;
#ifdef __SSE2__
    if (stream) {
        if (i < i1 && ((uintptr_t)(x + i) & 15)) { x[i] = xw[(size_t)pos[i] * m + c]; i++; }
        for (; i + 1 < i1; i += 2)
            _mm_stream_pd(x + i, _mm_set_pd(xw[(size_t)pos[i + 1] * m + c], xw[(size_t)pos[i] * m + c]));
    }
#else
    (void)stream;
#endif
    for (; i < i1; i++) x[i] = xw[(size_t)pos[i] * m + c];
}

static void stage_scatter(exec_job *J, int tid, int nt)
{
    const ata_plan *p = J->p;
    const int m = J->nrhs, *pos = cpu_plan_of(p)->xpos;
    const int lo = (int)((long long)p->n * tid / nt), hi = (int)((long long)p->n * (tid + 1) / nt);
    const double *xw = pull_xp(J);
    const int stream = m == 1 && (size_t)p->n * sizeof(double) >= EXEC_STREAM_MIN_BYTES;
    for (int i0 = lo; i0 < hi; i0 += EXEC_GATHER_BLOCK) {
        const int i1 = hi - i0 < EXEC_GATHER_BLOCK ? hi : i0 + EXEC_GATHER_BLOCK;
        for (int c = 0; c < m; c++) stage_store(J->x + (size_t)c * J->ldx, xw, pos, i0, i1, m, c, stream);
    }
#ifdef __SSE2__
    if (stream) _mm_sfence();   /* streaming stores are weakly ordered: before the pool's join */
#endif
}

/* Column k of a push plan's T: its off-diagonal entries [*lo, *hi), and
 * the diagonal's position (-1: a unit diagonal, not stored). A lower
 * column's diagonal comes first, an upper one's last (columns sorted). */
static int push_col(const ata_plan *p, int k, int *lo, int *hi)
{
    *lo = p->T->rowptr[k];
    *hi = p->T->rowptr[k + 1];
    if (p->opt.diag != ATA_NON_UNIT) return -1;
    return p->opt.uplo == ATA_LOWER ? (*lo)++ : --*hi;
}

/* Cross sums a worker holds back: applied in a burst (push_flush) when
 * the buffer fills, before the worker waits for anything, and at the end
 * of each block, which is before any barrier. A locked instruction waits
 * for the stores before it to drain; among a circuit's plain scattered
 * stores each cost a miss. Measured, circuit:100000 upper, 2 threads,
 * one process, plans alternated: levelset 4.36-4.64 -> 2.98-3.19 ms, chain
 * 3.10-3.24 -> 2.36-2.46. Flushed before every wait, nothing another
 * worker waits for is held by a worker that waits: deadlock freedom as
 * before. */
#define PUSH_DEFER 128
typedef struct { int n; int slot[PUSH_DEFER]; double v[PUSH_DEFER]; } push_defer;

static void push_flush(const cpu_plan *cp, push_defer *d)
{
    for (int e = 0; e < d->n; e++) {
        atomic_sub_double(&cp->slot_xc[d->slot[e]], d->v[e]);
        atomic_fetch_sub_explicit(&cp->slot_pending[d->slot[e]], 1, memory_order_release);
    }
    d->n = 0;
}

/* Column j (position k) of a push: x_j from its partial sums, then its
 * entries subtracted from its successors'. One worker: plainly, in SET
 * order (no counter, no atomic: each predecessor ran before). Several
 * (push_owners): plainly into xp where this worker owns the successor,
 * else into its cross slot's sum with an atomic and a count down of the
 * slot's pending predecessors (held back: push_defer), which a tracked
 * column waits for (an untracked one's all finished before the
 * barrier). Other workers' sums go to a slot apart, not to xp, so that
 * the workers do not write the same lines of xp where their shares of a
 * level meet. Measured,
 * lap3d:100 upper, 2 threads, one ata-bench run: every entry through an
 * atomic and a counter (before), 25 ms a solve against the serial loop's
 * 8.7. */
static int run_push_col(exec_job *J, int k, int j, int tracked, int tid, push_defer *defer)
{
    const ata_plan *p = J->p;
    const cpu_plan *cp = cpu_plan_of(p);
    const int *Ci = p->T->col;
    const double *Cx = p->T->val;
    const float *Cf = cp->fval;     /* the same values as floats (pull_rows' f32) */
    double *xp = cp->xp;
    int lo, hi;
    const int dpos = push_col(p, k, &lo, &hi);
    double xj = xp[k];
    const int slot = J->nt > 1 ? cp->push_code[k] : -1;
    if (slot >= 0) {
        atomic_uint *pend = &cp->slot_pending[slot];
        if (tracked && atomic_load_explicit(pend, memory_order_acquire) != 0) {
            push_flush(cp, defer);
            if (wait_u32(J, pend, 0, j, -1)) return -1;
        }
        const uint64_t bits = atomic_load_explicit(&cp->slot_xc[slot], memory_order_relaxed);
        double d;
        memcpy(&d, &bits, sizeof d);
        xj += d;
    }
    if (dpos >= 0) {
        const double d = Cf ? (double)Cf[dpos] : Cx[dpos];
        xj = p->diag_inv ? xj * d : xj / d;
    }
    if (cp->xpos) xp[k] = xj;      /* staged (stage_scatter) */
    else J->x[j] = xj;
    if (!isfinite(xj)) note_bad_row(J, j);
    if (J->nt == 1) {
        for (int q = lo; q < hi; q++) xp[Ci[q]] -= (Cf ? (double)Cf[q] : Cx[q]) * xj;
        return 0;
    }
    const int *code = cp->push_code;
    for (int q = lo; q < hi; q++) {
        const int i = Ci[q], c = code[i];
        const double v = (Cf ? (double)Cf[q] : Cx[q]) * xj;
        if (c < 0 || cp->slot_owner[c] == tid) xp[i] -= v;     /* (c < 0: ~tid, as i's predecessor k is ours) */
        else {
            defer->slot[defer->n] = c;
            defer->v[defer->n++] = v;
            if (defer->n == PUSH_DEFER) push_flush(cp, defer);
        }
    }
    return 0;
}

/* ILU0 on split factors whose rows reach U rows at random (a circuit:
 * cpu_plan.ilu_prefetch): before position k, where U's row pointers lie for
 * the row EXEC_ILU_AHEAD positions on, and the U rows themselves for the
 * row half as far on (their pointers fetched by then), within [k, k1).
 * Serial ILU0 of circuit:1000000 in level order 113 -> 70 ms (ahead 8 to
 * 32 alike); lap3d:100 17.9 -> 20.2, so stencils go without. Inlined by
 * force: as a call, GCC 12 took it (prefetches only) for a pure function
 * and dropped every call. */
#define EXEC_ILU_AHEAD 16
/* far's U row pointers, near's U rows (a row < 0: none). */
static inline __attribute__((always_inline)) void ilu0_fetch_rows(const ata_plan *p, int far, int near)
{
    const int *Lp = p->T->rowptr, *Lj = p->T->col, *Up = p->Tu->rowptr;
    if (far >= 0)
        for (int q = Lp[far]; q < Lp[far + 1]; q++) __builtin_prefetch(&Up[Lj[q]], 0, CPU_PREFETCH_LOCALITY);
    if (near >= 0)
        for (int q = Lp[near]; q < Lp[near + 1]; q++) {
            const int u = Up[Lj[q]];
            __builtin_prefetch(&p->Tu->col[u], 0, CPU_PREFETCH_LOCALITY);
            __builtin_prefetch(&p->Tu->val[u], 0, CPU_PREFETCH_LOCALITY);
        }
}
static inline __attribute__((always_inline)) void ilu0_prefetch(const ata_plan *p, int k, int k1)
{
    const int *order = p->sched.order;
    ilu0_fetch_rows(p, k < k1 - EXEC_ILU_AHEAD ? order[k + EXEC_ILU_AHEAD] : -1,
                    k < k1 - EXEC_ILU_AHEAD / 2 ? order[k + EXEC_ILU_AHEAD / 2] : -1);
}

/* Row i of ILU0 on the whole A (T, diag), or on split factors (T strictly
 * lower, Tu: plan.h), once its predecessors (the lower part) are final. */
static int run_ilu0_row(exec_job *J, int i, int tracked, int *work)
{
    const ata_plan *p = J->p;
    const ata_csr *U = p->Tu;
    const int *Ap = p->T->rowptr, *Aj = p->T->col, lower_end = U ? Ap[i + 1] : p->diag[i];
    atomic_uint *done = (atomic_uint *)p->done;
    if (tracked)
        for (int q = Ap[i]; q < lower_end; q++)
            if (wait_u32(J, &done[Aj[q]], J->epoch, i, Aj[q])) return -1;
    int bad;
    if (J->slot) {      /* this worker's table: its work array's place */
        const size_t t = (size_t)(work - J->work) / (size_t)p->n;
        bad = ilu0_row_split_table(Ap, Aj, J->x, U->rowptr, U->col, U->val, J->slot + t * p->n,
                                   J->spare + t * CPU_ILU_SPARE_STRIDE, i);
    } else {
        bad = U ? ilu0_row_split(Ap, Aj, J->x, U->rowptr, U->col, U->val, work, i)
                : ilu0_row(Ap, Aj, J->x, p->diag, work, i);
    }
    if (bad) note_bad_row(J, i);
    if (J->publish) atomic_store_explicit(&done[i], J->epoch, memory_order_release);
    return 0;
}


/* ---- segments (cpu_sched.h) ------------------------------------------ */

typedef struct {
    exec_job *J;
    const cpu_count *c;
    uint64_t want;
    int row;
    unsigned seen;
    double t_prog;
} seg_wait_arg;

static int seg_ready(void *a)
{
    const seg_wait_arg *w = a;
    return atomic_load_explicit(&w->c->v, memory_order_acquire) >= w->want;
}

/* As dep_check: abort, or a timeout after deadline_s in which no worker
 * finished a segment nor moved inside one. */
static int seg_check(void *a, double now)
{
    seg_wait_arg *w = a;
    exec_job *J = w->J;
    if (atomic_load_explicit(&J->ctl.abort, memory_order_relaxed)) return -1;
    const cpu_sched *S = &cpu_plan_of(J->p)->segs;
    unsigned sum = atomic_load_explicit(&J->inner_prog, memory_order_relaxed);
    for (int t = 0; t < S->nt; t++) sum += (unsigned)atomic_load_explicit(&S->count[t].v, memory_order_relaxed);
    if (w->t_prog == 0 || sum != w->seen) { w->seen = sum; w->t_prog = now; return 0; }
    if (now - w->t_prog <= J->ctl.deadline_s) return 0;
    int expect = 0;
    if (atomic_compare_exchange_strong(&J->ctl.abort, &expect, 1))
        atomic_store_explicit(&J->stuck_row, w->row, memory_order_relaxed);
    return -1;
}

/* Until worker c has finished want's count of segments this solve. The
 * acquire pairs with the producer's release store of its count, which
 * follows its rows' stores of x (or factor values): what its finished
 * segments wrote is seen. */
static int seg_wait(exec_job *J, const cpu_count *c, uint64_t want, int row)
{
    seg_wait_arg w = { J, c, want, row, 0, 0 };
    if (seg_ready(&w)) return 0;
    return cpu_wait(&J->ctl, &J->ev, seg_ready, seg_check, &w);
}

/* Segment s's rows (pull, or ILU0 rows); -1: abort. */
static int run_segment(exec_job *J, int s, int *work)
{
    const ata_plan *p = J->p;
    const cpu_plan *cp = cpu_plan_of(p);
    const int k0 = cp->segs.lo[s], k1 = cp->segs.hi[s];
    if (J->mode == EXEC_PULL) return pull_marked(J, k0, k1, cp->tbase ? seg_toff(cp, s) : 0);
    /* progress every EXEC_SEG_STRIDE entries, not rows: a row's work grows
     * with its entries (their square, for dense rows) */
    const int *Tp = p->T->rowptr, *Up = p->Tu ? p->Tu->rowptr : NULL;
    long long entries = 0;
    for (int k = k0; k < k1; k++) {
        const int i = p->sched.order[k];
        if (cp->ilu_prefetch) ilu0_prefetch(p, k, k1);
        if (run_ilu0_row(J, i, 0, work)) return -1;
        entries += Tp[i + 1] - Tp[i] + (Up ? Up[i + 1] - Up[i] : 0);
        if (entries >= EXEC_SEG_STRIDE) {
            exec_seg_progress(J);
            entries = 0;
        }
    }
    return 0;
}

/* Worker t's i-th segment (0-based) of this solve, claimed by whoever runs
 * it: its owner, or a worker that would otherwise wait for it. Claims go in
 * order, and a segment runs only after t's previous one has finished, so
 * t's count still means "its first count segments are done". Its waits are
 * the listed ones (never on t itself); help: they may help in turn (the
 * owner's; a helper's own waits do not). -1: abort. */
static int seg_wait_help(exec_job *J, int t, int want, int row, int *work);

static int run_claimed(exec_job *J, int t, int i, int *work, int help)
{
    cpu_sched *S = &cpu_plan_of(J->p)->segs;
    const uint64_t base = (uint64_t)J->epoch << 32;
    const int s = S->seg_ptr[t] + i, row = J->p->sched.order[S->lo[s]];
    if (i > 0 && seg_wait(J, &S->count[t], base | (uint64_t)i, row)) return -1;
    for (int w = S->wait_ptr[s]; w < S->wait_ptr[s + 1]; w++) {
        const int u = S->wait_thr[w], want = S->wait_cnt[w];
        if (help ? seg_wait_help(J, u, want, row, work) : seg_wait(J, &S->count[u], base | (uint64_t)want, row))
            return -1;
    }
    if (run_segment(J, s, work)) return -1;
    atomic_store_explicit(&S->count[t].v, base | (uint64_t)(i + 1), memory_order_release);
    exec_publish(J);
    return 0;
}

/* An epoch-tagged count's value this solve (an earlier solve's reads 0). */
static int seg_of(const exec_job *J, uint64_t v) { return (uint32_t)(v >> 32) == J->epoch ? (int)(uint32_t)v : 0; }

/* Segments of worker t claimed (or finished) this solve. */
static int seg_index(const exec_job *J, const cpu_count *c, memory_order mo)
{
    return seg_of(J, atomic_load_explicit(&c->v, mo));
}

/* Claim worker t's segment i (its claim count goes i -> i + 1). */
static int seg_claim(exec_job *J, int t, int i)
{
    cpu_count *c = &cpu_plan_of(J->p)->segs.claim[t];
    uint64_t v = atomic_load_explicit(&c->v, memory_order_relaxed);
    if (seg_of(J, v) != i) return 0;
    return atomic_compare_exchange_strong_explicit(&c->v, &v, ((uint64_t)J->epoch << 32) | (uint64_t)(i + 1),
                                                   memory_order_acq_rel, memory_order_relaxed);
}

static atomic_llong segments_helped;
long long cpu_exec_segments_helped(void) { return atomic_load_explicit(&segments_helped, memory_order_relaxed); }

/* A waiter for worker t's first `want` segments: while t has none in
 * flight (claimed but unfinished) and has not yet begun the one awaited,
 * t is between segments or has lost its core (a busy neighbour took it):
 * run t's next segment here instead of sleeping until t runs again. Only
 * segments the waiter needs, made before its own: the deadlock argument of
 * cpu_sched.h still holds (their waits are on segments made earlier).
 * Returns 1 if it ran one, 0 if none could be taken, -1 on abort. */
static int seg_help(exec_job *J, int t, int want, int *work)
{
    cpu_sched *S = &cpu_plan_of(J->p)->segs;
    const int i = seg_index(J, &S->claim[t], memory_order_acquire);
    if (i >= want || i >= S->seg_ptr[t + 1] - S->seg_ptr[t]) return 0;
    if (seg_index(J, &S->count[t], memory_order_acquire) != i || !seg_claim(J, t, i)) return 0;
    atomic_fetch_add_explicit(&segments_helped, 1, memory_order_relaxed);
    return run_claimed(J, t, i, work, 0) ? -1 : 1;
}

/* Ready, or worker t's count has moved since the waiter went to sleep. */
typedef struct { seg_wait_arg w; int t, seen; } help_wait_arg;
static int ready_or_moved(void *a)
{
    help_wait_arg *h = a;
    return seg_ready(&h->w) || seg_index(h->w.J, &cpu_plan_of(h->w.J->p)->segs.count[h->t], memory_order_relaxed) != h->seen;
}
static int help_wait_check(void *a, double now) { return seg_check(&((help_wait_arg *)a)->w, now); }

/* seg_wait for worker t's count, helping t where it stalls: once t's count
 * has not moved for help_after_s, and t stands between two segments (the
 * last finished, the next not claimed; a running worker takes its next
 * within nanoseconds, so t has lost its core), the waiter runs t's next
 * one. Else (t is inside a segment) it sleeps until t's count moves, and
 * watches again. t's claim word is read only after such a pause: on free
 * cores it stays in its owner's cache, where the owner claims. */
static int seg_wait_help(exec_job *J, int t, int want, int row, int *work)
{
    const cpu_sched *S = &cpu_plan_of(J->p)->segs;
    const uint64_t full = ((uint64_t)J->epoch << 32) | (uint64_t)want;
    help_wait_arg h = { { J, &S->count[t], full, row, 0, 0 }, t, 0 };
    /* Passive: no spin (it sleeps at once, and so never helps). Else it
     * spins while t's count moves at least every help_after_s: t is running
     * and its segments are coming (and the spin ends with a look at t
     * whatever the count did before, so a stall right after a move is
     * caught). */
    const int spin = J->ctl.spin_s > 0;
    for (;;) {
        if (seg_ready(&h.w)) return 0;
        int last = seg_index(J, &S->count[t], memory_order_relaxed), stalled = 0;
        double since = clock_now();
        for (unsigned n = 1; spin; n++) {
            if (seg_ready(&h.w)) return 0;
            if (n & 63) { CPU_PAUSE(); continue; }
            const double now = clock_now();
            const int c = seg_index(J, &S->count[t], memory_order_relaxed);
            if (c != last) { last = c; since = now; }
            else if (now - since >= J->help_after_s) { stalled = 1; break; }
        }
        if (stalled) {
            const int r = seg_help(J, t, want, work);
            if (r < 0) return -1;
            if (r > 0) continue;
        }
        h.seen = last;
        if (cpu_wait(&J->ctl, &J->ev, ready_or_moved, help_wait_check, &h)) return -1;
    }
}

/* A worker's segments, in order: claim, wait as listed, run, publish the
 * count; a segment another worker claimed (helping) is skipped. One worker
 * alone runs every segment in the order they were made (each one's
 * predecessors are then behind it), with no waits. */
static void exec_worker_segments(exec_job *J, int tid, int *work)
{
    cpu_plan *cp = cpu_plan_of(J->p);
    cpu_sched *S = &cp->segs;
    if (J->nt == 1) {
        for (int q = 0; q < S->nseg; q++)
            if (run_segment(J, cp->seg_order[q], work)) return;
        return;
    }
    const int mine = S->seg_ptr[tid + 1] - S->seg_ptr[tid];
    for (int i = seg_index(J, &S->claim[tid], memory_order_relaxed); i < mine;
         i = seg_index(J, &S->claim[tid], memory_order_relaxed))
        if (seg_claim(J, tid, i) && run_claimed(J, tid, i, work, 1)) return;
}

/* The layout keeps T (and x) in SET-position order: staged pull, push on
 * several workers. Else T is in its input's order (by row, or a one-worker
 * push walking its columns in natural order). */
static int t_in_positions(const cpu_plan *cp)
{
    return !cp->order_identity && !cp->by_row && !cp->push_natural;
}

/* Worker tid's share [k0, k1) of run r (in atask a) among nt: a
 * contiguous block of the run (one level), or (chain: the run is the
 * atask) of its blocks, whole. */
static void run_share(const agg_result *s, int a, int r, int tid, int nt, int *k0, int *k1)
{
    if (s->block_ptr) {
        const long long b = s->atask_block[a], nb = s->atask_block[a + 1] - b;
        *k0 = s->block_ptr[b + nb * tid / nt];
        *k1 = s->block_ptr[b + nb * (tid + 1) / nt];
    } else {
        const long long lo = s->run_ptr[r], len = s->run_ptr[r + 1] - lo;
        *k0 = (int)(lo + len * tid / nt);
        *k1 = (int)(lo + len * (tid + 1) / nt);
    }
}

/* A worker's number, ~t, fits a slot's owner byte. */
_Static_assert(EXEC_MAX_THREADS <= UCHAR_MAX + 1, "slot_owner holds a worker's number in a byte");

static void push_slots_free(cpu_plan *cp)
{
    free(cp->slot_owner); free(cp->slot_preds); free(cp->slot_pending); free(cp->slot_xc);
    cp->slot_owner = NULL; cp->slot_preds = NULL; cp->slot_pending = NULL; cp->slot_xc = NULL;
    cp->push_nslots = 0;
}

/* Push on nt > 1 workers (run_push_col): each position's worker as
 * exec_worker shares the runs out, and a cross slot for each position
 * with a predecessor on another worker. Made by the layout, again at a
 * solve on another number of workers. */
static ata_status push_owners(ata_plan *p, int nt)
{
    cpu_plan *cp = cpu_plan_of(p);
    if (cp->push_nt == nt) return ATA_OK;
    const int n = p->n;
    const agg_result *s = &p->sched;
    p->info.plan_bytes -= cp->push_bytes;
    cp->push_bytes = 0;
    cp->push_nt = 0;
    push_slots_free(cp);
    int *code = cp->push_code ? cp->push_code : mem_alloc(((size_t)n + 1) * sizeof *code);
    int *npred = mem_calloc((size_t)n + 1, sizeof *npred);   /* predecessors on other workers */
    cp->push_code = code;
    if (!code || !npred) {
        free(npred);
        free(cp->push_code);    /* (counted only with the rest: push_bytes) */
        cp->push_code = NULL;
        return ata_fail(ATA_ERR_NOMEM, "sptrsv: out of memory for a push on %d workers (n = %d)", nt, n);
    }
    for (int a = 0, r = 0; a < s->natasks; a++)
        for (; r < s->nruns && s->run_ptr[r] < s->atask_ptr[a + 1]; r++)
            for (int t = 0; t < nt; t++) {
                int k0, k1;
                run_share(s, a, r, t, nt, &k0, &k1);
                for (int k = k0; k < k1; k++) code[k] = ~t;
            }
    const int *Ci = p->T->col;
    for (int k = 0; k < n; k++) {
        int lo, hi;
        (void)push_col(p, k, &lo, &hi);
        for (int q = lo; q < hi; q++) npred[Ci[q]] += code[Ci[q]] != code[k];
    }
    int ns = 0;
    for (int k = 0; k < n; k++) ns += npred[k] > 0;
    if (!(cp->slot_owner = mem_alloc((size_t)ns + 1)) || !(cp->slot_preds = mem_alloc(((size_t)ns + 1) * sizeof(int))) ||
        !(cp->slot_pending = mem_alloc(((size_t)ns + 1) * sizeof *cp->slot_pending)) ||
        !(cp->slot_xc = mem_alloc(((size_t)ns + 1) * sizeof *cp->slot_xc))) {
        push_slots_free(cp);
        free(npred);
        free(cp->push_code);
        cp->push_code = NULL;
        return ata_fail(ATA_ERR_NOMEM, "sptrsv: out of memory for a push on %d workers (%d positions)", nt, ns);
    }
    for (int k = 0, q = 0; k < n; k++)
        if (npred[k] > 0) {
            cp->slot_owner[q] = (unsigned char)~code[k];
            cp->slot_preds[q] = npred[k];
            code[k] = q++;
        }
    free(npred);
    cp->push_nslots = ns;
    cp->push_nt = nt;
    cp->push_bytes = sizeof(int) * (size_t)n + (1 + 2 * sizeof(int) + sizeof(uint64_t)) * (size_t)ns;
    p->info.plan_bytes += cp->push_bytes;
    return ATA_OK;
}

static void exec_worker(void *arg, int tid, int nt)
{
    exec_job *J = arg;
    ata_plan *p = J->p;
    const agg_result *s = &p->sched;
    int sense = 0;
    int *work = J->work ? J->work + (size_t)tid * p->n : NULL;

    if (J->mode == EXEC_PUSH) {
        /* Reset of the per-solve state, split by rows, then a barrier. */
        int lo = (int)((long long)p->n * tid / nt), hi = (int)((long long)p->n * (tid + 1) / nt);
        double *xp = cpu_plan_of(p)->xp;
        if (nt > 1) {   /* the cross slots: counts and sums afresh (a solve that timed out left them) */
            const cpu_plan *cp = cpu_plan_of(p);
            const int s0 = (int)((long long)cp->push_nslots * tid / nt), s1 = (int)((long long)cp->push_nslots * (tid + 1) / nt);
            for (int q = s0; q < s1; q++) {
                atomic_store_explicit(&cp->slot_pending[q], (unsigned)cp->slot_preds[q], memory_order_relaxed);
                atomic_store_explicit(&cp->slot_xc[q], 0, memory_order_relaxed);  /* +0.0 */
            }
        }
        if (cpu_plan_of(p)->xpos) stage_gather(J, tid, nt);    /* b read in order, written by position */
        else for (int k = lo; k < hi; k++) xp[k] = J->b[p->sched.order[k]];
        if (nt > 1 && cpu_barrier_wait(&J->bar, &sense, &J->ctl)) return;
    }
    /* Pull on a plan whose order is not the identity: staged (pull_rows);
     * push scatters x after (run_push_col). */
    const int staged = J->mode == EXEC_PULL && !cpu_plan_of(p)->by_row;
    const int scatter = staged || (J->mode == EXEC_PUSH && cpu_plan_of(p)->xpos);
    if (staged) {
        stage_gather(J, tid, nt);
        if (cpu_barrier_wait(&J->bar, &sense, &J->ctl)) return;
    }
    if (cpu_plan_of(p)->segmented) {
        exec_worker_segments(J, tid, work);
        if (staged && !cpu_barrier_wait(&J->bar, &sense, &J->ctl)) stage_scatter(J, tid, nt);
        return;
    }
    push_defer defer;   /* push on several workers (run_push_col) */
    defer.n = 0;
    int r = 0;  /* current run; runs never straddle atasks */
    unsigned blocks = 0;
    for (int a = 0; a < s->natasks; a++) {
        if (a > 0 && (s->flags[a] & ATASK_BARRIER) && cpu_barrier_wait(&J->bar, &sense, &J->ctl)) return;
        /* One worker runs every position in SET order: each predecessor
         * stands earlier, so nothing is waited for (and no flag read per
         * entry: measured in PETSc's ex19, a 1-thread MatSolve spent most of
         * its kernel time on them). */
        const int tracked = nt > 1 && (s->flags[a] & ATASK_TRACKED);
        for (; r < s->nruns && s->run_ptr[r] < s->atask_ptr[a + 1]; r++) {
            /* This worker's contiguous share of the run (one level), or
             * (chain: the run is the atask) of its blocks, whole. */
            int k0, k1;
            run_share(s, a, r, tid, nt, &k0, &k1);
            if (J->mode == EXEC_PULL) {
                if (tracked ? pull_block(J, k0, k1, 0, 1) : pull_marked(J, k0, k1, 0)) return;
                exec_block_done(J, tid, ++blocks);
                continue;
            }
            const int ilu_pf = J->mode != EXEC_PUSH && cpu_plan_of(p)->ilu_prefetch;
            for (int k = k0; k < k1; k++) {
                int i = s->order[k];
                if (ilu_pf) ilu0_prefetch(p, k, k1);
                int rc = J->mode == EXEC_PUSH ? run_push_col(J, k, i, tracked, tid, &defer) : run_ilu0_row(J, i, tracked, work);
                if (rc) return;
                if (((k - k0) & 63) == 63) exec_rows_done(J);
            }
            if (defer.n) push_flush(cpu_plan_of(p), &defer);
            exec_block_done(J, tid, ++blocks);
        }
    }
    if (scatter && !cpu_barrier_wait(&J->bar, &sense, &J->ctl)) stage_scatter(J, tid, nt);
}

static double median_small(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && v[k] < v[k - 1]; k--) { double t = v[k]; v[k] = v[k - 1]; v[k - 1] = t; }
    return v[n / 2];
}

int cpu_tune_keeps_one(double all_s, double one_s, int parallel_after)
{
    return one_s < (parallel_after ? CPU_TUNE_ONE_MARGIN : 1.0) * all_s;
}

int cpu_tune_clear_for_all(double all_s, double one_s)
{
    return one_s >= CPU_TUNE_CLEAR_GAIN * all_s;
}

/* One timed solve of the auto policy's tuning (all workers on even
 * solves, one on odd ones); after the last, the faster way stays
 * (cpu_tune_keeps_one; one worker wins where waits and hand-offs cost more
 * than the second core gives, as on a deep DAG whose levels share their
 * rows' predecessors across cores). Results are the same bits either way. */
static void tune_record(ata_plan *p, double s)
{
    cpu_plan *cp = cpu_plan_of(p);
    if (cp->tune_done >= 2 * CPU_TUNE_SOLVES) {
        /* Decided. A solve slower than twice the kept median, twice in a
         * row, means the machine changed (a busy neighbour came or went):
         * time both ways again. So does the count of solves since the last
         * timing reaching tune_next (64, then 4 times as many each time):
         * a disturbance that slows both ways during the timing's 12 solves
         * does not decide for good (lap3d:100,levelorder upper right after
         * another process: "2 workers 3.42 ms / 1 worker 3.23", then one
         * worker at 2.61 ms a solve where two take 1.6; 1 process in 6). */
        cp->tune_slow = s > 2 * cp->tune_kept_s ? cp->tune_slow + 1 : 0;
        const int slowed = cp->tune_slow >= 2,
                  due = ++cp->tune_since >= (cp->tune_confirm ? CPU_TUNE_CONFIRM : cp->tune_next);
        if (slowed || due) {
            cp->tune_why = slowed ? 1 : cp->tune_confirm ? 2 : 0;
            if (cp->tune_confirm) cp->tune_confirm = 2;     /* this timing confirms, or not */
            else if (!slowed) cp->tune_next *= CPU_TUNE_AGAIN_GROWTH;
            cp->tune_done = cp->tune_step = cp->tune_slow = cp->tune_since = cp->one_worker = 0;
            p->info.threads_used = cp->tune_nt;
        }
        return;
    }
    cp->tune_s[cp->tune_done % 2][cp->tune_done / 2] = s;
    ++cp->tune_done;
    const int clear = cp->tune_done == 2 && cpu_tune_clear_for_all(cp->tune_s[0][0], cp->tune_s[1][0]);
    if (!clear && cp->tune_done < 2 * CPU_TUNE_SOLVES) return;
    const int timed = cp->tune_done / 2;
    const double all = median_small(cp->tune_s[0], timed), one = median_small(cp->tune_s[1], timed);
    cp->tune_done = 2 * CPU_TUNE_SOLVES;    /* decided */
    cp->one_worker = !clear && cpu_tune_keeps_one(all, one, p->parallel_after);
    /* one worker after all workers stands once a second timing agrees
     * (CPU_TUNE_CONFIRM) */
    cp->tune_confirm = cp->one_worker && cp->tune_rounds > 0 && !cp->tune_last_one;
    cp->tune_last_one = cp->one_worker;
    cp->tune_kept_s = cp->one_worker ? one : all;
    cp->tune_rounds++;
    cp->tune_since = 0;
    if (!cp->tune_next) cp->tune_next = CPU_TUNE_AGAIN_FIRST;
    if (cp->one_worker) p->info.threads_used = 1;
    const int again = cp->one_worker && !cp->tune_confirm && cpu_exec_relayout_one(p) == ATA_OK;
    cp = cpu_plan_of(p);        /* the new layout's, where it was laid out again */
    char round[48] = "";
    if (cp->tune_rounds > 1)
        snprintf(round, sizeof round, " / timing %d: %s", cp->tune_rounds,
                 cp->tune_why == 1 ? "solves slowed" : cp->tune_why == 2 ? "confirming one worker" : "checked again");
    char solves[40];
    if (clear) snprintf(solves, sizeof solves, "1 solve each way, clear");
    else snprintf(solves, sizeof solves, "medians of %d solves", timed);
    snprintf(p->choice + cp->choice_base, sizeof p->choice - cp->choice_base, "; kept %s (timed: %s: %d workers "
             "%.3g ms / 1 worker %.3g ms%s)", cp->one_worker ? "1 worker" : "all workers", solves, cp->tune_nt,
             all * 1e3, one * 1e3, round);
    if (again) {
        const size_t len = strlen(p->choice);
        snprintf(p->choice + len, sizeof p->choice - len, "; laid out again for 1 worker%s",
                 cp->nat_rows ? " (rows in their natural order)" : cp->push_natural ? " (columns in their natural order)" : "");
    }
}

/* Push on one worker laid out for one (cpu_plan.push_natural): the
 * columns in their natural order (up for a lower triangle, down for an
 * upper one: always topological), x in place, the plain loop of
 * run_push_col. Measured, one thread, upper, in one process against the
 * level-order layout (b gathered and x scattered by position): lap3d:100
 * 9.08 against 9.90 ms, circuit:100000 0.97 / 1.17, circuit:1000000 13.5
 * / 22.7, lap2d:1000 9.30 / 8.93. */
static inline __attribute__((always_inline)) void push_natural_walk(exec_job *J, const float *restrict Cf,
                                                                     const double *restrict Cx, const int f32,
                                                                     const int up)
{
    const ata_plan *p = J->p;
    const int n = p->n, nonunit = p->opt.diag == ATA_NON_UNIT, inv = p->diag_inv;
    const int *restrict Cp = p->T->rowptr, *restrict Ci = p->T->col;
    double *restrict x = J->x;
    double nf = 0;      /* 0 while every x_j is finite (x - x is NaN for Inf or NaN) */
    memcpy(x, J->b, (size_t)n * sizeof *x);
    for (int s = 0; s < n; s++) {
        const int j = up ? n - 1 - s : s;
        int lo = Cp[j], hi = Cp[j + 1];
        double xj = x[j];
        if (nonunit) {
            const int dpos = up ? --hi : lo++;
            const double d = f32 ? (double)Cf[dpos] : Cx[dpos];
            xj = inv ? xj * d : xj / d;
            x[j] = xj;
        }
        nf += xj - xj;
        for (int q = lo; q < hi; q++) x[Ci[q]] -= (f32 ? (double)Cf[q] : Cx[q]) * xj;
    }
    if (nf != 0 || nf != nf)    /* off the hot path: the first in the walk's order */
        for (int s = 0; s < n; s++)
            if (!isfinite(x[up ? n - 1 - s : s])) { note_bad_row(J, up ? n - 1 - s : s); break; }
}

static void exec_push_natural(exec_job *J)
{
    const float *Cf = cpu_plan_of(J->p)->fval;
    const double *Cx = J->p->T->val;
    if (J->p->opt.uplo == ATA_UPPER) {
        if (Cf) push_natural_walk(J, Cf, NULL, 1, 1);
        else push_natural_walk(J, NULL, Cx, 0, 1);
    } else if (Cf) push_natural_walk(J, Cf, NULL, 1, 0);
    else push_natural_walk(J, NULL, Cx, 0, 0);
}

/* exec_natural's walk with several columns (pull_rows). */
static void natural_cols(exec_job *J, const int src, const int f32)
{
    const int n = J->p->n, toff = src == PULL_DOWN ? n - 1 : 0;
    switch (J->nrhs) {
    case 2: (void)pull_rows(J, 0, n, toff, 0, 2, src, f32); break;
    case 4: (void)pull_rows(J, 0, n, toff, 0, 4, src, f32); break;
    case 8: (void)pull_rows(J, 0, n, toff, 0, 8, src, f32); break;
    default: (void)pull_rows(J, 0, n, toff, 0, 16, src, f32); break;  /* cpu_exec_sptrsv_multi's blocks only */
    }
}

/* One worker, a plan by row whose runs allow the rows' natural order
 * (cpu_plan.nat_rows, layout_natural): the rows in that order, through
 * nodes where it has them (nat_len). */
static void exec_natural(exec_job *J)
{
    const ata_plan *p = J->p;
    const cpu_plan *cp = cpu_plan_of(p);
    const int up = p->opt.uplo == ATA_UPPER;
    if (J->nrhs > 1) {      /* several columns: pull_rows, the rows in the same order */
        if (cp->fval) { if (up) natural_cols(J, PULL_DOWN, 1); else natural_cols(J, PULL_DIRECT, 1); }
        else if (up) natural_cols(J, PULL_DOWN, 0);
        else natural_cols(J, PULL_DIRECT, 0);
        return;
    }
    if (!cp->nat_len) {
        if (up) pull_one_src(J, 0, p->n, p->n - 1, cp->fval != NULL, PULL_DOWN);
        else pull_one_src(J, 0, p->n, 0, cp->fval != NULL, PULL_DIRECT);
        return;
    }
    cpu_nodes_view v = nodes_view(p);
    v.order = NULL;
    v.down = up;
    if (cpu_nodes_pull1(&v, cp->nat_len, up ? p->n - 1 : 0, 0, p->n, J->b, J->x) != 0)
        for (int i = 0; i < p->n; i++)
            if (!isfinite(J->x[i])) note_bad_row(J, i);
}

/* One worker, ILU0: rows 0..n-1, a valid order (a row needs only rows
 * before it), with no schedule, flags or runs to walk. The U rows a
 * circuit reaches at random fetched ahead as in schedule order
 * (ilu0_prefetch, the order the identity). */
static void exec_ilu0_natural(exec_job *J)
{
    const ata_plan *p = J->p;
    const int n = p->n, *Ap = p->T->rowptr, *Aj = p->T->col;
    const ata_csr *U = p->Tu;
    int *work = J->work;
    if (!U) {
        for (int i = 0; i < n; i++)
            if (ilu0_row(Ap, Aj, J->x, p->diag, work, i)) note_bad_row(J, i);
        return;
    }
    const int *Up = U->rowptr, *Uj = U->col, pf = cpu_plan_of(p)->ilu_prefetch;
    double *Lx = J->x, *Ux = U->val;
    for (int i = 0; i < n; i++) {
        if (pf) ilu0_fetch_rows(p, i < n - EXEC_ILU_AHEAD ? i + EXEC_ILU_AHEAD : -1,
                                i < n - EXEC_ILU_AHEAD / 2 ? i + EXEC_ILU_AHEAD / 2 : -1);
        const int bad = J->slot ? ilu0_row_split_table(Ap, Aj, Lx, Up, Uj, Ux, J->slot, J->spare, i)
                                : ilu0_row_split(Ap, Aj, Lx, Up, Uj, Ux, work, i);
        if (bad) note_bad_row(J, i);
    }
}

static ata_status exec_run_cols(ata_plan *p, int mode, const double *b, double *x, int *work,
                                int nrhs, int ldb, int ldx, int col0)
{
    ata_context *ctx = p->ctx;
    exec_job J;     /* ~16 KB with its progress counters */
    J.p = p;
    J.mode = mode;
    cpu_plan *cpl = cpu_plan_of(p);
    J.nt = p->info.threads_used > 0 ? p->info.threads_used : cpu_pool_workers(ctx->pool);
    /* auto: time the one-column solves (tune_record: the first ones both
     * ways, then watch for a change of load) */
    const int tuning = p->auto_policy && nrhs == 1 &&
                       ((mode == EXEC_PULL && cpl->segmented) || (mode == EXEC_PUSH && cpl->tune_nt > 1 && !cpl->push_natural));
    /* In pairs, the first untimed: a solve right after one the other way
     * finds its rows in the other core's cache. Timed one by one, in turns,
     * circuit:100000 (x and T 4.5 MB, two cores' 2 MB L2s) gave two
     * workers 0.44-0.57 ms against one's 0.40-0.46, and kept one in half
     * the processes; run steadily, two take 0.26-0.30 ms, one 0.36. */
    const int pairs = tuning && cpl->tune_done < 2 * CPU_TUNE_SOLVES;
    if (cpl->one_worker || (pairs && (cpl->tune_step / 2) % 2)) J.nt = 1;
    if (mode == EXEC_PUSH && J.nt > 1 && !cpl->push_natural) ATA_TRY(push_owners(p, J.nt));
    J.b = b;
    J.x = x;
    J.work = work;
    J.slot = mode == EXEC_ILU0 ? cpl->ilu_slot : NULL;      /* cpu_exec_ilu0 */
    J.spare = mode == EXEC_ILU0 ? cpl->ilu_spare : NULL;
    J.nrhs = nrhs;
    J.ldb = ldb;
    J.ldx = ldx;
    J.col0 = col0;
    /* Only tracked atasks read done flags: a plan without one (levelset)
     * skips the stores, a write stream of n flags per solve. */
    const cpu_plan *cp = cpu_plan_of(p);
    J.publish = p->sched.untracked < p->sched.natasks && !cp->segmented && J.nt > 1;
    J.epoch = mode == EXEC_PUSH ? 0 : plan_next_epoch(p);
    J.help_after_s = cpu_pool_help_after_s(ctx->pool);
    if (cp->segmented && J.epoch == 1)      /* first solve, or the epoch wrapped */
        for (int t = 0; t < cp->segs.nt; t++) {
            atomic_store(&cp->segs.count[t].v, 0);
            atomic_store(&cp->segs.claim[t].v, 0);
        }
    cpu_barrier_init(&J.bar, J.nt);
    cpu_wait_ctl_init(&J.ctl, ctx->pool, ctx->wait_timeout_s);
    cpu_event_init(&J.ev);
    for (int t = 0; t < J.nt; t++) atomic_init(&J.prog[t].v, 0);
    atomic_init(&J.inner_prog, 0);
    atomic_init(&J.stuck_row, -1);
    atomic_init(&J.stuck_dep, -1);
    atomic_init(&J.bad_row, p->n);
    const double t0 = tuning ? clock_now() : 0;
    if (mode == EXEC_PUSH && cpl->push_natural) {
        J.nt = 1;       /* laid out for one */
        exec_push_natural(&J);
    } else if (J.nt == 1 && cpl->nat_rows && mode == EXEC_PULL) exec_natural(&J);
    else if (J.nt == 1 && mode == EXEC_ILU0) exec_ilu0_natural(&J);
    else if (J.nt == 1) exec_worker(&J, 0, 1);   /* too small to gain from threads */
    else cpu_pool_run_n(ctx->pool, exec_worker, &J, J.nt);
    if (tuning && !atomic_load(&J.ctl.abort) && (!pairs || cpl->tune_step++ % 2))
        tune_record(p, clock_now() - t0);
    if (atomic_load(&J.ctl.abort)) {
        /* What is known: nothing moved for wait_timeout_s. "Inconsistent"
         * would need the plan check (agg_check_order) to prove it. */
        int r = atomic_load(&J.stuck_row), d = atomic_load(&J.stuck_dep);
        if (d >= 0)
            return ata_fail(ATA_ERR_TIMEOUT, "no progress for %g s: row %d waited for row %d (wait_timeout_s; "
                            "a corrupt plan, or threads starved of CPU)", ctx->wait_timeout_s, r, d);
        return ata_fail(ATA_ERR_TIMEOUT, "no progress for %g s: row %d waited for its predecessors "
                        "(wait_timeout_s; a corrupt plan, or threads starved of CPU)", ctx->wait_timeout_s, r);
    }
    int bad = atomic_load(&J.bad_row);
    if (bad == p->n) return ATA_OK;
    if (mode != EXEC_ILU0 && p->opt.uplo == ATA_UPPER) bad = p->n - 1 - bad;
    if (mode == EXEC_ILU0)
        return ilu0_pivot_fail(bad, p->Tu ? p->Tu->val[p->Tu->rowptr[bad]] : x[p->diag[bad]]);
    if (nrhs > 1)   /* the first row with a non-finite value in any column */
        for (int c = 0; c < nrhs; c++)
            if (!isfinite(x[bad + (size_t)c * ldx]))
                return ata_fail(ATA_ERR_NONFINITE, "sptrsv: row %d, column %d: x = %g is not finite (overflow, "
                                "or NaN/Inf in b)", bad, col0 + c, x[bad + (size_t)c * ldx]);
    return ata_fail(ATA_ERR_NONFINITE, "sptrsv: row %d: x = %g is not finite (overflow, or NaN/Inf in b)",
                    bad, x[bad]);
}

/* Workers for this plan: cpu_pool_workers, unless its measured costs (n * T_u
 * serial, a barrier T_l each, waking the pool) say threads cannot gain;
 * then it runs on the calling thread. Not measured when S is fixed. */
#define EXEC_AUTO_ENTRY_S 1e-9      /* auto's unprobed guess: ~1 ns an entry or row */
#define EXEC_AUTO_LEVEL_S 0.3e-6    /* and a hand-off per adaptive task */
/* The guess keeps a plan on one worker only where twice its work could not
 * gain either: near the line the job cost, measured once a pool, tipped it
 * from process to process, and a plan laid out for one worker is never
 * timed again (circuit:100000, 0.37 ms of guessed work: one worker in
 * about 1 process of 3, 0.81-0.92 ms a solve against 0.26-0.30 on two,
 * Intel VM; 1 of 3 in the AMD VM's `make bench` too). Near it the first
 * solves' timing decides; circuit:20000 (0.074 ms) still stays on one. */
#define EXEC_AUTO_GUESS_MARGIN 2
static void exec_choose_threads(ata_plan *p)
{
    cpu_pool *pool = p->ctx->pool;
    p->info.threads_used = cpu_pool_workers(pool);
    if (p->info.threads_used > 1 && p->auto_policy && p->opt.S == 0 && !(p->info.T_u > 0)) {
        /* auto took no probes (plan.c, choose_S): a guess from the sizes
         * keeps small plans on the calling thread; the first solves'
         * timing decides the rest (tune_record). */
        const double work = ((double)p->T->nnz + (p->Tu ? p->Tu->nnz : 0) + p->n) * EXEC_AUTO_ENTRY_S;
        /* a hand-off per adaptive task at most (chain: per level of blocks) */
        p->info.threads_used =
            cpu_pool_workers_worth(pool, EXEC_AUTO_GUESS_MARGIN * work, p->sched.natasks * EXEC_AUTO_LEVEL_S);
        if (p->info.threads_used == 1) {
            const size_t len = strlen(p->choice);
            snprintf(p->choice + len, sizeof p->choice - len, "; 1 worker (about %.3g ms of work against %d adaptive "
                     "tasks' hand-offs and waking a worker: threads cannot gain)", work * 1e3, p->sched.natasks);
        }
        return;
    }
    if (p->info.threads_used == 1 || p->opt.S > 0 || !(p->info.T_u > 0)) return;
    p->info.threads_used = cpu_pool_workers_worth(pool, p->n * p->info.T_u, p->info.barriers * p->info.T_l);
    if (p->info.threads_used == 1) {
        const size_t len = strlen(p->choice);
        snprintf(p->choice + len, sizeof p->choice - len, "; 1 worker (measured costs: n T_u %.3g ms of work / "
                 "%d barriers of T_l / a job hand-off: threads cannot gain)", p->n * p->info.T_u * 1e3, p->info.barriers);
    }
}

static ata_status exec_run(ata_plan *p, int mode, const double *b, double *x, int *work)
{
    return exec_run_cols(p, mode, b, x, work, 1, p->n, p->n, 0);
}

/* A solve plan in position space: row k of the stored triangle is row
 * order[k], its column indices are positions too, and the solve keeps x in
 * position order (cpu_plan.xp): b is gathered into it before the solve and
 * x scattered from it after (pull_rows). A solve then streams the matrix
 * front to back and reads predecessors from nearby positions instead of
 * jumping across x level by level (5x on one core for a 3D Laplacian in
 * natural order). Values and their order in each row are unchanged, so pull
 * stays bitwise equal to the reference. done/indeg/pending are positional.
 * Where the order is the identity (a matrix already in level order)
 * positions are rows: T is kept as it is and pull solves into the caller's
 * x (no xp); push still accumulates in xp. ILU0 plans keep row order: rows
 * read each other by index. The plan's bytes count what is allocated here.
 * Staging costs about 48 bytes a row (b, positions and xp read or written
 * twice, x once) and two passes, beside the copy of T; solving by row
 * through the order costs a line of b, x and T at every step of the order
 * that leaves the line (a jump). Measured: a 3D Laplacian in natural order
 * (a jump every row) and a circuit matrix (one in ten) solve as fast or
 * faster staged; PCG's upper solve on its level-ordered matrix (one in a
 * thousand: the order is almost the identity) took twice as long staged.
 * So: pull by row (cpu_plan.by_row: T kept, no xp, no positions) below one jump
 * in EXEC_STAGE_JUMPS rows, staged above. */
#define EXEC_LINE_ROWS 8
#define EXEC_STAGE_JUMPS 16

/* The rows' natural order (lower ascending, upper descending) as one
 * worker's walk: fine where few rows have a predecessor within
 * EXEC_NEAR_ROWS rows in it (no chain of dependent rows to wait along), and
 * where the levels are so thin that the level order is a chain as well.
 * Else the level order pays: it breaks a grid's chain (lap2d:300, one
 * thread: 0.22 ms staged in level order against the natural loop's 0.69).
 * Measured (ata-bench sptrsv, auto on one worker against the serial loop,
 * 2026-11-27): with at most one row in 8 near, staged small matrices ran
 * 1.3-2x the natural loop's time with 15-28% of their rows near and wide
 * levels (Pd, 494_bus, 1138_bus, rajat19, adder_dcop_05) and with thin
 * levels (bcsstk13, 3 rows a level; pts5ldd03, 5); their staging's gather
 * and scatter were a third of the instructions (callgrind, rajat19). At one
 * in 2, or under 8 rows a level: Pd 0.0171 -> 0.0104 ms (the loop 0.0116),
 * rajat19 0.0029 -> 0.0014 (0.0014), 1138_bus 0.0029 -> 0.0017 (0.0018);
 * lap2d:300, lap3d:60 and cryg2500 (98% near, 25 rows a level) keep their
 * levels. */
#define EXEC_NEAR_ROWS 4        /* a predecessor this close in the natural order: a chain */
#define EXEC_NEAR_MAX_SHARE 2    /* at most one row in 2 on such a chain */
#define EXEC_THIN_LEVEL_ROWS 8   /* fewer rows a level, on average: thin levels */
static int few_near_rows(const ata_plan *p)
{
    const int n = p->n, *Tp = p->T->rowptr, *Tj = p->T->col, lower = p->opt.uplo == ATA_LOWER;
    if ((long long)n < (long long)EXEC_THIN_LEVEL_ROWS * p->nlevels) return 1;
    long long near = 0;
    for (int i = 0; i < n; i++) {
        int d = INT_MAX;    /* the nearest predecessor: lower the largest column below i, upper the smallest above */
        for (int q = Tp[i]; q < Tp[i + 1]; q++) {
            const int e = lower ? i - Tj[q] : Tj[q] - i;
            if (e > 0 && e < d) d = e;
        }
        near += d <= EXEC_NEAR_ROWS;
    }
    return near * EXEC_NEAR_MAX_SHARE <= n;
}

/* layout_segments will make segments for this plan (its workers, policy
 * and traversal). */
static int will_segment(const ata_plan *p)
{
    const ata_policy pol = p->opt.policy;
    if (p->info.threads_used < 2 || pol == ATA_POLICY_LEVELSET || pol == ATA_POLICY_SYNCFREE) return 0;
    return p->kind == PLAN_ILU0 || p->opt.traversal == ATA_PULL;
}

static ata_status layout_positions(ata_plan *p)
{
    cpu_plan *cp = cpu_plan_of(p);
    if (!cp && !(cp = calloc(1, sizeof *cp))) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory");
    p->dev = cp;
    if (p->kind != PLAN_SPTRSV) return ATA_OK;
    const ata_csr *T = p->T;
    const int n = p->n, *order = p->sched.order, pull = p->opt.traversal == ATA_PULL;
    int identity = 1, reversed = 1;
    long long jumps = 0;
    for (int k = 0; k < n; k++) {
        identity &= order[k] == k;
        reversed &= order[k] == n - 1 - k;
        jumps += k > 0 && abs(order[k] - order[k - 1]) > EXEC_LINE_ROWS;   /* either way (an upper solve's order runs down) */
    }
    cp->order_identity = identity;
    /* one worker only: in natural order where that is no chain (layout_natural) */
    cp->few_near = p->info.threads_used == 1 && pull ? few_near_rows(p) : -1;     /* -1: not asked */
    cp->by_row = pull && (identity || jumps < n / EXEC_STAGE_JUMPS || cp->few_near == 1);
    cp->order_reversed = reversed && !identity && cp->by_row;
    cp->push_natural = !pull && p->info.threads_used == 1;
    const int keep = identity || cp->by_row || cp->push_natural;    /* T as it is */
    const int need_xp = pull ? !cp->by_row : !cp->push_natural;
    double *xp = need_xp ? mem_alloc(((size_t)n + 1) * sizeof *xp) : NULL;
    if (need_xp && !xp) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    cp->xp = xp;
    p->info.plan_bytes += need_xp ? sizeof(double) * (size_t)n : 0;
    if (keep) return ATA_OK;
    /* A plan that layout_segments will store in worker order is copied once,
     * there, straight from T: only the positions are made here. */
    if (pull && will_segment(p)) {
        int *pos = mem_alloc(((size_t)n + 1) * sizeof *pos);
        if (!pos) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
        for (int k = 0; k < n; k++) pos[order[k]] = k;
        cp->xpos = pos;
        cp->t_by_row = 1;
        p->info.plan_bytes += sizeof(int) * (size_t)n;
        return ATA_OK;
    }
    ata_csr *S = NULL;
    int *pos = mem_alloc(((size_t)n + 1) * sizeof *pos);
    ata_status st = ata_csr_alloc(T->nrows, T->ncols, T->nnz, &S);
    if (st == ATA_OK && !pos) st = ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    if (st != ATA_OK) { free(pos); ata_csr_free(S); return st; }
    for (int k = 0; k < n; k++) pos[order[k]] = k;
    S->rowptr[0] = 0;
    for (int k = 0; k < n; k++) {
        int i = order[k], w = S->rowptr[k];
        for (int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++, w++) {
            S->col[w] = pos[T->col[q]];
            S->val[w] = T->val[q];
        }
        S->rowptr[k + 1] = w;
    }
    /* the staging's positions: x is scattered from them after the solve
     * (push too: x_j stays in xp, not written across x column by column) */
    cp->xpos = pos;
    p->info.plan_bytes += sizeof(int) * (size_t)n;
    if (p->T_borrowed == PLAN_T_OWNED) ata_csr_free(p->T);   /* else it stays its owner's */
    p->T = S;
    p->T_borrowed = PLAN_T_OWNED;
    return ATA_OK;
}

/* The stored row of T of each position, where T is in worker order
 * (cpu_plan.tbase); the caller frees it. */
static int *stored_rows(const cpu_plan *cp, int n)
{
    int *srow = mem_alloc(((size_t)n + 1) * sizeof *srow);
    if (!srow) return NULL;
    for (int s = 0; s < cp->segs.nseg; s++) {
        const int toff = seg_toff(cp, s);
        for (int k = cp->segs.lo[s]; k < cp->segs.hi[s]; k++) srow[k] = cp->order_reversed ? toff - k : toff + k;
    }
    return srow;
}

/* T's rows in the order the workers run them (worker 0's segments, then
 * worker 1's...): each worker streams one contiguous stretch of the matrix
 * per solve. Columns and vectors stay in position space. A reversed order
 * (PULL_DOWN, rows descending) is stored as its mirror image: the last
 * segment first, each segment's rows ascending, so that each worker walks
 * its stretch down, from its end (segments in worker order with their rows
 * ascending, each walked down, were 5-10% slower than T in place on ex19's
 * U: a stream restarted at every segment). */
static ata_status layout_worker_order(ata_plan *p, int staged)
{
    cpu_plan *cp = cpu_plan_of(p);
    const cpu_sched *S = &cp->segs;
    const ata_csr *T = p->T;
    ata_csr *W;
    int *wpos = NULL;
    cp->tbase = mem_alloc(((size_t)S->nseg + 1) * sizeof *cp->tbase);
    if (!cp->tbase) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory");
    ATA_TRY(ata_csr_alloc(T->nrows, T->ncols, T->nnz, &W));
    const int down = cp->order_reversed;
    int c = 0;
    for (int i = 0; i < S->nseg; i++) {
        const int s = down ? S->nseg - 1 - i : i;
        cp->tbase[s] = c;
        c += S->hi[s] - S->lo[s];
    }
    /* Staged: x lives in these positions too (the worker's rows and the
     * predecessors it wrote itself side by side: a stream per worker, as
     * SpMP's permuted solve keeps them), so columns and the staging's
     * positions move with the rows. */
    if (staged && !(wpos = stored_rows(cp, p->n))) {
        ata_csr_free(W);
        return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", p->n);
    }
    /* t_by_row: T's rows are still the matrix's (row order[k] at position
     * k) and its columns rows too, mapped through xpos (row -> position).
     * A reversed order: each segment's rows ascending, as in T (seg_toff). */
    const int *order = cp->t_by_row || down ? p->sched.order : NULL, *rpos = cp->t_by_row ? cp->xpos : NULL;
    int w = 0;
    c = 0;
    W->rowptr[0] = 0;
    for (int i = 0; i < S->nseg; i++) {
        const int s = down ? S->nseg - 1 - i : i;
        for (int j = 0; j < S->hi[s] - S->lo[s]; j++, c++) {
            const int k = down ? S->hi[s] - 1 - j : S->lo[s] + j;
            const int r = order ? order[k] : k, q0 = T->rowptr[r], len = T->rowptr[r + 1] - q0;
            if (rpos) for (int q = 0; q < len; q++) W->col[w + q] = wpos[rpos[T->col[q0 + q]]];
            else if (wpos) for (int q = 0; q < len; q++) W->col[w + q] = wpos[T->col[q0 + q]];
            else memcpy(W->col + w, T->col + q0, (size_t)len * sizeof *W->col);
            memcpy(W->val + w, T->val + q0, (size_t)len * sizeof *W->val);
            w += len;
            W->rowptr[c + 1] = w;
        }
    }
    if (wpos) {
        for (int i = 0; i < p->n; i++) cp->xpos[i] = wpos[cp->xpos[i]];
        free(wpos);
        cp->x_worker_order = 1;
    }
    if (p->T_borrowed == PLAN_T_OWNED) ata_csr_free(p->T);   /* else it stays its owner's */
    p->T = W;
    p->T_borrowed = PLAN_T_OWNED;
    cp->t_by_row = 0;
    return ATA_OK;
}

/* How the plan's positions meet its stored rows and columns
 * (cpu_sched_view): staged plans are in position space (T in worker order:
 * through the stored rows), by-row ones and ILU0 read rows through the
 * order. The arrays it allocates are the caller's to free. */
static ata_status plan_view(const ata_plan *p, cpu_sched_view *v, int **alloc_rows, int **alloc_pos)
{
    const cpu_plan *cp = cpu_plan_of(p);
    const int n = p->n, *order = p->sched.order;
    const int through_order = p->kind == PLAN_ILU0 || (cp->by_row && !cp->order_identity) || cp->t_by_row;
    int *pos = NULL, *srow = NULL;
    if (through_order && (pos = mem_alloc(((size_t)n + 1) * sizeof *pos)))
        for (int k = 0; k < n; k++) pos[order[k]] = k;
    if (cp->tbase) srow = stored_rows(cp, n);
    /* columns in worker positions: back to SET positions */
    if (cp->x_worker_order && srow && !pos && (pos = mem_alloc(((size_t)n + 1) * sizeof *pos)))
        for (int k = 0; k < n; k++) pos[srow[k]] = k;
    if ((through_order && !pos) || (cp->tbase && !srow) || (cp->x_worker_order && !pos)) {
        free(pos); free(srow);
        return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    }
    /* pos is the inverse of order or of srow, whichever it was made from */
    *v = (cpu_sched_view){ p->T, p->kind == PLAN_ILU0 ? p->Tu : NULL, srow ? srow : through_order ? order : NULL, pos,
                           !pos ? NULL : through_order ? order : srow };
    *alloc_rows = srow;
    *alloc_pos = pos;
    return ATA_OK;
}

/* Segments and point-to-point waits (cpu_sched.h) for pull and ILU0 plans
 * run by several workers, except under the two baselines: levelset keeps
 * its barrier per level, syncfree its wait per row. A staged plan that owns
 * its T then stores it in worker order. */
static ata_status layout_segments(ata_plan *p)
{
    cpu_plan *cp = cpu_plan_of(p);
    const int nt = p->info.threads_used;
    if (!will_segment(p)) return ATA_OK;
    cpu_sched_view v;
    int *rows, *pos;
    ATA_TRY(plan_view(p, &v, &rows, &pos));
    ata_status st = cpu_sched_build(p, &v, nt, &cp->segs);
    free(rows);
    free(pos);
    if (st != ATA_OK) return st;
    cp->segmented = 1;
    /* One worker's order: the segments by position. Each worker's own are
     * in that order already: merge the lists, taking the lowest head
     * (nseg x nt steps). */
    const cpu_sched *S = &cp->segs;
    int *head = mem_alloc(((size_t)nt + 1) * sizeof *head);
    if (!(cp->seg_order = mem_alloc(((size_t)S->nseg + 1) * sizeof *cp->seg_order)) || !head) {
        free(head);
        return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (%d segments)", S->nseg);
    }
    for (int t = 0; t < nt; t++) head[t] = S->seg_ptr[t];
    for (int q = 0; q < S->nseg; q++) {
        int best = -1;
        for (int t = 0; t < nt; t++)
            if (head[t] < S->seg_ptr[t + 1] && (best < 0 || S->lo[head[t]] < S->lo[head[best]])) best = t;
        cp->seg_order[q] = head[best]++;
    }
    free(head);
    p->info.plan_bytes += sizeof(int) * (4 * (size_t)cp->segs.nseg + 2 * (size_t)cp->segs.nwaits) + 2 * sizeof(cpu_count) * (size_t)nt;
    const size_t len = strlen(p->choice);
    snprintf(p->choice + len, sizeof p->choice - len, "; %d workers / %d segments / %lld point-to-point waits", nt,
             S->nseg, S->nwaits);
    cp->tune_nt = nt;
    cp->choice_base = strlen(p->choice);
    const int staged = !cp->order_identity && !cp->by_row;
    /* A factor's triangle read in place (borrowed) by chain is copied too:
     * its new values then come by set_values (value_rows), a copy a
     * factorisation. In place, the workers' pieces of each line alternate
     * in memory: ex19's factor's L (nodes, 2 workers, 64 MB written
     * between solves) took 0.83-0.85 ms in place, 0.67-0.70 in worker
     * order, one worker 0.77-0.85, so auto kept one. Not for the other
     * policies: PCG's level-ordered L on lap3d:100 gained 10% (2.15-2.50 ->
     * 1.95-2.20 ms/it) for 19% more memory (peak RSS 369 -> 439 MB), the
     * circuit nothing (twelfth session, RESULTS). Its U (L's levels
     * reversed: rows descending) too, mirrored (layout_worker_order): ex19's
     * U on 2 workers, L solved just before, an SpMV and 20 vector updates
     * between solves, 1.02-1.09 -> 0.83-0.95 ms; one worker in place
     * 0.96-1.07 (thirteenth session). An upper plan that owns its T, in that
     * order, is stored so as well (standalone upper chain: level). */
    const int copy_borrowed = p->T_borrowed == PLAN_T_BORROWED && p->opt.policy == ATA_POLICY_CHAIN;
    if (p->kind == PLAN_SPTRSV && (staged || cp->order_identity || cp->order_reversed) &&
        (p->T_borrowed == PLAN_T_OWNED || copy_borrowed || cp->t_by_row)) {
        cp->t_copy_bytes = copy_borrowed ? sizeof(int) * ((size_t)p->n + 1 + (size_t)p->T->nnz) +
                                           sizeof(double) * (size_t)p->T->nnz : 0;
        cp->t_source = copy_borrowed ? p->T : NULL;
        ATA_TRY(layout_worker_order(p, staged));
        p->info.plan_bytes += sizeof(int) * (size_t)cp->segs.nseg + cp->t_copy_bytes;
    }
    return ATA_OK;
}

ata_status cpu_exec_check_schedule(const ata_plan *p, int nt)
{
    const cpu_plan *cp = cpu_plan_of(p);
    if (nt == 0 && !cp->segmented) return ATA_OK;
    cpu_sched_view v;
    int *rows, *pos;
    ATA_TRY(plan_view(p, &v, &rows, &pos));
    ata_status st = ATA_OK;
    if (nt == 0) st = cpu_sched_check(&cp->segs, &v, p->n);
    else {
        cpu_sched fresh;
        st = cpu_sched_build(p, &v, nt, &fresh);
        if (st == ATA_OK) st = cpu_sched_check(&fresh, &v, p->n);
        cpu_sched_free(&fresh);
    }
    /* chain's blocks side by side (pull_lines1) take a segment's blocks
     * for independent ones: each segment inside one block level */
    const agg_result *s = &p->sched;
    for (int q = 0; nt == 0 && st == ATA_OK && s->block_ptr && q < cp->segs.nseg; q++) {
        int a = 0;
        while (s->atask_ptr[a + 1] <= cp->segs.lo[q]) a++;
        if (cp->segs.hi[q] > s->atask_ptr[a + 1])
            st = ata_fail(ATA_ERR_INTERNAL, "schedule: segment [%d, %d) crosses block level %d's end %d",
                          cp->segs.lo[q], cp->segs.hi[q], a, s->atask_ptr[a + 1]);
    }
    free(rows);
    free(pos);
    return st;
}

/* T's values as floats (cpu_plan.fval), in T's final layout: one array
 * parallel to T->val, whatever the layout made of T. */
static void fill_fval(const ata_plan *p)
{
    const ata_csr *T = p->T;
    float *restrict f = cpu_plan_of(p)->fval;
    for (int q = 0; q < T->nnz; q++) f[q] = (float)T->val[q];
}

/* A plan on values that are floats (plan_desc.values_f32) reads a float copy
 * of them, made once its layout is final. Bytes: the solve reads the
 * floats (matrix_bytes: 4 a value instead of 8); a double copy of T that the
 * plan owns stays, for new values and transposed solves, read by no solve
 * (plan_bytes); a borrowed T is the factor's, and a copy of one
 * (t_copy_bytes) is counted whole where it was made. */
static ata_status layout_f32(ata_plan *p)
{
    if (!p->values_f32 || p->kind != PLAN_SPTRSV) return ATA_OK;
    cpu_plan *cp = cpu_plan_of(p);
    const size_t nnz = (size_t)p->T->nnz;
    if (!(cp->fval = mem_alloc((nnz + 1) * sizeof *cp->fval)))
        return ata_fail(ATA_ERR_NOMEM, "plan: out of memory for %zu float values", nnz);
    fill_fval(p);
    p->info.matrix_bytes -= (sizeof(double) - sizeof(float)) * nnz;
    if (p->T_borrowed == PLAN_T_OWNED && !cp->t_copy_bytes) p->info.plan_bytes += sizeof(double) * nnz;
    const size_t len = strlen(p->choice);
    snprintf(p->choice + len, sizeof p->choice - len, "; values read as float (precision mixed)");
    return ATA_OK;
}

/* Nodes (cpu_nodes.h) where a pull solves in place (by row or in order) on
 * doubles, kept where at least one row in CPU_NODES_MIN_SHARE is a node's
 * second or later: else the plain row loop, untouched. Found on T's final
 * layout, segment by segment where T is in worker order. */
#define CPU_NODES_MIN_SHARE 4

/* A sample first: windows of up to CPU_NODES_WINDOW rows at CPU_NODES_WINDOWS
 * places spread over the layout (segments where T is in worker order).
 * Where they hold fewer node rows than half the share kept, the search of
 * every row is skipped: it was 9% of the instructions of lap3d:100's PCG
 * setup, which has no node (callgrind, 178M of 1.95G). */
#define CPU_NODES_WINDOWS 32
#define CPU_NODES_WINDOW 128
static int nodes_unlikely(const ata_plan *p, const cpu_nodes_view *v, unsigned char *len)
{
    const cpu_plan *cp = cpu_plan_of(p);
    const int n = p->n, m = cp->tbase ? cp->segs.nseg : n;
    if (n < 4 * CPU_NODES_WINDOWS * CPU_NODES_WINDOW) return 0;     /* small: search it all */
    long long inner = 0, rows = 0;
    for (int w = 0; w < CPU_NODES_WINDOWS; w++) {
        /* window w at m * w / WINDOWS: a position, or a segment and the
         * same fraction of the way into it (fewer segments than windows:
         * each one sampled at several places) */
        const long long x = (long long)m * w;
        const int i = (int)(x / CPU_NODES_WINDOWS);
        int k0 = i, k1 = n, toff = 0;
        if (cp->tbase) {
            const int lo = cp->segs.lo[i], hi = cp->segs.hi[i];
            k0 = lo + (int)((long long)(hi - lo) * (x % CPU_NODES_WINDOWS) / CPU_NODES_WINDOWS);
            k1 = hi;
            toff = seg_toff(cp, i);
        }
        if (k1 - k0 > CPU_NODES_WINDOW) k1 = k0 + CPU_NODES_WINDOW;
        inner += cpu_nodes_find(v, toff, k0, k1, len);
        rows += k1 - k0;
    }
    if (rows < CPU_NODES_WINDOWS * CPU_NODES_WINDOW / 4) return 0;  /* thin segments: too few to tell */
    return inner * CPU_NODES_MIN_SHARE * 2 < rows;
}

static ata_status layout_nodes(ata_plan *p)
{
    cpu_plan *cp = cpu_plan_of(p);
    if (p->kind != PLAN_SPTRSV || p->opt.traversal != ATA_PULL || !cp->by_row) return ATA_OK;
    const int n = p->n;
    unsigned char *len = mem_alloc((size_t)n + 1);
    if (!len) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    const cpu_nodes_view v = nodes_view(p);
    if ((v.fval && !cpu_nodes_float_ok(&v)) || nodes_unlikely(p, &v, len)) {
        free(len);
        return ATA_OK;
    }
    long long inner = 0;
    if (cp->tbase)
        for (int s = 0; s < cp->segs.nseg; s++)
            inner += cpu_nodes_find(&v, seg_toff(cp, s), cp->segs.lo[s], cp->segs.hi[s], len);
    else
        inner = cpu_nodes_find(&v, 0, 0, n, len);
    if (inner * CPU_NODES_MIN_SHARE < n) {
        free(len);
        return ATA_OK;
    }
    cp->node_len = len;
    p->info.plan_bytes += (size_t)n;
    /* the nodes of the natural walk (layout_natural): one worker walks the
     * rows in their natural order, through these (chain's blocks: whole
     * lines; ex19's factor, one worker, cache flushed, runs back to back: L
     * 1.52 ms in the blocks of four workers, 198 rows, 0.82-0.84 in lines;
     * the blocks of two, 396 rows, cost nothing) */
    if (cp->nat_rows) {
        const int upper = p->opt.uplo == ATA_UPPER;
        if (!(cp->nat_len = mem_alloc((size_t)n + 1))) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
        cpu_nodes_view nv = v;
        nv.order = NULL;
        nv.down = upper;
        cpu_nodes_find(&nv, upper ? n - 1 : 0, 0, n, cp->nat_len);
        p->info.plan_bytes += (size_t)n;
    }
    const size_t used = strlen(p->choice);
    snprintf(p->choice + used, sizeof p->choice - used, "; nodes: %lld of %d rows share a node's columns", inner, n);
    if (cp->choice_base) cp->choice_base = strlen(p->choice);     /* the timings' part comes after */
    return ATA_OK;
}

/* One worker walks a plan by row in the rows' natural order (ascending,
 * upper descending: always an order the DAG allows) where each of the
 * plan's runs (chain: blocks) is an interval of rows: the rows of a level
 * (or a block) are then the same neighbours either way, run without
 * jumps, and no order is read. Measured (up1.c, 2026-11-26, one thread,
 * lap3d:100 in L's level order, upper: the plan's own levels, each level's
 * rows ascending, levels descending): through the order 3.53-3.65 ms, the
 * same rows descending 2.88 (the same instructions and cache misses in
 * callgrind at lap3d:60: the walk's jumps, a guess). Also where few rows
 * have a predecessor within EXEC_NEAR_ROWS rows in that order (a matrix in
 * the other triangle's level order: circuit:1000000's upper, 6.1 ms
 * through its own levels, 4.6 as the serial loop). Not where a run's rows
 * are scattered and the rows chained (a grid's anti-diagonals): there the
 * natural order would be the chain the levels break. */
static void layout_natural(ata_plan *p)
{
    cpu_plan *cp = cpu_plan_of(p);
    const agg_result *s = &p->sched;
    cp->nat_rows = 0;
    if (p->kind != PLAN_SPTRSV || p->opt.traversal != ATA_PULL || !cp->by_row || cp->order_identity || cp->tbase)
        return;
    const int nr = s->block_ptr ? s->nblocks : s->nruns, *ptr = s->block_ptr ? s->block_ptr : s->run_ptr;
    int intervals = 1;
    for (int r = 0; r < nr && intervals; r++) {
        int lo = INT_MAX, hi = -1;
        for (int k = ptr[r]; k < ptr[r + 1]; k++) {
            if (s->order[k] < lo) lo = s->order[k];
            if (s->order[k] > hi) hi = s->order[k];
        }
        intervals = ptr[r + 1] == ptr[r] || hi - lo + 1 == ptr[r + 1] - ptr[r];
    }
    cp->nat_rows = intervals || (cp->few_near >= 0 ? cp->few_near : few_near_rows(p));
}

/* cpu_plan.x_prefetch: a solve plan whose rows gather x at random from a
 * large x (cpu_gathers_at_random of T as laid out) fetches the x of the
 * entry CPU_PREFETCH_AHEAD places further along its walk over T (pull_rows1
 * takes the direction from the walk that runs: down T for PULL_DOWN, an
 * upper plan's walk on one worker included; this sign for one by row
 * through its order). The gathers of a circuit wait on memory one at a
 * time; fetched ahead they overlap, as in the SpMV. Measured (PCG, 2
 * threads, 4 rounds alternated, ms/it): circuit:1000000's L 3.19-3.43 ->
 * 2.59-3.00, circuit:2000000's 7.55-8.59 -> 4.90-6.29; circuit:1000000's U
 * 3.98 -> 3.61 (medians of 5 pairs, on against off; 128 entries was best
 * for U too: 32, 512 and 1024 were no better than none). lap3d:100 (a
 * stencil, which the hardware prefetches) lost 15% with it;
 * cpu_gathers_at_random leaves it out. */
static void layout_prefetch(ata_plan *p)
{
    cpu_plan *cp = cpu_plan_of(p);
    cp->x_prefetch = 0;
    if (p->kind != PLAN_SPTRSV || p->opt.traversal != ATA_PULL || !cpu_gathers_at_random(p->T)) return;
    /* the sign serves PULL_INDEX alone (pull_src): only its order is scanned */
    const int through_order = cp->by_row && !cp->order_identity && !cp->order_reversed;
    cp->x_prefetch = through_order && cpu_order_steps_down(p->sched.order, p->n) ? -1 : 1;
}

int cpu_order_steps_down(const int *order, int n)
{
    long long down = 0, up = 0;     /* short steps only: a jump between levels says nothing */
    for (int k = 1; k < n; k++) {
        const int d = order[k] - order[k - 1];
        down += d < 0 && d >= -EXEC_LINE_ROWS;
        up += d > 0 && d <= EXEC_LINE_ROWS;
    }
    return down > up;
}

/* cpu_plan.lines: chain's blocks side by side (pull_lines1) where its rows
 * are short, CPU_LINES_MAX_ENTRIES entries off the diagonal or fewer on
 * average: there a row's time is the wait for the row before it (its x,
 * then the divide), which the blocks side by side overlap. Long rows are
 * bound by their own sums and streams, and the side-by-side walk reads
 * CPU_LINES times as many streams of x at once. Measured 2026-11-28 (one
 * process, plans alternated, 40 solves, medians, ms, chain without -> with):
 * one worker, lower: lap3d:100 8.22 -> 5.89, lap3d:60 1.76 -> 1.39,
 * convdiff:60 1.73 -> 1.39, lap3d:80x80x40 2.02 -> 1.60, lap3d:40 0.55 ->
 * 0.56; upper 8.38 -> 6.07, 1.73 -> 1.51, 1.68 -> 1.37, 2.48 -> 2.26, 0.60 ->
 * 0.43; two workers 0.96-1.38x (lap3d:100 level). The 27-point lap3d27 (13
 * entries a row), one worker: lap3d27:40 0.79 -> 1.08, lap3d27:70 3.35 ->
 * 4.93 (two workers 1.08-1.15x): left out. Nodes have their own kernel
 * (cpu_nodes.c). The one-worker natural walk (layout_natural) walks the
 * same blocks one after another: the blocks side by side replace it. */
static void layout_lines(ata_plan *p)
{
    cpu_plan *cp = cpu_plan_of(p);
    cp->lines = 0;
    if (p->kind != PLAN_SPTRSV || p->opt.traversal != ATA_PULL || !p->sched.block_ptr || cp->node_len || !p->n)
        return;
    if (!cpu_lines_rows_short(p->T, p->opt.diag != ATA_UNIT) ||
        (long long)p->sched.nblocks < 2LL * p->sched.natasks)
        return;     /* long rows; or too few blocks a level to walk side by side */
    cp->lines = 1;
    cp->nat_rows = 0;
    const size_t used = strlen(p->choice);
    snprintf(p->choice + used, sizeof p->choice - used, "; blocks of a level %d side by side (short rows)", CPU_LINES);
    if (cp->choice_base) cp->choice_base = strlen(p->choice);
}

/* The layout's steps after the choice of workers. */
static ata_status layout_rest(ata_plan *p)
{
    ATA_TRY(layout_positions(p));
    cpu_plan_of(p)->ilu_prefetch = p->kind == PLAN_ILU0 && p->Tu && cpu_gathers_at_random(p->T);
    cpu_plan_of(p)->ilu_table = -1;     /* timed (cpu_exec_ilu0) */
    ATA_TRY(layout_segments(p));
    layout_natural(p);
    ATA_TRY(layout_f32(p));
    ATA_TRY(layout_nodes(p));
    layout_prefetch(p);
    layout_lines(p);
    return ATA_OK;
}

ata_status cpu_exec_relayout_one(ata_plan *p)
{
    cpu_plan *old = cpu_plan_of(p);
    const int push = p->opt.traversal == ATA_PUSH;
    /* a copy of a borrowed triangle (layout_segments): laid out again from
     * the triangle itself; by row (its order the identity or reversed) it is
     * then read in place, whatever n (one worker on a two workers' copy
     * walks two streams: 1.4x slower than in place on ex19's L) */
    const ata_csr *source = old && !push ? old->t_source : NULL;
    const int in_place = source && old->by_row;
    if (!old || p->kind != PLAN_SPTRSV || (push ? old->push_natural : !old->segmented) ||
        (!in_place && (p->T_borrowed != PLAN_T_OWNED || (!push && p->n > EXEC_RELAYOUT_MAX_N))))
        return ATA_ERR_UNSUPPORTED;     /* laid out for one worker already, or not ours to move */
    /* On failure the old layout stays, and so does the last error: the
     * solve that got here succeeded. */
    char old_choice[sizeof p->choice], old_error[256];
    snprintf(old_error, sizeof old_error, "%s", ata_last_error());
    ata_csr *T0 = (ata_csr *)source, *Told = p->T;
    /* the input's row order (NULL: T is in it) */
    ata_status st = source ? ATA_OK : cpu_exec_triangle(p, &T0);
    cpu_plan *fresh = st == ATA_OK ? calloc(1, sizeof *fresh) : NULL;
    if (!fresh) {
        if (!source) ata_csr_free(T0);
        (void)ata_fail(ATA_OK, "%s", old_error);
        return st == ATA_OK ? ATA_ERR_NOMEM : st;
    }
    /* The choice's text from the layout on is the new layout's (the timing's
     * part follows it: tune_record). */
    memcpy(old_choice, p->choice, sizeof old_choice);
    p->choice[old->layout_base] = '\0';
    fresh->layout_base = old->layout_base;
    /* The timing's state stays: the choice is made, and kept. */
    fresh->tune_done = old->tune_done;
    fresh->tune_step = old->tune_step;
    fresh->one_worker = 1;
    memcpy(fresh->tune_s, old->tune_s, sizeof fresh->tune_s);
    fresh->tune_nt = old->tune_nt;
    fresh->tune_kept_s = old->tune_kept_s;
    fresh->tune_rounds = old->tune_rounds;
    fresh->tune_since = old->tune_since;
    fresh->tune_next = old->tune_next;
    fresh->tune_why = old->tune_why;
    fresh->tune_confirm = old->tune_confirm;
    fresh->tune_last_one = old->tune_last_one;
    fresh->bytes_base = old->bytes_base;
    fresh->matrix_bytes_base = old->matrix_bytes_base;
    const int threads = p->info.threads_used;
    const size_t bytes = p->info.plan_bytes, matrix_bytes = p->info.matrix_bytes;
    p->info.plan_bytes = old->bytes_base;   /* the new layout counts its own */
    p->info.matrix_bytes = old->matrix_bytes_base;
    p->dev = fresh;
    if (T0) p->T = T0;
    if (source) p->T_borrowed = PLAN_T_BORROWED;
    p->info.threads_used = 1;
    /* Staging (layout_positions) replaces p->T by a copy in level order and
     * frees the one it copied: T0 here (a T still in the input's order, as
     * Told is where T0 is NULL, is kept by row: the same order, no more
     * jumps, so it is never staged again). */
    st = layout_rest(p);
    if (st != ATA_OK) {
        if (p->T != Told && p->T != source) ata_csr_free(p->T);   /* T0, or its staged copy */
        cpu_exec_release(p);
        p->dev = old;
        p->T = Told;
        p->T_borrowed = PLAN_T_OWNED;
        p->info.threads_used = threads;
        p->info.plan_bytes = bytes;
        p->info.matrix_bytes = matrix_bytes;
        memcpy(p->choice, old_choice, sizeof old_choice);
        (void)ata_fail(ATA_OK, "%s", old_error);
        return st;
    }
    fresh->choice_base = strlen(p->choice);
    if (source && p->T != source) {     /* staged: a copy of the borrowed triangle again (layout_f32 counted
                                           its doubles where it reads floats) */
        fresh->t_copy_bytes = sizeof(int) * ((size_t)p->n + 1 + (size_t)p->T->nnz) + sizeof(double) * (size_t)p->T->nnz;
        p->info.plan_bytes += fresh->t_copy_bytes - (fresh->fval ? sizeof(double) * (size_t)p->T->nnz : 0);
    }
    if (T0) ata_csr_free(Told);             /* the old layout's copy */
    void *keep = p->dev;
    p->dev = old;
    cpu_exec_release(p);
    p->dev = keep;
    return ATA_OK;
}

ata_status cpu_exec_layout(ata_plan *p)
{
    if (p->indeg) {     /* push counts in its cross slots here (push_owners): neither is read */
        free(p->indeg);
        free(p->pending);
        p->indeg = p->pending = NULL;
        p->info.plan_bytes -= 2 * sizeof(int) * (size_t)p->n;
    }
    const size_t base = strlen(p->choice), bytes = p->info.plan_bytes, matrix_bytes = p->info.matrix_bytes;
    exec_choose_threads(p);
    ATA_TRY(layout_rest(p));
    cpu_plan *cp = cpu_plan_of(p);
    cp->layout_base = base;
    cp->bytes_base = bytes;
    cp->matrix_bytes_base = matrix_bytes;
    if (p->kind == PLAN_SPTRSV && p->opt.traversal == ATA_PUSH && p->info.threads_used > 1) {
        ATA_TRY(push_owners(p, p->info.threads_used));
        cp->tune_nt = p->info.threads_used;     /* auto times one worker against these (tune_record) */
        cp->choice_base = strlen(p->choice);
    }
    return ATA_OK;
}

/* Where the layout renumbered T's rows (staged, or in worker order): for
 * each stored row c of T, where its entries start in the matrix the plan
 * was analysed from (a row keeps its entries, in order, so the rows'
 * lengths give the starts). Made at the first new values and kept
 * (cpu_plan.vrow); NULL where nothing moved. Per row, not per entry: the
 * copy then reads one run of a row's values, not an index per value. */
static ata_status value_rows(ata_plan *p, const int **out)
{
    cpu_plan *cp = cpu_plan_of(p);
    const ata_csr *T = p->T;
    const int staged = p->kind == PLAN_SPTRSV && t_in_positions(cp);
    *out = NULL;
    if (!staged && !cp->tbase) return ATA_OK;      /* rows in their own order */
    if (cp->vrow) { *out = cp->vrow; return ATA_OK; }
    const int n = p->n, *order = p->sched.order, moved = staged || cp->order_reversed;    /* position k is row order[k] */
    int *start = mem_alloc(((size_t)n + 1) * sizeof *start), *srow = NULL;
    int *vrow = mem_alloc(((size_t)n + 1) * sizeof *vrow);
    if (!start || !vrow || (cp->tbase && !(srow = stored_rows(cp, n)))) {
        free(start); free(vrow);
        return ata_fail(ATA_ERR_NOMEM, "plan values: out of memory (n = %d)", n);
    }
    for (int k = 0; k < n; k++) {
        const int c = srow ? srow[k] : k;
        start[(moved ? order[k] : k) + 1] = T->rowptr[c + 1] - T->rowptr[c];
    }
    start[0] = 0;
    for (int i = 0; i < n; i++) start[i + 1] += start[i];
    for (int k = 0; k < n; k++) vrow[srow ? srow[k] : k] = start[moved ? order[k] : k];
    free(start);
    free(srow);
    p->info.plan_bytes += sizeof(int) * (size_t)n;
    *out = cp->vrow = vrow;
    return ATA_OK;
}

/* Where each entry of T takes its new value from, through map (the
 * backend op's contract: the same map every time): map composed with the
 * layout's row starts once, kept (cpu_plan.vmsrc). A split factor's plans
 * are analysed from the factor's own triangles, so their maps are the
 * identity: then *out is NULL and the row starts alone serve. */
static ata_status mapped_sources(ata_plan *p, const int *vrow, const int *map, const int **out)
{
    cpu_plan *cp = cpu_plan_of(p);
    const ata_csr *T = p->T;
    const int nnz = T->nnz;
    if (cp->vmap != map) {
        if (cp->vmsrc) p->info.plan_bytes -= sizeof(int) * (size_t)nnz;
        free(cp->vmsrc);
        cp->vmsrc = NULL;
        cp->vmap = NULL;
        int id = 1;
        for (int q = 0; q < nnz && id; q++) id = map[q] == q;
        if (!id && vrow) {
            if (!(cp->vmsrc = mem_alloc(((size_t)nnz + 1) * sizeof *cp->vmsrc)))
                return ata_fail(ATA_ERR_NOMEM, "plan values: out of memory (nnz = %d)", nnz);
            for (int c = 0; c < p->n; c++)
                for (int q = T->rowptr[c]; q < T->rowptr[c + 1]; q++) cp->vmsrc[q] = map[vrow[c] + q - T->rowptr[c]];
            p->info.plan_bytes += sizeof(int) * (size_t)nnz;
        }
        cp->vmap = map;
        cp->vmsrc_id = id;
    }
    *out = cp->vmsrc_id ? NULL : cp->vmsrc ? cp->vmsrc : map;
    return ATA_OK;
}

/* T's values from val: through idx per entry, or (vrow) a run per row, or
 * in order; T's rows shared by the workers by their entries. The source
 * rows are scattered on a staged plan, and one thread alone took 15-20 ms
 * a plan per refactorisation at lap3d:100. */
typedef struct {
    const ata_csr *T;
    const double *val;
    const int *idx, *vrow;
} values_job;

static void values_worker(void *arg, int tid, int nt)
{
    const values_job *J = arg;
    const int *Tp = J->T->rowptr;
    int r0, r1;
    csr_share_rows(Tp, J->T->nrows, tid, nt, &r0, &r1);
    double *restrict tv = J->T->val;
    const double *restrict val = J->val;
    if (J->idx) {
        for (int q = Tp[r0]; q < Tp[r1]; q++) tv[q] = val[J->idx[q]];
    } else if (J->vrow) {
        for (int c = r0; c < r1; c++) {
            const double *restrict from = val + J->vrow[c];
            double *restrict to = tv + Tp[c];
            for (int j = 0; j < Tp[c + 1] - Tp[c]; j++) to[j] = from[j];
        }
    } else {
        memcpy(tv + Tp[r0], val + Tp[r0], (size_t)(Tp[r1] - Tp[r0]) * sizeof *tv);
    }
}

/* New values: val in the order of the matrix the plan was analysed from,
 * or (map != NULL) that matrix's entry q is val[map[q]] (a factor's
 * triangle inside its storage: no gathered copy first). A plan that reads
 * its factor's triangle in place gets val == T->val after each
 * refactorisation: then only its float copy is refreshed. */
static ata_status set_values(ata_plan *p, const double *val, const int *map)
{
    ata_csr *T = p->T;
    const int *vrow, *idx = NULL;
    ATA_TRY(value_rows(p, &vrow));
    if (map) {
        ATA_TRY(mapped_sources(p, vrow, map, &idx));
        if (idx) vrow = NULL;               /* idx says it all */
    }
    if (idx || vrow || val != T->val) {
        values_job J = { T, val, idx, vrow };
        cpu_pool_run_sized(p->ctx->pool, values_worker, &J, (size_t)T->nnz);
    }
    if (cpu_plan_of(p)->fval) fill_fval(p);
    return ATA_OK;
}

ata_status cpu_exec_set_values(ata_plan *p, const double *val) { return set_values(p, val, NULL); }

ata_status cpu_exec_set_values_mapped(ata_plan *p, const double *val, const int *map)
{
    return set_values(p, val, map);
}

/* Columns in blocks of 16, 8, 4, 2 or 1 (largest first), each block one
 * pass over the plan (pull); push solves column by column. */
ata_status cpu_exec_sptrsv_multi(ata_plan *p, int nrhs, const double *B, int ldb, double *X, int ldx)
{
    for (int c0 = 0, m; c0 < nrhs; c0 += m) {
        for (m = EXEC_MAX_COLS; m > nrhs - c0; m /= 2) {}
        const double *b = B + (size_t)c0 * ldb;
        double *x = X + (size_t)c0 * ldx;
        if (p->opt.traversal == ATA_PUSH || m == 1) {
            for (int c = 0; c < m; c++) {
                ata_status st = cpu_exec_sptrsv(p, b + (size_t)c * ldb, x + (size_t)c * ldx);
                if (st == ATA_ERR_NONFINITE && nrhs > 1) {   /* name the column too */
                    char msg[512];
                    snprintf(msg, sizeof msg, "%s", ata_last_error());
                    return ata_fail(st, "%s (column %d)", msg, c0 + c);
                }
                if (st != ATA_OK) return st;
            }
            continue;
        }
        const size_t need = (size_t)p->n * m + 1;     /* b, then x, by position (pull_rows) */
        cpu_plan *cp = cpu_plan_of(p);
        if (cp->xwork_len < need) {
            double *w = realloc(cp->xwork, need * sizeof *w);
            if (!w) return ata_fail(ATA_ERR_NOMEM, "sptrsv: out of memory for %d columns of %d rows", m, p->n);
            cp->xwork = w;
            cp->xwork_len = need;
        }
        ATA_TRY(exec_run_cols(p, EXEC_PULL, b, x, NULL, m, ldb, ldx, c0));
    }
    return ATA_OK;
}

/* The plan's triangle in its input's row order, where the layout renumbered
 * it (row k of T is row order[k], its columns positions): rows back to
 * their places, columns back to rows, entries in their stored order. */
ata_status cpu_exec_triangle(const ata_plan *p, ata_csr **out)
{
    *out = NULL;
    const cpu_plan *cp = cpu_plan_of(p);
    if (p->kind != PLAN_SPTRSV || !cp) return ATA_OK;
    const int staged = t_in_positions(cp);
    if (!staged && !cp->tbase) return ATA_OK;     /* p->T is it */
    const ata_csr *S = p->T;
    const int n = p->n, *order = p->sched.order, moved = staged || cp->order_reversed;    /* position k is row order[k] */
    int *srow = NULL;
    if (cp->tbase && !(srow = stored_rows(cp, n))) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    ata_csr *T;
    ata_status st = ata_csr_alloc(n, n, S->nnz, &T);
    if (st != ATA_OK) { free(srow); return st; }
    T->rowptr[0] = 0;
    for (int k = 0; k < n; k++) {
        const int c = srow ? srow[k] : k;
        T->rowptr[(moved ? order[k] : k) + 1] = S->rowptr[c + 1] - S->rowptr[c];
    }
    for (int i = 0; i < n; i++) T->rowptr[i + 1] += T->rowptr[i];
    int *setpos = NULL;     /* worker position -> SET position (x_worker_order) */
    if (cp->x_worker_order) {
        if (!(setpos = mem_alloc(((size_t)n + 1) * sizeof *setpos))) {
            free(srow); ata_csr_free(T);
            return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
        }
        for (int k = 0; k < n; k++) setpos[srow[k]] = k;
    }
    for (int k = 0; k < n; k++) {
        const int c = srow ? srow[k] : k;
        for (int q = S->rowptr[c], w = T->rowptr[moved ? order[k] : k]; q < S->rowptr[c + 1]; q++, w++) {
            T->col[w] = staged ? order[setpos ? setpos[S->col[q]] : S->col[q]] : S->col[q];
            T->val[w] = S->val[q];
        }
    }
    free(setpos);
    free(srow);
    *out = T;
    return ATA_OK;
}

static void ilu_table_drop(ata_plan *p, cpu_plan *cp);

void cpu_exec_release(ata_plan *p)
{
    cpu_plan *cp = cpu_plan_of(p);
    if (!cp) return;
    ilu_table_drop(p, cp);
    free(cp->xwork);
    free(cp->xpos);
    free(cp->xp);
    free(cp->push_code);
    push_slots_free(cp);
    cpu_sched_free(&cp->segs);
    free(cp->tbase);
    free(cp->seg_order);
    free(cp->node_len);
    free(cp->nat_len);
    free(cp->fval);
    free(cp->vrow);
    free(cp->vmsrc);
    free(cp);
    p->dev = NULL;
}

ata_status cpu_exec_sptrsv(ata_plan *p, const double *b, double *x)
{
    return exec_run(p, p->opt.traversal == ATA_PUSH ? EXEC_PUSH : EXEC_PULL, b, x, NULL);
}

/* The table of ilu0_row_split_table for nt workers: each worker's
 * slots at its spare doubles. */
static ata_status ilu_table_make(ata_plan *p, cpu_plan *cp, int nt)
{
    if (cp->ilu_slot && cp->ilu_slot_nt >= nt) return ATA_OK;
    ilu_table_drop(p, cp);
    cp->ilu_slot = mem_alloc((size_t)nt * p->n * sizeof *cp->ilu_slot + 1);
    cp->ilu_spare = mem_calloc((size_t)nt * CPU_ILU_SPARE_STRIDE, sizeof *cp->ilu_spare);
    cp->ilu_slot_nt = nt;
    if (!cp->ilu_slot || !cp->ilu_spare) {
        free(cp->ilu_slot);
        free(cp->ilu_spare);
        cp->ilu_slot = NULL;
        cp->ilu_spare = NULL;
        return ATA_ERR_NOMEM;
    }
    for (int t = 0; t < nt; t++)
        for (int j = 0; j < p->n; j++)
            cp->ilu_slot[(size_t)t * p->n + j] = cp->ilu_spare + (size_t)t * CPU_ILU_SPARE_STRIDE + (j & (ILU0_SPARE - 1));
    p->info.plan_bytes += (size_t)nt * p->n * sizeof *cp->ilu_slot;
    return ATA_OK;
}

static void ilu_table_drop(ata_plan *p, cpu_plan *cp)
{
    if (cp->ilu_slot) p->info.plan_bytes -= (size_t)cp->ilu_slot_nt * p->n * sizeof *cp->ilu_slot;
    free(cp->ilu_slot);
    free(cp->ilu_spare);
    cp->ilu_slot = NULL;
    cp->ilu_spare = NULL;
}

int cpu_ilu_keeps_table(double test_s, double table_s) { return table_s < CPU_ILU_TABLE_MARGIN * test_s; }

ata_status cpu_exec_ilu0(ata_plan *p)
{
    int nt = p->info.threads_used > 0 ? p->info.threads_used : cpu_pool_size(p->ctx->pool);
    cpu_plan *cp = cpu_plan_of(p);
    /* split factors: by test or by table (cpu_plan.ilu_table); the table
     * kept between factorisations, every slot back at its spare */
    int table = p->Tu && (cp->ilu_table == 1 || (cp->ilu_table < 0 && cp->ilu_trials % 2));
    if (table && ilu_table_make(p, cp, nt) != ATA_OK) {
        /* no memory for the table: by test from now on (it needs half) */
        cp->ilu_table = 0;
        table = 0;
    }
    int *work = mem_alloc((size_t)nt * p->n * sizeof *work + 1);
    if (!work) return ata_fail(ATA_ERR_NOMEM, "ilu0: out of memory for %d workers x %d rows", nt, p->n);
    memset(work, 0xff, (size_t)nt * p->n * sizeof *work);   /* all -1 */
    double **slot = cp->ilu_slot;
    if (!table) cp->ilu_slot = NULL;    /* exec_run_cols reads it */
    const double t0 = clock_now();
    ata_status st = exec_run(p, EXEC_ILU0, NULL, p->T->val, work);
    const double s = clock_now() - t0;
    cp->ilu_slot = slot;
    free(work);
    if (p->Tu && cp->ilu_table < 0 && (st == ATA_OK || st == ATA_ERR_ZERO_PIVOT || st == ATA_ERR_NONFINITE)) {
        if (cp->ilu_trials < 2 || s < cp->ilu_best_s[table]) cp->ilu_best_s[table] = s;
        if (++cp->ilu_trials == CPU_ILU_TRIALS) {
            cp->ilu_table = cpu_ilu_keeps_table(cp->ilu_best_s[0], cp->ilu_best_s[1]);
            if (!cp->ilu_table) ilu_table_drop(p, cp);
        }
    }
    return st;
}
