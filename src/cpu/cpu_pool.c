/* cpu_pool.c - persistent thread pool, spin-then-sleep waits (futex), and
 * the CPUs this process may use. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "cpu_pool.h"
#include "error.h"
#include "mem.h"

/* Spin budgets (seconds) of the default policy. A job wait covers a
 * barrier or a dependency on an idle machine (a few us); an idle worker
 * waits for the next job, which in PCG follows within microseconds. With
 * more threads than CPUs a spinner only delays the thread it waits for. */
#define SPIN_JOB_S       50e-6
#define SPIN_JOB_OVER_S  5e-6
#define SPIN_IDLE_S      100e-6
#define SPIN_ACTIVE_IDLE_S 10e-3
/* How often a sleeping job wait wakes to check abort and its deadline. */
#define CHECK_S          10e-3

/* Per thread, per kind of wait: the share of the spin budget still worth
 * spinning. Halved by every wait that outlasted the whole budget (spinning
 * it would not have helped), doubled by every wait that spinning satisfied
 * or that a whole budget's spin would have: so a thread that keeps losing
 * its core (a busy neighbour) soon sleeps almost at once, and one on an
 * idle core spins. Without the second doubling a thread cut down by a few
 * long waits (the other worker's share of a one-worker solve, an uneven
 * split) sleeps through every short wait after them, never spinning long
 * enough to learn better: circuit:100000's PCG under auto slept in 525 of
 * 767 idle waits against greedy's 73 of 649. */
static _Thread_local float tl_scale_job = 1, tl_scale_idle = 1;
#define SCALE_MIN (1.0f / 64)

struct cpu_pool {
    int n;
    int cpus;               /* cpu_pool_cpus_available() at creation */
    pthread_t *threads;
    cpu_event gen;          /* seq: bumped once a job is posted */
    cpu_event done;         /* seq: workers 1..n-1 still in the job */
    atomic_int stop;
    cpu_job_fn fn;          /* written before gen's release, read after its acquire */
    void *arg;
    int m;                  /* workers taking part in the job (tid < m) */
    cpu_wait_ctl job_ctl;   /* the pool's own waits: join, idle */
    cpu_wait_ctl idle_ctl;
    double job_cost;        /* 0 until measured */
    double help_after_s;    /* cpu_pool_help_after_s */
    /* chunked jobs (cpu_pool_run_chunks): fields written before the claim
     * words' release, read by a worker only once it holds a chunk */
    cpu_chunk_fn cfn;
    void *carg;
    int nchunks;
    atomic_int chunk_m;     /* workers that start on a range of their own */
    claim_word *claims;     /* one per worker, each on its own cache line */
};

typedef struct { cpu_pool *pool; int tid; } worker_arg;

/* A worker's range of chunks: job (the gen word that posted it) << 32 |
 * next << 16 | end. Claimed one chunk at a time by compare-and-swap, by
 * its owner first, then by whoever has run out of its own. */
struct claim_word { _Alignas(64) atomic_ullong w; };

/* ---- futex ---------------------------------------------------------- */

static void futex_wait(atomic_uint *w, unsigned val, double timeout_s)
{
#ifdef __linux__
    struct timespec ts, *tp = NULL;
    if (timeout_s > 0) {
        ts.tv_sec = (time_t)timeout_s;
        ts.tv_nsec = (long)((timeout_s - (double)ts.tv_sec) * 1e9);
        tp = &ts;
    }
    syscall(SYS_futex, (void *)w, FUTEX_WAIT_PRIVATE, val, tp, NULL, 0);
#else
    (void)w; (void)val; (void)timeout_s;
    struct timespec ts = { 0, 50000 };
    nanosleep(&ts, NULL);
#endif
}

static void futex_wake_all(atomic_uint *w)
{
#ifdef __linux__
    syscall(SYS_futex, (void *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
    (void)w;
#endif
}

/* ---- events and waits ---------------------------------------------- */

void cpu_event_init(cpu_event *e)
{
    atomic_init(&e->seq, 0);
    atomic_init(&e->sleepers, 0);
}

/* Wake the sleepers of a word whose value the caller just changed. The
 * fence orders that change before the sleeper count is read; a sleeper
 * counts itself before its last look at the condition (cpu_wait), so one
 * of the two always sees the other. */
static void event_wake(cpu_event *e)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&e->sleepers, memory_order_relaxed)) futex_wake_all(&e->seq);
}

void cpu_event_notify(cpu_event *e)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&e->sleepers, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&e->seq, 1, memory_order_release);
        futex_wake_all(&e->seq);
    }
}

