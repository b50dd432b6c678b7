/* fault_sweep.c - every allocation of every public entry made to fail, one
 * at a time (SQLite's malloc tests): for a scenario (a sequence of public
 * calls on a small problem, ending with everything destroyed) and N = 1,
 * 2, ..., the N-th allocation the library asks for fails. Each run must
 *   - return a clean status: ATA_ERR_NOMEM (or, where a thread could not be
 *     made, what the contract names), with ata_last_error() saying what
 *     failed; or succeed with the same bits as the run with no fault (the
 *     library may recover, e.g. fewer workers, a smaller mapping);
 *   - leave its outputs NULL on failure, never crash, never leak (LSan,
 *     checked after every run);
 *   - leave every object usable or cleanly destroyable: a solve after a
 *     failed update refuses or returns the old factors' answer, never
 *     half-updated ones; the same scenario then passes with no fault.
 * N runs from 1 to the number of requests of the scenario's run without
 * faults (every site it reaches; requests made only on a recovery path
 * are not failed in turn). Built by `make faults` against the ASan/UBSan
 * library with the allocator and pthread_create wrapped at link time
 * (-Wl,--wrap=...): the library's calls reach __wrap_*, the wrapped
 * libraries' own (SuiteSparse, libarchive, libc) do not.
 *
 * FAULT_SAMPLE=K (CI) runs N = 1..8 and then every K-th N; FAULT_ONLY=NAME
 * runs one scenario; FAULT_THREADS=1 sweeps pthread_create instead of the
 * allocator; FAULT_DEVICE=1 runs the scenarios on the CUDA backend (the
 * emulated module, ATA_BACKEND_PATH) and sweeps its device allocations,
 * streams, events and graph instantiations instead (ATA_EMU_FAULT, see
 * kernels/emu/emu.cc). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ata.h"

/* ---- the wrapped allocator ------------------------------------------------ */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg);

static int armed;                 /* count the library's requests */
static int threads_mode;          /* fail pthread_create instead of allocations */
static int device_mode;           /* fail the emulated device's requests instead */
static ata_backend backend = ATA_BACKEND_CPU;
static long fail_at;              /* the request that fails (1-based), 0: none */
static long count;                /* requests seen while armed */
static long hits;                 /* failures injected */

static int fault(int is_thread)
{
    if (!armed || device_mode || is_thread != threads_mode) return 0;
    if (__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) != fail_at) return 0;
    __atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
    return 1;
}

void *__wrap_malloc(size_t n) { return fault(0) ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t s) { return fault(0) ? NULL : __real_calloc(n, s); }
void *__wrap_realloc(void *p, size_t n) { return fault(0) ? NULL : __real_realloc(p, n); }
int __wrap_posix_memalign(void **p, size_t a, size_t n) { return fault(0) ? ENOMEM : __real_posix_memalign(p, a, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { return fault(0) ? NULL : __real_aligned_alloc(a, n); }
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg)
{
    return fault(1) ? EAGAIN : __real_pthread_create(t, a, f, arg);
}

/* ---- scenario plumbing ----------------------------------------------------- */
static char tmpdir[256];
static const char *violation;     /* a broken promise seen inside a scenario */
static char failed_msg[1024];     /* ata_last_error() of the failed call, kept
                                     before later calls (a solve after a
                                     failed update) overwrite it */
static void keep_msg(void) { snprintf(failed_msg, sizeof failed_msg, "%s", ata_last_error()); }
static char violation_buf[512];

#define PROMISE(cond, ...) do { if (!(cond) && !violation) { \
    snprintf(violation_buf, sizeof violation_buf, __VA_ARGS__); violation = violation_buf; } } while (0)
/* A public call inside a scenario: on failure, its output must be NULL and
 * the scenario stops (after its cleanup). */
#define CALL(st_, call_, out_) do { st_ = (call_); \
    if (st_ != ATA_OK) { PROMISE((out_) == NULL, "%s failed (%s) but left its output set", #call_, \
                                 ata_status_string(st_)); goto done; } } while (0)

static uint64_t hash_add(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) { h ^= c[i]; h *= 1099511628211ULL; }
    return h;
}

typedef struct {
    const char *name;
    ata_status (*run)(uint64_t *h);   /* the calls; h: hash of what they computed */
    int device;                       /* also runs on the device (FAULT_DEVICE) */
} scenario;

