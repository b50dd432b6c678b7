/* test_gpu.c - the GPU backend (CUDA, or HIP in the HIP build) against the
 * serial reference through the public API: the CPU runtime's suite (every
 * policy incl. vendor x pull/push x lower/upper x unit/non-unit, real and
 * generated matrices, ILU0, plan reuse, many plans, a corrupted plan must
 * time out) plus sub-warp group widths, graphs on/off, large problems, PCG
 * and the vector kernels. Pull and ILU0 must be bitwise equal to the
 * reference; push within 1e-12; vendor (cuSPARSE / hipSPARSE) within a
 * backward-error bound. Without a device: one loud SKIPPED line, and every
 * test reports skipped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "plan.h"

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

static int have_gpu;
/* ATA_GPU_TEST_SIZE=small (make gpu-emu: the emulator runs every kernel on
 * the CPU, lane by lane): the 10^6-unknown problems are left out, and every
 * other test runs a sample of its cases (every third real matrix, fewer
 * generated problems and group widths, a smaller PCG problem). Every kind of
 * case stays: all policies, pull and push, lower and upper, ILU0, PCG, the
 * corrupt-plan timeout, many plans, the epoch wrap. ATA_GPU_TEST_SIZE=tiny
 * (make gpu-emu-tsan, ~20x slower under ThreadSanitizer): the memory-order
 * checks only: one generated matrix through every policy, pull/push,
 * lower/upper; ILU0 on one; the vector kernels; many plans; the epoch wrap. */
static int small_run, tiny_run;
#define TINY_SKIP() do { if (tiny_run) { printf("%s: left out (ATA_GPU_TEST_SIZE=tiny)\n", __func__); \
                                         skip(); return; } } while (0)

static const ata_policy gpu_policies[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA,
                                           ATA_POLICY_LA, ATA_POLICY_GREEDY, ATA_POLICY_VENDOR };
#define NPOL (int)(sizeof gpu_policies / sizeof *gpu_policies)
#define NPOL_ATA (NPOL - 1)

#define NEED_GPU() do { if (!have_gpu) { skip(); return; } } while (0)

static ata_context *make_ctx(double timeout)
{
    ata_context_options o = ata_context_defaults();
    o.backend = GPU_BACKEND;
    o.wait_timeout_s = timeout;
    ata_context *ctx = NULL;
    TU_OK(ata_context_create(&o, &ctx));
    assert_int_equal(ata_context_backend(ctx), GPU_BACKEND);
    return ctx;
}

/* A context with ATA_GPU_GROUP / ATA_GPU_GRAPH set while it is made (the
 * backend reads them once, at context creation). */
static ata_context *make_ctx_env(const char *group, const char *graph)
{
    if (group) setenv("ATA_GPU_GROUP", group, 1);
    if (graph) setenv("ATA_GPU_GRAPH", graph, 1);
    ata_context *ctx = make_ctx(10);
    unsetenv("ATA_GPU_GROUP");
    unsetenv("ATA_GPU_GRAPH");
    return ctx;
}

/* One matrix through every combination; the first `npol` GPU policies
 * (tu_check_sweep). Returns the number of solves checked. */
static int check_matrix(ata_context *ctx, const ata_csr *A, const char *name, int S, int npol)
{
    return tu_check_sweep(ctx, A, name, S, gpu_policies, npol);
}

static void test_real_matrices(void **state)
{
    (void)state;
    NEED_GPU();
    TINY_SKIP();
    char **files = tu_list("real");
    if (!files) { skip(); return; }
    ata_context *ctx = make_ctx(10);
    int total = 0, mats = 0, k = 0;
    for (char **f = files; *f; f++, k++) {
        if (small_run && k % 3) continue;
        ata_csr *A;
        TU_OK(ata_matrix_read(*f, &A));
        if (!small_run || k % 2 == 0) total += check_matrix(ctx, A, *f, 0, NPOL);
        if (!small_run || k % 2 == 1) total += check_matrix(ctx, A, *f, 3, NPOL);
        ata_csr_free(A);
        mats++;
    }
    printf("real matrices: %d matrices, %d GPU solves checked\n", mats, total);
    assert_true(mats >= (small_run ? 4 : 10));
    assert_true(total > 0);
    ata_context_destroy(ctx);
    tu_free_list(files);
}