void cpu_wait_ctl_init(cpu_wait_ctl *ctl, const cpu_pool *pool, double deadline_s)
{
    *ctl = pool->job_ctl;
    atomic_init(&ctl->abort, 0);
    ctl->deadline_s = deadline_s;
}

float cpu_spin_scale_next(float scale, int slept, double waited_s, double spin_s)
{
    if (slept && waited_s >= spin_s) return scale > SCALE_MIN ? scale * 0.5f : scale;
    return scale * 2 > 1 ? 1 : scale * 2;
}

int cpu_wait(const cpu_wait_ctl *ctl, cpu_event *ev, cpu_ready_fn ready, cpu_check_fn check, void *arg)
{
    if (ready(arg)) return 0;
    float *scale = ctl->idle ? &tl_scale_idle : &tl_scale_job;
    const double budget = ctl->spin_s * *scale;
    double t0 = 0, t_check = 0;
    int slept = 0, rc = 0;
    for (unsigned n = 1; !ready(arg); n++) {
        if (n & 63) { CPU_PAUSE(); continue; }
        double now = clock_now();
        if (t0 == 0) t0 = t_check = now;
        if (check && now - t_check >= CHECK_S) {
            t_check = now;
            if ((rc = check(arg, now)) != 0) break;
        }
        if (now - t0 < budget) continue;
        if (ctl->active) { sched_yield(); continue; }
        /* Count ourselves, then look once more: a waker that changed the
         * condition before our count sees none and skips the futex. */
        unsigned seq = atomic_load_explicit(&ev->seq, memory_order_acquire);
        atomic_fetch_add_explicit(&ev->sleepers, 1, memory_order_seq_cst);
        /* C11 orders our count before the look only with a seq_cst fence
         * (the waker has its own): the Dekker pairing that loses no wake. */
        atomic_thread_fence(memory_order_seq_cst);
        if (!ready(arg)) {
            futex_wait(&ev->seq, seq, check ? CHECK_S : 0);
            slept = 1;
        }
        atomic_fetch_sub_explicit(&ev->sleepers, 1, memory_order_relaxed);
    }
    *scale = cpu_spin_scale_next(*scale, slept, slept ? clock_now() - t0 : 0, ctl->spin_s);
    return rc;
}

/* ---- pool ------------------------------------------------------------ */

typedef struct { atomic_uint *w; unsigned v; } word_arg;
static int word_differs(void *a) { word_arg *x = a; return atomic_load_explicit(x->w, memory_order_acquire) != x->v; }
static int word_equals(void *a) { word_arg *x = a; return atomic_load_explicit(x->w, memory_order_acquire) == x->v; }

/* Claim and run chunks of job `job`: the own range first, then the others'
 * from their fronts. A chunk is claimed before it is read, so a worker
 * that wakes after the job has ended (its ranges carry a later job or are
 * empty) touches nothing of it. */
static void run_chunks(cpu_pool *pool, int tid, unsigned job)
{
    for (int k = 0; k < pool->n; k++) {
        atomic_ullong *c = &pool->claims[(tid + k) % pool->n].w;
        unsigned long long w = atomic_load_explicit(c, memory_order_acquire);
        for (;;) {
            if ((unsigned)(w >> 32) != job) return;
            const int next = (int)((w >> 16) & 0xffff), end = (int)(w & 0xffff);
            if (next >= end) break;
            if (!atomic_compare_exchange_weak_explicit(c, &w, w + (1ull << 16), memory_order_acq_rel,
                                                       memory_order_acquire))
                continue;
            pool->cfn(pool->carg, next, pool->nchunks);
            if (atomic_fetch_sub_explicit(&pool->done.seq, 1, memory_order_acq_rel) == 1) event_wake(&pool->done);
            w = atomic_load_explicit(c, memory_order_acquire);
        }
    }
}

static void *worker_main(void *p)
{
    worker_arg wa = *(worker_arg *)p;
    free(p);
    cpu_pool *pool = wa.pool;
    unsigned seen = 0;
    for (;;) {
        word_arg w = { &pool->gen.seq, seen };
        cpu_wait(&pool->idle_ctl, &pool->gen, word_differs, NULL, &w);
        seen = atomic_load_explicit(&pool->gen.seq, memory_order_acquire);
        if (atomic_load_explicit(&pool->stop, memory_order_acquire)) break;
        if (seen & 1) {         /* chunked: no join to report to */
            if (wa.tid < atomic_load_explicit(&pool->chunk_m, memory_order_relaxed)) run_chunks(pool, wa.tid, seen);
            continue;
        }
        if (wa.tid < pool->m) pool->fn(pool->arg, wa.tid, pool->m);
        if (atomic_fetch_sub_explicit(&pool->done.seq, 1, memory_order_acq_rel) == 1) event_wake(&pool->done);
    }
    return NULL;
}

