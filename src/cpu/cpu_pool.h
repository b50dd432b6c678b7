/* cpu_pool.h - persistent worker threads owned by a context, and the waits
 * every CPU executor uses. The caller of cpu_pool_run is worker 0; the
 * others wake on a generation word and report back through a counter.
 *
 * Waiting (OpenMP's spin-then-sleep): a wait spins for a bounded time, then
 * sleeps on a futex that whoever ends the wait wakes, only when someone
 * sleeps. Spinning keeps back-to-back synchronisations fast on idle cores;
 * sleeping gives the core back when threads outnumber free cores (a busy
 * neighbour, more threads than cores), so the thread we wait for can run.
 * The policy (ata_wait_policy) sets the spin budget: active spins and yields
 * (never sleeps inside a job), passive sleeps almost at once, the default
 * spins up to ~50 us, shrinking per thread while its spins keep failing. */
#ifndef ATA_CPU_POOL_H
#define ATA_CPU_POOL_H
#include <stdatomic.h>
#include "ata.h"
#include "clock.h"

/* The spin-wait hint (x86 pause), for every spinning loop. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_PAUSE() _mm_pause()
#else
#define CPU_PAUSE() ((void)0)
#endif

typedef struct cpu_pool cpu_pool;
typedef struct claim_word claim_word;
typedef void (*cpu_job_fn)(void *arg, int tid, int nthreads);
typedef void (*cpu_chunk_fn)(void *arg, int chunk, int nchunks);

/* wait_policy: ATA_WAIT_DEFAULT, ACTIVE or PASSIVE (already resolved from
 * the environment by the context). */
ata_status cpu_pool_create(int nthreads, ata_wait_policy wait_policy, cpu_pool **out);
void cpu_pool_destroy(cpu_pool *pool);
int cpu_pool_size(const cpu_pool *pool);
/* How long the count of a worker that others wait for must stand still,
 * with that worker between two segments, before a waiter runs its next
 * segment itself (cpu_exec.c's helping): on a machine with free cores a
 * worker publishes and takes its next segment within nanoseconds and keeps
 * its own rows (and their cache); one stalled that long has likely lost
 * its core. ATA_HELP_AFTER_US at the pool's creation overrides it (tests
 * set 0: every waiter helps at once). */
#define CPU_HELP_AFTER_S 20e-6
double cpu_pool_help_after_s(const cpu_pool *pool);
/* Run fn(arg, tid, n) on every worker; returns when all have returned.
 * Not reentrant: one job at a time per pool. */
void cpu_pool_run(cpu_pool *pool, cpu_job_fn fn, void *arg);
/* Same with workers 0..m-1 only, as fn(arg, tid, m). */
void cpu_pool_run_n(cpu_pool *pool, cpu_job_fn fn, void *arg, int m);
/* Workers a job should use: the pool's size, but never more than the CPUs
 * this process may use (cpu_pool_cpus_available, at creation). A thread
 * beyond them only takes turns with the others: with static shares every
 * barrier would wait for a context switch. */
int cpu_pool_workers(const cpu_pool *pool);
/* Same for a streaming job over `elems` elements (vector entries, matrix
 * entries) on cpu_pool_workers workers; below CPU_POOL_INLINE_ELEMS on
 * the calling thread alone, fn(arg, 0, 1). A fixed size, not a measured one, so a reduction gives the
 * same bits for a given n and thread count: waking the workers and joining
 * them costs ~2-5 us, streaming an element ~0.3-1 ns. Returns the number of
 * workers that ran it. */
#define CPU_POOL_INLINE_ELEMS 16384
int cpu_pool_run_sized(cpu_pool *pool, cpu_job_fn fn, void *arg, size_t elems);
/* A streaming job cut into chunks that whichever worker is running takes:
 * each worker starts on a range of its own and then takes from the others'
 * (claimed by compare-and-swap), and the caller returns once every chunk
 * is done, never waiting for a worker that has not started. So a worker
 * that has lost its core to another process (a busy neighbour) delays a
 * job by at most the chunk it holds, not by its whole static share.
 * Chunks, and so a reduction's partial sums, depend on the job's size
 * only: the same bits for any number of workers above one.
 * cpu_pool_chunks: 1 (run inline, one worker's order) below
 * CPU_POOL_INLINE_ELEMS or on one worker, else one chunk per
 * CPU_POOL_CHUNK_ELEMS elements, 2 to CPU_POOL_MAX_CHUNKS. */