static const char *const gen_specs[] = { "lap2d:60", "lap2d:40,perm=7", "lap3d:14", "lap3d:12,perm=3",
                                         "lap3d27:10", "circuit:20000", "circuit:5000,perm=11" };
#define NGEN (sizeof gen_specs / sizeof *gen_specs)

static void test_generated(void **state)
{
    (void)state;
    NEED_GPU();
    ata_context *ctx = make_ctx(10);
    for (size_t s = 0; s < NGEN; s++) {
        if (small_run && s % 3 != 1) continue;     /* lap2d:40,perm=7 and lap3d27:10 */
        if (tiny_run && s != 1) continue;
        ata_csr *A;
        TU_OK(ata_gen_from_spec(gen_specs[s], &A));
        const int Ss[2] = { 0, 50 }, nS = small_run ? 1 : 2;
        int solves = 0;
        for (int k = 0; k < nS; k++)
            solves += check_matrix(ctx, A, gen_specs[s], Ss[small_run ? (int)(s / 3) % 2 : k], NPOL);
        assert_int_equal(solves, 2 * 2 * 2 * 2 * NPOL * nS);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

/* Every sub-warp width (1 lane per row up to the whole warp), with and
 * without graphs: the same bits. */
static void test_group_widths(void **state)
{
    (void)state;
    NEED_GPU();
    TINY_SKIP();
    const char *widths[] = { "1", "2", "4", "8", "16", GPU_FULL_WARP == 64 ? "64" : "32" };
    const char *specs_full[] = { "lap3d:12,perm=3", "circuit:5000", "lap3d27:8" };
    const char *specs_small[] = { "lap3d:8,perm=3", "circuit:1500", "lap3d27:6" };
    const char *const *specs = small_run ? specs_small : specs_full;
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        for (int graph = 0; graph < 2; graph++) {
            if (small_run && w % 2 == 0 && w + 1 != sizeof widths / sizeof *widths) continue;  /* 2, 8, full */
            ata_context *ctx = make_ctx_env(widths[w], graph ? "1" : "0");
            for (size_t s = 0; s < 3; s++) {
                if (small_run && s != (w + graph) % 3) continue;
                ata_csr *A;
                TU_OK(ata_gen_from_spec(specs[s], &A));
                char name[96];
                snprintf(name, sizeof name, "%s (group %s, graph %d)", specs[s], widths[w], graph);
                check_matrix(ctx, A, name, 40, NPOL_ATA);
                ata_csr_free(A);
            }
            ata_context_destroy(ctx);
        }
}

/* Problems that fill the GPU (10^6 unknowns): pull bitwise, push 1e-12. */
static void test_large(void **state)
{
    (void)state;
    NEED_GPU();
    if (small_run) {
        printf("test_large: left out (ATA_GPU_TEST_SIZE=small)\n");
        skip();
        return;
    }
    const char *specs[] = { "lap3d:100", "lap2d:1000,perm=5", "circuit:1000000" };
    const ata_policy pols[] = { ATA_POLICY_LEVELSET, ATA_POLICY_SYNCFREE, ATA_POLICY_CA, ATA_POLICY_VENDOR };
    ata_context *ctx = make_ctx(30);
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        ata_csr *A;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        const int n = A->nrows;
        double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
        tu_random_vec(b, n, 5);
        TU_OK(ata_ref_sptrsv_csr(A, ATA_LOWER, ATA_NON_UNIT, b, xr));
        for (size_t k = 0; k < sizeof pols / sizeof *pols; k++)
            for (int t = 0; t < 2; t++) {
                ata_plan_options po = ata_plan_defaults();
                po.policy = pols[k];
                po.traversal = t ? ATA_PUSH : ATA_PULL;
                ata_plan *p;
                TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
                memset(x, 0xff, n * sizeof *x);
                TU_OK(ata_sptrsv(p, b, x));
                tu_check_solution(A, specs[s], &po, b, x, xr, n);
                ata_plan_info in;
                TU_OK(ata_plan_get_info(p, &in));
                printf("%-22s %-8s %s: S=%d atasks=%d untracked=%d levels=%d T_l=%.2e T_u=%.2e\n", specs[s],
                       ata_policy_name(po.policy), t ? "push" : "pull", in.S, in.atasks, in.untracked, in.levels,
                       in.T_l, in.T_u);
                ata_plan_destroy(p);
            }
        free(b); free(x); free(xr);
        ata_csr_free(A);
    }
    ata_context_destroy(ctx);
}

static void test_ilu0(void **state)
{
    (void)state;
    NEED_GPU();
    const char *specs[] = { "lap2d:50", "lap3d:12,perm=9", "circuit:10000", "lap3d27:10" };
    ata_context *ctx = make_ctx(10);
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        if ((small_run && s % 2) || (tiny_run && s)) continue;
        ata_csr *A, *R;
        TU_OK(ata_gen_from_spec(specs[s], &A));
        TU_OK(ata_csr_copy(A, &R));
        TU_OK(ata_ref_ilu0(R));
        for (int k = 0; k < NPOL; k++) {
            ata_plan_options po = ata_plan_defaults();
            po.policy = gpu_policies[k];
            po.S = k % 2 ? 0 : 20;
            ata_csr *LU;
            ata_status st = ata_spilu0(ctx, A, &po, &LU);
            if (st != ATA_OK)
                fail_msg("%s %s: ilu0: %s: %s", specs[s], ata_policy_name(po.policy), ata_status_string(st),
                         ata_last_error());
            assert_int_equal(LU->nnz, A->nnz);
            if (po.policy == ATA_POLICY_VENDOR) {
                double e = tu_rel_diff(LU->val, R->val, A->nnz);
                if (!(e <= 1e-10)) fail_msg("%s vendor ilu0: rel diff %g", specs[s], e);
            } else if (memcmp(LU->val, R->val, A->nnz * sizeof *R->val) != 0) {
                fail_msg("%s %s: GPU ILU0 differs from the reference (rel diff %g)", specs[s],
                         ata_policy_name(po.policy), tu_rel_diff(LU->val, R->val, A->nnz));
            }
            ata_csr_free(LU);
        }
        ata_csr_free(A); ata_csr_free(R);
    }
    /* Real matrices: same factors or the same error, naming the row. */
    char **files = tu_list("real");
    int nf = 0;
    for (char **f = files; f && *f && !tiny_run; f++) {
        if (small_run && nf++ % 3) continue;
        ata_csr *A, *R, *LU = NULL;
        TU_OK(ata_matrix_read(*f, &A));
        TU_OK(ata_csr_copy(A, &R));
        ata_status ref = ata_ref_ilu0(R);
        for (int k = 0; k < NPOL_ATA; k += 2) {     /* levelset, ca, greedy */
            ata_plan_options po = ata_plan_defaults();
            po.policy = gpu_policies[k];
            ata_status st = ata_spilu0(ctx, A, &po, &LU);
            if (st != ref)
                fail_msg("%s %s ilu0: reference %s, GPU %s (%s)", *f, ata_policy_name(po.policy),
                         ata_status_string(ref), ata_status_string(st), ata_last_error());
            if (st == ATA_OK) {
                if (memcmp(LU->val, R->val, A->nnz * sizeof *R->val) != 0)
                    fail_msg("%s %s: GPU ILU0 differs from the reference", *f, ata_policy_name(po.policy));
            } else {
                assert_true(strstr(ata_last_error(), "row") != NULL);
            }
            ata_csr_free(LU);
            LU = NULL;
        }
        ata_csr_free(A); ata_csr_free(R);
    }
    tu_free_list(files);
    ata_context_destroy(ctx);
}

