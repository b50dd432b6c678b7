/* cpu_pool.h - persistent worker threads owned by a context. The caller of
 * cpu_pool_run is worker 0; the others wake on a generation counter (spin a
 * little, then sleep), run the job, and report back through a counter. */
#ifndef ATA_CPU_POOL_H
#define ATA_CPU_POOL_H
#include <stdatomic.h>
#include "ata.h"
#include "clock.h"

typedef struct cpu_pool cpu_pool;
typedef void (*cpu_job_fn)(void *arg, int tid, int nthreads);

ata_status cpu_pool_create(int nthreads, cpu_pool **out);
void cpu_pool_destroy(cpu_pool *pool);
int cpu_pool_size(const cpu_pool *pool);
/* Run fn(arg, tid, n) on every worker; returns when all have returned.
 * Not reentrant: one job at a time per pool. */
void cpu_pool_run(cpu_pool *pool, cpu_job_fn fn, void *arg);

/* Bounded waiting shared by executors and barriers. */
typedef struct {
    atomic_int abort;       /* set once by whoever times out */
    double deadline_s;      /* per dependency wait */
} cpu_wait_ctl;

void cpu_relax(unsigned spins);  /* pause, then yield after a while */

/* Sense-reversing barrier among n workers of one job. */
typedef struct {
    atomic_int count;
    atomic_int sense;
    int n;
} cpu_barrier;

void cpu_barrier_init(cpu_barrier *b, int n);
/* 0 when all arrived; -1 if ctl->abort was set (a bounded dependency wait
 * timed out somewhere), so every worker leaves. */
int cpu_barrier_wait(cpu_barrier *b, int *local_sense, cpu_wait_ctl *ctl);

#endif
