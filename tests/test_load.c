/* test_load.c - the CPU runtime when threads outnumber cores (issue 10):
 * OMP_NUM_THREADS and ATA_WAIT_POLICY parsing, the default thread count,
 * every wait policy bitwise equal to the serial reference, pools and
 * contexts oversubscribed (more threads than CPUs, several contexts busy at
 * once) still correct, small work on the calling thread. Bounded by
 * correctness: an oversubscribed run must finish with the right bits; how
 * fast is bench/stress.sh's business. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "test_util.h"
#include "context.h"
#include "cpu/cpu_exec.h"
#include "cpu/cpu_pool.h"

static ata_status make_ctx(int threads, ata_wait_policy wp, ata_context **ctx)
{
    ata_context_options o = ata_context_defaults();
    o.backend = ATA_BACKEND_CPU;
    o.threads = threads;
    o.wait_policy = wp;
    o.wait_timeout_s = 60;
    return ata_context_create(&o, ctx);
}

static void test_omp_num_threads(void **state)
{
    (void)state;
    const char *bad[] = { "0", "-1", "-8", "abc", "3x", "2.5", "100000", "99999999999999999999", " ,2" };
    ata_context *ctx = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("OMP_NUM_THREADS", bad[i], 1);
        assert_int_equal(make_ctx(0, ATA_WAIT_DEFAULT, &ctx), ATA_ERR_ARG);
        assert_non_null(strstr(ata_last_error(), "OMP_NUM_THREADS"));
        assert_non_null(strstr(ata_last_error(), bad[i]));
        /* An explicit count does not read the variable. */
        TU_OK(make_ctx(2, ATA_WAIT_DEFAULT, &ctx));
        assert_int_equal(ata_context_threads(ctx), 2);
        ata_context_destroy(ctx);
    }
    const struct { const char *v; int want; } good[] = { { "3", 3 }, { " 5 ", 5 }, { "4,2", 4 }, { "256", 256 } };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        setenv("OMP_NUM_THREADS", good[i].v, 1);
        TU_OK(make_ctx(0, ATA_WAIT_DEFAULT, &ctx));
        assert_int_equal(ata_context_threads(ctx), good[i].want);
        ata_context_destroy(ctx);
    }
    /* Unset or blank: the CPUs this process may use, never more than online. */
    setenv("OMP_NUM_THREADS", "", 1);
    TU_OK(make_ctx(0, ATA_WAIT_DEFAULT, &ctx));
    int t = ata_context_threads(ctx);
    ata_context_destroy(ctx);
    unsetenv("OMP_NUM_THREADS");
    TU_OK(make_ctx(0, ATA_WAIT_DEFAULT, &ctx));
    assert_int_equal(ata_context_threads(ctx), t);
    ata_context_destroy(ctx);
    assert_int_equal(t, cpu_pool_cpus_available());
    assert_true(t >= 1 && t <= sysconf(_SC_NPROCESSORS_ONLN));
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    assert_true(t <= CPU_COUNT(&set));
    /* Shrink the affinity mask to one CPU: the default follows. */
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) { CPU_SET(c, &one); break; }
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    TU_OK(make_ctx(0, ATA_WAIT_DEFAULT, &ctx));
    assert_int_equal(ata_context_threads(ctx), 1);
    ata_context_destroy(ctx);
    assert_int_equal(sched_setaffinity(0, sizeof set, &set), 0);
}

static void test_wait_policy_parsing(void **state)
{
    (void)state;
    ata_context *ctx = NULL;
    const char *bad[] = { "bogus", "activ", "1", "passive " };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("ATA_WAIT_POLICY", bad[i], 1);
        assert_int_equal(make_ctx(1, ATA_WAIT_DEFAULT, &ctx), ATA_ERR_ARG);
        assert_non_null(strstr(ata_last_error(), "ATA_WAIT_POLICY"));
        /* An explicit policy does not read the variable. */
        TU_OK(make_ctx(1, ATA_WAIT_PASSIVE, &ctx));
        ata_context_destroy(ctx);
    }
    const char *good[] = { "active", "PASSIVE", "Active", "" };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        setenv("ATA_WAIT_POLICY", good[i], 1);
        TU_OK(make_ctx(2, ATA_WAIT_DEFAULT, &ctx));
        ata_context_destroy(ctx);
    }
    unsetenv("ATA_WAIT_POLICY");
    assert_int_equal(make_ctx(1, (ata_wait_policy)7, &ctx), ATA_ERR_ARG);
    assert_non_null(strstr(ata_last_error(), "wait policy"));
}

