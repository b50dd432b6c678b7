/* example_pcg.c - a time-stepping code calling PCG the split way (shown in
 * README.md; tests/install_check.sh builds it against an installed copy):
 * setup once, a new right-hand side every step (warm start from the last
 * x), new matrix values every few steps on the same pattern.
 *
 *   example_pcg [SPEC [STEPS [UPDATES [ONESHOT]]]]
 * SPEC a generator (default lap3d:30), STEPS solves (10), UPDATES value
 * updates spread over them (2); ONESHOT > 0 also runs that many steps as
 * one-shot ata_pcg calls, for comparison (bench/RESULTS.md). Threads:
 * OMP_NUM_THREADS. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "ata.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The problem's values at update u: the diagonal grows a little. */
static void step_values(const ata_csr *A, int u, double *val)
{
    for (int i = 0; i < A->nrows; i++)
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
            val[q] = A->val[q] * (A->col[q] == i ? 1.0 + 0.01 * u : 1.0);
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "lap3d:30";
    const int steps = argc > 2 ? atoi(argv[2]) : 10, updates = argc > 3 ? atoi(argv[3]) : 2;
    const int oneshot = argc > 4 ? atoi(argv[4]) : 0;
    ata_csr *A;
    ata_context *ctx;
    ata_pcg_solver *solver;
    ata_status st = ata_gen_from_spec(spec, &A);              /* or ata_matrix_read("A.mtx", &A) */
    ata_context_options co = ata_context_defaults();           /* backend auto: CUDA, HIP, else CPU */
    ata_pcg_options po = ata_pcg_defaults();                   /* ILU0, rtol 1e-6, policy ca */
    po.use_x0 = 1;                                             /* warm start from the last step */
    if (st == ATA_OK) st = ata_context_create(&co, &ctx);
    double t0 = now();
    if (st == ATA_OK) st = ata_pcg_setup(ctx, A, &po, &solver);   /* reorder, factor, plans: once */
    const double setup_s = now() - t0;
    if (st != ATA_OK) {
        fprintf(stderr, "ata: %s: %s\n", ata_status_string(st), ata_last_error());
        return 1;
    }
    const int n = A->nrows;
    double *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x), *val = malloc(A->nnz * sizeof *val);
    double solve_s = 0, update_s = 0;
    long its = 0;
    int every = updates > 0 ? steps / (updates + 1) : steps + 1, u = 0;
    for (int k = 0; k < steps && st == ATA_OK; k++) {
        if (k > 0 && k % every == 0 && u < updates) {          /* same pattern, new values */
            step_values(A, ++u, val);
            double t1 = now();
            st = ata_pcg_update_values(solver, val);            /* refactor, no new analysis */
            update_s += now() - t1;
            if (st != ATA_OK) break;
        }
        for (int i = 0; i < n; i++) b[i] = 1.0 + 0.001 * k * (i % 7);   /* this step's right-hand side */
        ata_pcg_result res;
        double t1 = now();
        st = ata_pcg_solve(solver, b, x, &res);                 /* solve, many times */
        solve_s += now() - t1;
        its += res.iterations;
    }
    if (st != ATA_OK) fprintf(stderr, "ata: %s: %s\n", ata_status_string(st), ata_last_error());
    printf("%s: %s, %d steps, %d updates on the %s backend: setup %.3f s, updates %.3f s, solves %.3f s "
           "(%ld iterations), split total %.3f s\n", spec, ata_status_string(st), steps, u,
           ata_backend_name(ata_context_backend(ctx)), setup_s, update_s, solve_s, its, setup_s + update_s + solve_s);
    /* The same steps as one-shot calls: every call pays reordering, analysis
     * and factorisation again. */
    if (st == ATA_OK && oneshot > 0) {
        double total = 0, an = 0, fa = 0, so = 0;
        long its1 = 0;
        ata_csr *B;                                            /* the matrix of the current step */
        if ((st = ata_csr_copy(A, &B)) != ATA_OK) return 1;
        for (int i = 0; i < n; i++) x[i] = 0;
        u = 0;
        for (int k = 0; k < oneshot && st == ATA_OK; k++) {
            if (k > 0 && k % every == 0 && u < updates) step_values(A, ++u, B->val);
            for (int i = 0; i < n; i++) b[i] = 1.0 + 0.001 * k * (i % 7);
            ata_pcg_result res;
            double t1 = now();
            st = ata_pcg(ctx, B, b, x, &po, &res);
            total += now() - t1;
            an += res.analysis_s;
            fa += res.factor_s;
            so += res.solve_s;
            its1 += res.iterations;
        }
        printf("%s: one-shot ata_pcg, %d steps: total %.3f s (%.3f s per call: analysis %.3f, factor %.3f, "
               "solve %.3f; %ld iterations)\n", spec, oneshot, total, total / oneshot, an / oneshot, fa / oneshot,
               so / oneshot, its1);
        ata_csr_free(B);
    }
    ata_pcg_destroy(solver);
    ata_context_destroy(ctx);
    ata_csr_free(A);
    free(b);
    free(x);
    free(val);
    return st == ATA_OK ? 0 : 1;
}