static void pool_set_policy(cpu_pool *pool, ata_wait_policy policy)
{
    cpu_wait_ctl *j = &pool->job_ctl, *i = &pool->idle_ctl;
    memset(j, 0, sizeof *j);
    memset(i, 0, sizeof *i);
    i->idle = 1;
    switch (policy) {
    case ATA_WAIT_PASSIVE:
        j->spin_s = i->spin_s = 0;      /* 63 pauses, then sleep */
        break;
    case ATA_WAIT_ACTIVE:
        j->spin_s = SPIN_JOB_S;
        j->active = 1;
        i->spin_s = SPIN_ACTIVE_IDLE_S;
        break;
    default:
        j->spin_s = pool->n > pool->cpus ? SPIN_JOB_OVER_S : SPIN_JOB_S;
        i->spin_s = pool->n > pool->cpus ? SPIN_JOB_OVER_S : SPIN_IDLE_S;
        break;
    }
}

ata_status cpu_pool_create(int nthreads, ata_wait_policy wait_policy, cpu_pool **out)
{
    if (nthreads < 1) return ata_fail(ATA_ERR_ARG, "thread pool: %d threads requested", nthreads);
    cpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return ata_fail(ATA_ERR_NOMEM, "thread pool: out of memory");
    pool->n = nthreads;
    pool->cpus = cpu_pool_cpus_available();
    pool_set_policy(pool, wait_policy);
    const char *ha = getenv("ATA_HELP_AFTER_US");
    pool->help_after_s = ha && *ha ? atof(ha) * 1e-6 : CPU_HELP_AFTER_S;
    pool->threads = mem_calloc((size_t)nthreads, sizeof *pool->threads);
    pool->claims = aligned_alloc(_Alignof(claim_word), (size_t)nthreads * sizeof *pool->claims);
    cpu_event_init(&pool->gen);
    cpu_event_init(&pool->done);
    atomic_init(&pool->stop, 0);
    atomic_init(&pool->chunk_m, 0);
    if (pool->claims)
        for (int t = 0; t < nthreads; t++) atomic_init(&pool->claims[t].w, 0);
    if (!pool->threads || !pool->claims) {
        pool->n = 1;        /* no thread started: nothing to join */
        cpu_pool_destroy(pool);
        return ata_fail(ATA_ERR_NOMEM, "thread pool: out of memory");
    }
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

/* Post the next job: gen's low bit says whether it is chunked. Only the
 * pool's owner posts. */
static unsigned next_gen(const cpu_pool *pool, int chunked)
{
    const unsigned g = atomic_load_explicit(&pool->gen.seq, memory_order_relaxed);
    return (((g >> 1) + 1) << 1) | (unsigned)chunked;
}

static void post_gen(cpu_pool *pool, unsigned g)
{
    atomic_store_explicit(&pool->gen.seq, g, memory_order_release);
    event_wake(&pool->gen);
}

static void post(cpu_pool *pool) { post_gen(pool, next_gen(pool, 0)); }

void cpu_pool_destroy(cpu_pool *pool)
{
    if (!pool) return;
    if (pool->threads) {
        atomic_store_explicit(&pool->stop, 1, memory_order_release);
        post(pool);
        for (int t = 1; t < pool->n; t++) pthread_join(pool->threads[t], NULL);
    }
    free(pool->threads);
    free(pool->claims);
    free(pool);
}

int cpu_pool_size(const cpu_pool *pool) { return pool->n; }
double cpu_pool_help_after_s(const cpu_pool *pool) { return pool->help_after_s; }

void cpu_pool_run(cpu_pool *pool, cpu_job_fn fn, void *arg) { cpu_pool_run_n(pool, fn, arg, pool->n); }

void cpu_pool_run_n(cpu_pool *pool, cpu_job_fn fn, void *arg, int m)
{
    if (m < 1 || m > pool->n) m = pool->n;
    if (m == 1) { fn(arg, 0, 1); return; }
    pool->fn = fn;
    pool->arg = arg;
    pool->m = m;
    atomic_store_explicit(&pool->done.seq, (unsigned)pool->n - 1, memory_order_relaxed);
    post(pool);
    fn(arg, 0, m);
    word_arg w = { &pool->done.seq, 0 };
    cpu_wait(&pool->job_ctl, &pool->done, word_equals, NULL, &w);
}

/* ---- measured costs ------------------------------------------------- */

static void empty_job(void *arg, int tid, int nt) { (void)arg; (void)tid; (void)nt; }

double cpu_pool_job_cost(cpu_pool *pool)
{
    if (pool->n == 1 || pool->job_cost > 0) return pool->job_cost;
    /* An empty job, as many times as fit in ~2 ms (at most 200), median of
     * batches of 10: waking the workers and joining them at today's load. */
    for (int i = 0; i < 5; i++) cpu_pool_run(pool, empty_job, NULL);
    double bt[20], t0 = clock_now();
    int nb = 0;
    do {
        double t1 = clock_now();
        for (int i = 0; i < 10; i++) cpu_pool_run(pool, empty_job, NULL);
        bt[nb++] = (clock_now() - t1) / 10;
    } while (nb < 20 && clock_now() - t0 < 2e-3);
    for (int i = 1; i < nb; i++)
        for (int k = i; k > 0 && bt[k] < bt[k - 1]; k--) { double x = bt[k]; bt[k] = bt[k - 1]; bt[k - 1] = x; }
    pool->job_cost = bt[nb / 2] > 1e-8 ? bt[nb / 2] : 1e-8;
    return pool->job_cost;
}

int cpu_pool_workers(const cpu_pool *pool) { return pool->n < pool->cpus ? pool->n : pool->cpus; }

int cpu_pool_workers_worth(cpu_pool *pool, double serial_s, double sync_s)
{
    int eff = cpu_pool_workers(pool);
    if (eff == 1) return 1;
    /* Threads save serial_s * (1 - 1/eff) and cost a job plus the syncs;
     * the factor 2 covers what the model leaves out (cache transfers,
     * fine-grained waits). */
    double gain = serial_s * (1.0 - 1.0 / eff);
    return gain > 2 * (cpu_pool_job_cost(pool) + sync_s) ? eff : 1;
}

int cpu_pool_run_sized(cpu_pool *pool, cpu_job_fn fn, void *arg, size_t elems)
{
    int m = elems < CPU_POOL_INLINE_ELEMS ? 1 : cpu_pool_workers(pool);
    cpu_pool_run_n(pool, fn, arg, m);
    return m;
}

int cpu_pool_chunks(const cpu_pool *pool, size_t elems)
{
    if (elems < CPU_POOL_INLINE_ELEMS || cpu_pool_workers(pool) == 1) return 1;
    const size_t c = elems / CPU_POOL_CHUNK_ELEMS;
    return c < 2 ? 2 : c > CPU_POOL_MAX_CHUNKS ? CPU_POOL_MAX_CHUNKS : (int)c;
}

void cpu_pool_run_chunks(cpu_pool *pool, cpu_chunk_fn fn, void *arg, int nchunks)
{
    const int m = cpu_pool_workers(pool);
    if (nchunks > CPU_POOL_MAX_CHUNKS) nchunks = CPU_POOL_MAX_CHUNKS;
    if (m == 1 || nchunks <= 1) {
        for (int c = 0; c < nchunks; c++) fn(arg, c, nchunks);
        return;
    }
    pool->cfn = fn;
    pool->carg = arg;
    pool->nchunks = nchunks;
    const unsigned g = next_gen(pool, 1);
    atomic_store_explicit(&pool->done.seq, (unsigned)nchunks, memory_order_relaxed);
    atomic_store_explicit(&pool->chunk_m, m, memory_order_relaxed);
    for (int t = 0; t < pool->n; t++) {
        const unsigned long long lo = t < m ? (unsigned)(nchunks * t / m) : 0, hi = t < m ? (unsigned)(nchunks * (t + 1) / m) : 0;
        atomic_store_explicit(&pool->claims[t].w, (unsigned long long)g << 32 | lo << 16 | hi, memory_order_release);
    }
    post_gen(pool, g);
    run_chunks(pool, 0, g);
    word_arg w = { &pool->done.seq, 0 };
    cpu_wait(&pool->job_ctl, &pool->done, word_equals, NULL, &w);
}

typedef struct { double *dst; const double *src; size_t n; } copy_job;

static void copy_part(void *arg, int tid, int nt)
{
    const copy_job *c = arg;
    const size_t lo = c->n * (size_t)tid / (size_t)nt, hi = c->n * ((size_t)tid + 1) / (size_t)nt;
    memcpy(c->dst + lo, c->src + lo, (hi - lo) * sizeof *c->dst);
}

void cpu_pool_copy(cpu_pool *pool, double *dst, const double *src, size_t n)
{
    copy_job c = { dst, src, n };
    if (pool) cpu_pool_run_sized(pool, copy_part, &c, n);
    else copy_part(&c, 0, 1);
}

/* ---- barrier ---------------------------------------------------------- */

void cpu_barrier_init(cpu_barrier *b, int n)
{
    atomic_init(&b->count, n);
    cpu_event_init(&b->ev);
    b->n = n;
}

static int ctl_aborted(void *a, double now)
{
    (void)now;
    return atomic_load_explicit(&((cpu_wait_ctl *)a)->abort, memory_order_relaxed) ? -1 : 0;
}

typedef struct { word_arg w; cpu_wait_ctl *ctl; } barrier_arg;
static int barrier_check(void *a, double now) { return ctl_aborted(((barrier_arg *)a)->ctl, now); }
static int barrier_open(void *a) { return word_equals(&((barrier_arg *)a)->w); }

int cpu_barrier_wait(cpu_barrier *b, int *local_sense, cpu_wait_ctl *ctl)
{
    unsigned s = !*local_sense;
    *local_sense = (int)s;
    if (atomic_fetch_sub_explicit(&b->count, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&b->count, b->n, memory_order_relaxed);
        atomic_store_explicit(&b->ev.seq, s, memory_order_release);
        event_wake(&b->ev);
        return 0;
    }
    /* No clock of its own: every other wait is bounded and all other work
     * is finite, so a stuck worker always turns into ctl->abort. A barrier
     * timeout would also fail a correct solve whose share merely ran long. */
    barrier_arg a = { { &b->ev.seq, s }, ctl };
    return cpu_wait(ctl, &b->ev, barrier_open, barrier_check, &a) ? -1 : 0;
}

/* ---- CPUs available ----------------------------------------------------- */

/* ceil(quota / period) of one cgroup directory; 0: no limit found. */
static int cgroup_dir_limit(const char *dir, int v2)
{
    char path[4200];
    long long q = -1, per = 0;
    FILE *f;
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (!(f = fopen(path, "r"))) return 0;
        char qs[32] = "";
        if (fscanf(f, "%31s %lld", qs, &per) == 2 && strcmp(qs, "max") != 0) q = atoll(qs);
        fclose(f);
    } else {
        snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
        if (!(f = fopen(path, "r"))) return 0;
        if (fscanf(f, "%lld", &q) != 1) q = -1;
        fclose(f);
        snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        if (!(f = fopen(path, "r"))) return 0;
        if (fscanf(f, "%lld", &per) != 1) per = 0;
        fclose(f);
    }
    if (q <= 0 || per <= 0) return 0;
    long long c = (q + per - 1) / per;
    return c > INT_MAX ? INT_MAX : (int)c;
}