#define CPU_POOL_CHUNK_ELEMS 8192
#define CPU_POOL_MAX_CHUNKS 256
int cpu_pool_chunks(const cpu_pool *pool, size_t elems);
void cpu_pool_run_chunks(cpu_pool *pool, cpu_chunk_fn fn, void *arg, int nchunks);
/* memcpy shared by the workers (cpu_pool_run_sized on doubles): into fresh
 * memory its page faults are shared too (measured here, 88 MB: 52 ms on 2
 * workers against 71-100 ms on one). pool may be NULL (one thread). */
void cpu_pool_copy(cpu_pool *pool, double *dst, const double *src, size_t n);
/* Measured cost (seconds) of one empty cpu_pool_run at the time of the
 * first call (bounded to ~2 ms of measuring). */
double cpu_pool_job_cost(cpu_pool *pool);

/* CPUs this process may run on: the affinity mask, lowered by a cgroup CPU
 * quota (v2 cpu.max, v1 cfs_quota_us) of its cgroup or any ancestor. >= 1. */
int cpu_pool_cpus_available(void);

/* Bounded waiting shared by executors and barriers. */
typedef struct {
    atomic_int abort;       /* set once by whoever times out */
    double deadline_s;      /* per dependency wait: no progress for this long */
    double spin_s;          /* spin budget of one wait before sleeping */
    int active;             /* ATA_WAIT_ACTIVE: yield instead of sleeping */
    int idle;               /* the pool's wait for the next job */
} cpu_wait_ctl;

/* The pool's policy, no abort, the given deadline. */
void cpu_wait_ctl_init(cpu_wait_ctl *ctl, const cpu_pool *pool, double deadline_s);

/* A word sleepers block on (seq) and how many do. Whoever makes a wait's
 * condition true with release stores elsewhere (flags, counters) then calls
 * cpu_event_notify: a fence and a load, plus a wake only if someone sleeps. */
typedef struct {
    atomic_uint seq;
    atomic_uint sleepers;
} cpu_event;

void cpu_event_init(cpu_event *e);
void cpu_event_notify(cpu_event *e);

typedef int (*cpu_ready_fn)(void *arg);
/* Called about every 10 ms of waiting; nonzero ends the wait with it. */
typedef int (*cpu_check_fn)(void *arg, double now);
/* Wait until ready(arg): spin within the policy's budget, then sleep on
 * ev->seq until notified (active policy: yield instead). 0 once ready, or
 * check's nonzero value. */
int cpu_wait(const cpu_wait_ctl *ctl, cpu_event *ev, cpu_ready_fn ready, cpu_check_fn check, void *arg);
/* The share of its spin budget a thread spins in its next wait of a kind,
 * after one that ended asleep (slept) or not, waited_s long in all (its
 * wake included), with the whole budget spin_s: halved (to 1/64 at least)
 * where it slept spin_s or longer, else doubled (to 1 at most). cpu_wait's
 * rule, alone. */
float cpu_spin_scale_next(float scale, int slept, double waited_s, double spin_s);

/* 1 or cpu_pool_workers: whether threads pay for work that takes serial_s
 * on one thread and sync_s of synchronisation when split (the measured
 * job cost is added). */
int cpu_pool_workers_worth(cpu_pool *pool, double serial_s, double sync_s);

/* Sense-reversing barrier among n workers of one job. */
typedef struct {
    atomic_int count;
    cpu_event ev;           /* seq is the sense */
    int n;
} cpu_barrier;

void cpu_barrier_init(cpu_barrier *b, int n);
/* 0 when all arrived; -1 if ctl->abort was set (a bounded dependency wait
 * timed out somewhere), so every worker leaves. */
int cpu_barrier_wait(cpu_barrier *b, int *local_sense, cpu_wait_ctl *ctl);

#endif
