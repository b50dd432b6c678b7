/* test_gpu.c - the GPU backend of the build (CUDA, HIP, or the host SIMT
 * emulator standing in for one): the backend-vs-reference suite
 * (backend_suite.c: every policy incl. vendor x pull/push x lower/upper x
 * unit/non-unit, real and generated matrices, ILU0, many plans, a corrupted
 * plan must time out, the vector kernels against the device's own SpMV,
 * PCG) instantiated for the GPU, plus what only the GPU backend has:
 * sub-warp group widths, graphs on/off, the epoch wrap, device pointers and
 * streams, large problems. Pull and ILU0 must be bitwise equal to the
 * reference; push within 1e-12; vendor (cuSPARSE / hipSPARSE) within a
 * backward-error bound. Without a device: one loud SKIPPED line, and every
 * test reports skipped (a failure when ATA_GPU_TEST_REQUIRE is set). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend_suite.h"
#include "../kernels/emu/emu_counts.h"
#include "../kernels/gpu_kernels.h"
/* gpu_port.h's ATA_X_SENTINEL_BITS (a device header; its value, kept in step) */
#define ATA_X_SENTINEL_BITS_FOR_TESTS 0x7FF0DEAD0000A7A5ull

#if defined(ATA_HAVE_HIP)
#define GPU_BACKEND ATA_BACKEND_HIP
#define GPU_NAME "HIP"
#define GPU_COUNT_CALL "hipGetDeviceCount"
#define GPU_FULL_WARP 64
#else
#define GPU_BACKEND ATA_BACKEND_CUDA
#define GPU_NAME "CUDA"
#define GPU_COUNT_CALL "cudaGetDeviceCount"
#define GPU_FULL_WARP 32
#endif

/* ATA_GPU_TEST_SIZE=small (make gpu-emu: the emulator runs every kernel on
 * the CPU, lane by lane): the 10^6-unknown problems are left out, and every
 * other test runs a sample of its cases (every third real matrix, fewer
 * generated problems and group widths, a smaller PCG problem). Every kind of
 * case stays: all policies, pull and push, lower and upper, ILU0, PCG, the
 * corrupt-plan timeout, many plans, the epoch wrap. ATA_GPU_TEST_SIZE=tiny
 * (make gpu-emu-tsan, ~20x slower under ThreadSanitizer): the memory-order
 * checks only: one generated matrix through every policy, pull/push,
 * lower/upper; ILU0 on one; the vector kernels; many plans; the epoch wrap.
 * main() sets the size and `available` in gpu_backend. */
static const ata_policy gpu_policies[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA,
                                           ATA_POLICY_LA, ATA_POLICY_GREEDY, ATA_POLICY_VENDOR };
#define NPOL (int)(sizeof gpu_policies / sizeof *gpu_policies)
#define NPOL_ATA (NPOL - 1)

/* A row dropped from the device schedule leaves its successors waiting
 * forever: the kernel's bounded spin must end the solve (never hang the
 * GPU). */
static void gpu_corrupt(ata_plan *p)
{
    p->sched.order[1] = p->sched.order[0];      /* row order[1] never runs */
    TU_OK(p->ctx->ops->plan_upload(p));         /* send the broken schedule */
}

static bs_backend gpu_backend = {
    .name = GPU_NAME, .backend = GPU_BACKEND, .threads = 0,
    .pols = gpu_policies, .npol = NPOL, .npol_ata = NPOL_ATA,
    .corrupt = gpu_corrupt, .corrupt_pols = { ATA_POLICY_SYNCFREE, ATA_POLICY_CA }, .ncorrupt_pols = 2,
    .corrupt_S = 20, .corrupt_threads = { 0, 0 },
};

static ata_context *make_ctx(double timeout)
{
    return bs_context(&gpu_backend, 0, timeout);
}

/* A context with ATA_GPU_GROUP / ATA_GPU_GRAPH / ATA_GPU_WAIT /
 * ATA_GPU_MAP set while it is made (the backend reads them once, at context
 * creation); NULL leaves one as it is. */
static ata_context *make_ctx_pcg(const char *group, const char *graph, const char *wait, const char *map,
                                 const char *pcg)
{
    const char *names[] = { "ATA_GPU_GROUP", "ATA_GPU_GRAPH", "ATA_GPU_WAIT", "ATA_GPU_MAP", "ATA_GPU_PCG" };
    const char *vals[] = { group, graph, wait, map, pcg };
    char *old[5];
    for (int k = 0; k < 5; k++) {
        const char *o = getenv(names[k]);
        old[k] = o ? strdup(o) : NULL;
        if (vals[k]) setenv(names[k], vals[k], 1);
    }
    ata_context *ctx = make_ctx(10);
    for (int k = 0; k < 5; k++) {
        if (old[k]) setenv(names[k], old[k], 1);
        else unsetenv(names[k]);
        free(old[k]);
    }
    return ctx;
}

static ata_context *make_ctx_mech(const char *group, const char *graph, const char *wait, const char *map)
{
    return make_ctx_pcg(group, graph, wait, map, NULL);
}

static ata_context *make_ctx_env(const char *group, const char *graph)
{
    return make_ctx_mech(group, graph, NULL, NULL);
}

