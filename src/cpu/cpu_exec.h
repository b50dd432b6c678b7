/* cpu_exec.h - the CPU executors of a plan (see cpu_exec.c). */
#ifndef ATA_CPU_EXEC_H
#define ATA_CPU_EXEC_H
#include <stdatomic.h>
#include <stdint.h>
#include "ilu0_row.h"
#include "plan.h"
#include "cpu_pool.h"
#include "cpu_sched.h"

/* The CPU backend's part of a plan (ata_plan.dev), made by cpu_exec_layout:
 * how a pull solve meets b and x (see cpu_exec.c, pull_rows) and its
 * buffers. Nothing of it is the GPU module's business, so it stays out of
 * struct ata_plan. */
typedef struct cpu_plan {
    double *xp;             /* position-ordered x: staged pull, push; NULL else */
    double *xwork;          /* position-ordered x of multi-column solves */
    size_t xwork_len;       /* (doubles), grown on demand */
    int *xpos;              /* pull, staged: position of each row */
    int order_identity;     /* order[k] == k for every k (no xpos, no copy of T) */
    int by_row;             /* pull: T, x and done flags by row, solved through
                               the order (the order is the identity or almost) */
    int order_reversed;     /* pull by row, order[k] == n - 1 - k (PCG's upper
                               solve through L's levels backwards): row n - 1 - k
                               at position k, no order read (PULL_DOWN) */
    int segmented;          /* runs by segments and point-to-point waits
                               (segs, cpu_sched.h), not barriers and row flags */
    cpu_sched segs;
    int *tbase;             /* segmented, T in worker order: segment s's first row of T */
    size_t t_copy_bytes;    /* a copy of a borrowed triangle (layout_segments, a
                               chain plan's), counted in plan_bytes */
    const ata_csr *t_source; /* the borrowed triangle so copied: laid out again for
                               one worker, the plan reads it in place again
                               (cpu_exec_relayout_one) */
    int x_worker_order;     /* staged with T in worker order: x's positions, T's
                               columns and xpos are worker positions too */
    int t_by_row;           /* layout only: a staged plan's T still by row
                               (copied once, straight into worker order) */
    unsigned char *node_len; /* pull by row or in order, one column: nodes from
                               each position (cpu_nodes.h); NULL: none found */
    int nat_rows;           /* one worker runs the rows in their natural order
                               (layout_natural, exec_natural) */
    int few_near;           /* few_near_rows at layout_positions (-1: not asked) */
    /* ILU0 on split factors: the row kernel by test or by table
     * (ilu0_row_split_table). The first CPU_ILU_TRIALS factorisations
     * alternate them, timed; then the faster stays, the table only by
     * CPU_ILU_TABLE_MARGIN (it holds a pointer per row and worker). */
    double **ilu_slot;      /* the table: n pointers per worker (or NULL) */
    double *ilu_spare;      /* where its misses go, per worker */
    int ilu_slot_nt;        /* the workers it was made for */
    int ilu_trials;         /* factorisations timed so far */
    int ilu_table;          /* -1 undecided, 0 by test, 1 by table */
    double ilu_best_s[2];   /* fastest by test, by table */
    int ilu_prefetch;       /* ILU0 on split factors: fetch the U rows of the
                               rows ahead (cpu_gathers_at_random of L) */
    int x_prefetch;         /* pull, one column: fetch the x of the entry
                               CPU_PREFETCH_AHEAD further along the walk over T
                               (layout_prefetch); 0 none, else the direction a
                               walk by row through the order takes (1 up T, -1
                               down: cpu_order_steps_down) */
    int lines;              /* pull, one column, chain's blocks: a worker runs
                               CPU_LINES blocks of a block level row by row side
                               by side (pull_lines1) */
    unsigned char *nat_len; /* nodes as node_len, in that natural order (rows
                               ascending; upper descending); NULL: none */
    /* Push on several workers (push_owners): a position all of whose
     * predecessors run on its own worker gets its partial sums in xp,
     * plainly; one with a predecessor on another worker is a cross slot:
     * its own worker's sums go to xp, the others' to the slot's xc,
     * atomically, each counted down in the slot's pending count. */
    int push_natural;       /* push on one worker: T and x in the input's order,
                               columns walked in it (exec_push_natural) */
    int push_nt;            /* the workers push_code was made for; 0: none */
    int *push_code;         /* n: ~worker, or the position's cross slot */
    int push_nslots;
    unsigned char *slot_owner;  /* per slot: the position's worker */
    int *slot_preds;        /* per slot: its predecessors on other workers */
    atomic_uint *slot_pending;  /* per slot, per solve: those not finished */
    _Atomic uint64_t *slot_xc;  /* per slot, per solve: their sum, a double's bits */
    size_t push_bytes;      /* what the above take (plan_bytes) */
    int *seg_order;         /* segmented: segments in the order they were made
                               (by position), as one worker runs them */
    /* Policy auto: the first 2 * CPU_TUNE_SOLVES timed one-column solves
     * alternate all workers and one, each after an untimed solve the same
     * way; then the faster (cpu_tune_keeps_one). */
    int tune_done;          /* solves timed so far */
    int tune_step;          /* solves of the timing so far, timed or not */
    int one_worker;         /* decided: the calling thread alone */
    double tune_s[2][8];    /* [0] all workers, [1] one */
    int tune_nt;            /* the plan's workers (threads_used at layout) */
    double tune_kept_s;     /* the kept way's median */
    int tune_slow;          /* solves in a row slower than twice that */
    int tune_rounds;        /* timings so far (a load that comes and goes re-times) */
    int tune_since;         /* solves since the last timing ended */
    int tune_next;          /* ... at which it is timed again (CPU_TUNE_AGAIN_FIRST, then x4) */
    int tune_why;           /* the last timing's cause: 1 solves slowed, 0 due,
                               2 confirming one worker */
    int tune_last_one;      /* the last timing kept one worker */
    int tune_confirm;       /* 1: one worker kept by a timing after one that
                               kept all workers, timed again after
                               CPU_TUNE_CONFIRM solves; 2: that timing runs */
    size_t choice_base;     /* ata_plan_choice's length before the timings' part */
    size_t layout_base;     /* its length before the layout's part, and the plan's */
    size_t bytes_base;      /* bytes before the layout's (cpu_exec_relayout_one) */
    size_t matrix_bytes_base;
    /* ata_plan.values_f32 (a factor's plans, ATA_PRECISION_MIXED): T's
     * values as floats, fval[q] = T->val[q] in T's final layout (the
     * factor's own triangle where the plan borrows it, else the plan's
     * copy, staged or in worker order); pull and push read these instead
     * of T->val. Refreshed by cpu_exec_set_values. NULL: doubles. */
    float *fval;
    int *vrow;              /* new values: where each stored row of T starts in
                               the source matrix, where the layout renumbered
                               rows (set_values) */
    const int *vmap;        /* the map that vmsrc was made for (set_values) */
    int *vmsrc;             /* vmap composed with vrow, per entry; NULL where
                               vmap is the identity (a split factor's own
                               triangle) */
    int vmsrc_id;           /* vmap is the identity */
} cpu_plan;
#define CPU_TUNE_SOLVES (ATA_AUTO_TUNE_SOLVES / 4)     /* timed, each way */
#define CPU_TUNE_AGAIN_FIRST 64
#define CPU_TUNE_AGAIN_GROWTH 4
/* One worker kept by a timing where the one before it kept all workers is
 * timed again this many solves later before it stands (and before a small
 * plan is laid out again for one worker): a disturbance that slowed the
 * timing's all-workers solves alone (a neighbour on the other core for a
 * few milliseconds) would otherwise keep one worker until the next timing,
 * 4x further each time, or for good where the plan is laid out again. Seen
 * on lap3d:100,levelorder's upper solve: the timing at 64 solves kept one
 * worker, 2.44 ms a solve where two take 1.5, in 2 of 3 processes of a run
 * beside SpMP. The first timing is not confirmed: a plan where one worker
 * wins (circuit:100000's L in PCG: 0.22 against 0.36 ms) would pay a
 * second timing's all-workers solves within the first solve's iterations. */