/* Pull solves (every CPU policy, lower and upper) and ILU0 of one matrix on
 * ctx, bitwise equal to the serial reference, `reps` times. S fixed, so the
 * plan runs on all the workers it may use (no inline shortcut). */
static void check_bitwise(ata_context *ctx, const ata_csr *A, int reps)
{
    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_LA,
                                ATA_POLICY_GREEDY };
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 5);
    for (size_t k = 0; k < sizeof pols / sizeof *pols; k++)
        for (int up = 0; up < 2; up++) {
            ata_plan_options po = ata_plan_defaults();
            po.policy = pols[k];
            po.S = 24;
            po.uplo = up ? ATA_UPPER : ATA_LOWER;
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
            ata_plan_info in;
            TU_OK(ata_plan_get_info(p, &in));
            assert_true(in.threads_used >= 1 && in.threads_used <= ata_context_threads(ctx));
            TU_OK(ata_ref_sptrsv_csr(A, po.uplo, ATA_NON_UNIT, b, xr));
            for (int r = 0; r < reps; r++) {
                memset(x, 0, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
                assert_memory_equal(x, xr, n * sizeof *x);
            }
            ata_plan_destroy(p);
        }
    ata_csr *R, *LU;
    TU_OK(ata_csr_copy(A, &R));
    TU_OK(ata_ref_ilu0(R));
    ata_plan_options po = ata_plan_defaults();
    po.S = 24;
    TU_OK(ata_spilu0(ctx, A, &po, &LU));
    assert_memory_equal(LU->val, R->val, A->nnz * sizeof *R->val);
    ata_csr_free(LU);
    ata_csr_free(R);
    free(b); free(x); free(xr);
}

/* Every wait policy, 2 and 4 threads: the reference's bits; PCG gives the
 * same bits under every policy (same thread count, same sums). */
static void test_wait_policies_bitwise(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:14,perm=4", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x0 = malloc(n * sizeof *x0), *x = malloc(n * sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1;
    const ata_wait_policy wps[] = { ATA_WAIT_DEFAULT, ATA_WAIT_ACTIVE, ATA_WAIT_PASSIVE };
    for (int threads = 2; threads <= 4; threads += 2)
        for (int w = 0; w < 3; w++) {
            ata_context *ctx;
            TU_OK(make_ctx(threads, wps[w], &ctx));
            check_bitwise(ctx, A, 3);
            ata_pcg_options opt = ata_pcg_defaults();
            opt.plan.S = 24;
            ata_pcg_result res;
            TU_OK(ata_pcg(ctx, A, b, w ? x : x0, &opt, &res));
            assert_true(res.relres <= 1e-6);
            if (w) assert_memory_equal(x, x0, n * sizeof *x);
            ata_pcg_result_free(&res);
            ata_context_destroy(ctx);
        }
    free(b); free(x0); free(x);
    ata_csr_free(A);
}

/* A pool of 8 workers (more than this machine's CPUs) through thousands
 * of barriers under each policy: every worker sees every phase complete. */
typedef struct {
    cpu_barrier bar;
    cpu_wait_ctl ctl;
    atomic_int count;
    atomic_int errors;
    int rounds;
} phase_job;

static void phase_worker(void *arg, int tid, int nt)
{
    phase_job *J = arg;
    int sense = 0;
    (void)tid;
    for (int r = 0; r < J->rounds; r++) {
        atomic_fetch_add(&J->count, 1);
        if (cpu_barrier_wait(&J->bar, &sense, &J->ctl)) { atomic_fetch_add(&J->errors, 1); return; }
        if (atomic_load(&J->count) < (r + 1) * nt) atomic_fetch_add(&J->errors, 1);
        if (cpu_barrier_wait(&J->bar, &sense, &J->ctl)) { atomic_fetch_add(&J->errors, 1); return; }
    }
}