/* Today's mechanisms stay selectable until a GPU run decides
 * (ATA_GPU_WAIT=flag|value, ATA_GPU_MAP=fixed|elastic): each pairing gives
 * the reference's answer on a grid, a circuit with hubs and a permuted
 * 27-point matrix, every policy, pull and push, lower and upper. */
static void test_mechanisms(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    const char *waits[] = { "flag", "value" }, *maps[] = { "fixed", "elastic" };
    const char *specs[] = { "lap3d:9", "circuit:1500", "lap3d27:5,perm=2" };
    for (int w = 0; w < 2; w++)
        for (int m = 0; m < 2; m++) {
            ata_context *ctx = make_ctx_mech(NULL, NULL, waits[w], maps[m]);
            const int keep = tu_pull_split_above;
            if (m == 0) tu_pull_split_above = 0;      /* the fixed map splits no row: bitwise */
            for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
                if (gpu_backend.small && s != (size_t)(w + m) % 3) continue;
                ata_csr *A;
                TU_OK(ata_gen_from_spec(specs[s], &A));
                char name[96];
                snprintf(name, sizeof name, "%s (wait %s, map %s)", specs[s], waits[w], maps[m]);
                /* tiny (TSan): the waiting policies only */
                static const ata_policy waiting[] = { ATA_POLICY_SYNCFREE, ATA_POLICY_CA };
                tu_check_sweep(ctx, A, name, 40, gpu_backend.tiny ? waiting : gpu_policies,
                               gpu_backend.tiny ? 2 : NPOL_ATA);
                ata_csr_free(A);
            }
            tu_pull_split_above = keep;
            ata_context_destroy(ctx);
        }
    /* The wait on the value: a b_0 with the sentinel's own bits passes
     * through row 0 (unit diagonal, no predecessor) unchanged; it must be
     * published as a NaN all the same (not taken for "not solved yet",
     * which would leave every successor waiting), and named. */
    for (int m = 0; m < 2; m++) {
        ata_context *ctx = make_ctx_mech(NULL, NULL, "value", maps[m]);
        ata_csr *A;
        TU_OK(ata_gen_from_spec("lap2d:12", &A));
        ata_plan_options po = ata_plan_defaults();
        po.policy = ATA_POLICY_SYNCFREE;
        po.diag = ATA_UNIT;
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
        double *b = malloc(A->nrows * sizeof *b), *x = malloc(A->nrows * sizeof *x);
        for (int i = 0; i < A->nrows; i++) b[i] = 1.0;
        const uint64_t bits = ATA_X_SENTINEL_BITS_FOR_TESTS;
        memcpy(&b[0], &bits, sizeof bits);
        assert_int_equal(ata_sptrsv(p, b, x), ATA_ERR_NONFINITE);
        assert_non_null(strstr(ata_last_error(), "row 0"));
        b[0] = 1.0;
        TU_OK(ata_sptrsv(p, b, x));             /* and the next solve is whole again */
        free(b); free(x);
        ata_plan_destroy(p);
        ata_csr_free(A);
        ata_context_destroy(ctx);
    }
    /* a value of the environment that means nothing is refused at creation */
    setenv("ATA_GPU_WAIT", "sometimes", 1);
    ata_context_options o = ata_context_defaults();
    o.backend = GPU_BACKEND;
    ata_context *ctx = NULL;
    assert_int_equal(ata_context_create(&o, &ctx), ATA_ERR_ARG);
    assert_non_null(strstr(ata_last_error(), "ATA_GPU_WAIT"));
    unsetenv("ATA_GPU_WAIT");
    /* ATA_GPU_BACKOFF: pausing from the first idle round on still gives the
     * reference's answers (waits only get slower); nonsense is refused */
    setenv("ATA_GPU_BACKOFF", "0:200", 1);
    ctx = make_ctx(10);
    assert_non_null(ctx);
    ata_csr *C;
    TU_OK(ata_gen_from_spec("circuit:1500", &C));
    static const ata_policy waiting[] = { ATA_POLICY_SYNCFREE, ATA_POLICY_CA };
    tu_check_sweep(ctx, C, "circuit:1500 (ATA_GPU_BACKOFF=0:200)", 40, waiting, 2);
    ata_csr_free(C);
    ata_context_destroy(ctx);
    const char *bad[] = { "fast", "32", "32:0", "8:64x", "-1:64", "+8:64", " 8:64", "8:-64", "4294967297:64" };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        setenv("ATA_GPU_BACKOFF", bad[k], 1);
        ctx = NULL;
        assert_int_equal(ata_context_create(&o, &ctx), ATA_ERR_ARG);
        assert_non_null(strstr(ata_last_error(), "ATA_GPU_BACKOFF"));
    }
    unsetenv("ATA_GPU_BACKOFF");
}

/* Every sub-warp width (1 lane per row up to the whole warp), with and
 * without graphs: the same bits. */