static ata_csr *matrix(const char *spec)
{
    ata_csr *A = NULL;
    int keep = armed;
    armed = 0;                    /* problem generation is not under test */
    if (ata_gen_from_spec(spec, &A) != ATA_OK) { fprintf(stderr, "faults: %s\n", ata_last_error()); exit(2); }
    armed = keep;
    return A;
}

/* The scenario's context: host faults leave it out (context_create has its
 * own scenario); on the device it is part of what is swept. */
static ata_status context_make(int threads, ata_context **ctx)
{
    ata_context_options o = ata_context_defaults();
    o.backend = backend;
    o.threads = threads;
    *ctx = NULL;
    int keep = armed;
    armed = device_mode ? keep : 0;
    ata_status st = ata_context_create(&o, ctx);
    armed = keep;
    return st;
}

static void fill(double *v, int n, double s)
{
    for (int i = 0; i < n; i++) v[i] = s * (1.0 + (i % 7) * 0.125);
}

/* ---- scenarios ------------------------------------------------------------- */
static ata_status read_file(const char *file, uint64_t *h)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    ata_csr *A = NULL;
    ata_status st;
    CALL(st, ata_matrix_read(path, &A), A);
    *h = hash_add(*h, A->rowptr, (A->nrows + 1) * sizeof(int));
    *h = hash_add(*h, A->col, A->nnz * sizeof(int));
    *h = hash_add(*h, A->val, A->nnz * sizeof(double));
done:
    ata_csr_free(A);
    return st;
}
static ata_status sc_read_mtx(uint64_t *h) { return read_file("m.mtx", h); }
static ata_status sc_read_gz(uint64_t *h) { return read_file("m.mtx.gz", h); }
static ata_status sc_read_tar(uint64_t *h) { return read_file("m.tar.gz", h); }
static ata_status sc_read_rb(uint64_t *h) { return read_file("m.rua", h); }

static ata_status sc_from_coo(uint64_t *h)
{
    const int row[] = { 0, 1, 2, 1, 0, 2, 2 }, col[] = { 0, 1, 2, 0, 2, 0, 2 };
    const double val[] = { 4, 5, 6, -1, -2, -3, 1 };
    ata_csr *A = NULL;
    ata_status st;
    CALL(st, ata_csr_from_coo(3, 3, 7, row, col, val, 1, &A), A);
    *h = hash_add(*h, A->val, A->nnz * sizeof(double));
done:
    ata_csr_free(A);
    return st;
}

static ata_status sc_context(uint64_t *h)
{
    ata_context_options o = ata_context_defaults();
    o.backend = backend;
    o.threads = 3;
    ata_context *ctx = NULL;
    ata_status st;
    CALL(st, ata_context_create(&o, &ctx), ctx);
    *h = hash_add(*h, "ctx", 3);
done:
    ata_context_destroy(ctx);
    return st;
}

/* Push results are not deterministic (atomic accumulation): instead of the
 * hash, each is held to the reference's solve of the same triangle. */
static void push_close(const ata_csr *A, int upper, int transpose, const double *b, const double *x, const char *what)
{
    int keep = armed;
    armed = 0;
    ata_csr *T = NULL, *Tt = NULL;
    const int n = A->nrows;
    double xr[64], e = 0, m = 0;
    if ((upper ? ata_csr_triu(A, &T) : ata_csr_tril(A, &T)) == ATA_OK && (!transpose || ata_csr_transpose(T, &Tt) == ATA_OK)
        && ata_ref_sptrsv_csr(transpose ? Tt : T, upper != transpose ? ATA_UPPER : ATA_LOWER, ATA_NON_UNIT, b, xr) == ATA_OK) {
        for (int i = 0; i < n; i++) { e = fmax(e, fabs(x[i] - xr[i])); m = fmax(m, fabs(xr[i])); }
        PROMISE(e <= 1e-12 * m, "%s: off the reference by %g", what, e / m);
    }
    ata_csr_free(T);
    ata_csr_free(Tt);
    armed = keep;
}

/* A plan per policy and traversal: create, solve, new values, solve, several
 * columns, a transposed solve. */