static void test_oversubscribed_pool(void **state)
{
    (void)state;
    const ata_wait_policy wps[] = { ATA_WAIT_DEFAULT, ATA_WAIT_ACTIVE, ATA_WAIT_PASSIVE };
    for (int w = 0; w < 3; w++) {
        cpu_pool *pool;
        TU_OK(cpu_pool_create(8, wps[w], &pool));
        assert_true(cpu_pool_workers(pool) >= 1 && cpu_pool_workers(pool) <= 8);
        for (int job = 0; job < 20; job++) {
            phase_job J;
            J.rounds = 100;
            cpu_barrier_init(&J.bar, 8);
            cpu_wait_ctl_init(&J.ctl, pool, 60);
            atomic_init(&J.count, 0);
            atomic_init(&J.errors, 0);
            cpu_pool_run(pool, phase_worker, &J);
            assert_int_equal(atomic_load(&J.errors), 0);
            assert_int_equal(atomic_load(&J.count), 8 * J.rounds);
        }
        cpu_pool_destroy(pool);
    }
}

/* Chunked jobs (cpu_pool_run_chunks): every chunk runs exactly once, with
 * the job's chunk count, whatever mix of chunked and plain jobs comes
 * before it; chunk 0 of some jobs dawdles so that the other workers take
 * the rest, and some jobs end before a sleeping worker wakes (it must then
 * touch nothing of them). TSan runs this. */
typedef struct {
    atomic_int ran[CPU_POOL_MAX_CHUNKS];
    atomic_int errors;
    int nchunks;
    int slow;
} chunk_job;