static void test_group_widths(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    BS_TINY_SKIP(&gpu_backend);
    const char *widths[] = { "1", "2", "4", "8", "16", GPU_FULL_WARP == 64 ? "64" : "32" };
    const char *specs_full[] = { "lap3d:12,perm=3", "circuit:5000", "lap3d27:8" };
    const char *specs_small[] = { "lap3d:8,perm=3", "circuit:1500", "lap3d27:6" };
    const char *const *specs = gpu_backend.small ? specs_small : specs_full;
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        for (int graph = 0; graph < 2; graph++) {
            if (gpu_backend.small && w % 2 == 0 && w + 1 != sizeof widths / sizeof *widths) continue;  /* 2, 8, full */
            ata_context *ctx = make_ctx_env(widths[w], graph ? "1" : "0");
            for (size_t s = 0; s < 3; s++) {
                if (gpu_backend.small && s != (w + graph) % 3) continue;
                ata_csr *A;
                TU_OK(ata_gen_from_spec(specs[s], &A));
                char name[96];
                snprintf(name, sizeof name, "%s (group %s, graph %d)", specs[s], widths[w], graph);
                tu_check_sweep(ctx, A, name, 40, gpu_policies, NPOL_ATA);
                ata_csr_free(A);
            }
            ata_context_destroy(ctx);
        }
}

/* PCG on the device (ATA_GPU_PCG=device, the default) against the host
 * loop on the same backend (ATA_GPU_PCG=host): the same iterations (p'Ap
 * is summed in another order, so within one) and x within 1e-8, with ILU0,
 * Jacobi and none, graphs on and off; a preconditioner that is not positive
 * definite, A not positive definite and maxit end both the same way (the
 * device stops where CG stops); with the emulated module's counts, at most
 * one host synchronisation per 4 iterations. */
