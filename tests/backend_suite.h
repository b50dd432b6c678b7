/* backend_suite.h - one backend-vs-reference suite, written once and
 * instantiated per backend (Ginkgo's habit: each executor's test program
 * runs the same tests on the same inputs against the serial reference).
 * test_runtime instantiates it for the CPU backend, test_ref_backend for the
 * serial reference (what ctx == NULL runs on), test_gpu for the GPU
 * backend of the build (CUDA, HIP, or the host SIMT emulator standing in for
 * one). A program describes its backend in a bs_backend, lists
 * BS_SUITE_TESTS(&backend) among its cmocka tests, and adds the tests only
 * its backend has (threads; group widths, epoch wrap, device pointers).
 *
 * Rules, whatever the backend: pull and ILU0 bitwise equal to the reference,
 * push within 1e-12, the vendor policy within a backward-error bound (ILU0:
 * relative difference 1e-10). */
#ifndef ATA_BACKEND_SUITE_H
#define ATA_BACKEND_SUITE_H
#include "test_util.h"
#include "plan.h"

typedef struct bs_backend {
    const char *name;           /* in messages: "cpu", "CUDA", "HIP" */
    ata_backend backend;
    int threads;                /* ata_context_options.threads (0: the backend's default) */
    int available;              /* 0: every suite test reports skipped */
    /* The policies the backend runs; the first npol_ata are ATA's own, the
     * rest (vendor) have no ATA kernels (no timeout, no group widths). */
    const ata_policy *pols;
    int npol, npol_ata;
    /* Size knob (ATA_GPU_TEST_SIZE): small samples the cases, tiny keeps
     * the memory-order checks only; every kind of case stays under small. */
    int small, tiny;
    /* The corrupt-plan test: corrupt() breaks a fresh plan of policy
     * corrupt_pols[i], adaptive-task size corrupt_S, so that its solve can
     * never finish; the context has corrupt_threads[traversal] workers. */
    void (*corrupt)(ata_plan *p);   /* NULL: the test is skipped (a serial
                                       solve waits on nothing) */
    ata_policy corrupt_pols[2];
    int ncorrupt_pols, corrupt_S, corrupt_threads[2];
    /* NULL: ata_context_create on `backend`; else how to make a context of
     * this backend (the reference, which has no ata_backend of its own). */
    ata_context *(*context)(int threads, double timeout);
} bs_backend;

/* A context of the backend (threads 0: be->threads) whose wait timeout is
 * `timeout` seconds; asserts that it runs on that backend. */
ata_context *bs_context(const bs_backend *be, int threads, double timeout);
/* Skip the calling test when the backend is absent. */
#define BS_NEED(be) do { if (!(be)->available) { skip(); return; } } while (0)
/* Skip the calling test under ATA_GPU_TEST_SIZE=tiny, saying so. */
#define BS_TINY_SKIP(be) do { if ((be)->tiny) { printf("%s: left out (ATA_GPU_TEST_SIZE=tiny)\n", __func__); \
                                                skip(); return; } } while (0)

void bs_test_real_matrices(void **state);
void bs_test_generated(void **state);
void bs_test_ilu0(void **state);
void bs_test_ilu0_zero_pivot(void **state);
void bs_test_many_plans(void **state);
void bs_test_corrupt_plan_times_out(void **state);
void bs_test_vector_kernels(void **state);
void bs_test_pcg(void **state);
void bs_test_ilu0_dense_row(void **state);
void bs_test_transpose(void **state);

/* The suite's tests for cmocka, each with the backend as its state, named
 * test_* (ATA_GPU_TEST_ONLY and cmocka filters select them by these names). */
#define BS_TEST(f, be) { "test_" #f, bs_test_##f, NULL, NULL, (void *)(be) }
#define BS_SUITE_TESTS(be)                                                                      \
    BS_TEST(vector_kernels, be), BS_TEST(real_matrices, be), BS_TEST(generated, be),           \
    BS_TEST(ilu0, be), BS_TEST(ilu0_zero_pivot, be), BS_TEST(many_plans, be),                 \
    BS_TEST(corrupt_plan_times_out, be), BS_TEST(pcg, be), BS_TEST(ilu0_dense_row, be),        \
    BS_TEST(transpose, be)

#endif