#define CPU_TUNE_CONFIRM 16
#define CPU_ILU_TRIALS ATA_FACTOR_TRIALS
#define CPU_ILU_TABLE_MARGIN 0.9
#define CPU_ILU_SPARE_STRIDE (ILU0_SPARE + 8)  /* a worker's spare doubles, a line clear of the next's */
/* auto keeps the faster way, except where kernels on all workers follow
 * each solve (ata_plan.parallel_after: ata_pcg's factors): there one worker
 * must beat all workers' median by more than 10%, because one worker leaves
 * the others asleep for the next kernel (a cost its own timing does not
 * see) and a near tie flips with the noise. Measured, PCG on
 * circuit:1000000, 2 threads: the tuning's medians 3.06-3.46 ms with 2
 * workers, 3.53-4.17 with one, in 6 runs; one worker forced 13.2 ms/it,
 * all 12.1 (medians of 4 alternated runs). Elsewhere (a standalone solve, a
 * PETSc preconditioner) the workers sleep between solves anyway and the
 * all-workers timing pays their wake itself: ex19's factor, cold, one
 * worker 1.06 ms against 1.13, kept all workers under the margin. */
#define CPU_TUNE_ONE_MARGIN 0.9
int cpu_tune_keeps_one(double all_s, double one_s, int parallel_after);
/* A timing ends after its first timed solve each way where one worker took
 * CPU_TUNE_CLEAR_GAIN times all workers' time or more: all workers stay
 * (as the timing's full medians would keep them; the rechecks still come).
 * Each one-worker solve of the timing costs a large plan that much more:
 * PCG on circuit:2000000, 2 threads, Intel VM: its L and U solves take 8.7
 * and 9.6 ms on two workers, 15.2 and 18.1 on one, so the full timing's six
 * one-worker solves a plan cost ~90 ms of a 1.8 s solve. Deciding for one
 * worker early is left out: a disturbed all-workers solve would keep the
 * slower way until the next recheck. */