static void test_device_pcg(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    ata_csr *A;
    TU_OK(ata_gen_from_spec(gpu_backend.tiny ? "lap2d:16,perm=3" : "lap2d:40,perm=3", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *xd = malloc(n * sizeof *xd), *xh = malloc(n * sizeof *xh);
    for (int i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.125;
    const ata_precond pcs[] = { ATA_PC_ILU0, ATA_PC_JACOBI, ATA_PC_NONE };
    const char *graphs[] = { "1", "0" };
    for (int gr = 0; gr < 2; gr++) {
        if (gpu_backend.tiny && gr) break;
        ata_context *cd = make_ctx_pcg(NULL, graphs[gr], NULL, NULL, "device");
        ata_context *ch = make_ctx_pcg(NULL, graphs[gr], NULL, NULL, "host");
        for (int k = 0; k < 3; k++) {
            if (gpu_backend.tiny && k >= 1) break;      /* TSan: ILU0 */
            ata_pcg_options o = ata_pcg_defaults();
            o.precond = pcs[k];
            o.plan.policy = k == 1 ? ATA_POLICY_LEVELSET : ATA_POLICY_SYNCFREE;
            o.keep_history = 1;
            ata_pcg_result rd, rh;
            memset(xd, 0, n * sizeof *xd);
            memset(xh, 0, n * sizeof *xh);
            TU_OK(ata_pcg(cd, A, b, xd, &o, &rd));
            TU_OK(ata_pcg(ch, A, b, xh, &o, &rh));
            printf("device pcg (%s, graph %s): %d iterations, host loop %d; relres %.3e / %.3e\n",
                   ata_precond_name(pcs[k]), graphs[gr], rd.iterations, rh.iterations, rd.relres, rh.relres);
            assert_true(abs(rd.iterations - rh.iterations) <= 1);
            assert_true(rd.relres <= 1e-6 && rd.history_len == rd.iterations + 1);
            assert_true(rd.history[0] == rh.history[0]);   /* iteration 0 has no p'Ap: the same bits */
            assert_true(tu_rel_diff2(xd, xh, n) <= 1e-8);
            ata_pcg_result_free(&rd);
            ata_pcg_result_free(&rh);
        }
        /* stops: maxit, a matrix that is not positive definite */
        ata_csr *B;
        TU_OK(ata_csr_copy(A, &B));
        for (int i = 0; i < n; i++)
            for (int q = B->rowptr[i]; q < B->rowptr[i + 1]; q++)
                if (B->col[q] == i && i % 5 == 2) B->val[q] = -B->val[q];
        for (int c = 0; c < 3; c++) {
            if (gpu_backend.tiny && c < 2) continue;    /* TSan: the device's own stop only */
            ata_pcg_options o = ata_pcg_defaults();
            o.plan.policy = ATA_POLICY_SYNCFREE;
            if (c == 0) o.maxit = 5;
            if (c == 2) o.precond = ATA_PC_NONE;
            const ata_csr *M = c ? B : A;
            ata_pcg_result rd, rh;
            memset(xd, 0, n * sizeof *xd);
            memset(xh, 0, n * sizeof *xh);
            const ata_status sd = ata_pcg(cd, M, b, xd, &o, &rd);
            const ata_status sh = ata_pcg(ch, M, b, xh, &o, &rh);
            printf("device pcg stop %d: %s at %d (host loop: %s at %d)\n", c, ata_status_string(sd), rd.iterations,
                   ata_status_string(sh), rh.iterations);
            assert_int_equal(sd, sh);
            assert_true(sd != ATA_OK);
            assert_int_equal(rd.iterations, rh.iterations);
            ata_pcg_result_free(&rd);
            ata_pcg_result_free(&rh);
        }
        ata_csr_free(B);
        ata_context_destroy(cd);
        ata_context_destroy(ch);
    }
    /* host synchronisations: one per batch of iterations, and the end */
    ata_emu_counts_fn counts = ata_emu_counts_find();
    if (counts && !gpu_backend.tiny) {
        ata_context *cd = make_ctx_pcg(NULL, NULL, NULL, NULL, "device");
        ata_pcg_options o = ata_pcg_defaults();
        o.precond = ATA_PC_JACOBI;
        ata_pcg_solver *s;
        TU_OK(ata_pcg_setup(cd, A, &o, &s));
        ata_pcg_result r;
        ata_emu_counts c;
        counts(NULL, 1);
        TU_OK(ata_pcg_solve(s, b, xd, &r));
        counts(&c, 1);
        printf("device pcg, Jacobi: %d iterations, %lld host synchronisations, %lld launches\n", r.iterations,
               c.host_syncs, c.launches);
        assert_true(r.iterations >= 40);
        assert_true(4 * c.host_syncs <= r.iterations);
        ata_pcg_result_free(&r);
        ata_pcg_destroy(s);
        ata_context_destroy(cd);
    }
    free(b); free(xd); free(xh);
    ata_csr_free(A);
}

/* A matrix with every row class of the elastic map (gpu_kernels.h): a
 * chain (rows that depend on the row before: thread-per-row windows that
 * forward values between their lanes), rows of 0..4W predecessors (a thread
 * each, then groups of 2 .. W lanes over several stages), and hub rows of
 * up to 3 x ATA_GPU_HUB predecessors (split between a warp), and a row
 * every mixed row depends on (a hub of the upper solves); symmetric
 * pattern, diagonally dominant. */
static ata_csr *classes_matrix(int W, int mixed, int chain0)
{
    const int chain = chain0 + ATA_GPU_HUB(W), hubs = 3, n = chain + mixed + hubs;
    const int hub_len = 3 * ATA_GPU_HUB(W) < n - hubs ? 3 * ATA_GPU_HUB(W) : n - hubs;
    int cap = 2 * (2 * chain + mixed * (4 * W + 1) + hubs * hub_len) + n, nz = 0;
    int *ri = malloc(cap * sizeof *ri), *ci = malloc(cap * sizeof *ci);
    double *v = malloc(cap * sizeof *v);
    uint64_t r = 12345;
#define NEXT() (r = r * 6364136223846793005ull + 1442695040888963407ull, (int)(r >> 33))
#define ADD(i, j, x) do { ri[nz] = (i); ci[nz] = (j); v[nz++] = (x); ri[nz] = (j); ci[nz] = (i); v[nz++] = (x); } while (0)
    for (int i = 1; i < chain; i++) {
        ADD(i, i - 1, -0.5);
        if (i > 8) ADD(i, 7, -0.25 / chain);      /* row 7's upper row: a hub */
    }
    for (int i = chain; i < chain + mixed; i++) {
        const int k = (i - chain) * 7 % (4 * W + 1);     /* 0 .. 4W predecessors */
        for (int m = 0; m < k; m++) ADD(i, i - 1 - m * (i - 1) / (k > 1 ? k : 1) % i, -0.25 / (k + 1));
        ADD(i, 7, -0.25 / mixed);       /* row 7's upper row: a hub of the upper solves */
    }
    for (int h = 0; h < hubs; h++) {
        const int i = chain + mixed + h;
        for (int m = 0; m < hub_len; m++) ADD(i, (int)((long long)m * (i - 1) / hub_len), -0.25 / hub_len);
    }
    for (int i = 0; i < n; i++) { ri[nz] = i; ci[nz] = i; v[nz++] = 4.0 + (NEXT() % 100) / 100.0; }
#undef ADD
#undef NEXT
    ata_csr *A;
    TU_OK(ata_csr_from_coo(n, n, nz, ri, ci, v, 1, &A));
    free(ri); free(ci); free(v);
    return A;
}

/* The elastic map on every row class, both waits: pull bitwise where no
 * row is split, within 1e-12 where hubs are; push within 1e-12. */
static void test_elastic_classes(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    ata_csr *A = classes_matrix(GPU_FULL_WARP, gpu_backend.tiny ? 40 : gpu_backend.small ? 150 : 600,
                                gpu_backend.tiny ? 20 : 300);
    assert_true(tu_pull_splits(A, ATA_LOWER) && tu_pull_splits(A, ATA_UPPER));
    const char *waits[] = { "value", "flag" };
    /* small: one tracked and one untracked policy (the emulator is slow on
     * the wide groups' ordered sums) */
    static const ata_policy two[] = { ATA_POLICY_SYNCFREE, ATA_POLICY_LEVELSET };
    for (int w = 0; w < 2; w++) {
        if (gpu_backend.tiny && w) break;
        ata_context *ctx = make_ctx_mech(NULL, NULL, waits[w], "elastic");
        char name[64];
        snprintf(name, sizeof name, "row classes (wait %s)", waits[w]);
        tu_check_sweep(ctx, A, name, gpu_backend.small ? 0 : 60, gpu_backend.small ? two : gpu_policies,
                       gpu_backend.tiny ? 1 : gpu_backend.small ? 2 : NPOL_ATA);
        ata_context_destroy(ctx);
    }
    ata_csr_free(A);
}

/* Hubs longer than ATA_GPU_BLOCK_HUB, which the elastic map splits over a
 * whole block: row L of the lower triangle has L predecessors (0 .. L-1),
 * row 0 of the upper one L - 1 successors; short chains (64 rows) below
 * the lower hub and a tail of `tail` rows after it, each depending on the
 * hub and on the row before. Symmetric, diagonally dominant. */
static ata_csr *hub_matrix(int L, int tail)
{
    const int n = L + 1 + tail, cap = 2 * (3 * L + 2 * tail) + n;
    int *ri = malloc(cap * sizeof *ri), *ci = malloc(cap * sizeof *ci), nz = 0;
    double *v = malloc(cap * sizeof *v);
#define ADD(i, j, x) do { ri[nz] = (i); ci[nz] = (j); v[nz++] = (x); ri[nz] = (j); ci[nz] = (i); v[nz++] = (x); } while (0)
    for (int i = 1; i < L; i++) {
        if (i % 64) ADD(i, i - 1, -0.5);
        if (i > 1) ADD(i, 0, -0.25 / L);                /* the upper hub, row 0 */
        ADD(L, i, -(1.0 + i % 7) / (8.0 * L));          /* the lower hub, row L */
    }
    for (int i = L + 1; i < n; i++) {
        ADD(i, L, -0.25 / tail);
        ADD(i, i - 1, -0.5);
    }
    for (int i = 0; i < n; i++) { ri[nz] = i; ci[nz] = i; v[nz++] = 4.0 + (i % 13) / 16.0; }
#undef ADD
    ata_csr *A;
    TU_OK(ata_csr_from_coo(n, n, nz, ri, ci, v, 1, &A));
    free(ri); free(ci); free(v);
    return A;
}

/* A hub split over a block (ATA_GPU_MAP=elastic) against the reference:
 * pull within 1e-12, the same bits on a second solve (the warps' partials
 * meet in a fixed tree, whatever their timing); the hub on one warp
 * (elastic-warp) the same way. Then PCG (its SpMV sums the hub rows a
 * block each) against the fixed map's. */
static void test_block_hubs(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    const int L = gpu_backend.tiny ? ATA_GPU_BLOCK_HUB + 100 : 20000;
    ata_csr *A = hub_matrix(L, gpu_backend.tiny ? 8 : 64);
    const int n = A->nrows;
    assert_true(A->rowptr[L + 1] - A->rowptr[L] > ATA_GPU_BLOCK_HUB);
    static const ata_policy pols[] = { ATA_POLICY_SYNCFREE, ATA_POLICY_LEVELSET, ATA_POLICY_CA };
    const char *maps[] = { "elastic", "elastic-warp" };
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *x2 = malloc(n * sizeof *x2);
    double *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 7);
    for (int m = 0; m < 2; m++) {
        if (gpu_backend.tiny && m) break;
        ata_context *ctx = make_ctx_mech(NULL, NULL, NULL, maps[m]);
        for (int u = 0; u < 2; u++)
            for (size_t k = 0; k < sizeof pols / sizeof *pols; k++) {
                if (gpu_backend.tiny && k == 2) continue;
                ata_plan_options po = ata_plan_defaults();
                po.policy = pols[k];
                po.uplo = u ? ATA_UPPER : ATA_LOWER;
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
                TU_OK(ata_sptrsv(p, b, x));
                TU_OK(ata_sptrsv(p, b, x2));
                TU_OK(ata_ref_sptrsv_csr(A, po.uplo, ATA_NON_UNIT, b, xr));
                const double d = tu_rel_diff2(x, xr, n);
                printf("hub of %d entries (map %s, %s, %s): relative difference %.2e\n", L, maps[m],
                       ata_policy_name(po.policy), u ? "upper" : "lower", d);
                assert_true(d <= 1e-12);
                assert_memory_equal(x, x2, n * sizeof *x);
                ata_plan_destroy(p);
            }
        ata_context_destroy(ctx);
    }
    /* SpMV: PCG (Jacobi) with hub rows summed a block each vs the fixed map */
    ata_context *ce = make_ctx_mech(NULL, NULL, NULL, "elastic"), *cf = make_ctx_mech(NULL, NULL, NULL, "fixed");
    ata_pcg_options o = ata_pcg_defaults();
    o.precond = ATA_PC_JACOBI;
    ata_pcg_result re, rf;
    memset(x, 0, n * sizeof *x);
    memset(x2, 0, n * sizeof *x2);
    TU_OK(ata_pcg(ce, A, b, x, &o, &re));
    TU_OK(ata_pcg(cf, A, b, x2, &o, &rf));
    printf("hub pcg: %d iterations (fixed map %d), x differs by %.2e\n", re.iterations, rf.iterations,
           tu_rel_diff2(x, x2, n));
    assert_true(abs(re.iterations - rf.iterations) <= 1);
    assert_true(tu_rel_diff2(x, x2, n) <= 1e-8);
    ata_pcg_result_free(&re);
    ata_pcg_result_free(&rf);
    ata_context_destroy(ce);
    ata_context_destroy(cf);
    free(b); free(x); free(x2); free(xr);
    ata_csr_free(A);
}

/* Problems that fill the GPU (10^6 unknowns): pull bitwise, push 1e-12. */
static void test_large(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    if (gpu_backend.small) {
        printf("test_large: left out (ATA_GPU_TEST_SIZE=small)\n");
        skip();
        return;
    }
    const char *specs[] = { "lap3d:100", "lap2d:1000,perm=5", "circuit:1000000" };
    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_VENDOR };
    ata_context *ctx = make_ctx(30);
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        tu_problem pb;
        tu_problem_make(&pb, specs[s], 5);
        for (size_t k = 0; k < sizeof pols / sizeof *pols; k++)
            for (int t = 0; t < 2; t++) {
                ata_plan_options po = ata_plan_defaults();
                po.policy = pols[k];
                po.traversal = t ? ATA_PUSH : ATA_PULL;
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, pb.A, &po, &p));
                memset(pb.x, 0xff, pb.n * sizeof *pb.x);
                TU_OK(ata_sptrsv(p, pb.b, pb.x));
                tu_check_solution(pb.A, specs[s], &po, pb.b, pb.x, pb.xr, pb.n);
                ata_plan_info in;
                TU_OK(ata_plan_get_info(p, &in));
                printf("%-22s %-8s %s: S=%d atasks=%d untracked=%d levels=%d T_l=%.2e T_u=%.2e\n", specs[s],
                       ata_policy_name(po.policy), t ? "push" : "pull", in.S, in.atasks, in.untracked, in.levels,
                       in.T_l, in.T_u);
                ata_plan_destroy(p);
            }
        tu_problem_free(&pb);
    }
    ata_context_destroy(ctx);
}