static void chunk_fn(void *arg, int c, int nc)
{
    chunk_job *J = arg;
    if (nc != J->nchunks || c < 0 || c >= nc) { atomic_fetch_add(&J->errors, 1); return; }
    if (J->slow && c == (J->slow == 1 ? 0 : nc - 1)) {     /* the caller's range, or the last worker's */
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    atomic_fetch_add(&J->ran[c], 1);
}

static void count_worker(void *arg, int tid, int nt)
{
    (void)tid; (void)nt;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void test_chunked_jobs(void **state)
{
    (void)state;
    const ata_wait_policy wps[] = { ATA_WAIT_DEFAULT, ATA_WAIT_ACTIVE, ATA_WAIT_PASSIVE };
    const int sizes[] = { 2, 3, 17, 64, CPU_POOL_MAX_CHUNKS };
    for (int w = 0; w < 3; w++)
        for (int threads = 2; threads <= 8; threads *= 2) {
            cpu_pool *pool;
            TU_OK(cpu_pool_create(threads, wps[w], &pool));
            for (int job = 0; job < 150; job++) {
                chunk_job J;
                J.nchunks = sizes[job % 5];
                J.slow = job % 7 == 0 ? 1 : job % 7 == 3 ? 2 : 0;
                atomic_init(&J.errors, 0);
                for (int c = 0; c < CPU_POOL_MAX_CHUNKS; c++) atomic_init(&J.ran[c], 0);
                cpu_pool_run_chunks(pool, chunk_fn, &J, J.nchunks);
                assert_int_equal(atomic_load(&J.errors), 0);
                for (int c = 0; c < CPU_POOL_MAX_CHUNKS; c++)
                    assert_int_equal(atomic_load(&J.ran[c]), c < J.nchunks ? 1 : 0);
                if (job % 3 == 0) {     /* a plain job between: every worker joins it */
                    atomic_int k;
                    atomic_init(&k, 0);
                    cpu_pool_run(pool, count_worker, &k);
                    assert_int_equal(atomic_load(&k), threads);
                }
            }
            cpu_pool_destroy(pool);
        }
    /* The chunk count depends on the size only, never on the workers. */
    cpu_pool *a, *b;
    TU_OK(cpu_pool_create(1, ATA_WAIT_DEFAULT, &a));
    TU_OK(cpu_pool_create(8, ATA_WAIT_DEFAULT, &b));
    assert_int_equal(cpu_pool_chunks(a, (size_t)1 << 20), 1);
    assert_int_equal(cpu_pool_chunks(b, CPU_POOL_INLINE_ELEMS - 1), 1);
    if (cpu_pool_workers(b) > 1) {
        assert_int_equal(cpu_pool_chunks(b, CPU_POOL_INLINE_ELEMS), 2);
        assert_int_equal(cpu_pool_chunks(b, (size_t)100 * CPU_POOL_CHUNK_ELEMS), 100);
        assert_int_equal(cpu_pool_chunks(b, (size_t)1 << 30), CPU_POOL_MAX_CHUNKS);
    }
    cpu_pool_destroy(a);
    cpu_pool_destroy(b);
}

/* The spin budget's share after a wait: a sleep beyond the whole budget
 * halves it (to 1/64), anything a whole budget's spin would have caught
 * doubles it (to 1), so a thread cut down by long waits spins again once
 * its waits are short. */
static void test_spin_scale(void **state)
{
    (void)state;
    const double spin = 50e-6;
    assert_true(cpu_spin_scale_next(1, 1, 2e-3, spin) == 0.5f);         /* slept long */
    assert_true(cpu_spin_scale_next(1.0f / 64, 1, 2e-3, spin) == 1.0f / 64);   /* the floor */
    assert_true(cpu_spin_scale_next(1.0f / 64, 1, 10e-6, spin) == 1.0f / 32);  /* slept, short: spin more */
    assert_true(cpu_spin_scale_next(0.25f, 0, 20e-6, spin) == 0.5f);    /* spinning caught it */
    assert_true(cpu_spin_scale_next(1, 0, 0, spin) == 1.0f);            /* the ceiling */
    assert_true(cpu_spin_scale_next(0.5f, 1, spin, spin) == 0.25f);     /* exactly the budget: halved */
    /* A thread cut to the floor by long waits is back to the whole budget
     * after six short ones, asleep or not. */
    float s = 1;
    for (int i = 0; i < 20; i++) s = cpu_spin_scale_next(s, 1, 1e-3, spin);
    assert_true(s == 1.0f / 64);
    for (int i = 0; i < 5; i++) s = cpu_spin_scale_next(s, 1, 5e-6, spin);
    assert_true(s == 0.5f);
    s = cpu_spin_scale_next(s, 1, 5e-6, spin);
    assert_true(s == 1.0f);
}

/* The CPU backend's dot sums per-chunk partials in chunk order: exactly
 * the sum written out here, whatever the workers did. */
static void test_chunked_dot_bits(void **state)
{
    (void)state;
    ata_context *ctx;
    TU_OK(make_ctx(2, ATA_WAIT_DEFAULT, &ctx));
    const size_t n = 200003;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) { x[i] = 1.0 / (double)(i + 1); y[i] = (double)(i % 97) - 48.3; }
    const int nc = cpu_pool_chunks(ctx->pool, n);
    assert_int_equal(nc, cpu_pool_workers(ctx->pool) > 1 ? (int)(n / CPU_POOL_CHUNK_ELEMS) : 1);
    double want = 0;
    for (int c = 0; c < nc; c++) {
        const size_t lo = (size_t)(n * (unsigned long long)c / nc), hi = (size_t)(n * (unsigned long long)(c + 1) / nc);
        double part = 0;
        for (size_t i = lo; i < hi; i++) part += x[i] * y[i];
        want += part;
    }
    for (int r = 0; r < 20; r++) {
        double got;
        TU_OK(ctx->ops->dot(ctx, n, x, y, &got));
        assert_memory_equal(&got, &want, sizeof got);
    }
    free(x); free(y);
    ata_context_destroy(ctx);
}

/* PCG above the inline size, where the SpMV and the vector kernels run in
 * chunks: every thread count above one gives the same bits (the partial
 * sums follow the chunks, not the workers; on a machine of 2 CPUs every
 * count runs 2 workers, so this bites on bigger ones), and every count
 * agrees with the serial reference to rounding. */
static void test_chunked_pcg_bits(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:30", &A));       /* 27000 rows: chunked */
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x[4], *xr = malloc(n * sizeof *xr);
    for (int i = 0; i < n; i++) b[i] = 1 + i % 5;
    ata_pcg_options opt = ata_pcg_defaults();
    ata_pcg_result res[4], rr;
    const int threads[4] = { 1, 2, 3, 8 };
    for (int k = 0; k < 4; k++) {
        ata_context *ctx;
        TU_OK(make_ctx(threads[k], ATA_WAIT_DEFAULT, &ctx));
        x[k] = malloc(n * sizeof *x[k]);
        TU_OK(ata_pcg(ctx, A, b, x[k], &opt, &res[k]));
        ata_context_destroy(ctx);
    }
    TU_OK(ata_pcg(NULL, A, b, xr, &opt, &rr));
    for (int k = 0; k < 4; k++) {
        assert_int_equal(res[k].status, ATA_OK);
        assert_true(res[k].relres < 1e-6);
        assert_true(abs(res[k].iterations - rr.iterations) <= 1);
        assert_true(tu_rel_diff(x[k], xr, n) < 1e-8);
    }
    for (int k = 2; k < 4; k++) {
        assert_int_equal(res[k].iterations, res[1].iterations);
        assert_memory_equal(x[k], x[1], n * sizeof *xr);
    }
    for (int k = 0; k < 4; k++) { ata_pcg_result_free(&res[k]); free(x[k]); }
    ata_pcg_result_free(&rr);
    free(b); free(xr);
    ata_csr_free(A);
}

/* Waiters help (cpu_exec.c, seg_help): with ATA_HELP_AFTER_US=0 every
 * waiter runs the awaited worker's next segment at once where it can, under
 * each wait policy; solves, factors and PCG keep the reference's bits, and
 * segments were in fact run by workers other than their owners. TSan runs
 * this. */
static void test_segment_helping(void **state)
{
    (void)state;
    setenv("ATA_HELP_AFTER_US", "0", 1);
    const long long before = cpu_exec_segments_helped();
    const char *specs[] = { "lap3d:14,perm=2", "circuit:3000", "lap2d:40,dofs=3" };
    for (int w = 0; w < 3; w++)
        for (size_t m = 0; m < sizeof specs / sizeof *specs; m++) {
            ata_csr *A;
            TU_OK(ata_gen_from_spec(specs[m], &A));
            ata_context *ctx;
            TU_OK(make_ctx(2, (ata_wait_policy)w, &ctx));
            check_bitwise(ctx, A, 6);
            ata_context_destroy(ctx);
            ata_csr_free(A);
        }
    unsetenv("ATA_HELP_AFTER_US");
    print_message("segments helped: %lld\n", cpu_exec_segments_helped() - before);
    if (cpu_pool_cpus_available() >= 2) assert_true(cpu_exec_segments_helped() > before);
}

/* Three caller threads, each with its own 4-thread context (the issue's
 * "two contexts each taking all cores"), solving at once: 12 threads on
 * this machine's CPUs, every answer the reference's bits. */
typedef struct { const ata_csr *A; ata_wait_policy wp; int ok; } ctx_thread_arg;

static void *ctx_thread(void *p)
{
    ctx_thread_arg *a = p;
    ata_context *ctx;
    if (make_ctx(4, a->wp, &ctx) != ATA_OK) return NULL;
    const int n = a->A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 9);
    ata_plan_options po = ata_plan_defaults();
    po.S = 16;
    ata_plan *pl = NULL;
    int ok = ata_sptrsv_plan_create(ctx, a->A, &po, &pl) == ATA_OK &&
             ata_ref_sptrsv_csr(a->A, ATA_LOWER, ATA_NON_UNIT, b, xr) == ATA_OK;
    for (int r = 0; ok && r < 30; r++)
        ok = ata_sptrsv(pl, b, x) == ATA_OK && !memcmp(x, xr, n * sizeof *x);
    if (pl) ata_plan_destroy(pl);
    ata_context_destroy(ctx);
    free(b); free(x); free(xr);
    a->ok = ok;
    return NULL;
}

