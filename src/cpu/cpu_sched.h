/* cpu_sched.h - which worker runs which positions of a plan, and whom it
 * waits for: the CPU's execution of an aggregated schedule (cpu_sched.c).
 *
 * A segment is a range of positions [lo, hi) of the plan's SET order that
 * one worker runs in order. Each worker has a list of segments; before a
 * segment it waits until some other workers have finished a number of
 * their segments (point-to-point: a counter per worker, no barrier), and
 * after it publishes its own count. Waits are sparsified: a worker waits
 * for another only where a predecessor of the segment lies in that
 * worker's segments beyond what it already waited for.
 *
 * Deadlock freedom: segments are made in SET order (a segment's
 * predecessors sit in segments made before it, or earlier in itself), and
 * each worker's segments run in the order they were made, by the worker
 * or by a waiter that needs one of them and helps (cpu_exec.c), which
 * claims only segments made before its own. The earliest-made unfinished
 * segment then has every predecessor finished, and the segment before it
 * on its worker's list too, so whoever claimed it (or its owner, which
 * claims it next) runs it: it proceeds. */
#ifndef ATA_CPU_SCHED_H
#define ATA_CPU_SCHED_H
#include <stdatomic.h>
#include <stdint.h>
#include "plan.h"

/* The schedule's cost model, in entries' work: a row costs its entries plus
 * SCHED_ROW_COST (its b, x and loop); a hand-off between workers SCHED_SYNC
 * (~0.3 us). plan.c's auto S uses it too. */
#define SCHED_ROW_COST 1
#define SCHED_SYNC 400.0

/* A worker's published count, (epoch << 32) | segments finished, alone on
 * its cache line: a waiter polls one line per producer. */
typedef struct { _Atomic uint64_t v; char pad[56]; } cpu_count;

typedef struct {
    int nt;                 /* workers it was made for */
    int nseg;
    int *seg_ptr;           /* nt + 1: worker t runs segments seg_ptr[t] .. seg_ptr[t+1]-1 */
    int *lo, *hi;           /* nseg: positions */
    int *wait_ptr;          /* nseg + 1 */
    int *wait_thr;          /* per wait: the worker waited for */
    int *wait_cnt;          /*           and how many of its segments must be finished */
    long long nwaits;
    cpu_count *count;       /* nt counters */
    cpu_count *claim;       /* nt: (epoch << 32) | segments claimed (cpu_exec: a
                               waiter may run a stalled worker's next one) */
} cpu_sched;

/* How the plan's rows meet its positions (cpu_exec_layout's choice):
 * rowmap[k] is the row of T at position k (NULL: k itself); posmap[j] the
 * position of column j (NULL: j itself). U: the split ILU0 plan's upper
 * part (its entries add to a row's cost, never to its predecessors). */
typedef struct {
    const ata_csr *T, *U;
    const int *rowmap, *posmap;
    const int *colmap;      /* posmap's inverse: the column at position k
                               (NULL where posmap is NULL) */
} cpu_sched_view;

/* The schedule of p for nt workers: adaptive tasks too small to share run
 * whole on one worker; others split every run (a level) by cost, each part
 * on its worker; who takes what is decided by simulating the workers'
 * clocks (earliest finish, a cross-worker wait costing a hand-off). The
 * worker whose simulated clock ends last is worker 0, the caller, which
 * then has no one to wait for at the end. */
ata_status cpu_sched_build(const ata_plan *p, const cpu_sched_view *v, int nt, cpu_sched *out);
void cpu_sched_free(cpu_sched *s);
/* ATA_OK iff every position is in one segment, each worker's segments and
 * waits go forwards (the deadlock argument above), and every predecessor
 * of a position is finished before it runs: earlier in its segment, in an
 * earlier segment of its worker, or in one it waited for. (Tests.) */
ata_status cpu_sched_check(const cpu_sched *s, const cpu_sched_view *v, int n);

#endif