/* The device epoch wraps after 2^32 solves of a plan. ATA_GPU_EPOCH0 starts
 * plans at epoch 2^32 - 1 with every done flag at 1 (as if written 2^32
 * solves ago): the next solve must forget them, or every row would look
 * done at once and read unsolved predecessors. */
static void test_epoch_wrap(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    setenv("ATA_GPU_EPOCH0", "4294967295", 1);
    ata_context *ctx = make_ctx_mech(NULL, NULL, "flag", NULL);   /* the value wait keeps no epoch */
    unsetenv("ATA_GPU_EPOCH0");
    tu_problem pb;
    tu_problem_make(&pb, "lap2d:30", 4);
    const ata_policy pols[] = { ATA_POLICY_SYNCFREE, ATA_POLICY_CA };
    for (int k = 0; k < 2; k++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = pols[k];
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(ctx, pb.A, &po, &p));
        for (int r = 0; r < 3; r++) {           /* epochs 1, 2, 3 after the wrap */
            memset(pb.x, 0xff, pb.n * sizeof *pb.x);
            TU_OK(ata_sptrsv(p, pb.b, pb.x));
            if (memcmp(pb.x, pb.xr, pb.n * sizeof *pb.x) != 0)
                fail_msg("%s, solve %d after the epoch wrap: rel diff %g", ata_policy_name(po.policy), r,
                         tu_rel_diff(pb.x, pb.xr, pb.n));
        }
        ata_plan_destroy(p);
    }
    tu_problem_free(&pb);
    ata_context_destroy(ctx);
}