static void test_concurrent_contexts(void **state)
{
    (void)state;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:16,perm=1", &A));
    pthread_t th[3];
    ctx_thread_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (ctx_thread_arg){ A, (ata_wait_policy)i, 0 };
        assert_int_equal(pthread_create(&th[i], NULL, ctx_thread, &args[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_true(args[i].ok);
    }
    ata_csr_free(A);
}

/* More threads than CPUs on one context: the plan uses at most the CPUs
 * this process may use, and still gives the reference's bits. */
static void test_more_threads_than_cpus(void **state)
{
    (void)state;
    int cpus = cpu_pool_cpus_available();
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d:12", &A));
    ata_context *ctx;
    TU_OK(make_ctx(cpus + 3 > 8 ? cpus + 3 : 8, ATA_WAIT_DEFAULT, &ctx));
    ata_plan_options po = ata_plan_defaults();
    po.S = 8;
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
    ata_plan_info in;
    TU_OK(ata_plan_get_info(p, &in));
    assert_int_equal(in.threads_used, cpus < ata_context_threads(ctx) ? cpus : ata_context_threads(ctx));
    ata_plan_destroy(p);
    check_bitwise(ctx, A, 2);
    ata_context_destroy(ctx);
    ata_csr_free(A);
}

/* Work too small to gain from threads runs on the calling thread (S auto:
 * measured costs), and says so in the plan info; S fixed uses the workers. */
static void test_small_work_inline(void **state)
{
    (void)state;
    ata_csr *A;
    /* 9 rows: a few ns of work per row against microseconds to wake a
     * worker, by a wide margin even under a sanitizer's slowdown. */
    TU_OK(ata_gen_from_spec("lap2d:3", &A));
    ata_context *ctx;
    TU_OK(make_ctx(2, ATA_WAIT_DEFAULT, &ctx));
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_CA;      /* S auto: probed */
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
    ata_plan_info in;
    TU_OK(ata_plan_get_info(p, &in));
    assert_true(in.T_u > 0 && in.T_l > 0);
    assert_int_equal(in.threads_used, 1);
    ata_plan_destroy(p);
    po.S = 4;
    TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
    TU_OK(ata_plan_get_info(p, &in));
    assert_int_equal(in.threads_used, cpu_pool_cpus_available() >= 2 ? 2 : 1);
    ata_plan_destroy(p);
    check_bitwise(ctx, A, 2);
    /* PCG on a small problem: the vector kernels and the solves run on the
     * calling thread, so 2 threads give one thread's bits, close to the
     * serial reference. */
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    for (int i = 0; i < n; i++) b[i] = 1 + i % 3;
    ata_pcg_options opt = ata_pcg_defaults();
    ata_pcg_result res, rr;
    ata_context *one;
    TU_OK(make_ctx(1, ATA_WAIT_DEFAULT, &one));
    TU_OK(ata_pcg(ctx, A, b, x, &opt, &res));
    TU_OK(ata_pcg(one, A, b, xr, &opt, &rr));
    assert_int_equal(res.L_info.threads_used, 1);
    assert_int_equal(res.iterations, rr.iterations);
    assert_memory_equal(x, xr, n * sizeof *x);
    ata_pcg_result_free(&rr);
    TU_OK(ata_pcg(NULL, A, b, xr, &opt, &rr));
    assert_int_equal(res.iterations, rr.iterations);
    assert_true(tu_rel_diff(x, xr, n) < 1e-12);
    ata_pcg_result_free(&res);
    ata_pcg_result_free(&rr);
    ata_context_destroy(one);
    free(b); free(x); free(xr);
    ata_context_destroy(ctx);
    ata_csr_free(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_omp_num_threads),
        cmocka_unit_test(test_wait_policy_parsing),
        cmocka_unit_test(test_wait_policies_bitwise),
        cmocka_unit_test(test_oversubscribed_pool),
        cmocka_unit_test(test_chunked_jobs),
        cmocka_unit_test(test_spin_scale),
        cmocka_unit_test(test_chunked_dot_bits),
        cmocka_unit_test(test_chunked_pcg_bits),
        cmocka_unit_test(test_segment_helping),
        cmocka_unit_test(test_concurrent_contexts),
        cmocka_unit_test(test_more_threads_than_cpus),
        cmocka_unit_test(test_small_work_inline),
    };
    return cmocka_run_group_tests_name("load (waits, thread counts, oversubscription)", tests, NULL, NULL);
}