/* A zero pivot is reported with its row, by the ATA kernels. */
static void test_ilu0_zero_pivot(void **state)
{
    (void)state;
    NEED_GPU();
    TINY_SKIP();
    /* [1 1; 1 1]: u_11 = 1 - 1*1 = 0. */
    ata_csr *A;
    TU_OK(ata_csr_alloc(2, 2, 4, &A));
    int rp[] = { 0, 2, 4 }, ci[] = { 0, 1, 0, 1 };
    memcpy(A->rowptr, rp, sizeof rp);
    memcpy(A->col, ci, sizeof ci);
    for (int k = 0; k < 4; k++) A->val[k] = 1;
    ata_context *ctx = make_ctx(10);
    for (int k = 0; k < NPOL_ATA; k++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = gpu_policies[k];
        ata_csr *LU = NULL;
        assert_int_equal(ata_spilu0(ctx, A, &po, &LU), ATA_ERR_ZERO_PIVOT);
        assert_non_null(strstr(ata_last_error(), "row 1"));
        ata_csr_free(LU);
    }
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* Several plans alive at once on one context, interleaved solves. */
static void test_many_plans(void **state)
{
    (void)state;
    NEED_GPU();
    ata_context *ctx = make_ctx(10);
    tu_check_many_plans(ctx, gpu_policies, NPOL_ATA);
    ata_context_destroy(ctx);
}

/* A row dropped from the device schedule leaves its successors waiting
 * forever: the kernel's bounded spin must end the solve with ATA_ERR_TIMEOUT
 * (never hang the GPU), and the context must still work afterwards. */
static void test_corrupt_plan_times_out(void **state)
{
    (void)state;
    NEED_GPU();
    TINY_SKIP();
    ata_context *ctx = make_ctx(0.2);
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:30", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 1);
    TU_OK(ata_ref_sptrsv_csr(A, ATA_LOWER, ATA_NON_UNIT, b, xr));
    for (int t = 0; t < 2; t++)
        for (int pol = 0; pol < 2; pol++) {
            ata_plan_options po = ata_plan_defaults();
            po.policy = pol ? ATA_POLICY_CA : ATA_POLICY_SYNCFREE;
            po.S = 20;
            po.traversal = t ? ATA_PUSH : ATA_PULL;
            ata_plan *p;
            TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
            p->sched.order[1] = p->sched.order[0];      /* row order[1] never runs */
            TU_OK(p->ctx->ops->plan_upload(p));         /* send the broken schedule */
            ata_status st = ata_sptrsv(p, b, x);
            assert_int_equal(st, ATA_ERR_TIMEOUT);
            assert_non_null(strstr(ata_last_error(), "waited"));
            ata_plan_destroy(p);
            TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
            TU_OK(ata_sptrsv(p, b, x));
            assert_true(tu_rel_diff(x, xr, n) <= (t ? 1e-12 : 0));
            ata_plan_destroy(p);
        }
    free(b); free(x); free(xr);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* The device epoch wraps after 2^32 solves of a plan. ATA_GPU_EPOCH0 starts
 * plans at epoch 2^32 - 1 with every done flag at 1 (as if written 2^32
 * solves ago): the next solve must forget them, or every row would look
 * done at once and read unsolved predecessors. */
static void test_epoch_wrap(void **state)
{
    (void)state;
    NEED_GPU();
    setenv("ATA_GPU_EPOCH0", "4294967295", 1);
    ata_context *ctx = make_ctx(10);
    unsetenv("ATA_GPU_EPOCH0");
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap2d:30", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
    tu_random_vec(b, n, 4);
    TU_OK(ata_ref_sptrsv_csr(A, ATA_LOWER, ATA_NON_UNIT, b, xr));
    const ata_policy pols[] = { ATA_POLICY_SYNCFREE, ATA_POLICY_CA };
    for (int k = 0; k < 2; k++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = pols[k];
        ata_plan *p;
        TU_OK(ata_sptrsv_plan_create(ctx, A, &po, &p));
        for (int r = 0; r < 3; r++) {           /* epochs 1, 2, 3 after the wrap */
            memset(x, 0xff, n * sizeof *x);
            TU_OK(ata_sptrsv(p, b, x));
            if (memcmp(x, xr, n * sizeof *x) != 0)
                fail_msg("%s, solve %d after the epoch wrap: rel diff %g", ata_policy_name(po.policy), r,
                         tu_rel_diff(x, xr, n));
        }
        ata_plan_destroy(p);
    }
    free(b); free(x); free(xr);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* The vector kernels PCG uses, against host arithmetic. */
static void test_vector_kernels(void **state)
{
    (void)state;
    NEED_GPU();
    ata_context *ctx = make_ctx(10);
    const ata_backend_ops *ops = ctx->ops;
    ata_csr *A;
    TU_OK(ata_gen_from_spec("lap3d27:20", &A));
    const int n = A->nrows;
    double *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy), *hr = malloc(n * sizeof *hr);
    double *dx, *dy;
    tu_random_vec(hx, n, 3);
    TU_OK(ops->vec_alloc(ctx, n, &dx));
    TU_OK(ops->vec_alloc(ctx, n, &dy));
    TU_OK(ops->vec_upload(ctx, dx, hx, n));
    void *h;
    TU_OK(ops->spmv_create(ctx, A, &h));
    TU_OK(ops->spmv(ctx, h, dx, dy));
    TU_OK(ops->vec_download(ctx, hy, dy, n));
    ata_ref_spmv(A, hx, hr);
    assert_true(tu_rel_diff(hy, hr, n) <= 1e-14);
    double dot, ref = 0, dot2;
    for (int i = 0; i < n; i++) ref += hx[i] * hr[i];
    TU_OK(ops->dot(ctx, n, dx, dy, &dot));
    TU_OK(ops->dot(ctx, n, dx, dy, &dot2));
    assert_true(fabs(dot - ref) <= 1e-12 * fabs(ref));
    assert_memory_equal(&dot, &dot2, sizeof dot);      /* deterministic */
    /* axpby against the device's own SpMV output (hy), not the host SpMV
     * (hr), which sums in another order: one rounding per entry, bitwise. */
    TU_OK(ops->axpby(ctx, n, 2.0, dx, -0.5, dy));
    double *hz = malloc(n * sizeof *hz);
    TU_OK(ops->vec_download(ctx, hz, dy, n));
    for (int i = 0; i < n; i++) assert_true(hz[i] == 2.0 * hx[i] + -0.5 * hy[i]);
    free(hz);
    ops->spmv_destroy(ctx, h);
    ops->vec_free(ctx, dx);
    ops->vec_free(ctx, dy);
    free(hx); free(hy); free(hr);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

/* PCG on the device with ATA and vendor triangular solves. */
static void test_pcg(void **state)
{
    (void)state;
    NEED_GPU();
    TINY_SKIP();
    ata_context *ctx = make_ctx(10);
    ata_csr *A;
    TU_OK(ata_gen_from_spec(small_run ? "lap2d:40,perm=3" : "lap2d:100,perm=3", &A));
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1;
    ata_pcg_result ref;
    ata_pcg_options o = ata_pcg_defaults();
    TU_OK(ata_pcg(NULL, A, b, x, &o, &ref));
    const ata_policy pols[] = { ATA_POLICY_CA, ATA_POLICY_SYNCFREE, ATA_POLICY_VENDOR };
    for (int pc = 0; pc < 2; pc++)
        for (size_t k = 0; k < sizeof pols / sizeof *pols; k++) {
            o = ata_pcg_defaults();
            o.precond = pc ? ATA_PC_IC0 : ATA_PC_ILU0;
            o.plan.policy = pols[k];
            ata_pcg_result res;
            memset(x, 0, n * sizeof *x);
            ata_status st = ata_pcg(ctx, A, b, x, &o, &res);
            if (st != ATA_OK) fail_msg("pcg %s: %s: %s", ata_policy_name(pols[k]), ata_status_string(st), ata_last_error());
            assert_true(res.relres <= 1e-6);
            if (pc == 0) assert_true(abs(res.iterations - ref.iterations) <= 2);
            ata_pcg_result_free(&res);
        }
    ata_pcg_result_free(&ref);
    free(b); free(x);
    ata_csr_free(A);
    ata_context_destroy(ctx);
}

static void test_context_errors(void **state)
{
    (void)state;
    NEED_GPU();
    ata_context_options o = ata_context_defaults();
    o.backend = GPU_BACKEND;
    o.device = 999;
    ata_context *ctx = NULL;
    assert_int_equal(ata_context_create(&o, &ctx), ATA_ERR_BACKEND);
    assert_non_null(strstr(ata_last_error(), "999"));
    assert_true(ata_backend_available(GPU_BACKEND));
}

/* Device pointers and streams (ata_sptrsv_ex, ata_factor_solve_ex, ata_vec_*):
 * the same bits as the host path and the reference (pull), several columns
 * with a leading dimension, the caller's stream (CUDA), and a non-finite
 * row found on the device and named. */
/* ILU0 with a dense first row and column (an arrow): the kernels look row
 * i's few columns up in the long row 0 instead of scanning it (the
 * quadratic case of a dense early row); the factors must stay bitwise the
 * reference's. */
static void test_ilu0_dense_row(void **state)
{
    (void)state;
    NEED_GPU();
    const int n = tiny_run ? 200 : 3000, nnz = 3 * n - 2;
    int *ri = malloc(nnz * sizeof *ri), *ci = malloc(nnz * sizeof *ci), e = 0;
    double *v = malloc(nnz * sizeof *v);
    for (int i = 0; i < n; i++) { ri[e] = i; ci[e] = i; v[e++] = 4.0 + i % 7; }
    for (int j = 1; j < n; j++) {
        ri[e] = 0; ci[e] = j; v[e++] = -1.0 / (1 + j % 5);
        ri[e] = j; ci[e] = 0; v[e++] = -1.0 / (2 + j % 3);
    }
    ata_csr *A, *R, *LU;
    TU_OK(ata_csr_from_coo(n, n, nnz, ri, ci, v, 0, &A));
    TU_OK(ata_csr_copy(A, &R));
    TU_OK(ata_ref_ilu0(R));
    ata_context *ctx = make_ctx(10);
    for (int k = 0; k < NPOL_ATA; k++) {
        ata_plan_options po = ata_plan_defaults();
        po.policy = gpu_policies[k];
        TU_OK(ata_spilu0(ctx, A, &po, &LU));
        if (memcmp(LU->val, R->val, A->nnz * sizeof *R->val) != 0)
            fail_msg("arrow n = %d %s: GPU ILU0 differs from the reference (rel diff %g)", n,
                     ata_policy_name(po.policy), tu_rel_diff(LU->val, R->val, A->nnz));
        ata_csr_free(LU);
    }
    ata_context_destroy(ctx);
    ata_csr_free(A); ata_csr_free(R);
    free(ri); free(ci); free(v);
}

static void test_device_pointers(void **state)
{
    (void)state;
    NEED_GPU();
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

int main(void)
{
    const char *size = getenv("ATA_GPU_TEST_SIZE");
    tiny_run = size && !strcmp(size, "tiny");
    small_run = tiny_run || (size && !strcmp(size, "small"));
    const char *only = getenv("ATA_GPU_TEST_ONLY");    /* e.g. "test_pcg" (cmocka pattern) */
    if (only && *only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_errors),
        cmocka_unit_test(test_vector_kernels),
        cmocka_unit_test(test_real_matrices),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_group_widths),
        cmocka_unit_test(test_ilu0),
        cmocka_unit_test(test_ilu0_zero_pivot),
        cmocka_unit_test(test_many_plans),
        cmocka_unit_test(test_corrupt_plan_times_out),
        cmocka_unit_test(test_epoch_wrap),
        cmocka_unit_test(test_pcg),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_ilu0_dense_row),
        cmocka_unit_test(test_device_pointers),
    };
#if defined(ATA_HAVE_CUDA) || defined(ATA_HAVE_HIP)
    ata_context_options o = ata_context_defaults();
    o.backend = GPU_BACKEND;
    ata_context *ctx = NULL;
    if (ata_context_create(&o, &ctx) == ATA_OK) {
        have_gpu = 1;
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