static void test_context_errors(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    ata_context_options o = ata_context_defaults();
    o.backend = GPU_BACKEND;
    o.device = 999;
    ata_context *ctx = NULL;
    assert_int_equal(ata_context_create(&o, &ctx), ATA_ERR_BACKEND);
    assert_non_null(strstr(ata_last_error(), "999"));
    assert_true(ata_backend_available(GPU_BACKEND));
    /* a CPU-only policy is refused, naming it, by plans and by PCG */
    ctx = make_ctx(10);
    ata_csr *A;
    TU_OK(ata_gen_laplace2d(6, 6, &A));
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_CHAIN;
    ata_plan *p = NULL;
    assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &p), ATA_ERR_UNSUPPORTED);
    assert_non_null(strstr(ata_last_error(), "chain"));
    po = ata_plan_defaults();       /* the kernels divide: the reciprocal diagonal is CPU only */
    po.diag = ATA_NON_UNIT_INV;
    assert_int_equal(ata_sptrsv_plan_create(ctx, A, &po, &p), ATA_ERR_UNSUPPORTED);
    assert_non_null(strstr(ata_last_error(), "ATA_NON_UNIT_INV"));
    ata_pcg_options pco = ata_pcg_defaults();
    pco.plan.policy = ATA_POLICY_CHAIN;
    ata_pcg_solver *s = NULL;
    assert_int_equal(ata_pcg_setup(ctx, A, &pco, &s), ATA_ERR_UNSUPPORTED);
    assert_null(s);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* Device pointers and streams (ata_sptrsv_ex, ata_factor_solve_ex, ata_vec_*):
 * the same bits as the host path and the reference (pull), several columns
 * with a leading dimension, the caller's stream (CUDA), and a non-finite
 * row found on the device and named. */