/* The lowest quota on the way from the process's cgroup up to the root of
 * the hierarchy mounted at `mnt` (a limit on an ancestor applies too; in a
 * container the path may not exist below the mount, the root still does). */
static int cgroup_limit(const char *mnt, const char *rel, int v2)
{
    char dir[4096];
    int best = 0;
    snprintf(dir, sizeof dir, "%s%s", mnt, rel);
    for (;;) {
        int c = cgroup_dir_limit(dir, v2);
        if (c > 0 && (best == 0 || c < best)) best = c;
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < strlen(mnt)) break;
        *slash = '\0';
    }
    return best;
}

static int cgroup_cpus(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return 0;
    char line[4096];
    int best = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1, *rel = c2 + 1;
        if (!strcmp(rel, "/")) rel = "";
        int c = 0;
        if (!*ctrls && !strcmp(line, "0")) {            /* v2 (unified) */
            c = cgroup_limit("/sys/fs/cgroup", rel, 1);
            int h = cgroup_limit("/sys/fs/cgroup/unified", rel, 1);   /* hybrid layout */
            if (h > 0 && (c == 0 || h < c)) c = h;
        } else {
            char list[256];
            snprintf(list, sizeof list, ",%s,", ctrls);
            if (strstr(list, ",cpu,")) {
                const char *mnts[] = { "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                                       "/sys/fs/cgroup/cpuacct,cpu" };
                for (int m = 0; m < 3; m++) {
                    int x = cgroup_limit(mnts[m], rel, 0);
                    if (x > 0 && (c == 0 || x < c)) c = x;
                }
            }
        }
        if (c > 0 && (best == 0 || c < best)) best = c;
    }
    fclose(f);
    return best;
}

int cpu_pool_cpus_available(void)
{
    int n = 0;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#endif
    if (n <= 0) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0) n = 1;
    int q = cgroup_cpus();
    if (q > 0 && q < n) n = q;
    return n;
}
