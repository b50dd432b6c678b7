/* cpu_pool.c - persistent thread pool and bounded spin primitives. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include "cpu_pool.h"
#include "error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_PAUSE() _mm_pause()
#else
#define CPU_PAUSE() ((void)0)
#endif

/* Spins before a sleeping wait for the next job: about 50 us, enough to
 * keep back-to-back jobs (PCG's SpMV, dots, solves) off the futex path. */
#define POOL_SPINS 20000

struct cpu_pool {
    int n;
    pthread_t *threads;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    atomic_uint gen;        /* bumped (release) once a job is posted */
    atomic_int remaining;   /* workers 1..n-1 still in the job */
    atomic_int stop;
    cpu_job_fn fn;          /* written before gen's release, read after its acquire */
    void *arg;
};

typedef struct { cpu_pool *pool; int tid; } worker_arg;

void cpu_relax(unsigned spins)
{
    if (spins < 64) CPU_PAUSE();
    else sched_yield();     /* oversubscribed: let the producer run */
}

static void *worker_main(void *p)
{
    worker_arg wa = *(worker_arg *)p;
    free(p);
    cpu_pool *pool = wa.pool;
    unsigned seen = 0;
    for (;;) {
        unsigned g;
        unsigned spins = 0;
        while ((g = atomic_load_explicit(&pool->gen, memory_order_acquire)) == seen) {
            if (++spins < POOL_SPINS) { CPU_PAUSE(); continue; }
            pthread_mutex_lock(&pool->lock);
            while ((g = atomic_load_explicit(&pool->gen, memory_order_acquire)) == seen)
                pthread_cond_wait(&pool->wake, &pool->lock);
            pthread_mutex_unlock(&pool->lock);
            break;
        }
        seen = g;
        if (atomic_load_explicit(&pool->stop, memory_order_acquire)) break;
        pool->fn(pool->arg, wa.tid, pool->n);
        atomic_fetch_sub_explicit(&pool->remaining, 1, memory_order_release);
    }
    return NULL;
}

ata_status cpu_pool_create(int nthreads, cpu_pool **out)
{
    if (nthreads < 1) return ata_fail(ATA_ERR_ARG, "thread pool: %d threads requested", nthreads);
    cpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return ata_fail(ATA_ERR_NOMEM, "thread pool: out of memory");
    pool->n = nthreads;
    pool->threads = calloc((size_t)nthreads, sizeof *pool->threads);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    atomic_init(&pool->gen, 0);
    atomic_init(&pool->remaining, 0);
    atomic_init(&pool->stop, 0);
    if (!pool->threads) { cpu_pool_destroy(pool); return ata_fail(ATA_ERR_NOMEM, "thread pool: out of memory"); }
    for (int t = 1; t < nthreads; t++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa) { pool->n = t; cpu_pool_destroy(pool); return ata_fail(ATA_ERR_NOMEM, "thread pool: out of memory"); }
        wa->pool = pool;
        wa->tid = t;
        if (pthread_create(&pool->threads[t], NULL, worker_main, wa) != 0) {
            free(wa);
            pool->n = t;
            cpu_pool_destroy(pool);
            return ata_fail(ATA_ERR_BACKEND, "thread pool: cannot start thread %d of %d", t, nthreads);
        }
    }
    *out = pool;
    return ATA_OK;
}

static void post(cpu_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    atomic_fetch_add_explicit(&pool->gen, 1, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
}

void cpu_pool_destroy(cpu_pool *pool)
{
    if (!pool) return;
    if (pool->threads) {
        atomic_store_explicit(&pool->stop, 1, memory_order_release);
        post(pool);
        for (int t = 1; t < pool->n; t++) pthread_join(pool->threads[t], NULL);
    }
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    free(pool->threads);
    free(pool);
}

int cpu_pool_size(const cpu_pool *pool) { return pool->n; }

void cpu_pool_run(cpu_pool *pool, cpu_job_fn fn, void *arg)
{
    if (pool->n == 1) { fn(arg, 0, 1); return; }
    pool->fn = fn;
    pool->arg = arg;
    atomic_store_explicit(&pool->remaining, pool->n - 1, memory_order_relaxed);
    post(pool);
    fn(arg, 0, pool->n);
    unsigned spins = 0;
    while (atomic_load_explicit(&pool->remaining, memory_order_acquire) != 0)
        cpu_relax(spins++);
}

void cpu_barrier_init(cpu_barrier *b, int n)
{
    atomic_init(&b->count, n);
    atomic_init(&b->sense, 0);
    b->n = n;
}

int cpu_barrier_wait(cpu_barrier *b, int *local_sense, cpu_wait_ctl *ctl)
{
    int s = !*local_sense;
    *local_sense = s;
    if (atomic_fetch_sub_explicit(&b->count, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&b->count, b->n, memory_order_relaxed);
        atomic_store_explicit(&b->sense, s, memory_order_release);
        return 0;
    }
    /* No clock of its own: every other wait is bounded and all other work
     * is finite, so a stuck worker always turns into ctl->abort. A barrier
     * timeout would also fail a correct solve whose share merely ran long. */
    for (unsigned spins = 0; atomic_load_explicit(&b->sense, memory_order_acquire) != s; spins++) {
        cpu_relax(spins);
        if ((spins & 1023) == 1023 && atomic_load_explicit(&ctl->abort, memory_order_relaxed)) return -1;
    }
    return 0;
}