static void test_device_pointers(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    ata_context *ctx = make_ctx(10);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:60,perm=7", &A));
    const int n = A->nrows, K = 3, ld = n + 5;
    double *hb = malloc((size_t)ld * K * sizeof *hb), *hx = malloc((size_t)ld * K * sizeof *hx),
           *xr = malloc((size_t)n * sizeof *xr);
    for (int c = 0; c < K; c++) tu_random_vec(hb + (size_t)c * ld, n, 20 + c);
    double *db, *dx;
    TU_OK(ata_vec_alloc(ctx, (size_t)ld * K, &db));
    TU_OK(ata_vec_alloc(ctx, (size_t)ld * K, &dx));
    TU_OK(ata_vec_upload(ctx, db, hb, (size_t)ld * K));
    void *stream = NULL;
#if defined(ATA_HAVE_CUDA) && !defined(ATA_HAVE_HIP) && !defined(ATA_EMU)
    /* a stream of the caller's (test_gpu links the CUDA runtime; the emulator
     * runs the default stream only here) */
    extern int cudaStreamCreate(void **s);
    extern int cudaStreamDestroy(void *s);
    if (cudaStreamCreate(&stream) != 0) stream = NULL;
#endif
    for (int up = 0; up < 2; up++)
        for (int k = 0; k < NPOL; k++) {
            ata_plan_options po = ata_plan_defaults();
            po.policy = gpu_policies[k];
            po.uplo = up ? ATA_UPPER : ATA_LOWER;
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
            for (int st = 0; st < 2; st++) {
                ata_solve_args sa = ata_solve_defaults();
                sa.mem = ATA_MEM_DEVICE;
                sa.stream = st ? stream : NULL;
                sa.nrhs = K;
                sa.ldb = sa.ldx = ld;
                TU_OK(ata_sptrsv_ex(p, db, dx, &sa));
                TU_OK(ata_vec_download(ctx, hx, dx, (size_t)ld * K));
                for (int c = 0; c < K; c++) {
                    TU_OK(ata_ref_sptrsv_csr(A, po.uplo, ATA_NON_UNIT, hb + (size_t)c * ld, xr));
                    tu_check_solution(A, "device pointers", &po, hb + (size_t)c * ld, hx + (size_t)c * ld, xr, n);
                }
            }
            ata_plan_destroy(p);
        }
    /* a NaN in b at row 7 of column 1: the device finds it, the row is named */
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, A, NULL, &p));
    hb[ld + 7] = NAN;
    TU_OK(ata_vec_upload(ctx, db, hb, (size_t)ld * K));
    ata_solve_args sa = ata_solve_defaults();
    sa.mem = ATA_MEM_DEVICE;
    sa.nrhs = K;
    sa.ldb = sa.ldx = ld;
    assert_int_equal(ata_sptrsv_ex(p, db, dx, &sa), ATA_ERR_NONFINITE);
    assert_non_null(strstr(ata_last_error(), "row "));
    hb[ld + 7] = 1;
    TU_OK(ata_vec_upload(ctx, db, hb, (size_t)ld * K));
    ata_plan_destroy(p);
    /* the factor on device pointers equals its host solve */
    ata_factor *F;
    TU_OK(ata_factor_setup(ctx, A, NULL, &F));
    sa.nrhs = 1;
    sa.stream = stream;
    TU_OK(ata_factor_solve_ex(F, db, dx, &sa));
    TU_OK(ata_vec_download(ctx, hx, dx, (size_t)n));
    TU_OK(ata_factor_solve(F, hb, xr));
    assert_memory_equal(hx, xr, (size_t)n * sizeof *xr);
    ata_factor_destroy(F);
#if defined(ATA_HAVE_CUDA) && !defined(ATA_HAVE_HIP) && !defined(ATA_EMU)
    if (stream) cudaStreamDestroy(stream);
#endif
    ata_vec_free(ctx, db);
    ata_vec_free(ctx, dx);
    free(hb); free(hx); free(xr);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* One solve of plan p, counted by the emulated module. */
static void counted_solve(ata_emu_counts_fn counts, ata_plan *p, tu_problem *pb, ata_emu_counts *c)
{
    memset(pb->x, 0xff, pb->n * sizeof *pb->x);
    counts(NULL, 1);
    TU_OK(ata_sptrsv(p, pb->b, pb->x));
    counts(c, 1);
    assert_memory_equal(pb->x, pb->xr, pb->n * sizeof *pb->x);
}

/* The emulated module counts its work (kernels/emu/emu_counts.h). levelset:
 * one launch per level and the begin kernel, nothing waited on (no fence,
 * acquire or atomic), every level at least two dependent round trips (the
 * row's entries, then x of its predecessors), the matrix read at least
 * once; a solve with host vectors synchronises (the copies and the state
 * word). syncfree waiting on the value: no fence, release or acquire at
 * all; launches: begin and one; claims are atomics on one cursor. With the
 * flag wait: fences (shared by a warp's finishing rows, so fewer than rows)
 * and acquires. A real GPU module has no counts: skipped. */