#define CPU_TUNE_CLEAR_GAIN 1.5
int cpu_tune_clear_for_all(double all_s, double one_s);
/* ILU0's trials (cpu_plan.ilu_table): the table stays if it was the faster
 * by CPU_ILU_TABLE_MARGIN (fastest factorisation each way). */
int cpu_ilu_keeps_table(double test_s, double table_s);
/* Whether an order mostly steps down (short steps, of at most
 * EXEC_LINE_ROWS rows, counted either way): where a walk by row through it
 * goes in T (layout_prefetch). */
int cpu_order_steps_down(const int *order, int n);

static inline cpu_plan *cpu_plan_of(const ata_plan *p) { return (cpu_plan *)p->dev; }

/* plan_upload / plan_release of the CPU backend: a solve plan laid out in
 * SET-position space. */
ata_status cpu_exec_layout(ata_plan *p);
void cpu_exec_release(ata_plan *p);
/* New values, in the order of the matrix the plan was analysed from. */
ata_status cpu_exec_set_values(ata_plan *p, const double *val);
/* The same, entry q of that matrix being val[map[q]] (backend op
 * plan_values_mapped). */
ata_status cpu_exec_set_values_mapped(ata_plan *p, const double *val, const int *map);
/* backend op plan_triangle: the triangle in its input's row order, a copy,
 * where the layout renumbered it (else *T = NULL). */
ata_status cpu_exec_triangle(const ata_plan *p, ata_csr **T);
ata_status cpu_exec_sptrsv(ata_plan *p, const double *b, double *x);
ata_status cpu_exec_ilu0(ata_plan *p);
/* nrhs column-major columns (leading dimensions ldb, ldx), host arrays. */
ata_status cpu_exec_sptrsv_multi(ata_plan *p, int nrhs, const double *B, int ldb, double *X, int ldx);
/* Segments run by a worker other than their owner (a waiter helping one
 * that lost its core), in this process so far: for tests. */
long long cpu_exec_segments_helped(void);
/* A small plan (n at most EXEC_RELAYOUT_MAX_N: solves of tens of
 * microseconds, where waking a second worker costs more than it saves)
 * that auto's timing keeps on one worker, laid out for several (segments;
 * staged, or in worker order), is laid out again for one (tune_record),
 * as a one-thread context would: its rows in their natural order where
 * that is no chain (layout_natural), no segments. It stays on one worker
 * from then on (no timing again when the load changes). Measured 2026-11-27
 * (ata-bench sptrsv, 2 threads, 200 solves, auto against the serial loop
 * of the same run): bayer10 1.49x on the two workers' layout, 0.95-0.98x
 * laid out again; bcsstk13 1.43x, 1.15x (as a one-thread context). A push
 * solve of any size, laid out for several workers, is laid out again with
 * its columns in their natural order (exec_push_natural): the same walk
 * as the serial loop's, no gather or scatter of x. Only where the plan
 * owns T (a borrowed T is read in place by its owner's updates); pull
 * keeps its bits. A factor's chain plan that copied its borrowed triangle
 * (cpu_plan.t_source) is laid out again from that triangle, at any n where
 * it is read by row: in place, the copy freed. ATA_ERR_UNSUPPORTED, nothing
 * done, where it does not apply; on an error the old layout stays. Tests
 * call it directly. */
#define EXEC_RELAYOUT_MAX_N 16384
ata_status cpu_exec_relayout_one(ata_plan *p);
/* Tests: cpu_sched_check on the plan's own worker schedule (nt 0; ATA_OK
 * if it has none), or on one made afresh for nt workers on its layout. */
ata_status cpu_exec_check_schedule(const ata_plan *p, int nt);

#endif