static ata_status plan_run(ata_policy pol, ata_traversal tr, uint64_t *h)
{
    ata_csr *A = matrix("lap2d:9x7");
    const int n = A->nrows;
    ata_context *ctx = NULL;
    ata_plan_options po = ata_plan_defaults();
    po.policy = pol;
    po.traversal = tr;
    po.S = 4;                     /* fixed: no probes (their timing is not reproducible) */
    ata_plan *p = NULL;
    double b[3 * 63], x[3 * 63];
    fill(b, 3 * n, 1.0);
    ata_status st;
    CALL(st, context_make(2, &ctx), ctx);
    CALL(st, ata_sptrsv_plan_create(ctx, A, &po, &p), p);
    if ((st = ata_sptrsv(p, b, x)) != ATA_OK) goto done;
    if (tr == ATA_PULL) *h = hash_add(*h, x, n * sizeof *x);
    else push_close(A, 0, 0, b, x, "push solve");
    for (int q = 0; q < A->nnz; q++) A->val[q] *= 1.5;
    if ((st = ata_sptrsv_plan_update_values(p, A)) != ATA_OK) goto done;
    if ((st = ata_sptrsv(p, b, x)) != ATA_OK) goto done;
    if (tr == ATA_PULL) *h = hash_add(*h, x, n * sizeof *x);
    else push_close(A, 0, 0, b, x, "push solve after new values");
    if ((st = ata_sptrsv_multi(p, 3, b, n, x, n)) != ATA_OK) goto done;
    if (tr == ATA_PULL) *h = hash_add(*h, x, 3 * n * sizeof *x);
    ata_solve_args ta = ata_solve_defaults();     /* transposed: the plan of T^T, made now */
    ta.transpose = 1;
    if ((st = ata_sptrsv_ex(p, b, x, &ta)) != ATA_OK) goto done;
    if (tr == ATA_PUSH) *h = hash_add(*h, x, n * sizeof *x);   /* (its transposed plan is pull) */
    else push_close(A, 0, 1, b, x, "transposed (push) solve");
    for (int i = 0; i < 3 * n; i++) PROMISE(isfinite(x[i]), "solve gave x[%d] = %g", i, x[i]);
done:
    ata_plan_destroy(p);
    ata_context_destroy(ctx);
    ata_csr_free(A);
    return st;
}
static ata_status sc_plan_ca_pull(uint64_t *h) { return plan_run(ATA_POLICY_CA, ATA_PULL, h); }
static ata_status sc_plan_levelset_push(uint64_t *h) { return plan_run(ATA_POLICY_LEVELSET, ATA_PUSH, h); }
static ata_status sc_plan_chain_pull(uint64_t *h) { return plan_run(ATA_POLICY_CHAIN, ATA_PULL, h); }

static ata_status sc_spilu0(uint64_t *h)
{
    ata_csr *A = matrix("lap2d:8x6"), *LU = NULL;
    ata_context *ctx = NULL;
    ata_plan_options po = ata_plan_defaults();
    po.S = 4;
    ata_status st;
    CALL(st, context_make(2, &ctx), ctx);
    CALL(st, ata_spilu0(ctx, A, &po, &LU), LU);
    *h = hash_add(*h, LU->val, LU->nnz * sizeof(double));
done:
    ata_csr_free(LU);
    ata_context_destroy(ctx);
    ata_csr_free(A);
    return st;
}

/* Factor setup, solve, new values (an update a fault makes fail must leave
 * the handle refusing or on its old factors), solves of one, three and
 * transposed columns. */