static void test_emu_counts(void **state)
{
    (void)state;
    BS_NEED(&gpu_backend);
    ata_emu_counts_fn counts = ata_emu_counts_find();
    if (!counts) {
        printf("test_emu_counts: not the emulated module (no counts)\n");
        skip();
        return;
    }
    ata_context *ctx = make_ctx_env(NULL, "0");     /* launches, not graph nodes */
    tu_problem pb;
    tu_problem_make(&pb, "lap3d:8", 11);
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_LEVELSET;
    ata_plan *p;
    TU_OK(ata_sptrsv_plan_create(ctx, pb.A, &po, &p));
    ata_plan_info in;
    TU_OK(ata_plan_get_info(p, &in));
    ata_emu_counts c;
    counted_solve(counts, p, &pb, &c);
    printf("levelset lap3d:8: %d levels, rtt %.1f, launches %lld, loads %lld (%lld bytes), host syncs %lld\n",
           in.levels, c.rtt, c.launches, c.loads, c.load_bytes, c.host_syncs);
    assert_int_equal(c.launches, in.levels + 1);
    assert_int_equal(c.graph_nodes, 0);
    assert_int_equal(c.fences_gpu + c.releases + c.acquires + c.atomics, 0);
    assert_true(c.rtt >= 2.0 * in.levels);
    const long long tri_nnz = (pb.A->nnz + pb.n) / 2;
    assert_true(c.load_bytes >= 12 * (tri_nnz - pb.n));
    assert_true(c.store_bytes >= 8LL * pb.n);
    assert_true(c.host_syncs >= 1);
    ata_plan_destroy(p);
    po.policy = ATA_POLICY_SYNCFREE;
    TU_OK(ata_sptrsv_plan_create(ctx, pb.A, &po, &p));
    counted_solve(counts, p, &pb, &c);
    printf("syncfree lap3d:8: rtt %.1f, launches %lld, fences %lld, releases %lld, acquires %lld, atomics %lld "
           "(%lld addresses, hottest %lld)\n", c.rtt, c.launches, c.fences_gpu, c.releases, c.acquires, c.atomics,
           c.atomic_addrs, c.atomics_hottest);
    assert_int_equal(c.launches, 2);
    /* the value wait: about one round trip per level (fewer where a warp's
     * rows forward values to each other) */
    assert_true(c.rtt > 0 && c.rtt <= 2.0 * in.levels + 8);
    assert_true(c.atomics > 0 && c.atomics_hottest > 1 && c.atomic_addrs < c.atomics);
    assert_int_equal(c.fences_gpu + c.releases + c.acquires, 0);
    ata_plan_destroy(p);
    ata_context_destroy(ctx);
    ctx = make_ctx_mech(NULL, "0", "flag", "fixed");
    TU_OK(ata_sptrsv_plan_create(ctx, pb.A, &po, &p));
    counted_solve(counts, p, &pb, &c);
    printf("syncfree lap3d:8, flag wait, fixed map: rtt %.1f, fences %lld, acquires %lld\n", c.rtt, c.fences_gpu,
           c.acquires);
    assert_true(c.fences_gpu > 0 && c.fences_gpu <= pb.n);
    assert_true(c.acquires > 0);
    assert_true(c.rtt >= 3.0 * in.levels);     /* poll, acquire, load x: every level */
    ata_plan_destroy(p);
    tu_problem_free(&pb);
    ata_context_destroy(ctx);
}

int main(void)
{
    /* The elastic map (the default) splits hub rows between a warp's lanes
     * (or a block's: longer still). */
    const char *map = getenv("ATA_GPU_MAP");
    if (!(map && !strcmp(map, "fixed"))) tu_pull_split_above = ATA_GPU_HUB(GPU_FULL_WARP);
    const char *size = getenv("ATA_GPU_TEST_SIZE");
    gpu_backend.tiny = size && !strcmp(size, "tiny");
    gpu_backend.small = gpu_backend.tiny || (size && !strcmp(size, "small"));
    const char *only = getenv("ATA_GPU_TEST_ONLY");    /* e.g. "test_pcg" (cmocka pattern) */
    if (only && *only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_errors),
        BS_SUITE_TESTS(&gpu_backend),
        cmocka_unit_test(test_group_widths),
        cmocka_unit_test(test_mechanisms),
        cmocka_unit_test(test_elastic_classes),
        cmocka_unit_test(test_block_hubs),
        cmocka_unit_test(test_device_pcg),
        cmocka_unit_test(test_epoch_wrap),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_device_pointers),
        cmocka_unit_test(test_emu_counts),
    };
#if defined(ATA_HAVE_CUDA) || defined(ATA_HAVE_HIP)
    ata_context_options o = ata_context_defaults();
    o.backend = GPU_BACKEND;
    ata_context *ctx = NULL;
    if (ata_context_create(&o, &ctx) == ATA_OK) {
        gpu_backend.available = 1;
        ata_context_destroy(ctx);
    } else {
        const char *why = ata_last_error();
        /* The backend's message already names the call when it failed. */
        if (strstr(why, GPU_COUNT_CALL))
            fprintf(stderr, "SKIPPED: %s - GPU tests not run\n", why);
        else
            fprintf(stderr, "SKIPPED: no %s device (%s: %s) - GPU tests not run\n", GPU_NAME, GPU_COUNT_CALL, why);
        /* The emulated runs must run: a missing emulated device is a failure,
         * never a quiet skip (make gpu-emu sets ATA_GPU_TEST_REQUIRE). */
        if (getenv("ATA_GPU_TEST_REQUIRE")) {
            fprintf(stderr, "FAILED: ATA_GPU_TEST_REQUIRE is set but the %s backend is unavailable\n", GPU_NAME);
            return 1;
        }
    }
#else
    fprintf(stderr, "SKIPPED: this build has no GPU backend (no nvcc found, or CUDA=no; see `make cuda`, "
                    "`make hip`) - GPU tests not run\n");
#endif
    return cmocka_run_group_tests_name("gpu backend (" GPU_NAME ")", tests, NULL, NULL);
}