static ata_status factor_run(int runtime, ata_precond type, ata_precision prec, uint64_t *h)
{
    ata_csr *A = matrix("lap2d:8x7");
    const int n = A->nrows;
    ata_context *ctx = NULL;
    ata_factor_options fo = ata_factor_defaults();
    fo.type = type;
    fo.plan.S = 4;
    fo.precision = prec;        /* mixed: the plans' float copies, made and refreshed */
    ata_factor *F = NULL;
    double b[3 * 56], x[3 * 56], *v = __real_malloc(A->nnz * sizeof *v);
    fill(b, 3 * n, 1.0);
    ata_status st;
    if (runtime) CALL(st, context_make(2, &ctx), ctx);
    CALL(st, ata_factor_setup(ctx, A, &fo, &F), F);
    if ((st = ata_factor_solve(F, b, x)) != ATA_OK) goto done;
    *h = hash_add(*h, x, n * sizeof *x);
    for (int q = 0; q < A->nnz; q++) v[q] = A->val[q] * 2;
    if ((st = ata_factor_update_values(F, v)) != ATA_OK) {
        keep_msg();
        /* a failed update: the handle is destroyable, and a solve refuses
         * or answers from valid factors (the old ones) */
        double y[56];
        ata_status s2 = ata_factor_solve(F, b, y);
        PROMISE(s2 != ATA_OK || !memcmp(x, y, n * sizeof *y),
                "a solve after a failed update ran on neither the old factors nor refused");
        goto done;
    }
    if ((st = ata_factor_solve(F, b, x)) != ATA_OK) goto done;
    *h = hash_add(*h, x, n * sizeof *x);
    if ((st = ata_factor_solve_multi(F, 3, b, n, x, n)) != ATA_OK) goto done;
    *h = hash_add(*h, x, 3 * n * sizeof *x);
    ata_solve_args ta = ata_solve_defaults();     /* (L U)^T: the plans of U^T and L^T, made now */
    ta.transpose = 1;
    if ((st = ata_factor_solve_ex(F, b, x, &ta)) != ATA_OK) goto done;
    for (int i = 0; i < n; i++) PROMISE(isfinite(x[i]), "transposed factor solve gave x[%d] = %g", i, x[i]);
done:
    ata_factor_destroy(F);
    ata_context_destroy(ctx);
    ata_csr_free(A);
    free(v);
    return st;
}
static ata_status sc_factor_ilu0(uint64_t *h) { return factor_run(1, ATA_PC_ILU0, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_factor_ic0(uint64_t *h) { return factor_run(1, ATA_PC_IC0, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_factor_jacobi(uint64_t *h) { return factor_run(1, ATA_PC_JACOBI, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_factor_ref(uint64_t *h) { return factor_run(0, ATA_PC_ILU0, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_factor_mixed(uint64_t *h) { return factor_run(1, ATA_PC_ILU0, ATA_PRECISION_MIXED, h); }

static ata_status pcg_run(int runtime, ata_reorder ro, ata_ksp method, ata_precision prec, uint64_t *h)
{
    ata_csr *A = matrix("lap2d:10x9");
    const int n = A->nrows;
    ata_context *ctx = NULL;
    ata_pcg_options o = ata_pcg_defaults();
    o.reorder = ro;
    o.method = method;
    o.restart = 5;
    o.plan.S = 4;
    o.keep_history = 1;
    o.precision = prec;     /* mixed: float copies beside the factors the plans borrow */
    ata_pcg_solver *s = NULL;
    ata_pcg_result res;
    memset(&res, 0, sizeof res);
    double b[90], x[90], *v = __real_malloc(A->nnz * sizeof *v);
    fill(b, n, 1.0);
    ata_status st;
    if (runtime) CALL(st, context_make(2, &ctx), ctx);
    CALL(st, ata_pcg_setup(ctx, A, &o, &s), s);
    if ((st = ata_pcg_solve(s, b, x, &res)) != ATA_OK) goto done;
    *h = hash_add(*h, x, n * sizeof *x);
    *h = hash_add(*h, &res.iterations, sizeof res.iterations);
    ata_pcg_result_free(&res);
    for (int q = 0; q < A->nnz; q++) v[q] = A->val[q] * 3;
    if ((st = ata_pcg_update_values(s, v)) != ATA_OK) {
        keep_msg();
        ata_status s2 = ata_pcg_solve(s, b, x, &res);
        PROMISE(s2 != ATA_OK, "pcg solved after a failed update (it must refuse until one succeeds)");
        ata_pcg_result_free(&res);
        goto done;
    }
    if ((st = ata_pcg_solve(s, b, x, &res)) != ATA_OK) goto done;
    *h = hash_add(*h, x, n * sizeof *x);
done:
    ata_pcg_result_free(&res);
    ata_pcg_destroy(s);
    ata_context_destroy(ctx);
    ata_csr_free(A);
    free(v);
    return st;
}
static ata_status sc_pcg(uint64_t *h) { return pcg_run(1, ATA_REORDER_NONE, ATA_KSP_CG, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_pcg_rcm(uint64_t *h) { return pcg_run(1, ATA_REORDER_RCM, ATA_KSP_CG, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_pcg_ref(uint64_t *h) { return pcg_run(0, ATA_REORDER_ND, ATA_KSP_CG, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_bicgstab(uint64_t *h) { return pcg_run(1, ATA_REORDER_NONE, ATA_KSP_BICGSTAB, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_gmres(uint64_t *h) { return pcg_run(1, ATA_REORDER_NONE, ATA_KSP_GMRES, ATA_PRECISION_DOUBLE, h); }
static ata_status sc_pcg_mixed(uint64_t *h) { return pcg_run(1, ATA_REORDER_NONE, ATA_KSP_CG, ATA_PRECISION_MIXED, h); }

static const scenario scenarios[] = {
    { "read_mtx", sc_read_mtx, 0 }, { "read_mtx_gz", sc_read_gz, 0 }, { "read_tar_gz", sc_read_tar, 0 },
    { "read_rb", sc_read_rb, 0 }, { "csr_from_coo", sc_from_coo, 0 }, { "context_create", sc_context, 1 },
    { "plan_ca_pull", sc_plan_ca_pull, 1 }, { "plan_levelset_push", sc_plan_levelset_push, 1 },
    { "plan_chain_pull", sc_plan_chain_pull, 0 }, { "spilu0", sc_spilu0, 1 },
    { "factor_ilu0", sc_factor_ilu0, 1 }, { "factor_ic0", sc_factor_ic0, 1 }, { "factor_jacobi", sc_factor_jacobi, 1 },
    { "factor_reference", sc_factor_ref, 0 }, { "pcg", sc_pcg, 1 }, { "pcg_rcm", sc_pcg_rcm, 1 },
    { "pcg_reference", sc_pcg_ref, 0 }, { "bicgstab", sc_bicgstab, 1 }, { "gmres", sc_gmres, 1 },
    { "factor_ilu0_mixed", sc_factor_mixed, 1 }, { "pcg_mixed", sc_pcg_mixed, 1 },
};

/* ---- inputs for the readers ------------------------------------------------ */
static void sh(const char *fmt, const char *arg)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, fmt, arg, arg, arg, arg);
    if (system(cmd) != 0) { fprintf(stderr, "faults: failed: %s\n", cmd); exit(2); }
}

static void make_inputs(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/ata-faults-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); exit(2); }
    ata_csr *A = matrix("lap2d:6x5");
    char path[400];
    snprintf(path, sizeof path, "%s/m.mtx", tmpdir);
    if (ata_matrix_write_mtx(path, A) != ATA_OK) { fprintf(stderr, "faults: %s\n", ata_last_error()); exit(2); }
    ata_csr_free(A);
    sh("cd '%s' && gzip -c m.mtx > m.mtx.gz && mkdir -p m && cp m.mtx m/m.mtx && tar czf m.tar.gz m", tmpdir);
    /* Rutherford-Boeing, 3 x 3, 4 entries (as the fuzz seeds) */
    snprintf(path, sizeof path, "%s/m.rua", tmpdir);
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); exit(2); }
    fprintf(f, "%-72s%-8s\n%14d%14d%14d%14d\n%-3s%11s%14d%14d%14d%14d\n%-16s%-16s%-20s\n 1 3 4 5\n 1 3 2 3\n 4 1 5 6\n",
            "fault sweep", "key", 4, 1, 1, 1, "rua", "", 3, 3, 4, 0, "(40I2)", "(40I2)", "(40I2)");
    fclose(f);
}

static void remove_inputs(void) { sh("rm -rf '%s'", tmpdir); }

/* ---- the sweep ------------------------------------------------------------- */
static int failed;

static void fail(const scenario *s, long n, const char *what)
{
    fprintf(stderr, "faults: FAIL %s, %s %ld: %s\n", s->name,
            threads_mode ? "thread" : device_mode ? "device request" : "allocation", n, what);
    failed = 1;
}

/* Runs, failing request n (0: none); returns the requests counted. */
static long run_once(const scenario *s, long n, uint64_t *h, ata_status *st)
{
    static long run_id;
    count = 0;
    hits = 0;
    fail_at = n;
    violation = NULL;
    failed_msg[0] = 0;
    *h = 1469598103934665603ULL;
    if (device_mode) {
        char e[64];
        snprintf(e, sizeof e, "%ld:%ld", ++run_id, n);
        setenv("ATA_EMU_FAULT", e, 1);
        setenv("ATA_EMU_FAULT_COUNT", "0", 1);
    }
    armed = 1;
    *st = s->run(h);
    armed = 0;
    if (device_mode) {
        unsetenv("ATA_EMU_FAULT");
        count = atol(getenv("ATA_EMU_FAULT_COUNT"));
        hits = n > 0 && count >= n;
    }
    return count;
}

static long sweep(const scenario *s, long sample, long *runs)
{
    uint64_t h0, h;
    ata_status st;
    long total = run_once(s, 0, &h0, &st);
    if (st != ATA_OK || violation) {
        fail(s, 0, violation ? violation : ata_last_error());
        return 0;
    }
    if (__lsan_do_recoverable_leak_check()) fail(s, 0, "leak with no fault injected");
    long sites = 0;
    for (long n = 1; n <= total; n++) {
        if (sample > 1 && n > 8 && n % sample) continue;
        (*runs)++;
        run_once(s, n, &h, &st);
        const int hit = hits > 0;
        sites += hit;
        if (violation) fail(s, n, violation);
        if (st == ATA_OK) {
            if (h != h0) fail(s, n, "succeeded after a failed request with a different result");
        } else {
            const char *msg = failed_msg[0] ? failed_msg : ata_last_error();
            if (!hit) fail(s, n, "failed with no fault injected");
            else if (!threads_mode && st != ATA_ERR_NOMEM && !(device_mode && st == ATA_ERR_BACKEND)) {
                char m[700];
                snprintf(m, sizeof m, "status %s (expected NOMEM): %s", ata_status_string(st), msg);
                fail(s, n, m);
            } else if (!msg || !*msg) {
                fail(s, n, "no message in ata_last_error()");
            } else if (st == ATA_ERR_NOMEM && !strstr(msg, "memory")) {
                char m[700];
                snprintf(m, sizeof m, "NOMEM whose message does not say so: %s", msg);
                fail(s, n, m);
            }
        }
        if (__lsan_do_recoverable_leak_check()) fail(s, n, "leak (LSan report above)");
        /* the same calls with nothing failing: usable again */
        run_once(s, 0, &h, &st);
        if (st != ATA_OK || h != h0) {
            char m[700];
            snprintf(m, sizeof m, "the next run without faults %s", st != ATA_OK ? ata_last_error() : "gave another result");
            fail(s, n, m);
        }
        if (failed && getenv("FAULT_KEEP_GOING") == NULL) return sites;
    }
    return sites;
}

int main(void)
{
    const char *only = getenv("FAULT_ONLY"), *samp = getenv("FAULT_SAMPLE");
    threads_mode = getenv("FAULT_THREADS") && atoi(getenv("FAULT_THREADS")) > 0;
    device_mode = getenv("FAULT_DEVICE") && atoi(getenv("FAULT_DEVICE")) > 0;
    if (device_mode) backend = ATA_BACKEND_CUDA;
    long sample = samp ? atol(samp) : 1, runs = 0, sites = 0;
    setenv("ATA_PROBE_CACHE", "0", 1);
    make_inputs();
    int nsc = 0;
    for (size_t k = 0; k < sizeof scenarios / sizeof *scenarios; k++) {
        const scenario *s = &scenarios[k];
        if ((only && strcmp(only, s->name)) || (device_mode && !s->device)) continue;
        long r0 = runs, st = sweep(s, sample, &runs);
        sites += st;
        nsc++;
        printf("faults: %-20s %4ld %s failed one at a time, %4ld runs%s\n", s->name, st,
               threads_mode ? "thread creations" : device_mode ? "device requests" : "allocations", runs - r0, failed ? "  FAILED" : "");
        fflush(stdout);
        if (failed && getenv("FAULT_KEEP_GOING") == NULL) break;
    }
    remove_inputs();
    printf("faults: %d scenarios, %ld injected %s, %ld runs%s: %s\n", nsc, sites,
           threads_mode ? "thread failures" : device_mode ? "device failures" : "allocation failures", runs,
           sample > 1 ? " (sampled)" : "", failed ? "FAILED" : "clean");
    return failed;
}
